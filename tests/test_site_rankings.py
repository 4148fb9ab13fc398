"""The site's rankings (issue 34, item 8) in a real headless Chromium: the players' rankings page
over leaderboards the daily job really built, a tank's top players, the clans tab, and a player's
place ("Rank N of M") on the profile and the recent periods.

The first test writes what the tracker writes per account and day (tank_changes) and the tracked
accounts' names and careers, runs the job (PopulationService.build) and reads the real endpoints.
The second gives the page hand-built answers (page.route) for what the store cannot hold yet or
what must be exact: the clans' leaderboard (and an index with and without it), a player's place,
an empty tank leaderboard, and the error answers. Fixtures and helpers are those of
tests/test_site_browser.py.
"""

from __future__ import annotations

import copy
import datetime as dt
import random
import re
import time

import pytest

from server.domain.days import days_before
from server.domain.records import pack
from server.services.population import PopulationService, newest_complete_day
from store.constants import TANK_COUNTERS
from store.population import TankChanges
from store.tracker import tracked_id
from tests import test_site_browser as site
from tests.test_site_browser import (
    DEMO_PLAYER,
    FAILED_LOAD,
    SECOND_PLAYER,
    Browser,
    envelope,
    failure,
    figures,
    fulfill,
    get_json,
    history_answer,
    num,
    site_url,
    tanks_answer,
    wait_ready,
)
from tests.test_site_tanks_browser import battle_row

chromium_path = site.chromium_path  # the session fixtures of the site's browser tests
async_playwright = site.async_playwright

T34, IS = 1, 513  # the simulator's encyclopedia (2018 list): T-34 (tier V medium), IS (tier VII heavy)
CLAN_ID, CLAN_TAG = 500_012_345, "RANKS"


async def build_leaderboards(app, accounts):
    """Three days of per-tank changes for `accounts` (each plays T-34 a lot, IS a little), their
    tracked names, clans and careers, a cached clan holding the first ten, then the daily job."""
    from scripts.upstream_sim.ids import nickname

    services, store = app.settings["services"], app.settings["store"]
    through = newest_complete_day(time.time())
    rng = random.Random(34)
    played: dict[int, dict[int, list[int]]] = {}
    for k in range(3):
        docs = []
        for n, account_id in enumerate(accounts):
            rows = {
                T34: battle_row(rng, rng.randint(28, 52), 400 + 40 * n),
                IS: battle_row(rng, rng.randint(2, 6), 1300),
            }
            docs.append(TankChanges.change("eu", account_id, days_before(through, k), pack(rows)))
            for tank_id, row in rows.items():
                total = played.setdefault(account_id, {}).setdefault(tank_id, [0] * len(TANK_COUNTERS))
                for i, value in enumerate(row):
                    total[i] += value
        await store.population.changes.save(docs)
    await store.tracked.collection.insert_many(
        [
            {
                "_id": tracked_id("eu", a),
                "region": "eu",
                "account_id": a,
                "nickname": nickname("eu", a),
                "clan_id": CLAN_ID if n < 10 else None,
                "state": pack({t: [10 * v for v in row] for t, row in played[a].items()}),
            }
            for n, a in enumerate(accounts)
        ]
    )
    members = [{"account_id": a} for a in accounts[:10]]
    await store.clans.save(
        {"region": "eu", "clan_id": CLAN_ID, "tag": CLAN_TAG, "name": "Rank and file", "members": members,
         "members_count": len(members), "cached_at": time.time()}
    )  # fmt: skip
    job = PopulationService(store, services.ratings_source)
    job.pause = job.leaderboards.pause = 0
    await job.build(force=True)
    return through


async def api_data(http_client, base_url, path):
    response, body = await get_json(http_client, base_url, path)
    assert response.code == 200, (path, body)
    return body["data"]


