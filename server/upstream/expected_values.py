"""Where ratings get their inputs: the expected-values table and vehicle tiers, kept fresh."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from server.domain import ratings as rating_maths
from server.upstream.client import VEHICLE_FIELDS
from server.upstream.interface import Upstream

log = logging.getLogger("statsapi.ratings")

XVM_URL = "https://static.modxvm.com/wn8-data-exp/json/wn8exp.json"
REFRESH_SECONDS = 86400
TIERS_RETRY_SECONDS = 60  # after a failed vehicle fetch, callers use what they have for this long


class RatingsSource:
    def __init__(self, upstream: Upstream, location: str | None, clock: Callable[[], float] = time.time) -> None:
        self.upstream = upstream
        self.location = location or XVM_URL
        self.clock = clock
        self._expected: rating_maths.ExpectedValues | None = None
        self._loaded_at: float | None = None
        self._last_error: str | None = None
        self._tiers: dict[str, tuple[float, dict[int, int]]] = {}
        self._vehicles: dict[str, dict[int, dict]] = {}  # region -> tank_id -> name, tier, type, nation
        self._tiers_failed: dict[str, float] = {}
        self._tiers_fetching: dict[str, asyncio.Future] = {}
        self._lock = asyncio.Lock()

    async def expected_values(self, region: str | None = None) -> rating_maths.ExpectedValues | None:
        """The loaded table (the same for every region; server.services.expected adds computed rows)."""
        if self._expected is None:
            try:
                await self.refresh_expected()
            except Exception as exc:
                log.warning("expected values unavailable: %s", exc)
        return self._expected

    async def refresh_expected(self, slot: int | None = None) -> str:
        """Reload the table (daily job); a failed reload keeps the previous table."""
        async with self._lock:
            try:
                if self.location.startswith(("http://", "https://")):
                    raw = await self.upstream.fetch_json_url(self.location, caller="reference")
                else:
                    raw = await asyncio.get_running_loop().run_in_executor(None, _read, self.location)
                table = rating_maths.parse_expected_values(raw)
            except Exception as exc:
                self._last_error = str(exc)[:200]
                raise
            self._expected, self._loaded_at, self._last_error = table, self.clock(), None
        if table.rows_skipped:
            log.warning(
                "expected values %s: %d malformed row(s) skipped, e.g. %s",
                table.version,
                table.rows_skipped,
                table.skip_reasons[0],
            )
        return f"expected values {table.version} ({len(table)} tanks" + (
            f", {table.rows_skipped} rows skipped)" if table.rows_skipped else ")"
        )

    def status(self) -> dict:
        table = self._expected
        return {
            "version": table.version if table else None,
            "tanks": len(table) if table else 0,
            "rows_skipped": table.rows_skipped if table else 0,
            "loaded_at": self._loaded_at,
            "last_error": self._last_error,
        }

    async def tiers(self, region: str) -> dict[int, int]:
        """Vehicle tiers of a region, refreshed daily; concurrent callers share one fetch."""
        cached = self._tiers.get(region)
        now = self.clock()
        if cached and cached[0] > now - REFRESH_SECONDS:
            return cached[1]
        if cached is None and self._tiers_failed.get(region, -1e18) > now - TIERS_RETRY_SECONDS:
            return {}
        pending = self._tiers_fetching.get(region)
        if pending is None:
            pending = asyncio.ensure_future(self._fetch_tiers(region))
            self._tiers_fetching[region] = pending
            pending.add_done_callback(lambda _: self._tiers_fetching.pop(region, None))
        return await asyncio.shield(pending)

    async def vehicles(self, region: str) -> dict[int, dict]:
        """Encyclopedia facts (name, tier, type, nation) by tank_id, from the same daily fetch as
        the tiers; empty until it has succeeded once."""
        await self.tiers(region)
        return self._vehicles.get(region, {})

    async def _fetch_tiers(self, region: str) -> dict[int, int]:
        cached = self._tiers.get(region)
        try:
            vehicles = await self.upstream.vehicles(region, fields=VEHICLE_FIELDS, caller="reference")
            tiers = {int(tank_id): int(v["tier"]) for tank_id, v in vehicles.items() if v and v.get("tier")}
            self._vehicles[region] = {
                int(tank_id): {key: v.get(key) for key in ("name", "tier", "type", "nation")}
                for tank_id, v in vehicles.items()
                if v
            }
            self._tiers[region] = (self.clock(), tiers)
            return tiers
        except Exception as exc:
            log.warning("vehicle tiers unavailable for %s: %s", region, type(exc).__name__)
            self._tiers_failed[region] = self.clock()
            return cached[1] if cached else {}


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()
