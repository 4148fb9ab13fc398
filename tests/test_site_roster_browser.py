"""The site's battle roster page (issue 51, item 5) in a real headless Chromium: players pasted as
IDs (one with its tank) or nicknames show as the API's rows, in order, each rating painted with the
colour the API gives its band, and a row without figures says why."""

from __future__ import annotations

import pytest

from scripts.upstream_sim import existing_accounts, missing_accounts
from tests import test_site_browser as site
from tests.test_site_browser import Browser, get_json, num, site_url, wait_ready

chromium_path = site.chromium_path  # the session fixtures of the site's browser tests
async_playwright = site.async_playwright

ACCOUNTS = existing_accounts("eu", 640)[620:]  # no other test module's


def rgb(colour: str) -> str:
    """'#4D7326' as the browser's computed 'rgb(77, 115, 38)'."""
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


@pytest.mark.gen_test(timeout=120)
async def test_roster_page_shows_the_api_rows_in_their_band_colours(
    app, http_client, base_url, http_port, async_playwright, chromium_path, artifacts_dir
):
    bad = missing_accounts("eu", 1)[0]
    entries = [f"{ACCOUNTS[0]}:1", *map(str, ACCOUNTS[1:8]), str(bad)]
    async with Browser(async_playwright, chromium_path) as browser:
        page = await browser.page()
        await page.goto(site_url(http_port))
        await wait_ready(page)
        await page.click("#tab-roster")
        await page.wait_for_function("location.hash === '#roster'")
        await page.fill("#form-roster textarea[name=players]", "\n".join(entries))
        await page.click("#form-roster button[type=submit]")
        await page.locator("#roster-table").wait_for()
        assert await page.evaluate("location.hash") == "#roster/eu/accounts=" + "%2C".join(entries).replace(":", "%3A")
        # The page's answer was built a moment ago: the same query is replayed by the API.
        response, body = await get_json(http_client, base_url, "/api/v1/roster?region=eu&accounts=" + ",".join(entries))
        assert response.code == 200, body
        rows = body["data"]["rows"]
        shown = await page.locator("#roster-table tbody tr").evaluate_all(
            "rs => rs.map(r => Number(r.dataset.accountId))"
        )
        assert shown == [r["account_id"] for r in rows]
        players = await page.locator("#roster-table tbody th[data-col=player]").all_inner_texts()
        assert [p.split(" [")[0] for p in players] == [r["nickname"] or f"#{r['account_id']}" for r in rows]
        battles = await page.locator("#roster-table tbody td[data-col=battles]").all_inner_texts()
        assert battles == [num(r["battles"]) if r["battles"] is not None else "—" for r in rows]
        # Each rating in its band: the chip's band and colour are the API's.
        for key in ("wn8", "win_rate", "efficiency", "wtr"):
            chips = await page.locator(f"#roster-table tbody td[data-col={key}]").evaluate_all(
                "cs => cs.map(c => { const b = c.querySelector('.band');"
                " return b ? [b.dataset.band, getComputedStyle(b).backgroundColor] : null; })"
            )
            want = [[r["bands"][key]["band"], rgb(r["bands"][key]["color"])] if r["bands"][key] else None for r in rows]
            assert chips == want, key
        # The tank asked with the first player, and the row with no account saying why.
        tank = await page.locator("#roster-table tbody tr").first.locator("td[data-col=tank]").inner_text()
        first_tank = rows[0]["tank"]
        assert tank.startswith(num(first_tank["battles"]))
        bad_row = page.locator(f"#roster-table tbody tr[data-account-id='{bad}']")
        assert await bad_row.get_attribute("data-reason") == "no_account"
        assert "No account has this ID" in await bad_row.locator("td[data-col=source]").inner_text()
        summary = await page.locator("#roster-summary").inner_text()
        assert f"{len(rows)} players" in summary
        await page.locator("#explorer").screenshot(path=str(artifacts_dir / "site-roster.png"))

        # Nicknames are sent as names= and resolved by the API.
        nicknames = [r["nickname"] for r in rows[1:4]]
        await page.fill("#form-roster textarea[name=players]", ", ".join(nicknames))
        await page.click("#form-roster button[type=submit]")
        await page.wait_for_function("location.hash.startsWith('#roster/eu/names=')")
        await page.wait_for_function(
            "n => { const t = document.querySelector('#roster-table'); return !!t && t.tBodies[0].rows.length === n; }",
            arg=len(nicknames),
        )
        players = await page.locator("#roster-table tbody th[data-col=player]").all_inner_texts()
        assert [p.split(" [")[0] for p in players] == nicknames
