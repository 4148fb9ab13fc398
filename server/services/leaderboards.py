"""Leaderboards: built by the tank statistics job from its per-account sums, read a page at a time."""
# docs/data.md "Leaderboards" states the rules: windows, floors, ties, the clans' figures.

from __future__ import annotations

import asyncio
import bisect
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from server.contract.catalogue import (
    CLAN_BATTLE_FLOORS,
    CLAN_MIN_MEMBERS,
    LEADERBOARD_ACCOUNT_ONLY,
    LEADERBOARD_FLOORS,
    LEADERBOARD_STEPS,
    LEADERBOARD_WINDOWS,
    PLAYER_LEADERBOARD_BYS,
    TANK_LEADERBOARD_FLOORS,
    TANK_LEADERBOARD_STEPS,
)
from server.contract.errors import APIError
from server.domain.days import days_before
from server.domain.rankings import (
    ALL,
    BOARD_FIGURES,
    CLAN_FIGURES,
    WTR_FIGURES,
    Play,
    account_boards,
    account_play,
    board_name,
    clan_figures,
    ranked_clans,
    ranked_rows,
    ranked_steps,
    tank_figures,
)
from server.domain.records import unpack
from server.services.concurrency import dismantle
from server.serving.answers import POPULATION_TAG, Tag, no_answer_cache
from store.client import job_deadline, request_deadline
from store.leaderboards import CHUNK_ROWS, list_key
from store.tracker import tracked_id

if TYPE_CHECKING:
    from server.domain.ratings import ExpectedValues
    from store.store import Store

POPULATION_NOTE = (
    "the tracked accounts (players looked up here and members of cached clans), measured daily: "
    "not a random sample of the server"
)
BOOKS_CHUNK = 500  # tracked documents read per step of a build
CLANS_CHUNK = 100  # cached clans (each with its roster) read per step of a build
RANKED_MEMO = 256  # ranked tank lists a process keeps
PLACES_PER_BUCKET = 200  # accounts per stored document of their places (one point read per account)
PAUSE_SECONDS = 0.02  # between two steps of a build's reads: requests run in between

Boards = dict[int, dict[str, tuple]]  # {account_id: {filter: figures (BOARD_FIGURES order)}}
TankBoards = dict[int, dict[int, tuple]]  # {account_id: {tank_id: figures (BOARD_FIGURES order)}}
Plays = dict[int, Play]  # {account_id: (battles, wins, wn8)} of every account with a battle in a window


def window_boards(
    accounts: Mapping[int, Mapping[int, Any]],
    assists: Mapping[int, Any],
    expected: ExpectedValues | None,
    vehicles: Mapping[int, Mapping[str, Any]],
    window: str,
) -> Boards:
    """Every account's figures per filter over one window, for accounts with at least the window's
    first floor of battles there (pure: run in a worker thread)."""
    floor = LEADERBOARD_FLOORS[window]
    out: Boards = {}
    for account_id, rows in accounts.items():
        boards = account_boards(rows, assists.get(account_id), expected, vehicles, floor)
        if boards:
            out[account_id] = boards
    return out


def window_play(accounts: Mapping[int, Mapping[int, Any]], boards: Boards, expected: ExpectedValues | None) -> Plays:
    """Every account's battles, wins and WN8 over one window, with one battle or more (its board's
    WN8 where it has one; pure: run in a worker thread)."""
    out: Plays = {}
    for account_id, rows in accounts.items():
        play = account_play(rows, expected, boards.get(account_id, {}).get(ALL))
        if play is not None:
            out[account_id] = play
    return out


def clan_lists(
    plays: Mapping[str, Plays], clans: Mapping[int, Mapping[str, Any]]
) -> tuple[dict[str, list[list[Any]]], dict[str, int]]:
    """({"clans:<window>": rows [clan_id, tag, name, *CLAN_FIGURES]} of the clans that reach the
    window's floors, unranked), and how many clans each window considered (pure)."""
    out: dict[str, list[list[Any]]] = {}
    considered: dict[str, int] = {}
    for window, play in plays.items():
        rows = []
        for clan_id, doc in sorted(clans.items()):
            roster = [int(m["account_id"]) for m in doc.get("members") or [] if m.get("account_id")]
            figures = clan_figures(roster, play, doc.get("ratings") or {})
            if figures["active_members"] >= CLAN_MIN_MEMBERS and figures["battles"] >= CLAN_BATTLE_FLOORS[window]:
                rows.append([clan_id, doc.get("tag"), doc.get("name"), *(figures[k] for k in CLAN_FIGURES)])
        out[clan_key(window)] = rows
        considered[window] = len(clans)
    return out, considered


