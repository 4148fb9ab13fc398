"""make_app: the pure Application factory (no I/O)."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

import tornado
import tornado.web
from tornado import httputil
from tornado.concurrent import future_add_done_callback
from tornado.http1connection import HTTP1Connection

import handlers
from handlers.base import NotFoundHandler
from server.compose import access_log as access_lines
from server.contract.errors import COMMON_HEADERS, APIError, render_error
from server.serving.answers import Answer, answer_key, etag_matches, fixed_answer
from server.serving.encoding import ContentEncoding, accepts_gzip, add_vary, gzip_etag

if TYPE_CHECKING:  # types only
    from server.contract.config import Config
    from server.services.registry import Services
    from server.serving.metrics import Metrics
    from server.serving.ratelimit import Decision, RateLimiter
    from store.store import Store

SERVER_HEADER = "TornadoServer/" + tornado.version

access_log = logging.getLogger("statsapi.access")


def log_access(
    request: httputil.HTTPServerRequest,
    status: int,
    client: str | None,
    endpoint: str = "unknown",
    metrics: Metrics | None = None,
) -> None:
    """One line per request (resolved client, method, path, status, duration) and its metrics."""
    seconds = request.request_time()
    if metrics is not None:
        metrics.observe_request(endpoint, status, seconds)
    if not access_log.isEnabledFor(logging.INFO):
        return
    sink = access_lines.sink
    if sink is not None:  # serving: the line leaves the loop as a tuple (server/compose/access_log.py)
        sink(
            (
                time.time(),
                client or request.remote_ip or "",
                request.method or "",
                request.path,
                status,
                1000.0 * seconds,
            )
        )
        return
    access_log.info(
        "%s",
        access_lines.message(
            client or request.remote_ip or "", request.method or "", request.path, status, 1000.0 * seconds
        ),
    )


def endpoint_name(handler_class: type) -> str:
    """The metrics label of a handler: its rate-limit bucket, else its class name."""
    return getattr(handler_class, "bucket", None) or handler_class.__name__.removesuffix("Handler").lower()


def log_request(handler: tornado.web.RequestHandler) -> None:
    services = handler.settings.get("services")
    log_access(
        handler.request,
        handler.get_status(),
        getattr(handler, "_client_ip", None),
        endpoint_name(type(handler)),
        getattr(services, "metrics", None),
    )


class _HeaderDate:
    """The Date header, formatted once a second."""

    second = -1
    text = ""

    line_bytes = b""

    @classmethod
    def get(cls) -> str:
        now = time.time()
        if int(now) != cls.second:
            cls.second, cls.text = int(now), httputil.format_timestamp(now)
            cls.line_bytes = f"Date: {cls.text}\r\n".encode("latin1")
        return cls.text

    @classmethod
    def line(cls) -> bytes:
        """The Date header as a header line."""
        cls.get()
        return cls.line_bytes


class OneShotDelegate(httputil.HTTPMessageDelegate):
    """An answer written in one go once the request is in, without building a RequestHandler.

    For what needs no handler: the early 429 (abuse must be cheap), a replayed answer of the
    answer cache, the 404 of an unknown path. The answer carries what BaseHandler would send.
    """

    def __init__(
        self,
        request: httputil.HTTPServerRequest,
        answer: Answer,
        decision: Decision | None = None,
        metrics: Metrics | None = None,
        endpoint: str | None = None,
    ) -> None:
        self.request = request
        self.answer = answer
        self.decision = decision
        self.metrics = metrics
        self.endpoint = endpoint or answer.endpoint  # the access log's and the metrics' label

    def headers_received(
        self,
        start_line: httputil.RequestStartLine | httputil.ResponseStartLine,
        headers: httputil.HTTPHeaders,
    ) -> None:
        return None

    def data_received(self, chunk: bytes) -> None:
        return None

    def finish(self) -> None:
        request, answer = self.request, self.answer
        gzipped = answer.gzip_body is not None and accepts_gzip(request.headers.get("Accept-Encoding"))
        if self._write_encoded(gzipped):
            log_access(request, answer.status, getattr(request, "statsapi_client", None), self.endpoint, self.metrics)
            return
        headers = httputil.HTTPHeaders()
        # In the order Tornado's RequestHandler sends them.
        headers["Server"] = SERVER_HEADER
        headers["Content-Type"] = COMMON_HEADERS["Content-Type"]
        headers["Date"] = _HeaderDate.get()
        for name, value in answer.headers:
            headers[name] = value
        if self.decision is not None:
            for name, value in self.decision.headers().items():
                headers[name] = value
        etag = _etag(answer, gzipped)
        if etag is not None:
            headers["Etag"] = etag
        status, reason = answer.status, answer.reason
        if answer.etag is not None and etag_matches(request.headers.get("If-None-Match", ""), answer.etag):
            # As RequestHandler.finish: 304 without the body and its representation headers.
            status, reason, body = 304, "Not Modified", b""
            for name in ("Content-Language", "Content-Type"):
                headers.pop(name, None)
            add_vary(headers)  # as ContentEncoding's 304
        else:
            full = answer.gzip_body if gzipped and answer.gzip_body is not None else answer.body
            headers["Content-Length"] = str(len(full))
            _representation(headers, answer, gzipped)
            body = b"" if request.method == "HEAD" else full
        # Tornado types the connection Optional (None only for requests built outside a server) and its
        # private _finish_time (read by request_time(), for the access log) as None until set.
        request.connection.write_headers(httputil.ResponseStartLine("", status, reason), headers, body)  # type: ignore[union-attr]
        request.connection.finish()  # type: ignore[union-attr]
        request._finish_time = time.time()  # type: ignore[assignment]
        log_access(request, status, getattr(request, "statsapi_client", None), self.endpoint, self.metrics)

    def on_connection_close(self) -> None:
        """Nothing to cancel: the answer is written in one go by finish()."""

    def _write_encoded(self, gzipped: bool) -> bool:
        """The usual case written from the answer's pre-encoded head (plain or gzip, both prebuilt:
        no compression per request): a GET on a kept-alive
        HTTP/1.1 connection, no 304. The same bytes as finish()'s general path (tested), without
        building an HTTPHeaders of 16 headers and encoding it for every request (12 % of the
        loop in the cached-player profile). False: the general path must answer.

        Tornado internals (HTTP1Connection's private state, 6.5-6.6; setup.py pins <6.7): the
        fields write_headers() sets for a response with a Content-Length and finish() reads."""
        request, answer = self.request, self.answer
        connection = request.connection
        if (
            not _ENCODED_WRITES
            or type(connection) is not HTTP1Connection
            or request.method != "GET"
            or request.version != "HTTP/1.1"
            or connection._disconnect_on_finish
            or connection.stream.closed()
            or (answer.etag is not None and "If-None-Match" in request.headers)
        ):
            return False
        kind = "http1-gzip" if gzipped else "http1"
        head = answer.encoded.get(kind)
        if head is None:
            head = answer.encoded[kind] = _encoded_head(answer, gzipped)
        body = answer.gzip_body if gzipped and answer.gzip_body is not None else answer.body
        status_line, before_date, after_date, tail = head
        rate = self.decision.header_lines() if self.decision is not None else b""
        date = _HeaderDate.line()
        connection._response_start_line = httputil.ResponseStartLine("", answer.status, answer.reason)
        connection._chunking_output = False
        connection._expected_content_remaining = 0  # the whole body goes in this one write
        pending = connection._pending_write = connection.stream.write(
            b"".join((status_line, before_date, date, after_date, rate, tail, body))
        )
        future_add_done_callback(pending, connection._on_write_complete)
        connection.finish()
        request._finish_time = time.time()  # type: ignore[assignment]
        return True


# Off when Tornado is not a version whose HTTP1Connection internals _write_encoded was checked on.
_ENCODED_WRITES = tornado.version_info[:2] in ((6, 5), (6, 6))


def _representation(headers: httputil.HTTPHeaders, answer: Answer, gzipped: bool) -> None:
    """Vary on an answer kept in two representations, and the encoding of the one sent (last, where
    ContentEncoding puts them on a handler's answer)."""
    if answer.gzip_body is None:
        return
    add_vary(headers)
    if gzipped:
        headers["Content-Encoding"] = "gzip"


def _etag(answer: Answer, gzipped: bool) -> str | None:
    if answer.etag is None or not gzipped:
        return answer.etag
    return gzip_etag(answer.etag)


def _encoded_head(answer: Answer, gzipped: bool = False) -> tuple[bytes, bytes, bytes, bytes]:
    """The head of a 200-like answer as finish()'s general path orders it: the status line; Server,
    Content-Type and the answer's fixed headers around Date; Etag and Content-Length after the
    rate-limit headers (spliced in per request)."""
    headers = httputil.HTTPHeaders()
    headers["Server"] = SERVER_HEADER
    headers["Content-Type"] = COMMON_HEADERS["Content-Type"]
    headers["Date"] = ""
    for name, value in answer.headers:
        headers[name] = value
    lines = [f"{name}: {value}\r\n" for name, value in headers.get_all()]
    date_at = next(i for i, line in enumerate(lines) if line.startswith("Date: "))
    etag = _etag(answer, gzipped)
    body = answer.gzip_body if gzipped and answer.gzip_body is not None else answer.body
    representation = httputil.HTTPHeaders()
    _representation(representation, answer, gzipped)
    tail = (
        ([f"Etag: {etag}\r\n"] if etag is not None else [])
        + [f"Content-Length: {len(body)}\r\n"]
        + [f"{name}: {value}\r\n" for name, value in representation.get_all()]
    )
    for line in lines + tail:
        if "\r" in line[:-2] or "\n" in line[:-2]:  # Tornado refuses these; so does the general path
            raise ValueError(f"illegal characters in header line {line!r}")
    return (
        f"HTTP/1.1 {answer.status} {answer.reason}\r\n".encode("latin1"),
        "".join(lines[:date_at]).encode("latin1"),
        "".join(lines[date_at + 1 :]).encode("latin1"),
        ("".join(tail) + "\r\n").encode("latin1"),  # and the blank line that ends the head
    )


def _error_answer(code: str, endpoint: str) -> Answer:
    status, headers, text = render_error(APIError(code))
    return fixed_answer(status, {k: v for k, v in headers.items() if k != "Content-Type"}, text.encode(), endpoint)


# The early 429 (its rate-limit headers and Retry-After come with the request's decision), and the
# 404s of an unknown path or version: rendered once, like every other error answer.
RATE_LIMITED = _error_answer("rate_limited", "rate_limited")
PREBUILT_ERRORS = {code: _error_answer(code, code) for code in ("unknown_endpoint", "unknown_version")}


class StatsApplication(tornado.web.Application):
    # Returns Tornado's _HandlerDelegate, or a OneShotDelegate in its place: any HTTPMessageDelegate.
    def get_handler_delegate(  # type: ignore[override]
        self,
        request: httputil.HTTPServerRequest,
        target_class: type[tornado.web.RequestHandler],
        target_kwargs: dict[str, Any] | None = None,
        path_args: list[bytes] | None = None,
        path_kwargs: dict[str, bytes] | None = None,
    ) -> httputil.HTTPMessageDelegate:
        services = self.settings["services"]
        metrics = getattr(services, "metrics", None)
        prebuilt = getattr(target_class, "prebuilt_error", None)
        if prebuilt is not None and request.method in ("GET", "HEAD"):
            return OneShotDelegate(request, PREBUILT_ERRORS[prebuilt], None, metrics, endpoint_name(target_class))
        admit = getattr(target_class, "admit", None)
        if admit is not None:
            decision = admit(self.settings, request)
            if decision is not None:
                if not decision.allowed:
                    return OneShotDelegate(request, RATE_LIMITED, decision, metrics, decision.bucket)
                answer = self.replay(target_class, request, services)
                if answer is not None:
                    return OneShotDelegate(request, answer, decision, metrics)
        return super().get_handler_delegate(request, target_class, target_kwargs, path_args, path_kwargs)

    @staticmethod
    def replay(target_class: type, request: httputil.HTTPServerRequest, services: Services) -> Answer | None:
        """The answer cache's answer to this request, if it holds one (server/serving/answers.py)."""
        endpoint = getattr(target_class, "endpoint", None)
        if endpoint is None or not endpoint.answer_seconds:
            return None
        # While the database is down the handler answers (503; /status says so), as without the cache.
        if not services.database_up():
            return None
        return services.answers.get(answer_key(request.path, request.query))


def make_app(
    config: Config, store: Store, limiter: RateLimiter, services: Services, **overrides: Any
) -> tornado.web.Application:
    settings: dict[str, Any] = dict(
        config=config,
        store=store,
        limiter=limiter,
        services=services,
        default_handler_class=NotFoundHandler,
        log_function=log_request,
        compress_response=False,
        serve_traceback=False,
        xsrf_cookies=False,
    )
    settings.update(overrides)
    # ContentEncoding in place of Tornado's GZipContentEncoding (compress_response): prebuilt bytes,
    # an ETag per encoding, no Vary on what is never compressed.
    return StatsApplication(handlers.routes, transforms=[ContentEncoding], **settings)
