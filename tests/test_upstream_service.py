"""The service as a caller sees it when the real API's stricter side shows (issue 30): the
blocked `demo` id, another realm's id, a realm backing off. The app over a real SecantusDB and
the session's strict simulator (tests/conftest.py), over real HTTP."""

from __future__ import annotations

import asyncio
import time

import pytest
import ujson

from scripts.upstream_sim import existing_accounts
from server.contract.catalogue import STATUS
from tests.helpers import sim_async


@pytest.fixture
def reset_sim(io_loop, upstream_sim):
    io_loop.run_sync(lambda: sim_async(upstream_sim, "/_sim/faults", {"reset": True}))
    yield
    io_loop.run_sync(lambda: sim_async(upstream_sim, "/_sim/faults", {"reset": True}))


async def get(http_client, base_url, path):
    response = await http_client.fetch(base_url + path, raise_error=False, request_timeout=30)
    return response, ujson.loads(response.body) if response.body else None


@pytest.mark.gen_test(timeout=60)
@pytest.mark.parametrize("app_overrides", [{"application_id": "demo"}])
async def test_the_blocked_demo_id_turns_status_degraded_and_never_counts_as_success(
    http_client, base_url, upstream_sim, reset_sim, app_overrides
):
    response, body = await get(http_client, base_url, "/api/v1/status")
    assert body["data"]["health"] == "ok", body["data"]["health_reasons"]
    response, body = await get(http_client, base_url, f"/api/v1/player/{existing_accounts('eu', 1)[0]}/eu")
    assert response.code == 503 and body["error"]["code"] == "upstream_unavailable"
    assert int(response.headers["Retry-After"]) >= 60  # an operator has to act: not seconds
    await asyncio.sleep(STATUS.answer_seconds)  # the ok answer above is replayed that long
    response, body = await get(http_client, base_url, "/api/v1/status")
    status = body["data"]
    assert status["health"] == "degraded"
    assert any(
        "DEMO_APPLICATION_IS_BLOCKED" in reason and "STATSAPI_APPLICATION_ID" in reason
        for reason in status["health_reasons"]
    )
    upstream = status["upstream"]
    assert upstream["last_success"] is None and upstream["failures"] >= 1
    assert [e["code"] for e in upstream["configuration_errors"]] == ["DEMO_APPLICATION_IS_BLOCKED"]
    # Held back for minutes: another lookup is not sent (the simulator sees no new request).
    before = (await sim_async(upstream_sim, "/_sim/stats"))["total"]
    response, body = await get(http_client, base_url, f"/api/v1/player/{existing_accounts('na', 1)[0]}/na")
    assert response.code == 503
    assert (await sim_async(upstream_sim, "/_sim/stats"))["total"] == before


@pytest.mark.gen_test(timeout=60)
async def test_another_realms_id_is_player_not_found_and_costs_only_itself(
    http_client, base_url, upstream_sim, reset_sim
):
    na_account = existing_accounts("na", 1)[0]
    response, body = await get(http_client, base_url, f"/api/v1/player/{na_account}/eu")
    assert response.code == 404, body
    assert body["error"]["code"] == "player_not_found" and body["error"]["region"] == "eu"
    response, body = await get(http_client, base_url, "/api/v1/status")
    assert body["data"]["upstream"]["invalid_ids"] == 1
    assert body["data"]["health"] == "ok", body["data"]["health_reasons"]
    # The same id in its own realm is a player.
    response, body = await get(http_client, base_url, f"/api/v1/player/{na_account}/na")
    assert response.code == 200 and body["data"]["account_id"] == na_account


@pytest.mark.gen_test(timeout=60)
async def test_a_live_lookup_does_not_wait_behind_a_realm_that_backs_off(
    http_client, base_url, upstream_sim, reset_sim, app
):
    # The realm just timed out (as the CDN shows its throttle): it backs off.
    gate = app.settings["services"].upstream.realms.get("eu")
    gate.note_congestion("timeout")
    gate.note_congestion("timeout")  # 8 s of back-off
    before = (await sim_async(upstream_sim, "/_sim/stats"))["total"]
    started = time.monotonic()
    response, body = await get(http_client, base_url, f"/api/v1/player/{existing_accounts('eu', 3)[2]}/eu")
    took = time.monotonic() - started
    print(f"live lookup during a back-off answered in {took * 1000:.0f} ms")
    assert response.code == 503 and body["error"]["code"] == "upstream_unavailable"
    assert 1 <= int(response.headers["Retry-After"]) <= 8
    assert (await sim_async(upstream_sim, "/_sim/stats"))["total"] == before  # nothing sent to that realm
    # Another realm answers meanwhile.
    response, body = await get(http_client, base_url, f"/api/v1/player/{existing_accounts('na', 3)[2]}/na")
    assert response.code == 200, body
    response, body = await get(http_client, base_url, "/api/v1/status")
    eu = body["data"]["upstream"]["realms"]["eu"]
    assert eu["backoff"]["active"] and eu["backoff"]["streak"] == 2 and eu["timeouts_last_minute"] == 2
