"""The human site at / and its static files; errors stay JSON like the rest of the API."""

from __future__ import annotations

import os
from asyncio import Future
from typing import Any

import tornado.web

from handlers.base import Route, method_not_allowed, write_error_answer
from server.contract.errors import ALLOWED_METHODS, EXPOSED_HEADERS, APIError, error_envelope, error_headers

# 416 (Content-Range says the size).
RANGE_NOT_SATISFIABLE = error_envelope("range_not_satisfiable")

SITE_CACHE_CONTROL = "public, max-age=300"  # the site's files and their preflights
STATIC_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "static")


class SiteHandler(tornado.web.StaticFileHandler):
    SUPPORTED_METHODS = ("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE")

    def set_default_headers(self) -> None:
        self.set_header("Access-Control-Allow-Origin", "*")
        self.set_header("Access-Control-Expose-Headers", EXPOSED_HEADERS)
        self.set_header("X-Content-Type-Options", "nosniff")

    @classmethod
    def get_absolute_path(cls, root: str, path: str) -> str:
        if "\x00" in path:  # the filesystem would raise ValueError: a path no file can have
            raise APIError("unknown_endpoint")
        return super().get_absolute_path(root, path)

    def set_extra_headers(self, path: str) -> None:
        self.set_header("Cache-Control", SITE_CACHE_CONTROL)

    def options(self, *args: str, **kwargs: str) -> None:
        self.set_status(204)
        self.set_header("Allow", ALLOWED_METHODS)
        self.set_header("Cache-Control", SITE_CACHE_CONTROL)
        self.finish()

    def finish(self, chunk: str | bytes | dict[str, Any] | None = None) -> Future[None]:
        if self.get_status() == 416 and chunk is None and not self._write_buffer:
            # StaticFileHandler answers a Range past the end with an empty text/plain 416 that
            # would carry the files' Cache-Control: enveloped like every error, never cached.
            for name, value in error_headers(416, "range_not_satisfiable").items():
                self.set_header(name, value)
            chunk = RANGE_NOT_SATISFIABLE
        return super().finish(chunk)

    post = put = patch = delete = method_not_allowed

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        write_error_answer(self, status_code, kwargs.get("exc_info"))


routes: list[Route] = [
    (r"/()", SiteHandler, {"path": STATIC_DIR, "default_filename": "index.html"}),
    # The session overlay (a streaming program's browser source): /overlay/?region=&account=&since=
    (r"/overlay/()", SiteHandler, {"path": os.path.join(STATIC_DIR, "overlay"), "default_filename": "index.html"}),
    (r"/static/(.+)", SiteHandler, {"path": STATIC_DIR}),
]
