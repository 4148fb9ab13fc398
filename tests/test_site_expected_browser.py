"""The site's expected values page (#expected/{region}[/{source}]) in a real headless Chromium,
over a computed table stored as the tank statistics job stores it and the real
GET /expected-values: the versions, the comparison, the rows with their source and sample, the
source switcher, the XVM download and the 404 of a region without a computed table.

Fixtures and helpers are those of tests/test_site_browser.py.
"""

from __future__ import annotations

import time

import pytest

from server.domain.ratings import load_expected_values_file
from server.services.population import newest_complete_day
from tests import test_site_browser as site
from tests.helpers import EXPECTED_VALUES_FILE, computed_table
from tests.test_site_browser import Browser, get_json, num, only_failed_loads, site_url, wait_ready

chromium_path = site.chromium_path  # the session fixtures of the site's browser tests
async_playwright = site.async_playwright

NEW_TANK = 999001  # a tank the loaded table lacks: a computed row in the effective table
NEW_ROW = [1400.0, 1.1, 0.9, 0.7, 51.0, 42, 5200]  # damage, spot, frag, defence, win rate, players, battles
STATS = ("damage", "spot", "frag", "defence", "win_rate")
XVM = {"damage": "expDamage", "spot": "expSpot", "frag": "expFrag", "defence": "expDef", "win_rate": "expWinRate"}


def value(v: float) -> str:
    """A value as the page writes it (Intl.NumberFormat('en', {maximumFractionDigits: 3}))."""
    return f"{v:,.3f}".rstrip("0").rstrip(".")


async def seed_computed_table(app) -> str:
    """A computed eu table as the job writes it: 30 tanks of the loaded table the encyclopedia
    knows (the first 50 % above the table's damage, the others within a few per cent) and
    NEW_TANK, which is also the table's only gap row."""
    services, store = app.settings["services"], app.settings["store"]
    table = load_expected_values_file(EXPECTED_VALUES_FILE)
    vehicles = await services.ratings_source.vehicles("eu")
    known = [t for t, _ in sorted(table.items()) if t in vehicles][:30]
    assert len(known) == 30, "the simulator's encyclopedia lacks the table's tanks"
    computed = {}
    for i, tank_id in enumerate(known):
        e = table.get(tank_id)
        factor = 1.5 if i == 0 else 1 + (i % 5) / 100
        computed[str(tank_id)] = [
            e.damage * factor,
            e.spot,
            e.frag * 0.98,
            e.defence,
            e.win_rate,
            20 + i,
            1000 + 10 * i,
        ]
    computed[str(NEW_TANK)] = NEW_ROW
    through = newest_complete_day(time.time())
    version = f"{through}+ev1"
    await store.expected_tables.save(computed_table("eu", through, table.version, {str(NEW_TANK): NEW_ROW}, computed))
    services.ratings_source.forget()
    return version


async def expected(http_client, base_url, query):
    response, body = await get_json(http_client, base_url, f"/api/v1/expected-values?{query}")
    assert response.code == 200, body
    return body["data"]


async def wait_table(page, source, rows):
    """The rows table of `source` with `rows` rows is on screen."""
    await page.wait_for_function(
        "([source, rows]) => { const t = document.querySelector('#expected-rows');"
        " const on = document.querySelector('#expected-source button[aria-pressed=true]');"
        " return !!t && !!on && on.dataset.value === source && t.tBodies[0].rows.length === rows; }",
        arg=[source, rows],
    )


async def visible_ids(page) -> list[int]:
    return [
        int(v)
        for v in await page.locator("#expected-rows tbody tr").evaluate_all(
            "rows => rows.filter(r => r.offsetParent !== null).map(r => r.dataset.tankId)"
        )
    ]


