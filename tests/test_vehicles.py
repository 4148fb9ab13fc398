"""The vehicle catalogue: stored once per fetch whatever the repeats, the last good one kept (with its
date) when the upstream fails, and the rows /vehicles lists."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

from hypothesis import given, settings
from hypothesis import strategies as st

from server.services.encyclopedia import VehicleCatalogue, catalogue_fields
from server.services.vehicles import vehicle_row

FIELDS = "tank_id,name,short_name,tier,type,nation,tag,is_premium,is_gift,is_wheeled,images"
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


async def check_vehicles_on_demo(base_url: str, sim_url: str) -> None:
    """/vehicles lists every vehicle of the simulator's encyclopedia with its flags and icon URLs,
    its filters narrow it, and a tank page carries the same fields (the demo of test_marks)."""
    from tests.helpers import sim_async
    from tests.test_marks import get_data

    encyclopedia: dict = {}
    page_no = 1
    while True:
        answer = await sim_async(
            sim_url, f"/wot/eu/wot/encyclopedia/vehicles/?application_id=t&limit=100&page_no={page_no}&fields={FIELDS}"
        )
        encyclopedia.update({int(t): v for t, v in answer["data"].items()})
        if page_no >= answer["meta"]["page_total"]:
            break
        page_no += 1
        await asyncio.sleep(1.1)  # the simulator's throttle blocks a burst from one address
    listed, offset = [], 0
    while True:
        page = await get_data(base_url, f"/api/v1/vehicles?region=eu&offset={offset}")
        listed += page["vehicles"]
        offset += page["limit"]
        if offset >= page["total"]:
            break
    assert page["stale"] is False and page["headline_days"] == 30
    by_id = {row["tank_id"]: row for row in listed}
    assert set(encyclopedia) <= set(by_id), sorted(set(encyclopedia) - set(by_id))[:10]
    assert [row["tank_id"] for row in listed] == sorted(by_id)  # tank_id order, each once
    for tank_id, truth in encyclopedia.items():
        row = by_id[tank_id]
        assert row["in_encyclopedia"] is True
        for key in ("name", "short_name", "tier", "type", "nation", "tag", "is_premium", "is_gift", "is_wheeled"):
            assert row[key] == truth[key], (tank_id, key)
        # The simulator names its icons at the address it was asked on (the service may have asked
        # another simulator of this run): the same icon is the same path.
        assert {k: urlsplit(v).path for k, v in row["images"].items()} == {
            k: urlsplit(truth["images"][k]).path for k in ("small_icon", "contour_icon", "big_icon")
        }
        assert row["page"] == f"/api/v1/tank/{tank_id}/eu"
    played = [row for row in listed if row["stats"] is not None]
    assert played, "no vehicle carries the tracked players' figures"
    assert any(row["is_premium"] for row in listed) and not all(row["is_premium"] for row in listed)
    # Filters: tier and type together, premium, a part of the name.
    tens = await get_data(base_url, "/api/v1/vehicles?region=eu&tier=10&type=heavyTank")
    expected = sorted(t for t, v in encyclopedia.items() if v["tier"] == 10 and v["type"] == "heavyTank")
    assert [row["tank_id"] for row in tens["vehicles"]] == expected and tens["total"] == len(expected)
    premium = await get_data(base_url, "/api/v1/vehicles?region=eu&premium=true&limit=100")
    assert premium["total"] == sum(v["is_premium"] for v in encyclopedia.values())
    assert all(row["is_premium"] for row in premium["vehicles"])
    name = encyclopedia[expected[0]]["name"]
    found = await get_data(base_url, f"/api/v1/vehicles?region=eu&search={name[1:4].lower()}")
    assert expected[0] in [row["tank_id"] for row in found["vehicles"]]
    # A tank page carries the catalogue's fields.
    tank_id = max(played, key=lambda row: row["stats"]["players"])["tank_id"]
    tank = await get_data(base_url, f"/api/v1/tank/{tank_id}/eu?days=30")
    for key in ("short_name", "tag", "is_premium", "is_gift", "is_wheeled", "images", "in_encyclopedia"):
        assert tank[key] == by_id[tank_id][key], key


async def check_strength_on_demo(base_url: str) -> None:
    """/tanks/strength ranks the tanks of a tier by relative win rate, each the tank's win rate minus
    the stated baseline, with its interval and sample; /tanks/stats carries the same figures and
    sorts by them."""
    from tests.test_marks import get_data

    tier10 = await get_data(base_url, "/api/v1/tanks/strength?region=eu&tier=10&days=30&limit=100")
    assert tier10["tanks"], "no tier X tank in the 30-day table"
    assert all(row["tier"] == 10 for row in tier10["tanks"])
    every = await get_data(base_url, "/api/v1/tanks/strength?region=eu&days=30&limit=100")
    assert every["ranked"] >= 1, [(r["players"], r["battles"]) for r in every["tanks"][:10]]
    for answer in (tier10, every):
        ranked = [row for row in answer["tanks"] if row["rank"] is not None]
        assert [row["rank"] for row in ranked] == list(range(1, len(ranked) + 1))
        assert [row["relative_win_rate"] for row in ranked] == sorted(
            (row["relative_win_rate"] for row in ranked), reverse=True
        )
        for row in answer["tanks"]:
            if row["rank"] is None:
                assert row["relative_win_rate"] is None
                assert row["players"] < answer["min_players"] or row["battles"] < answer["min_battles"]
                continue
            assert row["relative_win_rate"] == round(row["win_rate"] - row["baseline_win_rate"], 2), row
            interval = row["relative_win_rate_interval"]
            assert interval["low"] <= row["relative_win_rate"] <= interval["high"], row
            assert row["players"] >= answer["min_players"] and row["battles"] >= answer["min_battles"]
    # /tanks/stats: the same figures in each row, sortable by them.
    strongest = next(row for row in every["tanks"] if row["rank"] == 1)
    table = await get_data(base_url, "/api/v1/tanks/stats?region=eu&days=30&sort=relative_win_rate&limit=1")
    assert table["tanks"][0]["tank_id"] == strongest["tank_id"]
    assert table["tanks"][0]["strength"]["relative_win_rate"] == strongest["relative_win_rate"]
