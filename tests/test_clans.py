"""Clans over real HTTP and a real database: details, averages, refresh job, weekly digest, failures."""

from __future__ import annotations

import asyncio
import copy
import datetime as dt
import sys
import time

import pytest
import ujson
from tornado.httpclient import HTTPRequest

from scripts.upstream_sim import clan_members, existing_clans
from server.upstream.client import UpstreamUnavailable
from tests.helpers import ROOT
from tests.test_partial_answers import clan_schema_errors, throttle_pause

REGION = "eu"
CLAN = 700001
DETAIL_KEYS = {"clan_id", "region", "tag", "name", "members_count", "ratings", "members", "member_list", "cached_at"}


async def get(http_client, url):
    return await http_client.fetch(HTTPRequest(url, request_timeout=20), raise_error=False)


async def api(http_client, base_url, path) -> tuple[int, dict]:
    response = await get(http_client, base_url + "/api/v1" + path)
    return response.code, ujson.loads(response.body)


async def sim_post(http_client, upstream_sim, path, body):
    request = HTTPRequest(upstream_sim + path, method="POST", body=ujson.dumps(body), request_timeout=10)
    response = await http_client.fetch(request)
    return ujson.loads(response.body)


def utc_day(ts: float, minus_days: int = 0) -> str:
    return (dt.datetime.fromtimestamp(ts, dt.UTC).date() - dt.timedelta(days=minus_days)).isoformat()


# --- a fake upstream with hand-made data -----------------------------------------------
def account(account_id, name, battles, wins, damage):
    return {
        "account_id": account_id,
        "nickname": name,
        "clan_id": CLAN,
        "created_at": 1400000000,
        "last_battle_time": 1700000000,
        "updated_at": 1700000000,
        "statistics": {
            "all": {
                "battles": battles,
                "wins": wins,
                "losses": battles - wins,
                "draws": 0,
                "damage_dealt": damage,
                "frags": battles,
                "spotted": battles,
                "xp": 500 * battles,
                "dropped_capture_points": 0,
                "capture_points": 0,
                "survived_battles": battles // 3,
                "shots": 0,
                "hits": 0,
            }
        },
    }


# Career totals (battles, wins, damage): win rates 52 / 55 / 48 / 50 %, damage 1200 / 1500 / 1000 / 1000.
MEMBERS = [
    (601, "Alpha", "commander", 1000, 520, 1_200_000),
    (602, "Bravo", "executive_officer", 2000, 1100, 3_000_000),
    (603, "Charlie", "private", 500, 240, 500_000),
    (604, "Delta", "private", None, None, None),  # the upstream has no profile for this member
    (605, "Echo", "recruit", 0, 0, 0),  # no battles: no win rate, not measured
    (606, "Foxtrot", "reservist", 100, 50, 100_000),
]


class FakeUpstream:
    """The client's interface over constructed data; `failing` names methods that raise."""

    def __init__(self, now: float):
        self.failing: set[str] = set()
        self.calls: list[str] = []
        members = [
            {"account_id": a, "account_name": n, "role": r, "joined_at": int(now) - 400 * 86400}
            for a, n, r, *_ in MEMBERS
        ]
        members[2]["joined_at"] = int(now) - 2 * 86400  # Charlie joined this week
        self.clans = {
            CLAN: {
                "clan_id": CLAN,
                "tag": "HAND",
                "name": "Hand Checked",
                "members_count": len(members),
                "members": members,
            }
        }
        self.ratings = {CLAN: {"clan_id": CLAN, "fb_elo_rating_10": {"value": 1523, "rank": 10}}}
        self.strongholds = {
            CLAN: {
                "clan_id": CLAN,
                "skirmish_statistics": {
                    "total_10": 30,
                    "win_10": 20,
                    "total_10_in_28d": 5,
                    "win_10_in_28d": 3,
                    "total_8": 10,
                    "win_8": 5,
                    "total_6": 0,
                    "win_6": 0,
                    "last_time_10": 1700000000,
                },
            }
        }
        self.accounts = {a: account(a, n, b, w, d) if b is not None else None for a, n, _, b, w, d in MEMBERS}

    def _call(self, name):
        self.calls.append(name)
        if name in self.failing:
            raise UpstreamUnavailable(f"{name}: simulated outage")

    async def clans_info(self, region, ids, **kwargs):
        self._call("clans_info")
        return {i: copy.deepcopy(self.clans.get(i)) for i in ids}

    async def clan_ratings(self, region, ids, **kwargs):
        self._call("clan_ratings")
        return {i: copy.deepcopy(self.ratings.get(i)) for i in ids}

    async def stronghold_claninfo(self, region, ids, **kwargs):
        self._call("stronghold_claninfo")
        return {i: copy.deepcopy(self.strongholds.get(i)) for i in ids}

    async def account_info(self, region, ids, **kwargs):
        self._call("account_info")
        return {i: copy.deepcopy(self.accounts.get(i)) for i in ids}

    async def tanks_stats(self, region, account_id, **kwargs):
        self._call("tanks_stats")
        return []

    async def account_wtr(self, region, ids, **kwargs):
        return dict.fromkeys(ids)


