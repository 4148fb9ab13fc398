"""Player counts over a real database: the minute sampler, peaks, daily aggregates, gaps and the HTTP endpoints."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
import uuid

import pytest
import ujson
from tornado.httpclient import HTTPRequest

from server.jobs.runner import JobRunner
from server.services.online import GAMES, REGIONS, OnlineService, SamplingFailed
from server.upstream.client import UpstreamUnavailable


# Constructed samples lie in the future: TTL monitors (samples 410 days, claims 2 days, day
# peaks 8 days) can never remove them while a test runs.
def ts(text: str) -> int:
    """Unix seconds of an ISO UTC time such as "2030-05-01T10:00"."""
    return int(dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC).timestamp())


class Clock:
    def __init__(self, now: float):
        self.now = now

    def __call__(self) -> float:
        return self.now


SERVERS = {  # a small, known layout: one or two servers per game/region
    "wot": {"eu": ["EU1", "EU2"], "na": ["NA1"], "asia": ["ASIA1"]},
    "wotb": {"eu": ["EU1"], "na": ["NA1"], "asia": ["ASIA1"]},
    "wows": {"eu": ["EU1"], "na": ["NA1"], "asia": ["ASIA1"]},
}
SERVER_COUNT = sum(len(names) for regions in SERVERS.values() for names in regions.values())


class FakeUpstream:
    """servers_info answering set counts (default 7 per server), one call per region for every
    game as the real API does; a `failing` (game, region) is missing from the answer, and a
    region whose games all fail raises."""

    def __init__(self):
        self.counts: dict[tuple[str, str], list[int]] = {}
        self.failing: set[tuple[str, str]] = set()
        # A (game, region) that fails every request asking for it, whatever else it asks for
        # (as the real API's wgn/servers/info does when one game's source is down).
        self.poisoned: set[tuple[str, str]] = set()
        self.calls = 0
        self.requests: list[tuple[str, tuple[str, ...]]] = []

    async def servers_info(self, region: str, games=GAMES, caller: str = "other"):
        self.calls += 1
        self.requests.append((region, tuple(games)))
        await asyncio.sleep(0)
        if any((game, region) in self.poisoned for game in games):
            raise UpstreamUnavailable(
                f"GET /wot/{region}/wgn/servers/info/: SOURCE_NOT_AVAILABLE (1 attempt)",
                upstream_code=504,
                upstream_message="SOURCE_NOT_AVAILABLE",
            )
        if all((game, region) in self.failing for game in games):
            raise UpstreamUnavailable(f"GET /wot/{region}/wgn/servers/info/: HTTP 503 (3 attempts)")
        answer = {}
        for game in games:
            if (game, region) not in self.failing:
                names = SERVERS[game][region]
                counts = self.counts.get((game, region), [7] * len(names))
                answer[game] = [{"server": name, "players_online": count} for name, count in zip(names, counts)]
        return answer


def uncached(store, upstream, clock) -> OnlineService:
    """A service without its in-process answer caches, so every call reads the database."""
    return OnlineService(store, upstream, clock=clock, cache_seconds=0, history_cache_seconds=0)


@pytest.fixture
def store(io_loop, mongo_uri, db_name):
    from store import Store, create_client

    client = create_client(mongo_uri)
    store = Store(client, db_name, rate_collection_bytes=1 << 20)
    io_loop.run_sync(store.ensure_schema)
    yield store
    client.close()


async def samples_at(store, minute_ts: int) -> list[dict]:
    minute = dt.datetime.fromtimestamp(minute_ts, dt.UTC)
    return await store.online.samples.find({"minute": minute}, {"_id": 0}).to_list(None)


async def sample_at(service: OnlineService, clock: Clock, when: str) -> str:
    """Run the sampler for the minute of `when`, with the clock a few seconds into that minute."""
    clock.now = ts(when) + 5
    return await service.sample(ts(when) // 60)


# --- the sampler ---------------------------------------------------------------------------


@pytest.mark.gen_test(timeout=20)
async def test_schema_uses_a_time_series_collection(store):
    assert store.online.timeseries is True
    await store.online.ensure_schema()  # idempotent
    assert store.online.timeseries is True


@pytest.mark.gen_test(timeout=20)
async def test_plain_collection_fallback_tolerates_a_duplicate_minute(io_loop, mongo_uri, db_name):
    from store import create_client
    from store.online import OnlineSamples

    client = create_client(mongo_uri)
    try:
        await client[db_name].create_collection("online_samples")  # as left by a server without time series
        online = OnlineSamples(client[db_name])
        await online.ensure_schema()
        assert online.timeseries is False
        minute = ts("2030-05-01T10:00")
        rows = [{"server": "EU1", "players": 5}, {"server": "EU2", "players": 6}]
        assert await online.record_minute("wot", "eu", minute, rows, minute + 5) is True
        assert await online.record_minute("wot", "eu", minute, rows, minute + 6) is False
        await online.claims.delete_many({})  # even without the claim, the unique index holds
        assert await online.record_minute("wot", "eu", minute, rows, minute + 7) is True
        assert await online.samples.count_documents({}) == 2
    finally:
        client.close()


@pytest.mark.gen_test(timeout=20)
async def test_two_processes_store_one_sample_per_minute_per_server(store):
    clock = Clock(ts("2030-05-01T10:00") + 3)
    upstream = FakeUpstream()
    runners = []
    for owner in ("process-a", "process-b"):
        runner = JobRunner(store, clock=clock, owner=owner)
        runner.add("online_sampler", 60, uncached(store, upstream, clock).sample)
        runners.append(runner)
    slot = ts("2030-05-01T10:00") // 60

    # Both "processes" run the same slot at once (as after a leader change): one claims it.
    await asyncio.gather(*(runner._run_once(runner.jobs[0], slot) for runner in runners))
    rows = await samples_at(store, slot * 60)
    keys = [(r["meta"]["game"], r["meta"]["region"], r["meta"]["server"]) for r in rows]
    assert len(keys) == SERVER_COUNT == len(set(keys))
    assert upstream.calls == len(REGIONS)  # one request per region answers every game
    runs = await store.job_runs.all()
    assert runs["online_sampler"]["ok"] is True
    assert runs["online_sampler"]["message"] == f"{SERVER_COUNT} servers sampled in 9 game/regions"

    # Even without the job claim, sampling the same minute again stores nothing new.
    outcome = await uncached(store, upstream, clock).sample(slot)
    assert outcome == "0 servers sampled in 0 game/regions, 9 already stored for this minute"
    assert len(await samples_at(store, slot * 60)) == SERVER_COUNT

    # The next minute through the lease: only the leader runs it.
    clock.now += 60
    for runner in runners:
        await runner.run_due()
    assert [runner.is_leader for runner in runners] == [True, False]
    for runner in runners:
        await runner.stop()
    assert len(await samples_at(store, slot * 60 + 60)) == SERVER_COUNT
    assert await store.online.samples.count_documents({}) == 2 * SERVER_COUNT


@pytest.mark.gen_test(timeout=20)
async def test_failed_region_is_reported_and_never_stored_as_zero(store):
    clock = Clock(0)
    upstream = FakeUpstream()
    upstream.failing = {("wows", "asia")}
    service = uncached(store, upstream, clock)

    outcome = await sample_at(service, clock, "2030-05-01T10:00")
    assert outcome == f"{SERVER_COUNT - 1} servers sampled in 8 game/regions, 1 failed: wows/asia"
    rows = await samples_at(store, ts("2030-05-01T10:00"))
    assert len(rows) == SERVER_COUNT - 1
    assert not [r for r in rows if r["meta"]["game"] == "wows" and r["meta"]["region"] == "asia"]
    assert all(r["players"] == 7 for r in rows)
    status = await store.online.status.find_one({"_id": "wows:asia"})
    assert "no servers" in status["last_error"] and "minute" not in status  # missing from the answer

    current = await service.current()
    wows = current["games"]["wows"]
    assert wows["regions"]["asia"]["players"] is None
    assert wows["regions"]["asia"]["failing"] is True
    assert wows["regions"]["asia"]["last_failure"] == ts("2030-05-01T10:00") + 5
    assert wows["players"] == 14 and wows["complete"] is False
    # An incomplete total is no measured total: no game peak, but the regions have theirs.
    assert wows["peak"]["all_time"] is None
    assert wows["regions"]["eu"]["peak"]["all_time"]["players"] == 7
    history = await service.history("wows", "all", 1)
    assert history["series"][0]["samples"] == 0 and history["series"][0]["peak"] is None
    history = await service.history("wows", "eu", 1)
    assert history["series"][0]["samples"] == 1 and history["series"][0]["min"] == 7

    # The next minute succeeds: the region recovers.
    upstream.failing = set()
    clock.now += 60
    assert await sample_at(service, clock, "2030-05-01T10:01") == f"{SERVER_COUNT} servers sampled in 9 game/regions"
    wows = (await service.current())["games"]["wows"]
    assert wows["regions"]["asia"]["failing"] is False and wows["regions"]["asia"]["players"] == 7
    assert wows["complete"] is True and wows["players"] == 21


@pytest.mark.gen_test(timeout=20)
async def test_all_regions_failing_records_a_failed_job(store):
    clock = Clock(ts("2030-05-01T10:00") + 5)
    upstream = FakeUpstream()
    upstream.failing = {(g, r) for g in GAMES for r in REGIONS}
    service = uncached(store, upstream, clock)
    with pytest.raises(SamplingFailed):
        await service.sample(ts("2030-05-01T10:00") // 60)

    runner = JobRunner(store, clock=clock, owner="process-a")
    runner.add("online_sampler", 60, service.sample)
    await runner._run_once(runner.jobs[0], ts("2030-05-01T10:01") // 60)
    run = (await store.job_runs.all())["online_sampler"]
    assert run["ok"] is False
    assert "SamplingFailed: all 9 game/regions failed" in run["message"]
    assert await store.online.samples.count_documents({}) == 0
    assert await store.online.newest_timestamp() is None


@pytest.mark.gen_test(timeout=20)
async def test_a_game_failing_the_whole_request_is_asked_for_alone(store):
    clock = Clock(0)
    upstream = FakeUpstream()
    upstream.poisoned = {("wows", "na")}
    upstream.counts[("wot", "na")] = [11]
    service = uncached(store, upstream, clock)

    outcome = await sample_at(service, clock, "2030-05-01T10:00")
    # Only the game that failed is lost: wot and wotb of na are stored from their own requests.
    assert outcome == f"{SERVER_COUNT - 1} servers sampled in 8 game/regions, 1 failed: wows/na"
    assert sorted(upstream.requests) == sorted(
        [(region, GAMES) for region in REGIONS] + [("na", (game,)) for game in GAMES]
    )
    rows = await samples_at(store, ts("2030-05-01T10:00"))
    stored = {(r["meta"]["game"], r["meta"]["region"]): r["players"] for r in rows}
    assert ("wows", "na") not in stored and stored[("wot", "na")] == 11 and stored[("wotb", "na")] == 7
    status = await store.online.status.find_one({"_id": "wows:na"})
    assert "SOURCE_NOT_AVAILABLE" in status["last_error"]
    current = await service.current()
    assert current["games"]["wot"]["complete"] is True and current["games"]["wot"]["players"] == 7 + 7 + 11 + 7
    assert current["games"]["wows"]["regions"]["na"]["failing"] is True

    # Every game failing alone too: each is reported on its own, nothing is stored for the region.
    upstream.poisoned = {(game, "asia") for game in GAMES}
    upstream.requests.clear()
    outcome = await sample_at(service, clock, "2030-05-01T10:01")
    assert outcome.endswith("sampled in 6 game/regions, 3 failed: wot/asia, wotb/asia, wows/asia")
    assert len(upstream.requests) == len(REGIONS) + len(GAMES)

    # A realm that does not answer at all (no upstream error code: timeouts, connection errors)
    # is not asked three times more.
    upstream.poisoned = set()
    upstream.failing = {(game, "asia") for game in GAMES}
    upstream.requests.clear()
    outcome = await sample_at(service, clock, "2030-05-01T10:02")
    assert outcome.endswith("sampled in 6 game/regions, 3 failed: wot/asia, wotb/asia, wows/asia")
    assert upstream.requests == [(region, GAMES) for region in REGIONS]


# --- peaks and daily aggregates, hand-checked --------------------------------------------


async def build_wot_days(service: OnlineService, upstream: FakeUpstream, clock: Clock) -> None:
    """wot on 2030-05-01 (three minutes) and 2030-05-03 (two minutes, asia failing in the second)."""
    minutes = [
        # when,               eu servers,  na,   asia   -> total
        ("2030-05-01T10:00", [100, 50], [40], [20]),  # 210
        ("2030-05-01T10:01", [120, 60], [10], [10]),  # 200
        ("2030-05-01T10:02", [90, 40], [40], [60]),  # 230: the day's peak; na ties 10:00
        ("2030-05-03T11:00", [80, 20], [20], [30]),  # 150
        ("2030-05-03T11:01", [300, 0], [5], None),  # asia failed: no total for this minute
    ]
    for when, eu, na, asia in minutes:
        upstream.counts = {("wot", "eu"): eu, ("wot", "na"): na, ("wot", "asia"): asia or [0]}
        upstream.failing = set() if asia else {("wot", "asia")}
        await sample_at(service, clock, when)


@pytest.mark.gen_test(timeout=20)
async def test_current_counts_and_peaks_hand_checked(store):
    clock = Clock(0)
    upstream = FakeUpstream()
    service = uncached(store, upstream, clock)
    await build_wot_days(service, upstream, clock)
    clock.now = ts("2030-05-03T11:01") + 30

    current = await service.current()
    assert current["today"] == "2030-05-03"
    assert current["newest_sample"] == {
        "minute": "2030-05-03T11:01:00+00:00",
        "minute_unix": ts("2030-05-03T11:01"),
        "age_seconds": 30,
    }
    wot = current["games"]["wot"]
    eu, na, asia = (wot["regions"][r] for r in REGIONS)
    assert eu["players"] == 300 and eu["servers"] == [
        {"server": "EU1", "players": 300},
        {"server": "EU2", "players": 0},
    ]
    assert eu["minute"] == "2030-05-03T11:01:00+00:00" and eu["age_seconds"] == 30
    assert na["players"] == 5
    assert asia["players"] == 30 and asia["minute"] == "2030-05-03T11:00:00+00:00"
    assert asia["age_seconds"] == 90 and asia["failing"] is True
    assert wot["players"] == 335 and wot["complete"] is False
    assert wot["minute_unix"] == ts("2030-05-03T11:01")

    def peak(entry):
        return None if entry is None else (entry["players"], entry["minute"])

    assert peak(wot["peak"]["today"]) == (150, "2030-05-03T11:00:00+00:00")
    assert wot["peak"]["today"]["date"] == "2030-05-03"
    assert peak(wot["peak"]["all_time"]) == (230, "2030-05-01T10:02:00+00:00")
    assert peak(eu["peak"]["today"]) == (300, "2030-05-03T11:01:00+00:00")
    assert peak(eu["peak"]["all_time"]) == (300, "2030-05-03T11:01:00+00:00")
    assert peak(na["peak"]["all_time"]) == (40, "2030-05-01T10:02:00+00:00")  # a tie: the later minute
    assert peak(asia["peak"]["today"]) == (30, "2030-05-03T11:00:00+00:00")
    assert peak(asia["peak"]["all_time"]) == (60, "2030-05-01T10:02:00+00:00")
    assert current["games"]["wotb"]["players"] == 21
    assert await store.online.newest_timestamp() == ts("2030-05-03T11:01")

    # The next day starts without a today peak; the all-time peak stays.
    clock.now = ts("2030-05-04T00:00") + 10
    wot = (await service.current())["games"]["wot"]
    assert wot["peak"]["today"] is None
    assert peak(wot["peak"]["all_time"]) == (230, "2030-05-01T10:02:00+00:00")


@pytest.mark.gen_test(timeout=20)
async def test_daily_history_hand_checked_with_gaps(store):
    clock = Clock(0)
    upstream = FakeUpstream()
    service = uncached(store, upstream, clock)
    await build_wot_days(service, upstream, clock)
    clock.now = ts("2030-05-03T12:00")

    everything = await service.history("wot", "all", 4)
    assert (everything["game"], everything["region"], everything["days"]) == ("wot", "all", 4)
    assert (everything["from"], everything["to"]) == ("2030-04-30", "2030-05-03")
    gap = {"samples": 0, "peak": None, "peak_minute": None, "min": None, "avg": None}
    assert everything["series"] == [
        {"date": "2030-04-30", **gap},
        {
            "date": "2030-05-01",
            "samples": 3,
            "peak": 230,
            "peak_minute": "2030-05-01T10:02:00+00:00",
            "min": 200,
            "avg": 213.3,
        },
        {"date": "2030-05-02", **gap},
        # 11:01 had no asia sample, so it is not part of the all-regions total.
        {
            "date": "2030-05-03",
            "samples": 1,
            "peak": 150,
            "peak_minute": "2030-05-03T11:00:00+00:00",
            "min": 150,
            "avg": 150.0,
        },
    ]
    eu = await service.history("wot", "eu", 3)
    assert eu["series"] == [
        {
            "date": "2030-05-01",
            "samples": 3,
            "peak": 180,
            "peak_minute": "2030-05-01T10:01:00+00:00",
            "min": 130,
            "avg": 153.3,
        },
        {"date": "2030-05-02", **gap},
        {
            "date": "2030-05-03",
            "samples": 2,
            "peak": 300,
            "peak_minute": "2030-05-03T11:01:00+00:00",
            "min": 100,
            "avg": 200.0,
        },
    ]
    na = await service.history("wot", "na", 3)
    assert na["series"][0]["peak_minute"] == "2030-05-01T10:02:00+00:00"  # a tie: the later minute
    asia = await service.history("wot", "asia", 3)
    assert [d["samples"] for d in asia["series"]] == [3, 0, 1]

    # Finished days are materialised once, days without samples too (as gaps, samples 0), so a
    # gap is never aggregated again; today is always computed.
    daily = await store.online.daily_docs.find({}, {"_id": 1, "samples": 1}).to_list(None)
    assert {d["_id"] for d in daily} == {
        "wot:all:2030-05-01",
        "wot:eu:2030-05-01",
        "wot:na:2030-05-01",
        "wot:asia:2030-05-01",
        "wot:all:2030-04-30",
        "wot:all:2030-05-02",
        "wot:eu:2030-05-02",
        "wot:na:2030-05-02",
        "wot:asia:2030-05-02",
    }
    assert all(d["samples"] == 0 for d in daily if d["_id"].endswith(("04-30", "05-02")))
    assert await service.history("wot", "all", 4) == everything

    # Days before the first sample are gaps, never zero players.
    longest = await service.history("wows", "na", 400)
    assert len(longest["series"]) == 400
    assert longest["from"] == "2029-03-30"  # 399 days back
    assert all(day == {"date": day["date"], **gap} for day in longest["series"][:-3])
    assert [day["samples"] for day in longest["series"][-3:]] == [3, 0, 2]
    assert longest["series"][-3]["avg"] == 7.0
    assert await service.history("wows", "na", 400) == longest  # now partly from online_daily


# --- over HTTP, against the upstream simulator ----------------------------------------------


async def get_json(http_client, base_url, path):
    request = HTTPRequest(base_url + path, request_timeout=10)
    response = await http_client.fetch(request, raise_error=False)
    return response, ujson.loads(response.body)


@pytest.mark.gen_test(timeout=20)
async def test_online_endpoints_after_sampling_the_simulator(app, http_client, base_url):
    services = app.settings["services"]
    before, body = await get_json(http_client, base_url, "/api/v1/online")
    assert before.code == 200 and body["data"]["newest_sample"] is None
    assert body["data"]["games"]["wot"]["players"] is None

    slot = int(time.time() // 60)
    services.online.clock = Clock(slot * 60 + 5)  # one fixed instant: no day may end mid-test
    outcome = await services.online.sample(slot)  # real HTTP to the simulator
    assert outcome.endswith("sampled in 9 game/regions")

    response, body = await get_json(http_client, base_url, "/api/v1/online")
    assert response.code == 200 and body["success"] is True
    assert response.headers["Cache-Control"] == "public, max-age=60"
    data = body["data"]
    assert data["newest_sample"]["minute_unix"] == slot * 60
    assert set(data["games"]) == set(GAMES)
    for game in data["games"].values():
        assert game["complete"] is True and game["minute_unix"] == slot * 60
        assert game["players"] == sum(r["players"] for r in game["regions"].values()) > 0
        assert game["peak"]["today"]["players"] == game["peak"]["all_time"]["players"] == game["players"]
        for region in game["regions"].values():
            assert region["players"] == sum(s["players"] for s in region["servers"])
            assert region["failing"] is False
    assert [s["server"] for s in data["games"]["wot"]["regions"]["eu"]["servers"]] == ["EU1", "EU2", "EU3", "EU4"]

    response, body = await get_json(http_client, base_url, "/api/v1/online/history?game=wot&days=30")
    assert response.code == 200
    history = body["data"]
    assert (history["game"], history["region"], history["days"]) == ("wot", "all", 30)
    series = history["series"]
    assert len(series) == 30
    assert history["to"] == series[-1]["date"] and history["from"] == series[0]["date"]
    assert series[-1]["samples"] == 1 and series[-1]["peak"] == data["games"]["wot"]["players"]
    assert all(day["samples"] == 0 and day["peak"] is None for day in series[:-1])

    response, body = await get_json(http_client, base_url, "/api/v1/online/history?game=wotb&region=na")
    assert body["data"]["region"] == "na" and len(body["data"]["series"]) == 7  # default days
    assert body["data"]["series"][-1]["peak"] == data["games"]["wotb"]["regions"]["na"]["players"]
    response, body = await get_json(http_client, base_url, "/api/v1/online/history")
    assert (body["data"]["game"], body["data"]["region"], body["data"]["days"]) == ("wot", "all", 7)


INVALID = [
    ("game=lol", "invalid_game"),
    ("game=WOT", "invalid_game"),
    ("game=", "invalid_game"),
    ("game=wot&game=wot", "invalid_game"),
    ("region=ru", "invalid_region"),
    ("region=EU", "invalid_region"),
    ("region=", "invalid_region"),
    ("region=eu&region=na", "invalid_region"),
    ("days=0", "invalid_days"),
    ("days=401", "invalid_days"),
    ("days=-1", "invalid_days"),
    ("days=abc", "invalid_days"),
    ("days=1.5", "invalid_days"),
    ("days=", "invalid_days"),
    ("days=%EF%BC%95", "invalid_days"),  # a full-width digit
    ("days=7&days=7", "invalid_days"),
]


@pytest.mark.gen_test(timeout=20)
@pytest.mark.parametrize("query,code", INVALID)
async def test_online_history_validation_errors(app, http_client, base_url, query, code):
    response, body = await get_json(http_client, base_url, "/api/v1/online/history?" + query)
    assert response.code == 400
    assert body["success"] is False and "data" not in body
    assert body["error"]["code"] == code


def test_minutes_written_together_leave_what_one_at_a_time_does_and_twice_what_once_does(io_loop, mongo_uri):
    """Hypothesis: any minutes (repeats, failed game/regions, any counts, any order), stored one
    at a time as the live sampler does and in chunks as the demo's seeding does, leave the same
    samples, claims, latest counts, first minutes and peaks; storing them all again changes nothing."""
    from types import SimpleNamespace

    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from server.services.online import SlotSample
    from store import create_client
    from store.online import OnlineSamples

    base = ts("2030-05-01T10:00") // 60
    pairs = [(game, region) for game in GAMES for region in REGIONS]
    rows = st.lists(st.integers(0, 50), min_size=1, max_size=2).map(
        lambda counts: [{"server": f"S{i}", "players": c} for i, c in enumerate(counts)]
    )
    outcome = st.one_of(rows.map(lambda r: (r, None)), st.just((None, "timeout")))
    minute = st.builds(
        lambda slot, fetched: SlotSample(slot, dict(zip(pairs, fetched)), slot * 60 + 5.0),
        st.integers(base, base + 3 * 1440),  # three days: day peaks and the all-time peak
        st.lists(outcome, min_size=len(pairs), max_size=len(pairs)),
    )

    def canonical(value):  # field order is not data: an update appends the fields it adds
        if isinstance(value, dict):
            return sorted((key, canonical(item)) for key, item in value.items())
        if isinstance(value, list):
            return [canonical(item) for item in value]
        return repr(value)

    async def services(client) -> list[OnlineService]:
        made = []
        for _ in range(2):
            online = OnlineSamples(client["t_" + uuid.uuid4().hex[:12]])
            await online.ensure_schema()
            made.append(OnlineService(SimpleNamespace(online=online), FakeUpstream()))
        return made

    client = create_client(mongo_uri)
    single, together = io_loop.run_sync(lambda: services(client), timeout=60)

    async def store_all(service: OnlineService, minutes: list, size: int) -> None:
        for start in range(0, len(minutes), size):
            try:
                await service.store_samples(minutes[start : start + size])
            except SamplingFailed:
                pass  # a minute whose every game/region failed: the others are written

    def collections(service: OnlineService) -> dict:
        online = service.store.online
        return {"samples": online.samples, "claims": online.claims, "status": online.status, "peaks": online.peak_docs}

    async def stored(service: OnlineService) -> dict:
        return {
            name: sorted(
                map(canonical, await collection.find({}, {"_id": 0} if name == "samples" else None).to_list(None))
            )
            for name, collection in collections(service).items()
        }

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(minutes=st.lists(minute, max_size=12), chunk=st.integers(1, 12))
    def check(minutes, chunk):
        async def run() -> None:
            for service in (single, together):
                for collection in collections(service).values():
                    await collection.delete_many({})
            await store_all(single, minutes, 1)
            await store_all(together, minutes, chunk)
            once = await stored(single)
            assert await stored(together) == once
            await store_all(together, minutes, chunk)
            assert await stored(together) == once

        io_loop.run_sync(run, timeout=120)

    try:
        check()
    finally:
        client.close()
