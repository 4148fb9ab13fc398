"""store/tanks.py and store/tracker.py on a real MongoDB-wire server: packing, rebuilds, search, claims."""

from __future__ import annotations

import asyncio
import datetime as dt
import random

import pytest

from server.domain.records import Timeline, apply, as_counters, changed, pack, state_of, unpack
from store.constants import HISTORY_DAYS, TANK_COUNTERS
from store.tanks import KEYFRAME_MAX_RECORDS, RETENTION_DAYS, TankRecords
from store.tracker import PARKED, SLICES, slice_of


def _day(n: int) -> str:
    return (dt.date(2025, 1, 1) + dt.timedelta(days=n)).isoformat()


def test_counters_are_the_upstream_tank_counters():
    """The per-tank records keep exactly what the client asks the upstream for, and the period
    figures read only kept counters."""
    from server.domain.recents import PERIOD_COUNTERS
    from server.upstream.client import ACCOUNT_FIELDS, TANKS_FIELDS

    asked_per_tank = {f.removeprefix("all.") for f in TANKS_FIELDS.split(",") if f.startswith("all.")}
    asked_per_account = {
        f.removeprefix("statistics.all.") for f in ACCOUNT_FIELDS.split(",") if f.startswith("statistics.all.")
    }
    assert asked_per_tank == set(TANK_COUNTERS)
    # the account's spotting and tracking assistance: only per account, only as averages
    assert asked_per_account == {*TANK_COUNTERS, "avg_damage_assisted_radio", "avg_damage_assisted_track"}
    assert "mark_of_mastery" in TANKS_FIELDS.split(",")
    assert set(PERIOD_COUNTERS) <= set(TANK_COUNTERS)


def test_pack_round_trips_keyframes_and_changes():
    rng = random.Random(7)
    for _ in range(100):
        before = {
            rng.randrange(1, 70_000): [rng.randrange(0, 10**7) for _ in TANK_COUNTERS] for _ in range(rng.randrange(60))
        }
        after = {t: [v + rng.randrange(0, 500) for v in row] for t, row in before.items()}
        after[rng.randrange(1, 70_000)] = [rng.randrange(0, 100) for _ in TANK_COUNTERS]
        assert unpack(pack(before)) == before
        state = unpack(pack(before))
        apply(state, pack(changed(after, before), before))
        assert state == {**before, **after}
    # A negative difference (a corrected counter upstream) survives too.
    assert apply(
        {5: [10] * len(TANK_COUNTERS)}, pack({5: [9] * len(TANK_COUNTERS)}, {5: [10] * len(TANK_COUNTERS)})
    ) == {5: [9] * len(TANK_COUNTERS)}


def test_a_change_record_is_small():
    state = {
        tank: [1000 + tank, 500, 490, 10, 900_000, 1200, 1500, 800, 700, 650_000, 300, 9000, 7000]
        for tank in range(1, 300)
    }
    played = {t: [v + 7 for v in row] for t, row in list(state.items())[:4]}
    assert len(pack(played, state)) < 4 * 20  # one byte per small difference


@pytest.mark.gen_test(timeout=60)
async def test_state_on_rebuilds_any_day_from_keyframes_and_changes(store):
    tanks: TankRecords = store.tanks
    rng = random.Random(3)
    truth: dict[str, dict[int, list[int]]] = {}
    state = {t: [0] * len(TANK_COUNTERS) for t in (1, 17, 2305)}
    previous: dict[int, list[int]] = {}
    records = []
    since_key = 0
    for n in range(0, 100, 2):  # a record every other day
        for tank in rng.sample(sorted(state), 2):
            state[tank] = [v + rng.randrange(1, 50) for v in state[tank]]
        if rng.random() < 0.1:
            state[rng.randrange(3000, 4000)] = [rng.randrange(1, 9) for _ in TANK_COUNTERS]
        current = {t: list(row) for t, row in state.items() if row[0]}
        keyframe = not previous or since_key >= KEYFRAME_MAX_RECORDS - 1
        since_key = 0 if keyframe else since_key + 1
        payload = pack(current) if keyframe else pack(changed(current, previous), previous)
        battles = sum(row[0] for row in current.values())
        records.append(TankRecords.record("eu", 500000001, _day(n), battles, payload, keyframe))
        truth[_day(n)] = current
        previous = current
    await tanks.save(records)
    await tanks.save(records[:3])  # a retried visit replaces, never duplicates
    # Another account's records never leak into this one's.
    await tanks.save([TankRecords.record("eu", 5000000010, _day(1), 1, pack({9: [1] * 13}), True)])

    assert state_of(await tanks.chain_on("eu", 500000001, _day(-1))) is None
    for n in range(0, 101):
        got = state_of(await tanks.chain_on("eu", 500000001, _day(n)))
        record_day = _day(n - n % 2 if n < 100 else 98)
        assert got is not None and got[0] == record_day
        assert got[1] == {t: dict(zip(TANK_COUNTERS, row)) for t, row in truth[record_day].items()}

    days = await tanks.battles_by_day("eu", 500000001, _day(10), _day(20))
    assert [d for d, _ in days] == [_day(n) for n in range(10, 21, 2)]
    assert all(b == sum(row[0] for row in truth[d].values()) for d, b in days)
    assert await tanks.battles_by_day("eu", 500000001, _day(200), _day(300)) == []
    size = await tanks.stored_bytes()
    assert size["count"] == len(records) + 1 and size["size"] > 0

    # One timeline read (what a history answer uses) rebuilds the same state as state_on on every
    # day from its `since` on: mid-chain, on a keyframe's day, and long after the last record
    # (an account that stopped playing keeps its last state).
    for first in (0, 37, 60, 150):
        timeline = Timeline.of(await tanks.timeline_records("eu", 500000001, _day(first), _day(160)))
        for n in range(first, 161):
            assert timeline.state_on(_day(n)) == state_of(await tanks.chain_on("eu", 500000001, _day(n))), (first, n)
        if first <= 10:
            assert timeline.battles_by_day(_day(10), _day(20)) == days
    assert (Timeline.of(await tanks.timeline_records("eu", 500000001, _day(-5), _day(-1)))).state_on(_day(-1)) is None


