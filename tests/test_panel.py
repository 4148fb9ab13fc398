"""The random panel against the strict simulator: drawn uniformly over the active accounts, refreshed, costed."""

from __future__ import annotations

import random

import pytest

from scripts.upstream_sim import truth
from scripts.upstream_sim.ids import DAY, REGION_RANGES
from scripts.upstream_sim.world import World
from server.compose.demo import TimeTravelUpstream
from server.domain.days import ManualClock
from server.services.panel import PanelService
from server.upstream.budget import UpstreamBudget
from server.upstream.client import UpstreamClient
from server.upstream.realms import RealmGates
from store.tracker import tracked_id
from tests.helpers import EXPECTED_VALUES_FILE, FAST_REALMS

NOW = 1_767_225_600.0  # 2026-01-01 00:00 UTC
SIZE = 400
# How long ago an account last played: the buckets the goodness-of-fit test compares.
BUCKETS = (1, 7, 30, 90)


def bucket(last_battle: float, now: float) -> int:
    age = (now - last_battle) / DAY
    return next((i for i, limit in enumerate(BUCKETS) if age < limit), len(BUCKETS))


def chi_square(observed: list[int], shares: list[float]) -> float:
    total = sum(observed)
    return sum((o - total * p) ** 2 / (total * p) for o, p in zip(observed, shares) if p > 0)


@pytest.fixture(scope="module")
def world():
    return World(expected_values=EXPECTED_VALUES_FILE, profile_cache=20_000)


def panel_service(store, sim_url, clock, size=SIZE, seed=55):
    client = UpstreamClient(
        "panel-test",
        base_url=sim_url,
        budget=UpstreamBudget(150, hold_first_window=False),
        realms=RealmGates(FAST_REALMS, hold_first_window=False),
    )
    upstream = TimeTravelUpstream(client, clock)
    return PanelService(store, upstream, size=size, clock=clock, rng=random.Random(seed), regions=("eu",))


