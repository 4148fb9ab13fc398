"""Generate docs/api.md, the API reference for callers, from the code that serves the API.

    .venv/bin/python -m scripts.api_docs           # rewrite docs/api.md
    .venv/bin/python -m scripts.api_docs --check   # exit 1 when docs/api.md is not what this writes

Every endpoint, parameter, limit, cache lifetime and field guide comes from
server/contract/catalogue.py; every answer's fields from the response schemas (handlers/schemas.py);
every error code from server/contract/errors.py; the conventions below are written here with their
figures read from the same modules. tests/test_docs.py fails when the committed file differs from
what this script writes.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "docs" / "api.md"
COMMAND = ".venv/bin/python -m scripts.api_docs"
BASE_URL = "http://127.0.0.1:8888"  # the address scripts/run.sh serves on


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped, each space a hyphen."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def cell(text: Any) -> str:
    """Text for one Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def code(value: Any) -> str:
    return f"`{value}`"


# --- schemas as field tables ------------------------------------------------------------------
def _ref_name(node: dict) -> str | None:
    ref = node.get("$ref")
    return ref.rsplit("/", 1)[1] if ref else None


def type_of(node: dict) -> str:
    """A schema's type in words: `integer | null`, `array of PeriodFigures`, `one of: a, b`."""
    name = _ref_name(node)
    if name:
        return f"[{name}](#{github_slug(name)})"
    if "oneOf" in node or "anyOf" in node:
        return " | ".join(type_of(alt) for alt in node.get("oneOf", node.get("anyOf", [])))
    if "const" in node:
        return f"{code(node['const'])}"
    kinds = node.get("type", "any")
    kinds = list(kinds) if isinstance(kinds, list) else [kinds]
    words = []
    for kind in kinds:
        if kind == "array":
            items = node.get("items", {})
            words.append(f"array of {type_of(items)}" if items else "array")
        else:
            words.append(kind)
    text = " | ".join(words)
    if "enum" in node:
        values = [v for v in node["enum"] if v is not None]
        text += ": " + ", ".join(code(v) for v in values)
    return text


def constraints_of(node: dict) -> str:
    parts = []
    for key, word in (("minimum", "≥"), ("maximum", "≤"), ("minItems", "items ≥"), ("maxItems", "items ≤")):
        if key in node:
            parts.append(f"{word} {node[key]}")
    if node.get("format") in ("date", "date-time"):
        parts.append(node["format"])
    return ", ".join(parts)


def _object_of(node: dict) -> dict | None:
    """The object schema a property holds (itself, its array's items, or its non-null alternative),
    when that is an inline object with properties or additionalProperties."""
    if _ref_name(node):
        return None
    if node.get("type") == "array" or (isinstance(node.get("type"), list) and "array" in node["type"]):
        items = node.get("items", {})
        return _object_of(items) if items else None
    for alternative in node.get("oneOf", node.get("anyOf", [])):
        found = _object_of(alternative)
        if found is not None:
            return found
    if "properties" in node or isinstance(node.get("additionalProperties"), dict):
        return node
    return None


def _suffix(node: dict) -> str:
    """How a child path continues: `[]` through an array."""
    kinds = node.get("type")
    is_array = kinds == "array" or (isinstance(kinds, list) and "array" in kinds)
    return "[]" if is_array and not _ref_name(node.get("items", {})) else ""


def field_rows(schema: dict, prefix: str = "") -> Iterator[tuple[str, str, str, str]]:
    """(path, type, bounds, description) of every property, depth first."""
    required = set(schema.get("required", []))
    for name, node in schema.get("properties", {}).items():
        path = prefix + name
        description = node.get("description", "")
        if name not in required:
            description = ("Optional. " + description).strip()
        yield path, type_of(node), constraints_of(node), description
        child = _object_of(node)
        if child is not None:
            yield from field_rows(child, path + _suffix(node) + ".")
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        path = prefix + "<key>"
        yield path, type_of(extra), constraints_of(extra), extra.get("description", "")
        child = _object_of(extra)
        if child is not None:
            yield from field_rows(child, path + _suffix(extra) + ".")


