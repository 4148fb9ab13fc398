"""The answer cache: a replayed answer is the fresh one but for meta.generated and the per-request headers."""

from __future__ import annotations

import asyncio

import pytest
import ujson
from tornado.httpclient import HTTPRequest

from scripts.upstream_sim import existing_accounts
from server.serving.answers import Answer, AnswerCache, answer_key, etag_matches, player_tag
from tests.helpers import sim_async

ACCOUNTS = existing_accounts("eu", 80)[70:]
PER_REQUEST = {"date", "ratelimit", "x-ratelimit-remaining", "x-ratelimit-reset"}  # and their values only


@pytest.fixture
def app_overrides():
    # The test client is a trusted proxy, so X-Forwarded-For stands for distinct clients.
    from server.contract.config import parse_networks

    return {"trusted_proxies": parse_networks("127.0.0.1/32")}


async def fetch(http_client, base_url, path, client="198.51.100.10", method="GET", headers=None):
    request = HTTPRequest(
        base_url + path,
        method=method,
        headers={"X-Forwarded-For": client, **(headers or {})},
        request_timeout=20,
        body=b"" if method == "POST" else None,
    )
    return await http_client.fetch(request, raise_error=False)


def fixed_headers(response) -> dict[str, str]:
    return {k.lower(): v for k, v in response.headers.get_all() if k.lower() not in PER_REQUEST}


def without_generated(response) -> dict:
    body = ujson.loads(response.body)
    body.get("meta", {}).pop("generated", None)
    return body


async def rated_player(http_client, base_url, account: int) -> None:
    """A live fetch, then the background rating: the profile is then served from the cache."""
    for _ in range(100):
        response = await fetch(http_client, base_url, f"/api/v1/player/{account}/eu")
        body = ujson.loads(response.body)
        if response.code == 200 and body["data"]["ratings"]["available"]:
            return
        await asyncio.sleep(0.1)
    raise AssertionError("no rated profile")


# --- the cache itself ---------------------------------------------------------------------------------
def answer(body: bytes, tag=None, expires: float = 100.0) -> Answer:
    return Answer(200, "OK", (("Cache-Control", "public, max-age=300"),), body, '"e"', 0.0, expires, tag, "player")


def test_entries_expire_and_the_bytes_stay_bounded():
    now = [0.0]
    cache = AnswerCache(max_bytes=64 * 1024, clock=lambda: now[0])
    cache.put("a", answer(b"x" * 1000, expires=5.0))
    assert cache.get("a") is not None
    now[0] = 5.0
    assert cache.get("a") is None  # expired
    for n in range(200):
        cache.put(f"k{n}", answer(b"y" * 1000))
    assert cache.bytes <= cache.max_bytes and cache.evictions > 0
    assert cache.get("k199") is not None and cache.get("k0") is None  # least recently used went first
    # Expired answers leave as new ones arrive, not only when asked for again.
    small = AnswerCache(max_bytes=64 * 1024, clock=lambda: now[0])
    small.put("old", answer(b"z", expires=6.0))
    small.put("live", answer(b"z", expires=100.0))
    now[0] = 7.0
    small.put("new", answer(b"z", expires=100.0))
    assert small.status()["entries"] == 2 and small.evictions == 0
    assert cache.status()["hits"] == 2 and cache.status()["misses"] == 2


def test_a_write_drops_every_answer_built_from_it():
    cache = AnswerCache(clock=lambda: 0.0)
    tag = player_tag("eu", 5)
    cache.put("/p/5/eu", answer(b"1", tag))
    cache.put("/p/5/eu/history?days=30", answer(b"2", tag))
    cache.put("/p/6/eu", answer(b"3", player_tag("eu", 6)))
    cache.drop(tag)
    assert cache.get("/p/5/eu") is None and cache.get("/p/5/eu/history?days=30") is None
    assert cache.get("/p/6/eu") is not None
    assert cache.status()["dropped_on_write"] == 2


