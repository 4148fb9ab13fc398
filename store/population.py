"""The tracked population per tank: each account-day's per-tank changes, daily sums and period distributions."""

from __future__ import annotations

import datetime as dt
from array import array
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from bson import Binary
from pymongo import ASCENDING, ReplaceOne

from store.bulk import insert_or_upsert
from store.constants import TANK_COUNTERS
from store.kinds import Declared, irreplaceable
from store.retention import Expiring, KeptByDay

if TYPE_CHECKING:
    from motor.motor_asyncio import AsyncIOMotorDatabase

# Days of per-account changes kept: the longest period (90 days) and the days a late aggregation
# may still need, with room to spare.
CHANGE_DAYS = 100
DAY_SUMS_DAYS = 400  # daily sums per tank: a tank's series reads at most 90 of them
MARKS_DAYS = 100  # daily mark thresholds kept: a tank's series reads at most 90, the 30-day change one
PERCENTILES = tuple(range(1, 100))  # the grid each distribution is kept as (p1 ... p99)


def population_id(region: str, name: str, population: str = "tracked") -> str:
    """The _id of a table (tank_periods) or a tank's series (tank_series) of `population`: the
    tracked population's are `{region}:{name}`, the random panel's `{region}:panel:{name}`."""
    return f"{region}:{name}" if population == "tracked" else f"{region}:{population}:{name}"


def change_id(region: str, account_id: int, day: str) -> str:
    return f"{region}:{int(account_id)}:{day}"


def _day_date(day: str) -> dt.datetime:
    return dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC)


def pack_grid(values: Sequence[float]) -> Binary:
    """A percentile grid as 99 float32 (396 bytes, where a BSON array of doubles costs ~1.2 KB)."""
    return Binary(array("f", values).tobytes())


def unpack_grid(blob: bytes | None) -> list[float] | None:
    if not blob:
        return None
    grid = array("f")
    grid.frombytes(bytes(blob))
    return grid.tolist()


DAY_BATCH = 500  # tank_changes documents per batch of a day's read (~0.5 MB)


class TankChanges(KeptByDay):
    """Collection `tank_changes`: what each tracked account played per tank on each UTC day.

    {_id: "region:account_id:YYYY-MM-DD", r: region, d: day (indexed with r: a day's changes of a
     region are one equality on the index), a: account_id, t: the per-tank differences (packed
     like a keyframe: server/domain/records.py pack of {tank_id: counter differences}), s: the
     change of the account's assistance (store.constants.ACCOUNT_ASSIST; absent when unknown), p: true when
     the account was tracked for the random panel only that day (absent otherwise: its figures stay out of
     the tracked population's), x: the day as a date (expires CHANGE_DAYS after it)}.

    Written beside the day's per-tank record by the tracker, from the same base state: the record's
    change is against the previous record's state, and so is this. A second write of the account on
    the same day replaces the document (its base is then the day before's state, as the record's
    is), so an account-day counts once however often it is written."""

    NAME, KEEP_DAYS = "tank_changes", CHANGE_DAYS
    INDEXES = ([("r", ASCENDING), ("d", ASCENDING)],)  # a day's documents of a region
    COLLECTIONS: ClassVar[dict[str, Declared]] = {
        NAME: irreplaceable("what each tracked account played per tank each day", "day:x"),
    }

    @staticmethod
    def change(
        region: str,
        account_id: int,
        day: str,
        payload: bytes,
        assist: Sequence[int] | None = None,
        panel_only: bool = False,
    ) -> dict:
        """The document of one account-day: `payload` packs {tank_id: its counter differences
        (TANK_COUNTERS order)} (server/domain/records.py pack); `assist` the change of the
        account's assistance (ACCOUNT_ASSIST), kept as `s` when known; `panel_only`: the account is
        tracked for the random panel only (kept as `p`)."""
        doc = {
            "_id": change_id(region, account_id, day),
            "r": region,
            "d": day,
            "a": int(account_id),
            "t": Binary(payload),
            "x": _day_date(day),
        }
        if assist is not None:
            doc["s"] = [int(v) for v in assist]
        if panel_only:
            doc["p"] = True
        return doc

    async def save(self, docs: Iterable[dict]) -> int:
        docs = list(docs)
        await insert_or_upsert(self.collection, docs, lambda doc: ReplaceOne({"_id": doc["_id"]}, doc, upsert=True))
        return len(docs)

    async def of_day(self, region: str, day: str) -> list[tuple[int, bytes, list[int] | None]]:
        """(account_id, the packed {tank_id: counter differences}, the assistance change or None)
        of every account that played on `day` in `region`: server/domain/records.py unpack decodes
        the payloads (rows written before a counter existed are shorter; so is every row of a
        change whose base lacked it)."""
        return [change for change, _ in await self.of_day_marked(region, day)]

    async def of_day_marked(self, region: str, day: str) -> list[tuple[tuple[int, bytes, list[int] | None], bool]]:
        """of_day's changes, each with whether its account was tracked for the random panel only."""
        # Batches of DAY_BATCH: the server's default second batch is everything left, up to 16 MB.
        cursor = self.collection.find({"r": region, "d": day}, {"a": 1, "t": 1, "s": 1, "p": 1, "_id": 0})
        docs = await cursor.batch_size(DAY_BATCH).to_list(None)
        return [((int(doc["a"]), bytes(doc["t"]), doc.get("s")), bool(doc.get("p"))) for doc in docs]


