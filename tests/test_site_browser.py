"""The human site (static/) in a real headless Chromium, driven by Playwright's async API.

Debian's /usr/bin/chromium is used as is (scripts/install_browser.sh installs it; we never
run `playwright install`). The app is served by pytest-tornado's http_server in the test's
io_loop; Playwright's async API runs on that same loop, so the server keeps answering while
the browser fetches. Screenshots go to tests/artifacts/ (git-ignored).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import re
import subprocess
import time

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


def hold_the_rate_window(app):
    """Stop the rate limiter's clock for this test: its requests and the page's then fall in one
    window, however slowly a busy machine starts the browser (a window edge between exhausting the
    limit and the page's request let the page through, and it saw the clan's own answer)."""
    frozen = time.time()
    app.settings["limiter"].clock = lambda: frozen


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
        page.on(
            "console",
            lambda msg: (
                msg.type == "error" and self.errors.append(f"console: {msg.text} [{msg.location.get('url', '')}]")
            ),
        )
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
        # The reference below the explorer is drawn as it nears the screen, not with the first view.
        await page.locator("#endpoints").scroll_into_view_if_needed()
        await page.wait_for_function(f"document.querySelectorAll('.endpoint').length === {len(endpoints)}")
        # Let any late script error surface before judging the console.
        await page.wait_for_timeout(300)
        assert browser.errors == [], browser.errors

        # Limits come from the index, not from the page: the longest online history offered is
        # the index's maximum for days.
        online = next(e for e in endpoints if e["name"] == "online_history")
        longest = next(p for p in online["parameters"] if p["name"] == "days")["maximum"]
        offered = await page.locator("#form-online select[name=days] option").evaluate_all(
            "options => options.map(o => Number(o.value))"
        )
        assert offered[-1] == longest and all(d < longest for d in offered[:-1])

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

        # An address with an anchor into the reference opens there: the reference is drawn first.
        anchored = await browser.page(width=390, height=844)
        await anchored.goto(site_url(http_port, "#endpoint-tank_marks"))
        await wait_ready(anchored)
        await anchored.locator("#endpoint-tank_marks").wait_for()
        top = await anchored.evaluate("document.getElementById('endpoint-tank_marks').getBoundingClientRect().top")
        assert 0 <= top < 844, top

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


@pytest.mark.gen_test(timeout=60)
async def test_forms_wait_for_the_index_and_take_its_defaults(
    app, http_client, base_url, http_port, async_playwright, chromium_path
):
    """Regions, games, the demo ids and the online form's defaults are the index's: while it has
    not answered, the forms are empty and cannot be sent; then they hold what it says."""
    _, index = await get_json(http_client, base_url, "/api/v1")
    endpoints = {e["name"]: e for e in index["data"]["endpoints"]}
    online = {p["name"]: p for p in endpoints["online_history"]["parameters"]}
    release = asyncio.Event()

    async def slow_index(route):
        await release.wait()
        await fulfill(route, index)

    async with Browser(async_playwright, chromium_path) as browser:
        page = await browser.page()
        await page.route("**/api/v1", slow_index)
        await page.goto(site_url(http_port))
        await page.locator("#index-status").wait_for()
        assert await page.locator("#form-player select[name=region] option").count() == 0
        assert await page.locator("#form-player button[type=submit]").is_disabled()
        assert await page.locator("#form-online button[type=submit]").is_disabled()
        assert "Demo:" not in await page.locator("#hint-player").inner_text()
        release.set()
        await wait_ready(page)
        regions = await page.locator("#form-player select[name=region] option").evaluate_all(
            "os => os.map(o => o.value)"
        )
        assert regions == index["data"]["regions"]
        assert await page.locator("#form-player button[type=submit]").is_enabled()
        # The demo player is the player endpoint's example; the online form starts on the
        # online_history example's values, each one its parameter allows.
        example = endpoints["player"]["example"]
        assert await page.locator("#form-player input[name=id]").input_value() == example.split("/")[-2]
        assert f"#player/{example.split('/')[-1]}/{example.split('/')[-2]}" in await page.locator(
            "#hint-player a"
        ).get_attribute("href")
        query = dict(q.split("=") for q in endpoints["online_history"]["example"].split("?")[1].split("&"))
        for name in ("game", "region"):
            value = await page.locator(f"#form-online select[name={name}]").input_value()
            assert value == query[name] and value in online[name]["enum"], name
        assert await page.locator("#form-online select[name=days]").input_value() == query["days"]
        assert browser.errors == [], browser.errors

        # While the demo seeds (/status's demo), every view says so with its progress, asking
        # again every few seconds; once ready the banner goes and the view is drawn again.
        _, status = await get_json(http_client, base_url, "/api/v1/status")
        assert status["data"]["demo"] is None and await page.locator("#seeding-banner").count() == 0
        demo = {"state": "seeding", "phase": "current profiles", "done": 12, "total": 40, "percent": 41.5,
                "started_at": "2026-12-02T10:00:00Z", "finished_at": None}  # fmt: skip

        async def serve_status(route):
            await fulfill(route, {**status, "data": {**status["data"], "demo": dict(demo)}})

        seeding = await browser.page(width=390, height=844)
        await seeding.route("**/api/v1/status", serve_status)
        await seeding.goto(site_url(http_port, "#tanks"))
        banner = seeding.locator("#seeding-banner")
        await banner.wait_for()
        assert await banner.get_attribute("role") == "status" and await banner.get_attribute("aria-live") == "polite"
        text = await banner.inner_text()
        assert "41.5 %" in text and "current profiles (12 of 40)" in text, text
        demo.update(phase="player counts (30 days)", done=300, total=500, percent=90.1)
        await seeding.wait_for_function("document.querySelector('#seeding-text').textContent.includes('90.1 %')")
        assert "player counts (30 days) (300 of 500)" in await banner.inner_text()
        await seeding.evaluate("window.drawnBefore = document.querySelector('#tanks-out').firstElementChild")
        demo.update(state="ready", phase="done", percent=100.0, finished_at="2026-12-02T10:04:00Z")
        await banner.wait_for(state="hidden")
        await seeding.wait_for_function(
            "document.querySelector('#tanks-out').firstElementChild !== window.drawnBefore"
        )  # the view asked again
        assert only_failed_loads(browser.errors, {404}) == [], browser.errors  # no tank statistics built here


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
        # The tank table asks GET .../tanks, which answers 404 (no per-tank records for this
        # player); Chromium logs that failed load, and the page shows it as a message.
        await page.locator("#player-tanks :is(.error, table.tanks, .tanks-empty)").first.wait_for()
        unexpected = [e for e in browser.errors if not re.search(r"Failed to load resource.*404.*/tanks\?days=", e)]
        assert unexpected == [], browser.errors


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
    hold_the_rate_window(app)
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
    hold_the_rate_window(app)
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
        # The value counts down (or the wait ends, when it was nearly over): read it in one step,
        # so a countdown that finishes between two reads cannot stall the test.
        await page.wait_for_function(
            "first => { const v = document.querySelector('#clan-weekly .countdown-value');"
            " return !v || Number(v.textContent) < first; }",
            arg=first,
        )


# --------------------------------------------------------------------------------------------
# Issue 15, item 4: nickname search, recents panel, per-tank table, period WN8 on the chart.
# The hand-built answers (page.route) below give the site known figures, periods without data
# and every error answer, to check its formatting and messages exactly; the last test of the
# file reads real answers over six weeks of real tracking.

SECOND_PLAYER = 500000002
FAILED_LOAD = re.compile(r"^console: Failed to load resource: the server responded with a status of (\d+)")


def envelope(data):
    meta = {"source": "test", "version": "v1", "generated": "2026-01-01T00:00:00+00:00", "attribution": "test data"}
    return {"success": True, "meta": meta, "data": data}


def failure(code, message):
    return {"success": False, "error": {"code": code, "message": message}}


async def fulfill(route, body, status=200, headers=None):
    await route.fulfill(
        status=status,
        content_type="application/json; charset=utf-8",
        headers={"Cache-Control": "no-store", **(headers or {})},
        body=ujson.dumps(body),
    )


def only_failed_loads(errors, statuses, tanks_404=False):
    """Console errors other than Chromium's own log of an HTTP error answer the test served
    (and, with tanks_404, of the real tanks endpoint's 404: no per-tank records yet; and of the
    real session's 404 the player page's "today" meets for an account without records)."""

    def expected(error):
        m = FAILED_LOAD.match(error)
        if not m:
            return False
        if m.group(1) == "404" and "/session?since=today" in error:
            return True
        return int(m.group(1)) in statuses or (tanks_404 and m.group(1) == "404" and "/tanks?days=" in error)

    return [e for e in errors if not expected(e)]


async def sim_nickname(http_client, upstream_sim, account_id):
    response = await http_client.fetch(
        f"{upstream_sim}/wot/eu/wot/account/info/?application_id=test&account_id={account_id}"
    )
    return ujson.loads(response.body)["data"][str(account_id)]["nickname"]


@pytest.mark.gen_test(timeout=90)
async def test_nickname_search_lists_players_and_picking_one_opens_the_player_view(
    app, http_client, upstream_sim, http_port, async_playwright, chromium_path, artifacts_dir
):
    """Real: the site, the index and the picked players' profiles (live-fetched from the
    simulator). Hand-built: the answers of GET /players?search= (known results), including
    its 400 invalid_search, 429 with Retry-After and 503 answers: the page's own check matches the API's rule, so only a served answer can show the API's
    400 on the page."""
    nickname = await sim_nickname(http_client, upstream_sim, DEMO_PLAYER)
    second = await sim_nickname(http_client, upstream_sim, SECOND_PLAYER)
    searches = []

    async def players(route):
        query = dict(re.findall(r"[?&]([^=&]+)=([^&]*)", route.request.url))
        searches.append(query)
        text = query.get("search", "")
        if text == "zzz_bad":
            await fulfill(route, failure("invalid_search", "search must be 3-24 characters of a nickname"), 400)
        elif text == "busy":
            await fulfill(route, failure("rate_limited", "Too many requests."), 429, {"Retry-After": "42"})
        elif text == "down":
            await fulfill(route, failure("upstream_unavailable", "The data source is unavailable."), 503)
        elif text == "nobody":
            await fulfill(route, envelope({"search": text, "region": None, "source": "upstream", "results": []}))
        else:
            results = [
                {"account_id": DEMO_PLAYER, "nickname": nickname, "region": "eu", "tracked": True},
                {"account_id": SECOND_PLAYER, "nickname": second, "region": "eu", "tracked": False},
            ]
            await fulfill(route, envelope({"search": text, "region": "eu", "source": "tracked", "results": results}))

    async with Browser(async_playwright, chromium_path) as browser:
        page = await browser.page()
        await page.route("**/api/v1/players?*", players)
        await page.goto(site_url(http_port))
        await wait_ready(page)
        box = page.locator("#search-input")
        assert await box.get_attribute("role") == "combobox"
        assert await page.locator("label", has=box).inner_text() == "Nickname"

        # Too short, then a character no nickname has: a message, and no request.
        await box.fill("ab")
        await page.locator("#search-status .search-message.short").wait_for()
        await box.fill("ab$c")
        invalid = page.locator("#search-status .search-message.invalid")
        await invalid.wait_for()
        assert "“$” cannot be part of a nickname" in await invalid.inner_text()
        assert searches == []

        # A prefix lists the players; the region filter goes along.
        await page.select_option("#search-region", "eu")
        await box.fill("Dem")
        options = page.locator("#search-results [role=option]")
        await page.wait_for_function("document.querySelectorAll('#search-results [role=option]').length === 2")
        assert searches[-1] == {"search": "Dem", "region": "eu"}
        assert await box.get_attribute("aria-expanded") == "true"
        assert nickname in await options.nth(0).inner_text()
        assert "tracked" in await options.nth(0).inner_text()
        assert "2 players found" in await page.locator("#search-status").inner_text()
        await page.screenshot(path=str(artifacts_dir / "site-search.png"), full_page=False)

        # Keyboard: down, down, up selects the first; Enter opens its player view.
        await box.press("ArrowDown")
        await box.press("ArrowDown")
        assert await options.nth(1).get_attribute("aria-selected") == "true"
        assert await box.get_attribute("aria-activedescendant") == "search-option-1"
        await box.press("ArrowUp")
        assert await options.nth(0).get_attribute("aria-selected") == "true"
        await box.press("Enter")
        await page.wait_for_function(f"location.hash === '#player/eu/{DEMO_PLAYER}'")
        assert await page.locator("#search-results").is_hidden()
        assert await box.get_attribute("aria-expanded") == "false"
        assert await box.input_value() == nickname
        name = page.locator("#player-profile .player-name")
        await name.wait_for()
        assert await name.inner_text() == nickname

        # Mouse: a click on the second result opens that player.
        await box.fill("Sec")
        await page.wait_for_function("document.querySelectorAll('#search-results [role=option]').length === 2")
        await options.nth(1).click()
        await page.wait_for_function(f"location.hash === '#player/eu/{SECOND_PLAYER}'")
        assert await page.locator("#form-player input[name=id]").input_value() == str(SECOND_PLAYER)
        await page.locator("#player-profile .player-name").wait_for()
        assert await page.locator("#player-profile .player-name").inner_text() == second

        # The API's error answers are messages, never a broken page.
        await box.fill("zzz_bad")
        error = page.locator("#search-status .error")
        await error.wait_for()
        assert await error.locator(".error-code").inner_text() == "invalid_search"
        assert "HTTP 400" in await error.inner_text()
        assert "3 to 24 letters" in await error.locator(".error-plain").inner_text()
        assert await page.locator("#search-results").is_hidden()

        await box.fill("busy")
        await page.locator("#search-status .error[data-code=rate_limited] .countdown-value").wait_for()
        assert 1 <= int(await page.locator("#search-status .countdown-value").inner_text()) <= 42
        assert await page.locator("#search-status .error button", has_text="Retry").is_disabled()

        await box.fill("down")
        await page.locator("#search-status .error[data-code=upstream_unavailable]").wait_for()
        assert "unavailable for the moment" in await page.locator("#search-status .error-plain").inner_text()

        await box.fill("nobody")
        await page.locator("#search-status .search-message.none").wait_for()
        assert "No player name starts with “nobody”" in await page.locator("#search-status").inner_text()
        assert [s["search"] for s in searches] == ["Dem", "Sec", "zzz_bad", "busy", "down", "nobody"]

        # Phone width: the search and its results fit.
        await box.fill("Dem")
        await page.wait_for_function("document.querySelectorAll('#search-results [role=option]').length === 2")
        await page.set_viewport_size({"width": 390, "height": 844})
        assert await page.evaluate("document.documentElement.scrollWidth") <= 391
        assert only_failed_loads(browser.errors, {400, 429, 503}, tanks_404=True) == [], browser.errors


def figures(battles, wins, avg_damage, wn8, wn7, eff, start, end):
    return {
        "from": start,
        "to": end,
        "battles": battles,
        "wins": wins,
        "win_rate": round(100 * wins / battles, 2) if battles else None,
        "avg_damage": avg_damage if battles else None,
        "avg_frags": 0.9 if battles else None,
        "avg_spotted": 1.1 if battles else None,
        "avg_defence": 0.4 if battles else None,
        "avg_xp": 600 if battles else None,
        "survival_rate": 31.5 if battles else None,
        "hit_rate": 72.0 if battles else None,
        "average_tier": 8.4 if battles else None,
        "wn8": wn8 if battles else None,
        "wn7": wn7 if battles else None,
        "efficiency": eff if battles else None,
    }


def weekly_answer(today, wn8s):
    """`weekly` of a 90-day history: 13 weeks ending today, oldest first; a wn8 of None is a week
    without battles, the string "none" a week before the per-tank records (a null entry)."""
    weeks = []
    for k, wn8 in enumerate(wn8s):
        end = today - dt.timedelta(days=7 * (len(wn8s) - 1 - k))
        start = end - dt.timedelta(days=7)
        battles = 0 if wn8 is None else 40 + k
        weeks.append(
            None
            if wn8 == "none"
            else figures(battles, battles // 2, 1800.0, wn8, 1400.0, 1500.0, start.isoformat(), end.isoformat())
        )
    return weeks


def history_answer(today, periods, weekly=None):
    """A 90-day history with career WN8 per day, the deltas' period figures and `weekly` given."""
    snapshots = []
    for back in range(89, -1, -1):
        day = (today - dt.timedelta(days=back)).isoformat()
        snapshots.append({"date": day, "battles": 20000 - back * 10, "wins": 10400 - back * 5, "wn8": 1500.0 - back})
    deltas = {}
    for key, days in (("7d", 7), ("30d", 30), ("90d", 89)):
        start = (today - dt.timedelta(days=days)).isoformat()
        deltas[key] = {
            "from": start,
            "to": today.isoformat(),
            "battles": days * 10,
            "wins": days * 5,
            "win_rate": 50.0,
            "avg_damage": 1500.0,
            "avg_frags": 1.0,
            "avg_xp": 600.0,
            "wn8_change": 3.5,
            "win_rate_change": 0.01,
            "period": periods.get(key),
        }
        if periods.get(key) == "no_delta":
            deltas[key] = None
    deltas["recent_1000"] = periods.get("recent_1000")
    return envelope(
        {
            "account_id": DEMO_PLAYER,
            "region": "eu",
            "days": 90,
            "first_date": snapshots[0]["date"],
            "last_date": snapshots[-1]["date"],
            "snapshot_count": len(snapshots),
            "snapshots": snapshots,
            "deltas": deltas,
            "weekly": weekly,
        }
    )


