"""Tank statistics of the random panel or the tracked population: the table of a region's tanks, one tank, the expected values."""

from __future__ import annotations

import dataclasses

from handlers.base import BaseHandler, api_routes
from handlers.params import arguments_of
from server.contract.catalogue import EXPECTED_VALUES, TANK, TANK_MARKS, TANK_STATS
from server.domain.tank_lists import TankQuery
from server.serving.answers import POPULATION_TAG


@dataclasses.dataclass(frozen=True, slots=True)
class TankFilterArgs:
    """What every list of tanks reads (the tank lists here, the catalogue and the strength list in
    handlers/vehicles.py): the region, the tier, type and nation filters, paging; each view adds its own."""

    region: str
    tier: int | None
    type: str | None
    nation: str | None
    limit: int
    offset: int

    def query(self) -> TankQuery:
        return TankQuery(self.tier, self.type, self.nation, self.limit, self.offset)


@arguments_of(TANK_MARKS)
@dataclasses.dataclass(frozen=True, slots=True)
class TankListArgs(TankFilterArgs):
    """A tank list's parameters (the catalogue's params.tank_list): region, filters, sort, paging."""

    sort: str
    order: str
    population: str | None


@arguments_of(TANK_STATS)
@dataclasses.dataclass(frozen=True, slots=True)
class TankStatsArgs(TankListArgs):
    days: int


@arguments_of(TANK)
@dataclasses.dataclass(frozen=True, slots=True)
class TankArgs:
    tank_id: int
    region: str
    days: int
    population: str | None


@arguments_of(EXPECTED_VALUES)
@dataclasses.dataclass(frozen=True, slots=True)
class ExpectedValuesArgs:
    region: str
    source: str
    version: str | None


class TankStatsHandler(BaseHandler):
    endpoint = TANK_STATS

    async def get(self, *path: str) -> None:
        args = self.arguments(path, TankStatsArgs)
        table = await self.services.tank_stats.tank_table(
            args.region, args.days, args.query(), args.sort, args.order, args.population
        )
        self.respond(table, tag=POPULATION_TAG)


class TankHandler(BaseHandler):
    endpoint = TANK

    async def get(self, *path: str) -> None:
        args = self.arguments(path, TankArgs)
        await self.reply(
            await self.services.tank_stats.tank(args.region, args.tank_id, args.days, args.population),
            tag=POPULATION_TAG,
        )


class TankMarksHandler(BaseHandler):
    endpoint = TANK_MARKS

    async def get(self, *path: str) -> None:
        args = self.arguments(path, TankListArgs)
        marks = await self.services.tank_stats.marks_list(
            args.region, args.query(), args.sort, args.order, args.population
        )
        self.respond(marks, tag=POPULATION_TAG)


class ExpectedValuesHandler(BaseHandler):
    endpoint = EXPECTED_VALUES

    async def get(self, *path: str) -> None:
        args = self.arguments(path, ExpectedValuesArgs)
        version = args.version.replace(" ", "+") if args.version else None  # a query's + reads as a space
        document = await self.services.expected_values.document(args.region, args.source, version)
        self.respond(document, tag=POPULATION_TAG)


routes = api_routes(TankStatsHandler, TankHandler, TankMarksHandler, ExpectedValuesHandler)