def use_fake(app, now: float) -> tuple:
    services, store = app.settings["services"], app.settings["store"]
    fake = FakeUpstream(now)
    services.clans.upstream = fake
    services.clans.clock = lambda: now
    services.clans.rating_budget = 0  # ratings need real tanks; the simulator test covers them
    return services, store, fake


# --- details -----------------------------------------------------------------------------
@pytest.mark.gen_test(timeout=30)
async def test_details_averages_hand_checked(app, http_client, base_url):
    now = float(int(time.time()))
    services, store, fake = use_fake(app, now)
    # Not seeded: the clan is refreshed because a cached player names it.
    await store.players.save(
        {
            "region": REGION,
            "account_id": 601,
            "clan_id": CLAN,
            "cached_at": now,
            "totals": {},
            "tanks": [],
            "ratings": None,
        }
    )
    code, body = await api(http_client, base_url, f"/clan/{CLAN}/eu")
    assert (code, body["error"]["code"]) == (404, "clan_not_cached")

    outcome = await services.clans.refresh(0)
    assert outcome.startswith("refreshed 1 clans, failed 0")

    code, body = await api(http_client, base_url, f"/clan/{CLAN}/eu")
    assert code == 200 and body["success"] is True
    data = body["data"]
    assert set(data) == DETAIL_KEYS
    assert (data["clan_id"], data["region"], data["tag"], data["name"]) == (CLAN, "eu", "HAND", "Hand Checked")
    assert data["members_count"] == 6
    assert data["cached_at"] == int(now)
    # Skirmishes: 30 + 10 battles, 20 + 5 wins (the 28-day keys are not added).
    assert data["ratings"] == {
        "elo_10": 1523,
        "elo_8": None,
        "skirmish_battles": 40,
        "skirmish_win_rate": 62.5,
        "ratings_updated_at": int(now),  # everything fetched at this refresh: the clan's own time
        "stronghold_updated_at": int(now),
    }
    assert not clan_schema_errors(data)
    # Alpha, Bravo, Charlie, Foxtrot; Delta has no profile and Echo no battles.
    assert data["members"] == {
        "profiles_measured": 4,
        "avg_win_rate": 51.25,  # (52 + 55 + 48 + 50) / 4
        "avg_damage": 1175.0,  # (1200 + 1500 + 1000 + 1000) / 4
        "avg_battles": 900.0,
    }  # (1000 + 2000 + 500 + 100) / 4
    assert data["members"]["profiles_measured"] < data["members_count"]
    assert [m["account_id"] for m in data["member_list"]] == [601, 602, 603, 604, 605, 606]
    assert data["member_list"][0] == {
        "account_id": 601,
        "name": "Alpha",
        "role": "commander",
        "joined_at": int(now) - 400 * 86400,
    }
    # Members with a profile got today's snapshot (same shape as a player's).
    snaps = await store.players.snapshots_for_accounts(
        REGION, [601, 602, 603, 604, 605, 606], utc_day(now), utc_day(now)
    )
    assert sorted(s["account_id"] for s in snaps) == [601, 602, 603, 605, 606]
    alpha = next(s for s in snaps if s["account_id"] == 601)
    assert (alpha["battles"], alpha["wins"], alpha["damage_dealt"], alpha["taken_at"]) == (
        1000,
        520,
        1_200_000,
        int(now),
    )
    assert {"wn8", "wn7", "efficiency", "clan_id", "xp", "spotted"} <= set(alpha)

    # Within the hour nothing is due: at most one refresh per clan per hour.
    assert await services.clans.refresh(1) == "no clans due"


