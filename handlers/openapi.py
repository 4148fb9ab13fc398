"""The OpenAPI 3.1 document of the API, served raw (not enveloped) at /api/v1/openapi.json.

Built from the same facts as the index: the endpoint catalogue (handlers.index.ENDPOINTS,
with its parameters, defaults and cache lifetimes), the error catalogue (server.errors.
ERROR_CODES) and the rate limits (server.ratelimit, scaled like the index scales them).
What is added here is only what those catalogues do not hold: response shapes, which error
codes each endpoint can answer, and the response headers.
"""

from __future__ import annotations

import copy
import functools
import hashlib

import ujson

from handlers.base import ALLOWED_METHODS, EXPOSED_HEADERS, BaseHandler
from handlers.index import DEMO_ACCOUNT, DEMO_CLAN, ENDPOINTS, PREFIX, index_document
from server.config import API_VERSION, VERSION
from server.errors import ERROR_CODES, ERROR_MAX_AGE, NO_STORE
from server.ratelimit import LIVE_GLOBAL, LIVE_PER_CLIENT, WINDOW_SECONDS
from server.ratings import wn8_color
from store.constants import GAMES, REGIONS

OPENAPI_VERSION = "3.1.0"
INT64_MAX = 2**63 - 1  # handlers.base.positive_int: ids are positive and fit a signed 64-bit integer
ISO_UTC_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$"
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
# The labels of the WN8 colour scale, in order, as server.ratings.wn8_color gives them.
WN8_COLOURS = list(dict.fromkeys(wn8_color(float(value)) for value in range(0, 10_001, 10)))

# Error codes every rate-limited GET can answer, whatever the endpoint.
COMMON_CODES = ("bad_request", "payload_too_large", "request_too_large", "rate_limited", "internal_error")
# Codes specific to an endpoint (what its handler and service raise).
ENDPOINT_CODES = {
    "index": (),
    "player": (
        "invalid_account_id",
        "invalid_region",
        "player_not_found",
        "rate_limited_global",
        "database_unavailable",
        "upstream_unavailable",
    ),
    "history": ("invalid_account_id", "invalid_region", "invalid_days", "no_history", "database_unavailable"),
    "clan": ("invalid_clan_id", "invalid_region", "clan_not_cached", "database_unavailable"),
    "weekly": ("invalid_clan_id", "invalid_region", "clan_not_cached", "no_digest", "database_unavailable"),
    "online": ("database_unavailable",),
    "online_history": ("invalid_game", "invalid_region", "invalid_days", "database_unavailable"),
    "status": (),
    "openapi": (),
}

OPERATION_IDS = {
    "index": "Index",
    "player": "Player",
    "history": "PlayerHistory",
    "clan": "Clan",
    "weekly": "ClanWeekly",
    "online": "Online",
    "online_history": "OnlineHistory",
    "status": "Status",
    "openapi": "OpenAPIDocument",
}
TAGS = {
    "index": "meta",
    "openapi": "meta",
    "status": "meta",
    "player": "players",
    "history": "players",
    "clan": "clans",
    "weekly": "clans",
    "online": "online",
    "online_history": "online",
}
SUMMARIES = {
    "index": "API index: endpoints, parameters, limits, error codes",
    "player": "Player profile with WN8, WN7 and efficiency",
    "history": "Player daily history with 7, 30 and 90 day deltas",
    "clan": "Clan details with averages over member profiles",
    "weekly": "Weekly clan digest",
    "online": "Current player counts per game and region",
    "online_history": "Daily series of player counts",
    "status": "Service health and cache timestamps",
    "openapi": "This OpenAPI 3.1 document",
}
DATA_SCHEMAS = {
    "index": "Index",
    "player": "PlayerProfile",
    "history": "PlayerHistory",
    "clan": "Clan",
    "weekly": "ClanWeekly",
    "online": "Online",
    "online_history": "OnlineHistory",
    "status": "Status",
}
PARAMETER_DESCRIPTIONS = {
    ("path", "account_id"): "Account ID: a positive integer (ASCII digits, no sign, fits a signed 64-bit integer).",
    ("path", "clan_id"): "Clan ID: a positive integer (ASCII digits, no sign, fits a signed 64-bit integer).",
    ("path", "region"): "Game region: eu, na or asia.",
    ("query", "days"): "Number of UTC days, ending today. Give it at most once.",
    ("query", "game"): "Game whose player counts to return. Give it at most once.",
    ("query", "region"): "Region, or `all` for the sum of all regions. Give it at most once.",
}
_PATH_ID_PARAMS = ("account_id", "clan_id")
_PATH_EXAMPLES = {"account_id": DEMO_ACCOUNT, "clan_id": DEMO_CLAN, "region": "eu"}