@pytest.mark.gen_test(timeout=240)
async def test_every_day_of_the_last_400_rebuilds_through_idle_years_and_retention(store):
    """The tracker's record step (plan_visit: new records, the in-place keep after a gap, the
    re-keyframe of a long-idle account) and the retention job, day after day on a simulated clock:
    a month of play, a 46-day break, months idle, a fortnight of play, then well over
    RETENTION_DAYS idle and a last battle. On every day the oldest and the newest day of the last
    HISTORY_DAYS rebuild exactly, and at checkpoints every one of those days (state_on, and one
    timeline read)."""
    from types import SimpleNamespace

    from server.domain.days import DAY_SECONDS, day_start
    from server.jobs.retention import Retention
    from server.services.visit_plan import plan_visit, rekey_due

    region, account_id = "eu", 500_000_777
    rng = random.Random(11)
    played = {0, *(n for n in range(1, 30) if rng.random() < 0.6), 29, 76, *range(200, 216, 2), 701}
    last_day = 701 + RETENTION_DAYS + 5
    checkpoints = {RETENTION_DAYS, 520, 640, 700, 702, 1000, last_day}
    truth_state: dict[int, list[int]] = {t: [1] * len(TANK_COUNTERS) for t in (1, 17, 2305)}
    truth: dict[str, dict[int, list[int]]] = {}
    book: dict = {}
    stored: dict[int, list[int]] | None = None
    now = [0.0]
    retention = Retention(SimpleNamespace(expiring=store.tanks.expiring), clock=lambda: now[0], pause=0)
    rewrites = 0

    async def check(day: str) -> tuple[str, dict] | None:
        got = state_of(await store.tanks.chain_on(region, account_id, day))
        assert got is not None and got[0] <= day, (day, got)
        assert got[1] == as_counters(truth[day]), day
        return got

    for n in range(last_day + 1):
        day = _day(n)
        if n in played:
            for tank in rng.sample(sorted(truth_state), 2):
                truth_state[tank] = [v + rng.randrange(1, 40) for v in truth_state[tank]]
            if rng.random() < 0.2:
                truth_state[rng.randrange(3000, 4000)] = [rng.randrange(1, 9) for _ in TANK_COUNTERS]
        truth[day] = {t: list(row) for t, row in truth_state.items()}
        now[0] = day_start(day) + 6 * 3600  # the pass's visit
        if n in played or rekey_due(book, day):
            state = {t: list(row) for t, row in truth_state.items()} if n in played else None
            records, fields = plan_visit(region, account_id, book, stored, state, day)
            rewrites += sum(1 for doc in records if doc["_id"] < f"{region}:{account_id}:{day}")
            await store.tanks.save(records)
            book.update(fields)
            if "state" in fields:
                stored = unpack(fields["state"])
        now[0] = day_start(day) + DAY_SECONDS - 1  # the retention job, as late in the day as it gets
        await retention.run()
        if n >= HISTORY_DAYS - 1:
            window = [_day(m) for m in range(n - HISTORY_DAYS + 1, n + 1)]
            await asyncio.gather(check(window[0]), check(window[-1]))
            if n in checkpoints:
                # Every day's state_on, read concurrently (the server overlaps their round trips),
                # each against the truth and against one timeline read of the window.
                states = await asyncio.gather(*(check(d) for d in window))
                timeline = Timeline.of(await store.tanks.timeline_records(region, account_id, window[0], window[-1]))
                for d, got in zip(window, states):
                    assert timeline.state_on(d) == got, d
    # Keeping costs a rewrite after each gap and about one a year while idle, nothing more.
    assert 3 <= rewrites <= 6, rewrites
    size = await store.tanks.stored_bytes()
    assert size["count"] < len(played) + rewrites


