"""Bounded work per request: online history from materialised days, single-flight, a cap on heavy
operations (fast 503 + Retry-After), and a hung database (SIGSTOP) answered 503 within the deadline.

Measured figures are printed (run with -s); assertions are on status codes and counts, not times,
except a generous safety net on the SIGSTOP case.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import signal
import time

import pytest
import ujson
from tornado.httpclient import AsyncHTTPClient, HTTPRequest

from server.services.online import INLINE_DAYS, OnlineService
from store.client import deadline

DAY = dt.timedelta(days=1)
NOW = dt.datetime(2031, 6, 1, 12, 0, tzinfo=dt.UTC)  # in the future: no TTL can interfere
GAP_DAY = (NOW - 10 * DAY).date()  # a finished day without any sample
SAMPLE_HOURS = (0, 6, 12, 18)  # a compact year: four sampled minutes a day


class Clock:
    def __init__(self, now: float):
        self.now = now

    def __call__(self) -> float:
        return self.now


async def seed_year(store, days: int = 400, game: str = "wot") -> int:
    """Four minutes a day over `days` days, each region two servers, except GAP_DAY."""
    docs = []
    start = dt.datetime.combine(NOW.date(), dt.time(), dt.UTC) - (days - 1) * DAY
    for i in range(days):
        day = start + i * DAY
        if day.date() == GAP_DAY or day > NOW:
            continue
        for hour in SAMPLE_HOURS:
            minute = day + dt.timedelta(hours=hour)
            if minute > NOW:
                continue
            for region in ("eu", "na", "asia"):
                for server, players in (("A", 100 + hour), ("B", 50 + i % 7)):
                    docs.append(
                        {
                            "minute": minute,
                            "meta": {"game": game, "region": region, "server": server},
                            "players": players,
                        }
                    )
    # Seeding is set-up, not a request: a generous deadline, so a loaded machine cannot fail it.
    with deadline(60):
        for start_at in range(0, len(docs), 2000):
            await store.online.samples.insert_many(docs[start_at : start_at + 2000], ordered=False)
    return len(docs)


@pytest.fixture
def store(io_loop, mongo_uri, db_name):
    from store import Store, create_client

    client = create_client(mongo_uri)
    store = Store(client, db_name, rate_collection_bytes=1 << 20)
    io_loop.run_sync(store.ensure_schema)
    yield store
    client.close()


def counting(obj, name: str, counter: dict):
    original = getattr(obj, name)

    async def wrapper(*args, **kwargs):
        counter[name] = counter.get(name, 0) + 1
        return await original(*args, **kwargs)

    setattr(obj, name, wrapper)


@pytest.mark.gen_test(timeout=120)
async def test_cold_400_days_single_flight_bounded_then_materialised(store):
    await seed_year(store)
    clock = Clock(NOW.timestamp())
    service = OnlineService(store, upstream=None, clock=clock)
    calls: dict = {}
    counting(store.online, "daily_range", calls)
    counting(store.online, "aggregate_day", calls)

    # 16 concurrent cold identical requests: one computation, a bounded number of aggregations.
    answers = await asyncio.gather(*(service.history("wot", "eu", 400) for _ in range(16)))
    assert all(answer == answers[0] for answer in answers)
    assert calls == {"daily_range": 1, "aggregate_day": INLINE_DAYS + 1}  # + today
    series = answers[0]["series"]
    assert len(series) == 400 and series[-1]["date"] == NOW.date().isoformat()
    assert [day["samples"] for day in series[-INLINE_DAYS - 1 :]] == [4] * INLINE_DAYS + [3]  # today: 3 so far
    # Older days are not materialised yet: answered as gaps until the job fills them.
    assert series[-20]["samples"] == 0

    # The online_daily job fills every series in bounded runs.
    runs = 0
    while True:
        outcome = await service.materialise_days(budget=400, pause=0)
        runs += 1
        if "left" not in outcome:
            break
        assert runs < 20
    print(f"\nonline_daily job: {runs} runs, last: {outcome}")
    docs = await store.online.daily_docs.count_documents({"_id": {"$regex": "^wot:eu:"}})
    assert docs == 399  # every finished day of the last 400, gaps included
    gap = await store.online.daily_docs.find_one({"_id": f"wot:eu:{GAP_DAY.isoformat()}"})
    assert gap["samples"] == 0

    # A fresh process (no in-process caches): only today is aggregated, the gap day never again.
    fresh = OnlineService(store, upstream=None, clock=clock)
    calls.clear()
    everything = await fresh.history("wot", "all", 400)
    assert calls == {"daily_range": 1, "aggregate_day": 1}
    by_date = {day["date"]: day for day in everything["series"]}
    assert by_date[GAP_DAY.isoformat()]["samples"] == 0 and by_date[GAP_DAY.isoformat()]["peak"] is None
    yesterday = by_date[(NOW.date() - DAY).isoformat()]
    assert yesterday["samples"] == 4 and yesterday["peak"] == 3 * (100 + 18 + 50 + (398 % 7))
    # Cached for a minute: a second call reads nothing.
    calls.clear()
    assert await fresh.history("wot", "all", 400) == everything
    assert calls == {}


@pytest.mark.gen_test(timeout=120)
async def test_concurrent_distinct_long_histories_share_one_series_read(store):
    """64 cold requests for 64 different day counts (no answer cache can merge them) read the
    series' materialised days once between them, and each answers every day of its window."""
    await seed_year(store)
    clock = Clock(NOW.timestamp())
    service = OnlineService(store, upstream=None, clock=clock)
    await service.materialise_days(budget=30, pause=0)  # the newest 30 days materialised, the rest not yet
    calls: dict = {}
    counting(store.online, "daily_range", calls)
    counting(store.online, "aggregate_day", calls)

    answers = await asyncio.gather(*(service.history("wot", "eu", 400 - i) for i in range(64)))
    assert calls["daily_range"] == 1
    assert calls["aggregate_day"] <= INLINE_DAYS + 1  # + today; shared between every request
    for i, answer in enumerate(answers):
        series = answer["series"]
        assert len(series) == 400 - i and series[-1]["date"] == NOW.date().isoformat()
        assert series[-2]["samples"] == 4  # yesterday, materialised by the job
    # Within the refresh interval another long history reads nothing more; the job's new days
    # show at once in this process.
    for _ in range(20):
        if "left" not in await service.materialise_days(budget=400, pause=0):
            break
    calls.clear()
    again = await service.history("wot", "eu", 300)
    assert "daily_range" not in calls
    assert sum(day["samples"] > 0 for day in again["series"]) == 299  # every day but the gap day


