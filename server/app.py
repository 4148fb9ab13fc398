"""make_app: the pure Application factory (no I/O)."""
from __future__ import annotations

import logging

import tornado.web

import handlers
from handlers.base import NotFoundHandler

access_log = logging.getLogger("statsapi.access")


def log_request(handler: tornado.web.RequestHandler) -> None:
    """One line per request: resolved client, method, path, status, duration."""
    client = getattr(handler, "_client_ip", None) or handler.request.remote_ip
    duration_ms = 1000.0 * handler.request.request_time()
    path = handler.request.path[:200].encode("unicode_escape").decode("ascii")
    access_log.info("%s %s %s %d %.1fms", client, handler.request.method[:16], path, handler.get_status(), duration_ms)


def make_app(config, store, limiter, services, **overrides) -> tornado.web.Application:
    settings = dict(
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
    return tornado.web.Application(handlers.routes, **settings)
