"""Hypothesis-driven requests over every endpoint, path parameter and query parameter.

Inputs: unicode, %00, percent-encoded garbage (also invalid UTF-8), huge and negative
numbers, floats, repeated parameters, 8 KB segments, empty segments, trailing and doubled
slashes, odd headers and methods. Requests are written as raw bytes on a socket, so nothing
is normalised by an HTTP client on the way, to the real app (`build_app`) served by the HTTP
server `python -m server` uses (`server.compose.bootstrap.make_http_server`).

Every request gets an answer (a head of any size included: 431), with a documented status
(DOCUMENTED; 204 for OPTIONS) -- never a 5xx but 503 -- and the JSON envelope (`success: false`,
an error code whose documented status is the answer's status, no `data`) on every error; and
the service must stay up (a final GET /api/v1 is 200, no request left counted as in flight).
The site's static files are fuzzed in a test of their own.

Live lookups are kept cheap: account ids are small (unknown upstream: 404) or a handful of
real ones; limits are x1000 so the fuzzer is not throttled (a 429 would be fine anyway).
"""

from __future__ import annotations

import asyncio
import dataclasses
import urllib.parse

import pytest
import ujson
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from scripts.upstream_sim import existing_accounts, existing_clans
from server.compose.bootstrap import make_http_server
from server.contract.errors import ERROR_CODES
from tests.helpers import build_app, free_port

MAX_EXAMPLES = 400
DOCUMENTED = {200, 204, 304, 400, 404, 405, 413, 416, 429, 431, 503}
REAL_ACCOUNTS = existing_accounts("eu", 2)
REAL_CLANS = existing_clans("eu", 1)


@dataclasses.dataclass(frozen=True)
class Req:
    method: str
    target: bytes
    headers: tuple = ()

    def __repr__(self) -> str:  # short: failing examples stay readable
        target = self.target if len(self.target) <= 200 else self.target[:200] + b"...(%d bytes)" % len(self.target)
        return f"Req({self.method!r}, {target!r}, {self.headers!r})"

    def raw(self) -> bytes:
        head = [f"{self.method} ".encode("latin-1") + self.target + b" HTTP/1.1", b"Host: 127.0.0.1"]
        head += [f"{name}: {value}".encode() for name, value in self.headers]
        head += [b"Connection: close", b"", b""]
        return b"\r\n".join(head)


@pytest.fixture
def served(io_loop, mongo_uri, db_name, upstream_sim):
    """The real app behind the real server class, configured as server/compose/entry.py serves it."""
    app = build_app(io_loop, mongo_uri, db_name, upstream_base_url=upstream_sim, rate_limit_scale=1000)
    port = free_port()
    server = make_http_server(app, app.settings["config"])
    server.listen(port, "127.0.0.1")
    yield app, port
    server.stop()


