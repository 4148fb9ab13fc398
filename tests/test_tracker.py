"""The tracker over simulated weeks against the strict simulator: once a day, per tank, within the budget."""

from __future__ import annotations

import asyncio
import collections
import datetime as dt
import functools
import subprocess
import sys
import time

import pytest

from scripts.upstream_sim.ids import existing_accounts, veteran_accounts
from scripts.upstream_sim.world import World
from server.compose.demo import TimeTravelUpstream
from server.domain.days import ManualClock, day_start, utc_day
from server.domain.records import state_of
from server.services.tracker import Tracker, due_at
from server.upstream.budget import UpstreamBudget
from server.upstream.client import UpstreamClient, UpstreamError
from server.upstream.realms import RealmGates
from store.client import deadline
from store.constants import REGIONS, TANK_COUNTERS
from store.tracker import SLICES, slice_of
from tests.helpers import EXPECTED_VALUES_FILE, ROOT, run_days, sim, simulator

FIRST_DAY = "2025-03-01"
SIM_RPS = 100  # this module's own simulator: strict limits, a quota high enough for weeks in seconds


@pytest.fixture(scope="module")
def fast_sim():
    with simulator(SIM_RPS, throttle=",".join(f"{realm}={SIM_RPS}" for realm in REGIONS)) as url:
        yield url


@pytest.fixture(scope="module")
def world():
    return World(expected_values=EXPECTED_VALUES_FILE, profile_cache=100_000)


class Recording:
    """An upstream that notes which accounts each call asked for, by the tracker clock's day."""

    def __init__(self, upstream, clock):
        self.upstream, self.clock = upstream, clock
        self.info: dict[str, list[tuple[str, int]]] = collections.defaultdict(list)
        self.tanks: dict[str, list[tuple[str, int]]] = collections.defaultdict(list)
        self.info_calls = 0
        self.block_after: int | None = None  # calls after this many hang (a process that stopped)

    async def _gate(self):
        self.info_calls += 1
        if self.block_after is not None and self.info_calls > self.block_after:
            await asyncio.Event().wait()

    async def account_info(self, region, ids, **kwargs):
        await self._gate()
        result = await self.upstream.account_info(region, ids, **kwargs)
        self.info[utc_day(self.clock())].extend((region, a) for a in ids)
        return result

    async def tanks_stats(self, region, account_id, **kwargs):
        self.tanks[utc_day(self.clock())].append((region, account_id))
        return await self.upstream.tanks_stats(region, account_id, **kwargs)

    async def account_wtr(self, region, ids, **kwargs):
        return await self.upstream.account_wtr(region, ids, **kwargs)


class Ratings:
    """The real table and tiers without a network fetch (the ratings source's interface)."""

    def __init__(self, world):
        from server.domain import ratings as rating_maths

        self.expected = rating_maths.parse_expected_values(EXPECTED_VALUES_FILE.read_bytes())
        self.tier_map = {t: v["tier"] for t, v in world.vehicles.items()}

    async def expected_values(self, region=None):
        return self.expected

    async def tiers(self, region):
        return self.tier_map


def make_tracker(store, base_url, clock, world, owner, rps=SIM_RPS, **kwargs):
    client = UpstreamClient(
        "tracker-test",
        base_url=base_url,
        budget=UpstreamBudget(rps, hold_first_window=False),
        realms=RealmGates(dict.fromkeys(REGIONS, rps), hold_first_window=False),  # the simulator's throttle
    )
    recording = Recording(TimeTravelUpstream(client, clock), clock)
    tracker = Tracker(store, recording, Ratings(world), clock=clock, owner=owner, **kwargs)
    return tracker, recording


def days_from(first: str, n: int) -> list[str]:
    start = dt.date.fromisoformat(first)
    return [(start + dt.timedelta(days=i)).isoformat() for i in range(n)]


def accounts_to_track() -> list[tuple[str, int]]:
    eu = existing_accounts("eu", 60, start=500_200_000) + veteran_accounts("eu", 4, start=500_300_000)
    na = existing_accounts("na", 20, start=1_000_200_000)
    return [("eu", a) for a in eu] + [("na", a) for a in na]


