"""Sliding-window rate limiter: exact in-process decisions; a client's count shared once it could matter."""

# Sharing: a process writes a client's count (per bucket and window) to the database only once
# that count reaches the sharing threshold t = max(2, floor(SHARE_FRACTION x limit / (P - 1))),
# P being the live processes (the upstream budget's membership, server/upstream/budget.py). A
# client far below its limit - most clients send a handful of requests - costs no database write
# at all; with one process (P = 1) nothing is ever written and every count is exact in memory.
# Until a process has read the membership once, P is unknown and t = 2 (as if many processes).
#
# Cross-process bound: each process decides from its own exact counts plus the totals it read
# back at its last flush (every `flush_interval` seconds). What one process has admitted and the
# others cannot see is at most max(t - 1, k): below t nothing is written; past it, the k requests
# it admitted since its last flush. So with P processes a client is admitted at most
#     limit + (P - 1) x (max(t - 1, k) + 1)
# requests per window (the "+1": the request that takes a count to t is written with it, and
# read back by the others at their next flush), and never more than P x limit. With
# SHARE_FRACTION = 0.2 and k <= t - 1, (P - 1)(t - 1) <= 0.2 x limit: at most 1.2 x limit + P - 1
# (beyond P - 1 = 0.1 x limit, t stays 2: limit + (P - 1)(k + 1), the bound before the threshold).
# tests/test_ratelimit_sharing.py checks it over random interleavings.
#
# Floods: the database's work per flush is bounded whatever the traffic. One flush runs at a
# time; a flush sends at most MAX_KEYS_PER_FLUSH keys (clients seen more than once first); a
# failed or timed-out batch is never re-sent (it may have been applied: re-sending on top of a
# batch the database is still running is what buried it); after failures the next flush waits
# longer (up to MAX_FLUSH_BACKOFF). Meanwhile every decision is still exact for this process's
# own traffic, so the bound degrades to at most P x limit per client, never to failing requests.
# /status reports the lag and failures (health "degraded").
#
# IPv6 clients are counted per /64 (one host usually holds a whole /64).
#
# The shared live-lookup budget is not batched nor thresholded: each lookup makes a conditional
# atomic reservation in the database (increment only while the window's count is below the
# budget), so exactly the budget is admitted however many lookups arrive together.

from __future__ import annotations

import asyncio
import dataclasses
import functools
import ipaddress
import logging
import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from server.contract.catalogue import LIVE_GLOBAL, LIVE_PER_CLIENT, bucket_limits
from server.contract.errors import RATE_HEADERS

if TYPE_CHECKING:  # types only: the counters are handed in (server/compose/wiring.py)
    from store.ratelimit import RateCounters

log = logging.getLogger("statsapi.ratelimit")

WINDOW_SECONDS = 60

# Requests per minute per client, by bucket: the endpoint catalogue's (SPEC 8.1).
ENDPOINT_LIMITS = bucket_limits()
GLOBAL_CLIENT = "*"
FLUSH_SLICE = 500  # counters per database round trip
MAX_KEYS_PER_FLUSH = 2000  # the most counters one flush sends (the rest stay local until the next)
MAX_FLUSH_BACKOFF = 30.0  # seconds between flush attempts after repeated failures
FLUSH_LAG_DEGRADED = 10.0  # /status says degraded when counts wait longer than this
SHARE_FRACTION = 0.2  # of a limit: what the unshared counts of all other processes may add (see above)


@dataclasses.dataclass
class Decision:
    bucket: str
    allowed: bool
    limit: int
    remaining: int
    reset: int  # seconds until the current window ends
    retry_after: int | None = None

    def headers(self) -> dict[str, str]:
        return dict(_rate_headers(self.bucket, self.limit, self.remaining, self.reset, self.retry_after))

    def header_lines(self) -> bytes:
        """The same headers as HTTP/1.1 header lines ("Name: value\r\n" each), for a replayed answer."""
        return _rate_header_lines(self.bucket, self.limit, self.remaining, self.reset, self.retry_after)


