"""The endpoint catalogue is the one source: routes, validation, limits, caching, the index and OpenAPI agree with it."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, quote, urlencode

import pytest
import ujson
from tornado.httpclient import HTTPRequest

import handlers
from handlers.index import index_document
from handlers.openapi import openapi_document, openapi_parameter
from handlers.params import arguments
from server.contract.catalogue import CATALOGUE, ONLINE_HISTORY, PREFIX, Endpoint, Param
from server.contract.errors import ERROR_CODES, APIError
from server.serving.ratelimit import WINDOW_SECONDS, RateLimiter, scaled_limit
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
            bounds = {key: value for key, value in listed.items() if key not in ("name", "in", "type", "required")}
            assert bounds == param.constraints(), (endpoint.name, param.name)


def documented_codes(doc: dict, operation: dict) -> set[str]:
    codes = set()
    for status, node in operation["responses"].items():
        if int(status) < 400:
            continue
        response = doc["components"]["responses"][node["$ref"].rsplit("/", 1)[1]] if "$ref" in node else node
        schema = next(iter(response["content"].values()))["schema"]
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
                format = {"format": param.format} if param.format is not None else {}
                assert documented["schema"] == {"type": param.type, **param.constraints(), **format}, param.name
        assert documented_codes(doc, item["get"]) == set(endpoint.error_codes), endpoint.name
        ok = item["get"]["responses"]["200"]["content"][endpoint.media_type]["schema"]
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


class QueryOnly:
    """What handlers/params.py reads of a handler: the query arguments."""

    def __init__(self, **query: list[str]):
        self.query = query

    def get_query_arguments(self, name: str, strip: bool = False) -> list[str]:
        return self.query.get(name, [])


def test_free_text_and_required_query_parameters_are_checked_as_declared():
    # No endpoint has them yet (GET /players?search= will): the parsing is checked on its own.
    search = Param(
        "search",
        "query",
        "string",
        "bad_request",
        "Text.",
        min_length=3,
        max_length=5,
        pattern="^[a-z_]*$",
        required=True,
    )
    region = Param("region", "query", "string", "invalid_region", "Region.", enum=("eu", "na"))
    params = (search, region)
    assert arguments(QueryOnly(search=["abc"]), params, ()) == {"search": "abc", "region": None}
    assert arguments(QueryOnly(search=["ab_de"], region=["na"]), params, ()) == {"search": "ab_de", "region": "na"}
    for query in ({}, {"search": ["ab"]}, {"search": ["abcdef"]}, {"search": ["ab c"]}, {"search": ["abc\n"]}):
        with pytest.raises(APIError) as refused:
            arguments(QueryOnly(**query), params, ())
        assert refused.value.code == "bad_request", query
    with pytest.raises(APIError) as refused:
        arguments(QueryOnly(search=["abc"], region=["asia"]), params, ())
    assert refused.value.code == "invalid_region"
    # The index and the document state the same bounds, under JSON Schema's names.
    bounds = {"minLength": 3, "maxLength": 5, "pattern": "^[a-z_]*$"}
    assert search.index_entry() == {"name": "search", "in": "query", "type": "string", **bounds, "required": True}
    documented = openapi_parameter(search)
    assert (documented["required"], documented["schema"]) == (True, {"type": "string", **bounds})
    with pytest.raises(AssertionError):
        Param("search", "query", "string", "bad_request", "Text.", pattern="[a-z]+")  # unanchored


def bad_values(param: Param) -> list[str]:
    """Values the catalogue says this parameter refuses."""
    if param.type == "integer":
        assert param.minimum is not None and param.maximum is not None
        values = [str(param.minimum - 1), str(param.maximum + 1), "-1", "1.5", "abc", "", " 1", "１"]
        if param.enum is not None:  # within the bounds, not an allowed value
            values.append(str(next(v for v in range(param.minimum, param.maximum) if v not in param.enum)))
        return [value for value in values if value or param.location == "query"]
    if param.enum is not None:  # off the list, and a value's other case (where that is not on the list)
        values = ["zz", *(str(v).upper() for v in param.enum), ""]
        return [v for v in values if v not in param.enum and (v or param.location == "query")]
    # Free text: one character too short and too long, and a value of a good length off its pattern.
    assert param.min_length is not None and param.max_length is not None, param.name  # free text is bounded
    values = ["a" * (param.min_length - 1), "a" * (param.max_length + 1)]
    if param.pattern is not None:
        values += [
            value
            for value in ("!" * param.min_length, " " * param.min_length)
            if not re.fullmatch(param.pattern, value)
        ]
    if param.format == "date":  # on the pattern, not a day of the calendar
        values += ["0000-00-00", "2026-02-30"]
    return [value for value in values if value or param.location == "query"]


async def get(http_client, base_url, path):
    request = HTTPRequest(base_url + path, request_timeout=30)
    response = await http_client.fetch(request, raise_error=False)
    return response, ujson.loads(response.body)


def example_query(endpoint: Endpoint) -> dict[str, str]:
    return dict(parse_qsl((PREFIX + endpoint.example).partition("?")[2]))


def with_value(endpoint: Endpoint, param: Param, *values: str) -> str:
    """The endpoint's example request with one parameter set to `values` (none: left out)."""
    path = example_path(endpoint)
    if param.location == "path":
        (value,) = values
        parts = endpoint.full_path.split("/")
        concrete = path.split("/")
        concrete[parts.index("{" + param.name + "}")] = quote(value, safe="")
        return "/".join(concrete)
    query = [(name, value) for name, value in example_query(endpoint).items() if name != param.name]
    query += [(param.name, value) for value in values]
    return f"{path}?{urlencode(query)}" if query else path


