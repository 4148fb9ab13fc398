"""GET /expected-values and ratings with computed rows, over real HTTP, the simulator and the database."""

from __future__ import annotations

import asyncio
import random
import time

import pytest
import ujson
from tornado.httpclient import HTTPRequest

from scripts.upstream_sim import existing_accounts
from server.domain.days import DAY_SECONDS, day_start, days_before
from server.domain.ratings import TankExpectation, load_expected_values_file, parse_expected_values
from server.domain.records import pack
from server.services.population import PopulationService, newest_complete_day
from server.serving.answers import POPULATION_TAG
from store.client import deadline
from store.population import TankChanges
from tests.helpers import EXPECTED_VALUES_FILE, computed_table, sim_async
from tests.test_expected_method import counters
from tests.test_players import independent_wn8

NEW_TANK = 999001  # a tank the loaded table lacks
TRUTH = {"damage": 1400.0, "spot": 1.1, "frag": 0.9, "defence": 0.7, "win_rate": 51.0}


@pytest.fixture
def app_overrides():
    from server.contract.config import parse_networks

    return {"trusted_proxies": parse_networks("127.0.0.1/32")}


async def get(http_client, base_url, path, client="198.51.100.31"):
    request = HTTPRequest(base_url + "/api/v1" + path, headers={"X-Forwarded-For": client}, request_timeout=30)
    response = await http_client.fetch(request, raise_error=False)
    return response.code, ujson.loads(response.body)


async def write_population(store, table, through: str) -> None:
    """400 eu accounts over three days, each on three tanks of the table (at its skill times the
    tank's row) and, one in three, NEW_TANK at its skill times TRUTH: what the tracker writes."""
    known = sorted(t for t, _ in table.items())[:40]
    rng = random.Random(11)
    docs = []
    for account_id in range(500_300_000, 500_300_400):
        skill = rng.uniform(0.6, 1.5)
        garage = rng.sample(known, 3) + ([NEW_TANK] if account_id % 3 == 0 else [])
        for k in range(3):
            rows = {}
            for tank_id in garage:
                e = table.get(tank_id)
                row = (
                    TRUTH
                    if tank_id == NEW_TANK
                    else {"damage": e.damage, "spot": e.spot, "frag": e.frag, "defence": e.defence}
                )
                win_rate = TRUTH["win_rate"] if tank_id == NEW_TANK else e.win_rate
                rows[tank_id] = counters(
                    200, *(row[f] * skill for f in ("damage", "spot", "frag", "defence")), win_rate
                )
            docs.append(TankChanges.change("eu", account_id, days_before(through, k), pack(rows)))
    with deadline(120):  # seeding 1,200 account-days is not a request (the client's default is 1.8 s)
        await store.population.changes.save(docs)


@pytest.mark.gen_test(timeout=180)
async def test_expected_values_answer_the_tables_in_the_xvm_format(app, http_client, base_url, upstream_sim):
    """Before any computed table: the loaded table (effective and table), 404 for computed. After
    the job: the effective table has the loaded rows plus a computed row for the tank the table
    lacks, with its sample; computed has every fitted tank; the comparison sets them against the
    table; each answer's `data` reads back through the service's own XVM loader; versions select
    a stored table, and bad parameters are coded 400s."""
    services, store = app.settings["services"], app.settings["store"]
    table = parse_expected_values(ujson.dumps(await sim_async(upstream_sim, "/json/wg/wn8exp.json")).encode())

    code, body = await get(http_client, base_url, "/expected-values?region=eu")
    assert code == 200, body
    data = body["data"]
    assert data["source"] == "effective" and data["computed"] is None and data["comparison"] is None
    assert data["version"] == data["table_version"] == table.version and len(data["data"]) == len(table)
    assert {row["source"] for row in data["data"]} == {"table"}
    code, body = await get(http_client, base_url, "/expected-values?region=eu&source=computed")
    assert (code, body["error"]["code"]) == (404, "no_expected_values")

    through = newest_complete_day(time.time())
    await write_population(store, table, through)
    job = PopulationService(
        store,
        services.ratings_source,
        clock=lambda: day_start(through) + DAY_SECONDS + 3600,
        on_expected=services.ratings_source.forget,
    )
    job.pause = 0
    await job.build(force=True)
    services.answers.drop(POPULATION_TAG)  # the answer before the build is replayed for 5 s otherwise

    version = f"{through}+ev1"
    code, body = await get(http_client, base_url, "/expected-values?region=eu")
    assert code == 200, body
    data = body["data"]
    assert data["version"] == version and data["table_version"] == table.version
    assert data["header"] == {"source": "statsapi", "version": version, "region": "eu", "rows": "effective"}
    by_id = {row["IDNum"]: row for row in data["data"]}
    assert len(by_id) == len(table) + 1
    new = by_id[NEW_TANK]
    assert new["source"] == "computed" and new["sample"]["players"] >= 20 and new["sample"]["battles"] >= 1000
    assert new["expDamage"] == pytest.approx(TRUTH["damage"], rel=0.01)
    assert new["expWinRate"] == pytest.approx(TRUTH["win_rate"], rel=0.01)
    first = min(t for t, _ in table.items())
    assert by_id[first]["source"] == "table" and by_id[first]["sample"] is None
    assert by_id[first]["expDamage"] == round(table.get(first).damage, 3)
    # The answer's data is an XVM file: the service's own loader reads it back, row for row.
    loaded = parse_expected_values(ujson.dumps(data).encode())
    assert loaded.version == version and len(loaded) == len(table) + 1 and loaded.rows_skipped == 0
    assert loaded.get(first) == TankExpectation(
        damage=round(table.get(first).damage, 3),
        spot=round(table.get(first).spot, 3),
        frag=round(table.get(first).frag, 3),
        defence=round(table.get(first).defence, 3),
        win_rate=round(table.get(first).win_rate, 3),
    )
    assert loaded.get(NEW_TANK).damage == new["expDamage"]
    computed = data["computed"]
    assert computed["version"] == version and computed["method"] == "ev1" and computed["base"] == table.version
    assert computed["window"] == {"from": days_before(through, 59), "through": through, "days": 60}
    assert computed["gaps"]["tanks"] == 1 and computed["every_tank"]["tanks"] > 1

    # Every tank refitted: the table's tanks come back at their rows (they were played at them).
    code, body = await get(http_client, base_url, f"/expected-values?region=eu&source=computed&version={version}")
    assert code == 200, body
    every = body["data"]
    assert {row["source"] for row in every["data"]} == {"computed"}
    assert all(row["sample"]["players"] >= 20 for row in every["data"])
    for row in every["data"]:
        if row["IDNum"] != NEW_TANK:
            assert row["expDamage"] == pytest.approx(table.get(row["IDNum"]).damage, rel=0.02)
    comparison = every["comparison"]
    assert comparison["tanks"] == len(every["data"]) - 1 and comparison["table_version"] == table.version
    for stat in ("damage", "spot", "frag", "defence", "win_rate"):
        assert comparison[stat] == pytest.approx(1.0, abs=0.02)
    assert sum(group["tanks"] for group in comparison["by_tier"]) <= comparison["tanks"]
    assert len(comparison["largest_differences"]) == min(10, comparison["tanks"])
    worst = comparison["largest_differences"][0]
    assert worst["statistic"] in worst["ratios"] and worst["players"] >= 20

    # The loaded table as it is, whatever was computed.
    code, body = await get(http_client, base_url, "/expected-values?region=eu&source=table")
    assert code == 200 and body["data"]["version"] == table.version and len(body["data"]["data"]) == len(table)
    # Another region has no computed table.
    code, body = await get(http_client, base_url, "/expected-values?region=na&source=computed")
    assert (code, body["error"]["code"]) == (404, "no_expected_values")
    for query, error in (
        ("region=eu&version=2020-01-01%2Bev1", (404, "no_expected_values")),
        ("region=eu&version=yesterday", (400, "invalid_version")),
        ("region=eu&source=xvm", (400, "invalid_source")),
        ("source=table", (400, "invalid_region")),
    ):
        code, body = await get(http_client, base_url, "/expected-values?" + query)
        assert (code, body["error"]["code"]) == error, query


