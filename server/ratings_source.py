"""Where ratings get their inputs: the expected-values table and vehicle tiers, kept fresh."""
from __future__ import annotations

import asyncio
import logging
import time

from server import ratings as rating_maths

log = logging.getLogger("statsapi.ratings")

XVM_URL = "https://static.modxvm.com/wn8-data-exp/json/wn8exp.json"
REFRESH_SECONDS = 86400


class RatingsSource:
    def __init__(self, upstream, location: str | None, clock=time.time):
        self.upstream = upstream
        self.location = location or XVM_URL
        self.clock = clock
        self._expected: rating_maths.ExpectedValues | None = None
        self._expected_at = 0.0
        self._tiers: dict[str, tuple[float, dict[int, int]]] = {}
        self._lock = asyncio.Lock()

    async def expected_values(self) -> rating_maths.ExpectedValues | None:
        if self._expected is None:
            try:
                await self.refresh_expected()
            except Exception as exc:
                log.warning("expected values unavailable: %s", exc)
        return self._expected

    async def refresh_expected(self, slot: int | None = None) -> str:
        """Reload the table (daily job); a failed reload keeps the previous table."""
        async with self._lock:
            if self.location.startswith(("http://", "https://")):
                raw = await self.upstream.fetch_json_url(self.location)
            else:
                raw = await asyncio.get_running_loop().run_in_executor(None, _read, self.location)
            self._expected = rating_maths.parse_expected_values(raw)
            self._expected_at = self.clock()
        return f"expected values {self._expected.version} ({len(self._expected)} tanks)"

    async def tiers(self, region: str) -> dict[int, int]:
        cached = self._tiers.get(region)
        if cached and cached[0] > self.clock() - REFRESH_SECONDS:
            return cached[1]
        try:
            vehicles = await self.upstream.vehicles(region)
            tiers = {int(tank_id): int(v["tier"]) for tank_id, v in vehicles.items() if v and v.get("tier")}
            self._tiers[region] = (self.clock(), tiers)
            return tiers
        except Exception as exc:
            log.warning("vehicle tiers unavailable for %s: %s", region, type(exc).__name__)
            return cached[1] if cached else {}


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()
