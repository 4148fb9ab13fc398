"""Tank statistics answers (/tanks/stats, /tank/{tank_id}/{region}) from the daily job's tables."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from server.contract.catalogue import (
    HOT_COPY_SECONDS,
    MARKS_CHANGE_DAYS,
    MARKS_METHOD,
    OFFICIAL_METHOD,
    POPULATION_MIN_BATTLES,
    POPULATION_MIN_PLAYERS,
    POPULATION_PERIODS,
    STANDING_MIN_BATTLES,
    STANDING_PANEL_MIN_PLAYERS,
    TABLE_PERCENTILES,
    TANK_PERCENTILES,
)
from server.contract.catalogue.figures import STRENGTH_MIN_BATTLES, STRENGTH_MIN_PLAYERS
from server.contract.errors import APIError
from server.domain.days import days_before, utc_day
from server.domain.marks import MARK_NAMES, MIN_TIER, threshold_intervals
from server.domain.population import rate_intervals, standing
from server.domain.strength import strength_figures
from server.domain.tank_lists import TankQuery
from server.services.encyclopedia import catalogue_fields
from server.services.official import SOURCE
from server.services.panel import ACTIVE_DAYS
from server.serving.answers import POPULATION_TAG, Tag, no_answer_cache
from store.client import request_deadline
from store.constants import TANK_COUNTERS
from store.population import unpack_grid

if TYPE_CHECKING:
    from server.services.encyclopedia import VehicleCatalogue
    from server.services.expected import Ratings
    from server.services.official import Official, OfficialFigures
    from store.store import Store

C = {name: i for i, name in enumerate(TANK_COUNTERS)}
POPULATION_NOTE = (
    "the tracked accounts (players looked up here and members of cached clans), measured daily: "
    "not a random sample of the server"
)


def population_of(doc: Mapping[str, Any]) -> dict[str, Any]:
    """What an answer over one table says of its population: `population` (a sentence naming it),
    `population_kind` (panel or tracked) and `panel_size` (the panel's active players as of its
    last refresh; null over the tracked accounts)."""
    panel = doc.get("panel")
    if panel is None:
        return {"population": POPULATION_NOTE, "population_kind": "tracked", "panel_size": None}
    size = int(panel.get("size") or 0)
    return {
        "population": f"a random panel of {size:,} active players of the realm (accounts drawn uniformly "
        "from its account ids, that played in the last 30 days), measured daily",
        "population_kind": "panel",
        "panel_size": size,
    }


NO_PANEL = "no random panel's table for this region and period yet (population=tracked answers)"
# The head fields a tank page's `marks` leaves to the page's own head.
MARKS_PAGE_LEFT_OUT = ("region", "population", "population_kind", "panel_size")


def _rate(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 2) if whole else None


def _per(part: int, battles: int) -> float | None:
    return round(part / battles, 2) if battles else None


def _percentiles(grid: Sequence[float] | None, points: Sequence[int]) -> dict[str, float] | None:
    return {f"p{p}": round(grid[p - 1], 2) for p in points} if grid is not None else None


def period_head(region: str, days: int, doc: Mapping[str, Any]) -> dict[str, Any]:
    """What an answer over one period table opens with: its region, period, build and population."""
    return {
        "region": region,
        "days": days,
        "from": doc["from"],
        "through": doc["through"],
        "built_at": int(doc["built_at"]),
        **population_of(doc),
    }


def tank_figures(entry: Mapping[str, Any], min_players: int, sampled: bool = False) -> dict[str, Any]:
    """The population figures of one tank over a period from its tank_periods entry: null below
    `min_players` players (the sample is always given). `sampled`: the players are a random sample
    (the panel): the win rate and average damage carry their 95 % intervals (else null: the tracked
    accounts are no sample of the realm, docs/data.md "The random panel")."""
    sums, players = entry["sums"], int(entry["players"])
    battles = sums[C["battles"]]
    enough = players >= min_players
    intervals = rate_intervals(players, sums, entry.get("moments") if enough and sampled else None)
    return {
        "players": players,
        "battles": battles,
        "win_rate": _rate(sums[C["wins"]], battles) if enough else None,
        "win_rate_interval": intervals["win_rate_interval"],
        "avg_damage": _per(sums[C["damage_dealt"]], battles) if enough else None,
        "avg_damage_interval": intervals["avg_damage_interval"],
        "avg_frags": _per(sums[C["frags"]], battles) if enough else None,
        "avg_xp": _per(sums[C["xp"]], battles) if enough else None,
        "survival_rate": _rate(sums[C["survived_battles"]], battles) if enough else None,
        "hit_rate": _rate(sums[C["hits"]], sums[C["shots"]]) if enough else None,
    }


class PeriodTable:
    """One decoded tank_periods document: its tanks' figures, grids unpacked on first use."""

    def __init__(self, doc: Mapping[str, Any]) -> None:
        self.doc = doc
        self.entries: dict[int, Mapping[str, Any]] = {int(t): e for t, e in doc["tanks"].items()}
        self._grids: dict[tuple[int, str], list[float] | None] = {}
        # The table's rows as /tanks/stats answers them, built once per vehicles mapping (a request
        # filters, sorts and pages them; nobody changes a row): (vehicles, rows).
        self.rows_memo: tuple[Mapping[int, Any], list[dict[str, Any]]] | None = None

    def grid(self, tank_id: int, kind: str) -> list[float] | None:
        key = (tank_id, kind)
        if key not in self._grids:
            entry = self.entries.get(tank_id) or {}
            self._grids[key] = unpack_grid(entry.get(kind))
        return self._grids[key]

    def account_grid(self) -> list[float] | None:
        return unpack_grid((self.doc.get("accounts") or {}).get("wn8"))

    def career_grid(self) -> list[float] | None:
        return unpack_grid((self.doc.get("career") or {}).get("wn8"))


