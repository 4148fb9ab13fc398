"""Tank statistics of the tracked population (issue 23): day sums, percentile grids and the daily job."""

from __future__ import annotations

import asyncio
import gc
import math
import random
import time

import pytest
import ujson
from hypothesis import given, settings
from hypothesis import strategies as st

from server.contract.catalogue import POPULATION_MIN_BATTLES, POPULATION_MIN_PLAYERS, POPULATION_PERIODS
from server.domain.days import DAY_SECONDS, day_start, days_before
from server.domain.population import PeriodAccumulator, day_sums, percentile_grid, played, standing
from server.domain.ratings import account_wn8, compute_ratings, load_expected_values_file
from server.domain.records import pack
from server.services import tank_stats as tank_stats_module
from server.services.expected import ExpectedValuesService
from server.services.population import PopulationService, newest_complete_day
from server.services.tracker import due_at
from store.constants import REGIONS, TANK_COUNTERS
from store.population import TankChanges, population_id, unpack_grid
from store.tracker import slice_of, tracked_id
from tests.helpers import EXPECTED_VALUES_FILE, xvm_wn8
from tests.test_tracker_drift import ACCOUNTS, DAY_LIST, Sim, TableRatings, new_store, pick_career, pick_tanks

B = {name: i for i, name in enumerate(TANK_COUNTERS)}


def exact_percentile(values: list[float], p: int) -> float:
    """The p-th percentile the way a spreadsheet's PERCENTILE.INC computes it: rank h = (n-1)p/100
    in the sorted values, interpolated linearly between its neighbours."""
    ordered = sorted(values)
    h = (len(ordered) - 1) * p / 100
    lo = math.floor(h)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (h - lo) * (ordered[hi] - ordered[lo])


def battle_row(rng: random.Random, battles: int) -> list[int]:
    """Counters of `battles` plausible battles, in TANK_COUNTERS order."""
    wins = rng.randint(0, battles)
    draws = rng.randint(0, battles - wins)
    shots = rng.randint(0, 12 * battles)
    row = dict(
        battles=battles,
        wins=wins,
        losses=battles - wins - draws,
        draws=draws,
        damage_dealt=rng.randint(0, 4000 * battles),
        frags=rng.randint(0, 3 * battles),
        spotted=rng.randint(0, 3 * battles),
        dropped_capture_points=rng.randint(0, 20 * battles),
        capture_points=rng.randint(0, 20 * battles),
        xp=rng.randint(100 * battles, 1500 * battles),
        survived_battles=rng.randint(0, battles),
        shots=shots,
        hits=rng.randint(0, shots),
        damage_received=rng.randint(0, 3000 * battles),
        stun_assisted_damage=rng.randint(0, 500 * battles),
    )
    return [row[name] for name in TANK_COUNTERS]


counter = st.integers(min_value=-3, max_value=5000)
# Rows as wide as every counter, or as rows written before the last ones existed (LEGACY_WIDTH).
rows = st.dictionaries(
    st.integers(min_value=1, max_value=40),
    st.one_of(st.lists(counter, min_size=13, max_size=13), st.lists(counter, min_size=15, max_size=15)),
    max_size=6,
)


