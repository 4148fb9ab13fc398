"""Wargaming's published thresholds (wot/tanks/mastery) against the simulator: what the daily fetch
stores is the upstream's answer, a day is fetched once and never rewritten, a failed day keeps the
last good version and the answers say so, and the estimates' error against them."""

from __future__ import annotations

import asyncio
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.compose.demo import TimeTravelUpstream
from server.domain.days import DAY_SECONDS, ManualClock, day_start, utc_day
from server.services.official import (
    DAMAGE_PERCENTILES,
    MARK_KEYS,
    XP_PERCENTILES,
    Official,
    OfficialFigures,
)
from server.services.players import PlayerService
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


def test_a_tanks_mastery_row_says_which_badge_the_best_battle_reaches_against_the_published_xp():
    from server.services.history import mastery_progress

    published = {
        "marks": None,
        "mastery_xp": {"third_class": 500.0, "second_class": 800.0, "first_class": 1100.0, "ace": 1400.0},
        "date": "2026-11-20",
        "source": "wot/tanks/mastery",
    }
    row = mastery_progress(2, 1150, published)
    assert row["badge"] == 2 and row["best_xp"] == 1150
    assert row["best_xp_reaches"] == 3  # 1st class: at or above 1100, below the Ace's 1400
    assert row["thresholds"] == published["mastery_xp"] and row["date"] == "2026-11-20"
    assert mastery_progress(0, 1400, published)["best_xp_reaches"] == 4
    assert mastery_progress(0, 499, published)["best_xp_reaches"] == 0
    # Without a published distribution, or a best battle kept before the service read it: no reach.
    assert mastery_progress(3, 1150, None) == {
        "badge": 3,
        "best_xp": 1150,
        "thresholds": None,
        "best_xp_reaches": None,
        "date": None,
        "source": None,
    }
    assert mastery_progress(1, None, published)["best_xp_reaches"] is None


def test_the_badges_and_best_battles_kept_per_tank_read_back_and_older_payloads_still_read():
    from server.domain.records import pack, unpack
    from server.services.tracker import mastery_of, raw_tanks_of

    raw = [
        {"tank_id": 1, "mark_of_mastery": 3, "max_xp": 1500, "all": {"battles": 10}},
        {"tank_id": 17, "mark_of_mastery": 0, "max_xp": 900, "all": {"battles": 4}},
        {"tank_id": 33, "mark_of_mastery": 0, "max_xp": 0, "all": {"battles": 2}},  # nothing to keep
        {"tank_id": 49, "mark_of_mastery": 4, "max_xp": 2000, "all": {"battles": 0}},  # never played
    ]
    assert unpack(mastery_of(raw)) == {1: [3, 1500], 17: [0, 900]}
    capture = {"s": pack({1: [10] * 3, 17: [4] * 3}), "m": mastery_of(raw)}
    entries = {entry["tank_id"]: entry for entry in raw_tanks_of(capture)}
    assert (entries[1]["mark_of_mastery"], entries[1]["max_xp"]) == (3, 1500)
    assert (entries[17]["mark_of_mastery"], entries[17]["max_xp"]) == (0, 900)
    # A payload written before the best battle was read: the badge alone, no best battle claimed.
    older = {"s": pack({1: [10] * 3}), "m": pack({1: [3]})}
    (entry,) = raw_tanks_of(older)
    assert entry["mark_of_mastery"] == 3 and "max_xp" not in entry


# --- WTR -------------------------------------------------------------------------------------
async def api_get(http_client, base_url: str, path: str) -> tuple[int, dict]:
    import ujson

    response = await http_client.fetch(f"{base_url}/api/v1{path}", raise_error=False)
    return response.code, ujson.loads(response.body)


