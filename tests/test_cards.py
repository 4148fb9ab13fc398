"""Cards (`?format=svg|png`) and the pages with real URLs whose link previews show them.

Every figure a card prints is read back from its SVG and compared with the JSON answer; the PNG is
the same drawing at the size asked; a card is revalidated (304) and replayed with its answer; a bad
format, size or theme is its 400 on each endpoint with cards; a page fetched as a link unfurler
fetches it carries the five tags and its og:image is the card. On the demo (check_cards_on_demo, run
by tests/test_marks.py on the demo it seeds) the four cards are written to tests/artifacts/.
"""

from __future__ import annotations

import asyncio
import dataclasses
import html.parser
import io
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import ujson
from PIL import Image
from tornado.httpclient import AsyncHTTPClient, HTTPRequest

from scripts.upstream_sim import existing_accounts, missing_accounts
from server.contract.catalogue import CATALOGUE, CLAN, PLAYER, SESSION, TANK
from server.contract.config import get_config
from server.serving.cards import CardMemo, card_etag, drawing, render_bytes
from server.serving.cards.fonts import font_path
from server.serving.cards.layout import CONTENTS, utc_text
from tests import test_site_browser as site

chromium_path = site.chromium_path  # the session fixtures of the site's browser tests
async_playwright = site.async_playwright

SVG = "{http://www.w3.org/2000/svg}"
BOT = "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)"
CARD_ENDPOINTS = {PLAYER: "player", SESSION: "session", CLAN: "clan", TANK: "tank"}
TIMES = {"cached_at", "since", "as_of", "built_at"}  # unix times, printed as utc_text


def printed_figures(svg: bytes) -> dict[str, str]:
    """Every text of the card that prints a JSON field: {field: the text as printed, unit included}."""
    root = ET.fromstring(svg)
    assert root.tag == SVG + "svg"
    figures = {}
    for text in root.iter(SVG + "text"):
        field = text.get("data-field")
        if field:
            figures[field] = "".join(text.itertext())
    return figures


def json_value(data: dict, field: str):
    value = data
    for key in field.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def check_figures(svg: bytes, data: dict, kind: str) -> int:
    """Each figure printed on the SVG is the JSON's (a number equal to it, a null as an em dash, a
    name whole or cut with an ellipsis), and every figure the card shows is printed. The count."""
    figures = printed_figures(svg)
    content = CONTENTS[kind](data)
    banner = ET.fromstring(svg).get("width") == "600"
    shown = {content.headline.field, *(f.field for f in content.figures if f.banner or not banner)}
    assert shown <= set(figures), (shown - set(figures), figures)
    for field, text in figures.items():
        value = json_value(data, field)
        if field in TIMES:
            assert utc_text(value) in text, (field, value, text)
        elif value is None:
            assert text == "—", (field, text)
        elif isinstance(value, bool):
            raise AssertionError(f"{field} is a boolean: a card prints figures")
        elif isinstance(value, (int, float)) and field not in ("account_id", "clan_id", "tank_id"):
            number = text.removesuffix(" %")
            assert float(number) == value, (field, value, text)
            assert text.endswith(" %") == (field.endswith("win_rate")), (field, text)
        elif text.endswith("…"):
            assert str(value).startswith(text[:-1]) or f"[{value}]".startswith(text[:-1]), (field, value, text)
        else:
            assert re.sub("[\x00-\x1f\ud800-\udfff]", "", str(value)) in text, (field, value, text)
    return len(figures)


def png_of(body: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(body))
    assert image.format == "PNG"
    return image


