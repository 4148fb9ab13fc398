"""Wargaming's published per-tank distributions (wot/tanks/mastery), one version per region and day."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from pymongo import ASCENDING, DESCENDING

from store.kinds import Declared, irreplaceable
from store.retention import KeptByDay

OFFICIAL_DAYS = 400  # each day's version is kept this long, as the daily history is


def _day_date(day: str) -> dt.datetime:
    return dt.datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=dt.UTC)


class OfficialMarks(KeptByDay):
    """Collection `official_marks`: what wot/tanks/mastery answered for a region on a UTC day.

    {_id: "region:YYYY-MM-DD", r, d, fetched_at (unix), updated_at (the upstream's, unix or null),
     damage: {"tank_id": [value at each of `damage_percentiles`]}, damage_percentiles,
     xp: {"tank_id": [...]}, xp_percentiles, x: the day as a date}. Written once a day and never
    rewritten (a second fetch of the day keeps the first): a past day cannot be asked again."""

    NAME, KEEP_DAYS = "official_marks", OFFICIAL_DAYS
    INDEXES = ([("r", ASCENDING), ("d", ASCENDING)],)  # a day's documents of a region
    COLLECTIONS: ClassVar[dict[str, Declared]] = {
        NAME: irreplaceable(
            "each day's published damage and XP distributions per tank (wot/tanks/mastery), as fetched that day",
            "day:x",
        ),
    }

    async def save(
        self,
        region: str,
        day: str,
        distributions: Mapping[str, tuple[Sequence[int], Mapping[int, Sequence[float]]]],
        updated_at: int | None,
        now: float,
    ) -> bool:
        """Keep the day's version unless one is kept already (True when this one was written).
        `distributions`: {"damage"|"xp": (percentiles, {tank_id: values at them})}."""
        doc: dict[str, Any] = {"r": region, "d": day, "fetched_at": now, "updated_at": updated_at, "x": _day_date(day)}
        for name, (percentiles, values) in distributions.items():
            doc[name] = {str(tank_id): [float(v) for v in row] for tank_id, row in values.items()}
            doc[f"{name}_percentiles"] = [int(p) for p in percentiles]
        result = await self.collection.update_one({"_id": f"{region}:{day}"}, {"$setOnInsert": doc}, upsert=True)
        return result.upserted_id is not None

    async def newest(self, region: str, since: str, through: str) -> dict | None:
        """The region's newest version from `since` to `through` (an equality and a bounded range on
        the (r, d) index), None without one."""
        cursor = (
            self.collection.find({"r": region, "d": {"$gte": since, "$lte": through}})
            .sort([("r", ASCENDING), ("d", DESCENDING)])
            .limit(1)
        )
        found = await cursor.to_list(1)
        return found[0] if found else None

    async def get(self, region: str, day: str) -> dict | None:
        return await self.collection.find_one({"_id": f"{region}:{day}"})
