"""Marks of excellence: thresholds equal an exact percentile computation, records written before the
assistance was kept rebuild as before and give null (never 0), and on demo data /tanks/marks, a
player's progress and the per-tier breakdown answer what a player relies on."""

from __future__ import annotations

import math
import time

import pytest
import ujson
from hypothesis import given, settings
from hypothesis import strategies as st
from tornado.httpclient import AsyncHTTPClient, HTTPRequest

from server.compose.demo import SimulatorLists, seed_demo
from server.domain import recents
from server.domain.days import DAY_SECONDS, day_start
from server.domain.marks import (
    BATTLES,
    DAMAGE,
    STUN,
    combined_damage,
    estimated_marks,
    marks_table,
    next_mark,
)
from server.domain.population import PeriodAccumulator
from server.domain.records import Timeline, pack, unpack
from store.client import deadline
from store.constants import LEGACY_WIDTH, TANK_COUNTERS
from tests.helpers import FAST_REALMS, sim_async

WIDTH = len(TANK_COUNTERS)


def exact_percentile(values: list[float], p: float) -> float:
    """The p-th percentile by the closest-ranks linear interpolation, written out from its definition."""
    ordered = sorted(values)
    rank = (len(ordered) - 1) * p / 100
    below, above = math.floor(rank), math.ceil(rank)
    return ordered[below] + (ordered[above] - ordered[below]) * (rank - below)


def tank_row(battles: int, damage: int, stun: int) -> list[int]:
    row = [0] * WIDTH
    row[BATTLES], row[DAMAGE], row[STUN] = battles, damage, stun
    return row


players = st.lists(
    st.tuples(
        st.integers(1, 60),  # battles on the tank
        st.integers(0, 6000),  # damage per battle
        st.integers(0, 900),  # stun per battle
        st.integers(0, 2000),  # the account's spotting per battle
        st.integers(0, 900),  # ... and tracking
        st.booleans(),  # the account's assistance known for the whole window
    ),
    min_size=0,
    max_size=80,
)


@settings(max_examples=150, deadline=None)
@given(players=players, tier=st.integers(1, 11))
def test_thresholds_equal_an_exact_percentile_computation(players, tier):
    """A tank's 1st/2nd/3rd mark and top are the 65th/85th/95th percentiles and the largest of its
    counted players' combined damage (damage plus the largest of the average spotting, tracking and
    stun assistance) — counted: tier V+, at least 10 battles on it, assistance known; null below
    the minimum number of players, and the sample says who counted."""
    tank_id, min_battles, min_players = 7, 10, 20
    accounts, assists = {}, {}
    counted = []
    for account_id, (battles, damage, stun, radio, track, known) in enumerate(players, 1):
        accounts[account_id] = {tank_id: tank_row(battles, damage * battles, stun * battles)}
        account_battles = battles + 5  # the account also played other tanks
        if known:
            assists[account_id] = [account_battles, radio * account_battles, track * account_battles]
            if battles >= min_battles:
                counted.append((battles, damage + max(radio, track, stun)))
    table = marks_table(accounts, assists, {tank_id: tier}, min_battles, min_players)
    if tier < 5 or not counted:
        assert tank_id not in table
        return
    entry = table[tank_id]
    values = [value for _, value in counted]
    assert entry["players"] == len(counted) and entry["battles"] == sum(b for b, _ in counted)
    if len(counted) < min_players:
        assert entry["thresholds"] is None and entry["grid"] is None
        return
    want = [round(exact_percentile(values, p), 2) for p in (65, 85, 95)] + [round(max(values), 2)]
    assert entry["thresholds"] == pytest.approx(want, abs=0.011)
    assert entry["thresholds"] == sorted(entry["thresholds"])  # 1st <= 2nd <= 3rd <= top
    assert entry["grid"][64] == pytest.approx(exact_percentile(values, 65), abs=1e-6)


