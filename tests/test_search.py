"""Nickname search: the simulator's account/list, UpstreamClient.account_list and server/services/search.py."""

from __future__ import annotations

import asyncio
import re

import pytest
import ujson
from tornado.httpclient import HTTPRequest

from scripts import upstream_sim as sim
from scripts.upstream_sim.methods import SEARCHABLE_IDS
from server.contract.errors import APIError
from server.services.search import PlayerSearch
from server.serving.ratelimit import GLOBAL_CLIENT, WINDOW_SECONDS, RateLimiter, counter_key
from server.upstream.client import UpstreamClient, UpstreamUnavailable

FROZEN_NOW = 1_750_000_000  # 2025-06-15
APP_ID = "search-test-app"
NICK = re.compile(r"[A-Za-z0-9_]+")


@pytest.fixture
def app():
    """The simulator in-process (pytest-tornado serves it), 10 requests/s like the tests' upstream."""
    return sim.make_app(now=FROZEN_NOW, rps=10)


@pytest.fixture
def call(http_client, base_url):
    async def call(path: str, app_id: str = APP_ID, **params):
        query = "&".join(f"{k}={v}" for k, v in {"application_id": app_id, **params}.items())
        response = await http_client.fetch(HTTPRequest(f"{base_url}{path}?{query}"), raise_error=False)
        return ujson.loads(response.body)

    return call


@pytest.fixture
def upstream(http_server, base_url):
    """The service's upstream client talking to the simulator (http_server: started before use)."""
    client = UpstreamClient(APP_ID, base_url=base_url, retry_base_delay=0.01)
    yield client
    client.close()


def searchable(region: str) -> list[tuple[str, int]]:
    """(nickname, account_id) of every account account/list can find, written out by brute force."""
    lo = sim.REGION_RANGES[region][0]
    return [
        (sim.nickname(region, a), a)
        for a in range(lo, lo + SEARCHABLE_IDS)
        if sim.account_exists(region, a) and sim.account_created_at(region, a) <= FROZEN_NOW
    ]


def expected_prefix(region: str, prefix: str) -> list[dict]:
    rows = [(n, a) for n, a in searchable(region) if n.lower().startswith(prefix.lower())]
    return [{"nickname": n, "account_id": a} for n, a in sorted(rows, key=lambda r: (r[0].lower(), r[1]))]


def a_nickname(region: str = "eu", skip: int = 0) -> tuple[str, int]:
    """A searchable account whose nickname is all letters, digits and underscores."""
    rows = [(n, a) for n, a in searchable(region)[:200] if NICK.fullmatch(n)]
    return rows[skip]


# --- the simulator's wot/account/list ---------------------------------------------------------


@pytest.mark.gen_test(timeout=30)
async def test_sim_account_list_startswith_is_a_sorted_case_insensitive_prefix_match(call):
    nick, account_id = a_nickname()
    prefix = nick[:8].swapcase()
    doc = await call("/wot/eu/wot/account/list/", search=prefix)
    assert doc["status"] == "ok"
    want = expected_prefix("eu", prefix)
    assert 2 <= len(want) < 100
    assert doc["data"] == want and doc["meta"]["count"] == len(want)
    assert {"nickname": nick, "account_id": account_id} in doc["data"]
    # limit trims; fields trims each row.
    doc = await call("/wot/eu/wot/account/list/", search=prefix, limit=1, fields="account_id")
    assert doc["data"] == [{"account_id": want[0]["account_id"]}]
    # Another region has other accounts.
    doc = await call("/wot/na/wot/account/list/", search=prefix, limit=100)
    assert doc["data"] == expected_prefix("na", prefix)


@pytest.mark.gen_test(timeout=30)
async def test_sim_account_list_limit_default_and_maximum_100(call):
    assert len(expected_prefix("eu", "tig")) > 100
    for params in ({}, {"limit": 500}, {"limit": 100}):
        doc = await call("/wot/eu/wot/account/list/", search="tig", **params)
        assert doc["data"] == expected_prefix("eu", "tig")[:100], params
    doc = await call("/wot/eu/wot/account/list/", search="tig", limit=7)
    assert len(doc["data"]) == 7


