"""The endpoint catalogue: every public endpoint's path, parameters, limits, caching, errors and documentation."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from server.api.config import API_VERSION
from server.api.errors import APIError
from store.constants import GAMES, HISTORY_DAYS, REGIONS

# Routes, parameter validation, the rate limiter's buckets, the index, the OpenAPI document and
# the site all derive from the records below: every limit, cache lifetime, parameter bound and
# default the public sees is stated here once, with the public facts the services share (delta
# periods, cache ages, digest sizes), and the prose is formatted from them. Response schemas are in
# handlers/schemas.py, by `schema` name (tests/test_field_guides.py holds the field guides to them).

PREFIX = f"/api/{API_VERSION}"
INT64_MAX = 2**63 - 1  # ids are positive and fit a signed 64-bit integer
MAX_DAYS = HISTORY_DAYS  # the longest history any endpoint serves (SPEC 8.3), as the store keeps it
LIVE_PER_CLIENT = 5  # live upstream lookups per client per minute (SPEC 8.2)
LIVE_GLOBAL = 30  # live upstream lookups per minute across all clients (SPEC 8.2)
SEARCH_RESULTS = 10  # the most accounts a nickname search answers
SEARCH_MIN, SEARCH_MAX = 3, 24  # the length of a nickname search's text
PROFILE_MAX_AGE = 3600  # a cached profile is at most this old (SPEC: about one hour)
CLAN_MAX_AGE = 3600  # cached clan data is at most this old (SPEC: about one hour); refreshed hourly
DELTA_PERIODS = (7, 30, 90)  # the days of the history's deltas
RECENT_BATTLES = 1000  # the history's recent figures cover about this many battles
WEEK_DAYS = 7  # the days of one bucket of the history's weekly series, and of a clan digest
DIGEST_TOP = 5  # members in each top list of a clan's weekly digest
DIGEST_MIN_BATTLES = 10  # a digest's WN8 and win-rate lists rank members with this many battles in the week
# The tank statistics of the tracked population (/tanks/stats, /tank/{tank_id}/{region}).
POPULATION_PERIODS = (7, 30, 90)  # the periods (days, ending on the newest complete day) they cover
POPULATION_MIN_BATTLES = 10  # a player counts in a tank's distributions with this many battles on it in the period
POPULATION_MIN_PLAYERS = 20  # a population figure is null when fewer players stand behind it
TABLE_PERCENTILES = (50, 65, 85, 95)  # a tank table row's damage percentiles (the marks players chase)
TANK_PERCENTILES = (10, 20, 30, 40, 50, 60, 65, 70, 80, 85, 90, 95, 99)  # one tank's percentiles
TANK_PAGE_MAX = 100  # tanks per page of /tanks/stats
VEHICLE_TYPES = ("lightTank", "mediumTank", "heavyTank", "AT-SPG", "SPG")
TANK_SORTS = (
    "battles",
    "players",
    "win_rate",
    "avg_damage",
    "avg_frags",
    "avg_xp",
    "survival_rate",
    "hit_rate",
    *(f"damage_p{p}" for p in TABLE_PERCENTILES),
    "tier",
    "tank_id",
    "name",
)
# Marks of excellence (/tanks/marks, docs/data.md "Marks of excellence").
MARKS_WINDOW_DAYS = 14  # the game's window: a mark compares the last 14 days' players of the tank
MARKS_MIN_BATTLES = 10  # a player counts in a tank's thresholds with this many battles on it in the window
MARKS_MIN_PLAYERS = POPULATION_MIN_PLAYERS  # thresholds are null when fewer players stand behind them
MARKS_CHANGE_DAYS = (7, 30)  # /tanks/marks shows each threshold's change over these many days
MARKS_SORTS = ("first", "second", "third", "top", "players", "battles", "tier", "tank_id", "name")
GROUP_BYS = ("tier", "type", "nation")  # /player/{account_id}/{region}/tanks?group_by=
MARKS_METHOD = "docs/data.md#marks-of-excellence"  # where the estimate is explained (answers link to it)
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
DELTA_FIELDS = "deltas." + " / ".join(f"{p}d" for p in DELTA_PERIODS)  # "deltas.7d / 30d / 90d"
TRACKED_SEARCH_CACHE_SECONDS = 60  # the tracked accounts' answer to a (region, prefix) is reused this long
# A process keeps its hot copies (a rated profile, a clan view, /online) and the rendered answers
# built from them this long, unless it writes the data meanwhile (other processes' writes show
# after at most this long): well inside the hour a profile or clan may be old.
HOT_COPY_SECONDS = 5.0
DEMO_ACCOUNT = 500000001
DEMO_CLAN = 500000


def one_of(values: tuple[str, ...]) -> str:
    """'a, b or c'."""
    return ", ".join(values[:-1]) + " or " + values[-1] if len(values) > 1 else values[0]


def and_list(values: tuple) -> str:
    """'7, 30 and 90'."""
    words = [str(v) for v in values]
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else words[0]


def hours(seconds: float) -> str:
    return f"{seconds / 3600:g} h"


def duration(seconds: float) -> str:
    """'a minute', '5 minutes', '1 h', '90 s'."""
    if seconds == 60:
        return "a minute"
    if seconds % 3600 == 0:
        return hours(seconds)
    return f"{seconds / 60:g} minutes" if seconds % 60 == 0 else f"{seconds:g} s"


# Codes every rate-limited GET can answer, whatever the endpoint.
COMMON_ERRORS = ("bad_request", "payload_too_large", "request_too_large", "rate_limited", "internal_error")


@dataclasses.dataclass(frozen=True)
class Param:
    """One path or query parameter: its type and bounds are what the handlers accept."""

    name: str
    location: str  # "path" or "query"
    type: str  # "integer" or "string"
    error: str  # the error code a bad value (or a missing required one) answers
    description: str
    minimum: int | None = None
    maximum: int | None = None
    enum: tuple[str, ...] | tuple[int, ...] | None = None
    min_length: int | None = None  # free text: length bounds and an anchored pattern
    max_length: int | None = None
    pattern: str | None = None
    default: int | str | None = None
    required: bool = False  # a query parameter that must be given (path parameters always must)
    format: str | None = None  # OpenAPI format ("int64")
    example: int | str | None = None  # OpenAPI example (path parameters)

    def __post_init__(self) -> None:
        # JSON Schema patterns are unanchored searches; anchoring makes the document and
        # handlers/params.py (which matches the whole value) mean the same.
        assert self.pattern is None or (self.pattern.startswith("^") and self.pattern.endswith("$")), self.pattern
        if self.location == "path":
            object.__setattr__(self, "required", True)  # OpenAPI: a path parameter is required

    def constraints(self) -> dict:
        """Its bounds, allowed values and default, under their JSON Schema names."""
        out: dict = {}
        for key, value in (
            ("minimum", self.minimum),
            ("maximum", self.maximum),
            ("enum", list(self.enum) if self.enum is not None else None),
            ("minLength", self.min_length),
            ("maxLength", self.max_length),
            ("pattern", self.pattern),
            ("default", self.default),
        ):
            if value is not None:
                out[key] = value
        return out

    def index_entry(self) -> dict:
        """The parameter as the index lists it."""
        entry: dict = {"name": self.name, "in": self.location, "type": self.type, **self.constraints()}
        if self.required:
            entry["required"] = True
        return entry


@dataclasses.dataclass(frozen=True, eq=False)  # compared by identity: each record is one endpoint
class Endpoint:
    """One GET endpoint. `name` is also its rate-limit bucket and the metrics label."""

    name: str
    path: str  # template relative to PREFIX ("" for the index itself)
    summary: str
    description: str
    tag: str  # OpenAPI tag: players, clans, online or meta
    operation_id: str  # OpenAPI operationId stem (getX, headX, optionsX)
    limit_per_minute: int  # per client (SPEC 8.1)
    cache_max_age: int  # Cache-Control max-age of a successful answer, seconds
    example: str  # a request path relative to PREFIX
    params: tuple[Param, ...] = ()
    # Codes this endpoint answers beyond its parameters' codes and COMMON_ERRORS.
    errors: tuple[str, ...] = ()
    schema: str | None = None  # the `data` schema in handlers/schemas.py; None: served raw, not enveloped
    fields: Mapping[str, str] = dataclasses.field(default_factory=dict)  # short guide to the answer's fields
    live_lookups: bool = False  # may fetch from the upstream for the request (the live-lookup limits apply)
    # Cache-Control max-age of an answer fetched live for the request, when shorter than cache_max_age.
    live_fetched_max_age: int | None = None
    needs_database: bool = True  # answers 503 at once while the database is down
    # How long a process replays this endpoint's rendered answer to a request with the same path and
    # query (server/api/answers.py); 0: built for every request. Never longer than the data's own
    # freshness (HOT_COPY_SECONDS for the services' hot copies).
    answer_seconds: float = 0.0

    @property
    def bucket(self) -> str:
        return self.name

    @property
    def full_path(self) -> str:
        return PREFIX + self.path

    @property
    def param_errors(self) -> frozenset[str]:
        """The codes of a bad parameter: answers decided by the request alone."""
        return frozenset(param.error for param in self.params)

    @property
    def error_codes(self) -> tuple[str, ...]:
        """Every code it can answer: its parameters', its own, then the common ones."""
        codes = dict.fromkeys(param.error for param in self.params)
        codes.update(dict.fromkeys(self.errors))
        codes.update(dict.fromkeys(COMMON_ERRORS))
        return tuple(codes)

    def route_pattern(self) -> str:
        """The Tornado route: each {param} one path segment; a trailing slash is allowed except
        after a file name."""
        pattern = ""
        for part in self.full_path.split("/")[1:]:
            if part.startswith("{") and part.endswith("}"):
                pattern += "/([^/]*)"
            else:
                pattern += "/" + part.replace(".", r"\.")
        return pattern if "." in self.full_path.rsplit("/", 1)[1] else pattern + "/?"


