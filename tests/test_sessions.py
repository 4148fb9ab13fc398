"""Sessions: the battles since a moment, from the states the watcher captures, against the simulator's truth.

The watcher and the session service run over the app's database and the simulator, on a manual
clock the simulator follows (`_sim_now`): an account is watched before its evening's play, the
clock moves past it, and the session equals the simulator's own counters for those battles.
"""

from __future__ import annotations

import asyncio
import time

import pytest
import ujson
from tornado.httpclient import HTTPRequest

from scripts.upstream_sim.ids import EVENING_UTC_HOUR, existing_accounts
from scripts.upstream_sim.world import World
from server.compose.demo import TimeTravelUpstream
from server.contract.catalogue import WATCH_REFRESH_SECONDS, WATCHED_PER_CLIENT
from server.contract.errors import APIError
from server.domain.days import DAY_SECONDS, ManualClock, day_start, days_before, utc_day
from server.domain.records import pack, unpack
from server.domain.sessions import (
    NOT_AS_OLD,
    NOT_MEASURED,
    PLAYED_BEFORE_MEASURED,
    Stored,
    daily,
    next_round,
    session_span,
    since_moment,
)
from server.domain.visits import mastery_of, raw_tanks_of, tank_state
from server.services.sessions import SessionService, Watcher
from server.services.tracker import Tracker
from server.upstream.client import ACCOUNT_FIELDS, TANKS_FIELDS
from store.constants import TANK_COUNTERS
from store.retention import ensure_expiry_index
from tests.helpers import EXPECTED_VALUES_FILE, sim_async, xvm_wn8

REGION = "eu"


@pytest.fixture
def app(app, io_loop):
    """The application, its watched states kept without the database's expiry: these tests watch on
    a clock a day or two behind the database's, so a state's expiry (a day after its watch) is
    already past and the database's expiry pass could delete a state between two steps of a test."""
    store = app.settings["store"]
    io_loop.run_sync(lambda: ensure_expiry_index(store.watched.collection, "expires_at", 0, ttl=False))
    return app


@pytest.fixture(scope="module")
def world():
    return World(expected_values=EXPECTED_VALUES_FILE, profile_cache=1_000)


def truth(world, account_id: int, at: float) -> dict[int, dict[str, int]]:
    tanks = world.tanks_stats(REGION, account_id, int(at), None) or []
    return {t["tank_id"]: {c: t["all"][c] for c in TANK_COUNTERS} for t in tanks if t["all"]["battles"]}


def played_evening(world, count: int) -> tuple[list[int], float, float]:
    """`count` accounts that played in yesterday's evening window, and a time before it and after it."""
    day = days_before(utc_day(time.time()), 1)
    before = day_start(day) + EVENING_UTC_HOUR[REGION] * 3600 - 60
    after = day_start(day) + DAY_SECONDS - 60
    found = []
    for account_id in existing_accounts(REGION, 400, start=500_100_000):
        battles = [sum(c["battles"] for c in truth(world, account_id, at).values()) for at in (before, after)]
        if battles[1] > battles[0] > 0:
            found.append(account_id)
            if len(found) == count:
                break
    assert len(found) == count
    return found, before, after


def test_since_is_today_or_a_time_within_the_records_kept():
    now = 1_764_000_000.0
    assert since_moment("today", now, now - 400 * DAY_SECONDS) == now - now % DAY_SECONDS
    assert since_moment(str(int(now) - 3600), now, now - 400 * DAY_SECONDS) == now - 3600
    assert since_moment(str(int(now) + 1), now, now - 400 * DAY_SECONDS) == "since is in the future"
    assert since_moment("1", now, now - 400 * DAY_SECONDS) == "since is older than the records kept"


def battles_state(n: int) -> dict[int, list[int]]:
    return {1: [n] + [0] * (len(TANK_COUNTERS) - 1)}


