"""server/upstream/client.py against the simulator (scripts/upstream_sim/) over real HTTP, in-process.

Each test starts the simulator on a free port inside its own event loop (``asyncio.run``), with
the simulated clock frozen, so answers are deterministic. No timing asserts: timeouts use a
short client timeout and the simulator's "hang" fault, which ends as soon as the client gives up.
"""

from __future__ import annotations

import asyncio
import logging

import pytest
import ujson
from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets

from scripts import upstream_sim as sim
from server.compose.embedded_db import free_port
from server.upstream.client import (
    RETRY_AFTER_LIMIT,
    RETRY_AFTER_TRANSIENT,
    UpstreamBadRequest,
    UpstreamClient,
    UpstreamError,
    UpstreamUnavailable,
)
from server.upstream.realms import RealmGates

APP_ID = "s3cr3t-app-id-4f9e2b7c"
FROZEN_NOW = 1_750_000_000  # 2025-06-15 15:06:40 UTC
DAY = 86400
SUM_FIELDS = sim.SUM_FIELDS


# --------------------------------------------------------------------------------------
# Harness
# --------------------------------------------------------------------------------------


class Harness:
    def __init__(self, app, port: int):
        self.app = app
        self.port = port
        self.base_url = f"http://127.0.0.1:{port}"
        self._http = AsyncHTTPClient(force_instance=True)
        self._clients: list[UpstreamClient] = []

    def client(self, **kwargs) -> UpstreamClient:
        kwargs.setdefault("retry_base_delay", 0.01)
        # Long enough for a busy core (a timed-out request is retried, and counted twice); the
        # fault tests set their own short one.
        kwargs.setdefault("request_timeout", 20.0)
        # These tests call with the default (background) caller: retry it like a live one, quickly,
        # and time it out like one (else a hang waits BACKGROUND_TIMEOUT, 15 s, whatever the test set).
        kwargs.setdefault("background_retries", kwargs.get("max_retries", 2))
        kwargs.setdefault("background_retry_base", kwargs["retry_base_delay"])
        kwargs.setdefault("background_timeout", kwargs["request_timeout"])
        kwargs.setdefault("realms", RealmGates({}))  # no realm caps unless a test asks for them
        client = UpstreamClient(
            kwargs.pop("application_id", APP_ID), base_url=kwargs.pop("base_url", self.base_url), **kwargs
        )
        self._clients.append(client)
        return client

    async def raw(self, path: str, method: str = "GET", body: dict | None = None) -> tuple[int, dict]:
        request = HTTPRequest(
            self.base_url + path,
            method=method,
            body=None if body is None else ujson.dumps(body),
            allow_nonstandard_methods=True,
        )
        response = await self._http.fetch(request, raise_error=False)
        return response.code, ujson.loads(response.body)

    async def control(self, path: str, body: dict | None = None) -> dict:
        code, doc = await self.raw(path, "POST" if body is not None else "GET", body)
        assert code == 200, doc
        return doc

    async def stats(self) -> dict:
        return (await self.control("/_sim/stats"))["by_path"]

    async def reset_stats(self) -> None:
        await self.raw("/_sim/stats", "DELETE")

    def close(self) -> None:
        for client in self._clients:
            client.close()
        self._http.close()


def run_sim(test, **options):
    """Run ``await test(harness)`` with a fresh simulator (clock frozen at FROZEN_NOW, 10 requests
    per second per application_id); no test may see a request refused for the rate unless it
    asked for that fault."""
    options.setdefault("now", FROZEN_NOW)
    options.setdefault("rps", 10)  # as strict as the real API: the client must never be refused

    async def main():
        app = sim.make_app(**options)
        sockets = bind_sockets(0, "127.0.0.1")
        server = HTTPServer(app)
        server.add_sockets(sockets)
        harness = Harness(app, sockets[0].getsockname()[1])
        try:
            await test(harness)
            violations = app.sim.describe_stats()["violations"]  # since the test's last stats reset
            assert violations["request_limit"] == 0, violations
        finally:
            app.sim.release_hangs()
            harness.close()
            server.stop()
            await server.close_all_connections()

    asyncio.run(main())


