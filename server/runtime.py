"""build_services: wires the upstream client, services and background jobs for one process."""

from __future__ import annotations

import time

from server.clans import ClanService
from server.jobs import JobRunner
from server.metrics import (
    Metrics,
    database_families,
    limiter_families,
    process_families,
    upstream_families,
)
from server.online import OnlineService
from server.period import PeriodService
from server.players import PlayerService
from server.ratings_source import RatingsSource
from server.retention import INTERVAL_SECONDS as RETENTION_INTERVAL
from server.retention import Retention
from server.search import PlayerSearch
from server.services import Services
from server.tracker import Tracker
from server.upstream import UpstreamClient
from server.upstream_budget import UpstreamBudget


async def build_services(config, store, limiter, clock=time.time, metrics: Metrics | None = None) -> Services:
    # One budget per process, shared by every caller (split between processes by run_server).
    budget = UpstreamBudget(config.upstream_rps)
    upstream = UpstreamClient(config.application_id, base_url=config.upstream_base_url, budget=budget)
    location = config.expected_values
    if location is None and config.upstream_base_url:
        location = config.upstream_base_url.rstrip("/") + "/wn8exp.json"
    ratings_source = RatingsSource(upstream, location, clock=clock)
    metrics = metrics or Metrics()
    period = PeriodService(store, ratings_source, clock=clock)
    jobs = JobRunner(store, clock=clock, metrics=metrics)
    # Every process takes part in the tracker's daily pass (slices are claimed in the database).
    tracker = Tracker(store, upstream, ratings_source, clock=clock, owner=jobs.owner, track_days=config.track_days)
    jobs.add_loop(tracker.run)
    players = PlayerService(store, upstream, ratings_source, limiter, clock=clock, period=period, tracker=tracker)
    clans = ClanService(store, upstream, players, clock=clock, tracker=tracker)
    online = OnlineService(store, upstream, clock=clock)
    search = PlayerSearch(store.tracked, upstream, limiter, clock=clock)
    metrics.add_source(lambda: upstream_families(budget))
    metrics.add_source(lambda: limiter_families(limiter))
    metrics.add_source(lambda: database_families(store))
    jobs.add("expected_values", 86400, ratings_source.refresh_expected)
    jobs.add("player_refresh_ahead", 60, players.refresh_ahead)
    jobs.add("online_sampler", 60, online.sample)
    jobs.add("online_daily", 600, online.materialise_days)
    jobs.add("retention", RETENTION_INTERVAL, Retention(store, clock=clock).run)
    jobs.add("clan_refresh", 3600, clans.refresh)
    jobs.add("clan_weekly_digest", 3600, clans.build_digests)
    services = Services(
        upstream=upstream,
        players=players,
        period=period,
        search=search,
        clans=clans,
        online=online,
        jobs=jobs,
        ratings_source=ratings_source,
        metrics=metrics,
        tracker=tracker,
    )
    metrics.add_source(lambda: process_families(services))
    return services
