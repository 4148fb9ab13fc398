"""Leaderboards of the tracked accounts and their clans: each account's figures over a window, each
clan's over its members' play, and the ranked lists.

Pure maths over the tank statistics job's per-(account, tank) sums (or the tracked career states):
the figures are history's own (server.domain.recents.figures_of), so a ranked row shows what that
player's /history period shows. docs/data.md, "Leaderboards", states the rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from server.contract.catalogue.figures import CLAN_FIGURES
from server.domain.population import BATTLES, WINS
from server.domain.ratings import ExpectedValues
from server.domain.recents import figures_of, period_wn8
from store.constants import TANK_COUNTERS

ALL = "all"
# The figures a board keeps of each account: what the leaderboards rank by, battles first.
BOARD_FIGURES = ("battles", "win_rate", "avg_damage", "avg_combined_damage", "wn8")
# ... and of an account's WTR ranked among a window's players: their battles, their WTR.
WTR_FIGURES = ("battles", "wtr")


def board_filters(tank_id: int, vehicles: Mapping[int, Mapping[str, Any]]) -> tuple[str, ...]:
    """The filters a tank's battles count in: all, its tier, its type and both (as the vehicle list
    knows them)."""
    vehicle = vehicles.get(tank_id) or {}
    tier = vehicle.get("tier") if isinstance(vehicle.get("tier"), int) else None
    kind = vehicle.get("type") if isinstance(vehicle.get("type"), str) else None
    return (ALL, *filter(None, (board_name(tier, None), board_name(None, kind), board_name(tier, kind))))


def board_name(tier: int | None, vehicle_type: str | None) -> str | None:
    """A filter's name: all, tier:N, type:T or tier:N/type:T (None when neither is known)."""
    parts = [f"tier:{tier}"] if tier is not None else []
    parts += [f"type:{vehicle_type}"] if vehicle_type is not None else []
    return "/".join(parts) or None


def _counters(row: Sequence[int]) -> dict[str, int]:
    return dict(zip(TANK_COUNTERS, row))


def account_boards(
    rows: Mapping[int, Sequence[int]],
    assist: Sequence[int] | None,
    expected: ExpectedValues | None,
    vehicles: Mapping[int, Mapping[str, Any]],
    min_battles: int,
) -> dict[str, tuple]:
    """One account's figures (BOARD_FIGURES order) per filter it has at least `min_battles` battles
    in, over its per-tank counters of the window (`rows`: {tank_id: counters in TANK_COUNTERS order}).
    The account's assistance (`assist`, store.constants.ACCOUNT_ASSIST) counts for all tanks only."""
    by_filter: dict[str, dict[int, dict[str, int]]] = {}
    for tank_id, row in rows.items():
        if row[BATTLES] <= 0:
            continue
        counters = _counters(row)
        for name in board_filters(tank_id, vehicles):
            by_filter.setdefault(name, {})[tank_id] = counters
    out: dict[str, tuple] = {}
    for name, diffs in by_filter.items():
        if sum(c["battles"] for c in diffs.values()) < min_battles:
            continue
        figures = figures_of(diffs, expected, {}, assist if name == ALL else None)
        out[name] = tuple(figures[key] for key in BOARD_FIGURES)
    return out


def ranked(entries: Iterable[tuple[int, tuple]], by: str, floor: int) -> list[tuple[int, int, float | int, int]]:
    """(rank, account_id, figure, battles) of every entry (account_id, figures in BOARD_FIGURES
    order) with at least `floor` battles and a `by` figure, best first: higher figures first, ties
    share a rank (competition ranking: 1, 2, 2, 4) and are listed by battles (more first), then
    account id."""
    return ranked_steps(entries, by, (floor,)).get(floor, [])


def ranked_steps(
    entries: Iterable[tuple[int, tuple]], by: str, steps: Sequence[int], figures: Sequence[str] = BOARD_FIGURES
) -> dict[int, list[tuple[int, int, float | int, int]]]:
    """`ranked` at each floor of `steps` (ascending), sorted once; a floor nobody reaches is left
    out. `entries`' figures are in `figures` order, battles first."""
    at = figures.index(by)
    rows = [(figures[at], figures[0], account_id) for account_id, figures in entries if figures[at] is not None]
    rows.sort(key=lambda r: (-r[0], -r[1], r[2]))
    out: dict[int, list[tuple[int, int, float | int, int]]] = {}
    for floor in steps:
        rows = [row for row in rows if row[1] >= floor]
        if not rows:
            break
        ranks: list[tuple[int, int, float | int, int]] = []
        rank, previous = 0, None
        for position, (value, battles, account_id) in enumerate(rows, 1):
            if value != previous:
                rank, previous = position, value
            ranks.append((rank, account_id, value, battles))
        out[floor] = ranks
    return out


