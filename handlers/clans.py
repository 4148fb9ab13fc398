"""Clan details and the weekly clan digest."""

from __future__ import annotations

import dataclasses

from handlers.base import BaseHandler, api_routes
from handlers.params import arguments_of
from server.contract.catalogue import CLAN, WEEKLY
from server.serving.answers import clan_tag


@arguments_of(CLAN, WEEKLY)
@dataclasses.dataclass(frozen=True, slots=True)
class ClanArgs:
    clan_id: int
    region: str


class ClanHandler(BaseHandler):
    endpoint = CLAN

    async def get(self, *path: str) -> None:
        args = self.arguments(path, ClanArgs)
        details = await self.services.clans.details(args.region, args.clan_id)
        await self.reply(details, shared=True, tag=clan_tag(args.region, args.clan_id))


class ClanWeeklyHandler(BaseHandler):
    endpoint = WEEKLY

    async def get(self, *path: str) -> None:
        args = self.arguments(path, ClanArgs)
        weekly = await self.services.clans.weekly(args.region, args.clan_id)
        self.respond(weekly, tag=clan_tag(args.region, args.clan_id))


routes = api_routes(ClanHandler, ClanWeeklyHandler)
