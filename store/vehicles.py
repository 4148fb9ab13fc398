"""The vehicle catalogue (wot/encyclopedia/vehicles) of each region, as last fetched."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from store.kinds import Declared, cache

if TYPE_CHECKING:
    from motor.motor_asyncio import AsyncIOMotorDatabase


class VehicleCatalogues:
    """Collection `vehicles`: one document per region, the newest encyclopedia that was fetched.

    {_id: region, r, fetched_at (unix), vehicles: {"tank_id": {name, short_name, tier, type, nation,
    tag, is_premium, is_gift, is_wheeled, images}}}. A fetch replaces the region's document whole,
    so writing the same fetch twice stores what once does; a failed fetch writes nothing and the
    last good catalogue stays, with its date."""

    COLLECTIONS: ClassVar[dict[str, Declared]] = {
        "vehicles": cache("each region's vehicle catalogue, as last fetched from wot/encyclopedia/vehicles"),
    }

    def __init__(self, db: AsyncIOMotorDatabase[Any]) -> None:
        self.collection = db["vehicles"]

    async def ensure_schema(self) -> None:
        """Read by _id only: no index beyond it."""

    async def save(self, region: str, fetched_at: float, vehicles: Mapping[int, Mapping[str, Any]]) -> None:
        """Store `vehicles` as the region's catalogue unless a newer fetch is stored already."""
        doc: dict[str, Any] = {
            "r": region,
            "fetched_at": float(fetched_at),
            "vehicles": {str(tank_id): dict(record) for tank_id, record in vehicles.items()},
        }
        current = await self.collection.find_one({"_id": region}, {"fetched_at": 1})
        if current is not None and float(current.get("fetched_at") or 0) > doc["fetched_at"]:
            return
        await self.collection.replace_one({"_id": region}, doc, upsert=True)

    async def get(self, region: str) -> tuple[float, dict[int, dict[str, Any]]] | None:
        """(fetched_at, {tank_id: record}) of the region's stored catalogue, None without one."""
        doc = await self.collection.find_one({"_id": region})
        if doc is None:
            return None
        return float(doc["fetched_at"]), {int(t): record for t, record in (doc.get("vehicles") or {}).items()}
