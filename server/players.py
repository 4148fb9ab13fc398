"""Player profiles: cache first, live lookups within budgets, ratings, snapshots, history."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import time
from typing import TYPE_CHECKING

from server import ratings as rating_maths
from server.concurrency import bounded_read, single_flight
from server.errors import APIError
from server.upstream import (
    ACCOUNT_FIELDS,
    TANK_COUNTERS,
    TANKS_FIELDS,
    UpstreamUnavailable,
)
from store.client import request_deadline

if TYPE_CHECKING:  # types only
    from server.interfaces import Upstream
    from server.period import PeriodService
    from server.ratelimit import RateLimiter
    from server.ratings_source import RatingsSource
    from server.tracker import Tracker
    from store.store import Store
    from store.tanks import Timeline

log = logging.getLogger("statsapi.players")

PROFILE_MAX_AGE = 3600  # SPEC: cached data is at most about one hour old
HOT_SECONDS = 5.0  # hot profiles are held in-process this long (well inside the hour)
TOUCH_EVERY = 300.0  # how often a request refreshes last_requested in the database
TOUCHED_MAX = 100_000  # profiles whose last touch is remembered in-process
TANK_FIELDS = TANK_COUNTERS  # what we keep of each tank's `all` block (the upstream `fields` ask for these)
TOTAL_FIELDS = TANK_FIELDS
DELTA_PERIODS = (7, 30, 90)
HISTORY_FIELDS = ("date", *TOTAL_FIELDS, "wn8", "wn7", "efficiency")
# A live lookup answers within this, whatever the upstream client's retries would allow:
# a public API should say 503 quickly rather than hold the caller for half a minute.
LIVE_DEADLINE = 8.0


def utc_date(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).date().isoformat()


def flatten_tanks(raw_tanks: list[dict] | None) -> list[dict]:
    """Wargaming's tanks/stats entries ({tank_id, all: {...}}) as flat per-tank totals."""
    tanks = []
    for entry in raw_tanks or []:
        stats = entry.get("all") or {}
        if stats.get("battles"):
            tanks.append({"tank_id": int(entry["tank_id"]), **{f: int(stats.get(f) or 0) for f in TANK_FIELDS}})
    return tanks


def _per_battle(value: float, battles: int, digits: int = 2) -> float | None:
    return round(value / battles, digits) if battles else None


def statistics_view(totals: dict, average_tier: float | None) -> dict:
    """Totals plus the per-battle averages users ask for (percentages with two decimals)."""
    battles = int(totals.get("battles") or 0)
    shots = int(totals.get("shots") or 0)
    return {
        "battles": battles,
        "wins": int(totals.get("wins") or 0),
        "losses": int(totals.get("losses") or 0),
        "draws": int(totals.get("draws") or 0),
        "win_rate": _per_battle(100.0 * (totals.get("wins") or 0), battles),
        "avg_damage": _per_battle(totals.get("damage_dealt") or 0, battles),
        "avg_frags": _per_battle(totals.get("frags") or 0, battles),
        "avg_spotted": _per_battle(totals.get("spotted") or 0, battles),
        "avg_defence": _per_battle(totals.get("dropped_capture_points") or 0, battles),
        "avg_capture": _per_battle(totals.get("capture_points") or 0, battles),
        "avg_xp": _per_battle(totals.get("xp") or 0, battles),
        "survival_rate": _per_battle(100.0 * (totals.get("survived_battles") or 0), battles),
        "hit_rate": round(100.0 * (totals.get("hits") or 0) / shots, 2) if shots else None,
        "average_tier": round(average_tier, 2) if average_tier is not None else None,
    }