def with_sim(**options):
    def decorate(test):
        def runner():
            run_sim(test, **options)

        runner.__name__ = test.__name__
        runner.__doc__ = test.__doc__
        return runner

    return decorate


def missing_clan(region: str) -> int:
    base = sim.existing_clans(region, 1)[0] // 1000 * 1000
    return next(c for c in range(base, base + 1000) if not sim.clan_exists(region, c))


# --------------------------------------------------------------------------------------
# Seeding helpers
# --------------------------------------------------------------------------------------


def test_existing_accounts_and_clans_helpers_are_deterministic():
    for region, (lo, hi) in sim.REGION_RANGES.items():
        ids = sim.existing_accounts(region, 25)
        assert ids == sim.existing_accounts(region, 25)
        assert len(ids) == 25 and ids == sorted(set(ids))
        assert ids[0] >= lo and ids[-1] <= hi
        assert all(sim.account_exists(region, i) for i in ids)
        assert not any(sim.account_exists(region, i) for i in sim.missing_accounts(region, 5))
        clans = sim.existing_clans(region, 5)
        assert clans == sim.existing_clans(region, 5) and len(clans) == 5
        assert all(sim.clan_members(region, c) for c in clans)
    # about 10 % of ids do not exist
    assert 880 <= len(sim.existing_accounts("eu", 1000)) <= 1000
    assert 880 <= sum(sim.account_exists("eu", i) for i in range(500_000_000, 500_001_000)) <= 920
    assert not sim.account_exists("eu", 1_000_000_001)  # an NA id
    assert sim.existing_accounts("na", 3, start=1_500_000_000)[0] >= 1_500_000_000


def test_real_host_urls_without_base_url():
    client = UpstreamClient(APP_ID)
    assert client.url_for("wot", "eu", "wot/account/info") == "https://api.worldoftanks.eu/wot/account/info/"
    assert client.url_for("wot", "na", "wot/tanks/stats") == "https://api.worldoftanks.com/wot/tanks/stats/"
    assert client.url_for("wot", "asia", "wgn/servers/info") == "https://api.worldoftanks.asia/wgn/servers/info/"
    assert client.url_for("wotb", "na", "wgn/servers/info") == "https://api.wotblitz.com/wgn/servers/info/"
    assert client.url_for("wows", "eu", "wgn/servers/info") == "https://api.worldofwarships.eu/wgn/servers/info/"
    sim_client = UpstreamClient(APP_ID, base_url="http://127.0.0.1:9100/")
    assert sim_client.url_for("wotb", "asia", "wgn/servers/info") == "http://127.0.0.1:9100/wotb/asia/wgn/servers/info/"
    with pytest.raises(ValueError):
        client.url_for("wot", "ru", "wot/account/info")
    assert APP_ID not in repr(client)
    assert client.last_success is None and client.last_failure is None and client.requests == 0


# --------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------


@with_sim()
async def test_account_info_existing_and_unknown(h):
    client = h.client()
    existing = sim.existing_accounts("eu", 3)
    missing = sim.missing_accounts("eu", 1)
    other_region = sim.existing_accounts("na", 1)  # valid id, wrong region: unknown on EU
    result = await client.account_info("eu", existing + missing + other_region)
    assert set(result) == set(existing + missing + other_region)
    for account_id in existing:
        info = result[account_id]
        assert info["account_id"] == account_id
        assert isinstance(info["nickname"], str) and info["nickname"]
        assert info["created_at"] <= info["last_battle_time"] <= FROZEN_NOW
        assert info["statistics"]["all"]["battles"] > 0
        assert info["clan_id"] is None or isinstance(info["clan_id"], int)
        for key in ("global_rating", "updated_at", "max_damage"):
            assert key in info or key in info["statistics"]["all"]
    assert result[missing[0]] is None
    assert result[other_region[0]] is None
    na = await client.account_info("na", other_region)
    assert na[other_region[0]]["account_id"] == other_region[0]
    assert client.last_success is not None and client.failures == 0


