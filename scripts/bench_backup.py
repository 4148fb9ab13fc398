#!/usr/bin/env python3
"""Benchmark of the online backup: its time, size and rates, a restore's, and reads' latency during a backup.

    .venv/bin/python -m scripts.bench_backup                                      # 1,000 accounts x 60 days
    .venv/bin/python -m scripts.bench_backup --accounts 30 --days 10 --requests 40 --json /tmp/b.json   # a smoke run

1. Loads, into an embedded SecantusDB in a temporary directory, `--accounts` tracked accounts with
   `--days` days (ending yesterday, UTC) of what the tracker's daily pass writes — per-tank
   records, snapshots, the tracked document, the population's per-tank changes and the search's
   nickname prefixes — with scripts/bench_scale.py's bulk loader (scripts/scale_loader.py; the
   documents equal the real pass's, tests/test_bench_scale.py). The expected values and the tanks'
   tiers come from the upstream simulator (a child process, as for bench_scale), which the reads
   measured never call.
2. Serves that data directory with the real service (`python -m server --data-dir DIR --no-jobs`,
   as bench_scale serves it) and measures, at one client over keep-alive HTTP, two reads in turn:
   the *cached* `/player/{id}/{region}` of 10 accounts in rotation (bench_scale's and the attacks'
   cached read: each profile fetched once from the simulator first, then served from the profile
   cache, an answer replayed by the answer cache within 5 s) and the *built*
   `/player/{id}/{region}/history?days=30` of up to 400 accounts in rotation (every answer built
   from the database: snapshots and per-tank records, as bench_scale's). `--requests` of each with nothing else
   running (baseline), then as many while `python -m server backup --to DIR --data-dir DATA` runs
   in a separate process (the operator's command: it finds the running server's database through
   the data directory's address file); when a backup ends before the requests do, another backup
   starts, so every request counted ran during one. The first backup's figures are reported.
3. Restores that backup (store.backup.restore_backup, in this process) into a fresh database name
   on the same server and times it.

Prints a table and writes `--json` (default bench-backup.json at the repository root): backup
seconds, documents, BSON and file bytes, MB/s of each, bytes per account-day and the same scaled
linearly to 1,000 tracked account-years, restore seconds and rates, and p50/p99 of both reads
without and during the backup with the ratio of p99s (goal for the cached read: <= 2).
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
    say,
    shift_day,
    start_service,
    start_simulator,
)
from scripts.loadkit.processes import stop_group  # noqa: E402
from scripts.scale_loader import SyntheticPlayer, days_from  # noqa: E402
from scripts.upstream_sim.ids import nickname  # noqa: E402
from server.api.catalogue import PREFIX  # noqa: E402
from server.compose.embedded_db import EmbeddedDatabase, running_uri  # noqa: E402
from server.domain.days import DAY_SECONDS, day_start  # noqa: E402
from store import Store, create_client  # noqa: E402
from store.backup import read_manifest, restore_backup  # noqa: E402

RESTORED_DB = "statsapi_restored"
CACHED_ACCOUNTS = 10  # the cached /player's rotation (bench_scale's --player-accounts)
BUILT_ACCOUNTS = 400  # the built read's rotation (at most): each answer is built from the database
GOAL_RATIO = 2.0
MB = 1e6


def loader_inputs(sim_base: str) -> tuple:
    """The expected values and each region's tiers the service uses (from the simulator, as
    bench_scale's loader takes them) and the tank ids the synthetic players own."""
    expected, tiers = asyncio.run(ratings_inputs(sim_base))
    tank_ids = sorted(set().union(*(set(t) for t in tiers.values())) & set(getattr(expected, "_by_tank", {}) or []))
    return expected, tiers, tank_ids or sorted(set().union(*(set(t) for t in tiers.values())))


def load(workdir: str, sim_base: str, accounts: int, days: int) -> tuple[dict, list[tuple[str, int]]]:
    """`accounts` x `days` of tracked data into the data directory's embedded database."""
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
        seconds = time.monotonic() - started
        counts = {name: int(sync[DB_NAME].command("collStats", name).get("count") or 0) for name in writer.written}
    finally:
        sync.close()
        database.stop()
    return (
        {
            "accounts": len(players),
            "days": days,
            "first_day": span[0],
            "last_day": span[-1],
            "documents": counts,
            "seconds": round(seconds, 1),
        },
        chosen,
    )