def tank(tank_id, name, tier, battles, wins, damage, wn8, career_battles, career_wn8):
    return {
        "tank_id": tank_id,
        "name": name,
        "tier": tier,
        "type": "mediumTank",
        "nation": "germany",
        "career": {
            "battles": career_battles,
            "wins": career_battles // 2,
            "win_rate": 50.0,
            "avg_damage": 1400.0,
            "wn8": career_wn8,
        },
        "period": {
            "battles": battles,
            "wins": wins,
            "damage_dealt": damage,
            "frags": battles,
            "spotted": battles,
            "dropped_capture_points": 0,
            "capture_points": 0,
            "xp": battles * 600,
            "survived_battles": battles // 3,
            "win_rate": round(100 * wins / battles, 2) if battles else None,
            "avg_damage": round(damage / battles, 2) if battles else None,
            "avg_frags": 1.0 if battles else None,
            "wn8": wn8,
        },
    }


TANKS = {
    30: [
        tank(1, "Tiger II", 8, 40, 22, 80000, 1850.0, 900, 1700.0),
        tank(2, "Leopard 1", 10, 12, 5, 36000, 2480.5, 300, 2100.0),
        tank(3, "E 75", 9, 25, 14, 50000, 410.0, 1200, 1300.0),
        tank(4, "Pz.Kpfw. IV", 5, 3, 1, 2400, None, 60, 700.0),
    ],
    7: [
        tank(2, "Leopard 1", 10, 4, 3, 13000, 3100.0, 300, 2100.0),
        tank(1, "Tiger II", 8, 9, 4, 17000, 1500.0, 900, 1700.0),
    ],
    # More tanks than a page of the table (static/js/tanks.js, TANK_PAGE = 25): 30, battles 90 down to 61.
    90: [tank(1, "Tiger II", 8, 90, 50, 180000, 1800.0, 900, 1700.0)]
    + [tank(100 + i, f"Tank {i:02d}", 5 + i % 6, 89 - i, 40, 100000, 1500.0, 500, 1500.0) for i in range(29)],
}


