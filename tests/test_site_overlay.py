"""The session overlay (/overlay/) in a real headless Chromium at 1080p and 720p, fed by the real stream.

A watched account's states are captured on a manual clock the simulator follows (the evening it
played), so its session since before that evening has battles; the page opens the session stream,
shows the figures on a transparent background, and falls back to polling when the stream is refused.
"""

from __future__ import annotations

import pytest
import ujson
from tornado.httpclient import HTTPRequest

from server.compose.demo import TimeTravelUpstream
from server.domain.days import ManualClock
from server.services.sessions import Watcher
from tests import test_sessions as sessions
from tests import test_site_browser as site
from tests.test_sessions import REGION, played_evening
from tests.test_site_browser import Browser

chromium_path = site.chromium_path  # the session fixtures of the site's browser tests
async_playwright = site.async_playwright
world = sessions.world  # the simulator's world, in this process (the truth)


async def watched_with_battles(app, world_) -> tuple[int, int]:
    """An account watched before and after an evening it played: (account_id, since)."""
    store, services = app.settings["store"], app.settings["services"]
    (account_id,), before, after = played_evening(world_, 1)
    clock = ManualClock(before)
    watcher = Watcher(store, TimeTravelUpstream(services.upstream, clock), clock=clock)
    await store.watched.watch(REGION, account_id, after + 900, before)
    assert await watcher.tick(REGION) == 1
    clock.set(after)
    assert await watcher.tick(REGION) == 1
    return account_id, int(before)


@pytest.mark.gen_test(timeout=120)
async def test_the_overlay_shows_the_streamed_session_transparent_at_1080p_and_720p(
    app, http_client, base_url, http_port, world, async_playwright, chromium_path, artifacts_dir
):
    account_id, since = await watched_with_battles(app, world)
    response = await http_client.fetch(
        HTTPRequest(f"{base_url}/api/v1/player/{account_id}/{REGION}/session?since={since}"), raise_error=False
    )
    session = ujson.loads(response.body)["data"]
    assert session["battles"] > 0
    url = f"http://127.0.0.1:{http_port}/overlay/?region={REGION}&account={account_id}&since={since}"
    async with Browser(async_playwright, chromium_path) as browser:
        for width, height in ((1920, 1080), (1280, 720)):
            page = await browser.page(width, height)
            streamed = []
            page.on("request", lambda r, seen=streamed: "/session/stream" in r.url and seen.append(r.url))
            await page.goto(url)
            await page.wait_for_selector('#overlay[data-state="live"]')
            assert streamed, "the overlay did not open the stream"
            figures = await page.eval_on_selector_all(
                "#overlay-figures .overlay-figure",
                "els => els.map(e => [e.classList[1], e.querySelector('dd').textContent])",
            )
            assert [name for name, _ in figures] == ["battles", "win_rate", "avg_damage", "wn8"]
            shown = dict(figures)
            assert shown["battles"] == str(session["battles"])
            assert shown["win_rate"] == f"{session['win_rate']:.1f} %"
            assert shown["avg_damage"] == f"{round(session['avg_damage']):,}"
            assert await page.eval_on_selector("body", "b => getComputedStyle(b).backgroundColor") == "rgba(0, 0, 0, 0)"
            # The figures fit the frame: a browser source shows the top left of the page.
            box = await page.eval_on_selector("#overlay", "e => e.getBoundingClientRect().toJSON()")
            assert box["width"] <= width and box["height"] <= height / 2
            await page.screenshot(path=str(artifacts_dir / f"overlay-{height}p.png"), omit_background=True)
            await page.close()
        # The stream refused (here: answered 503 by the test): the page polls the session instead.
        page = await browser.page(1280, 720)
        await page.route("**/session/stream**", lambda route: route.fulfill(status=503, body="{}"))
        await page.goto(url + "&fields=battles,wn8&theme=light")
        await page.wait_for_selector('#overlay[data-state="live"]')
        names = await page.eval_on_selector_all(
            "#overlay-figures .overlay-figure", "els => els.map(e => e.classList[1])"
        )
        assert names == ["battles", "wn8"]
        assert "light" in await page.eval_on_selector("#overlay", "e => e.className")
    assert all("Failed to load resource" in e or "EventSource" in e for e in browser.errors), browser.errors


@pytest.mark.gen_test(timeout=60)
async def test_the_overlay_without_an_account_says_how_to_set_it_up(
    app, http_server, http_port, async_playwright, chromium_path
):
    async with Browser(async_playwright, chromium_path) as browser:
        page = await browser.page(1280, 720)
        await page.goto(f"http://127.0.0.1:{http_port}/overlay/")
        await page.wait_for_selector('#overlay[data-state="error"]')
        assert "account=" in await page.inner_text("#overlay-message")


@pytest.mark.gen_test(timeout=120)
async def test_the_site_builds_the_overlays_address_previews_it_and_shows_a_players_today(
    app, http_client, base_url, http_port, world, async_playwright, chromium_path
):
    account_id, _ = await watched_with_battles(app, world)
    async with Browser(async_playwright, chromium_path) as browser:
        page = await browser.page(1280, 900)
        await page.goto(f"http://127.0.0.1:{http_port}/#overlay/{REGION}/{account_id}")
        url = page.locator("#overlay-url")
        await url.wait_for()
        origin = f"http://127.0.0.1:{http_port}"
        assert await url.input_value() == f"{origin}/overlay/?region={REGION}&account={account_id}&since=today"
        # The preview is the overlay itself, live.
        frame = page.frame_locator("#overlay-preview")
        await frame.locator('#overlay[data-state="live"]').wait_for()
        # Stream start instead of the day, two figures, dark text: the address says so.
        await page.select_option("#form-overlay select[name=since]", "now")
        await page.uncheck("#form-overlay input[name=field-win_rate]")
        await page.uncheck("#form-overlay input[name=field-avg_damage]")
        await page.select_option("#form-overlay select[name=theme]", "light")
        built = await url.input_value()
        assert built == (
            f"{origin}/overlay/?region={REGION}&account={account_id}&since=now&fields=battles%2Cwn8&theme=light"
        ), built

        # The player's page shows today's session and links to its overlay.
        await page.goto(f"{origin}/#player/{REGION}/{account_id}")
        today = page.locator("#player-today")
        await today.wait_for()
        assert "Today" in await today.inner_text()
        assert await today.locator("a").get_attribute("href") == f"#overlay/{REGION}/{account_id}"
    assert all("Failed to load resource" in e for e in browser.errors), browser.errors