def shown(row, by):
    """A row as the table shows it: rank, player, clan tag, figure, battles."""
    value = row["value"]
    figure = f"{num(value)} %" if by.endswith("rate") else num(value)
    return [num(row["rank"]), row["nickname"], row["clan_tag"] or "—", figure, num(row["battles"])]


async def table_rows(page, table="#rank-table"):
    return await page.locator(f"{table} tbody tr").evaluate_all(
        "rows => rows.map(r => [...r.cells].map(c => c.textContent.trim()))"
    )


async def wait_table(page, rows, table="#rank-table", out="#rankings-out"):
    """Until the table (its answer drawn, not a dimmed older one) holds exactly `rows`."""
    await page.wait_for_function(
        "([table, out, rows]) => { const t = document.querySelector(`${out}:not([aria-busy]) ${table}`);"
        " return !!t && JSON.stringify([...t.tBodies[0].rows].map(r => [...r.cells].map(c => c.textContent.trim())))"
        " === JSON.stringify(rows); }",
        arg=[table, out, rows],
    )


async def wait_hash(page, hash_):
    await page.wait_for_function("h => location.hash === h", arg=hash_)


def unexpected(errors, allowed):
    """Console errors other than Chromium's log of an error answer this test asked for: `allowed`
    holds (status, a piece of the URL) pairs."""

    def expected(error):
        m = FAILED_LOAD.match(error)
        return bool(m) and any(int(m.group(1)) == status and part in error for status, part in allowed)

    return [e for e in errors if not expected(e)]


