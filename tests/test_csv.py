"""?format=csv: the columns each endpoint declares are its JSON rows' fields, the cells parse back
to the JSON values with Python's csv module, odd text survives the round trip, and on demo data
(check_csv_on_demo, run by tests/test_marks.py on the demo it seeds) every CSV endpoint answers
the same rows as its JSON, with its file name, ETag and 304, and a bad format is the JSON 400."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
import ujson
from hypothesis import given
from hypothesis import strategies as st
from tornado.httpclient import AsyncHTTPClient, HTTPRequest

from handlers.index import index_document
from handlers.schemas import schema_components
from server.contract.catalogue import CATALOGUE, CsvTable
from server.contract.config import Config
from server.contract.csv_answers import CSV_MEDIA_TYPE, file_name, render
from tests.helpers import ROOT

CSV_ENDPOINTS = [endpoint for endpoint in CATALOGUE if endpoint.csv is not None]


def parse(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def same(cell: str, value: Any) -> bool:
    """A CSV cell read back as the JSON value it came from: empty is null, true/false are
    booleans, numbers compare as numbers, text as text (after an apostrophe where the text would
    start a spreadsheet formula)."""
    if value is None:
        return cell == ""
    if isinstance(value, bool):
        return cell == ("true" if value else "false")
    if isinstance(value, int):
        return cell.lstrip("-").isdigit() and int(cell) == value
    if isinstance(value, float):
        return cell != "" and float(cell) == pytest.approx(value)
    if value.startswith(("=", "+", "-", "@", "\t", "\r")):
        return cell == "'" + value
    return cell == value


def at(item: dict, column: str) -> Any:
    value: Any = item
    for key in column.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


# --- the declaration ---------------------------------------------------------------------------


def _resolve(schemas: dict, schema: dict) -> dict:
    if "$ref" in schema:
        return _resolve(schemas, schemas[schema["$ref"].rsplit("/", 1)[1]])
    if "oneOf" in schema:
        options = [option for option in schema["oneOf"] if option.get("type") != "null"]
        return _resolve(schemas, options[0]) if len(options) == 1 else schema
    return schema


def _leaves(schemas: dict, schema: dict, prefix: str = "") -> list[str]:
    schema = _resolve(schemas, schema)
    if "properties" in schema:
        return [leaf for key, sub in schema["properties"].items() for leaf in _leaves(schemas, sub, prefix + key + ".")]
    return [prefix[:-1]]


def test_each_csv_endpoint_declares_every_field_of_its_json_rows_as_a_column():
    """A field added to a row's schema and not to the CSV (or a column the rows lack) fails here."""
    schemas = schema_components(index_document(Config()))
    assert {endpoint.name for endpoint in CSV_ENDPOINTS} == {
        "tank_stats",
        "tank_marks",
        "expected_values",
        "leaderboard_players",
        "tank_leaderboard",
        "leaderboard_clans",
        "tanks",
        "history",
        "clan",
        "online_history",
        "vehicles",
        "tank_strength",
        "roster",
    }
    for endpoint in CSV_ENDPOINTS:
        assert endpoint.csv is not None and endpoint.schema is not None
        rows = _resolve(schemas, schemas[endpoint.schema])["properties"][endpoint.csv.rows]
        assert _resolve(schemas, rows)["type"] == "array", endpoint.name
        assert list(endpoint.csv.columns) == _leaves(schemas, rows["items"]), endpoint.name
        assert [param.name for param in endpoint.params].count("format") == 1


def test_the_index_lists_each_csv_table_and_its_columns():
    entries = {entry["name"]: entry for entry in index_document(Config())["endpoints"]}
    for endpoint in CATALOGUE:
        entry = entries[endpoint.name]
        formats = ["json", *(["csv"] if endpoint.csv else []), *(["svg", "png"] if endpoint.card else [])]
        if endpoint.csv is None:
            assert "csv" not in entry
        else:
            assert entry["csv"] == {
                "rows": endpoint.csv.rows,
                "columns": list(endpoint.csv.columns),
                "media_type": CSV_MEDIA_TYPE,
            }
        if formats == ["json"]:
            assert "format" not in [p["name"] for p in entry["parameters"]]
        else:  # the cards' formats: tests/test_cards.py
            assert {"name": "format", "enum": formats, "default": "json"}.items() <= next(
                p for p in entry["parameters"] if p["name"] == "format"
            ).items()


