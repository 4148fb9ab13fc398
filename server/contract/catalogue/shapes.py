"""The vocabulary of the response schemas (JSON Schema 2020-12, as OpenAPI 3.1 uses them).

The helpers every contract module writes its schemas with (ref, nullable, obj, array) and the
fragments several of them share: timestamps, days, the region, a leaderboard place, the expected
values a rating used and a period's figures. An endpoint's own schemas sit beside its catalogue
entry (its module's SCHEMAS); handlers/schemas.py assembles them into components/schemas.
"""

from __future__ import annotations

from collections.abc import Iterable

from server.contract.catalogue.figures import LEADERBOARD_WINDOWS, POPULATION_PERIODS, TANK_PAGE_MAX
from server.contract.catalogue.model import and_list
from store.constants import REGIONS

ISO_UTC_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$"
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"


def ref(kind: str, name: str) -> dict:
    return {"$ref": f"#/components/{kind}/{name}"}


def nullable(type_name: str, **extra: object) -> dict:
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


def array(items: dict, **extra: object) -> dict:
    return {"type": "array", "items": items, **extra}


UNIX = {"type": "integer", "description": "Unix timestamp (seconds, UTC)."}
NULLABLE_UNIX = nullable("integer", description="Unix timestamp (seconds, UTC), or null when unknown.")
NUMBER_OR_NULL = nullable("number")
ISO = {"type": "string", "format": "date-time", "pattern": ISO_UTC_PATTERN}
ISO_OR_NULL = {"type": ["string", "null"], "format": "date-time", "pattern": ISO_UTC_PATTERN}
DATE = {"type": "string", "format": "date", "pattern": DATE_PATTERN, "description": "UTC calendar day."}
REGION_ENUM = {"type": "string", "enum": list(REGIONS)}
# An account asked for, as an answer names it.
ACCOUNT = {"account_id": {"type": "integer", "minimum": 1}, "region": REGION_ENUM}
TIER = nullable("integer", minimum=1, maximum=11)
# What the encyclopedia says of a tank (null when it lacks the tank).
TANK_NAMES = {"name": nullable("string"), "tier": TIER, "type": nullable("string"), "nation": nullable("string")}
# An account's place on a leaderboard (a profile's career, a history period's days).
PLACE = {
    "rank": {"type": "integer", "minimum": 1},
    "ranked": {"type": "integer", "minimum": 1, "description": "Players ranked on that leaderboard."},
    "through": DATE,
}
EXPECTED_USE = {
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
ASSIST_FIGURES = {
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
PERIOD_FIGURES = obj(
    {
        "from": DATE,
        "to": DATE,
        "battles": {"type": "integer", "minimum": 0, "description": "Battles played in the period."},
        "wins": {"type": "integer", "minimum": 0},
        "win_rate": NUMBER_OR_NULL,
        "avg_damage": NUMBER_OR_NULL,
        "avg_frags": NUMBER_OR_NULL,
        "avg_spotted": NUMBER_OR_NULL,
        "avg_defence": nullable("number", description="Dropped capture points per battle."),
        "avg_xp": NUMBER_OR_NULL,
        "survival_rate": NUMBER_OR_NULL,
        "hit_rate": NUMBER_OR_NULL,
        "average_tier": nullable("number", description="Battle-weighted over the period's battles."),
        "wn8": nullable("number", description="XVM WN8 over the per-tank differences of the period."),
        "expected_values": EXPECTED_USE,
        "wn7": NUMBER_OR_NULL,
        "efficiency": NUMBER_OR_NULL,
        **ASSIST_FIGURES,
        "place": {
            "oneOf": [obj({**PLACE, "min_battles": {"type": "integer", "minimum": 1}}), {"type": "null"}],
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
        *ASSIST_FIGURES,
    ],
    description="The ratings of the battles played between two days, from per-tank records; "
    "battles 0 and null rates when nothing was played.",
)


def tank_page(sorts: tuple[str, ...]) -> dict:
    """A tank list's order and page (TankStats, TankMarks)."""
    return {
        "sort": {"type": "string", "enum": list(sorts)},
        "order": {"type": "string", "enum": ["desc", "asc"]},
        "total": {"type": "integer", "minimum": 0, "description": "Tanks matching the filters."},
        "offset": {"type": "integer", "minimum": 0},
        "limit": {"type": "integer", "minimum": 1, "maximum": TANK_PAGE_MAX},
    }