def test_a_session_starts_at_the_newest_state_at_or_before_since_and_ends_at_the_most_battles():
    state, more = battles_state(10), battles_state(15)
    yesterday = daily("2026-11-26", state, None)  # taken at the latest at the day's end
    today = daily("2026-11-27", more, None)
    played = day_start("2026-11-27") + 600  # the account's last battle before the capture
    capture = Stored(day_start("2026-11-27") + 3600, "watch", None, state, lbt=played)
    since = day_start("2026-11-27") + 1800
    # The capture is the state at since (its last battle was before since) and has as many battles
    # as yesterday's record: the account did not play between them, so the older one is the start.
    span = session_span([today, capture, yesterday], since)
    assert (span.start, span.end, span.reason) == (yesterday, today, None)
    # A capture at since is the newest state at or before it.
    span = session_span([today, capture, yesterday], day_start("2026-11-27") + 3600)
    assert (span.start, span.end, span.exact) == (capture, today, True)
    # No state that old: the session starts at the oldest one (later than since), and says why.
    span = session_span([today, capture], day_start("2026-11-27") + 300)
    assert (span.start, span.end, span.reason) == (capture, today, NOT_AS_OLD)
    assert session_span([], since) is None


def test_battles_played_after_the_last_measurement_and_before_since_are_never_counted():
    midnight = day_start("2026-11-27")
    record = daily("2026-11-26", battles_state(100), None)  # the tracker's record: counts as taken at midnight
    since = midnight + 12 * 3600  # the stream begins at noon; 64 battles were played in the morning
    # Not measured since since: the midnight record is the start, and the answer says it may count the morning.
    span = session_span([record], since)
    assert (span.start, span.reason, span.measurable) == (record, NOT_MEASURED, True)
    # The watch's first measurement, seconds after since, whose last battle was before since: that is
    # the state at since, and the session starts there (0 battles), not at midnight (64).
    first = Stored(since + 5, "watch", None, battles_state(164), lbt=since - 120, slot="first")
    span = session_span([record, first], since)
    assert (span.start, span.end, span.exact) == (first, first, True)
    # 47 battles later the session counts those 47, from the same start.
    newest = Stored(since + 3600, "watch", None, battles_state(211), lbt=since + 3500, slot="latest")
    span = session_span([record, first, newest], since)
    assert (span.start, span.end, span.exact) == (first, newest, True)
    assert sessions_battles(span) == 47
    # Measured only once the account had played after since: the older start, with why, and no
    # measurement now can find the state at since any more.
    span = session_span([record, newest], since)
    assert (span.start, span.reason, span.measurable) == (record, PLAYED_BEFORE_MEASURED, False)
    # A capture measured before since but seen unchanged after it (a round's account/info) is the state at since.
    seen = Stored(since - 600, "watch", None, battles_state(164), lbt=since - 700, checked=since + 40, slot="latest")
    span = session_span([record, seen, newest], since)
    assert (span.start, span.exact) == (seen, True)


def sessions_battles(span) -> int:
    return sum(row[0] for row in span.end.state.values()) - sum(row[0] for row in span.start.state.values())


@pytest.mark.gen_test(timeout=120)
async def test_a_watched_accounts_session_equals_the_simulators_battles(app, world, upstream_sim):
    store, services = app.settings["store"], app.settings["services"]
    (account_id,), before, after = played_evening(world, 1)
    clock = ManualClock(before)
    upstream = TimeTravelUpstream(services.upstream, clock)
    watcher = Watcher(store, upstream, clock=clock)
    sessions = SessionService(store, services.ratings_source, services.players, clock=clock)

    await store.watched.watch(REGION, account_id, after + 900, before)
    assert await watcher.tick(REGION) == 1  # the state when first watched
    clock.set(before + WATCH_REFRESH_SECONDS - 1)
    assert await watcher.tick(REGION) == 0  # not due again within a minute, whoever asks
    clock.set(after)
    assert await watcher.tick(REGION) == 1  # played since: tanks/stats again

    session = await sessions.session(REGION, account_id, str(int(before)), "client-a")
    start, end = truth(world, account_id, before), truth(world, account_id, after)
    assert (session["from"], session["from_source"], session["as_of"], session["as_of_source"]) == (
        int(before),
        "watch",
        int(after),
        "watch",
    )
    assert session["watching"] is True and session["watching_until"] >= int(after)
    played = {t: c for t, c in end.items() if c["battles"] > start.get(t, {}).get("battles", 0)}
    assert session["battles"] == sum(c["battles"] - start.get(t, {}).get("battles", 0) for t, c in played.items())
    assert session["wins"] == sum(c["wins"] - start.get(t, {}).get("wins", 0) for t, c in played.items())
    assert {row["tank_id"]: row["period"]["battles"] for row in session["tanks"]} == {
        t: c["battles"] - start.get(t, {}).get("battles", 0) for t, c in played.items()
    }
    for row in session["tanks"]:
        mine = played[row["tank_id"]]
        assert row["period"]["damage_dealt"] == mine["damage_dealt"] - start.get(row["tank_id"], {}).get(
            "damage_dealt", 0
        )
    # The table the service rates with: the simulator's maintained (wg/) one.
    rows = (await sim_async(upstream_sim, "/json/wg/wn8exp.json"))["data"]
    assert session["wn8"] == pytest.approx(xvm_wn8(start, end, {int(r["IDNum"]): r for r in rows}), abs=0.01)


