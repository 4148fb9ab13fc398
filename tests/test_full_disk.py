"""A full disk loses nothing (issue 32, item 5): the embedded database on a small tmpfs, filled during
a tracker pass, until its storage engine fails for real; reads answer, /status says why, the pass
waits and leaves no account-day half written, and everything resumes by itself once space returns."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
import time

import pytest
import ujson
from pymongo import MongoClient
from tornado.httpclient import AsyncHTTPClient

from scripts.upstream_sim.world import World
from server.compose.embedded_db import EmbeddedDatabase, free_port
from server.compose.storage_watch import RESERVE_NAME, StorageWatch
from server.domain.days import DAY_SECONDS, ManualClock, day_start
from server.domain.records import state_of
from store.constants import REGIONS, TANK_COUNTERS
from store.errors import ENGINE_FAILED, storage_failure_reason
from store.tracker import tracked_id
from store.writes import write_health
from tests.helpers import EXPECTED_VALUES_FILE, make_config, simulator
from tests.test_tracker import accounts_to_track, make_tracker, track_all

DAY1, DAY2 = "2025-06-01", "2025-06-02"
# SecantusDB's log segments (10 MB each, two after a restart) + the reserve (24) + the floor (16)
# + the data, with what the test writes until the engine fails (up to a log segment's worth).
TMPFS_MB = 128
SIM_RPS = 200


def mount_tmpfs(directory: str, size_mb: int) -> str | None:
    """Mount a size-limited tmpfs on `directory`; the reason it cannot be, or None."""
    if os.geteuid() != 0:
        return "not root: mounting a size-limited tmpfs needs CAP_SYS_ADMIN"
    if shutil.which("mount") is None:
        return "no mount(8) on this machine"
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", directory], capture_output=True, text=True
    )
    if done.returncode != 0:
        return f"cannot mount a tmpfs here (no CAP_SYS_ADMIN?): {done.stderr.strip()}"
    return None


def fill(directory: str) -> int:
    """Write a filler file until ENOSPC; its size."""
    path = os.path.join(directory, "filler")
    subprocess.run(["dd", "if=/dev/zero", f"of={path}", "bs=256k"], capture_output=True)
    return os.path.getsize(path)


def break_the_engine(uri: str) -> str:
    """Other writes go on (here: the test's own) until the database refuses one for want of space:
    the real failure, whatever it is. Returns the classification of what it answered."""
    client: MongoClient = MongoClient(uri, serverSelectionTimeoutMS=2000, timeoutMS=10_000)
    try:
        for n in range(200_000):
            try:
                client["fill"]["junk"].insert_one({"n": n, "pad": "x" * 4000})
            except Exception as exc:
                return str(storage_failure_reason(exc))
        return "never refused"
    finally:
        client.close()


class Filling:
    """The tracker's upstream: fills the disk while the pass's `fill_after`-th account/info is answered."""

    def __init__(self, upstream, directory: str, fill_after: int, health):
        self.upstream, self.directory, self.fill_after, self.health = upstream, directory, fill_after, health
        self.info_calls = 0
        self.filled = asyncio.Event()

    async def account_info(self, region, ids, **kwargs):
        self.info_calls += 1
        call = self.info_calls  # the realms' batches ask at once: counted when asked, not answered
        result = await self.upstream.account_info(region, ids, **kwargs)
        if call == self.fill_after:
            await asyncio.to_thread(fill, self.directory)
            # The pass goes on at the simulator's pace (a batch in milliseconds), faster than the
            # watch looks (every second): this batch is answered once the watch has seen the disk.
            await wait_for(lambda: asyncio.sleep(0, self.health.held is not None), 5)
            self.filled.set()
        return result

    async def tanks_stats(self, region, account_id, **kwargs):
        return await self.upstream.tanks_stats(region, account_id, **kwargs)

    async def account_wtr(self, region, ids, **kwargs):
        return await self.upstream.account_wtr(region, ids, **kwargs)


def truth(world, region, account_id, at):
    tanks = world.tanks_stats(region, account_id, at, None) or []
    return {t["tank_id"]: {c: t["all"][c] for c in TANK_COUNTERS} for t in tanks if t["all"]["battles"]}


def account_days(db, day: str) -> dict[str, dict]:
    """Per tracked account: what the store holds of `day` (its own model: a visit mark, and for an
    account that played the day's per-tank record and snapshot, written before the mark)."""
    out = {}
    for doc in db.tracked.find({}, {"state": 0}):
        region, account_id = doc["_id"].split(":")
        out[doc["_id"]] = {
            "visited": doc.get("last_visit_day") == day,
            "record_day": doc.get("record_day"),
            "record": db.tank_records.count_documents({"_id": f"{doc['_id']}:{day}"}),
            "snapshot": db.snapshots.count_documents({"region": region, "account_id": int(account_id), "date": day}),
        }
    return out


def assert_whole(days: dict[str, dict], day: str) -> None:
    """A visited account-day is complete: an account that played has its record, its snapshot and
    its state at the day; one that did not has neither. An unvisited one is redone by the pass."""
    for key, got in days.items():
        if not got["visited"]:
            continue
        played = got["record_day"] == day
        assert got["record"] == int(played) and got["snapshot"] == int(played), (key, got)


async def get(port: int, path: str) -> tuple[int, dict]:
    response = await AsyncHTTPClient().fetch(
        f"http://127.0.0.1:{port}/api/v1{path}", raise_error=False, request_timeout=10
    )
    return response.code, (ujson.loads(response.body) if response.body else {})


async def wait_for(predicate, timeout: float, step: float = 0.25):
    deadline = time.monotonic() + timeout
    while True:
        value = await predicate()
        if value or time.monotonic() > deadline:
            return value
        await asyncio.sleep(step)


@pytest.fixture
def tmpfs():
    directory = tempfile.mkdtemp(prefix="statsapi-full-disk-")
    reason = mount_tmpfs(directory, TMPFS_MB)
    if reason is not None:
        os.rmdir(directory)
        pytest.skip(reason)
    try:
        yield directory
    finally:
        subprocess.run(["umount", "-l", directory], capture_output=True)
        os.rmdir(directory)


@pytest.fixture(scope="module")
def fast_sim():
    with simulator(SIM_RPS, throttle=",".join(f"{realm}={SIM_RPS}" for realm in REGIONS)) as url:
        yield url


@pytest.mark.gen_test(timeout=120)
async def test_a_full_disk_during_a_pass_loses_nothing_and_writing_resumes_by_itself(tmpfs, fast_sim):
    from server.compose.app import make_app
    from server.compose.bootstrap import connect_store, make_http_server
    from server.compose.wiring import build_services
    from server.serving.ratelimit import RateLimiter

    started = time.monotonic()
    database = EmbeddedDatabase(os.path.join(tmpfs, "db")).start().supervise()  # durable, as served
    server = store = None
    stop = asyncio.Event()
    loops: list[asyncio.Task] = []
    try:
        clock = ManualClock(day_start(DAY1) + DAY_SECONDS - 1)
        config = make_config(upstream_base_url=fast_sim, db_name="fulldisk", rate_limit_scale=20)
        store = await connect_store(config, database.uri)
        limiter = RateLimiter(store.rate_counters, scale=config.rate_limit_scale)
        services = await build_services(config, store, limiter, clock=clock)
        services.embedded_database = database
        app = make_app(config, store, limiter, services)
        port = free_port()
        server = make_http_server(app, config)
        server.listen(port, "127.0.0.1")
        world = World(expected_values=EXPECTED_VALUES_FILE, profile_cache=100_000)
        accounts = accounts_to_track()
        await track_all(store, accounts, until=clock() + 400 * 86400, now=clock())
        watch = StorageWatch(store, lambda: database)
        loops.append(asyncio.create_task(watch.run(stop)))
        await wait_for(lambda: asyncio.sleep(0, os.path.exists(os.path.join(tmpfs, "db", RESERVE_NAME))), 10)

        # Day 1, whole: what must survive.
        tracker, _ = make_tracker(store, fast_sim, clock, world, "solo", rps=SIM_RPS, batch=10)
        await tracker.tick()
        sample = [a for a in accounts if a[0] == "eu"][:3] + [a for a in accounts if a[0] == "na"][:2]
        before = {}
        for region, account_id in sample:
            for kind in ("history?days=30", "tanks?days=30"):
                code, body = await get(port, f"/player/{account_id}/{region}/{kind}")
                assert code == 200, (kind, body)
                before[(region, account_id, kind)] = body["data"]
        status, body = await get(port, "/status")
        assert body["data"]["database"]["writable"] is True, body["data"]

        # Day 2: the disk fills while the pass's third account/info (of nine batches) is answered.
        clock.set(day_start(DAY2) + DAY_SECONDS - 1)
        tracker, _ = make_tracker(store, fast_sim, clock, world, "solo", rps=SIM_RPS, batch=10)
        filling = Filling(tracker.upstream, tmpfs, fill_after=3, health=write_health(store.client))
        tracker.upstream = filling
        loops.append(asyncio.create_task(tracker.run(stop)))
        await asyncio.wait_for(filling.filled.wait(), 30)

        # The pass stops before its next batch (no request spent on what could not be stored): the
        # other realms' batches asked at the same time are the only requests after the filling one ...
        await wait_for(lambda: asyncio.sleep(0, tracker.waiting is not None), 10)
        calls = filling.info_calls
        assert filling.fill_after <= calls < filling.fill_after + len(REGIONS), calls
        # ... while other writes go on until the database refuses one: its engine fails for real.
        refused = await asyncio.to_thread(break_the_engine, database.uri)
        assert refused in (ENGINE_FAILED, "no space left on device"), refused

        # Reads answer again (the watch freed the reserve and restarted the database; days=29: an
        # answer the answer cache has never kept) ...
        assert await wait_for(lambda: asyncio.sleep(0, watch.restarts == 1), 20), "no restart"

        async def reads_answer():
            code, _ = await get(port, f"/player/{sample[0][1]}/{sample[0][0]}/history?days=29")
            return code == 200

        assert await wait_for(reads_answer, 20), "reads did not come back"
        # The supervisor thread records the restart just after the child's first ping answers, so a
        # read can answer a moment before the status says so.
        assert await wait_for(
            lambda: asyncio.sleep(0, database.status()["state"] == "running" and database.restarts == 1), 10
        ), database.status()
        # ... with everything stored before, unchanged.
        for (region, account_id, kind), data in before.items():
            code, body = await get(port, f"/player/{account_id}/{region}/{kind}")
            assert code == 200, (kind, body)
            if kind.startswith("history"):
                days_then = {s["date"]: s for s in data["snapshots"] if s["date"] <= DAY1}
                days_now = {s["date"]: s for s in body["data"]["snapshots"] if s["date"] <= DAY1}
                assert days_now == days_then, (region, account_id)
        # /status says why, and since when.
        code, body = await get(port, "/status")
        assert code == 200, body
        status = body["data"]
        assert status["health"] == "degraded"
        assert status["database"]["writable"] is False
        assert "no space left on device" in status["database"]["write_error"]["reason"]
        assert any(r.startswith("database cannot write: no space left on device") for r in status["health_reasons"])
        # No account-day is half written, and the pass does not spin.
        mongo: MongoClient = MongoClient(database.uri, serverSelectionTimeoutMS=3000)
        db = mongo["fulldisk"]
        assert_whole(account_days(db, DAY2), DAY2)
        await asyncio.sleep(2)
        assert filling.info_calls == calls

        # Space returns: writing resumes by itself, the pass completes the day.
        os.unlink(os.path.join(tmpfs, "filler"))

        async def day_done():
            finished = await store.tracked.finished_slices(DAY2)
            return len(finished) == 64

        assert await wait_for(day_done, 40), "the pass did not finish the day"

        async def healthy():
            code, body = await get(port, "/status")
            return code == 200 and body["data"]["database"]["writable"] and body["data"]

        status = await wait_for(healthy, 10)
        assert status and status["database"]["write_error"] is None, status
        assert not [r for r in status["health_reasons"] if "database" in r], status["health_reasons"]
        days = account_days(db, DAY2)
        assert all(got["visited"] for got in days.values())
        assert_whole(days, DAY2)
        for region, account_id in accounts:
            got = state_of(await store.tanks.chain_on(region, account_id, DAY2))
            assert got is not None and got[1] == truth(world, region, account_id, clock()), (region, account_id)
        assert write_health(store.client).writable
        assert tracked_id(*accounts[0]) in days
        mongo.close()
        assert time.monotonic() - started < 90
    finally:
        stop.set()
        if loops:
            await asyncio.wait(loops, timeout=10)
        if server is not None:
            server.stop()
        if store is not None:
            store.client.close()
        database.stop()


def test_what_says_the_database_cannot_write_on_mongod_and_on_secantusdb():
    from pymongo.errors import BulkWriteError, DuplicateKeyError, OperationFailure

    from store.errors import DATABASE_ERRORS, is_storage_failure

    def failure(code, message, name=None):
        return OperationFailure(message, code, {"ok": 0, "code": code, "errmsg": message, "codeName": name})

    cases = {
        # mongod: its disk-space monitor / file allocation, and WiredTiger's strerror in errmsg
        failure(14031, "Can't take a write lock while out of disk space", "OutOfDiskSpace"): "no space left on device",
        failure(8, "WiredTiger error (28) [...] No space left on device", "UnknownError"): "no space left on device",
        failure(8, "write failed: Disk quota exceeded"): "disk quota exceeded",
        failure(8, "open: Read-only file system"): "read-only file system",
        # SecantusDB after its engine panicked on ENOSPC (measured)
        failure(1, "internal server error", "InternalError"): ENGINE_FAILED,
        BulkWriteError(
            {"writeErrors": [{"index": 0, "code": 14031, "errmsg": "out of disk space"}], "nInserted": 3}
        ): "no space left on device",
    }
    for exc, reason in cases.items():
        assert storage_failure_reason(exc) == reason, exc
        assert is_storage_failure(exc) and isinstance(exc, DATABASE_ERRORS)  # a request answers 503
    for exc in (DuplicateKeyError("E11000 duplicate key", 11000), failure(2, "bad query"), ValueError("x")):
        assert storage_failure_reason(exc) is None and not isinstance(exc, DATABASE_ERRORS)


@pytest.mark.gen_test(timeout=10)
async def test_jobs_wait_while_the_database_cannot_write_and_failed_claims_back_off():
    from types import SimpleNamespace

    from pymongo.errors import OperationFailure

    from server.jobs.runner import JobRunner
    from store.writes import WriteHealth

    claims, runs = [], []
    full = OperationFailure("No space left on device", 8, {"errmsg": "No space left on device", "code": 8})

    async def acquire(*args):
        return True

    async def claim(name, slot):
        claims.append(slot)
        raise full

    async def run(slot):
        runs.append(slot)
        return "ok"

    health = WriteHealth()
    store = SimpleNamespace(
        client=SimpleNamespace(statsapi_writes=health),
        db={},
        leases=SimpleNamespace(acquire=acquire),
        job_runs=SimpleNamespace(claim=claim),
    )
    runner = JobRunner(store, clock=lambda: 1000.0)  # type: ignore[arg-type]
    runner.add("sampler", 60, run)
    for _ in range(20):  # twenty ticks: one claim, then the back-off (never every tick)
        await runner.run_due()
        await asyncio.sleep(0)
    assert len(claims) == 1 and not runs
    health.hold("no space left on device")
    runner.jobs[0].retry_at = 0.0
    for _ in range(5):  # while it cannot write, no job is claimed at all
        await runner.run_due()
    assert len(claims) == 1 and runner.paused == "no space left on device"
