"""Each realm's random panel: the uniformly drawn account ids the server-wide figures are taken over."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from store.kinds import Declared, irreplaceable

if TYPE_CHECKING:
    from motor.motor_asyncio import AsyncIOMotorDatabase


class Panels:
    """Collection `panels`: one document per region (server/services/panel.py).

    {_id: region, frame: [account ids drawn uniformly from the realm's range that exist, active or
     not], target (active members wanted), members (frame accounts that played in the last 30 days,
     as of the last refresh), played_day (... in the last day), drawn_at (first draw), refreshed_at,
     refreshed_day, ids_probed, probe_requests: {YYYY-MM-DD: account/info requests of the day's
     probing} (the last 30 days)}."""

    COLLECTIONS: ClassVar[dict[str, Declared]] = {
        "panels": irreplaceable("each realm's random panel: the account ids drawn, and its figures"),
    }

    def __init__(self, db: AsyncIOMotorDatabase[Any]) -> None:
        self.collection = db["panels"]

    async def ensure_schema(self) -> None:
        return None  # read by _id only (three documents)

    async def get(self, region: str) -> dict | None:
        return await self.collection.find_one({"_id": region})

    async def save(self, doc: dict) -> None:
        await self.collection.replace_one({"_id": doc["_id"]}, doc, upsert=True)
