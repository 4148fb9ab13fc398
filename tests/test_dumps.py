"""The daily bulk files: a day's files appear together (manifest last), are the same bytes when
written twice, a failed build leaves the earlier days listed, old days go after DUMPS_KEEP_DAYS;
and on demo data (check_dumps_on_demo, run by tests/test_marks.py on the demo it seeds) /dumps
lists the day's files, each served immutable with Range and matching its checksum and its API answer."""

from __future__ import annotations

import csv
import datetime as dt
import gzip
import hashlib
import io
import os

import pytest
import ujson
from tornado.httpclient import AsyncHTTPClient, HTTPRequest

from handlers.dumps import byte_range
from server.contract.catalogue import DUMPS_KEEP_DAYS
from server.contract.errors import APIError
from server.services.dumps import DumpService, manifest_name


class FakeStats:
    """Answers the tank tables as the service would, with a row per tank."""

    def __init__(self) -> None:
        self.rows = [{"tank_id": 1, "name": 'T, "one"', "tier": 10}, {"tank_id": 2, "name": "Ü", "tier": 8}]
        self.fail: str | None = None

    def forget(self, region: str) -> None:
        return None

    async def tank_table(self, region, days, query, sort, order):
        if self.fail == "tank_table":
            raise RuntimeError("the database went away")
        return {"region": region, "days": days, "tanks": self.rows}

    async def marks_list(self, region, query, sort, order):
        raise APIError("no_statistics")  # not built yet: left out


class FakeExpected:
    async def document(self, region, source, version):
        raise APIError("no_expected_values")


class FakeOnline:
    async def history(self, game, region, days):
        return {"game": game, "region": region, "days": days, "series": [{"date": "2026-11-01", "samples": 3}]}


class FakeBoards:
    def __init__(self, total: int = 250) -> None:
        self.total = total
        self.pages: list[tuple[int, int]] = []

    async def players(self, region, window, by, tier, vehicle_type, min_battles, offset, limit):
        self.pages.append((offset, limit))
        rows = [{"rank": i + 1, "account_id": 1000 + i, "value": 1.5} for i in range(self.total)]
        return {"total": self.total, "rows": rows[offset : offset + limit]}

    async def clans(self, region, window, by, min_members, offset, limit):
        raise APIError("no_statistics")


def service(directory: str, stats: FakeStats | None = None, boards: FakeBoards | None = None) -> DumpService:
    return DumpService(
        directory,
        stats or FakeStats(),  # type: ignore[arg-type]
        FakeExpected(),  # type: ignore[arg-type]
        boards or FakeBoards(),  # type: ignore[arg-type]
        FakeOnline(),  # type: ignore[arg-type]
        clock=lambda: 1_800_000_000.0,
    )


@pytest.mark.gen_test
async def test_a_day_is_listed_with_every_file_checksums_match_and_a_rewrite_is_the_same_bytes(tmp_path):
    boards = FakeBoards()
    dumps = service(str(tmp_path), boards=boards)
    built = await dumps.build("eu", "2026-11-26")
    assert built is not None and built["files"] > 0
    listing = await dumps.listing("eu", None)
    assert listing["day"] == "2026-11-26" and listing["days"] == ["2026-11-26"]
    names = {entry["name"] for entry in listing["files"]}
    assert "tank-stats-30d-eu-2026-11-26.csv.gz" in names and "online-eu-2026-11-26.json.gz" in names
    assert not any(name.startswith("tank-marks") or name.startswith("expected-values") for name in names)
    first = {}
    for entry in listing["files"]:
        payload = (tmp_path / entry["day"] / entry["name"]).read_bytes()
        assert hashlib.sha256(payload).hexdigest() == entry["sha256"] and len(payload) == entry["bytes"]
        first[entry["name"]] = payload
    # A leaderboard holds every row (one page of all of them after the one-row page), not a page.
    board = ujson.loads(gzip.decompress(first["leaderboard-players-30-wn8-eu-2026-11-26.json.gz"]))
    assert len(board["rows"]) == boards.total
    rows = list(csv.reader(io.StringIO(gzip.decompress(first["tank-stats-30d-eu-2026-11-26.csv.gz"]).decode())))
    assert rows[1][:2] == ["1", 'T, "one"'] and rows[2][1] == "Ü"
    # Built again (a forced rebuild of the same day): the same bytes under the same names.
    await dumps.build("eu", "2026-11-26")
    for name, payload in first.items():
        assert (tmp_path / "2026-11-26" / name).read_bytes() == payload
    assert not [name for _, _, names in os.walk(tmp_path) for name in names if name.endswith(".tmp")]


@pytest.mark.gen_test
async def test_a_failed_build_lists_nothing_new_and_keeps_the_earlier_days(tmp_path):
    stats = FakeStats()
    dumps = service(str(tmp_path), stats=stats)
    await dumps.build("eu", "2026-11-25")
    before = await dumps.listing("eu", None)
    stats.fail = "tank_table"
    with pytest.raises(RuntimeError):
        await dumps.build("eu", "2026-11-26")
    after = await dumps.listing("eu", None)
    assert after == before and after["days"] == ["2026-11-25"]
    assert not (tmp_path / "manifests" / manifest_name("eu", "2026-11-26")).exists()
    # Another realm, and a day asked for by name.
    assert (await dumps.listing("na", None))["days"] == []
    assert (await dumps.listing(None, "2026-11-25"))["files"] == before["files"]
    assert (await dumps.listing("eu", "2020-01-01"))["files"] == []