# --- the rendering -----------------------------------------------------------------------------

TABLE = CsvTable("rows", "table-{region}-{days}d", ("name", "n", "x", "flag", "inner.value"))
text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
scalar = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), text)


@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "name": st.one_of(st.none(), text),
                "n": st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)),
                "x": st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False)),
                "flag": st.one_of(st.none(), st.booleans()),
                "inner": st.one_of(st.none(), st.fixed_dictionaries({"value": scalar})),
            }
        ),
        max_size=8,
    )
)
def test_any_rows_parse_back_to_their_values_with_the_csv_module(rows):
    """Commas, quotes, line breaks, non-ASCII nicknames: the csv module reads back what was written."""
    body = render(TABLE, {"rows": rows})
    assert body.endswith("\r\n") and body.encode("utf-8")
    parsed = parse(body)
    assert parsed[0] == list(TABLE.columns)
    assert len(parsed) == len(rows) + 1
    for row, cells in zip(rows, parsed[1:], strict=True):
        assert len(cells) == len(TABLE.columns)
        for column, cell in zip(TABLE.columns, cells, strict=True):
            value = at(row, column)
            if isinstance(value, float):
                assert float(cell) == value
            else:
                assert same(cell, value), (column, cell, value)


def test_text_that_would_start_a_formula_is_text_in_a_spreadsheet_and_numbers_stay_numbers():
    table = CsvTable("rows", "x", ("name", "n"))
    rows = [{"name": '=HYPERLINK("http://x","y")', "n": -5}, {"name": "-=Legion=-", "n": -0.5}, {"name": "@a", "n": 1}]
    parsed = parse(render(table, {"rows": rows}))
    assert parsed[1:] == [['\'=HYPERLINK("http://x","y")', "-5"], ["'-=Legion=-", "-0.5"], ["'@a", "1"]]


def test_no_rows_is_a_header_alone_and_file_names_are_safe():
    assert render(TABLE, {"rows": []}) == "name,n,x,flag,inner.value\r\n"
    assert file_name(TABLE, {"region": "eu", "days": 30}) == "table-eu-30d.csv"
    # A value the template reads but the answer lacks (or holds null) reads "all"; odd characters go.
    assert file_name(TABLE, {"region": None}) == "table-all-alld.csv"
    assert file_name(TABLE, {"region": 'e"u/../x', "days": 1}) == "table-e_u_.._x-1d.csv"


# --- on demo data ------------------------------------------------------------------------------


async def fetch(base_url: str, path: str, headers: dict | None = None):
    request = HTTPRequest(base_url + path, headers=headers or {}, request_timeout=60)
    return await AsyncHTTPClient().fetch(request, raise_error=False)