@with_sim()
async def test_raw_envelopes_match_the_real_api(h):
    account_id = sim.existing_accounts("eu", 1)[0]
    missing = sim.missing_accounts("eu", 1)[0]
    code, doc = await h.raw(f"/wot/eu/wot/account/info/?application_id=x&account_id={account_id},{missing}")
    assert code == 200 and doc["status"] == "ok" and doc["meta"] == {"count": 2}
    assert doc["data"][str(missing)] is None and doc["data"][str(account_id)]["account_id"] == account_id
    code, doc = await h.raw(f"/wot/eu/wot/account/info/?account_id={account_id}")
    assert code == 200 and doc["status"] == "error"
    assert doc["error"]["message"] == "APPLICATION_ID_NOT_SPECIFIED" and doc["error"]["code"] == 402
    code, doc = await h.raw("/wot/eu/wot/account/info/?application_id=x&account_id=abc")
    assert doc["error"] == {"code": 407, "message": "INVALID_ACCOUNT_ID", "field": "account_id", "value": "abc"}
    ids = ",".join(map(str, sim.existing_accounts("eu", 101)))
    code, doc = await h.raw(f"/wot/eu/wot/account/info/?application_id=x&account_id={ids}")
    assert doc["error"]["message"] == "ACCOUNT_ID_LIST_LIMIT_EXCEEDED"
    code, doc = await h.raw("/wotb/eu/wot/account/info/?application_id=x&account_id=500000000")
    assert doc["error"]["message"] == "METHOD_NOT_FOUND"
    code, doc = await h.raw(
        f"/wot/eu/wot/account/info/?application_id=x&account_id={account_id}&fields=nickname,statistics.all.battles"
    )
    assert set(doc["data"][str(account_id)]) == {"nickname", "statistics"}
    assert set(doc["data"][str(account_id)]["statistics"]["all"]) == {"battles"}
    clan_id = sim.existing_clans("eu", 1)[0]
    code, doc = await h.raw(
        f"/wot/eu/wot/clans/info/?application_id=x&clan_id={clan_id}&fields=tag,members.account_id&members_key=id"
    )
    members = doc["data"][str(clan_id)]["members"]
    assert members and all(m == {"account_id": int(k)} for k, m in members.items())


@with_sim()
async def test_more_than_100_ids_are_batched(h):
    client = h.client()
    ids = sim.existing_accounts("eu", 230) + sim.missing_accounts("eu", 20)
    await h.reset_stats()
    result = await client.account_info("eu", ids + ids[:10])  # duplicates are asked once
    assert len(result) == 250
    assert sum(v is None for v in result.values()) == 20
    assert (await h.stats())["wot/account/info"] == 3
    assert client.requests == 3


@with_sim()
async def test_statistics_all_equals_sum_of_tanks_stats(h):
    client = h.client()
    ids = sim.existing_accounts("asia", 6)
    infos = await client.account_info("asia", ids)
    for account_id in ids:
        tanks = await client.tanks_stats("asia", account_id)
        assert tanks, "an existing account has played"
        totals = infos[account_id]["statistics"]["all"]
        for field in SUM_FIELDS:
            assert totals[field] == sum(t["all"][field] for t in tanks), field
        assert totals["wins"] + totals["losses"] + totals["draws"] == totals["battles"]
        for tank in tanks:
            assert tank["all"]["battles"] > 0 and isinstance(tank["tank_id"], int)
            assert tank["all"]["hits"] <= tank["all"]["shots"]
    assert await client.tanks_stats("asia", sim.missing_accounts("asia", 1)[0]) is None


@with_sim()
async def test_per_tank_numbers_follow_the_tier_and_the_expected_table(h):
    client = h.client()
    vehicles = await client.vehicles("eu")
    expected = {
        row["IDNum"]: row for row in ujson.loads(await client.fetch_json_url(h.base_url + "/wn8exp.json"))["data"]
    }
    account_id = sim.existing_accounts("eu", 1)[0]
    tanks = await client.tanks_stats("eu", account_id)
    for tank in tanks:
        assert tank["tank_id"] in vehicles and tank["tank_id"] in expected
        if tank["all"]["battles"] >= 100:
            per_battle = tank["all"]["damage_dealt"] / tank["all"]["battles"]
            assert 0.25 < per_battle / expected[tank["tank_id"]]["expDamage"] < 2.5


