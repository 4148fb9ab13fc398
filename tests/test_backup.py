"""Backups restore: the demo database backed up while the jobs write, restored by the command into a
fresh data directory and served from there, answers every complete day as the original did; a
kill -9 during a backup leaves the previous backup whole and nothing that restores."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import signal
import subprocess
import sys
import time

import pytest
import ujson
from tornado.httpclient import AsyncHTTPClient, HTTPRequest

from server.compose.demo import SimulatorLists, seed_demo
from server.compose.embedded_db import running_uri
from store import create_client
from store.backup import BackupError, list_backups, read_manifest, restore_backup, write_backup
from store.client import deadline
from tests.helpers import FAST_REALMS, ROOT, ServerProcess, wait_until

DAY = 86400
SCALE = "100"  # rate limits x100: the comparison reads every seeded account's answers


@pytest.fixture
def app_overrides(fast_upstream_sim):
    # The seeding's clan refresh rates every member: at the fast simulator's rates, not a real quota's.
    return {
        "upstream_base_url": fast_upstream_sim,
        "rate_limit_scale": float(SCALE),
        "upstream_rps": 100.0,
        "upstream_realm_rps": tuple((realm, rate * 0.8) for realm, rate in FAST_REALMS.items()),
    }


def run_command(*args: str, data_dir: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = dict(os.environ, STATSAPI_APPLICATION_ID="test-app-id-secret")
    return subprocess.run(
        [sys.executable, "-m", "server", *args, "--data-dir", data_dir],
        cwd=str(ROOT),
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


async def get_data(base: str, path: str) -> dict:
    response = await AsyncHTTPClient().fetch(HTTPRequest(base + path, request_timeout=60), raise_error=False)
    assert response.code == 200, (base + path, response.code, response.body[:300])
    return ujson.loads(response.body)["data"]


def complete_days(data: dict, today: str) -> dict:
    """An answer with only what belongs to complete UTC days (lists of dated rows are cut at today)."""
    out = {}
    for key, value in data.items():
        if isinstance(value, list) and value and isinstance(value[0], dict) and "date" in value[0]:
            out[key] = [row for row in value if row["date"] < today]
        elif key not in ("built_at", "as_of", "cached_at", "generated_at", "age_seconds"):
            out[key] = value
    return out


def difference(restored: dict, original: dict) -> list:
    out = []
    for key in sorted(set(restored) | set(original)):
        a, b = restored.get(key), original.get(key)
        if a != b:
            if isinstance(a, list) and isinstance(b, list):
                out.append((key, [(x, y) for x, y in zip(a, b) if x != y][:3], len(a), len(b)))
            else:
                out.append((key, a, b))
    return out


async def documents_before(uri: str, db_name: str, collection: str, field: str, before: dt.datetime) -> dict:
    client = create_client(uri)
    try:
        with deadline(120):
            docs = await client[db_name][collection].find({field: {"$lt": before}}).to_list(None)
        # built_at: a day's population sums may be rebuilt (the same sums) after the day ended.
        return {str(doc["_id"]): {k: v for k, v in doc.items() if k != "built_at"} for doc in docs}
    finally:
        client.close()


@pytest.mark.gen_test(timeout=900)
async def test_demo_backed_up_while_jobs_write_restores_every_complete_day(
    app, http_client, base_url, fast_upstream_sim, mongo_uri, db_name, tmp_path
):
    store, services = app.settings["store"], app.settings["services"]
    now = time.time()
    with deadline(600):
        seeded = await seed_demo(
            store,
            services,
            SimulatorLists(fast_upstream_sim),
            players_per_region=4,
            clans_per_region=1,
            history_days=6,
            population_per_region=8,
            population_days=5,
            online_days=1,
            online_recent_hours=1,
            now=now,
        )
    today = dt.datetime.fromtimestamp(now, dt.UTC).date().isoformat()
    today_start = dt.datetime.fromisoformat(today).replace(tzinfo=dt.UTC)
    accounts = [
        (int(doc["account_id"]), doc["region"]) for doc in await store.tracked.collection.find({}).to_list(None)
    ]
    assert len(accounts) >= 12, seeded

    # What the original answers (every page the round trip must give back).
    paths = [f"/api/v1/player/{a}/{r}/history?days=30" for a, r in accounts[:8]]
    paths += [f"/api/v1/player/{a}/{r}/tanks?days=7" for a, r in accounts[:8]]
    paths += [f"/api/v1/online/history?game=wot&region={r}&days=7" for r in ("eu", "na", "asia")]
    paths += [f"/api/v1/tanks/stats?region={r}&days={d}" for r in ("eu", "na") for d in (7, 30)]
    versions = {r: await store.expected_tables.latest_version(r) for r in ("eu", "na", "asia")}
    paths += [f"/api/v1/expected-values?region={r}&version={v}" for r, v in versions.items() if v]
    before = {path: complete_days(await get_data(base_url, path), today) for path in paths}

    # The backup runs while the jobs (the tracker's loop, the online sampler, the population
    # build, retention) write.
    stop = asyncio.Event()
    jobs = asyncio.ensure_future(services.jobs.run(stop))
    target = str(tmp_path / "backup")
    try:
        await asyncio.sleep(1.0)
        manifest = await write_backup(store, target, pause=0.001)
    finally:
        stop.set()
        await asyncio.wait_for(jobs, 60)
    # What the original answers for its complete days once the jobs stopped: the same as before
    # the backup (the jobs wrote only today's documents, or what answers the same).
    original = {path: complete_days(await get_data(base_url, path), today) for path in paths}
    changed = {path: (before[path], original[path]) for path in paths if before[path] != original[path]}
    assert not changed, changed
    assert manifest["complete_days_through"] < today
    assert manifest["collections"]["tank_records"]["documents"] > 0
    assert manifest["collections"]["snapshots"]["documents"] > 0
    assert not [name for name in os.listdir(tmp_path) if name.startswith(".")], "the partial directory was left"

    # Restored by the command into a fresh data directory (it starts the embedded database itself).
    fresh = str(tmp_path / "fresh")
    done = run_command("restore", "--from", target, data_dir=fresh)
    assert done.returncode == 0, done.stderr
    assert "restored" in done.stdout
    again = run_command("restore", "--from", target, data_dir=fresh)
    assert again.returncode == 1 and "already holds collected data" in again.stderr

    served = ServerProcess(
        tmp_path,
        "--data-dir",
        fresh,
        "--no-jobs",
        "--upstream-base-url",
        fast_upstream_sim,
        "--rate-limit-scale",
        SCALE,
        name="restored",
    )
    try:
        restored_base = f"http://127.0.0.1:{served.port}"
        for path in paths:
            restored = complete_days(await get_data(restored_base, path), today)
            assert restored == original[path], (path, difference(restored, original[path]))
        # Every document of a complete day, byte for byte, in each day-partitioned collection.
        restored_uri = running_uri(os.path.join(fresh, "db"))
        assert restored_uri
        for name, info in manifest["collections"].items():
            kind, _, field = info["walk"].partition(":")
            if kind != "day":
                continue
            mine = await documents_before(mongo_uri, db_name, name, field, today_start)
            theirs = await documents_before(restored_uri, "statsapi", name, field, today_start)
            assert theirs == mine, name
        # The nickname search works from the restored accounts (its prefix table was rebuilt).
        account, region = accounts[0]
        nickname = (await store.tracked.collection.find_one({"region": region, "account_id": account}))["nickname"]
        found = await get_data(restored_base, f"/api/v1/players?search={nickname[:4]}&region={region}")
        assert found["source"] == "tracked" and account in [row["account_id"] for row in found["results"]], found
    finally:
        served.stop()


@pytest.mark.gen_test(timeout=300)
async def test_restore_refuses_a_damaged_backup_and_a_second_restore_changes_nothing(app, tmp_path):
    store = app.settings["store"]
    with deadline(60):
        await store.players.save_snapshots(
            [
                {"region": "eu", "account_id": 7, "date": f"2026-01-{d:02d}", "battles": 10 * d, "wins": 5 * d}
                for d in range(1, 11)
            ]
        )
        await store.clans.seeds.insert_one({"_id": "eu:42", "region": "eu", "clan_id": 42})
    target = str(tmp_path / "b")
    manifest = await write_backup(store, target, pause=0)
    assert manifest["collections"]["snapshots"]["documents"] == 10
    assert read_manifest(target)["documents"] == manifest["documents"]
    with pytest.raises(BackupError, match="not an empty directory"):
        await write_backup(store, target, pause=0)

    # Into the same database: refused while it holds data; with force, the same data as once.
    with pytest.raises(BackupError, match="already holds collected data"):
        await restore_backup(store, target)
    before = await store.players.snapshots.find({}, {"_id": 0}).sort("date", 1).to_list(None)
    report = await restore_backup(store, target, force=True)
    assert report["restored"]["snapshots"] == 10
    after = await store.players.snapshots.find({}, {"_id": 0}).sort("date", 1).to_list(None)
    assert after == before

    # A flipped byte is found before anything is written.
    damaged = os.path.join(target, "snapshots.bson.gz")
    with open(damaged, "r+b") as fh:
        fh.seek(20)
        byte = fh.read(1)
        fh.seek(20)
        fh.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(BackupError, match="checksum"):
        await restore_backup(store, target, force=True)


def test_kill_9_during_a_backup_leaves_the_previous_one_whole_and_no_partial_one_that_restores(tmp_path):
    data_dir = str(tmp_path / "data")
    # A database with enough to take a while: a server seeds nothing; the command writes it.
    seeding = subprocess.run(
        [sys.executable, "-c", SEED_SCRIPT, data_dir],
        cwd=str(ROOT),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert seeding.returncode == 0, seeding.stderr
    first = str(tmp_path / "first")
    done = run_command("backup", "--to", first, data_dir=data_dir)
    assert done.returncode == 0, done.stderr
    first_manifest = read_manifest(first)

    second = str(tmp_path / "second")
    env = dict(os.environ, STATSAPI_APPLICATION_ID="test-app-id-secret")
    proc = subprocess.Popen(
        [sys.executable, "-m", "server", "backup", "--to", second, "--data-dir", data_dir],
        cwd=str(ROOT),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    partial = tmp_path / f".second.partial-{proc.pid}"

    def midway() -> bool:  # the snapshots (the collection with data) under way
        return (partial / "snapshots.bson.gz").exists()

    try:
        wait_until(midway, 120, step=0.01)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the command and the database it started
        proc.wait(10)
    assert not os.path.exists(second), "a killed backup must not appear under its name"
    assert [b["name"] for b in list_backups(str(tmp_path))] == ["first"]
    assert read_manifest(first) == first_manifest  # verified: every file's size and checksum
    refused = run_command("restore", "--from", str(partial), data_dir=str(tmp_path / "elsewhere"))
    assert refused.returncode == 1 and "not a complete backup" in refused.stderr
    # The database the killed command started stops with it (SIGTERM on its parent's death);
    # once it has, the data directory is usable again: the next backup completes.
    storage = os.path.join(data_dir, "db")

    def database_gone() -> bool:
        found = subprocess.run(["pgrep", "-f", f"storage-path {storage}"], capture_output=True)
        return found.returncode == 1

    assert wait_until(database_gone, 60, step=0.2), "the database of a killed backup kept running"
    retry = run_command("backup", "--to", second, data_dir=data_dir)
    assert retry.returncode == 0, retry.stderr
    assert read_manifest(second)["documents"] == first_manifest["documents"]


SEED_SCRIPT = """
import asyncio, datetime as dt, sys
from server.compose.embedded_db import EmbeddedDatabase
from store import Store, create_client
from store.client import deadline