@pytest.mark.gen_test(timeout=30)
@pytest.mark.parametrize(
    "path,status,code",
    [
        (f"/clan/{CLAN}/eu", 404, "clan_not_cached"),
        (f"/clan/{CLAN}/eu/weekly", 404, "clan_not_cached"),
        ("/clan/abc/eu", 400, "invalid_clan_id"),
        ("/clan/0/eu", 400, "invalid_clan_id"),
        ("/clan/-3/eu/weekly", 400, "invalid_clan_id"),
        ("/clan/1.5/eu", 400, "invalid_clan_id"),
        (f"/clan/{CLAN}/ru", 400, "invalid_region"),
        (f"/clan/{CLAN}/EU/weekly", 400, "invalid_region"),
    ],
)
async def test_clan_errors(app, http_client, base_url, path, status, code):
    got, body = await api(http_client, base_url, path)
    assert got == status
    assert body["success"] is False and "data" not in body
    assert body["error"]["code"] == code


# --- weekly digest ------------------------------------------------------------------------
def snapshot(account_id, date, battles, wins, damage, wn8):
    return {
        "region": REGION,
        "account_id": account_id,
        "date": date,
        "taken_at": 0,
        "clan_id": CLAN,
        "battles": battles,
        "wins": wins,
        "losses": battles - wins,
        "draws": 0,
        "damage_dealt": damage,
        "frags": 0,
        "spotted": 0,
        "dropped_capture_points": 0,
        "capture_points": 0,
        "xp": 0,
        "survived_battles": 0,
        "shots": 0,
        "hits": 0,
        "wn8": wn8,
        "wn7": None,
        "efficiency": None,
    }


