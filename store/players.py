"""Player profiles (one-hour cache, TTL) and daily snapshots (kept 400+ days)."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar

from pymongo import ASCENDING, DESCENDING, UpdateOne

from store.bulk import insert_or_upsert
from store.constants import region_key as player_key
from store.freshness import Freshness
from store.kinds import Declared, cache, irreplaceable
from store.retention import Expiring, ensure_expiry_index, utc

if TYPE_CHECKING:
    from motor.motor_asyncio import AsyncIOMotorDatabase

    from store.clans import Clans

PROFILE_TTL_SECONDS = 3600
SNAPSHOT_TTL_SECONDS = 410 * 86400


class Players:
    status_name = "newest_player"

    COLLECTIONS: ClassVar[dict[str, Declared]] = {
        "players": cache("player profiles for an hour; fetched again from the upstream"),
        "snapshots": irreplaceable(
            "each tracked account's daily totals (kept 410 days): the history",
            "day:day",
        ),
    }

    def __init__(self, db: AsyncIOMotorDatabase[Any], ttl_indexes: bool = True, clans: Clans | None = None) -> None:
        self.clans = clans  # store.clans.Clans: told which clans saved profiles name
        self.profiles = db["players"]
        self.snapshots = db["snapshots"]
        self.freshness = Freshness(db)
        self.ttl_indexes = ttl_indexes

    async def ensure_schema(self) -> None:
        # TTL fields are BSON dates; the monitor runs once a minute, so readers still
        # check freshness themselves and never rely on deletion.
        await ensure_expiry_index(self.profiles, "expires_at", 0, self.ttl_indexes)
        await self.profiles.create_index([("region", ASCENDING), ("clan_id", ASCENDING)])
        await self.profiles.create_index([("last_requested", DESCENDING)])
        await self.snapshots.create_index(
            [("region", ASCENDING), ("account_id", ASCENDING), ("date", ASCENDING)], unique=True
        )
        await ensure_expiry_index(self.snapshots, "day", SNAPSHOT_TTL_SECONDS, self.ttl_indexes)

    def expiring(self) -> list[Expiring]:
        return [
            Expiring("snapshots", self.snapshots, "day", SNAPSHOT_TTL_SECONDS),
            Expiring("players", self.profiles, "expires_at", 0),
        ]

    async def get(self, region: str, account_id: int) -> dict | None:
        return await self.profiles.find_one({"_id": player_key(region, account_id)})

    async def get_many(
        self, region: str, account_ids: list[int], projection: dict[str, Any] | None = None
    ) -> list[dict]:
        keys = [player_key(region, a) for a in account_ids]
        return await self.profiles.find({"_id": {"$in": keys}}, projection).to_list(None)

    async def save(self, doc: dict) -> None:
        """Write every profile field in one atomic update; request bookkeeping is kept."""
        fields = dict(doc)
        fields["expires_at"] = utc(doc["cached_at"] + PROFILE_TTL_SECONDS)
        await self.profiles.update_one(
            {"_id": player_key(doc["region"], doc["account_id"])}, {"$set": fields}, upsert=True
        )
        await self.freshness.raise_to(self.status_name, doc["cached_at"])
        if self.clans is not None and int(doc.get("clan_id") or 0) > 0:
            await self.clans.note_references([(doc["region"], int(doc["clan_id"]), doc["cached_at"])])

    async def set_ratings(self, region: str, account_id: int, cached_at: float, ratings: dict) -> bool:
        """Attach ratings to the profile version they were computed from."""
        result = await self.profiles.update_one(
            {"_id": player_key(region, account_id), "cached_at": cached_at}, {"$set": {"ratings": ratings}}
        )
        return result.matched_count == 1

    async def touch(self, region: str, account_id: int, when: float) -> None:
        await self.profiles.update_one({"_id": player_key(region, account_id)}, {"$set": {"last_requested": when}})

    async def due_for_refresh(self, requested_since: float, cached_before: float, limit: int) -> list[dict]:
        """Recently requested profiles that will expire soon: refreshed ahead of expiry.

        One bounded range of the last_requested index (the profiles requested since
        `requested_since`); the age test and the order are applied here, because a second range
        predicate or a sort in the query makes the embedded database scan the collection."""
        cursor = self.profiles.find(
            {"last_requested": {"$gte": requested_since}},
            {"region": 1, "account_id": 1, "cached_at": 1, "last_requested": 1},
        )
        docs = [doc for doc in await cursor.to_list(None) if float(doc.get("cached_at") or 0) < cached_before]
        docs.sort(key=lambda doc: doc["last_requested"], reverse=True)
        return [{"_id": doc["_id"], "region": doc["region"], "account_id": doc["account_id"]} for doc in docs[:limit]]

    async def newest_timestamp(self) -> float | None:
        return await self.freshness.newest(self.status_name)

    # --- snapshots -----------------------------------------------------------------
    async def set_wtr(
        self, region: str, day: str, profile_fields: dict[int, dict[str, Any]], ratings: dict[int, Any] | None
    ) -> None:
        """The day's WTR of accounts (the tracker's account/wtr answer): `ratings` {account_id: rating
        or None} into the day's snapshots (where rated) and `profile_fields` {account_id: {wtr,
        wtr_reason}} into the cached profiles; `ratings` None (the request failed) touches only
        profiles without a WTR. Point writes, no upsert: the same call twice stores the same."""
        profile_ops = [
            UpdateOne(
                {"_id": player_key(region, account_id), **({} if ratings is not None else {"wtr": None})},
                {"$set": fields},
            )
            for account_id, fields in profile_fields.items()
        ]
        if profile_ops:
            await self.profiles.bulk_write(profile_ops, ordered=False)
        snapshot_ops = [
            UpdateOne({"region": region, "account_id": account_id, "date": day}, {"$set": {"wtr": rating}})
            for account_id, rating in (ratings or {}).items()
            if rating is not None
        ]
        if snapshot_ops:
            await self.snapshots.bulk_write(snapshot_ops, ordered=False)

    async def save_snapshots(self, snapshots: list[dict]) -> None:
        """One snapshot per (region, account, UTC date), inserted or else updated: the latest of the day wins."""
        docs = [{**snap, "day": dt.datetime.fromisoformat(snap["date"]).replace(tzinfo=dt.UTC)} for snap in snapshots]
        await insert_or_upsert(
            self.snapshots,
            docs,
            lambda doc: UpdateOne(
                {"region": doc["region"], "account_id": doc["account_id"], "date": doc["date"]},
                {"$set": doc},
                upsert=True,
            ),
        )

    async def snapshots_since(
        self,
        region: str,
        account_id: int,
        first_date: str,
        last_date: str | None = None,
        fields: Iterable[str] | None = None,
    ) -> list[dict]:
        """One account's snapshots between two dates: an indexed range of at most one document a day."""
        projection = {f: 1 for f in fields} if fields else {"day": 0}
        projection["_id"] = 0
        dates = {"$gte": first_date} if last_date is None else {"$gte": first_date, "$lte": last_date}
        cursor = self.snapshots.find({"region": region, "account_id": account_id, "date": dates}, projection).sort(
            "date", ASCENDING
        )
        return await cursor.to_list(None)

    async def snapshots_for_accounts(
        self, region: str, account_ids: list[int], first_date: str, last_date: str
    ) -> list[dict]:
        # One indexed equality query per account: an $in over account_id makes some servers
        # (SecantusDB) scan the collection, which took over a second on the demo data.
        async def one(account_id: int) -> list[dict]:
            cursor = self.snapshots.find(
                {"region": region, "account_id": account_id, "date": {"$gte": first_date, "$lte": last_date}},
                {"_id": 0, "day": 0},
            )
            return await cursor.to_list(None)

        results: list[dict] = []
        for start in range(0, len(account_ids), 25):
            batches = await asyncio.gather(*[one(a) for a in account_ids[start : start + 25]])
            results.extend(doc for batch in batches for doc in batch)
        results.sort(key=lambda doc: doc["date"])
        return results
