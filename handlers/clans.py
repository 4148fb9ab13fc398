"""Clan details and the weekly clan digest."""

from __future__ import annotations

from handlers.base import BaseHandler, api_routes
from server.api.catalogue import CLAN, WEEKLY


class ClanHandler(BaseHandler):
    endpoint = CLAN

    async def get(self, *path):
        args = self.arguments(path)
        self.respond(await self.services.clans.details(args["region"], args["clan_id"]), shared=True)


class ClanWeeklyHandler(BaseHandler):
    endpoint = WEEKLY

    async def get(self, *path):
        args = self.arguments(path)
        self.respond(await self.services.clans.weekly(args["region"], args["clan_id"]))


routes = api_routes(ClanHandler, ClanWeeklyHandler)
