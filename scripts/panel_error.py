"""How close a random panel's per-tank average damage comes to the realm's, by panel size: the
simulator's world in-process, no service and no database.

    .venv/bin/python -m scripts.panel_error [--sizes 600,1200,2000] [--draws 40] [--panel-days 14]

The truth is what `/_sim/population` answers: the per-tank sums over the first `--truth` accounts
of the realm's uniform draw that played in the `--days` days through yesterday. Each panel is a
simple random sample of `size` other accounts of the same draw that played in those days, summed
over its last `--panel-days` days (the demo's 30-day table spans its panel's 14). For each draw it
takes the median |average damage / truth - 1| over the tanks with at least `--min-battles` battles
in the panel (issue 55's figure) and prints the median, 80th and 95th percentile of that over the
draws, the share of draws within 3 %, and how many tanks were compared. docs/data.md ("The demo's
data") quotes its output.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from scripts.upstream_sim import truth
from scripts.upstream_sim.ids import DAY
from scripts.upstream_sim.world import World

BATTLES, DAMAGE = truth.COLUMN["battles"], truth.COLUMN["damage_dealt"]


def window(world: World, region: str, account_id: int, start: float, end: float) -> dict[int, tuple[int, int]]:
    """{tank_id: (battles, damage dealt)} the account played between `start` and `end`."""
    out = {}
    for tank_id, (row, old, _) in truth.window_rows(world, region, account_id, start, end).items():
        out[tank_id] = (row[BATTLES] - (old[BATTLES] if old else 0), row[DAMAGE] - (old[DAMAGE] if old else 0))
    return out


def sums(rows: list[dict[int, tuple[int, int]]]) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for account in rows:
        for tank_id, (battles, damage) in account.items():
            if battles > 0:
                total = out.setdefault(tank_id, [0, 0])
                total[0] += battles
                total[1] += damage
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--region", default="eu")
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--panel-days", type=int, default=14)
    parser.add_argument("--truth", type=int, default=truth.TRUTH_PLAYERS)
    parser.add_argument("--sizes", default="600,1200,2000")
    parser.add_argument("--draws", type=int, default=40)
    parser.add_argument("--min-battles", type=int, default=300)
    parser.add_argument("--accounts", type=int, default=26_000, help="ids of the uniform draw read")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    started = time.monotonic()
    world = World(profile_cache=args.accounts + 1000)
    end = (int(time.time()) // DAY - 1) * DAY + DAY - 1  # the end of yesterday, as the tables
    active: list[tuple[dict, dict]] = []
    for account_id in truth.sample_ids(args.region, args.accounts):
        whole = window(world, args.region, account_id, end - args.days * DAY, end)
        if whole:
            active.append((whole, window(world, args.region, account_id, end - args.panel_days * DAY, end)))
    realm = sums([whole for whole, _ in active[: args.truth]])
    others = [part for _, part in active[args.truth :]]
    print(
        f"{len(active)} of {args.accounts} accounts played in {args.days} days ({time.monotonic() - started:.0f} s); "
        f"truth over the first {args.truth}, panels drawn from the other {len(others)}"
    )
    rng = random.Random(args.seed)
    for size in sizes:
        medians, tanks = [], []
        for _ in range(args.draws):
            panel = sums(rng.sample(others, size))
            errors = [
                abs(p[1] / p[0] / (realm[t][1] / realm[t][0]) - 1)
                for t, p in panel.items()
                if p[0] >= args.min_battles and t in realm
            ]
            if errors:
                medians.append(statistics.median(errors))
                tanks.append(len(errors))
        medians.sort()
        print(
            f"panel {size:>5}: {statistics.mean(tanks):5.1f} tanks with >= {args.min_battles} battles; "
            f"median |avg damage / truth - 1| over the draws: median {statistics.median(medians):.4f}, "
            f"80th {medians[int(0.8 * len(medians))]:.4f}, 95th {medians[int(0.95 * len(medians))]:.4f}; "
            f"within 3 %: {sum(m <= 0.03 for m in medians)} of {len(medians)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