def test_an_answer_built_across_a_write_of_its_data_is_not_kept():
    now = [10.0]
    cache = AnswerCache(clock=lambda: now[0])
    tag = player_tag("eu", 7)
    started = now[0]  # a build reads the old data ...
    now[0] = 11.0
    cache.drop(tag)  # ... the process writes it meanwhile ...
    now[0] = 12.0
    cache.put("/p/7/eu", answer(b"old", tag, expires=99.0), started)  # ... and would keep the old answer
    assert cache.get("/p/7/eu") is None
    cache.put("/p/7/eu", answer(b"new", tag, expires=99.0), now[0])  # a build begun after the write is kept
    assert cache.get("/p/7/eu") is not None


def test_the_key_orders_parameters_by_name_and_keeps_everything_else():
    assert answer_key("/x", "region=eu&days=30") == answer_key("/x", "days=30&region=eu")
    assert answer_key("/x", "days=30") != answer_key("/x", "days=030")
    assert answer_key("/x", "days=7&days=8") != answer_key("/x", "days=8&days=7")  # a repeated name keeps its order
    assert answer_key("/x", "") == "/x"


def test_if_none_match_compares_weakly_like_tornado():
    assert etag_matches('"abc"', '"abc"') and etag_matches('W/"abc"', '"abc"') and etag_matches("*", '"abc"')
    assert etag_matches('"x", "abc"', '"abc"')
    assert not etag_matches('"abd"', '"abc"') and not etag_matches("", '"abc"')


# --- over HTTP ----------------------------------------------------------------------------------------
@pytest.mark.gen_test(timeout=90)
async def test_a_replayed_answer_equals_a_fresh_one(app, http_client, base_url, upstream_sim):
    await sim_async(upstream_sim, "/_sim/faults", {"reset": True})
    answers = app.settings["services"].answers
    account = ACCOUNTS[0]
    await rated_player(http_client, base_url, account)
    for path in (f"/api/v1/player/{account}/eu", "/api/v1/online", "/api/v1/status", "/api/v1/", "/api/v1/nope"):
        answers.clear()
        fresh = await fetch(http_client, base_url, path)
        hits = answers.hits
        replayed = await fetch(http_client, base_url, path)
        if path != "/api/v1/nope":  # the 404 of an unknown path is prebuilt: never a handler
            assert answers.hits == hits + 1, path
        assert replayed.code == fresh.code, path
        assert fixed_headers(replayed) == fixed_headers(fresh), path
        assert [k.lower() for k, _ in replayed.headers.get_all()] == [k.lower() for k, _ in fresh.headers.get_all()]
        assert without_generated(replayed) == without_generated(fresh), path
        if fresh.code == 200 and path != "/api/v1/status":  # (whose figures change between two builds)
            # 304 for a matching ETag, as the handler answers it; HEAD without the body.
            etag = fresh.headers["Etag"]
            replayed_304 = await fetch(http_client, base_url, path, headers={"If-None-Match": etag})
            answers.clear()
            fresh_304 = await fetch(http_client, base_url, path, headers={"If-None-Match": etag})
            assert replayed_304.code == fresh_304.code == 304, path
            assert fixed_headers(replayed_304) == fixed_headers(fresh_304), path
            # HEAD: the headers of a GET beside it, without the body. (The length sent: Tornado's
            # client asks gzip and inflates the body it hands back.) A rebuild between the two may
            # change a timestamp's digits, so a pair that differs is asked again: a HEAD whose
            # length is wrong differs every time.
            for _ in range(3):
                head = await fetch(http_client, base_url, path, method="HEAD")
                get = await fetch(http_client, base_url, path)
                if head.headers["Content-Length"] == get.headers["Content-Length"]:
                    break
            assert (
                head.code == 200
                and head.body == b""
                and head.headers["Content-Length"] == get.headers["Content-Length"]
            )
    # The unknown path answers the same to a method no cache serves (built by the handler).
    posted = await fetch(http_client, base_url, "/api/v1/nope", method="POST")
    got = await fetch(http_client, base_url, "/api/v1/nope")
    assert posted.code == got.code == 404 and posted.body == got.body
    assert fixed_headers(posted) == fixed_headers(got)


