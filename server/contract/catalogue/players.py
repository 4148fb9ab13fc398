"""The players endpoint: accounts by the start of their nickname, or many cached profiles at once."""

from __future__ import annotations

import dataclasses

from server.contract.catalogue.figures import (
    DEMO_ACCOUNT,
    SEARCH_RESULTS,
    TRACKED_SEARCH_CACHE_SECONDS,
)
from server.contract.catalogue.model import Batch, Endpoint, Param, duration
from server.contract.catalogue.params import ACCOUNT_ID, SEARCH
from server.contract.catalogue.shapes import (
    REGION_ENUM,
    array,
    obj,
    ref,
)
from store.constants import REGIONS

IDS_MOST = 100  # ids in one /players?ids= request
IDS_PER_MINUTE = 1_000  # ids per minute per client over /players?ids= requests (10 full requests)
IDS = Param(
    "ids",
    "query",
    "string",
    "invalid_ids",
    f"Instead of search: up to {IDS_MOST} account IDs, comma-separated (ASCII digits, no spaces), none twice; "
    "their cached profiles (never fetched live: the others are listed as missing). Needs region.",
    min_length=1,
    max_length=IDS_MOST * 20 - 1,
    pattern=r"^[0-9]+(,[0-9]+)*$",
    example=f"{DEMO_ACCOUNT},{DEMO_ACCOUNT + 1}",
)
# One id of IDS, as every account ID is checked.
ID_OF_IDS = dataclasses.replace(ACCOUNT_ID, name="ids", error="invalid_ids", location="query")


PLAYER_SEARCH = Endpoint(
    name="search",
    path="/players",
    summary="Find players by the start of their nickname, or read many cached profiles at once",
    description="With `search`: accounts whose nickname starts with it (case-insensitive), at most "
    f"{SEARCH_RESULTS}, sorted by nickname. Served from the tracked accounts when any matches "
    "(source: tracked; the tracked accounts' answer to a region and prefix is reused for up to "
    f"{duration(TRACKED_SEARCH_CACHE_SECONDS)}); otherwise asked of the game API (source: upstream), one live lookup per region "
    "searched, under the live-lookup limits. Without `region`, all regions are searched. "
    f"With `ids` and `region` instead: the cached profiles of up to {IDS_MOST} accounts in one call (a clan's "
    "roster), as GET /player/{account_id}/{region} shows them, in the order asked, each with its `cached_at`; "
    "an account with no cached profile is listed in `missing` and never fetched live (ask /player for it). "
    f"Such a request counts one per id in its own limit, {IDS_PER_MINUTE:,} ids per minute per client, "
    "not in the search limit.",
    tag="players",
    operation_id="PlayerSearch",
    limit_per_minute=30,
    cache_max_age=300,
    example="/players?search=demo&region=eu",
    params=(
        dataclasses.replace(
            SEARCH,
            required=False,
            description=SEARCH.description.replace("Give it exactly once.", "Give it exactly once, or ids."),
        ),
        IDS,
        Param(
            "region",
            "query",
            "string",
            "invalid_region",
            "Game region: eu, na or asia. With search: the region to search (all regions when absent); "
            "with ids: required. Give it at most once.",
            enum=REGIONS,
        ),
    ),
    errors=("rate_limited_global", "database_unavailable", "upstream_unavailable"),
    batch=Batch("ids", "players_ids", IDS_MOST, IDS_PER_MINUTE),
    schema="Players",
    fields={
        "search, region": "what was asked (region null: all regions)",
        "source": "tracked (from the accounts this service measures daily) or upstream (the game API)",
        "results[]": f"account_id, nickname, region, tracked (measured daily here); at most {SEARCH_RESULTS}",
        "ids": "with ids: the account IDs asked for, in order",
        "profiles[]": "with ids: the cached ones' profiles (PlayerProfile, as /player answers), in the order asked",
        "missing": "with ids: the IDs with no cached profile (not fetched: ask /player for each)",
    },
    live_lookups=True,
)

# The `data` schemas of this module's endpoints (components/schemas), by their `schema` names.
SCHEMAS: dict[str, dict] = {
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
                        "region": REGION_ENUM,
                        "tracked": {"type": "boolean", "description": "Measured daily by this service."},
                    }
                ),
                maxItems=SEARCH_RESULTS,
            ),
        }
    ),
    "PlayerProfiles": obj(
        {
            "region": REGION_ENUM,
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
}

# This module's endpoints in the order the index and the OpenAPI document list them
# (server/contract/catalogue/__init__.py CATALOGUE).
ENDPOINTS: tuple[Endpoint, ...] = (PLAYER_SEARCH,)
