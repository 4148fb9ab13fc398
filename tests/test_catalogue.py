"""The endpoint catalogue is the one source: routes, validation, limits, caching, the index and OpenAPI agree with it."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
import ujson
from tornado.httpclient import HTTPRequest

import handlers
from handlers.index import index_document
from handlers.openapi import openapi_document
from server.catalogue import CATALOGUE, LIVE_FETCHED_MAX_AGE, ONLINE_HISTORY, PREFIX, Endpoint, Param
from server.ratelimit import WINDOW_SECONDS, RateLimiter, scaled_limit
from tests.helpers import make_config

SCALE = 5.0  # the live test sends a dozen requests to endpoints limited to 10 a minute


@pytest.fixture
def app_overrides():
    return {"rate_limit_scale": SCALE}


def api_routes() -> list[tuple[str, type]]:
    return [(pattern, handler) for pattern, handler, *_ in handlers.routes if pattern.startswith(PREFIX)]


def catalogue_routes() -> dict[str, list[tuple[str, type]]]:
    routed: dict[str, list[tuple[str, type]]] = {}
    for pattern, handler in api_routes():
        endpoint = getattr(handler, "endpoint", None)
        if endpoint is not None:
            routed.setdefault(endpoint.name, []).append((pattern, handler))
    return routed


def example_path(endpoint: Endpoint) -> str:
    return (PREFIX + endpoint.example).split("?")[0]


def test_every_endpoint_is_routed_once_at_its_path_and_every_api_route_is_catalogued():
    routed = catalogue_routes()
    assert set(routed) == {endpoint.name for endpoint in CATALOGUE}
    for endpoint in CATALOGUE:
        assert len(routed[endpoint.name]) == 1, (endpoint.name, routed[endpoint.name])
        pattern, handler = routed[endpoint.name][0]
        assert handler.endpoint is endpoint
        assert pattern == endpoint.route_pattern()
        # The handler takes its limit bucket, cache lifetime and database dependence from the entry.
        assert (handler.bucket, handler.cache_max_age, handler.needs_database) == (
            endpoint.bucket,
            endpoint.cache_max_age,
            endpoint.needs_database,
        )
    # Nothing under the prefix is served by a handler outside the catalogue.
    uncatalogued = [handler.__name__ for _, handler in api_routes() if getattr(handler, "endpoint", None) is None]
    assert uncatalogued == []


def test_each_example_request_reaches_exactly_its_own_endpoint():
    patterns = [(re.compile(pattern + "$"), handler) for pattern, handler in api_routes()]
    for endpoint in CATALOGUE:
        path = example_path(endpoint)
        matched = [handler for regex, handler in patterns if regex.match(path)]
        assert [handler.endpoint for handler in matched] == [endpoint], path
        # With a trailing slash too, except after a file name (openapi.json).
        slash = [handler for regex, handler in patterns if regex.match(path.rstrip("/") + "/")]
        if "." in path.rsplit("/", 1)[1]:
            assert slash == []
        else:
            assert [handler.endpoint for handler in slash] == [endpoint], path


@pytest.mark.parametrize("scale", [1.0, 3.0])
def test_the_index_lists_the_catalogue(scale):
    index = index_document(make_config(rate_limit_scale=scale))
    assert [entry["name"] for entry in index["endpoints"]] == [endpoint.name for endpoint in CATALOGUE]
    for entry, endpoint in zip(index["endpoints"], CATALOGUE):
        assert entry["path"] == endpoint.full_path
        assert entry["cache_max_age"] == endpoint.cache_max_age
        assert entry["rate_limit_per_minute"] == scaled_limit(endpoint.limit_per_minute, scale)
        assert entry["example"] == PREFIX + endpoint.example
        assert entry["description"] == endpoint.description
        assert entry.get("fields", {}) == dict(endpoint.fields)
        assert ("live_lookup_limits" in entry) == endpoint.live_lookups
        assert len(entry["parameters"]) == len(endpoint.params)
        for listed, param in zip(entry["parameters"], endpoint.params):
            assert (listed["name"], listed["in"], listed["type"]) == (param.name, param.location, param.type)
            assert listed.get("required", False) == param.required
            for key in ("minimum", "maximum", "default"):
                assert listed.get(key) == getattr(param, key), (endpoint.name, param.name, key)
            assert listed.get("enum") == (list(param.enum) if param.enum is not None else None)


def documented_codes(doc: dict, operation: dict) -> set[str]:
    codes = set()
    for status, node in operation["responses"].items():
        if int(status) < 400:
            continue
        response = doc["components"]["responses"][node["$ref"].rsplit("/", 1)[1]] if "$ref" in node else node
        schema = response["content"]["application/json"]["schema"]
        codes.update(schema["allOf"][1]["properties"]["error"]["properties"]["code"]["enum"])
    return codes


@pytest.mark.parametrize("scale", [1.0, 3.0])
def test_the_openapi_document_describes_the_catalogue(scale):
    doc = openapi_document(make_config(rate_limit_scale=scale))
    assert list(doc["paths"]) == [endpoint.path or "/" for endpoint in CATALOGUE]
    schemas = doc["components"]["schemas"]
    for endpoint in CATALOGUE:
        item = doc["paths"][endpoint.path or "/"]
        for method in ("get", "head"):
            operation = item[method]
            assert operation["operationId"] == method + endpoint.operation_id
            assert operation["tags"] == [endpoint.tag]
            assert operation["x-rate-limit-per-minute"] == scaled_limit(endpoint.limit_per_minute, scale)
            assert operation["x-cache-max-age"] == endpoint.cache_max_age
            parameters = [p for p in operation["parameters"] if p["in"] != "header"]
            assert [(p["name"], p["in"], p["required"]) for p in parameters] == [
                (param.name, param.location, param.required) for param in endpoint.params
            ]
            for documented, param in zip(parameters, endpoint.params):
                schema = documented["schema"]
                assert schema["type"] == param.type
                for key in ("minimum", "maximum", "default"):
                    assert schema.get(key) == getattr(param, key), (endpoint.name, param.name, key)
                assert schema.get("enum") == (list(param.enum) if param.enum is not None else None)
        assert documented_codes(doc, item["get"]) == set(endpoint.error_codes), endpoint.name
        ok = item["get"]["responses"]["200"]["content"]["application/json"]["schema"]
        if endpoint.schema is None:
            assert "$ref" not in ok  # served raw
        else:
            assert ok == {"$ref": f"#/components/schemas/{endpoint.schema}Envelope"}
            assert schemas[endpoint.schema + "Envelope"]["properties"]["data"] == {
                "$ref": f"#/components/schemas/{endpoint.schema}"
            }
            assert endpoint.schema in schemas


def test_the_limiter_counts_each_bucket_at_the_catalogue_limit():
    for scale in (1.0, 0.5, 4.0):
        limiter = RateLimiter(None, scale=scale)
        for endpoint in CATALOGUE:
            assert limiter.limits[endpoint.bucket] == scaled_limit(endpoint.limit_per_minute, scale)


def bad_values(param: Param) -> list[str]:
    """Values the catalogue says this parameter refuses."""
    if param.type == "integer":
        assert param.minimum is not None and param.maximum is not None
        values = [str(param.minimum - 1), str(param.maximum + 1), "-1", "1.5", "abc", "", " 1", "１"]
        return [value for value in values if value or param.location == "query"]
    assert param.enum is not None
    return ["zz", param.enum[0].upper(), ""] if param.location == "query" else ["zz", param.enum[0].upper()]


async def get(http_client, base_url, path):
    request = HTTPRequest(base_url + path, request_timeout=30)
    response = await http_client.fetch(request, raise_error=False)
    return response, ujson.loads(response.body)


def with_value(endpoint: Endpoint, param: Param, value: str) -> str:
    """The endpoint's example request with one parameter set to `value`."""
    path = example_path(endpoint)
    if param.location == "path":
        parts = endpoint.full_path.split("/")
        concrete = path.split("/")
        concrete[parts.index("{" + param.name + "}")] = quote(value, safe="")
        return "/".join(concrete)
    return f"{path}?{param.name}={quote(value, safe='')}"


