"""Recents over HTTP on six weeks of real tracking: period ratings in /history, /tanks and /players."""

from __future__ import annotations

import datetime as dt

import pytest
import ujson
from tornado.httpclient import HTTPRequest

from scripts.upstream_sim.ids import existing_accounts, nickname
from scripts.upstream_sim.world import World
from server.contract.catalogue import CATALOGUE, PLAYER_SEARCH, SEARCH_RESULTS, TANKS
from server.domain.days import day_start, utc_day
from store.constants import TANK_COUNTERS
from tests.helpers import EXPECTED_VALUES_FILE, seed_tracking, sim_async, xvm_wn8

DAYS = 42  # of tracking, ending today
REGION = "eu"


@pytest.fixture(scope="module")
def world():
    return World(expected_values=EXPECTED_VALUES_FILE, profile_cache=10_000)


@pytest.fixture(scope="module")
def cast(world):
    """Tracked accounts: two grinders (hundreds of battles a week, so the last 1,000 battles are
    in reach), ordinary players, and one who quit for good (periods with no battles)."""
    candidates = existing_accounts(REGION, 400, start=500_400_000)
    grinders = [a for a in candidates if world.profile(REGION, a).grinder][:2]
    today = dt.date.today()
    quit_long_ago = [
        a
        for a in candidates
        if world.profile(REGION, a).quit_week is not None
        and not world.profile(REGION, a).grinder
        # quit before the tracking started: no battle in the whole window
        and _truth_battles(world, a, (today - dt.timedelta(days=DAYS + 1)).isoformat())
        == _truth_battles(world, a, today.isoformat())
        and _truth_battles(world, a, today.isoformat()) > 0
    ][:1]
    ordinary = [a for a in candidates if a not in grinders and a not in quit_long_ago][:4]
    assert len(grinders) == 2 and len(quit_long_ago) == 1
    return {"grinders": grinders, "quit": quit_long_ago[0], "ordinary": ordinary}


def _truth_battles(world, account_id, day):
    return sum(c["battles"] for c in _truth(world, account_id, day).values())


def _truth(world, account_id, day, now=None):
    """The simulator's per-tank career counters as the seeding pass saw them on `day`."""
    at = now if now is not None and day == utc_day(now) else day_start(day) + 86399
    tanks = world.tanks_stats(REGION, account_id, int(at), None) or []
    return {t["tank_id"]: {c: t["all"][c] for c in TANK_COUNTERS} for t in tanks if t["all"]["battles"]}


@pytest.fixture
def tracked(io_loop, app, fast_upstream_sim, cast):
    """The app's database after DAYS days of the tracker's pass over the cast."""
    ids = [*cast["grinders"], cast["quit"], *cast["ordinary"]]
    return seed_tracking(io_loop, app, fast_upstream_sim, {REGION: ids}, DAYS)


@pytest.fixture
def briefly_tracked(io_loop, app, fast_upstream_sim, cast):
    """The same cast after two days of the pass: tracked, with per-tank records (no long history)."""
    ids = [*cast["grinders"], cast["quit"], *cast["ordinary"]]
    return seed_tracking(io_loop, app, fast_upstream_sim, {REGION: ids}, 2)


async def get(http_client, base_url, path, headers=None):
    request = HTTPRequest(base_url + path, headers=headers or {})
    response = await http_client.fetch(request, raise_error=False)
    return response, (ujson.loads(response.body) if response.body else None)


async def _expected_table(upstream_sim):
    """The table the service rates with: the simulator's maintained (wg/) one."""
    rows = (await sim_async(upstream_sim, "/json/wg/wn8exp.json"))["data"]
    return {int(row["IDNum"]): row for row in rows}


