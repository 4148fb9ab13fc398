"""The players' endpoints: profile, daily history, per-tank breakdown and the nickname search."""

from __future__ import annotations

import dataclasses

from server.api.catalogue.figures import (
    ASSIST_GUIDE,
    DELTA_FIELDS,
    DELTA_PERIODS,
    DEMO_ACCOUNT,
    GROUP_BYS,
    HOT_COPY_SECONDS,
    MARKS_WINDOW_DAYS,
    MAX_DAYS,
    POPULATION_PERIODS,
    PROFILE_MAX_AGE,
    RECENT_WINDOWS,
    SEARCH_RESULTS,
    STANDING_MIN_BATTLES,
    TRACKED_SEARCH_CACHE_SECONDS,
    WEEK_DAYS,
)
from server.api.catalogue.model import Batch, CsvTable, Endpoint, Param, and_list, duration, hours, one_of
from server.api.catalogue.params import ACCOUNT_ID, REGION, SEARCH, days_param
from store.constants import REGIONS

PLAYER = Endpoint(
    name="player",
    path="/player/{account_id}/{region}",
    summary="Player profile with WN8, WN7 and efficiency",
    description="Player profile with WN8, WN7 and efficiency. Served from the cache (at most "
    f"{hours(PROFILE_MAX_AGE)} old); a profile not cached is fetched live (live_fetched: true, "
    "ratings.available: false) and its ratings follow seconds later.",
    tag="players",
    operation_id="Player",
    limit_per_minute=30,
    cache_max_age=300,
    answer_seconds=HOT_COPY_SECONDS,
    example=f"/player/{DEMO_ACCOUNT}/eu",
    params=(ACCOUNT_ID, REGION),
    errors=("player_not_found", "rate_limited_global", "database_unavailable", "upstream_unavailable"),
    schema="PlayerProfile",
    fields={
        "account_id, region, nickname, clan_id": "identity and clan (clan_id null without a clan)",
        "created_at, last_battle_time, updated_at": "unix times from the upstream",
        "statistics": "battles, wins, losses, draws, win_rate (%), avg_damage, avg_frags, avg_spotted, "
        "avg_defence (dropped capture points), avg_capture, avg_xp (per battle), survival_rate "
        "(%), hit_rate (%), average_tier (battle-weighted)",
        "ratings": "available, wn8, wn8_color (scale label), wn7, efficiency, calculated_at (unix), "
        "expected_values_version (XVM table date), expected_values (which rows rated the played tanks: "
        "version, source table | computed | mixed, computed_tanks, unrated_tanks, table_version, "
        "computed_version; GET /expected-values?version= gives the computed rows), "
        "wn8_percentile: the share (0-99 %) of the region's "
        f"tracked accounts that played in the last {max(POPULATION_PERIODS)} days, with at least "
        f"{STANDING_MIN_BATTLES} career battles, whose career WN8 is lower (null below {STANDING_MIN_BATTLES} "
        "battles or before the tank statistics are built); place {days: career, by: wn8, rank, ranked, "
        "min_battles, through}: the account's rank on the region's career WN8 leaderboard (GET "
        "/leaderboard/players?days=career), how many are ranked there, its floor of battles and the last "
        "day of the build (null when the account is not ranked there or before the first build); "
        "wtr: Wargaming's own personal rating (WTR, wot/account/wtr: random battles only), measured with "
        "the profile's refresh or daily visit, and wtr_reason when it is null (no_rating: Wargaming has none "
        "for the account, e.g. too few random battles; upstream_failed: the request failed, the profile did "
        "not; not_fetched: not asked yet, as in a live lookup's first answer); global_rating: Wargaming's personal rating as account/info gives it. "
        "Both are Wargaming's figures, present also while available is false",
        "cached_at": f"unix time the profile was stored (at most ~{hours(PROFILE_MAX_AGE)} old)",
        "live_fetched": "true when fetched live for this request (then ratings.available is false)",
    },
    live_lookups=True,
    live_fetched_max_age=30,  # its ratings follow seconds later
)
HISTORY = Endpoint(
    name="history",
    path="/player/{account_id}/{region}/history",
    summary=f"Player daily history with {and_list(DELTA_PERIODS)} day deltas",
    description=f"Daily snapshots (UTC days) of the last `days` days plus {and_list(DELTA_PERIODS)} day "
    "deltas, each with the ratings of the battles played in it (period WN8, WN7, efficiency), the same "
    f"figures over the last ~{and_list(tuple(f'{n:,}' for n in RECENT_WINDOWS))} battles and week by week. 404 no_history when no snapshot exists.",
    tag="players",
    operation_id="PlayerHistory",
    limit_per_minute=20,
    cache_max_age=300,
    answer_seconds=HOT_COPY_SECONDS,
    example=f"/player/{DEMO_ACCOUNT}/eu/history?days=30",
    params=(ACCOUNT_ID, REGION, days_param(30)),
    errors=("no_history", "database_unavailable"),
    schema="PlayerHistory",
    csv=CsvTable(
        "snapshots",
        "history-{region}-{account_id}-{days}d",
        (
            "date",
            "battles",
            "wins",
            "damage_dealt",
            "frags",
            "spotted",
            "xp",
            "wn8",
            "wn7",
            "efficiency",
            "wtr",
            "global_rating",
            "win_rate",
            "avg_damage",
            "measured",
        ),
    ),
    fields={
        "snapshots[]": "date, battles, wins, damage_dealt, frags, spotted, xp (career totals that day), "
        "win_rate, avg_damage, wn8, wn7, efficiency (null on days without ratings), wtr and global_rating "
        "(Wargaming's, as measured that day; null when not measured)",
        "snapshots[].measured": "false on a day the tracker found no new battle (the previous day's "
        "figures carried forward), true on a measured day",
        DELTA_FIELDS: "null without two snapshots in the period, else from, to (the earliest "
        "snapshot inside the period and the newest), battles, wins, win_rate, "
        "avg_damage, avg_frags, avg_xp over those battles, wn8_change (movement of the career WN8), "
        "win_rate_change, wtr_change and global_rating_change (null when either day lacks it), and period",
        "deltas.<p>.period": "the ratings of the battles played in the period, from the tracker's per-tank "
        "records (null without them): from, to (the days it covers), battles, wins, win_rate, avg_damage, "
        "avg_frags, avg_spotted, avg_defence, avg_xp, survival_rate, hit_rate, average_tier "
        "(battle-weighted), wn8 (XVM, over the per-tank differences), expected_values (which rows rated "
        f"it, as in the profile's ratings), wn7, efficiency, {ASSIST_GUIDE}; battles 0 and "
        "nulls when nothing was played; wn8_percentile: the share (0-99 %) of the region's tracked accounts "
        f"with at least {STANDING_MIN_BATTLES} battles in the same period of the tank statistics whose WN8 "
        f"over it was lower (null below {STANDING_MIN_BATTLES} battles or before the tables are built); place "
        "{rank, ranked, min_battles, through}: for 1d, 7d, 30d and 90d, the account's rank on the region's "
        "WN8 leaderboard of as many days (GET /leaderboard/players?days=<n>: it ends on its build's through, "
        "the newest complete day, where this period may end a day later), how many are ranked there and its "
        "floor of battles (null for the other periods, when the account is not ranked there or before the "
        "first build)",
        "deltas." + " / ".join(f"recent_{n}" for n in RECENT_WINDOWS): "recent_<n>, for n = "
        f"{and_list(RECENT_WINDOWS)}: the same figures over roughly the last n "
        "battles: from the newest daily per-tank record at least n battles before the newest one, within "
        f"the last {MAX_DAYS} days (day-granular: battles says exactly how many it holds, n or more); null "
        "when the records do not reach n battles back in that time",
        "weekly[]": f"the same figures per {WEEK_DAYS}-day week, oldest first: ceil(days / {WEEK_DAYS}) weeks, "
        "the last "
        "ending on the newest snapshot's day (as the deltas); from, to are the week's bounds (the "
        "state at the end of `from` to the end of `to`; a week in which the per-tank records start "
        "begins at the first one); battles 0 and nulls in a week without battles; an entry is null "
        "for a week before the records begin; `weekly` is null without per-tank records",
        "days, first_date, last_date, snapshot_count, latest": "the window and the newest snapshot",
        "assistance_known_from": "the first day whose period figures carry the assistance (null: none yet)",
        "account_id, region": "the account asked for",
    },
)
TANKS = Endpoint(
    name="tanks",
    path="/player/{account_id}/{region}/tanks",
    summary="Per-tank breakdown over the last days, with period WN8",
    description="Every tank the player owns with its career figures and the battles played on it in "
    "the last `days` days (period WN8 per tank), plus the whole period over all tanks (equal to "
    "the history delta over the same days). Read from the tracker's per-tank records; 404 "
    "no_history until the account has one.",
    tag="players",
    operation_id="PlayerTanks",
    limit_per_minute=20,
    cache_max_age=300,
    answer_seconds=HOT_COPY_SECONDS,
    example=f"/player/{DEMO_ACCOUNT}/eu/tanks?days=30",
    params=(
        ACCOUNT_ID,
        REGION,
        days_param(30),
        Param(
            "group_by",
            "query",
            "string",
            "invalid_group_by",
            "Also answer the period's figures per group of tanks: by tier, type or nation. Give it at most once.",
            enum=GROUP_BYS,
        ),
    ),
    errors=("no_history", "database_unavailable"),
    schema="PlayerTanks",
    csv=CsvTable(
        "tanks",
        "tanks-{region}-{account_id}-{days}d",
        (
            "tank_id",
            "name",
            "tier",
            "type",
            "nation",
            "expected_values_source",
            "career.battles",
            "career.wins",
            "career.win_rate",
            "career.avg_damage",
            "career.wn8",
            "career.avg_assist_stun",
            "career.avg_combined_damage",
            "career.damage_ratio",
            "career.mark_of_mastery",
            "period.battles",
            "period.wins",
            "period.damage_dealt",
            "period.frags",
            "period.spotted",
            "period.dropped_capture_points",
            "period.capture_points",
            "period.xp",
            "period.survived_battles",
            "period.win_rate",
            "period.avg_damage",
            "period.avg_frags",
            "period.wn8",
            "period.avg_assist_stun",
            "period.avg_combined_damage",
            "period.damage_ratio",
            "standing.period_days",
            "standing.min_battles",
            "standing.damage_percentile",
            "standing.wn8_percentile",
            "marks.window_days",
            "marks.from",
            "marks.battles",
            "marks.combined_damage",
            "marks.percentile",
            "marks.estimated_marks",
            "marks.next.mark",
            "marks.next.combined_damage",
            "marks.next.needed",
            "marks.thresholds.first",
            "marks.thresholds.second",
            "marks.thresholds.third",
            "marks.thresholds.top",
            "marks.thresholds_source",
            "marks.official_date",
            "marks.estimated_thresholds.first",
            "marks.estimated_thresholds.second",
            "marks.estimated_thresholds.third",
            "marks.estimated_thresholds.top",
            "marks.method",
            "mastery.badge",
            "mastery.best_xp",
            "mastery.thresholds.third_class",
            "mastery.thresholds.second_class",
            "mastery.thresholds.first_class",
            "mastery.thresholds.ace",
            "mastery.best_xp_reaches",
            "mastery.date",
            "mastery.source",
        ),
    ),
    fields={
        "account_id, region, days": "the account and the days asked for",
        "from, to": "the days the period covers: the newest per-tank record on or before today-days "
        "(or the first one, for an account tracked since), and the newest",
        "expected_values_version": "the loaded XVM table the WN8 figures use (null when none is loaded)",
        "period": "over all tanks: battles, wins, win_rate, avg_damage, average_tier, wn8, expected_values "
        "(which rows rated it: version, source table | computed | mixed, computed_tanks, unrated_tanks, "
        f"table_version, computed_version), wn7, efficiency, {ASSIST_GUIDE}",
        "assistance_known_from": "the first day whose figures carry the assistance (null: none yet); a "
        "period or window starting earlier has those figures null",
        "group_by, groups[]": "with group_by: the period per group of tanks — the group's value (tier, "
        "type or nation; null for tanks the encyclopedia lacks), tanks, battles, wins, win_rate, "
        "avg_damage, avg_combined_damage, wn8 — played groups only, by battles; the groups' battles add "
        "up to the period's",
        "tanks[]": "tank_id, name, tier, type, nation (null for a tank the encyclopedia lacks), "
        "expected_values_source (table, computed: a row computed from the tracked accounts for a tank the "
        "loaded table lacks, or null: no row, no WN8), career "
        "{battles, wins, win_rate, avg_damage, wn8, avg_assist_stun, avg_combined_damage, damage_ratio, "
        "mark_of_mastery (0 none, 1-3 3rd to 1st class, 4 Ace Tanker)}, period {battles, wins, "
        "damage_dealt, frags, spotted, dropped_capture_points, capture_points, xp, survived_battles, "
        "win_rate, avg_damage, avg_frags, wn8, avg_assist_stun, avg_combined_damage, damage_ratio} (a "
        "tank's combined damage counts the account's spotting and tracking averages as the tank's: the "
        "game API keeps those per account only), marks (tier V and up, else null) {window_days, from, "
        f"battles, combined_damage over the last {MARKS_WINDOW_DAYS} days, percentile (0-99: the share of "
        "the tank's counted players below it, GET /tanks/marks), estimated_marks (0-3), next {mark, "
        "combined_damage, needed per battle} (mark null past the 3rd), thresholds {first, second, third, "
        "top} (what estimated_marks and next are measured against: Wargaming's published thresholds, "
        "wot/tanks/mastery, when the tank has them, else the estimate), thresholds_source (official | "
        "estimate | null), official_date, estimated_thresholds (the estimate, always), method}, mastery "
        "{badge (the game's, 0-4), best_xp (the best battle's base XP, tanks/stats max_xp), thresholds "
        "{third_class, second_class, first_class, ace} (the published XP thresholds, or null), "
        "best_xp_reaches (0-4: the badge that battle would reach against today's thresholds; an "
        "indication: the battle may be old and the thresholds move daily), date, source}, standing {period_days, min_battles, damage_percentile, wn8_percentile}: the "
        "share (0-99 %) of the tank's tracked players (GET /tanks/stats) below this period's average "
        f"damage and WN8 on it, over the population period nearest to `days` ({one_of(tuple(map(str, POPULATION_PERIODS)))}; null until "
        "built; a percentile null under min_battles battles on the tank in the period); sorted by period battles, "
        "then career battles",
    },
)
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
