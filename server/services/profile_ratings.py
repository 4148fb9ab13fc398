"""A profile's ratings from its region's expected values: the one composition the player and clan
services share (a live or refreshed profile, a clan member rated by the clan refresh)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from server.domain import ratings as rating_maths

if TYPE_CHECKING:  # types only
    from server.services.expected import Ratings


class ProfileRatings:
    """WN8, WN7 and efficiency of a built profile (server.domain.profiles.build_profile)."""

    def __init__(self, source: Ratings, clock: Callable[[], float] = time.time) -> None:
        self.source = source
        self.clock = clock

    async def of(self, doc: dict, now: float | None = None) -> dict | None:
        """The profile's ratings, calculated at `now` (the clock's time when None); None while its
        region has no expected values."""
        expected = await self.source.expected_values(doc["region"])
        tiers = await self.source.tiers(doc["region"])
        if expected is None:
            return None
        ratings = rating_maths.compute_ratings(doc["totals"], doc["tanks"], expected, tiers)
        ratings["calculated_at"] = int(self.clock() if now is None else now)
        return ratings
