"""The tank statistics over the random panel against the simulator's own truth, and the panel kept
out of the tracked accounts' figures and leaderboards."""

from __future__ import annotations

import datetime as dt
import math
import random
import time

import pytest
import ujson
from tornado.httpclient import AsyncHTTPClient

from scripts.check_demo_panel import against_truth
from scripts.upstream_sim import truth
from server.compose.demo import TimeTravelUpstream
from server.domain.days import ManualClock, day_start, utc_day
from server.domain.records import unpack
from server.services import tank_stats as tank_stats_module
from server.services.panel import PanelService
from server.services.population import PopulationService
from server.services.tracker import SLICES, Tracker
from server.upstream.budget import UpstreamBudget
from server.upstream.client import UpstreamClient
from server.upstream.realms import RealmGates
from store.constants import TANK_COUNTERS
from store.population import unpack_grid
from store.tracker import tracked_id
from tests.helpers import FAST_REALMS

PANEL = 300  # active accounts drawn
LOOKED_UP = 20  # accounts tracked as looked up here (the tracked population)
B, W, D = (TANK_COUNTERS.index(name) for name in ("battles", "wins", "damage_dealt"))
WINDOW = 7  # the table compared: 7 days, after one pass that measures every account's base


async def get(http_client, base_url, path):
    response = await http_client.fetch(base_url + path, raise_error=False)
    return response.code, ujson.loads(response.body)