@functools.lru_cache(maxsize=8192)
def _rate_headers(
    bucket: str, limit: int, remaining: int, reset: int, retry_after: int | None
) -> tuple[tuple[str, str], ...]:
    # Few distinct values (remaining <= limit, reset <= 60 s): formatted once each, not per request.
    values = (
        f'"{bucket}";q={limit};w={WINDOW_SECONDS}',
        f'"{bucket}";r={remaining};t={reset}',
        str(limit),
        str(remaining),
        str(reset),
    )
    pairs = tuple(zip(RATE_HEADERS, values, strict=True))
    if retry_after is not None:
        pairs += (("Retry-After", str(retry_after)),)
    return pairs


@functools.lru_cache(maxsize=8192)
def _rate_header_lines(bucket: str, limit: int, remaining: int, reset: int, retry_after: int | None) -> bytes:
    # Names as Tornado's HTTPHeaders writes them (each word capitalised: "Ratelimit-Policy").
    return "".join(
        f"{'-'.join(word.capitalize() for word in name.split('-'))}: {value}\r\n"
        for name, value in _rate_headers(bucket, limit, remaining, reset, retry_after)
    ).encode("latin1")


def sliding_estimate(previous: float, current: float, fraction: float, limit: int | None = None) -> float:
    """The previous window weighted by its remaining share, plus the current window.

    With `limit`, the previous window counts at most limit − 1: a client that used its whole
    budget may send again as soon as a new window starts, so no wait is ever longer than
    the rest of the current window (Retry-After ≤ 60 s, and true). That admits at most one
    request more around a window edge than the plain estimate, never a doubled limit.
    """
    if limit is not None:
        previous = min(previous, max(0, limit - 1))
    return previous * (1.0 - fraction) + current


def seconds_until_allowed(previous: float, current: float, limit: int, now: float, cost: int = 1) -> int:
    """How long until one more request (of `cost` units) fits, if the client sends nothing
    meanwhile (≤ 60 s: a batch bigger than the next window leaves may need a second wait)."""
    offset = now % WINDOW_SECONDS
    previous = min(previous, max(0, limit - 1))
    if current + cost <= limit:
        # It fits once the previous window's weight has decayed enough.
        needed_fraction = 1.0 - (limit - cost - current) / previous if previous else 0.0
        wait = needed_fraction * WINDOW_SECONDS - offset
    else:
        # At the next window: the previous window then weighs at most limit − 1.
        wait = WINDOW_SECONDS - offset
    return max(1, min(WINDOW_SECONDS, math.ceil(wait)))


def share_threshold(limit: int, processes: int | None) -> int | None:
    """The count at which a process writes a client's count (None: never, it runs alone)."""
    if processes == 1:
        return None
    if processes is None:
        return 2
    return max(2, math.floor(SHARE_FRACTION * limit / (processes - 1)))


def scaled_limit(limit: int, scale: float) -> int:
    """A per-minute limit multiplied by --rate-limit-scale (tests), never below 1."""
    return max(1, int(limit * scale))


@functools.lru_cache(maxsize=65536)
def client_key(address: str) -> str:
    """What the limits count: the address, or for IPv6 its /64."""
    if ":" not in address:
        return address
    try:
        network = ipaddress.IPv6Network(f"{address}/64", strict=False)
    except ValueError:
        return address
    return str(network)


def counter_key(client: str, bucket: str, window: int) -> str:
    return f"{client}|{bucket}|{window}"


class _Count:
    __slots__ = ("seen", "pending", "inflight", "shared")

    def __init__(self) -> None:
        self.seen = 0  # total read back from the database (all processes), plus what stays unshared
        self.pending = 0  # admitted here, not yet sent to the database
        self.inflight = 0  # sent, not yet acknowledged
        self.shared = False  # reached the sharing threshold: every admission is written

    @property
    def value(self) -> int:
        return self.seen + self.pending + self.inflight


