"""The site's marks of excellence (issue 33, item 7) in a real headless Chromium: the marks table
(#marks/...), a tank page's marks and their daily series, and a player's tank table with its
progress bars toward the next mark and the group-by selector, over thresholds the daily job really
built.

Each test writes what the tracker writes per account and day (tank_changes, with the account's
assistance change `s`), runs the job (PopulationService.build) and reads the real endpoints; the
player's test also tracks a real player with the tracker (tests/helpers.py seed_tracking).
Fixtures and helpers are those of tests/test_site_browser.py.
"""

from __future__ import annotations

import asyncio
import random
import time

import pytest

from server.domain.days import days_before
from server.domain.records import pack
from server.services.population import PopulationService, newest_complete_day
from store.constants import TANK_COUNTERS
from store.population import TankChanges
from tests import test_site_browser as site
from tests.test_site_browser import Browser, get_json, num, only_failed_loads, site_url, wait_ready

chromium_path = site.chromium_path  # the session fixtures of the site's browser tests
async_playwright = site.async_playwright

T34, PZ4, IS, TIGER = 1, 17, 513, 529  # tank ids of the simulator's encyclopedia: tiers 5, 5, 7, 7
FIRST_ACCOUNT = 500_200_000
WEEK = 7 * 86400
MARKS = ("first", "second", "third", "top")


def battle_row(rng: random.Random, battles: int, damage: float) -> list[int]:
    """Counters (TANK_COUNTERS order, every one of them) of `battles` battles at about `damage` per battle."""
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
        "damage_received": int(battles * damage * rng.uniform(0.5, 1.2)),
        "stun_assisted_damage": 0,
    }
    return [row[name] for name in TANK_COUNTERS]


async def write_changes(store, population, days, seed, boost=1.0):
    """A change per made-up eu account and day of `days` (days before the newest complete day),
    with the account's assistance change (`s`: its battles that day, spotting and tracking about a
    fifth of the damage): accounts 0..n-1 of a tank's n players play it. `population`: {tank_id:
    (players, battles per day (low, high), damage per battle)}."""
    through = newest_complete_day(time.time())
    rng = random.Random(seed)
    for k in days:
        docs = []
        for n in range(max(players for players, _, _ in population.values())):
            rows = {
                tank_id: battle_row(rng, rng.randint(*battles), damage * boost)
                for tank_id, (players, battles, damage) in population.items()
                if n < players
            }
            played = sum(row[0] for row in rows.values())
            damage = sum(row[TANK_COUNTERS.index("damage_dealt")] for row in rows.values())
            assist = [played, int(damage * rng.uniform(0.1, 0.3)), int(damage * rng.uniform(0.05, 0.15))]
            docs.append(TankChanges.change("eu", FIRST_ACCOUNT + n, days_before(through, k), pack(rows), assist=assist))
        await store.population.changes.save(docs)


async def build(app, clock=None):
    services, store = app.settings["services"], app.settings["store"]
    job = PopulationService(store, services.ratings_source, clock=clock or time.time)
    job.pause = 0
    await job.build(force=True)


async def data(http_client, base_url, path):
    response, body = await get_json(http_client, base_url, path)
    assert response.code == 200, (path, body)
    return body["data"]


def number(text: str) -> float:
    return float(text.replace(",", "").replace("−", "-").replace("+", "").replace("±", ""))


def signed(value: float) -> str:
    """A change as the site writes it (render.js fmtValue of a *_change key)."""
    return ("+" if value > 0 else "−" if value < 0 else "±") + num(abs(value))


