"""Response schemas (JSON Schema 2020-12, as OpenAPI 3.1 uses them) of every endpoint's `data`, by name."""

from __future__ import annotations

from collections.abc import Iterable

from server.api.catalogue import (
    CATALOGUE,
    CLAN_LEADERBOARD_BYS,
    DELTA_PERIODS,
    EXPECTED_SOURCES,
    GROUP_BYS,
    HOT_COPY_SECONDS,
    LEADERBOARD_BYS,
    LEADERBOARD_PAGE_MAX,
    LEADERBOARD_WINDOWS,
    MARKS_CHANGE_DAYS,
    MARKS_SORTS,
    PLAYER_LEADERBOARD_BYS,
    POPULATION_PERIODS,
    RECENT_WINDOWS,
    SEARCH_RESULTS,
    STATUS,
    TABLE_PERCENTILES,
    TANK_PAGE_MAX,
    TANK_PERCENTILES,
    TANK_SORTS,
    VEHICLE_TYPES,
)
from server.api.catalogue.figures import (
    EXPECTED_STATS,
    NOT_AS_OLD,
    NOT_MEASURED,
    PLAYED_BEFORE_MEASURED,
    ROW_COUNTERS,
    SESSION_FIGURES,
    SUMMARY_FIGURES,
    WN8_COLOURS,
    WN8_TOP_COLOUR,
    WTR_REASONS,
)
from server.api.catalogue.model import and_list
from server.api.config import API_VERSION
from server.api.errors import ERROR_CODES
from store.constants import GAMES, REGIONS, SPEND_KEYS

# An endpoint's catalogue entry names its schema (server.api.catalogue.Endpoint.schema); each named
# schema also gets "<name>Envelope", the success envelope around it.

ISO_UTC_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$"
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
# The labels of the WN8 colour scale, in order, as server.domain.ratings.wn8_color gives them.
WN8_COLOUR_LABELS = [label for _, label in WN8_COLOURS] + [WN8_TOP_COLOUR]


def ref(kind: str, name: str) -> dict:
    return {"$ref": f"#/components/{kind}/{name}"}


def nullable(type_name: str, **extra) -> dict:
    return {"type": [type_name, "null"], **extra}


def obj(properties: dict, required: Iterable[str] | None = None, closed: bool = True, **extra: object) -> dict:
    """An object schema; every listed property is required unless `required` says otherwise."""
    schema: dict[str, object] = {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else list(required),
    }
    if closed:
        schema["additionalProperties"] = False
    schema.update(extra)
    return schema


def array(items: dict, **extra) -> dict:
    return {"type": "array", "items": items, **extra}


# /player/{account_id}/{region}/tanks: group_by and groups only with ?group_by=.
PLAYER_TANKS_REQUIRED = (
    "account_id",
    "region",
    "days",
    "from",
    "to",
    "expected_values_version",
    "assistance_known_from",
    "period",
    "tanks",
)


