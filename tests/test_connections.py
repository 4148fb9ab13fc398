"""Connection floods and oversized requests against the real entry point (`python -m server`).

* 2,000 idle connections and 50 slowloris connections (a header byte a second) at a 1,024
  file-descriptor limit: another client is still served, the server's CPU is not pegged and its
  log does not explode (issue 12: accept() failed in a busy loop, 314,000 tracebacks in 30 s);
* accept() failing with EMFILE pauses accepting instead of spinning (a small server at a
  128-descriptor limit and no connection cap);
* a 100 MB body is refused (JSON 413) before it is buffered: RSS does not grow;
* a 70 KB header, 10,000 headers and 10,000 query parameters each get an enveloped JSON 4xx.

Bounded in time; the only waits are "eventually, before a generous deadline". Measured figures
are printed (run with -s): e.g. `.venv/bin/python -m pytest -s tests/test_connections.py`.
"""

from __future__ import annotations

import http.client
import os
import resource
import socket
import subprocess
import sys
import threading
import time
import uuid

import pytest
import ujson

from tests.helpers import ROOT, ServerProcess, free_port, wait_for_port, wait_until

CLK_TCK = os.sysconf("SC_CLK_TCK")


# --- helpers ------------------------------------------------------------------------
def cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime + stime


def rss_kb(pid: int) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def limited_server(tmp_path, monkeypatch, nofile: tuple, *args) -> ServerProcess:
    """tests.test_faults.ServerProcess, started under the given RLIMIT_NOFILE (soft, hard)."""
    real_popen = subprocess.Popen

    def popen(*a, **kw):
        kw["preexec_fn"] = lambda: resource.setrlimit(resource.RLIMIT_NOFILE, nofile)
        return real_popen(*a, **kw)

    with monkeypatch.context() as patch:
        patch.setattr(subprocess, "Popen", popen)
        return ServerProcess(tmp_path, *args)