async def main(uri):
    store = Store(create_client(uri), "statsapi", capped=False, ttl_indexes=False)
    await store.ensure_schema()
    today = dt.datetime.now(dt.UTC).date()
    with deadline(300):
        for day in range(30):
            date = (today - dt.timedelta(days=day + 1)).isoformat()
            await store.players.save_snapshots(
                [{"region": "eu", "account_id": a, "date": date, "battles": 1000 + a + day, "wins": 500}
                 for a in range(200)]
            )
    store.client.close()

db = EmbeddedDatabase(sys.argv[1] + "/db").start()
try:
    asyncio.run(main(db.uri))
finally:
    db.stop()
"""


async def fresh_store(mongo_uri: str):
    import uuid

    from store import Store

    client = create_client(mongo_uri)
    store = Store(client, "t_" + uuid.uuid4().hex[:12], rate_collection_bytes=1 << 20, ttl_indexes=False)
    await store.ensure_schema()
    return store


@pytest.mark.gen_test(timeout=120)
async def test_a_backup_of_an_older_data_model_restores_into_the_current_one(store, mongo_uri, tmp_path):
    """Per-tank records from before the (a, d) fields, backed up with that database's markers,
    come back migrated: every byte kept, readable through the current index, counted."""
    from store.tanks import MIGRATION, TankRecords, pack

    state = {1: [5] * 13, 2305: [7] * 13}
    old = []
    for day in ("2026-01-01", "2026-01-02", "2026-01-05"):
        doc = TankRecords.record("eu", 500_000_009, day, 100, pack(state), True)
        doc.pop("a"), doc.pop("d")
        old.append(doc)
    await store.tanks.collection.insert_many([dict(doc) for doc in old])
    await store.tanks.migrations.delete_one({"_id": MIGRATION})  # as that release wrote it
    manifest = await write_backup(store, str(tmp_path / "old"), pause=0)
    assert MIGRATION not in manifest["data_model"]

    target = await fresh_store(mongo_uri)
    try:
        report = await restore_backup(target, str(tmp_path / "old"))
        assert report["restored"]["tank_records"] == 3
        restored = {doc["_id"]: doc async for doc in target.tanks.collection.find({})}
        for doc in old:
            assert bytes(restored[doc["_id"]]["t"]) == bytes(doc["t"])
            assert restored[doc["_id"]]["a"] == "eu:500000009"
        assert await target.tanks.migrations.find_one({"_id": MIGRATION}) is not None
        assert await target.tanks.count() == 3
        got = await target.tanks.state_on("eu", 500_000_009, "2026-01-04")
        assert got is not None and got[0] == "2026-01-02"
    finally:
        target.client.close()


def test_restoring_a_backup_twice_leaves_the_same_data_as_once(io_loop, mongo_uri, tmp_path_factory):
    """Hypothesis: any set of snapshots and clan seeds, backed up, restored once and then again
    with --force into the same database, is stored exactly as after one restore."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    snapshot = st.fixed_dictionaries(
        {
            "account_id": st.integers(1, 50),
            "date": st.dates(dt.date(2025, 1, 1), dt.date(2025, 12, 31)).map(dt.date.isoformat),
            "battles": st.integers(0, 10**6),
            "wins": st.integers(0, 10**6),
        }
    )

    @settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(snapshots=st.lists(snapshot, max_size=40), seeds=st.sets(st.integers(1, 10**9), max_size=5))
    def check(snapshots, seeds):
        async def run() -> None:
            source, target = await fresh_store(mongo_uri), await fresh_store(mongo_uri)
            try:
                if snapshots:
                    await source.players.save_snapshots([{"region": "eu", **s} for s in snapshots])
                for clan_id in seeds:
                    await source.clans.seeds.insert_one({"_id": f"eu:{clan_id}", "region": "eu", "clan_id": clan_id})
                directory = str(tmp_path_factory.mktemp("twice") / "b")
                await write_backup(source, directory, pause=0)

                async def stored() -> dict:
                    return {
                        name: sorted(map(repr, await target.db[name].find({}).to_list(None)))
                        for name in ("snapshots", "clan_seeds", "tracked", "tank_records")
                    }

                await restore_backup(target, directory)
                once = await stored()
                await restore_backup(target, directory, force=True)
                assert await stored() == once
                assert len(once["clan_seeds"]) == len(seeds)
                assert once["snapshots"] == sorted(map(repr, await source.players.snapshots.find({}).to_list(None)))
            finally:
                source.client.close()
                target.client.close()

        io_loop.run_sync(run, timeout=120)

    check()
