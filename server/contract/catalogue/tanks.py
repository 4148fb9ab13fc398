"""The tank statistics' endpoints: every tank of a region over a period, and one tank."""

from __future__ import annotations

from collections.abc import Iterable

from server.contract.catalogue.figures import (
    HOT_COPY_SECONDS,
    MARKS_WINDOW_DAYS,
    POPULATION_MIN_BATTLES,
    POPULATION_MIN_PLAYERS,
    POPULATION_PERIODS,
    STRENGTH_METHOD,
    STRENGTH_MIN_BATTLES,
    STRENGTH_MIN_OTHER_BATTLES,
    STRENGTH_MIN_PLAYERS,
    TABLE_PERCENTILES,
    TABLE_RATES,
    TANK_PAGE_MAX,
    TANK_PERCENTILES,
    TANK_SORTS,
)
from server.contract.catalogue.marks import (
    ESTIMATE_ERROR,
    MARK_VALUES,
    MARKS_HEAD,
    MARKS_INTERVAL,
    MARKS_SAMPLE,
    NULLABLE_MARKS,
    OFFICIAL_MARKS,
)
from server.contract.catalogue.model import CsvTable, Endpoint, Param, one_of
from server.contract.catalogue.params import POPULATION, POPULATION_GUIDE, POPULATION_HEAD_SCHEMA, REGION, tank_list
from server.contract.catalogue.shapes import (
    DATE,
    NUMBER_OR_NULL,
    REGION_ENUM,
    TANK_NAMES,
    UNIX,
    array,
    nullable,
    obj,
    tank_page,
)

# A tank's strength figures as CSV columns (/tanks/stats, /tanks/strength).
STRENGTH_CSV = (
    "relative_win_rate",
    "relative_win_rate_interval.low",
    "relative_win_rate_interval.high",
    "win_rate",
    "baseline_win_rate",
    "relative_damage",
    "relative_damage_interval.low",
    "relative_damage_interval.high",
    "avg_damage",
    "baseline_damage",
    "players",
    "battles",
)


def period_param() -> Param:
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
POPULATION_FIELDS = {
    "region, days, from, through": "the region and the period: its first and last UTC day (the newest "
    "complete day; built daily about an hour after a day ends)",
    "built_at": "unix time the tables were built",
    "population, population_kind, panel_size": POPULATION_GUIDE,
    "min_battles, min_players": f"a player counts in a tank's percentiles with at least min_battles "
    f"({POPULATION_MIN_BATTLES}) battles on it in the period; a figure is null when fewer than "
    f"min_players ({POPULATION_MIN_PLAYERS}) players stand behind it",
}
TANK_ROW_FIGURES = (
    "tank_id, name, tier, type, nation (null when the encyclopedia lacks the tank), players (accounts of "
    "the population that played it in the period), battles, win_rate (%), avg_damage, avg_frags, avg_xp, "
    "survival_rate (%), hit_rate (%); win_rate_interval, avg_damage_interval {low, high}: the 95 % interval "
    "of the win rate and of the average damage over the random panel (a sample of players: each player's "
    "battles count together; docs/data.md#the-random-panel), null with the figure and over the tracked "
    "accounts (no random sample)"
)
# The tank table rows' intervals (server/domain/population.py rate_intervals), beside their figures.
RATE_INTERVALS = ("win_rate_interval", "avg_damage_interval")
# A tank's strength with its drivers' skill taken out (server/domain/strength.py strength_figures).
INTERVAL = {
    "oneOf": [obj({"low": {"type": "number"}, "high": {"type": "number"}}), {"type": "null"}],
    "description": "The 95 % interval; null with the figure.",
}
STRENGTH_FIGURES = {
    "relative_win_rate": NUMBER_OR_NULL,
    "relative_win_rate_interval": INTERVAL,
    "win_rate": NUMBER_OR_NULL,
    "baseline_win_rate": NUMBER_OR_NULL,
    "relative_damage": NUMBER_OR_NULL,
    "relative_damage_interval": INTERVAL,
    "avg_damage": NUMBER_OR_NULL,
    "baseline_damage": NUMBER_OR_NULL,
    "players": {"type": "integer", "minimum": 0},
    "battles": {"type": "integer", "minimum": 0},
}
STRENGTH_GUIDE = (
    f"the tank's figures with its drivers' skill taken out ({STRENGTH_METHOD}): relative_win_rate = win_rate "
    "- baseline_win_rate (percentage points), where win_rate is the sampled players' win rate on the tank and "
    "baseline_win_rate their battle-weighted win rate on their other tanks of its tier; relative_damage = "
    "avg_damage / baseline_damage - 1 (%), where baseline_damage is what they would deal per battle in the "
    "tier's average tank; each with its 95 % interval {low, high}; players and battles: the sample (players "
    f"with at least {STRENGTH_MIN_OTHER_BATTLES} battles on the tier's other tanks in the period); every figure "
    f"null below {STRENGTH_MIN_PLAYERS} players or {STRENGTH_MIN_BATTLES} battles"
)
# What the encyclopedia says of a tank beyond TANK_NAMES (server/services/encyclopedia.py).
CATALOGUE_FIELDS = {
    "short_name": nullable("string"),
    "tag": nullable("string"),
    "is_premium": nullable("boolean"),
    "is_gift": nullable("boolean"),
    "is_wheeled": nullable("boolean"),
    "images": {
        "oneOf": [
            obj({key: nullable("string") for key in ("small_icon", "contour_icon", "big_icon")}),
            {"type": "null"},
        ],
        "description": "Wargaming's icon URLs, as the encyclopedia gives them; null when it lacks the tank.",
    },
    "in_encyclopedia": {
        "type": "boolean",
        "description": "False for a tank the encyclopedia lacks (every field null).",
    },
}
CATALOGUE_GUIDE = (
    "short_name, tag, is_premium, is_gift, is_wheeled, images {small_icon, contour_icon, big_icon} (Wargaming's "
    "URLs): the encyclopedia's (wot/encyclopedia/vehicles); null, with in_encyclopedia false, for a tank it lacks"
)


