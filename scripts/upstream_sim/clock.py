"""The simulated clock: real time plus an offset, or frozen at an instant."""

from __future__ import annotations

import time


class SimClock:
    def __init__(self, offset: float = 0.0, now: float | None = None):
        self.offset = float(offset)
        self.frozen_at: float | None = float(now) if now is not None else None

    def now(self) -> float:
        return self.frozen_at if self.frozen_at is not None else time.time() + self.offset

    def set(self, body: dict) -> None:
        if body.get("reset"):
            self.offset, self.frozen_at = 0.0, None
        if "now" in body and body["now"] is not None:
            now = float(body["now"])
            if body.get("freeze", True):
                self.frozen_at = now
            else:
                self.frozen_at, self.offset = None, now - time.time()
        if "offset" in body and body["offset"] is not None:
            self.frozen_at, self.offset = None, float(body["offset"])
        if "advance" in body and body["advance"] is not None:
            if self.frozen_at is not None:
                self.frozen_at += float(body["advance"])
            else:
                self.offset += float(body["advance"])

    def describe(self) -> dict:
        real = time.time()
        now = self.now()
        return {"now": now, "offset": now - real, "frozen": self.frozen_at is not None, "real_time": real}
