"""gzip for every answer to a client that accepts it (Vary, an ETag per encoding, prebuilt bytes for
replayed answers), and the cache headers of the site's files."""

from __future__ import annotations

import gzip
import os

import pytest
import tornado.web
import ujson
from tornado.httpclient import HTTPRequest

import handlers.site
from handlers.site import (
    STATIC_DIR,
    BundleHandler,
    module_closure,
    modules_hash,
    site_bundle,
    site_html,
    static_version,
)
from scripts.upstream_sim import existing_accounts
from server.contract.catalogue import API_DESCRIPTION
from server.serving.answers import answer_key
from server.serving.encoding import accepts_gzip, gzip_etag
from tests.test_answer_cache import keep_alive_exchange

GZIP = {"Accept-Encoding": "gzip"}
ACCOUNT = existing_accounts("eu", 90)[85]


async def fetch(http_client, base_url, path, headers=None, method="GET"):
    # decompress_response=False: the bytes as sent (Tornado's client would ask gzip and inflate).
    request = HTTPRequest(
        base_url + path, method=method, headers=headers or {}, decompress_response=False, request_timeout=30
    )
    return await http_client.fetch(request, raise_error=False)


def test_accept_encoding_is_read_with_its_weights():
    assert accepts_gzip("gzip, deflate, br") and accepts_gzip("br;q=1.0, gzip;q=0.8") and accepts_gzip("*")
    assert accepts_gzip("x-gzip") and accepts_gzip("identity, *;q=0.5")
    assert not accepts_gzip(None) and not accepts_gzip("") and not accepts_gzip("identity")
    assert not accepts_gzip("gzip;q=0") and not accepts_gzip("br, gzip;q=0.0") and not accepts_gzip("*;q=0")
    assert not accepts_gzip("*, gzip;q=0")  # named beats the wildcard


@pytest.mark.gen_test(timeout=60)
async def test_the_index_answers_gzip_built_and_replayed_with_its_own_etag(app, http_client, base_url):
    answers = app.settings["services"].answers
    built = await fetch(http_client, base_url, "/api/v1", GZIP)  # the handler builds it
    assert built.code == 200 and built.headers["Content-Encoding"] == "gzip"
    assert built.headers["Vary"] == "Accept-Encoding"
    plain = await fetch(http_client, base_url, "/api/v1")  # replayed from the answer cache
    assert "Content-Encoding" not in plain.headers and plain.headers["Vary"] == "Accept-Encoding"
    assert gzip.decompress(built.body) == plain.body  # the same answer (meta.generated included)
    assert len(built.body) * 4 < len(plain.body)  # 70 KB of JSON is worth it
    assert int(built.headers["Content-Length"]) == len(built.body)
    assert ujson.loads(plain.body)["data"]["description"] == API_DESCRIPTION
    # A strong ETag names one sequence of bytes: the gzip one is the plain one's, marked.
    assert built.headers["Etag"] == gzip_etag(plain.headers["Etag"]) != plain.headers["Etag"]

    # The replay sends the prebuilt gzip bytes (compressed once, when the answer was kept).
    cached = answers.get(answer_key("/api/v1", ""))
    assert cached is not None and cached.gzip_body == built.body
    again = await fetch(http_client, base_url, "/api/v1", GZIP)
    assert again.body == built.body and again.headers["Etag"] == built.headers["Etag"]

    # Either validator revalidates (it names the same answer); the 304 gives back the one held.
    for held in (built.headers["Etag"], plain.headers["Etag"]):
        for headers in (GZIP, {}):
            not_modified = await fetch(http_client, base_url, "/api/v1", {**headers, "If-None-Match": held})
            assert not_modified.code == 304 and not_modified.body == b"", (held, headers)
    answers.clear()  # and the handler's 304, not only the replay's
    fresh_304 = await fetch(http_client, base_url, "/api/v1", {**GZIP, "If-None-Match": built.headers["Etag"]})
    assert fresh_304.code == 304 and fresh_304.headers["Etag"] == built.headers["Etag"]

    # No gzip to a client that refuses it; HEAD says what GET would send.
    # (The answer was built again after the clear: its meta.generated may be a second later.)
    refused = await fetch(http_client, base_url, "/api/v1", {"Accept-Encoding": "gzip;q=0, identity"})
    assert "Content-Encoding" not in refused.headers
    assert ujson.loads(refused.body)["data"] == ujson.loads(plain.body)["data"]
    current = await fetch(http_client, base_url, "/api/v1", GZIP)
    head = await fetch(http_client, base_url, "/api/v1", GZIP, method="HEAD")
    assert head.headers["Content-Encoding"] == "gzip" and head.headers["Content-Length"] == str(len(current.body))
    assert head.headers["Etag"] == current.headers["Etag"]


