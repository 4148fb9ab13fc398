#!/usr/bin/env python3
"""Rerun the attacks of issue 12 against the real service and measure what other clients see.

    .venv/bin/python scripts/attacks.py                      # everything (10-20 minutes)
    .venv/bin/python scripts/attacks.py --quick              # a reduced version of everything (~3 minutes)
    .venv/bin/python scripts/attacks.py --only flood kill_db --json /tmp/a.json

It starts, each as its own child process (stopped on exit, also on Ctrl-C / SIGTERM):

- the upstream simulator (`python -m scripts.upstream_sim --rps 50`);
- the service, `python -m server --data-dir <tmp> --upstream-rps 50 --trusted-proxies 127.0.0.1/32`
  with its jobs and its *embedded* database (SecantusDB, started and supervised by the service;
  its pid is found in /proc as the server's child whose command line names secantus);
- for the attacks that need a service of their own: a second instance (fresh rate-limit and live
  budget windows: the "simultaneous lookups" attack) and a third one started under
  RLIMIT_NOFILE 1024/1024 (the "connections" attack). Their cached player is copied from the
  main service's database (the live budget of the second one must be untouched);
- a *prober* per service (`attacks.py --prober ...`, a separate process so the attack traffic of
  this script cannot delay it): 20 requests a second of one cached player
  (`player/<id>/eu` under the API prefix), each on a new connection, rotating 512 X-Forwarded-For
  addresses of 198.18.0.0/15 so the player endpoint's per-client limit (server.catalogue PLAYER)
  never applies; every status and latency is recorded with its start time.

The service runs with its real rate limits (no --rate-limit-scale): the prober rotates addresses
instead, so "live lookups admitted" tests the real global live budget (server.catalogue LIVE_GLOBAL
a minute).

For each attack: the prober's p50/p99/max and non-200 answers during the attack; service and
database CPU (cores) during the attack and in the N seconds after it (10 s; quick 2 s); then live
lookups of uncached accounts from fresh addresses (5; quick 3): how many were admitted (not 429)
and answered 200; plus figures of the attack itself. Attacks:

  small         headers over 64 KB, 10,000 headers, 10,000 query params (JSON 4xx each), a static
                Range past the end (JSON 416, not cacheable), OPTIONS on a site route (Cache-Control)
  flood         >= 40,000 requests to /online, each from a fresh address (wrk + Lua when installed,
                else the bundled asyncio generator, 32 connections); /status rate_limiter meanwhile
  simultaneous  100 distinct uncached accounts from 100 addresses at once (second instance)
  heavy_reads   a compact year of online samples inserted directly, then 8 / 32 / 64 concurrent cold
                /online/history?region=eu&days=N (distinct N defeat the caches)
  connections   2,000 idle connections (re-opened as the server closes them) + 50 slowloris, against
                the third instance at RLIMIT_NOFILE 1024/1024
  bodies        8 concurrent 100 MB bodies to an unknown path
  kill_db       kill -9 of the embedded database: how long data endpoints answer 503, when 200 returns
  sigstop_db    SIGSTOP of the database for 10 s (quick 5 s): how fast requests answer, recovery
  retention     200,000 then 1,000,000 snapshots (quick 20,000), 1 % older than 410 days, inserted
                directly; time until the retention job has deleted the expired ones

The report is a table plus JSON (default bench-results-attacks.json, git-ignored).
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
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from scripts.bench import (  # noqa: E402  (after the sys.path line above)
    EXPECTED_VALUES_FILE,
    Children,
    Load,
    PythonGenerator,
    WrkGenerator,
    cpu_seconds,
    free_port,
    rss_mb,
    wait_for_port,
    wait_http,
)
from server.catalogue import LIVE_GLOBAL, MAX_DAYS, PREFIX  # noqa: E402
from store.constants import REGIONS  # noqa: E402

DEFAULT_JSON = os.path.join(ROOT, "bench-results-attacks.json")  # git-ignored (bench-results*.json)
TRUSTED_PROXY = "127.0.0.1/32"
UPSTREAM_RPS = 50
PROBER_RATE = 20.0
PROBER_ADDRESSES = 512
REGION = "eu"
DAY = dt.timedelta(days=1)
ALL_ATTACKS = [
    "small",
    "flood",
    "simultaneous",
    "heavy_reads",
    "connections",
    "bodies",
    "kill_db",
    "sigstop_db",
    "retention",
]
# Attacks whose target is the database itself: 503 database_unavailable is the expected answer meanwhile.
DATABASE_ATTACKS = {"kill_db", "sigstop_db"}
CAUGHT_UP_KEYS = 50  # pending rate-limit keys of the steady trickle (prober, status polls): the flood's are flushed


# --------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------
def now() -> float:
    return time.time()


def pct(values: list[float], p: float) -> float | None:
    """Nearest-rank percentile of a list (None when empty)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100.0 * len(ordered)))
    return round(ordered[min(len(ordered), rank) - 1], 2)


def error_code(body: bytes) -> str | None:
    try:
        parsed = json.loads(body)
    except (ValueError, TypeError):
        return None
    if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
        return parsed["error"].get("code")
    return None


class Addresses:
    """Fresh client addresses per purpose, never reused within a run."""

    PREFIX = {"live": 64, "misc": 80, "burst": 96}  # 100.64.0.0/10 (shared address space)

    def __init__(self):
        self.counters = collections.Counter()
        self.lock = threading.Lock()

    def next(self, kind: str = "misc") -> str:
        with self.lock:
            n = self.counters[kind]
            self.counters[kind] += 1
        return f"100.{self.PREFIX[kind] + ((n >> 16) & 15)}.{(n >> 8) & 255}.{n & 255}"


def http_get(
    port: int,
    path: str,
    client: str | None = None,
    timeout: float = 30.0,
    headers=None,
    method: str = "GET",
    source: str | None = None,
) -> dict:
    """One request on a new connection; {status, headers, body, ms} or {status: None, error}."""
    conn = http.client.HTTPConnection(
        "127.0.0.1", port, timeout=timeout, source_address=(source, 0) if source else None
    )
    sent = {"Connection": "close", **(headers or {})}
    if client:
        sent["X-Forwarded-For"] = client
    started = time.perf_counter()
    try:
        conn.request(method, path, headers=sent)
        response = conn.getresponse()
        body = response.read()
        return {
            "status": response.status,
            "headers": {k.lower(): v for k, v in response.getheaders()},
            "body": body,
            "ms": round(1000 * (time.perf_counter() - started), 2),
            "started": now(),
        }
    except Exception as exc:
        return {
            "status": None,
            "error": f"{type(exc).__name__}: {exc}"[:200],
            "headers": {},
            "body": b"",
            "ms": round(1000 * (time.perf_counter() - started), 2),
        }
    finally:
        conn.close()


def json_data(answer: dict) -> dict | None:
    try:
        return json.loads(answer["body"]).get("data")
    except (ValueError, TypeError, AttributeError):
        return None


def raw_exchange(port: int, raw: bytes, timeout: float = 30.0) -> dict:
    """Send raw bytes, read until the server closes; {status, headers, body} (status None: no answer)."""
    data = b""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            try:
                sock.sendall(raw)
            except OSError:
                pass  # the server answered and stopped reading: the answer is still there
            try:
                while chunk := sock.recv(65536):
                    data += chunk
            except (TimeoutError, ConnectionResetError):
                pass
    except OSError as exc:
        return {"status": None, "error": f"{type(exc).__name__}: {exc}", "headers": {}, "body": b""}
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    if not lines[0].startswith("HTTP/1."):
        return {"status": None, "error": f"no HTTP answer ({len(data)} bytes)", "headers": {}, "body": data[:200]}
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            key, value = line.split(":", 1)
            headers[key.strip().lower()] = value.strip()
    return {"status": int(lines[0].split()[1]), "headers": headers, "body": body}


def connect_nowait(port: int, source: str) -> socket.socket:
    sock = socket.socket()
    sock.setblocking(False)
    sock.bind((source, 0))
    sock.connect_ex(("127.0.0.1", port))
    return sock


