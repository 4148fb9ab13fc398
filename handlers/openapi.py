"""The OpenAPI 3.1 document of the API, served raw (not enveloped) at /api/v1/openapi.json."""

from __future__ import annotations

import copy
import functools
import hashlib
from collections.abc import Callable
from typing import Any

import ujson

from handlers.base import BaseHandler, api_routes
from handlers.index import index_document
from handlers.schemas import ref, schema_components
from server.contract.catalogue import (
    CATALOGUE,
    LIVE_GLOBAL,
    LIVE_PER_CLIENT,
    OPENAPI,
    PREFIX,
    Endpoint,
    Param,
)
from server.contract.config import API_VERSION, VERSION, Config
from server.contract.csv_answers import CSV_MEDIA_TYPE
from server.contract.errors import (
    ALLOWED_METHODS,
    ERROR_CODES,
    ERROR_MAX_AGE,
    EXPOSED_HEADERS,
    NO_STORE,
    RATE_HEADERS,
    RETRY_AFTER_SENT,
)
from server.serving import cards
from server.serving.cards.layout import CARD_FIGURES
from server.serving.ratelimit import WINDOW_SECONDS

# Everything about an endpoint comes from the catalogue (server/contract/catalogue.py), its response shape
# from handlers/schemas.py, its limit scaled as the index scales it; what is written here is the
# OpenAPI form of those facts, the headers and the answers no single endpoint gives.

OPENAPI_VERSION = "3.1.0"


# --- parameters -----------------------------------------------------------------------
def openapi_parameter(param: Param) -> dict:
    schema: dict = {"type": param.type, **param.constraints()}
    if param.format is not None:
        schema["format"] = param.format
    description = param.description
    if param.default is not None:
        description += f" Default: `{param.default}`."
    out = {
        "name": param.name,
        "in": param.location,
        "required": param.required,
        "description": description,
        "schema": schema,
    }
    if param.location == "path":
        out["example"] = param.example
    return out


def preflight_parameter(param: Param) -> dict:
    """A path parameter of an OPTIONS operation: the preflight answers whatever its value."""
    return {
        "name": param.name,
        "in": "path",
        "required": True,
        "schema": {"type": "string"},
        "description": "Ignored: the CORS preflight answers 204 for any value.",
    }


IF_NONE_MATCH = {
    "name": "If-None-Match",
    "in": "header",
    "required": False,
    "schema": {"type": "string"},
    "description": "An ETag from an earlier answer; when `data` is unchanged the answer is 304 without a body.",
}


# --- headers --------------------------------------------------------------------------
def header_components() -> dict:
    def header(description: str, schema: dict) -> dict:
        return {"description": description, "schema": schema}

    return {
        "Access-Control-Allow-Origin": header(
            "CORS: every origin may read every answer.", {"type": "string", "const": "*"}
        ),
        "Access-Control-Expose-Headers": header(
            "CORS: the response headers scripts may read.", {"type": "string", "example": EXPOSED_HEADERS}
        ),
        "Cache-Control": header(
            "`public, max-age=N`: N per endpoint for successful answers (see each operation), "
            f"{ERROR_MAX_AGE} for 4xx errors; `{NO_STORE}` for 429 and 5xx answers, which shared caches "
            "must not replay to other clients.",
            {"type": "string", "pattern": r"^public, max-age=\d+(, no-store)?$"},
        ),
        "ETag": header(
            "Strong validator computed from `data` only (not `meta.generated`); send it back in "
            "`If-None-Match` to get 304 when nothing changed.",
            {"type": "string", "pattern": '^"[0-9a-f]+"$'},
        ),
        "RateLimit-Policy": header(
            f'IETF draft syntax: `"<bucket>";q=<limit>;w={WINDOW_SECONDS}` — the limit '
            "of this endpoint per client per window of w seconds.",
            {"type": "string", "pattern": r'^"[a-z_]+";q=\d+;w=\d+$'},
        ),
        "RateLimit": header(
            'IETF draft syntax: `"<bucket>";r=<remaining>;t=<seconds until the window ends>`.',
            {"type": "string", "pattern": r'^"[a-z_]+";r=\d+;t=\d+$'},
        ),
        "X-RateLimit-Limit": header(
            "Requests per minute this client may make to this endpoint.", {"type": "integer", "minimum": 1}
        ),
        "X-RateLimit-Remaining": header("Requests left (sliding-window estimate).", {"type": "integer", "minimum": 0}),
        "X-RateLimit-Reset": header("Seconds until the current window ends.", {"type": "integer", "minimum": 0}),
        "Retry-After": header(
            f"Seconds to wait before retrying. Sent {RETRY_AFTER_SENT}.",
            {"type": "integer", "minimum": 1},
        ),
        "Allow": header("The methods every endpoint supports.", {"type": "string", "const": ALLOWED_METHODS}),
        "Access-Control-Allow-Methods": header(
            "CORS preflight: allowed methods.", {"type": "string", "const": ALLOWED_METHODS}
        ),
        "Access-Control-Allow-Headers": header(
            "CORS preflight: request headers a browser may send.", {"type": "string"}
        ),
        "Access-Control-Max-Age": header(
            "CORS preflight: seconds a browser may cache this preflight.", {"type": "integer", "minimum": 0}
        ),
        "X-Content-Type-Options": header("Always `nosniff`.", {"type": "string", "const": "nosniff"}),
    }


