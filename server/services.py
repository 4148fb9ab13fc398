"""The service objects handlers use, gathered in one container passed through settings."""

from __future__ import annotations

import time


class Services:
    def __init__(
        self,
        upstream=None,
        players=None,
        clans=None,
        online=None,
        jobs=None,
        ratings_source=None,
        metrics=None,
        period=None,
        search=None,
        tracker=None,
    ):
        self.started_at = time.time()
        self.inflight = 0  # requests being handled, so shutdown can let them finish
        self.status_cache: dict = {}  # /status's database view, shared by concurrent requests
        self.ratings_source = ratings_source
        self.upstream = upstream
        self.players = players
        self.period = period  # server.period.PeriodService (recents, the tanks endpoint)
        self.search = search  # server.search.PlayerSearch (nickname search)
        self.clans = clans
        self.online = online
        self.jobs = jobs
        self.tracker = tracker  # server.tracker.Tracker (the daily pass)
        self.metrics = metrics  # server.metrics.Metrics
        # Set by run_server: the embedded database's supervisor (None with an external MongoDB)
        # and the HTTP server's connection figures.
        self.embedded_database = None
        self.connection_stats = None

    def upstream_status(self) -> dict:
        if self.upstream is None:
            return {"configured": False}
        status = self.upstream.status()
        if self.ratings_source is not None:
            status["expected_values"] = self.ratings_source.status()
        return status

    def tracker_status(self) -> dict:
        """The daily pass: tracked accounts, today's progress, ETA, requests spent, slices claimed here."""
        if self.tracker is None:
            return {"enabled": False}
        return self.tracker.status()

    def is_leader(self) -> bool:
        return bool(self.jobs and self.jobs.is_leader)

    async def close(self) -> None:
        for service in (self.players, self.clans, self.online):
            close = getattr(service, "close", None)
            if close is not None:
                await close()