@pytest.mark.gen_test(timeout=60)
async def test_search_prefix_is_case_insensitive_and_anchored(store):
    tracked = store.tracked
    await tracked.track_many("eu", [(1, "TankerBob"), (2, "tankerAlice"), (3, "BobTanker"), (4, "tan.ker")], 9e9, 0)
    await tracked.track("na", 5, "TANKMAN", 9e9, 0)
    eu = await tracked.search_prefix("eu", "TANKER")
    assert [(r["account_id"], r["nickname"], r["region"]) for r in eu] == [
        (2, "tankerAlice", "eu"),
        (1, "TankerBob", "eu"),
    ]
    assert {r["account_id"] for r in await tracked.search_prefix(None, "tank")} == {1, 2, 5}
    assert await tracked.search_prefix("eu", "tan.") == [{"account_id": 4, "nickname": "tan.ker", "region": "eu"}]
    assert len(await tracked.search_prefix(None, "t", limit=2)) == 2
    indexes = await tracked.collection.index_information()
    assert any(spec["key"] == [("region", 1), ("nickname_lower", 1)] for spec in indexes.values())


@pytest.mark.gen_test(timeout=60)
async def test_tracking_extends_parks_and_resumes(store):
    tracked = store.tracked
    await tracked.track("eu", 10, "a", until=100.0, now=0.0)
    await tracked.track("eu", 10, "a", until=50.0, now=1.0)  # a shorter end never shortens
    doc = await tracked.get("eu", 10)
    assert doc["until"] == 100.0 and doc["since"] == 0.0 and doc["slice"] == slice_of("eu", 10)
    assert doc["last_visit_day"] == ""
    assert [d["account_id"] for d in await tracked.due(doc["slice"], "2025-01-01", 10)] == [10]
    await tracked.park(["eu:10"], 200.0)
    assert await tracked.due(doc["slice"], "2025-01-01", 10) == []
    assert (await tracked.get("eu", 10))["last_visit_day"] == PARKED
    await tracked.track("eu", 10, "a", until=900.0, now=300.0)  # looked up again: due again
    assert [d["account_id"] for d in await tracked.due(doc["slice"], "2025-01-01", 10)] == [10]
    assert await tracked.count_active(500.0) == 1 and await tracked.count_active(901.0) == 0
    # Tracking ended again, then a cached read of the account (extend): due again, not only longer.
    await tracked.park(["eu:10"], 1000.0)
    assert await tracked.due(doc["slice"], "2025-01-02", 10) == []
    await tracked.extend("eu", 10, until=5000.0)
    assert [d["account_id"] for d in await tracked.due(doc["slice"], "2025-01-02", 10)] == [10]
    assert (await tracked.get("eu", 10))["until"] == 5000.0
    await tracked.extend("eu", 11, until=5000.0)  # never tracked: extend inserts nothing
    assert await tracked.get("eu", 11) is None
    # An account visited today keeps its visit mark when extended.
    await tracked.mark_days(["eu:10"], "2025-01-02")
    await tracked.extend("eu", 10, until=6000.0)
    assert (await tracked.get("eu", 10))["last_visit_day"] == "2025-01-02"


@pytest.mark.gen_test(timeout=60)
async def test_slice_claims_are_exclusive_until_they_expire_or_finish(store):
    tracked = store.tracked
    assert await tracked.claim("2025-01-01", 3, "a", now=0.0, ttl=10.0, due=0.0)
    assert not await tracked.claim("2025-01-01", 3, "b", now=5.0, ttl=10.0, due=0.0)
    assert await tracked.claim("2025-01-01", 3, "a", now=5.0, ttl=10.0, due=0.0)  # renewed
    assert not await tracked.claim("2025-01-01", 3, "b", now=14.0, ttl=10.0, due=0.0)
    assert await tracked.claim("2025-01-01", 3, "b", now=16.0, ttl=10.0, due=0.0)  # taken over
    assert not await tracked.finish("2025-01-01", 3, "a", now=17.0)
    assert await tracked.finish("2025-01-01", 3, "b", now=17.0)
    assert not await tracked.claim("2025-01-01", 3, "a", now=100.0, ttl=10.0, due=0.0)  # done for the day
    assert await tracked.finished_slices("2025-01-01") == {3}
    assert (
        0 <= min(slice_of("eu", a) for a in range(1000)) and max(slice_of("eu", a) for a in range(1000)) == SLICES - 1
    )