def played_before_and_after(world) -> tuple[int, float, float, float]:
    """An account that played in the evening window of the day before yesterday (between `before`
    and `since`, that day's last minute) and of yesterday (before `after`, yesterday's last minute):
    (account_id, before, since, after). The simulator's accounts play their day's battles at once."""
    yesterday = days_before(utc_day(time.time()), 1)
    day = days_before(yesterday, 1)
    before = day_start(day) + EVENING_UTC_HOUR[REGION] * 3600 - 60
    since, after = day_start(day) + DAY_SECONDS - 60, day_start(yesterday) + DAY_SECONDS - 60
    for account_id in existing_accounts(REGION, 400, start=500_100_000):
        played = [
            world.account_info(REGION, account_id, at)["statistics"]["all"]["battles"] for at in (before, since, after)
        ]
        if 0 < played[0] < played[1] < played[2]:
            return account_id, before, since, after
    raise AssertionError("no account played both evenings")


@pytest.mark.gen_test(timeout=180)
async def test_a_session_counts_exactly_the_battles_after_since_when_the_account_played_just_before_it(
    app, http_client, base_url, world, upstream_sim
):
    """The account played after its last measurement and before `since`: the session, and the stream
    (the overlay's data), count exactly the battles after `since`, the simulator's account/info difference."""
    store, services = app.settings["store"], app.settings["services"]
    account_id, before, since, after = played_before_and_after(world)
    clock = ManualClock(before)
    upstream = TimeTravelUpstream(services.upstream, clock)
    watcher = Watcher(store, upstream, clock=clock)
    sessions = SessionService(store, services.ratings_source, services.players, clock=clock, watcher=watcher)
    # The last measurement: a short watch's capture at `before`; the account then plays.
    await store.watched.watch(REGION, account_id, before + 60, before)
    assert await watcher.tick(REGION) == 1

    def battles_at(at: float) -> int:
        return world.account_info(REGION, account_id, at)["statistics"]["all"]["battles"]

    clock.set(since)
    opened = await sessions.session(REGION, account_id, str(int(since)), "client-s")
    # Measured at the request: its last battle was before since, so that is the state at since.
    assert (opened["from"], opened["from_source"], opened["from_exact"], opened["from_reason"]) == (
        int(since),
        "watch",
        True,
        None,
    )
    assert opened["battles"] == 0 and opened["tanks"] == []
    # The account plays on; the watch (kept by the stream) captures the evening's end.
    await store.watched.watch(REGION, account_id, after + 900, since)
    clock.set(after)
    assert await watcher.tick(REGION) == 1
    later = await sessions.session(REGION, account_id, str(int(since)), "client-s")
    assert later["from"] == int(since) and later["from_exact"] is True and later["as_of"] == int(after)
    assert later["battles"] == battles_at(after) - battles_at(since) > 0
    start, end = truth(world, account_id, since), truth(world, account_id, after)
    assert {row["tank_id"]: row["period"]["battles"] for row in later["tanks"]} == {
        t: c["battles"] - start.get(t, {}).get("battles", 0)
        for t, c in end.items()
        if c["battles"] > start.get(t, {}).get("battles", 0)
    }
    # The stream (what the overlay shows) over HTTP: the same battles, though the capture at since
    # is no longer the newest (it was kept for the sessions starting from it).
    stream = Stream(http_client, f"{base_url}/api/v1/player/{account_id}/{REGION}/session/stream?since={int(since)}")
    pushed = ujson.loads((await stream.event(1, 60))["data"])
    assert (pushed["from"], pushed["from_exact"], pushed["battles"]) == (int(since), True, later["battles"])
    assert pushed["tanks"] == later["tanks"]
    services.close_streams()
    await asyncio.wait_for(stream.done, 30)