@with_sim()
async def test_stats_grow_when_the_sim_clock_moves_forward(h):
    client = h.client()
    ids = sim.existing_accounts("eu", 30)
    before = await client.account_info("eu", ids)
    clock = await h.control("/_sim/clock", {"advance": 3 * DAY})
    assert clock["frozen"] and clock["now"] == FROZEN_NOW + 3 * DAY
    after = await client.account_info("eu", ids)
    grew = 0
    for account_id in ids:
        old, new = before[account_id]["statistics"]["all"], after[account_id]["statistics"]["all"]
        for field in SUM_FIELDS:
            assert new[field] >= old[field], (account_id, field)
        assert after[account_id]["last_battle_time"] >= before[account_id]["last_battle_time"]
        grew += new["battles"] > old["battles"]
    assert grew >= 5
    # "as of" a past instant, per request
    past = await client.account_info("eu", ids, params={"_sim_now": FROZEN_NOW - 60 * DAY})
    assert all(past[i]["statistics"]["all"]["battles"] <= before[i]["statistics"]["all"]["battles"] for i in ids)
    assert any(past[i]["statistics"]["all"]["battles"] < before[i]["statistics"]["all"]["battles"] for i in ids)
    # a running clock with an offset
    clock = await h.control("/_sim/clock", {"offset": -10 * DAY})
    assert not clock["frozen"] and -10 * DAY - 60 < clock["offset"] < -10 * DAY + 60
    assert (await h.control("/_sim/clock", {"reset": True}))["frozen"] is False


@with_sim()
async def test_clans_members_point_back_to_their_clan(h):
    client = h.client()
    clan_ids = sim.existing_clans("eu", 3)
    unknown = missing_clan("eu")
    clans = await client.clans_info("eu", clan_ids + [unknown])
    assert clans[unknown] is None
    for clan_id in clan_ids:
        clan = clans[clan_id]
        assert clan["clan_id"] == clan_id and clan["tag"] and clan["name"]
        members = clan["members"]
        assert clan["members_count"] == len(members) > 0
        assert sum(m["role"] == "commander" for m in members) == 1
        infos = await client.account_info("eu", [m["account_id"] for m in members])
        for member in members:
            info = infos[member["account_id"]]
            assert info is not None and info["clan_id"] == clan_id
            assert info["nickname"] == member["account_name"]
            assert member["joined_at"] >= info["created_at"]
    # an account whose id lies in a clan's slice but is not a member has another (or no) clan
    outsiders = [a for a in sim.existing_accounts("eu", 300) if sim.clan_of_account("eu", a) is None]
    assert outsiders
    info = await client.account_info("eu", outsiders[:3])
    assert all(v["clan_id"] is None for v in info.values())


@with_sim()
async def test_clan_ratings_and_stronghold_shapes(h):
    client = h.client()
    clan_ids = sim.existing_clans("na", 2)
    missing = missing_clan("na")
    ratings = await client.clan_ratings("na", clan_ids + [missing])
    assert ratings[missing] is None
    for clan_id in clan_ids:
        r = ratings[clan_id]
        assert r["clan_id"] == clan_id
        for key in ("fb_elo_rating_10", "fb_elo_rating_8", "fb_elo_rating_6", "efficiency"):
            assert set(r[key]) == {"value", "rank", "rank_delta"}
            assert isinstance(r[key]["value"], int)
        assert isinstance(r["exclude_reasons"], dict)
    strongholds = await client.stronghold_claninfo("na", clan_ids)
    for clan_id in clan_ids:
        s = strongholds[clan_id]
        assert s["clan_id"] == clan_id and isinstance(s["stronghold_level"], int)
        sk = s["skirmish_statistics"]
        for tier in (6, 8, 10):
            assert sk[f"win_{tier}"] + sk[f"lose_{tier}"] == sk[f"total_{tier}"]
            assert 0 <= sk[f"win_{tier}_in_28d"] <= sk[f"total_{tier}_in_28d"] <= sk[f"total_{tier}"]
        assert "total_10" in s["battles_for_strongholds_statistics"]
    # skirmish totals grow with the simulated clock too
    later = await client.stronghold_claninfo("na", clan_ids, params={"_sim_now": FROZEN_NOW + 30 * DAY})
    for clan_id in clan_ids:
        for tier in (6, 8, 10):
            assert (
                later[clan_id]["skirmish_statistics"][f"total_{tier}"]
                >= strongholds[clan_id]["skirmish_statistics"][f"total_{tier}"]
            )


