"""The API index at /api/v1: every endpoint, its parameters, limits and every error code."""
from __future__ import annotations

from handlers.base import ERROR_CODES, GAMES, REGIONS, BaseHandler
from server.ratelimit import ENDPOINT_LIMITS, LIVE_GLOBAL, LIVE_PER_CLIENT, WINDOW_SECONDS

PREFIX = "/api/v1"
DEMO_ACCOUNT = 500000001
DEMO_CLAN = 500000

_ACCOUNT = {"name": "account_id", "in": "path", "type": "integer", "minimum": 1, "required": True}
_CLAN = {"name": "clan_id", "in": "path", "type": "integer", "minimum": 1, "required": True}
_REGION = {"name": "region", "in": "path", "type": "string", "enum": list(REGIONS), "required": True}

ENDPOINTS = [
    {
        "name": "index", "path": PREFIX, "cache_max_age": 300, "parameters": [],
        "description": "This index: every endpoint, its parameters and limits, every error code.",
        "example": PREFIX,
    },
    {
        "name": "player", "path": PREFIX + "/player/{account_id}/{region}", "cache_max_age": 300,
        "parameters": [_ACCOUNT, _REGION],
        "description": "Player profile with WN8, WN7 and efficiency. Served from the cache (at most "
                       "1 h old); a profile not cached is fetched live (live_fetched: true, "
                       "ratings.available: false) and its ratings follow seconds later.",
        "example": f"{PREFIX}/player/{DEMO_ACCOUNT}/eu",
        "live_lookup_limits": {"per_client_per_minute": LIVE_PER_CLIENT, "global_per_minute": LIVE_GLOBAL},
    },
    {
        "name": "history", "path": PREFIX + "/player/{account_id}/{region}/history", "cache_max_age": 300,
        "parameters": [_ACCOUNT, _REGION, {"name": "days", "in": "query", "type": "integer",
                                            "minimum": 1, "maximum": 400, "default": 30}],
        "description": "Daily snapshots (UTC days) of the last `days` days plus 7, 30 and 90 day deltas.",
        "example": f"{PREFIX}/player/{DEMO_ACCOUNT}/eu/history?days=30",
    },
    {
        "name": "clan", "path": PREFIX + "/clan/{clan_id}/{region}", "cache_max_age": 300,
        "parameters": [_CLAN, _REGION],
        "description": "Clan details, ratings, members and averages over the member profiles we hold "
                       "(members.profiles_measured says how many). Never fetched live.",
        "example": f"{PREFIX}/clan/{DEMO_CLAN}/eu",
    },
    {
        "name": "weekly", "path": PREFIX + "/clan/{clan_id}/{region}/weekly", "cache_max_age": 300,
        "parameters": [_CLAN, _REGION],
        "description": "Weekly clan digest over the last 7 UTC days: activity, top lists, aggregates.",
        "example": f"{PREFIX}/clan/{DEMO_CLAN}/eu/weekly",
    },
    {
        "name": "online", "path": PREFIX + "/online", "cache_max_age": 60, "parameters": [],
        "description": "Current player counts per game and region (per server, sampled each minute), "
                       "totals, and the measured peak today (UTC) and all time.",
        "example": f"{PREFIX}/online",
    },
    {
        "name": "online_history", "path": PREFIX + "/online/history", "cache_max_age": 300,
        "parameters": [
            {"name": "game", "in": "query", "type": "string", "enum": list(GAMES), "default": "wot"},
            {"name": "region", "in": "query", "type": "string", "enum": list(REGIONS) + ["all"], "default": "all"},
            {"name": "days", "in": "query", "type": "integer", "minimum": 1, "maximum": 400, "default": 7},
        ],
        "description": "Daily series (UTC) of player counts: peak with its minute, minimum, average, "
                       "sample count. Days without samples have samples: 0 and null values.",
        "example": f"{PREFIX}/online/history?game=wot&region=all&days=30",
    },
    {
        "name": "status", "path": PREFIX + "/status", "cache_max_age": 10, "parameters": [],
        "description": "Service health, database and upstream state, background jobs, cache timestamps.",
        "example": f"{PREFIX}/status",
    },
    {
        "name": "openapi", "path": PREFIX + "/openapi.json", "cache_max_age": 300, "parameters": [],
        "description": "The OpenAPI 3.1 document of this API.",
        "example": f"{PREFIX}/openapi.json",
    },
]


def index_document(config) -> dict:
    endpoints = []
    for endpoint in ENDPOINTS:
        entry = {"method": "GET", **endpoint}
        entry["rate_limit_per_minute"] = max(1, int(ENDPOINT_LIMITS[endpoint["name"]] * config.rate_limit_scale))
        endpoints.append(entry)
    return {
        "name": "statsapi",
        "version": "v1",
        "description": "Public read-only statistics API: player profiles with WN8/WN7/efficiency, "
                       "history, clans, weekly digests, player counts. GET only; no key needed.",
        "site": config.site_url,
        "attribution": config.attribution,
        "openapi": PREFIX + "/openapi.json",
        "methods": ["GET", "HEAD", "OPTIONS"],
        "rate_limits": {
            "identified_by": "client IP address (X-Forwarded-For only from trusted proxies)",
            "window": f"sliding estimate over {WINDOW_SECONDS} s windows",
            "headers": ["RateLimit-Policy", "RateLimit", "X-RateLimit-Limit", "X-RateLimit-Remaining",
                        "X-RateLimit-Reset (seconds)", "Retry-After (429 and upstream 503 only)"],
            "live_lookups": {"per_client_per_minute": LIVE_PER_CLIENT, "global_per_minute": LIVE_GLOBAL},
        },
        "regions": list(REGIONS),
        "games": list(GAMES),
        "endpoints": endpoints,
        "errors": [
            {"code": code, "status": status, "meaning": meaning} for code, (status, meaning) in ERROR_CODES.items()
        ],
    }


class IndexHandler(BaseHandler):
    bucket = "index"
    cache_max_age = 300

    async def get(self):
        self.respond(index_document(self.config))


routes = [
    (PREFIX + r"/?", IndexHandler),
]