class TankDays(KeptByDay):
    """Collection `tank_days`: per region and UTC day, the sums over the accounts that played each tank.

    {_id: "region:YYYY-MM-DD", r, d, accounts: accounts with a change that day, tanks: {"tank_id":
     [players, then the counter sums in TANK_COUNTERS order: a day built before a counter existed has fewer]}, built_at, x: the day as a date}.
    Rebuilt whole from that day's tank_changes (a replacement: running it twice stores the same)."""

    NAME, KEEP_DAYS = "tank_days", DAY_SUMS_DAYS
    COLLECTIONS: ClassVar[dict[str, Declared]] = {
        NAME: irreplaceable("per-tank sums over the tracked accounts per day", "day:x"),
    }

    async def save(self, region: str, day: str, accounts: int, tanks: Mapping[int, Sequence[int]], now: float) -> None:
        doc = {
            "_id": f"{region}:{day}",
            "r": region,
            "d": day,
            "accounts": int(accounts),
            "tanks": {str(tank_id): [int(v) for v in row] for tank_id, row in tanks.items()},
            "built_at": now,
            "x": _day_date(day),
        }
        await self.collection.replace_one({"_id": doc["_id"]}, doc, upsert=True)

    async def get(self, region: str, day: str) -> dict | None:
        return await self.collection.find_one({"_id": f"{region}:{day}"})


SUM_WIDTH = 1 + len(TANK_COUNTERS)  # a tank_days row: players, then the counter sums


class TankPeriods:
    """Collection `tank_periods`: per region, population and period (7, 30 or 90 days ending `through`), every tank's figures.

    {_id: "region:days" (the tracked accounts'; "region:panel:days" the random panel's, with panel:
     {size, frame, refreshed_at} as of the build), r, days, through: the period's last day, from: its first, min_battles,
     built_at, accounts: {players, qualified, wn8: grid}, tanks: {"tank_id": {players: accounts
     that played it, battles.., sums: [the counter sums], qualified: players with >= min_battles,
     damage: grid, wn8: grid}}} where a grid is the percentiles 1..99 (pack_grid) of the qualified
    players' per-battle average damage (or WN8 of the tank), null below the answer's minimum.
    One document per (region, period): a table of every tank, or one tank, is one read."""

    COLLECTIONS: ClassVar[dict[str, Declared]] = {
        "tank_periods": irreplaceable(
            "the tank statistics tables of the last build (7, 30, 90 days), as served that day"
        ),
    }

    def __init__(self, db: AsyncIOMotorDatabase[Any]) -> None:
        self.collection = db["tank_periods"]

    async def ensure_schema(self) -> None:
        return None  # read by _id only

    async def save(self, doc: dict) -> None:
        await self.collection.replace_one({"_id": doc["_id"]}, doc, upsert=True)

    async def get(self, region: str, days: int, population: str = "tracked") -> dict | None:
        return await self.collection.find_one({"_id": population_id(region, str(int(days)), population)})

    async def built_at(self, region: str, days: int, population: str = "tracked") -> float | None:
        """When the (region, days) table was built (a point read of one field), None without one."""
        doc = await self.collection.find_one(
            {"_id": population_id(region, str(int(days)), population)}, {"built_at": 1}
        )
        return doc["built_at"] if doc else None

    # The region's current mark thresholds live here too, as `{region}:marks` (one document per
    # region like a period's table: server/services/population.py marks_document).

    async def get_marks(self, region: str, population: str = "tracked") -> dict | None:
        return await self.collection.find_one({"_id": population_id(region, "marks", population)})

    async def marks_built_at(self, region: str, population: str = "tracked") -> float | None:
        doc = await self.collection.find_one({"_id": population_id(region, "marks", population)}, {"built_at": 1})
        return doc["built_at"] if doc else None