@pytest.mark.gen_test(timeout=60)
async def test_the_tank_statistics_with_rows_answer_gzip_equal_to_the_plain_bytes(app, http_client, base_url):
    from tests.test_site_tanks_browser import POPULATION, build_population

    await build_population(app, POPULATION)  # a built table: rows, not an empty answer
    path = "/api/v1/tanks/stats?region=eu&days=30"
    zipped = await fetch(http_client, base_url, path, GZIP)
    assert zipped.code == 200 and zipped.headers["Content-Encoding"] == "gzip", zipped.body[:200]
    assert zipped.headers["Vary"] == "Accept-Encoding"
    plain = await fetch(http_client, base_url, path)  # the same answer, replayed plain
    assert plain.code == 200 and "Content-Encoding" not in plain.headers
    assert plain.headers["Vary"] == "Accept-Encoding"
    assert gzip.decompress(zipped.body) == plain.body and len(zipped.body) < len(plain.body)
    rows = ujson.loads(plain.body)["data"]["tanks"]
    assert {row["tank_id"] for row in rows} >= set(POPULATION) - {17, 33}  # the tanks with enough players
    assert zipped.headers["Etag"] == gzip_etag(plain.headers["Etag"])


@pytest.mark.gen_test(timeout=60)
async def test_a_gzip_replay_on_a_kept_alive_connection_sends_the_built_bytes(app, http_client, base_url):
    """The replay's pre-encoded gzip head (OneShotDelegate._write_encoded, the hot path): the
    headers in the handler's order and the very bytes it sent, compressed when the answer was kept."""
    answers = app.settings["services"].answers
    port = int(base_url.rsplit(":", 1)[1])
    built, replayed, again = await keep_alive_exchange(port, "/api/v1", 3, "Accept-Encoding: gzip, br\r\n")
    cached = answers.get(answer_key("/api/v1", ""))
    assert cached is not None and "http1-gzip" in cached.encoded  # the encoded path answered
    per_request = {"date", "ratelimit", "x-ratelimit-remaining", "x-ratelimit-reset"}
    for status, headers, body in (replayed, again):
        assert status == built[0] == b"HTTP/1.1 200 OK"
        assert [(k, v) for k, v in headers if k.lower() not in per_request] == [
            (k, v) for k, v in built[1] if k.lower() not in per_request
        ]
        assert body == built[2] == cached.gzip_body
    assert dict(built[1])["Content-Encoding"] == "gzip" and dict(built[1])["Vary"] == "Accept-Encoding"
    assert gzip.decompress(built[2]) == cached.body


@pytest.mark.gen_test(timeout=60)
async def test_small_answers_and_pngs_stay_plain_svg_cards_do_not(app, http_client, base_url, upstream_sim):
    # An error envelope fits one TCP segment: plain to everyone, so nothing varies.
    small = await fetch(http_client, base_url, "/api/v1/nope", GZIP)
    assert small.code == 404 and "Content-Encoding" not in small.headers and "Vary" not in small.headers
    player = f"/api/v1/player/{ACCOUNT}/eu"
    first = await fetch(http_client, base_url, player, GZIP)
    assert first.code == 200, first.body
    png = await fetch(http_client, base_url, player + "?format=png", GZIP)
    assert png.code == 200 and png.headers["Content-Type"] == "image/png"
    assert "Content-Encoding" not in png.headers  # already compressed
    svg = await fetch(http_client, base_url, player + "?format=svg", GZIP)
    assert svg.code == 200 and svg.headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(svg.body).startswith(b"<svg")


