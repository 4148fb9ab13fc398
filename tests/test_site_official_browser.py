"""Wargaming's own figures on the site (issue 44, item 7) in a real headless Chromium: the marks
table shows the published thresholds under our estimates with the estimate's error and the median
error by tier, a tank page its published marks and mastery badges, a profile its WTR (or why it has
none) and personal rating, each equal to what the API answers.

The published thresholds are fetched from the simulator by the service's own daily fetch
(OfficialFigures.fetch); the estimates are built as in tests/test_site_marks_browser.py.
"""

from __future__ import annotations

import pytest

from tests import test_site_browser as site
from tests.helpers import sim_async
from tests.test_site_browser import Browser, num, site_url
from tests.test_site_marks_browser import IS, MARKS, T34, TIGER, build, data, wait_rows, write_changes

chromium_path = site.chromium_path  # the session fixtures of the site's browser tests
async_playwright = site.async_playwright
MASTERY = ("third_class", "second_class", "first_class", "ace")


def percent(error: float) -> str:
    """An estimate's relative error as the site writes it (marks.js officialNode)."""
    return f"{'+' if error > 0 else ''}{100 * error:.1f} %"


@pytest.mark.gen_test(timeout=120)
async def test_the_published_thresholds_stand_beside_the_estimates_on_the_marks_table_and_a_tank_page(
    app, http_client, base_url, http_port, async_playwright, chromium_path, artifacts_dir
):
    services = app.settings["services"]
    await write_changes(
        app.settings["store"],
        {T34: (30, (5, 7), 700), IS: (26, (4, 6), 1400), TIGER: (24, (4, 6), 1200)},
        (0, 1, 2),
        seed=9,
    )
    await build(app)
    said = await services.tank_stats.official.fetch()
    assert "failed" not in said, said

    marks = await data(http_client, base_url, "/api/v1/tanks/marks?region=eu&tier=7")
    official = marks["official"]
    assert official is not None and official["stale"] is False
    rows = {t["tank_id"]: t for t in marks["tanks"]}
    compared = [t for t, row in rows.items() if row["official"] and row["marks"]]
    assert compared, "no tier VII tank with both an estimate and the published thresholds"
    # Every tier VII tank Wargaming's distribution covers is listed, tracked or not.
    assert any(row["official"] and row["marks"] is None for row in rows.values())

    async with Browser(async_playwright, chromium_path) as browser:
        page = await browser.page()
        await page.goto(site_url(http_port, "#marks/eu/tier=7"))
        await wait_rows(page, [t["tank_id"] for t in marks["tanks"]])
        note = await page.locator("#marks-official").inner_text()
        assert official["date"] in note and "not the game’s moving average" in note
        for entry in official["median_error_by_tier"]:
            shown = page.locator(f"#marks-errors tr[data-tier='{entry['tier']}']")
            for key in MARKS:
                expected = percent(entry[key]) if entry[key] is not None else "—"
                assert await shown.locator(f"[data-col={key}]").inner_text() == expected, (entry, key)
        for tank_id, row in rows.items():
            shown = page.locator(f"#marks-table tr[data-tank-id='{tank_id}']")
            for key in MARKS:
                cell = shown.locator(f"[data-col={key}]")
                if not row["official"]:
                    assert await cell.locator(".mark-official").count() == 0
                    continue
                assert (
                    float(await cell.locator(".mark-official").get_attribute("data-official"))
                    == (row["official"]["marks"][key])
                )
                assert f"WG {num(row['official']['marks'][key])}" in await cell.locator(".mark-official").inner_text()
                error = (row["estimate_error"] or {}).get(key)
                if error is None:
                    assert await cell.locator(".mark-error").count() == 0
                else:
                    assert percent(error) in await cell.locator(".mark-error").inner_text()
                    assert await cell.locator(".mark-value").inner_text() == num(row["marks"][key])
        await page.locator("#explorer").screenshot(path=str(artifacts_dir / "site-marks-official.png"))

        # A tank page: its published marks with our estimate's error, and the mastery badges' XP.
        tank_id = compared[0]
        tank = await data(http_client, base_url, f"/api/v1/tank/{tank_id}/eu")
        published = tank["marks"]["official"]
        await page.goto(site_url(http_port, f"#tank/eu/{tank_id}"))
        tiles = page.locator("#tank-official-marks")
        await tiles.wait_for()
        for key in MARKS:
            tile = tiles.locator(f"[data-mark={key}]")
            assert await tile.locator(".tile-value").inner_text() == num(published["marks"][key])
            error = tank["marks"]["estimate_error"][key]
            assert percent(error) in await tile.locator(".tile-note").inner_text()
        badges = page.locator("#tank-official-mastery")
        for key in MASTERY:
            shown = await badges.locator(f"[data-badge={key}] .tile-value").inner_text()
            assert shown == num(published["mastery_xp"][key]), key
        assert published["date"] in await page.locator("#tank-official").inner_text()


@pytest.mark.gen_test(timeout=120)
async def test_a_profile_shows_its_wtr_or_why_it_has_none(
    app, http_client, base_url, http_port, upstream_sim, async_playwright, chromium_path
):
    ids = (await sim_async(upstream_sim, "/_sim/accounts?region=eu&n=60"))["ids"]
    query = f"application_id=t&account_id={','.join(map(str, ids))}"
    ratings = (await sim_async(upstream_sim, f"/wot/eu/wot/account/wtr/?{query}"))["data"]
    account_id = next(a for a in ids if ratings[str(a)] is not None)

    async with Browser(async_playwright, chromium_path) as browser:
        page = await browser.page()
        # A first lookup does not ask it: the tile says why.
        await page.goto(site_url(http_port, f"#player/eu/{account_id}"))
        tile = page.locator("#player-profile #wtr-tile")
        await tile.wait_for(timeout=20_000)
        assert await tile.get_attribute("data-reason") == "not_fetched"
        assert "next refresh" in await tile.locator(".tile-note").inner_text()
        # After the profile's refresh: the rating account/wtr answers, and account/info's personal rating.
        await app.settings["services"].players.fetch_and_store("eu", account_id, with_ratings=True, caller="refresh")
        profile = await data(http_client, base_url, f"/api/v1/player/{account_id}/eu")
        assert isinstance(profile["ratings"]["wtr"], int)
        await page.reload()
        await page.wait_for_function(
            "() => { const t = document.querySelector('#player-profile #wtr-tile'); return !!t && !t.dataset.reason; }"
        )
        assert await tile.locator(".tile-value").inner_text() == num(profile["ratings"]["wtr"])
        personal = page.locator("#player-profile .tile.global-rating .tile-value")
        assert await personal.inner_text() == num(profile["ratings"]["global_rating"])