# --------------------------------------------------------------------------------------------
@pytest.mark.gen_test(timeout=90)
async def test_players_rankings_and_a_tanks_top_players_on_built_leaderboards(
    app, http_client, base_url, http_port, async_playwright, chromium_path, artifacts_dir
):
    """Nothing hand-built: the job's leaderboards and the real endpoints. The table is the API's
    answer row for row, best first with its ranks; a filter asks the API again and is in the hash;
    the pages follow offset, limit and total; a nickname opens the player; a tank's page lists its
    top players and links to its full ranking."""
    from scripts.upstream_sim.ids import existing_accounts

    accounts = existing_accounts("eu", 24, start=500_600_000)
    through = await build_leaderboards(app, accounts)
    _, index = await get_json(http_client, base_url, "/api/v1")
    clans_listed = any(e["name"] == "leaderboard_clans" for e in index["data"]["endpoints"])
    wn8 = await api_data(http_client, base_url, "/api/v1/leaderboard/players?region=eu&days=30&by=wn8")
    assert wn8["through"] == through and wn8["total"] >= 12, wn8
    assert [r["value"] for r in wn8["rows"]] == sorted((r["value"] for r in wn8["rows"]), reverse=True)
    assert any(r["clan_tag"] == CLAN_TAG for r in wn8["rows"]) and any(r["clan_tag"] is None for r in wn8["rows"])
    requests: list[str] = []

    async with Browser(async_playwright, chromium_path) as browser:
        page = await browser.page()
        page.on("request", lambda r: "/leaderboard" in r.url and requests.append(r.url.split("/api/v1", 1)[1]))
        await page.goto(site_url(http_port, "#rankings"))
        await wait_ready(page)
        # The tab alone opens the index's example (eu, 30 days, WN8) and the hash says so.
        await wait_hash(page, "#rankings/players/eu/30/by=wn8")
        await wait_table(page, [shown(r, "wn8") for r in wn8["rows"]])
        assert await page.locator("#tab-rankings").get_attribute("aria-selected") == "true"
        assert await page.locator("#rank-mode-clans").is_hidden() is not clans_listed
        # The form's choices are the index's.
        params = {p["name"]: p for e in index["data"]["endpoints"] if e["name"] == "leaderboard_players"
                  for p in e["parameters"]}  # fmt: skip
        form = page.locator("#form-rank-players")
        for name in ("days", "by", "type"):
            values = await form.locator(f"select[name={name}] option").evaluate_all("os => os.map(o => o.value)")
            assert [v for v in values if v] == params[name]["enum"], name
        tiers = await form.locator("select[name=tier] option").evaluate_all("os => os.map(o => o.value)")
        assert tiers == [""] + [str(t) for t in range(params["tier"]["minimum"], params["tier"]["maximum"] + 1)]
        assert await form.locator("input[name=min_battles]").get_attribute("max") == str(
            params["min_battles"]["maximum"]
        )
        # The answer's notes: the floor applied and the window's steps, who is ranked, the window.
        summary = await page.locator("#rank-summary").inner_text()
        assert f"{wn8['total']} players ranked by WN8" in summary
        assert f"of {wn8['players']} tracked players who played in it" in summary
        floor = await page.locator("#rank-floor").inner_text()
        assert f"at least {wn8['min_battles']} battles" in floor
        assert ", ".join(num(f) for f in wn8["floors"]) in floor
        assert wn8["population"] in await page.locator("#rank-population").inner_text()
        # WN8 is coloured by the usual scale, as everywhere on the site.
        assert await page.locator("#rank-table tbody td[data-col=value] .wn8num").count() == len(wn8["rows"])

        # Another figure asks the API again; the hash follows.
        damage = await api_data(http_client, base_url, "/api/v1/leaderboard/players?region=eu&days=30&by=avg_damage")
        await form.locator("select[name=by]").select_option("avg_damage")
        await wait_hash(page, "#rankings/players/eu/30/by=avg_damage")
        await wait_table(page, [shown(r, "avg_damage") for r in damage["rows"]])
        assert requests[-1] == "/leaderboard/players?region=eu&days=30&by=avg_damage"
        assert await page.locator("#rank-table thead th[data-col=value]").inner_text() == "Avg. damage"

        # A type keeps the figure; a tier nobody reached the floor in says so.
        medium = await api_data(
            http_client, base_url, "/api/v1/leaderboard/players?region=eu&days=30&by=avg_damage&type=mediumTank"
        )
        await form.locator("select[name=type]").select_option("mediumTank")
        await wait_hash(page, "#rankings/players/eu/30/by=avg_damage&type=mediumTank")
        await wait_table(page, [shown(r, "avg_damage") for r in medium["rows"]])
        await form.locator("select[name=type]").select_option("")
        await form.locator("select[name=tier]").select_option("7")
        await wait_hash(page, "#rankings/players/eu/30/by=avg_damage&tier=7")
        empty = page.locator("#rank-empty")
        await empty.wait_for()
        assert "No player has reached the floor of 100 battles in the last 30 days" in await empty.inner_text()
        assert "in tier 7" in await empty.inner_text()
        # A floor above the window's is served at the API's next step, and the page says so.
        await form.locator("select[name=tier]").select_option("")
        await wait_hash(page, "#rankings/players/eu/30/by=avg_damage")
        await form.locator("input[name=min_battles]").fill("101")
        await form.locator("input[name=min_battles]").press("Enter")
        await wait_hash(page, "#rankings/players/eu/30/by=avg_damage&min_battles=101")
        await page.locator("#rank-floor", has_text="You asked for 101").wait_for()
        high = await api_data(
            http_client, base_url, "/api/v1/leaderboard/players?region=eu&days=30&by=avg_damage&min_battles=101"
        )
        assert f"at least {high['min_battles']} battles" in await page.locator("#rank-floor").inner_text()
        assert high["min_battles"] > 101

        # Pages: offset, limit and total, forwards and back.
        pages = [
            await api_data(http_client, base_url, f"/api/v1/leaderboard/players?region=eu&days=7&by=battles&limit=5&offset={o}")
            for o in (0, 5)
        ]  # fmt: skip
        total = pages[0]["total"]
        assert total > 10
        await page.goto(site_url(http_port, "#rankings/players/eu/7/by=battles&limit=5"))
        await wait_table(page, [shown(r, "battles") for r in pages[0]["rows"]])
        assert await page.locator("#rank-page").inner_text() == f"Players 1–5 of {total}"
        assert await page.locator("button[data-page=prev]").is_disabled()
        await page.click("button[data-page=next]")
        await wait_hash(page, "#rankings/players/eu/7/by=battles&offset=5&limit=5")
        await wait_table(page, [shown(r, "battles") for r in pages[1]["rows"]])
        assert await page.locator("#rank-page").inner_text() == f"Players 6–10 of {total}"
        await page.click("button[data-page=prev]")
        await wait_hash(page, "#rankings/players/eu/7/by=battles&limit=5")
        await wait_table(page, [shown(r, "battles") for r in pages[0]["rows"]])
        await page.go_back()  # the browser's history holds each page
        await wait_table(page, [shown(r, "battles") for r in pages[1]["rows"]])

        # A bad value in the hash is the API's own 400, shown as it states it.
        _, bad = await get_json(http_client, base_url, "/api/v1/leaderboard/players?region=eu&days=30&min_battles=0")
        await page.goto(site_url(http_port, "#rankings/players/eu/30/by=wn8&min_battles=0"))
        error = page.locator("#rankings-out .error")
        await error.wait_for()
        assert await error.locator(".error-code").inner_text() == bad["error"]["code"] == "invalid_min_battles"
        assert await error.locator(".error-message").inner_text() == bad["error"]["message"]
        assert "HTTP 400" in await error.inner_text()

        # A nickname opens that player's view.
        await page.goto(site_url(http_port, "#rankings/players/eu/30/by=wn8"))
        await wait_table(page, [shown(r, "wn8") for r in wn8["rows"]])
        await page.locator("#explorer").screenshot(path=str(artifacts_dir / "site-rankings.png"))
        best = wn8["rows"][0]
        await page.locator(f"#rank-table tr[data-account-id='{best['account_id']}'] a.rank-player").click()
        await wait_hash(page, f"#player/eu/{best['account_id']}")
        assert await page.locator("#panel-player").is_visible()
        await page.locator("#player-out .player-name", has_text=best["nickname"]).wait_for()

        # A tank's page lists its top players (the API's first ten) and links to its full ranking.
        top = await api_data(http_client, base_url, f"/api/v1/tank/{T34}/eu/leaderboard?days=30&by=avg_damage&limit=10")
        full = await api_data(http_client, base_url, f"/api/v1/tank/{T34}/eu/leaderboard?days=30&by=avg_damage")
        assert len(top["rows"]) == 10 < full["total"]
        await page.goto(site_url(http_port, f"#tank/eu/{T34}/30"))
        await wait_table(page, [shown(r, "avg_damage") for r in top["rows"]], "#tank-top-table", "#tank-out")
        await page.locator("#tank-top").screenshot(path=str(artifacts_dir / "site-rankings-tank-top.png"))
        summary = await page.locator("#tank-top-summary").inner_text()
        assert f"at least {top['min_battles']} battles on it: {top['total']} ranked" in summary
        name = await page.locator("#tank-title").inner_text()
        await page.click("#tank-top-link")
        await wait_hash(page, f"#rankings/tank/eu/{T34}/30/by=avg_damage")
        await wait_table(page, [shown(r, "avg_damage") for r in full["rows"]])
        assert await page.locator("#rank-title").inner_text() == f"Top players of {name}"
        assert await page.locator("#rank-mode-tank").get_attribute("aria-current") == "page"
        # Its own filters: another window.
        week = await api_data(http_client, base_url, f"/api/v1/tank/{T34}/eu/leaderboard?days=7&by=avg_damage")
        await page.locator("#form-rank-tank select[name=days]").select_option("7")
        await wait_hash(page, f"#rankings/tank/eu/{T34}/7/by=avg_damage")
        await wait_table(page, [shown(r, "avg_damage") for r in week["rows"]])
        # The players' mode returns to the ranking it last showed.
        await page.click("#rank-mode-players")
        await wait_hash(page, "#rankings/players/eu/30/by=wn8")
        await wait_table(page, [shown(r, "wn8") for r in wn8["rows"]])

        player = f"/player/{best['account_id']}/eu/"  # no daily history in this test: its 404s
        assert unexpected(browser.errors, {(400, "min_battles=0"), (404, player)}) == [], browser.errors


