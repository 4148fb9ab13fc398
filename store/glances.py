"""Roster glances: the figures a battle roster fetched live for an account, kept an hour."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from pymongo import UpdateOne

from store.constants import region_key
from store.kinds import Declared, cache
from store.retention import Expiring, ensure_expiry_index, utc

if TYPE_CHECKING:
    from motor.motor_asyncio import AsyncIOMotorDatabase

GLANCE_TTL_SECONDS = 3600


class Glances:
    """Collection `glances`: {_id: "region:account_id", fetched_at (unix), expires_at (date), and the
    glance's fields (server/domain/roster.py)}. A glance is written whole by its fetch, so writing
    the same fetch twice stores what once does; it is never a profile (no per-tank counters) and
    never makes its account tracked."""

    COLLECTIONS: ClassVar[dict[str, Declared]] = {
        "glances": cache("the figures rosters fetched live for an hour; fetched again by the next roster"),
    }

    def __init__(self, db: AsyncIOMotorDatabase[Any], ttl_indexes: bool = True) -> None:
        self.collection = db["glances"]
        self.ttl_indexes = ttl_indexes

    async def ensure_schema(self) -> None:
        await ensure_expiry_index(self.collection, "expires_at", 0, self.ttl_indexes)

    def expiring(self) -> list[Expiring]:
        return [Expiring("glances", self.collection, "expires_at", 0)]

    async def get_many(self, region: str, account_ids: list[int]) -> list[dict]:
        """The stored glances of `account_ids` (any age: the caller judges freshness)."""
        keys = [region_key(region, a) for a in account_ids]
        return await self.collection.find({"_id": {"$in": keys}}).to_list(None)

    async def save_many(self, region: str, glances: list[dict]) -> None:
        """Store each glance whole (`account_id` and `fetched_at` set), replacing the account's last."""
        if not glances:
            return
        writes = []
        for glance in glances:
            doc = {**glance, "expires_at": utc(glance["fetched_at"] + GLANCE_TTL_SECONDS)}
            doc.pop("_id", None)
            writes.append(UpdateOne({"_id": region_key(region, int(glance["account_id"]))}, {"$set": doc}, upsert=True))
        await self.collection.bulk_write(writes, ordered=False)