@settings(max_examples=200, deadline=None)
@given(day=st.lists(st.tuples(st.integers(min_value=1, max_value=10**9), rows), max_size=12))
def test_day_sums_are_each_tanks_players_and_counters_summed(day):
    """What a day's changes add up to, written out here: a tank counts each account whose change
    has battles on it once, and sums its counters with the impossible cut away (negative counters
    as 0, no more wins / losses / draws / survivals than battles, no more hits than shots); a
    counter a row does not carry adds nothing."""
    accounts, sums = day_sums(day)
    want: dict[int, list[int]] = {}
    playing = 0
    for _, change in day:
        any_tank = False
        for tank_id, row in change.items():
            if row[B["battles"]] <= 0:
                continue
            any_tank = True
            clean = [max(0, v) for v in row] + [0] * (len(TANK_COUNTERS) - len(row))
            for name in ("wins", "losses", "draws", "survived_battles"):
                clean[B[name]] = min(clean[B[name]], clean[B["battles"]])
            clean[B["hits"]] = min(clean[B["hits"]], clean[B["shots"]])
            total = want.setdefault(tank_id, [0] * (1 + len(TANK_COUNTERS)))
            total[0] += 1
            for i, value in enumerate(clean):
                total[1 + i] += value
        playing += any_tank
    assert accounts == playing
    assert sums == want


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.floats(min_value=0, max_value=10_000, allow_nan=False), min_size=2, max_size=300))
def test_percentile_grid_is_the_exact_linear_interpolation(values):
    grid = percentile_grid(values)
    assert grid is not None and len(grid) == 99
    for p in range(1, 100):
        assert grid[p - 1] == pytest.approx(exact_percentile(values, p), rel=1e-9, abs=1e-9)
    assert percentile_grid(values[:1]) is None


def test_standing_is_the_share_below_within_one_percentile_step():
    rng = random.Random(7)
    values = [rng.lognormvariate(7, 0.5) for _ in range(2000)]
    grid = percentile_grid(values)
    for probe in [rng.lognormvariate(7, 0.6) for _ in range(300)] + [min(values), max(values)]:
        share = 100 * sum(v < probe for v in values) / len(values)
        got = standing(grid, probe)
        assert got is not None and abs(got - share) <= 1.05, (probe, got, share)
    assert standing(None, 1.0) is None


@pytest.fixture(scope="module")
def table():
    return load_expected_values_file(EXPECTED_VALUES_FILE)


@pytest.fixture
def app_overrides():
    """The truths below are computed with the shared frozen table (raw_table): the app rates with it too."""
    return {"expected_values": str(EXPECTED_VALUES_FILE)}


def test_period_table_equals_an_exact_computation(raw_table, table):
    """Three days of 150 accounts on 8 tanks: every tank's players, sums and grids, and the accounts'
    WN8 grid, against the same figures computed here from the raw rows (XVM's formula for WN8)."""
    rng = random.Random(11)
    tank_ids = sorted(raw_table)[::97][:7] + [65_521]  # the last one is not in the table
    days = []
    for _ in range(3):
        day = []
        for account_id in range(1, 151):
            if rng.random() < 0.7:
                played_tanks = rng.sample(tank_ids, rng.randint(1, 4))
                day.append((account_id, {t: battle_row(rng, rng.randint(1, 12)) for t in played_tanks}))
        days.append(day)
    accumulator = PeriodAccumulator()
    for day in days:
        accumulator.add(day)
    table_out = accumulator.table(table, POPULATION_MIN_BATTLES, POPULATION_MIN_PLAYERS, 30)

    per_account: dict[int, dict[int, list[int]]] = {}
    for day in days:
        for account_id, change in day:
            for tank_id, row in change.items():
                total = per_account.setdefault(account_id, {}).setdefault(tank_id, [0] * len(TANK_COUNTERS))
                for i, value in enumerate(row):
                    total[i] += value
    checked_grids = 0
    for tank_id in tank_ids:
        players = {a: mine[tank_id] for a, mine in per_account.items() if tank_id in mine}
        got = table_out["tanks"][tank_id]
        assert got["players"] == len(players)
        assert got["sums"] == [sum(row[i] for row in players.values()) for i in range(len(TANK_COUNTERS))]
        qualified = {a: row for a, row in players.items() if row[B["battles"]] >= POPULATION_MIN_BATTLES}
        assert got["qualified"] == len(qualified)
        averages = [row[B["damage_dealt"]] / row[B["battles"]] for row in qualified.values()]
        if len(averages) < POPULATION_MIN_PLAYERS:
            assert got["damage"] is None
            continue
        for p in (1, 10, 50, 65, 85, 95, 99):
            assert got["damage"][p - 1] == pytest.approx(exact_percentile(averages, p))
        if tank_id not in raw_table:
            assert got["wn8"] is None and got["rated"] == 0
            continue
        wn8s = [xvm_wn8({}, {tank_id: dict(zip(TANK_COUNTERS, row))}, raw_table) for row in qualified.values()]
        for p in (5, 50, 95):
            assert got["wn8"][p - 1] == pytest.approx(exact_percentile(wn8s, p), abs=0.01)
        checked_grids += 1
    assert checked_grids >= 3
    busy = [tanks for tanks in per_account.values() if sum(row[0] for row in tanks.values()) >= 30]
    wn8s = [xvm_wn8({}, {t: dict(zip(TANK_COUNTERS, row)) for t, row in tanks.items()}, raw_table) for tanks in busy]
    assert table_out["accounts"]["qualified"] == len(busy) >= POPULATION_MIN_PLAYERS
    assert table_out["accounts"]["wn8"][49] == pytest.approx(exact_percentile(wn8s, 50), abs=0.01)


