"""Tests for server.domain.ratings: WN8, WN7, efficiency and the XVM expected-values table."""

import json
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest

from server.domain.ratings import (
    ExpectedValues,
    TankExpectation,
    account_wn8,
    average_tier,
    compute_ratings,
    efficiency,
    load_expected_values_file,
    parse_expected_values,
    tank_wn8,
    wn7,
    wn8_color,
    wn8_from_normalized,
    wn8_from_ratios,
)

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
REAL_TABLE = SHARED_DATA / "wn8exp-2024-09-12.json"

# Per-battle values equal to the expected values give every ratio 1:
# 980 + 210 + 155 + 75 + 145 = 1565.
WN8_AT_EXPECTED = 1565.0


@pytest.fixture(scope="module")
def real_table():
    if not REAL_TABLE.exists():
        pytest.skip(f"real XVM table not available at {REAL_TABLE}")
    return load_expected_values_file(REAL_TABLE)


def simple_table(*entries):
    """Table of (IDNum, expDamage) with spot/frag/def 1 and a 50 % win rate."""
    return ExpectedValues.from_json(
        {
            "header": {"version": "test"},
            "data": [
                {
                    "IDNum": tank_id,
                    "expDamage": damage,
                    "expSpot": 1.0,
                    "expFrag": 1.0,
                    "expDef": 1.0,
                    "expWinRate": 50.0,
                }
                for tank_id, damage in entries
            ],
        }
    )


def tank_at_expected(table, tank_id, battles):
    """Tank stats whose per-battle averages are exactly the table's expectation."""
    exp = table.get(tank_id)
    return {
        "tank_id": tank_id,
        "battles": battles,
        "wins": battles * exp.win_rate / 100,
        "damage_dealt": battles * exp.damage,
        "frags": battles * exp.frag,
        "spotted": battles * exp.spot,
        "dropped_capture_points": battles * exp.defence,
    }


def stats(tank_id, battles, damage, wins=None, frags=None, spotted=None, defence=None):
    """Tank stats for simple_table: everything but damage defaults to the expectation."""
    return {
        "tank_id": tank_id,
        "battles": battles,
        "wins": battles // 2 if wins is None else wins,
        "damage_dealt": damage,
        "frags": battles if frags is None else frags,
        "spotted": battles if spotted is None else spotted,
        "dropped_capture_points": battles if defence is None else defence,
    }


# --- efficiency ------------------------------------------------------------


def test_efficiency_matches_xvm_sample_player():
    # XVM shows 1462 for this player.
    result = efficiency(19807, 29176230, 23928, 22198, 14537, 38210, 7.53855)
    assert result == pytest.approx(1461.7, abs=0.1)


def test_efficiency_matches_second_sample_player():
    result = efficiency(39441, 33753828, 26228, 40334, 22125, 24261, 7.27749)
    assert result == pytest.approx(881.1, abs=0.1)


def test_efficiency_without_battles_or_tier_is_none():
    assert efficiency(0, 0, 0, 0, 0, 0, 7.0) is None
    assert efficiency(100, 50000, 80, 90, 40, 30, None) is None


# --- WN8 -------------------------------------------------------------------


def test_wn8_from_published_normalized_values():
    assert wn8_from_normalized(1.99, 2.02, 1.30, 1.98, 1.44) == pytest.approx(3710.16, abs=0.01)


def test_wn8_all_ratios_one_is_1565():
    assert wn8_from_ratios(1, 1, 1, 1, 1) == pytest.approx(WN8_AT_EXPECTED)


def test_wn8_win_component_is_capped():
    # rWINc is capped at 1.8, so a win ratio beyond that adds nothing.
    at_cap = 0.71 + 1.8 * (1 - 0.71)
    assert wn8_from_ratios(1, 1, 1, 1, at_cap + 0.5) == pytest.approx(wn8_from_ratios(1, 1, 1, 1, at_cap))


def test_wn8_single_tank_at_expected_values(real_table):
    tank = tank_at_expected(real_table, 1, 437)
    assert account_wn8([tank], real_table) == pytest.approx(WN8_AT_EXPECTED)
    assert tank_wn8(tank, real_table) == pytest.approx(WN8_AT_EXPECTED)


def test_wn8_mix_of_real_tanks_at_expected_values(real_table):
    tanks = [
        tank_at_expected(real_table, tank_id, battles)
        for tank_id, battles in ((1, 12), (33, 2500), (49, 731), (81, 5), (113, 98))
    ]
    assert account_wn8(tanks, real_table) == pytest.approx(WN8_AT_EXPECTED)


