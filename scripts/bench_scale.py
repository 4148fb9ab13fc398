#!/usr/bin/env python3
"""Scale benchmark that reads back: tracked data at growing volumes, read over HTTP, and the daily pass.

    .venv/bin/python -m scripts.bench_scale                           # steps 200k, 1M, 2M per-tank records
    .venv/bin/python -m scripts.bench_scale --steps 20000,60000 --json /tmp/s.json   # a smoke run
    .venv/bin/python -m scripts.bench_scale --keep /tmp/scale          # keep the last step's data

One SecantusDB data directory on disk (a temporary one, or --keep DIR) grows step by step (never
rebuilt). Each step:

1. adds tracked accounts, each with `--days` (365) days of what the tracker's daily pass writes
   (per-tank records, snapshots, the tracked document), until the per-tank records reach the step's
   volume. The documents come from scripts/scale_loader.py: the pass's own decisions and pure
   functions (plan_visit, build_profile, compute_ratings, snapshot_of) over seeded players (each
   plays 30-50 % of days, 1-6 tanks a playing day), the account's last day from the upstream
   simulator's own account (so the real pass finds what the upstream has), inserted thousands at a
   time (tests/test_bench_scale.py: the same documents as the real pass writes);
2. runs one day of the real pass (server/services/tracker.py, `--claimants` trackers in this process, the
   simulator answering "as of" a travelling clock) over every tracked account and measures account
   visits per second, this process's CPU (the tracker, its database and upstream clients) and the
   database process's CPU (/proc/<pid>/stat) per visit;
3. serves that data with the real service (`python -m server --data-dir DIR --no-jobs
   --trusted-proxies 127.0.0.1/32`: the embedded database as `scripts/run.sh` deploys it) and
   measures over HTTP, at 1 and at 8 concurrent clients (keep-alive connections, each request from
   one of 2,000 X-Forwarded-For addresses, so no client meets its per-minute limit): a cached
   /player, /history?days=30 and 400, /tanks?days=30 and 400 (accounts tracked since the first
   step, a year of data each), /players?search= (3-5 character prefixes of tracked nicknames, a
   new prefix each request) and /status. Non-200 answers are counted. The history and tanks reads
   rotate 400 accounts, more than one read's 305 requests, so every request builds its answer: the
   answer cache (server/api/answers.py) would replay a repeat within 5 s.

The days are placed so the last step's pass is today (UTC) and earlier steps' passes the days
before it: the service reads with the real clock. Writes `--json` (bench-scale.json):
{"steps": [{"tank_records", "snapshots", "tracked", "reads": {NAME: {"p50_ms", "p99_ms",
"p99_ms_8"}}, "pass": {"visits_per_s", "service_cpu_ms_per_visit", "db_cpu_ms_per_visit"}}],
"flatness": {NAME: p99 at the last step / p99 at the first}} plus "details" (per step: loading
rates, p50 at 8 clients, non-200 counts) and "wall_seconds".
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import concurrent.futures
import datetime as dt
import http.client
import itertools
import json
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from scripts.loadkit.processes import cpu_seconds, free_port, wait_http  # noqa: E402
from scripts.scale_loader import SyntheticPlayer, days_from, load_account  # noqa: E402
from scripts.upstream_sim.api import apply_fields  # noqa: E402
from scripts.upstream_sim.ids import REGION_RANGES, account_created_at, existing_accounts, nickname  # noqa: E402
from scripts.upstream_sim.world import World  # noqa: E402
from server.api.catalogue import PREFIX  # noqa: E402
from server.compose.demo import TimeTravelUpstream  # noqa: E402
from server.compose.embedded_db import EmbeddedDatabase  # noqa: E402
from server.domain.days import DAY_SECONDS, ManualClock, day_start  # noqa: E402
from server.services.tracker import Tracker  # noqa: E402
from server.upstream.budget import UpstreamBudget  # noqa: E402
from server.upstream.client import ACCOUNT_FIELDS, TANKS_FIELDS, UpstreamClient  # noqa: E402
from server.upstream.expected_values import RatingsSource  # noqa: E402
from store import Store, create_client  # noqa: E402
from store.nicknames import sync_ops  # noqa: E402
from store.tracker import SLICES  # noqa: E402

EXPECTED = os.path.join(os.path.dirname(ROOT), "shared", "data", "wn8exp-2024-09-12.json")
DB_NAME = "statsapi"  # the service's default database name
REGION_SHARES = {"eu": 0.6, "na": 0.2, "asia": 0.2}
TRUSTED_PROXY = "127.0.0.1/32"
CLIENT_ADDRESSES = 2000
READS = ("player", "history_30", "history_400", "tanks_30", "tanks_400", "search", "status")
BATCH = 5000  # documents per insert_many


def say(*parts) -> None:
    print(time.strftime("%H:%M:%S"), *parts, flush=True)


def shift_day(day: str, n: int) -> str:
    return (dt.date.fromisoformat(day) + dt.timedelta(days=n)).isoformat()


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


# --------------------------------------------------------------------------------------
# Children: the simulator and the service
# --------------------------------------------------------------------------------------
def start_simulator(workdir: str, rps: int, profile_cache: int) -> tuple[subprocess.Popen, str]:
    port = free_port()
    cmd = [sys.executable, "-m", "scripts.upstream_sim", "--port", str(port), "--rps", str(rps)]
    if os.path.exists(EXPECTED):
        cmd += ["--expected-values", EXPECTED]
    env = dict(os.environ, UPSTREAM_SIM_PROFILE_CACHE=str(profile_cache))
    log = open(os.path.join(workdir, "simulator.log"), "ab")
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
    )
    log.close()
    wait_http(port, "/_sim/limits", proc)
    return proc, f"http://127.0.0.1:{port}"


def service_command(data_dir: str, port: int, sim_base: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "server",
        "--port",
        str(port),
        "--data-dir",
        data_dir,
        "--upstream-base-url",
        sim_base,
        "--no-jobs",
        "--trusted-proxies",
        TRUSTED_PROXY,
        "--log-level",
        "WARNING",
    ]


def stop(proc: subprocess.Popen, timeout: float = 30.0) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)  # its own session: only this child's group
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


# --------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------
class Writer:
    """insert_many in a background thread (the next documents are made meanwhile), at most a few
    batches in flight."""

    def __init__(self, db):
        self.db = db
        self.pool = concurrent.futures.ThreadPoolExecutor(2)  # records and snapshots at once
        self.pending: collections.deque = collections.deque()
        self.buffers: dict[str, list[dict]] = {"tank_records": [], "snapshots": [], "tracked": []}
        self.written = dict.fromkeys(self.buffers, 0)
        self.nickname_ops: list = []

    def add(self, name: str, docs: list[dict]) -> None:
        buffer = self.buffers[name]
        buffer.extend(docs)
        if len(buffer) >= BATCH:
            self._send(name)

    def _send(self, name: str) -> None:
        docs, self.buffers[name] = self.buffers[name], []
        if not docs:
            return
        while len(self.pending) >= 4:
            self.pending.popleft().result()
        self.pending.append(self.pool.submit(self.db[name].insert_many, docs, ordered=False))
        self.written[name] += len(docs)

    def flush(self) -> None:
        for name in self.buffers:
            self._send(name)
        while self.pending:
            self.pending.popleft().result()
        # What Tracked.sync_nicknames writes for each newly tracked nickname (the loaded documents
        # carry nick_indexed), after the accounts themselves, as the service orders them.
        ops, self.nickname_ops = self.nickname_ops, []
        for start in range(0, len(ops), 1000):
            self.db["nickname_prefixes"].bulk_write(ops[start : start + 1000], ordered=True)


def pick_accounts(total: int, first_day: str) -> list[tuple[str, int]]:
    """`total` accounts of the three regions (interleaved) that the simulator knows since before `first_day`."""
    limit = day_start(first_day)
    by_region = {}
    for region, share in REGION_SHARES.items():
        want = max(1, round(total * share))
        found: list[int] = []
        start = REGION_RANGES[region][0] + 3_000_000
        while len(found) < want:
            for account_id in existing_accounts(region, want * 2, start=start):
                if account_created_at(region, account_id) < limit - 30 * DAY_SECONDS:
                    found.append(account_id)
            start = found[-1] + 1 if found else start + want * 4
            found = found[:want]
        by_region[region] = found
    mixed = [(region, a) for group in itertools.zip_longest(*by_region.values()) for region, a in zip(by_region, group)]
    return [(region, a) for region, a in mixed if a is not None][:total]


def make_truth():
    """(info, raw tanks) of an account as of `now`, from the simulator's world in this process, with
    the `fields` the tracker asks for: the answers the real pass gets over HTTP."""
    world = World(expected_values=EXPECTED if os.path.exists(EXPECTED) else None, profile_cache=64)

    def truth(region: str, account_id: int, now: float):
        info = apply_fields(world.account_info(region, account_id, now), ACCOUNT_FIELDS)
        raw = apply_fields(world.tanks_stats(region, account_id, now, None), TANKS_FIELDS)
        return info, raw

    return truth


def load(db, players: list[SyntheticPlayer], days: list[str], since: float, until: float, expected, tiers) -> dict:
    truth = make_truth()
    writer = Writer(db)
    started = time.monotonic()
    cpu = time.process_time()
    try:
        _load_all(writer, players, days, since, until, expected, tiers, truth, started)
        writer.flush()
    finally:
        writer.pool.shutdown(wait=False, cancel_futures=True)
    elapsed = time.monotonic() - started
    docs = sum(writer.written.values())
    return {
        "accounts": len(players),
        "documents": dict(writer.written),
        "seconds": round(elapsed, 1),
        "docs_per_s": round(docs / max(elapsed, 1e-9)),
        "records_per_s": round(writer.written["tank_records"] / max(elapsed, 1e-9)),
        "loader_cpu_s": round(time.process_time() - cpu, 1),
    }


def _load_all(writer: Writer, players, days, since, until, expected, tiers, truth, started: float) -> None:
    for n, player in enumerate(players, 1):
        records, snapshots, tracked = load_account(
            player,
            days,
            since=since,
            until=until,
            expected=expected,
            tiers=tiers.get(player.region, {}),
            truth_last_day=truth,
        )
        writer.add("tank_records", records)
        writer.add("snapshots", snapshots)
        writer.add("tracked", [tracked])
        if tracked.get("nickname"):
            writer.nickname_ops.extend(
                sync_ops(tracked["region"], tracked["account_id"], None, tracked["nickname"], complete=True)
            )
        if n % 500 == 0:
            elapsed = time.monotonic() - started
            docs = sum(writer.written.values())
            say(f"  loaded {n:,}/{len(players):,} accounts, {writer.written} ({docs / elapsed:,.0f} docs/s)")


# --------------------------------------------------------------------------------------
# The daily pass
# --------------------------------------------------------------------------------------
async def ratings_inputs(sim_base: str) -> tuple:
    """The expected values and tiers the service would use (from the simulator), for the loader."""
    upstream = UpstreamClient("bench-scale-ratings", base_url=sim_base)
    try:
        ratings = RatingsSource(upstream, sim_base + "/wn8exp.json")
        await ratings.refresh_expected()
        expected = await ratings.expected_values()
        tiers = {region: await ratings.tiers(region) for region in REGION_SHARES}
    finally:
        upstream.close()
    return expected, tiers


async def run_pass(uri: str, sim_base: str, day: str, db_pid: int, claimants: int, rps: int) -> dict:
    """One day of the real pass over every tracked account, as of `day`'s last second."""
    client = create_client(uri)
    upstream = UpstreamClient("bench-scale", base_url=sim_base, budget=UpstreamBudget(rps * 0.9))
    try:
        store = Store(client, DB_NAME, capped=False, ttl_indexes=False)
        clock = ManualClock(day_start(day) + DAY_SECONDS - 1)
        ratings = RatingsSource(upstream, sim_base + "/wn8exp.json", clock=clock)
        await ratings.refresh_expected()
        for region in REGION_SHARES:
            await ratings.tiers(region)
        trackers = [
            Tracker(store, TimeTravelUpstream(upstream, clock), ratings, clock=clock, owner=f"scale-{n}")
            for n in range(claimants)
        ]
        cpu0, db0, wall0 = time.process_time(), cpu_seconds(db_pid) or 0.0, time.monotonic()
        for _ in range(30):
            outcomes = await asyncio.gather(*(t.tick() for t in trackers), return_exceptions=True)
            for outcome in outcomes:
                if isinstance(outcome, BaseException):
                    say(f"  {day}: a tick failed ({type(outcome).__name__}: {outcome}); ticking again")
            if len(await store.tracked.finished_slices(day)) == SLICES:
                break
        else:
            raise SystemExit(f"{day}: the pass did not finish")
        wall = time.monotonic() - wall0
        cpu = time.process_time() - cpu0
        db_cpu = (cpu_seconds(db_pid) or 0.0) - db0
        slices = await store.tracked.day_slices(day)
    finally:
        upstream.close()
        client.close()
    visits = sum(int(s.get("visited") or 0) for s in slices)
    played = sum(int(s.get("tanks_requests") or 0) for s in slices)
    return {
        "day": day,
        "visits": visits,
        "played": played,
        "records": sum(int(s.get("records") or 0) for s in slices),
        "seconds": round(wall, 1),
        "visits_per_s": round(visits / max(wall, 1e-9), 1),
        "service_cpu_ms_per_visit": round(1000 * cpu / max(1, visits), 3),
        "db_cpu_ms_per_visit": round(1000 * db_cpu / max(1, visits), 3),
    }