@pytest.mark.gen_test(timeout=180)
async def test_without_a_measurement_at_the_request_the_watchs_first_capture_becomes_the_start(app, world):
    """The issue's morning: 0 battles from the midnight record, said to be inexact; seconds later the
    watch's first capture (its last battle before since) is the start, and the morning is never counted."""
    store, services = app.settings["store"], app.settings["services"]
    account_id, before, since, after = played_before_and_after(world)
    clock = ManualClock(before)
    upstream = TimeTravelUpstream(services.upstream, clock)
    watcher = Watcher(store, upstream, clock=clock)
    sessions = SessionService(store, services.ratings_source, services.players, clock=clock)  # no watcher
    await store.watched.watch(REGION, account_id, before + 60, before)
    assert await watcher.tick(REGION) == 1
    clock.set(since)
    first = await sessions.session(REGION, account_id, str(int(since)), "client-t")
    assert (first["from"], first["from_exact"], first["from_reason"]) == (int(before), False, NOT_MEASURED)
    clock.set(since + 5)
    assert await watcher.tick(REGION) == 1  # the watch's first round: played since `before`
    await store.watched.watch(REGION, account_id, after + 900, since)  # a stream keeps it watched
    clock.set(after)
    assert await watcher.tick(REGION) == 1
    later = await sessions.session(REGION, account_id, str(int(since)), "client-t")
    assert (later["from"], later["from_exact"]) == (int(since) + 5, True)
    battles = world.account_info(REGION, account_id, after)["statistics"]["all"]["battles"]
    assert later["battles"] == battles - world.account_info(REGION, account_id, since)["statistics"]["all"]["battles"]


@pytest.mark.gen_test(timeout=120)
async def test_a_client_watches_at_most_its_cap_and_the_rest_answer_from_stored_states(app, world):
    store, services = app.settings["store"], app.settings["services"]
    accounts, before, after = played_evening(world, WATCHED_PER_CLIENT + 1)
    clock = ManualClock(before)
    watcher = Watcher(store, TimeTravelUpstream(services.upstream, clock), clock=clock)
    sessions = SessionService(store, services.ratings_source, services.players, clock=clock)
    for account_id in accounts:
        await store.watched.watch(REGION, account_id, before + 60, before)
    assert await watcher.tick(REGION) == len(accounts)  # one account/info batch, then tanks/stats each
    answers = [await sessions.session(REGION, a, "today", "client-b") for a in accounts]
    assert [a["watching"] for a in answers] == [True] * WATCHED_PER_CLIENT + [False]
    # Another client may still watch it.
    assert (await sessions.session(REGION, accounts[-1], "today", "client-c"))["watching"] is True
    with pytest.raises(APIError) as refused:
        await sessions.session(REGION, accounts[0], str(int(before) + 10), "client-b")
    assert refused.value.code == "invalid_since"


@pytest.mark.gen_test(timeout=60)
async def test_bad_since_is_a_400_that_says_why(app, http_client, base_url):
    for since, says in (("tomorrow", "since must be"), ("99999999999", "since must be"), ("1", "older")):
        request = HTTPRequest(f"{base_url}/api/v1/player/500000001/eu/session?since={since}")
        response = await http_client.fetch(request, raise_error=False)
        body = ujson.loads(response.body)
        assert response.code == 400 and body["error"]["code"] == "invalid_since", body
        assert says in body["error"]["message"], body