def profile_view(doc: dict, live_fetched: bool) -> dict:
    """The public profile: identity, clan, dates, statistics, ratings, cache facts."""
    ratings = doc.get("ratings")
    if ratings and not live_fetched:
        ratings_view = {
            "available": True,
            "wn8": ratings.get("wn8"),
            "wn8_color": rating_maths.wn8_color(ratings.get("wn8")),
            "wn7": ratings.get("wn7"),
            "efficiency": ratings.get("efficiency"),
            "calculated_at": ratings.get("calculated_at"),
            "expected_values_version": ratings.get("expected_values_version"),
        }
    else:
        ratings_view = {
            "available": False,
            "wn8": None,
            "wn8_color": None,
            "wn7": None,
            "efficiency": None,
            "calculated_at": None,
            "expected_values_version": None,
        }
    return {
        "account_id": doc["account_id"],
        "region": doc["region"],
        "nickname": doc.get("nickname"),
        "clan_id": doc.get("clan_id"),
        "created_at": doc.get("created_at"),
        "last_battle_time": doc.get("last_battle_time"),
        "updated_at": doc.get("updated_at"),
        "statistics": statistics_view(doc.get("totals") or {}, (ratings or {}).get("average_tier")),
        "ratings": ratings_view,
        "cached_at": int(doc["cached_at"]),
        "live_fetched": live_fetched,
    }


def build_profile(region: str, account_id: int, info: dict, raw_tanks, now: float) -> dict:
    stats = (info.get("statistics") or {}).get("all") or {}
    return {
        "region": region,
        "account_id": account_id,
        "nickname": info.get("nickname"),
        "clan_id": info.get("clan_id"),
        "created_at": info.get("created_at"),
        "last_battle_time": info.get("last_battle_time"),
        "updated_at": info.get("updated_at"),
        "totals": {f: int(stats.get(f) or 0) for f in TOTAL_FIELDS},
        "tanks": flatten_tanks(raw_tanks),
        "cached_at": now,
        "ratings": None,
    }


def snapshot_of(doc: dict) -> dict:
    ratings = doc.get("ratings") or {}
    return {
        "region": doc["region"],
        "account_id": doc["account_id"],
        "date": utc_date(doc["cached_at"]),
        "taken_at": int(doc["cached_at"]),
        "clan_id": doc.get("clan_id"),
        **{f: doc["totals"].get(f, 0) for f in TOTAL_FIELDS},
        "wn8": ratings.get("wn8"),
        "wn7": ratings.get("wn7"),
        "efficiency": ratings.get("efficiency"),
    }


def period_delta(first: dict, last: dict) -> dict:
    """What changed between two snapshots: battles played and the rates over those battles."""
    battles = last["battles"] - first["battles"]
    diff = {f: last.get(f, 0) - first.get(f, 0) for f in TOTAL_FIELDS}
    return {
        "from": first["date"],
        "to": last["date"],
        "battles": battles,
        "wins": diff["wins"],
        "win_rate": _per_battle(100.0 * diff["wins"], battles),
        "avg_damage": _per_battle(diff["damage_dealt"], battles),
        "avg_frags": _per_battle(diff["frags"], battles),
        "avg_xp": _per_battle(diff["xp"], battles),
        "wn8_change": round(last["wn8"] - first["wn8"], 2)
        if last.get("wn8") is not None and first.get("wn8") is not None
        else None,
        "win_rate_change": _rate_change(first, last),
    }


def _rate_change(first: dict, last: dict) -> float | None:
    if not first["battles"] or not last["battles"]:
        return None
    return round(100.0 * last["wins"] / last["battles"] - 100.0 * first["wins"] / first["battles"], 4)


def fill_days(snapshots: list[dict], through: str) -> list[dict]:
    """Snapshots with every missing day up to `through` filled by carrying the previous snapshot
    forward (the tracker visited the account and found no battle, so its figures stood still),
    marked `measured: False`; own snapshots `measured: True`."""
    out: list[dict] = []
    for snap, following in zip(snapshots, [*snapshots[1:], None]):
        out.append({**snap, "measured": True})
        day = dt.date.fromisoformat(snap["date"])
        end = (
            dt.date.fromisoformat(following["date"]) if following else dt.date.fromisoformat(through) + dt.timedelta(1)
        )
        day += dt.timedelta(days=1)
        while day < end:
            out.append({**snap, "date": day.isoformat(), "measured": False})
            day += dt.timedelta(days=1)
    return out


