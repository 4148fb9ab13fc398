"""store/bulk.py insert_or_upsert against a real MongoDB-wire server (SecantusDB): inserts first, the
duplicates' upserts after, leave what the upserts alone leave, and writing twice what once does."""

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