def test_combined_damage_is_damage_plus_the_largest_average_assistance():
    # 10 battles: 2,000 damage, stun 300 a battle; the account spots 500 and tracks 100 a battle
    assert combined_damage(10, 20_000, 3_000, [40, 20_000, 4_000]) == 2_000 + 500
    assert combined_damage(10, 20_000, 9_000, [40, 20_000, 4_000]) == 2_000 + 900  # stun the largest
    assert combined_damage(10, 20_000, 0, None) is None  # the account's assistance unknown
    assert combined_damage(0, 0, 0, [1, 1, 1]) is None
    assert next_mark(2_000, [1_800, 2_200, 2_600, 3_100]) == {"mark": 2, "combined_damage": 2_200, "needed": 200}
    assert next_mark(2_700, [1_800, 2_200, 2_600, 3_100]) == {"mark": None, "combined_damage": None, "needed": 0.0}
    assert estimated_marks(2_000, [1_800, 2_200, 2_600, 3_100]) == 1
    assert estimated_marks(1_000, None) is None


def legacy_row(full: list[int]) -> list[int]:
    return full[:LEGACY_WIDTH]


def test_records_written_before_the_assistance_rebuild_as_before_and_give_null_not_zero():
    """A keyframe and change written with the old 13 counters rebuild the same 13 counters (the new
    ones absent, not 0); the period they start gives the assistance figures null; from the first
    full keyframe on, every figure is known, and says from when."""
    tank = 1
    day1 = tank_row(100, 150_000, 0)
    day1[TANK_COUNTERS.index("wins")] = 50
    day2 = list(day1)
    day2[BATTLES] += 10
    day2[DAMAGE] += 20_000
    old_keyframe = pack({tank: legacy_row(day1)})
    old_change = pack({tank: legacy_row(day2)}, {tank: legacy_row(day1)})
    assert old_keyframe[0] == LEGACY_WIDTH  # the width byte of a record written before
    state = unpack(old_keyframe)
    assert state == {tank: legacy_row(day1)}
    day3 = list(day2)
    day3[BATTLES] += 10
    day3[DAMAGE] += 30_000
    day3[TANK_COUNTERS.index("damage_received")] = 90_000
    day3[STUN] = 0
    day4 = list(day3)
    day4[BATTLES] += 10
    day4[DAMAGE] += 25_000
    day4[TANK_COUNTERS.index("damage_received")] += 12_000
    new_keyframe = pack({tank: day3})  # the first record of the new width is a keyframe
    new_change = pack({tank: day4}, {tank: day3})
    # A new-width change applied on an old row stays old-width: never a half-known row.
    assert len(unpack(old_keyframe + b"")[tank]) == LEGACY_WIDTH
    timeline = Timeline(
        [
            ("2026-01-01", 100, True, old_keyframe),
            ("2026-01-02", 110, False, old_change),
            ("2026-01-03", 120, True, new_keyframe),
            ("2026-01-04", 130, False, new_change),
        ],
        {"2026-01-03": [120, 60_000, 12_000], "2026-01-04": [130, 65_000, 13_000]},
    )
    assert timeline.raw_state_on("2026-01-02") == ("2026-01-02", {tank: legacy_row(day2)})
    assert timeline.complete_from() == "2026-01-03"
    # A period from before the assistance was kept: the figures that need it are null, not 0.
    start, end = timeline.raw_state_on("2026-01-01"), timeline.raw_state_on("2026-01-04")
    assist = recents.assist_change(timeline.assist_on(start[0]), timeline.assist_on(end[0]))
    old_period = recents.state_figures(start[1], end[1], None, {}, assist)
    assert old_period["battles"] == 30 and old_period["avg_damage"] == pytest.approx(75_000 / 30, abs=0.01)
    for name in recents.ASSIST_FIGURES:
        assert old_period[name] is None, name
    # From the first full keyframe on: known.
    start = timeline.raw_state_on("2026-01-03")
    assist = recents.assist_change(timeline.assist_on(start[0]), timeline.assist_on(end[0]))
    new_period = recents.state_figures(start[1], end[1], None, {}, assist)
    assert new_period["avg_assist_radio"] == 500.0 and new_period["avg_assist_track"] == 100.0
    assert new_period["avg_assist_stun"] == 0.0
    assert new_period["avg_combined_damage"] == 2_500 + 500
    assert new_period["damage_ratio"] == round(25_000 / 12_000, 2)