async def check_csv_on_demo(base_url: str, tank_id: int, account_id: int, clan_id: int) -> None:
    """Every CSV endpoint on the demo: the same rows as its JSON (same filters, sort and page), a
    header row of the declared columns, its content type, file name and attribution link; ETag and
    304 for the CSV; a bad or repeated format is the JSON 400."""
    paths = {
        "tank_stats": "/api/v1/tanks/stats?region=eu&days=30&limit=100&sort=players",
        "tank_marks": "/api/v1/tanks/marks?region=eu&limit=100&sort=players",
        "expected_values": "/api/v1/expected-values?region=eu",
        "leaderboard_players": "/api/v1/leaderboard/players?region=eu&days=30&by=wn8",
        "tank_leaderboard": f"/api/v1/tank/{tank_id}/eu/leaderboard?days=30",
        "leaderboard_clans": "/api/v1/leaderboard/clans?region=eu&days=30&by=wn8",
        "tanks": f"/api/v1/player/{account_id}/eu/tanks?days=30",
        "history": f"/api/v1/player/{account_id}/eu/history?days=30",
        "clan": f"/api/v1/clan/{clan_id}/eu",
        "online_history": "/api/v1/online/history?game=wot&region=eu&days=7",
        "vehicles": "/api/v1/vehicles?region=eu&tier=8",
        "tank_strength": "/api/v1/tanks/strength?region=eu&days=30&limit=100",
        "roster": f"/api/v1/roster?region=eu&accounts={account_id}:{tank_id},{account_id + 1}",
    }
    assert set(paths) == {endpoint.name for endpoint in CSV_ENDPOINTS}
    # A roster's first answer fetches what no cache holds (source live); asked once before in another
    # order, the JSON and the CSV below are both built from what that kept (source cached).
    warm = await fetch(base_url, f"/api/v1/roster?region=eu&accounts={account_id + 1},{account_id}")
    assert warm.code == 200, warm.body[:300]
    for endpoint in CSV_ENDPOINTS:
        assert endpoint.csv is not None
        path = paths[endpoint.name]
        answer = await fetch(base_url, path)
        assert answer.code == 200, (path, answer.body[:300])
        data = ujson.loads(answer.body)["data"]
        rows = data[endpoint.csv.rows]
        assert rows, (endpoint.name, "no rows on the demo: the check would prove nothing")
        got = await fetch(base_url, path + "&format=csv" if "?" in path else path + "?format=csv")
        assert got.code == 200, (path, got.body[:300])
        assert got.headers["Content-Type"] == "text/csv; charset=utf-8"
        disposition = got.headers["Content-Disposition"]
        assert disposition.startswith('attachment; filename="') and disposition.endswith('.csv"'), disposition
        assert got.headers["Link"].endswith('; rel="cite-as"')
        assert "Content-Disposition" in got.headers["Access-Control-Expose-Headers"]
        # Kept for a spreadsheet to read (scripts/check_csv_spreadsheet.py; docs/api.md "CSV").
        kept = ROOT / "tests" / "artifacts" / "csv"
        kept.mkdir(parents=True, exist_ok=True)
        (kept / f"{endpoint.name}.csv").write_bytes(got.body)
        parsed = parse(got.body.decode("utf-8"))
        assert parsed[0] == list(endpoint.csv.columns), endpoint.name
        assert len(parsed) - 1 == len(rows), (endpoint.name, len(parsed) - 1, len(rows))
        for row, cells in zip(rows, parsed[1:], strict=True):
            for column, cell in zip(endpoint.csv.columns, cells, strict=True):
                assert same(cell, at(row, column)), (endpoint.name, column, cell, at(row, column))
        # The CSV's own validator: unchanged, 304 without a body; not the JSON's.
        etag = got.headers["ETag"]
        assert etag != answer.headers["ETag"]
        again = await fetch(base_url, path + ("&" if "?" in path else "?") + "format=csv", {"If-None-Match": etag})
        assert again.code == 304 and not again.body, endpoint.name
    # Errors stay the JSON envelope.
    for query in ("format=xml", "format=CSV", "format=csv&format=csv", "format="):
        bad = await fetch(base_url, f"/api/v1/leaderboard/players?region=eu&days=30&{query}")
        assert bad.code == 400, (query, bad.code)
        assert bad.headers["Content-Type"].startswith("application/json")
        assert ujson.loads(bad.body)["error"]["code"] == "invalid_format"
    # A bad parameter beside format=csv is that parameter's 400, as JSON.
    bad = await fetch(base_url, "/api/v1/tanks/stats?region=xx&format=csv")
    assert bad.code == 400 and ujson.loads(bad.body)["error"]["code"] == "invalid_region"


