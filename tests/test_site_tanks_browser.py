"""The site's tank statistics (issue 23, item 7) in a real headless Chromium: the tanks page, a
tank's page and a player's standing, over population tables the daily job really built.

Each test writes what the tracker writes per account and day (tank_changes), runs the job
(PopulationService.build) and reads the real endpoints; the last one also tracks a real player
with the tracker (tests/helpers.py seed_tracking). Fixtures and helpers are those of
tests/test_site_browser.py.
"""

from __future__ import annotations

import asyncio
import random
import re
import time

import pytest

from server.domain.days import days_before
from server.domain.records import pack
from server.services.population import PopulationService, newest_complete_day
from store.constants import TANK_COUNTERS
from store.population import TankChanges
from store.tracker import tracked_id
from tests import test_site_browser as site
from tests.test_site_browser import Browser, get_json, num, only_failed_loads, site_url, wait_ready

chromium_path = site.chromium_path  # the session fixtures of the site's browser tests
async_playwright = site.async_playwright

T34, PZ4, T14, TYPE59, IS, TIGER = 1, 17, 33, 49, 513, 529  # tank ids of the simulator's encyclopedia (2018 list)
# tank: (players, battles per day (low, high), damage per battle): T-34, IS and Tiger I pass every
# minimum; Type 59's players are enough for its figures but none has the 10 battles its
# percentiles need; Pz. IV and T14 have too few players for any figure.
POPULATION = {
    T34: (30, (35, 45), 600),
    IS: (24, (4, 6), 1300),
    TIGER: (22, (4, 6), 1100),
    TYPE59: (21, (2, 3), 1500),
    PZ4: (15, (1, 2), 500),
    T14: (3, (2, 2), 700),
}
FIRST_ACCOUNT = 500_100_000


