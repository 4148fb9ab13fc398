"""Figures of the battles played in a period, from per-tank career counters at its start and end."""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any

from server.contract.catalogue import RECENT_BATTLES
from server.contract.catalogue.figures import ROW_COUNTERS
from server.contract.catalogue.figures import SUMMARY_FIGURES as SUMMARY_FIGURES  # the tanks endpoint's, re-exported
from server.domain.marks import combined_damage
from server.domain.ratings import ExpectedValues, account_wn8, average_tier, tank_wn8, wn7_and_efficiency
from store.constants import TANK_COUNTERS

# Per-tank career counters the period figures read (tracker records and tanks/stats "all" blocks).
PERIOD_COUNTERS = (*ROW_COUNTERS, "shots", "hits")
# Counters kept since release 1.3.0 (store/constants.py): a difference carries them only when both
# states do, and a figure that needs them is null otherwise (docs/data.md).
ASSIST_COUNTERS = ("damage_received", "stun_assisted_damage")
# Figures that need the counters and the account's assistance kept since release 1.3.0.
ASSIST_FIGURES = ("avg_assist_radio", "avg_assist_track", "avg_assist_stun", "avg_combined_damage", "damage_ratio")
# Counters that can never exceed the battles they were counted in.
_AT_MOST_BATTLES = ("wins", "survived_battles")

TankCounters = Mapping[int, Mapping[str, Any]]


def _count(counters: Mapping[str, Any] | None, name: str) -> int:
    if not counters:
        return 0
    value = counters.get(name)
    if type(value) is int:  # the common case, first: a history answer makes ~10^5 of these calls
        return value
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _int(value: Any) -> int:
    if type(value) is int:
        return value
    raise TypeError("not an int counter")  # tank_differences then takes the careful path


def tank_differences(start: TankCounters, end: TankCounters) -> dict[int, dict[str, int]]:
    """Per-tank counters of the battles played between two states (end minus start).

    A tank only in ``end`` counts from zero. A tank whose battles did not grow played nothing
    and is left out; any counter that went down (impossible upstream, e.g. a corrupt record)
    counts as 0, and wins / survived battles never exceed the period's battles.
    """
    out: dict[int, dict[str, int]] = {}
    for tank_id, after in end.items():
        before = start.get(tank_id)
        if before is not None and after.get("battles") == before.get("battles"):
            continue  # most tanks of a state were not played in a period: one comparison each
        battles = _count(after, "battles") - _count(before, "battles")
        if battles <= 0:
            continue
        try:  # the common case: both states hold every counter as an int (store.tanks.as_counters)
            if before is None:
                diff = {name: max(0, _int(after[name])) for name in PERIOD_COUNTERS}
            else:
                diff = {name: max(0, _int(after[name]) - _int(before[name])) for name in PERIOD_COUNTERS}
        except (KeyError, TypeError):
            diff = {name: max(0, _count(after, name) - _count(before, name)) for name in PERIOD_COUNTERS}
        for name in _AT_MOST_BATTLES:
            diff[name] = min(diff[name], battles)
        diff["hits"] = min(diff["hits"], diff["shots"])
        for name in ASSIST_COUNTERS:
            if name in after and (before is None or name in before):
                diff[name] = max(0, _count(after, name) - _count(before, name))
        out[int(tank_id)] = diff
    return out


# Where each period counter sits in a tracker state's row (store.tanks.TankState: TANK_COUNTERS order).
_PERIOD_INDEXES = tuple((name, TANK_COUNTERS.index(name)) for name in PERIOD_COUNTERS)
_ASSIST_INDEXES = tuple((name, TANK_COUNTERS.index(name)) for name in ASSIST_COUNTERS)
_BATTLES = TANK_COUNTERS.index("battles")
_WIDTH = len(TANK_COUNTERS)
_DIFF_NAMES = tuple(name for name, _ in (*_PERIOD_INDEXES, *_ASSIST_INDEXES))
_PICK = operator.itemgetter(*(i for _, i in (*_PERIOD_INDEXES, *_ASSIST_INDEXES)))


