"""The endpoints about the API itself: the index, the service status and the OpenAPI document."""

from __future__ import annotations

from server.api.catalogue.figures import HOT_COPY_SECONDS
from server.api.catalogue.model import Endpoint

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
