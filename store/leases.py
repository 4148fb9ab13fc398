"""Leases: one leader at a time across processes, through one document per lease."""

from __future__ import annotations

import datetime as dt

from pymongo.errors import DuplicateKeyError


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class Leases:
    def __init__(self, db):
        self.collection = db["leases"]

    async def ensure_schema(self) -> None:
        pass  # _id is the lease name; nothing else is queried

    async def acquire(self, name: str, owner: str, ttl_seconds: float) -> bool:
        """Take or renew `name` for `owner` if it is free, expired, or already ours."""
        now = _now()
        expires = now + dt.timedelta(seconds=ttl_seconds)
        try:
            result = await self.collection.update_one(
                {"_id": name, "$or": [{"owner": owner}, {"expires": {"$lt": now}}]},
                {"$set": {"owner": owner, "expires": expires, "renewed": now}},
                upsert=True,
            )
        except DuplicateKeyError:
            return False  # someone else holds a live lease: the upsert collided with it
        return result.matched_count == 1 or result.upserted_id is not None

    async def release(self, name: str, owner: str) -> None:
        await self.collection.delete_one({"_id": name, "owner": owner})
