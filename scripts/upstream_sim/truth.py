"""The simulated world's own figures over a random sample of each realm's accounts: the truth a
panel's estimates are checked against (/_sim/population), and the sample the published
tanks/mastery distributions are computed over (official.py).

The sample is a fixed uniform draw of account ids over the realm's whole range (a stable hash of
the draw's index): every existing account is equally likely to be in it, whatever its id, so the
accounts of the sample that played in a window are a simple random sample of the realm's accounts
that played in it. Both figures are computed on a world of their own (api.py: Sim.truth) whose
profile cache holds the whole sample, so the second figure over the same accounts, or the same
figure over another window, reuses each account's career (its blocks of battles, its tanks' rates).
"""

from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING

from .ids import DAY, REGION_RANGES, _seed, account_exists
from .profile import BLOCK_FIELDS, TankRates

if TYPE_CHECKING:
    from .world import World

# Accounts that played in the window the truth is summed over (at least): a simple random sample of
# the realm's active accounts of this size.
TRUTH_PLAYERS = 5_000
TRUTH_MAX_IDS = 200_000  # ids drawn at most for one answer (a window nobody played in stops there)
# Profiles the truth's world keeps: the sample of every realm (~5,700 ids each drawn for 5,000
# players of 30 days; more for shorter windows), so no figure regenerates an account.
TRUTH_PROFILE_CACHE = 24_000
COUNTERS = ("battles", "wins", "damage_dealt")
COLUMN = {name: BLOCK_FIELDS.index(name) for name in COUNTERS}

_lock = threading.Lock()
_ids: dict[str, list[int]] = {}  # each region's existing sample ids in draw order, grown on demand
_ids_drawn: dict[str, int] = {}  # ... and how many ids the draw has taken
_cache: dict[tuple, dict] = {}


def sample_ids(region: str, n: int) -> list[int]:
    """The first `n` existing accounts of the region's uniform draw (stable across runs)."""
    lo, hi = REGION_RANGES[region]
    with _lock:
        found = _ids.setdefault(region, [])
        seen = set(found)
        k = _ids_drawn.get(region, 0)  # the draw goes on from where it stopped
        while len(found) < n:
            account_id = lo + _seed("sample", region, k) % (hi - lo + 1)
            k += 1
            if account_id not in seen and account_exists(region, account_id):
                seen.add(account_id)
                found.append(account_id)
        _ids_drawn[region] = k
        return found[:n]


def window_rows(
    world: World, region: str, account_id: int, start: float, end: float
) -> dict[int, tuple[tuple, tuple | None, TankRates]]:
    """{tank_id: (its "all" counters at `end`, at `start` or None, its rates)} of the tanks the
    account played between `start` and `end` (only those tanks' rows are built: the lean path of
    tanks/stats)."""
    prof = world.profile(region, account_id)
    if end < prof.created_at:
        return {}
    battles_end = prof._battles_at(end)
    battles_start = prof._battles_at(start) if start >= prof.created_at else 0
    if battles_end <= battles_start:
        return {}
    counts_end = prof._battles_per_tank(battles_end)
    counts_start = prof._battles_per_tank(battles_start) if battles_start else [0] * len(counts_end)
    out = {}
    tank_row = prof._tank_row
    for i, (b1, b0) in enumerate(zip(counts_end, counts_start)):
        if b1 > b0:
            rates = prof.rates[i] or prof._rate(i)
            out[int(prof.garage[i])] = (tank_row(rates, b1), tank_row(rates, b0) if b0 else None, rates)
    return out


def active_sample(world: World, region: str, start: float, end: float, players: int = TRUTH_PLAYERS):
    """(account_id, ids drawn so far, its window_rows) of each account the region's sample draws, in
    draw order, until `players` of them played between `start` and `end` (or TRUTH_MAX_IDS ids
    were drawn); an account that did not play has empty rows."""
    counted = drawn = 0
    chunk = 1000
    while counted < players and drawn < TRUTH_MAX_IDS:
        for account_id in sample_ids(region, drawn + chunk)[drawn:]:
            drawn += 1
            rows = window_rows(world, region, account_id, start, end)
            yield account_id, drawn, rows
            if rows:
                counted += 1
                if counted >= players:
                    return


def cached(key: tuple, compute):
    """`compute()` once per key (the last 32 kept): the figures of a (world, region, window)."""
    with _lock:
        found = _cache.get(key)
    if found is None:
        found = compute()
        with _lock:
            _cache[key] = found
            if len(_cache) > 32:
                _cache.pop(next(iter(_cache)))
    return found


def population(world: World, region: str, days: int, end: float, players: int = TRUTH_PLAYERS) -> dict:
    """The world's per-tank sums over the `days` days ending at `end` (unix seconds), over the
    accounts of the region's sample that played in them, drawn until `players` did: {"region",
    "days", "from", "to", "ids_drawn", "players", "tanks": {"<tank_id>": {"players", "battles",
    "wins", "damage_dealt"}}}. Computed once per (world's data, region, days, end, players)."""
    start = end - days * DAY

    def compute() -> dict:
        tanks: dict[int, list[int]] = {}
        counted = drawn = 0
        for _, drawn, rows in active_sample(world, region, start, end, players):
            for tank_id, (row, old, _) in rows.items():
                sums = tanks.setdefault(tank_id, [0, 0, 0, 0])
                sums[0] += 1
                for i, name in enumerate(COUNTERS, 1):
                    sums[i] += row[COLUMN[name]] - (old[COLUMN[name]] if old else 0)
            counted += bool(rows)
        return {
            "region": region,
            "days": int(days),
            "from": int(start),
            "to": int(end),
            "ids_drawn": drawn,
            "players": counted,
            "tanks": {
                str(t): {"players": s[0], "battles": s[1], "wins": s[2], "damage_dealt": s[3]}
                for t, s in sorted(tanks.items())
            },
        }

    return cached(("population", world.data_key, region, int(days), int(end), players), compute)


_world: World | None = None  # the truth process's own world (start_process)


def start_process(
    vehicles: str, expected_values: str | None, battle_seconds: float | None, published_players: int
) -> None:
    """The truth process's world: the API's data, a profile cache for the whole sample. The process
    ends with the simulator's, even killed mid-computation (Linux: the parent-death signal)."""
    global _world
    import ctypes
    import signal

    from .world import World

    with contextlib.suppress(Exception):  # PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)

    _world = World(
        vehicles=vehicles,
        expected_values=expected_values,
        battle_seconds=battle_seconds,
        profile_cache=TRUTH_PROFILE_CACHE,
    )
    _world.published_players = published_players


def population_job(region: str, days: int, end: float) -> dict:
    """population() in the truth process."""
    assert _world is not None
    return population(_world, region, days, end)


def distributions_job(region: str, now: float) -> dict:
    """The published distributions of the day of `now` (official.py), in the truth process."""
    from . import official

    assert _world is not None
    return official.distributions(_world, region, now)[0]