@pytest.mark.gen_test(timeout=60)
async def test_the_first_session_of_an_account_the_service_holds_nothing_of_answers_from_its_live_lookup(
    app, http_client, base_url, upstream_sim, world
):
    # Its first per-tank record is written beside the lookup's answer: the session waits for it
    # rather than answer no_history to a caller who did everything right.
    account_id = existing_accounts(REGION, 1, start=500_800_000)[0]
    asked = (await sim_async(upstream_sim, "/_sim/stats"))["by_path"]
    response = await http_client.fetch(
        f"{base_url}/api/v1/player/{account_id}/{REGION}/session?since=today", raise_error=False
    )
    assert response.code == 200, response.body
    session = ujson.loads(response.body)["data"]
    # The lookup's measurement is the watch's first capture and the session's start: the state at
    # since when the account's last battle was before it, else the oldest state (said so).
    assert (session["account_id"], session["from_source"], session["battles"]) == (account_id, "watch", 0)
    assert session["watching"] is True and session["tanks"] == []
    last_battle = world.account_info(REGION, account_id, time.time())["last_battle_time"]
    if last_battle <= session["since"]:
        assert session["from_exact"] is True and session["from_reason"] is None
    else:
        assert (session["from_exact"], session["from_reason"]) == (False, NOT_AS_OLD)
    # One live lookup: one account/info and one tanks/stats, nothing asked twice.
    now = (await sim_async(upstream_sim, "/_sim/stats"))["by_path"]
    assert {path: now.get(path, 0) - asked.get(path, 0) for path in ("wot/account/info", "wot/tanks/stats")} == {
        "wot/account/info": 1,
        "wot/tanks/stats": 1,
    }


@pytest.mark.gen_test(timeout=180)
async def test_the_trackers_visit_takes_a_watched_accounts_newest_capture_instead_of_asking_again(
    app, world, upstream_sim
):
    store, services = app.settings["store"], app.settings["services"]
    (account_id,), _, after = played_evening(world, 1)
    clock = ManualClock(after)
    upstream = TimeTravelUpstream(services.upstream, clock)
    await store.watched.watch(REGION, account_id, after + 900, after)
    assert await Watcher(store, upstream, clock=clock).tick(REGION) == 1
    # The capture is the tanks/stats answer it was taken from (the played tanks, as the tracker reads them).
    capture = (await store.watched.latest_of(REGION, [account_id]))[account_id]
    asked = await upstream.tanks_stats(REGION, account_id, fields=TANKS_FIELDS, caller="other")
    assert raw_tanks_of(capture) == sorted(
        (
            {"tank_id": t["tank_id"], "mark_of_mastery": t.get("mark_of_mastery") or 0, "all": t["all"]}
            | ({"max_xp": t["max_xp"]} if t.get("mark_of_mastery") or t.get("max_xp") else {})
            for t in asked
            if t["all"]["battles"]
        ),
        key=lambda t: t["tank_id"],
    )

    # The daily visit of a tracked account the watcher measured since its last battle: no tanks/stats.
    tracker = Tracker(store, upstream, services.ratings_source, clock=clock, owner="solo")
    await store.tracked.track(REGION, account_id, None, after + 30 * DAY_SECONDS, after)
    before_visit = (await sim_async(upstream_sim, "/_sim/stats"))["by_path"].get("wot/tanks/stats", 0)
    counts = await tracker.visit(utc_day(after), REGION, [await store.tracked.get(REGION, account_id)])
    assert counts["visited"] == 1 and counts["tanks_requests"] == 0
    assert (await sim_async(upstream_sim, "/_sim/stats"))["by_path"].get("wot/tanks/stats", 0) == before_visit
    state = unpack((await store.tracked.states([f"{REGION}:{account_id}"]))[f"{REGION}:{account_id}"])
    assert state == tank_state(asked)  # the state stored is the upstream's


@pytest.mark.gen_test(timeout=120)
async def test_a_watch_begun_after_a_measurement_its_last_battle_has_not_moved_since_costs_no_tanks_stats(
    app, world, upstream_sim
):
    store, services = app.settings["store"], app.settings["services"]
    (account_id,), before, after = played_evening(world, 1)
    clock = ManualClock(before)
    upstream = TimeTravelUpstream(services.upstream, clock)
    # A live lookup's measurement (the tracker adopts the account), then a session watches it.
    info = (await upstream.account_info(REGION, [account_id], fields=ACCOUNT_FIELDS, caller="live"))[account_id]
    raw = await upstream.tanks_stats(REGION, account_id, fields=TANKS_FIELDS, caller="live")
    await Tracker(store, upstream, services.ratings_source, clock=clock, owner="solo").adopt(
        REGION, account_id, info, raw, before
    )
    await store.watched.watch(REGION, account_id, after + 900, before)
    watcher = Watcher(store, upstream, clock=clock)

    async def asked() -> dict[str, int]:
        by_path = (await sim_async(upstream_sim, "/_sim/stats"))["by_path"]
        return {path: by_path.get(path, 0) for path in ("wot/account/info", "wot/tanks/stats")}

    first = await asked()
    assert await watcher.tick(REGION) == 1
    assert await asked() == {
        "wot/account/info": first["wot/account/info"] + 1,
        "wot/tanks/stats": first["wot/tanks/stats"],
    }
    capture = (await store.watched.latest_of(REGION, [account_id]))[account_id]
    assert unpack(capture["s"]) == tank_state(raw) and capture["lbt"] == info["last_battle_time"]
    assert raw_tanks_of(capture) == raw_tanks_of({"s": pack(tank_state(raw)), "m": mastery_of(raw)})
    # Once the account has played, the watcher asks tanks/stats as before.
    clock.set(after)
    second = await asked()
    assert await watcher.tick(REGION) == 1
    assert await asked() == {
        "wot/account/info": second["wot/account/info"] + 1,
        "wot/tanks/stats": second["wot/tanks/stats"] + 1,
    }


