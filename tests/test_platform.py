"""The HTTP contract over a real database: envelope, headers, methods, routing, errors, limits."""

from __future__ import annotations

import re

import pytest
import ujson
from tornado.httpclient import HTTPRequest

GENERATED = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$")
ENDPOINT_NAMES = {"index", "player", "history", "clan", "weekly", "online", "online_history", "status"}


async def fetch(http_client, base_url, path, method="GET", headers=None, body=None):
    if body is None and method in ("POST", "PUT", "PATCH"):
        body = b"{}"
    request = HTTPRequest(
        base_url + path, method=method, headers=headers, body=body, allow_nonstandard_methods=True, request_timeout=10
    )
    return await http_client.fetch(request, raise_error=False)


def envelope_error(response) -> dict:
    body = ujson.loads(response.body)
    assert body["success"] is False
    assert "data" not in body
    assert set(body["error"]) >= {"code", "message"}
    assert "Traceback" not in response.body.decode()
    return body["error"]


def assert_common_headers(response):
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert response.headers["Content-Type"] == "application/json; charset=utf-8"
    assert re.match(r"^public, max-age=\d+", response.headers["Cache-Control"])
    assert "Retry-After" in response.headers["Access-Control-Expose-Headers"]


@pytest.mark.gen_test
@pytest.mark.parametrize("path", ["/api/v1", "/api/v1/"])
async def test_index_lists_every_endpoint_and_error(http_client, base_url, path):
    response = await fetch(http_client, base_url, path)
    assert response.code == 200
    assert_common_headers(response)
    body = ujson.loads(response.body)
    assert body["success"] is True
    meta = body["meta"]
    assert meta["version"] == "v1"
    assert GENERATED.match(meta["generated"])
    assert "link" in meta["attribution"] and meta["source"]
    endpoints = {e["name"]: e for e in body["data"]["endpoints"]}
    assert ENDPOINT_NAMES <= set(endpoints)
    for endpoint in endpoints.values():
        assert endpoint["method"] == "GET"
        assert endpoint["path"].startswith("/api/v1")
        assert isinstance(endpoint["rate_limit_per_minute"], int)
        assert isinstance(endpoint["cache_max_age"], int)
        assert endpoint["example"].startswith("/api/v1")
    assert endpoints["player"]["rate_limit_per_minute"] == 30
    assert endpoints["history"]["rate_limit_per_minute"] == 20
    assert endpoints["weekly"]["rate_limit_per_minute"] == 10
    assert endpoints["online"]["rate_limit_per_minute"] == 60
    days = next(p for p in endpoints["history"]["parameters"] if p["name"] == "days")
    assert (days["minimum"], days["maximum"], days["default"]) == (1, 400, 30)
    codes = {e["code"]: e["status"] for e in body["data"]["errors"]}
    for code, status in [
        ("invalid_account_id", 400),
        ("invalid_region", 400),
        ("invalid_clan_id", 400),
        ("invalid_days", 400),
        ("invalid_game", 400),
        ("player_not_found", 404),
        ("clan_not_cached", 404),
        ("no_history", 404),
        ("unknown_endpoint", 404),
        ("unknown_version", 404),
        ("method_not_allowed", 405),
        ("rate_limited", 429),
        ("rate_limited_global", 429),
        ("database_unavailable", 503),
        ("upstream_unavailable", 503),
    ]:
        assert codes[code] == status


