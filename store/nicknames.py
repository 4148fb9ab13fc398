"""The first tracked nicknames per (region, prefix), kept as nicknames arrive and change, for search."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, ClassVar

from pymongo import UpdateOne

from store.client import job_deadline
from store.kinds import Declared, cache

if TYPE_CHECKING:
    from motor.motor_asyncio import AsyncIOMotorDatabase

PREFIX_MIN = 3  # shorter prefixes are read from the nickname index (the API asks for 3 or more)
PREFIX_MAX = 8  # longer prefixes too: few nicknames share 9 characters, so their range is small
KEEP = 10  # first nicknames kept per prefix: a search answers at most this many (SEARCH_RESULTS)


def prefixes(nickname: str | None) -> list[str]:
    """The lowercase prefixes of `nickname` this table keeps, shortest first."""
    low = (nickname or "").lower()
    return [low[:k] for k in range(PREFIX_MIN, min(len(low), PREFIX_MAX) + 1)]


def prefix_id(region: str, prefix: str) -> str:
    return f"{region}:{prefix}"


def kept(prefix: str, limit: int) -> bool:
    """Whether a search for `prefix` with `limit` results can be answered from this table."""
    return PREFIX_MIN <= len(prefix) <= PREFIX_MAX and limit <= KEEP


def entry(account_id: int, nickname: str) -> dict:
    return {"n": nickname.lower(), "a": int(account_id), "d": nickname}


def sync_ops(region: str, account_id: int, old: str | None, new: str | None, complete: bool = False) -> list[UpdateOne]:
    """The writes that move one account from nickname `old` (what this table was last told, None:
    nothing) to `new` (None: no nickname). Applied in order, once or many times, they leave the same
    table: each push is conditional on the account's absence and each pull on a different name.
    `complete`: every tracked nickname has been told (NicknamePrefixes.complete), so a prefix
    document this creates holds every match; otherwise it is created stale.

    A prefix the account leaves (or whose entry changes name) loses the entry and is marked stale
    when the entry was there: the next nickname in line is unknown, so the next read rebuilds it
    from the nickname index. Every touched prefix's version `v` moves, so a rebuild that read the
    index before this change does not store what it read (see NicknamePrefixes.first)."""
    account_id = int(account_id)
    ops: list[UpdateOne] = []
    for prefix in prefixes(old):
        key = prefix_id(region, prefix)
        ops.append(UpdateOne({"_id": key}, {"$inc": {"v": 1}}))
        ops.append(
            UpdateOne(
                {"_id": key, "top": {"$elemMatch": {"a": account_id, "d": {"$ne": new}}}},
                {"$pull": {"top": {"a": account_id}}, "$set": {"stale": True}},
            )
        )
    if new:
        row = entry(account_id, new)
        for prefix in prefixes(new):
            key = prefix_id(region, prefix)
            ops.append(
                UpdateOne({"_id": key}, {"$setOnInsert": {"top": [], "stale": not complete, "v": 0}}, upsert=True)
            )
            ops.append(
                UpdateOne(
                    {"_id": key, "top.a": {"$ne": account_id}},
                    {
                        "$push": {"top": {"$each": [row], "$sort": {"n": 1, "a": 1}, "$slice": KEEP}},
                        "$inc": {"v": 1},
                    },
                )
            )
    return ops


class NicknamePrefixes:
    """Collection `nickname_prefixes`: {_id: "region:prefix", top: the first KEEP tracked accounts
    whose nickname starts with the prefix, as [{n: lowercase, a: account_id, d: nickname}] sorted by
    (n, a), stale: true when `top` may miss one, v: a version moved by every change}.

    Why: the embedded database reads a whole index range whatever the limit, so a search by the
    range [prefix, next prefix) costs every match, which grows with the tracked accounts. A search
    reads one document here instead; a missing or stale one is rebuilt from that range once."""

    COLLECTIONS: ClassVar[dict[str, Declared]] = {
        "nickname_prefixes": cache(
            "the first tracked nicknames per prefix, for search; a restore rebuilds it from `tracked`"
        ),
    }

    def __init__(self, db: AsyncIOMotorDatabase[Any]) -> None:
        self.collection = db["nickname_prefixes"]
        # Every tracked nickname has been told (Tracked.migrate_nicknames ran): a missing document
        # then means no tracked nickname has the prefix, and new documents are created complete.
        self.complete = False

    async def apply(self, ops: list[UpdateOne]) -> None:
        # 100 updates per command: the embedded database runs one command at a time, so a
        # clan's worth of members (~1,000 updates) in one command would hold every read behind it.
        # Each command is a job step of its own (inside a caller's deadline, that one still holds).
        for start in range(0, len(ops), 100):
            with job_deadline():
                await self.collection.bulk_write(ops[start : start + 100], ordered=True)

    async def invalidate(self, region: str, prefix: str) -> None:
        """The kept entries of (region, prefix) proved wrong: the next read rebuilds them."""
        await self.collection.update_one(
            {"_id": prefix_id(region, prefix)}, {"$set": {"stale": True}, "$inc": {"v": 1}}
        )

    async def first(
        self, region: str, prefix: str, limit: int, read_range: Callable[[str, str], Awaitable[list[dict]]]
    ) -> list[dict]:
        """The first `limit` entries for (region, prefix) (kept(prefix, limit) must hold).
        `read_range(region, prefix)` returns every match as entries sorted by (n, a); it is called
        only when the kept document is stale, or missing before the table is complete, and what it returns is stored only if no
        change landed meanwhile (compare-and-set on `v`)."""
        key = prefix_id(region, prefix)
        doc = await self.collection.find_one({"_id": key})
        if doc is not None and not doc.get("stale"):
            return doc["top"][:limit]
        if doc is None and self.complete:
            return []
        if doc is None:
            await self.collection.update_one(
                {"_id": key}, {"$setOnInsert": {"top": [], "stale": True, "v": 0}}, upsert=True
            )
            doc = await self.collection.find_one({"_id": key}) or {"v": 0}
        rows = await read_range(region, prefix)
        await self.collection.update_one(
            {"_id": key, "v": doc.get("v", 0)}, {"$set": {"top": rows[:KEEP], "stale": False}}
        )
        return rows[:limit]