# --------------------------------------------------------------------------------------
# Reads over HTTP
# --------------------------------------------------------------------------------------
class Clients:
    """Rotating X-Forwarded-For addresses (the service trusts 127.0.0.1 as a proxy)."""

    def __init__(self):
        self.counter = itertools.count()
        self.lock = threading.Lock()

    def next(self) -> str:
        with self.lock:
            n = next(self.counter) % CLIENT_ADDRESSES
        return f"10.77.{n // 250}.{1 + n % 250}"


def get(conn: http.client.HTTPConnection, path: str, client: str) -> tuple[int, bytes]:
    conn.request("GET", path, headers={"X-Forwarded-For": client})
    response = conn.getresponse()
    return response.status, response.read()


def measure(port: int, paths: list[str], concurrency: int, clients: Clients) -> dict:
    """GET every path once, `concurrency` at a time on keep-alive connections; latencies and statuses."""
    work = iter(paths)
    lock = threading.Lock()
    latencies: list[float] = []
    statuses: collections.Counter = collections.Counter()

    def worker() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        try:
            while True:
                with lock:
                    path = next(work, None)
                if path is None:
                    return
                started = time.perf_counter()
                try:
                    status, _ = get(conn, path, clients.next())
                except (OSError, http.client.HTTPException):
                    conn.close()
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                    status = 0
                elapsed = 1000 * (time.perf_counter() - started)
                with lock:
                    latencies.append(elapsed)
                    statuses[status] += 1
        finally:
            conn.close()

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {
        "n": len(latencies),
        "p50_ms": round(percentile(latencies, 0.5), 2),
        "p99_ms": round(percentile(latencies, 0.99), 2),
        "non_200": {str(k): v for k, v in sorted(statuses.items()) if k != 200},
    }


