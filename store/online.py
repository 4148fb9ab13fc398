"""Minute samples of player counts per game, region and server."""
from __future__ import annotations


class OnlineSamples:
    status_name = "newest_online_sample"

    def __init__(self, db):
        self.db = db
        self.samples = db["online_samples"]

    async def ensure_schema(self) -> None:
        pass

    async def newest_timestamp(self) -> float | None:
        return None