class Stream:
    """A session stream read over real HTTP: its events as they arrive."""

    def __init__(self, http_client, url: str, headers: dict | None = None):
        self.events: list[dict] = []
        self.comments = 0
        self._buffer = ""
        self.arrived = asyncio.Event()
        request = HTTPRequest(url, headers=headers or {}, streaming_callback=self._chunk, request_timeout=120)
        self.done = asyncio.ensure_future(http_client.fetch(request, raise_error=False))

    def _chunk(self, data: bytes) -> None:
        self._buffer += data.decode()
        while "\n\n" in self._buffer:
            block, self._buffer = self._buffer.split("\n\n", 1)
            if block.startswith(":"):
                self.comments += 1
                continue
            fields = dict(line.split(": ", 1) for line in block.split("\n") if ": " in line)
            self.events.append(fields)
            self.arrived.set()

    async def event(self, n: int, timeout: float) -> dict:
        """The stream's n-th event (1-based), once it has arrived."""
        deadline = time.monotonic() + timeout
        while len(self.events) < n:
            self.arrived.clear()
            await asyncio.wait_for(self.arrived.wait(), max(0.0, deadline - time.monotonic()))
        return self.events[n - 1]


@pytest.mark.gen_test(timeout=180)
async def test_a_stream_pushes_each_new_state_resumes_and_ends_at_shutdown(app, http_client, base_url, world):
    store, services = app.settings["store"], app.settings["services"]
    (account_id,), before, after = played_evening(world, 1)
    clock = ManualClock(before)
    watcher = Watcher(store, TimeTravelUpstream(services.upstream, clock), clock=clock)
    await store.watched.watch(REGION, account_id, after + 900, before)
    assert await watcher.tick(REGION) == 1
    url = f"{base_url}/api/v1/player/{account_id}/{REGION}/session/stream?since={int(before)}"

    first = Stream(http_client, url)
    opened = await first.event(1, 30)
    assert opened["event"] == "session"
    assert ujson.loads(opened["data"])["battles"] == 0  # nothing played since the first capture yet
    # A reconnecting client that has the newest event gets no copy of it.
    resumed = Stream(http_client, url, headers={"Last-Event-ID": opened["id"]})
    # The account plays; the watcher captures it: both streams push the new session within seconds.
    clock.set(after)
    assert await watcher.tick(REGION) == 1
    started = time.monotonic()
    pushed = await first.event(2, 70)
    assert time.monotonic() - started < 70 and pushed["event"] == "session" and pushed["id"] != opened["id"]
    played = ujson.loads(pushed["data"])
    assert played["battles"] > 0 and played["as_of"] == int(after)
    again = await resumed.event(1, 70)
    assert again["id"] == pushed["id"] and [e["id"] for e in resumed.events] == [pushed["id"]]

    # Past the client's cap: a clear 429 in the JSON envelope, before any event.
    third = Stream(http_client, url)
    await third.event(1, 30)
    refused = await http_client.fetch(HTTPRequest(url, request_timeout=30), raise_error=False)
    assert refused.code == 429 and ujson.loads(refused.body)["error"]["code"] == "too_many_streams"

    # Shutdown: every stream says `end` and finishes.
    services.close_streams()
    for stream in (first, resumed, third):
        response = await asyncio.wait_for(stream.done, 30)
        assert response.code == 200 and stream.events[-1]["event"] == "end"


