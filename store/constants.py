"""Regions and games: the domain's fixed vocabulary, defined once in the lowest layer every layer may import."""

from __future__ import annotations

REGIONS = ("eu", "na", "asia")
HISTORY_DAYS = 400  # the longest history any endpoint serves (SPEC 8.3); every day of it stays rebuildable
GAMES = ("wot", "wotb", "wows")  # as the upstream's servers endpoint names them


def region_key(region: str, number: int) -> str:
    """The `_id` of an account's or a clan's document: "region:number"."""
    return f"{region}:{number}"


# The counters kept per tank and per account (the upstream's tanks/stats `all` and account/info
# `statistics.all` names), in the order per-tank states are packed (store/tanks.py). New counters
# are only ever appended: a row written before one existed is LEGACY_WIDTH (or another earlier
# width) long, and a shorter row means "not known then", never zero (docs/data.md).
TANK_COUNTERS = (
    "battles",
    "wins",
    "losses",
    "draws",
    "damage_dealt",
    "frags",
    "spotted",
    "dropped_capture_points",
    "capture_points",
    "xp",
    "survived_battles",
    "shots",
    "hits",
    # Since release 1.3.0 (the marks of excellence): rows written before are LEGACY_WIDTH long.
    "damage_received",
    "stun_assisted_damage",
)
LEGACY_WIDTH = 13  # the counters per tank of every row written before release 1.3.0
# The account-level assistance the tracker keeps beside each account-day's per-tank record
# (store/tanks.py `s`): account/info gives spotting and tracking assistance only per account and
# only as averages (statistics.all.avg_damage_assisted_radio / _track; tanks/stats has neither),
# kept as [battles, radio total, track total] with each total = round(average x battles).
ACCOUNT_ASSIST = ("battles", "radio_assisted_damage", "track_assisted_damage")
# What each (day, slice) claim of the daily pass counts (collection tracker_slices, /status tracker).
SPEND_KEYS = ("visited", "info_requests", "tanks_requests", "wtr_requests", "records", "record_bytes", "keyframes")
# The share of its time an online backup works, resting the rest (store/backup.py `_yield`;
# --backup-duty): low priority, so cached reads keep their p99 while it runs (docs/benchmarks.md).
BACKUP_DUTY = 0.1

POPULATIONS = ("panel", "tracked")  # who a server-wide table is over: the random panel, or the tracked accounts