def parse_value(param: Param, text: str) -> Any:
    """`text` as `param` accepts it, or APIError(param.error).

    Integers the strict way: ASCII digits only (no sign, no spaces), within the bounds. A bad path
    value answers the code's standard message; a query value says what it accepts.
    """
    if param.type == "integer":
        assert param.minimum is not None and param.maximum is not None  # every integer parameter is bounded
        if (
            text
            and text.isascii()
            and text.isdigit()
            and len(text) <= len(str(param.maximum))
            and param.minimum <= int(text) <= param.maximum
            and (param.enum is None or int(text) in param.enum)
        ):
            return int(text)
        hint = (
            f"{param.name} must be {one_of(tuple(map(str, param.enum)))}"
            if param.enum is not None
            else f"{param.name} must be an integer from {param.minimum} to {param.maximum}"
        )
    elif param.enum is not None:
        if text in param.enum:
            return text
        hint = f"{param.name} must be one of " + ", ".join(map(str, param.enum))
    else:
        # Free text: within its length bounds and matching its pattern (anchored, so the
        # document's unanchored JSON Schema pattern means the same).
        shortest = param.min_length or 0
        longest = param.max_length
        if (
            shortest <= len(text)
            and (longest is None or len(text) <= longest)
            and (param.pattern is None or re.fullmatch(param.pattern, text))
        ):
            return text
        hint = (
            f"{param.name} must be at least {shortest} characters"
            if longest is None
            else (f"{param.name} must be {shortest} to {longest} characters")
        )
        if param.pattern is not None:
            hint += f" matching {param.pattern}"
    raise APIError(param.error, hint if param.location == "query" else None)


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


