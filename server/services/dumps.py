"""Daily bulk files: each realm's tables of the day (tank statistics, marks, computed expected values,
online counts, leaderboards) as gzip'd CSV and JSON under immutable names, listed by GET /dumps."""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import gzip
import hashlib
import logging
import os
import re
import shutil
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any

import ujson

from server.contract.catalogue import (
    CLAN_LEADERBOARD_BYS,
    DUMPS_KEEP_DAYS,
    EXPECTED_VALUES,
    LEADERBOARD_CLANS,
    LEADERBOARD_PLAYERS,
    LEADERBOARD_WINDOWS,
    ONLINE_HISTORY,
    PLAYER_LEADERBOARD_BYS,
    POPULATION_PERIODS,
    PREFIX,
    TANK_MARKS,
    TANK_STATS,
    Endpoint,
)
from server.contract.csv_answers import render
from server.contract.errors import APIError
from server.domain.tank_lists import TankQuery

if TYPE_CHECKING:
    from server.services.expected import ExpectedValuesService
    from server.services.leaderboards import LeaderboardService
    from server.services.online import OnlineService
    from server.services.tank_stats import TankStatsService

log = logging.getLogger("statsapi.dumps")

ONLINE_DAYS = 30  # the online counts file: the last 30 days' series
EVERY_TANK = TankQuery(None, None, None, 10**6, 0)  # a tank table's file holds all its rows
# A file's name: kind (and its variant), region, day, format. Immutable: a day's file never changes
# once its manifest lists it (a forced rebuild of the same day writes the same tables again).
FILE_NAME = re.compile(r"^[a-z0-9-]+-(eu|na|asia)-\d{4}-\d{2}-\d{2}\.(csv|json)\.gz$")
MANIFEST = re.compile(r"^manifest-(eu|na|asia)-(\d{4}-\d{2}-\d{2})\.json$")
DAY_DIR = re.compile(r"^\d{4}-\d{2}-\d{2}$")
MANIFESTS = "manifests"  # the manifests' directory, beside one directory per day

Table = tuple[str, Endpoint, Callable[[], Awaitable[dict[str, Any]]]]  # (kind, endpoint, its answer)


def manifest_name(region: str, day: str) -> str:
    return f"manifest-{region}-{day}.json"


def day_of(name: str) -> str:
    """The day a file's name carries (FILE_NAME: ...-YYYY-MM-DD.csv.gz)."""
    return name.rsplit(".", 2)[0][-10:]


def _write_atomically(directory: str, name: str, payload: bytes) -> None:
    # Beside the target, then renamed over it: a reader sees the old file or the new one, never part.
    temporary = os.path.join(directory, f".{name}.{os.getpid()}.tmp")
    with open(temporary, "wb") as handle:
        handle.write(payload)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, os.path.join(directory, name))


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def _packed(text: str) -> bytes:
    # mtime 0: the same table gives the same bytes (and checksum) whenever it is written.
    return gzip.compress(text.encode("utf-8"), compresslevel=6, mtime=0)