def get(port: int, path: str, source: str = "127.0.0.1", timeout: float = 30.0, headers=None):
    """(status, parsed JSON body) on a fresh connection from `source`; (None, error) on failure."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout, source_address=(source, 0))
    try:
        conn.request("GET", path, headers={"Connection": "close", **(headers or {})})
        response = conn.getresponse()
        body = response.read()
        return response.status, ujson.loads(body) if body else None
    except Exception as exc:
        return None, f"{type(exc).__name__}: {exc}"
    finally:
        conn.close()


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
        return True  # reset
    return data == b"" or data.startswith(b"HTTP/1.1 503")


def raw_exchange(port: int, raw: bytes, timeout: float = 30.0) -> tuple:
    """Send `raw`, read until the server closes; (status, headers, body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        try:
            sock.sendall(raw)
        except OSError:
            pass  # the server answered and stopped reading: the answer is still there to read
        data = b""
        try:
            while chunk := sock.recv(65536):
                data += chunk
        except ConnectionResetError:
            pass
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    assert lines[0].startswith("HTTP/1.1 "), data[:300]
    headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def assert_json_error(status, headers, body, expected_status, code):
    assert status == expected_status, (status, body[:300])
    assert headers["content-type"] == "application/json; charset=utf-8"
    assert headers["access-control-allow-origin"] == "*"
    assert "no-store" in headers["cache-control"]
    parsed = ujson.loads(body)
    assert parsed["success"] is False and "data" not in parsed and parsed["error"]["code"] == code, parsed


# --- floods of connections ------------------------------------------------------------
def test_idle_and_slowloris_flood_at_1024_descriptors(tmp_path, monkeypatch, mongo_uri, upstream_sim):
    server = limited_server(
        tmp_path,
        monkeypatch,
        (1024, 1024),
        "--mongodb-uri",
        mongo_uri,
        "--db-name",
        "c_" + uuid.uuid4().hex[:10],
        "--upstream-base-url",
        upstream_sim,
        "--no-jobs",
        "--rate-limit-scale",
        1000,
    )
    idle: list[socket.socket] = []
    slow: list[socket.socket] = []
    stop = threading.Event()
    try:
        assert get(server.port, "/api/v1/status")[0] == 200
        rss_before = rss_kb(server.pid)
        # 2,000 idle connections from 40 addresses (50 each: under the per-client cap of 64,
        # so the total cap and the descriptor limit are what is tested).
        for i in range(2000):
            idle.append(connect_nowait(server.port, f"127.0.1.{1 + i % 40}"))
        for i in range(50):
            slow.append(connect_nowait(server.port, "127.0.2.1"))
        request_line = b"GET /api/v1/status HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100

        def slowloris():
            n = 0
            while not stop.wait(1.0):
                for sock in slow:
                    try:
                        sock.send(request_line[n % len(request_line) :][:1])
                    except OSError:
                        pass
                n += 1

        threading.Thread(target=slowloris, daemon=True).start()
        time.sleep(2)

        cpu0, t0 = cpu_seconds(server.pid), time.monotonic()
        answers = []
        for _ in range(12):
            answers.append(get(server.port, "/api/v1/status", source="127.0.3.1"))
            time.sleep(0.5)
        cpu1, t1 = cpu_seconds(server.pid), time.monotonic()
        cpu_share = (cpu1 - cpu0) / (t1 - t0)
        statuses = [status for status, _ in answers]
        log_bytes = server.log_path.stat().st_size
        print(
            f"\nflood: other client's statuses {statuses}; server CPU {cpu_share:.0%} of a core over "
            f"{t1 - t0:.1f} s; log {log_bytes} bytes; RSS {rss_before} -> {rss_kb(server.pid)} kB"
        )
        assert statuses.count(200) == len(statuses), answers
        assert cpu_share < 0.5, cpu_share  # a busy accept loop is ~100 %
        assert log_bytes < 200_000, server.log()  # 218 MB in 30 s before

        # Slowloris connections never complete a head: they are closed (10 s head deadline).
        assert wait_until(lambda: all(closed_by_server(s) for s in slow), timeout=40, step=0.5), sum(
            closed_by_server(s) for s in slow
        )
        # The server is still whole: no traceback, the limit it runs under is logged.
        text = server.log_path.read_text(errors="replace")
        assert "Traceback" not in text, text[-6000:]
        assert "file descriptors: 1024" in text, text[-3000:]
    finally:
        stop.set()
        for sock in idle + slow:
            sock.close()
        server.stop()


def test_per_client_connection_cap(tmp_path, monkeypatch, mongo_uri, upstream_sim):
    server = ServerProcess(
        tmp_path,
        "--mongodb-uri",
        mongo_uri,
        "--db-name",
        "c_" + uuid.uuid4().hex[:10],
        "--upstream-base-url",
        upstream_sim,
        "--no-jobs",
        "--rate-limit-scale",
        1000,
    )
    socks = []
    try:
        socks = [connect_nowait(server.port, "127.0.4.1") for _ in range(100)]
        # The 36 over the cap of 64 are closed at once (with a JSON 503 when it could be sent).
        assert wait_until(lambda: sum(closed_by_server(s) for s in socks) >= 36, timeout=20, step=0.2)
        assert sum(closed_by_server(s) for s in socks) <= 40  # the first 64 stay open (give or take)
        assert get(server.port, "/api/v1/status", source="127.0.4.2")[0] == 200
    finally:
        for sock in socks:
            sock.close()
        server.stop()


EMFILE_SERVER = r"""
import asyncio, logging, resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128))
logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
import tornado.web
from server.compose.http import JSONErrorHTTPServer

class Hello(tornado.web.RequestHandler):
    def get(self):
        self.write({"success": True})

async def main():
    server = JSONErrorHTTPServer(tornado.web.Application([(r"/", Hello)]), head_timeout=3.0,
                                 max_connections=100_000, max_connections_per_client=100_000)
    server.listen(int(sys.argv[1]), "127.0.0.1")
    await asyncio.Event().wait()

asyncio.run(main())
"""


def test_accept_backs_off_when_descriptors_run_out(tmp_path):
    """No connection cap, 128 descriptors, 400 connections: EMFILE pauses accepting."""
    port = free_port()
    log_path = tmp_path / "emfile.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-c", EMFILE_SERVER, str(port)], cwd=str(ROOT), stdout=log, stderr=subprocess.STDOUT
        )
    socks = []
    try:
        wait_for_port(port, proc=proc)
        socks = [connect_nowait(port, f"127.0.5.{1 + i % 10}") for i in range(400)]
        time.sleep(1)
        cpu0, t0 = cpu_seconds(proc.pid), time.monotonic()
        time.sleep(3)
        cpu_share = (cpu_seconds(proc.pid) - cpu0) / (time.monotonic() - t0)
        text = log_path.read_text(errors="replace")
        print(f"\nEMFILE: CPU {cpu_share:.0%} of a core; log {len(text)} bytes:\n{text[:600]}")
        assert "accept() failing" in text and "EMFILE" in text, text[-3000:]
        assert cpu_share < 0.5, cpu_share
        assert len(text) < 20_000, text[-3000:]
        assert "Traceback" not in text, text[-3000:]
        for sock in socks:
            sock.close()
        socks = []

        # Once the flood is gone, a client is served again.
        def served():
            status, _ = get(port, "/", timeout=5)
            return status == 200

        assert wait_until(served, timeout=30, step=0.5)
    finally:
        for sock in socks:
            sock.close()
        proc.kill()
        proc.wait(10)


# --- bodies and heads -----------------------------------------------------------------
@pytest.fixture
def plain_server(tmp_path, mongo_uri, upstream_sim):
    server = ServerProcess(
        tmp_path,
        "--mongodb-uri",
        mongo_uri,
        "--db-name",
        "c_" + uuid.uuid4().hex[:10],
        "--upstream-base-url",
        upstream_sim,
        "--no-jobs",
        "--rate-limit-scale",
        1000,
    )
    yield server
    server.stop()


