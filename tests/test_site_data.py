"""The site's data downloads in a real headless Chromium: the Data tab (GET /dumps, the daily bulk
files) before any file exists and after the files of two days were written, its links downloading
the listed bytes; and a table view's "Download CSV" link (the view's request with format=csv).

The population is the tank tests' (tests/test_site_tanks_browser.py build_population: tank changes
the tracker would write, then the daily job); the day's files are then written as the daily job
writes them after a realm's tables (services.dumps.build). Fixtures and helpers are those of
tests/test_site_browser.py.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import pathlib
import time

import pytest
from tornado.httpclient import HTTPRequest

from server.domain.days import days_before
from server.services.population import newest_complete_day
from tests import test_site_browser as site
from tests.test_site_browser import Browser, get_json, site_url, wait_ready
from tests.test_site_tanks_browser import POPULATION, build_population

chromium_path = site.chromium_path  # the session fixtures of the site's browser tests
async_playwright = site.async_playwright


async def api_data(http_client, base_url, path):
    response, body = await get_json(http_client, base_url, path)
    assert response.code == 200, (path, body)
    return body["data"]


async def fetch_bytes(http_client, base_url, path):
    response = await http_client.fetch(HTTPRequest(base_url + path, request_timeout=20), raise_error=False)
    assert response.code == 200, (path, response.code)
    return response


async def shown_files(page):
    """The data table's rows: file name, the link's href and download name, and the shown cells."""
    return await page.locator("#data-files tbody tr").evaluate_all(
        "rows => rows.map(r => { const a = r.querySelector('a.dump-link'); const sha = r.querySelector('[data-col=sha256] code');"
        " return { name: r.dataset.name, href: a.getAttribute('href'), download: a.getAttribute('download'),"
        " format: r.querySelector('[data-col=format]').textContent, rows: r.querySelector('[data-col=rows]').textContent,"
        " size: r.querySelector('[data-col=size]').textContent, sha: sha.textContent, shaTitle: sha.getAttribute('title') }; })"
    )


async def wait_files(page, names):
    """Until the data table (of the answer just drawn) lists exactly `names`."""
    await page.wait_for_function(
        "names => { const t = document.querySelector('#data-out #data-files');"
        " return !!t && JSON.stringify([...t.tBodies[0].rows].map(r => r.dataset.name)) === JSON.stringify(names); }",
        arg=names,
    )


BROWSER_FETCH = (
    "async (href) => { const r = await fetch(href); const text = await r.text();"
    " return { status: r.status, type: r.headers.get('Content-Type'),"
    " disposition: r.headers.get('Content-Disposition'), first: text.split('\\r\\n')[0] }; }"
)


# --------------------------------------------------------------------------------------------
@pytest.mark.gen_test(timeout=120)
async def test_data_tab_lists_the_newest_days_files_and_a_table_offers_its_csv(
    app, http_client, base_url, http_port, async_playwright, chromium_path, artifacts_dir
):
    services = app.settings["services"]
    empty = await api_data(http_client, base_url, "/api/v1/dumps?region=eu")
    assert empty["days"] == [] and empty["files"] == []
    index = await api_data(http_client, base_url, "/api/v1")
    csv_of = {e["name"]: e.get("csv") for e in index["endpoints"]}
    assert csv_of["tank_stats"] and csv_of["dumps"] is None

    async with Browser(async_playwright, chromium_path) as browser:
        # Before any build: the tab says so plainly.
        page = await browser.page()
        await page.goto(site_url(http_port))
        await wait_ready(page)
        await page.click("#tab-data")
        await page.locator("#data-empty").wait_for()
        assert "No bulk files yet" in await page.locator("#data-empty").inner_text()
        assert await page.locator("#tab-data").get_attribute("aria-selected") == "true"
        assert await page.locator("#form-data select[name=region]").input_value() == "eu"  # the endpoint's example
        assert await page.locator("#form-data select[name=day]").is_disabled()
        assert await page.locator("#data-files").count() == 0

        # The daily job's tables, then the files of two days (the older first, as the days come).
        await build_population(app, POPULATION)
        through = newest_complete_day(time.time())
        earlier = days_before(through, 1)
        await services.dumps.build("eu", earlier)
        await services.dumps.build("eu", through)
        listing = await api_data(http_client, base_url, "/api/v1/dumps?region=eu")
        assert listing["days"] == [through, earlier] and listing["day"] == through
        files = listing["files"]
        names = [f["name"] for f in files]
        assert f"tank-stats-30d-eu-{through}.csv.gz" in names and all(through in n for n in names)

        # A new browser context (the listing's answer is cacheable for minutes): the newest day's files.
        page = await browser.page()
        await page.goto(site_url(http_port, "#data"))
        await wait_ready(page)
        await wait_files(page, names)
        assert await page.evaluate("location.hash") == "#data"
        rows = await shown_files(page)
        for row, f in zip(rows, files, strict=True):
            assert row["href"] == f["url"] == f"/api/v1/dumps/{f['name']}"
            assert row["download"] == f["name"]
            assert row["format"] == f["format"].upper()
            assert row["shaTitle"] == f["sha256"] and row["sha"] == f["sha256"][:12] + "…"
            assert abs(float(row["size"].removesuffix(" KB").replace(",", "")) - f["bytes"] / 1024) <= 0.051
            assert row["rows"] == f"{f['rows']:,}"
        note = await page.locator("#data-note").inner_text()
        assert "gzip’d" in note and "kept 400 days" in note
        assert f"{len(files)} files of {through}" in await page.locator("#data-summary").inner_text()
        day_select = page.locator("#form-data select[name=day]")
        assert await day_select.input_value() == through
        assert await day_select.locator("option").evaluate_all("os => os.map(o => o.value)") == [through, earlier]
        await page.locator("#explorer").screenshot(path=str(artifacts_dir / "site-data.png"))

        # A link downloads the listed file: its name, its bytes (the listed SHA-256), its table.
        stats_csv = next(f for f in files if f["name"] == f"tank-stats-30d-eu-{through}.csv.gz")
        async with page.expect_download() as download_info:
            await page.click(f"#data-files tr[data-name='{stats_csv['name']}'] a.dump-link")
        download = await download_info.value
        assert download.suggested_filename == stats_csv["name"]
        payload = pathlib.Path(await download.path()).read_bytes()
        assert hashlib.sha256(payload).hexdigest() == stats_csv["sha256"] and len(payload) == stats_csv["bytes"]
        table = list(csv.reader(io.StringIO(gzip.decompress(payload).decode("utf-8"))))
        assert table[0] == csv_of["tank_stats"]["columns"] and len(table) == 1 + stats_csv["rows"]
        served = await fetch_bytes(http_client, base_url, stats_csv["url"])
        assert served.headers["Content-Type"] == "application/gzip" and served.body == payload

        # The earlier day, then every region (a region column).
        await day_select.select_option(earlier)
        await page.wait_for_function("h => location.hash === h", arg=f"#data/eu/{earlier}")
        older = await api_data(http_client, base_url, f"/api/v1/dumps?region=eu&day={earlier}")
        await wait_files(page, [f["name"] for f in older["files"]])
        assert all(earlier in f["name"] for f in older["files"]) and older["files"]
        await page.select_option("#form-data select[name=region]", "")
        await page.wait_for_function("location.hash === '#data/all'")
        await wait_files(page, names)
        assert await page.locator("#data-files tbody tr").first.locator("[data-col=region]").inner_text() == "EU"

        # A table view: its Download CSV link is its own request with format=csv, kept across a sort.
        await page.goto(site_url(http_port, "#tanks/eu/30"))
        link = page.locator("#tanks-out:not([aria-busy]) #tank-stats-csv")
        await link.wait_for()
        href = await link.get_attribute("href")
        assert href.startswith("/api/v1/tanks/stats?")
        assert {"format=csv", "region=eu", "days=30"} <= set(href.split("?", 1)[1].split("&"))
        assert await link.get_attribute("download") == ""
        got = await page.evaluate(BROWSER_FETCH, href)
        assert got["status"] == 200 and got["type"] == "text/csv; charset=utf-8", got
        assert got["disposition"].startswith("attachment; filename=")
        assert got["first"] == ",".join(csv_of["tank_stats"]["columns"])
        await page.click("#tank-stats-table button.sort[data-sort=avg_damage]")
        await page.wait_for_function(
            "() => { const a = document.querySelector('#tanks-out:not([aria-busy]) #tank-stats-csv');"
            " return !!a && a.getAttribute('href').includes('sort=avg_damage'); }"
        )
        href = await page.locator("#tank-stats-csv").get_attribute("href")
        assert "format=csv" in href and "order=desc" in href
        assert (await page.evaluate(BROWSER_FETCH, href))["status"] == 200
        await page.locator("#tanks-out").screenshot(path=str(artifacts_dir / "site-tanks-csv.png"))
        assert browser.errors == [], browser.errors
