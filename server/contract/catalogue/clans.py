"""The clans' endpoints: clan details and the weekly digest."""

from __future__ import annotations

from server.contract.catalogue.figures import (
    DEMO_CLAN,
    DIGEST_MIN_BATTLES,
    DIGEST_TOP,
    HOT_COPY_SECONDS,
    WEEK_DAYS,
)
from server.contract.catalogue.model import CsvTable, Endpoint
from server.contract.catalogue.params import CLAN_ID, REGION
from server.contract.catalogue.shapes import (
    DATE,
    NULLABLE_UNIX,
    NUMBER_OR_NULL,
    REGION_ENUM,
    UNIX,
    array,
    nullable,
    obj,
)

CLAN = Endpoint(
    name="clan",
    path="/clan/{clan_id}/{region}",
    summary="Clan details with averages over member profiles",
    description="Clan details, ratings, members and averages over the member profiles we hold "
    "(members.profiles_measured says how many). Never fetched live: a clan enters the "
    "cache through the hourly refresh job (clans named by cached players, or seeded by "
    "the operator with scripts/add_clans.py); 404 clan_not_cached until then.",
    tag="clans",
    operation_id="Clan",
    limit_per_minute=30,
    cache_max_age=300,
    answer_seconds=HOT_COPY_SECONDS,
    example=f"/clan/{DEMO_CLAN}/eu",
    params=(CLAN_ID, REGION),
    errors=("clan_not_cached", "database_unavailable"),
    schema="Clan",
    card="clan",
    csv=CsvTable(
        "member_list",
        "clan-members-{region}-{clan_id}",
        (
            "account_id",
            "name",
            "role",
            "joined_at",
        ),
    ),
    fields={
        "clan_id, tag, name, members_count, region": "identity (members_count from the upstream)",
        "ratings.elo_10 / elo_8": "Elo ratings (integer, null when the upstream has none)",
        "ratings.skirmish_battles / skirmish_win_rate": "skirmishes summed over tiers; win rate in percent, 2 decimals",
        "ratings.ratings_updated_at / stronghold_updated_at": "unix time the elo figures / the skirmish figures "
        "were fetched: equal to cached_at, or older when that upstream call failed at the newest refresh and the "
        "figures before it were kept (null when never fetched)",
        "members.profiles_measured": "member profiles the averages use (members with a profile and >= 1 battle)",
        "members.avg_win_rate / avg_damage / avg_battles": "means of per-member career values",
        "member_list[]": "account_id, name, role, joined_at (unix)",
        "cached_at": "unix time the clan was stored; older data stays served when the upstream fails",
    },
)
WEEKLY = Endpoint(
    name="weekly",
    path="/clan/{clan_id}/{region}/weekly",
    summary="Weekly clan digest",
    description=f"Weekly clan digest: period {{start: today-{WEEK_DAYS}, end: today}} (UTC). Each member's week is "
    "the difference between their first and last snapshot in the period; members without two "
    "snapshots are listed in not_measured. WN8 and win-rate top lists rank members with at "
    f"least {DIGEST_MIN_BATTLES} battles that week; by_wn8 ranks by WN8 at the end of the period.",
    tag="clans",
    operation_id="ClanWeekly",
    limit_per_minute=10,
    cache_max_age=300,
    answer_seconds=HOT_COPY_SECONDS,
    example=f"/clan/{DEMO_CLAN}/eu/weekly",
    params=(CLAN_ID, REGION),
    errors=("clan_not_cached", "no_digest", "database_unavailable"),
    schema="ClanWeekly",
    fields={
        "clan_id, tag, name, region": "the clan",
        "period": "start, end (UTC dates), days",
        "activity": "members, measured_members, active_members (>= 1 battle), inactive[], not_measured[], "
        "battles_per_member, joined[], left[]",
        "top": f"min_battles, by_battles[], by_wn8[] (wn8, wn8_change, battles), by_win_rate[] (top {DIGEST_TOP} each)",
        "aggregates": "battles, wins, win_rate, avg_damage of the week, members_avg_change "
        "{win_rate, avg_damage, avg_battles: {start, end, change}}",
        "clan_cached_at, computed_at": "unix times",
    },
)
MEMBER_REF = obj({"account_id": {"type": "integer"}, "name": nullable("string")})


def ranked_members(figures: dict) -> dict:
    """A digest's top list: each member's account_id and name, the figures it is ranked by, and battles."""
    return array(
        obj({"account_id": {"type": "integer"}, "name": nullable("string"), **figures, "battles": {"type": "integer"}})
    )


