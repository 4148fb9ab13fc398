"""Demo data through the real ingest path: the upstream client against the simulator, store code, jobs."""

from __future__ import annotations

import asyncio
import contextvars
import datetime as dt
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from server.contract.config import TRACK_DAYS
from server.services.population import PopulationService, newest_complete_day
from store.client import job_deadline
from store.constants import REGIONS

if TYPE_CHECKING:  # types only
    from tqdm import tqdm

    from server.services.expected import Ratings
    from server.services.players import PlayerService
    from server.services.registry import Services
    from server.upstream.interface import Upstream
    from store.store import Store

log = logging.getLogger("statsapi.demo")


class TimeTravelUpstream:
    """The real upstream client, asking the simulator for its data "as of" `now()` (`_sim_now`)."""

    def __init__(self, upstream: Upstream, now: Callable[[], float]) -> None:
        self._upstream = upstream
        self._now = now

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._upstream, name)
        if not callable(method) or name.startswith("_") or name in ("fetch_json_url", "fetch_url"):
            return method

        async def call(*args: Any, **kwargs: Any) -> Any:
            params = dict(kwargs.pop("params", None) or {})
            params["_sim_now"] = int(self._now())
            return await method(*args, params=params, **kwargs)

        return call


# Told each step of the seeding (phase, steps done, steps in it): the recorder of the progress
# /status shows (server/compose/demo_progress.py), set by entry.py for its seeding's task.
progress_listener: contextvars.ContextVar[Callable[[str, int, int], None] | None] = contextvars.ContextVar(
    "demo_progress_listener", default=None
)


class _Bar:
    """A phase's progress: a tqdm bar on the terminal (when tqdm is installed) and the listener."""

    def __init__(self, total: int, desc: str) -> None:
        self.total, self.desc, self.done = total, desc, 0
        self.listener = progress_listener.get()
        self.bar: tqdm | None = None
        try:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=desc, unit="step", leave=True)
        except ImportError:  # progress bars are a nicety, not a requirement
            pass
        if self.listener:
            self.listener(desc, 0, total)

    def update(self, n: int = 1) -> None:
        self.done += n
        if self.bar:
            self.bar.update(n)
        if self.listener:
            self.listener(self.desc, self.done, self.total)

    def close(self) -> None:
        if self.bar:
            self.bar.close()


def _progress(total: int, desc: str) -> _Bar | None:
    return _Bar(total, desc)


