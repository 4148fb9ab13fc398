"""Per-tank career counters by day: packed keyframes plus changed tanks, rebuilt from O(period) documents.

Storage only: the payloads are packed and decoded by server/domain/records.py (the codec); this
module writes them and returns the raw records (bytes with their days and flags)."""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from bson import Binary
from pymongo import ASCENDING, DESCENDING, ReplaceOne, UpdateOne
from pymongo.errors import BulkWriteError, PyMongoError

from store.bulk import insert_or_upsert
from store.freshness import Freshness
from store.kinds import Declared, irreplaceable
from store.retention import Expiring, ensure_expiry_index

if TYPE_CHECKING:
    from motor.motor_asyncio import AsyncIOMotorDatabase

# A keyframe is written at least every KEYFRAME_MAX_RECORDS records and KEYFRAME_MAX_DAYS days after
# the last one (on the account's next record), so a state is rebuilt from at most
# KEYFRAME_MAX_RECORDS + 1 documents.
KEYFRAME_MAX_RECORDS = 30
KEYFRAME_MAX_DAYS = 30
# The state of every day of the last HISTORY_DAYS must be rebuildable. A record expires RETENTION_DAYS
# after its expiry base `x` (its own day, unless pushed later): a record whose chain serves days long
# after it (an account idle for weeks or months) is rewritten in place as a keyframe with a later
# base by the tracker (server/services/tracker.py, plan_visit), so what a day of the last HISTORY_DAYS needs
# never expires; every other record serves only days within RETENTION_DAYS - HISTORY_DAYS of its base.
RETENTION_DAYS = 440
# Days per older window of an idle account's lookback (see TankRecords._chain): an account idle
# for a year costs (RETENTION_DAYS - KEYFRAME_MAX_DAYS) / LOOKBACK + 2 small index reads.
LOOKBACK = 90
MIGRATION = "tank_records.a_d"  # marker of the (a, d) migration in `migrations`
COUNT = "tank_records"  # the kept document count in `freshness` (store/freshness.py)
# The most per-tank records at which the embedded database (SecantusDB) was measured to meet the
# read goals (scripts/bench_scale.py, docs/benchmarks.md "Reads at a year of tracked data"); /status says degraded from
# CEILING_WARN of it on, since beyond it the service belongs on MongoDB (docs/deploy.md section 6).
EMBEDDED_CEILING_RECORDS = 2_000_000
CEILING_WARN = 0.8


def account_key(region: str, account_id: int) -> str:
    return f"{region}:{account_id}"


def record_id(region: str, account_id: int, day: str) -> str:
    # A point key for writes (a rewrite of the same account-day replaces it). Reads never use an
    # _id range: SecantusDB plans one as a collection scan. They use the (a, d) index instead.
    return f"{account_key(region, account_id)}:{day}"


def _days_before(day: str, days: int) -> str:
    return (dt.date.fromisoformat(day) - dt.timedelta(days=days)).isoformat()


def _lookback_windows(day: str) -> list[str]:
    """The lower bounds of the windows _chain reads, newest first: KEYFRAME_MAX_DAYS + 1 days up to
    `day`, then LOOKBACK days at a time back to RETENTION_DAYS, then everything older."""
    bounds = [_days_before(day, KEYFRAME_MAX_DAYS)]
    back = KEYFRAME_MAX_DAYS
    while back < RETENTION_DAYS:
        back = min(RETENTION_DAYS, back + LOOKBACK)
        bounds.append(_days_before(day, back))
    # Older records exist only where the tracker kept them (a long-idle account's newest record,
    # rewritten in place with a later expiry base): one last open range finds them.
    bounds.append("")
    return bounds


def _day_date(day: str) -> dt.datetime:
    return dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC)


