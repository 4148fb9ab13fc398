"""make_app: the pure Application factory (no I/O)."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

import tornado
import tornado.web
from tornado import httputil

import handlers
from handlers.base import NotFoundHandler
from server.api.errors import APIError, render_error

if TYPE_CHECKING:  # types only
    from server.api.config import Config
    from server.api.metrics import Metrics
    from server.api.ratelimit import Decision, RateLimiter
    from server.services.registry import Services
    from store.store import Store

SERVER_HEADER = "TornadoServer/" + tornado.version
# The early 429's status, headers and body: rendered once, like every other error answer.
RATE_LIMITED_STATUS, RATE_LIMITED_HEADERS, _rate_limited_text = render_error(APIError("rate_limited"))
RATE_LIMITED_BODY = _rate_limited_text.encode()

access_log = logging.getLogger("statsapi.access")


def log_access(
    request: httputil.HTTPServerRequest,
    status: int,
    client: str | None,
    endpoint: str = "unknown",
    metrics: Metrics | None = None,
) -> None:
    """One line per request (resolved client, method, path, status, duration) and its metrics."""
    if metrics is not None:
        metrics.observe_request(endpoint, status, request.request_time())
    if not access_log.isEnabledFor(logging.INFO):
        return
    duration_ms = 1000.0 * request.request_time()
    path = request.path[:200].encode("unicode_escape").decode("ascii")
    access_log.info("%s %s %s %d %.1fms", client or request.remote_ip, request.method[:16], path, status, duration_ms)


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

    @classmethod
    def get(cls) -> str:
        now = time.time()
        if int(now) != cls.second:
            cls.second, cls.text = int(now), httputil.format_timestamp(now)
        return cls.text


class RateLimitedDelegate(httputil.HTTPMessageDelegate):
    """The 429 for a client already over its limit, written without building a RequestHandler.

    Abuse must be cheap: this skips the handler's construction, header bookkeeping and
    coroutine, and sends the same headers and body BaseHandler would.
    """

    def __init__(self, request: httputil.HTTPServerRequest, decision: Decision, metrics: Metrics | None = None) -> None:
        self.request = request
        self.decision = decision
        self.metrics = metrics

    def headers_received(
        self,
        start_line: httputil.RequestStartLine | httputil.ResponseStartLine,
        headers: httputil.HTTPHeaders,
    ) -> None:
        return None

    def data_received(self, chunk: bytes) -> None:
        return None

    def finish(self) -> None:
        request = self.request
        headers = httputil.HTTPHeaders()
        headers["Server"] = SERVER_HEADER
        headers["Date"] = _HeaderDate.get()
        for name, value in RATE_LIMITED_HEADERS.items():
            headers[name] = value
        for name, value in self.decision.headers().items():
            headers[name] = value
        headers["Content-Length"] = str(len(RATE_LIMITED_BODY))
        body = b"" if request.method == "HEAD" else RATE_LIMITED_BODY
        start_line = httputil.ResponseStartLine("", RATE_LIMITED_STATUS, "Too Many Requests")
        # Tornado types the connection Optional (None only for requests built outside a server) and its
        # private _finish_time as None until set.
        request.connection.write_headers(start_line, headers, body)  # type: ignore[union-attr]
        request.connection.finish()  # type: ignore[union-attr]
        request._finish_time = time.time()  # type: ignore[assignment]
        log_access(request, 429, getattr(request, "statsapi_client", None), self.decision.bucket, self.metrics)

    def on_connection_close(self) -> None:
        """Nothing to cancel: the answer is written in one go by finish()."""


class StatsApplication(tornado.web.Application):
    # Returns Tornado's _HandlerDelegate, or the early 429 in its place: any HTTPMessageDelegate.
    def get_handler_delegate(  # type: ignore[override]
        self,
        request: httputil.HTTPServerRequest,
        target_class: type[tornado.web.RequestHandler],
        target_kwargs: dict[str, Any] | None = None,
        path_args: list[bytes] | None = None,
        path_kwargs: dict[str, bytes] | None = None,
    ) -> httputil.HTTPMessageDelegate:
        admit = getattr(target_class, "admit", None)
        if admit is not None:
            decision = admit(self.settings, request)
            if decision is not None and not decision.allowed:
                return RateLimitedDelegate(request, decision, getattr(self.settings["services"], "metrics", None))
        return super().get_handler_delegate(request, target_class, target_kwargs, path_args, path_kwargs)


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
    return StatsApplication(handlers.routes, **settings)