def test_an_account_with_a_day_before_the_assistance_counts_in_no_threshold():
    accumulator = PeriodAccumulator()
    full = {5: tank_row(12, 24_000, 0)}
    accumulator.add([(1, full, [12, 6_000, 1_200]), (2, full, [12, 6_000, 1_200])])
    accumulator.add([(1, {5: legacy_row(tank_row(3, 6_000, 0))}, None), (2, full, [12, 6_000, 1_200])])
    assert 1 not in accumulator.assists and accumulator.assists[2] == [24, 12_000, 2_400]
    assert 1 in accumulator.partial


# --- on demo data ------------------------------------------------------------------------------


@pytest.fixture
def app_overrides(fast_upstream_sim):
    return {
        "upstream_base_url": fast_upstream_sim,
        "rate_limit_scale": 100.0,
        "upstream_rps": 100.0,
        "upstream_realm_rps": tuple((realm, rate * 0.8) for realm, rate in FAST_REALMS.items()),
    }


class EuOnly(SimulatorLists):
    """The demo's lists for eu alone: the checks read eu, and the other realms would triple the seeding."""

    async def accounts(self, region: str, n: int) -> list[int]:
        return await super().accounts(region, n) if region == "eu" else []

    async def clans(self, region: str, n: int) -> list[int]:
        return await super().clans(region, n) if region == "eu" else []


async def check_official_on_demo(base_url: str, sim_url: str, services) -> None:
    from server.services.official import DAMAGE_PERCENTILES, MARK_KEYS, MASTERY_KEYS, XP_PERCENTILES

    answers = {}
    for name, percentiles in (("damage", DAMAGE_PERCENTILES), ("xp", XP_PERCENTILES)):
        query = f"application_id=t&distribution={name}&percentile={','.join(map(str, percentiles))}"
        answers[name] = (await sim_async(sim_url, f"/wot/eu/wot/tanks/mastery/?{query}"))["data"]["distribution"]
    vehicles = await services.ratings_source.vehicles("eu")
    covered = {int(t) for t in answers["damage"] if (vehicles.get(int(t)) or {}).get("tier", 0) >= 5}
    rows, offset = [], 0
    while True:
        page = await get_data(base_url, f"/api/v1/tanks/marks?region=eu&limit=100&offset={offset}&sort=players")
        rows += page["tanks"]
        offset += 100
        if offset >= page["total"]:
            break
    assert page["official"] is not None and page["official"]["stale"] is False, page["official"]
    by_tank = {row["tank_id"]: row for row in rows}
    assert covered <= set(by_tank), sorted(covered - set(by_tank))[:10]  # listed with or without a tracked sample
    for tank_id in covered:
        official = by_tank[tank_id]["official"]
        damage, xp = answers["damage"][str(tank_id)], answers["xp"].get(str(tank_id))
        assert official["marks"] == {k: float(damage[str(p)]) for k, p in zip(MARK_KEYS, DAMAGE_PERCENTILES)}
        if xp is not None:
            assert official["mastery_xp"] == {k: float(xp[str(p)]) for k, p in zip(MASTERY_KEYS, XP_PERCENTILES)}
    compared = [row for row in rows if row["estimate_error"] is not None]
    assert compared, "no tank has both an estimate and an official threshold"
    print("official thresholds: median error by tier", page["official"]["median_error_by_tier"])
    # A player's tanks measure their progress against the published thresholds where the tank has
    # them, and show the best battle's XP against the published mastery badges.
    player = await get_data(base_url, "/api/v1/player/500000052/eu/tanks?days=30")
    raw = await sim_async(
        sim_url, "/wot/eu/wot/tanks/stats/?application_id=t&account_id=500000052&fields=tank_id,max_xp"
    )
    best_now = {entry["tank_id"]: entry["max_xp"] for entry in raw["data"]["500000052"]}
    measured = 0
    for row in player["tanks"]:
        damage, xp = answers["damage"].get(str(row["tank_id"])), answers["xp"].get(str(row["tank_id"]))
        mastery = row["mastery"]
        assert 0 < mastery["best_xp"] <= best_now[row["tank_id"]], (row["tank_id"], mastery)
        if xp is not None:
            thresholds = [float(xp[str(p)]) for p in XP_PERCENTILES]
            assert mastery["thresholds"] == dict(zip(MASTERY_KEYS, thresholds)), mastery
            assert mastery["best_xp_reaches"] == sum(mastery["best_xp"] >= t for t in thresholds), mastery
        if row["marks"] is None:
            continue
        if damage is not None:
            assert row["marks"]["thresholds_source"] == "official", row["marks"]
            assert row["marks"]["thresholds"] == {
                k: float(damage[str(p)]) for k, p in zip(MARK_KEYS, DAMAGE_PERCENTILES)
            }
            if row["marks"]["combined_damage"] is not None:
                expected = sum(row["marks"]["combined_damage"] >= float(damage[str(p)]) for p in DAMAGE_PERCENTILES[:3])
                assert row["marks"]["estimated_marks"] == expected, row["marks"]
            measured += 1
        elif row["marks"]["estimated_thresholds"] is not None:
            assert row["marks"]["thresholds_source"] == "estimate"
    assert measured, "no tank of the player measured against the published thresholds"