class NotPlaying:
    """An upstream whose accounts have not played since they were watched: account/info only."""

    def __init__(self) -> None:
        self.batches: list[int] = []
        self.asked: list[list[int]] = []

    async def account_info(self, region, ids, **kwargs):
        ids = list(ids)
        self.batches.append(len(ids))
        self.asked.append(ids)
        return {a: None for a in ids}

    async def tanks_stats(self, region, account_id, **kwargs):  # never reached: nobody moved
        raise AssertionError("tanks/stats asked of an account that did not play")


@pytest.mark.gen_test(timeout=60)
async def test_one_tick_measures_every_due_account_a_batch_of_100_at_a_time(store):
    now = 1_800_000_000.0
    for account_id in range(1, 251):
        await store.watched.watch(REGION, account_id, now + 900, now)
    upstream = NotPlaying()
    watcher = Watcher(store, upstream, clock=ManualClock(now))  # type: ignore[arg-type]
    assert await watcher.tick(REGION) == 0
    assert upstream.batches == [100, 100, 50]  # all 250 this minute, not 100 a minute
    assert await store.watched.claim_due(REGION, now, 100, now + 60) == []  # none left due


def test_a_refreshed_account_is_due_at_the_first_round_a_minute_later_give_or_take_a_tick():
    for refreshed in (1_800_000_000.0, 1_800_000_000.4, 1_800_000_004.9, 1_800_000_017.0, 1_800_000_059.9):
        due = next_round(refreshed, 60, 5)
        assert due % 60 == 0 and 55 <= due - refreshed < 115, (refreshed, due)
    assert next_round(1_800_000_003.0, 60, 5) == 1_800_000_060.0  # a round's tick, 3 s late: the next round


@pytest.mark.gen_test(timeout=60)
async def test_accounts_watched_at_any_moment_are_asked_together_once_a_round(store):
    start = 1_800_000_000.0  # a round's start
    upstream = NotPlaying()
    clock = ManualClock(start)
    watcher = Watcher(store, upstream, clock=clock)  # type: ignore[arg-type]
    refreshed: dict[int, list[float]] = {}
    for step in range(12 * 10):  # ten minutes of 5 s ticks; a new watch in each tick of the first minute
        now = start + 5 * step + 0.2
        clock.set(now)
        if step < 12:
            for account_id in (2 * step + 1, 2 * step + 2):
                await store.watched.watch(REGION, account_id, start + 3600, now)
        before = len(upstream.batches)
        await watcher.tick(REGION)
        for batch in upstream.asked[before:]:
            for account_id in batch:
                refreshed.setdefault(account_id, []).append(now)
    first_minute, rounds = upstream.batches[:12], upstream.batches[12:]
    assert first_minute == [2] * 12  # each new watch's first state at once
    # Then one request a round, not one for the few due at each tick: the first round holds the
    # accounts first measured at its start, and from the next one all 24 go together.
    assert rounds == [2] + [24] * 8
    for times in refreshed.values():
        gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
        assert all(55 <= gap < 120 for gap in gaps), gaps


class Versions:
    """The watched collection as the streams' poller reads it: a version per followed account."""

    def __init__(self, versions: dict[str, int]) -> None:
        self.current = versions
        self.watched = self

    async def versions(self, keys):
        return {key: self.current[key] for key in keys if key in self.current}

    async def extend(self, keys, until, now):
        return None