def test_a_day_is_complete_an_hour_after_it_ends():
    day = "2026-03-10"
    assert newest_complete_day(day_start(day) + DAY_SECONDS + 3599) == days_before(day, 1)
    assert newest_complete_day(day_start(day) + DAY_SECONDS + 3600) == day


@pytest.mark.gen_test
async def test_no_garbage_collection_holds_requests_while_the_job_builds_and_it_comes_back_after():
    """The job's millions of per-account sums are never scanned by a collection meanwhile (each
    would hold every request: docs/architecture.md, "Adding a job"); after it, even a failed one,
    collections run again."""
    seen = []

    class Probe(PopulationService):
        async def build_region(self, region, through):
            seen.append(gc.isenabled())
            if region == REGIONS[-1]:
                raise RuntimeError("the database went away")
            return {"accounts": 0, "tanks": 0}

    class NoTables:
        async def get(self, region, days):
            return None

    store = type("S", (), {"population": type("P", (), {"periods": NoTables()})()})()
    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        await Probe(store, None).build()
    assert seen == [False] * len(REGIONS)
    assert gc.isenabled()


@pytest.mark.gen_test(timeout=120)
async def test_the_daily_job_sums_what_the_truth_says_was_played(mongo_uri, raw_table):
    """Twelve days of the tracker (pass visits, and same-day rewrites by live lookups after more
    battles) on the fake upstream of tests/test_tracker_drift.py; then the job. Each day's sums per
    tank equal the truth's per-account differences summed; a second run stores the same; every
    period's table is there, with its players and sums."""
    tanks = pick_tanks(raw_table)
    client, name, store = await new_store(mongo_uri)
    try:
        sim = Sim.over(store, pick_career(raw_table, tanks))
        days = DAY_LIST[:12]
        for account in ACCOUNTS:
            sim.world.play(account, tanks[0], 5, seed=account[1])
            await sim.lookup(account)
        for n, day in enumerate(days[1:], start=1):
            for k, account in enumerate(ACCOUNTS):
                sim.clock.set(max(sim.clock(), due_at(day, slice_of(*account))) + 1)
                sim.world.play(account, tanks[(n + k) % 5], 1 + (n * k) % 7, seed=n * 10 + k)
                await sim.pass_visits(day)
                if (n + k) % 3 == 0:  # more battles, then a live lookup: the day's record rewritten
                    sim.world.play(account, tanks[5], 2, seed=n * 100 + k)
                    await sim.lookup(account)
        sim.clock.set(day_start(days[-1]) + DAY_SECONDS + 3600)
        service = PopulationService(store, TableRatings(), clock=sim.clock)
        service.pause = 0  # no requests to let through here
        outcome = await service.build()
        assert "built through " + days[-1] in outcome, outcome
        assert (await service.build()).startswith("up to date"), "built twice for one day"

        first_docs = {}
        for day in days[1:]:
            for region in ("eu", "na"):
                want: dict[int, list[int]] = {}
                for account in [a for a in ACCOUNTS if a[0] == region]:
                    before = sim.world.truth(account, days_before(day, 1))
                    after = sim.world.truth(account, day)
                    diff = {
                        t: [row[name] - (before.get(t) or {}).get(name, 0) for name in TANK_COUNTERS]
                        for t, row in after.items()
                    }
                    for tank_id, row in played(diff).items():
                        total = want.setdefault(tank_id, [0] * (1 + len(TANK_COUNTERS)))
                        total[0] += 1
                        for i, value in enumerate(row):
                            total[1 + i] += value
                if region == "eu":
                    assert want, day  # the eu accounts played every day
                doc = await store.population.days.get(region, day)
                if not want:
                    assert doc is None, (region, day)  # a day nobody played stores nothing
                    continue
                assert doc is not None, (region, day)
                assert {int(t): row for t, row in doc["tanks"].items()} == want, (region, day)
                first_docs[(region, day)] = doc["tanks"]
        await service.build(force=True)
        for (region, day), tanks_doc in first_docs.items():
            assert (await store.population.days.get(region, day))["tanks"] == tanks_doc

        for days_n in POPULATION_PERIODS:
            period = await store.population.periods.get("eu", days_n)
            assert period is not None and period["through"] == days[-1]
            assert period["from"] == days_before(days[-1], days_n - 1)
            eu_battles = sum(row[1] for d in days[1:] for row in first_docs[("eu", d)].values())
            if days_n >= len(days):
                assert sum(t["sums"][0] for t in period["tanks"].values()) == eu_battles
            # Three eu players: below every minimum, so no grid is published.
            assert all(t["damage"] is None for t in period["tanks"].values())
            assert unpack_grid(None) is None
        series = await store.population.series.get("eu", tanks[0])
        assert series is not None and series["days"] == sorted(series["days"])
    finally:
        await client.drop_database(name)
        client.close()


