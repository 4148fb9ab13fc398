"""The endpoint catalogue: every public endpoint's path, parameters, limits, caching, errors and documentation."""

from __future__ import annotations

from collections.abc import Mapping

from server.contract.catalogue import (
    clans,
    dumps,
    expected,
    history,
    marks,
    meta,
    online,
    players,
    profile,
    rankings,
    sessions,
    tanks,
    vehicles,
)
from server.contract.catalogue.clans import CLAN, WEEKLY
from server.contract.catalogue.dumps import DUMP_FILE, DUMPS, DUMPS_KEEP_DAYS
from server.contract.catalogue.expected import EXPECTED_SOURCES, EXPECTED_VALUES
from server.contract.catalogue.figures import (
    CLAN_BATTLE_FLOORS,
    CLAN_LEADERBOARD_BYS,
    CLAN_MAX_AGE,
    CLAN_MAX_MEMBERS,
    CLAN_MIN_MEMBERS,
    DELTA_PERIODS,
    DIGEST_MIN_BATTLES,
    DIGEST_TOP,
    EXPECTED_METHOD,
    EXPECTED_MIN_ACCOUNT_BATTLES,
    EXPECTED_MIN_PLAYERS,
    EXPECTED_MIN_ROW_BATTLES,
    EXPECTED_MIN_TANK_BATTLES,
    EXPECTED_WINDOW_DAYS,
    GROUP_BYS,
    HOT_COPY_SECONDS,
    INT64_MAX,
    LEADERBOARD_ACCOUNT_ONLY,
    LEADERBOARD_BYS,
    LEADERBOARD_FLOORS,
    LEADERBOARD_PAGE_MAX,
    LEADERBOARD_STEPS,
    LEADERBOARD_WINDOWS,
    LIVE_GLOBAL,
    LIVE_PER_CLIENT,
    MARKS_CHANGE_DAYS,
    MARKS_METHOD,
    MARKS_MIN_BATTLES,
    MARKS_MIN_PLAYERS,
    MARKS_SORTS,
    MARKS_WINDOW_DAYS,
    MAX_DAYS,
    OFFICIAL_METHOD,
    PLAYER_LEADERBOARD_BYS,
    POPULATION_MIN_BATTLES,
    POPULATION_MIN_PLAYERS,
    POPULATION_PERIODS,
    PROFILE_MAX_AGE,
    RECENT_BATTLES,
    RECENT_WINDOWS,
    SEARCH_RESULTS,
    STANDING_MIN_BATTLES,
    STREAM_HEARTBEAT_SECONDS,
    STREAM_POLL_SECONDS,
    STREAMS_PER_CLIENT,
    STREAMS_PER_PROCESS,
    TABLE_PERCENTILES,
    TANK_LEADERBOARD_FLOORS,
    TANK_LEADERBOARD_STEPS,
    TANK_PAGE_MAX,
    TANK_PERCENTILES,
    TANK_SORTS,
    TRACKED_SEARCH_CACHE_SECONDS,
    VEHICLE_TYPES,
    WATCH_BATCH,
    WATCH_REFRESH_SECONDS,
    WATCH_REQUESTS_PER_MINUTE,
    WATCH_SECONDS,
    WATCH_TICK_SECONDS,
    WATCHED_PER_CLIENT,
    WATCHED_PER_REGION,
    WEEK_DAYS,
)
from server.contract.catalogue.history import HISTORY, TANKS
from server.contract.catalogue.marks import TANK_MARKS
from server.contract.catalogue.meta import INDEX, OPENAPI, STATUS
from server.contract.catalogue.model import (
    COMMON_ERRORS,
    FORMATS,
    PREFIX,
    Batch,
    CsvTable,
    Endpoint,
    Param,
    parse_value,
)
from server.contract.catalogue.online import ONLINE, ONLINE_HISTORY
from server.contract.catalogue.params import SEARCH
from server.contract.catalogue.players import PLAYER_SEARCH
from server.contract.catalogue.profile import PLAYER
from server.contract.catalogue.rankings import LEADERBOARD_CLANS, LEADERBOARD_PLAYERS, TANK_LEADERBOARD
from server.contract.catalogue.sessions import SESSION, SESSION_STREAM
from server.contract.catalogue.tanks import TANK, TANK_STATS
from server.contract.catalogue.vehicles import TANK_STRENGTH, VEHICLES

# Routes, parameter validation, the rate limiter's buckets, the index, the OpenAPI document and
# the site all derive from the records of this package: every limit, cache lifetime, parameter
# bound and default the public sees is stated once (figures.py, with the public facts the services
# share: delta periods, cache ages, digest sizes), and the prose of the endpoint modules is
# formatted from them. An endpoint's response schemas sit beside its entry, in its module's
# SCHEMAS by `schema` name, written with shapes.py's helpers and shared fragments; handlers/schemas.py
# assembles them (tests/test_field_guides.py holds the field guides to them).

