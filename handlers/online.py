"""Current player counts and their daily history."""

from __future__ import annotations

from handlers.base import BaseHandler
from handlers.params import days_argument, single_query_value
from server.errors import APIError
from store.constants import GAMES, REGIONS


class OnlineHandler(BaseHandler):
    bucket = "online"
    cache_max_age = 60

    async def get(self):
        self.respond(await self.services.online.current(), shared=True)


class OnlineHistoryHandler(BaseHandler):
    bucket = "online_history"
    cache_max_age = 300

    async def get(self):
        game = single_query_value(self, "game", "invalid_game")
        if game is None:
            game = "wot"
        elif game not in GAMES:
            raise APIError("invalid_game", "game must be one of " + ", ".join(GAMES))
        region = single_query_value(self, "region", "invalid_region")
        if region is None or region == "all":
            region = "all"
        elif region not in REGIONS:
            raise APIError("invalid_region", "region must be one of eu, na, asia or all")
        days = days_argument(self, default=7)
        self.respond(await self.services.online.history(game, region, days))


routes = [
    (r"/api/v1/online/?", OnlineHandler),
    (r"/api/v1/online/history/?", OnlineHistoryHandler),
]
