"""The service objects handlers use, gathered in one container passed through settings."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

from server.serving.answers import AnswerCache
from server.serving.cards import CardMemo

if TYPE_CHECKING:  # types only: the services import nothing from here at run time
    from server.jobs.backups import ScheduledBackups
    from server.jobs.runner import JobRunner
    from server.services.clans import ClanService
    from server.services.dumps import DumpService
    from server.services.expected import ExpectedValuesService
    from server.services.history import HistoryService
    from server.services.leaderboards import LeaderboardService
    from server.services.online import OnlineService
    from server.services.panel import PanelService
    from server.services.players import PlayerService
    from server.services.roster import RosterService
    from server.services.search import PlayerSearch
    from server.services.sessions import SessionService, Watcher
    from server.services.status import StatusService
    from server.services.tank_stats import TankStatsService
    from server.services.tracker import Tracker
    from server.services.vehicles import VehicleService
    from server.serving.metrics import Metrics
    from server.upstream.client import UpstreamClient

ServiceT = TypeVar("ServiceT")


class Supervised(Protocol):
    """The embedded database's supervisor as /status reads it (server.compose.embedded_db, composition layer)."""

    def status(self) -> dict: ...


def _wired(service: ServiceT | None, name: str) -> ServiceT:
    if service is None:
        raise RuntimeError(f"Services.{name} is not wired: this Services was built without it")
    return service


