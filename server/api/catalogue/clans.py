"""The clans' endpoints: clan details and the weekly digest."""

from __future__ import annotations

from server.api.catalogue.figures import DEMO_CLAN, DIGEST_MIN_BATTLES, DIGEST_TOP, HOT_COPY_SECONDS, WEEK_DAYS
from server.api.catalogue.model import CsvTable, Endpoint
from server.api.catalogue.params import CLAN_ID, REGION

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
