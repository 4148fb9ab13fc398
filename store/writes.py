"""Whether the database can write now, and since when not: read by /status, the jobs and the tracker.

Two sources, either of which makes it unwritable:
- the driver's command events (`WriteHealth` is a pymongo CommandListener on the process's one
  client): a command that fails because the database cannot store (store.errors.
  storage_failure_reason: disk full, quota, read-only, the embedded engine's panic) sets the
  failure; the next write command that succeeds clears it;
- the free space under the embedded database's files (`hold`/`release`, set by the composition's
  storage watch): below its floor the database is treated as unwritable before it fails, so
  background work stops while the remaining space is kept for what must still be written.

Per process, in memory; every figure is a plain assignment under a lock (events arrive on the
driver's threads).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from pymongo import monitoring

from store.errors import ENGINE_FAILED, storage_failure_reason

# Commands that store something: a success of one of them proves the database writes again.
WRITE_COMMANDS = frozenset(
    {"insert", "update", "delete", "findAndModify", "bulkWrite", "create", "createIndexes", "drop", "collMod"}
)

PROBE_ID = "write-probe"  # the one document the probe writes, in `leases` (no lease has this name)
PROBE_EVERY = 5.0  # seconds between probe writes while a refused command is the only verdict


class WriteHealth(monitoring.CommandListener):
    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        self.failure: dict[str, Any] | None = None  # {reason, since, command}: the last refused command
        self.held: dict[str, Any] | None = None  # {reason, since}: the storage watch's verdict
        self.failures = 0  # commands refused for want of storage since the process started
        self._probed_at = -1e18

    # --- the verdict ------------------------------------------------------------------------
    @property
    def writable(self) -> bool:
        return self.failure is None and self.held is None

    def error(self) -> dict[str, Any] | None:
        """Why the database cannot write and since when ({reason, since}), or None: the watch's
        verdict first (it names the free space), else the last refused command's."""
        held, failure = self.held, self.failure
        if held is not None:
            since = min(held["since"], failure["since"]) if failure is not None else held["since"]
            return {"reason": held["reason"], "since": since}
        if failure is not None:
            return {"reason": failure["reason"], "since": failure["since"]}
        return None

    def status(self) -> dict[str, Any]:
        """/status → database: `writable`, and `write_error` {reason, since (epoch s)} or null."""
        error = self.error()
        return {
            "writable": error is None,
            "write_error": None if error is None else {"reason": error["reason"], "since": int(error["since"])},
        }

    # --- what sets and clears it ---------------------------------------------------------------
    def refused(self, reason: str, command: str = "") -> None:
        """A command failed because the database cannot store."""
        with self._lock:
            self.failures += 1
            if self.failure is None:
                self.failure = {"reason": reason, "since": self.clock(), "command": command}
            else:
                self.failure = {**self.failure, "reason": reason, "command": command}

    def wrote(self) -> None:
        """A write command succeeded."""
        if self.failure is not None:
            with self._lock:
                self.failure = None

    def hold(self, reason: str) -> None:
        """The storage watch: treat the database as unwritable (free space under its floor)."""
        with self._lock:
            since = self.held["since"] if self.held is not None else self.clock()
            self.held = {"reason": reason, "since": since}

    def release(self) -> None:
        with self._lock:
            self.held = None

    async def probe(self, db: Any, every: float = PROBE_EVERY) -> None:
        """While only a refused command says the database cannot write, try one small write at
        most every `every` s (its success, seen by the listener, is what clears the failure: the
        waiting jobs and tracker write nothing themselves). Errors are the listener's to note."""
        if self.failure is None or self.held is not None or time.monotonic() - self._probed_at < every:
            return
        self._probed_at = time.monotonic()
        try:
            await db["leases"].update_one({"_id": PROBE_ID}, {"$set": {"at": self.clock()}}, upsert=True)
        except Exception:  # noqa: BLE001 - still refused (the listener keeps the failure), or away
            pass

    # --- the driver's events (any thread) -------------------------------------------------------
    def started(self, event: monitoring.CommandStartedEvent) -> None:
        """Only outcomes matter."""

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        if event.command_name not in WRITE_COMMANDS:
            return
        reply = event.reply if isinstance(event.reply, dict) else {}
        reason = storage_failure_reason(reply) if ("writeErrors" in reply or "writeConcernError" in reply) else None
        if reason is not None:
            self.refused(reason, event.command_name)
        else:
            self.wrote()

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        reason = storage_failure_reason(event.failure)
        if reason is not None:
            self.refused(reason, event.command_name)


def write_health(client: Any) -> WriteHealth:
    """The client's WriteHealth (store.client.create_client attaches one); a fresh, always
    writable one for a client made without it (tests' own clients)."""
    health = getattr(client, "statsapi_writes", None)
    if health is None:
        health = WriteHealth()
        try:
            client.statsapi_writes = health
        except AttributeError:
            pass
    return health


async def engine_failed(db: Any) -> bool:
    """A point read answers that the database's storage engine failed (SecantusDB after a write
    met a full disk: store.errors.ENGINE_FAILED); any other outcome is False."""
    try:
        await db["leases"].find_one({"_id": "jobs"}, {"_id": 1})
    except Exception as exc:  # noqa: BLE001 - only this one answer is asked about
        return storage_failure_reason(exc) == ENGINE_FAILED
    return False
