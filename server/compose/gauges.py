"""The /metrics gauges read at scrape time from the objects server/compose/wiring.py wired together."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

if TYPE_CHECKING:
    from server.jobs.backups import ScheduledBackups
    from server.services.registry import Services
    from server.serving.ratelimit import RateLimiter
    from server.upstream.budget import UpstreamBudget
    from server.upstream.client import UpstreamClient
    from store.store import Store


def _by_label(
    family: type[CounterMetricFamily] | type[GaugeMetricFamily],
    name: str,
    documentation: str,
    label: str,
    values: Mapping[str, float],
) -> CounterMetricFamily | GaugeMetricFamily:
    """A family of one sample per key of `values` (in key order), the key as its `label`."""
    metric = family(name, documentation, labels=[label])
    for key, value in sorted(values.items()):
        metric.add_metric([key], value)
    return metric


def upstream_families(budget: UpstreamBudget, client: UpstreamClient | None = None) -> list:
    """The upstream budget: requests and refusals by caller, rate, queue; per realm: rate,
    congestion, back-off; configuration answers by code."""
    status = budget.status()
    families = [
        _by_label(
            CounterMetricFamily,
            "statsapi_upstream_requests",
            "Upstream requests sent, by caller.",
            "caller",
            budget.sent_by_caller,
        ),
        _by_label(
            CounterMetricFamily,
            "statsapi_upstream_refusals",
            "Upstream REQUEST_LIMIT_EXCEEDED answers, by caller.",
            "caller",
            budget.refused_by_caller,
        ),
        GaugeMetricFamily(
            "statsapi_upstream_effective_rate",
            "Requests per second this process may send now.",
            value=status["effective_per_second"],
        ),
        GaugeMetricFamily(
            "statsapi_upstream_queued", "Upstream requests waiting for a slot.", value=sum(status["queued"].values())
        ),
    ]
    if client is None:
        return families
    gates = {realm: (gate, gate.status()) for realm, gate in client.realms.gates.items()}
    return [
        *families,
        _by_label(
            GaugeMetricFamily,
            "statsapi_upstream_realm_rate",
            "Requests per second this process may send to a realm now.",
            "realm",
            {realm: gate_status["rate_per_second"] for realm, (_, gate_status) in gates.items()},
        ),
        _by_label(
            CounterMetricFamily,
            "statsapi_upstream_realm_congestions",
            "Timeouts, connection errors and 5xx from a realm (the CDN's throttle), since start.",
            "realm",
            {realm: gate.congestions for realm, (gate, _) in gates.items()},
        ),
        _by_label(
            GaugeMetricFamily,
            "statsapi_upstream_realm_timeouts_last_minute",
            "Congestions of a realm in the last minute.",
            "realm",
            {realm: gate_status["timeouts_last_minute"] for realm, (_, gate_status) in gates.items()},
        ),
        _by_label(
            GaugeMetricFamily,
            "statsapi_upstream_realm_backoff_seconds",
            "Seconds until background work sends to a realm again.",
            "realm",
            {realm: gate_status["backoff"]["seconds_left"] for realm, (_, gate_status) in gates.items()},
        ),
        _by_label(
            CounterMetricFamily,
            "statsapi_upstream_config_errors",
            "Configuration-class upstream answers (DEMO_APPLICATION_IS_BLOCKED, INVALID_IP_ADDRESS, ...), by code.",
            "code",
            client.config_errors_by_code,
        ),
        CounterMetricFamily(
            "statsapi_upstream_invalid_ids",
            "Ids the upstream called invalid, isolated by splitting their lists.",
            value=client.invalid_ids,
        ),
    ]


def limiter_families(limiter: RateLimiter) -> list:
    status = limiter.status()
    return [
        _by_label(
            CounterMetricFamily,
            "statsapi_rate_limit_rejections",
            "Requests refused with 429, by bucket.",
            "bucket",
            limiter.rejections,
        ),
        CounterMetricFamily(
            "statsapi_rate_counter_flush_failures", "Rate-counter flushes that failed.", value=status["flush_failures"]
        ),
        GaugeMetricFamily(
            "statsapi_rate_counter_flush_lag_seconds",
            "How long flushes have failed or left counters behind.",
            value=status["flush_lag_seconds"],
        ),
        GaugeMetricFamily(
            "statsapi_rate_counter_pending_keys", "Counters not yet in the database.", value=status["pending_keys"]
        ),
    ]


def database_families(store: Store) -> list:
    up = GaugeMetricFamily("statsapi_database_up", "1 while the driver's heartbeats succeed.")
    up.add_metric([], 1.0 if store.database_up() else 0.0)
    return [up]


def backup_families(backups: ScheduledBackups) -> list:
    """Scheduled backups (--backup-dir): those this process wrote or failed to write, and the newest
    complete one in the directory (whichever process wrote it)."""
    status = backups.status()
    if status is None:
        return []
    written = CounterMetricFamily(
        "statsapi_backups",
        "Scheduled backups this process attempted, by outcome (ok: written whole; failed).",
        labels=["outcome"],
    )
    for outcome, count in sorted(backups.outcomes.items()):
        written.add_metric([outcome], count)
    families: list = [written]
    last = status["last_success"]
    if last is not None:
        at = GaugeMetricFamily(
            "statsapi_backup_last_success_timestamp_seconds",
            "Unix time the newest complete backup in --backup-dir finished.",
        )
        at.add_metric([], last["at"])
        size = GaugeMetricFamily("statsapi_backup_last_success_bytes", "Bytes of the newest complete backup's files.")
        size.add_metric([], last["bytes"])
        families += [at, size]
    return families


def process_families(services: Services) -> list:
    """What run_server attaches to the services: the embedded database and the connections."""
    families = []
    embedded = services.embedded_database
    if embedded is not None:
        status = embedded.status()
        restarts = CounterMetricFamily(
            "statsapi_embedded_database_restarts", "Restarts of the embedded database after it exited."
        )
        restarts.add_metric([], status["restarts"])
        running = GaugeMetricFamily("statsapi_embedded_database_running", "1 while the child process runs.")
        running.add_metric([], 1.0 if status["state"] == "running" else 0.0)
        families += [restarts, running]
    if services.connection_stats is not None:
        stats = services.connection_stats()
        open_ = GaugeMetricFamily("statsapi_connections_open", "Open client connections of this process.")
        open_.add_metric([], stats["open"])
        refused = CounterMetricFamily(
            "statsapi_connections_refused", "Connections closed at once: over the total or per-client cap."
        )
        refused.add_metric([], stats["refused"])
        timeouts = CounterMetricFamily(
            "statsapi_connection_head_timeouts", "Connections closed without a complete request head in time."
        )
        timeouts.add_metric([], stats["head_timeouts"])
        families += [open_, refused, timeouts]
    answers = services.answers.status()
    lookups = CounterMetricFamily(
        "statsapi_answer_cache_lookups", "Requests looked up in the answer cache, by outcome.", labels=["outcome"]
    )
    lookups.add_metric(["hit"], answers["hits"])
    lookups.add_metric(["miss"], answers["misses"])
    size = GaugeMetricFamily("statsapi_answer_cache_bytes", "Bytes the answer cache holds (bodies and overhead).")
    size.add_metric([], answers["bytes"])
    families += [lookups, size]
    if services.watcher is not None:
        watching = services.watcher.status()
        captures = CounterMetricFamily("statsapi_watcher_captures", "States of watched accounts captured.")
        captures.add_metric([], watching["captures"])
        sent = CounterMetricFamily("statsapi_watcher_upstream_requests", "Upstream requests of the sessions' watcher.")
        sent.add_metric([], watching["upstream_requests"])
        families += [captures, sent]
    if services.backups is not None:
        families += backup_families(services.backups)
    by_realm = ((services.tracker_status().get("today") or {}).get("by_realm")) or {}
    if by_realm:
        visited = GaugeMetricFamily(
            "statsapi_tracker_realm_visited_today",
            "Accounts of a realm the daily pass visited today.",
            labels=["realm"],
        )
        eta = GaugeMetricFamily(
            "statsapi_tracker_realm_eta_seconds",
            "Seconds until a realm's part of today's pass should end at its own pace (estimate).",
            labels=["realm"],
        )
        for realm, figures in sorted(by_realm.items()):
            visited.add_metric([realm], figures["visited"])
            if figures["eta_seconds"] is not None:
                eta.add_metric([realm], figures["eta_seconds"])
        families += [visited, eta]
    return families
