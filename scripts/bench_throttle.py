#!/usr/bin/env python3
"""Benchmark of the service as a citizen of the real API's CDN throttle (issue 30, "Done means").

    .venv/bin/python -m scripts.bench_throttle                 # 200 EU clans and their members' pass (~35 min)
    .venv/bin/python -m scripts.bench_throttle --minutes 0.3 --clans 2 --json /tmp/t.json   # a smoke run

The scenario: the upstream simulator in strict mode (`--strict`: the CDN's throttle per client
address and realm, EU 6, NA 8, ASIA 8 requests/s; over the rate a request stalls unanswered, a
burst blocks the address for a while) with the application quota `--rps 20`, and the real service
(`python -m server`, jobs on, default realm caps, `--upstream-rps 20`) over a SecantusDB child.
Before the service starts, `--clans` (200) active clans of `--region` (eu) are seeded the way
scripts/add_clans.py does, so the service's hourly clan refresh job (due at start) refreshes them
and starts tracking their members. Meanwhile `--lookups-per-minute` (10) live lookups a minute
arrive (`GET /api/v1/player/{id}/{region}`, each of an account never looked up, far from the clans'
member ranges, each from its own client address via X-Forwarded-For so the per-client live limit
is not what is measured), for the whole run.

The tracker's pass over the members. The pass spreads a day's 64 slices over the UTC day (slice s
due at 00:00 + s x 22.5 min) and a slice finished today is visited again tomorrow, so members
tracked at some time of day are visited in the slices due after it, the rest the next day: a
run of minutes would visit a time-of-day-dependent handful. So the service runs with one change,
made by this script and only to the tracker's clock (`serve-with-pass-clock` below: `python -m
server` with the same flags, its Tracker given another clock; every other part of the service,
the upstream client, its budget and realm gates included, reads the real clock): until the clan
refresh's first run has ended, the tracker's clock stands at 00:00 UTC of yesterday (nothing of
today is due, so no slice of today is finished empty before the members are tracked); then
(SIGUSR1) it stands at 23:59:59 of today, so the whole day's 64 slices are due at once, as for a
process catching up after a day away, and the service's own tracker visits every tracked member
(account/info per 100, tanks/stats for each member: a first visit always fetches the tanks and
writes the first per-tank record), through the same per-realm cap as the refresh and the live
lookups. The run lasts at least `--minutes` (8) and until the pass has finished all 64 slices,
at most `--max-minutes` (60).

Before the service starts, the simulator generates the members' and the live accounts' profiles
(throttle and quota off meanwhile, then reset, counters cleared; about 2 minutes for 200 clans;
`--cold` skips it): a never-seen account costs it ~10 ms of CPU on its one worker thread, so a
100-id account/info takes ~1 s and the clan refresh's member calls would queue for seconds and
time out, which is the simulator's cost, not the CDN's.

Every 10 s it reads the simulator's `/_sim/stats` (answered requests `total` and by path, the
throttle's `stalled`, `violations.request_limit`), the service's `/api/v1/status` (the clan refresh
job's outcome, the tracker, the realm gates) and, once the pass has started, the pass's slice
documents (`tracker_slices`: the tracker's own figures). A stalled request never reaches the
simulator's counters, so the requests sent upstream are `total + stalled`. It prints and writes to
`--json` (default bench-throttle.json):

- upstream requests sent, answered, stalled and refused (REQUEST_LIMIT_EXCEEDED), overall, per
  minute and after the first minute (the share of stalled requests among those sent after it);
- the clan refresh: seconds from the service's start to the end of its first run, its outcome,
  and each database step of its members' tracking (Tracker.track_members: 500 members a step under
  a 30 s job deadline) with its duration or failure, from the service's log (the child times each
  step and logs every database command slower than 5 s: serve_with_pass_clock);
- the clans' members (the simulator's lists), how many are tracked and how many the pass visited
  (the database's own `tracked` documents), and the pass: accounts visited, account/info and
  tanks/stats requests, per-tank records written, its duration (from the clock's jump to the
  poll that found all 64 slices finished: +-10 s) and the upstream requests meanwhile;
- live lookups: count, statuses, p50 / p99 / max latency, share answered 200, whether every
  non-200 was a 503 with Retry-After, overall and by phase (during the refresh, the pass, after);
- the goals as booleans: stalls after minute 1 <= 1 % of the requests sent, none refused, every
  live lookup within 10 s, every non-200 a 503 with Retry-After, most live lookups 200, the
  refresh completed, every member tracked, the pass visited every member.

A missed goal is printed loudly but is no failure: the exit status is non-zero only on a crash.
Every child (the database, the simulator, the service) is stopped on exit, Ctrl-C included.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import concurrent.futures
import datetime as dt
import http.client
import json
import math
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from scripts.loadkit.processes import Children, free_port, stop_group, terminate, wait_http  # noqa: E402
from scripts.upstream_sim.ids import REGION_RANGES, clan_members  # noqa: E402
from server.compose.embedded_db import EmbeddedDatabase  # noqa: E402
from server.contract.catalogue import PREFIX  # noqa: E402
from server.domain.days import DAY_SECONDS, day_start, utc_day  # noqa: E402
from server.upstream.client import ACCOUNT_FIELDS  # noqa: E402
from store.constants import SPEND_KEYS  # noqa: E402
from store.tracker import SLICES  # noqa: E402

EXPECTED = os.path.join(os.path.dirname(ROOT), "shared", "data", "wn8exp-2024-09-12.json")
DB_NAME = "bench_throttle"
APPLICATION_ID = "bench-throttle"
POLL_SECONDS = 10.0
FIRST_MINUTE = 60.0
LIVE_DEADLINE = 10.0  # seconds: every live lookup answers within this
LIVE_CLIENT_TIMEOUT = 60.0  # the lookups' own HTTP timeout (beyond the deadline: a miss either way)
STALL_SHARE_GOAL = 0.01
# Live lookups read accounts this far above the region's first id: the clans' members are drawn
# from 100 consecutive ids per clan slot from the region's base, so these were never fetched.
LIVE_ID_OFFSET = 5_000_000
TRUSTED_PROXY = "127.0.0.1/32"
WARM_APPLICATION_ID = "bench-throttle-warm-up"  # the warm-up's calls, apart from the service's quota
OUTCOME_NUMBERS = re.compile(
    r"(refreshed|failed|partial|not found|disbanded|members rated|upstream requests|left for later) (\d+)"
)
SERVE_COMMAND = "serve-with-pass-clock"  # `python -m scripts.bench_throttle serve-with-pass-clock <server flags>`
PASS_DAY_FILE = "pass-day"  # in the workdir: the day the pass's clock jumps to (written before SIGUSR1)
SLOW_COMMAND_S = 5.0  # database commands at least this slow are logged by the service (serve_with_pass_clock)
TRACKING_STEP = re.compile(
    r"bench_throttle: tracking step of (\d+) members(?:: ([\d.]+) s| failed after ([\d.]+) s: (\w+))"
)


def say(*parts) -> None:
    print(time.strftime("%H:%M:%S"), *parts, flush=True)


def percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10
        )
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


# --------------------------------------------------------------------------------------
# The service with the pass's clock (a child process of the benchmark)
# --------------------------------------------------------------------------------------
def serve_with_pass_clock(argv: list[str]) -> int:
    """`python -m server` (same flags) whose Tracker reads the pass clock; nothing else changes.

    Until SIGUSR1 the clock stands at 00:00 UTC of yesterday (the pass finds at most yesterday's
    slice 0 due, empty at start); on SIGUSR1 it jumps to the last second of the day named in the
    workdir's PASS_DAY_FILE (the env BENCH_THROTTLE_PASS_DAY_FILE; today when absent) and stands
    there: all SLICES slices of that day are due. A standing clock is what the tracker's tests and
    scripts/bench_tracker.py use: claims neither expire nor need renewal within one process.

    Also measured, for the report (timing only, no change of behaviour): each database step of the
    clan members' tracking (Tracked.track_many under Tracker.track_members' job deadline) and
    every database command slower than SLOW_COMMAND_S, logged as `bench_throttle:` lines."""
    import logging

    from pymongo import monitoring

    import server.compose.wiring as wiring
    from server.services.tracker import Tracker

    log = logging.getLogger("bench_throttle")
    now = {"t": day_start(utc_day(time.time())) - DAY_SECONDS}

    def pass_clock() -> float:
        return now["t"]

    def jump(signum, frame) -> None:
        day = utc_day(time.time())
        path = os.environ.get("BENCH_THROTTLE_PASS_DAY_FILE")
        if path and os.path.exists(path):
            with open(path) as handle:
                day = handle.read().strip() or day
        now["t"] = day_start(day) + DAY_SECONDS - 1

    class PassClockTracker(Tracker):
        def __init__(self, *args, **kwargs):
            kwargs["clock"] = pass_clock
            super().__init__(*args, **kwargs)
            tracked = self.store.tracked
            track_many = tracked.track_many

            async def timed_track_many(region, accounts, until, at):
                accounts = list(accounts)
                started = time.monotonic()
                try:
                    result = await track_many(region, accounts, until, at)
                except BaseException as exc:
                    log.warning(
                        "tracking step of %d members failed after %.1f s: %s",
                        len(accounts),
                        time.monotonic() - started,
                        type(exc).__name__,
                    )
                    raise
                log.info("tracking step of %d members: %.1f s", len(accounts), time.monotonic() - started)
                return result

            tracked.track_many = timed_track_many  # type: ignore[method-assign]

    class SlowCommands(monitoring.CommandListener):
        def __init__(self) -> None:
            self.started_at: dict[int, tuple[float, str]] = {}

        def started(self, event) -> None:
            target = event.command.get(event.command_name)
            name = f"{event.command_name} {target}" if isinstance(target, str) else event.command_name
            self.started_at[event.request_id] = (time.monotonic(), name)

        def _ended(self, event, failure: str | None) -> None:
            began, name = self.started_at.pop(event.request_id, (None, ""))
            if began is not None and time.monotonic() - began >= SLOW_COMMAND_S:
                log.warning(
                    "slow database command: %s %.1f s%s",
                    name,
                    time.monotonic() - began,
                    f" (failed: {failure})" if failure else "",
                )

        def succeeded(self, event) -> None:
            self._ended(event, None)

        def failed(self, event) -> None:
            self._ended(event, type(event.failure).__name__ if isinstance(event.failure, BaseException) else "error")

    monitoring.register(SlowCommands())  # every client created from now on (the service's one)
    signal.signal(signal.SIGUSR1, jump)
    wiring.Tracker = PassClockTracker  # type: ignore[misc]  # build_services constructs the process's one Tracker from here
    from server.compose.entry import main as server_main

    return server_main(argv)


# --------------------------------------------------------------------------------------
# Plain HTTP
# --------------------------------------------------------------------------------------
def get_json(port: int, path: str, timeout: float = 10.0, method: str = "GET", body: dict | None = None) -> Any:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        response = conn.getresponse()
        data = response.read()
        if response.status != 200:
            raise RuntimeError(f"{path}: HTTP {response.status}: {data[:200]!r}")
        return json.loads(data)
    finally:
        conn.close()


def live_lookup(port: int, region: str, account_id: int, client: str) -> dict:
    """One live lookup on a fresh connection from client address `client`; transport errors recorded."""
    path = f"{PREFIX}/player/{account_id}/{region}"
    started = time.monotonic()
    out: dict[str, Any] = {"account_id": account_id, "status": None, "retry_after": None, "code": None}
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=LIVE_CLIENT_TIMEOUT)
    try:
        conn.request("GET", path, headers={"X-Forwarded-For": client, "Connection": "close"})
        response = conn.getresponse()
        body = response.read()
        out["status"] = response.status
        out["retry_after"] = response.getheader("Retry-After")
        if response.status != 200:
            try:
                out["code"] = (json.loads(body).get("error") or {}).get("code")
            except (ValueError, AttributeError):
                out["code"] = None
    except Exception as exc:  # timeout, reset, refused ...
        out["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        conn.close()
    out["seconds"] = round(time.monotonic() - started, 3)
    return out


# --------------------------------------------------------------------------------------
# Seeding (as scripts/add_clans.py does) and the database's own counts
# --------------------------------------------------------------------------------------
async def seed_clans(uri: str, region: str, clan_ids: list[int]) -> int:
    from store import create_client
    from store.clans import Clans

    client = create_client(uri)
    try:
        clans = Clans(client[DB_NAME])
        await clans.ensure_schema()
        return await clans.add_seeds(region, clan_ids, time.time())
    finally:
        client.close()


def pass_reading(db, day: str) -> dict:
    """The pass's own figures of `day` (its `tracker_slices` documents: 64 small ones)."""
    docs = list(db["tracker_slices"].find({"day": day}))
    out: dict[str, Any] = {
        "slices_claimed": len(docs),
        "slices_finished": sum(1 for doc in docs if doc.get("finished") is not None),
    }
    for key in SPEND_KEYS:
        out[key] = sum(int(doc.get(key) or 0) for doc in docs)
    return out