@pytest.mark.gen_test(timeout=30)
async def test_weekly_digest_from_constructed_snapshots(app, http_client, base_url):
    now = float(int(time.time()))
    services, store, fake = use_fake(app, now)
    await store.clans.add_seeds(REGION, [CLAN], now)
    assert (await services.clans.refresh(0)).startswith("refreshed 1")
    # An hour later Foxtrot has left the clan.
    later = now + 3600
    services.clans.clock = lambda: later
    fake.clans[CLAN]["members"] = [m for m in fake.clans[CLAN]["members"] if m["account_id"] != 606]
    fake.clans[CLAN]["members_count"] = 5
    assert (await services.clans.refresh(1)).startswith("refreshed 1")

    end, start, middle = utc_day(later), utc_day(later, 7), utc_day(later, 3)
    await store.players.save_snapshots(
        [
            # Alpha: 40 battles, 24 wins, 48,000 damage; WN8 1500 -> 1600.
            snapshot(601, start, 960, 496, 1_152_000, 1500),
            snapshot(601, middle, 980, 508, 1_170_000, 1550),
            snapshot(601, end, 1000, 520, 1_200_000, 1600),
            # Bravo: 12 battles, 3 wins, 12,000 damage; WN8 2100 -> 2050.
            snapshot(602, start, 1988, 1097, 2_988_000, 2100),
            snapshot(602, end, 2000, 1100, 3_000_000, 2050),
            # Charlie: 5 battles (below the 10-battle rule), 4 wins, 4,000 damage.
            snapshot(603, start, 495, 236, 496_000, 900),
            snapshot(603, end, 500, 240, 500_000, 950),
            # Echo: no battles at all; Delta: no snapshots.
            snapshot(605, start, 0, 0, 0, None),
            snapshot(605, end, 0, 0, 0, None),
            # Older than the period: ignored.
            snapshot(602, utc_day(later, 9), 1900, 1000, 2_800_000, 2000),
        ]
    )

    code, body = await api(http_client, base_url, f"/clan/{CLAN}/eu/weekly")
    assert code == 200
    data = body["data"]
    assert (data["clan_id"], data["region"], data["tag"]) == (CLAN, "eu", "HAND")
    assert data["period"] == {"start": start, "end": end, "days": 7}
    activity = data["activity"]
    assert activity["members"] == 5
    assert activity["measured_members"] == 4
    assert activity["active_members"] == 3
    assert activity["inactive"] == [{"account_id": 605, "name": "Echo"}]
    assert activity["not_measured"] == [{"account_id": 604, "name": "Delta"}]
    assert activity["battles_per_member"] == 14.25  # 57 battles / 4 measured members
    assert activity["joined"] == [{"account_id": 603, "name": "Charlie", "date": utc_day(now, 2)}]
    assert activity["left"] == [{"account_id": 606, "name": "Foxtrot", "date": utc_day(later)}]

    top = data["top"]
    assert top["min_battles"] == 10
    assert top["by_battles"] == [
        {"account_id": 601, "name": "Alpha", "battles": 40},
        {"account_id": 602, "name": "Bravo", "battles": 12},
        {"account_id": 603, "name": "Charlie", "battles": 5},
    ]
    assert top["by_wn8"] == [
        {"account_id": 602, "name": "Bravo", "wn8": 2050, "wn8_change": -50, "battles": 12},
        {"account_id": 601, "name": "Alpha", "wn8": 1600, "wn8_change": 100, "battles": 40},
    ]
    assert top["by_win_rate"] == [
        {"account_id": 601, "name": "Alpha", "win_rate": 60.0, "battles": 40},
        {"account_id": 602, "name": "Bravo", "win_rate": 25.0, "battles": 12},
    ]

    aggregates = data["aggregates"]
    assert aggregates["battles"] == 57 and aggregates["wins"] == 31
    assert aggregates["win_rate"] == 54.39  # 31 / 57
    assert aggregates["avg_damage"] == 1122.81  # 64,000 / 57
    change = aggregates["members_avg_change"]
    assert change["profiles_compared"] == 3  # Echo has no battles, so no rates
    start_wr = (100 * 496 / 960 + 100 * 1097 / 1988 + 100 * 236 / 495) / 3
    end_wr = (52.0 + 55.0 + 48.0) / 3
    assert change["win_rate"] == {
        "start": round(start_wr, 2),
        "end": round(end_wr, 2),
        "change": round(end_wr - start_wr, 2),
    }
    start_dmg = (1_152_000 / 960 + 2_988_000 / 1988 + 496_000 / 495) / 3
    end_dmg = (1200 + 1500 + 1000) / 3
    assert change["avg_damage"] == {
        "start": round(start_dmg, 2),
        "end": round(end_dmg, 2),
        "change": round(end_dmg - start_dmg, 2),
    }
    assert change["avg_battles"] == {
        "start": round((960 + 1988 + 495) / 3, 2),
        "end": round(3500 / 3, 2),
        "change": round((3500 - 3443) / 3, 2),
    }
    assert data["computed_at"] == int(later)

    # The digest is stored (with a TTL) and served again; the hourly job rebuilds it.
    stored = await store.clans.get_digest(REGION, CLAN)
    assert stored["data"] == data and stored["expires_at"] > dt.datetime.now(dt.UTC)
    assert await services.clans.build_digests(0) == "digests 1"
    code, again = await api(http_client, base_url, f"/clan/{CLAN}/eu/weekly")
    assert code == 200 and again["data"]["top"] == top