def tanks_answer(days, today):
    tanks = TANKS[days]
    battles = sum(t["period"]["battles"] for t in tanks)
    wins = sum(t["period"]["wins"] for t in tanks)
    damage = sum(t["period"]["damage_dealt"] for t in tanks)
    return envelope(
        {
            "account_id": DEMO_PLAYER,
            "region": "eu",
            "days": days,
            "from": (today - dt.timedelta(days=days)).isoformat(),
            "to": today.isoformat(),
            "expected_values_version": "test-1",
            "period": {
                "battles": battles,
                "wins": wins,
                "win_rate": round(100 * wins / battles, 2),
                "avg_damage": round(damage / battles, 2),
                "average_tier": 8.6,
                "wn8": 1640.0,
                "wn7": 1300.0,
                "efficiency": 1450.0,
            },
            "tanks": tanks,
        }
    )


async def assert_weekly_points(page, weekly, first_date=None):
    """The chart's weekly points are the API's weeks with a WN8 (on each week's last day), in order."""
    expected = [
        (week["to"], week["wn8"])
        for week in weekly
        if week is not None and week["battles"] and week["wn8"] is not None
        and (first_date is None or week["to"] >= first_date)
    ]  # fmt: skip
    points = await page.locator("#player-chart .series.weekly circle").evaluate_all(
        "cs => cs.map(c => [c.getAttribute('data-date'), Number(c.getAttribute('data-value'))])"
    )
    assert len(points) == len(expected) and expected, (points, expected)
    for (date, value), (want_date, want) in zip(points, expected):
        assert date == want_date and value == pytest.approx(want, abs=1e-9), (points, expected)