def database_counts(uri: str, region: str, clan_ids: list[int], members: set[int], pass_day: str | None) -> dict:
    """What the database holds at the end: the seeded clans cached, the clans' members tracked and
    visited by the pass (their `tracked` documents), every account tracked, the pass's records."""
    import pymongo

    client: pymongo.MongoClient = pymongo.MongoClient(uri, timeoutMS=120_000)
    try:
        db = client[DB_NAME]
        tracked = list(
            db["tracked"].find({"region": region}, {"_id": 0, "account_id": 1, "last_visit_day": 1, "record_day": 1})
        )
        mine = [doc for doc in tracked if int(doc["account_id"]) in members]
        out: dict[str, Any] = {
            "clans_cached": db["clans"].count_documents({"region": region, "clan_id": {"$in": clan_ids}}),
            "accounts_tracked": len(tracked),
            "members_of_the_clans": len(members),
            "members_tracked": len(mine),
            "members_visited_by_pass": None,
            "members_with_a_record_of_the_pass_day": None,
            "tank_records_of_the_pass_day": None,
            "pass_day": pass_day,
        }
        if pass_day is not None:
            out["members_visited_by_pass"] = sum(1 for doc in mine if doc.get("last_visit_day") == pass_day)
            out["members_with_a_record_of_the_pass_day"] = sum(1 for doc in mine if doc.get("record_day") == pass_day)
            out["tank_records_of_the_pass_day"] = db["tank_records"].count_documents({"d": pass_day})
        return out
    finally:
        client.close()