class Reads:
    """The two reads in turn on one keep-alive connection, one request at a time."""

    def __init__(self, port: int, accounts: list[tuple[str, int]]):
        self.port = port
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
        says True are kept, and the phase goes on until there are `requests` of each."""
        latencies: dict[str, list[float]] = {"cached": [], "built": []}
        statuses: dict[str, dict[str, int]] = {"cached": {}, "built": {}}
        while min(len(v) for v in latencies.values()) < requests:
            if running is not None and not running():
                time.sleep(0.01)  # between backups: the next one is starting
                continue
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

    def running(self) -> bool:
        """True while a backup is writing (its partial directory exists: write_backup has started,
        the command's own start-up is over); a finished one is recorded and the next started."""
        if self.proc is None:
            return False
        if self.proc.poll() is None:
            name = os.path.basename(self.runs[-1]["target"])
            return any(entry.startswith(f".{name}.partial-") for entry in os.listdir(self.out_dir))
        self._record()
        self.start()
        return False

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
            self.proc.wait(600)
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


def run(args) -> dict:
    wall0 = time.monotonic()
    workdir = tempfile.mkdtemp(prefix="bench-backup-")
    out_dir = os.path.join(workdir, "backups")
    os.makedirs(out_dir)
    service = sim_proc = None
    backups = Backups(workdir, out_dir)
    try:
        # The simulator gives the loader and the service the expected values and the tanks' tiers;
        # the reads measured send it nothing else (--no-jobs, tracked data only).
        sim_proc, sim_base = start_simulator(workdir, 100, 64)
        say(f"loading {args.accounts:,} accounts x {args.days} days into {workdir}")
        loaded, accounts = load(workdir, sim_base, args.accounts, args.days)
        say(f"  loaded: {loaded}")
        service, port = start_service(workdir, sim_base, os.path.join(workdir, "service.log"))
        reads = Reads(port, accounts)
        try:
            reads.prime()
            reads.phase(5)  # warm-up
            say(f"baseline: {args.requests} requests of each read, nothing else running")
            baseline = reads.phase(args.requests)
            say(f"  {baseline}")
            say("during backups: python -m server backup --to DIR --data-dir DATA")
            backups.start()
            during = reads.phase(args.requests, backups.running)
            say(f"  {during}")
            backups.finish()
        finally:
            reads.close()
        first = backups.runs[0]
        manifest = read_manifest(first["target"], verify=True)
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
        if sim_proc is not None:
            stop_group(sim_proc, 30.0)
        shutil.rmtree(workdir, ignore_errors=True)

    account_days = args.accounts * args.days
    bson_bytes = sum(int(c["bson_bytes"]) for c in manifest["collections"].values())
    file_bytes = int(manifest["bytes"])
    seconds = float(manifest["seconds"])
    restore_seconds = float(restored["wall_seconds"])
    ratio = {name: round(during[name]["p99_ms"] / max(baseline[name]["p99_ms"], 1e-9), 2) for name in baseline}
    return {
        "accounts": args.accounts,
        "days": args.days,
        "account_days": account_days,
        "requests": args.requests,
        "load": loaded,
        "backup": {
            "seconds": seconds,
            "command_wall_seconds": first.get("wall_seconds"),
            "documents": int(manifest["documents"]),
            "bson_bytes": bson_bytes,
            "bytes": file_bytes,
            "bson_mb_per_s": round(bson_bytes / MB / max(seconds, 1e-9), 2),
            "file_mb_per_s": round(file_bytes / MB / max(seconds, 1e-9), 2),
            "documents_per_s": round(int(manifest["documents"]) / max(seconds, 1e-9)),
            "collections": {
                name: {k: c[k] for k in ("documents", "bson_bytes", "bytes", "seconds")}
                for name, c in manifest["collections"].items()
            },
            "backups_run_during_reads": len(backups.runs),
        },
        "per_account_day": {
            "bytes": round(file_bytes / account_days, 1),
            "bson_bytes": round(bson_bytes / account_days, 1),
        },
        "per_1000_account_years": {
            "extrapolation": "linear in account-days: bytes per account-day x 1,000 x 365",
            "bytes": round(file_bytes / account_days * 1000 * 365),
            "bson_bytes": round(bson_bytes / account_days * 1000 * 365),
        },
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
        "goal": {"cached_p99_ratio_max": GOAL_RATIO, "met": ratio["cached"] <= GOAL_RATIO},
        "backup_from": "a separate process: python -m server backup --to DIR --data-dir DATA (the running server's database)",
        "commit": git_commit(),
        "command": " ".join([os.path.basename(sys.executable), "-m", "scripts.bench_backup", *sys.argv[1:]]),
        "wall_seconds": round(time.monotonic() - wall0, 1),
    }


def table(result: dict) -> str:
    b, r, per, year = result["backup"], result["restore"], result["per_account_day"], result["per_1000_account_years"]
    base, during = result["reads"]["baseline"], result["reads"]["during_backup"]
    rows = [
        ("accounts x days (account-days)", f"{result['accounts']:,} x {result['days']} ({result['account_days']:,})"),
        ("backup seconds (command wall)", f"{b['seconds']} ({b['command_wall_seconds']})"),
        ("backup documents", f"{b['documents']:,} ({b['documents_per_s']:,}/s)"),
        ("BSON read / file written, MB", f"{b['bson_bytes'] / MB:.2f} / {b['bytes'] / MB:.2f}"),
        ("MB/s of BSON read / of file written", f"{b['bson_mb_per_s']} / {b['file_mb_per_s']}"),
        ("bytes per account-day (file / BSON)", f"{per['bytes']} / {per['bson_bytes']}"),
        (
            "per 1,000 account-years (linear): file / BSON MB",
            f"{year['bytes'] / MB:.1f} / {year['bson_bytes'] / MB:.1f}",
        ),
        (
            "restore seconds (documents/s, BSON MB/s)",
            f"{r['seconds']} ({r['documents_per_s']:,}, {r['bson_mb_per_s']})",
        ),
    ]
    for name, read in (("cached", "cached /player"), ("built", "built /history?days=30")):
        rows.append(
            (
                f"{read}: p50/p99 ms without -> during",
                f"{base[name]['p50_ms']}/{base[name]['p99_ms']} -> {during[name]['p50_ms']}/{during[name]['p99_ms']}"
                f" (p99 ratio {result['p99_ratio'][name]})",
            )
        )
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--accounts", type=int, default=1000, help="tracked accounts")
    parser.add_argument("--days", type=int, default=60, help="days of tracked data per account (ending yesterday)")
    parser.add_argument("--requests", type=int, default=300, help="requests of each read, without and during")
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
