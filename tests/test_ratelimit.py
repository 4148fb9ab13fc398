"""The limiter's arithmetic and its cross-process bound (mongomock for speed, SecantusDB for capped)."""

from __future__ import annotations

import pytest
from mongomock_motor import AsyncMongoMockClient

from server.serving.ratelimit import RateLimiter, seconds_until_allowed, sliding_estimate
from store.ratelimit import RateCounters


class Clock:
    def __init__(self, now: float):
        self.now = now

    def __call__(self) -> float:
        return self.now


def mock_counters():
    """In-memory counters for decisions that never reach the database."""
    return RateCounters(AsyncMongoMockClient()["t"], 1 << 20, capped=False)


@pytest.fixture
def db_counters(io_loop, mongo_uri, db_name):
    """Counters on the real server (mongomock's bulk_write lags behind pymongo)."""
    from store import create_client

    client = create_client(mongo_uri)
    yield RateCounters(client[db_name], 1 << 20, capped=False)
    client.close()


def test_sliding_estimate_weights_previous_window_by_remaining_share():
    assert sliding_estimate(30, 0, 0.0) == 30
    assert sliding_estimate(30, 0, 0.5) == 15
    assert sliding_estimate(30, 10, 0.75) == pytest.approx(17.5)


def test_limit_is_exact_within_one_process():
    clock = Clock(600.0)  # start of a window
    limiter = RateLimiter(mock_counters(), clock=clock)
    results = [limiter.hit("1.2.3.4", "weekly").allowed for _ in range(12)]
    assert results == [True] * 10 + [False] * 2
    assert limiter.hit("5.6.7.8", "weekly").allowed  # other clients keep their own budget
    assert limiter.hit("1.2.3.4", "clan").allowed  # and other endpoints too


def test_no_doubling_across_a_window_edge():
    clock = Clock(659.0)  # last second of a window
    limiter = RateLimiter(mock_counters(), clock=clock)
    assert all(limiter.hit("c", "weekly").allowed for _ in range(10))
    clock.now = 661.0  # just after the edge: the previous window still weighs ~97 %
    # The previous window counts at most limit - 1, so one request fits at the edge, no more.
    assert [limiter.hit("c", "weekly").allowed for _ in range(5)] == [True, False, False, False, False]


def test_retry_after_is_when_a_request_fits_again():
    clock = Clock(600.0)
    limiter = RateLimiter(mock_counters(), clock=clock)
    for _ in range(10):
        limiter.hit("c", "weekly")
    clock.now = 630.0
    rejected = limiter.hit("c", "weekly")
    assert not rejected.allowed
    # 10 in this window: the next request fits when the next window starts (the previous one
    # then weighs at most limit - 1), so Retry-After never exceeds 60 s and is true.
    assert rejected.retry_after == 660 - 630
    clock.now = 630.0 + rejected.retry_after - 1
    assert not limiter.hit("c", "weekly").allowed
    clock.now = 630.0 + rejected.retry_after
    assert limiter.hit("c", "weekly").allowed
    assert seconds_until_allowed(0, 3, 10, 600.0) == 1


def test_retry_after_is_never_more_than_a_minute_and_always_true():
    for limit, sent_at, asked_at in [(5, 600.0, 600.5), (10, 659.0, 661.0), (30, 630.0, 659.9), (5, 601.0, 640.0)]:
        clock = Clock(sent_at)
        limiter = RateLimiter(mock_counters(), clock=clock)
        limiter.limits["weekly"] = limit
        while limiter.hit("c", "weekly").allowed:
            pass
        clock.now = asked_at
        rejected = limiter.hit("c", "weekly")
        if rejected.allowed:
            continue
        assert 1 <= rejected.retry_after <= 60
        clock.now = asked_at + rejected.retry_after
        assert limiter.hit("c", "weekly").allowed, (limit, sent_at, asked_at, rejected.retry_after)


def test_rejections_do_not_consume_budget():
    clock = Clock(600.0)
    limiter = RateLimiter(mock_counters(), clock=clock)
    for _ in range(10):
        limiter.hit("c", "weekly")
    for _ in range(100):
        assert not limiter.hit("c", "weekly").allowed
    clock.now = 720.0  # two windows later everything has decayed
    assert limiter.hit("c", "weekly").allowed


