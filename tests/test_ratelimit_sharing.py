"""The limiter writes a client's count only once it could matter across processes; the bound holds."""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.contract.catalogue import bucket_limits
from server.domain.days import ManualClock
from server.serving.ratelimit import RateLimiter, share_threshold


class MemoryCounters:
    """The counters' interface (add, read, expire_windows) over a dict, counting writes."""

    def __init__(self) -> None:
        self.totals: dict[str, int] = {}
        self.writes = 0  # counter documents written (one $inc upsert each)

    async def add(self, increments: dict[str, int], read_back: list[str] | None = None) -> dict[str, int]:
        for key, n in increments.items():
            if n:
                self.totals[key] = self.totals.get(key, 0) + n
                self.writes += 1
        return await self.read(list(increments) if read_back is None else read_back)

    async def read(self, keys: list[str]) -> dict[str, int]:
        return {key: self.totals[key] for key in keys if key in self.totals}

    async def expire_windows(self, before: int) -> int:
        return 0


def run(coro):
    return asyncio.new_event_loop().run_until_complete(coro)


def test_threshold_follows_the_limit_and_the_number_of_processes():
    assert share_threshold(30, 1) is None  # alone: never written
    assert share_threshold(30, None) == 2  # not known yet: as many as there may be
    assert share_threshold(30, 2) == 6
    assert share_threshold(30, 4) == 2
    assert share_threshold(10, 2) == 2  # never below 2 (the bound's "+1")
    assert share_threshold(120, 2) == 24


def test_one_process_counts_exactly_in_memory_and_writes_nothing():
    counters = MemoryCounters()
    limiter = RateLimiter(counters, clock=ManualClock(600.0))
    limiter.set_processes(1)
    limit = bucket_limits()["player"]
    admitted = sum(limiter.hit("203.0.113.9", "player").allowed for _ in range(limit + 5))
    for n in range(500):  # and many clients with a handful of requests each
        limiter.hit(f"10.0.{n // 250}.{n % 250}", "player")
    run(limiter.flush())
    assert admitted == limit
    assert counters.writes == 0


def test_a_client_far_below_its_limit_causes_no_counter_write():
    counters = MemoryCounters()
    limiter = RateLimiter(counters, clock=ManualClock(600.0))
    limiter.set_processes(2)
    threshold = share_threshold(bucket_limits()["player"], 2)
    for n in range(1000):  # 1,000 clients, each one request under the threshold
        for _ in range(threshold - 1):
            assert limiter.hit(f"10.1.{n // 250}.{n % 250}", "player").allowed
    run(limiter.flush())
    assert counters.writes == 0
    # The client that reaches the threshold is shared, with everything it sent.
    for _ in range(threshold):
        limiter.hit("198.51.100.4", "player")
    run(limiter.flush())
    assert counters.writes == 1
    assert counters.totals == {"198.51.100.4|player|10": threshold}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    processes=st.integers(2, 4),
    bucket=st.sampled_from(["weekly", "player", "online"]),
    rounds=st.lists(st.lists(st.integers(0, 4), min_size=4, max_size=4), min_size=1, max_size=40),
)
def test_cross_process_bound_holds(processes, bucket, rounds):
    """P limiters over one counter store, a client spreading requests over them, every limiter
    flushing after each round: admitted <= limit + (P - 1) * (max(t - 1, k) + 1), where t is the
    sharing threshold and k the most one process admits between two flushes."""
    counters = MemoryCounters()
    clock = ManualClock(600.0)  # one window throughout
    limiters = [RateLimiter(counters, clock=clock) for _ in range(processes)]
    for limiter in limiters:
        limiter.set_processes(processes)
    limit = bucket_limits()[bucket]
    t = share_threshold(limit, processes)
    admitted = 0
    k = 0
    for sends in rounds:
        for limiter, n in zip(limiters, sends, strict=False):
            got = sum(limiter.hit("198.51.100.7", bucket).allowed for _ in range(n))
            admitted += got
            k = max(k, got)
        for limiter in limiters:
            run(limiter.flush())
    assert admitted <= limit + (processes - 1) * (max(t - 1, k) + 1)
    sent = sum(min(n, 10**9) for sends in rounds for n in sends[:processes])
    assert admitted >= min(sent, limit)  # and nobody is turned away below the limit