class TankRecords:
    """Collection `tank_records`: one document per (account, day) on which the tracker stored per-tank data.

    {_id: "region:account_id:YYYY-MM-DD", a: "region:account_id", d: "YYYY-MM-DD" (indexed together:
     every read is an equality on a plus a range of d), b: account total battles, k: 1 on keyframes,
     t: packed payload (server/domain/records.py pack), s: the account's assistance that day (store.constants.ACCOUNT_ASSIST;
     records written before release 1.3.0 have none), x: the expiry base as a date: the record's day, or a later day when
     the tracker rewrote it in place to keep it (expires RETENTION_DAYS after x)}. Short field names: there is one
    document per active account-day, so every byte counts (goal: <= 1 KB per active account-day).
    """

    status_name = "newest_tank_record"

    COLLECTIONS: ClassVar[dict[str, Declared]] = {
        "tank_records": irreplaceable(
            "per-tank career counters of each tracked account-day (kept 410 days)",
            "day:x",
        ),
        "migrations": irreplaceable("which data-model migrations ran: the data model the other collections are in"),
    }

    def __init__(self, db: AsyncIOMotorDatabase[Any], ttl_indexes: bool = True) -> None:
        self.collection = db["tank_records"]
        self.migrations = db["migrations"]
        self.ttl_indexes = ttl_indexes
        self.freshness = Freshness(db)

    async def ensure_schema(self) -> None:
        await ensure_expiry_index(self.collection, "x", RETENTION_DAYS * 86400, self.ttl_indexes)
        await self.collection.create_index([("a", ASCENDING), ("d", ASCENDING)])
        await self.migrate()

    def expiring(self) -> list[Expiring]:
        return [Expiring("tank_records", self.collection, "x", RETENTION_DAYS * 86400, on_deleted=self._count_deleted)]

    async def _count_deleted(self, n: int) -> None:
        await self.freshness.count_add(COUNT, -n)

    async def count(self) -> int:
        """How many records are stored: a kept figure (inserts add, the retention job's deletes
        subtract; with TTL indexes, on MongoDB, deletions are not seen, so it is an upper bound)."""
        return max(0, await self.freshness.count(COUNT) or 0)

    @staticmethod
    def record(
        region: str,
        account_id: int,
        day: str,
        battles: int,
        payload: bytes,
        keyframe: bool,
        kept: str | None = None,
        assist: Sequence[int] | None = None,
    ) -> dict:
        """The record of `day`; `kept` (a later day) pushes its expiry base: it expires RETENTION_DAYS after that.
        `assist`: the account's assistance that day (ACCOUNT_ASSIST), kept as `s` when known."""
        base = max(day, kept or day)
        doc = {
            "_id": record_id(region, account_id, day),
            "a": account_key(region, account_id),
            "d": day,
            "b": int(battles),
            "t": Binary(payload),
            "x": _day_date(base),
        }
        if keyframe:
            doc["k"] = 1
        if assist is not None:
            doc["s"] = [int(v) for v in assist]
        return doc

    async def save(self, records: Iterable[dict]) -> int:
        """Write records (a record of the same account and day is replaced: a retried visit is idempotent)."""
        # The filter carries (a, d) beside _id: a point lookup either way, and on a cluster sharded
        # by {a: 1, d: 1} (docs/deploy.md section 6) an upsert must name the whole shard key.
        records = list(records)
        if records:
            try:
                created = await insert_or_upsert(
                    self.collection,
                    records,
                    lambda doc: ReplaceOne({"_id": doc["_id"], "a": doc["a"], "d": doc["d"]}, doc, upsert=True),
                )
            except BulkWriteError as exc:
                # Some were stored before the failure (a full disk): count them, since their retry
                # replaces them and counts nothing; the caller marks nothing visited (a redo).
                upserted = int(exc.details.get("nUpserted") or 0)
                if upserted:
                    with contextlib.suppress(PyMongoError):
                        await self.freshness.count_add(COUNT, upserted)
                raise
            await self.freshness.count_add(COUNT, created)
        return len(records)

    async def _chain(self, account: str, day: str, projection: dict | None = None) -> list[dict]:
        """The records that rebuild the state as of `day`: the newest record on or before `day` and
        the records back to its keyframe, newest first; [] without one (never written, or expired).

        Every read is an equality on `a` plus a bounded range of `d` on the (a, d) index, so it
        examines only that account's records in that range, never the collection. The windows go
        back from `day` (_lookback_windows) until a keyframe is found: a change record is at most
        KEYFRAME_MAX_DAYS days after its keyframe (server/services/tracker.py, next_record), so an account
        that played lately costs one read of at most KEYFRAME_MAX_DAYS + 1 records, and one idle
        for months a few more reads of empty ranges.
        """
        chain: list[dict] = []
        hi = day
        for lo in _lookback_windows(day):
            for doc in await self._range(account, lo, hi, projection, DESCENDING):
                chain.append(doc)
                if doc.get("k"):
                    return chain
            if not lo:
                break
            hi = _days_before(lo, 1)
        return []

    async def _range(self, account: str, first: str, last: str, projection: dict | None, order: int) -> list[dict]:
        """One account's records of the days [first, last], by day: one range of the (a, d) index."""
        cursor = self.collection.find({"a": account, "d": {"$gte": first, "$lte": last}}, projection)
        return await cursor.sort("d", order).to_list(None)

    async def chain_on(self, region: str, account_id: int, day: str) -> list[tuple[str, bytes]]:
        """The records that rebuild the per-tank career counters as of the newest record on or
        before UTC day `day`, as (day, payload), oldest first (its keyframe, then its change
        records; server/domain/records.py state_of decodes them); [] when the account has no
        per-tank record on or before that day.

        Reads the newest keyframe at or before the record and the change records after it
        (at most KEYFRAME_MAX_RECORDS + 1 documents; see _chain for the bounded index ranges).
        """
        chain = await self._chain(account_key(region, account_id), day, {"t": 1, "k": 1, "d": 1})
        return [(doc["d"], bytes(doc["t"])) for doc in reversed(chain)]

    async def prior(self, region: str, account_id: int, day: str) -> tuple[list[bytes], dict] | None:
        """The payloads of the chain of the newest record before UTC day `day` (oldest first:
        server/domain/records.py rebuild gives its state) and the tracked bookkeeping the tracker
        kept for it (record_day, keyframe_day, keyframe_bytes, chain_records, chain_bytes,
        kept_day, assist); None without a record before `day`.

        A second write of an account on one day (the pass, then a live lookup after more battles)
        must diff against this, not against the earlier same-day state it replaces."""
        chain = await self._chain(account_key(region, account_id), _days_before(day, 1))
        if not chain:
            return None
        payloads = [bytes(doc["t"]) for doc in reversed(chain)]
        keyframe, changes = chain[-1], chain[:-1]
        kept = keyframe.get("x")
        book = {
            "record_day": chain[0]["d"],
            "keyframe_day": keyframe["d"],
            "keyframe_bytes": len(keyframe["t"]),
            "chain_records": len(changes),
            "chain_bytes": sum(len(doc["t"]) for doc in changes),
            "kept_day": kept.date().isoformat() if isinstance(kept, dt.datetime) else keyframe["d"],
            "assist": chain[0].get("s"),
        }
        return payloads, book

    async def record_on(self, region: str, account_id: int, day: str) -> dict | None:
        """The record of exactly `day` (a point read by _id), or None."""
        return await self.collection.find_one({"_id": record_id(region, account_id, day)})

    async def timeline_records(
        self, region: str, account_id: int, since: str, until: str
    ) -> list[tuple[str, int, bool, bytes, list[int] | None]]:
        """As (day, account total battles, keyframe, payload, assistance or None), oldest first
        (server/domain/records.py Timeline.of decodes them), the records that rebuild the state on
        any day of [since, until]: the chain of the newest record on or before `since` (from its
        keyframe), then every record after it through `until`.

        One range of the (a, d) index from KEYFRAME_MAX_DAYS before `since` usually holds both (a
        record that old is at most that many days after its keyframe... or the keyframe is in it);
        otherwise one more read: the chain of that record, or, when no record lies in those days,
        the account's older records (none for an account tracked since after `since`, where
        _chain's windows would be several empty reads)."""
        account = account_key(region, account_id)
        lo = _days_before(since, KEYFRAME_MAX_DAYS)
        docs = await self._range(account, lo, until, None, ASCENDING)
        head = [i for i, doc in enumerate(docs) if doc["d"] <= since]
        if head:
            newest = head[-1]
            keyframes = [i for i in head if docs[i].get("k")]
            if keyframes:
                docs = docs[keyframes[-1] :]
            else:  # its keyframe is older than `lo`
                chain = await self._chain(account, docs[newest]["d"])
                docs = [*reversed(chain), *docs[newest + 1 :]] if chain else docs[newest + 1 :]
        else:
            older = await self._range(account, "", _days_before(lo, 1), None, DESCENDING)
            chain = []
            for doc in older:  # newest first, back to its keyframe
                chain.append(doc)
                if doc.get("k"):
                    break
            else:
                chain = []  # no keyframe under the newest older record: it cannot be rebuilt
            docs = [*reversed(chain), *docs]
        return [
            (doc["d"], int(doc.get("b") or 0), bool(doc.get("k")), bytes(doc["t"]), doc.get("s") or None)
            for doc in docs
        ]

    async def battles_by_day(self, region: str, account_id: int, since: str, until: str) -> list[tuple[str, int]]:
        """(record day, account total battles) for every record day in [since, until], oldest first."""
        docs = await self._range(account_key(region, account_id), since, until, {"b": 1, "d": 1}, ASCENDING)
        return [(doc["d"], int(doc.get("b") or 0)) for doc in docs]

    async def migrate(self, batch: int = 1000) -> int:
        """Records written before the (a, d) fields existed get them, derived from their _id; returns
        how many. One pass over the collection (a marker document remembers it is done), so a start
        costs nothing once migrated; a record is only ever given fields, never replaced."""
        done = await self.migrations.find_one({"_id": MIGRATION})
        if done is not None:
            return 0
        # The kept count starts from one full count (once per database, like the migration).
        await self.freshness.count_set(COUNT, await self.collection.count_documents({}))
        updated = 0
        ops: list[UpdateOne] = []
        async for doc in self.collection.find({"a": {"$exists": False}}, {"_id": 1}, batch_size=batch):
            account, _, day = str(doc["_id"]).rpartition(":")
            ops.append(UpdateOne({"_id": doc["_id"]}, {"$set": {"a": account, "d": day}}))
            if len(ops) >= batch:
                await self.collection.bulk_write(ops, ordered=False)
                updated += len(ops)
                ops = []
        if ops:
            await self.collection.bulk_write(ops, ordered=False)
            updated += len(ops)
        await self.migrations.update_one({"_id": MIGRATION}, {"$set": {"records": updated}}, upsert=True)
        return updated

    async def stored_bytes(self) -> dict:
        """The collection's document count and sizes as the server reports them (collStats)."""
        stats = await self.collection.database.command("collStats", self.collection.name)
        return {
            "count": int(stats.get("count") or 0),
            "size": int(stats.get("size") or 0),
            "storage_size": int(stats.get("storageSize") or 0),
            "index_size": int(stats.get("totalIndexSize") or 0),
        }
