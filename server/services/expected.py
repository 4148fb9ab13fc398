"""The expected values ratings use: the loaded table, with each region's computed rows where it lacks them."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from server.contract.errors import APIError
from server.domain.expected import comparison, computed_rows
from server.domain.ratings import ExpectedValues, TankExpectation, xvm_row
from store.client import request_deadline

if TYPE_CHECKING:
    from server.upstream.expected_values import RatingsSource
    from store.store import Store

log = logging.getLogger("statsapi.expected")

# --expected-values-source: "table" rates with the loaded table and fills its gaps with computed
# rows; "computed" rates every tank that has a computed row with it.
SOURCES = ("table", "computed")
CHECK_SECONDS = 300  # how often a process asks whether a region has a newer computed table


class Ratings(Protocol):
    """What the services rate with (RatingsSource, or ExpectedValuesService over it)."""

    async def expected_values(self, region: str | None = None) -> ExpectedValues | None: ...

    async def tiers(self, region: str) -> dict[int, int]: ...

    async def vehicles(self, region: str) -> dict[int, dict]: ...


class ExpectedValuesService:
    """The ratings' inputs for a region: the loaded table (RatingsSource) merged with the region's
    newest computed table (store.expected.ExpectedTables, built by the tank statistics job). A
    process keeps each region's merged table and looks for a newer computed one every
    CHECK_SECONDS (one point read); a failed look keeps what it has."""

    def __init__(
        self, store: Store, ratings_source: RatingsSource, source: str = "table", clock: Callable[[], float] = time.time
    ) -> None:
        assert source in SOURCES, source
        self.store = store
        self.loaded_source = ratings_source  # the loaded (public) table and the vehicle facts
        self.source = source
        self.clock = clock
        # region -> (checked at (monotonic), computed version, loaded table, merged table)
        self._merged: dict[str, tuple[float, str | None, ExpectedValues, ExpectedValues]] = {}
        self._flights: dict[str, asyncio.Future] = {}

    # --- the RatingsSource interface the services use -------------------------------------
    async def expected_values(self, region: str | None = None) -> ExpectedValues | None:
        """The table ratings of `region` use; the loaded table alone without a region."""
        loaded = await self.loaded_source.expected_values()
        if loaded is None or region is None:
            return loaded
        kept = self._merged.get(region)
        if kept is not None and kept[2] is loaded and time.monotonic() - kept[0] < CHECK_SECONDS:
            return kept[3]
        flight = self._flights.get(region)
        if flight is None:
            flight = asyncio.ensure_future(self._merge(region, loaded))
            self._flights[region] = flight
            flight.add_done_callback(lambda _: self._flights.pop(region, None))
        return await asyncio.shield(flight)

    async def tiers(self, region: str) -> dict[int, int]:
        return await self.loaded_source.tiers(region)

    async def vehicles(self, region: str) -> dict[int, dict]:
        return await self.loaded_source.vehicles(region)

    async def catalogue(self, region: str) -> tuple[float, dict[int, dict]] | None:
        return await self.loaded_source.catalogue(region)

    async def refresh_expected(self, slot: int | None = None) -> str:
        return await self.loaded_source.refresh_expected(slot)

    def status(self) -> dict:
        return {
            **self.loaded_source.status(),
            "source": self.source,
            "computed": {region: kept[1] for region, kept in sorted(self._merged.items())},
        }

    def health_reasons(self) -> list[str]:
        """The loaded table's problems, one sentence each (RatingsSource.health_reasons)."""
        return self.loaded_source.health_reasons()

    def forget(self) -> None:
        """Look for newer computed tables at the next rating (the job just built them here)."""
        self._merged.clear()

    async def _merge(self, region: str, loaded: ExpectedValues) -> ExpectedValues:
        kept = self._merged.get(region)
        try:
            async with request_deadline():
                version = await self.store.expected_tables.latest_version(region)
                if kept is not None and kept[2] is loaded and kept[1] == version:
                    merged = kept[3]
                else:
                    doc = await self.store.expected_tables.get(region, version) if version else None
                    merged = self._merged_table(loaded, doc)
        except Exception as exc:  # the database is down or slow: rate with what we have
            log.warning("computed expected values of %s unavailable: %s", region, type(exc).__name__)
            if kept is not None and kept[2] is loaded:
                return kept[3]
            return loaded
        self._merged[region] = (time.monotonic(), version, loaded, merged)
        return merged

    def _merged_table(self, loaded: ExpectedValues, doc: Mapping[str, Any] | None) -> ExpectedValues:
        if doc is None:
            return loaded
        which = "computed" if self.source == "computed" else "gaps"
        return ExpectedValues.merged(loaded, computed_rows(doc, which), doc["version"], self.source == "computed")

    # --- GET /expected-values ---------------------------------------------------------------
    async def document(self, region: str, source: str, version: str | None) -> dict[str, Any]:
        """The answer of /expected-values: a table in the XVM file's format with each row's
        source and sample, the computed table's facts and the comparison block."""
        loaded = await self.loaded_source.expected_values()
        async with request_deadline():
            if version is None:
                version = await self.store.expected_tables.latest_version(region)
            doc = await self.store.expected_tables.get(region, version) if version else None
        if version is not None and doc is None and source != "table":
            raise APIError("no_expected_values", f"no computed table {version} for {region}")
        if source == "table":
            if loaded is None:
                raise APIError("no_expected_values", "no expected-values table is loaded")
            rows: Mapping[int, TankExpectation] = dict(loaded.items())
            origin = dict.fromkeys(rows, "table")
        elif source == "computed":
            if doc is None:
                raise APIError("no_expected_values", f"no computed table for {region} yet")
            rows = computed_rows(doc, "computed")
            origin = dict.fromkeys(rows, "computed")
        else:  # effective: what this service rates the region with
            if loaded is None:
                raise APIError("no_expected_values", "no expected-values table is loaded")
            merged = self._merged_table(loaded, doc)
            rows = dict(merged.items())
            origin = {tank_id: merged.source_of(tank_id) or "table" for tank_id in rows}
        part = "computed" if "computed" in (source, self.source) else "gaps"
        samples = ((doc or {}).get(part) or {}).get("rows") or {}

        from_panel = {int(t) for t in ((doc or {}).get(part) or {}).get("panel") or ()}

        def sample(tank_id: int) -> dict[str, int] | None:
            """Players and battles behind a computed row (a loaded row's are not published)."""
            row = samples.get(str(tank_id)) if origin[tank_id] == "computed" else None
            return {"players": int(row[5]), "battles": int(row[6])} if row is not None else None

        def population(tank_id: int) -> str | None:
            """Whom a computed row was fitted over: the random panel or the tracked accounts."""
            if origin[tank_id] != "computed":
                return None
            return "panel" if tank_id in from_panel else "tracked"

        used_version = doc["version"] if doc is not None and source != "table" else (loaded.version if loaded else None)
        vehicles = await self.loaded_source.vehicles(region)
        return {
            "region": region,
            "source": source,
            "rating_source": self.source,
            "version": used_version,
            "table_version": loaded.version if loaded is not None else None,
            "computed": _computed_facts(doc),
            "header": {"source": "statsapi", "version": used_version, "region": region, "rows": source},
            "data": [
                {
                    **xvm_row(tank_id, rows[tank_id]),
                    "source": origin[tank_id],
                    "population": population(tank_id),
                    "sample": sample(tank_id),
                }
                for tank_id in sorted(rows)
            ],
            "comparison": comparison(doc, loaded, vehicles) if doc is not None and loaded is not None else None,
        }


def _computed_facts(doc: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if doc is None:
        return None
    return {
        "version": doc["version"],
        "method": doc["method"],
        "through": doc["through"],
        "window": doc["window"],
        "minimums": doc["minimums"],
        "base": doc.get("base"),
        "built_at": int(doc["built_at"]),
        "panel_size": doc.get("panel_size"),
        **{
            name: {
                "tanks": len((doc.get(part) or {}).get("rows") or {}),
                "panel_tanks": len((doc.get(part) or {}).get("panel") or ()),
                "passes": (doc.get(part) or {}).get("passes"),
                "converged": (doc.get(part) or {}).get("converged"),
            }
            for name, part in (("gaps", "gaps"), ("every_tank", "computed"))
        },
    }