@pytest.mark.gen_test(timeout=180)
async def test_a_profile_carries_wargamings_wtr_and_a_null_or_failing_wtr_leaves_it_200_with_the_reason(
    app, http_client, base_url, upstream_sim
):
    ids = (await sim_async(upstream_sim, "/_sim/accounts?region=eu&n=100"))["ids"]
    query = f"application_id=t&account_id={','.join(map(str, ids))}"
    ratings = (await sim_async(upstream_sim, f"/wot/eu/wot/account/wtr/?{query}"))["data"]
    rated = [a for a in ids if ratings[str(a)] is not None]
    try:
        # A rated account: the rating as account/wtr answers it (at the lookup's moment), and
        # account/info's global_rating, also while the computed ratings are not yet available.
        account_id = rated[0]
        code, body = await api_get(http_client, base_url, f"/player/{account_id}/eu")
        assert code == 200, body
        # A live lookup spends no request on it: not asked yet, and said so ...
        assert body["data"]["live_fetched"] is True
        assert body["data"]["ratings"]["wtr"] is None and body["data"]["ratings"]["wtr_reason"] == "not_fetched"
        # ... the profile's refresh asks it.
        players = app.settings["services"].players
        await players.fetch_and_store("eu", account_id, with_ratings=True, caller="refresh")
        code, body = await api_get(http_client, base_url, f"/player/{account_id}/eu")
        assert code == 200, body
        profile = body["data"]
        at = int(profile["cached_at"])
        answer = await sim_async(
            upstream_sim, f"/wot/eu/wot/account/wtr/?application_id=t&account_id={account_id}&_sim_now={at}"
        )
        info = await sim_async(
            upstream_sim,
            f"/wot/eu/wot/account/info/?application_id=t&account_id={account_id}&fields=global_rating&_sim_now={at}",
        )
        assert answer["data"][str(account_id)] == {"account_id": account_id, "rating": profile["ratings"]["wtr"]}
        assert profile["ratings"]["wtr_reason"] is None
        assert profile["ratings"]["global_rating"] == info["data"][str(account_id)]["global_rating"] > 0
        # Wargaming has none for the account (below 50 random battles: the simulator's accounts
        # have that few only in their first days, so this lookup asks it as of then): null, and why.
        young = rated[2]
        created = (
            await sim_async(
                upstream_sim, f"/wot/eu/wot/account/info/?application_id=t&account_id={young}&fields=created_at"
            )
        )["data"][str(young)]["created_at"]
        services = app.settings["services"]
        then = PlayerService(
            app.settings["store"],
            TimeTravelUpstream(services.upstream, lambda: created + 3600),
            services.ratings_source,
            None,
        )
        doc = await then.fetch_and_store("eu", young)
        assert doc["totals"]["battles"] < 50
        code, body = await api_get(http_client, base_url, f"/player/{young}/eu")  # the cached profile
        assert code == 200 and body["data"]["live_fetched"] is False, body
        assert body["data"]["ratings"]["wtr"] is None and body["data"]["ratings"]["wtr_reason"] == "no_rating"
        # The method failing: the lookup still answers, its WTR null with the reason; its history too.
        await sim_async(upstream_sim, "/_sim/faults", {"method_errors": {"wot/account/wtr": "SOURCE_NOT_AVAILABLE"}})
        failing = rated[1]
        await players.fetch_and_store("eu", failing, with_ratings=True, caller="refresh")
        code, body = await api_get(http_client, base_url, f"/player/{failing}/eu")
        assert code == 200, body
        assert body["data"]["ratings"]["wtr"] is None
        assert body["data"]["ratings"]["wtr_reason"] == "upstream_failed"
        assert body["data"]["ratings"]["global_rating"] is not None
        stored = await app.settings["store"].players.get("eu", failing)
        assert stored["wtr"] is None and stored["wtr_reason"] == "upstream_failed" and stored["totals"]["battles"] > 0
    finally:
        await sim_async(upstream_sim, "/_sim/faults", {"reset": True})


