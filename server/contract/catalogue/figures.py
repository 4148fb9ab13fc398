"""The public figures the endpoints state and the services share: bounds, periods, ages, sizes, fragments."""

from __future__ import annotations

from store.constants import HISTORY_DAYS, TANK_COUNTERS

INT64_MAX = 2**63 - 1  # ids are positive and fit a signed 64-bit integer
MAX_DAYS = HISTORY_DAYS  # the longest history any endpoint serves (SPEC 8.3), as the store keeps it
LIVE_PER_CLIENT = 5  # live upstream lookups per client per minute (SPEC 8.2)
LIVE_GLOBAL = 30  # live upstream lookups per minute across all clients (SPEC 8.2)
SEARCH_RESULTS = 10  # the most accounts a nickname search answers
SEARCH_MIN, SEARCH_MAX = 3, 24  # the length of a nickname search's text
PROFILE_MAX_AGE = 3600  # a cached profile is at most this old (SPEC: about one hour)
CLAN_MAX_AGE = 3600  # cached clan data is at most this old (SPEC: about one hour); refreshed hourly
DELTA_PERIODS = (1, 3, 7, 14, 30, 60, 90)  # the days of the history's deltas (SPEC: 7, 30, 90; the rest added)
RECENT_WINDOWS = (100, 1000)  # the history's recent figures: about this many battles each (deltas.recent_<n>)
RECENT_BATTLES = max(RECENT_WINDOWS)  # the longest of them (SPEC: the last 1,000 battles)
WEEK_DAYS = 7  # the days of one bucket of the history's weekly series, and of a clan digest
DIGEST_TOP = 5  # members in each top list of a clan's weekly digest
DIGEST_MIN_BATTLES = 10  # a digest's WN8 and win-rate lists rank members with this many battles in the week
# The tank statistics of the tracked population (/tanks/stats, /tank/{tank_id}/{region}).
POPULATION_PERIODS = (7, 30, 90)  # the periods (days, ending on the newest complete day) they cover
POPULATION_MIN_BATTLES = 10  # a player counts in a tank's distributions with this many battles on it in the period
POPULATION_MIN_PLAYERS = 20  # a population figure is null when fewer players stand behind it
TABLE_PERCENTILES = (50, 65, 85, 95)  # a tank table row's damage percentiles (damage alone: not the marks)
TANK_PERCENTILES = (10, 20, 30, 40, 50, 60, 65, 70, 80, 85, 90, 95, 99)  # one tank's percentiles
TANK_PAGE_MAX = 100  # tanks per page of /tanks/stats
VEHICLE_TYPES = ("lightTank", "mediumTank", "heavyTank", "AT-SPG", "SPG")
# The rates a tank table row shows (/tanks/stats), each a sort.
TABLE_RATES = ("win_rate", "avg_damage", "avg_frags", "avg_xp", "survival_rate", "hit_rate")
TANK_SORTS = (
    "battles",
    "players",
    *TABLE_RATES,
    *(f"damage_p{p}" for p in TABLE_PERCENTILES),
    "tier",
    "tank_id",
    "name",
    "relative_win_rate",
    "relative_damage",
)
# Marks of excellence (/tanks/marks, docs/data.md "Marks of excellence").
MARKS_WINDOW_DAYS = 14  # the game's window: a mark compares the last 14 days' players of the tank
MARKS_MIN_BATTLES = 10  # a player counts in a tank's thresholds with this many battles on it in the window
MARKS_MIN_PLAYERS = POPULATION_MIN_PLAYERS  # thresholds are null when fewer players stand behind them
MARKS_CHANGE_DAYS = (7, 30)  # /tanks/marks shows each threshold's change over these many days
MARKS_SORTS = ("first", "second", "third", "top", "players", "battles", "tier", "tank_id", "name")
GROUP_BYS = ("tier", "type", "nation")  # /player/{account_id}/{region}/tanks?group_by=
MARKS_METHOD = "docs/data.md#marks-of-excellence"  # where the estimate is explained (answers link to it)
# What Wargaming's published thresholds are and how far our estimate is from them (answers link to it).
OFFICIAL_METHOD = "docs/data.md#official-thresholds-wargamings-published-figures"
ASSIST_GUIDE = (
    "avg_assist_radio, avg_assist_track (the account's spotting and tracking assistance per battle: the game "
    "API gives them per account only, as averages), avg_assist_stun, avg_combined_damage (avg_damage plus "
    "the largest of the three: a lower bound of the game's per-battle combined damage), damage_ratio "
    "(damage dealt / received); null when a record of the period predates them (assistance_known_from)"
)
# Expected values computed from the tracked accounts (/expected-values, docs/expected-values.md).
EXPECTED_METHOD = "ev1"  # the method's version, part of every computed table's version
EXPECTED_WINDOW_DAYS = 60  # the days of per-tank records a computed table is fitted over
EXPECTED_MIN_TANK_BATTLES = 10  # a player is a point of a tank's fit with this many battles on it
EXPECTED_MIN_ACCOUNT_BATTLES = 100  # ... and this many on the account's other rated tanks
EXPECTED_MIN_PLAYERS = 20  # a computed row needs this many points
EXPECTED_MIN_ROW_BATTLES = 1000  # ... and this many battles behind them
STANDING_MIN_BATTLES = 100  # an account counts in its region's WN8 standing with this many battles in the period
# A profile's career WN8 percentile is a place among the realm's active players (its random panel's
# members with STANDING_MIN_BATTLES career battles) once this many stand behind it (the grid's step is
# then within about 1.6 points of the realm's at the median); below, among the tracked accounts.
STANDING_PANEL_MIN_PLAYERS = 1000
DELTA_FIELDS = "deltas." + " / ".join(f"{p}d" for p in DELTA_PERIODS)  # "deltas.7d / 30d / 90d"
TRACKED_SEARCH_CACHE_SECONDS = 60  # the tracked accounts' answer to a (region, prefix) is reused this long
# A process keeps its hot copies (a rated profile, a clan view, /online) and the rendered answers
# built from them this long, unless it writes the data meanwhile (other processes' writes show
# after at most this long): well inside the hour a profile or clan may be old.
HOT_COPY_SECONDS = 5.0
DEMO_ACCOUNT = 500000001
DEMO_CLAN = 500000
# Leaderboards of the tracked accounts (/leaderboard/players, docs/data.md "Leaderboards"), built by
# the tank statistics job. A window is a period of days ending on the newest complete day, or the
# career; each has a floor of battles a ranked player has played in it. A caller may ask for more
# (min_battles): the list served is that of the smallest step of LEADERBOARD_STEPS at or above
# both, so a page stays a point read and nobody is ranked with fewer battles than asked.
LEADERBOARD_WINDOWS = ("1", "7", "30", "90", "career")
LEADERBOARD_FLOORS = {"1": 10, "7": 25, "30": 100, "90": 250, "career": 1000}
LEADERBOARD_STEPS = (10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000)
LEADERBOARD_BYS = ("wn8", "win_rate", "avg_damage", "avg_combined_damage", "battles")
# The players' leaderboards also rank Wargaming's WTR (the account's, measured at its newest visit).
PLAYER_LEADERBOARD_BYS = (*LEADERBOARD_BYS, "wtr")
# Counted per account: nobody ranked with tier or type.
LEADERBOARD_ACCOUNT_ONLY = ("avg_combined_damage", "wtr")
LEADERBOARD_PAGE_MAX = 100  # rows per page, and per stored chunk
# One tank's leaderboard (/tank/{tank_id}/{region}/leaderboard): the floor is of battles on the tank.
TANK_LEADERBOARD_FLOORS = {"1": 5, "7": 10, "30": 25, "90": 50, "career": 100}
TANK_LEADERBOARD_STEPS = (5, *LEADERBOARD_STEPS)
# Clans' leaderboard (/leaderboard/clans): the cached clans ranked by their members' play in a
# window (a member is active with a battle in it). A ranked clan has at least CLAN_MIN_MEMBERS active
# members (a caller may ask for more, never fewer) and CLAN_BATTLE_FLOORS battles in the window
# (five players' floors: a handful of members' training-room battles ranks nobody).
# A clan's row as stored (after clan_id, tag and name) and served.
CLAN_FIGURES = (
    "members",
    "active_members",
    "battles",
    "battles_per_member",
    "wn8",
    "win_rate",
    "elo_10",
    "elo_8",
    "skirmish_win_rate",
)
CLAN_LEADERBOARD_BYS = (
    "wn8",
    "win_rate",
    "battles_per_member",
    "active_members",
    "battles",
    "elo_10",
    "elo_8",
    "skirmish_win_rate",
)
CLAN_MIN_MEMBERS = 5
CLAN_MAX_MEMBERS = 100  # a clan's roster holds at most this many players
CLAN_BATTLE_FLOORS = {window: CLAN_MIN_MEMBERS * floor for window, floor in LEADERBOARD_FLOORS.items()}
# Sessions (/player/{account_id}/{region}/session, docs/data.md "Sessions"): the battles since a
# moment. A session request watches the account: the watcher measures it at once, then in rounds
# every WATCH_REFRESH_SECONDS on the clock (looking for due accounts every WATCH_TICK_SECONDS),
# whoever asks, until WATCH_SECONDS after the last request.
WATCH_SECONDS = 900
WATCH_REFRESH_SECONDS = 60
WATCH_TICK_SECONDS = 5
WATCH_BATCH = 100  # account/info ids per request of the watcher
WATCH_REQUESTS_PER_MINUTE = 60  # the watcher's share of each realm's upstream requests
WATCHED_PER_REGION = 1000  # accounts watched at once in a region
WATCHED_PER_CLIENT = 10  # accounts one client keeps watched at once (per process)
SESSION_LIMIT_PER_MINUTE = 12  # an overlay asking every 5 s
STREAMS_PER_CLIENT = 3  # session streams one client keeps open at once (per process)
STREAMS_PER_PROCESS = 1000  # session streams a process keeps open at once
STREAM_HEARTBEAT_SECONDS = 30  # a comment line on a stream with nothing new for this long
STREAM_POLL_SECONDS = 5  # how often a process looks for new states of the accounts its streams follow
STREAM_LIMIT_PER_MINUTE = 6  # stream connections a client may open per minute
# Values the answers state that the domain computes (server/domain imports them from here).
# Why a profile's WTR (Wargaming's own rating, wot/account/wtr) is null (ratings.wtr_reason).
WTR_NO_RATING = "no_rating"  # Wargaming answers none: too few random battles for the rating
WTR_UPSTREAM_FAILED = "upstream_failed"  # the account/wtr request failed (the lookup did not)
WTR_NOT_FETCHED = "not_fetched"  # stored before the service asked for it
WTR_REASONS = (WTR_NO_RATING, WTR_UPSTREAM_FAILED, WTR_NOT_FETCHED)
# Upper bounds (exclusive) of the usual WN8 colour scale, as used by XVM and
# the common stats sites; anything at or above the last bound is super unicum (ratings.wn8_color).
WN8_COLOURS = (
    (300, "very_bad"),
    (450, "bad"),
    (650, "below_average"),
    (900, "average"),
    (1200, "above_average"),
    (1600, "good"),
    (2000, "very_good"),
    (2450, "great"),
    (2900, "unicum"),
)
WN8_TOP_COLOUR = "super_unicum"
# The raw counters a tanks-endpoint row shows for the period (callers compute their own figures).
ROW_COUNTERS = tuple(
    name
    for name in TANK_COUNTERS
    if name not in ("losses", "draws", "shots", "hits", "damage_received", "stun_assisted_damage")
)
# The whole-period figures the tanks endpoint shows beside its rows (a subset of figures_of's).
SUMMARY_FIGURES = (
    "battles",
    "wins",
    "win_rate",
    "avg_damage",
    "average_tier",
    "wn8",
    "expected_values",
    "wn7",
    "efficiency",
    "avg_assist_radio",
    "avg_assist_track",
    "avg_assist_stun",
    "avg_combined_damage",
    "damage_ratio",
)
# The session's figures: the period figures of /tanks, and the per-battle frags, spotting, XP and
# survival of /history's periods.
SESSION_FIGURES = (*SUMMARY_FIGURES, "avg_frags", "avg_spotted", "avg_xp", "survival_rate")
# Why a session does not start at the account's state at `since` (from_reason).
NOT_AS_OLD = "no stored state of the account is as old as since: the session starts at the oldest (from > since)"
PLAYED_BEFORE_MEASURED = (
    "the account played after since before the service measured it: the session starts at the newest "
    "state before since and may count battles played between from and since"
)
NOT_MEASURED = (
    "the account has not been measured since since: the session starts at the newest state before since "
    "and may count battles played between from and since"
)
# The five statistics of an expected-values row, in TankExpectation's field order (the comparison's keys).
EXPECTED_STATS = ("damage", "spot", "frag", "defence", "win_rate")
# A tank's strength with its drivers' skill taken out (/tanks/strength, the `strength` of a
# /tanks/stats row; docs/data.md "Tank strength"). A player counts for a tank with at least
# STRENGTH_MIN_OTHER_BATTLES battles on the tier's other tanks in the period (their baseline); a
# tank's figures are null below STRENGTH_MIN_PLAYERS such players or STRENGTH_MIN_BATTLES battles.
STRENGTH_MIN_OTHER_BATTLES = 10
STRENGTH_MIN_PLAYERS = 10
STRENGTH_MIN_BATTLES = 100
STRENGTH_METHOD = "docs/data.md#tank-strength-the-drivers-skill-taken-out"
# The vehicle catalogue (/vehicles): its page and the period of each vehicle's headline figures.
VEHICLES_PAGE_MAX = 100
VEHICLE_HEADLINE_DAYS = 30
