"""Tank statistics of the tracked population: daily sums, players' period averages and percentile grids."""

from __future__ import annotations

import statistics
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from server.domain.intervals import interval, ratio_se
from server.domain.ratings import ExpectedValues, account_wn8, tank_wn8
from store.constants import LEGACY_WIDTH, TANK_COUNTERS

WIDTH = len(TANK_COUNTERS)
BATTLES, WINS, DAMAGE = (TANK_COUNTERS.index(name) for name in ("battles", "wins", "damage_dealt"))
# Counters that can never exceed the battles they were counted in, and hits the shots.
_AT_MOST_BATTLES = tuple(TANK_COUNTERS.index(n) for n in ("wins", "losses", "draws", "survived_battles"))
_SHOTS, _HITS = TANK_COUNTERS.index("shots"), TANK_COUNTERS.index("hits")

# Per tank, the per-player sums a rate's interval needs (ratio_se): each player's battles b, wins w
# and damage d on the tank over the period, summed over its players as [b^2, w^2, w b, d^2, d b].
MOMENTS = ("bb", "ww", "wb", "dd", "db")
Rows = Mapping[int, Sequence[int]]  # {tank_id: counter differences in TANK_COUNTERS order}
# One account-day of store.population.TankChanges.of_day: (account_id, rows, assistance change or None).
Change = tuple[int, Rows] | tuple[int, Rows, Sequence[int] | None]


def complete_change(change: Change) -> bool:
    """Whether an account-day carries every counter and the account's assistance (rows written
    before those existed, or diffed against a state that lacked them, are shorter)."""
    return len(change) > 2 and change[2] is not None and all(len(row) >= WIDTH for row in change[1].values())


def played(rows: Rows) -> dict[int, list[int]]:
    """The tanks an account-day's differences say were played (battles > 0), each counter at least 0
    and no more wins, losses, draws or survivals than battles, no more hits than shots: what the
    upstream can never report, a corrupt or reset counter, counts as nothing played. Rows are
    WIDTH long: a shorter row (written before a counter existed) gets 0 for it, so a sum of such a
    counter covers only the rows that carry it (the marks read complete accounts only)."""
    out: dict[int, list[int]] = {}
    for tank_id, row in rows.items():
        if len(row) < LEGACY_WIDTH or row[BATTLES] <= 0:
            continue
        clean = [value if value > 0 else 0 for value in row[:WIDTH]]
        if len(clean) < WIDTH:
            clean.extend([0] * (WIDTH - len(clean)))
        battles = clean[BATTLES]
        for i in _AT_MOST_BATTLES:
            clean[i] = min(clean[i], battles)
        clean[_HITS] = min(clean[_HITS], clean[_SHOTS])
        out[int(tank_id)] = clean
    return out


def day_sums(changes: Iterable[Change]) -> tuple[int, dict[int, list[int]]]:
    """(accounts that played anything, {tank_id: [players, then the counter sums]}) of one day's changes."""
    accounts = 0
    tanks: dict[int, list[int]] = {}
    for change in changes:
        clean = played(change[1])
        if not clean:
            continue
        accounts += 1
        for tank_id, row in clean.items():
            total = tanks.get(tank_id)
            if total is None:
                tanks[tank_id] = [1, *row]
            else:
                total[0] += 1
                for i, value in enumerate(row, 1):
                    total[i] += value
    return accounts, tanks


def percentile_grid(values: Sequence[float]) -> list[float] | None:
    """The percentiles 1..99 of `values` (linear interpolation between the closest ranks, the
    'inclusive' method: p0 is the smallest value and p100 the largest); None below two values."""
    if len(values) < 2:
        return None
    return statistics.quantiles(values, n=100, method="inclusive")


def standing(grid: Sequence[float] | None, value: float | None) -> int | None:
    """The share (0..99, in percent) of a distribution lying below `value`, read from its grid of
    percentiles 1..99: accurate to one percentile step."""
    if grid is None or value is None:
        return None
    return bisect_left(list(grid), value)


def add_moments(moments: list[float], row: Sequence[int]) -> None:
    """Add one player's period on a tank (a row of counters) to the tank's MOMENTS."""
    b, w, d = row[BATTLES], row[WINS], row[DAMAGE]
    moments[0] += b * b
    moments[1] += w * w
    moments[2] += w * b
    moments[3] += d * d
    moments[4] += d * b


def rate_intervals(players: int, sums: Sequence[int], moments: Sequence[float] | None) -> dict[str, Any]:
    """The 95 % intervals of a tank's win rate (percent) and average damage over a period, from its
    players' counter sums and MOMENTS: each a ratio over the battles, its error that of a sample of
    players (a player's battles count together: server/domain/intervals.py); null without moments."""
    battles = sums[BATTLES]
    if moments is None or battles <= 0:
        return {"win_rate_interval": None, "avg_damage_interval": None}
    bb, ww, wb, dd, db = moments
    wins, damage = sums[WINS], sums[DAMAGE]
    return {
        "win_rate_interval": interval(100.0 * wins / battles, ratio_se(players, battles, wins, bb, wb, ww), 100.0),
        "avg_damage_interval": interval(damage / battles, ratio_se(players, battles, damage, bb, db, dd)),
    }


