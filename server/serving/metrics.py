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

if TYPE_CHECKING:  # types only: the gauges' sources are handed in (server/compose/gauges.py)
    from prometheus_client.metrics_core import Metric

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Metrics:
    """Counters and histograms updated as things happen, plus gauges read at scrape time.

    Each instance has its own registry (tests build many applications in one process).
    """

    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = self._counter(
            "statsapi_http_requests", "HTTP requests answered, by endpoint and status.", ["endpoint", "status"]
        )
        self.latency = self._durations(
            "statsapi_http_request_duration_seconds", "Time to answer, by endpoint.", ["endpoint"]
        )
        self.jobs = self._counter(
            "statsapi_job_runs", "Background job runs, by job and outcome (ok, failed).", ["job", "outcome"]
        )
        self.db_commands = self._durations(
            "statsapi_database_command_duration_seconds",
            "Database commands as the driver saw them, by command and outcome.",
            ["command", "outcome"],
        )
        self._sources: list[Callable[[], list]] = []
        self.registry.register(_Snapshot(self._sources))
        self._request_children: dict[tuple[str, int], tuple[Any, Any]] = {}

    def _counter(self, name: str, documentation: str, labels: list[str]) -> Counter:
        return Counter(name, documentation, labels, registry=self.registry)

    def _durations(self, name: str, documentation: str, labels: list[str]) -> Histogram:
        """A histogram of seconds (LATENCY_BUCKETS)."""
        return Histogram(name, documentation, labels, buckets=LATENCY_BUCKETS, registry=self.registry)

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
