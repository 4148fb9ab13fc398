"""Attacks on the database: kill -9, SIGSTOP, and retention over a million snapshots."""

from __future__ import annotations

import collections
import concurrent.futures
import datetime as dt
import os
import signal
import threading
import time

from server.contract.catalogue import PREFIX
from store.constants import REGIONS

from .common import (
    DAY,
    REGION,
    error_code,
    http_get,
    json_data,
    now,
)
from .prober import summarize
from .procfs import CpuMeter, proc_state


class DatabaseAttacks:
    """Mixed into Attacks (harness.py): self is the run."""

    def wait_recovered(
        self, since: float, timeout: float, steady: int = 20, expect_failure: bool = True
    ) -> float | None:
        """The start of the prober's first run of `steady` consecutive 200s after its last non-200 since
        `since` (with `expect_failure`, only once a non-200 was seen, or 20 s went by without one)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            rows = self.prober.records(since)
            failures = [r for r in rows if r[1] != 200]
            if failures or not expect_failure:
                tail = [r for r in rows if not failures or r[0] > failures[-1][0]]
                if len(tail) >= steady:
                    return tail[0][0]
            elif rows and now() - since > 20:
                return since  # never failed
            time.sleep(0.25)
        return None

    def attack_kill_db(self) -> dict:
        service = self.main
        before = json_data(http_get(service.port, self.player_path, self.addresses.next("misc"))) or {}
        old_pid = service.db_pid
        status_polls = []
        stop = threading.Event()

        def poll() -> None:
            while not stop.wait(0.5):
                data = service.status(self.addresses.next("misc")) or {}
                status_polls.append(
                    {
                        "t": now(),
                        "health": data.get("health"),
                        "reachable": (data.get("database") or {}).get("reachable"),
                        "embedded": data.get("embedded_database"),
                    }
                )

        t_kill = now()
        os.kill(old_pid, signal.SIGKILL)
        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
        recovered_at = self.wait_recovered(t_kill, 60 if self.quick else 120)
        stop.set()
        poller.join(15)
        time.sleep(1.0)
        rows = self.prober.records(t_kill)
        failures = [r for r in rows if r[1] != 200]
        new_pid = service.db_pid
        final = service.status(self.addresses.next("misc")) or {}
        after = json_data(http_get(service.port, self.player_path, self.addresses.next("misc"))) or {}
        same = {k: before.get(k) == after.get(k) for k in ("statistics", "ratings", "cached_at", "nickname")}
        old_state = proc_state(old_pid)
        figures = {
            "killed_pid": old_pid,
            "new_pid": new_pid,
            "old_pid_state": old_state or "gone (reaped)",
            "service_pid_unchanged_and_running": service.proc.poll() is None,
            "first_non_200_after_s": round(failures[0][0] - t_kill, 2) if failures else None,
            "last_non_200_after_s": round(failures[-1][0] - t_kill, 2) if failures else None,
            "non_200_seconds": round(failures[-1][0] - failures[0][0], 2) if failures else 0.0,
            "non_200_kinds": dict(collections.Counter(f"{r[1]} {r[3]}" for r in failures)),
            "max_ms_while_down": max((r[2] for r in failures), default=None),
            "back_to_200_after_s": round(recovered_at - t_kill, 2) if recovered_at else None,
            "embedded_database_at_end": final.get("embedded_database"),
            "status_health_seen": sorted({str(p["health"]) for p in status_polls}),
            "status_states_seen": sorted({str((p["embedded"] or {}).get("state")) for p in status_polls}),
            "player_data_unchanged": same,
            "window": (t_kill, recovered_at or now()),
        }
        if recovered_at is None:
            self.problem("kill_db", "data endpoints did not return to 200 without a restart")
        if not figures["service_pid_unchanged_and_running"]:
            self.problem("kill_db", "the service process exited")
        if old_state == "Z":
            self.problem("kill_db", "the killed database is a zombie")
        if not all(same.values()):
            self.problem("kill_db", f"player data changed across the restart: {same}")
        if (final.get("embedded_database") or {}).get("restarts", 0) < 1:
            self.problem("kill_db", f"/status embedded_database: {final.get('embedded_database')}")
        self.say(
            f"   503 for {figures['non_200_seconds']} s ({figures['non_200_kinds']}), 200 again after "
            f"{figures['back_to_200_after_s']} s; restarts {(final.get('embedded_database') or {}).get('restarts')}"
        )
        return figures

    def attack_sigstop_db(self) -> dict:
        service = self.main
        pid = service.db_pid
        stop_seconds = 5.0 if self.quick else 10.0
        paths = [
            self.player_path,
            f"{self.player_path}/history",
            f"{PREFIX}/online",
            f"{PREFIX}/online/history?region=na&days=7",
            f"{PREFIX}/status",
        ]
        bursts: list[dict] = []

        def burst(label: str) -> None:
            lookup = f"{PREFIX}/player/{self.live_accounts.popleft()}/{REGION}"
            with concurrent.futures.ThreadPoolExecutor(len(paths) + 1) as pool:
                answers = list(
                    pool.map(
                        lambda p: (p, http_get(service.port, p, self.addresses.next("misc"), 30)), paths + [lookup]
                    )
                )
            for path, answer in answers:
                bursts.append(
                    {
                        "at": label,
                        "path": path if path != lookup else "uncached player (live lookup)",
                        "status": answer["status"],
                        "ms": answer["ms"],
                        "code": error_code(answer["body"]) if answer["status"] != 200 else None,
                    }
                )

        t_stop = now()
        os.kill(pid, signal.SIGSTOP)
        try:
            time.sleep(1.0)
            burst("stop+1s")
            time.sleep(max(0.0, t_stop + stop_seconds / 2 - now()))
            burst(f"stop+{stop_seconds / 2:.0f}s")
            time.sleep(max(0.0, t_stop + stop_seconds - now()))
        finally:
            os.kill(pid, signal.SIGCONT)
        t_cont = now()
        recovered_at = self.wait_recovered(t_cont, 60, expect_failure=False)
        stopped = self.prober.records(t_stop, t_cont)
        figures = {
            "stopped_seconds": round(t_cont - t_stop, 1),
            "prober_while_stopped": summarize(stopped),
            "max_seconds_to_answer_while_stopped": round(
                max([r[2] for r in stopped] + [b["ms"] for b in bursts]) / 1000.0, 2
            ),
            "other_endpoints": bursts,
            "first_200_after_sigcont_s": None,
            "steady_200_after_sigcont_s": None,
            "window": (t_stop, t_cont),
        }
        after = [r for r in self.prober.records(t_cont) if r[1] == 200]
        if after:
            figures["first_200_after_sigcont_s"] = round(after[0][0] - t_cont, 2)
        if recovered_at:
            figures["steady_200_after_sigcont_s"] = round(max(0.0, recovered_at - t_cont), 2)
        else:
            self.problem("sigstop_db", "no steady 200s within 60 s of SIGCONT")
        if figures["max_seconds_to_answer_while_stopped"] > 2.5:
            self.problem(
                "sigstop_db",
                f"a request took {figures['max_seconds_to_answer_while_stopped']} s to answer "
                "while the database was stopped (promised <= 2.5 s)",
            )
        self.say(
            f"   stopped {figures['stopped_seconds']} s: slowest answer {figures['max_seconds_to_answer_while_stopped']} s, "
            f"prober {figures['prober_while_stopped']['statuses']}; 200 again {figures['first_200_after_sigcont_s']} s "
            "after SIGCONT"
        )
        return figures

    def attack_retention(self) -> dict:
        service = self.main
        db = service.db()
        snapshots = db["snapshots"]
        targets = [20_000] if self.quick else [200_000, 1_000_000]
        max_insert_seconds = 120 if self.quick else 600
        chunk = 10_000
        today = dt.datetime.combine(dt.datetime.now(dt.UTC).date(), dt.time(), dt.UTC)
        expired_before = dt.datetime.now(dt.UTC) - 415 * DAY  # ours are 420+ days old
        inserted = 0
        insert_seconds = 0.0
        per_100k: list[dict] = []
        rounds = []
        stopped_early = None
        t_all = now()
        for target in targets:
            if stopped_early:
                break
            t_insert = now()
            round_start = inserted
            block_started, block_docs = time.perf_counter(), 0
            while inserted < target:
                docs = []
                for i in range(inserted, min(target, inserted + chunk)):
                    offset = i % 400 + (420 if i % 100 == 0 else 0)  # 1 % older than 410 days
                    day = today - offset * DAY
                    docs.append(
                        {
                            "region": REGION,
                            "account_id": 700_000_000 + i // 400,
                            "date": day.date().isoformat(),
                            "day": day,
                            "battles": 1000 + i,
                            "wins": 500 + i // 2,
                            "damage_dealt": 100_000 + i,
                            "frags": i % 50,
                            "spotted": i % 40,
                            "xp": 5000 + i,
                        }
                    )
                started = time.perf_counter()
                snapshots.insert_many(docs, ordered=False)
                insert_seconds += time.perf_counter() - started
                inserted += len(docs)
                block_docs += len(docs)
                if inserted % 100_000 == 0 or inserted == target:
                    took = time.perf_counter() - block_started
                    per_100k.append(
                        {
                            "up_to": inserted,
                            "docs": block_docs,
                            "seconds": round(took, 1),
                            "docs_per_s": round(block_docs / max(took, 1e-3)),
                        }
                    )
                    self.say(
                        f"   inserted {inserted:,} snapshots ({per_100k[-1]['docs_per_s']} docs/s over the "
                        f"last {block_docs:,})"
                    )
                    block_started, block_docs = time.perf_counter(), 0
                    rate = per_100k[-1]["docs_per_s"]
                    if rate < 300 or insert_seconds > max_insert_seconds:
                        stopped_early = (
                            f"stopped at {inserted:,}: {rate} docs/s, {insert_seconds:.0f} s of insertion "
                            f"(limit {max_insert_seconds} s)"
                        )
                        break
            old_samples = [
                {
                    "minute": today - 420 * DAY + dt.timedelta(minutes=m),
                    "players": 5,
                    "meta": {"game": "wot", "region": region, "server": "Z"},
                }
                for m in range(0, 1440, 30)
                for region in REGIONS
            ]
            db["online_samples"].insert_many(old_samples, ordered=False)
            t_inserted = now()
            meter = CpuMeter({"service": service.pid, "db": service.db_pid})
            expired = snapshots.count_documents({"day": {"$lt": expired_before}})  # not deleted yet
            expired_inserted = sum(1 for i in range(round_start, inserted) if i % 100 == 0)
            self.say(
                f"   {inserted:,} snapshots stored, {expired_inserted:,} expired inserted this round ({expired:,} "
                f"not deleted yet) + {len(old_samples)} expired online "
                "samples; waiting for the retention job ..."
            )
            runs = {}
            deadline = time.monotonic() + (150 if self.quick else 200)
            left = expired
            samples_left = None
            while time.monotonic() < deadline:
                time.sleep(2.0)
                job = db["job_runs"].find_one({"_id": "retention"}) or {}
                if job.get("last_run", 0) > t_insert:
                    runs[job["last_run"]] = {
                        "message": job.get("message"),
                        "duration_s": job.get("duration_s"),
                        "ok": job.get("ok"),
                    }
                left = snapshots.count_documents({"day": {"$lt": expired_before}})
                samples_left = db["online_samples"].count_documents({"minute": {"$lt": expired_before}})
                if left == 0 and samples_left == 0:
                    break
            t_deleted = now()
            cpu_db = meter.cores()
            rounds.append(
                {
                    "snapshots": inserted,
                    "expired_inserted": expired_inserted,
                    "expired_left_when_inserted": expired,
                    "expired_online_samples": len(old_samples),
                    "insertion_window": (t_insert, t_inserted),
                    "deletion_window": (t_inserted, t_deleted),
                    "prober_during_insertion": self.prober.stats(t_insert, t_inserted),
                    "prober_during_deletion": self.prober.stats(t_inserted, t_deleted),
                    "deleted_after_s": round(t_deleted - t_inserted, 1) if left == 0 and samples_left == 0 else None,
                    "left": {"snapshots": left, "online_samples": samples_left},
                    "retention_runs": list(runs.values()),
                    "cpu_while_waiting_for_deletion_cores": cpu_db,
                }
            )
            r = rounds[-1]
            self.say(
                f"   deleted after {r['deleted_after_s']} s; runs {r['retention_runs']}; prober p99 during deletion "
                f"{r['prober_during_deletion']['p99_ms']} ms"
            )
            if r["deleted_after_s"] is None:
                self.problem(
                    "retention",
                    f"at {inserted:,} snapshots: {left} expired snapshots and {samples_left} expired samples left",
                )
        for r in rounds:
            r["insertion_window"] = [round(x, 1) for x in r["insertion_window"]]
            r["deletion_window"] = [round(x, 1) for x in r["deletion_window"]]
        return {
            "rounds": rounds,
            "insert_rate_per_block": per_100k,
            "insert_seconds": round(insert_seconds, 1),
            "stopped_early": stopped_early,
            "window": (t_all, now()),
        }
