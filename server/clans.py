"""Clan details and weekly digests (filled by the clan refresh job)."""
from __future__ import annotations

from server.errors import APIError


class ClanService:
    def __init__(self, store, upstream, players, clock):
        self.store = store
        self.upstream = upstream
        self.players = players
        self.clock = clock

    async def details(self, region: str, clan_id: int) -> dict:
        raise APIError("clan_not_cached")

    async def weekly(self, region: str, clan_id: int) -> dict:
        raise APIError("clan_not_cached")