def field_table(schema: dict) -> list[str]:
    lines = ["| field | type | bounds | meaning |", "|---|---|---|---|"]
    for path, kind, bounds, description in field_rows(schema):
        lines.append(f"| {code(path)} | {cell(kind)} | {cell(bounds)} | {cell(description)} |")
    return lines


def referenced(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        name = _ref_name(node)
        if name:
            found.add(name)
        for value in node.values():
            referenced(value, found)
    elif isinstance(node, list):
        for value in node:
            referenced(value, found)


# --- the document -------------------------------------------------------------------------------
def conventions() -> list[str]:
    from server.contract.catalogue import (
        CATALOGUE,
        COMMON_ERRORS,
        HOT_COPY_SECONDS,
        LIVE_GLOBAL,
        LIVE_PER_CLIENT,
        MAX_DAYS,
        PREFIX,
        STATUS,
    )
    from server.contract.catalogue.model import CARD_SIZES
    from server.contract.config import API_VERSION
    from server.contract.errors import (
        ALLOWED_METHODS,
        ERROR_MAX_AGE,
        EXPOSED_HEADERS,
        NO_STORE,
        RATE_HEADERS,
        RETRY_AFTER_SENT,
    )
    from server.serving.answers import DEFAULT_MAX_BYTES
    from server.serving.ratelimit import WINDOW_SECONDS

    def card_size(name: str) -> str:
        width, height = CARD_SIZES[name]
        return f"{width}×{height}"

    replayed = sorted({e.answer_seconds for e in CATALOGUE if e.answer_seconds})
    never = [e.full_path for e in CATALOGUE if not e.answer_seconds]
    return [
        "## Conventions",
        "",
        "These hold for every endpoint. Where the SPEC leaves a point open, the decision taken is stated here.",
        "",
        "### Envelope",
        "",
        "Every answer but the OpenAPI document is one JSON object:",
        "",
        "```",
        f'{{"success": true, "meta": {{"source", "version": "{API_VERSION}", "generated", "attribution"}}, "data": {{...}}}}',
        '{"success": false, "error": {"code": "invalid_region", "message": "..."}}',
        "```",
        "",
        "`meta.generated` is ISO 8601 with `+00:00`; times inside `data` are Unix seconds (`cached_at`, "
        "`*_at`) or UTC calendar days (`YYYY-MM-DD`). A day is a UTC day. Check `success`; `error.code` is "
        "stable, `error.message` is for people and may change. `player_not_found` also carries `region`. "
        "Fields of [Meta](#meta) and [Error](#error) are listed under [Shared objects](#shared-objects).",
        "",
        "### Methods",
        "",
        f"{ALLOWED_METHODS.replace(', OPTIONS', '')} answer; OPTIONS answers CORS preflights with 204. Any "
        f"other method answers 405 `method_not_allowed` with `Allow: {ALLOWED_METHODS}`. No key, no sign-up, "
        "no token.",
        "",
        "### Headers on every answer, errors included",
        "",
        "- `Content-Type: application/json; charset=utf-8`, `Access-Control-Allow-Origin: *`, "
        f"`Access-Control-Expose-Headers: {EXPOSED_HEADERS}`, `X-Content-Type-Options: nosniff`.",
        f"- `Cache-Control`: `public, max-age=N` with each endpoint's N below; `public, max-age={ERROR_MAX_AGE}` "
        f"for a 4xx error about a resource or parameter; `{NO_STORE}` for 429, 5xx and answers about a "
        "malformed request (a shared cache must not replay them to other clients).",
        "- On rate-limited endpoints: "
        + ", ".join(code(h) for h in RATE_HEADERS)
        + f' (`RateLimit-Policy: "<bucket>";q=<limit>;w={WINDOW_SECONDS}`, '
        '`RateLimit: "<bucket>";r=<remaining>;t=<seconds>`, IETF draft syntax; `X-RateLimit-Reset` is the '
        "seconds until the current window ends).",
        f"- `Retry-After` (integer seconds): {RETRY_AFTER_SENT}.",
        "",
        "### ETag and conditional requests",
        "",
        "The `ETag` is computed from `data` only (not `meta.generated`), so an unchanged answer keeps its "
        "ETag; send it back in `If-None-Match` and the answer is 304 without a body.",
        "",
        "### CSV",
        "",
        "The endpoints whose answer is a table take `format=csv` ("
        + ", ".join(code(e.full_path) for e in CATALOGUE if e.csv is not None)
        + "): the same filters, sort and page as the JSON, one row per item of the table's list, as RFC 4180 "
        "CSV (UTF-8 without a byte-order mark, a header row of the columns listed under each endpoint, CRLF "
        "line ends, quotes only where a cell needs them). A nested field is a dotted column (`career.wn8`); "
        "null is an empty cell; booleans are `true` and `false`; text that would start a spreadsheet formula "
        "(`=`, `+`, `-`, `@`, a tab or a carriage return: a clan's name or tag) is written after an apostrophe "
        "`'`, which spreadsheets show as text (numbers, negative ones too, are written as they are). It is served as `text/csv; charset=utf-8` "
        'with `Content-Disposition: attachment; filename="…"` (a name from the answer: region, days, '
        'ids), the attribution as `Link: <site>; rel="cite-as"` (a CSV has no place for it that every '
        "parser skips), and its own `ETag` (304 as for JSON). Errors stay the JSON envelope. In a "
        "spreadsheet: Excel's Data → From Text/CSV (UTF-8), LibreOffice's import dialog (UTF-8, comma), "
        "Google Sheets' `IMPORTDATA(url)`. A spreadsheet reads every table cell for cell: Gnumeric 1.12 "
        "(`scripts/check_csv_spreadsheet.py` over the demo's answers) takes the numbers as numbers, a day as "
        "a date, `true`/`false` as booleans and a formula-like text as that text, never computed. Without "
        "`format=csv` (or with `format=json`) the answer is JSON.",
        "",
        "### Cards",
        "",
        "The answers of "
        + ", ".join(code(e.full_path) for e in CATALOGUE if e.card is not None)
        + " are also drawn as a card: `format=svg` (`image/svg+xml`) or `format=png` (`image/png`), the "
        "figures the JSON answer has and nothing it lacks, each printed as the JSON writes it (a null as —). "
        f"`size=large` (the default, {card_size('large')}: a link preview's) or `size=banner` "
        f"({card_size('banner')}: a panel on a transparent background, for forum signatures and stream "
        "corners); `theme=dark` (the default) or `theme=light`. A card's `ETag` is derived from its answer's: "
        "it changes, and the card is drawn again, exactly when the answer does; a matching `If-None-Match` "
        "answers 304, and a card is replayed with its answer. Cards count in their endpoint's rate limit. "
        "The SVG references Wargaming's icons by their URLs (a tank's), the PNG does without them; its text "
        "is DejaVu Sans. Errors stay the JSON envelope; a bad `format`, `size` or `theme` is 400 "
        "`invalid_format`, `invalid_size` or `invalid_theme`. Each answer's page has the same path without "
        f"`{PREFIX}` (`/player/{{account_id}}/{{region}}`, its `/session`, `/clan/{{clan_id}}/{{region}}`, "
        "`/tank/{tank_id}/{region}`): the site at that view, whose head carries `og:title`, "
        "`og:description`, `og:image` (the PNG card), `og:url` and `twitter:card` "
        "(`summary_large_image`), so a link to it unfolds into its card in a chat; an unknown account's "
        "page is a 404 without a card.",
        "",
        "### Replayed answers",
        "",
        "A process keeps the rendered answer of a GET by path and query (parameters ordered by name) for the "
        "endpoint's `answer_seconds` (below: "
        + " or ".join(f"{s:g} s" for s in replayed)
        + f"; never for {', '.join(code(p) for p in never)}) and drops it at once when it writes the data "
        "itself (a profile refresh, ratings, the tracker's visit, a clan refresh, an online sample); another "
        "process's write shows within those seconds. A replayed answer is byte for byte the answer that was "
        "built except `meta.generated` (when it was built, so up to `answer_seconds` old) and the per-request "
        "headers (`Date` and the rate-limit headers: every request still passes the limiter). A bad "
        "parameter's 400 is replayed for a minute; the 404 of an unknown path or version is rendered once. "
        f"A process holds at most {DEFAULT_MAX_BYTES >> 20} MB of them (least recently used go first); "
        f"`{STATUS.full_path}` → `answer_cache` counts hits and misses. The services' own copies of a "
        f"profile, a clan and `/online` live {HOT_COPY_SECONDS:g} s as well.",
        "",
        "Answers built from the daily tables (tank statistics, marks, leaderboards, and a player's "
        "profile, history and tanks, which show where the player stands in them) are dropped together "
        "as soon as a process stores or first reads a newer build, and a process reads a region's "
        "tables anew together: the JSON and the CSV of one request asked at one moment carry the same "
        "figures, never one build's beside another's. Each of those answers names its build "
        "(`built_at`, `through`) where its schema has one.",
        "",
        "### Parameters",
        "",
        "Path parameters are one path segment each; ids are ASCII digits only (no sign, no spaces). Query "
        "parameters take their default when absent; a required one answers its error code when absent. A "
        "parameter given twice (`?days=5&days=6`) is a 400 with that parameter's code, never a guess. "
        "Unknown query parameters are ignored. The index (`GET "
        f"{PREFIX}`, each endpoint's `parameters`) and the OpenAPI document (`GET {PREFIX}/openapi.json`) "
        "carry the same bounds, allowed values and defaults as the tables below.",
        "",
        "### Errors every endpoint can answer",
        "",
        "Beyond the codes listed under each endpoint, every rate-limited endpoint can answer "
        + ", ".join(code(c) for c in COMMON_ERRORS)
        + "; the HTTP server itself answers `request_too_large` (a request head over 16 KiB or 100 lines), "
        "`payload_too_large` (a body over 64 KiB, refused before it is read), `bad_request` (bad "
        "percent-encoding, a malformed request line or Host header) and `too_many_connections`; routing "
        "answers `unknown_endpoint`, `unknown_version` and `method_not_allowed`; the site's static files "
        "answer `range_not_satisfiable`. Errors never carry internals. Every code is in "
        "[Error codes](#error-codes).",
        "",
        "### Rate limits",
        "",
        "Per client and endpoint, per minute: each endpoint's limit is below (and in the index as "
        "`rate_limit_per_minute`, in the OpenAPI document as `x-rate-limit-per-minute`). Endpoints marked "
        f"*live lookups* may ask the game API for the request: those lookups are also limited to "
        f"{LIVE_PER_CLIENT} per minute per client (`rate_limited`) and {LIVE_GLOBAL} per minute across all "
        "clients (`rate_limited_global`). Cached answers never count against the live limits, and a rejected "
        "lookup consumes no budget.",
        "",
        f"- **Window**: a sliding estimate over {WINDOW_SECONDS} s windows: the previous minute's count (at "
        "most limit − 1) weighted by the share of it still inside the last 60 s, plus the current minute's "
        "count. Nobody doubles a limit at a minute edge; `Retry-After` is at most 60 s, and a request sent "
        "after it is admitted.",
        "- **Client**: the TCP peer address, IPv6 clients by their /64 network. `X-Forwarded-For` (read right "
        "to left, skipping trusted hops) and `X-Real-Ip` count only from the operator's trusted proxies; from "
        "anyone else they are ignored.",
        "- **Several processes**: each process decides from exact counts in memory and shares a client's "
        "count once it could matter; with P processes a client is admitted at most "
        "`limit + (P − 1) · (max(t − 1, k) + 1)` requests per window, never more than P × limit "
        "([docs/deploy.md §3](deploy.md#3-processes-jobs-and-rate-limits-across-processes)). The shared "
        "live-lookup budget is exact: it is reserved atomically in the database.",
        "",
        "### Freshness",
        "",
        "A cached profile or clan is at most about an hour old (`cached_at` says when it was stored). A "
        "profile not cached is fetched live (`live_fetched: true`, `ratings.available: false`, "
        "`Cache-Control` of 30 s) and its ratings follow seconds later. Player counts are sampled each "
        f"minute. Histories go back at most {MAX_DAYS} days. The tank statistics and computed expected "
        "values are built once a day, about an hour after a UTC day ends, from the tracked accounts "
        "([docs/data.md](data.md)).",
        "",
        "### Versioning and deprecation",
        "",
        f"The version is a path segment: this is `{API_VERSION}` (`{PREFIX}`), and `meta.version` carries it. "
        f"Within `{API_VERSION}` changes are additions only: new endpoints, new parameters with defaults that "
        "keep today's answer, new fields, new error codes on new conditions. A field never changes meaning or "
        "type and is never removed; read objects tolerantly (ignore fields you do not know). A change that "
        "would break a caller ships as a new version beside this one, under its own path, never replacing it; "
        "an unknown version answers 404 `unknown_version`. No version is deprecated; before one is retired "
        "its answers will carry `Deprecation` and `Sunset` headers and the index will state the date. Each release's changes are in "
        "[CHANGELOG.md](../CHANGELOG.md); `/status` → `version` is the release a server runs.",
        "",
    ]


def endpoint_section(endpoint, schemas: dict) -> list[str]:
    from server.contract.catalogue import LIVE_GLOBAL, LIVE_PER_CLIENT, PREFIX
    from server.contract.errors import ERROR_CODES
    from server.serving.cards.layout import CARD_FIGURES

    lines = [f"### {endpoint.summary}", "", f"`GET {endpoint.full_path}`", "", endpoint.description, ""]
    facts = [
        ("rate limit", f"{endpoint.limit_per_minute} requests per minute per client (bucket `{endpoint.bucket}`)"),
        ("Cache-Control", f"`public, max-age={endpoint.cache_max_age}`"),
        (
            "replayed for",
            f"{endpoint.answer_seconds:g} s" if endpoint.answer_seconds else "never (built for every request)",
        ),
    ]
    if endpoint.live_fetched_max_age is not None:
        facts[1] = (
            "Cache-Control",
            f"`public, max-age={endpoint.cache_max_age}`; `max-age={endpoint.live_fetched_max_age}` when fetched "
            "live for the request",
        )
    if endpoint.live_lookups:
        facts.append(("live lookups", f"{LIVE_PER_CLIENT} per minute per client, {LIVE_GLOBAL} per minute in all"))
    if not endpoint.needs_database:
        facts.append(("database", "not needed: answers while the database is down"))
    lines += ["| | |", "|---|---|", *(f"| {name} | {cell(value)} |" for name, value in facts), ""]

    if endpoint.params:
        lines += ["**Parameters**", "", "| name | in | type | accepts | default | error |", "|---|---|---|---|---|---|"]
        for param in endpoint.params:
            accepts = []
            if param.enum is not None:
                accepts.append("one of " + ", ".join(code(v) for v in param.enum))
            elif param.minimum is not None or param.maximum is not None:
                accepts.append(f"{param.minimum} to {param.maximum:,}")
            if param.min_length is not None or param.max_length is not None:
                accepts.append(f"{param.min_length}–{param.max_length} characters")
            if param.pattern:
                accepts.append(code(param.pattern))
            accepts.append(param.description)
            default = code(param.default) if param.default is not None else ("required" if param.required else "—")
            lines.append(
                f"| {code(param.name)} | {param.location} | {param.type} | {cell('; '.join(accepts))} | "
                f"{cell(default)} | {code(param.error)} |"
            )
        lines.append("")

    if endpoint.schema is None and endpoint.media_type == "application/json":
        lines += ["**Answer**: served as is, not enveloped (the OpenAPI 3.1 document).", ""]
    elif endpoint.schema is None:
        lines += [f"**Answer**: the file as written (`{endpoint.media_type}`), not enveloped.", ""]
    else:
        lines += [
            f"**Answer**: `data` is [{endpoint.schema}](#{github_slug(endpoint.schema)}).",
            "",
        ]
        if endpoint.fields:
            lines += ["| fields | guide |", "|---|---|"]
            lines += [f"| {code(name)} | {cell(text)} |" for name, text in endpoint.fields.items()]
            lines.append("")
        if endpoint.csv is not None:
            lines += [
                f"**CSV** (`format=csv`, [CSV](#csv)): one row per item of `data.{endpoint.csv.rows}`, "
                "columns " + ", ".join(code(c) for c in endpoint.csv.columns) + ".",
                "",
            ]
        if endpoint.card is not None:
            lines += [f"**Card** (`format=svg` or `png`, [Cards](#cards)): {CARD_FIGURES[endpoint.card]}", ""]

    lines += ["**Errors**", "", "| status | code | when |", "|---|---|---|"]
    for error in endpoint.error_codes:
        status, meaning = ERROR_CODES[error]
        lines.append(f"| {status} | {code(error)} | {cell(meaning)} |")
    lines += ["", "**Example**", "", "```", f'curl -s "{BASE_URL}{PREFIX}{endpoint.example}"', "```", ""]
    return lines


def render() -> str:
    from handlers.index import index_document
    from handlers.schemas import schema_components
    from server.contract.catalogue import CATALOGUE, PREFIX
    from server.contract.config import API_VERSION, Config
    from server.contract.errors import ERROR_CODES

    schemas = schema_components(index_document(Config()))
    answers = [e.schema for e in CATALOGUE if e.schema]
    shared: set[str] = {"Meta", "Error"}
    for name in answers:
        referenced(schemas[name], shared)
    while True:  # and the objects those refer to
        found = set(shared)
        for name in shared:
            referenced(schemas[name], found)
        if found == shared:
            break
        shared = found
    shared -= set(answers)

    lines = [
        f"# API reference ({API_VERSION})",
        "",
        "For callers: every endpoint of the public statsapi API with its parameters, answer fields, errors, "
        "limits and cache lifetimes, and the conventions they share. Operators read "
        "[docs/deploy.md](deploy.md); contributors [docs/architecture.md](architecture.md); where the "
        "figures come from is [docs/data.md](data.md).",
        "",
        f"<!-- Generated by `{COMMAND}` from server/contract/catalogue.py, handlers/schemas.py and "
        "server/contract/errors.py; tests/test_docs.py fails when this file differs. Do not edit by hand. -->",
        "",
        f"Base URL: the server's address followed by `{PREFIX}` (`{BASE_URL}{PREFIX}` when started with "
        "`scripts/run.sh`). The same facts are machine-readable in the index "
        f"(`GET {PREFIX}`) and the OpenAPI 3.1 document (`GET {PREFIX}/openapi.json`).",
        "",
        "## Endpoints",
        "",
        "| endpoint | limit / min | Cache-Control max-age | replayed for |",
        "|---|---|---|---|",
    ]
    for endpoint in CATALOGUE:
        replay = f"{endpoint.answer_seconds:g} s" if endpoint.answer_seconds else "—"
        lines.append(
            f"| [`GET {endpoint.full_path}`](#{github_slug(endpoint.summary)}) | {endpoint.limit_per_minute} | "
            f"{endpoint.cache_max_age} s | {replay} |"
        )
    lines.append("")
    lines += conventions()
    lines += ["## Endpoint reference", ""]
    for endpoint in CATALOGUE:
        lines += endpoint_section(endpoint, schemas)

    lines += [
        "## Answer schemas",
        "",
        "The `data` of each endpoint, field by field (`a.b`: a field of an object, `a[].b`: of each array "
        "item, `<key>`: any key of a map). Fields are always present unless marked optional; `null` is "
        "listed where a field may be null.",
        "",
    ]
    for name in answers:
        lines += [f"### {name}", "", *field_table(schemas[name]), ""]
    lines += ["## Shared objects", "", "Objects the answers above refer to by name.", ""]
    for name in sorted(shared):
        schema = schemas[name]
        lines += [f"### {name}", ""]
        if schema.get("description"):
            lines += [schema["description"], ""]
        if "properties" in schema:
            lines += [*field_table(schema), ""]
        else:
            lines += [f"Type: {type_of(schema)}.", ""]

    lines += ["## Error codes", "", "| status | code | meaning |", "|---|---|---|"]
    for error, (status, meaning) in sorted(ERROR_CODES.items(), key=lambda item: (item[1][0], item[0])):
        lines.append(f"| {status} | {code(error)} | {cell(meaning)} |")
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="exit 1 when docs/api.md differs from what would be written"
    )
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if OUTPUT.read_text(encoding="utf-8") != text:
            print(f"docs/api.md is out of date: run {COMMAND}", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(ROOT)} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