async def check_wtr_on_demo(base_url: str, sim_url: str, store) -> None:
    """Wargaming's WTR on the demo: the profile's equals wot/account/wtr (and its global_rating
    account/info's) as of its measurement, its history has a daily series equal to what the
    simulator answered as of each day's visit, and the players' leaderboard ranks by it."""
    from store.tracker import tracked_id

    account_id = 500000052
    profile = await get_data(base_url, f"/api/v1/player/{account_id}/eu")
    at = int(profile["cached_at"])

    async def wtr_at(when: int, ids: list[int]) -> dict:
        query = f"application_id=t&account_id={','.join(map(str, ids))}&_sim_now={when}"
        return (await sim_async(sim_url, f"/wot/eu/wot/account/wtr/?{query}"))["data"]

    info = await sim_async(
        sim_url,
        f"/wot/eu/wot/account/info/?application_id=t&account_id={account_id}&fields=global_rating&_sim_now={at}",
    )
    assert profile["ratings"]["wtr"] == (await wtr_at(at, [account_id]))[str(account_id)]["rating"]
    assert profile["ratings"]["global_rating"] == info["data"][str(account_id)]["global_rating"]
    # The daily series: each past measured day's WTR is what account/wtr answered at that day's
    # visit (the demo's passes run at each day's last second).
    history = await get_data(base_url, f"/api/v1/player/{account_id}/eu/history?days=30")
    today = time.strftime("%Y-%m-%d", time.gmtime())
    measured = [s for s in history["snapshots"] if s["measured"] and s["date"] < today]
    assert len(measured) >= 3, [s["date"] for s in history["snapshots"]]
    for snap in measured[-5:]:  # a few requests: the simulator throttles a client's bursts
        visit = int(day_start(snap["date"]) + DAY_SECONDS - 1)
        assert snap["wtr"] == (await wtr_at(visit, [account_id]))[str(account_id)]["rating"], snap
    # Its deltas: the change between the two days, null when either lacks it.
    by_day = {s["date"]: s for s in history["snapshots"]}
    for delta in (history["deltas"]["7d"], history["deltas"]["30d"]):
        if delta is None or delta["from"] not in by_day:
            continue
        first, last = by_day[delta["from"]]["wtr"], by_day[delta["to"]]["wtr"]
        assert delta["wtr_change"] == (last - first if first is not None and last is not None else None), delta
    # The leaderboard by WTR: highest first, each row the WTR kept from the player's newest visit.
    board = await get_data(base_url, "/api/v1/leaderboard/players?region=eu&days=30&by=wtr&limit=100")
    assert board["by"] == "wtr" and board["rows"], board
    values = [row["value"] for row in board["rows"]]
    assert values == sorted(values, reverse=True)
    for row in board["rows"][:10]:
        kept = await store.tracked.collection.find_one({"_id": tracked_id("eu", row["account_id"])}, {"wtr": 1})
        assert row["value"] == kept["wtr"], row
    # With a tier filter nobody is ranked by an account-level figure.
    tiered = await get_data(base_url, "/api/v1/leaderboard/players?region=eu&days=30&by=wtr&tier=10")
    assert tiered["rows"] == [] and tiered["total"] == 0