@pytest.fixture
def bundle_dir(tmp_path, monkeypatch):
    """The page built as if the modules' bundle were (or were not) in `tmp_path`: the page and the
    bundle's path are computed again, here and after the test."""
    monkeypatch.setattr(handlers.site, "BUNDLE_DIR", str(tmp_path))
    site_bundle.cache_clear()
    site_html.cache_clear()
    yield tmp_path
    monkeypatch.undo()
    site_bundle.cache_clear()
    site_html.cache_clear()


@pytest.mark.gen_test(timeout=60)
async def test_the_site_names_its_files_by_version_and_they_are_cached_a_year(app, http_client, base_url, bundle_dir):
    # No bundle here (scripts/build_site.sh not run, or no npm): the modules themselves, preloaded.
    page = await fetch(http_client, base_url, "/", GZIP)
    assert page.code == 200 and page.headers["Content-Encoding"] == "gzip"
    assert page.headers["Vary"] == "Accept-Encoding"
    assert page.headers["Cache-Control"] == "public, max-age=300"  # the page that names them: short
    html = gzip.decompress(page.body).decode()
    plain = await fetch(http_client, base_url, "/")
    assert plain.body.decode() == html and plain.headers["Etag"] != page.headers["Etag"]
    assert (await fetch(http_client, base_url, "/", {"If-None-Match": page.headers["Etag"]})).code == 304
    prefix = f"/static/v-{static_version()}/"
    assert f'<script type="module" src="{prefix}js/main.js">' in html
    assert f'<link rel="stylesheet" href="{prefix}style.css">' in html
    # Every module main.js imports, at any depth, is preloaded: no waterfall of imports.
    modules = module_closure("js/main.js")
    assert {"js/api.js", "js/render.js", "js/explorer.js"} <= set(modules)
    for module in modules:
        assert f'<link rel="modulepreload" href="{prefix}{module}">' in html, module
    assert '"/static/js/' not in html and '"/static/style.css"' not in html  # nothing unversioned
    # The index each view waits for is asked beside the modules (docs.js fetches this very URL).
    assert '<link rel="preload" href="/api/v1" as="fetch" crossorigin="anonymous">' in html
    with open(os.path.join(STATIC_DIR, "js", "api.js"), encoding="utf-8") as file:
        assert "export const API = '/api/v1';" in file.read()
    assert f'<meta name="description" content="{API_DESCRIPTION}">' in html
    assert f'id="intro-description">{API_DESCRIPTION}</p>' in html

    for name in ("js/main.js", "style.css"):
        with open(os.path.join(STATIC_DIR, name), "rb") as file:
            content = file.read()
        versioned = await fetch(http_client, base_url, prefix + name, GZIP)
        assert versioned.code == 200 and versioned.headers["Cache-Control"] == "public, max-age=31536000, immutable"
        assert versioned.headers["Content-Encoding"] == "gzip" and gzip.decompress(versioned.body) == content
        assert int(versioned.headers["Content-Length"]) == len(versioned.body)
        again = await fetch(http_client, base_url, prefix + name, GZIP)
        assert again.body == versioned.body  # compressed once, the same bytes
        plain_file = await fetch(http_client, base_url, prefix + name)
        assert plain_file.body == content and "Content-Encoding" not in plain_file.headers
        assert plain_file.headers["Vary"] == "Accept-Encoding"
        assert versioned.headers["Etag"] == gzip_etag(plain_file.headers["Etag"]) != plain_file.headers["Etag"]
        revalidated = await fetch(
            http_client, base_url, prefix + name, {**GZIP, "If-None-Match": versioned.headers["Etag"]}
        )
        assert revalidated.code == 304
        # A byte range is of the plain file (never of a gzip stream).
        ranged = await fetch(http_client, base_url, prefix + name, {**GZIP, "Range": "bytes=0-9"})
        assert ranged.code == 206 and ranged.body == content[:10] and "Content-Encoding" not in ranged.headers
        # The unversioned name (older links, the overlay's page): a day.
        unversioned = await fetch(http_client, base_url, "/static/" + name, GZIP)
        assert unversioned.headers["Cache-Control"] == "public, max-age=86400"
        assert gzip.decompress(unversioned.body) == content
    # An older version's name gets today's file, not cached as if it were that version's.
    stale = await fetch(http_client, base_url, "/static/v-000000000000/style.css")
    assert stale.code == 200 and stale.headers["Cache-Control"] == "public, max-age=86400"
    missing = await fetch(http_client, base_url, prefix + "js/nope.js", GZIP)
    assert missing.code == 404 and ujson.loads(missing.body)["error"]["code"] == "unknown_endpoint"


