"""The leaderboards the tank statistics job builds: ranked lists in chunks of a page, read by `_id`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from pymongo import ASCENDING, ReplaceOne

from store.client import job_deadline
from store.kinds import Declared, cache

if TYPE_CHECKING:
    from motor.motor_asyncio import AsyncIOMotorDatabase

CHUNK_ROWS = 100  # rows per stored chunk: a page of up to 100 rows is one or two point reads
WRITE_BATCH = 200  # chunks per bulk write
# ... and rows per bulk write: a batch is encoded in one call that holds the interpreter (the event
# loop too), and a tank's whole list of players is one document of thousands of rows at scale.
WRITE_ROWS = 5_000


def list_key(window: str, board: str, by: str, floor: int) -> str:
    """A ranked list's name within a build: window, filter (all, tier:N, type:T), figure, floor."""
    return f"{window}:{board}:{by}:{int(floor)}"


def chunk_id(region: str, build: str, key: str, index: int) -> str:
    return f"{region}:{build}:{key}:{int(index)}"


def current_id(region: str) -> str:
    return f"{region}:current"


class Leaderboards:
    """Collection `leaderboards`: one build per region, replaced whole by the next.

    A chunk: {_id: "region:build:window:filter:by:floor:n", r: region, b: build (the day it ends on
    and the build's time, "YYYY-MM-DD.unix": builds sort in time), total: rows of the whole list,
    rows: [[rank, account_id, figure, battles, nickname, clan tag], ...] (rows n x CHUNK_ROWS on)}.
    A tank's players in a window: {_id: "region:build:tank:<tank_id>:<window>:0", r, b, total, rows:
    [[account_id, battles, win_rate, avg_damage, avg_combined_damage, wn8, nickname, clan tag], ...]}
    (every player at the window's floor on the tank: ranked when read, by any figure and floor).
    A window's clans: {_id: "region:build:clans:<window>:0", r, b, total, rows: [[clan_id, tag, name,
    members, active_members, battles, battles_per_member, wn8, win_rate, elo_10, elo_8,
    skirmish_win_rate], ...]} (every clan at the window's floors: ranked when read).
    The region's pointer: {_id: "region:current", r, build, through, built_at, windows: {window:
    {from, through, players, clans, ranked}}}. A build writes every chunk, then the pointer, then deletes the chunks
    of older builds (an equality and a range on the (r, b) index), so a reader that read the pointer
    finds its chunks until the next build is a day old; writing a build twice stores the same."""

    COLLECTIONS: ClassVar[dict[str, Declared]] = {
        "leaderboards": cache("the ranked lists of tracked accounts, rebuilt daily by the tank statistics job"),
    }

    def __init__(self, db: AsyncIOMotorDatabase[Any]) -> None:
        self.collection = db["leaderboards"]

    async def ensure_schema(self) -> None:
        await self.collection.create_index([("r", ASCENDING), ("b", ASCENDING)])

    async def save_build(
        self,
        region: str,
        build: str,
        lists: Mapping[str, list[list[Any]]],
        pointer: Mapping[str, Any],
        whole: Mapping[str, list[list[Any]]] | None = None,
    ) -> int:
        """Store a region's build: every ranked list (`lists`: {list_key: rows}) in chunks and every
        list of `whole` in one document (chunk 0: a tank's players, ranked when read), then the
        pointer (`pointer`: through, built_at, windows) naming it, then drop older builds' chunks.
        Each write (a batch of at most WRITE_BATCH chunks or WRITE_ROWS rows, the pointer, the
        delete) has its own job deadline: a build's size grows with the tracked accounts, a batch's
        does not. Returns the documents written."""
        written = 0
        ops: list[ReplaceOne] = []
        pieces = [
            (key, index, rows, rows[start : start + CHUNK_ROWS])
            for key, rows in lists.items()
            for index, start in enumerate(range(0, len(rows), CHUNK_ROWS))
        ]
        pieces += [(key, 0, rows, rows) for key, rows in (whole or {}).items() if rows]
        batch_rows = 0
        for key, index, rows, part in pieces:
            doc = {
                "_id": chunk_id(region, build, key, index),
                "r": region,
                "b": build,
                "total": len(rows),
                "rows": part,
            }
            ops.append(ReplaceOne({"_id": doc["_id"]}, doc, upsert=True))
            batch_rows += len(part)
            if len(ops) >= WRITE_BATCH or batch_rows >= WRITE_ROWS:
                with job_deadline():
                    await self.collection.bulk_write(ops, ordered=False)
                written += len(ops)
                ops, batch_rows = [], 0
        if ops:
            with job_deadline():
                await self.collection.bulk_write(ops, ordered=False)
            written += len(ops)
        doc = {"_id": current_id(region), "r": region, "build": build, **pointer}
        with job_deadline():
            await self.collection.replace_one({"_id": doc["_id"]}, doc, upsert=True)
        with job_deadline():
            await self.collection.delete_many({"r": region, "b": {"$lt": build}})
        return written

    async def current(self, region: str) -> dict | None:
        """The region's pointer: which build the pages are read from (None before the first)."""
        return await self.collection.find_one({"_id": current_id(region)})

    async def chunks(self, region: str, build: str, key: str, indexes: Iterable[int]) -> list[dict]:
        """Chunks of one ranked list by index (point reads by `_id`; a missing one is left out)."""
        out = []
        for index in indexes:
            doc = await self.collection.find_one({"_id": chunk_id(region, build, key, index)})
            if doc is not None:
                out.append(doc)
        return out
