"""Background jobs, run by exactly one process at a time (the holder of the jobs lease)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from store.errors import is_database_error, storage_failure_reason
from store.store import Store
from store.writes import write_health

if TYPE_CHECKING:
    from server.serving.metrics import Metrics

log = logging.getLogger("statsapi.jobs")

LEASE_NAME = "jobs"
# A job whose slot cannot be claimed (the database away or unable to write) tries again after
# 5 s, then 10, 20 ... at most this long: never every tick, and one log line per streak.
CLAIM_RETRY_FIRST = 5.0
CLAIM_RETRY_MAX = 300.0


@dataclasses.dataclass
class Job:
    name: str
    interval: float  # seconds; the job's slot is floor(now / interval)
    run: Callable[[int], Awaitable[str | None]]  # receives the slot, returns a short outcome
    next_slot: int = -1
    retry_at: float = 0.0  # monotonic: no claim before this (after failed claims)
    failed_claims: int = 0  # consecutive
    database_failures: int = 0  # consecutive runs that failed on the database


class JobRunner:
    """Holds the lease (renewed every `renew_every` s, expiring after `lease_ttl` s) and runs due jobs.

    Each (job, slot) is claimed once in the database before it runs, so a job never
    runs twice for the same minute or day, even across a change of leader.
    """

    # Seconds: the lease expires lease_ttl after its last renewal, renewed every renew_every; the
    # jobs are looked at every tick.
    lease_ttl: float = 60.0
    renew_every: float = 15.0
    tick: float = 1.0

    def __init__(
        self,
        store: Store,
        clock: Callable[[], float] = time.time,
        owner: str | None = None,
        metrics: Metrics | None = None,
    ):
        self.store = store
        self.metrics = metrics
        self.clock = clock
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.jobs: list[Job] = []
        # Work every process does whatever the lease (the tracker's pass): started by run().
        self.loops: list[Callable[[asyncio.Event], Coroutine[Any, Any, None]]] = []
        self.is_leader = False
        self._renewed_at = 0.0
        self._running: set[asyncio.Task] = set()
        self.paused: str | None = None  # why jobs wait (the database cannot write), or None

    def add(self, name: str, interval: float, run: Callable[[int], Awaitable[str | None]]) -> None:
        self.jobs.append(Job(name, interval, run))

    async def _renew(self) -> None:
        now = self.clock()
        if self.is_leader and now - self._renewed_at < self.renew_every:
            return
        try:
            self.is_leader = await self.store.leases.acquire(LEASE_NAME, self.owner, self.lease_ttl)
        except Exception as exc:
            # Without the database we cannot prove we still hold the lease: step down.
            log.warning("lease renewal failed: %s", type(exc).__name__)
            self.is_leader = False
        if self.is_leader:
            self._renewed_at = now

    def _writable(self) -> bool:
        """Jobs wait while the database cannot write (store/writes.py): each would only fail, and
        its claim too. The lease renewals and other processes' writes tell when it writes again."""
        error = write_health(self.store.client).error()
        if error is None:
            if self.paused is not None:
                log.warning("jobs resume: the database writes again")
                self.paused = None
            return True
        if self.paused is None:  # one line per spell, whatever its figures do meanwhile
            log.warning("jobs wait: the database cannot write (%s)", error["reason"])
        self.paused = str(error["reason"])
        return False

    async def run_due(self) -> None:
        await self._renew()
        if not self.is_leader:
            return
        if not self._writable():
            await write_health(self.store.client).probe(self.store.db)
            return
        now = self.clock()
        for job in self.jobs:
            slot = int(now // job.interval)
            if slot <= job.next_slot or any(t.get_name() == job.name for t in self._running):
                continue
            if time.monotonic() < job.retry_at:
                continue
            job.next_slot = slot
            task = asyncio.create_task(self._run_once(job, slot), name=job.name)
            self._running.add(task)
            task.add_done_callback(self._running.discard)

    async def _run_once(self, job: Job, slot: int) -> None:
        try:
            if not await self.store.job_runs.claim(job.name, slot):
                return  # another leader already ran this slot
        except Exception as exc:
            # Try this slot again, after a back-off that doubles (never every tick), logged once.
            delay = min(CLAIM_RETRY_MAX, CLAIM_RETRY_FIRST * 2**job.failed_claims)
            if job.failed_claims == 0:
                log.warning("job %s: cannot claim slot: %s; retrying with back-off", job.name, _short(exc))
            job.failed_claims += 1
            job.retry_at = time.monotonic() + delay
            job.next_slot = slot - 1
            return
        job.failed_claims, job.retry_at = 0, 0.0
        started = time.perf_counter()
        try:
            outcome = await job.run(slot)
            ok, message = True, outcome or "ok"
            job.database_failures = 0
        except Exception as exc:
            if is_database_error(exc):  # the database away or unable to write: one line per streak
                if job.database_failures == 0:
                    log.warning("job %s failed: %s", job.name, _short(exc))
                job.database_failures += 1
            else:
                log.exception("job %s failed", job.name)
            ok, message = False, f"{type(exc).__name__}: {exc}"[:300]
        if self.metrics is not None:
            self.metrics.observe_job(job.name, ok)
        try:
            await self.store.job_runs.record(job.name, ok, message, time.perf_counter() - started, slot=slot)
        except Exception:
            if job.database_failures <= 1:
                log.warning("job %s: outcome not recorded (database unavailable)", job.name)

    def add_loop(self, run: Callable[[asyncio.Event], Coroutine[Any, Any, None]]) -> None:
        """A loop every process runs (not only the leader) until the stop event is set."""
        self.loops.append(run)

    async def run(self, stop: asyncio.Event) -> None:
        loops: list[asyncio.Task] = [asyncio.create_task(loop(stop)) for loop in self.loops]
        while not stop.is_set():
            await self.run_due()
            try:
                await asyncio.wait_for(stop.wait(), self.tick)
            except TimeoutError:
                pass
        await self.stop()
        if loops:
            await asyncio.wait(loops, timeout=10.0)
            for task in loops:
                task.cancel()

    async def stop(self, timeout: float = 10.0) -> None:
        if self._running:
            await asyncio.wait(list(self._running), timeout=timeout)
        for task in list(self._running):
            task.cancel()
        if self.is_leader:
            try:
                await self.store.leases.release(LEASE_NAME, self.owner)
            except Exception:
                pass  # it expires by itself
            self.is_leader = False


def _short(exc: BaseException) -> str:
    """An error in a few words: what the database cannot do, or the error's type."""
    reason = storage_failure_reason(exc)
    return f"{type(exc).__name__} ({reason})" if reason else type(exc).__name__