async def get_data(base: str, path: str) -> dict:
    response = await AsyncHTTPClient().fetch(HTTPRequest(base + path, request_timeout=60), raise_error=False)
    assert response.code == 200, (path, response.code, response.body[:300])
    return ujson.loads(response.body)["data"]


@pytest.mark.gen_test(timeout=1200)
async def test_on_demo_data_marks_progress_groups_and_leaderboards_answer_what_players_rely_on(
    app, http_client, base_url, fast_upstream_sim, upstream_sim, artifacts_dir
):
    store, services = app.settings["store"], app.settings["services"]
    now = time.time()
    with deadline(900):
        await seed_demo(
            store,
            services,
            EuOnly(fast_upstream_sim),
            players_per_region=30,
            clans_per_region=1,
            history_days=31,
            population_per_region=150,
            population_days=15,
            online_days=1,
            online_recent_hours=1,
            now=now,
        )
    # The day's bulk files the demo's build wrote (before anything here builds again).
    from tests.test_dumps import check_dumps_on_demo

    await check_dumps_on_demo(base_url)
    # /tanks/marks: tier V and up only, monotone thresholds, each with its sample.
    marks = await get_data(base_url, "/api/v1/tanks/marks?region=eu&limit=100&sort=players")
    assert marks["days"] == 14 and marks["method"].startswith("docs/data.md")
    assert marks["tanks"], marks
    with_thresholds = [row for row in marks["tanks"] if row["marks"] is not None]
    assert with_thresholds, [row["sample"] for row in marks["tanks"][:10]]
    for row in marks["tanks"]:
        assert row["tier"] is None or row["tier"] >= 5, row
        assert row["sample"]["players"] >= 1 and row["sample"]["battles"] >= 10 * row["sample"]["players"]
        if row["marks"] is not None:
            m = row["marks"]
            assert m["first"] <= m["second"] <= m["third"] <= m["top"], row
            assert row["sample"]["players"] >= marks["min_players"]
        else:
            assert row["sample"]["players"] < marks["min_players"]
    # Wargaming's published thresholds beside the estimates: every row of a tank the simulator's
    # distributions cover carries them, equal to what wot/tanks/mastery answers (both distributions).
    await check_official_on_demo(base_url, upstream_sim, app.settings["services"])
    # A player's tanks: combined damage (at least the damage average), a mark percentile, what the next takes.
    tanks = await get_data(base_url, "/api/v1/player/500000052/eu/tanks?days=30")
    progressed = [row for row in tanks["tanks"] if row["marks"] and row["marks"]["combined_damage"] is not None]
    assert progressed, [row["marks"] for row in tanks["tanks"][:5]]
    for row in progressed:
        period = row["period"]
        if period["battles"] and period["avg_combined_damage"] is not None:
            assert period["avg_combined_damage"] >= period["avg_damage"]
        m = row["marks"]
        assert m["combined_damage"] > 0 and m["battles"] > 0
        if m["estimated_thresholds"] is not None:  # the tank's tracked players give it a grid
            assert m["percentile"] is not None and 0 <= m["percentile"] <= 99
        if m["thresholds"] is not None:
            assert m["next"] is not None
            if m["next"]["mark"] is not None:
                assert m["next"]["needed"] == pytest.approx(
                    m["next"]["combined_damage"] - m["combined_damage"], abs=0.02
                )
    assert any(row["marks"]["thresholds"] is not None for row in progressed), "no tank of the player has thresholds"
    # group_by=tier: the groups add up to the ungrouped period.
    grouped = await get_data(base_url, "/api/v1/player/500000052/eu/tanks?days=30&group_by=tier")
    assert grouped["group_by"] == "tier"
    assert (
        sum(group["battles"] for group in grouped["groups"])
        == grouped["period"]["battles"]
        == tanks["period"]["battles"]
    )
    assert sum(group["wins"] for group in grouped["groups"]) == grouped["period"]["wins"]
    by_tier: dict = {}
    for row in tanks["tanks"]:
        by_tier[row["tier"]] = by_tier.get(row["tier"], 0) + row["period"]["battles"]
    assert {g["tier"]: g["battles"] for g in grouped["groups"]} == {t: b for t, b in by_tier.items() if b}
    # The tank page carries its marks and their daily series.
    tank_id = with_thresholds[0]["tank_id"]
    page = await get_data(base_url, f"/api/v1/tank/{tank_id}/eu?days=30")
    assert page["marks"]["marks"] == with_thresholds[0]["marks"]
    assert page["marks"]["series"] and page["marks"]["series"][-1]["date"] == marks["through"]

    # The vehicle catalogue and the tanks' strength on the same demo.
    from tests.test_vehicles import check_strength_on_demo, check_vehicles_on_demo

    await check_vehicles_on_demo(base_url, upstream_sim)
    await check_strength_on_demo(base_url)

    # The leaderboards on the same demo (seeding it once for both saves minutes of the test run).
    from tests.test_leaderboards import check_on_demo

    await check_on_demo(store, services, base_url, now)
    # Wargaming's WTR beside our ratings: profile, history, leaderboard.
    await check_wtr_on_demo(base_url, fast_upstream_sim, store)
    # ... and every table as CSV on the same demo.
    from tests.test_csv import check_csv_on_demo

    popular = (await get_data(base_url, "/api/v1/tanks/stats?region=eu&days=30&sort=players&limit=1"))["tanks"][0]
    clan = await store.clans.clans.find_one({"region": "eu"})
    await check_csv_on_demo(base_url, popular["tank_id"], 500000052, clan["clan_id"])
    # ... an assistant gets each of them through statsapi-mcp, over stdio and Streamable HTTP, and
    # reads of them in /llms.txt and /llms-full.txt ...
    # The catalogue's tank examples ask for the T-34 (tank 1), which the full demo's population
    # plays and this one's does not: a few of its players, and the daily build again.
    from tests.test_docs import seed_tank_population
    from tests.test_llms_txt import check_llms_on_demo
    from tests.test_mcp import check_mcp_on_demo

    await seed_tank_population(app)
    await check_mcp_on_demo(base_url)
    await check_llms_on_demo(base_url)
    # ... every answer of every read operation declares each of its keys in its schema ...
    from tests.test_declared_keys import check_keys_declared_on_demo

    await check_keys_declared_on_demo(base_url)
    # ... and the four cards (written to tests/artifacts/ to look at) and their pages.
    from tests.test_cards import check_cards_on_demo

    await check_cards_on_demo(base_url, 500000052, clan["clan_id"], popular["tank_id"], artifacts_dir)
    # ... and each form of an answer the same figures while the daily job rebuilds.
    from tests.test_csv import check_forms_agree_while_rebuilding

    board = await get_data(base_url, "/api/v1/leaderboard/players?region=eu&days=30&by=wn8")
    await check_forms_agree_while_rebuilding(store, services, base_url, 500000052, board["through"])
