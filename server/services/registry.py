"""The service objects handlers use, gathered in one container passed through settings."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # types only: the services import nothing from here at run time
    from server.api.metrics import Metrics
    from server.jobs.runner import JobRunner
    from server.services.clans import ClanService
    from server.services.history import HistoryService
    from server.services.online import OnlineService
    from server.services.players import PlayerService
    from server.services.search import PlayerSearch
    from server.services.status import StatusService
    from server.services.tracker import Tracker
    from server.upstream.expected_values import RatingsSource
    from server.upstream.interface import Upstream


class Supervised(Protocol):
    """The embedded database's supervisor as /status reads it (server.compose.embedded_db, composition layer)."""

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
        history: HistoryService | None = None,
        search: PlayerSearch | None = None,
        tracker: Tracker | None = None,
        status: StatusService | None = None,
    ):
        self.started_at = time.time()
        self.inflight = 0  # requests being handled, so shutdown can let them finish
        self.ratings_source = ratings_source
        self.upstream = upstream
        self.players = players
        self.history = history  # history, period figures and the tanks endpoint
        self.search = search  # nickname search
        self.clans = clans
        self.online = online
        self.jobs = jobs
        self.tracker = tracker  # the daily pass
        self.metrics = metrics
        self.status = status  # /status's database view
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

    def database_up(self) -> bool:
        """The database answered the driver's last heartbeat (True when no status service is wired)."""
        return self.status is None or self.status.database_up()

    def is_leader(self) -> bool:
        return bool(self.jobs and self.jobs.is_leader)

    async def close(self) -> None:
        for service in (self.players, self.clans, self.online):
            close = getattr(service, "close", None)
            if close is not None:
                await close()
