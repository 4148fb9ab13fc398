"""Every store query stays O(result) as its collection grows, on the embedded database.

Each public async method of the store (store/*.py: found by reflection, so a new method without an
entry in REGISTRY or EXEMPT fails `test_every_store_method_has_a_check`) runs against two databases
on a SecantusDB child process of this module's own (`plans_uri`): one with SMALL (1,000) documents in every collection that
grows with accounts, days or clients, one with LARGE (10,000). The extra documents belong to other
accounts, clans, days, clients or keys, shaped as the store writes them, and never change the
result: a case's first answer must be the same at both sizes. The calls alternate between the two
sizes and each method fails when the median time at 10x exceeds RATIO_LIMIT times the median at 1x
(and by more than FLOOR_MS): its cost then grows with the collection rather than with the result.

SecantusDB's `explain` is a witness only where it says it used an index: it reports COLLSCAN for
`{_id: x, other: y}`, `_id $in` with another condition, and for every update and delete, all of
which run as point lookups. So an index plan whose totalDocsExamined grows with the collection
fails too; a reported COLLSCAN is shown in the message and judged by the clock alone.

Facts measured on this server (2,000 -> 20,000 documents): `_id` equality and `_id $in` are point
lookups; an `_id` range, any `$or`, `$regex`, `$in` on a secondary field, and a sort on an index
without a bounded range (even with limit 1) examine the whole collection; a bounded range on an
index, or an equality plus a range on a compound index, is O(matches).
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import importlib
import inspect
import itertools
import json
import os
import pkgutil
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from bson import Binary
from pymongo import MongoClient, monitoring

import store as store_package
from server.domain.records import changed, pack
from store.clans import CLAN_TTL_SECONDS, DIGEST_TTL_SECONDS, clan_key
from store.constants import TANK_COUNTERS
from store.nicknames import sync_ops
from store.players import PROFILE_TTL_SECONDS, player_key
from store.population import TankChanges
from store.retention import Expiring, delete_expired_batch, delete_expired_docs, expired_docs
from store.tanks import TankRecords
from store.tracker import PARKED, slice_of, tracked_id

SMALL, LARGE = (
    1_000,
    10_000,
)  # documents per growing collection at 1x and at 10x (a scan of 10,000 costs tens of ms: far past FLOOR_MS)
RATIO_LIMIT = 3.0  # 10x the documents may cost at most this many times the time (or documents examined)
FLOOR_MS = 3.0  # ... and a difference below this is noise, whatever the ratio
REPEATS = 7  # timed calls per size (the median counts)
SLOW_REPEATS = 3  # when one call already takes longer than SLOW_S (a scan: no need for more)
SLOW_S = 0.25
INSERT_CHUNK = 5_000
EXPLAINED = {"find", "count", "distinct", "aggregate", "findAndModify"}  # explain has executionStats for these

UTC = dt.UTC
# A fixed clock in the future: no TTL monitor ever expires the test's documents.
TODAY = dt.date(2031, 3, 15)
NOW = dt.datetime(2031, 3, 15, 12, 0, tzinfo=UTC).timestamp()
DAY = TODAY.isoformat()
YESTERDAY = (TODAY - dt.timedelta(days=1)).isoformat()
WINDOW = 30_000_000  # the rate counters' expiring windows are WINDOW + call number ...
CURRENT = WINDOW + 10**7  # ... and every client's current window is this one
GROWING = (
    "tracked",
    "nickname_prefixes",
    "tracker_slices",
    "tank_records",
    "snapshots",
    "players",
    "clans",
    "clan_digests",
    "clan_seeds",
    "clan_refs",
    "online_samples",
    "online_minutes",
    "online_daily",
    "rate_counters",
    "leases",
    "upstream_members",
    "tank_changes",
    "leaderboards",
    "watched",
)


def day(offset: int) -> str:
    return (TODAY + dt.timedelta(days=offset)).isoformat()


def day_date(iso: str) -> dt.datetime:
    return dt.datetime.fromisoformat(iso).replace(tzinfo=UTC)


def utc(ts: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(ts, UTC)


# --- the accounts, clans and keys every case asks about (the same in both databases) ----------
SEARCH_PREFIX = "qz"  # no background nickname starts with q
SEARCH_IDS = [900_000_000 + k for k in range(10)]
DUE_SLICES = (5, 6)


def _ids_in_slice(slice_no: int, start: int, count: int) -> list[int]:
    out, candidate = [], start
    while len(out) < count:
        if slice_of("eu", candidate) == slice_no:
            out.append(candidate)
        candidate += 1
    return out


DUE_IDS = {s: _ids_in_slice(s, 910_000_000 + s * 100_000, 5) for s in DUE_SLICES}
WRITE_IDS = [a for a in range(920_000_000, 920_000_100) if slice_of("eu", a) not in DUE_SLICES][:20]
NEWEST_TRACKED = SEARCH_IDS[0]
TANK_ACCOUNT, TANK_IDLE, TANK_WRITE, TANK_OLD = 930_000_001, 930_000_003, 930_000_002, 930_000_004
SNAP_IDS = [940_000_001, 940_000_002, 940_000_003]
SNAP_WRITE, SNAP_OLD = 940_000_009, 940_000_010
DUE_PROFILES = [950_000_001 + k for k in range(5)]
NEWEST_PROFILE, PROFILE_WRITE = 950_000_006, 950_000_009
CLAN_IDS = [960_000_001 + k for k in range(5)]
CLAN_WRITE, CLAN_GONE, CLAN_SEED_ADD, CLAN_SEED_REMOVE = (
    960_000_009,
    [960_000_021, 960_000_022],
    [960_000_031, 960_000_032, 960_000_033],
    [960_000_041, 960_000_042, 960_000_043],
)
COUNTER_KEYS = [f"me{k}|minute|{CURRENT}" for k in range(10)]
KEPT_COUNT = 123_456  # the kept per-tank record count in `freshness` (the same in both databases)


# --- document builders: the shapes the store writes ------------------------------------------
def _state(seed: int, tanks: int = 20) -> dict[int, list[int]]:
    return {1 + 16 * t: [(seed + t) * (c + 1) % 100_000 + 1 for c in range(len(TANK_COUNTERS))] for t in range(tanks)}


PAYLOADS = [pack(_state(seed)) for seed in range(8)]


def tracked_doc(region: str, account_id: int, nickname: str, **fields) -> dict:
    doc = {
        "_id": tracked_id(region, account_id),
        "region": region,
        "account_id": account_id,
        "nickname": nickname,
        "nickname_lower": nickname.lower(),
        "slice": slice_of(region, account_id),
        "since": NOW - 30 * 86400,
        "until": NOW + 30 * 86400,
        "last_visit_day": DAY,
        "last_battle_time": int(NOW) - 86400,
        "record_day": YESTERDAY,
        "keyframe_day": day(-20),
        "keyframe_bytes": len(PAYLOADS[0]),
        "chain_records": 19,
        "chain_bytes": 19 * 40,
        "kept_day": day(-20),
        "state": Binary(PAYLOADS[account_id % len(PAYLOADS)]),
    }
    doc.update(fields)
    return doc


def _letters(i: int) -> str:
    return "".join(chr(ord("a") + int(h, 16)) for h in f"{i * 2654435761 % 2**32:08x}")  # a-p only


def tracked_others(n: int) -> list[dict]:
    # Accounts of every region and slice, visited today or parked, whose tracking has ended; the
    # search's prefix table was told of their nicknames (nick_indexed), so the start-up migration
    # tells it only of the targets.
    return [
        tracked_doc(
            ("eu", "na", "asia")[i % 3],
            100_000_000 + i,
            _letters(i) + "_" + str(i),
            since=NOW - 40 * 86400 - i,
            until=NOW - 86400,
            last_visit_day=DAY if i % 2 else PARKED,
            nick_indexed=_letters(i) + "_" + str(i),
        )
        for i in range(n)
    ]


def tracked_targets() -> list[dict]:
    docs = [tracked_doc("eu", a, f"Qzar{k:02d}", since=NOW - 100) for k, a in enumerate(SEARCH_IDS)]
    docs[0]["since"] = NOW
    for ids in DUE_IDS.values():
        docs += [tracked_doc("eu", a, f"due{a}", since=NOW - 200, last_visit_day=YESTERDAY) for a in ids]
    docs += [tracked_doc("eu", a, f"write{a}", since=NOW - 300) for a in WRITE_IDS]
    return docs


def slice_doc(day_: str, slice_no: int, **fields) -> dict:
    doc = {
        "_id": f"{day_}:{slice_no:03d}",
        "day": day_,
        "slice": slice_no,
        "owner": "proc-old",
        "expires": NOW - 86400,
        "due": NOW - 86400,
        "started": NOW - 86400,
        "finished": NOW - 80000,
        "visited": 150,
        "info_requests": 2,
        "tanks_requests": 30,
        "records": 20,
        "record_bytes": 4000,
    }
    doc.update(fields)
    return doc


def slice_others(n: int) -> list[dict]:
    # Earlier days' claims: 64 a day, from 2020 on (forget_slices_before's cutoff is 2020-01-01).
    start = dt.date(2020, 1, 1)
    return [slice_doc((start + dt.timedelta(days=i // 64)).isoformat(), i % 64) for i in range(n)]


def slice_targets() -> list[dict]:
    docs = []
    for s in range(64):
        if s < 32:
            docs.append(slice_doc(DAY, s))
        else:
            docs.append(slice_doc(DAY, s, owner="proc-other", expires=NOW + 600, finished=None))
    docs[40].update(owner="me", expires=NOW + 600)
    return docs


def tank_chain(region: str, account_id: int, days: list[str], keyframe_every: int = 30) -> list[dict]:
    records, previous = [], None
    for n, d in enumerate(days):
        current = _state(account_id % 97 + n // 3 * 7)
        keyframe = n % keyframe_every == 0
        payload = pack(current) if keyframe else pack(changed(current, previous), previous)
        battles = sum(row[0] for row in current.values())
        records.append(TankRecords.record(region, account_id, d, battles, payload, keyframe))
        previous = current
    return records


def tank_others(n: int) -> list[dict]:
    # Other accounts' records of the same 40 days: only the account separates them from the target's.
    docs = []
    for a in range(n // 40):
        docs += tank_chain(("eu", "na", "asia")[a % 3], 200_000_000 + a, [day(k - 39) for k in range(40)])
    return docs


def tank_targets() -> list[dict]:
    return [
        *tank_chain("eu", TANK_ACCOUNT, [day(k - 59) for k in range(60)]),
        *tank_chain("eu", TANK_IDLE, [day(-200)]),  # idle since: every lookback window is read
    ]


POPULATION_ACCOUNTS = [960_000_001 + k for k in range(20)]  # the eu accounts that played on DAY


def change_doc(region: str, account_id: int, date: str) -> dict:
    return TankChanges.change(region, account_id, date, pack({t: [1, 1, 0, 0, 900] + [1] * 8 for t in (1, 17, 33)}))


def change_others(n: int) -> list[dict]:
    # Other days' changes of eu accounts, and DAY's of other regions: only (r, d) separates them.
    return [
        change_doc("eu", 970_000_000 + i, day(-1 - i % 90)) if i % 4 else change_doc("na", 980_000_000 + i, DAY)
        for i in range(n)
    ]


def tank_day_doc(region: str, date: str) -> dict:
    return {"_id": f"{region}:{date}", "r": region, "d": date, "accounts": 3, "tanks": {"1": [3] + [1] * 13}}


def marks_day_doc(region: str, date: str) -> dict:
    tanks = {str(t): [1800.0 + t, 2200.0 + t, 2600.0 + t, 3100.0 + t, 25, 400] for t in range(1, 600, 7)}
    return {"_id": f"{region}:{date}", "r": region, "d": date, "built_at": NOW, "tanks": tanks}


def official_day_doc(region: str, date: str) -> dict:
    rows = {str(t): [1800.0 + t, 2200.0 + t, 2600.0 + t, 3100.0 + t] for t in range(1, 600, 7)}
    return {
        "_id": f"{region}:{date}",
        "r": region,
        "d": date,
        "fetched_at": NOW,
        "updated_at": NOW - 3600,
        "damage": rows,
        "damage_percentiles": [65, 85, 95, 100],
        "xp": rows,
        "xp_percentiles": [50, 80, 95, 99],
        "x": day_date(date),
    }


def series_doc(region: str, tank_id: int) -> dict:
    return {"_id": f"{region}:{tank_id}", "r": region, "tank_id": tank_id, "through": DAY, "days": [DAY]}


def snapshot_doc(region: str, account_id: int, date: str) -> dict:
    totals = {f: (account_id + i * 31) % 100_000 for i, f in enumerate(TANK_COUNTERS)}
    return {
        "region": region,
        "account_id": account_id,
        "date": date,
        "taken_at": int(day_date(date).timestamp()) + 3600,
        "clan_id": 0,
        **totals,
        "wn8": 1500.5,
        "wn7": 1200.25,
        "efficiency": 1300.0,
        "day": day_date(date),
    }


def snapshot_others(n: int) -> list[dict]:
    return [snapshot_doc("eu", 300_000_000 + i // 20, day(i % 20 - 19)) for i in range(n)]


def snapshot_targets() -> list[dict]:
    return [snapshot_doc("eu", a, day(k - 59)) for a in SNAP_IDS for k in range(60)]


def profile_doc(region: str, account_id: int, cached_at: float, **fields) -> dict:
    doc = {
        "_id": player_key(region, account_id),
        "region": region,
        "account_id": account_id,
        "nickname": f"p{account_id}",
        "clan_id": 0,
        "created_at": 1_300_000_000,
        "last_battle_time": int(cached_at) - 3600,
        "updated_at": int(cached_at) - 3000,
        "totals": {f: (account_id + i) % 90_000 for i, f in enumerate(TANK_COUNTERS)},
        "tanks": [
            {"tank_id": 1 + 16 * t, **{f: (account_id + t + i) % 5000 for i, f in enumerate(TANK_COUNTERS)}}
            for t in range(5)
        ],
        "cached_at": cached_at,
        "ratings": {"wn8": 1500.0, "wn7": 1200.0, "efficiency": 1300.0, "calculated_at": int(cached_at)},
        "expires_at": utc(cached_at + PROFILE_TTL_SECONDS),
        "last_requested": NOW - 3 * 86400,
    }
    doc.update(fields)
    return doc


def profile_others(n: int) -> list[dict]:
    # Requested days ago, cached hours ago; eu players without a clan (the clan-reference read is
    # per region), na and asia ones in clans.
    docs = []
    for i in range(n):
        region = ("eu", "na", "asia")[i % 3]
        clan = 0 if region == "eu" else 500_000_000 + i % 500
        docs.append(profile_doc(region, 100_000_000 + i, NOW - 5 * 3600 - i, clan_id=clan))
    return docs


def profile_targets() -> list[dict]:
    docs = [
        profile_doc("eu", a, NOW - 3000, last_requested=NOW - 600, clan_id=c) for a, c in zip(DUE_PROFILES, CLAN_IDS)
    ]
    docs.append(profile_doc("eu", NEWEST_PROFILE, NOW, last_requested=NOW - 60, clan_id=CLAN_IDS[0]))
    return docs


def glance_doc(region: str, account_id: int) -> dict:
    """A roster's fetch as store.glances.Glances.save_many writes it."""
    return {
        "_id": player_key(region, account_id),
        "account_id": account_id,
        "fetched_at": NOW - 600,
        "expires_at": utc(NOW + 3000),
        "reason": None,
        "nickname": f"p{account_id}",
        "clan": None,
        "totals": dict.fromkeys(("battles", "wins", "damage_dealt"), 100),
        "tanks": [[1, 100, 50, 2], [17, 20, 10, 0]],
    }


