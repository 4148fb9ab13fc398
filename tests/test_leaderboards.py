"""Leaderboards: the ranking equals an independent sort, ties share a rank, floors cannot be lowered,
a build stored twice stores the same, and on demo data (check_on_demo, run by tests/test_marks.py on
the demo it seeds) each row's figure is the player's own /history period figure."""

from __future__ import annotations

import time

import pytest
import ujson
from hypothesis import given, settings
from hypothesis import strategies as st
from tornado.httpclient import AsyncHTTPClient, HTTPRequest

from server.contract.catalogue import (
    CLAN_BATTLE_FLOORS,
    CLAN_LEADERBOARD_BYS,
    CLAN_MIN_MEMBERS,
    LEADERBOARD_BYS,
    LEADERBOARD_FLOORS,
    LEADERBOARD_STEPS,
    TANK_LEADERBOARD_FLOORS,
)
from server.contract.errors import APIError
from server.domain.days import DAY_SECONDS, day_start, days_before
from server.domain.rankings import (
    ALL,
    BOARD_FIGURES,
    CLAN_FIGURES,
    account_boards,
    account_play,
    ranked,
    ranked_clans,
    ranked_rows,
)
from server.services.leaderboards import (
    LeaderboardService,
    applied_floor,
    clan_key,
    clan_lists,
    places,
    ranked_lists,
    tank_lists,
    window_steps,
)
from server.services.population import PopulationService
from store.constants import TANK_COUNTERS
from store.leaderboards import list_key
from tests.test_tracker_drift import new_store

C = {name: i for i, name in enumerate(TANK_COUNTERS)}

figures = st.tuples(
    st.integers(0, 400),  # battles
    st.one_of(st.none(), st.sampled_from([40.0, 48.5, 50.0, 55.25, 61.0])),  # win_rate (few values: ties)
    st.one_of(st.none(), st.floats(0, 5000).map(lambda v: round(v, 2))),  # avg_damage
    st.one_of(st.none(), st.floats(0, 6000).map(lambda v: round(v, 2))),  # avg_combined_damage
    st.one_of(st.none(), st.sampled_from([300.0, 1200.5, 1200.5, 2400.0, 3000.75])),  # wn8
)
entries = st.dictionaries(st.integers(1, 10**9), figures, max_size=60).map(lambda d: sorted(d.items()))


@settings(max_examples=200, deadline=None)
@given(entries=entries, by=st.sampled_from(LEADERBOARD_BYS), floor=st.integers(1, 300))
def test_the_ranking_equals_an_independent_sort_and_ties_share_a_rank(entries, by, floor):
    at = BOARD_FIGURES.index(by)
    qualified = [(a, f) for a, f in entries if f[0] >= floor and f[at] is not None]
    rows = ranked(entries, by, floor)
    # Every qualified account once, nobody else.
    assert sorted(r[1] for r in rows) == sorted(a for a, _ in qualified)
    for rank, account_id, value, battles in rows:
        mine = dict(qualified)[account_id]
        assert (value, battles) == (mine[at], mine[0]) and battles >= floor
        # Competition ranking: one more than the players with a strictly better figure.
        assert rank == 1 + sum(1 for _, f in qualified if f[at] > value)
    # Best first; within a tie more battles first, then the account id.
    assert [(-r[2], -r[3], r[1]) for r in rows] == sorted((-r[2], -r[3], r[1]) for r in rows)


@settings(max_examples=100, deadline=None)
@given(entries=entries, by=st.sampled_from(LEADERBOARD_BYS), floor=st.integers(1, 300))
def test_a_tanks_ranking_equals_the_players_ranking_of_the_same_figures(entries, by, floor):
    """A tank's players are ranked when read (ranked_rows) exactly as a stored list is (ranked)."""
    rows = [[account_id, *figures, f"nick{account_id}", None] for account_id, figures in entries]
    at = 1 + BOARD_FIGURES.index(by)
    assert [(rank, row[0], row[at], row[1]) for rank, row in ranked_rows(rows, at, floor)] == ranked(entries, by, floor)


