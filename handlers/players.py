"""Player profile and player history endpoints."""

from __future__ import annotations

from handlers.base import BaseHandler, positive_int, region_value
from handlers.params import days_argument


class PlayerHandler(BaseHandler):
    bucket = "player"
    cache_max_age = 300

    async def get(self, account_id: str, region: str):
        account_id = positive_int(account_id, "invalid_account_id")
        region = region_value(region)
        profile = await self.services.players.profile(region, account_id, self.client_ip)
        if profile.get("live_fetched"):
            # A live answer has no ratings yet: don't let caches keep it for long.
            self.respond(profile, max_age=30)
        else:
            self.respond(profile, shared=True)  # the service's hot-cache object


class PlayerHistoryHandler(BaseHandler):
    bucket = "history"
    cache_max_age = 300

    async def get(self, account_id: str, region: str):
        account_id = positive_int(account_id, "invalid_account_id")
        region = region_value(region)
        days = days_argument(self, default=30)
        self.respond(await self.services.players.history(region, account_id, days))


routes = [
    (r"/api/v1/player/([^/]*)/([^/]*)/?", PlayerHandler),
    (r"/api/v1/player/([^/]*)/([^/]*)/history/?", PlayerHistoryHandler),
]
