"""Current player counts and their daily history."""

from __future__ import annotations

import dataclasses

from handlers.base import BaseHandler, api_routes
from handlers.params import arguments_of
from server.contract.catalogue import ONLINE, ONLINE_HISTORY
from server.serving.answers import ONLINE_TAG


@arguments_of(ONLINE_HISTORY)
@dataclasses.dataclass(frozen=True, slots=True)
class OnlineHistoryArgs:
    game: str
    region: str
    days: int


class OnlineHandler(BaseHandler):
    endpoint = ONLINE

    async def get(self) -> None:
        self.respond(await self.services.online.current(), shared=True, tag=ONLINE_TAG)


class OnlineHistoryHandler(BaseHandler):
    endpoint = ONLINE_HISTORY

    async def get(self) -> None:
        args = self.arguments((), OnlineHistoryArgs)
        history = await self.services.online.history(args.game, args.region, args.days)
        self.respond(history, tag=ONLINE_TAG)


routes = api_routes(OnlineHandler, OnlineHistoryHandler)