ERROR_CASES = [
    ("/api/v1/player/abc/eu", 400, "invalid_account_id"),
    ("/api/v1/player/0/eu", 400, "invalid_account_id"),
    ("/api/v1/player/-5/eu", 400, "invalid_account_id"),
    ("/api/v1/player/1.5/eu", 400, "invalid_account_id"),
    ("/api/v1/player/%2B5/eu", 400, "invalid_account_id"),
    ("/api/v1/player/99999999999999999999999/eu", 400, "invalid_account_id"),
    ("/api/v1/player/%00/eu", 400, "invalid_account_id"),
    ("/api/v1/player/500000001/ru", 400, "invalid_region"),
    ("/api/v1/player/500000001/EU", 400, "invalid_region"),
    ("/api/v1/player/500000001/eu/history?days=0", 400, "invalid_days"),
    ("/api/v1/player/500000001/eu/history?days=401", 400, "invalid_days"),
    ("/api/v1/player/500000001/eu/history?days=abc", 400, "invalid_days"),
    ("/api/v1/player/500000001/eu/history?days=5&days=6", 400, "invalid_days"),
    ("/api/v1/player/x/eu/history", 400, "invalid_account_id"),
    ("/api/v1/clan/abc/eu", 400, "invalid_clan_id"),
    ("/api/v1/clan/0/eu/weekly", 400, "invalid_clan_id"),
    ("/api/v1/clan/5/moon", 400, "invalid_region"),
    ("/api/v1/online/history?game=lol", 400, "invalid_game"),
    ("/api/v1/online/history?region=ru", 400, "invalid_region"),
    ("/api/v1/online/history?days=999", 400, "invalid_days"),
    ("/api/v1/online/history?days=-1", 400, "invalid_days"),
    ("/api/v1/player/%ff/eu", 400, "bad_request"),
    ("/nope", 404, "unknown_endpoint"),
    ("/api", 404, "unknown_endpoint"),
    ("/api/v1/nope", 404, "unknown_endpoint"),
    ("/api/v1/player/1", 404, "unknown_endpoint"),
    ("/static/missing.js", 404, "unknown_endpoint"),
    ("/api/v2", 404, "unknown_version"),
    ("/api/v2/player/1/eu", 404, "unknown_version"),
    ("/api/latest/status", 404, "unknown_version"),
    ("/api/v1/clan/123/eu", 404, "clan_not_cached"),
    ("/api/v1/player/500000001/eu/history", 404, "no_history"),
]


@pytest.mark.gen_test
@pytest.mark.parametrize("path,status,code", ERROR_CASES)
async def test_errors_are_enveloped_with_headers(http_client, base_url, path, status, code):
    response = await fetch(http_client, base_url, path)
    assert response.code == status
    assert envelope_error(response)["code"] == code
    assert_common_headers(response)
    assert "Retry-After" not in response.headers


@pytest.mark.gen_test
async def test_rate_limit_headers_on_data_endpoints(http_client, base_url):
    response = await fetch(http_client, base_url, "/api/v1/clan/abc/eu")
    assert response.headers["X-RateLimit-Limit"] == "30"
    assert response.headers["X-RateLimit-Remaining"] == "29"
    assert 1 <= int(response.headers["X-RateLimit-Reset"]) <= 60
    assert response.headers["RateLimit-Policy"] == '"clan";q=30;w=60'
    assert re.match(r'^"clan";r=29;t=\d+$', response.headers["RateLimit"])


@pytest.mark.gen_test
async def test_head_matches_get_without_body(http_client, base_url):
    get = await fetch(http_client, base_url, "/api/v1")
    head = await fetch(http_client, base_url, "/api/v1", method="HEAD")
    assert head.code == 200 and head.body == b""
    assert head.headers["Content-Length"] == get.headers["Content-Length"]
    assert head.headers["ETag"] == get.headers["ETag"]
    assert_common_headers(head)
    missing = await fetch(http_client, base_url, "/api/v1/nope", method="HEAD")
    assert missing.code == 404 and missing.body == b""
    assert_common_headers(missing)


@pytest.mark.gen_test
@pytest.mark.parametrize("path", ["/api/v1", "/api/v1/player/500000001/eu", "/api/v1/online/history"])
async def test_cors_preflight(http_client, base_url, path):
    response = await fetch(
        http_client,
        base_url,
        path,
        method="OPTIONS",
        headers={
            "Origin": "https://example.org",
            "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "if-none-match",
        },
    )
    assert response.code == 204
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert "GET" in response.headers["Access-Control-Allow-Methods"]
    assert "If-None-Match" in response.headers["Access-Control-Allow-Headers"]
    assert int(response.headers["Access-Control-Max-Age"]) > 0


