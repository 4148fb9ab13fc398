"""Nickname search from the kept first-10 per prefix equals a search of every tracked nickname, whatever happened."""

from __future__ import annotations

import uuid

from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from store.nicknames import KEEP, sync_ops
from store.tracker import Tracked, tracked_id

NOW = 1_780_000_000.0
UNTIL = NOW + 86_400 * 90
IDS = list(range(1, 41))
# Few letters, so that many nicknames share prefixes of every length the table keeps (3-8), and
# a prefix often has more than KEEP matches.
nicknames = st.builds(
    lambda head, tail: head + tail, st.sampled_from(["Ab", "ab", "AB", "Ba"]), st.text("abB", max_size=8)
)
regions = st.sampled_from(["eu", "eu", "na"])

steps = st.one_of(
    st.tuples(st.just("track"), regions, st.sampled_from(IDS), nicknames),
    st.tuples(st.just("track_many"), regions, st.lists(st.tuples(st.sampled_from(IDS), nicknames), max_size=15)),
    # A pass visit that saw the account's nickname (mark_visited sets it with the visit's fields).
    st.tuples(st.just("visit"), regions, st.sampled_from(IDS), nicknames),
    # A rename written while the table's update was cut short after `cut` of its writes (a crash):
    # the next write of the account's nickname must repair it.
    st.tuples(st.just("crash"), regions, st.sampled_from(IDS), nicknames, st.integers(0, 40)),
    st.tuples(st.just("crash"), regions, st.sampled_from(IDS), nicknames, st.integers(12, 30)),
    # A search that rebuilds a prefix while a lookup writes a nickname between its read of the
    # nickname index and its store of what it read.
    # The prefix is of the account's old nickname (or of the new one when it had none).
    st.tuples(st.just("race"), regions, st.sampled_from(IDS), nicknames, st.integers(3, 5)),
    # A process starts: it runs the one-off migration unless its marker is there.
    st.tuples(st.just("restart")),
    st.tuples(
        st.just("search"),
        st.sampled_from(["eu", "na", None]),
        st.text("abB", min_size=1, max_size=10),
        st.integers(1, KEEP),
    ),
)


async def check_searches(tracked: Tracked, prefixes: list[tuple], docs: list[dict]) -> None:
    for region, text, limit in prefixes:
        low = ("ab" + text)[:10].lower() if len(text) < 3 else text.lower()
        expect = sorted(
            (d["nickname"].lower(), d["region"], d["account_id"], d["nickname"])
            for d in docs
            if d.get("nickname") and d["nickname"].lower().startswith(low) and region in (None, d["region"])
        )[:limit]
        got = await tracked.search_prefix(region, low, limit)
        assert [(r["region"], r["account_id"], r["nickname"]) for r in got] == [(e[1], e[2], e[3]) for e in expect], (
            region,
            low,
            limit,
        )