# --------------------------------------------------------------------------------------
# Readings
# --------------------------------------------------------------------------------------
def sim_reading(stats: dict) -> dict:
    throttle = stats.get("throttle") or {}
    answered = int(stats.get("total") or 0)
    stalled = int(throttle.get("stalled") or 0)
    by_region: dict[str, int] = {}
    for endpoint, n in (stats.get("by_endpoint") or {}).items():  # "game/region/path"
        parts = endpoint.split("/", 2)
        if len(parts) == 3:
            by_region[parts[1]] = by_region.get(parts[1], 0) + int(n)
    return {
        "answered": answered,
        "stalled": stalled,
        "sent": answered + stalled,
        "refused": int((stats.get("violations") or {}).get("request_limit") or 0),
        "answered_by_path": dict(stats.get("by_path") or {}),
        "answered_by_region": by_region,
        "stalled_by_region": throttle.get("stalled_by_region") or {},
        "blocks": int(throttle.get("blocks") or 0),
        "max_per_second_by_region": throttle.get("max_per_second_by_region") or {},
    }


def service_reading(status: dict | None, region: str) -> dict:
    if not status:
        return {}
    status = status.get("data", status)  # the API's envelope
    jobs = status.get("jobs") or {}
    refresh = jobs.get("clan_refresh") or {}
    tracker = status.get("tracker") or {}
    today = tracker.get("today") or {}
    realm = ((status.get("upstream") or {}).get("realms") or {}).get(region) or {}
    return {
        "health": status.get("health"),
        "health_reasons": status.get("health_reasons"),
        "clan_refresh": {k: refresh.get(k) for k in ("last_run", "ok", "message", "duration_s")} if refresh else None,
        "tracked": tracker.get("tracked"),
        "tracker_day": today.get("day"),
        "visited_today": today.get("visited"),
        "by_realm": (today.get("by_realm") or {}).get(region),
        "realm": {
            k: realm.get(k)
            for k in (
                "rate_per_second",
                "slowed_down",
                "congestions",
                "timeouts_last_minute",
                "backoff",
                "queued",
                "requests_last_minute",
            )
        }
        if realm
        else None,
    }


def outcome_numbers(message: str | None) -> dict[str, int]:
    return {name.replace(" ", "_"): int(value) for name, value in OUTCOME_NUMBERS.findall(message or "")}


def log_summary(path: str, limit: int = 12) -> dict:
    """WARNING / ERROR lines of the service's log: counts and the first few distinct messages."""
    counts: collections.Counter = collections.Counter()
    samples: dict[str, int] = {}
    try:
        with open(path, errors="replace") as handle:
            for line in handle:
                level = "ERROR" if " ERROR " in line else "WARNING" if " WARNING " in line else None
                if level is None:
                    continue
                counts[level] += 1
                # The message without its timestamp and numbers, to group repeats.
                key = re.sub(r"\d+", "N", line.split(level, 1)[1].strip())[:160]
                samples[key] = samples.get(key, 0) + 1
    except OSError:
        pass
    common = sorted(samples.items(), key=lambda kv: -kv[1])[:limit]
    return {
        "warnings": counts["WARNING"],
        "errors": counts["ERROR"],
        "common": [{"n": n, "line": k} for k, n in common],
    }


