"""Service status: what the database says (read at most every few seconds) and why health is degraded."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from typing import TYPE_CHECKING, Any

from pymongo.errors import PyMongoError

from store.errors import is_database_error
from store.tanks import CEILING_WARN, EMBEDDED_CEILING_RECORDS
from store.writes import write_health

if TYPE_CHECKING:
    from store.store import Store

CACHE_SECONDS = 2.0  # a monitor polling every second must not cost four queries each time


def health_reasons(
    database: dict, jobs: dict, limiter: dict, embedded: dict | None, volume: dict, upstream: list[str] | None = None
) -> list[str]:
    """Why /status says `degraded` (empty: ok); `upstream` are the upstream side's own reasons."""
    reasons = list(upstream or [])
    if not database["reachable"]:
        reasons.append("database unreachable")
    write_error = database.get("write_error")
    if database.get("writable") is False and write_error:
        since = dt.datetime.fromtimestamp(write_error["since"], dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        reasons.append(f"database cannot write: {write_error['reason']} (since {since})")
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
    return reasons


class StatusService:
    """The database's part of /status: reachability, ping, cache timestamps, job runs, online
    sampler, volume. Read by one request at a time, reused for CACHE_SECONDS."""

    def __init__(self, store: Store):
        self.store = store
        self._value: tuple | None = None
        self._at = 0.0
        self._pending: asyncio.Future | None = None

    def database_up(self) -> bool:
        """The driver's last heartbeat succeeded (no query)."""
        return self.store.database_up()

    def write_status(self) -> dict:
        """Whether the database can write now (store/writes.py): `writable`, `write_error`."""
        return write_health(self.store.client).status()

    async def database_view(self) -> tuple[dict, dict, dict, dict, dict, dict | None]:
        """(database, caches, jobs, online sampler, volume, demo seeding); the database's `writable` and
        `write_error` are this process's figures of the moment, never the cached read's."""
        if not self.store.database_up():
            database = {"reachable": False, "ping_ms": None, "error": "heartbeat failed", **self.write_status()}
            demo = self._value[5] if self._value is not None else None  # the last read: a seeding is not undone
            return database, {}, {}, {}, {}, demo
        if self._value is None or time.monotonic() - self._at >= CACHE_SECONDS:
            if self._pending is None:
                self._pending = asyncio.ensure_future(self._read_database())
                self._pending.add_done_callback(self._read_done)
            value = await asyncio.shield(self._pending)
            self._value, self._at = value, time.monotonic()
        database, *rest = self._value
        return ({**database, **self.write_status()}, *rest)

    def _read_done(self, _: asyncio.Future) -> None:
        self._pending = None

    async def _read_database(self) -> tuple[dict, dict, dict, dict, dict, dict | None]:
        database: dict[str, Any] = {"reachable": False, "ping_ms": None}
        caches: dict = {}
        jobs: dict = {}
        sampler: dict = {}
        volume: dict = {}
        demo: dict | None = None
        try:
            database["ping_ms"] = await self.store.ping_ms()
            database["reachable"] = True
            caches = await self.store.newest_timestamps()
            volume = await self.store.volume()
            jobs = await self.store.job_runs.all()
            demo = await self.store.job_runs.demo()
            sampler = {
                doc["_id"]: {"last_success": doc.get("last_success"), "last_failure": doc.get("last_failure")}
                for doc in await self.store.online.latest()
            }
        except PyMongoError as exc:
            if not is_database_error(exc):  # timeouts and storage failures included; else a real fault
                raise
            database["error"] = type(exc).__name__
        return database, caches, jobs, sampler, volume, demo