async def check_marks_rows(page, ids, rows):
    """The marks cells of the player's tank table's rows on screen against the API's rows."""
    for tank_id in ids:
        row, m = page.locator(f"#tank-table tr[data-tank-id='{tank_id}']"), rows[tank_id]["marks"]
        cell = row.locator("[data-col=marks_progress]")
        if m is None or m["next"] is None:
            assert await cell.locator(".mark-progress").count() == 0
            assert await cell.locator("abbr").count() == 1, tank_id
            if m is None:
                assert await row.locator("[data-col=marks_combined]").inner_text() == "—"
            continue
        assert await row.locator("[data-col=marks_combined]").inner_text() == num(m["combined_damage"])
        assert await row.locator("[data-col=marks_percentile]").inner_text() == str(m["percentile"])
        bar = cell.locator(".mark-progress")
        ratio = await bar.evaluate(
            "p => p.querySelector('.mark-fill').getBoundingClientRect().width / p.querySelector('.mark-bar').clientWidth"
        )
        text = await bar.locator(".mark-text").inner_text()
        stars = "★" * m["estimated_marks"] + "☆" * (3 - m["estimated_marks"])
        if m["next"]["mark"] is None:
            assert ratio == pytest.approx(1, abs=0.01) and text == f"{stars} 3 marks", tank_id
        else:
            want = m["combined_damage"] / m["next"]["combined_damage"]
            assert ratio == pytest.approx(want, abs=0.01), (tank_id, m)
            ordinal = {1: "1st", 2: "2nd", 3: "3rd"}[m["next"]["mark"]]
            assert text == f"{stars} {num(m['next']['needed'])} to {ordinal}", tank_id
            assert float(await bar.get_attribute("data-target")) == pytest.approx(m["next"]["combined_damage"])


async def row_ids(page, table="#marks-table") -> list[int]:
    return [
        int(v) for v in await page.locator(f"{table} tbody tr").evaluate_all("rows => rows.map(r => r.dataset.tankId)")
    ]


async def wait_rows(page, ids):
    await page.wait_for_function(
        "ids => { const t = document.querySelector('#marks-out:not([aria-busy]) #marks-table');"
        " return !!t && JSON.stringify([...t.tBodies[0].rows].map(r => Number(r.dataset.tankId))) === JSON.stringify(ids); }",
        arg=ids,
    )