# --------------------------------------------------------------------------------------------
def clans_endpoint(index):
    """The clans' leaderboard as the index lists it: the real entry when there is one, else the
    players' entry made into it (the parameters the endpoint takes)."""
    endpoints = index["data"]["endpoints"]
    real = next((e for e in endpoints if e["name"] == "leaderboard_clans"), None)
    if real is not None:
        return real
    entry = copy.deepcopy(next(e for e in endpoints if e["name"] == "leaderboard_players"))
    keep = {p["name"]: p for p in entry["parameters"]}
    bys = ["wn8", "win_rate", "battles_per_member", "active_members", "battles", "elo_10", "elo_8", "skirmish_win_rate"]
    entry.update(
        name="leaderboard_clans",
        path="/leaderboard/clans",
        example="/leaderboard/clans?region=eu&days=30&by=wn8",
        parameters=[
            keep["region"],
            keep["days"],
            {"name": "by", "in": "query", "type": "string", "enum": bys, "default": "wn8"},
            {"name": "min_members", "in": "query", "type": "integer", "minimum": 1, "maximum": 100},
            keep["limit"],
            keep["offset"],
        ],
    )
    return entry


def clan_row(rank, clan_id, tag, value, **figures):
    row = {
        "rank": rank, "clan_id": clan_id, "tag": tag, "name": f"The {tag}", "value": value, "members": 40,
        "active_members": 31, "battles": 5200, "battles_per_member": 130.0, "wn8": 1900.0, "win_rate": 54.5,
        "elo_10": 1200, "elo_8": 1010, "skirmish_win_rate": 61.25,
    }  # fmt: skip
    row.update(figures)
    return row


