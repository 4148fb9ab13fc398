"""The Store facade: one object per collection family over one database."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Protocol

from motor.motor_asyncio import AsyncIOMotorCollection
from pymongo.errors import CollectionInvalid

from store.clans import Clans
from store.client import database_up
from store.expected import ExpectedTables
from store.glances import Glances
from store.kinds import Declared, Kind
from store.leaderboards import Leaderboards
from store.leases import Leases
from store.official import OfficialMarks
from store.online import OnlineSamples
from store.panel import Panels
from store.players import Players
from store.population import Population
from store.ratelimit import RateCounters
from store.sessions import Watched
from store.status import JobRuns
from store.tanks import COUNT as TANK_RECORDS_COUNT
from store.tanks import TankRecords
from store.tracker import Tracked
from store.upstream_members import UpstreamMembers
from store.vehicles import VehicleCatalogues

if TYPE_CHECKING:
    from motor.motor_asyncio import AsyncIOMotorClient

# Concurrent heavy database operations (aggregations, history and digest builds) per process.
HEAVY_LIMIT = 4
# Concurrent player-history reads (one indexed range of at most ~500 small documents each).
HISTORY_LIMIT = 16
BUSY_RETRY_AFTER = 2  # seconds; what a caller turned away by a full gate is told


class DatabaseBusy(Exception):
    """A gate of heavy operations is full: answer 503 at once (never queue)."""

    def __init__(self, gate: str, retry_after: int = BUSY_RETRY_AFTER):
        super().__init__(f"too many concurrent {gate} operations")
        self.gate = gate
        self.retry_after = retry_after


class Gate:
    """At most `limit` operations at once; one more is refused at once (DatabaseBusy), never queued."""

    def __init__(self, name: str, limit: int):
        self.name = name
        self.limit = limit
        self.active = 0
        self.refused = 0

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        if self.active >= self.limit:
            self.refused += 1
            raise DatabaseBusy(self.name)
        self.active += 1
        try:
            yield
        finally:
            self.active -= 1


class CollectionFamily(Protocol):
    """One module's collections: creates what it needs, idempotently."""

    async def ensure_schema(self) -> None: ...


