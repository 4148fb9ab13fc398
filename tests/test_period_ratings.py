"""Period figures (server/domain/recents.py) against formulas written out here, on a simulated month."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scripts.upstream_sim import World, existing_accounts
from server.domain.ratings import ExpectedValues, load_expected_values_file
from server.domain.recents import (
    PERIOD_COUNTERS,
    ROW_COUNTERS,
    figures_of,
    period_figures,
    recent_baseline,
    state_differences,
    tank_differences,
    tank_rows,
)
from server.domain.records import as_counters
from tests.helpers import EXPECTED_VALUES_FILE, VEHICLES_FILE, xvm_wn8

NOW = 1_750_000_000  # 2025-06-15
MONTH = 30 * 86400


@pytest.fixture(scope="module")
def table(raw_table) -> ExpectedValues:
    return load_expected_values_file(EXPECTED_VALUES_FILE)


@pytest.fixture(scope="module")
def world() -> World:
    if not VEHICLES_FILE.exists():
        pytest.skip(f"vehicle list not available at {VEHICLES_FILE}")
    return World(vehicles=VEHICLES_FILE, expected_values=EXPECTED_VALUES_FILE)


def states(world: World, account_id: int) -> tuple[dict, dict]:
    """Per-tank career counters a month apart, as the simulated upstream's tanks/stats gives them."""
    profile = world.profile("eu", account_id)
    start = {t["tank_id"]: t["all"] for t in profile.tanks(NOW - MONTH)}
    end = {t["tank_id"]: t["all"] for t in profile.tanks(NOW)}
    return start, end


def active_month(world: World, raw_table: dict) -> tuple[dict, dict]:
    """The first simulated account whose month has 100+ battles, one of them on a tank the table lacks."""
    for account_id in existing_accounts("eu", 300):
        start, end = states(world, account_id)
        played = [t for t in end if end[t]["battles"] > start.get(t, {}).get("battles", 0)]
        battles = sum(end[t]["battles"] - start.get(t, {}).get("battles", 0) for t in played)
        if battles >= 100 and any(t not in raw_table for t in played) and any(t in raw_table for t in played):
            return start, end
    raise AssertionError("no simulated account with such a month among the first 300")


# --- the published formulas, written out independently of server/domain/ratings.py ---------------


def period_totals(start: dict, end: dict) -> dict:
    totals = dict.fromkeys(PERIOD_COUNTERS, 0)
    for tank_id, after in end.items():
        before = start.get(tank_id, {})
        if after["battles"] - before.get("battles", 0) > 0:
            for name in PERIOD_COUNTERS:
                totals[name] += after[name] - before.get(name, 0)
    return totals


def weighted_tier(start: dict, end: dict, tiers: dict) -> float:
    weighted = battles = 0
    for tank_id, after in end.items():
        played = after["battles"] - start.get(tank_id, {}).get("battles", 0)
        if played > 0 and tank_id in tiers:
            weighted += played * tiers[tank_id]
            battles += played
    return weighted / battles


def wn7_formula(t: dict, tier: float) -> float:
    """WN7 as published (forum topic 184017), per-battle values, win rate in percent."""
    n = t["battles"]
    frags, damage, spot, defence = (
        t["frags"] / n,
        t["damage_dealt"] / n,
        t["spotted"] / n,
        t["dropped_capture_points"] / n,
    )
    win_rate = 100 * t["wins"] / n
    return (
        (1240 - 1040 / min(tier, 6) ** 0.164) * frags
        + damage * 530 / (184 * math.exp(0.24 * tier) + 130)
        + spot * 125 * min(tier, 3) / 3
        + min(defence, 2.2) * 100
        + ((185 / (0.17 + math.exp((win_rate - 35) * -0.134))) - 500) * 0.45
        - ((5 - min(tier, 5)) * 125) / (1 + math.exp((tier - (n / 220) ** (3 / tier)) * 1.5))
    )


