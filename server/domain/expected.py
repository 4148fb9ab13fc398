"""WN8 expected values computed from the tracked population (method ev1, docs/expected-values.md)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from server.contract.catalogue.figures import (
    EXPECTED_METHOD,
    EXPECTED_MIN_ACCOUNT_BATTLES,
    EXPECTED_MIN_PLAYERS,
    EXPECTED_MIN_ROW_BATTLES,
    EXPECTED_MIN_TANK_BATTLES,
    EXPECTED_STATS,
    EXPECTED_WINDOW_DAYS,
)
from server.domain.ratings import ExpectedValues, TankExpectation
from store.constants import TANK_COUNTERS

METHOD_VERSION = EXPECTED_METHOD
WINDOW_DAYS = EXPECTED_WINDOW_DAYS  # the days of per-tank changes a table is computed from
# The five statistics of a row, in TankExpectation's field order, and the counters they come from.
STATS = EXPECTED_STATS
_COLUMNS = tuple(
    TANK_COUNTERS.index(name) for name in ("damage_dealt", "spotted", "frags", "dropped_capture_points", "wins")
)
_BATTLES = TANK_COUNTERS.index("battles")

LARGEST_DIFFERENCES = 10  # tanks listed in a comparison block (/expected-values)

Rows = Mapping[int, Sequence[int]]  # {tank_id: counters over the window in TANK_COUNTERS order}
Vector = tuple[float, float, float, float, float]


@dataclass(frozen=True, slots=True)
class Minimums:
    """Who counts as a point, and what a computed row needs (docs/expected-values.md)."""

    tank_battles: int = EXPECTED_MIN_TANK_BATTLES  # a player's battles on the tank in the window
    account_battles: int = EXPECTED_MIN_ACCOUNT_BATTLES  # ... and on the account's other rated tanks
    players: int = EXPECTED_MIN_PLAYERS  # points behind a row
    row_battles: int = EXPECTED_MIN_ROW_BATTLES  # battles behind a row


@dataclass(frozen=True, slots=True)
class ComputedRow:
    expectation: TankExpectation
    players: int
    battles: int


@dataclass(frozen=True, slots=True)
class Fit:
    """The rows a computation produced, how many passes it took and whether it settled."""

    rows: dict[int, ComputedRow]
    passes: int
    converged: bool


def _vector(expectation: TankExpectation) -> Vector:
    return (
        expectation.damage,
        expectation.spot,
        expectation.frag,
        expectation.defence,
        expectation.win_rate / 100.0,
    )


def _expectation(vector: Sequence[float]) -> TankExpectation:
    damage, spot, frag, defence, win = vector
    return TankExpectation(damage=damage, spot=spot, frag=frag, defence=defence, win_rate=win * 100.0)


def fit_rows(
    accounts: Mapping[int, Rows], table: Mapping[int, Vector], targets: Collection[int], minimums: Minimums
) -> dict[int, ComputedRow]:
    """One pass: each target tank's row from its players under `table` ({tank_id: vector}).

    A player of tank t is a point when he has minimums.tank_battles on t and minimums.account_battles
    on the account's other tanks the table rates. x: his account ratio per statistic over those
    other tanks (actual total / battles x row; t left out, so a tank never vouches for itself);
    y: his per-battle figure on t. The row is the value at x = 1 of the line through the origin,
    mean(y) / mean(x) (why not a least-squares line: docs/expected-values.md)."""
    sums: dict[int, list[float]] = {}  # tank -> [sum x (5), sum y (5), players, battles]
    for rows in accounts.values():
        mine = [t for t in rows if t in targets and rows[t][_BATTLES] >= minimums.tank_battles]
        if not mine:
            continue
        actual = [0.0] * 5
        expected = [0.0] * 5
        battles = 0
        for tank_id, row in rows.items():
            vector = table.get(tank_id)
            played = row[_BATTLES]
            if vector is None or played <= 0:
                continue
            battles += played
            for i, column in enumerate(_COLUMNS):
                actual[i] += row[column]
                expected[i] += played * vector[i]
        for tank_id in mine:
            row = rows[tank_id]
            played = row[_BATTLES]
            own = table.get(tank_id)
            others = battles - played if own is not None else battles
            if others < minimums.account_battles:
                continue
            if own is None:
                rest_actual, rest_expected = actual, expected
            else:
                rest_actual = [actual[i] - row[column] for i, column in enumerate(_COLUMNS)]
                rest_expected = [expected[i] - played * own[i] for i in range(5)]
            if min(rest_expected) <= 0:
                continue
            entry = sums.get(tank_id)
            if entry is None:
                entry = sums[tank_id] = [0.0] * 12
            for i, column in enumerate(_COLUMNS):
                entry[i] += rest_actual[i] / rest_expected[i]
                entry[5 + i] += row[column] / played
            entry[10] += 1
            entry[11] += played
    out: dict[int, ComputedRow] = {}
    for tank_id, entry in sums.items():
        players, played = int(entry[10]), int(entry[11])
        if players < minimums.players or played < minimums.row_battles:
            continue
        if min(entry[:5]) <= 0 or min(entry[5:10]) <= 0:
            continue  # a statistic nobody showed (an arty's spots in a small sample): no row
        out[tank_id] = ComputedRow(_expectation([entry[5 + i] / entry[i] for i in range(5)]), players, played)
    return out


def _largest_change(new: Mapping[int, ComputedRow], old: Mapping[int, Vector]) -> float:
    changes = [
        abs(value / before - 1.0)
        for tank_id, row in new.items()
        if (previous := old.get(tank_id)) is not None
        for value, before in zip(_vector(row.expectation), previous, strict=True)
        if before > 0
    ]
    return max(changes, default=0.0)


def fill_gaps(
    accounts: Mapping[int, Rows],
    loaded: ExpectedValues,
    tanks: Collection[int],
    minimums: Minimums,
    tolerance: float = 1e-3,
    max_passes: int = 20,
) -> Fit:
    """Rows for the `tanks` the loaded table lacks; its own rows stay as they are. Each pass fits
    the gaps under the loaded rows plus the gap rows of the pass before (players of mostly new
    tanks get fuller ratios), until no value moves by more than `tolerance` (relative)."""
    base = {tank_id: _vector(e) for tank_id in tanks if (e := loaded.get(tank_id)) is not None}
    gaps = {tank_id for tank_id in tanks if tank_id not in base}
    computed: dict[int, ComputedRow] = {}
    previous: dict[int, Vector] = {}
    for passes in range(1, max_passes + 1):
        table = dict(base)
        table.update({tank_id: _vector(row.expectation) for tank_id, row in computed.items()})
        computed = fit_rows(accounts, table, gaps, minimums)
        settled = passes > 1 and set(computed) == set(previous) and _largest_change(computed, previous) < tolerance
        previous = {tank_id: _vector(row.expectation) for tank_id, row in computed.items()}
        if settled or not computed:
            return Fit(computed, passes, True)
    return Fit(computed, max_passes, False)


def recompute_all(
    accounts: Mapping[int, Rows],
    loaded: ExpectedValues,
    tanks: Collection[int],
    minimums: Minimums,
    tolerance: float = 1e-3,
    max_passes: int = 30,
) -> Fit:
    """Every tank's row refitted (--expected-values-source computed), from the loaded table as the
    start, to a fixed point. Multiplying every row by a constant is a fixed point too, so after
    each pass each statistic is rescaled to keep the battle-weighted geometric mean of
    computed / loaded over the tanks both have at 1: the loaded table sets the scale."""
    anchor = {tank_id: _vector(e) for tank_id in tanks if (e := loaded.get(tank_id)) is not None}
    table: dict[int, Vector] = dict(anchor)
    computed: dict[int, ComputedRow] = {}
    for passes in range(1, max_passes + 1):
        fitted = fit_rows(accounts, table, set(tanks), minimums)
        shared = [(tank_id, row) for tank_id, row in fitted.items() if tank_id in anchor]
        weight = sum(row.battles for _, row in shared)
        factors = [1.0] * 5
        if weight:
            for i in range(5):
                log_mean = (
                    sum(row.battles * math.log(_vector(row.expectation)[i] / anchor[t][i]) for t, row in shared)
                    / weight
                )
                factors[i] = math.exp(log_mean)
        computed = {
            tank_id: ComputedRow(
                _expectation([v / f for v, f in zip(_vector(row.expectation), factors, strict=True)]),
                row.players,
                row.battles,
            )
            for tank_id, row in fitted.items()
        }
        change = _largest_change(computed, table)
        table = dict(anchor)
        table.update({tank_id: _vector(row.expectation) for tank_id, row in computed.items()})
        if change < tolerance:
            return Fit(computed, passes, True)
    return Fit(computed, max_passes, False)


def computed_rows(doc: Mapping[str, Any], which: str) -> dict[int, TankExpectation]:
    """The rows of a stored table's `which` part ("gaps" or "computed") as expectations."""
    rows = (doc.get(which) or {}).get("rows") or {}
    return {
        int(tank_id): TankExpectation(damage=row[0], spot=row[1], frag=row[2], defence=row[3], win_rate=row[4])
        for tank_id, row in rows.items()
    }


