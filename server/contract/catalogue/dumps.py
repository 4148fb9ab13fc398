"""The daily bulk files' listing: GET /dumps."""

from __future__ import annotations

from server.contract.catalogue.model import Endpoint, Param
from server.contract.catalogue.shapes import (
    DATE,
    REGION_ENUM,
    array,
    nullable,
    obj,
)
from store.constants import REGIONS

DUMPS_KEEP_DAYS = 400  # a day's files are kept this long (server/services/dumps.py)

DUMPS = Endpoint(
    name="dumps",
    path="/dumps",
    summary="The daily bulk files: each realm's tables of a day as gzip'd CSV and JSON",
    description="After each day's tank-statistics build, every realm's tables of that day are written "
    "as files: the tank statistics (7, 30 and 90 days), the marks of excellence, the computed expected "
    "values (XVM format), the online counts (last 30 days) and every leaderboard (players and clans, each "
    "window and figure, all rows), each as gzip'd JSON (the answer of the matching endpoint with all its "
    "rows) and gzip'd CSV (its CSV). This lists the days that have files (newest first) and the files of "
    "one day (the newest by default) with their size and SHA-256. A file's name carries its day and never "
    f"changes; it is served at its `url` with `Cache-Control: public, max-age=31536000, immutable`, an "
    f"ETag and Range requests, and kept {DUMPS_KEEP_DAYS} days. A day's files appear together, once all "
    "are written; a build that fails leaves the earlier days as they were. Empty (no days) on a deployment "
    "without --dumps-dir or before its first build. They hold nothing about an account beyond what the "
    "public leaderboards show.",
    tag="tanks",
    operation_id="Dumps",
    limit_per_minute=30,
    cache_max_age=300,
    example="/dumps?region=eu",
    params=(
        Param(
            "region",
            "query",
            "string",
            "invalid_region",
            "Game region: eu, na or asia; all realms when absent. Give it at most once.",
            enum=REGIONS,
        ),
        Param(
            "day",
            "query",
            "string",
            "invalid_day",
            "The UTC day (YYYY-MM-DD) whose files to list; the newest with files when absent.",
            min_length=10,
            max_length=10,
            pattern=r"^\d{4}-\d{2}-\d{2}$",
            example="2026-11-26",
            format="date",
        ),
    ),
    errors=(),
    needs_database=False,
    schema="Dumps",
    fields={
        "region, day": "what was asked (day: the one listed; null when there is none)",
        "days": "the days with files, newest first",
        "kept_days": f"how long a day's files are kept ({DUMPS_KEEP_DAYS})",
        "built_at": "when the listed day's files were written (unix time; the newest realm's)",
        "files[]": "name, url, region, day, kind (tank-stats-30d, leaderboard-players-30-wn8, ...), "
        "format (json or csv, both gzip'd), rows, bytes, sha256 (of the file as served)",
    },
)

DUMP_FILE = Endpoint(
    name="dump_file",
    path="/dumps/{file}",
    summary="One daily bulk file (gzip'd CSV or JSON)",
    description="A file GET /dumps lists, as written: `application/gzip` (gunzip it for the CSV or JSON). "
    "Its name carries its day and its bytes never change: `Cache-Control: public, max-age=31536000, "
    "immutable`, an ETag (304 on If-None-Match) and one byte range per request (`Range: bytes=a-b`, "
    "`a-` or `-n`: 206 with Content-Range; past the end: 416). Compare its SHA-256 with the listing's.",
    tag="tanks",
    operation_id="DumpFile",
    limit_per_minute=60,
    cache_max_age=31_536_000,
    example="/dumps/tank-stats-30d-eu-2026-11-26.csv.gz",
    params=(
        Param(
            "file",
            "path",
            "string",
            "dump_not_found",
            "A file name from GET /dumps: kind, region, day, format, .gz.",
            min_length=1,
            max_length=120,
            pattern=r"^[a-z0-9-]+-(eu|na|asia)-[0-9]{4}-[0-9]{2}-[0-9]{2}[.](csv|json)[.]gz$",
            example="tank-stats-30d-eu-2026-11-26.csv.gz",
        ),
    ),
    errors=("range_not_satisfiable",),
    needs_database=False,
    schema=None,
    media_type="application/gzip",
)

# The `data` schemas of this module's endpoints (components/schemas), by their `schema` names.
SCHEMAS: dict[str, dict] = {
    "Dumps": obj(
        {
            "region": {"type": ["string", "null"], "enum": [*REGIONS, None]},
            "day": {"oneOf": [DATE, {"type": "null"}]},
            "days": array(DATE, description="The days with files, newest first."),
            "kept_days": {"type": "integer", "minimum": 1},
            "built_at": nullable("number"),
            "files": array(
                obj(
                    {
                        "name": {"type": "string"},
                        "url": {"type": "string"},
                        "region": REGION_ENUM,
                        "day": DATE,
                        "kind": {"type": "string"},
                        "format": {"type": "string", "enum": ["json", "csv"]},
                        "rows": {"type": "integer", "minimum": 0},
                        "bytes": {"type": "integer", "minimum": 1},
                        "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                    }
                )
            ),
        }
    ),
}

# This module's endpoints in the order the index and the OpenAPI document list them
# (server/contract/catalogue/__init__.py CATALOGUE).
ENDPOINTS: tuple[Endpoint, ...] = (
    DUMPS,
    DUMP_FILE,
)
