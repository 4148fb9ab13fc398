"""Player endpoints: profile, history, per-tank breakdown and nickname search."""

from __future__ import annotations

from handlers.base import BaseHandler, api_routes
from server.api.answers import player_tag
from server.api.catalogue import HISTORY, PLAYER, PLAYER_SEARCH, TANKS


class PlayerHandler(BaseHandler):
    endpoint = PLAYER

    async def get(self, *path):
        args = self.arguments(path)
        profile = await self.services.players.profile(args["region"], args["account_id"], self.client_ip)
        if profile.get("live_fetched"):
            # A live answer has no ratings yet: don't let caches keep it for long.
            self.respond(profile, max_age=PLAYER.live_fetched_max_age)
        else:
            # Replayed only once rated, like the service's hot copy: its ratings follow a live fetch
            # within seconds, perhaps written by another process.
            tag = player_tag(args["region"], args["account_id"]) if profile["ratings"]["available"] else None
            self.respond(profile, shared=True, tag=tag)  # the service's hot-cache object


class PlayerHistoryHandler(BaseHandler):
    endpoint = HISTORY

    async def get(self, *path):
        args = self.arguments(path)
        history = await self.services.history.history(args["region"], args["account_id"], args["days"])
        self.respond(history, tag=player_tag(args["region"], args["account_id"]))


class PlayerTanksHandler(BaseHandler):
    endpoint = TANKS

    async def get(self, *path):
        args = self.arguments(path)
        tanks = await self.services.history.tanks(
            args["region"], args["account_id"], args["days"], group_by=args["group_by"]
        )
        self.respond(tanks, tag=player_tag(args["region"], args["account_id"]))


class PlayerSearchHandler(BaseHandler):
    endpoint = PLAYER_SEARCH

    async def get(self, *path):
        args = self.arguments(path)
        self.respond(await self.services.search.search(args["region"], args["search"], self.client_ip))


routes = api_routes(PlayerHandler, PlayerHistoryHandler, PlayerTanksHandler, PlayerSearchHandler)