def clan_doc(region: str, clan_id: int, cached_at: float, referenced_at: float) -> dict:
    members = [
        {
            "account_id": clan_id * 10 + m,
            "name": f"m{m}",
            "role": "private",
            "joined_at": 1_600_000_000,
            "measured": True,
            "battles": 1000 + m,
            "wins": 520,
            "damage_dealt": 900_000,
            "rating": None,
        }
        for m in range(3)
    ]
    return {
        "_id": clan_key(region, clan_id),
        "region": region,
        "clan_id": clan_id,
        "tag": f"T{clan_id % 10000}",
        "name": f"clan {clan_id}",
        "members_count": len(members),
        "ratings": {"global_rating": 1000},
        "members_avg": {"battles": 1001, "wn8": None},
        "members": members,
        "member_changes": [],
        "cached_at": cached_at,
        "referenced_at": referenced_at,
        "expires_at": utc(cached_at + CLAN_TTL_SECONDS),
    }


def digest_doc(region: str, clan_id: int, computed_at: float) -> dict:
    data = {"period": {"start": day(-7), "end": day(-1)}, "battles": 1234, "joined": [], "left": []}
    return {
        "_id": clan_key(region, clan_id),
        "region": region,
        "clan_id": clan_id,
        "data": data,
        "computed_at": computed_at,
        "period_end": data["period"]["end"],
        "clan_cached_at": computed_at - 60,
        "expires_at": utc(computed_at + DIGEST_TTL_SECONDS),
    }


def seed_doc(region: str, clan_id: int) -> dict:
    return {"_id": clan_key(region, clan_id), "region": region, "clan_id": clan_id, "added_at": NOW - 86400}


def _other_clan(i: int) -> tuple[str, int]:
    return ("eu", "na", "asia")[i % 3], 400_000_000 + i


def clan_others(n: int) -> list[dict]:
    # Refreshed days ago, last referenced weeks ago.
    return [clan_doc(*_other_clan(i), NOW - 2 * 86400 - i, NOW - 20 * 86400) for i in range(n)]


def clan_targets() -> list[dict]:
    return [clan_doc("eu", c, NOW - 600 + k, NOW - 100) for k, c in enumerate(CLAN_IDS)]


def sample_docs(game: str, region: str, minutes: list[float], servers: int = 2) -> list[dict]:
    return [
        {"minute": utc(m), "meta": {"game": game, "region": region, "server": f"{region.upper()}{s}"}, "players": 1000}
        for m in minutes
        for s in range(servers)
    ]


DAY_START = day_date(DAY).timestamp()