@pytest.mark.gen_test(timeout=30)
async def test_sim_account_list_exact_names(call):
    (nick_a, id_a), (nick_b, id_b) = a_nickname(skip=0), a_nickname(skip=1)
    doc = await call("/wot/eu/wot/account/list/", search=f"{nick_a.upper()},{nick_b.lower()}", type="exact")
    assert {"nickname": nick_a, "account_id": id_a} in doc["data"]
    assert {"nickname": nick_b, "account_id": id_b} in doc["data"]
    assert all(row["nickname"].lower() in (nick_a.lower(), nick_b.lower()) for row in doc["data"])
    # exact is not a prefix match, and takes shorter names than startswith.
    doc = await call("/wot/eu/wot/account/list/", search=nick_a[:-1], type="exact")
    assert all(row["nickname"].lower() == nick_a[:-1].lower() for row in doc["data"])
    doc = await call("/wot/eu/wot/account/list/", search="ab", type="exact")
    assert doc["status"] == "ok"


@pytest.mark.gen_test(timeout=30)
async def test_sim_account_list_only_finds_accounts_created_by_then(call):
    nick, account_id = a_nickname()
    created = sim.account_created_at("eu", account_id)
    doc = await call("/wot/eu/wot/account/list/", search=nick, type="exact", _sim_now=created - 1)
    assert account_id not in [row["account_id"] for row in doc["data"]]
    doc = await call("/wot/eu/wot/account/list/", search=nick, type="exact", _sim_now=created)
    assert account_id in [row["account_id"] for row in doc["data"]]


@pytest.mark.gen_test(timeout=30)
async def test_sim_account_list_rejects_what_the_real_api_rejects(call):
    cases = [
        ({}, 402, "SEARCH_NOT_SPECIFIED", "search"),
        ({"search": ""}, 402, "SEARCH_NOT_SPECIFIED", "search"),
        ({"search": "ab"}, 407, "NOT_ENOUGH_SEARCH_LENGTH", "search"),
        ({"search": "a" * 25}, 407, "INVALID_SEARCH", "search"),
        ({"search": "ab-c"}, 407, "INVALID_SEARCH", "search"),
        ({"search": "ab%20cd"}, 407, "INVALID_SEARCH", "search"),
        ({"search": "abc", "type": "contains"}, 407, "INVALID_TYPE", "type"),
        ({"search": "abc", "limit": "x"}, 407, "INVALID_LIMIT", "limit"),
        ({"search": "abc", "limit": "0"}, 407, "INVALID_LIMIT", "limit"),
        ({"search": "abc", "language": "xx"}, 407, "INVALID_LANGUAGE", "language"),
        ({"search": "a,,b", "type": "exact"}, 407, "INVALID_SEARCH", "search"),
        (
            {"search": ",".join(f"name{i}" for i in range(101)), "type": "exact"},
            407,
            "SEARCH_LIST_LIMIT_EXCEEDED",
            "search",
        ),
    ]
    for number, (params, code, message, field) in enumerate(cases):
        # One application_id per case: the cases together exceed the 10 requests per second.
        doc = await call("/wot/eu/wot/account/list/", app_id=f"case-{number}", **params)
        assert doc["status"] == "error", params
        error = doc["error"]
        assert (error["code"], error["message"], error["field"]) == (code, message, field), params
    doc = await call("/wot/eu/wot/account/list/", search="abc", language="de")
    assert doc["status"] == "ok"
    stats = await call("/_sim/stats")
    assert stats["by_path"]["wot/account/list"] == len(cases) + 1
    assert stats["violations"]["ids_limit"] == 1  # the 101 names


# --- UpstreamClient.account_list ---------------------------------------------------------------


@pytest.mark.gen_test(timeout=30)
async def test_upstream_client_account_list(upstream, call):
    rows = await upstream.account_list("eu", "tig")
    assert rows == expected_prefix("eu", "tig")[:10]
    assert [set(r) for r in rows] == [{"account_id", "nickname"}] * 10
    assert await upstream.account_list("na", "tig", limit=3) == expected_prefix("na", "tig")[:3]
    assert await upstream.account_list("eu", "zzzzzz") == []
    stats = await call("/_sim/stats")
    assert stats["by_path"]["wot/account/list"] == 3 and stats["violations"]["total"] == 0


# --- server/services/search.py ---------------------------------------------------------------------------


class FakeTracked:
    """store/tracker.py's search_prefix over a list of {account_id, nickname, region}."""

    def __init__(self, rows):
        self.rows = rows
        self.calls = 0

    async def search_prefix(self, region, prefix, limit=10):
        self.calls += 1
        found = [r for r in self.rows if r["region"] == region and r["nickname"].lower().startswith(prefix.lower())]
        return sorted(found, key=lambda r: r["nickname"].lower())[:limit]