__all__ = [
    "BY_NAME",
    "CATALOGUE",
    "CLAN",
    "CLAN_BATTLE_FLOORS",
    "CLAN_LEADERBOARD_BYS",
    "CLAN_MAX_AGE",
    "CLAN_MAX_MEMBERS",
    "CLAN_MIN_MEMBERS",
    "COMMON_ERRORS",
    "DUMPS",
    "DUMP_FILE",
    "DUMPS_KEEP_DAYS",
    "Batch",
    "FORMATS",
    "CsvTable",
    "DELTA_PERIODS",
    "DIGEST_MIN_BATTLES",
    "DIGEST_TOP",
    "EXPECTED_METHOD",
    "EXPECTED_MIN_ACCOUNT_BATTLES",
    "EXPECTED_MIN_PLAYERS",
    "EXPECTED_MIN_ROW_BATTLES",
    "EXPECTED_MIN_TANK_BATTLES",
    "EXPECTED_SOURCES",
    "EXPECTED_VALUES",
    "EXPECTED_WINDOW_DAYS",
    "Endpoint",
    "GROUP_BYS",
    "HISTORY",
    "HOT_COPY_SECONDS",
    "INDEX",
    "INT64_MAX",
    "LEADERBOARD_ACCOUNT_ONLY",
    "LEADERBOARD_BYS",
    "PLAYER_LEADERBOARD_BYS",
    "LEADERBOARD_CLANS",
    "LEADERBOARD_FLOORS",
    "LEADERBOARD_PAGE_MAX",
    "LEADERBOARD_PLAYERS",
    "LEADERBOARD_STEPS",
    "LEADERBOARD_WINDOWS",
    "LIVE_GLOBAL",
    "LIVE_PER_CLIENT",
    "MARKS_CHANGE_DAYS",
    "MARKS_METHOD",
    "OFFICIAL_METHOD",
    "MARKS_MIN_BATTLES",
    "MARKS_MIN_PLAYERS",
    "MARKS_SORTS",
    "MARKS_WINDOW_DAYS",
    "MAX_DAYS",
    "ONLINE",
    "ONLINE_HISTORY",
    "OPENAPI",
    "PLAYER",
    "PLAYER_SEARCH",
    "POPULATION_MIN_BATTLES",
    "POPULATION_MIN_PLAYERS",
    "POPULATION_PERIODS",
    "PREFIX",
    "PROFILE_MAX_AGE",
    "Param",
    "RECENT_BATTLES",
    "RECENT_WINDOWS",
    "SEARCH",
    "SEARCH_RESULTS",
    "SESSION",
    "SESSION_STREAM",
    "STREAM_HEARTBEAT_SECONDS",
    "STREAM_POLL_SECONDS",
    "STREAMS_PER_CLIENT",
    "STREAMS_PER_PROCESS",
    "STANDING_MIN_BATTLES",
    "STATUS",
    "TABLE_PERCENTILES",
    "TANK_LEADERBOARD",
    "TANK_LEADERBOARD_FLOORS",
    "TANK_LEADERBOARD_STEPS",
    "TANK",
    "TANKS",
    "TANK_MARKS",
    "TANK_PAGE_MAX",
    "TANK_PERCENTILES",
    "TANK_SORTS",
    "TANK_STATS",
    "TANK_STRENGTH",
    "VEHICLES",
    "TRACKED_SEARCH_CACHE_SECONDS",
    "VEHICLE_TYPES",
    "WATCH_BATCH",
    "WATCH_REFRESH_SECONDS",
    "WATCH_TICK_SECONDS",
    "WATCH_REQUESTS_PER_MINUTE",
    "WATCH_SECONDS",
    "WATCHED_PER_CLIENT",
    "WATCHED_PER_REGION",
    "WEEKLY",
    "WEEK_DAYS",
    "bucket_limits",
    "parse_value",
]

# The modules whose endpoints the index and the OpenAPI document list, in this order, each in its
# ENDPOINTS' order, after the index itself: a new endpoint joins its module's ENDPOINTS.
ENDPOINT_MODULES = (
    profile,
    history,
    sessions,
    players,
    tanks,
    marks,
    vehicles,
    expected,
    rankings,
    clans,
    online,
    dumps,
    meta,
)
CATALOGUE: tuple[Endpoint, ...] = (INDEX, *(endpoint for module in ENDPOINT_MODULES for endpoint in module.ENDPOINTS))
BY_NAME: Mapping[str, Endpoint] = {endpoint.name: endpoint for endpoint in CATALOGUE}


def bucket_limits() -> dict[str, int]:
    """Requests per minute per client, by rate-limit bucket (before any scaling)."""
    limits = {endpoint.bucket: endpoint.limit_per_minute for endpoint in CATALOGUE}
    limits.update({e.batch.bucket: e.batch.per_minute for e in CATALOGUE if e.batch is not None})
    return limits
