"""The OpenAPI document: valid, complete against the index and ERROR_CODES, and true of live answers.

Live answers of the real application (real database, upstream simulator over HTTP) are validated
against the document: the body against the response schema of their path, method and status
(JSON Schema 2020-12, $refs resolved into the document), and the documented headers.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import time

import pytest
import ujson
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012
from tornado.httpclient import HTTPRequest

from handlers import openapi
from handlers.index import index_document
from server.contract.catalogue import BY_NAME, CATALOGUE, PREFIX
from server.contract.errors import ERROR_CODES
from server.serving.ratelimit import ENDPOINT_LIMITS
from tests.helpers import build_app, free_port, make_config

DOC_URI = "urn:statsapi:openapi"
ACCOUNT = 500000001  # exists in the simulator, member of clan 500000
CLAN = 500000


# --- helpers shared with test_schemathesis -------------------------------------------------
def pointer_escape(text: str) -> str:
    return text.replace("~", "~0").replace("/", "~1")


def resolve(doc: dict, node: dict) -> tuple[dict, str | None]:
    """Follow a local $ref: (target, its JSON pointer) or (node, None)."""
    if "$ref" in node:
        pointer = node["$ref"][1:]
        target = doc
        for part in pointer.strip("/").split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        return target, pointer
    return node, None


class Contract:
    """Looks up the documented response of a live answer and checks the answer against it."""

    def __init__(self, doc: dict):
        self.doc = doc
        self.registry = Registry().with_resource(DOC_URI, Resource.from_contents(doc, DRAFT202012))
        self.templates = [(self._regex(path), path) for path in doc["paths"]]
        self.base = doc["servers"][0]["url"]

    @staticmethod
    def _regex(template: str):
        return re.compile("^" + re.sub(r"\\\{[a-z_]+\\\}", "[^/]+", re.escape(template)) + "$")

    def template_of(self, url_path: str) -> str:
        assert url_path.startswith(self.base), url_path
        relative = url_path[len(self.base) :] or "/"
        matches = [template for regex, template in self.templates if regex.match(relative)]
        assert matches, f"{url_path} matches no documented path"
        # /player/{a}/{r}/history also matches nothing shorter, but prefer the most literal template.
        return min(matches, key=lambda t: t.count("{"))

    def response(self, template: str, method: str, status: int) -> tuple[dict, str]:
        """The documented response object of (path template, method, status) and its JSON pointer."""
        operation = self.doc["paths"][template][method.lower()]
        assert str(status) in operation["responses"], (
            f"{method} {template}: status {status} is not documented ({sorted(operation['responses'])})"
        )
        node = operation["responses"][str(status)]
        target, pointer = resolve(self.doc, node)
        if pointer is None:
            pointer = f"/paths/{pointer_escape(template)}/{method.lower()}/responses/{status}"
        return target, pointer

    def named_response(self, name: str) -> tuple[dict, str]:
        return self.doc["components"]["responses"][name], f"/components/responses/{name}"

    def validate_body(self, response: dict, pointer: str, body: bytes | None) -> None:
        content = response.get("content")
        if content is None:
            assert not body, f"{pointer} documents no body, got {body[:200]!r}"
            return
        # JSON, and where ?format=csv serves the table, CSV beside it (tests/test_csv.py checks those),
        # where ?format=svg|png draws the card, the images (tests/test_cards.py checks those).
        csv, images = ["text/csv; charset=utf-8"], ["image/svg+xml", "image/png"]
        assert list(content) in (
            ["application/json"],
            ["application/json", *csv],
            ["application/json", *images],
            ["application/json", *csv, *images],
        )
        assert body, f"{pointer}: empty body"
        instance = ujson.loads(body)
        schema_pointer = pointer + "/content/application~1json/schema"
        validator = Draft202012Validator(
            {"$ref": DOC_URI + "#" + schema_pointer},
            registry=self.registry,
            format_checker=Draft202012Validator.FORMAT_CHECKER,
        )
        errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
        assert not errors, f"{schema_pointer}:\n" + "\n".join(
            f"  at {list(e.absolute_path)}: {e.message[:300]}" for e in errors[:10]
        )

    def validate_headers(self, response: dict, pointer: str, headers) -> None:
        for name, node in (response.get("headers") or {}).items():
            header, _ = resolve(self.doc, node)
            value = headers.get(name)
            if value is None:
                assert not header.get("required"), f"{pointer}: required header {name} is missing"
                continue
            schema = header["schema"]
            instance = int(value) if schema.get("type") == "integer" and value.isdigit() else value
            errors = list(Draft202012Validator(schema).iter_errors(instance))
            assert not errors, f"{pointer}: header {name}: {value!r}: {errors[0].message}"
        if response.get("content") and headers.get("Content-Type") is not None:
            assert headers["Content-Type"] == "application/json; charset=utf-8"

    def check(
        self, method: str, url_path: str, status: int, headers, body: bytes | None, response_name: str | None = None
    ) -> None:
        if response_name is not None:
            response, pointer = self.named_response(response_name)
        else:
            response, pointer = self.response(self.template_of(url_path), method, status)
        self.validate_body(response, pointer, body)
        self.validate_headers(response, pointer, headers)


# --- the document itself ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def doc():
    return openapi.openapi_document(make_config())


def test_document_is_valid_openapi_3_1(doc):
    from openapi_spec_validator import validate

    assert doc["openapi"].startswith("3.1")
    validate(doc)
    assert doc["servers"] == [{"url": "/api/v1", "description": doc["servers"][0]["description"]}]
    # Served as JSON: the document survives a round trip unchanged.
    assert ujson.loads(ujson.dumps(doc)) == doc


def test_every_endpoint_of_the_index_is_documented_with_its_parameters_and_limit(doc):
    config = make_config(rate_limit_scale=2.0)
    scaled = openapi.openapi_document(config)
    index = index_document(config)
    assert {e["name"] for e in index["endpoints"]} == {e.name for e in CATALOGUE}
    for entry in index["endpoints"]:
        path = entry["path"][len(PREFIX) :] or "/"
        assert path in scaled["paths"], entry["name"]
        item = scaled["paths"][path]
        assert set(item) >= {"get", "head", "options"}
        for method in ("get", "head"):
            operation = item[method]
            assert operation["x-rate-limit-per-minute"] == entry["rate_limit_per_minute"]
            assert operation["x-rate-limit-per-minute"] == int(ENDPOINT_LIMITS[entry["name"]] * 2)
            documented = {(p["name"], p["in"]): p for p in operation["parameters"]}
            for param in entry["parameters"]:
                spec = documented[(param["name"], param["in"])]
                assert spec["schema"]["type"] == param["type"]
                assert spec["required"] == bool(param.get("required", False))
                for key in ("minimum", "maximum", "default", "enum"):
                    if key in param:
                        assert spec["schema"][key] == param[key], (entry["name"], param["name"], key)
            assert set(documented) - {(p["name"], p["in"]) for p in entry["parameters"]} == {
                ("If-None-Match", "header")
            }
            streamed = BY_NAME[entry["name"]].media_type == "text/event-stream"
            for status in ("200", "400", "429", "431", "500", *(() if streamed else ("304",))):
                assert status in operation["responses"], (entry["name"], method, status)
        assert "204" in item["options"]["responses"]
    # Unscaled, the limits are SPEC 8.1's.
    assert doc["paths"]["/player/{account_id}/{region}"]["get"]["x-rate-limit-per-minute"] == 30
    assert doc["paths"]["/clan/{clan_id}/{region}/weekly"]["get"]["x-rate-limit-per-minute"] == 10


def test_parameters_have_types_ranges_and_defaults(doc):
    def params(path):
        return {p["name"]: p for p in doc["paths"][path]["get"]["parameters"]}

    player = params("/player/{account_id}/{region}")
    assert player["account_id"]["schema"] == {"type": "integer", "minimum": 1, "maximum": 2**63 - 1, "format": "int64"}
    assert player["region"]["schema"] == {"type": "string", "enum": ["eu", "na", "asia"]}
    history = params("/player/{account_id}/{region}/history")
    assert history["days"]["schema"] == {"type": "integer", "minimum": 1, "maximum": 400, "default": 30}
    assert history["days"]["required"] is False
    online = params("/online/history")
    assert online["days"]["schema"]["default"] == 7
    assert online["game"]["schema"] == {"type": "string", "enum": ["wot", "wotb", "wows"], "default": "wot"}
    assert online["region"]["schema"] == {"type": "string", "enum": ["eu", "na", "asia", "all"], "default": "all"}
    assert params("/clan/{clan_id}/{region}")["clan_id"]["schema"]["minimum"] == 1


def response_codes(doc: dict, response: dict) -> list[str]:
    """The error codes a documented error response admits (its narrowed `error.code` enum)."""
    schema = response["content"]["application/json"]["schema"]
    return schema["allOf"][1]["properties"]["error"]["properties"]["code"]["enum"]


def test_every_error_code_is_documented_on_a_response(doc):
    assert doc["components"]["schemas"]["ErrorCode"]["enum"] == list(ERROR_CODES)
    documented: dict[str, set[int]] = {}
    for item in doc["paths"].values():
        for operation in (item[m] for m in ("get", "head", "options")):
            for status, node in operation["responses"].items():
                response, _ = resolve(doc, node)
                if int(status) >= 400:
                    codes = response_codes(doc, response) if "content" in response else []
                    for code in codes:
                        documented.setdefault(code, set()).add(int(status))
    routing = {
        "UnknownEndpoint": 404,
        "UnknownVersion": 404,
        "MethodNotAllowed": 405,
        "RangeNotSatisfiable": 416,
        "TooManyConnections": 503,
    }
    for name, status in routing.items():
        for code in response_codes(doc, doc["components"]["responses"][name]):
            documented.setdefault(code, set()).add(status)
    for code, (status, _) in ERROR_CODES.items():
        assert documented.get(code) == {status}, (code, documented.get(code))
    assert [e["code"] for e in doc["x-error-codes"]] == list(ERROR_CODES)
    # The catalogue of the index and the document agree on every code and status.
    assert [(e["code"], e["status"]) for e in index_document(make_config())["errors"]] == [
        (e["code"], e["status"]) for e in doc["x-error-codes"]
    ]


def test_player_not_found_and_endpoint_errors_are_on_the_right_operations(doc):
    def codes(path, status):
        response, _ = resolve(doc, doc["paths"][path]["get"]["responses"][str(status)])
        return response_codes(doc, response)

    assert codes("/player/{account_id}/{region}", 404) == ["player_not_found"]
    assert codes("/player/{account_id}/{region}/history", 404) == ["no_history"]
    assert set(codes("/player/{account_id}/{region}", 429)) == {"rate_limited", "rate_limited_global"}
    assert set(codes("/player/{account_id}/{region}", 503)) == {"database_unavailable", "upstream_unavailable"}
    assert "invalid_days" in codes("/online/history", 400) and "invalid_game" in codes("/online/history", 400)
    assert codes("/clan/{clan_id}/{region}", 404) == ["clan_not_cached"]
    assert "503" not in doc["paths"]["/status"]["get"]["responses"]  # /status answers 200 "degraded" instead


def test_meta_generated_pattern_and_nullable_fields(doc):
    schemas = doc["components"]["schemas"]
    pattern = re.compile(schemas["Meta"]["properties"]["generated"]["pattern"])
    assert pattern.match("2026-11-22T20:54:47+00:00") and not pattern.match("2026-11-22T20:54:47Z")
    assert schemas["PlayerStatistics"]["properties"]["win_rate"]["type"] == ["number", "null"]
    assert schemas["PlayerRatings"]["properties"]["wn8"]["type"] == ["number", "null"]
    assert set(schemas["Clan"]["required"]) >= {
        "clan_id",
        "tag",
        "name",
        "members_count",
        "ratings",
        "members",
        "cached_at",
    }
    assert set(schemas["Clan"]["properties"]["members"]["required"]) == {
        "profiles_measured",
        "avg_win_rate",
        "avg_damage",
        "avg_battles",
    }


# --- live answers ------------------------------------------------------------------------------


class Live:
    def __init__(self, http_client, base_url, contract: Contract):
        self.http_client = http_client
        self.base_url = base_url
        self.contract = contract
        self.seen: set[tuple[str, str, int]] = set()

    async def call(
        self, path: str, method: str = "GET", expect: int | None = None, headers=None, response_name: str | None = None
    ):
        body = b"" if method in ("POST", "PUT", "PATCH") else None
        request = HTTPRequest(
            self.base_url + path,
            method=method,
            headers=headers or {},
            body=body,
            allow_nonstandard_methods=True,
            request_timeout=30,
        )
        response = await self.http_client.fetch(request, raise_error=False)
        if expect is not None:
            assert response.code == expect, (method, path, response.code, response.body[:300])
        url_path = path.split("?")[0]
        self.contract.check(
            method, url_path, response.code, response.headers, response.body or None, response_name=response_name
        )
        if response_name is None:
            self.seen.add((method, self.contract.template_of(url_path), response.code))
        return response, (ujson.loads(response.body) if response.body else None)


@pytest.mark.gen_test(timeout=120)
async def test_live_answers_conform_to_the_document(app, http_client, base_url):
    config = app.settings["config"]
    doc = openapi.openapi_document(config)
    live = Live(http_client, base_url, Contract(doc))
    p = PREFIX

    # The index and the document itself (served raw, equal to the builder's output).
    response, body = await live.call(p, expect=200)
    assert {e["name"] for e in body["data"]["endpoints"]} == {e.name for e in CATALOGUE}
    response, body = await live.call(p + "/openapi.json", expect=200)
    assert body == doc
    assert response.headers["Content-Type"] == "application/json; charset=utf-8"
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert response.headers["Cache-Control"] == "public, max-age=300"
    await live.call(p + "/openapi.json", headers={"If-None-Match": response.headers["ETag"]}, expect=304)
    await live.call(p + "/openapi.json", method="HEAD", expect=200)

    # A live player fetch, then the same profile with ratings, its history, and a 304.
    response, body = await live.call(f"{p}/player/{ACCOUNT}/eu", expect=200)
    assert body["data"]["live_fetched"] is True and body["data"]["ratings"]["available"] is False
    store = app.settings["store"]
    for _ in range(200):  # the ratings are computed in the background; wait for them without spending quota
        if ((await store.players.get("eu", ACCOUNT)) or {}).get("ratings"):
            break
        await asyncio.sleep(0.05)
    response, body = await live.call(f"{p}/player/{ACCOUNT}/eu", expect=200)
    assert body["data"]["ratings"]["available"] is True and body["data"]["ratings"]["wn8_color"]
    nickname = body["data"]["nickname"]
    await live.call(f"{p}/player/{ACCOUNT}/eu", headers={"If-None-Match": response.headers["ETag"]}, expect=304)
    await live.call(f"{p}/player/{ACCOUNT}/eu", method="HEAD", expect=200)
    response, body = await live.call(f"{p}/player/{ACCOUNT}/eu/history", expect=200)
    assert body["data"]["snapshot_count"] >= 1 and body["data"]["days"] == 30
    await live.call(f"{p}/player/{ACCOUNT}/eu/history?days=400", expect=200)
    # The live fetch was also the account's first per-tank visit: /tanks answers 200 from it (the
    # write lands in the background); the nickname search finds the account from a real prefix.
    for _ in range(10):  # under /tanks' per-minute limit
        response, body = await live.call(f"{p}/player/{ACCOUNT}/eu/tanks?days=30")
        if response.code == 200:
            break
        await asyncio.sleep(0.3)
    assert response.code == 200 and body["data"]["tanks"], (response.code, body)
    prefix = nickname[:5]
    response, body = await live.call(f"{p}/players?search={prefix}&region=eu", expect=200)
    assert any(row["account_id"] == ACCOUNT for row in body["data"]["results"]), body
    response, body = await live.call(f"{p}/players?search=ab", expect=400)
    assert body["error"]["code"] == "invalid_search"

    # 400s.
    for path, code in [
        (f"{p}/player/abc/eu", "invalid_account_id"),
        (f"{p}/player/0/eu", "invalid_account_id"),
        (f"{p}/player/{ACCOUNT}/xx", "invalid_region"),
        (f"{p}/player/{ACCOUNT}/eu/history?days=0", "invalid_days"),
        (f"{p}/player/{ACCOUNT}/eu/history?days=5&days=6", "invalid_days"),
        (f"{p}/clan/-1/eu", "invalid_clan_id"),
        (f"{p}/clan/{CLAN}/eu/weekly?x=1", None),
        (f"{p}/online/history?game=lol", "invalid_game"),
        (f"{p}/online/history?region=moon", "invalid_region"),
        (f"{p}/online/history?days=401", "invalid_days"),
    ]:
        response, body = await live.call(path)
        if code is not None:
            assert response.code == 400 and body["error"]["code"] == code, (path, body)
    await live.call(f"{p}/player/abc/eu", method="HEAD", expect=400)

    # 404s: endpoint errors and the routing answers.
    from scripts.upstream_sim import missing_accounts

    response, body = await live.call(f"{p}/player/{missing_accounts('eu', 1)[0]}/eu", expect=404)
    assert body["error"]["code"] == "player_not_found" and body["error"]["region"] == "eu"
    response, body = await live.call(f"{p}/player/{missing_accounts('eu', 2)[1]}/eu/history", expect=404)
    assert body["error"]["code"] == "no_history"
    response, body = await live.call(f"{p}/nope", expect=404, response_name="UnknownEndpoint")
    assert body["error"]["code"] == "unknown_endpoint"
    response, body = await live.call("/api/v2/status", expect=404, response_name="UnknownVersion")
    assert body["error"]["code"] == "unknown_version"

    # 405 for every other method, with Allow.
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        response, body = await live.call(f"{p}/status", method=method, expect=405, response_name="MethodNotAllowed")
        assert body["error"]["code"] == "method_not_allowed"
        assert response.headers["Allow"] == "GET, HEAD, OPTIONS"

    # OPTIONS preflight.
    response, _ = await live.call(f"{p}/player/{ACCOUNT}/eu", method="OPTIONS", expect=204)
    assert response.headers["Access-Control-Allow-Methods"] == "GET, HEAD, OPTIONS"

    # Status and online counts (empty, then sampled).
    response, body = await live.call(f"{p}/status", expect=200)
    assert body["data"]["health"] in ("ok", "degraded")
    await live.call(f"{p}/online", expect=200)
    await live.call(f"{p}/online/history", expect=200)
    services = app.settings["services"]
    if hasattr(services.online, "sample"):
        await services.online.sample(int(time.time() // 60))
        services.online._current = None
        response, body = await live.call(f"{p}/online", expect=200)
        assert body["data"]["games"]["wot"]["players"] is not None
        response, body = await live.call(f"{p}/online/history?game=wotb&region=eu&days=3", expect=200)
        assert len(body["data"]["series"]) == 3
        await live.call(f"{p}/online/history?region=all", expect=200)

    # Clans: not cached yet (404), then refreshed by the job (200, and the weekly digest).
    response, body = await live.call(f"{p}/clan/{CLAN}/eu", expect=404)
    assert body["error"]["code"] == "clan_not_cached"
    response, body = await live.call(f"{p}/clan/{CLAN}/eu/weekly", expect=404)
    if hasattr(services.clans, "refresh"):
        await app.settings["store"].clans.add_seeds("eu", [CLAN])
        await services.clans.refresh()
        response, body = await live.call(f"{p}/clan/{CLAN}/eu", expect=200)
        assert body["data"]["clan_id"] == CLAN and body["data"]["members"]["profiles_measured"] >= 1
        await live.call(f"{p}/clan/{CLAN}/eu/weekly", expect=200)
    await live.call(f"{p}/status", expect=200)

    # 429 with Retry-After: the weekly digest allows 10 per minute.
    for _ in range(12):
        response, body = await live.call(f"{p}/clan/{CLAN}/eu/weekly")
        if response.code == 429:
            break
    assert response.code == 429 and body["error"]["code"] == "rate_limited"
    assert int(response.headers["Retry-After"]) >= 1
    assert response.headers["Cache-Control"] == "public, max-age=0, no-store"
    await live.call(f"{p}/clan/{CLAN}/eu/weekly", method="HEAD", expect=429)

    # Every documented kind of answer was seen at least once for the main statuses.
    statuses = {status for _, _, status in live.seen}
    assert statuses >= {200, 204, 304, 400, 404, 429}


@pytest.fixture
def raw_server(io_loop, mongo_uri, db_name, upstream_sim):
    """The real HTTP server class, so protocol-level rejections are the production ones."""
    from server.compose.bootstrap import make_http_server

    application = build_app(io_loop, mongo_uri, db_name, upstream_base_url=upstream_sim)
    port = free_port()
    server = make_http_server(application, application.settings["config"])
    server.listen(port, "127.0.0.1")
    yield port
    server.stop()


async def exchange(port: int, raw: bytes) -> tuple[int, dict, bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(raw)
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = _Headers({k.strip(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])})
    return int(lines[0].split()[1]), headers, body


class _Headers(dict):
    def get(self, name, default=None):
        for key, value in self.items():
            if key.lower() == name.lower():
                return value
        return default


@pytest.mark.gen_test(timeout=30)
async def test_protocol_level_rejections_conform(raw_server):
    contract = Contract(openapi.openapi_document(make_config()))
    raw = b"GET /api/v1/status HTTP/1.1\r\nHost: x\r\nX-Long: " + b"a" * 40_000 + b"\r\n\r\n"
    status, headers, body = await exchange(raw_server, raw)
    assert status == 431
    contract.check("GET", "/api/v1/status", status, headers, body)
    status, headers, body = await exchange(
        raw_server, b"GET /api/v1/player/%ff/eu HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    assert status == 400 and ujson.loads(body)["error"]["code"] in ("bad_request", "invalid_account_id")
    contract.check("GET", "/api/v1/player/x/eu", status, headers, body)
    status, headers, body = await exchange(raw_server, b"GET /api/v1/status HTTP/1.1\r\nHost: bad host/\r\n\r\n")
    assert status == 400
    contract.check("GET", "/api/v1/status", status, headers, body)


def test_document_is_cached_per_config_and_etag_is_stable():
    config = make_config()
    first = openapi._serialized(config)
    assert openapi._serialized(dataclasses.replace(config)) == first
    assert openapi._serialized(make_config(rate_limit_scale=3.0)) != first


def test_response_examples_conform_to_their_schemas(doc):
    contract = Contract(doc)
    checked = 0
    for name, response in doc["components"]["responses"].items():
        media = (response.get("content") or {}).get("application/json")
        if media and "example" in media:
            contract.validate_body(response, f"/components/responses/{name}", ujson.dumps(media["example"]).encode())
            checked += 1
    assert checked >= 10