def ref(kind: str, name: str) -> dict:
    return {"$ref": f"#/components/{kind}/{name}"}


def nullable(type_name: str, **extra) -> dict:
    return {"type": [type_name, "null"], **extra}


def obj(properties: dict, required=None, closed: bool = True, **extra) -> dict:
    """An object schema; every listed property is required unless `required` says otherwise."""
    schema = {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else list(required),
    }
    if closed:
        schema["additionalProperties"] = False
    schema.update(extra)
    return schema


def array(items: dict, **extra) -> dict:
    return {"type": "array", "items": items, **extra}


# --- parameters (converted from the index's catalogue) --------------------------------
def openapi_parameter(param: dict) -> dict:
    """One catalogue parameter ({name, in, type, minimum, maximum, default, enum, required})."""
    schema = {"type": param["type"]}
    for key in ("minimum", "maximum", "enum", "default"):
        if key in param:
            schema[key] = copy.deepcopy(param[key])
    if param["in"] == "path" and param["name"] in _PATH_ID_PARAMS:
        schema.setdefault("maximum", INT64_MAX)
        schema["format"] = "int64"
    description = PARAMETER_DESCRIPTIONS.get((param["in"], param["name"]), "")
    if "default" in param:
        description = (description + f" Default: `{param['default']}`.").strip()
    out = {
        "name": param["name"],
        "in": param["in"],
        "required": bool(param.get("required", param["in"] == "path")),
        "description": description,
        "schema": schema,
    }
    if param["in"] == "path":
        out["example"] = _PATH_EXAMPLES.get(param["name"])
    return out


