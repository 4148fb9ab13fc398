"""The ceiling: a bare Tornado handler with a fixed ~1 KB JSON answer (run in its own process)."""

from __future__ import annotations

import asyncio
import json
import signal

from server.contract.config import API_VERSION


def ceiling_payload(size: int = 1024) -> bytes:
    body = {
        "success": True,
        "meta": {
            "source": "statsapi",
            "version": API_VERSION,
            "generated": "2026-01-01T00:00:00+00:00",
            "attribution": "Statistics by statsapi (http://127.0.0.1:8888/). "
            "If you reuse this data, please link to that page.",
        },
        "data": {"account_id": 500000001, "region": "eu", "nickname": "ceiling", "pad": ""},
    }
    raw = json.dumps(body, separators=(",", ":"))
    body["data"]["pad"] = "x" * max(0, size - len(raw))
    return json.dumps(body, separators=(",", ":")).encode()


def serve_ceiling(port: int, gzip_file: str | None = None) -> None:
    """GET /: the fixed JSON; GET /gzip: the bytes of `gzip_file` (the service's gzip answer of the
    gzip scenario, written by the bench after seeding), read once, sent as they are."""
    import tornado.ioloop
    import tornado.web

    payload = ceiling_payload()
    gzipped: list[bytes] = []

    class GzipCeilingHandler(tornado.web.RequestHandler):
        def get(self):
            if not gzipped:
                with open(gzip_file, "rb") as file:
                    gzipped.append(file.read())
            self.set_header("Content-Type", "application/json; charset=utf-8")
            self.set_header("Content-Encoding", "gzip")
            self.set_header("Vary", "Accept-Encoding")
            self.write(gzipped[0])

    class CeilingHandler(tornado.web.RequestHandler):
        def get(self):
            self.set_header("Content-Type", "application/json; charset=utf-8")
            self.write(payload)

    async def main():
        app = tornado.web.Application([(r"/gzip", GzipCeilingHandler), (r"/.*", CeilingHandler)])
        app.listen(port, "127.0.0.1")
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        await stop.wait()

    asyncio.run(main())
