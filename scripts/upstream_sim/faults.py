"""Injected faults: latency, SOURCE_NOT_AVAILABLE, HTTP 5xx, hanging requests, REQUEST_LIMIT_EXCEEDED,
and errors on demand: a configuration error on every request (``config_error``), retired methods
(``disabled_methods``: 405 METHOD_DISABLED), a method answering a given error (``method_errors``)
and games whose ``wgn/servers/info`` fails (``failing_games``: 504 SOURCE_NOT_AVAILABLE)."""

from __future__ import annotations

import random
import re

from .ids import GAMES

FAULT_MODES = ("error", "5xx", "timeout", "limit")
# What the real API answers when the application itself is refused (code 407 each).
CONFIG_ERRORS = (
    "INVALID_IP_ADDRESS",
    "APPLICATION_IS_BLOCKED",
    "INVALID_APPLICATION_ID",
    "DEMO_APPLICATION_IS_BLOCKED",
)
# Real error codes of the messages method_errors is most likely given; any other message: 407
# (402 for *_NOT_SPECIFIED), as the real API answers its validation errors.
ERROR_CODES = {
    "SOURCE_NOT_AVAILABLE": 504,
    "METHOD_DISABLED": 405,
    "METHOD_NOT_FOUND": 404,
    "REQUEST_LIMIT_EXCEEDED": 407,
    "INVALID_IP_ADDRESS": 407,
    "APPLICATION_IS_BLOCKED": 407,
    "INVALID_APPLICATION_ID": 407,
    "DEMO_APPLICATION_IS_BLOCKED": 407,
}
_MESSAGE = re.compile(r"[A-Z][A-Z0-9_]*")
_METHOD = re.compile(r"[a-z0-9_]+(?:/[a-z0-9_]+)+")


def error_code(message: str) -> int:
    """The real API's code for an error message."""
    if message in ERROR_CODES:
        return ERROR_CODES[message]
    return 402 if message.endswith("_NOT_SPECIFIED") else 407


def config_error_field(message: str) -> str | None:
    """The ``field`` of a configuration error: application_id for INVALID_APPLICATION_ID, else null."""
    return "application_id" if message == "INVALID_APPLICATION_ID" else None


def _methods(value, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(m, str) and _METHOD.fullmatch(m.strip("/")) for m in value):
        raise ValueError(f"{key} must be a list of API paths such as wot/stronghold/claninfo")
    return list(dict.fromkeys(m.strip("/") for m in value))


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
        self.config_error: str | None = None
        self.disabled_methods: list[str] = []
        self.method_errors: dict[str, str] = {}
        self.failing_games: list[str] = []

    ON_DEMAND_KEYS = ("config_error", "disabled_methods", "method_errors", "failing_games")

    def update(self, body: dict) -> None:
        unknown = set(body) - {
            "latency_ms",
            "hang_seconds",
            "fail_mode",
            "fail_next",
            "seed",
            "reset",
            *self.RATE_KEYS,
            *self.ON_DEMAND_KEYS,
        }
        if unknown:
            raise ValueError(f"unknown keys: {', '.join(sorted(unknown))}")
        on_demand = self._on_demand(body)  # validated before anything changes
        if body.get("reset"):
            self.__init__(hang_seconds=self.hang_seconds, seed=self.seed)
        for key, value in on_demand.items():
            setattr(self, key, value)
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

    @staticmethod
    def _on_demand(body: dict) -> dict:
        out: dict = {}
        if "config_error" in body:
            value = body["config_error"]
            if value is not None and value not in CONFIG_ERRORS:
                raise ValueError(f"config_error must be null or one of {', '.join(CONFIG_ERRORS)}")
            out["config_error"] = value
        if "disabled_methods" in body:
            out["disabled_methods"] = _methods(body["disabled_methods"] or [], "disabled_methods")
        if "method_errors" in body:
            value = body["method_errors"] or {}
            if not isinstance(value, dict):
                raise ValueError("method_errors must be an object {api path: error message}")
            _methods(list(value), "method_errors")
            for message in value.values():
                if not isinstance(message, str) or not _MESSAGE.fullmatch(message):
                    raise ValueError("method_errors: each error is an upper-case message such as SOURCE_NOT_AVAILABLE")
            out["method_errors"] = {k.strip("/"): v for k, v in value.items()}
        if "failing_games" in body:
            value = body["failing_games"] or []
            if not isinstance(value, list) or not all(g in GAMES for g in value):
                raise ValueError(f"failing_games must be a list of {', '.join(GAMES)}")
            out["failing_games"] = list(dict.fromkeys(value))
        return out

    def on_demand_error(self, api_path: str, games: list[str] | None = None) -> tuple[str, str] | None:
        """(stats key, error message) of the on-demand error this request gets, or None.

        ``games``: the games a ``wgn/servers/info`` call asks for (None for other methods)."""
        if self.config_error:
            return "config_error", self.config_error
        if api_path in self.disabled_methods:
            return "disabled_method", "METHOD_DISABLED"
        message = self.method_errors.get(api_path)
        if message:
            return "method_error", message
        if games and self.failing_games and set(games) & set(self.failing_games):
            return "failing_game", "SOURCE_NOT_AVAILABLE"
        return None

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
            "config_error": self.config_error,
            "disabled_methods": list(self.disabled_methods),
            "method_errors": dict(self.method_errors),
            "failing_games": list(self.failing_games),
        }
