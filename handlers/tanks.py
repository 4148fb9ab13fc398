"""Tank statistics of the tracked population: the table of a region's tanks, one tank, the expected values."""

from __future__ import annotations

from handlers.base import BaseHandler, api_routes
from server.api.answers import POPULATION_TAG
from server.api.catalogue import EXPECTED_VALUES, TANK, TANK_MARKS, TANK_STATS


class TankStatsHandler(BaseHandler):
    endpoint = TANK_STATS

    async def get(self, *path):
        args = self.arguments(path)
        self.respond(
            await self.services.tank_stats.tank_table(
                args["region"],
                args["days"],
                args["tier"],
                args["type"],
                args["nation"],
                args["sort"],
                args["order"],
                args["limit"],
                args["offset"],
            ),
            tag=POPULATION_TAG,
        )


class TankHandler(BaseHandler):
    endpoint = TANK

    async def get(self, *path):
        args = self.arguments(path)
        self.respond(
            await self.services.tank_stats.tank(args["region"], args["tank_id"], args["days"]), tag=POPULATION_TAG
        )


class TankMarksHandler(BaseHandler):
    endpoint = TANK_MARKS

    async def get(self, *path):
        args = self.arguments(path)
        self.respond(
            await self.services.tank_stats.marks_list(
                args["region"],
                args["tier"],
                args["type"],
                args["nation"],
                args["sort"],
                args["order"],
                args["limit"],
                args["offset"],
            ),
            tag=POPULATION_TAG,
        )


class ExpectedValuesHandler(BaseHandler):
    endpoint = EXPECTED_VALUES

    async def get(self, *path):
        args = self.arguments(path)
        version = args["version"].replace(" ", "+") if args["version"] else None  # a query's + reads as a space
        self.respond(
            await self.services.expected_values.document(args["region"], args["source"], version),
            tag=POPULATION_TAG,
        )


routes = api_routes(TankStatsHandler, TankHandler, TankMarksHandler, ExpectedValuesHandler)
