"""The demo seeding's progress as /status shows it (`demo`): the seeder's progress bars tell a
recorder each step, and it writes one small document to the store at most once a second."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # types only
    from store.status import JobRuns

log = logging.getLogger("statsapi.demo")

# The seeder's phases that report steps (server/compose/demo.py's bars: the tracker's days, the
# current profiles; the player counts are seeded beside the passes, without a bar here); the steps
# after them (clans, the tank statistics' build, the bulk files) are part of the phase before. The
# percent is over these phases.
SEED_PHASES = 2
WRITE_EVERY = 1.0  # seconds: the store hears of the progress at most this often


def iso(unix: float | None) -> str | None:
    return None if unix is None else dt.datetime.fromtimestamp(unix, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class SeedProgress:
    """What the seeding does now: `step` (a bar's phase, its steps done and in all) from the seeder,
    `snapshot()` the document /status answers, `run` the writer that keeps the store up to date."""

    def __init__(
        self,
        write: Callable[[dict[str, Any]], Awaitable[None]],
        clock: Callable[[], float] = time.time,
        phases: int = SEED_PHASES,
    ) -> None:
        self._write = write
        self._clock = clock
        self._phases = phases
        self.state = "seeding"
        self.phase = "starting"
        self.done = 0
        self.total = 0
        self._finished_phases = 0
        self.started_at = clock()
        self.finished_at: float | None = None
        self._changed = asyncio.Event()
        self._written_at = 0.0
        self._stopped = False

    def step(self, phase: str, done: int, total: int) -> None:
        """A bar moved (or a new one began: a new phase)."""
        if phase != self.phase:
            if self.phase != "starting":
                self._finished_phases += 1
            self.phase = phase
        self.done, self.total = max(0, done), max(0, total)
        self._changed.set()

    def percent(self) -> float:
        if self.state == "ready":
            return 100.0
        within = self.done / self.total if self.total else 0.0
        share = (min(self._finished_phases, self._phases) + min(within, 1.0)) / max(self._phases, 1)
        return round(min(99.9, 100 * share), 1)  # 100 only once ready: the last steps have no bar

    def snapshot(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "phase": self.phase,
            "done": self.done,
            "total": self.total,
            "percent": self.percent(),
            "started_at": iso(self.started_at),
            "finished_at": iso(self.finished_at),
        }

    async def save(self) -> None:
        self._written_at = time.monotonic()
        try:
            await self._write(self.snapshot())
        except Exception as exc:  # the status is a nicety: the seeding goes on without it
            log.warning("demo progress not recorded: %s", type(exc).__name__)

    async def run(self) -> None:
        """Write the progress whenever it changed, at most once every WRITE_EVERY seconds, until
        stop(). Stopped, not cancelled: a write cut short could still land after the last one."""
        while not self._stopped:
            await self._changed.wait()
            wait = WRITE_EVERY - (time.monotonic() - self._written_at)
            if wait > 0 and not self._stopped:
                await asyncio.sleep(wait)
            if self._stopped:
                break
            self._changed.clear()
            await self.save()

    def stop(self) -> None:
        self._stopped = True
        self._changed.set()

    async def finish(self, ok: bool) -> None:
        self.state = "ready" if ok else "failed"
        self.phase = "done" if ok else f"failed during {self.phase}"
        self.finished_at = self._clock()
        await self.save()


async def recorded(progress: SeedProgress, seeding: Awaitable[Any]) -> Any:
    """Await `seeding` with its progress written as it goes, then its outcome (ready or failed)."""
    await progress.save()  # "seeding" from the first second, before any bar
    writer = asyncio.create_task(progress.run())
    ok = False
    try:
        result = await seeding
        ok = True
    finally:
        progress.stop()
        await writer  # its last write lands before the outcome's
        await progress.finish(ok)
    return result


async def close_interrupted(job_runs: JobRuns, clock: Callable[[], float] = time.time) -> None:
    """A seeding whose process stopped mid-way (its record still says seeding, and no seeding runs
    now: the database holds data, so none starts): failed, not seeding for ever. A seeder still
    running elsewhere writes its progress over this within a second."""
    record = await job_runs.demo()
    if record is not None and record.get("state") == "seeding":
        phase = record.get("phase") or "starting"
        await job_runs.record_demo(
            {**record, "state": "failed", "phase": f"interrupted during {phase}", "finished_at": iso(clock())}
        )