def tank_figures(
    rows: Mapping[int, Sequence[int]], assist: Sequence[int] | None, expected: ExpectedValues | None, min_battles: int
) -> dict[int, tuple]:
    """One account's figures (BOARD_FIGURES order) on each tank it played at least `min_battles`
    battles in the window, as /tanks' period rows give them (WN8 of the tank, the account's
    assistance per battle for the combined damage)."""
    out: dict[int, tuple] = {}
    for tank_id, row in rows.items():
        if row[BATTLES] < max(1, min_battles):
            continue
        figures = figures_of({tank_id: _counters(row)}, expected, {}, assist)
        out[tank_id] = tuple(figures[key] for key in BOARD_FIGURES)
    return out


def _ranks(kept: Sequence[Sequence[Any]], at: int) -> list[tuple[int, Sequence[Any]]]:
    """(rank, row) of rows sorted best first by their figure at `at`: equal figures share the rank
    of the first of them (1, 2, 2, 4)."""
    out: list[tuple[int, Sequence[Any]]] = []
    rank, previous = 0, None
    for position, row in enumerate(kept, 1):
        if row[at] != previous:
            rank, previous = position, row[at]
        out.append((rank, row))
    return out


def ranked_rows(rows: Sequence[Sequence[Any]], at: int, floor: int) -> list[tuple[int, Sequence[Any]]]:
    """(rank, row) of the rows (figures at `at`, battles at 1) with at least `floor` battles and
    a figure there, best first, ties sharing a rank and listed by battles, then the row's first
    field (the account id)."""
    kept = [row for row in rows if row[1] >= floor and row[at] is not None]
    kept.sort(key=lambda r: (-r[at], -r[1], r[0]))
    return _ranks(kept, at)


# A member's play over a window, what a clan's figures sum: (battles, wins, wn8 or None).
Play = tuple[int, int, float | None]


def account_play(
    rows: Mapping[int, Sequence[int]], expected: ExpectedValues | None, figures: Sequence[Any] | None = None
) -> Play | None:
    """One account's battles, wins and WN8 over its per-tank counters of a window (None without a
    battle): the WN8 its /history period shows. `figures`: its all-tanks board figures when it has
    them (BOARD_FIGURES order), whose WN8 is this one."""
    played = {tank_id: row for tank_id, row in rows.items() if row[BATTLES] > 0}
    battles = sum(row[BATTLES] for row in played.values())
    if battles <= 0:
        return None
    wins = sum(row[WINS] for row in played.values())
    if figures is not None:
        return battles, wins, figures[BOARD_FIGURES.index("wn8")]
    return battles, wins, period_wn8({t: _counters(row) for t, row in played.items()}, expected)


def clan_figures(member_ids: Iterable[int], play: Mapping[int, Play], ratings: Mapping[str, Any]) -> dict[str, Any]:
    """A clan's figures (CLAN_FIGURES) over a window from its roster (`member_ids`), its members'
    play and its stored ratings (elo_10, elo_8, skirmish_win_rate): the active members' battles and
    wins summed, their WN8 weighted by battles (members without one left out of it)."""
    members = list(member_ids)
    active = [play[a] for a in members if a in play]
    battles = sum(p[0] for p in active)
    wins = sum(p[1] for p in active)
    rated = [(p[0], p[2]) for p in active if p[2] is not None]
    rated_battles = sum(b for b, _ in rated)
    return {
        "members": len(members),
        "active_members": len(active),
        "battles": battles,
        "battles_per_member": round(battles / len(members), 2) if members else 0.0,
        "wn8": round(sum(b * w for b, w in rated) / rated_battles, 2) if rated_battles else None,
        "win_rate": round(100.0 * wins / battles, 2) if battles else None,
        "elo_10": ratings.get("elo_10"),
        "elo_8": ratings.get("elo_8"),
        "skirmish_win_rate": ratings.get("skirmish_win_rate"),
    }


def ranked_clans(rows: Sequence[Sequence[Any]], by: str, min_members: int) -> list[tuple[int, Sequence[Any]]]:
    """(rank, row) of the clan rows ([clan_id, tag, name, *CLAN_FIGURES]) with at least
    `min_members` active members and a `by` figure, best first: ties share a rank and are listed
    by active members (more first), then clan id."""
    at, active = 3 + CLAN_FIGURES.index(by), 3 + CLAN_FIGURES.index("active_members")
    kept = [row for row in rows if row[active] >= min_members and row[at] is not None]
    kept.sort(key=lambda r: (-r[at], -r[active], r[0]))
    return _ranks(kept, at)
