"""A roster's ratings from career totals: WN8 from the totals and the battles per tank equals the
per-tank WN8 when every played tank has expected values, and says its coverage when some lack them;
the colour bands come from the one scale table the index serves."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.contract.catalogue.bands import BAND_COLOURS, RATING_SCALES, band_of, scale_table
from server.domain.ratings import ExpectedValues, TankExpectation, account_wn8
from server.domain.roster import GLANCE_TOTALS, glance_of, glance_row, wn8_from_totals

TABLE = ExpectedValues(
    {
        tank_id: TankExpectation(damage=300 + 90 * tank_id, spot=1.1, frag=0.9, defence=0.7, win_rate=49.5)
        for tank_id in range(1, 21)
    },
    "test",
)
PER_TANK = ("damage_dealt", "spotted", "frags", "dropped_capture_points")

# One tank's battles and, per battle, what the player did in it.
tank_rows = st.tuples(
    st.integers(1, 40),  # tank id: 1-20 have expected values, 21-40 none
    st.integers(1, 3_000),  # battles
    st.floats(0.2, 0.8),  # win share
    st.floats(50, 4_000),  # damage a battle
    st.floats(0, 3),  # spots
    st.floats(0, 2.5),  # frags
    st.floats(0, 2),  # defence points
)


def per_tank(rows) -> list[dict]:
    tanks = {}
    for tank_id, battles, win_share, damage, spots, frags, defence in rows:
        tanks[tank_id] = {
            "tank_id": tank_id,
            "battles": battles,
            "wins": round(battles * win_share),
            "damage_dealt": round(battles * damage),
            "spotted": round(battles * spots),
            "frags": round(battles * frags),
            "dropped_capture_points": round(battles * defence),
            "capture_points": 0,
        }
    return list(tanks.values())


def career(tanks: list[dict]) -> dict:
    return {name: sum(t[name] for t in tanks) for name in GLANCE_TOTALS}


@settings(max_examples=200, deadline=None)
@given(st.lists(tank_rows.filter(lambda r: r[0] <= 20), min_size=1, max_size=30))
def test_wn8_from_totals_is_the_per_tank_wn8_when_every_tank_has_expected_values(rows):
    tanks = per_tank(rows)
    wn8, coverage = wn8_from_totals(career(tanks), [[t["tank_id"], t["battles"], t["wins"]] for t in tanks], TABLE)
    assert coverage == 1
    assert wn8 == pytest.approx(account_wn8(tanks, TABLE), rel=1e-12, abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(st.lists(tank_rows, min_size=2, max_size=30), st.integers(50, 4_000))
def test_with_tanks_lacking_expected_values_it_is_exact_when_they_are_played_as_the_others(rows, damage):
    """Below full coverage the totals' damage, spots, frags and defence are shared out by battles:
    exact when the player does as well per battle in the unrated tanks as in the rated ones, and
    the row's coverage says how much rested on that."""
    # Battles in tens and figures a battle in tenths: every tank's counters are exact integers.
    rows = [(t, 10 * b, w, damage, 1.0, 0.8, 0.5) for t, b, w, *_ in rows]
    tanks = per_tank(rows)
    rated = [t for t in tanks if TABLE.get(t["tank_id"]) is not None]
    wn8, coverage = wn8_from_totals(career(tanks), [[t["tank_id"], t["battles"], t["wins"]] for t in tanks], TABLE)
    battles = sum(t["battles"] for t in tanks)
    assert coverage == pytest.approx(sum(t["battles"] for t in rated) / battles)
    if not rated:
        assert wn8 is None and coverage == 0
        return
    assert wn8 == pytest.approx(account_wn8(tanks, TABLE), rel=1e-9, abs=1e-9)


def test_the_row_of_a_fetch_says_its_figures_coverage_and_bands():
    tanks = per_tank([(1, 400, 0.55, 1500, 1, 1, 0.5), (30, 100, 0.5, 900, 1, 1, 0.5)])
    info = {"nickname": "Tester", "clan_id": 7, "last_battle_time": 1_700_000_000, "global_rating": 6000}
    info["statistics"] = {"all": career(tanks)}
    account_tanks = [{**t, "mark_of_mastery": 3} for t in tanks]
    glance = glance_of(5, info, account_tanks, {"clan_id": 7, "tag": "ABC", "role": "private"}, 7000, 1000.0)
    row = glance_row(glance, 30, None, TABLE, {1: 5, 30: 6}, "live")
    assert row["reason"] is None and row["fetched_at"] == 1000 and row["source"] == "live"
    assert row["battles"] == 500 and row["win_rate"] == round(100 * row["wins"] / 500, 2)
    assert row["wn8_coverage"] == 0.8 and row["wn8"] is not None
    assert row["clan"] == {"clan_id": 7, "tag": "ABC", "role": "private"}
    assert row["tank"] == {"tank_id": 30, "battles": 100, "wins": 50, "win_rate": 50.0, "mark_of_mastery": 3}
    assert row["bands"]["wtr"] == band_of("wtr", 7000) == {"band": "good", "color": BAND_COLOURS["good"]}
    # An account that played nothing, and an id that is no account: rows with their reason.
    empty = glance_of(6, {**info, "statistics": {"all": {}}}, [], None, None, 1000.0)
    assert glance_row(empty, None, None, TABLE, {}, "live")["reason"] == "no_battles"
    gone = glance_row(glance_of(7, None, None, None, None, 1000.0), 1, None, TABLE, {}, "live")
    assert gone["reason"] == "no_account" and gone["nickname"] is None and gone["tank"] is None


def test_each_scale_covers_every_value_once_in_order():
    table = scale_table()
    assert set(table) == {"wn8", "wtr", "win_rate", "efficiency"}
    for rating, scale in table.items():
        bands = scale["bands"]
        assert bands[0]["from"] is None and bands[-1]["below"] is None
        for lower, upper in zip(bands, bands[1:]):
            assert lower["below"] == upper["from"] and lower["below"] is not None
            assert list(BAND_COLOURS).index(lower["band"]) < list(BAND_COLOURS).index(upper["band"])
        for band in bands:  # a value at a band's lower bound is in that band
            probe = band["from"] if band["from"] is not None else band["below"] - 1
            assert band_of(rating, probe) == {"band": band["band"], "color": band["color"]}
        assert len(bands) == len(RATING_SCALES[rating][0]) + 1
    assert band_of("wn8", None) is None
    assert band_of("wn8", 1650)["band"] == "very_good" and band_of("win_rate", 49.99)["band"] == "average"
