"""Prometheus metrics of one process (prometheus_client), rendered for /metrics."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

if TYPE_CHECKING:  # types only: the gauges' sources are handed in (server/compose/wiring.py)
    from prometheus_client.metrics_core import Metric

    from server.api.ratelimit import RateLimiter
    from server.services.registry import Services
    from server.upstream.budget import UpstreamBudget
    from store.store import Store

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Metrics:
    """Counters and histograms updated as things happen, plus gauges read at scrape time.

    Each instance has its own registry (tests build many applications in one process).
    """

    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "statsapi_http_requests",
            "HTTP requests answered, by endpoint and status.",
            ["endpoint", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "statsapi_http_request_duration_seconds",
            "Time to answer, by endpoint.",
            ["endpoint"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.jobs = Counter(
            "statsapi_job_runs",
            "Background job runs, by job and outcome (ok, failed).",
            ["job", "outcome"],
            registry=self.registry,
        )
        self.db_commands = Histogram(
            "statsapi_database_command_duration_seconds",
            "Database commands as the driver saw them, by command and outcome.",
            ["command", "outcome"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self._sources: list[Callable[[], list]] = []
        self.registry.register(_Snapshot(self._sources))
        self._request_children: dict[tuple[str, int], tuple[Any, Any]] = {}

    def observe_request(self, endpoint: str, status: int, seconds: float) -> None:
        # The labelled children are looked up once (labels() takes a lock and builds a key per call:
        # a measurable share of a replayed answer's cost).
        children = self._request_children.get((endpoint, status))
        if children is None:
            children = self._request_children[(endpoint, status)] = (
                self.requests.labels(endpoint, str(status)),
                self.latency.labels(endpoint),
            )
        children[0].inc()
        children[1].observe(seconds)

    def observe_job(self, job: str, ok: bool) -> None:
        self.jobs.labels(job, "ok" if ok else "failed").inc()

    def observe_command(self, command: str, ok: bool, seconds: float) -> None:
        self.db_commands.labels(command, "ok" if ok else "failed").observe(seconds)

    def add_source(self, source: Callable[[], list]) -> None:
        """A callable returning metric families, read at every scrape (live state: budgets, health)."""
        self._sources.append(source)

    def render(self) -> bytes:
        return generate_latest(self.registry)


class _Snapshot:
    """A collector over the registered sources."""

    def __init__(self, sources: list):
        self._sources = sources

    def collect(self) -> Iterator[Metric]:
        for source in self._sources:
            yield from source()

    def describe(self) -> list[Metric]:
        return []


def upstream_families(budget: UpstreamBudget) -> list:
    """The upstream budget: requests and refusals by caller, rate, queue."""
    status = budget.status()
    sent = CounterMetricFamily("statsapi_upstream_requests", "Upstream requests sent, by caller.", labels=["caller"])
    for caller, count in sorted(budget.sent_by_caller.items()):
        sent.add_metric([caller], count)
    refused = CounterMetricFamily(
        "statsapi_upstream_refusals", "Upstream REQUEST_LIMIT_EXCEEDED answers, by caller.", labels=["caller"]
    )
    for caller, count in sorted(budget.refused_by_caller.items()):
        refused.add_metric([caller], count)
    rate = GaugeMetricFamily("statsapi_upstream_effective_rate", "Requests per second this process may send now.")
    rate.add_metric([], status["effective_per_second"])
    queued = GaugeMetricFamily("statsapi_upstream_queued", "Upstream requests waiting for a slot.")
    queued.add_metric([], sum(status["queued"].values()))
    return [sent, refused, rate, queued]


def limiter_families(limiter: RateLimiter) -> list:
    status = limiter.status()
    rejected = CounterMetricFamily(
        "statsapi_rate_limit_rejections", "Requests refused with 429, by bucket.", labels=["bucket"]
    )
    for bucket, count in sorted(limiter.rejections.items()):
        rejected.add_metric([bucket], count)
    failures = CounterMetricFamily("statsapi_rate_counter_flush_failures", "Rate-counter flushes that failed.")
    failures.add_metric([], status["flush_failures"])
    lag = GaugeMetricFamily(
        "statsapi_rate_counter_flush_lag_seconds", "How long flushes have failed or left counters behind."
    )
    lag.add_metric([], status["flush_lag_seconds"])
    pending = GaugeMetricFamily("statsapi_rate_counter_pending_keys", "Counters not yet in the database.")
    pending.add_metric([], status["pending_keys"])
    return [rejected, failures, lag, pending]


def database_families(store: Store) -> list:
    up = GaugeMetricFamily("statsapi_database_up", "1 while the driver's heartbeats succeed.")
    up.add_metric([], 1.0 if store.database_up() else 0.0)
    return [up]


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
    return families
