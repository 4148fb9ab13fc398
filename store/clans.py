"""Cached clans (details, members, averages) and their weekly digests."""
from __future__ import annotations


class Clans:
    status_name = "newest_clan"

    def __init__(self, db):
        self.db = db
        self.clans = db["clans"]
        self.digests = db["clan_digests"]

    async def ensure_schema(self) -> None:
        pass

    async def newest_timestamp(self) -> float | None:
        return None
