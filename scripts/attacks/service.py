"""A service instance with its embedded database (SecantusDB, started and supervised by the service)."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time

from scripts.loadkit import ROOT
from scripts.loadkit.processes import Children, free_port, wait_http
from server.contract.catalogue import PREFIX

from .common import TRUSTED_PROXY, UPSTREAM_RPS, http_get, json_data
from .procfs import children_of, cmdline, proc_state


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