async def _get(http_client, base_url, path):
    response = await http_client.fetch(base_url + "/api/v1" + path, raise_error=False)
    return response.code, ujson.loads(response.body)


@pytest.mark.gen_test(timeout=120)
async def test_tank_endpoints_answer_the_built_tables(app, http_client, base_url, raw_table, monkeypatch):
    """30 eu accounts on three tanks over three days (written as the tracker writes its changes),
    the job, then /tanks/stats and /tank: figures from the sums, percentiles from the players,
    filters, sorting, paging; no_statistics before the build and for a tank nobody played."""
    services, store = app.settings["services"], app.settings["store"]
    code, body = await _get(http_client, base_url, "/tanks/stats?region=eu&days=7")
    assert (code, body["error"]["code"]) == (404, "no_statistics")

    through = newest_complete_day(time.time())
    rng = random.Random(3)
    played_rows: dict[int, dict[int, list[int]]] = {}
    t34, pz4, t14 = 1, 17, 33  # tier 5 ussr / germany mediums and a tier 5 usa heavy (2018 list)
    for k in range(3):
        day = days_before(through, k)
        docs = []
        for account_id in range(500_100_000, 500_100_030):
            rows = {t34: battle_row(rng, rng.randint(35, 45))}  # >= 100 battles each over the 3 days
            if account_id % 2:
                rows[pz4] = battle_row(rng, rng.randint(1, 3))
            if account_id % 10 == 0:
                rows[t14] = battle_row(rng, 2)
            docs.append(TankChanges.change("eu", account_id, day, pack(rows)))
            for tank_id, row in rows.items():
                total = played_rows.setdefault(tank_id, {}).setdefault(account_id, [0] * len(TANK_COUNTERS))
                for i, value in enumerate(row):
                    total[i] += value
        await store.population.changes.save(docs)
    # Their tracked documents (the tracker's stored career states): the career WN8 distribution.
    careers = {
        a: {t: [3 * v for v in played_rows[t][a]] for t in played_rows if a in played_rows[t]}
        for a in range(500_100_000, 500_100_030)
    }
    await store.tracked.collection.insert_many(
        [
            {"_id": tracked_id("eu", a), "region": "eu", "account_id": a, "state": pack(state)}
            for a, state in careers.items()
        ]
    )
    job = PopulationService(store, services.ratings_source)
    job.pause = 0
    await job.build(force=True)

    code, body = await _get(http_client, base_url, "/tanks/stats?region=eu&days=7&sort=players")
    assert code == 200, body
    data = body["data"]
    assert data["through"] == through and data["total"] == 3
    assert [row["tank_id"] for row in data["tanks"]] == [t34, pz4, t14]
    top = data["tanks"][0]
    rows = played_rows[t34]
    battles = sum(r[B["battles"]] for r in rows.values())
    assert top["players"] == 30 and top["battles"] == battles
    assert top["name"] == "T-34" and top["tier"] == 5 and top["nation"] == "ussr"
    assert top["win_rate"] == round(100 * sum(r[B["wins"]] for r in rows.values()) / battles, 2)
    assert top["avg_damage"] == round(sum(r[B["damage_dealt"]] for r in rows.values()) / battles, 2)
    averages = [
        r[B["damage_dealt"]] / r[B["battles"]] for r in rows.values() if r[B["battles"]] >= POPULATION_MIN_BATTLES
    ]
    assert top["sample"] == {"players": 30, "battles": battles, "qualified": len(averages)}
    for p in (50, 65, 85, 95):
        assert top["damage_percentiles"][f"p{p}"] == pytest.approx(exact_percentile(averages, p), rel=1e-5)
    # Pz. IV: 15 players, below the minimum of 20: counted, no rates, no percentiles.
    pz = data["tanks"][1]
    assert pz["players"] == 15 and pz["win_rate"] is None and pz["damage_percentiles"] is None

    # The same query again is replayed from the answer cache (no handler built), the same answer.
    answers = services.answers
    hits = answers.hits
    code, again = await _get(http_client, base_url, "/tanks/stats?region=eu&days=7&sort=players")
    assert answers.hits == hits + 1 and code == 200
    assert again["data"] == body["data"]

    code, body = await _get(http_client, base_url, "/tanks/stats?region=eu&days=7&nation=germany")
    assert [row["tank_id"] for row in body["data"]["tanks"]] == [pz4]
    code, body = await _get(http_client, base_url, "/tanks/stats?region=eu&days=7&type=heavyTank&tier=5")
    assert [row["tank_id"] for row in body["data"]["tanks"]] == [t14]
    code, body = await _get(
        http_client, base_url, "/tanks/stats?region=eu&days=7&sort=players&order=asc&limit=1&offset=1"
    )
    assert [row["tank_id"] for row in body["data"]["tanks"]] == [pz4] and body["data"]["total"] == 3
    code, body = await _get(http_client, base_url, "/tanks/stats?region=eu&days=7&sort=damage_p50")
    assert body["data"]["tanks"][0]["tank_id"] == t34  # the others have no percentiles: nulls last

    code, body = await _get(http_client, base_url, f"/tank/{t34}/eu?days=7")
    assert code == 200, body
    detail = body["data"]
    assert detail["players"] == 30 and detail["sample"]["qualified"] == len(averages)
    assert [point["date"] for point in detail["series"]] == [days_before(through, k) for k in (2, 1, 0)]
    assert sum(point["battles"] for point in detail["series"]) == battles
    assert detail["percentiles"]["damage"]["p99"] == pytest.approx(exact_percentile(averages, 99), rel=1e-5)
    wn8s = [
        xvm_wn8({}, {t34: dict(zip(TANK_COUNTERS, r))}, raw_table)
        for r in rows.values()
        if r[B["battles"]] >= POPULATION_MIN_BATTLES
    ]
    assert detail["percentiles"]["wn8"]["p50"] == pytest.approx(exact_percentile(wn8s, 50), abs=0.01)
    code, body = await _get(http_client, base_url, "/tank/999999/eu?days=7")
    assert (code, body["error"]["code"]) == (404, "no_statistics")
    code, body = await _get(http_client, base_url, "/tank/1/eu?days=8")
    assert (code, body["error"]["code"]) == (400, "invalid_days")
    # A player's period on a tank, placed among the tank's players (as /player/.../tanks shows it).
    median = exact_percentile(averages, 50)
    rows = [
        {"tank_id": t34, "period": {"battles": 12, "avg_damage": median + 0.01, "wn8": None}},  # float32: see below
        {"tank_id": t34, "period": {"battles": 12, "avg_damage": min(averages) - 1, "wn8": 0.0}},
        {"tank_id": t34, "period": {"battles": POPULATION_MIN_BATTLES - 1, "avg_damage": 9999.0, "wn8": 9999.0}},
        {"tank_id": pz4, "period": {"battles": 12, "avg_damage": 500.0, "wn8": 500.0}},
    ]
    standings = [row["standing"] for row in await services.history._with_standing("eu", 5, rows)]
    assert standings[0] == {"period_days": 7, "min_battles": 10, "damage_percentile": 50, "wn8_percentile": None}
    assert standings[1] == {"period_days": 7, "min_battles": 10, "damage_percentile": 0, "wn8_percentile": 0}
    assert standings[2] == {"period_days": 7, "min_battles": 10, "damage_percentile": None, "wn8_percentile": None}
    assert standings[3] == {"period_days": 7, "min_battles": 10, "damage_percentile": None, "wn8_percentile": None}

    # The history's 7-day delta, placed among the accounts with 100 battles in the 7-day tables.
    account_wn8s = [
        xvm_wn8(
            {}, {t: dict(zip(TANK_COUNTERS, played_rows[t][a])) for t in played_rows if a in played_rows[t]}, raw_table
        )
        for a in range(500_100_000, 500_100_030)
    ]
    middle = exact_percentile(account_wn8s, 50)
    history = services.history
    # (+0.01: the grid is kept as float32, within 0.001 at WN8 values below 16,384)
    assert await history._wn8_standing("eu", "7d", {"battles": 150, "wn8": middle + 0.01}) == 50
    assert await history._wn8_standing("eu", "7d", {"battles": 150, "wn8": max(account_wn8s) + 1}) == 99
    assert await history._wn8_standing("eu", "7d", {"battles": 99, "wn8": middle}) is None
    assert await history._wn8_standing("eu", "30d", {"battles": 150, "wn8": middle}) is not None

    career_wn8s = sorted(
        xvm_wn8({}, {t: dict(zip(TANK_COUNTERS, row)) for t, row in state.items()}, raw_table)
        for state in careers.values()
    )
    career_middle = exact_percentile(career_wn8s, 50)
    place, among = await services.tank_stats.career_standing("eu", career_middle + 0.01, 500)
    assert place == 50 and among["kind"] == "tracked" and among["players"] == 30  # no panel here
    assert "tracked accounts" in among["description"] and "panel" not in among["description"]
    assert (await services.tank_stats.career_standing("eu", career_wn8s[0] - 1, 500))[0] == 0
    assert await services.tank_stats.career_standing("eu", career_middle, 99) == (None, None)
    assert (await store.population.periods.get("eu", 90))["career"]["qualified"] == 30

    # A table stays decoded while its build time is unchanged, and is read again once rebuilt.
    stats = services.tank_stats
    first = await stats.table("eu", 7)
    stats._tables[("eu", 7, "tracked")] = (0.0, first)  # its hot-copy time has passed
    assert await stats.table("eu", 7) is first
    await job.build(force=True)
    stats._tables[("eu", 7, "tracked")] = (0.0, first)
    again = await stats.table("eu", 7)
    assert again is not first and again.doc["built_at"] > first.doc["built_at"]

    # With a random panel's 30-day table: the percentile is among its active players once
    # STANDING_PANEL_MIN_PLAYERS of them stand behind it; below, among the tracked ones, saying so.
    career = (await store.population.periods.get("eu", 90))["career"]
    panel_doc = {
        **(await store.population.periods.get("eu", 30)),
        "_id": population_id("eu", "30", "panel"),
        "panel": {"size": 45, "frame": 50, "refreshed_at": None},
        "career": {**career, "qualified": 29},
    }
    await store.population.periods.save(panel_doc)
    place, among = await stats.career_standing("eu", career_middle + 0.01, 500)
    assert (place, among["kind"]) == (50, "tracked") and "the random panel has 29 such players" in among["description"]
    monkeypatch.setattr(tank_stats_module, "STANDING_PANEL_MIN_PLAYERS", 29)
    place, among = await stats.career_standing("eu", career_middle + 0.01, 500)
    assert (place, among["kind"], among["players"]) == (50, "panel", 29) and "active players" in among["description"]
    await store.population.periods.collection.delete_one({"_id": panel_doc["_id"]})


