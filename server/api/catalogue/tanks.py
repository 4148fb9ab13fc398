"""The tanks' endpoints: statistics per tank, one tank, the marks of excellence and the expected values."""

from __future__ import annotations

from server.api.catalogue.figures import (
    EXPECTED_METHOD,
    EXPECTED_MIN_ACCOUNT_BATTLES,
    EXPECTED_MIN_PLAYERS,
    EXPECTED_MIN_ROW_BATTLES,
    EXPECTED_MIN_TANK_BATTLES,
    EXPECTED_WINDOW_DAYS,
    HOT_COPY_SECONDS,
    MARKS_CHANGE_DAYS,
    MARKS_METHOD,
    MARKS_MIN_BATTLES,
    MARKS_MIN_PLAYERS,
    MARKS_SORTS,
    MARKS_WINDOW_DAYS,
    POPULATION_MIN_BATTLES,
    POPULATION_MIN_PLAYERS,
    POPULATION_PERIODS,
    TABLE_PERCENTILES,
    TANK_PAGE_MAX,
    TANK_PERCENTILES,
    TANK_SORTS,
    VEHICLE_TYPES,
)
from server.api.catalogue.model import CsvTable, Endpoint, Param, one_of
from server.api.catalogue.params import REGION
from store.constants import REGIONS


def _period_param() -> Param:
    return Param(
        "days",
        "query",
        "integer",
        "invalid_days",
        f"The period: {one_of(tuple(map(str, POPULATION_PERIODS)))} UTC days, ending on the newest complete "
        "day. Give it at most once.",
        minimum=min(POPULATION_PERIODS),
        maximum=max(POPULATION_PERIODS),
        enum=POPULATION_PERIODS,
        default=30,
    )


