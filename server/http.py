"""An HTTPServer whose protocol-level rejections (bad request line, headers, Host) are JSON too."""
from __future__ import annotations

import tornado.httpserver
import tornado.iostream
import ujson
from tornado.http1connection import HTTP1ServerConnection
from tornado.httpserver import _HTTPRequestContext

# Tornado answers malformed messages with exactly these bytes before closing.
_TORNADO_BAD_REQUEST = b"HTTP/1.1 400 Bad Request\r\n\r\n"


def json_error_response(status: int, reason: str, code: str, message: str) -> bytes:
    body = ujson.dumps({"success": False, "error": {"code": code, "message": message}}).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        "Content-Type: application/json; charset=utf-8\r\n"
        "Access-Control-Allow-Origin: *\r\n"
        "Cache-Control: public, max-age=0, no-store\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


BAD_REQUEST = json_error_response(
    400, "Bad Request", "bad_request", "the request could not be parsed (bad encoding, header or line)")
TOO_LARGE = json_error_response(
    431, "Request Header Fields Too Large", "request_too_large", "request line or headers too large")


class _JSONRejectingStream:
    """Delegates to the real stream; rewrites Tornado's bare rejections as enveloped JSON."""

    def __init__(self, stream: tornado.iostream.IOStream):
        self._stream = stream
        # Called for every request: bound once here instead of looked up through __getattr__.
        self.set_close_callback = stream.set_close_callback
        self.closed = stream.closed
        self.read_bytes = stream.read_bytes
        self.set_nodelay = stream.set_nodelay
        self.close = stream.close

    def __getattr__(self, name):
        return getattr(self._stream, name)

    def write(self, data, *args, **kwargs):
        if data == _TORNADO_BAD_REQUEST:
            data = BAD_REQUEST
        return self._stream.write(data, *args, **kwargs)

    async def read_until_regex(self, regex, max_bytes=None):
        # Tornado closes the socket before we could answer when max_bytes is exceeded, so
        # read up to 4x the limit and answer 431 ourselves; beyond that, the stream closes.
        data = await self._stream.read_until_regex(regex, max_bytes=max_bytes and max_bytes * 4)
        if max_bytes is not None and len(data) > max_bytes:
            await self._stream.write(TOO_LARGE)
            self._stream.close()
            raise tornado.iostream.UnsatisfiableReadError(f"headers longer than {max_bytes} bytes")
        return data


class JSONErrorHTTPServer(tornado.httpserver.HTTPServer):
    def handle_stream(self, stream: tornado.iostream.IOStream, address: tuple) -> None:
        context = _HTTPRequestContext(stream, address, self.protocol, self.trusted_downstream)
        conn = HTTP1ServerConnection(_JSONRejectingStream(stream), self.conn_params, context)
        self._connections.add(conn)
        conn.start_serving(self)
