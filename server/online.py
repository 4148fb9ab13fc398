"""Player counts: the minute sampler, current counts with peaks, daily history."""
from __future__ import annotations


class OnlineService:
    def __init__(self, store, upstream, clock):
        self.store = store
        self.upstream = upstream
        self.clock = clock

    async def current(self) -> dict:
        return {"games": {}, "newest_sample": None}

    async def history(self, game: str, region: str, days: int) -> dict:
        return {"game": game, "region": region, "days": days, "series": []}
