"""The API index at /api/v1: every endpoint, its parameters, limits and every error code."""

from __future__ import annotations

from handlers.base import BaseHandler
from server.errors import ERROR_CODES
from server.ratelimit import (
    ENDPOINT_LIMITS,
    LIVE_GLOBAL,
    LIVE_PER_CLIENT,
    WINDOW_SECONDS,
)
from store.constants import GAMES, REGIONS

PREFIX = "/api/v1"
DEMO_ACCOUNT = 500000001
DEMO_CLAN = 500000

_ACCOUNT = {"name": "account_id", "in": "path", "type": "integer", "minimum": 1, "maximum": 2**63 - 1, "required": True}
_CLAN = {"name": "clan_id", "in": "path", "type": "integer", "minimum": 1, "maximum": 2**63 - 1, "required": True}
_REGION = {"name": "region", "in": "path", "type": "string", "enum": list(REGIONS), "required": True}

ENDPOINTS = [
    {
        "name": "index",
        "path": PREFIX,
        "cache_max_age": 300,
        "parameters": [],
        "description": "This index: every endpoint, its parameters and limits, every error code.",
        "example": PREFIX,
    },
    {
        "name": "player",
        "path": PREFIX + "/player/{account_id}/{region}",
        "cache_max_age": 300,
        "parameters": [_ACCOUNT, _REGION],
        "description": "Player profile with WN8, WN7 and efficiency. Served from the cache (at most "
        "1 h old); a profile not cached is fetched live (live_fetched: true, "
        "ratings.available: false) and its ratings follow seconds later.",
        "example": f"{PREFIX}/player/{DEMO_ACCOUNT}/eu",
        "fields": {
            "account_id, region, nickname, clan_id": "identity and clan (clan_id null without a clan)",
            "created_at, last_battle_time, updated_at": "unix times from the upstream",
            "statistics": "battles, wins, losses, draws, win_rate (%), avg_damage, avg_frags, avg_spotted, "
            "avg_defence (dropped capture points), avg_capture, avg_xp (per battle), survival_rate "
            "(%), hit_rate (%), average_tier (battle-weighted)",
            "ratings": "available, wn8, wn8_color (scale label), wn7, efficiency, calculated_at (unix), "
            "expected_values_version (XVM table date)",
            "cached_at": "unix time the profile was stored (at most ~1 h old)",
            "live_fetched": "true when fetched live for this request (then ratings.available is false)",
        },
        "live_lookup_limits": {"per_client_per_minute": LIVE_PER_CLIENT, "global_per_minute": LIVE_GLOBAL},
    },
    {
        "name": "history",
        "path": PREFIX + "/player/{account_id}/{region}/history",
        "cache_max_age": 300,
        "parameters": [
            _ACCOUNT,
            _REGION,
            {"name": "days", "in": "query", "type": "integer", "minimum": 1, "maximum": 400, "default": 30},
        ],
        "description": "Daily snapshots (UTC days) of the last `days` days plus 7, 30 and 90 day deltas. "
        "404 no_history when no snapshot exists.",
        "fields": {
            "snapshots[]": "date, battles, wins, damage_dealt, frags, spotted, xp (career totals that day), "
            "win_rate, avg_damage, wn8, wn7, efficiency (null on days without ratings)",
            "deltas.7d / 30d / 90d": "null without two snapshots in the period, else from, to (the earliest "
            "snapshot inside the period and the newest), battles, wins, win_rate, "
            "avg_damage, avg_frags, avg_xp over those battles, wn8_change, win_rate_change",
            "days, first_date, last_date, snapshot_count, latest": "the window and the newest snapshot",
        },
        "example": f"{PREFIX}/player/{DEMO_ACCOUNT}/eu/history?days=30",
    },
    {
        "name": "clan",
        "path": PREFIX + "/clan/{clan_id}/{region}",
        "cache_max_age": 300,
        "parameters": [_CLAN, _REGION],
        "description": "Clan details, ratings, members and averages over the member profiles we hold "
        "(members.profiles_measured says how many). Never fetched live: a clan enters the "
        "cache through the hourly refresh job (clans named by cached players, or seeded by "
        "the operator with scripts/add_clans.py); 404 clan_not_cached until then.",
        "fields": {
            "clan_id, tag, name, members_count, region": "identity (members_count from the upstream)",
            "ratings.elo_10 / elo_8": "Elo ratings (integer, null when the upstream has none)",
            "ratings.skirmish_battles / skirmish_win_rate": "skirmishes summed over tiers; win rate in percent, 2 decimals",
            "members.profiles_measured": "member profiles the averages use (members with a profile and >= 1 battle)",
            "members.avg_win_rate / avg_damage / avg_battles": "means of per-member career values",
            "member_list[]": "account_id, name, role, joined_at (unix)",
            "cached_at": "unix time the clan was stored; older data stays served when the upstream fails",
        },
        "example": f"{PREFIX}/clan/{DEMO_CLAN}/eu",
    },
    {
        "name": "weekly",
        "path": PREFIX + "/clan/{clan_id}/{region}/weekly",
        "cache_max_age": 300,
        "parameters": [_CLAN, _REGION],
        "description": "Weekly clan digest: period {start: today-7, end: today} (UTC). Each member's week is "
        "the difference between their first and last snapshot in the period; members without two "
        "snapshots are listed in not_measured. WN8 and win-rate top lists rank members with at "
        "least 10 battles that week; by_wn8 ranks by WN8 at the end of the period.",
        "fields": {
            "period": "start, end (UTC dates), days",
            "activity": "members, measured_members, active_members (>= 1 battle), inactive[], not_measured[], "
            "battles_per_member, joined[], left[]",
            "top": "min_battles, by_battles[], by_wn8[] (wn8, wn8_change, battles), by_win_rate[] (top 5 each)",
            "aggregates": "battles, wins, win_rate, avg_damage of the week, members_avg_change "
            "{win_rate, avg_damage, avg_battles: {start, end, change}}",
            "clan_cached_at, computed_at": "unix times",
        },
        "example": f"{PREFIX}/clan/{DEMO_CLAN}/eu/weekly",
    },
    {
        "name": "online",
        "path": PREFIX + "/online",
        "cache_max_age": 60,
        "parameters": [],
        "description": "Current player counts per game and region (per server, sampled each minute), "
        "totals, and the measured peak today (UTC) and all time.",
        "fields": {
            "games.<game>": "players (sum over regions), minute, complete (all regions sampled that minute), "
            "peak.today / peak.all_time {players, minute}, regions.<region> {players, minute, "
            "age_seconds, servers[] {server, players}, failing, peak}",
            "newest_sample": "minute and age_seconds of the newest sample",
        },
        "example": f"{PREFIX}/online",
    },
    {
        "name": "online_history",
        "path": PREFIX + "/online/history",
        "cache_max_age": 300,
        "parameters": [
            {"name": "game", "in": "query", "type": "string", "enum": list(GAMES), "default": "wot"},
            {"name": "region", "in": "query", "type": "string", "enum": list(REGIONS) + ["all"], "default": "all"},
            {"name": "days", "in": "query", "type": "integer", "minimum": 1, "maximum": 400, "default": 7},
        ],
        "description": "Daily series (UTC) of player counts: peak with its minute, minimum, average, "
        "sample count. Days without samples have samples: 0 and null values. region=all "
        "counts only minutes where all three regions were sampled.",
        "fields": {"series[]": "date, samples, peak, peak_minute, min, avg"},
        "example": f"{PREFIX}/online/history?game=wot&region=all&days=30",
    },
    {
        "name": "status",
        "path": PREFIX + "/status",
        "cache_max_age": 10,
        "parameters": [],
        "description": "Service health, database and upstream state, background jobs, cache timestamps.",
        "fields": {
            "health": "ok, or degraded when the database is unreachable, a job's last run failed, or "
            "rate-counter flushes fail or lag (rate_limiter.degraded)",
            "database": "reachable, ping_ms",
            "upstream": "last_success, last_failure, requests, failures; budget: rate_per_second "
            "(configured), processes_sharing, share_per_second, effective_per_second, "
            "requests_last_minute(_by_caller), queued, request_limit_exceeded {count, last}, "
            "live_queue_wait_ms {p50, p99}; expected_values: version, tanks, rows_skipped",
            "jobs.<name>": "last_run, ok, message, last_success, last_failure",
            "caches": "newest_player, newest_clan, newest_online_sample (unix)",
            "version, uptime_seconds, leader, rate_limiter": "process facts",
        },
        "example": f"{PREFIX}/status",
    },
    {
        "name": "openapi",
        "path": PREFIX + "/openapi.json",
        "cache_max_age": 300,
        "parameters": [],
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
            "identified_by": "client IP address; IPv6 clients by their /64 network "
            "(X-Forwarded-For only from trusted proxies)",
            "window": f"sliding estimate over {WINDOW_SECONDS} s windows; the previous window counts at "
            "most limit - 1, so Retry-After is at most 60 s and a request sent then is admitted",
            "headers": [
                "RateLimit-Policy",
                "RateLimit",
                "X-RateLimit-Limit",
                "X-RateLimit-Remaining",
                "X-RateLimit-Reset (seconds)",
                "Retry-After (429 and upstream 503 only)",
            ],
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
    needs_database = False
    cache_max_age = 300

    async def get(self):
        self.respond(index_document(self.config))


routes = [
    (PREFIX + r"/?", IndexHandler),
]
