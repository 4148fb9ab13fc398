#!/usr/bin/env python3
"""Benchmark of the tracker: M accounts over D simulated days against the strict simulator.

    .venv/bin/python scripts/bench_tracker.py                      # M=10,000, D=30 (about 20-30 min here)
    .venv/bin/python scripts/bench_tracker.py --accounts 500 --days 5 --json /tmp/t.json   # a smoke run
    .venv/bin/python scripts/bench_tracker.py --panel 1000 --days 4   # the random panel's cost (about 10 min)

Starts SecantusDB (child process, on disk in a temporary directory) and the upstream simulator
(`--rps` high, so the service itself is measured; its limits on ids per call stay strict), tracks
M existing accounts of the three regions, runs one warm-up day (an account's first visit writes its
first keyframe: in service that comes with the live lookup or clan refresh that made it tracked),
then D measured days of the real pass (server/services/tracker.py, several claimants in this process like
several processes) on a ManualClock, the simulator answering "as of" it. It prints and writes to
`--json` (default bench-tracker.json):

- upstream requests per account-day (from the simulator's own counters), by method, and the
  share of accounts that played (visits that needed tanks/stats); goal <= 0.01 + that share + 2 %;
- per-tank records stored per account-day, overall and per active account-day (collStats `size`
  of tank_records, BSON bytes, indexes apart and included), goal <= 1 KB per active account-day;
  and what a record of the measured days holds (record_parts): its packed payload `t` (of it the
  counters added in release 1.3.0, damage_received and stun_assisted_damage), the account's
  assistance `s` (store.constants.ACCOUNT_ASSIST) and the other fields, per record and for
  keyframes and change records apart;
- CPU milliseconds per account visit in this process (the tracker, its database client, the
  upstream client; time.process_time over the measured days / visits) and in the database process
  (SecantusDB's user + system CPU from /proc/<pid>/stat over the same days / visits), day by day;
- accounts one process could keep current per day at 10 and at 20 requests/s: the smaller of
  the quota bound (the tracker may use (1 - the live reserve) of the rate) and the CPU bound
  (86,400 s of one core / (service + database CPU per visit)), the CPU per visit measured at the
  largest volume: the last step of `--scale-json` (bench-scale.json, scripts/bench_scale.py: a
  day's pass over about a year of tracked data) when it holds more per-tank records than this run
  wrote, else this run's last three days.

With `--panel N` it measures the random panel's upstream cost instead (the other figures of
`--json` are kept; its `panel` entry is replaced): the panel job (server/services/panel.py) draws a
panel of N active EU accounts from the simulator's realm and the tracker measures its frame for D
days, on the same clock. Per day: the probing requests (the job's own log) and the tracking
requests (the simulator's counters, the rest), against what `daily_requests` (what /status states)
says for the frame and the members who played that day; then per 1,000 members and at the
production default (PANEL_SIZE), from the measured shares (frame per member, members who play a
day) and the formula's batching.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from typing import Any

from bson import encode

from server.compose.embedded_db import free_port

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from scripts.loadkit.processes import cpu_seconds  # noqa: E402
from scripts.upstream_sim.ids import REGION_RANGES, existing_accounts  # noqa: E402
from server.compose.demo import TimeTravelUpstream  # noqa: E402
from server.compose.embedded_db import EmbeddedDatabase  # noqa: E402
from server.contract.config import PANEL_SIZE  # noqa: E402
from server.domain.days import DAY_SECONDS, ManualClock, day_start  # noqa: E402
from server.services.panel import PROBE_BATCH, PanelService, daily_requests  # noqa: E402
from server.services.tracker import Tracker  # noqa: E402
from server.upstream.budget import LIVE_RESERVE_SHARE, UpstreamBudget  # noqa: E402
from server.upstream.client import UpstreamClient  # noqa: E402
from server.upstream.expected_values import RatingsSource  # noqa: E402
from server.upstream.realms import RealmGates  # noqa: E402
from store.constants import LEGACY_WIDTH  # noqa: E402
from store.tracker import SLICES  # noqa: E402

EXPECTED = os.path.join(os.path.dirname(ROOT), "shared", "data", "wn8exp-2024-09-12.json")
FIRST_DAY = "2025-03-01"
REGION_SHARES = {"eu": 0.6, "na": 0.2, "asia": 0.2}
PANEL_METHODS = ("account/info", "tanks/stats", "account/wtr")  # what probing and tracking a panel ask


def sim_get(base: str, path: str) -> dict:
    with urllib.request.urlopen(base + path, timeout=30) as response:
        return json.loads(response.read())


def sim_post(base: str, path: str, body: dict) -> dict:
    request = urllib.request.Request(
        base + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def start_simulator(rps: int, profile_cache: int) -> tuple[subprocess.Popen, str]:
    port = free_port()
    cmd = [sys.executable, "-m", "scripts.upstream_sim", "--port", str(port), "--rps", str(rps)]
    if os.path.exists(EXPECTED):
        cmd += ["--expected-values", EXPECTED]
    env = dict(os.environ, UPSTREAM_SIM_PROFILE_CACHE=str(profile_cache))
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            sim_get(base, "/_sim/limits")
            return proc, base
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("the simulator did not start")


def accounts_for(total: int) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for region, share in REGION_SHARES.items():
        n = round(total * share) if region != "asia" else total - sum(len(v) for v in out.values())
        out[region] = existing_accounts(region, n, start=REGION_RANGES[region][0] + 3_000_000)
    return out


def next_day(day: str, n: int = 1) -> str:
    return (dt.date.fromisoformat(day) + dt.timedelta(days=n)).isoformat()


def requests_by_path(stats: dict) -> dict[str, int]:
    """Every API method the simulator answered ({"account/info": n, "account/wtr": n, ...})."""
    out: dict[str, int] = {}
    for path, count in (stats.get("by_path") or {}).items():
        method = path.split("/", 1)[1] if path.startswith(("wot/", "wgn/")) else path
        out[method] = out.get(method, 0) + int(count)
    return out


MEASURE: dict = {}  # "db": a synchronous client without the service's 1.8 s deadline, for the figures


def finished_slices(day: str) -> list:
    return list(MEASURE["db"]["tracker_slices"].find({"day": day, "finished": {"$ne": None}}, {"slice": 1}))


def day_slices(day: str) -> list:
    return list(MEASURE["db"]["tracker_slices"].find({"day": day}))


def coll_stats(name: str) -> dict:
    stats = MEASURE["db"].command("collStats", name)
    return {
        "count": int(stats.get("count") or 0),
        "size": int(stats.get("size") or 0),
        "storage_size": int(stats.get("storageSize") or 0),
        "index_size": int(stats.get("totalIndexSize") or 0),
    }


def varint_sizes(payload: bytes) -> list[int]:
    """The byte length of each varint of a packed payload after its width byte (server/domain/records.py pack)."""
    sizes, size = [], 0
    for byte in payload[1:]:
        size += 1
        if not byte & 0x80:
            sizes.append(size)
            size = 0
    return sizes


def record_parts(after_day: str) -> dict:
    """What the per-tank records of the days after `after_day` hold, in BSON bytes per record:
    `total` (the whole document), `payload` (the packed `t`), `new_counters` (of the payload, the
    varints of the counters after the first LEGACY_WIDTH: damage_received, stun_assisted_damage),
    `assist` (the `s` field: the account's assistance), `other` (_id, a, d, b, k, x and the
    document's framing); for all of them and for keyframes and change records apart."""
    sums: dict[str, dict[str, int]] = {
        kind: dict.fromkeys(("records", "total", "payload", "new_counters", "assist", "with_assist"), 0)
        for kind in ("all", "keyframes", "changes")
    }
    for doc in MEASURE["db"]["tank_records"].find({}):
        if doc["d"] <= after_day:
            continue
        payload = bytes(doc["t"])
        width = payload[0] if payload else 0
        sizes = varint_sizes(payload)
        new = sum(sum(sizes[start + 1 + LEGACY_WIDTH : start + 1 + width]) for start in range(0, len(sizes), width + 1))
        assist = len(encode({"s": doc["s"]})) - 5 if "s" in doc else 0
        for kind in ("all", "keyframes" if doc.get("k") else "changes"):
            figures = sums[kind]
            figures["records"] += 1
            figures["total"] += len(encode(doc))
            figures["payload"] += len(payload)
            figures["new_counters"] += new
            figures["assist"] += assist
            figures["with_assist"] += "s" in doc
    out: dict[str, dict[str, float]] = {}
    for kind, figures in sums.items():
        n = max(1, figures["records"])
        out[kind] = {
            "records": figures["records"],
            "with_assist": figures["with_assist"],
            **{name: round(figures[name] / n, 1) for name in ("total", "payload", "new_counters", "assist")},
            "other": round((figures["total"] - figures["payload"] - figures["assist"]) / n, 1),
        }
    return out


async def run_day(trackers: list[Tracker], clock: ManualClock, day: str) -> None:
    """Every slice of `day` worked by the claimants together, as of the day's last second."""
    clock.set(day_start(day) + DAY_SECONDS - 1)
    for _ in range(20):
        # A tick that failed (a database timeout on this loaded 2-core machine) leaves its claims to
        # the same claimant, which picks them up again on its next tick, as the service's loop does.
        outcomes = await asyncio.gather(*(tracker.tick() for tracker in trackers), return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                print(f"{day}: a tick failed ({type(outcome).__name__}); ticking again", flush=True)
        if len(await asyncio.to_thread(finished_slices, day)) == SLICES:
            return
    raise SystemExit(f"{day}: the pass did not finish")


async def bench_parts(client, sim_base: str, rps: int, name: str) -> tuple:
    """(store, clock, upstream, travelling upstream, ratings) both runs measure with: a fresh store,
    a ManualClock at FIRST_DAY, the upstream client at 90 % of the simulator's quota (it has no
    per-address throttle here: each realm may use the whole quota) asking "as of" the clock."""
    from store import Store

    store = Store(client, "bench_tracker", rate_collection_bytes=1 << 20, ttl_indexes=False)
    await store.ensure_schema()
    clock = ManualClock(day_start(FIRST_DAY))
    upstream = UpstreamClient(
        name,
        base_url=sim_base,
        budget=UpstreamBudget(rps * 0.9),
        realms=RealmGates(dict.fromkeys(("eu", "na", "asia"), rps * 0.9)),
    )
    travelling = TimeTravelUpstream(upstream, clock)
    ratings = RatingsSource(upstream, sim_base + "/wn8exp.json")
    await ratings.refresh_expected()
    return store, clock, upstream, travelling, ratings


async def main_async(args) -> dict:
    from store import create_client

    workdir = tempfile.mkdtemp(prefix="bench-tracker-")
    database = EmbeddedDatabase(os.path.join(workdir, "db")).start()
    sim_proc, sim_base = start_simulator(args.rps, args.accounts + 2000)
    client = create_client(database.uri)
    import pymongo

    measure_client: pymongo.MongoClient = pymongo.MongoClient(database.uri, timeoutMS=600_000)
    MEASURE["db"] = measure_client["bench_tracker"]
    try:
        store, clock, upstream, travelling, ratings = await bench_parts(client, sim_base, args.rps, "bench-tracker")
        accounts = accounts_for(args.accounts)
        for region, ids in accounts.items():
            for start in range(0, len(ids), 1000):
                chunk = [(a, None) for a in ids[start : start + 1000]]
                await store.tracked.track_many(region, chunk, clock() + 400 * DAY_SECONDS, clock())
        trackers = [
            Tracker(store, travelling, ratings, clock=clock, owner=f"bench-{n}", tanks_in_flight=args.in_flight)
            for n in range(args.claimants)
        ]

        started = time.monotonic()
        await run_day(trackers, clock, FIRST_DAY)  # warm-up: every account's first keyframe
        warm: dict[str, Any] = {
            "seconds": round(time.monotonic() - started, 1),
            "requests": requests_by_path(sim_get(sim_base, "/_sim/stats")),
            "tank_records": await asyncio.to_thread(coll_stats, "tank_records"),
        }
        print(f"warm-up day: {warm}", flush=True)
        sim_post(sim_base, "/_sim/stats", {"reset": True})
        size_before = warm["tank_records"]
        db_pid = database.process.pid if database.process else None
        cpu_before, wall_before = time.process_time(), time.monotonic()
        db_before = cpu_seconds(db_pid) or 0.0
        day = FIRST_DAY
        visits = records = active = 0
        daily: list[dict] = []
        for n in range(args.days):
            day = next_day(day)
            day_cpu, day_db = time.process_time(), cpu_seconds(db_pid) or 0.0
            await run_day(trackers, clock, day)
            day_cpu, day_db = time.process_time() - day_cpu, (cpu_seconds(db_pid) or 0.0) - day_db
            slices = await asyncio.to_thread(day_slices, day)
            assert len([s for s in slices if s.get("finished")]) == SLICES, f"{day}: pass unfinished"
            visited = sum(int(s.get("visited") or 0) for s in slices)
            played = sum(int(s.get("tanks_requests") or 0) for s in slices)
            visits += visited
            active += played
            records += sum(int(s.get("records") or 0) for s in slices)
            daily.append(
                {
                    "day": day,
                    "visits": visited,
                    "service_cpu_ms_per_visit": round(1000 * day_cpu / max(1, visited), 3),
                    "db_cpu_ms_per_visit": round(1000 * day_db / max(1, visited), 3),
                }
            )
            print(
                f"{day}: visited {visited}, played {played} ({100 * played / max(1, visited):.1f} %), "
                f"{time.monotonic() - wall_before:.0f} s so far",
                flush=True,
            )
        cpu = time.process_time() - cpu_before
        db_cpu = (cpu_seconds(db_pid) or 0.0) - db_before
        wall = time.monotonic() - wall_before
        stats = sim_get(sim_base, "/_sim/stats")
        by_method = requests_by_path(stats)
        size_after = await asyncio.to_thread(coll_stats, "tank_records")
        snapshots = await asyncio.to_thread(coll_stats, "snapshots")
        tracked = await asyncio.to_thread(coll_stats, "tracked")
        parts = await asyncio.to_thread(record_parts, FIRST_DAY)
    finally:
        client.close()
        measure_client.close()
        sim_proc.terminate()
        try:
            sim_proc.wait(30)
        except subprocess.TimeoutExpired:
            sim_proc.kill()
        database.stop()

    account_days = args.accounts * args.days
    requests = sum(by_method.values())
    active_share = active / max(1, visits)
    requests_per_account_day = requests / account_days
    grown = size_after["size"] - size_before["size"]
    grown_with_index = grown + size_after["index_size"] - size_before["index_size"]
    bytes_per_account_day = size_after["size"] / account_days
    # Conservative: every stored byte (the warm-up day's first keyframes included) over the measured
    # active account-days only.
    bytes_per_active = size_after["size"] / max(1, active)
    cpu_ms_per_visit = 1000 * cpu / max(1, visits)
    db_cpu_ms_per_visit = 1000 * db_cpu / max(1, visits)
    largest = cpu_at_largest_volume(daily, records + int(size_before.get("count") or 0), args.scale_json)
    per_day = {}
    for rate in (10, 20):
        quota = rate * (1 - LIVE_RESERVE_SHARE) * DAY_SECONDS / requests_per_account_day
        cpu_bound = DAY_SECONDS * 1000 / max(1e-9, largest["service_cpu_ms_per_visit"] + largest["db_cpu_ms_per_visit"])
        per_day[rate] = {"quota_bound": int(quota), "cpu_bound": int(cpu_bound), "accounts": int(min(quota, cpu_bound))}
    result = {
        "accounts": args.accounts,
        "days": args.days,
        "active_share": round(active_share, 4),
        "requests_per_account_day": round(requests_per_account_day, 5),
        "requests_goal": round(0.01 + active_share + 0.02, 5),
        "requests_by_method": by_method,
        "refused_or_over_limit": stats.get("violations"),
        "bytes_per_account_day": round(bytes_per_account_day, 1),
        "bytes_per_active_account_day": round(bytes_per_active, 1),
        "bytes_per_active_account_day_steady": round(grown / max(1, active), 1),
        "bytes_per_active_account_day_with_index": round(grown_with_index / max(1, active), 1),
        "tank_records": {"before": size_before, "after": size_after, "records_written": records},
        # The measured days' records (one per active account-day) by part, BSON bytes per record.
        "record_parts": parts,
        "snapshots_bytes_per_active_account_day": round(int(snapshots.get("size") or 0) / max(1, active), 1),
        "tracked_bytes_per_account": round(int(tracked.get("size") or 0) / args.accounts, 1),
        "cpu_ms_per_visit": round(cpu_ms_per_visit, 3),
        "db_cpu_ms_per_visit": round(db_cpu_ms_per_visit, 3),
        "cpu_at_largest_volume": largest,
        "daily_cpu": daily,
        "visits": visits,
        "wall_seconds": round(wall, 1),
        "accounts_per_day_at_10rps": per_day[10]["accounts"],
        "accounts_per_day_at_20rps": per_day[20]["accounts"],
        "bounds": per_day,
        "warm_up": warm,
        "simulator_rps": args.rps,
        "claimants": args.claimants,
    }
    return result


async def panel_cost(args) -> dict:
    """The random panel's upstream requests: a panel of `args.panel` EU accounts drawn on the first
    day, then `args.days` days of the job's refresh and the tracker's pass over its frame."""
    import random

    import pymongo
    import pymongo.errors

    from store import create_client

    workdir = tempfile.mkdtemp(prefix="bench-panel-")
    database = EmbeddedDatabase(os.path.join(workdir, "db")).start()
    sim_proc, sim_base = start_simulator(args.rps, 4 * args.panel + 2000)
    client = create_client(database.uri)
    measure_client: pymongo.MongoClient = pymongo.MongoClient(database.uri, timeoutMS=600_000)
    MEASURE["db"] = measure_client["bench_tracker"]
    days: list[dict] = []
    try:
        store, clock, upstream, travelling, ratings = await bench_parts(client, sim_base, args.rps, "bench-panel")
        panel = PanelService(store, travelling, size=args.panel, clock=clock, rng=random.Random(55), regions=("eu",))
        trackers = [
            Tracker(store, travelling, ratings, clock=clock, owner=f"bench-{n}", tanks_in_flight=args.in_flight)
            for n in range(args.claimants)
        ]
        day = FIRST_DAY
        for n in range(args.days + 1):  # the first day draws the panel and measures every frame account's state
            sim_post(sim_base, "/_sim/stats", {"reset": True})
            clock.set(day_start(day) + 60)
            for attempt in range(5):
                try:
                    await panel.run()
                    break
                except pymongo.errors.PyMongoError as exc:  # a write timed out on this loaded machine
                    # The job runs again at the next look in service, as it does here.
                    print(f"{day}: the panel job failed ({type(exc).__name__}); running it again", flush=True)
                    if attempt == 4:
                        raise
            doc = await store.panels.get("eu")
            await run_day(trackers, clock, day)
            by_method = requests_by_path(sim_get(sim_base, "/_sim/stats"))
            probing = int(doc["probe_requests"].get(day, 0))
            slices = await asyncio.to_thread(day_slices, day)
            played = sum(int(s.get("tanks_requests") or 0) for s in slices)
            frame = len(doc["frame"])
            formula = daily_requests(frame, played, {})["tracking"]
            # The panel's own methods: the vehicle catalogue the ratings fetch daily is the service's anyway.
            tracking = sum(by_method.get(m, 0) for m in PANEL_METHODS) - probing
            days.append(
                {
                    "day": day,
                    "members": int(doc["members"]),
                    "frame": frame,
                    "played": played,
                    "probing": probing,
                    "tracking": tracking,
                    "tracking_by_method": {
                        m: by_method.get(m, 0) - (probing if m == "account/info" else 0) for m in PANEL_METHODS
                    },
                    "other_requests": {m: n for m, n in by_method.items() if m not in PANEL_METHODS},
                    "tracking_formula": formula,
                }
            )
            print(f"panel {days[-1]}", flush=True)
            day = next_day(day)
    finally:
        client.close()
        measure_client.close()
        sim_proc.terminate()
        try:
            sim_proc.wait(30)
        except subprocess.TimeoutExpired:
            sim_proc.kill()
        database.stop()

    steady = days[1:]  # the days after the draw: the frame tracked daily, top-ups only
    members = sum(d["members"] for d in steady) / len(steady)
    frame_per_member = sum(d["frame"] for d in steady) / len(steady) / members
    played_per_member = sum(d["played"] for d in steady) / len(steady) / members
    probes_per_member = days[0]["probing"] / max(1, days[0]["members"])  # the first draw

    def at(size: int) -> dict[str, int]:
        """The daily requests of a panel of `size` members from the measured shares and the formula's batching."""
        frame, played = round(size * frame_per_member), round(size * played_per_member)
        top_up = sum(d["probing"] for d in steady) / len(steady) * size / members
        tracking = daily_requests(frame, played, {})["tracking"]
        return {
            "frame": frame,
            "played_a_day": played,
            "tracking": tracking,
            "probing_a_day": round(top_up),
            "total": tracking + round(top_up),
            "first_draw": round(probes_per_member * size),
        }

    return {
        "command": " ".join(["scripts/bench_tracker.py", *sys.argv[1:]]),
        "region": "eu",
        "target": args.panel,
        "days": days,
        "frame_per_member": round(frame_per_member, 3),
        "played_a_day_per_member": round(played_per_member, 4),
        "first_draw_requests_per_member": round(probes_per_member, 4),
        "tracking_measured_over_formula": round(
            sum(d["tracking"] for d in steady) / max(1, sum(d["tracking_formula"] for d in steady)), 3
        ),
        "per_1000_members": at(1000),
        "production": {"size": PANEL_SIZE, **at(PANEL_SIZE)},
        "probe_batch": PROBE_BATCH,
    }


def panel_table(result: dict) -> str:
    rows = [
        (d["day"], d["members"], d["frame"], d["played"], d["probing"], d["tracking"], d["tracking_formula"])
        for d in result["days"]
    ]
    lines = [
        "| day | members | frame | played | probing | tracking (measured) | tracking (formula) |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += ["| " + " | ".join(f"{v:,}" if isinstance(v, int) else v for v in row) + " |" for row in rows]
    for name, figures in (
        ("per 1,000 members", result["per_1000_members"]),
        (f"production ({result['production']['size']:,})", result["production"]),
    ):
        lines.append(
            f"{name}: frame {figures['frame']:,}, tracking {figures['tracking']:,} + probing "
            f"{figures['probing_a_day']:,} = {figures['total']:,} requests a day (first draw {figures['first_draw']:,})"
        )
    return "\n".join(lines)


def cpu_at_largest_volume(daily: list[dict], records: int, scale_json: str | None) -> dict:
    """Service and database CPU ms per visit at the largest volume measured: bench-scale.json's
    last step when it holds more per-tank records than this run (`records`), else this run's
    last three days (visit-weighted)."""
    if scale_json and os.path.exists(scale_json):
        try:
            with open(scale_json) as handle:
                last = json.load(handle)["steps"][-1]
            if int(last["tank_records"]) > records:
                return {
                    "source": f"{scale_json}, last step",
                    "tank_records": int(last["tank_records"]),
                    "service_cpu_ms_per_visit": float(last["pass"]["service_cpu_ms_per_visit"]),
                    "db_cpu_ms_per_visit": float(last["pass"]["db_cpu_ms_per_visit"]),
                }
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            pass  # no usable bench-scale.json: the CPU bound comes from this run's own last days
    tail = daily[-3:]
    visits = max(1, sum(d["visits"] for d in tail))
    return {
        "source": "this run, last days",
        "tank_records": records,
        "service_cpu_ms_per_visit": round(sum(d["service_cpu_ms_per_visit"] * d["visits"] for d in tail) / visits, 3),
        "db_cpu_ms_per_visit": round(sum(d["db_cpu_ms_per_visit"] * d["visits"] for d in tail) / visits, 3),
    }


def table(result: dict) -> str:
    largest = result["cpu_at_largest_volume"]
    rows = [
        ("accounts x days", f"{result['accounts']:,} x {result['days']}"),
        ("accounts that played on a day", f"{100 * result['active_share']:.1f} %"),
        (
            "upstream requests per account-day",
            f"{result['requests_per_account_day']:.4f} (goal <= {result['requests_goal']:.4f})",
        ),
        ("per-tank bytes per account-day", f"{result['bytes_per_account_day']:.0f}"),
        (
            "per-tank bytes per active account-day",
            f"{result['bytes_per_active_account_day']:.0f} (steady {result['bytes_per_active_account_day_steady']:.0f},"
            f" with index {result['bytes_per_active_account_day_with_index']:.0f}; goal <= 1024)",
        ),
        (
            "a measured day's record: payload (of it the 1.3.0 counters) + s + other fields = BSON bytes",
            "; ".join(
                f"{kind} {p['payload']:.0f} ({p['new_counters']:.0f}) + {p['assist']:.0f} + {p['other']:.0f}"
                f" = {p['total']:.0f}"
                for kind, p in result["record_parts"].items()
            ),
        ),
        ("CPU ms per account visit (service process)", f"{result['cpu_ms_per_visit']:.3f}"),
        ("CPU ms per account visit (database process)", f"{result['db_cpu_ms_per_visit']:.3f}"),
        (
            "CPU ms per visit at the largest volume (service + database)",
            f"{largest['service_cpu_ms_per_visit']:.3f} + {largest['db_cpu_ms_per_visit']:.3f}"
            f" ({largest['source']}, {largest['tank_records']:,} per-tank records)",
        ),
        ("accounts one process keeps current at 10 req/s", f"{result['accounts_per_day_at_10rps']:,}"),
        (
            "accounts one process keeps current at 20 req/s",
            f"{result['accounts_per_day_at_20rps']:,} (goal >= 1,000,000)",
        ),
    ]
    width = max(len(r[0]) for r in rows)
    return "\n".join(f"| {name.ljust(width)} | {value} |" for name, value in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--accounts", type=int, default=10_000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--rps", type=int, default=2000, help="the simulator's quota (and the budget's)")
    parser.add_argument("--claimants", type=int, default=3, help="trackers sharing the pass in this process")
    parser.add_argument("--in-flight", type=int, default=8, help="tanks/stats requests of one batch at once")
    parser.add_argument("--json", default="bench-tracker.json")
    parser.add_argument(
        "--panel", type=int, default=0, help="measure a random panel of this many active EU accounts instead"
    )
    parser.add_argument(
        "--scale-json",
        default=os.path.join(ROOT, "bench-scale.json"),
        help="scripts/bench_scale.py's figures: the CPU bound uses its largest step's pass",
    )
    args = parser.parse_args()
    # SIGTERM ends the run like Ctrl-C, so the database and simulator children are stopped too.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    if args.panel > 0:
        found = asyncio.run(panel_cost(args))
        print(panel_table(found))
        kept: dict = {}
        if os.path.exists(args.json):
            with open(args.json) as handle:
                kept = json.load(handle)
        with open(args.json, "w") as handle:
            json.dump({**kept, "panel": found}, handle, indent=2)
        print(f"written to {args.json} (panel)")
        return
    result = asyncio.run(main_async(args))
    print(table(result))
    if os.path.exists(args.json):  # the panel's figures of an earlier --panel run stay
        with open(args.json) as handle:
            earlier = json.load(handle).get("panel")
        if earlier is not None:
            result["panel"] = earlier
    with open(args.json, "w") as handle:
        json.dump(result, handle, indent=2)
    print(f"written to {args.json}")


if __name__ == "__main__":
    main()