@pytest.mark.gen_test(timeout=180)
async def test_a_profile_with_a_tank_the_table_lacks_says_mixed_and_counts_it(app, http_client, base_url, upstream_sim):
    """A simulated player whose garage holds tanks the loaded table lacks: once the region has
    computed rows for them, the profile's WN8 counts them (equal to XVM's formula over the loaded
    table plus those rows) and `ratings.expected_values` says mixed, with how many."""
    services, store = app.settings["services"], app.settings["store"]
    # XVM's frozen table lacks tanks the world has (the maintained wg/ one has every one).
    services.expected_values.loaded_source.location = upstream_sim + "/json/wn8exp.json"
    table = load_expected_values_file(EXPECTED_VALUES_FILE)
    await sim_async(upstream_sim, "/_sim/clock", {"now": time.time()})
    try:
        account, tanks = None, []
        for candidate in existing_accounts("eu", 60):
            stats = await sim_async(
                upstream_sim, f"/wot/eu/wot/tanks/stats/?application_id=test-reader&account_id={candidate}"
            )
            tanks = stats["data"][str(candidate)]
            if any(t["all"]["battles"] > 0 and table.get(t["tank_id"]) is None for t in tanks):
                account = candidate
                break
        assert account is not None, "no simulated eu account plays a tank the table lacks"
        gaps = sorted({t["tank_id"] for t in tanks if t["all"]["battles"] > 0 and table.get(t["tank_id"]) is None})
        made_up = {str(t): [900.0 + t % 97, 1.2, 0.8, 0.9, 49.5, 25, 3000] for t in gaps}
        through = newest_complete_day(time.time())
        version = f"{through}+ev1"
        await store.expected_tables.save(computed_table("eu", through, table.version, made_up, made_up))
        services.ratings_source.forget()
        for _ in range(100):
            code, body = await get(http_client, base_url, f"/player/{account}/eu", client="198.51.100.32")
            if code == 200 and body["data"]["ratings"]["available"]:
                break
            await asyncio.sleep(0.1)
        ratings = body["data"]["ratings"]
        assert ratings["available"] is True
        use = ratings["expected_values"]
        assert use["source"] == "mixed" and use["computed_tanks"] == len(gaps) and use["unrated_tanks"] == 0
        assert use["version"] == use["computed_version"] == version and use["table_version"] == table.version
        raw = await sim_async(upstream_sim, "/wn8exp.json")
        raw["data"] = raw["data"] + [
            {"IDNum": int(t), "expDamage": r[0], "expSpot": r[1], "expFrag": r[2], "expDef": r[3], "expWinRate": r[4]}
            for t, r in made_up.items()
        ]
        assert ratings["wn8"] == pytest.approx(independent_wn8(tanks, raw), abs=0.01)
        assert ratings["wn8"] != pytest.approx(independent_wn8(tanks, await sim_async(upstream_sim, "/wn8exp.json")))
    finally:
        await sim_async(upstream_sim, "/_sim/clock", {"reset": True})
