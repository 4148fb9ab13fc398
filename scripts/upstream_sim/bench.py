"""``python -m scripts.upstream_sim --bench-generation``: CPU cost of building never-seen accounts.

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
