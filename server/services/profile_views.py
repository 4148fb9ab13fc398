"""A stored profile as /player and /players show it: the one place that composes its view from the
services it needs (the tank statistics for its WN8 standing, the leaderboards for its career place)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.domain.profiles import profile_view

if TYPE_CHECKING:  # types only
    from server.services.leaderboards import LeaderboardService
    from server.services.tank_stats import TankStatsService


class ProfileViews:
    """Composes a cached profile's view; without a service (partial builds) its figure is left out."""

    def __init__(
        self, tank_stats: TankStatsService | None = None, leaderboards: LeaderboardService | None = None
    ) -> None:
        self.tank_stats = tank_stats  # the population tables a profile's standing is read from
        self.leaderboards = leaderboards  # the profile's place on the career WN8 leaderboard

    async def of(self, doc: dict) -> dict:
        """A stored profile as /player shows it: with its WN8 standing and career place."""
        view = profile_view(doc, live_fetched=False)
        region, account_id = doc["region"], doc["account_id"]
        if view["ratings"]["available"] and self.tank_stats is not None:
            (
                view["ratings"]["wn8_percentile"],
                view["ratings"]["wn8_percentile_population"],
            ) = await self.tank_stats.career_standing(region, view["ratings"]["wn8"], view["statistics"]["battles"])
        if view["ratings"]["available"] and self.leaderboards is not None:
            career = (await self.leaderboards.places(region, account_id)).get("career")
            view["ratings"]["place"] = {"days": "career", "by": "wn8", **career} if career else None
        return view
