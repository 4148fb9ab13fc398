"""Runs SecantusDB as a child process (never imported: it is GPL-2.0), and supervises it."""

# `supervise()` starts a thread that waits on the child (so an exited child is reaped at once,
# never left a zombie) and, when it exits without `stop()` having been called, starts it again
# on the same port and data directory (the data is on disk) after 1, 2, 4 ... 60 s, at most
# MAX_RESTARTS attempts in RESTART_WINDOW seconds; beyond that it gives up (logged, and shown by
# `status()`). Meanwhile the driver's heartbeat fails, so data endpoints answer 503
# `database_unavailable`; they recover by themselves when the heartbeat succeeds again.
#
# The counters live in an anonymous shared mapping created before any fork, so with
# `--processes N` (the parent supervises) every server process reports the same figures.

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import mmap
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from typing import Any

log = logging.getLogger("statsapi.embedded_db")


def _stop_with_parent() -> None:
    """In the child before exec (Linux): SIGKILL when the process that started it dies, so a
    kill -9 of the server or of a backup command leaves no database running on the data
    directory (the next start could not open it).

    SIGKILL, not SIGTERM: SecantusDB's SIGTERM handler (secantus/cli.py `handle_signal`, which
    calls `server.stop()` from the signal handler) deadlocks when a second signal arrives while it
    runs (py-spy: nested handlers blocked in Event.set), and a parent's death delivered more than
    one; the database then held the data directory forever. Losing the graceful close costs
    nothing a kill -9 would not: on disk it runs with --sync-on-commit, so every acknowledged
    write is in its log and the next start recovers it (tests/test_embedded_supervision.py kills it with -9 and finds every acknowledged write)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the database outlives a killed parent, as before


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


RESTART_DELAYS = (1, 2, 4, 8, 16, 32, 60)  # seconds before each consecutive attempt (then 60)
MAX_RESTARTS = 10  # attempts ...
RESTART_WINDOW = 600.0  # ... per this many seconds, then the supervisor gives up
STABLE_AFTER = 60.0  # a child that ran this long resets the backoff to its first step

# In the data directory while a process owns its database: the address other commands of this
# service (`python -m server backup`) connect to, and the lock that keeps a second owner out.
ADDRESS_FILE = "statsapi-address.json"
LOCK_FILE = "statsapi.lock"


class DataDirectoryInUse(RuntimeError):
    """Another process owns the embedded database of this data directory."""


def running_uri(storage_path: str) -> str | None:
    """The URI of the database a live process runs on `storage_path`, None when none does (the
    lock is free: an address file left by a killed process is stale)."""
    try:
        lock = open(os.path.join(storage_path, LOCK_FILE), "a+b")  # noqa: SIM115 - closed below
    except OSError:
        return None
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                with open(os.path.join(storage_path, ADDRESS_FILE)) as fh:
                    return str(json.load(fh)["uri"])
            except (OSError, ValueError, KeyError):
                return None
        fcntl.flock(lock, fcntl.LOCK_UN)
        return None


# restarts, attempts, last_restart, last_exit_at, last_exit_code, pid, state
_SHARED = struct.Struct("<qqddqqq")
_STATES = ("stopped", "running", "restarting", "gave_up")


class EmbeddedDatabase:
    """A SecantusDB server on a free loopback port, storing under `storage_path`."""

    def __init__(
        self,
        storage_path: str,
        port: int | None = None,
        host: str = "127.0.0.1",
        durable: bool | None = None,
        cache_size: str | None = None,
    ):
        self.storage_path = storage_path
        self.cache_size = cache_size  # WiredTiger's cache ("4G"); None: SecantusDB's default (1G)
        self.host = host
        self.port = port or free_port(host)
        # SecantusDB writes its log lazily: without --sync-on-commit, a kill -9 loses writes
        # acknowledged up to about a second before (measured; mongod's own log survives a
        # process crash). Durable by default on disk; ":memory:" (tests) never needs it.
        # durable=False (the tests' scratch database) also runs SecantusDB's fast storage: no
        # WiredTiger checkpoint every 60 s, whose passes over a large scratch database slowed
        # every command behind them (a full test run's index-plan timings, 2026-11-25).
        self.durable = storage_path != ":memory:" if durable is None else durable
        self.process: subprocess.Popen | None = None
        self._lock = threading.RLock()
        self._stopping = threading.Event()
        self._supervisor: threading.Thread | None = None
        self._attempt_times: list[float] = []
        self._restart_reason: str | None = None  # set by restart(): the next exit is asked for
        self._shared = mmap.mmap(-1, _SHARED.size)  # shared with forked server processes
        self._write_shared(0, 0, 0.0, 0.0, 0, 0, 0)

    # --- figures for /status (any process) ---------------------------------------------
    def _read_shared(self) -> tuple:
        return _SHARED.unpack_from(self._shared, 0)

    def _write_shared(self, *values: float) -> None:
        _SHARED.pack_into(self._shared, 0, *values)

    def _update_shared(self, **changes: float) -> None:
        names = ("restarts", "attempts", "last_restart", "last_exit_at", "last_exit_code", "pid", "state")
        values = dict(zip(names, self._read_shared()))
        values.update(changes)
        self._write_shared(*(values[name] for name in names))

    @property
    def restarts(self) -> int:
        """Successful restarts after unexpected exits since the service started."""
        return self._read_shared()[0]

    @property
    def last_restart(self) -> float | None:
        value = self._read_shared()[2]
        return value or None

    def status(self) -> dict:
        restarts, attempts, last_restart, exit_at, exit_code, pid, state = self._read_shared()
        return {
            "state": _STATES[state],
            "restarts": restarts,
            "restart_attempts": attempts,
            "last_restart": int(last_restart) if last_restart else None,
            "last_exit": {"at": int(exit_at), "code": exit_code} if exit_at else None,
        }

    @property
    def uri(self) -> str:
        # retryWrites=false: SecantusDB's retryable-write bookkeeping slows every write.
        return f"mongodb://{self.host}:{self.port}/?directConnection=true&retryWrites=false"

    def start(self, timeout: float = 60.0) -> EmbeddedDatabase:
        if self.storage_path != ":memory:":
            os.makedirs(self.storage_path, exist_ok=True)
            self._own_data_directory()
        log_path = os.path.join(self.storage_path, "secantus.log") if self.storage_path != ":memory:" else os.devnull
        self._log_file = open(log_path, "ab")
        self._stopping.clear()
        process = self._spawn()
        self.wait_ready(timeout)
        self._update_shared(state=1, pid=process.pid)
        log.info("embedded database listening on %s:%s (data in %s)", self.host, self.port, self.storage_path)
        return self

    def _own_data_directory(self) -> None:
        """Take the data directory's lock (held until stop(), inherited by forked server
        processes) and record the database's address there; refuse a directory another owns."""
        lock = open(os.path.join(self.storage_path, LOCK_FILE), "a+b")  # noqa: SIM115 - kept open while owned
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            raise DataDirectoryInUse(
                f"{self.storage_path} is in use by another statsapi process "
                f"(its database answers at {running_uri(self.storage_path)}); stop it first"
            ) from None
        self._lock_file: Any = lock
        address = os.path.join(self.storage_path, ADDRESS_FILE)
        with open(address + ".tmp", "w") as fh:
            json.dump({"uri": self.uri, "pid": os.getpid()}, fh)
        os.replace(address + ".tmp", address)

    def _release_data_directory(self) -> None:
        lock = getattr(self, "_lock_file", None)
        if lock is None:
            return
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(self.storage_path, ADDRESS_FILE))
        lock.close()  # releases the lock (forked server processes have exited by now)
        self._lock_file = None

    def _spawn(self) -> subprocess.Popen:
        """Start the child as `self.process`, and return it."""
        cmd = [
            sys.executable,
            "-m",
            "secantus",
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--storage-path",
            self.storage_path,
            "--log-level",
            "WARNING",
        ]
        if self.durable:
            cmd.append("--sync-on-commit")
        if self.cache_size:
            cmd += ["--cache-size", self.cache_size]
        env = dict(os.environ)
        if not self.durable:
            env["SECANTUS_TEST_FAST_STORAGE"] = "1"  # read by secantus.storage (0.7): no checkpoints
        self.process = process = subprocess.Popen(
            cmd,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env=env,
            preexec_fn=_stop_with_parent if sys.platform == "linux" else None,  # noqa: PLW1509 - async-signal-safe prctl only
        )
        self._started_at = time.monotonic()
        return process

    # --- supervision --------------------------------------------------------------------
    def supervise(self) -> EmbeddedDatabase:
        """Restart the child whenever it exits unexpectedly (a daemon thread; see the module)."""
        if self._supervisor is None or not self._supervisor.is_alive():
            self._supervisor = threading.Thread(target=self._supervise, name="embedded-db-supervisor", daemon=True)
            self._supervisor.start()
        return self

    def _supervise(self) -> None:
        failures = 0  # consecutive attempts since the child last ran STABLE_AFTER seconds
        while not self._stopping.is_set():
            proc = self.process
            if proc is None:
                return
            code = proc.wait()  # reaps the child: no zombie
            if self._stopping.is_set():
                return
            with self._lock:
                if proc is not self.process:
                    continue
            if time.monotonic() - self._started_at >= STABLE_AFTER:
                failures = 0
            reason, self._restart_reason = self._restart_reason, None
            if reason:
                log.warning("embedded database (pid %s) stopped to restart it: %s", proc.pid, reason)
            else:
                log.error("embedded database (pid %s) exited unexpectedly with code %s; restarting it", proc.pid, code)
            self._update_shared(last_exit_at=time.time(), last_exit_code=code, state=2, pid=0)
            while not self._restart(failures):
                failures += 1
                if self._stopping.is_set() or self._gave_up():
                    return
            failures += 1

    def restart(self, reason: str, kill_after: float = 5.0) -> bool:
        """Stop the child so that the supervisor starts it again on the same files (logged as asked,
        with `reason`); False when this process did not start it or it is not running."""
        proc = self.process
        if proc is None or proc.poll() is not None:  # poll() is None only in the process that started it
            return False
        self._restart_reason = reason
        proc.terminate()

        def kill_if_running() -> None:
            if proc.poll() is None:
                proc.kill()

        timer = threading.Timer(kill_after, kill_if_running)
        timer.daemon = True
        timer.start()
        return True

    def _gave_up(self) -> bool:
        return self._read_shared()[6] == 3

    def _restart(self, failures: int) -> bool:
        """One attempt after its backoff delay; True when the child answers a ping."""
        now = time.monotonic()
        self._attempt_times = [t for t in self._attempt_times if now - t < RESTART_WINDOW]
        if len(self._attempt_times) >= MAX_RESTARTS:
            log.critical(
                "embedded database: %s restart attempts in %.0f s; giving up (data endpoints answer "
                "503 until the service is restarted)",
                MAX_RESTARTS,
                RESTART_WINDOW,
            )
            self._update_shared(state=3)
            return False
        delay = RESTART_DELAYS[min(failures, len(RESTART_DELAYS) - 1)]
        if self._stopping.wait(delay):
            return False
        self._attempt_times.append(time.monotonic())
        shared = self._read_shared()
        self._update_shared(attempts=shared[1] + 1)
        with self._lock:
            if self._stopping.is_set():
                return False
            try:
                proc = self._spawn()
            except OSError as exc:
                log.error("embedded database: cannot start: %s", exc)
                return False
        try:
            self.wait_ready(60)
        except Exception as exc:
            log.error("embedded database: restart attempt failed: %s", exc)
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            return False
        restarts = self._read_shared()[0] + 1
        self._update_shared(restarts=restarts, last_restart=time.time(), state=1, pid=proc.pid)
        log.warning(
            "embedded database restarted (pid %s, restart %s); data in %s", proc.pid, restarts, self.storage_path
        )
        return True

    def wait_ready(self, timeout: float) -> None:
        from pymongo import MongoClient  # the sync driver is fine before the loop runs

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"embedded database exited with code {self.process.returncode}")
            try:
                with socket.create_connection((self.host, self.port), timeout=0.5):
                    pass
                client: MongoClient[dict[str, Any]] = MongoClient(self.uri, serverSelectionTimeoutMS=1000)
                try:
                    client.admin.command("ping")
                    return
                finally:
                    client.close()
            except Exception:
                time.sleep(0.1)
        raise RuntimeError("embedded database did not answer a ping in time")

    def stop(self, timeout: float = 15.0) -> None:
        self._stopping.set()  # the supervisor does not restart what is stopped on purpose
        with self._lock:
            proc, self.process = self.process, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        if self._supervisor is not None and self._supervisor is not threading.current_thread():
            self._supervisor.join(5)
        self._update_shared(state=0, pid=0)
        self._log_file.close()
        self._release_data_directory()
        log.info("embedded database stopped")

    def __enter__(self) -> EmbeddedDatabase:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
