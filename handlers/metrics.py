"""GET /metrics: the Prometheus text format, for configured networks only (not in the public index)."""

from __future__ import annotations

import ipaddress

from handlers.base import BaseHandler
from server.contract.errors import APIError


class MetricsHandler(BaseHandler):
    bucket = None  # not rate-limited: only operators' networks reach it
    needs_database = False
    cache_max_age = 0

    def prepare(self) -> None:
        if self.request.method == "OPTIONS":
            return
        # The TCP peer, never X-Forwarded-For: a proxy in front must not open it to the world.
        try:
            peer = ipaddress.ip_address(self.peer_ip)
        except ValueError:
            peer = None
        if peer is None or not any(peer in network for network in self.config.metrics_allow):
            raise APIError("unknown_endpoint")  # to anyone else it does not exist

    async def get(self) -> None:
        metrics = self.services.metrics
        if metrics is None:  # only a Services built without Metrics (tests, scripts): an internal error
            raise RuntimeError("Services.metrics is not wired")
        self.set_header("Content-Type", metrics.content_type)
        self.set_header("Cache-Control", "no-store")
        self.finish(metrics.render())


routes = [
    (r"/metrics", MetricsHandler),
]