def eff_formula(t: dict, tier: float) -> float:
    """Classic efficiency: DAMAGE*(10/(TIER+2))*(0.23+2*TIER/100) + FRAGS*250 + SPOT*150
    + log(CAP+1, 1.732)*150 + DEF*150, per battle."""
    n = t["battles"]
    return (
        t["damage_dealt"] / n * (10 / (tier + 2)) * (0.23 + 2 * tier / 100)
        + t["frags"] / n * 250
        + t["spotted"] / n * 150
        + math.log(t["capture_points"] / n + 1) / math.log(1.732) * 150
        + t["dropped_capture_points"] / n * 150
    )


# --- a simulated month -----------------------------------------------------------------------


def test_period_wn8_is_xvm_over_per_tank_differences(world, raw_table, table):
    start, end = active_month(world, raw_table)
    tiers = {t: v["tier"] for t, v in world.vehicles.items()}
    got = period_figures(start, end, table, tiers)
    assert got["wn8"] == pytest.approx(xvm_wn8(start, end, raw_table), abs=0.01)
    # A period figure, not the career one (the month is a small share of the career).
    assert got["wn8"] != pytest.approx(xvm_wn8({}, end, raw_table), abs=0.01)


def test_period_totals_rates_tier_wn7_and_efficiency(world, raw_table, table):
    start, end = active_month(world, raw_table)
    tiers = {t: v["tier"] for t, v in world.vehicles.items()}
    got = period_figures(start, end, table, tiers)
    t = period_totals(start, end)
    tier = weighted_tier(start, end, tiers)
    assert got["battles"] == t["battles"] >= 100
    assert got["wins"] == t["wins"]
    assert got["win_rate"] == pytest.approx(100 * t["wins"] / t["battles"], abs=0.005)
    assert got["avg_damage"] == pytest.approx(t["damage_dealt"] / t["battles"], abs=0.005)
    assert got["avg_frags"] == pytest.approx(t["frags"] / t["battles"], abs=0.005)
    assert got["avg_spotted"] == pytest.approx(t["spotted"] / t["battles"], abs=0.005)
    assert got["avg_defence"] == pytest.approx(t["dropped_capture_points"] / t["battles"], abs=0.005)
    assert got["avg_xp"] == pytest.approx(t["xp"] / t["battles"], abs=0.005)
    assert got["survival_rate"] == pytest.approx(100 * t["survived_battles"] / t["battles"], abs=0.005)
    assert got["hit_rate"] == pytest.approx(100 * t["hits"] / t["shots"], abs=0.005)
    assert got["average_tier"] == pytest.approx(tier, abs=0.005)
    assert got["wn7"] == pytest.approx(wn7_formula(t, tier), abs=0.01)
    assert got["efficiency"] == pytest.approx(eff_formula(t, tier), abs=0.01)


def test_a_period_without_battles_is_zero_battles_and_nulls(world, raw_table, table):
    _, end = active_month(world, raw_table)
    tiers = {t: v["tier"] for t, v in world.vehicles.items()}
    got = period_figures(end, end, table, tiers)
    assert got["battles"] == 0 and got["wins"] == 0
    assert {k for k, v in got.items() if v is not None} == {"battles", "wins"}
    assert period_figures({}, {}, table, tiers) == got


# --- hand-built states -----------------------------------------------------------------------


def counters(battles, *, wins=0, damage=0, frags=0, spotted=0, defence=0, capture=0, xp=0, survived=0, shots=0, hits=0):
    return {
        "battles": battles,
        "wins": wins,
        "damage_dealt": damage,
        "frags": frags,
        "spotted": spotted,
        "dropped_capture_points": defence,
        "capture_points": capture,
        "xp": xp,
        "survived_battles": survived,
        "shots": shots,
        "hits": hits,
    }


def at_expected(row: dict, battles: int) -> dict:
    """Counters of `battles` battles played exactly at a tank's expected values (WN8 1565)."""
    return counters(
        battles,
        wins=round(battles * float(row["expWinRate"]) / 100),
        damage=round(battles * float(row["expDamage"])),
        frags=round(battles * float(row["expFrag"])),
        spotted=round(battles * float(row["expSpot"])),
        defence=round(battles * float(row["expDef"])),
    )