@pytest.mark.gen_test(timeout=300)
async def test_history_periods_and_tanks_match_the_simulators_truth(
    http_client, base_url, tracked, cast, world, upstream_sim
):
    now = tracked
    table = await _expected_table(upstream_sim)
    grinder = cast["grinders"][0]
    response, body = await get(http_client, base_url, f"/api/v1/player/{grinder}/{REGION}/history?days=90")
    assert response.code == 200, body
    deltas = body["data"]["deltas"]
    for key in ("7d", "30d"):
        period = deltas[key]["period"]
        assert period is not None and period["battles"] > 0, key
        start, end = _truth(world, grinder, period["from"], now), _truth(world, grinder, period["to"], now)
        assert period["battles"] == sum(c["battles"] for c in end.values()) - sum(c["battles"] for c in start.values())
        assert period["wn8"] == pytest.approx(xvm_wn8(start, end, table), abs=0.01), key
        assert period["wn7"] is not None and period["efficiency"] is not None and period["average_tier"] > 0
    assert deltas["30d"]["wn8_change"] is not None  # the career WN8's movement is kept beside it

    recent = deltas["recent_1000"]
    assert recent is not None and recent["battles"] >= 1000
    end = _truth(world, grinder, recent["to"], now)
    start = _truth(world, grinder, recent["from"], now)
    assert recent["battles"] == sum(c["battles"] for c in end.values()) - sum(c["battles"] for c in start.values())
    # "From the newest record at least 1,000 battles back": the next record day would be under 1,000.
    total, baseline = sum(c["battles"] for c in end.values()), sum(c["battles"] for c in start.values())
    day = dt.date.fromisoformat(recent["from"])
    while _truth_battles(world, grinder, day.isoformat()) == baseline:
        day += dt.timedelta(days=1)  # the next day with battles holds the next record
    assert total - _truth_battles(world, grinder, day.isoformat()) < 1000
    assert recent["wn8"] == pytest.approx(xvm_wn8(start, end, table), abs=0.01)

    # Week by week over the same read: each week's WN8 the XVM way, its battles the truth's.
    for days in (90, 30):
        response, body = await get(http_client, base_url, f"/api/v1/player/{grinder}/{REGION}/history?days={days}")
        assert response.code == 200, body
        _check_weekly(world, grinder, body["data"], table, now)

    # /tanks over the same 30 days: the same period figures, every owned tank, the truth's counters.
    response, tanks = await get(http_client, base_url, f"/api/v1/player/{grinder}/{REGION}/tanks?days=30")
    assert response.code == 200, tanks
    data = tanks["data"]
    assert (data["from"], data["to"]) == (deltas["30d"]["period"]["from"], deltas["30d"]["period"]["to"])
    assert data["period"] == {key: deltas["30d"]["period"][key] for key in data["period"]}
    start, end = _truth(world, grinder, data["from"], now), _truth(world, grinder, data["to"], now)
    assert {row["tank_id"] for row in data["tanks"]} == set(end)
    order = [(-row["period"]["battles"], -row["career"]["battles"]) for row in data["tanks"]]
    assert order == sorted(order)
    for row in data["tanks"]:
        before = start.get(row["tank_id"], {})
        for counter in ("battles", "wins", "damage_dealt", "frags", "spotted", "xp", "survived_battles"):
            assert row["period"][counter] == end[row["tank_id"]][counter] - before.get(counter, 0), counter
        assert row["career"]["battles"] == end[row["tank_id"]]["battles"]
        if row["period"]["battles"] and row["tank_id"] in table:
            one = {row["tank_id"]: end[row["tank_id"]]}
            assert row["period"]["wn8"] == pytest.approx(
                xvm_wn8({row["tank_id"]: before} if before else {}, one, table), abs=0.01
            )
        assert row["name"] and row["tier"] in range(1, 11)

    # Cached like every endpoint: the catalogue's lifetime, an ETag that answers 304.
    response, _ = await get(http_client, base_url, f"/api/v1/player/{grinder}/{REGION}/tanks?days=30")
    assert f"max-age={TANKS.cache_max_age}" in response.headers["Cache-Control"]
    etag = response.headers["ETag"]
    response, _ = await get(
        http_client, base_url, f"/api/v1/player/{grinder}/{REGION}/tanks?days=30", {"If-None-Match": etag}
    )
    assert response.code == 304

    # A player who quit before the tracking began: periods of no battles say so.
    response, body = await get(http_client, base_url, f"/api/v1/player/{cast['quit']}/{REGION}/history?days=30")
    assert response.code == 200, body
    for key in ("7d", "30d"):
        period = body["data"]["deltas"][key]["period"]
        assert period["battles"] == 0 and period["wins"] == 0
        assert all(period[k] is None for k in ("win_rate", "avg_damage", "wn8", "wn7", "efficiency")), period
    assert body["data"]["deltas"]["recent_1000"] is None
    weekly = body["data"]["weekly"]
    assert len(weekly) == 5 and all(week["battles"] == 0 and week["wn8"] is None for week in weekly), weekly
    assert weekly[-1]["to"] == body["data"]["latest"]["date"]
    response, body = await get(http_client, base_url, f"/api/v1/player/{cast['quit']}/{REGION}/tanks")
    assert response.code == 200 and body["data"]["period"]["battles"] == 0
    assert all(row["period"]["battles"] == 0 for row in body["data"]["tanks"]) and body["data"]["tanks"]