async def seed_player_history(
    store: Store,
    upstream: Upstream,
    ratings_source: Ratings,
    accounts: dict[str, list[int]],
    days: int,
    now: float,
    track_days: int = TRACK_DAYS,
    later: dict[str, list[int]] | None = None,
    later_days: int = 0,
    panel_size: int = 0,
    panel_days: int = 0,
    panel_every: int = 1,
    tanks_in_flight: int | None = None,
) -> dict:
    """`days` days of the tracker's daily pass (server/services/tracker.py, the same code the service runs),
    on a ManualClock with the simulator answering "as of" it: each past day's pass at the day's
    last second, today's due slices at `now` (the service's own tracker does the rest of today).
    The accounts are tracked as if looked up now; `later`'s join the pass for its last
    `later_days` days only (as if looked up then). Snapshots and per-tank records are written on
    the days an account played; the history carries them forward over the other days. With
    `panel_size`, each realm's random panel is drawn on the pass `panel_days` - 1 days before
    today's (the panel job's own draw on the travelling clock, server/services/panel.py) and
    refreshed and visited every `panel_every` days after (when more than 1, through yesterday): its tracking lasts through the
    day of each refresh only, so the passes between skip it (one visit's changes then span
    `panel_every` days), except the last refresh's, which the service's own tracker goes on with.
    `tanks_in_flight`: the tracker's tanks/stats requests at once (default: the service's)."""
    from server.domain.days import ManualClock, day_start, utc_day
    from server.services.panel import TRACK_SECONDS, PanelService
    from server.services.tracker import SLICES, TANKS_IN_FLIGHT, Tracker

    first_day = (dt.datetime.fromtimestamp(now, dt.UTC).date() - dt.timedelta(days=days - 1)).isoformat()
    clock = ManualClock(day_start(first_day))
    for region, ids in accounts.items():
        with job_deadline():  # a job's step, not a request's (a loaded 2-core machine is slow)
            await store.tracked.track_many(region, [(a, None) for a in ids], now + track_days * 86400, clock())
    # One claimant takes every due slice at once: a few hundred accounts cost one account/info per
    # region and day, plus tanks/stats for those who played.
    tracker = Tracker(
        store,
        TimeTravelUpstream(upstream, clock),
        ratings_source,
        clock=clock,
        owner="demo-seed",
        group=SLICES,
        tanks_in_flight=tanks_in_flight or TANKS_IN_FLIGHT,
    )
    panel = PanelService(store, TimeTravelUpstream(upstream, clock), size=panel_size, clock=clock)
    panel_visits = list(range(panel_days - 1, -1, -panel_every)) if panel_size else []
    if panel_every > 1:  # the weekly visits end yesterday (the tables' last day)
        panel_visits = [b for b in panel_visits if b > 0]
    bar = _progress(days, "tracker passes (days)")
    totals: dict[str, int] = {}
    for back in range(days - 1, -1, -1):
        day = (dt.datetime.fromtimestamp(now, dt.UTC).date() - dt.timedelta(days=back)).isoformat()
        clock.set(now if back == 0 else day_start(day) + 86399)
        if later and back == later_days - 1:
            for region, ids in later.items():
                with job_deadline():
                    await store.tracked.track_many(region, [(a, None) for a in ids], now + track_days * 86400, clock())
        if back in panel_visits:
            # The first draws, the next renew the frame's tracking (and top it up): through this
            # day's pass only between visits, as long as the service's own would after the last.
            panel.track_seconds = 1 if panel_every > 1 and back != panel_visits[-1] else TRACK_SECONDS
            await panel.run()
        await tracker.tick()
        for key, value in tracker.spent.get(day, {}).items():
            totals[key] = totals.get(key, 0) + value
        if bar:
            bar.update(1)
    if bar:
        bar.close()
    return {"days": days, "first_day": first_day, "today": utc_day(now), **totals}


async def seed_current_profiles(players: PlayerService, accounts: dict[str, list[int]]) -> int:
    """Fresh cached profiles with ratings, as if each had been opened on the site."""
    bar = _progress(sum(len(v) for v in accounts.values()), "current profiles")
    semaphore = asyncio.Semaphore(8)
    done = 0

    async def one(region: str, account_id: int) -> None:
        nonlocal done
        async with semaphore:
            try:
                await players.fetch_and_store(region, account_id, with_ratings=True, caller="seed")
                done += 1
            except Exception as exc:
                log.warning("profile %s/%s not seeded: %s", region, account_id, exc)
        if bar:
            bar.update(1)

    await asyncio.gather(*[one(r, a) for r, ids in accounts.items() for a in ids])
    if bar:
        bar.close()
    return done


