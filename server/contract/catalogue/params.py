"""The parameters several endpoints share: the account and clan ids, the region, days, the nickname search,
and the tank lists' region, filters, sort and paging."""

from __future__ import annotations

from server.contract.catalogue.figures import (
    DEMO_ACCOUNT,
    DEMO_CLAN,
    INT64_MAX,
    MAX_DAYS,
    SEARCH_MAX,
    SEARCH_MIN,
    TANK_PAGE_MAX,
    VEHICLE_TYPES,
)
from server.contract.catalogue.model import Param, one_of
from store.constants import POPULATIONS, REGIONS


def _id_param(name: str, error: str, what: str, example: int) -> Param:
    return Param(
        name,
        "path",
        "integer",
        error,
        f"{what}: a positive integer (ASCII digits, no sign, fits a signed 64-bit integer).",
        minimum=1,
        maximum=INT64_MAX,
        format="int64",
        example=example,
    )


ACCOUNT_ID = _id_param("account_id", "invalid_account_id", "Account ID", DEMO_ACCOUNT)
CLAN_ID = _id_param("clan_id", "invalid_clan_id", "Clan ID", DEMO_CLAN)
REGION = Param(
    "region", "path", "string", "invalid_region", f"Game region: {one_of(REGIONS)}.", enum=REGIONS, example="eu"
)


def days_param(default: int) -> Param:
    return Param(
        "days",
        "query",
        "integer",
        "invalid_days",
        "Number of UTC days, ending today. Give it at most once.",
        minimum=1,
        maximum=MAX_DAYS,
        default=default,
    )


SEARCH = Param(
    "search",
    "query",
    "string",
    "invalid_search",
    f"The start of a nickname: {SEARCH_MIN} to {SEARCH_MAX} letters, digits or underscores, matched "
    "case-insensitively. Give it exactly once.",
    min_length=SEARCH_MIN,
    max_length=SEARCH_MAX,
    pattern=r"^[A-Za-z0-9_]+$",
    required=True,
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


def paging(what: str, page_max: int, default: int, skip_max: int) -> tuple[Param, Param]:
    """A list's limit and offset: `what` per page (at most page_max) and to skip (at most skip_max)."""
    return (
        Param(
            "limit",
            "query",
            "integer",
            "invalid_limit",
            f"{what} per page.",
            minimum=1,
            maximum=page_max,
            default=default,
        ),
        Param(
            "offset",
            "query",
            "integer",
            "invalid_offset",
            f"{what} to skip (paging).",
            minimum=0,
            maximum=skip_max,
            default=0,
        ),
    )


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
    *paging("Tanks", TANK_PAGE_MAX, 50, 10_000),
)


def tank_list(sorts: tuple[str, ...], default: str, what: str, *period: Param) -> tuple[Param, ...]:
    """A tank list's parameters (/tanks/stats, /tanks/marks): region, the period if any, filters, sort, paging."""
    sort = Param("sort", "query", "string", "invalid_sort", what, enum=sorts, default=default)
    return (REGION_QUERY, *period, *TANK_FILTERS, sort, *TANK_PAGING)


# Who a server-wide figure is over (/tanks/stats, /tank/{tank_id}/{region}, /tanks/marks, /tanks/strength).
POPULATION = Param(
    "population",
    "query",
    "string",
    "invalid_population",
    "Who the figures are over: panel (the realm's random panel: a simple random sample of its accounts "
    "that played in the last 30 days, drawn uniformly from its account ids and measured daily) or tracked "
    "(the accounts looked up here and the members of cached clans: not a random sample of the server). "
    "Default: panel where the realm has a random panel (its table of the period is built), else tracked; "
    "the answer's population_kind says which. Give it at most once.",
    enum=POPULATIONS,
)
# What an answer over POPULATION says of it: its schema and its guide.
POPULATION_HEAD_SCHEMA = {
    "population": {"type": "string"},
    "population_kind": {"type": "string", "enum": list(POPULATIONS)},
    "panel_size": {"oneOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]},
}
POPULATION_GUIDE = (
    "who the figures are about: population_kind panel (the realm's random panel, a simple random sample of "
    "its active accounts; panel_size: its players active in the last 30 days as of its last refresh) or "
    "tracked (players looked up here and members of cached clans, not a random sample of the server; "
    "panel_size null); population says it in a sentence"
)