def clans_answer(by, rows, through):
    return envelope(
        {
            "region": "eu", "days": "30", "from": days_before(through, 29), "through": through,
            "built_at": 1767225600, "by": by, "min_members": 5, "min_battles": 200,
            "population": "the tracked accounts, not a random sample", "clans": 12, "total": len(rows),
            "offset": 0, "limit": 50, "rows": rows,
        }
    )  # fmt: skip


def profile_answer(account_id, place):
    ratings = {"available": True, "wn8": 1850.5, "wn7": 1500.0, "efficiency": 1600.0, "wn8_color": "good"}
    if place != "absent":
        ratings["place"] = place
    return envelope(
        {
            "account_id": account_id, "region": "eu", "nickname": f"Ranked_{account_id % 100}", "clan_id": None,
            "cached_at": time.time(), "ratings": ratings,
            "statistics": {"battles": 12000, "wins": 6300, "win_rate": 52.5, "avg_damage": 1650.0},
        }
    )  # fmt: skip


def tank_answer(days, through):
    return envelope(
        {
            "tank_id": T34, "region": "eu", "name": "T-34", "tier": 5, "type": "mediumTank", "nation": "ussr",
            "days": days, "from": days_before(through, days - 1), "through": through, "built_at": 1767225600,
            "players": 40, "battles": 3000, "win_rate": 51.0, "avg_damage": 620.0, "avg_frags": 1.1,
            "avg_xp": 500.0, "survival_rate": 30.0, "hit_rate": 75.0, "min_players": 20, "min_battles": 10,
            "sample": {"players": 40, "battles": 3000, "qualified": 25, "rated": 25},
            "percentiles": {"damage": {"p50": 600.0, "p90": 900.0}, "wn8": None}, "series": [],
            "population": "the tracked accounts, not a random sample",
        }
    )  # fmt: skip