@pytest.mark.gen_test(timeout=120)
async def test_the_job_computes_expected_values_for_a_tank_the_table_lacks(mongo_uri, raw_table):
    """400 eu accounts over three days: each plays three tanks of the loaded table and, one in
    three, tank 999001 the table lacks, all at its skill times the tank's row (the new tank's "true"
    row made up here). The job stores a versioned table whose row for 999001 is that row, with its
    sample, leaves the table's own tanks alone, and a second run stores the same document."""
    from tests.test_expected_method import counters

    client, name, store = await new_store(mongo_uri)
    try:
        table = load_expected_values_file(EXPECTED_VALUES_FILE)
        known = sorted(raw_table)[:40]
        new_tank = 999001
        truth = {"damage": 1400.0, "spot": 1.1, "frag": 0.9, "defence": 0.7, "win_rate": 51.0}
        through = newest_complete_day(time.time())
        rng = random.Random(11)
        players = 0
        for account_id in range(500_200_000, 500_200_400):
            skill = rng.uniform(0.6, 1.5)
            garage = rng.sample(known, 3) + ([new_tank] if account_id % 3 == 0 else [])
            players += new_tank in garage

            def figures(tank_id: int) -> list[float]:
                if tank_id == new_tank:
                    row = truth
                else:
                    e = table.get(tank_id)
                    row = {
                        "damage": e.damage,
                        "spot": e.spot,
                        "frag": e.frag,
                        "defence": e.defence,
                        "win_rate": e.win_rate,
                    }
                return [
                    row[f] * skill if f != "win_rate" else row[f]
                    for f in ("damage", "spot", "frag", "defence", "win_rate")
                ]

            docs = [
                TankChanges.change(
                    "eu", account_id, days_before(through, k), pack({t: counters(200, *figures(t)) for t in garage})
                )
                for k in range(3)
            ]
            await store.population.changes.save(docs)
        service = PopulationService(store, TableRatings(), clock=lambda: day_start(through) + DAY_SECONDS + 3600)
        service.pause = 0
        await service.build(force=True)
        doc = await store.expected_tables.latest("eu")
        assert doc is not None and doc["version"] == f"{through}+ev1" and doc["through"] == through
        assert doc["window"] == {"from": days_before(through, 59), "through": through, "days": 60}
        assert set(doc["gaps"]["rows"]) == {str(new_tank)}  # the table's own tanks keep their rows
        damage, spot, frag, defence, win_rate, row_players, battles = doc["gaps"]["rows"][str(new_tank)]
        assert (row_players, battles) == (players, players * 600)
        for value, want in zip((damage, spot, frag, defence), (1400.0, 1.1, 0.9, 0.7), strict=True):
            assert value == pytest.approx(want, rel=0.01)
        assert win_rate == pytest.approx(51.0, rel=0.01)
        # Every tank refitted: the table's own tanks (played at exactly their rows, scaled by skill)
        # come back at their rows, and the new tank at its made-up one.
        every = doc["computed"]["rows"]
        assert str(new_tank) in every and len(every) > 1
        for tank_id, row in every.items():
            want = truth if int(tank_id) == new_tank else table.get(int(tank_id))
            want_vector = (
                [want[k] for k in ("damage", "spot", "frag", "defence", "win_rate")]
                if isinstance(want, dict)
                else [want.damage, want.spot, want.frag, want.defence, want.win_rate]
            )
            assert row[:5] == pytest.approx(want_vector, rel=0.02), tank_id
        assert await store.expected_tables.get("eu", doc["version"]) == doc
        await service.build(force=True)
        again = await store.expected_tables.latest("eu")
        assert {k: v for k, v in again.items() if k != "built_at"} == {k: v for k, v in doc.items() if k != "built_at"}

        # Ratings of the region use the computed row for the tank the table lacks (and of no other
        # region); --expected-values-source computed uses every computed row.
        ratings = ExpectedValuesService(store, service.ratings_source)
        eu = await ratings.expected_values("eu")
        assert eu.source_of(new_tank) == "computed" and eu.computed_version == doc["version"]
        assert eu.get(known[0]) == table.get(known[0])
        assert (await ratings.expected_values("na")).get(new_tank) is None
        garage = [known[0], new_tank]
        tanks = [
            {
                "tank_id": t,
                "battles": 100,
                "wins": 50,
                "damage_dealt": 100_000,
                "frags": 80,
                "spotted": 100,
                "dropped_capture_points": 60,
                "capture_points": 0,
            }
            for t in garage
        ]
        assert compute_ratings(tanks[0], tanks, eu, {})["expected_values"]["source"] == "mixed"
        assert account_wn8(tanks, eu) != account_wn8(tanks, table)  # the new tank counts
        everywhere = await ExpectedValuesService(store, service.ratings_source, source="computed").expected_values("eu")
        assert everywhere.source_of(known[0]) == "computed"
        assert compute_ratings(tanks[0], tanks, everywhere, {})["expected_values"]["source"] == "computed"
        assert doc["panel_size"] is None and doc["gaps"]["panel"] == [] == doc["computed"]["panel"]

        # With a random panel (every other account), a row is the panel's where its accounts meet the
        # minimums for the tank: the new tank's row is fitted over the panel's players of it alone.
        frame = list(range(500_200_000, 500_200_400, 2))
        await store.panels.save({"_id": "eu", "frame": frame, "members": len(frame), "refreshed_at": time.time()})
        await service.build(force=True)
        doc = await store.expected_tables.latest("eu")
        in_panel = sum(1 for a in frame if a % 3 == 0)
        assert doc["panel_size"] == len(frame) and doc["gaps"]["panel"] == [new_tank]
        assert doc["gaps"]["rows"][str(new_tank)][5:] == [in_panel, in_panel * 600] and in_panel < players
        assert new_tank in doc["computed"]["panel"]
        answer = await ExpectedValuesService(store, service.ratings_source).document("eu", "effective", None)
        populations = {row["IDNum"]: row["population"] for row in answer["data"]}
        assert populations[new_tank] == "panel" and populations[known[0]] is None  # a loaded row
        assert answer["computed"]["panel_size"] == len(frame) and answer["computed"]["gaps"]["panel_tanks"] == 1
    finally:
        client.close()


