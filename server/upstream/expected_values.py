"""Where ratings get their inputs: the expected-values table and vehicle tiers, kept fresh.

The table is downloaded daily with a conditional GET and the last good download is kept in the
data directory (`<data_dir>/expected-values/`), so a restart without network rates exactly as
before. A download replaces the table in use only when it passes the checks of `_checked`: it
parses, it keeps XVM's layout, and it has no more than MAX_ROWS_LOST fewer rows; otherwise it is
refused (status()["refused"], health_reasons()) and the old table stays.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import tempfile
import time
import urllib.parse
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from server.domain import ratings as rating_maths
from server.upstream.budget import Caller
from server.upstream.interface import Upstream

log = logging.getLogger("statsapi.ratings")

# XVM's maintained table for the Wargaming servers, rebuilt nightly (every Tier XI included);
# the URL current WoT clients use.
XVM_URL = "https://static.modxvm.com/wn8-data-exp/json/wg/wn8exp.json"
# Not this one: XVM froze it on 2024-09-12 (862 vehicles) when it split its data between
# Wargaming and Lesta; it lacks every vehicle released since and will never gain them.
XVM_FROZEN_URL = "https://static.modxvm.com/wn8-data-exp/json/wn8exp.json"
REFRESH_SECONDS = 86400
# The encyclopedia fields fetched once a day per region (pages of 100: ceil(vehicles / 100)
# requests): the ratings' tiers, the answers' names, and the /vehicles catalogue. Not the prices,
# crews, modules or profiles, which nobody here reads.
CATALOGUE_KEYS = (
    "tank_id",
    "name",
    "short_name",
    "tier",
    "type",
    "nation",
    "tag",
    "is_premium",
    "is_gift",
    "is_wheeled",
    "images",
)
VEHICLE_FIELDS = ",".join(CATALOGUE_KEYS)
TIERS_RETRY_SECONDS = 60  # after a failed vehicle fetch, callers use what they have for this long
# A download with more than this share of the table in use's rows fewer is refused, and so is one
# with more than this share of its rows malformed (a changed row format).
MAX_ROWS_LOST = 0.05
SAVED_DIR = "expected-values"  # under the data directory
SAVED_TABLE = "wn8exp.json"  # the last good download, byte for byte
SAVED_META = "wn8exp.meta.json"  # url, etag, last_modified, version, rows, saved_at


class RefusedDownload(ValueError):
    """A download that did not pass the checks; the table in use stays."""


class RatingsSource:
    def __init__(
        self,
        upstream: Upstream,
        location: str | None,
        clock: Callable[[], float] = time.time,
        data_dir: str | None = None,
    ) -> None:
        self.upstream = upstream
        self.location = location or XVM_URL
        self.clock = clock
        self.saved_dir = Path(data_dir) / SAVED_DIR if data_dir else None  # None: nothing is kept
        self._expected: rating_maths.ExpectedValues | None = None
        self._loaded_at: float | None = None
        self._last_error: str | None = None
        self._checked_at: float | None = None  # the last successful check (a 200 taken or a 304)
        self._refused: dict[str, Any] | None = None  # {"reason", "at"} of the last refused download
        self._meta: dict[str, Any] | None = None  # where the table in use came from (SAVED_META's fields)
        self._saved: dict[str, Any] | None = None  # the kept file: path, version, url
        self._saved_tried = False
        self._first_check: asyncio.Future | None = None
        self._tiers: dict[str, tuple[float, dict[int, int]]] = {}
        self._vehicles: dict[str, dict[int, dict]] = {}  # region -> tank_id -> name, tier, type, nation
        # region -> (fetched at, tank_id -> every CATALOGUE_KEYS field but tank_id), the last good fetch
        self._catalogue: dict[str, tuple[float, dict[int, dict]]] = {}
        self._tiers_failed: dict[str, float] = {}
        self._tiers_fetching: dict[str, asyncio.Future] = {}
        self._lock = asyncio.Lock()
        if _same_url(self.location, XVM_FROZEN_URL):
            log.warning("expected values: %s is XVM's table frozen on 2024-09-12; use %s", self.location, XVM_URL)

    async def expected_values(self, region: str | None = None) -> rating_maths.ExpectedValues | None:
        """The table in use (the same for every region; server.services.expected adds computed
        rows). The first call takes the kept copy at once and checks for a newer one in the
        background; without a kept copy it waits for the download."""
        if not self._saved_tried:
            await self.load_saved()
        if self._expected is None:
            try:
                # A request waits for this one: the quick retries of a live call, not the
                # background back-off of the daily check (server/upstream/client.py).
                await self.refresh_expected(caller="live")
            except Exception as exc:
                log.warning("expected values unavailable: %s", exc)
        elif self._checked_at is None and self._first_check is None:
            self._first_check = asyncio.ensure_future(self._check_quietly())
        return self._expected

    async def load_saved(self) -> bool:
        """Take the kept copy of the last good download, if there is one and no table is loaded
        yet (start-up); True when a table is in use afterwards."""
        async with self._lock:
            await self._load_saved_locked()
        return self._expected is not None

    async def refresh_expected(self, slot: int | None = None, *, caller: Caller = "reference") -> str:
        """Check for a newer table (daily job): a conditional GET from the last good download; a
        304 keeps the table, a download replaces it only when it passes the checks, and a
        failed or refused one keeps the previous table (and raises)."""
        async with self._lock:
            await self._load_saved_locked()
            table = await self._download(caller)
        if table is None:
            return f"expected values {self._version()} unchanged ({self._rows()} tanks)"
        if table.rows_skipped:
            log.warning(
                "expected values %s: %d malformed row(s) skipped, e.g. %s",
                table.version,
                table.rows_skipped,
                table.skip_reasons[0],
            )
        return f"expected values {table.version} ({len(table)} tanks" + (
            f", {table.rows_skipped} rows skipped)" if table.rows_skipped else ")"
        )

    def status(self) -> dict:
        table = self._expected
        return {
            "version": table.version if table else None,
            "tanks": len(table) if table else 0,
            "rows_skipped": table.rows_skipped if table else 0,
            "loaded_at": self._loaded_at,
            "last_error": self._last_error,
            "url": _shown(self.location),
            "checked_at": self._checked_at,
            "refused": dict(self._refused) if self._refused else None,
            "saved": dict(self._saved) if self._saved else None,
        }

    def health_reasons(self) -> list[str]:
        """One sentence per problem with the table, for /status's `degraded`; empty when fine."""
        reasons = []
        url = _shown(self.location)
        if _same_url(self.location, XVM_FROZEN_URL):
            reasons.append(
                f"expected values: {url} is XVM's table frozen on 2024-09-12 (no vehicle since); use {XVM_URL}"
            )
        if self._expected is None:
            if self._refused is not None:
                reasons.append(f"expected values: no table: {self._refused['reason']}")
            elif self._last_error is not None:
                reasons.append(f"expected values: no table: the download from {url} failed ({self._last_error})")
            return reasons
        if self._refused is not None:
            reasons.append(f"expected values: {self._refused['reason']}; keeping version {self._version()}")
        elif self._meta is not None and not _same_url(self._meta.get("url"), self.location):
            if self._last_error is not None:
                reasons.append(
                    f"expected values: rating with version {self._version()} kept from "
                    f"{_shown(self._meta.get('url'))}: the download from {url} failed ({self._last_error})"
                )
        return reasons

    # --- the table: kept copy, download, checks ------------------------------------------
    async def _load_saved_locked(self) -> None:
        if self._saved_tried:
            return
        self._saved_tried = True
        if self.saved_dir is None:
            return
        loop = asyncio.get_running_loop()
        try:
            found = await loop.run_in_executor(None, _read_saved, self.saved_dir)
        except Exception as exc:
            log.warning("expected values: the kept copy in %s is unreadable: %s", self.saved_dir, exc)
            return
        if found is None:
            return
        body, meta = found
        try:
            table = rating_maths.parse_expected_values(body)
        except ValueError as exc:
            log.warning("expected values: the kept copy in %s does not parse: %s", self.saved_dir, exc)
            return
        if meta.get("version") != table.version or meta.get("rows") != len(table):
            # The meta file belongs to another table (a write cut short): no conditional GET from it.
            meta = {"url": meta.get("url"), "version": table.version, "rows": len(table), "saved_at": None}
        self._saved = {
            "path": str(self.saved_dir / SAVED_TABLE),
            "version": table.version,
            "url": _shown(meta.get("url")),
        }
        if self._expected is not None:  # a download came first
            return
        self._expected, self._meta = table, meta
        self._loaded_at = meta.get("saved_at") if isinstance(meta.get("saved_at"), (int, float)) else None
        if not _same_url(meta.get("url"), self.location):
            log.warning(
                "expected values: rating with version %s kept from %s until %s downloads",
                table.version,
                _shown(meta.get("url")),
                _shown(self.location),
            )
        else:
            log.info("expected values: rating with the kept version %s (%d tanks)", table.version, len(table))

    async def _check_quietly(self) -> None:
        try:
            log.info("%s", await self.refresh_expected())
        except Exception as exc:
            log.warning("expected values: keeping version %s: %s", self._version(), exc)

    def _conditional_headers(self) -> dict[str, str]:
        """If-None-Match / If-Modified-Since of the table in use, when it came from this URL."""
        meta = self._meta
        if self._expected is None or meta is None or not _same_url(meta.get("url"), self.location):
            return {}
        headers = {}
        if meta.get("etag"):
            headers["If-None-Match"] = str(meta["etag"])
        if meta.get("last_modified"):
            headers["If-Modified-Since"] = str(meta["last_modified"])
        return headers

    async def _download(self, caller: Caller = "reference") -> rating_maths.ExpectedValues | None:
        """The new table, or None after a 304; raises when the download fails or is refused."""
        url = self.location
        remote = url.startswith(("http://", "https://"))
        sent = self._conditional_headers() if remote else {}
        try:
            if remote:
                code, body, headers = await self.upstream.fetch_url(url, headers=sent, caller=caller)
            else:
                body = await asyncio.get_running_loop().run_in_executor(None, _read, url)
                code, headers = 200, {}
            if code == 304 and not sent:
                raise ValueError(f"{_shown(url)} answered 304 to an unconditional GET")
        except Exception as exc:
            self._last_error = str(exc)[:200]
            raise
        now = self.clock()
        etag, last_modified = _header(headers, "ETag"), _header(headers, "Last-Modified")
        if code == 304:
            assert self._meta is not None
            self._checked_at, self._last_error, self._refused = now, None, None
            if (etag and etag != self._meta.get("etag")) or (
                last_modified and last_modified != self._meta.get("last_modified")
            ):
                self._meta = {
                    **self._meta,
                    "etag": etag or self._meta.get("etag"),
                    "last_modified": last_modified or self._meta.get("last_modified"),
                }
                await self._save(None, self._meta)
            return None
        try:
            table = self._checked(body)
        except RefusedDownload as refused:
            self._refused = {"reason": str(refused), "at": now}
            self._last_error = str(refused)[:200]
            log.warning("expected values: %s; keeping version %s", refused, self._version())
            raise
        self._expected, self._loaded_at, self._checked_at = table, now, now
        self._last_error, self._refused = None, None
        self._meta = {
            "url": url,
            "etag": etag,
            "last_modified": last_modified,
            "version": table.version,
            "rows": len(table),
            "saved_at": now,
        }
        if remote:
            await self._save(body, self._meta)
        return table

    def _checked(self, body: bytes) -> rating_maths.ExpectedValues:
        """The downloaded table, or RefusedDownload when it is not one to rate with.

        parse_expected_values accepts any JSON object whose "data" is a non-empty list with one
        usable row, skipping malformed rows and reading a missing version as "unknown". A
        download is refused when it
        - is not JSON (an error page, a cut-off body): "is not valid JSON";
        - changed format, i.e. is not XVM's layout: not an object, no "header" object with a
          "version", "data" not a non-empty list of rows, or more than MAX_ROWS_LOST of its rows
          lacking IDNum or a positive number in one of expDef, expFrag, expSpot, expDamage,
          expWinRate (renamed or retyped fields): "changed format";
        - has more than MAX_ROWS_LOST fewer rows than the table in use: "lost N % of its rows".
        """
        where = f"the download from {_shown(self.location)}"
        try:
            obj = json.loads(body)
        except ValueError as exc:
            raise RefusedDownload(f"{where} is not valid JSON ({str(exc)[:80]})") from exc
        try:
            table = rating_maths.ExpectedValues.from_json(obj)
        except ValueError as exc:
            raise RefusedDownload(f"{where} changed format: {exc}") from exc
        if table.version == rating_maths.UNKNOWN_VERSION:
            raise RefusedDownload(f'{where} changed format: no "header" object with a "version"')
        total = len(table) + table.rows_skipped
        if table.rows_skipped > MAX_ROWS_LOST * total:
            raise RefusedDownload(
                f"{where} changed format: {table.rows_skipped} of its {total} rows are not XVM rows "
                f"(e.g. {table.skip_reasons[0].removeprefix('expected values: ')})"
            )
        in_use = self._expected
        if in_use is not None and len(table) < (1 - MAX_ROWS_LOST) * len(in_use):
            lost = 100 * (len(in_use) - len(table)) / len(in_use)
            raise RefusedDownload(f"{where} lost {lost:.0f} % of its rows ({len(in_use)} -> {len(table)})")
        return table

    async def _save(self, body: bytes | None, meta: Mapping[str, Any]) -> None:
        """Keep the table (when `body` is given) and its meta file; a failure is logged only."""
        if self.saved_dir is None:
            return
        try:
            await asyncio.get_running_loop().run_in_executor(None, _write_saved, self.saved_dir, body, dict(meta))
        except Exception as exc:
            log.warning(
                "expected values: could not keep version %s in %s: %s", meta.get("version"), self.saved_dir, exc
            )
            return
        self._saved = {
            "path": str(self.saved_dir / SAVED_TABLE),
            "version": meta.get("version"),
            "url": _shown(meta.get("url")),
        }

    def _version(self) -> str | None:
        return self._expected.version if self._expected is not None else None

    def _rows(self) -> int:
        return len(self._expected) if self._expected is not None else 0

    async def tiers(self, region: str) -> dict[int, int]:
        """Vehicle tiers of a region, refreshed daily; concurrent callers share one fetch."""
        cached = self._tiers.get(region)
        now = self.clock()
        if cached and cached[0] > now - REFRESH_SECONDS:
            return cached[1]
        if cached is None and self._tiers_failed.get(region, -1e18) > now - TIERS_RETRY_SECONDS:
            return {}
        pending = self._tiers_fetching.get(region)
        if pending is None:
            # The first fetch has a request waiting (a live call's quick retries); a daily
            # refresh goes on in the background (its back-off) while callers use the old list.
            pending = asyncio.ensure_future(self._fetch_tiers(region, "live" if cached is None else "reference"))
            self._tiers_fetching[region] = pending
            pending.add_done_callback(lambda _: self._tiers_fetching.pop(region, None))
        if cached is not None:
            return cached[1]
        return await asyncio.shield(pending)

    async def vehicles(self, region: str) -> dict[int, dict]:
        """Encyclopedia facts (name, tier, type, nation) by tank_id, from the same daily fetch as
        the tiers; empty until it has succeeded once."""
        await self.tiers(region)
        return self._vehicles.get(region, {})

    async def catalogue(self, region: str) -> tuple[float, dict[int, dict]] | None:
        """(fetched at, the encyclopedia by tank_id with every CATALOGUE_KEYS field) from the same
        daily fetch as the tiers; None until it has succeeded once in this process."""
        await self.tiers(region)
        return self._catalogue.get(region)

    async def _fetch_tiers(self, region: str, caller: Caller = "reference") -> dict[int, int]:
        cached = self._tiers.get(region)
        try:
            vehicles = await self.upstream.vehicles(region, fields=VEHICLE_FIELDS, caller=caller)
            tiers = {int(tank_id): int(v["tier"]) for tank_id, v in vehicles.items() if v and v.get("tier")}
            self._vehicles[region] = {
                int(tank_id): {key: v.get(key) for key in ("name", "tier", "type", "nation")}
                for tank_id, v in vehicles.items()
                if v
            }
            fetched_at = self.clock()
            self._catalogue[region] = (
                fetched_at,
                {int(t): {key: v.get(key) for key in CATALOGUE_KEYS[1:]} for t, v in vehicles.items() if v},
            )
            self._tiers[region] = (fetched_at, tiers)
            return tiers
        except Exception as exc:
            log.warning("vehicle tiers unavailable for %s: %s", region, type(exc).__name__)
            self._tiers_failed[region] = self.clock()
            return cached[1] if cached else {}


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def _read_saved(directory: Path) -> tuple[bytes, dict[str, Any]] | None:
    """The kept table and its meta file (blocking: run it off the event loop); None when absent."""
    try:
        body = (directory / SAVED_TABLE).read_bytes()
    except FileNotFoundError:
        return None
    try:
        meta = json.loads((directory / SAVED_META).read_bytes())
    except (FileNotFoundError, ValueError):
        meta = None
    return body, meta if isinstance(meta, dict) else {}


