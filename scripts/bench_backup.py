#!/usr/bin/env python3
"""Benchmark of the online backup: its time and size at two data sizes, a restore's, and reads' latency during a backup.

    .venv/bin/python -m scripts.bench_backup                   # 1,000 accounts x 60 days, then x 180 days
    .venv/bin/python -m scripts.bench_backup --sizes 30x10,30x20 --online-days 0.05 --requests 40 --json /tmp/b.json   # a smoke run

For each size (`--sizes`, accounts x days), in a data directory of its own:

1. Loads, into an embedded SecantusDB, what every irreplaceable collection family holds after
   `days` days (ending yesterday, UTC) of `accounts` tracked accounts:
   - what the tracker's daily pass writes: per-tank records, snapshots, the tracked documents, the
     population's per-tank changes (the last 100 days, as retention keeps them) and the search's
     nickname prefixes, with scripts/bench_scale.py's bulk loader (scripts/scale_loader.py; the
     documents equal the real pass's, tests/test_bench_scale.py);
   - `--online-days` days of the online sampler's documents at its real rate (one sample a minute
     per game, region and server: the simulator's 21 servers, 30,240 samples a day, ending at the
     load's minute) and each day's peaks (online_peaks);
   - `--clans` clan seeds per region;
   - the real tank-statistics job (PopulationService.build, as bench_scale runs it) over the loaded
     changes, its tables ending yesterday: each region's day sums of up to 90 days (tank_days), the
     period tables (tank_periods), each tank's series (tank_series), the computed expected values
     (expected_tables) and, where the job writes them, the marks' tables;
   so that the backup reads every collection Store.irreplaceable() declares (`empty_collections`
   names any left empty: at a smoke run's size the job computes no expected values). The expected values and the tanks' tiers come from the upstream
   simulator (a child process), which the reads measured never call.
2. Serves that data directory with the real service (`python -m server --data-dir DIR --no-jobs`,
   as bench_scale serves it) and measures, at one client over keep-alive HTTP (at most `--rate`
   pairs a second, 40: about what one client gets through back to back at 1,000 accounts), two
   reads in turn:
   the *cached* `/player/{id}/{region}` of 10 accounts in rotation (bench_scale's and the attacks'
   cached read: each profile fetched once from the simulator first, then served from the profile
   cache, an answer replayed by the answer cache within 5 s) and the *built*
   `/player/{id}/{region}/history?days=30` of up to 400 accounts in rotation (every answer built
   from the database: snapshots and per-tank records). `--requests` of each with nothing else
   running (baseline), then every request made while `python -m server backup --to DIR --data-dir
   DATA` runs in a separate process (the operator's command, at its default low priority: it
   finds the running server's database through the data directory's address file), at least
   `--requests` of each (a backup that ends first is followed by another; only requests made while
   one writes count). The first backup's figures are reported; the ratio of the p99s during and
   without is taken within the same run.
3. Restores that backup (store.backup.restore_backup, in this process) into a fresh database name on
   the same server and times it.

Prints a table and writes `--json` (default bench-backup.json at the repository root): per size
the loaded documents, the backup's seconds (and of them the work, its rests left out), documents,
BSON and file bytes per collection, MB/s, the restore's seconds and rates, p50/p99 of both reads
without and during the backup and the ratio of the p99s; then per family (what grows with
account-days, the online samples, the population tables) the bytes and backup seconds per unit at
each size and how they grew from the first size to the second, and what 1,000 tracked
account-years and a year of online samples come to at the rates measured (goal for the cached
read: p99 during <= 1.2 x without).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from scripts.bench_scale import (  # noqa: E402
    DB_NAME,
    Clients,
    Writer,
    _load_all,
    ensure_schema,
    get,
    percentile,
    pick_accounts,
    ratings_inputs,
    read_paths,
    run_population_job,
    say,
    shift_day,
    start_service,
    start_simulator,
)
from scripts.loadkit.processes import stop_group  # noqa: E402
from scripts.scale_loader import SyntheticPlayer, days_from  # noqa: E402
from scripts.upstream_sim.ids import SERVERS, nickname  # noqa: E402
from scripts.upstream_sim.world import World  # noqa: E402
from server.compose.embedded_db import EmbeddedDatabase, running_uri  # noqa: E402
from server.contract.catalogue import PREFIX  # noqa: E402
from server.domain.days import DAY_SECONDS, day_start  # noqa: E402
from store import Store, create_client  # noqa: E402
from store.backup import read_manifest, restore_backup  # noqa: E402
from store.client import deadline  # noqa: E402
from store.constants import BACKUP_DUTY, REGIONS  # noqa: E402

RESTORED_DB = "statsapi_restored"
CACHED_ACCOUNTS = 10  # the cached /player's rotation (bench_scale's --player-accounts)
BUILT_ACCOUNTS = 400  # the built read's rotation (at most): each answer is built from the database
GOAL_RATIO = 1.2
MB = 1e6
# What each family's size follows (the per-unit figures): the tracker's documents grow with
# account-days, the online samples with days of sampling, the population tables with days built.
FAMILIES = {
    "tracked_accounts": ("snapshots", "tank_records", "tank_changes", "tracked"),
    "online": ("online_samples", "online_peaks"),
    "population_tables": ("tank_days", "tank_periods", "tank_series", "tank_marks", "expected_tables"),
    "other": ("clan_seeds", "migrations"),
}
# Documents a year of daily builds keeps (store/population.py, store/expected.py retentions); the
# others (tank_periods, tank_series) are replaced by each build.
YEAR_DOCUMENTS = {
    "tank_days": 3 * 365,  # a region's day sums, kept 400 days
    "expected_tables": 3 * 366,  # a region's table a day, kept 400 days, and its pointer to the newest
    "tank_marks": 3 * 100,  # a region's day of mark thresholds, kept 100 days
}
SAMPLES_PER_DAY = 1440 * sum(len(names) for regions in SERVERS.values() for names in regions.values())


def loader_inputs(sim_base: str) -> tuple:
    """The expected values and each region's tiers the service uses (from the simulator, as
    bench_scale's loader takes them) and the tank ids the synthetic players own."""
    expected, tiers = asyncio.run(ratings_inputs(sim_base))
    tank_ids = sorted(set().union(*(set(t) for t in tiers.values())) & set(getattr(expected, "_by_tank", {}) or []))
    return expected, tiers, tank_ids or sorted(set().union(*(set(t) for t in tiers.values())))


