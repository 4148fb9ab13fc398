"""The endpoints about the API itself: the index, the service status and the OpenAPI document."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from server.contract.catalogue.bands import BANDED_RATINGS
from server.contract.catalogue.figures import (
    HOT_COPY_SECONDS,
)
from server.contract.catalogue.model import Endpoint
from server.contract.catalogue.shapes import (
    DATE,
    NUMBER_OR_NULL,
    array,
    nullable,
    obj,
    ref,
)
from server.contract.config import API_VERSION
from store.constants import GAMES, REGIONS, SPEND_KEYS

# What the API is, in one line: the index's `description`, the site's opening line and its meta
# description. Name here what a new endpoint family adds.
API_DESCRIPTION = (
    "Public read-only statistics API for World of Tanks: player profiles with WN8, WN7 and efficiency, "
    "daily history and per-tank breakdowns, live sessions, clans and weekly digests, tank statistics, "
    "marks of excellence and tier lists, leaderboards, battle rosters, the vehicle catalogue, WN8 "
    "expected values, player counts and daily bulk files; answers as JSON, CSV and shareable cards. "
    "GET only; no key needed."
)

INDEX = Endpoint(
    name="index",
    path="",
    summary="API index: endpoints, parameters, limits, error codes",
    description="This index: every endpoint, its parameters and limits, every error code.",
    tag="meta",
    operation_id="Index",
    limit_per_minute=120,  # SPEC 8.1 leaves the index's own limit to us
    cache_max_age=300,
    answer_seconds=HOT_COPY_SECONDS,
    example="",
    schema="Index",
    needs_database=False,
)
STATUS = Endpoint(
    name="status",
    path="/status",
    summary="Service health and cache timestamps",
    description="Service health, database and upstream state, background jobs, cache timestamps.",
    tag="meta",
    operation_id="Status",
    limit_per_minute=60,
    cache_max_age=10,
    answer_seconds=1.0,  # uptime_seconds counts seconds; the database view is reused 2 s anyway
    example="/status",
    schema="Status",
    fields={
        "health": "ok, or degraded when the database is unreachable, a job's last run failed, "
        "rate-counter flushes fail or lag (rate_limiter.degraded), the embedded database is not running, "
        "the database cannot write ('database cannot write: <reason> (since <UTC time>)'), "
        "or it holds 80 % of the per-tank records at which it was measured to keep its read goals, "
        "or (with --backup-dir) no backup succeeded in the last two days",
        "health_reasons": "why health is degraded, one sentence each (empty when ok)",
        "backups": "null without --backup-dir; else directory, keep, count (complete backups there), "
        "last_success {at, name, documents, bytes, seconds} (null before the first), last_failure "
        "{at, name, reason, seconds} (the last failed run, null when none failed) and running "
        "{collection, documents} while this process writes one; health is degraded when no backup "
        "succeeded in two days",
        "demo": "null when no demo seeding (--seed-demo) ever ran on this database; else state (seeding, "
        "ready or failed), phase (what it does now), done and total (the steps of that phase), percent "
        "(of the whole seeding, 100 once ready), started_at and finished_at (ISO 8601 UTC, null while "
        "seeding); written at most once a second while it seeds",
        "watcher": "the sessions' watcher in this process: captures (states captured since start), "
        "upstream_requests (since start), requests_last_minute per realm within share_per_minute, "
        "failed_ticks, streams {open, accounts} (session streams open here, the accounts they follow) "
        "({enabled: false} without it)",
        "volume": "tank_records: per-tank records stored (a kept count)",
        "database": "reachable, ping_ms; writable: false while the database cannot store (a write refused "
        "for a full disk, quota or read-only storage, or on the embedded database under 16 MiB free beside "
        "its 24 MiB reserve); write_error {reason, since (unix)} or null",
        "upstream": "last_success, last_failure, requests, failures; budget: rate_per_second "
        "(configured), processes_sharing, share_per_second, effective_per_second, "
        "requests_last_minute(_by_caller), queued, request_limit_exceeded {count, last}, "
        "live_queue_wait_ms {p50, p99}; expected_values: version, tanks, rows_skipped",
        "jobs.<name>": "last_run, ok, message, last_success, last_failure",
        "caches": "newest_player, newest_clan, newest_online_sample (unix)",
        "version, uptime_seconds, leader, rate_limiter": "process facts",
        "api_version": "the API version of the paths (/api/<api_version>)",
        "tracker": "enabled, track_days, slices, tracked (accounts now), today {day, visited, total, "
        "slices_finished, eta_seconds, requests {account_info, tanks_stats}, records, record_bytes}, "
        "this_process {slices_claimed, spent_today}",
        "panel": "enabled, target (active accounts wanted per realm), active_days; by_realm.<region>: size "
        "(frame accounts that played in the last active_days), target, frame (accounts drawn), drawn_at, "
        "refreshed_at (unix), requests_a_day {tracking, probing, total}",
        "embedded_database": "null on MongoDB; else the supervised SecantusDB child: state, restarts, "
        "restart_attempts, last_restart, last_exit {at, code}",
        "connections": "this process's client connections: open, max, max_per_client, waiting_for_head, "
        "refused, shed_idle, head_timeouts, heads_too_large, accept_pauses",
        "online_sampler": "per game/region: last_success, last_failure (unix)",
        "answer_cache": "this process's rendered answers: entries, bytes, max_bytes, hits, misses, "
        f"hit_rate, evictions, dropped_on_write (an answer is replayed at most {HOT_COPY_SECONDS:g} s, "
        "1 s for /status, and dropped when this process writes its data)",
    },
    needs_database=False,  # it reports the database's state instead of failing with it
)
OPENAPI = Endpoint(
    name="openapi",
    path="/openapi.json",
    summary="This OpenAPI 3.1 document",
    description="The OpenAPI 3.1 document of this API.",
    tag="meta",
    operation_id="OpenAPIDocument",
    limit_per_minute=120,
    cache_max_age=300,
    example="/openapi.json",
    needs_database=False,
)

# The `data` schemas of this module's endpoints (components/schemas), by their `schema` names.
SCHEMAS: dict[str, dict] = {
    "Status": obj(
        {
            "health": {"type": "string", "enum": ["ok", "degraded"]},
            "health_reasons": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Why health is degraded (empty when ok).",
            },
            "version": {"type": "string", "description": "Server software version."},
            "api_version": {"type": "string", "const": API_VERSION},
            "uptime_seconds": {"type": "integer", "minimum": 0},
            "database": obj(
                {
                    "reachable": {"type": "boolean"},
                    "ping_ms": NUMBER_OR_NULL,
                    "error": {"type": "string"},
                    "writable": {"type": "boolean"},
                    "write_error": {
                        "oneOf": [
                            obj({"reason": {"type": "string"}, "since": {"type": "integer"}}),
                            {"type": "null"},
                        ]
                    },
                },
                required=["reachable", "ping_ms", "writable", "write_error"],
            ),
            "upstream": obj(
                {
                    "configured": {"type": "boolean"},
                    "last_success": NUMBER_OR_NULL,
                    "last_failure": NUMBER_OR_NULL,
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
                                {"count": {"type": "integer", "minimum": 0}, "last": NUMBER_OR_NULL}
                            ),
                            "live_queue_wait_ms": obj(
                                {
                                    "p50": NUMBER_OR_NULL,
                                    "p99": NUMBER_OR_NULL,
                                    "samples": {"type": "integer", "minimum": 0},
                                }
                            ),
                        }
                    ),
                    "realms": {
                        "type": "object",
                        "description": "Per realm (eu, na, asia): its cap under the CDN's per-address throttle, "
                        "the rate in use after congestion, timeouts, back-off.",
                        "additionalProperties": obj(
                            {
                                "cap_per_second": {
                                    "type": "number",
                                    "description": "Configured cap (--upstream-realm-rps), all processes.",
                                },
                                "share_per_second": {"type": "number", "description": "This process's share."},
                                "rate_per_second": {
                                    "type": "number",
                                    "description": "What this process sends at most now (halved on each "
                                    "congestion, recovering 5 % every 10 s).",
                                },
                                "slowed_down": {"type": "boolean"},
                                "timeouts_last_minute": {
                                    "type": "integer",
                                    "minimum": 0,
                                    "description": "Timeouts, connection errors and 5xx in the last minute.",
                                },
                                "congestions": {"type": "integer", "minimum": 0, "description": "Since start."},
                                "last_congestion": NUMBER_OR_NULL,
                                "backoff": obj(
                                    {
                                        "active": {"type": "boolean"},
                                        "seconds_left": {"type": "number", "minimum": 0},
                                        "streak": {
                                            "type": "integer",
                                            "minimum": 0,
                                            "description": "Congestions since the realm last answered.",
                                        },
                                    },
                                    description="Background work waits this out; live lookups answer 503 "
                                    "upstream_unavailable with Retry-After meanwhile.",
                                ),
                                "in_flight": {"type": "integer", "minimum": 0},
                                "queued": {"type": "integer", "minimum": 0},
                                "requests_last_minute": {"type": "integer", "minimum": 0},
                                "pass": {
                                    "type": ["object", "null"],
                                    "description": "The realm's part of today's tracker pass "
                                    "(tracker.today.by_realm), null before its first visit today.",
                                },
                            },
                            required=[
                                "cap_per_second",
                                "share_per_second",
                                "rate_per_second",
                                "slowed_down",
                                "timeouts_last_minute",
                                "congestions",
                                "last_congestion",
                                "backoff",
                                "in_flight",
                                "queued",
                                "requests_last_minute",
                            ],
                        ),
                    },
                    "configuration_errors": array(
                        obj(
                            {
                                "code": {"type": "string", "description": "e.g. DEMO_APPLICATION_IS_BLOCKED"},
                                "scope": {
                                    "type": "string",
                                    "description": "application (every request) or the method's path",
                                },
                                "method": {"type": "string"},
                                "advice": {"type": "string", "description": "What the operator should do."},
                                "since": {"type": "number"},
                                "last_seen": {"type": "number"},
                                "count": {"type": "integer", "minimum": 1},
                                "next_try_in_seconds": {"type": "integer", "minimum": 0},
                            }
                        ),
                        description="Configuration-class upstream answers in force (health degraded); "
                        "nothing is sent in their scope until the next try.",
                    ),
                    "invalid_ids": {
                        "type": "integer",
                        "minimum": 0,
                        "description": "Ids the upstream called invalid, isolated by splitting their lists.",
                    },
                    "user_agent": {"type": "string", "description": "Sent with every upstream request."},
                    "expected_values": obj(
                        {
                            "version": nullable("string"),
                            "tanks": {"type": "integer", "minimum": 0},
                            "rows_skipped": {"type": "integer", "minimum": 0},
                            "loaded_at": NUMBER_OR_NULL,
                            "last_error": nullable("string"),
                            "url": nullable("string", description="Where the table is downloaded from."),
                            "checked_at": {
                                **NUMBER_OR_NULL,
                                "description": "Last successful check of the download (a 304 counts).",
                            },
                            "refused": {
                                "type": ["object", "null"],
                                "properties": {"reason": {"type": "string"}, "at": {"type": "number"}},
                                "description": "The last download refused (unparsable, lost more than 5 % of "
                                "the rows, another format): the table in use stays; null once a download passes.",
                            },
                            "saved": {
                                "type": ["object", "null"],
                                "properties": {
                                    "path": {"type": "string"},
                                    "version": nullable("string"),
                                    "url": nullable("string"),
                                },
                                "description": "The last good table kept in the data directory (what a "
                                "restart without network rates with).",
                            },
                            "source": {"type": "string", "enum": ["table", "computed"]},
                            "computed": {
                                "type": "object",
                                "additionalProperties": nullable("string"),
                                "description": "Per region: the computed table this process rates with (null: none yet).",
                            },
                        },
                        required=["version", "tanks", "rows_skipped", "loaded_at", "last_error"],
                    ),
                },
                required=["configured"],
            ),
            "tracker": obj(
                {
                    "enabled": {"type": "boolean", "description": "False when this process runs no tracker."},
                    "track_days": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "An account stays tracked this many days after its last lookup "
                        "(or while its clan is cached).",
                    },
                    "slices": {"type": "integer", "minimum": 1, "description": "Parts of the daily pass."},
                    "tracked": {"type": "integer", "minimum": 0, "description": "Accounts tracked now."},
                    "today": obj(
                        {
                            "day": DATE,
                            "visited": {"type": "integer", "minimum": 0},
                            "total": {"type": "integer", "minimum": 0},
                            "slices_finished": {"type": "integer", "minimum": 0},
                            "eta_seconds": nullable("integer", minimum=0),
                            "requests": obj(
                                {
                                    "account_info": {"type": "integer", "minimum": 0},
                                    "tanks_stats": {"type": "integer", "minimum": 0},
                                    "account_wtr": {"type": "integer", "minimum": 0},
                                }
                            ),
                            "records": {"type": "integer", "minimum": 0},
                            "record_bytes": {"type": "integer", "minimum": 0},
                            "by_realm": {
                                "type": "object",
                                "description": "Per realm: today's visits and upstream requests, what is "
                                "left (estimated from the realm's share of today's visits) and when its "
                                "part of the pass should end at the realm's own pace.",
                                "additionalProperties": obj(
                                    {
                                        "visited": {"type": "integer", "minimum": 0},
                                        "requests": {"type": "integer", "minimum": 0},
                                        "remaining_estimate": {"type": "integer", "minimum": 0},
                                        "eta_seconds": nullable("integer", minimum=0),
                                    }
                                ),
                            },
                        },
                        required=[
                            "day",
                            "visited",
                            "total",
                            "slices_finished",
                            "eta_seconds",
                            "requests",
                            "records",
                            "record_bytes",
                        ],
                        description="Today's pass over every process.",
                    ),
                    "this_process": obj(
                        {
                            "slices_claimed": array({"type": "integer", "minimum": 0}),
                            "spent_today": obj({key: {"type": "integer", "minimum": 0} for key in SPEND_KEYS}),
                        }
                    ),
                },
                required=["enabled"],
                description="The daily pass that measures every tracked account (see the README's Tracker).",
            ),
            "panel": obj(
                {
                    "enabled": {"type": "boolean", "description": "False with --panel-size 0."},
                    "target": {"type": "integer", "minimum": 0, "description": "Active accounts wanted per realm."},
                    "active_days": {"type": "integer", "minimum": 1},
                    "by_realm": {
                        "type": "object",
                        "description": "Per realm: the panel as its last refresh left it.",
                        "additionalProperties": obj(
                            {
                                "size": {
                                    "type": "integer",
                                    "minimum": 0,
                                    "description": "Panel accounts that played in the last active_days days.",
                                },
                                "target": {"type": "integer", "minimum": 0},
                                "frame": {
                                    "type": "integer",
                                    "minimum": 0,
                                    "description": "Accounts drawn (active or not), each measured daily.",
                                },
                                "drawn_at": NUMBER_OR_NULL,
                                "refreshed_at": NUMBER_OR_NULL,
                                "requests_a_day": obj(
                                    {
                                        "tracking": {"type": "integer", "minimum": 0},
                                        "probing": {"type": "integer", "minimum": 0},
                                        "total": {"type": "integer", "minimum": 0},
                                    },
                                    description="Upstream requests a day: the tracker's visits of the frame "
                                    "(account/info, tanks/stats, account/wtr) and probing (average of the "
                                    "last 30 days).",
                                ),
                            }
                        ),
                    },
                },
                required=["enabled"],
                description="Each realm's random panel, the population of the server figures "
                '(docs/data.md, "The random panel").',
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
                    "last_flush": NUMBER_OR_NULL,
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
            "watcher": {
                "oneOf": [
                    obj({"enabled": {"type": "boolean", "const": False}}),
                    obj(
                        {
                            "captures": {"type": "integer", "minimum": 0},
                            "upstream_requests": {"type": "integer", "minimum": 0},
                            "requests_last_minute": obj({r: {"type": "integer", "minimum": 0} for r in REGIONS}),
                            "share_per_minute": {"type": "integer", "minimum": 1},
                            "failed_ticks": {"type": "integer", "minimum": 0},
                            "streams": obj(
                                {
                                    "open": {"type": "integer", "minimum": 0},
                                    "accounts": {"type": "integer", "minimum": 0},
                                }
                            ),
                        }
                    ),
                ],
                "description": "The watcher of the sessions' accounts in this process.",
            },
            "demo": {
                "oneOf": [
                    {"type": "null"},
                    obj(
                        {
                            "state": {"type": "string", "enum": ["seeding", "ready", "failed"]},
                            "phase": {"type": "string"},
                            "done": {"type": "integer", "minimum": 0},
                            "total": {"type": "integer", "minimum": 0},
                            "percent": {"type": "number", "minimum": 0, "maximum": 100},
                            "started_at": {"type": "string", "format": "date-time"},
                            "finished_at": {"oneOf": [{"type": "null"}, {"type": "string", "format": "date-time"}]},
                        }
                    ),
                ],
                "description": "The demo seeding's progress (null when none ever ran here): the site shows "
                "a banner while it seeds.",
            },
            "backups": {
                "oneOf": [
                    {"type": "null"},
                    obj(
                        {
                            "directory": {"type": "string"},
                            "keep": {"type": "integer", "minimum": 1},
                            "count": {"type": "integer", "minimum": 0},
                            "last_success": {
                                "oneOf": [
                                    {"type": "null"},
                                    obj(
                                        {
                                            "at": {"type": "integer"},
                                            "name": {"type": "string"},
                                            "documents": {"type": "integer", "minimum": 0},
                                            "bytes": {"type": "integer", "minimum": 0},
                                            "seconds": {"type": "number", "minimum": 0},
                                        }
                                    ),
                                ]
                            },
                            "last_failure": {
                                "oneOf": [
                                    {"type": "null"},
                                    obj(
                                        {
                                            "at": {"type": "integer"},
                                            "name": {"type": "string"},
                                            "reason": {"type": "string"},
                                            "seconds": {"type": "number", "minimum": 0},
                                        }
                                    ),
                                ],
                                "description": "The last failed run (kept after later successes and across "
                                "restarts): when, the backup it was writing, why and how long it had run.",
                            },
                            "running": {
                                "oneOf": [
                                    {"type": "null"},
                                    obj({"collection": {"type": "string"}, "documents": {"type": "integer"}}),
                                ]
                            },
                        }
                    ),
                ],
                "description": "Scheduled backups (--backup-dir); null when off.",
            },
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
                "additionalProperties": NUMBER_OR_NULL,
            },
            "volume": obj(
                {"tank_records": {"type": "integer", "minimum": 0}},
                description="Stored volume the embedded database's ceiling is measured in (kept "
                "counts); empty when the database is unreachable.",
                required=[],
            ),
            "online_sampler": {
                "type": "object",
                "description": 'Per game/region ("wot/eu"…): the '
                "sampler's last success and last failure (Unix "
                "time); empty when the database is unreachable.",
                "additionalProperties": obj({"last_success": NUMBER_OR_NULL, "last_failure": NUMBER_OR_NULL}),
            },
            "answer_cache": obj(
                {
                    "entries": {"type": "integer", "minimum": 0},
                    "bytes": {"type": "integer", "minimum": 0},
                    "max_bytes": {"type": "integer", "minimum": 0},
                    "hits": {"type": "integer", "minimum": 0},
                    "misses": {"type": "integer", "minimum": 0},
                    "hit_rate": NUMBER_OR_NULL,
                    "evictions": {"type": "integer", "minimum": 0},
                    "dropped_on_write": {"type": "integer", "minimum": 0},
                },
                description="This process's cache of rendered answers (replayed for the same path "
                "and query within the endpoint's answer_seconds, dropped when this process writes "
                "their data).",
            ),
        }
    ),
}


def index_schema(index: Mapping[str, Any], names: Iterable[str]) -> dict:
    """The Index schema: `index` is the index document (the keys of its rate_limits), `names` the endpoints'."""
    return obj(
        {
            "name": {"type": "string"},
            "version": {"type": "string", "const": API_VERSION},
            "description": {"type": "string"},
            "site": {"type": "string"},
            "attribution": {"type": "string"},
            "openapi": {"type": "string"},
            "methods": array({"type": "string"}),
            "changelog": obj(
                {
                    "release": {"type": "string", "description": "The release this server runs."},
                    "document": {"type": "string", "description": "Each release's changes, in the source."},
                }
            ),
            "rate_limits": obj(
                {
                    "identified_by": {"type": "string"},
                    "window": {"type": "string"},
                    "headers": array({"type": "string"}),
                    "live_lookups": obj(
                        {"per_client_per_minute": {"type": "integer"}, "global_per_minute": {"type": "integer"}}
                    ),
                },
                required=list(index["rate_limits"]),
                closed=False,
            ),
            "regions": array({"type": "string", "enum": list(REGIONS)}),
            "games": array({"type": "string", "enum": list(GAMES)}),
            "rating_bands": {
                "type": "object",
                "description": "Per rating (wn8, wtr, win_rate, efficiency): its scale's source and its bands from "
                "the lowest up, each {band, color, from (inclusive; null for the lowest), below (exclusive; null "
                "for the top)}. A row's bands.<rating> names one of them.",
                "required": list(BANDED_RATINGS),
                "additionalProperties": obj(
                    {
                        "source": {"type": "string"},
                        "bands": array(
                            obj(
                                {
                                    "band": {"type": "string"},
                                    "color": {"type": "string"},
                                    "from": nullable("number"),
                                    "below": nullable("number"),
                                }
                            )
                        ),
                    }
                ),
            },
            "endpoints": array(
                obj(
                    {
                        "method": {"type": "string"},
                        "name": {"type": "string", "enum": list(names)},
                        "path": {"type": "string"},
                        "cache_max_age": {"type": "integer", "minimum": 0},
                        "answer_seconds": {
                            "type": "number",
                            "minimum": 0,
                            "description": "How long a process replays a built answer to the same path "
                            "and query (meta.generated says when it was built); 0: built for every request.",
                        },
                        "parameters": array(
                            obj(
                                {
                                    "name": {"type": "string"},
                                    "in": {"type": "string", "enum": ["path", "query"]},
                                    "type": {"type": "string", "enum": ["integer", "string"]},
                                    "minimum": {"type": "integer"},
                                    "maximum": {"type": "integer"},
                                    "enum": array({"type": ["string", "integer"]}),
                                    "minLength": {"type": "integer", "minimum": 0},
                                    "maxLength": {"type": "integer", "minimum": 0},
                                    "pattern": {"type": "string"},
                                    "default": {"type": ["string", "integer"]},
                                    "required": {"type": "boolean"},
                                },
                                required=["name", "in", "type"],
                                closed=False,
                            )
                        ),
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
                        "batch": obj(
                            {
                                "param": {"type": "string"},
                                "most": {"type": "integer", "minimum": 1},
                                "ids_per_minute": {"type": "integer", "minimum": 1},
                                "bucket": {"type": "string"},
                            },
                            description="Present when a request naming many ids at once is counted per id.",
                        ),
                        "csv": obj(
                            {
                                "rows": {"type": "string", "description": "The list of `data` served as rows."},
                                "columns": array(
                                    {"type": "string"},
                                    description="The header row: dotted paths into a row (career.wn8).",
                                ),
                                "media_type": {"type": "string"},
                            },
                            description="Present when ?format=csv serves the answer's table as CSV.",
                        ),
                        "card": obj(
                            {
                                "formats": {
                                    "type": "object",
                                    "additionalProperties": {"type": "string"},
                                    "description": "Each card format (svg, png) and its media type.",
                                },
                                "sizes": {
                                    "type": "object",
                                    "additionalProperties": obj(
                                        {"width": {"type": "integer"}, "height": {"type": "integer"}}
                                    ),
                                    "description": "Each size= value and its pixels.",
                                },
                                "themes": array({"type": "string"}),
                                "figures": {"type": "string", "description": "The figures the card prints, in words."},
                            },
                            description="Present when ?format=svg|png draws the answer as a card.",
                        ),
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
    )


# This module's endpoints in the order the index and the OpenAPI document list them
# (server/contract/catalogue/__init__.py CATALOGUE); the index, listed first of all, is not among them.
ENDPOINTS: tuple[Endpoint, ...] = (
    STATUS,
    OPENAPI,
)
