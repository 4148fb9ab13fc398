"""Today's expected-values table, kept (issue 30, item 1): XVM's maintained `wg/` table by default,
refreshed with a conditional GET, the last good download kept in the data directory (a restart
without network rates as before), and a bad download refused while the old table stays.

Over real HTTP: a small Tornado app in the test's loop serves the table's bytes with an ETag and
a Last-Modified (Tornado answers 304 to a matching If-None-Match) and records what it was sent;
the service's own UpstreamClient downloads from it. The last tests run against the upstream
simulator (a child process of this module's own, as its tables are spoiled on purpose): its
frozen /json/wn8exp.json and maintained /json/wg/wn8exp.json, and the app's wiring."""

from __future__ import annotations

import json
import os

import pytest
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets
from tornado.web import Application, RequestHandler

from server.compose.embedded_db import free_port
from server.domain.ratings import account_wn8
from server.services.expected import ExpectedValuesService
from server.upstream.budget import UpstreamBudget
from server.upstream.client import UpstreamClient, UpstreamUnavailable
from server.upstream.expected_values import (
    SAVED_DIR,
    SAVED_META,
    SAVED_TABLE,
    XVM_FROZEN_URL,
    XVM_URL,
    RatingsSource,
)
from tests.helpers import EXPECTED_VALUES_FILE, sim_async, simulator

LAST_MODIFIED = "Sat, 12 Sep 2026 03:00:00 GMT"


def xvm_doc(rows: int = 200, version: str = "2026-09-12", start: int = 1) -> dict:
    """An XVM document: the real frozen table when ../shared/data has it, else generated rows."""
    if EXPECTED_VALUES_FILE.exists():
        doc = json.loads(EXPECTED_VALUES_FILE.read_text())
        data = doc["data"][:rows]
    else:
        data = [
            {
                "IDNum": (start + i) * 16 + 1,
                "expDef": 0.5 + i % 7 / 10,
                "expFrag": 0.8 + i % 5 / 10,
                "expSpot": 1.1 + i % 3 / 10,
                "expDamage": 300.0 + 9 * i,
                "expWinRate": 48.0 + i % 9 / 2,
            }
            for i in range(rows)
        ]
    return {"header": {"source": "XVM", "version": version}, "data": data}


def encode(doc: dict) -> bytes:
    return json.dumps(doc).encode()


class TableHandler(RequestHandler):
    def get(self) -> None:
        served = self.application.settings["served"]
        served["requests"].append(dict(self.request.headers))
        if served["status"] != 200:
            self.set_status(served["status"])
            return
        self.set_header("Content-Type", "application/json")
        self.set_header("Last-Modified", LAST_MODIFIED)
        self.write(served["body"])  # Tornado sets the ETag and answers 304 to If-None-Match


class TableServer:
    """`body` at /json/wg/wn8exp.json; `requests` holds the headers of every request."""

    def __init__(self, body: bytes) -> None:
        self.served = {"body": body, "status": 200, "requests": []}
        sockets = bind_sockets(0, "127.0.0.1")
        self.server = HTTPServer(Application([(r"/json/wg/wn8exp.json", TableHandler)], served=self.served))
        self.server.add_sockets(sockets)
        self.url = f"http://127.0.0.1:{sockets[0].getsockname()[1]}/json/wg/wn8exp.json"

    def serve(self, body: bytes | None = None, status: int = 200) -> None:
        if body is not None:
            self.served["body"] = body
        self.served["status"] = status

    @property
    def requests(self) -> list[dict]:
        return self.served["requests"]

    def stop(self) -> None:
        self.server.stop()