# --- upstream failures -------------------------------------------------------------------
@pytest.mark.gen_test(timeout=30)
@pytest.mark.parametrize("failing", ["clans_info", "account_info"])
async def test_refresh_failure_keeps_the_old_clan_whole(app, http_client, base_url, failing):
    now = float(int(time.time()))
    services, store, fake = use_fake(app, now)
    await store.clans.add_seeds(REGION, [CLAN], now)
    await services.clans.refresh(0)
    code, before = await api(http_client, base_url, f"/clan/{CLAN}/eu")
    assert code == 200
    old_doc = await store.clans.get(REGION, CLAN)

    # Two hours later the clan is due, its data changed upstream, and one request fails.
    services.clans.clock = lambda: now + 7200
    fake.clans[CLAN]["name"] = "Renamed"
    fake.accounts[601]["statistics"]["all"]["battles"] += 100
    fake.failing.add(failing)
    with pytest.raises(RuntimeError, match="refreshed 0 clans, failed 1"):
        await services.clans.refresh(2)
    assert await store.clans.get(REGION, CLAN) == old_doc  # not dropped, not half-written
    services.clans.forget_hot()
    code, after = await api(http_client, base_url, f"/clan/{CLAN}/eu")
    assert code == 200
    assert after["data"] == before["data"]  # older than an hour, served with its true cached_at
    assert after["data"]["cached_at"] == int(now)

    # The upstream is back: the next run refreshes it.
    fake.failing.clear()
    assert (await services.clans.refresh(3)).startswith("refreshed 1")
    services.clans.forget_hot()
    code, fresh = await api(http_client, base_url, f"/clan/{CLAN}/eu")
    assert fresh["data"]["name"] == "Renamed" and fresh["data"]["cached_at"] == int(now + 7200)
    assert fresh["data"]["members"]["avg_battles"] == 925.0  # (1100 + 2000 + 500 + 100) / 4


@pytest.mark.gen_test(timeout=30)
@pytest.mark.parametrize("failing", ["stronghold_claninfo", "clan_ratings", "both"])
async def test_partial_refresh_keeps_the_older_figures_with_their_time(app, http_client, base_url, failing):
    """Only clans/info (and the members' data) are needed to refresh a clan: a failed ratings or
    stronghold call keeps that call's figures as stored, with their own older time."""
    now = float(int(time.time()))
    services, store, fake = use_fake(app, now)
    await store.clans.add_seeds(REGION, [CLAN], now)
    await services.clans.refresh(0)

    # Two hours later everything changed upstream, and the named call(s) fail.
    later = now + 7200
    services.clans.clock = lambda: later
    fake.clans[CLAN]["name"] = "Renamed"
    fake.accounts[601]["statistics"]["all"]["battles"] += 100
    fake.ratings[CLAN]["fb_elo_rating_10"]["value"] = 1600
    fake.strongholds[CLAN]["skirmish_statistics"].update(total_10=50, win_10=25)
    fake.failing |= {"stronghold_claninfo", "clan_ratings"} if failing == "both" else {failing}
    outcome = await services.clans.refresh(2)
    ratings_failed = failing in ("clan_ratings", "both")
    stronghold_failed = failing in ("stronghold_claninfo", "both")
    assert outcome.startswith(
        f"refreshed 1 clans, failed 0, partial 1 (older elo kept {int(ratings_failed)}, "
        f"older skirmishes kept {int(stronghold_failed)}), not found 0"
    )
    doc = await store.clans.get(REGION, CLAN)
    services.clans.forget_hot()
    code, body = await api(http_client, base_url, f"/clan/{CLAN}/eu")
    assert code == 200
    data = body["data"]
    # From clans/info and the members' profiles: new.
    assert data["name"] == "Renamed" and data["cached_at"] == int(later)
    assert data["members"]["avg_battles"] == 925.0  # (1100 + 2000 + 500 + 100) / 4
    elo = (1523, int(now)) if ratings_failed else (1600, int(later))
    skirmishes = (40, 62.5, int(now)) if stronghold_failed else (60, 50.0, int(later))  # (25 + 5) wins of (50 + 10)
    ratings = data["ratings"]
    assert (ratings["elo_10"], ratings["ratings_updated_at"]) == elo
    assert (ratings["skirmish_battles"], ratings["skirmish_win_rate"], ratings["stronghold_updated_at"]) == skirmishes

    # The same refresh again writes the same document (idempotent).
    await store.clans.clans.update_one({"_id": doc["_id"]}, {"$set": {"cached_at": now}})  # due again
    services.clans.forget_hot()
    await services.clans.refresh(3)
    assert await store.clans.get(REGION, CLAN) == doc

    # The calls answer again: every part is as new as the clan.
    fake.failing.clear()
    services.clans.clock = lambda: later + 7200
    assert (await services.clans.refresh(4)).startswith("refreshed 1 clans, failed 0, partial 0, not found 0")
    services.clans.forget_hot()
    code, body = await api(http_client, base_url, f"/clan/{CLAN}/eu")
    ratings = body["data"]["ratings"]
    assert ratings["elo_10"] == 1600 and ratings["skirmish_battles"] == 60
    assert ratings["ratings_updated_at"] == ratings["stronghold_updated_at"] == body["data"]["cached_at"]


