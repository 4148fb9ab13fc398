"""Backups restore: the demo database backed up by the operator's command while the tracker and the
jobs write, restored by the command into a fresh data directory and served from there, answers every
complete day as the original did (every account, period, region and game); a kill -9 during a backup
leaves the previous backup whole and nothing that restores."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import signal
import subprocess
import sys
import time
from asyncio.subprocess import PIPE

import pytest
import ujson
from tornado.httpclient import AsyncHTTPClient, HTTPRequest

from server.compose.demo import SimulatorLists, seed_demo
from server.compose.embedded_db import running_uri
from server.contract.catalogue import POPULATION_PERIODS
from server.domain.expected import ComputedRow, Fit, Minimums
from server.services.population import expected_document
from store import create_client
from store.backup import BackupError, list_backups, read_manifest, restore_backup, write_backup
from store.client import deadline
from store.constants import GAMES, REGIONS
from store.tracker import slice_of
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


def run_command(*args: str, data_dir: str, timeout: float = 600, **env_extra: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, STATSAPI_APPLICATION_ID="test-app-id-secret", **env_extra)
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
    """An answer with only what belongs to complete UTC days (lists of dated rows are cut at today),
    without the leaderboard places (a cache a backup leaves out: the next daily build ranks again)."""
    out = {}
    for key, value in data.items():
        if isinstance(value, list) and value and isinstance(value[0], dict) and "date" in value[0]:
            out[key] = [row for row in value if row["date"] < today]
        elif key not in ("built_at", "as_of", "cached_at", "generated_at", "age_seconds"):
            out[key] = without_places(value)
    return out


def without_places(value):
    if isinstance(value, dict):
        return {k: without_places(v) for k, v in value.items() if k != "place"}
    if isinstance(value, list):
        return [without_places(v) for v in value]
    return value


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


async def tracker_writes_while(
    proc, store, services, lists, tracked: set, compared: set, today: str, now: float
) -> list:
    """The service's own tracker visits newly tracked accounts while `proc` (the backup) runs: each
    tracked in a slice that holds no compared account (their answers stay as they were), its
    slice's pass of today reopened, worked at once. Returns the accounts whose visit ended with
    `proc` running."""
    seeded_slices = {slice_of(r, a) for r, a in compared}
    candidates = [
        (region, a)
        for region in ("eu", "na", "asia")
        for a in await lists.accounts(region, 300)
        if (region, a) not in tracked and slice_of(region, a) not in seeded_slices
    ]
    written = []
    for region, account_id in candidates:
        if proc.returncode is not None or len(written) >= 6:
            break
        await store.tracked.track_many(region, [(account_id, None)], now + 30 * DAY, now)
        slice_no = slice_of(region, account_id)
        await store.tracked.slices.delete_one({"_id": f"{today}:{slice_no:03d}"})  # today's pass reopened
        await services.tracker.work_slices(today, [slice_no])
        if proc.returncode is None:
            written.append((region, account_id))
    return written


@pytest.mark.gen_test(timeout=900)
async def test_demo_backed_up_by_the_command_while_the_tracker_and_jobs_write_restores_every_complete_day(
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
    # The demo's population is too small for the tank-statistics job to compute expected values:
    # a computed table per region is stored as the job stores one (expected_document), so that
    # /expected-values?version= has a version to give back.
    loaded = await services.ratings_source.expected_values()
    rows = {t: ComputedRow(e, 25 + t % 7, 900 + t % 13) for t, e in sorted(loaded.items())[:40]}
    yesterday = (dt.date.fromisoformat(today) - dt.timedelta(days=1)).isoformat()
    for region in REGIONS:
        document = expected_document(
            region,
            yesterday,
            {"gaps": (Fit(rows, 3, True), set()), "computed": (Fit(rows, 5, True), set())},
            Minimums(),
            None,
            now,
        )
        await store.expected_tables.save(document)
    # Every account of the demo with a complete day: the seeded players and population (the clans'
    # members are tracked too, from today on).
    tracked = {(doc["region"], int(doc["account_id"])) for doc in await store.tracked.collection.find({}).to_list(None)}
    with_history = {
        (doc["region"], int(doc["account_id"]))
        for doc in await store.players.snapshots.find({"date": {"$lt": today}}, {"region": 1, "account_id": 1}).to_list(
            None
        )
    }
    accounts = sorted((a, r) for r, a in with_history & tracked)
    assert len(accounts) == 36, seeded

    # What the original answers: every page the round trip must give back, for every seeded account,
    # period, region and game.
    paths = [f"/api/v1/player/{a}/{r}/history?days=30" for a, r in accounts]
    paths += [f"/api/v1/player/{a}/{r}/tanks?days={d}" for a, r in accounts for d in POPULATION_PERIODS]
    paths += [f"/api/v1/tanks/stats?region={r}&days={d}" for r in REGIONS for d in POPULATION_PERIODS]
    paths += [f"/api/v1/online/history?game={g}&region={r}&days=7" for g in GAMES for r in (*REGIONS, "all")]
    versions = {r: await store.expected_tables.latest_version(r) for r in REGIONS}
    paths += [f"/api/v1/expected-values?region={r}&version={v}" for r, v in versions.items()]
    before = {path: complete_days(await get_data(base_url, path), today) for path in paths}

    # The operator's command backs up the running service's database while the jobs (the
    # tracker's loop, the online sampler, the population build, retention) run and the tracker
    # visits accounts: today's documents are written during the backup.
    stop = asyncio.Event()
    jobs = asyncio.ensure_future(services.jobs.run(stop))
    target = tmp_path / "backup"
    env = dict(os.environ, STATSAPI_APPLICATION_ID="test-app-id-secret")
    command = ["backup", "--to", str(target), "--mongodb-uri", mongo_uri, "--db-name", db_name]
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server", *command, cwd=str(ROOT), env=env, stdout=PIPE, stderr=PIPE
    )
    try:
        for _ in range(600):  # the command's start-up: until its partial directory appears
            if proc.returncode is not None or any(p.name.startswith(".backup.partial-") for p in tmp_path.iterdir()):
                break
            await asyncio.sleep(0.05)
        assert proc.returncode is None, "the backup ended before it began writing"
        written = await tracker_writes_while(
            proc, store, services, SimulatorLists(fast_upstream_sim), tracked, {(r, a) for a, r in accounts}, today, now
        )
        out, err = await asyncio.wait_for(proc.communicate(), 600)
    finally:
        if proc.returncode is None:
            proc.kill()
        stop.set()
        await asyncio.wait_for(jobs, 60)
    assert proc.returncode == 0, err.decode()[-2000:]
    assert b"backed up" in out
    # The tracker wrote during the backup: each visit's snapshot and per-tank record of today
    # were stored while the command was still reading.
    assert written, "the tracker wrote nothing while the backup ran"
    for region, account_id in written:
        assert await store.players.snapshots.find_one({"region": region, "account_id": account_id, "date": today})
        assert await store.tanks.collection.find_one({"a": f"{region}:{account_id}", "d": today})
    manifest = read_manifest(str(target))
    # What the original answers for its complete days once the jobs stopped: the same as before
    # the backup (the jobs and the tracker wrote only today's documents, or what answers the same).
    original = {path: complete_days(await get_data(base_url, path), today) for path in paths}
    changed = {path: (before[path], original[path]) for path in paths if before[path] != original[path]}
    assert not changed, changed
    assert manifest["complete_days_through"] < today
    for name in ("tank_records", "snapshots", "tank_changes", "tank_days", "tank_periods", "tank_series"):
        assert manifest["collections"][name]["documents"] > 0, name
    for name in ("online_samples", "online_peaks", "expected_tables", "tracked", "clan_seeds"):
        assert manifest["collections"][name]["documents"] > 0, name
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")], "the partial directory was left"

    # Restored by the command into a fresh data directory (it starts the embedded database itself).
    fresh = str(tmp_path / "fresh")
    done = run_command("restore", "--from", str(target), data_dir=fresh)
    assert done.returncode == 0, done.stderr
    assert "restored" in done.stdout
    again = run_command("restore", "--from", str(target), data_dir=fresh)
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
    done = run_command("backup", "--to", first, data_dir=data_dir, STATSAPI_BACKUP_DUTY="1")  # no rests
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
    # The database the killed command started stops with it (SIGKILL on its parent's death);
    # once it has, the data directory is usable again: the next backup completes.
    storage = os.path.join(data_dir, "db")

    def database_gone() -> bool:
        found = subprocess.run(["pgrep", "-f", f"storage-path {storage}"], capture_output=True)
        return found.returncode == 1

    assert wait_until(database_gone, 60, step=0.2), "the database of a killed backup kept running"
    retry = run_command("backup", "--to", second, data_dir=data_dir, STATSAPI_BACKUP_DUTY="1")
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
    from server.domain.records import pack, state_of
    from store.tanks import MIGRATION, TankRecords

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
        got = state_of(await target.tanks.chain_on("eu", 500_000_009, "2026-01-04"))
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


def test_the_windows_of_a_walk_hold_every_document_once():
    """Hypothesis: whatever the documents (other accounts than the tracked ones, other regions, a
    field missing, days far back or ahead, a timestamp field dense or sparse) and whatever each
    window held, the account walk's and the day walk's windows together match every document
    exactly once (mongomock's matcher, the server's semantics for these operators)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from mongomock.filtering import filter_applies

    from store.backup import DAY, _AccountWalk, _DayWalk

    regions = st.sampled_from(["eu", "na", "asia", "aa", "fr", "zz"])
    ids = st.integers(1, 60)
    started = dt.datetime(2026, 11, 27, 9, 13, 27, tzinfo=dt.UTC)

    def once(docs: list[dict], walk, learn) -> None:
        hits = [0] * len(docs)
        for query, *extra in walk:
            held = [i for i, doc in enumerate(docs) if filter_applies(query, doc)]
            for i in held:
                hits[i] += 1
            learn(query, extra, held)
        assert hits == [1] * len(docs), [(d, h) for d, h in zip(docs, hits) if h != 1]

    @settings(max_examples=60, deadline=None)
    @given(
        tracked=st.lists(st.tuples(st.sampled_from(["eu", "na", "asia"]), ids), max_size=25),
        docs=st.lists(st.fixed_dictionaries({}, optional={"region": regions, "account_id": ids}), max_size=40),
        window_docs=st.integers(1, 30),
    )
    def accounts(tracked, docs, window_docs):
        for prefix, field in (("region", "account_id"), (None, "a")):
            if prefix is None:
                keys = [(None, f"{r}:{a}") for r, a in tracked]
                rows = [{"a": f"{d['region']}:{d['account_id']}"} if len(d) == 2 else {} for d in docs]
            else:
                keys, rows = list(tracked), docs
            walk = _AccountWalk(prefix, field, keys, window_docs)
            if keys:
                once(rows, walk.walk(), lambda q, extra, held, w=walk: w.learn(extra[0], len(held)))

    @settings(max_examples=60, deadline=None)
    @given(
        offsets=st.lists(st.integers(-600 * 1440, 3 * 1440), max_size=40),
        midnight=st.booleans(),
        window_docs=st.integers(1, 50),
        dense=st.integers(0, 30),
    )
    def days(offsets, midnight, window_docs, dense):
        base = dt.datetime.combine(started.date(), dt.time(), dt.UTC)
        times = [started + dt.timedelta(minutes=m) for m in offsets]
        times += [base - DAY + dt.timedelta(minutes=5 * i) for i in range(dense)]  # yesterday, every 5 minutes
        if midnight:
            times = [dt.datetime.combine(t.date(), dt.time(), dt.UTC) for t in times]
        rows = [{"m": t} for t in times] + [{}]
        walk = _DayWalk("m", started, window_docs)
        skip = None
        for query, low, high in walk.probes():
            held = [rows[i] for i, doc in enumerate(rows) if filter_applies(query, doc)]
            if held:
                walk.learn(low, high, len(held), held[0], held[-1])
                skip = (low, high)
                rows = [doc for doc in rows if not filter_applies(query, doc)]  # copied by the probe
                break

        def learn(query, extra, held):
            low, high = extra
            walk.learn(low, high, len(held), rows[held[0]] if held else None, rows[held[-1]] if held else None)

        once(rows, walk.walk(skip), learn)

    accounts()
    days()


@pytest.mark.gen_test(timeout=60)
async def test_an_account_walk_reads_through_an_index_that_leads_with_the_account(store):
    """Each collection store/backup.py reads by ranges of accounts is irreplaceable and has an index
    whose leading fields are the walk's (so every window is an indexed range, never a scan)."""
    from store.backup import ACCOUNT_WALKS

    irreplaceable = store.irreplaceable()
    for name, (prefix, field) in ACCOUNT_WALKS.items():
        assert name in irreplaceable, name
        leading = [prefix, field] if prefix else [field]
        indexes = await store.db[name].index_information()
        assert any([k for k, _ in spec["key"]][: len(leading)] == leading for spec in indexes.values()), (name, indexes)