def sample_others(n: int) -> list[dict]:
    # The minutes before today's (a week of one region's two servers at 20,000 documents).
    return sample_docs("wot", "eu", [DAY_START - 60 * (k + 1) for k in range(n // 2)])


def sample_targets() -> list[dict]:
    return sample_docs("wot", "eu", [DAY_START + 60 * k for k in range(60)])


def minute_claims(n: int) -> list[dict]:
    return [
        {"_id": f"wot:{r}:{int(DAY_START) - 60 * (i // 3 + 1)}", "minute": utc(DAY_START - 60 * (i // 3 + 1))}
        for i in range(n)
        for r in [("eu", "na", "asia")[i % 3]]
    ]


def daily_doc(game: str, region: str, date: str) -> dict:
    return {
        "_id": f"{game}:{region}:{date}",
        "date": date,
        "samples": 1440,
        "peak": 90_000,
        "peak_minute": day_date(date) + dt.timedelta(hours=19),
        "min": 20_000,
        "avg": 50_000.5,
        "game": game,
        "region": region,
        "day": day_date(date),
    }


def daily_others(n: int) -> list[dict]:
    # Every game and region, on the days before the asked month (wot:eu among them).
    return [
        daily_doc(("wot", "wotb", "wows")[i % 3], ("eu", "na", "asia")[(i // 3) % 3], day(-31 - i // 9))
        for i in range(n)
    ]


def daily_targets() -> list[dict]:
    return [daily_doc("wot", "eu", day(k - 30)) for k in range(30)]


def counter_others(n: int) -> list[dict]:
    return [{"_id": f"client{i}|minute|{CURRENT}", "n": 1 + i % 50, "w": CURRENT} for i in range(n)]


def counter_targets() -> list[dict]:
    return [{"_id": key, "n": 5, "w": CURRENT} for key in COUNTER_KEYS]


def ref_doc(region: str, clan_id: int, at: float) -> dict:
    return {
        "_id": clan_key(region, clan_id),
        "region": region,
        "clan_id": clan_id,
        "at": at,
        "expires_at": utc(at + 7200),
    }


def freshness_docs() -> list[dict]:
    # The maintained figures (store/freshness.py) as the store's writers keep them for the targets.
    return [
        {"_id": "newest_tracked", "newest": NOW},
        {"_id": "newest_player", "newest": NOW},
        {"_id": "newest_clan", "newest": NOW - 596},
        {"_id": "tank_records", "count": KEPT_COUNT},
    ]


def lease_others(n: int) -> list[dict]:
    expires = dt.datetime.now(UTC) + dt.timedelta(days=1)
    return [{"_id": f"lease-{i}", "owner": f"proc-{i}", "expires": expires, "renewed": expires} for i in range(n)]


def member_others(n: int) -> list[dict]:
    # Processes seen in the last day but not in the last minute: neither counted nor forgotten.
    return [{"_id": f"proc-{i}", "seen": NOW - 3600 - i % 1000} for i in range(n)]


def member_targets() -> list[dict]:
    return [{"_id": f"live-{k}", "seen": NOW} for k in range(3)]


BOARD_BUILD = f"{DAY}.100"
BOARD_KEY = "30:all:wn8:100"


def board_chunk(region: str, build: str, key: str, index: int) -> dict:
    rows = [[index * 100 + k + 1, 500_000_000 + k, 2000.5 - k, 150, f"player{k}", None] for k in range(100)]
    return {"_id": f"{region}:{build}:{key}:{index}", "r": region, "b": build, "total": 10_000, "rows": rows}


def board_pointer(region: str) -> dict:
    windows = {"30": {"from": day(-29), "through": DAY, "players": 1000, "ranked": {"100": 10_000}}}
    return {
        "_id": f"{region}:current",
        "r": region,
        "build": BOARD_BUILD,
        "through": DAY,
        "built_at": NOW,
        "windows": windows,
    }


WATCHED_IDS = [500_000_000 + 7 * k for k in range(5)]
WATCHED_KEYS = [f"eu:{a}" for a in WATCHED_IDS]


def watched_doc(region: str, account_id: int, next_at: float) -> dict:
    capture = {"at": NOW - 600, "lbt": 1, "s": b"\x01", "assist": None}
    return {
        "_id": f"{region}:{account_id}",
        "r": region,
        "a": account_id,
        "until": NOW + 600,
        "next": next_at,
        "v": 3,
        "first": capture,
        "latest": capture,
        "expires_at": utc(NOW + 86400),
    }


def watched_others(n: int) -> list[dict]:
    """Other regions' watches (due too), and eu watches that ended (never due until asked again)."""
    return [
        watched_doc(("na", "asia", "eu")[i % 3], 600_000_000 + i, float("inf") if i % 3 == 2 else NOW - 30)
        for i in range(n)
    ]


POPULATION: dict[str, tuple[Callable[[int], list[dict]], Callable[[], list[dict]]]] = {
    "tracked": (tracked_others, tracked_targets),
    "tracker_slices": (slice_others, slice_targets),
    # The kept first nicknames of other accounts' 8-letter prefixes (the targets' are built by the
    # untimed first call of each case, as the first search of a prefix builds it).
    "nickname_prefixes": (
        lambda n: [
            {
                "_id": f"eu:{_letters(i)}",
                "top": [{"n": _letters(i) + "_" + str(i), "a": 100_000_000 + i, "d": _letters(i) + "_" + str(i)}],
                "stale": False,
                "v": 1,
            }
            for i in range(n)
        ],
        lambda: [],
    ),
    "tank_records": (tank_others, tank_targets),
    "snapshots": (snapshot_others, snapshot_targets),
    "players": (profile_others, profile_targets),
    # Other accounts' roster fetches, and the targets' (a roster reads up to 100 by _id).
    "glances": (
        lambda n: [glance_doc(("eu", "na", "asia")[i % 3], 100_000_000 + i) for i in range(n)],
        lambda: [glance_doc("eu", a) for a in DUE_PROFILES],
    ),
    "clans": (clan_others, clan_targets),
    "clan_digests": (
        lambda n: [digest_doc(*_other_clan(i), NOW - 3 * 86400) for i in range(n)],
        lambda: [digest_doc("eu", c, NOW - 600) for c in CLAN_IDS],
    ),
    "clan_seeds": (lambda n: [seed_doc(*_other_clan(i)) for i in range(n)], lambda: []),
    # Clans named by profiles saved hours ago (refreshed by then), and the targets' clans just now.
    "clan_refs": (
        lambda n: [ref_doc(*_other_clan(i), NOW - 5 * 3600 - i) for i in range(n)],
        lambda: [ref_doc("eu", c, NOW - 600) for c in CLAN_IDS],
    ),
    "online_samples": (sample_others, sample_targets),
    "online_minutes": (minute_claims, lambda: []),
    "online_daily": (daily_others, daily_targets),
    "rate_counters": (counter_others, counter_targets),
    "leases": (lease_others, lambda: []),
    "upstream_members": (member_others, member_targets),
    "freshness": (lambda n: [], freshness_docs),  # one document per figure: does not grow
    "tank_changes": (change_others, lambda: [change_doc("eu", a, DAY) for a in POPULATION_ACCOUNTS]),
    # Bounded, read and written by _id only: one document per region and day, kept 400 days (at
    # most 1,200), and one per region and tank: the same few hundred at both sizes.
    "tank_days": (
        lambda n: [tank_day_doc(("na", "asia", "eu")[i % 3], day(-1 - i // 3)) for i in range(min(n, 1_200))],
        lambda: [tank_day_doc("eu", DAY)],
    ),
    "tank_series": (
        lambda n: [series_doc(("na", "asia")[i % 2], 100_000 + i) for i in range(min(n, 1_000))],
        lambda: [series_doc("eu", 17)],
    ),
    # Chunks of other regions' builds (they grow with the tracked accounts), and eu's pointer and
    # the current build's first chunk of one list.
    "leaderboards": (
        lambda n: [board_chunk(("na", "asia")[i % 2], f"{DAY}.1", "30:all:wn8:100", i // 2) for i in range(n)],
        lambda: [board_chunk("eu", BOARD_BUILD, BOARD_KEY, 0), board_pointer("eu")],
    ),
    "watched": (watched_others, lambda: [watched_doc("eu", a, NOW - 30) for a in WATCHED_IDS]),
    # One document per region and day, kept 100 days (at most 300), read and written by _id.
    "tank_marks": (
        lambda n: [marks_day_doc(("na", "asia", "eu")[i % 3], day(-1 - i // 3)) for i in range(min(n, 300))],
        lambda: [marks_day_doc("eu", DAY)],
    ),
    # One document per region and day, kept 400 days (at most 1,200): the newest of a region is read
    # by an equality and a bounded range on (r, d).
    "official_marks": (
        lambda n: [official_day_doc(("na", "asia", "eu")[i % 3], day(-1 - i // 3)) for i in range(min(n, 1200))],
        lambda: [official_day_doc("eu", DAY)],
    ),
}
assert set(GROWING) <= set(POPULATION)


# --- the checks: how each method is called -----------------------------------------------------
Call = Callable[[Any, int], Awaitable[Any]]  # (store, call number) -> the method's answer


@dataclasses.dataclass
class Case:
    call: Call  # timed
    setup: Call | None = None  # before every call, untimed (puts back what the call deletes or changes)
    label: str = ""
    expect: Callable[[Any], bool] | None = None  # the answer is the intended one (not an empty miss)


async def _delete_ids(collection, ids: list) -> None:
    await collection.delete_many({"_id": {"$in": ids}})


async def _put_tank_old(s, n: int) -> None:
    await s.tanks.collection.insert_many(tank_chain("eu", TANK_OLD, [f"2029-01-{k + 1:02d}" for k in range(25)]))


async def _put_slices_old(s, n: int) -> None:
    await s.tracked.slices.insert_many([slice_doc("2019-12-31", k) for k in range(64)])


async def _put_counters_old(s, n: int) -> None:
    # 50 counters of the window just ended (the call expires windows before WINDOW + n).
    window = WINDOW + n - 1
    await s.rate_counters.collection.insert_many(
        [{"_id": f"old{k}|minute|{window}", "n": 1, "w": window} for k in range(50)]
    )


async def _put_samples_old(s, n: int) -> None:
    old = day_date("2029-06-01").timestamp()
    await s.online.samples.insert_many(sample_docs("wotb", "eu", [old + 60 * k for k in range(25)]))


async def _put_gone(s, n: int) -> None:
    for collection, build in ((s.clans.clans, lambda c: clan_doc("eu", c, NOW - 86400, NOW - 20 * 86400)),
                              (s.clans.digests, lambda c: digest_doc("eu", c, NOW - 86400)),
                              (s.clans.seeds, lambda c: seed_doc("eu", c))):  # fmt: skip
        await _delete_ids(collection, [clan_key("eu", c) for c in CLAN_GONE])
        await collection.insert_many([build(c) for c in CLAN_GONE])


def _tank_write_records(n: int) -> list[dict]:
    return tank_chain("eu", TANK_WRITE, [day(-2), day(-1), day(0)])


def _snapshots_write(n: int) -> list[dict]:
    snaps = [snapshot_doc("eu", SNAP_WRITE, day(-k)) for k in range(3)]
    for snap in snaps:
        snap.pop("day")
        snap["battles"] += n
    return snaps


def _profile_write(n: int) -> dict:
    doc = profile_doc("eu", PROFILE_WRITE, NOW - 7200 + n)
    for field in ("_id", "expires_at", "last_requested"):
        doc.pop(field)
    return doc


def _clan_write(n: int) -> dict:
    doc = clan_doc("eu", CLAN_WRITE, NOW - 3 * 86400 + n, NOW - 20 * 86400)
    doc.pop("expires_at")
    return doc


def _visits(n: int) -> dict[str, dict]:
    return {
        tracked_id("eu", a): {"last_visit_day": DAY, "record_day": DAY, "chain_records": n, "state": PAYLOADS[n % 8]}
        for a in WRITE_IDS[:10]
    }


def _expiring(s, name: str) -> Expiring:
    """The retention job's own description of a collection's expiry (Store.expiring)."""
    return next(item for item in s.expiring() if item.name == name)


# What `expired_docs` found for each store, found in a case's (untimed) setup, so that the timed
# call is `delete_expired_docs` alone, as the retention job runs it.
FOUND: dict[int, list[dict]] = {}


def _put_and_find(name: str, put: Callable[[Any, int], Awaitable[Any]], cutoff: str) -> Call:
    async def setup(s, n: int) -> None:
        await put(s, n)
        FOUND[id(s)] = await expired_docs(_expiring(s, name), day_date(cutoff), 1000)

    return setup


async def _expired_days(s, name: str, cutoff: str) -> list:
    """`expired_docs`' answer without the `_id`s (each database's own), comparable across sizes."""
    item = _expiring(s, name)
    return [doc[item.field] for doc in await expired_docs(item, day_date(cutoff), 1000)]


async def _put_snapshots_old(s, n: int) -> None:
    await s.players.snapshots.delete_many({"region": "eu", "account_id": SNAP_OLD})  # a find deletes none
    await s.players.snapshots.insert_many([snapshot_doc("eu", SNAP_OLD, f"2029-01-{k + 1:02d}") for k in range(25)])


WRITE_KEYS = [tracked_id("eu", a) for a in WRITE_IDS]
EU = ("eu",)
DATE = dt.date.fromisoformat

REGISTRY: dict[str, list[Case]] = {
    # --- tracked accounts and the pass's (day, slice) claims: store/tracker.py
    "Tracked.track": [Case(lambda s, n: s.tracked.track("eu", WRITE_IDS[0], "Writer", NOW + 86400 * 30, NOW))],
    "Tracked.track_many": [
        Case(lambda s, n: s.tracked.track_many("eu", [(a, f"w{a}") for a in WRITE_IDS[:10]], NOW + 86400 * 30, NOW))
    ],
    "Tracked.extend": [Case(lambda s, n: s.tracked.extend("eu", WRITE_IDS[1], NOW + 86400 * 31))],
    "Tracked.get": [Case(lambda s, n: s.tracked.get("eu", SEARCH_IDS[1]), expect=bool)],
    "Tracked.track_panel": [Case(lambda s, n: s.tracked.track_panel("eu", WRITE_IDS[:10], NOW + 86400 * 3, NOW))],
    "Tracked.panel_books": [
        Case(lambda s, n: s.tracked.panel_books(WRITE_KEYS), expect=lambda r: len(r) == len(WRITE_KEYS))
    ],
    "Tracked.mastery_payload": [
        Case(lambda s, n: s.tracked.mastery_payload("eu", SEARCH_IDS[1]), expect=lambda r: isinstance(r, bytes))
    ],
    "Tracked.last_measured_day": [
        Case(lambda s, n: s.tracked.last_measured_day("eu", DUE_IDS[5][0]), expect=lambda r: r == YESTERDAY)
    ],
    "Tracked.search_prefix": [
        Case(lambda s, n: s.tracked.search_prefix("eu", SEARCH_PREFIX, 10), expect=lambda r: len(r) == 10),
        Case(lambda s, n: s.tracked.search_prefix("eu", "qzar", 10), label="kept", expect=lambda r: len(r) == 10),
        Case(lambda s, n: s.tracked.search_prefix("eu", "qzar0", 5), label="5-of-10", expect=lambda r: len(r) == 5),
    ],
    "Tracked.sync_nicknames": [
        Case(
            lambda s, n: s.tracked.sync_nicknames([tracked_id("eu", WRITE_IDS[2])]),
            setup=lambda s, n: s.tracked.collection.update_one(
                {"_id": tracked_id("eu", WRITE_IDS[2])},
                {"$set": {"nickname": f"Renamed{n}", "nickname_lower": f"renamed{n}"}},
            ),
        )
    ],
    "NicknamePrefixes.apply": [
        Case(lambda s, n: s.tracked.prefixes.apply(sync_ops("eu", WRITE_IDS[3], None, f"Apply{n}")))
    ],
    "NicknamePrefixes.invalidate": [Case(lambda s, n: s.tracked.prefixes.invalidate("eu", "qzar"))],
    "NicknamePrefixes.first": [
        Case(
            lambda s, n: s.tracked.prefixes.first("eu", "qzar", 10, s.tracked._nickname_range),
            expect=lambda r: len(r) == 10,
        )
    ],
    "Tracked.count_active": [Case(lambda s, n: s.tracked.count_active(NOW), expect=lambda r: r >= 30)],
    "Tracked.newest_timestamp": [Case(lambda s, n: s.tracked.newest_timestamp(), expect=lambda r: r == NOW)],
    "Tracked.due": [
        Case(lambda s, n: s.tracked.due(list(DUE_SLICES), DAY, 500), label="slices", expect=lambda r: len(r) == 10),
        Case(lambda s, n: s.tracked.due(DUE_SLICES[0], DAY, 500), label="one-slice", expect=lambda r: len(r) == 5),
    ],
    "Tracked.states": [Case(lambda s, n: s.tracked.states(WRITE_KEYS), expect=lambda r: len(r) == len(WRITE_KEYS))],
    "Tracked.ranking_books": [
        Case(lambda s, n: s.tracked.ranking_books(WRITE_KEYS), expect=lambda r: len(r) == len(WRITE_KEYS))
    ],
    "Tracked.books": [Case(lambda s, n: s.tracked.books(WRITE_KEYS), expect=lambda r: len(r) == len(WRITE_KEYS))],
    "Tracked.measured": [Case(lambda s, n: s.tracked.measured(WRITE_KEYS), expect=lambda r: len(r) == len(WRITE_KEYS))],
    "Tracked.mark_visited": [Case(lambda s, n: s.tracked.mark_visited(_visits(n)))],
    "Tracked.mark_days": [Case(lambda s, n: s.tracked.mark_days(WRITE_KEYS[10:], DAY))],
    "Tracked.park": [Case(lambda s, n: s.tracked.park(WRITE_KEYS[15:], NOW))],
    "Tracked.claim": [
        Case(lambda s, n: s.tracked.claim(DAY, 40, "me", NOW + n, 600, NOW), label="renew", expect=bool),
        Case(
            lambda s, n: s.tracked.claim(DAY, 50, "me", NOW + n, 600, NOW),
            setup=lambda s, n: s.tracked.slices.update_one({"_id": f"{DAY}:050"}, {"$set": {"expires": NOW - 1}}),
            label="take-over",
            expect=bool,
        ),
        Case(lambda s, n: s.tracked.claim(DAY, 3, "me", NOW + n, 600, NOW), label="finished", expect=lambda r: not r),
    ],
    "Tracked.claim_many": [
        Case(
            lambda s, n: s.tracked.claim_many("2031-03-16", {k: NOW for k in range(64)}, "me", NOW + n, 600),
            label="a new day's",
            expect=lambda r: r == list(range(64)),
        ),
        Case(
            lambda s, n: s.tracked.claim_many(DAY, {k: NOW for k in (3, 40, 60)}, "me", NOW, 600),
            label="finished, ours, another's",
            expect=lambda r: r == [40],
        ),
    ],
    "Tracked.finish_many": [
        Case(
            lambda s, n: s.tracked.finish_many(DAY, [41, 42], "me", NOW),
            setup=lambda s, n: s.tracked.slices.update_many(
                {"_id": {"$in": [f"{DAY}:041", f"{DAY}:042"]}}, {"$set": {"owner": "me", "finished": None}}
            ),
            expect=lambda r: r == 2,
        )
    ],
    "Tracked.release_many": [Case(lambda s, n: s.tracked.release_many(DAY, [40, 41], "me"))],
    "Tracked.add_spend": [Case(lambda s, n: s.tracked.add_spend(DAY, 40, {"visited": 10, "records": 3}))],
    "Tracked.finish": [
        Case(
            lambda s, n: s.tracked.finish(DAY, 41, "me", NOW),
            setup=lambda s, n: s.tracked.slices.update_one(
                {"_id": f"{DAY}:041"}, {"$set": {"owner": "me", "finished": None}}
            ),
            expect=bool,
        )
    ],
    "Tracked.release": [Case(lambda s, n: s.tracked.release(DAY, 40, "me"))],
    "Tracked.finished_slices": [
        Case(lambda s, n: s.tracked.finished_slices(DAY), expect=lambda r: set(range(32)) <= set(r))
    ],
    "Tracked.day_slices": [Case(lambda s, n: s.tracked.day_slices(DAY), expect=lambda r: len(r) == 64)],
    "Tracked.forget_slices_before": [
        Case(lambda s, n: s.tracked.forget_slices_before("2020-01-01"), setup=_put_slices_old, expect=lambda r: r == 64)
    ],
    # --- per-tank records: store/tanks.py
    "TankRecords.save": [Case(lambda s, n: s.tanks.save(_tank_write_records(n)))],
    "TankRecords.chain_on": [
        Case(lambda s, n: s.tanks.chain_on("eu", TANK_ACCOUNT, DAY), expect=lambda r: r and r[-1][0] == DAY),
        Case(
            lambda s, n: s.tanks.chain_on("eu", TANK_IDLE, DAY),
            label="idle",
            expect=lambda r: r and r[-1][0] == day(-200),
        ),
    ],
    "TankRecords.count": [Case(lambda s, n: s.tanks.count(), expect=lambda r: r >= KEPT_COUNT - 1000)],
    "TankRecords.prior": [Case(lambda s, n: s.tanks.prior("eu", TANK_ACCOUNT, DAY), expect=bool)],
    "TankRecords.record_on": [Case(lambda s, n: s.tanks.record_on("eu", TANK_ACCOUNT, DAY), expect=bool)],
    "TankRecords.timeline_records": [
        Case(lambda s, n: s.tanks.timeline_records("eu", TANK_ACCOUNT, day(-29), DAY), expect=lambda r: len(r) >= 30),
        # No record in the first read's days: the second read finds the account's older record.
        Case(
            lambda s, n: s.tanks.timeline_records("eu", TANK_IDLE, day(-29), DAY),
            label="idle",
            expect=lambda r: len(r) == 1,  # its one record (day -200)
        ),
    ],
    "TankRecords.battles_by_day": [
        Case(lambda s, n: s.tanks.battles_by_day("eu", TANK_ACCOUNT, day(-29), DAY), expect=lambda r: len(r) == 30)
    ],
    # --- the population's per-tank changes, day sums and series: store/population.py
    "TankChanges.save": [
        Case(lambda s, n: s.population.changes.save([change_doc("eu", a, DAY) for a in WRITE_IDS[:10]]))
    ],
    "TankChanges.of_day": [
        Case(lambda s, n: s.population.changes.of_day("eu", DAY), expect=lambda r: len(r) >= len(POPULATION_ACCOUNTS))
    ],
    "TankChanges.of_day_marked": [
        Case(
            lambda s, n: s.population.changes.of_day_marked("eu", DAY),
            expect=lambda r: len(r) >= len(POPULATION_ACCOUNTS),
        )
    ],
    "TankDays.save": [Case(lambda s, n: s.population.days.save("eu", day(1), 3, {1: [3] + [n] * 13}, NOW))],
    "TankDays.get": [Case(lambda s, n: s.population.days.get("eu", DAY), expect=bool)],
    "TankSeries.get": [Case(lambda s, n: s.population.series.get("eu", 17), expect=bool)],
    # --- the leaderboards: store/leaderboards.py
    "Leaderboards.current": [Case(lambda s, n: s.leaderboards.current("eu"), expect=bool)],
    "Leaderboards.chunks": [
        Case(lambda s, n: s.leaderboards.chunks("eu", BOARD_BUILD, BOARD_KEY, [0, 1]), expect=lambda r: len(r) == 1)
    ],
    # A build of eu: its chunks replaced by _id, the pointer, then the older eu builds' chunks
    # deleted (an equality and a range on {r, b}); the other regions' chunks are left alone.
    "Leaderboards.save_build": [
        Case(
            lambda s, n: s.leaderboards.save_build(
                "eu",
                f"{DAY}.{200 + n}",
                {BOARD_KEY: [[k + 1, 500_000_000 + k, 2000.5 - k, 150, None, None] for k in range(150)]},
                {"through": DAY, "built_at": NOW, "windows": {}},
            ),
            expect=lambda r: r == 2,
        )
    ],
    # --- the sessions' watched accounts: store/sessions.py
    "Watched.watch": [Case(lambda s, n: s.watched.watch("eu", WATCHED_IDS[0], NOW + 900, NOW), expect=bool)],
    "Watched.get": [Case(lambda s, n: s.watched.get("eu", WATCHED_IDS[1]), expect=bool)],
    # The eu watches due (an equality and a range on {r, next}), each claimed by a conditional write;
    # put back due before each call.
    "Watched.claim_due": [
        Case(
            lambda s, n: s.watched.claim_due("eu", NOW, 100, NOW + 60),
            setup=lambda s, n: s.watched.due_again(WATCHED_KEYS, NOW - 30),
            expect=lambda r: len(r) == len(WATCHED_KEYS),
        )
    ],
    "Watched.capture": [Case(lambda s, n: s.watched.capture("eu", WATCHED_IDS[2], NOW, 2, b"\x02", None, NOW + 60))],
    "Watched.unchanged": [Case(lambda s, n: s.watched.unchanged(WATCHED_KEYS, NOW, NOW + 60))],
    "Watched.due_again": [Case(lambda s, n: s.watched.due_again(WATCHED_KEYS, NOW - 30))],
    "Watched.ended": [Case(lambda s, n: s.watched.ended(WATCHED_KEYS[3:]))],
    "Watched.latest_of": [
        Case(lambda s, n: s.watched.latest_of("eu", WATCHED_IDS), expect=lambda r: len(r) == len(WATCHED_IDS))
    ],
    "Watched.versions": [
        Case(lambda s, n: s.watched.versions(WATCHED_KEYS), expect=lambda r: len(r) == len(WATCHED_KEYS))
    ],
    "Watched.extend": [Case(lambda s, n: s.watched.extend(WATCHED_KEYS, NOW + 900, NOW))],
    # A count of the eu watches running (the region's cap): other regions' and ended ones never count.
    "Watched.count_watching": [Case(lambda s, n: s.watched.count_watching("eu", NOW), expect=lambda r: r >= 1)],
    "TankMarks.get": [Case(lambda s, n: s.population.marks.get("eu", DAY), expect=bool)],
    "OfficialMarks.get": [Case(lambda s, n: s.official_marks.get("eu", DAY), expect=bool)],
    "OfficialMarks.newest": [
        Case(lambda s, n: s.official_marks.newest("eu", day(-30), DAY), expect=lambda r: r["d"] == DAY)
    ],
    # Kept once a day (a second save of the day writes nothing).
    "OfficialMarks.save": [
        Case(
            lambda s, n: s.official_marks.save(
                "eu", day(1), {"damage": ((65, 85, 95, 100), {t: [1.0, 2.0, 3.0, 4.0] for t in range(90)})}, None, NOW
            )
        )
    ],
    # A session's start kept past the newest capture: point reads and writes by _id.
    "Watched.pin": [
        Case(
            lambda s, n: s.watched.pin(
                "eu",
                WATCHED_IDS[2],
                {"at": NOW - n, "lbt": NOW - 100 - n, "s": b"\x02", "assist": None, "checked": NOW},
            )
        )
    ],
    "Watched.pin_latest": [Case(lambda s, n: s.watched.pin_latest("eu", WATCHED_IDS[2]))],
    "TankMarks.save": [
        Case(
            lambda s, n: s.population.marks.save(
                "eu", day(1), {t: [1.0, 2.0, 3.0, 4.0, 20, 300] for t in range(90)}, NOW
            )
        )
    ],
    "TankSeries.save_many": [
        Case(lambda s, n: s.population.series.save_many([series_doc("eu", 18 + k) for k in range(5)]))
    ],
    # --- profiles and daily snapshots: store/players.py
    "Players.get": [Case(lambda s, n: s.players.get("eu", NEWEST_PROFILE), expect=bool)],
    "Players.get_many": [Case(lambda s, n: s.players.get_many("eu", DUE_PROFILES), expect=lambda r: len(r) == 5)],
    "Glances.get_many": [Case(lambda s, n: s.glances.get_many("eu", DUE_PROFILES), expect=lambda r: len(r) == 5)],
    "Glances.save_many": [
        Case(
            lambda s, n: s.glances.save_many(
                "eu",
                [
                    {k: v for k, v in glance_doc("eu", a).items() if k not in ("_id", "expires_at")}
                    for a in DUE_PROFILES
                ],
            )
        )
    ],
    "Players.save": [Case(lambda s, n: s.players.save(_profile_write(n)))],
    "Players.set_ratings": [
        Case(lambda s, n: s.players.set_ratings("eu", NEWEST_PROFILE, NOW, {"wn8": 1501.0 + n}), expect=bool)
    ],
    "Players.touch": [Case(lambda s, n: s.players.touch("eu", NEWEST_PROFILE, NOW - 60 + n))],
    "Players.due_for_refresh": [
        Case(lambda s, n: s.players.due_for_refresh(NOW - 3600, NOW - 2400, 100), expect=lambda r: len(r) == 5)
    ],
    "Players.newest_timestamp": [Case(lambda s, n: s.players.newest_timestamp(), expect=lambda r: r == NOW)],
    "Players.save_snapshots": [Case(lambda s, n: s.players.save_snapshots(_snapshots_write(n)))],
    "Players.set_wtr": [
        Case(
            lambda s, n: s.players.set_wtr(
                "eu", day(-1), {PROFILE_WRITE: {"wtr": 5000 + n, "wtr_reason": None}}, {SNAP_WRITE: 5000 + n}
            )
        ),
        Case(lambda s, n: s.players.set_wtr("eu", day(-1), {PROFILE_WRITE: {"wtr": None, "wtr_reason": "x"}}, None)),
    ],
    "Players.snapshots_since": [
        Case(lambda s, n: s.players.snapshots_since("eu", SNAP_IDS[0], day(-29), DAY), expect=lambda r: len(r) == 30),
        Case(
            lambda s, n: s.players.snapshots_since("eu", SNAP_IDS[0], day(-6), fields=("date", "battles")),
            label="open-end",
            expect=lambda r: len(r) == 7,
        ),
    ],
    "Players.snapshots_for_accounts": [
        Case(
            lambda s, n: s.players.snapshots_for_accounts("eu", SNAP_IDS, day(-29), DAY), expect=lambda r: len(r) == 90
        )
    ],
    # --- clans, seeds, digests: store/clans.py
    "Clans.get": [Case(lambda s, n: s.clans.get("eu", CLAN_IDS[0]), expect=bool)],
    "Clans.get_many": [Case(lambda s, n: s.clans.get_many("eu", CLAN_IDS), expect=lambda r: len(r) == 5)],
    "Clans.cached_at_of": [
        Case(lambda s, n: s.clans.cached_at_of([("eu", c) for c in CLAN_IDS]), expect=lambda r: len(r) == 5)
    ],
    "Clans.save": [Case(lambda s, n: s.clans.save(_clan_write(n)))],
    "Clans.referenced_since": [Case(lambda s, n: s.clans.referenced_since(NOW - 86400), expect=lambda r: len(r) == 5)],
    "Clans.cached_since": [Case(lambda s, n: s.clans.cached_since(NOW - 3600, 100), expect=lambda r: len(r) == 5)],
    "Clans.newest_timestamp": [Case(lambda s, n: s.clans.newest_timestamp(), expect=lambda r: r == NOW - 596)],
    "Clans.forget_disbanded": [Case(lambda s, n: s.clans.forget_disbanded("eu", CLAN_GONE, NOW), setup=_put_gone)],
    "Clans.referenced_by_players": [
        Case(
            lambda s, n: s.clans.referenced_by_players(EU, NOW - 3600),
            expect=lambda r: sorted(r) == [("eu", c) for c in CLAN_IDS],
        )
    ],
    "Clans.note_references": [
        Case(lambda s, n: s.clans.note_references([("eu", c, NOW - 600 + n / 1000) for c in CLAN_IDS[:3]]))
    ],
    "Clans.add_seeds": [
        Case(
            lambda s, n: s.clans.add_seeds("eu", CLAN_SEED_ADD, NOW),
            setup=lambda s, n: _delete_ids(s.clans.seeds, [clan_key("eu", c) for c in CLAN_SEED_ADD]),
            expect=lambda r: r == 3,
        )
    ],
    "Clans.remove_seeds": [
        Case(
            lambda s, n: s.clans.remove_seeds("eu", CLAN_SEED_REMOVE),
            setup=lambda s, n: s.clans.add_seeds("eu", CLAN_SEED_REMOVE, NOW),
            expect=lambda r: r == 3,
        )
    ],
    "Clans.get_digest": [Case(lambda s, n: s.clans.get_digest("eu", CLAN_IDS[0]), expect=bool)],
    "Clans.save_digest": [
        Case(
            lambda s, n: s.clans.save_digest(
                "eu", CLAN_WRITE, {"period": {"start": day(-7), "end": day(-1)}, "n": n}, NOW, NOW - 60
            )
        )
    ],
    # --- online samples, minute claims, daily aggregates: store/online.py
    "OnlineSamples.record_minute": [
        Case(
            lambda s, n: s.online.record_minute(
                "wows", "eu", int(DAY_START) + 7200 + 60 * n, [{"server": "EU1", "players": 10}], NOW
            ),
            expect=bool,
        )
    ],
    "OnlineSamples.record_minutes": [
        Case(
            lambda s, n: s.online.record_minutes(
                "wows", "na", [(int(DAY_START) + 7200 + 60 * n, [{"server": "NA1", "players": 10}], NOW)]
            ),
            expect=lambda r: r == [True],
        )
    ],
    "OnlineSamples.aggregate_day": [
        Case(lambda s, n: s.online.aggregate_day("wot", "eu", TODAY), expect=lambda r: r["samples"] == 60)
    ],
    "OnlineSamples.daily_range": [
        Case(
            lambda s, n: s.online.daily_range("wot", "eu", DATE(day(-30)), DATE(day(-1))),
            expect=lambda r: len(r) == 30,
        )
    ],
    "OnlineSamples.save_days": [
        Case(
            lambda s, n: s.online.save_days(
                "wows",
                "asia",
                [
                    {"date": f"2032-01-0{k + 1}", "samples": n, "peak": 1, "peak_minute": None, "min": 1, "avg": 1.0}
                    for k in range(3)
                ],  # fmt: skip
            )
        )
    ],
    # --- rate counters: store/ratelimit.py
    "RateCounters.add": [
        Case(lambda s, n: s.rate_counters.add({k: 1 for k in COUNTER_KEYS}), expect=lambda r: len(r) == 10)
    ],
    "RateCounters.read": [Case(lambda s, n: s.rate_counters.read(COUNTER_KEYS), expect=lambda r: len(r) == 10)],
    "RateCounters.increment": [Case(lambda s, n: s.rate_counters.increment(COUNTER_KEYS[0]))],
    "RateCounters.increment_below": [
        Case(lambda s, n: s.rate_counters.increment_below(COUNTER_KEYS[1], 10**9), expect=bool)
    ],
    "RateCounters.expire_windows": [
        Case(lambda s, n: s.rate_counters.expire_windows(WINDOW + n), setup=_put_counters_old, expect=lambda r: r == 50)
    ],
    # --- leases and the upstream's member processes: store/leases.py, store/upstream_members.py
    "Leases.acquire": [
        Case(lambda s, n: s.leases.acquire("tracker", "me", 30), label="renew", expect=bool),
        Case(lambda s, n: s.leases.acquire("lease-7", "me", 30), label="held", expect=lambda r: not r),
    ],
    "Leases.release": [
        Case(
            lambda s, n: s.leases.release("jobs", "me"),
            setup=lambda s, n: s.leases.acquire("jobs", "me", 30),
        )
    ],
    "UpstreamMembers.heartbeat": [Case(lambda s, n: s.upstream_members.heartbeat("live-0", NOW))],
    "UpstreamMembers.count_active": [
        Case(lambda s, n: s.upstream_members.count_active(NOW - 60), expect=lambda r: r == 3)
    ],
    "UpstreamMembers.leave": [
        Case(
            lambda s, n: s.upstream_members.leave("leaving"),
            setup=lambda s, n: s.upstream_members.heartbeat("leaving", NOW - 86400 * 10),
        )
    ],
    # --- the facade and the retention job's batch delete: store/store.py, store/retention.py
    "Store.newest_timestamps": [Case(lambda s, n: s.newest_timestamps(), expect=bool)],
    "Store.volume": [Case(lambda s, n: s.volume(), expect=bool)],
    "retention.delete_expired_batch": [
        Case(
            lambda s, n: delete_expired_batch(_expiring(s, "tank_records"), day_date(day(-300))),
            setup=_put_tank_old,
            label="tank_records",
            expect=lambda r: r == 25,
        ),
        Case(
            lambda s, n: delete_expired_batch(_expiring(s, "snapshots"), day_date(day(-300))),
            setup=_put_snapshots_old,
            label="snapshots",
            expect=lambda r: r == 25,
        ),
        Case(
            lambda s, n: delete_expired_batch(_expiring(s, "online_samples"), day_date(day(-30))),
            setup=_put_samples_old,
            label="online_samples",
            expect=lambda r: r == 50,
        ),
    ],
    "retention.expired_docs": [
        Case(
            lambda s, n: _expired_days(s, "snapshots", day(-300)),
            setup=_put_snapshots_old,
            label="snapshots",
            expect=lambda r: len(r) == 25,
        ),
    ],
    "retention.delete_expired_docs": [
        Case(
            lambda s, n: delete_expired_docs(_expiring(s, "snapshots"), FOUND[id(s)], day_date(day(-300)), True),
            setup=_put_and_find("snapshots", _put_snapshots_old, day(-300)),
            label="snapshots",
            expect=lambda r: r == 25,
        ),
        Case(
            lambda s, n: delete_expired_docs(_expiring(s, "online_samples"), FOUND[id(s)], day_date(day(-30)), True),
            setup=_put_and_find("online_samples", _put_samples_old, day(-30)),
            label="online_samples",
            expect=lambda r: r == 50,
        ),
    ],
}

# Public async store methods that are not measured, and why. Each touches no collection that grows
# with accounts, days or clients, or touches a whole collection by design.
SCHEMA = "schema creation: creates collections and indexes once at start-up"
STATUS_DOCS = "online_status holds one document per (game, region): nine, never more"
EXEMPT: dict[str, str] = {
    **{
        f"{cls}.ensure_schema": SCHEMA
        for cls in (
            "Store",
            "KeptByDay",  # store/retention.py: the base of the one-collection families kept by day
            "Leaderboards",
            "RateCounters",
            "Leases",
            "JobRuns",
            "Players",
            "Clans",
            "OnlineSamples",
            "UpstreamMembers",
            "Tracked",
            "TankRecords",
            "Population",
            "TankChanges",
            "TankDays",
            "TankPeriods",
            "TankSeries",
            "TankMarks",
            "ExpectedTables",
            "Watched",
            "OfficialMarks",
            "VehicleCatalogues",
            "Glances",
            "Panels",
        )
    },
    **{f"Panels.{m}": "panels: one document per region (three), read and replaced by _id" for m in ("get", "save")},
    **{
        f"VehicleCatalogues.{m}": "vehicles: one document per region (three), read and replaced by _id"
        for m in ("save", "get")
    },
    **{
        f"ExpectedTables.{m}": "expected_tables: one document per region and day's version (kept 400 days) and "
        "one pointer per region, read and written by _id"
        for m in ("save", "get", "latest", "latest_version")
    },
    "TankPeriods.get": "tank_periods: one document per (region, period), nine, read by _id",
    "backup.write_backup": "reads each irreplaceable collection in windows declared by its walk "
    "(store/kinds.py): one UTC day of an indexed date field, one value of an indexed integer, or the "
    "whole of a small collection; tests/test_collection_kinds.py checks each walk's field is indexed",
    "backup.restore_backup": "writes by _id (inserts, replaces of duplicates) into an empty database; "
    "the offline restore command's work is O(the backup) by design",
    "backup.holds_collected_data": "find_one({}) per irreplaceable collection, once per restore: empty "
    "collections answer at once; a database holding data is refused (or merged with --force)",
    "Store.after_restore": "one count of tank_records once after a restore (the kept count starts from it)",
    "WriteHealth.probe": "one update by _id in leases, at most every 5 s while writes fail",
    "writes.engine_failed": "one read by _id in leases",
    "TankPeriods.save": "tank_periods: one document per (region, period), nine, replaced by _id",
    "TankPeriods.built_at": "tank_periods: one document per (region, period), nine, read by _id",
    "TankPeriods.get_marks": "tank_periods: the region's marks document, read by _id (twelve documents in all)",
    "TankPeriods.marks_built_at": "tank_periods: the region's marks document, read by _id (twelve documents in all)",
    "retention.ensure_expiry_index": SCHEMA,
    "Store.create_collections": SCHEMA + " (lists the collection names, creates the missing ones)",
    "Tracked.migrate_nicknames": "the one-off telling of every tracked nickname to the search's prefix "
    "table: one pass over the collection on the first start (a marker remembers it)",
    "TankRecords.migrate": "the one-off (a, d) migration: one pass over the collection on the first start "
    "after the upgrade, then a point read of its marker in `migrations`",
    "TankRecords.stored_bytes": "collStats of the whole collection (its size is the answer); asked by tests and "
    "benchmarks, never by the service",
    "Store.ping_ms": "a ping: touches no collection",
    "Clans.disbanded": "returns all of clans_disbanded by design: clans seen disbanded in the last 30 days, "
    "expired by a TTL index (bounded by disbandings, not by accounts, days or clients)",
    "Clans.seeded": "returns all of clan_seeds by design: the operator's list of clans to refresh is the answer",
    "OnlineSamples.latest": STATUS_DOCS + "; returns all of them by design",
    "OnlineSamples.newest_timestamp": STATUS_DOCS,
    "OnlineSamples.record_failure": STATUS_DOCS,
    "OnlineSamples.first_sample_day": STATUS_DOCS + "; scan=True is the background job's one-off backfill of "
    "first_minute for samples stored before that field existed",
    "OnlineSamples.peaks": "online_peaks: one all-time document and one a day per game, kept 8 days by a TTL index",
    "OnlineSamples.raise_peaks": "online_peaks: one all-time document and one a day per game, kept 8 days by a "
    "TTL index",
    "OnlineSamples.raise_peaks_many": "online_peaks: one all-time document and one a day per game, kept 8 days "
    "by a TTL index",
    "bulk.insert_new": "an insert (no query): measured through its callers (Tracked.claim_many, Tracked.track_panel)",
    "bulk.insert_or_upsert": "an insert, then point upserts by the caller's keys: measured through its callers "
    "(TankRecords.save, Players.save_snapshots, TankChanges.save)",
    "JobRuns.claim": "job_slots: the jobs' schedule slots, kept 3 days by a TTL index (bounded by the schedule)",
    "JobRuns.record": "job_runs: one document per job name",
    "JobRuns.all": "job_runs: one document per job name; returns all of them by design",
    "JobRuns.record_demo": "job_runs: the demo seeding's one document, written by _id",
    "JobRuns.demo": "job_runs: the demo seeding's one document, read by _id",
    **{
        f"Freshness.{m}": "freshness: one document per maintained figure (a handful), read and written by _id"
        for m in ("raise_to", "count_add", "count_set", "count", "newest")
    },
}


def reflected_methods() -> set[str]:
    """Every public coroutine function of the store package: "Class.method" for methods of the
    classes a store module defines, "module.function" for module-level ones."""
    names: set[str] = set()
    for info in pkgutil.iter_modules(store_package.__path__):
        module = importlib.import_module(f"store.{info.name}")
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            if inspect.isclass(obj) and getattr(obj, "_is_protocol", False):
                continue  # an interface (typing.Protocol): its implementations are checked
            if inspect.isclass(obj):
                for attr, member in inspect.getmembers(obj):
                    if not attr.startswith("_") and inspect.iscoroutinefunction(member):
                        names.add(f"{name}.{attr}")
            elif inspect.iscoroutinefunction(obj):
                names.add(f"{info.name}.{name}")
    return names


def test_every_store_method_has_a_check():
    found = reflected_methods()
    assert not set(REGISTRY) & set(EXEMPT), "a method is both measured and exempt"
    unchecked = sorted(found - set(REGISTRY) - set(EXEMPT))
    assert not unchecked, (
        f"store methods without a scan check: {unchecked}; add a case to REGISTRY in {__file__} "
        "(how to call it at both sizes), or an exemption with its reason to EXEMPT"
    )
    stale = sorted((set(REGISTRY) | set(EXEMPT)) - found)
    assert not stale, f"checks of methods that no longer exist: {stale}"


# --- the two databases ------------------------------------------------------------------------
@dataclasses.dataclass
class World:
    uri: str
    databases: dict[str, str]  # "1x"/"10x" -> database name
    timeseries: bool
    build_s: float


def _insert(db, name: str, docs: list[dict]) -> None:
    for start in range(0, len(docs), INSERT_CHUNK):
        db[name].insert_many(docs[start : start + INSERT_CHUNK], ordered=False)


def _make_store(client, name: str):
    from store import Store

    return Store(client, name, rate_collection_bytes=1 << 20, capped=False, ttl_indexes=False)


@pytest.fixture(scope="module")
def plans_uri():
    """A SecantusDB of the module's own, deleted as a whole at its end: the two worlds (~200,000
    documents, never dropped: see `world`) stay out of the session's database, where the tests
    after this module would otherwise run beside them in its cache and files (a full run had a
    later test's write wait past its 30 s deadline there)."""
    import shutil
    import tempfile

    from server.compose.embedded_db import EmbeddedDatabase

    directory = tempfile.mkdtemp(prefix="statsapi-plans-db-")
    database = EmbeddedDatabase(directory, durable=False).start()
    yield database.uri
    database.stop()
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="module")
def world(plans_uri):
    """Both databases, built once for the module: the store's schema, then the targets and SMALL or
    LARGE other documents in every growing collection (bulk inserts, no store writes)."""
    from store import create_client

    started = time.monotonic()
    tag = uuid.uuid4().hex[:8]
    databases = {"1x": f"plans_small_{tag}", "10x": f"plans_large_{tag}"}

    async def schema(online_only: bool) -> bool:
        client = create_client(plans_uri, timeoutMS=600_000)
        try:
            timeseries = []
            for name in databases.values():
                store = _make_store(client, name)
                await (store.online.ensure_schema() if online_only else store.ensure_schema())
                timeseries.append(bool(store.online.timeseries))
            return all(timeseries)
        finally:
            client.close()

    # The samples' time-series collection first; the other indexes after the bulk inserts (an
    # index built over 20,000 documents costs less than maintained through them).
    asyncio.run(schema(online_only=True))
    sync = MongoClient(plans_uri, tz_aware=True)
    try:
        for collection, (others, targets) in POPULATION.items():
            fixed = targets()
            for label, size in (("1x", SMALL), ("10x", LARGE)):
                docs = fixed + others(size - len(fixed))
                if collection == "freshness":
                    continue  # written after the schema (its migration sets the per-tank count)
                _insert(sync[databases[label]], collection, docs)
        timeseries = asyncio.run(schema(online_only=False))
        for name in databases.values():
            for doc in freshness_docs():
                sync[name]["freshness"].replace_one({"_id": doc["_id"]}, doc, upsert=True)
        RESULTS["_world"] = {"build_s": round(time.monotonic() - started, 1), "timeseries": timeseries}
        yield World(plans_uri, databases, timeseries, time.monotonic() - started)
    finally:
        # Not dropped: SecantusDB deletes a database row by row under its one store lock, minutes
        # for these ~200,000 documents, which would stall every test after this one (the session's
        # database directory goes as a whole at the end; conftest.db_name).
        sync.close()


class Commands(monitoring.CommandListener):
    """The commands sent to one database while `recording`."""

    def __init__(self, database: str):
        self.database = database
        self.recording = False
        self.commands: list[dict] = []

    def started(self, event) -> None:
        if self.recording and event.database_name == self.database:
            self.commands.append(dict(event.command))

    def succeeded(self, event) -> None:
        pass  # CommandListener requires it; only the commands sent are recorded

    def failed(self, event) -> None:
        pass


DRIVER_FIELDS = {"lsid", "$db", "$clusterTime", "$readPreference", "txnNumber", "maxTimeMS", "readConcern"}


async def _explain(client, databases: dict[str, str], command: dict) -> dict:
    """totalDocsExamined and the plan's stages of one command in each database."""
    inner = {k: v for k, v in command.items() if k not in DRIVER_FIELDS and k != "writeConcern"}
    out: dict[str, Any] = {"command": _short(inner)}
    for label, name in databases.items():
        reply = await client[name].command("explain", inner, verbosity="executionStats")
        stats = reply.get("executionStats") or {}
        out[label] = stats.get("totalDocsExamined")
        out["plan"] = _stages(reply.get("queryPlanner", {}).get("winningPlan") or {})
    return out


def _stages(plan: dict) -> str:
    stages = []
    while plan:
        stages.append(plan.get("stage", "?"))
        plan = plan.get("inputStage") or {}
    return ">".join(stages)


def _short(command: dict) -> str:
    text = json.dumps(command, default=str)
    return text if len(text) <= 240 else text[:237] + "..."


def _answer(value: Any) -> Any:
    """Comparable form of an answer (a Timeline by its records, a set sorted)."""
    if hasattr(value, "records"):
        return value.records
    if isinstance(value, set):
        return sorted(value)
    return value


RUNS = itertools.count(1)  # call numbers never repeat across measurements (a minute is recorded once)


async def measure(world: World, case: Case) -> dict:
    from store import create_client

    base = next(RUNS) * 1000

    listener = Commands(world.databases["10x"])
    client = create_client(world.uri, listeners=(listener,), timeoutMS=120_000)
    try:
        stores = {label: _make_store(client, name) for label, name in world.databases.items()}
        for st in stores.values():
            st.online.timeseries = world.timeseries
        answers = {}
        for label, st in stores.items():  # one untimed call each: warms up, gives the answers
            if case.setup:
                await case.setup(st, base)
            listener.recording = label == "10x"
            started = time.perf_counter()
            answers[label] = _answer(await case.call(st, base))
            first_s = time.perf_counter() - started
            listener.recording = False
        repeats = SLOW_REPEATS if first_s > SLOW_S else REPEATS
        times: dict[str, list[float]] = {label: [] for label in stores}
        for n in range(1, repeats + 1):
            for label in list(stores)[:: 1 if n % 2 else -1]:  # alternate which size goes first
                st = stores[label]
                if case.setup:
                    await case.setup(st, base + n)
                started = time.perf_counter()
                await case.call(st, base + n)
                times[label].append((time.perf_counter() - started) * 1000)
        explained = []
        for command in listener.commands[:8]:
            name = next(iter(command))
            if name in EXPLAINED:
                explained.append(await _explain(client, world.databases, command))
            elif name != "getMore":
                explained.append({"command": _short(command), "plan": f"({name}: explain unreliable)"})
        return {
            "answers": answers,
            "ms": {label: round(statistics.median(t), 2) for label, t in times.items()},
            "all_ms": {label: [round(x, 1) for x in t] for label, t in times.items()},
            "explain": explained,
        }
    finally:
        client.close()


RESULTS: dict[str, Any] = {}


@pytest.fixture(scope="module", autouse=True)
def _report():
    """Every case's figures in tests/artifacts/index_plans.json (for the benchmarks and the README)."""
    yield
    path = os.path.join(os.path.dirname(__file__), "artifacts")
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "index_plans.json"), "w") as out:
        json.dump(RESULTS, out, indent=1, default=str)


def _verdict(figures: dict) -> list[str]:
    problems = []
    small, large = figures["ms"]["1x"], figures["ms"]["10x"]
    if large > RATIO_LIMIT * small and large - small > FLOOR_MS:
        problems.append(f"time grows with the collection: {small:.1f} ms at 1x, {large:.1f} ms at 10x")
    for item in figures["explain"]:
        docs_small, docs_large = item.get("1x"), item.get("10x")
        if "IXSCAN" not in item["plan"] or docs_small is None or docs_large is None:
            continue  # a reported COLLSCAN may be a point lookup on this server: the clock judges
        if docs_large > RATIO_LIMIT * max(docs_small, 1) and docs_large - docs_small >= 100:
            problems.append(f"an index plan examines {docs_small} -> {docs_large} documents: {item['command']}")
    return problems


CASES = [
    pytest.param(key, case, id=f"{key}[{case.label}]" if case.label else key)
    for key in sorted(REGISTRY)
    for case in REGISTRY[key]
]


@pytest.mark.parametrize("key, case", CASES)
def test_cost_grows_with_the_result_not_the_collection(world, key, case):
    figures = asyncio.run(measure(world, case))
    problems = _verdict(figures)
    if problems and problems[0].startswith("time"):
        # A scan shows at every try; a noisy neighbour on a shared machine rarely twice.
        figures = asyncio.run(measure(world, case))
        problems = _verdict(figures)
    name = f"{key}[{case.label}]" if case.label else key
    RESULTS[name] = {k: v for k, v in figures.items() if k != "answers"} | {"problems": problems}
    answers = figures["answers"]
    assert answers["1x"] == answers["10x"], f"{name}: the extra documents changed the answer"
    if case.expect is not None:
        assert case.expect(answers["10x"]), f"{name}: unexpected answer {answers['10x']!r:.300}"
    plans = "\n".join(
        f"  {e['plan']}: {e.get('1x')} -> {e.get('10x')} examined; {e['command']}" for e in figures["explain"]
    )
    assert not problems, f"{name} ({SMALL:,} -> {LARGE:,} documents): " + "; ".join(problems) + "\n" + plans


# Queries known to scan on this server (the module's "facts measured"): the judge must catch each
# at these sizes, or it could pass anything.
KNOWN_SCANS = [
    Case(
        lambda s, n: s.tracked.collection.find({"nickname_lower": {"$regex": "^" + SEARCH_PREFIX}}).to_list(10),
        label="anchored $regex",
    ),
    Case(
        lambda s, n: s.tanks.collection.find(
            {"_id": {"$gte": f"eu:{TANK_ACCOUNT}:", "$lt": f"eu:{TANK_ACCOUNT};"}}
        ).to_list(None),
        label="_id range",
    ),
]


@pytest.mark.parametrize("case", KNOWN_SCANS, ids=[c.label for c in KNOWN_SCANS])
def test_the_judge_catches_a_known_scan(world, case):
    figures = asyncio.run(measure(world, case))
    assert _verdict(figures), f"{case.label}: {figures['ms']} not judged a scan"
