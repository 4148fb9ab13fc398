"""Upserts of documents that are mostly new, written as inserts first (docs/architecture.md,
"The tracker's records").

The embedded database commits every statement of an update command on its own, and an insert
command's documents a chunk at a time: for a batch of records, snapshots or changes that are new
(the usual case: one per account and day), an insert costs a third of an upsert. Whatever the insert
refused for a duplicate key is then written by the upsert it replaces, so the data left is the same
as the upserts' alone, and writing a batch twice leaves what writing it once does
(tests/test_bulk_upserts.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from pymongo import UpdateOne
from pymongo.errors import BulkWriteError

DUPLICATE_KEY = 11000


async def insert_new(collection: Any, docs: Sequence[dict]) -> tuple[int, set[int]]:
    """Insert `docs` (unordered): (how many were inserted, the indexes of those refused for a
    duplicate key). Any other write error is raised."""
    try:
        return len((await collection.insert_many(list(docs), ordered=False)).inserted_ids), set()
    except BulkWriteError as exc:
        errors = exc.details.get("writeErrors") or []
        if any(e.get("code") != DUPLICATE_KEY for e in errors):
            raise
        return int(exc.details.get("nInserted") or 0), {e["index"] for e in errors}


async def insert_or_upsert(collection: Any, docs: Sequence[dict], upsert_of: Callable[[dict], UpdateOne | Any]) -> int:
    """Insert `docs` (unordered); each one refused for a duplicate key is written by `upsert_of(doc)`
    (an UpdateOne or ReplaceOne with upsert=True). Returns how many documents were created.
    Any other write error is raised (a BulkWriteError whose nUpserted counts what was created) once
    the duplicates are written."""
    if not docs:
        return 0
    created = 0
    try:
        # insert_many adds an _id to documents without one: the upserts are built from copies.
        result = await collection.insert_many([dict(doc) for doc in docs], ordered=False)
        return len(result.inserted_ids)
    except BulkWriteError as exc:
        errors = exc.details.get("writeErrors") or []
        created = int(exc.details.get("nInserted") or 0)
        duplicates = [docs[e["index"]] for e in errors if e.get("code") == DUPLICATE_KEY]
        others = [e for e in errors if e.get("code") != DUPLICATE_KEY]
        if duplicates:
            try:
                upserted = await collection.bulk_write([upsert_of(doc) for doc in duplicates], ordered=False)
            except BulkWriteError as upsert_exc:
                cast(dict, upsert_exc.details)["nUpserted"] = created + int(upsert_exc.details.get("nUpserted") or 0)
                raise
            created += upserted.upserted_count
        if others:
            cast(dict, exc.details)["nUpserted"] = created  # what the caller counts as stored
            raise
    return created
