"""Per-tank career counters by day: packed keyframes plus changed tanks, rebuilt from O(period) documents."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence

from bson import Binary
from pymongo import DESCENDING, ReplaceOne

from store.retention import Expiring, ensure_expiry_index

# The counters kept per tank, in the packed order (the upstream's tanks/stats `all` names).
COUNTERS = (
    "battles",
    "wins",
    "losses",
    "draws",
    "damage_dealt",
    "frags",
    "spotted",
    "dropped_capture_points",
    "capture_points",
    "xp",
    "survived_battles",
    "shots",
    "hits",
)
WIDTH = len(COUNTERS)
# A keyframe is written at least every KEYFRAME_MAX_RECORDS records and KEYFRAME_MAX_DAYS days after
# the last one (on the account's next record), so a state is rebuilt from at most
# KEYFRAME_MAX_RECORDS + 1 documents.
KEYFRAME_MAX_RECORDS = 30
KEYFRAME_MAX_DAYS = 30
# The state of every day of the last HISTORY_DAYS must be rebuildable. A record expires RETENTION_DAYS
# after its expiry base `x` (its own day, unless pushed later): a record whose chain serves days long
# after it (an account idle for weeks or months) is rewritten in place as a keyframe with a later
# base by the tracker (server/tracker.py, plan_visit), so what a day of the last HISTORY_DAYS needs
# never expires; every other record serves only days within RETENTION_DAYS - HISTORY_DAYS of its base.
HISTORY_DAYS = 400
RETENTION_DAYS = 440

TankState = dict[int, list[int]]  # tank_id -> counters in COUNTERS order


# --- packing --------------------------------------------------------------------------
# A payload is one byte (the number of counters per tank) and then, per tank in ascending tank_id
# order, zigzag varints of: the tank_id minus the previous tank's, then each counter minus its value
# in the base state (a keyframe's base is empty; a change record's base is the previous state).
# A typical tank row costs 15-25 bytes where a BSON array of the same ints costs ~150.


def _put(out: bytearray, value: int) -> None:
    z = value << 1 if value >= 0 else ((-value) << 1) - 1
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)


def _values(payload: bytes) -> list[int]:
    values: list[int] = []
    acc = shift = 0
    append = values.append
    for byte in payload:
        if byte & 0x80:
            acc |= (byte & 0x7F) << shift
            shift += 7
        else:
            acc |= byte << shift
            append(-((acc + 1) >> 1) if acc & 1 else acc >> 1)
            acc = shift = 0
    return values


def pack(rows: Mapping[int, Sequence[int]], base: Mapping[int, Sequence[int]] | None = None) -> bytes:
    """The payload of `rows` ({tank_id: counters}) as differences from `base` (None: a keyframe)."""
    out = bytearray((WIDTH,))
    previous = 0
    zero = (0,) * WIDTH
    for tank_id in sorted(rows):
        row = rows[tank_id]
        _put(out, tank_id - previous)
        previous = tank_id
        before = (base.get(tank_id) if base is not None else None) or zero
        for value, old in zip(row, before):
            _put(out, value - old)
    return bytes(out)


def apply(state: TankState, payload: bytes) -> TankState:
    """Add a payload's rows to `state` (in place; a keyframe applies to an empty state)."""
    if not payload:
        return state
    width = payload[0]
    values = _values(payload[1:])
    tank_id = 0
    for start in range(0, len(values), width + 1):
        tank_id += values[start]
        diff = values[start + 1 : start + 1 + width]
        row = state.get(tank_id)
        if row is None:
            state[tank_id] = (diff + [0] * (WIDTH - len(diff)))[:WIDTH]
        else:
            for i, value in enumerate(diff[:WIDTH]):
                row[i] += value
    return state


def unpack(payload: bytes | None) -> TankState:
    return apply({}, payload or b"")


def changed(state: Mapping[int, Sequence[int]], base: Mapping[int, Sequence[int]]) -> dict[int, Sequence[int]]:
    """The rows of `state` that differ from `base` (tanks new in `state` included)."""
    return {tank_id: row for tank_id, row in state.items() if list(row) != list(base.get(tank_id) or ())}


def as_counters(state: Mapping[int, Sequence[int]]) -> dict[int, dict[str, int]]:
    return {tank_id: dict(zip(COUNTERS, row)) for tank_id, row in state.items()}


def record_id(region: str, account_id: int, day: str) -> str:
    # Ids sort by account, then ISO day: one account's records are one range of the _id index.
    return f"{region}:{account_id}:{day}"


def _day_date(day: str) -> dt.datetime:
    return dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC)


class Timeline:
    """An account's records over a range of days (TankRecords.timeline), oldest first."""

    def __init__(self, records: list[tuple[str, int, bool, bytes]]):
        self.records = records  # (day, account total battles, keyframe, payload)

    def battles_by_day(self, since: str, until: str) -> list[tuple[str, int]]:
        """(record day, account total battles) for every record day in [since, until], oldest first."""
        return [(day, battles) for day, battles, _, _ in self.records if since <= day <= until]

    def state_on(self, day: str) -> tuple[str, dict[int, dict[str, int]]] | None:
        """As TankRecords.state_on for a day on or after the timeline's `since`: the state as of
        the newest record on or before `day`, with that record's day; None without one."""
        last = None
        start = None
        for index, (record_day, _, keyframe, _) in enumerate(self.records):
            if record_day > day:
                break
            last = index
            if keyframe:
                start = index
        if last is None or start is None:
            return None
        state: TankState = {}
        for _, _, _, payload in self.records[start : last + 1]:
            apply(state, payload)
        return self.records[last][0], as_counters(state)


