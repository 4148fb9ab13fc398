"""The rankings' endpoints: the leaderboards of the tracked players, overall and on one tank, and of the cached clans."""

from __future__ import annotations

from server.contract.catalogue.figures import (
    CLAN_BATTLE_FLOORS,
    CLAN_FIGURES,
    CLAN_LEADERBOARD_BYS,
    CLAN_MAX_MEMBERS,
    CLAN_MIN_MEMBERS,
    HOT_COPY_SECONDS,
    LEADERBOARD_ACCOUNT_ONLY,
    LEADERBOARD_BYS,
    LEADERBOARD_FLOORS,
    LEADERBOARD_PAGE_MAX,
    LEADERBOARD_STEPS,
    LEADERBOARD_WINDOWS,
    PLAYER_LEADERBOARD_BYS,
    TANK_LEADERBOARD_FLOORS,
    TANK_LEADERBOARD_STEPS,
    VEHICLE_TYPES,
)
from server.contract.catalogue.model import CsvTable, Endpoint, Param, and_list, one_of
from server.contract.catalogue.params import REGION, REGION_QUERY, paging
from server.contract.catalogue.shapes import (
    DATE,
    NUMBER_OR_NULL,
    REGION_ENUM,
    TIER,
    array,
    nullable,
    obj,
)
from server.contract.catalogue.tanks import TANK_ID

WINDOW = Param(
    "days",
    "query",
    "string",
    "invalid_days",
    f"The window: {one_of(LEADERBOARD_WINDOWS)} (days ending on the newest complete day, or the career).",
    enum=LEADERBOARD_WINDOWS,
    default="30",
)
PAGING = paging("Rows", LEADERBOARD_PAGE_MAX, 50, 100_000)


def floors_text(floors: dict[str, int]) -> str:
    """A window's floors in prose: '1 d: 10, 7 d: 25, ..., career: 1,000'."""
    return ", ".join(f"{w if w == 'career' else w + ' d'}: {f:,}" for w, f in floors.items())


def min_battles(counted: str, steps: tuple[int, ...]) -> Param:
    """A leaderboard's floor a caller may raise (never lower): served at the next step up."""
    return Param(
        "min_battles",
        "query",
        "integer",
        "invalid_min_battles",
        f"At least this many battles {counted}: the players are ranked at the smallest step at or above both "
        "this and the window's floor (the answer's min_battles).",
        minimum=1,
        maximum=max(steps),
    )


def by_param(bys: tuple[str, ...], default: str, more: str = "") -> Param:
    """A leaderboard's figure ranked (`more`: what the prose adds after the choices)."""
    return Param(
        "by",
        "query",
        "string",
        "invalid_by",
        f"The figure ranked, highest first: {one_of(bys)}.{more}",
        enum=bys,
        default=default,
    )


# A player leaderboard's CSV row (/leaderboard/players, /tank/{tank_id}/{region}/leaderboard).
PLAYER_ROW_COLUMNS = ("rank", "account_id", "nickname", "clan_tag", "value", "battles")


