#!/usr/bin/env python3
"""One-command load benchmark of statsapi against a bare-Tornado ceiling."""

#     .venv/bin/python scripts/bench.py                 # ~10 s per scenario, writes bench-results.json
#     .venv/bin/python scripts/bench.py --quick         # a smoke run (used by tests/test_bench.py)
#     .venv/bin/python scripts/bench.py --duration 20 --connections 64 --json /tmp/b.json
#
# In one run it starts, each as its own child process:
#
# - SecantusDB (`python -m secantus --storage-path :memory:`), the database;
# - the upstream simulator (`python -m scripts.upstream_sim`), then seeds a small dataset through the
#   real ingest code (`server.compose.demo.seed_current_profiles`, the clan refresh, the online sampler);
# - the *ceiling*: a bare Tornado handler answering a fixed ~1 KB JSON body;
# - the service: `python -m server ... --no-jobs --trusted-proxies 127.0.0.1/32`, ONE process.
#
# Every scenario is driven by the same load generator at a fixed concurrency over keep-alive
# connections: `wrk` (Debian package `wrk`) with a Lua script that rotates `X-Forwarded-For`
# client addresses, or, when wrk is missing, a bundled asyncio generator (slower: on a 2-core
# machine a Python client can itself be the bottleneck; the report says which one ran).
# The service trusts 127.0.0.1 as a proxy, so each request is attributed to its forwarded
# 10.x.y.z address and the per-client limits do not interfere - except in the 429 scenario,
# where one address, exhausted beforehand, sends everything.
#
# With two or more CPUs the servers under test (ceiling and service) are pinned to one CPU
# and everything else (database, simulator, load generator, this script) to the others, so
# "one process" means one dedicated core and the ratio to the ceiling is like for like.
#
# Reported per scenario: req/s, p50/p90/p99 latency, ratio to the ceiling's req/s, status codes
# seen, CPU used by the process under test and by the database (µs CPU per request).
# Then the service's resident memory before/after 100,000 requests from 10,000 distinct
# clients, the goals with PASS/MISS, and (when py-spy is available) the top frames of the
# service during a separate profiled cached-player run.
#
# Every child process is stopped on exit, also on Ctrl-C or SIGTERM.

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
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from scripts.loadkit import EXPECTED_VALUES_FILE  # noqa: E402  (after the sys.path line above)
from scripts.loadkit.ceiling import ceiling_payload, serve_ceiling  # noqa: E402
from scripts.loadkit.generators import Load, PythonGenerator, WrkGenerator, install_wrk  # noqa: E402
from scripts.loadkit.processes import (  # noqa: E402
    Children,
    cpu_seconds,
    free_port,
    loadgen_priority,
    memory_kb,
    probe,
    rss_mb,
    terminate,
    wait_for_port,
    wait_http,
)
from scripts.loadkit.profiling import PY_SPY_RATE, find_py_spy, summarize_profile  # noqa: E402
from scripts.loadkit.report import evaluate_goals, format_report  # noqa: E402
from scripts.loadkit.seeding import probe_database, seed_small, wait_for_database  # noqa: E402
from server.contract.catalogue import BY_NAME, PREFIX  # noqa: E402

DEFAULT_JSON = os.path.join(ROOT, "bench-results.json")  # git-ignored (bench-results*.json)
TRUSTED_PROXY = "127.0.0.1/32"
OVER_LIMIT_CLIENT = "203.0.113.7"  # TEST-NET-3: the one client of the 429 scenario

