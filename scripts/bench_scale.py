#!/usr/bin/env python3
"""Scale benchmark that reads back: tracked data at growing volumes, read over HTTP, the daily pass and the tank-statistics job.

    .venv/bin/python -m scripts.bench_scale                           # steps 200k, 1M, 2M per-tank records
    .venv/bin/python -m scripts.bench_scale --steps 20000,60000 --json /tmp/s.json   # a smoke run
    .venv/bin/python -m scripts.bench_scale --keep /tmp/scale          # keep the last step's data

One SecantusDB data directory on disk (a temporary one, or --keep DIR) grows step by step (never
rebuilt). Each step:

1. adds tracked accounts, each with `--days` (365) days of what the tracker's daily pass writes
   (per-tank records, snapshots, the tracked document, and the population's per-tank changes of
   the last 100 days: tank_changes, as the store's retention keeps them), until the per-tank
   records reach the step's volume. The documents come from scripts/scale_loader.py: the pass's
   own decisions and pure functions (plan_visit, day_change, build_profile, compute_ratings,
   snapshot_of) over seeded players (each plays 30-50 % of days, 1-6 tanks a playing day), the
   account's last day from the upstream simulator's own account (so the real pass finds what the
   upstream has; that day's per-tank change stays the model's day, not the jump to the
   simulator's counters), inserted thousands at a time (tests/test_bench_scale.py: the same
   documents as the real pass writes);
2. runs one day of the real pass (server/services/tracker.py, `--claimants` trackers in this process, the
   simulator answering "as of" a travelling clock) over every tracked account and measures account
   visits per second, this process's CPU (the tracker, its database and upstream clients) and the
   database process's CPU (/proc/<pid>/stat) per visit;
3. runs the real daily tank-statistics job (server/services/population.py, PopulationService.build
   forced, without its pauses between reads) with its tables ending on the pass's day: every
   region's 90 days of tank_changes read day by day through the (r, d) index, the day sums,
   period tables, series and leaderboards written. Measures the account-days it read (tank_changes documents),
   its wall time, this process's CPU (the job's aggregation) and the database process's CPU per
   account-day, and the longest it held the event loop (a request to the process running the job
   waits that long at worst) and the longest garbage collection meanwhile (the benchmark's own
   objects frozen first, as the service freezes its start-up objects), and the leaderboards' share
   of its time (each window's figures, the ranking and the build's writes) per account-day;
4. serves that data with the real service (`python -m server --data-dir DIR --no-jobs
   --trusted-proxies 127.0.0.1/32`: the embedded database as `scripts/run.sh` deploys it) and
   measures over HTTP, at 1 and at 8 concurrent clients (keep-alive connections, each request from
   one of 2,000 X-Forwarded-For addresses, so no client meets its per-minute limit): a cached
   /player, /history?days=30 and 400, /tanks?days=30 and 400 (accounts tracked since the first
   step, a year of data each; the tank rows carry their `standing` from the job's tables),
   /tanks?days=30&group_by=tier (the same accounts: the period per tier besides the rows),
   /tanks/stats?region=eu&days=30 (the whole table, TANK_PAGE_MAX a page, each request a different
   sort, order or offset), /tank/{tank_id}/eu?days=30 (the `--tank-ids` (400) most played eu tanks
   in turn), /tanks/marks?region=eu (the marks of excellence of every tier V+ tank the eu accounts
   played in the job's 14 days: TANK_PAGE_MAX a page, each request a different sort, order, page
   or limit) and its tier=10 variant (the rows one tier filters), /vehicles?region=eu (the
   catalogue with each vehicle's 30-day figures: pages, tiers, types, nations, premium flags and
   name searches in turn), /tanks/strength?region=eu (each tier's list of each period, and by
   type), /leaderboard/players?region=eu (a
   page of each window and figure, offsets 50 apart, 25 or 100 rows), /tank/{tank_id}/eu/leaderboard
   (the same most played tanks in turn, a window and figure each pass), /leaderboard/clans?region=eu
   (a page of each window and figure, over the clans of the tracked eu accounts, cached as the clan
   refresh caches them), /players?search= (3-5 character
   prefixes of tracked nicknames, a new prefix each request) and /status. Non-200 answers are
   counted. The history and tanks reads rotate 400
   accounts, more than one read's 305 requests, so every request builds its answer: the answer
   cache (server/serving/answers.py) would replay a repeat within 5 s (a first step too small for
   400 eu accounts rotates fewer: a smoke run's history and tanks figures are partly replays).
   Then it checks what the population answers hold: the table's tanks with damage percentiles,
   the most played tank's sample, series and percentiles, the marks table's tanks with thresholds
   (and that each row's 1st <= 2nd <= 3rd <= top), and how many /player/{id}/eu/tanks?days=30
   rows of 20 read accounts carry a standing and a percentile in it, a mastery badge, and marks
   with a combined damage, a mark percentile and the next mark (and that group_by=tier's battles
   add up to the period's).

The days are placed so the last step's pass is today (UTC) and earlier steps' passes the days
before it: the service reads with the real clock. Writes `--json` (bench-scale.json):
{"steps": [{"tank_records", "snapshots", "tracked", "reads": {NAME: {"p50_ms", "p99_ms",
"p99_ms_8"}}, "pass": {"visits_per_s", "service_cpu_ms_per_visit", "db_cpu_ms_per_visit"},
"population_job": {"tank_changes", "account_days", "seconds", "ms_per_account_day",
"job_cpu_ms_per_account_day", "db_cpu_ms_per_account_day", "max_loop_block_ms", "max_gc_pause_ms"}}],
"flatness": {NAME: p99 at the last step / p99 at the first}} (NAME: READS) plus "details" (per step: loading
rates, the pass's and the job's whole figures (the job's reads of changes and of tracked states
timed apart), the population answers' checks, p50 at 8 clients, non-200 counts) and "wall_seconds".
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import concurrent.futures
import datetime as dt
import gc
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

import server.services.population as population_module  # noqa: E402
from scripts.loadkit.processes import cpu_seconds, free_port, stop_group, wait_http  # noqa: E402
from scripts.scale_loader import SyntheticPlayer, days_from, load_account  # noqa: E402
from scripts.upstream_sim.ids import REGION_RANGES, account_created_at, existing_accounts, nickname  # noqa: E402
from scripts.upstream_sim.methods import apply_fields  # noqa: E402
from scripts.upstream_sim.world import World  # noqa: E402
from server.compose.demo import TimeTravelUpstream  # noqa: E402
from server.compose.embedded_db import EmbeddedDatabase  # noqa: E402
from server.contract.catalogue import (  # noqa: E402
    CLAN_LEADERBOARD_BYS,
    LEADERBOARD_BYS,
    LEADERBOARD_FLOORS,
    LEADERBOARD_PAGE_MAX,
    MARKS_SORTS,
    PREFIX,
    TANK_PAGE_MAX,
    TANK_SORTS,
    VEHICLE_TYPES,
)
from server.domain.days import DAY_SECONDS, ManualClock, day_start  # noqa: E402
from server.services.dumps import DumpService  # noqa: E402
from server.services.expected import ExpectedValuesService  # noqa: E402
from server.services.leaderboards import LeaderboardService  # noqa: E402
from server.services.online import OnlineService  # noqa: E402
from server.services.population import SETTLE_SECONDS, PopulationService  # noqa: E402
from server.services.tank_stats import TankStatsService  # noqa: E402
from server.services.tracker import Tracker  # noqa: E402
from server.upstream.budget import UpstreamBudget  # noqa: E402
from server.upstream.client import ACCOUNT_FIELDS, TANKS_FIELDS, UpstreamClient  # noqa: E402
from server.upstream.expected_values import RatingsSource  # noqa: E402
from server.upstream.realms import RealmGates  # noqa: E402
from store import Store, create_client  # noqa: E402
from store.constants import REGIONS  # noqa: E402
from store.nicknames import sync_ops  # noqa: E402
from store.tracker import SLICES  # noqa: E402

EXPECTED = os.path.join(os.path.dirname(ROOT), "shared", "data", "wn8exp-2024-09-12.json")
DB_NAME = "statsapi"  # the service's default database name
REGION_SHARES = {"eu": 0.6, "na": 0.2, "asia": 0.2}
TRUSTED_PROXY = "127.0.0.1/32"
CLIENT_ADDRESSES = 2000
READS = (
    "player",
    "history_30",
    "history_400",
    "tanks_30",
    "tanks_400",
    "tanks_30_by_tier",
    "tanks_stats",
    "tank",
    "marks",
    "marks_tier10",
    "vehicles",
    "strength",
    "leaderboard",
    "tank_leaderboard",
    "clan_leaderboard",
    "search",
    "status",
)
MARKS_TIER = 10  # the filtered /tanks/marks read: the rows of one tier
# /vehicles pages (every row built from the catalogue, the 30-day table and the official marks,
# then filtered): offsets, tiers, types, premium flags and name searches, 314 different requests.
VEHICLE_QUERIES = [
    *(f"offset={off}&limit={lim}" for off in range(0, 800, 50) for lim in (100, 25)),
    *(f"tier={t}&type={v}" for t in range(1, 11) for v in VEHICLE_TYPES),
    *(f"tier={t}&premium={p}&offset={off}" for t in range(1, 11) for p in ("true", "false") for off in (0, 5, 10)),
    *(
        f"search={q}&limit={lim}"
        for q in ("t", "is", "pz", "ob", "ta", "e", "m", "kv", "st", "10")
        for lim in (100, 10)
    ),
    *(f"nation={n}&tier={t}" for n in ("ussr", "germany", "usa", "france", "uk") for t in range(1, 11)),
    *(f"tier={t}&premium=true&type={v}" for t in range(1, 11) for v in VEHICLE_TYPES),
    *(f"search={q}&tier={t}" for q in ("a", "o") for t in range(1, 11)),
    *(f"offset={off}&limit=50&premium={p}" for off in range(0, 800, 50) for p in ("true", "false")),
]
# /tanks/strength: every tier, type and period (each a tier list built from a period's table).
STRENGTH_QUERIES = [
    f"days={d}&tier={t}{f'&type={v}' if v else ''}&offset={off}"
    for d in (30, 7, 90)
    for t in range(1, 11)
    for v in (None, *VEHICLE_TYPES)
    for off in (0, 10)
]
POPULATION_DAYS = 30  # the period the tank statistics reads ask for
STANDING_ACCOUNTS = 20  # read accounts whose /tanks?days=30 rows are checked for `standing`
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
def start_simulator(
    workdir: str, rps: int, profile_cache: int, extra: tuple[str, ...] = ()
) -> tuple[subprocess.Popen, str]:
    port = free_port()
    cmd = [sys.executable, "-m", "scripts.upstream_sim", "--port", str(port), "--rps", str(rps), *extra]
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


def service_command(data_dir: str, port: int, sim_base: str, jobs: bool = False) -> list[str]:
    """The service over `data_dir`; without its background jobs unless `jobs` (reads measured alone)."""
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
        *(() if jobs else ("--no-jobs",)),
        "--trusted-proxies",
        TRUSTED_PROXY,
        "--log-level",
        "WARNING",
    ]


# --------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------
class Writer:
    """insert_many in a background thread (the next documents are made meanwhile), at most a few
    batches in flight."""

    def __init__(self, db):
        self.db = db
        self.pool = concurrent.futures.ThreadPoolExecutor(2)  # two collections' batches at once
        self.pending: collections.deque = collections.deque()
        self.buffers: dict[str, list[dict]] = {"tank_records": [], "snapshots": [], "tracked": [], "tank_changes": []}
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
        records, snapshots, tracked, changes = load_account(
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
        writer.add("tank_changes", changes)
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
    # The simulator here has no per-address throttle: each realm may use the whole quota.
    upstream = UpstreamClient(
        "bench-scale",
        base_url=sim_base,
        budget=UpstreamBudget(rps * 0.9),
        realms=RealmGates(dict.fromkeys(REGION_SHARES, rps * 0.9)),
    )
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
# The population job
# --------------------------------------------------------------------------------------
async def run_population_job(uri: str, sim_base: str, day: str, db_pid: int, dumps_dir: str) -> dict:
    """The real daily tank-statistics job (PopulationService.build, force) over every region, as of
    the hour `day`'s changes are complete (its tables end on `day`, the pass's day), without its
    pauses between reads (PAUSE_SECONDS: they give way to requests and would only add idle time).
    Measures its wall time, this process's CPU (the job's aggregation, its database client), the
    database process's CPU per account-day read (a tank_changes document of the 90 days), and the
    longest the job held the event loop (what a request to the service process running the job
    would wait at worst: a 5 ms ticker's largest lateness)."""
    client = create_client(uri)
    upstream = UpstreamClient("bench-scale-population", base_url=sim_base)
    try:
        store = Store(client, DB_NAME, capped=False, ttl_indexes=False)
        clock = ManualClock(day_start(day) + DAY_SECONDS + SETTLE_SECONDS)
        ratings = RatingsSource(upstream, sim_base + "/wn8exp.json", clock=clock)
        await ratings.refresh_expected()
        job = PopulationService(store, ratings, clock=clock)
        job.pause = 0.0
        spent = {
            "account_days": 0,
            "day_reads": 0,
            "changes_read_s": 0.0,
            "career_reads": 0,
            "career_read_s": 0.0,
            "leaderboards_figures_s": 0.0,
            "leaderboards_save_s": 0.0,
            "leaderboard_chunks": 0,
        }
        changes, tracked = store.population.changes, store.tracked
        of_day, books = changes.of_day, tracked.ranking_books

        async def counted_of_day(region: str, day: str):  # the job's reads of one day's changes
            started = time.perf_counter()
            rows = await of_day(region, day)
            spent["changes_read_s"] += time.perf_counter() - started
            spent["day_reads"] += 1
            spent["account_days"] += len(rows)
            return rows

        async def counted_books(keys: list[str]):  # the career figures' reads of tracked states
            started = time.perf_counter()
            found = await books(keys)
            spent["career_read_s"] += time.perf_counter() - started
            spent["career_reads"] += len(keys)
            return found

        # The leaderboards' share of the job: the figures of each window (worker threads), the
        # ranking and the build's writes (LeaderboardBuilder.save).
        boards_figures, boards_save = population_module.window_boards, job.leaderboards.save

        def timed_figures(*args, **kwargs):
            started = time.perf_counter()
            try:
                return boards_figures(*args, **kwargs)
            finally:
                spent["leaderboards_figures_s"] += time.perf_counter() - started

        async def timed_save(*args, **kwargs):
            started = time.perf_counter()
            try:
                chunks = await boards_save(*args, **kwargs)
                spent["leaderboard_chunks"] += chunks
                return chunks
            finally:
                spent["leaderboards_save_s"] += time.perf_counter() - started

        population_module.window_boards = timed_figures  # type: ignore[assignment]
        job.leaderboards.save = timed_save  # type: ignore[method-assign]
        changes.of_day = counted_of_day  # type: ignore[method-assign]
        tracked.ranking_books = counted_books  # type: ignore[method-assign]
        blocked = [0.0]
        ticking = True

        async def ticker() -> None:
            while ticking:
                started = time.perf_counter()
                await asyncio.sleep(0.005)
                blocked[0] = max(blocked[0], time.perf_counter() - started - 0.005)

        # This process holds the loader's objects (millions at 2 M records), which the service
        # process never has: frozen, as the service freezes what it holds at start-up
        # (server/compose/entry.py, tune_garbage_collector), so that a garbage collection during
        # the job scans what the job made, not the benchmark. The longest collection is reported.
        gc.collect()
        gc.freeze()
        collecting = [0.0, 0.0]  # started, longest

        def on_gc(phase: str, info: dict) -> None:
            if phase == "start":
                collecting[0] = time.perf_counter()
            else:
                collecting[1] = max(collecting[1], time.perf_counter() - collecting[0])

        gc.callbacks.append(on_gc)
        watch = asyncio.create_task(ticker())
        cpu0, db0, wall0 = time.process_time(), cpu_seconds(db_pid) or 0.0, time.monotonic()
        try:
            outcome = await job.build(force=True)
        finally:
            ticking = False
            await watch
            gc.callbacks.remove(on_gc)
            gc.unfreeze()
            population_module.window_boards = boards_figures  # the next step's job wraps it afresh
        wall = time.monotonic() - wall0
        cpu = time.process_time() - cpu0
        db_cpu = (cpu_seconds(db_pid) or 0.0) - db0
        bulk = await build_dumps(store, ratings, upstream, clock, day, dumps_dir)
    finally:
        upstream.close()
        client.close()
    account_days = spent["account_days"]
    return {
        "through": day,
        "outcome": outcome,
        "account_days": account_days,
        "day_reads": spent["day_reads"],
        "career_accounts": spent["career_reads"],
        "seconds": round(wall, 2),
        "changes_read_s": round(spent["changes_read_s"], 2),
        "career_read_s": round(spent["career_read_s"], 2),
        # The leaderboards' share: each window's figures and the ranking plus the build's writes.
        "leaderboards_s": round(spent["leaderboards_figures_s"] + spent["leaderboards_save_s"], 2),
        "leaderboards_ms_per_account_day": round(
            1000 * (spent["leaderboards_figures_s"] + spent["leaderboards_save_s"]) / max(1, account_days), 4
        ),
        "leaderboard_chunks": spent["leaderboard_chunks"],
        "max_loop_block_ms": round(1000 * blocked[0], 1),
        "max_gc_pause_ms": round(1000 * collecting[1], 1),
        "ms_per_account_day": round(1000 * wall / max(1, account_days), 4),
        "job_cpu_ms_per_account_day": round(1000 * cpu / max(1, account_days), 4),
        "db_cpu_ms_per_account_day": round(1000 * db_cpu / max(1, account_days), 4),
        "dumps": bulk,
    }


async def build_dumps(store, ratings, upstream, clock, day: str, directory: str) -> dict:
    """The day's bulk files of every realm after the job (server/services/dumps.py, as the job's
    after_region hook runs it): seconds, files and bytes per realm."""
    expected = ExpectedValuesService(store, ratings, clock=clock)
    tank_stats = TankStatsService(store, expected, clock=clock)
    dumps = DumpService(
        directory,
        tank_stats,
        expected,
        LeaderboardService(store),
        OnlineService(store, upstream, clock=clock),
        clock=clock,
    )
    out = {}
    for region in REGIONS:
        built = await dumps.build(region, day)
        assert built is not None
        out[region] = {"seconds": built["seconds"], "files": built["files"], "bytes": built["bytes"]}
    return out


def popular_tanks(table: dict, n: int) -> list[int]:
    """The `n` tanks most tracked accounts played in a tank_periods document (the job's table)."""
    entries = (table.get("tanks") or {}).items()
    ranked = sorted(entries, key=lambda item: (-int(item[1].get("players") or 0), int(item[0])))
    return [int(tank_id) for tank_id, _ in ranked[:n]]


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


def table_paths(tanks: int, n: int) -> list[str]:
    """/tanks/stats?region=eu&days=30 pages of the whole table (the most work an answer does: every
    tank's row built, then sorted), each a different sort, order or offset (limit TANK_PAGE_MAX,
    offsets inside the `tanks` rows), in a seeded order; when they are fewer than `n`, pages of one
    tier follow. No two of `n` consecutive requests ask the same."""
    rng = random.Random(23)
    offsets = list(range(0, max(tanks, 1), 25))[:10]
    whole = [f"sort={s}&order={o}&offset={off}" for s in TANK_SORTS for o in ("desc", "asc") for off in offsets]
    rng.shuffle(whole)
    tiered = [f"sort={s}&order={o}&tier={t}" for s in TANK_SORTS for o in ("desc", "asc") for t in range(1, 11)]
    rng.shuffle(tiered)
    queries = (whole + tiered)[: max(n, len(whole))]
    return [f"{PREFIX}/tanks/stats?region=eu&days={POPULATION_DAYS}&limit={TANK_PAGE_MAX}&{query}" for query in queries]


def marks_paths(tanks: int, tier: int | None = None) -> list[str]:
    """/tanks/marks?region=eu pages (with `tier`: of that tier only), each a different sort, order,
    offset or limit (TANK_PAGE_MAX or a quarter of it; offsets inside the `tanks` rows the filter
    leaves), in a seeded order: 360 different requests once the rows fill 10 offsets (25 apart,
    5 with a tier), so a read's 305 never repeat one (a repeat within 5 s would be the answer
    cache's replay). A smaller table gives fewer, and its reads are partly replays."""
    rng = random.Random(29 if tier is None else 31)
    offsets = list(range(0, max(tanks, 1), 25 if tier is None else 5))[:10]
    queries = [
        f"sort={s}&order={o}&offset={off}&limit={limit}"
        for s in MARKS_SORTS
        for o in ("desc", "asc")
        for off in offsets
        for limit in (TANK_PAGE_MAX, TANK_PAGE_MAX // 4)
    ]
    rng.shuffle(queries)
    only = f"&tier={tier}" if tier is not None else ""
    return [f"{PREFIX}/tanks/marks?region=eu{only}&{query}" for query in queries]


def leaderboard_paths(db) -> list[str]:
    """/leaderboard/players?region=eu pages, each a different window, figure, offset or limit
    (offsets 50 apart inside the window's ranked rows, at most 6), in a seeded order: up to 300
    different requests (5 windows x 5 figures x 6 offsets x 2 limits), so a read's requests rarely
    repeat one within the answer cache's 5 s. Empty without a build (the read is then not measured)."""
    pointer = db["leaderboards"].find_one({"_id": "eu:current"}, {"windows": 1}) or {}
    queries = []
    for window, meta in (pointer.get("windows") or {}).items():
        ranked = int((meta.get("ranked") or {}).get(str(LEADERBOARD_FLOORS[window]), 0))
        for offset in list(range(0, ranked, 50))[:6]:
            for by in LEADERBOARD_BYS:
                for limit in (LEADERBOARD_PAGE_MAX, LEADERBOARD_PAGE_MAX // 4):
                    queries.append(f"days={window}&by={by}&offset={offset}&limit={limit}")
    random.Random(37).shuffle(queries)
    return [f"{PREFIX}/leaderboard/players?region=eu&{query}" for query in queries]


def cache_clans(db, now: float) -> int:
    """Cache the clans the tracked eu accounts are in (the pass stored each one's clan id from the
    simulator), each with those members as its roster and Elo and skirmish figures, as the clan
    refresh writes them: what the clans' leaderboard reads. Returns the clans cached."""
    from pymongo import ReplaceOne

    rosters: dict[int, list[int]] = collections.defaultdict(list)
    for doc in db["tracked"].find({"region": "eu", "clan_id": {"$ne": None}}, {"account_id": 1, "clan_id": 1}):
        rosters[int(doc["clan_id"])].append(int(doc["account_id"]))
    ops = []
    for clan_id, members in rosters.items():
        draw = random.Random(clan_id)
        ops.append(
            ReplaceOne(
                {"_id": f"eu:{clan_id}"},
                {
                    "region": "eu",
                    "clan_id": clan_id,
                    "tag": f"C{clan_id % 100000}",
                    "name": f"clan {clan_id}",
                    "members_count": len(members),
                    "members": [{"account_id": a, "name": None, "role": "private"} for a in sorted(members)],
                    "ratings": {
                        "elo_10": draw.randint(800, 1600),
                        "elo_8": draw.randint(800, 1400),
                        "skirmish_battles": 100,
                        "skirmish_win_rate": round(draw.uniform(35, 70), 2),
                    },
                    "cached_at": now,
                    "referenced_at": now,
                    "expires_at": dt.datetime.fromtimestamp(now + 30 * DAY_SECONDS, dt.UTC),
                },
                upsert=True,
            )
        )
    for start in range(0, len(ops), 500):
        db["clans"].bulk_write(ops[start : start + 500], ordered=False)
    return len(ops)


def clan_leaderboard_paths(db) -> list[str]:
    """/leaderboard/clans?region=eu pages: each window, figure and limit, at offsets 50 apart inside
    the clans the build kept (at most 4), in a seeded order. Empty without a build."""
    pointer = db["leaderboards"].find_one({"_id": "eu:current"}, {"windows": 1, "build": 1}) or {}
    queries = []
    for window in pointer.get("windows") or {}:
        kept = db["leaderboards"].find_one({"_id": f"eu:{pointer['build']}:clans:{window}:0"}, {"total": 1}) or {}
        for offset in list(range(0, int(kept.get("total") or 0), 50))[:4]:
            for by in CLAN_LEADERBOARD_BYS:
                for limit in (LEADERBOARD_PAGE_MAX, LEADERBOARD_PAGE_MAX // 4):
                    queries.append(f"days={window}&by={by}&offset={offset}&limit={limit}")
    random.Random(41).shuffle(queries)
    return [f"{PREFIX}/leaderboard/clans?region=eu&{query}" for query in queries]


def marks_counts(db, tiers: dict[int, int]) -> tuple[int, int]:
    """(tanks in the eu marks table, of them of MARKS_TIER): the rows /tanks/marks pages through."""
    table = db["tank_periods"].find_one({"_id": "eu:marks"}, {"tanks": 1}) or {}
    ids = [int(tank_id) for tank_id in table.get("tanks") or {}]
    return len(ids), sum(1 for tank_id in ids if tiers.get(tank_id) == MARKS_TIER)


def read_paths(
    name: str,
    n: int,
    offset: int,
    accounts: list[tuple[str, int]],
    prefixes: list[tuple[str, str]],
    tables: list[str] | None = None,
    tanks: list[int] | None = None,
    marks: dict[str, list[str]] | None = None,
):
    out = []
    for i in range(offset, offset + n):
        region, account_id = accounts[i % len(accounts)]
        base = f"{PREFIX}/player/{account_id}/{region}"
        if name == "player":
            out.append(base)
        elif name == "tanks_stats":
            out.append((tables or [])[i % len(tables or [])])
        elif name == "tank":
            tank_id = (tanks or [])[i % len(tanks or [])]
            out.append(f"{PREFIX}/tank/{tank_id}/eu?days={POPULATION_DAYS}")
        elif name == "tank_leaderboard":  # each popular tank in turn, a window and figure each pass
            tank_id = (tanks or [])[i % len(tanks or [])]
            turn = i // max(1, len(tanks or []))
            window = ("30", "7", "90", "career", "1")[turn % 5]
            by = LEADERBOARD_BYS[(turn // 5) % len(LEADERBOARD_BYS)]
            out.append(f"{PREFIX}/tank/{tank_id}/eu/leaderboard?days={window}&by={by}")
        elif name in (marks or {}):
            pages = (marks or {})[name]
            out.append(pages[i % len(pages)])
        elif name == "vehicles":  # the catalogue's pages, filters and searches in turn
            out.append(f"{PREFIX}/vehicles?region=eu&{VEHICLE_QUERIES[i % len(VEHICLE_QUERIES)]}")
        elif name == "strength":  # each tier's list, then types, then the other periods
            out.append(f"{PREFIX}/tanks/strength?region=eu&{STRENGTH_QUERIES[i % len(STRENGTH_QUERIES)]}")
        elif name == "tanks_30_by_tier":
            out.append(f"{base}/tanks?days={POPULATION_DAYS}&group_by=tier")
        elif name.startswith(("history_", "tanks_")):
            kind, days = name.split("_")
            out.append(f"{base}/{kind}?days={days}")
        elif name == "search":
            region, prefix = prefixes[i % len(prefixes)]
            out.append(f"{PREFIX}/players?search={prefix}&region={region}")
        else:
            out.append(f"{PREFIX}/status")
    return out


def start_service(data_dir: str, sim_base: str, log_path: str, jobs: bool = False) -> tuple[subprocess.Popen, int]:
    """The service on the step's data; a start that fails is tried again (up to 5 times, 30 s
    apart: a shared working tree can be caught in the middle of an edit)."""
    env = dict(os.environ)
    env.pop("STATSAPI_PROCESSES", None)
    for attempt in range(5):
        port = free_port()
        log = open(log_path, "ab")
        proc = subprocess.Popen(
            service_command(data_dir, port, sim_base, jobs),
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
            stop_group(proc, 30.0)
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
    tables: list[str] | None = None,
    tanks: list[int] | None = None,
    marks: dict[str, list[str]] | None = None,
) -> tuple[dict, dict]:
    """(the reads' figures by name, the population answers' checks: see population_checks).
    `marks`: the /tanks/marks pages of each of its reads (marks_paths); a read without pages (no
    marks table: the job built none) is not measured."""
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
            if name in ("tank", "tank_leaderboard") and not tanks:
                say(f"  warning: no tank in the eu table: {name} not measured")
                continue
            if name.startswith(("marks", "leaderboard", "clan_")) and not (marks or {}).get(name):
                say(f"  warning: no eu marks table or leaderboard: {name} not measured")
                continue
            chosen = player_accounts if name == "player" else accounts

            def paths(n: int, start: int, name=name, chosen=chosen) -> list[str]:
                return read_paths(name, n, start, chosen, prefixes, tables, tanks, marks)

            measure(port, paths(5, offset), 1, clients)  # warm-up
            offset += 5
            one = measure(port, paths(requests, offset), 1, clients)
            offset += requests
            eight = measure(port, paths(requests_8, offset), 8, clients)
            offset += requests_8
            results[name] = {"one": one, "eight": eight}
            say(
                f"  {name:12} 1 client p50 {one['p50_ms']:8.2f} p99 {one['p99_ms']:8.2f} ms"
                f" | 8 clients p50 {eight['p50_ms']:8.2f} p99 {eight['p99_ms']:8.2f} ms"
                f" | non-200 {one['non_200']} {eight['non_200']}"
            )
        checks = population_checks(port, clients, accounts[:STANDING_ACCOUNTS], tanks or [])
        say(f"  population answers: {checks}")
    finally:
        stop_group(proc, 30.0)
    return results, checks


def population_checks(port: int, clients: Clients, accounts: list[tuple[str, int]], tanks: list[int]) -> dict:
    """What the population answers hold (after the measured reads: none of these is replayed in
    them): the eu table's tanks and how many have damage percentiles; the most played tank's
    sample, series days and percentiles; the eu marks table's tanks (every page), how many have
    thresholds and whether each row's are monotone (1st <= 2nd <= 3rd <= top); and the rows of
    /player/{id}/eu/tanks?days=30 of `accounts` with a `standing` (the tables exist) and with a
    damage percentile in it, with a mastery badge, with `marks` (tier V+), a combined damage, a
    mark percentile and a next mark; and for how many of the accounts group_by=tier's groups add
    up to the period's battles."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def data(path: str) -> tuple[int, dict]:
        status, body = get(conn, path, clients.next())
        return status, (json.loads(body).get("data") or {}) if status == 200 else {}

    try:
        out: dict = {}
        status, table = data(f"{PREFIX}/tanks/stats?region=eu&days={POPULATION_DAYS}&limit={TANK_PAGE_MAX}")
        rows = table.get("tanks") or []
        out["tanks_stats"] = {
            "status": status,
            "through": table.get("through"),
            "total": table.get("total"),
            "page_with_percentiles": sum(1 for row in rows if row.get("damage_percentiles")),
            "page": len(rows),
        }
        if tanks:
            status, tank = data(f"{PREFIX}/tank/{tanks[0]}/eu?days={POPULATION_DAYS}")
            percentiles = tank.get("percentiles") or {}
            out["tank"] = {
                "status": status,
                "tank_id": tanks[0],
                "sample": tank.get("sample"),
                "series_days": len(tank.get("series") or []),
                "damage_percentiles": percentiles.get("damage") is not None,
                "wn8_percentiles": percentiles.get("wn8") is not None,
            }
        rows = []
        statuses: collections.Counter[str] = collections.Counter()
        while True:  # every page of the table
            status, table = data(f"{PREFIX}/tanks/marks?region=eu&limit={TANK_PAGE_MAX}&offset={len(rows)}")
            statuses[str(status)] += 1
            page = table.get("tanks") or []
            rows += page
            if not page or len(rows) >= int(table.get("total") or 0):
                break
        with_thresholds = [
            [float(marks[k]) for k in ("first", "second", "third", "top")]
            for marks in (row.get("marks") or {} for row in rows)
            if marks.get("first") is not None
        ]
        out["marks"] = {
            "statuses": dict(statuses),
            "through": table.get("through"),
            "total": table.get("total"),
            "rows": len(rows),
            "with_thresholds": len(with_thresholds),
            "monotone": all(a <= b <= c <= d for a, b, c, d in with_thresholds),
            "tier_below_5": sum(1 for row in rows if (row.get("tier") or 0) < 5),
        }
        standing: collections.Counter[str] = collections.Counter()
        progress: collections.Counter[str] = collections.Counter()
        for region, account_id in accounts:
            status, answer = data(f"{PREFIX}/player/{account_id}/{region}/tanks?days={POPULATION_DAYS}&group_by=tier")
            standing["non_200"] += status != 200
            period = (answer.get("period") or {}).get("battles")
            groups = answer.get("groups") or []
            progress["groups_sum_to_period"] += status == 200 and sum(g.get("battles") or 0 for g in groups) == period
            for row in answer.get("tanks") or []:
                mine = row.get("standing")
                standing["rows"] += 1
                standing["with_standing"] += mine is not None
                standing["with_damage_percentile"] += bool(mine) and mine.get("damage_percentile") is not None
                standing["with_wn8_percentile"] += bool(mine) and mine.get("wn8_percentile") is not None
                progress["with_mastery_badge"] += bool((row.get("career") or {}).get("mark_of_mastery"))
                marks = row.get("marks")
                if not marks:
                    continue
                progress["rows_with_marks"] += 1
                progress["with_combined_damage"] += marks.get("combined_damage") is not None
                progress["with_mark_percentile"] += marks.get("percentile") is not None
                progress["with_next_mark"] += marks.get("next") is not None
        out["standing"] = {"accounts": len(accounts), **standing}
        out["marks_progress"] = {"accounts": len(accounts), **progress}
        return out
    finally:
        conn.close()


# --------------------------------------------------------------------------------------
# The steps
# --------------------------------------------------------------------------------------
def counts(db) -> dict:
    out = {}
    for name in ("tank_records", "snapshots", "tracked", "tank_changes"):
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
            say(
                f"  cached the tracked eu accounts' clans: {cache_clans(db, day_start(pass_days[k]) + DAY_SECONDS // 2)}"
            )
            say(f"  population job through {pass_days[k]}")
            dumps_dir = os.path.join(workdir, "dumps")
            job = asyncio.run(run_population_job(database.uri, sim_base, pass_days[k], db_pid, dumps_dir))
            say(f"  population job: {job}")
            have = counts(db)
            eu_table = db["tank_periods"].find_one({"_id": f"eu:{POPULATION_DAYS}"}, {"tanks": 1}) or {}
            tables = table_paths(len(eu_table.get("tanks") or {}), args.requests + args.requests_8 + 5)
            tanks = popular_tanks(eu_table, args.tank_ids)
            marks_rows, marks_rows_tier = marks_counts(db, tiers.get("eu", {}))
            marks: dict[str, list[str]] = {}
            if marks_rows:
                marks["marks"] = marks_paths(marks_rows)
            if marks_rows_tier:
                marks["marks_tier10"] = marks_paths(marks_rows_tier, MARKS_TIER)
            if boards := leaderboard_paths(db):
                marks["leaderboard"] = boards
            if clan_boards := clan_leaderboard_paths(db):
                marks["clan_leaderboard"] = clan_boards
            sync.close()
            database.stop()
            database = None
            reads, checks = run_reads(
                workdir,
                sim_base,
                read_accounts[: args.player_accounts],
                read_accounts,
                prefixes,
                args.requests,
                args.requests_8,
                os.path.join(workdir, "service.log"),
                tables,
                tanks,
                marks,
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
                    "population_job": {
                        "tank_changes": have["tank_changes"],
                        "account_days": job["account_days"],
                        "seconds": job["seconds"],
                        "ms_per_account_day": job["ms_per_account_day"],
                        "job_cpu_ms_per_account_day": job["job_cpu_ms_per_account_day"],
                        "db_cpu_ms_per_account_day": job["db_cpu_ms_per_account_day"],
                        "max_loop_block_ms": job["max_loop_block_ms"],
                        "max_gc_pause_ms": job["max_gc_pause_ms"],
                    },
                    "dumps": job["dumps"],
                }
            )
            result["details"].append(
                {
                    "target": target,
                    "load": loaded,
                    "pass": pass_figures,
                    "population_job": job,
                    "population_answers": checks,
                    "tank_table_pages": len(tables),
                    "tank_ids": len(tanks),
                    "marks_rows": marks_rows,
                    f"marks_rows_tier{MARKS_TIER}": marks_rows_tier,
                    "marks_pages": {name: len(pages) for name, pages in marks.items()},
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
                name: round(last[name]["p99_ms"] / max(first[name]["p99_ms"], 1e-9), 2)
                for name in last
                if name in first
            }
            result["wall_seconds"] = round(time.monotonic() - wall0, 1)
            write(args.json, result)
            say(f"  step done in {time.monotonic() - step_started:.0f} s; written to {args.json}")
    finally:
        if database is not None:
            database.stop()
        stop_group(sim_proc, 30.0)
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
    parser.add_argument(
        "--tank-ids", type=int, default=400, help="the most played eu tanks the /tank read rotates (at most)"
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