def schema_components(index: dict) -> dict:
    """components/schemas; `index` is the index document (the Index schema names its keys)."""
    all_codes = list(ERROR_CODES)
    unix = {"type": "integer", "description": "Unix timestamp (seconds, UTC)."}
    nullable_unix = nullable("integer", description="Unix timestamp (seconds, UTC), or null when unknown.")
    number_or_null = nullable("number")
    iso = {"type": "string", "format": "date-time", "pattern": ISO_UTC_PATTERN}
    iso_or_null = {"type": ["string", "null"], "format": "date-time", "pattern": ISO_UTC_PATTERN}
    date = {"type": "string", "format": "date", "pattern": DATE_PATTERN, "description": "UTC calendar day."}
    region = {"type": "string", "enum": list(REGIONS)}
    # An account's place on a leaderboard (a profile's career, a history period's days).
    place = {
        "rank": {"type": "integer", "minimum": 1},
        "ranked": {"type": "integer", "minimum": 1, "description": "Players ranked on that leaderboard."},
        "through": date,
    }
    # A leaderboard's floor and page (PlayerLeaderboard, TankLeaderboard).
    leaderboard_floors = {
        "min_battles": {"type": "integer", "minimum": 1},
        "floors": array({"type": "integer", "minimum": 1}),
        "population": {"type": "string"},
    }
    leaderboard_page = {
        "total": {"type": "integer", "minimum": 0, "description": "Players ranked."},
        "offset": {"type": "integer", "minimum": 0},
        "limit": {"type": "integer", "minimum": 1, "maximum": LEADERBOARD_PAGE_MAX},
        "rows": array(
            obj(
                {
                    "rank": {"type": "integer", "minimum": 1},
                    "account_id": {"type": "integer", "minimum": 1},
                    "nickname": nullable("string"),
                    "clan_tag": nullable("string"),
                    "value": {"type": "number"},
                    "battles": {"type": "integer", "minimum": 1},
                }
            ),
            maxItems=LEADERBOARD_PAGE_MAX,
        ),
    }
    member_ref = obj({"account_id": {"type": "integer"}, "name": nullable("string")})
    population_period = {
        "region": region,
        "days": {"type": "integer", "minimum": 1},
        "from": date,
        "through": date,
        "built_at": unix,
        "population": {"type": "string"},
        "min_battles": {"type": "integer", "minimum": 1},
        "min_players": {"type": "integer", "minimum": 1},
    }
    tank_row = {
        "tank_id": {"type": "integer", "minimum": 1},
        "name": nullable("string"),
        "tier": nullable("integer", minimum=1, maximum=11),
        "type": nullable("string"),
        "nation": nullable("string"),
        "players": {"type": "integer", "minimum": 0},
        "battles": {"type": "integer", "minimum": 0},
        **{
            key: number_or_null
            for key in ("win_rate", "avg_damage", "avg_frags", "avg_xp", "survival_rate", "hit_rate")
        },
    }

    def nullable_percentiles(points: Iterable[int]) -> dict:
        return {
            "oneOf": [obj({f"p{p}": {"type": "number"} for p in points}), {"type": "null"}],
            "description": "Null below min_players qualified players.",
        }

    expected_use = {
        "oneOf": [
            obj(
                {
                    "version": {
                        "type": "string",
                        "description": "The computed table's version when a computed row was used, else the loaded table's.",
                    },
                    "source": {
                        "type": ["string", "null"],
                        "enum": ["table", "computed", "mixed", None],
                        "description": "Whose rows rated the played tanks: the loaded table's, computed ones, or "
                        "both (null: none of them has a row).",
                    },
                    "computed_tanks": {
                        "type": "integer",
                        "minimum": 0,
                        "description": "Played tanks rated with a computed row (the loaded table lacks them, "
                        "or --expected-values-source computed).",
                    },
                    "unrated_tanks": {
                        "type": "integer",
                        "minimum": 0,
                        "description": "Played tanks without any row: left out of WN8.",
                    },
                    "table_version": {"type": "string", "description": "The loaded table's version."},
                    "computed_version": nullable(
                        "string",
                        description="The computed table the computed rows come from (GET /expected-values?version=).",
                    ),
                }
            ),
            {"type": "null"},
        ],
        "description": "The expected values WN8 used (null without ratings or battles).",
    }
    assist_figures = {
        "avg_assist_radio": nullable(
            "number", description="The account's spotting assistance per battle (the game API keeps it per account)."
        ),
        "avg_assist_track": nullable("number", description="The account's tracking assistance per battle."),
        "avg_assist_stun": nullable("number", description="Stun assistance per battle."),
        "avg_combined_damage": nullable(
            "number",
            description="avg_damage plus the largest of the three assistance averages: a lower bound of the "
            "game's per-battle combined damage (docs/data.md).",
        ),
        "damage_ratio": nullable("number", description="Damage dealt / damage received."),
    }
    mark_values = obj({name: {"type": "number"} for name in ("first", "second", "third", "top")})
    nullable_marks = {
        "oneOf": [mark_values, {"type": "null"}],
        "description": "Combined damage per battle beating 65, 85 and 95 % of the tank's counted players, and "
        "the best; null below min_players.",
    }
    marks_sample = obj({"players": {"type": "integer", "minimum": 0}, "battles": {"type": "integer", "minimum": 0}})
    marks_head = {
        "days": {"type": "integer", "minimum": 1},
        "from": date,
        "through": date,
        "built_at": unix,
        "min_battles": {"type": "integer", "minimum": 1},
        "min_players": {"type": "integer", "minimum": 1},
        "method": {"type": "string", "description": "Where the estimate and its bias are explained."},
    }
    mark_change = {
        "oneOf": [obj({name: {"type": "number"} for name in ("first", "second", "third", "top")}), {"type": "null"}],
        "description": "Each threshold now minus its value that many days before; null when either is.",
    }
    official_marks = {
        "oneOf": [
            obj(
                {
                    "marks": {"oneOf": [mark_values, {"type": "null"}]},
                    "mastery_xp": {
                        "oneOf": [
                            obj(
                                {
                                    name: {"type": "number"}
                                    for name in ("third_class", "second_class", "first_class", "ace")
                                }
                            ),
                            {"type": "null"},
                        ]
                    },
                    "date": date,
                    "updated_at": nullable_unix,
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
    estimate_error = {
        "oneOf": [
            obj({name: number_or_null for name in ("first", "second", "third", "top")}),
            {"type": "null"},
        ],
        "description": "Each estimated threshold's error relative to the official one ((estimate - official) / "
        "official); null without both.",
    }
    official_head = {
        "oneOf": [
            obj(
                {
                    "date": date,
                    "stale": {"type": "boolean"},
                    "updated_at": nullable_unix,
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
                                **{name: number_or_null for name in ("first", "second", "third", "top")},
                            }
                        )
                    ),
                }
            ),
            {"type": "null"},
        ]
    }
    tank_assist = {
        "avg_assist_stun": number_or_null,
        "avg_combined_damage": nullable(
            "number", description="With the account's spotting and tracking averages standing for the tank's."
        ),
        "damage_ratio": number_or_null,
    }
    period_figures = obj(
        {
            "from": date,
            "to": date,
            "battles": {"type": "integer", "minimum": 0, "description": "Battles played in the period."},
            "wins": {"type": "integer", "minimum": 0},
            "win_rate": number_or_null,
            "avg_damage": number_or_null,
            "avg_frags": number_or_null,
            "avg_spotted": number_or_null,
            "avg_defence": nullable("number", description="Dropped capture points per battle."),
            "avg_xp": number_or_null,
            "survival_rate": number_or_null,
            "hit_rate": number_or_null,
            "average_tier": nullable("number", description="Battle-weighted over the period's battles."),
            "wn8": nullable("number", description="XVM WN8 over the per-tank differences of the period."),
            "expected_values": expected_use,
            "wn7": number_or_null,
            "efficiency": number_or_null,
            **assist_figures,
            "place": {
                "oneOf": [obj({**place, "min_battles": {"type": "integer", "minimum": 1}}), {"type": "null"}],
                "description": "History deltas only: the account's place on the WN8 leaderboard of the same "
                f"number of days ({and_list(tuple(f'{w}d' for w in LEADERBOARD_WINDOWS if w != 'career'))}; "
                "null for the other periods or when it is not ranked there).",
            },
            "wn8_percentile": nullable(
                "integer",
                minimum=0,
                maximum=99,
                description=f"History deltas {and_list(tuple(f'{p}d' for p in POPULATION_PERIODS))} only: "
                "the share (%) of the region's tracked "
                "accounts with enough battles in the same population period whose WN8 over it was lower.",
            ),
        },
        required=[
            "from",
            "to",
            "battles",
            "wins",
            "win_rate",
            "avg_damage",
            "avg_frags",
            "avg_spotted",
            "avg_defence",
            "avg_xp",
            "survival_rate",
            "hit_rate",
            "average_tier",
            "wn8",
            "expected_values",
            "wn7",
            "efficiency",
            *assist_figures,
        ],
        description="The ratings of the battles played between two days, from per-tank records; "
        "battles 0 and null rates when nothing was played.",
    )

    schemas = {
        "Meta": obj(
            {
                "source": {"type": "string", "description": "Name of the data source."},
                "version": {"type": "string", "const": API_VERSION, "description": "API version."},
                "generated": {
                    **iso,
                    "description": "When this answer was built (ISO 8601, UTC, +00:00): a process replays a "
                    f"built answer to the same path and query for up to {HOT_COPY_SECONDS:g} s "
                    f"({STATUS.answer_seconds:g} s for /status) unless it writes its data meanwhile, so it "
                    "may be that much older than the request.",
                },
                "attribution": {
                    "type": "string",
                    "description": "Credit text; please link to the site when you reuse the data.",
                },
            },
            description="Facts about the answer itself.",
        ),
        "ErrorCode": {
            "type": "string",
            "enum": all_codes,
            "description": "Every error code of the API (status and meaning in the index's `errors`).",
        },
        "Error": obj(
            {
                "code": ref("schemas", "ErrorCode"),
                "message": {"type": "string", "description": "Human-readable; may change, do not parse it."},
                "region": {**region, "description": "The requested region (on `player_not_found`)."},
            },
            required=["code", "message"],
        ),
        "ErrorEnvelope": obj(
            {
                "success": {"type": "boolean", "const": False},
                "error": ref("schemas", "Error"),
            },
            description="An error: `success` is false and `error` stands in place of `data`; there is no `meta`.",
        ),
        # --- player --------------------------------------------------------------
        "PlayerStatistics": obj(
            {
                "battles": {"type": "integer", "minimum": 0},
                "wins": {"type": "integer", "minimum": 0},
                "losses": {"type": "integer", "minimum": 0},
                "draws": {"type": "integer", "minimum": 0},
                "win_rate": nullable("number", description="Percent, two decimals; null without battles."),
                "avg_damage": nullable("number", description="Damage dealt per battle."),
                "avg_frags": nullable("number", description="Vehicles destroyed per battle."),
                "avg_spotted": nullable("number", description="Vehicles spotted per battle."),
                "avg_defence": nullable("number", description="Base capture points reset per battle."),
                "avg_capture": nullable("number", description="Base capture points per battle."),
                "avg_xp": nullable("number", description="Experience per battle."),
                "survival_rate": nullable("number", description="Percent of battles survived."),
                "hit_rate": nullable("number", description="Percent of shots that hit; null without shots."),
                "average_tier": nullable(
                    "number", description="Battle-weighted average vehicle tier; null until ratings are calculated."
                ),
            },
            description="Career totals (random battles) and per-battle averages.",
        ),
        "PlayerRatings": obj(
            {
                "available": {
                    "type": "boolean",
                    "description": "False when the profile was just fetched live: the ratings follow seconds later.",
                },
                "wn8": number_or_null,
                "wn8_color": {
                    "type": ["string", "null"],
                    "enum": WN8_COLOUR_LABELS + [None],
                    "description": "Label of the usual WN8 colour scale.",
                },
                "wn7": number_or_null,
                "efficiency": number_or_null,
                "calculated_at": nullable_unix,
                "expected_values_version": nullable(
                    "string", description="Version (date) of the XVM expected-values table WN8 was computed with."
                ),
                "expected_values": expected_use,
                "wn8_percentile": nullable(
                    "integer",
                    minimum=0,
                    maximum=99,
                    description="Share (%) of the region's tracked accounts with a lower career WN8.",
                ),
                "wtr": nullable(
                    "integer",
                    description="Wargaming's own personal rating (WTR, wot/account/wtr, random battles), as "
                    "measured with the profile; null with wtr_reason.",
                ),
                "wtr_reason": {
                    "type": ["string", "null"],
                    "enum": [*WTR_REASONS, None],
                    "description": "Why wtr is null: no_rating (Wargaming has none: too few random battles), "
                    "upstream_failed (the request failed; the profile did not), not_fetched (not asked yet: a "
                    "live lookup's first answer); null when wtr is known.",
                },
                "global_rating": nullable(
                    "integer", description="Wargaming's personal rating as account/info gives it (global_rating)."
                ),
                "place": {
                    "oneOf": [
                        obj(
                            {
                                "days": {"type": "string", "enum": ["career"]},
                                "by": {"type": "string", "enum": ["wn8"]},
                                **place,
                                "min_battles": {"type": "integer", "minimum": 1},
                            }
                        ),
                        {"type": "null"},
                    ],
                    "description": "The account's place on the region's career WN8 leaderboard "
                    "(GET /leaderboard/players?days=career); null when it is not ranked there.",
                },
            }
        ),
        "PlayerProfile": obj(
            {
                "account_id": {"type": "integer", "minimum": 1},
                "region": region,
                "nickname": nullable("string"),
                "clan_id": nullable("integer", description="Clan of the player, null when none."),
                "created_at": nullable_unix,
                "last_battle_time": nullable_unix,
                "updated_at": nullable_unix,
                "statistics": ref("schemas", "PlayerStatistics"),
                "ratings": ref("schemas", "PlayerRatings"),
                "cached_at": {**unix, "description": "When the profile was stored (at most about one hour ago)."},
                "live_fetched": {
                    "type": "boolean",
                    "description": "True when the profile was not cached and was "
                    "fetched live from the game API just now.",
                },
            }
        ),
        # --- history -------------------------------------------------------------
        "HistoryEntry": obj(
            {
                "date": date,
                "battles": {"type": "integer"},
                "wins": {"type": "integer"},
                "damage_dealt": {"type": "integer"},
                "frags": {"type": "integer"},
                "spotted": {"type": "integer"},
                "xp": {"type": "integer"},
                "wn8": number_or_null,
                "wn7": number_or_null,
                "efficiency": number_or_null,
                "wtr": nullable("integer", description="Wargaming's WTR measured that day (null: none, or not asked)."),
                "global_rating": nullable("integer", description="account/info's global_rating that day."),
                "win_rate": number_or_null,
                "avg_damage": number_or_null,
                "measured": {
                    "type": "boolean",
                    "description": "False on a day the tracker found no new battle: the previous "
                    "snapshot carried forward.",
                },
            },
            description="Career totals as of the snapshot of that UTC day.",
        ),
        "PeriodFigures": period_figures,
        "HistoryDelta": obj(
            {
                "from": date,
                "to": date,
                "battles": {"type": "integer", "description": "Battles played between the two snapshots."},
                "wins": {"type": "integer"},
                "win_rate": number_or_null,
                "avg_damage": number_or_null,
                "avg_frags": number_or_null,
                "avg_xp": number_or_null,
                "wn8_change": number_or_null,
                "win_rate_change": nullable("number", description="Change of the career win rate, percentage points."),
                "wtr_change": nullable("number", description="Change of the WTR (null when either day lacks it)."),
                "global_rating_change": nullable("number", description="Change of global_rating."),
                "period": {
                    "oneOf": [ref("schemas", "PeriodFigures"), {"type": "null"}],
                    "description": "The ratings of the battles played in the period (null without per-tank records).",
                },
            },
            description="What changed over the period: rates over the battles played in it.",
        ),
        "PlayerHistory": obj(
            {
                "account_id": {"type": "integer", "minimum": 1},
                "region": region,
                "days": {"type": "integer", "minimum": 1},
                "first_date": date,
                "last_date": date,
                "snapshots": array(ref("schemas", "HistoryEntry")),
                "snapshot_count": {"type": "integer", "minimum": 0},
                "deltas": obj(
                    {
                        **{
                            f"{p}d": {"oneOf": [ref("schemas", "HistoryDelta"), {"type": "null"}]}
                            for p in DELTA_PERIODS
                        },
                        **{
                            f"recent_{n}": {
                                "oneOf": [ref("schemas", "PeriodFigures"), {"type": "null"}],
                                "description": f"The figures of roughly the last {n:,} battles, from a "
                                "daily record (battles says exactly how many); null when the per-tank "
                                "records do not reach that far.",
                            }
                            for n in RECENT_WINDOWS
                        },
                    },
                    description=f"Deltas over {and_list(DELTA_PERIODS)} days (null when no snapshot lies "
                    f"in the period) and the last {and_list(tuple(f'{n:,}' for n in RECENT_WINDOWS))} battles.",
                ),
                "weekly": {
                    "oneOf": [
                        array(
                            {"oneOf": [ref("schemas", "PeriodFigures"), {"type": "null"}]},
                            description="One entry per 7-day week covering the `days` window, oldest "
                            "first, the last ending on the newest snapshot's day; from and to are the "
                            "week's bounds (the state at the end of `from` to the end of `to`). An "
                            "entry is null for a week before the account's per-tank records begin.",
                        ),
                        {"type": "null"},
                    ],
                    "description": "The figures of the battles played in each week (battles 0 and "
                    "nulls in a week without battles); null without per-tank records.",
                },
                "latest": obj(
                    {
                        "date": date,
                        "battles": {"type": "integer"},
                        "wins": {"type": "integer"},
                        "wn8": number_or_null,
                        "wtr": nullable("integer"),
                    }
                ),
                "assistance_known_from": {
                    **nullable("string"),
                    "description": "The first day whose figures carry the assistance; null: none yet.",
                },
            }
        ),
        "PlayerTanks": obj(
            {
                "account_id": {"type": "integer", "minimum": 1},
                "region": region,
                "days": {"type": "integer", "minimum": 1},
                "from": date,
                "to": date,
                "expected_values_version": nullable("string"),
                "assistance_known_from": {
                    **nullable("string"),
                    "description": "The first day whose figures carry the assistance; null: none yet.",
                },
                "group_by": {"type": "string", "enum": list(GROUP_BYS)},
                "groups": array(
                    obj(
                        {
                            "tier": nullable("integer", minimum=1, maximum=11),
                            "type": nullable("string"),
                            "nation": nullable("string"),
                            "tanks": {"type": "integer", "minimum": 1},
                            "battles": {"type": "integer", "minimum": 1},
                            "wins": {"type": "integer", "minimum": 0},
                            "win_rate": number_or_null,
                            "avg_damage": number_or_null,
                            "avg_combined_damage": number_or_null,
                            "wn8": number_or_null,
                        }
                    ),
                    description="With group_by: the period per group of tanks (one of tier, type, nation "
                    "per entry), played groups only.",
                ),
                "period": obj(
                    {key: period_figures["properties"][key] for key in SUMMARY_FIGURES},
                    description="The whole period over all tanks (as the history delta over the same days).",
                ),
                "tanks": array(
                    obj(
                        {
                            "tank_id": {"type": "integer"},
                            "name": nullable("string"),
                            "tier": nullable("integer", minimum=1, maximum=11),
                            "type": nullable("string"),
                            "nation": nullable("string"),
                            "expected_values_source": {
                                "type": ["string", "null"],
                                "enum": ["table", "computed", None],
                                "description": "The row this tank's WN8 uses: the loaded table's, a "
                                "computed one, or none (null: no WN8).",
                            },
                            "career": obj(
                                {
                                    "battles": {"type": "integer", "minimum": 0},
                                    "wins": {"type": "integer", "minimum": 0},
                                    "win_rate": number_or_null,
                                    "avg_damage": number_or_null,
                                    "wn8": number_or_null,
                                    **tank_assist,
                                    "mark_of_mastery": {"type": "integer", "minimum": 0, "maximum": 4},
                                }
                            ),
                            "period": obj(
                                {
                                    **{name: {"type": "integer", "minimum": 0} for name in ROW_COUNTERS},
                                    "win_rate": number_or_null,
                                    "avg_damage": number_or_null,
                                    "avg_frags": number_or_null,
                                    "wn8": number_or_null,
                                    **tank_assist,
                                },
                                description="Raw counters of the period's battles on this tank, and rates.",
                            ),
                            "standing": {
                                "oneOf": [
                                    obj(
                                        {
                                            "period_days": {"type": "integer", "enum": list(POPULATION_PERIODS)},
                                            "min_battles": {"type": "integer", "minimum": 1},
                                            "damage_percentile": nullable("integer", minimum=0, maximum=99),
                                            "wn8_percentile": nullable("integer", minimum=0, maximum=99),
                                        }
                                    ),
                                    {"type": "null"},
                                ],
                                "description": "Share (%) of the tank's tracked players below this period.",
                            },
                            "marks": {
                                "oneOf": [
                                    obj(
                                        {
                                            "window_days": {"type": "integer", "minimum": 1},
                                            "from": {**nullable("string")},
                                            "battles": {"type": "integer", "minimum": 0},
                                            "combined_damage": number_or_null,
                                            "percentile": nullable("integer", minimum=0, maximum=99),
                                            "estimated_marks": nullable("integer", minimum=0, maximum=3),
                                            "next": {
                                                "oneOf": [
                                                    obj(
                                                        {
                                                            "mark": nullable("integer", minimum=1, maximum=3),
                                                            "combined_damage": number_or_null,
                                                            "needed": {"type": "number", "minimum": 0},
                                                        }
                                                    ),
                                                    {"type": "null"},
                                                ]
                                            },
                                            "thresholds": {
                                                "oneOf": [mark_values, {"type": "null"}],
                                                "description": "The thresholds the progress is measured "
                                                "against: Wargaming's published ones when the tank has them, "
                                                "else the estimate (thresholds_source says which).",
                                            },
                                            "thresholds_source": {
                                                "type": ["string", "null"],
                                                "enum": ["official", "estimate", None],
                                            },
                                            "official_date": {
                                                **nullable("string", format="date"),
                                                "description": "The day the published thresholds were fetched.",
                                            },
                                            "estimated_thresholds": nullable_marks,
                                            "method": {"type": "string"},
                                        }
                                    ),
                                    {"type": "null"},
                                ],
                                "description": "Progress toward the tank's marks of excellence (tier V and up).",
                            },
                            "mastery": obj(
                                {
                                    "badge": {"type": "integer", "minimum": 0, "maximum": 4},
                                    "best_xp": nullable("integer", minimum=0),
                                    "thresholds": {
                                        "oneOf": [
                                            obj(
                                                {
                                                    name: {"type": "number"}
                                                    for name in ("third_class", "second_class", "first_class", "ace")
                                                }
                                            ),
                                            {"type": "null"},
                                        ]
                                    },
                                    "best_xp_reaches": nullable("integer", minimum=0, maximum=4),
                                    "date": nullable("string", format="date"),
                                    "source": {"type": ["string", "null"], "enum": ["wot/tanks/mastery", None]},
                                },
                                description="The mastery badge the game gave (0-4), the best battle's base XP, and "
                                "the badge that battle would reach against Wargaming's published XP thresholds "
                                'today (an indication: docs/data.md, "Official thresholds").',
                            ),
                        }
                    ),
                    description="Every tank the player owns; sorted by period battles, then career battles.",
                ),
            },
            required=PLAYER_TANKS_REQUIRED,
        ),
        "TankStats": obj(
            {
                **population_period,
                "sort": {"type": "string", "enum": list(TANK_SORTS)},
                "order": {"type": "string", "enum": ["desc", "asc"]},
                "total": {"type": "integer", "minimum": 0, "description": "Tanks matching the filters."},
                "offset": {"type": "integer", "minimum": 0},
                "limit": {"type": "integer", "minimum": 1, "maximum": TANK_PAGE_MAX},
                "tanks": array(
                    obj(
                        {
                            **tank_row,
                            "damage_percentiles": nullable_percentiles(TABLE_PERCENTILES),
                            "sample": obj(
                                {
                                    "players": {"type": "integer", "minimum": 0},
                                    "battles": {"type": "integer", "minimum": 0},
                                    "qualified": {"type": "integer", "minimum": 0},
                                }
                            ),
                        }
                    ),
                    maxItems=TANK_PAGE_MAX,
                ),
            }
        ),
        "TankDetail": obj(
            {
                **population_period,
                **tank_row,
                "sample": obj(
                    {
                        "players": {"type": "integer", "minimum": 0},
                        "battles": {"type": "integer", "minimum": 0},
                        "qualified": {"type": "integer", "minimum": 0},
                        "rated": {"type": "integer", "minimum": 0},
                    }
                ),
                "percentiles": obj(
                    {
                        "damage": nullable_percentiles(TANK_PERCENTILES),
                        "wn8": nullable_percentiles(TANK_PERCENTILES),
                    }
                ),
                "series": array(
                    obj(
                        {
                            "date": date,
                            "players": {"type": "integer", "minimum": 0},
                            "battles": {"type": "integer", "minimum": 0},
                            "win_rate": number_or_null,
                            "avg_damage": number_or_null,
                        }
                    )
                ),
                "marks": {
                    "oneOf": [
                        obj(
                            {
                                **marks_head,
                                "marks": nullable_marks,
                                "sample": marks_sample,
                                "series": array(obj({"date": date, **mark_values["properties"]})),
                                "official": official_marks,
                                "estimate_error": estimate_error,
                            }
                        ),
                        {"type": "null"},
                    ],
                    "description": "The tank's marks of excellence (GET /tanks/marks); null below tier V or before built.",
                },
            }
        ),
        "TankMarks": obj(
            {
                "region": region,
                "population": {"type": "string"},
                **marks_head,
                "official": official_head,
                "sort": {"type": "string", "enum": list(MARKS_SORTS)},
                "order": {"type": "string", "enum": ["desc", "asc"]},
                "total": {"type": "integer", "minimum": 0, "description": "Tanks matching the filters."},
                "offset": {"type": "integer", "minimum": 0},
                "limit": {"type": "integer", "minimum": 1, "maximum": TANK_PAGE_MAX},
                "tanks": array(
                    obj(
                        {
                            "tank_id": {"type": "integer", "minimum": 1},
                            "name": nullable("string"),
                            "tier": nullable("integer", minimum=1, maximum=11),
                            "type": nullable("string"),
                            "nation": nullable("string"),
                            "marks": nullable_marks,
                            "sample": marks_sample,
                            **{f"change_{days}d": mark_change for days in MARKS_CHANGE_DAYS},
                            "official": official_marks,
                            "estimate_error": estimate_error,
                        }
                    ),
                    maxItems=TANK_PAGE_MAX,
                ),
            }
        ),
        "PlayerLeaderboard": obj(
            {
                "region": region,
                "days": {"type": "string", "enum": list(LEADERBOARD_WINDOWS)},
                "from": {"oneOf": [date, {"type": "null"}]},
                "through": date,
                "built_at": {"type": "number"},
                "by": {"type": "string", "enum": list(PLAYER_LEADERBOARD_BYS)},
                "tier": nullable("integer", minimum=1, maximum=11),
                "type": {"oneOf": [{"type": "string", "enum": list(VEHICLE_TYPES)}, {"type": "null"}]},
                **leaderboard_floors,
                "players": {"type": "integer", "minimum": 0},
                **leaderboard_page,
            }
        ),
        "TankLeaderboard": obj(
            {
                "region": region,
                "tank_id": {"type": "integer", "minimum": 1},
                "days": {"type": "string", "enum": list(LEADERBOARD_WINDOWS)},
                "from": {"oneOf": [date, {"type": "null"}]},
                "through": date,
                "built_at": {"type": "number"},
                "by": {"type": "string", "enum": list(LEADERBOARD_BYS)},
                **leaderboard_floors,
                **leaderboard_page,
            }
        ),
        "ClanLeaderboard": obj(
            {
                "region": region,
                "days": {"type": "string", "enum": list(LEADERBOARD_WINDOWS)},
                "from": {"oneOf": [date, {"type": "null"}]},
                "through": date,
                "built_at": {"type": "number"},
                "by": {"type": "string", "enum": list(CLAN_LEADERBOARD_BYS)},
                "min_members": {"type": "integer", "minimum": 1},
                "min_battles": {"type": "integer", "minimum": 1},
                "population": {"type": "string"},
                "clans": {"type": "integer", "minimum": 0},
                "total": {"type": "integer", "minimum": 0, "description": "Clans ranked."},
                "offset": {"type": "integer", "minimum": 0},
                "limit": {"type": "integer", "minimum": 1, "maximum": LEADERBOARD_PAGE_MAX},
                "rows": array(
                    obj(
                        {
                            "rank": {"type": "integer", "minimum": 1},
                            "clan_id": {"type": "integer", "minimum": 1},
                            "tag": nullable("string"),
                            "name": nullable("string"),
                            "value": {"type": "number"},
                            "members": {"type": "integer", "minimum": 1},
                            "active_members": {"type": "integer", "minimum": 1},
                            "battles": {"type": "integer", "minimum": 1},
                            "battles_per_member": {"type": "number", "minimum": 0},
                            "wn8": number_or_null,
                            "win_rate": {"type": "number", "minimum": 0, "maximum": 100},
                            "elo_10": nullable("integer"),
                            "elo_8": nullable("integer"),
                            "skirmish_win_rate": nullable("number", minimum=0, maximum=100),
                        }
                    ),
                    maxItems=LEADERBOARD_PAGE_MAX,
                ),
            }
        ),
        "ExpectedValuesTable": obj(
            {
                "region": region,
                "source": {"type": "string", "enum": list(EXPECTED_SOURCES)},
                "rating_source": {"type": "string", "enum": ["table", "computed"]},
                "version": nullable("string"),
                "table_version": nullable("string"),
                "header": obj(
                    {
                        "source": {"type": "string"},
                        "version": nullable("string"),
                        "region": region,
                        "rows": {"type": "string", "enum": list(EXPECTED_SOURCES)},
                    },
                    description="The XVM file's header.",
                ),
                "data": array(
                    obj(
                        {
                            "IDNum": {"type": "integer", "minimum": 1},
                            **{
                                key: {"type": "number", "exclusiveMinimum": 0}
                                for key in ("expDef", "expFrag", "expSpot", "expDamage", "expWinRate")
                            },
                            "source": {"type": "string", "enum": ["table", "computed"]},
                            "sample": {
                                "oneOf": [
                                    obj(
                                        {
                                            "players": {"type": "integer", "minimum": 1},
                                            "battles": {"type": "integer", "minimum": 1},
                                        }
                                    ),
                                    {"type": "null"},
                                ]
                            },
                        }
                    ),
                    description="The XVM file's rows, by IDNum.",
                ),
                "computed": {
                    "oneOf": [
                        obj(
                            {
                                "version": {"type": "string"},
                                "method": {"type": "string"},
                                "through": date,
                                "window": obj({"from": date, "through": date, "days": {"type": "integer"}}),
                                "minimums": obj(
                                    {
                                        key: {"type": "integer", "minimum": 1}
                                        for key in ("tank_battles", "account_battles", "players", "row_battles")
                                    }
                                ),
                                "base": nullable("string"),
                                "built_at": unix,
                                **{
                                    part: obj(
                                        {
                                            "tanks": {"type": "integer", "minimum": 0},
                                            "passes": nullable("integer"),
                                            "converged": nullable("boolean"),
                                        }
                                    )
                                    for part in ("gaps", "every_tank")
                                },
                            }
                        ),
                        {"type": "null"},
                    ]
                },
                "comparison": {
                    "oneOf": [
                        obj(
                            {
                                "computed_version": {"type": "string"},
                                "table_version": {"type": "string"},
                                "tanks": {"type": "integer", "minimum": 1},
                                **{stat: {"type": "number"} for stat in EXPECTED_STATS},
                                **{
                                    f"by_{key}": array(
                                        obj(
                                            {
                                                key: schema,
                                                "tanks": {"type": "integer", "minimum": 1},
                                                **{stat: {"type": "number"} for stat in EXPECTED_STATS},
                                            }
                                        )
                                    )
                                    for key, schema in (
                                        ("tier", {"type": "integer", "minimum": 1, "maximum": 11}),
                                        ("type", {"type": "string"}),
                                    )
                                },
                                "largest_differences": array(
                                    obj(
                                        {
                                            "tank_id": {"type": "integer", "minimum": 1},
                                            "name": nullable("string"),
                                            "tier": nullable("integer", minimum=1, maximum=11),
                                            "type": nullable("string"),
                                            "statistic": {"type": "string", "enum": list(EXPECTED_STATS)},
                                            "ratios": obj({stat: {"type": "number"} for stat in EXPECTED_STATS}),
                                            "players": {"type": "integer", "minimum": 1},
                                            "battles": {"type": "integer", "minimum": 1},
                                        }
                                    )
                                ),
                            },
                            description="Median ratio computed / loaded per statistic (overall, per tier, per type).",
                        ),
                        {"type": "null"},
                    ]
                },
            }
        ),
        "PlayerSearch": obj(
            {
                "search": {"type": "string"},
                "region": {"type": ["string", "null"], "enum": [*REGIONS, None]},
                "source": {"type": "string", "enum": ["tracked", "upstream"]},
                "results": array(
                    obj(
                        {
                            "account_id": {"type": "integer", "minimum": 1},
                            "nickname": {"type": "string"},
                            "region": region,
                            "tracked": {"type": "boolean", "description": "Measured daily by this service."},
                        }
                    ),
                    maxItems=SEARCH_RESULTS,
                ),
            }
        ),
        "PlayerProfiles": obj(
            {
                "region": region,
                "ids": array({"type": "integer", "minimum": 1}, description="The account IDs asked for, in order."),
                "profiles": array(
                    ref("schemas", "PlayerProfile"),
                    description="The cached profiles among them, in the order asked (never fetched live).",
                ),
                "missing": array(
                    {"type": "integer", "minimum": 1},
                    description="The IDs asked for with no cached profile, in the order asked.",
                ),
            }
        ),
        "Players": {
            "oneOf": [ref("schemas", "PlayerSearch"), ref("schemas", "PlayerProfiles")],
            "description": "With search: the accounts found; with ids: their cached profiles.",
        },
        "Dumps": obj(
            {
                "region": {"type": ["string", "null"], "enum": [*REGIONS, None]},
                "day": {"oneOf": [date, {"type": "null"}]},
                "days": array(date, description="The days with files, newest first."),
                "kept_days": {"type": "integer", "minimum": 1},
                "built_at": nullable("number"),
                "files": array(
                    obj(
                        {
                            "name": {"type": "string"},
                            "url": {"type": "string"},
                            "region": region,
                            "day": date,
                            "kind": {"type": "string"},
                            "format": {"type": "string", "enum": ["json", "csv"]},
                            "rows": {"type": "integer", "minimum": 0},
                            "bytes": {"type": "integer", "minimum": 1},
                            "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                        }
                    )
                ),
            }
        ),
        # --- clans ---------------------------------------------------------------
        "Clan": obj(
            {
                "clan_id": {"type": "integer", "minimum": 1},
                "region": region,
                "tag": nullable("string"),
                "name": nullable("string"),
                "members_count": {"type": "integer", "minimum": 0},
                "ratings": obj(
                    {
                        "elo_10": nullable("integer", description="Elo rating, tier X category."),
                        "elo_8": nullable("integer", description="Elo rating, tier VIII category."),
                        "skirmish_win_rate": nullable("number", description="Percent, two decimals."),
                        "skirmish_battles": {"type": "integer", "minimum": 0},
                        "ratings_updated_at": nullable(
                            "integer",
                            description="Unix time elo_10 and elo_8 were fetched; older than cached_at when "
                            "the ratings call failed at the newest refresh (the older figures are kept); null "
                            "when never fetched.",
                        ),
                        "stronghold_updated_at": nullable(
                            "integer",
                            description="Unix time skirmish_battles and skirmish_win_rate were fetched; older "
                            "than cached_at when the stronghold call failed at the newest refresh (the older "
                            "figures are kept); null when never fetched.",
                        ),
                    }
                ),
                "members": obj(
                    {
                        "profiles_measured": {
                            "type": "integer",
                            "minimum": 0,
                            "description": "Member profiles the averages were computed from.",
                        },
                        "avg_win_rate": number_or_null,
                        "avg_damage": number_or_null,
                        "avg_battles": number_or_null,
                    },
                    description="Averages across the real member profiles.",
                ),
                "member_list": array(
                    obj(
                        {
                            "account_id": {"type": "integer"},
                            "name": nullable("string"),
                            "role": nullable("string"),
                            "joined_at": nullable_unix,
                        }
                    )
                ),
                "cached_at": {
                    **unix,
                    "description": "When the clan was stored; older data stays served when the game API fails.",
                },
            }
        ),
        "ClanWeekly": obj(
            {
                "clan_id": {"type": "integer", "minimum": 1},
                "region": region,
                "tag": nullable("string"),
                "name": nullable("string"),
                "period": obj({"start": date, "end": date, "days": {"type": "integer"}}),
                "activity": obj(
                    {
                        "members": {"type": "integer"},
                        "measured_members": {"type": "integer"},
                        "active_members": {"type": "integer"},
                        "inactive": array(member_ref),
                        "not_measured": array(member_ref),
                        "battles_per_member": number_or_null,
                        "joined": array(
                            obj({"account_id": {"type": "integer"}, "name": nullable("string"), "date": date})
                        ),
                        "left": array(
                            obj({"account_id": {"type": "integer"}, "name": nullable("string"), "date": date})
                        ),
                    }
                ),
                "top": obj(
                    {
                        "min_battles": {"type": "integer"},
                        "by_battles": array(
                            obj(
                                {
                                    "account_id": {"type": "integer"},
                                    "name": nullable("string"),
                                    "battles": {"type": "integer"},
                                }
                            )
                        ),
                        "by_wn8": array(
                            obj(
                                {
                                    "account_id": {"type": "integer"},
                                    "name": nullable("string"),
                                    "wn8": {"type": "number"},
                                    "wn8_change": number_or_null,
                                    "battles": {"type": "integer"},
                                }
                            )
                        ),
                        "by_win_rate": array(
                            obj(
                                {
                                    "account_id": {"type": "integer"},
                                    "name": nullable("string"),
                                    "win_rate": {"type": "number"},
                                    "battles": {"type": "integer"},
                                }
                            )
                        ),
                    }
                ),
                "aggregates": obj(
                    {
                        "battles": {"type": "integer"},
                        "wins": {"type": "integer"},
                        "win_rate": number_or_null,
                        "avg_damage": number_or_null,
                        "members_avg_change": obj(
                            {
                                "profiles_compared": {"type": "integer", "minimum": 0},
                                **{
                                    key: obj({"start": number_or_null, "end": number_or_null, "change": number_or_null})
                                    for key in ("win_rate", "avg_damage", "avg_battles")
                                },
                            },
                            description="Mean member career values at the start and the end of the week.",
                        ),
                    }
                ),
                "clan_cached_at": unix,
                "computed_at": unix,
            },
            description="The digest of the last 7 UTC days, from the members' daily snapshots.",
        ),
        # --- online --------------------------------------------------------------
        "OnlinePeak": obj(
            {
                "date": date,
                "players": {"type": "integer", "minimum": 0},
                "minute": iso,
                "minute_unix": unix,
            },
            required=["players", "minute", "minute_unix"],
            description="A measured peak and its minute.",
        ),
        "OnlinePeaks": obj(
            {
                "today": {"oneOf": [ref("schemas", "OnlinePeak"), {"type": "null"}]},
                "all_time": {"oneOf": [ref("schemas", "OnlinePeak"), {"type": "null"}]},
            }
        ),
        "OnlineRegion": obj(
            {
                "players": nullable("integer", minimum=0),
                "minute": iso_or_null,
                "minute_unix": nullable_unix,
                "age_seconds": nullable("integer", minimum=0),
                "servers": array(obj({"server": {"type": "string"}, "players": {"type": "integer", "minimum": 0}})),
                "failing": {
                    "type": "boolean",
                    "description": "The newest sampling attempt failed; the counts are the last good ones.",
                },
                "last_failure": nullable_unix,
                "peak": ref("schemas", "OnlinePeaks"),
            }
        ),
        "OnlineGame": obj(
            {
                "players": nullable("integer", minimum=0),
                "minute": iso_or_null,
                "minute_unix": nullable_unix,
                "complete": {"type": "boolean", "description": "All regions were sampled at the same minute."},
                "peak": ref("schemas", "OnlinePeaks"),
                "regions": obj({r: ref("schemas", "OnlineRegion") for r in REGIONS}),
            }
        ),
        "Online": obj(
            {
                "games": obj({g: ref("schemas", "OnlineGame") for g in GAMES}),
                "newest_sample": {
                    "oneOf": [
                        obj({"minute": iso, "minute_unix": unix, "age_seconds": {"type": "integer", "minimum": 0}}),
                        {"type": "null"},
                    ]
                },
                "today": date,
                "sample_interval_seconds": {"type": "integer", "minimum": 1},
            }
        ),
        "OnlineHistory": obj(
            {
                "game": {"type": "string", "enum": list(GAMES)},
                "region": {"type": "string", "enum": list(REGIONS) + ["all"]},
                "days": {"type": "integer", "minimum": 1},
                "from": date,
                "to": date,
                "series": array(
                    obj(
                        {
                            "date": date,
                            "samples": {"type": "integer", "minimum": 0},
                            "peak": nullable("integer", minimum=0),
                            "peak_minute": iso_or_null,
                            "min": nullable("integer", minimum=0),
                            "avg": nullable("number", minimum=0),
                        },
                        description="One UTC day; days without samples have samples 0 and null values.",
                    )
                ),
            }
        ),
        # --- status --------------------------------------------------------------
        "Status": obj(
            {
                "health": {"type": "string", "enum": ["ok", "degraded"]},
                "health_reasons": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Why health is degraded (empty when ok).",
                },
                "version": {"type": "string", "description": "Server software version."},
                "api_version": {"type": "string", "const": API_VERSION},
                "uptime_seconds": {"type": "integer", "minimum": 0},
                "database": obj(
                    {
                        "reachable": {"type": "boolean"},
                        "ping_ms": number_or_null,
                        "error": {"type": "string"},
                        "writable": {"type": "boolean"},
                        "write_error": {
                            "oneOf": [
                                obj({"reason": {"type": "string"}, "since": {"type": "integer"}}),
                                {"type": "null"},
                            ]
                        },
                    },
                    required=["reachable", "ping_ms", "writable", "write_error"],
                ),
                "upstream": obj(
                    {
                        "configured": {"type": "boolean"},
                        "last_success": number_or_null,
                        "last_failure": number_or_null,
                        "last_error": nullable("string"),
                        "requests": {"type": "integer", "minimum": 0},
                        "failures": {"type": "integer", "minimum": 0},
                        "budget": obj(
                            {
                                "rate_per_second": {
                                    "type": "number",
                                    "description": "Configured upstream quota of the application_id (all processes).",
                                },
                                "processes_sharing": {"type": "integer", "minimum": 1},
                                "share_per_second": {
                                    "type": "number",
                                    "description": "This process's share of the quota.",
                                },
                                "effective_per_second": {
                                    "type": "number",
                                    "description": "What this process sends at most now (after the "
                                    "safety margin and any slow-down).",
                                },
                                "window": obj(
                                    {
                                        "requests": {"type": "integer"},
                                        "seconds": {"type": "number"},
                                        "reserved_for_live": {"type": "integer"},
                                    }
                                ),
                                "in_flight": {
                                    "type": "integer",
                                    "minimum": 0,
                                    "description": "Requests sent and not yet answered.",
                                },
                                "slowed_down": {
                                    "type": "boolean",
                                    "description": "The upstream refused a request for the rate recently.",
                                },
                                "requests_last_minute": {"type": "integer", "minimum": 0},
                                "requests_last_minute_by_caller": {
                                    "type": "object",
                                    "additionalProperties": {"type": "integer"},
                                    "description": "live, clans, refresh, online, reference, seed, other",
                                },
                                "queued": {
                                    "type": "object",
                                    "additionalProperties": {"type": "integer"},
                                    "description": "Requests waiting for a slot, by priority (0 = live).",
                                },
                                "request_limit_exceeded": obj(
                                    {"count": {"type": "integer", "minimum": 0}, "last": number_or_null}
                                ),
                                "live_queue_wait_ms": obj(
                                    {
                                        "p50": number_or_null,
                                        "p99": number_or_null,
                                        "samples": {"type": "integer", "minimum": 0},
                                    }
                                ),
                            }
                        ),
                        "realms": {
                            "type": "object",
                            "description": "Per realm (eu, na, asia): its cap under the CDN's per-address throttle, "
                            "the rate in use after congestion, timeouts, back-off.",
                            "additionalProperties": obj(
                                {
                                    "cap_per_second": {
                                        "type": "number",
                                        "description": "Configured cap (--upstream-realm-rps), all processes.",
                                    },
                                    "share_per_second": {"type": "number", "description": "This process's share."},
                                    "rate_per_second": {
                                        "type": "number",
                                        "description": "What this process sends at most now (halved on each "
                                        "congestion, recovering 5 % every 10 s).",
                                    },
                                    "slowed_down": {"type": "boolean"},
                                    "timeouts_last_minute": {
                                        "type": "integer",
                                        "minimum": 0,
                                        "description": "Timeouts, connection errors and 5xx in the last minute.",
                                    },
                                    "congestions": {"type": "integer", "minimum": 0, "description": "Since start."},
                                    "last_congestion": number_or_null,
                                    "backoff": obj(
                                        {
                                            "active": {"type": "boolean"},
                                            "seconds_left": {"type": "number", "minimum": 0},
                                            "streak": {
                                                "type": "integer",
                                                "minimum": 0,
                                                "description": "Congestions since the realm last answered.",
                                            },
                                        },
                                        description="Background work waits this out; live lookups answer 503 "
                                        "upstream_unavailable with Retry-After meanwhile.",
                                    ),
                                    "in_flight": {"type": "integer", "minimum": 0},
                                    "queued": {"type": "integer", "minimum": 0},
                                    "requests_last_minute": {"type": "integer", "minimum": 0},
                                    "pass": {
                                        "type": ["object", "null"],
                                        "description": "The realm's part of today's tracker pass "
                                        "(tracker.today.by_realm), null before its first visit today.",
                                    },
                                },
                                required=[
                                    "cap_per_second",
                                    "share_per_second",
                                    "rate_per_second",
                                    "slowed_down",
                                    "timeouts_last_minute",
                                    "congestions",
                                    "last_congestion",
                                    "backoff",
                                    "in_flight",
                                    "queued",
                                    "requests_last_minute",
                                ],
                            ),
                        },
                        "configuration_errors": array(
                            obj(
                                {
                                    "code": {"type": "string", "description": "e.g. DEMO_APPLICATION_IS_BLOCKED"},
                                    "scope": {
                                        "type": "string",
                                        "description": "application (every request) or the method's path",
                                    },
                                    "method": {"type": "string"},
                                    "advice": {"type": "string", "description": "What the operator should do."},
                                    "since": {"type": "number"},
                                    "last_seen": {"type": "number"},
                                    "count": {"type": "integer", "minimum": 1},
                                    "next_try_in_seconds": {"type": "integer", "minimum": 0},
                                }
                            ),
                            description="Configuration-class upstream answers in force (health degraded); "
                            "nothing is sent in their scope until the next try.",
                        ),
                        "invalid_ids": {
                            "type": "integer",
                            "minimum": 0,
                            "description": "Ids the upstream called invalid, isolated by splitting their lists.",
                        },
                        "user_agent": {"type": "string", "description": "Sent with every upstream request."},
                        "expected_values": obj(
                            {
                                "version": nullable("string"),
                                "tanks": {"type": "integer", "minimum": 0},
                                "rows_skipped": {"type": "integer", "minimum": 0},
                                "loaded_at": number_or_null,
                                "last_error": nullable("string"),
                                "url": nullable("string", description="Where the table is downloaded from."),
                                "checked_at": {
                                    **number_or_null,
                                    "description": "Last successful check of the download (a 304 counts).",
                                },
                                "refused": {
                                    "type": ["object", "null"],
                                    "properties": {"reason": {"type": "string"}, "at": {"type": "number"}},
                                    "description": "The last download refused (unparsable, lost more than 5 % of "
                                    "the rows, another format): the table in use stays; null once a download passes.",
                                },
                                "saved": {
                                    "type": ["object", "null"],
                                    "properties": {
                                        "path": {"type": "string"},
                                        "version": nullable("string"),
                                        "url": nullable("string"),
                                    },
                                    "description": "The last good table kept in the data directory (what a "
                                    "restart without network rates with).",
                                },
                                "source": {"type": "string", "enum": ["table", "computed"]},
                                "computed": {
                                    "type": "object",
                                    "additionalProperties": nullable("string"),
                                    "description": "Per region: the computed table this process rates with (null: none yet).",
                                },
                            },
                            required=["version", "tanks", "rows_skipped", "loaded_at", "last_error"],
                        ),
                    },
                    required=["configured"],
                ),
                "tracker": obj(
                    {
                        "enabled": {"type": "boolean", "description": "False when this process runs no tracker."},
                        "track_days": {
                            "type": "integer",
                            "minimum": 1,
                            "description": "An account stays tracked this many days after its last lookup "
                            "(or while its clan is cached).",
                        },
                        "slices": {"type": "integer", "minimum": 1, "description": "Parts of the daily pass."},
                        "tracked": {"type": "integer", "minimum": 0, "description": "Accounts tracked now."},
                        "today": obj(
                            {
                                "day": date,
                                "visited": {"type": "integer", "minimum": 0},
                                "total": {"type": "integer", "minimum": 0},
                                "slices_finished": {"type": "integer", "minimum": 0},
                                "eta_seconds": nullable("integer", minimum=0),
                                "requests": obj(
                                    {
                                        "account_info": {"type": "integer", "minimum": 0},
                                        "tanks_stats": {"type": "integer", "minimum": 0},
                                    }
                                ),
                                "records": {"type": "integer", "minimum": 0},
                                "record_bytes": {"type": "integer", "minimum": 0},
                                "by_realm": {
                                    "type": "object",
                                    "description": "Per realm: today's visits and upstream requests, what is "
                                    "left (estimated from the realm's share of today's visits) and when its "
                                    "part of the pass should end at the realm's own pace.",
                                    "additionalProperties": obj(
                                        {
                                            "visited": {"type": "integer", "minimum": 0},
                                            "requests": {"type": "integer", "minimum": 0},
                                            "remaining_estimate": {"type": "integer", "minimum": 0},
                                            "eta_seconds": nullable("integer", minimum=0),
                                        }
                                    ),
                                },
                            },
                            required=[
                                "day",
                                "visited",
                                "total",
                                "slices_finished",
                                "eta_seconds",
                                "requests",
                                "records",
                                "record_bytes",
                            ],
                            description="Today's pass over every process.",
                        ),
                        "this_process": obj(
                            {
                                "slices_claimed": array({"type": "integer", "minimum": 0}),
                                "spent_today": obj({key: {"type": "integer", "minimum": 0} for key in SPEND_KEYS}),
                            }
                        ),
                    },
                    required=["enabled"],
                    description="The daily pass that measures every tracked account (see the README's Tracker).",
                ),
                "jobs": {
                    "type": "object",
                    "description": "Last outcome of each background job, by job name.",
                    "additionalProperties": {
                        "type": "object",
                        "properties": {
                            "ok": {"type": "boolean"},
                            "last_run": {"type": "number"},
                            "message": {"type": "string"},
                            "duration_s": {"type": "number"},
                        },
                    },
                },
                "leader": {"type": "boolean", "description": "This process runs the background jobs."},
                "rate_limiter": obj(
                    {
                        "tracked_keys": {"type": "integer", "minimum": 0},
                        "last_flush": number_or_null,
                        "flush_failures": {"type": "integer", "minimum": 0},
                        "evicted_windows": {"type": "integer", "minimum": 0},
                        "pending_keys": {
                            "type": "integer",
                            "minimum": 0,
                            "description": "Counters admitted here, not yet written to the database.",
                        },
                        "flush_lag_seconds": {
                            "type": "number",
                            "minimum": 0,
                            "description": "How long flushes have been failing or leaving counters "
                            "behind (0 when they keep up).",
                        },
                        "consecutive_flush_failures": {"type": "integer", "minimum": 0},
                        "last_flush_error": nullable("string"),
                        "degraded": {
                            "type": "boolean",
                            "description": "Flushes fail or lag by more than 10 s: limits are then exact per "
                            "process only (at most processes x limit per client).",
                        },
                    }
                ),
                "watcher": {
                    "oneOf": [
                        obj({"enabled": {"type": "boolean", "const": False}}),
                        obj(
                            {
                                "captures": {"type": "integer", "minimum": 0},
                                "upstream_requests": {"type": "integer", "minimum": 0},
                                "requests_last_minute": obj({r: {"type": "integer", "minimum": 0} for r in REGIONS}),
                                "share_per_minute": {"type": "integer", "minimum": 1},
                                "failed_ticks": {"type": "integer", "minimum": 0},
                                "streams": obj(
                                    {
                                        "open": {"type": "integer", "minimum": 0},
                                        "accounts": {"type": "integer", "minimum": 0},
                                    }
                                ),
                            }
                        ),
                    ],
                    "description": "The watcher of the sessions' accounts in this process.",
                },
                "backups": {
                    "oneOf": [
                        {"type": "null"},
                        obj(
                            {
                                "directory": {"type": "string"},
                                "keep": {"type": "integer", "minimum": 1},
                                "count": {"type": "integer", "minimum": 0},
                                "last_success": {
                                    "oneOf": [
                                        {"type": "null"},
                                        obj(
                                            {
                                                "at": {"type": "integer"},
                                                "name": {"type": "string"},
                                                "documents": {"type": "integer", "minimum": 0},
                                                "bytes": {"type": "integer", "minimum": 0},
                                                "seconds": {"type": "number", "minimum": 0},
                                            }
                                        ),
                                    ]
                                },
                                "last_failure": {
                                    "oneOf": [
                                        {"type": "null"},
                                        obj(
                                            {
                                                "at": {"type": "integer"},
                                                "name": {"type": "string"},
                                                "reason": {"type": "string"},
                                                "seconds": {"type": "number", "minimum": 0},
                                            }
                                        ),
                                    ],
                                    "description": "The last failed run (kept after later successes and across "
                                    "restarts): when, the backup it was writing, why and how long it had run.",
                                },
                                "running": {
                                    "oneOf": [
                                        {"type": "null"},
                                        obj({"collection": {"type": "string"}, "documents": {"type": "integer"}}),
                                    ]
                                },
                            }
                        ),
                    ],
                    "description": "Scheduled backups (--backup-dir); null when off.",
                },
                "embedded_database": {
                    "oneOf": [
                        {"type": "null"},
                        obj(
                            {
                                "state": {"type": "string", "description": "running, restarting or failed"},
                                "restarts": {"type": "integer", "minimum": 0},
                                "restart_attempts": {"type": "integer", "minimum": 0},
                                "last_restart": nullable("integer"),
                                "last_exit": {
                                    "oneOf": [
                                        {"type": "null"},
                                        obj({"at": {"type": "integer"}, "code": nullable("integer")}),
                                    ]
                                },
                            }
                        ),
                    ],
                    "description": "The supervised embedded database (null with an external MongoDB).",
                },
                "connections": {
                    "oneOf": [{"type": "null"}, {"type": "object", "additionalProperties": {"type": "integer"}}],
                    "description": "This process's client connections: open, max, "
                    "max_per_client, waiting_for_head, refused, shed_idle, "
                    "head_timeouts, heads_too_large, accept_pauses.",
                },
                "caches": {
                    "type": "object",
                    "description": "Newest cached item per data family (Unix time); empty "
                    "when the database is unreachable.",
                    "additionalProperties": number_or_null,
                },
                "volume": obj(
                    {"tank_records": {"type": "integer", "minimum": 0}},
                    description="Stored volume the embedded database's ceiling is measured in (kept "
                    "counts); empty when the database is unreachable.",
                    required=[],
                ),
                "online_sampler": {
                    "type": "object",
                    "description": 'Per game/region ("wot/eu"…): the '
                    "sampler's last success and last failure (Unix "
                    "time); empty when the database is unreachable.",
                    "additionalProperties": obj({"last_success": number_or_null, "last_failure": number_or_null}),
                },
                "answer_cache": obj(
                    {
                        "entries": {"type": "integer", "minimum": 0},
                        "bytes": {"type": "integer", "minimum": 0},
                        "max_bytes": {"type": "integer", "minimum": 0},
                        "hits": {"type": "integer", "minimum": 0},
                        "misses": {"type": "integer", "minimum": 0},
                        "hit_rate": number_or_null,
                        "evictions": {"type": "integer", "minimum": 0},
                        "dropped_on_write": {"type": "integer", "minimum": 0},
                    },
                    description="This process's cache of rendered answers (replayed for the same path "
                    "and query within the endpoint's answer_seconds, dropped when this process writes "
                    "their data).",
                ),
            }
        ),
        # --- index ---------------------------------------------------------------
        "Index": obj(
            {
                "name": {"type": "string"},
                "version": {"type": "string", "const": API_VERSION},
                "description": {"type": "string"},
                "site": {"type": "string"},
                "attribution": {"type": "string"},
                "openapi": {"type": "string"},
                "methods": array({"type": "string"}),
                "rate_limits": {"type": "object", "required": list(index["rate_limits"])},
                "regions": array({"type": "string", "enum": list(REGIONS)}),
                "games": array({"type": "string", "enum": list(GAMES)}),
                "endpoints": array(
                    obj(
                        {
                            "method": {"type": "string"},
                            "name": {"type": "string", "enum": [endpoint.name for endpoint in CATALOGUE]},
                            "path": {"type": "string"},
                            "cache_max_age": {"type": "integer", "minimum": 0},
                            "answer_seconds": {
                                "type": "number",
                                "minimum": 0,
                                "description": "How long a process replays a built answer to the same path "
                                "and query (meta.generated says when it was built); 0: built for every request.",
                            },
                            "parameters": array({"type": "object", "required": ["name", "in", "type"]}),
                            "description": {"type": "string"},
                            "example": {"type": "string"},
                            "rate_limit_per_minute": {"type": "integer", "minimum": 1},
                            "live_lookup_limits": obj(
                                {"per_client_per_minute": {"type": "integer"}, "global_per_minute": {"type": "integer"}}
                            ),
                            "fields": {
                                "type": "object",
                                "additionalProperties": {"type": "string"},
                                "description": "Short guide to the fields of the answer.",
                            },
                            "csv": obj(
                                {
                                    "rows": {"type": "string", "description": "The list of `data` served as rows."},
                                    "columns": array(
                                        {"type": "string"},
                                        description="The header row: dotted paths into a row (career.wn8).",
                                    ),
                                    "media_type": {"type": "string"},
                                },
                                description="Present when ?format=csv serves the answer's table as CSV.",
                            ),
                        },
                        required=[
                            "method",
                            "name",
                            "path",
                            "cache_max_age",
                            "parameters",
                            "description",
                            "example",
                            "rate_limit_per_minute",
                        ],
                        closed=False,
                    )
                ),
                "errors": array(
                    obj(
                        {
                            "code": ref("schemas", "ErrorCode"),
                            "status": {"type": "integer"},
                            "meaning": {"type": "string"},
                        }
                    )
                ),
            },
            closed=False,
        ),
    }
    # A session's tank rows: the tanks endpoint's, without its population standing and marks.
    tank_row = schemas["PlayerTanks"]["properties"]["tanks"]["items"]
    session_row = obj({k: v for k, v in tank_row["properties"].items() if k not in ("standing", "marks", "mastery")})
    schemas["PlayerSession"] = obj(
        {
            "account_id": {"type": "integer", "minimum": 1},
            "region": region,
            "since": unix,
            "from": unix,
            "from_source": {"type": "string", "enum": ["daily", "watch"]},
            "from_day": {"oneOf": [date, {"type": "null"}]},
            "from_exact": {"type": "boolean"},
            "from_reason": {
                "oneOf": [
                    {"type": "string", "enum": [NOT_AS_OLD, PLAYED_BEFORE_MEASURED, NOT_MEASURED]},
                    {"type": "null"},
                ]
            },
            "as_of": unix,
            "as_of_source": {"type": "string", "enum": ["daily", "watch"]},
            "watching": {"type": "boolean"},
            "watching_until": nullable_unix,
            **{key: period_figures["properties"][key] for key in SESSION_FIGURES},
            "tanks": array(session_row, description="The tanks played in the session, most battles first."),
        }
    )
    for endpoint in CATALOGUE:
        if endpoint.schema is not None:
            schemas[endpoint.schema + "Envelope"] = obj(
                {
                    "success": {"type": "boolean", "const": True},
                    "meta": ref("schemas", "Meta"),
                    "data": ref("schemas", endpoint.schema),
                }
            )
    return schemas