def ranked_counts(boards: Mapping[str, Boards]) -> dict[str, dict[str, int]]:
    """For each window, how many accounts are ranked on all tanks at each of its floors (by battles:
    every one has it), from one sort of their battles (pure: in a worker thread; counted on the
    event loop floor by floor, it held the loop: docs/benchmarks.md, "The figures behind the code's choices")."""
    out: dict[str, dict[str, int]] = {}
    for window in LEADERBOARD_FLOORS:
        battles = sorted(figures.get(ALL, (0,))[0] for figures in boards.get(window, {}).values())
        out[window] = {str(floor): len(battles) - bisect.bisect_left(battles, floor) for floor in window_steps(window)}
    return out


def places(lists: Mapping[str, list[list[Any]]]) -> tuple[dict[str, list[list[Any]]], int, dict[str, int]]:
    """Each account's rank on the WN8 list of every window at its floor (all tanks): ({"places:<n>":
    rows [account_id, rank per window of LEADERBOARD_WINDOWS or None]} in buckets of about
    PLACES_PER_BUCKET accounts by account id, the bucket count, and each list's length) (pure)."""
    ranks: dict[int, list[int | None]] = {}
    sizes: dict[str, int] = {}
    for position, window in enumerate(LEADERBOARD_WINDOWS):
        rows = lists.get(list_key(window, ALL, "wn8", LEADERBOARD_FLOORS[window]), [])
        sizes[window] = len(rows)
        for rank, account_id, *_ in rows:
            ranks.setdefault(account_id, [None] * len(LEADERBOARD_WINDOWS))[position] = rank
    buckets = max(1, -(-len(ranks) // PLACES_PER_BUCKET))
    out: dict[str, list[list[Any]]] = {}
    for account_id, ranked_at in sorted(ranks.items()):
        out.setdefault(places_key(account_id, buckets), []).append([account_id, *ranked_at])
    return out, buckets, sizes


def places_key(account_id: int, buckets: int) -> str:
    return f"places:{int(account_id) % max(1, int(buckets))}"


def clan_key(window: str) -> str:
    return f"clans:{window}"


def window_tanks(
    accounts: Mapping[int, Mapping[int, Any]],
    assists: Mapping[int, Any],
    expected: ExpectedValues | None,
    window: str,
) -> TankBoards:
    """Every account's figures on each tank it played at least the window's tank floor of battles
    on (pure: run in a worker thread)."""
    floor = TANK_LEADERBOARD_FLOORS[window]
    out: TankBoards = {}
    for account_id, rows in accounts.items():
        tanks = tank_figures(rows, assists.get(account_id), expected, floor)
        if tanks:
            out[account_id] = tanks
    return out


def tank_lists(
    tanks: Mapping[str, TankBoards], names: Mapping[int, tuple[str | None, str | None]]
) -> dict[str, list[list[Any]]]:
    """{"tank:<tank_id>:<window>": rows [account_id, battles, win_rate, avg_damage,
    avg_combined_damage, wn8, nickname, clan tag]} of every tank and window (pure)."""
    out: dict[str, list[list[Any]]] = {}
    for window, accounts in tanks.items():
        for account_id, figures in accounts.items():
            name = names.get(account_id, (None, None))
            for tank_id, values in figures.items():
                out.setdefault(tank_key(tank_id, window), []).append([account_id, *values, *name])
    return out


def tank_key(tank_id: int, window: str) -> str:
    return f"tank:{int(tank_id)}:{window}"


def ranked_lists(
    boards: Mapping[str, Boards],
    names: Mapping[int, tuple[str | None, str | None]],
    wtr: Mapping[int, int] | None = None,
) -> dict[str, list[list[Any]]]:
    """{list_key: rows [rank, account_id, figure, battles, nickname, clan tag]} of every window,
    filter, figure and floor with at least one ranked account (pure: run in a worker thread).
    by=wtr ranks each window's players of all tanks (at the window's floors) by their `wtr`."""
    out: dict[str, list[list[Any]]] = {}
    for window, accounts in boards.items():
        by_filter: dict[str, list[tuple[int, tuple]]] = {}
        for account_id, figures in accounts.items():
            for name, values in figures.items():
                by_filter.setdefault(name, []).append((account_id, values))
        for name, entries in by_filter.items():
            for by in PLAYER_LEADERBOARD_BYS:
                if name != ALL and by in LEADERBOARD_ACCOUNT_ONLY:
                    continue
                steps = (
                    ranked_steps(
                        [(a, (values[0], (wtr or {}).get(a))) for a, values in entries],
                        by,
                        window_steps(window),
                        WTR_FIGURES,
                    )
                    if by == "wtr"
                    else ranked_steps(entries, by, window_steps(window))
                )
                for floor, rows in steps.items():
                    out[list_key(window, name, by, floor)] = [
                        [rank, account_id, value, battles, *names.get(account_id, (None, None))]
                        for rank, account_id, value, battles in rows
                    ]
                    # A list that fits one chunk holds every higher floor's list too (a subset, in
                    # the same order): those are read from it (LeaderboardService.players), not
                    # stored, so small lists (a tier and type at every step) cost one document.
                    if len(rows) <= CHUNK_ROWS:
                        break
    return out


def rerank(rows: list[list[Any]], floor: int) -> list[list[Any]]:
    """The rows of a stored list (best first) with at least `floor` battles, ranked again among
    themselves (competition ranking, as `ranked`)."""
    out: list[list[Any]] = []
    rank, previous = 0, None
    for row in rows:
        if row[3] < floor:
            continue
        if row[2] != previous:
            rank, previous = len(out) + 1, row[2]
        out.append([rank, *row[1:]])
    return out


def window_steps(window: str, tank: bool = False) -> tuple[int, ...]:
    """The floors a window's lists are kept at (or, `tank`, a tank's are ranked at): every step
    from its own floor up."""
    if tank:
        return tuple(step for step in TANK_LEADERBOARD_STEPS if step >= TANK_LEADERBOARD_FLOORS[window])
    return tuple(step for step in LEADERBOARD_STEPS if step >= LEADERBOARD_FLOORS[window])


def applied_floor(window: str, asked: int | None, tank: bool = False) -> int:
    """The floor a page is read at: the smallest step at or above both the window's floor and the
    battles asked for (never fewer than asked; the steps end at min_battles' maximum). `tank`: of
    a tank's leaderboard (battles on the tank)."""
    least = max((TANK_LEADERBOARD_FLOORS if tank else LEADERBOARD_FLOORS)[window], asked or 0)
    return next(step for step in window_steps(window, tank) if step >= least)


def board_head(region: str, window: str, pointer: Mapping[str, Any], by: str) -> dict[str, Any]:
    """What a board of a region's current build opens with: the region, the window and its days, the build, the order."""
    return {
        "region": region,
        "days": window,
        "from": pointer["windows"].get(window, {}).get("from"),
        "through": pointer["through"],
        "built_at": pointer["built_at"],
        "by": by,
    }


class LeaderboardBuilder:
    """The job's part: each window's boards as the job's period sums reach it, then the career
    boards from the tracked states, the names, and one build stored per region."""

    def __init__(self, store: Store, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.clock = clock
        self.pause = PAUSE_SECONDS

    async def career(
        self, region: str, account_ids: list[int], expected: ExpectedValues | None, vehicles: Mapping[int, Any]
    ) -> tuple[
        Boards, TankBoards, Plays, dict[int, tuple[str | None, int | None]], list[dict[int, list[int]]], dict[int, int]
    ]:
        """The career boards, tank figures and play of `account_ids` (the accounts of the longest
        window), their nicknames and clan ids, their stored per-tank states (the job's career
        WN8 distribution) and the WTR measured at their newest visit (those with one)."""
        keys = [tracked_id(region, a) for a in account_ids]
        boards: Boards = {}
        tanks: TankBoards = {}
        plays: Plays = {}
        who: dict[int, tuple[str | None, int | None]] = {}
        states: list[dict[int, list[int]]] = []
        wtr: dict[int, int] = {}
        floor, tank_floor = LEADERBOARD_FLOORS["career"], TANK_LEADERBOARD_FLOORS["career"]
        for start in range(0, len(keys), BOOKS_CHUNK):
            with job_deadline():
                books = await self.store.tracked.ranking_books(keys[start : start + BOOKS_CHUNK])

            # Unpacked and figured in a worker thread: BOOKS_CHUNK careers of every tank an account owns.
            def figure(books: Mapping[str, dict] = books) -> tuple[Boards, TankBoards, Plays, dict, list]:
                part: Boards = {}
                part_tanks: TankBoards = {}
                part_plays: Plays = {}
                names: dict[int, tuple[str | None, int | None]] = {}
                unpacked = []
                for doc in books.values():
                    account_id = int(doc["account_id"])
                    names[account_id] = (doc.get("nickname"), doc.get("clan_id"))
                    if isinstance(doc.get("wtr"), int):
                        wtr[account_id] = doc["wtr"]
                    if not doc.get("state"):
                        continue
                    state = unpack(doc["state"])
                    unpacked.append(state)
                    found = account_boards(state, doc.get("assist"), expected, vehicles, floor)
                    if found:
                        part[account_id] = found
                    played = tank_figures(state, doc.get("assist"), expected, tank_floor)
                    if played:
                        part_tanks[account_id] = played
                    play = account_play(state, expected, (found or {}).get(ALL))
                    if play is not None:
                        part_plays[account_id] = play
                return part, part_tanks, part_plays, names, unpacked

            part, part_tanks, part_plays, names, unpacked = await asyncio.to_thread(figure)
            boards.update(part)
            tanks.update(part_tanks)
            plays.update(part_plays)
            who.update(names)
            states.extend(unpacked)
            await asyncio.sleep(self.pause)
        return boards, tanks, plays, who, states, wtr

    async def cached_clans(self, region: str, clan_ids: set[int]) -> dict[int, dict[str, Any]]:
        """The tag, name, roster (account ids) and ratings of the cached clans among `clan_ids`
        (a clan not cached here is left out)."""
        ids = sorted(clan_ids)
        clans: dict[int, dict[str, Any]] = {}
        for start in range(0, len(ids), CLANS_CHUNK):
            with job_deadline():
                docs = await self.store.clans.get_many(region, ids[start : start + CLANS_CHUNK])
            for clan_id, doc in docs.items():
                clans[clan_id] = {
                    "tag": doc.get("tag"),
                    "name": doc.get("name"),
                    "members": [{"account_id": m.get("account_id")} for m in doc.get("members") or []],
                    "ratings": doc.get("ratings") or {},
                }
            await asyncio.sleep(self.pause)
        return clans

    async def save(
        self,
        region: str,
        through: str,
        boards: Mapping[str, Boards],
        tanks: Mapping[str, TankBoards],
        players: Mapping[str, int],
        who: Mapping[int, tuple[str | None, int | None]],
        plays: Mapping[str, Plays],
        wtr: Mapping[int, int] | None = None,
    ) -> int:
        """Rank every list (by=wtr: each window's players by their `wtr`), gather each tank's
        players and each window's clans, and store the build; returns the documents written."""
        clans = await self.cached_clans(region, {clan for _, clan in who.values() if isinstance(clan, int)})
        names = {
            a: (nickname, clans.get(clan, {}).get("tag") if isinstance(clan, int) else None)
            for a, (nickname, clan) in who.items()
        }
        lists = await asyncio.to_thread(ranked_lists, boards, names, wtr or {})
        whole = await asyncio.to_thread(tank_lists, tanks, names)
        clan_rows, considered = await asyncio.to_thread(clan_lists, plays, clans)
        whole.update(clan_rows)
        place_rows, buckets, sizes = await asyncio.to_thread(places, lists)
        whole.update(place_rows)
        ranked = await asyncio.to_thread(ranked_counts, boards)
        now = self.clock()
        windows = {
            window: {
                "from": days_before(through, int(window) - 1) if window != "career" else None,
                "through": through,
                "players": players.get(window, 0),
                "clans": considered.get(window, 0),
                "wn8_ranked": sizes.get(window, 0),  # the WN8 list at the window's floor (places)
                "ranked": ranked[window],
            }
            for window in LEADERBOARD_FLOORS
        }
        build = f"{through}.{int(now)}"
        pointer = {"through": through, "built_at": now, "windows": windows, "place_buckets": buckets}
        # Each of the build's writes has its own job deadline (store/leaderboards.py): the whole
        # build grows with the tracked accounts and on a busy machine outlasts one.
        written = await self.store.leaderboards.save_build(region, build, lists, pointer, whole)
        await dismantle(lists, whole, names, place_rows, clan_rows)
        return written


class LeaderboardService:
    """/leaderboard/players: one page of a stored ranked list (the pointer and one or two chunks);
    /tank/{tank_id}/{region}/leaderboard: the tank's players, /leaderboard/clans: the window's
    clans (the pointer and one document each)."""

    def __init__(self, store: Store, on_write: Callable[[Tag], None] = no_answer_cache) -> None:
        self.store = store
        # Told POPULATION_TAG when a region's pointer names a build other than the one this process
        # last read: the answers kept from that one go (another process's job switched it).
        self.on_write = on_write
        self._builds: dict[str, Any] = {}  # region -> the build its pointer named last
        # A tank's players ranked, by (build, tank and window, figure, floor): read and sorted once
        # per build in this process (the most recent RANKED_MEMO kept).
        self._ranked: dict[tuple[str, str, str, int], list[tuple[int, Any]]] = {}

    async def _current(self, region: str) -> dict[str, Any] | None:
        """The region's pointer (its current build), noting a switch of build."""
        pointer = await self.store.leaderboards.current(region)
        build = pointer["build"] if pointer is not None else None
        if region in self._builds and self._builds[region] != build:
            self.on_write(POPULATION_TAG)
        self._builds[region] = build
        return pointer

    async def players(
        self,
        region: str,
        window: str,
        by: str,
        tier: int | None,
        vehicle_type: str | None,
        min_battles: int | None,
        offset: int,
        limit: int,
    ) -> dict[str, Any]:
        floor = applied_floor(window, min_battles)
        board = board_name(tier, vehicle_type) or ALL
        async with request_deadline():
            pointer = await self._current(region)
        if pointer is None:
            raise APIError("no_statistics", f"no leaderboard of {region} has been built yet")
        rows, total, start = await self._page(region, pointer["build"], window, board, by, floor, offset, limit)
        meta = pointer["windows"].get(window, {})
        return {
            **board_head(region, window, pointer, by),
            "tier": tier,
            "type": vehicle_type,
            "min_battles": floor,
            "floors": list(window_steps(window)),
            "population": POPULATION_NOTE,
            "players": meta.get("players", 0),
            "total": total,
            "offset": offset,
            "limit": limit,
            "rows": [
                {
                    "rank": rank,
                    "account_id": account_id,
                    "nickname": nickname,
                    "clan_tag": tag,
                    "value": value,
                    "battles": battles,
                }
                for rank, account_id, value, battles, nickname, tag in rows[start : start + limit]
            ],
        }

    async def _page(
        self, region: str, build: str, window: str, board: str, by: str, floor: int, offset: int, limit: int
    ) -> tuple[list[list[Any]], int, int]:
        """(rows from the page's first chunk on, the list's length, where the page starts in them).
        A list stored at `floor` is read by chunk; one that was not stored is a subset of the one at
        the next lower step that fit one chunk (ranked_lists), read and ranked again."""
        key = list_key(window, board, by, floor)
        first, last = offset // CHUNK_ROWS, (offset + limit - 1) // CHUNK_ROWS
        async with request_deadline():
            chunks = await self.store.leaderboards.chunks(region, build, key, range(first, last + 1))
            if not chunks and first:
                chunks = await self.store.leaderboards.chunks(region, build, key, [0])  # a page past the end
                if chunks:
                    return [], chunks[0]["total"], 0
            if chunks:
                return (
                    [row for chunk in chunks for row in chunk["rows"]],
                    chunks[0]["total"],
                    offset - first * CHUNK_ROWS,
                )
            for lower in reversed([step for step in window_steps(window) if step < floor]):
                found = await self.store.leaderboards.chunks(region, build, list_key(window, board, by, lower), [0])
                if found:
                    rows = rerank(found[0]["rows"], floor) if found[0]["total"] <= CHUNK_ROWS else []
                    return rows, len(rows), offset
        return [], 0, offset

    async def tank(
        self,
        region: str,
        tank_id: int,
        window: str,
        by: str,
        min_battles: int | None,
        offset: int,
        limit: int,
    ) -> dict[str, Any]:
        """/tank/{tank_id}/{region}/leaderboard: the tank's players in the window (one document),
        ranked by `by` at the floor applied (kept ranked per build, figure and floor in this process)."""
        floor = applied_floor(window, min_battles, tank=True)
        async with request_deadline():
            pointer = await self._current(region)
        if pointer is None:
            raise APIError("no_statistics", f"no leaderboard of {region} has been built yet")
        memo = (pointer["build"], tank_key(tank_id, window), by, floor)
        ranked = self._ranked.get(memo)
        if ranked is None:
            async with request_deadline():
                found = await self.store.leaderboards.chunks(region, pointer["build"], memo[1], [0])
            rows = found[0]["rows"] if found else []
            ranked = ranked_rows(rows, 1 + BOARD_FIGURES.index(by), floor)
            self._remember(memo, ranked)
        meta = pointer["windows"].get(window, {})
        at = 1 + BOARD_FIGURES.index(by)
        return {
            "region": region,
            "tank_id": tank_id,
            "days": window,
            "from": meta.get("from"),
            "through": pointer["through"],
            "built_at": pointer["built_at"],
            "by": by,
            "min_battles": floor,
            "floors": list(window_steps(window, tank=True)),
            "population": POPULATION_NOTE,
            "total": len(ranked),
            "offset": offset,
            "limit": limit,
            "rows": [
                {
                    "rank": rank,
                    "account_id": row[0],
                    "nickname": row[6],
                    "clan_tag": row[7],
                    "value": row[at],
                    "battles": row[1],
                }
                for rank, row in ranked[offset : offset + limit]
            ],
        }

    async def clans(
        self, region: str, window: str, by: str, min_members: int | None, offset: int, limit: int
    ) -> dict[str, Any]:
        """/leaderboard/clans: the window's clans (one document) ranked by `by` with at least
        `min_members` active members (never fewer than CLAN_MIN_MEMBERS; kept ranked per build,
        figure and floor in this process)."""
        floor = max(CLAN_MIN_MEMBERS, min_members or 0)
        async with request_deadline():
            pointer = await self._current(region)
        if pointer is None:
            raise APIError("no_statistics", f"no leaderboard of {region} has been built yet")
        memo = (pointer["build"], clan_key(window), by, floor)
        ranked = self._ranked.get(memo)
        if ranked is None:
            async with request_deadline():
                found = await self.store.leaderboards.chunks(region, pointer["build"], memo[1], [0])
            ranked = ranked_clans(found[0]["rows"] if found else [], by, floor)
            self._remember(memo, ranked)
        meta = pointer["windows"].get(window, {})
        return {
            **board_head(region, window, pointer, by),
            "min_members": floor,
            "min_battles": CLAN_BATTLE_FLOORS[window],
            "population": POPULATION_NOTE,
            "clans": meta.get("clans", 0),
            "total": len(ranked),
            "offset": offset,
            "limit": limit,
            "rows": [
                {
                    "rank": rank,
                    "clan_id": row[0],
                    "tag": row[1],
                    "name": row[2],
                    "value": row[3 + CLAN_FIGURES.index(by)],
                    **dict(zip(CLAN_FIGURES, row[3:], strict=True)),
                }
                for rank, row in ranked[offset : offset + limit]
            ],
        }

    def _remember(self, memo: tuple[str, str, str, int], ranked: list[tuple[int, Any]]) -> None:
        if len(self._ranked) >= RANKED_MEMO:
            self._ranked.pop(next(iter(self._ranked)))
        self._ranked[memo] = ranked

    async def places(self, region: str, account_id: int) -> dict[str, dict[str, Any]]:
        """The account's place on each window's WN8 leaderboard at the window's floor (all tanks):
        {window: {rank, ranked, min_battles, through}} for the windows it is ranked on (the
        pointer and one document; empty before the first build)."""
        async with request_deadline():
            pointer = await self._current(region)
            if pointer is None or "place_buckets" not in pointer:
                return {}
            key = places_key(account_id, pointer["place_buckets"])
            found = await self.store.leaderboards.chunks(region, pointer["build"], key, [0])
        row = next((r for r in found[0]["rows"] if r[0] == account_id), None) if found else None
        if row is None:
            return {}
        return {
            window: {
                "rank": rank,
                "ranked": pointer["windows"].get(window, {}).get("wn8_ranked", 0),
                "min_battles": LEADERBOARD_FLOORS[window],
                "through": pointer["through"],
            }
            for window, rank in zip(LEADERBOARD_WINDOWS, row[1:], strict=True)
            if rank is not None
        }
