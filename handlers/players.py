"""Player endpoints: profile, history, per-tank breakdown, session and nickname search."""

from __future__ import annotations

import dataclasses

import tornado.iostream

from handlers.base import BaseHandler, api_routes
from handlers.params import arguments_of
from server.contract.catalogue import HISTORY, PLAYER, PLAYER_SEARCH, SESSION, SESSION_STREAM, TANKS
from server.contract.catalogue.model import parse_ids
from server.contract.catalogue.players import ID_OF_IDS, IDS_MOST
from server.contract.errors import APIError
from server.serving.answers import player_tables_tag


@arguments_of(PLAYER)
@dataclasses.dataclass(frozen=True, slots=True)
class PlayerArgs:
    account_id: int
    region: str


@arguments_of(HISTORY)
@dataclasses.dataclass(frozen=True, slots=True)
class HistoryArgs:
    account_id: int
    region: str
    days: int


@arguments_of(TANKS)
@dataclasses.dataclass(frozen=True, slots=True)
class TanksArgs:
    account_id: int
    region: str
    days: int
    group_by: str | None


@arguments_of(PLAYER_SEARCH)
@dataclasses.dataclass(frozen=True, slots=True)
class SearchArgs:
    search: str | None
    ids: str | None
    region: str | None


@arguments_of(SESSION, SESSION_STREAM)
@dataclasses.dataclass(frozen=True, slots=True)
class SessionArgs:
    account_id: int
    region: str
    since: str


class PlayerHandler(BaseHandler):
    endpoint = PLAYER

    async def get(self, *path: str) -> None:
        args = self.arguments(path, PlayerArgs)
        profile = await self.services.players.profile(args.region, args.account_id, self.client_ip)
        if profile.get("live_fetched"):
            # A live answer has no ratings yet: don't let caches keep it for long.
            await self.reply(profile, max_age=PLAYER.live_fetched_max_age)
        else:
            # Replayed only once rated, like the service's hot copy: its ratings follow a live fetch
            # within seconds, perhaps written by another process.
            tag = player_tables_tag(args.region, args.account_id) if profile["ratings"]["available"] else None
            await self.reply(profile, shared=True, tag=tag)  # the service's hot-cache object


class PlayerHistoryHandler(BaseHandler):
    endpoint = HISTORY

    async def get(self, *path: str) -> None:
        args = self.arguments(path, HistoryArgs)
        history = await self.services.history.history(args.region, args.account_id, args.days)
        self.respond(history, tag=player_tables_tag(args.region, args.account_id))


class PlayerTanksHandler(BaseHandler):
    endpoint = TANKS

    async def get(self, *path: str) -> None:
        args = self.arguments(path, TanksArgs)
        tanks = await self.services.history.tanks(args.region, args.account_id, args.days, group_by=args.group_by)
        self.respond(tanks, tag=player_tables_tag(args.region, args.account_id))


class PlayerSearchHandler(BaseHandler):
    endpoint = PLAYER_SEARCH

    async def get(self, *path: str) -> None:
        args = self.arguments(path, SearchArgs)
        if args.ids is None:
            if args.search is None:
                raise APIError("invalid_search", "search (or ids with region) is required")
            self.respond(await self.services.search.search(args.region, args.search, self.client_ip))
            return
        if args.search is not None:
            raise APIError("invalid_ids", "give search or ids, not both")
        if args.region is None:
            raise APIError("invalid_region", "region is required with ids")
        ids = parse_ids(ID_OF_IDS, args.ids, IDS_MOST)
        self.respond(await self.services.players.cached_profiles(args.region, ids), max_age=PLAYER.cache_max_age)


class PlayerSessionHandler(BaseHandler):
    endpoint = SESSION

    async def get(self, *path: str) -> None:
        args = self.arguments(path, SessionArgs)
        await self.reply(await self.services.sessions.session(args.region, args.account_id, args.since, self.client_ip))


STREAM_CACHE_CONTROL = "public, max-age=0, no-store"  # no cache keeps a stream


class PlayerSessionStreamHandler(BaseHandler):
    endpoint = SESSION_STREAM

    def set_stream_headers(self) -> None:
        """What a stream's answer, and the answer to its HEAD, says it is."""
        self.set_header("Content-Type", "text/event-stream; charset=utf-8")
        self.set_header("Cache-Control", STREAM_CACHE_CONTROL)

    async def get(self, *path: str) -> None:
        args = self.arguments(path, SessionArgs)
        sessions = self.services.sessions
        with sessions.stream_slot(self.client_ip):
            events = sessions.follow(
                args.region, args.account_id, args.since, self.client_ip, self.request.headers.get("Last-Event-ID")
            )
            first = await anext(events)  # a bad request or an unknown account is still a JSON error
            self.set_stream_headers()
            self.set_header("X-Accel-Buffering", "no")  # a proxy passes each event on at once
            try:
                self.write(first)
                await self.flush()
                async for event in events:
                    self.write(event)
                    await self.flush()
            except tornado.iostream.StreamClosedError:
                pass  # the client went away
            finally:
                await events.aclose()
        self.finish()

    async def head(self, *path: str, **kwargs: str) -> None:
        self.arguments(path, SessionArgs)
        self.set_stream_headers()
        self.finish()


routes = api_routes(
    PlayerHandler,
    PlayerHistoryHandler,
    PlayerTanksHandler,
    PlayerSessionHandler,
    PlayerSessionStreamHandler,
    PlayerSearchHandler,
)
