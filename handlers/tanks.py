"""Tank statistics of the tracked population: the table of a region's tanks and one tank."""

from __future__ import annotations

from handlers.base import BaseHandler, api_routes
from server.api.answers import POPULATION_TAG
from server.api.catalogue import TANK, TANK_STATS


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


routes = api_routes(TankStatsHandler, TankHandler)