@pytest.mark.gen_test(timeout=30)
async def test_first_refresh_without_ratings_has_null_figures_and_times(app, http_client, base_url):
    now = float(int(time.time()))
    services, store, fake = use_fake(app, now)
    await store.clans.add_seeds(REGION, [CLAN], now)
    fake.failing |= {"stronghold_claninfo", "clan_ratings"}
    assert (await services.clans.refresh(0)).startswith("refreshed 1 clans, failed 0, partial 1")
    code, body = await api(http_client, base_url, f"/clan/{CLAN}/eu")
    assert code == 200 and body["data"]["members"]["profiles_measured"] == 4
    assert body["data"]["ratings"] == {
        "elo_10": None,
        "elo_8": None,
        "skirmish_battles": 0,
        "skirmish_win_rate": None,
        "ratings_updated_at": None,  # never fetched
        "stronghold_updated_at": None,
    }
    assert not clan_schema_errors(body["data"])


@pytest.mark.gen_test(timeout=30)
async def test_clan_stored_before_the_part_times_reads_them_as_cached_at(app, http_client, base_url):
    now = float(int(time.time()))
    services, store, fake = use_fake(app, now)
    await store.clans.add_seeds(REGION, [CLAN], now)
    await services.clans.refresh(0)
    # A document written by an older version: the ratings block without its parts' times.
    await store.clans.clans.update_one(
        {"_id": f"{REGION}:{CLAN}"}, {"$unset": {"ratings.ratings_updated_at": "", "ratings.stronghold_updated_at": ""}}
    )
    services.clans.forget_hot()
    code, body = await api(http_client, base_url, f"/clan/{CLAN}/eu")
    assert body["data"]["ratings"]["ratings_updated_at"] == body["data"]["ratings"]["stronghold_updated_at"] == int(now)

    # A partial refresh of it keeps the old figures, fetched at the old cached_at.
    services.clans.clock = lambda: now + 7200
    fake.failing.add("stronghold_claninfo")
    assert (await services.clans.refresh(2)).startswith("refreshed 1 clans, failed 0, partial 1")
    services.clans.forget_hot()
    code, body = await api(http_client, base_url, f"/clan/{CLAN}/eu")
    ratings = body["data"]["ratings"]
    assert (ratings["skirmish_battles"], ratings["stronghold_updated_at"]) == (40, int(now))
    assert ratings["ratings_updated_at"] == body["data"]["cached_at"] == int(now + 7200)


