"""Minute samples of player counts per game, region and server, with latest values, peaks and daily aggregates."""
from __future__ import annotations

import datetime as dt
import logging

from pymongo import ASCENDING, DESCENDING, UpdateOne
from pymongo.errors import BulkWriteError, CollectionInvalid, DuplicateKeyError, OperationFailure

log = logging.getLogger("statsapi.store.online")

REGIONS = ("eu", "na", "asia")
DAY = dt.timedelta(days=1)
SAMPLE_TTL_SECONDS = 410 * 86400  # history answers up to 400 days
DAILY_TTL_SECONDS = 410 * 86400
CLAIM_TTL_SECONDS = 2 * 86400  # a minute is only ever sampled around its own time
DAY_PEAK_TTL_SECONDS = 8 * 86400  # only today's peak is read; a week is kept for inspection
DUPLICATE_KEY = 11000


def utc(ts: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc)


def day_start(date: dt.date) -> dt.datetime:
    return dt.datetime(date.year, date.month, date.day, tzinfo=dt.timezone.utc)


def _runs(dates: list[dt.date]) -> list[tuple[dt.datetime, dt.datetime]]:
    """Contiguous runs of sorted dates as [start, end) datetimes, so one query skips known days."""
    runs: list[list[dt.date]] = []
    for date in dates:
        if runs and date - runs[-1][1] == DAY:
            runs[-1][1] = date
        else:
            runs.append([date, date])
    return [(day_start(first), day_start(last) + DAY) for first, last in runs]