class TankSeries:
    """Collection `tank_series`: per region, population and tank, its daily figures over the last 90 days.

    {_id: "region:tank_id" (the tracked accounts'; "region:panel:tank_id" the random panel's), r, tank_id, through, days: [YYYY-MM-DD...], players: [..], battles: [..],
     wins: [..], damage: [..]} (oldest first; days without a player of the tank are left out)."""

    COLLECTIONS: ClassVar[dict[str, Declared]] = {
        "tank_series": irreplaceable("each tank's daily series of the last build, as served that day"),
    }

    def __init__(self, db: AsyncIOMotorDatabase[Any]) -> None:
        self.collection = db["tank_series"]

    async def ensure_schema(self) -> None:
        return None  # read by _id only

    async def save_many(self, docs: Iterable[dict]) -> None:
        ops = [ReplaceOne({"_id": doc["_id"]}, doc, upsert=True) for doc in docs]
        for start in range(0, len(ops), 100):
            await self.collection.bulk_write(ops[start : start + 100], ordered=False)

    async def get(self, region: str, tank_id: int, population: str = "tracked") -> dict | None:
        return await self.collection.find_one({"_id": population_id(region, str(int(tank_id)), population)})


class TankMarks(KeptByDay):
    """Collection `tank_marks`: per region and UTC day, every tank's mark thresholds over the 14 days ending it.

    {_id: "region:YYYY-MM-DD", r, d, built_at, tanks: {"tank_id": [1st, 2nd, 3rd, top (null below
     the minimum sample), players, battles]}, x: the day as a date (expires MARKS_DAYS after it)}.
    What the daily job computed that day (a replacement: running it twice stores the same); the
    changes over 7 and 30 days and each tank's daily series are read from it."""

    NAME, KEEP_DAYS = "tank_marks", MARKS_DAYS
    COLLECTIONS: ClassVar[dict[str, Declared]] = {
        NAME: irreplaceable("each day's mark-of-excellence thresholds per tank, as served that day", "day:x"),
    }

    async def save(self, region: str, day: str, tanks: Mapping[int, Sequence[Any]], now: float) -> None:
        doc = {
            "_id": f"{region}:{day}",
            "r": region,
            "d": day,
            "built_at": now,
            "tanks": {str(tank_id): list(row) for tank_id, row in tanks.items()},
            "x": _day_date(day),
        }
        await self.collection.replace_one({"_id": doc["_id"]}, doc, upsert=True)

    async def get(self, region: str, day: str) -> dict | None:
        """One day's thresholds (a point read by _id), None when not built that day."""
        return await self.collection.find_one({"_id": f"{region}:{day}"})


class Population:
    """The population families together (Store.population)."""

    def __init__(self, db: AsyncIOMotorDatabase[Any], ttl_indexes: bool = True) -> None:
        self.changes = TankChanges(db, ttl_indexes=ttl_indexes)
        self.days = TankDays(db, ttl_indexes=ttl_indexes)
        self.periods = TankPeriods(db)
        self.series = TankSeries(db)
        self.marks = TankMarks(db, ttl_indexes=ttl_indexes)

    async def ensure_schema(self) -> None:
        for part in (self.changes, self.days, self.periods, self.series, self.marks):
            await part.ensure_schema()

    def expiring(self) -> list[Expiring]:
        return [*self.changes.expiring(), *self.days.expiring(), *self.marks.expiring()]
