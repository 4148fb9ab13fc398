#!/usr/bin/env python3
"""One-command load benchmark of statsapi against a bare-Tornado ceiling.

    .venv/bin/python scripts/bench.py                 # ~10 s per scenario, writes bench-results.json
    .venv/bin/python scripts/bench.py --quick         # a smoke run (used by tests/test_bench.py)
    .venv/bin/python scripts/bench.py --duration 20 --connections 64 --json /tmp/b.json

In one run it starts, each as its own child process:

- SecantusDB (`python -m secantus --storage-path :memory:`), the database;
- the upstream simulator (`python -m scripts.upstream_sim`), then seeds a small dataset through the
  real ingest code (`server.demo.seed_current_profiles`, the clan refresh, the online sampler);
- the *ceiling*: a bare Tornado handler answering a fixed ~1 KB JSON body;
- the service: `python -m server ... --no-jobs --trusted-proxies 127.0.0.1/32`, ONE process.

Every scenario is driven by the same load generator at a fixed concurrency over keep-alive
connections: `wrk` (Debian package `wrk`) with a Lua script that rotates `X-Forwarded-For`
client addresses, or, when wrk is missing, a bundled asyncio generator (slower: on a 2-core
machine a Python client can itself be the bottleneck; the report says which one ran).
The service trusts 127.0.0.1 as a proxy, so each request is attributed to its forwarded
10.x.y.z address and the per-client limits do not interfere - except in the 429 scenario,
where one address, exhausted beforehand, sends everything.

With two or more CPUs the servers under test (ceiling and service) are pinned to one CPU
and everything else (database, simulator, load generator, this script) to the others, so
"one process" means one dedicated core and the ratio to the ceiling is like for like.

Reported per scenario: req/s, p50/p90/p99 latency, ratio to the ceiling's req/s, status codes
seen, CPU used by the process under test and by the database (µs CPU per request).
Then the service's resident memory before/after 100,000 requests from 10,000 distinct
clients, the goals with PASS/MISS, and (when py-spy is available) the top frames of the
service during a separate profiled cached-player run.

Every child process is stopped on exit, also on Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import dataclasses
import datetime as dt
import http.client
import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from server.catalogue import BY_NAME, PREFIX  # noqa: E402  (after the sys.path line above)
from server.config import API_VERSION  # noqa: E402

SHARED_DATA = os.path.join(os.path.dirname(ROOT), "shared", "data")
EXPECTED_VALUES_FILE = os.path.join(SHARED_DATA, "wn8exp-2024-09-12.json")
DEFAULT_JSON = os.path.join(ROOT, "bench-results.json")  # git-ignored (bench-results*.json)
TRUSTED_PROXY = "127.0.0.1/32"
OVER_LIMIT_CLIENT = "203.0.113.7"  # TEST-NET-3: the one client of the 429 scenario
HZ = os.sysconf("SC_CLK_TCK")

GOALS = {
    "player_ratio": 0.60,  # cached player >= 60 % of the ceiling's req/s
    "player_p99_factor": 2.0,  # ... with p99 <= 2x the ceiling's p99
    "rate_limited_ratio": 0.80,  # the 429 path >= 80 % of the ceiling's req/s
    "memory_growth_mb": 50.0,  # RSS growth over 100k requests from 10k clients
}


# --------------------------------------------------------------------------------------
# The ceiling: a bare Tornado handler with a fixed ~1 KB JSON answer (run in its own process)
# --------------------------------------------------------------------------------------
def ceiling_payload(size: int = 1024) -> bytes:
    body = {
        "success": True,
        "meta": {
            "source": "statsapi",
            "version": API_VERSION,
            "generated": "2026-01-01T00:00:00+00:00",
            "attribution": "Statistics by statsapi (http://127.0.0.1:8888/). "
            "If you reuse this data, please link to that page.",
        },
        "data": {"account_id": 500000001, "region": "eu", "nickname": "ceiling", "pad": ""},
    }
    raw = json.dumps(body, separators=(",", ":"))
    body["data"]["pad"] = "x" * max(0, size - len(raw))
    return json.dumps(body, separators=(",", ":")).encode()


def serve_ceiling(port: int) -> None:
    import tornado.ioloop
    import tornado.web

    payload = ceiling_payload()

    class CeilingHandler(tornado.web.RequestHandler):
        def get(self):
            self.set_header("Content-Type", "application/json; charset=utf-8")
            self.write(payload)

    async def main():
        app = tornado.web.Application([(r"/.*", CeilingHandler)])
        app.listen(port, "127.0.0.1")
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        await stop.wait()

    asyncio.run(main())


# --------------------------------------------------------------------------------------
# Child processes
# --------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"child process exited with code {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"port {port} did not open within {timeout:.0f} s")


class Children:
    """Every child this script starts, each in its own session; all stopped on exit."""

    def __init__(self, workdir: str):
        self.workdir = workdir
        self.procs: list[tuple[str, subprocess.Popen]] = []

    def log_path(self, name: str) -> str:
        return os.path.join(self.workdir, f"{name}.log")

    def spawn(self, name: str, cmd: list[str], cpus: set[int] | None = None, env=None) -> subprocess.Popen:
        if cpus and shutil.which("taskset"):
            cmd = ["taskset", "-c", ",".join(str(c) for c in sorted(cpus))] + cmd
        log = open(self.log_path(name), "ab")
        try:
            proc = subprocess.Popen(
                cmd,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=ROOT,
                env=env,
                start_new_session=True,
            )
        finally:
            log.close()
        self.procs.append((name, proc))
        return proc

    def tail(self, name: str, lines: int = 20) -> str:
        try:
            with open(self.log_path(name), "rb") as handle:
                return b"\n".join(handle.read().splitlines()[-lines:]).decode(errors="replace")
        except OSError:
            return ""

    def stop_all(self, timeout: float = 10.0) -> None:
        for _, proc in reversed(self.procs):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)  # its own session: only this child's group
                except (ProcessLookupError, PermissionError):
                    pass
        deadline = time.monotonic() + timeout
        for _, proc in reversed(self.procs):
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                proc.wait(5)
        self.procs.clear()


def loadgen_priority(choice: str) -> list[str]:
    """A command prefix that lets the load generator preempt the database on their shared CPU.

    SecantusDB is a Python server: when it is busy it would otherwise delay wrk's wake-ups
    and leave the server under test idle (measured: 404s at 45 % of the ceiling with the
    service 26 % idle). wrk needs ~15 % of a core, so real-time priority starves nothing.
    """
    candidates = {"rt": [["chrt", "-f", "10"], ["nice", "-n", "-10"]], "nice": [["nice", "-n", "-10"]], "none": []}
    for prefix in candidates[choice]:
        if shutil.which(prefix[0]) and subprocess.run(prefix + ["true"], capture_output=True).returncode == 0:
            return prefix
    return []


def _terminate(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


# --------------------------------------------------------------------------------------
# /proc readings
# --------------------------------------------------------------------------------------
def cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU of a process and all its threads (not its children)."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / HZ
    except (OSError, IndexError, ValueError):
        return None


def memory_kb(pid: int) -> dict:
    values = {}
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    name, value = line.split(":", 1)
                    values[name] = int(value.split()[0])
    except OSError:
        pass
    return values


def rss_mb(pid: int) -> float | None:
    kb = memory_kb(pid).get("VmRSS")
    return None if kb is None else round(kb / 1024.0, 1)


# --------------------------------------------------------------------------------------
# Plain HTTP probes (status checks, pre-exhausting the 429 client)
# --------------------------------------------------------------------------------------
def probe(port: int, path: str, client: str | None = None, timeout: float = 10.0) -> tuple[int, dict, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {"X-Forwarded-For": client} if client else {}
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def wait_http(port: int, path: str, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    wait_for_port(port, proc, timeout)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if probe(port, path, timeout=2)[0] < 500:
                return
        except OSError:
            pass
        if proc.poll() is not None:
            raise RuntimeError(f"child process exited with code {proc.returncode}")
        time.sleep(0.1)
    raise RuntimeError(f"{path} did not answer within {timeout:.0f} s")


# --------------------------------------------------------------------------------------
# Load generators: wrk (+ Lua) and the bundled asyncio fallback
# --------------------------------------------------------------------------------------
@dataclasses.dataclass
class Load:
    """What to send: paths (rotated) and client addresses (a rotating pool or one fixed address)."""

    port: int
    paths: list[str]
    pool: int = 20000  # distinct X-Forwarded-For addresses, rotated round-robin
    base: int = 0  # first address index of the pool (10.<i>>16>.<i>>8>.<i>)
    fixed_client: str | None = None


def client_address(index: int) -> str:
    return f"10.{(index >> 16) & 255}.{(index >> 8) & 255}.{index & 255}"


WRK_SCRIPT = r"""
-- generated by scripts/bench.py
local paths = {%(paths)s}
local npaths = #paths
local pool = %(pool)d
local base = %(base)d
local fixed_client = %(fixed)s
local step = %(threads)d
local threads = {}
local names = {"s2xx", "s3xx", "s400", "s404", "s429", "s4xx", "s5xx"}