class MemoryCounters:
    """store.ratelimit.RateCounters in memory (the limiter's shared live budget needs only these)."""

    def __init__(self):
        self.counts: dict[str, int] = {}

    async def read(self, keys):
        return {k: self.counts[k] for k in keys if k in self.counts}

    async def increment(self, key, by=1):
        self.counts[key] = self.counts.get(key, 0) + by

    async def increment_below(self, key, cap, amount=1):
        if self.counts.get(key, 0) + amount > cap:
            return None
        self.counts[key] = self.counts.get(key, 0) + amount
        return self.counts[key]

    def global_live(self) -> int:
        return sum(v for k, v in self.counts.items() if "|live_global|" in k)


class CountingUpstream:
    def __init__(self, inner=None):
        self.inner = inner
        self.calls = []

    async def account_list(self, region, search, limit=10, caller="live"):
        self.calls.append((region, search, limit, caller))
        if self.inner is None:
            raise AssertionError("the upstream must not be asked")
        return await self.inner.account_list(region, search, limit=limit, caller=caller)


TRACKED = [
    {"account_id": 500000101, "nickname": "TigerKa1", "region": "eu"},
    {"account_id": 500000102, "nickname": "tiger_bo", "region": "eu"},
    {"account_id": 500000103, "nickname": "Wolfram", "region": "eu"},
    {"account_id": 1000000101, "nickname": "TigerNa", "region": "na"},
    *({"account_id": 2000000100 + i, "nickname": f"Tigris{i:02d}", "region": "asia"} for i in range(12)),
]


NOW = 1_000_020.0  # the limiter's clock: a third into a window, nothing in the previous one


def limiter() -> tuple[RateLimiter, MemoryCounters]:
    counters = MemoryCounters()
    return RateLimiter(counters, clock=lambda: NOW), counters


@pytest.mark.gen_test(timeout=30)
async def test_bad_search_text_and_region_are_invalid_before_any_lookup():
    tracked, upstream = FakeTracked(TRACKED), CountingUpstream()
    search = PlayerSearch(tracked, upstream)
    for text in ("ab", "a" * 25, "tig er", "tig-er", "tig%", "тигр", "", None, "tiger\n"):
        with pytest.raises(APIError) as caught:
            await search.search("eu", text, "1.2.3.4")
        assert caught.value.code == "invalid_search" and caught.value.status_code == 400, text
    with pytest.raises(APIError) as caught:
        await search.search("ru", "tiger", "1.2.3.4")
    assert caught.value.code == "invalid_region"
    assert tracked.calls == 0 and upstream.calls == []
    # The limits of the text are inclusive (3 and 24 characters).
    long_name = {"account_id": 500000104, "nickname": "W" * 24, "region": "eu"}
    search = PlayerSearch(FakeTracked([*TRACKED, long_name]), upstream)
    assert [r["nickname"] for r in (await search.search("eu", "Wol", "1.2.3.4"))["results"]] == ["Wolfram"]
    assert [r["account_id"] for r in (await search.search("eu", "w" * 24, "1.2.3.4"))["results"]] == [500000104]


@pytest.mark.gen_test(timeout=30)
async def test_tracked_matches_answer_without_the_upstream_or_live_budget():
    tracked, upstream = FakeTracked(TRACKED), CountingUpstream()
    limits, counters = limiter()
    search = PlayerSearch(tracked, upstream, limits)
    got = await search.search("eu", "TIGER", "1.2.3.4")
    assert got == {
        "search": "TIGER",
        "region": "eu",
        "source": "tracked",
        "results": [
            {"account_id": 500000102, "nickname": "tiger_bo", "region": "eu", "tracked": True},
            {"account_id": 500000101, "nickname": "TigerKa1", "region": "eu", "tracked": True},
        ],
    }
    # Without a region: every region's tracked matches, sorted by nickname, at most 10.
    got = await search.search(None, "tig", "1.2.3.4")
    assert got["region"] is None and got["source"] == "tracked" and len(got["results"]) == 10
    names = [r["nickname"] for r in got["results"]]
    assert names == sorted(names, key=str.lower)
    assert names[:3] == ["tiger_bo", "TigerKa1", "TigerNa"] and {r["region"] for r in got["results"]} == {
        "eu",
        "na",
        "asia",
    }
    assert upstream.calls == [] and counters.global_live() == 0
    # Even a client out of live lookups is answered from the tracked set.
    for _ in range(10):
        limits.hit("9.9.9.9", "live")
    assert (await search.search("eu", "wolf", "9.9.9.9"))["results"][0]["account_id"] == 500000103


