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
from store.tracker import NICKNAME_MIGRATION

if TYPE_CHECKING:
    from store.kinds import Declared
    from store.store import Store

FORMAT = 1
MANIFEST = "manifest.json"
SUFFIX = ".bson.gz"
BATCH = 500  # documents per driver batch and per write to the file
PAUSE_SECONDS = 0.02  # between batches and windows: the database serves requests meanwhile
WINDOW_DEADLINE_S = 300.0  # one window (one UTC day of one collection) at most
DAY_WINDOWS_BACK = 450  # day windows cover this many days before the start (every retention is shorter)
CONSISTENCY = (
    "Each collection is read window by window (one UTC day of its date field, one tracker slice, or "
    "the whole of a small collection), oldest day first, while the service writes. A document is "
    "copied as it was when its window was read. Every UTC day that had ended when the backup "
    "started is copied whole: the tracker, the online sampler and the population job only write "
    "the current day, and a record kept by a rewrite moves to the current day, which is read last. "
    "The current day holds what had been written when its window was read."
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


def windows(walk: str, started: dt.datetime) -> list[dict]:
    """The queries that together cover a collection exactly once, each an indexed equality or a
    bounded range (store/kinds.py `walk`); oldest first for a date field."""
    kind, _, spec = walk.partition(":")
    if kind == "whole":
        return [{}]
    if kind == "day":
        field = spec
        today = dt.datetime.combine(started.date(), dt.time(), dt.UTC)
        first = today - dt.timedelta(days=DAY_WINDOWS_BACK)
        end = today + dt.timedelta(days=2)
        out: list[dict] = [{field: None}, {field: {"$lt": first}}]
        day = first
        while day < end:
            out.append({field: {"$gte": day, "$lt": day + dt.timedelta(days=1)}})
            day += dt.timedelta(days=1)
        out.append({field: {"$gte": end}})
        return out
    if kind == "each":
        field, _, count = spec.partition("=")
        n = int(count)
        return [{field: None}, {field: {"$lt": 0}}, *({field: i} for i in range(n)), {field: {"$gte": n}}]
    raise ValueError(f"unknown walk {walk!r}")


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


async def _yield(busy_since: float, pause: float) -> None:
    """Low priority: rest at least as long as the last batch kept the database (and this process)
    busy, so the backup takes at most about half of its time; requests run in between."""
    await asyncio.sleep(max(pause, time.monotonic() - busy_since) if pause > 0 else 0)


async def _dump_collection(
    collection: Any, declared: Declared, path: str, started: dt.datetime, batch: int, pause: float, progress: Progress
) -> dict:
    raw = open(path, "wb")  # noqa: SIM115 - closed by _close_file (fsync'd) in a thread
    fh = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0)
    count = size = 0
    try:
        source = _raw(collection)
        # No emptiness check first: on the embedded database even find_one({}) or a count reads
        # the whole collection; an empty window is one cheap indexed read.
        for query in windows(declared.walk, started):
            chunk: list[bytes] = []
            busy_since = time.monotonic()
            with deadline(WINDOW_DEADLINE_S):
                async for doc in source.find(query, batch_size=batch):
                    chunk.append(doc.raw)
                    if len(chunk) >= batch:
                        count, size = count + len(chunk), size + await _write_chunk(fh, chunk, progress)
                        chunk = []
                        await _yield(busy_since, pause)
                        busy_since = time.monotonic()
            if chunk:
                count, size = count + len(chunk), size + await _write_chunk(fh, chunk, progress)
                # Only after a window that held documents: an empty one costs one indexed read.
                await _yield(busy_since, pause)
    finally:
        await asyncio.to_thread(_close_file, fh, raw)
    return {
        "file": os.path.basename(path),
        "documents": count,
        "bson_bytes": size,
        "bytes": os.path.getsize(path),
        "sha256": await asyncio.to_thread(_sha256, path),
        "walk": declared.walk,
    }


async def write_backup(
    store: Store,
    target: str,
    *,
    writer: str = "statsapi",
    batch: int = BATCH,
    pause: float = PAUSE_SECONDS,
    clock: Callable[[], float] = time.time,
    progress: Progress | None = None,
) -> dict:
    """Back up every irreplaceable collection of `store` into `target`; returns the manifest."""
    target = check_target(target)
    progress = progress or Progress()
    started_at = clock()
    started = dt.datetime.fromtimestamp(started_at, dt.UTC)
    parent, name = os.path.split(target)
    partial = os.path.join(parent, f".{name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)  # our own leftover of an earlier attempt
    os.makedirs(partial)
    try:
        with deadline(WINDOW_DEADLINE_S):
            data_model = sorted(
                str(doc["_id"]) for doc in await store.db["migrations"].find({}, {"_id": 1}).to_list(None)
            )
        collections: dict[str, dict] = {}
        for coll_name, declared in store.irreplaceable().items():
            progress.collection = coll_name
            started_one = time.monotonic()
            info = await _dump_collection(
                store.db[coll_name],
                declared,
                os.path.join(partial, coll_name + SUFFIX),
                started,
                batch,
                pause,
                progress,
            )
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


def iter_documents(path: str, batch: int = BATCH) -> Any:
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
    batch: int = BATCH,
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
            with deadline(WINDOW_DEADLINE_S):
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
    """The complete backups in `directory` (those with a manifest), newest first, unverified."""
    found = []
    with contextlib.suppress(FileNotFoundError):
        for entry in os.scandir(directory):
            if entry.name.startswith(".") or not entry.is_dir():
                continue
            try:
                manifest = read_manifest(entry.path, verify=False)
            except BackupError:
                continue
            found.append(
                {
                    "path": entry.path,
                    "name": entry.name,
                    **{k: manifest[k] for k in ("started_at", "finished_at", "seconds", "documents", "bytes")},
                }
            )
    return sorted(found, key=lambda b: b["started_at"], reverse=True)