def send_huge_body(port: int, size: int, results: list) -> None:
    head = (
        f"GET /no/such/path HTTP/1.1\r\nHost: x\r\nContent-Length: {size}\r\n"
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    chunk = b"x" * (1 << 20)
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sent = 0
        try:
            sock.sendall(head)
            while sent < size:
                sent += sock.send(chunk[: size - sent])
        except OSError:
            pass  # refused: the server stopped reading
        data = b""
        try:
            while part := sock.recv(65536):
                data += part
        except OSError:
            pass
        results.append((sent, data))


def test_huge_bodies_refused_before_buffering(plain_server):
    port, pid = plain_server.port, plain_server.pid
    assert get(port, "/api/v1/status")[0] == 200
    before = rss_kb(pid)
    results: list = []
    threads = [threading.Thread(target=send_huge_body, args=(port, 100 << 20, results)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    after = rss_kb(pid)
    print(
        f"\n8 x 100 MB bodies: RSS {before} -> {after} kB; bytes sent before refusal "
        f"{sorted(sent for sent, _ in results)}"
    )
    assert len(results) == 8
    for sent, data in results:
        head, _, body = data.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 413 "), data[:300]
        assert ujson.loads(body)["error"]["code"] == "payload_too_large"
    assert after - before < 20 * 1024, (before, after)
    assert get(port, "/api/v1/status")[0] == 200


def test_oversized_heads_answer_json(plain_server):
    port = plain_server.port
    long_header = b"GET /api/v1/status HTTP/1.1\r\nHost: x\r\nX-Long: " + b"a" * 70_000 + b"\r\n\r\n"
    assert_json_error(*raw_exchange(port, long_header), 431, "request_too_large")

    many_headers = (
        b"GET /api/v1/status HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(10_000)) + b"\r\n"
    )
    assert_json_error(*raw_exchange(port, many_headers), 431, "request_too_large")

    few_but_many_lines = b"GET /api/v1/status HTTP/1.1\r\n" + b"A: b\r\n" * 200 + b"\r\n"  # 1.4 KB
    assert_json_error(*raw_exchange(port, few_but_many_lines), 431, "request_too_large")

    query = "&".join(f"p{i}={i}" for i in range(10_000))
    many_params = f"GET /api/v1/online/history?{query} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    assert_json_error(*raw_exchange(port, many_params), 431, "request_too_large")

    huge_line = b"GET /api/v1/status?" + b"a" * 1_000_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"
    assert_json_error(*raw_exchange(port, huge_line), 431, "request_too_large")

    assert get(port, "/api/v1/status")[0] == 200
    assert "Traceback" not in plain_server.log_path.read_text(errors="replace")


def test_fd_limit_raised_to_hard_limit():
    code = "from server.compose.http import raise_fd_limit; print(raise_fd_limit())"
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=str(ROOT),
        capture_output=True,
        text=True,
        timeout=30,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (256, 4096)),
    )
    assert out.stdout.strip() == "4096", out


# --- a full server --------------------------------------------------------------------
CAPPED_SERVER = EMFILE_SERVER.replace("resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128))\n", "").replace(
    "max_connections=100_000", "max_connections=4"
)


def test_full_server_sheds_only_connections_that_waited(tmp_path):
    """At the connection cap, a newcomer may close an idle connection only once it has waited
    SHED_MIN_WAIT for its head; otherwise the newcomer reads a JSON 503 (not a reset). So a
    client that has just connected is not shed by a churn of newcomers (issue 12: a legitimate
    connection was reset right after the connection-exhaustion attack)."""
    from server.compose.http import SHED_MIN_WAIT

    port = free_port()
    with open(tmp_path / "capped.log", "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-c", CAPPED_SERVER, str(port)], cwd=str(ROOT), stdout=log, stderr=subprocess.STDOUT
        )
    socks: list[socket.socket] = []
    try:
        wait_for_port(port, proc=proc)
        time.sleep(0.3)  # the readiness probe's connection is gone
        socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(4)]  # idle: the server is full
        time.sleep(0.05)
        status, body = get(port, "/", timeout=10)
        assert status == 503 and body["error"]["code"] == "too_many_connections", (status, body)

        time.sleep(SHED_MIN_WAIT + 0.2)  # now the idle ones have waited long enough to be shed
        legit = socket.create_connection(("127.0.0.1", port), timeout=10)  # takes an idle one's place
        churn = [connect_nowait(port, "127.0.0.1") for _ in range(10)]  # shed the other idle ones, then refused
        socks += churn
        time.sleep(0.1)
        legit.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = b""
        while part := legit.recv(65536):
            answer += part
        legit.close()
        assert answer.startswith(b"HTTP/1.1 200 "), answer[:300]
    finally:
        for sock in socks:
            sock.close()
        proc.kill()
        proc.wait(10)