@functools.cache
def truth(world, region, account_id, day):
    """The simulator's per-tank counters at the instant the pass visits the account on `day`."""
    at = due_at(day, slice_of(region, account_id))
    tanks = world.tanks_stats(region, account_id, at, None) or []
    return {t["tank_id"]: {c: t["all"][c] for c in TANK_COUNTERS} for t in tanks if t["all"]["battles"]}


async def track_all(store, accounts, until, now):
    by_region = collections.defaultdict(list)
    for region, account_id in accounts:
        by_region[region].append((account_id, None))
    # Seeding, not a request: under the seeding's deadline, not the client's 1.8 s request default
    # (1,030 accounts' tracking timed out once on a loaded machine).
    with deadline(120):
        for region, members in by_region.items():
            await store.tracked.track_many(region, members, until, now)


@pytest.mark.gen_test(timeout=300)
async def test_two_weeks_of_passes_visit_once_a_day_and_rebuild_every_tank(store, fast_sim, world):
    accounts = accounts_to_track()
    days = days_from(FIRST_DAY, 14)
    clock = ManualClock(due_at(days[0], 0))
    await track_all(store, accounts, until=clock() + 400 * 86400, now=clock())
    before = sim(fast_sim, "/_sim/stats")["violations"]["total"]
    tracker, recording = make_tracker(store, fast_sim, clock, world, "solo")
    await run_days(tracker, clock, days[0], len(days))

    played_days = 0
    for n, day in enumerate(days):
        # Each tracked account exactly once a day, 100 ids at most per account/info.
        assert sorted(recording.info[day]) == sorted(accounts), day
        # tanks/stats only for accounts that played since their last visit (all of them on the first day).
        expected_tanks = set()
        for region, account_id in accounts:
            now = truth(world, region, account_id, day)
            if n == 0 or now != truth(world, region, account_id, days[n - 1]):
                expected_tanks.add((region, account_id))
        assert set(recording.tanks[day]) == expected_tanks, day
        assert len(recording.tanks[day]) == len(expected_tanks)  # never twice
        if n:
            played_days += len(expected_tanks)
    assert sim(fast_sim, "/_sim/stats")["violations"]["total"] == before  # never refused, never over a limit

    # The per-tank state rebuilt for any day equals the simulator's on that day, for every tank.
    # (Every account's days read at once: the server overlaps the round trips.)
    chains = await asyncio.gather(*(store.tanks.chain_on(r, a, day) for r, a in accounts for day in days))
    states = [state_of(chain) for chain in chains]
    for (region, account_id, day), got in zip(((r, a, day) for r, a in accounts for day in days), states):
        assert got is not None and got[0] <= day
        assert got[1] == truth(world, region, account_id, day), (region, account_id, day)
    assert state_of(await store.tanks.chain_on(*accounts[0], "2025-02-28")) is None

    # Storage: at most 1 KB per active account-day (keyframes of the first day included).
    size = await store.tanks.stored_bytes()
    active_days = played_days + len(accounts)
    assert 0.25 < played_days / (len(accounts) * (len(days) - 1)) < 0.6  # the simulator's players
    assert (size["size"] + size["index_size"]) / active_days <= 1024, size

    # Every day is in /status's figures, with its spend.
    slices = await store.tracked.day_slices(days[-1])
    assert len(slices) == SLICES and all(doc.get("finished") for doc in slices)
    assert sum(doc.get("visited", 0) for doc in slices) == len(accounts)
    assert sum(doc.get("tanks_requests", 0) for doc in slices) == len(recording.tanks[days[-1]])
    # ... and per realm, beside the realm's rate and back-off.
    by_realm = (await tracker.refresh_status(force=True))["today"]["by_realm"]
    assert {realm: figures["visited"] for realm, figures in by_realm.items()} == dict(
        collections.Counter(region for region, _ in accounts)
    )
    assert sum(figures["requests"] for figures in by_realm.values()) == sum(
        doc.get("info_requests", 0) + doc.get("tanks_requests", 0) + doc.get("wtr_requests", 0) for doc in slices
    )
    assert all(figures["remaining_estimate"] == 0 and figures["eta_seconds"] == 0 for figures in by_realm.values())


