"""scripts/scale_loader.py (the bulk loader of scripts/bench_scale.py) writes exactly what the real pass writes.

The same seeded players answer the real tracker (server/services/tracker.py, run_days on a ManualClock)
as its upstream and feed the loader; per-tank records, snapshots, tracked documents and the
population's per-tank changes (tank_changes) must be equal document for document (snapshots apart
from their ObjectId _id). 33 days: past the 30-day keyframe bound, so the keyframe policy is
exercised as well. The changes' retention (the loader keeps the last CHANGE_DAYS days, as the
store's retention leaves them) is checked with a shorter bound against the real changes of those days.
"""

from __future__ import annotations

import copy
import json

import bson
import pytest
from bson.codec_options import CodecOptions

from scripts.scale_loader import SyntheticPlayer, days_from, load_account
from server.domain.days import DAY_SECONDS, ManualClock, day_start, utc_day
from server.domain.ratings import ExpectedValues
from server.services.tracker import Tracker
from store.population import CHANGE_DAYS
from tests.helpers import EXPECTED_VALUES_FILE, run_days

ACCOUNTS = [
    ("eu", 500_100_001),
    ("eu", 500_100_002),
    ("eu", 500_100_003),
    ("na", 1_000_200_001),
    ("asia", 2_000_300_001),
]
DAYS = 33
FIRST = "2025-03-01"


def _expected() -> tuple[ExpectedValues, list[int]]:
    if EXPECTED_VALUES_FILE.exists():
        expected = ExpectedValues.from_json(json.loads(EXPECTED_VALUES_FILE.read_text()))
        return expected, sorted(expected._by_tank)[:300]
    rows = [
        {"IDNum": t, "expDef": 1.0, "expFrag": 1.0, "expSpot": 1.0, "expDamage": 900.0, "expWinRate": 52.0}
        for t in range(1, 300)
    ]
    expected = ExpectedValues.from_json({"header": {"version": "test"}, "data": rows})
    return expected, list(range(1, 300))


class ModelUpstream:
    """The seeded players as the tracker's upstream, answering as of the tracker's clock."""

    def __init__(self, clock, players: dict[tuple[str, int], SyntheticPlayer], days: list[str]):
        self.clock = clock
        self.answers: dict[tuple[str, int, str], tuple[dict, list]] = {}
        for key, player in players.items():
            for day in days:
                player.advance(day)
                self.answers[(*key, day)] = (player.info(), player.raw_tanks())

    async def account_info(self, region, account_ids, *, fields=None, params=None, caller="other"):
        day = utc_day(self.clock())
        return {a: copy.deepcopy(self.answers[(region, a, day)][0]) for a in account_ids}

    async def tanks_stats(self, region, account_id, *, fields=None, params=None, caller="other"):
        return copy.deepcopy(self.answers[(region, account_id, utc_day(self.clock()))][1])

    async def account_wtr(self, region, account_ids, *, params=None, caller="other"):
        return dict.fromkeys(account_ids)


class Ratings:
    def __init__(self, expected, tiers):
        self.expected, self._tiers = expected, tiers

    async def expected_values(self, region=None):
        return self.expected

    async def tiers(self, region):
        return self._tiers


def _players(tank_ids, days):
    return {(r, a): SyntheticPlayer(r, a, tank_ids, days[0], f"Nick_{r}_{a}") for r, a in ACCOUNTS}


def _normal(doc: dict) -> dict:
    """A document as the service's client hands it back (BSON round trip: Binary, aware UTC datetimes)."""
    return bson.decode(bson.encode(doc), codec_options=CodecOptions(tz_aware=True))


@pytest.fixture
def store(io_loop, mongo_uri, db_name):
    from store import Store, create_client

    client = create_client(mongo_uri)
    store = Store(client, db_name, rate_collection_bytes=1 << 20, capped=False, ttl_indexes=False)
    io_loop.run_sync(store.ensure_schema)
    yield store
    client.close()  # the database is left in place (conftest.db_name says why)


def test_loader_writes_what_the_pass_writes(io_loop, store):
    expected, tank_ids = _expected()
    tiers = {t: 1 + t % 10 for t in tank_ids}
    days = days_from(FIRST, DAYS)
    since = day_start(FIRST)
    until = since + 400 * DAY_SECONDS
    clock = ManualClock(since)
    upstream = ModelUpstream(clock, _players(tank_ids, days), days)
    tracker = Tracker(store, upstream, Ratings(expected, tiers), clock=clock, owner="test")

    async def the_pass():
        for region in ("eu", "na", "asia"):
            ids = [(a, None) for r, a in ACCOUNTS if r == region]
            await store.tracked.track_many(region, ids, until, since)
        await run_days(tracker, clock, FIRST, DAYS, at_end=True)
        records = await store.tanks.collection.find({}).sort("_id", 1).to_list(None)
        snapshots = await store.players.snapshots.find({}, {"_id": 0}).to_list(None)
        tracked = await store.tracked.collection.find({}).sort("_id", 1).to_list(None)
        changes = await store.population.changes.collection.find({}).sort("_id", 1).to_list(None)
        return records, snapshots, tracked, changes

    records, snapshots, tracked, changes = io_loop.run_sync(the_pass, timeout=120)

    loaded_records, loaded_snapshots, loaded_tracked, loaded_changes = [], [], [], []
    for player in _players(tank_ids, days).values():
        r, s, t, c = load_account(player, days, since=since, until=until, expected=expected, tiers=tiers)
        loaded_records += r
        loaded_snapshots += s
        loaded_tracked.append(t)
        loaded_changes += c
    kept = 10  # a retention bound inside the 33 days: only the changes of the last 10 are loaded
    recent_changes = []
    for player in _players(tank_ids, days).values():
        loaded = load_account(player, days, since=since, until=until, expected=expected, tiers=tiers, change_days=kept)
        recent_changes += loaded.changes

    def by_key(docs):
        return sorted((_normal(d) for d in docs), key=lambda d: (d["region"], d["account_id"], d["date"]))

    assert len(records) > len(ACCOUNTS) * DAYS * 0.25  # the players played
    assert any(not doc.get("k") for doc in records) and sum(1 for doc in records if doc.get("k")) > len(ACCOUNTS)
    # The assistance and mastery badges pass through (what the marks of excellence are built from):
    # every record and change carries the account's assistance, every tracked account its badges.
    assert all(len(doc.get("s") or []) == 3 for doc in records)
    assert all(doc.get("assist") and doc.get("mastery") for doc in tracked)
    assert all(len(doc.get("s") or []) == 3 for doc in changes)
    assert sorted((_normal(d) for d in loaded_records), key=lambda d: d["_id"]) == records
    assert by_key(loaded_snapshots) == by_key(snapshots)
    assert sorted((_normal(d) for d in loaded_tracked), key=lambda d: d["_id"]) == tracked
    # The population's per-tank changes: one per account-day played after the first record.
    assert DAYS < CHANGE_DAYS and len(changes) > len(ACCOUNTS) * DAYS * 0.2  # all kept; the players played
    assert {f"{d['r']}:{d['a']}:{d['d']}" for d in changes} <= {f"{d['a']}:{d['d']}" for d in records}
    assert sorted((_normal(d) for d in loaded_changes), key=lambda d: d["_id"]) == changes
    assert sorted((_normal(d) for d in recent_changes), key=lambda d: d["_id"]) == [
        d for d in changes if d["d"] >= days[-kept]
    ]
    assert 0 < len(recent_changes) < len(changes)
