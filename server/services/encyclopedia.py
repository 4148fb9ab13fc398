"""The vehicle catalogue of each region: the daily encyclopedia fetch, stored, and the stored one when a fetch fails."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from store.client import request_deadline

if TYPE_CHECKING:
    from store.store import Store

log = logging.getLogger("statsapi.vehicles")

ICON_KEYS = ("small_icon", "contour_icon", "big_icon")
STORED_RECHECK_SECONDS = 60  # a process without a fetch of its own reads the stored catalogue this often


class CatalogueSource(Protocol):
    """Where the encyclopedia comes from (server.upstream.expected_values.RatingsSource)."""

    async def catalogue(self, region: str) -> tuple[float, dict[int, dict]] | None: ...


class VehicleCatalogue:
    """A region's encyclopedia: the daily fetch (shared with the ratings' tiers, no request of its
    own), stored once per fetch, and the stored one when this process has no fetch (the upstream
    failed since start): a failed refresh keeps the last good catalogue, with its date."""

    def __init__(self, store: Store, source: CatalogueSource, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.source = source
        self.clock = clock
        self._saved: dict[str, float] = {}  # region -> fetched_at of the catalogue stored
        self._stored: dict[str, tuple[float, tuple[float, dict[int, dict]] | None]] = {}  # read at, found

    async def records(self, region: str) -> tuple[float, dict[int, dict]] | None:
        """(fetched_at, {tank_id: record}), None when no catalogue was ever fetched."""
        fetched = await self.source.catalogue(region)
        if fetched is not None:
            if self._saved.get(region) != fetched[0]:
                await self._save(region, fetched)
            return fetched
        kept = self._stored.get(region)
        now = time.monotonic()
        if kept is not None and now - kept[0] < STORED_RECHECK_SECONDS:
            return kept[1]
        async with request_deadline():
            found = await self.store.vehicles.get(region)
        self._stored[region] = (now, found)
        return found

    async def _save(self, region: str, fetched: tuple[float, dict[int, dict]]) -> None:
        try:
            async with request_deadline():
                await self.store.vehicles.save(region, fetched[0], fetched[1])
        except Exception as exc:  # the answer stands on the fetch; the next request stores it
            log.warning("vehicle catalogue of %s not stored: %s", region, type(exc).__name__)
            return
        self._saved[region] = fetched[0]


def catalogue_fields(record: Mapping[str, Any] | None) -> dict[str, Any]:
    """The encyclopedia's fields beyond name, tier, type and nation, as a tank page and /vehicles
    carry them (null, with in_encyclopedia false, for a tank the encyclopedia lacks)."""
    facts = record or {}
    images = facts.get("images")
    return {
        **{key: facts.get(key) for key in ("short_name", "tag", "is_premium", "is_gift", "is_wheeled")},
        "images": {key: images.get(key) for key in ICON_KEYS} if isinstance(images, Mapping) else None,
        "in_encyclopedia": record is not None,
    }
