"""The session endpoint: a player's battles since a moment, from the states the watcher measures."""

from __future__ import annotations

from server.contract.catalogue.figures import (
    ASSIST_GUIDE,
    DEMO_ACCOUNT,
    MAX_DAYS,
    NOT_AS_OLD,
    NOT_MEASURED,
    PLAYED_BEFORE_MEASURED,
    SESSION_FIGURES,
    SESSION_LIMIT_PER_MINUTE,
    STREAM_HEARTBEAT_SECONDS,
    STREAM_LIMIT_PER_MINUTE,
    STREAM_POLL_SECONDS,
    STREAMS_PER_CLIENT,
    STREAMS_PER_PROCESS,
    WATCH_REFRESH_SECONDS,
    WATCH_SECONDS,
    WATCH_TICK_SECONDS,
    WATCHED_PER_CLIENT,
    WATCHED_PER_REGION,
)
from server.contract.catalogue.history import SCHEMAS as HISTORY_SCHEMAS
from server.contract.catalogue.model import Endpoint, Param, duration
from server.contract.catalogue.params import ACCOUNT_ID, REGION
from server.contract.catalogue.shapes import (
    ACCOUNT,
    DATE,
    NULLABLE_UNIX,
    PERIOD_FIGURES,
    UNIX,
    array,
    obj,
)

SINCE = Param(
    "since",
    "query",
    "string",
    "invalid_since",
    "The moment the session starts: a unix time (seconds, UTC) or `today` (the start of the current UTC "
    f"day); not in the future, nor more than {MAX_DAYS} days ago (the records kept).",
    min_length=1,
    max_length=10,
    pattern="^(today|[0-9]{1,10})$",
    default="today",
)

SESSION = Endpoint(
    name="session",
    path="/player/{account_id}/{region}/session",
    summary="A player's session: the battles since a moment (stream start, today), measured every minute",
    description="The battles played since `since`: battles, wins, damage, frags, spotting, combined damage, "
    "WN8, WN7 and efficiency over the per-tank differences, and a row per tank played. The session runs from "
    "the account's state at `since` to the newest state (`as_of`), and never counts a battle that ended "
    "before `since`. The state at `since` is the newest stored state at or before it when the account has "
    "not played between them, else the first measurement after it whose last battle is still before it (the "
    "watch's first, or one taken at the request: a request that finds none measures the account at once). "
    "When no such state can be had (the account played after `since` before it was measured, the "
    "upstream failing, the caps), the session starts at the newest stored state at or before `since` (or the "
    "oldest, when none is that old) and says so: `from_exact` false and `from_reason`. A request watches the "
    "account for "
    f"{duration(WATCH_SECONDS)}: it is measured at once, then once a round, whoever asks: rounds start "
    f"every {WATCH_REFRESH_SECONDS} s on the clock, and an account joins the first round at least "
    f"{WATCH_REFRESH_SECONDS - WATCH_TICK_SECONDS} s after its last measurement (account/info for the round's "
    "accounts in batches, tanks/stats only after a battle), so `as_of` follows the battles within about a "
    f"minute (two for the first after the watch began). At most {WATCHED_PER_REGION:,} accounts are "
    f"watched per region and {WATCHED_PER_CLIENT} per client (past either, the session is answered from the "
    "stored states with watching false). An account the service holds no state of is fetched live, under "
    "the live-lookup limits, and its session starts from that measurement. A watch's first measurement asks "
    "tanks/stats only when the account played since the service last measured it.",
    tag="players",
    operation_id="PlayerSession",
    limit_per_minute=SESSION_LIMIT_PER_MINUTE,
    cache_max_age=15,
    example=f"/player/{DEMO_ACCOUNT}/eu/session?since=today",
    params=(ACCOUNT_ID, REGION, SINCE),
    errors=(
        "player_not_found",
        "no_history",
        "rate_limited_global",
        "database_unavailable",
        "upstream_unavailable",
    ),
    schema="PlayerSession",
    card="session",
    live_lookups=True,
    fields={
        "account_id, region, since": "the account and the moment asked for (unix)",
        "from, from_source, from_day": "the state the session starts from: its time (unix; for a daily record "
        "the end of its day, the latest its measurement can be), daily (the tracker's record of from_day) or "
        "watch (captured while the account was watched), and the record's day (null for a capture)",
        "from_exact, from_reason": "whether `from` is the account's state at `since` (no battle before `since` "
        "is counted), and when it is not, why (null when it is): no state as old as since; the account played "
        "after since before it was measured; not measured since since",
        "as_of, as_of_source": "the newest state's time and where it comes from (daily or watch)",
        "watching, watching_until": "whether the watcher measures the account (false past the caps) and until "
        "when (unix)",
        "battles, wins, win_rate, avg_damage, avg_frags, avg_spotted, avg_xp, survival_rate, wn8, wn7, "
        "efficiency": "the session's figures over the per-tank differences (nulls without a battle)",
        "average_tier, expected_values, avg_assist_radio, avg_assist_track, avg_assist_stun, avg_combined_damage, "
        "damage_ratio": "the battle-weighted tier, which expected-values rows rated the session (as in the "
        f"profile's ratings), and {ASSIST_GUIDE}",
        "tanks[]": "a row per tank played in the session: tank_id, name, tier, type, nation, battles, wins, "
        "win_rate, avg_damage, avg_frags, wn8",
    },
)

