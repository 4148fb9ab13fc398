"""Maintained figures (the newest item, a document count) per collection family, read as point lookups."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from pymongo.errors import DuplicateKeyError

from store.kinds import Declared, cache

if TYPE_CHECKING:
    from motor.motor_asyncio import AsyncIOMotorDatabase


class Freshness:
    """Collection `freshness`: {_id: figure name, newest: unix seconds | count: documents}, raised
    by `$max` / `$inc` when a family writes or deletes. /status reads a figure by _id: finding the
    newest document of a growing collection needs a sort, and counting it collStats or a count,
    each of which the embedded database runs as a collection scan."""

    COLLECTIONS: ClassVar[dict[str, Declared]] = {
        "freshness": cache("the newest item and kept counts per family; a restore recounts them"),
    }

    def __init__(self, db: AsyncIOMotorDatabase[Any]) -> None:
        self.collection = db["freshness"]

    async def raise_to(self, name: str, when: float) -> None:
        try:
            await self.collection.update_one({"_id": name}, {"$max": {"newest": float(when)}}, upsert=True)
        except DuplicateKeyError:  # two first writers raced on the upsert: the document exists now
            await self.collection.update_one({"_id": name}, {"$max": {"newest": float(when)}})

    async def count_add(self, name: str, n: int) -> None:
        """Add `n` (negative: subtract) to the kept count `name`."""
        if n:
            await self.collection.update_one({"_id": name}, {"$inc": {"count": int(n)}}, upsert=True)

    async def count_set(self, name: str, n: int) -> None:
        await self.collection.update_one({"_id": name}, {"$set": {"count": int(n)}}, upsert=True)

    async def count(self, name: str) -> int | None:
        doc = await self.collection.find_one({"_id": name})
        return int(doc["count"]) if doc and doc.get("count") is not None else None

    async def newest(self, name: str) -> float | None:
        doc = await self.collection.find_one({"_id": name})
        return float(doc["newest"]) if doc and doc.get("newest") is not None else None