class TankRecords:
    """Collection `tank_records`: one document per (account, day) on which the tracker stored per-tank data.

    {_id: "region:account_id:YYYY-MM-DD", b: account total battles, k: 1 on keyframes,
     t: packed payload (see pack), x: the expiry base as a date: the record's day, or a later day when
     the tracker rewrote it in place to keep it (expires RETENTION_DAYS after x)}. Short field names: there is one
    document per active account-day, so every byte counts (goal: <= 1 KB per active account-day).
    """

    status_name = "newest_tank_record"

    def __init__(self, db, ttl_indexes: bool = True):
        self.collection = db["tank_records"]
        self.ttl_indexes = ttl_indexes

    async def ensure_schema(self) -> None:
        await ensure_expiry_index(self.collection, "x", RETENTION_DAYS * 86400, self.ttl_indexes)

    def expiring(self) -> list[Expiring]:
        return [Expiring("tank_records", self.collection, "x", RETENTION_DAYS * 86400)]

    @staticmethod
    def record(
        region: str, account_id: int, day: str, battles: int, payload: bytes, keyframe: bool, kept: str | None = None
    ) -> dict:
        """The record of `day`; `kept` (a later day) pushes its expiry base: it expires RETENTION_DAYS after that."""
        base = max(day, kept or day)
        doc = {"_id": record_id(region, account_id, day), "b": int(battles), "t": Binary(payload), "x": _day_date(base)}
        if keyframe:
            doc["k"] = 1
        return doc

    async def save(self, records: Iterable[dict]) -> int:
        """Write records (a record of the same account and day is replaced: a retried visit is idempotent)."""
        ops = [ReplaceOne({"_id": doc["_id"]}, doc, upsert=True) for doc in records]
        if ops:
            await self.collection.bulk_write(ops, ordered=False)
        return len(ops)

    async def state_on(self, region: str, account_id: int, day: str) -> tuple[str, dict[int, dict[str, int]]] | None:
        """Per-tank career counters as of the newest record on or before UTC day `day`, with that
        record's day; None when the account has no per-tank record on or before that day.

        Reads the newest keyframe at or before the record and the change records after it
        (at most KEYFRAME_MAX_RECORDS + 1 documents, newest first through the _id index).
        """
        prefix = record_id(region, account_id, "")
        cursor = (
            self.collection.find({"_id": {"$gt": prefix, "$lte": prefix + day}}, {"t": 1, "k": 1})
            .sort("_id", DESCENDING)
            .limit(KEYFRAME_MAX_RECORDS + 1)
        )
        docs = await cursor.to_list(KEYFRAME_MAX_RECORDS + 1)
        chain = []
        for doc in docs:
            chain.append(doc)
            if doc.get("k"):
                break
        else:
            return None  # no keyframe in reach (never written, or expired)
        state: TankState = {}
        for doc in reversed(chain):
            apply(state, bytes(doc["t"]))
        return chain[0]["_id"][len(prefix) :], as_counters(state)

    async def timeline(self, region: str, account_id: int, since: str, until: str) -> Timeline:
        """The records that rebuild the state on any day of [since, until]: the chain state_on reads
        for `since` (newest keyframe first), then every record after it through `until`. Two
        queries, however many days are then asked of it."""
        prefix = record_id(region, account_id, "")
        before = (
            self.collection.find({"_id": {"$gt": prefix, "$lte": prefix + since}})
            .sort("_id", DESCENDING)
            .limit(KEYFRAME_MAX_RECORDS + 1)
        )
        chain = []
        for doc in await before.to_list(KEYFRAME_MAX_RECORDS + 1):
            chain.append(doc)
            if doc.get("k"):
                break
        else:
            chain = []  # no keyframe in reach: the days up to `since` have no state
        after = self.collection.find({"_id": {"$gt": prefix + since, "$lte": prefix + until}}).sort("_id", 1)
        docs = [*reversed(chain), *await after.to_list(None)]
        return Timeline(
            [(doc["_id"][len(prefix) :], int(doc.get("b") or 0), bool(doc.get("k")), bytes(doc["t"])) for doc in docs]
        )

    async def battles_by_day(self, region: str, account_id: int, since: str, until: str) -> list[tuple[str, int]]:
        """(record day, account total battles) for every record day in [since, until], oldest first."""
        prefix = record_id(region, account_id, "")
        cursor = self.collection.find({"_id": {"$gte": prefix + since, "$lte": prefix + until}}, {"b": 1}).sort(
            "_id", 1
        )
        return [(doc["_id"][len(prefix) :], int(doc.get("b") or 0)) for doc in await cursor.to_list(None)]

    async def stored_bytes(self) -> dict:
        """The collection's document count and sizes as the server reports them (collStats)."""
        stats = await self.collection.database.command("collStats", self.collection.name)
        return {
            "count": int(stats.get("count") or 0),
            "size": int(stats.get("size") or 0),
            "storage_size": int(stats.get("storageSize") or 0),
            "index_size": int(stats.get("totalIndexSize") or 0),
        }