class Clock:
    def __init__(self, now: float = 1_789_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def upstream(io_loop):
    client = UpstreamClient(
        "test-app-id-secret",
        max_retries=0,
        background_retries=0,
        budget=UpstreamBudget(100, hold_first_window=False),
        request_timeout=5,
    )
    yield client
    client.close()


@pytest.fixture
def table_server(io_loop):
    server = TableServer(encode(xvm_doc()))
    yield server
    server.stop()


class NoNetwork:
    """An upstream whose every download fails as a cut-off network does."""

    def __init__(self) -> None:
        self.calls = 0

    async def fetch_url(self, url, *, headers=None, caller="reference"):
        self.calls += 1
        raise UpstreamUnavailable(f"GET {url}: connection refused")


def tanks_of(table, count: int = 12) -> list[dict]:
    """A player's per-tank totals on the first `count` tanks of `table` (what WN8 is computed from)."""
    tanks = []
    for i, (tank_id, e) in enumerate(sorted(table.items())[:count]):
        battles = 50 + 10 * i
        skill = 0.7 + i / 20
        tanks.append(
            {
                "tank_id": tank_id,
                "battles": battles,
                "damage_dealt": battles * e.damage * skill,
                "spotted": battles * e.spot * skill,
                "frags": battles * e.frag * skill,
                "dropped_capture_points": battles * e.defence * skill,
                "wins": battles * e.win_rate / 100 * skill,
            }
        )
    return tanks


def test_the_default_location_is_xvms_maintained_wg_table():
    """Unset, the table comes from XVM's `wg/` file (rebuilt nightly), not the file XVM froze on
    2024-09-12; configuring the frozen one is reported as a problem."""
    source = RatingsSource(NoNetwork(), None)
    assert source.location == XVM_URL == "https://static.modxvm.com/wn8-data-exp/json/wg/wn8exp.json"
    assert source.location != XVM_FROZEN_URL
    assert source.status()["url"] == XVM_URL
    assert source.health_reasons() == []
    frozen = RatingsSource(NoNetwork(), XVM_FROZEN_URL)
    assert any("frozen" in reason and XVM_URL in reason for reason in frozen.health_reasons())


@pytest.mark.gen_test(timeout=30)
async def test_a_restart_without_network_rates_with_the_kept_table(tmp_path, upstream, table_server):
    """A good download is kept in <data_dir>/expected-values/; a new process over the same data
    directory whose downloads fail rates at once with the same table (version and rows) and the
    same WN8, and reports no problem (it has the table of its URL)."""
    first = RatingsSource(upstream, table_server.url, data_dir=str(tmp_path))
    table = await first.expected_values()
    assert table is not None and table.version == "2026-09-12" and len(table) == 200
    kept = tmp_path / SAVED_DIR
    assert json.loads((kept / SAVED_TABLE).read_bytes()) == xvm_doc()
    meta = json.loads((kept / SAVED_META).read_bytes())
    assert meta["url"] == table_server.url and meta["version"] == "2026-09-12" and meta["rows"] == 200
    assert meta["etag"] and meta["last_modified"] == LAST_MODIFIED
    assert [name for name in os.listdir(kept) if name.endswith(".tmp")] == []  # written by os.replace
    assert first.status()["saved"] == {
        "path": str(kept / SAVED_TABLE),
        "version": "2026-09-12",
        "url": table_server.url,
    }

    offline = NoNetwork()
    restarted = RatingsSource(offline, table_server.url, data_dir=str(tmp_path))
    again = await restarted.expected_values()
    assert again is not None and again.version == table.version and dict(again.items()) == dict(table.items())
    tanks = tanks_of(table)
    assert account_wn8(tanks, again) == pytest.approx(account_wn8(tanks, table))
    with pytest.raises(UpstreamUnavailable):
        await restarted.refresh_expected()  # the daily check fails: the kept table stays
    assert offline.calls >= 1
    status = restarted.status()
    assert status["version"] == "2026-09-12" and status["tanks"] == 200 and "connection refused" in status["last_error"]
    assert status["checked_at"] is None and status["refused"] is None
    assert restarted.health_reasons() == []

    # A closed port (the real client, nothing listening) rates the same way.
    closed = UpstreamClient(
        "test-app-id-secret", max_retries=0, background_retries=0, budget=UpstreamBudget(100, hold_first_window=False)
    )
    try:
        url = f"http://127.0.0.1:{free_port()}/json/wg/wn8exp.json"
        elsewhere = RatingsSource(closed, url, data_dir=str(tmp_path))
        assert (await elsewhere.load_saved()) is True
        assert dict((await elsewhere.expected_values()).items()) == dict(table.items())
    finally:
        closed.close()


@pytest.mark.gen_test(timeout=30)
async def test_the_daily_check_is_a_conditional_get_and_a_304_keeps_the_table(tmp_path, upstream, table_server):
    """The second check sends If-None-Match and If-Modified-Since of the last good download; the
    304 keeps the very table and counts as a successful check. After a restart the first check
    sends the kept download's validators too."""
    clock = Clock()
    source = RatingsSource(upstream, table_server.url, clock=clock, data_dir=str(tmp_path))
    assert "2026-09-12 (200 tanks)" in await source.refresh_expected()
    table = await source.expected_values()
    etag = json.loads((tmp_path / SAVED_DIR / SAVED_META).read_bytes())["etag"]
    assert "If-None-Match" not in table_server.requests[0]
    clock.now += 86400
    assert "unchanged" in await source.refresh_expected()
    sent = table_server.requests[-1]
    assert sent["If-None-Match"] == etag and sent["If-Modified-Since"] == LAST_MODIFIED
    assert await source.expected_values() is table
    assert source.status()["checked_at"] == clock.now and source.status()["loaded_at"] == clock.now - 86400

    restarted = RatingsSource(upstream, table_server.url, clock=clock, data_dir=str(tmp_path))
    await restarted.load_saved()
    clock.now += 86400
    assert "unchanged" in await restarted.refresh_expected()
    assert table_server.requests[-1]["If-None-Match"] == etag
    assert restarted.status()["checked_at"] == clock.now and restarted.status()["version"] == "2026-09-12"

    # A changed table is downloaded (200 to the same validators) and kept.
    table_server.serve(encode(xvm_doc(version="2026-09-13")))
    assert "2026-09-13" in await restarted.refresh_expected()
    assert json.loads((tmp_path / SAVED_DIR / SAVED_META).read_bytes())["version"] == "2026-09-13"


def truncated_rows(doc: dict, lost: float) -> dict:
    keep = len(doc["data"]) - int(len(doc["data"]) * lost)
    return {**doc, "header": {"version": "2026-09-13"}, "data": doc["data"][:keep]}


def renamed_fields(doc: dict) -> dict:
    rows = [{("exp_damage" if k == "expDamage" else k): v for k, v in row.items()} for row in doc["data"]]
    return {"header": {"version": "2026-09-13"}, "data": rows}


def some_rows_renamed(doc: dict) -> dict:
    """A tenth of the rows in a new layout (still enough rows, but not XVM's rows)."""
    rows = [
        {("damage" if k == "expDamage" and i % 10 == 0 else k): v for k, v in row.items()}
        for i, row in enumerate(doc["data"])
    ]
    return {"header": {"version": "2026-09-13"}, "data": rows}


BAD_DOWNLOADS = {
    "garbage": (lambda doc: b"<html><body>502 Bad Gateway</body></html>", "is not valid JSON"),
    "cut off": (lambda doc: encode(doc)[: len(encode(doc)) // 2], "is not valid JSON"),
    "rows lost": (lambda doc: encode(truncated_rows(doc, 0.06)), "lost 6 % of its rows (200 -> 188)"),
    "fields renamed": (lambda doc: encode(renamed_fields(doc)), "changed format"),
    "some rows renamed": (lambda doc: encode(some_rows_renamed(doc)), "changed format: 20 of its 200 rows"),
    "no header": (lambda doc: encode({"data": doc["data"]}), 'changed format: no "header" object with a "version"'),
    "rows by id": (
        lambda doc: encode({"header": {"version": "x"}, "data": {str(r["IDNum"]): r for r in doc["data"]}}),
        "changed format",
    ),
    "not an object": (lambda doc: encode(doc["data"]), "changed format"),
}


@pytest.mark.parametrize("kind", sorted(BAD_DOWNLOADS))
@pytest.mark.gen_test(timeout=30)
async def test_a_bad_download_is_refused_and_the_old_table_kept(tmp_path, upstream, table_server, kind):
    """Garbage, a table that lost more than 5 % of its rows or one in another format leaves the
    table in use and the kept file alone; /status's `refused` names the reason and the
    health reasons say what is kept; a later good download clears both."""
    clock = Clock()
    source = RatingsSource(upstream, table_server.url, clock=clock, data_dir=str(tmp_path))
    service = ExpectedValuesService(None, source)  # what /status reads (the store is not used here)
    table = await source.expected_values()
    kept_bytes = (tmp_path / SAVED_DIR / SAVED_TABLE).read_bytes()

    make, reason = BAD_DOWNLOADS[kind]
    table_server.serve(make(xvm_doc()))
    clock.now += 86400
    with pytest.raises(ValueError, match="the download from"):
        await source.refresh_expected()
    assert await source.expected_values() is table
    assert (tmp_path / SAVED_DIR / SAVED_TABLE).read_bytes() == kept_bytes
    refused = service.status()["refused"]
    assert refused is not None and reason in refused["reason"] and refused["at"] == clock.now
    assert table_server.url in refused["reason"]
    assert service.status()["version"] == "2026-09-12" and service.status()["saved"]["version"] == "2026-09-12"
    reasons = service.health_reasons()
    assert len(reasons) == 1 and reason in reasons[0] and reasons[0].endswith("keeping version 2026-09-12")

    # A restart over the same directory rates with the good table, not the refused one.
    restarted = RatingsSource(NoNetwork(), table_server.url, data_dir=str(tmp_path))
    assert dict((await restarted.expected_values()).items()) == dict(table.items())

    table_server.serve(encode(xvm_doc(version="2026-09-14", rows=195)))  # 2.5 % fewer rows: accepted
    clock.now += 86400
    assert "2026-09-14 (195 tanks)" in await source.refresh_expected()
    assert service.status()["refused"] is None and service.health_reasons() == []
    assert service.status()["checked_at"] == clock.now
    assert json.loads((tmp_path / SAVED_DIR / SAVED_META).read_bytes())["version"] == "2026-09-14"


@pytest.mark.gen_test(timeout=30)
async def test_a_first_start_without_network_and_without_a_kept_table_is_a_health_reason(tmp_path, upstream):
    """No kept copy and a failed download: no table (WN8 is null), and that is a health reason; the
    first good download ends it."""
    server = TableServer(b"")
    try:
        server.serve(status=404)
        source = RatingsSource(upstream, server.url, data_dir=str(tmp_path))
        assert await source.expected_values() is None
        (reason,) = source.health_reasons()
        assert reason.startswith("expected values: no table: the download from " + server.url) and "404" in reason
        server.serve(encode(xvm_doc()))
        await source.refresh_expected()
        assert len(await source.expected_values()) == 200 and source.health_reasons() == []
    finally:
        server.stop()

    garbage = RatingsSource(NoNetwork(), "unused", data_dir=None)
    garbage.location = str(tmp_path / "not-a-table.json")
    (tmp_path / "not-a-table.json").write_bytes(b"{oops")
    assert await garbage.expected_values() is None
    (reason,) = garbage.health_reasons()
    assert "no table" in reason and "is not valid JSON" in reason


@pytest.mark.gen_test(timeout=30)
async def test_a_changed_location_uses_the_kept_table_until_the_new_one_downloads(tmp_path, upstream, table_server):
    """The kept table came from another URL: it rates at once, no conditional GET is sent to the
    new URL (its validators belong to the old one), and the new table replaces it once it
    downloads; while the new URL fails, that is a health reason."""
    await RatingsSource(upstream, table_server.url, data_dir=str(tmp_path)).refresh_expected()
    other = TableServer(b"")
    try:
        other.serve(status=503)
        moved = RatingsSource(upstream, other.url, data_dir=str(tmp_path))
        table = await moved.expected_values()
        assert table is not None and table.version == "2026-09-12"
        with pytest.raises(UpstreamUnavailable):
            await moved.refresh_expected()
        assert all("If-None-Match" not in sent for sent in other.requests)
        status = moved.status()
        assert status["url"] == other.url and status["saved"]["url"] == table_server.url
        (reason,) = moved.health_reasons()
        assert f"kept from {table_server.url}" in reason and other.url in reason

        other.serve(encode(xvm_doc(version="2026-10-01", rows=120)))  # fewer rows than kept: still refused
        with pytest.raises(ValueError, match="lost 40 %"):
            await moved.refresh_expected()
        other.serve(encode(xvm_doc(version="2026-10-01")))
        await moved.refresh_expected()
        assert (await moved.expected_values()).version == "2026-10-01" and moved.health_reasons() == []
        assert moved.status()["saved"] == {
            "path": str(tmp_path / SAVED_DIR / SAVED_TABLE),
            "version": "2026-10-01",
            "url": other.url,
        }
    finally:
        other.stop()


@pytest.mark.gen_test(timeout=30)
async def test_a_kept_meta_file_that_does_not_match_its_table_sends_no_validators(tmp_path, upstream, table_server):
    """A write cut short between the table and its meta file: the table is still used, but its
    validators are not trusted (a 304 to them would keep the wrong table)."""
    source = RatingsSource(upstream, table_server.url, data_dir=str(tmp_path))
    await source.refresh_expected()
    meta_path = tmp_path / SAVED_DIR / SAVED_META
    meta = json.loads(meta_path.read_bytes())
    meta_path.write_text(json.dumps({**meta, "version": "2026-09-13"}))
    restarted = RatingsSource(upstream, table_server.url, data_dir=str(tmp_path))
    assert (await restarted.load_saved()) is True
    await restarted.refresh_expected()
    assert "If-None-Match" not in table_server.requests[-1]
    assert json.loads(meta_path.read_bytes())["version"] == "2026-09-12"


@pytest.fixture(scope="module")
def own_sim():
    """A simulator child process of this module's own (its wg table is spoiled on purpose)."""
    with simulator(100) as base:
        yield base


@pytest.mark.gen_test(timeout=60)
async def test_against_the_simulator_the_wg_table_is_checked_kept_and_refused_when_spoiled(tmp_path, upstream, own_sim):
    """The simulator's maintained table (frozen rows plus the vehicles the frozen one lacks)
    downloads and is kept; the next check is a 304; each way the simulator spoils it (not JSON,
    every tenth row dropped, rows under another layout) is refused with the table kept, a 503
    keeps it too, and the next good version (bumped) replaces it and clears the refusal."""
    await sim_async(own_sim, "/_sim/expected", {"reset": True})
    url = own_sim + "/json/wg/wn8exp.json"
    source = RatingsSource(upstream, url, data_dir=str(tmp_path))
    facts = await sim_async(own_sim, "/_sim/expected")
    table = await source.expected_values()
    assert table is not None and table.version == facts["versions"]["wg"] != facts["versions"]["frozen"]
    assert len(table) == facts["rows"]["wg"] > facts["rows"]["frozen"]
    assert "unchanged" in await source.refresh_expected()
    assert (await sim_async(own_sim, "/_sim/expected"))["served"]["wg"] == {"200": 1, "304": 1, "503": 0}

    for mode, reason in (("garbage", "is not valid JSON"), ("truncated", "lost 10 %"), ("format", "changed format")):
        await sim_async(own_sim, "/_sim/expected", {"wg": mode, "bump": True})
        with pytest.raises(ValueError, match=reason):
            await source.refresh_expected()
        assert await source.expected_values() is table
        assert reason in source.status()["refused"]["reason"] and reason in source.health_reasons()[0]
    await sim_async(own_sim, "/_sim/expected", {"wg": "ok", "fail": 1})
    with pytest.raises(UpstreamUnavailable):
        await source.refresh_expected()
    assert await source.expected_values() is table and source.status()["refused"] is not None

    fresh = await source.refresh_expected()
    bumped = (await sim_async(own_sim, "/_sim/expected"))["versions"]["wg"]
    assert bumped in fresh and bumped != table.version
    assert source.status()["refused"] is None and source.health_reasons() == []
    restarted = RatingsSource(NoNetwork(), url, data_dir=str(tmp_path))
    assert (await restarted.expected_values()).version == bumped
    await sim_async(own_sim, "/_sim/expected", {"reset": True})


@pytest.mark.gen_test(timeout=60)
async def test_the_app_rates_with_the_simulators_wg_table_and_keeps_it_in_its_data_directory(app, upstream_sim):
    """With --upstream-base-url (tests, the demo) the service loads the simulator's maintained
    table, /json/wg/wn8exp.json, and keeps it under its --data-dir."""
    services = app.settings["services"]
    source = services.expected_values.loaded_source
    assert source.location == upstream_sim + "/json/wg/wn8exp.json"
    table = await services.expected_values.expected_values()
    wg = await sim_async(upstream_sim, "/json/wg/wn8exp.json")
    assert table.version == wg["header"]["version"] and len(table) == len(wg["data"])
    saved = services.expected_values.status()["saved"]
    assert saved["version"] == table.version and saved["path"] == str(source.saved_dir / SAVED_TABLE)
    assert os.path.exists(saved["path"]) and services.expected_values.health_reasons() == []
