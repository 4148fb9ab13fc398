"""The player-count endpoints: the current counts and their daily series."""

from __future__ import annotations

from server.contract.catalogue.figures import (
    HOT_COPY_SECONDS,
)
from server.contract.catalogue.model import CsvTable, Endpoint, Param
from server.contract.catalogue.params import days_param
from server.contract.catalogue.shapes import (
    DATE,
    ISO,
    ISO_OR_NULL,
    NULLABLE_UNIX,
    UNIX,
    array,
    nullable,
    obj,
    ref,
)
from store.constants import GAMES, REGIONS

ONLINE = Endpoint(
    name="online",
    path="/online",
    summary="Current player counts per game and region",
    description="Current player counts per game and region (per server, sampled each minute), "
    "totals, and the measured peak today (UTC) and all time.",
    tag="online",
    operation_id="Online",
    limit_per_minute=60,
    cache_max_age=60,
    answer_seconds=HOT_COPY_SECONDS,
    example="/online",
    errors=("database_unavailable",),
    schema="Online",
    fields={
        "today": "the UTC day of the `peak.today` figures",
        "sample_interval_seconds": "seconds between two samples of a server's player count",
        "games.<game>": "players (sum over regions), minute, complete (all regions sampled that minute), "
        "peak.today / peak.all_time {players, minute}, regions.<region> {players, minute, "
        "age_seconds, servers[] {server, players}, failing, peak}",
        "newest_sample": "minute and age_seconds of the newest sample",
    },
)
ONLINE_HISTORY = Endpoint(
    name="online_history",
    path="/online/history",
    summary="Daily series of player counts",
    description="Daily series (UTC) of player counts: peak with its minute, minimum, average, "
    "sample count. Days without samples have samples: 0 and null values. region=all "
    "counts only minutes where all three regions were sampled.",
    tag="online",
    operation_id="OnlineHistory",
    limit_per_minute=30,
    cache_max_age=300,
    answer_seconds=HOT_COPY_SECONDS,
    example="/online/history?game=wot&region=all&days=30",
    params=(
        Param(
            "game",
            "query",
            "string",
            "invalid_game",
            "Game whose player counts to return. Give it at most once.",
            enum=GAMES,
            default="wot",
        ),
        Param(
            "region",
            "query",
            "string",
            "invalid_region",
            "Region, or `all` for the sum of all regions. Give it at most once.",
            enum=(*REGIONS, "all"),
            default="all",
        ),
        days_param(7),
    ),
    errors=("database_unavailable",),
    schema="OnlineHistory",
    csv=CsvTable(
        "series",
        "online-{game}-{region}-{days}d",
        (
            "date",
            "samples",
            "peak",
            "peak_minute",
            "min",
            "avg",
        ),
    ),
    fields={
        "game, region, days": "what was asked for (region all: the sum over every region)",
        "from, to": "the first and last day of the series (UTC)",
        "series[]": "date, samples, peak, peak_minute, min, avg",
    },
)

# The `data` schemas of this module's endpoints (components/schemas), by their `schema` names.
SCHEMAS: dict[str, dict] = {
    "OnlinePeak": obj(
        {
            "date": DATE,
            "players": {"type": "integer", "minimum": 0},
            "minute": ISO,
            "minute_unix": UNIX,
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
            "minute": ISO_OR_NULL,
            "minute_unix": NULLABLE_UNIX,
            "age_seconds": nullable("integer", minimum=0),
            "servers": array(obj({"server": {"type": "string"}, "players": {"type": "integer", "minimum": 0}})),
            "failing": {
                "type": "boolean",
                "description": "The newest sampling attempt failed; the counts are the last good ones.",
            },
            "last_failure": NULLABLE_UNIX,
            "peak": ref("schemas", "OnlinePeaks"),
        }
    ),
    "OnlineGame": obj(
        {
            "players": nullable("integer", minimum=0),
            "minute": ISO_OR_NULL,
            "minute_unix": NULLABLE_UNIX,
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
                    obj({"minute": ISO, "minute_unix": UNIX, "age_seconds": {"type": "integer", "minimum": 0}}),
                    {"type": "null"},
                ]
            },
            "today": DATE,
            "sample_interval_seconds": {"type": "integer", "minimum": 1},
        }
    ),
    "OnlineHistory": obj(
        {
            "game": {"type": "string", "enum": list(GAMES)},
            "region": {"type": "string", "enum": list(REGIONS) + ["all"]},
            "days": {"type": "integer", "minimum": 1},
            "from": DATE,
            "to": DATE,
            "series": array(
                obj(
                    {
                        "date": DATE,
                        "samples": {"type": "integer", "minimum": 0},
                        "peak": nullable("integer", minimum=0),
                        "peak_minute": ISO_OR_NULL,
                        "min": nullable("integer", minimum=0),
                        "avg": nullable("number", minimum=0),
                    },
                    description="One UTC day; days without samples have samples 0 and null values.",
                )
            ),
        }
    ),
}

# This module's endpoints in the order the index and the OpenAPI document list them
# (server/contract/catalogue/__init__.py CATALOGUE).
ENDPOINTS: tuple[Endpoint, ...] = (
    ONLINE,
    ONLINE_HISTORY,
)