def read_paths(name: str, n: int, offset: int, accounts: list[tuple[str, int]], prefixes: list[tuple[str, str]]):
    out = []
    for i in range(offset, offset + n):
        region, account_id = accounts[i % len(accounts)]
        base = f"{PREFIX}/player/{account_id}/{region}"
        if name == "player":
            out.append(base)
        elif name.startswith(("history_", "tanks_")):
            kind, days = name.split("_")
            out.append(f"{base}/{kind}?days={days}")
        elif name == "search":
            region, prefix = prefixes[i % len(prefixes)]
            out.append(f"{PREFIX}/players?search={prefix}&region={region}")
        else:
            out.append(f"{PREFIX}/status")
    return out


def start_service(data_dir: str, sim_base: str, log_path: str) -> tuple[subprocess.Popen, int]:
    """The service on the step's data; a start that fails is tried again (up to 5 times, 30 s
    apart: a shared working tree can be caught in the middle of an edit)."""
    env = dict(os.environ)
    env.pop("STATSAPI_PROCESSES", None)
    for attempt in range(5):
        port = free_port()
        log = open(log_path, "ab")
        proc = subprocess.Popen(
            service_command(data_dir, port, sim_base),
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        log.close()
        started = time.monotonic()
        try:
            wait_http(port, f"{PREFIX}/status", proc, timeout=600)
        except RuntimeError as exc:
            stop(proc)
            say(f"  the service did not start ({exc}); see {log_path}")
            if attempt == 4:
                raise
            time.sleep(30)
            continue
        say(f"  service up in {time.monotonic() - started:.1f} s")
        return proc, port
    raise AssertionError("unreachable")


def run_reads(
    data_dir: str,
    sim_base: str,
    player_accounts: list[tuple[str, int]],
    accounts: list[tuple[str, int]],
    prefixes: list[tuple[str, str]],
    requests: int,
    requests_8: int,
    log_path: str,
) -> dict:
    proc, port = start_service(data_dir, sim_base, log_path)
    clients = Clients()
    results: dict = {}
    try:
        # A cached /player: the first request fetches each profile live (cached for an hour).
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        for region, account_id in player_accounts:
            for _ in range(2):
                status, body = get(conn, f"{PREFIX}/player/{account_id}/{region}", clients.next())
            if status != 200 or b'"live_fetched":false' not in body.replace(b" ", b""):
                say(f"  warning: /player/{account_id}/{region} not served from the cache ({status})")
        conn.close()
        offset = 0
        for name in READS:
            chosen = player_accounts if name == "player" else accounts
            measure(port, read_paths(name, 5, offset, chosen, prefixes), 1, clients)  # warm-up
            offset += 5
            one = measure(port, read_paths(name, requests, offset, chosen, prefixes), 1, clients)
            offset += requests
            eight = measure(port, read_paths(name, requests_8, offset, chosen, prefixes), 8, clients)
            offset += requests_8
            results[name] = {"one": one, "eight": eight}
            say(
                f"  {name:12} 1 client p50 {one['p50_ms']:8.2f} p99 {one['p99_ms']:8.2f} ms"
                f" | 8 clients p50 {eight['p50_ms']:8.2f} p99 {eight['p99_ms']:8.2f} ms"
                f" | non-200 {one['non_200']} {eight['non_200']}"
            )
    finally:
        stop(proc)
    return results


# --------------------------------------------------------------------------------------
# The steps
# --------------------------------------------------------------------------------------
def counts(db) -> dict:
    out = {}
    for name in ("tank_records", "snapshots", "tracked"):
        out[name] = int(db.command("collStats", name).get("count") or 0)
    return out


def search_prefixes(accounts: list[tuple[str, int]], n: int) -> list[tuple[str, str]]:
    rng = random.Random(20)
    seen: set[tuple[str, str]] = set()
    out = []
    for _ in range(n * 20):
        region, account_id = rng.choice(accounts)
        prefix = nickname(region, account_id)[: rng.randint(3, 5)].lower()
        if len(prefix) >= 3 and (region, prefix) not in seen:
            seen.add((region, prefix))
            out.append((region, prefix))
            if len(out) == n:
                break
    return out


def main_run(args) -> dict:
    import pymongo

    steps = [int(s) for s in args.steps.split(",") if s.strip()]
    wall0 = time.monotonic()
    if args.keep:
        workdir = os.path.abspath(args.keep)
        if os.path.exists(workdir) and os.listdir(workdir):
            raise SystemExit(f"--keep {workdir}: not empty")
        os.makedirs(workdir, exist_ok=True)
    else:
        workdir = tempfile.mkdtemp(prefix="bench-scale-")
    say(f"data directory {workdir}")
    today = dt.datetime.now(dt.UTC).date().isoformat()
    # The last step's pass is today; step k's is len(steps) - 1 - k days before.
    pass_days = [shift_day(today, k - len(steps) + 1) for k in range(len(steps))]
    records_per_account = args.days * 0.4 + 1  # refined after each step
    guess = int(steps[-1] / records_per_account * 1.3) + 200
    since = day_start(shift_day(pass_days[0], -args.days - 1))
    until = day_start(today) + 400 * DAY_SECONDS
    all_accounts = pick_accounts(guess, shift_day(pass_days[0], -args.days - 1))
    used = 0
    sim_proc, sim_base = start_simulator(workdir, args.sim_rps, guess + 2000)
    database = None
    result: dict = {"steps": [], "flatness": {}, "details": []}
    try:
        expected, tiers = asyncio.run(ratings_inputs(sim_base))
        tank_ids = sorted(set().union(*(set(t) for t in tiers.values())) & set(getattr(expected, "_by_tank", {}) or []))
        if not tank_ids:
            tank_ids = sorted(set().union(*(set(t) for t in tiers.values())))
        read_accounts: list[tuple[str, int]] = []
        prefixes: list[tuple[str, str]] = []
        for k, target in enumerate(steps):
            step_started = time.monotonic()
            say(f"step {k + 1}/{len(steps)}: {target:,} per-tank records")
            database = EmbeddedDatabase(os.path.join(workdir, "db")).start()
            sync: pymongo.MongoClient = pymongo.MongoClient(database.uri, timeoutMS=600_000)
            db_pid = database.process.pid if database.process else 0
            db = sync[DB_NAME]
            if k == 0:
                asyncio.run(ensure_schema(database.uri))
            have = counts(db)
            need = max(0, math.ceil((target - have["tank_records"]) / records_per_account))
            if used + need > len(all_accounts):
                all_accounts = pick_accounts(int((used + need) * 1.5), shift_day(pass_days[0], -args.days - 1))
            new = all_accounts[used : used + need]
            used += need
            last_day = shift_day(pass_days[k], -1)
            days = days_from(shift_day(last_day, -args.days + 1), args.days)
            players = [SyntheticPlayer(r, a, tank_ids, days[0], nickname(r, a)) for r, a in new]
            say(f"  loading {len(players):,} accounts x {args.days} days ({days[0]} .. {days[-1]})")
            db_cpu0 = cpu_seconds(db_pid) or 0.0
            loaded = load(db, players, days, since, until, expected, tiers)
            loaded["db_cpu_s"] = round((cpu_seconds(db_pid) or 0.0) - db_cpu0, 1)
            say(f"  loaded: {loaded}")
            after_load = counts(db)
            if loaded["accounts"]:
                records_per_account = max(1.0, loaded["documents"]["tank_records"] / loaded["accounts"])
            if k == 0:
                # Read back accounts tracked since the first step (a year of data at every step).
                read_accounts = [acc for acc in new if acc[0] == "eu"][: args.read_accounts] or new[
                    : args.read_accounts
                ]
                prefixes = search_prefixes(new, args.requests + args.requests_8 + 20)
            say(f"  daily pass of {pass_days[k]} over {after_load['tracked']:,} accounts")
            pass_figures = asyncio.run(
                run_pass(database.uri, sim_base, pass_days[k], db_pid, args.claimants, args.sim_rps)
            )
            say(f"  pass: {pass_figures}")
            have = counts(db)
            sync.close()
            database.stop()
            database = None
            reads = run_reads(
                workdir,
                sim_base,
                read_accounts[: args.player_accounts],
                read_accounts,
                prefixes,
                args.requests,
                args.requests_8,
                os.path.join(workdir, "service.log"),
            )
            result["steps"].append(
                {
                    "tank_records": have["tank_records"],
                    "snapshots": have["snapshots"],
                    "tracked": have["tracked"],
                    "reads": {
                        name: {
                            "p50_ms": r["one"]["p50_ms"],
                            "p99_ms": r["one"]["p99_ms"],
                            "p99_ms_8": r["eight"]["p99_ms"],
                        }
                        for name, r in reads.items()
                    },
                    "pass": {
                        "visits_per_s": pass_figures["visits_per_s"],
                        "service_cpu_ms_per_visit": pass_figures["service_cpu_ms_per_visit"],
                        "db_cpu_ms_per_visit": pass_figures["db_cpu_ms_per_visit"],
                    },
                }
            )
            result["details"].append(
                {
                    "target": target,
                    "load": loaded,
                    "pass": pass_figures,
                    "reads": {
                        name: {
                            "n": r["one"]["n"],
                            "n_8": r["eight"]["n"],
                            "p50_ms_8": r["eight"]["p50_ms"],
                            "non_200": r["one"]["non_200"],
                            "non_200_8": r["eight"]["non_200"],
                        }
                        for name, r in reads.items()
                    },
                    "seconds": round(time.monotonic() - step_started, 1),
                }
            )
            first, last = result["steps"][0]["reads"], result["steps"][-1]["reads"]
            result["flatness"] = {
                name: round(last[name]["p99_ms"] / max(first[name]["p99_ms"], 1e-9), 2) for name in last
            }
            result["wall_seconds"] = round(time.monotonic() - wall0, 1)
            write(args.json, result)
            say(f"  step done in {time.monotonic() - step_started:.0f} s; written to {args.json}")
    finally:
        if database is not None:
            database.stop()
        stop(sim_proc)
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    if args.keep:
        result["serve"] = (
            f"{sys.executable} -m scripts.upstream_sim --port 8889 &  "
            f"{sys.executable} -m server --data-dir {workdir} --upstream-base-url http://127.0.0.1:8889"
        )
    return result


async def ensure_schema(uri: str) -> None:
    """The service's collections and indexes (as the embedded database gets them) before loading."""
    client = create_client(uri)
    try:
        await Store(client, DB_NAME, capped=False, ttl_indexes=False).ensure_schema()
    finally:
        client.close()


def write(path: str, result: dict) -> None:
    with open(path, "w") as handle:
        json.dump(result, handle, indent=2)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--steps", default="200000,1000000,2000000", help="per-tank records at each step")
    parser.add_argument("--days", type=int, default=365, help="days of data per account added")
    parser.add_argument("--keep", help="keep the data directory here (must be empty); prints how to serve it")
    parser.add_argument("--json", default="bench-scale.json")
    parser.add_argument("--requests", type=int, default=100, help="requests per read at 1 client")
    parser.add_argument("--requests-8", type=int, default=200, help="requests per read at 8 clients")
    parser.add_argument(
        "--read-accounts",
        type=int,
        default=400,
        help="accounts the history and tanks reads rotate (more than a read's 305 requests: each one builds its answer)",
    )
    parser.add_argument("--player-accounts", type=int, default=10, help="cached profiles the /player read rotates")
    parser.add_argument("--claimants", type=int, default=2, help="trackers sharing the pass in this process")
    parser.add_argument("--sim-rps", type=int, default=2000, help="the simulator's quota (the pass is measured)")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stop the children on SIGTERM too
    result = main_run(args)
    print(json.dumps({"steps": result["steps"], "flatness": result["flatness"]}, indent=2))
    print(f"wall {result.get('wall_seconds')} s; written to {args.json}")
    if args.keep:
        print(f"serve the last step's data (a simulator, then the service):\n  {result['serve']}")
        write(args.json, result)


if __name__ == "__main__":
    main()
