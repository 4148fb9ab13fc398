"""Error codes of the API and the exception that carries one."""

from __future__ import annotations

import http.client
from collections.abc import Mapping
from typing import Any

import tornado.web
import ujson

from store.constants import GAMES, REGIONS

# Every error code the API can answer, with its status and meaning (listed by the index).
ERROR_CODES = {
    "invalid_account_id": (400, "account ID missing or not a positive integer"),
    "invalid_clan_id": (400, "clan ID missing or not a positive integer"),
    "invalid_region": (400, f"region is not one of {', '.join(REGIONS)}"),
    "invalid_days": (400, "days is not an integer in the allowed range (a leaderboard's: a window the index lists)"),
    "invalid_game": (400, f"game is not one of {', '.join(GAMES)}"),
    # The lengths are the catalogue's (server.contract.catalogue SEARCH), which imports this module: they
    # are read from the index rather than restated here.
    "invalid_premium": (400, "premium is not true or false"),
    "invalid_accounts": (
        400,
        "accounts is not 1 to 100 comma-separated account IDs, each optionally with :TANK_ID, none twice",
    ),
    "invalid_names": (
        400,
        "names is not 1 to 100 comma-separated nicknames (1-24 letters, digits or _), each optionally with "
        ":TANK_ID, none twice",
    ),
    "invalid_roster": (400, "a roster takes accounts or names (one of them, once)"),
    "invalid_vehicle_search": (400, "search is not 1 to 40 characters of a vehicle's name (no control characters)"),
    "invalid_search": (
        400,
        "search is not the start of a nickname: letters, digits or underscores within the length bounds the index gives for search",
    ),
    "invalid_ids": (
        400,
        "ids is not up to 100 comma-separated account IDs, each once (given with region, without search)",
    ),
    "invalid_day": (400, "day is not a UTC day written YYYY-MM-DD"),
    "invalid_tank_id": (400, "tank ID missing or not a positive integer"),
    "invalid_tier": (400, "tier is not an integer from 1 to 11"),
    "invalid_type": (400, "type is not a vehicle type the index lists"),
    "invalid_nation": (400, "nation is not a lowercase nation name"),
    "invalid_sort": (400, "sort is not a figure the index lists for this endpoint"),
    "invalid_by": (400, "by is not a figure the index lists for this leaderboard"),
    "invalid_min_battles": (400, "min_battles is not an integer in the allowed range"),
    "invalid_min_members": (400, "min_members is not an integer in the allowed range"),
    "too_many_streams": (429, "this client has as many session streams open as it may; close one first"),
    "streams_full": (503, "this server has as many session streams open as it can hold; try again later"),
    "invalid_since": (400, "since is not today or a unix time within the records kept (not in the future)"),
    "invalid_order": (400, "order is not asc or desc"),
    "invalid_limit": (400, "limit is not an integer in the allowed range"),
    "invalid_offset": (400, "offset is not an integer in the allowed range"),
    "invalid_group_by": (400, "group_by is not tier, type or nation"),
    "invalid_format": (
        400,
        "format is not one of the endpoint's: json, csv, svg or png (each where the index lists it)",
    ),
    "invalid_size": (400, "size is not large or banner"),
    "invalid_theme": (400, "theme is not dark or light"),
    "invalid_population": (400, "population is not panel or tracked"),
    "invalid_source": (400, "source is not effective, table or computed"),
    "invalid_version": (400, "version is not a computed table's version (YYYY-MM-DD+ev<N>)"),
    "bad_request": (400, "the request could not be parsed (bad encoding, header or line)"),
    "player_not_found": (404, "no account with this ID on this region"),
    "clan_not_cached": (404, "clan not in the cache yet"),
    "no_history": (404, "no snapshots (or, for /tanks, no per-tank records) recorded for this account"),
    "no_statistics": (
        404,
        "no tank statistics for this region, period (and tank) yet over the population asked for: built daily",
    ),
    "no_expected_values": (
        404,
        "no such expected-values table: none loaded, none computed for this region yet, or no such version",
    ),
    "dump_not_found": (404, "no bulk file of that name (GET /dumps lists them)"),
    "no_digest": (404, "no weekly digest computed for this clan yet"),
    "unknown_endpoint": (404, "path does not match any endpoint"),
    "unknown_version": (404, "API version in the path does not exist"),
    "method_not_allowed": (405, "only GET, HEAD and OPTIONS are supported; see Allow"),
    "payload_too_large": (413, "request body too large; this read-only API accepts at most 64 KiB"),
    "range_not_satisfiable": (416, "the requested byte range is beyond the end of the file"),
    "request_too_large": (431, "request line or headers too large"),
    "rate_limited": (429, "per-IP limit exceeded; see Retry-After"),
    "rate_limited_global": (429, "shared live-lookup budget exhausted this minute; see Retry-After"),
    "internal_error": (500, "unexpected server error; it has been logged"),
    "database_unavailable": (503, "temporary backend problem; retry shortly"),
    "upstream_unavailable": (503, "the game API is not answering; see Retry-After"),
    "too_many_connections": (503, "too many open connections; retry shortly"),
}


