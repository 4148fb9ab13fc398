"""Regions and games: the domain's fixed vocabulary, defined once in the lowest layer every layer may import."""

from __future__ import annotations

REGIONS = ("eu", "na", "asia")
GAMES = ("wot", "wotb", "wows")  # as the upstream's servers endpoint names them
