"""Expiry without TTL indexes: plain indexes on expiry fields and bounded, indexed batch deletes.

SecantusDB's TTL monitor scans every collection that has a TTL index once a minute under a
global lock, and never expires time-series collections. On that server (Store(ttl_indexes=False))
the large collections carry a plain index on their expiry field instead, and server.jobs.retention
deletes what expired in small batches found through that index: the cost is O(what expires).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Awaitable, Callable
from typing import Any

IN_CHUNK = 100  # ids per $in: SecantusDB's $in is quadratic in the number of keys


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


async def delete_expired_batch(item: Expiring, cutoff: dt.datetime, batch: int = 1000) -> int:
    """Delete at most about `batch` documents whose `field` < cutoff, oldest first; returns how many."""
    coll, field = item.collection, item.field
    expired = {field: {"$lt": cutoff}}
    if item.timeseries:
        docs = await coll.find(expired, {field: 1, "_id": 0}).sort(field, 1).limit(batch).to_list(batch)
        if not docs:
            return 0
        if len(docs) < batch:
            bound = {"$lt": cutoff}  # everything left
        elif docs[-1][field] > docs[0][field]:
            bound = {"$lt": docs[-1][field]}  # fewer than `batch`
        else:
            bound = {"$lte": docs[0][field]}  # one instant: bounded by the documents per instant
        result = await coll.delete_many({field: bound})
        if item.on_deleted is not None and result.deleted_count:
            await item.on_deleted(result.deleted_count)
        return result.deleted_count
    docs = await coll.find(expired, {"_id": 1}).sort(field, 1).limit(batch).to_list(batch)
    deleted = 0
    for start in range(0, len(docs), IN_CHUNK):
        ids = [doc["_id"] for doc in docs[start : start + IN_CHUNK]]
        # The expiry condition again: a document refreshed since it was found is kept.
        result = await coll.delete_many({"_id": {"$in": ids}, **expired})
        deleted += result.deleted_count
    if item.on_deleted is not None and deleted:
        await item.on_deleted(deleted)
    return deleted
