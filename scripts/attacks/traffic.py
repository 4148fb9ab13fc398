"""Attacks by requests: malformed heads, a flood of fresh addresses, 100 simultaneous live lookups."""

from __future__ import annotations

import collections
import concurrent.futures
import math
import os
import shutil
import threading
import time

from scripts.loadkit.generators import Load, PythonGenerator, WrkGenerator
from server.contract.catalogue import LIVE_GLOBAL, PREFIX

from .common import (
    CAUGHT_UP_KEYS,
    REGION,
    error_code,
    http_get,
    json_data,
    now,
    pct,
    raw_exchange,
)


class TrafficAttacks:
    """Mixed into Attacks (harness.py): self is the run."""

    def attack_small(self) -> dict:
        port = self.main.port
        checks = {}
        failures = collections.Counter()
        rounds = 0

        def record(label: str, answer: dict, expect) -> None:
            status = answer["status"]
            ok = expect(answer)
            if label not in checks or not ok:
                checks[label] = {
                    "status": status,
                    "content_type": answer["headers"].get("content-type"),
                    "cache_control": answer["headers"].get("cache-control"),
                    "code": error_code(answer["body"]) if status and status != 204 else None,
                    "error": answer.get("error"),
                    "ok": bool(ok),
                }
            if not ok:
                failures[label] += 1

        def json_4xx(answer: dict) -> bool:
            return (
                answer["status"] is not None
                and 400 <= answer["status"] < 500
                and (answer["headers"].get("content-type") or "").startswith("application/json")
                and error_code(answer["body"]) is not None
            )

        # Repeated for a few seconds, so the prober's figures cover them.
        seconds = 3.0 if self.quick else 10.0
        started = time.monotonic()
        while rounds == 0 or time.monotonic() - started < seconds:
            rounds += 1
            self.small_round(port, record, json_4xx)
        for label, count in failures.items():
            self.problem("small", f"{label}: failed {count} of {rounds} times: {checks[label]}")
        self.say(
            "   "
            + "; ".join(
                f"{k}: {v['status']} {v['code'] or ''} {'ok' if v['ok'] else 'FAILED'}" for k, v in checks.items()
            )
            + f" ({rounds} rounds)"
        )
        return {"checks": checks, "rounds": rounds, "failures": dict(failures)}

    def small_round(self, port: int, record, json_4xx) -> None:
        record(
            "header over 64 KB",
            raw_exchange(
                port, f"GET {PREFIX}/status HTTP/1.1\r\nHost: x\r\nX-Long: ".encode() + b"a" * 70_000 + b"\r\n\r\n"
            ),
            json_4xx,
        )
        record(
            "10,000 headers",
            raw_exchange(
                port,
                f"GET {PREFIX}/status HTTP/1.1\r\nHost: x\r\n".encode()
                + b"".join(b"X-H%d: v\r\n" % i for i in range(10_000))
                + b"\r\n",
            ),
            json_4xx,
        )
        query = "&".join(f"p{i}={i}" for i in range(10_000))
        record(
            "10,000 query params",
            raw_exchange(port, f"GET {PREFIX}/online/history?{query} HTTP/1.1\r\nHost: x\r\n\r\n".encode()),
            json_4xx,
        )
        record(
            "static Range past the end",
            http_get(port, "/static/style.css", self.addresses.next("misc"), headers={"Range": "bytes=100000000-"}),
            lambda a: (
                a["status"] == 416
                and json_4xx(a)
                and any(t in (a["headers"].get("cache-control") or "") for t in ("no-store", "max-age=0"))
            ),
        )
        record(
            "OPTIONS on a site route",
            http_get(port, "/", self.addresses.next("misc"), method="OPTIONS"),
            lambda a: a["status"] is not None and a["status"] < 300 and bool(a["headers"].get("cache-control")),
        )

    def attack_flood(self) -> dict:
        target = 8_000 if self.quick else 40_000
        connections = 32
        if os.path.exists("/usr/bin/wrk") or shutil.which("wrk"):
            generator = WrkGenerator(shutil.which("wrk") or "/usr/bin/wrk", connections, 1, self.workdir, None)
        else:
            generator = PythonGenerator(connections)
        polls: list[dict] = []
        stop = threading.Event()
        flood_end: list[float] = []

        def poll_status() -> None:
            while not stop.is_set():
                started = now()
                answer = http_get(self.main.port, f"{PREFIX}/status", self.addresses.next("misc"), timeout=10)
                data = json_data(answer) or {}
                limiter = data.get("rate_limiter") or {}
                polls.append(
                    {
                        "t": round(started, 2),
                        "status": answer["status"],
                        "ms": answer["ms"],
                        "health": data.get("health"),
                        "degraded": limiter.get("degraded"),
                        "pending_keys": limiter.get("pending_keys"),
                        "flush_lag_s": limiter.get("flush_lag_seconds"),
                        "flush_failures": limiter.get("consecutive_flush_failures"),
                    }
                )
                if (
                    flood_end
                    and (limiter.get("pending_keys") or 0) <= CAUGHT_UP_KEYS
                    and not limiter.get("degraded")
                    and now() - flood_end[0] > self.after_seconds + 2
                ):
                    return
                if flood_end and now() - flood_end[0] > 90:
                    return
                stop.wait(1.0)

        poller = threading.Thread(target=poll_status, daemon=True)
        poller.start()
        runs = []
        done = 0
        seconds = 4 if self.quick else 10
        t0 = now()
        while done < target and len(runs) < 12:
            load = Load(self.main.port, [f"{PREFIX}/online"], pool=1_000_000, base=self.flood_base)
            result = generator.run(load, seconds)
            runs.append(
                {
                    k: result[k]
                    for k in ("requests", "seconds", "p50_ms", "p99_ms", "max_ms", "statuses", "socket_errors")
                }
            )
            done += result["requests"]
            self.flood_base += result["requests"] + 10 * connections
            rate = result["requests"] / max(0.1, result["seconds"])
            seconds = max(1, math.ceil((target - done) / max(rate, 1.0) * 1.1))
        t1 = now()
        flood_end.append(t1)
        statuses = collections.Counter()
        for run in runs:
            statuses.update(run["statuses"])
        during = [p for p in polls if p["t"] < t1]
        figures = {
            "generator": generator.describe(),
            "requests": done,
            "fresh_addresses": done,
            "flood_seconds": round(t1 - t0, 1),
            "flood_rps": round(done / max(0.1, t1 - t0), 1),
            "statuses": dict(statuses),
            "flood_p99_ms": max((r["p99_ms"] for r in runs), default=None),
            "runs": runs,
            "status_during": {
                "polls": len(during),
                "non_200": sum(1 for p in during if p["status"] != 200),
                "max_ms": max((p["ms"] for p in during), default=None),
                "degraded_polls": sum(1 for p in during if p["degraded"]),
                "max_pending_keys": max((p["pending_keys"] or 0 for p in during), default=None),
                "max_flush_lag_s": max((p["flush_lag_s"] or 0 for p in during), default=None),
            },
            "window": (t0, t1),
        }
        self._flood_poller = (poller, stop, polls, t1, figures)
        if done < target:
            self.problem("flood", f"only {done} of {target} requests sent")
        return figures

    def finish_flood(self, result: dict) -> None:
        poller, stop, polls, t1, figures = self._flood_poller
        poller.join(100)
        stop.set()
        after = [p for p in polls if p["t"] >= t1]
        caught = next((p for p in after if (p["pending_keys"] or 0) <= CAUGHT_UP_KEYS), None)
        healthy = next(
            (
                p
                for p in after
                if p["status"] == 200 and not p["degraded"] and (p["pending_keys"] or 0) <= CAUGHT_UP_KEYS
            ),
            None,
        )
        degraded = [p for p in after if p["degraded"]]
        result["status_after"] = {
            "polls": len(after),
            "non_200": sum(1 for p in after if p["status"] != 200),
            "degraded_polls": len(degraded),
            "degraded_from_to_s": [round(degraded[0]["t"] - t1, 1), round(degraded[-1]["t"] - t1, 1)]
            if degraded
            else None,
            "max_pending_keys": max((p["pending_keys"] or 0 for p in after), default=None),
            "max_flush_lag_s": max((p["flush_lag_s"] or 0 for p in after), default=None),
            "pending_keys_caught_up_after_s": round(caught["t"] - t1, 1) if caught else None,
            "not_degraded_again_after_s": round(healthy["t"] - t1, 1) if healthy else None,
            "last": after[-1] if after else None,
        }
        if caught is None:
            self.problem("flood", f"rate-limiter pending keys still above {CAUGHT_UP_KEYS} 90 s after the flood")

    def attack_simultaneous(self) -> dict:
        service = self.side
        accounts = self.simultaneous_accounts
        clients = [self.addresses.next("burst") for _ in accounts]
        barrier = threading.Barrier(len(accounts))

        def one(i: int) -> dict:
            barrier.wait()
            answer = http_get(service.port, f"{PREFIX}/player/{accounts[i]}/{REGION}", clients[i], timeout=60)
            return {
                "status": answer["status"],
                "ms": answer["ms"],
                "started": answer.get("started"),
                "code": error_code(answer["body"]) if answer["status"] != 200 else None,
                "retry_after": answer["headers"].get("retry-after"),
                "error": answer.get("error"),
            }

        t0 = now()
        with concurrent.futures.ThreadPoolExecutor(len(accounts)) as pool:
            rows = list(pool.map(one, range(len(accounts))))
        t1 = now()
        admitted = [r for r in rows if r["status"] not in (429, None)]
        limited = [r for r in rows if r["status"] == 429]
        retry_after = sorted({int(r["retry_after"]) for r in limited if r["retry_after"]})
        figures = {
            "lookups": len(rows),
            "admitted": len(admitted),
            "ok_200": sum(1 for r in rows if r["status"] == 200),
            "rejected_429": len(limited),
            "rejection_codes": dict(collections.Counter(r["code"] for r in limited)),
            "other": dict(
                collections.Counter(
                    f"{r['status']} {r['code'] or r['error']}" for r in rows if r["status"] not in (200, 429)
                )
            ),
            "retry_after_s": retry_after,
            "admitted_p50_ms": pct([r["ms"] for r in admitted], 50),
            "admitted_max_ms": max((r["ms"] for r in admitted), default=None),
            "window": (t0, t1),
            "defer_live_check": True,
        }
        if len(admitted) != LIVE_GLOBAL:
            self.problem(
                "simultaneous",
                f"{len(admitted)} of {len(rows)} simultaneous lookups admitted (expected exactly {LIVE_GLOBAL})",
            )
        if retry_after and max(retry_after) > 60:
            self.problem("simultaneous", f"Retry-After up to {max(retry_after)} s (promised <= 60)")
        wait_until = time.monotonic() + (max(retry_after) if retry_after else 0) + 1
        self.say(
            f"   {len(admitted)} admitted, {figures['ok_200']} x 200, 429 x {len(limited)}, Retry-After {retry_after}"
        )
        self.deferred.append(("simultaneous", wait_until))
        return figures
