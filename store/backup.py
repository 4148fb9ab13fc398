"""Online logical backups of the irreplaceable collections through the driver, and their restore.

A backup is a directory: one `<collection>.bson.gz` per irreplaceable collection (gzip'd
concatenated BSON, mongodump's own format) and `manifest.json` (counts, sizes, SHA-256 of each
file, the data model, times). It is written beside its target and renamed to it only when
complete, so an interrupted backup never looks like one. How it reads, what is consistent and
how to restore: docs/deploy.md section 8.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as dt
import gzip
import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import bson
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument
from pymongo import ReplaceOne
from pymongo.errors import BulkWriteError

from store.client import deadline
from store.constants import BACKUP_DUTY
from store.tanks import account_key
from store.tracker import NICKNAME_MIGRATION

if TYPE_CHECKING:
    from store.kinds import Declared
    from store.store import Store

FORMAT = 1
MANIFEST = "manifest.json"
SUFFIX = ".bson.gz"
BATCH = 100  # documents per driver batch and per write to the file
RESTORE_BATCH = 500  # documents per insert of a restore (offline: no requests to give way to)
# Low priority: the backup works at most DUTY of its time and rests the rest (store/backup.py
# `_yield`), at least PAUSE_SECONDS after each query. On the embedded database a query is read
# whole, under the store's one lock, before its first batch is answered (SecantusDB 0.7: every
# other command waits meanwhile), so what bounds how long a request can wait behind the backup is
# the documents one window holds, not the batch size: windows on a timestamp field are cut to
# about WINDOW_DOCS documents (`_DayWalk`), and so are the account ranges of ACCOUNT_WALKS.
# docs/benchmarks.md, "The online backup", measures the trade: a slower backup for reads that
# keep their p99.
DUTY = BACKUP_DUTY  # the operator chooses it with --backup-duty (server/contract/config.py)
PAUSE_SECONDS = 0.005
WINDOW_DOCS = 200
QUERY_DEADLINE_S = 120.0  # one query or one batch of it at most (the rests between them do not count)
# Collections read by ranges of the accounts their documents belong to, through an index that
# leads with the account ((prefix field or None, range field) of it): a window is every day of a
# few accounts, about WINDOW_DOCS documents. A day window of them holds a document of nearly every
# tracked account that played (about 0.4 x the accounts, growing with them: docs/benchmarks.md,
# "The figures behind the code's choices"). The accounts are the tracked ones (read first);
# documents of others fall in the ranges between them.
ACCOUNT_WALKS: dict[str, tuple[str | None, str]] = {
    "snapshots": ("region", "account_id"),  # index (region, account_id, date)
    "tank_records": (None, "a"),  # index (a, d): a = "region:account_id"
}
DAY_WINDOWS_BACK = 450  # day windows cover at most this many days before the start (every retention is shorter)
EMPTY_DAYS_STOP = 30  # after this many empty days in a row, everything older is one window
CONSISTENCY = (
    "Each collection is read window by window while the service writes: snapshots and per-tank "
    "records by ranges of accounts (every day of a few accounts at once), the others by UTC day "
    "of their date field (a part of a day for a timestamp field; the days before the start newest "
    "first, the current day last), by tracker slice, or whole when small. A document is copied as "
    "it was when its window was read. Every UTC day that had ended when the backup started is "
    "copied whole: the tracker, the online sampler and the population job only write the current "
    "day; a per-tank record kept by a rewrite stays with its account (a new expiry day, the same "
    "document). The current day holds what had been written when its window was read."
)


class BackupError(Exception):
    """The backup or restore cannot go on; the message says why (for an operator)."""


@dataclasses.dataclass
class Progress:
    """Figures of a backup or restore under way (read by /status while a scheduled backup runs)."""

    collection: str = ""
    documents: int = 0
    started: float = dataclasses.field(default_factory=time.time)


def _raw(collection: Any) -> Any:
    """The collection returning raw BSON: documents are copied as bytes, never decoded."""
    return collection.with_options(codec_options=CodecOptions(document_class=RawBSONDocument))


def windows(walk: str) -> list[dict]:
    """The queries that together cover a collection of an "each" or "whole" walk exactly once,
    each an indexed equality or range (store/kinds.py `walk`; a "day" walk is `_DayWalk`)."""
    kind, _, spec = walk.partition(":")
    if kind == "whole":
        return [{}]
    if kind == "each":
        field, _, count = spec.partition("=")
        n = int(count)
        return [{field: None}, {field: {"$lt": 0}}, *({field: i} for i in range(n)), {field: {"$gte": n}}]
    raise ValueError(f"unknown walk {walk!r}")


DAY = dt.timedelta(days=1)
PROBE = dt.timedelta(minutes=10)
SMALLEST_PART = dt.timedelta(minutes=1)
GAP_GROWTH = 16  # an empty stretch's windows grow to at most this many parts (`_DayWalk._day`)


def _as_utc(value: Any) -> dt.datetime | None:
    if not isinstance(value, dt.datetime):
        return None
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)


class _DayWalk:
    """The windows of a "day:<field>" walk: each an indexed range of the field, together covering
    its whole range exactly once.

    Order: the days before the start's, newest first, until EMPTY_DAYS_STOP days in a row held
    nothing (or DAY_WINDOWS_BACK days were read), then one window for everything older (a gap
    longer than that is read in one window); the start's day and what is after it last, so a
    record that a rewrite moves to the current day is copied there if not where it was.

    A field that holds the day itself (midnight) gives one window a day. A timestamp field (the
    online samples' minute) is cut into equal parts of the day, each to hold about WINDOW_DOCS
    documents at the density last seen: learnt first from a probe of ten minutes (the end of the
    day before the start, else the ten minutes before the start), then from every window read."""

    def __init__(self, field: str, started: dt.datetime, window_docs: int) -> None:
        self.field = field
        self.started = started
        self.today = dt.datetime.combine(started.date(), dt.time(), dt.UTC)
        self.window_docs = max(1, window_docs)
        self.per_day = 0.0  # documents a day at the density last seen (0: a day is one window)
        self.seen = 0  # documents of every window reported by learn()
        self.empty_parts = 0  # windows in a row that held nothing (each doubles the next one's span)

    def learn(self, low: dt.datetime | None, high: dt.datetime | None, count: int, first: Any, last: Any) -> None:
        """What a window [low, high) held: `count` documents, the first and the last read."""
        self.seen += count
        if low is not None and high is not None:
            self.empty_parts = self.empty_parts + 1 if count == 0 else 0
        if count == 0 or low is None or high is None:
            return  # an empty stretch (a gap) says nothing of the days around it
        early, late = (_as_utc(_field(doc, self.field)) for doc in (first, last))
        if early is None or late is None:
            return
        if early == late and early.time() == dt.time():
            self.per_day = 0.0  # the field holds the day (midnight): cutting it finer gains nothing
            return
        self.per_day = count * (DAY / (high - low))

    def parts(self) -> int:
        if self.per_day <= self.window_docs:
            return 1
        return min(int(DAY / SMALLEST_PART), -(-int(self.per_day) // self.window_docs))

    def probes(self) -> list[tuple[dict, dt.datetime, dt.datetime]]:
        """Ranges to learn the density from before the walk; never one holding the start's
        midnight (the current day's day-valued documents are read last)."""
        now = self.started.replace(second=0, microsecond=0)
        ranges = [(self.today - PROBE, self.today)]
        if now - PROBE > self.today:
            ranges.append((now - PROBE, now))
        return [({self.field: {"$gte": low, "$lt": high}}, low, high) for low, high in ranges]

    def _day(self, day: dt.datetime, skip: tuple[dt.datetime, dt.datetime] | None) -> Any:
        step = DAY / self.parts()  # as learnt up to the day before
        low, end = day, day + DAY
        while low < end:
            # An empty stretch (the sampler was off, or the days before the first sample) is
            # crossed in ever longer windows: each empty window doubles the next one's span, up to
            # GAP_GROWTH parts; a window that holds documents goes back to one part. So 30 empty
            # days of a one-a-minute collection cost ~300 windows, not ~4,500, and the one window
            # that reaches the data again holds at most GAP_GROWTH parts' documents.
            span = step * min(GAP_GROWTH, 2**self.empty_parts)
            high = end if end - low < span + step / 2 else low + span
            for lo, hi in _minus(low, high, skip):
                yield {self.field: {"$gte": lo, "$lt": hi}}, lo, hi
            low = high

    def walk(self, skip: tuple[dt.datetime, dt.datetime] | None) -> Any:
        """(query, low, high) of every window (low and high None for an open one); the caller
        reports what each held (learn) before asking for the next."""
        field = self.field
        yield {field: None}, None, None
        day, empty = self.today - DAY, 0
        while empty < EMPTY_DAYS_STOP and day > self.today - DAY * DAY_WINDOWS_BACK:
            before = self.seen
            yield from self._day(day, skip)
            empty = empty + 1 if self.seen == before else 0
            day -= DAY
        yield {field: {"$lt": day + DAY}}, None, None
        for day in (self.today, self.today + DAY):
            yield from self._day(day, skip)
        yield {field: {"$gte": self.today + 2 * DAY}}, None, None


class _AccountWalk:
    """The windows of a collection in ACCOUNT_WALKS: ranges of its account key between the tracked
    accounts' keys (sorted), each about WINDOW_DOCS documents at the documents per account last
    seen, and the ranges before, between and after them (and null), so that together they cover
    every document exactly once, whichever accounts it belongs to."""

    def __init__(self, prefix: str | None, field: str, keys: list[tuple[Any, Any]], window_docs: int) -> None:
        self.prefix, self.field, self.keys = prefix, field, keys
        self.window_docs = max(1, window_docs)
        self.per_account = 0.0

    def learn(self, accounts: int, count: int) -> None:
        if accounts and count:
            self.per_account = count / accounts

    def _step(self) -> int:
        return max(1, int(self.window_docs / self.per_account)) if self.per_account else 1

    def _ranges(self, base: dict, values: list) -> Any:
        yield {**base, self.field: None}, 0
        yield {**base, self.field: {"$lt": values[0]}}, 0
        i = 0
        while i < len(values):
            j = min(len(values), i + self._step())
            bounds = {"$gte": values[i], **({"$lt": values[j]} if j < len(values) else {})}
            yield {**base, self.field: bounds}, j - i
            i = j

    def walk(self) -> Any:
        """(query, tracked accounts in it); the caller reports what each held (learn)."""
        if self.prefix is None:
            yield from self._ranges({}, sorted({value for _, value in self.keys}))
            return
        groups: dict[Any, set] = {}
        for head, value in self.keys:
            groups.setdefault(head, set()).add(value)
        yield {self.prefix: None}, 0
        previous = None
        for head in sorted(groups):
            yield {self.prefix: {"$lt": head} if previous is None else {"$gt": previous, "$lt": head}}, 0
            yield from self._ranges({self.prefix: head}, sorted(groups[head]))
            previous = head
        yield {self.prefix: {"$gt": previous}}, 0


def _minus(low: dt.datetime, high: dt.datetime, skip: tuple[dt.datetime, dt.datetime] | None) -> list:
    """[low, high) without [skip): zero, one or two ranges."""
    if skip is None:
        return [(low, high)]
    s_low, s_high = skip
    if s_high <= low or s_low >= high:
        return [(low, high)]
    out = []
    if low < s_low:
        out.append((low, s_low))
    if s_high < high:
        out.append((s_high, high))
    return out


def _field(doc: Any, dotted: str) -> Any:
    value = doc
    for part in dotted.split("."):
        try:
            value = value[part]
        except (KeyError, TypeError):
            return None
    return value


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _close_file(fh: Any, raw: Any) -> None:
    fh.close()
    raw.flush()
    os.fsync(raw.fileno())
    raw.close()


def check_target(target: str) -> str:
    """The absolute target: it must not exist yet, or be an empty directory."""
    target = os.path.abspath(target)
    if os.path.exists(target) and (not os.path.isdir(target) or os.listdir(target)):
        raise BackupError(f"{target} exists and is not an empty directory")
    parent = os.path.dirname(target)
    if not os.path.isdir(parent):
        raise BackupError(f"{parent} does not exist")
    return target


async def _write_chunk(fh: Any, chunk: list[bytes], progress: Progress) -> int:
    data = b"".join(chunk)
    await asyncio.to_thread(fh.write, data)
    progress.documents += len(chunk)
    return len(data)


async def _yield(busy_since: float, pause: float, duty: float) -> None:
    """Low priority: after each query or batch, rest so that the backup works at most `duty` of its
    time (the rest is (1 - duty) / duty times what the step kept the database and this process
    busy), at least `pause`; requests run in between. pause 0: no rest at all (tests)."""
    if pause <= 0:
        return
    busy = time.monotonic() - busy_since
    await asyncio.sleep(max(pause, busy * (1 - duty) / duty if 0 < duty < 1 else 0.0))


class _Dump:
    """One collection into one file: windows read batch by batch, each batch's raw BSON appended."""

    def __init__(self, fh: Any, batch: int, pause: float, duty: float, progress: Progress) -> None:
        self.fh, self.batch, self.pause, self.duty, self.progress = fh, batch, pause, duty, progress
        self.count = self.size = self.windows = 0
        self.busy = 0.0  # seconds of work (queries, batches, compression), the rests left out

    async def window(
        self, source: Any, query: dict, sink: Callable[[list], Any] | None = None, projection: dict | None = None
    ) -> tuple[int, Any, Any]:
        """Every document of `query` into the file (or, with `sink`, to it); returns how many, the
        first and the last."""
        cursor = source.find(query, projection, batch_size=self.batch)
        count, first, last = 0, None, None
        self.windows += 1
        try:
            while True:
                busy_since = time.monotonic()
                with deadline(QUERY_DEADLINE_S):  # each query and batch its own: rests do not count
                    docs = await cursor.to_list(self.batch)
                if docs:
                    count += len(docs)
                    first = docs[0] if first is None else first
                    last = docs[-1]
                    if sink is not None:
                        sink(docs)
                    else:
                        self.size += await _write_chunk(self.fh, [doc.raw for doc in docs], self.progress)
                self.busy += time.monotonic() - busy_since
                await _yield(busy_since, self.pause, self.duty)
                if len(docs) < self.batch or not cursor.alive:
                    break
        finally:
            await cursor.close()
        self.count += count
        return count, first, last


async def _tracked_keys(
    store: Store, batch: int, pause: float, duty: float, progress: Progress
) -> tuple[list[tuple[str, int]], float]:
    """(region, account_id) of every tracked account, read by the tracked collection's own walk
    with the backup's rests; and the seconds of work it took."""
    found: list[tuple[str, int]] = []
    dump = _Dump(None, batch, pause, duty, progress)

    def keep(docs: list) -> None:
        found.extend((doc.get("region"), doc.get("account_id")) for doc in docs)

    source = store.db["tracked"].with_options(codec_options=CodecOptions())
    walk = store.declarations()["tracked"].walk
    for query in windows(walk):
        await dump.window(source, query, keep, {"_id": 0, "region": 1, "account_id": 1})
    keys = [(r, a) for r, a in found if isinstance(r, str) and isinstance(a, int)]
    return keys, dump.busy


def _keys_for(collection: str, keys: list[tuple[str, int]]) -> list[tuple[Any, Any]]:
    """The tracked accounts as the collection's account key ((prefix, value) of ACCOUNT_WALKS)."""
    if ACCOUNT_WALKS[collection][0] is None:
        return [(None, account_key(region, account_id)) for region, account_id in keys]
    return list(keys)


async def _dump_collection(
    collection: Any,
    declared: Declared,
    path: str,
    started: dt.datetime,
    batch: int,
    pause: float,
    duty: float,
    window_docs: int,
    progress: Progress,
    account_walk: tuple[str | None, str] | None = None,
    keys: list[tuple[Any, Any]] | None = None,
) -> dict:
    raw = open(path, "wb")  # noqa: SIM115 - closed by _close_file (fsync'd) in a thread
    fh = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0)
    dump = _Dump(fh, batch, pause, duty, progress)
    try:
        source = _raw(collection)
        # No emptiness check first: on the embedded database even find_one({}) or a count reads
        # the whole collection; an empty window is one cheap indexed read.
        kind, _, field = declared.walk.partition(":")
        walk_used = declared.walk
        if account_walk is not None and keys:
            prefix, key_field = account_walk
            accounts = _AccountWalk(prefix, key_field, keys, window_docs)
            for query, tracked in accounts.walk():
                count, _, _ = await dump.window(source, query)
                accounts.learn(tracked, count)
            walk_used = f"accounts:{prefix + ',' if prefix else ''}{key_field}"
        elif kind == "day":
            walk = _DayWalk(field, started, window_docs)
            skip = None
            for query, low, high in walk.probes():
                found = await dump.window(source, query)
                if found[0]:
                    walk.learn(low, high, *found)
                    skip = (low, high)  # copied: the walk leaves it out
                    break
            for query, low, high in walk.walk(skip):
                walk.learn(low, high, *await dump.window(source, query))
        else:
            for query in windows(declared.walk):
                await dump.window(source, query)
    finally:
        await asyncio.to_thread(_close_file, fh, raw)
    return {
        "file": os.path.basename(path),
        "documents": dump.count,
        "bson_bytes": dump.size,
        "bytes": os.path.getsize(path),
        "sha256": await asyncio.to_thread(_sha256, path),
        "walk": declared.walk,
        "read_by": walk_used,
        "windows": dump.windows,
        "busy_seconds": round(dump.busy, 2),
    }


async def write_backup(
    store: Store,
    target: str,
    *,
    writer: str = "statsapi",
    batch: int = BATCH,
    pause: float = PAUSE_SECONDS,
    duty: float = DUTY,
    window_docs: int = WINDOW_DOCS,
    clock: Callable[[], float] = time.time,
    progress: Progress | None = None,
) -> dict:
    """Back up every irreplaceable collection of `store` into `target`; returns the manifest.
    `duty`: the share of its time the backup works, resting the rest (1: only `pause` after each
    query and batch; pause 0: no rests at all)."""
    target = check_target(target)
    progress = progress or Progress()
    started_at = clock()
    started = dt.datetime.fromtimestamp(started_at, dt.UTC)
    parent, name = os.path.split(target)
    partial = os.path.join(parent, f".{name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)  # our own leftover of an earlier attempt
    os.makedirs(partial)
    try:
        with deadline(QUERY_DEADLINE_S):
            data_model = sorted(
                str(doc["_id"]) for doc in await store.db["migrations"].find({}, {"_id": 1}).to_list(None)
            )
        collections: dict[str, dict] = {}
        keys: list[tuple[str, int]] | None = None
        for coll_name, declared in store.irreplaceable().items():
            progress.collection = coll_name
            started_one = time.monotonic()
            account_walk = ACCOUNT_WALKS.get(coll_name)
            keys_busy = 0.0
            if account_walk is not None and keys is None:
                keys, keys_busy = await _tracked_keys(store, batch, pause, duty, progress)
            info = await _dump_collection(
                store.db[coll_name],
                declared,
                os.path.join(partial, coll_name + SUFFIX),
                started,
                batch,
                pause,
                duty,
                window_docs,
                progress,
                account_walk,
                _keys_for(coll_name, keys) if account_walk is not None and keys else None,
            )
            info["busy_seconds"] = round(info["busy_seconds"] + keys_busy, 2)
            info["seconds"] = round(time.monotonic() - started_one, 2)
            collections[coll_name] = info
        finished_at = clock()
        manifest = {
            "format": FORMAT,
            "writer": writer,
            "database": store.db.name,
            "started_at": round(started_at, 3),
            "finished_at": round(finished_at, 3),
            "seconds": round(finished_at - started_at, 2),
            "busy_seconds": round(sum(c["busy_seconds"] for c in collections.values()), 2),
            "duty": duty if pause > 0 else 1.0,
            "complete_days_through": (started.date() - dt.timedelta(days=1)).isoformat(),
            "consistency": CONSISTENCY,
            "data_model": data_model,
            "documents": sum(c["documents"] for c in collections.values()),
            "bytes": sum(c["bytes"] for c in collections.values()),
            "collections": collections,
        }
        manifest_path = os.path.join(partial, MANIFEST)
        with open(manifest_path, "w") as fh:
            json.dump(manifest, fh, indent=1, sort_keys=True)
            fh.flush()
            os.fsync(fh.fileno())
        _fsync_dir(partial)
        if os.path.isdir(target):
            os.rmdir(target)  # empty (check_target): the rename needs it gone
        os.rename(partial, target)
        _fsync_dir(parent)
        return manifest
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise


def read_manifest(source: str, verify: bool = True) -> dict:
    """The manifest of a complete backup; with `verify`, every file's size and SHA-256 are checked."""
    path = os.path.join(source, MANIFEST)
    try:
        with open(path) as fh:
            manifest = json.load(fh)
    except FileNotFoundError:
        raise BackupError(f"{source} holds no {MANIFEST}: not a complete backup") from None
    except ValueError as exc:
        raise BackupError(f"{path} is not valid JSON: {exc}") from None
    if manifest.get("format") != FORMAT:
        raise BackupError(f"{path}: backup format {manifest.get('format')!r}, this version reads {FORMAT}")
    if verify:
        for name, info in manifest["collections"].items():
            file_path = os.path.join(source, info["file"])
            if not os.path.exists(file_path) or os.path.getsize(file_path) != info["bytes"]:
                raise BackupError(f"{file_path} is missing or has the wrong size")
            if _sha256(file_path) != info["sha256"]:
                raise BackupError(f"{file_path}: checksum mismatch ({name})")
    return manifest


def iter_documents(path: str, batch: int = RESTORE_BATCH) -> Any:
    """The documents of one backup file, `batch` at a time, as raw BSON (bounded memory)."""
    with gzip.open(path, "rb") as fh:
        out: list[RawBSONDocument] = []
        while True:
            head = fh.read(4)
            if not head:
                break
            if len(head) < 4:
                raise BackupError(f"{path}: truncated document")
            length = int.from_bytes(head, "little")
            body = fh.read(length - 4)
            if len(body) != length - 4:
                raise BackupError(f"{path}: truncated document")
            out.append(RawBSONDocument(head + body))
            if len(out) >= batch:
                yield out
                out = []
        if out:
            yield out


# Restore-time changes to documents: nickname_prefixes (a cache) is not backed up, so neither is
# the marker saying it was filled, and `tracked` loses the mark of which nickname it was told;
# the start-up migration (store/tracker.py migrate_nicknames) then tells it every nickname again.
# None drops the document.
TRANSFORMS: dict[str, Callable[[RawBSONDocument], Any]] = {
    "tracked": lambda doc: {k: v for k, v in bson.decode(doc.raw).items() if k != "nick_indexed"},
    "migrations": lambda doc: None if doc["_id"] == NICKNAME_MIGRATION else doc,
}


async def holds_collected_data(store: Store) -> list[str]:
    """The irreplaceable collections that hold a document (migration markers say nothing alone)."""
    found = []
    for name in store.irreplaceable():
        if name != "migrations" and await store.db[name].find_one({}, {"_id": 1}) is not None:
            found.append(name)
    return found


async def _write_batch(collection: Any, docs: list) -> None:
    """Insert; a document whose _id is there already is replaced (a later copy in the file is the
    newer one, and a second restore of the same backup leaves the same data as one)."""
    try:
        await collection.insert_many(docs, ordered=False)
    except BulkWriteError as exc:
        errors = exc.details.get("writeErrors", [])
        if any(error.get("code") != 11000 for error in errors):
            raise
        replaces = []
        for error in errors:
            doc = docs[error["index"]]
            doc_id = doc["_id"]
            replaces.append(ReplaceOne({"_id": doc_id}, doc, upsert=True))
        for start in range(0, len(replaces), 100):
            await collection.bulk_write(replaces[start : start + 100], ordered=True)


async def restore_backup(
    store: Store,
    source: str,
    *,
    force: bool = False,
    batch: int = RESTORE_BATCH,
    progress: Progress | None = None,
    log: Callable[[str], None] = lambda line: None,
) -> dict:
    """Restore the backup in `source` into `store`'s database; returns what was restored.

    Refuses a database that holds collected data unless `force` (then documents are merged:
    those of the backup replace the same _id, nothing else is removed)."""
    progress = progress or Progress()
    manifest = read_manifest(source, verify=True)
    log(f"backup verified: {manifest['documents']:,} documents in {len(manifest['collections'])} collections")
    with deadline(60):
        occupied = await holds_collected_data(store)
    if occupied and not force:
        raise BackupError(
            "the database already holds collected data (" + ", ".join(occupied) + "); restore into an empty "
            "database, or pass --force to merge the backup into it"
        )
    declared = store.declarations()
    unknown = [name for name in manifest["collections"] if name not in declared]
    if unknown:
        log("skipping collections this version no longer has: " + ", ".join(unknown))
    started = time.monotonic()
    with deadline(600):
        await store.ensure_schema()  # collections and indexes of the current data model
        # The markers of the migrations run on the database as it was; the backup's own markers
        # come back with it and the migrations it lacks run below, on the restored documents.
        await store.db["migrations"].delete_many({})
    restored: dict[str, int] = {}
    for name, info in manifest["collections"].items():
        if name in unknown:
            continue
        progress.collection = name
        collection = store.db[name]
        transform = TRANSFORMS.get(name)
        read = count = 0
        for docs in iter_documents(os.path.join(source, info["file"]), batch):
            read += len(docs)
            if transform is not None:
                docs = [changed for changed in map(transform, docs) if changed is not None]
            if not docs:
                continue
            with deadline(QUERY_DEADLINE_S):
                await _write_batch(collection, docs)
            count += len(docs)
            progress.documents += len(docs)
        if read != info["documents"]:
            raise BackupError(f"{name}: {read} documents read, the manifest says {info['documents']}")
        restored[name] = count
        log(f"restored {name}: {count:,} documents")
    with deadline(3600):
        await store.ensure_schema()  # runs the start-up migrations the restored data needs
        await store.after_restore()
    return {
        "restored": restored,
        "documents": sum(restored.values()),
        "seconds": round(time.monotonic() - started, 2),
        "backup_started_at": manifest["started_at"],
        "complete_days_through": manifest["complete_days_through"],
    }


def list_backups(directory: str) -> list[dict]:
    """The complete backups in `directory` (those with a manifest), newest first, unverified. A
    directory that cannot be read holds none, and an entry whose manifest cannot be read or lacks
    a figure is no backup (/status and /metrics read this: they answer whatever is there)."""
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            try:
                if entry.name.startswith(".") or not entry.is_dir():
                    continue
                manifest = read_manifest(entry.path, verify=False)
                figures = {k: float(manifest[k]) for k in ("started_at", "finished_at", "seconds")}
                counts = {k: int(manifest[k]) for k in ("documents", "bytes")}
            except (BackupError, OSError, KeyError, TypeError, ValueError, AttributeError):
                continue
            found.append({"path": entry.path, "name": entry.name, **figures, **counts})
    return sorted(found, key=lambda b: b["started_at"], reverse=True)