async def seed_online(
    store: Store, upstream: Upstream, days: int, now: float, recent_hours: int = 48, report: bool = True
) -> int:
    """Past player counts through the real sampler: hourly, then every 10 minutes for the
    last `recent_hours` (minute-by-minute sampling of 30 days would take the seeder ~15 min;
    the live sampler adds a sample every minute from then on). `report`: a progress bar of its own
    (seed_demo runs it beside the tracker's passes, whose bar /status shows)."""
    from server.services.online import OnlineService, SlotSample

    last_minute = int(now // 60)
    recent_start = last_minute - recent_hours * 60
    minutes = list(range(last_minute - days * 1440, recent_start, 60))
    minutes += list(range(recent_start, last_minute + 1, 10))
    bar = _progress(len(minutes), f"player counts ({days} days)") if report else None
    samples = 0
    batch = 32
    writer = OnlineService(store, upstream)
    for start in range(0, len(minutes), batch):

        async def one(minute: int) -> SlotSample:
            clock = lambda minute=minute: minute * 60.0  # noqa: E731 - the sampler's "now"
            return await OnlineService(store, TimeTravelUpstream(upstream, clock), clock=clock).fetch(minute)

        chunk = minutes[start : start + batch]
        # Written together: a few statements per game/region for the chunk, not four per minute
        # (those writes took most of this step's 1.8 minutes).
        await writer.store_samples(await asyncio.gather(*[one(m) for m in chunk]))
        samples += len(chunk)
        if bar:
            bar.update(len(chunk))
    if bar:
        bar.close()
    return samples


class SimulatorLists:
    """Existing account and clan ids, asked of the simulator's control endpoints."""

    def __init__(self, base_url: str, demo_account: int = 500000001):
        self.base_url = base_url.rstrip("/")
        self.demo_account = demo_account

    async def _ids(self, kind: str, region: str, n: int) -> list[int]:
        import ujson
        from tornado.httpclient import AsyncHTTPClient

        response = await AsyncHTTPClient().fetch(f"{self.base_url}/_sim/{kind}?region={region}&n={n}")
        body = ujson.loads(response.body)
        ids = body.get("ids", body) if isinstance(body, dict) else body
        return [int(i) for i in ids]

    async def accounts(self, region: str, n: int) -> list[int]:
        return await self._ids("accounts", region, n)

    async def clans(self, region: str, n: int) -> list[int]:
        return await self._ids("clans", region, n)


async def seed_demo(
    store: Store,
    services: Services,
    simulator_lists: SimulatorLists,
    players_per_region: int = 60,
    clans_per_region: int = 4,
    history_days: int = 91,
    population_per_region: int | None = None,
    population_days: int = 21,
    online_days: int = 30,
    now: float | None = None,
    online_recent_hours: int = 48,
    panel_size: int = 0,
    panel_days: int = 16,
    panel_every: int = 7,
    tanks_in_flight: int = 32,
) -> dict:
    """Seed everything; idempotent (snapshots, samples and profiles are upserts keyed by day/minute/id).

    `players_per_region` accounts get `history_days` of history (91: the 90-day tables' days and
    the pass before them) and a cached profile (the ones to open on the site). With `panel_size`,
    each realm's random panel of that many active accounts is drawn on the pass `panel_days` - 1
    days before today's (16: its first pass measures its members' state, the 14 days after it make
    a whole marks window) and visited every `panel_every` days since, through yesterday (7: each
    member costs about 3 tanks/stats requests instead of 9 visited daily, the 7-day table's changes
    are exactly 7 days and the rates do not depend on how a window's battles are split between
    visits); the tank statistics, marks and strength are then the panel's (docs/data.md, "The demo's
    data"). `population_per_region` more accounts (default: 200 without a panel, none with one) are
    tracked for the last `population_days` days only, so that the tracked population's tank
    statistics of 7 and 30 days pass their minimum sample (POPULATION_MIN_PLAYERS) for the popular
    tanks. `tanks_in_flight`: the seeding tracker's tanks/stats requests at once per realm (the
    realms are visited at once: enough to keep the demo simulator's quota busy)."""
    now = now or time.time()
    if population_per_region is None:
        population_per_region = 0 if panel_size else 200
    started = time.monotonic()
    accounts: dict[str, list[int]] = {}
    clans: dict[str, list[int]] = {}
    for region in REGIONS:
        clans[region] = await simulator_lists.clans(region, clans_per_region)
        members: list[int] = []
        for clan_id in clans[region]:
            info = (
                await services.upstream.clans_info(
                    region, [clan_id], fields="clan_id,members.account_id", caller="seed"
                )
            ).get(clan_id) or {}
            members += [m["account_id"] for m in info.get("members") or []]
        extra = await simulator_lists.accounts(region, players_per_region)
        accounts[region] = sorted(set(members[: players_per_region // 2]) | set(extra))[:players_per_region]
        if simulator_lists.demo_account not in accounts[region] and region == "eu":
            accounts[region][0] = simulator_lists.demo_account
    population: dict[str, list[int]] = {}
    for region in REGIONS:
        # The next accounts after the showcase's (the simulator lists existing ids in order).
        more = await simulator_lists.accounts(region, players_per_region + population_per_region)
        population[region] = [a for a in more if a not in set(accounts[region])][:population_per_region]
    summary = {
        "accounts": {r: len(v) for r, v in accounts.items()},
        "population_accounts": {r: len(v) for r, v in population.items()},
        "panel_size": panel_size,
        "clans": clans,
    }
    steps: dict[str, float] = {}  # each step's seconds, in the summary the log prints
    summary["step_seconds"] = steps
    mark = {"at": time.monotonic()}

    def step(name: str) -> None:
        steps[name] = round(time.monotonic() - mark["at"], 1)
        mark["at"] = time.monotonic()

    step("accounts")

    async def player_counts() -> int:
        # Beside the passes: they wait on the upstream and on each other's writes, and the player
        # counts touch nothing they read (their bar would take /status's phase from the passes').
        started_counts = time.monotonic()
        samples = await seed_online(store, services.upstream, online_days, now, online_recent_hours, report=False)
        steps["player_counts_beside_passes"] = round(time.monotonic() - started_counts, 1)
        return samples

    counts = asyncio.create_task(player_counts())
    # build_services always wires ratings_source; Services types it Optional for partial test builds.
    try:
        summary["tracker"] = await seed_player_history(
            store,
            services.upstream,
            services.ratings_source,  # type: ignore[arg-type]
            accounts,
            history_days,
            now,
            later=population,
            later_days=min(population_days, history_days),
            panel_size=panel_size,
            panel_days=min(panel_days, history_days),
            panel_every=panel_every,
            tanks_in_flight=tanks_in_flight,
        )
        step("tracker_passes")
        summary["profiles"] = await seed_current_profiles(services.players, accounts)
        step("profiles")
        for region, ids in clans.items():
            with job_deadline():
                await store.clans.add_seeds(region, ids)
        await services.clans.refresh(int(now // 3600))
        await services.clans.build_digests(int(now // 3600))
        step("clans")
        # The tank statistics from the seeded days at once (the hourly job would wait for its next slot).
        tank_statistics = PopulationService(store, services.ratings_source, clock=lambda: now)  # type: ignore[arg-type]
        tank_statistics.pause = 0.0  # no request to let through between days yet (180 pauses a realm)
        summary["tank_statistics"] = await tank_statistics.build(force=True)
        step("tank_statistics")
        # Wargaming's published thresholds beside the estimates, as the daily job fetches them.
        if services.tank_stats is not None and services.tank_stats.official is not None:
            summary["official_thresholds"] = await services.tank_stats.official.fetch()
        # The build stored each region's computed expected values: the current profiles are rated
        # again with their rows (a tank the loaded table lacks counts in WN8), as the next day's would be.
        services.expected_values.forget()
        for region, ids in accounts.items():
            for account_id in ids:
                await services.players.rate_profile(region, account_id)
        step("thresholds_and_ratings")
        summary["online_slots"] = await counts
    finally:
        counts.cancel()  # when a step failed: nothing is left running (no-op once done)
    step("player_counts_after")
    # The day's bulk files, as the daily job writes them after its build: once the player counts
    # are seeded too (their file aggregates the finished days, which are kept once aggregated).
    for region in REGIONS:
        await services.dumps.build(region, newest_complete_day(now))
    step("bulk_files")
    summary["seconds"] = round(time.monotonic() - started, 1)
    return summary