def preflight_parameter(param: dict) -> dict:
    """A path parameter of an OPTIONS operation: the preflight answers whatever its value."""
    return {
        "name": param["name"],
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
            "Seconds to wait before retrying. Sent with every 429 and with 503 "
            "`upstream_unavailable` (not with 503 `database_unavailable`).",
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


def header_definitions(*parts) -> dict:
    """components/headers: the variants the given parts of the document refer to."""
    used: set[str] = set()

    def collect(node) -> None:
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
RATE_HEADERS = ("RateLimit-Policy", "RateLimit", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")


def headers_for(status: str, method: str, rate_limited: bool) -> dict:
    """The documented headers of one response; `required` where every such answer has them."""

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
    if status in ("200", "304"):
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


# --- schemas --------------------------------------------------------------------------
def schema_components(index: dict) -> dict:
    all_codes = list(ERROR_CODES)
    unix = {"type": "integer", "description": "Unix timestamp (seconds, UTC)."}
    nullable_unix = nullable("integer", description="Unix timestamp (seconds, UTC), or null when unknown.")
    number_or_null = nullable("number")
    iso = {"type": "string", "format": "date-time", "pattern": ISO_UTC_PATTERN}
    iso_or_null = {"type": ["string", "null"], "format": "date-time", "pattern": ISO_UTC_PATTERN}
    date = {"type": "string", "format": "date", "pattern": DATE_PATTERN, "description": "UTC calendar day."}
    region = {"type": "string", "enum": list(REGIONS)}
    member_ref = obj({"account_id": {"type": "integer"}, "name": nullable("string")})

    schemas = {
        "Meta": obj(
            {
                "source": {"type": "string", "description": "Name of the data source."},
                "version": {"type": "string", "const": API_VERSION, "description": "API version."},
                "generated": {**iso, "description": "When this answer was generated (ISO 8601, UTC, +00:00)."},
                "attribution": {
                    "type": "string",
                    "description": "Credit text; please link to the site when you reuse the data.",
                },
            },
            description="Facts about the answer itself.",
        ),
        "ErrorCode": {
            "type": "string",
            "enum": all_codes,
            "description": "Every error code of the API (status and meaning in the index's `errors`).",
        },
        "Error": obj(
            {
                "code": ref("schemas", "ErrorCode"),
                "message": {"type": "string", "description": "Human-readable; may change, do not parse it."},
                "region": {**region, "description": "The requested region (on `player_not_found`)."},
            },
            required=["code", "message"],
        ),
        "ErrorEnvelope": obj(
            {
                "success": {"type": "boolean", "const": False},
                "error": ref("schemas", "Error"),
            },
            description="An error: `success` is false and `error` stands in place of `data`; there is no `meta`.",
        ),
        # --- player --------------------------------------------------------------
        "PlayerStatistics": obj(
            {
                "battles": {"type": "integer", "minimum": 0},
                "wins": {"type": "integer", "minimum": 0},
                "losses": {"type": "integer", "minimum": 0},
                "draws": {"type": "integer", "minimum": 0},
                "win_rate": nullable("number", description="Percent, two decimals; null without battles."),
                "avg_damage": nullable("number", description="Damage dealt per battle."),
                "avg_frags": nullable("number", description="Vehicles destroyed per battle."),
                "avg_spotted": nullable("number", description="Vehicles spotted per battle."),
                "avg_defence": nullable("number", description="Base capture points reset per battle."),
                "avg_capture": nullable("number", description="Base capture points per battle."),
                "avg_xp": nullable("number", description="Experience per battle."),
                "survival_rate": nullable("number", description="Percent of battles survived."),
                "hit_rate": nullable("number", description="Percent of shots that hit; null without shots."),
                "average_tier": nullable(
                    "number", description="Battle-weighted average vehicle tier; null until ratings are calculated."
                ),
            },
            description="Career totals (random battles) and per-battle averages.",
        ),
        "PlayerRatings": obj(
            {
                "available": {
                    "type": "boolean",
                    "description": "False when the profile was just fetched live: the ratings follow seconds later.",
                },
                "wn8": number_or_null,
                "wn8_color": {
                    "type": ["string", "null"],
                    "enum": WN8_COLOURS + [None],
                    "description": "Label of the usual WN8 colour scale.",
                },
                "wn7": number_or_null,
                "efficiency": number_or_null,
                "calculated_at": nullable_unix,
                "expected_values_version": nullable(
                    "string", description="Version (date) of the XVM expected-values table WN8 was computed with."
                ),
            }
        ),
        "PlayerProfile": obj(
            {
                "account_id": {"type": "integer", "minimum": 1},
                "region": region,
                "nickname": nullable("string"),
                "clan_id": nullable("integer", description="Clan of the player, null when none."),
                "created_at": nullable_unix,
                "last_battle_time": nullable_unix,
                "updated_at": nullable_unix,
                "statistics": ref("schemas", "PlayerStatistics"),
                "ratings": ref("schemas", "PlayerRatings"),
                "cached_at": {**unix, "description": "When the profile was stored (at most about one hour ago)."},
                "live_fetched": {
                    "type": "boolean",
                    "description": "True when the profile was not cached and was "
                    "fetched live from the game API just now.",
                },
            }
        ),
        # --- history -------------------------------------------------------------
        "HistoryEntry": obj(
            {
                "date": date,
                "battles": {"type": "integer"},
                "wins": {"type": "integer"},
                "damage_dealt": {"type": "integer"},
                "frags": {"type": "integer"},
                "spotted": {"type": "integer"},
                "xp": {"type": "integer"},
                "wn8": number_or_null,
                "wn7": number_or_null,
                "efficiency": number_or_null,
                "win_rate": number_or_null,
                "avg_damage": number_or_null,
            },
            description="Career totals as of the snapshot of that UTC day.",
        ),
        "HistoryDelta": obj(
            {
                "from": date,
                "to": date,
                "battles": {"type": "integer", "description": "Battles played between the two snapshots."},
                "wins": {"type": "integer"},
                "win_rate": number_or_null,
                "avg_damage": number_or_null,
                "avg_frags": number_or_null,
                "avg_xp": number_or_null,
                "wn8_change": number_or_null,
                "win_rate_change": nullable("number", description="Change of the career win rate, percentage points."),
            },
            description="What changed over the period: rates over the battles played in it.",
        ),
        "PlayerHistory": obj(
            {
                "account_id": {"type": "integer", "minimum": 1},
                "region": region,
                "days": {"type": "integer", "minimum": 1},
                "first_date": date,
                "last_date": date,
                "snapshots": array(ref("schemas", "HistoryEntry")),
                "snapshot_count": {"type": "integer", "minimum": 0},
                "deltas": obj(
                    {f"{p}d": {"oneOf": [ref("schemas", "HistoryDelta"), {"type": "null"}]} for p in (7, 30, 90)},
                    description="Deltas over 7, 30 and 90 days; null when no snapshot lies in the period.",
                ),
                "latest": obj(
                    {"date": date, "battles": {"type": "integer"}, "wins": {"type": "integer"}, "wn8": number_or_null}
                ),
            }
        ),
        # --- clans ---------------------------------------------------------------
        "Clan": obj(
            {
                "clan_id": {"type": "integer", "minimum": 1},
                "region": region,
                "tag": nullable("string"),
                "name": nullable("string"),
                "members_count": {"type": "integer", "minimum": 0},
                "ratings": obj(
                    {
                        "elo_10": nullable("integer", description="Elo rating, tier X category."),
                        "elo_8": nullable("integer", description="Elo rating, tier VIII category."),
                        "skirmish_win_rate": nullable("number", description="Percent, two decimals."),
                        "skirmish_battles": {"type": "integer", "minimum": 0},
                    }
                ),
                "members": obj(
                    {
                        "profiles_measured": {
                            "type": "integer",
                            "minimum": 0,
                            "description": "Member profiles the averages were computed from.",
                        },
                        "avg_win_rate": number_or_null,
                        "avg_damage": number_or_null,
                        "avg_battles": number_or_null,
                    },
                    description="Averages across the real member profiles.",
                ),
                "member_list": array(
                    obj(
                        {
                            "account_id": {"type": "integer"},
                            "name": nullable("string"),
                            "role": nullable("string"),
                            "joined_at": nullable_unix,
                        }
                    )
                ),
                "cached_at": {
                    **unix,
                    "description": "When the clan was stored; older data stays served when the game API fails.",
                },
            }
        ),
        "ClanWeekly": obj(
            {
                "clan_id": {"type": "integer", "minimum": 1},
                "region": region,
                "tag": nullable("string"),
                "name": nullable("string"),
                "period": obj({"start": date, "end": date, "days": {"type": "integer"}}),
                "activity": obj(
                    {
                        "members": {"type": "integer"},
                        "measured_members": {"type": "integer"},
                        "active_members": {"type": "integer"},
                        "inactive": array(member_ref),
                        "not_measured": array(member_ref),
                        "battles_per_member": number_or_null,
                        "joined": array(
                            obj({"account_id": {"type": "integer"}, "name": nullable("string"), "date": date})
                        ),
                        "left": array(
                            obj({"account_id": {"type": "integer"}, "name": nullable("string"), "date": date})
                        ),
                    }
                ),
                "top": obj(
                    {
                        "min_battles": {"type": "integer"},
                        "by_battles": array(
                            obj(
                                {
                                    "account_id": {"type": "integer"},
                                    "name": nullable("string"),
                                    "battles": {"type": "integer"},
                                }
                            )
                        ),
                        "by_wn8": array(
                            obj(
                                {
                                    "account_id": {"type": "integer"},
                                    "name": nullable("string"),
                                    "wn8": {"type": "number"},
                                    "wn8_change": number_or_null,
                                    "battles": {"type": "integer"},
                                }
                            )
                        ),
                        "by_win_rate": array(
                            obj(
                                {
                                    "account_id": {"type": "integer"},
                                    "name": nullable("string"),
                                    "win_rate": {"type": "number"},
                                    "battles": {"type": "integer"},
                                }
                            )
                        ),
                    }
                ),
                "aggregates": obj(
                    {
                        "battles": {"type": "integer"},
                        "wins": {"type": "integer"},
                        "win_rate": number_or_null,
                        "avg_damage": number_or_null,
                        "members_avg_change": obj(
                            {
                                "profiles_compared": {"type": "integer", "minimum": 0},
                                **{
                                    key: obj({"start": number_or_null, "end": number_or_null, "change": number_or_null})
                                    for key in ("win_rate", "avg_damage", "avg_battles")
                                },
                            },
                            description="Mean member career values at the start and the end of the week.",
                        ),
                    }
                ),
                "clan_cached_at": unix,
                "computed_at": unix,
            },
            description="The digest of the last 7 UTC days, from the members' daily snapshots.",
        ),
        # --- online --------------------------------------------------------------
        "OnlinePeak": obj(
            {
                "date": date,
                "players": {"type": "integer", "minimum": 0},
                "minute": iso,
                "minute_unix": unix,
            },
            required=["players", "minute", "minute_unix"],
            description="A measured peak and its minute.",
        ),
        "OnlinePeaks": obj(
            {
                "today": {"oneOf": [ref("schemas", "OnlinePeak"), {"type": "null"}]},
                "all_time": {"oneOf": [ref("schemas", "OnlinePeak"), {"type": "null"}]},
            }
        ),
        "OnlineRegion": obj(
            {
                "players": nullable("integer", minimum=0),
                "minute": iso_or_null,
                "minute_unix": nullable_unix,
                "age_seconds": nullable("integer", minimum=0),
                "servers": array(obj({"server": {"type": "string"}, "players": {"type": "integer", "minimum": 0}})),
                "failing": {
                    "type": "boolean",
                    "description": "The newest sampling attempt failed; the counts are the last good ones.",
                },
                "last_failure": nullable_unix,
                "peak": ref("schemas", "OnlinePeaks"),
            }
        ),
        "OnlineGame": obj(
            {
                "players": nullable("integer", minimum=0),
                "minute": iso_or_null,
                "minute_unix": nullable_unix,
                "complete": {"type": "boolean", "description": "All regions were sampled at the same minute."},
                "peak": ref("schemas", "OnlinePeaks"),
                "regions": obj({r: ref("schemas", "OnlineRegion") for r in REGIONS}),
            }
        ),
        "Online": obj(
            {
                "games": obj({g: ref("schemas", "OnlineGame") for g in GAMES}),
                "newest_sample": {
                    "oneOf": [
                        obj({"minute": iso, "minute_unix": unix, "age_seconds": {"type": "integer", "minimum": 0}}),
                        {"type": "null"},
                    ]
                },
                "today": date,
                "sample_interval_seconds": {"type": "integer", "minimum": 1},
            }
        ),
        "OnlineHistory": obj(
            {
                "game": {"type": "string", "enum": list(GAMES)},
                "region": {"type": "string", "enum": list(REGIONS) + ["all"]},
                "days": {"type": "integer", "minimum": 1},
                "from": date,
                "to": date,
                "series": array(
                    obj(
                        {
                            "date": date,
                            "samples": {"type": "integer", "minimum": 0},
                            "peak": nullable("integer", minimum=0),
                            "peak_minute": iso_or_null,
                            "min": nullable("integer", minimum=0),
                            "avg": nullable("number", minimum=0),
                        },
                        description="One UTC day; days without samples have samples 0 and null values.",
                    )
                ),
            }
        ),
        # --- status --------------------------------------------------------------
        "Status": obj(
            {
                "health": {"type": "string", "enum": ["ok", "degraded"]},
                "version": {"type": "string", "description": "Server software version."},
                "api_version": {"type": "string", "const": API_VERSION},
                "uptime_seconds": {"type": "integer", "minimum": 0},
                "database": obj(
                    {"reachable": {"type": "boolean"}, "ping_ms": number_or_null, "error": {"type": "string"}},
                    required=["reachable", "ping_ms"],
                ),
                "upstream": obj(
                    {
                        "configured": {"type": "boolean"},
                        "last_success": number_or_null,
                        "last_failure": number_or_null,
                        "last_error": nullable("string"),
                        "requests": {"type": "integer", "minimum": 0},
                        "failures": {"type": "integer", "minimum": 0},
                        "budget": obj(
                            {
                                "rate_per_second": {
                                    "type": "number",
                                    "description": "Configured upstream quota of the application_id (all processes).",
                                },
                                "processes_sharing": {"type": "integer", "minimum": 1},
                                "share_per_second": {
                                    "type": "number",
                                    "description": "This process's share of the quota.",
                                },
                                "effective_per_second": {
                                    "type": "number",
                                    "description": "What this process sends at most now (after the "
                                    "safety margin and any slow-down).",
                                },
                                "window": obj(
                                    {
                                        "requests": {"type": "integer"},
                                        "seconds": {"type": "number"},
                                        "reserved_for_live": {"type": "integer"},
                                    }
                                ),
                                "in_flight": {
                                    "type": "integer",
                                    "minimum": 0,
                                    "description": "Requests sent and not yet answered.",
                                },
                                "slowed_down": {
                                    "type": "boolean",
                                    "description": "The upstream refused a request for the rate recently.",
                                },
                                "requests_last_minute": {"type": "integer", "minimum": 0},
                                "requests_last_minute_by_caller": {
                                    "type": "object",
                                    "additionalProperties": {"type": "integer"},
                                    "description": "live, clans, refresh, online, reference, seed, other",
                                },
                                "queued": {
                                    "type": "object",
                                    "additionalProperties": {"type": "integer"},
                                    "description": "Requests waiting for a slot, by priority (0 = live).",
                                },
                                "request_limit_exceeded": obj(
                                    {"count": {"type": "integer", "minimum": 0}, "last": number_or_null}
                                ),
                                "live_queue_wait_ms": obj(
                                    {
                                        "p50": number_or_null,
                                        "p99": number_or_null,
                                        "samples": {"type": "integer", "minimum": 0},
                                    }
                                ),
                            }
                        ),
                        "expected_values": obj(
                            {
                                "version": nullable("string"),
                                "tanks": {"type": "integer", "minimum": 0},
                                "rows_skipped": {"type": "integer", "minimum": 0},
                                "loaded_at": number_or_null,
                                "last_error": nullable("string"),
                            }
                        ),
                    },
                    required=["configured"],
                ),
                "jobs": {
                    "type": "object",
                    "description": "Last outcome of each background job, by job name.",
                    "additionalProperties": {
                        "type": "object",
                        "properties": {
                            "ok": {"type": "boolean"},
                            "last_run": {"type": "number"},
                            "message": {"type": "string"},
                            "duration_s": {"type": "number"},
                        },
                    },
                },
                "leader": {"type": "boolean", "description": "This process runs the background jobs."},
                "rate_limiter": obj(
                    {
                        "tracked_keys": {"type": "integer", "minimum": 0},
                        "last_flush": number_or_null,
                        "flush_failures": {"type": "integer", "minimum": 0},
                        "evicted_windows": {"type": "integer", "minimum": 0},
                        "pending_keys": {
                            "type": "integer",
                            "minimum": 0,
                            "description": "Counters admitted here, not yet written to the database.",
                        },
                        "flush_lag_seconds": {
                            "type": "number",
                            "minimum": 0,
                            "description": "How long flushes have been failing or leaving counters "
                            "behind (0 when they keep up).",
                        },
                        "consecutive_flush_failures": {"type": "integer", "minimum": 0},
                        "last_flush_error": nullable("string"),
                        "degraded": {
                            "type": "boolean",
                            "description": "Flushes fail or lag by more than 10 s: limits are then exact per "
                            "process only (at most processes x limit per client).",
                        },
                    }
                ),
                "embedded_database": {
                    "oneOf": [
                        {"type": "null"},
                        obj(
                            {
                                "state": {"type": "string", "description": "running, restarting or failed"},
                                "restarts": {"type": "integer", "minimum": 0},
                                "restart_attempts": {"type": "integer", "minimum": 0},
                                "last_restart": nullable("integer"),
                                "last_exit": {
                                    "oneOf": [
                                        {"type": "null"},
                                        obj({"at": {"type": "integer"}, "code": nullable("integer")}),
                                    ]
                                },
                            }
                        ),
                    ],
                    "description": "The supervised embedded database (null with an external MongoDB).",
                },
                "connections": {
                    "oneOf": [{"type": "null"}, {"type": "object", "additionalProperties": {"type": "integer"}}],
                    "description": "This process's client connections: open, max, "
                    "max_per_client, waiting_for_head, refused, shed_idle, "
                    "head_timeouts, heads_too_large, accept_pauses.",
                },
                "caches": {
                    "type": "object",
                    "description": "Newest cached item per data family (Unix time); empty "
                    "when the database is unreachable.",
                    "additionalProperties": number_or_null,
                },
                "online_sampler": {
                    "type": "object",
                    "description": 'Per game/region ("wot/eu"…): the '
                    "sampler's last success and last failure (Unix "
                    "time); empty when the database is unreachable.",
                    "additionalProperties": obj({"last_success": number_or_null, "last_failure": number_or_null}),
                },
            }
        ),
        # --- index ---------------------------------------------------------------
        "Index": obj(
            {
                "name": {"type": "string"},
                "version": {"type": "string", "const": API_VERSION},
                "description": {"type": "string"},
                "site": {"type": "string"},
                "attribution": {"type": "string"},
                "openapi": {"type": "string"},
                "methods": array({"type": "string"}),
                "rate_limits": {"type": "object", "required": list(index["rate_limits"])},
                "regions": array({"type": "string", "enum": list(REGIONS)}),
                "games": array({"type": "string", "enum": list(GAMES)}),
                "endpoints": array(
                    obj(
                        {
                            "method": {"type": "string"},
                            "name": {"type": "string", "enum": [e["name"] for e in ENDPOINTS]},
                            "path": {"type": "string"},
                            "cache_max_age": {"type": "integer", "minimum": 0},
                            "parameters": array({"type": "object", "required": ["name", "in", "type"]}),
                            "description": {"type": "string"},
                            "example": {"type": "string"},
                            "rate_limit_per_minute": {"type": "integer", "minimum": 1},
                            "live_lookup_limits": obj(
                                {"per_client_per_minute": {"type": "integer"}, "global_per_minute": {"type": "integer"}}
                            ),
                            "fields": {
                                "type": "object",
                                "additionalProperties": {"type": "string"},
                                "description": "Short guide to the fields of the answer.",
                            },
                        },
                        required=[
                            "method",
                            "name",
                            "path",
                            "cache_max_age",
                            "parameters",
                            "description",
                            "example",
                            "rate_limit_per_minute",
                        ],
                        closed=False,
                    )
                ),
                "errors": array(
                    obj(
                        {
                            "code": ref("schemas", "ErrorCode"),
                            "status": {"type": "integer"},
                            "meaning": {"type": "string"},
                        }
                    )
                ),
            },
            closed=False,
        ),
    }
    for name, data_schema in DATA_SCHEMAS.items():
        schemas[data_schema + "Envelope"] = obj(
            {
                "success": {"type": "boolean", "const": True},
                "meta": ref("schemas", "Meta"),
                "data": ref("schemas", data_schema),
            }
        )
    return schemas


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


def _json(schema: dict, example=None) -> dict:
    media = {"schema": schema}
    if example is not None:
        media["example"] = example
    return {"application/json": media}


# --- operations -----------------------------------------------------------------------
def _camel(code: str) -> str:
    return "".join(part.capitalize() for part in code.split("_"))


def shared_response(shared: dict, name: str, build) -> dict:
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


def responses_for(endpoint: dict, method: str, shared: dict) -> dict:
    """The responses of one GET or HEAD operation (HEAD: the same without bodies)."""
    name = endpoint["name"]
    body = method == "get"
    responses: dict = {}
    if name == "openapi":
        ok_schema = {
            "type": "object",
            "required": ["openapi", "info", "paths"],
            "description": "An OpenAPI 3.1 document (served as is, not in the envelope).",
        }
    else:
        ok_schema = ref("schemas", DATA_SCHEMAS[name] + "Envelope")
    ok = {
        "description": f"Success. `Cache-Control: public, max-age={endpoint['cache_max_age']}`"
        + (" (30 for a profile fetched live)." if name == "player" else ".")
        + ("" if body else " No body."),
        "headers": headers_for("200", method, True),
    }
    if body:
        ok["content"] = _json(ok_schema)
    responses["200"] = ok
    responses["304"] = shared_response(
        shared,
        "NotModified",
        lambda: {
            "description": "Not modified: the `If-None-Match` ETag matches; no body.",
            "headers": headers_for("304", method, True),
        },
    )
    codes = list(ENDPOINT_CODES[name]) + list(COMMON_CODES)
    by_status: dict[int, list[str]] = {}
    for code in codes:
        by_status.setdefault(ERROR_CODES[code][0], []).append(code)
    for status in sorted(by_status):
        responses[str(status)] = error_response(shared, by_status[status], method)
    return responses


def operation(endpoint: dict, method: str, limit: int, shared: dict) -> dict:
    name = endpoint["name"]
    op_id = OPERATION_IDS[name]
    description = endpoint["description"]
    if method == "head":
        description = "Like GET, with the same status and headers but no body."
    op = {
        "operationId": ("get" if method == "get" else "head") + op_id,
        "summary": SUMMARIES[name] + (" (headers only)" if method == "head" else ""),
        "description": description,
        "tags": [TAGS[name]],
        "parameters": [openapi_parameter(p) for p in endpoint["parameters"]] + [IF_NONE_MATCH],
        "responses": responses_for(endpoint, method, shared),
        "x-rate-limit-per-minute": limit,
        "x-cache-max-age": endpoint["cache_max_age"],
    }
    if "live_lookup_limits" in endpoint:
        op["x-live-lookup-limits"] = copy.deepcopy(endpoint["live_lookup_limits"])
        op["description"] += (
            f" Live lookups are limited to {LIVE_PER_CLIENT} per minute per client and "
            f"{LIVE_GLOBAL} per minute in total (429 `rate_limited_global`)."
        )
    if method == "get":
        op["x-example-request"] = endpoint["example"]
    return op


def options_operation(endpoint: dict, shared: dict) -> dict:
    return {
        "operationId": "options" + OPERATION_IDS[endpoint["name"]],
        "summary": "CORS preflight",
        "description": "Answers browser preflights: 204 with the allowed methods and headers. Not rate limited "
        "(hence no `x-rate-limit-per-minute`).",
        "tags": [TAGS[endpoint["name"]]],
        "parameters": [preflight_parameter(p) for p in endpoint["parameters"] if p["in"] == "path"],
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


def relative_path(path: str) -> str:
    """Catalogue paths carry the prefix; the document's paths are relative to servers[0]."""
    assert path.startswith(PREFIX)
    return path[len(PREFIX) :] or "/"


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
`X-RateLimit-Limit/Remaining/Reset`; 429 answers carry `Retry-After`. `ETag` is computed from `data` only, so
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


def openapi_document(config) -> dict:
    """The OpenAPI 3.1 document for this configuration (limits scaled as the index scales them)."""
    index = index_document(config)
    limits = {entry["name"]: entry["rate_limit_per_minute"] for entry in index["endpoints"]}
    paths, shared = {}, {}
    for endpoint in ENDPOINTS:
        limit = limits[endpoint["name"]]
        paths[relative_path(endpoint["path"])] = {
            "summary": SUMMARIES[endpoint["name"]],
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
def _serialized(config) -> tuple[str, str]:
    body = ujson.dumps(openapi_document(config), ensure_ascii=False, escape_forward_slashes=False)
    etag = '"' + hashlib.blake2b(body.encode(), digest_size=12).hexdigest() + '"'
    return body, etag


class OpenAPIHandler(BaseHandler):
    """Serves the document raw (no envelope) with the usual headers, ETag and 304."""

    bucket = "openapi"
    needs_database = False
    cache_max_age = 300

    async def get(self):
        body, self._data_etag = _serialized(self.config)
        self.finish(body)


routes = [
    (PREFIX + r"/openapi\.json", OpenAPIHandler),
]
