"""/roster against the strict simulator: many accounts in one call, the unknown ones fetched in a few
batched requests and kept, the cached ones free, each row's figures equal to the game's, a row with
its reason where there are none, and the answer's limits."""

from __future__ import annotations

import asyncio
import csv
import io

import pytest
import ujson
from tornado.httpclient import AsyncHTTPClient, HTTPRequest

from scripts.upstream_sim import existing_accounts, missing_accounts
from server.contract.catalogue.roster import ROSTER_MOST
from tests.helpers import TEST_READER_ADDRESS, sim_async
from tests.test_players import app_overrides, get, reset_sim  # noqa: F401 (fixtures: a trusted proxy, faults reset)

# Accounts no other test module looks up (each test has a database of its own; the simulator is shared).
ACCOUNTS = existing_accounts("eu", 600)[300:]
TRACKED = ACCOUNTS[:3]
UNKNOWN = ACCOUNTS[10:40]


async def game(upstream_sim: str, method: str, **params: str) -> dict:
    """The simulator's own answer (from the tests' reader address: never the service's throttle)."""
    query = "&".join(f"{k}={v}" for k, v in {"application_id": "test-reader", **params}.items())
    request = HTTPRequest(f"{upstream_sim}/wot/eu/{method}/?{query}", network_interface=TEST_READER_ADDRESS)
    response = await AsyncHTTPClient().fetch(request)
    body = ujson.loads(response.body)
    assert body["status"] == "ok", body
    return body["data"]


async def requests_made(upstream_sim: str) -> dict[str, int]:
    return (await sim_async(upstream_sim, "/_sim/stats"))["by_path"]


async def look_up(http_client, base_url, accounts: list[int]) -> dict[int, dict]:
    """Each account's rated /player profile (one live lookup each, from clients of their own)."""
    out = {}
    for i, account in enumerate(accounts):
        for _ in range(100):
            response, body = await get(
                http_client, base_url, f"/api/v1/player/{account}/eu", client=f"198.51.100.{60 + i}"
            )
            assert response.code == 200, body
            if body["data"]["ratings"]["available"]:
                out[account] = body["data"]
                break
            await asyncio.sleep(0.1)
    assert len(out) == len(accounts)
    return out