def tank(battles: int, wins: int, damage: int) -> list[int]:
    row = [0] * len(TANK_COUNTERS)
    row[C["battles"]], row[C["wins"]], row[C["damage_dealt"]] = battles, wins, damage
    return row


def test_an_accounts_boards_are_its_figures_over_the_filtered_tanks_with_the_floor():
    vehicles = {1: {"tier": 10, "type": "heavyTank"}, 2: {"tier": 8, "type": "heavyTank"}, 3: {}}
    rows = {1: tank(60, 33, 180_000), 2: tank(50, 20, 100_000), 3: tank(5, 5, 1_000), 4: tank(0, 0, 0)}
    boards = account_boards(rows, None, None, vehicles, 55)
    # all: 115 battles; tier:10 (and heavy): 60; type:heavyTank: 110; tier:8 (50 battles) under the floor.
    assert set(boards) == {ALL, "tier:10", "type:heavyTank", "tier:10/type:heavyTank"}
    assert boards["tier:10/type:heavyTank"] == boards["tier:10"]
    battles, win_rate, avg_damage, combined, wn8 = boards["tier:10"]
    assert (battles, win_rate, avg_damage, combined, wn8) == (60, 55.0, 3000.0, None, None)
    assert boards[ALL][:3] == (115, round(100 * 58 / 115, 2), round(281_000 / 115, 2))
    assert boards["type:heavyTank"][0] == 110


def test_the_floor_is_never_lower_than_the_windows_or_than_asked():
    for tank, floors in ((False, LEADERBOARD_FLOORS), (True, TANK_LEADERBOARD_FLOORS)):
        for window, floor in floors.items():
            assert applied_floor(window, None, tank) == floor
            assert applied_floor(window, 1, tank) == floor  # lower asks get the window's floor
            steps = window_steps(window, tank)
            for asked in (floor, floor + 1, 3 * floor, max(LEADERBOARD_STEPS)):
                applied = applied_floor(window, asked, tank)
                assert applied >= asked and applied in steps
                # the smallest step that is enough
                assert not [step for step in steps if asked <= step < applied]


# Clans: rosters of distinct accounts, and each account's play over a window (some rated, some not).
plays_strategy = st.dictionaries(
    st.integers(1, 400),
    st.tuples(
        st.integers(1, 300), st.integers(0, 300), st.one_of(st.none(), st.sampled_from([400.0, 1500.5, 2600.0]))
    ).map(lambda p: (p[0], min(p[0], p[1]), p[2])),
    max_size=200,
)
clans_strategy = st.dictionaries(
    st.integers(1, 10**6),
    st.fixed_dictionaries(
        {
            "tag": st.sampled_from(["AAA", "BBB", None]),
            "name": st.just("a clan"),
            "members": st.lists(st.integers(1, 400), max_size=40, unique=True).map(
                lambda ids: [{"account_id": a} for a in ids]
            ),
            "ratings": st.fixed_dictionaries(
                {
                    "elo_10": st.one_of(st.none(), st.sampled_from([1000, 1200, 1200, 1500])),
                    "elo_8": st.one_of(st.none(), st.integers(800, 1300)),
                    "skirmish_win_rate": st.one_of(st.none(), st.sampled_from([45.0, 50.0, 61.25])),
                }
            ),
        }
    ),
    max_size=30,
)


