"""Regions and games: the domain's fixed vocabulary, defined once in the lowest layer every layer may import."""

from __future__ import annotations

REGIONS = ("eu", "na", "asia")
HISTORY_DAYS = 400  # the longest history any endpoint serves (SPEC 8.3); every day of it stays rebuildable
GAMES = ("wot", "wotb", "wows")  # as the upstream's servers endpoint names them
# The counters kept per tank and per account (the upstream's tanks/stats `all` and account/info
# `statistics.all` names), in the order per-tank states are packed (store/tanks.py).
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
)
# What each (day, slice) claim of the daily pass counts (collection tracker_slices, /status tracker).
SPEND_KEYS = ("visited", "info_requests", "tanks_requests", "records", "record_bytes", "keyframes")
