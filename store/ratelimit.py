"""Per-minute rate counters in a capped collection, changed only by atomic $inc upserts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from pymongo.errors import DuplicateKeyError, OperationFailure

from store.kinds import Declared, transient

if TYPE_CHECKING:
    from motor.motor_asyncio import AsyncIOMotorDatabase

READ_CHUNK = 100
WRITE_CHUNK = 1000


def window_of(key: str) -> int:
    """The window number at the end of a counter key "<client>|<bucket>|<window>"."""
    return int(key.rsplit("|", 1)[1])


class RateCounters:
    """Documents {_id: "<client>|<bucket>|<window>", n: int32, w: <window>}.

    An $inc on an int32 keeps the document's size, which real mongod requires of updates in a
    capped collection. Without a capped collection (the embedded SecantusDB, where an $inc on a
    capped collection is slow: docs/benchmarks.md), finished windows are deleted by
    `expire_windows` through the index on `w`.
    """

    COLLECTIONS: ClassVar[dict[str, Declared]] = {
        "rate_counters": transient("per-client request counts of the last minutes"),
    }

    def __init__(self, db: AsyncIOMotorDatabase[Any], size_bytes: int, capped: bool = True) -> None:
        self.db = db
        self.collection = db["rate_counters"]
        self.size_bytes = size_bytes
        self.capped = capped
        self._expired_below: int | None = None  # windows below this were deleted by this process

    async def ensure_schema(self) -> None:
        existing = await self.db.list_collection_names(filter={"name": "rate_counters"})
        if not existing and self.capped:
            await self.db.create_collection("rate_counters", capped=True, size=self.size_bytes)
        if not self.capped:
            await self.collection.create_index("w")

    async def add(self, increments: dict[str, int], read_back: list[str] | None = None) -> dict[str, int]:
        """Apply all increments (unordered $inc upserts); return the new totals of `read_back`
        (default: every key)."""
        # Raw update statements: building one pymongo UpdateOne per key cost more than the
        # rest of a flush, on the event loop, when thousands of clients are active.
        updates = [
            {"q": {"_id": key}, "u": {"$inc": {"n": int(n)}, "$setOnInsert": {"w": window_of(key)}}, "upsert": True}
            for key, n in increments.items()
            if n
        ]
        for start in range(0, len(updates), WRITE_CHUNK):
            command = {
                "update": self.collection.name,
                "updates": updates[start : start + WRITE_CHUNK],
                "ordered": False,
            }
            if self.collection.write_concern.document:
                command["writeConcern"] = self.collection.write_concern.document
            reply = await self.db.command(command)
            if reply.get("writeErrors") or reply.get("writeConcernError"):
                raise OperationFailure(f"rate counter update failed: {reply}", details=reply)
        return await self.read(list(increments) if read_back is None else read_back)

    async def read(self, keys: list[str]) -> dict[str, int]:
        totals = {}
        # Chunked: SecantusDB's $in costs grow with the square of the list (1,000 keys: 0.55 s;
        # 10 x 100 keys: 0.08 s); on mongod the extra round trips cost little.
        for start in range(0, len(keys), READ_CHUNK):
            async for doc in self.collection.find({"_id": {"$in": keys[start : start + READ_CHUNK]}}):
                totals[doc["_id"]] = int(doc["n"])
        return totals

    async def increment(self, key: str, by: int = 1) -> None:
        await self.collection.update_one(
            {"_id": key}, {"$inc": {"n": int(by)}, "$setOnInsert": {"w": window_of(key)}}, upsert=True
        )

    async def expire_windows(self, before: int) -> int:
        """Delete counters of windows before `before` (plain collection only).

        One equality delete per window since the last call (the w index; a range with a limit
        would make the embedded database fetch every expired counter once per batch); a process's
        first call, or one after a long pause, deletes the older windows with one indexed range."""
        if self.capped:
            return 0  # the capped collection forgets the oldest by itself
        first = self._expired_below
        if first is None or before - first > 60:
            result = await self.collection.delete_many({"w": {"$lt": int(before)}})
            self._expired_below = int(before)
            return result.deleted_count
        deleted = 0
        for window in range(first, int(before)):
            deleted += (await self.collection.delete_many({"w": window})).deleted_count
        self._expired_below = max(first, int(before))
        return deleted

    async def increment_below(self, key: str, cap: int, amount: int = 1) -> int | None:
        """Add `amount` to `key` only while the sum stays within `cap` (atomically); the new count,
        or None.

        An upsert whose filter fails on an existing document collides on _id: then the counter
        exists, and a plain conditional update decides.
        """
        if amount > cap:
            return None
        condition = {"_id": key, "n": {"$lte": int(cap) - int(amount)}}
        try:
            result = await self.collection.update_one(
                condition, {"$inc": {"n": int(amount)}, "$setOnInsert": {"w": window_of(key)}}, upsert=True
            )
            changed = result.modified_count or result.upserted_id is not None
        except DuplicateKeyError:
            result = await self.collection.update_one(condition, {"$inc": {"n": int(amount)}})
            changed = result.modified_count
        if not changed:
            return None
        doc = await self.collection.find_one({"_id": key}, {"n": 1})
        return int(doc["n"]) if doc else 1