FLOORS = floors_text(LEADERBOARD_FLOORS)
LEADERBOARD_PLAYERS = Endpoint(
    name="leaderboard_players",
    path="/leaderboard/players",
    summary="Leaderboard of the tracked players of a region: WN8, win rate, damage, battles",
    description="The tracked accounts of a region ranked by a figure over a window: the last "
    f"{one_of(tuple(w for w in LEADERBOARD_WINDOWS if w != 'career'))} UTC days ending on the newest complete "
    "day, or the career (of the accounts that played in the last 90 days). Each figure is the one the "
    "player's own /history shows for the period (the career: the profile's). A player is ranked with at "
    f"least a floor of battles in the window (in the tanks filtered): {FLOORS}; a caller may ask for more "
    f"with min_battles, and is served the smallest of the steps {and_list(LEADERBOARD_STEPS)} at or above both "
    "(the answer's min_battles): never a lower floor, and never a player with fewer battles than asked. "
    "Ties share a rank (1, 2, 2, 4). Built "
    "daily with the tank statistics, without any request to the game API; 404 no_statistics until the "
    "first build.",
    tag="rankings",
    operation_id="PlayerLeaderboard",
    limit_per_minute=30,
    cache_max_age=300,
    answer_seconds=HOT_COPY_SECONDS,
    example="/leaderboard/players?region=eu&days=30&by=wn8",
    params=(
        REGION_QUERY,
        WINDOW,
        by_param(
            PLAYER_LEADERBOARD_BYS,
            "wn8",
            f" {one_of(LEADERBOARD_ACCOUNT_ONLY)} rank all tanks only (the game API counts assistance per "
            "account, and wtr is Wargaming's rating of the account: the window's players with its floor of "
            "battles, by the WTR measured at their newest visit): with tier or type nobody is ranked by them.",
        ),
        Param("tier", "query", "integer", "invalid_tier", "Only battles in tanks of this tier.", minimum=1, maximum=11),
        Param(
            "type",
            "query",
            "string",
            "invalid_type",
            "Only battles in tanks of this type (with tier: of both).",
            enum=VEHICLE_TYPES,
        ),
        min_battles("in the window", LEADERBOARD_STEPS),
        *PAGING,
    ),
    errors=("no_statistics", "database_unavailable"),
    schema="PlayerLeaderboard",
    csv=CsvTable(
        "rows",
        "leaderboard-players-{region}-{days}-{by}",
        PLAYER_ROW_COLUMNS,
    ),
    fields={
        "region, days, from, through": "the region and the window: its first and last UTC day (from is null "
        "for the career; through is the newest complete day the build read)",
        "built_at": "unix time the leaderboards were built",
        "by, tier, type": "the figure ranked and the filter asked for (null: all tanks)",
        "min_battles, floors": "the floor applied (at least what was asked) and the window's steps",
        "population, players": "who is ranked: the tracked accounts, not a random sample of the server; "
        "players: how many of them played in the window (the career: have a stored state)",
        "total, offset, limit": "how many players are ranked, and the page",
        "rows[]": "rank (ties share it), account_id, nickname, clan_tag (of the clan the account was in at its "
        "newest measured battle, when that clan is cached here; else null), value (the figure ranked, as "
        "/history shows it: win_rate in %, wn8 and averages with two decimals), battles (in the window and "
        "the filtered tanks)",
    },
)

TANK_FLOORS = floors_text(TANK_LEADERBOARD_FLOORS)
TANK_LEADERBOARD = Endpoint(
    name="tank_leaderboard",
    path="/tank/{tank_id}/{region}/leaderboard",
    summary="Leaderboard of one tank: its best tracked players by damage, combined damage, WN8, win rate",
    description="The tracked accounts of a region that played the tank in the window (as "
    "/leaderboard/players: 1, 7, 30 or 90 UTC days ending on the newest complete day, or the career of "
    "the accounts that played in the last 90 days), ranked by a figure on the tank: the one their own "
    "/tanks period row shows for the same days. A player is ranked with at least a floor of battles on the "
    f"tank: {TANK_FLOORS}; a caller may ask for more with min_battles, and is served the smallest of the "
    f"steps {and_list(TANK_LEADERBOARD_STEPS)} at or above both (the answer's min_battles). Ties share a "
    "rank. A tank nobody reached the floor on answers an empty list. Built daily with the tank "
    "statistics; 404 no_statistics until the first build.",
    tag="rankings",
    operation_id="TankLeaderboard",
    limit_per_minute=30,
    cache_max_age=300,
    answer_seconds=HOT_COPY_SECONDS,
    example="/tank/1/eu/leaderboard?days=30&by=avg_damage",
    params=(
        TANK_ID,
        REGION,
        WINDOW,
        by_param(LEADERBOARD_BYS, "avg_damage"),
        min_battles("on the tank in the window", TANK_LEADERBOARD_STEPS),
        *PAGING,
    ),
    errors=("no_statistics", "database_unavailable"),
    schema="TankLeaderboard",
    csv=CsvTable(
        "rows",
        "leaderboard-tank-{tank_id}-{region}-{days}-{by}",
        PLAYER_ROW_COLUMNS,
    ),
    fields={
        "region, tank_id, days, from, through": "the region, the tank and the window: its first and last UTC day "
        "(from is null for the career)",
        "built_at": "unix time the leaderboards were built",
        "by": "the figure ranked",
        "min_battles, floors": "the floor of battles on the tank applied (at least what was asked) and the "
        "window's steps",
        "population": "who is ranked: the tracked accounts, not a random sample of the server",
        "total, offset, limit": "how many players are ranked, and the page",
        "rows[]": "rank (ties share it), account_id, nickname, clan_tag (as /leaderboard/players), value (the "
        "figure on the tank, as the player's /tanks row shows it), battles (on the tank in the window)",
    },
)

