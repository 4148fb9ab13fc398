"""The vehicle catalogue (/vehicles) and each tank's strength with its drivers' skill taken out (/tanks/strength)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from server.contract.catalogue.figures import POPULATION_MIN_PLAYERS, STRENGTH_METHOD, VEHICLE_HEADLINE_DAYS
from server.contract.catalogue.model import PREFIX
from server.contract.errors import APIError
from server.domain.days import utc_day
from server.domain.strength import (
    STRENGTH_MIN_BATTLES,
    STRENGTH_MIN_OTHER_BATTLES,
    STRENGTH_MIN_PLAYERS,
    strength_figures,
)
from server.domain.tank_lists import TankQuery
from server.services.encyclopedia import VehicleCatalogue, catalogue_fields
from server.services.tank_stats import NO_PANEL, period_head, tank_figures

if TYPE_CHECKING:
    from server.services.expected import Ratings
    from server.services.official import OfficialFigures
    from server.services.tank_stats import PeriodTable, TankStatsService


# A catalogue is stale once it is older than a day and a refresh: the answer says so.
STALE_SECONDS = 86400 + 3600


def vehicle_row(
    region: str,
    tank_id: int,
    record: Mapping[str, Any] | None,
    table: PeriodTable | None,
    official_marks: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """One vehicle as /vehicles lists it: the encyclopedia's fields (null, with in_encyclopedia
    false, for a tank the tracked players drove that the encyclopedia lacks), its page, and its
    headline figures over VEHICLE_HEADLINE_DAYS where the tracked players drove it."""
    facts = record or {}
    row: dict[str, Any] = {
        "tank_id": tank_id,
        **{key: facts.get(key) for key in ("name", "tier", "type", "nation")},
        **catalogue_fields(record),
    }
    row["page"] = f"{PREFIX}/tank/{tank_id}/{region}"
    entry = table.entries.get(tank_id) if table is not None else None
    if table is None or entry is None:
        row["stats"] = None
    else:
        figures = tank_figures(entry, int(table.doc.get("min_players", POPULATION_MIN_PLAYERS)))
        row["stats"] = {key: figures[key] for key in ("players", "battles", "win_rate", "avg_damage")}
    row["official_marks"] = dict(official_marks) if official_marks is not None else None
    return row


def strength_rows(table: PeriodTable, vehicles: Mapping[int, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every tank of a period table with its strength, ranked by relative win rate (ties in tank_id
    order), then the tanks below the sample in tank_id order: built once per table."""
    rows = []
    for tank_id in sorted(table.entries):
        facts = vehicles.get(tank_id) or {}
        figures = strength_figures(table.entries[tank_id].get("strength"), STRENGTH_MIN_PLAYERS, STRENGTH_MIN_BATTLES)
        rows.append(
            {"tank_id": tank_id, **{key: facts.get(key) for key in ("name", "tier", "type", "nation")}, **figures}
        )
    rated = sorted((r for r in rows if r["relative_win_rate"] is not None), key=lambda r: -r["relative_win_rate"])
    return rated + [r for r in rows if r["relative_win_rate"] is None]


class VehicleService:
    """/vehicles from the catalogue and the tank tables; /tanks/strength from the tank tables."""

    def __init__(
        self,
        catalogue: VehicleCatalogue,
        tank_stats: TankStatsService,
        ratings: Ratings,
        official: OfficialFigures | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.catalogue = catalogue
        self.tank_stats = tank_stats
        self.ratings = ratings  # the vehicles' names, tiers, types and nations
        self.official = official
        self.clock = clock
        # region -> (the catalogue, 30-day table and official figures the rows were built from, the rows)
        self._rows: dict[str, tuple[tuple[Any, ...], list[dict[str, Any]]]] = {}
        # (region, days) -> (the table and vehicles mapping the tier list was built from, its rows)
        self._strength: dict[tuple[str, int, str], tuple[PeriodTable, Mapping[int, Any], list[dict[str, Any]]]] = {}

    async def vehicles(
        self,
        region: str,
        query: TankQuery,
        premium: bool | None,
        search: str | None,
    ) -> dict[str, Any]:
        found = await self.catalogue.records(region)
        if found is None:
            raise APIError("upstream_unavailable", "the vehicle catalogue has not been fetched yet")
        fetched_at, records = found
        table = await self.tank_stats.table(region, VEHICLE_HEADLINE_DAYS)
        official = await self.official.current(region) if self.official is not None else None
        # The objects themselves, compared by identity: an id() may be reused once its object is freed.
        key = (records, table, official)
        kept = self._rows.get(region)
        if kept is None or any(a is not b for a, b in zip(kept[0], key)):
            ids = sorted(set(records) | set(table.entries if table is not None else ()))
            rows = [
                vehicle_row(
                    region,
                    tank_id,
                    records.get(tank_id),
                    table,
                    ((official.thresholds(tank_id) or {}).get("marks") if official is not None else None),
                )
                for tank_id in ids
            ]
            kept = self._rows[region] = (key, rows)
        wanted = search.casefold() if search else None
        rows = [
            row
            for row in kept[1]
            if query.matches(row)
            and (premium is None or row["is_premium"] is premium)
            and (
                wanted is None
                or wanted in (row["name"] or "").casefold()
                or wanted in (row["short_name"] or "").casefold()
            )
        ]
        return {
            "region": region,
            "fetched_at": int(fetched_at),
            "fetched_on": utc_day(fetched_at),
            "stale": self.clock() - fetched_at > STALE_SECONDS,
            "headline_days": VEHICLE_HEADLINE_DAYS,
            **query.paging(len(rows)),
            "vehicles": query.page(rows),
        }

    async def strength(
        self,
        region: str,
        days: int,
        query: TankQuery,
        population: str | None = None,
    ) -> dict[str, Any]:
        """A tier list over `population` (tank_stats.chosen): the tanks ranked by relative win rate
        (those below the sample after them, unranked, in tank_id order)."""
        population, table = await self.tank_stats.chosen(region, days, population)
        if table is None:
            raise APIError("no_statistics", NO_PANEL if population == "panel" else None)
        vehicles = await self.ratings.vehicles(region)
        kept = self._strength.get((region, days, population))
        if kept is None or kept[0] is not table or kept[1] is not vehicles:
            kept = self._strength[(region, days, population)] = (table, vehicles, strength_rows(table, vehicles))
        chosen = [row for row in kept[2] if query.matches(row)]
        ranked = sum(row["relative_win_rate"] is not None for row in chosen)  # the rated rows lead
        page = [
            {**row, "rank": i + 1 if i < ranked else None} for i, row in enumerate(query.page(chosen), query.offset)
        ]
        return {
            **period_head(region, days, table.doc),
            "method": STRENGTH_METHOD,
            "min_players": STRENGTH_MIN_PLAYERS,
            "min_battles": STRENGTH_MIN_BATTLES,
            "min_other_battles": STRENGTH_MIN_OTHER_BATTLES,
            "ranked": ranked,
            **query.paging(len(chosen)),
            "tanks": page,
        }