@settings(max_examples=15, deadline=None)
@given(st.lists(st.sampled_from(["2026-11-20", "2026-11-21", "2026-11-22"]), min_size=1, max_size=6))
def test_saving_expected_tables_in_any_order_and_twice_keeps_each_and_points_at_the_newest(mongo_uri, days):
    """The job may store a day's table twice (a forced rebuild, a taken-over run) or an older day
    after a newer one: each version is stored once as written, and `latest` is the newest day."""
    from store.expected import ExpectedTables, table_id

    def doc(day: str) -> dict:
        version = f"{day}+ev1"
        return {
            "_id": table_id("na", version),
            "r": "na",
            "version": version,
            "through": day,
            "x": ExpectedTables.expiry(day),
            "gaps": {"passes": 1, "converged": True, "rows": {"999001": [1.0, 2.0, 3.0, 4.0, 50.0, 20, 1000]}},
        }

    async def run() -> None:
        client, _, store = await new_store(mongo_uri)  # a fresh database per example
        for day in days:
            await store.expected_tables.save(doc(day))
        for day in set(days):
            assert await store.expected_tables.get("na", f"{day}+ev1") == doc(day)
        assert (await store.expected_tables.latest("na"))["through"] == max(days)
        assert await store.expected_tables.collection.count_documents({"r": "na"}) == len(set(days)) + 1
        client.close()

    asyncio.run(run())
