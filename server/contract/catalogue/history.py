"""The player history endpoints: the daily snapshots with their periods, and the per-tank breakdown."""

from __future__ import annotations

from server.contract.catalogue.figures import (
    ASSIST_GUIDE,
    DELTA_FIELDS,
    DELTA_PERIODS,
    DEMO_ACCOUNT,
    GROUP_BYS,
    HOT_COPY_SECONDS,
    MARKS_WINDOW_DAYS,
    MAX_DAYS,
    POPULATION_PERIODS,
    RECENT_WINDOWS,
    ROW_COUNTERS,
    STANDING_MIN_BATTLES,
    SUMMARY_FIGURES,
    WEEK_DAYS,
)
from server.contract.catalogue.marks import (
    MARK_VALUES,
    NULLABLE_MARKS,
)
from server.contract.catalogue.model import CsvTable, Endpoint, Param, and_list, one_of
from server.contract.catalogue.params import ACCOUNT_ID, REGION, days_param
from server.contract.catalogue.shapes import (
    ACCOUNT,
    DATE,
    NUMBER_OR_NULL,
    PERIOD_FIGURES,
    TANK_NAMES,
    TIER,
    array,
    nullable,
    obj,
    ref,
)

# A day's snapshot as stored and served (a history entry adds its win rate, average damage and measured).
SNAPSHOT_FIELDS = (
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
        (*SNAPSHOT_FIELDS, "win_rate", "avg_damage", "measured"),
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
ASSISTANCE_KNOWN_FROM = {
    **nullable("string"),
    "description": "The first day whose figures carry the assistance; null: none yet.",
}
# /player/{account_id}/{region}/tanks: group_by and groups only with ?group_by=.
PLAYER_TANKS_REQUIRED = (
    "account_id",
    "region",
    "days",
    "from",
    "to",
    "expected_values_version",
    "assistance_known_from",
    "period",
    "tanks",
)
TANK_ASSIST = {
    "avg_assist_stun": NUMBER_OR_NULL,
    "avg_combined_damage": nullable(
        "number", description="With the account's spotting and tracking averages standing for the tank's."
    ),
    "damage_ratio": NUMBER_OR_NULL,
}

# The `data` schemas of this module's endpoints (components/schemas), by their `schema` names.
SCHEMAS: dict[str, dict] = {
    "HistoryEntry": obj(
        {
            "date": DATE,
            "battles": {"type": "integer"},
            "wins": {"type": "integer"},
            "damage_dealt": {"type": "integer"},
            "frags": {"type": "integer"},
            "spotted": {"type": "integer"},
            "xp": {"type": "integer"},
            "wn8": NUMBER_OR_NULL,
            "wn7": NUMBER_OR_NULL,
            "efficiency": NUMBER_OR_NULL,
            "wtr": nullable("integer", description="Wargaming's WTR measured that day (null: none, or not asked)."),
            "global_rating": nullable("integer", description="account/info's global_rating that day."),
            "win_rate": NUMBER_OR_NULL,
            "avg_damage": NUMBER_OR_NULL,
            "measured": {
                "type": "boolean",
                "description": "False on a day the tracker found no new battle: the previous snapshot carried forward.",
            },
        },
        description="Career totals as of the snapshot of that UTC day.",
    ),
    "PeriodFigures": PERIOD_FIGURES,
    "HistoryDelta": obj(
        {
            "from": DATE,
            "to": DATE,
            "battles": {"type": "integer", "description": "Battles played between the two snapshots."},
            "wins": {"type": "integer"},
            "win_rate": NUMBER_OR_NULL,
            "avg_damage": NUMBER_OR_NULL,
            "avg_frags": NUMBER_OR_NULL,
            "avg_xp": NUMBER_OR_NULL,
            "wn8_change": NUMBER_OR_NULL,
            "win_rate_change": nullable("number", description="Change of the career win rate, percentage points."),
            "wtr_change": nullable("number", description="Change of the WTR (null when either day lacks it)."),
            "global_rating_change": nullable("number", description="Change of global_rating."),
            "period": {
                "oneOf": [ref("schemas", "PeriodFigures"), {"type": "null"}],
                "description": "The ratings of the battles played in the period (null without per-tank records).",
            },
        },
        description="What changed over the period: rates over the battles played in it.",
    ),
    "PlayerHistory": obj(
        {
            **ACCOUNT,
            "days": {"type": "integer", "minimum": 1},
            "first_date": DATE,
            "last_date": DATE,
            "snapshots": array(ref("schemas", "HistoryEntry")),
            "snapshot_count": {"type": "integer", "minimum": 0},
            "deltas": obj(
                {
                    **{f"{p}d": {"oneOf": [ref("schemas", "HistoryDelta"), {"type": "null"}]} for p in DELTA_PERIODS},
                    **{
                        f"recent_{n}": {
                            "oneOf": [ref("schemas", "PeriodFigures"), {"type": "null"}],
                            "description": f"The figures of roughly the last {n:,} battles, from a "
                            "daily record (battles says exactly how many); null when the per-tank "
                            "records do not reach that far.",
                        }
                        for n in RECENT_WINDOWS
                    },
                },
                description=f"Deltas over {and_list(DELTA_PERIODS)} days (null when no snapshot lies "
                f"in the period) and the last {and_list(tuple(f'{n:,}' for n in RECENT_WINDOWS))} battles.",
            ),
            "weekly": {
                "oneOf": [
                    array(
                        {"oneOf": [ref("schemas", "PeriodFigures"), {"type": "null"}]},
                        description="One entry per 7-day week covering the `days` window, oldest "
                        "first, the last ending on the newest snapshot's day; from and to are the "
                        "week's bounds (the state at the end of `from` to the end of `to`). An "
                        "entry is null for a week before the account's per-tank records begin.",
                    ),
                    {"type": "null"},
                ],
                "description": "The figures of the battles played in each week (battles 0 and "
                "nulls in a week without battles); null without per-tank records.",
            },
            "latest": obj(
                {
                    "date": DATE,
                    "battles": {"type": "integer"},
                    "wins": {"type": "integer"},
                    "wn8": NUMBER_OR_NULL,
                    "wtr": nullable("integer"),
                }
            ),
            "assistance_known_from": ASSISTANCE_KNOWN_FROM,
        }
    ),
    "PlayerTanks": obj(
        {
            **ACCOUNT,
            "days": {"type": "integer", "minimum": 1},
            "from": DATE,
            "to": DATE,
            "expected_values_version": nullable("string"),
            "assistance_known_from": ASSISTANCE_KNOWN_FROM,
            "group_by": {"type": "string", "enum": list(GROUP_BYS)},
            "groups": array(
                obj(
                    {
                        "tier": TIER,
                        "type": nullable("string"),
                        "nation": nullable("string"),
                        "tanks": {"type": "integer", "minimum": 1},
                        "battles": {"type": "integer", "minimum": 1},
                        "wins": {"type": "integer", "minimum": 0},
                        "win_rate": NUMBER_OR_NULL,
                        "avg_damage": NUMBER_OR_NULL,
                        "avg_combined_damage": NUMBER_OR_NULL,
                        "wn8": NUMBER_OR_NULL,
                    },
                    # The group's value under the group_by's own name: one of tier, type and nation.
                    required=["tanks", "battles", "wins", "win_rate", "avg_damage", "avg_combined_damage", "wn8"],
                ),
                description="With group_by: the period per group of tanks (one of tier, type, nation "
                "per entry), played groups only.",
            ),
            "period": obj(
                {key: PERIOD_FIGURES["properties"][key] for key in SUMMARY_FIGURES},
                description="The whole period over all tanks (as the history delta over the same days).",
            ),
            "tanks": array(
                obj(
                    {
                        "tank_id": {"type": "integer"},
                        **TANK_NAMES,
                        "expected_values_source": {
                            "type": ["string", "null"],
                            "enum": ["table", "computed", None],
                            "description": "The row this tank's WN8 uses: the loaded table's, a "
                            "computed one, or none (null: no WN8).",
                        },
                        "career": obj(
                            {
                                "battles": {"type": "integer", "minimum": 0},
                                "wins": {"type": "integer", "minimum": 0},
                                "win_rate": NUMBER_OR_NULL,
                                "avg_damage": NUMBER_OR_NULL,
                                "wn8": NUMBER_OR_NULL,
                                **TANK_ASSIST,
                                "mark_of_mastery": {"type": "integer", "minimum": 0, "maximum": 4},
                            }
                        ),
                        "period": obj(
                            {
                                **{name: {"type": "integer", "minimum": 0} for name in ROW_COUNTERS},
                                "win_rate": NUMBER_OR_NULL,
                                "avg_damage": NUMBER_OR_NULL,
                                "avg_frags": NUMBER_OR_NULL,
                                "wn8": NUMBER_OR_NULL,
                                **TANK_ASSIST,
                            },
                            description="Raw counters of the period's battles on this tank, and rates.",
                        ),
                        "standing": {
                            "oneOf": [
                                obj(
                                    {
                                        "period_days": {"type": "integer", "enum": list(POPULATION_PERIODS)},
                                        "min_battles": {"type": "integer", "minimum": 1},
                                        "damage_percentile": nullable("integer", minimum=0, maximum=99),
                                        "wn8_percentile": nullable("integer", minimum=0, maximum=99),
                                    }
                                ),
                                {"type": "null"},
                            ],
                            "description": "Share (%) of the tank's tracked players below this period.",
                        },
                        "marks": {
                            "oneOf": [
                                obj(
                                    {
                                        "window_days": {"type": "integer", "minimum": 1},
                                        "from": {**nullable("string")},
                                        "battles": {"type": "integer", "minimum": 0},
                                        "combined_damage": NUMBER_OR_NULL,
                                        "percentile": nullable("integer", minimum=0, maximum=99),
                                        "estimated_marks": nullable("integer", minimum=0, maximum=3),
                                        "next": {
                                            "oneOf": [
                                                obj(
                                                    {
                                                        "mark": nullable("integer", minimum=1, maximum=3),
                                                        "combined_damage": NUMBER_OR_NULL,
                                                        "needed": {"type": "number", "minimum": 0},
                                                    }
                                                ),
                                                {"type": "null"},
                                            ]
                                        },
                                        "thresholds": {
                                            "oneOf": [MARK_VALUES, {"type": "null"}],
                                            "description": "The thresholds the progress is measured "
                                            "against: Wargaming's published ones when the tank has them, "
                                            "else the estimate (thresholds_source says which).",
                                        },
                                        "thresholds_source": {
                                            "type": ["string", "null"],
                                            "enum": ["official", "estimate", None],
                                        },
                                        "official_date": {
                                            **nullable("string", format="date"),
                                            "description": "The day the published thresholds were fetched.",
                                        },
                                        "estimated_thresholds": NULLABLE_MARKS,
                                        "method": {"type": "string"},
                                    }
                                ),
                                {"type": "null"},
                            ],
                            "description": "Progress toward the tank's marks of excellence (tier V and up).",
                        },
                        "mastery": obj(
                            {
                                "badge": {"type": "integer", "minimum": 0, "maximum": 4},
                                "best_xp": nullable("integer", minimum=0),
                                "thresholds": {
                                    "oneOf": [
                                        obj(
                                            {
                                                name: {"type": "number"}
                                                for name in ("third_class", "second_class", "first_class", "ace")
                                            }
                                        ),
                                        {"type": "null"},
                                    ]
                                },
                                "best_xp_reaches": nullable("integer", minimum=0, maximum=4),
                                "date": nullable("string", format="date"),
                                "source": {"type": ["string", "null"], "enum": ["wot/tanks/mastery", None]},
                            },
                            description="The mastery badge the game gave (0-4), the best battle's base XP, and "
                            "the badge that battle would reach against Wargaming's published XP thresholds "
                            'today (an indication: docs/data.md, "Official thresholds").',
                        ),
                    }
                ),
                description="Every tank the player owns; sorted by period battles, then career battles.",
            ),
        },
        required=PLAYER_TANKS_REQUIRED,
    ),
}

# This module's endpoints in the order the index and the OpenAPI document list them
# (server/contract/catalogue/__init__.py CATALOGUE).
ENDPOINTS: tuple[Endpoint, ...] = (
    HISTORY,
    TANKS,
)
