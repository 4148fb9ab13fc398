"""Leaderboards of the tracked population."""

from __future__ import annotations

from handlers.base import BaseHandler, api_routes
from server.api.answers import POPULATION_TAG
from server.api.catalogue import LEADERBOARD_CLANS, LEADERBOARD_PLAYERS, TANK_LEADERBOARD


class PlayerLeaderboardHandler(BaseHandler):
    endpoint = LEADERBOARD_PLAYERS

    async def get(self, *path):
        args = self.arguments(path)
        self.respond(
            await self.services.leaderboards.players(
                args["region"],
                args["days"],
                args["by"],
                args["tier"],
                args["type"],
                args["min_battles"],
                args["offset"],
                args["limit"],
            ),
            tag=POPULATION_TAG,
        )


class TankLeaderboardHandler(BaseHandler):
    endpoint = TANK_LEADERBOARD

    async def get(self, *path):
        args = self.arguments(path)
        self.respond(
            await self.services.leaderboards.tank(
                args["region"],
                args["tank_id"],
                args["days"],
                args["by"],
                args["min_battles"],
                args["offset"],
                args["limit"],
            ),
            tag=POPULATION_TAG,
        )


class ClanLeaderboardHandler(BaseHandler):
    endpoint = LEADERBOARD_CLANS

    async def get(self, *path):
        args = self.arguments(path)
        self.respond(
            await self.services.leaderboards.clans(
                args["region"], args["days"], args["by"], args["min_members"], args["offset"], args["limit"]
            ),
            tag=POPULATION_TAG,
        )


routes = api_routes(PlayerLeaderboardHandler, TankLeaderboardHandler, ClanLeaderboardHandler)