async def column(page, key):
    return await page.locator(f"#tank-table tbody tr [data-col={key}]").all_inner_texts()


async def every_page(page, key):
    """A column of the player's tank table over all its pages (Next until the last), in order."""
    values = await column(page, key)
    following = page.locator("#player-tanks nav.pager button[data-page=next]")
    while await following.count() and await following.is_enabled():
        await following.click()
        values += await column(page, key)
    return values


@pytest.mark.gen_test(timeout=90)
async def test_recents_panel_tank_table_and_period_wn8_chart(
    app, http_server, http_port, async_playwright, chromium_path, artifacts_dir
):
    """Real: the site, the index and the player's profile (live-fetched from the simulator).
    Hand-built: GET .../history (so its deltas carry known `period` figures and `recent_1000`,
    which need per-tank records the tracker has not fetched in a test) and GET .../tanks with known
    figures, both shaped as the contract states."""
    today = dt.datetime.now(dt.UTC).date()
    day = lambda back: (today - dt.timedelta(days=back)).isoformat()  # noqa: E731
    full = {
        "7d": figures(64, 38, 2012.5, 2310.0, 1720.0, 1810.0, day(7), day(0)),
        "30d": figures(210, 113, 1804.25, 1580.0, 1400.0, 1500.0, day(30), day(0)),
        "90d": figures(640, 333, 1650.0, 890.0, 1100.0, 1200.0, day(89), day(0)),
        "recent_1000": figures(1000, 524, 1701.0, 2950.0, 1900.0, 1990.0, day(140), day(0)),
    }
    weekly_wn8 = ["none", "none", "none", 1500.0, 1620.5, None, 1710.0, 1800.0, 1650.25, 1900.0, 2100.0, 2050.0, 2310.0]
    weekly = weekly_answer(today, weekly_wn8)
    history = {"answer": history_answer(today, full, weekly)}
    tank_requests = []

    async def serve_history(route):
        await fulfill(route, history["answer"])

    async def serve_tanks(route):
        days = int(re.search(r"[?&]days=(\d+)", route.request.url).group(1))
        tank_requests.append(days)
        await fulfill(route, tanks_answer(days, today))

    async with Browser(async_playwright, chromium_path) as browser:
        page = await browser.page()
        await page.route(f"**/api/v1/player/{DEMO_PLAYER}/eu/history?*", serve_history)
        await page.route(f"**/api/v1/player/{DEMO_PLAYER}/eu/tanks?*", serve_tanks)
        await page.goto(site_url(http_port, f"#player/eu/{DEMO_PLAYER}"))

        # Recents: a card per period (1, 3, 7, 14, 30, 60 and 90 days, the last 100 and 1,000
        # battles); the four this answer has figures for show them, WN8 coloured by the usual scale.
        cards = page.locator("#player-recents section.recent")
        await cards.first.wait_for()
        assert await cards.count() == 9
        for key in ("1d", "3d", "14d", "60d"):
            card = page.locator(f"#player-recents section.recent.empty[data-period='{key}']")
            assert "No daily snapshot that old" in await card.inner_text()
        card = page.locator("#player-recents section.recent.empty[data-period='recent_100']")
        assert "Needs per-tank records reaching 100 battles back" in await card.inner_text()
        expected = {
            "7d": ("7 days", "64", "59.38 %", "2,012.5", "2,310", "great", "1,720", "1,810"),
            "30d": ("30 days", "210", "53.81 %", "1,804.25", "1,580", "good", "1,400", "1,500"),
            "90d": ("90 days", "640", "52.03 %", "1,650", "890", "average", "1,100", "1,200"),
            "recent_1000": (
                "Last 1,000 battles",
                "1,000",
                "52.4 %",
                "1,701",
                "2,950",
                "super_unicum",
                "1,900",
                "1,990",
            ),
        }
        for key, (title, battles, rate, damage, wn8, colour, wn7, eff) in expected.items():
            card = page.locator(f"#player-recents section.recent[data-period='{key}']")
            assert await card.locator("h5").inner_text() == title
            value = lambda field: card.locator(f".fig[data-field={field}] dd")  # noqa: E731
            assert await value("battles").inner_text() == battles
            assert await value("win_rate").inner_text() == rate
            assert await value("avg_damage").inner_text() == damage
            assert await value("wn8").inner_text() == wn8
            assert f"wn8-{colour}" in (await value("wn8").locator("span").get_attribute("class")).split()
            assert await value("wn7").inner_text() == wn7
            assert await value("efficiency").inner_text() == eff
        assert await page.locator("#player-recents .recent-figures dt").all_inner_texts() == [
            "Battles", "Win rate", "Avg. damage", "WN8", "WN7", "EFF"
        ] * 4  # fmt: skip
        # The changes table keeps to the changes (the period figures are the panel's).
        deltas = await page.locator("#player-history table.deltas").inner_text()
        assert "Wn8 change" in deltas or "WN8 change" in deltas
        assert "recent" not in deltas.lower() and "Period:" not in deltas

        # Tank table: 30 days first, most battles first.
        await page.locator("#tank-table").wait_for()
        assert tank_requests == [30]
        assert await page.locator("#tank-period button[data-days='30']").get_attribute("aria-pressed") == "true"
        names = lambda: page.locator("#tank-table tbody th.tank-name").all_inner_texts()  # noqa: E731
        assert [n.split(" Germany")[0] for n in await names()] == ["Tiger II", "E 75", "Leopard 1", "Pz.Kpfw. IV"]
        assert await page.locator("#tank-table th[data-sort=period_battles]").get_attribute("aria-sort") == "descending"
        assert await column(page, "period_battles") == ["40", "25", "12", "3"]
        assert await column(page, "period_win_rate") == ["55 %", "56 %", "41.67 %", "33.33 %"]
        wn8_cells = page.locator("#tank-table tbody tr [data-col=period_wn8] span")
        assert await wn8_cells.nth(0).get_attribute("data-wn8") == "very_good"
        assert await wn8_cells.nth(1).get_attribute("data-wn8") == "bad"
        assert "1,640" in await page.locator("#player-tanks .tank-summary").inner_text()

        await page.click("#tank-table button.sort[data-sort=name]")
        assert await page.locator("#tank-table th[data-sort=name]").get_attribute("aria-sort") == "ascending"
        assert [n.split(" Germany")[0] for n in await names()] == ["E 75", "Leopard 1", "Pz.Kpfw. IV", "Tiger II"]
        await page.click("#tank-table button.sort[data-sort=name]")
        assert await page.locator("#tank-table th[data-sort=name]").get_attribute("aria-sort") == "descending"
        assert [n.split(" Germany")[0] for n in await names()] == ["Tiger II", "Pz.Kpfw. IV", "Leopard 1", "E 75"]
        await page.click("#tank-table button.sort[data-sort=period_wn8]")
        assert await column(page, "period_wn8") == ["2,480.5", "1,850", "410", "—"]  # no WN8: last
        await page.click("#tank-table button.sort[data-sort=tier]")
        assert await column(page, "tier") == ["10", "9", "8", "5"]
        await page.click("#tank-table button.sort[data-sort=career_battles]")
        assert await column(page, "career_battles") == ["1,200", "900", "300", "60"]
        await page.click("#tank-table button.sort[data-sort=period_avg_damage]")
        assert await column(page, "period_avg_damage") == ["3,000", "2,000", "2,000", "800"]
        await page.click("#tank-table button.sort[data-sort=period_win_rate]")
        assert await column(page, "period_win_rate") == ["56 %", "55 %", "41.67 %", "33.33 %"]

        # The period selector asks again with the new days; the chosen sort is kept.
        await page.click("#tank-period button[data-days='7']")
        await page.wait_for_function("document.querySelectorAll('#tank-table tbody tr').length === 2")
        assert tank_requests == [30, 7]
        assert await page.locator("#tank-period button[data-days='7']").get_attribute("aria-pressed") == "true"
        assert await page.locator("#tank-period button[data-days='30']").get_attribute("aria-pressed") == "false"
        assert await column(page, "period_win_rate") == ["75 %", "44.44 %"]
        assert "Last 7 days" in await page.locator("#player-tanks .tank-summary").inner_text()
        await page.click("#tank-period button[data-days='90']")
        # 30 tanks: a page of 25, most battles first, and a pager; sorting orders all 30, from page 1.
        await page.wait_for_function("document.querySelectorAll('#tank-table tbody tr').length === 25")
        assert tank_requests == [30, 7, 90]
        pager = page.locator("#player-tanks nav.pager")
        assert await pager.locator(".pager-text").inner_text() == "Tanks 1–25 of 30"
        assert await pager.locator("button[data-page=prev]").is_disabled()
        assert (await column(page, "period_win_rate"))[:3] == ["65.57 %", "64.52 %", "63.49 %"]  # the sort kept
        await page.click("#tank-table button.sort[data-sort=period_battles]")  # most battles first
        assert await column(page, "period_battles") == [str(b) for b in range(90, 65, -1)]
        await pager.locator("button[data-page=next]").click()
        assert await pager.locator(".pager-text").inner_text() == "Tanks 26–30 of 30"
        assert await column(page, "period_battles") == ["65", "64", "63", "62", "61"]
        assert await pager.locator("button[data-page=next]").is_disabled()
        assert await page.evaluate("document.activeElement.dataset.page") == "prev"  # focus stays on the pager
        await page.click("#tank-table button.sort[data-sort=period_battles]")  # ascending: the fewest first
        assert await pager.locator(".pager-text").inner_text() == "Tanks 1–25 of 30"
        assert (await column(page, "period_battles"))[:3] == ["61", "62", "63"]

        # The history chart plots one WN8 point per week (from `weekly`) over the career WN8: a
        # week without battles breaks the line, weeks before the per-tank records have no point.
        await page.click("button.seg[data-metric='period_wn8']")
        await page.locator("#player-chart .series.weekly circle").first.wait_for()
        assert await page.locator("#player-chart .series.s-min path.line").count() == 1  # career WN8
        await assert_weekly_points(page, weekly)
        assert await page.locator("#player-chart .series.weekly path.line").count() == 2  # weeks 4-5, 7-13
        legend = await page.locator("#player-chart .legend").inner_text()
        assert "WN8 per week" in legend and "Career WN8" in legend
        note = page.locator("#player-history .chart-note")
        assert await note.is_visible() and "one week" in await note.inner_text()
        await page.screenshot(path=str(artifacts_dir / "site-player-recents.png"), full_page=True)

        # Phone width: cards two by two, the table scrolls in its own box, nothing overflows.
        await page.set_viewport_size({"width": 390, "height": 844})
        await page.wait_for_function("document.documentElement.scrollWidth <= 391")
        await page.locator("#player-recents").screenshot(path=str(artifacts_dir / "site-recents-phone.png"))

        # Periods without data: a period with no battles, one with no snapshot that old, and
        # no per-tank records reaching 1,000 battles back.
        history["answer"] = history_answer(
            today,
            {"7d": figures(0, 0, 0, 0, 0, 0, day(7), day(0)), "30d": None, "90d": "no_delta", "recent_1000": None},
        )
        await page.click("#form-player button[type=submit]")
        await page.locator("#player-recents section.recent.empty[data-period='7d']").wait_for()
        texts = {
            key: await page.locator(f"#player-recents section.recent[data-period='{key}']").inner_text()
            for key in ("7d", "30d", "90d", "recent_1000")
        }
        assert "No battles in this period" in texts["7d"]
        assert "Not enough data yet" in texts["30d"] and "No per-tank records" in texts["30d"]
        assert "Not enough data yet" in texts["90d"] and "No daily snapshot that old" in texts["90d"]
        assert "Not enough data yet" in texts["recent_1000"]
        await page.set_viewport_size({"width": 1280, "height": 900})
        await page.click("button.seg[data-metric='period_wn8']")
        await page.locator("#player-chart .series.s-min path.line").wait_for()
        assert await page.locator("#player-chart .series.weekly").count() == 0  # weekly: null
        assert "No week-by-week WN8 yet" in await page.locator("#player-history .chart-note").inner_text()
        assert browser.errors == [], browser.errors