@pytest.mark.gen_test(timeout=300)
async def test_ratings_and_history_fill_every_day_without_requests(store, fast_sim, world):
    from server.services.history import HistoryService

    accounts = [("eu", a) for a in existing_accounts("eu", 12, start=500_400_000)]
    days = days_from(FIRST_DAY, 10)
    clock = ManualClock(due_at(days[0], 0))
    await track_all(store, accounts, until=clock() + 400 * 86400, now=clock())
    tracker, recording = make_tracker(store, fast_sim, clock, world, "solo")
    await run_days(tracker, clock, days[0], len(days))
    status = await tracker.refresh_status(force=True)  # what /status shows under tracker
    assert status["tracked"] == len(accounts) and status["today"]["day"] == days[-1]
    assert status["today"]["visited"] == status["today"]["total"] == len(accounts)
    assert status["today"]["slices_finished"] == SLICES and status["today"]["eta_seconds"] == 0
    assert status["today"]["requests"]["tanks_stats"] == len(recording.tanks[days[-1]])
    assert status["today"]["requests"]["account_info"] >= 1
    history_service = HistoryService(store, Ratings(world), clock=clock)
    expected = Ratings(world).expected
    from server.domain import ratings as rating_maths

    for region, account_id in accounts:
        history = await history_service.history(region, account_id, days=10)
        entries = history["snapshots"]
        assert [e["date"] for e in entries] == days  # one entry per day, measured or carried
        played = {day for day in days if (region, account_id) in recording.tanks[day]}
        stored = await store.players.snapshots_since(region, account_id, days[0], days[-1])
        assert {snap["date"] for snap in stored} == played  # a snapshot only on days with battles
        for entry, previous in zip(entries[1:], entries):
            if entry["date"] not in played:  # carried forward: the previous day's figures, flagged
                assert entry["measured"] is False
                assert {k: v for k, v in entry.items() if k not in ("date", "measured")} == {
                    k: v for k, v in previous.items() if k not in ("date", "measured")
                }
            else:
                assert entry["measured"] is True
        # Ratings recomputed on the pass from the fresh per-tank data.
        last = max(played)
        snap = (await store.players.snapshots_since(region, account_id, last, last))[0]
        tanks = [{"tank_id": t, **c} for t, c in truth(world, region, account_id, last).items()]
        totals = {c: sum(t[c] for t in tanks) for c in TANK_COUNTERS}
        want = rating_maths.compute_ratings(totals, tanks, expected, Ratings(world).tier_map)
        assert snap["wn8"] == want["wn8"] and snap["wn7"] == want["wn7"] and snap["efficiency"] == want["efficiency"]


@pytest.mark.gen_test(timeout=300)
async def test_two_processes_share_the_pass_and_a_dead_ones_slices_finish_the_same_day(store, fast_sim, world):
    accounts = accounts_to_track()
    days = days_from(FIRST_DAY, 4)
    clock = ManualClock(due_at(days[0], 0))
    await track_all(store, accounts, until=clock() + 400 * 86400, now=clock())
    one, rec_one = make_tracker(store, fast_sim, clock, world, "one", rps=SIM_RPS / 2, claim_ttl=60)
    two, rec_two = make_tracker(store, fast_sim, clock, world, "two", rps=SIM_RPS / 2, claim_ttl=60)

    # Days 1-3: both processes work the whole day's slices at once, in parallel.
    for day in days[:3]:
        clock.set(due_at(day, SLICES - 1) + 60)
        done = await asyncio.gather(one.tick(), two.tick())
        assert sum(done) == SLICES and min(done) > 0  # both took part
        visits = rec_one.info[day] + rec_two.info[day]
        assert sorted(visits) == sorted(accounts), day  # each account exactly once across the two
        assert not set(rec_one.tanks[day]) & set(rec_two.tanks[day])

    # Day 4: process one stops dead in the middle of its work (never renews, never releases).
    day = days[3]
    clock.set(due_at(day, SLICES - 1) + 60)
    rec_one.block_after = rec_one.info_calls + 5
    stuck = asyncio.ensure_future(one.tick())
    while rec_one.info_calls <= rec_one.block_after:
        await asyncio.sleep(0.05)
    visited_by_one = list(rec_one.info[day])
    held = set(one.claimed)
    assert held  # it holds a claim it will never finish
    await two.tick()  # the claim is still fresh: two leaves it alone
    assert set(rec_two.info[day]).isdisjoint(visited_by_one)
    left = await store.tracked.finished_slices(day)
    assert {s for _, s in held} - left == {s for _, s in held}
    clock.set(clock() + 61)  # one's claim was not renewed for longer than its ttl: taken over
    await two.tick()
    stuck.cancel()
    assert await store.tracked.finished_slices(day) == set(range(SLICES))
    visits = rec_one.info[day] + rec_two.info[day]
    assert sorted(visits) == sorted(accounts)  # the remaining accounts only, nobody twice
    assert utc_day(clock()) == day  # finished the same day


