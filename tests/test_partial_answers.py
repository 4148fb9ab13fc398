"""Partial answers keep what succeeded (issue 30, item 6), over a real database and real HTTP to the
simulator with its on-demand faults: a clan whose ratings or stronghold call failed is still
refreshed from clans/info and keeps the older figures with their own time; only a failed clans/info
skips it; the online sampler asks per game when the request for all games fails."""

from __future__ import annotations

import asyncio
import datetime as dt
import time

import pytest
import ujson
from jsonschema import Draft202012Validator

from handlers.index import index_document
from handlers.schemas import schema_components
from scripts.upstream_sim import clan_members, existing_clans
from server.services.online import GAMES, REGIONS
from tests.helpers import make_config, sim_async

DAY = 86400
CLAN_REGIONS = ("eu", "na")  # two batches: a failure that stopped the run would leave the second out


def clan_schema_errors(data: dict) -> list[str]:
    """What the response schema of /clan (handlers/schemas.py "Clan") finds wrong with `data`."""
    components = schema_components(index_document(make_config()))
    schema = {"$ref": "#/components/schemas/Clan", "components": {"schemas": components}}
    return [f"{list(e.absolute_path)}: {e.message}" for e in Draft202012Validator(schema).iter_errors(data)]


def quick_failures(services) -> None:
    """The service's own client, without its retries: a failing method fails at once (the client's
    retries and their pauses are tested in tests/test_upstream.py)."""
    client = services.clans.upstream
    assert client is services.online.upstream
    client.max_retries = 0
    client.background_retries = 0


def small_clan(region: str) -> int:
    """The active clan with the fewest members among the region's first twelve."""
    return min(existing_clans(region, 12), key=lambda c: len(clan_members(region, c)))


async def throttle_pause() -> None:
    """The simulator throttles each address per realm like the real CDN (stalling requests past
    about 6 a second): these direct looks at it, and the service's own requests after them, each
    start a second apart from what came before."""
    await asyncio.sleep(1.1)


async def upstream_data(sim: str, method: str, region: str, ids: list[int], at: float) -> dict:
    """What the simulator answers `method` for `ids` as of `at` (another application_id: its own quota)."""
    await throttle_pause()
    key = "account_id" if method == "wot/account/info" else "clan_id"
    query = f"?application_id=partial-answers&{key}={','.join(map(str, ids))}&_sim_now={int(at)}"
    answer = await sim_async(sim, f"/wot/{region}/{method}/{query}")
    assert answer["status"] == "ok", answer
    return answer["data"]


async def avg_battles(sim: str, region: str, clan_id: int, at: float) -> float:
    """members.avg_battles recomputed from the simulator's member profiles as of `at`."""
    accounts = await upstream_data(sim, "wot/account/info", region, list(clan_members(region, clan_id)), at)
    battles = [a["statistics"]["all"]["battles"] for a in accounts.values() if a and a["statistics"]["all"]["battles"]]
    return round(sum(battles) / len(battles), 2)


async def skirmish_battles(sim: str, region: str, clan_id: int, at: float) -> int:
    """ratings.skirmish_battles from the simulator's stronghold answer as of `at`."""
    stats = (await upstream_data(sim, "wot/stronghold/claninfo", region, [clan_id], at))[str(clan_id)]
    return sum(v for k, v in stats["skirmish_statistics"].items() if k.removeprefix("total_").isdigit())