def online_documents(first_minute: int, last_minute: int) -> tuple[list[dict], dict]:
    """The sampler's documents of every minute in [first_minute, last_minute) (record_minute's
    shape, the simulator's counts) and each (game, day)'s peaks {key: (players, minute)}."""
    world = World(profile_cache=1)
    docs: list[dict] = []
    peaks: dict[tuple[str, str], dict[str, tuple[int, int]]] = {}
    for minute in range(first_minute, last_minute):
        at = dt.datetime.fromtimestamp(minute * 60, dt.UTC)
        day = at.date().isoformat()
        for game, regions in SERVERS.items():
            counts = {}
            for region in regions:
                rows = world.servers(game, region, minute * 60.0)
                docs.extend(
                    {
                        "minute": at,
                        "meta": {"game": game, "region": region, "server": row["server"]},
                        "players": int(row["players_online"]),
                    }
                    for row in rows
                )
                counts[region] = sum(int(row["players_online"]) for row in rows)
            counts["total"] = sum(counts.values())
            best = peaks.setdefault((game, day), {})
            for key, players in counts.items():
                if key not in best or players >= best[key][0]:
                    best[key] = (players, minute)
    return docs, peaks


async def load_rest(uri: str, online_days: float, clans: int, last_minute: int) -> dict:
    """Online samples and peaks, clan seeds (the tracker's documents are loaded already)."""
    client = create_client(uri)
    try:
        store = Store(client, DB_NAME, capped=False, ttl_indexes=False)
        first_minute = last_minute - int(online_days * 1440)
        started = time.monotonic()
        samples = 0
        with deadline(3600):  # a loader's writes, not the client's request deadline (1.8 s)
            for start in range(first_minute, last_minute, 240):  # four hours of minutes at a time
                docs, peaks = online_documents(start, min(last_minute, start + 240))
                for at in range(0, len(docs), 5000):
                    await store.online.samples.insert_many(docs[at : at + 5000], ordered=False)
                samples += len(docs)
                for (game, _day), best in peaks.items():
                    by_minute: dict[int, dict[str, int]] = {}
                    for key, (players, minute) in best.items():
                        by_minute.setdefault(minute, {})[key] = players
                    for minute, counts in by_minute.items():
                        await store.online.raise_peaks(game, minute * 60, counts)
            online_seconds = time.monotonic() - started
            for n, region in enumerate(REGIONS):
                await store.clans.add_seeds(region, [1_000_000 * (n + 1) + 17 * i for i in range(clans)])
    finally:
        client.close()
    return {"online_samples": samples, "online_load_seconds": round(online_seconds, 1)}