def tracking_steps(path: str, until: int | None = None) -> dict:
    """The members' tracking steps as the service timed them (serve_with_pass_clock's log lines),
    in the log's first `until` bytes (the first refresh run's: a later run tracks its own)."""
    done: list[float] = []
    failed: list[dict] = []
    members = 0
    try:
        with open(path, "rb") as raw:
            text = raw.read(until if until is not None else -1).decode(errors="replace")
            for line in text.splitlines():
                found = TRACKING_STEP.search(line)
                if found is None:
                    continue
                members += int(found.group(1))
                if found.group(2) is not None:
                    done.append(float(found.group(2)))
                else:
                    failed.append(
                        {"members": int(found.group(1)), "after_s": float(found.group(3)), "error": found.group(4)}
                    )
    except OSError:
        pass
    return {
        "steps": len(done) + len(failed),
        "members_in_steps": members,
        "p50_s": percentile(done, 0.5),
        "max_s": max(done) if done else None,
        "failed": failed,
    }


def lookup_figures(lookups: list[dict]) -> dict:
    latencies = [x["seconds"] for x in lookups]
    statuses = collections.Counter(str(x["status"] or "error") for x in lookups)
    return {
        "count": len(lookups),
        "statuses": dict(statuses),
        "share_200": round(statuses.get("200", 0) / len(lookups), 3) if lookups else None,
        "p50_s": percentile(latencies, 0.50),
        "p99_s": percentile(latencies, 0.99),
        "max_s": max(latencies) if latencies else None,
    }


def upstream_between(first: dict, last: dict) -> dict:
    """Upstream figures between two readings of the simulator (sim_reading)."""
    seconds = last["t"] - first["t"]
    a, b = first.get("upstream") or {}, last.get("upstream") or {}
    if not a or not b:
        return {}
    sent = b["sent"] - a["sent"]
    by_path = {
        path: n - a["answered_by_path"].get(path, 0)
        for path, n in b["answered_by_path"].items()
        if n - a["answered_by_path"].get(path, 0)
    }
    by_region = {
        region: n - a["answered_by_region"].get(region, 0)
        for region, n in b["answered_by_region"].items()
        if n - a["answered_by_region"].get(region, 0)
    }
    return {
        "from_s": first["t"],
        "to_s": last["t"],
        "sent": sent,
        "stalled": b["stalled"] - a["stalled"],
        "refused": b["refused"] - a["refused"],
        "sent_per_s": round(sent / seconds, 2) if seconds > 0 else None,
        "answered_by_path": by_path,
        "answered_by_region": by_region,
        "answered_per_s_by_region": {r: round(n / seconds, 2) for r, n in by_region.items()} if seconds > 0 else {},
    }


