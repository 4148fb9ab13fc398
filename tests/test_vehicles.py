"""The vehicle catalogue: stored once per fetch whatever the repeats, the last good one kept (with its
date) when the upstream fails, and the rows /vehicles lists."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from server.services.encyclopedia import VehicleCatalogue, catalogue_fields
from server.services.vehicles import vehicle_row

ICONS = {
    "small_icon": "http://api.worldoftanks.eu/static/x/small/t.png",
    "contour_icon": "http://api.worldoftanks.eu/static/x/contour/t.png",
    "big_icon": "http://api.worldoftanks.eu/static/x/t.png",
}


def record(tank_id: int, tier: int) -> dict:
    return {
        "name": f"Tank {tank_id}",
        "short_name": f"T{tank_id}",
        "tier": tier,
        "type": "heavyTank",
        "nation": "ussr",
        "tag": f"R{tank_id}",
        "is_premium": tank_id % 2 == 0,
        "is_gift": False,
        "is_wheeled": False,
        "images": ICONS,
    }


# A fetch: (fetched_at, {tank_id: tier}); what the encyclopedia answered at that time.
fetches = st.tuples(
    st.integers(min_value=1, max_value=50).map(float),
    st.dictionaries(st.integers(1, 20), st.integers(1, 11), max_size=6),
)


@settings(max_examples=25, deadline=None)
@given(calls=st.lists(st.tuples(fetches, st.booleans()), min_size=1, max_size=6))
def test_storing_the_catalogue_twice_stores_what_once_does_and_the_newest_fetch_stays(mongo_uri, calls):
    """Two processes may store the same fetch, or an older one late: each stored once or twice leaves
    the same document, the newest fetch's."""
    from tests.test_tracker_drift import new_store

    async def stored_after(repeat: bool) -> dict | None:
        client, _, store = await new_store(mongo_uri)
        for (fetched_at, tiers), twice in calls:
            vehicles = {t: record(t, tier) for t, tier in tiers.items()}
            for _ in range(2 if repeat and twice else 1):
                await store.vehicles.save("eu", fetched_at, vehicles)
        doc = await store.vehicles.collection.find_one({"_id": "eu"})
        found = await store.vehicles.get("eu")
        client.close()
        return {"doc": doc, "found": found}

    async def run() -> None:
        once, twice = await stored_after(False), await stored_after(True)
        assert once == twice
        newest = max(fetched_at for (fetched_at, _), _ in calls)
        assert once["found"][0] == newest
        # Of the fetches at the newest time, the last one stored wins.
        last = [tiers for (fetched_at, tiers), _ in calls if fetched_at == newest][-1]
        assert once["found"][1] == {t: record(t, tier) for t, tier in last.items()}

    asyncio.run(run())


class FlakySource:
    """An encyclopedia that answers until it is told to fail (as RatingsSource after a restart
    with the upstream down: nothing fetched in this process)."""

    def __init__(self) -> None:
        self.answer: tuple[float, dict[int, dict]] | None = None

    async def catalogue(self, region: str) -> tuple[float, dict[int, dict]] | None:
        return self.answer


def test_a_failed_fetch_keeps_the_last_good_catalogue_with_its_date(mongo_uri):
    from tests.test_tracker_drift import new_store

    async def run() -> None:
        client, _, store = await new_store(mongo_uri)
        source = FlakySource()
        catalogue = VehicleCatalogue(store, source)
        assert await catalogue.records("eu") is None  # nothing fetched, nothing stored
        source.answer = (1_000.0, {1: record(1, 10), 2: record(2, 8)})
        assert await catalogue.records("eu") == source.answer
        # A new process whose fetches fail: the stored catalogue, with the date of its fetch.
        source.answer = None
        restarted = VehicleCatalogue(store, source)
        fetched_at, vehicles = await restarted.records("eu")
        assert fetched_at == 1_000.0 and vehicles == {1: record(1, 10), 2: record(2, 8)}
        client.close()

    asyncio.run(run())


def test_a_vehicle_the_encyclopedia_lacks_is_listed_with_nulls_and_says_so():
    listed = vehicle_row("eu", 99, None, None, None)
    assert listed["in_encyclopedia"] is False
    assert listed["name"] is None and listed["images"] is None and listed["is_premium"] is None
    assert listed["page"] == "/api/v1/tank/99/eu"
    known = vehicle_row("eu", 1, record(1, 10), None, None)
    assert known["in_encyclopedia"] is True and known["images"] == ICONS and known["tier"] == 10
    assert catalogue_fields(record(1, 10))["short_name"] == "T1"