ALL_SCENARIOS = [
    "player",
    "player_gzip",
    "clan",
    "online",
    "status",
    "not_found",
    "bad_request",
    "history",
    "tanks",
    "roster",
    "rate_limited",
    "memory",
]


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
        self.ceiling_gzip_file = os.path.join(self.workdir, "ceiling-gzip.bin")  # the gzip scenario's bytes

        cpus = sorted(os.sched_getaffinity(0))
        if args.pin and len(cpus) >= 2:
            self.server_cpus: set[int] | None = {cpus[0]}
            self.other_cpus: set[int] | None = set(cpus[1:])
            os.sched_setaffinity(0, self.other_cpus)  # before any thread exists; children inherit
        else:
            self.server_cpus = self.other_cpus = None

        # A full run installs wrk when it is absent (root, Debian); --quick (the suite's smoke run) never does.
        wrk = None if args.generator == "python" else (shutil.which("wrk") if args.quick else install_wrk())
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
            [
                sys.executable,
                os.path.abspath(__file__),
                "--serve-ceiling",
                str(ceiling_port),
                "--ceiling-gzip-file",
                self.ceiling_gzip_file,
            ],
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
                args.tracked_days,
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
            "tracked_players": seed["tracked"],
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

    def answer_cache_lookups(self) -> tuple[float, float]:
        """(hits, misses) of the service's answer cache so far, from /metrics (loopback only)."""
        status, _, body = probe(self.port, "/metrics")
        if status != 200:
            return 0.0, 0.0
        found = {}
        for line in body.decode().splitlines():
            if line.startswith("statsapi_answer_cache_lookups_total{"):
                outcome = line.split('outcome="', 1)[1].split('"', 1)[0]
                found[outcome] = float(line.rsplit(" ", 1)[1])
        return found.get("hit", 0.0), found.get("miss", 0.0)

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
        tracked = (self.seed.get("tracked") or [None])[0]

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
            ("history", f"{PREFIX}/player/{tracked}/eu/history?days=30" if tracked else None, "2xx"),
            ("tanks", f"{PREFIX}/player/{tracked}/eu/tanks?days=30" if tracked else None, "2xx"),
            # A battle's roster of (up to) 30 cached players, as a mod polls it: replayed as built.
            ("roster", f"{PREFIX}/roster?region=eu&accounts=" + ",".join(map(str, self.seed["players"][:30])), "2xx"),
        ]
        for name, path, expected in plan:
            if name == "player" and "player_gzip" in args.scenarios:
                self.run_gzip(player_path)
            if name != "ceiling" and name not in args.scenarios:
                continue
            if name == "ceiling":
                load = Load(self.ceiling_port, ["/"], pool=args.clients, base=self.fresh_clients(args.clients))
                self.say(f"  {name:<13} GET / (bare Tornado, fixed {len(ceiling_payload())} B JSON) ...")
                scenarios[name] = self.measure(name, load, self.ceiling_pid, seconds, warmup, expected)
                scenarios[name]["path"] = "/ (ceiling)"
                continue
            if path is None:
                scenarios[name] = {"skipped": "nothing to ask for could be seeded (see seed notes)", "path": None}
                self.say(f"  {name:<13} skipped: nothing seeded")
                continue
            self.check(path, int(expected.replace("2xx", "200")), "198.51.100.2")
            load = Load(self.port, [path], pool=args.clients, base=self.fresh_clients(args.clients))
            self.say(f"  {name:<13} GET {path} ...")
            before = self.answer_cache_lookups()
            scenarios[name] = self.measure(name, load, self.service_pid, seconds, warmup, expected)
            after = self.answer_cache_lookups()
            lookups = sum(after) - sum(before)
            # Warm-up included: the share of this scenario's requests answered from the cache.
            scenarios[name]["answer_cache_hit_rate"] = round((after[0] - before[0]) / lookups, 4) if lookups else None

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
        gzip_ceiling, gzip_player = scenarios.get("ceiling_gzip"), scenarios.get("player_gzip")
        if gzip_ceiling and gzip_player and gzip_ceiling.get("rps"):
            # Like for like: the bare handler sending the same gzip bytes.
            gzip_player["ratio_to_ceiling"] = round(gzip_player["rps"] / gzip_ceiling["rps"], 3)
            gzip_ceiling["ratio_to_ceiling"] = None

    def run_gzip(self, player_path: str) -> None:
        """The cached player to a gzip client, against a bare Tornado handler sending the very gzip
        bytes the service sent (written to the ceiling's file): the cost of choosing and sending the
        prebuilt representation, with no compression per request on either side."""
        args, scenarios = self.args, self.results["scenarios"]
        gzip_headers = {"Accept-Encoding": "gzip"}
        status, headers, body = probe(self.port, player_path, "198.51.100.3", extra=gzip_headers)
        if status != 200 or headers.get("content-encoding") != "gzip":
            raise RuntimeError(f"GET {player_path} (gzip): {status} {headers}")
        with open(self.ceiling_gzip_file, "wb") as file:
            file.write(body)
        self.results["player_gzip_response_bytes"] = len(body)
        load = Load(self.ceiling_port, ["/gzip"], pool=args.clients, base=self.fresh_clients(args.clients))
        load.headers = gzip_headers
        self.say(f"  {'ceiling_gzip':<13} GET /gzip (bare Tornado, the same {len(body)} B of gzip) ...")
        scenarios["ceiling_gzip"] = self.measure(
            "ceiling_gzip", load, self.ceiling_pid, args.duration, args.warmup, "2xx"
        )
        scenarios["ceiling_gzip"]["path"] = "/gzip (ceiling)"
        load = Load(self.port, [player_path], pool=args.clients, base=self.fresh_clients(args.clients))
        load.headers = gzip_headers
        self.say(f"  {'player_gzip':<13} GET {player_path} (Accept-Encoding: gzip) ...")
        before = self.answer_cache_lookups()
        scenarios["player_gzip"] = self.measure(
            "player_gzip", load, self.service_pid, args.duration, args.warmup, "2xx"
        )
        after = self.answer_cache_lookups()
        lookups = sum(after) - sum(before)
        scenarios["player_gzip"]["answer_cache_hit_rate"] = (
            round((after[0] - before[0]) / lookups, 4) if lookups else None
        )
        scenarios["player_gzip"]["path"] = player_path + " (gzip)"

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
    parser.add_argument(
        "--tracked-days",
        type=int,
        default=None,
        help="days of the tracker's pass seeded for the history and tanks scenarios (default 31; quick: 8)",
    )
    parser.add_argument("--quick", action="store_true", help="short smoke run (about a minute)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs, Lua, profiles)")
    parser.add_argument("--serve-ceiling", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--ceiling-gzip-file", help=argparse.SUPPRESS)
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
    if args.tracked_days is None:
        args.tracked_days = 8 if quick else 31
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
        serve_ceiling(args.serve_ceiling, args.ceiling_gzip_file)
        return 0
    signal.signal(signal.SIGTERM, terminate)
    signal.signal(signal.SIGHUP, terminate)
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