@with_sim()
async def test_servers_info_for_every_game_and_region(h):
    client = h.client()
    for game in ("wot", "wotb", "wows"):
        for region in ("eu", "na", "asia"):
            servers = (await client.servers_info(region, [game]))[game]
            assert len(servers) >= 2
            for row in servers:
                assert set(row) == {"server", "players_online"}
                assert isinstance(row["server"], str) and row["players_online"] > 0
            # same minute, same numbers, whether asked alone or with the other games
            assert servers == (await client.servers_info(region))[game]
    # a daily cycle: EU evening is busier than EU early morning
    day_start = FROZEN_NOW - FROZEN_NOW % DAY
    evening = (await client.servers_info("eu", ["wot"], params={"_sim_now": day_start + 19 * 3600}))["wot"]
    night = (await client.servers_info("eu", ["wot"], params={"_sim_now": day_start + 4 * 3600}))["wot"]
    assert sum(r["players_online"] for r in evening) > 2 * sum(r["players_online"] for r in night)
    stats = await h.stats()
    assert stats["wgn/servers/info"] == 20  # 9 alone + 9 with every game + 2


@with_sim()
async def test_vehicles_and_expected_values(h):
    client = h.client()
    vehicles = await client.vehicles("eu")
    assert len(vehicles) > 100
    sample = next(iter(vehicles.values()))
    assert {"tank_id", "name", "short_name", "tier", "type", "nation", "is_premium"} <= set(sample)
    assert {v["tier"] for v in vehicles.values()} == set(range(1, 11))
    # pages of 100 (the most the upstream gives) are followed; a larger limit is clamped
    await h.reset_stats()
    paged = await client.vehicles("eu", params={"limit": 250})
    assert paged == vehicles
    assert (await h.stats())["wot/encyclopedia/vehicles"] == -(-len(vehicles) // 100)
    raw = await client.fetch_json_url(h.base_url + "/wn8exp.json")
    table = ujson.loads(raw)
    assert "version" in table["header"]
    row = table["data"][0]
    assert {"IDNum", "expDef", "expFrag", "expSpot", "expDamage", "expWinRate"} <= set(row)
    assert {r["IDNum"] for r in table["data"]} >= set(vehicles)


@with_sim()
async def test_answers_are_deterministic(h):
    client = h.client()
    ids = sim.existing_accounts("eu", 5)
    clan_ids = sim.existing_clans("eu", 2)
    first = (
        await client.account_info("eu", ids),
        await client.tanks_stats("eu", ids[0]),
        await client.clans_info("eu", clan_ids),
        await client.clan_ratings("eu", clan_ids),
    )
    second = (
        await client.account_info("eu", ids),
        await client.tanks_stats("eu", ids[0]),
        await client.clans_info("eu", clan_ids),
        await client.clan_ratings("eu", clan_ids),
    )
    assert first == second

    async def fresh(h2):  # another simulator instance (cold caches) gives the same data
        c2 = h2.client()
        third = (
            await c2.account_info("eu", ids),
            await c2.tanks_stats("eu", ids[0]),
            await c2.clans_info("eu", clan_ids),
            await c2.clan_ratings("eu", clan_ids),
        )
        assert third == first

    await asyncio.get_running_loop().run_in_executor(None, run_sim, fresh)


# --------------------------------------------------------------------------------------
# Failures, retries, secrets
# --------------------------------------------------------------------------------------


@with_sim()
async def test_retries_recover_from_source_not_available(h):
    client = h.client(max_retries=2)
    await h.control("/_sim/faults", {"fail_next": 2, "fail_mode": "error"})
    await h.reset_stats()
    account_id = sim.existing_accounts("eu", 1)[0]
    result = await client.account_info("eu", [account_id])
    assert result[account_id]["account_id"] == account_id
    assert (await h.stats())["wot/account/info"] == 3
    assert client.requests == 3 and client.failures == 2
    assert client.last_success is not None and client.last_failure is not None
    assert "SOURCE_NOT_AVAILABLE" in client.last_error and APP_ID not in client.last_error


@with_sim()
async def test_retries_recover_from_5xx_and_request_limit(h):
    client = h.client(max_retries=2)
    for mode in ("5xx", "limit", "timeout"):
        if mode == "timeout":
            client = h.client(max_retries=2, request_timeout=0.3)
        await h.control("/_sim/faults", {"fail_next": 1, "fail_mode": mode})
        servers = await client.servers_info("eu")
        assert servers["wot"], mode
    assert (await h.control("/_sim/stats"))["faults"] == {"5xx": 1, "limit": 1, "timeout": 1}


@with_sim()
async def test_random_error_rate_with_seeded_dice(h):
    client = h.client(max_retries=6)
    await h.control("/_sim/faults", {"error_rate": 0.5, "seed": 1234})
    ids = sim.existing_accounts("eu", 10)
    for account_id in ids:
        assert (await client.account_info("eu", [account_id]))[account_id]["account_id"] == account_id
    assert client.failures > 0
    faults = await h.control("/_sim/faults")
    assert faults["error_rate"] == 0.5 and faults["seed"] == 1234


@with_sim()
async def test_exhausted_retries_raise_unavailable_with_retry_after(h):
    client = h.client(max_retries=2)
    await h.control("/_sim/faults", {"fail_next": 10, "fail_mode": "error"})
    await h.reset_stats()
    with pytest.raises(UpstreamUnavailable) as info:
        await client.account_info("eu", sim.existing_accounts("eu", 1))
    exc = info.value
    assert isinstance(exc, UpstreamError)
    assert isinstance(exc.retry_after, int) and exc.retry_after == RETRY_AFTER_TRANSIENT
    assert (await h.stats())["wot/account/info"] == 3  # 1 + max_retries
    assert APP_ID not in str(exc) and APP_ID not in repr(exc)

    await h.control("/_sim/faults", {"fail_next": 10, "fail_mode": "limit"})
    with pytest.raises(UpstreamUnavailable) as info:
        await client.clans_info("eu", sim.existing_clans("eu", 1))
    assert info.value.retry_after == RETRY_AFTER_LIMIT
    assert "REQUEST_LIMIT_EXCEEDED" in str(info.value) and APP_ID not in str(info.value)

    await h.control("/_sim/faults", {"fail_next": 10, "fail_mode": "5xx"})
    with pytest.raises(UpstreamUnavailable) as info:
        await client.servers_info("asia", ["wows"])
    assert APP_ID not in str(info.value)
    await h.control("/_sim/faults", {"reset": True})
    assert (await client.servers_info("asia", ["wows"]))["wows"]


@with_sim()
async def test_timeouts_raise_unavailable(h):
    client = h.client(request_timeout=0.3, connect_timeout=0.3, max_retries=1)
    await h.control("/_sim/faults", {"timeout_rate": 1.0})
    with pytest.raises(UpstreamUnavailable) as info:
        await client.tanks_stats("eu", sim.existing_accounts("eu", 1)[0])
    assert "timeout" in str(info.value).lower()
    assert isinstance(info.value.retry_after, int)
    assert APP_ID not in str(info.value) and APP_ID not in (client.last_error or "")
    assert client.requests == 2 and client.failures == 2
    await h.control("/_sim/faults", {"timeout_rate": 0})
    assert await client.tanks_stats("eu", sim.existing_accounts("eu", 1)[0])


def test_connection_refused_raises_unavailable():
    async def main():
        client = UpstreamClient(
            APP_ID,
            base_url=f"http://127.0.0.1:{free_port()}",
            max_retries=1,
            retry_base_delay=0.01,
            connect_timeout=1.0,
            background_retries=1,
            background_retry_base=0.01,
            realms=RealmGates({}),
        )
        try:
            with pytest.raises(UpstreamUnavailable) as info:
                await client.account_info("eu", [500_000_000])
            assert APP_ID not in str(info.value)
            assert client.failures == 2 and client.last_success is None
        finally:
            client.close()

    asyncio.run(main())


@with_sim(application_id=APP_ID)
async def test_bad_requests_and_bad_keys_are_not_retried(h):
    client = h.client(max_retries=3)
    await h.reset_stats()
    # An id the upstream calls invalid (INVALID_ACCOUNT_ID) answers as an unknown one does.
    assert await client.account_info("eu", [0]) == {0: None}
    assert (await h.stats())["wot/account/info"] == 1
    assert client.failures == 0 and client.last_success is not None  # the upstream itself is fine
    with pytest.raises(UpstreamBadRequest) as info:
        await client.account_list("eu", "a-b")  # INVALID_SEARCH
    assert info.value.upstream_message == "INVALID_SEARCH" and info.value.field == "search"
    assert (await h.stats())["wot/account/list"] == 1
    assert client.failures == 0

    wrong = h.client(application_id="wrong-key-0000000", max_retries=3)
    with pytest.raises(UpstreamUnavailable) as info:
        await wrong.account_info("eu", sim.existing_accounts("eu", 1))
    assert info.value.upstream_message == "INVALID_APPLICATION_ID"
    assert info.value.retry_after > RETRY_AFTER_TRANSIENT
    assert "wrong-key-0000000" not in str(info.value)
    assert (await h.stats())["wot/account/info"] == 2
    assert wrong.failures == 1 and "INVALID_APPLICATION_ID" in wrong.last_error


@with_sim()
async def test_application_id_never_logged(h):
    client = h.client(max_retries=1)
    await h.control("/_sim/faults", {"fail_next": 4, "fail_mode": "error"})
    handler = _Capture()
    loggers = [logging.getLogger("statsapi.upstream"), logging.getLogger("tornado.access")]
    for logger in loggers:
        logger.addHandler(handler)
    old_level = loggers[1].level
    loggers[1].setLevel(logging.INFO)
    try:
        with pytest.raises(UpstreamUnavailable):
            await client.account_info("eu", [500_000_000])
        await h.control("/_sim/faults", {"fail_next": 1, "fail_mode": "5xx"})
        await client.servers_info("eu", ["wot"])
    finally:
        loggers[1].setLevel(old_level)
        for logger in loggers:
            logger.removeHandler(handler)
    assert any("attempt" in line for line in handler.lines), "failures are logged"
    assert any("application_id=***" in line for line in handler.lines), "the simulator's access log too"
    assert all(APP_ID not in line for line in handler.lines)
    assert APP_ID not in (client.last_error or "")


class _Capture(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage())


@with_sim()
async def test_control_endpoints_validate_input(h):
    code, doc = await h.raw("/_sim/faults", "POST", {"no_such_fault": 1})
    assert code == 400
    code, doc = await h.raw("/_sim/faults", "POST", {"error_rate": 2})
    assert code == 400
    code, doc = await h.raw("/_sim/accounts?region=asia&n=3")
    assert code == 200 and doc["ids"] == sim.existing_accounts("asia", 3)
    code, doc = await h.raw("/_sim/clans?region=eu&n=2")
    assert doc["ids"] == sim.existing_clans("eu", 2)
    code, doc = await h.raw("/nope")
    assert code == 404 and doc["status"] == "error"


def test_one_client_survives_a_change_of_event_loop():
    client = UpstreamClient(
        APP_ID,
        base_url="http://127.0.0.1:1",
        retry_base_delay=0.01,
        max_concurrency=1,
        background_retry_base=0.01,
        realms=RealmGates({}),
    )
    ids = sim.existing_accounts("eu", 120)  # two batches contend for the one slot
    account_id = ids[0]
    seen = []

    async def use(h):
        client.base_url = h.base_url
        seen.append((await client.account_info("eu", ids))[account_id])

    try:
        run_sim(use)
        run_sim(use)  # a new event loop, a new simulator: the same client keeps working
    finally:
        client.close()
    assert seen[0] == seen[1] and seen[0]["account_id"] == account_id
