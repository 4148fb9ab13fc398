"""The service against the strict simulator at the real API's limits: never refused, fields, disbanded clans.

The simulator runs as a child process at ``--rps 10`` (the real quota of a standalone
application_id) and counts what it saw; the service talks real HTTP to it. Figures (requests per
second, refusals, live-lookup latency, payload bytes) are written to
``tests/artifacts/upstream-contract.json`` and printed with ``-s``:

    .venv/bin/python -m pytest tests/test_upstream_contract.py -s
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest
import ujson
from tornado.httpclient import AsyncHTTPClient

from scripts.upstream_sim import (
    clan_members,
    disbanded_clans,
    existing_accounts,
    existing_clans,
    veteran_accounts,
)
from tests.helpers import ROOT, build_app, scratch_database, sim_async, simulator

RPS = 10
THROTTLE = {"eu": 6, "na": 8, "asia": 8}
FIGURES: dict = {}
# Clans in the refresh under live lookups. 20 prove what 50 did: the refresh's 200 member ratings
# (RATING_BUDGET, whatever the clan count), its clan and member reads and the live lookups all
# queue at EU's cap for about a minute; 50 clans added 14 requests and ~1,500 more members for the
# database to track (about 25 s on the embedded database), and nothing for the assertions.
CLANS = 20
RATINGS = 80


@pytest.fixture(scope="module")
def mongo_uri():
    """This module's own SecantusDB: the clan refresh tracks about a thousand members in 30 s job
    steps, which late in a full run waited behind every earlier test's data on the shared server."""
    with scratch_database("statsapi-contract-db-") as uri:
        yield uri


@pytest.fixture(scope="module")
def strict_sim():
    """A simulator as strict as the real API: 10 requests per second per application_id."""
    with simulator(RPS) as url:
        yield url
    if FIGURES:
        path = ROOT / "tests" / "artifacts"
        path.mkdir(exist_ok=True)
        (path / "upstream-contract.json").write_text(json.dumps(FIGURES, indent=2, sort_keys=True))
        print("\nupstream contract figures:", json.dumps(FIGURES, indent=2, sort_keys=True))


@pytest.fixture
def app(io_loop, mongo_uri, db_name, strict_sim):
    # Live-lookup limits scaled up so one test client can look up many players; the upstream
    # budget is the real one.
    return build_app(io_loop, mongo_uri, db_name, upstream_base_url=strict_sim, upstream_rps=RPS, rate_limit_scale=10)


async def reset(base: str) -> None:
    await sim_async(base, "/_sim/stats", {"reset": True})
    await sim_async(base, "/_sim/faults", {"reset": True})
    await sim_async(base, "/_sim/limits", {"rps": RPS})
    # The CDN's throttle per address and realm at its default rates, with no window or block
    # left over from an earlier test.
    await sim_async(base, "/_sim/throttle", {"rates": THROTTLE, "reset": True})


