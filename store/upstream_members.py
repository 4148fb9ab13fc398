"""Processes sharing one upstream application_id: one heartbeat document each."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from store.kinds import Declared, transient

if TYPE_CHECKING:
    from motor.motor_asyncio import AsyncIOMotorDatabase

FORGET_AFTER = 86400  # documents of processes that vanished without leaving are removed after a day


class UpstreamMembers:
    COLLECTIONS: ClassVar[dict[str, Declared]] = {
        "upstream_members": transient("the processes sharing the upstream budget")
    }

    def __init__(self, db: AsyncIOMotorDatabase[Any]) -> None:
        self.collection = db["upstream_members"]

    async def ensure_schema(self) -> None:
        await self.collection.create_index("seen")

    async def heartbeat(self, owner: str, now: float) -> None:
        await self.collection.update_one({"_id": owner}, {"$set": {"seen": now}}, upsert=True)

    async def count_active(self, since: float) -> int:
        """Processes that announced themselves at or after `since` (this one included)."""
        await self.collection.delete_many({"seen": {"$lt": since - FORGET_AFTER}})
        return await self.collection.count_documents({"seen": {"$gte": since}})

    async def leave(self, owner: str) -> None:
        await self.collection.delete_one({"_id": owner})