class MarksTable:
    """One decoded `{region}:marks` document (server/services/population.py marks_document)."""

    def __init__(self, doc: Mapping[str, Any]) -> None:
        self.doc = doc
        self.entries: dict[int, Mapping[str, Any]] = {int(t): e for t, e in doc["tanks"].items()}
        self._grids: dict[int, list[float] | None] = {}
        self.rows_memo: tuple[Any, list[dict[str, Any]]] | None = None

    def thresholds(self, tank_id: int) -> list[float] | None:
        return (self.entries.get(tank_id) or {}).get("thresholds")

    def grid(self, tank_id: int) -> list[float] | None:
        if tank_id not in self._grids:
            self._grids[tank_id] = unpack_grid((self.entries.get(tank_id) or {}).get("grid"))
        return self._grids[tank_id]

    def intervals(self, tank_id: int) -> dict[str, Any] | None:
        """The tank's thresholds' 95 % intervals over the random panel (threshold_intervals); None
        over the tracked accounts (no random sample) or without thresholds."""
        entry = self.entries.get(tank_id)
        thresholds = (entry or {}).get("thresholds")
        if self.doc.get("panel") is None or entry is None or thresholds is None:
            return None
        return threshold_intervals(self.grid(tank_id), thresholds[3], int(entry["players"]))


def named_marks(values: Sequence[float | None] | None) -> dict[str, float | None] | None:
    """[1st, 2nd, 3rd, top] as {first, second, third, top}; None for none."""
    if values is None or values[0] is None:
        return None
    return dict(zip((*MARK_NAMES, "top"), values))


def marks_change(now: Sequence[Any] | None, then: Sequence[Any] | None) -> dict[str, float | None] | None:
    """Each threshold now minus then ({first, second, third, top}); None when either is unknown."""
    if now is None or then is None or now[0] is None or then[0] is None:
        return None
    return {name: round(a - b, 2) for name, a, b in zip((*MARK_NAMES, "top"), now, then)}