def test_decision_headers_follow_the_draft_syntax():
    limiter = RateLimiter(mock_counters(), clock=Clock(615.0))
    headers = limiter.hit("c", "player").headers()
    assert headers["RateLimit-Policy"] == '"player";q=30;w=60'
    assert headers["RateLimit"] == '"player";r=29;t=45'
    assert headers["X-RateLimit-Remaining"] == "29" and headers["X-RateLimit-Reset"] == "45"
    assert "Retry-After" not in headers


@pytest.mark.gen_test
async def test_cross_process_bound_holds_with_flushes(db_counters):
    """Two processes (limiters) share one database: admitted <= limit + (P-1) * (k+1) per window,
    where k is what one process admits between two flushes."""
    counters = db_counters
    clock = Clock(600.0)
    first, second = RateLimiter(counters, clock=clock), RateLimiter(counters, clock=clock)
    k = 2  # requests each process admits between flushes
    admitted = 0
    for _ in range(20):
        for limiter in (first, second):
            for _ in range(k):
                admitted += limiter.hit("c", "weekly").allowed
        await first.flush()
        await second.flush()
    assert admitted <= 10 + (2 - 1) * (k + 1)
    assert admitted >= 10  # and nobody was rejected below the limit
    totals = await counters.read(["c|weekly|10"])
    assert totals["c|weekly|10"] == admitted  # every admitted request reached the database


@pytest.mark.gen_test
async def test_a_process_learns_other_counts_after_a_clients_second_request(db_counters):
    """The "+1" of the bound: one request at a process is written but not read back."""
    counters = db_counters
    clock = Clock(600.0)
    busy, other = RateLimiter(counters, clock=clock), RateLimiter(counters, clock=clock)
    assert sum(busy.hit("c", "weekly").allowed for _ in range(10)) == 10
    await busy.flush()
    assert other.hit("c", "weekly").allowed  # k: it has not heard of the other process yet
    await other.flush()
    assert other.hit("c", "weekly").allowed  # +1: its first request was not read back
    await other.flush()  # now it reads the merged total back
    assert not other.hit("c", "weekly").allowed
    totals = await counters.read(["c|weekly|10"])
    assert totals["c|weekly|10"] == 12  # every admitted request was written


@pytest.mark.gen_test
async def test_without_flushes_the_bound_is_processes_times_limit(db_counters):
    counters = db_counters
    clock = Clock(600.0)
    limiters = [RateLimiter(counters, clock=clock) for _ in range(3)]
    admitted = sum(limiter.hit("c", "weekly").allowed for limiter in limiters for _ in range(20))
    assert admitted == 3 * 10


@pytest.mark.gen_test
async def test_global_live_budget_rejections_give_back_their_reservation(db_counters):
    counters = db_counters
    clock = Clock(600.0)
    limiter = RateLimiter(counters, clock=clock)
    decisions = [await limiter.reserve_global_live() for _ in range(35)]
    assert [d.allowed for d in decisions] == [True] * 30 + [False] * 5
    assert decisions[-1].bucket == "live_global" and decisions[-1].retry_after >= 1
    totals = await counters.read(["*|live_global|10"])
    assert totals["*|live_global|10"] == 30  # rejected lookups consumed nothing


@pytest.mark.gen_test(timeout=60)
async def test_counters_live_in_a_capped_collection(io_loop, mongo_uri, db_name):
    from store import Store, create_client

    # The schema is set up as at start-up (a job's deadline, not a request's 1.8 s).
    store = Store(create_client(mongo_uri, timeoutMS=30_000), db_name, rate_collection_bytes=1 << 20)
    await store.ensure_schema()
    await store.ensure_schema()  # idempotent
    options = await store.db["rate_counters"].options()
    assert options.get("capped") is True
    limiter = RateLimiter(store.rate_counters, clock=Clock(600.0))
    for _ in range(3):
        limiter.hit("9.9.9.9", "status")
    await limiter.flush()
    assert await store.rate_counters.read(["9.9.9.9|status|10"]) == {"9.9.9.9|status|10": 3}
    store.client.close()


@pytest.mark.gen_test
async def test_evicted_window_is_detected_and_not_undercounted(db_counters):
    counters = db_counters
    clock = Clock(600.0)
    limiter = RateLimiter(counters, clock=clock)
    for _ in range(5):
        limiter.hit("c", "weekly")
    await limiter.flush()
    await counters.collection.delete_many({})  # what a too-small capped collection does
    limiter.hit("c", "weekly")
    await limiter.flush()
    assert limiter.status()["evicted_windows"] == 1
    admitted = sum(limiter.hit("c", "weekly").allowed for _ in range(10))
    assert admitted == 4  # still 6 counted locally: 10 - 6