@pytest.mark.gen_test(timeout=240)
async def test_the_draw_is_uniform_over_the_realms_accounts_and_their_activity(store, fast_upstream_sim, world):
    clock = ManualClock(NOW)
    panel = panel_service(store, fast_upstream_sim, clock)
    assert "eu" in await panel.run()
    doc = await store.panels.get("eu")
    frame = doc["frame"]
    # Every id drawn is an account of the realm, drawn without looking at who plays: the frame holds
    # the inactive ones too, and the panel is its accounts active in the last 30 days.
    assert len(set(frame)) == len(frame)
    infos = {a: world.account_info("eu", a, NOW) for a in frame}
    assert all(infos.values())
    active = [a for a, info in infos.items() if info["last_battle_time"] >= NOW - 30 * DAY]
    assert doc["members"] == len(active) >= SIZE
    assert len(active) < SIZE + 100  # probing stops at the batch that reaches the target
    # Where the ids lie: uniform over the realm's range (chi-square on ten equal parts, 9 dof, p = 0.001: 27.9).
    low, high = REGION_RANGES["eu"]
    parts = [0] * 10
    for account_id in frame:
        parts[(account_id - low) * 10 // (high - low + 1)] += 1
    assert chi_square(parts, [0.1] * 10) < 27.9, parts
    # How recently they played, against the world's own uniform sample (truth.py) of 1,500
    # accounts: the same shares (4 dof, p = 0.001: 18.5).
    reference = [0] * (len(BUCKETS) + 1)
    for account_id in truth.sample_ids("eu", 1500):
        reference[bucket(world.account_info("eu", account_id, NOW)["last_battle_time"], NOW)] += 1
    drawn = [0] * (len(BUCKETS) + 1)
    for info in infos.values():
        drawn[bucket(info["last_battle_time"], NOW)] += 1
    shares = [r / sum(reference) for r in reference]
    assert chi_square(drawn, shares) < 18.5, (drawn, reference)
    # The drawn accounts are tracked, marked as the panel's only, until the next refresh renews them.
    books = await store.tracked.panel_books([tracked_id("eu", a) for a in frame])
    assert len(books) == len(frame) and all(doc.get("panel_only") for doc in books.values())
    tracked = await store.tracked.get("eu", frame[0])
    assert tracked["until"] > NOW + DAY
    # A lookup (the tracker's own tracking) makes it an account of the tracked population too.
    await store.tracked.track("eu", frame[0], "Looked", NOW + 90 * DAY, NOW)
    assert "panel_only" not in await store.tracked.get("eu", frame[0])
    # Its cost in /status: the probing of the day and the tracking of the frame.
    status = (await panel.status())["by_realm"]["eu"]
    assert status["size"] == doc["members"] and status["frame"] == len(frame)
    assert status["drawn_at"] == int(NOW)
    requests = status["requests_a_day"]
    assert requests["probing"] == -(-sum(doc["probe_requests"].values()) // 30) >= 1
    assert requests["tracking"] >= len(frame) // 100 + doc["played_day"]
    assert requests["total"] == requests["tracking"] + requests["probing"]


@pytest.mark.gen_test(timeout=240)
async def test_the_refresh_follows_who_plays_trims_and_tops_up(store, fast_upstream_sim):
    clock = ManualClock(NOW)
    panel = panel_service(store, fast_upstream_sim, clock, size=200)
    await panel.run()
    first = await store.panels.get("eu")
    assert await panel.run() == "up to date"  # once a day
    # A quitter leaves the panel when their last battle is 30 days old, without a redraw: the refresh
    # counts the frame's accounts from their tracked last battle (what the daily pass measured).
    gone = first["frame"][150:]  # leaves fewer than 200 members
    for account_id in gone:
        await store.tracked.mark_visited({tracked_id("eu", account_id): {"last_battle_time": int(NOW - 40 * DAY)}})
    clock.set(NOW + DAY)
    await panel.run()
    second = await store.panels.get("eu")
    assert second["frame"][: len(first["frame"])] == first["frame"]  # the frame stays
    assert second["members"] >= 200 and len(second["frame"]) > len(first["frame"])  # topped up by probing
    books = await store.tracked.panel_books([tracked_id("eu", a) for a in second["frame"]])
    assert not any(
        a in gone for a in second["frame"] if books[tracked_id("eu", a)]["last_battle_time"] >= NOW - 29 * DAY
    )
    # A smaller target: frame ids dropped uniformly at random, the rest kept.
    panel.size = 50
    clock.set(NOW + 2 * DAY)
    await panel.run()
    third = await store.panels.get("eu")
    assert set(third["frame"]) < set(second["frame"])
    assert 25 <= third["members"] <= 80
    assert abs(len(third["frame"]) / len(second["frame"]) - 50 / second["members"]) < 0.02


def test_the_simulators_truth_sums_its_sample_of_active_accounts(world):
    """/_sim/population's sums (truth.population) are the world's own tanks/stats differences over
    the window, summed over the uniform sample's accounts that played in it."""
    end = NOW
    found = truth.population(world, "eu", 7, end, players=60)
    assert found["players"] == 60 and found["ids_drawn"] >= 60
    expected: dict[str, list[int]] = {}
    counted = 0
    for account_id in truth.sample_ids("eu", found["ids_drawn"]):
        now = {t["tank_id"]: t["all"] for t in world.tanks_stats("eu", account_id, end, None) or []}
        then = {t["tank_id"]: t["all"] for t in world.tanks_stats("eu", account_id, end - 7 * DAY, None) or []}
        played = False
        for tank_id, row in now.items():
            old = then.get(tank_id) or {}
            battles = row["battles"] - old.get("battles", 0)
            if battles > 0:
                played = True
                sums = expected.setdefault(str(tank_id), [0, 0, 0, 0])
                sums[0] += 1
                for i, name in enumerate(("battles", "wins", "damage_dealt"), 1):
                    sums[i] += row[name] - old.get(name, 0)
        counted += played
    assert counted == 60
    assert {
        t: [v["players"], v["battles"], v["wins"], v["damage_dealt"]] for t, v in found["tanks"].items()
    } == expected


@pytest.mark.gen_test(timeout=60)
async def test_the_truth_endpoint_refuses_bad_windows(fast_upstream_sim):
    from tornado.httpclient import AsyncHTTPClient

    for query in ("region=xx", "days=0", "days=91", "days=x", "through=soon"):
        response = await AsyncHTTPClient().fetch(f"{fast_upstream_sim}/_sim/population?{query}", raise_error=False)
        assert response.code == 400, query
