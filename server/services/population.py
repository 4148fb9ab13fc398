"""The daily job behind the tank statistics: per-tank day sums, period tables and series from the tracked changes."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any

from server.contract.catalogue import (
    LEADERBOARD_WINDOWS,
    MARKS_MIN_BATTLES,
    MARKS_MIN_PLAYERS,
    MARKS_WINDOW_DAYS,
    POPULATION_MIN_BATTLES,
    POPULATION_MIN_PLAYERS,
    POPULATION_PERIODS,
    STANDING_MIN_BATTLES,
)
from server.domain.days import DAY_SECONDS, day_start, days_before, utc_day
from server.domain.expected import METHOD_VERSION, WINDOW_DAYS, ComputedRow, Fit, Minimums, fill_gaps, recompute_all
from server.domain.marks import marks_table
from server.domain.population import BATTLES, DAMAGE, WINS, PeriodAccumulator, career_table, day_sums
from server.domain.records import unpack, unpack_changes
from server.domain.strength import STRENGTH_MIN_OTHER_BATTLES, strength_table
from server.services.concurrency import dismantle
from server.services.leaderboards import (
    BOOKS_CHUNK,
    Boards,
    LeaderboardBuilder,
    Plays,
    TankBoards,
    window_boards,
    window_play,
    window_tanks,
)
from server.services.panel import ACTIVE_DAYS
from server.serving.answers import POPULATION_TAG, Tag, no_answer_cache
from store.client import job_deadline
from store.constants import REGIONS
from store.expected import ExpectedTables, table_id
from store.population import pack_grid, population_id
from store.tracker import tracked_id

if TYPE_CHECKING:
    from server.services.expected import Ratings
    from store.store import Store

log = logging.getLogger("statsapi.population")

BUILD_EVERY = 3600  # seconds between looks for a new complete day
# A UTC day's changes are complete this long after it ends: a pass batch or a live lookup begun
# before midnight writes its changes under the day it began on.
SETTLE_SECONDS = 3600
SERIES_DAYS = max(POPULATION_PERIODS)  # a tank's daily series covers the longest period
PAUSE_SECONDS = 0.02  # between two days' reads: requests run in between


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while the job runs. Its per-(account, tank) sums are millions
    of small lists that live for the whole build; a full collection scans every one of them while
    holding the interpreter (from the job's worker threads too), so each held the event loop and
    every request (docs/benchmarks.md, "The figures behind the code's choices"). Acyclic, they
    are freed by reference counting when the build drops them; the service's own cycles made
    meanwhile wait for the first collection after it (docs/architecture.md, "Adding a job")."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def newest_complete_day(now: float) -> str:
    """The newest UTC day whose changes are all written (SETTLE_SECONDS after it ended)."""
    return utc_day(now - SETTLE_SECONDS - DAY_SECONDS)


class PopulationService:
    """Builds, once per complete UTC day and region, from the tracked accounts' per-tank changes
    (store.population.TankChanges, written by the tracker): the day sums per tank (tank_days),
    the table of every tank over each period of POPULATION_PERIODS ending that day (tank_periods:
    sums, players and the percentile grids of the players' average damage and tank WN8), and each
    tank's daily series (tank_series). Database work per run and region: one indexed read per day
    of the longest period (O(active account-days)), the writes replace whole documents (running
    twice stores the same), and no upstream request."""

    def __init__(
        self,
        store: Store,
        ratings_source: Ratings,
        clock: Callable[[], float] = time.time,
        on_expected: Callable[[], None] | None = None,
        after_region: Callable[[str, str], Awaitable[Any]] | None = None,
        on_write: Callable[[Tag], None] = no_answer_cache,
    ) -> None:
        self.store = store
        self.on_write = on_write  # told POPULATION_TAG once a region's tables are stored
        # Called with (region, through) after a region's tables are stored: the daily bulk files.
        self.after_region = after_region
        self.on_expected = on_expected  # called after a computed expected-values table is stored
        self.ratings_source = ratings_source
        self.clock = clock
        self.pause = PAUSE_SECONDS
        self.leaderboards = LeaderboardBuilder(store, clock=clock)

    async def build(self, slot: int | None = None, force: bool = False) -> str:
        """The job: each region whose tables do not yet end on the newest complete day is built."""
        through = newest_complete_day(self.clock())
        with collector_paused():
            built = await self._build_regions(through, force)
        return f"built through {through}: " + "; ".join(built) if built else f"up to date through {through}"

    async def _build_regions(self, through: str, force: bool) -> list[str]:
        built = []
        for region in REGIONS:
            with job_deadline():
                current = await self.store.population.periods.get(region, max(POPULATION_PERIODS))
            if not force and current is not None and current.get("through") == through:
                continue
            figures = await self.build_region(region, through)
            self.on_write(POPULATION_TAG)
            built.append(f"{region} {figures['accounts']} accounts, {figures['tanks']} tanks")
            if self.after_region is not None:
                try:
                    await self.after_region(region, through)
                except Exception:  # the tables stand; the region's earlier files stay listed
                    log.exception("after the %s tables of %s", region, through)
        return built

    async def build_region(self, region: str, through: str) -> dict[str, int]:
        """Read the longest period's changes of `region` day by day (newest first), store each day's
        sums, each period's table when its first day is reached, then the tanks' series."""
        loaded = await self.ratings_source.expected_values()  # the public table: computed rows fit under it
        expected = await self.ratings_source.expected_values(region)  # what the region's ratings use
        vehicles = await self.ratings_source.vehicles(region)  # the leaderboards' tier and type filters
        accumulator = PeriodAccumulator()
        boards: dict[str, Boards] = {}  # each leaderboard window's figures per account and filter
        tanks: dict[str, TankBoards] = {}  # ... and per account and tank
        plays: dict[str, Plays] = {}  # ... and every account's battles, wins and WN8 (the clans')
        players: dict[str, int] = {}
        who: dict[int, tuple[str | None, int | None]] = {}  # each account's nickname and clan id
        wtr: dict[int, int] = {}  # ... and its WTR
        sums_by_day: dict[str, dict[int, list[int]]] = {}
        periods = sorted(POPULATION_PERIODS)
        now = self.clock()
        tanks_seen = 0
        panel = await PanelPopulation.of(self.store, region)
        for k in range(max(periods)):
            day = days_before(through, k)
            with job_deadline():
                marked = await self.store.population.changes.of_day_marked(region, day)
            # Unpacked in a worker thread: thousands of documents a day at scale, whose decoding on
            # the event loop held it for hundreds of ms. The tracked population leaves out the
            # accounts tracked for the random panel only (docs/data.md, "The random panel").
            changes = await asyncio.to_thread(unpack_changes, [change for change, only in marked if not only])
            if panel is not None:
                await panel.add(day, marked)
            # A day's changes are one per account that played it (thousands at scale): summed in a
            # worker thread, as on the loop they held it for each day (docs/benchmarks.md, "The figures behind the code's choices").
            accounts, sums = await asyncio.to_thread(day_sums, changes)
            await asyncio.to_thread(accumulator.add, changes)
            if accounts:  # a day nobody played stores nothing (a fresh deployment: 90 empty days)
                with job_deadline():
                    await self.store.population.days.save(region, day, accounts, sums, now)
            sums_by_day[day] = sums
            if k + 1 == WINDOW_DAYS and loaded is not None:
                await self._expected_table(region, through, accumulator, loaded, now, panel)
            if k + 1 == MARKS_WINDOW_DAYS:
                await self._marks(region, through, accumulator, now)
                if panel is not None:
                    await panel.save_marks(through, await self.ratings_source.tiers(region), now)
            if str(k + 1) in LEADERBOARD_WINDOWS:
                # Pure maths in a worker thread; nothing changes the accumulator while this awaits.
                window = str(k + 1)
                boards[window] = await asyncio.to_thread(
                    window_boards, accumulator.accounts, accumulator.assists, expected, vehicles, window
                )
                tanks[window] = await asyncio.to_thread(
                    window_tanks, accumulator.accounts, accumulator.assists, expected, window
                )
                plays[window] = await asyncio.to_thread(window_play, accumulator.accounts, boards[window], expected)
                players[window] = len(accumulator.accounts)
            if k + 1 in periods:
                # In a worker thread: the 90-day table is pure Python per (account, tank) pair (the
                # tank WN8s), which on the loop would stall every request as long (docs/benchmarks.md, "The figures behind the code's choices").
                # Nothing changes the accumulator while this awaits.
                table = await asyncio.to_thread(
                    accumulator.table, expected, POPULATION_MIN_BATTLES, POPULATION_MIN_PLAYERS, STANDING_MIN_BATTLES
                )
                # Each tank's strength with its drivers' skill taken out (docs/data.md, "Tank
                # strength"): pure maths over the same sums, in a worker thread.
                tiers = {t: int(v["tier"]) for t, v in vehicles.items() if v.get("tier")}
                table["strength"] = await asyncio.to_thread(
                    strength_table, accumulator.accounts, tiers, STRENGTH_MIN_OTHER_BATTLES
                )
                if k + 1 == max(periods):
                    # The accounts that played in the longest period, from their tracked states:
                    # the career WN8 distribution, and the career leaderboards with everyone's names.
                    (
                        boards["career"],
                        tanks["career"],
                        plays["career"],
                        who,
                        states,
                        wtr,
                    ) = await self.leaderboards.career(region, list(accumulator.accounts), expected, vehicles)
                    players["career"] = len(states)
                    # A worker thread, as for the period tables: one account WN8 per tracked account.
                    table["career"] = await asyncio.to_thread(
                        career_table, states, expected, STANDING_MIN_BATTLES, POPULATION_MIN_PLAYERS
                    )
                    await dismantle(states)  # an unpacked state per account: freed item by item
                    del states
                if panel is not None:
                    await panel.save_period(k + 1, through, expected, tiers, now)
                tanks_seen = max(tanks_seen, len(table["tanks"]))
                with job_deadline():
                    await self.store.population.periods.save(
                        period_document(region, k + 1, through, table, expected, now)
                    )
            await asyncio.sleep(self.pause)
        await self.leaderboards.save(region, through, boards, tanks, players, who, plays, wtr)
        marks_by_day = await self._marks_by_day(region, sorted(sums_by_day))
        # Documents of every tank's 90 days (~600 tanks): built in a worker thread, like the sums,
        # before the write's deadline starts (a busy core slows the maths, not the write).
        series = await asyncio.to_thread(series_documents, region, through, sums_by_day, marks_by_day)
        with job_deadline():
            await self.store.population.series.save_many(series)
        if panel is not None:
            await panel.save_series(through)
        accounts = len(accumulator.accounts)
        await dismantle(
            accumulator.accounts,
            accumulator.assists,
            accumulator.partial,
            *boards.values(),
            *tanks.values(),
            *plays.values(),
            who,
            sums_by_day,
            series,
            marks_by_day,
        )
        return {"accounts": accounts, "tanks": tanks_seen}

    async def _expected_table(
        self,
        region: str,
        through: str,
        accumulator: PeriodAccumulator,
        loaded: Any,
        now: float,
        panel: PanelPopulation | None = None,
    ) -> None:
        """The expected values of the WINDOW_DAYS ending `through` (docs/expected-values.md), from
        the accumulated per-account sums (no extra read): rows for the tanks the loaded table
        lacks, and every tank refitted (/expected-values?source=computed, the comparison, and
        --expected-values-source computed). Each tank's row is fitted over the random panel where
        the panel has the sample for it (the row's minimums met by its accounts), else over the
        tracked accounts (docs/data.md, "The random panel"). Pure maths in a worker thread (each fit
        up to 20-30 passes over the accounts); nothing changes the accumulators while this awaits."""
        minimums = Minimums()
        gaps, every = await _fits(accumulator.accounts, loaded, minimums)
        if panel is not None and panel.accumulator.accounts:
            panel_gaps, panel_every = await _fits(panel.accumulator.accounts, loaded, minimums)
            fits = {"gaps": prefer(panel_gaps, gaps), "computed": prefer(panel_every, every)}
            panel_size: int | None = panel.facts["size"]
        else:
            fits = {"gaps": (gaps, set()), "computed": (every, set())}
            panel_size = None
        if not fits["gaps"][0].rows and not fits["computed"][0].rows:
            return  # too few players for any row (a new deployment): no table, /expected-values says so
        with job_deadline():
            await self.store.expected_tables.save(
                expected_document(
                    region, through, fits, minimums, getattr(loaded, "version", None), now, panel_size=panel_size
                )
            )
        if self.on_expected is not None:
            self.on_expected()

    async def _marks(self, region: str, through: str, accumulator: PeriodAccumulator, now: float) -> None:
        """The mark thresholds of the MARKS_WINDOW_DAYS ending `through` (docs/data.md, "Marks of
        excellence"), from the accumulated per-account sums (no extra read): the region's current
        table (tank_periods `{region}:marks`, with each tank's percentile grid) and the day's
        thresholds (tank_marks). Pure maths in a worker thread; nothing changes the accumulator
        while this awaits."""
        tiers = await self.ratings_source.tiers(region)
        table = await asyncio.to_thread(
            marks_table, accumulator.accounts, accumulator.assists, tiers, MARKS_MIN_BATTLES, MARKS_MIN_PLAYERS
        )
        with job_deadline():
            await self.store.population.periods.save(marks_document(region, through, table, now))
            await self.store.population.marks.save(
                region,
                through,
                {t: [*(e["thresholds"] or [None] * 4), e["players"], e["battles"]] for t, e in table.items()},
                now,
            )

    async def _marks_by_day(self, region: str, days: list[str]) -> dict[str, dict[str, list]]:
        """Each day's stored thresholds ({tank_id as str: [1st, 2nd, 3rd, top, players, battles]})
        for the series: one point read per day, with a pause between (a background job)."""
        out: dict[str, dict[str, list]] = {}
        for day in days:
            with job_deadline():
                doc = await self.store.population.marks.get(region, day)
            if doc is not None:
                out[day] = doc["tanks"]
            await asyncio.sleep(self.pause)
        return out


def _rows(rows: dict[int, ComputedRow]) -> dict[str, list]:
    return {
        str(tank_id): [
            round(row.expectation.damage, 3),
            round(row.expectation.spot, 3),
            round(row.expectation.frag, 3),
            round(row.expectation.defence, 3),
            round(row.expectation.win_rate, 3),
            row.players,
            row.battles,
        ]
        for tank_id, row in sorted(rows.items())
    }


async def _fits(accounts: dict[int, dict[int, list[int]]], loaded: Any, minimums: Minimums) -> tuple[Fit, Fit]:
    """The gap rows and every tank refitted over `accounts`, in a worker thread each."""
    tanks = {tank_id for rows in accounts.values() for tank_id in rows}
    gaps = await asyncio.to_thread(fill_gaps, accounts, loaded, tanks, minimums)
    every = await asyncio.to_thread(recompute_all, accounts, loaded, tanks, minimums)
    return gaps, every


def prefer(panel: Fit, tracked: Fit) -> tuple[Fit, set[int]]:
    """The panel's rows where it has them, the tracked accounts' for the rest (both fits are set on
    the loaded table's scale), and the tanks whose row is the panel's."""
    rows = {**tracked.rows, **panel.rows}
    return Fit(rows, max(panel.passes, tracked.passes), panel.converged and tracked.converged), set(panel.rows)


def expected_document(
    region: str,
    through: str,
    fits: dict[str, tuple[Fit, set[int]]],
    minimums: Minimums,
    base: str | None,
    now: float,
    panel_size: int | None = None,
) -> dict:
    """A computed table as store.expected.ExpectedTables keeps it (version: day + method version);
    `fits`: the "gaps" and "computed" parts, each a fit and the tanks whose row the panel gave."""
    version = f"{through}+{METHOD_VERSION}"
    return {
        "_id": table_id(region, version),
        "r": region,
        "version": version,
        "through": through,
        "window": {"from": days_before(through, WINDOW_DAYS - 1), "through": through, "days": WINDOW_DAYS},
        "method": METHOD_VERSION,
        "base": base,
        "minimums": {
            "tank_battles": minimums.tank_battles,
            "account_battles": minimums.account_battles,
            "players": minimums.players,
            "row_battles": minimums.row_battles,
        },
        "built_at": now,
        "x": ExpectedTables.expiry(through),
        # The random panel's active players when the table was fitted (null without a panel).
        "panel_size": panel_size,
        **{
            part: {"passes": fit.passes, "converged": fit.converged, "rows": _rows(fit.rows), "panel": sorted(panel)}
            for part, (fit, panel) in fits.items()
        },
    }


def period_keys(region: str, name: str, days: int, through: str, population: str = "tracked") -> dict[str, Any]:
    """What a tank_periods document opens with: its id (store.population.population_id), region and period of `days` through `through`."""
    return {
        "_id": population_id(region, name, population),
        "r": region,
        "days": days,
        "from": days_before(through, days - 1),
        "through": through,
    }


def period_document(
    region: str, days: int, through: str, table: dict, expected: Any, now: float, population: str = "tracked"
) -> dict:
    """The tank_periods document of one (region, period) from PeriodAccumulator.table."""

    def grid(values: list[float] | None) -> Any:
        return pack_grid(values) if values is not None else None

    accounts = table["accounts"]
    career = table.get("career")
    strength = table.get("strength") or {}
    return {
        **period_keys(region, str(days), days, through, population),
        "min_battles": POPULATION_MIN_BATTLES,
        "min_players": POPULATION_MIN_PLAYERS,
        "expected_values_version": expected.version if expected is not None else None,
        "expected_values_computed_version": expected.computed_version if expected is not None else None,
        "built_at": now,
        "accounts": {
            "players": accounts["players"],
            "qualified": accounts["qualified"],
            "min_battles": STANDING_MIN_BATTLES,
            "wn8": grid(accounts["wn8"]),
        },
        # The longest period's document only: the career WN8 of the accounts that played in it.
        "career": {
            "players": career["players"],
            "qualified": career["qualified"],
            "min_battles": STANDING_MIN_BATTLES,
            "wn8": grid(career["wn8"]),
        }
        if career is not None
        else None,
        "tanks": {
            str(tank_id): {
                "players": entry["players"],
                "sums": entry["sums"],
                # [b^2, w^2, w b, d^2, d b] summed over the players (the rates' intervals)
                "moments": entry["moments"],
                "qualified": entry["qualified"],
                "rated": entry["rated"],
                "damage": grid(entry["damage"]),
                "wn8": grid(entry["wn8"]),
                # [players, battles, win_rate, baseline_win_rate, its se, avg_damage, baseline_damage, its se]
                "strength": strength.get(tank_id),
            }
            for tank_id, entry in table["tanks"].items()
        },
    }


def marks_document(
    region: str, through: str, table: dict[int, dict[str, Any]], now: float, population: str = "tracked"
) -> dict:
    """The tank_periods document `{region}:marks` (`{region}:panel:marks`): the current thresholds and grids (marks_table)."""
    return {
        **period_keys(region, "marks", MARKS_WINDOW_DAYS, through, population),
        "min_battles": MARKS_MIN_BATTLES,
        "min_players": MARKS_MIN_PLAYERS,
        "built_at": now,
        "tanks": {
            str(tank_id): {
                "players": entry["players"],
                "battles": entry["battles"],
                "thresholds": entry["thresholds"],
                "grid": pack_grid(entry["grid"]) if entry["grid"] is not None else None,
            }
            for tank_id, entry in table.items()
        },
    }


def series_documents(
    region: str,
    through: str,
    sums_by_day: dict[str, dict[int, list[int]]],
    marks_by_day: dict[str, dict[str, list]] | None = None,
    population: str = "tracked",
) -> list[dict]:
    """One tank_series document per tank played in the last SERIES_DAYS days (oldest day first),
    with each of its days' mark thresholds ([1st, 2nd, 3rd, top] or null) when `marks_by_day` has them."""
    out: dict[int, dict[str, Any]] = {}
    for day in sorted(sums_by_day):
        if day_start(day) < day_start(through) - (SERIES_DAYS - 1) * DAY_SECONDS:
            continue
        for tank_id, row in sums_by_day[day].items():
            doc = out.get(tank_id)
            if doc is None:
                doc = out[tank_id] = {
                    "_id": population_id(region, str(tank_id), population),
                    "r": region,
                    "tank_id": tank_id,
                    "through": through,
                    "days": [],
                    "players": [],
                    "battles": [],
                    "wins": [],
                    "damage": [],
                    "marks": [],
                }
            doc["days"].append(day)
            marks = ((marks_by_day or {}).get(day) or {}).get(str(tank_id))
            doc["marks"].append(marks[:4] if marks is not None and marks[0] is not None else None)
            doc["players"].append(row[0])
            doc["battles"].append(row[1 + BATTLES])
            doc["wins"].append(row[1 + WINS])
            doc["damage"].append(row[1 + DAMAGE])
    return list(out.values())


class PanelPopulation:
    """The same tables over the realm's random panel (server/services/panel.py), built in the same
    pass over the days as the tracked population's, stored apart (store.population.population_id):
    the frame's accounts' changes, whether tracked for the panel only or looked up too. An account
    counts in a period when it played in it, so a table of D days is over the panel members that
    played in those D days (the 30-day table: the panel itself, as of its last day). The
    leaderboards are not built from it (they rank people looked up here); the expected values take its
    rows where it has the sample (PopulationService._expected_table), and its ACTIVE_DAYS table
    carries its members' career WN8 distribution (a profile's percentile)."""

    def __init__(self, store: Store, region: str, doc: dict) -> None:
        self.store = store
        self.region = region
        self.frame = {int(a) for a in doc.get("frame") or ()}
        # What an answer over the panel says of it (/status's figures as of its last refresh).
        self.facts = {
            "size": int(doc.get("members") or 0),
            "frame": len(self.frame),
            "refreshed_at": int(doc["refreshed_at"]) if doc.get("refreshed_at") else None,
        }
        self.accumulator = PeriodAccumulator()
        self.sums_by_day: dict[str, dict[int, list[int]]] = {}

    @classmethod
    async def of(cls, store: Store, region: str) -> PanelPopulation | None:
        """The region's panel as its last refresh left it; None without one (no frame drawn)."""
        with job_deadline():
            doc = await store.panels.get(region)
        return cls(store, region, doc) if doc is not None and doc.get("frame") else None

    async def add(self, day: str, marked: list[tuple[tuple[int, bytes, list[int] | None], bool]]) -> None:
        """One day's changes (TankChanges.of_day_marked): the frame's accounts' are summed."""
        mine = [change for change, _ in marked if change[0] in self.frame]
        changes = await asyncio.to_thread(unpack_changes, mine)
        _, self.sums_by_day[day] = await asyncio.to_thread(day_sums, changes)
        await asyncio.to_thread(self.accumulator.add, changes)

    async def save_period(self, days: int, through: str, expected: Any, tiers: dict[int, int], now: float) -> None:
        """The panel's table of the `days` ending `through` (the tracked table's figures, strength included)."""
        table = await asyncio.to_thread(
            self.accumulator.table, expected, POPULATION_MIN_BATTLES, POPULATION_MIN_PLAYERS, STANDING_MIN_BATTLES
        )
        table["strength"] = await asyncio.to_thread(
            strength_table, self.accumulator.accounts, tiers, STRENGTH_MIN_OTHER_BATTLES
        )
        if days == ACTIVE_DAYS:
            table["career"] = await self.career(expected)
        doc = period_document(self.region, days, through, table, expected, now, "panel")
        doc["panel"] = self.facts
        with job_deadline():
            await self.store.population.periods.save(doc)

    async def career(self, expected: Any) -> dict[str, Any]:
        """The career WN8 distribution of the realm's active players (a profile's percentile): over
        the panel's accounts that played in the ACTIVE_DAYS added so far, from their tracked states
        (BOOKS_CHUNK point reads at a time, unpacked in a worker thread)."""
        keys = [tracked_id(self.region, a) for a in self.accumulator.accounts]
        states: list[dict[int, list[int]]] = []
        for start in range(0, len(keys), BOOKS_CHUNK):
            with job_deadline():
                books = await self.store.tracked.ranking_books(keys[start : start + BOOKS_CHUNK])

            def unpacked(books: dict[str, dict] = books) -> list[dict[int, list[int]]]:
                return [unpack(doc["state"]) for doc in books.values() if doc.get("state")]

            states.extend(await asyncio.to_thread(unpacked))
        table = await asyncio.to_thread(career_table, states, expected, STANDING_MIN_BATTLES, POPULATION_MIN_PLAYERS)
        await dismantle(states)
        return table

    async def save_marks(self, through: str, tiers: Any, now: float) -> None:
        """The panel's mark thresholds of the MARKS_WINDOW_DAYS ending `through`."""
        table = await asyncio.to_thread(
            marks_table,
            self.accumulator.accounts,
            self.accumulator.assists,
            tiers,
            MARKS_MIN_BATTLES,
            MARKS_MIN_PLAYERS,
        )
        doc = marks_document(self.region, through, table, now, "panel")
        doc["panel"] = self.facts
        with job_deadline():
            await self.store.population.periods.save(doc)

    async def save_series(self, through: str) -> None:
        """Each tank's daily series over the panel (without daily thresholds: they are the tracked population's)."""
        series = await asyncio.to_thread(series_documents, self.region, through, self.sums_by_day, None, "panel")
        with job_deadline():
            await self.store.population.series.save_many(series)
        await dismantle(self.accumulator.accounts, self.accumulator.assists, self.sums_by_day, series)
