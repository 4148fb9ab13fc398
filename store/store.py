"""The Store facade: one object per collection family over one database."""
from __future__ import annotations

import time

from store.client import database_up

from store.clans import Clans
from store.leases import Leases
from store.online import OnlineSamples
from store.players import Players
from store.ratelimit import RateCounters
from store.status import JobRuns
from store.upstream_members import UpstreamMembers


class Store:
    def __init__(self, client, db_name: str, rate_collection_bytes: int = 32 << 20, capped: bool = True):
        self.client = client
        self.db = client[db_name]
        self.rate_counters = RateCounters(self.db, rate_collection_bytes, capped=capped)
        self.leases = Leases(self.db)
        self.job_runs = JobRuns(self.db)
        self.players = Players(self.db)
        self.clans = Clans(self.db)
        self.online = OnlineSamples(self.db)
        self.upstream_members = UpstreamMembers(self.db)
        self.families = [self.rate_counters, self.leases, self.job_runs, self.players, self.clans, self.online,
                         self.upstream_members]

    def add_family(self, name: str, family) -> None:
        """Register a collection family (players, clans, online…) so schema and status see it."""
        setattr(self, name, family)
        self.families.append(family)

    async def ensure_schema(self) -> None:
        """Idempotent: create collections and indexes that are missing."""
        for family in self.families:
            await family.ensure_schema()

    def database_up(self) -> bool:
        return database_up(self.client)

    async def ping_ms(self) -> float:
        started = time.perf_counter()
        await self.client.admin.command("ping")
        return round((time.perf_counter() - started) * 1000, 2)

    async def newest_timestamps(self) -> dict:
        """Newest cached item of each family that reports one (unix seconds or None)."""
        result = {}
        for family in self.families:
            newest = getattr(family, "newest_timestamp", None)
            if newest is not None:
                result[family.status_name] = await newest()
        return result