TANK_ID = Param(
    "tank_id",
    "path",
    "integer",
    "invalid_tank_id",
    "Tank ID (the game API's tank_id).",
    minimum=1,
    maximum=2**31 - 1,
    example=1,
)
REGION_QUERY = Param(
    "region",
    "query",
    "string",
    "invalid_region",
    f"Game region: {one_of(REGIONS)}. Required; give it once.",
    enum=REGIONS,
    required=True,
)
POPULATION_FIELDS = {
    "region, days, from, through": "the region and the period: its first and last UTC day (the newest "
    "complete day; built daily about an hour after a day ends)",
    "built_at": "unix time the tables were built",
    "population": "who the figures are about: the tracked accounts (players looked up here and members "
    "of cached clans), not a random sample of the server",
    "min_battles, min_players": f"a player counts in a tank's percentiles with at least min_battles "
    f"({POPULATION_MIN_BATTLES}) battles on it in the period; a figure is null when fewer than "
    f"min_players ({POPULATION_MIN_PLAYERS}) players stand behind it",
}
# A tank list's filters and paging (/tanks/stats, /tanks/marks).
TANK_FILTERS = (
    Param("tier", "query", "integer", "invalid_tier", "Only tanks of this tier.", minimum=1, maximum=11),
    Param("type", "query", "string", "invalid_type", "Only tanks of this type.", enum=VEHICLE_TYPES),
    Param(
        "nation",
        "query",
        "string",
        "invalid_nation",
        "Only tanks of this nation, as the game API names it (ussr, germany, usa, ...).",
        min_length=2,
        max_length=16,
        pattern=r"^[a-z]+$",
        example="ussr",
    ),
)
TANK_PAGING = (
    Param("order", "query", "string", "invalid_order", "desc or asc.", enum=("desc", "asc"), default="desc"),
    Param(
        "limit", "query", "integer", "invalid_limit", "Tanks per page.", minimum=1, maximum=TANK_PAGE_MAX, default=50
    ),
    Param(
        "offset", "query", "integer", "invalid_offset", "Tanks to skip (paging).", minimum=0, maximum=10_000, default=0
    ),
)
MARKS_WINDOW = (
    f"the {MARKS_WINDOW_DAYS} UTC days ending on the newest complete day (the game's window), tanks of "
    f"tier V and up; a player counts with at least {MARKS_MIN_BATTLES} battles on the tank in them and "
    "assistance known for the whole window; thresholds null below "
    f"{MARKS_MIN_PLAYERS} such players"
)
MARK_THRESHOLDS = (
    "first, second, third: the combined damage per battle (damage dealt plus the largest of the average "
    "spotting, tracking and stun assistance) that beats 65, 85 and 95 % of the tank's counted players "
    "(the 65th, 85th and 95th percentile: the 1st, 2nd and 3rd mark of excellence); top: the best of "
    "them (100 %)"
)
TANK_ROW_FIGURES = (
    "tank_id, name, tier, type, nation (null when the encyclopedia lacks the tank), players (tracked "
    "accounts that played it in the period), battles, win_rate (%), avg_damage, avg_frags, avg_xp, "
    "survival_rate (%), hit_rate (%)"
)
TANK_STATS = Endpoint(
    name="tank_stats",
    path="/tanks/stats",
    summary="Tank statistics of a region: win rate, damage and damage percentiles per tank",
    description="Every tank the tracked accounts of a region played in the period, with its players, "
    "battles, rates and averages and the percentiles of the players' average damage "
    f"({', '.join(f'p{p}' for p in TABLE_PERCENTILES)}: the damage that puts a player in the top "
    f"{', '.join(str(100 - p) for p in TABLE_PERCENTILES[1:])} % of the tank's players by damage alone: "
    "not the marks of excellence, which count assistance too and have their own window — GET "
    "/tanks/marks). Built daily "
    "from the tracker's per-tank records, without any request to the game API. Filter by tier, type "
    "and nation; sort by any figure; page with limit and offset. 404 no_statistics until the first "
    "build.",
    tag="tanks",
    operation_id="TankStats",
    limit_per_minute=30,
    cache_max_age=300,
    answer_seconds=HOT_COPY_SECONDS,
    example="/tanks/stats?region=eu&days=30",
    params=(
        REGION_QUERY,
        _period_param(),
        *TANK_FILTERS,
        Param(
            "sort",
            "query",
            "string",
            "invalid_sort",
            "The figure to sort by (nulls last).",
            enum=TANK_SORTS,
            default="battles",
        ),
        *TANK_PAGING,
    ),
    errors=("no_statistics", "database_unavailable"),
    schema="TankStats",
    csv=CsvTable(
        "tanks",
        "tank-stats-{region}-{days}d",
        (
            "tank_id",
            "name",
            "tier",
            "type",
            "nation",
            "players",
            "battles",
            "win_rate",
            "avg_damage",
            "avg_frags",
            "avg_xp",
            "survival_rate",
            "hit_rate",
            "damage_percentiles.p50",
            "damage_percentiles.p65",
            "damage_percentiles.p85",
            "damage_percentiles.p95",
            "sample.players",
            "sample.battles",
            "sample.qualified",
        ),
    ),
    fields={
        **POPULATION_FIELDS,
        "sort, order, total, offset, limit": "the order asked for, how many tanks match the filters, the page",
        "tanks[]": f"{TANK_ROW_FIGURES}, damage_percentiles {{{', '.join(f'p{p}' for p in TABLE_PERCENTILES)}}} "
        "(average damage per battle of the players with min_battles; null below min_players of them), "
        "sample {players, battles, qualified (players with min_battles)}",
    },
)
TANK = Endpoint(
    name="tank",
    path="/tank/{tank_id}/{region}",
    summary="One tank's statistics: figures, daily series and percentiles",
    description="One tank on a region over the period: the figures of /tanks/stats, a daily series "
    "(players, battles, win rate, average damage) and the percentiles "
    f"{TANK_PERCENTILES[0]} to {TANK_PERCENTILES[-1]} of the players' average damage and of their WN8 on it. "
    "404 no_statistics when no tracked account played it in the period.",
    tag="tanks",
    operation_id="Tank",
    limit_per_minute=30,
    cache_max_age=300,
    answer_seconds=HOT_COPY_SECONDS,
    example="/tank/1/eu?days=30",
    params=(
        TANK_ID,
        REGION,
        _period_param(),
    ),
    errors=("no_statistics", "database_unavailable"),
    schema="TankDetail",
    fields={
        **POPULATION_FIELDS,
        "tank_id, name, tier, type, nation, players, battles, win_rate, avg_damage, avg_frags, avg_xp, "
        "survival_rate, hit_rate": TANK_ROW_FIGURES,
        "sample": "players, battles, qualified (players with min_battles), rated (of those, on a tank "
        "the expected-values table rates)",
        "percentiles": f"damage and wn8: {{{', '.join(f'p{p}' for p in TANK_PERCENTILES)}}} of the qualified "
        "players' average damage per battle and WN8 on the tank; null below min_players",
        "series[]": "date, players, battles, win_rate, avg_damage: each day of the period someone played it",
        "marks": f"the marks of excellence (GET /tanks/marks; null below tier V or before built): days, from, "
        f"through ({MARKS_WINDOW_DAYS} days), built_at, min_battles, min_players, method, marks {{first, second, "
        "third, top}} (null below min_players), sample {players, battles}, series[] {date, first, second, "
        "third, top}: the thresholds of each day of the tank's series that had them",
    },
)
EXPECTED_SOURCES = ("effective", "table", "computed")  # the tables /expected-values answers
EXPECTED_VALUES = Endpoint(
    name="expected_values",
    path="/expected-values",
    summary="WN8 expected values: the loaded table, the computed one, and how they compare",
    description="The WN8 expected values of a region in the XVM file's format (`data` and `header`: "
    "existing tools read them): `effective` (default), what this service rates the region with (the "
    "loaded public table, with rows computed from the tracked accounts for the tanks it lacks, or "
    "every computed row under --expected-values-source computed); `table`, the loaded table; "
    f"`computed`, every tank refitted by method {EXPECTED_METHOD} (docs/expected-values.md) over the "
    f"last {EXPECTED_WINDOW_DAYS} days of per-tank records. A row is computed from at least "
    f"{EXPECTED_MIN_PLAYERS} players with {EXPECTED_MIN_TANK_BATTLES} battles on the tank and "
    f"{EXPECTED_MIN_ACCOUNT_BATTLES} on their other rated tanks, {EXPECTED_MIN_ROW_BATTLES:,} battles in all; each "
    "computed row carries that sample. The comparison block sets the computed rows against the "
    "loaded table. Computed daily; each version is kept 400 days (`version`). 404 "
    "no_expected_values before the first computed table (or for an unknown version).",
    tag="tanks",
    operation_id="ExpectedValues",
    limit_per_minute=10,
    cache_max_age=3600,
    answer_seconds=HOT_COPY_SECONDS,
    example="/expected-values?region=eu",
    params=(
        REGION_QUERY,
        Param(
            "source",
            "query",
            "string",
            "invalid_source",
            "Which table: effective (what ratings use), table (the loaded one) or computed.",
            enum=EXPECTED_SOURCES,
            default="effective",
        ),
        Param(
            "version",
            "query",
            "string",
            "invalid_version",
            f"A computed table's version (YYYY-MM-DD+{EXPECTED_METHOD}: its window's last day and method); "
            "the newest when absent. The + may be sent as is (a query's + reads as a space, accepted) or as %2B.",
            min_length=14,
            max_length=20,
            pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[+ ]ev[0-9]{1,3}$",
            example=f"2026-11-24+{EXPECTED_METHOD}",
        ),
    ),
    errors=("no_expected_values", "database_unavailable"),
    schema="ExpectedValuesTable",
    csv=CsvTable(
        "data",
        "expected-values-{region}-{source}",
        (
            "IDNum",
            "expDef",
            "expFrag",
            "expSpot",
            "expDamage",
            "expWinRate",
            "source",
            "sample.players",
            "sample.battles",
        ),
    ),
    fields={
        "region, source": "what was asked for",
        "rating_source": "this deployment's --expected-values-source: table (computed rows fill the "
        "loaded table's gaps) or computed (every computed row used)",
        "version, table_version": "the version of the rows answered (the computed table's when any row "
        "is computed) and of the loaded table",
        "header": "the XVM header: source, version, region, rows (the source asked for)",
        "data[]": "IDNum, expDef, expFrag, expSpot, expDamage, expWinRate (the XVM row), source (table "
        "or computed) and sample {players, battles} behind a computed row (null for a loaded row)",
        "computed": "the computed table (null before the first): version, method, through, window "
        "{from, through, days}, minimums, base (the loaded table's version it was fitted under), "
        "built_at, gaps and every_tank {tanks, passes, converged}",
        "comparison": "computed / loaded for the tanks both have (null without both): computed_version, "
        "table_version, tanks and the median ratio of damage, spot, frag, defence and win_rate; by_tier[] "
        "and by_type[] the same per group; largest_differences[] {tank_id, name, tier, type, statistic "
        "(the one differing most), ratios, players, battles}",
    },
)
TANK_MARKS = Endpoint(
    name="tank_marks",
    path="/tanks/marks",
    summary="Marks of excellence: the combined damage each tank's 1st, 2nd and 3rd mark takes",
    description="Every tank of tier V and up that the tracked accounts of a region played in the last "
    f"{MARKS_WINDOW_DAYS} days, with the combined damage per battle (damage plus the largest assistance) "
    "that puts a player above 65, 85 and 95 % of its players (the 1st, 2nd and 3rd mark) and the top, "
    f"each with its sample, and how each moved over the last {' and '.join(map(str, MARKS_CHANGE_DAYS))} "
    "days. An estimate from daily totals over the tracked accounts, not the game's per-battle moving "
    f"average over the whole server: how far apart they can be is in {MARKS_METHOD}. Built daily with the "
    "tank statistics, without any request to the game API. Beside each estimate, Wargaming's own published "
    "thresholds (wot/tanks/mastery, fetched once a day per realm: damage at percentiles 65/85/95/100, base "
    "XP of the mastery badges at 50/80/95/99) and the estimate's relative error per mark; the list also "
    "holds every tier V+ tank the published distribution covers that no tracked player drove, and the "
    "median error by tier. Filter, sort and page as /tanks/stats. 404 no_statistics until the first build.",
    tag="tanks",
    operation_id="TankMarks",
    limit_per_minute=30,
    cache_max_age=300,
    answer_seconds=HOT_COPY_SECONDS,
    example="/tanks/marks?region=eu&tier=10",
    params=(
        REGION_QUERY,
        *TANK_FILTERS,
        Param(
            "sort",
            "query",
            "string",
            "invalid_sort",
            "The figure to sort by (nulls last): a mark's threshold, the sample, or the tank.",
            enum=MARKS_SORTS,
            default="third",
        ),
        *TANK_PAGING,
    ),
    errors=("no_statistics", "database_unavailable"),
    schema="TankMarks",
    csv=CsvTable(
        "tanks",
        "tank-marks-{region}",
        (
            "tank_id",
            "name",
            "tier",
            "type",
            "nation",
            "marks.first",
            "marks.second",
            "marks.third",
            "marks.top",
            "sample.players",
            "sample.battles",
            "change_7d.first",
            "change_7d.second",
            "change_7d.third",
            "change_7d.top",
            "change_30d.first",
            "change_30d.second",
            "change_30d.third",
            "change_30d.top",
            "official.marks.first",
            "official.marks.second",
            "official.marks.third",
            "official.marks.top",
            "official.mastery_xp.third_class",
            "official.mastery_xp.second_class",
            "official.mastery_xp.first_class",
            "official.mastery_xp.ace",
            "official.date",
            "official.updated_at",
            "official.source",
            "official.method",
            "estimate_error.first",
            "estimate_error.second",
            "estimate_error.third",
            "estimate_error.top",
        ),
    ),
    fields={
        "region, days, from, through": f"the region and the window: {MARKS_WINDOW}",
        "built_at": "unix time the thresholds were built",
        "population": "who the figures are about: the tracked accounts, not a random sample of the server",
        "min_battles, min_players": f"a player's battles on the tank to count ({MARKS_MIN_BATTLES}); players "
        f"behind non-null thresholds ({MARKS_MIN_PLAYERS})",
        "method": "where the estimate and its bias are explained",
        "sort, order, total, offset, limit": "the order asked for, how many tanks match the filters, the page",
        "tanks[]": "tank_id, name, tier, type, nation, marks {first, second, third, top} "
        f"({MARK_THRESHOLDS}; null below min_players), sample {{players, battles}} (the counted players and their battles on "
        "the tank in the window), "
        + ", ".join(f"change_{d}d" for d in MARKS_CHANGE_DAYS)
        + " {first, second, third, top}: each threshold now minus its value that many days before (null "
        "when either is); official {marks {first, second, third, top}, mastery_xp {third_class, second_class, "
        "first_class, ace}, date, updated_at, source}: Wargaming's published thresholds (null when its "
        "distribution does not cover the tank); estimate_error {first, second, third, top}: (estimate - "
        "official) / official (null without both)",
        "official": "the published figures' day (stale true when that day's fetch failed and an older day's "
        "are shown), the upstream's updated_at, the source, and median_error_by_tier[] {tier, tanks, first, "
        f"second, third, top}}; null before the first fetch. {MARKS_METHOD} compares the two",
    },
)
