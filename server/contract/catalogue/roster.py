"""A battle's roster: many players' ratings at once (/roster), the unknown ones fetched in batches."""

from __future__ import annotations

from server.contract.catalogue.bands import BAND_COLOURS, BANDED_RATINGS
from server.contract.catalogue.figures import DEMO_ACCOUNT, HOT_COPY_SECONDS, PROFILE_MAX_AGE
from server.contract.catalogue.model import CsvTable, Endpoint, Param, duration
from server.contract.catalogue.params import REGION_QUERY
from server.contract.catalogue.shapes import NULLABLE_UNIX, REGION_ENUM, array, nullable, obj, ref

ROSTER_MOST = 100  # accounts (or names) in one roster: the upstream's ids per request
ROSTER_PER_MINUTE = 10  # rosters per minute per client (a battle's loading screen or a bot's command)
ROSTER_FRESH_SECONDS = PROFILE_MAX_AGE  # a cached profile or a roster's own fetch is reused this long
# The methods a roster's unknown accounts are asked by, each once per 100 of them (account/list
# once more with names=): the requests it makes are what its live work costs.
ROSTER_METHODS = ("account/info", "account/tanks", "clans/accountinfo", "account/wtr")
# Why a row has no figures.
ROSTER_REASONS = ("no_account", "no_battles", "not_found", "upstream_failed")
_TANK_SUFFIX = r"(:[1-9][0-9]{0,9})?"
_ID = r"[1-9][0-9]{0,19}" + _TANK_SUFFIX
_NAME = r"[A-Za-z0-9_]{1,24}" + _TANK_SUFFIX

ACCOUNTS = Param(
    "accounts",
    "query",
    "string",
    "invalid_accounts",
    f"Up to {ROSTER_MOST} account IDs, comma-separated, none twice, each optionally followed by :TANK_ID "
    "(the tank the player drives in the battle: its figures are added to the row). Give accounts or names.",
    min_length=1,
    max_length=ROSTER_MOST * 32,
    pattern=rf"^{_ID}(,{_ID})*$",
    example=f"{DEMO_ACCOUNT}:1,{DEMO_ACCOUNT + 1}",
)
NAMES = Param(
    "names",
    "query",
    "string",
    "invalid_names",
    f"Instead of accounts: up to {ROSTER_MOST} nicknames, comma-separated, exact (case-insensitive) and none "
    "twice, each optionally followed by :TANK_ID; resolved in one request to the game API.",
    min_length=1,
    max_length=ROSTER_MOST * 36,
    pattern=rf"^{_NAME}(,{_NAME})*$",
    example="TitanGra6848",
)

ROSTER_ROW_COLUMNS = (
    "account_id",
    "asked_name",
    "tank_id",
    "reason",
    "source",
    "fetched_at",
    "nickname",
    "clan.clan_id",
    "clan.tag",
    "clan.role",
    "battles",
    "wins",
    "win_rate",
    "avg_damage",
    "wn8",
    "wn8_coverage",
    "wn7",
    "efficiency",
    "wtr",
    "global_rating",
    "last_battle_time",
    *(f"bands.{rating}.{key}" for rating in BANDED_RATINGS for key in ("band", "color")),
    "tank.tank_id",
    "tank.battles",
    "tank.wins",
    "tank.win_rate",
    "tank.mark_of_mastery",
)

ROSTER = Endpoint(
    name="roster",
    path="/roster",
    summary="A battle's roster: many players' ratings at once, the unknown ones fetched live in batches",
    description=f"One row per account, in the order asked (up to {ROSTER_MOST}; by `accounts` or by "
    "`names`): nickname, clan, battles, win rate, average damage, WN8, WN7, efficiency, WTR and "
    "global_rating, the last battle time, each rating with its colour band (the index's rating_bands), "
    "and with a tank given that tank's battles, wins, win rate and mastery badge. An account with a "
    f"cached profile or a roster fetch less than {duration(ROSTER_FRESH_SECONDS)} old costs nothing "
    "upstream (source cached, with when it was fetched); the others are asked of the game API together, each of "
    f"{', '.join(ROSTER_METHODS)} once per {ROSTER_MOST} accounts (account/list once more for names), "
    "and kept for the next roster (source live). A roster does not make its accounts tracked (ask /player "
    "for that). WN8 of a live row comes from the career totals and the battles per tank; wn8_coverage "
    "says the share of battles on tanks with expected values (docs/data.md). An ID that is no account, a "
    "name no account has, an account without battles, a failed batch: a row with its reason, never a "
    "failed answer; when no row could be served at all the answer is 503 upstream_unavailable with "
    "Retry-After. The live work takes one unit of the shared live-lookup budget per upstream request "
    "it makes, not per account.",
    tag="players",
    operation_id="Roster",
    limit_per_minute=ROSTER_PER_MINUTE,
    cache_max_age=60,
    answer_seconds=HOT_COPY_SECONDS,
    example=f"/roster?region=eu&accounts={DEMO_ACCOUNT}:1,{DEMO_ACCOUNT + 1}",
    params=(REGION_QUERY, ACCOUNTS, NAMES),
    errors=("invalid_roster", "upstream_unavailable", "database_unavailable"),
    schema="Roster",
    csv=CsvTable("rows", "roster-{region}", ROSTER_ROW_COLUMNS),
    fields={
        "region, asked": "the region, and what the rows were asked by (accounts or names)",
        "rows[]": "one per account or name asked, in order: account_id, asked_name (names=), tank_id (asked), "
        "reason (null, or why the row has no figures), source (cached or live) and fetched_at (unix), nickname, "
        "clan {clan_id, tag, role}, battles, wins, win_rate, avg_damage, wn8, wn8_coverage, wn7, efficiency, "
        "wtr, global_rating, last_battle_time, bands {wn8, wtr, win_rate, efficiency: {band, color}}, tank "
        "{tank_id, battles, wins, win_rate, mark_of_mastery} (with a tank asked)",
        "counts": "rows by source: cached, live, without figures (failed)",
        "upstream_requests": "requests this roster made to the game API (0 when every row was fresh)",
        "retry_after": "seconds after which a failed row may be asked again (null when none failed)",
    },
    live_lookups=True,
)


