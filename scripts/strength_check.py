"""Does the skill-adjusted tank strength rank tanks closer to the simulator's truth than raw win rate?

The simulator gives every tank a built-in strength: its expected win rate and damage scale what
any driver achieves in it (scripts/upstream_sim/profile.py, `_tank_rates`), independently of the
driver's skill. This script takes `--accounts` simulated accounts of a realm, their per-tank
changes over `--days` days (what the tracker records), runs the estimator the daily job runs
(server/domain/strength.py), and prints per tier the Spearman rank correlation of the built-in
strength with the raw figure and with the adjusted one (docs/data.md, "Tank strength").

    .venv/bin/python -m scripts.strength_check --accounts 3000 --days 30
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from pathlib import Path

from scripts.upstream_sim import World
from scripts.upstream_sim.ids import existing_accounts
from server.domain.strength import (
    STRENGTH_MIN_BATTLES,
    STRENGTH_MIN_OTHER_BATTLES,
    STRENGTH_MIN_PLAYERS,
    strength_figures,
    strength_table,
)
from store.constants import TANK_COUNTERS

EXPECTED_VALUES = Path(__file__).resolve().parents[2] / "shared" / "data" / "wn8exp-2024-09-12.json"
COUNTED = ("battles", "wins", "damage_dealt")


def simulated_period(
    world: World, region: str, accounts: int, days: int, now: float
) -> dict[int, dict[int, list[int]]]:
    """Per account and tank, the battles, wins and damage of the `days` before `now` (TANK_COUNTERS order)."""
    out: dict[int, dict[int, list[int]]] = {}
    then = now - days * 86400
    for account_id in existing_accounts(region, accounts):
        profile = world.profile(region, account_id)
        before = {r["tank_id"]: r["all"] for r in profile.tanks(then)}
        rows: dict[int, list[int]] = {}
        for record in profile.tanks(now):
            old = before.get(record["tank_id"], {})
            if record["all"]["battles"] - old.get("battles", 0) <= 0:
                continue
            row = [0] * len(TANK_COUNTERS)
            for name in COUNTED:
                row[TANK_COUNTERS.index(name)] = record["all"][name] - old.get(name, 0)
            rows[record["tank_id"]] = row
        if rows:
            out[account_id] = rows
    return out


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rank correlation (ties take their average rank)."""

    def ranks(values: Sequence[float]) -> list[float]:
        order = sorted(range(len(values)), key=values.__getitem__)
        out = [0.0] * len(values)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
                j += 1
            for k in range(i, j + 1):
                out[order[k]] = (i + j) / 2
            i = j + 1
        return out

    ra, rb = ranks(a), ranks(b)
    n = len(ra)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    var = math.sqrt(sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb))
    return cov / var if var else 0.0


def correlations(world: World, accounts: dict[int, dict[int, list[int]]], min_tanks: int = 10) -> dict[int, dict]:
    """Per tier with at least `min_tanks` rated tanks: the rated tanks and the four correlations
    (raw and adjusted, win rate and damage) with the built-in strength."""
    tiers = {t: int(v["tier"]) for t, v in world.vehicles.items()}
    table = strength_table(accounts, tiers, STRENGTH_MIN_OTHER_BATTLES)
    by_tier: dict[int, list[tuple[float, float, float, float, float, float]]] = {}
    for tank_id, entry in table.items():
        f = strength_figures(entry, STRENGTH_MIN_PLAYERS, STRENGTH_MIN_BATTLES)
        if f["relative_win_rate"] is None or f["relative_damage"] is None:
            continue
        win, damage, *_ = world.expectation_rates(tank_id)
        by_tier.setdefault(tiers[tank_id], []).append(
            (win, f["win_rate"], f["relative_win_rate"], damage, f["avg_damage"], f["relative_damage"])
        )
    out = {}
    for tier, rows in sorted(by_tier.items()):
        if len(rows) < min_tanks:
            continue
        cols = list(zip(*rows))
        out[tier] = {
            "tanks": len(rows),
            "win_rate_raw": spearman(cols[0], cols[1]),
            "win_rate_adjusted": spearman(cols[0], cols[2]),
            "damage_raw": spearman(cols[3], cols[4]),
            "damage_adjusted": spearman(cols[3], cols[5]),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--accounts", type=int, default=3000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--region", default="eu")
    args = parser.parse_args()
    world = World(expected_values=EXPECTED_VALUES, profile_cache=16)
    accounts = simulated_period(world, args.region, args.accounts, args.days, time.time())
    result = correlations(world, accounts)
    print(f"{len(accounts)} accounts played in the {args.days} days")
    print("tier  tanks  win rate: raw  adjusted   damage: raw  adjusted")
    for tier, r in result.items():
        print(
            f"{tier:>4}  {r['tanks']:>5}  {r['win_rate_raw']:>13.3f}  {r['win_rate_adjusted']:>8.3f}"
            f"  {r['damage_raw']:>12.3f}  {r['damage_adjusted']:>8.3f}"
        )
    n = sum(r["tanks"] for r in result.values())
    for key in ("win_rate_raw", "win_rate_adjusted", "damage_raw", "damage_adjusted"):
        print(f"{key}: {sum(r[key] * r['tanks'] for r in result.values()) / n:.3f} (mean over tiers, by tanks)")


if __name__ == "__main__":
    main()