async def lookup(http_client, base_url: str, account_id: int, region: str = "eu") -> tuple[int, float, dict]:
    started = time.monotonic()
    response = await http_client.fetch(
        f"{base_url}/api/v1/player/{account_id}/{region}", raise_error=False, request_timeout=30
    )
    return response.code, time.monotonic() - started, ujson.loads(response.body)


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@pytest.mark.gen_test(timeout=240)
async def test_clans_refresh_without_a_refusal_while_live_lookups_answer(app, http_client, base_url, strict_sim):
    services = app.settings["services"]
    store = app.settings["store"]
    clans = existing_clans("eu", CLANS)
    # Never looked up and no clan's member (the refresh caches the members it rates).
    accounts = existing_accounts("eu", 100, start=505_000_000)
    # The simulator builds an account's history on first sight (~3 ms, a veteran's ~12 ms, on
    # one thread beside the service and the database), which the real API does not do: warm it
    # (with another application_id, no limit) so the figures measure the service, not that.
    await sim_async(strict_sim, "/_sim/limits", {"rps": 0})
    await sim_async(strict_sim, "/_sim/throttle", {"rates": None})
    members = [m for clan_id in clans for m in clan_members("eu", clan_id)] + accounts
    for start in range(0, len(members), 100):
        await sim_async(
            strict_sim,
            "/wot/eu/wot/account/info/?application_id=warm-up&fields=account_id&account_id="
            + ",".join(map(str, members[start : start + 100])),
        )
    await reset(strict_sim)
    await store.clans.add_seeds("eu", clans)
    # 80 member ratings at EU's 6 per second outlast the refresh's other requests as 200 did, in
    # half the time: what matters is that ratings and live lookups contend at the cap.
    services.clans.rating_budget = RATINGS
    slot = int(time.time() // 3600)

    refresh = asyncio.ensure_future(services.clans.refresh(slot))
    latencies: list[float] = []
    codes: list[int] = []
    index = 0
    # One uncached player every 1.5 s while the refresh runs: about the 30/min global live budget.
    while not refresh.done():
        code, seconds, body = await lookup(http_client, base_url, accounts[index])
        codes.append(code)
        latencies.append(seconds)
        assert code == 200, body
        assert body["data"]["live_fetched"] is True
        index += 1
        await asyncio.wait([refresh], timeout=1.5)
    outcome = await refresh

    stats = await sim_async(strict_sim, "/_sim/stats")
    assert outcome.startswith(f"refreshed {CLANS} clans, failed 0"), outcome
    assert f"members rated {RATINGS}," in outcome, outcome  # the whole rating budget went through EU's cap
    assert stats["violations"]["total"] == 0, stats["violations_by_path"]
    assert stats["max_per_second"] <= RPS
    assert stats["by_path"]["wot/stronghold/claninfo"] == CLANS // 10  # 10 clans per request
    assert len(codes) >= 5 and set(codes) == {200}
    for clan_id in clans[:3]:
        response = await http_client.fetch(f"{base_url}/api/v1/clan/{clan_id}/eu", raise_error=False)
        assert response.code == 200
    budget = services.upstream.budget.status()
    assert budget["request_limit_exceeded"]["count"] == 0
    FIGURES[f"clan_refresh_{CLANS}"] = {
        "outcome": outcome,
        "upstream_requests": stats["total"],
        "max_requests_in_any_second": stats["max_per_second"],
        "violations": stats["violations"]["total"],
        "live_lookups": len(latencies),
        "live_p50_s": round(quantile(latencies, 0.5), 3),
        "live_p99_s": round(quantile(latencies, 0.99), 3),
        "live_max_s": round(max(latencies), 3),
        "live_s": [round(x, 2) for x in latencies],
        "live_queue_wait_ms": budget["live_queue_wait_ms"],
        "requests_by_caller": budget["requests_last_minute_by_caller"],
        "requests_by_path": stats["by_path"],
    }


@pytest.mark.gen_test(timeout=120)
async def test_every_job_at_once_stays_within_the_rate(app, http_client, base_url, strict_sim):
    """Refresh-ahead, sampler, table and vehicle reloads and live lookups all at once."""
    services = app.settings["services"]
    store = app.settings["store"]
    await reset(strict_sim)
    now = time.time()
    # Thirty profiles requested recently and about to expire: the refresh-ahead job's work.
    for account_id in existing_accounts("na", 30):
        doc = {
            "region": "na",
            "account_id": account_id,
            "nickname": "x",
            "clan_id": None,
            "totals": {},
            "tanks": [],
            "cached_at": now - 3000,
            "ratings": None,
            "last_requested": now - 60,
        }
        await store.players.save(doc)
    slot = int(now // 60)
    jobs = [
        services.players.refresh_ahead(slot),
        services.online.sample(slot),
        services.ratings_source.refresh_expected(),
        services.ratings_source.tiers("asia"),
        services.clans.refresh(int(now // 3600)),
    ]
    lookups = [lookup(http_client, base_url, account_id, "asia") for account_id in existing_accounts("asia", 8)]
    results = await asyncio.gather(*jobs, *lookups)
    assert results[0] == "refreshed 30, failed 0"
    assert all(code == 200 for code, _, _ in results[len(jobs) :])
    stats = await sim_async(strict_sim, "/_sim/stats")
    assert stats["violations"]["total"] == 0, stats["violations_by_path"]
    assert stats["max_per_second"] <= RPS
    FIGURES["burst"] = {
        "upstream_requests": stats["total"],
        "max_requests_in_any_second": stats["max_per_second"],
        "violations": 0,
        "live_s": sorted(round(s, 2) for _, s, _ in results[len(jobs) :]),
    }


@pytest.mark.gen_test(timeout=120)
async def test_request_limit_exceeded_slows_the_client_down(app, strict_sim):
    services = app.settings["services"]
    upstream = services.upstream
    await reset(strict_sim)
    # The upstream allows less than we were told (another tool shares the application_id).
    await sim_async(strict_sim, "/_sim/limits", {"rps": 3})
    # The slow-down is what this test is about: quick retries instead of the background back-off
    # (2 to 32 s), and no recovery step (a tenth every 5 s, which probes above the real limit
    # again by design) while it runs.
    upstream.background_retry_base = 0.05
    upstream.budget.recover_every = 3600.0
    ids = existing_accounts("eu", 40)
    first = await asyncio.gather(
        *(upstream.account_info("eu", [a], fields="account_id") for a in ids[:20]), return_exceptions=True
    )
    refused_early = (await sim_async(strict_sim, "/_sim/stats"))["violations"]["request_limit"]
    status = upstream.budget.status()
    assert refused_early >= 1 and status["request_limit_exceeded"]["count"] >= 1
    assert status["slowed_down"] is True and status["effective_per_second"] <= 3
    # Once slowed down the client stays under the real limit: the next requests all pass.
    await sim_async(strict_sim, "/_sim/stats", {"reset": True})
    second = await asyncio.gather(*(upstream.account_info("eu", [a], fields="account_id") for a in ids[20:30]))
    assert all(result[a]["account_id"] == a for result, a in zip(second, ids[20:30]))
    assert (await sim_async(strict_sim, "/_sim/stats"))["violations"]["total"] == 0
    FIGURES["slow_down"] = {
        "refused_before_slowing": refused_early,
        "failed_calls_before": sum(isinstance(r, Exception) for r in first),
        "effective_per_second_after": status["effective_per_second"],
    }


@pytest.mark.gen_test(timeout=120)
async def test_disbanded_clans_are_dropped(app, http_client, base_url, strict_sim):
    services = app.settings["services"]
    store = app.settings["store"]
    await reset(strict_sim)
    # What is dropped is the subject, not the members' ratings: without them three refreshes of
    # two clans are a few requests instead of ~100 tanks/stats calls at ASIA's cap (~12 s).
    services.clans.rating_budget = 0
    living, doomed = existing_clans("asia", 2)
    gone_already = disbanded_clans("asia", 1)[0]
    await store.clans.add_seeds("asia", [living, doomed, gone_already])
    outcome = await services.clans.refresh(1)
    assert outcome.startswith("refreshed 2 clans, failed 0, partial 0, not found 0, disbanded 1"), outcome
    response = await http_client.fetch(f"{base_url}/api/v1/clan/{gone_already}/asia", raise_error=False)
    assert response.code == 404 and ujson.loads(response.body)["error"]["code"] == "clan_not_cached"
    assert (await http_client.fetch(f"{base_url}/api/v1/clan/{doomed}/asia", raise_error=False)).code == 200

    # The clan disbands between two refreshes; a cached member profile still names it.
    await sim_async(strict_sim, "/_sim/clans/disband", {"region": "asia", "clan_id": doomed})
    try:
        member = (await store.clans.get("asia", doomed))["members"][0]["account_id"]
        await store.players.save(
            {
                "region": "asia",
                "account_id": member,
                "nickname": "x",
                "clan_id": doomed,
                "totals": {},
                "tanks": [],
                "cached_at": time.time(),
                "ratings": None,
            }
        )
        services.clans.clock = lambda: time.time() + 3600
        outcome = await services.clans.refresh(2)
        assert "disbanded 1" in outcome, outcome
        response = await http_client.fetch(f"{base_url}/api/v1/clan/{doomed}/asia", raise_error=False)
        assert response.code == 404 and ujson.loads(response.body)["error"]["code"] == "clan_not_cached"
        assert (await http_client.fetch(f"{base_url}/api/v1/clan/{doomed}/asia/weekly", raise_error=False)).code == 404
        # Dropped from the refresh, although the stale profile still names it.
        services.clans.clock = lambda: time.time() + 3 * 3600
        await sim_async(strict_sim, "/_sim/stats", {"reset": True})
        outcome = await services.clans.refresh(3)
        stats = await sim_async(strict_sim, "/_sim/stats")
        assert "disbanded 0" in outcome and "refreshed 1 clans" in outcome, outcome
        assert (await http_client.fetch(f"{base_url}/api/v1/clan/{living}/asia", raise_error=False)).code == 200
        assert stats["violations"]["total"] == 0
    finally:
        await sim_async(strict_sim, "/_sim/clans/disband", {"reset": True})


@pytest.mark.gen_test(timeout=60)
async def test_string_valued_expected_values_with_bad_rows_load(app, http_client, base_url, strict_sim):
    services = app.settings["services"]
    source = services.ratings_source.loaded_source  # the RatingsSource under the computed rows
    source.location = strict_sim + "/json/wg/wn8exp.json?strings=1&bad_rows=3"
    outcome = await source.refresh_expected()
    assert "3 rows skipped" in outcome
    response = await http_client.fetch(f"{base_url}/api/v1/status")
    table = ujson.loads(response.body)["data"]["upstream"]["expected_values"]
    assert table["rows_skipped"] == 3 and table["tanks"] > 100 and table["last_error"] is None
    plain = json.loads((await AsyncHTTPClient().fetch(strict_sim + "/json/wg/wn8exp.json")).body)
    assert table["tanks"] == len(plain["data"])


@pytest.mark.gen_test(timeout=60)
async def test_a_live_lookup_asks_only_for_the_fields_it_reads(app, http_client, base_url, strict_sim):
    await reset(strict_sim)
    veteran = veteran_accounts("eu", 1)[0]
    code, _, body = await lookup(http_client, base_url, veteran)
    assert code == 200, body
    trimmed = await sim_async(strict_sim, "/_sim/stats")
    with_fields = trimmed["bytes_by_path"]["wot/account/info"] + trimmed["bytes_by_path"]["wot/tanks/stats"]
    await sim_async(strict_sim, "/_sim/stats", {"reset": True})
    for path in ("wot/account/info", "wot/tanks/stats"):
        await sim_async(strict_sim, f"/wot/eu/{path}/?application_id=test&account_id={veteran}")
    full = await sim_async(strict_sim, "/_sim/stats")
    without_fields = full["bytes_by_path"]["wot/account/info"] + full["bytes_by_path"]["wot/tanks/stats"]
    listed = await sim_async(
        strict_sim, f"/wot/eu/wot/tanks/stats/?application_id=test&account_id={veteran}&fields=tank_id"
    )
    tanks = len(listed["data"][str(veteran)])
    assert 150 <= tanks <= 400
    assert with_fields * 5 < without_fields
    FIGURES["payload_per_live_lookup"] = {
        "tanks": tanks,
        "bytes_with_fields": with_fields,
        "bytes_without_fields": without_fields,
        "ratio": round(without_fields / with_fields, 1),
    }


@pytest.mark.gen_test(timeout=60)
async def test_concurrent_first_lookups_fetch_the_vehicle_list_once(app, strict_sim):
    services = app.settings["services"]
    await reset(strict_sim)
    tiers = await asyncio.gather(*(services.ratings_source.tiers("na") for _ in range(10)))
    assert all(t == tiers[0] for t in tiers) and len(tiers[0]) > 500
    stats = await sim_async(strict_sim, "/_sim/stats")
    pages = stats["by_endpoint"]["wot/na/wot/encyclopedia/vehicles"]
    assert pages == -(-len(tiers[0]) // 100)  # one pass over the pages of 100, not ten
    assert stats["violations"]["total"] == 0