def closed_by_server(sock: socket.socket) -> bool:
    try:
        data = sock.recv(65536, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except BlockingIOError:
        return False
    except OSError:
        return True  # reset (or never connected)
    return data == b"" or data.startswith(b"HTTP/1.1 ")


def raise_own_fd_limit() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else 1 << 20
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            return target
        except (ValueError, OSError):
            pass
    return soft


def fd_limits(pid: int) -> dict | None:
    try:
        with open(f"/proc/{pid}/limits") as handle:
            for line in handle:
                if line.startswith("Max open files"):
                    parts = line.split()
                    return {"soft": int(parts[3]), "hard": int(parts[4])}
    except (OSError, ValueError, IndexError):
        pass
    return None


def open_fds(pid: int) -> int | None:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def proc_state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def children_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                ppid = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid:
            found.append(int(entry))
    return found


def cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return [part.decode(errors="replace") for part in handle.read().split(b"\0") if part]
    except OSError:
        return []


class CpuMeter:
    """CPU cores used by named processes between construction and `cores()` (None if a pid went away)."""

    def __init__(self, pids: dict[str, int | None]):
        self.pids = dict(pids)
        self.started = time.monotonic()
        self.before = {name: cpu_seconds(pid) for name, pid in self.pids.items()}

    def cores(self) -> dict[str, float | None]:
        elapsed = max(1e-6, time.monotonic() - self.started)
        out = {}
        for name, pid in self.pids.items():
            after = cpu_seconds(pid)
            before = self.before.get(name)
            out[name] = None if after is None or before is None else round((after - before) / elapsed, 3)
        return out


# --------------------------------------------------------------------------------------
# The prober (its own process: `attacks.py --prober PORT PATH RATE OUT`)
# --------------------------------------------------------------------------------------
def prober_main(port: int, path: str, rate: float, out_path: str) -> None:
    async def main():
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        out = open(out_path, "a", buffering=1)
        pending: set[asyncio.Task] = set()

        async def one(n: int) -> None:
            i = n % PROBER_ADDRESSES
            client = f"198.18.{i >> 8}.{i & 255}"
            started_wall, started = time.time(), time.perf_counter()
            status, code, writer = None, None, None
            try:
                reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 15)
                writer.write(
                    f"GET {path} HTTP/1.1\r\nHost: prober\r\nX-Forwarded-For: {client}\r\n"
                    "Connection: close\r\n\r\n".encode()
                )
                data = await asyncio.wait_for(reader.read(), 15)
                if data.startswith(b"HTTP/1."):
                    status = int(data[9:12])
                    if status != 200:
                        code = error_code(data.partition(b"\r\n\r\n")[2])
                else:
                    status = "no_answer"
            except TimeoutError:
                status = "timeout"
            except OSError as exc:
                status = "connection_error"
                code = type(exc).__name__
            finally:
                if writer is not None:
                    writer.close()
            ms = 1000.0 * (time.perf_counter() - started)
            out.write(json.dumps([round(started_wall, 3), status, round(ms, 2), code]) + "\n")

        begun = time.monotonic()
        n = 0
        while not stop.is_set():
            delay = begun + n / rate - time.monotonic()
            if delay > 0:
                try:
                    await asyncio.wait_for(stop.wait(), delay)
                    break
                except TimeoutError:
                    pass
            task = asyncio.ensure_future(one(n))
            pending.add(task)
            task.add_done_callback(pending.discard)
            n += 1
        if pending:
            await asyncio.wait(list(pending), timeout=16)
        out.close()

    asyncio.run(main())


class Prober:
    def __init__(self, children: Children, name: str, port: int, path: str, workdir: str, rate: float = PROBER_RATE):
        self.name = name
        self.path = path
        self.out = os.path.join(workdir, f"prober-{name}.jsonl")
        open(self.out, "w").close()
        cmd = [sys.executable, os.path.abspath(__file__), "--prober", str(port), path, str(rate), self.out]
        self.proc = children.spawn(f"prober-{name}", cmd)

    def records(self, since: float | None = None, until: float | None = None) -> list[list]:
        rows = []
        with open(self.out) as handle:
            for line in handle:
                try:
                    row = json.loads(line)
                except ValueError:
                    continue  # a line being written
                if (since is None or row[0] >= since) and (until is None or row[0] < until):
                    rows.append(row)
        rows.sort(key=lambda r: r[0])
        return rows

    def stats(self, since: float, until: float) -> dict:
        return summarize(self.records(since, until))

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)


def summarize(rows: list[list]) -> dict:
    latencies = [r[2] for r in rows]
    statuses = collections.Counter(str(r[1]) for r in rows)
    codes = collections.Counter(f"{r[1]} {r[3]}" for r in rows if r[1] != 200)
    return {
        "requests": len(rows),
        "p50_ms": pct(latencies, 50),
        "p99_ms": pct(latencies, 99),
        "max_ms": round(max(latencies), 2) if latencies else None,
        "non_200": len(rows) - statuses.get("200", 0),
        "statuses": dict(statuses),
        "non_200_kinds": dict(codes),
    }


# --------------------------------------------------------------------------------------
# A service instance with its embedded database
# --------------------------------------------------------------------------------------
class Service:
    def __init__(
        self,
        children: Children,
        name: str,
        workdir: str,
        sim_url: str,
        nofile: tuple | None = None,
        extra: list[str] | None = None,
    ):
        self.children = children
        self.name = name
        self.data_dir = os.path.join(workdir, name)
        self.port = free_port()
        self.cmd = [
            sys.executable,
            "-m",
            "server",
            "--port",
            str(self.port),
            "--data-dir",
            self.data_dir,
            "--upstream-base-url",
            sim_url,
            "--upstream-rps",
            str(UPSTREAM_RPS),
            "--trusted-proxies",
            TRUSTED_PROXY,
            "--log-level",
            "INFO",
        ] + (extra or [])
        self.nofile = nofile
        self.proc: subprocess.Popen | None = None
        self.db_pids_seen: set[int] = set()
        self._mongo = None

    @property
    def log_path(self) -> str:
        return self.children.log_path(self.name)

    def start(self, timeout: float = 90.0) -> Service:
        env = dict(os.environ)
        env.pop("STATSAPI_PROCESSES", None)
        env.pop("STATSAPI_MONGODB_URI", None)
        if self.nofile is None:
            self.proc = self.children.spawn(self.name, self.cmd, env=env)
        else:
            nofile = self.nofile
            log = open(self.log_path, "ab")
            try:
                self.proc = subprocess.Popen(
                    self.cmd,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    cwd=ROOT,
                    env=env,
                    start_new_session=True,
                    preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, nofile),
                )
            finally:
                log.close()
            self.children.procs.append((self.name, self.proc))
        wait_http(self.port, PREFIX, self.proc, timeout)
        deadline = time.monotonic() + 30
        while self.db_pid is None and time.monotonic() < deadline:
            time.sleep(0.1)
        if self.db_pid is None:
            raise RuntimeError(f"{self.name}: no SecantusDB child process found")
        return self

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def db_pid(self) -> int | None:
        for child in children_of(self.proc.pid):
            if any("secantus" in part for part in cmdline(child)) and proc_state(child) not in (None, "Z"):
                self.db_pids_seen.add(child)
                return child
        return None

    @property
    def db_port(self) -> int:
        args = cmdline(self.db_pid)
        return int(args[args.index("--port") + 1])

    def db(self):
        """pymongo Database `statsapi` of this instance's embedded database."""
        if self._mongo is None:
            from pymongo import MongoClient

            self._mongo = MongoClient(
                f"mongodb://127.0.0.1:{self.db_port}/?directConnection=true&retryWrites=false",
                serverSelectionTimeoutMS=10000,
                socketTimeoutMS=600_000,
            )
        return self._mongo["statsapi"]

    def log_size(self) -> int:
        try:
            return os.path.getsize(self.log_path)
        except OSError:
            return 0

    def log_text(self, start: int = 0) -> str:
        try:
            with open(self.log_path, "rb") as handle:
                handle.seek(start)
                return handle.read().decode(errors="replace")
        except OSError:
            return ""

    def status(self, client: str) -> dict | None:
        answer = http_get(self.port, f"{PREFIX}/status", client, timeout=10)
        return json_data(answer) if answer["status"] == 200 else None

    def stop(self) -> None:
        if self._mongo is not None:
            self._mongo.close()
            self._mongo = None
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        self.reap_database()

    def reap_database(self) -> None:
        """The embedded database runs in its own session: stop it if the service could not."""
        for pid in self.db_pids_seen:
            args = cmdline(pid)
            if args and any("secantus" in part for part in args) and self.data_dir in " ".join(args):
                try:
                    os.kill(pid, signal.SIGCONT)
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass


