"""The human site (static/) in a real headless Chromium, driven by Playwright's async API.

Debian's /usr/bin/chromium is used as is (scripts/install_browser.sh installs it; we never
run `playwright install`). The app is served by pytest-tornado's http_server in the test's
io_loop; Playwright's async API runs on that same loop, so the server keeps answering while
the browser fetches. Screenshots go to tests/artifacts/ (git-ignored).
"""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess

import pytest
import tornado.httpserver
import tornado.netutil
import tornado.web
import ujson
from tornado.httpclient import HTTPRequest

from tests.helpers import ROOT

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DEMO_PLAYER = 500000001
UNCACHED_CLAN = 1


@pytest.fixture(scope="session")
def chromium_path():
    """Debian's Chromium; installed on first use when missing (root + apt-get), else skip."""
    if not os.access(CHROMIUM, os.X_OK):
        script = ROOT / "scripts" / "install_browser.sh"
        try:
            subprocess.run(
                ["bash", str(script)], check=False, timeout=900, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
        except (OSError, subprocess.SubprocessError):
            pass
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(
            f"{CHROMIUM} is absent and scripts/install_browser.sh could not install it "
            "(needs root and Debian's apt-get)"
        )
    return CHROMIUM


@pytest.fixture(scope="session")
def async_playwright(chromium_path):
    try:
        from playwright.async_api import async_playwright as factory
    except ImportError:
        pytest.fail(
            "the Python package `playwright` is missing: install the test extras (pip install -e '.[test]')",
            pytrace=False,
        )
    return factory


class Browser:
    """One Chromium per test, with console errors and page errors collected."""

    def __init__(self, factory, executable):
        self.factory = factory
        self.executable = executable
        self.errors: list[str] = []

    async def __aenter__(self):
        self.pw = await self.factory().start()
        self.browser = await self.pw.chromium.launch(
            executable_path=self.executable, args=CHROMIUM_ARGS, headless=True, timeout=30_000
        )
        return self

    async def page(self, width=1280, height=900):
        context = await self.browser.new_context(viewport={"width": width, "height": height})
        page = await context.new_page()
        page.set_default_timeout(20_000)
        page.on("console", lambda msg: msg.type == "error" and self.errors.append(f"console: {msg.text}"))
        page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        return page

    async def __aexit__(self, *exc):
        await self.browser.close()
        await self.pw.stop()


def site_url(http_port: int, hash_: str = "") -> str:
    return f"http://127.0.0.1:{http_port}/{hash_}"


async def get_json(http_client, base_url, path):
    response = await http_client.fetch(HTTPRequest(base_url + path, request_timeout=20), raise_error=False)
    return response, ujson.loads(response.body)


async def wait_ready(page):
    await page.wait_for_function("document.documentElement.dataset.ready === '1'")


# --------------------------------------------------------------------------------------------
@pytest.mark.gen_test(timeout=60)
async def test_page_renders_the_live_index_without_console_errors(
    app, http_client, base_url, http_port, async_playwright, chromium_path, artifacts_dir
):
    _, index = await get_json(http_client, base_url, "/api/v1")
    endpoints = index["data"]["endpoints"]
    async with Browser(async_playwright, chromium_path) as browser:
        page = await browser.page()
        await page.goto(site_url(http_port))
        await wait_ready(page)
        await page.wait_for_function(f"document.querySelectorAll('.endpoint').length === {len(endpoints)}")
        # Let any late script error surface before judging the console.
        await page.wait_for_timeout(300)
        assert browser.errors == [], browser.errors

        # Every endpoint of the index, with its own limit, cache age and parameters.
        for endpoint in endpoints:
            card = page.locator(f"#endpoint-{endpoint['name']}")
            assert await card.locator(".path").inner_text() == endpoint["path"]
            assert await card.locator(".limit-value").inner_text() == str(endpoint["rate_limit_per_minute"])
            assert f"max-age={endpoint['cache_max_age']}" in await card.inner_text()
            for param in endpoint["parameters"]:
                assert await card.locator("table.params code", has_text=param["name"]).count() >= 1
        limits = {e["name"]: e["rate_limit_per_minute"] for e in endpoints}
        assert {limits["player"], limits["history"], limits["weekly"], limits["online"]} == {30, 20, 10, 60}
        shown = await page.locator(".limit-value").all_inner_texts()
        assert {"30", "20", "10", "60"} <= set(shown)
        # Every error code with its status, and the attribution from meta.attribution.
        for error in index["data"]["errors"]:
            row = page.locator(f'#error-list tr[data-code="{error["code"]}"]')
            assert await row.count() == 1
            assert str(error["status"]) in await row.inner_text()
        assert await page.locator("#attribution-text").inner_text() == index["meta"]["attribution"]
        assert index["data"]["description"] in await page.locator("#intro-description").inner_text()
        await page.screenshot(path=str(artifacts_dir / "site-home.png"), full_page=True)

        # An invalid id is sent to the API and its own error is shown as it states it.
        _, bad = await get_json(http_client, base_url, "/api/v1/player/abc/eu")
        await page.goto(site_url(http_port, "#player/eu/abc"))
        error = page.locator("#player-out .error")
        await error.wait_for()
        assert await error.locator(".error-code").inner_text() == bad["error"]["code"] == "invalid_account_id"
        assert await error.locator(".error-message").inner_text() == bad["error"]["message"]
        assert "HTTP 400" in await error.inner_text()

        # Player counts and status render the API's answer, or its error, whatever it is now.
        await page.click("#tab-online")
        await page.wait_for_function("location.hash === '#online'")
        await page.locator("#online-now :is(.tiles, .chart-empty, .error)").first.wait_for()
        await page.locator("#online-history :is(svg, .chart-empty, .error)").first.wait_for()
        await page.screenshot(path=str(artifacts_dir / "site-online.png"), full_page=True)
        await page.click("#tab-status")
        await page.locator("#status-out :is(.generic, .error)").first.wait_for()

        # Days without samples (samples 0, null values) are gaps in the line. Checked against a
        # fixed answer, whatever the store holds right now.
        values = [100, 120, None, 90, 95, 99, None, 80]
        series = [
            {
                "date": (dt.date(2026, 1, 1) + dt.timedelta(days=i)).isoformat(),
                "samples": 0 if v is None else 60,
                "peak": v,
                "peak_minute": None,
                "min": v and v - 10,
                "avg": v and v - 5,
            }
            for i, v in enumerate(values)
        ]
        fixed = {
            "success": True,
            "meta": index["meta"],
            "data": {
                "game": "wot",
                "region": "eu",
                "days": 8,
                "from": series[0]["date"],
                "to": series[-1]["date"],
                "series": series,
            },
        }

        async def answer(route):
            await route.fulfill(status=200, content_type="application/json; charset=utf-8", body=ujson.dumps(fixed))

        await page.route("**/api/v1/online/history*", answer)
        await page.goto(site_url(http_port, "#online/wot/eu/7"))
        peak = page.locator("#online-chart .series.s-peak")
        await peak.wait_for()
        assert await peak.locator("path.line").count() == 2  # days 1-2 and 4-6
        assert await peak.locator("circle.lone").count() == 1  # day 8 alone
        assert await page.locator("#online-chart .series path.line").count() == 6  # peak, avg, min


@pytest.mark.gen_test(timeout=75)
async def test_player_live_fetch_then_ratings_and_history_chart(
    app, http_client, base_url, http_port, upstream_sim, async_playwright, chromium_path, artifacts_dir
):
    # A few earlier daily snapshots, consistent with the simulator's current totals, so the
    # history has a line to draw (the live fetch itself stores today's snapshot).
    response = await http_client.fetch(
        f"{upstream_sim}/wot/eu/wot/account/info/?application_id=test&account_id={DEMO_PLAYER}"
    )
    totals = ujson.loads(response.body)["data"][str(DEMO_PLAYER)]["statistics"]["all"]
    today = dt.datetime.now(dt.UTC).date()
    snapshots = []
    battles, wins, damage = totals["battles"], totals["wins"], totals["damage_dealt"]
    for back in range(1, 13):
        played = (back * 7) % 5 + 1
        battles, wins, damage = battles - played, wins - played // 2, damage - played * 180
        day = today - dt.timedelta(days=back)
        snapshots.append(
            {
                "region": "eu",
                "account_id": DEMO_PLAYER,
                "date": day.isoformat(),
                "taken_at": int(dt.datetime(day.year, day.month, day.day, 12, tzinfo=dt.UTC).timestamp()),
                "battles": battles,
                "wins": wins,
                "damage_dealt": damage,
                "frags": 900,
                "spotted": 950,
                "xp": 350000,
                "wn8": 800.0 + back * 3.5,
                "wn7": 450.0,
                "efficiency": 860.0,
            }
        )
    await app.settings["store"].players.save_snapshots(snapshots)

    async with Browser(async_playwright, chromium_path) as browser:
        page = await browser.page()
        await page.goto(site_url(http_port, f"#player/eu/{DEMO_PLAYER}"))
        # The first answer is a live fetch: ratings are announced as pending...
        await page.locator("#ratings-pending").wait_for(timeout=20_000)
        assert "fetched live" in await page.locator("#player-profile").inner_text()
        # ...and the page re-fetches by itself until WN8 arrives (the button does the same).
        wn8 = page.locator("#player-profile .tile.wn8 .tile-value")
        await page.wait_for_function(
            "() => /\\d/.test((document.querySelector('#player-profile .tile.wn8 .tile-value') || {}).textContent || '')",
            timeout=30_000,
        )
        assert re.fullmatch(r"[\d,]+(\.\d+)?", await wn8.inner_text())
        assert await page.locator("#ratings-pending").count() == 0
        classes = await page.locator("#player-profile .tile.wn8").get_attribute("class")
        assert re.search(
            r"wn8-(very_bad|bad|below_average|average|above_average|good|very_good|great|unicum|super_unicum)", classes
        )
        _, profile = await get_json(http_client, base_url, f"/api/v1/player/{DEMO_PLAYER}/eu")
        ratings = profile["data"]["ratings"]
        assert ratings["available"] is True
        assert f"wn8-{ratings['wn8_color']}" in classes.split()
        assert await page.locator("#player-profile .player-name").inner_text() == profile["data"]["nickname"]

        # The history chart: an inline SVG with a drawn line; the deltas table beside it.
        await page.locator("#player-chart svg path.line").first.wait_for()
        d = await page.locator("#player-chart svg path.line").first.get_attribute("d")
        assert d.startswith("M") and d.count("L") >= 10, d  # 12 earlier days + today
        await page.click("button.seg[data-metric='wn8']")
        await page.locator("#player-chart svg path.line").first.wait_for()
        assert await page.locator("button.seg[data-metric='wn8']").get_attribute("aria-pressed") == "true"
        deltas = await page.locator("#player-history table.deltas").inner_text()
        assert "7 days" in deltas and "90 days" in deltas
        await page.click("button.seg[data-metric='battles_per_day']")
        await page.locator("#player-chart svg path.line").first.wait_for()
        await page.screenshot(path=str(artifacts_dir / "site-player.png"), full_page=True)

        # Phone size: the layout fits the width (tables scroll inside their own boxes).
        await page.set_viewport_size({"width": 390, "height": 844})
        await page.wait_for_timeout(400)  # charts redraw on resize
        assert await page.evaluate("document.documentElement.scrollWidth") <= 391
        chart_width = await page.evaluate("document.querySelector('#player-chart svg').getBoundingClientRect().width")
        assert 200 < chart_width <= 390
        await page.locator("#explorer").screenshot(path=str(artifacts_dir / "site-player-phone.png"))
        assert browser.errors == [], browser.errors


CROSS_ORIGIN_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>other origin</title></head>
<body><p>A page on another origin.</p><script>
window.probe = async function (url, headers) {
  const r = await fetch(url, {cache: 'no-store', headers: headers || {}});
  let body = null;
  try { body = await r.json(); } catch (e) { body = null; }
  return {status: r.status, body: body,
          retryAfter: r.headers.get('Retry-After'), limit: r.headers.get('X-RateLimit-Limit'),
          remaining: r.headers.get('X-RateLimit-Remaining'), rateLimit: r.headers.get('RateLimit'),
          policy: r.headers.get('RateLimit-Policy'), contentType: r.headers.get('Content-Type')};
};
</script></body></html>"""


class CrossOriginPage(tornado.web.RequestHandler):
    def get(self):
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish(CROSS_ORIGIN_PAGE)


@pytest.mark.gen_test(timeout=60)
async def test_cross_origin_page_reads_body_and_rate_limit_headers(
    app, http_server, http_port, async_playwright, chromium_path
):
    sockets = tornado.netutil.bind_sockets(0, "127.0.0.1")
    other_port = sockets[0].getsockname()[1]
    other = tornado.httpserver.HTTPServer(tornado.web.Application([(r"/", CrossOriginPage)]))
    other.add_sockets(sockets)
    api = f"http://localhost:{http_port}/api/v1"
    try:
        async with Browser(async_playwright, chromium_path) as browser:
            page = await browser.page()
            await page.goto(f"http://127.0.0.1:{other_port}/")
            assert await page.evaluate("location.origin") != f"http://localhost:{http_port}"

            status = await page.evaluate("url => window.probe(url)", f"{api}/status")
            assert status["status"] == 200 and status["body"]["success"] is True
            assert "health" in status["body"]["data"]
            assert status["limit"] == "60"
            assert re.fullmatch(r'"status";r=\d+;t=\d+', status["rateLimit"]), status["rateLimit"]
            assert status["policy"] == '"status";q=60;w=60'
            assert status["contentType"].startswith("application/json")
            assert status["retryAfter"] is None

            # A non-safelisted request header forces a CORS preflight; it must pass too.
            preflighted = await page.evaluate(
                "url => window.probe(url, {'If-None-Match': '\"nope\"'})", f"{api}/status"
            )
            assert preflighted["status"] == 200 and preflighted["body"]["success"] is True

            # Exhaust the weekly digest's 10/min: the 11th answer is a 429 whose Retry-After
            # and rate-limit headers the page's JavaScript can read.
            answers = await page.evaluate(
                """async url => {
                const out = [];
                for (let i = 0; i < 11; i++) out.push(await window.probe(url));
                return out;
            }""",
                f"{api}/clan/{UNCACHED_CLAN}/eu/weekly",
            )
            for answer in answers[:10]:
                assert answer["status"] in (200, 404), answer
                assert answer["limit"] == "10" and answer["retryAfter"] is None
            last = answers[10]
            assert last["status"] == 429
            assert last["body"] == {
                "success": False,
                "error": {"code": "rate_limited", "message": last["body"]["error"]["message"]},
            }
            assert last["retryAfter"] is not None and 1 <= int(last["retryAfter"]) <= 120
            assert last["limit"] == "10" and last["remaining"] == "0"
            assert re.fullmatch(r'"weekly";r=0;t=\d+', last["rateLimit"]), last["rateLimit"]
            # 404/429 answers are logged by Chromium as failed loads; nothing else may fail.
            assert all(e.startswith("console: Failed to load resource") for e in browser.errors), browser.errors
    finally:
        other.stop()


@pytest.mark.gen_test(timeout=60)
async def test_rate_limited_view_shows_a_live_countdown(
    app, http_client, base_url, http_port, async_playwright, chromium_path, artifacts_dir
):
    # The site and this client share 127.0.0.1, so exhausting the limit here limits the page.
    path = f"/api/v1/clan/{UNCACHED_CLAN}/eu/weekly"
    for _ in range(10):
        response, _ = await get_json(http_client, base_url, path)
        assert response.code in (200, 404)
    response, limited = await get_json(http_client, base_url, path)
    assert response.code == 429
    _, details = await get_json(http_client, base_url, f"/api/v1/clan/{UNCACHED_CLAN}/eu")

    async with Browser(async_playwright, chromium_path) as browser:
        page = await browser.page()
        await page.goto(site_url(http_port, f"#clan/eu/{UNCACHED_CLAN}"))
        weekly = page.locator("#clan-weekly .error")
        await weekly.wait_for()
        assert await weekly.locator(".error-code").inner_text() == "rate_limited"
        assert await weekly.locator(".error-message").inner_text() == limited["error"]["message"]
        assert "HTTP 429" in await weekly.inner_text()
        # The clan itself answers whatever the API says now (clan_not_cached for an unknown clan).
        if details["success"]:
            await page.locator("#clan-details .clan").wait_for()
        else:
            code = page.locator("#clan-details .error-code")
            await code.wait_for()
            assert await code.inner_text() == details["error"]["code"]

        countdown = weekly.locator(".countdown-value")
        await countdown.wait_for()
        first = int(await countdown.inner_text())
        assert 1 <= first <= 120  # the sliding window can ask for a little over 60 s
        assert await weekly.locator("button", has_text="Retry").is_disabled()
        await page.screenshot(path=str(artifacts_dir / "site-rate-limited.png"), full_page=False)
        await page.wait_for_timeout(2300)
        if await countdown.count():  # unless the wait ended meanwhile
            second = int(await countdown.inner_text())
            assert second < first, (first, second)
        else:
            assert first <= 3