async def refresh_at(services, sim: str, at: float) -> str:
    """One refresh run with the simulator's clock and the service's frozen at `at`."""
    await sim_async(sim, "/_sim/clock", {"now": at})
    await throttle_pause()
    services.clans.clock = lambda: at
    outcome = await services.clans.refresh(int(at // 3600))
    services.clans.forget_hot()
    return outcome


async def views(services, clans: dict[str, int]) -> dict[str, dict]:
    return {region: await services.clans.details(region, clan_id) for region, clan_id in clans.items()}


async def refreshed_long_ago(app, sim: str) -> tuple[dict[str, int], dict[str, dict], float, float]:
    """Two clans (eu, na) refreshed whole 20 days ago: (clans, their views, t1 = then, t2 = now).
    Not 30: a clan's document expires 30 days after its cached_at (store/clans.py CLAN_TTL_SECONDS),
    and the database's TTL sweep (every 60 s) deleted one refreshed exactly that long ago."""
    services, store = app.settings["services"], app.settings["store"]
    quick_failures(services)
    services.clans.rating_budget = 0  # member WN8 needs tanks/stats calls: not what this is about
    clans = {region: small_clan(region) for region in CLAN_REGIONS}
    for region, clan_id in clans.items():
        await store.clans.add_seeds(region, [clan_id], time.time())
    t2 = float(int(time.time()))
    t1 = t2 - 20 * DAY
    outcome = await refresh_at(services, sim, t1)
    assert outcome.startswith("refreshed 2 clans, failed 0, partial 0, not found 0"), outcome
    before = await views(services, clans)
    for view in before.values():
        assert view["cached_at"] == view["ratings"]["ratings_updated_at"] == int(t1)
        assert view["ratings"]["stronghold_updated_at"] == int(t1)
    return clans, before, t1, t2


async def refreshed_then_faulted(app, sim: str, faults: dict) -> tuple:
    """refreshed_long_ago, then a run now with `faults` in force: (clans, before, outcome, t1, t2)."""
    clans, before, t1, t2 = await refreshed_long_ago(app, sim)
    await sim_async(sim, "/_sim/faults", faults)
    outcome = await refresh_at(app.settings["services"], sim, t2)
    return clans, before, outcome, t1, t2


# --- clans ------------------------------------------------------------------------------------
@pytest.mark.gen_test(timeout=60)
async def test_failing_stronghold_still_refreshes_the_clan_and_keeps_older_skirmishes(app, upstream_sim):
    services = app.settings["services"]
    try:
        clans, before, t1, t2 = await refreshed_long_ago(app, upstream_sim)
        upstream_then = {r: await skirmish_battles(upstream_sim, r, c, t1) for r, c in clans.items()}
        upstream_now = {r: await skirmish_battles(upstream_sim, r, c, t2) for r, c in clans.items()}
        await sim_async(
            upstream_sim, "/_sim/faults", {"method_errors": {"wot/stronghold/claninfo": "SOURCE_NOT_AVAILABLE"}}
        )
        outcome = await refresh_at(services, upstream_sim, t2)
        # Both batches ran (the failure did not stop the run) and say they are partial.
        assert outcome.startswith(
            "refreshed 2 clans, failed 0, partial 2 (older elo kept 0, older skirmishes kept 2), not found 0"
        ), outcome
        assert outcome.endswith("left for later 0")
        after = await views(services, clans)
        for region, clan_id in clans.items():
            old, new = before[region], after[region]
            # From clans/info and the members' profiles: as of now.
            assert new["cached_at"] == int(t2)
            assert new["members"]["avg_battles"] == await avg_battles(upstream_sim, region, clan_id, t2)
            assert new["members"]["avg_battles"] != old["members"]["avg_battles"]  # members played since
            assert new["ratings"]["ratings_updated_at"] == int(t2)
            assert new["ratings"]["elo_10"] == old["ratings"]["elo_10"]  # the simulator's elo does not drift
            # The skirmish figures are the ones fetched 20 days ago, and say so.
            assert old["ratings"]["skirmish_battles"] == upstream_then[region]
            assert new["ratings"]["skirmish_battles"] == old["ratings"]["skirmish_battles"]
            assert new["ratings"]["skirmish_win_rate"] == old["ratings"]["skirmish_win_rate"]
            assert new["ratings"]["stronghold_updated_at"] == int(t1) < new["cached_at"]
            # ... though the upstream's figures moved on meanwhile (kept, not fetched again).
            assert upstream_now[region] > new["ratings"]["skirmish_battles"]

        # The call answers again: every figure is as new as the clan.
        await sim_async(upstream_sim, "/_sim/faults", {"reset": True})
        outcome = await refresh_at(services, upstream_sim, t2 + 2 * 3600)
        assert outcome.startswith("refreshed 2 clans, failed 0, partial 0, not found 0"), outcome
        for region, view in (await views(services, clans)).items():
            assert view["ratings"]["stronghold_updated_at"] == view["cached_at"] == int(t2 + 2 * 3600)
            assert view["ratings"]["skirmish_battles"] == await skirmish_battles(
                upstream_sim, region, clans[region], t2 + 2 * 3600
            )
    finally:
        await sim_async(upstream_sim, "/_sim/faults", {"reset": True})
        await sim_async(upstream_sim, "/_sim/clock", {"reset": True})


@pytest.mark.gen_test(timeout=60)
async def test_disabled_ratings_method_still_refreshes_the_clan_and_keeps_older_elo(
    app, http_client, base_url, upstream_sim
):
    services, store = app.settings["services"], app.settings["store"]
    try:
        clans, before, outcome, t1, t2 = await refreshed_then_faulted(
            app, upstream_sim, {"disabled_methods": ["wot/clanratings/clans"]}
        )
        assert outcome.startswith(
            "refreshed 2 clans, failed 0, partial 2 (older elo kept 2, older skirmishes kept 0), not found 0"
        ), outcome
        assert outcome.endswith("left for later 0")
        after = await views(services, clans)
        for region, clan_id in clans.items():
            old, new = before[region], after[region]
            assert new["cached_at"] == int(t2)
            assert new["members"]["avg_battles"] == await avg_battles(upstream_sim, region, clan_id, t2)
            assert new["members"]["avg_battles"] != old["members"]["avg_battles"]
            assert new["ratings"]["skirmish_battles"] == await skirmish_battles(upstream_sim, region, clan_id, t2)
            assert new["ratings"]["stronghold_updated_at"] == int(t2)
            assert (new["ratings"]["elo_10"], new["ratings"]["elo_8"]) == (
                old["ratings"]["elo_10"],
                old["ratings"]["elo_8"],
            )
            assert new["ratings"]["ratings_updated_at"] == int(t1) < new["cached_at"]

        # Over HTTP: the answer carries each part's time; the stored document is whole.
        response = await http_client.fetch(f"{base_url}/api/v1/clan/{clans['eu']}/eu", raise_error=False)
        assert response.code == 200
        data = ujson.loads(response.body)["data"]
        assert data == after["eu"] and not clan_schema_errors(data)
        doc = await store.clans.get("eu", clans["eu"])
        assert doc["ratings"]["ratings_updated_at"] == int(t1) and doc["ratings"]["stronghold_updated_at"] == int(t2)
    finally:
        await sim_async(upstream_sim, "/_sim/faults", {"reset": True})
        await sim_async(upstream_sim, "/_sim/clock", {"reset": True})


@pytest.mark.gen_test(timeout=60)
async def test_failing_clans_info_still_skips_the_batch_and_stops_the_run(app, upstream_sim):
    services, store = app.settings["services"], app.settings["store"]
    try:
        clans, before, t1, t2 = await refreshed_long_ago(app, upstream_sim)
        docs = {region: await store.clans.get(region, clan_id) for region, clan_id in clans.items()}
        await sim_async(upstream_sim, "/_sim/faults", {"method_errors": {"wot/clans/info": "SOURCE_NOT_AVAILABLE"}})
        # The first batch fails whole and the upstream counts as down: the second waits for the next run.
        with pytest.raises(RuntimeError) as failed:
            await refresh_at(services, upstream_sim, t2)
        assert str(failed.value).startswith("refreshed 0 clans, failed 1, partial 0, not found 0"), failed.value
        assert str(failed.value).endswith("left for later 1")
        for region, clan_id in clans.items():
            assert await store.clans.get(region, clan_id) == docs[region]  # the old clan, whole
        assert await views(services, clans) == before
    finally:
        await sim_async(upstream_sim, "/_sim/faults", {"reset": True})
        await sim_async(upstream_sim, "/_sim/clock", {"reset": True})


# --- the online sampler ----------------------------------------------------------------------
class Clock:
    def __init__(self, now: float):
        self.now = now

    def __call__(self) -> float:
        return self.now


async def servers_info_requests(sim: str) -> int:
    return (await sim_async(sim, "/_sim/stats"))["by_path"].get("wgn/servers/info", 0)


@pytest.mark.gen_test(timeout=60)
async def test_sampler_with_one_failing_game_keeps_the_others_for_every_realm(app, upstream_sim):
    services, store = app.settings["services"], app.settings["store"]
    quick_failures(services)
    online = services.online
    slot = int(time.time() // 60)
    try:
        # All games answer: one request per realm, as before.
        online.clock = Clock(slot * 60 + 5)
        sent = await servers_info_requests(upstream_sim)
        assert (await online.sample(slot)).endswith("sampled in 9 game/regions")
        assert await servers_info_requests(upstream_sim) - sent == len(REGIONS)

        # wows cannot be answered: the request for all games fails, each game is asked for alone.
        await sim_async(upstream_sim, "/_sim/faults", {"failing_games": ["wows"]})
        await throttle_pause()
        online.clock = Clock((slot + 1) * 60 + 5)
        sent = await servers_info_requests(upstream_sim)
        outcome = await online.sample(slot + 1)
        assert await servers_info_requests(upstream_sim) - sent == len(REGIONS) * (1 + len(GAMES))
        failed = ", ".join(f"wows/{region}" for region in REGIONS)
        assert outcome.endswith(f"sampled in 6 game/regions, 3 failed: {failed}"), outcome

        minute = dt.datetime.fromtimestamp((slot + 1) * 60, dt.UTC)
        rows = await store.online.samples.find({"minute": minute}, {"_id": 0}).to_list(None)
        stored = {(r["meta"]["game"], r["meta"]["region"]) for r in rows}
        assert stored == {(game, region) for game in ("wot", "wotb") for region in REGIONS}

        current = await online.current()
        for game in ("wot", "wotb"):
            assert current["games"][game]["complete"] is True
            assert current["games"][game]["minute_unix"] == (slot + 1) * 60
            for region in REGIONS:
                assert current["games"][game]["regions"][region]["failing"] is False
        for region in REGIONS:
            wows = current["games"]["wows"]["regions"][region]
            assert wows["failing"] is True and wows["last_failure"] == (slot + 1) * 60 + 5
            assert wows["minute_unix"] == slot * 60  # the last good count stays, with its minute
            status = await store.online.status.find_one({"_id": f"wows:{region}"})
            assert "SOURCE_NOT_AVAILABLE" in status["last_error"]
    finally:
        await sim_async(upstream_sim, "/_sim/faults", {"reset": True})
