"""Indexed store shapes on a real MongoDB-wire server: the (a, d) migration, kept figures, claim races, the ceiling warning."""

from __future__ import annotations

import asyncio
import datetime as dt
import pathlib
import random
import re

import pytest

import store as store_package
from server.domain.records import pack, state_of
from store.tanks import MIGRATION, TankRecords
from tests.test_tracker_store import _day


@pytest.mark.gen_test(timeout=60)
async def test_records_written_before_the_account_and_day_fields_are_migrated_and_read(store):
    """A database from before the (a, d) index: its records (only `_id` says whose and which day)
    are given a and d at start-up, every byte of them kept, read back through the index, and counted."""
    rng = random.Random(3)
    state = {t: [rng.randrange(1, 50) for _ in range(13)] for t in (1, 2305, 60_001)}
    old_docs = []
    for account_id in (500_000_001, 500_000_002):
        for n in range(0, 40, 3):
            doc = TankRecords.record("eu", account_id, _day(n), 10 * n, pack(state), True)
            for field in ("a", "d"):
                doc.pop(field)
            old_docs.append(doc)
    await store.tanks.collection.insert_many([dict(doc) for doc in old_docs])
    await store.tanks.migrations.delete_one({"_id": MIGRATION})  # as before the upgrade

    await store.ensure_schema()  # the next start

    stored = {doc["_id"]: doc async for doc in store.tanks.collection.find({})}
    assert len(stored) == len(old_docs)
    for doc in old_docs:
        kept = stored[doc["_id"]]
        assert {k: kept[k] for k in doc if k != "t"} == {k: v for k, v in doc.items() if k != "t"}
        assert bytes(kept["t"]) == bytes(doc["t"])  # nothing changed
        assert kept["a"] == doc["_id"].rsplit(":", 1)[0] and kept["d"] == doc["_id"].rsplit(":", 1)[1]
    assert await store.tanks.count() == len(old_docs)
    got = state_of(await store.tanks.chain_on("eu", 500_000_002, _day(20)))
    assert got is not None and got[0] == _day(18)
    assert await store.tanks.battles_by_day("eu", 500_000_001, _day(3), _day(9)) == [
        (_day(3), 30),
        (_day(6), 60),
        (_day(9), 90),
    ]
    # Once migrated, a start does not look again (and a second run would change nothing).
    assert await store.tanks.migrate() == 0


@pytest.mark.gen_test(timeout=60)
async def test_every_collection_the_store_names_exists_after_start(store):
    """No collection is created by its first write (a kill -9 then left the embedded database
    unable to start again): start-up creates every collection any store module names."""
    named = set()
    for path in pathlib.Path(store_package.__file__).parent.glob("*.py"):
        named |= set(re.findall(r'db\["([a-z_]+)"\]', path.read_text()))
    assert {"nickname_prefixes", "leases", "job_runs", "online_status", "tank_records"} <= named
    await store.ensure_schema()
    assert named <= set(await store.db.list_collection_names())
    await store.ensure_schema()  # and again changes nothing (another process's start)
    assert named <= set(await store.db.list_collection_names())


@pytest.mark.gen_test(timeout=60)
async def test_kept_figures_follow_writes_and_deletes(store):
    """/status's figures are kept by the writers: the newest profile / clan / tracked account and the
    per-tank record count (inserts add, rewrites of the same account-day do not, retention subtracts)."""
    from server.jobs.retention import Retention

    assert await store.players.newest_timestamp() is None
    for cached_at in (1000.0, 3000.0, 2000.0):
        await store.players.save(
            {"region": "eu", "account_id": int(cached_at), "cached_at": cached_at, "clan_id": 7, "nickname": "x"}
        )
    assert await store.players.newest_timestamp() == 3000.0
    # The clan a profile names is found by the clan refresh without reading profiles.
    assert await store.clans.referenced_by_players(("eu",), 2500.0) == [("eu", 7)]
    assert await store.clans.referenced_by_players(("na",), 0.0) == []

    await store.tracked.track("eu", 1, "One", until=5e9, now=100.0)
    await store.tracked.track("eu", 1, "One", until=5e9, now=900.0)  # already tracked: not newer
    await store.tracked.track_many("na", [(2, "Two")], until=5e9, now=400.0)
    assert await store.tracked.newest_timestamp() == 400.0

    old = [TankRecords.record("eu", 9, _day(n), n, pack({1: [n] * 13}), True) for n in range(5)]
    await store.tanks.save(old)
    await store.tanks.save(old[:2])  # a retried visit: replaced, not added
    assert await store.tanks.count() == 5
    now = dt.datetime(2025, 1, 1, tzinfo=dt.UTC).timestamp() + 442 * 86400  # days 0 and 1 expired
    retention = Retention(store, clock=lambda: now, pause=0)
    await retention.run()
    assert await store.tanks.collection.count_documents({}) == 3
    assert await store.tanks.count() == 3