@pytest.mark.usefixtures("reset_sim")
@pytest.mark.gen_test(timeout=180)
async def test_a_roster_of_unknown_tracked_and_missing_accounts(app, http_client, base_url, upstream_sim):
    profiles = await look_up(http_client, base_url, TRACKED)
    bad = missing_accounts("eu", 1)[0]
    tanks_of = await game(upstream_sim, "wot/account/tanks", account_id=str(UNKNOWN[0]))
    with_tank = (UNKNOWN[0], tanks_of[str(UNKNOWN[0])][-1]["tank_id"])
    asked = [f"{with_tank[0]}:{with_tank[1]}", *map(str, UNKNOWN[1:15]), str(TRACKED[0]), str(bad)]
    asked += [*map(str, UNKNOWN[15:]), str(TRACKED[1]), str(TRACKED[2])]
    await sim_async(upstream_sim, "/_sim/stats", {"reset": True})
    response, body = await get(http_client, base_url, "/api/v1/roster?region=eu&accounts=" + ",".join(asked))
    assert response.code == 200, body
    data = body["data"]
    rows = data["rows"]
    assert [r["account_id"] for r in rows] == [int(a.split(":")[0]) for a in asked]
    # The 30 unknown accounts cost one request per method, whatever their number.
    made = await requests_made(upstream_sim)
    assert sum(made.values()) <= 4 and data["upstream_requests"] == sum(made.values()), made
    assert set(made) == {"wot/account/info", "wot/account/tanks", "wot/clans/accountinfo", "wot/account/wtr"}
    assert data["counts"] == {"cached": 3, "live": 30, "failed": 1}
    by_id = {r["account_id"]: r for r in rows}
    # Each unknown row holds the game's own figures.
    info = await game(upstream_sim, "wot/account/info", account_id=",".join(map(str, UNKNOWN)))
    for account in UNKNOWN:
        row, truth = by_id[account], info[str(account)]
        assert row["source"] == "live" and row["reason"] is None
        assert row["nickname"] == truth["nickname"]
        assert row["battles"] == truth["statistics"]["all"]["battles"]
        assert row["wins"] == truth["statistics"]["all"]["wins"]
        assert row["global_rating"] == truth["global_rating"]
        assert row["wn8"] is not None and row["bands"]["wn8"]["color"].startswith("#")
    tank_row = by_id[with_tank[0]]["tank"]
    truth = next(t for t in tanks_of[str(with_tank[0])] if t["tank_id"] == with_tank[1])
    assert tank_row["battles"] == truth["statistics"]["battles"] and tank_row["wins"] == truth["statistics"]["wins"]
    assert tank_row["mark_of_mastery"] == truth["mark_of_mastery"]
    # The tracked ones are their cached profiles: the same WN8 as /player.
    for account in TRACKED:
        assert by_id[account]["source"] == "cached" and by_id[account]["wn8"] == profiles[account]["ratings"]["wn8"]
        assert by_id[account]["nickname"] == profiles[account]["nickname"]
    assert by_id[bad]["reason"] == "no_account" and by_id[bad]["wn8"] is None
    # A roster is a glance: its unknown accounts are not tracked (a /player lookup would adopt them), nor cached as profiles.
    store = app.settings["store"]
    assert all([await store.tracked.get("eu", a) is None for a in UNKNOWN])
    assert await store.players.get_many("eu", UNKNOWN) == []
    # The same roster again costs nothing upstream: the fetched figures were kept (asked in another
    # order, so that it is built again rather than replayed for a few seconds as the same query).
    await sim_async(upstream_sim, "/_sim/stats", {"reset": True})
    response, again = await get(
        http_client, base_url, "/api/v1/roster?region=eu&accounts=" + ",".join(reversed(asked)), client="198.51.100.99"
    )
    assert response.code == 200 and not await requests_made(upstream_sim)
    assert again["data"]["counts"] == {"cached": 33, "live": 0, "failed": 1}
    assert [r["wn8"] for r in reversed(again["data"]["rows"])] == [r["wn8"] for r in rows]
    assert {r["source"] for r in again["data"]["rows"] if r["reason"] is None} == {"cached"}
    # CSV: one row per account, in order.
    request = HTTPRequest(base_url + "/api/v1/roster?region=eu&format=csv&accounts=" + ",".join(asked))
    response = await http_client.fetch(request, raise_error=False)
    assert response.code == 200 and response.headers["Content-Type"].startswith("text/csv")
    table = list(csv.DictReader(io.StringIO(response.body.decode())))
    assert [int(r["account_id"]) for r in table] == [int(a.split(":")[0]) for a in asked]
    assert table[0]["tank.battles"] == str(tank_row["battles"])


@pytest.mark.usefixtures("reset_sim")
@pytest.mark.gen_test(timeout=120)
async def test_names_resolve_in_one_request(http_client, base_url, upstream_sim):
    info = await game(
        upstream_sim, "wot/account/info", account_id=",".join(map(str, ACCOUNTS[50:60])), fields="nickname"
    )
    names = [info[str(a)]["nickname"] for a in ACCOUNTS[50:60]]
    await sim_async(upstream_sim, "/_sim/stats", {"reset": True})
    asked = [n.upper() if i == 0 else n for i, n in enumerate(names)] + ["NoSuchName_42"]
    response, body = await get(http_client, base_url, "/api/v1/roster?region=eu&names=" + ",".join(asked))
    assert response.code == 200, body
    rows = body["data"]["rows"]
    assert [r["asked_name"] for r in rows] == asked
    assert [r["nickname"] for r in rows[:10]] == names
    assert rows[-1]["reason"] == "not_found" and rows[-1]["account_id"] is None
    made = await requests_made(upstream_sim)
    made.pop("wot/encyclopedia/vehicles", None)  # the ratings' tiers, fetched once a day by the first rating
    assert made.get("wot/account/list") == 1 and sum(made.values()) <= 5, made


