"""Expected-values tables computed from the tracked population: one document per region and version."""

from __future__ import annotations

import datetime as dt
from typing import ClassVar

from store.kinds import Declared, irreplaceable
from store.retention import KeptByDay

TABLE_DAYS = 400  # a computed table stays readable this long after its last day (?version=)


def table_id(region: str, version: str) -> str:
    return f"{region}:{version}"


def latest_id(region: str) -> str:
    return f"{region}:latest"


class ExpectedTables(KeptByDay):
    """Collection `expected_tables`.

    {_id: "region:version", r, version: "<through>+<method>", through: the window's last day,
     window {from, through, days}, method, minimums, base: the loaded table's version, built_at,
     x: `through` as a date (expires TABLE_DAYS after it), and two tables, gaps (the tanks the
     loaded table lacks, fitted under its rows) and computed (every tank refitted), each
     {passes, converged, rows: {"tank_id": [damage, spot, frag, defence, win_rate, players,
     battles]}}}; and per region one
     pointer {_id: "region:latest", r, version, through} to the newest. Everything is read and
     written by _id. Saving a version again replaces it: a rebuilt day stores the same document."""

    NAME, KEEP_DAYS = "expected_tables", TABLE_DAYS
    COLLECTIONS: ClassVar[dict[str, Declared]] = {
        NAME: irreplaceable("computed expected-value tables, one per region and version"),
    }

    @staticmethod
    def expiry(through: str) -> dt.datetime:
        return dt.datetime.fromisoformat(through).replace(tzinfo=dt.UTC)

    async def save(self, doc: dict) -> None:
        """Store a table, and point the region's `latest` at it unless a newer day is there."""
        await self.collection.replace_one({"_id": doc["_id"]}, doc, upsert=True)
        pointer = await self.collection.find_one({"_id": latest_id(doc["r"])})
        if pointer is None or pointer.get("through", "") <= doc["through"]:
            await self.collection.replace_one(
                {"_id": latest_id(doc["r"])},
                {"_id": latest_id(doc["r"]), "r": doc["r"], "version": doc["version"], "through": doc["through"]},
                upsert=True,
            )

    async def get(self, region: str, version: str) -> dict | None:
        return await self.collection.find_one({"_id": table_id(region, version)})

    async def latest_version(self, region: str) -> str | None:
        """The version of the region's newest table (a point read of the small pointer)."""
        pointer = await self.collection.find_one({"_id": latest_id(region)}, {"version": 1})
        return pointer["version"] if pointer else None

    async def latest(self, region: str) -> dict | None:
        """The region's newest table, None before the job built one."""
        pointer = await self.collection.find_one({"_id": latest_id(region)})
        return await self.get(region, pointer["version"]) if pointer else None