def history_view(
    region: str, account_id: int, snapshots: list[dict], days: int, today: str, through: str | None = None
) -> dict:
    """Daily entries of the last `days` days and deltas over 7/30/90 days (null without data).

    `through`: the last day the account was measured (the tracker's last visit); days without a
    snapshot up to it carry the previous snapshot forward (see fill_days), so a tracked account has
    an entry for every day and a delta starts on its period's first day.
    """
    if through is not None and through > snapshots[-1]["date"]:
        snapshots = fill_days(snapshots, min(through, today))
    elif through is not None:
        snapshots = fill_days(snapshots, snapshots[-1]["date"])
    latest = snapshots[-1]
    first_day = (dt.date.fromisoformat(today) - dt.timedelta(days=days - 1)).isoformat()
    entries = []
    for snap in snapshots:
        if snap["date"] >= first_day:
            entry = {
                k: snap.get(k)
                for k in (
                    "date",
                    "battles",
                    "wins",
                    "damage_dealt",
                    "frags",
                    "spotted",
                    "xp",
                    "wn8",
                    "wn7",
                    "efficiency",
                )
            }
            entry["win_rate"] = _per_battle(100.0 * snap["wins"], snap["battles"])
            entry["avg_damage"] = _per_battle(snap["damage_dealt"], snap["battles"])
            entry["measured"] = snap.get("measured", True)
            entries.append(entry)
    deltas = {}
    for period in DELTA_PERIODS:
        start = (dt.date.fromisoformat(latest["date"]) - dt.timedelta(days=period)).isoformat()
        # The baseline is the earliest snapshot inside the period, so a delta never spans
        # more than its period; `from`/`to` say exactly which days it covers.
        baseline = next((snap for snap in snapshots if start <= snap["date"] < latest["date"]), None)
        deltas[f"{period}d"] = period_delta(baseline, latest) if baseline else None
    # The ratings of the battles played in each period need per-tank records: PlayerService
    # fills these from the tracker's (PeriodService); null without them.
    for delta in deltas.values():
        if delta is not None:
            delta["period"] = None
    deltas["recent_1000"] = None
    return {
        "account_id": account_id,
        "region": region,
        "days": days,
        "first_date": first_day,
        "last_date": today,
        "snapshots": entries,
        "snapshot_count": len(entries),
        "deltas": deltas,
        # Per-week figures of the battles played (PlayerService fills them from the per-tank
        # records, as the deltas' period); null without them.
        "weekly": None,
        "latest": {k: latest.get(k) for k in ("date", "battles", "wins", "wn8")},
    }