@pytest.mark.gen_test
@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE", "PROPFIND"])
@pytest.mark.parametrize("path", ["/api/v1", "/api/v1/player/500000001/eu", "/api/v1/status", "/"])
async def test_other_methods_get_405_with_allow(http_client, base_url, method, path):
    response = await fetch(http_client, base_url, path, method=method)
    assert response.code == 405
    assert envelope_error(response)["code"] == "method_not_allowed"
    assert response.headers["Allow"] == "GET, HEAD, OPTIONS"
    assert response.headers["Access-Control-Allow-Origin"] == "*"


@pytest.mark.gen_test
async def test_etag_gives_304(http_client, base_url):
    first = await fetch(http_client, base_url, "/api/v1")
    etag = first.headers["ETag"]
    again = await fetch(http_client, base_url, "/api/v1")
    # meta.generated may change between the two; the ETag covers data only.
    assert again.headers["ETag"] == etag
    conditional = await fetch(http_client, base_url, "/api/v1", headers={"If-None-Match": etag})
    assert conditional.code == 304 and conditional.body == b""
    other = await fetch(http_client, base_url, "/api/v1", headers={"If-None-Match": '"nope"'})
    assert other.code == 200


@pytest.mark.gen_test
async def test_429_with_retry_after_after_the_limit(http_client, base_url):
    codes = []
    for _ in range(10):
        response = await fetch(http_client, base_url, "/api/v1/clan/1/eu/weekly")
        codes.append(response.code)
    assert 429 not in codes
    limited = await fetch(http_client, base_url, "/api/v1/clan/1/eu/weekly")
    assert limited.code == 429
    assert envelope_error(limited)["code"] == "rate_limited"
    retry_after = limited.headers["Retry-After"]
    assert retry_after.isdigit() and 1 <= int(retry_after) <= 120
    assert limited.headers["X-RateLimit-Remaining"] == "0"
    assert "no-store" in limited.headers["Cache-Control"]
    assert limited.headers["Access-Control-Allow-Origin"] == "*"
    # Other endpoints have their own budgets.
    assert (await fetch(http_client, base_url, "/api/v1/clan/1/eu")).code != 429


@pytest.mark.gen_test
async def test_spoofed_forwarded_headers_from_untrusted_peer_are_ignored(http_client, base_url):
    codes = []
    for i in range(11):
        spoof = {"X-Forwarded-For": f"203.0.113.{i}", "X-Real-Ip": f"198.51.100.{i}"}
        codes.append((await fetch(http_client, base_url, "/api/v1/clan/1/eu/weekly", headers=spoof)).code)
    assert codes[:10] == [404] * 10
    assert codes[10] == 429


@pytest.mark.gen_test
async def test_status_reports_health_database_and_caches(http_client, base_url):
    response = await fetch(http_client, base_url, "/api/v1/status")
    assert response.code == 200
    data = ujson.loads(response.body)["data"]
    assert data["health"] == "ok"
    assert data["database"]["reachable"] is True
    assert isinstance(data["database"]["ping_ms"], float)
    assert data["version"] and data["uptime_seconds"] >= 0
    assert "newest_player" in data["caches"]
    assert "last_success" in data["upstream"] and "last_failure" in data["upstream"]
    assert isinstance(data["jobs"], dict)
    assert "test-app-id-secret" not in response.body.decode()


@pytest.mark.gen_test
async def test_site_is_served_at_root(http_client, base_url):
    response = await fetch(http_client, base_url, "/")
    assert response.code == 200
    assert response.headers["Content-Type"].startswith("text/html")
    assert b"statsapi" in response.body
