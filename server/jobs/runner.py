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

from store.store import Store

if TYPE_CHECKING:
    from server.api.metrics import Metrics

log = logging.getLogger("statsapi.jobs")

LEASE_NAME = "jobs"


@dataclasses.dataclass
class Job:
    name: str
    interval: float  # seconds; the job's slot is floor(now / interval)
    run: Callable[[int], Awaitable[str | None]]  # receives the slot, returns a short outcome
    next_slot: int = -1


class JobRunner:
    """Holds the lease (renewed every `renew_every` s, expiring after `lease_ttl` s) and runs due jobs.

    Each (job, slot) is claimed once in the database before it runs, so a job never
    runs twice for the same minute or day, even across a change of leader.
    """

    def __init__(
        self,
        store: Store,
        lease_ttl: float = 60.0,
        renew_every: float = 15.0,
        tick: float = 1.0,
        clock: Callable[[], float] = time.time,
        owner: str | None = None,
        metrics: Metrics | None = None,
    ):
        self.store = store
        self.metrics = metrics
        self.lease_ttl = lease_ttl
        self.renew_every = renew_every
        self.tick = tick
        self.clock = clock
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.jobs: list[Job] = []
        # Work every process does whatever the lease (the tracker's pass): started by run().
        self.loops: list[Callable[[asyncio.Event], Coroutine[Any, Any, None]]] = []
        self.is_leader = False
        self._renewed_at = 0.0
        self._running: set[asyncio.Task] = set()

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

    async def run_due(self) -> None:
        await self._renew()
        if not self.is_leader:
            return
        now = self.clock()
        for job in self.jobs:
            slot = int(now // job.interval)
            if slot <= job.next_slot or any(t.get_name() == job.name for t in self._running):
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
            log.warning("job %s: cannot claim slot: %s", job.name, type(exc).__name__)
            job.next_slot = slot - 1  # try again on the next tick
            return
        started = time.perf_counter()
        try:
            outcome = await job.run(slot)
            ok, message = True, outcome or "ok"
        except Exception as exc:
            log.exception("job %s failed", job.name)
            ok, message = False, f"{type(exc).__name__}: {exc}"[:300]
        if self.metrics is not None:
            self.metrics.observe_job(job.name, ok)
        try:
            await self.store.job_runs.record(job.name, ok, message, time.perf_counter() - started, slot=slot)
        except Exception:
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