class PlayerService:
    def __init__(
        self,
        store: Store,
        upstream: Upstream,
        ratings_source: RatingsSource,
        limiter: RateLimiter,  # tests that never look up live may pass None
        clock=time.time,
        period: PeriodService | None = None,
        tracker: Tracker | None = None,
    ):
        self.store = store
        self.tracker = tracker  # server.tracker.Tracker: looked-up accounts are measured daily
        self.period = period  # PeriodService: the figures of the battles played in each delta
        self.upstream = upstream
        self.ratings_source = ratings_source
        self.limiter = limiter
        self.clock = clock
        self._hot: dict[tuple, tuple[float, dict]] = {}
        self._touched: dict[tuple, float] = {}
        self._fetching: dict[tuple, asyncio.Future] = {}
        self._history_flights: dict[tuple, asyncio.Future] = {}
        self._background: set[asyncio.Task] = set()

    # --- reads ---------------------------------------------------------------------
    async def profile(self, region: str, account_id: int, client: str) -> dict:
        key = (region, account_id)
        now = self.clock()
        hot = self._hot.get(key)
        if hot and hot[0] > now:
            return hot[1]
        async with request_deadline():
            doc = await self.store.players.get(region, account_id)
        if doc and doc["cached_at"] > now - PROFILE_MAX_AGE:
            self._touch(key, now)
            view = profile_view(doc, live_fetched=False)
            if view["ratings"]["available"]:
                self._hot[key] = (now + HOT_SECONDS, view)
                if len(self._hot) > 50_000:
                    self._hot.clear()
            return view
        return await self._live(region, account_id, client)

    def _touch(self, key: tuple, now: float) -> None:
        # Refresh-ahead needs to know which profiles are popular; once per 5 min is enough.
        # The write runs in the background: the answer never waits on it (a hung database
        # would otherwise hold a cached read for a second deadline).
        if now - self._touched.get(key, 0) > TOUCH_EVERY:
            if len(self._touched) > TOUCHED_MAX:
                self._touched.clear()  # worst case: one extra touch write per profile
            self._touched[key] = now
            self._spawn(self.store.players.touch(key[0], key[1], now))
            if self.tracker is not None:
                self._spawn(self.tracker.looked_up(key[0], key[1], now))

    async def _live(self, region: str, account_id: int, client: str) -> dict:
        key = (region, account_id)
        pending = self._fetching.get(key)
        if pending is not None:
            # Concurrent misses for one account share one upstream call.
            return profile_view(await asyncio.shield(pending), live_fetched=True)
        decision = self.limiter.hit(client, "live")
        if not decision.allowed:
            raise APIError(
                "rate_limited",
                "live lookups are limited to %d per minute per client" % decision.limit,
                headers={"Retry-After": str(decision.retry_after)},
            )
        future = asyncio.get_running_loop().create_future()
        self._fetching[key] = future
        try:
            try:
                budget = await self.limiter.reserve_global_live()
            except Exception:
                self.limiter.refund(client, "live")
                raise
            if not budget.allowed:
                self.limiter.refund(client, "live")
                raise APIError("rate_limited_global", headers={"Retry-After": str(budget.retry_after)})
            try:
                doc = await asyncio.wait_for(self.fetch_and_store(region, account_id, caller="live"), LIVE_DEADLINE)
            except TimeoutError:
                raise UpstreamUnavailable("live lookup deadline passed", retry_after=30) from None
            future.set_result(doc)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters re-raise it themselves
            raise
        finally:
            self._fetching.pop(key, None)
        self._spawn(self.rate_profile(region, account_id))
        self._touched[key] = 0
        return profile_view(doc, live_fetched=True)

    async def fetch_and_store(
        self, region: str, account_id: int, with_ratings: bool = False, caller: str = "refresh"
    ) -> dict:
        """Fetch one account from the upstream and store it; a failure is never stored."""
        info = (await self.upstream.account_info(region, [account_id], fields=ACCOUNT_FIELDS, caller=caller)).get(
            account_id
        )
        if not info:
            raise APIError("player_not_found", region=region)
        raw_tanks = await self.upstream.tanks_stats(region, account_id, fields=TANKS_FIELDS, caller=caller)
        doc = build_profile(region, account_id, info, raw_tanks, self.clock())
        if with_ratings:
            doc["ratings"] = await self.ratings_for(doc)
        doc["last_requested"] = self.clock()
        await self.store.players.save(doc)
        await self.store.players.save_snapshots([snapshot_of(doc)])
        if caller == "live" and self.tracker is not None:
            # Tracked from its first successful lookup; this fetch is today's visit (in the background).
            self._spawn(self.tracker.adopt(region, account_id, info, raw_tanks, doc["cached_at"]))
        return doc

    async def ratings_for(self, doc: dict) -> dict | None:
        expected = await self.ratings_source.expected_values()
        tiers = await self.ratings_source.tiers(doc["region"])
        if expected is None:
            return None
        ratings = rating_maths.compute_ratings(doc["totals"], doc["tanks"], expected, tiers)
        ratings["calculated_at"] = int(self.clock())
        return ratings

    async def rate_profile(self, region: str, account_id: int) -> None:
        """The rating calculator that follows a live fetch (runs in the background)."""
        doc = await self.store.players.get(region, account_id)
        if not doc:
            return
        ratings = await self.ratings_for(doc)
        if ratings is None:
            return
        if await self.store.players.set_ratings(region, account_id, doc["cached_at"], ratings):
            doc["ratings"] = ratings
            await self.store.players.save_snapshots([snapshot_of(doc)])

    def _spawn(self, coro) -> None:
        task = asyncio.create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("background write failed: %s", type(task.exception()).__name__)

    async def history(self, region: str, account_id: int, days: int) -> dict:
        """Concurrent identical requests share one build (single-flight per account, region, days
        and day). All of its reads (the snapshots, the tracker's last measured day, the per-tank
        records) hold one slot of the history-reads gate (else 503 at once) under one deadline
        (bounded_read: 503 database_unavailable with Retry-After past it)."""
        today = utc_date(self.clock())
        return await single_flight(
            self._history_flights,
            (region, account_id, days, today),
            lambda: self._build_history(region, account_id, days, today),
        )

    async def _build_history(self, region: str, account_id: int, days: int, today: str) -> dict:
        # Deltas need up to 90 days before the newest snapshot, whatever `days` is: one indexed
        # range read of at most one snapshot a day (≤ 493), only the fields the view uses.
        first = (dt.date.fromisoformat(today) - dt.timedelta(days=max(days, 91) + 1)).isoformat()
        period = self.period
        timeline: Timeline | None = None
        async with bounded_read(self.store.history_reads):
            snapshots = await self.store.players.snapshots_since(
                region, account_id, first, today, fields=HISTORY_FIELDS
            )
            if not snapshots:
                raise APIError("no_history")
            through = None  # the last day the tracker measured the account, for the carry-forward
            if self.tracker is not None:
                through = await self.store.tracked.last_measured_day(region, account_id)
            view = history_view(region, account_id, snapshots, days, today, through=through)
            if period is not None:
                periods, weeks = self._figure_periods(view)
                timeline = await period.history_timeline(region, account_id, periods, today, weeks)
        if period is not None and timeline is not None:
            await self._add_period_figures(period, view, timeline, region, today)
        return view

    @staticmethod
    def _figure_periods(view: dict) -> tuple[list[tuple[str, str]], tuple[str, int]]:
        """The (from, to) of each delta with two snapshots, and the weeks' (last day, days)."""
        periods = [
            (delta["from"], delta["to"])
            for key, delta in view["deltas"].items()
            if key != "recent_1000" and delta is not None
        ]
        return periods, (view["latest"]["date"], view["days"])

    @classmethod
    async def _add_period_figures(
        cls, period: PeriodService, view: dict, timeline: Timeline, region: str, today: str
    ) -> None:
        """Each delta's `period`: the figures of the battles played over its days, from the
        per-tank records (null without them); `recent_1000`: the last ~1,000 battles; `weekly`:
        the same figures per 7-day week over the `days` window, ending on the newest snapshot's
        day as the deltas do."""
        periods, weeks = cls._figure_periods(view)
        figures, recent, weekly = await period.history_figures(timeline, region, periods, today, weeks)
        deltas = [delta for key, delta in view["deltas"].items() if key != "recent_1000" and delta is not None]
        for delta, figure in zip(deltas, figures, strict=True):
            delta["period"] = figure
        view["deltas"]["recent_1000"] = recent
        view["weekly"] = weekly

    # --- jobs ----------------------------------------------------------------------
    async def refresh_ahead(self, slot: int, budget: int = 50) -> str:
        """Refetch recently requested profiles before they expire, ratings included."""
        now = self.clock()
        due = await self.store.players.due_for_refresh(now - PROFILE_MAX_AGE, now - 0.75 * PROFILE_MAX_AGE, budget)
        refreshed = failed = 0
        for item in due:
            try:
                await self.fetch_and_store(item["region"], item["account_id"], with_ratings=True, caller="refresh")
                refreshed += 1
            except Exception as exc:
                failed += 1
                log.info("refresh of %s:%s failed: %s", item["region"], item["account_id"], type(exc).__name__)
        return f"refreshed {refreshed}, failed {failed}"

    async def close(self) -> None:
        if self._background:
            await asyncio.wait(list(self._background), timeout=5)