# --- end to end over the simulator ----------------------------------------------------------
@pytest.mark.gen_test(timeout=40)
async def test_seeded_clan_refreshed_from_the_simulator(app, http_client, base_url, upstream_sim, mongo_uri, db_name):
    services, store = app.settings["services"], app.settings["store"]
    clan_id = min(existing_clans(REGION, 12), key=lambda c: len(clan_members(REGION, c)))
    members = list(clan_members(REGION, clan_id))

    # The operator's seeding script writes to the same database.
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(ROOT / "scripts" / "add_clans.py"),
        "--region",
        REGION,
        str(clan_id),
        "--mongodb-uri",
        mongo_uri,
        "--db-name",
        db_name,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=str(ROOT),
    )
    out, err = await proc.communicate()
    assert proc.returncode == 0, err
    assert b"1 new" in out
    assert await store.clans.seeded() == [(REGION, clan_id)]

    frozen = float(int(time.time()))
    await sim_post(http_client, upstream_sim, "/_sim/clock", {"now": frozen})
    try:
        services.clans.clock = lambda: frozen
        services.clans.rating_budget = 3
        outcome = await services.clans.refresh(0)
        assert outcome.startswith("refreshed 1 clans, failed 0") and "members rated 3" in outcome

        code, body = await api(http_client, base_url, f"/clan/{clan_id}/eu")
        assert code == 200
        data = body["data"]
        query = f"/?application_id=test-app-id-secret&clan_id={clan_id}"
        await throttle_pause()  # the simulator's per-address throttle, like the CDN's
        info = ujson.loads((await get(http_client, upstream_sim + "/wot/eu/wot/clans/info" + query)).body)["data"]
        info = info[str(clan_id)]
        await throttle_pause()  # the simulator's per-address throttle, like the CDN's
        rating = ujson.loads((await get(http_client, upstream_sim + "/wot/eu/wot/clanratings/clans" + query)).body)
        rating = rating["data"][str(clan_id)]
        assert (data["tag"], data["name"], data["members_count"]) == (info["tag"], info["name"], len(members))
        assert [m["account_id"] for m in data["member_list"]] == [m["account_id"] for m in info["members"]]
        expected_elo = rating["fb_elo_rating_10"]["value"] if rating else None
        assert data["ratings"]["elo_10"] == expected_elo
        # Averages recomputed here from the simulator's member profiles.
        ids = ",".join(map(str, members))
        await throttle_pause()  # the simulator's per-address throttle, like the CDN's
        accounts = ujson.loads(
            (await get(http_client, upstream_sim + f"/wot/eu/wot/account/info/?application_id=x&account_id={ids}")).body
        )["data"]
        totals = [a["statistics"]["all"] for a in accounts.values() if a and a["statistics"]["all"]["battles"]]
        assert data["members"]["profiles_measured"] == len(totals)
        assert data["members"]["avg_win_rate"] == round(
            sum(100 * t["wins"] / t["battles"] for t in totals) / len(totals), 2
        )
        assert data["members"]["avg_damage"] == round(
            sum(t["damage_dealt"] / t["battles"] for t in totals) / len(totals), 2
        )
        assert data["members"]["avg_battles"] == round(sum(t["battles"] for t in totals) / len(totals), 2)

        # Three members were rated: full profiles with WN8, reused by today's snapshots.
        rated = [p for p in await store.players.get_many(REGION, members) if p.get("ratings")]
        assert len(rated) == 3 and all(p["ratings"]["wn8"] is not None for p in rated)
        snaps = await store.players.snapshots_for_accounts(REGION, members, utc_day(frozen), utc_day(frozen))
        assert len(snaps) == len(members)
        assert {s["account_id"] for s in snaps if s["wn8"] is not None} == {p["account_id"] for p in rated}

        code, weekly = await api(http_client, base_url, f"/clan/{clan_id}/eu/weekly")
        assert code == 200
        assert weekly["data"]["activity"]["members"] == len(members)

        # The simulator answers 5xx to everything: the old clan stays served, the run fails
        # (at once: the client's retries and back-off are tested in tests/test_upstream.py).
        services.clans.upstream.background_retries = 0
        await sim_post(http_client, upstream_sim, "/_sim/faults", {"http_5xx_rate": 1.0})
        services.clans.clock = lambda: frozen + 7200
        await throttle_pause()
        with pytest.raises(RuntimeError, match="refreshed 0 clans"):
            await services.clans.refresh(2)
        services.clans.forget_hot()
        code, after = await api(http_client, base_url, f"/clan/{clan_id}/eu")
        assert code == 200 and after["data"] == data
        code, status = await api(http_client, base_url, "/status")
        assert code == 200 and status["data"]["caches"]["newest_clan"] == frozen
    finally:
        await sim_post(http_client, upstream_sim, "/_sim/faults", {"reset": True})
        await sim_post(http_client, upstream_sim, "/_sim/clock", {"reset": True})
