"""The run: the simulator, the services and their probers, the common measurement of every attack."""

from __future__ import annotations

import collections
import datetime as dt
import os
import platform
import shutil
import sys
import tempfile
import time
import traceback

from scripts.loadkit import EXPECTED_VALUES_FILE, ROOT
from scripts.loadkit.processes import Children, free_port, rss_mb, wait_for_port
from server.contract.catalogue import MAX_DAYS, PREFIX

from .common import (
    ALL_ATTACKS,
    DATABASE_ATTACKS,
    PROBER_ADDRESSES,
    PROBER_RATE,
    REGION,
    UPSTREAM_RPS,
    Addresses,
    error_code,
    http_get,
    json_data,
    now,
)
from .database import DatabaseAttacks
from .prober import Prober, summarize
from .procfs import CpuMeter, raise_own_fd_limit
from .resources import ResourceAttacks
from .service import Service
from .traffic import TrafficAttacks


class Attacks(TrafficAttacks, ResourceAttacks, DatabaseAttacks):
    """One run: the infrastructure, the common measurement, the orchestration; the attacks are mixed in."""

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

    # --- orchestration -----------------------------------------------------------------
    def run(self) -> dict:
        args = self.args
        self.results.update(
            {
                "generated": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
                "command": " ".join(
                    [
                        os.path.relpath(sys.executable, ROOT) if sys.executable.startswith(ROOT) else sys.executable,
                        "-m",
                        "scripts.attacks",
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
