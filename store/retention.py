"""Expiry without TTL indexes: plain indexes on expiry fields and bounded, indexed batch deletes.

SecantusDB's TTL monitor scans every collection that has a TTL index once a minute under a
global lock, and never expires time-series collections. On that server (Store(ttl_indexes=False))
the large collections carry a plain index on their expiry field instead, and server.jobs.retention
deletes what expired in small batches found through that index: the cost is O(what expires).

On SecantusDB a find reads the whole index range it is given before applying its limit (measured:
`{day: {$lt: cutoff}}` sorted with limit 500 took 0.7 s over 10,000 expired documents, 2.3 s over
50,000, 4.5 s over 100,000, under the server's global lock), so the job asks once per run for up
to a run's worth (`expired_docs`) and deletes that list in batches (`delete_expired_docs`): asking
once per batch cost the whole backlog's scan every batch (20 times a run), and late in a full
test run one such batch passed its 30 s job deadline.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from motor.motor_asyncio import AsyncIOMotorDatabase

IN_CHUNK = 100  # ids per $in: SecantusDB's $in is quadratic in the number of keys


def utc(ts: float) -> dt.datetime:
    """A unix time as the aware UTC datetime a BSON date field (an expiry, a sample's minute) holds."""
    return dt.datetime.fromtimestamp(ts, dt.UTC)


@dataclasses.dataclass
class Expiring:
    name: str
    collection: Any  # a motor collection
    field: str  # a BSON date field with a (plain) ascending index
    after_seconds: int  # expires when field < now - after_seconds (0: the field is the expiry time)
    timeseries: bool = False  # delete by time range (an _id lookup scans a time-series collection there)
    on_deleted: Callable[[int], Awaitable[None]] | None = None  # told how many were deleted (a kept count)


async def ensure_expiry_index(collection: Any, field: str, after_seconds: int, ttl: bool) -> None:
    """A TTL index on `field` when `ttl`, else a plain one; an index of the other kind is replaced."""
    name = f"{field}_1"
    existing = (await collection.index_information()).get(name)
    if existing is not None and ("expireAfterSeconds" in existing) != ttl:
        await collection.drop_index(name)
    if ttl:
        await collection.create_index(field, expireAfterSeconds=after_seconds)
    else:
        await collection.create_index(field)


async def expired_docs(item: Expiring, cutoff: dt.datetime, limit: int) -> list[dict[str, Any]]:
    """At most `limit` documents whose `field` < cutoff, oldest first: each one's `field` (and `_id`,
    except on a time-series collection). One query; its cost is the whole expired range's on
    SecantusDB (see the module), so the job asks once per run."""
    coll, field = item.collection, item.field
    projection = {field: 1, "_id": 0} if item.timeseries else {field: 1}
    return await coll.find({field: {"$lt": cutoff}}, projection).sort(field, 1).limit(limit).to_list(limit)


async def delete_expired_docs(item: Expiring, docs: list[dict[str, Any]], cutoff: dt.datetime, rest: bool) -> int:
    """Delete `docs` (a slice, oldest first, of `expired_docs`' answer) if they are still expired;
    returns how many were deleted. On a time-series collection (deleted by time range: an `_id`
    lookup scans it there) `rest` says the slice ends everything that expired, so the range is the
    whole `$lt cutoff`; otherwise it stops before the slice's newest instant (or takes one instant)."""
    coll, field = item.collection, item.field
    if not docs:
        return 0
    expired = {field: {"$lt": cutoff}}
    if item.timeseries:
        if rest:
            bound = {"$lt": cutoff}  # everything left
        elif docs[-1][field] > docs[0][field]:
            bound = {"$lt": docs[-1][field]}  # fewer than the slice
        else:
            bound = {"$lte": docs[0][field]}  # one instant: bounded by the documents per instant
        result = await coll.delete_many({field: bound})
        deleted = result.deleted_count
    else:
        deleted = 0
        for start in range(0, len(docs), IN_CHUNK):
            ids = [doc["_id"] for doc in docs[start : start + IN_CHUNK]]
            # The expiry condition again: a document refreshed since it was found is kept.
            result = await coll.delete_many({"_id": {"$in": ids}, **expired})
            deleted += result.deleted_count
    if item.on_deleted is not None and deleted:
        await item.on_deleted(deleted)
    return deleted


async def delete_expired_batch(item: Expiring, cutoff: dt.datetime, batch: int = 1000) -> int:
    """Delete at most about `batch` documents whose `field` < cutoff, oldest first; returns how many."""
    docs = await expired_docs(item, cutoff, batch)
    return await delete_expired_docs(item, docs, cutoff, rest=len(docs) < batch)


class KeptByDay:
    """A collection family of one collection, `NAME`, whose documents expire `KEEP_DAYS` after their
    day `x` (a BSON date): a TTL index on x, or a plain one server.jobs.retention deletes through."""

    NAME: ClassVar[str]
    KEEP_DAYS: ClassVar[int]
    INDEXES: ClassVar[tuple[list[tuple[str, int]], ...]] = ()  # its other indexes (each a create_index key list)

    def __init__(self, db: AsyncIOMotorDatabase[Any], ttl_indexes: bool = True) -> None:
        self.collection = db[self.NAME]
        self.ttl_indexes = ttl_indexes

    async def ensure_schema(self) -> None:
        await ensure_expiry_index(self.collection, "x", self.KEEP_DAYS * 86400, self.ttl_indexes)
        for keys in self.INDEXES:
            await self.collection.create_index(keys)

    def expiring(self) -> list[Expiring]:
        return [Expiring(self.NAME, self.collection, "x", self.KEEP_DAYS * 86400)]
