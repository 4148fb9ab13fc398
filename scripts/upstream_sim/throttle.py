"""The CDN's firewall in front of the real API: a throttle per client address and realm.

The real ``api.worldoftanks.*`` hosts sit behind a CDN that throttles each client address per realm
(about 6 requests/s on EU, 8 on NA and ASIA). It never answers an error envelope: a request over
the rate *stalls* (no answer; the connection is dropped after a while), and a burst blocks the
address for a while, every request then stalling; short retries make it block harder.

``Throttle.arrive(address, region)`` records one arrival in a sliding 1.0 s window (real time,
``time.monotonic``, never the simulated clock) and says whether the request passes:

- it stalls when ``rate`` or more arrivals of that address and region happened in the preceding
  second (stalled arrivals count too, so a client that keeps hammering keeps stalling);
- ``burst_factor`` x ``rate`` arrivals within one second block that address and region for
  ``block_seconds``: every request stalls until then; a new burst during a block starts the block
  over (the retries make it block harder).

A region missing from ``rates`` (or ``rates`` None: the throttle off) is never throttled, but its
arrivals still feed ``max_per_second_by_region`` (the busiest second of any one address in that
region), so a non-strict run shows what the real CDN would have throttled.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

WINDOW = 1.0  # seconds
DEFAULT_RATES = {"eu": 6.0, "na": 8.0, "asia": 8.0}
DEFAULT_BLOCK_SECONDS = 20.0
DEFAULT_BURST_FACTOR = 2.0
DEFAULT_STALL_SECONDS = 60.0
SETTING_KEYS = ("rates", "block_seconds", "burst_factor", "stall_seconds")


def parse_throttle(spec: str | None) -> dict[str, float] | None:
    """``"eu=6,na=8,asia=8"`` -> {"eu": 6.0, ...}; ``"off"`` (or "none", "0", "") -> None."""
    if spec is None or spec.strip().lower() in ("", "off", "none", "0"):
        return None
    rates: dict[str, float] = {}
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        region, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"throttle: {part!r} is not region=rate")
        rates[region.strip()] = float(value)
    return _check_rates(rates)


def _check_rates(rates: Any) -> dict[str, float] | None:
    if rates is None:
        return None
    if not isinstance(rates, dict):
        raise ValueError("rates must be an object {region: requests per second} or null")
    out: dict[str, float] = {}
    for region, rate in rates.items():
        if region not in DEFAULT_RATES:
            raise ValueError(f"unknown region {region!r} (eu, na, asia)")
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or rate < 0:
            raise ValueError(f"rate of {region} must be a number >= 0")
        out[region] = float(rate)
    return out


def _positive(body: dict, key: str, allow_zero: bool = False) -> float:
    value = body[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{key} must be a number")
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{key} must be {'>= 0' if allow_zero else '> 0'}")
    return float(value)


class Throttle:
    def __init__(
        self,
        rates: dict[str, float] | None = None,
        block_seconds: float = DEFAULT_BLOCK_SECONDS,
        burst_factor: float = DEFAULT_BURST_FACTOR,
        stall_seconds: float = DEFAULT_STALL_SECONDS,
        clock=time.monotonic,
    ):
        self.clock = clock
        self.rates = _check_rates(rates)
        self.block_seconds = float(block_seconds)
        self.burst_factor = float(burst_factor)
        self.stall_seconds = float(stall_seconds)
        self.windows: dict[tuple[str, str], deque] = {}
        self.blocked: dict[tuple[str, str], float] = {}  # (address, region) -> monotonic end of the block
        self.reset_stats()

    # -- settings ----------------------------------------------------------------------

    def update(self, body: dict) -> None:
        """Apply a ``/_sim/throttle`` POST body (validated as a whole before anything changes)."""
        unknown = set(body) - {*SETTING_KEYS, "reset"}
        if unknown:
            raise ValueError(f"unknown keys: {', '.join(sorted(unknown))}")
        changes: dict[str, Any] = {}
        if "rates" in body:
            changes["rates"] = _check_rates(body["rates"])
        if "block_seconds" in body:
            changes["block_seconds"] = _positive(body, "block_seconds", allow_zero=True)
        if "burst_factor" in body:
            changes["burst_factor"] = _positive(body, "burst_factor")
        if "stall_seconds" in body:
            changes["stall_seconds"] = _positive(body, "stall_seconds")
        for key, value in changes.items():
            setattr(self, key, value)
        if body.get("reset"):
            self.reset()

    def reset(self) -> None:
        """Forget every window and block (the statistics are reset with the other stats)."""
        self.windows.clear()
        self.blocked.clear()

    # -- arrivals ----------------------------------------------------------------------

    def arrive(self, address: str, region: str, now: float | None = None) -> bool:
        """Record one arrival of ``address`` in ``region``; True when it passes, False when it stalls."""
        now = self.clock() if now is None else now
        key = (address, region)
        window = self.windows.get(key)
        if window is None:
            if len(self.windows) > 10_000:  # forget idle addresses
                self.windows = {k: w for k, w in self.windows.items() if w and w[-1] > now - WINDOW}
            window = self.windows[key] = deque()
        cutoff = now - WINDOW
        while window and window[0] <= cutoff:
            window.popleft()
        before = len(window)
        window.append(now)
        if len(window) > self.max_per_second_by_region.get(region, 0):
            self.max_per_second_by_region[region] = len(window)
        rate = (self.rates or {}).get(region) or 0.0
        if rate <= 0:
            return True
        until = self.blocked.get(key)
        if until is not None and until <= now:
            del self.blocked[key]
            until = None
        stall = until is not None or before >= rate
        if len(window) >= self.burst_factor * rate and self.block_seconds > 0:
            if until is None:
                self.blocks += 1
            self.blocked[key] = now + self.block_seconds
            stall = True
        if stall:
            self.stalled += 1
            self.stalled_by_region[region] = self.stalled_by_region.get(region, 0) + 1
        return not stall

    # -- reports -----------------------------------------------------------------------

    def reset_stats(self) -> None:
        self.stalled = 0
        self.stalled_by_region: dict[str, int] = {}
        self.blocks = 0
        self.max_per_second_by_region: dict[str, int] = {}

    def stats(self) -> dict:
        return {
            "stalled": self.stalled,
            "stalled_by_region": dict(self.stalled_by_region),
            "blocks": self.blocks,
            "max_per_second_by_region": dict(self.max_per_second_by_region),
        }

    def describe(self, now: float | None = None) -> dict:
        now = self.clock() if now is None else now
        blocked = [
            {"address": address, "region": region, "seconds_left": round(until - now, 3)}
            for (address, region), until in sorted(self.blocked.items())
            if until > now
        ]
        return {
            "rates": None if self.rates is None else dict(self.rates),
            "block_seconds": self.block_seconds,
            "burst_factor": self.burst_factor,
            "stall_seconds": self.stall_seconds,
            "window_seconds": WINDOW,
            "blocked": blocked,
        }
