"""Retention without TTL indexes (the embedded database): expired snapshots and online samples are
deleted by the retention job in small indexed batches while requests are served.

Run with -s for the measured figures.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time

import pytest
from tornado.httpclient import HTTPRequest

from server.jobs.retention import Retention
from tests.helpers import scratch_database


@pytest.fixture(scope="module")
def mongo_uri():
    """This module's own SecantusDB, not the session's: there every command of every test waits on
    one server that late in a full run holds every earlier test's data, and in CI one retention step
    (then a 20-batch run each re-reading the whole expired range: store/retention.py) passed its
    30 s job deadline behind it. What is measured here is the job against its own collections."""
    with scratch_database("statsapi-retention-db-") as uri:
        yield uri


SNAPSHOTS = 20_000
EXPIRED_SHARE = 2  # every second snapshot is older than its 410-day retention
BATCH, MAX_BATCHES = 500, 10  # per delete, per run: 10,000 expired snapshots take two runs
DAY = dt.timedelta(days=1)


@pytest.mark.gen_test(timeout=400)
async def test_retention_deletes_in_batches_while_requests_are_served(app, http_client, base_url, mongo_uri, db_name):
    from store import Store, create_client
    from store.client import deadline

    # The embedded database's store: no TTL index on large collections (replacing the TTL
    # indexes the app's store created, as a switch of an existing database would).
    client = create_client(mongo_uri)
    store = Store(client, db_name, rate_collection_bytes=1 << 20, ttl_indexes=False)
    await store.ensure_schema()
    for coll, field in (
        (store.players.snapshots, "day"),
        (store.online.claims, "minute"),
        (store.online.daily_docs, "day"),
        (store.players.profiles, "expires_at"),
    ):
        index = (await coll.index_information())[f"{field}_1"]
        assert "expireAfterSeconds" not in index, coll.name

    now = dt.datetime.now(dt.UTC)
    today = dt.datetime.combine(now.date(), dt.time(), dt.UTC)
    started = time.perf_counter()
    docs = []
    for i in range(SNAPSHOTS):
        expired = i % EXPIRED_SHARE == 0
        day = today - (420 + i % 30) * DAY if expired else today - (i % 30) * DAY
        docs.append(
            {
                "region": "eu",
                "account_id": 1000 + i // 30,
                "date": day.date().isoformat(),
                "day": day,
                "battles": i,
                "wins": i // 2,
            }
        )
    with deadline(300):  # seeding is not a request
        for start in range(0, len(docs), 10_000):
            await store.players.snapshots.insert_many(docs[start : start + 10_000], ordered=False)
    samples = [
        {
            "minute": today - days * DAY + dt.timedelta(minutes=m),
            "players": 5,
            "meta": {"game": "wot", "region": region, "server": "A"},
        }
        for days in (420, 415, 411, 3, 1)
        for m in range(0, 1440, 30)
        for region in ("eu", "na", "asia")
    ]
    with deadline(300):
        await store.online.samples.insert_many(samples, ordered=False)
    print(f"\nseeded {SNAPSHOTS} snapshots and {len(samples)} samples in {time.perf_counter() - started:.1f} s")
    cutoff = now - 410 * DAY
    assert await store.online.samples.count_documents({"minute": {"$lt": cutoff}}) == 3 * 48 * 3

    # A fresh account's history to ask for meanwhile.
    await store.players.save_snapshots(
        [
            {
                "region": "eu",
                "account_id": 1,
                "date": (today - i * DAY).date().isoformat(),
                "battles": 100 + i,
                "wins": 50,
                "damage_dealt": 1,
                "frags": 1,
                "spotted": 1,
                "xp": 1,
            }
            for i in range(3)
        ]
    )

    retention = Retention(store, batch=BATCH, max_batches=MAX_BATCHES, pause=0.01)
    outcomes = []

    async def run_until_done():
        while True:
            outcome = await retention.run()
            outcomes.append(outcome)
            if "more left" not in outcome:
                return

    job = asyncio.ensure_future(run_until_done())
    served, during = [], 0
    latencies = []
    rounds = 0
    while not job.done():
        rounds += 1
        # Per-client limits: 20 a minute on player history, 60 on /online.
        paths = ("/api/v1/player/1/eu/history", "/api/v1/online") if rounds <= 15 else ("/api/v1/online",)
        for path in paths:
            begun = time.perf_counter()
            response = await http_client.fetch(HTTPRequest(base_url + path, request_timeout=30), raise_error=False)
            latencies.append(time.perf_counter() - begun)
            served.append(response.code)
            during += not job.done()
        await asyncio.sleep(0.2)
        if len(served) >= 55:
            await job
    await job
    took = time.perf_counter() - started
    print(
        f"retention: {len(outcomes)} runs, {retention.batches_run} batches; first run: {outcomes[0]}; "
        f"requests meanwhile: {len(served)} ({during} while it ran), statuses {sorted(set(served))}, "
        f"slowest {max(latencies) * 1000:.0f} ms; total {took:.1f} s"
    )

    assert await store.players.snapshots.count_documents({"day": {"$lt": cutoff}}) == 0
    assert await store.players.snapshots.count_documents({}) == SNAPSHOTS // EXPIRED_SHARE + 3
    assert await store.online.samples.count_documents({"minute": {"$lt": cutoff}}) == 0
    assert await store.online.samples.count_documents({}) == 2 * 48 * 3
    # Deleted in batches: at most MAX_BATCHES × BATCH snapshots a run, so several runs.
    assert len(outcomes) >= (SNAPSHOTS // EXPIRED_SHARE) // (MAX_BATCHES * BATCH)
    assert retention.batches_run >= (SNAPSHOTS // EXPIRED_SHARE) // BATCH
    assert during >= 1 and set(served) == {200}
    client.close()


@pytest.mark.gen_test(timeout=60)
async def test_ttl_indexes_stay_where_the_server_expires_by_itself(mongo_uri, db_name):
    from store import Store, create_client

    client = create_client(mongo_uri)
    store = Store(client, db_name, rate_collection_bytes=1 << 20)  # ttl_indexes=True: real MongoDB
    await store.ensure_schema()
    index = (await store.players.snapshots.index_information())["day_1"]
    assert index["expireAfterSeconds"] == 410 * 86400
    assert store.expiring() == []
    assert await Retention(store).run() == "TTL indexes expire data on this server"
    client.close()
