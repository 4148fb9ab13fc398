"""Sliding-window rate limiter: exact in-process decisions, counters batched to MongoDB.

Cross-process bound: each process decides from its own exact counts plus the totals it
read back at its last flush (every `flush_interval` seconds). With P processes a client
can therefore be admitted at most `limit + (P - 1) * (k + 1)` requests per window, where k is
the number of requests it gets admitted by one other process between two flushes
(k <= the client's request rate x flush_interval), and never more than P x limit. The "+1":
a client's first request in a window at a process is written but not read back (most clients
send one request; reading every total back was most of the database's work), so that process
learns the others' count one request later.
The shared live-lookup budget is not batched: it is checked in the database every time.
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
import time

log = logging.getLogger("statsapi.ratelimit")

WINDOW_SECONDS = 60

# Requests per minute per client (SPEC 8.1); the index's own limit is ours to choose.
ENDPOINT_LIMITS = {
    "index": 120,
    "player": 30,
    "history": 20,
    "clan": 30,
    "weekly": 10,
    "online": 60,
    "online_history": 30,
    "status": 60,
    "openapi": 120,
}
LIVE_PER_CLIENT = 5  # live upstream lookups per client per minute (SPEC 8.2)
LIVE_GLOBAL = 30  # live upstream lookups per minute across all clients (SPEC 8.2)
GLOBAL_CLIENT = "*"
FLUSH_SLICE = 500  # counters per database round trip


@dataclasses.dataclass
class Decision:
    bucket: str
    allowed: bool
    limit: int
    remaining: int
    reset: int  # seconds until the current window ends
    retry_after: int | None = None

    def headers(self) -> dict[str, str]:
        headers = {
            "RateLimit-Policy": f'"{self.bucket}";q={self.limit};w={WINDOW_SECONDS}',
            "RateLimit": f'"{self.bucket}";r={self.remaining};t={self.reset}',
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset),
        }
        if self.retry_after is not None:
            headers["Retry-After"] = str(self.retry_after)
        return headers


def sliding_estimate(previous: float, current: float, fraction: float) -> float:
    """The previous window weighted by its remaining share, plus the current window."""
    return previous * (1.0 - fraction) + current


def seconds_until_allowed(previous: float, current: float, limit: int, now: float) -> int:
    """How long until one more request fits, if the client sends nothing meanwhile."""
    offset = now % WINDOW_SECONDS
    if current + 1 <= limit:
        # It fits once the previous window's weight has decayed enough.
        needed_fraction = 1.0 - (limit - 1 - current) / previous if previous else 0.0
        wait = needed_fraction * WINDOW_SECONDS - offset
    else:
        # Only in the next window, once this window's count has decayed enough.
        needed_fraction = max(0.0, 1.0 - (limit - 1) / current) if current else 0.0
        wait = (WINDOW_SECONDS - offset) + needed_fraction * WINDOW_SECONDS
    return max(1, math.ceil(wait))


def counter_key(client: str, bucket: str, window: int) -> str:
    return f"{client}|{bucket}|{window}"


class _Count:
    __slots__ = ("seen", "pending", "inflight")

    def __init__(self):
        self.seen = 0  # total read back from the database (all processes)
        self.pending = 0  # admitted here, not yet sent to the database
        self.inflight = 0  # sent, not yet acknowledged

    @property
    def value(self) -> int:
        return self.seen + self.pending + self.inflight


class RateLimiter:
    def __init__(self, counters, scale: float = 1.0, clock=time.time, flush_interval: float = 0.5):
        self.counters = counters  # store.ratelimit.RateCounters
        self.scale = scale
        self.clock = clock
        self.flush_interval = flush_interval
        self.limits = {name: self.scaled(limit) for name, limit in ENDPOINT_LIMITS.items()}
        self.limits["live"] = self.scaled(LIVE_PER_CLIENT)
        self.global_live_limit = self.scaled(LIVE_GLOBAL)
        # {window: {(client, bucket): count}}: old windows go as a whole; `_dirty` holds the
        # counts admitted since the last flush, so a flush costs O(active), not O(tracked).
        self._windows: dict[int, dict[tuple, _Count]] = {}
        self._dirty: dict[tuple, _Count] = {}
        self._flush_lock = asyncio.Lock()
        self.evictions = 0
        self.flush_failures = 0
        self.last_flush: float | None = None

    def scaled(self, limit: int) -> int:
        return max(1, int(limit * self.scale))

    def _count(self, client: str, bucket: str, window: int) -> _Count:
        counts = self._windows.get(window)
        if counts is None:
            counts = self._windows[window] = {}
        count = counts.get((client, bucket))
        if count is None:
            count = counts[(client, bucket)] = _Count()
        return count

    def _peek(self, client: str, bucket: str, window: int) -> int:
        counts = self._windows.get(window)
        count = counts.get((client, bucket)) if counts else None
        return count.value if count else 0

    def hit(self, client: str, bucket: str) -> Decision:
        """Decide and, when admitted, count one request. Never touches the database."""
        limit = self.limits[bucket]
        now = self.clock()
        window = int(now // WINDOW_SECONDS)
        fraction = (now % WINDOW_SECONDS) / WINDOW_SECONDS
        previous = self._peek(client, bucket, window - 1)
        current = self._peek(client, bucket, window)
        estimate = sliding_estimate(previous, current, fraction)
        reset = max(1, math.ceil(WINDOW_SECONDS - now % WINDOW_SECONDS))
        if estimate + 1 > limit:
            retry = seconds_until_allowed(previous, current, limit, now)
            return Decision(bucket, False, limit, 0, reset, retry)
        count = self._count(client, bucket, window)
        count.pending += 1
        self._dirty[(client, bucket, window)] = count
        remaining = max(0, math.floor(limit - estimate - 1))
        return Decision(bucket, True, limit, remaining, reset)

    def refund(self, client: str, bucket: str) -> None:
        """Give back one admitted request (a live lookup that was not made after all)."""
        window = int(self.clock() // WINDOW_SECONDS)
        counts = self._windows.get(window)
        count = counts.get((client, bucket)) if counts else None
        if count is not None and count.pending > 0:
            count.pending -= 1

    async def reserve_global_live(self) -> Decision:
        """Take one unit of the shared live-lookup budget, checked in the database.

        A rejected reservation is given back at once, so rejections never consume budget.
        """
        limit = self.global_live_limit
        now = self.clock()
        window = int(now // WINDOW_SECONDS)
        fraction = (now % WINDOW_SECONDS) / WINDOW_SECONDS
        current_key = counter_key(GLOBAL_CLIENT, "live_global", window)
        previous_key = counter_key(GLOBAL_CLIENT, "live_global", window - 1)
        totals = await self.counters.add({current_key: 1})
        totals.update(await self.counters.read([previous_key]))
        current = totals.get(current_key, 1)
        previous = totals.get(previous_key, 0)
        estimate = sliding_estimate(previous, current, fraction)
        reset = max(1, math.ceil(WINDOW_SECONDS - now % WINDOW_SECONDS))
        if estimate > limit:
            await self.counters.increment(current_key, -1)
            retry = seconds_until_allowed(previous, current - 1, limit, now)
            return Decision("live_global", False, limit, 0, reset, retry)
        return Decision("live_global", True, limit, max(0, math.floor(limit - estimate)), reset)

    async def release_global_live(self) -> None:
        """Return a reserved unit (the lookup did not reach the upstream)."""
        window = int(self.clock() // WINDOW_SECONDS)
        await self.counters.increment(counter_key(GLOBAL_CLIENT, "live_global", window), -1)

    async def flush(self) -> None:
        """Send pending increments, read back merged totals, forget finished windows."""
        async with self._flush_lock:
            window = int(self.clock() // WINDOW_SECONDS)
            for old in [w for w in self._windows if w < window - 1]:
                del self._windows[old]
            dirty, self._dirty = self._dirty, {}
            items = [(key, count) for key, count in dirty.items() if count.pending and key[2] >= window - 1]
            # Slices keep each step on the event loop short when thousands of clients are active.
            for start in range(0, len(items), FLUSH_SLICE):
                try:
                    await self._flush_slice(items[start:start + FLUSH_SLICE])
                except Exception:
                    self.flush_failures += 1
                    for key, count in items[start:]:  # earlier slices are stored
                        self._dirty[key] = count
                    raise
            self.last_flush = self.clock()

    async def _flush_slice(self, items: list) -> None:
        for key, count in items:
            count.inflight, count.pending = count.pending, 0
        # A key this process has seen once and never read needs no read-back: a second
        # request here will make it read (this is the "+1" of the bound in the docstring).
        read_back = [counter_key(*key) for key, c in items if c.seen or c.inflight > 1]
        try:
            totals = await self.counters.add({counter_key(*key): c.inflight for key, c in items}, read_back)
        except Exception:
            for key, count in items:
                count.pending += count.inflight
                count.inflight = 0
            raise
        for key, count in items:
            name = counter_key(*key)
            if not count.seen and count.inflight == 1 and name not in totals:
                count.seen, count.inflight = 1, 0  # not read back: our own request
                continue
            total = totals.get(name)
            if total is None or total < count.seen + count.inflight:
                # The capped collection dropped a live window: keep our own count.
                self.evictions += 1
                log.warning("rate counter for %s was evicted; enlarge the counter collection", key[1])
                total = count.seen + count.inflight
            count.seen, count.inflight = total, 0

    async def run_flusher(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), self.flush_interval)
            except asyncio.TimeoutError:
                pass
            try:
                await self.flush()
            except Exception as exc:  # the database may be down; counts stay local and exact
                log.debug("rate counter flush failed: %s", exc)

    def status(self) -> dict:
        return {
            "tracked_keys": sum(len(counts) for counts in self._windows.values()),
            "last_flush": self.last_flush,
            "flush_failures": self.flush_failures,
            "evicted_windows": self.evictions,
        }
