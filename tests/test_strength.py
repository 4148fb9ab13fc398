"""Tank strength with the drivers' skill taken out (server/domain/strength.py): the estimator by hand,
its sample floors, and the check against the simulator's built-in tank strength."""

from __future__ import annotations

import datetime as dt

import pytest

from scripts.strength_check import correlations, simulated_period, spearman
from scripts.upstream_sim import World
from server.domain.strength import STRENGTH_KEYS, strength_figures, strength_table
from store.constants import TANK_COUNTERS
from tests.helpers import EXPECTED_VALUES_FILE

B, W, D = (TANK_COUNTERS.index(n) for n in ("battles", "wins", "damage_dealt"))


def row(battles: int, wins: int, damage: int) -> list[int]:
    out = [0] * len(TANK_COUNTERS)
    out[B], out[W], out[D] = battles, wins, damage
    return out


TIERS = {1: 10, 2: 10, 3: 10, 9: 9}


def test_relative_win_rate_is_the_tanks_win_rate_minus_its_drivers_on_their_other_tanks_of_the_tier():
    accounts = {
        # 60 % on tank 1, 50 % on the tier's other tanks (2 and 3); tier IX does not count.
        100: {1: row(100, 60, 200_000), 2: row(50, 25, 100_000), 3: row(50, 25, 100_000), 9: row(40, 40, 1)},
        # 40 % on tank 1, 30 % on tank 2.
        200: {1: row(300, 120, 300_000), 2: row(100, 30, 100_000)},
        # Only tank 1 at this tier: no baseline, left out.
        300: {1: row(500, 500, 5_000_000)},
    }
    table = strength_table(accounts, TIERS, min_other_battles=10)
    players, battles, win_rate, baseline, se, *_ = table[1]
    assert (players, battles) == (2, 400)
    assert win_rate == pytest.approx(100 * 180 / 400)
    # Battle-weighted: (100 x 50 % + 300 x 30 %) / 400.
    assert baseline == pytest.approx((100 * 50 + 300 * 30) / 400)
    figures = strength_figures(table[1], min_players=2, min_battles=100)
    assert figures["relative_win_rate"] == round(figures["win_rate"] - figures["baseline_win_rate"], 2)
    assert figures["relative_win_rate"] == pytest.approx(45.0 - 35.0)
    interval = figures["relative_win_rate_interval"]
    assert interval["low"] <= figures["relative_win_rate"] <= interval["high"]


def test_relative_damage_compares_with_what_the_drivers_deal_in_the_tiers_average_tank():
    # Both players deal exactly the average on tanks 2 and 3 and twice it on tank 1.
    accounts = {
        a: {1: row(100, 50, 100 * 4000), 2: row(100, 50, 100 * 2000), 3: row(100, 50, 100 * 2000)} for a in range(5)
    }
    figures = strength_figures(strength_table(accounts, TIERS, 10)[1], min_players=5, min_battles=100)
    # Tier X average: (4000 + 2000 + 2000) / 3 per battle; a driver at 1.0 of the average elsewhere.
    assert figures["baseline_damage"] == pytest.approx(8000 / 3, abs=0.01)
    assert figures["relative_damage"] == pytest.approx(100 * (4000 / (8000 / 3) - 1), abs=0.01)


def test_figures_are_null_below_the_sample_but_the_sample_is_given():
    accounts = {a: {1: row(20, 10, 20_000), 2: row(20, 10, 20_000)} for a in range(3)}
    entry = strength_table(accounts, TIERS, 10)[1]
    figures = strength_figures(entry, min_players=20, min_battles=200)
    assert (figures["players"], figures["battles"]) == (3, 60)
    assert all(figures[key] is None for key in STRENGTH_KEYS)
    assert strength_figures(None, 20, 200)["players"] == 0


def test_spearman_is_a_rank_correlation():
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 2, 3, 4], [1, 100, 2, 3]) == pytest.approx(0.4)


def test_on_the_simulator_the_adjusted_ranking_matches_the_built_in_strength_better_than_raw():
    """The simulator's tanks scale every driver's win rate and damage by the tank's own expected
    values: the truth. Over 1,500 accounts' 30 days, the skill-adjusted figures rank each tier's
    tanks closer to it than the raw win rate and damage do (docs/data.md, "Tank strength", has
    the figures at 3,000 accounts)."""
    world = World(expected_values=EXPECTED_VALUES_FILE, profile_cache=16)
    now = dt.datetime(2026, 11, 1, tzinfo=dt.UTC).timestamp()
    result = correlations(world, simulated_period(world, "eu", 1500, 30, now), min_tanks=10)
    assert len(result) >= 3, result
    n = sum(r["tanks"] for r in result.values())

    def mean(key: str) -> float:
        return sum(r[key] * r["tanks"] for r in result.values()) / n

    assert mean("win_rate_adjusted") > mean("win_rate_raw"), result
    assert mean("damage_adjusted") > mean("damage_raw"), result
    assert mean("win_rate_adjusted") > 0.5, result