def state_differences(
    start: Mapping[int, Sequence[int]] | None, end: Mapping[int, Sequence[int]]
) -> dict[int, dict[str, int]]:
    """tank_differences(as_counters(start), as_counters(end)) for tracker states ({tank_id: row of
    TANK_COUNTERS}), without turning every tank of both states into a dict: a history answer compares
    a dozen states of ~100 tanks each, and only the few tanks played in a period differ."""
    start = start or {}
    out: dict[int, dict[str, int]] = {}
    for tank_id, after in end.items():
        before = start.get(tank_id)
        if len(after) < _WIDTH or (before is not None and len(before) < _WIDTH):
            diff = tank_differences(  # a short row (not written by the tracker): the careful path
                {tank_id: dict(zip(TANK_COUNTERS, before))} if before is not None else {},
                {tank_id: dict(zip(TANK_COUNTERS, after))},
            )
            out.update(diff)
            continue
        # The counters picked at once and paired by zip: per played tank this was a history
        # answer's hottest line as a comprehension indexing both rows per counter (py-spy).
        if before is None:
            battles = after[_BATTLES]
            if battles <= 0:
                continue
            row = dict(zip(_DIFF_NAMES, [v if v > 0 else 0 for v in _PICK(after)]))
        else:
            battles = after[_BATTLES] - before[_BATTLES]
            if battles <= 0:
                continue  # most tanks of a state were not played in a period
            row = dict(zip(_DIFF_NAMES, [a - b if a > b else 0 for a, b in zip(_PICK(after), _PICK(before))]))
        for name in _AT_MOST_BATTLES:
            row[name] = min(row[name], battles)
        row["hits"] = min(row["hits"], row["shots"])
        out[int(tank_id)] = row
    return out


def _sum(diffs: TankCounters) -> dict[str, int]:
    totals = dict.fromkeys(PERIOD_COUNTERS, 0)
    for diff in diffs.values():
        for name in PERIOD_COUNTERS:
            value = diff.get(name)
            totals[name] += value if type(value) is int else _count(diff, name)
    return totals


def _per_battle(value: float, battles: int) -> float | None:
    return round(value / battles, 2) if battles else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def assist_change(start: Sequence[int] | None, end: Sequence[int] | None) -> list[int] | None:
    """The account's assistance (store.constants.ACCOUNT_ASSIST) over a period: end minus start,
    None unless both are known."""
    if start is None or end is None or len(start) != len(end):
        return None
    return [max(0, after - before) for after, before in zip(end, start)]


def assist_figures(diffs: TankCounters, assist: Sequence[int] | None, battles: int) -> dict[str, float | None]:
    """The assistance figures of a period's per-tank counters: spotting and tracking per battle
    from the account's `assist` change (ACCOUNT_ASSIST: they exist only per account), stun per
    battle and damage dealt / received from the tanks' counters; combined damage is damage plus
    the largest of the three averages (a lower bound of the game's per-battle figure: docs/data.md).
    All null when any of it is unknown for the period (a record without it) or without battles."""
    nothing = dict.fromkeys(ASSIST_FIGURES)
    known = battles and assist is not None and assist[0] > 0
    if not known or any(name not in diff for diff in diffs.values() for name in ASSIST_COUNTERS):
        return nothing
    assert assist is not None
    dealt = sum(_count(diff, "damage_dealt") for diff in diffs.values())
    received = sum(_count(diff, "damage_received") for diff in diffs.values())
    radio, track = assist[1] / assist[0], assist[2] / assist[0]
    stun = sum(_count(diff, "stun_assisted_damage") for diff in diffs.values()) / battles
    return {
        "avg_assist_radio": round(radio, 2),
        "avg_assist_track": round(track, 2),
        "avg_assist_stun": round(stun, 2),
        "avg_combined_damage": round(dealt / battles + max(radio, track, stun), 2),
        "damage_ratio": round(dealt / received, 2) if received else None,
    }


def _rated_rows(diffs: TankCounters) -> list[Mapping[str, Any]]:
    return [
        {"tank_id": tank_id, **{n: (v if type(v := c.get(n)) is int else _count(c, n)) for n in PERIOD_COUNTERS}}
        for tank_id, c in diffs.items()
    ]


def period_wn8(diffs: TankCounters, expected: ExpectedValues | None) -> float | None:
    """The wn8 figures_of gives for the same counters, without the other figures."""
    if expected is None or not sum(_count(c, "battles") for c in diffs.values()):
        return None
    return _round(account_wn8(_rated_rows(diffs), expected))


