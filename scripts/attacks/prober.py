"""The prober: its own process requesting the cached player 20 times a second, and its records."""

from __future__ import annotations

import asyncio
import collections
import json
import os
import signal
import subprocess
import sys
import time

from scripts.loadkit.processes import Children

from .common import PROBER_ADDRESSES, PROBER_RATE, error_code, pct


def prober_main(port: int, path: str, rate: float, out_path: str) -> None:
    async def main():
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        out = open(out_path, "a", buffering=1)
        pending: set[asyncio.Task] = set()

        async def one(n: int) -> None:
            i = n % PROBER_ADDRESSES
            client = f"198.18.{i >> 8}.{i & 255}"
            started_wall, started = time.time(), time.perf_counter()
            status, code, writer = None, None, None
            try:
                reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 15)
                writer.write(
                    f"GET {path} HTTP/1.1\r\nHost: prober\r\nX-Forwarded-For: {client}\r\n"
                    "Connection: close\r\n\r\n".encode()
                )
                data = await asyncio.wait_for(reader.read(), 15)
                if data.startswith(b"HTTP/1."):
                    status = int(data[9:12])
                    if status != 200:
                        code = error_code(data.partition(b"\r\n\r\n")[2])
                else:
                    status = "no_answer"
            except TimeoutError:
                status = "timeout"
            except OSError as exc:
                status = "connection_error"
                code = type(exc).__name__
            finally:
                if writer is not None:
                    writer.close()
            ms = 1000.0 * (time.perf_counter() - started)
            out.write(json.dumps([round(started_wall, 3), status, round(ms, 2), code]) + "\n")

        begun = time.monotonic()
        n = 0
        while not stop.is_set():
            delay = begun + n / rate - time.monotonic()
            if delay > 0:
                try:
                    await asyncio.wait_for(stop.wait(), delay)
                    break
                except TimeoutError:
                    pass
            task = asyncio.ensure_future(one(n))
            pending.add(task)
            task.add_done_callback(pending.discard)
            n += 1
        if pending:
            await asyncio.wait(list(pending), timeout=16)
        out.close()

    asyncio.run(main())


class Prober:
    def __init__(self, children: Children, name: str, port: int, path: str, workdir: str, rate: float = PROBER_RATE):
        self.name = name
        self.path = path
        self.out = os.path.join(workdir, f"prober-{name}.jsonl")
        open(self.out, "w").close()
        cmd = [sys.executable, "-m", "scripts.attacks", "--prober", str(port), path, str(rate), self.out]
        self.proc = children.spawn(f"prober-{name}", cmd)

    def records(self, since: float | None = None, until: float | None = None) -> list[list]:
        rows = []
        with open(self.out) as handle:
            for line in handle:
                try:
                    row = json.loads(line)
                except ValueError:
                    continue  # a line being written
                if (since is None or row[0] >= since) and (until is None or row[0] < until):
                    rows.append(row)
        rows.sort(key=lambda r: r[0])
        return rows

    def stats(self, since: float, until: float) -> dict:
        return summarize(self.records(since, until))

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)


def summarize(rows: list[list]) -> dict:
    latencies = [r[2] for r in rows]
    statuses = collections.Counter(str(r[1]) for r in rows)
    codes = collections.Counter(f"{r[1]} {r[3]}" for r in rows if r[1] != 200)
    return {
        "requests": len(rows),
        "p50_ms": pct(latencies, 50),
        "p99_ms": pct(latencies, 99),
        "max_ms": round(max(latencies), 2) if latencies else None,
        "non_200": len(rows) - statuses.get("200", 0),
        "statuses": dict(statuses),
        "non_200_kinds": dict(codes),
    }