@pytest.mark.gen_test(timeout=400)
async def test_the_panels_figures_match_the_worlds_and_stay_out_of_the_tracked_ones(
    app, http_client, base_url, fast_upstream_sim, monkeypatch
):
    services, store = app.settings["services"], app.settings["store"]
    now = time.time()
    today = dt.datetime.fromtimestamp(now, dt.UTC).date()
    days = [(today - dt.timedelta(days=back)).isoformat() for back in range(WINDOW + 1, 0, -1)]
    clock = ManualClock(day_start(days[0]) + 86399)
    client = UpstreamClient(
        "panel-figures",
        base_url=fast_upstream_sim,
        budget=UpstreamBudget(200, hold_first_window=False),
        realms=RealmGates(FAST_REALMS, hold_first_window=False),
    )
    upstream = TimeTravelUpstream(client, clock)
    panel = PanelService(store, upstream, size=PANEL, clock=clock, rng=random.Random(5), regions=("eu",))
    tracker = Tracker(store, upstream, services.ratings_source, clock=clock, owner="panel-test", group=SLICES)
    try:
        # Accounts looked up here: the tracked population (none of them in the panel's frame).
        await panel.run()
        frame = set((await store.panels.get("eu"))["frame"])
        looked_up = [a for a in truth.sample_ids("eu", 400)[-LOOKED_UP * 2 :] if a not in frame][:LOOKED_UP]
        await store.tracked.track_many("eu", [(a, None) for a in looked_up], now + 30 * 86400, clock())
        # Two passes, as the demo's weekly visits: the first measures every account's state, the
        # one WINDOW days later its changes (a window's sums do not depend on how its battles are
        # split between visits, and the daily passes between cost six times the test's writes).
        for day in (days[0], days[-1]):
            clock.set(day_start(day) + 86399)
            await panel.run()  # renews the frame's tracking
            await tracker.tick()
    finally:
        client.close()
    frame = set((await store.panels.get("eu"))["frame"])
    assert frame.isdisjoint(looked_up)
    job = PopulationService(store, services.ratings_source, clock=lambda: day_start(utc_day(now)) + 2 * 3600)
    await job.build(force=True)
    through = days[-1]

    # Default: the panel, saying so with its size.
    ours: dict[int, dict] = {}
    while True:
        path = f"/api/v1/tanks/stats?region=eu&days={WINDOW}&limit=100&offset={len(ours)}"
        code, body = await get(http_client, base_url, path)
        assert code == 200, body
        data = body["data"]
        assert data["through"] == through and data["population_kind"] == "panel"
        assert data["panel_size"] >= PANEL and f"random panel of {data['panel_size']:,}" in data["population"]
        ours.update((row["tank_id"], row) for row in data["tanks"])
        if len(ours) >= data["total"] or not data["tanks"]:
            break

    # The world's truth over the same window (the passes measured at the last second of each day).
    response = await AsyncHTTPClient().fetch(
        f"{fast_upstream_sim}/_sim/population?region=eu&days={WINDOW}&through={through}", request_timeout=120
    )
    truth_sample = ujson.loads(response.body)
    theirs = truth_sample["tanks"]
    # Over the tanks the answer rates (min_players): the panel's win rate and average damage
    # against the world's, within 4 standard errors of a ratio over a sample of accounts (each
    # account's battles are one cluster; the error is the panel's own, from its accounts' sums:
    # ~240 accounts and ~5,600 battles give about 0.4 points of win rate and 3 % of damage).
    rated = {t for t, row in ours.items() if row["win_rate"] is not None and str(t) in theirs}
    assert len(rated) >= 5
    # scripts/check_demo_panel.py reads these answers the same way (the demo's figures against the truth).
    compared = against_truth(list(ours.values()), theirs, min_battles=0)
    assert compared["tanks"] == len(rated) and compared["win_rate_points"] is not None
    accounts: dict[int, list[int]] = {}
    for day in days[1:]:
        for (account_id, payload, _), _only in await store.population.changes.of_day_marked("eu", day):
            if account_id in frame:
                for tank_id, row in unpack(payload).items():
                    if tank_id in rated and row[B] > 0:
                        sums = accounts.setdefault(account_id, [0, 0, 0])
                        for k, column in enumerate((B, W, D)):
                            sums[k] += row[column]
    n = len(accounts)
    assert n >= 50
    battles = sum(ours[t]["battles"] for t in rated)
    assert battles == sum(s[0] for s in accounts.values())
    for k, name, figure in ((1, "wins", "win_rate"), (2, "damage_dealt", "avg_damage")):
        ratio = sum(ours[t][figure] * ours[t]["battles"] for t in rated) / battles / (100 if k == 1 else 1)
        world = sum(theirs[str(t)][name] for t in rated) / sum(theirs[str(t)]["battles"] for t in rated)
        spread = sum((s[k] - ratio * s[0]) ** 2 for s in accounts.values()) * n / (n - 1)
        error = math.sqrt(spread) / battles
        # The truth is a sample too (of truth_sample["players"] accounts): its error scales alike.
        combined = error * math.sqrt(1 + n / truth_sample["players"])
        print(f"{figure}: panel {ratio:.4f} world {world:.4f} se {combined:.4f} accounts {n} battles {battles}")
        assert abs(ratio - world) <= 4 * combined, (figure, ratio, world, combined)

    # Each rated tank's 95 % intervals are those of its panel players' own sums (a player's battles
    # counted together), and hold the figure; the tracked accounts' rows state none.
    per_player: dict[int, dict[int, list[int]]] = {}
    active: set[int] = set()  # the panel's accounts that played in the window
    for day in days:
        for (account_id, payload, _), _only in await store.population.changes.of_day_marked("eu", day):
            if account_id in frame:
                active.update(account_id for row in unpack(payload).values() if row[B] > 0)
                for tank_id, row in unpack(payload).items():
                    if tank_id in rated and row[B] > 0:
                        mine = per_player.setdefault(tank_id, {}).setdefault(account_id, [0, 0, 0])
                        for k, column in enumerate((B, W, D)):
                            mine[k] += row[column]
    for tank_id in rated:
        row, players = ours[tank_id], list(per_player[tank_id].values())
        n, x = len(players), sum(p[0] for p in players)
        assert (n, x) == (row["players"], row["battles"])
        for k, figure, scale in ((1, "win_rate", 100.0), (2, "avg_damage", 1.0)):
            r = sum(p[k] for p in players) / x
            half = 1.959964 * math.sqrt(n / (n - 1) * sum((p[k] - r * p[0]) ** 2 for p in players)) / x * scale
            interval = row[f"{figure}_interval"]
            assert interval["low"] == pytest.approx(scale * r - half, abs=0.011), (tank_id, figure)
            assert interval["high"] == pytest.approx(scale * r + half, abs=0.011), (tank_id, figure)
            assert interval["low"] <= row[figure] <= interval["high"]

    # The mark thresholds over the panel carry their intervals (around the estimate); the tracked ones none.
    code, body = await get(http_client, base_url, "/api/v1/tanks/marks?region=eu&limit=100")
    assert code == 200 and body["data"]["population_kind"] == "panel"
    for row in body["data"]["tanks"]:
        bounds = row["marks_interval"]
        assert (bounds is None) == (row["marks"] is None), row
        for name, bound in (bounds or {}).items():
            assert bound is None or bound["low"] <= row["marks"][name] <= bound["high"], (row, name)
    code, body = await get(http_client, base_url, "/api/v1/tanks/marks?region=eu&limit=100&population=tracked")
    assert code == 200 and all(row["marks_interval"] is None for row in body["data"]["tanks"])

    # A profile's career WN8 percentile: among the panel's active players once enough of them stand
    # behind it, else among the tracked accounts, saying why.
    panel_table = await store.population.periods.get("eu", 30, "panel")
    career = panel_table["career"]
    books = await store.tracked.ranking_books([tracked_id("eu", a) for a in active])
    seasoned = sum(1 for doc in books.values() if sum(r[B] for r in unpack(doc["state"]).values()) >= 100)
    assert 0 < career["qualified"] <= seasoned and career["qualified"] >= 0.9 * seasoned
    grid = unpack_grid(career["wn8"])
    stats = services.tank_stats
    # Below STANDING_PANEL_MIN_PLAYERS (1,000) members, the tracked accounts: here too few of them for a grid.
    assert career["qualified"] < 1000 and await stats.career_standing("eu", grid[49] + 0.01, 5000) == (None, None)
    monkeypatch.setattr(tank_stats_module, "STANDING_PANEL_MIN_PLAYERS", career["qualified"])
    place, among = await stats.career_standing("eu", grid[49] + 0.01, 5000)
    assert (place, among["kind"], among["players"]) == (50, "panel", career["qualified"])
    assert "active players" in among["description"]

    # The tracked population is the accounts looked up here, without a panel-only one: in its
    # table, its tanks' series and the leaderboards.
    code, body = await get(http_client, base_url, f"/api/v1/tanks/stats?region=eu&days={WINDOW}&population=tracked")
    assert code == 200 and body["data"]["population_kind"] == "tracked" and body["data"]["panel_size"] is None
    assert all(row["win_rate_interval"] is None is row["avg_damage_interval"] for row in body["data"]["tanks"])
    tracked_table = await store.population.periods.get("eu", WINDOW)
    assert 0 < tracked_table["accounts"]["players"] <= LOOKED_UP
    looked_up_battles = 0
    for day in days[1:]:
        for (account_id, payload, _), only in await store.population.changes.of_day_marked("eu", day):
            assert only == (account_id in frame)
            if account_id in looked_up:
                looked_up_battles += sum(row[B] for row in unpack(payload).values() if row[B] > 0)
    assert sum(row["battles"] for row in body["data"]["tanks"]) <= looked_up_battles  # a page of them
    assert tracked_table["tanks"] and sum(e["sums"][B] for e in tracked_table["tanks"].values()) == looked_up_battles
    code, body = await get(http_client, base_url, "/api/v1/leaderboard/players?region=eu&days=7&min_battles=1")
    assert code == 200, body
    ranked = [row["account_id"] for row in body["data"]["rows"]]
    assert ranked and set(ranked) <= set(looked_up)
    # A bad population is a clear 400.
    code, body = await get(http_client, base_url, "/api/v1/tanks/stats?region=eu&population=everyone")
    assert (code, body["error"]["code"]) == (400, "invalid_population")
