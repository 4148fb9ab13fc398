"""Per-tank career counters by day: packed keyframes plus changed tanks, rebuilt from O(period) documents."""

from __future__ import annotations

import contextlib
import datetime as dt
import operator
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from bson import Binary
from pymongo import ASCENDING, DESCENDING, ReplaceOne, UpdateOne
from pymongo.errors import BulkWriteError, PyMongoError

from store.constants import TANK_COUNTERS
from store.freshness import Freshness
from store.kinds import Declared, irreplaceable
from store.retention import Expiring, ensure_expiry_index

if TYPE_CHECKING:
    from motor.motor_asyncio import AsyncIOMotorDatabase

WIDTH = len(TANK_COUNTERS)
# A keyframe is written at least every KEYFRAME_MAX_RECORDS records and KEYFRAME_MAX_DAYS days after
# the last one (on the account's next record), so a state is rebuilt from at most
# KEYFRAME_MAX_RECORDS + 1 documents.
KEYFRAME_MAX_RECORDS = 30
KEYFRAME_MAX_DAYS = 30
# The state of every day of the last HISTORY_DAYS must be rebuildable. A record expires RETENTION_DAYS
# after its expiry base `x` (its own day, unless pushed later): a record whose chain serves days long
# after it (an account idle for weeks or months) is rewritten in place as a keyframe with a later
# base by the tracker (server/services/tracker.py, plan_visit), so what a day of the last HISTORY_DAYS needs
# never expires; every other record serves only days within RETENTION_DAYS - HISTORY_DAYS of its base.
RETENTION_DAYS = 440
# Days per older window of an idle account's lookback (see TankRecords._chain): an account idle
# for a year costs (RETENTION_DAYS - KEYFRAME_MAX_DAYS) / LOOKBACK + 2 small index reads.
LOOKBACK = 90
MIGRATION = "tank_records.a_d"  # marker of the (a, d) migration in `migrations`
COUNT = "tank_records"  # the kept document count in `freshness` (store/freshness.py)
# The most per-tank records at which the embedded database (SecantusDB) was measured to meet the
# read goals (scripts/bench_scale.py, docs/benchmarks.md "Reads at a year of tracked data"); /status says degraded from
# CEILING_WARN of it on, since beyond it the service belongs on MongoDB (docs/deploy.md section 6).
EMBEDDED_CEILING_RECORDS = 2_000_000
CEILING_WARN = 0.8

TankState = dict[int, list[int]]  # tank_id -> counters in TANK_COUNTERS order


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
    """The payload of `rows` ({tank_id: counters}) as differences from `base` (None: a keyframe).

    Its width is its shortest row's (WIDTH when empty): a state rebuilt from records written before
    a counter existed has shorter rows (see apply_parsed), and its payload stays that short rather
    than claim zeros for what was not measured."""
    width = min((len(row) for row in rows.values()), default=WIDTH)
    out = bytearray((width,))
    previous = 0
    zero = (0,) * width
    for tank_id in sorted(rows):
        row = rows[tank_id]
        _put(out, tank_id - previous)
        previous = tank_id
        before = (base.get(tank_id) if base is not None else None) or zero
        for i in range(width):
            _put(out, row[i] - (before[i] if i < len(before) else 0))
    return bytes(out)


def parse(payload: bytes) -> tuple[int, list[int]]:
    """A payload as (counters per tank, its decoded values): decoded once, applied many times."""
    return (payload[0], _values(payload[1:])) if payload else (WIDTH, [])


def apply(state: TankState, payload: bytes) -> TankState:
    """Add a payload's rows to `state` (in place; a keyframe applies to an empty state)."""
    if not payload:
        return state
    return apply_parsed(state, parse(payload))


