#!/usr/bin/env python3
"""How close expected values computed by server/domain/expected.py land to the table the simulator's players follow.

    .venv/bin/python -m scripts.expected_accuracy                        # 4,000 eu accounts, 60 days, 5 folds
    .venv/bin/python -m scripts.expected_accuracy --accounts 1000 --days 30 --recompute

Each account's window is the simulator's per-tank counters at --now minus the same --days earlier
(what its daily tank_changes over the window sum to). The table's tanks are split in --folds folds
(stable by tank id); for each fold the loaded table lacks it and `fill_gaps` computes its rows from
the others. Prints, per statistic over the held-out rows meeting the minimum sample, the median,
90th percentile and largest |computed/table - 1|; with --recompute also the full recomputation
(`recompute_all`) from the table with every row moved by up to +-30 % (its scale is the moved
table's, so the rows are compared after each statistic's common factor is removed).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

from scripts.upstream_sim import World, existing_accounts
from server.domain.expected import ComputedRow, Minimums, fill_gaps, recompute_all
from server.domain.ratings import ExpectedValues, TankExpectation
from store.constants import TANK_COUNTERS

TABLE = Path(__file__).resolve().parents[2] / "shared" / "data" / "wn8exp-2024-09-12.json"
FIELDS = ("damage", "spot", "frag", "defence", "win_rate")
NAMES = ("battles", "wins", "damage_dealt", "frags", "spotted", "dropped_capture_points")


def windows(region: str, accounts: int, days: int, now: int) -> dict[int, dict[int, list[int]]]:
    world = World(expected_values=TABLE, profile_cache=16)
    column = {name: TANK_COUNTERS.index(name) for name in NAMES}
    out: dict[int, dict[int, list[int]]] = {}
    for account_id in existing_accounts(region, accounts):
        start = {r["tank_id"]: r["all"] for r in world.tanks_stats(region, account_id, now - days * 86400, None) or []}
        rows = {}
        for record in world.tanks_stats(region, account_id, now, None) or []:
            before = start.get(record["tank_id"])
            row = [0] * len(TANK_COUNTERS)
            for name in NAMES:
                row[column[name]] = record["all"][name] - (before[name] if before else 0)
            if row[column["battles"]] > 0:
                rows[record["tank_id"]] = row
        if rows:
            out[account_id] = rows
    return out


def errors(rows: dict, table: ExpectedValues) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {f: [] for f in FIELDS}
    for tank_id, row in rows.items():
        truth = table.get(tank_id)
        if truth is None:
            continue
        for f in FIELDS:
            out[f].append(abs(getattr(row.expectation, f) / getattr(truth, f) - 1))
    return out


def summary(errs: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    result = {}
    for f, values in errs.items():
        values = sorted(values)
        if values:
            result[f] = {
                "median_pct": round(100 * statistics.median(values), 2),
                "p90_pct": round(100 * values[int(0.9 * (len(values) - 1))], 2),
                "max_pct": round(100 * values[-1], 2),
            }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--region", default="eu")
    parser.add_argument("--accounts", type=int, default=4000)
    parser.add_argument("--days", type=int, default=60)
    parser.add_argument("--now", type=int, default=1748736000, help="window end (2025-06-01 00:00 UTC)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--recompute", action="store_true")
    args = parser.parse_args()
    if not TABLE.exists():
        sys.exit(f"the XVM table is expected at {TABLE}")
    table = ExpectedValues.from_json(json.loads(TABLE.read_text()))
    started = time.process_time()
    accounts = windows(args.region, args.accounts, args.days, args.now)
    tanks = {t for rows in accounts.values() for t in rows}
    rated = sorted(t for t in tanks if table.get(t) is not None)
    result: dict = {"accounts_played": len(accounts), "tanks": len(tanks), "table_tanks": len(rated)}
    held: dict = {}
    passes = []
    for fold in range(args.folds):
        out = {t for t in rated if (t * 2654435761 >> 7) % args.folds == fold}
        loaded = ExpectedValues({t: table.get(t) for t in rated if t not in out})  # type: ignore[misc]
        fit = fill_gaps(accounts, loaded, tanks, Minimums())
        passes.append(fit.passes)
        held.update({t: row for t, row in fit.rows.items() if t in out})
    result["gap_filling"] = {"rows": len(held), "passes": passes, "errors": summary(errors(held, table))}
    if args.recompute:
        rng = random.Random(3)
        moved = ExpectedValues(
            {t: TankExpectation(*(getattr(table.get(t), f) * rng.uniform(0.7, 1.3) for f in FIELDS)) for t in rated}
        )
        fit = recompute_all(accounts, moved, tanks, Minimums())
        # The scale of each statistic is the moved table's (a fixed point has none of its own):
        # the shape between tanks is compared, after the common factor (median ratio) is removed.
        scale = {
            f: statistics.median(
                getattr(r.expectation, f) / getattr(table.get(t), f) for t, r in fit.rows.items() if table.get(t)
            )
            for f in FIELDS
        }
        shape = {
            t: ComputedRow(
                TankExpectation(*(getattr(r.expectation, f) / scale[f] for f in FIELDS)), r.players, r.battles
            )
            for t, r in fit.rows.items()
        }
        result["recompute"] = {
            "rows": len(fit.rows),
            "passes": fit.passes,
            "converged": fit.converged,
            "scale": {f: round(v, 4) for f, v in scale.items()},
            "errors_after_scale": summary(errors(shape, table)),
        }
    result["cpu_s"] = round(time.process_time() - started, 1)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