async def keep_alive_exchange(
    port: int, path: str, times: int, extra: str = ""
) -> list[tuple[bytes, list[tuple[str, str]], bytes]]:
    """`times` GETs of `path` on one kept-alive HTTP/1.1 connection, as browsers and wrk send them
    (Tornado's own client closes after each request, which the replay's encoded path leaves to the
    general one): each answer's status line, headers in order and body, as raw bytes."""
    from tornado.tcpclient import TCPClient

    stream = await TCPClient().connect("127.0.0.1", port)
    out = []
    try:
        for _ in range(times):
            await stream.write(
                f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: 198.51.100.12\r\n{extra}\r\n".encode()
            )
            head = await stream.read_until(b"\r\n\r\n")
            status, *lines = head.decode("latin1").split("\r\n")[:-2]
            headers = [tuple(line.split(": ", 1)) for line in lines]
            length = int(dict(headers)["Content-Length"])
            out.append((status.encode(), headers, await stream.read_bytes(length)))
    finally:
        stream.close()
    return out


@pytest.mark.gen_test(timeout=90)
async def test_a_replay_on_a_kept_alive_connection_is_byte_for_byte_the_built_answer(
    app, http_client, base_url, upstream_sim
):
    """The replay's pre-encoded head (server.compose.app.OneShotDelegate._write_encoded) sends the
    status line, the headers in their order and the body the handler sent, but for Date, the
    rate-limit headers and meta.generated; the connection stays usable after it."""
    await sim_async(upstream_sim, "/_sim/faults", {"reset": True})
    answers = app.settings["services"].answers
    account = ACCOUNTS[2]
    await rated_player(http_client, base_url, account)
    port = int(base_url.rsplit(":", 1)[1])
    for path in (f"/api/v1/player/{account}/eu", "/api/v1/online", "/api/v1/", "/api/v1/player/abc/eu"):
        answers.clear()
        built, replayed, again = await keep_alive_exchange(port, path, 3)
        cached = answers.get(answer_key(*path.partition("?")[::2]))
        assert cached is not None and "http1" in cached.encoded, path  # the encoded path answered
        for status, headers, body in (replayed, again):
            assert status == built[0], path
            assert [k for k, _ in headers] == [k for k, _ in built[1]], path
            fixed = [(k, v) for k, v in headers if k.lower() not in PER_REQUEST]
            assert fixed == [(k, v) for k, v in built[1] if k.lower() not in PER_REQUEST], path
            if body != built[2]:  # only meta.generated may differ
                ours, theirs = ujson.loads(body), ujson.loads(built[2])
                ours["meta"].pop("generated"), theirs["meta"].pop("generated")
                assert ours == theirs, path
        remaining = [int(dict(h)["X-Ratelimit-Remaining"]) for _, h, _ in (built, replayed, again)]
        assert remaining[0] - 1 == remaining[1] and remaining[1] - 1 == remaining[2], path  # each one counted


@pytest.mark.gen_test(timeout=60)
async def test_a_bad_parameter_is_replayed_and_limits_still_count(app, http_client, base_url):
    answers = app.settings["services"].answers
    path = "/api/v1/player/abc/eu"
    first = await fetch(http_client, base_url, path, client="198.51.100.20")
    second = await fetch(http_client, base_url, path, client="198.51.100.20")
    assert first.code == second.code == 400 and answers.hits >= 1
    assert first.body == second.body and fixed_headers(first) == fixed_headers(second)
    # Per request: the rate-limit headers are the requester's own ...
    assert int(second.headers["X-RateLimit-Remaining"]) == int(first.headers["X-RateLimit-Remaining"]) - 1
    other = await fetch(http_client, base_url, path, client="198.51.100.21")
    assert int(other.headers["X-RateLimit-Remaining"]) > int(second.headers["X-RateLimit-Remaining"])
    # ... and a replayed answer still counts against the limit: 429 once it is spent.
    codes = [(await fetch(http_client, base_url, path, client="198.51.100.20")).code for _ in range(40)]
    assert codes.count(429) > 0 and set(codes) <= {400, 429}