def _as_tank(tank_id: int, row: Sequence[int]) -> dict[str, Any]:
    return {"tank_id": tank_id, **dict(zip(TANK_COUNTERS, row))}


class PeriodAccumulator:
    """Per (account, tank) counter sums over the days added so far (a period ending on the first day
    added), and per account the sum of its assistance changes while every day added carried them
    (`assists`: an account with a day that did not is left out of it for good: `partial`)."""

    def __init__(self) -> None:
        self.accounts: dict[int, dict[int, list[int]]] = {}
        self.assists: dict[int, list[int]] = {}
        self.partial: set[int] = set()

    def add(self, changes: Iterable[Change]) -> None:
        for change in changes:
            account_id, rows = change[0], change[1]
            self._add_assist(account_id, change)
            clean = played(rows)
            if not clean:
                continue
            mine = self.accounts.setdefault(account_id, {})
            for tank_id, row in clean.items():
                total = mine.get(tank_id)
                if total is None:
                    mine[tank_id] = list(row)
                else:
                    for i, value in enumerate(row):
                        total[i] += value

    def _add_assist(self, account_id: int, change: Change) -> None:
        if account_id in self.partial:
            return
        if not complete_change(change):
            self.partial.add(account_id)
            self.assists.pop(account_id, None)
            return
        assist: Sequence[int] = change[2] or ()  # type: ignore[misc]
        total = self.assists.get(account_id)
        if total is None:
            self.assists[account_id] = [int(v) for v in assist]
        else:
            for i, value in enumerate(assist):
                total[i] += int(value)

    def table(
        self, expected: ExpectedValues | None, min_battles: int, min_players: int, account_min_battles: int
    ) -> dict[str, Any]:
        """Every tank's figures over the period and the accounts' WN8 distribution.

        Per tank: `players` (accounts that played it), `sums` (the counters summed over them),
        `moments` (the per-player MOMENTS its rates' intervals need, floats: a sum of squares
        outgrows 64 bits at scale),
        `qualified` (players with at least `min_battles` battles on it), and the percentile grids
        of the qualified players' per-battle average damage (`damage`) and WN8 of the tank (`wn8`,
        over those the expected-values table rates), None when fewer than `min_players` stand
        behind a grid. `accounts`: how many played, how many reached `account_min_battles`
        battles, and the grid of those accounts' WN8 over the period."""
        per_tank: dict[int, dict[str, Any]] = {}
        account_wn8s: list[float] = []
        for rows in self.accounts.values():
            for tank_id, row in rows.items():
                entry = per_tank.get(tank_id)
                if entry is None:
                    entry = per_tank[tank_id] = {
                        "players": 0,
                        "sums": [0] * WIDTH,
                        "moments": [0] * len(MOMENTS),
                        "damage": [],
                        "wn8": [],
                    }
                entry["players"] += 1
                sums = entry["sums"]
                for i, value in enumerate(row):
                    sums[i] += value
                add_moments(entry["moments"], row)
                battles = row[BATTLES]
                if battles >= min_battles:
                    entry["damage"].append(row[DAMAGE] / battles)
                    if expected is not None:
                        rated = tank_wn8(_as_tank(tank_id, row), expected)
                        if rated is not None:
                            entry["wn8"].append(rated)
            if expected is not None and sum(row[BATTLES] for row in rows.values()) >= account_min_battles:
                rated = account_wn8([_as_tank(t, row) for t, row in rows.items()], expected)
                if rated is not None:
                    account_wn8s.append(rated)
        tanks = {}
        for tank_id, entry in per_tank.items():
            damage, wn8 = entry["damage"], entry["wn8"]
            tanks[tank_id] = {
                "players": entry["players"],
                "sums": entry["sums"],
                "moments": [float(m) for m in entry["moments"]],
                "qualified": len(damage),
                "damage": percentile_grid(damage) if len(damage) >= min_players else None,
                "rated": len(wn8),
                "wn8": percentile_grid(wn8) if len(wn8) >= min_players else None,
            }
        return {
            "accounts": {
                "players": len(self.accounts),
                "qualified": len(account_wn8s),
                "wn8": percentile_grid(account_wn8s) if len(account_wn8s) >= min_players else None,
            },
            "tanks": tanks,
        }


def career_table(
    states: Iterable[Rows], expected: ExpectedValues | None, min_battles: int, min_players: int
) -> dict[str, Any]:
    """The accounts' career WN8 distribution: `states` are their per-tank career counters (the
    tracker's stored states); an account counts with at least `min_battles` career battles."""
    rated: list[float] = []
    players = 0
    for state in states:
        players += 1
        if expected is None or sum(row[BATTLES] for row in state.values()) < min_battles:
            continue
        wn8 = account_wn8([_as_tank(t, row) for t, row in state.items()], expected)
        if wn8 is not None:
            rated.append(wn8)
    return {
        "players": players,
        "qualified": len(rated),
        "wn8": percentile_grid(rated) if len(rated) >= min_players else None,
    }