class RateLimiter:
    def __init__(
        self,
        counters: RateCounters,
        scale: float = 1.0,
        clock: Callable[[], float] = time.time,
        flush_interval: float = 0.5,
    ):
        self.counters = counters
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
        self.rejections: dict[str, int] = {}  # 429s by bucket since start (for /metrics)
        self.flush_failures = 0
        self.consecutive_failures = 0
        self.last_flush: float | None = None
        self.last_flush_error: str | None = None
        self.dropped_batches = 0  # batches that failed and were not re-sent (counted locally)
        self._behind_since: float | None = None  # since when flushes fail or leave counts behind
        self._expired_through = -1
        self.processes: int | None = None  # live processes (None until the membership was read)
        self._thresholds = {name: share_threshold(limit, None) for name, limit in self.limits.items()}

    def set_processes(self, count: int | None) -> None:
        """How many processes share the limits (server/upstream/budget.py's membership)."""
        if count is not None:
            count = max(1, int(count))
        if count != self.processes:
            self.processes = count
            self._thresholds = {name: share_threshold(limit, count) for name, limit in self.limits.items()}

    def scaled(self, limit: int) -> int:
        return scaled_limit(limit, self.scale)

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

    def hit(self, client: str, bucket: str, cost: int = 1) -> Decision:
        """Decide and, when admitted, count one request (`cost` units of the bucket: a batch's
        ids). Never touches the database."""
        client = client_key(client)
        limit = self.limits[bucket]
        now = self.clock()
        window = int(now // WINDOW_SECONDS)
        fraction = (now % WINDOW_SECONDS) / WINDOW_SECONDS
        previous = self._peek(client, bucket, window - 1)
        current = self._peek(client, bucket, window)
        estimate = sliding_estimate(previous, current, fraction, limit)
        reset = max(1, math.ceil(WINDOW_SECONDS - now % WINDOW_SECONDS))
        if estimate + cost > limit:
            self.rejections[bucket] = self.rejections.get(bucket, 0) + 1
            retry = seconds_until_allowed(previous, current, limit, now, cost)
            return Decision(bucket, False, limit, 0, reset, retry)
        count = self._count(client, bucket, window)
        count.pending += cost
        if not count.shared:
            threshold = self._thresholds[bucket]
            # From the threshold on, every admission is written (below it, none is).
            count.shared = threshold is not None and count.pending + count.seen >= threshold
        if count.shared:
            self._dirty[(client, bucket, window)] = count
        return Decision(bucket, True, limit, max(0, math.floor(limit - estimate - cost)), reset)

    def refund(self, client: str, bucket: str) -> None:
        """Give back one admitted request (a live lookup that was not made after all)."""
        client = client_key(client)
        window = int(self.clock() // WINDOW_SECONDS)
        counts = self._windows.get(window)
        count = counts.get((client, bucket)) if counts else None
        if count is not None and count.pending > 0:
            count.pending -= 1

    async def reserve_global_live(self, cost: int = 1) -> Decision:
        """Take `cost` units (a lookup one; a roster one per upstream request it makes) of the shared
        live-lookup budget with a conditional atomic increment.

        The current window's counter is incremented only while it is below what the sliding
        estimate leaves (limit − the previous window's weighted share), so exactly that many
        lookups get through however many arrive at once; a rejection consumes nothing.
        """
        limit = self.global_live_limit
        now = self.clock()
        window = int(now // WINDOW_SECONDS)
        fraction = (now % WINDOW_SECONDS) / WINDOW_SECONDS
        current_key = counter_key(GLOBAL_CLIENT, "live_global", window)
        previous_key = counter_key(GLOBAL_CLIENT, "live_global", window - 1)
        previous = (await self.counters.read([previous_key])).get(previous_key, 0)
        cap = math.floor(limit - sliding_estimate(previous, 0, fraction, limit) + 1e-9)
        reset = max(1, math.ceil(WINDOW_SECONDS - now % WINDOW_SECONDS))
        current = await self.counters.increment_below(current_key, cap, cost) if cap >= cost else None
        if current is None:
            self.rejections["live_global"] = self.rejections.get("live_global", 0) + 1
            retry = seconds_until_allowed(previous, max(cap, 0), limit, now, cost)
            return Decision("live_global", False, limit, 0, reset, retry)
        return Decision("live_global", True, limit, max(0, cap - current), reset)

    async def release_global_live(self, cost: int = 1) -> None:
        """Return reserved units (the lookup did not reach the upstream)."""
        window = int(self.clock() // WINDOW_SECONDS)
        await self.counters.increment(counter_key(GLOBAL_CLIENT, "live_global", window), -cost)

    async def flush(self) -> None:
        """Send pending increments, read back merged totals, forget finished windows.

        At most one flush runs at a time and it sends at most MAX_KEYS_PER_FLUSH counters; a
        slice that fails is not re-sent (see the comment at the top of this module).
        """
        async with self._flush_lock:
            now = self.clock()
            window = int(now // WINDOW_SECONDS)
            for old in [w for w in self._windows if w < window - 1]:
                del self._windows[old]
            if window != self._expired_through:
                # Once a window: drop finished windows' counters (a no-op on a capped collection).
                self._expired_through = window
                await self.counters.expire_windows(window - 1)
            dirty, self._dirty = self._dirty, {}
            items = [(key, count) for key, count in dirty.items() if count.pending and key[2] >= window - 1]
            deferred = len(items) > MAX_KEYS_PER_FLUSH
            if deferred:
                # Repeat clients first: they are the ones a limit can bite; one-off addresses
                # of a flood wait (their windows simply end if the flood goes on).
                items.sort(key=lambda item: -(item[1].pending + item[1].seen))
                for key, count in items[MAX_KEYS_PER_FLUSH:]:
                    self._dirty[key] = count
                items = items[:MAX_KEYS_PER_FLUSH]
            # Slices keep each step on the event loop short when thousands of clients are active.
            for start in range(0, len(items), FLUSH_SLICE):
                try:
                    await self._flush_slice(items[start : start + FLUSH_SLICE])
                except Exception as exc:
                    self.flush_failures += 1
                    self.consecutive_failures += 1
                    self.dropped_batches += 1
                    self.last_flush_error = f"{type(exc).__name__}"
                    for key, count in items[start + FLUSH_SLICE :]:  # not sent yet: next time
                        self._dirty[key] = count
                    if self._behind_since is None:
                        self._behind_since = now
                    raise
            self.consecutive_failures = 0
            self.last_flush_error = None
            self.last_flush = self.clock()
            if not deferred:
                self._behind_since = None
            elif self._behind_since is None:
                self._behind_since = now  # counts were left for the next flush

    async def _flush_slice(self, items: list) -> None:
        for key, count in items:
            count.inflight, count.pending = count.pending, 0
        try:
            totals = await self.counters.add({counter_key(*key): c.inflight for key, c in items})
        except Exception:
            # The batch may have been applied (or still be running): never send it again.
            # This process keeps counting it for its own decisions.
            for key, count in items:
                count.seen += count.inflight
                count.inflight = 0
            raise
        for key, count in items:
            name = counter_key(*key)
            total = totals.get(name)
            if total is None or total < count.seen + count.inflight:
                # The capped collection dropped a live window: keep our own count.
                self.evictions += 1
                log.warning("rate counter for %s was evicted; enlarge the counter collection", key[1])
                total = count.seen + count.inflight
            count.seen, count.inflight = total, 0

    def next_flush_delay(self) -> float:
        """The flush interval, doubled per consecutive failure up to MAX_FLUSH_BACKOFF."""
        if not self.consecutive_failures:
            return self.flush_interval
        return min(MAX_FLUSH_BACKOFF, self.flush_interval * 2 ** min(self.consecutive_failures, 10))

    async def run_flusher(self, stop: asyncio.Event) -> None:
        logged_at = 0.0
        while not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), self.next_flush_delay())
            except TimeoutError:
                pass
            try:
                await self.flush()
            except Exception as exc:  # the database may be down; counts stay local and exact
                if time.monotonic() - logged_at > 60:
                    logged_at = time.monotonic()
                    log.warning(
                        "rate counter flush failed (%d in a row): %s; deciding from local counts",
                        self.consecutive_failures,
                        type(exc).__name__,
                    )

    def flush_lag(self) -> float:
        """Seconds since flushes began failing or leaving counts behind (0 when they keep up)."""
        return max(0.0, self.clock() - self._behind_since) if self._behind_since is not None else 0.0

    def degraded(self) -> bool:
        return self.consecutive_failures > 0 or self.flush_lag() > FLUSH_LAG_DEGRADED

    def status(self) -> dict:
        return {
            "tracked_keys": sum(len(counts) for counts in self._windows.values()),
            "last_flush": self.last_flush,
            "flush_failures": self.flush_failures,
            "evicted_windows": self.evictions,
            "pending_keys": len(self._dirty),
            "flush_lag_seconds": round(self.flush_lag(), 1),
            "consecutive_flush_failures": self.consecutive_failures,
            "last_flush_error": self.last_flush_error,
            "degraded": self.degraded(),
        }
