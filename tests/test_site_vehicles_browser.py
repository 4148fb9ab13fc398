"""The site's vehicle list and tier list (issue 46, item 4) in a real headless Chromium: #vehicles shows
the region's catalogue (GET /vehicles) row for row, each icon's src the API's small_icon URL, filtered
and paged by the API; #strength shows a tier's tanks (GET /tanks/strength) in the API's order with
its ranks, relative win rates, damage and their intervals, the unranked tanks after them.

The catalogue is the simulator's encyclopedia, fetched by the service's own daily fetch; the tank
tables are built by the daily job from made-up tank changes (tests/test_site_marks_browser.py's
helpers). The icons are the simulator's own (scripts/upstream_sim/icons.py, at the URLs its
encyclopedia names): the page loads them offline as it would Wargaming's; their requests are recorded.
"""

from __future__ import annotations

import re
import time

import pytest

from tests import test_site_browser as site
from tests.test_site_browser import Browser, get_json, num, site_url, wait_ready
from tests.test_site_marks_browser import build, write_changes

chromium_path = site.chromium_path  # the session fixtures of the site's browser tests
async_playwright = site.async_playwright

# Tank ids of the simulator's encyclopedia (2018 list).
T34, PZ4, IS, TIGER = 1, 17, 513, 529  # tiers 5, 5, 7, 7
T34_1, PANTHER, T20 = 1073, 1297, 1569  # tier VII medium tanks
ROMAN = {5: "V", 7: "VII", 10: "X"}
TYPES = {"lightTank": "Light tank", "mediumTank": "Medium tank", "heavyTank": "Heavy tank", "AT-SPG": "Tank destroyer"}
ICONS = re.compile(r"^http://127\.0\.0\.1:[0-9]+/_sim/icons/vehicle/small/[0-9]+\.png$")


async def data(http_client, base_url, path):
    response, body = await get_json(http_client, base_url, path)
    assert response.code == 200, (path, body)
    return body["data"]


def signed(value: float) -> str:
    """A relative figure as the tier list writes it (strength.js signed)."""
    return ("+" if value > 0 else "−" if value < 0 else "±") + f"{abs(value):.2f}"


def relative(tank, key: str, unit: str) -> str:
    """A relative figure and its interval as the tier list writes them, or the dash of a null one."""
    if tank[key] is None:
        return "—"
    pair = tank[f"{key}_interval"]  # {low, high}
    return f"{signed(tank[key])}{unit}" + (f" ({signed(pair['low'])} … {signed(pair['high'])})" if pair else "")


def flags(vehicle) -> str:
    return " ".join(
        word
        for key, word in (("is_premium", "Premium"), ("is_gift", "Gift"), ("is_wheeled", "Wheeled"))
        if vehicle[key]
    )


async def serve_icons(page) -> list[str]:
    """Record the page's requests for the simulator's icons (they go on to the simulator); the URLs asked, in order."""
    asked: list[str] = []

    async def answer(route):
        asked.append(route.request.url)
        await route.continue_()

    await page.route(ICONS, answer)
    return asked


async def shown_ids(page, table) -> list[int]:
    return [int(v) for v in await page.locator(f"{table} tbody tr").evaluate_all("rs => rs.map(r => r.dataset.tankId)")]


async def wait_rows(page, out, table, ids):
    await page.wait_for_function(
        "([out, table, ids]) => { const t = document.querySelector(`${out}:not([aria-busy]) ${table}`);"
        " return !!t && JSON.stringify([...t.tBodies[0].rows].map(r => Number(r.dataset.tankId))) === JSON.stringify(ids); }",
        arg=[out, table, ids],
    )


