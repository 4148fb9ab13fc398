"""The retention job: expire old documents at a cost of O(what expires).

Used where the store has no TTL indexes on its large collections (the embedded SecantusDB,
Store(ttl_indexes=False)): snapshots and online samples (410 days), daily online aggregates,
minute claims, expired player profiles, clans and digests. Each run finds, per collection, at
most `max_batches` × `batch` expired documents through the index on the expiry field, oldest
first, in one query (on SecantusDB a query's cost is the whole expired range's, whatever its
limit: store/retention.py), and deletes them in batches of `batch`, each its own database step,
with a short pause between batches so requests run in between. What is left is deleted by the
next runs; readers never rely on deletion for correctness.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from store.client import job_deadline
from store.retention import delete_expired_docs, expired_docs

if TYPE_CHECKING:
    from store.store import Store

log = logging.getLogger("statsapi.retention")

INTERVAL_SECONDS = 60
BATCH = 1000
MAX_BATCHES = 20  # per collection and run: at most 20,000 documents a minute each
PAUSE_SECONDS = 0.05


@dataclasses.dataclass(eq=False)
class Retention:
    store: Store
    clock: Callable[[], float] = time.time
    batch: int = BATCH
    max_batches: int = MAX_BATCHES
    pause: float = PAUSE_SECONDS
    batches_run: int = dataclasses.field(default=0, init=False)  # over the process's life (tests count them)

    async def run(self, slot: int | None = None) -> str:
        items = self.store.expiring()
        if not items:
            return "TTL indexes expire data on this server"
        now = dt.datetime.fromtimestamp(self.clock(), dt.UTC)
        deleted: dict[str, int] = {}
        left = []
        for item in items:
            cutoff = now - dt.timedelta(seconds=item.after_seconds)
            limit = self.batch * self.max_batches
            with job_deadline():
                docs = await expired_docs(item, cutoff, limit)
            total = 0
            for start in range(0, len(docs), self.batch):
                rest = len(docs) < limit and start + self.batch >= len(docs)
                with job_deadline():
                    total += await delete_expired_docs(item, docs[start : start + self.batch], cutoff, rest)
                self.batches_run += 1
                await asyncio.sleep(self.pause)
            if len(docs) == limit:
                left.append(item.name)
            if total:
                deleted[item.name] = total
        outcome = ", ".join(f"{name} {count}" for name, count in deleted.items()) or "nothing expired"
        if left:
            outcome += "; more left in " + ", ".join(left)
        return "deleted: " + outcome if deleted else outcome