@pytest.mark.gen_test(timeout=180)
async def test_a_killed_processs_slices_are_finished_the_same_day_by_another(
    store, fast_sim, world, mongo_uri, db_name
):
    """A real process (tests/tracker_child.py) works the day's pass until it has had one batch of
    account/info answered, then is killed with SIGKILL while it holds claims. What the claim design
    guarantees about its partial work: an account it marked visited (the mark lands after its
    batch's writes) is never visited again that day; an account it fetched but had not marked yet
    (a batch in flight at the kill) is visited again by the taker-over, whose writes replace the
    same (account, day) records, so at most that one batch costs the upstream twice; its claims
    stop being renewed, are left alone while fresh and taken over once their ttl has passed, and
    every slice finishes the same UTC day with each account marked visited exactly once."""
    accounts = accounts_to_track()
    day = days_from(FIRST_DAY, 1)[0]
    at = due_at(day, SLICES - 1) + 60  # every slice of the day is due
    clock = ManualClock(at)
    await track_all(store, accounts, until=at + 400 * 86400, now=at)
    cmd = [sys.executable, "-m", "tests.tracker_child", "--mongodb-uri", mongo_uri, "--db-name", db_name]
    cmd += ["--sim", fast_sim, "--at", str(at), "--block-after", "3"]
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=str(ROOT))
    answered: list[tuple[str, int]] = []
    loop = asyncio.get_running_loop()
    try:
        while True:
            line = await asyncio.wait_for(loop.run_in_executor(None, child.stdout.readline), 60)
            assert line, "the child exited before it blocked"
            words = line.split()
            if words[0] == "answered":
                answered += [(words[1], int(a)) for a in words[2:]]
            if words[0] == "blocked":
                break
        await asyncio.sleep(1.0)  # the answered batches' writes and visit marks land
        held = [
            doc for doc in await store.tracked.day_slices(day) if doc["owner"] == "child" and not doc.get("finished")
        ]
        assert held, "the child holds no unfinished claim at its death"
    finally:
        child.kill()  # SIGKILL: no release, no renewal
        child.wait(10)
    assert child.returncode == -9
    marked = {(r, a) for r, a in accounts if ((await store.tracked.get(r, a)) or {}).get("last_visit_day") == day}
    assert marked and marked <= set(answered)  # it visited some accounts before it died

    survivor, recording = make_tracker(store, fast_sim, clock, world, "survivor", claim_ttl=60)
    await survivor.tick()  # the dead process's claims are still fresh: left alone
    finished = await store.tracked.finished_slices(day)
    assert not finished & {doc["slice"] for doc in held}
    clock.set(at + 61)  # not renewed for longer than the ttl: taken over
    await survivor.tick()
    assert await store.tracked.finished_slices(day) == set(range(SLICES))
    assert utc_day(clock()) == day  # the same UTC day
    again = set(recording.info[day])
    assert not again & marked  # what the dead process marked is not visited twice
    assert sorted(recording.info[day]) == sorted(set(accounts) - marked)  # the rest exactly once
    assert set(answered) - marked <= again  # fetched but unmarked at the kill: visited again
    for region, account_id in accounts:
        assert ((await store.tracked.get(region, account_id)) or {}).get("last_visit_day") == day


