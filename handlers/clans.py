"""Clan details and the weekly clan digest."""

from __future__ import annotations

from handlers.base import BaseHandler, positive_int, region_value


class ClanHandler(BaseHandler):
    bucket = "clan"
    cache_max_age = 300

    async def get(self, clan_id: str, region: str):
        clan_id = positive_int(clan_id, "invalid_clan_id")
        region = region_value(region)
        self.respond(await self.services.clans.details(region, clan_id), shared=True)


class ClanWeeklyHandler(BaseHandler):
    bucket = "weekly"
    cache_max_age = 300

    async def get(self, clan_id: str, region: str):
        clan_id = positive_int(clan_id, "invalid_clan_id")
        region = region_value(region)
        self.respond(await self.services.clans.weekly(region, clan_id))


routes = [
    (r"/api/v1/clan/([^/]*)/([^/]*)/?", ClanHandler),
    (r"/api/v1/clan/([^/]*)/([^/]*)/weekly/?", ClanWeeklyHandler),
]