def _check_weekly(world, account_id, data, table, now):
    """`weekly`: ceil(days / 7) consecutive weeks ending on the newest snapshot's day; each week's
    wn8 equals the XVM computation over the truth's per-tank differences between its bounds, to
    0.01; the weekly battles add up to the battles between the first week's start and the last
    week's end; the last week is the 7-day delta's period."""
    weekly, days = data["weekly"], data["days"]
    assert len(weekly) == -(-days // 7), (days, len(weekly))
    assert weekly[-1]["to"] == data["latest"]["date"] == data["deltas"]["7d"]["to"]
    known = [week for week in weekly if week is not None]
    assert known and weekly[-len(known) :] == known  # only weeks before the records are null
    for week in known:
        first, last = dt.date.fromisoformat(week["from"]), dt.date.fromisoformat(week["to"])
        assert (last - first).days == 7 or (week is known[0] and (last - first).days < 7), week
        start, end = _truth(world, account_id, week["from"], now), _truth(world, account_id, week["to"], now)
        battles = sum(c["battles"] for c in end.values()) - sum(c["battles"] for c in start.values())
        assert week["battles"] == battles, week
        if battles:
            assert week["wn8"] == pytest.approx(xvm_wn8(start, end, table), abs=0.01), week
            assert week["wn7"] is not None and week["average_tier"] > 0
        else:
            assert week["wn8"] is None and week["win_rate"] is None, week
    for before, after in zip(known, known[1:]):
        assert before["to"] == after["from"]  # consecutive: no battle counted twice or lost
    total = sum(c["battles"] for c in _truth(world, account_id, known[-1]["to"], now).values())
    base = sum(c["battles"] for c in _truth(world, account_id, known[0]["from"], now).values())
    assert sum(week["battles"] for week in known) == total - base
    assert any(week["battles"] for week in known)
    period = data["deltas"]["7d"]["period"]
    assert {k: v for k, v in known[-1].items() if k not in ("from", "to")} == {
        k: v for k, v in period.items() if k not in ("from", "to", "wn8_percentile", "place")
    }


@pytest.mark.gen_test(timeout=300)
async def test_tanks_and_search_answer_bad_input_and_unknown_players_clearly(
    http_client, base_url, briefly_tracked, cast, upstream_sim
):
    ordinary = cast["ordinary"][0]
    untracked = existing_accounts(REGION, 1, start=500_010_000)[0]  # in the simulator's searchable range
    response, body = await get(http_client, base_url, f"/api/v1/player/{untracked}/{REGION}/tanks")
    assert response.code == 404 and body["error"]["code"] == "no_history"
    for days in ("0", str(next(p for p in TANKS.params if p.name == "days").maximum + 1), "abc", "7&days=8"):
        response, body = await get(http_client, base_url, f"/api/v1/player/{ordinary}/{REGION}/tanks?days={days}")
        assert response.code == 400 and body["error"]["code"] == "invalid_days", days
    for group_by in ("weight", "", "tier&group_by=type", "TIER"):
        response, body = await get(
            http_client, base_url, f"/api/v1/player/{ordinary}/{REGION}/tanks?group_by={group_by}"
        )
        assert response.code == 400 and body["error"]["code"] == "invalid_group_by", group_by
    response, body = await get(http_client, base_url, f"/api/v1/player/0/{REGION}/tanks")
    assert response.code == 400 and body["error"]["code"] == "invalid_account_id"
    response, body = await get(http_client, base_url, f"/api/v1/player/{ordinary}/xx/tanks")
    assert response.code == 400 and body["error"]["code"] == "invalid_region"

    # Search: a tracked player by any-case prefix of the nickname, without asking the upstream.
    name = nickname(REGION, ordinary)
    prefix = name[:5].swapcase()
    response, body = await get(http_client, base_url, f"/api/v1/players?search={prefix}&region={REGION}")
    assert response.code == 200, body
    data = body["data"]
    assert data["source"] == "tracked" and data["search"] == prefix and data["region"] == REGION
    assert {"account_id": ordinary, "nickname": name, "region": REGION, "tracked": True} in data["results"]
    assert all(row["nickname"].lower().startswith(prefix.lower()) for row in data["results"])

    # A prefix no tracked account has: the simulator's account/list answers (one live lookup).
    outsider = nickname(REGION, untracked)
    assert not any(
        nickname(REGION, a).lower().startswith(outsider.lower())
        for a in [*cast["grinders"], cast["quit"], *cast["ordinary"]]
    )
    response, body = await get(http_client, base_url, f"/api/v1/players?search={outsider}&region={REGION}")
    assert response.code == 200, body
    assert body["data"]["source"] == "upstream"
    assert 0 < len(body["data"]["results"]) <= SEARCH_RESULTS
    assert all(row["tracked"] is False and row["region"] == REGION for row in body["data"]["results"])
    assert any(row["account_id"] == untracked for row in body["data"]["results"]), body

    for query in ("search=ab", "search=" + "a" * 25, "search=a-b", "search=abc&search=abd", "", "search="):
        response, body = await get(http_client, base_url, f"/api/v1/players?{query}")
        assert response.code == 400 and body["error"]["code"] == "invalid_search", query
    response, body = await get(http_client, base_url, "/api/v1/players?search=abc&region=xx")
    assert response.code == 400 and body["error"]["code"] == "invalid_region"


@pytest.mark.gen_test(timeout=60)
async def test_new_error_codes_are_in_the_index_and_the_openapi_document(http_client, base_url):
    _, index = await get(http_client, base_url, "/api/v1")
    _, document = await get(http_client, base_url, "/api/v1/openapi.json")
    listed = ujson.dumps(index["data"])
    for endpoint in (TANKS, PLAYER_SEARCH):
        assert endpoint in CATALOGUE
        entry = next(e for e in index["data"]["endpoints"] if e["name"] == endpoint.name)
        assert entry["path"].endswith(endpoint.path)
        operation = document["paths"][endpoint.path]["get"]  # paths are relative to servers[0]
        responses = [
            document["components"]["responses"][r["$ref"].rsplit("/", 1)[1]] if "$ref" in r else r
            for r in operation["responses"].values()
        ]
        documented = ujson.dumps(responses)
        for code in endpoint.error_codes:
            assert f'"{code}"' in listed, code
            assert code in documented, (endpoint.name, code)
    assert "invalid_search" in PLAYER_SEARCH.error_codes


def test_weekly_pass_rebuilds_the_same_states_as_state_on_and_weeks_start_with_the_records():
    """The one-pass states of period._weekly equal Timeline.state_on on every day (keyframes
    reset the state, change records apply to it); a week before the records is null, the week
    in which they start begins at the first one, a week without battles has battles 0."""
    from server.domain.records import Timeline, pack
    from server.services.history import _states_on, _weekly, week_bounds

    def row(battles):
        return [battles, battles // 2, 0, 0, battles * 1000, battles, battles, 0, 0, 0, battles // 3, 0, 0]

    records, previous = [], None
    day0 = dt.date(2026, 3, 10)
    battles = {1: 10, 2: 5}
    for i in range(0, 40, 3):  # a record every third day with battles on both tanks
        if i not in (21, 24):  # days 19-26 without battles: no record
            battles = {1: battles[1] + 4, 2: battles[2] + 2, **({3: i} if i >= 30 else {})}
            state = {t: row(b) for t, b in battles.items()}
            keyframe = previous is None or i % 12 == 0
            payload = pack(state, None if keyframe else previous)
            records.append(((day0 + dt.timedelta(days=i)).isoformat(), sum(battles.values()), keyframe, payload))
            previous = state
    timeline = Timeline(records)
    days = [(day0 + dt.timedelta(days=i)).isoformat() for i in range(-3, 45)]
    assert _states_on(timeline, days) == [timeline.raw_state_on(day) for day in days]

    last = records[-1][0]
    weeks = _weekly(timeline, last, 49, None, {})
    assert [(w["from"], w["to"]) if w else None for w in weeks][1:] == [
        (first, to) if first >= records[0][0] else (records[0][0], to) for first, to in week_bounds(last, 49)[1:]
    ]
    assert weeks[0] is None  # ends before the first record
    assert sum(w["battles"] for w in weeks if w) == records[-1][1] - records[0][1]
    assert any(w and w["battles"] == 0 and w["win_rate"] is None for w in weeks)
    assert _weekly(Timeline([]), last, 30, None, {}) is None