TANK_STATS = Endpoint(
    name="tank_stats",
    path="/tanks/stats",
    summary="Tank statistics of a region: win rate, damage and damage percentiles per tank",
    description="Every tank the population of a region played in the period (the realm's random panel by "
    "default where it has one, else the tracked accounts: the population parameter), with its players, "
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
    params=tank_list(TANK_SORTS, "battles", "The figure to sort by (nulls last).", period_param(), POPULATION),
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
            *TABLE_RATES,
            *(f"{key}.{end}" for key in RATE_INTERVALS for end in ("low", "high")),
            *(f"damage_percentiles.p{p}" for p in TABLE_PERCENTILES),
            "sample.players",
            "sample.battles",
            "sample.qualified",
            *(f"strength.{key}" for key in STRENGTH_CSV),
        ),
    ),
    fields={
        **POPULATION_FIELDS,
        "sort, order, total, offset, limit": "the order asked for, how many tanks match the filters, the page",
        "tanks[]": f"{TANK_ROW_FIGURES}, damage_percentiles {{{', '.join(f'p{p}' for p in TABLE_PERCENTILES)}}} "
        "(average damage per battle of the players with min_battles; null below min_players of them), "
        "sample {players, battles, qualified (players with min_battles)}, strength {relative_win_rate, "
        "relative_win_rate_interval, win_rate, baseline_win_rate, relative_damage, relative_damage_interval, "
        f"avg_damage, baseline_damage, players, battles}}: {STRENGTH_GUIDE}",
    },
)
TANK = Endpoint(
    name="tank",
    path="/tank/{tank_id}/{region}",
    summary="One tank's statistics: figures, daily series and percentiles",
    description="One tank on a region over the period: the figures of /tanks/stats, a daily series "
    "(players, battles, win rate, average damage) and the percentiles "
    f"{TANK_PERCENTILES[0]} to {TANK_PERCENTILES[-1]} of the players' average damage and of their WN8 on it, "
    "over the realm's random panel by default where it has one, else the tracked accounts (the population "
    "parameter). 404 no_statistics when nobody of the population played it in the period.",
    tag="tanks",
    operation_id="Tank",
    limit_per_minute=30,
    cache_max_age=300,
    answer_seconds=HOT_COPY_SECONDS,
    example="/tank/1/eu?days=30",
    params=(
        TANK_ID,
        REGION,
        period_param(),
        POPULATION,
    ),
    errors=("no_statistics", "database_unavailable"),
    schema="TankDetail",
    card="tank",
    fields={
        **POPULATION_FIELDS,
        "tank_id, name, tier, type, nation, players, battles, win_rate, avg_damage, avg_frags, avg_xp, "
        "survival_rate, hit_rate, win_rate_interval, avg_damage_interval": TANK_ROW_FIGURES,
        "short_name, tag, is_premium, is_gift, is_wheeled, images, in_encyclopedia": CATALOGUE_GUIDE,
        "sample": "players, battles, qualified (players with min_battles), rated (of those, on a tank "
        "the expected-values table rates)",
        "strength": STRENGTH_GUIDE,
        "percentiles": f"damage and wn8: {{{', '.join(f'p{p}' for p in TANK_PERCENTILES)}}} of the qualified "
        "players' average damage per battle and WN8 on the tank; null below min_players",
        "series[]": "date, players, battles, win_rate, avg_damage: each day of the period someone played it",
        "marks": f"the marks of excellence (GET /tanks/marks; null below tier V or before built): days, from, "
        f"through ({MARKS_WINDOW_DAYS} days), built_at, min_battles, min_players, method, marks {{first, second, "
        "third, top}} (null below min_players), marks_interval {first, second, third} (each threshold's 95 % "
        "interval over the random panel, as /tanks/marks), sample {players, battles}, series[] {date, first, second, "
        "third, top}: the thresholds of each day of the tank's series that had them",
    },
)
# A population build's head: the region, its period and the population counted.
PERIOD_HEAD = {
    "region": REGION_ENUM,
    "days": {"type": "integer", "minimum": 1},
    "from": DATE,
    "through": DATE,
    "built_at": UNIX,
    **POPULATION_HEAD_SCHEMA,
}
POPULATION_HEAD = {
    **PERIOD_HEAD,
    "min_battles": {"type": "integer", "minimum": 1},
    "min_players": {"type": "integer", "minimum": 1},
}
TANK_ROW = {
    "tank_id": {"type": "integer", "minimum": 1},
    **TANK_NAMES,
    "players": {"type": "integer", "minimum": 0},
    "battles": {"type": "integer", "minimum": 0},
    **{key: NUMBER_OR_NULL for key in TABLE_RATES},
    **{
        key: {
            **INTERVAL,
            "description": "The 95 % interval over the random panel; null with the figure and over the tracked "
            "accounts (no random sample).",
        }
        for key in RATE_INTERVALS
    },
}


