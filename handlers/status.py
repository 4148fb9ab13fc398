"""Service status: health, database, upstream, background jobs, cache timestamps."""

from __future__ import annotations

import time

from handlers.base import BaseHandler, api_routes
from server.contract.catalogue import STATUS
from server.contract.config import API_VERSION, VERSION
from server.services.status import health_reasons
from server.serving.answers import STATUS_TAG


class StatusHandler(BaseHandler):
    endpoint = STATUS

    async def get(self) -> None:
        database, caches, jobs, sampler, volume, demo = await self.services.status.database_view()
        limiter = self.limiter.status()
        supervisor = self.services.embedded_database
        embedded = supervisor.status() if supervisor is not None else None
        connections = self.services.connection_stats
        reasons = health_reasons(database, jobs, limiter, embedded, volume, self.services.upstream_health_reasons())
        reasons += self.services.backup_health_reasons()
        self.respond(
            {
                "health": "degraded" if reasons else "ok",
                "health_reasons": reasons,
                "version": VERSION,
                "api_version": API_VERSION,
                "uptime_seconds": int(time.time() - self.services.started_at),
                "database": database,
                "upstream": self.services.upstream_status(),
                "tracker": self.services.tracker_status(),
                "panel": await self.services.panel_status(bool(database.get("reachable"))),
                "jobs": jobs,
                "leader": self.services.is_leader(),
                "rate_limiter": limiter,
                "embedded_database": embedded,
                "connections": connections() if connections is not None else None,
                "caches": caches,
                "volume": volume,
                "online_sampler": sampler,
                "answer_cache": self.services.answers.status(),
                "watcher": self.services.watcher_status(),
                "backups": self.services.backup_status(),
                "demo": demo,
            },
            tag=STATUS_TAG,
        )


routes = api_routes(StatusHandler)