def apply_parsed(state: TankState, parsed: tuple[int, list[int]]) -> TankState:
    """`apply` for a payload already parsed (Timeline keeps each record's parsed payload).

    A changed tank gets a new row; rows are never changed in place, so a shallow copy of a state
    (dict(state)) keeps that state while the original goes on being applied to.

    A row is as wide as what measured it: a payload written before a counter existed (width below
    WIDTH) gives rows without it, and applied to a wider row cuts it to its own width, since the
    change of the missing counters is unknown; a wider row needs a wider keyframe (the tracker
    writes one on an account's first record with the new counters: server/services/tracker.py)."""
    width, values = parsed
    tank_id = 0
    step = width + 1
    for start in range(0, len(values), step):
        tank_id += values[start]
        diff = values[start + 1 : start + step]
        if width > WIDTH:  # a payload of a later version: the counters this one knows
            diff = diff[:WIDTH]
        row = state.get(tank_id)
        # map stops at the shorter: a row never gains counters from a change record
        state[tank_id] = diff if row is None else list(map(operator.add, row, diff))
    return state


def unpack(payload: bytes | None) -> TankState:
    return apply({}, payload or b"")


def changed(state: Mapping[int, Sequence[int]], base: Mapping[int, Sequence[int]]) -> dict[int, Sequence[int]]:
    """The rows of `state` that differ from `base` (tanks new in `state` included)."""
    return {tank_id: row for tank_id, row in state.items() if list(row) != list(base.get(tank_id) or ())}


def as_counters(state: Mapping[int, Sequence[int]]) -> dict[int, dict[str, int]]:
    """Rows as {name: value}: a counter a row does not carry (written before it existed) is absent."""
    return {tank_id: dict(zip(TANK_COUNTERS, row)) for tank_id, row in state.items()}


def complete(state: Mapping[int, Sequence[int]]) -> bool:
    """Every row of `state` carries every counter of TANK_COUNTERS."""
    return all(len(row) >= WIDTH for row in state.values())


def account_key(region: str, account_id: int) -> str:
    return f"{region}:{account_id}"


def record_id(region: str, account_id: int, day: str) -> str:
    # A point key for writes (a rewrite of the same account-day replaces it). Reads never use an
    # _id range: SecantusDB plans one as a collection scan. They use the (a, d) index instead.
    return f"{account_key(region, account_id)}:{day}"


def _days_before(day: str, days: int) -> str:
    return (dt.date.fromisoformat(day) - dt.timedelta(days=days)).isoformat()


def _lookback_windows(day: str) -> list[str]:
    """The lower bounds of the windows _chain reads, newest first: KEYFRAME_MAX_DAYS + 1 days up to
    `day`, then LOOKBACK days at a time back to RETENTION_DAYS, then everything older."""
    bounds = [_days_before(day, KEYFRAME_MAX_DAYS)]
    back = KEYFRAME_MAX_DAYS
    while back < RETENTION_DAYS:
        back = min(RETENTION_DAYS, back + LOOKBACK)
        bounds.append(_days_before(day, back))
    # Older records exist only where the tracker kept them (a long-idle account's newest record,
    # rewritten in place with a later expiry base): one last open range finds them.
    bounds.append("")
    return bounds


def _day_date(day: str) -> dt.datetime:
    return dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC)


class Timeline:
    """An account's records over a range of days (TankRecords.timeline), oldest first."""

    def __init__(self, records: list[tuple[str, int, bool, bytes]], assists: Mapping[str, Sequence[int]] | None = None):
        self.records = records  # (day, account total battles, keyframe, payload)
        # The account-level assistance of each record day that has it (TankRecords.record `assist`).
        self.assists: Mapping[str, Sequence[int]] = assists or {}
        # Each payload decoded at most once: one answer rebuilds states of many days from the same
        # records (its periods, weeks and recent battles), and varint decoding was most of its CPU.
        self._parsed: list[tuple[int, list[int]] | None] = [None] * len(records)
        # The states built so far, by record index: a later day's state is built on from the
        # nearest one of its chain (one answer asks for ~30 days' states of the same records).
        self._states: dict[int, TankState] = {}

    def parsed(self, index: int) -> tuple[int, list[int]]:
        """The parsed payload of record `index` (see store.tanks.parse)."""
        found = self._parsed[index]
        if found is None:
            found = self._parsed[index] = parse(self.records[index][3])
        return found

    def battles_by_day(self, since: str, until: str) -> list[tuple[str, int]]:
        """(record day, account total battles) for every record day in [since, until], oldest first."""
        return [(day, battles) for day, battles, _, _ in self.records if since <= day <= until]

    def assist_on(self, record_day: str) -> Sequence[int] | None:
        """The account-level assistance (store.constants.ACCOUNT_ASSIST) kept with the record of
        `record_day`, None when that record has none (written before release 1.3.0)."""
        return self.assists.get(record_day)

    def complete_from(self) -> str | None:
        """The first record day from which every state of this timeline carries every counter and
        the account-level assistance (a keyframe of the full width with it), None when none does."""
        for day, _, keyframe, payload in self.records:
            if keyframe and payload and payload[0] >= WIDTH and day in self.assists:
                return day
        return None

    def state_on(self, day: str) -> tuple[str, dict[int, dict[str, int]]] | None:
        """As TankRecords.state_on for a day on or after the timeline's `since`: the state as of
        the newest record on or before `day`, with that record's day; None without one."""
        found = self.raw_state_on(day)
        return (found[0], as_counters(found[1])) if found is not None else None

    def raw_state_on(self, day: str) -> tuple[str, TankState] | None:
        """state_on with the state as rows in TANK_COUNTERS order (a new state, the caller's to keep)."""
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
        # From the nearest state already built in this chain (at or after its keyframe); a shallow
        # copy keeps it, since apply_parsed never changes a row in place.
        first, state = start, {}
        for index in range(last, start - 1, -1):
            built = self._states.get(index)
            if built is not None:
                first, state = index + 1, dict(built)
                break
        for index in range(first, last + 1):
            apply_parsed(state, self.parsed(index))
        self._states[last] = dict(state)
        return self.records[last][0], state