def figures_of(
    diffs: TankCounters,
    expected: ExpectedValues | None,
    tiers: Mapping[int, int],
    assist: Sequence[int] | None = None,
) -> dict[str, Any]:
    """The figures of a set of per-tank period counters ({tank_id: counters}).

    wn8 the XVM way over the tanks (tanks missing from the table skipped on both sides); wn7
    and efficiency over the summed totals with the battle-weighted average tier of these
    battles. Without battles: battles 0 and every rate and rating None. ``expected`` None (no
    table loaded) leaves wn8 None. ``assist``: the account's assistance change over the period
    (assist_change), for the ASSIST_FIGURES (null without it).
    """
    totals = _sum(diffs)
    battles = totals["battles"]
    rows = _rated_rows(diffs)
    tier = average_tier(rows, tiers) if battles else None
    wn8 = account_wn8(rows, expected) if battles and expected is not None else None
    return {
        "battles": battles,
        "wins": totals["wins"],
        "win_rate": _per_battle(100.0 * totals["wins"], battles),
        "avg_damage": _per_battle(totals["damage_dealt"], battles),
        "avg_frags": _per_battle(totals["frags"], battles),
        "avg_spotted": _per_battle(totals["spotted"], battles),
        "avg_defence": _per_battle(totals["dropped_capture_points"], battles),
        "avg_xp": _per_battle(totals["xp"], battles),
        "survival_rate": _per_battle(100.0 * totals["survived_battles"], battles),
        "hit_rate": round(100.0 * totals["hits"] / totals["shots"], 2) if totals["shots"] else None,
        "average_tier": _round(tier),
        "wn8": _round(wn8),
        # Which expected values rated these battles (computed rows fill the loaded table's gaps).
        "expected_values": expected.use(t for t, c in diffs.items() if _count(c, "battles") > 0)
        if expected is not None
        else None,
        **wn7_and_efficiency(totals, tier),
        **assist_figures(diffs, assist, battles),
    }


def period_figures(
    start: TankCounters, end: TankCounters, expected: ExpectedValues | None, tiers: Mapping[int, int]
) -> dict[str, Any]:
    """The figures of the battles played between two per-tank states ({tank_id: career counters})."""
    return figures_of(tank_differences(start, end), expected, tiers)


def state_figures(
    start: Mapping[int, Sequence[int]] | None,
    end: Mapping[int, Sequence[int]],
    expected: ExpectedValues | None,
    tiers: Mapping[int, int],
    assist: Sequence[int] | None = None,
) -> dict[str, Any]:
    """period_figures of two tracker states (rows in TANK_COUNTERS order), as state_differences reads them."""
    return figures_of(state_differences(start, end), expected, tiers, assist)


def recent_baseline(records: Sequence[Mapping[str, Any]], battles: int = RECENT_BATTLES) -> int | None:
    """Index of the baseline of "the last ``battles`` battles": the newest record at least that many
    battles before the newest one (``records`` oldest first, each with the account's career
    ``battles``), so the figures cover the fewest battles that are still at least ``battles``.
    None when no record lies that far back (the figures would cover fewer battles than they say).
    """
    if not records:
        return None
    target = _count(records[-1], "battles") - battles
    for index in range(len(records) - 2, -1, -1):
        if _count(records[index], "battles") <= target:
            return index
    return None


def _tank_wn8(tank_id: int, counters: Mapping[str, Any], expected: ExpectedValues | None) -> float | None:
    if expected is None:
        return None
    return _round(tank_wn8({"tank_id": tank_id, **{n: _count(counters, n) for n in PERIOD_COUNTERS}}, expected))


def tank_assist(counters: Mapping[str, Any], assist: Sequence[int] | None) -> dict[str, float | None]:
    """One tank's assistance figures over a period (or a career): stun per battle and damage dealt /
    received from its counters, combined damage with the account's spotting and tracking averages
    standing for the tank's (they exist only per account: docs/data.md); null where unknown."""
    battles = _count(counters, "battles")
    if not battles or any(name not in counters for name in ASSIST_COUNTERS):
        return {"avg_assist_stun": None, "avg_combined_damage": None, "damage_ratio": None}
    stun = _count(counters, "stun_assisted_damage")
    received = _count(counters, "damage_received")
    dealt = _count(counters, "damage_dealt")
    return {
        "avg_assist_stun": round(stun / battles, 2),
        "avg_combined_damage": _round(combined_damage(battles, dealt, stun, assist)),
        "damage_ratio": round(dealt / received, 2) if received else None,
    }