class TankStatsService:
    """Reads the tables the daily job (server/services/population.py) builds. A table is one
    document per (region, period); it is decoded once and reused HOT_COPY_SECONDS."""

    def __init__(
        self,
        store: Store,
        ratings_source: Ratings,
        clock: Callable[[], float] = time.time,
        on_write: Callable[[Tag], None] = no_answer_cache,
        monotonic: Callable[[], float] = time.monotonic,
        official: OfficialFigures | None = None,
        catalogue: VehicleCatalogue | None = None,
    ) -> None:
        self.store = store
        self.catalogue = catalogue  # the encyclopedia's fields a tank page carries
        self.official = official  # Wargaming's published thresholds, beside the estimates
        self.ratings_source = ratings_source
        self.clock = clock
        self.monotonic = monotonic  # the clock of the decoded copies' HOT_COPY_SECONDS
        # Told POPULATION_TAG when a decoded table gives way to a newer build: the answers kept
        # from the older one go with it (a JSON kept from one build and a CSV built from the next
        # told two truths at once).
        self.on_write = on_write
        self._tables: dict[tuple[str, int, str], tuple[float, PeriodTable]] = {}
        self._marks: dict[tuple[str, str], tuple[float, MarksTable]] = {}
        # Past days' thresholds (tank_marks) by (region, day): written once by the daily job.
        self._marks_days: dict[tuple[str, str], tuple[float, dict | None]] = {}

    def forget(self, region: str) -> None:
        """Drop the region's decoded copies: the job has just rebuilt them (the daily files read them)."""
        for key in [key for key in self._tables if key[0] == region]:
            del self._tables[key]
        for marks_key in [marks_key for marks_key in self._marks if marks_key[0] == region]:
            del self._marks[marks_key]

    def _newer_build(self, region: str) -> None:
        """A table of `region` was rebuilt: every decoded copy of the region is read anew (one build,
        not one table of each), and every answer kept from them goes."""
        self.forget(region)
        self.on_write(POPULATION_TAG)

    async def table(self, region: str, days: int, population: str = "tracked") -> PeriodTable | None:
        """The (region, days) table of `population` (panel or tracked), None before the job built
        one. Kept decoded: every HOT_COPY_SECONDS a point read of its build time says whether the
        job rebuilt it (a table of every tank is hundreds of KB, and history answers read three)."""
        key = (region, days, population)
        kept = self._tables.get(key)
        now = self.monotonic()
        if kept is not None and now - kept[0] < HOT_COPY_SECONDS:
            return kept[1]
        async with request_deadline():
            if kept is not None:
                built = await self.store.population.periods.built_at(region, days, population)
                if built == kept[1].doc["built_at"]:
                    self._tables[key] = (now, kept[1])
                    return kept[1]
            doc = await self.store.population.periods.get(region, days, population)
        if doc is None:
            return None  # not built yet: asked again next time (a point read)
        if kept is not None:
            self._newer_build(region)
        table = PeriodTable(doc)
        self._tables[key] = (now, table)
        return table

    async def marks(self, region: str, population: str = "tracked") -> MarksTable | None:
        """The region's current mark thresholds over `population`, None before the job built them;
        kept decoded as `table` keeps a period's table (a point read of its build time every HOT_COPY_SECONDS)."""
        key = (region, population)
        kept = self._marks.get(key)
        now = self.monotonic()
        if kept is not None and now - kept[0] < HOT_COPY_SECONDS:
            return kept[1]
        async with request_deadline():
            if (
                kept is not None
                and await self.store.population.periods.marks_built_at(region, population) == kept[1].doc["built_at"]
            ):
                self._marks[key] = (now, kept[1])
                return kept[1]
            doc = await self.store.population.periods.get_marks(region, population)
        if doc is None:
            return None
        if kept is not None:
            self._newer_build(region)
        table = MarksTable(doc)
        self._marks[key] = (now, table)
        return table

    async def chosen(self, region: str, days: int, population: str | None) -> tuple[str, PeriodTable | None]:
        """The population an answer is over and its (region, days) table: the one asked for, else
        the random panel where the job built its table, else the tracked accounts."""
        if population is not None:
            return population, await self.table(region, days, population)
        panel = await self.table(region, days, "panel")
        if panel is not None:
            return "panel", panel
        return "tracked", await self.table(region, days)

    async def chosen_marks(self, region: str, population: str | None) -> tuple[str, MarksTable | None]:
        """`chosen` for the mark thresholds."""
        if population is not None:
            return population, await self.marks(region, population)
        panel = await self.marks(region, "panel")
        if panel is not None:
            return "panel", panel
        return "tracked", await self.marks(region)

    async def _marks_of_day(self, region: str, day: str) -> dict | None:
        """The thresholds stored for one past day ({tank_id: [1st, 2nd, 3rd, top, players, battles]}),
        a point read kept HOT_COPY_SECONDS x 60 (a past day's document is not rewritten but by a
        forced rebuild)."""
        key = (region, day)
        kept = self._marks_days.get(key)
        now = self.monotonic()
        if kept is not None and now - kept[0] < 60 * HOT_COPY_SECONDS:
            return kept[1]
        async with request_deadline():
            doc = await self.store.population.marks.get(region, day)
        tanks = doc["tanks"] if doc is not None else None
        if len(self._marks_days) > 64:  # a few days per region are ever asked for
            self._marks_days.clear()
        self._marks_days[key] = (now, tanks)
        return tanks

    def _marks_head(self, region: str, table: MarksTable) -> dict[str, Any]:
        doc = table.doc
        return {
            "region": region,
            "days": int(doc["days"]),
            "from": doc["from"],
            "through": doc["through"],
            "built_at": int(doc["built_at"]),
            **population_of(doc),
            "min_battles": int(doc["min_battles"]),
            "min_players": int(doc["min_players"]),
            "method": MARKS_METHOD,
        }

    async def marks_list(
        self, region: str, query: TankQuery, sort: str, order: str, population: str | None = None
    ) -> dict[str, Any]:
        """/tanks/marks: every tank's current thresholds with their change over MARKS_CHANGE_DAYS
        (the daily thresholds are the tracked population's: over the panel, the changes are null)."""
        population, table = await self.chosen_marks(region, population)
        if table is None:
            raise APIError("no_statistics", NO_PANEL if population == "panel" else None)
        vehicles = await self._vehicles(region)
        official = await self.official.current(region) if self.official is not None else None
        through = table.doc["through"]
        past = {
            days: await self._marks_of_day(region, days_before(through, days)) if population == "tracked" else None
            for days in MARKS_CHANGE_DAYS
        }
        memo_key = (vehicles, id(official), *map(id, past.values()))
        if table.rows_memo is None or table.rows_memo[0] != memo_key:
            covered = {
                t
                for t in (official.damage if official else {})
                if ((vehicles.get(t) or {}).get("tier") or 0) >= MIN_TIER
            }
            rows = []
            for tank_id in sorted(set(table.entries) | covered):
                entry = table.entries.get(tank_id) or {"players": 0, "battles": 0}
                facts = vehicles.get(tank_id) or {}
                now = entry.get("thresholds")
                figures = official.thresholds(tank_id) if official is not None else None
                rows.append(
                    {
                        "tank_id": tank_id,
                        "name": facts.get("name"),
                        "tier": facts.get("tier"),
                        "type": facts.get("type"),
                        "nation": facts.get("nation"),
                        "marks": named_marks(now),
                        "marks_interval": table.intervals(tank_id),
                        "sample": {"players": int(entry["players"]), "battles": int(entry["battles"])},
                        **{
                            f"change_{days}d": marks_change(now, (past[days] or {}).get(str(tank_id)))
                            for days in MARKS_CHANGE_DAYS
                        },
                        "official": figures,
                        "estimate_error": estimate_error(named_marks(now), (figures or {}).get("marks")),
                    }
                )
            table.rows_memo = (memo_key, rows)
        page = tank_page(table.rows_memo[1], query, lambda row: _marks_sort_value(row, sort), order)
        return {
            **self._marks_head(region, table),
            "official": official_head(official, table.rows_memo[1], utc_day(self.clock())),
            "sort": sort,
            **page,
        }

    async def tank_marks(
        self, region: str, tank_id: int, series_doc: Mapping[str, Any] | None, population: str = "tracked"
    ) -> dict | None:
        """A tank page's `marks` over `population`: the current thresholds and sample, and their daily
        series (the days of the tank's series that have thresholds); None before the first build or below tier V."""
        table = await self.marks(region, population)
        official = await self.official.current(region) if self.official is not None else None
        figures = official.thresholds(tank_id) if official is not None else None
        if table is None or (tank_id not in table.entries and figures is None):
            return None
        entry = table.entries.get(tank_id) or {"players": 0, "battles": 0}
        series = []
        if series_doc is not None and series_doc.get("through") == table.doc["through"]:
            for day, values in zip(series_doc["days"], series_doc.get("marks") or []):
                if values is not None:
                    series.append({"date": day, **(named_marks(values) or {})})
        return {
            **{k: v for k, v in self._marks_head(region, table).items() if k not in MARKS_PAGE_LEFT_OUT},
            "marks": named_marks(entry.get("thresholds")),
            "marks_interval": table.intervals(tank_id),
            "sample": {"players": int(entry["players"]), "battles": int(entry["battles"])},
            "series": series,
            "official": figures,
            "estimate_error": estimate_error(named_marks(entry.get("thresholds")), (figures or {}).get("marks")),
        }

    async def career_standing(
        self, region: str, wn8: float | None, battles: int
    ) -> tuple[int | None, dict[str, Any] | None]:
        """A career WN8's place (0..99 %: the share below it) and whom it is among: the realm's
        active players (its random panel's members with STANDING_MIN_BATTLES career battles) when
        STANDING_PANEL_MIN_PLAYERS of them stand behind the panel's grid, else the region's tracked
        accounts that played in the longest period with as many. (None, None) below
        STANDING_MIN_BATTLES career battles or before the tables are built."""
        if wn8 is None or battles < STANDING_MIN_BATTLES:
            return None, None
        panel = await self.table(region, ACTIVE_DAYS, "panel")
        career = (panel.doc.get("career") or {}) if panel is not None else {}
        if panel is not None and int(career.get("qualified") or 0) >= STANDING_PANEL_MIN_PLAYERS:
            players = int(career["qualified"])
            return standing(panel.career_grid(), wn8), {
                "kind": "panel",
                "players": players,
                "description": f"the realm's active players: a random panel of its accounts that played in "
                f"the last {ACTIVE_DAYS} days ({players:,} of them with at least {STANDING_MIN_BATTLES} "
                "career battles)",
            }
        table = await self.table(region, max(POPULATION_PERIODS))
        value = standing(table.career_grid(), wn8) if table is not None else None
        if value is None or table is None:
            return None, None
        players = int((table.doc.get("career") or {}).get("qualified") or 0)
        return value, {
            "kind": "tracked",
            "players": players,
            "description": f"the region's tracked accounts (players looked up here and clan members: not a "
            f"random sample) that played in the last {max(POPULATION_PERIODS)} days ({players:,} with at "
            f"least {STANDING_MIN_BATTLES} career battles)"
            + (
                f"; the random panel has {int(career.get('qualified') or 0):,} such players, fewer than the "
                f"{STANDING_PANEL_MIN_PLAYERS:,} a place among them takes"
                if panel is not None
                else ""
            ),
        }

    async def _vehicles(self, region: str) -> Mapping[int, Mapping[str, Any]]:
        return await self.ratings_source.vehicles(region)

    @staticmethod
    def _period(region: str, days: int, table: PeriodTable) -> dict[str, Any]:
        doc = table.doc
        return {
            **period_head(region, days, doc),
            "min_battles": int(doc.get("min_battles", POPULATION_MIN_BATTLES)),
            "min_players": int(doc.get("min_players", POPULATION_MIN_PLAYERS)),
        }

    def _row(self, tank_id: int, table: PeriodTable, vehicle: Mapping[str, Any] | None) -> dict[str, Any]:
        entry = table.entries[tank_id]
        min_players = int(table.doc.get("min_players", POPULATION_MIN_PLAYERS))
        facts = vehicle or {}
        return {
            "tank_id": tank_id,
            "name": facts.get("name"),
            "tier": facts.get("tier"),
            "type": facts.get("type"),
            "nation": facts.get("nation"),
            **tank_figures(entry, min_players, table.doc.get("panel") is not None),
            "damage_percentiles": _percentiles(table.grid(tank_id, "damage"), TABLE_PERCENTILES),
            "sample": {
                "players": int(entry["players"]),
                "battles": int(entry["sums"][C["battles"]]),
                "qualified": int(entry["qualified"]),
            },
            "strength": strength_figures(entry.get("strength"), STRENGTH_MIN_PLAYERS, STRENGTH_MIN_BATTLES),
        }

    async def tank_table(
        self, region: str, days: int, query: TankQuery, sort: str, order: str, population: str | None = None
    ) -> dict[str, Any]:
        population, table = await self.chosen(region, days, population)
        if table is None:
            raise APIError("no_statistics", NO_PANEL if population == "panel" else None)
        vehicles = await self._vehicles(region)
        if table.rows_memo is None or table.rows_memo[0] is not vehicles:
            # Built once per table (and vehicles mapping): at scale every tank has its percentiles,
            # and building every row per request made the answer's cost grow with the data where a
            # filter does not (docs/benchmarks.md, "The figures behind the code's choices"). Ties (and nulls) in tank_id order.
            built = [self._row(tank_id, table, vehicles.get(tank_id)) for tank_id in sorted(table.entries)]
            table.rows_memo = (vehicles, built)
        page = tank_page(table.rows_memo[1], query, lambda row: _sort_value(row, sort), order)
        return {**self._period(region, days, table), "sort": sort, **page}

    async def tank(self, region: str, tank_id: int, days: int, population: str | None = None) -> dict[str, Any]:
        population, table = await self.chosen(region, days, population)
        if table is None:
            raise APIError("no_statistics", NO_PANEL if population == "panel" else None)
        if tank_id not in table.entries:
            who = "no account of the random panel" if population == "panel" else "no tracked account"
            raise APIError("no_statistics", f"{who} played this tank in the period")
        vehicles = await self._vehicles(region)
        row = self._row(tank_id, table, vehicles.get(tank_id))
        async with request_deadline():
            series_doc = await self.store.population.series.get(region, tank_id, population)
        first = table.doc["from"]
        series = []
        if series_doc is not None and series_doc.get("through") == table.doc["through"]:
            for day, players, battles, wins, damage in zip(
                series_doc["days"],
                series_doc["players"],
                series_doc["battles"],
                series_doc["wins"],
                series_doc["damage"],
            ):
                if day >= first:
                    series.append(
                        {
                            "date": day,
                            "players": players,
                            "battles": battles,
                            "win_rate": _rate(wins, battles),
                            "avg_damage": _per(damage, battles),
                        }
                    )
        entry = table.entries[tank_id]
        found = await self.catalogue.records(region) if self.catalogue is not None else None
        record = found[1].get(tank_id) if found is not None else None
        row.pop("damage_percentiles")
        sample = row.pop("sample")
        return {
            **self._period(region, days, table),
            **row,
            **catalogue_fields(record),
            "marks": await self.tank_marks(region, tank_id, series_doc, population),
            "sample": {**sample, "rated": int(entry.get("rated", 0))},
            "percentiles": {
                "damage": _percentiles(table.grid(tank_id, "damage"), TANK_PERCENTILES),
                "wn8": _percentiles(table.grid(tank_id, "wn8"), TANK_PERCENTILES),
            },
            "series": series,
        }


