"""Leaderboards of the tracked population."""

from __future__ import annotations

import dataclasses

from handlers.base import BaseHandler, api_routes
from handlers.params import arguments_of
from server.contract.catalogue import LEADERBOARD_CLANS, LEADERBOARD_PLAYERS, TANK_LEADERBOARD
from server.serving.answers import POPULATION_TAG


@dataclasses.dataclass(frozen=True, slots=True)
class BoardArgs:
    """What every leaderboard reads: the region, the window, the order, paging; each board's view adds its own."""

    region: str
    days: str
    by: str
    limit: int
    offset: int


@arguments_of(LEADERBOARD_PLAYERS)
@dataclasses.dataclass(frozen=True, slots=True)
class PlayerLeaderboardArgs(BoardArgs):
    tier: int | None
    type: str | None
    min_battles: int | None


@arguments_of(TANK_LEADERBOARD)
@dataclasses.dataclass(frozen=True, slots=True)
class TankLeaderboardArgs(BoardArgs):
    tank_id: int
    min_battles: int | None


@arguments_of(LEADERBOARD_CLANS)
@dataclasses.dataclass(frozen=True, slots=True)
class ClanLeaderboardArgs(BoardArgs):
    min_members: int | None


class PlayerLeaderboardHandler(BaseHandler):
    endpoint = LEADERBOARD_PLAYERS

    async def get(self, *path: str) -> None:
        args = self.arguments(path, PlayerLeaderboardArgs)
        board = await self.services.leaderboards.players(
            args.region, args.days, args.by, args.tier, args.type, args.min_battles, args.offset, args.limit
        )
        self.respond(board, tag=POPULATION_TAG)


class TankLeaderboardHandler(BaseHandler):
    endpoint = TANK_LEADERBOARD

    async def get(self, *path: str) -> None:
        args = self.arguments(path, TankLeaderboardArgs)
        board = await self.services.leaderboards.tank(
            args.region, args.tank_id, args.days, args.by, args.min_battles, args.offset, args.limit
        )
        self.respond(board, tag=POPULATION_TAG)


class ClanLeaderboardHandler(BaseHandler):
    endpoint = LEADERBOARD_CLANS

    async def get(self, *path: str) -> None:
        args = self.arguments(path, ClanLeaderboardArgs)
        board = await self.services.leaderboards.clans(
            args.region, args.days, args.by, args.min_members, args.offset, args.limit
        )
        self.respond(board, tag=POPULATION_TAG)


routes = api_routes(PlayerLeaderboardHandler, TankLeaderboardHandler, ClanLeaderboardHandler)
