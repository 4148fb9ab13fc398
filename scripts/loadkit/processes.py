"""Child processes (each in its own session), free ports, /proc readings and plain HTTP probes."""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import socket
import subprocess
import time

from server.compose.embedded_db import free_port as free_port  # re-exported for the scripts

from . import ROOT

HZ = os.sysconf("SC_CLK_TCK")


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


def stop_group(proc: subprocess.Popen, timeout: float = 30.0) -> None:
    """SIGTERM a child started in its own session (only its process group), SIGKILL after `timeout`."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait(10)


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


def terminate(signum, frame):
    """SIGTERM / SIGHUP handler: unwind like Ctrl-C, so every child process is stopped on exit."""
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
def probe(
    port: int, path: str, client: str | None = None, timeout: float = 10.0, extra: dict[str, str] | None = None
) -> tuple[int, dict, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {"X-Forwarded-For": client} if client else {}
        headers.update(extra or {})
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
