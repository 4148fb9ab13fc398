"""Per-application_id request-rate limiter (sliding 1 s window, real time) and the request counters."""

from __future__ import annotations

import time
from collections import deque

WINDOW = 1.0  # seconds


def redact(app_id: str | None) -> str:
    """An application_id as shown in statistics: its first 3 characters and ``***``."""
    return (app_id or "")[:3] + "***"


class RateLimiter:
    """At most ``rps`` requests per application_id in any sliding 1.0 s window (0 disables).

    A request arriving when ``rps`` or more requests of the same application_id arrived in the
    preceding second (arrival times t with t > now - 1.0) is refused; refused requests count
    toward the window too, so a client that keeps hammering stays refused.
    """

    def __init__(self, rps: int = 10, clock=time.monotonic):
        self.rps = int(rps)
        self.clock = clock
        self.windows: dict[str, deque] = {}

    def set_rps(self, rps: int) -> None:
        if int(rps) < 0:
            raise ValueError("rps must be >= 0")
        self.rps = int(rps)

    def arrive(self, app_id: str, now: float | None = None) -> bool:
        """Record one arrival; True when it is within the limit."""
        now = self.clock() if now is None else now
        window = self.windows.get(app_id)
        if window is None:
            if len(self.windows) > 10_000:  # forget idle ids
                self.windows = {k: w for k, w in self.windows.items() if w and w[-1] > now - WINDOW}
            window = self.windows[app_id] = deque()
        cutoff = now - WINDOW
        while window and window[0] <= cutoff:
            window.popleft()
        before = len(window)
        window.append(now)
        return not (self.rps > 0 and before >= self.rps)

    def describe(self) -> dict:
        return {"rps": self.rps, "window_seconds": WINDOW}


class Counters:
    """What ``/_sim/stats`` shows; ``reset()`` starts over (the limiter's windows are separate)."""

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self.reset()

    def reset(self) -> None:
        self.total = 0
        self.by_path: dict[str, int] = {}
        self.by_endpoint: dict[str, int] = {}
        self.faults: dict[str, int] = {}
        self.violations = {"ids_limit": 0, "request_limit": 0, "total": 0}
        self.violations_by_path: dict[str, int] = {}
        self.bytes = 0
        self.bytes_by_path: dict[str, int] = {}
        self.max_per_second = 0
        self.max_per_second_by_app: dict[str, int] = {}
        self._all: deque = deque()
        self._apps: dict[str, deque] = {}
        self.since = time.time()

    def request(self, game: str, region: str, api_path: str, app_id: str | None, now: float | None = None) -> None:
        """Count one API request at its arrival (and the busiest second so far)."""
        now = self.clock() if now is None else now
        self.total += 1
        self.by_path[api_path] = self.by_path.get(api_path, 0) + 1
        key = f"{game}/{region}/{api_path}"
        self.by_endpoint[key] = self.by_endpoint.get(key, 0) + 1
        cutoff = now - WINDOW
        window = self._all
        while window and window[0] <= cutoff:
            window.popleft()
        window.append(now)
        if len(window) > self.max_per_second:
            self.max_per_second = len(window)
        name = redact(app_id)
        window = self._apps.get(name)
        if window is None:
            window = self._apps[name] = deque()
        while window and window[0] <= cutoff:
            window.popleft()
        window.append(now)
        if len(window) > self.max_per_second_by_app.get(name, 0):
            self.max_per_second_by_app[name] = len(window)

    def violation(self, kind: str, api_path: str) -> None:
        self.violations[kind] = self.violations.get(kind, 0) + 1
        self.violations["total"] += 1
        self.violations_by_path[api_path] = self.violations_by_path.get(api_path, 0) + 1

    def sent(self, api_path: str, size: int) -> None:
        self.bytes += size
        self.bytes_by_path[api_path] = self.bytes_by_path.get(api_path, 0) + size

    def fault(self, mode: str) -> None:
        self.faults[mode] = self.faults.get(mode, 0) + 1

    def describe(self) -> dict:
        return {
            "total": self.total,
            "by_path": dict(self.by_path),
            "by_endpoint": dict(self.by_endpoint),
            "faults": dict(self.faults),
            "since": self.since,
            "max_per_second": self.max_per_second,
            "max_per_second_by_app": dict(self.max_per_second_by_app),
            "violations": dict(self.violations),
            "violations_by_path": dict(self.violations_by_path),
            "bytes": self.bytes,
            "bytes_by_path": dict(self.bytes_by_path),
        }
