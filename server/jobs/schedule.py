"""The background jobs the leader runs: one table, each interval read from the module that owns the job."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from server.jobs import backups, retention
from server.services import clans, official, online, panel, players, population
from server.upstream import expected_values

if TYPE_CHECKING:
    from server.jobs.backups import ScheduledBackups
    from server.jobs.retention import Retention
    from server.services.clans import ClanService
    from server.services.expected import ExpectedValuesService
    from server.services.official import OfficialFigures
    from server.services.online import OnlineService
    from server.services.panel import PanelService
    from server.services.players import PlayerService
    from server.services.population import PopulationService

JobRun = Callable[[int], Awaitable[str | None]]


@dataclasses.dataclass(frozen=True)
class JobTargets:
    """What the scheduled jobs run on, as server/compose/wiring.py built it."""

    ratings_source: ExpectedValuesService
    players: PlayerService
    online: OnlineService
    clans: ClanService
    retention: Retention
    population: PopulationService
    backups: ScheduledBackups
    official: OfficialFigures
    panel: PanelService


@dataclasses.dataclass(frozen=True)
class Scheduled:
    name: str  # the job's name in /status's `jobs` and in the job_runs collection
    every: float  # seconds between runs
    run: Callable[[JobTargets], JobRun]  # which method of what was built runs it


SCHEDULE: tuple[Scheduled, ...] = (
    Scheduled("expected_values", expected_values.REFRESH_SECONDS, lambda t: t.ratings_source.refresh_expected),
    Scheduled("player_refresh_ahead", players.REFRESH_AHEAD_EVERY, lambda t: t.players.refresh_ahead),
    Scheduled("online_sampler", online.SAMPLE_EVERY, lambda t: t.online.sample),
    Scheduled("online_daily", online.MATERIALISE_EVERY, lambda t: t.online.materialise_days),
    Scheduled("retention", retention.INTERVAL_SECONDS, lambda t: t.retention.run),
    Scheduled("clan_refresh", clans.REFRESH_EVERY, lambda t: t.clans.refresh),
    Scheduled("clan_weekly_digest", clans.DIGEST_EVERY, lambda t: t.clans.build_digests),
    Scheduled("tank_statistics", population.BUILD_EVERY, lambda t: t.population.build),
    Scheduled("backup", backups.INTERVAL_SECONDS, lambda t: t.backups.run),
    Scheduled("official_thresholds", official.FETCH_EVERY, lambda t: t.official.fetch),
    Scheduled("panel", panel.REFRESH_EVERY, lambda t: t.panel.run),
)
