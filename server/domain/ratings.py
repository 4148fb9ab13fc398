"""Player ratings (WN8, WN7, efficiency) from Wargaming statistics and XVM expected values."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

# The usual WN8 colour scale's bounds and labels are the contract's.
from server.contract.catalogue.figures import WN8_COLOURS as _WN8_COLOURS
from server.contract.catalogue.figures import WN8_TOP_COLOUR

UNKNOWN_VERSION = "unknown"

_EXPECTED_KEYS = ("expDamage", "expSpot", "expFrag", "expDef", "expWinRate")


@dataclass(frozen=True, slots=True)
class TankExpectation:
    """Per-battle values an average player reaches in one tank."""

    damage: float
    spot: float
    frag: float
    defence: float
    win_rate: float  # percent, as published by XVM


class ExpectedValues:
    """Immutable XVM table of WN8 expected values, keyed by tank id."""

    __slots__ = ("_by_tank", "_version", "rows_skipped", "skip_reasons", "_computed", "_computed_version")

    def __init__(
        self,
        by_tank: Mapping[int, TankExpectation],
        version: str = UNKNOWN_VERSION,
        computed: frozenset[int] = frozenset(),
        computed_version: str | None = None,
    ):
        self._by_tank = MappingProxyType(dict(by_tank))
        self._version = version  # the loaded (public) table's version
        self.rows_skipped = 0  # malformed rows left out by from_json
        self.skip_reasons: tuple[str, ...] = ()  # the first few, for /status and the log
        self._computed = computed  # tanks whose row was computed from the tracked population
        self._computed_version = computed_version  # the computed table those rows come from

    @classmethod
    def merged(
        cls, table: ExpectedValues, computed: Mapping[int, TankExpectation], computed_version: str, everywhere: bool
    ) -> ExpectedValues:
        """`table` with computed rows: for the tanks it lacks, or (`everywhere`) for every tank
        that has one. The loaded table's version stays `version`; the computed one is
        `computed_version`. `table` itself when no computed row is used."""
        rows = dict(table._by_tank)
        used = frozenset(computed if everywhere else (t for t in computed if t not in rows))
        if not used:
            return table
        rows.update({tank_id: computed[tank_id] for tank_id in used})
        out = cls(rows, table.version, used, computed_version)
        out.rows_skipped, out.skip_reasons = table.rows_skipped, table.skip_reasons
        return out

    @property
    def computed_version(self) -> str | None:
        return self._computed_version

    def source_of(self, tank_id: int) -> str | None:
        """'computed', 'table', or None for a tank without a row."""
        if tank_id in self._computed:
            return "computed"
        return "table" if tank_id in self._by_tank else None

    def use(self, played: Iterable[int]) -> dict[str, Any] | None:
        """Which rows a rating over the `played` tanks (tank ids with battles) used: `source`
        table, computed or mixed (null when none of them has a row), `computed_tanks` and
        `unrated_tanks` (no row: left out of WN8), and the versions that rate them again. None
        when nothing was played."""
        computed = table = unrated = 0
        for tank_id in played:
            if tank_id in self._computed:
                computed += 1
            elif tank_id in self._by_tank:
                table += 1
            else:
                unrated += 1
        if not computed + table + unrated:
            return None
        source = ("mixed" if table else "computed") if computed else ("table" if table else None)
        return {
            "version": self._computed_version if computed else self._version,
            "source": source,
            "computed_tanks": computed,
            "unrated_tanks": unrated,
            "table_version": self._version,
            "computed_version": self._computed_version if computed else None,
        }

    @classmethod
    def from_json(cls, obj: Any) -> ExpectedValues:
        """Build the table from the decoded XVM JSON document.

        Tolerant row by row, as published copies differ: numbers given as strings are accepted,
        a malformed or duplicate row is skipped and counted (``rows_skipped``). Only a document
        without the ``data`` list, or without one usable row, is rejected.
        """
        if not isinstance(obj, dict):
            raise ValueError("expected values: top level must be a JSON object")
        data = obj.get("data")
        if not isinstance(data, list):
            raise ValueError('expected values: "data" must be a list')
        if not data:
            # An empty table would silently turn every WN8 into None.
            raise ValueError('expected values: "data" is empty')
        by_tank: dict[int, TankExpectation] = {}
        reasons: list[str] = []
        for index, entry in enumerate(data):
            try:
                tank_id, expectation = _parse_entry(index, entry)
                if tank_id in by_tank:
                    raise ValueError(f"expected values: duplicate IDNum {tank_id} at data[{index}] (first kept)")
            except ValueError as exc:
                reasons.append(str(exc))
                continue
            by_tank[tank_id] = expectation
        if not by_tank:
            raise ValueError(f"expected values: no usable row ({reasons[0]})")
        table = cls(by_tank, _header_version(obj.get("header")))
        table.rows_skipped = len(reasons)
        table.skip_reasons = tuple(reasons[:5])
        return table

    @property
    def version(self) -> str:
        return self._version

    def get(self, tank_id: int) -> TankExpectation | None:
        return self._by_tank.get(tank_id)

    def items(self) -> Iterable[tuple[int, TankExpectation]]:
        return self._by_tank.items()

    def __len__(self) -> int:
        return len(self._by_tank)

    def __contains__(self, tank_id: object) -> bool:
        return tank_id in self._by_tank

    def __repr__(self) -> str:
        computed = f", computed={len(self._computed)} of {self._computed_version}" if self._computed else ""
        return f"ExpectedValues(version={self._version!r}, tanks={len(self)}{computed})"


def xvm_row(tank_id: int, expectation: TankExpectation) -> dict[str, Any]:
    """A row as the XVM file writes it (3 decimals), which from_json reads back."""
    return {
        "IDNum": tank_id,
        "expDef": round(expectation.defence, 3),
        "expFrag": round(expectation.frag, 3),
        "expSpot": round(expectation.spot, 3),
        "expDamage": round(expectation.damage, 3),
        "expWinRate": round(expectation.win_rate, 3),
    }


def _is_number(value: Any) -> bool:
    # bool is an int subclass, but true/false in the table means a broken file.
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _number(value: Any) -> float | None:
    """A number, or a string holding one (older XVM copies quote every value); else None."""
    if _is_number(value):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def _parse_entry(index: int, entry: Any) -> tuple[int, TankExpectation]:
    where = f"expected values: data[{index}]"
    if not isinstance(entry, dict):
        raise ValueError(f"{where} must be an object")
    raw_id = entry.get("IDNum")
    number = _number(raw_id)
    if number is None or not math.isfinite(number) or number != int(number) or number <= 0:
        raise ValueError(f"{where}: IDNum must be a positive integer, got {raw_id!r}")
    tank_id = int(number)
    values = {}
    for key in _EXPECTED_KEYS:
        value = _number(entry.get(key))
        if value is None:
            raise ValueError(f"{where} (IDNum {tank_id}): {key} must be a number, got {entry.get(key)!r}")
        # Expected values are divisors of the WN8 ratios, so they must be positive.
        if not math.isfinite(value) or value <= 0:
            raise ValueError(f"{where} (IDNum {tank_id}): {key} must be positive, got {value!r}")
        values[key] = value
    return tank_id, TankExpectation(
        damage=values["expDamage"],
        spot=values["expSpot"],
        frag=values["expFrag"],
        defence=values["expDef"],
        win_rate=values["expWinRate"],
    )


def _header_version(header: Any) -> str:
    if isinstance(header, dict):
        version = header.get("version")
        if isinstance(version, str) and version:
            return version
        if _is_number(version):
            return str(version)
    return UNKNOWN_VERSION


def parse_expected_values(raw: bytes) -> ExpectedValues:
    """Decode and validate an XVM expected-values document (e.g. an HTTP response body)."""
    try:
        obj = json.loads(raw)
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError are both ValueErrors
        raise ValueError(f"expected values: not valid JSON ({exc})") from exc
    return ExpectedValues.from_json(obj)


def load_expected_values_file(path: str | Path) -> ExpectedValues:
    """Read an XVM expected-values file; blocking, so call it at start-up or off the IOLoop."""
    return parse_expected_values(Path(path).read_bytes())


def wn8_from_normalized(r_damage_c: float, r_frag_c: float, r_spot_c: float, r_def_c: float, r_win_c: float) -> float:
    """WN8 from the normalised ratios (rDAMAGEc, rFRAGc, rSPOTc, rDEFc, rWINc)."""
    return (
        980 * r_damage_c
        + 210 * r_damage_c * r_frag_c
        + 155 * r_frag_c * r_spot_c
        + 75 * r_def_c * r_frag_c
        + 145 * min(1.8, r_win_c)
    )


def wn8_from_ratios(r_damage: float, r_spot: float, r_frag: float, r_def: float, r_win: float) -> float:
    """WN8 from the raw actual/expected ratios, applying the XVM normalisation."""
    r_win_c = max(0.0, (r_win - 0.71) / (1 - 0.71))
    r_damage_c = max(0.0, (r_damage - 0.22) / (1 - 0.22))
    # Frags, spotting and defence are capped relative to damage so they cannot
    # carry a player who deals little damage.
    r_frag_c = max(0.0, min(r_damage_c + 0.2, (r_frag - 0.12) / (1 - 0.12)))
    r_spot_c = max(0.0, min(r_damage_c + 0.1, (r_spot - 0.38) / (1 - 0.38)))
    r_def_c = max(0.0, min(r_damage_c + 0.1, (r_def - 0.10) / (1 - 0.10)))
    return wn8_from_normalized(r_damage_c, r_frag_c, r_spot_c, r_def_c, r_win_c)


def _wn8_from_totals(tanks: Iterable[Mapping[str, Any]], expected: ExpectedValues) -> float | None:
    actual_damage = actual_spot = actual_frag = actual_def = actual_wins = 0.0
    exp_damage = exp_spot = exp_frag = exp_def = exp_wins = 0.0
    for tank in tanks:
        battles = tank["battles"]
        expectation = expected.get(tank["tank_id"])
        # Tanks absent from the table are left out of BOTH sides; counting only
        # their actual stats would inflate the ratios.
        if battles <= 0 or expectation is None:
            continue
        actual_damage += tank["damage_dealt"]
        actual_spot += tank["spotted"]
        actual_frag += tank["frags"]
        actual_def += tank["dropped_capture_points"]
        actual_wins += tank["wins"]
        exp_damage += battles * expectation.damage
        exp_spot += battles * expectation.spot
        exp_frag += battles * expectation.frag
        exp_def += battles * expectation.defence
        exp_wins += battles * expectation.win_rate / 100
    if exp_damage == 0:
        return None
    return wn8_from_ratios(
        actual_damage / exp_damage,
        actual_spot / exp_spot,
        actual_frag / exp_frag,
        actual_def / exp_def,
        actual_wins / exp_wins,
    )


def account_wn8(tanks: list[Mapping[str, Any]], expected: ExpectedValues) -> float | None:
    """Account WN8 the XVM way: ratios of summed actual to summed expected totals.

    Each tank is a Wargaming ``tanks/stats`` "all" block plus ``tank_id``.
    None when no tank known to the table has battles.
    """
    return _wn8_from_totals(tanks, expected)


def tank_wn8(tank: Mapping[str, Any], expected: ExpectedValues) -> float | None:
    """WN8 of a single tank; None when it has no battles or is not in the table."""
    return _wn8_from_totals([tank], expected)


def average_tier(tanks: list[Mapping[str, Any]], tiers: Mapping[int, int]) -> float | None:
    """Battle-weighted average tier; tanks of unknown tier are skipped."""
    weighted = 0.0
    battles_total = 0
    for tank in tanks:
        tier = tiers.get(tank["tank_id"])
        battles = tank["battles"]
        if tier is None or battles <= 0:
            continue
        weighted += battles * tier
        battles_total += battles
    if battles_total == 0:
        return None
    return weighted / battles_total


def _check_tier(avg_tier: float) -> None:
    # Tiers start at 1; below that WN7's (GAMESPLAYED/220)^(3/TIER) term overflows.
    if avg_tier < 1:
        raise ValueError(f"average tier must be at least 1, got {avg_tier!r}")


def efficiency(
    battles: int, damage: float, frags: float, spotted: float, defence: float, capture: float, avg_tier: float | None
) -> float | None:
    """Classic XVM / wot-news efficiency rating (EFF); None without battles or tier.

    EFF = DAMAGE*(10/(TIER+2))*(0.23+2*TIER/100) + FRAGS*250 + SPOT*150
          + log(CAP+1, 1.732)*150 + DEF*150, all per battle.
    Reproduces XVM's value for sample players (see tests).
    """
    if battles <= 0 or avg_tier is None:
        return None
    _check_tier(avg_tier)
    tier = avg_tier
    return (
        damage / battles * (10 / (tier + 2)) * (0.23 + 2 * tier / 100)
        + frags / battles * 250
        + spotted / battles * 150
        + math.log(capture / battles + 1, 1.732) * 150
        + defence / battles * 150
    )


def wn7(
    battles: int, wins: int, damage: float, frags: float, spotted: float, defence: float, avg_tier: float | None
) -> float | None:
    """WN7 rating; None without battles or tier.

    Formula as published with the WN7 release (forum.worldoftanks.com topic
    184017 "actual statistically sound efficiency formula"), quoted identically
    by vbaddict.net and several open-source stats tools:
        (1240-1040/(MIN(TIER,6))^0.164)*FRAGS
        +DAMAGE*530/(184*e^(0.24*TIER)+130)
        +SPOT*125*MIN(TIER,3)/3
        +MIN(DEF,2.2)*100
        +((185/(0.17+e^((WINRATE-35)*-0.134)))-500)*0.45
        -[(5-MIN(TIER,5))*125] / [1+e^((TIER-(GAMESPLAYED/220)^(3/TIER))*1.5)]
    with per-battle FRAGS/DAMAGE/SPOT/DEF and WINRATE in percent.
    """
    if battles <= 0 or avg_tier is None:
        return None
    _check_tier(avg_tier)
    tier = avg_tier
    win_rate = wins / battles * 100
    frag_term = (1240 - 1040 / min(tier, 6) ** 0.164) * frags / battles
    damage_term = damage / battles * 530 / (184 * math.exp(0.24 * tier) + 130)
    spot_term = spotted / battles * 125 * min(tier, 3) / 3
    defence_term = min(defence / battles, 2.2) * 100
    win_term = (185 / (0.17 + math.exp((win_rate - 35) * -0.134)) - 500) * 0.45
    # Penalises many battles at a low average tier (seal clubbing); vanishes at tier 5+.
    low_tier_penalty = (5 - min(tier, 5)) * 125 / (1 + math.exp((tier - (battles / 220) ** (3 / tier)) * 1.5))
    return frag_term + damage_term + spot_term + defence_term + win_term - low_tier_penalty


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def wn7_and_efficiency(totals: Mapping[str, Any], tier: float | None) -> dict[str, float | None]:
    """{wn7, efficiency} (rounded) of summed counters (account/info's statistics.all, or a period's
    sums) at the battle-weighted average tier `tier`; None without battles or tier."""
    battles = totals["battles"]
    defence, capture = totals["dropped_capture_points"], totals["capture_points"]
    damage, frags, spotted = totals["damage_dealt"], totals["frags"], totals["spotted"]
    return {
        "wn7": _round(wn7(battles, totals["wins"], damage, frags, spotted, defence, tier)),
        "efficiency": _round(efficiency(battles, damage, frags, spotted, defence, capture, tier)),
    }


def compute_ratings(
    totals: Mapping[str, Any], tanks: list[Mapping[str, Any]], expected: ExpectedValues, tiers: Mapping[int, int]
) -> dict[str, Any]:
    """All ratings of one account.

    ``totals`` is Wargaming ``account/info`` ``statistics.all``; ``tanks`` the
    per-tank "all" stats with ``tank_id``; ``tiers`` maps tank id to tier.
    """
    tier = average_tier(tanks, tiers)
    return {
        "wn8": _round(account_wn8(tanks, expected)),
        **wn7_and_efficiency(totals, tier),
        "average_tier": _round(tier),
        "expected_values_version": expected.version,
        "expected_values": expected.use(tank["tank_id"] for tank in tanks if tank["battles"] > 0),
    }


def wn8_color(wn8: float | None) -> str | None:
    """Label of the usual WN8 colour scale, e.g. "good" for 1200-1599; None for None."""
    if wn8 is None:
        return None
    for upper, label in _WN8_COLOURS:
        if wn8 < upper:
            return label
    return WN8_TOP_COLOUR
