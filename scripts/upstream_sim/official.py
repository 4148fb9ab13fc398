"""Wargaming's own published figures in the simulated world: the per-tank mastery distributions
(wot/tanks/mastery) and the personal rating WTR (wot/account/wtr).

Both follow the world: a tank's damage distribution is that of its players' average combined
damage over the last 14 days, its xp distribution that of their average base XP per battle over
the last 7 days, each over a fixed sample of the region's accounts and recomputed once a
simulated day (the answer's `updated_at` is that day's start); an account's WTR follows its
skill and grows towards it with its battles, null below 50 battles.
"""

from __future__ import annotations

import math
import threading
from typing import TYPE_CHECKING

from .ids import DAY, REGION_RANGES, existing_accounts
from .profile import BLOCK_FIELDS

if TYPE_CHECKING:
    from .world import World

DISTRIBUTIONS = ("damage", "xp")
WINDOW_DAYS = {"damage": 14, "xp": 7}
MAX_PERCENTILES = 10  # percentile values per request
SAMPLE_ACCOUNTS = 300  # a region's accounts whose averages make its distributions
MIN_BATTLES = 5  # a player's battles on a tank in the window to count in its distribution
MIN_PLAYERS = 3  # a tank's players in the sample for the distribution to cover it
# The sample: the same accounts every day, far from the first ids (the demo tracks those), so the
# published figures are the server's, not the tracked population's.
SAMPLE_OFFSET = 100_000
WTR_MIN_BATTLES = 50  # random battles below which an account has no WTR (null)

COUNTERS = ("battles", "damage_dealt", "stun_assisted_damage", "xp")
COLUMN = {name: BLOCK_FIELDS.index(name) for name in COUNTERS}

_lock = threading.Lock()
_cache: dict[tuple[int, str, int], dict[str, dict[int, list[float]]]] = {}


def _tank_rows(world: World, region: str, account_id: int, at: float) -> dict[int, dict[str, int]]:
    """{tank_id: its counters} of the account's played tanks at `at` (the rows tanks/stats is built
    from, without its per-mode blocks: a tenth of the cost)."""
    prof = world.profile(region, account_id)
    if at < prof.created_at:
        return {}
    _, order, _, rows, *_ = prof._played(at)
    return {int(prof.garage[i]): {name: row[COLUMN[name]] for name in COUNTERS} for i, row in zip(order, rows)}


def _assist(world: World, region: str, account_id: int, at: float) -> tuple[float, float]:
    """The account's average spotting and tracking assistance per battle (they exist per account
    only: they stand for every tank's)."""
    info = world.account_info(region, account_id, at) or {}
    totals = (info.get("statistics") or {}).get("all") or {}
    return float(totals.get("avg_damage_assisted_radio") or 0), float(totals.get("avg_damage_assisted_track") or 0)


def distributions(world: World, region: str, now: float) -> tuple[dict[str, dict[int, list[float]]], int]:
    """({"damage"|"xp": {tank_id: the sorted players' averages}}, updated_at) as of the simulated
    day of `now` (computed once a day and world)."""
    day = int(now // DAY)
    key = (id(world), region, day)
    with _lock:
        found = _cache.get(key)
        if found is None:
            found = _cache[key] = _compute(world, region, day * DAY)
            if len(_cache) > 64:
                _cache.pop(next(iter(_cache)))
    return found, day * DAY


def _compute(world: World, region: str, at: float) -> dict[str, dict[int, list[float]]]:
    values: dict[str, dict[int, list[float]]] = {name: {} for name in DISTRIBUTIONS}
    sample = existing_accounts(region, SAMPLE_ACCOUNTS, start=REGION_RANGES[region][0] + SAMPLE_OFFSET)
    for account_id in sample:
        now = _tank_rows(world, region, account_id, at)
        if not now:
            continue
        radio, track = _assist(world, region, account_id, at)
        for name in DISTRIBUTIONS:
            then = _tank_rows(world, region, account_id, at - WINDOW_DAYS[name] * DAY)
            for tank_id, row in now.items():
                old = then.get(tank_id) or {}
                battles = row["battles"] - old.get("battles", 0)
                if battles < MIN_BATTLES:
                    continue
                if name == "damage":
                    damage = row["damage_dealt"] - old.get("damage_dealt", 0)
                    stun = row["stun_assisted_damage"] - old.get("stun_assisted_damage", 0)
                    value = (damage + max(radio * battles, track * battles, stun)) / battles
                else:
                    value = (row["xp"] - old.get("xp", 0)) / battles
                values[name].setdefault(tank_id, []).append(value)
    return {
        name: {t: sorted(v) for t, v in by_tank.items() if len(v) >= MIN_PLAYERS} for name, by_tank in values.items()
    }


def percentile_value(values: list[float], p: int) -> int:
    """The value at percentile `p` (1-100) of sorted `values` by nearest rank, as an integer."""
    rank = max(1, math.ceil(p / 100 * len(values)))
    return int(round(values[rank - 1]))


def wtr(world: World, region: str, account_id: int, now: float) -> dict | None:
    """The account's WTR ({"account_id": id, "rating": N}, the real shape), or None: unknown account, or fewer than WTR_MIN_BATTLES
    random battles. Follows the account's skill, reached with its battles (deterministic)."""
    info = world.account_info(region, account_id, now)
    if info is None:
        return None
    battles = int(((info.get("statistics") or {}).get("all") or {}).get("battles") or 0)
    if battles < WTR_MIN_BATTLES:
        return None
    skill = world.profile(region, account_id).skill  # 0.38 .. 1.6
    experience = min(1.0, math.log10(battles / WTR_MIN_BATTLES + 1) / 2.5)
    rating = int(round(1800 + 6200 * (skill - 0.38) / 1.22 * (0.55 + 0.45 * experience)))
    return {"account_id": account_id, "rating": rating}