def test_a_tank_missing_from_the_table_is_left_out_of_wn8_on_both_sides(raw_table, table):
    known = 1  # T-34, in the table
    unknown = 999_999_999
    assert known in raw_table and unknown not in raw_table
    end = {known: at_expected(raw_table[known], 1000), unknown: counters(500, wins=500, damage=5_000_000, frags=5000)}
    start = {known: counters(0), unknown: counters(0)}
    tiers = {known: 5, unknown: 10}
    got = period_figures(start, end, table, tiers)
    alone = period_figures({}, {known: end[known]}, table, tiers)
    assert got["wn8"] == alone["wn8"] == pytest.approx(xvm_wn8(start, end, raw_table), abs=0.01)
    assert got["wn8"] == pytest.approx(1565, abs=2)  # rounding of the expected counts only
    # ...but its battles count everywhere else, its tier included.
    assert got["battles"] == 1500 and got["average_tier"] == pytest.approx((1000 * 5 + 500 * 10) / 1500, abs=0.005)
    # Only unknown tanks played: no WN8, the other figures still there.
    only_unknown = period_figures(start, {**start, unknown: end[unknown]}, table, tiers)
    assert only_unknown["wn8"] is None and only_unknown["battles"] == 500 and only_unknown["wn7"] is not None


def test_a_tank_new_in_the_period_counts_from_zero(raw_table, table):
    old, new = 1, 33
    start = {old: counters(100, wins=50, damage=50_000)}
    end = {old: counters(110, wins=56, damage=55_000), new: at_expected(raw_table[new], 40)}
    diffs = tank_differences(start, end)
    assert diffs[new] == {name: end[new][name] for name in PERIOD_COUNTERS}
    assert diffs[old]["battles"] == 10 and diffs[old]["wins"] == 6 and diffs[old]["damage_dealt"] == 5000
    got = period_figures(start, end, table, {old: 5, new: 5})
    assert got["battles"] == 50 and got["wins"] == 6 + end[new]["wins"]
    assert got["wn8"] == pytest.approx(xvm_wn8(start, end, raw_table), abs=0.01)


def test_counters_that_went_down_count_as_nothing_played(table):
    start = {1: counters(100, wins=60, damage=60_000), 33: counters(50, wins=20, damage=10_000, shots=100, hits=80)}
    # Tank 1 lost battles (a corrupt record); tank 33 gained battles but "lost" wins and hits.
    end = {1: counters(90, wins=55, damage=50_000), 33: counters(60, wins=10, damage=15_000, shots=120, hits=70)}
    diffs = tank_differences(start, end)
    assert 1 not in diffs
    assert diffs[33]["battles"] == 10 and diffs[33]["wins"] == 0 and diffs[33]["hits"] == 0
    got = period_figures(start, end, table, {1: 5, 33: 5})
    assert got["battles"] == 10 and got["win_rate"] == 0.0 and got["hit_rate"] == 0.0
    # Wins beyond the period's battles are capped: a win rate never exceeds 100 %.
    capped = period_figures({33: counters(10)}, {33: counters(12, wins=5, survived=7)}, table, {33: 5})
    assert capped["win_rate"] == 100.0 and capped["survival_rate"] == 100.0


def test_without_a_table_or_tiers_the_ratings_that_need_them_are_null():
    end = {1: counters(10, wins=5, damage=5000, frags=8, spotted=10, shots=70, hits=50)}
    got = figures_of(end, None, {})
    assert got["battles"] == 10 and got["win_rate"] == 50.0 and got["hit_rate"] == pytest.approx(71.43)
    assert got["wn8"] is None and got["average_tier"] is None and got["wn7"] is None and got["efficiency"] is None


# --- per-tank rows for the tanks endpoint ---------------------------------------------------


