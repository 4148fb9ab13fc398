"""One upstream request budget per process: a sliding-window rate cap shared by every caller, by priority."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import math
import time
from collections.abc import AsyncIterator, Callable
from typing import Literal, Protocol, get_args

log = logging.getLogger("statsapi.upstream")

# Lower number = served first. Live lookups are what a user is waiting for; the clan refresh,
# the tracker, the refresh-ahead and the online sampler keep data fresh; table reloads can wait.
# Who asks the upstream: a closed set, so a new caller is named here (and gets a priority) or mypy
# and the check below fail; an unknown string can never count silently as some other caller.
Caller = Literal["live", "clans", "tracker", "refresh", "online", "watch", "other", "reference", "seed", "panel"]
CALLERS: tuple[Caller, ...] = get_args(Caller)
PRIORITIES: dict[Caller, int] = {
    "live": 0,
    "clans": 1,
    "tracker": 1,
    "refresh": 1,
    "online": 1,
    "watch": 1,
    "other": 1,
    "reference": 2,
    "seed": 2,
    "panel": 2,  # probing for the random panel: background work that can wait
}
if set(PRIORITIES) != set(CALLERS):  # checked at import: every caller has its priority
    raise RuntimeError(f"PRIORITIES and Caller disagree: {sorted(set(PRIORITIES) ^ set(CALLERS))}")

DEFAULT_RATE = 10.0  # the commonly cited quota of a standalone application_id
# A slot is held from the grant until W = 1 s + this margin after the answer arrived: the
# upstream saw the request somewhere between our send and its answer, so however late the event
# loop actually sent it, no k + 1 requests can arrive within one of the upstream's seconds.
# The margin covers clock granularity on their side.
WINDOW_MARGIN = 0.05
LIVE_RESERVE_SHARE = 0.2  # of every window's slots, this share is kept free for live lookups
SLOWDOWN = 0.5  # REQUEST_LIMIT_EXCEEDED: halve the rate ...
MIN_FACTOR = 0.05
RECOVER_STEP = 0.1  # ... then win back a tenth of it
RECOVER_EVERY = 5.0  # every this many seconds without another refusal
MEMBERSHIP_EVERY = 2.0  # how often each process re-reads how many processes share the quota
MEMBER_STALE = 3 * MEMBERSHIP_EVERY  # a process silent this long no longer holds a share
WAIT_SAMPLES = 1000


class Members(Protocol):
    """Where processes sharing one application_id announce themselves (store.upstream_members)."""

    async def heartbeat(self, owner: str, now: float) -> None: ...

    async def count_active(self, since: float) -> int: ...

    async def leave(self, owner: str) -> None: ...


class UpstreamBudget:
    """At most k requests in flight or answered within the last W seconds (k/W ≤ this
    process's share of the rate), which puts at most k arrivals in any second upstream.

    Waiters queue by priority; a lower priority is only granted a slot while the window holds
    fewer than k − reserve sends, so a live lookup finds a free slot even while a background
    job is using the quota. A refusal from the upstream halves the rate and pauses sending for
    one window; the rate then recovers by a tenth every RECOVER_EVERY seconds.
    """

    def __init__(
        self,
        rate: float = DEFAULT_RATE,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        margin: float = WINDOW_MARGIN,
        hold_first_window: bool = True,
        recover_step: float = RECOVER_STEP,
        recover_every: float = RECOVER_EVERY,
    ) -> None:
        if rate <= 0:
            raise ValueError("upstream rate must be positive")
        self.rate = float(rate)
        self.share = float(rate)
        self.processes = 1
        self.margin = margin
        self.clock = clock
        self.wall = wall
        self._factor = 1.0
        self.recover_step = recover_step
        self.recover_every = recover_every
        self._next_recovery = 0.0
        self._hold_until = 0.0
        self._in_flight = 0
        self._done: collections.deque[float] = collections.deque()  # when answers arrived
        self._queues: dict[int, collections.deque] = {p: collections.deque() for p in sorted(set(PRIORITIES.values()))}
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        # For /status.
        self._recent: collections.deque[tuple[float, str]] = collections.deque()
        self._live_waits: collections.deque[float] = collections.deque(maxlen=WAIT_SAMPLES)
        self.refusals = 0
        self.last_refusal: float | None = None
        self.total = 0
        self.sent_by_caller: dict[str, int] = {}  # since start (for /metrics)
        self.refused_by_caller: dict[str, int] = {}
        if hold_first_window:
            # A restarted process may follow its predecessor's burst, which the upstream still
            # counts: send nothing until one window has passed.
            self.hold(1.0 + margin)

    # --- the window ------------------------------------------------------------------
    def window(self) -> tuple[int, float, int]:
        """(k sends, W seconds, reserve for live) as of now."""
        now = self.clock()
        if self._factor < 1.0 and now >= self._next_recovery:
            self._factor = min(1.0, self._factor + self.recover_step)
            self._next_recovery = now + self.recover_every
        effective = self.share * self._factor
        if effective >= 1.0:
            k = int(math.floor(effective))
            seconds = 1.0 + self.margin
        else:
            k, seconds = 1, (1.0 + self.margin) / effective
        return k, seconds, int(k * LIVE_RESERVE_SHARE)

    def _limit(self, priority: int, k: int, reserve: int) -> int:
        return k if priority == 0 else max(1, k - reserve)

    def _prune(self, now: float, seconds: float) -> None:
        done = self._done
        while done and done[0] <= now - seconds:
            done.popleft()

    def _free_at(self, priority: int) -> float:
        """The monotonic time at which `priority` may next send: 0 if it may now, inf until an
        answer arrives."""
        now = self.clock()
        k, seconds, reserve = self.window()
        self._prune(now, seconds)
        limit = self._limit(priority, k, reserve)
        held = self._in_flight + len(self._done)
        at = 0.0  # free already
        if held >= limit:
            if self._in_flight >= limit:
                return math.inf
            at = self._done[held - limit] + seconds
        return max(at, self._hold_until)

    def _record(self, caller: Caller) -> None:
        self._in_flight += 1
        self.total += 1
        self.sent_by_caller[caller] = self.sent_by_caller.get(caller, 0) + 1
        wall = self.wall()
        self._recent.append((wall, caller))
        while self._recent and self._recent[0][0] < wall - 60:
            self._recent.popleft()

    # --- callers ---------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def slot(self, caller: Caller = "other") -> AsyncIterator[float]:
        """Hold a slot around one request: ``async with budget.slot("live"): await fetch()``."""
        waited = await self.acquire(caller)
        try:
            yield waited
        finally:
            self.release()

    def release(self) -> None:
        """The answer (or the failure) of a request granted by `acquire` arrived."""
        if self._in_flight > 0:
            self._in_flight -= 1
            self._done.append(self.clock())
        self._schedule()

    async def acquire(self, caller: Caller = "other") -> float:
        """Wait for a slot (call `release` when the answer arrives); returns the seconds waited."""
        if caller not in PRIORITIES:
            raise ValueError(f"unknown upstream caller {caller!r}: name it in Caller (server/upstream/budget.py)")
        priority = PRIORITIES[caller]
        self._bind_loop()
        started = self.clock()
        ahead = any(self._queues[p] for p in self._queues if p <= priority)
        if not ahead and self._free_at(priority) <= started:
            self._record(caller)
            self._note_wait(priority, 0.0)
            return 0.0
        future = asyncio.get_running_loop().create_future()
        self._queues[priority].append((future, caller))
        self._schedule()
        try:
            await future
        except asyncio.CancelledError:
            try:
                self._queues[priority].remove((future, caller))
            except ValueError:
                pass
            if future.done() and not future.cancelled():
                self.release()  # granted just as the caller gave up: nobody else will release it
            self._schedule()
            raise
        waited = self.clock() - started
        self._note_wait(priority, waited)
        return waited

    def note_refusal(self, caller: Caller = "other") -> None:
        """The upstream answered REQUEST_LIMIT_EXCEEDED: slow down, pause one window."""
        now = self.clock()
        self.refusals += 1
        self.refused_by_caller[caller] = self.refused_by_caller.get(caller, 0) + 1
        self.last_refusal = self.wall()
        self.slow_down()
        _, seconds, _ = self.window()
        self._hold_until = max(self._hold_until, now + seconds)
        log.warning("upstream refused a request for the rate: slowing to %.2f requests/s", self.effective_rate())

    def slow_down(self) -> None:
        """Halve the rate (multiplicative decrease); it recovers by `recover_step` every
        `recover_every` seconds without another slow-down (additive increase)."""
        self._factor = max(MIN_FACTOR, self._factor * SLOWDOWN)
        self._next_recovery = self.clock() + self.recover_every
        self._schedule()

    @property
    def factor(self) -> float:
        """The share of the rate in use now (1.0 unless slowed down)."""
        self.window()  # applies any recovery due
        return self._factor

    def hold(self, seconds: float) -> None:
        """Send nothing for `seconds` (a joining process waits until the others saw it)."""
        self._hold_until = max(self._hold_until, self.clock() + seconds)

    def set_processes(self, count: int) -> None:
        count = max(1, int(count))
        if count != self.processes:
            log.info("upstream quota shared by %d process(es): %.2f requests/s here", count, self.rate / count)
        self.processes = count
        self.share = self.rate / count
        self._schedule()

    def effective_rate(self) -> float:
        k, seconds, _ = self.window()
        return k / seconds

    # --- granting --------------------------------------------------------------------
    def _bind_loop(self) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            # A new event loop (tests run one per test): waiters and requests of the old one are
            # gone (their answers will never be released here).
            self._loop = loop
            self._timer = None
            for queue in self._queues.values():
                queue.clear()
            self._done.extend(self.clock() for _ in range(self._in_flight))
            self._in_flight = 0

    def _schedule(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._loop is None or self._loop.is_closed():
            return
        for priority, queue in self._queues.items():
            if queue:
                at = self._free_at(priority)
                if at != math.inf:  # else the next release() reschedules
                    self._timer = self._loop.call_later(max(0.0, at - self.clock()), self._grant)
                return

    def _grant(self) -> None:
        self._timer = None
        now = self.clock()
        for priority, queue in self._queues.items():
            while queue:
                future, caller = queue[0]
                if future.done():
                    queue.popleft()
                    continue
                if self._free_at(priority) > now:
                    break
                queue.popleft()
                self._record(caller)
                future.set_result(None)
            if queue:
                break  # a higher priority is still waiting: lower ones wait behind it
        self._schedule()

    # --- status ----------------------------------------------------------------------
    def _note_wait(self, priority: int, waited: float) -> None:
        if priority == 0:
            self._live_waits.append(waited)

    def status(self) -> dict:
        wall = self.wall()
        by_caller: dict[str, int] = {}
        for ts, caller in self._recent:
            if ts >= wall - 60:
                by_caller[caller] = by_caller.get(caller, 0) + 1
        k, seconds, reserve = self.window()
        waits = sorted(self._live_waits)

        def quantile(q: float) -> float | None:
            if not waits:
                return None
            return round(1000 * waits[min(len(waits) - 1, int(q * len(waits)))], 1)

        return {
            "rate_per_second": self.rate,
            "processes_sharing": self.processes,
            "share_per_second": round(self.share, 3),
            "effective_per_second": round(k / seconds, 3),
            "window": {"requests": k, "seconds": round(seconds, 3), "reserved_for_live": reserve},
            "in_flight": self._in_flight,
            "slowed_down": self._factor < 1.0,
            "requests_last_minute": sum(by_caller.values()),
            "requests_last_minute_by_caller": by_caller,
            "queued": {str(p): len(q) for p, q in self._queues.items() if q},
            "request_limit_exceeded": {"count": self.refusals, "last": self.last_refusal},
            "live_queue_wait_ms": {"p50": quantile(0.5), "p99": quantile(0.99), "samples": len(waits)},
        }

    # --- sharing the quota between processes -------------------------------------------
    async def run_membership(
        self,
        members: Members,
        owner: str,
        stop: asyncio.Event,
        every: float = MEMBERSHIP_EVERY,
        on_count: Callable[[int], None] | None = None,
    ) -> None:
        """Announce this process every `every` s and take rate / (processes alive) as its share;
        `on_count` hears the count too (the rate limiter's sharing threshold follows it).

        A joining process sends nothing for one period (plus a margin), by which time every
        other process has re-read the membership and lowered its own share.
        """
        self.hold(every * 1.25)
        try:
            while not stop.is_set():
                try:
                    now = self.wall()
                    await members.heartbeat(owner, now)
                    count = await members.count_active(now - MEMBER_STALE)
                    self.set_processes(count)
                    if on_count is not None:
                        on_count(count)
                except Exception as exc:  # keep the last share; the database may be back soon
                    log.warning("upstream membership not refreshed: %s", type(exc).__name__)
                try:
                    await asyncio.wait_for(stop.wait(), every)
                except TimeoutError:
                    pass
        finally:
            try:
                await members.leave(owner)
            except Exception:
                log.info("upstream membership not withdrawn (it goes stale by itself)")