def independent_clan_ranking(plays, clans, window, by, min_members):
    """The clans' figures and ranks computed here from the rules as docs/data.md states them."""
    rows = []
    for clan_id, clan in clans.items():
        roster = [m["account_id"] for m in clan["members"]]
        active = [plays[a] for a in roster if a in plays]
        battles = sum(p[0] for p in active)
        if len(active) < max(CLAN_MIN_MEMBERS, min_members) or battles < CLAN_BATTLE_FLOORS[window]:
            continue
        rated = [(p[0], p[2]) for p in active if p[2] is not None]
        wn8 = round(sum(b * w for b, w in rated) / sum(b for b, _ in rated), 2) if rated else None
        figures = {
            "members": len(roster),
            "active_members": len(active),
            "battles": battles,
            "battles_per_member": round(battles / len(roster), 2),
            "wn8": wn8,
            "win_rate": round(100.0 * sum(p[1] for p in active) / battles, 2),
            **clan["ratings"],
        }
        if figures[by] is not None:
            rows.append((clan_id, figures))
    rows.sort(key=lambda r: (-r[1][by], -r[1]["active_members"], r[0]))
    out = []
    for position, (clan_id, figures) in enumerate(rows, 1):
        rank = out[-1][0] if out and out[-1][2][by] == figures[by] else position
        out.append((rank, clan_id, figures))
    return out


@settings(max_examples=150, deadline=None)
@given(
    plays=plays_strategy,
    clans=clans_strategy,
    by=st.sampled_from(CLAN_LEADERBOARD_BYS),
    min_members=st.integers(0, 12),
)
def test_the_clans_ranking_equals_an_independent_computation_with_floors_that_cannot_be_lowered(
    plays, clans, by, min_members
):
    window = "1"  # a floor of 50 battles: the generated clans reach it and miss it
    lists, considered = clan_lists({window: plays}, clans)
    assert considered == {window: len(clans)}
    ranked = ranked_clans(lists[clan_key(window)], by, max(CLAN_MIN_MEMBERS, min_members))
    expected = independent_clan_ranking(plays, clans, window, by, min_members)
    assert [(rank, row[0], dict(zip(CLAN_FIGURES, row[3:]))) for rank, row in ranked] == expected
    assert all(row[3 + CLAN_FIGURES.index("active_members")] >= CLAN_MIN_MEMBERS for _, row in ranked)


def test_a_members_play_is_its_history_figures_battles_wins_and_wn8():
    rows = {1: tank(10, 6, 12_000), 2: tank(5, 2, 4_000), 3: tank(0, 0, 0)}
    battles, wins, wn8 = account_play(rows, None)
    assert (battles, wins, wn8) == (15, 8, None)  # no table loaded: no WN8, as /history
    assert account_play({3: tank(0, 0, 0)}, None) is None  # no battle: not active


boards_strategy = st.dictionaries(
    st.integers(1, 10**6),
    st.fixed_dictionaries({ALL: figures.map(lambda f: (f[0] + 100, *f[1:]))}, optional={"tier:10": figures}),
    max_size=250,
)


