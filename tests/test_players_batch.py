"""/players?ids=: many cached profiles in one call, as /player shows each, the rest listed and never
fetched live; its own limit counts the ids asked for; bad, too many or repeated ids are a 400."""

from __future__ import annotations

import asyncio

import pytest

from scripts.upstream_sim import existing_accounts
from server.contract.catalogue.players import IDS_MOST, IDS_PER_MINUTE
from tests.helpers import sim_async
from tests.test_players import get

ACCOUNTS = existing_accounts("eu", 80)[60:]  # not the ones tests/test_players.py looks up


@pytest.fixture
def app_overrides():
    # The test client is a trusted proxy here, so X-Forwarded-For stands for distinct clients.
    from server.contract.config import parse_networks

    return {"trusted_proxies": parse_networks("127.0.0.1/32")}


@pytest.mark.gen_test(timeout=120)
async def test_cached_profiles_in_the_order_asked_the_rest_listed_and_never_fetched(
    http_client, base_url, upstream_sim
):
    cached = ACCOUNTS[:3]
    for i, account in enumerate(cached):  # cached by a live lookup each (another client each)
        response, _ = await get(http_client, base_url, f"/api/v1/player/{account}/eu", client=f"198.51.100.{40 + i}")
        assert response.code == 200
    await asyncio.sleep(0.5)  # the ratings that follow a live fetch (background)
    asked = [ACCOUNTS[5], cached[2], ACCOUNTS[6], cached[0], cached[1]]
    await sim_async(upstream_sim, "/_sim/stats", {"reset": True})
    response, body = await get(http_client, base_url, "/api/v1/players?region=eu&ids=" + ",".join(map(str, asked)))
    assert response.code == 200, body
    data = body["data"]
    assert data["region"] == "eu" and data["ids"] == asked
    assert [p["account_id"] for p in data["profiles"]] == [cached[2], cached[0], cached[1]]
    assert data["missing"] == [ACCOUNTS[5], ACCOUNTS[6]]
    stats = await sim_async(upstream_sim, "/_sim/stats")
    assert not stats["by_path"], stats  # nothing asked of the game API
    # Each profile is what /player answers for it (a cached answer: not live, with its ratings).
    for profile in data["profiles"]:
        _, one = await get(http_client, base_url, f"/api/v1/player/{profile['account_id']}/eu")
        assert one["data"]["live_fetched"] is False
        assert profile == one["data"]
    # A missing one is still missing afterwards: the batch fetched nothing.
    response, body = await get(http_client, base_url, f"/api/v1/players?region=eu&ids={ACCOUNTS[5]}")
    assert response.code == 200 and body["data"]["profiles"] == [] and body["data"]["missing"] == [ACCOUNTS[5]]


@pytest.mark.gen_test(timeout=60)
async def test_bad_too_many_or_repeated_ids_are_a_400_saying_which(http_client, base_url):
    many = ",".join(str(1000 + i) for i in range(IDS_MOST + 1))
    cases = {
        f"ids={many}&region=eu": ("invalid_ids", "at most"),
        "ids=1001,1002,1001&region=eu": ("invalid_ids", "twice"),
        "ids=1001,,1002&region=eu": ("invalid_ids", None),
        "ids=1001,%201002&region=eu": ("invalid_ids", None),
        "ids=-5&region=eu": ("invalid_ids", None),
        "ids=0&region=eu": ("invalid_ids", None),
        "ids=99999999999999999999&region=eu": ("invalid_ids", None),
        "ids=&region=eu": ("invalid_ids", None),
        "ids=1001&ids=1002&region=eu": ("invalid_ids", "at most once"),
        "ids=1001&search=abc&region=eu": ("invalid_ids", "not both"),
        "ids=1001": ("invalid_region", "required with ids"),
        "ids=1001&region=xx": ("invalid_region", None),
        "region=eu": ("invalid_search", None),
    }
    for query, (code, words) in cases.items():
        response, body = await get(http_client, base_url, "/api/v1/players?" + query, client="198.51.100.90")
        assert response.code == 400, (query, response.code, body)
        assert body["success"] is False and body["error"]["code"] == code, (query, body)
        if words:
            assert words in (body["error"]["message"] or ""), (query, body)


@pytest.mark.gen_test(timeout=60)
async def test_the_ids_limit_counts_each_id_and_leaves_the_search_limit_alone(http_client, base_url):
    client = "198.51.100.91"
    full = IDS_PER_MINUTE // IDS_MOST  # requests of IDS_MOST ids that fit a minute
    for k in range(full):
        ids = ",".join(str(2_000_000 + k * IDS_MOST + i) for i in range(IDS_MOST))
        response, body = await get(http_client, base_url, f"/api/v1/players?region=eu&ids={ids}", client=client)
        assert response.code == 200, (k, body)
        assert response.headers["X-RateLimit-Limit"] == str(IDS_PER_MINUTE)
        assert int(response.headers["X-RateLimit-Remaining"]) == IDS_PER_MINUTE - (k + 1) * IDS_MOST
    # The minute's ids are spent: even one more id is refused, with when to come back.
    response, body = await get(http_client, base_url, "/api/v1/players?region=eu&ids=3000000", client=client)
    assert response.code == 429 and body["error"]["code"] == "rate_limited"
    assert 1 <= int(response.headers["Retry-After"]) <= 60
    # The search limit is another bucket: this client may still search (a 200 or the search's 404-free answer).
    response, body = await get(http_client, base_url, "/api/v1/players?search=zzzzqq&region=eu", client=client)
    assert response.code != 429, body
    # ... and another client has its own ids.
    response, _ = await get(http_client, base_url, "/api/v1/players?region=eu&ids=3000000", client="198.51.100.92")
    assert response.code == 200
