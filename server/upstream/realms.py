"""Per-realm request caps under the CDN's per-address throttle, with congestion control and back-off."""

# The real API sits behind a CDN whose firewall throttles per client address and realm well below
# the application_id's quota (tuned from production: about 6 requests/s on EU, 8 on NA and ASIA)
# and shows it as timeouts and stalled connections, never as an error envelope; quick retries make
# it block harder. So each realm has a cap of its own (an UpstreamBudget at the realm's rate,
# inside the application's budget), and timeouts, connection resets and 5xx from a realm count as
# congestion: the realm's rate halves and wins back 5 % every 10 s (AIMD), and background work
# waits a growing back-off (2, 8, 18, 32, 50, 60 s) before that realm's next send, while a live
# lookup fails fast instead of queueing behind it. docs/deploy.md §3a is the operator's view.

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import math
import time
from collections.abc import AsyncIterator, Callable, Mapping

from server.upstream.budget import Caller, UpstreamBudget

log = logging.getLogger("statsapi.upstream")

DEFAULT_REALM_RPS = {"eu": 6.0, "na": 8.0, "asia": 8.0}
CONGESTION_RECOVER_STEP = 0.05  # of the realm's cap, won back ...
CONGESTION_RECOVER_EVERY = 10.0  # ... every this many seconds without congestion
BACKOFF_MAX = 60.0


def backoff_seconds(streak: int) -> float:
    """The pause after the `streak`-th congestion in a row: 2, 8, 18, 32, 50, then 60 s."""
    return min(BACKOFF_MAX, 2.0 * streak * streak) if streak > 0 else 0.0


class RealmCongested(Exception):
    """A live call found its realm backing off; `retry_after` seconds until it sends again."""

    def __init__(self, realm: str, retry_after: float):
        super().__init__(f"upstream realm {realm} is congested (backing off)")
        self.realm = realm
        self.retry_after = max(1, math.ceil(retry_after))


class RealmGate:
    """One realm: its cap (an UpstreamBudget at the realm's rate, split between processes like the
    application's quota), its congestion streak and back-off, and what /status and /metrics show."""

    def __init__(
        self,
        realm: str,
        rate: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        hold_first_window: bool = True,
    ) -> None:
        self.realm = realm
        self.clock = clock
        self.wall = wall
        self.budget = UpstreamBudget(
            rate,
            clock=clock,
            wall=wall,
            hold_first_window=hold_first_window,
            recover_step=CONGESTION_RECOVER_STEP,
            recover_every=CONGESTION_RECOVER_EVERY,
        )
        self.streak = 0  # congestions since the last answer
        self.backoff_until = 0.0  # monotonic
        self.congestions = 0  # since start (for /metrics)
        self._recent: collections.deque[float] = collections.deque()  # wall times, last minute
        self.last_congestion: float | None = None

    def backoff_remaining(self) -> float:
        return max(0.0, self.backoff_until - self.clock())

    @contextlib.asynccontextmanager
    async def slot(self, caller: Caller) -> AsyncIterator[float]:
        """Hold one of the realm's slots around a request. A live caller never waits out a
        back-off (RealmCongested); any other waits for it, then for a slot."""
        remaining = self.backoff_remaining()
        if remaining > 0 and caller == "live":
            raise RealmCongested(self.realm, remaining)
        while remaining > 0:
            await asyncio.sleep(remaining)
            remaining = self.backoff_remaining()  # a congestion meanwhile may have extended it
        async with self.budget.slot(caller) as waited:
            yield waited

    def note_congestion(self, what: str) -> None:
        """A timeout, connection error or 5xx from this realm."""
        self.streak += 1
        self.congestions += 1
        wall = self.wall()
        self.last_congestion = wall
        self._recent.append(wall)
        self.budget.slow_down()
        pause = backoff_seconds(self.streak)
        self.backoff_until = max(self.backoff_until, self.clock() + pause)
        log.warning(
            "upstream realm %s congested (%s, %d in a row): %.2f requests/s, background waits %.0f s",
            self.realm,
            what,
            self.streak,
            self.budget.effective_rate(),
            pause,
        )

    def note_answer(self) -> None:
        """The realm answered: the streak ends (a pause already set runs out by itself)."""
        self.streak = 0

    def set_processes(self, count: int) -> None:
        self.budget.set_processes(count)

    def congestions_last_minute(self) -> int:
        cutoff = self.wall() - 60
        while self._recent and self._recent[0] < cutoff:
            self._recent.popleft()
        return len(self._recent)

    def status(self) -> dict:
        budget = self.budget.status()
        remaining = self.backoff_remaining()
        return {
            "cap_per_second": self.budget.rate,
            "share_per_second": budget["share_per_second"],
            "rate_per_second": budget["effective_per_second"],
            "slowed_down": budget["slowed_down"],
            "timeouts_last_minute": self.congestions_last_minute(),
            "congestions": self.congestions,
            "last_congestion": self.last_congestion,
            "backoff": {
                "active": remaining > 0,
                "seconds_left": round(remaining, 1),
                "streak": self.streak,
            },
            "in_flight": budget["in_flight"],
            "queued": sum(budget["queued"].values()),
            "requests_last_minute": budget["requests_last_minute"],
        }


class RealmGates:
    """The gates of every realm the service calls (regions without a configured cap have none)."""

    def __init__(
        self,
        rates: Mapping[str, float] | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        hold_first_window: bool = True,
    ) -> None:
        rates = DEFAULT_REALM_RPS if rates is None else rates
        self.gates = {
            realm: RealmGate(realm, rate, clock=clock, wall=wall, hold_first_window=hold_first_window)
            for realm, rate in rates.items()
        }

    def get(self, realm: str | None) -> RealmGate | None:
        return self.gates.get(realm) if realm else None

    def set_processes(self, count: int) -> None:
        for gate in self.gates.values():
            gate.set_processes(count)

    def status(self) -> dict:
        return {realm: gate.status() for realm, gate in self.gates.items()}