@pytest.mark.gen_test(timeout=60)
async def test_a_full_gate_is_a_fast_503_never_a_queue(store):
    from server.contract.errors import APIError

    clock = Clock(NOW.timestamp())
    service = OnlineService(store, upstream=None, clock=clock)
    store.heavy.active = store.heavy.limit  # every heavy slot taken
    started = time.perf_counter()
    with pytest.raises(APIError) as caught:
        await service.history("wot", "eu", 30)
    elapsed = time.perf_counter() - started
    print(f"\nover the cap: 503 in {elapsed * 1000:.1f} ms")
    assert caught.value.status_code == 503 and caught.value.code == "database_unavailable"
    assert caught.value.headers["Retry-After"] == "2"
    assert store.heavy.refused == 1
    store.heavy.active = 0
    assert len((await service.history("wot", "eu", 30))["series"]) == 30


# --- over HTTP --------------------------------------------------------------------------


async def fetch(http_client, base_url, path, timeout=30):
    started = time.perf_counter()
    response = await http_client.fetch(HTTPRequest(base_url + path, request_timeout=timeout), raise_error=False)
    return response, time.perf_counter() - started


@pytest.mark.gen_test(timeout=180)
async def test_concurrent_cold_history_leaves_other_endpoints_answering(app, http_client, base_url):
    services, store = app.settings["services"], app.settings["store"]
    services.online.clock = Clock(NOW.timestamp())
    count = await seed_year(store)
    original = store.online.aggregate_day

    async def slow_aggregate(*args):
        await asyncio.sleep(0.2)  # a heavy day, so requests overlap for certain
        return await original(*args)

    store.online.aggregate_day = slow_aggregate
    # 24 cold requests (the per-client limit is 30 a minute): 4 regions × 3 day counts, 2 copies
    # of each (single-flight shares them).
    paths = [
        f"/api/v1/online/history?game=wot&region={region}&days={days}"
        for region in ("eu", "na", "asia", "all")
        for days in (400, 399, 398)
    ] * 2
    history = [asyncio.ensure_future(fetch(http_client, base_url, path)) for path in paths]
    await asyncio.sleep(0.05)
    others = await asyncio.gather(
        *(
            fetch(http_client, base_url, path)
            for path in ("/api/v1/online", "/api/v1/", "/api/v1/status", "/api/v1/online") * 3
        )
    )
    results = await asyncio.gather(*history)
    statuses = [response.code for response, _ in results]
    print(
        f"\n{count} samples; history statuses {sorted(statuses)}; other endpoints "
        f"{[r.code for r, _ in others]}, slowest {max(t for _, t in others) * 1000:.0f} ms; "
        f"history slowest {max(t for _, t in results) * 1000:.0f} ms"
    )
    assert all(response.code == 200 for response, _ in others)
    assert set(statuses) <= {200, 503} and 200 in statuses
    for response, _ in results:
        if response.code == 503:
            body = ujson.loads(response.body)
            assert body["error"]["code"] == "database_unavailable"
            assert response.headers["Retry-After"] == "2"
    assert store.heavy.active == 0
    # At most the cap of heavy operations ran at once, each at most INLINE_DAYS + 1 aggregations.
    assert services.online.aggregations <= 12 * (INLINE_DAYS + 1)