def test_search_from_the_kept_prefixes_equals_a_search_of_every_nickname(io_loop, mongo_uri):
    """Random tracks, renames (case-only too), pass visits, repeated writes and writes cut short,
    with searches between them: every search answers what a search of all tracked nicknames
    answers, and a search after everything settles does too for every prefix of every nickname."""
    from store import create_client

    seen = {"kept": 0, "rebuilt": 0, "renamed": 0, "crashed": 0, "raced": 0, "legacy": 0, "migrated": 0, "exact": 0}

    # Accounts tracked before the prefix table existed (no nick_indexed, no marker): searches
    # rebuild from the nickname index until a restart's migration tells the table of them.
    # Half the examples without any (the table's own exactness is checked only then).
    legacies = st.one_of(st.just([]), st.lists(st.tuples(regions, st.sampled_from(IDS[:10]), nicknames), max_size=15))

    @settings(
        max_examples=25,
        deadline=None,
        phases=(Phase.explicit, Phase.reuse, Phase.generate),
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(script=st.lists(steps, min_size=20, max_size=50), legacy=legacies)
    # Always one prefix with more than KEEP matches ("kept"): random scripts reach one only most
    # of the time (a full run drew none once).
    @example(
        script=[("track_many", "eu", [(i, "abb" + "a" * i) for i in range(1, KEEP + 3)]), ("search", "eu", "b", KEEP)],
        legacy=[],
    )
    def check(script, legacy):
        async def run() -> None:
            client = create_client(mongo_uri)
            name = "t_" + uuid.uuid4().hex[:12]
            tracked = Tracked(client[name])
            await tracked.ensure_schema()
            try:
                names: dict[str, str] = {}
                if legacy:
                    await tracked.migrations.delete_many({})
                    tracked.prefixes.complete = False
                    for region, account, nick in legacy:
                        key = tracked_id(region, account)
                        names[key] = nick
                        doc = {
                            "region": region,
                            "account_id": account,
                            "nickname": nick,
                            "nickname_lower": nick.lower(),
                        }
                        await tracked.collection.replace_one({"_id": key}, doc, upsert=True)
                    seen["legacy"] += 1
                for step in script:
                    kind = step[0]
                    if kind == "track":
                        _, region, account, nick = step
                        key = tracked_id(region, account)
                        seen["renamed"] += key in names and names[key] != nick
                        names[key] = nick
                        await tracked.track(region, account, nick, UNTIL, NOW)
                    elif kind == "track_many":
                        _, region, pairs = step
                        for account, nick in pairs:
                            names[tracked_id(region, account)] = nick
                        await tracked.track_many(region, pairs, UNTIL, NOW)
                    elif kind == "visit":
                        _, region, account, nick = step
                        key = tracked_id(region, account)
                        if key in names:  # the pass visits tracked accounts only
                            names[key] = nick
                            await tracked.mark_visited({key: {"nickname": nick, "nickname_lower": nick.lower()}})
                    elif kind == "crash":
                        _, region, account, nick, cut = step
                        key = tracked_id(region, account)
                        if key in names:
                            doc = await tracked.collection.find_one({"_id": key})
                            await tracked.collection.update_one(
                                {"_id": key}, {"$set": {"nickname": nick, "nickname_lower": nick.lower()}}
                            )
                            ops = sync_ops(region, account, doc.get("nick_indexed"), nick)[:cut]
                            if ops:
                                await tracked.prefixes.apply(ops)
                            seen["crashed"] += 1
                            # The next write of its nickname (a lookup) repairs the table.
                            await tracked.track(region, account, nick, UNTIL, NOW)
                            names[key] = nick
                    elif kind == "restart":
                        tracked = Tracked(client[name])
                        seen["migrated"] += await tracked.migrations.count_documents({}) == 0 and bool(legacy)
                        await tracked.ensure_schema()
                    elif kind == "race":
                        _, region, account, nick, length = step
                        prefix = names.get(tracked_id(region, account), nick)[:length].lower()
                        await tracked.prefixes.collection.update_one(
                            {"_id": f"{region}:{prefix}"}, {"$set": {"stale": True}}
                        )

                        async def racing_range(one: str, low: str, region=region, account=account, nick=nick):
                            rows = await tracked._nickname_range(one, low)
                            await tracked.track(region, account, nick, UNTIL, NOW)
                            names[tracked_id(region, account)] = nick
                            seen["raced"] += 1
                            return rows

                        await tracked.prefixes.first(region, prefix, KEEP, racing_range)
                    else:
                        _, region, text, limit = step
                        docs = await tracked.collection.find({}).to_list(None)
                        await check_searches(tracked, [(region, text, limit)], docs)
                docs = await tracked.collection.find({}).to_list(None)
                if not legacy:
                    # Told of every nickname from the start, the table itself is right: every
                    # document not marked stale keeps exactly the first KEEP matches (the read's
                    # name check only heals what a table that missed a rename would answer).
                    for doc in await tracked.prefixes.collection.find({"stale": False}).to_list(None):
                        region, prefix = doc["_id"].split(":", 1)
                        truth = sorted(
                            (d["nickname"].lower(), d["account_id"], d["nickname"])
                            for d in docs
                            if d["region"] == region and d["nickname"].lower().startswith(prefix)
                        )[:KEEP]
                        assert [(e["n"], e["a"], e["d"]) for e in doc["top"]] == truth, doc["_id"]
                        seen["exact"] += 1
                # Settled: every prefix of every nickname, at KEEP results.
                assert {d["_id"]: d["nickname"] for d in docs} == names
                asked = {(d["region"], d["nickname"][:k]) for d in docs for k in range(3, len(d["nickname"]) + 1)}
                await check_searches(tracked, [(r, p, KEEP) for r, p in sorted(asked)], docs)
                kept = await tracked.prefixes.collection.find({}).to_list(None)
                seen["kept"] += sum(len(doc["top"]) == KEEP for doc in kept)
                seen["rebuilt"] += sum(doc["v"] > 0 and not doc["stale"] for doc in kept)
            finally:
                await client.drop_database(name)
                client.close()

        io_loop.run_sync(run, timeout=120)

    check()
    assert all(seen.values()), seen


def test_an_account_tracked_before_the_table_and_renamed_leaves_its_old_prefix(io_loop, mongo_uri):
    """The table was never told this account's old name (it was tracked before the table existed),
    yet a search that kept it under that name drops it once it is renamed: the read checks names."""
    from store import create_client

    async def run() -> None:
        client = create_client(mongo_uri)
        name = "t_" + uuid.uuid4().hex[:12]
        tracked = Tracked(client[name])
        try:
            key = tracked_id("eu", 7)
            old = {"region": "eu", "account_id": 7, "nickname": "Abcdef", "nickname_lower": "abcdef"}
            await tracked.collection.replace_one({"_id": key}, old, upsert=True)
            await tracked.track("eu", 8, "Abcxyz", UNTIL, NOW)  # told: creates the prefix documents
            # Before the migration marker, "abc" was rebuilt from the index with account 7 in it.
            found = await tracked.search_prefix("eu", "abc", KEEP)
            assert [r["account_id"] for r in found] == [7, 8]
            await tracked.track("eu", 7, "Zed", UNTIL, NOW)  # renamed; its old name was never told
            assert [r["account_id"] for r in await tracked.search_prefix("eu", "abc", KEEP)] == [8]
            assert [r["nickname"] for r in await tracked.search_prefix("eu", "zed", KEEP)] == ["Zed"]
        finally:
            await client.drop_database(name)
            client.close()

    io_loop.run_sync(run, timeout=60)