def good_value(endpoint: Endpoint, param: Param) -> str:
    """A value the parameter accepts: the example's, its default, its first allowed value, its own
    example or its minimum."""
    value = example_query(endpoint).get(param.name, param.default)
    if value is None and param.enum is not None:
        value = param.enum[0]
    if value is None:
        value = param.example if param.example is not None else param.minimum
    assert value is not None, (endpoint.name, param.name)
    return str(value)


@pytest.mark.gen_test(timeout=120)
async def test_live_answers_follow_the_catalogue(app, http_client, base_url):
    config = app.settings["config"]
    for endpoint in CATALOGUE:
        limit = scaled_limit(endpoint.limit_per_minute, config.rate_limit_scale)
        # Every parameter refuses what the catalogue says it refuses, with its own code.
        for param in endpoint.params:
            for value in bad_values(param):
                response, body = await get(http_client, base_url, with_value(endpoint, param, value))
                # 400, or the status of the parameter's own code (a file name no file has: 404).
                assert response.code == ERROR_CODES[param.error][0], (endpoint.name, param.name, value, body)
                assert body["error"]["code"] == param.error, (endpoint.name, param.name, value)
            if param.location == "query":
                # Given twice it is ambiguous; left out it is required or takes its default.
                value = good_value(endpoint, param)
                path = with_value(endpoint, param, value, value)
                response, body = await get(http_client, base_url, path)
                assert (response.code, body["error"]["code"]) == (400, param.error), path
                if param.required:
                    response, body = await get(http_client, base_url, with_value(endpoint, param))
                    assert (response.code, body["error"]["code"]) == (400, param.error), endpoint.name
        if endpoint.media_type == "text/event-stream":
            # A stream's example as HEAD (a GET stays open): its bucket, limit and media type.
            request = HTTPRequest(base_url + PREFIX + endpoint.example, method="HEAD")
            response = await http_client.fetch(request, raise_error=False)
            assert response.headers["RateLimit-Policy"] == f'"{endpoint.bucket}";q={limit};w={WINDOW_SECONDS}'
            assert response.code == 200 and response.headers["Content-Type"].startswith(endpoint.media_type)
            assert response.headers["Cache-Control"] == "public, max-age=0, no-store"
            continue
        # The example request: the bucket and limit the catalogue gives, its cache lifetime.
        response, body = await get(http_client, base_url, PREFIX + endpoint.example)
        assert response.headers["RateLimit-Policy"] == f'"{endpoint.bucket}";q={limit};w={WINDOW_SECONDS}'
        if response.code == 200:
            live = endpoint.live_fetched_max_age is not None and body["data"].get("live_fetched")
            expected = endpoint.live_fetched_max_age if live else endpoint.cache_max_age
            assert response.headers["Cache-Control"] == f"public, max-age={expected}", endpoint.name
        else:  # a clan not cached yet, a player's history before any snapshot
            assert body["error"]["code"] in endpoint.error_codes, (endpoint.name, body)

    # Absent query parameters take the catalogue's defaults; the bounds themselves are accepted.
    response, body = await get(http_client, base_url, PREFIX + ONLINE_HISTORY.path)
    assert response.code == 200
    assert response.headers["Content-Type"].startswith("application/json")  # format's default
    for param in ONLINE_HISTORY.params:
        if param.name != "format":  # the answer's form, not a field of it
            assert body["data"][param.name] == param.default, param.name
    days = next(param for param in ONLINE_HISTORY.params if param.name == "days")
    for value in (days.minimum, days.maximum):
        response, body = await get(http_client, base_url, f"{PREFIX}{ONLINE_HISTORY.path}?days={value}")
        assert response.code == 200 and body["data"]["days"] == value