SESSION_STREAM = Endpoint(
    name="session_stream",
    path="/player/{account_id}/{region}/session/stream",
    summary="A player's session pushed as it changes (Server-Sent Events)",
    description="The session of /player/{account_id}/{region}/session as a `text/event-stream`: an event "
    "`session` (its data the session's JSON, its id the newest state's time and battles) at once and after "
    f"each new state (looked for every {STREAM_POLL_SECONDS} s), a comment line at most "
    f"{STREAM_HEARTBEAT_SECONDS} s after the last line (at a random moment of the last quarter, so streams "
    "opened together do not all write at once), and an event `end` when the server shuts down (reconnect). "
    "A reconnecting client's `Last-Event-ID` equal to the newest id skips the first event. The stream keeps "
    f"the account watched while it is open. At most {STREAMS_PER_CLIENT} streams per client (429 "
    f"too_many_streams) and {STREAMS_PER_PROCESS:,} per server process (503 streams_full). A bad parameter "
    "or an account without any state answers the JSON error envelope before any event.",
    tag="players",
    operation_id="PlayerSessionStream",
    limit_per_minute=STREAM_LIMIT_PER_MINUTE,
    cache_max_age=0,
    example=f"/player/{DEMO_ACCOUNT}/eu/session/stream?since=today",
    params=(ACCOUNT_ID, REGION, SINCE),
    errors=(
        "player_not_found",
        "no_history",
        "too_many_streams",
        "rate_limited_global",
        "database_unavailable",
        "streams_full",
        "upstream_unavailable",
    ),
    schema=None,
    media_type="text/event-stream",
    live_lookups=True,
)
# A session's tank rows: the tanks endpoint's, without its population standing and marks.
TANK_ROW = HISTORY_SCHEMAS["PlayerTanks"]["properties"]["tanks"]["items"]
SESSION_ROW = obj({k: v for k, v in TANK_ROW["properties"].items() if k not in ("standing", "marks", "mastery")})

# The `data` schemas of this module's endpoints (components/schemas), by their `schema` names.
SCHEMAS: dict[str, dict] = {
    "PlayerSession": obj(
        {
            **ACCOUNT,
            "since": UNIX,
            "from": UNIX,
            "from_source": {"type": "string", "enum": ["daily", "watch"]},
            "from_day": {"oneOf": [DATE, {"type": "null"}]},
            "from_exact": {"type": "boolean"},
            "from_reason": {
                "oneOf": [
                    {"type": "string", "enum": [NOT_AS_OLD, PLAYED_BEFORE_MEASURED, NOT_MEASURED]},
                    {"type": "null"},
                ]
            },
            "as_of": UNIX,
            "as_of_source": {"type": "string", "enum": ["daily", "watch"]},
            "watching": {"type": "boolean"},
            "watching_until": NULLABLE_UNIX,
            **{key: PERIOD_FIGURES["properties"][key] for key in SESSION_FIGURES},
            "tanks": array(SESSION_ROW, description="The tanks played in the session, most battles first."),
        }
    )
}

# This module's endpoints in the order the index and the OpenAPI document list them
# (server/contract/catalogue/__init__.py CATALOGUE).
ENDPOINTS: tuple[Endpoint, ...] = (
    SESSION,
    SESSION_STREAM,
)