def load(workdir: str, sim_base: str, accounts: int, days: int, online_days: float, clans: int) -> tuple[dict, list]:
    """Every irreplaceable family into the data directory's embedded database."""
    import pymongo

    today = dt.datetime.now(dt.UTC).date().isoformat()
    first = shift_day(today, -days)
    span = days_from(first, days)  # through yesterday
    since = day_start(shift_day(first, -1))
    until = day_start(today) + 400 * DAY_SECONDS
    expected, tiers, tank_ids = loader_inputs(sim_base)
    chosen = pick_accounts(accounts, first)
    players = [SyntheticPlayer(r, a, tank_ids, span[0], nickname(r, a)) for r, a in chosen]
    database = EmbeddedDatabase(os.path.join(workdir, "db")).start()
    sync: pymongo.MongoClient = pymongo.MongoClient(database.uri, timeoutMS=600_000)
    try:
        asyncio.run(ensure_schema(database.uri))
        writer = Writer(sync[DB_NAME])
        started = time.monotonic()
        try:
            _load_all(writer, players, span, since, until, expected, tiers, None, started)
            writer.flush()
        finally:
            writer.pool.shutdown(wait=False, cancel_futures=True)
        tracker_seconds = time.monotonic() - started
        say(f"  tracker's documents: {dict(writer.written)} in {tracker_seconds:.0f} s")
        rest = asyncio.run(load_rest(database.uri, online_days, clans, int(time.time() // 60)))
        say(f"  online: {rest}")
        population = asyncio.run(
            run_population_job(database.uri, sim_base, span[-1], database.process.pid, os.path.join(workdir, "dumps"))
        )
        say(f"  population job: {population['outcome']} in {population['seconds']} s")
        counts = {
            name: int(sync[DB_NAME].command("collStats", name).get("count") or 0)
            for name in sorted(sync[DB_NAME].list_collection_names())
        }
    finally:
        sync.close()
        database.stop()
    return (
        {
            "accounts": len(players),
            "days": days,
            "first_day": span[0],
            "last_day": span[-1],
            "online_days": online_days,
            "clan_seeds_per_region": clans,
            "documents": {name: n for name, n in counts.items() if n},
            "seconds": round(time.monotonic() - started, 1),
            "tracker_documents_seconds": round(tracker_seconds, 1),
            "online_load_seconds": rest["online_load_seconds"],
            "population_job_seconds": population["seconds"],
        },
        chosen,
    )


class Reads:
    """The two reads in turn on one keep-alive connection, one request at a time."""

    def __init__(self, port: int, accounts: list[tuple[str, int]], rate: float = 0.0):
        self.port = port
        self.rate = rate  # pairs of requests a second at most (0: back to back)
        self.clients = Clients()
        eu = [acc for acc in accounts if acc[0] == "eu"] or accounts
        self.cached = eu[:CACHED_ACCOUNTS]
        self.built = eu[:BUILT_ACCOUNTS]
        self.offset = 0
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def prime(self) -> None:
        """Each cached account's profile fetched once (live, from the simulator), then served from
        the profile cache (as bench_scale's run_reads primes it)."""
        for region, account_id in self.cached:
            for _ in range(2):
                status, body = get(self.conn, f"{PREFIX}/player/{account_id}/{region}", self.clients.next())
            if status != 200 or b'"live_fetched":false' not in body.replace(b" ", b""):
                say(f"  warning: /player/{account_id}/{region} not served from the cache ({status})")

    def one(self, name: str) -> tuple[float, int]:
        chosen = self.cached if name == "cached" else self.built
        (path,) = read_paths("player" if name == "cached" else "history_30", 1, self.offset, chosen, [])
        started = time.perf_counter()
        try:
            status, _ = get(self.conn, path, self.clients.next())
        except (OSError, http.client.HTTPException):
            self.conn.close()
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            status = 0
        return 1000 * (time.perf_counter() - started), status

    def phase(self, requests: int, running=None) -> dict:
        """`requests` of each read in turn; with `running` (a callable), only requests made while it
        says True count, and the phase goes on while the first backup runs and until there are
        `requests` of each."""
        latencies: dict[str, list[float]] = {"cached": [], "built": []}
        statuses: dict[str, dict[str, int]] = {"cached": {}, "built": {}}
        next_at = time.monotonic()
        while (need := min(len(v) for v in latencies.values()) < requests) or (running is not None and running.first()):
            if running is not None and not running(need):
                time.sleep(0.01)  # between backups: the next one is starting
                continue
            if self.rate:
                next_at = max(next_at + 1 / self.rate, time.monotonic() - 1)
                time.sleep(max(0.0, next_at - time.monotonic()))
            for name in ("cached", "built"):
                elapsed, status = self.one(name)
                if running is not None and not running():
                    continue  # the backup ended meanwhile: not a request during one
                latencies[name].append(elapsed)
                if status != 200:
                    statuses[name][str(status)] = statuses[name].get(str(status), 0) + 1
            self.offset += 1
        return {
            name: {
                "n": len(values),
                "p50_ms": round(percentile(values, 0.5), 2),
                "p99_ms": round(percentile(values, 0.99), 2),
                "max_ms": round(max(values), 2),
                "non_200": statuses[name],
            }
            for name, values in latencies.items()
        }

    def close(self) -> None:
        self.conn.close()


class Backups:
    """`python -m server backup` runs, one after another, each into a new directory."""

    def __init__(self, data_dir: str, out_dir: str):
        self.data_dir, self.out_dir = data_dir, out_dir
        self.runs: list[dict] = []
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        target = os.path.join(self.out_dir, f"backup-{len(self.runs) + 1}")
        cmd = [sys.executable, "-m", "server", "backup", "--to", target, "--data-dir", self.data_dir]
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
        )
        self.runs.append({"target": target, "started": time.monotonic()})

    def __call__(self, more: bool = True) -> bool:
        """True while a backup is writing (its partial directory exists: write_backup has started,
        the command's own start-up is over); a finished one is recorded and, with `more`, the
        next started."""
        if self.proc is None:
            if more:
                self.start()
            return False
        if self.proc.poll() is None:
            name = os.path.basename(self.runs[-1]["target"])
            return any(entry.startswith(f".{name}.partial-") for entry in os.listdir(self.out_dir))
        self._record()
        self.proc = None
        if more:
            self.start()
        return False

    def first(self) -> bool:
        """True while the first backup runs."""
        return len(self.runs) == 1 and self.proc is not None and self.proc.poll() is None

    def _record(self) -> None:
        assert self.proc is not None
        run = self.runs[-1]
        run["wall_seconds"] = round(time.monotonic() - run["started"], 2)
        output = self.proc.stdout.read() if self.proc.stdout else ""
        if self.proc.returncode != 0:
            raise SystemExit(f"the backup failed ({self.proc.returncode}): {output[-2000:]}")
        run["output"] = output.strip().splitlines()[-1] if output.strip() else ""

    def finish(self) -> None:
        """Let the backup under way complete."""
        if self.proc is not None:
            self.proc.wait(3600)
            self._record()
        self.proc = None


async def restore(uri: str, source: str) -> dict:
    client = create_client(uri)
    try:
        store = Store(client, RESTORED_DB, capped=False, ttl_indexes=False)
        started = time.monotonic()
        report = await restore_backup(store, source)
        return {**report, "wall_seconds": round(time.monotonic() - started, 2)}
    finally:
        client.close()


def git_commit() -> str:
    found = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return found.stdout.strip()


def run_size(args, sim_base: str, accounts: int, days: int) -> dict:
    """One size: load, serve, read without and during backups, restore the first backup."""
    workdir = tempfile.mkdtemp(prefix="bench-backup-")
    out_dir = os.path.join(workdir, "backups")
    os.makedirs(out_dir)
    service = None
    backups = Backups(workdir, out_dir)
    try:
        say(f"loading {accounts:,} accounts x {days} days (+ {args.online_days} days of online samples) into {workdir}")
        loaded, chosen = load(workdir, sim_base, accounts, days, args.online_days, args.clans)
        say(f"  loaded in {loaded['seconds']} s: {loaded['documents']}")
        service, port = start_service(workdir, sim_base, os.path.join(workdir, "service.log"))
        reads = Reads(port, chosen, args.rate)
        try:
            reads.prime()
            reads.phase(5)  # warm-up
            say(f"baseline: {args.requests} requests of each read, nothing else running")
            baseline = reads.phase(args.requests)
            say(f"  {baseline}")
            say("during backups: python -m server backup --to DIR --data-dir DATA")
            backups.start()
            during = reads.phase(args.requests, backups)
            say(f"  {during}")
            backups.finish()
        finally:
            reads.close()
        first = backups.runs[0]
        manifest = read_manifest(first["target"], verify=True)
        say(
            f"  backup: {manifest['documents']:,} documents, {manifest['bytes'] / MB:.1f} MB in {manifest['seconds']} s"
        )
        empty = [n for n, c in manifest["collections"].items() if not c["documents"] and n != "migrations"]
        if empty:
            say(f"  warning: the data set left irreplaceable collections empty: {empty}")
        say(f"restoring {first['target']} into the fresh database {RESTORED_DB}")
        uri = running_uri(os.path.join(workdir, "db"))
        if uri is None:
            raise SystemExit("the service's database address is not in the data directory")
        restored = asyncio.run(restore(uri, first["target"]))
        say(f"  restored: {restored['documents']:,} documents in {restored['wall_seconds']} s")
    finally:
        if backups.proc is not None:
            backups.proc.kill()
        if service is not None:
            stop_group(service, 30.0)
        shutil.rmtree(workdir, ignore_errors=True)

    account_days = accounts * days
    bson_bytes = sum(int(c["bson_bytes"]) for c in manifest["collections"].values())
    file_bytes = int(manifest["bytes"])
    seconds = float(manifest["seconds"])
    restore_seconds = float(restored["wall_seconds"])
    ratio = {name: round(during[name]["p99_ms"] / max(baseline[name]["p99_ms"], 1e-9), 2) for name in baseline}
    return {
        "accounts": accounts,
        "days": days,
        "account_days": account_days,
        "online_days": args.online_days,
        "load": loaded,
        "backup": {
            "seconds": seconds,
            "busy_seconds": manifest.get("busy_seconds"),
            "duty": manifest.get("duty"),
            "command_wall_seconds": first.get("wall_seconds"),
            "documents": int(manifest["documents"]),
            "bson_bytes": bson_bytes,
            "bytes": file_bytes,
            "bson_mb_per_s": round(bson_bytes / MB / max(seconds, 1e-9), 2),
            "file_mb_per_s": round(file_bytes / MB / max(seconds, 1e-9), 2),
            "documents_per_s": round(int(manifest["documents"]) / max(seconds, 1e-9)),
            "collections": {
                name: {k: c.get(k) for k in ("documents", "bson_bytes", "bytes", "seconds", "busy_seconds", "windows")}
                for name, c in manifest["collections"].items()
            },
            "backups_run_during_reads": len(backups.runs),
        },
        "empty_collections": empty,
        "restore": {
            "seconds": restore_seconds,
            "write_seconds": restored["seconds"],
            "documents": restored["documents"],
            "documents_per_s": round(restored["documents"] / max(restore_seconds, 1e-9)),
            "bson_mb_per_s": round(bson_bytes / MB / max(restore_seconds, 1e-9), 2),
            "database": RESTORED_DB,
        },
        "reads": {"baseline": baseline, "during_backup": during},
        "p99_ratio": ratio,
    }


def family(size: dict, names: tuple[str, ...]) -> dict:
    collections = size["backup"]["collections"]
    picked = [collections[n] for n in names if n in collections]
    return {
        "documents": sum(int(c["documents"]) for c in picked),
        "bytes": sum(int(c["bytes"]) for c in picked),
        "bson_bytes": sum(int(c["bson_bytes"]) for c in picked),
        "seconds": round(sum(float(c["seconds"]) for c in picked), 2),
        "busy_seconds": round(sum(float(c.get("busy_seconds") or 0) for c in picked), 2),
    }


def per_unit(sizes: list[dict]) -> dict:
    """Each family per its unit at every size and how it grew from the first size to the last; what
    1,000 tracked account-years, a year of online samples and a year of daily tables come to."""
    out: dict = {}
    units = {
        "tracked_accounts": ("account_day", lambda s: s["account_days"]),
        "online": ("sampled_day", lambda s: s["online_days"]),
    }
    for name, (unit, count) in units.items():
        rows = []
        for size in sizes:
            fam = family(size, FAMILIES[name])
            n = max(count(size), 1e-9)
            rows.append(
                {
                    "size": f"{size['accounts']}x{size['days']}",
                    "units": count(size),
                    **fam,
                    "bytes_per_unit": round(fam["bytes"] / n, 1),
                    "bson_bytes_per_unit": round(fam["bson_bytes"] / n, 1),
                    "seconds_per_unit": round(fam["seconds"] / n, 6),
                    "busy_seconds_per_unit": round(fam["busy_seconds"] / n, 6),
                    "collections": {
                        c: {
                            "documents": size["backup"]["collections"][c]["documents"],
                            "bytes_per_unit": round(size["backup"]["collections"][c]["bytes"] / n, 1),
                        }
                        for c in FAMILIES[name]
                        if c in size["backup"]["collections"]
                    },
                }
            )
        entry: dict = {"unit": unit, "sizes": rows}
        if len(rows) >= 2 and rows[0]["units"] and rows[-1]["units"] != rows[0]["units"]:
            a, b = rows[0], rows[-1]
            entry["growth"] = {
                "units": round(b["units"] / a["units"], 2),
                "bytes": round(b["bytes"] / max(a["bytes"], 1), 2),
                "seconds": round(b["seconds"] / max(a["seconds"], 1e-9), 2),
                "bytes_per_unit": round(b["bytes_per_unit"] / max(a["bytes_per_unit"], 1e-9), 2),
                "seconds_per_unit": round(b["seconds_per_unit"] / max(a["seconds_per_unit"], 1e-9), 2),
            }
        out[name] = entry
    last = out["tracked_accounts"]["sizes"][-1]
    out["per_1000_account_years"] = {
        "rate_from": f"the tracker's documents per account-day at {last['size']}",
        "bytes": round(last["bytes_per_unit"] * 365_000),
        "bson_bytes": round(last["bson_bytes_per_unit"] * 365_000),
        "seconds": round(last["seconds_per_unit"] * 365_000),
        "busy_seconds": round(last["busy_seconds_per_unit"] * 365_000),
    }
    online = out["online"]["sizes"][-1]
    out["online_year"] = {
        "samples": SAMPLES_PER_DAY * 365,
        "bytes": round(online["bytes_per_unit"] * 365),
        "bson_bytes": round(online["bson_bytes_per_unit"] * 365),
        "seconds": round(online["seconds_per_unit"] * 365),
        "busy_seconds": round(online["busy_seconds_per_unit"] * 365),
    }
    # The tank-statistics job's tables: one build's, at the last size (per document), and what a
    # year of daily builds keeps by their retention.
    collections = sizes[-1]["backup"]["collections"]
    tables: dict = {}
    for name in FAMILIES["population_tables"]:
        c = collections.get(name)
        if c is None:
            continue
        docs = int(c["documents"])
        kept = YEAR_DOCUMENTS.get(name, docs)
        per_doc = int(c["bytes"]) / docs if docs else 0.0
        tables[name] = {
            "documents": docs,
            "bytes": int(c["bytes"]),
            "bytes_per_document": round(per_doc),
            "seconds_per_document": round(float(c["seconds"]) / docs, 5) if docs else None,
            "year_documents": kept,
            "year_bytes": round(per_doc * kept),
            "year_seconds": round(float(c["seconds"]) / docs * kept) if docs else 0,
        }
    out["population_tables"] = {
        "at": f"{sizes[-1]['accounts']}x{sizes[-1]['days']}",
        "collections": tables,
        "year_bytes": sum(t["year_bytes"] for t in tables.values()),
        "year_seconds": sum(t["year_seconds"] for t in tables.values()),
    }
    return out


def run(args) -> dict:
    wall0 = time.monotonic()
    sizes = [tuple(int(v) for v in spec.split("x")) for spec in args.sizes.split(",")]
    simdir = tempfile.mkdtemp(prefix="bench-backup-sim-")
    sim_proc = None
    results = []
    try:
        # The simulator gives the loader and the service the expected values and the tanks' tiers;
        # the reads measured send it nothing else (--no-jobs).
        sim_proc, sim_base = start_simulator(simdir, 100, 64)
        for accounts, days in sizes:
            results.append(run_size(args, sim_base, accounts, days))
    finally:
        if sim_proc is not None:
            stop_group(sim_proc, 30.0)
        shutil.rmtree(simdir, ignore_errors=True)
    ratios = [r["p99_ratio"]["cached"] for r in results]
    return {
        "sizes": results,
        "families": {name: list(names) for name, names in FAMILIES.items()},
        "per_unit": per_unit(results),
        "requests": args.requests,
        "backup_duty": float(os.environ.get("STATSAPI_BACKUP_DUTY") or BACKUP_DUTY),  # the command's (--backup-duty)
        "goal": {"cached_p99_ratio_max": GOAL_RATIO, "met": all(r <= GOAL_RATIO for r in ratios)},
        "backup_from": "a separate process: python -m server backup --to DIR --data-dir DATA (the running server's database)",
        "commit": git_commit(),
        "command": " ".join([os.path.basename(sys.executable), "-m", "scripts.bench_backup", *sys.argv[1:]]),
        "wall_seconds": round(time.monotonic() - wall0, 1),
    }


def table(result: dict) -> str:
    rows = []
    for size in result["sizes"]:
        b, r = size["backup"], size["restore"]
        base, during = size["reads"]["baseline"], size["reads"]["during_backup"]
        head = f"{size['accounts']:,} x {size['days']}"
        rows += [
            (
                f"[{head}] backup seconds (work; command wall)",
                f"{b['seconds']} ({b['busy_seconds']}; {b['command_wall_seconds']})",
            ),
            (f"[{head}] backup documents", f"{b['documents']:,} ({b['documents_per_s']:,}/s)"),
            (f"[{head}] BSON read / file written, MB", f"{b['bson_bytes'] / MB:.2f} / {b['bytes'] / MB:.2f}"),
            (f"[{head}] restore seconds (documents/s)", f"{r['seconds']} ({r['documents_per_s']:,})"),
        ]
        for name, read in (("cached", "cached /player"), ("built", "built /history?days=30")):
            rows.append(
                (
                    f"[{head}] {read}: p50/p99 ms without -> during",
                    f"{base[name]['p50_ms']}/{base[name]['p99_ms']} -> {during[name]['p50_ms']}/{during[name]['p99_ms']}"
                    f" (p99 ratio {size['p99_ratio'][name]}; n {base[name]['n']} / {during[name]['n']})",
                )
            )
    units = result["per_unit"]
    for name in ("tracked_accounts", "online"):
        entry = units[name]
        figures = "; ".join(
            f"{row['size']}: {row['bytes_per_unit']:,.0f} B, {1000 * row['seconds_per_unit']:.3f} ms"
            for row in entry["sizes"]
        )
        rows.append((f"{name} per {entry['unit']} (file, backup time)", figures))
    year = units["per_1000_account_years"]
    rows.append(
        (
            "per 1,000 account-years: file MB, backup s (work s)",
            f"{year['bytes'] / MB:.1f}, {year['seconds']} ({year['busy_seconds']})",
        )
    )
    tables = units["population_tables"]
    rows.append(
        ("a year of daily tables: file MB, backup s", f"{tables['year_bytes'] / MB:.1f}, {tables['year_seconds']}")
    )
    online = units["online_year"]
    rows.append(
        (
            "a year of online samples: file MB, backup s (work s)",
            f"{online['bytes'] / MB:.1f}, {online['seconds']} ({online['busy_seconds']})",
        )
    )
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sizes", default="1000x60,1000x180", help="accounts x days of each size, comma-separated")
    parser.add_argument("--online-days", type=float, default=1.0, help="days of online samples at the sampler's rate")
    parser.add_argument("--clans", type=int, default=20, help="clan seeds per region")
    parser.add_argument(
        "--requests", type=int, default=1000, help="requests of each read without (and at least during)"
    )
    parser.add_argument(
        "--rate", type=float, default=40.0, help="pairs of reads (cached, built) a second at most; 0: back to back"
    )
    parser.add_argument("--json", default=os.path.join(ROOT, "bench-backup.json"))
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stop the children on SIGTERM too
    result = run(args)
    with open(args.json, "w") as handle:
        json.dump(result, handle, indent=2)
    print(table(result))
    print(f"wall {result['wall_seconds']} s; written to {args.json}")


if __name__ == "__main__":
    main()
