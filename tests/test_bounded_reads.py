"""Bounded reads over real HTTP: /history and /tanks builds are single-flight, gated and under one
deadline per request; tracked-account searches are gated, single-flight and cached per
(region, prefix) for a minute. Past the deadline or over a gate: 503 database_unavailable with
Retry-After.

Store methods are wrapped on the store instance to count calls and inject delays; assertions are
on counts and statuses, except the bounds the requirement itself states (a 503 within ~2 s)."""

from __future__ import annotations

import asyncio
import datetime as dt
import time

import pytest
import ujson
from tornado.httpclient import HTTPRequest

from server.domain.records import pack
from server.services import search as search_module
from server.services.search import PlayerSearch
from store.constants import TANK_COUNTERS
from store.tanks import TankRecords

REGION = "eu"
ACCOUNT = 500_000_777
ONE_DEADLINE_BOUND = 3.0  # "within ~2 s": the deadline is 1.8 s + 0.15 s; generous on a loaded machine


class Clock:
    def __init__(self, now: float):
        self.now = now

    def __call__(self) -> float:
        return self.now


def _day(today: str, before: int) -> str:
    return (dt.date.fromisoformat(today) - dt.timedelta(days=before)).isoformat()


def _today() -> str:
    return dt.datetime.now(dt.UTC).date().isoformat()