function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

function init(args)
  n = tid or 0
  s2xx, s3xx, s400, s404, s429, s4xx, s5xx = 0, 0, 0, 0, 0, 0, 0
end

function request()
  n = n + step
  local client = fixed_client
  if not client then
    local i = base + (n %% pool)
    client = "10." .. (math.floor(i / 65536) %% 256) .. "." .. (math.floor(i / 256) %% 256) .. "." .. (i %% 256)
  end
  return wrk.format("GET", paths[(n %% npaths) + 1], {["X-Forwarded-For"] = client})
end

function response(status, headers, body)
  if status < 300 then s2xx = s2xx + 1
  elseif status < 400 then s3xx = s3xx + 1
  elseif status == 400 then s400 = s400 + 1
  elseif status == 404 then s404 = s404 + 1
  elseif status == 429 then s429 = s429 + 1
  elseif status < 500 then s4xx = s4xx + 1
  else s5xx = s5xx + 1 end
end

function done(summary, latency, requests)
  local counts = {}
  for _, name in ipairs(names) do
    counts[name] = 0
    for _, thread in ipairs(threads) do counts[name] = counts[name] + (thread:get(name) or 0) end
  end
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%%d,"duration_us":%%d,"bytes":%%d,"p50_us":%%d,"p90_us":%%d,"p99_us":%%d,' ..
    '"max_us":%%d,"mean_us":%%.1f,"connect_errors":%%d,"read_errors":%%d,"write_errors":%%d,' ..
    '"timeouts":%%d,"statuses":{"2xx":%%d,"3xx":%%d,"400":%%d,"404":%%d,"429":%%d,"4xx":%%d,"5xx":%%d}}\n',
    summary.requests, summary.duration, summary.bytes, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max, latency.mean, e.connect, e.read, e.write, e.timeout,
    counts.s2xx, counts.s3xx, counts.s400, counts.s404, counts.s429, counts.s4xx, counts.s5xx))