@pytest.mark.gen_test(timeout=60)
async def test_no_history_answers_are_clear_messages(
    app, http_server, http_port, async_playwright, chromium_path, artifacts_dir
):
    """Real: the site, the index and the profile. Hand-built: the 404 no_history answers of
    GET .../history and GET .../tanks (a live-fetched profile always stores a snapshot, so
    the real history has one)."""
    message = "No history has been recorded for this player yet."

    async def no_history(route):
        await fulfill(route, failure("no_history", message), 404)

    async with Browser(async_playwright, chromium_path) as browser:
        page = await browser.page()
        await page.route(f"**/api/v1/player/{DEMO_PLAYER}/eu/history?*", no_history)
        await page.route(f"**/api/v1/player/{DEMO_PLAYER}/eu/tanks?*", no_history)
        await page.goto(site_url(http_port, f"#player/eu/{DEMO_PLAYER}"))
        await page.locator("#player-profile .player-name").wait_for()

        history = page.locator("#player-history .error")
        await history.wait_for()
        assert await history.locator(".error-code").inner_text() == "no_history"
        assert await history.locator(".error-message").inner_text() == message
        assert "HTTP 404" in await history.inner_text()
        assert "Nothing has been recorded for this player yet" in await history.locator(".error-plain").inner_text()
        assert "Not enough data yet" in await page.locator("#player-recents").inner_text()

        tanks = page.locator("#player-tanks .error")
        await tanks.wait_for()
        assert await tanks.locator(".error-code").inner_text() == "no_history"
        assert "No per-tank records for this player yet" in await tanks.locator(".error-plain").inner_text()
        # The period selector stays usable, and asks again.
        await page.click("#tank-period button[data-days='90']")
        await page.locator("#player-tanks .error").wait_for()
        assert await page.locator("#tank-period button[data-days='90']").get_attribute("aria-pressed") == "true"
        await page.screenshot(path=str(artifacts_dir / "site-player-no-history.png"), full_page=True)
        assert only_failed_loads(browser.errors, {404}) == [], browser.errors