# --------------------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------------------
class Bench:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.workdir = args.workdir or tempfile.mkdtemp(prefix="bench-throttle-")
        os.makedirs(self.workdir, exist_ok=True)
        self.children = Children(self.workdir)
        self.database: EmbeddedDatabase | None = None
        self.sim_port = free_port()
        self.port = free_port()
        self.timeline: list[dict] = []
        self.lookups: list[dict] = []
        self.lock = threading.Lock()
        self.warm_seconds: float | None = None
        self.pass_day: str | None = None
        self.db_client: Any = None  # a pymongo client of the benchmark's own (the pass's figures)
        self.commit: str | None = None

    def start_simulator(self, live_accounts: int) -> None:
        cmd = [sys.executable, "-m", "scripts.upstream_sim", "--port", str(self.sim_port)]
        cmd += ["--rps", str(self.args.upstream_rps), "--strict"]
        if os.path.exists(EXPECTED):
            cmd += ["--expected-values", EXPECTED]
        # Every generated profile stays cached (the members, the live lookups' accounts and room).
        cache = self.args.clans * 100 + 2000 + live_accounts
        env = dict(os.environ, UPSTREAM_SIM_PROFILE_CACHE=str(max(4096, cache)))
        proc = self.children.spawn("simulator", cmd, env=env)
        wait_http(self.sim_port, "/_sim/limits", proc)

    def warm_simulator(self, region: str, account_ids: list[int]) -> float:
        """Generate the accounts' profiles in the simulator before the service starts.

        A never-seen account costs the simulator ~10 ms of CPU on its one worker thread (a 100-id
        account/info ~1 s), so the clan refresh's member calls would queue there for seconds and
        time out: the simulator's generation cost, not the CDN's throttle, which is what this
        measures (the real API answers such a call in a fraction of a second). The throttle and the
        quota are off meanwhile and reset after, the counters cleared."""
        started = time.monotonic()
        throttle = self.sim("/_sim/throttle")
        limits = self.sim("/_sim/limits")
        self.sim("/_sim/throttle", {"rates": None})
        self.sim("/_sim/limits", {"rps": 0})
        try:
            for at in range(0, len(account_ids), 100):
                ids = ",".join(map(str, account_ids[at : at + 100]))
                path = f"/wot/{region}/wot/account/info/?application_id={WARM_APPLICATION_ID}&account_id={ids}"
                get_json(self.sim_port, f"{path}&fields={ACCOUNT_FIELDS}", timeout=120)
        finally:
            self.sim("/_sim/throttle", {"rates": throttle["rates"], "reset": True})
            self.sim("/_sim/limits", {"rps": limits["rps"], "reset": True})
            self.sim("/_sim/stats", {"reset": True})
        return time.monotonic() - started

    def start_service(self) -> subprocess.Popen:
        args = self.args
        assert self.database is not None
        # `python -m server` with these flags, its tracker on the pass clock (serve_with_pass_clock).
        cmd = [sys.executable, "-m", "scripts.bench_throttle", SERVE_COMMAND, "--port", str(self.port)]
        cmd += ["--mongodb-uri", self.database.uri, "--db-name", DB_NAME]
        cmd += ["--upstream-base-url", f"http://127.0.0.1:{self.sim_port}", "--upstream-rps", str(args.upstream_rps)]
        # Its own data directory (the kept expected-values table), and the live lookups' client
        # addresses taken from X-Forwarded-For (each lookup a different client, as in service).
        cmd += ["--data-dir", os.path.join(self.workdir, "service"), "--trusted-proxies", TRUSTED_PROXY]
        env = dict(
            os.environ,
            STATSAPI_APPLICATION_ID=APPLICATION_ID,
            PYTHONUNBUFFERED="1",
            BENCH_THROTTLE_PASS_DAY_FILE=os.path.join(self.workdir, PASS_DAY_FILE),
        )
        env.pop("STATSAPI_MONGODB_URI", None)
        return self.children.spawn("service", cmd, env=env)

    def start_pass(self, proc: subprocess.Popen) -> str:
        """The tracker's clock jumps to the last second of today: the whole day's slices are due."""
        day = utc_day(time.time())
        with open(os.path.join(self.workdir, PASS_DAY_FILE), "w") as handle:
            handle.write(day)
        os.kill(proc.pid, signal.SIGUSR1)
        self.pass_day = day
        return day

    def sim(self, path: str, body: dict | None = None) -> Any:
        return get_json(self.sim_port, path, method="GET" if body is None else "POST", body=body)

    def poll(self, t: float) -> dict:
        entry: dict[str, Any] = {"t": round(t, 1)}
        try:
            entry["upstream"] = sim_reading(self.sim("/_sim/stats"))
        except Exception as exc:  # a reading missed is reported, not fatal
            entry["upstream_error"] = f"{type(exc).__name__}: {exc}"
        try:
            entry["service"] = service_reading(get_json(self.port, f"{PREFIX}/status", timeout=10), self.args.region)
        except Exception as exc:
            entry["service_error"] = f"{type(exc).__name__}: {exc}"
        if self.pass_day is not None and self.db_client is not None:
            try:
                entry["pass"] = pass_reading(self.db_client[DB_NAME], self.pass_day)
            except Exception as exc:
                entry["pass_error"] = f"{type(exc).__name__}: {exc}"
        self.timeline.append(entry)
        return entry

    def lookup(self, account_id: int, n: int, scheduled: float) -> None:
        client = f"10.{30 + n // 65536}.{(n // 256) % 256}.{n % 256 or 1}"
        result = live_lookup(self.port, self.args.region, account_id, client)
        result["t"] = round(scheduled, 1)
        with self.lock:
            self.lookups.append(result)
        mark = "" if result["status"] == 200 else "  <--"
        say(
            f"  live {account_id}: {result['status'] or result.get('error')} in {result['seconds']:.2f} s"
            + (f" (Retry-After {result['retry_after']})" if result["retry_after"] else "")
            + mark
        )

    def run(self) -> dict:
        import pymongo

        args = self.args
        region = args.region
        self.commit = commit()  # what the service runs (plus any uncommitted change in the work tree)
        say(f"bench_throttle: workdir {self.workdir}, commit {self.commit}")
        self.database = EmbeddedDatabase(os.path.join(self.workdir, "db")).start()
        say(f"SecantusDB on {self.database.uri}")
        n_lookups = max(1, math.ceil(args.max_minutes * args.lookups_per_minute) + 1)
        self.start_simulator(n_lookups)
        say(f"simulator (strict, --rps {args.upstream_rps}) on port {self.sim_port}")
        clan_ids = [int(c) for c in self.sim(f"/_sim/clans?region={region}&n={args.clans}")["ids"]]
        start = REGION_RANGES[region][0] + LIVE_ID_OFFSET
        live_ids = [int(a) for a in self.sim(f"/_sim/accounts?region={region}&n={n_lookups}&start={start}")["ids"]]
        added = asyncio.run(seed_clans(self.database.uri, region, clan_ids))
        members = [a for c in clan_ids for a in clan_members(region, c)]
        say(
            f"seeded {len(clan_ids)} {region} clans ({added} new, {len(members):,} members), "
            f"{clan_ids[0]} ... {clan_ids[-1]}"
        )

        if not args.cold:
            say(f"warming the simulator: {len(members):,} members' and {len(live_ids)} live accounts' profiles")
            self.warm_seconds = self.warm_simulator(region, members + live_ids)
            say(f"warmed in {self.warm_seconds:.0f} s")
        self.sim("/_sim/stats", {"reset": True})
        self.db_client = pymongo.MongoClient(self.database.uri, timeoutMS=30_000)

        started_wall = time.time()
        t0 = time.monotonic()
        proc = self.start_service()
        wait_http(self.port, f"{PREFIX}/status", proc, timeout=120)
        ready = time.monotonic() - t0
        say(
            f"service on port {self.port}, ready {ready:.1f} s after start (jobs on, --upstream-rps {args.upstream_rps})"
        )

        interval = 60.0 / args.lookups_per_minute
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="live")
        futures: list[concurrent.futures.Future] = []
        next_lookup, next_poll = ready + 1.0, 0.0
        least = ready + args.minutes * 60.0
        most = ready + args.max_minutes * 60.0
        done_at: float | None = None  # the refresh's end, seconds from the service's start (its clock)
        first_refresh: dict = {}  # the first run's reading (its outcome)
        log_at_refresh_end: int | None = None  # the service log's size then
        pass_at: float | None = None  # the pass's clock jumped (this script's clock, from the start)
        pass_done_at: float | None = None  # the poll that found every slice of the pass day finished
        marks: dict[str, dict] = {}  # readings at the phases' edges
        first_minute: dict | None = None
        printed = 0.0
        while True:
            now = time.monotonic() - t0
            if proc.poll() is not None:
                raise RuntimeError(f"the service exited with {proc.returncode}:\n{self.children.tail('service', 30)}")
            if len(futures) < len(live_ids) and now >= next_lookup and next_lookup < most:
                n = len(futures)
                futures.append(pool.submit(self.lookup, live_ids[n], n, next_lookup))
                next_lookup += interval
                continue
            if now >= next_poll:
                entry = self.poll(now)
                if first_minute is None and now >= FIRST_MINUTE and "upstream" in entry:
                    first_minute = entry
                refresh = (entry.get("service") or {}).get("clan_refresh") or {}
                if done_at is None and refresh.get("last_run") and refresh["last_run"] >= started_wall:
                    # The run's end on the service's clock, as seconds from its start.
                    done_at = float(refresh["last_run"]) - started_wall
                    say(f"clan refresh run ended {done_at:.1f} s after the service's start: {refresh.get('message')}")
                    marks["refresh_end"] = entry
                    first_refresh = dict(refresh)  # a later run (clans the live lookups named) replaces it in /status
                    log_at_refresh_end = os.path.getsize(self.children.log_path("service"))
                    day = self.start_pass(proc)
                    pass_at = time.monotonic() - t0
                    say(f"the tracker's clock jumps to {day} 23:59:59: every slice of {day} is due")
                    marks["pass_start"] = self.poll(pass_at)
                    entry = marks["pass_start"]
                figures = entry.get("pass") or {}
                if pass_at is not None and pass_done_at is None and figures.get("slices_finished") == SLICES:
                    pass_done_at = entry["t"]
                    marks["pass_end"] = entry
                    say(
                        f"the pass finished its {SLICES} slices {pass_done_at - pass_at:.0f} s after the jump: "
                        f"visited {figures.get('visited')}, account/info {figures.get('info_requests')}, "
                        f"tanks/stats {figures.get('tanks_requests')}"
                    )
                if now - printed >= 30 or next_poll == 0.0:
                    printed = now
                    up = entry.get("upstream") or {}
                    svc = entry.get("service") or {}
                    say(
                        f"t={now:5.0f} s  upstream sent {up.get('sent')} (stalled {up.get('stalled')}, refused "
                        f"{up.get('refused')}, blocks {up.get('blocks')}), tracked {svc.get('tracked')}, pass "
                        f"{figures or '-'}, {region} gate {svc.get('realm')}"
                    )
                next_poll += POLL_SECONDS
                continue
            if now >= most or (now >= least and pass_done_at is not None):
                break
            targets = [next_poll, most]
            if len(futures) < len(live_ids) and next_lookup < most:
                targets.append(next_lookup)
            time.sleep(max(0.01, min(0.5, min(targets) - now)))
        say("waiting for the last live lookups")
        for future in futures:
            future.result()
        pool.shutdown()
        last = self.poll(time.monotonic() - t0)
        if first_minute is None:  # a run shorter than a minute: nothing after it
            first_minute = last
        counts = database_counts(self.database.uri, region, clan_ids, set(members), self.pass_day)
        log = log_summary(self.children.log_path("service"))
        log["tracking_steps"] = tracking_steps(self.children.log_path("service"), log_at_refresh_end)
        return self.report(
            clan_ids,
            started_wall,
            ready,
            done_at,
            first_refresh,
            pass_at,
            pass_done_at,
            marks,
            first_minute,
            last,
            counts,
            log,
        )

    def report(
        self,
        clan_ids,
        started_wall,
        ready,
        done_at,
        refresh,
        pass_at,
        pass_done_at,
        marks,
        first_minute,
        last,
        counts,
        log,
    ) -> dict:
        args = self.args
        up_last = last.get("upstream") or {}
        up_first = first_minute.get("upstream") or {}
        elapsed = last["t"]
        sent_after = up_last.get("sent", 0) - up_first.get("sent", 0)
        stalled_after = up_last.get("stalled", 0) - up_first.get("stalled", 0)
        stall_share = stalled_after / sent_after if sent_after else 0.0
        per_minute = []
        previous: dict[str, Any] = {"t": 0.0, "upstream": sim_reading({})}
        for entry in self.timeline:
            up = entry.get("upstream")
            if up is None:
                continue
            if entry["t"] - previous["t"] >= 59.5 or entry is self.timeline[-1]:
                span = entry["t"] - previous["t"]
                if span > 0:
                    prev_up = previous["upstream"]
                    realm = args.region
                    realm_sent = up["answered_by_region"].get(realm, 0) - prev_up["answered_by_region"].get(realm, 0)
                    per_minute.append(
                        {
                            "from_s": round(previous["t"]),
                            "to_s": round(entry["t"]),
                            "sent": up["sent"] - prev_up["sent"],
                            "stalled": up["stalled"] - prev_up["stalled"],
                            "sent_per_s": round((up["sent"] - prev_up["sent"]) / span, 2),
                            f"{realm}_answered_per_s": round(realm_sent / span, 2),
                        }
                    )
                previous = entry
        service_last = last.get("service") or {}
        # The first run's outcome (refresh: as read when its end was found); a later run's, at the end.
        later_refresh = service_last.get("clan_refresh") or {}
        numbers = outcome_numbers(refresh.get("message"))
        completed = bool(
            done_at is not None
            and refresh.get("ok")
            and numbers.get("left_for_later", 1) == 0
            and numbers.get("failed", 1) == 0
            and counts["clans_cached"] + numbers.get("disbanded", 0) >= len(clan_ids)
        )
        latencies = [x["seconds"] for x in self.lookups]
        statuses = collections.Counter(str(x["status"] or "error") for x in self.lookups)
        non_200 = [x for x in self.lookups if x["status"] != 200]
        fast_503 = all(x["status"] == 503 and x["retry_after"] for x in non_200)

        def phase(t: float) -> str:
            if pass_at is None or t < pass_at:
                return "refresh"
            if pass_done_at is None or t < pass_done_at:
                return "pass"
            return "after"

        by_phase = {
            name: lookup_figures([x for x in self.lookups if phase(x["t"]) == name])
            for name in ("refresh", "pass", "after")
        }
        pass_last = last.get("pass") or {}
        pass_completed = pass_done_at is not None
        members_visited = counts["members_visited_by_pass"] or 0
        goals = {
            "stall_share_after_first_minute_le_1_percent": stall_share <= STALL_SHARE_GOAL,
            "none_refused": up_last.get("refused", 0) == 0,
            "every_live_lookup_within_10_s": bool(latencies) and max(latencies) <= LIVE_DEADLINE,
            "every_non_200_a_503_with_retry_after": fast_503,
            "most_live_lookups_200": statuses.get("200", 0) * 2 > len(self.lookups),
            "clan_refresh_completed": completed,
            "every_member_tracked": counts["members_tracked"] == counts["members_of_the_clans"] > 0,
            "pass_visited_every_member": pass_completed
            and counts["members_tracked"] > 0
            and members_visited == counts["members_tracked"],
        }
        pass_upstream = (
            upstream_between(marks["pass_start"], marks["pass_end"])
            if "pass_start" in marks and "pass_end" in marks
            else upstream_between(marks["pass_start"], last)
            if "pass_start" in marks
            else {}
        )
        # From the service's start (the simulator's counters were cleared just before) to the poll
        # that found the refresh's run ended.
        zero = {"t": 0.0, "upstream": sim_reading({})}
        refresh_upstream = upstream_between(zero, marks["refresh_end"]) if "refresh_end" in marks else {}
        return {
            "command": " ".join(
                [os.path.relpath(sys.argv[0], ROOT) if sys.argv[0] else "bench_throttle", *sys.argv[1:]]
            ),
            "generated": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
            "started_utc": dt.datetime.fromtimestamp(started_wall, dt.UTC).replace(microsecond=0).isoformat(),
            "commit": self.commit,
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
            "scenario": {
                "minutes_at_least": args.minutes,
                "minutes_at_most": args.max_minutes,
                "region": args.region,
                "clans": len(clan_ids),
                "lookups_per_minute": args.lookups_per_minute,
                "upstream_rps": args.upstream_rps,
                "simulator": "--strict (throttle per address and realm eu=6, na=8, asia=8; bursts block)",
                "service": "jobs on, default --upstream-realm-rps (eu=6, na=8, asia=8); its tracker on the pass "
                "clock (yesterday 00:00 UTC until the refresh ended, then today 23:59:59: all 64 slices due)",
                "first_minute_s": FIRST_MINUTE,
                "live_deadline_s": LIVE_DEADLINE,
                "simulator_warmed": not args.cold,
                "warm_up_s": None if self.warm_seconds is None else round(self.warm_seconds, 1),
            },
            "service_ready_s": round(ready, 1),
            "measured_s": round(elapsed, 1),
            "upstream": {
                "sent": up_last.get("sent", 0),
                "answered": up_last.get("answered", 0),
                "stalled": up_last.get("stalled", 0),
                "refused": up_last.get("refused", 0),
                "sent_per_minute": round(60.0 * up_last.get("sent", 0) / elapsed, 1) if elapsed else None,
                "answered_by_path": up_last.get("answered_by_path"),
                "answered_by_region": up_last.get("answered_by_region"),
                "per_minute": per_minute,
                "after_first_minute": {
                    "sent": sent_after,
                    "stalled": stalled_after,
                    "stall_share": round(stall_share, 5),
                },
                "stalled_by_region": up_last.get("stalled_by_region"),
                "blocks": up_last.get("blocks"),
                "max_per_second_by_region": up_last.get("max_per_second_by_region"),
            },
            "clan_refresh": {
                "completed": completed,
                "seconds_from_service_start": None if done_at is None else round(done_at, 1),
                "duration_s": refresh.get("duration_s"),
                "ok": refresh.get("ok"),
                "outcome": refresh.get("message"),
                "clans_cached": counts["clans_cached"],
                "upstream_until_its_end": refresh_upstream,
                "last_run_at_the_end": None
                if later_refresh.get("last_run") == refresh.get("last_run")
                else {k: later_refresh.get(k) for k in ("ok", "message", "duration_s")},
            },
            "members": {
                "of_the_clans": counts["members_of_the_clans"],
                "tracked": counts["members_tracked"],
                "visited_by_the_pass": counts["members_visited_by_pass"],
                "with_a_per_tank_record_of_the_pass_day": counts["members_with_a_record_of_the_pass_day"],
                "accounts_tracked_in_the_region": counts["accounts_tracked"],
            },
            "tracker_pass": {
                "day": self.pass_day,
                "started_s_from_service_start": None if pass_at is None else round(pass_at, 1),
                "completed": pass_completed,
                "seconds": None if not pass_completed else round(pass_done_at - pass_at, 1),
                "seconds_resolution": POLL_SECONDS,
                "slices_finished": pass_last.get("slices_finished"),
                "visited": pass_last.get("visited"),
                "requests": {
                    "account_info": pass_last.get("info_requests"),
                    "tanks_stats": pass_last.get("tanks_requests"),
                },
                "records": pass_last.get("records"),
                "keyframes": pass_last.get("keyframes"),
                "record_bytes": pass_last.get("record_bytes"),
                "tank_records_of_the_day": counts["tank_records_of_the_pass_day"],
                "upstream_meanwhile": pass_upstream,
                "by_realm_in_status": service_last.get("by_realm"),
                "over_time": [
                    {"t": e["t"], **{k: e["pass"].get(k) for k in ("slices_finished", "visited", "tanks_requests")}}
                    for e in self.timeline
                    if e.get("pass")
                ],
            },
            "realm_gate_at_end": service_last.get("realm"),
            "live_lookups": {
                **lookup_figures(self.lookups),
                "by_phase": by_phase,
                "non_200": sorted(non_200, key=lambda x: x["t"]),
                "every_non_200_a_503_with_retry_after": fast_503,
            },
            "goals": goals,
            "goals_met": all(goals.values()),
            "service_log": log,
            "timeline": self.timeline,
        }

    def close(self) -> None:
        if self.db_client is not None:
            self.db_client.close()
            self.db_client = None
        # One at a time, the last started first: the service stops before the simulator it calls.
        for _, proc in reversed(self.children.procs):
            stop_group(proc, 20.0)
        self.children.procs.clear()
        if self.database is not None:
            self.database.stop()
        if not self.args.keep and not self.args.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
        elif self.args.keep:
            say(f"kept {self.workdir} (logs, database)")


