"""Current player counts and their daily history."""

from __future__ import annotations

from handlers.base import BaseHandler, api_routes
from server.api.answers import ONLINE_TAG
from server.api.catalogue import ONLINE, ONLINE_HISTORY


class OnlineHandler(BaseHandler):
    endpoint = ONLINE

    async def get(self):
        self.respond(await self.services.online.current(), shared=True, tag=ONLINE_TAG)


class OnlineHistoryHandler(BaseHandler):
    endpoint = ONLINE_HISTORY

    async def get(self):
        args = self.arguments(())
        history = await self.services.online.history(args["game"], args["region"], args["days"])
        self.respond(history, tag=ONLINE_TAG)


routes = api_routes(OnlineHandler, OnlineHistoryHandler)