def tank_rows(
    start: TankCounters,
    end: TankCounters,
    expected: ExpectedValues | None,
    vehicles: Mapping[int, Mapping[str, Any]] | None = None,
    assist: Sequence[int] | None = None,
    career_assist: Sequence[int] | None = None,
    mastery: Mapping[int, int] | None = None,
) -> list[dict[str, Any]]:
    """One row per tank in ``end`` (the tanks the player owns): vehicle facts, career and period.

    ``vehicles`` maps tank_id to an encyclopedia record (name, tier, type, nation; None when
    unknown). ``period`` holds the raw counters over the period (zeros for a tank not played)
    plus win_rate, avg_damage, avg_frags, wn8 and the assistance figures (tank_assist, with the
    account's period ``assist``); ``career`` the end state's battles, wins, win_rate, avg_damage,
    wn8, the assistance figures (with ``career_assist``, the account's totals) and the mastery
    badge (``mastery``: {tank_id: 1..4}; 0 without one). Sorted by period battles, then career
    battles (both descending), then tank_id.
    """
    diffs = tank_differences(start, end)
    rows: list[tuple[tuple[int, int, int], dict[str, Any]]] = []
    for raw_id, after in end.items():
        tank_id = int(raw_id)
        played = diffs.get(tank_id) or dict.fromkeys((*PERIOD_COUNTERS, *ASSIST_COUNTERS), 0)
        battles = played["battles"]
        career_battles = _count(after, "battles")
        vehicle = (vehicles or {}).get(tank_id) or {}
        rows.append(
            (
                (-battles, -career_battles, tank_id),
                {
                    "tank_id": tank_id,
                    "name": vehicle.get("name"),
                    "tier": vehicle.get("tier"),
                    "type": vehicle.get("type"),
                    "nation": vehicle.get("nation"),
                    # The row its WN8 figures use: the loaded table's, a computed one, or none.
                    "expected_values_source": expected.source_of(tank_id) if expected is not None else None,
                    "career": {
                        "battles": career_battles,
                        "wins": _count(after, "wins"),
                        "win_rate": _per_battle(100.0 * _count(after, "wins"), career_battles),
                        "avg_damage": _per_battle(_count(after, "damage_dealt"), career_battles),
                        "wn8": _tank_wn8(tank_id, after, expected),
                        **tank_assist(after, career_assist),
                        "mark_of_mastery": int((mastery or {}).get(tank_id, 0)),
                    },
                    "period": {
                        **{name: played[name] for name in ROW_COUNTERS},
                        "win_rate": _per_battle(100.0 * played["wins"], battles),
                        "avg_damage": _per_battle(played["damage_dealt"], battles),
                        "avg_frags": _per_battle(played["frags"], battles),
                        "wn8": _tank_wn8(tank_id, played, expected) if battles else None,
                        **tank_assist(played, assist),
                    },
                },
            )
        )
    rows.sort(key=lambda pair: pair[0])
    return [row for _, row in rows]


GROUP_FIGURES = ("battles", "wins", "win_rate", "avg_damage", "avg_combined_damage", "wn8")


def group_figures(
    diffs: TankCounters,
    vehicles: Mapping[int, Mapping[str, Any]] | None,
    group_by: str,
    expected: ExpectedValues | None,
    tiers: Mapping[int, int],
    assist: Sequence[int] | None,
) -> list[dict[str, Any]]:
    """The period's figures per group of tanks (`group_by`: tier, type or nation, as the
    encyclopedia gives it; null for a tank it lacks), each over the group's own per-tank
    differences (so the groups' battles add up to the period's), with the account's spotting and
    tracking averages standing for each group's in its combined damage; played groups only,
    sorted by battles (descending), then group."""
    groups: dict[Any, dict[int, Mapping[str, Any]]] = {}
    for tank_id, diff in diffs.items():
        if _count(diff, "battles") <= 0:
            continue
        key = ((vehicles or {}).get(tank_id) or {}).get(group_by)
        groups.setdefault(key, {})[tank_id] = diff
    out = []
    for key, members in groups.items():
        figures = figures_of(members, expected, tiers, assist)
        out.append({group_by: key, "tanks": len(members), **{name: figures[name] for name in GROUP_FIGURES}})
    out.sort(key=lambda row: (-row["battles"], str(row[group_by])))
    return out
