"""Minute samples of player counts per game, region and server, with latest values, peaks and daily aggregates."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterable
from typing import Any, ClassVar

from pymongo import ASCENDING, DESCENDING, UpdateOne
from pymongo.errors import (
    BulkWriteError,
    CollectionInvalid,
    DuplicateKeyError,
    OperationFailure,
)

from store.constants import REGIONS
from store.kinds import Declared, cache, irreplaceable, transient
from store.retention import Expiring, ensure_expiry_index, utc

log = logging.getLogger("statsapi.store.online")

DAY = dt.timedelta(days=1)
SAMPLE_TTL_SECONDS = 410 * 86400  # history answers up to 400 days
DAILY_TTL_SECONDS = 410 * 86400
CLAIM_TTL_SECONDS = 2 * 86400  # a minute is only ever sampled around its own time
DAY_PEAK_TTL_SECONDS = 8 * 86400  # only today's peak is read; a week is kept for inspection
DUPLICATE_KEY = 11000
DAILY_FIELDS = ("date", "samples", "peak", "peak_minute", "min", "avg")


def day_start(date: dt.date) -> dt.datetime:
    return dt.datetime(date.year, date.month, date.day, tzinfo=dt.UTC)


class OnlineSamples:
    """Collections: online_samples (time series), online_minutes (per-minute claims),
    online_status (latest counts and last failure per game/region), online_peaks (running
    maxima), online_daily (daily aggregates of finished days)."""

    status_name = "newest_online_sample"

    # `db`: a motor database, typed Any: motor's stubs reject the **options of create_collection and
    # the MutableMapping of options() as this module passes and returns them.
    COLLECTIONS: ClassVar[dict[str, Declared]] = {
        "online_samples": irreplaceable("players online per server, one sample a minute (kept 410 days)", "day:minute"),
        "online_minutes": transient("which process samples each minute"),
        "online_status": cache("the newest count and last failure per game and region; sampled again within a minute"),
        "online_peaks": irreplaceable("each day's peak per game and region"),
        "online_daily": cache(
            "daily aggregates of finished days; rebuilt from `online_samples` by the online_daily job"
        ),
    }

    def __init__(self, db: Any, ttl_indexes: bool = True) -> None:
        self.db = db
        self.ttl_indexes = ttl_indexes
        self.samples = db["online_samples"]
        self.claims = db["online_minutes"]
        self.status = db["online_status"]
        self.peak_docs = db["online_peaks"]
        self.daily_docs = db["online_daily"]
        self.timeseries: bool | None = None  # known after ensure_schema

    # --- schema ------------------------------------------------------------------------
    async def ensure_schema(self) -> None:
        self.timeseries = await self._ensure_samples_collection()
        # The same shape either way: {minute, meta: {game, region, server}, players}.
        await self.samples.create_index([("meta.game", ASCENDING), ("meta.region", ASCENDING), ("minute", ASCENDING)])
        if not self.timeseries:
            await ensure_expiry_index(self.samples, "minute", SAMPLE_TTL_SECONDS, self.ttl_indexes)
            await self.samples.create_index(
                [
                    ("meta.game", ASCENDING),
                    ("meta.region", ASCENDING),
                    ("meta.server", ASCENDING),
                    ("minute", ASCENDING),
                ],
                unique=True,
            )
        elif not self.ttl_indexes:
            await self.samples.create_index("minute")  # the retention job's range deletes
        await ensure_expiry_index(self.claims, "minute", CLAIM_TTL_SECONDS, self.ttl_indexes)
        # Three small documents a day: a TTL scan of it costs nothing.
        await self.peak_docs.create_index("day", expireAfterSeconds=DAY_PEAK_TTL_SECONDS)
        await ensure_expiry_index(self.daily_docs, "day", DAILY_TTL_SECONDS, self.ttl_indexes)
        await self.daily_docs.create_index([("game", ASCENDING), ("region", ASCENDING), ("date", ASCENDING)])

    def expiring(self) -> list[Expiring]:
        return [
            Expiring("online_samples", self.samples, "minute", SAMPLE_TTL_SECONDS, timeseries=bool(self.timeseries)),
            Expiring("online_minutes", self.claims, "minute", CLAIM_TTL_SECONDS),
            Expiring("online_daily", self.daily_docs, "day", DAILY_TTL_SECONDS),
        ]

    async def _ensure_samples_collection(self) -> bool:
        """A time-series collection where the server can make one, else a plain one (TTL + unique)."""
        existing = await self._samples_options()
        if existing is None:
            expiry = {"expireAfterSeconds": SAMPLE_TTL_SECONDS} if self.ttl_indexes else {}
            try:
                await self.db.create_collection(
                    self.samples.name,
                    timeseries={"timeField": "minute", "metaField": "meta", "granularity": "minutes"},
                    **expiry,
                )
            except CollectionInvalid:
                pass  # another process created it first
            except (OperationFailure, TypeError, NotImplementedError) as exc:
                log.warning("time-series collection not supported (%s); using a plain collection", type(exc).__name__)
                return False
            existing = await self._samples_options()
        return bool(existing and existing.get("timeseries"))

    async def _samples_options(self) -> dict | None:
        if self.samples.name not in await self.db.list_collection_names(filter={"name": self.samples.name}):
            return None
        return await self.samples.options()

    # --- writes (the sampler) ----------------------------------------------------------
    async def record_minute(
        self, game: str, region: str, minute_ts: int, servers: list[dict], sampled_at: float
    ) -> bool:
        """Store one minute of [{server, players}] for game/region; False when that minute is already stored.

        The claim document makes this idempotent on any server (a time-series collection
        cannot carry a unique index on real mongod).
        """
        [stored] = await self.record_minutes(game, region, [(minute_ts, servers, sampled_at)])
        return stored

    async def record_minutes(self, game: str, region: str, minutes: list[tuple[int, list[dict], float]]) -> list[bool]:
        """Many minutes of one game/region at once, each (minute_ts, servers, sampled_at): the same
        data as `record_minute` called for each in turn, in four statements instead of four per
        minute (the demo's seeding writes a month of past samples). Per minute, False when it
        was already stored."""
        if not minutes:
            return []
        claims = [{"_id": f"{game}:{region}:{ts}", "minute": utc(ts)} for ts, _, _ in minutes]
        taken: set[int] = set()
        try:
            await self.claims.insert_many(claims, ordered=False)
        except BulkWriteError as exc:
            errors = exc.details.get("writeErrors", [])
            if any(err.get("code") != DUPLICATE_KEY for err in errors):
                raise
            taken = {err["index"] for err in errors}
        # A minute given twice in one call is claimed once: its later copies are duplicates too.
        fresh = [i for i in range(len(minutes)) if i not in taken]
        new = [minutes[i] for i in fresh]
        if new:
            docs = [
                {
                    "minute": utc(ts),
                    "meta": {"game": game, "region": region, "server": row["server"]},
                    "players": int(row["players"]),
                }
                for ts, servers, _ in new
                for row in servers
            ]
            if docs:
                try:
                    await self.samples.insert_many(docs, ordered=False)
                except BulkWriteError as exc:
                    if any(err.get("code") != DUPLICATE_KEY for err in exc.details.get("writeErrors", [])):
                        raise
            # Only the newest minute survives in the latest values, and only the earliest in
            # first_minute, as when each is written in turn.
            newest = max(new, key=lambda m: m[0])
            await self._set_latest(game, region, utc(newest[0]), newest[1], newest[2])
            await self._note_first(game, region, utc(min(ts for ts, _, _ in new)))
        stored = set(fresh)
        return [i in stored for i in range(len(minutes))]

    async def _set_latest(
        self, game: str, region: str, minute: dt.datetime, servers: list[dict], sampled_at: float
    ) -> None:
        total = sum(int(row["players"]) for row in servers)
        fields = {
            "game": game,
            "region": region,
            "minute": minute,
            "players": total,
            "servers": [{"server": row["server"], "players": int(row["players"])} for row in servers],
            "last_success": sampled_at,
        }
        try:
            # Only a newer minute replaces the latest one (a late sampler must not go back in time).
            await self.status.update_one(
                {"_id": f"{game}:{region}", "$or": [{"minute": {"$lt": minute}}, {"minute": None}]},
                {"$set": fields},
                upsert=True,
            )
        except DuplicateKeyError:
            pass  # a newer minute is already there

    async def record_failure(self, game: str, region: str, failed_at: float, error: str) -> None:
        await self.status.update_one(
            {"_id": f"{game}:{region}"},
            {"$set": {"game": game, "region": region, "last_failure": failed_at, "last_error": error[:200]}},
            upsert=True,
        )

    async def raise_peaks(self, game: str, minute_ts: int, counts: dict[str, int]) -> None:
        """Running maxima for one sampled minute; counts maps "total" and/or regions to players.

        `$max` on {players, minute} compares players first, then the minute, so a tie keeps
        the latest minute (the daily aggregation breaks ties the same way).
        """
        if counts:
            await self.raise_peaks_many(game, [(minute_ts, counts)])

    async def raise_peaks_many(self, game: str, samples: list[tuple[int, dict[str, int]]]) -> None:
        """`raise_peaks` for many sampled minutes (minute_ts, counts) in one statement: each key's
        maximum by (players, minute), as the `$max`es in turn would leave it."""
        best: dict[str, dict[str, dict]] = {}  # day or "all_time" -> key -> {players, minute}
        for minute_ts, counts in samples:
            minute = utc(minute_ts)
            for scope in ("all_time", minute.date().isoformat()):
                for key, players in counts.items():
                    entry = {"players": int(players), "minute": minute}
                    held = best.setdefault(scope, {}).get(key)
                    if held is None or (entry["players"], entry["minute"]) > (held["players"], held["minute"]):
                        best[scope][key] = entry
        updates = []
        for scope, peaks in best.items():
            if scope == "all_time":
                updates.append(
                    UpdateOne({"_id": f"{game}:all_time"}, {"$max": peaks, "$setOnInsert": {"game": game}}, upsert=True)
                )
            else:
                date = dt.date.fromisoformat(scope)
                updates.append(
                    UpdateOne(
                        {"_id": f"{game}:{scope}"},
                        {"$max": peaks, "$setOnInsert": {"game": game, "date": scope, "day": day_start(date)}},
                        upsert=True,
                    )
                )
        if updates:
            await self.peak_docs.bulk_write(updates, ordered=False)

    # --- reads -------------------------------------------------------------------------
    async def latest(self) -> list[dict]:
        """One document per game/region: newest minute, players, servers, last success/failure."""
        return await self.status.find({}).to_list(None)

    async def peaks(self, games: Iterable[str], date: dt.date) -> dict[str, dict]:
        """{game: {"all_time": doc|None, "today": doc|None}}; docs map "total"/region to {players, minute}."""
        keys = {f"{g}:all_time": (g, "all_time") for g in games}
        keys.update({f"{g}:{date.isoformat()}": (g, "today") for g in games})
        result = {g: {"all_time": None, "today": None} for g in games}
        async for doc in self.peak_docs.find({"_id": {"$in": list(keys)}}):
            game, scope = keys[doc["_id"]]
            result[game][scope] = doc
        return result

    async def newest_timestamp(self) -> float | None:
        doc = await self.status.find_one({"minute": {"$ne": None}}, {"minute": 1}, sort=[("minute", DESCENDING)])
        return doc["minute"].timestamp() if doc else None

    # --- daily aggregates ---------------------------------------------------------------
    async def daily_range(self, game: str, region: str, first: dt.date, last: dt.date) -> dict[str, dict]:
        """Materialised days {date: {samples, peak, peak_minute, min, avg}} between first and last.

        One equality-plus-range read of the (game, region, date) index: O(days), whatever is
        stored (an _id range is a collection scan on the embedded database).
        Gap days are there too, with samples 0.
        """
        cursor = self.daily_docs.find(
            {"game": game, "region": region, "date": {"$gte": first.isoformat(), "$lte": last.isoformat()}},
            {f: 1 for f in DAILY_FIELDS},
        )
        return {doc["date"]: {f: doc.get(f) for f in DAILY_FIELDS} async for doc in cursor}

    async def first_sample_day(self, game: str, region: str, scan: bool = False) -> dt.date | None:
        """The earliest day with a sample of game/region (of any region for "all"): days before it
        are gaps for certain. dt.date.max when there are no samples at all; None when unknown.

        The sampler keeps `first_minute` ($min) in each online_status document, so this is a read
        of at most three small documents. Samples stored before that field existed (or inserted
        directly) leave it unknown; `scan=True` (the background job only: on SecantusDB it scans
        the time-series collection) finds it and records it.
        """
        regions = REGIONS if region == "all" else (region,)
        docs = {
            doc["_id"]: doc
            async for doc in self.status.find({"_id": {"$in": [f"{game}:{r}" for r in regions]}}, {"first_minute": 1})
        }
        firsts = []
        for r in regions:
            first = (docs.get(f"{game}:{r}") or {}).get("first_minute")
            if first is None:
                if not scan:
                    return None
                doc = await self.samples.find_one(
                    {"meta.game": game, "meta.region": r}, {"minute": 1, "_id": 0}, sort=[("minute", ASCENDING)]
                )
                if doc is None:
                    continue
                first = doc["minute"]
                await self._note_first(game, r, first)
            firsts.append(first.date())
        return min(firsts) if firsts else dt.date.max

    async def _note_first(self, game: str, region: str, minute: dt.datetime) -> None:
        try:
            await self.status.update_one(
                {"_id": f"{game}:{region}"},
                {"$min": {"first_minute": minute}, "$setOnInsert": {"game": game, "region": region}},
                upsert=True,
            )
        except DuplicateKeyError:
            await self.status.update_one({"_id": f"{game}:{region}"}, {"$min": {"first_minute": minute}})

    async def aggregate_day(self, game: str, region: str, date: dt.date) -> dict:
        """One day's {date, samples, peak, peak_minute, min, avg} from its samples (samples 0: a gap).

        One indexed range read per region (an $in over regions makes SecantusDB scan the
        collection), summed here in batches so other queries run in between. region "all" sums
        the three regions per minute and keeps only minutes where all three were sampled (a
        partial sum would understate the total). A tie for the peak keeps the later minute.
        """
        regions = REGIONS if region == "all" else (region,)
        start = day_start(date)
        by_minute: dict[dt.datetime, dict[str, int]] = {}
        for r in regions:
            cursor = self.samples.find(
                {"meta.game": game, "meta.region": r, "minute": {"$gte": start, "$lt": start + DAY}},
                {"minute": 1, "players": 1, "_id": 0},
                batch_size=2000,
            )
            async for doc in cursor:
                counts = by_minute.setdefault(doc["minute"], {})
                counts[r] = counts.get(r, 0) + int(doc["players"])
        totals = sorted(
            (minute, sum(counts.values())) for minute, counts in by_minute.items() if len(counts) == len(regions)
        )
        if not totals:
            return {"date": date.isoformat(), "samples": 0, "peak": None, "peak_minute": None, "min": None, "avg": None}
        peak_minute, peak = max(totals, key=lambda item: (item[1], item[0]))
        values = [players for _, players in totals]
        return {
            "date": date.isoformat(),
            "samples": len(values),
            "peak": peak,
            "peak_minute": peak_minute,
            "min": min(values),
            "avg": sum(values) / len(values),
        }

    async def save_days(self, game: str, region: str, rows: list[dict]) -> None:
        """Materialise finished days (gaps included), so none is aggregated again."""
        if not rows:
            return
        await self.daily_docs.bulk_write(
            [
                UpdateOne(
                    {"_id": f"{game}:{region}:{row['date']}"},
                    {
                        "$set": {
                            **row,
                            "game": game,
                            "region": region,
                            "day": day_start(dt.date.fromisoformat(row["date"])),
                        }
                    },
                    upsert=True,
                )
                for row in rows
            ],
            ordered=False,
        )
