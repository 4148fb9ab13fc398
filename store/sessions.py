"""Watched accounts: the states a session request asked to be measured every minute for a while."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, ClassVar

from bson import Binary
from pymongo import ASCENDING

from store.kinds import Declared, cache
from store.retention import Expiring, ensure_expiry_index, utc

if TYPE_CHECKING:
    from motor.motor_asyncio import AsyncIOMotorDatabase

# A watched document outlives its watch by this long, so a session asked again the same day
# still finds the state captured when the account was first watched.
KEEP_SECONDS = 86400
# A watched account is due again within a minute of its last measurement, and a watch lasts 15
# minutes: `next` of an account watched now lies within this many seconds of now.
WATCH_SPAN = 1800
# The most states kept for the sessions that start from them (a stream's baseline outlives `latest`).
PINS = 8
SINCES = 8  # the most session starts noted per watched account (the newest)


def watched_id(region: str, account_id: int) -> str:
    return f"{region}:{int(account_id)}"


class Watched:
    """Collection `watched`: one document per watched account.

    {_id: "region:account_id", r: region, a: account_id, until: the watch's end (unix), next: when
    the watcher measures it next (unix), first: the state captured when it was first watched,
    latest: the newest state captured, each {at: unix time of the measurement, lbt: the account's
    last_battle_time then, s: packed per-tank state (store.tanks.pack), assist: the account's
    assistance counters (store.constants.ACCOUNT_ASSIST) or null, checked: when `latest` was last
    seen unchanged}, pins: {"<lbt>": a capture some session starts from, kept past `latest`} (at most
    PINS), sinces: the starts of the sessions asked (unix, the newest SINCES), v: how many captures changed `latest` (a stream's event id), expires_at}. The watcher reads the due ones of a region by an
    equality and a range on the (r, next) index."""

    COLLECTIONS: ClassVar[dict[str, Declared]] = {
        "watched": cache(
            "the states of accounts a session watches (a day at most); a lost one starts a session from "
            "the daily record"
        ),
    }

    def __init__(self, db: AsyncIOMotorDatabase[Any], ttl_indexes: bool = True) -> None:
        self.collection = db["watched"]
        self.ttl_indexes = ttl_indexes

    async def ensure_schema(self) -> None:
        await ensure_expiry_index(self.collection, "expires_at", 0, self.ttl_indexes)
        await self.collection.create_index([("r", ASCENDING), ("next", ASCENDING)])

    def expiring(self) -> list[Expiring]:
        return [Expiring("watched", self.collection, "expires_at", 0)]

    async def watch(self, region: str, account_id: int, until: float, now: float, since: float | None = None) -> dict:
        """Watch the account until `until` (never shortening a longer watch); a new one, or one whose
        watch had ended, is due at once. `since`: a session's start, noted (at most SINCES, the
        newest) so that the watcher keeps the state at it when a newer capture replaces it. Returns
        the document as it is after the writes (point writes and a point read by _id: the embedded
        database scans for a findAndModify)."""
        key = {"_id": watched_id(region, account_id)}
        await self.collection.update_one(
            key,
            {
                "$max": {"until": until, "expires_at": utc(until + KEEP_SECONDS)},
                "$setOnInsert": {"r": region, "a": int(account_id), "next": now, "v": 0},
            },
            upsert=True,
        )
        await self.collection.update_one({**key, "next": float("inf")}, {"$set": {"next": now}})
        doc = await self.get(region, account_id) or {}
        sinces = list(doc.get("sinces") or [])
        if since is not None and since not in sinces:
            doc["sinces"] = sorted([*sinces, since])[-SINCES:]
            await self.collection.update_one(key, {"$set": {"sinces": doc["sinces"]}})
        return doc

    async def get(self, region: str, account_id: int) -> dict | None:
        # Without the watcher's last claim mark (claim_due): bookkeeping of whichever process claimed it.
        return await self.collection.find_one({"_id": watched_id(region, account_id)}, {"claim": 0})

    async def claim_due(self, region: str, now: float, limit: int, next_at: float) -> list[dict]:
        """Claim the watched accounts of `region` due for a measurement (oldest due first, without
        their states): each one's `next` moves to `next_at` by a conditional write, so of several
        processes only one measures it. An ended watch is claimed once too (the caller ends it)."""
        cursor = (
            self.collection.find(
                {"r": region, "next": {"$lte": now}},
                {"a": 1, "until": 1, "next": 1, "latest.lbt": 1, "latest.at": 1, "latest.checked": 1, "sinces": 1},
            )
            .sort("next", ASCENDING)
            .limit(limit)
        )
        due = {doc["_id"]: doc for doc in await cursor.to_list(None)}
        if not due:
            return []
        # One conditional write for the batch (not one per account: that was a write per watched
        # account and minute), marked with this claim; what carries the mark is this process's.
        token = uuid.uuid4().hex
        keys = list(due)
        await self.collection.update_many(
            {"_id": {"$in": keys}, "next": {"$lte": now}}, {"$set": {"next": next_at, "claim": token}}
        )
        mine = {doc["_id"] async for doc in self.collection.find({"_id": {"$in": keys}, "claim": token}, {"_id": 1})}
        return [doc for key, doc in due.items() if key in mine]

    async def capture(
        self,
        region: str,
        account_id: int,
        at: float,
        lbt: Any,
        state: bytes,
        assist: Any,
        next_at: float,
        mastery: bytes = b"",
        first_only: bool = False,
    ) -> None:
        """A new measurement: the newest state (and the first, if there is none yet); v counts it.
        `mastery`: the tanks' mastery badges (server.services.tracker.mastery_of), so the tracker's
        visit can take the newest capture for its own tanks/stats answer. `first_only`: only if the
        account has no capture yet (a measurement that may be older than one taken meanwhile)."""
        capture = {"at": at, "lbt": lbt, "s": Binary(state), "assist": assist, "m": Binary(mastery)}
        key: dict[str, Any] = {"_id": watched_id(region, account_id)}
        if first_only:
            key["latest"] = {"$exists": False}
        await self.collection.update_one(key, {"$set": {"latest": capture, "next": next_at}, "$inc": {"v": 1}})
        await self.collection.update_one(
            {"_id": watched_id(region, account_id), "first": {"$exists": False}}, {"$set": {"first": capture}}
        )

    async def pin_latest(self, region: str, account_id: int) -> None:
        """Keep the newest capture as a pin (a newer one is about to replace it)."""
        doc = await self.collection.find_one({"_id": watched_id(region, account_id)}, {"latest": 1})
        latest = (doc or {}).get("latest")
        if latest and latest.get("lbt") is not None:
            await self.pin(region, account_id, {**latest, "s": bytes(latest["s"])})

    async def pin(self, region: str, account_id: int, capture: dict) -> None:
        """Keep `capture` (a state some session starts from) when a newer capture replaces `latest`:
        under `pins.<its lbt>`, at most PINS of them (the oldest measured goes first)."""
        key = {"_id": watched_id(region, account_id)}
        doc = await self.collection.find_one(key, {"pins": 1})
        if doc is None:
            return
        pins = doc.get("pins") or {}
        capture = {**capture, "s": Binary(capture["s"])}
        name = str(int(capture["lbt"]))
        if name in pins and pins[name].get("checked", pins[name]["at"]) >= capture.get("checked", capture["at"]):
            return
        update: dict[str, Any] = {"$set": {f"pins.{name}": capture}}
        others = sorted((pin["at"], pin_name) for pin_name, pin in pins.items() if pin_name != name)
        if len(others) >= PINS:
            update["$unset"] = {f"pins.{pin_name}": "" for _, pin_name in others[: len(others) - PINS + 1]}
        await self.collection.update_one(key, update)

    async def latest_of(self, region: str, account_ids: list[int]) -> dict[int, dict]:
        """{account_id: newest capture} of the watched accounts among `account_ids` (point reads by _id)."""
        keys = [watched_id(region, a) for a in account_ids]
        out: dict[int, dict] = {}
        for start in range(0, len(keys), 500):
            async for doc in self.collection.find({"_id": {"$in": keys[start : start + 500]}}, {"a": 1, "latest": 1}):
                if doc.get("latest"):
                    out[int(doc["a"])] = doc["latest"]
        return out

    async def unchanged(self, keys: list[str], at: float, next_at: float) -> None:
        """Accounts measured at `at` that had not played since their newest capture."""
        if keys:
            await self.collection.update_many({"_id": {"$in": keys}}, {"$set": {"next": next_at, "latest.checked": at}})

    async def due_again(self, keys: list[str], at: float) -> None:
        """Claimed accounts the watcher could not measure (its share of the minute was spent)."""
        if keys:
            await self.collection.update_many({"_id": {"$in": keys}}, {"$set": {"next": at}})

    async def ended(self, keys: list[str]) -> None:
        """Watches that ended: not due again until someone asks (their states stay a day)."""
        if keys:
            await self.collection.update_many({"_id": {"$in": keys}}, {"$set": {"next": float("inf")}})

    async def versions(self, keys: list[str]) -> dict[str, int]:
        """{_id: v} of the watched accounts among `keys` (point reads by _id)."""
        out: dict[str, int] = {}
        for start in range(0, len(keys), 500):
            async for doc in self.collection.find({"_id": {"$in": keys[start : start + 500]}}, {"v": 1}):
                out[doc["_id"]] = int(doc.get("v") or 0)
        return out

    async def extend(self, keys: list[str], until: float, now: float) -> None:
        """Keep these accounts watched until `until` (streams follow them); an ended watch is due again."""
        for start in range(0, len(keys), 500):
            part = keys[start : start + 500]
            await self.collection.update_many(
                {"_id": {"$in": part}}, {"$max": {"until": until, "expires_at": utc(until + KEEP_SECONDS)}}
            )
            await self.collection.update_many({"_id": {"$in": part}, "next": float("inf")}, {"$set": {"next": now}})

    async def count_watching(self, region: str, now: float) -> int:
        """Accounts of `region` watched now (the watcher's cap): those due within WATCH_SPAN of now
        (an equality and a bounded range on {r, next}, nothing else: another condition makes the
        embedded database scan). An ended watch's `next` is infinite once the watcher has seen it
        end, so one that ended in the last minute may still count."""
        return await self.collection.count_documents(
            {"r": region, "next": {"$gte": now - WATCH_SPAN, "$lte": now + WATCH_SPAN}}
        )