def test_a_build_stored_twice_stores_the_same_and_its_pages_are_the_ranked_list(io_loop, mongo_uri):
    @settings(max_examples=15, deadline=None)
    @given(boards=boards_strategy)
    def each(boards):
        io_loop.run_sync(lambda: check(boards), timeout=120)

    async def check(boards):
        client, _, store = await new_store(mongo_uri)
        try:
            names = {a: (f"nick{a}", None) for a in boards}
            lists = ranked_lists({"30": boards}, names)
            # One tank's players: each account's all-tanks figures, as if all on tank 17.
            whole = tank_lists({"30": {a: {17: f[ALL]} for a, f in boards.items()}}, names)
            # The window's clans: every account in one of five clans, playing its all-tanks figures.
            plays = {a: (f[ALL][0], f[ALL][0] // 2, f[ALL][4]) for a, f in boards.items()}
            rosters: dict[int, list] = {}
            for a in sorted(boards):
                rosters.setdefault(900 + a % 5, []).append({"account_id": a})
            clans = {c: {"tag": f"T{c}", "name": "n", "members": m, "ratings": {}} for c, m in rosters.items()}
            clan_rows, _ = clan_lists({"30": plays}, clans)
            whole.update(clan_rows)
            place_rows, buckets, sizes = places(lists)
            whole.update(place_rows)
            pointer = {
                "through": "2026-11-26",
                "built_at": 1.0,
                "windows": {"30": {"from": "2026-10-28", "players": 9, "wn8_ranked": sizes["30"]}},
                "place_buckets": buckets,
            }
            service = LeaderboardService(store)
            with pytest.raises(APIError) as caught:
                await service.players("eu", "30", "wn8", None, None, None, 0, 50)
            assert caught.value.code == "no_statistics"
            answers = []
            for build in ("2026-11-26.100", "2026-11-26.100", "2026-11-26.200"):  # twice, then again later
                await store.leaderboards.save_build("eu", build, lists, pointer, whole)
                pages = []
                for offset in range(0, 300, 70):
                    page = await service.players("eu", "30", "wn8", None, None, None, offset, 70)
                    pages.append(page)
                for offset in range(0, 300, 70):
                    pages.append(await service.tank("eu", 17, "30", "wn8", None, offset, 70))
                pages.append(await service.clans("eu", "30", "wn8", 1, 0, 100))  # below the floor: served at it
                answers.append(pages)
                # One build's chunks only: the older ones are gone.
                assert {d["b"] async for d in store.leaderboards.collection.find({"b": {"$exists": True}})} <= {build}
            assert answers[0] == answers[1] == answers[2]
            full = lists.get(list_key("30", ALL, "wn8", LEADERBOARD_FLOORS["30"]), [])
            player_pages = [page for page in answers[0] if "players" in page]
            rows = [row for page in player_pages for row in page["rows"]]
            assert [
                [r["rank"], r["account_id"], r["value"], r["battles"], r["nickname"], r["clan_tag"]] for r in rows
            ] == full
            assert all(page["total"] == len(full) for page in player_pages)
            # Each account's place is its rank on that list, and how many it ranks; others have none.
            for rank, account_id, *_ in full:
                assert await service.places("eu", account_id) == {
                    "30": {"rank": rank, "ranked": len(full), "min_battles": 100, "through": "2026-11-26"}
                }
            unranked = set(boards) - {row[1] for row in full}
            for account_id in sorted(unranked)[:5]:
                assert await service.places("eu", account_id) == {}
            # Every floor a caller can be served, stored or read from a smaller list that fit one
            # chunk, pages through exactly the ranking at that floor.
            entries = sorted((a, f[ALL]) for a, f in boards.items())
            for floor in window_steps("30"):
                served, totals = [], set()
                for offset in range(0, 400, 100):
                    page = await service.players("eu", "30", "wn8", None, None, floor, offset, 100)
                    assert page["min_battles"] == floor
                    totals.add(page["total"])
                    served += [(r["rank"], r["account_id"], r["value"], r["battles"]) for r in page["rows"]]
                assert totals == {len(served)}, (floor, totals)
                assert served == ranked(entries, "wn8", floor), floor
            # The tank's players, ranked when read, at the tank's 30-day floor.
            clan_page = answers[0][-1]
            assert clan_page["min_members"] == CLAN_MIN_MEMBERS
            assert [(r["rank"], r["clan_id"], r["value"]) for r in clan_page["rows"]] == [
                (rank, row[0], row[3 + CLAN_FIGURES.index("wn8")])
                for rank, row in ranked_clans(clan_rows[clan_key("30")], "wn8", CLAN_MIN_MEMBERS)
            ]
            tank_rows = [row for page in answers[0] if "tank_id" in page for row in page["rows"]]
            at = 1 + BOARD_FIGURES.index("wn8")
            expected = ranked_rows(whole.get("tank:17:30", []), at, TANK_LEADERBOARD_FLOORS["30"])
            assert [(r["rank"], r["account_id"], r["value"]) for r in tank_rows] == [
                (rank, row[0], row[at]) for rank, row in expected
            ]
        finally:
            await client.drop_database(store.db.name)
            client.close()

    each()


async def get(base: str, path: str) -> tuple[int, dict]:
    response = await AsyncHTTPClient().fetch(HTTPRequest(base + path, request_timeout=60), raise_error=False)
    return response.code, ujson.loads(response.body)


async def battles_on(store, day: str) -> dict[int, int]:
    """Each EU account's battles on `day`: its stored snapshot of `day` against its newest before
    (the history carries a day without battles forward), for the accounts measured that day. Read
    before a build: the service's own tracker goes on measuring during the test, so a later read
    may see battles the build could not have."""
    played: dict[int, int] = {}
    for doc in await store.players.snapshots.find({"region": "eu", "date": day}).to_list(None):
        before = await store.players.snapshots.find_one(
            {"region": "eu", "account_id": doc["account_id"], "date": {"$lt": day}}, sort=[("date", -1)]
        )
        if before is not None:
            played[doc["account_id"]] = doc["battles"] - before["battles"]
    return played


async def check_on_demo(store, services, base_url: str, now: float) -> None:
    """On the demo data seeded at `now` (tests/test_marks.py seeds it once for both): each row's
    figure is the player's own /history period figure, a build run twice stores the same rows,
    clan tags, the career, the floors and a tank's leaderboard."""
    # A player's /history delta ends on the newest day measured for that player: today for those
    # today's pass (at `now`) visited already, yesterday for the others. The leaderboards are built
    # to end on the day most of them end on (as of that day's next second hour), and the rows of
    # those players are compared: the same days on both sides, whatever the time of day.
    today = time.strftime("%Y-%m-%d", time.gmtime(now))
    visited = await store.tracked.collection.count_documents({"region": "eu", "last_visit_day": today})
    tracked = await store.tracked.collection.count_documents({"region": "eu"})
    today = today if 2 * visited >= tracked else days_before(today, 1)  # the windows' last day
    job = PopulationService(store, services.ratings_source, clock=lambda: day_start(today) + DAY_SECONDS + 7200)
    job.pause = job.leaderboards.pause = 0
    played_last_day = await battles_on(store, today)  # no more than the build will read
    await job.build(force=True)
    first = await store.leaderboards.collection.find({}, {"_id": 1, "rows": 1}).sort("_id", 1).to_list(None)
    await job.build(force=True)  # the same day built again: the same rows
    again = await store.leaderboards.collection.find({}, {"_id": 1, "rows": 1}).sort("_id", 1).to_list(None)
    assert [d["rows"] for d in first if "rows" in d] == [d["rows"] for d in again if "rows" in d]
    services.answers.drop(("population",))

    checked = 0
    for window, by, key in (("30", "wn8", "wn8"), ("7", "win_rate", "win_rate"), ("1", "battles", "battles")):
        path = f"/api/v1/leaderboard/players?region=eu&days={window}&by={by}&limit=100"
        code, body = await get(base_url, path)
        assert code == 200, body
        board = body["data"]
        assert board["through"] == today and board["from"] == days_before(today, int(window) - 1)
        rows = board["rows"]
        floor = LEADERBOARD_FLOORS[window]
        if window == "1" and not rows:
            # The simulator's EU players play from 16:00 UTC: earlier (or just after, at the
            # seeding), the last day's board is rightly empty: nobody measured then had the
            # floor's battles that day.
            assert len(played_last_day) >= 10, played_last_day
            assert max(played_last_day.values()) < floor, played_last_day
            continue
        assert rows and board["total"] >= len(rows), board
        assert all(row["battles"] >= floor for row in rows)
        assert [row["value"] for row in rows] == sorted((row["value"] for row in rows), reverse=True)
        # The rows of the players measured on the window's last day: the same days as their /history.
        same_days = 0
        for row in rows[:25]:
            code, history = await get(base_url, f"/api/v1/player/{row['account_id']}/eu/history?days=90")
            assert code == 200, history
            delta = history["data"]["deltas"][f"{window}d"]
            if delta is None or delta["to"] != today:
                continue
            assert delta["from"] >= days_before(today, int(window)), delta  # or the first measured day
            period = delta["period"]
            assert period["battles"] == row["battles"], (window, row, period)
            assert period[key] == row["value"], (window, row, period)
            same_days += 1
            if same_days == 8:
                break
        # At least two rows compared, or every row of a shorter board: early in the simulated EU
        # evening (each player's day complete at its own minute of 16:00-22:00 UTC) the 1-day board
        # may rank one player, measured on its last day as every row of that board is.
        assert same_days >= min(2, len(rows)), (window, rows[:5])
        checked += same_days
    assert checked >= 6
    # One tank's leaderboard: the most played tank's players by damage, each row the figure of the
    # player's own /tanks row for the same days.
    _, stats = await get(base_url, "/api/v1/tanks/stats?region=eu&days=30&sort=players&limit=1")
    tank_id = stats["data"]["tanks"][0]["tank_id"]
    code, body = await get(base_url, f"/api/v1/tank/{tank_id}/eu/leaderboard?days=30&by=avg_damage&limit=100")
    assert code == 200, body
    board = body["data"]
    assert board["tank_id"] == tank_id and board["through"] == today and board["rows"], board
    assert all(row["battles"] >= board["min_battles"] for row in board["rows"])
    assert [row["value"] for row in board["rows"]] == sorted((row["value"] for row in board["rows"]), reverse=True)
    same_days = 0
    for row in board["rows"][:20]:
        _, history = await get(base_url, f"/api/v1/player/{row['account_id']}/eu/history?days=90")
        if (history["data"]["deltas"]["30d"] or {}).get("to") != today:
            continue
        _, tanks = await get(base_url, f"/api/v1/player/{row['account_id']}/eu/tanks?days=30")
        mine = next(r for r in tanks["data"]["tanks"] if r["tank_id"] == tank_id)
        assert (mine["period"]["battles"], mine["period"]["avg_damage"]) == (row["battles"], row["value"]), (row, mine)
        same_days += 1
    assert same_days >= 1, board["rows"][:5]
    code, body = await get(base_url, "/api/v1/tank/2147483647/eu/leaderboard?days=7")  # no such tank: an empty list
    assert code == 200 and body["data"]["total"] == 0 and body["data"]["rows"] == []
    # The clan tags of the cached clan's members, and the career from the tracked states.
    code, body = await get(base_url, "/api/v1/leaderboard/players?region=eu&days=career&by=battles&limit=100")
    assert code == 200 and body["data"]["rows"], body
    clan = await store.clans.clans.find_one({"region": "eu"})
    members = {m["account_id"] for m in clan.get("members", [])} if clan else set()
    tagged = [row for row in body["data"]["rows"] if row["account_id"] in members]
    assert all(row["clan_tag"] == clan["tag"] for row in tagged), tagged[:3]
    # A higher floor ranks fewer players, never more, none under the floor asked for; a lower ask
    # is served the window's floor.
    _, low = await get(base_url, "/api/v1/leaderboard/players?region=eu&days=30&by=wn8&min_battles=1")
    assert low["data"]["min_battles"] == LEADERBOARD_FLOORS["30"]
    _, high = await get(base_url, "/api/v1/leaderboard/players?region=eu&days=30&by=wn8&min_battles=101")
    assert high["data"]["min_battles"] == applied_floor("30", 101) > 101
    assert high["data"]["total"] <= low["data"]["total"]
    assert all(row["battles"] >= 101 for row in high["data"]["rows"])
    # tier and type together rank the battles in tanks of both; combined damage ranks all tanks only.
    _, both = await get(base_url, "/api/v1/leaderboard/players?region=eu&days=90&by=battles&tier=8&type=heavyTank")
    _, tier = await get(base_url, "/api/v1/leaderboard/players?region=eu&days=90&by=battles&tier=8")
    assert both["data"]["total"] <= tier["data"]["total"]
    _, combined = await get(base_url, "/api/v1/leaderboard/players?region=eu&days=90&by=avg_combined_damage&tier=8")
    assert combined["data"]["total"] == 0 and combined["data"]["rows"] == []
    await check_places_on_demo(store, base_url, today)
    await check_clans_on_demo(store, base_url, today)


async def check_places_on_demo(store, base_url: str, today: str) -> None:
    """A ranked player's /history periods and profile show its rank on the leaderboards of the same
    days and of the career, and how many are ranked there."""
    for window in ("30", "7", "career"):
        limit = 100 if window == "career" else 5
        _, body = await get(base_url, f"/api/v1/leaderboard/players?region=eu&days={window}&by=wn8&limit={limit}")
        board = body["data"]
        assert board["rows"], board
        profiles = 0
        for row in board["rows"]:
            expected = {"rank": row["rank"], "ranked": board["total"], "min_battles": board["min_battles"]}
            if window == "career":
                # The accounts with a cached profile (the others' would be a live lookup, unrated).
                if await store.players.get("eu", row["account_id"]) is None:
                    continue
                _, profile = await get(base_url, f"/api/v1/player/{row['account_id']}/eu")
                place = profile["data"]["ratings"]["place"]
                assert place == {"days": "career", "by": "wn8", **expected, "through": today}, (row, place)
                profiles += 1
            else:
                _, history = await get(base_url, f"/api/v1/player/{row['account_id']}/eu/history?days=90")
                deltas = history["data"]["deltas"]
                assert deltas[f"{window}d"]["period"]["place"] == {**expected, "through": today}, row
                assert (
                    deltas["14d"] is None or deltas["14d"]["period"] is None or deltas["14d"]["period"]["place"] is None
                )
        assert window != "career" or profiles >= 1, board["rows"][:3]


async def check_clans_on_demo(store, base_url: str, today: str) -> None:
    """The demo's cached clan on /leaderboard/clans: its figures are its roster's /history period
    figures summed (battles, wins) and battle-weighted (WN8), at the floors."""
    clan = await store.clans.clans.find_one({"region": "eu"})
    code, body = await get(base_url, "/api/v1/leaderboard/clans?region=eu&days=30&by=wn8")
    assert code == 200, body
    board = body["data"]
    assert board["through"] == today and board["min_members"] == CLAN_MIN_MEMBERS
    assert board["min_battles"] == CLAN_BATTLE_FLOORS["30"] and board["clans"] >= 1
    rows = board["rows"]
    assert [row["clan_id"] for row in rows] == [clan["clan_id"]], rows
    row = rows[0]
    assert row["tag"] == clan["tag"] and row["members"] == len(clan["members"])
    assert row["value"] == row["wn8"] and row["rank"] == 1
    # An independent sum over the roster's own /history 30-day periods (each member's delta ends on
    # the window's last day, or the member is left out of the comparison and of the sums below).
    battles = wins = active = 0
    weighted = rated = 0.0
    compared = True
    for member in clan["members"]:
        _, history = await get(base_url, f"/api/v1/player/{member['account_id']}/eu/history?days=90")
        delta = (history.get("data") or {}).get("deltas", {}).get("30d")
        if delta is None or delta["period"] is None or delta["period"]["battles"] == 0:
            continue
        if delta["to"] != today:
            compared = False
            continue
        period = delta["period"]
        active += 1
        battles += period["battles"]
        wins += period["wins"]
        if period["wn8"] is not None:
            weighted += period["wn8"] * period["battles"]
            rated += period["battles"]
    assert row["active_members"] >= CLAN_MIN_MEMBERS  # the board's own floor, whatever the hour
    if compared:
        assert active >= CLAN_MIN_MEMBERS
        assert (row["active_members"], row["battles"]) == (active, battles)
        assert row["win_rate"] == round(100.0 * wins / battles, 2)
        assert row["wn8"] == round(weighted / rated, 2)
    else:  # just after midnight the members' own history may end on another day than the window
        assert row["active_members"] >= active and row["battles"] >= battles
    # A floor above the roster ranks nobody; below the floor, the floor applies.
    _, empty = await get(base_url, "/api/v1/leaderboard/clans?region=eu&days=30&min_members=100")
    assert empty["data"]["total"] == 0 and empty["data"]["min_members"] == 100
    _, low = await get(base_url, "/api/v1/leaderboard/clans?region=eu&days=30&min_members=1")
    assert low["data"]["min_members"] == CLAN_MIN_MEMBERS and low["data"]["total"] == 1
