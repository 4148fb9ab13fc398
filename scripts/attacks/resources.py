"""Attacks on the service's resources: cold history reads, idle and slowloris connections, huge bodies."""

from __future__ import annotations

import collections
import concurrent.futures
import datetime as dt
import socket
import threading
import time

from scripts.loadkit.processes import rss_mb
from server.contract.catalogue import MAX_DAYS, PREFIX
from store.constants import REGIONS

from .common import (
    DAY,
    closed_by_server,
    connect_nowait,
    error_code,
    http_get,
    json_data,
    now,
    pct,
)
from .procfs import CpuMeter, fd_limits, open_fds


class ResourceAttacks:
    """Mixed into Attacks (harness.py): self is the run."""

    def seed_online_year(self) -> dict:
        """A compact year of online samples for wot, inserted directly; the history made cold."""
        db = self.main.db()
        coll = db["online_samples"]
        fine_days = 1 if self.quick else 7
        coarse_step = 360 if self.quick else 60  # minutes between samples on older days
        today = dt.datetime.combine(dt.datetime.now(dt.UTC).date(), dt.time(), dt.UTC)
        docs = []
        for d in range(1, MAX_DAYS + 1):
            day = today - d * DAY
            step = 1 if d <= fine_days else coarse_step
            for minute in range(0, 1440, step):
                at = day + dt.timedelta(minutes=minute)
                for region in REGIONS:
                    for server, players in (("A", 1000 + minute), ("B", 500 + d % 7)):
                        docs.append(
                            {
                                "minute": at,
                                "meta": {"game": "wot", "region": region, "server": server},
                                "players": players,
                            }
                        )
        started = time.perf_counter()
        for start in range(0, len(docs), 5000):
            coll.insert_many(docs[start : start + 5000], ordered=False)
        seconds = time.perf_counter() - started
        first = today - MAX_DAYS * DAY
        # What the sampler's record_minute keeps for every stored minute ($min first_minute): set here
        # because the samples were inserted directly.
        for region in REGIONS:
            db["online_status"].update_one(
                {"_id": f"wot:{region}"},
                {"$min": {"first_minute": first}, "$setOnInsert": {"game": "wot", "region": region}},
                upsert=True,
            )
        # The online_daily job materialised "known gaps" at start (no samples existed then): drop them
        # so every finished day is cold again.
        dropped = db["online_daily"].delete_many({"_id": {"$regex": "^wot:"}}).deleted_count
        return {
            "samples": len(docs),
            "insert_seconds": round(seconds, 1),
            "insert_rate_per_s": round(len(docs) / max(seconds, 1e-3)),
            "shape": f"{MAX_DAYS} finished days x {len(REGIONS)} regions x 2 servers; every minute on the newest {fine_days} day(s), "
            f"every {coarse_step} min before",
            "online_daily_docs_dropped": dropped,
            "collection_options": {k: str(v) for k, v in coll.options().items()},
        }

    def attack_heavy_reads(self, seeding: dict) -> dict:
        port = self.main.port
        bursts = []
        sizes = (8, 32) if self.quick else (8, 32, 64)
        t0 = now()
        for size in sizes:
            days = [self.history_days - i for i in range(size)]
            self.history_days -= size
            clients = [self.addresses.next("burst") for _ in range(size)]
            barrier = threading.Barrier(size)

            def one(i: int, days=days, clients=clients, barrier=barrier) -> dict:
                barrier.wait()
                answer = http_get(port, f"{PREFIX}/online/history?region=eu&days={days[i]}", clients[i], timeout=60)
                data = json_data(answer) if answer["status"] == 200 else None
                return {
                    "days": days[i],
                    "status": answer["status"],
                    "ms": answer["ms"],
                    "code": error_code(answer["body"]) if answer["status"] != 200 else None,
                    "retry_after": answer["headers"].get("retry-after"),
                    "error": answer.get("error"),
                    "days_with_samples": sum(1 for row in data["series"] if row.get("samples")) if data else None,
                }

            with concurrent.futures.ThreadPoolExecutor(size) as pool:
                rows = list(pool.map(one, range(size)))
            statuses = collections.Counter(str(r["status"]) for r in rows)
            filled = [r["days_with_samples"] for r in rows if r["days_with_samples"] is not None]
            bursts.append(
                {
                    "concurrent": size,
                    "days": f"{days[-1]}..{days[0]}",
                    "statuses": dict(statuses),
                    "ok_200": statuses.get("200", 0),
                    "503": statuses.get("503", 0),
                    "codes": dict(collections.Counter(r["code"] for r in rows if r["code"])),
                    "p50_ms": pct([r["ms"] for r in rows], 50),
                    "p99_ms": pct([r["ms"] for r in rows], 99),
                    "max_ms": max(r["ms"] for r in rows),
                    "retry_after_s": sorted({r["retry_after"] for r in rows if r["retry_after"]}),
                    "days_with_samples_in_200s": [min(filled), max(filled)] if filled else None,
                    "errors": [r["error"] for r in rows if r["error"]][:3],
                }
            )
            b = bursts[-1]
            self.say(
                f"   {size} concurrent: {b['statuses']} p50 {b['p50_ms']} ms max {b['max_ms']} ms, "
                f"days with samples {b['days_with_samples_in_200s']}"
            )
            other = {k: v for k, v in statuses.items() if k not in ("200", "503")}
            if other:
                self.problem("heavy_reads", f"{size} concurrent: unexpected statuses {other}")
            time.sleep(2)
        # The same request again once the burst is over: served from what was computed / materialised.
        again = http_get(
            port, f"{PREFIX}/online/history?region=eu&days={MAX_DAYS}", self.addresses.next("burst"), timeout=60
        )
        # One cold request at a time for all regions (the endpoint's default region), twice: does a lone
        # cold request succeed, and does the second one profit from the first?
        alone = []
        for _ in range(2):
            time.sleep(2)
            answer = http_get(
                port, f"{PREFIX}/online/history?days={self.history_days}", self.addresses.next("burst"), timeout=60
            )
            alone.append(
                {
                    "days": self.history_days,
                    "status": answer["status"],
                    "ms": answer["ms"],
                    "code": error_code(answer["body"]) if answer["status"] != 200 else None,
                }
            )
        self.history_days -= 1
        return {
            "seeding": seeding,
            "bursts": bursts,
            "window": (t0, now()),
            f"repeat_eu_days_{MAX_DAYS}": {"status": again["status"], "ms": again["ms"]},
            "lone_cold_all_regions": alone,
        }

    def attack_connections(self) -> dict:
        service = self.conn_service
        port = service.port
        seconds = 12 if self.quick else 30
        limits = fd_limits(service.pid)
        status_before = service.status(self.addresses.next("misc")) or {}
        idle: list[socket.socket] = []
        slow: list[socket.socket] = []
        counts = collections.Counter()
        stop = threading.Event()
        request_line = f"GET {PREFIX}/status HTTP/1.1\r\nHost: x\r\nX-Slow: ".encode() + b"a" * 200

        def slowloris() -> None:
            n = 0
            while not stop.wait(1.0):
                for i, sock in enumerate(slow):
                    if closed_by_server(sock):
                        counts["slowloris_closed_by_server"] += 1
                        sock.close()
                        slow[i] = connect_nowait(port, "127.0.2.1")
                        continue
                    try:
                        sock.send(request_line[n % len(request_line) :][:1])
                    except OSError:
                        pass
                n += 1

        t0 = now()
        meter = CpuMeter({"service": service.pid, "db": service.db_pid})
        log_before = service.log_size()
        try:
            for i in range(2000):
                idle.append(connect_nowait(port, f"127.0.1.{1 + i % 40}"))
            for _ in range(50):
                slow.append(connect_nowait(port, "127.0.2.1"))
            threading.Thread(target=slowloris, daemon=True).start()
            deadline = time.monotonic() + seconds
            peak_fds = 0
            while time.monotonic() < deadline:
                time.sleep(1.0)
                peak_fds = max(peak_fds, open_fds(service.pid) or 0)
                for i, sock in enumerate(idle):
                    if closed_by_server(sock):
                        counts["idle_closed_by_server"] += 1
                        sock.close()
                        idle[i] = connect_nowait(port, f"127.0.1.{1 + i % 40}")
            cpu = meter.cores()
            t1 = now()
            status_during = service.status(self.addresses.next("misc")) or {}
        finally:
            stop.set()
            for sock in idle + slow:
                sock.close()
        log_text = service.log_text(log_before)
        return {
            "service_fd_limit": limits,
            "max_connections": (status_before.get("connections") or {}).get("max"),
            "attack_seconds": seconds,
            "idle_connections": 2000,
            "slowloris_connections": 50,
            "idle_reopened": counts["idle_closed_by_server"],
            "slowloris_closed_by_server": counts["slowloris_closed_by_server"],
            "service_cpu_during_cores": cpu["service"],
            "db_cpu_during_cores": cpu["db"],
            "service_open_fds_peak": peak_fds,
            "log_growth_bytes": service.log_size() - log_before,
            "log_lines": log_text.count("\n"),
            "connections_status_at_end": status_during.get("connections"),
            "window": (t0, t1),
        }

    def attack_bodies(self) -> dict:
        port, pid = self.main.port, self.main.pid
        size = 100 << 20
        results: list = []
        rss_samples: list[float] = []
        stop = threading.Event()

        def sample() -> None:
            while not stop.wait(0.05):
                value = rss_mb(pid)
                if value is not None:
                    rss_samples.append(value)

        def send(index: int) -> None:
            head = (
                f"GET /no/such/path/{index} HTTP/1.1\r\nHost: x\r\nContent-Length: {size}\r\n"
                "Content-Type: application/octet-stream\r\n\r\n"
            ).encode()
            chunk = b"x" * (1 << 20)
            sent, data = 0, b""
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
                    try:
                        sock.sendall(head)
                        while sent < size:
                            sent += sock.send(chunk[: size - sent])
                    except OSError:
                        pass  # refused: the server stopped reading
                    try:
                        while part := sock.recv(65536):
                            data += part
                    except OSError:
                        pass
            except OSError as exc:
                data = f"connect failed: {exc}".encode()
            results.append((sent, data))

        time.sleep(0.5)
        before = rss_mb(pid)
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        threads = [threading.Thread(target=send, args=(i,)) for i in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        time.sleep(1.0)
        stop.set()
        after = rss_mb(pid)
        statuses = collections.Counter()
        for _, data in results:
            head, _, body = data.partition(b"\r\n\r\n")
            status = head[9:12].decode(errors="replace") if head.startswith(b"HTTP/1.") else "no answer"
            statuses[f"{status} {error_code(body)}"] += 1
        growth = round((after or 0) - (before or 0), 1)
        if growth > 50:
            self.problem("bodies", f"service RSS grew {growth} MB")
        if set(statuses) != {"413 payload_too_large"}:
            self.problem("bodies", f"answers: {dict(statuses)}")
        return {
            "bodies": len(results),
            "body_mb": size >> 20,
            "answers": dict(statuses),
            "bytes_sent_before_refusal_mb": sorted(round(sent / (1 << 20), 1) for sent, _ in results),
            "rss_before_mb": before,
            "rss_peak_mb": max(rss_samples) if rss_samples else None,
            "rss_after_mb": after,
            "rss_growth_mb": growth,
        }