# --------------------------------------------------------------------------------------------
@pytest.mark.gen_test(timeout=90)
async def test_expected_values_page_shows_versions_comparison_rows_and_download(
    app, http_client, base_url, http_port, async_playwright, chromium_path, artifacts_dir
):
    """From the tanks page to the region's expected values: the versions and the computed
    table's facts, the comparison (medians, by tier, by type, largest differences linking to the
    tank pages) and every row as the API answers it, the computed row with its sample; the
    filter keeps the computed rows, the download is the answer's {header, data}, the switcher
    asks for the computed and the loaded table."""
    version = await seed_computed_table(app)
    effective = await expected(http_client, base_url, "region=eu")
    computed = await expected(http_client, base_url, "region=eu&source=computed")
    assert effective["version"] == version and effective["computed"]["version"] == version
    by_id = {row["IDNum"]: row for row in effective["data"]}
    assert by_id[NEW_TANK]["source"] == "computed" and by_id[NEW_TANK]["sample"] == {"players": 42, "battles": 5200}
    cmp = effective["comparison"]
    assert cmp is not None and cmp["tanks"] == 30 and cmp["by_tier"] and cmp["by_type"]
    worst = cmp["largest_differences"][0]
    assert worst["statistic"] == "damage" and worst["name"]

    async with Browser(async_playwright, chromium_path) as browser:
        page = await browser.page()
        await page.goto(site_url(http_port, "#tanks"))
        await wait_ready(page)
        # No tank statistics were built: the tanks page says so, and still leads to the expected values.
        link = page.locator("#tanks-expected-link")
        await link.wait_for()
        assert await link.get_attribute("href") == "#expected/eu"
        await link.click()
        await page.wait_for_function("location.hash === '#expected/eu'")
        await wait_table(page, "effective", len(effective["data"]))
        assert await page.locator("#tab-tanks").get_attribute("aria-selected") == "true"
        assert await page.locator("#panel-expected").is_visible()
        assert await page.locator("#expected-source button").evaluate_all("bs => bs.map(b => b.dataset.value)") == [
            "effective",
            "table",
            "computed",
        ]  # the index's enum for source

        # The versions: the rows', the loaded table's and the computed table's facts.
        facts = page.locator("#expected-facts")
        assert await facts.locator("[data-fact=version] dd").inner_text() == version
        assert await facts.locator("[data-fact=table_version] dd").inner_text() == effective["table_version"]
        assert (
            "computed rows for the tanks it lacks" in await facts.locator("[data-fact=rating_source] dd").inner_text()
        )
        c = effective["computed"]
        facts = page.locator("#expected-computed")
        assert await facts.locator("[data-fact=method] dd").inner_text() == "ev1"
        window = c["window"]
        assert await facts.locator("[data-fact=window] dd").inner_text() == (
            f"{window['from']} → {window['through']} (60 days)"
        )
        minimums = await facts.locator("[data-fact=minimums] dd").inner_text()
        assert "20 players with at least 10 battles on the tank and 100 on their other rated tanks" in minimums
        assert "1,000 battles in all" in minimums
        assert await facts.locator("[data-fact=base] dd").inner_text() == c["base"]
        assert await facts.locator("[data-fact=gaps] dd").inner_text() == "1 tank (2 passes, converged)"
        assert await facts.locator("[data-fact=every_tank] dd").inner_text() == "31 tanks (3 passes, converged)"

        # The comparison, as the API computed it.
        assert "over the 30 tanks both have" in await page.locator("#expected-comparison-note").inner_text()
        for stat in STATS:
            tile = page.locator(f"#expected-medians [data-stat={stat}] .tile-value")
            assert await tile.inner_text() == f"{cmp[stat]:.3f}", stat
        for table, groups, key in (("by-tier", cmp["by_tier"], "tier"), ("by-type", cmp["by_type"], "type")):
            rows = page.locator(f"#expected-{table} tbody tr")
            assert await rows.count() == len(groups)
            for i, group in enumerate(groups):
                row = rows.nth(i)
                assert await row.get_attribute("data-group") == str(group[key])
                assert await row.locator("td").nth(0).inner_text() == str(group["tanks"])
                assert await row.locator("td[data-stat=damage]").inner_text() == f"{group['damage']:.3f}"
        largest = page.locator("#expected-largest tbody tr")
        assert await largest.count() == len(cmp["largest_differences"])
        first = largest.nth(0)
        assert await first.get_attribute("data-tank-id") == str(worst["tank_id"])
        assert await first.locator("th a").inner_text() == worst["name"]
        # A tank's page over the tanks page's period (30 days, the default).
        assert await first.locator("th a").get_attribute("href") == f"#tank/eu/{worst['tank_id']}/30"
        assert await first.locator("[data-col=statistic]").inner_text() == "Damage"
        assert await first.locator("td[data-stat=damage] strong").inner_text() == f"{worst['ratios']['damage']:.3f}"
        assert await first.locator("[data-col=players]").inner_text() == num(worst["players"])

        # The rows: the API's, in its order; the computed row with its sample, a loaded row without.
        ids = await page.locator("#expected-rows tbody tr").evaluate_all("rs => rs.map(r => Number(r.dataset.tankId))")
        assert ids == [row["IDNum"] for row in effective["data"]]
        new = page.locator(f"#expected-rows tr[data-tank-id='{NEW_TANK}']")
        for stat in STATS:
            key = XVM[stat]
            assert await new.locator(f"[data-col={key}]").inner_text() == value(by_id[NEW_TANK][key]), key
        assert await new.locator("[data-col=source]").inner_text() == "computed"
        assert await new.locator("[data-col=players]").inner_text() == "42"
        assert await new.locator("[data-col=battles]").inner_text() == "5,200"
        loaded = effective["data"][0]
        row = page.locator(f"#expected-rows tr[data-tank-id='{loaded['IDNum']}']")
        assert await row.locator("[data-col=source]").inner_text() == "loaded"
        assert await row.locator("[data-col=expDamage]").inner_text() == value(loaded["expDamage"])
        dash = row.locator("[data-col=players] abbr.null-figure")
        assert await dash.inner_text() == "—" and "does not publish" in await dash.get_attribute("title")
        assert await row.locator("th a").get_attribute("href") == f"#tank/eu/{loaded['IDNum']}/30"
        summary = page.locator("#expected-rows-summary")
        assert await summary.inner_text() == (
            f"{num(len(effective['data']))} rows: {num(len(effective['data']) - 1)} from the loaded table, 1 computed."
        )

        # Computed rows only.
        await page.check("#expected-only-computed")
        assert await visible_ids(page) == [NEW_TANK]
        assert await summary.inner_text() == f"Showing the 1 computed row of {num(len(effective['data']))}."
        await page.locator("#explorer").screenshot(path=str(artifacts_dir / "site-expected.png"))
        await page.uncheck("#expected-only-computed")
        assert len(await visible_ids(page)) == len(effective["data"])

        # The download: the answer's header and rows, as a file XVM tools read.
        download = page.locator("#expected-download")
        assert await download.get_attribute("download") == f"wn8exp-eu-effective-{version}.json"
        file = await page.evaluate(
            "async () => (await fetch(document.querySelector('#expected-download').href)).json()"
        )
        assert file == {"header": effective["header"], "data": effective["data"]}

        # The computed table: every row computed, with its sample; no filter to apply.
        await page.click("#expected-source button[data-value=computed]")
        await page.wait_for_function("location.hash === '#expected/eu/computed'")
        await wait_table(page, "computed", len(computed["data"]))
        sources = await page.locator("#expected-rows tbody [data-col=source]").all_inner_texts()
        assert set(sources) == {"computed"} and len(sources) == 31
        assert await page.locator("#expected-only-computed").count() == 0
        for row in computed["data"][:3]:
            cells = page.locator(f"#expected-rows tr[data-tank-id='{row['IDNum']}']")
            assert await cells.locator("[data-col=expDamage]").inner_text() == value(row["expDamage"])
            assert await cells.locator("[data-col=players]").inner_text() == num(row["sample"]["players"])
        assert f"computed-{version}" in await page.locator("#expected-download").get_attribute("download")

        # The loaded table: no computed row (nor NEW_TANK) any more.
        await page.click("#expected-source button[data-value=table]")
        await page.wait_for_function("location.hash === '#expected/eu/table'")
        table = await app.settings["services"].expected_values.loaded_source.expected_values()  # the wg/ table
        await wait_table(page, "table", len(table))
        assert await page.locator(f"#expected-rows tr[data-tank-id='{NEW_TANK}']").count() == 0
        assert await page.locator("#expected-rows tr[data-source=computed]").count() == 0
        assert await page.locator("#expected-facts [data-fact=version] dd").inner_text() == table.version
        assert await page.locator("#expected-only-computed").count() == 0

        # Back on the tanks page.
        await page.click("#expected-back")
        await page.locator("#tanks-expected-link").wait_for()

        # Phone width: nothing overflows the page (the tables scroll in their own boxes).
        await page.goto(site_url(http_port, "#expected/eu"))
        await wait_table(page, "effective", len(effective["data"]))
        await page.set_viewport_size({"width": 390, "height": 844})
        await page.wait_for_function("document.documentElement.scrollWidth <= 391")
        assert only_failed_loads(browser.errors, {404}) == [], browser.errors