class OnlineSamples:
    """Collections: online_samples (time series), online_minutes (per-minute claims),
    online_status (latest counts and last failure per game/region), online_peaks (running
    maxima), online_daily (daily aggregates of finished days)."""

    status_name = "newest_online_sample"

    def __init__(self, db):
        self.db = db
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
        await self.samples.create_index(
            [("meta.game", ASCENDING), ("meta.region", ASCENDING), ("minute", ASCENDING)])
        if not self.timeseries:
            await self.samples.create_index("minute", expireAfterSeconds=SAMPLE_TTL_SECONDS)
            await self.samples.create_index(
                [("meta.game", ASCENDING), ("meta.region", ASCENDING), ("meta.server", ASCENDING),
                 ("minute", ASCENDING)], unique=True)
        await self.claims.create_index("minute", expireAfterSeconds=CLAIM_TTL_SECONDS)
        await self.peak_docs.create_index("day", expireAfterSeconds=DAY_PEAK_TTL_SECONDS)
        await self.daily_docs.create_index("day", expireAfterSeconds=DAILY_TTL_SECONDS)

    async def _ensure_samples_collection(self) -> bool:
        """A time-series collection where the server can make one, else a plain one (TTL + unique)."""
        existing = await self._samples_options()
        if existing is None:
            try:
                await self.db.create_collection(
                    self.samples.name,
                    timeseries={"timeField": "minute", "metaField": "meta", "granularity": "minutes"},
                    expireAfterSeconds=SAMPLE_TTL_SECONDS,
                )
            except CollectionInvalid:
                pass  # another process created it first
            except (OperationFailure, TypeError, NotImplementedError) as exc:
                log.warning("time-series collection not supported (%s); using a plain collection",
                            type(exc).__name__)
                return False
            existing = await self._samples_options()
        return bool(existing and existing.get("timeseries"))

    async def _samples_options(self) -> dict | None:
        if self.samples.name not in await self.db.list_collection_names(filter={"name": self.samples.name}):
            return None
        return await self.samples.options()

    # --- writes (the sampler) ----------------------------------------------------------
    async def record_minute(self, game: str, region: str, minute_ts: int, servers: list[dict],
                            sampled_at: float) -> bool:
        """Store one minute of [{server, players}] for game/region; False when that minute is already stored.

        The claim document makes this idempotent on any server (a time-series collection
        cannot carry a unique index on real mongod).
        """
        minute = utc(minute_ts)
        try:
            await self.claims.insert_one({"_id": f"{game}:{region}:{minute_ts}", "minute": minute})
        except DuplicateKeyError:
            return False
        docs = [{"minute": minute, "meta": {"game": game, "region": region, "server": row["server"]},
                 "players": int(row["players"])} for row in servers]
        try:
            await self.samples.insert_many(docs, ordered=False)
        except BulkWriteError as exc:
            if any(err.get("code") != DUPLICATE_KEY for err in exc.details.get("writeErrors", [])):
                raise
        await self._set_latest(game, region, minute, servers, sampled_at)
        return True

    async def _set_latest(self, game: str, region: str, minute: dt.datetime, servers: list[dict],
                          sampled_at: float) -> None:
        total = sum(int(row["players"]) for row in servers)
        fields = {"game": game, "region": region, "minute": minute, "players": total,
                  "servers": [{"server": row["server"], "players": int(row["players"])} for row in servers],
                  "last_success": sampled_at}
        try:
            # Only a newer minute replaces the latest one (a late sampler must not go back in time).
            await self.status.update_one(
                {"_id": f"{game}:{region}", "$or": [{"minute": {"$lt": minute}}, {"minute": None}]},
                {"$set": fields}, upsert=True)
        except DuplicateKeyError:
            pass  # a newer minute is already there

    async def record_failure(self, game: str, region: str, failed_at: float, error: str) -> None:
        await self.status.update_one(
            {"_id": f"{game}:{region}"},
            {"$set": {"game": game, "region": region, "last_failure": failed_at, "last_error": error[:200]}},
            upsert=True)

    async def raise_peaks(self, game: str, minute_ts: int, counts: dict[str, int]) -> None:
        """Running maxima for one sampled minute; counts maps "total" and/or regions to players.

        `$max` on {players, minute} compares players first, then the minute, so a tie keeps
        the latest minute (the daily aggregation breaks ties the same way).
        """
        if not counts:
            return
        minute = utc(minute_ts)
        date = minute.date()
        peaks = {key: {"players": int(players), "minute": minute} for key, players in counts.items()}
        await self.peak_docs.bulk_write([
            UpdateOne({"_id": f"{game}:all_time"}, {"$max": peaks, "$setOnInsert": {"game": game}}, upsert=True),
            UpdateOne({"_id": f"{game}:{date.isoformat()}"},
                      {"$max": peaks, "$setOnInsert": {"game": game, "date": date.isoformat(),
                                                      "day": day_start(date)}}, upsert=True),
        ], ordered=False)

    # --- reads -------------------------------------------------------------------------
    async def latest(self) -> list[dict]:
        """One document per game/region: newest minute, players, servers, last success/failure."""
        return await self.status.find({}).to_list(None)

    async def peaks(self, games, date: dt.date) -> dict[str, dict]:
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

    async def daily(self, game: str, region: str, first: dt.date, last: dt.date,
                    final_before: dt.datetime) -> dict[str, dict]:
        """Daily aggregates {date: {samples, peak, peak_minute, min, avg}} for days that have samples.

        region "all" sums the three regions per minute and keeps only minutes where all three
        were sampled (a partial sum would understate the total). Days that ended before
        `final_before` are materialised in online_daily and read from there next time.
        """
        dates = [first + DAY * i for i in range((last - first).days + 1)]
        known: dict[str, dict] = {}
        cursor = self.daily_docs.find(
            {"game": game, "region": region, "date": {"$gte": first.isoformat(), "$lte": last.isoformat()}})
        async for doc in cursor:
            known[doc["date"]] = doc
        missing = [d for d in dates if d.isoformat() not in known]
        computed = await self._aggregate_days(game, region, missing) if missing else {}
        finished = [row for date, row in computed.items()
                    if day_start(dt.date.fromisoformat(date)) + DAY <= final_before]
        if finished:
            await self.daily_docs.bulk_write([
                UpdateOne({"_id": f"{game}:{region}:{row['date']}"},
                          {"$set": {**row, "game": game, "region": region,
                                    "day": day_start(dt.date.fromisoformat(row["date"]))}},
                          upsert=True)
                for row in finished], ordered=False)
        fields = ("date", "samples", "peak", "peak_minute", "min", "avg")
        result = {date: {f: doc[f] for f in fields} for date, doc in known.items()}
        result.update(computed)
        return result

    async def _aggregate_days(self, game: str, region: str, dates: list[dt.date]) -> dict[str, dict]:
        regions = list(REGIONS) if region == "all" else [region]
        ranges = [{"minute": {"$gte": start, "$lt": end}} for start, end in _runs(dates)]
        match: dict = {"meta.game": game, "meta.region": regions[0] if len(regions) == 1 else {"$in": regions}}
        if len(ranges) == 1:
            match.update(ranges[0])
        else:
            match["$or"] = ranges
        pipeline: list[dict] = [
            {"$match": match},
            {"$group": {"_id": "$minute", "players": {"$sum": "$players"},
                        "regions": {"$addToSet": "$meta.region"}}},
        ]
        if len(regions) > 1:
            pipeline.append({"$match": {"$expr": {"$eq": [{"$size": "$regions"}, len(regions)]}}})
        pipeline += [
            {"$group": {
                "_id": {"$dateToString": {"format": "%Y-%m-%d", "date": "$_id"}},
                "samples": {"$sum": 1},
                "peak": {"$max": "$players"},
                "peak_minute": {"$top": {"sortBy": {"players": -1, "_id": -1}, "output": "$_id"}},
                "min": {"$min": "$players"},
                "avg": {"$avg": "$players"},
            }},
            {"$sort": {"_id": 1}},
        ]
        result = {}
        async for doc in self.samples.aggregate(pipeline):
            date = doc.pop("_id")
            result[date] = {"date": date, **doc}
        return result