@pytest.mark.gen_test(timeout=60)
async def test_an_expired_claim_taken_by_two_processes_at_once_goes_to_one(store):
    """The compare-and-set that replaced `$or`: of many processes taking the same expired slice claim
    (or lease) at the same instant, exactly one gets it; the holder renews; others wait for expiry."""
    tracked = store.tracked
    assert await tracked.claim("2025-01-01", 5, "a", now=0.0, ttl=10.0, due=0.0)
    wins = await asyncio.gather(*(tracked.claim("2025-01-01", 5, f"p{i}", 20.0, 10.0, 0.0) for i in range(8)))
    assert sum(wins) == 1
    winner = f"p{wins.index(True)}"
    assert await tracked.claim("2025-01-01", 5, winner, now=25.0, ttl=10.0, due=0.0)
    assert not await tracked.claim("2025-01-01", 5, "a", now=26.0, ttl=10.0, due=0.0)
    assert await tracked.finish("2025-01-01", 5, winner, now=27.0)
    assert not await tracked.claim("2025-01-01", 5, winner, now=99.0, ttl=10.0, due=0.0)  # finished
    fresh = await asyncio.gather(*(tracked.claim("2025-01-02", 1, f"q{i}", 0.0, 10.0, 0.0) for i in range(8)))
    assert sum(fresh) == 1  # a new claim created by many at once

    leases = store.leases
    # A lease of 2 s: the second process asks well within it even on a busy core (0.05 s was
    # over before the next call once, with another process keeping a core busy).
    assert await leases.acquire("jobs", "a", 2.0)
    assert not await leases.acquire("jobs", "b", 10)
    await asyncio.sleep(2.1)
    taken = await asyncio.gather(*(leases.acquire("jobs", f"p{i}", 10) for i in range(8)))
    assert sum(taken) == 1
    assert await leases.acquire("jobs", f"p{taken.index(True)}", 10)  # the holder renews


@pytest.mark.gen_test(timeout=60)
async def test_status_warns_when_the_embedded_database_nears_its_measured_ceiling(app, http_client, base_url):
    """/status stays ok below CEILING_WARN of the measured ceiling and says degraded, with the
    reason, from there on — only when the database is the embedded one."""
    import ujson

    from store.tanks import CEILING_WARN, COUNT, EMBEDDED_CEILING_RECORDS

    class Running:
        def status(self) -> dict:
            return {"state": "running", "restarts": 0, "restart_attempts": 0, "last_restart": None, "last_exit": None}

    services, store = app.settings["services"], app.settings["store"]

    async def status_with(records: int, embedded) -> dict:
        await store.tanks.freshness.count_set(COUNT, records)
        services.embedded_database = embedded
        services.status._value = None  # the database view is reused for CACHE_SECONDS
        services.answers.clear()  # ... and the rendered /status for its answer_seconds
        response = await http_client.fetch(base_url + "/api/v1/status", raise_error=False)
        assert response.code == 200
        return ujson.loads(response.body)["data"]

    below = int(CEILING_WARN * EMBEDDED_CEILING_RECORDS) - 1
    data = await status_with(below, Running())
    assert data["health"] == "ok" and data["health_reasons"] == [] and data["volume"]["tank_records"] == below
    data = await status_with(below + 1, Running())
    assert data["health"] == "degraded"
    assert any("ceiling" in reason for reason in data["health_reasons"]), data["health_reasons"]
    data = await status_with(EMBEDDED_CEILING_RECORDS * 2, None)  # on MongoDB: no such ceiling
    assert data["health"] == "ok" and data["volume"]["tank_records"] == EMBEDDED_CEILING_RECORDS * 2
