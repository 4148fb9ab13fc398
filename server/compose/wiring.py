"""build_services: wires the upstream client, services and background jobs for one process."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from server.compose.gauges import database_families, limiter_families, process_families, upstream_families
from server.compose.storage_watch import StorageWatch
from server.contract.config import VERSION
from server.jobs.backups import ScheduledBackups
from server.jobs.retention import Retention
from server.jobs.runner import JobRunner
from server.jobs.schedule import SCHEDULE, JobTargets
from server.services.clans import ClanService
from server.services.dumps import DumpService
from server.services.encyclopedia import VehicleCatalogue
from server.services.expected import ExpectedValuesService
from server.services.history import HistoryService
from server.services.leaderboards import LeaderboardService
from server.services.official import OfficialFigures
from server.services.online import OnlineService
from server.services.panel import PanelService
from server.services.players import PlayerService
from server.services.population import PopulationService
from server.services.profile_ratings import ProfileRatings
from server.services.profile_views import ProfileViews
from server.services.registry import Services
from server.services.roster import RosterService
from server.services.search import PlayerSearch
from server.services.sessions import SessionService, Watcher
from server.services.status import StatusService
from server.services.tank_stats import TankStatsService
from server.services.tracker import Tracker
from server.services.vehicles import VehicleService
from server.serving.answers import AnswerCache
from server.serving.metrics import Metrics
from server.upstream.budget import UpstreamBudget
from server.upstream.client import UpstreamClient
from server.upstream.expected_values import RatingsSource
from server.upstream.realms import RealmGates

if TYPE_CHECKING:  # types only
    from server.contract.config import Config
    from server.serving.ratelimit import RateLimiter
    from store.store import Store


async def build_services(
    config: Config,
    store: Store,
    limiter: RateLimiter,
    clock: Callable[[], float] = time.time,
    metrics: Metrics | None = None,
) -> Services:
    # One budget per process, shared by every caller (split between processes by run_server).
    budget = UpstreamBudget(config.upstream_rps)
    upstream = UpstreamClient(
        config.application_id,
        base_url=config.upstream_base_url,
        budget=budget,
        realms=RealmGates(dict(config.upstream_realm_rps)),
        contact=config.upstream_contact or config.site_url,
    )
    location = config.expected_values
    if location is None and config.upstream_base_url:
        location = config.upstream_base_url.rstrip("/") + "/json/wg/wn8exp.json"
    # The loaded table, with each region's computed rows where it lacks them (or everywhere).
    ratings_source = ExpectedValuesService(
        store,
        RatingsSource(upstream, location, clock=clock, data_dir=config.data_dir),
        source=config.expected_values_source,
        clock=clock,
    )
    metrics = metrics or Metrics()
    # Rendered answers the HTTP layer replays; every service that writes drops what it wrote.
    answers = AnswerCache()
    official = OfficialFigures(store, upstream, clock=clock, on_write=answers.drop)
    catalogue = VehicleCatalogue(store, ratings_source, clock=clock)
    tank_stats = TankStatsService(
        store, ratings_source, clock=clock, on_write=answers.drop, official=official, catalogue=catalogue
    )
    leaderboards = LeaderboardService(store, on_write=answers.drop)
    history = HistoryService(
        store, ratings_source, clock=clock, tank_stats=tank_stats, leaderboards=leaderboards, official=official
    )
    jobs = JobRunner(store, clock=clock, metrics=metrics)
    # Every process takes part in the tracker's daily pass (slices are claimed in the database).
    tracker = Tracker(
        store,
        upstream,
        ratings_source,
        clock=clock,
        owner=jobs.owner,
        track_days=config.track_days,
        on_write=answers.drop,
    )
    jobs.add_loop(tracker.run)
    # A profile's ratings, one composition for a player's profile and a clan member's.
    profile_ratings = ProfileRatings(ratings_source, clock=clock)
    players = PlayerService(
        store,
        upstream,
        ratings_source,
        limiter,
        clock=clock,
        tracker=tracker,
        on_write=answers.drop,
        views=ProfileViews(tank_stats, leaderboards),  # a cached profile's standing and place
        ratings=profile_ratings,
    )
    clans = ClanService(
        store, upstream, players, clock=clock, tracker=tracker, on_write=answers.drop, ratings=profile_ratings
    )
    watcher = Watcher(store, upstream, clock=clock)
    sessions = SessionService(store, ratings_source, players, clock=clock, watcher=watcher, tracker=tracker)
    jobs.add_loop(watcher.run)
    online = OnlineService(store, upstream, clock=clock, on_write=answers.drop)
    search = PlayerSearch(store.tracked, upstream, limiter, clock=clock)
    metrics.add_source(lambda: upstream_families(budget, upstream))
    metrics.add_source(lambda: limiter_families(limiter))
    metrics.add_source(lambda: database_families(store))
    dumps = DumpService(config.dumps_directory, tank_stats, ratings_source, leaderboards, online, clock=clock)
    population = PopulationService(
        store,
        ratings_source,
        clock=clock,
        on_expected=ratings_source.forget,
        after_region=dumps.build,
        on_write=answers.drop,
    )
    backups = ScheduledBackups(
        store, config.backup_dir, config.backup_keep, writer=f"statsapi {VERSION}", duty=config.backup_duty, clock=clock
    )
    panel = PanelService(store, upstream, size=config.panel_size, clock=clock)
    targets = JobTargets(
        ratings_source, players, online, clans, Retention(store, clock=clock), population, backups, official, panel
    )
    for job in SCHEDULE:
        jobs.add(job.name, job.every, job.run(targets))
    services = Services(
        upstream=upstream,
        players=players,
        history=history,
        search=search,
        clans=clans,
        online=online,
        jobs=jobs,
        ratings_source=ratings_source,
        metrics=metrics,
        tracker=tracker,
        status=StatusService(store),
        answers=answers,
        tank_stats=tank_stats,
        backups=backups,
        leaderboards=leaderboards,
        sessions=sessions,
        watcher=watcher,
        dumps=dumps,
        vehicles=VehicleService(catalogue, tank_stats, ratings_source, official=official, clock=clock),
        roster=RosterService(store, upstream, ratings_source, limiter, clock=clock),
        panel=panel,
    )
    metrics.add_source(lambda: process_families(services))
    if config.embedded_database:
        # The embedded database's disk: reserve, held writes, restart after its engine failed
        # (server/compose/storage_watch.py); run_server sets services.embedded_database.
        jobs.add_loop(StorageWatch(store, lambda: services.embedded_database).run)
    return services
