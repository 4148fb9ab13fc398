"""Tracked accounts (kept apart from the hour-long profile cache) and the daily pass's (day, slice) claims."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from bson import Binary
from pymongo import ASCENDING, UpdateOne

from store.bulk import insert_new
from store.client import job_deadline
from store.constants import REGIONS
from store.freshness import Freshness
from store.kinds import Declared, irreplaceable, transient
from store.nicknames import NicknamePrefixes, entry, kept, sync_ops

if TYPE_CHECKING:
    from motor.motor_asyncio import AsyncIOMotorDatabase

PARKED = "~"  # last_visit_day of an account whose tracking ended: sorts after every day, so no pass finds it
SLICES = 64  # the pass is partitioned into this many slices by a stable hash of (region, account_id)
IN_CHUNK = 100  # ids per $in (SecantusDB's $in is quadratic in the number of keys)
NICKNAME_END = "\U0010ffff"  # sorts after every character a nickname can hold
NICKNAME_MIGRATION = "tracked.nickname_prefixes"  # marker in `migrations`: every nickname told once
# What the pass reads of a tracked account (the packed per-tank state is read apart, only for
# accounts that played).
VISIT_FIELDS = {
    "region": 1,
    "until": 1,
    "account_id": 1,
    "last_battle_time": 1,
    "record_day": 1,
    "keyframe_day": 1,
    "keyframe_bytes": 1,
    "chain_records": 1,
    "chain_bytes": 1,
    "kept_day": 1,
    "assist": 1,
    "panel_only": 1,  # its changes are marked the panel's only (store.population.TankChanges `p`)
}


def slice_of(region: str, account_id: int) -> int:
    """The pass slice of an account: stable across processes and restarts (never Python's hash())."""
    digest = hashlib.blake2b(f"{region}:{account_id}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big") % SLICES


def tracked_id(region: str, account_id: int) -> str:
    return f"{region}:{account_id}"


class Tracked:
    """Collection `tracked`: one document per tracked account.

    {_id: "region:account_id", region, account_id, nickname, nickname_lower, clan_id (as of the newest
     visit that found new battles), slice, since,
     until (tracking ends then: see server/services/tracker.py), last_visit_day ("" before the first visit),
     last_battle_time (as of the newest per-tank record), record_day, keyframe_day, keyframe_bytes,
     chain_records, chain_bytes (the keyframe policy's bookkeeping), kept_day (the expiry base of the
     newest record's chain: see server/services/tracker.py, plan_visit), state (the newest per-tank state,
     packed as server/domain/records.py pack), assist (the account's assistance as of that state:
     store.constants.ACCOUNT_ASSIST), mastery (each tank's mastery badge, packed as rows of one
     counter), nick_indexed (the nickname `nickname_prefixes` was last told,
     store/nicknames.py)}.

    Collection `tracker_slices`: one claim per (day, slice) of the daily pass, {_id: "day:slice",
    day, slice, owner, expires, due, started, finished, visited, info_requests, tanks_requests,
    records, record_bytes}. Times are the tracker's clock (unix seconds), so a simulated clock works.
    """

    status_name = "newest_tracked"

    COLLECTIONS: ClassVar[dict[str, Declared]] = {
        "tracked": irreplaceable(
            "the accounts the tracker measures daily, with their nicknames and visit state",
            f"each:slice={SLICES}",
        ),
        "tracker_slices": transient("the daily pass's claims per (day, slice)"),
    }

    def __init__(self, db: AsyncIOMotorDatabase[Any]) -> None:
        self.collection = db["tracked"]
        self.slices = db["tracker_slices"]
        self.freshness = Freshness(db)
        self.prefixes = NicknamePrefixes(db)
        self.migrations = db["migrations"]

    async def ensure_schema(self) -> None:
        await self.collection.create_index([("region", ASCENDING), ("nickname_lower", ASCENDING)])
        await self.collection.create_index([("slice", ASCENDING), ("last_visit_day", ASCENDING)])
        await self.collection.create_index([("slice", ASCENDING), ("until", ASCENDING)])
        await self.slices.create_index([("day", ASCENDING)])
        await self.migrate_nicknames()

    async def migrate_nicknames(self, batch: int = 500) -> int:
        """Tell `nickname_prefixes` every nickname tracked before it existed (or whose telling was
        cut short); returns how many. One pass over the collection on the first start (a marker
        remembers it), after which the table is complete (NicknamePrefixes.complete)."""
        if await self.migrations.find_one({"_id": NICKNAME_MIGRATION}) is not None:
            self.prefixes.complete = True
            return 0
        keys: list[str] = []
        cursor = self.collection.find(
            {"nickname": {"$exists": True}}, {"nickname": 1, "nick_indexed": 1}, batch_size=batch
        )
        async for doc in cursor:
            if doc.get("nickname") != doc.get("nick_indexed"):
                keys.append(doc["_id"])
        for start in range(0, len(keys), batch):
            await self.sync_nicknames(keys[start : start + batch])
        await self.migrations.update_one({"_id": NICKNAME_MIGRATION}, {"$set": {"accounts": len(keys)}}, upsert=True)
        self.prefixes.complete = True
        return len(keys)

    # --- who is tracked ---------------------------------------------------------------
    @staticmethod
    def _track_ops(
        region: str, account_id: int, nickname: str | None, until: float, now: float, extra: Mapping | None = None
    ) -> list[UpdateOne]:
        key = tracked_id(region, account_id)
        fields: dict[str, Any] = dict(extra or {})
        if nickname:
            fields.update(nickname=nickname, nickname_lower=nickname.lower())
        insert = {
            "region": region,
            "account_id": int(account_id),
            "slice": slice_of(region, account_id),
            "since": now,
        }
        if "last_visit_day" not in fields:
            insert["last_visit_day"] = ""
        # Looked up or a clan member: no longer only the panel's (its figures count in the tracked population).
        update: dict[str, Any] = {"$setOnInsert": insert, "$max": {"until": until}, "$unset": {"panel_only": ""}}
        if fields:
            update["$set"] = fields
        # A parked account (tracking had ended) is due again from today's pass on.
        return [
            UpdateOne({"_id": key, "last_visit_day": PARKED}, {"$set": {"last_visit_day": ""}}),
            UpdateOne({"_id": key}, update, upsert=True),
        ]

    async def track(
        self, region: str, account_id: int, nickname: str | None, until: float, now: float, extra: Mapping | None = None
    ) -> None:
        """Track an account until at least `until` (an existing account keeps a later end); `extra`
        fields are set too (a live fetch stores its per-tank state and counts as today's visit)."""
        result = await self.collection.bulk_write(self._track_ops(region, account_id, nickname, until, now, extra))
        if result.upserted_count:
            await self.freshness.raise_to(self.status_name, now)
        if nickname:
            await self.sync_nicknames([tracked_id(region, account_id)])

    async def track_many(
        self, region: str, accounts: Iterable[tuple[int, str | None]], until: float, now: float
    ) -> int:
        """`track` for many (account_id, nickname) of one region, in one round trip per 100 accounts."""
        accounts = list(accounts)
        ops = [op for a, n in accounts for op in self._track_ops(region, a, n, until, now)]
        inserted = 0
        for start in range(0, len(ops), 200):
            inserted += (await self.collection.bulk_write(ops[start : start + 200], ordered=True)).upserted_count
        if inserted:
            await self.freshness.raise_to(self.status_name, now)
        await self.sync_nicknames([tracked_id(region, a) for a, n in accounts if n])
        return len(ops) // 2

    async def track_panel(
        self,
        region: str,
        account_ids: Iterable[int],
        until: float,
        now: float,
        last_battle: Mapping[int, float] | None = None,
    ) -> int:
        """Track the panel's accounts until at least `until` (server/services/panel.py): an account
        tracked only for the panel is marked `panel_only` (its figures stay out of the tracked
        population's; `last_battle` gives a new one its probe's last_battle_time until its first
        visit); one round trip per 100 accounts. Returns how many were inserted."""
        account_ids = list(account_ids)
        keys = [tracked_id(region, account_id) for account_id in account_ids]
        docs = []
        for account_id, key in zip(account_ids, keys):
            doc = {
                "_id": key,
                "region": region,
                "account_id": int(account_id),
                "slice": slice_of(region, account_id),
                "since": now,
                "last_visit_day": "",
                "panel_only": True,
                "until": until,
            }
            if last_battle and account_id in last_battle:
                doc["last_battle_time"] = int(last_battle[account_id])
            docs.append(doc)
        # New members are inserted (most of a first draw); the tracked ones, and any another
        # process inserted meanwhile, are unparked and extended by two updates per IN_CHUNK ids
        # (harmless on the ones just inserted): the same documents as an upsert per member.
        inserted = 0
        for start in range(0, len(docs), IN_CHUNK):
            inserted += (await insert_new(self.collection, docs[start : start + IN_CHUNK]))[0]
        for start in range(0, len(keys), IN_CHUNK):
            chunk = keys[start : start + IN_CHUNK]
            await self.collection.update_many(
                {"_id": {"$in": chunk}, "last_visit_day": PARKED}, {"$set": {"last_visit_day": ""}}
            )
            await self.collection.update_many({"_id": {"$in": chunk}}, {"$max": {"until": until}})
        if inserted:
            await self.freshness.raise_to(self.status_name, now)
        return inserted

    async def panel_books(self, keys: list[str]) -> dict[str, dict]:
        """What the panel's refresh reads of its accounts by _id: `last_battle_time` (as of the
        newest visit that found battles; absent before the first) and `panel_only` (point reads by
        _id, IN_CHUNK at a time)."""
        out: dict[str, dict] = {}
        for start in range(0, len(keys), IN_CHUNK):
            cursor = self.collection.find(
                {"_id": {"$in": keys[start : start + IN_CHUNK]}}, {"last_battle_time": 1, "panel_only": 1}
            )
            for doc in await cursor.to_list(None):
                out[doc["_id"]] = doc
        return out

    async def extend(self, region: str, account_id: int, until: float) -> None:
        """A tracked account was looked up again: track it at least until `until` (no insert). A
        parked account (tracking had ended) is due again from today's pass on, as in `track`."""
        key = tracked_id(region, account_id)
        await self.collection.bulk_write(
            [
                UpdateOne({"_id": key, "last_visit_day": PARKED}, {"$set": {"last_visit_day": ""}}),
                UpdateOne({"_id": key}, {"$max": {"until": until}}),
            ],
            ordered=True,
        )

    async def get(self, region: str, account_id: int) -> dict | None:
        return await self.collection.find_one({"_id": tracked_id(region, account_id)}, {"state": 0})

    async def mastery_payload(self, region: str, account_id: int) -> bytes:
        """Each tank's mastery badge and best battle's XP as of the newest per-tank state, packed
        (server/domain/records.py mastery_rows decodes it); b"" when none is kept."""
        doc = await self.collection.find_one({"_id": tracked_id(region, account_id)}, {"mastery": 1})
        return bytes((doc or {}).get("mastery") or b"")

    async def last_measured_day(self, region: str, account_id: int) -> str | None:
        """The last UTC day the pass visited the account; None when never visited or parked."""
        doc = await self.collection.find_one({"_id": tracked_id(region, account_id)}, {"last_visit_day": 1})
        visited = (doc or {}).get("last_visit_day") or ""
        return visited if visited[:1].isdigit() else None  # "" never visited, PARKED after tracking

    async def search_prefix(self, region: str | None, prefix: str, limit: int = 10) -> list[dict]:
        """Tracked accounts whose nickname starts with `prefix` (case-insensitive), by nickname;
        region None searches every region (one read each).

        A prefix of 3 to 8 characters is one point read of `nickname_prefixes` (store/nicknames.py),
        which keeps the first 10 per (region, prefix), and one read of those accounts by _id to
        check their names; a stale or wrong one is rebuilt from the nickname index. Other prefixes read the index: an equality on region plus the range
        [prefix, prefix + U+10FFFF) of (region, nickname_lower), never the collection (an anchored
        $regex is a collection scan on the embedded database). That server reads the whole range
        whatever the limit, so such a read costs the prefix's matches: the search is gated and its
        answers cached (server/services/search.py)."""
        low = prefix.lower()
        limit = max(1, int(limit))
        rows: list[dict] = []
        for one in [region] if region is not None else list(REGIONS):
            if kept(low, limit):
                found = await self.prefixes.first(one, low, limit, self._nickname_range)
                if not await self._still_named(one, found):
                    await self.prefixes.invalidate(one, low)
                    found = await self.prefixes.first(one, low, limit, self._nickname_range)
            else:
                found = await self._nickname_range(one, low)
            rows.extend({"region": one, **row} for row in found)
        rows.sort(key=lambda row: (row["n"], row["region"], row["a"]))
        return [{"account_id": row["a"], "nickname": row["d"], "region": row["region"]} for row in rows[:limit]]

    async def _still_named(self, region: str, rows: list[dict]) -> bool:
        """Whether every kept entry still names its account as it is now (one read of at most 10
        ids). A wrong one (a rename the table was not told of: an account tracked before the table
        existed, or two renames at once) makes the caller rebuild the prefix."""
        if not rows:
            return True
        cursor = self.collection.find(
            {"_id": {"$in": [tracked_id(region, row["a"]) for row in rows]}}, {"account_id": 1, "nickname": 1}
        )
        names = {doc["account_id"]: doc.get("nickname") for doc in await cursor.to_list(None)}
        return all(names.get(row["a"]) == row["d"] for row in rows)

    async def _nickname_range(self, region: str, low: str) -> list[dict]:
        """Every tracked account of `region` whose lowercase nickname starts with `low`, as
        store.nicknames entries sorted by (nickname, account)."""
        cursor = self.collection.find(
            {"region": region, "nickname_lower": {"$gte": low, "$lt": low + NICKNAME_END}},
            {"_id": 0, "account_id": 1, "nickname": 1},
        )
        rows = [entry(doc["account_id"], doc["nickname"]) for doc in await cursor.to_list(None) if doc.get("nickname")]
        rows.sort(key=lambda row: (row["n"], row["a"]))
        return rows

    async def sync_nicknames(self, keys: list[str]) -> None:
        """Tell `nickname_prefixes` the nicknames of these tracked accounts that changed since it
        was last told (nick_indexed), then mark them told. Safe to repeat and to interrupt: an
        account is marked only after its writes, and only if its nickname did not change meanwhile."""
        for start in range(0, len(keys), IN_CHUNK):
            with job_deadline():  # each read and write a job step of its own (a caller's deadline still holds)
                cursor = self.collection.find(
                    {"_id": {"$in": keys[start : start + IN_CHUNK]}},
                    {"region": 1, "account_id": 1, "nickname": 1, "nick_indexed": 1},
                )
                found = await cursor.to_list(None)
            changed = [doc for doc in found if doc.get("nickname") != doc.get("nick_indexed")]
            if not changed:
                continue
            ops = [
                op
                for doc in changed
                for op in sync_ops(
                    doc["region"],
                    doc["account_id"],
                    doc.get("nick_indexed"),
                    doc.get("nickname"),
                    self.prefixes.complete,
                )
            ]
            await self.prefixes.apply(ops)
            with job_deadline():
                await self.collection.bulk_write(
                    [
                        UpdateOne(
                            {"_id": doc["_id"], "nickname": doc.get("nickname")},
                            {"$set": {"nick_indexed": doc.get("nickname")}},
                        )
                        for doc in changed
                    ],
                    ordered=False,
                )

    async def count_active(self, now: float) -> int:
        """Accounts tracked at `now`: one small indexed count per slice ((slice, until) index), so
        the figure (read every few minutes for /status) never holds the database for one long scan."""
        total = 0
        for slice_no in range(SLICES):
            total += await self.collection.count_documents({"slice": slice_no, "until": {"$gte": now}})
        return total

    async def newest_timestamp(self) -> float | None:
        """When the newest tracked account started being tracked (a maintained figure)."""
        return await self.freshness.newest(self.status_name)

    # --- the pass -----------------------------------------------------------------------
    async def due(self, slices: int | list[int], day: str, limit: int) -> list[dict]:
        """Accounts of the slice(s) not visited on `day` (nor parked), without their state. The
        caller parks those whose `until` has passed (their tracking ended)."""
        # One equality-plus-range query per slice on the (slice, last_visit_day) index: an $in over
        # slices makes the embedded database scan the collection.
        found: list[dict] = []
        for slice_no in slices if isinstance(slices, list) else [slices]:
            cursor = self.collection.find({"slice": slice_no, "last_visit_day": {"$lt": day}}, VISIT_FIELDS)
            found.extend(await cursor.to_list(None))
        found.sort(key=lambda doc: (doc.get("last_visit_day") or "", doc["_id"]))
        return found[:limit]

    async def states(self, keys: list[str]) -> dict[str, bytes]:
        """The packed per-tank state of tracked accounts by _id (absent: none stored yet)."""
        out: dict[str, bytes] = {}
        for start in range(0, len(keys), IN_CHUNK):
            cursor = self.collection.find(
                {"_id": {"$in": keys[start : start + IN_CHUNK]}, "state": {"$exists": True}}, {"state": 1}
            )
            for doc in await cursor.to_list(None):
                out[doc["_id"]] = bytes(doc["state"])
        return out

    async def books(self, keys: list[str]) -> dict[str, dict]:
        """The tracked documents by _id as they are now (VISIT_FIELDS and the packed `state` as
        bytes, when stored): what a visit must diff against, read after its upstream answers
        arrive, when a live lookup may have written the account since the pass read it (due)."""
        out: dict[str, dict] = {}
        for start in range(0, len(keys), IN_CHUNK):
            cursor = self.collection.find(
                {"_id": {"$in": keys[start : start + IN_CHUNK]}}, {**VISIT_FIELDS, "state": 1}
            )
            for doc in await cursor.to_list(None):
                if "state" in doc:
                    doc["state"] = bytes(doc["state"])
                out[doc["_id"]] = doc
        return out

    async def measured(self, keys: list[str]) -> dict[str, dict]:
        """The newest measurement of tracked accounts by _id: `last_battle_time`, the packed `state`
        and `mastery` (bytes) it was taken with; only accounts with a stored state (point reads by
        _id, IN_CHUNK at a time), with the account's `assist` as of it."""
        out: dict[str, dict] = {}
        fields = {"last_battle_time": 1, "state": 1, "mastery": 1, "assist": 1}
        for start in range(0, len(keys), IN_CHUNK):
            cursor = self.collection.find(
                {"_id": {"$in": keys[start : start + IN_CHUNK]}, "state": {"$exists": True}}, fields
            )
            for doc in await cursor.to_list(None):
                out[doc["_id"]] = {
                    "last_battle_time": doc.get("last_battle_time"),
                    "state": bytes(doc["state"]),
                    "mastery": bytes(doc.get("mastery") or b""),
                    "assist": doc.get("assist"),
                }
        return out

    async def ranking_books(self, keys: list[str]) -> dict[str, dict]:
        """What the leaderboards show of tracked accounts by _id: account_id, nickname, clan_id,
        the packed `state` (bytes), the career `assist` and the `wtr` of the newest visit (point
        reads by _id, IN_CHUNK at a time)."""
        out: dict[str, dict] = {}
        fields = {"account_id": 1, "nickname": 1, "clan_id": 1, "state": 1, "assist": 1, "wtr": 1}
        for start in range(0, len(keys), IN_CHUNK):
            cursor = self.collection.find({"_id": {"$in": keys[start : start + IN_CHUNK]}}, fields)
            for doc in await cursor.to_list(None):
                if "state" in doc:
                    doc["state"] = bytes(doc["state"])
                out[doc["_id"]] = doc
        return out

    async def mark_visited(self, updates: Mapping[str, dict], sync_nicknames: bool = True) -> None:
        """Record a batch's visits ({_id: fields to set}); a `state` is stored as BSON binary. With
        `sync_nicknames` False the caller tells the search's table of nicknames itself (sync_nicknames)."""
        ops = []
        for key, fields in updates.items():
            fields = dict(fields)
            if "state" in fields:
                fields["state"] = Binary(fields["state"])
            ops.append(UpdateOne({"_id": key}, {"$set": fields}))
        if ops:
            await self.collection.bulk_write(ops, ordered=False)
            if sync_nicknames:
                await self.sync_nicknames([key for key, fields in updates.items() if "nickname" in fields])

    async def mark_days(self, keys: list[str], day: str) -> None:
        """Accounts visited on `day` that had nothing new: only their visit mark is written."""
        for start in range(0, len(keys), IN_CHUNK):
            await self.collection.update_many(
                {"_id": {"$in": keys[start : start + IN_CHUNK]}}, {"$set": {"last_visit_day": day}}
            )

    async def park(self, keys: list[str], now: float) -> None:
        """Tracking ended (or the upstream no longer knows the account): the pass skips it from now on."""
        for start in range(0, len(keys), IN_CHUNK):
            await self.collection.update_many(
                {"_id": {"$in": keys[start : start + IN_CHUNK]}},
                {"$set": {"last_visit_day": PARKED}, "$min": {"until": now}},
            )

    # --- (day, slice) claims ------------------------------------------------------------
    async def claim(self, day: str, slice_no: int, owner: str, now: float, ttl: float, due: float) -> bool:
        """Take or renew the claim of (day, slice) if it is unfinished and free, expired or ours."""
        return await self.claim_many(day, {slice_no: due}, owner, now, ttl) == [slice_no]

    async def claim_many(self, day: str, due: Mapping[int, float], owner: str, now: float, ttl: float) -> list[int]:
        """Take or renew the claims of the slices of `day` in `due` ({slice: when it is due}) that are
        unfinished and free, expired or ours; returns those taken, in `due`'s order.

        One read of them by _id, one insert of those never claimed (a slice another process
        inserted first is a duplicate key: not ours), then a compare-and-set on (_id, owner,
        expires) as read for each existing one: a query with $or (ours or expired) is a collection
        scan on the embedded database. Two processes taking the same expired claim: the first set
        changes `expires`, so the second matches nothing."""
        keys = {f"{day}:{slice_no:03d}": slice_no for slice_no in due}
        cursor = self.slices.find({"_id": {"$in": list(keys)}}, {"owner": 1, "expires": 1, "finished": 1})
        found = {doc["_id"]: doc for doc in await cursor.to_list(None)}
        taken: set[int] = set()
        fresh = [key for key in keys if key not in found]
        if fresh:
            docs = [
                {
                    "_id": key,
                    "day": day,
                    "slice": keys[key],
                    "due": due[keys[key]],
                    "started": now,
                    "owner": owner,
                    "expires": now + ttl,
                    "finished": None,
                }
                for key in fresh
            ]
            _, refused = await insert_new(self.slices, docs)  # refused: another process created it first
            taken.update(keys[key] for i, key in enumerate(fresh) if i not in refused)
        for key, doc in found.items():
            if doc.get("finished") is not None:
                continue
            if doc.get("owner") != owner and float(doc.get("expires") or 0) >= now:
                continue  # held by another live owner
            result = await self.slices.update_one(
                {"_id": key, "owner": doc.get("owner"), "expires": doc.get("expires"), "finished": None},
                {"$set": {"owner": owner, "expires": now + ttl}},
            )
            if result.matched_count == 1:
                taken.add(keys[key])
        return [slice_no for slice_no in due if slice_no in taken]

    async def add_spend(self, day: str, slice_no: int, counts: Mapping[str, int]) -> None:
        """Add a batch's figures (visited, info_requests, tanks_requests, records, record_bytes)."""
        await self.slices.update_one({"_id": f"{day}:{slice_no:03d}"}, {"$inc": dict(counts)})

    async def finish(self, day: str, slice_no: int, owner: str, now: float) -> bool:
        return await self.finish_many(day, [slice_no], owner, now) == 1

    async def finish_many(self, day: str, slice_nos: Sequence[int], owner: str, now: float) -> int:
        """Mark finished the slices of `day` still claimed by `owner`; returns how many were (one
        update of the claims by _id)."""
        result = await self.slices.update_many(
            {"_id": {"$in": [f"{day}:{s:03d}" for s in slice_nos]}, "owner": owner, "finished": None},
            {"$set": {"finished": now}},
        )
        return result.matched_count

    async def release(self, day: str, slice_no: int, owner: str) -> None:
        """Give an unfinished claim back (it may be taken at once)."""
        await self.release_many(day, [slice_no], owner)

    async def release_many(self, day: str, slice_nos: Sequence[int], owner: str) -> None:
        await self.slices.update_many(
            {"_id": {"$in": [f"{day}:{s:03d}" for s in slice_nos]}, "owner": owner, "finished": None},
            {"$set": {"expires": 0.0}},
        )

    async def finished_slices(self, day: str) -> set[int]:
        cursor = self.slices.find({"day": day, "finished": {"$ne": None}}, {"slice": 1})
        return {doc["slice"] for doc in await cursor.to_list(None)}

    async def day_slices(self, day: str) -> list[dict]:
        return await self.slices.find({"day": day}).to_list(None)

    async def forget_slices_before(self, day: str) -> int:
        result = await self.slices.delete_many({"day": {"$lt": day}})
        return result.deleted_count