# --------------------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------------------
class Attacks:
    def __init__(self, args):
        self.args = args
        self.quick = args.quick
        self.workdir = tempfile.mkdtemp(prefix="statsapi-attacks-")
        self.children = Children(self.workdir)
        self.addresses = Addresses()
        self.services: list[Service] = []
        self.probers: list[Prober] = []
        self.results: dict = {"attacks": {}, "problems": [], "notes": []}
        self.after_seconds = 2.0 if self.quick else 10.0
        self.live_count = 3 if self.quick else 5
        from scripts.upstream_sim import existing_accounts

        accounts = existing_accounts(REGION, 1400)
        self.player = accounts[0]
        self.live_accounts = collections.deque(accounts[1:1000])
        self.simultaneous_accounts = accounts[1000:1100]
        self.side_live_accounts = collections.deque(accounts[1100:])
        self.flood_base = 0
        self.history_days = MAX_DAYS
        self.deferred: list = []

    def say(self, text: str) -> None:
        print(text, flush=True)

    def problem(self, attack: str, text: str) -> None:
        self.results["problems"].append(f"{attack}: {text}")

    # --- infrastructure --------------------------------------------------------------
    def start(self) -> None:
        self.results["fd_limit_of_this_script"] = raise_own_fd_limit()
        sim_port = free_port()
        cmd = [sys.executable, "-m", "scripts.upstream_sim", "--port", str(sim_port), "--rps", str(UPSTREAM_RPS)]
        if os.path.exists(EXPECTED_VALUES_FILE):
            cmd += ["--expected-values", EXPECTED_VALUES_FILE]
        sim = self.children.spawn("upstream_sim", cmd)
        self.sim_url = f"http://127.0.0.1:{sim_port}"
        wait_for_port(sim_port, sim)
        self.results["simulator_command"] = " ".join(cmd)
        self.say(f"starting the service (embedded database) in {self.workdir} ...")
        self.main = self.new_service("service")
        self.results["service_command"] = " ".join(self.main.cmd)
        self.seed()
        self.player_path = f"{PREFIX}/player/{self.player}/{REGION}"
        self.prober = self.new_prober("main", self.main)

    def new_service(self, name: str, nofile: tuple | None = None) -> Service:
        service = Service(self.children, name, self.workdir, self.sim_url, nofile=nofile)
        self.services.append(service)
        try:
            service.start()
        except Exception:
            self.say(self.children.tail(name, 30))
            raise
        return service

    def new_prober(self, name: str, service: Service) -> Prober:
        prober = Prober(self.children, name, service.port, f"{PREFIX}/player/{self.player}/{REGION}", self.workdir)
        self.probers.append(prober)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if any(r[1] == 200 for r in prober.records()):
                return prober
            time.sleep(0.2)
        raise RuntimeError(f"prober {name}: no 200 from {prober.path}: {prober.records()[-5:]}")

    def seed(self) -> None:
        """The cached player: one live lookup through the API, then wait until it is served cached and rated."""
        started = time.monotonic()
        path = f"{PREFIX}/player/{self.player}/{REGION}"
        first = http_get(self.main.port, path, self.addresses.next("live"))
        if first["status"] != 200:
            raise RuntimeError(f"seeding live lookup {path}: {first['status']} {first['body'][:300]!r}")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            answer = http_get(self.main.port, path, self.addresses.next("misc"))
            data = json_data(answer) or {}
            if (
                answer["status"] == 200
                and not data.get("live_fetched")
                and (data.get("ratings") or {}).get("available")
            ):
                self.results["seed"] = {
                    "player": self.player,
                    "region": REGION,
                    "seconds": round(time.monotonic() - started, 1),
                    "how": "one live lookup through the API",
                }
                return
            time.sleep(0.5)
        raise RuntimeError(
            f"{path} did not become a cached, rated profile: {answer['status']} {answer['body'][:300]!r}"
        )

    def copy_player(self, target: Service) -> None:
        """The main service's cached profile into another instance's database (its live budget stays untouched)."""
        doc = self.main.db()["players"].find_one({"_id": f"{REGION}:{self.player}"})
        if doc is None:
            raise RuntimeError("the cached player is not in the main database")
        target.db()["players"].replace_one({"_id": doc["_id"]}, doc, upsert=True)
        answer = http_get(target.port, self.player_path_for(), self.addresses.next("misc"))
        data = json_data(answer) or {}
        if answer["status"] != 200 or data.get("live_fetched"):
            raise RuntimeError(f"{target.name}: copied player not served cached: {answer['status']} {data}")

    def player_path_for(self) -> str:
        return f"{PREFIX}/player/{self.player}/{REGION}"

    def close(self) -> None:
        for prober in self.probers:
            prober.stop()
        for service in self.services:
            service.stop()
        self.children.stop_all()
        for service in self.services:
            service.reap_database()
        if not self.args.keep:
            shutil.rmtree(self.workdir, ignore_errors=True)

    # --- common measurement ------------------------------------------------------------
    def settle(self, service: Service, timeout: float) -> float:
        """Wait until the service and its database are idle (< 15 % of a core over 1 s)."""
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            meter = CpuMeter({"service": service.pid, "db": service.db_pid})
            time.sleep(1.0)
            cores = meter.cores()
            if all(v is not None and v < 0.15 for v in cores.values()):
                break
        return round(time.monotonic() - started, 1)

    def live_check(
        self,
        service: Service,
        count: int | None = None,
        accounts: collections.deque | None = None,
        honour_retry_after: bool = False,
    ) -> dict:
        """Live lookups of uncached accounts from fresh addresses: admitted (not 429) and 200."""
        accounts = self.live_accounts if accounts is None else accounts
        rows = []
        waited = 0.0
        for _ in range(count or self.live_count):
            account = accounts.popleft()
            answer = http_get(service.port, f"{PREFIX}/player/{account}/{REGION}", self.addresses.next("live"))
            if honour_retry_after and answer["status"] == 429 and answer["headers"].get("retry-after"):
                pause = min(70.0, float(answer["headers"]["retry-after"]) + 0.5)
                time.sleep(pause)
                waited += pause
                answer = http_get(service.port, f"{PREFIX}/player/{account}/{REGION}", self.addresses.next("live"))
            data = json_data(answer) or {}
            rows.append(
                {
                    "account": account,
                    "status": answer["status"],
                    "ms": answer["ms"],
                    "code": error_code(answer["body"]) if answer["status"] != 200 else None,
                    "live_fetched": data.get("live_fetched"),
                    "retry_after": answer["headers"].get("retry-after"),
                    "error": answer.get("error"),
                }
            )
        statuses = [r["status"] for r in rows]
        result = {
            "attempted": len(rows),
            "admitted": sum(1 for s in statuses if s is not None and s != 429),
            "ok_200": statuses.count(200),
            "statuses": statuses,
            "ms": [r["ms"] for r in rows],
            "not_200": [r for r in rows if r["status"] != 200],
        }
        if waited:
            result["waited_for_budget_s"] = round(waited, 1)
        return result

    def run_attack(self, name: str, service: Service, prober: Prober, body) -> dict:
        """Settle, run `body()` (returns its own figures, may set 'window'), then the common figures."""
        self.say(f"\n== {name} ==")
        result: dict = {"service": service.name}
        result["settle_s"] = self.settle(service, 3 if self.quick else 30)
        t0 = now()
        meter = CpuMeter({"service": service.pid, "db": service.db_pid})
        log_before = service.log_size()
        try:
            extra = body() or {}
        except Exception as exc:
            extra = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-3000:]}
            self.problem(name, f"the attack script failed: {type(exc).__name__}: {exc}")
            self.say(extra["traceback"])
        t1 = now()
        during = meter.cores()
        window = extra.pop("window", (t0, t1))
        result["seconds"] = round(t1 - t0, 1)
        result["prober"] = prober.stats(*window)
        result["cpu_during_cores"] = during
        after = CpuMeter({"service": service.pid, "db": service.db_pid})
        time.sleep(self.after_seconds)
        result["cpu_after_cores"] = after.cores()
        result["cpu_after_window_s"] = self.after_seconds
        result["prober_after"] = prober.stats(t1, now())
        if extra.pop("defer_live_check", False):
            result["live"] = {"deferred": True}
        else:
            result["live"] = self.live_check(service)
        result["log_growth_bytes"] = service.log_size() - log_before
        tracebacks = service.log_text(log_before).count("Traceback")
        if tracebacks:
            result["log_tracebacks"] = tracebacks
            self.problem(name, f"{tracebacks} traceback(s) in {service.name}.log during the attack")
        result.update(extra)
        self.check_common(name, result)
        p = result["prober"]
        self.say(
            f"   prober: {p['requests']} requests, p50 {p['p50_ms']} ms, p99 {p['p99_ms']} ms, max {p['max_ms']} ms, "
            f"non-200 {p['non_200']} {p['non_200_kinds'] or ''}; db cpu after {result['cpu_after_cores']['db']} "
            f"cores; live {result['live'].get('admitted', '-')}/{result['live'].get('attempted', '-')} admitted, "
            f"{result['live'].get('ok_200', '-')} x 200"
        )
        return result

    def check_common(self, name: str, result: dict) -> None:
        p = result["prober"]
        if p["requests"] == 0:
            self.problem(name, "the prober recorded nothing during the attack")
        allowed = {"503 database_unavailable"} if name in DATABASE_ATTACKS else set()
        unexpected = {k: v for k, v in p["non_200_kinds"].items() if k not in allowed}
        if unexpected:
            self.problem(name, f"prober got unexpected answers during the attack: {unexpected}")
        after = {k: v for k, v in result["prober_after"]["non_200_kinds"].items()}
        if after and name not in DATABASE_ATTACKS:
            self.problem(name, f"prober got non-200 answers after the attack: {after}")
        live = result["live"]
        if not live.get("deferred") and (live["admitted"] < live["attempted"] or live["ok_200"] < live["admitted"]):
            self.problem(name, f"live lookups after the attack: {live['statuses']} {live['not_200']}")

    # --- attacks ---------------------------------------------------------------------
    def attack_small(self) -> dict:
        port = self.main.port
        checks = {}
        failures = collections.Counter()
        rounds = 0

        def record(label: str, answer: dict, expect) -> None:
            status = answer["status"]
            ok = expect(answer)
            if label not in checks or not ok:
                checks[label] = {
                    "status": status,
                    "content_type": answer["headers"].get("content-type"),
                    "cache_control": answer["headers"].get("cache-control"),
                    "code": error_code(answer["body"]) if status and status != 204 else None,
                    "error": answer.get("error"),
                    "ok": bool(ok),
                }
            if not ok:
                failures[label] += 1

        def json_4xx(answer: dict) -> bool:
            return (
                answer["status"] is not None
                and 400 <= answer["status"] < 500
                and (answer["headers"].get("content-type") or "").startswith("application/json")
                and error_code(answer["body"]) is not None
            )

        # Repeated for a few seconds, so the prober's figures cover them.
        seconds = 3.0 if self.quick else 10.0
        started = time.monotonic()
        while rounds == 0 or time.monotonic() - started < seconds:
            rounds += 1
            self.small_round(port, record, json_4xx)
        for label, count in failures.items():
            self.problem("small", f"{label}: failed {count} of {rounds} times: {checks[label]}")
        self.say(
            "   "
            + "; ".join(
                f"{k}: {v['status']} {v['code'] or ''} {'ok' if v['ok'] else 'FAILED'}" for k, v in checks.items()
            )
            + f" ({rounds} rounds)"
        )
        return {"checks": checks, "rounds": rounds, "failures": dict(failures)}

    def small_round(self, port: int, record, json_4xx) -> None:
        record(
            "header over 64 KB",
            raw_exchange(
                port, f"GET {PREFIX}/status HTTP/1.1\r\nHost: x\r\nX-Long: ".encode() + b"a" * 70_000 + b"\r\n\r\n"
            ),
            json_4xx,
        )
        record(
            "10,000 headers",
            raw_exchange(
                port,
                f"GET {PREFIX}/status HTTP/1.1\r\nHost: x\r\n".encode()
                + b"".join(b"X-H%d: v\r\n" % i for i in range(10_000))
                + b"\r\n",
            ),
            json_4xx,
        )
        query = "&".join(f"p{i}={i}" for i in range(10_000))
        record(
            "10,000 query params",
            raw_exchange(port, f"GET {PREFIX}/online/history?{query} HTTP/1.1\r\nHost: x\r\n\r\n".encode()),
            json_4xx,
        )
        record(
            "static Range past the end",
            http_get(port, "/static/style.css", self.addresses.next("misc"), headers={"Range": "bytes=100000000-"}),
            lambda a: (
                a["status"] == 416
                and json_4xx(a)
                and any(t in (a["headers"].get("cache-control") or "") for t in ("no-store", "max-age=0"))
            ),
        )
        record(
            "OPTIONS on a site route",
            http_get(port, "/", self.addresses.next("misc"), method="OPTIONS"),
            lambda a: a["status"] is not None and a["status"] < 300 and bool(a["headers"].get("cache-control")),
        )

    def attack_flood(self) -> dict:
        target = 8_000 if self.quick else 40_000
        connections = 32
        if os.path.exists("/usr/bin/wrk") or shutil.which("wrk"):
            generator = WrkGenerator(shutil.which("wrk") or "/usr/bin/wrk", connections, 1, self.workdir, None)
        else:
            generator = PythonGenerator(connections)
        polls: list[dict] = []
        stop = threading.Event()
        flood_end: list[float] = []

        def poll_status() -> None:
            while not stop.is_set():
                started = now()
                answer = http_get(self.main.port, f"{PREFIX}/status", self.addresses.next("misc"), timeout=10)
                data = json_data(answer) or {}
                limiter = data.get("rate_limiter") or {}
                polls.append(
                    {
                        "t": round(started, 2),
                        "status": answer["status"],
                        "ms": answer["ms"],
                        "health": data.get("health"),
                        "degraded": limiter.get("degraded"),
                        "pending_keys": limiter.get("pending_keys"),
                        "flush_lag_s": limiter.get("flush_lag_seconds"),
                        "flush_failures": limiter.get("consecutive_flush_failures"),
                    }
                )
                if (
                    flood_end
                    and (limiter.get("pending_keys") or 0) <= CAUGHT_UP_KEYS
                    and not limiter.get("degraded")
                    and now() - flood_end[0] > self.after_seconds + 2
                ):
                    return
                if flood_end and now() - flood_end[0] > 90:
                    return
                stop.wait(1.0)

        poller = threading.Thread(target=poll_status, daemon=True)
        poller.start()
        runs = []
        done = 0
        seconds = 4 if self.quick else 10
        t0 = now()
        while done < target and len(runs) < 12:
            load = Load(self.main.port, [f"{PREFIX}/online"], pool=1_000_000, base=self.flood_base)
            result = generator.run(load, seconds)
            runs.append(
                {
                    k: result[k]
                    for k in ("requests", "seconds", "p50_ms", "p99_ms", "max_ms", "statuses", "socket_errors")
                }
            )
            done += result["requests"]
            self.flood_base += result["requests"] + 10 * connections
            rate = result["requests"] / max(0.1, result["seconds"])
            seconds = max(1, math.ceil((target - done) / max(rate, 1.0) * 1.1))
        t1 = now()
        flood_end.append(t1)
        statuses = collections.Counter()
        for run in runs:
            statuses.update(run["statuses"])
        during = [p for p in polls if p["t"] < t1]
        figures = {
            "generator": generator.describe(),
            "requests": done,
            "fresh_addresses": done,
            "flood_seconds": round(t1 - t0, 1),
            "flood_rps": round(done / max(0.1, t1 - t0), 1),
            "statuses": dict(statuses),
            "flood_p99_ms": max((r["p99_ms"] for r in runs), default=None),
            "runs": runs,
            "status_during": {
                "polls": len(during),
                "non_200": sum(1 for p in during if p["status"] != 200),
                "max_ms": max((p["ms"] for p in during), default=None),
                "degraded_polls": sum(1 for p in during if p["degraded"]),
                "max_pending_keys": max((p["pending_keys"] or 0 for p in during), default=None),
                "max_flush_lag_s": max((p["flush_lag_s"] or 0 for p in during), default=None),
            },
            "window": (t0, t1),
        }
        self._flood_poller = (poller, stop, polls, t1, figures)
        if done < target:
            self.problem("flood", f"only {done} of {target} requests sent")
        return figures

    def finish_flood(self, result: dict) -> None:
        poller, stop, polls, t1, figures = self._flood_poller
        poller.join(100)
        stop.set()
        after = [p for p in polls if p["t"] >= t1]
        caught = next((p for p in after if (p["pending_keys"] or 0) <= CAUGHT_UP_KEYS), None)
        healthy = next(
            (
                p
                for p in after
                if p["status"] == 200 and not p["degraded"] and (p["pending_keys"] or 0) <= CAUGHT_UP_KEYS
            ),
            None,
        )
        degraded = [p for p in after if p["degraded"]]
        result["status_after"] = {
            "polls": len(after),
            "non_200": sum(1 for p in after if p["status"] != 200),
            "degraded_polls": len(degraded),
            "degraded_from_to_s": [round(degraded[0]["t"] - t1, 1), round(degraded[-1]["t"] - t1, 1)]
            if degraded
            else None,
            "max_pending_keys": max((p["pending_keys"] or 0 for p in after), default=None),
            "max_flush_lag_s": max((p["flush_lag_s"] or 0 for p in after), default=None),
            "pending_keys_caught_up_after_s": round(caught["t"] - t1, 1) if caught else None,
            "not_degraded_again_after_s": round(healthy["t"] - t1, 1) if healthy else None,
            "last": after[-1] if after else None,
        }
        if caught is None:
            self.problem("flood", f"rate-limiter pending keys still above {CAUGHT_UP_KEYS} 90 s after the flood")

    def attack_simultaneous(self) -> dict:
        service = self.side
        accounts = self.simultaneous_accounts
        clients = [self.addresses.next("burst") for _ in accounts]
        barrier = threading.Barrier(len(accounts))

        def one(i: int) -> dict:
            barrier.wait()
            answer = http_get(service.port, f"{PREFIX}/player/{accounts[i]}/{REGION}", clients[i], timeout=60)
            return {
                "status": answer["status"],
                "ms": answer["ms"],
                "started": answer.get("started"),
                "code": error_code(answer["body"]) if answer["status"] != 200 else None,
                "retry_after": answer["headers"].get("retry-after"),
                "error": answer.get("error"),
            }

        t0 = now()
        with concurrent.futures.ThreadPoolExecutor(len(accounts)) as pool:
            rows = list(pool.map(one, range(len(accounts))))
        t1 = now()
        admitted = [r for r in rows if r["status"] not in (429, None)]
        limited = [r for r in rows if r["status"] == 429]
        retry_after = sorted({int(r["retry_after"]) for r in limited if r["retry_after"]})
        figures = {
            "lookups": len(rows),
            "admitted": len(admitted),
            "ok_200": sum(1 for r in rows if r["status"] == 200),
            "rejected_429": len(limited),
            "rejection_codes": dict(collections.Counter(r["code"] for r in limited)),
            "other": dict(
                collections.Counter(
                    f"{r['status']} {r['code'] or r['error']}" for r in rows if r["status"] not in (200, 429)
                )
            ),
            "retry_after_s": retry_after,
            "admitted_p50_ms": pct([r["ms"] for r in admitted], 50),
            "admitted_max_ms": max((r["ms"] for r in admitted), default=None),
            "window": (t0, t1),
            "defer_live_check": True,
        }
        if len(admitted) != LIVE_GLOBAL:
            self.problem(
                "simultaneous",
                f"{len(admitted)} of {len(rows)} simultaneous lookups admitted (expected exactly {LIVE_GLOBAL})",
            )
        if retry_after and max(retry_after) > 60:
            self.problem("simultaneous", f"Retry-After up to {max(retry_after)} s (promised <= 60)")
        wait_until = time.monotonic() + (max(retry_after) if retry_after else 0) + 1
        self.say(
            f"   {len(admitted)} admitted, {figures['ok_200']} x 200, 429 x {len(limited)}, Retry-After {retry_after}"
        )
        self.deferred.append(("simultaneous", wait_until))
        return figures

    def seed_online_year(self) -> dict:
        """A compact year of online samples for wot, inserted directly; the history made cold."""
        db = self.main.db()
        coll = db["online_samples"]
        fine_days = 1 if self.quick else 7
        coarse_step = 360 if self.quick else 60  # minutes between samples on older days
        today = dt.datetime.combine(dt.datetime.now(dt.UTC).date(), dt.time(), dt.UTC)
        docs = []
        for d in range(1, MAX_DAYS + 1):
            day = today - d * DAY
            step = 1 if d <= fine_days else coarse_step
            for minute in range(0, 1440, step):
                at = day + dt.timedelta(minutes=minute)
                for region in REGIONS:
                    for server, players in (("A", 1000 + minute), ("B", 500 + d % 7)):
                        docs.append(
                            {
                                "minute": at,
                                "meta": {"game": "wot", "region": region, "server": server},
                                "players": players,
                            }
                        )
        started = time.perf_counter()
        for start in range(0, len(docs), 5000):
            coll.insert_many(docs[start : start + 5000], ordered=False)
        seconds = time.perf_counter() - started
        first = today - MAX_DAYS * DAY
        # What the sampler's record_minute keeps for every stored minute ($min first_minute): set here
        # because the samples were inserted directly.
        for region in REGIONS:
            db["online_status"].update_one(
                {"_id": f"wot:{region}"},
                {"$min": {"first_minute": first}, "$setOnInsert": {"game": "wot", "region": region}},
                upsert=True,
            )
        # The online_daily job materialised "known gaps" at start (no samples existed then): drop them
        # so every finished day is cold again.
        dropped = db["online_daily"].delete_many({"_id": {"$regex": "^wot:"}}).deleted_count
        return {
            "samples": len(docs),
            "insert_seconds": round(seconds, 1),
            "insert_rate_per_s": round(len(docs) / max(seconds, 1e-3)),
            "shape": f"{MAX_DAYS} finished days x {len(REGIONS)} regions x 2 servers; every minute on the newest {fine_days} day(s), "
            f"every {coarse_step} min before",
            "online_daily_docs_dropped": dropped,
            "collection_options": {k: str(v) for k, v in coll.options().items()},
        }

    def attack_heavy_reads(self, seeding: dict) -> dict:
        port = self.main.port
        bursts = []
        sizes = (8, 32) if self.quick else (8, 32, 64)
        t0 = now()
        for size in sizes:
            days = [self.history_days - i for i in range(size)]
            self.history_days -= size
            clients = [self.addresses.next("burst") for _ in range(size)]
            barrier = threading.Barrier(size)

            def one(i: int, days=days, clients=clients, barrier=barrier) -> dict:
                barrier.wait()
                answer = http_get(port, f"{PREFIX}/online/history?region=eu&days={days[i]}", clients[i], timeout=60)
                data = json_data(answer) if answer["status"] == 200 else None
                return {
                    "days": days[i],
                    "status": answer["status"],
                    "ms": answer["ms"],
                    "code": error_code(answer["body"]) if answer["status"] != 200 else None,
                    "retry_after": answer["headers"].get("retry-after"),
                    "error": answer.get("error"),
                    "days_with_samples": sum(1 for row in data["series"] if row.get("samples")) if data else None,
                }

            with concurrent.futures.ThreadPoolExecutor(size) as pool:
                rows = list(pool.map(one, range(size)))
            statuses = collections.Counter(str(r["status"]) for r in rows)
            filled = [r["days_with_samples"] for r in rows if r["days_with_samples"] is not None]
            bursts.append(
                {
                    "concurrent": size,
                    "days": f"{days[-1]}..{days[0]}",
                    "statuses": dict(statuses),
                    "ok_200": statuses.get("200", 0),
                    "503": statuses.get("503", 0),
                    "codes": dict(collections.Counter(r["code"] for r in rows if r["code"])),
                    "p50_ms": pct([r["ms"] for r in rows], 50),
                    "p99_ms": pct([r["ms"] for r in rows], 99),
                    "max_ms": max(r["ms"] for r in rows),
                    "retry_after_s": sorted({r["retry_after"] for r in rows if r["retry_after"]}),
                    "days_with_samples_in_200s": [min(filled), max(filled)] if filled else None,
                    "errors": [r["error"] for r in rows if r["error"]][:3],
                }
            )
            b = bursts[-1]
            self.say(
                f"   {size} concurrent: {b['statuses']} p50 {b['p50_ms']} ms max {b['max_ms']} ms, "
                f"days with samples {b['days_with_samples_in_200s']}"
            )
            other = {k: v for k, v in statuses.items() if k not in ("200", "503")}
            if other:
                self.problem("heavy_reads", f"{size} concurrent: unexpected statuses {other}")
            time.sleep(2)
        # The same request again once the burst is over: served from what was computed / materialised.
        again = http_get(
            port, f"{PREFIX}/online/history?region=eu&days={MAX_DAYS}", self.addresses.next("burst"), timeout=60
        )
        # One cold request at a time for all regions (the endpoint's default region), twice: does a lone
        # cold request succeed, and does the second one profit from the first?
        alone = []
        for _ in range(2):
            time.sleep(2)
            answer = http_get(
                port, f"{PREFIX}/online/history?days={self.history_days}", self.addresses.next("burst"), timeout=60
            )
            alone.append(
                {
                    "days": self.history_days,
                    "status": answer["status"],
                    "ms": answer["ms"],
                    "code": error_code(answer["body"]) if answer["status"] != 200 else None,
                }
            )
        self.history_days -= 1
        return {
            "seeding": seeding,
            "bursts": bursts,
            "window": (t0, now()),
            f"repeat_eu_days_{MAX_DAYS}": {"status": again["status"], "ms": again["ms"]},
            "lone_cold_all_regions": alone,
        }

    def attack_connections(self) -> dict:
        service = self.conn_service
        port = service.port
        seconds = 12 if self.quick else 30
        limits = fd_limits(service.pid)
        status_before = service.status(self.addresses.next("misc")) or {}
        idle: list[socket.socket] = []
        slow: list[socket.socket] = []
        counts = collections.Counter()
        stop = threading.Event()
        request_line = f"GET {PREFIX}/status HTTP/1.1\r\nHost: x\r\nX-Slow: ".encode() + b"a" * 200

        def slowloris() -> None:
            n = 0
            while not stop.wait(1.0):
                for i, sock in enumerate(slow):
                    if closed_by_server(sock):
                        counts["slowloris_closed_by_server"] += 1
                        sock.close()
                        slow[i] = connect_nowait(port, "127.0.2.1")
                        continue
                    try:
                        sock.send(request_line[n % len(request_line) :][:1])
                    except OSError:
                        pass
                n += 1

        t0 = now()
        meter = CpuMeter({"service": service.pid, "db": service.db_pid})
        log_before = service.log_size()
        try:
            for i in range(2000):
                idle.append(connect_nowait(port, f"127.0.1.{1 + i % 40}"))
            for _ in range(50):
                slow.append(connect_nowait(port, "127.0.2.1"))
            threading.Thread(target=slowloris, daemon=True).start()
            deadline = time.monotonic() + seconds
            peak_fds = 0
            while time.monotonic() < deadline:
                time.sleep(1.0)
                peak_fds = max(peak_fds, open_fds(service.pid) or 0)
                for i, sock in enumerate(idle):
                    if closed_by_server(sock):
                        counts["idle_closed_by_server"] += 1
                        sock.close()
                        idle[i] = connect_nowait(port, f"127.0.1.{1 + i % 40}")
            cpu = meter.cores()
            t1 = now()
            status_during = service.status(self.addresses.next("misc")) or {}
        finally:
            stop.set()
            for sock in idle + slow:
                sock.close()
        log_text = service.log_text(log_before)
        return {
            "service_fd_limit": limits,
            "max_connections": (status_before.get("connections") or {}).get("max"),
            "attack_seconds": seconds,
            "idle_connections": 2000,
            "slowloris_connections": 50,
            "idle_reopened": counts["idle_closed_by_server"],
            "slowloris_closed_by_server": counts["slowloris_closed_by_server"],
            "service_cpu_during_cores": cpu["service"],
            "db_cpu_during_cores": cpu["db"],
            "service_open_fds_peak": peak_fds,
            "log_growth_bytes": service.log_size() - log_before,
            "log_lines": log_text.count("\n"),
            "connections_status_at_end": status_during.get("connections"),
            "window": (t0, t1),
        }

    def attack_bodies(self) -> dict:
        port, pid = self.main.port, self.main.pid
        size = 100 << 20
        results: list = []
        rss_samples: list[float] = []
        stop = threading.Event()

        def sample() -> None:
            while not stop.wait(0.05):
                value = rss_mb(pid)
                if value is not None:
                    rss_samples.append(value)

        def send(index: int) -> None:
            head = (
                f"GET /no/such/path/{index} HTTP/1.1\r\nHost: x\r\nContent-Length: {size}\r\n"
                "Content-Type: application/octet-stream\r\n\r\n"
            ).encode()
            chunk = b"x" * (1 << 20)
            sent, data = 0, b""
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
                    try:
                        sock.sendall(head)
                        while sent < size:
                            sent += sock.send(chunk[: size - sent])
                    except OSError:
                        pass  # refused: the server stopped reading
                    try:
                        while part := sock.recv(65536):
                            data += part
                    except OSError:
                        pass
            except OSError as exc:
                data = f"connect failed: {exc}".encode()
            results.append((sent, data))

        time.sleep(0.5)
        before = rss_mb(pid)
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        threads = [threading.Thread(target=send, args=(i,)) for i in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        time.sleep(1.0)
        stop.set()
        after = rss_mb(pid)
        statuses = collections.Counter()
        for _, data in results:
            head, _, body = data.partition(b"\r\n\r\n")
            status = head[9:12].decode(errors="replace") if head.startswith(b"HTTP/1.") else "no answer"
            statuses[f"{status} {error_code(body)}"] += 1
        growth = round((after or 0) - (before or 0), 1)
        if growth > 50:
            self.problem("bodies", f"service RSS grew {growth} MB")
        if set(statuses) != {"413 payload_too_large"}:
            self.problem("bodies", f"answers: {dict(statuses)}")
        return {
            "bodies": len(results),
            "body_mb": size >> 20,
            "answers": dict(statuses),
            "bytes_sent_before_refusal_mb": sorted(round(sent / (1 << 20), 1) for sent, _ in results),
            "rss_before_mb": before,
            "rss_peak_mb": max(rss_samples) if rss_samples else None,
            "rss_after_mb": after,
            "rss_growth_mb": growth,
        }

    def wait_recovered(
        self, since: float, timeout: float, steady: int = 20, expect_failure: bool = True
    ) -> float | None:
        """The start of the prober's first run of `steady` consecutive 200s after its last non-200 since
        `since` (with `expect_failure`, only once a non-200 was seen, or 20 s went by without one)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            rows = self.prober.records(since)
            failures = [r for r in rows if r[1] != 200]
            if failures or not expect_failure:
                tail = [r for r in rows if not failures or r[0] > failures[-1][0]]
                if len(tail) >= steady:
                    return tail[0][0]
            elif rows and now() - since > 20:
                return since  # never failed
            time.sleep(0.25)
        return None

    def attack_kill_db(self) -> dict:
        service = self.main
        before = json_data(http_get(service.port, self.player_path, self.addresses.next("misc"))) or {}
        old_pid = service.db_pid
        status_polls = []
        stop = threading.Event()

        def poll() -> None:
            while not stop.wait(0.5):
                data = service.status(self.addresses.next("misc")) or {}
                status_polls.append(
                    {
                        "t": now(),
                        "health": data.get("health"),
                        "reachable": (data.get("database") or {}).get("reachable"),
                        "embedded": data.get("embedded_database"),
                    }
                )

        t_kill = now()
        os.kill(old_pid, signal.SIGKILL)
        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
        recovered_at = self.wait_recovered(t_kill, 60 if self.quick else 120)
        stop.set()
        poller.join(15)
        time.sleep(1.0)
        rows = self.prober.records(t_kill)
        failures = [r for r in rows if r[1] != 200]
        new_pid = service.db_pid
        final = service.status(self.addresses.next("misc")) or {}
        after = json_data(http_get(service.port, self.player_path, self.addresses.next("misc"))) or {}
        same = {k: before.get(k) == after.get(k) for k in ("statistics", "ratings", "cached_at", "nickname")}
        old_state = proc_state(old_pid)
        figures = {
            "killed_pid": old_pid,
            "new_pid": new_pid,
            "old_pid_state": old_state or "gone (reaped)",
            "service_pid_unchanged_and_running": service.proc.poll() is None,
            "first_non_200_after_s": round(failures[0][0] - t_kill, 2) if failures else None,
            "last_non_200_after_s": round(failures[-1][0] - t_kill, 2) if failures else None,
            "non_200_seconds": round(failures[-1][0] - failures[0][0], 2) if failures else 0.0,
            "non_200_kinds": dict(collections.Counter(f"{r[1]} {r[3]}" for r in failures)),
            "max_ms_while_down": max((r[2] for r in failures), default=None),
            "back_to_200_after_s": round(recovered_at - t_kill, 2) if recovered_at else None,
            "embedded_database_at_end": final.get("embedded_database"),
            "status_health_seen": sorted({str(p["health"]) for p in status_polls}),
            "status_states_seen": sorted({str((p["embedded"] or {}).get("state")) for p in status_polls}),
            "player_data_unchanged": same,
            "window": (t_kill, recovered_at or now()),
        }
        if recovered_at is None:
            self.problem("kill_db", "data endpoints did not return to 200 without a restart")
        if not figures["service_pid_unchanged_and_running"]:
            self.problem("kill_db", "the service process exited")
        if old_state == "Z":
            self.problem("kill_db", "the killed database is a zombie")
        if not all(same.values()):
            self.problem("kill_db", f"player data changed across the restart: {same}")
        if (final.get("embedded_database") or {}).get("restarts", 0) < 1:
            self.problem("kill_db", f"/status embedded_database: {final.get('embedded_database')}")
        self.say(
            f"   503 for {figures['non_200_seconds']} s ({figures['non_200_kinds']}), 200 again after "
            f"{figures['back_to_200_after_s']} s; restarts {(final.get('embedded_database') or {}).get('restarts')}"
        )
        return figures

    def attack_sigstop_db(self) -> dict:
        service = self.main
        pid = service.db_pid
        stop_seconds = 5.0 if self.quick else 10.0
        paths = [
            self.player_path,
            f"{self.player_path}/history",
            f"{PREFIX}/online",
            f"{PREFIX}/online/history?region=na&days=7",
            f"{PREFIX}/status",
        ]
        bursts: list[dict] = []

        def burst(label: str) -> None:
            lookup = f"{PREFIX}/player/{self.live_accounts.popleft()}/{REGION}"
            with concurrent.futures.ThreadPoolExecutor(len(paths) + 1) as pool:
                answers = list(
                    pool.map(
                        lambda p: (p, http_get(service.port, p, self.addresses.next("misc"), 30)), paths + [lookup]
                    )
                )
            for path, answer in answers:
                bursts.append(
                    {
                        "at": label,
                        "path": path if path != lookup else "uncached player (live lookup)",
                        "status": answer["status"],
                        "ms": answer["ms"],
                        "code": error_code(answer["body"]) if answer["status"] != 200 else None,
                    }
                )

        t_stop = now()
        os.kill(pid, signal.SIGSTOP)
        try:
            time.sleep(1.0)
            burst("stop+1s")
            time.sleep(max(0.0, t_stop + stop_seconds / 2 - now()))
            burst(f"stop+{stop_seconds / 2:.0f}s")
            time.sleep(max(0.0, t_stop + stop_seconds - now()))
        finally:
            os.kill(pid, signal.SIGCONT)
        t_cont = now()
        recovered_at = self.wait_recovered(t_cont, 60, expect_failure=False)
        stopped = self.prober.records(t_stop, t_cont)
        figures = {
            "stopped_seconds": round(t_cont - t_stop, 1),
            "prober_while_stopped": summarize(stopped),
            "max_seconds_to_answer_while_stopped": round(
                max([r[2] for r in stopped] + [b["ms"] for b in bursts]) / 1000.0, 2
            ),
            "other_endpoints": bursts,
            "first_200_after_sigcont_s": None,
            "steady_200_after_sigcont_s": None,
            "window": (t_stop, t_cont),
        }
        after = [r for r in self.prober.records(t_cont) if r[1] == 200]
        if after:
            figures["first_200_after_sigcont_s"] = round(after[0][0] - t_cont, 2)
        if recovered_at:
            figures["steady_200_after_sigcont_s"] = round(max(0.0, recovered_at - t_cont), 2)
        else:
            self.problem("sigstop_db", "no steady 200s within 60 s of SIGCONT")
        if figures["max_seconds_to_answer_while_stopped"] > 2.5:
            self.problem(
                "sigstop_db",
                f"a request took {figures['max_seconds_to_answer_while_stopped']} s to answer "
                "while the database was stopped (promised <= 2.5 s)",
            )
        self.say(
            f"   stopped {figures['stopped_seconds']} s: slowest answer {figures['max_seconds_to_answer_while_stopped']} s, "
            f"prober {figures['prober_while_stopped']['statuses']}; 200 again {figures['first_200_after_sigcont_s']} s "
            "after SIGCONT"
        )
        return figures

    def attack_retention(self) -> dict:
        service = self.main
        db = service.db()
        snapshots = db["snapshots"]
        targets = [20_000] if self.quick else [200_000, 1_000_000]
        max_insert_seconds = 120 if self.quick else 600
        chunk = 10_000
        today = dt.datetime.combine(dt.datetime.now(dt.UTC).date(), dt.time(), dt.UTC)
        expired_before = dt.datetime.now(dt.UTC) - 415 * DAY  # ours are 420+ days old
        inserted = 0
        insert_seconds = 0.0
        per_100k: list[dict] = []
        rounds = []
        stopped_early = None
        t_all = now()
        for target in targets:
            if stopped_early:
                break
            t_insert = now()
            round_start = inserted
            block_started, block_docs = time.perf_counter(), 0
            while inserted < target:
                docs = []
                for i in range(inserted, min(target, inserted + chunk)):
                    offset = i % 400 + (420 if i % 100 == 0 else 0)  # 1 % older than 410 days
                    day = today - offset * DAY
                    docs.append(
                        {
                            "region": REGION,
                            "account_id": 700_000_000 + i // 400,
                            "date": day.date().isoformat(),
                            "day": day,
                            "battles": 1000 + i,
                            "wins": 500 + i // 2,
                            "damage_dealt": 100_000 + i,
                            "frags": i % 50,
                            "spotted": i % 40,
                            "xp": 5000 + i,
                        }
                    )
                started = time.perf_counter()
                snapshots.insert_many(docs, ordered=False)
                insert_seconds += time.perf_counter() - started
                inserted += len(docs)
                block_docs += len(docs)
                if inserted % 100_000 == 0 or inserted == target:
                    took = time.perf_counter() - block_started
                    per_100k.append(
                        {
                            "up_to": inserted,
                            "docs": block_docs,
                            "seconds": round(took, 1),
                            "docs_per_s": round(block_docs / max(took, 1e-3)),
                        }
                    )
                    self.say(
                        f"   inserted {inserted:,} snapshots ({per_100k[-1]['docs_per_s']} docs/s over the "
                        f"last {block_docs:,})"
                    )
                    block_started, block_docs = time.perf_counter(), 0
                    rate = per_100k[-1]["docs_per_s"]
                    if rate < 300 or insert_seconds > max_insert_seconds:
                        stopped_early = (
                            f"stopped at {inserted:,}: {rate} docs/s, {insert_seconds:.0f} s of insertion "
                            f"(limit {max_insert_seconds} s)"
                        )
                        break
            old_samples = [
                {
                    "minute": today - 420 * DAY + dt.timedelta(minutes=m),
                    "players": 5,
                    "meta": {"game": "wot", "region": region, "server": "Z"},
                }
                for m in range(0, 1440, 30)
                for region in REGIONS
            ]
            db["online_samples"].insert_many(old_samples, ordered=False)
            t_inserted = now()
            meter = CpuMeter({"service": service.pid, "db": service.db_pid})
            expired = snapshots.count_documents({"day": {"$lt": expired_before}})  # not deleted yet
            expired_inserted = sum(1 for i in range(round_start, inserted) if i % 100 == 0)
            self.say(
                f"   {inserted:,} snapshots stored, {expired_inserted:,} expired inserted this round ({expired:,} "
                f"not deleted yet) + {len(old_samples)} expired online "
                "samples; waiting for the retention job ..."
            )
            runs = {}
            deadline = time.monotonic() + (150 if self.quick else 200)
            left = expired
            samples_left = None
            while time.monotonic() < deadline:
                time.sleep(2.0)
                job = db["job_runs"].find_one({"_id": "retention"}) or {}
                if job.get("last_run", 0) > t_insert:
                    runs[job["last_run"]] = {
                        "message": job.get("message"),
                        "duration_s": job.get("duration_s"),
                        "ok": job.get("ok"),
                    }
                left = snapshots.count_documents({"day": {"$lt": expired_before}})
                samples_left = db["online_samples"].count_documents({"minute": {"$lt": expired_before}})
                if left == 0 and samples_left == 0:
                    break
            t_deleted = now()
            cpu_db = meter.cores()
            rounds.append(
                {
                    "snapshots": inserted,
                    "expired_inserted": expired_inserted,
                    "expired_left_when_inserted": expired,
                    "expired_online_samples": len(old_samples),
                    "insertion_window": (t_insert, t_inserted),
                    "deletion_window": (t_inserted, t_deleted),
                    "prober_during_insertion": self.prober.stats(t_insert, t_inserted),
                    "prober_during_deletion": self.prober.stats(t_inserted, t_deleted),
                    "deleted_after_s": round(t_deleted - t_inserted, 1) if left == 0 and samples_left == 0 else None,
                    "left": {"snapshots": left, "online_samples": samples_left},
                    "retention_runs": list(runs.values()),
                    "cpu_while_waiting_for_deletion_cores": cpu_db,
                }
            )
            r = rounds[-1]
            self.say(
                f"   deleted after {r['deleted_after_s']} s; runs {r['retention_runs']}; prober p99 during deletion "
                f"{r['prober_during_deletion']['p99_ms']} ms"
            )
            if r["deleted_after_s"] is None:
                self.problem(
                    "retention",
                    f"at {inserted:,} snapshots: {left} expired snapshots and {samples_left} expired samples left",
                )
        for r in rounds:
            r["insertion_window"] = [round(x, 1) for x in r["insertion_window"]]
            r["deletion_window"] = [round(x, 1) for x in r["deletion_window"]]
        return {
            "rounds": rounds,
            "insert_rate_per_block": per_100k,
            "insert_seconds": round(insert_seconds, 1),
            "stopped_early": stopped_early,
            "window": (t_all, now()),
        }

    # --- orchestration -----------------------------------------------------------------
    def run(self) -> dict:
        args = self.args
        self.results.update(
            {
                "generated": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
                "command": " ".join(
                    [
                        os.path.relpath(sys.executable, ROOT) if sys.executable.startswith(ROOT) else sys.executable,
                        "scripts/attacks.py",
                    ]
                    + sys.argv[1:]
                ),
                "machine": {
                    "cpus": os.cpu_count(),
                    "python": platform.python_version(),
                    "platform": platform.platform(),
                    "load_average_at_start": os.getloadavg(),
                },
                "quick": self.quick,
                "prober": {
                    "rate_per_s": PROBER_RATE,
                    "addresses": PROBER_ADDRESSES,
                    "path": None,
                    "connection": "new connection per request",
                },
            }
        )
        self.start()
        self.results["prober"]["path"] = self.player_path
        attacks = self.results["attacks"]
        for name in [a for a in ALL_ATTACKS if a in args.only]:
            if self.main.proc.poll() is not None:
                attacks[name] = {"skipped": "the main service is no longer running"}
                self.problem(name, "skipped: the main service exited")
                continue
            try:
                attacks[name] = self.run_one(name)
            except Exception as exc:  # an attack that could not even be set up: report, go on
                attacks[name] = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-3000:]}
                self.problem(name, f"could not run: {type(exc).__name__}: {exc}")
                self.say(attacks[name]["traceback"])
        self.run_deferred()
        self.results["main_service_at_end"] = {
            "running": self.main.proc.poll() is None,
            "rss_mb": rss_mb(self.main.pid),
            "embedded_database": (self.main.status(self.addresses.next("misc")) or {}).get("embedded_database"),
        }
        self.results["prober_whole_run"] = summarize(self.prober.records())
        self.results["machine"]["load_average_at_end"] = os.getloadavg()
        return self.results

    def run_one(self, name: str) -> dict:
        if name == "small":
            return self.run_attack(name, self.main, self.prober, self.attack_small)
        if name == "flood":
            result = self.run_attack(name, self.main, self.prober, self.attack_flood)
            if hasattr(self, "_flood_poller"):
                self.finish_flood(result)
            return result
        if name == "simultaneous":
            self.say("\n(starting a second service instance: fresh live-budget windows)")
            self.side = self.new_service("service_simultaneous")
            self.copy_player(self.side)
            prober = self.new_prober("simultaneous", self.side)
            result = self.run_attack(name, self.side, prober, self.attack_simultaneous)
            prober.stop()
            self._side_result = result
            return result
        if name == "heavy_reads":
            self.say("\n(seeding a compact year of online samples)")
            seeding = self.seed_online_year()
            self.say(f"   {seeding['samples']:,} samples in {seeding['insert_seconds']} s")
            return self.run_attack(name, self.main, self.prober, lambda: self.attack_heavy_reads(seeding))
        if name == "connections":
            self.say("\n(starting a third service instance under RLIMIT_NOFILE 1024/1024)")
            self.conn_service = self.new_service("service_connections", nofile=(1024, 1024))
            self.copy_player(self.conn_service)
            prober = self.new_prober("connections", self.conn_service)
            try:
                result = self.run_attack(name, self.conn_service, prober, self.attack_connections)
            finally:
                prober.stop()
                self.conn_service.stop()
            if (result.get("service_cpu_during_cores") or 0) > 0.5:
                self.problem(name, f"service CPU {result['service_cpu_during_cores']} cores during the attack")
            return result
        if name == "bodies":
            return self.run_attack(name, self.main, self.prober, self.attack_bodies)
        if name == "kill_db":
            return self.run_attack(name, self.main, self.prober, self.attack_kill_db)
        if name == "sigstop_db":
            return self.run_attack(name, self.main, self.prober, self.attack_sigstop_db)
        if name == "retention":
            return self.run_attack(name, self.main, self.prober, self.attack_retention)
        raise ValueError(name)

    def run_deferred(self) -> None:
        for name, wait_until in self.deferred:
            if name != "simultaneous":
                continue
            pause = wait_until - time.monotonic()
            self.say(
                f"\n(simultaneous: live lookups on the second instance once its budget window has passed"
                f"{f', waiting {pause:.0f} s' if pause > 0 else ''})"
            )
            if pause > 0:
                time.sleep(pause)
            live = self.live_check(self.side, accounts=self.side_live_accounts, honour_retry_after=True)
            self._side_result["live"] = live
            if live["admitted"] < live["attempted"] or live["ok_200"] < live["admitted"]:
                self.problem(name, f"live lookups after the budget window: {live['statuses']} {live['not_200']}")
            self.say(f"   live {live['admitted']}/{live['attempted']} admitted, {live['ok_200']} x 200")
            self.side.stop()


# --------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------
def key_figure(name: str, r: dict) -> str:
    if "error" in r and "prober" not in r:
        return "ERROR: " + r["error"]
    try:
        if name == "small":
            return ", ".join(f"{k}: {v['status']} {v['code'] or ''}".rstrip() for k, v in r["checks"].items())
        if name == "flood":
            after = r.get("status_after", {})
            return (
                f"{r['requests']:,} req / {r['fresh_addresses']:,} addrs at {r['flood_rps']:.0f}/s "
                f"{r['statuses']}; degraded polls {r['status_during']['degraded_polls']}, max pending "
                f"{r['status_during']['max_pending_keys']}, caught up +{after.get('pending_keys_caught_up_after_s')} s"
            )
        if name == "simultaneous":
            return (
                f"admitted {r['admitted']}/100, 200 x {r['ok_200']}, 429 x {r['rejected_429']}, "
                f"Retry-After {r['retry_after_s'][:1] + r['retry_after_s'][-1:] if r['retry_after_s'] else []}"
            )
        if name == "heavy_reads":
            return "; ".join(
                f"{b['concurrent']}: {b['ok_200']}x200 {b['503']}x503 p50 {b['p50_ms']:.0f} max {b['max_ms']:.0f} ms"
                for b in r["bursts"]
            )
        if name == "connections":
            return (
                f"fd {r['service_fd_limit']}, svc cpu {r['service_cpu_during_cores']}, log +{r['log_growth_bytes']} B, "
                f"idle re-opened {r['idle_reopened']}, slowloris closed {r['slowloris_closed_by_server']}"
            )
        if name == "bodies":
            return f"{r['answers']}, RSS {r['rss_before_mb']} -> peak {r['rss_peak_mb']} -> {r['rss_after_mb']} MB"
        if name == "kill_db":
            return (
                f"non-200 for {r['non_200_seconds']} s, 200 again +{r['back_to_200_after_s']} s, restarts "
                f"{(r['embedded_database_at_end'] or {}).get('restarts')}, data same {all(r['player_data_unchanged'].values())}"
            )
        if name == "sigstop_db":
            return (
                f"slowest answer {r['max_seconds_to_answer_while_stopped']} s while stopped "
                f"{r['stopped_seconds']} s; 200 +{r['first_200_after_sigcont_s']} s after SIGCONT"
            )
        if name == "retention":
            return "; ".join(
                f"{x['snapshots']:,}: {x['expired_inserted']:,} expired, all gone {x['deleted_after_s']} s after insertion, p99 "
                f"{x['prober_during_deletion']['p99_ms']} ms"
                for x in r["rounds"]
            )
    except (KeyError, TypeError, ValueError) as exc:
        return f"(figure unavailable: {type(exc).__name__})"
    return ""


def format_report(results: dict) -> str:
    head = (
        f"{'attack':<13} {'probes':>6} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'non200':>6} {'svc cpu':>7} "
        f"{'db cpu':>7} {'db after':>8} {'svc after':>9} {'live adm/200':>12}  figures"
    )
    lines = ["", head, "-" * (len(head) + 40)]
    for name in ALL_ATTACKS:
        r = results["attacks"].get(name)
        if r is None:
            continue
        if "prober" not in r:
            lines.append(f"{name:<13} {r.get('skipped') or r.get('error')}")
            continue
        p = r["prober"]
        during, after = r["cpu_during_cores"], r["cpu_after_cores"]
        live = r.get("live") or {}
        live_text = (
            f"{live.get('admitted')}/{live.get('attempted')}:{live.get('ok_200')}" if "admitted" in live else "-"
        )

        def fmt(value, width, digits=1):
            return f"{value:>{width}.{digits}f}" if isinstance(value, (int, float)) else f"{'-':>{width}}"

        lines.append(
            f"{name:<13} {p['requests']:>6} {fmt(p['p50_ms'], 8)} {fmt(p['p99_ms'], 8)} {fmt(p['max_ms'], 8)} "
            f"{p['non_200']:>6} {fmt(during.get('service'), 7, 2)} {fmt(during.get('db'), 7, 2)} "
            f"{fmt(after.get('db'), 8, 2)} {fmt(after.get('service'), 9, 2)} {live_text:>12}  "
            f"{key_figure(name, r)}"
        )
    lines.append(
        "(probes: the cached player, 20/s, during the attack; cpu in cores; 'after': the "
        f"{results['attacks'] and next(iter(results['attacks'].values())).get('cpu_after_window_s', '')} s "
        "after the attack; live adm/200: live lookups of uncached accounts admitted / attempted : answered 200)"
    )
    whole = results.get("prober_whole_run")
    if whole:
        lines.append(
            f"prober over the whole run: {whole['requests']} requests, p99 {whole['p99_ms']} ms, "
            f"non-200 {whole['non_200']} {whole['non_200_kinds']}"
        )
    if results.get("problems"):
        lines += ["", "problems:"] + [f"  - {p}" for p in results["problems"]]
    else:
        lines += ["", "problems: none"]
    return "\n".join(lines)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Rerun the attacks of issue 12 and measure what other clients see.")
    parser.add_argument("--quick", action="store_true", help="a reduced version of everything (about 3 minutes)")
    parser.add_argument(
        "--only",
        nargs="+",
        choices=ALL_ATTACKS,
        metavar="NAME",
        help="run only these attacks: " + ", ".join(ALL_ATTACKS),
    )
    parser.add_argument("--json", default=DEFAULT_JSON, help="where to write the results")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs, prober records)")
    parser.add_argument("--prober", nargs=4, metavar=("PORT", "PATH", "RATE", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not args.only:
        args.only = list(ALL_ATTACKS)
    return args


def _terminate(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.prober:
        port, path, rate, out = args.prober
        prober_main(int(port), path, float(rate), out)
        return 0
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)
    run = Attacks(args)
    try:
        results = run.run()
    except KeyboardInterrupt:
        print("\ninterrupted: stopping child processes", file=sys.stderr)
        return 130
    except Exception:
        for name in ("service", "upstream_sim"):
            tail = run.children.tail(name, 20)
            if tail:
                print(f"--- last lines of {name}.log ---\n{tail}", file=sys.stderr)
        raise
    finally:
        run.close()
    print(format_report(results))
    with open(args.json, "w") as handle:
        json.dump(results, handle, indent=2, default=str)
        handle.write("\n")
    print(f"\nresults written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