async def exchange(port: int, raw: bytes, timeout: float = 30.0):
    """Send raw bytes, read to EOF; (status, headers, body) of the first answer."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(raw)
        await writer.drain()
        data = await asyncio.wait_for(reader.read(), timeout)
    finally:
        writer.close()
    if not data:
        return None, {}, b""
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", len(rest)))
    return status, headers, rest[:length]


# --- strategies ----------------------------------------------------------------------
SPECIAL = [
    "",
    "eu",
    "na",
    "asia",
    "EU",
    "all",
    "wot",
    "wotb",
    "wows",
    "%00",
    "%",
    "%zz",
    "%ff%fe",
    "%c0%af",
    "..",
    ".",
    "%2F",
    "%2e%2e",
    "\x00",
    "1e3",
    "+1",
    " 1",
    "0x10",
    "1_000",
    "٣",
    "²",
    "1.0",
    "-0",
    "NaN",
    "null",
    "[]",
    "{}",
    "<script>",
    "' OR 1=1 --",
    "$where",
    '{"$gt": 0}',
    "history",
    "weekly",
    "0" * 19 + "1",
    "9" * 19,
    str(2**63 - 1),
    str(2**63),
    str(2**64),
    "-1",
    "0",
]

numbers = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 1, -1, 2**31 - 1, 2**31, 2**32, 2**53 + 1, 2**63 - 1, 2**63, 2**64]),
).map(str)
floats = st.floats(allow_nan=True, allow_infinity=True).map(repr)
garbage_bytes = st.binary(min_size=1, max_size=12).map(lambda b: "".join(f"%{x:02X}" for x in b))
long_segment = st.sampled_from([8192, 8000, 4096]).flatmap(
    lambda n: st.sampled_from(["a" * n, "9" * n, "%" * n, "é" * (n // 2), "%00" * (n // 3)])
)
text_value = st.one_of(
    st.sampled_from(SPECIAL),
    numbers,
    floats,
    st.text(max_size=24),
    garbage_bytes,
    long_segment,
)
# Mostly small ids (unknown upstream: a cheap 404), a few real ones, or anything at all.
account_value = st.one_of(st.integers(1, 999).map(str), st.sampled_from([str(a) for a in REAL_ACCOUNTS]), text_value)
clan_value = st.one_of(st.integers(1, 999).map(str), st.sampled_from([str(c) for c in REAL_CLANS]), text_value)
region_value = st.one_of(st.sampled_from(["eu", "na", "asia"]), text_value)


def encode(text: str, mode: str) -> bytes:
    """`quote`: percent-encode everything; `raw`: the UTF-8 bytes as they are (CR/LF/space,
    which would end the request line, are percent-encoded so one request stays one)."""
    if mode == "quote":
        return urllib.parse.quote(text, safe="").encode("ascii")
    raw = text.encode("utf-8", "surrogatepass")
    return raw.replace(b"\r", b"%0D").replace(b"\n", b"%0A").replace(b" ", b"%20")


TEMPLATES = [
    ("/api/v1", ()),
    ("/api/v1/player/{}/{}", (account_value, region_value)),
    ("/api/v1/player/{}/{}/history", (account_value, region_value)),
    ("/api/v1/clan/{}/{}", (clan_value, region_value)),
    ("/api/v1/clan/{}/{}/weekly", (clan_value, region_value)),
    ("/api/v1/online", ()),
    ("/api/v1/online/history", ()),
    ("/api/v1/status", ()),
    ("/api/v1/openapi.json", ()),
    ("/api/{}/status", (text_value,)),
    ("/api/v1/{}", (text_value,)),
    ("/api/v1/player/{}", (account_value,)),
    ("/api/v1/player/{}/{}/{}", (account_value, region_value, text_value)),
    ("/api/v1/clan/{}/{}/{}", (clan_value, region_value, text_value)),
    ("/api/v1/online/{}", (text_value,)),
    ("/{}", (text_value,)),
]
QUERY_KEYS = st.one_of(
    st.sampled_from(["days", "game", "region", "days", "fields", "callback", ""]), st.text(max_size=8)
)
METHODS = st.one_of(
    st.just("GET"),
    st.sampled_from(
        [
            "GET",
            "HEAD",
            "OPTIONS",
            "POST",
            "PUT",
            "DELETE",
            "PATCH",
            "TRACE",
            "CONNECT",
            "PROPFIND",
            "MKCOL",
            "get",
            "Get",
            "M-SEARCH",
            "BREW",
        ]
    ),
    st.from_regex(r"\A[A-Z][A-Z_-]{0,15}\Z"),
)
HEADERS = st.lists(
    st.tuples(
        st.sampled_from(
            ["If-None-Match", "X-Forwarded-For", "X-Real-Ip", "Accept", "Origin", "Range", "Accept-Encoding", "Cookie"]
        ),
        st.one_of(
            st.sampled_from(["*", '"x"', 'W/"abc"', "1.2.3.4", "::1", "bytes=0-1", "gzip", "a=b"]),
            st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40),
        ),
    ),
    max_size=2,
).map(tuple)


@st.composite
def requests(draw) -> Req:
    template, params = draw(st.sampled_from(TEMPLATES))
    mode = draw(st.sampled_from(["quote", "raw"]))
    path = template.encode().replace(b"{}", b"%s") % tuple(encode(draw(p), mode) for p in params)
    shape = draw(st.sampled_from(["plain", "plain", "slash", "double", "empty_segment"]))
    if shape == "slash":
        path += b"/"
    elif shape == "double":
        path = path.replace(b"/", b"//", 1) if draw(st.booleans()) else path + b"//"
    elif shape == "empty_segment":
        parts = path.split(b"/")
        index = draw(st.integers(1, len(parts)))
        path = b"/".join(parts[:index] + [b""] + parts[index:])
    pairs = draw(st.lists(st.tuples(QUERY_KEYS, text_value), max_size=4))
    if pairs or draw(st.booleans()):
        qmode = draw(st.sampled_from(["quote", "raw"]))
        query = b"&".join(
            encode(k, qmode) + (b"=" + encode(v, qmode) if v or draw(st.booleans()) else b"") for k, v in pairs
        )
        path += b"?" + query
    return Req(draw(METHODS), path, draw(HEADERS))


# --- the check ---------------------------------------------------------------------
def check_answer(req: Req, status, headers, body) -> None:
    """Every request gets an answer: server/compose/http.py answers any oversized head with a JSON 431."""
    context = (req.method, req.target[:300], len(req.target), status, headers, body[:300])
    assert status is not None, context  # the connection was closed without an answer
    assert status in DOCUMENTED, context
    assert headers.get("access-control-allow-origin") == "*", context
    if status == 204:
        assert req.method == "OPTIONS", context
        return
    assert "cache-control" in headers, context
    api = req.target.startswith(b"/api")
    canned = status in (400, 413, 416, 431, 503) and "date" not in headers  # server/compose/http.py's prebuilt bytes
    if req.method == "HEAD" and not canned:
        # HEAD never has a body, errors included -- except the canned protocol-level answers
        # (server/compose/http.py), sent when the request line itself could not be read.
        assert not body, context
        return
    if status == 304 or (not api and status == 200):
        return  # the site's own files (HTML, JS) are not enveloped
    assert headers.get("content-type") == "application/json; charset=utf-8", context
    parsed = ujson.loads(body)
    if status == 200:
        if req.target.split(b"?")[0].rstrip(b"/") == b"/api/v1/openapi.json":
            assert parsed["openapi"].startswith("3."), context  # the OpenAPI document is not enveloped
            return
        assert parsed["success"] is True and "data" in parsed and "meta" in parsed, context
        return
    assert parsed["success"] is False and "data" not in parsed, context
    code = parsed["error"]["code"]
    assert isinstance(parsed["error"]["message"], str), context
    assert code in ERROR_CODES and ERROR_CODES[code][0] == status, context
    assert code != "internal_error", context
    if status == 405:
        assert headers.get("allow") == "GET, HEAD, OPTIONS", context
    if status in (429, 503):
        assert "no-store" in headers["cache-control"], context
    if status == 429:
        assert headers["retry-after"].isdigit(), context


EDGE_CASES = [
    Req("GET", b"/api/v1/player/" + b"9" * 8192 + b"/eu"),
    Req("GET", b"/api/v1/player/1/" + b"e" * 8192),
    Req("GET", b"/api/v1/clan/" + b"%00" * 2700 + b"/eu/weekly"),
    Req("GET", b"/api/v1/online/history?days=" + b"1" * 8192),
    Req("GET", b"/api/v1/player/" + b"1" * 20000 + b"/eu"),  # beyond the 16 KB header limit: 431
    Req("GET", b"/api/v1/player/%00/eu"),
    Req("GET", b"/api/v1/player/1%00/eu"),
    Req("GET", b"/api/v1/player/%ff%fe/eu"),
    Req("GET", b"/api/v1/player/1/%ff"),
    Req("GET", b"/api/v1/player/\xc3\xa9/eu"),
    Req("GET", b"/api/v1/player/\xff/eu"),
    Req("GET", b"/api/v1/player//eu"),
    Req("GET", b"/api/v1/player/1//"),
    Req("GET", b"/api/v1/player/1/eu/"),
    Req("GET", b"/api/v1/player/1/eu//"),
    Req("GET", b"//api/v1/status"),
    Req("GET", b"/api/v1/player/-1/eu"),
    Req("GET", b"/api/v1/player/1.5/eu"),
    Req("GET", b"/api/v1/player/" + str(2**63 - 1).encode() + b"/eu"),
    Req("GET", b"/api/v1/player/" + str(2**64).encode() + b"/eu"),
    Req("GET", b"/api/v1/clan/0/eu"),
    Req("GET", b"/api/v1/player/1/eu/history?days=5&days=6"),
    Req("GET", b"/api/v1/player/1/eu/history?days=-1"),
    Req("GET", b"/api/v1/player/1/eu/history?days=1e2"),
    Req("GET", b"/api/v1/player/1/eu/history?days=%00"),
    Req("GET", b"/api/v1/player/1/eu/history?days=%ff"),
    Req("GET", b"/api/v1/player/1/eu/history?%ff=1"),
    Req("GET", b"/api/v1/online/history?game=wot&game=wows"),
    Req("GET", b"/api/v1/online/history?region=all&region="),
    Req("GET", b"/api/v1/online/history?days=401&game=%00"),
    Req("GET", b"/api/v1/online/history?days"),
    Req("GET", b"/api/v1/online?%"),
    Req("GET", b"/api/v1/status?x=%zz"),
    Req("GET", b"/api/v2/online"),
    Req("GET", b"/api/%00/online"),
    Req("GET", b"/api"),
    Req("GET", b"/%2e%2e/%2e%2e/etc/passwd"),
    Req("GET", b"*"),
    Req("GET", b"http://127.0.0.1/api/v1/status"),
    Req("OPTIONS", b"*"),
    Req("CONNECT", b"127.0.0.1:80"),
    Req("TRACE", b"/api/v1/status"),
    Req("DELETE", b"/api/v1/player/1/eu"),
    Req("PROPFIND", b"/api/v1"),
    Req("get", b"/api/v1"),
    Req("HEAD", b"/api/v1/player/%00/eu"),
    Req("GET", b"/api/v1/status", (("If-None-Match", "*"),)),
    Req("GET", b"/api/v1/status", (("X-Forwarded-For", "not-an-ip, ::zz"),)),
]


def test_fuzz_every_endpoint(io_loop, served):
    app, port = served
    seen: dict[int, int] = {}

    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        print_blob=True,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
            HealthCheck.large_base_example,
        ],
    )
    @given(req=requests())
    def check(req: Req) -> None:
        status, headers, body = io_loop.run_sync(lambda: exchange(port, req.raw()), timeout=40)
        seen[status] = seen.get(status, 0) + 1
        check_answer(req, status, headers, body)

    for edge in EDGE_CASES:
        check = example(req=edge)(check)
    check()
    print(f"\nstatuses seen over {sum(seen.values())} requests: {dict(sorted(seen.items(), key=str))}")

    # The service is still up and nothing is left counted as in flight.
    status, _, body = io_loop.run_sync(lambda: exchange(port, Req("GET", b"/api/v1").raw()))
    assert status == 200 and ujson.loads(body)["success"] is True
    assert app.settings["services"].inflight == 0


# --- the site's static files: same rules (kept apart so a failure here is precise) ----
STATIC_EDGE_CASES = [
    Req("GET", b"/static/"),
    Req("GET", b"/static/%00"),
    Req("GET", b"/static/%ff"),
    Req("GET", b"/static/nope.js"),
    Req("POST", b"/static/nope.js"),
    Req("GET", b"/static/../../etc/passwd"),
    Req("GET", b"/static/%2e%2e/%2e%2e/etc/passwd"),
    Req("GET", b"/static/..%2f..%2fserver%2fconfig.py"),
    Req("GET", b"/static/.."),
    Req("GET", b"/static//etc/passwd"),
    Req("GET", b"/static/a%00b.js"),
    Req("HEAD", b"/static/%00"),
]


static_requests = st.builds(
    lambda segment, mode, method: Req(method, b"/static/" + encode(segment, mode)),
    text_value,
    st.sampled_from(["quote", "raw"]),
    METHODS,
)


def test_fuzz_static_paths(io_loop, served):
    app, port = served

    @settings(
        max_examples=60,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(req=static_requests)
    def check(req: Req) -> None:
        check_answer(req, *io_loop.run_sync(lambda: exchange(port, req.raw()), timeout=40))

    for edge in STATIC_EDGE_CASES:
        check = example(req=edge)(check)
    check()
    status, _, _ = io_loop.run_sync(lambda: exchange(port, Req("GET", b"/api/v1").raw()))
    assert status == 200