def _write_saved(directory: Path, body: bytes | None, meta: dict[str, Any]) -> None:
    """Write the table, then its meta file, each atomically (blocking: run it off the event loop).
    In this order a write cut short leaves a meta file that does not match the table, which
    _load_saved_locked notices, never a meta file claiming a table that is not there."""
    directory.mkdir(parents=True, exist_ok=True)
    if body is not None:
        _write_atomic(directory / SAVED_TABLE, body)
    _write_atomic(directory / SAVED_META, json.dumps(meta, indent=1, sort_keys=True).encode())


def _write_atomic(path: Path, data: bytes) -> None:
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def _header(headers: Mapping[str, str], name: str) -> str | None:
    """A response header by name, whatever its case."""
    wanted = name.lower()
    for key, value in headers.items():
        if key.lower() == wanted and value:
            return value
    return None


def _same_url(a: object, b: object) -> bool:
    return isinstance(a, str) and isinstance(b, str) and a.rstrip("/") == b.rstrip("/")


def _shown(location: object) -> str | None:
    """The location as /status and the log show it: no user or password, no query values."""
    if not isinstance(location, str):
        return None
    parts = urllib.parse.urlsplit(location)
    if not parts.scheme or not parts.netloc:
        return location  # a local file
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    query = "&".join(f"{k}=..." for k, _ in urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, query, ""))