def table(result: dict) -> str:
    up, live, refresh = result["upstream"], result["live_lookups"], result["clan_refresh"]
    members, tracker = result["members"], result["tracker_pass"]
    after = up["after_first_minute"]
    meanwhile = tracker.get("upstream_meanwhile") or {}
    phases = live["by_phase"]
    steps = result["service_log"].get("tracking_steps") or {}
    rows = [
        (
            "scenario",
            f"{result['scenario']['clans']} {result['scenario']['region']} clans, "
            f"{result['scenario']['lookups_per_minute']} live lookups/min, {result['measured_s'] / 60:.1f} min, "
            f"--upstream-rps {result['scenario']['upstream_rps']}",
        ),
        ("upstream requests sent", f"{up['sent']:,} ({up['sent_per_minute']} a minute); answered {up['answered']:,}"),
        (
            "stalled",
            f"{up['stalled']:,} in all; after minute 1: {after['stalled']:,} of {after['sent']:,} "
            f"({100 * after['stall_share']:.2f} %, goal <= 1 %); blocks {up['blocks']}",
        ),
        ("refused (REQUEST_LIMIT_EXCEEDED)", f"{up['refused']} (goal 0)"),
        ("busiest second by realm", str(up["max_per_second_by_region"])),
        (
            "clan refresh",
            f"{'completed' if refresh['completed'] else 'NOT completed'} "
            f"{refresh['seconds_from_service_start']} s after the service's start: {refresh['outcome']}",
        ),
        (
            "members: of the clans / tracked / visited by the pass",
            f"{members['of_the_clans']:,} / {members['tracked']:,} / {members['visited_by_the_pass']}",
        ),
        (
            "members' tracking steps",
            f"{steps.get('steps')} of {steps.get('members_in_steps')} members in all, p50 {steps.get('p50_s')} s, "
            f"max {steps.get('max_s')} s; failed {steps.get('failed')}",
        ),
        (
            "tracker pass",
            f"{'completed' if tracker['completed'] else 'NOT completed'} in {tracker['seconds']} s "
            f"(from {tracker['started_s_from_service_start']} s): visited {tracker['visited']}, account/info "
            f"{tracker['requests']['account_info']}, tanks/stats {tracker['requests']['tanks_stats']}, "
            f"records {tracker['records']}",
        ),
        (
            "upstream during the pass",
            f"{meanwhile.get('sent')} sent ({meanwhile.get('sent_per_s')}/s; by realm "
            f"{meanwhile.get('answered_per_s_by_region')}), stalled {meanwhile.get('stalled')}",
        ),
        ("live lookups", f"{live['count']}: {live['statuses']}, 200 share {live['share_200']}"),
        ("live latency p50 / p99 / max", f"{live['p50_s']} / {live['p99_s']} / {live['max_s']} s (goal max <= 10 s)"),
    ]
    for name in ("refresh", "pass", "after"):
        figures = phases[name]
        if figures["count"]:
            rows.append(
                (
                    f"  during the {name}" if name != "after" else "  after the pass",
                    f"{figures['count']}: {figures['statuses']}, p50 / p99 / max "
                    f"{figures['p50_s']} / {figures['p99_s']} / {figures['max_s']} s",
                )
            )
    rows.append(("every non-200 a 503 + Retry-After", str(live["every_non_200_a_503_with_retry_after"])))
    width = max(len(r[0]) for r in rows)
    lines = [f"| {name.ljust(width)} | {value} |" for name, value in rows]
    for goal, met in result["goals"].items():
        lines.append(f"  goal {goal}: {'met' if met else '*** MISSED ***'}")
    return "\n".join(lines)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--minutes",
        type=float,
        default=8.0,
        help="the run lasts at least this many minutes after the service is ready, and until the pass is done",
    )
    parser.add_argument(
        "--max-minutes", type=float, default=60.0, help="the run ends after this many minutes, the pass done or not"
    )
    parser.add_argument("--clans", type=int, default=200, help="active clans seeded for the refresh job")
    parser.add_argument("--region", default="eu", choices=sorted(REGION_RANGES))
    parser.add_argument("--lookups-per-minute", type=float, default=10.0)
    parser.add_argument("--upstream-rps", type=int, default=20, help="the simulator's quota and the service's")
    parser.add_argument("--json", default=os.path.join(ROOT, "bench-throttle.json"))
    parser.add_argument("--workdir", help="logs and database here (kept) instead of a temporary directory")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (logs, database)")
    parser.add_argument(
        "--cold",
        action="store_true",
        help="do not warm the simulator's profiles first (its generation cost then slows its answers)",
    )
    args = parser.parse_args(argv)
    if args.minutes <= 0 or args.clans <= 0 or args.lookups_per_minute <= 0:
        parser.error("--minutes, --clans and --lookups-per-minute must be > 0")
    if args.max_minutes < args.minutes:
        parser.error("--max-minutes must be at least --minutes")
    return args


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == [SERVE_COMMAND]:
        return serve_with_pass_clock(argv[1:])
    args = parse_args(argv)
    # SIGTERM / SIGHUP unwind like Ctrl-C, so every child process is stopped too.
    signal.signal(signal.SIGTERM, terminate)
    signal.signal(signal.SIGHUP, terminate)
    bench = Bench(args)
    try:
        result = bench.run()
    except KeyboardInterrupt:
        say("interrupted: stopping the children")
        return 130
    finally:
        bench.close()
    print(table(result))
    with open(args.json, "w") as handle:
        json.dump(result, handle, indent=2)
        handle.write("\n")
    say(f"written to {args.json}")
    if not result["goals_met"]:
        missed = [name for name, met in result["goals"].items() if not met]
        print("\n" + "!" * 72 + f"\n!!! GOALS MISSED: {', '.join(missed)}\n" + "!" * 72, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