def _days(default: int) -> Param:
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


INDEX = Endpoint(
    name="index",
    path="",
    summary="API index: endpoints, parameters, limits, error codes",
    description="This index: every endpoint, its parameters and limits, every error code.",
    tag="meta",
    operation_id="Index",
    limit_per_minute=120,  # SPEC 8.1 leaves the index's own limit to us
    cache_max_age=300,
    answer_seconds=HOT_COPY_SECONDS,
    example="",
    schema="Index",
    needs_database=False,
)
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
        "battles or before the tank statistics are built)",
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
    f"figures over the last ~{RECENT_BATTLES:,} battles and week by week. 404 no_history when no snapshot exists.",
    tag="players",
    operation_id="PlayerHistory",
    limit_per_minute=20,
    cache_max_age=300,
    answer_seconds=HOT_COPY_SECONDS,
    example=f"/player/{DEMO_ACCOUNT}/eu/history?days=30",
    params=(ACCOUNT_ID, REGION, _days(30)),
    errors=("no_history", "database_unavailable"),
    schema="PlayerHistory",
    fields={
        "snapshots[]": "date, battles, wins, damage_dealt, frags, spotted, xp (career totals that day), "
        "win_rate, avg_damage, wn8, wn7, efficiency (null on days without ratings)",
        "snapshots[].measured": "false on a day the tracker found no new battle (the previous day's "
        "figures carried forward), true on a measured day",
        DELTA_FIELDS: "null without two snapshots in the period, else from, to (the earliest "
        "snapshot inside the period and the newest), battles, wins, win_rate, "
        "avg_damage, avg_frags, avg_xp over those battles, wn8_change (movement of the career WN8), "
        "win_rate_change, and period",
        "deltas.<p>.period": "the ratings of the battles played in the period, from the tracker's per-tank "
        "records (null without them): from, to (the days it covers), battles, wins, win_rate, avg_damage, "
        "avg_frags, avg_spotted, avg_defence, avg_xp, survival_rate, hit_rate, average_tier "
        "(battle-weighted), wn8 (XVM, over the per-tank differences), expected_values (which rows rated "
        f"it, as in the profile's ratings), wn7, efficiency, {ASSIST_GUIDE}; battles 0 and "
        "nulls when nothing was played; wn8_percentile: the share (0-99 %) of the region's tracked accounts "
        f"with at least {STANDING_MIN_BATTLES} battles in the same period of the tank statistics whose WN8 "
        f"over it was lower (null below {STANDING_MIN_BATTLES} battles or before the tables are built)",
        f"deltas.recent_{RECENT_BATTLES}": f"the same figures over roughly the last {RECENT_BATTLES:,} battles: "
        f"from the newest per-tank record at least {RECENT_BATTLES:,} battles before the newest one, within "
        f"the last {MAX_DAYS} days (battles says exactly how many); null when the records do not reach "
        f"{RECENT_BATTLES:,} battles back in that time",
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
        _days(30),
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
        "top}, method}, standing {period_days, min_battles, damage_percentile, wn8_percentile}: the "
        "share (0-99 %) of the tank's tracked players (GET /tanks/stats) below this period's average "
        f"damage and WN8 on it, over the population period nearest to `days` ({one_of(tuple(map(str, POPULATION_PERIODS)))}; null until "
        "built; a percentile null under min_battles battles on the tank in the period); sorted by period battles, "
        "then career battles",
    },
)
PLAYER_SEARCH = Endpoint(
    name="search",
    path="/players",
    summary="Find players by the start of their nickname",
    description="Accounts whose nickname starts with `search` (case-insensitive), at most "
    f"{SEARCH_RESULTS}, sorted by nickname. Served from the tracked accounts when any matches "
    "(source: tracked; the tracked accounts' answer to a region and prefix is reused for up to "
    f"{duration(TRACKED_SEARCH_CACHE_SECONDS)}); otherwise asked of the game API (source: upstream), one live lookup per region "
    "searched, under the live-lookup limits. Without `region`, all regions are searched.",
    tag="players",
    operation_id="PlayerSearch",
    limit_per_minute=30,
    cache_max_age=300,
    example="/players?search=demo&region=eu",
    params=(
        SEARCH,
        Param(
            "region",
            "query",
            "string",
            "invalid_region",
            "Game region to search: eu, na or asia; all regions when absent. Give it at most once.",
            enum=REGIONS,
        ),
    ),
    errors=("rate_limited_global", "database_unavailable", "upstream_unavailable"),
    schema="PlayerSearch",
    fields={
        "search, region": "what was asked (region null: all regions)",
        "source": "tracked (from the accounts this service measures daily) or upstream (the game API)",
        "results[]": f"account_id, nickname, region, tracked (measured daily here); at most {SEARCH_RESULTS}",
    },
    live_lookups=True,
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
ONLINE = Endpoint(
    name="online",
    path="/online",
    summary="Current player counts per game and region",
    description="Current player counts per game and region (per server, sampled each minute), "
    "totals, and the measured peak today (UTC) and all time.",
    tag="online",
    operation_id="Online",
    limit_per_minute=60,
    cache_max_age=60,
    answer_seconds=HOT_COPY_SECONDS,
    example="/online",
    errors=("database_unavailable",),
    schema="Online",
    fields={
        "today": "the UTC day of the `peak.today` figures",
        "sample_interval_seconds": "seconds between two samples of a server's player count",
        "games.<game>": "players (sum over regions), minute, complete (all regions sampled that minute), "
        "peak.today / peak.all_time {players, minute}, regions.<region> {players, minute, "
        "age_seconds, servers[] {server, players}, failing, peak}",
        "newest_sample": "minute and age_seconds of the newest sample",
    },
)
ONLINE_HISTORY = Endpoint(
    name="online_history",
    path="/online/history",
    summary="Daily series of player counts",
    description="Daily series (UTC) of player counts: peak with its minute, minimum, average, "
    "sample count. Days without samples have samples: 0 and null values. region=all "
    "counts only minutes where all three regions were sampled.",
    tag="online",
    operation_id="OnlineHistory",
    limit_per_minute=30,
    cache_max_age=300,
    answer_seconds=HOT_COPY_SECONDS,
    example="/online/history?game=wot&region=all&days=30",
    params=(
        Param(
            "game",
            "query",
            "string",
            "invalid_game",
            "Game whose player counts to return. Give it at most once.",
            enum=GAMES,
            default="wot",
        ),
        Param(
            "region",
            "query",
            "string",
            "invalid_region",
            "Region, or `all` for the sum of all regions. Give it at most once.",
            enum=(*REGIONS, "all"),
            default="all",
        ),
        _days(7),
    ),
    errors=("database_unavailable",),
    schema="OnlineHistory",
    fields={
        "game, region, days": "what was asked for (region all: the sum over every region)",
        "from, to": "the first and last day of the series (UTC)",
        "series[]": "date, samples, peak, peak_minute, min, avg",
    },
)


def _period_param() -> Param:
    return Param(
        "days",
        "query",
        "integer",
        "invalid_days",
        f"The period: {one_of(tuple(map(str, POPULATION_PERIODS)))} UTC days, ending on the newest complete "
        "day. Give it at most once.",
        minimum=min(POPULATION_PERIODS),
        maximum=max(POPULATION_PERIODS),
        enum=POPULATION_PERIODS,
        default=30,
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
POPULATION_FIELDS = {
    "region, days, from, through": "the region and the period: its first and last UTC day (the newest "
    "complete day; built daily about an hour after a day ends)",
    "built_at": "unix time the tables were built",
    "population": "who the figures are about: the tracked accounts (players looked up here and members "
    "of cached clans), not a random sample of the server",
    "min_battles, min_players": f"a player counts in a tank's percentiles with at least min_battles "
    f"({POPULATION_MIN_BATTLES}) battles on it in the period; a figure is null when fewer than "
    f"min_players ({POPULATION_MIN_PLAYERS}) players stand behind it",
}
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
    Param(
        "limit", "query", "integer", "invalid_limit", "Tanks per page.", minimum=1, maximum=TANK_PAGE_MAX, default=50
    ),
    Param(
        "offset", "query", "integer", "invalid_offset", "Tanks to skip (paging).", minimum=0, maximum=10_000, default=0
    ),
)
MARKS_WINDOW = (
    f"the {MARKS_WINDOW_DAYS} UTC days ending on the newest complete day (the game's window), tanks of "
    f"tier V and up; a player counts with at least {MARKS_MIN_BATTLES} battles on the tank in them and "
    "assistance known for the whole window; thresholds null below "
    f"{MARKS_MIN_PLAYERS} such players"
)
MARK_THRESHOLDS = (
    "first, second, third: the combined damage per battle (damage dealt plus the largest of the average "
    "spotting, tracking and stun assistance) that beats 65, 85 and 95 % of the tank's counted players "
    "(the 65th, 85th and 95th percentile: the 1st, 2nd and 3rd mark of excellence); top: the best of "
    "them (100 %)"
)
TANK_ROW_FIGURES = (
    "tank_id, name, tier, type, nation (null when the encyclopedia lacks the tank), players (tracked "
    "accounts that played it in the period), battles, win_rate (%), avg_damage, avg_frags, avg_xp, "
    "survival_rate (%), hit_rate (%)"
)
TANK_STATS = Endpoint(
    name="tank_stats",
    path="/tanks/stats",
    summary="Tank statistics of a region: win rate, damage and damage percentiles per tank",
    description="Every tank the tracked accounts of a region played in the period, with its players, "
    "battles, rates and averages and the percentiles of the players' average damage "
    f"({', '.join(f'p{p}' for p in TABLE_PERCENTILES)}: the damage that puts a player in the top "
    f"{', '.join(str(100 - p) for p in TABLE_PERCENTILES[1:])} % of the tank's players). Built daily "
    "from the tracker's per-tank records, without any request to the game API. Filter by tier, type "
    "and nation; sort by any figure; page with limit and offset. 404 no_statistics until the first "
    "build.",
    tag="tanks",
    operation_id="TankStats",
    limit_per_minute=30,
    cache_max_age=300,
    answer_seconds=HOT_COPY_SECONDS,
    example="/tanks/stats?region=eu&days=30",
    params=(
        REGION_QUERY,
        _period_param(),
        *TANK_FILTERS,
        Param(
            "sort",
            "query",
            "string",
            "invalid_sort",
            "The figure to sort by (nulls last).",
            enum=TANK_SORTS,
            default="battles",
        ),
        *TANK_PAGING,
    ),
    errors=("no_statistics", "database_unavailable"),
    schema="TankStats",
    fields={
        **POPULATION_FIELDS,
        "sort, order, total, offset, limit": "the order asked for, how many tanks match the filters, the page",
        "tanks[]": f"{TANK_ROW_FIGURES}, damage_percentiles {{{', '.join(f'p{p}' for p in TABLE_PERCENTILES)}}} "
        "(average damage per battle of the players with min_battles; null below min_players of them), "
        "sample {players, battles, qualified (players with min_battles)}",
    },
)
TANK = Endpoint(
    name="tank",
    path="/tank/{tank_id}/{region}",
    summary="One tank's statistics: figures, daily series and percentiles",
    description="One tank on a region over the period: the figures of /tanks/stats, a daily series "
    "(players, battles, win rate, average damage) and the percentiles "
    f"{TANK_PERCENTILES[0]} to {TANK_PERCENTILES[-1]} of the players' average damage and of their WN8 on it. "
    "404 no_statistics when no tracked account played it in the period.",
    tag="tanks",
    operation_id="Tank",
    limit_per_minute=30,
    cache_max_age=300,
    answer_seconds=HOT_COPY_SECONDS,
    example="/tank/1/eu?days=30",
    params=(
        Param(
            "tank_id",
            "path",
            "integer",
            "invalid_tank_id",
            "Tank ID (the game API's tank_id).",
            minimum=1,
            maximum=2**31 - 1,
            example=1,
        ),
        REGION,
        _period_param(),
    ),
    errors=("no_statistics", "database_unavailable"),
    schema="TankDetail",
    fields={
        **POPULATION_FIELDS,
        "tank_id, name, tier, type, nation, players, battles, win_rate, avg_damage, avg_frags, avg_xp, "
        "survival_rate, hit_rate": TANK_ROW_FIGURES,
        "sample": "players, battles, qualified (players with min_battles), rated (of those, on a tank "
        "the expected-values table rates)",
        "percentiles": f"damage and wn8: {{{', '.join(f'p{p}' for p in TANK_PERCENTILES)}}} of the qualified "
        "players' average damage per battle and WN8 on the tank; null below min_players",
        "series[]": "date, players, battles, win_rate, avg_damage: each day of the period someone played it",
        "marks": f"the marks of excellence (GET /tanks/marks; null below tier V or before built): days, from, "
        f"through ({MARKS_WINDOW_DAYS} days), built_at, min_battles, min_players, method, marks {{first, second, "
        "third, top}} (null below min_players), sample {players, battles}, series[] {date, first, second, "
        "third, top}: the thresholds of each day of the tank's series that had them",
    },
)
EXPECTED_SOURCES = ("effective", "table", "computed")  # the tables /expected-values answers
EXPECTED_VALUES = Endpoint(
    name="expected_values",
    path="/expected-values",
    summary="WN8 expected values: the loaded table, the computed one, and how they compare",
    description="The WN8 expected values of a region in the XVM file's format (`data` and `header`: "
    "existing tools read them): `effective` (default), what this service rates the region with (the "
    "loaded public table, with rows computed from the tracked accounts for the tanks it lacks, or "
    "every computed row under --expected-values-source computed); `table`, the loaded table; "
    f"`computed`, every tank refitted by method {EXPECTED_METHOD} (docs/expected-values.md) over the "
    f"last {EXPECTED_WINDOW_DAYS} days of per-tank records. A row is computed from at least "
    f"{EXPECTED_MIN_PLAYERS} players with {EXPECTED_MIN_TANK_BATTLES} battles on the tank and "
    f"{EXPECTED_MIN_ACCOUNT_BATTLES} on their other rated tanks, {EXPECTED_MIN_ROW_BATTLES:,} battles in all; each "
    "computed row carries that sample. The comparison block sets the computed rows against the "
    "loaded table. Computed daily; each version is kept 400 days (`version`). 404 "
    "no_expected_values before the first computed table (or for an unknown version).",
    tag="tanks",
    operation_id="ExpectedValues",
    limit_per_minute=10,
    cache_max_age=3600,
    answer_seconds=HOT_COPY_SECONDS,
    example="/expected-values?region=eu",
    params=(
        REGION_QUERY,
        Param(
            "source",
            "query",
            "string",
            "invalid_source",
            "Which table: effective (what ratings use), table (the loaded one) or computed.",
            enum=EXPECTED_SOURCES,
            default="effective",
        ),
        Param(
            "version",
            "query",
            "string",
            "invalid_version",
            f"A computed table's version (YYYY-MM-DD+{EXPECTED_METHOD}: its window's last day and method); "
            "the newest when absent. The + may be sent as is (a query's + reads as a space, accepted) or as %2B.",
            min_length=14,
            max_length=20,
            pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[+ ]ev[0-9]{1,3}$",
            example=f"2026-11-24+{EXPECTED_METHOD}",
        ),
    ),
    errors=("no_expected_values", "database_unavailable"),
    schema="ExpectedValuesTable",
    fields={
        "region, source": "what was asked for",
        "rating_source": "this deployment's --expected-values-source: table (computed rows fill the "
        "loaded table's gaps) or computed (every computed row used)",
        "version, table_version": "the version of the rows answered (the computed table's when any row "
        "is computed) and of the loaded table",
        "header": "the XVM header: source, version, region, rows (the source asked for)",
        "data[]": "IDNum, expDef, expFrag, expSpot, expDamage, expWinRate (the XVM row), source (table "
        "or computed) and sample {players, battles} behind a computed row (null for a loaded row)",
        "computed": "the computed table (null before the first): version, method, through, window "
        "{from, through, days}, minimums, base (the loaded table's version it was fitted under), "
        "built_at, gaps and every_tank {tanks, passes, converged}",
        "comparison": "computed / loaded for the tanks both have (null without both): computed_version, "
        "table_version, tanks and the median ratio of damage, spot, frag, defence and win_rate; by_tier[] "
        "and by_type[] the same per group; largest_differences[] {tank_id, name, tier, type, statistic "
        "(the one differing most), ratios, players, battles}",
    },
)
STATUS = Endpoint(
    name="status",
    path="/status",
    summary="Service health and cache timestamps",
    description="Service health, database and upstream state, background jobs, cache timestamps.",
    tag="meta",
    operation_id="Status",
    limit_per_minute=60,
    cache_max_age=10,
    answer_seconds=1.0,  # uptime_seconds counts seconds; the database view is reused 2 s anyway
    example="/status",
    schema="Status",
    fields={
        "health": "ok, or degraded when the database is unreachable, a job's last run failed, "
        "rate-counter flushes fail or lag (rate_limiter.degraded), the embedded database is not running, "
        "the database cannot write ('database cannot write: <reason> (since <UTC time>)'), "
        "or it holds 80 % of the per-tank records at which it was measured to keep its read goals, "
        "or (with --backup-dir) no backup succeeded in the last two days",
        "health_reasons": "why health is degraded, one sentence each (empty when ok)",
        "backups": "null without --backup-dir; else directory, keep, count (complete backups there), "
        "last_success {at, name, documents, bytes, seconds} (null before the first), last_failure "
        "{at, name, reason, seconds} (the last failed run, null when none failed) and running "
        "{collection, documents} while this process writes one; health is degraded when no backup "
        "succeeded in two days",
        "volume": "tank_records: per-tank records stored (a kept count)",
        "database": "reachable, ping_ms; writable: false while the database cannot store (a write refused "
        "for a full disk, quota or read-only storage, or on the embedded database under 16 MiB free beside "
        "its 24 MiB reserve); write_error {reason, since (unix)} or null",
        "upstream": "last_success, last_failure, requests, failures; budget: rate_per_second "
        "(configured), processes_sharing, share_per_second, effective_per_second, "
        "requests_last_minute(_by_caller), queued, request_limit_exceeded {count, last}, "
        "live_queue_wait_ms {p50, p99}; expected_values: version, tanks, rows_skipped",
        "jobs.<name>": "last_run, ok, message, last_success, last_failure",
        "caches": "newest_player, newest_clan, newest_online_sample (unix)",
        "version, uptime_seconds, leader, rate_limiter": "process facts",
        "api_version": "the API version of the paths (/api/<api_version>)",
        "tracker": "enabled, track_days, slices, tracked (accounts now), today {day, visited, total, "
        "slices_finished, eta_seconds, requests {account_info, tanks_stats}, records, record_bytes}, "
        "this_process {slices_claimed, spent_today}",
        "embedded_database": "null on MongoDB; else the supervised SecantusDB child: state, restarts, "
        "restart_attempts, last_restart, last_exit {at, code}",
        "connections": "this process's client connections: open, max, max_per_client, waiting_for_head, "
        "refused, shed_idle, head_timeouts, heads_too_large, accept_pauses",
        "online_sampler": "per game/region: last_success, last_failure (unix)",
        "answer_cache": "this process's rendered answers: entries, bytes, max_bytes, hits, misses, "
        f"hit_rate, evictions, dropped_on_write (an answer is replayed at most {HOT_COPY_SECONDS:g} s, "
        "1 s for /status, and dropped when this process writes its data)",
    },
    needs_database=False,  # it reports the database's state instead of failing with it
)
OPENAPI = Endpoint(
    name="openapi",
    path="/openapi.json",
    summary="This OpenAPI 3.1 document",
    description="The OpenAPI 3.1 document of this API.",
    tag="meta",
    operation_id="OpenAPIDocument",
    limit_per_minute=120,
    cache_max_age=300,
    example="/openapi.json",
    needs_database=False,
)

TANK_MARKS = Endpoint(
    name="tank_marks",
    path="/tanks/marks",
    summary="Marks of excellence: the combined damage each tank's 1st, 2nd and 3rd mark takes",
    description="Every tank of tier V and up that the tracked accounts of a region played in the last "
    f"{MARKS_WINDOW_DAYS} days, with the combined damage per battle (damage plus the largest assistance) "
    "that puts a player above 65, 85 and 95 % of its players (the 1st, 2nd and 3rd mark) and the top, "
    f"each with its sample, and how each moved over the last {' and '.join(map(str, MARKS_CHANGE_DAYS))} "
    "days. An estimate from daily totals over the tracked accounts, not the game's per-battle moving "
    f"average over the whole server: how far apart they can be is in {MARKS_METHOD}. Built daily with the "
    "tank statistics, without any request to the game API. Filter, sort and page as /tanks/stats. "
    "404 no_statistics until the first build.",
    tag="tanks",
    operation_id="TankMarks",
    limit_per_minute=30,
    cache_max_age=300,
    answer_seconds=HOT_COPY_SECONDS,
    example="/tanks/marks?region=eu&tier=10",
    params=(
        REGION_QUERY,
        *TANK_FILTERS,
        Param(
            "sort",
            "query",
            "string",
            "invalid_sort",
            "The figure to sort by (nulls last): a mark's threshold, the sample, or the tank.",
            enum=MARKS_SORTS,
            default="third",
        ),
        *TANK_PAGING,
    ),
    errors=("no_statistics", "database_unavailable"),
    schema="TankMarks",
    fields={
        "region, days, from, through": f"the region and the window: {MARKS_WINDOW}",
        "built_at": "unix time the thresholds were built",
        "population": "who the figures are about: the tracked accounts, not a random sample of the server",
        "min_battles, min_players": f"a player's battles on the tank to count ({MARKS_MIN_BATTLES}); players "
        f"behind non-null thresholds ({MARKS_MIN_PLAYERS})",
        "method": "where the estimate and its bias are explained",
        "sort, order, total, offset, limit": "the order asked for, how many tanks match the filters, the page",
        "tanks[]": "tank_id, name, tier, type, nation, marks {first, second, third, top} "
        f"({MARK_THRESHOLDS}; null below min_players), sample {{players, battles}} (the counted players and their battles on "
        "the tank in the window), "
        + ", ".join(f"change_{d}d" for d in MARKS_CHANGE_DAYS)
        + " {first, second, third, top}: each threshold now minus its value that many days before (null "
        "when either is)",
    },
)
# In the order the index and the OpenAPI document list them.
CATALOGUE: tuple[Endpoint, ...] = (
    INDEX,
    PLAYER,
    HISTORY,
    TANKS,
    PLAYER_SEARCH,
    TANK_STATS,
    TANK,
    TANK_MARKS,
    EXPECTED_VALUES,
    CLAN,
    WEEKLY,
    ONLINE,
    ONLINE_HISTORY,
    STATUS,
    OPENAPI,
)
BY_NAME: Mapping[str, Endpoint] = {endpoint.name: endpoint for endpoint in CATALOGUE}


def bucket_limits() -> dict[str, int]:
    """Requests per minute per client, by rate-limit bucket (before any scaling)."""
    return {endpoint.bucket: endpoint.limit_per_minute for endpoint in CATALOGUE}
