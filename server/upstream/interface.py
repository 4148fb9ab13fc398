"""The upstream client as the domain services are given it: a Protocol a reader and mypy can follow."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from server.upstream.budget import Caller
from server.upstream.client import ById, Fields, Ids, Mastery, Params, UpstreamClient
from store.constants import GAMES

# The services take the upstream as this Protocol rather than the class, so a test may hand
# them any object with these methods (mypy checks the real client against it below).


class Upstream(Protocol):
    """The Wargaming API as the services call it; every call takes a slot of the process's budget
    under `caller`'s priority (server.upstream.client.UpstreamClient)."""

    async def account_info(
        self, region: str, account_ids: Ids, *, fields: Fields = None, params: Params = None, caller: Caller = "other"
    ) -> ById: ...

    async def tanks_stats(
        self, region: str, account_id: int, *, fields: Fields = None, params: Params = None, caller: Caller = "other"
    ) -> list[dict] | None: ...

    async def account_list(
        self, region: str, search: str, limit: int = 10, *, params: Params = None, caller: Caller = "live"
    ) -> list[dict]: ...

    async def account_names(
        self, region: str, nicknames: Sequence[str], *, params: Params = None, caller: Caller = "live"
    ) -> list[dict]: ...

    async def vehicles(
        self, region: str, *, fields: Fields = None, params: Params = None, caller: Caller = "other"
    ) -> dict[int, dict]: ...

    async def tanks_mastery(
        self,
        region: str,
        distribution: str,
        percentiles: Sequence[int],
        *,
        params: Params = None,
        caller: Caller = "other",
    ) -> Mastery: ...

    async def account_wtr(
        self, region: str, account_ids: Ids, *, params: Params = None, caller: Caller = "other"
    ) -> dict[int, int | None]: ...

    async def account_tanks(
        self, region: str, account_ids: Ids, *, params: Params = None, caller: Caller = "other"
    ) -> dict[int, list[dict] | None]: ...

    async def clans_accountinfo(
        self, region: str, account_ids: Ids, *, params: Params = None, caller: Caller = "other"
    ) -> dict[int, dict | None]: ...

    async def clans_info(
        self, region: str, clan_ids: Ids, *, fields: Fields = None, params: Params = None, caller: Caller = "other"
    ) -> ById: ...

    async def clan_ratings(
        self, region: str, clan_ids: Ids, *, fields: Fields = None, params: Params = None, caller: Caller = "other"
    ) -> ById: ...

    async def stronghold_claninfo(
        self, region: str, clan_ids: Ids, *, fields: Fields = None, params: Params = None, caller: Caller = "other"
    ) -> ById: ...

    async def servers_info(
        self, region: str, games: Iterable[str] = GAMES, *, params: Params = None, caller: Caller = "other"
    ) -> dict[str, list[dict]]: ...

    async def fetch_json_url(self, url: str, *, caller: Caller = "reference") -> bytes: ...

    async def fetch_url(
        self, url: str, *, headers: Mapping[str, str] | None = None, caller: Caller = "reference"
    ) -> tuple[int, bytes, dict[str, str]]: ...

    def status(self) -> dict: ...

    def close(self) -> None: ...


def _the_client_is_an_upstream(client: UpstreamClient) -> Upstream:
    return client  # mypy fails here when UpstreamClient stops matching the Protocol
