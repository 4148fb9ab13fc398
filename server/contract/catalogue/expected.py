"""The expected values endpoint: the WN8 tables a region is rated with, loaded and computed."""

from __future__ import annotations

import server.contract.catalogue.figures as figures
from server.contract.catalogue.model import CsvTable, Endpoint, Param
from server.contract.catalogue.params import REGION_QUERY
from server.contract.catalogue.shapes import (
    DATE,
    REGION_ENUM,
    TIER,
    UNIX,
    array,
    nullable,
    obj,
)

EXPECTED_SOURCES = ("effective", "table", "computed")  # the tables /expected-values answers
EXPECTED_VALUES = Endpoint(
    name="expected_values",
    path="/expected-values",
    summary="WN8 expected values: the loaded table, the computed one, and how they compare",
    description="The WN8 expected values of a region in the XVM file's format (`data` and `header`: "
    "existing tools read them): `effective` (default), what this service rates the region with (the "
    "loaded public table, with rows computed from the population for the tanks it lacks, or "
    "every computed row under --expected-values-source computed); `table`, the loaded table; "
    f"`computed`, every tank refitted by method {figures.EXPECTED_METHOD} (docs/expected-values.md) over the "
    f"last {figures.EXPECTED_WINDOW_DAYS} days of per-tank records. A row is computed from at least "
    f"{figures.EXPECTED_MIN_PLAYERS} players with {figures.EXPECTED_MIN_TANK_BATTLES} battles on the tank and "
    f"{figures.EXPECTED_MIN_ACCOUNT_BATTLES} on their other rated tanks, {figures.EXPECTED_MIN_ROW_BATTLES:,} battles in all; each "
    "computed row carries that sample and its population: the realm's random panel where the panel's "
    "accounts meet those minimums for the tank, else the tracked accounts. The comparison block sets the computed rows against the "
    "loaded table. Computed daily; each version is kept 400 days (`version`). 404 "
    "no_expected_values before the first computed table (or for an unknown version).",
    tag="tanks",
    operation_id="ExpectedValues",
    limit_per_minute=10,
    cache_max_age=3600,
    answer_seconds=figures.HOT_COPY_SECONDS,
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
            f"A computed table's version (YYYY-MM-DD+{figures.EXPECTED_METHOD}: its window's last day and method); "
            "the newest when absent. The + may be sent as is (a query's + reads as a space, accepted) or as %2B.",
            min_length=14,
            max_length=20,
            pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[+ ]ev[0-9]{1,3}$",
            example=f"2026-11-24+{figures.EXPECTED_METHOD}",
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
            "population",
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
        "or computed), population (whom a computed row was fitted over: panel, the realm's random panel, "
        "where its accounts meet the minimums for the tank, else tracked; null for a loaded row) and "
        "sample {players, battles} behind a computed row (null for a loaded row)",
        "computed": "the computed table (null before the first): version, method, through, window "
        "{from, through, days}, minimums, base (the loaded table's version it was fitted under), "
        "built_at, panel_size (the random panel's active players when it was fitted; null without a "
        "panel), gaps and every_tank {tanks, panel_tanks (rows fitted over the panel), passes, converged}",
        "comparison": "computed / loaded for the tanks both have (null without both): computed_version, "
        "table_version, tanks and the median ratio of damage, spot, frag, defence and win_rate; by_tier[] "
        "and by_type[] the same per group; largest_differences[] {tank_id, name, tier, type, statistic "
        "(the one differing most), ratios, players, battles}",
    },
)

# The `data` schemas of this module's endpoints (components/schemas), by their `schema` names.
SCHEMAS: dict[str, dict] = {
    "ExpectedValuesTable": obj(
        {
            "region": REGION_ENUM,
            "source": {"type": "string", "enum": list(EXPECTED_SOURCES)},
            "rating_source": {"type": "string", "enum": ["table", "computed"]},
            "version": nullable("string"),
            "table_version": nullable("string"),
            "header": obj(
                {
                    "source": {"type": "string"},
                    "version": nullable("string"),
                    "region": REGION_ENUM,
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
                        "population": {
                            "type": ["string", "null"],
                            "enum": ["panel", "tracked", None],
                            "description": "Whom a computed row was fitted over; null for a loaded row.",
                        },
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
                            "through": DATE,
                            "window": obj({"from": DATE, "through": DATE, "days": {"type": "integer"}}),
                            "minimums": obj(
                                {
                                    key: {"type": "integer", "minimum": 1}
                                    for key in ("tank_battles", "account_battles", "players", "row_battles")
                                }
                            ),
                            "base": nullable("string"),
                            "built_at": UNIX,
                            "panel_size": nullable("integer", minimum=0),
                            **{
                                part: obj(
                                    {
                                        "tanks": {"type": "integer", "minimum": 0},
                                        "panel_tanks": {"type": "integer", "minimum": 0},
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
                            **{stat: {"type": "number"} for stat in figures.EXPECTED_STATS},
                            **{
                                f"by_{key}": array(
                                    obj(
                                        {
                                            key: schema,
                                            "tanks": {"type": "integer", "minimum": 1},
                                            **{stat: {"type": "number"} for stat in figures.EXPECTED_STATS},
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
                                        "tier": TIER,
                                        "type": nullable("string"),
                                        "statistic": {"type": "string", "enum": list(figures.EXPECTED_STATS)},
                                        "ratios": obj({stat: {"type": "number"} for stat in figures.EXPECTED_STATS}),
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
}

# This module's endpoints in the order the index and the OpenAPI document list them
# (server/contract/catalogue/__init__.py CATALOGUE).
ENDPOINTS: tuple[Endpoint, ...] = (EXPECTED_VALUES,)