def battle_row(rng: random.Random, battles: int, damage: float) -> list[int]:
    """Counters (TANK_COUNTERS order) of `battles` battles at about `damage` per battle."""
    wins = rng.randint(battles // 3, battles)
    shots = 8 * battles
    row = {
        "battles": battles,
        "wins": wins,
        "losses": battles - wins,
        "draws": 0,
        "damage_dealt": int(battles * damage * rng.uniform(0.6, 1.4)),
        "frags": rng.randint(0, 2 * battles),
        "spotted": rng.randint(0, 2 * battles),
        "dropped_capture_points": 0,
        "capture_points": 0,
        "xp": battles * rng.randint(300, 900),
        "survived_battles": rng.randint(0, battles),
        "shots": shots,
        "hits": rng.randint(shots // 2, shots),
        "damage_received": battles * 600,  # fixed: the random draws above stay as they were
        "stun_assisted_damage": 0,
    }
    return [row[name] for name in TANK_COUNTERS]


async def build_population(app, population, seed=3):
    """Three days of tank changes for made-up eu accounts (accounts 0..n-1 of a tank's n players
    play it), their tracked careers (the profile standing's distribution), then the daily job."""
    services, store = app.settings["services"], app.settings["store"]
    through = newest_complete_day(time.time())
    rng = random.Random(seed)
    played: dict[int, dict[int, list[int]]] = {}
    for k in range(3):
        docs = []
        for n in range(max(players for players, _, _ in population.values())):
            account_id = FIRST_ACCOUNT + n
            rows = {
                tank_id: battle_row(rng, rng.randint(*battles), damage)
                for tank_id, (players, battles, damage) in population.items()
                if n < players
            }
            docs.append(TankChanges.change("eu", account_id, days_before(through, k), pack(rows)))
            for tank_id, row in rows.items():
                total = played.setdefault(account_id, {}).setdefault(tank_id, [0] * len(TANK_COUNTERS))
                for i, value in enumerate(row):
                    total[i] += value
        await store.population.changes.save(docs)
    await store.tracked.collection.insert_many(
        [
            {
                "_id": tracked_id("eu", a),
                "region": "eu",
                "account_id": a,
                "state": pack({t: [5 * v for v in row] for t, row in tanks.items()}),
            }
            for a, tanks in played.items()
        ]
    )
    job = PopulationService(store, services.ratings_source)
    job.pause = 0
    await job.build(force=True)


async def row_ids(page, table="#tank-stats-table") -> list[int]:
    return [
        int(v) for v in await page.locator(f"{table} tbody tr").evaluate_all("rows => rows.map(r => r.dataset.tankId)")
    ]


async def wait_rows(page, ids):
    await page.wait_for_function(
        "ids => { const t = document.querySelector('#tanks-out:not([aria-busy]) #tank-stats-table');"
        " return !!t && JSON.stringify([...t.tBodies[0].rows].map(r => Number(r.dataset.tankId))) === JSON.stringify(ids); }",
        arg=ids,
    )


async def stats(http_client, base_url, query):
    response, body = await get_json(http_client, base_url, f"/api/v1/tanks/stats?{query}")
    assert response.code == 200, body
    return body["data"]


# --------------------------------------------------------------------------------------------
@pytest.mark.gen_test(timeout=60)
async def test_tanks_page_lists_sorts_filters_and_pages_the_built_table(
    app, http_client, base_url, http_port, async_playwright, chromium_path, artifacts_dir
):
    """The table is the API's answer row for row; a column header asks the API for that order
    (both ways, nulls last), the filters and the pages ask for theirs; a figure below the minimum
    sample is an em dash whose title says the minimum and the count."""
    await build_population(app, POPULATION)
    first = await stats(http_client, base_url, "region=eu&days=30")
    assert [t["tank_id"] for t in first["tanks"]] == [T34, IS, TIGER, TYPE59, PZ4, T14]  # battles, most first
    rows = {t["tank_id"]: t for t in first["tanks"]}
    assert rows[PZ4]["win_rate"] is None and rows[TYPE59]["win_rate"] is not None
    assert rows[TYPE59]["damage_percentiles"] is None and rows[IS]["damage_percentiles"] is not None

    async with Browser(async_playwright, chromium_path) as browser:
        page = await browser.page()
        await page.goto(site_url(http_port))
        await wait_ready(page)
        await page.click("#tab-tanks")
        await wait_rows(page, [T34, IS, TIGER, TYPE59, PZ4, T14])
        assert await page.locator("#tab-tanks").get_attribute("aria-selected") == "true"
        assert await page.locator("#form-tanks select[name=region]").input_value() == "eu"
        assert await page.locator("#form-tanks select[name=days]").input_value() == "30"
        assert "6 tanks" in await page.locator("#tank-stats-summary").inner_text()
        note = await page.locator("#tanks-population").inner_text()
        assert "not a random sample" in note and "at least 20 players" in note and "10 battles" in note
        assert await page.locator("#tank-stats-table th[data-sort=battles]").get_attribute("aria-sort") == "descending"

        # Figures as the API gives them; below the minimum sample an em dash that says why.
        t34 = page.locator(f"#tank-stats-table tr[data-tank-id='{T34}']")
        assert await t34.locator("th.tank-name").inner_text() == "T-34 USSR"
        for key in ("players", "battles", "avg_damage", "avg_xp"):
            assert await t34.locator(f"[data-col={key}]").inner_text() == num(rows[T34][key]), key
        assert await t34.locator("[data-col=win_rate]").inner_text() == f"{num(rows[T34]['win_rate'])} %"
        for p in ("p50", "p65", "p85", "p95"):
            assert await t34.locator(f"[data-col=damage_{p}]").inner_text() == num(rows[T34]["damage_percentiles"][p])
        pz4 = page.locator(f"#tank-stats-table tr[data-tank-id='{PZ4}']")
        assert await pz4.locator("[data-col=players]").inner_text() == "15"
        dash = pz4.locator("[data-col=win_rate] abbr.null-figure")
        assert await dash.inner_text() == "—"
        assert "fewer than 20 players" in await dash.get_attribute("title")
        assert "(15)" in await dash.get_attribute("title")
        type59 = page.locator(f"#tank-stats-table tr[data-tank-id='{TYPE59}']")
        assert await type59.locator("[data-col=win_rate]").inner_text() == f"{num(rows[TYPE59]['win_rate'])} %"
        title = await type59.locator("[data-col=damage_p85] abbr").get_attribute("title")
        assert "at least 10 battles" in title and "(0)" in title
        await page.locator("#explorer").screenshot(path=str(artifacts_dir / "site-tanks.png"))

        # Sorting asks the API: average damage, most first, then least first; nulls last both ways.
        await page.click("#tank-stats-table button.sort[data-sort=avg_damage]")
        want = await stats(http_client, base_url, "region=eu&days=30&sort=avg_damage&order=desc")
        await wait_rows(page, [t["tank_id"] for t in want["tanks"]])
        assert await row_ids(page) != [T34, IS, TIGER, TYPE59, PZ4, T14]
        assert "sort=avg_damage" in await page.evaluate("location.hash")
        header = page.locator("#tank-stats-table th[data-sort=avg_damage]")
        assert await header.get_attribute("aria-sort") == "descending"
        assert await page.evaluate("document.activeElement.dataset.sort") == "avg_damage"  # focus kept
        await page.click("#tank-stats-table button.sort[data-sort=avg_damage]")
        want = await stats(http_client, base_url, "region=eu&days=30&sort=avg_damage&order=asc")
        ascending = [t["tank_id"] for t in want["tanks"]]
        await wait_rows(page, ascending)
        assert ascending[-2:] == [PZ4, T14]  # no average below 20 players: last either way
        assert await header.get_attribute("aria-sort") == "ascending"
        await page.click("#tank-stats-table button.sort[data-sort=damage_p85]")
        want = await stats(http_client, base_url, "region=eu&days=30&sort=damage_p85&order=desc")
        by_p85 = [t["tank_id"] for t in want["tanks"]]
        assert set(by_p85[:3]) == {T34, IS, TIGER} and by_p85[3:] == [PZ4, T14, TYPE59]  # nulls: in tank_id order
        await wait_rows(page, by_p85)

        # Filters: a type, then a nation, then any type again (the chosen sort stays).
        await page.select_option("#form-tanks select[name=type]", "heavyTank")
        await wait_rows(page, [t for t in by_p85 if t in (IS, TIGER, T14)])
        assert "heavy tanks" in await page.locator("#tank-stats-summary").inner_text()
        await page.fill("#form-tanks input[name=nation]", "germany")
        await page.press("#form-tanks input[name=nation]", "Enter")
        await wait_rows(page, [TIGER])
        await page.select_option("#form-tanks select[name=type]", "")
        want = await stats(http_client, base_url, "region=eu&days=30&nation=germany&sort=damage_p85&order=desc")
        assert [t["tank_id"] for t in want["tanks"]] == [TIGER, PZ4]
        await wait_rows(page, [TIGER, PZ4])
        assert "nation=germany" in await page.evaluate("location.hash")
        await page.fill("#form-tanks input[name=nation]", "")
        await page.select_option("#form-tanks select[name=tier]", "5")
        await wait_rows(page, [T34, PZ4, T14])  # tier 5; no percentiles for the last two

        # Pages of two, most players first.
        await page.goto(site_url(http_port, "#tanks/eu/30/sort=players&limit=2"))
        want = await stats(http_client, base_url, "region=eu&days=30&sort=players&limit=2&offset=2")
        await wait_rows(page, [T34, IS])
        assert await page.locator("#tank-stats-page").inner_text() == "Tanks 1–2 of 6"
        assert await page.locator("button[data-page=prev]").is_disabled()
        await page.click("button[data-page=next]")
        await wait_rows(page, [t["tank_id"] for t in want["tanks"]])
        assert await page.locator("#tank-stats-page").inner_text() == "Tanks 3–4 of 6"
        await page.go_back()
        await wait_rows(page, [T34, IS])

        # A tank opens its page.
        await page.click(f"#tank-stats-table tr[data-tank-id='{IS}'] th a")
        await page.wait_for_function(f"location.hash === '#tank/eu/{IS}/30'")
        await page.locator("#tank-figures").wait_for()
        assert await page.locator("#tank-title").inner_text() == "IS"
        assert await page.locator("#tab-tanks").get_attribute("aria-selected") == "true"

        # Phone width: the table scrolls in its own box.
        await page.go_back()
        await page.set_viewport_size({"width": 390, "height": 844})
        await page.locator("#tank-stats-table").wait_for()
        await page.wait_for_function("document.documentElement.scrollWidth <= 391")
        assert browser.errors == [], browser.errors


@pytest.mark.gen_test(timeout=60)
async def test_tank_page_draws_its_series_and_percentile_charts(
    app, http_client, base_url, http_port, async_playwright, chromium_path, artifacts_dir
):
    """A tank's page: its figures and sample, the daily series (one point a day, the figure
    switchable), the damage and WN8 percentiles placed at their percentile; a tank below the
    minimum sample explains its empty charts; an unknown tank is the API's error."""
    await build_population(app, POPULATION)
    _, body = await get_json(http_client, base_url, f"/api/v1/tank/{T34}/eu?days=30")
    tank = body["data"]
    series = tank["series"]
    assert len(series) == 3 and tank["percentiles"]["wn8"] is not None

    async with Browser(async_playwright, chromium_path) as browser:
        page = await browser.page()
        await page.goto(site_url(http_port, f"#tank/eu/{T34}/30"))
        await page.locator("#tank-series-chart svg").wait_for()
        assert await page.locator("#tank-title").inner_text() == "T-34"
        assert await page.locator("#tank-period button[data-days='30']").get_attribute("aria-pressed") == "true"
        for key in ("players", "battles", "avg_damage", "avg_frags"):
            assert await page.locator(f"#tank-figures [data-field={key}] .tile-value").inner_text() == num(tank[key])
        assert await page.locator("#tank-figures [data-field=win_rate] .tile-value").inner_text() == (
            f"{num(tank['win_rate'])} %"
        )
        sample = await page.locator("#tank-sample").inner_text()
        assert (
            f"{tank['sample']['players']} players" in sample and f"{num(tank['sample']['battles'])} battles" in sample
        )
        assert f"{tank['sample']['qualified']} of these players with at least 10 battles" in sample
        assert "not a random sample" in await page.locator("#panel-tank .population-note").inner_text()

        # The series: every day of the 30, a day nobody played as 0 players; the figure switches.
        points = page.locator("#tank-series-chart .series circle")
        assert await points.count() == 30
        drawn = dict(
            await points.evaluate_all("cs => cs.map(c => [c.dataset.date, Number(c.dataset.value)])")
        )  # fmt: skip
        assert {d: v for d, v in drawn.items() if v} == {p["date"]: p["players"] for p in series}
        await page.click("#tank-series-metric button[data-metric=avg_damage]")
        await page.wait_for_function("document.querySelectorAll('#tank-series-chart .series circle').length === 3")
        drawn = await points.evaluate_all("cs => cs.map(c => [c.dataset.date, Number(c.dataset.value)])")
        assert drawn == [[p["date"], pytest.approx(p["avg_damage"])] for p in series]

        # Percentiles 10..99, each at its percentile along the axis (p60 -> p65 is half of p50 -> p60).
        for chart, grid in (("damage", tank["percentiles"]["damage"]), ("wn8", tank["percentiles"]["wn8"])):
            dots = page.locator(f"#tank-{chart}-chart .series circle")
            values = await dots.evaluate_all("cs => cs.map(c => [c.dataset.date, Number(c.dataset.value)])")
            assert [k for k, _ in values] == [f"p{p}" for p in (10, 20, 30, 40, 50, 60, 65, 70, 80, 85, 90, 95, 99)]
            assert [v for _, v in values] == [pytest.approx(grid[k]) for k, _ in values], chart
            cx = await dots.evaluate_all("cs => cs.map(c => Number(c.getAttribute('cx')))")
            assert cx == sorted(cx) and (cx[6] - cx[5]) == pytest.approx((cx[5] - cx[4]) / 2, abs=0.5)
        await page.locator("#explorer").screenshot(path=str(artifacts_dir / "site-tank.png"))
        await page.set_viewport_size({"width": 390, "height": 844})  # phone width: nothing overflows
        await page.wait_for_function("document.documentElement.scrollWidth <= 391")
        await page.set_viewport_size({"width": 1280, "height": 900})

        # Another period asks the API again.
        await page.click("#tank-period button[data-days='7']")
        await page.wait_for_function(f"location.hash === '#tank/eu/{T34}/7'")
        await page.wait_for_function(
            "document.querySelector('#tank-period button[data-days=\"7\"]')?.getAttribute('aria-pressed') === 'true'"
            " && !!document.querySelector('#tank-series-chart svg')"
        )
        assert "Last 7 days" in await page.locator("#panel-tank .tank-summary").inner_text()

        # Pz. IV: 15 players, below every minimum: dashes and charts that say why they are empty.
        await page.goto(site_url(http_port, f"#tank/eu/{PZ4}/30"))
        await page.locator("#tank-damage-chart .chart-empty").wait_for()
        dash = page.locator("#tank-figures [data-field=avg_damage] abbr.null-figure")
        assert await dash.inner_text() == "—" and "fewer than 20 players" in await dash.get_attribute("title")
        assert await page.locator("#tank-figures [data-field=players] .tile-value").inner_text() == "15"
        empty = await page.locator("#tank-damage-chart .chart-empty").inner_text()
        assert "fewer than 20 players with at least 10 battles" in empty
        assert "fewer than 20 players" in await page.locator("#tank-wn8-chart .chart-empty").inner_text()

        # A tank nobody tracked played: the API's 404, in plain words, with the way back.
        await page.goto(site_url(http_port, "#tank/eu/999999/30"))
        error = page.locator("#tank-out .error")
        await error.wait_for()
        assert await error.locator(".error-code").inner_text() == "no_statistics"
        assert "HTTP 404" in await error.inner_text()
        assert "no tracked player played it" in await error.locator(".error-plain").inner_text()
        await page.click("#tank-back")
        await page.locator("#tank-stats-table").wait_for()
        assert only_failed_loads(browser.errors, {404}) == [], browser.errors


@pytest.fixture
def tracked_player(io_loop, app, fast_upstream_sim):
    """Ten days of the real tracker's passes over a grinder (hundreds of battles a week)."""
    from scripts.upstream_sim.ids import existing_accounts
    from scripts.upstream_sim.world import World
    from tests.helpers import EXPECTED_VALUES_FILE, seed_tracking

    world = World(expected_values=EXPECTED_VALUES_FILE, profile_cache=1_000)
    grinder = next(a for a in existing_accounts("eu", 400, start=500_600_000) if world.profile("eu", a).grinder)
    seed_tracking(io_loop, app, fast_upstream_sim, {"eu": [grinder]}, 10)
    return grinder


@pytest.mark.gen_test(timeout=90)
async def test_player_standing_on_the_profile_recents_and_tank_table(
    app, http_client, base_url, http_port, async_playwright, chromium_path, artifacts_dir, tracked_player
):
    """A tracked player among made-up players of its own tanks: the profile's WN8 percentile, the
    recent periods' and each tank's percentiles are the API's, and a tank links to its page."""
    player = tracked_player
    # The live lookup of the profile is also today's visit: let its write land first.
    response, _ = await get_json(http_client, base_url, f"/api/v1/player/{player}/eu")
    assert response.code == 200
    tags = []
    while len(tags) < 2 or tags[-1] != tags[-2]:
        assert len(tags) < 10, tags
        await asyncio.sleep(1)
        response, mine = await get_json(http_client, base_url, f"/api/v1/player/{player}/eu/tanks?days=90")
        tags.append(response.headers.get("ETag"))
    played = sorted(mine["data"]["tanks"], key=lambda t: -t["period"]["battles"])[:3]
    assert played and played[-1]["period"]["battles"] >= 10, played
    # Around 25 made-up players of each of these tanks, with damage about the player's.
    population = {
        t["tank_id"]: (25, (12, 16), max(100.0, t["period"]["avg_damage"] or 0)) for t in played
    }  # fmt: skip
    await build_population(app, population, seed=9)

    deadline = time.monotonic() + 20
    while True:  # the rating follows the live fetch; a hot copy of the profile lives 5 s
        _, profile = await get_json(http_client, base_url, f"/api/v1/player/{player}/eu")
        if isinstance(profile["data"]["ratings"].get("wn8_percentile"), int):
            break
        assert time.monotonic() < deadline, profile["data"]["ratings"]
        await asyncio.sleep(0.5)
    _, history = await get_json(http_client, base_url, f"/api/v1/player/{player}/eu/history?days=90")
    _, tanks = await get_json(http_client, base_url, f"/api/v1/player/{player}/eu/tanks?days=30")
    rows = tanks["data"]["tanks"]
    placed = [r for r in rows if r["standing"] and r["standing"]["damage_percentile"] is not None]
    assert placed, rows

    async with Browser(async_playwright, chromium_path) as browser:
        page = await browser.page()
        await page.goto(site_url(http_port, f"#player/eu/{player}"))
        tile = page.locator("#wn8-standing")
        await tile.wait_for()
        value = profile["data"]["ratings"]["wn8_percentile"]
        assert await tile.locator(".tile-value").inner_text() == str(value)
        assert f"better than {value} % of tracked EU players" in await tile.locator(".tile-note").inner_text()
        assert "wn8_percentile" not in (await page.locator("#player-profile").inner_text()).lower()

        for key in ("7d", "30d"):
            period = history["data"]["deltas"][key]["period"]
            cell = page.locator(
                f"#player-recents section.recent[data-period='{key}'] .fig[data-field=wn8_percentile] dd"
            )
            await cell.wait_for()
            want = "—" if period["wn8_percentile"] is None else str(period["wn8_percentile"])
            assert await cell.inner_text() == want, (key, period)
            title = await cell.locator("[title]").get_attribute("title")
            assert (f"Better than {want} %" if want != "—" else "enough battles") in title, (key, title)

        # The tank table: a column per percentile, the API's figure or a dash that says why.
        await page.locator("#tank-table td[data-col=standing_damage]").first.wait_for()
        by_id = {r["tank_id"]: r for r in rows}
        ids: list[int] = []
        next_page = page.locator("#player-tanks nav.pager button[data-page=next]")
        while True:  # every page of the table (25 rows each)
            shown = [
                int(v)
                for v in await page.locator("#tank-table tbody tr").evaluate_all("rs => rs.map(r => r.dataset.tankId)")
            ]
            ids += shown
            for key, field in (("standing_damage", "damage_percentile"), ("standing_wn8", "wn8_percentile")):
                texts = await page.locator(f"#tank-table tbody tr [data-col={key}]").all_inner_texts()
                want = [
                    "—"
                    if not by_id[i]["standing"] or by_id[i]["standing"][field] is None
                    else str(by_id[i]["standing"][field])
                    for i in shown
                ]
                assert texts == want, key
            if not await next_page.count() or await next_page.is_disabled():
                break
            await next_page.click()
        assert sorted(ids) == sorted(by_id)
        note = await page.locator("#standing-note").inner_text()
        assert "30-day tank statistics" in note and "not a random sample" in note
        await page.click("#tank-table button.sort[data-sort=standing_damage]")
        texts = await page.locator("#tank-table tbody tr [data-col=standing_damage]").all_inner_texts()
        numbers = [int(t) for t in texts if t != "—"]
        assert numbers == sorted(numbers, reverse=True) and texts[: len(numbers)] == [str(n) for n in numbers]
        # The sort is over the whole table: its first page starts with the highest percentile of all.
        assert numbers[0] == max(r["standing"]["damage_percentile"] for r in placed)
        await page.locator("#explorer").screenshot(path=str(artifacts_dir / "site-player-standing.png"))

        # Each tank links to its page over the matching period.
        shown = await row_ids(page, "#tank-table")
        first = next(r for r in placed if r["tank_id"] in shown)
        link = page.locator(f"#tank-table tr[data-tank-id='{first['tank_id']}'] th.tank-name a")
        assert await link.get_attribute("href") == f"#tank/eu/{first['tank_id']}/30"
        await link.click()
        await page.locator("#tank-figures").wait_for()
        assert await page.locator("#tank-title").inner_text() == re.sub(r"\s+", " ", first["name"])
        assert browser.errors == [], browser.errors