@pytest.mark.gen_test(timeout=90)
async def test_clans_tab_players_place_and_a_tanks_empty_or_missing_leaderboard(
    app, http_client, base_url, http_port, async_playwright, chromium_path, artifacts_dir
):
    """Hand-built: the index with and without the clans' leaderboard (the tab shows only when it is
    listed), the clans' answers (and a 429 first), a profile and a history with the player's place,
    a tank's empty leaderboard; real: the players' ranking before any build (404 no_statistics)."""
    _, index = await get_json(http_client, base_url, "/api/v1")
    with_clans = copy.deepcopy(index)
    with_clans["data"]["endpoints"] = [e for e in index["data"]["endpoints"] if e["name"] != "leaderboard_clans"]
    without_clans = copy.deepcopy(with_clans)
    with_clans["data"]["endpoints"].append(clans_endpoint(index))
    served = {"index": without_clans, "clans": [], "tank_board": "empty"}
    today = dt.datetime.now(dt.UTC).date()
    through = (today - dt.timedelta(days=1)).isoformat()
    clan_rows = {
        "wn8": [clan_row(1, 1001, "ALPHA", 2400.5, wn8=2400.5), clan_row(2, 1002, "BETA", 1900.0),
                clan_row(2, 1003, "GAMMA", 1900.0, elo_10=None, skirmish_win_rate=None)],
        "elo_10": [clan_row(1, 1002, "BETA", 1450, elo_10=1450), clan_row(2, 1001, "ALPHA", 1300, elo_10=1300)],
    }  # fmt: skip
    clan_requests: list[str] = []

    async def serve_index(route):
        await fulfill(route, served["index"])

    async def serve_clans(route):
        url = route.request.url
        clan_requests.append(url.split("?", 1)[1])
        if not clan_requests[:-1]:  # the first request: too many from this address
            await fulfill(route, failure("rate_limited", "Too many requests."), 429, {"Retry-After": "1"})
            return
        by = re.search(r"[?&]by=([a-z_0-9]+)", url).group(1)
        await fulfill(route, clans_answer(by, clan_rows[by], through))

    async def serve_profile(route):
        account_id = int(re.search(r"/player/(\d+)/", route.request.url).group(1))
        place = {"days": "career", "by": "wn8", "rank": 123, "ranked": 4567, "min_battles": 1000, "through": through}
        await fulfill(route, profile_answer(account_id, place if account_id == DEMO_PLAYER else "absent"))

    day = lambda back: (today - dt.timedelta(days=back)).isoformat()  # noqa: E731
    periods = {
        "7d": {**figures(64, 38, 2012.5, 2310.0, 1720.0, 1810.0, day(7), day(0)),
               "place": {"rank": 5, "ranked": 40, "min_battles": 25, "through": through}},
        "30d": {**figures(210, 113, 1804.25, 1580.0, 1400.0, 1500.0, day(30), day(0)), "place": None},
        "90d": figures(640, 333, 1650.0, 890.0, 1100.0, 1200.0, day(89), day(0)),  # no place at all
    }  # fmt: skip

    async def serve_history(route):
        await fulfill(route, history_answer(today, periods))

    async def serve_tanks(route):
        await fulfill(route, tanks_answer(int(re.search(r"[?&]days=(\d+)", route.request.url).group(1)), today))

    async def serve_tank(route):
        days = re.search(r"[?&]days=(\d+)", route.request.url)
        await fulfill(route, tank_answer(int(days.group(1)) if days else 30, through))

    async def serve_tank_board(route):
        if served["tank_board"] == "missing":
            await fulfill(route, failure("no_statistics", "no leaderboard of eu has been built yet"), 404)
            return
        days = re.search(r"[?&]days=(\w+)", route.request.url).group(1)
        await fulfill(route, envelope({
            "region": "eu", "tank_id": T34, "days": days, "from": days_before(through, int(days) - 1),
            "through": through, "built_at": 1767225600, "by": "avg_damage", "min_battles": 25,
            "floors": [25, 50, 100], "population": "the tracked accounts", "total": 0, "offset": 0,
            "limit": 10, "rows": [],
        }))  # fmt: skip

    async with Browser(async_playwright, chromium_path) as browser:
        page = await browser.page()
        await page.route(re.compile(r"/api/v1$"), serve_index)
        await page.route(re.compile(r"/api/v1/leaderboard/clans\?"), serve_clans)
        await page.route(re.compile(r"/api/v1/player/\d+/eu$"), serve_profile)
        await page.route(re.compile(r"/api/v1/player/\d+/eu/history\?"), serve_history)
        await page.route(re.compile(r"/api/v1/player/\d+/eu/tanks\?"), serve_tanks)
        await page.route(re.compile(rf"/api/v1/tank/{T34}/eu(\?.*)?$"), serve_tank)
        await page.route(re.compile(rf"/api/v1/tank/{T34}/eu/leaderboard\?"), serve_tank_board)

        # An index without the clans' leaderboard: no clans tab, and its link says why.
        await page.goto(site_url(http_port, "#rankings/clans/eu/30"))
        await wait_ready(page)
        await page.locator("#rank-clans-absent").wait_for()
        assert await page.locator("#rank-mode-clans").is_hidden()
        assert clan_requests == []

        # Listed: the tab shows; the first answer is a 429 with its countdown, the retry the table.
        served["index"] = with_clans
        await page.goto(site_url(http_port, "#rankings/players/eu/30"))
        await page.reload()  # the index is read once per page load
        await wait_ready(page)
        await page.click("#rank-mode-clans")
        await wait_hash(page, "#rankings/clans/eu/30/by=wn8")
        error = page.locator("#rankings-out .error")
        await error.wait_for()
        assert await error.locator(".error-code").inner_text() == "rate_limited"
        assert "HTTP 429" in await error.inner_text()
        retry = error.locator(".countdown-box button")
        await page.wait_for_function("() => !document.querySelector('#rankings-out .countdown-box button').disabled")
        await retry.click()
        expected = [
            ["1", "[ALPHA] The ALPHA", "2,400.5", "40", "31", "5,200", "130", "54.5 %", "1,200", "1,010", "61.25 %"],
            ["2", "[BETA] The BETA", "1,900", "40", "31", "5,200", "130", "54.5 %", "1,200", "1,010", "61.25 %"],
            ["2", "[GAMMA] The GAMMA", "1,900", "40", "31", "5,200", "130", "54.5 %", "—", "1,010", "—"],
        ]
        await wait_table(page, expected)
        heads = await page.locator("#rank-table thead th").all_inner_texts()
        assert heads == ["Rank", "Clan", "WN8", "Members", "Active members", "Battles", "Battles per member",
                         "Win rate", "Elo 10", "Elo 8", "Skirmish win rate"]  # fmt: skip
        links = await page.locator("#rank-table a.rank-clan").evaluate_all("as => as.map(a => a.getAttribute('href'))")
        assert links == ["#clan/eu/1001", "#clan/eu/1002", "#clan/eu/1003"]
        # A null figure is an em dash whose title says why.
        gap = page.locator("#rank-table tr[data-clan-id='1003'] td[data-col=elo_10] abbr.null-figure")
        assert "Not known for this clan" in await gap.get_attribute("title")
        summary = await page.locator("#rank-summary").inner_text()
        assert "3 clans ranked by WN8" in summary and "of 12 cached clans considered" in summary
        assert "at least 5 active members and 200 battles" in await page.locator("#rank-floor").inner_text()
        # Another figure: the API's rows by Elo.
        await page.locator("#form-rank-clans select[name=by]").select_option("elo_10")
        await wait_hash(page, "#rankings/clans/eu/30/by=elo_10")
        await wait_table(page, [
            ["1", "[BETA] The BETA", "1,450", "40", "31", "5,200", "130", "1,900", "54.5 %", "1,010", "61.25 %"],
            ["2", "[ALPHA] The ALPHA", "1,300", "40", "31", "5,200", "130", "1,900", "54.5 %", "1,010", "61.25 %"],
        ])  # fmt: skip
        assert clan_requests == ["region=eu&days=30&by=wn8"] * 2 + ["region=eu&days=30&by=elo_10"]
        await page.locator("#explorer").screenshot(path=str(artifacts_dir / "site-rankings-clans.png"))

        # The player's place: on the profile beside the WN8 (the career), and in a recent period.
        await page.goto(site_url(http_port, f"#player/eu/{DEMO_PLAYER}"))
        place = page.locator("#wn8-place")
        await place.wait_for()
        assert await place.locator(".tile-value").inner_text() == "Rank 123 of 4,567"
        link = place.locator("a")
        # The page holding rank 123 at the index's 50 rows a page.
        assert await link.get_attribute("href") == "#rankings/players/eu/career/by=wn8&min_battles=1000&offset=100"
        week = page.locator("#player-recents section.recent[data-period='7d'] .fig[data-field=place] a")
        await week.wait_for()
        assert await week.inner_text() == "Rank 5 of 40"
        assert await week.get_attribute("href") == "#rankings/players/eu/7/by=wn8&min_battles=25"
        await page.locator("#player-recents section.recent[data-period='30d'] .fig[data-field=wn8]").wait_for()
        for key in ("30d", "90d"):  # a null place and no place: nothing
            assert (
                await page.locator(
                    f"#player-recents section.recent[data-period='{key}'] .fig[data-field=place]"
                ).count()
                == 0
            )
        # Not again among the profile's other fields.
        assert "place" not in (await page.locator("#player-profile").evaluate("e => e.textContent")).lower()
        await page.locator("#player-profile").screenshot(path=str(artifacts_dir / "site-rankings-place.png"))
        # The link opens that ranking; nothing is built in this test: the API's 404 no_statistics.
        await link.click()
        await wait_hash(page, "#rankings/players/eu/career/by=wn8&min_battles=1000&offset=100")
        error = page.locator("#rankings-out .error")
        await error.wait_for()
        assert await error.locator(".error-code").inner_text() == "no_statistics"
        assert "HTTP 404" in await error.inner_text()
        assert "No rankings yet" in await error.locator(".error-plain").inner_text()
        assert await page.locator("#form-rank-players select[name=days]").input_value() == "career"
        # A profile without a place shows none.
        await page.goto(site_url(http_port, f"#player/eu/{SECOND_PLAYER}"))
        await page.locator("#player-profile .player-name").wait_for()
        await page.locator("#player-recents section.recent[data-period='7d']").wait_for()
        assert await page.locator("#wn8-place").count() == 0

        # A tank nobody reached the floor on: the message says the floor; then no leaderboard yet.
        await page.goto(site_url(http_port, f"#tank/eu/{T34}/30"))
        empty = page.locator("#tank-top-empty")
        await empty.wait_for()
        assert (
            await empty.inner_text()
            == "Nobody has reached the floor of 25 battles on this tank over the last 30 days yet."
        )
        assert await page.locator("#tank-top-link").get_attribute("href") == f"#rankings/tank/eu/{T34}/30/by=avg_damage"
        served["tank_board"] = "missing"
        await page.click("#tank-out #tank-period button[data-days='7']")
        error = page.locator("#tank-top .error")
        await error.wait_for()
        assert await error.locator(".error-code").inner_text() == "no_statistics"
        assert await error.locator(".error-message").inner_text() == "no leaderboard of eu has been built yet"
        assert await page.locator("#tank-figures").is_visible()  # the tank's own figures stay

        allowed = {(429, "/leaderboard/clans"), (404, "/leaderboard"), (404, "/session?since=today")}
        assert unexpected(browser.errors, allowed) == [], browser.errors