def comparison(
    doc: Mapping[str, Any], table: ExpectedValues, vehicles: Mapping[int, Mapping[str, Any]]
) -> dict[str, Any] | None:
    """Computed rows (every tank the job could fit) against the loaded table, for the tanks both
    have: the median ratio computed / table per statistic overall, per tier and per vehicle type,
    and the LARGEST_DIFFERENCES tanks whose largest |log ratio| is largest."""
    computed = computed_rows(doc, "computed")
    samples = (doc.get("computed") or {}).get("rows") or {}
    ratios: dict[int, tuple[float, ...]] = {}
    for tank_id, row in computed.items():
        loaded = table.get(tank_id)
        if loaded is not None:
            ratios[tank_id] = tuple(c / t for c, t in zip(_vector(row), _vector(loaded), strict=True))
    if not ratios:
        return None

    def medians(tanks: list[int]) -> dict[str, Any]:
        return {
            "tanks": len(tanks),
            **{stat: round(statistics.median(ratios[t][i] for t in tanks), 4) for i, stat in enumerate(STATS)},
        }

    def groups(key: str) -> list[dict[str, Any]]:
        by: dict[Any, list[int]] = {}
        for tank_id in ratios:
            value = (vehicles.get(tank_id) or {}).get(key)
            if value is not None:
                by.setdefault(value, []).append(tank_id)
        return [{key: value, **medians(tanks)} for value, tanks in sorted(by.items())]

    def spread(tank_id: int) -> tuple[float, int]:
        logs = [abs(math.log(r)) for r in ratios[tank_id]]
        return max(logs), logs.index(max(logs))

    largest = sorted(ratios, key=lambda t: (-spread(t)[0], t))[:LARGEST_DIFFERENCES]
    return {
        "computed_version": doc["version"],
        "table_version": table.version,
        **medians(list(ratios)),
        "by_tier": groups("tier"),
        "by_type": groups("type"),
        "largest_differences": [
            {
                "tank_id": tank_id,
                "name": (vehicles.get(tank_id) or {}).get("name"),
                "tier": (vehicles.get(tank_id) or {}).get("tier"),
                "type": (vehicles.get(tank_id) or {}).get("type"),
                "statistic": STATS[spread(tank_id)[1]],
                "ratios": {stat: round(ratios[tank_id][i], 4) for i, stat in enumerate(STATS)},
                "players": int(samples[str(tank_id)][5]),
                "battles": int(samples[str(tank_id)][6]),
            }
            for tank_id in largest
        ],
    }