async def check_vehicles(page, answer):
    """Every row of the page is the answer's: name, tier, type, flags, figures and the icon's src."""
    vehicles = answer["vehicles"]
    await wait_rows(page, "#vehicles-out", "#vehicles-table", [v["tank_id"] for v in vehicles])
    names = await page.locator("#vehicles-table tbody th[data-col=name]").all_inner_texts()
    assert names == [v["name"] or f"Tank {v['tank_id']} not in the encyclopedia" for v in vehicles]
    tiers = await page.locator("#vehicles-table tbody td[data-col=tier]").all_inner_texts()
    assert tiers == [str(v["tier"]) if v["tier"] is not None else "—" for v in vehicles]
    types = await page.locator("#vehicles-table tbody td[data-col=type]").all_inner_texts()
    assert types == [TYPES.get(v["type"], v["type"]) if v["type"] is not None else "—" for v in vehicles]
    shown_flags = await page.locator("#vehicles-table tbody td[data-col=flags]").all_inner_texts()
    assert shown_flags == [flags(v) for v in vehicles]
    premium = await page.locator("#vehicles-table tbody tr").evaluate_all(
        "rs => rs.map(r => !!r.querySelector('[data-flag=premium]'))"
    )
    assert premium == [v["is_premium"] for v in vehicles]
    # One icon per row with images, its src exactly the API's URL and its alt the name.
    icons = await page.locator("#vehicles-table tbody tr").evaluate_all(
        "rs => rs.map(r => { const i = r.querySelector('td[data-col=icon] img');"
        " return i ? [i.getAttribute('src'), i.getAttribute('alt')] : null; })"
    )
    assert icons == [
        [v["images"]["small_icon"], v["name"]] if v["images"] and v["images"]["small_icon"] else None for v in vehicles
    ]
    for key in ("players", "win_rate", "avg_damage"):
        texts = await page.locator(f"#vehicles-table tbody td[data-col={key}]").all_inner_texts()
        want = [
            "—"
            if v["stats"] is None or v["stats"][key] is None
            else f"{num(v['stats'][key])} %"
            if key == "win_rate"
            else num(v["stats"][key])
            for v in vehicles
        ]
        assert texts == want, key
    # A vehicle the tracked players drove links to its tank page.
    links = await page.locator("#vehicles-table tbody tr").evaluate_all(
        "rs => rs.map(r => { const a = r.querySelector('th a'); return a ? a.getAttribute('href') : null; })"
    )
    assert links == [f"#tank/{answer['region']}/{v['tank_id']}" if v["stats"] else None for v in vehicles]
    summary = await page.locator("#vehicles-summary").inner_text()
    assert f"{num(answer['total'])} vehicle" in summary
    assert await page.locator("#vehicles-catalogue").inner_text() == f"catalogue of {answer['fetched_on']}"
    assert await page.locator("#vehicles-stale").count() == (1 if answer["stale"] else 0)


