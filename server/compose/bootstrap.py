"""Start-up steps shared by the server, scripts and tests: connect the store, build the application."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from pymongo import monitoring

from server.contract.config import Config

if TYPE_CHECKING:
    import tornado.web

    from server.compose.http import JSONErrorHTTPServer
    from server.services.registry import Services
    from server.serving.metrics import Metrics
    from server.serving.ratelimit import RateLimiter
    from store import Store

log = logging.getLogger("statsapi")


class CommandTimer(monitoring.CommandListener):
    """Feeds the database command histogram from the driver's events (any thread)."""

    def __init__(self, metrics: Metrics):
        self.metrics = metrics

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        """Only the outcome and its duration are recorded."""

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        self.metrics.observe_command(event.command_name, True, event.duration_micros / 1e6)

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        self.metrics.observe_command(event.command_name, False, event.duration_micros / 1e6)


async def connect_store(config: Config, uri: str, listeners: tuple = ()) -> Store:
    from store import Store, create_client

    client = create_client(uri, listeners)
    # On the embedded database, expiry is the retention job's (its TTL monitor scans whole
    # collections under a global lock); on MongoDB, TTL indexes.
    store = Store(
        client,
        config.db_name,
        rate_collection_bytes=config.rate_collection_mb << 20,
        capped=config.capped_rate_counters,
        ttl_indexes=not config.embedded_database,
    )
    for attempt in range(30):
        try:
            await store.ensure_schema()
            return store
        except Exception as exc:  # the database may still be starting
            log.warning("database not ready (%s); retrying", type(exc).__name__)
            await asyncio.sleep(1)
    raise SystemExit("cannot reach the database")


def make_http_server(app: tornado.web.Application, config: Config) -> JSONErrorHTTPServer:
    """The HTTP server `app` is served with, by `python -m server` and by the tests: the head, body
    and connection limits and the timeouts of server/compose/http.py. Clients behind a trusted proxy share
    its address, so the proxy is not capped per client."""
    from server.compose.http import BODY_TIMEOUT, IDLE_CONNECTION_TIMEOUT, JSONErrorHTTPServer

    return JSONErrorHTTPServer(
        app,
        xheaders=False,
        idle_connection_timeout=IDLE_CONNECTION_TIMEOUT,
        body_timeout=BODY_TIMEOUT,
        uncapped_networks=config.trusted_proxies,
    )


async def get_application(config: Config, uri: str) -> tuple[tornado.web.Application, Store, RateLimiter, Services]:
    """Build everything one process serves with: (app, store, limiter, services). No listening."""
    from server.compose.app import make_app
    from server.compose.wiring import build_services
    from server.serving.metrics import Metrics
    from server.serving.ratelimit import RateLimiter

    metrics = Metrics()  # first: the database client reports every command's time to it
    store = await connect_store(config, uri, (CommandTimer(metrics),))
    limiter = RateLimiter(store.rate_counters, scale=config.rate_limit_scale)
    services = await build_services(config, store, limiter, metrics=metrics)
    app = make_app(config, store, limiter, services)
    return app, store, limiter, services