class Store:
    def __init__(
        self,
        client: AsyncIOMotorClient[Any],
        db_name: str,
        rate_collection_bytes: int = 32 << 20,
        capped: bool = True,
        ttl_indexes: bool = True,
        heavy_limit: int = HEAVY_LIMIT,
        history_limit: int = HISTORY_LIMIT,
    ) -> None:
        """`ttl_indexes=False` (the embedded SecantusDB): large collections get plain indexes on
        their expiry fields instead of TTL indexes, and server.jobs.retention deletes expired
        documents in small indexed batches (that server's TTL monitor scans whole collections
        under a global lock and never expires time-series collections)."""
        self.client = client
        self.db = client[db_name]
        self.ttl_indexes = ttl_indexes
        self.heavy = Gate("heavy", heavy_limit)
        self.history_reads = Gate("history", history_limit)
        self.rate_counters = RateCounters(self.db, rate_collection_bytes, capped=capped)
        self.leases = Leases(self.db)
        self.job_runs = JobRuns(self.db)
        self.clans = Clans(self.db, ttl_indexes=ttl_indexes)
        self.players = Players(self.db, ttl_indexes=ttl_indexes, clans=self.clans)
        self.online = OnlineSamples(self.db, ttl_indexes=ttl_indexes)
        self.upstream_members = UpstreamMembers(self.db)
        self.tracked = Tracked(self.db)  # the tracker's accounts and (day, slice) claims
        self.tanks = TankRecords(self.db, ttl_indexes=ttl_indexes)  # per-tank records by day
        self.population = Population(self.db, ttl_indexes=ttl_indexes)  # per-tank changes, sums, distributions
        self.expected_tables = ExpectedTables(self.db, ttl_indexes=ttl_indexes)  # computed expected values
        self.leaderboards = Leaderboards(self.db)  # the daily ranked lists of tracked accounts
        self.watched = Watched(self.db, ttl_indexes=ttl_indexes)  # the states of accounts a session watches
        self.official_marks = OfficialMarks(self.db, ttl_indexes=ttl_indexes)  # WG's published distributions
        self.vehicles = VehicleCatalogues(self.db)  # each region's vehicle catalogue, as last fetched
        self.glances = Glances(self.db, ttl_indexes=ttl_indexes)  # what rosters fetched live, for an hour
        self.panels = Panels(self.db)  # each realm's random panel of account ids
        self.families: list[CollectionFamily] = [
            self.rate_counters,
            self.leases,
            self.job_runs,
            self.players,
            self.clans,
            self.online,
            self.upstream_members,
            self.tracked,
            self.tanks,
            self.population,
            self.expected_tables,
            self.leaderboards,
            self.watched,
            self.official_marks,
            self.vehicles,
            self.glances,
            self.panels,
        ]

    async def ensure_schema(self) -> None:
        """Idempotent: create collections and indexes that are missing."""
        for family in self.families:
            await family.ensure_schema()
        await self.create_collections()

    def _holders(self) -> list[object]:
        """Every family and every store object a family keeps (e.g. Freshness inside Players)."""
        holders: list[object] = []
        pending: list[object] = list(self.families)
        seen: set[int] = set()
        while pending:
            holder = pending.pop()
            if id(holder) in seen:
                continue
            seen.add(id(holder))
            holders.append(holder)
            for value in vars(holder).values():
                if type(value).__module__.startswith("store.") and hasattr(value, "__dict__"):
                    pending.append(value)
        return holders

    def collection_names(self) -> set[str]:
        """Every collection a family keeps as an attribute (or in a store object it keeps)."""
        return {
            value.name
            for holder in self._holders()
            for value in vars(holder).values()
            if isinstance(value, AsyncIOMotorCollection)
        }

    def declarations(self) -> dict[str, Declared]:
        """Each collection's declared worth (store/kinds.py), gathered from the families'
        COLLECTIONS; a name declared twice must be declared alike."""
        declared: dict[str, Declared] = {}
        for holder in self._holders():
            for name, declaration in getattr(type(holder), "COLLECTIONS", {}).items():
                if declared.setdefault(name, declaration) != declaration:
                    raise ValueError(f"collection {name} is declared twice, differently")
        return declared

    def irreplaceable(self) -> dict[str, Declared]:
        """The collections a backup copies, in a fixed order."""
        return {name: d for name, d in sorted(self.declarations().items()) if d.kind is Kind.IRREPLACEABLE}

    async def create_collections(self) -> None:
        """Create every collection before the first request, not on its first write: the embedded
        SecantusDB (0.7) makes a new collection's storage table then, and a kill -9 in that instant
        leaves a table it cannot open again — the database would not start (seen in CI)."""
        missing = self.collection_names() - set(await self.db.list_collection_names())
        for name in sorted(missing):
            with contextlib.suppress(CollectionInvalid):  # another process created it meanwhile
                await self.db.create_collection(name)

    async def after_restore(self) -> None:
        """Kept figures a restore makes wrong: the per-tank record count is counted again (one pass)."""
        await self.tanks.freshness.count_set(TANK_RECORDS_COUNT, await self.tanks.collection.count_documents({}))

    def database_up(self) -> bool:
        return database_up(self.client)

    def expiring(self) -> list:
        """What server.jobs.retention deletes: (name, collection, field, kind) of every family that
        expires by a job rather than a TTL index (empty with ttl_indexes=True)."""
        if self.ttl_indexes:
            return []
        out: list = []
        for family in self.families:
            out.extend(getattr(family, "expiring", lambda: [])())
        return out

    async def ping_ms(self) -> float:
        started = time.perf_counter()
        await self.client.admin.command("ping")
        return round((time.perf_counter() - started) * 1000, 2)

    async def volume(self) -> dict:
        """What the embedded database's ceiling is measured in: kept counts, one point read each."""
        return {"tank_records": await self.tanks.count()}

    async def newest_timestamps(self) -> dict:
        """Newest cached item of each family that reports one (unix seconds or None)."""
        result = {}
        for family in self.families:
            newest = getattr(family, "newest_timestamp", None)
            if newest is not None:
                result[getattr(family, "status_name", type(family).__name__)] = await newest()
        return result
