"""The endpoint catalogue: every public endpoint's path, parameters, limits, caching, errors and documentation."""

from __future__ import annotations

from collections.abc import Mapping

from server.contract.catalogue import (
    clans,
    dumps,
    expected,
    figures,
    history,
    marks,
    meta,
    online,
    players,
    profile,
    rankings,
    roster,
    sessions,
    tanks,
    vehicles,
)
from server.contract.catalogue.clans import CLAN, WEEKLY
from server.contract.catalogue.dumps import DUMP_FILE, DUMPS, DUMPS_KEEP_DAYS
from server.contract.catalogue.expected import EXPECTED_SOURCES, EXPECTED_VALUES
from server.contract.catalogue.figures import *  # noqa: F403 (the figures, re-exported: see __all__)
from server.contract.catalogue.history import HISTORY, TANKS
from server.contract.catalogue.marks import TANK_MARKS
from server.contract.catalogue.meta import API_DESCRIPTION, INDEX, OPENAPI, STATUS
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
from server.contract.catalogue.roster import ROSTER
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
    "API_DESCRIPTION",
    "BY_NAME",
    "CATALOGUE",
    "CLAN",
    "COMMON_ERRORS",
    "DUMPS",
    "DUMP_FILE",
    "DUMPS_KEEP_DAYS",
    "Batch",
    "FORMATS",
    "CsvTable",
    "EXPECTED_SOURCES",
    "EXPECTED_VALUES",
    "Endpoint",
    "HISTORY",
    "INDEX",
    "LEADERBOARD_CLANS",
    "LEADERBOARD_PLAYERS",
    "ONLINE",
    "ONLINE_HISTORY",
    "OPENAPI",
    "PLAYER",
    "PLAYER_SEARCH",
    "PREFIX",
    "ROSTER",
    "Param",
    "SEARCH",
    "SESSION",
    "SESSION_STREAM",
    "STATUS",
    "TANK_LEADERBOARD",
    "TANK",
    "TANKS",
    "TANK_MARKS",
    "TANK_STATS",
    "TANK_STRENGTH",
    "VEHICLES",
    "WEEKLY",
    "bucket_limits",
    "parse_value",
]
# The figures (figures.py states them, with the one store constant they build on) are re-exported whole.
__all__ += [name for name in vars(figures) if name.isupper()]

# The modules whose endpoints the index and the OpenAPI document list, in this order, each in its
# ENDPOINTS' order, after the index itself: a new endpoint joins its module's ENDPOINTS.
ENDPOINT_MODULES = (
    profile,
    history,
    sessions,
    players,
    roster,
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