# The `data` schemas of this module's endpoints (components/schemas), by their `schema` names.
SCHEMAS: dict[str, dict] = {
    "Clan": obj(
        {
            "clan_id": {"type": "integer", "minimum": 1},
            "region": REGION_ENUM,
            "tag": nullable("string"),
            "name": nullable("string"),
            "members_count": {"type": "integer", "minimum": 0},
            "ratings": obj(
                {
                    "elo_10": nullable("integer", description="Elo rating, tier X category."),
                    "elo_8": nullable("integer", description="Elo rating, tier VIII category."),
                    "skirmish_win_rate": nullable("number", description="Percent, two decimals."),
                    "skirmish_battles": {"type": "integer", "minimum": 0},
                    "ratings_updated_at": nullable(
                        "integer",
                        description="Unix time elo_10 and elo_8 were fetched; older than cached_at when "
                        "the ratings call failed at the newest refresh (the older figures are kept); null "
                        "when never fetched.",
                    ),
                    "stronghold_updated_at": nullable(
                        "integer",
                        description="Unix time skirmish_battles and skirmish_win_rate were fetched; older "
                        "than cached_at when the stronghold call failed at the newest refresh (the older "
                        "figures are kept); null when never fetched.",
                    ),
                }
            ),
            "members": obj(
                {
                    "profiles_measured": {
                        "type": "integer",
                        "minimum": 0,
                        "description": "Member profiles the averages were computed from.",
                    },
                    "avg_win_rate": NUMBER_OR_NULL,
                    "avg_damage": NUMBER_OR_NULL,
                    "avg_battles": NUMBER_OR_NULL,
                },
                description="Averages across the real member profiles.",
            ),
            "member_list": array(
                obj(
                    {
                        "account_id": {"type": "integer"},
                        "name": nullable("string"),
                        "role": nullable("string"),
                        "joined_at": NULLABLE_UNIX,
                    }
                )
            ),
            "cached_at": {
                **UNIX,
                "description": "When the clan was stored; older data stays served when the game API fails.",
            },
        }
    ),
    "ClanWeekly": obj(
        {
            "clan_id": {"type": "integer", "minimum": 1},
            "region": REGION_ENUM,
            "tag": nullable("string"),
            "name": nullable("string"),
            "period": obj({"start": DATE, "end": DATE, "days": {"type": "integer"}}),
            "activity": obj(
                {
                    "members": {"type": "integer"},
                    "measured_members": {"type": "integer"},
                    "active_members": {"type": "integer"},
                    "inactive": array(MEMBER_REF),
                    "not_measured": array(MEMBER_REF),
                    "battles_per_member": NUMBER_OR_NULL,
                    "joined": array(obj({"account_id": {"type": "integer"}, "name": nullable("string"), "date": DATE})),
                    "left": array(obj({"account_id": {"type": "integer"}, "name": nullable("string"), "date": DATE})),
                }
            ),
            "top": obj(
                {
                    "min_battles": {"type": "integer"},
                    "by_battles": ranked_members({}),
                    "by_wn8": ranked_members({"wn8": {"type": "number"}, "wn8_change": NUMBER_OR_NULL}),
                    "by_win_rate": ranked_members({"win_rate": {"type": "number"}}),
                }
            ),
            "aggregates": obj(
                {
                    "battles": {"type": "integer"},
                    "wins": {"type": "integer"},
                    "win_rate": NUMBER_OR_NULL,
                    "avg_damage": NUMBER_OR_NULL,
                    "members_avg_change": obj(
                        {
                            "profiles_compared": {"type": "integer", "minimum": 0},
                            **{
                                key: obj({"start": NUMBER_OR_NULL, "end": NUMBER_OR_NULL, "change": NUMBER_OR_NULL})
                                for key in ("win_rate", "avg_damage", "avg_battles")
                            },
                        },
                        description="Mean member career values at the start and the end of the week.",
                    ),
                }
            ),
            "clan_cached_at": UNIX,
            "computed_at": UNIX,
        },
        description="The digest of the last 7 UTC days, from the members' daily snapshots.",
    ),
}

# This module's endpoints in the order the index and the OpenAPI document list them
# (server/contract/catalogue/__init__.py CATALOGUE).
ENDPOINTS: tuple[Endpoint, ...] = (
    CLAN,
    WEEKLY,
)
