"""The parameters several endpoints share: the account and clan ids, the region, days, the nickname search."""

from __future__ import annotations

from server.api.catalogue.figures import DEMO_ACCOUNT, DEMO_CLAN, INT64_MAX, MAX_DAYS, SEARCH_MAX, SEARCH_MIN
from server.api.catalogue.model import Param, one_of
from store.constants import REGIONS


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