def write_bundle(folder, sources: str, code: str = "console.log(1);") -> bytes:
    body = f"/* statsapi-bundle {sources} (esbuild test) */\n{code}\n".encode()
    (folder / "app.js").write_bytes(body)
    return body


@pytest.mark.gen_test(timeout=60)
async def test_the_page_loads_the_bundle_of_these_modules_and_never_a_stale_one(app, http_client, base_url, bundle_dir):
    sources = modules_hash()
    write_bundle(bundle_dir, "0" * 16)  # built from other modules (one edited since)
    assert site_bundle() is None
    html = site_html()
    assert (
        f'src="/static/v-{static_version()}/js/main.js"' in html and "modulepreload" in html and "/bundle/" not in html
    )

    site_bundle.cache_clear()
    site_html.cache_clear()
    write_bundle(bundle_dir, sources)
    assert site_bundle() == f"/bundle/v-{sources}/app.js"
    page = await fetch(http_client, base_url, "/")
    html = page.body.decode()
    # One script, no module of its own and nothing preloaded but the index the first view reads.
    assert f'<script type="module" src="/bundle/v-{sources}/app.js"></script>' in html
    assert "/js/main.js" not in html and "modulepreload" not in html
    assert '<link rel="preload" href="/api/v1" as="fetch" crossorigin="anonymous">' in html
    assert f'<link rel="stylesheet" href="/static/v-{static_version()}/style.css">' in html


@pytest.mark.gen_test(timeout=60)
async def test_the_bundle_is_cached_a_year_gzipped_while_it_is_the_modules_version(bundle_dir):
    from tornado.httpclient import AsyncHTTPClient
    from tornado.httpserver import HTTPServer
    from tornado.netutil import bind_sockets

    from server.serving.encoding import ContentEncoding

    # The bundle's route over the test's folder (the service's names var/site/).
    application = tornado.web.Application(
        [(r"/bundle/(v-[0-9a-f]+/.+)", BundleHandler, {"path": str(bundle_dir)})], transforms=[ContentEncoding]
    )
    sockets = bind_sockets(0, "127.0.0.1")
    server = HTTPServer(application)
    server.add_sockets(sockets)
    base = f"http://127.0.0.1:{sockets[0].getsockname()[1]}"
    client = AsyncHTTPClient()
    sources = modules_hash()
    body = write_bundle(bundle_dir, sources, "export const x = '" + "statsapi " * 400 + "';")
    served = await fetch(client, base, f"/bundle/v-{sources}/app.js", GZIP)
    assert served.code == 200 and served.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert served.headers["Content-Encoding"] == "gzip" and gzip.decompress(served.body) == body
    assert served.headers["Content-Type"].startswith(("application/javascript", "text/javascript"))
    # A name of other modules (a page from before a rebuild): the file on disk, for a day only.
    old = await fetch(client, base, "/bundle/v-0000000000000000/app.js")
    assert old.code == 200 and old.body == body and old.headers["Cache-Control"] == "public, max-age=86400"
    missing = await fetch(client, base, f"/bundle/v-{sources}/nope.js")
    assert missing.code == 404 and ujson.loads(missing.body)["error"]["code"] == "unknown_endpoint"
    server.stop()


def test_the_set_up_bundled_these_modules():
    # scripts/setup_env.sh (the README's commands) builds it: without it the site still works but
    # every view waits for its modules one request at a time on a slow link.
    assert site_bundle() is not None, "no bundle of the current modules: run scripts/build_site.sh"
    with open(os.path.join(handlers.site.BUNDLE_DIR, "app.js"), encoding="utf-8") as file:
        code = file.read()
    assert "sourceMappingURL=app.js.map" in code and len(code) > 50_000