# --- on real tracked data -------------------------------------------------------------------
def num(value) -> str:
    """A number as the site's Intl.NumberFormat('en', {maximumFractionDigits: 2}) writes it."""
    return f"{value:,.2f}".rstrip("0").rstrip(".")


@pytest.fixture
def tracked_grinder(io_loop, app, fast_upstream_sim):
    """Six weeks of the real tracker's passes over a grinder (hundreds of battles a week, so
    every recents period has battles and the last 1,000 are in reach) and two other players."""
    from scripts.upstream_sim.ids import existing_accounts
    from scripts.upstream_sim.world import World
    from tests.helpers import EXPECTED_VALUES_FILE, seed_tracking

    world = World(expected_values=EXPECTED_VALUES_FILE, profile_cache=1_000)
    candidates = existing_accounts("eu", 400, start=500_400_000)
    grinder = next(a for a in candidates if world.profile("eu", a).grinder)
    others = [a for a in candidates if a != grinder][:2]
    seed_tracking(io_loop, app, fast_upstream_sim, {"eu": [grinder, *others]}, 42)
    return grinder


@pytest.mark.gen_test(timeout=180)
async def test_search_recents_and_tanks_on_real_tracked_data(
    app, http_client, base_url, http_port, async_playwright, chromium_path, artifacts_dir, tracked_grinder
):
    """Nothing hand-built: the tracker's records over six weeks, the real /players, /history
    and /tanks. A user types the start of a nickname, picks the player and reads the same
    figures the API answers."""
    from scripts.upstream_sim.ids import nickname

    player = tracked_grinder
    name = nickname("eu", player)
    # Opening the player view looks the profile up; a live lookup is also today's visit and
    # writes today's records. Do it first and let that write land, so the page and this test
    # read the same records.
    response, _ = await get_json(http_client, base_url, f"/api/v1/player/{player}/eu")
    assert response.code == 200
    tags = []
    while len(tags) < 2 or tags[-1] != tags[-2]:  # until the background write has landed
        assert len(tags) < 10, tags
        await asyncio.sleep(1)
        response, _ = await get_json(http_client, base_url, f"/api/v1/player/{player}/eu/tanks?days=30")
        tags.append(response.headers.get("ETag"))
    _, history = await get_json(http_client, base_url, f"/api/v1/player/{player}/eu/history?days=90")
    deltas = history["data"]["deltas"]
    _, tanks = await get_json(http_client, base_url, f"/api/v1/player/{player}/eu/tanks?days=30")
    rows = tanks["data"]["tanks"]
    assert all(deltas[key]["period"]["battles"] > 0 for key in ("7d", "30d")) and rows
    tank_requests: list[str] = []

    async with Browser(async_playwright, chromium_path) as browser:
        page = await browser.page()
        page.on("request", lambda r: "/tanks?" in r.url and tank_requests.append(r.url.rsplit("=", 1)[1]))
        await page.goto(site_url(http_port))
        await wait_ready(page)
        box = page.locator("#search-input")
        await box.fill(name[:4].lower())
        option = page.locator("#search-results [role=option]", has_text=name)
        await option.wait_for()
        assert "tracked" in await option.inner_text()
        await option.click()
        await page.wait_for_function(f"location.hash === '#player/eu/{player}'")

        # The recents panel shows the API's period figures.
        for key in ("7d", "30d", "90d", "recent_1000"):
            period = deltas[key]["period"] if key != "recent_1000" else deltas[key]
            card = page.locator(f"#player-recents section.recent[data-period='{key}']")
            await card.wait_for()
            if period is None:
                assert "Not enough data yet" in await card.inner_text(), key
                continue
            value = lambda field: card.locator(f".fig[data-field={field}] dd")  # noqa: E731
            assert await value("battles").inner_text() == num(period["battles"]), key
            assert await value("wn8").inner_text() == num(period["wn8"]), key
            assert await value("wn7").inner_text() == num(period["wn7"]), key
            assert await value("efficiency").inner_text() == num(period["efficiency"]), key
        assert deltas["recent_1000"] is not None and deltas["recent_1000"]["battles"] >= 1000

        # The tank table lists /tanks' rows, most period battles first, with period WN8: a page of
        # 25 at a time, every row once over the pages.
        await page.locator("#tank-table").wait_for()
        assert await page.locator("#tank-table tbody tr").count() == min(len(rows), 25)
        assert await every_page(page, "period_battles") == [num(r["period"]["battles"]) for r in rows]
        await page.click("#tank-table button.sort[data-sort=period_battles]")
        await page.click("#tank-table button.sort[data-sort=period_battles]")  # back to most battles first
        assert await every_page(page, "period_wn8") == [
            num(r["period"]["wn8"]) if r["period"]["wn8"] is not None else "—" for r in rows
        ]
        await page.click("#tank-table button.sort[data-sort=tier]")
        tiers = [int(t) for t in await column(page, "tier")]
        assert tiers == sorted(tiers, reverse=True) and len(set(tiers)) > 1

        # Another period asks the API again.
        await page.click("#tank-period button[data-days='7']")
        await page.wait_for_function(
            "document.querySelector('#player-tanks .tank-summary')?.textContent.includes('7 days')"
        )
        assert tank_requests == ["30", "7"]

        # The chart plots one WN8 point per week: the API's `weekly`, nothing hand-built.
        weekly = history["data"]["weekly"]
        assert len(weekly) == 13 and weekly[-1]["to"] == history["data"]["latest"]["date"]
        await page.click("button.seg[data-metric='period_wn8']")
        await page.locator("#player-chart .series.weekly circle").first.wait_for()
        await assert_weekly_points(page, weekly, history["data"]["first_date"])
        await page.locator("#player-history").screenshot(path=str(artifacts_dir / "site-real-weekly-wn8.png"))
        await page.screenshot(path=str(artifacts_dir / "site-real-recents.png"), full_page=True)
        assert browser.errors == [], browser.errors
