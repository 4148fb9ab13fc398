"""Wargaming's own published figures in the simulated world: the per-tank mastery distributions
(wot/tanks/mastery) and the personal rating WTR (wot/account/wtr).

Both follow the world: a tank's damage distribution is that of its players' average combined
damage over the last 14 days (damage plus the largest of the account's spotting and tracking
assistance per battle over the same days and the tank's stun assistance), its xp distribution that
of their average base XP per battle over the last 7 days, each over the players with MIN_BATTLES on
the tank among the realm's uniform sample of accounts (truth.py) drawn until 5,000 played in the 14
days (World.published_players), recomputed once a simulated day (the answer's `updated_at` is that day's start); an
account's WTR follows its skill and grows towards it with its battles, null below 50 battles.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from . import truth
from .ids import DAY
from .profile import BLOCK_FIELDS

if TYPE_CHECKING:
    from .world import World

DISTRIBUTIONS = ("damage", "xp")
WINDOW_DAYS = {"damage": 14, "xp": 7}
MAX_PERCENTILES = 10  # percentile values per request
MIN_BATTLES = 5  # a player's battles on a tank in the window to count in its distribution
MIN_PLAYERS = 3  # a tank's players in the sample for the distribution to cover it
WTR_MIN_BATTLES = 50  # random battles below which an account has no WTR (null)

B, DAMAGE, STUN, XP = (BLOCK_FIELDS.index(name) for name in ("battles", "damage_dealt", "stun_assisted_damage", "xp"))


def distributions(world: World, region: str, now: float) -> tuple[dict[str, dict[int, list[float]]], int]:
    """({"damage"|"xp": {tank_id: the sorted players' averages}}, updated_at) as of the simulated
    day of `now` (computed once a day and world's data: api.py computes it in the truth's process
    before the request's answer reads it, then remember() keeps it here)."""
    day = int(now // DAY)
    found = truth.cached(("mastery", world.data_key, region, day), lambda: _compute(world, region, day * DAY))
    return found, day * DAY


def remember(data_key: tuple, region: str, now: float, found: dict[str, dict[int, list[float]]]) -> None:
    """Keep distributions computed elsewhere (the truth's process) for a world of `data_key`."""
    truth.cached(("mastery", data_key, region, int(now // DAY)), lambda: found)


def _delta(row: tuple, old: tuple | None, column: int) -> int:
    return row[column] - (old[column] if old else 0)


def _compute(world: World, region: str, at: float) -> dict[str, dict[int, list[float]]]:
    values: dict[str, dict[int, list[float]]] = {name: {} for name in DISTRIBUTIONS}
    damage, xp = values["damage"], values["xp"]
    xp_start = at - WINDOW_DAYS["xp"] * DAY
    start = at - WINDOW_DAYS["damage"] * DAY
    for account_id, _, rows in truth.active_sample(world, region, start, at, world.published_players):
        if not rows:
            continue
        # The account's spotting and tracking assistance per battle over the window: its tanks'
        # (the per-tank averages exist per account only, as account/info's change over the days).
        battles = radio = track = 0.0
        for row, old, rates in rows.values():
            played = _delta(row, old, B)
            battles += played
            radio += played * rates.avg_damage_assisted_radio
            track += played * rates.avg_damage_assisted_track
        radio, track = radio / battles, track / battles
        for tank_id, (row, old, _) in rows.items():
            played = _delta(row, old, B)
            if played >= MIN_BATTLES:
                assist = max(radio * played, track * played, _delta(row, old, STUN))
                damage.setdefault(tank_id, []).append((_delta(row, old, DAMAGE) + assist) / played)
        for tank_id, (row, old, _) in truth.window_rows(world, region, account_id, xp_start, at).items():
            played = _delta(row, old, B)
            if played >= MIN_BATTLES:
                xp.setdefault(tank_id, []).append(_delta(row, old, XP) / played)
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
