"""Service status: health, database, upstream, background jobs, cache timestamps."""
from __future__ import annotations

import time

from handlers.base import BaseHandler
from server.config import VERSION
from store import DATABASE_ERRORS


class StatusHandler(BaseHandler):
    bucket = "status"
    needs_database = False
    cache_max_age = 10

    async def get(self):
        database = {"reachable": False, "ping_ms": None}
        caches, jobs, sampler = {}, {}, {}
        try:
            database["ping_ms"] = await self.store.ping_ms()
            database["reachable"] = True
            caches = await self.store.newest_timestamps()
            jobs = await self.store.job_runs.all()
            sampler = {doc["_id"]: {"last_success": doc.get("last_success"), "last_failure": doc.get("last_failure")}
                       for doc in await self.store.online.latest()}
        except DATABASE_ERRORS as exc:
            database["error"] = type(exc).__name__
        upstream = self.services.upstream_status()
        degraded = not database["reachable"] or any(run.get("ok") is False for run in jobs.values())
        self.respond({
            "health": "degraded" if degraded else "ok",
            "version": VERSION,
            "api_version": "v1",
            "uptime_seconds": int(time.time() - self.services.started_at),
            "database": database,
            "upstream": upstream,
            "jobs": jobs,
            "leader": self.services.is_leader(),
            "rate_limiter": self.limiter.status(),
            "caches": caches,
            "online_sampler": sampler,
        })


routes = [
    (r"/api/v1/status/?", StatusHandler),
]
