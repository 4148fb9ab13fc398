"""The two XVM expected-values tables, as static.modxvm.com serves them.

- ``frozen`` (``/json/wn8exp.json``, alias ``/wn8exp.json``): the ``--expected-values`` file as
  is, or the table generated for the catalogue.
- ``wg`` (``/json/wg/wn8exp.json``): the *maintained* table: every row of the frozen table
  unchanged plus a generated row (``generated_expectation``: the values the world plays those
  tanks with) for every catalogue vehicle the frozen table lacks, under a ``version`` of its own
  (a date after the frozen one's). ``bump`` makes a new version: the added rows' values move
  slightly, the version date moves a day on, and ETag and Last-Modified change.

Both are served in the XVM layout ``{"header": {"version", "source", "url"}, "data": [{"IDNum",
"expDef", "expFrag", "expSpot", "expDamage", "expWinRate"}]}`` with ``ETag`` (a hash of the body)
and ``Last-Modified`` (frozen: the date its version names; wg: when its version was made), and
answer a matching ``If-None-Match``, or an ``If-Modified-Since`` not older than Last-Modified, with
304 and no body. The wg table's delivery can be spoiled on demand (``mode``: ``garbage`` is not
JSON, ``truncated`` drops every tenth row, ``format`` puts the rows under another layout) and its
next ``fail`` requests answer HTTP 503.
"""

from __future__ import annotations

import calendar
import datetime as dt
import hashlib
import random
import time
from email.utils import formatdate, parsedate_to_datetime
from typing import Any

import ujson

from .vehicles import generated_expectation

TABLES = ("frozen", "wg")
WG_MODES = ("ok", "garbage", "truncated", "format")
VALUE_KEYS = ("expDef", "expFrag", "expSpot", "expDamage", "expWinRate")
GARBAGE = (
    b"<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1>"
    b"</center><hr><center>nginx</center></body></html>\n"
)
BAD_ROWS: list[Any] = [
    {"expDef": "0.5", "expFrag": "1.0", "expSpot": "1.0", "expDamage": "500", "expWinRate": "52"},
    {"IDNum": "not-a-number", "expDef": "x", "expFrag": "1", "expSpot": "1", "expDamage": "1", "expWinRate": "50"},
    {"IDNum": 999_999_001, "expDef": None, "expFrag": "n/a", "expSpot": [], "expDamage": {}, "expWinRate": ""},
    {"IDNum": 999_999_002},
    "not a row",
    None,
]


def _as_strings(rows: list) -> list:
    return [
        {k: (str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v) for k, v in row.items()}
        if isinstance(row, dict)
        else row
        for row in rows
    ]


def variant(doc: Any, strings: bool, bad_rows: int) -> Any:
    """``doc`` (the XVM layout, or any object holding its rows under "data" or "tanks") with every
    number as a string and/or ``bad_rows`` malformed rows appended."""
    if not isinstance(doc, dict):
        return doc
    key = "data" if "data" in doc else "tanks" if "tanks" in doc else None
    if key is None:
        return doc
    rows = doc.get(key)
    rows = list(rows) if isinstance(rows, list) else []
    if strings:
        rows = _as_strings(rows)
    rows += [BAD_ROWS[i % len(BAD_ROWS)] for i in range(bad_rows)]
    return {**doc, key: rows}


def _row_id(row: Any) -> float:
    try:
        return float(int(row["IDNum"]))
    except (KeyError, TypeError, ValueError):
        return float("inf")


def _date(version: Any) -> dt.date | None:
    try:
        return dt.date.fromisoformat(str(version)[:10])
    except ValueError:
        return None


def etag_of(body: bytes) -> str:
    return '"' + hashlib.blake2b(body, digest_size=10).hexdigest() + '"'


def http_date(ts: float) -> str:
    return formatdate(ts, usegmt=True)


def not_modified(headers: Any, etag: str, last_modified: int) -> bool:
    """RFC 9110: If-None-Match decides when present; else If-Modified-Since not older than Last-Modified."""
    inm = headers.get("If-None-Match")
    if inm is not None:
        tags = {t.strip().removeprefix("W/") for t in inm.split(",")}
        return "*" in tags or etag in tags
    ims = headers.get("If-Modified-Since")
    if ims:
        try:
            since = parsedate_to_datetime(ims)
        except (TypeError, ValueError, IndexError):
            return False
        if since.tzinfo is None:
            since = since.replace(tzinfo=dt.UTC)
        return since.timestamp() >= last_modified
    return False