@pytest.mark.gen_test(timeout=60)
async def test_a_new_state_is_built_once_for_all_streams_of_its_account_and_wakes_no_other(monkeypatch):
    from server.services import sessions as module

    monkeypatch.setattr(module, "STREAM_POLL_SECONDS", 0.02)
    store = Versions({"eu:1": 1, "eu:2": 1})
    service = SessionService(store, None, None, clock=lambda: 1_800_000_000.0)  # type: ignore[arg-type]
    built: list[tuple[int, int]] = []  # (account, version) of every session built

    async def session(region, account_id, since, client):
        return {"since": 1_799_990_000, "as_of": 0, "battles": 0, "watching": True, "watching_until": 1}

    async def states(region, account_id, moment, now):
        version = store.current[f"eu:{account_id}"]
        built.append((account_id, version))
        await asyncio.sleep(0.01)  # every stream of the account has woken meanwhile
        return [version]

    async def build(region, account_id, moment, now, found, watching, until):
        return {"since": int(moment), "as_of": found[0], "battles": found[0], "watching": watching}

    monkeypatch.setattr(service, "session", session)
    monkeypatch.setattr(service, "_states", states)
    monkeypatch.setattr(service, "_built", build)

    streams = {
        account: [service.follow("eu", account, "today", f"c{i}", None) for i in range(50)] for account in (1, 2)
    }
    events: dict[int, list[str]] = {1: [], 2: []}

    async def read(account, stream):
        async for text in stream:
            if text.startswith("id:"):
                events[account].append(text.split("\n")[0])

    readers = [asyncio.ensure_future(read(a, s)) for a, group in streams.items() for s in group]
    await asyncio.sleep(0.3)  # opened; the poller has read both accounts' versions
    settled = list(built)
    assert sorted(set(settled)) == sorted(settled) and len(settled) <= 2  # once per account at most
    store.current["eu:1"] = 2  # account 1 plays a battle
    await asyncio.sleep(0.3)
    assert [b for b in built if b not in settled] == [(1, 2)]  # one build for its 50 streams, none for 2's
    assert events[1].count("id: 2-2") == 50 and not any("2-2" in e for e in events[2])
    service.close_streams()
    await asyncio.wait_for(asyncio.gather(*readers), 10)
    assert not service._changes and not service._rebuilds and not service._followed


def test_noting_a_start_and_keeping_a_state_twice_leave_what_once_leaves(io_loop, mongo_uri):
    """Random watches with session starts, captures and pins, each write done once in one database
    and twice in another: the watched documents are the same (a retried request or a second
    process's round writes nothing more), and at most SINCES starts and PINS states are kept."""
    import uuid

    from hypothesis import HealthCheck, settings
    from hypothesis import given as given_
    from hypothesis import strategies as st

    from store import create_client
    from store.sessions import PINS, SINCES, Watched

    moments = st.integers(min_value=1_000, max_value=1_100)
    steps = st.lists(
        st.one_of(
            st.tuples(st.just("watch"), moments),
            st.tuples(st.just("capture"), moments, st.integers(min_value=0, max_value=40)),
            st.tuples(st.just("pin"), moments, st.integers(min_value=0, max_value=40)),
            st.tuples(st.just("pin_latest"), moments),
        ),
        min_size=1,
        max_size=30,
    )

    @settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given_(script=steps)
    def check(script):
        async def run() -> None:
            client = create_client(mongo_uri)
            names = ["t_" + uuid.uuid4().hex[:12] for _ in range(2)]
            try:
                once, twice = (Watched(client[name], ttl_indexes=False) for name in names)
                for times, watched in ((1, once), (2, twice)):
                    for step in script:
                        for _ in range(times):
                            if step[0] == "watch":
                                await watched.watch(REGION, 7, 5_000, step[1], since=float(step[1]))
                            elif step[0] == "capture":
                                state = pack(battles_state(step[2]))
                                await watched.watch(REGION, 7, 5_000, step[1])
                                await watched.capture(REGION, 7, step[1], step[1] - step[2], state, None, step[1] + 60)
                            elif step[0] == "pin":
                                await watched.watch(REGION, 7, 5_000, step[1])
                                capture = {"at": step[1], "lbt": step[1] - step[2], "s": pack(battles_state(step[2]))}
                                await watched.pin(REGION, 7, {**capture, "assist": None, "checked": step[1]})
                            else:
                                await watched.pin_latest(REGION, 7)
                docs = [
                    await watched.collection.find_one({"_id": "eu:7"}, {"expires_at": 0}) for watched in (once, twice)
                ]
                for doc in docs:  # v counts the captures written: a stream's event id, not data
                    if doc is not None:
                        doc.pop("v", None)
                assert docs[0] == docs[1]
                if docs[0] is not None:
                    assert len(docs[0].get("sinces") or []) <= SINCES and len(docs[0].get("pins") or {}) <= PINS
            finally:
                for name in names:
                    await client.drop_database(name)
                client.close()

        io_loop.run_sync(run)

    check()