@pytest.mark.gen_test
async def test_days_older_than_the_kept_days_are_deleted_and_no_directory_means_none(tmp_path):
    dumps = service(str(tmp_path))
    newest = dt.date(2026, 11, 26)
    old = (newest - dt.timedelta(days=DUMPS_KEEP_DAYS)).isoformat()
    kept = (newest - dt.timedelta(days=DUMPS_KEEP_DAYS - 1)).isoformat()
    await dumps.build("eu", old)
    await dumps.build("eu", kept)
    await dumps.build("eu", newest.isoformat())
    listing = await dumps.listing("eu", None)
    assert listing["days"] == [newest.isoformat(), kept]
    assert not [name for _, dirs, names in os.walk(tmp_path) for name in dirs + names if old in name]
    assert await service(None).build("eu", "2026-11-26") is None  # type: ignore[arg-type]
    assert (await service(None).listing(None, None))["days"] == []  # type: ignore[arg-type]


def test_one_byte_range_is_served_and_anything_else_is_the_whole_file_or_a_416():
    size = 100
    assert byte_range("bytes=0-9", size) == (0, 9)
    assert byte_range("bytes=90-", size) == (90, 99)
    assert byte_range("bytes=95-200", size) == (95, 99)  # the end clipped to the file
    assert byte_range("bytes=-10", size) == (90, 99)
    assert byte_range("bytes=-500", size) == (0, 99)
    for ignored in (None, "", "bytes=0-9,20-29", "items=0-9", "bytes=9-0", "bytes=-", "bytes=a-b"):
        assert byte_range(ignored, size) is None, ignored
    for past in ("bytes=100-", "bytes=100-200", "bytes=-0"):
        with pytest.raises(APIError) as raised:
            byte_range(past, size)
        assert raised.value.code == "range_not_satisfiable"
        assert raised.value.headers["Content-Range"] == "bytes */100"


# --- on demo data ------------------------------------------------------------------------------


async def fetch(base_url: str, path: str, headers: dict | None = None):
    request = HTTPRequest(base_url + path, headers=headers or {}, request_timeout=60)
    return await AsyncHTTPClient().fetch(request, raise_error=False)


async def check_dumps_on_demo(base_url: str) -> None:
    """After the demo's tank-statistics build: /dumps lists the eu day's files; each is served with
    its checksum, immutable, with an ETag (304) and Range (206); the JSON of the 30-day tank
    statistics is that endpoint's answer with all rows; a bad day is a 400, an unknown file a 404."""
    answer = await fetch(base_url, "/api/v1/dumps?region=eu")
    assert answer.code == 200, answer.body[:300]
    listing = ujson.loads(answer.body)["data"]
    assert listing["day"] and listing["files"], listing
    kinds = {entry["kind"] for entry in listing["files"]}
    assert {"tank-stats-7d", "tank-stats-30d", "tank-stats-90d", "tank-marks", "leaderboard-players-30-wn8"} <= kinds
    for entry in listing["files"]:
        got = await fetch(base_url, entry["url"])
        assert got.code == 200, entry
        assert hashlib.sha256(got.body).hexdigest() == entry["sha256"], entry["name"]
        assert got.headers["Cache-Control"] == "public, max-age=31536000, immutable"
        assert got.headers["Content-Type"] == "application/gzip"
        text = gzip.decompress(got.body).decode("utf-8")
        if entry["format"] == "csv":
            assert len(list(csv.reader(io.StringIO(text, newline="")))) == entry["rows"] + 1
        else:
            assert isinstance(ujson.loads(text), dict)
    table = next(e for e in listing["files"] if e["kind"] == "tank-stats-30d" and e["format"] == "json")
    dumped = ujson.loads(gzip.decompress((await fetch(base_url, table["url"])).body))
    api = ujson.loads(
        (await fetch(base_url, "/api/v1/tanks/stats?region=eu&days=30&limit=100&sort=battles&order=desc")).body
    )["data"]
    assert dumped["through"] == listing["day"] == api["through"]
    assert dumped["total"] == api["total"] == len(dumped["tanks"])
    assert dumped["tanks"][: len(api["tanks"])] == api["tanks"]
    # Conditional and partial requests.
    first = await fetch(base_url, table["url"])
    again = await fetch(base_url, table["url"], {"If-None-Match": first.headers["ETag"]})
    assert again.code == 304
    part = await fetch(base_url, table["url"], {"Range": "bytes=0-9"})
    assert part.code == 206 and part.body == first.body[:10]
    assert part.headers["Content-Range"] == f"bytes 0-9/{len(first.body)}"
    past = await fetch(base_url, table["url"], {"Range": f"bytes={len(first.body)}-"})
    assert past.code == 416 and ujson.loads(past.body)["error"]["code"] == "range_not_satisfiable"
    # Errors stay JSON.
    bad = await fetch(base_url, "/api/v1/dumps?day=2026-1-1")
    assert bad.code == 400 and ujson.loads(bad.body)["error"]["code"] == "invalid_day"
    for name in ("nothing-eu-2026-01-01.csv.gz", "..%2Fsecret", manifest_name("eu", listing["day"])):
        missing = await fetch(base_url, "/api/v1/dumps/" + name)
        assert missing.code == 404 and ujson.loads(missing.body)["error"]["code"] == "dump_not_found", name