def tank_page(
    rows: list[dict[str, Any]], query: TankQuery, value: Callable[[Mapping[str, Any]], Any], order: str
) -> dict[str, Any]:
    """A tank list's rows filtered, sorted by `value` (nulls last either way; ties keep the rows'
    order) and paged: {order, total, offset, limit, tanks}."""
    kept = [row for row in rows if query.matches(row)]
    present = [row for row in kept if value(row) is not None]
    missing = [row for row in kept if value(row) is None]
    present.sort(key=value, reverse=order == "desc")
    ordered = present + missing
    return {"order": order, **query.paging(len(ordered)), "tanks": query.page(ordered)}


def standing_period(days: int) -> int:
    """The population period a player's `days` are compared with: the nearest (the shorter on a tie)."""
    return min(POPULATION_PERIODS, key=lambda period: (abs(period - days), period))


def tank_standing(table: PeriodTable | None, tank_id: int, battles: int, avg_damage: Any, wn8: Any) -> dict | None:
    """Where a player's period on one tank stands among the tank's players in `table`: the share
    (0..99 %) of them below its average damage and below its WN8 on the tank; a figure is null
    when the player has fewer than min_battles battles on it or the tank no percentiles."""
    if table is None:
        return None
    doc = table.doc
    min_battles = int(doc.get("min_battles", POPULATION_MIN_BATTLES))
    counted = battles >= min_battles
    return {
        "period_days": int(doc["days"]),
        "min_battles": min_battles,
        "damage_percentile": standing(table.grid(tank_id, "damage"), avg_damage) if counted else None,
        "wn8_percentile": standing(table.grid(tank_id, "wn8"), wn8) if counted else None,
    }


