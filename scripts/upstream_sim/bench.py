"""``python -m scripts.upstream_sim --bench-generation``: CPU cost of building never-seen accounts;
``--bench-truth``: CPU cost of one realm-day of the truth and the published distributions.

Times what the simulator's worker thread does for a cold account: ``wot/account/info`` with the
service's ``fields`` (in batches of 100 ids, as the clan refresh asks) and the full ``wot/tanks/stats``
answer of a veteran (every block, no ``fields``, serialised). Each measurement uses a fresh World,
so no profile is cached; figures are milliseconds of CPU per account.
"""

from __future__ import annotations

import gc
import time

from .ids import MAX_IDS, existing_accounts, is_veteran
from .methods import apply_fields
from .world import World

# What the service asks of wot/account/info (server/upstream/client.py ACCOUNT_FIELDS).
ACCOUNT_FIELDS = "account_id,nickname,clan_id,created_at,last_battle_time,updated_at," + ",".join(
    f"statistics.all.{name}"
    for name in (
        "battles",
        "wins",
        "losses",
        "draws",
        "damage_dealt",
        "frags",
        "spotted",
        "dropped_capture_points",
        "capture_points",
        "xp",
        "survived_battles",
        "shots",
        "hits",
    )
)
BENCH_NOW = 1_760_000_000


def _accounts(region: str, start: int, n: int, veteran: bool) -> list[int]:
    out: list[int] = []
    while len(out) < n:
        batch = existing_accounts(region, 2000, start=start)
        out.extend(a for a in batch if is_veteran(region, a) == veteran)
        start = batch[-1] + 1
    return out[:n]


def _cpu(fn) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def bench_generation(
    n: int = 200, now: float = BENCH_NOW, region: str = "eu", start: int = 700_000_000, vehicles: str | None = None
) -> dict[str, float]:
    """Milliseconds of CPU per cold account: account/info (100 consecutive ids, non-veterans, veterans) and
    veterans' full tanks/stats."""
    plain = _accounts(region, start, n, veteran=False)
    veterans = _accounts(region, start, max(1, n // 4), veteran=True)
    World(vehicles)  # load the vehicle list once (cached files), outside the timings

    def info_ms(ids: list[int]) -> float:
        world = World(vehicles)
        world.account_info(region, existing_accounts(region, 1)[0], now)  # warm the catalogue paths
        spent = 0.0
        for k in range(0, len(ids), MAX_IDS):
            chunk = ids[k : k + MAX_IDS]
            spent += _cpu(
                lambda: {str(i): apply_fields(world.account_info(region, i, now), ACCOUNT_FIELDS) for i in chunk}
            )
        return 1000 * spent / len(ids)

    def tanks_ms(ids: list[int]) -> float:
        world = World(vehicles)
        world.account_info(region, existing_accounts(region, 1)[0], now)
        return 1000 * sum(_cpu(lambda: world.tanks_stats_json(region, i, now)) for i in ids) / len(ids)

    old = gc.get_threshold()
    gc.set_threshold(100_000, 50, 1000)  # as the server runs (cli.main)
    try:
        return {
            "mixed_account_info_ms": info_ms(existing_accounts(region, 100, start=start + 50_000)),
            "account_info_ms": info_ms(plain),
            "veteran_account_info_ms": info_ms(veterans),
            "veteran_tanks_stats_ms": tanks_ms(veterans),
        }
    finally:
        gc.set_threshold(*old)


def main(n: int = 200, vehicles: str | None = None) -> None:
    r = bench_generation(n, vehicles=vehicles)
    print(
        f"cold account/info, 100 consecutive accounts (~10 % veterans): {r['mixed_account_info_ms']:.2f} ms per account"
    )
    print(f"cold account/info, non-veterans ({n}): {r['account_info_ms']:.2f} ms per account")
    print(f"cold account/info, veterans ({max(1, n // 4)}): {r['veteran_account_info_ms']:.2f} ms per account")
    print(
        f"cold tanks/stats, veterans (all blocks, no fields, serialised): "
        f"{r['veteran_tanks_stats_ms']:.2f} ms per account"
    )


def bench_truth(region: str = "eu", now: float = BENCH_NOW, vehicles: str | None = None) -> dict[str, float]:
    """CPU seconds of one realm-day's simulator figures on a fresh world (as the truth's process
    starts): the published distributions (truth.py's sample until 5,000 played in 14 days), then
    /_sim/population over 30 days (the same sample's profiles, kept), then over 7 days."""
    from . import official, truth

    world = World(vehicles, profile_cache=truth.TRUTH_PROFILE_CACHE)
    truth.sample_ids(region, 8000)  # the draw of ids itself, outside the timings
    out = {"distributions_s": _cpu(lambda: official.distributions(world, region, now))}
    out["population_30d_s"] = _cpu(lambda: truth.population(world, region, 30, now))
    out["population_7d_s"] = _cpu(lambda: truth.population(world, region, 7, now))
    return out


def main_truth(vehicles: str | None = None) -> None:
    r = bench_truth(vehicles=vehicles)
    print(f"published distributions (5,000 players of 14 days), cold world: {r['distributions_s']:.1f} s CPU")
    print(f"/_sim/population 30 days after them (same sample): {r['population_30d_s']:.1f} s CPU")
    print(f"/_sim/population 7 days after both: {r['population_7d_s']:.1f} s CPU")
    print(f"one realm-day (the three): {sum(r.values()):.1f} s CPU")