CLAN_FLOORS = floors_text(CLAN_BATTLE_FLOORS)
LEADERBOARD_CLANS = Endpoint(
    name="leaderboard_clans",
    path="/leaderboard/clans",
    summary="Leaderboard of the cached clans of a region: their members' WN8 and win rate, activity, Elo, skirmishes",
    description="The clans cached here (the clans players looked up here are in, and the operator's seeds) "
    "ranked by a figure of their members' play over a window (as /leaderboard/players: 1, 7, 30 or 90 UTC "
    "days ending on the newest complete day, or the career of the members that played in the last 90 "
    "days), or by the clan's Elo ratings and skirmish win rate. The members are the clan's cached roster; "
    "a member is active with at least one battle in the window; the clan's WN8 is its active members' "
    "WN8 over the window (each as their own /history period shows it) weighted by their battles, and its "
    "win rate their wins over their battles. A clan is ranked with at least "
    f"{CLAN_MIN_MEMBERS} active members (a caller may ask for more with min_members, never fewer) and a "
    f"floor of battles in the window: {CLAN_FLOORS}. Ties share a rank. Built daily with the tank "
    "statistics, without any request to the game API; 404 no_statistics until the first build.",
    tag="rankings",
    operation_id="ClanLeaderboard",
    limit_per_minute=30,
    cache_max_age=300,
    answer_seconds=HOT_COPY_SECONDS,
    example="/leaderboard/clans?region=eu&days=30&by=wn8",
    params=(
        REGION_QUERY,
        WINDOW,
        by_param(CLAN_LEADERBOARD_BYS, "wn8"),
        Param(
            "min_members",
            "query",
            "integer",
            "invalid_min_members",
            f"At least this many active members (a battle in the window); below {CLAN_MIN_MEMBERS} the "
            f"floor of {CLAN_MIN_MEMBERS} applies (the answer's min_members).",
            minimum=1,
            maximum=CLAN_MAX_MEMBERS,
        ),
        *PAGING,
    ),
    errors=("no_statistics", "database_unavailable"),
    schema="ClanLeaderboard",
    csv=CsvTable(
        "rows",
        "leaderboard-clans-{region}-{days}-{by}",
        ("rank", "clan_id", "tag", "name", "value", *CLAN_FIGURES),
    ),
    fields={
        "region, days, from, through": "the region and the window: its first and last UTC day (from is null "
        "for the career; through is the newest complete day the build read)",
        "built_at": "unix time the leaderboards were built",
        "by": "the figure ranked",
        "min_members, min_battles": "the floor of active members applied (at least what was asked) and the "
        "window's floor of the clan's battles",
        "population, clans": "who is counted: the tracked accounts, not a random sample of the server; clans: "
        "how many cached clans had a member who played in the last 90 days (the clans considered)",
        "total, offset, limit": "how many clans are ranked, and the page",
        "rows[]": "rank (ties share it), clan_id, tag, name, value (the figure ranked), members (the cached "
        "roster's size), active_members (members with a battle in the window), battles (theirs, in the "
        "window), battles_per_member (battles / members), wn8 (the active members' WN8 over the window "
        "weighted by their battles; null when none is rated), win_rate (their wins / battles, %), elo_10, "
        "elo_8 (the clan's Elo ratings, as GET /clan shows them; null when unrated), skirmish_win_rate "
        "(the clan's skirmishes, %; null without any)",
    },
)
# A leaderboard's window (from null for the career), floor and page.
WINDOW_FIELDS = {
    "days": {"type": "string", "enum": list(LEADERBOARD_WINDOWS)},
    "from": {"oneOf": [DATE, {"type": "null"}]},
    "through": DATE,
    "built_at": {"type": "number"},
}
FLOOR_FIELDS = {
    "min_battles": {"type": "integer", "minimum": 1},
    "floors": array({"type": "integer", "minimum": 1}),
    "population": {"type": "string"},
}