def test_tank_rows_carry_period_counters_career_and_vehicle_facts(raw_table, table):
    a, b, c = 1, 33, 999_999_999
    start = {a: counters(100, wins=50, damage=50_000), b: counters(10, wins=5, damage=6000), c: counters(5)}
    end = {
        a: counters(100, wins=50, damage=50_000),  # not played in the period
        b: {k: start[b][k] + v for k, v in at_expected(raw_table[b], 20).items()},
        c: counters(25, wins=12, damage=20_000, frags=9, xp=9000, survived=4),  # not in the table
    }
    vehicles = {a: {"name": "T-34", "tier": 5, "type": "mediumTank", "nation": "ussr"}}
    rows = tank_rows(start, end, table, vehicles)
    # Sorted by period battles (b 20, c 20 -> then career battles: b 30 > c 25), then a.
    assert [r["tank_id"] for r in rows] == [b, c, a]
    by_id = {r["tank_id"]: r for r in rows}
    assert by_id[a]["name"] == "T-34" and by_id[a]["tier"] == 5 and by_id[a]["nation"] == "ussr"
    assert by_id[b]["name"] is None and by_id[b]["type"] is None
    assist = {"avg_assist_stun", "avg_combined_damage", "damage_ratio"}
    assert set(by_id[a]["period"]) == {*ROW_COUNTERS, "win_rate", "avg_damage", "avg_frags", "wn8", *assist}
    assert by_id[a]["period"]["battles"] == 0 and by_id[a]["period"]["win_rate"] is None
    assert by_id[a]["period"]["wn8"] is None
    assert by_id[a]["career"] == {
        "battles": 100,
        "wins": 50,
        "win_rate": 50.0,
        "avg_damage": 500.0,
        "wn8": pytest.approx(xvm_wn8({}, {a: end[a]}, raw_table), abs=0.01),
        # counters() carries none of the assistance counters: unknown, so null (never 0)
        **dict.fromkeys(assist),
        "mark_of_mastery": 0,
    }
    period_b = by_id[b]["period"]
    assert {k: period_b[k] for k in ROW_COUNTERS} == {k: end[b][k] - start[b][k] for k in ROW_COUNTERS}
    assert period_b["wn8"] == pytest.approx(xvm_wn8({b: start[b]}, {b: end[b]}, raw_table), abs=0.01)
    assert period_b["win_rate"] == pytest.approx(100 * period_b["wins"] / 20, abs=0.005)
    period_c = by_id[c]["period"]
    assert period_c["battles"] == 20 and period_c["avg_damage"] == 1000.0 and period_c["avg_frags"] == 0.45
    assert period_c["wn8"] is None and by_id[c]["career"]["wn8"] is None  # not in the table


# --- recent_1000: the baseline record --------------------------------------------------------


def test_recent_baseline_is_the_newest_record_at_least_1000_battles_back():
    days = [{"date": f"2025-06-{d:02d}", "battles": b} for d, b in enumerate([100, 900, 1500, 2000, 2400, 2600], 1)]
    # Newest 2600: records with battles <= 1600 qualify (100, 900, 1500); the newest of them is 1500.
    assert recent_baseline(days) == 2
    assert days[-1]["battles"] - days[recent_baseline(days)]["battles"] == 1100
    # Exactly 1000 back counts.
    assert recent_baseline([{"battles": 500}, {"battles": 1000}, {"battles": 1500}]) == 0
    # Not 1000 battles recorded yet, one record, none: no baseline.
    assert recent_baseline([{"battles": 501}, {"battles": 1500}]) is None
    assert recent_baseline([{"battles": 5000}]) is None and recent_baseline([]) is None
    assert recent_baseline(days, battles=200) == 4


counter = st.integers(min_value=-5, max_value=10**6)
tracker_state = st.dictionaries(
    st.integers(min_value=1, max_value=60_000), st.lists(counter, min_size=13, max_size=13), max_size=12
)


@settings(max_examples=300, deadline=None)
@given(start=tracker_state, end=tracker_state, shared=st.booleans())
def test_tracker_states_give_the_differences_their_counters_give(start, end, shared):
    """A history compares tracker states (rows in TANK_COUNTERS order) without turning them into
    counters first: the battles played must be exactly what the counters' differences say,
    including tanks new in the period, counters that went down and wins past the battles."""
    if shared:  # the common case: the same tanks on both sides, some played, some not
        end = {tank_id: [v + (i % 3) * (tank_id % 2) for i, v in enumerate(row)] for tank_id, row in start.items()}
    assert state_differences(start, end) == tank_differences(as_counters(start), as_counters(end))
    assert state_differences(None, end) == tank_differences({}, as_counters(end))