def test_account_wn8_differs_from_battle_weighted_mean_of_tank_wn8():
    table = simple_table((1, 1000.0), (2, 500.0))
    # Damage ratio 2 over 300 battles and 0.5 over 100 battles; all else at expectation.
    good = stats(1, 300, 600_000)
    bad = stats(2, 100, 25_000)

    # Account: damage ratio 625000/350000 = 1.785714, rDAMAGEc = 2.007326;
    # other ratios 1 -> 1190 * 2.007326 + 375 = 2763.72.
    account = account_wn8([good, bad], table)
    assert account == pytest.approx(1190 * ((625000 / 350000 - 0.22) / 0.78) + 375)
    assert account == pytest.approx(2763.72, abs=0.01)

    # Tank 1: rDAMAGEc = 1.78/0.78 -> 1190 * 2.282051 + 375 = 3090.64.
    # Tank 2: rDAMAGEc = 0.358974 caps rFRAGc at 0.558974 and rSPOTc/rDEFc at 0.458974
    #   -> 351.795 + 42.138 + 39.766 + 19.242 + 145 = 597.94.
    assert tank_wn8(good, table) == pytest.approx(3090.64, abs=0.01)
    assert tank_wn8(bad, table) == pytest.approx(597.94, abs=0.01)
    weighted_mean = (300 * tank_wn8(good, table) + 100 * tank_wn8(bad, table)) / 400
    assert weighted_mean == pytest.approx(2467.47, abs=0.01)

    assert abs(account - weighted_mean) > 100


def test_tanks_missing_from_table_are_skipped_on_both_sides(real_table):
    known = [tank_at_expected(real_table, 1, 200), tank_at_expected(real_table, 33, 50)]
    unknown_id = 999_999_999
    assert unknown_id not in real_table
    unknown = {
        "tank_id": unknown_id,
        "battles": 10,
        "wins": 10,
        "damage_dealt": 10**7,
        "frags": 150,
        "spotted": 150,
        "dropped_capture_points": 150,
    }
    assert account_wn8(known + [unknown], real_table) == pytest.approx(account_wn8(known, real_table))
    assert tank_wn8(unknown, real_table) is None


def test_wn8_zero_battles_is_none_not_an_error():
    table = simple_table((1, 1000.0))
    assert account_wn8([], table) is None
    assert account_wn8([stats(1, 0, 0, wins=0, frags=0, spotted=0, defence=0)], table) is None
    assert tank_wn8(stats(1, 0, 0, wins=0, frags=0, spotted=0, defence=0), table) is None
    # Battles only in tanks the table does not know: nothing to compare against.
    assert account_wn8([stats(7, 40, 40_000)], table) is None


def test_tank_with_zero_battles_does_not_change_account_wn8():
    table = simple_table((1, 1000.0), (2, 500.0))
    played = stats(1, 100, 150_000)
    # Zero battles but (inconsistent) leftover damage must not count.
    unplayed = stats(2, 0, 99_999, wins=0, frags=0, spotted=0, defence=0)
    assert account_wn8([played, unplayed], table) == pytest.approx(account_wn8([played], table))


# --- expected values table -------------------------------------------------


def test_real_table_loads(real_table):
    assert real_table.version == "2024-09-12"
    assert len(real_table) > 500
    assert 1 in real_table
    exp = real_table.get(1)
    assert (exp.damage, exp.spot, exp.frag, exp.defence, exp.win_rate) == (486.992, 1.379, 0.982, 1.146, 54.854)
    assert real_table.get(999_999_999) is None


def test_parse_expected_values_from_bytes(real_table):
    parsed = parse_expected_values(REAL_TABLE.read_bytes())
    assert parsed.version == real_table.version
    assert len(parsed) == len(real_table)


def test_version_falls_back_when_header_missing():
    table = ExpectedValues.from_json(
        {"data": [{"IDNum": 1, "expDamage": 1, "expSpot": 1, "expFrag": 1, "expDef": 1, "expWinRate": 50}]}
    )
    assert table.version == "unknown"


def test_table_built_directly_copies_its_mapping():
    by_tank = {1: TankExpectation(damage=100.0, spot=1.0, frag=1.0, defence=1.0, win_rate=50.0)}
    table = ExpectedValues(by_tank, "v")
    by_tank[2] = by_tank[1]
    assert 2 not in table and len(table) == 1