def nullable_percentiles(points: Iterable[int]) -> dict:
    return {
        "oneOf": [obj({f"p{p}": {"type": "number"} for p in points}), {"type": "null"}],
        "description": "Null below min_players qualified players.",
    }


# The `data` schemas of this module's endpoints (components/schemas), by their `schema` names.
SCHEMAS: dict[str, dict] = {
    "TankStats": obj(
        {
            **POPULATION_HEAD,
            **tank_page(TANK_SORTS),
            "tanks": array(
                obj(
                    {
                        **TANK_ROW,
                        "damage_percentiles": nullable_percentiles(TABLE_PERCENTILES),
                        "sample": obj(
                            {
                                "players": {"type": "integer", "minimum": 0},
                                "battles": {"type": "integer", "minimum": 0},
                                "qualified": {"type": "integer", "minimum": 0},
                            }
                        ),
                        "strength": obj(STRENGTH_FIGURES),
                    }
                ),
                maxItems=TANK_PAGE_MAX,
            ),
        }
    ),
    "TankDetail": obj(
        {
            **POPULATION_HEAD,
            **TANK_ROW,
            **CATALOGUE_FIELDS,
            "sample": obj(
                {
                    "players": {"type": "integer", "minimum": 0},
                    "battles": {"type": "integer", "minimum": 0},
                    "qualified": {"type": "integer", "minimum": 0},
                    "rated": {"type": "integer", "minimum": 0},
                }
            ),
            "strength": obj(STRENGTH_FIGURES),
            "percentiles": obj(
                {
                    "damage": nullable_percentiles(TANK_PERCENTILES),
                    "wn8": nullable_percentiles(TANK_PERCENTILES),
                }
            ),
            "series": array(
                obj(
                    {
                        "date": DATE,
                        "players": {"type": "integer", "minimum": 0},
                        "battles": {"type": "integer", "minimum": 0},
                        "win_rate": NUMBER_OR_NULL,
                        "avg_damage": NUMBER_OR_NULL,
                    }
                )
            ),
            "marks": {
                "oneOf": [
                    obj(
                        {
                            **MARKS_HEAD,
                            "marks": NULLABLE_MARKS,
                            "marks_interval": MARKS_INTERVAL,
                            "sample": MARKS_SAMPLE,
                            "series": array(obj({"date": DATE, **MARK_VALUES["properties"]})),
                            "official": OFFICIAL_MARKS,
                            "estimate_error": ESTIMATE_ERROR,
                        }
                    ),
                    {"type": "null"},
                ],
                "description": "The tank's marks of excellence (GET /tanks/marks); null below tier V or before built.",
            },
        }
    ),
}

# This module's endpoints in the order the index and the OpenAPI document list them
# (server/contract/catalogue/__init__.py CATALOGUE).
ENDPOINTS: tuple[Endpoint, ...] = (
    TANK_STATS,
    TANK,
)