# --- the drawing, without a server -------------------------------------------------------------
HOSTILE = "Ace<script>alert(1)</script>&\"'\x01\x0b\ud800]]>"
SAMPLES = {
    "player": {
        "account_id": 500000001,
        "region": "eu",
        "nickname": HOSTILE,
        "statistics": {"battles": 12345, "win_rate": 52.31, "avg_damage": 1523.4},
        "ratings": {"wn8": 1876.54, "wn8_color": "good", "wtr": None},
        "cached_at": 1764660000,
    },
    "session": {
        "account_id": 500000001,
        "region": "na",
        "since": 1764633600,
        "as_of": 1764660000,
        "battles": 7,
        "win_rate": 57.14,
        "avg_damage": 2100.0,
        "avg_frags": 1.43,
        "wn8": 2950.3,
    },
    "clan": {
        "clan_id": 500000,
        "region": "asia",
        "tag": "<&>",
        "name": "A clan whose name is far too long to fit on one card at its title's size " * 2,
        "members_count": 87,
        "ratings": {"elo_10": 1234},
        "members": {"avg_win_rate": 51.2, "avg_damage": 1400.55, "avg_battles": 20345.7},
        "cached_at": 1764660000,
    },
    "tank": {
        "tank_id": 1,
        "region": "eu",
        "days": 30,
        "name": "T-34",
        "tier": 5,
        "type": "mediumTank",
        "nation": "ussr",
        "win_rate": 50.12,
        "avg_damage": 612.3,
        "players": 120,
        "battles": 4000,
        "marks": {"marks": {"first": 700.5, "second": 900.25, "third": 1200.0, "top": 1500.0}},
        "built_at": 1764660000,
        "images": {"big_icon": 'https://example.org/t34.png?a=1&b="2"'},
    },
}


def test_the_public_base_url_is_an_absolute_http_url_without_its_slash():
    assert (
        get_config(["--public-base-url", "https://stats.example.org/"]).public_base_url == "https://stats.example.org"
    )
    assert (
        get_config([], {"STATSAPI_PUBLIC_BASE_URL": "http://a.example:8080"}).public_base_url == "http://a.example:8080"
    )
    assert get_config([], {}).public_base_url is None
    for bad in ("stats.example.org", "javascript:alert(1)", 'https://a.example/"><script>'):
        with pytest.raises(SystemExit):
            get_config(["--public-base-url", bad])