async def seed_account(store, account_id: int = ACCOUNT) -> None:
    """Snapshots and per-tank keyframes on three days ending today: /history and /tanks answer 200."""
    today = _today()
    days = [_day(today, 20), _day(today, 10), today]
    snapshots, records = [], []
    for i, day in enumerate(days):
        battles = 1000 + 100 * i
        snapshots.append(
            {
                "region": REGION,
                "account_id": account_id,
                "date": day,
                "taken_at": int(time.time()),
                "clan_id": None,
                **{field: battles if field == "battles" else battles // 2 for field in TANK_COUNTERS},
                "wn8": None,
                "wn7": None,
                "efficiency": None,
            }
        )
        state = {1: [battles if c == "battles" else battles // 2 for c in TANK_COUNTERS]}
        records.append(TankRecords.record(REGION, account_id, day, battles, pack(state), keyframe=True))
    await store.players.save_snapshots(snapshots)
    await store.tanks.save(records)


class Wrapped:
    """A store method replaced on its instance: counts calls, the most running at once, and
    sleeps `delay` seconds before calling through."""

    def __init__(self, owner, name: str, delay: float = 0.0):
        self.owner, self.name, self.delay = owner, name, delay
        self.original = getattr(owner, name)
        self.calls = 0
        self.active = 0
        self.most = 0
        setattr(owner, name, self)

    async def __call__(self, *args, **kwargs):
        self.calls += 1
        self.active += 1
        self.most = max(self.most, self.active)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            return await self.original(*args, **kwargs)
        finally:
            self.active -= 1


async def fetch(http_client, base_url, path):
    started = time.perf_counter()
    response = await http_client.fetch(HTTPRequest(base_url + path, request_timeout=30), raise_error=False)
    body = ujson.loads(response.body) if response.body else None
    return response, body, time.perf_counter() - started


def assert_busy_503(response, body) -> None:
    assert response.code == 503, body
    assert body["error"]["code"] == "database_unavailable"
    assert int(response.headers["Retry-After"]) >= 1
    assert response.headers["Cache-Control"] == "public, max-age=0, no-store"


# --- /history and /tanks ----------------------------------------------------------------


@pytest.mark.gen_test(timeout=120)
async def test_concurrent_identical_history_and_tanks_requests_share_one_read(app, http_client, base_url):
    store = app.settings["store"]
    await seed_account(store)
    timeline = Wrapped(store.tanks, "timeline_records", delay=0.3)  # so the requests overlap for certain
    snapshots = Wrapped(store.players, "snapshots_since")
    history = f"/api/v1/player/{ACCOUNT}/{REGION}/history?days=30"
    answers = await asyncio.gather(*(fetch(http_client, base_url, history) for _ in range(5)))
    assert [response.code for response, _, _ in answers] == [200] * 5, answers[0][1]
    assert len({ujson.dumps(body["data"]) for _, body, _ in answers}) == 1
    assert answers[0][1]["data"]["deltas"]["30d"]["period"]["battles"] == 200  # per-tank figures too
    assert timeline.calls == 1 and snapshots.calls == 1

    # Another `days` is another read; identical /tanks requests share one read of their own.
    tanks = f"/api/v1/player/{ACCOUNT}/{REGION}/tanks?days=30"
    answers = await asyncio.gather(
        fetch(http_client, base_url, f"/api/v1/player/{ACCOUNT}/{REGION}/history?days=7"),
        *(fetch(http_client, base_url, tanks) for _ in range(5)),
    )
    assert [response.code for response, _, _ in answers] == [200] * 6, [body for _, body, _ in answers]
    assert len({ujson.dumps(body["data"]) for _, body, _ in answers[1:]}) == 1
    assert answers[1][1]["data"]["tanks"][0]["tank_id"] == 1
    assert timeline.calls == 3  # history?days=7 once, /tanks once
    # Nothing is left behind: the next request reads again (once the replayed answer is gone: it
    # would be answered from the answer cache), and every slot is back.
    assert (await fetch(http_client, base_url, history))[0].code == 200
    assert timeline.calls == 3  # replayed
    app.settings["services"].answers.clear()
    assert (await fetch(http_client, base_url, history))[0].code == 200
    assert timeline.calls == 4
    assert store.history_reads.active == 0


@pytest.mark.gen_test(timeout=120)
async def test_a_slow_history_is_503_with_retry_after_at_one_deadline_not_two(app, http_client, base_url):
    """Each read alone is within 1.8 s, both together are not: before, each had its own deadline
    (up to 3.9 s and a 200); now the request's one deadline ends it in ~2 s."""
    store = app.settings["store"]
    await seed_account(store)
    assert (await fetch(http_client, base_url, f"/api/v1/player/{ACCOUNT}/{REGION}/history?days=30"))[0].code == 200
    Wrapped(store.players, "snapshots_since", delay=1.2)
    Wrapped(store.tanks, "timeline_records", delay=1.2)
    response, body, elapsed = await fetch(http_client, base_url, f"/api/v1/player/{ACCOUNT}/{REGION}/history?days=90")
    print(f"\nslow /history: {response.code} in {elapsed:.2f} s")
    assert_busy_503(response, body)
    assert elapsed < ONE_DEADLINE_BOUND

    # A read that never ends is cut at the same deadline.
    Wrapped(store.tanks, "timeline_records", delay=30)
    response, body, elapsed = await fetch(http_client, base_url, f"/api/v1/player/{ACCOUNT}/{REGION}/history?days=60")
    assert_busy_503(response, body)
    assert elapsed < ONE_DEADLINE_BOUND


@pytest.mark.gen_test(timeout=120)
async def test_a_slow_tanks_is_503_with_retry_after_at_one_deadline(app, http_client, base_url):
    store = app.settings["store"]
    await seed_account(store)
    assert (await fetch(http_client, base_url, f"/api/v1/player/{ACCOUNT}/{REGION}/tanks?days=30"))[0].code == 200
    Wrapped(store.tracked, "last_measured_day", delay=1.2)
    Wrapped(store.tanks, "timeline_records", delay=1.2)
    response, body, elapsed = await fetch(http_client, base_url, f"/api/v1/player/{ACCOUNT}/{REGION}/tanks?days=90")
    print(f"\nslow /tanks: {response.code} in {elapsed:.2f} s")
    assert_busy_503(response, body)
    assert elapsed < ONE_DEADLINE_BOUND


@pytest.mark.gen_test(timeout=120)
async def test_the_gate_bounds_concurrent_history_and_tanks_builds(app, http_client, base_url):
    store = app.settings["store"]
    await seed_account(store)
    store.history_reads.limit = 2
    timeline = Wrapped(store.tanks, "timeline_records", delay=1.0)
    # Six distinct builds at once (different days: no single-flight between them).
    paths = [f"/api/v1/player/{ACCOUNT}/{REGION}/history?days={days}" for days in (7, 8, 9)] + [
        f"/api/v1/player/{ACCOUNT}/{REGION}/tanks?days={days}" for days in (7, 8, 9)
    ]
    answers = await asyncio.gather(*(fetch(http_client, base_url, path) for path in paths))
    statuses = sorted(response.code for response, _, _ in answers)
    print(f"\ngate of 2, six builds: {statuses}")
    assert timeline.most <= 2
    assert set(statuses) <= {200, 503} and statuses.count(200) >= 1 and statuses.count(503) >= 1
    for response, body, elapsed in answers:
        if response.code == 503:
            assert_busy_503(response, body)
            assert response.headers["Retry-After"] == "2"
            assert elapsed < ONE_DEADLINE_BOUND
    assert store.history_reads.refused == statuses.count(503)
    assert store.history_reads.active == 0


# --- /players?search= -------------------------------------------------------------------


async def track(store, names: dict[int, str]) -> None:
    now = time.time()
    for account_id, nickname in names.items():
        await store.tracked.track(REGION, account_id, nickname, now + 86400, now)


@pytest.mark.gen_test(timeout=120)
async def test_tracked_search_is_cached_per_region_and_prefix_for_a_minute(app, http_client, base_url):
    store, services = app.settings["store"], app.settings["services"]
    await track(store, {500_000_101: "TigerKa1", 500_000_102: "tiger_bo", 500_000_103: "Wolfram"})
    clock = services.search.clock = Clock(time.time())
    reads = Wrapped(store.tracked, "search_prefix")

    async def search(text, region=REGION):
        query = f"search={text}" + (f"&region={region}" if region else "")
        response, body, _ = await fetch(http_client, base_url, f"/api/v1/players?{query}")
        assert response.code == 200, body
        assert body["data"]["source"] == "tracked"
        return [row["account_id"] for row in body["data"]["results"]]

    assert await search("tig") == [500_000_102, 500_000_101]
    assert reads.calls == 1
    clock.now += 59  # within the minute: no store read, whatever the case of the text
    assert await search("TIG") == [500_000_102, 500_000_101]
    assert reads.calls == 1
    assert await search("wol") == [500_000_103]  # another prefix is another read
    assert reads.calls == 2
    clock.now += 2  # past the minute: read again
    assert await search("tig") == [500_000_102, 500_000_101]
    assert reads.calls == 3
    # Without a region: eu is cached, the other two regions are read (one query each).
    assert await search("tig", region=None) == [500_000_102, 500_000_101]
    assert reads.calls == 5
    assert await search("tig", region=None) == [500_000_102, 500_000_101]
    assert reads.calls == 5


@pytest.mark.gen_test(timeout=120)
async def test_concurrent_identical_searches_share_one_read_and_the_gate_bounds_them(app, http_client, base_url):
    store, services = app.settings["store"], app.settings["services"]
    await track(store, {500_000_201: "alpha_one", 500_000_202: "bravo_two", 500_000_203: "charlie3"})
    reads = Wrapped(store.tracked, "search_prefix", delay=0.5)
    answers = await asyncio.gather(
        *(fetch(http_client, base_url, f"/api/v1/players?search=alp&region={REGION}") for _ in range(5))
    )
    assert [response.code for response, _, _ in answers] == [200] * 5
    assert reads.calls == 1

    services.search.gate.limit = 1
    answers = await asyncio.gather(
        *(fetch(http_client, base_url, f"/api/v1/players?search={text}&region={REGION}") for text in ("bra", "cha"))
    )
    statuses = sorted(response.code for response, _, _ in answers)
    assert statuses == [200, 503] and reads.most == 1
    for response, body, _ in answers:
        if response.code == 503:
            assert_busy_503(response, body)
    assert services.search.gate.active == 0


@pytest.mark.gen_test(timeout=120)
async def test_a_slow_search_is_503_with_retry_after_within_the_deadline_and_not_cached(app, http_client, base_url):
    store = app.settings["store"]
    await track(store, {500_000_301: "delta_force"})
    reads = Wrapped(store.tracked, "search_prefix", delay=30)
    response, body, elapsed = await fetch(http_client, base_url, f"/api/v1/players?search=del&region={REGION}")
    assert_busy_503(response, body)
    assert elapsed < ONE_DEADLINE_BOUND
    reads.delay = 0
    response, body, _ = await fetch(http_client, base_url, f"/api/v1/players?search=del&region={REGION}")
    assert response.code == 200 and [row["account_id"] for row in body["data"]["results"]] == [500_000_301]
    assert reads.calls == 2


class FakeTracked:
    def __init__(self):
        self.calls = 0

    async def search_prefix(self, region, prefix, limit=10):
        self.calls += 1
        return [{"account_id": self.calls, "nickname": prefix + "x", "region": region}]


@pytest.mark.gen_test(timeout=30)
async def test_the_search_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(search_module, "TRACKED_CACHE_MAX", 3)
    tracked = FakeTracked()
    search = PlayerSearch(tracked, upstream=None, clock=Clock(1000.0))  # type: ignore[arg-type]
    for text in ("aaa", "bbb", "ccc", "ddd", "eee"):
        await search.search("eu", text, "1.2.3.4")
    assert len(search._tracked_cache) == 3
    assert set(search._tracked_cache) == {("eu", "ccc"), ("eu", "ddd"), ("eu", "eee")}  # the newest kept
    await search.search("eu", "eee", "1.2.3.4")
    assert tracked.calls == 5
