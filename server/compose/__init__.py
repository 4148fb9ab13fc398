"""Composition: start-up steps, wiring, the Tornado Application and HTTP server, the embedded database, the demo."""
