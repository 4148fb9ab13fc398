"""The player profile endpoint: an account's career statistics and ratings."""

from __future__ import annotations

from server.contract.catalogue.figures import (
    DEMO_ACCOUNT,
    HOT_COPY_SECONDS,
    POPULATION_PERIODS,
    PROFILE_MAX_AGE,
    STANDING_MIN_BATTLES,
    STANDING_PANEL_MIN_PLAYERS,
    WN8_COLOURS,
    WN8_TOP_COLOUR,
    WTR_REASONS,
)
from server.contract.catalogue.model import Endpoint, hours
from server.contract.catalogue.params import ACCOUNT_ID, REGION
from server.contract.catalogue.shapes import (
    ACCOUNT,
    EXPECTED_USE,
    NULLABLE_UNIX,
    NUMBER_OR_NULL,
    PLACE,
    UNIX,
    nullable,
    obj,
    ref,
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
    card="player",
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
        f"wn8_percentile: the share (0-99 %) of the realm's active players (its random panel's members, that "
        f"played in the last 30 days, with at least {STANDING_MIN_BATTLES} career battles: once "
        f"{STANDING_PANEL_MIN_PLAYERS:,} such members stand behind it), else of the region's tracked accounts "
        f"that played in the last {max(POPULATION_PERIODS)} days with as many, whose career WN8 is lower "
        f"(null below {STANDING_MIN_BATTLES} battles or before the tank statistics are built); "
        "wn8_percentile_population {kind: panel | tracked, players (how many stand behind it), description "
        "(a sentence naming them)}: whom wn8_percentile is among (null with it); place {days: career, by: wn8, rank, ranked, "
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
# The labels of the WN8 colour scale, in order, as server.domain.ratings.wn8_color gives them.
WN8_COLOUR_LABELS = [label for _, label in WN8_COLOURS] + [WN8_TOP_COLOUR]

# The `data` schemas of this module's endpoints (components/schemas), by their `schema` names.
SCHEMAS: dict[str, dict] = {
    "PlayerStatistics": obj(
        {
            "battles": {"type": "integer", "minimum": 0},
            "wins": {"type": "integer", "minimum": 0},
            "losses": {"type": "integer", "minimum": 0},
            "draws": {"type": "integer", "minimum": 0},
            "win_rate": nullable("number", description="Percent, two decimals; null without battles."),
            "avg_damage": nullable("number", description="Damage dealt per battle."),
            "avg_frags": nullable("number", description="Vehicles destroyed per battle."),
            "avg_spotted": nullable("number", description="Vehicles spotted per battle."),
            "avg_defence": nullable("number", description="Base capture points reset per battle."),
            "avg_capture": nullable("number", description="Base capture points per battle."),
            "avg_xp": nullable("number", description="Experience per battle."),
            "survival_rate": nullable("number", description="Percent of battles survived."),
            "hit_rate": nullable("number", description="Percent of shots that hit; null without shots."),
            "average_tier": nullable(
                "number", description="Battle-weighted average vehicle tier; null until ratings are calculated."
            ),
        },
        description="Career totals (random battles) and per-battle averages.",
    ),
    "PlayerRatings": obj(
        {
            "available": {
                "type": "boolean",
                "description": "False when the profile was just fetched live: the ratings follow seconds later.",
            },
            "wn8": NUMBER_OR_NULL,
            "wn8_color": {
                "type": ["string", "null"],
                "enum": WN8_COLOUR_LABELS + [None],
                "description": "Label of the usual WN8 colour scale.",
            },
            "wn7": NUMBER_OR_NULL,
            "efficiency": NUMBER_OR_NULL,
            "calculated_at": NULLABLE_UNIX,
            "expected_values_version": nullable(
                "string", description="Version (date) of the XVM expected-values table WN8 was computed with."
            ),
            "expected_values": EXPECTED_USE,
            "wn8_percentile": nullable(
                "integer",
                minimum=0,
                maximum=99,
                description="Share (%) of the realm's active players (its random panel) or of its tracked "
                "accounts (wn8_percentile_population says which) with a lower career WN8.",
            ),
            "wn8_percentile_population": {
                "oneOf": [
                    obj(
                        {
                            "kind": {"type": "string", "enum": ["panel", "tracked"]},
                            "players": {"type": "integer", "minimum": 0},
                            "description": {"type": "string"},
                        }
                    ),
                    {"type": "null"},
                ],
                "description": "Whom wn8_percentile is among: the random panel's active players or the "
                "tracked accounts, how many, and a sentence naming them; null with wn8_percentile.",
            },
            "wtr": nullable(
                "integer",
                description="Wargaming's own personal rating (WTR, wot/account/wtr, random battles), as "
                "measured with the profile; null with wtr_reason.",
            ),
            "wtr_reason": {
                "type": ["string", "null"],
                "enum": [*WTR_REASONS, None],
                "description": "Why wtr is null: no_rating (Wargaming has none: too few random battles), "
                "upstream_failed (the request failed; the profile did not), not_fetched (not asked yet: a "
                "live lookup's first answer); null when wtr is known.",
            },
            "global_rating": nullable(
                "integer", description="Wargaming's personal rating as account/info gives it (global_rating)."
            ),
            "place": {
                "oneOf": [
                    obj(
                        {
                            "days": {"type": "string", "enum": ["career"]},
                            "by": {"type": "string", "enum": ["wn8"]},
                            **PLACE,
                            "min_battles": {"type": "integer", "minimum": 1},
                        }
                    ),
                    {"type": "null"},
                ],
                "description": "The account's place on the region's career WN8 leaderboard "
                "(GET /leaderboard/players?days=career); null when it is not ranked there.",
            },
        }
    ),
    "PlayerProfile": obj(
        {
            **ACCOUNT,
            "nickname": nullable("string"),
            "clan_id": nullable("integer", description="Clan of the player, null when none."),
            "created_at": NULLABLE_UNIX,
            "last_battle_time": NULLABLE_UNIX,
            "updated_at": NULLABLE_UNIX,
            "statistics": ref("schemas", "PlayerStatistics"),
            "ratings": ref("schemas", "PlayerRatings"),
            "cached_at": {**UNIX, "description": "When the profile was stored (at most about one hour ago)."},
            "live_fetched": {
                "type": "boolean",
                "description": "True when the profile was not cached and was fetched live from the game API just now.",
            },
        }
    ),
}

# This module's endpoints in the order the index and the OpenAPI document list them
# (server/contract/catalogue/__init__.py CATALOGUE).
ENDPOINTS: tuple[Endpoint, ...] = (PLAYER,)