# --------------------------------------------------------------------------------------------
@pytest.mark.gen_test(timeout=120)
async def test_vehicle_list_shows_the_catalogue_with_its_icons_filters_and_pages(
    app, http_client, base_url, http_port, async_playwright, chromium_path, artifacts_dir
):
    """The table is the API's answer row for row (names, tiers, flags, figures, each icon's src the
    API's small_icon); a tier, premium or name filter asks the API for its rows; the pages are the
    API's; an old catalogue is said to be old."""
    # T-34, IS and Tiger I pass the tank table's minimum of players, Pz. IV's 14 do not.
    population = {T34: (30, (5, 7), 700), IS: (26, (4, 6), 1400), TIGER: (24, (4, 6), 1200), PZ4: (14, (4, 6), 600)}
    await write_changes(app.settings["store"], population, (0, 1, 2), seed=4)
    await build(app)

    first = await data(http_client, base_url, "/api/v1/vehicles?region=eu")
    assert first["limit"] == 100 and first["total"] > 100 and len(first["vehicles"]) == 100
    assert first["stale"] is False and re.fullmatch(r"\d{4}-\d{2}-\d{2}", first["fetched_on"])
    rows = {v["tank_id"]: v for v in first["vehicles"]}
    assert rows[T34]["stats"]["win_rate"] is not None and rows[PZ4]["stats"]["win_rate"] is None
    assert all(v["images"] and v["images"]["small_icon"].startswith("http") for v in first["vehicles"])
    tier7 = await data(http_client, base_url, "/api/v1/vehicles?region=eu&tier=7")
    assert 0 < tier7["total"] < first["total"] and {v["tier"] for v in tier7["vehicles"]} == {7}
    assert any(v["is_premium"] for v in tier7["vehicles"]) and not all(v["is_premium"] for v in tier7["vehicles"])

    async with Browser(async_playwright, chromium_path) as browser:
        page = await browser.page()
        asked = await serve_icons(page)
        await page.goto(site_url(http_port))
        await wait_ready(page)
        await page.click("#tab-vehicles")
        await page.wait_for_function("location.hash === '#vehicles'")
        await check_vehicles(page, first)
        assert await page.locator("#tab-vehicles").get_attribute("aria-selected") == "true"
        assert await page.locator("#panel-vehicles").is_visible()
        assert await page.locator("#form-vehicles select[name=region]").input_value() == "eu"
        # The icons in view load (from the answers above): each one asked is one of the API's URLs.
        await page.wait_for_function(
            "[...document.querySelectorAll('#vehicles-table img')].some(i => i.complete && i.naturalWidth > 0)"
        )
        assert asked and set(asked) <= {v["images"]["small_icon"] for v in first["vehicles"]}
        assert await page.locator("#vehicles-table img.icon-failed").count() == 0
        await page.locator("#explorer").screenshot(path=str(artifacts_dir / "site-vehicles.png"))

        # The tier filter narrows the list to the API's tier VII rows; then premium only; then a name.
        await page.select_option("#form-vehicles select[name=tier]", "7")
        await check_vehicles(page, tier7)
        assert "tier=7" in await page.evaluate("location.hash")
        premium = await data(http_client, base_url, "/api/v1/vehicles?region=eu&tier=7&premium=true")
        assert premium["vehicles"] and all(v["is_premium"] for v in premium["vehicles"])
        await page.select_option("#form-vehicles select[name=premium]", "true")
        await check_vehicles(page, premium)
        await page.select_option("#form-vehicles select[name=premium]", "")
        await page.fill("#form-vehicles input[name=search]", "tiger")
        await page.press("#form-vehicles input[name=search]", "Enter")
        tigers = await data(http_client, base_url, "/api/v1/vehicles?region=eu&tier=7&search=tiger")
        assert TIGER in [v["tank_id"] for v in tigers["vehicles"]]
        await check_vehicles(page, tigers)

        # A tank the tracked players drove opens its page.
        await page.click(f"#vehicles-table tr[data-tank-id='{TIGER}'] th a")
        await page.wait_for_function(f"location.hash === '#tank/eu/{TIGER}'")
        await page.locator("#tank-figures").wait_for()
        assert await page.locator("#tank-title").inner_text() == "Tiger I"
        assert not await page.locator("#panel-vehicles").is_visible()

        # Pages of 100: the next is the API's offset=100, and back.
        await page.goto(site_url(http_port, "#vehicles/eu"))
        await check_vehicles(page, first)
        assert await page.locator("#vehicles-page").inner_text() == f"Vehicles 1–100 of {num(first['total'])}"
        assert await page.locator("#vehicles-out button[data-page=prev]").is_disabled()
        await page.click("#vehicles-out button[data-page=next]")
        second = await data(http_client, base_url, "/api/v1/vehicles?region=eu&offset=100")
        await check_vehicles(page, second)
        assert "offset=100" in await page.evaluate("location.hash")
        assert await page.locator("#vehicles-page").inner_text() == (
            f"Vehicles 101–{100 + len(second['vehicles'])} of {num(first['total'])}"
        )
        await page.go_back()
        await check_vehicles(page, first)

        # A catalogue older than a day and its refresh: the answer says stale, the page says so.
        later = time.time() + 2 * 86400
        app.settings["services"].vehicles.clock = lambda: later
        old = await data(http_client, base_url, "/api/v1/vehicles?region=eu&tier=5")
        assert old["stale"] is True
        await page.goto(site_url(http_port, "#vehicles/eu/tier=5"))
        await check_vehicles(page, old)
        assert old["fetched_on"] in await page.locator("#vehicles-stale").inner_text()

        # Another tab hides the page.
        await page.click("#tab-tanks")
        await page.locator("#tank-stats-table").wait_for()
        assert not await page.locator("#panel-vehicles").is_visible()
        assert await page.locator("#tab-vehicles").get_attribute("aria-selected") == "false"
        assert browser.errors == [], browser.errors


