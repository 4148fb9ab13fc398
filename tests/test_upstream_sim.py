"""The upstream simulator (scripts/upstream_sim/) is at least as strict as the real Wargaming API."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import ujson
from tornado.httpclient import HTTPRequest

from scripts import upstream_sim as sim
from scripts.upstream_sim.limits import RateLimiter

ROOT = Path(__file__).resolve().parents[1]
FROZEN_NOW = 1_750_000_000  # 2025-06-15
STATS_BLOCKS = {
    "all",
    "clan",
    "company",
    "globalmap",
    "regular_team",
    "stronghold_defense",
    "stronghold_skirmish",
    "team",
}
ACCOUNT_BLOCKS = {
    "all",
    "clan",
    "company",
    "historical",
    "regular_team",
    "stronghold_defense",
    "stronghold_skirmish",
    "team",
}


@pytest.fixture
def app():
    return sim.make_app(now=FROZEN_NOW)


@pytest.fixture
def call(http_client, base_url):
    async def call(path: str, body: dict | None = None, method: str | None = None, raw: bool = False):
        request = HTTPRequest(
            base_url + path,
            method=method or ("POST" if body is not None else "GET"),
            body=None if body is None else ujson.dumps(body),
            allow_nonstandard_methods=True,
        )
        response = await http_client.fetch(request, raise_error=False)
        if raw:
            return response
        return ujson.loads(response.body)

    return call


def api(path: str, app_id: str = "test-app", **params) -> str:
    query = "&".join(f"{k}={v}" for k, v in {"application_id": app_id, **params}.items())
    return f"/wot/eu/{path}/?{query}"


def ids(values) -> str:
    return ",".join(map(str, values))


# --------------------------------------------------------------------------------------
# Limits
# --------------------------------------------------------------------------------------


@pytest.mark.gen_test(timeout=30)
async def test_ids_per_call_limits(call):
    clans = sim.existing_clans("eu", 11)
    doc = await call(api("wot/stronghold/claninfo", clan_id=ids(clans)))
    assert doc["status"] == "error"
    assert doc["error"]["code"] == 407 and doc["error"]["message"] == "CLAN_ID_LIST_LIMIT_EXCEEDED"
    assert doc["error"]["field"] == "clan_id"
    doc = await call(api("wot/stronghold/claninfo", clan_id=ids(clans[:10])))
    assert doc["status"] == "ok" and len(doc["data"]) == 10

    accounts = sim.existing_accounts("eu", 101)
    doc = await call(api("wot/account/info", account_id=ids(accounts), fields="nickname"))
    assert doc["error"]["message"] == "ACCOUNT_ID_LIST_LIMIT_EXCEEDED" and doc["error"]["code"] == 407
    doc = await call(api("wot/account/info", account_id=ids(accounts[:100]), fields="nickname"))
    assert doc["status"] == "ok" and doc["meta"]["count"] == 100

    many_clans = sim.existing_clans("eu", 101)
    for path in ("wot/clans/info", "wot/clanratings/clans"):
        doc = await call(api(path, clan_id=ids(many_clans), fields="clan_id"))
        assert doc["error"]["message"] == "CLAN_ID_LIST_LIMIT_EXCEEDED", path
        doc = await call(api(path, clan_id=ids(many_clans[:100]), fields="clan_id"))
        assert doc["status"] == "ok" and len(doc["data"]) == 100, path

    doc = await call(api("wot/tanks/stats", account_id=ids(accounts[:2])))
    assert doc["error"]["message"] == "ACCOUNT_ID_LIST_LIMIT_EXCEEDED" and doc["error"]["code"] == 407
    doc = await call(api("wot/tanks/stats", account_id=accounts[0], tank_id=ids(range(1, 102))))
    assert doc["error"]["message"] == "TANK_ID_LIST_LIMIT_EXCEEDED"

    stats = await call("/_sim/stats")
    assert stats["violations"] == {"ids_limit": 6, "request_limit": 0, "total": 6}
    assert stats["violations_by_path"] == {
        "wot/stronghold/claninfo": 1,
        "wot/account/info": 1,
        "wot/clans/info": 1,
        "wot/clanratings/clans": 1,
        "wot/tanks/stats": 2,
    }


@pytest.mark.gen_test(timeout=30)
async def test_requests_per_second_per_application_id(call):
    assert (await call("/_sim/limits")) == {"rps": 0, "window_seconds": 1.0}
    assert (await call("/_sim/limits", {"rps": 5}))["rps"] == 5
    assert (await call("/_sim/limits", {"rps": -1}, raw=True)).code == 400
    assert (await call("/_sim/limits", {"nope": 1}, raw=True)).code == 400
    await call("/_sim/stats", method="DELETE")
    url = "/wot/eu/wgn/servers/info/?application_id=abcdef&game=wot"
    start = time.monotonic()
    answers = [await call(url) for _ in range(6)]
    other = await call("/wot/eu/wgn/servers/info/?application_id=other-app&game=wot")
    assert time.monotonic() - start < 1.0, "the test machine is too slow for a 1 s window"
    assert [a["status"] for a in answers] == ["ok"] * 5 + ["error"]
    assert answers[5]["error"]["code"] == 407 and answers[5]["error"]["message"] == "REQUEST_LIMIT_EXCEEDED"
    assert other["status"] == "ok", "the window is per application_id"
    # /wn8exp.json and /_sim/* never count
    assert "data" in await call("/wn8exp.json")
    await asyncio_sleep(1.05)
    assert (await call(url))["status"] == "ok"
    stats = await call("/_sim/stats")
    assert stats["violations"]["request_limit"] == 1 and stats["violations"]["total"] == 1
    assert stats["violations_by_path"] == {"wgn/servers/info": 1}
    assert stats["max_per_second"] == 7
    assert stats["max_per_second_by_app"] == {"abc***": 6, "oth***": 1}
    assert stats["total"] == 8 and stats["by_path"] == {"wgn/servers/info": 8}
    assert "abcdef" not in ujson.dumps(stats)
    # 0 disables the limit
    await call("/_sim/limits", {"rps": 0})
    assert all([(await call(url))["status"] == "ok" for _ in range(12)])


async def asyncio_sleep(seconds: float) -> None:
    import asyncio

    await asyncio.sleep(seconds)


def test_rate_limiter_sliding_window_counts_refused_requests():
    limiter = RateLimiter(2)
    assert limiter.arrive("a", 0.0) and limiter.arrive("a", 0.5)
    assert not limiter.arrive("a", 0.9)  # 2 in the preceding second
    assert not limiter.arrive("a", 1.0)  # 0.5 and 0.9 (refused, still counted) are within (0.0, 1.0]
    assert limiter.arrive("b", 1.0)
    assert not limiter.arrive("a", 1.6)  # 0.9 and 1.0
    assert limiter.arrive("a", 2.7)  # nothing after 1.7
    unlimited = RateLimiter(0)
    assert all(unlimited.arrive("a", 0.0) for _ in range(100))


# --------------------------------------------------------------------------------------
# Payload sizes
# --------------------------------------------------------------------------------------


@pytest.mark.gen_test(timeout=60)
async def test_veteran_tanks_stats_are_full_size(call):
    veteran = sim.veteran_accounts("eu", 1)[0]
    assert sim.is_veteran("eu", veteran) and sim.account_exists("eu", veteran)
    await call("/_sim/stats", method="DELETE")
    full = await call(api("wot/tanks/stats", account_id=veteran), raw=True)
    tanks = ujson.loads(full.body)["data"][str(veteran)]
    assert 150 <= len(tanks) <= 400
    assert all(t["all"]["battles"] > 0 for t in tanks)
    assert 10_000 <= sum(t["all"]["battles"] for t in tanks) <= 100_000
    assert len(full.body) / len(tanks) > 3000, "several KB per tank"
    for tank in tanks[:20]:
        assert STATS_BLOCKS | {
            "frags",
            "in_garage",
            "mark_of_mastery",
            "max_frags",
            "max_xp",
            "account_id",
            "tank_id",
        } == set(tank)
        for block in STATS_BLOCKS:
            # the real API's per-tank blocks: no spotting or tracking assistance outside the global map
            want = set(sim.BLOCK_FIELDS) - (set() if block == "globalmap" else set(sim.NOT_PER_TANK))
            assert len(tank[block]) >= 25 and set(tank[block]) == want, block
        assert tank["all"]["wins"] + tank["all"]["losses"] + tank["all"]["draws"] == tank["all"]["battles"]
        assert tank["all"]["hits"] <= tank["all"]["shots"]
        assert isinstance(tank["frags"], dict)
    trimmed = await call(api("wot/tanks/stats", account_id=veteran, fields="tank_id,all.battles"), raw=True)
    small = ujson.loads(trimmed.body)["data"][str(veteran)]
    assert [t["tank_id"] for t in small] == [t["tank_id"] for t in tanks]
    assert all(set(t) == {"tank_id", "all"} and set(t["all"]) == {"battles"} for t in small)
    assert len(trimmed.body) * 50 < len(full.body)
    excluded = ujson.loads(
        (await call(api("wot/tanks/stats", account_id=veteran, fields="-team,-all.hits"), raw=True)).body
    )["data"][str(veteran)]
    assert "team" not in excluded[0] and "hits" not in excluded[0]["all"] and "shots" in excluded[0]["all"]
    again = ujson.loads((await call(api("wot/tanks/stats", account_id=veteran), raw=True)).body)
    assert again["data"][str(veteran)] == tanks, "fields never alter the cached answer"

    info = (await call(api("wot/account/info", account_id=veteran)))["data"][str(veteran)]
    statistics = info["statistics"]
    assert ACCOUNT_BLOCKS | {"frags", "trees_cut"} == set(statistics)
    for field in sim.SUM_FIELDS:
        assert statistics["all"][field] == sum(t["all"][field] for t in tanks), field
    for block in ACCOUNT_BLOCKS:
        assert {"battles", "wins", "damage_dealt", "avg_damage_blocked", "piercings"} <= set(statistics[block])
    stats = await call("/_sim/stats")
    assert stats["bytes_by_path"]["wot/tanks/stats"] > len(full.body)


def test_non_veterans_keep_a_small_garage_and_veterans_are_about_ten_percent():
    world = sim.World()
    accounts = sim.existing_accounts("eu", 2000)
    veterans = [a for a in accounts if sim.is_veteran("eu", a)]
    assert 0.07 < len(veterans) / len(accounts) < 0.13
    assert veterans[:5] == sim.veteran_accounts("eu", 5)
    for account_id in accounts[:40]:
        tanks = world.tanks_stats("eu", account_id, FROZEN_NOW, None)
        if sim.is_veteran("eu", account_id):
            assert 150 <= len(tanks) <= 400
        else:
            assert 1 <= len(tanks) < 80
    for region in ("na", "asia"):
        for account_id in sim.veteran_accounts(region, 3):
            assert 150 <= len(world.tanks_stats(region, account_id, time.time(), None)) <= 400


def test_the_generated_catalogue_is_big_enough_for_veterans():
    assert len(sim.generated_vehicles()) >= 700
    world = sim.World(vehicles="")
    assert world.vehicles_source == "generated"
    veteran = sim.veteran_accounts("na", 1)[0]
    assert 150 <= len(world.tanks_stats("na", veteran, FROZEN_NOW, None)) <= 400


@pytest.mark.gen_test(timeout=30)
async def test_vehicle_pages_of_100(call):
    first = await call(api("wot/encyclopedia/vehicles"))
    meta = first["meta"]
    total = meta["total"]
    assert meta["limit"] == 100 and meta["page"] == 1 and meta["count"] == len(first["data"]) == min(100, total)
    assert meta["page_total"] == -(-total // 100)
    if sim.DEFAULT_VEHICLES.is_file():
        assert total == 704 and meta["page_total"] == 8
    seen = dict(first["data"])
    for page in range(2, meta["page_total"] + 1):
        doc = await call(api("wot/encyclopedia/vehicles", page_no=page))
        assert doc["meta"]["page"] == page and len(doc["data"]) <= 100
        seen.update(doc["data"])
    assert len(seen) == total
    clamped = await call(api("wot/encyclopedia/vehicles", limit=500))
    assert clamped["meta"]["limit"] == 100 and len(clamped["data"]) == 100
    beyond = await call(api("wot/encyclopedia/vehicles", page_no=meta["page_total"] + 1))
    assert beyond["error"]["message"] == "INVALID_PAGE_NO"
    record = next(iter(first["data"].values()))
    assert {
        "name",
        "short_name",
        "tank_id",
        "tier",
        "type",
        "nation",
        "tag",
        "is_premium",
        "is_gift",
        "description",
        "images",
        "price_credit",
        "price_gold",
        "default_profile",
        "modules_tree",
        "crew",
        "guns",
        "turrets",
        "engines",
        "radios",
        "suspensions",
    } <= set(record)
    assert set(record["images"]) == {"big_icon", "contour_icon", "small_icon"}
    assert {"armor", "engine", "gun", "hp", "weight"} <= set(record["default_profile"])
    assert len(ujson.dumps(record)) > 2000
    trimmed = await call(api("wot/encyclopedia/vehicles", fields="tier,type", tier=10))
    assert all(set(v) == {"tier", "type"} and v["tier"] == 10 for v in trimmed["data"].values())


@pytest.mark.gen_test
async def test_vehicle_icons_are_served_by_the_simulator_at_the_origin_asked(call, base_url):
    """The records' images point at the simulator itself (the host the request reached), so a page
    showing them loads offline: each is a PNG of the real icon's size; an unknown tank is a 404."""
    import struct

    record = next(iter((await call(api("wot/encyclopedia/vehicles", limit=1)))["data"].values()))
    sizes = {"small_icon": (124, 31), "contour_icon": (80, 24), "big_icon": (160, 100)}
    for key, (width, height) in sizes.items():
        url = record["images"][key]
        assert url.startswith(base_url + "/_sim/icons/vehicle/") and url.endswith(f"/{record['tank_id']}.png"), url
        response = await call(url[len(base_url) :], raw=True)
        assert response.code == 200 and response.headers["Content-Type"] == "image/png"
        body = response.body
        assert body[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", body[16:24]) == (width, height)
    assert (await call("/_sim/icons/vehicle/small/999999999.png", raw=True)).code == 404
    assert (await call("/_sim/icons/vehicle/huge/1.png", raw=True)).code == 404


# --------------------------------------------------------------------------------------
# Disbanded clans
# --------------------------------------------------------------------------------------


def test_disbanded_clans_are_never_offered_as_existing():
    disbanded = sim.disbanded_clans("eu", 20)
    active = sim.existing_clans("eu", 400)
    assert len(disbanded) == 20 and not set(disbanded) & set(active)
    assert all(sim.clan_exists("eu", c) and not sim.clan_active("eu", c) for c in disbanded)
    assert all(sim.clan_members("eu", c) == () for c in disbanded)
    base = 500_000
    slots = [sim.clan_state("eu", c) for c in range(base, base + 4000)]
    assert 0.03 < slots.count("disbanded") / len(slots) < 0.07
    accounts = sim.existing_accounts("eu", 5000)
    assert all(sim.clan_of_account("eu", a) not in set(disbanded) for a in accounts)
    assert all(sim.clan_active("eu", c) for c in {sim.clan_of_account("eu", a) for a in accounts} - {None})
    assert sim.existing_clans("eu", 1) == [500_000] and sim.clan_of_account("eu", 500_000_001) == 500_000


@pytest.mark.gen_test(timeout=30)
async def test_disbanded_clan_shapes(call):
    clan_id = sim.disbanded_clans("eu", 1)[0]
    active = sim.existing_clans("eu", 1)[0]
    doc = await call(api("wot/clans/info", clan_id=ids([clan_id, active])))
    normal, gone = doc["data"][str(active)], doc["data"][str(clan_id)]
    assert set(gone) == set(normal)
    assert gone["clan_id"] == clan_id and gone["is_clan_disbanded"] is True and isinstance(gone["updated_at"], int)
    assert all(v is None for k, v in gone.items() if k not in ("clan_id", "is_clan_disbanded", "updated_at"))
    assert gone["members"] is None and gone["members_count"] is None and gone["tag"] is None
    for path in ("wot/clanratings/clans", "wot/stronghold/claninfo"):
        data = (await call(api(path, clan_id=ids([clan_id, active]))))["data"]
        assert data[str(clan_id)] is None and data[str(active)]["clan_id"] == active, path
    missing = sim.missing_clans("eu", 1)[0]
    assert (await call(api("wot/clans/info", clan_id=missing)))["data"][str(missing)] is None


@pytest.mark.gen_test(timeout=30)
async def test_disband_a_clan_at_run_time(call):
    clan_id = sim.existing_clans("eu", 3)[2]
    member = sim.clan_members("eu", clan_id)[0]
    assert (await call(api("wot/account/info", account_id=member)))["data"][str(member)]["clan_id"] == clan_id
    assert (await call("/_sim/clans/disband")) == {"disbanded": {}}
    doc = await call("/_sim/clans/disband", {"region": "eu", "clan_id": clan_id})
    assert doc == {"disbanded": {"eu": {str(clan_id): FROZEN_NOW}}}
    info = (await call(api("wot/clans/info", clan_id=clan_id)))["data"][str(clan_id)]
    assert info["is_clan_disbanded"] is True and info["updated_at"] == FROZEN_NOW and info["members"] is None
    assert (await call(api("wot/clanratings/clans", clan_id=clan_id)))["data"][str(clan_id)] is None
    assert (await call(api("wot/stronghold/claninfo", clan_id=clan_id)))["data"][str(clan_id)] is None
    assert (await call(api("wot/account/info", account_id=member)))["data"][str(member)]["clan_id"] is None
    again = await call("/_sim/clans/disband", {"region": "eu", "clan_id": clan_id}, raw=True)
    assert again.code == 404
    assert (
        await call("/_sim/clans/disband", {"region": "eu", "clan_id": sim.missing_clans("eu", 1)[0]}, raw=True)
    ).code == 404
    assert (await call("/_sim/clans/disband", {"region": "xx", "clan_id": clan_id}, raw=True)).code == 400
    assert (await call("/_sim/clans/disband", {}, raw=True)).code == 400
    assert (await call("/_sim/clans/disband", {"reset": True})) == {"disbanded": {}}
    info = (await call(api("wot/clans/info", clan_id=clan_id)))["data"][str(clan_id)]
    assert info["is_clan_disbanded"] is False and info["members_count"] > 0
    assert (await call(api("wot/account/info", account_id=member)))["data"][str(member)]["clan_id"] == clan_id
    listed = await call("/_sim/clans/disbanded?region=eu&n=3")
    assert listed["ids"] == sim.disbanded_clans("eu", 3)
    assert (await call("/_sim/veterans?region=na&n=2"))["ids"] == sim.veteran_accounts("na", 2)


# --------------------------------------------------------------------------------------
# Servers, counters, expected values
# --------------------------------------------------------------------------------------


@pytest.mark.gen_test(timeout=30)
async def test_servers_info_game_list(call):
    doc = await call("/wot/eu/wgn/servers/info/?application_id=x&game=wot,wotb")
    assert doc["status"] == "ok" and set(doc["data"]) == {"wot", "wotb"}
    assert all(set(row) == {"server", "players_online"} for game in doc["data"].values() for row in game)
    doc = await call("/wot/na/wgn/servers/info/?application_id=x")
    assert set(doc["data"]) == {"wot", "wotb", "wows"} and doc["meta"]["count"] == 3
    for prefix in ("/wotb/asia", "/wows/eu"):
        doc = await call(prefix + "/wgn/servers/info/?application_id=x&game=wows")
        assert list(doc["data"]) == ["wows"]
    doc = await call("/wot/eu/wgn/servers/info/?application_id=x&game=wot,wot2")
    assert doc["error"]["code"] == 407 and doc["error"]["message"] == "INVALID_GAME"


@pytest.mark.gen_test(timeout=30)
async def test_bytes_counters(call):
    await call("/_sim/stats", {"reset": True})
    account_id = sim.existing_accounts("eu", 1)[0]
    first = await call(api("wot/account/info", account_id=account_id), raw=True)
    second = await call(api("wot/tanks/stats", account_id=account_id), raw=True)
    error = await call(api("wot/clans/info", clan_id="abc"), raw=True)
    await call("/wn8exp.json")
    stats = await call("/_sim/stats")
    assert stats["bytes"] == len(first.body) + len(second.body) + len(error.body)
    assert stats["bytes_by_path"] == {
        "wot/account/info": len(first.body),
        "wot/tanks/stats": len(second.body),
        "wot/clans/info": len(error.body),
    }
    assert stats["total"] == 3 and stats["max_per_second"] >= 1
    assert set(stats) >= {
        "total",
        "by_path",
        "by_endpoint",
        "faults",
        "since",
        "max_per_second",
        "max_per_second_by_app",
        "violations",
        "violations_by_path",
        "bytes",
        "bytes_by_path",
    }
    cleared = await call("/_sim/stats", method="DELETE")
    assert cleared["bytes"] == 0 and cleared["max_per_second"] == 0 and cleared["violations"]["total"] == 0


@pytest.mark.gen_test(timeout=30)
async def test_expected_values_as_strings_and_with_bad_rows(app, call):
    plain = await call("/wn8exp.json")
    strings = await call("/wn8exp.json?strings=1")
    assert len(strings["data"]) == len(plain["data"])
    for a, b in zip(plain["data"][:50], strings["data"][:50]):
        assert set(a) == set(b)
        assert all(isinstance(v, str) and float(v) == float(a[k]) for k, v in b.items())
    bad = await call("/wn8exp.json?bad_rows=4")
    assert len(bad["data"]) == len(plain["data"]) + 4
    extra = bad["data"][len(plain["data"]) :]
    assert any(isinstance(r, dict) and "IDNum" not in r for r in extra)
    assert any(isinstance(r, dict) and isinstance(r.get("IDNum"), str) and not r["IDNum"].isdigit() for r in extra)
    app.sim.expected_values_strings = True  # what --expected-values-strings sets
    assert isinstance((await call("/wn8exp.json"))["data"][0]["IDNum"], str)
    assert isinstance((await call("/wn8exp.json?strings=0"))["data"][0]["IDNum"], int)
    assert (await call("/wn8exp.json?bad_rows=x", raw=True)).code == 400


def test_package_layout_and_command_line():
    assert not (ROOT / "scripts" / "upstream_sim.py").exists()
    out = subprocess.run(
        [sys.executable, "-m", "scripts.upstream_sim", "--list", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert f"eu veterans:  {' '.join(map(str, sim.veteran_accounts('eu', 2)))}" in out.stdout
    assert f"eu disbanded: {' '.join(map(str, sim.disbanded_clans('eu', 2)))}" in out.stdout
    help_text = subprocess.run(
        [sys.executable, "-m", "scripts.upstream_sim", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60
    ).stdout
    assert "--rps" in help_text and "--expected-values-strings" in help_text


# --------------------------------------------------------------------------------------
# Cold generation: lazy and fast, the numbers those of the plain random.Random formulation
# --------------------------------------------------------------------------------------


def _reference_rates(world, prof, tank_id: int) -> dict:
    """A tank's rates drawn with random.Random's own methods (the formulation the fast path inlines)."""
    import hashlib
    import random

    def _clamp(x: float, lo: float, hi: float) -> float:
        return min(hi, max(lo, x))

    def _seed(*parts) -> int:  # the simulator's stable seed, restated: this is the reference formulation
        text = "\x1f".join(str(p) for p in parts).encode()
        return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big")

    exp = world.expectation(tank_id)
    vehicle = world.vehicles[tank_id]
    tier = vehicle["tier"]
    rng = random.Random(f"{prof.region}:{prof.account_id}:{tank_id}")
    st = prof.skill * _clamp(rng.gauss(1.0, 0.08), 0.8, 1.2)
    wr = _clamp(float(exp["expWinRate"]) / 100.0 * (0.78 + 0.25 * prof.skill) * rng.uniform(0.97, 1.03), 0.30, 0.80)
    dr = rng.uniform(0.006, 0.015)
    shots = (6.0 + 0.4 * tier) * rng.uniform(0.8, 1.2)
    r = {
        "win": wr,
        "draw_of_rest": dr / (1.0 - wr),
        "shots": shots,
        "hit_ratio": _clamp(0.55 + 0.12 * st, 0.4, 0.95),
        "damage_dealt": float(exp["expDamage"]) * st * rng.uniform(0.96, 1.04),
        "frags": float(exp["expFrag"]) * st * rng.uniform(0.94, 1.06),
        "spotted": float(exp["expSpot"]) * st * rng.uniform(0.92, 1.08),
        "dropped_capture_points": float(exp["expDef"]) * st * rng.uniform(0.9, 1.1),
        "capture_points": rng.uniform(0.5, 2.5),
        "xp": (140 + 75 * tier) * (0.7 + 0.35 * st),
        "survived_battles": _clamp(0.12 + 0.2 * st, 0.05, 0.75),
        "damage_received": float(exp["expDamage"]) * _clamp(1.25 - 0.35 * st, 0.5, 1.4),
        "phase": [rng.random() for _ in range(12)],
    }
    x = random.Random(_seed("extra", prof.region, prof.account_id, tank_id))
    spg = vehicle["type"] == "SPG"
    dmg = r["damage_dealt"]
    r.update(
        {
            "tanking_factor": round(x.uniform(0.2, 0.8), 2),
            "avg_damage_blocked": round(dmg * x.uniform(0.2, 1.2), 2),
            "avg_damage_assisted": round(dmg * x.uniform(0.2, 0.8), 2),
            "avg_damage_assisted_track": round(dmg * x.uniform(0.05, 0.3), 2),
            "avg_damage_assisted_radio": round(dmg * x.uniform(0.1, 0.5), 2),
            "direct_hits_received": x.uniform(3.0, 9.0),
            "explosion_hits": x.uniform(0.2, 3.0) if spg else x.uniform(0.0, 0.6),
            "explosion_hits_received": x.uniform(0.1, 1.2),
            "no_damage_direct_hits_received": x.uniform(0.3, 2.5),
            "piercings": shots * r["hit_ratio"] * x.uniform(0.6, 0.9),
            "piercings_received": x.uniform(2.0, 6.0),
            "stun_assisted_damage": dmg * x.uniform(0.3, 0.9) if spg else 0.0,
            "stun_number": x.uniform(1.0, 4.0) if spg else 0.0,
            "battles_on_stunning_vehicles": 1.0 if spg else 0.0,
            "victims": [str(x.choice(world.tank_ids)) for _ in range(x.randint(2, 6))],
            "variation": [x.uniform(0.5, 1.5) for _ in sim.TANK_BLOCKS],
        }
    )
    return r


@pytest.mark.parametrize("vehicles", [None, ""])
def test_fast_tank_rates_draw_what_random_draws(vehicles):
    world = sim.World(vehicles=vehicles)
    spg = {t for t, v in world.vehicles.items() if v["type"] == "SPG"}
    for region in sim.REGIONS:
        for account_id in sim.existing_accounts(region, 3) + sim.veteran_accounts(region, 1):
            prof = world.profile(region, account_id)
            garage = prof.garage[:20] + [t for t in prof.garage if t in spg][:3]
            for tank_id in garage:
                assert prof._tank_rates(tank_id)._asdict() == _reference_rates(world, prof, tank_id), (
                    region,
                    account_id,
                    tank_id,
                )


def test_packed_week_sums_equal_the_week_by_week_sums():
    from scripts.upstream_sim.profile import _PACKED_MIN

    world = sim.World()
    accounts = sim.existing_accounts("na", 60) + sim.veteran_accounts("asia", 3)
    quitters = 0
    for account_id in accounts:
        region = "asia" if sim.is_veteran("asia", account_id) else "na"
        prof = world.profile(region, account_id)
        quitters += prof.quit_week is not None
        weeks = 900
        prof._ensure_weeks(3)  # a few weeks one by one, then the rest packed
        prof._ensure_weeks(3 + _PACKED_MIN - 1)
        prof._ensure_weeks(weeks)
        expected = [0]
        for w in range(weeks):
            expected.append(expected[-1] + sum(prof._week(w)))
        assert list(prof.wcum) == expected, account_id
    assert quitters, "some accounts stop playing"


def test_cold_generation_does_not_depend_on_what_was_asked_first():
    region, now = "eu", FROZEN_NOW
    accounts = sim.existing_accounts(region, 12, start=640_000_000) + sim.veteran_accounts(region, 2, start=640_000_000)
    later = now + 40 * 86400
    first, second = sim.World(), sim.World()
    for account_id in accounts:  # account/info first (tanks drawn lazily), then tanks/stats, later instant first
        first.account_info(region, account_id, now)
        first.tanks_stats(region, account_id, now, None)
        second.tanks_stats(region, account_id, later, None)
        second.account_info(region, account_id, later)
    for account_id in accounts:
        for when in (now, later):
            assert ujson.dumps(first.account_info(region, account_id, when), sort_keys=True) == ujson.dumps(
                second.account_info(region, account_id, when), sort_keys=True
            )
            assert first.tanks_stats_json(region, account_id, when) == second.tanks_stats_json(region, account_id, when)
        info = first.account_info(region, account_id, now)
        tanks = first.tanks_stats(region, account_id, now, None)
        for field in sim.SUM_FIELDS:
            assert info["statistics"]["all"][field] == sum(t["all"][field] for t in tanks), field
        assert [t["tank_id"] for t in tanks] == sorted(t["tank_id"] for t in tanks)


def test_assistance_is_where_the_real_api_puts_it():
    """As the real API (its method reference): tanks/stats gives each tank its stun assistance and
    damage received (totals) and its mastery badge, never the spotting or tracking assistance
    (outside the global map block); account/info gives those only as the account's per-battle
    averages, battle-weighted over its tanks, rounded to 0.01."""
    region, now = "eu", FROZEN_NOW
    world = sim.World()
    for account_id in sim.existing_accounts(region, 6, start=641_000_000):
        tanks = world.tanks_stats(region, account_id, now, None)
        info = world.account_info(region, account_id, now)
        if not tanks:
            continue
        for tank in tanks:
            assert "stun_assisted_damage" in tank["all"] and "damage_received" in tank["all"]
            assert isinstance(tank["mark_of_mastery"], int)
            for block, values in tank.items():
                if isinstance(values, dict) and block not in ("globalmap", "frags"):
                    assert "avg_damage_assisted_radio" not in values, block
                    assert "avg_damage_assisted_track" not in values, block
        totals = info["statistics"]["all"]
        assert totals["stun_assisted_damage"] == sum(t["all"]["stun_assisted_damage"] for t in tanks)
        assert isinstance(totals["avg_damage_assisted_radio"], float | int)
        assert totals["avg_damage_assisted_radio"] >= 0 and totals["avg_damage_assisted_track"] >= 0


def test_bench_generation_reports_ms_per_cold_account():
    from scripts.upstream_sim.bench import bench_generation

    figures = bench_generation(n=4)
    assert set(figures) == {
        "mixed_account_info_ms",
        "account_info_ms",
        "veteran_account_info_ms",
        "veteran_tanks_stats_ms",
    }
    assert all(v > 0 for v in figures.values())
    help_text = subprocess.run(
        [sys.executable, "-m", "scripts.upstream_sim", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60
    ).stdout
    assert "--bench-generation" in help_text


def test_players_behave_like_players():
    """Issue 14 (Build 5), from the simulator's closed-form functions (no HTTP): 2,000 accounts
    over 60 days. 30-50 % play on a given day; an ordinary player's playing day is 5-30 battles on
    1-6 tanks (battles go to tanks in blocks of 5, so a day that starts inside a block may span one
    tank more: rare, and never more than 7); some take breaks of months; a few grinders play
    hundreds of battles a week (at least 200 in some week: an ordinary player with a 15-battle
    evening most days reaches 100, which about a fifth of them do)."""
    import datetime as dt

    from scripts.upstream_sim.ids import BLOCK

    world = sim.World(profile_cache=16)
    days = 60
    first = (dt.date(2025, 3, 1) - dt.date(1970, 1, 1)).days
    accounts = [("eu", a) for a in sim.existing_accounts("eu", 1000, start=520_000_000)]
    accounts += [("na", a) for a in sim.existing_accounts("na", 1000, start=1_020_000_000)]
    active = [0] * days
    playing_days = six_or_fewer = 0
    on_break = grinders = 0
    for region, account_id in accounts:
        prof = world.profile(region, account_id)
        start = first - prof.day0
        through = [prof._battles_through(start - 1 + k) for k in range(days + 1)]
        idle_run = longest_idle = 0
        played = False
        for k in range(days):
            before, after = through[k], through[k + 1]
            if after == before:
                idle_run += played
                longest_idle = max(longest_idle, idle_run)
                continue
            active[k] += 1
            played, idle_run = True, 0
            prof._ensure_blocks((after - 1) // BLOCK + 1)
            tanks = {prof.blocks[b] for b in range(before // BLOCK, (after - 1) // BLOCK + 1)}
            if prof.grinder:
                assert after - before >= 5
                continue
            assert 5 <= after - before <= 30, (region, account_id, k, after - before)
            assert 1 <= len(tanks) <= 7, (region, account_id, k, len(tanks))
            playing_days += 1
            six_or_fewer += len(tanks) <= 6
        on_break += longest_idle >= 30
        week = max(through[k + 7] - through[k] for k in range(days - 6))
        grinders += week >= 200
    share = sum(active) / days / len(accounts)
    assert 0.30 <= share <= 0.50, share
    assert all(0.25 <= n / len(accounts) <= 0.55 for n in active), active
    assert six_or_fewer / playing_days >= 0.98, six_or_fewer / playing_days
    assert 0 < on_break < len(accounts) // 4, on_break  # breaks of months: some, not most
    assert 0 < grinders < len(accounts) // 10, grinders


def test_nicknames_use_only_the_characters_real_nicknames_allow():
    import re

    for region in sim.REGIONS:
        names = [sim.nickname(region, a) for a in sim.existing_accounts(region, 3000)]
        assert all(re.fullmatch(r"[A-Za-z0-9_]{3,24}", name) for name in names), region
        assert any("_" in name for name in names) and len(set(names)) > 0.9 * len(names)


def test_with_battle_seconds_a_session_is_played_battle_by_battle_to_the_same_day_end():
    """--battle-seconds: a day's battles come one at a time before its session's end (what a live
    session sees), never going back, and the day ends where the default world's does."""
    from scripts.upstream_sim.ids import existing_accounts
    from scripts.upstream_sim.profile import DAY
    from scripts.upstream_sim.world import World

    spread, whole = World(battle_seconds=300), World()
    today = int(time.time() // DAY)
    checked = 0
    for account in existing_accounts("eu", 40):
        prof, plain = spread.profile("eu", account), whole.profile("eu", account)
        for k in range(today - 30 - prof.day0, today - prof.day0):
            n = prof._battles_through(k) - prof._battles_through(k - 1)
            if k < 1 or n < 3:
                continue
            day_start = (prof.day0 + k) * DAY
            end = day_start + prof._play_offset(k)
            start = max(day_start, end - n * 300)
            before = prof.account_info(start - 1)["statistics"]["all"]["battles"]
            assert before == plain.account_info(start - 1)["statistics"]["all"]["battles"]
            seen, last_rows, last_time = [], None, 0
            for t in [*range(int(start), int(end), 61), int(end) + 1]:
                info = prof.account_info(t)
                battles = info["statistics"]["all"]["battles"]
                seen.append(battles)
                assert info["last_battle_time"] <= t and info["last_battle_time"] >= last_time
                last_time = info["last_battle_time"]
                rows = {r["tank_id"]: r["all"]["battles"] for r in prof.tanks(t)}
                assert sum(rows.values()) == battles
                if last_rows is not None:
                    assert all(rows.get(tank, 0) >= count for tank, count in last_rows.items())
                last_rows = rows
            assert seen == sorted(seen) and seen[0] == before and seen[-1] == before + n
            assert len(set(seen)) >= min(n, 3)  # seen battle by battle, not all at once
            after = prof.account_info(end + 1)
            assert after == plain.account_info(end + 1)
            checked += 1
            break
        if checked >= 3:
            break
    assert checked >= 3


@pytest.mark.gen_test(timeout=60)
async def test_account_tanks_and_clan_membership_agree_with_tanks_stats_and_clans_info(call):
    """account/tanks and clans/accountinfo (issue 51's batched roster): 100 ids a call, the real
    shapes, null for an unknown account or one without a clan, and the same figures as tanks/stats
    and clans/info for the same account."""
    accounts = sim.existing_accounts("eu", 101)
    for path in ("wot/account/tanks", "wot/clans/accountinfo"):
        doc = await call(api(path, account_id=ids(accounts)))
        assert doc["error"]["message"] == "ACCOUNT_ID_LIST_LIMIT_EXCEEDED" and doc["error"]["code"] == 407, path
        doc = await call(api(path, account_id=ids(accounts[:100]), fields="account_id"))
        assert doc["status"] == "ok" and doc["meta"]["count"] == 100, path
    missing = sim.missing_accounts("eu", 1)[0]
    sample = accounts[:20]
    tanks = (await call(api("wot/account/tanks", account_id=ids([*sample, missing]))))["data"]
    assert tanks[str(missing)] is None
    for account in sample:
        full = (await call(api("wot/tanks/stats", account_id=account)))["data"][str(account)]
        assert tanks[str(account)] == [
            {
                "statistics": {"wins": t["all"]["wins"], "battles": t["all"]["battles"]},
                "mark_of_mastery": t["mark_of_mastery"],
                "tank_id": t["tank_id"],
            }
            for t in full
        ]
    some = tanks[str(sample[0])][:2]
    only = (await call(api("wot/account/tanks", account_id=sample[0], tank_id=ids(t["tank_id"] for t in some))))["data"]
    assert only[str(sample[0])] == some
    members = (await call(api("wot/clans/accountinfo", account_id=ids([*sample, missing]))))["data"]
    assert members[str(missing)] is None
    infos = (await call(api("wot/account/info", account_id=ids(sample), fields="clan_id")))["data"]
    in_clans = 0
    for account in sample:
        clan_id = infos[str(account)]["clan_id"]
        if clan_id is None:
            assert members[str(account)] is None
            continue
        in_clans += 1
        clan = (await call(api("wot/clans/info", clan_id=clan_id)))["data"][str(clan_id)]
        row = next(m for m in clan["members"] if m["account_id"] == account)
        member = members[str(account)]
        assert member["clan"]["clan_id"] == clan_id and member["clan"]["tag"] == clan["tag"]
        assert member["role"] == row["role"] and member["account_name"] == row["account_name"]
    assert in_clans > 0, "no account of the sample is in a clan: the check would prove nothing"