def test_every_endpoint_with_a_card_draws_it_in_both_formats_and_lists_them():
    assert {e.card for e in CATALOGUE if e.card is not None} == set(CONTENTS) == set(SAMPLES)
    for endpoint, kind in CARD_ENDPOINTS.items():
        assert endpoint.card == kind
        params = {p.name: p for p in endpoint.params}
        assert {"svg", "png"} <= set(params["format"].enum) and params["size"].enum == ("large", "banner")
        assert params["theme"].enum == ("dark", "light")
    assert font_path(True) and font_path(False), "DejaVu Sans is missing: scripts/install_fonts.sh installs it"


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_a_card_prints_the_answers_figures_escaped_at_both_sizes_and_themes(kind):
    data = SAMPLES[kind]
    for size, (width, height) in (("large", (1200, 630)), ("banner", (600, 160))):
        for theme in ("dark", "light"):
            card = drawing(kind, data, size, theme)
            svg = render_bytes(card, "svg")
            assert check_figures(svg, data, kind) >= 5
            assert b"<script" not in svg and b"\x01" not in svg
            root = ET.fromstring(svg)
            assert (root.get("width"), root.get("height")) == (str(width), str(height))
            image = png_of(render_bytes(card, "png"))
            assert image.size == (width, height)
            # The banner is a panel on a transparent canvas; the preview is opaque.
            assert image.mode == ("RGBA" if size == "banner" else "RGB")
            if size == "banner":
                assert image.getpixel((0, 0))[3] == 0 and image.getpixel((width // 2, height // 2))[3] > 200
    if kind == "player":
        assert printed_figures(render_bytes(drawing(kind, data, "large", "dark"), "svg"))["nickname"].startswith(
            "Ace<script>alert(1)</script>&\"'"
        )
    if kind == "tank":  # Wargaming's icon by its URL in the SVG (escaped); the PNG does without
        assert b'href="https://example.org/t34.png?a=1&amp;b=&quot;2&quot;"' in render_bytes(
            drawing(kind, data, "large", "dark"), "svg"
        )


@pytest.mark.gen_test
async def test_a_card_is_drawn_once_per_etag_and_concurrent_requests_share_the_drawing():
    memo = CardMemo()
    data = SAMPLES["player"]
    etag = card_etag('"abc"', "player", "png", "large", "dark")
    bodies = await asyncio.gather(*(memo.card(etag, "player", data, "png", "large", "dark") for _ in range(5)))
    assert memo.renders == 1 and len(set(bodies)) == 1
    assert await memo.card(etag, "player", data, "png", "large", "dark") == bodies[0] and memo.renders == 1
    assert card_etag('"abd"', "player", "png", "large", "dark") != etag  # a changed answer: another card
    assert card_etag('"abc"', "player", "png", "banner", "dark") != etag


# --- over HTTP ------------------------------------------------------------------------------------
class HeadTags(html.parser.HTMLParser):
    """The meta tags of a page's head, by property or name."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: dict[str, str] = {}
        self.images: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "meta" and "content" in attributes:
            self.tags[attributes.get("property") or attributes.get("name") or ""] = attributes["content"]
        if tag == "img":
            self.images.append(attributes.get("src", ""))


def head_tags(body: bytes) -> HeadTags:
    parser = HeadTags()
    parser.feed(body.decode())
    return parser


async def fetch(url: str, **headers):
    request = HTTPRequest(url, headers={k.replace("_", "-"): v for k, v in headers.items()}, request_timeout=30)
    return await AsyncHTTPClient().fetch(request, raise_error=False)


@pytest.mark.gen_test(timeout=60)
async def test_a_bad_format_size_or_theme_is_its_400_on_every_endpoint_with_cards(app, http_client, base_url):
    paths = {PLAYER: "/player/500000001/eu", SESSION: "/player/500000001/eu/session", CLAN: "/clan/500000/eu"}
    paths[TANK] = "/tank/1/eu"
    for endpoint, path in paths.items():
        for query, code in (("format=gif", "invalid_format"), ("format=svg&size=huge", "invalid_size")):
            response = await fetch(f"{base_url}/api/v1{path}?{query}")
            assert response.code == 400 and ujson.loads(response.body)["error"]["code"] == code, (path, query)
        response = await fetch(f"{base_url}/api/v1{path}?format=png&theme=pink")
        assert ujson.loads(response.body)["error"]["code"] == "invalid_theme"
        assert response.headers["Content-Type"].startswith("application/json")
        # The page of the same answer says so too, as a page.
        page = await fetch(f"{base_url}{path}?format=gif")
        assert page.code == 400 and page.headers["Content-Type"].startswith("text/html")
    # An endpoint without cards lists no such format.
    response = await fetch(f"{base_url}/api/v1/player/500000001/eu/history?format=svg")
    assert response.code == 400 and ujson.loads(response.body)["error"]["code"] == "invalid_format"


async def rated_profile(base_url: str, account: int) -> dict:
    """The profile of an account looked up live, once its ratings have followed."""
    for _ in range(200):
        response = await fetch(f"{base_url}/api/v1/player/{account}/eu")
        data = ujson.loads(response.body)["data"]
        if data["ratings"]["available"]:
            return data
        await asyncio.sleep(0.1)
    raise AssertionError("the ratings did not follow the live lookup")


@pytest.mark.gen_test(timeout=120)
async def test_the_player_card_is_the_answer_revalidated_and_replayed_and_its_page_unfurls_into_it(
    app, http_client, base_url
):
    account = existing_accounts("eu", 3)[2]
    services = app.settings["services"]
    profile = await rated_profile(base_url, account)
    svg = await fetch(f"{base_url}/api/v1/player/{account}/eu?format=svg")
    assert svg.code == 200 and svg.headers["Content-Type"] == "image/svg+xml"
    assert "script-src" not in svg.headers["Content-Security-Policy"]  # default-src 'none': nothing runs
    assert profile["nickname"] in svg.body.decode() and str(profile["ratings"]["wn8"]) in svg.body.decode()
    check_figures(svg.body, profile, "player")
    png = await fetch(f"{base_url}/api/v1/player/{account}/eu?format=png")
    assert png.code == 200 and png.headers["Content-Type"] == "image/png"
    assert png_of(png.body).size == (1200, 630)
    etag = png.headers["Etag"]
    assert etag != svg.headers["Etag"] and png.headers["Cache-Control"] == f"public, max-age={PLAYER.cache_max_age}"
    renders = services.cards.renders
    again = await fetch(f"{base_url}/api/v1/player/{account}/eu?format=png", If_None_Match=etag)
    assert again.code == 304 and not again.body
    replayed = await fetch(f"{base_url}/api/v1/player/{account}/eu?format=png")
    assert replayed.body == png.body and replayed.headers["Etag"] == etag
    assert services.cards.renders == renders  # revalidated and replayed, not drawn again
    # Counted in the profile's own limit, like its JSON: each answer takes one more of the same bucket.
    remaining = [
        int((await fetch(f"{base_url}/api/v1/player/{account}/eu{q}")).headers["X-RateLimit-Remaining"])
        for q in ("", "?format=png", "?format=svg", "")
    ]
    assert remaining == [remaining[0] - i for i in range(4)], remaining
    assert replayed.headers["RateLimit-Policy"] == f'"player";q={PLAYER.limit_per_minute};w=60'
    banner = await fetch(f"{base_url}/api/v1/player/{account}/eu?format=png&size=banner&theme=light")
    assert png_of(banner.body).size == (600, 160)

    # The page, fetched as a chat's link unfurler would (a bot, no JS): the five tags, og:image the card.
    page = await fetch(f"{base_url}/player/{account}/eu", User_Agent=BOT)
    assert page.code == 200 and page.headers["Content-Type"] == "text/html; charset=utf-8"
    tags = head_tags(page.body).tags
    assert tags["twitter:card"] == "summary_large_image"
    assert profile["nickname"] in tags["og:title"] and f"WN8 {profile['ratings']['wn8']}" in tags["og:description"]
    assert tags["og:url"] == f"{base_url}/player/{account}/eu"
    assert tags["og:image"] == f"{base_url}/api/v1/player/{account}/eu?format=png"
    assert tags["statsapi:view"] == f"player/eu/{account}"
    image = await fetch(tags["og:image"], User_Agent=BOT)
    assert image.code == 200 and image.body == png.body
    # Behind a proxy the operator's public base URL makes the links, whatever Host the request named.
    config = app.settings["config"]
    app.settings["config"] = dataclasses.replace(config, public_base_url="https://stats.example.org")
    try:
        page = await fetch(f"{base_url}/player/{account}/eu", User_Agent=BOT, Host="attacker.example")
    finally:
        app.settings["config"] = config
    tags = head_tags(page.body).tags
    assert tags["og:image"] == f"https://stats.example.org/api/v1/player/{account}/eu?format=png"
    assert tags["og:url"] == f"https://stats.example.org/player/{account}/eu"
    # An unknown account's page says so, with no card to break.
    missing = missing_accounts("eu", 1)[0]
    page = await fetch(f"{base_url}/player/{missing}/eu", User_Agent=BOT)
    assert page.code == 404 and page.headers["Content-Type"].startswith("text/html")
    tags = head_tags(page.body).tags
    assert "og:image" not in tags and tags["twitter:card"] == "summary" and "not found" in tags["og:title"].lower()


async def check_cards_on_demo(base_url: str, account: int, clan_id: int, tank_id: int, artifacts: Path) -> None:
    """The demo's four cards in both formats, every figure on the SVG the JSON's, and the pages'
    og:image each PNG; the cards (large PNG and SVG, banner PNG) written to `artifacts` to look at."""
    paths = {
        "player": f"/player/{account}/eu",
        "session": f"/player/{account}/eu/session",
        "clan": f"/clan/{clan_id}/eu",
        "tank": f"/tank/{tank_id}/eu",
    }
    for kind, path in paths.items():
        answer = await fetch(f"{base_url}/api/v1{path}")
        assert answer.code == 200, (path, answer.code, answer.body[:300])
        data = ujson.loads(answer.body)["data"]
        svg = await fetch(f"{base_url}/api/v1{path}?format=svg")
        assert svg.code == 200 and svg.headers["Content-Type"] == "image/svg+xml"
        if kind != "session":  # a session's answer moves with the watcher's measurements
            check_figures(svg.body, data, kind)
        png = await fetch(f"{base_url}/api/v1{path}?format=png")
        assert png.code == 200 and png_of(png.body).size == (1200, 630)
        banner = await fetch(f"{base_url}/api/v1{path}?format=png&size=banner")
        assert png_of(banner.body).size == (600, 160)
        (artifacts / f"card-{kind}.svg").write_bytes(svg.body)
        (artifacts / f"card-{kind}.png").write_bytes(png.body)
        (artifacts / f"card-{kind}-banner.png").write_bytes(banner.body)
        page = await fetch(f"{base_url}{path}", User_Agent=BOT)
        assert page.code == 200, (path, page.code)
        tags = head_tags(page.body).tags
        assert {"og:title", "og:description", "og:image", "og:url", "twitter:card"} <= set(tags), tags
        assert re.fullmatch(rf"https?://[^/]+/api/v1{re.escape(path)}\?format=png", tags["og:image"]), tags


@pytest.mark.gen_test(timeout=120)
async def test_the_page_opens_the_view_whose_share_box_shows_the_card_the_api_serves(
    app, http_client, base_url, http_port, async_playwright, chromium_path, artifacts_dir
):
    account = existing_accounts("eu", 3)[2]
    await rated_profile(base_url, account)
    async with site.Browser(async_playwright, chromium_path) as browser:
        page = await browser.page()
        await page.goto(f"http://127.0.0.1:{http_port}/player/{account}/eu")
        await site.wait_ready(page)
        await page.wait_for_selector("#share-card", state="attached")
        assert page.url.endswith(f"/player/{account}/eu#player/eu/{account}")
        shown = await page.eval_on_selector("#share-card", "img => img.src")
        assert shown == f"http://127.0.0.1:{http_port}/api/v1/player/{account}/eu?format=png"
        og_image = await page.eval_on_selector('meta[property="og:image"]', "m => m.content")
        assert og_image == shown
        await page.click("#share > summary")
        await page.wait_for_function("document.querySelector('#share-card').naturalWidth === 1200")
        drawn = await page.evaluate(
            "async (url) => Array.from(new Uint8Array(await (await fetch(url)).arrayBuffer()))", shown
        )
        served = await fetch(shown)
        assert bytes(drawn) == served.body
        await page.click("#embed > summary")
        bbcode = await page.eval_on_selector("#embed-bbcode", "t => t.value")
        assert bbcode == (
            f"[url=http://127.0.0.1:{http_port}/player/{account}/eu]"
            f"[img]http://127.0.0.1:{http_port}/api/v1/player/{account}/eu?format=png&size=banner[/img][/url]"
        )
        # The overlay builder offers the session's card, as the API serves it.
        await page.goto(f"http://127.0.0.1:{http_port}/#overlay/eu/{account}")
        await page.wait_for_selector("#overlay-out #share-card", state="attached")
        session_card = await page.eval_on_selector("#overlay-out #share-card", "img => img.src")
        assert session_card == f"http://127.0.0.1:{http_port}/api/v1/player/{account}/eu/session?format=png"
        await page.goto(f"http://127.0.0.1:{http_port}/player/{account}/eu")
        await page.wait_for_selector("#share-card", state="attached")
        await page.click("#share > summary")
        await page.locator("#share").scroll_into_view_if_needed()
        await page.screenshot(path=str(artifacts_dir / "share-player.png"), full_page=False)
        assert not browser.errors, browser.errors