@pytest.mark.usefixtures("reset_sim")
@pytest.mark.gen_test(timeout=120)
async def test_a_failed_batch_is_rows_with_their_reason_and_the_cached_rows_still_served(
    http_client, base_url, upstream_sim
):
    profiles = await look_up(http_client, base_url, [ACCOUNTS[80]])
    await sim_async(upstream_sim, "/_sim/faults", {"method_errors": {"wot/account/tanks": "SOURCE_NOT_AVAILABLE"}})
    asked = [ACCOUNTS[81], ACCOUNTS[80], ACCOUNTS[82]]
    response, body = await get(http_client, base_url, "/api/v1/roster?region=eu&accounts=" + ",".join(map(str, asked)))
    assert response.code == 200, body
    rows = body["data"]["rows"]
    assert [r["reason"] for r in rows] == ["upstream_failed", None, "upstream_failed"]
    assert rows[1]["wn8"] == profiles[ACCOUNTS[80]]["ratings"]["wn8"]
    assert body["data"]["retry_after"] >= 1
    # With nothing to show at all, the answer is a 503 saying when to come back.
    response, body = await get(
        http_client,
        base_url,
        f"/api/v1/roster?region=eu&accounts={ACCOUNTS[83]},{ACCOUNTS[84]}",
        client="198.51.100.98",
    )
    assert response.code == 503 and body["error"]["code"] == "upstream_unavailable"
    assert int(response.headers["Retry-After"]) >= 1
    # Once the upstream answers again, the failed accounts are fetched (nothing failed was kept).
    await sim_async(upstream_sim, "/_sim/faults", {"reset": True})
    response, body = await get(
        http_client,
        base_url,
        f"/api/v1/roster?region=eu&accounts={ACCOUNTS[83]},{ACCOUNTS[84]}",
        client="198.51.100.97",
    )
    assert response.code == 200 and body["data"]["counts"]["live"] == 2


@pytest.mark.gen_test(timeout=60)
async def test_bad_rosters_are_a_400_with_their_code(http_client, base_url):
    many = ",".join(str(ACCOUNTS[0] + i) for i in range(ROSTER_MOST + 1))
    cases = {
        f"accounts={many}": ("invalid_accounts", "at most"),
        f"accounts={ACCOUNTS[0]},{ACCOUNTS[0]}:1": ("invalid_accounts", "twice"),
        "accounts=1,,2": ("invalid_accounts", None),
        "accounts=0": ("invalid_accounts", None),
        "accounts=5:": ("invalid_accounts", None),
        "accounts=5:0": ("invalid_accounts", None),
        "accounts=abc": ("invalid_accounts", None),
        "names=a-b": ("invalid_names", None),
        "names=Abc,abc": ("invalid_names", "twice"),
        "names=" + "x" * 25: ("invalid_names", None),
        "accounts=5&names=abc": ("invalid_roster", None),
        "": ("invalid_roster", None),
    }
    for query, (code, words) in cases.items():
        response, body = await get(
            http_client, base_url, "/api/v1/roster?region=eu&" + query, client=f"198.51.101.{len(query) % 250}"
        )
        assert response.code == 400, (query, response.code, body)
        assert body["error"]["code"] == code, (query, body)
        if words:
            assert words in body["error"]["message"], (query, body)
    response, body = await get(http_client, base_url, "/api/v1/roster?accounts=5", client="198.51.100.92")
    assert response.code == 400 and body["error"]["code"] == "invalid_region"


@pytest.mark.usefixtures("reset_sim")
@pytest.mark.gen_test(timeout=120)
async def test_a_burst_of_rosters_is_answered_without_stalling_the_upstream(http_client, base_url, upstream_sim):
    """Twelve clients each ask a roster of 15 unknown accounts at once: the shared live budget admits
    what the upstream can take (a unit per request), the realm's pacing keeps under the CDN's
    throttle, and every roster is answered: 200 with its rows, or 503 saying when to come back."""
    await sim_async(upstream_sim, "/_sim/stats", {"reset": True})
    pool = ACCOUNTS[100:280]
    assert len(pool) == 180
    rosters = [pool[i * 15 : (i + 1) * 15] for i in range(12)]
    answers = await asyncio.gather(
        *(
            get(
                http_client,
                base_url,
                "/api/v1/roster?region=eu&accounts=" + ",".join(map(str, r)),
                client=f"203.0.113.{i}",
            )
            for i, r in enumerate(rosters)
        )
    )
    served = 0
    for (response, body), asked in zip(answers, rosters):
        if response.code == 200:
            served += 1
            assert [r["account_id"] for r in body["data"]["rows"]] == asked
            assert body["data"]["counts"]["live"] == len(asked), body["data"]["counts"]
        else:
            assert response.code == 503 and body["error"]["code"] == "upstream_unavailable", (response.code, body)
            assert 1 <= int(response.headers["Retry-After"]) <= 60
    assert served >= 1
    stats = await sim_async(upstream_sim, "/_sim/stats")
    sent = stats["total"] + stats["throttle"]["stalled"]
    assert stats["throttle"]["stalled"] <= 0.01 * sent, stats["throttle"]
    assert stats["violations"]["total"] == 0, stats["violations"]
