"""/llms.txt and /llms-full.txt (llmstxt.org): the API for language models, written from the catalogue.

llms.txt: what the API is, its regions, how to connect the MCP server, and every endpoint with a
one-line guide; llms-full.txt inlines each endpoint's path, parameters, limits, answer fields and errors.
"""

from __future__ import annotations

import functools
import hashlib
import json

from handlers.base import BaseHandler, Route
from server.contract.catalogue import (
    CATALOGUE,
    INDEX,
    LIVE_GLOBAL,
    LIVE_PER_CLIENT,
    OPENAPI,
    PLAYER,
    PLAYER_SEARCH,
    PREFIX,
    Endpoint,
    Param,
)
from server.contract.config import API_VERSION, Config
from server.contract.errors import ERROR_CODES
from server.serving.ratelimit import WINDOW_SECONDS, scaled_limit
from store.constants import REGIONS

LLMS_PATH = "/llms.txt"
LLMS_FULL_PATH = "/llms-full.txt"
MEDIA_TYPE = "text/plain; charset=utf-8"  # Markdown, served as text so any client reads it as it is
CACHE_SECONDS = 300  # as the site's files
MCP_PATH = "/mcp"
MCP_COMMAND = "statsapi-mcp"

SUMMARY = (
    "Public, read-only JSON API for World of Tanks statistics: player profiles with WN8, WN7 and "
    "efficiency, their daily history, tanks and play sessions, clans and their weekly digests, tank "
    "statistics, marks of excellence, expected values, leaderboards and player counts, for the regions "
    f"{', '.join(REGIONS)}. GET only, no key."
)


def code(text: object) -> str:
    return f"`{text}`"


def first_sentence(text: str) -> str:
    head, sep, _ = text.partition(". ")
    return head + "." if sep else text


def regions_and_conventions() -> list[str]:
    search = PLAYER_SEARCH.full_path
    return [
        f"Base URL: this site followed by `{PREFIX}`. Regions: {', '.join(code(r) for r in REGIONS)} (a path's "
        "`{region}` or the `region` query parameter). Accounts, clans and tanks are named by positive integer "
        f"ids: find an account id by the start of its nickname with `GET {search}?search=<start>&region=eu`.",
        "",
        'Every answer is one JSON envelope: `{"success": true, "meta": {...}, "data": {...}}`, or '
        '`{"success": false, "error": {"code": "...", "message": "..."}}` with a 4xx or 5xx status; only '
        "`success` needs checking. Limits are per client and endpoint, per minute (a 429 `rate_limited` "
        f"carries `Retry-After`: seconds to wait, at most {WINDOW_SECONDS}). A player not cached is fetched "
        f"live from the game's servers: at most {LIVE_PER_CLIENT} a minute per client and {LIVE_GLOBAL} in all.",
    ]


def mcp_lines() -> list[str]:
    return [
        f"Assistants connect through `{MCP_COMMAND}`, the MCP server the `statsapi` package installs: one "
        "read-only tool per endpoint below that answers the JSON envelope (named by its OpenAPI operation id, "
        "its arguments the endpoint's parameters), each call one GET to this API answering its `data` as "
        "JSON; an API error is a tool "
        f"error with its code. Over stdio: `{MCP_COMMAND} --base-url <this site>{PREFIX}`; over Streamable "
        f"HTTP at `{MCP_PATH}` where the site's operator serves it (`{MCP_COMMAND} --http HOST:PORT`).",
    ]


def endpoint_line(endpoint: Endpoint) -> str:
    """One endpoint as a link (its example request) with a one-line guide."""
    return (
        f"- [{endpoint.summary}]({PREFIX + endpoint.example}): `GET {endpoint.full_path}`. "
        f"{first_sentence(endpoint.description)}"
    )


def render_short() -> str:
    lines = [
        "# statsapi",
        "",
        f"> {SUMMARY}",
        "",
        *regions_and_conventions(),
        "",
        *mcp_lines(),
        "",
        "## Endpoints",
        "",
        *(endpoint_line(e) for e in CATALOGUE),
        "",
        "## Optional",
        "",
        f"- [Full reference]({LLMS_FULL_PATH}): every endpoint's parameters, limits, answer fields and errors.",
        f"- [OpenAPI 3.1 document]({OPENAPI.full_path}): the machine-readable contract the MCP tools are "
        "generated from.",
        f"- [API index]({INDEX.full_path}): the endpoints, parameters, limits and error codes as JSON.",
        "",
    ]
    return "\n".join(lines)


