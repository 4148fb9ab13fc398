"""The tracker as players, clans and sessions reach it: a small Protocol, so none imports the daily pass."""

from __future__ import annotations

from typing import Protocol


class Tracking(Protocol):
    """What a lookup or a clan refresh tells the tracker, and what a session waits for (server.services.tracker.Tracker)."""

    async def looked_up(self, region: str, account_id: int, now: float) -> None:
        """A cached profile was read: keep measuring the account daily for a while from now."""

    def adopt_later(self, region: str, account_id: int, info: dict, raw_tanks: list | None, now: float) -> None:
        """A live lookup fetched the account: track it, and let that fetch be today's visit (in the
        background, beside the lookup's answer)."""

    async def adopted(self, region: str, account_id: int) -> None:
        """Returns once the adoption a live lookup of the account began has written (bounded wait)."""

    async def track_members(self, region: str, members: list[tuple[int, str | None]], now: float) -> None:
        """Members of a cached clan the clan refresh just fetched."""