HEADERS = header_components()


def header_key(name: str, required: bool) -> str:
    """components/headers key: `Name` is the required variant, `Name.optional` the other one."""
    return name if required else name + ".optional"


def header_definitions(*parts: dict) -> dict:
    """components/headers: the variants the given parts of the document refer to."""
    used: set[str] = set()

    def collect(node: Any) -> None:
        if isinstance(node, dict):
            target = node.get("$ref")
            if isinstance(target, str) and target.startswith("#/components/headers/"):
                used.add(target.rsplit("/", 1)[1])
            for value in node.values():
                collect(value)
        elif isinstance(node, list):
            for value in node:
                collect(value)

    for part in parts:
        collect(part)
    out = {}
    for name, header in HEADERS.items():
        for required in (True, False):
            if header_key(name, required) in used:
                out[header_key(name, required)] = {**copy.deepcopy(header), "required": required}
    return out


# Statuses an operation only answers after the rate limiter ran (so with its headers).
LIMITER_PASSED_STATUSES = ("200", "304", "404", "429", "503")


def headers_for(status: str, method: str, rate_limited: bool, etag: bool = True) -> dict:
    """The documented headers of one response; `required` where every such answer has them
    (`etag`: a success has an ETag; a stream's has none)."""

    def use(name: str, required: bool) -> dict:
        return ref("headers", header_key(name, required))

    headers = {
        "Access-Control-Allow-Origin": use("Access-Control-Allow-Origin", True),
        "Cache-Control": use("Cache-Control", True),
    }
    if status == "204":
        for name in ("Allow", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers", "Access-Control-Max-Age"):
            headers[name] = use(name, True)
        return headers
    headers["Access-Control-Expose-Headers"] = use("Access-Control-Expose-Headers", False)
    headers["X-Content-Type-Options"] = use("X-Content-Type-Options", False)
    if status in ("200", "304") and etag:
        headers["ETag"] = use("ETag", True)
    if rate_limited:
        # Every answer that passed the limiter carries them; protocol-level rejections (bad request
        # line, headers too large, undecodable path: 400 bad_request, 431) are answered before it.
        for name in RATE_HEADERS:
            headers[name] = use(name, status in LIMITER_PASSED_STATUSES)
    if status == "429":
        headers["Retry-After"] = use("Retry-After", True)
    elif status == "503":
        headers["Retry-After"] = use("Retry-After", False)
    return headers


def error_schema(codes: list[str]) -> dict:
    """The error envelope narrowed to the codes one response can carry."""
    return {
        "allOf": [
            ref("schemas", "ErrorEnvelope"),
            {
                "type": "object",
                "properties": {"error": {"type": "object", "properties": {"code": {"type": "string", "enum": codes}}}},
            },
        ]
    }


def error_description(codes: list[str]) -> str:
    return "; ".join(f"`{code}`: {ERROR_CODES[code][1]}" for code in codes)


def _json(schema: dict, example: Any = None) -> dict:
    media = {"schema": schema}
    if example is not None:
        media["example"] = example
    return {"application/json": media}


# --- operations -----------------------------------------------------------------------
def _camel(code: str) -> str:
    return "".join(part.capitalize() for part in code.split("_"))


def shared_response(shared: dict, name: str, build: Callable[[], dict]) -> dict:
    """Register a response under components/responses once; answer a reference to it."""
    if name not in shared:
        shared[name] = build()
    return ref("responses", name)


def error_response(
    shared: dict, codes: list[str], method: str, rate_limited: bool = True, extra_headers: dict | None = None
) -> dict:
    """An error response for these codes (all of one status); HEAD variants have no body."""
    status = ERROR_CODES[codes[0]][0]
    body = method != "head"
    name = "Or".join(_camel(code) for code in codes) + ("" if body else "Head")

    def build() -> dict:
        response = {
            "description": f"{status}: " + error_description(codes) + ("" if body else " (no body)"),
            "headers": {**headers_for(str(status), method, rate_limited), **(extra_headers or {})},
        }
        if body:
            error = {"code": codes[0], "message": ERROR_CODES[codes[0]][1]}
            if codes[0] == "player_not_found":
                error["region"] = "eu"
            response["content"] = _json(error_schema(codes), {"success": False, "error": error})
        return response

    return shared_response(shared, name, build)


def responses_for(endpoint: Endpoint, method: str, shared: dict) -> dict:
    """The responses of one GET or HEAD operation (HEAD: the same without bodies)."""
    body = method == "get"
    responses: dict = {}
    streamed = endpoint.media_type == "text/event-stream"
    raw = endpoint.schema is None and endpoint.media_type not in ("application/json", "text/event-stream")
    if raw:  # a file served as written (the daily bulk files)
        ok_schema: dict = {
            "type": "string",
            "contentMediaType": endpoint.media_type,
            "description": "The file's bytes.",
        }
    elif streamed:
        ok_schema = {
            "type": "object",
            "description": "One Server-Sent Event: `session` with the session's JSON (PlayerSession) as "
            "`data`, or `end` at shutdown (comment lines between are heartbeats).",
            "properties": {
                "event": {"type": "string", "enum": ["session", "end"]},
                "data": {"type": "string"},
                "id": {"type": "string"},
            },
            "required": ["event", "data"],
        }
    elif endpoint.schema is None:
        ok_schema = {
            "type": "object",
            "required": ["openapi", "info", "paths"],
            "description": "An OpenAPI 3.1 document (served as is, not in the envelope).",
        }
    else:
        ok_schema = ref("schemas", endpoint.schema + "Envelope")
    ok = {
        "description": "Success: a stream of events. `Cache-Control: public, max-age=0, no-store`."
        if streamed
        else f"Success. `Cache-Control: public, max-age={endpoint.cache_max_age}`"
        + (f" ({endpoint.live_fetched_max_age} for a profile fetched live)." if endpoint.live_fetched_max_age else ".")
        + ("" if body else " No body."),
        "headers": headers_for("200", method, True, etag=not streamed),
    }
    if body:
        content: dict = {endpoint.media_type: {"schema": ok_schema}} if streamed or raw else dict(_json(ok_schema))
        ok["content"] = content
        if endpoint.csv is not None:
            content[CSV_MEDIA_TYPE] = {
                "schema": {
                    "type": "string",
                    "description": f"With format=csv: RFC 4180 CSV, one row per item of data.{endpoint.csv.rows}, "
                    "a header row of these columns: " + ", ".join(endpoint.csv.columns) + ". Served with "
                    "Content-Disposition (the file name) and a Link header (rel=cite-as: the attribution).",
                }
            }
        if endpoint.card is not None:
            for fmt, media_type in cards.MEDIA_TYPES.items():
                content[media_type] = {
                    "schema": {
                        "type": "string",
                        **({"contentMediaType": media_type, "contentEncoding": "binary"} if fmt == "png" else {}),
                        "description": f"With format={fmt}: the answer's card, "
                        + ("an SVG document (its figures are text)" if fmt == "svg" else "a PNG image")
                        + ", 1200×630 or with size=banner 600×160, theme dark or light; its own ETag, "
                        "derived from the answer's. " + CARD_FIGURES[endpoint.card],
                    }
                }
    responses["200"] = ok
    if raw:
        responses["206"] = {
            "description": "Partial content: the one byte range asked for (`Content-Range` says which)."
            + ("" if body else " No body."),
            "headers": headers_for("200", method, True),
            **({"content": {endpoint.media_type: {"schema": ok_schema}}} if body else {}),
        }
    if not streamed:
        responses["304"] = shared_response(
            shared,
            "NotModified",
            lambda: {
                "description": "Not modified: the `If-None-Match` ETag matches; no body.",
                "headers": headers_for("304", method, True),
            },
        )
    by_status: dict[int, list[str]] = {}
    for code in endpoint.error_codes:
        by_status.setdefault(ERROR_CODES[code][0], []).append(code)
    for status in sorted(by_status):
        responses[str(status)] = error_response(shared, by_status[status], method)
    return responses


def operation(endpoint: Endpoint, method: str, limit: int, shared: dict) -> dict:
    description = endpoint.description
    if method == "head":
        description = "Like GET, with the same status and headers but no body."
    op: dict[str, Any] = {
        "operationId": ("get" if method == "get" else "head") + endpoint.operation_id,
        "summary": endpoint.summary + (" (headers only)" if method == "head" else ""),
        "description": description,
        "tags": [endpoint.tag],
        "parameters": [openapi_parameter(p) for p in endpoint.params] + [IF_NONE_MATCH],
        "responses": responses_for(endpoint, method, shared),
        "x-rate-limit-per-minute": limit,
        "x-cache-max-age": endpoint.cache_max_age,
        "x-answer-seconds": endpoint.answer_seconds,
    }
    if endpoint.live_lookups:
        op["x-live-lookup-limits"] = {"per_client_per_minute": LIVE_PER_CLIENT, "global_per_minute": LIVE_GLOBAL}
        op["description"] += (
            f" Live lookups are limited to {LIVE_PER_CLIENT} per minute per client and "
            f"{LIVE_GLOBAL} per minute in total (429 `rate_limited_global`)."
        )
    if method == "get":
        op["x-example-request"] = PREFIX + endpoint.example
    return op


def options_operation(endpoint: Endpoint, shared: dict) -> dict:
    return {
        "operationId": "options" + endpoint.operation_id,
        "summary": "CORS preflight",
        "description": "Answers browser preflights: 204 with the allowed methods and headers. Not rate limited "
        "(hence no `x-rate-limit-per-minute`).",
        "tags": [endpoint.tag],
        "parameters": [preflight_parameter(p) for p in endpoint.params if p.location == "path"],
        "responses": {
            "204": shared_response(
                shared,
                "Preflight",
                lambda: {
                    "description": "Preflight accepted; no body.",
                    "headers": headers_for("204", "options", False),
                },
            )
        },
    }


def routing_responses(shared: dict) -> None:
    """Answers no single operation gives: unmatched paths, unknown versions, other methods."""
    error_response(shared, ["unknown_endpoint"], "get", rate_limited=False)
    error_response(shared, ["unknown_version"], "get", rate_limited=False)
    error_response(
        shared,
        ["method_not_allowed"],
        "get",
        rate_limited=False,
        extra_headers={"Allow": ref("headers", header_key("Allow", True))},
    )
    # The site's static files (outside /api) answer a Range past the end this way.
    error_response(shared, ["range_not_satisfiable"], "get", rate_limited=False)
    # A new connection while the process is at its connection cap (before any request is read).
    error_response(shared, ["too_many_connections"], "get", rate_limited=False)


def info_description(index: dict) -> str:
    limits = "\n".join(
        f"| `{e['path']}` | {e['rate_limit_per_minute']} | {e['cache_max_age']} |" for e in index["endpoints"]
    )
    errors = "\n".join(
        f"| {status} | `{code}` | {meaning} |"
        for code, (status, meaning) in sorted(ERROR_CODES.items(), key=lambda item: item[1][0])
    )
    return f"""{index["description"]}

No API key and no sign-up. Every answer is one JSON envelope: `{{"success": true, "meta": {{...}}, "data": {{...}}}}`
or `{{"success": false, "error": {{"code", "message"}}}}` (only `success` needs checking). This document itself is
the one answer served without the envelope.

**Methods.** GET and HEAD; OPTIONS answers CORS preflights with 204. Any other method gets 405
`method_not_allowed` with `Allow: {ALLOWED_METHODS}` (components/responses/MethodNotAllowed). A path that matches
no endpoint gets 404 `unknown_endpoint`; an API version that does not exist (e.g. `/api/v2/...`) gets 404
`unknown_version`. A repeated query parameter is a 400, not a guess.

**Headers.** Every answer has `Content-Type: application/json; charset=utf-8` (bodies), `Access-Control-Allow-Origin: *`
and `Cache-Control`. Rate-limited answers carry `RateLimit-Policy`, `RateLimit` (IETF draft syntax) and
`X-RateLimit-Limit/Remaining/Reset`; 429 answers carry `Retry-After`, and so do 503 `upstream_unavailable` and
the 503 `database_unavailable` of a full gate of heavy reads or of reads past their deadline (components/headers).
`ETag` is computed from `data` only, so
`If-None-Match` gives 304.

**Rate limits** per client and endpoint, {index["rate_limits"]["window"]}; clients are identified by
{index["rate_limits"]["identified_by"]};
each operation states its limit in `x-rate-limit-per-minute`. Live lookups of uncached players:
{LIVE_PER_CLIENT} per minute per client and {LIVE_GLOBAL} per minute in total.

| endpoint | requests per minute | Cache-Control max-age of successful answers (s) |
|---|---|---|
{limits}

**Errors**

| status | code | meaning |
|---|---|---|
{errors}

**Attribution.** {index["attribution"]}
"""


def openapi_document(config: Config) -> dict:
    """The OpenAPI 3.1 document for this configuration (limits scaled as the index scales them)."""
    index = index_document(config)
    limits = {entry["name"]: entry["rate_limit_per_minute"] for entry in index["endpoints"]}
    paths: dict[str, dict] = {}
    shared: dict[str, dict] = {}  # components/responses, filled by shared_response
    for endpoint in CATALOGUE:
        limit = limits[endpoint.name]
        paths[endpoint.path or "/"] = {  # relative to servers[0]
            "summary": endpoint.summary,
            "description": f"Other methods answer 405 `method_not_allowed` with `Allow: {ALLOWED_METHODS}`.",
            "get": operation(endpoint, "get", limit, shared),
            "head": operation(endpoint, "head", limit, shared),
            "options": options_operation(endpoint, shared),
        }
    routing_responses(shared)
    return {
        "openapi": OPENAPI_VERSION,
        "jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
        "info": {
            "title": "statsapi",
            "version": VERSION,
            "summary": "Public read-only statistics API (v1).",
            "description": info_description(index),
        },
        "externalDocs": {"description": "The site: documentation and live explorer", "url": config.site_url},
        "servers": [{"url": PREFIX, "description": f"API version {API_VERSION} on this host."}],
        "tags": [
            {"name": "players", "description": "Player profiles and history."},
            {"name": "tanks", "description": "Tank statistics of the tracked population."},
            {"name": "rankings", "description": "Leaderboards of the tracked population."},
            {"name": "clans", "description": "Clan details and the weekly digest."},
            {"name": "online", "description": "Player counts per game and region."},
            {"name": "meta", "description": "Index, status and this document."},
        ],
        "paths": paths,
        "components": {
            "schemas": schema_components(index),
            "responses": shared,
            "headers": header_definitions(paths, shared),
        },
        "x-error-codes": [
            {"code": code, "status": status, "meaning": meaning} for code, (status, meaning) in ERROR_CODES.items()
        ],
    }


@functools.lru_cache(maxsize=8)
def _serialized(config: Config) -> tuple[str, str]:
    body = ujson.dumps(openapi_document(config), ensure_ascii=False, escape_forward_slashes=False)
    etag = '"' + hashlib.blake2b(body.encode(), digest_size=12).hexdigest() + '"'
    return body, etag


class OpenAPIHandler(BaseHandler):
    """Serves the document raw (no envelope) with the usual headers, ETag and 304."""

    endpoint = OPENAPI

    async def get(self, *path: str) -> None:
        body, self._data_etag = _serialized(self.config)
        self.finish(body)


routes = api_routes(OpenAPIHandler)