def estimate_error(
    estimate: Mapping[str, float | None] | None, official: Mapping[str, float] | None
) -> dict[str, float | None] | None:
    """Each estimated mark threshold's error relative to the official one ((estimate - official) /
    official, e.g. 0.05: 5 % above); None without both."""
    if estimate is None or official is None:
        return None
    return {
        name: round((estimate[name] - official[name]) / official[name], 4)  # type: ignore[operator]
        if estimate.get(name) is not None and official.get(name)
        else None
        for name in (*MARK_NAMES, "top")
    }


def official_head(official: Official | None, rows: Sequence[Mapping[str, Any]], today: str) -> dict[str, Any] | None:
    """The list's official figures: their day (stale when not today's: that day's fetch failed),
    the upstream's date, and the median relative error of the estimates per tier and mark."""
    if official is None:
        return None
    by_tier: dict[int, dict[str, list[float]]] = {}
    for row in rows:
        for name, error in (row.get("estimate_error") or {}).items():
            if error is not None and row.get("tier") is not None:
                by_tier.setdefault(int(row["tier"]), {}).setdefault(name, []).append(error)
    return {
        "date": official.day,
        "stale": official.day != today,
        "updated_at": official.updated_at,
        "source": SOURCE,
        "method": OFFICIAL_METHOD,
        "median_error_by_tier": [
            {
                "tier": tier,
                "tanks": max(len(errors) for errors in names.values()),
                **{
                    name: round(statistics.median(names[name]), 4) if name in names else None
                    for name in (*MARK_NAMES, "top")
                },
            }
            for tier, names in sorted(by_tier.items())
        ],
    }


def _marks_sort_value(row: Mapping[str, Any], sort: str) -> Any:
    if sort in ("first", "second", "third", "top"):
        return (row.get("marks") or {}).get(sort)
    if sort in ("players", "battles"):
        return row["sample"][sort]
    return row.get(sort)


def _sort_value(row: Mapping[str, Any], sort: str) -> Any:
    if sort in ("relative_win_rate", "relative_damage"):
        return row["strength"][sort]
    if sort.startswith("damage_p"):
        percentiles = row.get("damage_percentiles")
        return percentiles.get(sort.removeprefix("damage_")) if percentiles else None
    return row.get(sort)
