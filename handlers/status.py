"""Service status: health, database, upstream, background jobs, cache timestamps."""

from __future__ import annotations

import asyncio
import time

from pymongo.errors import PyMongoError

from handlers.base import BaseHandler, api_routes
from server.catalogue import STATUS
from server.config import API_VERSION, VERSION
from store.client import is_database_error
from store.tanks import CEILING_WARN, EMBEDDED_CEILING_RECORDS

CACHE_SECONDS = 2.0  # a monitor polling every second must not cost four queries each time


class StatusHandler(BaseHandler):
    endpoint = STATUS

    async def get(self):
        database, caches, jobs, sampler, volume = await self.database_view()
        upstream = self.services.upstream_status()
        limiter = self.limiter.status()
        embedded = self.services.embedded_database
        embedded = embedded.status() if embedded is not None else None
        connections = self.services.connection_stats
        reasons = []
        if not database["reachable"]:
            reasons.append("database unreachable")
        reasons += [f"job {name} failed" for name, run in jobs.items() if run.get("ok") is False]
        if limiter["degraded"]:
            reasons.append("rate-counter flushes fail or lag")
        if embedded is not None and embedded["state"] != "running":
            reasons.append(f"embedded database {embedded['state']}")
        records = volume.get("tank_records")
        if embedded is not None and records is not None and records >= CEILING_WARN * EMBEDDED_CEILING_RECORDS:
            reasons.append(
                f"embedded database near its measured ceiling: {records:,} of {EMBEDDED_CEILING_RECORDS:,} "
                "per-tank records; move to MongoDB (docs/deploy.md section 6)"
            )
        degraded = bool(reasons)
        self.respond(
            {
                "health": "degraded" if degraded else "ok",
                "health_reasons": reasons,
                "version": VERSION,
                "api_version": API_VERSION,
                "uptime_seconds": int(time.time() - self.services.started_at),
                "database": database,
                "upstream": upstream,
                "tracker": self.services.tracker_status(),
                "jobs": jobs,
                "leader": self.services.is_leader(),
                "rate_limiter": limiter,
                "embedded_database": embedded,
                "connections": connections() if connections is not None else None,
                "caches": caches,
                "volume": volume,
                "online_sampler": sampler,
            }
        )

    async def database_view(self) -> tuple:
        """What the database says, read at most every CACHE_SECONDS by one request at a time."""
        cache = self.services.status_cache
        if not self.store.database_up():
            return {"reachable": False, "ping_ms": None, "error": "heartbeat failed"}, {}, {}, {}, {}
        if cache.get("value") is not None and time.monotonic() - cache["at"] < CACHE_SECONDS:
            return cache["value"]
        pending = cache.get("pending")
        if pending is None:
            pending = cache["pending"] = asyncio.ensure_future(self._read_database())
            pending.add_done_callback(lambda _: cache.pop("pending", None))
        value = await asyncio.shield(pending)
        cache.update(value=value, at=time.monotonic())
        return value

    async def _read_database(self) -> tuple:
        database = {"reachable": False, "ping_ms": None}
        caches, jobs, sampler, volume = {}, {}, {}, {}
        try:
            database["ping_ms"] = await self.store.ping_ms()
            database["reachable"] = True
            caches = await self.store.newest_timestamps()
            volume = await self.store.volume()
            jobs = await self.store.job_runs.all()
            sampler = {
                doc["_id"]: {"last_success": doc.get("last_success"), "last_failure": doc.get("last_failure")}
                for doc in await self.store.online.latest()
            }
        except PyMongoError as exc:
            if not is_database_error(exc):  # timeouts included; anything else is a real fault
                raise
            database["error"] = type(exc).__name__
        return database, caches, jobs, sampler, volume


routes = api_routes(StatusHandler)
