"""Fault injection against the real entry point (`python -m server` as a child process).

* the database stops under load: only 503 database_unavailable, never another 5xx, never a
  hang; it comes back: 200 again without restarting the service;
* the upstream is slow, hangs or fails: live lookups answer 503 upstream_unavailable with
  Retry-After (before a generous client timeout), cached profiles keep answering 200;
* SIGTERM under load: every accepted request gets a complete answer, the process exits 0
  within the grace period, and no half-written documents are left in the database.

Every test is bounded (well under 60 s). The only timing assertions are "answered before a
generous client timeout"; measured durations are printed (run with -s to see them).
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from scripts.upstream_sim import existing_accounts
from server.compose.embedded_db import EmbeddedDatabase
from tests.helpers import Answer, ServerProcess, free_port, request, sim, wait_until

CLIENT_TIMEOUT = 60.0  # "generous": anything slower counts as a hang
CACHED_TIMEOUT = 5.0  # a cache hit must not wait on the upstream at all
SLOW_LIVE_LOOKUP = 15.0  # a public API should give up on its upstream faster than this
SHUTDOWN_GRACE = 10.0  # server.contract.config.Config.shutdown_grace


# --- helpers ------------------------------------------------------------------------
def assert_no_traceback(server: ServerProcess) -> None:
    text = server.log_path.read_text(errors="replace")
    assert "Traceback" not in text, text[-6000:]


# --- the database stops under load -------------------------------------------------
class Load:
    """`workers` threads looping GETs over `paths` until stopped; every answer is kept."""

    def __init__(self, port, paths, workers=20):
        self.port, self.paths, self.workers = port, paths, workers
        self.answers: list[Answer] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(workers)]

    def _run(self, index):
        n = index
        while not self._stop.is_set():
            answer = request(self.port, self.paths[n % len(self.paths)], timeout=30)
            with self._lock:
                self.answers.append(answer)
            n += 1
            time.sleep(0.02)

    def start(self):
        for thread in self._threads:
            thread.start()
        return self

    def since(self, t0) -> list[Answer]:
        with self._lock:
            return [a for a in self.answers if a.started >= t0]

    def stop(self):
        self._stop.set()
        for thread in self._threads:
            thread.join(40)


def test_database_stopped_under_load_then_restarted(tmp_path, upstream_sim):
    from pymongo import MongoClient

    sim(upstream_sim, "/_sim/faults", {"reset": True})
    database = EmbeddedDatabase(str(tmp_path / "db"), port=free_port()).start()
    server = None
    load = None
    try:
        account = existing_accounts("eu", 1, start=500_300_000)[0]
        with MongoClient(database.uri) as client:
            client["x"]["snapshots"].insert_one(
                {
                    "region": "eu",
                    "account_id": 500000001,
                    "date": time.strftime("%Y-%m-%d", time.gmtime()),
                    "taken_at": int(time.time()),
                    "battles": 10,
                    "wins": 6,
                    "damage_dealt": 9000,
                    "frags": 8,
                    "spotted": 5,
                    "xp": 4000,
                    "wn8": 1500.0,
                }
            )
        server = ServerProcess(
            tmp_path,
            "--mongodb-uri",
            database.uri,
            "--db-name",
            "x",
            "--upstream-base-url",
            upstream_sim,
            "--no-jobs",
            "--rate-limit-scale",
            1000,
        )
        assert request(server.port, f"/api/v1/player/{account}/eu").status == 200  # now cached
        paths = [
            f"/api/v1/player/{account}/eu",
            "/api/v1/player/500000001/eu/history",
            "/api/v1/clan/500000/eu",
            "/api/v1/clan/500000/eu/weekly",
            "/api/v1/online",
            "/api/v1/online/history",
            "/api/v1/status",
        ]
        load = Load(server.port, paths, workers=20).start()
        time.sleep(1.5)
        t_stop = time.monotonic()
        database.stop()
        t_stopped = time.monotonic()
        # Under load the outage must show up as 503 database_unavailable on every data path.
        assert wait_until(
            lambda: {a.path for a in load.since(t_stopped) if a.code == "database_unavailable"} >= set(paths[1:4]), 20
        ), load.since(t_stopped)[-20:]
        time.sleep(2)
        t_restart = time.monotonic()
        database.start()
        t_started = time.monotonic()
        # Recovered without restarting the service: every data path answers 200 again.
        assert wait_until(
            lambda: (
                {a.path for a in load.since(t_started) if a.status == 200}
                >= {paths[0], paths[1], paths[4], paths[5], paths[6]}
            ),
            30,
        ), load.since(t_started)[-20:]
        # Then it stays recovered: the last second checked below starts well after the switch
        # (the driver's next heartbeat, within 0.5 s of the database's return).
        time.sleep(1.5)
        load.stop()
        answers = list(load.answers)

        hung = [a for a in answers if a.error]
        assert not hung, hung[:10]  # every request got a complete answer before the client timeout
        unexpected = [
            a
            for a in answers
            if not (
                (a.status == 200 and a.json["success"] is True)
                or (a.status == 503 and a.code == "database_unavailable")
                or (a.status == 404 and a.code in ("clan_not_cached", "no_digest"))
            )
        ]
        assert not unexpected, unexpected[:10]
        for a in answers:
            if a.status == 503:
                assert "no-store" in a.headers["cache-control"]
                assert a.headers["content-type"] == "application/json; charset=utf-8"
        # /status never fails: it reports the outage instead.
        assert all(a.status == 200 for a in answers if a.path == "/api/v1/status")
        outage = [a for a in answers if t_stopped <= a.started < t_restart and a.status == 503]
        assert outage
        slowest = max(a.elapsed for a in outage)
        print(
            f"\n{len(answers)} requests; {len(outage)} x 503 during the outage "
            f"(slowest {slowest:.2f}s, median {sorted(a.elapsed for a in outage)[len(outage) // 2]:.2f}s); "
            f"database stop took {t_stopped - t_stop:.1f}s; recovered "
            f"{min((a.started for a in answers if a.started >= t_started and a.status == 200), default=0) - t_started:.2f}s "
            "after the database was back"
        )
        by_path = {}
        for a in outage:
            by_path.setdefault(a.path, []).append(a.elapsed)
        for path, times in sorted(by_path.items()):
            print(f"  503 {path}: {len(times)} answers, slowest {max(times):.2f}s")
        if slowest > 2.5:
            print(
                f"FINDING: under {load.workers} concurrent requests a 503 took up to {slowest:.1f}s "
                "(DESIGN: about 2 s); it grows with concurrency"
            )
        # The stats of the last second: all healthy again.
        tail = [a for a in answers if a.started >= time.monotonic() - 1.0]
        assert all(a.status in (200, 404) for a in tail), tail[:10]
        assert_no_traceback(server)
    finally:
        if load is not None:
            load.stop()
        if server is not None:
            server.stop()
        database.stop()


# --- the upstream is slow, hangs or fails ------------------------------------------
@pytest.fixture
def faulty_upstream(upstream_sim):
    sim(upstream_sim, "/_sim/faults", {"reset": True})
    yield upstream_sim
    sim(upstream_sim, "/_sim/faults", {"reset": True})  # also releases hanging requests


FAULTS = {
    # 6 s > the client's 5-s request timeout, so every attempt times out (5 s would race it).
    "slow": {"latency_ms": 6000},
    "hang": {"timeout_rate": 1.0, "hang_seconds": 30},
    "failing": {"error_rate": 1.0},
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_upstream_fault_live_lookup_503_cached_stays_fast(tmp_path, mongo_uri, faulty_upstream, fault):
    accounts = existing_accounts("eu", 3, start=500_200_000 + 1000 * list(FAULTS).index(fault))
    cached, live = accounts[0], accounts[1:]
    server = ServerProcess(
        tmp_path,
        "--mongodb-uri",
        mongo_uri,
        "--db-name",
        "f_" + uuid.uuid4().hex[:10],
        "--upstream-base-url",
        faulty_upstream,
        "--no-jobs",
        "--rate-limit-scale",
        1000,
    )
    try:
        first = request(server.port, f"/api/v1/player/{cached}/eu")
        assert first.status == 200 and first.json["data"]["live_fetched"] is True
        time.sleep(0.5)  # the background rating calculation has had its upstream calls
        sim(faulty_upstream, "/_sim/faults", FAULTS[fault])

        with ThreadPoolExecutor(4) as pool:
            lookups = [pool.submit(request, server.port, f"/api/v1/player/{a}/eu") for a in live]
            # While live lookups wait on the upstream, the cached profile answers at once.
            cached_answers = []
            while True:
                cached_answers.append(request(server.port, f"/api/v1/player/{cached}/eu", timeout=CACHED_TIMEOUT))
                if all(f.done() for f in lookups):
                    break
                time.sleep(0.5)
            answers = [f.result() for f in lookups]

        for answer in answers:
            assert answer.error is None, answer  # no hang: answered before the 60-s client timeout
            assert answer.status == 503, (answer, answer.body)
            assert answer.code == "upstream_unavailable"
            assert answer.json["success"] is False and "data" not in answer.json
            assert int(answer.headers["retry-after"]) >= 1
            assert "no-store" in answer.headers["cache-control"]
            assert b"test-app-id-secret" not in answer.body and b"application_id" not in answer.body
        assert cached_answers
        for answer in cached_answers:
            assert answer.error is None, answer
            assert answer.status == 200 and answer.json["data"]["account_id"] == cached
            assert answer.json["data"]["live_fetched"] is False
        slowest = max(a.elapsed for a in answers)
        print(
            f"\nupstream {fault}: live lookup -> 503 upstream_unavailable in "
            f"{', '.join(f'{a.elapsed:.2f}s' for a in answers)} (Retry-After {answers[0].headers['retry-after']}); "
            f"{len(cached_answers)} cached reads, slowest {max(a.elapsed for a in cached_answers):.3f}s"
        )
        if slowest > SLOW_LIVE_LOOKUP:
            print(
                f"FINDING: a live lookup against a {fault} upstream took {slowest:.1f}s before its 503 "
                f"(> {SLOW_LIVE_LOOKUP:.0f}s); a public API should fail faster"
            )

        # The fault clears: live lookups work again (nothing failed was cached) — once the realm's
        # back-off after timeouts has run out; until then a lookup is a fast 503 saying how long.
        sim(faulty_upstream, "/_sim/faults", {"reset": True})
        again = request(server.port, f"/api/v1/player/{live[0]}/eu")
        if again.status == 503 and fault in ("slow", "hang"):
            assert again.elapsed < CACHED_TIMEOUT and 1 <= int(again.headers["retry-after"]) <= 60, again
            time.sleep(int(again.headers["retry-after"]))
            again = request(server.port, f"/api/v1/player/{live[0]}/eu")
        assert again.status == 200 and again.json["data"]["live_fetched"] is True, again
    finally:
        sim(faulty_upstream, "/_sim/faults", {"reset": True})
        server.stop()
    assert_no_traceback(server)


# --- SIGTERM under load ------------------------------------------------------------
PLAYER_FIELDS = ("region", "account_id", "totals", "cached_at", "expires_at")
SNAPSHOT_FIELDS = ("region", "account_id", "date", "battles")


def test_sigterm_under_load_finishes_in_flight_requests(tmp_path, mongo_uri, faulty_upstream):
    from pymongo import MongoClient

    db_name = "s_" + uuid.uuid4().hex[:10]
    accounts = existing_accounts("eu", 20, start=500_250_000)
    server = ServerProcess(
        tmp_path,
        "--mongodb-uri",
        mongo_uri,
        "--db-name",
        db_name,
        "--upstream-base-url",
        faulty_upstream,
        "--no-jobs",
        "--rate-limit-scale",
        1000,
    )
    try:
        sim(faulty_upstream, "/_sim/faults", {"latency_ms": 1000})
        with ThreadPoolExecutor(len(accounts)) as pool:
            futures = [pool.submit(request, server.port, f"/api/v1/player/{a}/eu") for a in accounts]
            time.sleep(0.7)  # every request has been accepted and is waiting on the upstream
            assert not any(f.done() for f in futures)
            signalled = time.monotonic()
            server.proc.send_signal(signal.SIGTERM)
            answers = [f.result() for f in futures]
            try:
                rc = server.proc.wait(SHUTDOWN_GRACE + 20)
            except subprocess.TimeoutExpired:
                pytest.fail("the server did not exit after SIGTERM:\n" + server.log())
            exited = time.monotonic() - signalled
    finally:
        sim(faulty_upstream, "/_sim/faults", {"reset": True})
        server.stop()

    print(
        f"\nSIGTERM with {len(accounts)} live lookups in flight: answers "
        f"{sorted((a.status for a in answers), key=str)}, last answer "
        f"{max(a.started + a.elapsed for a in answers) - signalled:.2f}s after the signal; exit code {rc} "
        f"after {exited:.2f}s"
    )
    incomplete = [a for a in answers if a.error or a.status is None]
    assert not incomplete, (incomplete, server.log())
    for answer in answers:
        assert answer.status in (200, 503), (answer, answer.body)
        body = answer.json
        if answer.status == 200:
            assert body["success"] is True and body["data"]["live_fetched"] is True
        else:
            assert body["success"] is False and body["error"]["code"] in (
                "upstream_unavailable",
                "database_unavailable",
            )
    assert rc == 0, server.log()
    assert exited < SHUTDOWN_GRACE + 5, f"exit took {exited:.1f}s (grace {SHUTDOWN_GRACE}s)"
    assert_no_traceback(server)

    with MongoClient(mongo_uri) as client:
        db = client[db_name]
        players = list(db["players"].find({}))
        snapshots = list(db["snapshots"].find({}))
    assert len(players) == sum(1 for a in answers if a.status == 200)
    for doc in players:
        missing = [f for f in PLAYER_FIELDS if doc.get(f) is None]
        assert not missing, (missing, doc["_id"])
        assert doc["totals"].get("battles") is not None
    for doc in snapshots:
        missing = [f for f in SNAPSHOT_FIELDS if doc.get(f) is None]
        assert not missing, (missing, doc["_id"])
    assert {d["account_id"] for d in snapshots} == {d["account_id"] for d in players}
