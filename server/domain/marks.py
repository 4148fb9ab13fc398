"""Marks of excellence: combined damage from period totals, the tanks' mark thresholds, a player's progress.

The estimates and how far they can be from the game's own are explained in docs/data.md
("Marks of excellence"); every name below is used there.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from server.domain.intervals import Z95
from store.constants import TANK_COUNTERS

BATTLES = TANK_COUNTERS.index("battles")
DAMAGE = TANK_COUNTERS.index("damage_dealt")
STUN = TANK_COUNTERS.index("stun_assisted_damage")
WIDTH = len(TANK_COUNTERS)
MARK_PERCENTILES = (65, 85, 95)  # the game's 1st, 2nd and 3rd mark: beating this share of the tank's players
MARK_NAMES = ("first", "second", "third")
MIN_TIER = 5  # the game awards marks from tier V


def combined_damage(battles: int, damage: int, stun: int, assist: Sequence[int] | None) -> float | None:
    """Per-battle combined damage over a period: damage dealt plus the largest of the period's
    average spotting, tracking and stun assistance per battle — a lower bound of the game's
    per-battle "damage plus the largest assistance" (the mean of a maximum is at least the maximum
    of the means). `assist` is the account's ACCOUNT_ASSIST change over the same period (spotting
    and tracking exist only per account: the account's averages stand for each tank's); None
    when unknown, or without battles."""
    if battles <= 0 or assist is None or len(assist) < 3 or assist[0] <= 0:
        return None
    radio = max(0, assist[1]) / assist[0]
    track = max(0, assist[2]) / assist[0]
    return (damage + max(radio * battles, track * battles, max(0, stun))) / battles


def percentile(values: Sequence[float], p: float) -> float:
    """The p-th percentile (0..100) of `values` by linear interpolation between the closest ranks
    ('inclusive': p0 the smallest, p100 the largest) — what statistics.quantiles(method="inclusive")
    gives at p = 1..99."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * p / 100.0
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def thresholds(values: Sequence[float]) -> list[float]:
    """[1st, 2nd, 3rd mark, top]: the MARK_PERCENTILES of `values` and their largest."""
    return [round(percentile(values, p), 2) for p in MARK_PERCENTILES] + [round(max(values), 2)]


def marks_table(
    accounts: Mapping[int, Mapping[int, Sequence[int]]],
    assists: Mapping[int, Sequence[int]],
    tiers: Mapping[int, int],
    min_battles: int,
    min_players: int,
) -> dict[int, dict[str, Any]]:
    """Every tank's mark thresholds over a window, from each account's per-tank sums over it
    (`accounts`: {account_id: {tank_id: counters}}) and its assistance change (`assists`; an
    account without one — a record of the window written before assistance was kept — counts
    nowhere). Per tank of tier MIN_TIER and up that a counted account played: `players` and
    `battles` of the players with at least `min_battles` battles on it, `thresholds` ([1st, 2nd,
    3rd, top] combined damage, null below `min_players` such players) and `grid` (their combined
    damage's percentiles 1..99, for a player's progress; null likewise)."""
    values: dict[int, list[float]] = {}
    battles: dict[int, int] = {}
    for account_id, rows in accounts.items():
        assist = assists.get(account_id)
        if assist is None:
            continue
        for tank_id, row in rows.items():
            if len(row) < WIDTH or tiers.get(tank_id, 0) < MIN_TIER or row[BATTLES] < min_battles:
                continue
            combined = combined_damage(row[BATTLES], row[DAMAGE], row[STUN], assist)
            if combined is None:
                continue
            values.setdefault(tank_id, []).append(combined)
            battles[tank_id] = battles.get(tank_id, 0) + row[BATTLES]
    table: dict[int, dict[str, Any]] = {}
    for tank_id, found in values.items():
        enough = len(found) >= max(2, min_players)
        table[tank_id] = {
            "players": len(found),
            "battles": battles[tank_id],
            "thresholds": thresholds(found) if enough else None,
            "grid": statistics.quantiles(found, n=100, method="inclusive") if enough else None,
        }
    return table


def threshold_intervals(
    grid: Sequence[float] | None, top: float | None, players: int
) -> dict[str, dict[str, float] | None] | None:
    """The 95 % interval of each mark threshold ({first, second, third}: {low, high}) when the counted
    players are a random sample: a threshold is the p-th percentile of the players' values, and the
    sample's p-th percentile lies, 95 times in 100, between its percentiles p -/+ 1.96 sqrt(p (1 - p)
    / n) (the binomial count of players below the realm's percentile: a distribution-free interval),
    read from the tank's grid of percentiles 1..99 and its top (100). A mark's interval is null where
    that reaches past the grid (too few players to bound it); None without a grid."""
    if grid is None or top is None or players < 2:
        return None

    def at(q: float) -> float:
        if q >= 99:
            return grid[98] + (top - grid[98]) * (q - 99)
        i = int(q)
        return grid[i - 1] + (grid[i] - grid[i - 1]) * (q - i)

    out: dict[str, dict[str, float] | None] = {}
    for name, p in zip(MARK_NAMES, MARK_PERCENTILES):
        half = 100.0 * Z95 * math.sqrt(p / 100.0 * (1 - p / 100.0) / players)
        low, high = p - half, p + half
        out[name] = {"low": round(at(low), 2), "high": round(at(high), 2)} if low >= 1 and high <= 100 else None
    return out


def next_mark(value: float | None, marks: Sequence[float] | None) -> dict[str, Any] | None:
    """The next mark a per-battle combined damage of `value` reaches for, against a tank's
    [1st, 2nd, 3rd, top]: {mark: 1..3, combined_damage: its threshold, needed: how much more per
    battle}; {mark: None, ...} past the 3rd; None without a value or thresholds."""
    if value is None or marks is None:
        return None
    for number, threshold in enumerate(marks[:3], 1):
        if value < threshold:
            return {"mark": number, "combined_damage": threshold, "needed": round(threshold - value, 2)}
    return {"mark": None, "combined_damage": None, "needed": 0.0}


def estimated_marks(value: float | None, marks: Sequence[float] | None) -> int | None:
    """How many marks a combined damage of `value` stands at against [1st, 2nd, 3rd, top] (0..3)."""
    if value is None or marks is None:
        return None
    return sum(1 for threshold in marks[:3] if value >= threshold)


def mastery_reach(best_xp: int | None, thresholds: Sequence[float] | None) -> int | None:
    """The highest mastery badge (0 none, 1-3 3rd to 1st class, 4 Ace Tanker) a battle of `best_xp`
    base XP reaches against [3rd class, 2nd, 1st, Ace] XP thresholds; None without either."""
    if best_xp is None or thresholds is None:
        return None
    return sum(1 for threshold in thresholds[:4] if best_xp >= threshold)