async def check_strength(page, answer):
    """The tier list is the answer's, in its order: ranks, relative figures with their intervals,
    win rates against the baselines, samples; the unranked tanks greyed after the ranked."""
    tanks = answer["tanks"]
    await wait_rows(page, "#strength-out", "#strength-table", [t["tank_id"] for t in tanks])
    body = "#strength-table tbody"
    ranks = await page.locator(f"{body} td[data-col=rank]").all_inner_texts()
    assert ranks == [str(t["rank"]) if t["rank"] is not None else "—" for t in tanks]
    unranked = await page.locator(f"{body} tr").evaluate_all("rs => rs.map(r => r.classList.contains('unranked'))")
    assert unranked == [t["rank"] is None for t in tanks]
    names = await page.locator(f"{body} th[data-col=name] a").all_inner_texts()
    assert names == [t["name"] for t in tanks]
    links = await page.locator(f"{body} th[data-col=name] a").evaluate_all("as => as.map(a => a.getAttribute('href'))")
    assert links == [f"#tank/{answer['region']}/{t['tank_id']}/{answer['days']}" for t in tanks]
    for key, unit in (("relative_win_rate", ""), ("relative_damage", " %")):
        texts = await page.locator(f"{body} td[data-col={key}]").all_inner_texts()
        assert texts == [relative(t, key, unit) for t in tanks], key
    basis = await page.locator(f"{body} td[data-col=basis_win_rate]").all_inner_texts()
    assert basis == [
        "—"
        if t["win_rate"] is None
        else f"{num(t['win_rate'])} % vs {num(t['baseline_win_rate'])} % on their other tier {ROMAN[t['tier']]} tanks"
        for t in tanks
    ]
    for key in ("players", "battles"):
        assert await page.locator(f"{body} td[data-col={key}]").all_inner_texts() == [num(t[key]) for t in tanks]