@pytest.mark.gen_test(timeout=120)
async def test_live_lookups_are_not_queued_behind_the_pass_and_are_tracked(app, http_client, base_url, upstream_sim):
    """The real service at the tests' 10 requests/s and EU's 6 per address: while the pass
    saturates the realm's cap (the tighter of the two), live lookups are never queued behind it —
    each request finds the live reserve within one window — and each looked-up account is tracked
    with its fetch as today's visit."""
    services = app.settings["services"]
    store, tracker = app.settings["store"], services.tracker
    budget = services.upstream.realms.get("eu").budget  # EU's cap, where the pass queues
    clock = ManualClock(due_at(utc_day(time.time()), SLICES - 1) + 60)
    tracker.clock = clock  # every slice of today is due; the upstream answers in real time
    background = [("eu", a) for a in existing_accounts("eu", 40, start=500_600_000)]
    await track_all(store, background, until=clock() + 86400, now=clock())
    violations = sim(upstream_sim, "/_sim/stats")["violations"]["total"]
    while budget.clock() < budget._hold_until:  # a new process sends nothing in its first window
        await asyncio.sleep(0.05)
    await services.ratings_source.tiers("eu")  # the vehicle list a first lookup's ratings would fetch
    await asyncio.sleep(1.1)  # its pages leave the window
    budget._live_waits.clear()
    pass_task = asyncio.ensure_future(tracker.tick())
    lookups = existing_accounts("eu", 3, start=500_700_000)
    queued_behind = []
    for account_id in lookups:
        while not budget.status()["queued"]:  # the pass has requests waiting for slots
            await asyncio.sleep(0.02)
        queued_behind.append(sum(budget.status()["queued"].values()))
        response = await http_client.fetch(f"{base_url}/api/v1/player/{account_id}/eu", raise_error=False)
        assert response.code == 200
        await asyncio.sleep(1.2)  # one budget window apart: each lookup has the live reserve to itself
    await pass_task
    assert min(queued_behind) > 0
    assert len(budget._live_waits) == 2 * len(lookups)  # account/info + tanks/stats per lookup
    # The reserve is one of EU's six slots: a lookup's first request is granted at once, its
    # second at the latest when that slot comes free one window later, never behind the pass.
    _, window, reserve = budget.window()
    assert reserve == 1 and sum(wait == 0.0 for wait in budget._live_waits) >= len(lookups)
    assert all(wait <= window + 0.1 for wait in budget._live_waits)
    assert sim(upstream_sim, "/_sim/stats")["violations"]["total"] == violations  # never refused
    await asyncio.sleep(0.5)  # the adoption runs in the background after the answer
    for account_id in lookups:
        doc = await store.tracked.get("eu", account_id)
        assert doc["last_visit_day"] == utc_day(doc["since"]) and doc["record_day"]
        assert doc["until"] > doc["since"] + 89 * 86400  # --track-days after the lookup
    assert state_of(await store.tanks.chain_on("eu", lookups[0], utc_day(doc["since"]))) is not None


class ScriptedUpstream:
    """One account's upstream as of the tracker's clock: its per-tank counters grow on `played` days."""

    def __init__(self, clock, account_id, played):
        self.clock, self.account_id, self.played = clock, account_id, sorted(played)
        self.info_calls = self.tanks_calls = 0

    def _day_number(self) -> int:
        return (dt.date.fromisoformat(utc_day(self.clock())) - dt.date.fromisoformat(FIRST_DAY)).days

    def state(self, n: int) -> dict[int, list[int]]:
        games = sum(1 for p in self.played if p <= n)
        tanks = {1: [3 * games + 1] * len(TANK_COUNTERS), 17: [5] * len(TANK_COUNTERS)}
        if games > 3:
            tanks[2305] = [games] * len(TANK_COUNTERS)
        return tanks

    async def account_info(self, region, ids, **kwargs):
        self.info_calls += 1
        n = self._day_number()
        last = max((p for p in self.played if p <= n), default=0)
        return {a: {"nickname": "Scripted", "last_battle_time": last, "statistics": {"all": {}}} for a in ids}

    async def account_wtr(self, region, ids, **kwargs):
        return dict.fromkeys(ids)

    async def tanks_stats(self, region, account_id, **kwargs):
        self.tanks_calls += 1
        return [
            {"tank_id": t, "all": dict(zip(TANK_COUNTERS, row))} for t, row in self.state(self._day_number()).items()
        ]


class NoRatings:
    async def expected_values(self, region=None):
        return None

    async def tiers(self, region):
        return {}