def page_fields(ranked: str, row: dict) -> dict:
    """A leaderboard's page: how many `ranked` there are, the page asked for and its rows."""
    return {
        "total": {"type": "integer", "minimum": 0, "description": f"{ranked} ranked."},
        "offset": {"type": "integer", "minimum": 0},
        "limit": {"type": "integer", "minimum": 1, "maximum": LEADERBOARD_PAGE_MAX},
        "rows": array(obj(row), maxItems=LEADERBOARD_PAGE_MAX),
    }


PAGE_FIELDS = page_fields(
    "Players",
    {
        "rank": {"type": "integer", "minimum": 1},
        "account_id": {"type": "integer", "minimum": 1},
        "nickname": nullable("string"),
        "clan_tag": nullable("string"),
        "value": {"type": "number"},
        "battles": {"type": "integer", "minimum": 1},
    },
)

# The `data` schemas of this module's endpoints (components/schemas), by their `schema` names.
SCHEMAS: dict[str, dict] = {
    "PlayerLeaderboard": obj(
        {
            "region": REGION_ENUM,
            **WINDOW_FIELDS,
            "by": {"type": "string", "enum": list(PLAYER_LEADERBOARD_BYS)},
            "tier": TIER,
            "type": {"oneOf": [{"type": "string", "enum": list(VEHICLE_TYPES)}, {"type": "null"}]},
            **FLOOR_FIELDS,
            "players": {"type": "integer", "minimum": 0},
            **PAGE_FIELDS,
        }
    ),
    "TankLeaderboard": obj(
        {
            "region": REGION_ENUM,
            "tank_id": {"type": "integer", "minimum": 1},
            **WINDOW_FIELDS,
            "by": {"type": "string", "enum": list(LEADERBOARD_BYS)},
            **FLOOR_FIELDS,
            **PAGE_FIELDS,
        }
    ),
    "ClanLeaderboard": obj(
        {
            "region": REGION_ENUM,
            **WINDOW_FIELDS,
            "by": {"type": "string", "enum": list(CLAN_LEADERBOARD_BYS)},
            "min_members": {"type": "integer", "minimum": 1},
            "min_battles": {"type": "integer", "minimum": 1},
            "population": {"type": "string"},
            "clans": {"type": "integer", "minimum": 0},
            **page_fields(
                "Clans",
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
                    "wn8": NUMBER_OR_NULL,
                    "win_rate": {"type": "number", "minimum": 0, "maximum": 100},
                    "elo_10": nullable("integer"),
                    "elo_8": nullable("integer"),
                    "skirmish_win_rate": nullable("number", minimum=0, maximum=100),
                },
            ),
        }
    ),
}

# This module's endpoints in the order the index and the OpenAPI document list them
# (server/contract/catalogue/__init__.py CATALOGUE).
ENDPOINTS: tuple[Endpoint, ...] = (
    LEADERBOARD_PLAYERS,
    TANK_LEADERBOARD,
    LEADERBOARD_CLANS,
)