end
"""


def _lua_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class WrkGenerator:
    name = "wrk"

    def __init__(
        self,
        binary: str,
        connections: int,
        threads: int,
        workdir: str,
        cpus: set[int] | None,
        priority: list[str] | None = None,
    ):
        self.binary = binary
        self.priority = priority or []
        self.connections = connections
        self.threads = max(1, min(threads, connections))
        self.workdir = workdir
        self.cpus = cpus
        self.pid: int | None = None
        version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
        self.version = version.splitlines()[0] if version else "wrk"

    def describe(self) -> str:
        prio = f", run as '{' '.join(self.priority)}'" if self.priority else ""
        return (
            f"{self.version.split(' [')[0]} (-t{self.threads} -c{self.connections}, Lua rotates X-Forwarded-For{prio})"
        )

    def run(self, load: Load, seconds: int, on_start=None) -> dict:
        script = os.path.join(self.workdir, "load.lua")
        with open(script, "w") as handle:
            handle.write(
                WRK_SCRIPT
                % {
                    "paths": ", ".join(_lua_string(p) for p in load.paths),
                    "pool": max(1, load.pool),
                    "base": load.base,
                    "fixed": _lua_string(load.fixed_client) if load.fixed_client else "nil",
                    "threads": self.threads,
                }
            )
        cmd = [
            self.binary,
            f"-t{self.threads}",
            f"-c{self.connections}",
            f"-d{max(1, int(seconds))}s",
            "--timeout",
            "10s",
            "-s",
            script,
            f"http://127.0.0.1:{load.port}",
        ]
        if self.cpus and shutil.which("taskset"):
            cmd = ["taskset", "-c", ",".join(str(c) for c in sorted(self.cpus))] + cmd
        cmd = self.priority + cmd
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        self.pid = proc.pid
        try:
            if on_start is not None:
                on_start()
            out, err = proc.communicate(timeout=seconds + 60)
        except BaseException:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(5)
            raise
        finally:
            self.pid = None
        for line in out.splitlines():
            if line.startswith("BENCH_JSON "):
                raw = json.loads(line[len("BENCH_JSON ") :])
                break
        else:
            raise RuntimeError(f"wrk gave no result (exit {proc.returncode}): {err.strip() or out.strip()}")
        return {
            "requests": raw["requests"],
            "seconds": raw["duration_us"] / 1e6,
            "bytes": raw["bytes"],
            "p50_ms": raw["p50_us"] / 1000.0,
            "p90_ms": raw["p90_us"] / 1000.0,
            "p99_ms": raw["p99_us"] / 1000.0,
            "max_ms": raw["max_us"] / 1000.0,
            "mean_ms": raw["mean_us"] / 1000.0,
            "statuses": {k: v for k, v in raw["statuses"].items() if v},
            "socket_errors": {
                k: raw[k] for k in ("connect_errors", "read_errors", "write_errors", "timeouts") if raw[k]
            },
        }


class PythonGenerator:
    """Raw asyncio streams, HTTP/1.1 keep-alive, one coroutine per connection (runs in this process)."""

    name = "python"

    def __init__(self, connections: int):
        self.connections = connections
        self.pid = os.getpid()  # its CPU is this script's CPU

    def describe(self) -> str:
        return (
            f"bundled asyncio generator (-c{self.connections}; one Python process - on a 2-core machine "
            "it can be the bottleneck itself)"
        )

    def run(self, load: Load, seconds: int, on_start=None) -> dict:
        if on_start is not None:
            on_start()
        return asyncio.run(self._run(load, seconds))

    async def _run(self, load: Load, seconds: float) -> dict:
        latencies: list[float] = []
        statuses: collections.Counter = collections.Counter()
        errors: collections.Counter = collections.Counter()
        total_bytes = 0
        counter = [0]
        host = f"127.0.0.1:{load.port}".encode()
        paths = [p.encode() for p in load.paths]
        fixed = load.fixed_client.encode() if load.fixed_client else None

        def next_request() -> bytes:
            n = counter[0] = counter[0] + 1
            client = fixed or client_address(load.base + n % max(1, load.pool)).encode()
            return (
                b"GET "
                + paths[n % len(paths)]
                + b" HTTP/1.1\r\nHost: "
                + host
                + b"\r\nX-Forwarded-For: "
                + client
                + b"\r\n\r\n"
            )

        started = time.perf_counter()
        deadline = started + seconds

        async def worker() -> None:
            nonlocal total_bytes
            reader = writer = None
            while time.perf_counter() < deadline:
                try:
                    if writer is None:
                        reader, writer = await asyncio.open_connection("127.0.0.1", load.port)
                    t0 = time.perf_counter()
                    writer.write(next_request())
                    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
                    status = int(head[9:12])
                    lower = head.lower()
                    at = lower.find(b"\r\ncontent-length:")
                    length = int(lower[at + 17 : lower.index(b"\r\n", at + 2)]) if at >= 0 else 0
                    body = await reader.readexactly(length) if length else b""
                    t1 = time.perf_counter()
                    if t1 > deadline:
                        break
                    latencies.append(t1 - t0)
                    statuses[status] += 1
                    total_bytes += len(head) + len(body)
                    if b"\r\nconnection: close" in lower:
                        writer.close()
                        reader = writer = None
                except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
                    errors["read_errors" if not isinstance(exc, ConnectionRefusedError) else "connect_errors"] += 1
                    if writer is not None:
                        writer.close()
                    reader = writer = None
                    await asyncio.sleep(0.01)
                except TimeoutError:
                    errors["timeouts"] += 1
                    writer.close()
                    reader = writer = None
            if writer is not None:
                writer.close()

        await asyncio.gather(*(worker() for _ in range(self.connections)))
        elapsed = time.perf_counter() - started
        latencies.sort()

        def pct(p: float) -> float:
            return 1000.0 * latencies[min(len(latencies) - 1, int(p / 100.0 * len(latencies)))] if latencies else 0.0

        grouped = collections.Counter()
        for status, count in statuses.items():
            key = str(status) if status in (400, 404, 429) else f"{status // 100}xx"
            grouped[key] += count
        return {
            "requests": len(latencies),
            "seconds": elapsed,
            "bytes": total_bytes,
            "p50_ms": pct(50),
            "p90_ms": pct(90),
            "p99_ms": pct(99),
            "max_ms": 1000.0 * latencies[-1] if latencies else 0.0,
            "mean_ms": 1000.0 * sum(latencies) / len(latencies) if latencies else 0.0,
            "statuses": dict(grouped),
            "socket_errors": dict(errors),
        }


# --------------------------------------------------------------------------------------
# Seeding a small dataset through the real ingest code
# --------------------------------------------------------------------------------------
async def seed_small(
    uri: str, db_name: str, sim_url: str, players: int, clans: int, online_minutes: int, capped_counters: bool = False
) -> dict:
    from server import demo
    from server.bootstrap import connect_store
    from server.config import Config
    from server.ratelimit import RateLimiter
    from server.runtime import build_services

    demo._progress = lambda total, desc: None  # no progress bars in the bench output
    started = time.monotonic()
    if not capped_counters:
        # Before ensure_schema: it only creates the capped collection when none exists.
        from pymongo import MongoClient

        client = MongoClient(uri, serverSelectionTimeoutMS=5000)
        try:
            client[db_name].create_collection("rate_counters")
        finally:
            client.close()
    # The bench's simulator has no quota (--rps 0): seed at full speed, it is not what is measured.
    config = dataclasses.replace(
        Config(), mongodb_uri=uri, db_name=db_name, upstream_base_url=sim_url, jobs=False, upstream_rps=1000.0
    )
    store = await connect_store(config, uri)
    services = await build_services(config, store, RateLimiter(store.rate_counters))
    summary: dict = {"players": [], "clans": [], "online_samples": 0, "notes": []}
    try:
        lists = demo.SimulatorLists(sim_url)
        accounts = await lists.accounts("eu", players)
        await demo.seed_current_profiles(services.players, {"eu": accounts})
        rated = []
        for doc in await store.players.get_many("eu", accounts, {"account_id": 1, "ratings": 1}):
            if doc.get("ratings"):
                rated.append(doc["account_id"])
        summary["players"] = sorted(rated)
        if not rated:
            summary["notes"].append("no profile got ratings (expected values missing?)")

        if clans:
            try:
                from server.clans import ClanService

                clan_ids = await lists.clans("eu", clans)
                await store.clans.add_seeds("eu", clan_ids)
                # A small member-rating budget keeps seeding quick; the clan view does not need it.
                quick = ClanService(store, services.upstream, services.players, rating_budget=5)
                outcome = await quick.refresh(int(time.time() // 3600))
                cached = await store.clans.get_many("eu", clan_ids)
                summary["clans"] = sorted(cached)
                summary["notes"].append(f"clan refresh: {outcome}")
            except Exception as exc:  # the bench still measures everything else
                summary["notes"].append(f"clans not seeded: {type(exc).__name__}: {exc}")

        minute = int(time.time() // 60)
        for slot in range(minute - online_minutes + 1, minute + 1):
            try:
                await services.online.sample(slot)
                summary["online_samples"] += 1
            except Exception as exc:
                summary["notes"].append(f"online sample {slot} failed: {exc}")
    finally:
        await services.close()
        store.client.close()
    summary["seconds"] = round(time.monotonic() - started, 1)
    return summary


def probe_database(uri: str, docs: int = 2000, ops: int = 100) -> dict:
    """Per-operation cost of the rate limiter's database work on this database server.

    The limiter's flush is one unordered bulk of `$inc` upserts plus one `find({_id: {$in}})`
    read-back; both are timed on a capped and on a plain collection of `docs` documents.
    """
    from pymongo import MongoClient, UpdateOne

    client = MongoClient(uri, serverSelectionTimeoutMS=5000)
    db = client["bench_probe"]
    out: dict = {"documents": docs, "operations": ops}
    try:
        for kind in ("capped", "plain"):
            if kind == "capped":
                db.create_collection(kind, capped=True, size=8 << 20)
            collection = db[kind]
            collection.insert_many([{"_id": f"10.0.{i >> 8}.{i & 255}|player|1", "n": 1} for i in range(docs)])
            keys = [f"10.0.{i >> 8}.{i & 255}|player|1" for i in range(0, docs, max(1, docs // ops))][:ops]
            started = time.perf_counter()
            collection.bulk_write([UpdateOne({"_id": k}, {"$inc": {"n": 1}}, upsert=True) for k in keys], ordered=False)
            out[f"{kind}_inc_ms"] = round(1000 * (time.perf_counter() - started) / len(keys), 3)
            started = time.perf_counter()
            found = list(collection.find({"_id": {"$in": keys}}))
            out[f"{kind}_find_in_ms_per_key"] = round(1000 * (time.perf_counter() - started) / max(1, len(found)), 3)
        client.drop_database("bench_probe")
    finally:
        client.close()
    return out


def wait_for_database(uri: str, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    from pymongo import MongoClient

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"SecantusDB exited with code {proc.returncode}")
        try:
            client = MongoClient(uri, serverSelectionTimeoutMS=500)
            try:
                client.admin.command("ping")
                return
            finally:
                client.close()
        except Exception:
            time.sleep(0.1)
    raise RuntimeError("SecantusDB did not answer a ping in time")


# --------------------------------------------------------------------------------------
# Profiling with py-spy
# --------------------------------------------------------------------------------------
def find_py_spy(explicit: str | None) -> str | None:
    if explicit:
        return explicit if os.path.exists(explicit) else None
    found = shutil.which("py-spy")
    if found:
        return found
    candidate = os.path.join(os.path.dirname(sys.executable), "py-spy")
    return candidate if os.path.exists(candidate) else None


_FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")


def _short_file(path: str) -> str:
    path = path.replace("\\", "/")
    if path.startswith(ROOT + "/"):
        return path[len(ROOT) + 1 :]
    for marker in ("/site-packages/", "/lib/python3"):
        at = path.find(marker)
        if at >= 0:
            rest = path[at + len(marker) :]
            return rest.split("/", 1)[1] if marker == "/lib/python3" and "/" in rest else rest
    return path


def _frame_name(frame: str) -> str:
    match = _FRAME.match(frame.strip())
    if not match:
        return frame.strip()
    return f"{match.group('func')} ({_short_file(match.group('file'))})"


PY_SPY_RATE = 200
LOOP_FRAME = "._run_once (asyncio/base_events.py)"  # BaseEventLoop._run_once: the event-loop thread

# The costs worth naming, whether or not they make the top lists (inclusive shares).
WATCHED_FRAMES = [
    ("rate limiter: RateLimiter.hit", "RateLimiter.hit (server/ratelimit.py)"),
    ("rate limiter: Decision.headers", "Decision.headers (server/ratelimit.py)"),
    ("rate limiter: flush (bulk $inc + read back)", "RateLimiter.flush (server/ratelimit.py)"),
    ("client address: resolve_client_ip", "resolve_client_ip (handlers/base.py)"),
    ("envelope: BaseHandler.respond", "BaseHandler.respond (handlers/base.py)"),
    ("meta.generated: utc_now_iso", "utc_now_iso (handlers/base.py)"),
    ("headers: BaseHandler.set_default_headers", "BaseHandler.set_default_headers (handlers/base.py)"),
    ("errors: BaseHandler.write_error", "BaseHandler.write_error (handlers/base.py)"),
    ("errors: RequestHandler.send_error (tornado)", "RequestHandler.send_error (tornado/web.py)"),
    ("access log: log_request", "log_request (server/app.py)"),
    ("logging: StreamHandler.emit", "StreamHandler.emit (logging/__init__.py)"),
    ("player service: PlayerService.profile", "PlayerService.profile (server/players.py)"),
    ("tornado: RequestHandler.finish", "RequestHandler.finish (tornado/web.py)"),
    ("tornado: RequestHandler.__init__", "RequestHandler.__init__ (tornado/web.py)"),
    ("tornado: routing (find_handler)", "RuleRouter.find_handler (tornado/routing.py)"),
    ("tornado: Date header (format_datetime)", "format_datetime (email/utils.py)"),
    ("JSON error stream wrapper (server/http.py)", "_JSONRejectingStream.write (server/http.py)"),
]


def summarize_profile(raw_path: str, rate: int, seconds: float, top: int = 15) -> dict:
    """Self and inclusive shares per function of the event-loop thread, from py-spy's raw output.

    Other threads (pymongo's monitors and motor's executor) are counted apart: they do not
    serve requests, and py-spy's idle detection misses their blocking socket reads.
    """
    self_counts: collections.Counter = collections.Counter()
    incl_counts: collections.Counter = collections.Counter()
    loop = other = 0
    with open(raw_path) as handle:
        for line in handle:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            try:
                n = int(count)
            except ValueError:
                continue
            frames = [_frame_name(f) for f in stack.split(";") if f]
            frames = [f for f in frames if not f.startswith(("process ", "thread "))]
            if not frames:
                continue
            if not any(f.endswith(LOOP_FRAME) for f in frames):
                other += n
                continue
            loop += n
            self_counts[frames[-1]] += n
            for name in set(frames):
                incl_counts[name] += n
    if not loop:
        return {"samples": 0, "other_thread_samples": other}

    def share(items):
        return [{"frame": k, "percent": round(100.0 * v / loop, 1)} for k, v in items]

    project = [
        (k, v)
        for k, v in incl_counts.most_common()
        if any(f"({p}/" in k for p in ("server", "handlers", "store")) and "server/__main__.py" not in k
    ]
    return {
        "samples": loop,
        "other_thread_samples": other,
        "loop_busy_percent": round(100.0 * loop / (rate * seconds), 1),
        "top_self": share(self_counts.most_common(top)),
        "project_inclusive": share(project[:top]),
        "named_costs": [
            {"cost": label, "frame": frame, "percent": round(100.0 * incl_counts[frame] / loop, 1)}
            for label, frame in WATCHED_FRAMES
            if frame in incl_counts
        ],
    }


# --------------------------------------------------------------------------------------
# The benchmark
# --------------------------------------------------------------------------------------
class Bench:
    def __init__(self, args):
        self.args = args
        self.workdir = tempfile.mkdtemp(prefix="statsapi-bench-")
        self.children = Children(self.workdir)
        self.results: dict = {"scenarios": {}, "notes": []}
        self.service_pid: int | None = None
        self.ceiling_pid: int | None = None
        self.db_pid: int | None = None
        self.base_offset = 0  # each scenario gets fresh client addresses

        cpus = sorted(os.sched_getaffinity(0))
        if args.pin and len(cpus) >= 2:
            self.server_cpus: set[int] | None = {cpus[0]}
            self.other_cpus: set[int] | None = set(cpus[1:])
            os.sched_setaffinity(0, self.other_cpus)  # before any thread exists; children inherit
        else:
            self.server_cpus = self.other_cpus = None

        wrk = None if args.generator == "python" else shutil.which("wrk")
        if args.generator == "wrk" and not wrk:
            raise SystemExit("--generator wrk: wrk is not installed (apt-get install -y wrk)")
        if wrk:
            self.generator = WrkGenerator(
                wrk,
                args.connections,
                args.threads,
                self.workdir,
                self.other_cpus,
                loadgen_priority(args.loadgen_priority),
            )
        else:
            self.generator = PythonGenerator(args.connections)

    # --- helpers -------------------------------------------------------------------
    def say(self, text: str) -> None:
        print(text, flush=True)

    def loadgen_cpu(self) -> float:
        """CPU of the load generator: wrk runs are waited-for children; the Python one is this process."""
        import resource

        who = resource.RUSAGE_SELF if self.generator.name == "python" else resource.RUSAGE_CHILDREN
        usage = resource.getrusage(who)
        return usage.ru_utime + usage.ru_stime

    def settle(self, pid: int | None, timeout: float = 60.0, idle_share: float = 0.10) -> float:
        """Wait until the process under test and the database are idle again.

        The service flushes rate counters every 0.5 s; under load the database can fall
        behind, and its backlog would otherwise bill the next scenario. Returns the seconds
        it took (how long the backlog took to drain).
        """
        started = time.monotonic()
        pids = [p for p in (pid, self.db_pid) if p]
        while time.monotonic() - started < timeout:
            before = [cpu_seconds(p) or 0.0 for p in pids]
            time.sleep(0.5)
            after = [cpu_seconds(p) or 0.0 for p in pids]
            if all((b - a) / 0.5 < idle_share for a, b in zip(before, after)):
                break
        return round(time.monotonic() - started - 0.5, 1)

    def fresh_clients(self, pool: int) -> int:
        base = self.base_offset
        self.base_offset += pool
        return base

    def measure(self, name: str, load: Load, pid: int, seconds: int, warmup: int, expected: str, on_start=None) -> dict:
        if warmup > 0:
            self.generator.run(dataclasses.replace(load), warmup)
        before = {"target": cpu_seconds(pid), "db": cpu_seconds(self.db_pid), "loadgen": self.loadgen_cpu()}
        wall = time.monotonic()
        result = self.generator.run(load, seconds, on_start=on_start)
        wall = time.monotonic() - wall
        after = {"target": cpu_seconds(pid), "db": cpu_seconds(self.db_pid), "loadgen": self.loadgen_cpu()}
        result["rps"] = round(result["requests"] / result["seconds"], 1) if result["seconds"] else 0.0
        for key in ("p50_ms", "p90_ms", "p99_ms", "max_ms", "mean_ms"):
            result[key] = round(result[key], 3)
        cpu = {}
        for key in ("target", "db", "loadgen"):
            if before[key] is not None and after[key] is not None:
                cpu[key] = round(100.0 * (after[key] - before[key]) / wall, 1)
        if result["requests"] and before["target"] is not None and after["target"] is not None:
            result["cpu_us_per_request"] = round(1e6 * (after["target"] - before["target"]) / result["requests"], 1)
        result["cpu_percent"] = cpu
        result["path"] = load.paths[0] if len(load.paths) == 1 else f"{load.paths[0]} (+{len(load.paths) - 1} more)"
        result["expected_status"] = expected
        result["clients"] = 1 if load.fixed_client else load.pool
        expected_count = result["statuses"].get(expected, 0)
        result["unexpected_responses"] = result["requests"] - expected_count
        if result["requests"]:
            result["bytes_per_response"] = round(result["bytes"] / result["requests"])
        result["drain_seconds"] = self.settle(pid, self.args.settle_timeout)
        if result["drain_seconds"] >= self.args.settle_timeout - 1:
            self.results["notes"].append(
                f"{name}: the service/database were still busy {self.args.settle_timeout:.0f} s after the run "
                "(rate-counter flush backlog); the next scenario shares the machine with it"
            )
        if result["unexpected_responses"] > 0.01 * max(1, result["requests"]):
            self.results["notes"].append(
                f"{name}: {result['unexpected_responses']} of {result['requests']} responses were not {expected} "
                f"({result['statuses']})"
            )
        return result

    # --- phases ----------------------------------------------------------------------
    def start_infrastructure(self) -> None:
        args = self.args
        db_port = free_port()
        db = self.children.spawn(
            "secantus",
            [
                sys.executable,
                "-m",
                "secantus",
                "--host",
                "127.0.0.1",
                "--port",
                str(db_port),
                "--storage-path",
                ":memory:",
                "--log-level",
                "WARNING",
            ],
        )
        self.db_pid = db.pid
        self.uri = f"mongodb://127.0.0.1:{db_port}/?directConnection=true&retryWrites=false"
        self.db_name = "bench_" + str(int(time.time()))

        sim_port = free_port()
        cmd = [sys.executable, "-m", "scripts.upstream_sim", "--port", str(sim_port), "--rps", "0"]
        if os.path.exists(EXPECTED_VALUES_FILE):
            cmd += ["--expected-values", EXPECTED_VALUES_FILE]
        else:
            self.results["notes"].append("expected-values file not found: the simulator generated its own table")
        sim = self.children.spawn("upstream_sim", cmd)
        self.sim_url = f"http://127.0.0.1:{sim_port}"

        ceiling_port = free_port()
        ceiling = self.children.spawn(
            "ceiling",
            [sys.executable, os.path.abspath(__file__), "--serve-ceiling", str(ceiling_port)],
            cpus=self.server_cpus,
        )
        self.ceiling_pid, self.ceiling_port = ceiling.pid, ceiling_port

        wait_for_database(self.uri, db)
        self.results["database_probe"] = probe_database(self.uri)
        wait_for_port(sim_port, sim)
        wait_http(ceiling_port, "/", ceiling)

        self.say(f"seeding {args.players} players, {args.clans} clan(s), {args.online_minutes} online samples ...")
        seed = asyncio.run(
            seed_small(
                self.uri,
                self.db_name,
                self.sim_url,
                args.players,
                args.clans,
                args.online_minutes,
                args.capped_counters,
            )
        )
        self.results["rate_counters_collection"] = (
            "capped (as created by the service)"
            if args.capped_counters
            else "plain (pre-created by the bench; see database_probe)"
        )
        self.results["seed"] = {
            "seconds": seed["seconds"],
            "players_with_ratings": len(seed["players"]),
            "clans": seed["clans"],
            "online_samples": seed["online_samples"],
            "notes": seed["notes"],
        }
        self.seed = seed
        if not seed["players"]:
            raise RuntimeError("seeding produced no cached player with ratings: " + "; ".join(seed["notes"]))

        port = free_port()
        service_cmd = [
            sys.executable,
            "-m",
            "server",
            "--port",
            str(port),
            "--mongodb-uri",
            self.uri,
            "--db-name",
            self.db_name,
            "--upstream-base-url",
            self.sim_url,
            "--no-jobs",
            "--trusted-proxies",
            TRUSTED_PROXY,
            "--log-level",
            args.service_log_level,
        ]
        if args.rate_limit_scale != 1.0:
            service_cmd += ["--rate-limit-scale", str(args.rate_limit_scale)]
        env = dict(os.environ)
        env.pop("STATSAPI_PROCESSES", None)
        service = self.children.spawn("service", service_cmd, cpus=self.server_cpus, env=env)
        self.service_pid, self.port = service.pid, port
        try:
            wait_http(port, PREFIX, service)
        except RuntimeError:
            self.say(self.children.tail("service"))
            raise
        self.results["service_command"] = " ".join(service_cmd)

    def check(self, path: str, expected: int, client: str) -> dict:
        status, headers, body = probe(self.port, path, client)
        if status != expected:
            raise RuntimeError(f"GET {path}: expected {expected}, got {status}: {body[:300]!r}")
        return {"status": status, "body": body, "headers": headers}

    def run_scenarios(self) -> None:
        args = self.args
        seconds, warmup = args.duration, args.warmup
        scenarios = self.results["scenarios"]
        player = self.seed["players"][0]
        player_path = f"{PREFIX}/player/{player}/eu"

        # Sanity: the player is served from the cache with ratings.
        answer = json.loads(self.check(player_path, 200, "198.51.100.1")["body"])
        if answer["data"].get("live_fetched") or not answer["data"]["ratings"]["available"]:
            raise RuntimeError(f"{player_path} is not a cached, rated profile: {answer['data']}")
        self.results["player_response_bytes"] = len(json.dumps(answer, separators=(",", ":")))
        self.results["ceiling_response_bytes"] = len(ceiling_payload())

        plan = [
            ("ceiling", None, "2xx"),
            ("player", player_path, "2xx"),
            ("clan", f"{PREFIX}/clan/{self.seed['clans'][0]}/eu" if self.seed["clans"] else None, "2xx"),
            ("online", f"{PREFIX}/online", "2xx"),
            ("status", f"{PREFIX}/status", "2xx"),
            ("not_found", f"{PREFIX}/nope", "404"),
            ("bad_request", f"{PREFIX}/player/abc/eu", "400"),
        ]
        for name, path, expected in plan:
            if name != "ceiling" and name not in args.scenarios:
                continue
            if name == "ceiling":
                load = Load(self.ceiling_port, ["/"], pool=args.clients, base=self.fresh_clients(args.clients))
                self.say(f"  {name:<13} GET / (bare Tornado, fixed {len(ceiling_payload())} B JSON) ...")
                scenarios[name] = self.measure(name, load, self.ceiling_pid, seconds, warmup, expected)
                scenarios[name]["path"] = "/ (ceiling)"
                continue
            if path is None:
                scenarios[name] = {"skipped": "no clan could be seeded (see seed notes)", "path": None}
                self.say(f"  {name:<13} skipped: no clan seeded")
                continue
            self.check(path, int(expected.replace("2xx", "200")), "198.51.100.2")
            load = Load(self.port, [path], pool=args.clients, base=self.fresh_clients(args.clients))
            self.say(f"  {name:<13} GET {path} ...")
            scenarios[name] = self.measure(name, load, self.service_pid, seconds, warmup, expected)

        if "rate_limited" in args.scenarios:
            self.run_rate_limited(player_path)

        if args.recheck_ceiling:
            load = Load(self.ceiling_port, ["/"], pool=args.clients, base=self.fresh_clients(args.clients))
            self.say(f"  {'ceiling':<13} re-measured (drift check) ...")
            again = self.measure("ceiling_end", load, self.ceiling_pid, seconds, 0, "2xx")
            first = scenarios["ceiling"]
            self.results["ceiling_recheck"] = {
                "rps": again["rps"],
                "p99_ms": again["p99_ms"],
                "drift_percent": round(100.0 * (again["rps"] / first["rps"] - 1), 1),
            }

        ceiling_rps = scenarios["ceiling"]["rps"]
        for name, result in scenarios.items():
            if "rps" in result:
                result["ratio_to_ceiling"] = round(result["rps"] / ceiling_rps, 3) if ceiling_rps else None

    def run_rate_limited(self, player_path: str) -> None:
        """429: one client over its limit (exhausted first); everything it sends is rejected."""
        args = self.args
        headers = self.check(player_path, 200, OVER_LIMIT_CLIENT)["headers"]
        limit = int(headers.get("x-ratelimit-limit", BY_NAME["player"].limit_per_minute))
        status = 200
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            for _ in range(limit + 5):
                conn.request("GET", player_path, headers={"X-Forwarded-For": OVER_LIMIT_CLIENT})
                response = conn.getresponse()
                response.read()
                status = response.status
        finally:
            conn.close()
        if status != 429:
            raise RuntimeError(f"could not exhaust the limit of {OVER_LIMIT_CLIENT}: last status {status}")
        load = Load(self.port, [player_path], fixed_client=OVER_LIMIT_CLIENT)
        self.say(f"  {'rate_limited':<13} GET {player_path} as {OVER_LIMIT_CLIENT} (over its limit) ...")
        self.results["scenarios"]["rate_limited"] = self.measure(
            "rate_limited", load, self.service_pid, args.duration, args.warmup, "429"
        )

    def run_memory(self) -> None:
        args = self.args
        target, clients = args.memory_requests, args.memory_clients
        paths = [f"{PREFIX}/player/{a}/eu" for a in self.seed["players"]]
        base = self.fresh_clients(clients)
        rps = max(100.0, (self.results["scenarios"].get("player") or {}).get("rps") or 1000.0)
        self.say(f"  {'memory':<13} {target:,} requests from {clients:,} clients over {len(paths)} cached players ...")
        time.sleep(1.0)  # let the last flush settle
        before = memory_kb(self.service_pid)
        curve = [{"requests": 0, "rss_mb": round(before.get("VmRSS", 0) / 1024, 1)}]
        done = statuses_total = 0
        statuses: collections.Counter = collections.Counter()
        started = time.monotonic()
        while done < target:
            remaining = target - done
            seconds = max(1, min(30, int(remaining / rps * 1.05 + 0.999)))
            result = self.generator.run(Load(self.port, paths, pool=clients, base=base), seconds)
            done += result["requests"]
            statuses.update(result["statuses"])
            curve.append({"requests": done, "rss_mb": rss_mb(self.service_pid)})
            if result["requests"] == 0:
                raise RuntimeError("memory run made no progress")
        statuses_total = sum(statuses.values())
        time.sleep(1.0)
        after = memory_kb(self.service_pid)
        growth = (after.get("VmRSS", 0) - before.get("VmRSS", 0)) / 1024.0
        self.results["memory"] = {
            "requests": done,
            "clients": clients,
            "paths": len(paths),
            "seconds": round(time.monotonic() - started, 1),
            "rss_start_mb": self.results.get("rss_at_start_mb"),
            "rss_before_mb": round(before.get("VmRSS", 0) / 1024, 1),
            "rss_after_mb": round(after.get("VmRSS", 0) / 1024, 1),
            "growth_mb": round(growth, 1),
            "peak_rss_mb": round(after.get("VmHWM", 0) / 1024, 1),
            "curve": curve,
            "statuses": dict(statuses),
            "non_2xx": statuses_total - statuses.get("2xx", 0),
        }

    def run_profiles(self) -> None:
        args = self.args
        py_spy = find_py_spy(args.py_spy)
        if not args.profile:
            return
        if not py_spy:
            self.results["profile"] = {"skipped": "py-spy not found (pip install py-spy; or --py-spy PATH)"}
            self.say("  profile       skipped: py-spy not found")
            return
        player_path = f"{PREFIX}/player/{self.seed['players'][0]}/eu"
        profiles = {}
        for name in args.profile:
            if name == "player":
                load = Load(self.port, [player_path], pool=args.clients, base=self.fresh_clients(args.clients))
            elif name == "rate_limited":
                load = Load(self.port, [player_path], fixed_client=OVER_LIMIT_CLIENT)
            elif name == "ceiling":
                load = Load(self.ceiling_port, ["/"], pool=args.clients, base=self.fresh_clients(args.clients))
            else:
                continue
            pid = self.ceiling_pid if name == "ceiling" else self.service_pid
            seconds = max(2, min(args.duration, 15))
            raw = os.path.join(self.workdir, f"profile-{name}.txt")
            self.say(f"  profile       {name} with py-spy for {seconds} s ...")
            spy_holder: dict = {}

            def start_spy(raw=raw, pid=pid, seconds=seconds):
                cmd = [
                    py_spy,
                    "record",
                    "--pid",
                    str(pid),
                    "--duration",
                    str(seconds),
                    "--rate",
                    str(PY_SPY_RATE),
                    "--format",
                    "raw",
                    "--function",
                    "--nonblocking",
                    "--output",
                    raw,
                ]
                spy_holder["proc"] = self.children.spawn(f"py-spy-{name}", cmd)

            result = self.measure(
                f"profile_{name}", load, pid, seconds, 0, "429" if name == "rate_limited" else "2xx", on_start=start_spy
            )
            proc = spy_holder.get("proc")
            if proc is not None:
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
            if not os.path.exists(raw):
                profiles[name] = {"skipped": "py-spy wrote no profile: " + self.children.tail(f"py-spy-{name}", 5)}
                continue
            summary = summarize_profile(raw, PY_SPY_RATE, seconds)
            summary["rps_while_profiled"] = result["rps"]
            summary["cpu_percent"] = result["cpu_percent"]
            profiles[name] = summary
            if args.keep:
                summary["raw"] = raw
        self.results["profile"] = profiles

    # --- the whole run -----------------------------------------------------------------
    def run(self) -> dict:
        args = self.args
        self.results.update(
            {
                "generated": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
                "machine": {
                    "cpus": os.cpu_count(),
                    "python": platform.python_version(),
                    "platform": platform.platform(),
                },
                "generator": self.generator.describe(),
                "connections": args.connections,
                "duration_seconds": args.duration,
                "warmup_seconds": args.warmup,
                "clients_per_scenario": args.clients,
                "pinning": (
                    {"servers_under_test": sorted(self.server_cpus), "everything_else": sorted(self.other_cpus)}
                    if self.server_cpus
                    else None
                ),
                "quick": args.quick,
                "rate_limit_scale": args.rate_limit_scale,
            }
        )
        self.say(
            f"statsapi bench: {self.generator.describe()}; {args.duration} s per scenario"
            + (f"; servers pinned to CPU {sorted(self.server_cpus)}" if self.server_cpus else "")
        )
        self.start_infrastructure()
        self.results["rss_at_start_mb"] = rss_mb(self.service_pid)
        self.say("running scenarios:")
        self.run_scenarios()
        if "memory" in args.scenarios:
            self.run_memory()
        self.run_profiles()
        self.results["goals"] = evaluate_goals(self.results)
        return self.results

    def close(self) -> None:
        self.children.stop_all()
        if not self.args.keep:
            shutil.rmtree(self.workdir, ignore_errors=True)


def evaluate_goals(results: dict) -> list[dict]:
    scenarios = results["scenarios"]
    ceiling, player, limited = scenarios["ceiling"], scenarios.get("player"), scenarios.get("rate_limited")
    goals = []
    if player and "rps" in player:
        goals.append(
            {
                "goal": "cached player req/s >= 60 % of ceiling",
                "target": GOALS["player_ratio"],
                "value": player.get("ratio_to_ceiling"),
                "pass": (player.get("ratio_to_ceiling") or 0) >= GOALS["player_ratio"],
            }
        )
        goals.append(
            {
                "goal": "cached player p99 <= 2x ceiling p99",
                "target": round(GOALS["player_p99_factor"] * ceiling["p99_ms"], 3),
                "value": player["p99_ms"],
                "pass": player["p99_ms"] <= GOALS["player_p99_factor"] * ceiling["p99_ms"],
            }
        )
    if limited and "rps" in limited:
        goals.append(
            {
                "goal": "429 path req/s >= 80 % of ceiling",
                "target": GOALS["rate_limited_ratio"],
                "value": limited.get("ratio_to_ceiling"),
                "pass": (limited.get("ratio_to_ceiling") or 0) >= GOALS["rate_limited_ratio"],
            }
        )
    memory = results.get("memory")
    if memory:
        goals.append(
            {
                "goal": f"RSS growth over {memory['requests']:,} requests / {memory['clients']:,} clients <= 50 MB",
                "target": GOALS["memory_growth_mb"],
                "value": memory["growth_mb"],
                "pass": memory["growth_mb"] <= GOALS["memory_growth_mb"],
            }
        )
    return goals


# --------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------
ALL_SCENARIOS = ["player", "clan", "online", "status", "not_found", "bad_request", "rate_limited", "memory"]
ORDER = ["ceiling", "player", "clan", "online", "status", "not_found", "bad_request", "rate_limited"]


def format_report(results: dict) -> str:
    lines = []
    scenarios = results["scenarios"]
    head = (
        f"{'scenario':<13} {'path':<32} {'status':>6} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} "
        f"{'ratio':>6} {'cpu µs/req':>10} {'proc cpu':>8} {'db cpu':>7} {'gen cpu':>7} {'drain s':>7}"
    )
    lines += [
        "",
        f"generator: {results['generator']}; {results['connections']} connections; "
        f"{results['duration_seconds']} s per scenario",
        head,
        "-" * len(head),
    ]
    for name in ORDER:
        r = scenarios.get(name)
        if r is None:
            continue
        if "skipped" in r:
            lines.append(f"{name:<13} skipped: {r['skipped']}")
            continue
        path = (r["path"] or "")[:32]
        ratio = f"{100 * r['ratio_to_ceiling']:.0f}%" if r.get("ratio_to_ceiling") is not None else "-"
        cpu = r.get("cpu_percent", {})
        lines.append(
            f"{name:<13} {path:<32} {r['expected_status']:>6} {r['rps']:>9.1f} {r['p50_ms']:>8.2f} "
            f"{r['p99_ms']:>8.2f} {ratio:>6} {r.get('cpu_us_per_request', 0):>10.1f} "
            f"{cpu.get('target', 0):>7.0f}% {cpu.get('db', 0):>6.0f}% {cpu.get('loadgen', 0):>6.0f}% "
            f"{r.get('drain_seconds', 0):>7.1f}"
        )
    if results.get("ceiling_recheck"):
        c = results["ceiling_recheck"]
        lines.append(
            f"(ceiling re-measured at the end: {c['rps']:.1f} req/s, p99 {c['p99_ms']:.2f} ms, "
            f"drift {c['drift_percent']:+.1f} %)"
        )
    lines.append(
        "(ratio: req/s / ceiling req/s; cpu µs/req and proc cpu: the process under test; db/gen cpu: "
        "SecantusDB and the load generator; drain s: until service and database were idle again)"
    )
    probe_db = results.get("database_probe")
    if probe_db:
        lines.append(
            f"database: SecantusDB, rate_counters {results.get('rate_counters_collection')}; per-op cost at "
            f"{probe_db['documents']} docs: $inc capped {probe_db['capped_inc_ms']} ms vs plain "
            f"{probe_db['plain_inc_ms']} ms; find $in {probe_db['plain_find_in_ms_per_key']} ms per key"
        )
    memory = results.get("memory")
    if memory:
        lines += [
            "",
            f"memory: RSS {memory['rss_before_mb']} MB -> {memory['rss_after_mb']} MB over "
            f"{memory['requests']:,} requests from {memory['clients']:,} clients = "
            f"{memory['growth_mb']:+.1f} MB (at service start {memory['rss_start_mb']} MB, "
            f"peak {memory['peak_rss_mb']} MB; curve "
            + ", ".join(f"{p['requests']:,}:{p['rss_mb']}" for p in memory["curve"])
            + ")",
        ]
    lines += ["", "goals (one service process):"]
    for goal in results.get("goals", []):
        value = goal["value"]
        shown = f"{value:.3f}" if isinstance(value, float) else str(value)
        lines.append(f"  [{'PASS' if goal['pass'] else 'MISS'}] {goal['goal']}: {shown} (target {goal['target']})")
    profile = results.get("profile") or {}
    if "skipped" in profile:
        lines += ["", f"profile: skipped ({profile['skipped']})"]
    for name, summary in profile.items() if "skipped" not in profile else []:
        if not isinstance(summary, dict) or not summary.get("samples"):
            lines += [
                "",
                f"profile {name}: {summary.get('skipped', 'no samples') if isinstance(summary, dict) else ''}",
            ]
            continue
        lines += [
            "",
            f"profile of the service during '{name}' ({summary['rps_while_profiled']:.0f} req/s while "
            f"profiled): event loop busy {summary['loop_busy_percent']}% of the time, "
            f"{summary['samples']} loop samples (+{summary['other_thread_samples']} in driver threads); "
            "shares of the loop's busy samples:",
            "  top self frames:",
        ]
        lines += [f"    {f['percent']:5.1f}%  {f['frame']}" for f in summary["top_self"][:12]]
        lines.append("  project code, inclusive:")
        lines += [f"    {f['percent']:5.1f}%  {f['frame']}" for f in summary["project_inclusive"][:12]]
        lines.append("  named costs, inclusive:")
        lines += [f"    {f['percent']:5.1f}%  {f['cost']}" for f in summary["named_costs"]]
    if results.get("notes"):
        lines += ["", "notes:"] + [f"  - {n}" for n in results["notes"]]
    return "\n".join(lines)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Load benchmark of statsapi against a bare-Tornado ceiling.")
    parser.add_argument("--duration", type=int, default=None, help="seconds per scenario (default 10; quick: 2)")
    parser.add_argument("--warmup", type=int, default=None, help="warm-up seconds before each scenario (default 2)")
    parser.add_argument("--connections", type=int, default=32, help="concurrent keep-alive connections")
    parser.add_argument("--threads", type=int, default=1, help="wrk threads (default 1: one core is plenty)")
    parser.add_argument(
        "--clients",
        type=int,
        default=20000,
        help="distinct X-Forwarded-For addresses rotated per scenario (keeps each under its limit)",
    )
    parser.add_argument("--memory-requests", type=int, default=None, help="default 100000 (quick: 5000)")
    parser.add_argument("--memory-clients", type=int, default=None, help="default 10000 (quick: 1000)")
    parser.add_argument("--players", type=int, default=None, help="players to seed (default 50; quick: 10)")
    parser.add_argument("--clans", type=int, default=1, help="clans to seed (0: skip the clan scenario)")
    parser.add_argument("--online-minutes", type=int, default=None, help="online samples to seed (default 5)")
    parser.add_argument(
        "--scenarios",
        default=",".join(ALL_SCENARIOS),
        help="comma-separated subset to run (the ceiling always runs): " + ",".join(ALL_SCENARIOS),
    )
    parser.add_argument("--generator", choices=["auto", "wrk", "python"], default="auto")
    parser.add_argument(
        "--settle-timeout",
        type=float,
        default=None,
        help="after each scenario, wait up to this long for the service and database to go idle "
        "(default 60; quick: 15)",
    )
    parser.add_argument(
        "--rate-limit-scale",
        type=float,
        default=1.0,
        help="passed to the service: multiply every limit (with fewer --clients this measures the "
        "service without the database's per-client counter work)",
    )
    parser.add_argument(
        "--loadgen-priority",
        choices=["rt", "nice", "none"],
        default="rt",
        help="run wrk with real-time (chrt -f) or raised (nice) priority when permitted (default rt)",
    )
    parser.add_argument(
        "--capped-counters",
        action="store_true",
        help="keep rate_counters a capped collection on SecantusDB (slow there: see the report)",
    )
    parser.add_argument(
        "--no-pin", dest="pin", action="store_false", help="do not pin the servers under test to their own CPU"
    )
    parser.add_argument(
        "--profile",
        default=None,
        help="comma-separated scenarios to profile with py-spy: player, rate_limited, ceiling "
        "(default player,rate_limited; quick: none; '' for none)",
    )
    parser.add_argument("--py-spy", help="path of the py-spy binary (default: on PATH or next to python)")
    parser.add_argument(
        "--no-recheck", dest="recheck_ceiling", action="store_false", help="do not re-measure the ceiling at the end"
    )
    parser.add_argument(
        "--service-log-level",
        default="INFO",
        help="the service's --log-level (INFO: one access-log line per request, as deployed)",
    )
    parser.add_argument("--json", default=DEFAULT_JSON, help="where to write the results (default bench-results.json)")
    parser.add_argument("--quick", action="store_true", help="short smoke run (about a minute)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs, Lua, profiles)")
    parser.add_argument("--serve-ceiling", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    quick = args.quick
    if args.duration is None:
        args.duration = 2 if quick else 10
    if args.warmup is None:
        args.warmup = 0 if quick else 2
    if args.settle_timeout is None:
        args.settle_timeout = 15.0 if quick else 60.0
    if args.memory_requests is None:
        args.memory_requests = 5000 if quick else 100_000
    if args.memory_clients is None:
        args.memory_clients = 1000 if quick else 10_000
    if args.players is None:
        args.players = 10 if quick else 50
    if args.online_minutes is None:
        args.online_minutes = 2 if quick else 5
    if args.profile is None:
        args.profile = "" if quick else "player,rate_limited"
    args.profile = [p.strip() for p in args.profile.split(",") if p.strip()]
    args.scenarios = [p.strip() for p in args.scenarios.split(",") if p.strip()]
    unknown = set(args.scenarios) - set(ALL_SCENARIOS)
    if unknown:
        parser.error(f"unknown scenarios: {', '.join(sorted(unknown))}")
    if quick:
        args.recheck_ceiling = False
    args.duration = max(1, args.duration)
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.serve_ceiling:
        serve_ceiling(args.serve_ceiling)
        return 0
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)
    bench = Bench(args)
    try:
        results = bench.run()
    except KeyboardInterrupt:
        print("\ninterrupted: stopping child processes", file=sys.stderr)
        return 130
    except Exception:
        for name in ("service", "secantus", "upstream_sim", "ceiling"):
            tail = bench.children.tail(name, 15)
            if tail:
                print(f"--- last lines of {name}.log ---\n{tail}", file=sys.stderr)
        raise
    finally:
        bench.close()
    print(format_report(results))
    with open(args.json, "w") as handle:
        json.dump(results, handle, indent=2, sort_keys=False)
        handle.write("\n")
    print(f"\nresults written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