@pytest.mark.gen_test(timeout=240)
async def test_the_pass_keeps_every_day_of_the_last_400_through_idle_years(store):
    """The pass itself (visit, its re-keyframe of idle accounts and its keep after a break) with the
    retention job daily, over 2 1/2 simulated years: every day of the last 400 rebuilds exactly."""
    from types import SimpleNamespace

    from server.domain.days import DAY_SECONDS
    from server.domain.records import as_counters
    from server.jobs.retention import Retention
    from store.constants import HISTORY_DAYS
    from store.tanks import RETENTION_DAYS

    account_id = 500_000_123
    played = {*range(0, 30, 3), 80, *range(300, 320, 2)}
    last = 320 + RETENTION_DAYS + 20
    clock = ManualClock(day_start(FIRST_DAY))
    upstream = ScriptedUpstream(clock, account_id, played)
    tracker = Tracker(store, upstream, NoRatings(), clock=clock, owner="solo")
    retention = Retention(SimpleNamespace(expiring=store.tanks.expiring), clock=clock, pause=0)
    await store.tracked.track("eu", account_id, None, day_start(FIRST_DAY) + 5000 * 86400, clock())
    days = days_from(FIRST_DAY, last + 1)

    async def check(n: int) -> None:
        got = state_of(await store.tanks.chain_on("eu", account_id, days[n]))
        assert got is not None and got[1] == as_counters(upstream.state(n)), (n, got)

    for n, day in enumerate(days):
        clock.set(day_start(day) + 3600)
        # The account's own slice (the only account tracked): asking all SLICES is a query each,
        # 64 a day, most of this test's time.
        due = await store.tracked.due(slice_of("eu", account_id), day, 100)
        assert [a["account_id"] for a in due] == [account_id], day
        await tracker.visit(day, "eu", due)
        clock.set(day_start(day) + DAY_SECONDS - 1)
        await retention.run()
        if n >= HISTORY_DAYS - 1:
            await check(n - HISTORY_DAYS + 1)
            if n in (RETENTION_DAYS, 700, last):  # every day of the 400, read concurrently
                await asyncio.gather(*(check(m) for m in range(n - HISTORY_DAYS + 1, n + 1)))
    assert upstream.info_calls == len(days)
    assert upstream.tanks_calls == len(played)  # keeping costs no request


@pytest.mark.gen_test(timeout=60)
async def test_a_cached_read_of_a_parked_account_resumes_its_tracking(store):
    clock = ManualClock(due_at(FIRST_DAY, 0))
    tracker = Tracker(store, None, NoRatings(), clock=clock, owner="solo")
    await store.tracked.track("eu", 42, "x", until=clock() + 86400, now=clock())
    await store.tracked.park(["eu:42"], clock())
    slice_no = slice_of("eu", 42)
    assert await store.tracked.due(slice_no, FIRST_DAY, 10) == []
    await tracker.looked_up("eu", 42, clock())  # a cached profile read
    assert [a["account_id"] for a in await store.tracked.due(slice_no, FIRST_DAY, 10)] == [42]
    assert await store.tracked.count_active(clock() + 80 * 86400) == 1


class CountingUpstream:
    """Every account exists and never plays after its first visit; account/info calls are counted."""

    def __init__(self, clock):
        self.clock = clock
        self.info: dict[str, list[tuple[str, list[int]]]] = collections.defaultdict(list)

    async def account_info(self, region, ids, **kwargs):
        self.info[utc_day(self.clock())].append((region, list(ids)))
        return {a: {"nickname": f"n{a}", "last_battle_time": 1, "statistics": {"all": {}}} for a in ids}

    async def tanks_stats(self, region, account_id, **kwargs):
        return [{"tank_id": 1, "all": dict.fromkeys(TANK_COUNTERS, 1)}]

    async def account_wtr(self, region, ids, **kwargs):
        return dict.fromkeys(ids)  # nobody rated: the visit is the same