class APIError(tornado.web.HTTPError):
    """An error with a stable machine code; rendered by `render_error`."""

    def __init__(self, code: str, message: str | None = None, headers: dict | None = None, **extra: Any) -> None:
        status, meaning = ERROR_CODES[code]
        super().__init__(status, reason=http.client.responses.get(status, "Error"))
        self.code = code
        self.message = message or meaning
        self.headers = headers or {}
        self.extra = extra


# --- the one error envelope, its headers and caching policy (API handlers, the site, the HTTP
# server's protocol-level answers and the early 429 all render through these) ---------------
ALLOWED_METHODS = "GET, HEAD, OPTIONS"
# The rate-limit headers every answer that passed the limiter carries (server/serving/ratelimit.py).
RATE_HEADERS = ("RateLimit-Policy", "RateLimit", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")
# Content-Disposition and Link: a CSV answer's file name and attribution (server/contract/csv_answers.py).
EXPOSED_HEADERS = ", ".join(("Content-Disposition", "ETag", "Link", "Retry-After", *sorted(RATE_HEADERS)))
# What a 503 database_unavailable from a database error (down, or stalled past a query's deadline)
# tells the caller: the embedded database's supervisor restarts it within seconds.
DATABASE_RETRY_AFTER = 5
# When an answer carries Retry-After (stated once: the index, OpenAPI and docs/api.md say this).
RETRY_AFTER_SENT = (
    "with every 429 and every 503: upstream_unavailable, and database_unavailable (when the process "
    "already runs its maximum of heavy reads, when a read passed its request's one deadline, under "
    "2 s in all, or when the database did not answer)"
)
# On every API answer, success or error (the site's files carry all but the Content-Type).
COMMON_HEADERS = {
    "Content-Type": "application/json; charset=utf-8",
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Expose-Headers": EXPOSED_HEADERS,
    "X-Content-Type-Options": "nosniff",
}
NO_STORE = "public, max-age=0, no-store"
ERROR_MAX_AGE = 60
# Errors about the request's form, not a resource: never worth replaying from a cache.
UNCACHED_CODES = frozenset({"bad_request", "payload_too_large", "range_not_satisfiable", "request_too_large"})


def error_cache_control(status: int, code: str) -> str:
    """429 and 5xx must not be replayed to other clients by a shared cache; neither must an
    answer about a malformed request. Other errors (404, 400 for a bad parameter, 405) are
    cached for a minute."""
    if status == 429 or status >= 500 or code in UNCACHED_CODES:
        return NO_STORE
    return f"public, max-age={ERROR_MAX_AGE}"


def error_headers(status: int, code: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every header an error answer sets, whoever writes it: COMMON_HEADERS, its Cache-Control,
    Allow on a 405, then `extra` (the error's own, such as Retry-After)."""
    headers = {**COMMON_HEADERS, "Cache-Control": error_cache_control(status, code)}
    if code == "method_not_allowed":
        headers["Allow"] = ALLOWED_METHODS
    if extra:
        headers.update(extra)
    return headers


def error_envelope(code: str, message: str | None = None, **extra: Any) -> str:
    """{"success": false, "error": {"code", "message", ...}} as JSON text."""
    body = {"code": code, "message": message or ERROR_CODES[code][1], **extra}
    return ujson.dumps({"success": False, "error": body}, ensure_ascii=False, escape_forward_slashes=False)


def render_error(error: APIError) -> tuple[int, dict[str, str], str]:
    """The one rendering of an error answer: (status, headers, JSON body)."""
    headers = error_headers(error.status_code, error.code, error.headers)
    return error.status_code, headers, error_envelope(error.code, error.message, **error.extra)