@pytest.mark.gen_test(timeout=120)
async def test_tier_list_ranks_a_tiers_tanks_with_their_intervals_as_the_api_does(
    app, http_client, base_url, http_port, async_playwright, chromium_path, artifacts_dir
):
    """A tier's tanks in the API's order: the ranks, relative win rates and damage with their 95 %
    intervals, the win rate against the drivers' own on their other tanks of the tier; the tanks
    below the sample after them, greyed, with their sample; the tier, type and period ask the API."""
    # Tier VII: the first 24-30 accounts drive IS, Tiger I, Panther and T20 (each has a baseline on
    # the others); T-34-1's 6 drivers are below the sample. T-34 (tier V) is another tier.
    population = {
        IS: (30, (3, 5), 1400),
        TIGER: (28, (3, 5), 1200),
        PANTHER: (26, (3, 5), 1300),
        T20: (24, (3, 5), 1100),
        T34_1: (6, (3, 5), 1200),
        T34: (30, (3, 5), 700),
    }
    # Three days in the last week, three more before it: the 7 and 30 days' lists differ.
    await write_changes(app.settings["store"], population, (0, 1, 2), seed=11)
    await write_changes(app.settings["store"], population, (10, 11, 12), seed=12)
    await build(app)
    _, index = await get_json(http_client, base_url, "/api/v1")
    endpoint = next(e["name"] for e in index["data"]["endpoints"] if e["path"].endswith("/tanks/strength"))

    # The page's first view (tier X, the index's example, and the API's default period): empty.
    tier10 = await data(http_client, base_url, "/api/v1/tanks/strength?region=eu&tier=10&days=30")
    assert tier10["total"] == 0
    tier7 = await data(http_client, base_url, "/api/v1/tanks/strength?region=eu&tier=7&days=30")
    order = [t["tank_id"] for t in tier7["tanks"]]
    assert set(order[:4]) == {IS, TIGER, PANTHER, T20} and order[4:] == [T34_1], tier7
    assert [t["rank"] for t in tier7["tanks"]] == [1, 2, 3, 4, None] and tier7["ranked"] == 4
    assert all(t["relative_win_rate_interval"] and t["relative_damage_interval"] for t in tier7["tanks"][:4])

    async with Browser(async_playwright, chromium_path) as browser:
        page = await browser.page()
        await page.goto(site_url(http_port))
        await wait_ready(page)
        # The tab opens tier X over 30 days: nothing was driven there.
        await page.click("#tab-strength")
        await page.wait_for_function("location.hash === '#strength'")
        await page.locator("#strength-out .tanks-empty").wait_for()
        assert await page.locator("#tab-strength").get_attribute("aria-selected") == "true"
        assert await page.locator("#form-strength select[name=tier]").input_value() == "10"
        assert await page.locator("#form-strength select[name=days]").input_value() == "30"
        assert "Tier X: 0 of 0 tanks ranked" in await page.locator("#strength-summary").inner_text()

        # Tier VII: the API's ranking, figure for figure.
        await page.select_option("#form-strength select[name=tier]", "7")
        await check_strength(page, tier7)
        assert "tier=7" in await page.evaluate("location.hash")
        summary = await page.locator("#strength-summary").inner_text()
        assert "Tier VII: 4 of 5 tanks ranked" in summary
        note = page.locator("#strength-method")
        assert f"at least {tier7['min_players']} such players" in await note.inner_text()
        assert await note.locator("a.method-link").get_attribute("href") == f"#endpoint-{endpoint}"
        assert await note.locator("code").inner_text() == tier7["method"]
        dash = page.locator(f"#strength-table tr[data-tank-id='{T34_1}'] td[data-col=rank] abbr.null-figure")
        title = await dash.get_attribute("title")
        assert f"({tier7['tanks'][4]['players']} players, {tier7['tanks'][4]['battles']} battles)" in title
        await page.locator("#explorer").screenshot(path=str(artifacts_dir / "site-strength.png"))

        # A type, then another period: each the API's answer.
        heavy = await data(http_client, base_url, "/api/v1/tanks/strength?region=eu&tier=7&days=30&type=heavyTank")
        assert [t["tank_id"] for t in heavy["tanks"]] == [t for t in order if t in (IS, TIGER)]
        await page.select_option("#form-strength select[name=type]", "heavyTank")
        await check_strength(page, heavy)
        await page.select_option("#form-strength select[name=type]", "")
        await page.select_option("#form-strength select[name=days]", "7")
        week = await data(http_client, base_url, "/api/v1/tanks/strength?region=eu&tier=7&days=7")
        assert [t["battles"] for t in week["tanks"]] != [t["battles"] for t in tier7["tanks"]]
        await check_strength(page, week)
        assert "days=7" in await page.evaluate("location.hash")

        # A tank opens its page over the list's period.
        await page.click(f"#strength-table tr[data-tank-id='{IS}'] th a")
        await page.wait_for_function(f"location.hash === '#tank/eu/{IS}/7'")
        await page.locator("#tank-figures").wait_for()
        assert await page.locator("#tank-title").inner_text() == "IS"
        assert not await page.locator("#panel-strength").is_visible()
        await page.go_back()
        await check_strength(page, week)
        assert await page.locator("#panel-strength").is_visible()

        # Phone width: the table scrolls in its own box.
        await page.set_viewport_size({"width": 390, "height": 844})
        await page.wait_for_function("document.documentElement.scrollWidth <= 391")
        assert browser.errors == [], browser.errors
