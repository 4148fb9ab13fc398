"""Nickname search from the kept first-10 per prefix equals a search of every tracked nickname, whatever happened."""

from __future__ import annotations

import uuid

from hypothesis import HealthCheck, Phase, given, settings
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

    seen = {"kept": 0, "rebuilt": 0, "renamed": 0, "crashed": 0, "raced": 0}

    @settings(
        max_examples=25,
        deadline=None,
        phases=(Phase.explicit, Phase.reuse, Phase.generate),
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(script=st.lists(steps, min_size=20, max_size=50))
    def check(script):
        async def run() -> None:
            client = create_client(mongo_uri)
            name = "t_" + uuid.uuid4().hex[:12]
            tracked = Tracked(client[name])
            await tracked.ensure_schema()
            try:
                names: dict[str, str] = {}
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
                    elif kind == "race":
                        _, region, account, nick, length = step
                        prefix = names.get(tracked_id(region, account), nick)[:length].lower()
                        await tracked.prefixes.collection.update_one(
                            {"_id": f"{region}:{prefix}"}, {"$set": {"stale": True}}
                        )

                        async def racing_range(one: str, low: str, region=region, account=account, nick=nick):
                            rows = await tracked._nickname_range(one, low)
                            await tracked.track(region, account, nick, UNTIL, NOW)
                            seen["raced"] += 1
                            return rows

                        names[tracked_id(region, account)] = nick
                        await tracked.prefixes.first(region, prefix, KEEP, racing_range)
                    else:
                        _, region, text, limit = step
                        docs = await tracked.collection.find({}).to_list(None)
                        await check_searches(tracked, [(region, text, limit)], docs)
                # Settled: every prefix of every nickname, at KEEP results.
                docs = await tracked.collection.find({}).to_list(None)
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