@pytest.mark.gen_test(timeout=120)
async def test_live_answers_follow_the_catalogue(app, http_client, base_url):
    config = app.settings["config"]
    for endpoint in CATALOGUE:
        limit = scaled_limit(endpoint.limit_per_minute, config.rate_limit_scale)
        # Every parameter refuses what the catalogue says it refuses, with its own code.
        for param in endpoint.params:
            for value in bad_values(param):
                response, body = await get(http_client, base_url, with_value(endpoint, param, value))
                assert response.code == 400, (endpoint.name, param.name, value, body)
                assert body["error"]["code"] == param.error, (endpoint.name, param.name, value)
            if param.location == "query":
                path = f"{example_path(endpoint)}?{param.name}={param.default}&{param.name}={param.default}"
                response, body = await get(http_client, base_url, path)
                assert (response.code, body["error"]["code"]) == (400, param.error), path
        # The example request: the bucket and limit the catalogue gives, its cache lifetime.
        response, body = await get(http_client, base_url, PREFIX + endpoint.example)
        assert response.headers["RateLimit-Policy"] == f'"{endpoint.bucket}";q={limit};w={WINDOW_SECONDS}'
        if response.code == 200:
            live = endpoint.live_lookups and body["data"].get("live_fetched")
            expected = LIVE_FETCHED_MAX_AGE if live else endpoint.cache_max_age
            assert response.headers["Cache-Control"] == f"public, max-age={expected}", endpoint.name
        else:  # a clan not cached yet, a player's history before any snapshot
            assert body["error"]["code"] in endpoint.error_codes, (endpoint.name, body)

    # Absent query parameters take the catalogue's defaults; the bounds themselves are accepted.
    response, body = await get(http_client, base_url, PREFIX + ONLINE_HISTORY.path)
    assert response.code == 200
    for param in ONLINE_HISTORY.params:
        assert body["data"][param.name] == param.default, param.name
    days = next(param for param in ONLINE_HISTORY.params if param.name == "days")
    for value in (days.minimum, days.maximum):
        response, body = await get(http_client, base_url, f"{PREFIX}{ONLINE_HISTORY.path}?days={value}")
        assert response.code == 200 and body["data"]["days"] == value