def test_table_is_not_affected_by_later_changes_to_the_source():
    entry = {"IDNum": 1, "expDamage": 100.0, "expSpot": 1.0, "expFrag": 1.0, "expDef": 1.0, "expWinRate": 50.0}
    doc = {"header": {"version": "v"}, "data": [entry]}
    table = ExpectedValues.from_json(doc)
    entry["expDamage"] = 5.0
    doc["data"].append(dict(entry, IDNum=2))
    assert table.get(1).damage == 100.0
    assert 2 not in table
    with pytest.raises(FrozenInstanceError):
        table.get(1).damage = 1.0


GOOD_ENTRY = {"IDNum": 1, "expDamage": 100.0, "expSpot": 1.0, "expFrag": 1.0, "expDef": 1.0, "expWinRate": 50.0}


@pytest.mark.parametrize(
    "doc, message",
    [
        ([GOOD_ENTRY], "top level"),
        ({"header": {"version": "x"}}, '"data"'),
        ({"data": {"1": GOOD_ENTRY}}, '"data"'),
        ({"data": []}, "empty"),
        ({"data": ["not an object"]}, "data[0]"),
        ({"data": [{k: v for k, v in GOOD_ENTRY.items() if k != "expDamage"}]}, "expDamage"),
        ({"data": [dict(GOOD_ENTRY, IDNum="one")]}, "IDNum"),
        ({"data": [dict(GOOD_ENTRY, IDNum=1.5)]}, "IDNum"),
        ({"data": [dict(GOOD_ENTRY, expSpot="1.0x")]}, "expSpot"),
        ({"data": [dict(GOOD_ENTRY, expFrag=True)]}, "expFrag"),
        ({"data": [dict(GOOD_ENTRY, expDef=-0.5)]}, "expDef"),
        ({"data": [dict(GOOD_ENTRY, expWinRate=0)]}, "expWinRate"),
    ],
)
def test_table_without_a_usable_row_raises_value_error(doc, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        ExpectedValues.from_json(doc)


def test_numbers_as_strings_are_accepted():
    """Older XVM copies quote every number; the table must load all the same."""
    quoted = {key: str(value) for key, value in GOOD_ENTRY.items()}
    table = ExpectedValues.from_json({"header": {"version": "old"}, "data": [quoted]})
    assert table.get(1) == ExpectedValues.from_json({"data": [GOOD_ENTRY]}).get(1)
    assert table.rows_skipped == 0


def test_bad_rows_are_skipped_and_counted_not_fatal():
    rows = [
        GOOD_ENTRY,
        {"IDNum": 2},
        "junk",
        dict(GOOD_ENTRY, IDNum=3, expDamage="n/a"),
        dict(GOOD_ENTRY, expDamage=999.0),
        dict(GOOD_ENTRY, IDNum=4),
    ]
    table = ExpectedValues.from_json({"data": rows})
    assert sorted(t for t in (1, 2, 3, 4) if t in table) == [1, 4]
    assert table.get(1).damage == 100.0  # the first of two rows for one tank is kept
    assert table.rows_skipped == 4
    assert any("duplicate" in reason for reason in table.skip_reasons)


def test_real_table_with_every_number_quoted_loads_identically(real_table):
    doc = json.loads(REAL_TABLE.read_bytes())
    doc["data"] = [{k: str(v) for k, v in row.items()} for row in doc["data"]]
    quoted = parse_expected_values(json.dumps(doc).encode())
    assert len(quoted) == len(real_table) and quoted.rows_skipped == 0
    assert all(quoted.get(t) == real_table.get(t) for t in (1, 33, 49))


@pytest.mark.parametrize("raw", [b"", b"{not json", b"\xff\xfe\x00", b"null"])
def test_unparseable_bytes_raise_value_error(raw):
    with pytest.raises(ValueError, match="expected values"):
        parse_expected_values(raw)


def test_load_file_reports_bad_content(tmp_path):
    path = tmp_path / "wn8exp.json"
    path.write_text(json.dumps({"header": {"version": "x"}, "data": [{"IDNum": 1}]}))
    with pytest.raises(ValueError, match="expDamage"):
        load_expected_values_file(path)


# --- WN7 -------------------------------------------------------------------


def test_wn7_hand_computed_value():
    # No published worked example was found, so by hand, per battle: 1 frag,
    # 1000 damage, 1 spot, 1 defence point, 50 % wins, tier 6 (no low-tier penalty):
    #   frags   (1240 - 1040 / 6^0.164) * 1        = 1240 - 1040/1.341583 = 464.795
    #   damage  1000 * 530 / (184 * e^1.44 + 130)  = 1000 * 530/906.608  = 584.597
    #   spot    1 * 125 * min(6, 3) / 3            = 125
    #   defence min(1, 2.2) * 100                  = 100
    #   wins    (185 / (0.17 + e^(15 * -0.134)) - 500) * 0.45
    #           = (185 / 0.303989 - 500) * 0.45    = 48.859
    #   penalty (5 - min(6, 5)) * 125 / (...)      = 0
    #   total                                      = 1323.25
    result = wn7(1000, 500, 1_000_000, 1000, 1000, 1000, 6)
    assert result == pytest.approx(1323.25, abs=0.01)


def test_wn7_hand_computed_value_with_low_tier_penalty():
    # 880 battles at tier 2, per battle: 1 frag, 300 damage, 1 spot, 1 defence, 50 % wins:
    #   frags   1240 - 1040 / 2^0.164 = 1240 - 1040/1.120389 = 311.751
    #   damage  300 * 530 / (184 * e^0.48 + 130) = 300 * 530/427.358 = 372.054
    #   spot    1 * 125 * min(2, 3) / 3 = 83.333
    #   defence 100;  wins 48.859 (as above)
    #   penalty (5 - 2) * 125 / (1 + e^((2 - (880/220)^(3/2)) * 1.5))
    #           = 375 / (1 + e^((2 - 8) * 1.5)) = 375 / (1 + e^-9) = 374.954
    #   total   311.751 + 372.054 + 83.333 + 100 + 48.859 - 374.954 = 541.04
    result = wn7(880, 440, 880 * 300, 880, 880, 880, 2)
    assert result == pytest.approx(541.04, abs=0.01)


def test_wn7_more_damage_scores_higher():
    base = wn7(1000, 500, 800_000, 900, 1100, 700, 7.2)
    assert wn7(1000, 500, 900_000, 900, 1100, 700, 7.2) > base


def test_wn7_higher_win_rate_scores_higher():
    base = wn7(1000, 480, 800_000, 900, 1100, 700, 7.2)
    assert wn7(1000, 560, 800_000, 900, 1100, 700, 7.2) > base


def test_wn7_defence_counts_only_up_to_2_2_per_battle():
    assert wn7(100, 50, 80_000, 90, 110, 220, 7) == pytest.approx(wn7(100, 50, 80_000, 90, 110, 500, 7))
    assert wn7(100, 50, 80_000, 90, 110, 100, 7) < wn7(100, 50, 80_000, 90, 110, 220, 7)


def test_wn7_penalises_many_battles_at_low_tier_only():
    # Same per-battle averages; only the number of battles differs.
    def per_battle(battles, tier):
        return wn7(battles, battles // 2, battles * 300, battles, battles, battles, tier)

    assert per_battle(10_000, 2) < per_battle(100, 2) - 100
    assert per_battle(10_000, 6) == pytest.approx(per_battle(100, 6))


def test_wn7_without_battles_or_tier_is_none():
    assert wn7(0, 0, 0, 0, 0, 0, 6) is None
    assert wn7(10, 5, 5000, 10, 10, 10, None) is None


def test_wn7_rejects_tier_below_one():
    with pytest.raises(ValueError, match="tier"):
        wn7(10, 5, 5000, 10, 10, 10, 0.5)


# --- average tier and compute_ratings --------------------------------------


def test_average_tier_is_battle_weighted_and_skips_unknown_tanks():
    tanks = [
        {"tank_id": 1, "battles": 300},
        {"tank_id": 2, "battles": 100},
        {"tank_id": 3, "battles": 5000},
        {"tank_id": 4, "battles": 0},
    ]
    assert average_tier(tanks, {1: 8, 2: 4, 4: 10}) == pytest.approx(7.0)
    assert average_tier(tanks, {3: 1}) == pytest.approx(1.0)
    assert average_tier(tanks, {}) is None


def test_compute_ratings(real_table):
    tanks = [tank_at_expected(real_table, 1, 100), tank_at_expected(real_table, 33, 300)]
    totals = {
        "battles": 400,
        "wins": 216,
        "damage_dealt": 300_000,
        "frags": 400,
        "spotted": 500,
        "dropped_capture_points": 450,
        "capture_points": 600,
    }
    result = compute_ratings(totals, tanks, real_table, {1: 5, 33: 8})
    assert result["wn8"] == WN8_AT_EXPECTED
    assert result["average_tier"] == 7.25
    assert result["efficiency"] == round(efficiency(400, 300_000, 400, 500, 450, 600, 7.25), 2)
    assert result["wn7"] == round(wn7(400, 216, 300_000, 400, 500, 450, 7.25), 2)
    assert result["expected_values_version"] == "2024-09-12"


def test_compute_ratings_for_a_new_account_has_no_values():
    totals = {
        "battles": 0,
        "wins": 0,
        "damage_dealt": 0,
        "frags": 0,
        "spotted": 0,
        "dropped_capture_points": 0,
        "capture_points": 0,
    }
    table = simple_table((1, 1000.0))
    assert compute_ratings(totals, [], table, {1: 5}) == {
        "wn8": None,
        "wn7": None,
        "efficiency": None,
        "average_tier": None,
        "expected_values_version": "test",
        "expected_values": None,  # nothing played: no rows used
    }


def _tank(tank_id: int, battles: int, damage: int) -> dict:
    return {
        "tank_id": tank_id,
        "battles": battles,
        "wins": battles // 2,
        "damage_dealt": damage,
        "frags": battles,
        "spotted": battles,
        "dropped_capture_points": battles,
    }


def test_a_tank_the_table_lacks_counts_in_wn8_with_its_computed_row_and_the_rating_says_mixed():
    table = simple_table((1, 1000.0))
    gap = TankExpectation(damage=2000.0, spot=1.0, frag=1.0, defence=1.0, win_rate=50.0)
    merged = ExpectedValues.merged(table, {2: gap, 1: gap}, "2026-11-24+ev1", everywhere=False)
    assert merged.get(1) == table.get(1)  # the loaded row stays: computed rows fill gaps only
    assert merged.get(2) == gap and merged.source_of(2) == "computed" and merged.source_of(1) == "table"
    assert merged.version == "test" and merged.computed_version == "2026-11-24+ev1"
    totals = {"battles": 25, "wins": 12, "damage_dealt": 55_000, "frags": 25, "spotted": 25}
    totals.update(dropped_capture_points=25, capture_points=0)
    tanks = [_tank(1, 10, 10_000), _tank(2, 10, 40_000), _tank(3, 5, 5000), _tank(4, 0, 0)]
    alone, with_gap = compute_ratings(totals, tanks, table, {}), compute_ratings(totals, tanks, merged, {})
    # Tank 2 at twice its expected damage lifts WN8 only when its row exists.
    assert with_gap["wn8"] > alone["wn8"]
    assert with_gap["wn8"] == round(account_wn8(tanks[:2], merged), 2)
    assert alone["expected_values"] == {
        "version": "test",
        "source": "table",
        "computed_tanks": 0,
        "unrated_tanks": 2,  # tanks 2 and 3 have no row; tank 4 was not played
        "table_version": "test",
        "computed_version": None,
    }
    assert with_gap["expected_values"] == {
        "version": "2026-11-24+ev1",
        "source": "mixed",
        "computed_tanks": 1,
        "unrated_tanks": 1,
        "table_version": "test",
        "computed_version": "2026-11-24+ev1",
    }
    everywhere = ExpectedValues.merged(table, {2: gap, 1: gap}, "2026-11-24+ev1", everywhere=True)
    assert everywhere.get(1) == gap
    assert compute_ratings(totals, tanks[:2], everywhere, {})["expected_values"]["source"] == "computed"
    # No computed row used: the loaded table itself, and a rating says "table".
    assert ExpectedValues.merged(table, {1: gap}, "v", everywhere=False) is table


def test_compute_ratings_without_tier_data_still_gives_wn8():
    table = simple_table((1, 1000.0))
    totals = {
        "battles": 10,
        "wins": 5,
        "damage_dealt": 10_000,
        "frags": 10,
        "spotted": 10,
        "dropped_capture_points": 10,
        "capture_points": 0,
    }
    result = compute_ratings(totals, [stats(1, 10, 10_000)], table, {})
    assert result["wn8"] == WN8_AT_EXPECTED
    assert result["wn7"] is None and result["efficiency"] is None


# --- colour scale ----------------------------------------------------------


@pytest.mark.parametrize(
    "value, label",
    [
        (0, "very_bad"),
        (299.99, "very_bad"),
        (300, "bad"),
        (649, "below_average"),
        (899.5, "average"),
        (1199, "above_average"),
        (1565, "good"),
        (1999, "very_good"),
        (2449, "great"),
        (2899.99, "unicum"),
        (2900, "super_unicum"),
        (5000, "super_unicum"),
        (None, None),
    ],
)
def test_wn8_color(value, label):
    assert wn8_color(value) == label
