"""A tank's strength with its drivers' skill taken out: relative win rate and relative damage.

The estimator, its assumptions and the check that it works are in docs/data.md, "Tank strength".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from server.contract.catalogue.figures import STRENGTH_MIN_BATTLES, STRENGTH_MIN_OTHER_BATTLES, STRENGTH_MIN_PLAYERS
from server.domain.intervals import interval, ratio_se
from store.constants import TANK_COUNTERS

__all__ = [
    "STRENGTH_KEYS",
    "STRENGTH_MIN_BATTLES",
    "STRENGTH_MIN_OTHER_BATTLES",
    "STRENGTH_MIN_PLAYERS",
    "strength_figures",
    "strength_table",
]

BATTLES, WINS, DAMAGE = (TANK_COUNTERS.index(name) for name in ("battles", "wins", "damage_dealt"))


class _Ratio:
    """sum(y) / sum(x) with one (x, y) per player, and the sums its clustered variance needs
    (slots: one is added to per player and tank of a period, millions at scale)."""

    __slots__ = ("n", "x", "xx", "xy", "y", "yy")

    def __init__(self) -> None:
        self.n = 0
        self.x = self.y = self.xx = self.xy = self.yy = 0.0

    def add(self, x: float, y: float) -> None:
        self.n += 1
        self.x += x
        self.y += y
        self.xx += x * x
        self.xy += x * y
        self.yy += y * y

    def se(self) -> float:
        """The standard error of the ratio, players independent (server/domain/intervals.py ratio_se)."""
        return ratio_se(self.n, self.x, self.y, self.xx, self.xy, self.yy)


@dataclass
class _Sums:
    """Per tank, over the players with a baseline. Win rate: x = battles on the tank, y = wins on it
    - x times the player's win rate on the tier's other tanks; relative win rate = sum(y) / sum(x).
    Damage: x = battles on the tank x the player's damage ratio on the other tanks x the tier's
    average damage, y = damage on the tank; relative damage = sum(y) / sum(x) - 1."""

    battles: int = 0
    wins: int = 0
    damage: int = 0
    win: _Ratio = field(default_factory=_Ratio)
    damage_ratio: _Ratio = field(default_factory=_Ratio)


def strength_table(
    accounts: Mapping[int, Mapping[int, Sequence[int]]],
    tiers: Mapping[int, int],
    min_other_battles: int,
) -> dict[int, list[float]]:
    """Per tank (of a known tier): [players, battles, win_rate, baseline_win_rate, win_rate_se,
    avg_damage, baseline_damage, damage_ratio_se], over the players who also played at least
    `min_other_battles` battles on other tanks of its tier in the period (`accounts`: per account
    and tank, the period's counters in TANK_COUNTERS order).

    baseline_win_rate: the battle-weighted win rate those players had on their other tanks of the
    tier. baseline_damage: what they would deal per battle in the tier's average tank, from their
    damage on their other tanks of the tier relative to those tanks' averages over everyone.
    Rates are in percent; the standard errors are of the win-rate difference (percentage points)
    and of avg_damage / baseline_damage."""
    # Every tank's average damage over everyone who played it, and each tier's.
    tank_battles: dict[int, int] = {}
    tank_damage: dict[int, int] = {}
    for rows in accounts.values():
        for tank_id, row in rows.items():
            tank_battles[tank_id] = tank_battles.get(tank_id, 0) + row[BATTLES]
            tank_damage[tank_id] = tank_damage.get(tank_id, 0) + row[DAMAGE]
    average = {t: tank_damage[t] / b for t, b in tank_battles.items() if b > 0}
    tier_battles: dict[int, int] = {}
    tier_damage: dict[int, int] = {}
    for tank_id, battles in tank_battles.items():
        tier = tiers.get(tank_id)
        if tier is not None:
            tier_battles[tier] = tier_battles.get(tier, 0) + battles
            tier_damage[tier] = tier_damage.get(tier, 0) + tank_damage[tank_id]
    tier_average = {t: tier_damage[t] / b for t, b in tier_battles.items() if b > 0}

    sums: dict[int, _Sums] = {}
    for rows in accounts.values():
        by_tier: dict[int, list[float]] = {}  # tier: [battles, wins, damage, expected damage]
        for tank_id, row in rows.items():
            tier = tiers.get(tank_id)
            if tier is None or row[BATTLES] <= 0:
                continue
            total = by_tier.setdefault(tier, [0, 0, 0, 0.0])
            total[0] += row[BATTLES]
            total[1] += row[WINS]
            total[2] += row[DAMAGE]
            total[3] += row[BATTLES] * average[tank_id]
        for tank_id, row in rows.items():
            tier = tiers.get(tank_id)
            b = row[BATTLES]
            if tier is None or b <= 0:
                continue
            total = by_tier[tier]
            other = total[0] - b
            if other < min_other_battles:
                continue
            other_rate = (total[1] - row[WINS]) / other
            other_expected = total[3] - b * average[tank_id]
            entry = sums.get(tank_id)
            if entry is None:
                entry = sums[tank_id] = _Sums()
            entry.battles += b
            entry.wins += row[WINS]
            entry.damage += row[DAMAGE]
            entry.win.add(b, row[WINS] - b * other_rate)
            if other_expected > 0:
                entry.damage_ratio.add(b * (total[2] - row[DAMAGE]) / other_expected * tier_average[tier], row[DAMAGE])
    out: dict[int, list[float]] = {}
    for tank_id, s in sums.items():
        win_rate = 100.0 * s.wins / s.battles
        wr_se = s.win.se()
        out[tank_id] = [
            s.win.n,
            s.battles,
            win_rate,
            win_rate - 100.0 * s.win.y / s.battles,
            100.0 * wr_se if wr_se >= 0 else -1.0,
            s.damage / s.battles,
            s.damage_ratio.x / s.battles,
            s.damage_ratio.se(),
        ]
    return out


STRENGTH_KEYS = (
    "relative_win_rate",
    "relative_win_rate_interval",
    "win_rate",
    "baseline_win_rate",
    "relative_damage",
    "relative_damage_interval",
    "avg_damage",
    "baseline_damage",
)


def strength_figures(entry: Sequence[float] | None, min_players: int, min_battles: int) -> dict[str, Any]:
    """A tank's strength as the answers give it, from its strength_table entry: every figure is
    null below `min_players` players or `min_battles` battles; the sample (players, battles) is
    always given. relative_win_rate is win_rate - baseline_win_rate of the rounded figures shown;
    relative_damage is avg_damage / baseline_damage - 1 in percent; each with its 95 % interval."""
    out: dict[str, Any] = dict.fromkeys(STRENGTH_KEYS)
    if entry is None:
        return {**out, "players": 0, "battles": 0}
    players, battles, win_rate, baseline, wr_se, avg_damage, baseline_damage, dmg_se = entry
    out.update(players=int(players), battles=int(battles))
    if players < min_players or battles < min_battles:
        return out
    wr, base = round(win_rate, 2), round(baseline, 2)
    relative = round(wr - base, 2)
    out.update(relative_win_rate=relative, win_rate=wr, baseline_win_rate=base, avg_damage=round(avg_damage, 2))
    out["relative_win_rate_interval"] = interval(relative, wr_se)
    if baseline_damage > 0:
        relative_damage = round(100.0 * (avg_damage / baseline_damage - 1.0), 2)
        out.update(relative_damage=relative_damage, baseline_damage=round(baseline_damage, 2))
        out["relative_damage_interval"] = interval(relative_damage, dmg_se, 100.0)
    return out