def _nullable_obj(properties: dict, description: str) -> dict:
    return {**obj(properties, description=description), "type": ["object", "null"]}


BAND = _nullable_obj(
    {
        "band": {"type": "string", "enum": list(BAND_COLOURS)},
        "color": {"type": "string", "pattern": "^#[0-9A-F]{6}$"},
    },
    "The rating's band on the index's rating_bands scale and its colour; null without the rating.",
)


# The `data` schemas of this module's endpoints (components/schemas), by their `schema` names.
SCHEMAS: dict[str, dict] = {
    "RosterRow": obj(
        {
            "account_id": nullable("integer", minimum=1, description="Null for a name no account has."),
            "asked_name": nullable("string", description="The nickname asked (names=), else null."),
            "tank_id": nullable("integer", minimum=1, description="The tank asked with the account, else null."),
            "reason": {
                "type": ["string", "null"],
                "enum": [*ROSTER_REASONS, None],
                "description": "Why the row has no figures; null when it has them.",
            },
            "source": {
                "type": ["string", "null"],
                "enum": ["cached", "live", None],
                "description": "cached: a stored profile or an earlier roster's fetch; live: fetched for this request.",
            },
            "fetched_at": nullable(
                "integer",
                minimum=0,
                description="Unix time the row's figures were fetched from the game API (its age: now minus this).",
            ),
            "nickname": nullable("string"),
            "clan": _nullable_obj(
                {"clan_id": {"type": "integer"}, "tag": nullable("string"), "role": nullable("string")},
                "The player's clan (tag and role null when not known here); null without a clan.",
            ),
            "battles": nullable("integer", minimum=0),
            "wins": nullable("integer", minimum=0),
            "win_rate": nullable("number"),
            "avg_damage": nullable("number"),
            "wn8": nullable("number"),
            "wn8_coverage": nullable(
                "number",
                minimum=0,
                maximum=1,
                description="Share of the battles on tanks with expected values (1: WN8 is exact).",
            ),
            "wn7": nullable("number"),
            "efficiency": nullable("number"),
            "wtr": nullable("integer"),
            "global_rating": nullable("integer"),
            "last_battle_time": NULLABLE_UNIX,
            "bands": obj({rating: BAND for rating in BANDED_RATINGS}),
            "tank": _nullable_obj(
                {
                    "tank_id": {"type": "integer"},
                    "battles": {"type": "integer", "minimum": 0},
                    "wins": {"type": "integer", "minimum": 0},
                    "win_rate": nullable("number"),
                    "mark_of_mastery": nullable("integer", minimum=0, maximum=4),
                },
                "The asked tank's figures (zero battles when never driven); null without a tank asked.",
            ),
        }
    ),
    "Roster": obj(
        {
            "region": REGION_ENUM,
            "asked": {"type": "string", "enum": ["accounts", "names"]},
            "rows": array(ref("schemas", "RosterRow"), maxItems=ROSTER_MOST),
            "counts": obj(
                {
                    "cached": {"type": "integer", "minimum": 0},
                    "live": {"type": "integer", "minimum": 0},
                    "failed": {"type": "integer", "minimum": 0},
                }
            ),
            "upstream_requests": {"type": "integer", "minimum": 0},
            "retry_after": nullable("integer", minimum=1),
        }
    ),
}

# This module's endpoints in the order the index and the OpenAPI document list them
# (server/contract/catalogue/__init__.py CATALOGUE).
ENDPOINTS: tuple[Endpoint, ...] = (ROSTER,)
