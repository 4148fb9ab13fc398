"""Injected faults: latency, SOURCE_NOT_AVAILABLE, HTTP 5xx, hanging requests, REQUEST_LIMIT_EXCEEDED."""

from __future__ import annotations

import random

FAULT_MODES = ("error", "5xx", "timeout", "limit")


class Faults:
    RATE_KEYS = ("error_rate", "http_5xx_rate", "timeout_rate", "limit_rate")

    def __init__(
        self,
        latency_ms: float = 0.0,
        error_rate: float = 0.0,
        http_5xx_rate: float = 0.0,
        timeout_rate: float = 0.0,
        limit_rate: float = 0.0,
        hang_seconds: float = 30.0,
        seed: int | None = None,
    ):
        self.latency_ms = float(latency_ms)
        self.error_rate = float(error_rate)
        self.http_5xx_rate = float(http_5xx_rate)
        self.timeout_rate = float(timeout_rate)
        self.limit_rate = float(limit_rate)
        self.hang_seconds = float(hang_seconds)
        self.fail_next = 0
        self.fail_mode = "error"
        self.seed = seed
        self.rng = random.Random(seed)

    def update(self, body: dict) -> None:
        unknown = set(body) - {"latency_ms", "hang_seconds", "fail_mode", "fail_next", "seed", "reset", *self.RATE_KEYS}
        if unknown:
            raise ValueError(f"unknown keys: {', '.join(sorted(unknown))}")
        if body.get("reset"):
            self.__init__(hang_seconds=self.hang_seconds, seed=self.seed)
        for key in ("latency_ms", "hang_seconds", *self.RATE_KEYS):
            if key in body:
                value = float(body[key])
                if value < 0 or (key in self.RATE_KEYS and value > 1):
                    raise ValueError(f"{key} out of range")
                setattr(self, key, value)
        if "fail_mode" in body:
            if body["fail_mode"] not in FAULT_MODES:
                raise ValueError(f"fail_mode must be one of {', '.join(FAULT_MODES)}")
            self.fail_mode = body["fail_mode"]
        if "fail_next" in body:
            if int(body["fail_next"]) < 0:
                raise ValueError("fail_next must be >= 0")
            self.fail_next = int(body["fail_next"])
        if "seed" in body:
            self.seed = body["seed"]
            self.rng = random.Random(self.seed)

    def pick(self) -> str | None:
        if self.fail_next > 0:
            self.fail_next -= 1
            return self.fail_mode
        r = self.rng.random()
        for mode, rate in (
            ("timeout", self.timeout_rate),
            ("5xx", self.http_5xx_rate),
            ("limit", self.limit_rate),
            ("error", self.error_rate),
        ):
            if r < rate:
                return mode
            r -= rate
        return None

    def describe(self) -> dict:
        return {
            "latency_ms": self.latency_ms,
            "error_rate": self.error_rate,
            "http_5xx_rate": self.http_5xx_rate,
            "timeout_rate": self.timeout_rate,
            "limit_rate": self.limit_rate,
            "hang_seconds": self.hang_seconds,
            "fail_next": self.fail_next,
            "fail_mode": self.fail_mode,
            "seed": self.seed,
        }
