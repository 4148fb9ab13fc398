"""Scheduled backups: with --backup-dir, a backup of the irreplaceable collections once a day at a
quiet hour, the newest --backup-keep kept (store/backup.py writes them; docs/deploy.md section 8)."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import shutil
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from store.backup import DUTY, Progress, list_backups, write_backup

if TYPE_CHECKING:
    from store.store import Store

INTERVAL_SECONDS = 600  # how often the job looks whether a backup is due
QUIET_HOUR_UTC = 3  # the least busy hour of the three realms' evenings
DUE_AFTER = 2 * 3600  # at the quiet hour, a backup when the newest is older than this (once per quiet hour)
OVERDUE_AFTER = 30 * 3600  # at any hour (the quiet hour was missed: down, or a failure)
STALE_AFTER = 2 * 86400  # /status turns degraded when the newest success is older
NAME_PREFIX = "statsapi-"
PARTIAL = re.compile(r"^\.(statsapi-[^/]+)\.partial-(\d+)$")
STATUS_CACHE_SECONDS = 10.0
# The last failed run, kept beside the backups so that /status still shows it after a restart
# (best effort: a full disk may refuse it too; then it lives in this process only).
FAILURE_FILE = ".statsapi-last-failure.json"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def rotate(directory: str, keep: int) -> list[str]:
    """Remove complete backups beyond the newest `keep` and partial ones whose writer is gone;
    returns the names removed. Only this job's names are touched."""
    removed = []
    complete = [b for b in list_backups(directory) if b["name"].startswith(NAME_PREFIX)]
    for backup in complete[keep:]:
        shutil.rmtree(backup["path"], ignore_errors=True)
        removed.append(backup["name"])
    with contextlib.suppress(FileNotFoundError):
        for entry in os.scandir(directory):
            match = PARTIAL.match(entry.name)
            if match and int(match.group(2)) != os.getpid() and not _alive(int(match.group(2))):
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(entry.name)
    return removed


class ScheduledBackups:
    def __init__(
        self,
        store: Store,
        directory: str | None,
        keep: int,
        writer: str,
        duty: float = DUTY,
        clock: Callable[[], float] = time.time,
        started_at: float | None = None,
    ) -> None:
        self.store = store
        self.directory = os.path.abspath(directory) if directory else None
        self.keep = keep
        self.writer = writer
        self.duty = duty
        self.clock = clock
        self.started_at = clock() if started_at is None else started_at
        self.progress: Progress | None = None  # while a backup runs in this process
        # Backups this process attempted, by outcome (/metrics: statsapi_backups_total). The job's
        # runs (statsapi_job_runs_total{job="backup"}) count every look whether one is due.
        self.outcomes: dict[str, int] = {"ok": 0, "failed": 0}
        self._listing: tuple[float, list[dict]] | None = None
        self._failure: dict | None = None
        self._failure_read = False

    def backups(self) -> list[dict]:
        """The complete backups in the directory, newest first (re-read at most every few seconds)."""
        if self.directory is None:
            return []
        now = time.monotonic()
        if self._listing is None or now - self._listing[0] > STATUS_CACHE_SECONDS:
            self._listing = (now, list_backups(self.directory))
        return self._listing[1]

    def due(self, now: float) -> bool:
        newest = self.backups()[0]["finished_at"] if self.backups() else None
        if newest is None:
            return True
        age = now - newest
        hour = dt.datetime.fromtimestamp(now, dt.UTC).hour
        return age >= OVERDUE_AFTER or (hour == QUIET_HOUR_UTC and age >= DUE_AFTER)

    async def run(self, slot: int) -> str:
        if self.directory is None:
            return "off: no --backup-dir"
        now = self.clock()
        self._listing = None
        if not self.due(now):
            return "not due"
        name = NAME_PREFIX + dt.datetime.fromtimestamp(now, dt.UTC).strftime("%Y%m%dT%H%M%SZ")
        self.progress = Progress()
        started = time.monotonic()
        try:
            os.makedirs(self.directory, exist_ok=True)
            manifest = await write_backup(
                self.store,
                os.path.join(self.directory, name),
                writer=self.writer,
                duty=self.duty,
                clock=self.clock,
                progress=self.progress,
            )
        except Exception as exc:
            self.outcomes["failed"] += 1
            self._note_failure(now, name, exc, time.monotonic() - started)
            raise  # the job runner records the run as failed (jobs.backup in /status, /metrics)
        finally:
            self.progress = None
            self._listing = None
        self.outcomes["ok"] += 1
        removed = rotate(self.directory, self.keep)
        self._listing = None
        return (
            f"backed up {manifest['documents']:,} documents ({manifest['bytes'] / 1e6:.1f} MB) in "
            f"{manifest['seconds']:.0f} s to {name}; removed {len(removed)} old"
        )

    def _note_failure(self, at: float, name: str, exc: Exception, seconds: float) -> None:
        assert self.directory is not None
        self._failure = {
            "at": int(at),
            "name": name,
            "reason": f"{type(exc).__name__}: {exc}"[:300],
            "seconds": round(seconds, 1),
        }
        self._failure_read = True
        path = os.path.join(self.directory, FAILURE_FILE)
        with contextlib.suppress(OSError):
            with open(path + ".tmp", "w") as fh:
                json.dump(self._failure, fh)
            os.replace(path + ".tmp", path)

    def last_failure(self) -> dict | None:
        """The last failed run (time, the backup's name, why, how long it ran), None when none
        failed; read once from the directory, where an earlier process may have left it."""
        if not self._failure_read and self.directory is not None:
            self._failure_read = True
            with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
                with open(os.path.join(self.directory, FAILURE_FILE)) as fh:
                    doc = json.load(fh)
                self._failure = {
                    "at": int(doc["at"]),
                    "name": str(doc["name"]),
                    "reason": str(doc["reason"]),
                    "seconds": float(doc["seconds"]),
                }
        return self._failure

    def status(self) -> dict | None:
        """/status's `backups`: None without --backup-dir."""
        if self.directory is None:
            return None
        backups = self.backups()
        newest = backups[0] if backups else None
        return {
            "directory": self.directory,
            "keep": self.keep,
            "count": len(backups),
            "last_success": (
                {
                    "at": int(newest["finished_at"]),
                    "name": newest["name"],
                    "documents": newest["documents"],
                    "bytes": newest["bytes"],
                    "seconds": newest["seconds"],
                }
                if newest
                else None
            ),
            "last_failure": self.last_failure(),
            "running": (
                {"collection": self.progress.collection, "documents": self.progress.documents}
                if self.progress is not None
                else None
            ),
        }

    def health_reasons(self) -> list[str]:
        if self.directory is None:
            return []
        now = self.clock()
        backups = self.backups()
        since = backups[0]["finished_at"] if backups else self.started_at
        if now - since > STALE_AFTER:
            return [f"no backup succeeded in {self.directory} in the last two days"]
        return []
