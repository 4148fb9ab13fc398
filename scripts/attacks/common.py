"""Settings of the attacks and small helpers: percentiles, error codes, fresh addresses, raw HTTP."""

from __future__ import annotations

import collections
import datetime as dt
import http.client
import json
import math
import os
import socket
import threading
import time

from scripts.loadkit import ROOT

DEFAULT_JSON = os.path.join(ROOT, "bench-results-attacks.json")  # git-ignored (bench-results*.json)
TRUSTED_PROXY = "127.0.0.1/32"
UPSTREAM_RPS = 50
PROBER_RATE = 20.0
PROBER_ADDRESSES = 512
REGION = "eu"
DAY = dt.timedelta(days=1)
ALL_ATTACKS = [
    "small",
    "flood",
    "simultaneous",
    "heavy_reads",
    "connections",
    "bodies",
    "kill_db",
    "sigstop_db",
    "retention",
]
# Attacks whose target is the database itself: 503 database_unavailable is the expected answer meanwhile.
DATABASE_ATTACKS = {"kill_db", "sigstop_db"}
CAUGHT_UP_KEYS = 50  # pending rate-limit keys of the steady trickle (prober, status polls): the flood's are flushed


def now() -> float:
    return time.time()


def pct(values: list[float], p: float) -> float | None:
    """Nearest-rank percentile of a list (None when empty)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100.0 * len(ordered)))
    return round(ordered[min(len(ordered), rank) - 1], 2)


def error_code(body: bytes) -> str | None:
    try:
        parsed = json.loads(body)
    except (ValueError, TypeError):
        return None
    if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
        return parsed["error"].get("code")
    return None


class Addresses:
    """Fresh client addresses per purpose, never reused within a run."""

    PREFIX = {"live": 64, "misc": 80, "burst": 96}  # 100.64.0.0/10 (shared address space)

    def __init__(self):
        self.counters = collections.Counter()
        self.lock = threading.Lock()

    def next(self, kind: str = "misc") -> str:
        with self.lock:
            n = self.counters[kind]
            self.counters[kind] += 1
        return f"100.{self.PREFIX[kind] + ((n >> 16) & 15)}.{(n >> 8) & 255}.{n & 255}"


def http_get(
    port: int,
    path: str,
    client: str | None = None,
    timeout: float = 30.0,
    headers=None,
    method: str = "GET",
    source: str | None = None,
) -> dict:
    """One request on a new connection; {status, headers, body, ms} or {status: None, error}."""
    conn = http.client.HTTPConnection(
        "127.0.0.1", port, timeout=timeout, source_address=(source, 0) if source else None
    )
    sent = {"Connection": "close", **(headers or {})}
    if client:
        sent["X-Forwarded-For"] = client
    started = time.perf_counter()
    try:
        conn.request(method, path, headers=sent)
        response = conn.getresponse()
        body = response.read()
        return {
            "status": response.status,
            "headers": {k.lower(): v for k, v in response.getheaders()},
            "body": body,
            "ms": round(1000 * (time.perf_counter() - started), 2),
            "started": now(),
        }
    except Exception as exc:
        return {
            "status": None,
            "error": f"{type(exc).__name__}: {exc}"[:200],
            "headers": {},
            "body": b"",
            "ms": round(1000 * (time.perf_counter() - started), 2),
        }
    finally:
        conn.close()


def json_data(answer: dict) -> dict | None:
    try:
        return json.loads(answer["body"]).get("data")
    except (ValueError, TypeError, AttributeError):
        return None


def raw_exchange(port: int, raw: bytes, timeout: float = 30.0) -> dict:
    """Send raw bytes, read until the server closes; {status, headers, body} (status None: no answer)."""
    data = b""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            try:
                sock.sendall(raw)
            except OSError:
                pass  # the server answered and stopped reading: the answer is still there
            try:
                while chunk := sock.recv(65536):
                    data += chunk
            except (TimeoutError, ConnectionResetError):
                pass
    except OSError as exc:
        return {"status": None, "error": f"{type(exc).__name__}: {exc}", "headers": {}, "body": b""}
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    if not lines[0].startswith("HTTP/1."):
        return {"status": None, "error": f"no HTTP answer ({len(data)} bytes)", "headers": {}, "body": data[:200]}
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            key, value = line.split(":", 1)
            headers[key.strip().lower()] = value.strip()
    return {"status": int(lines[0].split()[1]), "headers": headers, "body": body}


def connect_nowait(port: int, source: str) -> socket.socket:
    sock = socket.socket()
    sock.setblocking(False)
    sock.bind((source, 0))
    sock.connect_ex(("127.0.0.1", port))
    return sock


def closed_by_server(sock: socket.socket) -> bool:
    try:
        data = sock.recv(65536, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except BlockingIOError:
        return False
    except OSError:
        return True  # reset (or never connected)
    return data == b"" or data.startswith(b"HTTP/1.1 ")