@pytest.mark.gen_test(timeout=60)
async def test_expected_values_page_explains_a_region_without_a_computed_table(
    app, http_client, base_url, http_port, async_playwright, chromium_path
):
    """source=computed for a region the job has not computed: the API's 404 no_expected_values in
    plain words, with the switcher to the tables that are there."""
    await seed_computed_table(app)  # eu only
    response, body = await get_json(http_client, base_url, "/api/v1/expected-values?region=na&source=computed")
    assert (response.code, body["error"]["code"]) == (404, "no_expected_values")

    async with Browser(async_playwright, chromium_path) as browser:
        page = await browser.page()
        await page.goto(site_url(http_port, "#expected/na/computed"))
        error = page.locator("#expected-out .error")
        await error.wait_for()
        assert await error.locator(".error-code").inner_text() == "no_expected_values"
        assert "HTTP 404" in await error.inner_text()
        plain = await error.locator(".error-plain").inner_text()
        assert "No computed expected values for NA yet" in plain
        assert (
            await page.locator("#expected-source button[data-value=computed]").get_attribute("aria-pressed") == "true"
        )
        assert await page.locator("#tab-tanks").get_attribute("aria-selected") == "true"

        # The loaded table is there for that region: one click away.
        await page.click("#expected-source button[data-value=effective]")
        await page.wait_for_function("location.hash === '#expected/na/effective'")
        await page.locator("#expected-rows").wait_for()
        assert await page.locator("#expected-rows tr[data-source=computed]").count() == 0
        assert "No computed table for NA yet" in await page.locator("#expected-no-computed").inner_text()
        assert "No comparison" in await page.locator("#expected-no-comparison").inner_text()
        assert only_failed_loads(browser.errors, {404}) == [], browser.errors