def accepts(param: Param) -> str:
    """What a parameter accepts, in words."""
    parts = []
    if param.enum is not None:
        parts.append("one of " + ", ".join(code(v) for v in param.enum))
    elif param.minimum is not None and param.maximum is not None:
        parts.append(f"an integer from {param.minimum} to {param.maximum}")
    if param.min_length is not None or param.max_length is not None:
        parts.append(f"{param.min_length or 0} to {param.max_length} characters")
    if param.pattern is not None:
        parts.append(f"matching {code(param.pattern)}")
    return "; ".join(parts) or param.type


def param_line(param: Param) -> str:
    need = (
        "required" if param.required else f"default {code(param.default)}" if param.default is not None else "optional"
    )
    return (
        f"- {code(param.name)} ({param.location}, {param.type}, {need}): {accepts(param)}. {param.description} "
        f"A bad value answers {code(param.error)}."
    )


def endpoint_section(endpoint: Endpoint, scale: float) -> list[str]:
    limits = (
        f"{scaled_limit(endpoint.limit_per_minute, scale)} requests per minute per client; "
        f"`Cache-Control: public, max-age={endpoint.cache_max_age}`"
    )
    if endpoint.live_lookups:
        limits += f"; live lookups {LIVE_PER_CLIENT} per minute per client, {LIVE_GLOBAL} in all"
    if endpoint.schema is not None:
        answer = f"the envelope, `data` an object of the OpenAPI schema `{endpoint.schema}`"
    elif endpoint.media_type == "application/json":
        answer = "the document itself, not in the envelope"
    else:
        answer = f"`{endpoint.media_type}`, not in the envelope"
    lines = [
        f"### {endpoint.summary}",
        "",
        f"`GET {endpoint.full_path}`: {answer}. Example: `GET {PREFIX + endpoint.example}`.",
        "",
        endpoint.description,
        "",
        f"Limits: {limits}.",
        "",
    ]
    if endpoint.params:
        lines += ["Parameters:", "", *(param_line(p) for p in endpoint.params), ""]
    if endpoint.fields:
        lines += ["Answer fields:", "", *(f"- {code(name)}: {text}" for name, text in endpoint.fields.items()), ""]
    lines += ["Errors:", ""]
    lines += [f"- {code(c)} ({ERROR_CODES[c][0]}): {ERROR_CODES[c][1]}" for c in endpoint.error_codes]
    return [*lines, ""]


def render_full(scale: float) -> str:
    config = {"mcpServers": {"statsapi": {"command": MCP_COMMAND, "args": ["--base-url", f"<this site>{PREFIX}"]}}}
    lines = [
        "# statsapi",
        "",
        f"> {SUMMARY}",
        "",
        f"The full reference of API {API_VERSION} for language models: every endpoint with its path, "
        f"parameters, limits, answer fields and errors. The short guide is [{LLMS_PATH}]({LLMS_PATH}).",
        "",
        "## Conventions",
        "",
        *regions_and_conventions(),
        "",
        "## Connect an assistant (MCP)",
        "",
        *mcp_lines(),
        "",
        "A client's configuration (Claude Desktop's and most others' `mcpServers`):",
        "",
        "```json",
        json.dumps(config, indent=2),
        "```",
        "",
        f"The player tool, for one, is `get{PLAYER.operation_id}` with `account_id` and `region`.",
        "",
        "## Endpoints",
        "",
    ]
    for endpoint in CATALOGUE:
        lines += endpoint_section(endpoint, scale)
    lines += ["## Error codes", ""]
    lines += [f"- {code(c)} ({status}): {meaning}" for c, (status, meaning) in ERROR_CODES.items()]
    return "\n".join([*lines, ""])


@functools.cache
def rendered(path: str, scale: float) -> tuple[str, str]:
    """The file at `path` and its ETag, rendered once per process."""
    text = render_short() if path == LLMS_PATH else render_full(scale)
    return text, '"' + hashlib.blake2b(text.encode(), digest_size=12).hexdigest() + '"'


class LlmsTxtHandler(BaseHandler):
    """Served like the site's files: not rate-limited, no database, cached for CACHE_SECONDS."""

    bucket = None
    needs_database = False
    cache_max_age = CACHE_SECONDS

    async def get(self) -> None:
        config: Config = self.config
        text, self._data_etag = rendered(self.request.path, config.rate_limit_scale)
        self.set_header("Content-Type", MEDIA_TYPE)
        self.finish(text)


routes: list[Route] = [
    (LLMS_PATH, LlmsTxtHandler),
    (LLMS_FULL_PATH, LlmsTxtHandler),
]
