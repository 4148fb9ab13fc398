"""The embedded database's disk: a reserve kept for recovery, background writes held while space is
short, and the database restarted once its storage engine failed and space is back.

What SecantusDB does on a full disk (measured, secantusdb 0.7.0b3, tmpfs): the WiredTiger log write
that meets ENOSPC panics the engine; the process stays up and answers `ping`, but every command that
touches storage, reads included, answers `InternalError` (code 1, "internal server error") until the
process restarts, even after space is freed. A restart on the full disk exits at once (status 1);
with 20 MB free it starts in 0.6 s and keeps every acknowledged write (`--sync-on-commit`), with
12 MB it does not (it writes new 10 MB log segments). So this watch, once a second:

- keeps RESERVE_BYTES in `<storage>/statsapi.reserve` (allocated, so it is really held);
- holds background writes (store/writes.py: the jobs and the tracker wait, /status says why) while
  less than FLOOR_BYTES are free beside the reserve, or while the reserve is missing, so the space
  left is kept for what must still be written;
- when a read says the engine failed: frees the reserve if the disk lacks RESTART_BYTES, and once
  they are free stops the database process, which the supervisor (server/compose/embedded_db.py)
  starts again on the same files: reads answer again while the disk is still full;
- once RESERVE_BYTES + FLOOR_BYTES are free again it re-creates the reserve and releases the writes.

Only the process that started the database can restart it (with `--processes N`, the parent, which
runs no event loop): there, a failed engine waits for the service's restart (logged).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from store.writes import engine_failed, write_health

if TYPE_CHECKING:
    from store.store import Store

log = logging.getLogger("statsapi.storage")

RESERVE_NAME = "statsapi.reserve"
RESERVE_BYTES = 24 << 20  # > what a restart after the engine failed needs (measured: 12 MB no, 20 MB yes)
FLOOR_BYTES = 16 << 20  # free beside the reserve, below which background writes are held
RESTART_BYTES = 20 << 20  # free space a restart of the failed engine needs
EVERY = 1.0  # seconds between looks
RESTART_GAP = 30.0  # seconds between two restarts (the supervisor backs off on its own too)
KILL_AFTER = 5.0  # seconds a stopped database has to exit before it is killed


def free_bytes(path: str) -> int:
    stat = os.statvfs(path)
    return stat.f_bavail * stat.f_frsize


def make_reserve(path: str, size: int) -> bool:
    """Allocate `size` bytes at `path` (really held: fallocate); False, leaving nothing, on ENOSPC."""
    partial = path + ".partial"
    try:
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.posix_fallocate(fd, 0, size)
        finally:
            os.close(fd)
        os.replace(partial, path)
        return True
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        return False


class StorageWatch:
    """See the module. `database()` gives the embedded database (None: nothing to watch)."""

    # The thresholds (the module's; an instance may be given others by assigning them).
    reserve_bytes: int = RESERVE_BYTES
    floor_bytes: int = FLOOR_BYTES
    restart_bytes: int = RESTART_BYTES
    every: float = EVERY

    def __init__(self, store: Store, database: Callable[[], Any]) -> None:
        self.store = store
        self.database = database
        self.restarts = 0  # database restarts this watch asked for
        self._restarted_at = -1e18
        self._warned: set[str] = set()

    def _warn_once(self, key: str, message: str, *args: object) -> None:
        if key not in self._warned:
            self._warned.add(key)
            log.warning(message, *args)

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await self.check()
                self._warned.discard("check")
            except Exception as exc:  # noqa: BLE001 - the watch must outlive any one look
                self._warn_once("check", "storage watch: %s: %s", type(exc).__name__, exc)
            try:
                await asyncio.wait_for(stop.wait(), self.every)
            except TimeoutError:
                pass

    async def check(self) -> None:
        database = self.database()
        path = getattr(database, "storage_path", None)
        if not path or path == ":memory:" or not os.path.isdir(path):
            return
        health = write_health(self.store.client)
        reserve = os.path.join(path, RESERVE_NAME)
        free = await asyncio.to_thread(free_bytes, path)
        if (health.failure is not None or free < self.floor_bytes) and await engine_failed(self.store.db):
            if free < self.restart_bytes and os.path.exists(reserve):
                await asyncio.to_thread(os.unlink, reserve)
                log.warning(
                    "storage watch: the database's engine failed; reserve of %s MiB freed", _mib(self.reserve_bytes)
                )
                free = await asyncio.to_thread(free_bytes, path)
            if free >= self.restart_bytes:
                self._restart(database)
            else:
                self._warn_once(
                    "space", "storage watch: the engine failed and %s MiB are free: waiting for space", _mib(free)
                )
        has_reserve = os.path.exists(reserve)
        if not has_reserve and free >= self.reserve_bytes + self.floor_bytes:
            has_reserve = await asyncio.to_thread(make_reserve, reserve, self.reserve_bytes)
            free = await asyncio.to_thread(free_bytes, path)
        if has_reserve and free >= self.floor_bytes:
            if health.held is not None:
                log.warning("storage watch: %s MiB free under %s: writes resume", _mib(free), path)
                self._warned.discard("space")
            health.release()
            return
        needed = self.floor_bytes + (0 if has_reserve else self.reserve_bytes)
        if health.held is None:
            log.warning(
                "storage watch: %s MiB free under %s (%s MiB needed): background writes wait",
                _mib(free),
                path,
                _mib(needed),
            )
        health.hold(f"no space left on device ({_mib(free)} MiB free under {path}, {_mib(needed)} MiB needed)")

    def _restart(self, database: Any) -> None:
        """Stop the database process; its supervisor starts it again on the same files."""
        if time.monotonic() - self._restarted_at < RESTART_GAP:
            return
        if not database.restart("its storage engine failed on a full disk", kill_after=KILL_AFTER):
            self._warn_once(
                "owner", "storage watch: the database's engine failed; only a restart of the service restarts it"
            )
            return
        self._restarted_at = time.monotonic()
        self.restarts += 1
        log.warning("storage watch: the database's engine failed; restarting it")


def _mib(size: float) -> int:
    return int(size) >> 20
