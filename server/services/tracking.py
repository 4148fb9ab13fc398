"""The tracker as players and clans reach it: a small Protocol, so neither imports the daily pass."""

from __future__ import annotations

from typing import Protocol


class Tracking(Protocol):
    """What a lookup or a clan refresh tells the tracker (server.services.tracker.Tracker)."""

    async def looked_up(self, region: str, account_id: int, now: float) -> None:
        """A cached profile was read: keep measuring the account daily for a while from now."""

    async def adopt(self, region: str, account_id: int, info: dict, raw_tanks: list | None, now: float) -> None:
        """A live lookup fetched the account: track it, and let that fetch be today's visit."""

    async def track_members(self, region: str, members: list[tuple[int, str | None]], now: float) -> None:
        """Members of a cached clan the clan refresh just fetched."""