@pytest.mark.gen_test(timeout=90)
async def test_a_write_by_this_process_is_visible_at_once(app, http_client, base_url, upstream_sim):
    await sim_async(upstream_sim, "/_sim/faults", {"reset": True})
    services = app.settings["services"]
    account = ACCOUNTS[1]
    await rated_player(http_client, base_url, account)
    path = f"/api/v1/player/{account}/eu"
    before = ujson.loads((await fetch(http_client, base_url, path)).body)["data"]
    again = ujson.loads((await fetch(http_client, base_url, path)).body)["data"]
    assert again == before  # replayed (or the hot copy): the same answer
    await asyncio.sleep(1.1)  # a new second: the refresh's cached_at differs
    doc = await services.players.fetch_and_store("eu", account, with_ratings=True)  # a refresh-ahead write
    after = ujson.loads((await fetch(http_client, base_url, path)).body)["data"]
    assert after["cached_at"] == int(doc["cached_at"]) != before["cached_at"]


def test_every_answer_is_in_the_access_log_and_the_metrics(tmp_path, upstream_sim):
    """Replayed, prebuilt and handler-built answers alike: one access line each (written by the log's
    own thread, all of them by the time the process exits) and one count in /metrics."""
    from tests.helpers import ServerProcess, request

    server = ServerProcess(tmp_path, "--data-dir", tmp_path / "data", "--upstream-base-url", upstream_sim, "--no-jobs")
    try:
        paths = ["/api/v1/", "/api/v1/", "/api/v1/nope", "/api/v1/nope", "/api/v1/player/abc/eu"] * 2
        answers = [request(server.port, path) for path in paths]
        assert [a.status for a in answers] == [200, 200, 404, 404, 400] * 2
        metrics = request(server.port, "/metrics").body.decode()
        assert 'statsapi_answer_cache_lookups_total{outcome="hit"}' in metrics
        served = [line for line in metrics.splitlines() if line.startswith("statsapi_http_requests_total{")]
        assert sum(float(line.rsplit(" ", 1)[1]) for line in served) >= len(paths), served
    finally:
        server.stop()
    lines = [line for line in server.log_path.read_text().splitlines() if "statsapi.access" in line]
    logged = [(line.split()[-3], line.split()[-2]) for line in lines if "/api/v1/" in line]
    assert logged[: len(paths)] == [(p, str(a.status)) for p, a in zip(paths, answers, strict=True)], lines


def test_queued_access_lines_read_as_the_logging_module_writes_them():
    """The access log's thread formats its lines itself (server/compose/access_log.py): each is the
    line logging's Formatter writes for the same record; a handler with another format gets records."""
    import io
    import logging

    from server.compose.access_log import LOG_FORMAT, AccessLog

    ours, other = io.StringIO(), io.StringIO()
    plain = logging.StreamHandler(ours)
    plain.setFormatter(logging.Formatter(LOG_FORMAT))
    custom = logging.StreamHandler(other)
    custom.setFormatter(logging.Formatter("%(name)s|%(message)s"))
    quiet = logging.StreamHandler(io.StringIO())
    quiet.setLevel(logging.WARNING)
    root = logging.getLogger()
    saved = root.handlers[:]
    root.handlers = [plain, custom, quiet]
    try:
        lines = AccessLog()
        at = 1795700000.25
        lines.add((at, "198.51.100.7", "GET", "/api/v1/player/1/eu", 200, 1.26))
        lines.add((at + 1.5, "::1", "HEAD", "/api/v1/\u00e9" + "x" * 300, 404, 0.04))
        lines.flush()
    finally:
        root.handlers = saved
    expected = []
    for created, text in (
        (at, "198.51.100.7 GET /api/v1/player/1/eu 200 1.3ms"),
        (at + 1.5, "::1 HEAD /api/v1/\\xe9" + "x" * 191 + " 404 0.0ms"),
    ):
        record = logging.makeLogRecord(
            {"name": "statsapi.access", "levelno": logging.INFO, "levelname": "INFO", "msg": text}
        )
        record.created, record.msecs = created, (created - int(created)) * 1000
        expected.append(logging.Formatter(LOG_FORMAT).format(record))
    assert ours.getvalue().splitlines() == expected
    assert other.getvalue().splitlines() == ["statsapi.access|" + e.split(": ", 1)[1] for e in expected]
