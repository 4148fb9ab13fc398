"""Writes as inserts first against a real MongoDB-wire server (SecantusDB): store/bulk.py
insert_or_upsert and Tracked.track_panel leave what the upserts they replaced left, and writing
twice what once does."""

from __future__ import annotations

import uuid

from pymongo import ReplaceOne, UpdateOne

from store import create_client
from store.bulk import insert_or_upsert


def canonical(docs: list[dict], drop_id: bool) -> list:
    """Documents as comparable data: field order is not data, nor a generated _id."""
    return sorted(repr(sorted((k, v) for k, v in doc.items() if not (drop_id and k == "_id"))) for doc in docs)


def test_inserts_then_upserts_leave_what_upserts_alone_do_and_twice_what_once_does(io_loop, mongo_uri):
    """Hypothesis: any batches of documents over a small key space (repeats across batches and
    within one), written as records are (a ReplaceOne by _id) and as snapshots are (an UpdateOne
    $set by a unique secondary key, no _id given), leave the same documents as the upserts alone;
    writing every batch again changes nothing; the count of created documents is the number of keys."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    client = create_client(mongo_uri)
    db = client["t_bulk_" + uuid.uuid4().hex[:10]]
    doc = st.fixed_dictionaries({"k": st.integers(0, 6), "v": st.integers(0, 3), "w": st.sampled_from(["a", "b"])})
    batches = st.lists(st.lists(doc, max_size=8), min_size=1, max_size=4)

    def replace(d: dict) -> ReplaceOne:
        return ReplaceOne({"_id": d["_id"]}, d, upsert=True)

    def set_by_key(d: dict) -> UpdateOne:
        return UpdateOne({"k": d["k"]}, {"$set": d}, upsert=True)

    async def one_example(written: list[list[dict]]) -> None:
        name = uuid.uuid4().hex[:10]
        for flavour, upsert_of, with_id in (("replace", replace, True), ("set", set_by_key, False)):
            fast, reference = db[f"{flavour}_f_{name}"], db[f"{flavour}_r_{name}"]
            for coll in (fast, reference):
                await coll.create_index("k", unique=True)
            batches_of = [[({"_id": f"id{d['k']}", **d} if with_id else dict(d)) for d in batch] for batch in written]
            created = 0
            for batch in batches_of:
                created += await insert_or_upsert(fast, batch, upsert_of)
                if batch:
                    await reference.bulk_write([upsert_of(dict(d)) for d in batch], ordered=False)
            once = canonical(await fast.find().to_list(None), drop_id=not with_id)
            assert once == canonical(await reference.find().to_list(None), drop_id=not with_id)
            assert created == len({d["k"] for batch in written for d in batch})
            ids = sorted(d["_id"] for d in await fast.find({}, {"_id": 1}).to_list(None))
            for batch in batches_of:  # again: nothing changes, nothing is created
                assert await insert_or_upsert(fast, batch, upsert_of) == 0
            assert canonical(await fast.find().to_list(None), drop_id=not with_id) == once
            assert sorted(d["_id"] for d in await fast.find({}, {"_id": 1}).to_list(None)) == ids
            await fast.drop()
            await reference.drop()

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    @given(batches)
    def check(written: list[list[dict]]) -> None:
        io_loop.run_sync(lambda: one_example(written), timeout=60)

    try:
        check()
    finally:
        io_loop.run_sync(lambda: client.drop_database(db.name), timeout=60)
        client.close()


def test_an_empty_batch_writes_nothing(io_loop, mongo_uri):
    client = create_client(mongo_uri)
    coll = client["t_bulk_" + uuid.uuid4().hex[:10]]["x"]

    async def run() -> None:
        assert await insert_or_upsert(coll, [], lambda d: ReplaceOne({"_id": d["_id"]}, d, upsert=True)) == 0
        assert await coll.count_documents({}) == 0
        await client.drop_database(coll.database.name)

    io_loop.run_sync(run, timeout=60)
    client.close()


def test_the_panels_tracking_leaves_what_an_upsert_per_member_did_and_twice_what_once_does(io_loop, mongo_uri):
    """Hypothesis: Tracked.track_panel (new members inserted, the others unparked and extended by
    updates per 100) over any calls (repeated and overlapping ids, parked and looked-up accounts,
    earlier and later `until`) leaves the documents an unpark and an upsert per member left (the
    writes it replaced), and every call made again changes nothing."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from store.tracker import PARKED, Tracked, slice_of, tracked_id

    client = create_client(mongo_uri)
    db = client["t_panel_" + uuid.uuid4().hex[:10]]
    call = st.tuples(
        st.lists(st.integers(500_000_000, 500_000_011), max_size=8),  # ids (repeats within a call too)
        st.integers(0, 5),  # until, in days
        st.booleans(),  # with the probe's last battle times
    )
    existing = st.lists(st.tuples(st.integers(500_000_000, 500_000_011), st.booleans()), max_size=5)

    def reference_ops(ids, until, now, last_battle) -> list[UpdateOne]:
        ops = []
        for account_id in ids:
            key = tracked_id("eu", account_id)
            insert = {
                "region": "eu",
                "account_id": account_id,
                "slice": slice_of("eu", account_id),
                "since": now,
                "last_visit_day": "",
                "panel_only": True,
            }
            if account_id in last_battle:
                insert["last_battle_time"] = last_battle[account_id]
            ops.append(UpdateOne({"_id": key, "last_visit_day": PARKED}, {"$set": {"last_visit_day": ""}}))
            ops.append(UpdateOne({"_id": key}, {"$setOnInsert": insert, "$max": {"until": until}}, upsert=True))
        return ops

    async def one_example(before: list, calls: list) -> None:
        name = uuid.uuid4().hex[:10]
        fast = Tracked(db)
        fast.collection = db[f"f_{name}"]  # a collection per example (the freshness figures are shared)
        reference = db[f"r_{name}"]
        for coll in (fast.collection, reference):  # tracked before: looked up (kept) or parked
            for account_id, parked in dict(before).items():
                await coll.insert_one(
                    {
                        "_id": tracked_id("eu", account_id),
                        "region": "eu",
                        "account_id": account_id,
                        "slice": slice_of("eu", account_id),
                        "last_visit_day": PARKED if parked else "2030-01-01",
                        "until": 2.0 * 86400,
                        "nickname": "Someone",
                    }
                )
        for k, (ids, days, with_battles) in enumerate(calls):
            now, until = 1000.0 + k, days * 86400.0
            last_battle = {a: 500 + a % 7 for a in ids} if with_battles else {}
            await fast.track_panel("eu", ids, until, now, last_battle)
            if ids:
                await reference.bulk_write(reference_ops(ids, until, now, last_battle), ordered=True)
        once = canonical(await fast.collection.find().to_list(None), drop_id=False)
        assert once == canonical(await reference.find().to_list(None), drop_id=False)
        for k, (ids, days, with_battles) in enumerate(calls):
            last_battle = {a: 500 + a % 7 for a in ids} if with_battles else {}
            assert await fast.track_panel("eu", ids, days * 86400.0, 1000.0 + k, last_battle) == 0
        assert canonical(await fast.collection.find().to_list(None), drop_id=False) == once
        await fast.collection.drop()
        await reference.drop()

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    @given(existing, st.lists(call, min_size=1, max_size=4))
    def check(before: list, calls: list) -> None:
        io_loop.run_sync(lambda: one_example(before, calls), timeout=60)

    try:
        check()
    finally:
        io_loop.run_sync(lambda: client.drop_database(db.name), timeout=60)
        client.close()