class ExpectedTables:
    """The frozen and the maintained expected-values tables, their delivery modes and counters."""

    def __init__(self, world, sim_now: float, real_now: float | None = None):
        self.world = world
        self.frozen_bytes: bytes = world.expected_bytes
        try:
            doc = ujson.loads(self.frozen_bytes)
        except ValueError:
            doc = {}
        self.frozen_doc: dict = doc if isinstance(doc, dict) else {}
        rows = self.frozen_doc.get("data")
        self.frozen_rows: list = list(rows) if isinstance(rows, list) else []
        header = self.frozen_doc.get("header")
        self.frozen_version = str(header.get("version")) if isinstance(header, dict) else None
        frozen_date = _date(self.frozen_version)
        real_now = time.time() if real_now is None else real_now
        self.frozen_last_modified = (
            calendar.timegm(frozen_date.timetuple()) if frozen_date is not None else int(real_now)
        )
        # The maintained table's first version: the simulated day, at least a day after the frozen one.
        base = dt.datetime.fromtimestamp(sim_now, dt.UTC).date()
        if frozen_date is not None and base <= frozen_date:
            base = frozen_date + dt.timedelta(days=1)
        self.wg_base_date = base
        have = {int(r) for r in (_row_id(row) for row in self.frozen_rows) if r != float("inf")}
        self.new_ids = [t for t in world.tank_ids if t not in have]
        self.mode = "ok"
        self.fail = 0
        self.bumps = 0
        self.wg_last_modified = int(real_now)
        self._variants: dict[tuple, tuple[bytes, str]] = {}
        self.reset_counts()

    # -- the maintained table ----------------------------------------------------------

    @property
    def wg_version(self) -> str:
        version = (self.wg_base_date + dt.timedelta(days=self.bumps)).isoformat()
        return version if version != self.frozen_version else version + ".1"

    def new_row(self, tank_id: int) -> dict:
        row = generated_expectation(self.world.vehicles[tank_id])
        if self.bumps:
            rng = random.Random(f"wg-bump:{tank_id}:{self.bumps}")
            row = {**row, **{k: round(row[k] * rng.uniform(0.98, 1.02), 3) for k in VALUE_KEYS}}
        return row

    def wg_doc(self) -> dict:
        rows = list(self.frozen_rows) + [self.new_row(t) for t in self.new_ids]
        rows.sort(key=_row_id)  # XVM's order (stable: frozen rows keep theirs)
        header = {"version": self.wg_version, "source": "upstream_sim", "url": "/json/wg/wn8exp.json"}
        return {"header": header, "data": rows}

    def _new_version(self, real_now: float | None = None) -> None:
        real_now = time.time() if real_now is None else real_now
        self.wg_last_modified = max(int(real_now), self.wg_last_modified + 1)
        self._variants = {k: v for k, v in self._variants.items() if k[0] != "wg"}

    # -- serving -----------------------------------------------------------------------

    def body(self, table: str, strings: bool, bad_rows: int) -> tuple[bytes, str]:
        """(body, ETag) of a table as currently served (the wg table in its current mode)."""
        mode = self.mode if table == "wg" else "ok"
        key = (table, strings, bad_rows, mode)
        cached = self._variants.get(key)
        if cached is not None:
            return cached
        if table == "frozen":
            body = (
                self.frozen_bytes
                if not strings and not bad_rows
                else ujson.dumps(variant(self.frozen_doc, strings, bad_rows)).encode()
            )
        elif mode == "garbage":
            body = GARBAGE
        else:
            doc = self.wg_doc()
            if mode == "truncated":
                doc["data"] = [row for i, row in enumerate(doc["data"]) if i % 10 != 9]
            elif mode == "format":
                doc = {"version": doc["header"]["version"], "tanks": doc["data"]}
            body = ujson.dumps(variant(doc, strings, bad_rows)).encode()
        cached = self._variants[key] = (body, etag_of(body))
        return cached

    def last_modified(self, table: str) -> int:
        return self.frozen_last_modified if table == "frozen" else self.wg_last_modified

    def take_failure(self, table: str) -> bool:
        """True when this request of ``table`` is one of the next ``fail`` that answer 503."""
        if table == "wg" and self.fail > 0:
            self.fail -= 1
            return True
        return False

    def count(self, table: str, status: int) -> None:
        served = self.served[table]
        served[str(status)] = served.get(str(status), 0) + 1

    def reset_counts(self) -> None:
        self.served: dict[str, dict[str, int]] = {t: {"200": 0, "304": 0, "503": 0} for t in TABLES}

    # -- control -----------------------------------------------------------------------

    def update(self, body: dict) -> None:
        """Apply a ``/_sim/expected`` POST body (validated as a whole before anything changes)."""
        unknown = set(body) - {"wg", "bump", "fail", "reset"}
        if unknown:
            raise ValueError(f"unknown keys: {', '.join(sorted(unknown))}")
        if "wg" in body and body["wg"] not in WG_MODES:
            raise ValueError(f"wg must be one of {', '.join(WG_MODES)}")
        fail = body.get("fail")
        if "fail" in body and (isinstance(fail, bool) or not isinstance(fail, int) or fail < 0):
            raise ValueError("fail must be an integer >= 0")
        bump = body.get("bump")
        if "bump" in body and not (isinstance(bump, bool) or (isinstance(bump, int) and bump >= 0)):
            raise ValueError("bump must be true or a number of versions >= 0")
        if body.get("reset"):
            if self.bumps:
                self.bumps = 0
                self._new_version()
            self.mode, self.fail = "ok", 0
            self.reset_counts()
        if "wg" in body:
            self.mode = body["wg"]
        if "fail" in body:
            self.fail = fail
        steps = int(bump) if bump else 0
        if steps:
            self.bumps += steps
            self._new_version()

    def describe(self) -> dict:
        return {
            "wg": self.mode,
            "fail": self.fail,
            "bumps": self.bumps,
            "versions": {"frozen": self.frozen_version, "wg": self.wg_version},
            "rows": {"frozen": len(self.frozen_rows), "wg": len(self.frozen_rows) + len(self.new_ids)},
            "last_modified": {t: http_date(self.last_modified(t)) for t in TABLES},
            "etags": {t: self.body(t, False, 0)[1] for t in TABLES},
            "served": {t: dict(v) for t, v in self.served.items()},
        }
