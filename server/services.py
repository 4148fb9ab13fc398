"""The service objects handlers use, gathered in one container passed through settings."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # types only: the services import nothing from here at run time
    from server.clans import ClanService
    from server.interfaces import Upstream
    from server.jobs import JobRunner
    from server.metrics import Metrics
    from server.online import OnlineService
    from server.period import PeriodService
    from server.players import PlayerService
    from server.ratings_source import RatingsSource
    from server.search import PlayerSearch
    from server.tracker import Tracker


class Supervised(Protocol):
    """The embedded database's supervisor as /status reads it (server.embedded_db, composition layer)."""

    def status(self) -> dict: ...


class Services:
    """Typed, so a reader (or mypy) can follow `self.services.players.profile` to its definition.
    Each is None only in tests and scripts that build part of the service."""

    def __init__(
        self,
        upstream: Upstream | None = None,
        players: PlayerService | None = None,
        clans: ClanService | None = None,
        online: OnlineService | None = None,
        jobs: JobRunner | None = None,
        ratings_source: RatingsSource | None = None,
        metrics: Metrics | None = None,
        period: PeriodService | None = None,
        search: PlayerSearch | None = None,
        tracker: Tracker | None = None,
    ):
        self.started_at = time.time()
        self.inflight = 0  # requests being handled, so shutdown can let them finish
        self.status_cache: dict = {}  # /status's database view, shared by concurrent requests
        self.ratings_source = ratings_source
        self.upstream = upstream
        self.players = players
        self.period = period  # recents and the tanks endpoint
        self.search = search  # nickname search
        self.clans = clans
        self.online = online
        self.jobs = jobs
        self.tracker = tracker  # the daily pass
        self.metrics = metrics
        # Set by run_server: the embedded database's supervisor (None with an external MongoDB)
        # and the HTTP server's connection figures.
        self.embedded_database: Supervised | None = None
        self.connection_stats: Callable[[], dict] | None = None

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