async def check_forms_agree_while_rebuilding(store, services, base_url: str, account_id: int, day: str) -> None:
    """While the daily job rebuilds the tables again and again, alternating between two days (so
    each build changes the figures), JSON, then CSV, then JSON of a player's /tanks, /tanks/stats,
    /tanks/marks and a leaderboard: whenever both JSON reads name one state (they are equal), the
    CSV read between them is that state cell for cell (no CSV of one build beside a JSON kept from
    another). The job runs as another process's would: this process learns of each build itself."""
    import asyncio
    import time

    from server.domain.days import DAY_SECONDS, ManualClock, day_start, days_before
    from server.services.population import PopulationService

    endpoints = {endpoint.name: endpoint for endpoint in CSV_ENDPOINTS}
    paths = {
        "tanks": f"/api/v1/player/{account_id}/eu/tanks?days=30",
        "tank_stats": "/api/v1/tanks/stats?region=eu&days=30&limit=100&sort=players",
        "tank_marks": "/api/v1/tanks/marks?region=eu&limit=100&sort=players",
        "leaderboard_players": "/api/v1/leaderboard/players?region=eu&days=30&by=wn8",
    }
    # The same tables, another answer (so the JSON above is built, not replayed, 3 s later).
    warm = {
        "tanks": paths["tanks"] + "&group_by=tier",
        "tank_stats": paths["tank_stats"].replace("limit=100", "limit=99"),
        "tank_marks": paths["tank_marks"].replace("limit=100", "limit=99"),
        "leaderboard_players": paths["leaderboard_players"] + "&limit=99",
    }
    builds = changed = 0

    async def rebuild() -> None:
        nonlocal builds
        for through in (days_before(day, 7), day):
            job = PopulationService(
                store, services.ratings_source, clock=lambda t=through: day_start(t) + DAY_SECONDS + 7200
            )
            job.pause = job.leaderboards.pause = 0
            await job.build(force=True)
            builds += 1

    async def data(path: str) -> dict:
        answer = await fetch(base_url, path)
        assert answer.code == 200, (path, answer.body[:300])
        return ujson.loads(answer.body)["data"]

    # A build landing while this process still holds the older one, on its own clocks (the answer
    # cache's replay and the decoded tables' HOT_COPY_SECONDS), so the order is certain: the tables
    # are read at 0 s, the JSON built from them at 3 s (replayed until 8 s), the new build lands, and
    # at 5.5 s the CSV finds it. The JSON must not go on answering the older build beside it.
    # (Ahead of the real clock: what was kept by the real one has expired on this one.)
    clock = ManualClock(time.monotonic() + 1_000)
    services.answers.clock = services.tank_stats.monotonic = clock
    try:
        for through in (days_before(day, 7), day):
            clock.set(clock() + 60)
            for name in paths:
                await data(warm[name])  # another query of the same tables: read at this moment
            clock.set(clock() + 3)
            before = {name: await data(path) for name, path in paths.items()}
            job = PopulationService(
                store, services.ratings_source, clock=lambda t=through: day_start(t) + DAY_SECONDS + 7200
            )
            job.pause = job.leaderboards.pause = 0
            await job.build(force=True)
            clock.set(clock() + 2.5)
            for name, path in paths.items():
                table = endpoints[name].csv
                assert table is not None
                got = await fetch(base_url, path + "&format=csv")
                after = await data(path)
                cells = parse(got.body.decode("utf-8"))[1:]
                assert len(cells) == len(after[table.rows]), (name, len(cells), len(after[table.rows]))
                for row, line in zip(after[table.rows], cells, strict=True):
                    for column, cell in zip(table.columns, line, strict=True):
                        assert same(cell, at(row, column)), (
                            name,
                            column,
                            cell,
                            at(row, column),
                            "JSON of another build",
                        )
                changed += before[name] != after
    finally:
        services.answers.clock = services.tank_stats.monotonic = time.monotonic
        services.answers.clear()  # kept by the manual clock, ahead of the real one
        services.tank_stats.forget("eu")
    assert changed >= 1, "no build changed an answer: the check proved nothing"

    compared = {name: 0 for name in paths}
    seen: dict[str, set[str]] = {name: set() for name in paths}
    job = asyncio.ensure_future(rebuild())
    try:
        while not job.done() or min(compared.values()) < 3:
            for name, path in paths.items():
                table = endpoints[name].csv
                assert table is not None
                first = await data(path)
                got = await fetch(base_url, path + "&format=csv")
                assert got.code == 200, (path, got.body[:300])
                second = await data(path)
                seen[name].add(ujson.dumps(first[table.rows], sort_keys=True))
                if first != second:
                    continue  # a build landed between the two reads: two states, nothing to compare
                cells = parse(got.body.decode("utf-8"))[1:]
                rows = first[table.rows]
                assert len(cells) == len(rows), (name, len(cells), len(rows))
                for row, line in zip(rows, cells, strict=True):
                    for column, cell in zip(table.columns, line, strict=True):
                        assert same(cell, at(row, column)), (name, column, cell, at(row, column), first.get("built_at"))
                compared[name] += 1
            if job.done():
                job.result()  # a failed build fails the check
            # Reads a few times a second, not back to back: the embedded database runs one query at a
            # time, and a tight loop of reads starved the build's writes past the driver's 30 s on a
            # busy core.
            await asyncio.sleep(0.25)
    finally:
        if not job.done():
            await job
    assert builds == 2
    # The builds changed what was answered (two days' tables), so equal forms were not a given.
    assert max(len(states) for states in seen.values()) >= 2, {name: len(states) for name, states in seen.items()}
