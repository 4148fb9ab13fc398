"""Leases: one leader at a time across processes, through one document per lease."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, ClassVar

from pymongo.errors import DuplicateKeyError

from store.kinds import Declared, transient

if TYPE_CHECKING:
    from motor.motor_asyncio import AsyncIOMotorDatabase


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class Leases:
    COLLECTIONS: ClassVar[dict[str, Declared]] = {"leases": transient("which process leads the background jobs")}

    def __init__(self, db: AsyncIOMotorDatabase[Any]) -> None:
        self.collection = db["leases"]

    async def ensure_schema(self) -> None:
        pass  # _id is the lease name; nothing else is queried

    async def acquire(self, name: str, owner: str, ttl_seconds: float) -> bool:
        """Take or renew `name` for `owner` if it is free, expired, or already ours.

        A point read, then a compare-and-set on (_id, owner, expires) as read (a query with $or,
        ours or expired, is a collection scan on the embedded database): of two processes taking
        the same expired lease, the first changes `expires` and the second matches nothing."""
        now = _now()
        expires = now + dt.timedelta(seconds=ttl_seconds)
        doc = await self.collection.find_one({"_id": name})
        if doc is None:
            try:
                await self.collection.insert_one({"_id": name, "owner": owner, "expires": expires, "renewed": now})
            except DuplicateKeyError:
                return False  # another process created it first
            return True
        held = doc.get("expires")
        if held is not None and held.tzinfo is None:
            held = held.replace(tzinfo=dt.UTC)  # BSON dates come back naive unless the client is tz-aware
        if doc.get("owner") != owner and held is not None and held >= now:
            return False  # someone else holds a live lease
        result = await self.collection.update_one(
            {"_id": name, "owner": doc.get("owner"), "expires": doc.get("expires")},
            {"$set": {"owner": owner, "expires": expires, "renewed": now}},
        )
        return result.matched_count == 1

    async def release(self, name: str, owner: str) -> None:
        await self.collection.delete_one({"_id": name, "owner": owner})
