"""Wargaming's published thresholds (wot/tanks/mastery) against the simulator: what the daily fetch
stores is the upstream's answer, a day is fetched once and never rewritten, a failed day keeps the
last good version and the answers say so, and the estimates' error against them."""

from __future__ import annotations

import time

import pytest

from server.compose.demo import TimeTravelUpstream
from server.domain.days import DAY_SECONDS, ManualClock, utc_day
from server.services.official import (
    DAMAGE_PERCENTILES,
    MARK_KEYS,
    XP_PERCENTILES,
    Official,
    OfficialFigures,
)
from server.services.tank_stats import estimate_error, official_head
from store.constants import REGIONS
from tests.helpers import sim_async


async def mastery_requests(upstream_sim: str) -> int:
    return (await sim_async(upstream_sim, "/_sim/stats"))["by_path"].get("wot/tanks/mastery", 0)


@pytest.mark.gen_test(timeout=240)
async def test_the_daily_fetch_stores_the_upstreams_answer_once_a_day_and_a_failed_day_keeps_the_last(
    app, upstream_sim
):
    store, services = app.settings["store"], app.settings["services"]
    clock = ManualClock(time.time() - DAY_SECONDS)
    upstream = TimeTravelUpstream(services.upstream, clock)
    official = OfficialFigures(store, upstream, clock=clock)
    yesterday = utc_day(clock())

    asked = await mastery_requests(upstream_sim)
    said = await official.fetch()
    assert said.startswith(yesterday) and "failed" not in said, said
    # Two requests a realm a day (both distributions, every tank in one answer).
    assert await mastery_requests(upstream_sim) - asked == 2 * len(REGIONS)
    # What is stored is what the upstream answers, at the marks' and the badges' percentiles.
    damage, updated = await upstream.tanks_mastery("eu", "damage", DAMAGE_PERCENTILES, caller="other")
    xp, _ = await upstream.tanks_mastery("eu", "xp", XP_PERCENTILES, caller="other")
    kept = await store.official_marks.get("eu", yesterday)
    assert kept["updated_at"] == updated
    assert kept["damage"] == {str(t): [row[p] for p in DAMAGE_PERCENTILES] for t, row in damage.items()}
    assert kept["xp"] == {str(t): [row[p] for p in XP_PERCENTILES] for t, row in xp.items()}
    current = await official.current("eu")
    assert current is not None and current.day == yesterday
    tank_id = next(iter(damage))
    figures = current.thresholds(tank_id)
    assert figures["marks"] == dict(zip(MARK_KEYS, [damage[tank_id][p] for p in DAMAGE_PERCENTILES], strict=True))
    assert figures["source"] == "wot/tanks/mastery" and figures["date"] == yesterday

    # The same day again: nothing asked, nothing rewritten.
    asked = await mastery_requests(upstream_sim)
    assert (await official.fetch()) == f"up to date for {yesterday}"
    assert await mastery_requests(upstream_sim) == asked
    assert await store.official_marks.get("eu", yesterday) == kept

    # Today the method fails upstream: yesterday's version is kept and served, with its date.
    # (A refusal the client does not retry: a retried failure ends the same, minutes later.)
    await sim_async(upstream_sim, "/_sim/faults", {"disabled_methods": ["wot/tanks/mastery"]})
    try:
        clock.set(clock() + DAY_SECONDS)
        said = await official.fetch()
        assert "eu failed (the newest version kept)" in said, said
        assert await store.official_marks.get("eu", utc_day(clock())) is None
        official._kept.clear()  # as another process would read it: from the store
        current = await official.current("eu")
        assert current is not None and current.day == yesterday
        head = official_head(current, [], utc_day(clock()))
        assert head is not None and head["date"] == yesterday and head["stale"] is True
    finally:
        await sim_async(upstream_sim, "/_sim/faults", {"reset": True})


def test_the_estimates_error_is_relative_to_the_official_threshold_and_summarised_by_tier():
    official = {"first": 2000.0, "second": 2500.0, "third": 3000.0, "top": 4000.0}
    estimate = {"first": 2100.0, "second": 2500.0, "third": 2700.0, "top": None}
    assert estimate_error(estimate, official) == {"first": 0.05, "second": 0.0, "third": -0.1, "top": None}
    assert estimate_error(None, official) is None and estimate_error(estimate, None) is None
    rows = [
        {"tier": 8, "estimate_error": {"first": 0.05, "second": 0.0, "third": -0.1, "top": None}},
        {"tier": 8, "estimate_error": {"first": 0.15, "second": 0.1, "third": 0.1, "top": 0.2}},
        {"tier": 8, "estimate_error": {"first": -0.05, "second": 0.2, "third": 0.0, "top": None}},
        {"tier": 10, "estimate_error": None},
    ]
    kept = Official("2026-11-27", 1_795_000_000, {}, {})
    head = official_head(kept, rows, "2026-11-28")
    assert head["stale"] is True and head["date"] == "2026-11-27"
    assert head["median_error_by_tier"] == [
        {"tier": 8, "tanks": 3, "first": 0.05, "second": 0.1, "third": 0.0, "top": 0.2}
    ]
