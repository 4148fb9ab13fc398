"""Cached clans (details, members, averages), operator clan seeds and weekly clan digests."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, ClassVar

from pymongo import ASCENDING, DESCENDING, UpdateOne

from store.constants import region_key as clan_key
from store.freshness import Freshness
from store.kinds import Declared, cache, irreplaceable
from store.retention import Expiring, ensure_expiry_index, utc

if TYPE_CHECKING:
    from motor.motor_asyncio import AsyncIOMotorDatabase

# A clan document outlives its last refresh by this long: upstream outages never drop a
# clan, only clans nobody references any more (and whose refreshes stopped) disappear.
CLAN_TTL_SECONDS = 30 * 86400
# Digests are recomputed hourly (and on demand); the TTL only keeps the collection small.
DIGEST_TTL_SECONDS = 2 * 3600
# A disbanded clan is remembered this long, so stale references do not bring it back to refresh.
GONE_TTL_SECONDS = 30 * 86400
IN_CHUNK = 1000  # ids per $in query
# A clan reference of a player profile is kept this long (profiles are cached an hour).
REF_TTL_SECONDS = 2 * 3600


class Clans:
    status_name = "newest_clan"

    COLLECTIONS: ClassVar[dict[str, Declared]] = {
        "clans": cache("clan details, members and averages; fetched again from the upstream"),
        "clan_digests": cache("weekly clan digests; rebuilt by the weekly job from the members' snapshots"),
        "clan_seeds": irreplaceable("the clans the operator asked to track"),
        "clans_disbanded": cache(
            "clans the upstream said are gone (kept a few days); learned again on the next refresh"
        ),
        "clan_refs": cache("which clans looked-up profiles name; named again by the next lookups"),
    }

    def __init__(self, db: AsyncIOMotorDatabase[Any], ttl_indexes: bool = True) -> None:
        self.db = db
        self.ttl_indexes = ttl_indexes
        self.clans = db["clans"]
        self.digests = db["clan_digests"]
        self.seeds = db["clan_seeds"]
        self.gone = db["clans_disbanded"]
        # Which clans cached player profiles name: {_id: "region:clan_id", region, clan_id, at:
        # the newest profile save naming it}, written by the players family (Players.save).
        self.refs = db["clan_refs"]
        self.freshness = Freshness(db)

    async def ensure_schema(self) -> None:
        # TTL fields are BSON dates; the monitor runs once a minute, so readers check
        # freshness themselves and never rely on deletion.
        await ensure_expiry_index(self.clans, "expires_at", 0, self.ttl_indexes)
        await self.clans.create_index([("cached_at", DESCENDING)])
        await self.clans.create_index([("referenced_at", ASCENDING)])
        await ensure_expiry_index(self.refs, "expires_at", 0, self.ttl_indexes)
        await self.refs.create_index([("at", ASCENDING)])
        await ensure_expiry_index(self.digests, "expires_at", 0, self.ttl_indexes)
        await self.seeds.create_index([("region", ASCENDING), ("clan_id", ASCENDING)])
        await self.gone.create_index("expires_at", expireAfterSeconds=0)  # small: a TTL scan is cheap

    def expiring(self) -> list[Expiring]:
        return [
            Expiring("clans", self.clans, "expires_at", 0),
            Expiring("clan_digests", self.digests, "expires_at", 0),
            Expiring("clan_refs", self.refs, "expires_at", 0),
        ]

    # --- clan documents ------------------------------------------------------------
    async def get(self, region: str, clan_id: int) -> dict | None:
        return await self.clans.find_one({"_id": clan_key(region, clan_id)})

    async def get_many(self, region: str, clan_ids: list[int]) -> dict[int, dict]:
        out: dict[int, dict] = {}
        for start in range(0, len(clan_ids), IN_CHUNK):
            keys = [clan_key(region, c) for c in clan_ids[start : start + IN_CHUNK]]
            async for doc in self.clans.find({"_id": {"$in": keys}}):
                out[doc["clan_id"]] = doc
        return out

    async def cached_at_of(self, keys: list[tuple[str, int]]) -> dict[tuple[str, int], float]:
        """cached_at of the given (region, clan_id) pairs that are cached."""
        out: dict[tuple[str, int], float] = {}
        for start in range(0, len(keys), IN_CHUNK):
            ids = [clan_key(r, c) for r, c in keys[start : start + IN_CHUNK]]
            async for doc in self.clans.find({"_id": {"$in": ids}}, {"region": 1, "clan_id": 1, "cached_at": 1}):
                out[(doc["region"], doc["clan_id"])] = doc["cached_at"]
        return out

    async def save(self, doc: dict) -> None:
        """Write every field of one clan in one atomic update (never half-written)."""
        fields = dict(doc)
        fields.pop("_id", None)
        fields["expires_at"] = utc(doc["cached_at"] + CLAN_TTL_SECONDS)
        await self.clans.update_one({"_id": clan_key(doc["region"], doc["clan_id"])}, {"$set": fields}, upsert=True)
        await self.freshness.raise_to(self.status_name, doc["cached_at"])

    async def referenced_since(self, since: float) -> list[tuple[str, int]]:
        """Cached clans that a player or a seed referenced at or after `since`."""
        cursor = self.clans.find({"referenced_at": {"$gte": since}}, {"region": 1, "clan_id": 1})
        return [(doc["region"], doc["clan_id"]) async for doc in cursor]

    async def cached_since(self, since: float, limit: int) -> list[tuple[str, int]]:
        cursor = (
            self.clans.find({"cached_at": {"$gte": since}}, {"region": 1, "clan_id": 1})
            .sort("cached_at", DESCENDING)
            .limit(limit)
        )
        return [(doc["region"], doc["clan_id"]) async for doc in cursor]

    async def newest_timestamp(self) -> float | None:
        return await self.freshness.newest(self.status_name)

    async def forget_disbanded(self, region: str, clan_ids: list[int], now: float) -> None:
        """A clan the upstream says is disbanded: drop its data and seed, remember it is gone."""
        if not clan_ids:
            return
        keys = [clan_key(region, c) for c in clan_ids]
        await self.gone.bulk_write(
            [
                UpdateOne(
                    {"_id": key},
                    {
                        "$set": {
                            "region": region,
                            "clan_id": int(c),
                            "disbanded_seen_at": now,
                            "expires_at": utc(now + GONE_TTL_SECONDS),
                        }
                    },
                    upsert=True,
                )
                for key, c in zip(keys, clan_ids)
            ],
            ordered=False,
        )
        await self.clans.delete_many({"_id": {"$in": keys}})
        await self.digests.delete_many({"_id": {"$in": keys}})
        await self.seeds.delete_many({"_id": {"$in": keys}})

    async def disbanded(self) -> set[tuple[str, int]]:
        """Clans seen disbanded in the last GONE_TTL_SECONDS (a small set)."""
        return {(doc["region"], doc["clan_id"]) async for doc in self.gone.find({}, {"region": 1, "clan_id": 1})}

    # --- which clans to refresh ------------------------------------------------------
    async def referenced_by_players(self, regions: tuple[str, ...], since: float) -> list[tuple[str, int]]:
        """(region, clan_id) of every clan a player profile saved at or after `since` named: one
        bounded range of clan_refs' `at` index (O(clans named), however many profiles name them)."""
        cursor = self.refs.find({"at": {"$gte": since}}, {"region": 1, "clan_id": 1})
        return [(doc["region"], int(doc["clan_id"])) async for doc in cursor if doc.get("region") in regions]

    async def note_references(self, refs: list[tuple[str, int, float]]) -> None:
        """Profiles saved at `at` name (region, clan_id): keep the newest `at` per clan."""
        if not refs:
            return
        ops = [
            UpdateOne(
                {"_id": clan_key(region, clan_id)},
                {
                    "$max": {"at": float(at), "expires_at": utc(at + REF_TTL_SECONDS)},
                    "$setOnInsert": {"region": region, "clan_id": int(clan_id)},
                },
                upsert=True,
            )
            for region, clan_id, at in refs
        ]
        await self.refs.bulk_write(ops, ordered=False)

    async def add_seeds(self, region: str, clan_ids: list[int], when: float | None = None) -> int:
        """Seed clans for the refresh job; returns how many were not seeded before."""
        when = time.time() if when is None else when
        ops = [
            UpdateOne(
                {"_id": clan_key(region, c)},
                {"$setOnInsert": {"region": region, "clan_id": int(c), "added_at": when}},
                upsert=True,
            )
            for c in clan_ids
        ]
        if not ops:
            return 0
        result = await self.seeds.bulk_write(ops, ordered=False)
        return result.upserted_count

    async def remove_seeds(self, region: str, clan_ids: list[int]) -> int:
        result = await self.seeds.delete_many({"_id": {"$in": [clan_key(region, c) for c in clan_ids]}})
        return result.deleted_count

    async def seeded(self) -> list[tuple[str, int]]:
        return [(doc["region"], doc["clan_id"]) async for doc in self.seeds.find({}, {"region": 1, "clan_id": 1})]

    # --- weekly digests --------------------------------------------------------------
    async def get_digest(self, region: str, clan_id: int) -> dict | None:
        return await self.digests.find_one({"_id": clan_key(region, clan_id)})

    async def save_digest(
        self, region: str, clan_id: int, data: dict, computed_at: float, clan_cached_at: float
    ) -> None:
        await self.digests.update_one(
            {"_id": clan_key(region, clan_id)},
            {
                "$set": {
                    "region": region,
                    "clan_id": clan_id,
                    "data": data,
                    "computed_at": computed_at,
                    "period_end": data["period"]["end"],
                    "clan_cached_at": clan_cached_at,
                    "expires_at": utc(computed_at + DIGEST_TTL_SECONDS),
                }
            },
            upsert=True,
        )