@pytest.mark.gen_test(timeout=120)
async def test_a_hung_database_gives_503_within_the_deadline(io_loop):
    """SIGSTOP a dedicated SecantusDB child: requests in flight and new ones answer 503 in ~2 s."""
    from server.compose.embedded_db import EmbeddedDatabase

    database = EmbeddedDatabase(":memory:").start()
    stopped = False
    try:
        from server.compose.bootstrap import get_application
        from tests.helpers import make_config

        config = make_config(mongodb_uri=database.uri, db_name="hung")
        app, store, limiter, services = await get_application(config, database.uri)
        await store.players.save_snapshots(
            [
                {
                    "region": "eu",
                    "account_id": account,
                    "date": (NOW.date() - i * DAY).isoformat(),
                    "battles": 10 + i,
                    "wins": 5,
                    "damage_dealt": 100,
                    "frags": 1,
                    "spotted": 1,
                    "xp": 10,
                    "wn8": 1000.0,
                }
                for account in (1, 2, 3, 4)
                for i in range(3)
            ]
        )
        services.history.clock = lambda: NOW.timestamp()  # the history is built as of NOW
        server = __import__("tornado.httpserver", fromlist=["HTTPServer"]).HTTPServer(app)
        sock, port = __import__("tornado.testing", fromlist=["bind_unused_port"]).bind_unused_port()
        server.add_sockets([sock])
        client = AsyncHTTPClient()
        base = f"http://127.0.0.1:{port}"
        response, _ = await fetch(client, base, "/api/v1/player/1/eu/history")
        assert response.code == 200

        os.kill(database.process.pid, signal.SIGSTOP)
        stopped = True
        results = await asyncio.gather(*(fetch(client, base, f"/api/v1/player/{a}/eu/history") for a in (2, 3, 4)))
        later = [await fetch(client, base, "/api/v1/player/2/eu/history") for _ in range(2)]
        seconds = [round(t, 2) for _, t in results + later]
        print(f"\nSIGSTOP: statuses {[r.code for r, _ in results + later]}, seconds {seconds}")
        assert all(r.code == 503 for r, _ in results + later)
        assert max(seconds) < 5.0  # safety net; the promise (2.5 s) is measured and printed

        os.kill(database.process.pid, signal.SIGCONT)
        stopped = False
        for _ in range(60):
            response, _ = await fetch(client, base, "/api/v1/player/2/eu/history")
            if response.code == 200:
                break
            await asyncio.sleep(0.5)
        assert response.code == 200
        server.stop()
        store.client.close()
    finally:
        if stopped:
            os.kill(database.process.pid, signal.SIGCONT)
        database.stop()


@pytest.mark.gen_test(timeout=60)
async def test_inline_aggregation_stops_at_its_time_budget(store):
    """Aggregations that take long (a year of minute samples on the embedded database: ~0.8 s a
    day) are not chained past INLINE_BUDGET_SECONDS: the request answers with the rest as gaps."""
    from server.services.online import INLINE_BUDGET_SECONDS

    await seed_year(store, days=30)
    service = OnlineService(store, upstream=None, clock=Clock(NOW.timestamp()))
    real = store.online.aggregate_day
    calls = []

    async def slow_aggregate(game, region, date):
        calls.append(date)
        await asyncio.sleep(0.6 * INLINE_BUDGET_SECONDS)
        return await real(game, region, date)

    store.online.aggregate_day = slow_aggregate
    answer = await service.history("wot", "eu", 30)
    # today (always), then the newest missing day; the budget is spent before a third
    assert calls == [NOW.date(), NOW.date() - DAY], calls
    samples = [day["samples"] for day in answer["series"]]
    assert samples[-2:] == [4, 3] and samples[-3] == 0


@pytest.mark.gen_test(timeout=60)
async def test_a_read_that_never_returns_is_a_503_not_a_hang():
    """Motor's executor threads all blocked on a hung database: the read has not even started,
    so the driver's own clock has not either. The request still ends at its deadline."""
    from server.services.players import PlayerService
    from store.errors import is_database_error

    class HungPlayers:
        async def get(self, region, account_id):
            await asyncio.Event().wait()  # never returns

    class HungStore:
        players = HungPlayers()

    service = PlayerService(HungStore(), upstream=None, ratings_source=None, limiter=None)
    with pytest.raises(Exception) as raised:
        await asyncio.wait_for(service.profile("eu", 1, "client"), 10)  # 10 s: a hang fails the test
    assert is_database_error(raised.value), repr(raised.value)