class DumpService:
    """Writes a realm's files of a day after the day's tank-statistics build (`build`), and lists
    them (`listing`). Files live in `directory` (--dumps-dir); a day's manifest, written last,
    makes its files visible, so a build that fails leaves the earlier days as they were."""

    def __init__(
        self,
        directory: str | None,
        tank_stats: TankStatsService,
        expected_values: ExpectedValuesService,
        leaderboards: LeaderboardService,
        online: OnlineService,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.directory = directory
        self.tank_stats = tank_stats
        self.expected_values = expected_values
        self.leaderboards = leaderboards
        self.online = online
        self.clock = clock
        self.last: dict[str, Any] | None = None  # the newest build's figures (for /status and the benchmark)

    # --- building ------------------------------------------------------------------
    def tables(self, region: str) -> Iterator[Table]:
        """Every table of a realm's day, as the API answers it with all its rows."""
        stats, boards = self.tank_stats, self.leaderboards
        for days in POPULATION_PERIODS:
            yield (
                f"tank-stats-{days}d",
                TANK_STATS,
                functools.partial(stats.tank_table, region, days, EVERY_TANK, "battles", "desc"),
            )
        yield (
            "tank-marks",
            TANK_MARKS,
            functools.partial(stats.marks_list, region, EVERY_TANK, "players", "desc"),
        )
        yield (
            "expected-values",
            EXPECTED_VALUES,
            functools.partial(self.expected_values.document, region, "computed", None),
        )
        yield "online", ONLINE_HISTORY, functools.partial(self.online.history, "wot", region, ONLINE_DAYS)
        for window in LEADERBOARD_WINDOWS:
            for by in PLAYER_LEADERBOARD_BYS:
                page = functools.partial(boards.players, region, window, by, None, None, None)
                yield (
                    f"leaderboard-players-{window}-{by.replace('_', '')}",
                    LEADERBOARD_PLAYERS,
                    functools.partial(self._whole, page),
                )
            for by in CLAN_LEADERBOARD_BYS:
                page = functools.partial(boards.clans, region, window, by, None)
                yield (
                    f"leaderboard-clans-{window}-{by.replace('_', '')}",
                    LEADERBOARD_CLANS,
                    functools.partial(self._whole, page),
                )

    @staticmethod
    async def _whole(page: Callable[[int, int], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
        """A leaderboard with every row: its size from a one-row page, then one page of all of it."""
        first = await page(0, 1)
        return await page(0, max(1, first["total"])) if first["total"] > 1 else first

    async def build(self, region: str, day: str) -> dict[str, Any] | None:
        """Write `region`'s files of `day` and then its manifest; None without --dumps-dir. A table
        the realm does not have yet (404 no_statistics, no_expected_values) is left out."""
        if self.directory is None:
            return None
        started = time.monotonic()
        self.tank_stats.forget(region)  # read the tables just built, not a copy decoded before
        # A directory per day (a day's 426 files), the manifests apart (one per realm and day): a
        # listing reads a directory of at most 1,200 names, never the 170,000 files of 400 days.
        files_dir = os.path.join(self.directory, day)
        manifests_dir = os.path.join(self.directory, MANIFESTS)
        await asyncio.to_thread(os.makedirs, files_dir, exist_ok=True)
        await asyncio.to_thread(os.makedirs, manifests_dir, exist_ok=True)
        files = []
        for kind, endpoint, answer in self.tables(region):
            try:
                data = await answer()
            except APIError as exc:
                if exc.status_code != 404:
                    raise
                continue
            assert endpoint.csv is not None
            for form, text in (("json", ujson.dumps(data, ensure_ascii=False)), ("csv", render(endpoint.csv, data))):
                name = f"{kind}-{region}-{day}.{form}.gz"
                payload = await asyncio.to_thread(_packed, text)
                await asyncio.to_thread(_write_atomically, files_dir, name, payload)
                files.append(
                    {
                        "name": name,
                        "region": region,
                        "day": day,
                        "kind": kind,
                        "format": form,
                        "rows": len(data.get(endpoint.csv.rows) or ()),
                        "bytes": len(payload),
                        "sha256": hashlib.sha256(payload).hexdigest(),
                    }
                )
        manifest = {"region": region, "day": day, "built_at": self.clock(), "files": files}
        await asyncio.to_thread(
            _write_atomically, manifests_dir, manifest_name(region, day), ujson.dumps(manifest).encode()
        )
        await asyncio.to_thread(self._prune, day)
        self.last = {
            "region": region,
            "day": day,
            "files": len(files),
            "bytes": sum(f["bytes"] for f in files),
            "seconds": round(time.monotonic() - started, 2),
        }
        log.info("dumps of %s %s: %d files, %d bytes", region, day, len(files), self.last["bytes"])
        return self.last

    def _prune(self, newest: str) -> None:
        """Delete every manifest, then every file, of a day DUMPS_KEEP_DAYS or more before `newest`."""
        oldest = (dt.date.fromisoformat(newest) - dt.timedelta(days=DUMPS_KEEP_DAYS - 1)).isoformat()
        assert self.directory is not None
        manifests_dir = os.path.join(self.directory, MANIFESTS)
        for name in os.listdir(manifests_dir):
            found = MANIFEST.match(name)
            if found and found.group(2) < oldest:
                os.remove(os.path.join(manifests_dir, name))
        for name in os.listdir(self.directory):
            if DAY_DIR.match(name) and name < oldest:
                shutil.rmtree(os.path.join(self.directory, name), ignore_errors=True)

    # --- serving -------------------------------------------------------------------
    async def read(self, name: str) -> bytes:
        """A listed file's bytes (a day's files are a few MB at most); APIError dump_not_found for
        any other name (never a temporary file or a manifest)."""
        if self.directory is None or not FILE_NAME.match(name):
            raise APIError("dump_not_found")
        try:
            return await asyncio.to_thread(_read, os.path.join(self.directory, day_of(name), name))
        except FileNotFoundError:
            raise APIError("dump_not_found") from None

    # --- listing -------------------------------------------------------------------
    async def listing(self, region: str | None, day: str | None) -> dict[str, Any]:
        """GET /dumps: the days with files (newest first) and the files of `day` (the newest by
        default), of one realm or all."""
        return await asyncio.to_thread(self._listing, region, day)

    def _listing(self, region: str | None, day: str | None) -> dict[str, Any]:
        manifests: dict[str, list[str]] = {}
        manifests_dir = os.path.join(self.directory or "", MANIFESTS)
        names = os.listdir(manifests_dir) if self.directory and os.path.isdir(manifests_dir) else []
        for name in names:
            found = MANIFEST.match(name)
            if found and (region is None or found.group(1) == region):
                manifests.setdefault(found.group(2), []).append(name)
        days = sorted(manifests, reverse=True)
        chosen = day if day is not None else (days[0] if days else None)
        files: list[dict[str, Any]] = []
        built = []
        for name in sorted(manifests.get(chosen or "", [])):
            with open(os.path.join(manifests_dir, name), "rb") as handle:
                manifest = ujson.loads(handle.read())
            built.append(manifest["built_at"])
            files += [{**entry, "url": f"{PREFIX}/dumps/{entry['name']}"} for entry in manifest["files"]]
        return {
            "region": region,
            "day": chosen,
            "days": days,
            "kept_days": DUMPS_KEEP_DAYS,
            "built_at": max(built) if built else None,
            "files": files,
        }