@pytest.mark.gen_test(timeout=30)
async def test_untracked_text_is_searched_upstream_at_one_live_lookup(upstream, call):
    limits, counters = limiter()
    counting = CountingUpstream(upstream)
    search = PlayerSearch(FakeTracked(TRACKED), counting, limits)
    got = await search.search("eu", "Pan", "1.2.3.4")
    want = expected_prefix("eu", "Pan")[:10]
    assert len(want) == 10
    assert got["source"] == "upstream" and got["search"] == "Pan" and got["region"] == "eu"
    assert got["results"] == [{**row, "region": "eu", "tracked": False} for row in want]
    assert counting.calls == [("eu", "Pan", 10, "live")]
    # One of the client's 5 live lookups went to the search: after one more, 3 remain.
    assert counters.global_live() == 1 and limits.hit("1.2.3.4", "live").remaining == 3
    # The same search again (any case) is answered from the cache: no upstream call, no live lookup.
    again = await search.search("eu", "pAN", "5.6.7.8")
    assert again["results"] == got["results"] and again["search"] == "pAN"
    assert len(counting.calls) == 1 and counters.global_live() == 1


@pytest.mark.gen_test(timeout=30)
async def test_without_a_region_every_region_is_searched_at_one_live_lookup_each(upstream):
    limits, counters = limiter()
    counting = CountingUpstream(upstream)
    search = PlayerSearch(FakeTracked([]), counting, limits)
    got = await search.search(None, "Wolf", "1.2.3.4")
    assert sorted(c[0] for c in counting.calls) == ["asia", "eu", "na"]
    assert counters.global_live() == 3
    merged = [{**row, "region": r} for r in ("eu", "na", "asia") for row in expected_prefix(r, "Wolf")[:10]]
    merged.sort(key=lambda row: (row["nickname"].lower(), ("eu", "na", "asia").index(row["region"]), row["account_id"]))
    assert got["results"] == [{**row, "tracked": False} for row in merged[:10]]
    assert got["region"] is None and got["source"] == "upstream"


@pytest.mark.gen_test(timeout=30)
async def test_upstream_searches_obey_the_client_and_global_live_limits(upstream):
    limits, counters = limiter()
    counting = CountingUpstream(upstream)
    search = PlayerSearch(FakeTracked([]), counting, limits)
    # A client with 3 of its 5 live lookups used cannot afford an all-region search (3 lookups)...
    for _ in range(3):
        assert limits.hit("1.2.3.4", "live").allowed
    with pytest.raises(APIError) as caught:
        await search.search(None, "Storm", "1.2.3.4")
    assert caught.value.code == "rate_limited" and int(caught.value.headers["Retry-After"]) >= 1
    assert counting.calls == [] and counters.global_live() == 0
    # ...and was refunded what it was charged: one region still fits, twice.
    await search.search("eu", "Storm", "1.2.3.4")
    await search.search("na", "Storm", "1.2.3.4")
    assert counters.global_live() == 2
    with pytest.raises(APIError) as caught:
        await search.search("asia", "Storm", "1.2.3.4")
    assert caught.value.code == "rate_limited"
    # The shared budget: once it is spent, every client gets rate_limited_global and keeps its own lookups.
    window = int(NOW // WINDOW_SECONDS)
    counters.counts[counter_key(GLOBAL_CLIENT, "live_global", window)] = limits.global_live_limit
    with pytest.raises(APIError) as caught:
        await search.search("asia", "Storm", "5.6.7.8")
    assert caught.value.code == "rate_limited_global" and int(caught.value.headers["Retry-After"]) >= 1
    assert limits.hit("5.6.7.8", "live").remaining == 5 - 1
    assert [c[0] for c in counting.calls] == ["eu", "na"]


@pytest.mark.gen_test(timeout=30)
async def test_concurrent_identical_searches_share_one_upstream_call(upstream):
    limits, counters = limiter()
    counting = CountingUpstream(upstream)
    search = PlayerSearch(FakeTracked([]), counting, limits)
    answers = await asyncio.gather(*(search.search("eu", "Raven", f"10.0.0.{i}") for i in range(5)))
    assert all(a == answers[0] for a in answers) and answers[0]["results"]
    assert len(counting.calls) == 1 and counters.global_live() == 1


@pytest.mark.gen_test(timeout=30)
async def test_an_upstream_that_fails_gives_upstream_unavailable_and_is_not_cached(
    upstream, call, http_client, base_url
):
    search = PlayerSearch(FakeTracked([]), upstream)
    body = ujson.dumps({"fail_next": 3, "fail_mode": "error"})
    await http_client.fetch(f"{base_url}/_sim/faults", method="POST", body=body)
    with pytest.raises(UpstreamUnavailable):
        await search.search("eu", "Ghost", "1.2.3.4")
    got = await search.search("eu", "Ghost", "1.2.3.4")
    assert got["results"] == [{**r, "region": "eu", "tracked": False} for r in expected_prefix("eu", "Ghost")[:10]]