@pytest.mark.gen_test(timeout=240)
async def test_the_trackers_pass_asks_wtr_per_hundred_accounts_that_played_and_stores_it_per_day(app, upstream_sim):
    """account/wtr takes 100 ids: the pass pools the accounts that played across its batches (each
    a few dozen) into full requests, then one for the rest; the day's snapshot and the tracked
    account carry the simulator's rating."""
    from server.services.tracker import SLICES, Tracker
    from store.tracker import tracked_id

    store, services = app.settings["store"], app.settings["services"]
    ids = (await sim_async(upstream_sim, "/_sim/accounts?region=eu&n=260"))["ids"]
    day = utc_day(time.time() - 2 * DAY_SECONDS)
    clock = ManualClock(day_start(day) + DAY_SECONDS - 1)  # every slice of the day is due
    await store.tracked.track_many("eu", [(a, None) for a in ids], clock() + 30 * DAY_SECONDS, clock())
    asked = (await sim_async(upstream_sim, "/_sim/stats"))["by_path"]
    tracker = Tracker(
        store,
        TimeTravelUpstream(services.upstream, clock),
        services.ratings_source,
        clock=clock,
        owner="t",
        group=SLICES,
    )
    await tracker.tick()
    spent = tracker.spent[day]
    now = (await sim_async(upstream_sim, "/_sim/stats"))["by_path"]
    wtr_requests = now.get("wot/account/wtr", 0) - asked.get("wot/account/wtr", 0)
    info_requests = now.get("wot/account/info", 0) - asked.get("wot/account/info", 0)
    at = int(clock())
    truth = {}
    for start in range(0, len(ids), 100):
        part = ",".join(map(str, ids[start : start + 100]))
        truth.update(
            (
                await sim_async(
                    upstream_sim, f"/wot/eu/wot/account/wtr/?application_id=t&account_id={part}&_sim_now={at}"
                )
            )["data"]
        )
    snapshots = {
        doc["account_id"]: doc
        for doc in await store.players.snapshots.find(
            {"region": "eu", "account_id": {"$in": ids}, "date": day}
        ).to_list(None)
    }
    # One account/wtr per 100 accounts that played (a first visit counts as played), counted as the tracker's.
    assert len(snapshots) > 200, "too few played to need three requests"
    assert wtr_requests == spent["wtr_requests"] == -(-len(snapshots) // 100), (wtr_requests, spent, info_requests)
    for account_id, snap in snapshots.items():
        expected = truth[str(account_id)]
        assert snap.get("wtr") == (expected["rating"] if expected else None), account_id
        tracked = await store.tracked.collection.find_one({"_id": tracked_id("eu", account_id)}, {"wtr": 1})
        assert tracked["wtr"] == snap.get("wtr")


WTR_ACCOUNTS = (1, 2, 3)
# One answer of the tracker's account/wtr: {account_id: rating or None} (None: below the minimum),
# or None (the request failed).
wtr_answers = st.none() | st.fixed_dictionaries(
    {a: st.none() | st.integers(min_value=0, max_value=12_000) for a in WTR_ACCOUNTS}
)


@settings(max_examples=25, deadline=None)
@given(calls=st.lists(st.tuples(wtr_answers, st.booleans()), min_size=1, max_size=5))
def test_storing_the_days_wtr_twice_stores_what_once_does(mongo_uri, calls):
    """The tracker may store a day's WTR twice (a pass taken over, a same-day revisit): each answer
    stored once or twice leaves the same profiles and snapshots; a failed request never takes away
    a WTR already stored."""
    from server.domain.profiles import wtr_of
    from store.players import player_key
    from tests.test_tracker_drift import new_store

    day = "2026-11-20"

    async def stored_after(repeat: bool) -> list[dict]:
        client, _, store = await new_store(mongo_uri)  # a fresh database per run
        for account in WTR_ACCOUNTS:
            await store.players.profiles.insert_one(
                {"_id": player_key("eu", account), "region": "eu", "account_id": account, "wtr": None}
            )
            await store.players.save_snapshots([{"region": "eu", "account_id": account, "date": day, "battles": 9}])
        for answer, twice in calls:
            for _ in range(2 if repeat and twice else 1):
                await store.players.set_wtr("eu", day, {a: wtr_of(answer, a) for a in WTR_ACCOUNTS}, answer)
        profiles = await store.players.profiles.find({}, {"wtr": 1, "wtr_reason": 1}).sort("_id").to_list(None)
        snapshots = await store.players.snapshots.find({}, {"_id": 0, "day": 0}).sort("account_id").to_list(None)
        client.close()
        return profiles + snapshots

    async def run() -> None:
        once, twice = await stored_after(False), await stored_after(True)
        assert once == twice
        answered = [answer for answer, _ in calls if answer is not None]
        for account in WTR_ACCOUNTS:
            profile = next(doc for doc in once if doc.get("_id") == player_key("eu", account))
            rated = [answer[account] for answer in answered]
            if rated:  # the newest answer's rating (a failure after it keeps it)
                assert profile["wtr"] == rated[-1]
            elif calls:
                assert profile["wtr"] is None and profile["wtr_reason"] == "upstream_failed"

    asyncio.run(run())
