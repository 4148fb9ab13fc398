"""Player history and tanks: snapshots, deltas and period figures from the tracker's per-tank records."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from server.contract.catalogue import (
    MARKS_METHOD,
    MARKS_WINDOW_DAYS,
    MAX_DAYS,
    POPULATION_PERIODS,
    RECENT_BATTLES,
    RECENT_WINDOWS,
    STANDING_MIN_BATTLES,
    WEEK_DAYS,
)
from server.contract.errors import APIError
from server.domain import recents
from server.domain.days import utc_day
from server.domain.marks import MIN_TIER, combined_damage, estimated_marks, mastery_reach, next_mark
from server.domain.population import standing
from server.domain.profiles import HISTORY_FIELDS, history_view, is_recent_key, recent_key
from server.domain.records import TankState, Timeline, apply_parsed, as_counters, mastery_rows
from server.services.concurrency import bounded_read, single_flight
from server.services.expected import Ratings
from server.services.official import MARK_KEYS, MASTERY_KEYS
from server.services.official import SOURCE as OFFICIAL_SOURCE
from server.services.tank_stats import named_marks, standing_period, tank_standing
from store.client import request_deadline
from store.store import Store

if TYPE_CHECKING:  # types only
    from server.domain.ratings import ExpectedValues
    from server.services.leaderboards import LeaderboardService
    from server.services.official import OfficialFigures
    from server.services.tank_stats import TankStatsService

WEEK = WEEK_DAYS  # days per bucket of the history's `weekly` series


def _day(date: str, days_before: int) -> str:
    return (dt.date.fromisoformat(date) - dt.timedelta(days=days_before)).isoformat()


def _states(timeline: Timeline, first: str, last: str) -> tuple[tuple[str, TankState], tuple[str, TankState]] | None:
    """((from_day, start_state), (to_day, end_state)) for [first, last], or None without records.
    An account whose records start inside the period starts from its first record there."""
    end = timeline.raw_state_on(last)
    if end is None:
        return None
    start = timeline.raw_state_on(first)
    if start is None:
        days = timeline.battles_by_day(first, last)
        if not days:
            return None
        start = timeline.raw_state_on(days[0][0])
        if start is None:
            return None
    return start, end


def _states_on(timeline: Timeline, days: list[str]) -> list[tuple[str, TankState] | None]:
    """Timeline.raw_state_on for each of `days` (ascending), in one pass over the records: O(records
    + len(days) x tanks) where asking per day would rebuild each state from its keyframe."""
    out: list[tuple[str, TankState] | None] = []
    state: TankState | None = None  # None until the first keyframe (a change record needs its base)
    newest: str | None = None
    records = timeline.records
    index = 0
    for day in days:
        while index < len(records) and records[index][0] <= day:
            record_day, _, keyframe, _ = records[index]
            if keyframe:
                state = apply_parsed({}, timeline.parsed(index))
            elif state is not None:
                apply_parsed(state, timeline.parsed(index))
            newest = record_day
            index += 1
        # A shallow copy keeps this day's state: apply_parsed replaces rows, never changes them.
        out.append((newest, dict(state)) if state is not None and newest is not None else None)
    return out


def week_bounds(last: str, days: int) -> list[tuple[str, str]]:
    """The (first, last) days of the 7-day buckets covering `days` days ending on `last`, oldest
    first: (last-7, last], (last-14, last-7], ... as many as cover the window (ceil(days / 7))."""
    weeks = -(-days // WEEK)
    return [(_day(last, WEEK * (k + 1)), _day(last, WEEK * k)) for k in range(weeks - 1, -1, -1)]


def _weekly(
    timeline: Timeline, last: str, days: int, expected: ExpectedValues | None, tiers: Mapping[int, int]
) -> list[dict[str, Any] | None] | None:
    """The figures of each week of week_bounds(last, days), from one pass over the timeline.

    A week's `from` / `to` are its bounds (the state as of the end of `from` to the end of `to`),
    except that a week inside which the account's records start begins at its first record there
    (as a delta's period does). A week ending before the account's first record is None; None
    altogether when no week has records."""
    bounds = week_bounds(last, days)
    states = _states_on(timeline, [bounds[0][0], *(to for _, to in bounds)])
    weeks: list[dict[str, Any] | None] = []
    for k, (first, to) in enumerate(bounds):
        start, end = states[k], states[k + 1]
        if end is None:
            weeks.append(None)
            continue
        if start is None:  # the records start inside this week: from the first one (rare: once)
            found = _states(timeline, first, to)
            if found is None:
                weeks.append(None)
                continue
            (first, start_counters), _ = found
            first_record = first
        else:
            first_record, start_counters = start
        assist = recents.assist_change(timeline.assist_on(first_record), timeline.assist_on(end[0]))
        weeks.append(
            {"from": first, "to": to, **recents.state_figures(start_counters, end[1], expected, tiers, assist)}
        )
    return weeks if any(week is not None for week in weeks) else None


class HistoryService:
    """A player's history (daily snapshots, deltas and the figures of the battles played in them)
    and the tanks endpoint, both from the tracker's per-tank records.

    Figures of the battles played between two days, per account and per tank.

    A period's start state is the newest per-tank record on or before its first day; an account
    tracked only since inside the period starts from its first record in it (as the history's
    deltas start from the earliest snapshot inside their period), and `from` says which day that is.

    Reads on the request path are bounded: `tanks` (as `history`, which calls
    `history_timeline` inside its own build) is one single-flight build per (account, region, days,
    day) whose reads hold one slot of the store's history-reads gate under one deadline.
    """

    def __init__(
        self,
        store: Store,
        ratings_source: Ratings,
        clock: Callable[[], float] = time.time,
        tank_stats: TankStatsService | None = None,
        leaderboards: LeaderboardService | None = None,
        official: OfficialFigures | None = None,
    ) -> None:
        self.store = store
        self.ratings_source = ratings_source
        self.clock = clock
        self.tank_stats = tank_stats  # the population tables a tank row's standing is read from
        self.leaderboards = leaderboards  # a period's place on the leaderboard of the same days
        self.official = official  # Wargaming's published thresholds a tank row's progress is measured against
        self._tanks_flights: dict[tuple, Any] = {}
        self._history_flights: dict[tuple, Any] = {}

    async def _inputs(self, region: str) -> tuple[ExpectedValues | None, dict[int, int]]:
        expected = await self.ratings_source.expected_values(region)
        tiers = await self.ratings_source.tiers(region)
        return expected, tiers

    async def _timeline(self, region: str, account_id: int, since: str, until: str) -> Timeline:
        """The per-tank records of [since, until]; under the caller's deadline."""
        return Timeline.of(await self.store.tanks.timeline_records(region, account_id, since, until))

    @staticmethod
    def _figures(
        timeline: Timeline, first: str, last: str, expected: ExpectedValues | None, tiers: Mapping[int, int]
    ) -> dict[str, Any] | None:
        states = _states(timeline, first, last)
        if states is None:
            return None
        (from_day, start), (to_day, end) = states
        assist = recents.assist_change(timeline.assist_on(from_day), timeline.assist_on(to_day))
        return {"from": from_day, "to": to_day, **recents.state_figures(start, end, expected, tiers, assist)}

    @classmethod
    def _recent(
        cls, timeline: Timeline, today: str, expected: ExpectedValues | None, tiers: Mapping[int, int]
    ) -> dict[int, dict[str, Any] | None]:
        """Per window of RECENT_WINDOWS: the figures from the newest daily record at least that many
        battles before the newest one (day-granular: `battles` says how many they hold)."""
        records = timeline.battles_by_day(_day(today, MAX_DAYS - 1), today)
        careers = [{"battles": battles} for _, battles in records]
        figures: dict[int, dict[str, Any] | None] = {}
        for battles in RECENT_WINDOWS:
            index = recents.recent_baseline(careers, battles)
            figures[battles] = (
                None if index is None else cls._figures(timeline, records[index][0], records[-1][0], expected, tiers)
            )
        return figures

    async def period(self, region: str, account_id: int, first: str, last: str) -> dict[str, Any] | None:
        """Figures over [first, last] with the days they cover; None without per-tank records."""
        async with request_deadline():
            timeline = await self._timeline(region, account_id, first, last)
        return self._figures(timeline, first, last, *await self._inputs(region))

    async def recent(
        self, region: str, account_id: int, today: str, battles: int = RECENT_BATTLES
    ) -> dict[str, Any] | None:
        """Figures over roughly the last `battles` (one of RECENT_WINDOWS) battles: from the newest
        record at least that many battles before the newest one. None when the records do not
        reach that far."""
        async with request_deadline():
            timeline = await self._timeline(region, account_id, _day(today, MAX_DAYS - 1), today)
        return self._recent(timeline, today, *await self._inputs(region))[battles]

    @staticmethod
    def _history_since(periods: list[tuple[str, str]], today: str, weeks: tuple[str, int] | None) -> str:
        firsts = [first for first, _ in periods]
        if weeks is not None:
            firsts.append(week_bounds(*weeks)[0][0])
        return min([_day(today, MAX_DAYS - 1), *firsts])

    async def history_timeline(
        self,
        region: str,
        account_id: int,
        periods: list[tuple[str, str]],
        today: str,
        weeks: tuple[str, int] | None = None,
    ) -> Timeline:
        """The one read of the account's records a history answer needs (all of history_figures'
        periods), under the caller's deadline and gate slot (_build_history)."""
        return await self._timeline(region, account_id, self._history_since(periods, today, weeks), today)

    async def history_figures(
        self,
        timeline: Timeline,
        region: str,
        periods: list[tuple[str, str]],
        today: str,
        weeks: tuple[str, int] | None = None,
    ) -> tuple[list[dict[str, Any] | None], dict[int, dict[str, Any] | None], list[dict[str, Any] | None] | None]:
        """The figures of each (first, last) period, of the last ~100 and ~1,000 battles (by window)
        and, with `weeks`
        = (last day, days), of each week of week_bounds(last day, days), from the timeline
        history_timeline read (no database read; after the build's bounded reads)."""
        expected, tiers = await self._inputs(region)
        figures = [self._figures(timeline, first, last, expected, tiers) for first, last in periods]
        weekly = _weekly(timeline, weeks[0], weeks[1], expected, tiers) if weeks is not None else None
        return figures, self._recent(timeline, today, expected, tiers), weekly

    async def history(self, region: str, account_id: int, days: int) -> dict:
        """Concurrent identical requests share one build (single-flight per account, region, days
        and day). All of its reads (the snapshots, the tracker's last measured day, the per-tank
        records) hold one slot of the history-reads gate (else 503 at once) under one deadline
        (bounded_read: 503 database_unavailable with Retry-After past it)."""
        today = utc_day(self.clock())
        return await single_flight(
            self._history_flights,
            (region, account_id, days, today),
            lambda: self._build_history(region, account_id, days, today),
        )

    async def _build_history(self, region: str, account_id: int, days: int, today: str) -> dict:
        # Deltas need up to 90 days before the newest snapshot, whatever `days` is: one indexed
        # range read of at most one snapshot a day (≤ 493), only the fields the view uses.
        first = (dt.date.fromisoformat(today) - dt.timedelta(days=max(days, 91) + 1)).isoformat()
        async with bounded_read(self.store.history_reads):
            snapshots = await self.store.players.snapshots_since(
                region, account_id, first, today, fields=HISTORY_FIELDS
            )
            if not snapshots:
                raise APIError("no_history")
            through = None  # the last day the tracker measured the account, for the carry-forward
            through = await self.store.tracked.last_measured_day(region, account_id)
            view = history_view(region, account_id, snapshots, days, today, through=through)
            periods, weeks = self._figure_periods(view)
            timeline = await self.history_timeline(region, account_id, periods, today, weeks)
        await self._add_period_figures(view, timeline, region, today)
        await self._add_places(view, region, account_id)
        # The first day whose figures can carry the assistance (records written before release
        # 1.3.0 lack it): a period starting earlier has them null.
        view["assistance_known_from"] = timeline.complete_from()
        return view

    @staticmethod
    def _figure_periods(view: dict) -> tuple[list[tuple[str, str]], tuple[str, int]]:
        """The (from, to) of each delta with two snapshots, and the weeks' (last day, days)."""
        periods = [
            (delta["from"], delta["to"])
            for key, delta in view["deltas"].items()
            if not is_recent_key(key) and delta is not None
        ]
        return periods, (view["latest"]["date"], view["days"])

    async def _add_period_figures(self, view: dict, timeline: Timeline, region: str, today: str) -> None:
        """Each delta's `period`: the figures of the battles played over its days, from the
        per-tank records (null without them); `recent_<n>`: the last ~n battles; `weekly`:
        the same figures per 7-day week over the `days` window, ending on the newest snapshot's
        day as the deltas do."""
        periods, weeks = self._figure_periods(view)
        figures, recent, weekly = await self.history_figures(timeline, region, periods, today, weeks)
        deltas = [(key, delta) for key, delta in view["deltas"].items() if not is_recent_key(key) and delta is not None]
        for (key, delta), figure in zip(deltas, figures, strict=True):
            if figure is not None:
                figure["wn8_percentile"] = await self._wn8_standing(region, key, figure)
            delta["period"] = figure
        for battles, figure in recent.items():
            view["deltas"][recent_key(battles)] = figure
        view["weekly"] = weekly

    async def _add_places(self, view: dict, region: str, account_id: int) -> None:
        """Each delta period's `place`: the account's rank on the WN8 leaderboard of the same days
        (1, 7, 30 and 90: the leaderboards' windows) and how many are ranked there; null elsewhere,
        when it is not ranked, or before the first build."""
        deltas = [(key, delta["period"]) for key, delta in view["deltas"].items() if delta and delta.get("period")]
        if not deltas:
            return
        places = await self.leaderboards.places(region, account_id) if self.leaderboards is not None else {}
        for key, period in deltas:
            if not is_recent_key(key):
                period["place"] = places.get(key.removesuffix("d"))

    async def _wn8_standing(self, region: str, key: str, figure: dict[str, Any]) -> int | None:
        """The share (0..99 %) of the region's tracked accounts with STANDING_MIN_BATTLES battles in
        the population period of delta `key` ("7d": 7 days) whose WN8 over it was below this one's;
        null below that many battles, or before the tables are built."""
        days = int(key.removesuffix("d"))
        if self.tank_stats is None or days not in POPULATION_PERIODS or figure["battles"] < STANDING_MIN_BATTLES:
            return None
        table = await self.tank_stats.table(region, days)
        return standing(table.account_grid(), figure["wn8"]) if table is not None else None

    async def tanks(
        self, region: str, account_id: int, days: int, today: str | None = None, group_by: str | None = None
    ) -> dict[str, Any]:
        """The tanks endpoint's data: the whole period's figures and one row per tank owned.

        The `days` end where the history's deltas end, on the newer of the account's last measured
        day and its newest snapshot (a profile fetched today writes today's snapshot before the
        tracker's visit), so both cover the same days and `period` equals the history delta's.

        Concurrent identical requests share one build (single-flight per account, region, days and
        day); its reads hold one slot of the history-reads gate (else 503 at once) under one
        deadline (503 database_unavailable with Retry-After past it)."""
        today = today or utc_day(self.clock())
        return await single_flight(
            self._tanks_flights,
            (region, account_id, days, today, group_by),
            lambda: self._build_tanks(region, account_id, days, today, group_by),
        )

    async def _build_tanks(
        self, region: str, account_id: int, days: int, today: str, group_by: str | None = None
    ) -> dict[str, Any]:
        async with bounded_read(self.store.history_reads):
            measured = await self.store.tracked.last_measured_day(region, account_id)
            recent = await self.store.players.snapshots_since(
                region, account_id, _day(today, 1), today, fields=("date",)
            )
            newest = max([measured or "", *(doc["date"] for doc in recent)])
            last = min(today, newest) if newest else today
            first = _day(last, days)
            marks_first = _day(last, MARKS_WINDOW_DAYS)  # each tank's progress: the marks' own window
            timeline = await self._timeline(region, account_id, min(first, marks_first), last)
            mastery = mastery_rows(await self.store.tracked.mastery_payload(region, account_id))
        states = _states(timeline, first, last)
        if states is None:
            raise APIError("no_history", "no per-tank records for this account yet")
        (from_day, start), (to_day, end) = states
        expected, tiers = await self._inputs(region)
        vehicles = await self.ratings_source.vehicles(region)
        assist = recents.assist_change(timeline.assist_on(from_day), timeline.assist_on(to_day))
        figures = recents.state_figures(start, end, expected, tiers, assist)
        rows = recents.tank_rows(
            as_counters(start),
            as_counters(end),
            expected,
            vehicles,
            assist=assist,
            career_assist=timeline.assist_on(to_day),
            mastery={tank_id: level for tank_id, (level, _) in mastery.items()},
        )
        answer = {
            "account_id": account_id,
            "region": region,
            "days": days,
            "from": from_day,
            "to": to_day,
            "assistance_known_from": timeline.complete_from(),
            "expected_values_version": expected.version if expected is not None else None,
            "period": {key: figures[key] for key in recents.SUMMARY_FIGURES},
            "tanks": await self._with_marks(
                region,
                timeline,
                marks_first,
                last,
                await self._with_standing(region, days, rows),
                {tank_id: best for tank_id, (_, best) in mastery.items()},
            ),
        }
        if group_by is not None:
            answer["group_by"] = group_by
            answer["groups"] = recents.group_figures(
                recents.state_differences(start, end), vehicles, group_by, expected, tiers, assist
            )
        return answer

    async def _with_marks(
        self,
        region: str,
        timeline: Timeline,
        first: str,
        last: str,
        rows: list[dict[str, Any]],
        best_xp: Mapping[int, int | None],
    ) -> list[dict[str, Any]]:
        """Each row gains `marks`: the player's combined damage on the tank over the marks' window
        (MARKS_WINDOW_DAYS ending `last`), where it stands among the tank's players (the estimated
        mark progress) and what the next mark takes, against Wargaming's published thresholds when
        the tank has them, else the estimate (null below tier V or for a tank the encyclopedia
        lacks); and `mastery`: the best battle's XP against the published mastery badge thresholds
        (docs/data.md, "Marks of excellence" and "Official thresholds")."""
        table = await self.tank_stats.marks(region) if self.tank_stats is not None else None
        official = await self.official.current(region) if self.official is not None else None
        states = _states(timeline, first, last)
        diffs: dict[int, dict[str, int]] = {}
        assist = None
        window_from = None
        if states is not None:
            (window_from, start), (to_day, end) = states
            diffs = recents.state_differences(start, end)
            assist = recents.assist_change(timeline.assist_on(window_from), timeline.assist_on(to_day))
        for row in rows:
            published = official.thresholds(row["tank_id"]) if official is not None else None
            row["mastery"] = mastery_progress(row["career"]["mark_of_mastery"], best_xp.get(row["tank_id"]), published)
            if (row["tier"] or 0) < MIN_TIER:
                row["marks"] = None
                continue
            played = diffs.get(row["tank_id"]) or {}
            battles = played.get("battles", 0)
            known = battles > 0 and all(name in played for name in recents.ASSIST_COUNTERS)
            value = (
                combined_damage(battles, played["damage_dealt"], played["stun_assisted_damage"], assist)
                if known
                else None
            )
            value = round(value, 2) if value is not None else None
            estimate = table.thresholds(row["tank_id"]) if table is not None else None
            official_marks = (published or {}).get("marks")
            thresholds = [official_marks[key] for key in MARK_KEYS] if official_marks else estimate
            row["marks"] = {
                "window_days": MARKS_WINDOW_DAYS,
                "from": window_from,
                "battles": battles,
                "combined_damage": value,
                "percentile": standing(table.grid(row["tank_id"]), value) if table is not None else None,
                "estimated_marks": estimated_marks(value, thresholds),
                "next": next_mark(value, thresholds),
                "thresholds": named_marks(thresholds),
                "thresholds_source": THRESHOLDS_OFFICIAL
                if official_marks
                else (THRESHOLDS_ESTIMATE if estimate else None),
                "official_date": published["date"] if official_marks and published else None,
                "estimated_thresholds": named_marks(estimate),
                "method": MARKS_METHOD,
            }
        return rows

    async def _with_standing(self, region: str, days: int, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Each row gains `standing`: where its period stands among the tank's tracked players over
        the nearest population period (null before the tables are built)."""
        table = await self.tank_stats.table(region, standing_period(days)) if self.tank_stats is not None else None
        for row in rows:
            period = row["period"]
            row["standing"] = tank_standing(
                table, row["tank_id"], period["battles"], period["avg_damage"], period["wn8"]
            )
        return rows


THRESHOLDS_OFFICIAL = "official"  # a row's marks measured against Wargaming's published thresholds
THRESHOLDS_ESTIMATE = "estimate"  # ... against the thresholds estimated from the tracked players


def mastery_progress(badge: int, best_xp: int | None, published: Mapping[str, Any] | None) -> dict[str, Any]:
    """A tank row's `mastery`: the badge the game gave (0-4), the best battle's base XP
    (tanks/stats max_xp; null when kept before the service read it), and, where Wargaming publishes
    the tank's XP distribution, its badge thresholds and the highest badge that battle would reach
    against them today (an indication only: docs/data.md, "Official thresholds")."""
    xp = (published or {}).get("mastery_xp")
    thresholds = [xp[key] for key in MASTERY_KEYS] if xp else None
    return {
        "badge": badge,
        "best_xp": best_xp,
        "thresholds": dict(xp) if xp else None,
        "best_xp_reaches": mastery_reach(best_xp, thresholds),
        "date": (published or {}).get("date") if xp else None,
        "source": OFFICIAL_SOURCE if xp else None,
    }
