"""What /proc says about a process (fds, state, children, command line, CPU) and this script's fd limit."""

from __future__ import annotations

import os
import resource
import time

from scripts.loadkit.processes import cpu_seconds


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
