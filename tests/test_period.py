"""HistoryService (server/services/history.py) over hand-built per-tank records: days covered, baselines, 404."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.contract.errors import APIError
from server.domain.ratings import ExpectedValues, TankExpectation
from server.domain.records import Timeline, pack
from server.services.history import HistoryService
from store.constants import TANK_COUNTERS
from store.store import Gate


def counters(battles: int, wins: int, damage: int) -> dict:
    return {
        "battles": battles,
        "wins": wins,
        "damage_dealt": damage,
        "frags": battles,
        "spotted": battles,
        "dropped_capture_points": battles,
        "capture_points": 0,
        "xp": 500 * battles,
        "survived_battles": battles // 2,
        "shots": 10 * battles,
        "hits": 7 * battles,
    }


class FakeTanks:
    """store.tanks over {day: state}: the newest record on or before a day."""

    def __init__(self, records: dict[str, dict[int, dict]]):
        self.records = dict(sorted(records.items()))

    async def state_on(self, region, account_id, day):
        days = [d for d in self.records if d <= day]
        return (days[-1], self.records[days[-1]]) if days else None

    async def battles_by_day(self, region, account_id, since, until):
        return [
            (d, sum(t["battles"] for t in state.values())) for d, state in self.records.items() if since <= d <= until
        ]

    async def timeline_records(self, region, account_id, since, until):
        """Every record a keyframe of its whole state (what the real store rebuilds them into)."""
        return [
            (
                day,
                sum(t["battles"] for t in state.values()),
                True,
                pack({tank_id: [c.get(name, 0) for name in TANK_COUNTERS] for tank_id, c in state.items()}),
                None,
            )
            for day, state in self.records.items()
            if day <= until
        ]


class FakeTracked:
    def __init__(self, measured: str | None = None):
        self.measured = measured  # None: never visited by the pass

    async def last_measured_day(self, region, account_id):
        return self.measured

    async def mastery_payload(self, region, account_id):
        return b""  # no badge kept


class FakePlayers:
    def __init__(self, snapshot_dates: tuple[str, ...] = ()):
        self.snapshot_dates = snapshot_dates

    async def snapshots_since(self, region, account_id, first_date, last_date=None, fields=None):
        return [{"date": d} for d in self.snapshot_dates if first_date <= d and (last_date is None or d <= last_date)]


class FakeStore:
    def __init__(self, records, measured: str | None = None, snapshot_dates: tuple[str, ...] = ()):
        self.history_reads = Gate("history", 16)  # /tanks' build holds a slot (store.store.Store)
        self.tanks = FakeTanks(records)
        self.tracked = FakeTracked(measured)
        self.players = FakePlayers(snapshot_dates)


class FakeRatings:
    def __init__(self):
        self.table = ExpectedValues(
            {
                1: TankExpectation(damage=1000.0, spot=1.0, frag=1.0, defence=1.0, win_rate=50.0),
                2: TankExpectation(damage=2000.0, spot=1.0, frag=1.0, defence=1.0, win_rate=50.0),
            },
            "v-test",
        )

    async def expected_values(self, region=None):
        return self.table

    async def tiers(self, region):
        return {1: 6, 2: 8}

    async def vehicles(self, region):
        return {1: {"name": "T1", "tier": 6, "type": "mediumTank", "nation": "usa"}}


RECORDS = {
    "2026-01-01": {1: counters(100, 50, 100_000)},
    "2026-01-10": {1: counters(110, 56, 112_000), 2: counters(5, 3, 10_000)},
    "2026-01-20": {1: counters(1100, 560, 1_120_000), 2: counters(5, 3, 10_000)},
    "2026-01-25": {1: counters(1110, 566, 1_132_000), 2: counters(15, 9, 30_000)},
}


@pytest.fixture
def service():
    return HistoryService(FakeStore(RECORDS), FakeRatings())


@pytest.mark.gen_test
async def test_period_starts_at_the_record_on_or_before_its_first_day(service):
    figures = await service.period("eu", 1, "2026-01-15", "2026-01-25")
    assert (figures["from"], figures["to"]) == ("2026-01-10", "2026-01-25")
    assert figures["battles"] == (1110 + 15) - (110 + 5)
    assert figures["wins"] == (566 + 9) - (56 + 3)


@pytest.mark.gen_test
async def test_period_before_the_first_record_starts_at_the_first_record_inside(service):
    figures = await service.period("eu", 1, "2025-12-01", "2026-01-10")
    assert (figures["from"], figures["to"]) == ("2026-01-01", "2026-01-10")
    assert figures["battles"] == 15
    assert await service.period("eu", 1, "2025-01-01", "2025-12-31") is None


@pytest.mark.gen_test
async def test_period_without_battles_says_so(service):
    figures = await service.period("eu", 1, "2026-01-26", "2026-01-30")
    assert figures["battles"] == 0 and figures["wn8"] is None and figures["win_rate"] is None


@pytest.mark.gen_test
async def test_recent_1000_from_the_newest_record_at_least_1000_battles_back(service):
    figures = await service.recent("eu", 1, "2026-01-25")
    # newest: 1125 battles; 2026-01-20 has 1105 (only 20 back), 2026-01-10 has 115 (1010 back)
    assert (figures["from"], figures["to"]) == ("2026-01-10", "2026-01-25")
    assert figures["battles"] == 1010


@pytest.mark.gen_test
async def test_recent_100_and_1000_each_from_their_own_daily_record():
    records = {**RECORDS, "2026-01-27": {1: counters(1200, 610, 1_220_000), 2: counters(15, 9, 30_000)}}
    service = HistoryService(FakeStore(records), FakeRatings())
    # newest: 1215 battles; 100 back is at most 1115: 2026-01-20 (1105), the newest such day
    last_100 = await service.recent("eu", 1, "2026-01-27", 100)
    assert (last_100["from"], last_100["to"], last_100["battles"]) == ("2026-01-20", "2026-01-27", 110)
    assert last_100["wins"] == (610 + 9) - (560 + 3)
    last_1000 = await service.recent("eu", 1, "2026-01-27", 1000)
    assert (last_1000["from"], last_1000["battles"]) == ("2026-01-10", 1100)


@pytest.mark.gen_test
async def test_recent_1000_is_none_when_the_records_do_not_reach_that_far():
    service = HistoryService(FakeStore({d: RECORDS[d] for d in ("2026-01-20", "2026-01-25")}), FakeRatings())
    assert await service.recent("eu", 1, "2026-01-25") is None


@pytest.mark.gen_test
async def test_tanks_rows_and_period(service):
    data = await service.tanks("eu", 1, 10, "2026-01-25")
    assert (data["from"], data["to"], data["days"]) == ("2026-01-10", "2026-01-25", 10)
    assert data["expected_values_version"] == "v-test"
    assert data["period"]["battles"] == 1010
    assert [row["tank_id"] for row in data["tanks"]] == [1, 2]  # by period battles
    first = data["tanks"][0]
    assert first["name"] == "T1" and first["tier"] == 6 and first["nation"] == "usa"
    assert first["period"]["battles"] == 1000 and first["period"]["wins"] == 510
    assert first["career"]["battles"] == 1110
    assert data["tanks"][1]["name"] is None  # not in the encyclopedia: facts unknown, row kept


@pytest.mark.gen_test
async def test_tanks_without_records_is_no_history():
    service = HistoryService(FakeStore({}), FakeRatings())
    with pytest.raises(APIError) as raised:
        await service.tanks("eu", 1, 30, "2026-01-25")
    assert raised.value.code == "no_history"


@pytest.mark.gen_test
async def test_tanks_end_where_the_history_deltas_end():
    """Measured yesterday, but a profile fetched today wrote today's snapshot (the history's newest
    day): /tanks' days end today too, so its period equals the history delta's over the same days
    (seen on the demo data: the two differed by the day before the tracker's visit)."""
    records = {d: RECORDS[d] for d in ("2026-01-01", "2026-01-10", "2026-01-20")}
    store = FakeStore(records, measured="2026-01-24", snapshot_dates=("2026-01-24", "2026-01-25"))
    service = HistoryService(store, FakeRatings())
    data = await service.tanks("eu", 1, 15, "2026-01-25")
    delta = await service.period("eu", 1, "2026-01-10", "2026-01-25")  # the history's 15-day window
    assert (data["from"], data["to"]) == (delta["from"], delta["to"]) == ("2026-01-10", "2026-01-20")
    assert data["period"]["battles"] == delta["battles"] == 990
    # Without today's snapshot the days end on the last measured day.
    service = HistoryService(FakeStore(records, measured="2026-01-24"), FakeRatings())
    assert (await service.tanks("eu", 1, 15, "2026-01-25"))["from"] == "2026-01-01"


# --- Timeline's states built on from each other ------------------------------------------------
_DAYS = [f"2026-10-{d:02d}" for d in range(1, 29)]
_record_steps = st.lists(
    st.tuples(
        st.booleans(),  # a keyframe
        st.dictionaries(st.integers(1, 12), st.integers(1, 5), min_size=1, max_size=6),  # battles per tank
    ),
    min_size=1,
    max_size=len(_DAYS),
)


@settings(max_examples=150, deadline=None)
@given(steps=_record_steps, asked=st.lists(st.sampled_from(["2026-09-30", *_DAYS, "2026-11-02"]), max_size=25))
def test_a_timelines_states_in_any_order_equal_each_state_built_alone(steps, asked):
    """Asked in any order, each day's state equals the one a fresh timeline builds from its keyframe,
    and no answer changes a state handed out before (each is the caller's to keep)."""
    state: dict[int, list[int]] = {}
    records = []
    for day, (keyframe, played) in zip(_DAYS, steps):
        before = {t: list(row) for t, row in state.items()}
        for tank_id, battles in played.items():
            row = state.setdefault(tank_id, [0] * len(TANK_COUNTERS))
            state[tank_id] = [row[0] + battles, row[1] + battles // 2, *row[2:]]
        keyframe = keyframe or not records
        payload = pack(state) if keyframe else pack({t: r for t, r in state.items() if r != before.get(t)}, before)
        records.append((day, sum(r[0] for r in state.values()), keyframe, payload))

    def fresh(day):
        return Timeline(records).raw_state_on(day)

    timeline = Timeline(records)
    handed = []
    for day in asked:
        got = timeline.raw_state_on(day)
        assert got == fresh(day), day
        if got is not None:
            handed.append((day, got, {t: list(r) for t, r in got[1].items()}))
            got[1][999] = [1] * len(TANK_COUNTERS)  # a caller adding to its copy changes nothing kept
    for day, got, copy in handed:
        got[1].pop(999, None)
        assert got[1] == copy and timeline.raw_state_on(day)[1] == copy, day