@pytest.mark.gen_test(timeout=240)
async def test_account_info_batches_are_whole_across_regions(store):
    """Due accounts are read 500 at a time whatever their region; a region's remainder waits for
    the next read instead of costing a partial account/info batch, so a day's pass costs one
    request per 100 accounts but for one partial batch per region (and slice group) at the end."""
    regions = {"eu": 530, "na": 330, "asia": 170}  # 1,030: reads of 500, 500 and 30
    accounts = [(r, 10_000_000 * (k + 1) + i) for k, (r, n) in enumerate(regions.items()) for i in range(n)]
    days = days_from(FIRST_DAY, 3)
    clock = ManualClock(day_start(days[0]))
    await track_all(store, accounts, until=clock() + 400 * 86400, now=clock())
    upstream = CountingUpstream(clock)
    whole = Tracker(store, upstream, NoRatings(), clock=clock, owner="whole", group=SLICES)
    grouped = Tracker(store, upstream, NoRatings(), clock=clock, owner="grouped")
    minimal = sum(-(-n // 100) for n in regions.values())
    for day, tracker, most in ((days[0], whole, minimal), (days[1], whole, minimal), (days[2], grouped, None)):
        clock.set(day_start(day) + 86400 - 600)  # every slice due: one pass over all of them
        await tracker.tick()
        calls = upstream.info[day]
        assert sorted((r, a) for r, ids in calls for a in ids) == sorted(accounts), day  # each once
        assert all(len(ids) <= 100 for _, ids in calls)
        partial = sum(len(ids) < 100 for _, ids in calls)
        if most is not None:  # one partial batch per region, with the last read
            assert len(calls) == most and partial == len(regions), (day, len(calls), partial)
        else:  # 8 groups of 8 slices: a partial batch per region and group at most
            assert partial <= len(regions) * (SLICES // 8) and len(calls) <= minimal + partial, (len(calls), partial)


class OneRealmHeld(CountingUpstream):
    """The first realm asked for account/info waits for `release` (a realm whose CDN stalls), or
    fails (`fail`: an upstream error); the other realms answer at once."""

    def __init__(self, clock, fail: bool = False):
        super().__init__(clock)
        self.fail = fail
        self.held: str | None = None
        self.release = asyncio.Event()

    async def account_info(self, region, ids, **kwargs):
        if self.held is None:
            self.held = region
        if region == self.held and not self.release.is_set():
            if self.fail:
                raise UpstreamError("the realm's CDN timed out")
            await self.release.wait()
        return await super().account_info(region, ids, **kwargs)


async def visited_on(store, day: str) -> set[str]:
    return {d["_id"] for d in await store.tracked.collection.find({"last_visit_day": day}, {"_id": 1}).to_list(None)}


@pytest.mark.gen_test(timeout=120)
async def test_a_stalled_realm_does_not_hold_back_the_others(store):
    """Each realm has its own throttle upstream: while one realm's requests hang, the pass
    visits the other realms' accounts, and finishes the stalled one's when it answers."""
    accounts = [(r, 10_000_000 * (k + 1) + i) for k, r in enumerate(REGIONS) for i in range(150)]
    day = FIRST_DAY
    clock = ManualClock(day_start(day) + 86400 - 600)  # every slice due
    await track_all(store, accounts, until=clock() + 400 * 86400, now=clock())
    upstream = OneRealmHeld(clock)
    tracker = Tracker(store, upstream, NoRatings(), clock=clock, owner="solo", group=SLICES)
    tick = asyncio.ensure_future(tracker.tick())
    for _ in range(600):  # up to 60 s on a loaded machine
        await asyncio.sleep(0.1)
        held = upstream.held
        if held and {f"{r}:{a}" for r, a in accounts if r != held} <= await visited_on(store, day):
            break
    assert held is not None and not tick.done()
    done = await visited_on(store, day)
    assert {f"{r}:{a}" for r, a in accounts if r != held} <= done, "the other realms waited for the stalled one"
    assert not any(key.startswith(held + ":") for key in done)
    upstream.release.set()
    assert await tick == SLICES  # the day's pass finished
    assert await visited_on(store, day) == {f"{r}:{a}" for r, a in accounts}


@pytest.mark.gen_test(timeout=120)
async def test_a_failing_realm_leaves_the_others_visited_and_its_own_for_the_next_tick(store):
    """An upstream error in one realm pauses the pass (its slices released, nothing marked for that
    realm), but the other realms' batches in flight are written and marked, not cut off."""
    accounts = [(r, 20_000_000 * (k + 1) + i) for k, r in enumerate(REGIONS) for i in range(120)]
    day = FIRST_DAY
    clock = ManualClock(day_start(day) + 86400 - 600)
    await track_all(store, accounts, until=clock() + 400 * 86400, now=clock())
    upstream = OneRealmHeld(clock, fail=True)
    tracker = Tracker(store, upstream, NoRatings(), clock=clock, owner="solo", group=SLICES)
    assert await tracker.tick() == 0  # paused: no slice finished
    failed = upstream.held
    done = await visited_on(store, day)
    assert not any(key.startswith(failed + ":") for key in done)
    assert any(not key.startswith(failed + ":") for key in done), "the other realms' batches were cut off"
    upstream.release.set()  # the realm answers again
    assert await tracker.tick() == SLICES
    assert await visited_on(store, day) == {f"{r}:{a}" for r, a in accounts}


def test_each_realms_share_of_the_pass_is_estimated_from_its_share_of_todays_visits():
    from server.domain.visits import realm_progress

    slices = [
        {"regions": {"eu": {"visited": 20, "info_requests": 1, "tanks_requests": 12}}},
        {"regions": {"eu": {"visited": 10, "info_requests": 1, "tanks_requests": 5}, "na": {"visited": 10}}},
        {},  # a slice claimed before any batch
    ]
    progress = realm_progress(slices, remaining=40, worked=100.0, done=False)
    assert progress["eu"] == {"visited": 30, "requests": 19, "remaining_estimate": 30, "eta_seconds": 100}
    assert progress["na"] == {"visited": 10, "requests": 0, "remaining_estimate": 10, "eta_seconds": 100}
    assert set(realm_progress(slices, remaining=0, worked=100.0, done=True)["na"].values()) == {10, 0}
    assert realm_progress([], remaining=5, worked=0.0, done=False) == {}


@pytest.mark.gen_test(timeout=120)
async def test_an_invalid_or_deleted_account_is_parked_and_costs_nothing_more(store, fast_sim, world):
    """The real API rejects a whole account/info list for one invalid id: the pass still visits
    every other account of the batch, and parks the invalid one and the one answered null."""
    from scripts.upstream_sim import missing_accounts

    good = existing_accounts("eu", 30, start=500_600_000)
    invalid = existing_accounts("na", 1)[0]  # another realm's id, tracked under eu
    deleted = missing_accounts("eu", 1)[0]
    accounts = [("eu", a) for a in [*good[:15], invalid, deleted, *good[15:]]]
    days = days_from(FIRST_DAY, 2)
    clock = ManualClock(due_at(days[0], 0))
    await track_all(store, accounts, until=clock() + 400 * 86400, now=clock())
    tracker, recording = make_tracker(store, fast_sim, clock, world, "solo")
    await run_days(tracker, clock, days[0], 1)
    assert {a for _, a in recording.tanks[days[0]]} == set(good)  # every good account measured
    books = {doc["_id"]: doc for doc in await store.tracked.collection.find({}).to_list(None)}
    assert books[f"eu:{invalid}"]["last_visit_day"] == "~" and books[f"eu:{deleted}"]["last_visit_day"] == "~"
    assert all(books[f"eu:{a}"]["last_visit_day"] == days[0] for a in good)
    await run_days(tracker, clock, days[1], 1)
    asked = {a for _, a in recording.info[days[1]]}
    assert asked == set(good)  # the parked ones cost no request the next day


def test_a_member_step_that_times_out_does_not_skip_the_later_steps(io_loop):
    """A clan refresh tracks members 500 at a time; on a loaded database one step may pass its
    deadline: the later steps are still written, and the failure is raised at the end (the clan
    refresh logs it; the next refresh repeats the failed step)."""
    from pymongo.errors import NetworkTimeout

    from server.services.tracker import MEMBERS_PER_STEP

    written: list[int] = []

    class Tracked:
        calls = 0

        async def track_many(self, region, accounts, until, now):
            Tracked.calls += 1
            if Tracked.calls == 1:
                raise NetworkTimeout("timed out")
            written.extend(a for a, _ in accounts)

    class Store:
        tracked = Tracked()

    members = [(account_id, None) for account_id in range(1, 3 * MEMBERS_PER_STEP + 1)]
    tracker = Tracker(Store(), None, None, clock=lambda: 0.0, owner="t")
    with pytest.raises(NetworkTimeout):
        io_loop.run_sync(lambda: tracker.track_members("eu", members, 0.0))
    assert written == [a for a, _ in members[MEMBERS_PER_STEP:]]  # steps 2 and 3 written
