"""The human site at / and its static files; errors stay JSON like the rest of the API."""
from __future__ import annotations

import os

import tornado.web
import ujson

from handlers.base import ALLOWED_METHODS, EXPOSED_HEADERS, to_api_error
from server.errors import APIError

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
        self.set_header("Cache-Control", "public, max-age=300")

    def options(self, *args, **kwargs):
        self.set_status(204)
        self.set_header("Allow", ALLOWED_METHODS)
        self.finish()

    def _method_not_allowed(self, *args, **kwargs):
        raise APIError("method_not_allowed")

    post = put = patch = delete = _method_not_allowed

    def write_error(self, status_code: int, **kwargs) -> None:
        error = to_api_error(kwargs.get("exc_info", (None, None, None))[1], status_code)
        self.set_status(error.status_code)
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.set_header("Cache-Control", "public, max-age=60")
        if error.code == "method_not_allowed":
            self.set_header("Allow", ALLOWED_METHODS)
        self.finish(ujson.dumps({"success": False, "error": {"code": error.code, "message": error.message}}))


routes = [
    (r"/()", SiteHandler, {"path": STATIC_DIR, "default_filename": "index.html"}),
    (r"/static/(.+)", SiteHandler, {"path": STATIC_DIR}),
]