# --------------------------------------------------------------------------------------------
@pytest.mark.gen_test(timeout=90)
async def test_marks_table_sorts_filters_and_opens_the_tank_page_with_its_marks(
    app, http_client, base_url, http_port, async_playwright, chromium_path, artifacts_dir
):
    """Before the first build the page says so (the API's 404 in plain words). Then, over two builds
    a week apart: the table is the API's answer row for row, with monotone thresholds and each one's
    7-day change; a tank below the minimum sample shows dashes that say why, a tier IV tank is not
    listed; a column header asks the API for that order, the filters for theirs; a tank's page shows
    its thresholds, sample and their daily series, and says why a tank has none."""
    services = app.settings["services"]
    vehicles = await services.ratings_source.vehicles("eu")
    assert [vehicles[t]["tier"] for t in (T34, PZ4, IS, TIGER)] == [5, 5, 7, 7]
    low = next(t for t, v in sorted(vehicles.items()) if v["tier"] == 4)
    # tank: (players, battles per day, damage per battle): T-34, IS and Tiger I have thresholds;
    # Pz. IV's 14 players count but are too few for them; the tier IV tank has no marks at all.
    population = {T34: (30, (5, 7), 700), IS: (26, (4, 6), 1400), TIGER: (24, (4, 6), 1200), PZ4: (14, (4, 6), 600)}
    population[low] = (25, (4, 6), 400)

    async with Browser(async_playwright, chromium_path) as browser:
        page = await browser.page()
        await page.goto(site_url(http_port, "#marks/eu"))
        error = page.locator("#marks-out .error")
        await error.wait_for()
        assert await error.locator(".error-code").inner_text() == "no_statistics"
        assert "HTTP 404" in await error.inner_text()
        assert "No marks of excellence yet" in await error.locator(".error-plain").inner_text()
        assert await page.locator("#tab-marks").get_attribute("aria-selected") == "true"

        # A week ago's build (days 7-9 before the newest complete day), then today's (days 0-2
        # stronger): every threshold moved over the 7 days.
        await write_changes(app.settings["store"], population, (7, 8, 9), seed=5)
        await write_changes(app.settings["store"], population, (0, 1, 2), seed=6, boost=1.2)
        now = time.time()
        await build(app, clock=lambda: now - WEEK)
        await build(app)

        marks = await data(http_client, base_url, "/api/v1/tanks/marks?region=eu")
        assert marks["sort"] == "third" and marks["order"] == "desc"
        rows = {t["tank_id"]: t for t in marks["tanks"]}
        assert set(rows) == {T34, IS, TIGER, PZ4}  # tier V and up only
        assert rows[PZ4]["marks"] is None and rows[PZ4]["sample"]["players"] == 14
        for tank_id in (T34, IS, TIGER):
            assert rows[tank_id]["marks"] is not None and rows[tank_id]["change_7d"] is not None, rows[tank_id]
        order = [t["tank_id"] for t in marks["tanks"]]
        assert order[-1] == PZ4  # no thresholds: last

        # The error's retry asks the server again (the 404 may sit in the browser's cache a minute).
        await page.click("#marks-out .error button")
        await wait_rows(page, order)
        await page.goto(site_url(http_port))
        await wait_ready(page)
        await page.click("#tab-marks")
        await wait_rows(page, order)
        assert await page.locator("#tab-marks").get_attribute("aria-selected") == "true"
        assert await page.locator("#form-marks select[name=region]").input_value() == "eu"
        assert "4 tanks" in await page.locator("#marks-summary").inner_text()
        note = page.locator("#marks-estimate")
        assert "An estimate" in await note.inner_text() and "20 such players" in await note.inner_text()
        assert await note.locator("a.method-link").get_attribute("href") == "#endpoint-tank_marks"
        assert await note.locator("code").inner_text() == marks["method"]
        assert await page.locator("#marks-table th[data-sort=third]").get_attribute("aria-sort") == "descending"

        # The thresholds as the API gives them, monotone, each with its 7-day change.
        for tank_id in (T34, IS, TIGER):
            row = page.locator(f"#marks-table tr[data-tank-id='{tank_id}']")
            shown = [number(await row.locator(f"[data-col={k}] .mark-value").inner_text()) for k in MARKS]
            assert shown == sorted(shown), (tank_id, shown)
            for key in MARKS:
                assert await row.locator(f"[data-col={key}] .mark-value").inner_text() == num(
                    rows[tank_id]["marks"][key]
                )
                change = rows[tank_id]["change_7d"][key]
                assert await row.locator(f"[data-col={key}] .mark-change").inner_text() == signed(change), key
            for key in ("players", "battles"):
                assert await row.locator(f"[data-col={key}]").inner_text() == num(rows[tank_id]["sample"][key])
        pz4 = page.locator(f"#marks-table tr[data-tank-id='{PZ4}']")
        dash = pz4.locator("[data-col=first] abbr.null-figure")
        assert await dash.inner_text() == "—"
        title = await dash.get_attribute("title")
        assert "fewer than 20 players with at least 10 battles" in title and "(14)" in title
        assert await pz4.locator(".mark-change").count() == 0
        await page.locator("#explorer").screenshot(path=str(artifacts_dir / "site-marks.png"))

        # Sorting asks the API: the 1st mark, most first, then least first; then players.
        for sort, direction in (("first", "desc"), ("first", "asc"), ("players", "desc")):
            await page.click(f"#marks-table button.sort[data-sort={sort}]")
            want = await data(http_client, base_url, f"/api/v1/tanks/marks?region=eu&sort={sort}&order={direction}")
            await wait_rows(page, [t["tank_id"] for t in want["tanks"]])
            assert f"sort={sort}" in await page.evaluate("location.hash")
            aria = "descending" if direction == "desc" else "ascending"
            assert await page.locator(f"#marks-table th[data-sort={sort}]").get_attribute("aria-sort") == aria
            assert await page.evaluate("document.activeElement.dataset.sort") == sort  # focus kept
        ascending = await data(http_client, base_url, "/api/v1/tanks/marks?region=eu&sort=first&order=asc")
        assert [t["tank_id"] for t in ascending["tanks"]][-1] == PZ4  # nulls last either way

        # Filters: heavy tanks, then tier V of any type (the sort by players stays).
        await page.select_option("#form-marks select[name=type]", "heavyTank")
        want = await data(http_client, base_url, "/api/v1/tanks/marks?region=eu&type=heavyTank&sort=players&order=desc")
        assert {t["tank_id"] for t in want["tanks"]} == {IS, TIGER}
        await wait_rows(page, [t["tank_id"] for t in want["tanks"]])
        assert "heavy tanks" in await page.locator("#marks-summary").inner_text()
        await page.select_option("#form-marks select[name=type]", "")
        await page.select_option("#form-marks select[name=tier]", "5")
        want = await data(http_client, base_url, "/api/v1/tanks/marks?region=eu&tier=5&sort=players&order=desc")
        await wait_rows(page, [t["tank_id"] for t in want["tanks"]])
        assert [t["tank_id"] for t in want["tanks"]] == [T34, PZ4]
        tiers = await page.locator("#form-marks select[name=tier] option").evaluate_all("os => os.map(o => o.value)")
        assert tiers[:2] == ["", "5"]  # no tier below V to choose

        # A tank's page: its thresholds, sample and daily series (one point a build), and the way back.
        tank = await data(http_client, base_url, f"/api/v1/tank/{T34}/eu")
        tank_marks = tank["marks"]
        assert tank_marks["marks"] == rows[T34]["marks"] and len(tank_marks["series"]) == 2
        await page.click(f"#marks-table tr[data-tank-id='{T34}'] th a")
        await page.locator("#tank-marks-chart svg").wait_for()
        assert await page.locator("#tank-title").inner_text() == "T-34"
        assert await page.locator("#tab-marks").get_attribute("aria-selected") == "true"
        for key in MARKS:
            tile = page.locator(f"#tank-marks-tiles [data-mark={key}] .tile-value")
            assert await tile.inner_text() == num(tank_marks["marks"][key])
        sample = await page.locator("#tank-marks-sample").inner_text()
        assert f"{tank_marks['sample']['players']} players" in sample
        assert f"{num(tank_marks['sample']['battles'])} battles" in sample
        assert "An estimate" in await page.locator("#tank-marks-estimate").inner_text()
        for key, cls in (("first", "s-mark1"), ("second", "s-mark2"), ("third", "s-mark3"), ("top", "s-marktop")):
            dots = page.locator(f"#tank-marks-chart .series.{cls} circle")
            drawn = await dots.evaluate_all("cs => cs.map(c => [c.dataset.date, Number(c.dataset.value)])")
            assert drawn == [[p["date"], pytest.approx(p[key])] for p in tank_marks["series"]], key
        await page.click("#tank-marks-details summary")
        assert await page.locator("#tank-marks-table tbody tr").count() == 2
        await page.locator("#explorer").screenshot(path=str(artifacts_dir / "site-tank-marks.png"))
        assert await page.locator("#tank-back").inner_text() == "← Marks of excellence"
        await page.click("#tank-back")
        await wait_rows(page, [T34, PZ4])

        # Too few players for thresholds; a tier IV tank: each says why it has none.
        await page.goto(site_url(http_port, f"#tank/eu/{PZ4}"))
        none = page.locator("#tank-marks #tank-marks-none")
        await none.wait_for()
        assert "No thresholds yet" in await none.inner_text() and "(14)" in await none.inner_text()
        assert "No thresholds yet" in await page.locator("#tank-marks-chart .chart-empty").inner_text()
        await page.goto(site_url(http_port, f"#tank/eu/{low}"))
        await page.locator("#tank-figures").wait_for()
        assert "from tier V" in await page.locator("#tank-marks-none").inner_text()

        # Phone width: nothing overflows the page.
        await page.goto(site_url(http_port, "#marks/eu"))
        await page.locator("#marks-table").wait_for()
        await page.set_viewport_size({"width": 390, "height": 844})
        await page.wait_for_function("document.documentElement.scrollWidth <= 391")
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
async def test_player_tank_table_shows_progress_toward_the_next_mark_and_groups(
    app, http_client, base_url, http_port, async_playwright, chromium_path, artifacts_dir, tracked_player
):
    """A tracked player among made-up players of its tanks (much stronger on one, much weaker on
    another): each tank of tier V and up shows the player's combined damage, its mark percentile and
    a bar as wide as the combined damage over the next mark's threshold (full past the 3rd); the
    group-by selector shows the API's groups, whose battles add up to the period's."""
    player = tracked_player
    response, _ = await get_json(http_client, base_url, f"/api/v1/player/{player}/eu")
    assert response.code == 200
    tags = []  # the live lookup of the profile is also today's visit: let its write land first
    while len(tags) < 2 or tags[-1] != tags[-2]:
        assert len(tags) < 10, tags
        await asyncio.sleep(1)
        response, mine = await get_json(http_client, base_url, f"/api/v1/player/{player}/eu/tanks?days=90")
        tags.append(response.headers.get("ETag"))
    played = sorted(
        (t for t in mine["data"]["tanks"] if t["marks"] and t["marks"]["combined_damage"] is not None),
        key=lambda t: -t["marks"]["battles"],
    )[:3]
    assert len(played) == 3, [t["marks"] for t in mine["data"]["tanks"]]
    # 25 made-up players of each: about the player's level, far above it, far below it.
    population = {
        t["tank_id"]: (25, (4, 6), t["marks"]["combined_damage"] * factor / 1.2)
        for t, factor in zip(played, (1.0, 3.0, 0.3))
    }
    await write_changes(app.settings["store"], population, (0, 1, 2), seed=9)
    await build(app)

    tanks = await data(http_client, base_url, f"/api/v1/player/{player}/eu/tanks?days=30")
    rows = {r["tank_id"]: r for r in tanks["tanks"]}
    progressed = [r for r in tanks["tanks"] if r["marks"] and r["marks"]["next"] is not None]
    assert {r["tank_id"] for r in progressed} == set(population), [r["marks"] for r in tanks["tanks"]]
    assert rows[played[1]["tank_id"]]["marks"]["next"]["mark"] == 1  # far below the 1st mark
    assert rows[played[2]["tank_id"]]["marks"]["next"]["mark"] is None  # past the 3rd

    async with Browser(async_playwright, chromium_path) as browser:
        page = await browser.page()
        await page.goto(site_url(http_port, f"#player/eu/{player}"))
        await wait_ready(page)
        await page.locator("#tank-table td[data-col=marks_progress]").first.wait_for()
        ids = []
        next_page = page.locator("#player-tanks nav.pager button[data-page=next]")
        while True:  # every page of the table (25 rows each)
            shown = await row_ids(page, "#tank-table")
            ids += shown
            await check_marks_rows(page, shown, rows)
            if not await next_page.count() or await next_page.is_disabled():
                break
            await next_page.click()
        assert sorted(ids) == sorted(rows)
        assert "An estimate" in await page.locator("#marks-progress-estimate").inner_text()
        # Sorted by the progress: the one past the 3rd mark first.
        await page.click("#tank-table button.sort[data-sort=marks_progress]")
        assert (await row_ids(page, "#tank-table"))[0] == played[2]["tank_id"]
        await page.locator("#explorer").screenshot(path=str(artifacts_dir / "site-player-marks.png"))

        # Group by tier, type, nation: the API's groups; their battles add up to the period's.
        period = tanks["period"]["battles"]
        for by in ("tier", "type", "nation"):
            await page.click(f"#tank-group-by button[data-group-by={by}]")
            table = page.locator(f"#tank-groups[data-group-by={by}]")
            await table.wait_for()
            assert (
                await page.locator(f"#tank-group-by button[data-group-by={by}]").get_attribute("aria-pressed") == "true"
            )
            grouped = await data(http_client, base_url, f"/api/v1/player/{player}/eu/tanks?days=30&group_by={by}")
            battles = [number(t) for t in await table.locator("tbody [data-col=battles]").all_inner_texts()]
            assert battles == [g["battles"] for g in grouped["groups"]], by
            assert sum(battles) == period == grouped["period"]["battles"]
            assert number(await table.locator("tfoot [data-col=battles]").inner_text()) == period
            assert await table.locator("tbody tr").evaluate_all("rs => rs.map(r => r.dataset.group)") == [
                str(g[by]) for g in grouped["groups"]
            ]
            assert await table.locator("tbody [data-col=wn8]").all_inner_texts() == [
                num(g["wn8"]) if g["wn8"] is not None else "—" for g in grouped["groups"]
            ]
            await page.locator("#tank-table").wait_for()  # the per-tank table stays below
        await page.locator("#explorer").screenshot(path=str(artifacts_dir / "site-player-groups.png"))
        await page.click("#tank-group-by button[data-group-by='']")
        await page.locator("#tank-table").wait_for()
        assert await page.locator("#tank-groups").count() == 0
        assert browser.errors == [], browser.errors