class TankRecords:
    """Collection `tank_records`: one document per (account, day) on which the tracker stored per-tank data.

    {_id: "region:account_id:YYYY-MM-DD", a: "region:account_id", d: "YYYY-MM-DD" (indexed together:
     every read is an equality on a plus a range of d), b: account total battles, k: 1 on keyframes,
     t: packed payload (see pack), s: the account's assistance that day (store.constants.ACCOUNT_ASSIST;
     records written before release 1.3.0 have none), x: the expiry base as a date: the record's day, or a later day when
     the tracker rewrote it in place to keep it (expires RETENTION_DAYS after x)}. Short field names: there is one
    document per active account-day, so every byte counts (goal: <= 1 KB per active account-day).
    """

    status_name = "newest_tank_record"

    COLLECTIONS: ClassVar[dict[str, Declared]] = {
        "tank_records": irreplaceable(
            "per-tank career counters of each tracked account-day (kept 410 days)",
            "day:x",
        ),
        "migrations": irreplaceable("which data-model migrations ran: the data model the other collections are in"),
    }

    def __init__(self, db: AsyncIOMotorDatabase[Any], ttl_indexes: bool = True) -> None:
        self.collection = db["tank_records"]
        self.migrations = db["migrations"]
        self.ttl_indexes = ttl_indexes
        self.freshness = Freshness(db)

    async def ensure_schema(self) -> None:
        await ensure_expiry_index(self.collection, "x", RETENTION_DAYS * 86400, self.ttl_indexes)
        await self.collection.create_index([("a", ASCENDING), ("d", ASCENDING)])
        await self.migrate()

    def expiring(self) -> list[Expiring]:
        return [Expiring("tank_records", self.collection, "x", RETENTION_DAYS * 86400, on_deleted=self._count_deleted)]

    async def _count_deleted(self, n: int) -> None:
        await self.freshness.count_add(COUNT, -n)

    async def count(self) -> int:
        """How many records are stored: a kept figure (inserts add, the retention job's deletes
        subtract; with TTL indexes, on MongoDB, deletions are not seen, so it is an upper bound)."""
        return max(0, await self.freshness.count(COUNT) or 0)

    @staticmethod
    def record(
        region: str,
        account_id: int,
        day: str,
        battles: int,
        payload: bytes,
        keyframe: bool,
        kept: str | None = None,
        assist: Sequence[int] | None = None,
    ) -> dict:
        """The record of `day`; `kept` (a later day) pushes its expiry base: it expires RETENTION_DAYS after that.
        `assist`: the account's assistance that day (ACCOUNT_ASSIST), kept as `s` when known."""
        base = max(day, kept or day)
        doc = {
            "_id": record_id(region, account_id, day),
            "a": account_key(region, account_id),
            "d": day,
            "b": int(battles),
            "t": Binary(payload),
            "x": _day_date(base),
        }
        if keyframe:
            doc["k"] = 1
        if assist is not None:
            doc["s"] = [int(v) for v in assist]
        return doc

    async def save(self, records: Iterable[dict]) -> int:
        """Write records (a record of the same account and day is replaced: a retried visit is idempotent)."""
        # The filter carries (a, d) beside _id: a point lookup either way, and on a cluster sharded
        # by {a: 1, d: 1} (docs/deploy.md section 6) an upsert must name the whole shard key.
        ops = [ReplaceOne({"_id": doc["_id"], "a": doc["a"], "d": doc["d"]}, doc, upsert=True) for doc in records]
        if ops:
            try:
                result = await self.collection.bulk_write(ops, ordered=False)
            except BulkWriteError as exc:
                # Some were stored before the failure (a full disk): count them, since their retry
                # replaces them and counts nothing; the caller marks nothing visited (a redo).
                upserted = int(exc.details.get("nUpserted") or 0)
                if upserted:
                    with contextlib.suppress(PyMongoError):
                        await self.freshness.count_add(COUNT, upserted)
                raise
            await self.freshness.count_add(COUNT, result.upserted_count)
        return len(ops)

    async def _chain(self, account: str, day: str, projection: dict | None = None) -> list[dict]:
        """The records that rebuild the state as of `day`: the newest record on or before `day` and
        the records back to its keyframe, newest first; [] without one (never written, or expired).

        Every read is an equality on `a` plus a bounded range of `d` on the (a, d) index, so it
        examines only that account's records in that range, never the collection. The windows go
        back from `day` (_lookback_windows) until a keyframe is found: a change record is at most
        KEYFRAME_MAX_DAYS days after its keyframe (server/services/tracker.py, next_record), so an account
        that played lately costs one read of at most KEYFRAME_MAX_DAYS + 1 records, and one idle
        for months a few more reads of empty ranges.
        """
        chain: list[dict] = []
        hi = day
        for lo in _lookback_windows(day):
            for doc in await self._range(account, lo, hi, projection, DESCENDING):
                chain.append(doc)
                if doc.get("k"):
                    return chain
            if not lo:
                break
            hi = _days_before(lo, 1)
        return []

    async def _range(self, account: str, first: str, last: str, projection: dict | None, order: int) -> list[dict]:
        """One account's records of the days [first, last], by day: one range of the (a, d) index."""
        cursor = self.collection.find({"a": account, "d": {"$gte": first, "$lte": last}}, projection)
        return await cursor.sort("d", order).to_list(None)

    async def state_on(self, region: str, account_id: int, day: str) -> tuple[str, dict[int, dict[str, int]]] | None:
        """Per-tank career counters as of the newest record on or before UTC day `day`, with that
        record's day; None when the account has no per-tank record on or before that day.

        Reads the newest keyframe at or before the record and the change records after it
        (at most KEYFRAME_MAX_RECORDS + 1 documents; see _chain for the bounded index ranges).
        """
        chain = await self._chain(account_key(region, account_id), day, {"t": 1, "k": 1, "d": 1})
        if not chain:
            return None
        state: TankState = {}
        for doc in reversed(chain):
            apply(state, bytes(doc["t"]))
        return chain[0]["d"], as_counters(state)

    async def prior(self, region: str, account_id: int, day: str) -> tuple[TankState, dict] | None:
        """The state as of the newest record before UTC day `day` and the tracked bookkeeping the
        tracker kept for it (record_day, keyframe_day, keyframe_bytes, chain_records, chain_bytes,
        kept_day), rebuilt from that record's chain; None without a record before `day`.

        A second write of an account on one day (the pass, then a live lookup after more battles)
        must diff against this, not against the earlier same-day state it replaces."""
        chain = await self._chain(account_key(region, account_id), _days_before(day, 1))
        if not chain:
            return None
        state: TankState = {}
        for doc in reversed(chain):
            apply(state, bytes(doc["t"]))
        keyframe, changes = chain[-1], chain[:-1]
        kept = keyframe.get("x")
        book = {
            "record_day": chain[0]["d"],
            "keyframe_day": keyframe["d"],
            "keyframe_bytes": len(keyframe["t"]),
            "chain_records": len(changes),
            "chain_bytes": sum(len(doc["t"]) for doc in changes),
            "kept_day": kept.date().isoformat() if isinstance(kept, dt.datetime) else keyframe["d"],
            "assist": chain[0].get("s"),
        }
        return state, book

    async def record_on(self, region: str, account_id: int, day: str) -> dict | None:
        """The record of exactly `day` (a point read by _id), or None."""
        return await self.collection.find_one({"_id": record_id(region, account_id, day)})

    async def timeline(self, region: str, account_id: int, since: str, until: str) -> Timeline:
        """The records that rebuild the state on any day of [since, until]: the chain of the newest
        record on or before `since` (from its keyframe), then every record after it through `until`.

        One range of the (a, d) index from KEYFRAME_MAX_DAYS before `since` usually holds both (a
        record that old is at most that many days after its keyframe... or the keyframe is in it);
        otherwise one more read: the chain of that record, or, when no record lies in those days,
        the account's older records (none for an account tracked since after `since`, where
        _chain's windows would be several empty reads)."""
        account = account_key(region, account_id)
        lo = _days_before(since, KEYFRAME_MAX_DAYS)
        docs = await self._range(account, lo, until, None, ASCENDING)
        head = [i for i, doc in enumerate(docs) if doc["d"] <= since]
        if head:
            newest = head[-1]
            keyframes = [i for i in head if docs[i].get("k")]
            if keyframes:
                docs = docs[keyframes[-1] :]
            else:  # its keyframe is older than `lo`
                chain = await self._chain(account, docs[newest]["d"])
                docs = [*reversed(chain), *docs[newest + 1 :]] if chain else docs[newest + 1 :]
        else:
            older = await self._range(account, "", _days_before(lo, 1), None, DESCENDING)
            chain = []
            for doc in older:  # newest first, back to its keyframe
                chain.append(doc)
                if doc.get("k"):
                    break
            else:
                chain = []  # no keyframe under the newest older record: it cannot be rebuilt
            docs = [*reversed(chain), *docs]
        return Timeline(
            [(doc["d"], int(doc.get("b") or 0), bool(doc.get("k")), bytes(doc["t"])) for doc in docs],
            {doc["d"]: doc["s"] for doc in docs if doc.get("s")},
        )

    async def battles_by_day(self, region: str, account_id: int, since: str, until: str) -> list[tuple[str, int]]:
        """(record day, account total battles) for every record day in [since, until], oldest first."""
        docs = await self._range(account_key(region, account_id), since, until, {"b": 1, "d": 1}, ASCENDING)
        return [(doc["d"], int(doc.get("b") or 0)) for doc in docs]

    async def migrate(self, batch: int = 1000) -> int:
        """Records written before the (a, d) fields existed get them, derived from their _id; returns
        how many. One pass over the collection (a marker document remembers it is done), so a start
        costs nothing once migrated; a record is only ever given fields, never replaced."""
        done = await self.migrations.find_one({"_id": MIGRATION})
        if done is not None:
            return 0
        # The kept count starts from one full count (once per database, like the migration).
        await self.freshness.count_set(COUNT, await self.collection.count_documents({}))
        updated = 0
        ops: list[UpdateOne] = []
        async for doc in self.collection.find({"a": {"$exists": False}}, {"_id": 1}, batch_size=batch):
            account, _, day = str(doc["_id"]).rpartition(":")
            ops.append(UpdateOne({"_id": doc["_id"]}, {"$set": {"a": account, "d": day}}))
            if len(ops) >= batch:
                await self.collection.bulk_write(ops, ordered=False)
                updated += len(ops)
                ops = []
        if ops:
            await self.collection.bulk_write(ops, ordered=False)
            updated += len(ops)
        await self.migrations.update_one({"_id": MIGRATION}, {"$set": {"records": updated}}, upsert=True)
        return updated

    async def stored_bytes(self) -> dict:
        """The collection's document count and sizes as the server reports them (collStats)."""
        stats = await self.collection.database.command("collStats", self.collection.name)
        return {
            "count": int(stats.get("count") or 0),
            "size": int(stats.get("size") or 0),
            "storage_size": int(stats.get("storageSize") or 0),
            "index_size": int(stats.get("totalIndexSize") or 0),
        }
