"""The marks of excellence endpoint: the combined damage each tank's marks take, estimated and published."""

from __future__ import annotations

from server.contract.catalogue.figures import (
    HOT_COPY_SECONDS,
    MARKS_CHANGE_DAYS,
    MARKS_METHOD,
    MARKS_MIN_BATTLES,
    MARKS_MIN_PLAYERS,
    MARKS_SORTS,
    MARKS_WINDOW_DAYS,
    TANK_PAGE_MAX,
)
from server.contract.catalogue.model import CsvTable, Endpoint
from server.contract.catalogue.params import POPULATION, POPULATION_GUIDE, POPULATION_HEAD_SCHEMA, tank_list
from server.contract.catalogue.shapes import (
    DATE,
    NULLABLE_UNIX,
    NUMBER_OR_NULL,
    REGION_ENUM,
    TANK_NAMES,
    UNIX,
    array,
    obj,
    tank_page,
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
MARKS_INTERVAL_GUIDE = (
    "each threshold's 95 % interval {low, high} over the random panel (the percentiles p -/+ 1.96 sqrt(p (1 - p) "
    "/ players) of the counted players: distribution-free; docs/data.md#the-random-panel); a mark's is null "
    "where that reaches past the players' top, the whole null over the tracked accounts (no random sample) "
    "or without thresholds"
)
TANK_MARKS = Endpoint(
    name="tank_marks",
    path="/tanks/marks",
    summary="Marks of excellence: the combined damage each tank's 1st, 2nd and 3rd mark takes",
    description="Every tank of tier V and up that the population of a region (the realm's random panel by "
    "default where it has one, else the tracked accounts: the population parameter) played in the last "
    f"{MARKS_WINDOW_DAYS} days, with the combined damage per battle (damage plus the largest assistance) "
    "that puts a player above 65, 85 and 95 % of its players (the 1st, 2nd and 3rd mark) and the top, "
    f"each with its sample, and how each moved over the last {' and '.join(map(str, MARKS_CHANGE_DAYS))} "
    "days. An estimate from daily totals over the population, not the game's per-battle moving "
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
    params=tank_list(
        MARKS_SORTS,
        "third",
        "The figure to sort by (nulls last): a mark's threshold, the sample, or the tank.",
        POPULATION,
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
            *(f"marks_interval.{name}.{end}" for name in ("first", "second", "third") for end in ("low", "high")),
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
        "population, population_kind, panel_size": f"{POPULATION_GUIDE}; over the panel, the change_7d and "
        "change_30d figures are null (the daily thresholds kept are the tracked population's)",
        "min_battles, min_players": f"a player's battles on the tank to count ({MARKS_MIN_BATTLES}); players "
        f"behind non-null thresholds ({MARKS_MIN_PLAYERS})",
        "method": "where the estimate and its bias are explained",
        "sort, order, total, offset, limit": "the order asked for, how many tanks match the filters, the page",
        "tanks[]": "tank_id, name, tier, type, nation, marks {first, second, third, top} "
        f"({MARK_THRESHOLDS}; null below min_players), marks_interval {{first, second, third}}: {MARKS_INTERVAL_GUIDE}, "
        "sample {players, battles} (the counted players and their battles on the tank in the window), "
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
# A tank's marks: the estimate's thresholds, its sample and window, Wargaming's published ones.
MARK_VALUES = obj({name: {"type": "number"} for name in ("first", "second", "third", "top")})
NULLABLE_MARKS = {
    "oneOf": [MARK_VALUES, {"type": "null"}],
    "description": "Combined damage per battle beating 65, 85 and 95 % of the tank's counted players, and "
    "the best; null below min_players.",
}
MARKS_INTERVAL = {
    "oneOf": [
        obj(
            {
                name: {
                    "oneOf": [obj({"low": {"type": "number"}, "high": {"type": "number"}}), {"type": "null"}],
                }
                for name in ("first", "second", "third")
            }
        ),
        {"type": "null"},
    ],
    "description": "Each threshold's 95 % interval over the random panel; null over the tracked accounts or "
    "without thresholds, a mark's null where too few players bound it.",
}
MARKS_SAMPLE = obj({"players": {"type": "integer", "minimum": 0}, "battles": {"type": "integer", "minimum": 0}})
MARKS_HEAD = {
    "days": {"type": "integer", "minimum": 1},
    "from": DATE,
    "through": DATE,
    "built_at": UNIX,
    "min_battles": {"type": "integer", "minimum": 1},
    "min_players": {"type": "integer", "minimum": 1},
    "method": {"type": "string", "description": "Where the estimate and its bias are explained."},
}
MARK_CHANGE = {
    "oneOf": [obj({name: {"type": "number"} for name in ("first", "second", "third", "top")}), {"type": "null"}],
    "description": "Each threshold now minus its value that many days before; null when either is.",
}
OFFICIAL_MARKS = {
    "oneOf": [
        obj(
            {
                "marks": {"oneOf": [MARK_VALUES, {"type": "null"}]},
                "mastery_xp": {
                    "oneOf": [
                        obj(
                            {name: {"type": "number"} for name in ("third_class", "second_class", "first_class", "ace")}
                        ),
                        {"type": "null"},
                    ]
                },
                "date": DATE,
                "updated_at": NULLABLE_UNIX,
                "source": {"type": "string", "enum": ["wot/tanks/mastery"]},
                "method": {
                    "type": "string",
                    "description": "Where the figures and the estimate's error against them are explained.",
                },
            }
        ),
        {"type": "null"},
    ],
    "description": "Wargaming's published thresholds of the tank (wot/tanks/mastery): damage at percentiles "
    "65/85/95/100 (the marks) and base XP at 50/80/95/99 (the mastery badges), as fetched on `date`; null "
    "when the published distribution does not cover the tank or none was fetched yet.",
}
ESTIMATE_ERROR = {
    "oneOf": [
        obj({name: NUMBER_OR_NULL for name in ("first", "second", "third", "top")}),
        {"type": "null"},
    ],
    "description": "Each estimated threshold's error relative to the official one ((estimate - official) / "
    "official); null without both.",
}
OFFICIAL_HEAD = {
    "oneOf": [
        obj(
            {
                "date": DATE,
                "stale": {"type": "boolean"},
                "updated_at": NULLABLE_UNIX,
                "source": {"type": "string", "enum": ["wot/tanks/mastery"]},
                "method": {
                    "type": "string",
                    "description": "Where the figures and the estimate's error against them are explained.",
                },
                "median_error_by_tier": array(
                    obj(
                        {
                            "tier": {"type": "integer", "minimum": 1, "maximum": 11},
                            "tanks": {"type": "integer", "minimum": 1},
                            **{name: NUMBER_OR_NULL for name in ("first", "second", "third", "top")},
                        }
                    )
                ),
            }
        ),
        {"type": "null"},
    ]
}

# The `data` schemas of this module's endpoints (components/schemas), by their `schema` names.
SCHEMAS: dict[str, dict] = {
    "TankMarks": obj(
        {
            "region": REGION_ENUM,
            **POPULATION_HEAD_SCHEMA,
            **MARKS_HEAD,
            "official": OFFICIAL_HEAD,
            **tank_page(MARKS_SORTS),
            "tanks": array(
                obj(
                    {
                        "tank_id": {"type": "integer", "minimum": 1},
                        **TANK_NAMES,
                        "marks": NULLABLE_MARKS,
                        "marks_interval": MARKS_INTERVAL,
                        "sample": MARKS_SAMPLE,
                        **{f"change_{days}d": MARK_CHANGE for days in MARKS_CHANGE_DAYS},
                        "official": OFFICIAL_MARKS,
                        "estimate_error": ESTIMATE_ERROR,
                    }
                ),
                maxItems=TANK_PAGE_MAX,
            ),
        }
    ),
}

# This module's endpoints in the order the index and the OpenAPI document list them
# (server/contract/catalogue/__init__.py CATALOGUE).
ENDPOINTS: tuple[Endpoint, ...] = (TANK_MARKS,)