class Services:
    """Typed, so a reader (or mypy) can follow `self.services.players.profile` to its definition.

    A service is None only in tests and scripts that build part of the service: reading a missing
    one through its property raises RuntimeError; the status methods below report it as absent.
    """

    def __init__(
        self,
        upstream: UpstreamClient | None = None,
        players: PlayerService | None = None,
        clans: ClanService | None = None,
        online: OnlineService | None = None,
        jobs: JobRunner | None = None,
        ratings_source: ExpectedValuesService | None = None,
        metrics: Metrics | None = None,
        history: HistoryService | None = None,
        search: PlayerSearch | None = None,
        tracker: Tracker | None = None,
        status: StatusService | None = None,
        answers: AnswerCache | None = None,
        tank_stats: TankStatsService | None = None,
        backups: ScheduledBackups | None = None,
        leaderboards: LeaderboardService | None = None,
        sessions: SessionService | None = None,
        watcher: Watcher | None = None,
        dumps: DumpService | None = None,
        vehicles: VehicleService | None = None,
        roster: RosterService | None = None,
        panel: PanelService | None = None,
    ):
        self.started_at = time.time()
        # Rendered answers replayed by the HTTP layer; the services drop what they write.
        self.answers = answers if answers is not None else AnswerCache()
        self.cards = CardMemo()  # rendered cards by ETag (server/serving/cards)
        self.inflight = 0  # requests being handled, so shutdown can let them finish
        self.ratings_source = ratings_source
        self._upstream = upstream
        self._players = players
        self._history = history  # history, period figures and the tanks endpoint
        self._search = search  # nickname search
        self._clans = clans
        self._online = online
        self._jobs = jobs
        self.tracker = tracker  # the daily pass
        self.metrics = metrics  # optional: the early 429 reads it with getattr(..., None)
        self._status = status  # /status's database view
        self._tank_stats = tank_stats  # /tanks/stats and /tank
        self.backups = backups  # scheduled backups (--backup-dir); None in partial builds
        self._leaderboards = leaderboards  # /leaderboard/players
        self._sessions = sessions  # /player/{account_id}/{region}/session
        self.watcher = watcher  # measures the watched accounts every minute
        self._dumps = dumps  # the daily bulk files (/dumps)
        self._vehicles = vehicles  # /vehicles and /tanks/strength
        self._roster = roster  # /roster
        self.panel = panel  # each realm's random panel (its job, its figures in /status)
        # Set by run_server: the embedded database's supervisor (None with an external MongoDB)
        # and the HTTP server's connection figures.
        self.embedded_database: Supervised | None = None
        self.connection_stats: Callable[[], dict] | None = None

    @property
    def upstream(self) -> UpstreamClient:
        return _wired(self._upstream, "upstream")

    @property
    def players(self) -> PlayerService:
        return _wired(self._players, "players")

    @property
    def roster(self) -> RosterService:
        return _wired(self._roster, "roster")

    @property
    def history(self) -> HistoryService:
        return _wired(self._history, "history")

    @property
    def search(self) -> PlayerSearch:
        return _wired(self._search, "search")

    @property
    def clans(self) -> ClanService:
        return _wired(self._clans, "clans")

    @property
    def online(self) -> OnlineService:
        return _wired(self._online, "online")

    @property
    def jobs(self) -> JobRunner:
        return _wired(self._jobs, "jobs")

    @property
    def expected_values(self) -> ExpectedValuesService:
        """The ratings' inputs per region, and /expected-values."""
        return _wired(self.ratings_source, "ratings_source")

    @property
    def tank_stats(self) -> TankStatsService:
        return _wired(self._tank_stats, "tank_stats")

    @property
    def leaderboards(self) -> LeaderboardService:
        return _wired(self._leaderboards, "leaderboards")

    @property
    def vehicles(self) -> VehicleService:
        return _wired(self._vehicles, "vehicles")

    @property
    def dumps(self) -> DumpService:
        return _wired(self._dumps, "dumps")

    @property
    def sessions(self) -> SessionService:
        return _wired(self._sessions, "sessions")

    @property
    def status(self) -> StatusService:
        return _wired(self._status, "status")

    def upstream_health_reasons(self) -> list[str]:
        """Why the upstream side makes /status degraded: configuration answers, the expected-values table."""
        reasons = self._upstream.health_reasons() if self._upstream is not None else []
        source = self.ratings_source
        if source is not None and hasattr(source, "health_reasons"):
            reasons += source.health_reasons()
        return reasons

    def backup_status(self) -> dict | None:
        return self.backups.status() if self.backups is not None else None

    def backup_health_reasons(self) -> list[str]:
        return self.backups.health_reasons() if self.backups is not None else []

    def upstream_status(self) -> dict:
        if self._upstream is None:
            return {"configured": False}
        status = self._upstream.status()
        # Each realm's part of the tracker's daily pass beside its rate and back-off.
        by_realm = (self.tracker_status().get("today") or {}).get("by_realm") or {}
        for realm, gate in status.get("realms", {}).items():
            gate["pass"] = by_realm.get(realm)
        if self.ratings_source is not None:
            status["expected_values"] = self.ratings_source.status()
        return status

    def watcher_status(self) -> dict:
        """The sessions' watcher: captures, upstream requests and its share of each realm; the streams."""
        if self.watcher is None:
            return {"enabled": False}
        streams = self._sessions.stream_status() if self._sessions is not None else {"open": 0, "accounts": 0}
        return {**self.watcher.status(), "streams": streams}

    def close_streams(self) -> None:
        """Shutdown: the session streams end (their clients reconnect to another process)."""
        if self._sessions is not None:
            self._sessions.close_streams()

    def tracker_status(self) -> dict:
        """The daily pass: tracked accounts, today's progress, ETA, requests spent, slices claimed here."""
        if self.tracker is None:
            return {"enabled": False}
        return self.tracker.status()

    async def panel_status(self, database_up: bool = True) -> dict:
        """Each realm's random panel: size, when drawn, its upstream requests a day (the last figures
        read while the database is down)."""
        if self.panel is None:
            return {"enabled": False}
        return {"enabled": self.panel.size > 0, **await self.panel.status(database_up)}

    def database_up(self) -> bool:
        """The database answered the driver's last heartbeat (True when no status service is wired)."""
        return self._status is None or self._status.database_up()

    def is_leader(self) -> bool:
        return bool(self._jobs and self._jobs.is_leader)

    async def close(self) -> None:
        for service in (self._players, self._clans, self._online, self.tracker):
            close = getattr(service, "close", None)
            if close is not None:
                await close()
