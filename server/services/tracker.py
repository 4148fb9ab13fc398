"""The tracker: every tracked account visited once per UTC day, per tank, within the shared upstream budget.

Who is tracked (store/tracker.py holds them, apart from the hour-long profile cache): an account
from its first successful fetch — a live lookup (tracked until `--track-days` days after its last
lookup, default 90; every later lookup, cached or live, extends that) or membership of a cached clan
(until CLAN_TRACK_SECONDS after the clan refresh last listed it). Tracking stops when both have
passed, or at once when the upstream no longer knows the account; the account is then "parked"
and the pass stops visiting it until it is looked up again.

The daily pass: tracked accounts fall into SLICES slices by a stable hash of (region, account_id);
slice s of day D is due at D 00:00 UTC + s x 24 h / SLICES, so the day's work is spread evenly
and never bursts at midnight. Any process claims a due slice of today (a lease document per
(day, slice), renewed after every batch, taken over by another process once not renewed for
`claim_ttl` s), and visits the slice's accounts not yet visited today, 100 at a time: one
account/info request (with `fields`) per batch, and tanks/stats (with `fields`) only for accounts
whose last_battle_time moved since their last per-tank record. Right after a batch's writes its
accounts are marked visited today, so a process that takes over a dead one's slice continues with
the remaining accounts only. Every request goes through the UpstreamClient with caller="tracker"
(the shared budget's background priority: live lookups are served first).

Per account that played: a per-tank record (store/tanks.py: a keyframe on the first visit and
whenever the changes since the last keyframe outweigh it, at least every 30 records or 30 days;
else only the tanks that changed), WN8/WN7/efficiency recomputed from the fresh per-tank data, a
snapshot carrying them, and the cached profile (if any) refreshed. An account that did not play
costs 1/100 of a request and writes nothing but its visit mark; the history carries its last
snapshot forward over such days (server/services/players.py). The per-tank state of every day of the last
HISTORY_DAYS (400) stays rebuildable: a newest record that serves days long after its own (an
account idle for weeks or months) is rewritten in place as a keyframe with a later expiry base
(plan_visit), once when the account plays again after a gap and once a year while it stays idle.

Same-day rewrites: an account has at most one record per UTC day, and a change record is the diff
against the state as of the account's previous record DAY. A second write on one day (the pass, then
a live lookup after more battles; two lookups) finds the tracked `state` and bookkeeping already at
that day (record_day == day): diffing against them would make the replaced record a diff against
the earlier same-day state, and every rebuild drift until the next keyframe. Such a write takes its
base state and bookkeeping from TankRecords.prior (the newest record before the day, rebuilt from
its chain) instead (same_day_base), and replaces the day's record even when nothing changed against
that base: the records and state of one visit at the last write, the in-place keep included (prior's
kept_day is the keep's). Only those accounts cost the extra reads; the pass checks the same, though
it meets none unless a race undid the day's visit mark. A claimant's batch fetched again after its
writes but before its visit marks is no rewrite (record_day is still the previous day, the stored
state still its base): it writes the same records again. A write that lands between the pass's
read of its batch (Tracked.due) and its visit (a live lookup, a stalled claimant's marks) is seen:
the visit re-reads the tracked documents with their states (Tracked.books) after the upstream
answers, and diffs against those (a same-day rewrite when that write was today's).

Time travel: the tracker reads time only from `clock` and asks the upstream through whatever
client it is given, so tests and the demo seeder run months of passes in seconds with a
ManualClock and an upstream that answers "as of" that clock (server.compose.demo.TimeTravelUpstream).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from server.api.answers import Tag, no_answer_cache, player_tag
from server.api.config import TRACK_DAYS
from server.domain import ratings as rating_maths
from server.domain.days import DAY_SECONDS, day_start, days_before, utc_day
from server.domain.profiles import build_profile, snapshot_of, wtr_of
from server.upstream.client import ACCOUNT_FIELDS, ASSIST_AVERAGES, TANKS_FIELDS, UpstreamError
from store.client import job_deadline
from store.constants import HISTORY_DAYS, SPEND_KEYS, TANK_COUNTERS
from store.errors import is_database_error, storage_failure_reason
from store.population import TankChanges
from store.tanks import (
    KEYFRAME_MAX_DAYS,
    KEYFRAME_MAX_RECORDS,
    RETENTION_DAYS,
    TankRecords,
    TankState,
    changed,
    complete,
    pack,
    unpack,
)
from store.tracker import SLICES, slice_of, tracked_id
from store.writes import write_health

if TYPE_CHECKING:  # types only
    from server.services.expected import Ratings
    from server.upstream.interface import Upstream
    from store.store import Store

log = logging.getLogger("statsapi.tracker")

CLAN_TRACK_SECONDS = 2 * DAY_SECONDS  # clan refresh runs hourly: a member of a cached clan is re-listed long before
BATCH = 100  # account/info takes 100 ids per request
WTR_BATCH = 100  # account/wtr takes 100 ids per request
# The most a played account's WTR of the day waits for 99 others to fill a request (the pass spreads
# over the day: at 1,000 tracked accounts a batch holds a few dozen, and one request per batch cost as
# much as account/info); its profile shows the WTR it had until then.
WTR_WAIT = 3 * 3600.0
CLAIM_TTL = 60.0  # a claim not renewed for this long may be taken over
TICK = 5.0  # seconds between looks for due slices
BACKOFF_MAX = 60.0  # after failed ticks (the database away or unable to write): 5, 10, 20, 40, 60 s
MEMBERS_PER_STEP = 500  # clan members tracked per database step (~8 s on the embedded database)
STATUS_EVERY = 30.0  # seconds between /status figures read from the database
COUNT_EVERY = 300.0  # seconds between counts of the tracked accounts (an index range of every account)
TANKS_IN_FLIGHT = 4  # tanks/stats requests of one batch at once (the budget paces them anyway)
# Slices due at once (a process catching up, a small deployment, time travel) are claimed up to this
# many together and their accounts batched together, so a few accounts per slice do not cost one
# account/info request per slice and region.
GROUP = 8
DUE_BATCHES = 5  # due accounts read at once, in batches (of mixed regions: see full_batches)
# Keeping what the last HISTORY_DAYS need (see plan_visit). A record expires RETENTION_DAYS after
# its expiry base and must rebuild every day it serves (up to the next record's day) for HISTORY_DAYS
# after that day. The newest record's chain (its keyframe and the change records up to it) is kept
# from `kept_day` (the tracked account's field; the chain keyframe's day when absent):
# - an account that plays on day D while its newest record's chain is kept from before
#   D - KEEP_GAP days: that record is rewritten in place (same _id) as a keyframe of its unchanged
#   state with expiry base D, so the days it served up to D - 1 outlive D - 1 + HISTORY_DAYS;
# - an idle account whose newest chain is kept from before REKEY_DAYS ago: the same rewrite with
#   expiry base today (no request), so the pass has RETENTION_DAYS - REKEY_DAYS days to do it
#   before anything the newest record serves expires.
KEEP_GAP = RETENTION_DAYS - HISTORY_DAYS
REKEY_DAYS = RETENTION_DAYS - 2 * KEYFRAME_MAX_DAYS - 20


def due_at(day: str, slice_no: int) -> float:
    """When slice `slice_no` of `day` becomes due (spread evenly over the UTC day)."""
    return day_start(day) + slice_no * DAY_SECONDS / SLICES


def tank_state(raw_tanks: list[dict] | None) -> dict[int, list[int]]:
    """tanks/stats entries as {tank_id: counters in store.tanks.TANK_COUNTERS order} (tanks with battles)."""
    state: dict[int, list[int]] = {}
    for entry in raw_tanks or []:
        stats = entry.get("all") or {}
        if stats.get("battles"):
            state[int(entry["tank_id"])] = [int(stats.get(name) or 0) for name in TANK_COUNTERS]
    return state


def account_assist(info: dict | None) -> list[int] | None:
    """The account's assistance as store.constants.ACCOUNT_ASSIST ([battles, radio total, track
    total]) from account/info's statistics.all: the upstream gives spotting and tracking assistance
    only as per-battle averages rounded to 0.01, so each total is round(average x battles), within
    battles / 200 of the true total. None when the answer lacks them."""
    stats = ((info or {}).get("statistics") or {}).get("all") or {}
    battles, radio, track = (stats.get(name) for name in ("battles", *ASSIST_AVERAGES))
    if not isinstance(battles, int) or not isinstance(radio, (int, float)) or not isinstance(track, (int, float)):
        return None
    return [battles, round(radio * battles), round(track * battles)]


def raw_tanks_of(capture: dict) -> list[dict]:
    """A watcher's capture (store/sessions.py) as the tanks/stats entries it was taken from: the
    played tanks with their counters, mastery badges and best battles' XP, all the tracker reads of
    an answer."""
    badges = unpack(bytes(capture["m"])) if capture.get("m") else {}
    out = []
    for tank_id, row in sorted(unpack(bytes(capture["s"])).items()):
        badge = badges.get(tank_id) or [0]
        entry = {"tank_id": tank_id, "mark_of_mastery": badge[0], "all": dict(zip(TANK_COUNTERS, row))}
        if len(badge) > 1:
            entry["max_xp"] = badge[1]
        out.append(entry)
    return out


def mastery_of(raw_tanks: list[dict] | None) -> bytes:
    """Each played tank's mastery badge (tanks/stats mark_of_mastery, 1..4; 0 none) and its best
    battle's XP (max_xp), packed as rows of two counters (store.tanks.pack: a few bytes a tank;
    unpack gives {tank_id: [level, max_xp]}; a payload written before max_xp was kept has rows of
    the level alone). A tank with neither is left out."""
    out: dict[int, list[int]] = {}
    for entry in raw_tanks or []:
        level, best = entry.get("mark_of_mastery"), entry.get("max_xp")
        level = level if isinstance(level, int) and level > 0 else 0
        best = best if isinstance(best, int) and best > 0 else 0
        if (level or best) and (entry.get("all") or {}).get("battles"):
            out[int(entry["tank_id"])] = [level, best]
    return pack(out) if out else b""


def next_record(
    state: dict[int, list[int]], base: dict[int, list[int]] | None, book: dict, day: str, replace: bool = False
) -> tuple[bytes | None, bool, dict]:
    """(payload or None when nothing changed, keyframe?, the tracked fields of the keyframe policy).

    `replace`: a record of `day` exists and is replaced (a same-day rewrite: `base` and `book` are
    as of the day before), so a record is written even when nothing changed against `base`.

    A keyframe on the first record and when the changes since the last keyframe would outweigh a
    new one, or KEYFRAME_MAX_RECORDS records / KEYFRAME_MAX_DAYS days after it: a rebuild then
    reads at most KEYFRAME_MAX_RECORDS + 1 documents, and keyframes cost at most as much again as
    the changes they save.
    """
    change = None
    if base:
        rows = changed(state, base)
        if not rows and not replace:
            return None, False, {}
        change = pack(rows, base)
    keyframe_day = book.get("keyframe_day") or ""
    if (
        change is None
        # A base written before a counter existed: only a keyframe gives the unchanged tanks theirs.
        or not complete(base or {})
        or int(book.get("chain_records") or 0) + 1 >= KEYFRAME_MAX_RECORDS
        or keyframe_day < days_before(day, KEYFRAME_MAX_DAYS)
        or int(book.get("chain_bytes") or 0) + len(change) > int(book.get("keyframe_bytes") or 0)
    ):
        payload = pack(state)
        return (
            payload,
            True,
            {
                "keyframe_day": day,
                "keyframe_bytes": len(payload),
                "chain_records": 0,
                "chain_bytes": 0,
                "kept_day": day,
            },
        )
    return (
        change,
        False,
        {
            "chain_records": int(book.get("chain_records") or 0) + 1,
            "chain_bytes": int(book.get("chain_bytes") or 0) + len(change),
        },
    )


def kept_from(book: dict) -> str:
    """The day the newest record's chain is kept from (its earliest expiry base)."""
    return str(book.get("kept_day") or book.get("keyframe_day") or book.get("record_day") or "")


def rekey_due(book: dict, day: str) -> bool:
    """An idle account whose newest record must be kept again on `day` (its state is then needed)."""
    return bool(book.get("record_day")) and kept_from(book) < days_before(day, REKEY_DAYS)


def plan_visit(
    region: str,
    account_id: int,
    book: dict,
    base: dict[int, list[int]] | None,
    state: dict[int, list[int]] | None,
    day: str,
    replace: bool = False,
    assist: list[int] | None = None,
) -> tuple[list[dict], dict[str, Any]]:
    """The records a visit on `day` writes and the tracked fields it sets (the bookkeeping).

    `assist`: the account's assistance as measured with `state` (account_assist), kept with the
    new record and as the tracked `assist`; an in-place keep of the newest record keeps its own
    (book's `assist`).

    `book`: the tracked account; `base`: its stored state (as of its newest record, book's
    record_day; None before the first); `state`: the fresh per-tank state when the account played
    (last_battle_time moved), None when it did not. Besides the new record (next_record), the
    newest record is rewritten in place as a keyframe of `base` with expiry base `day` when its
    chain is kept from before KEEP_GAP days ago (the account played after a gap) or, for an idle
    account, REKEY_DAYS ago: what any of the last HISTORY_DAYS days needs is never expired.

    A same-day rewrite passes `book` and `base` from same_day_base (as of the day before) and
    `replace`; its fields then start from that book (see same_day_base).
    """
    records: list[dict] = []
    fields: dict[str, Any] = {}
    newest = book.get("record_day")
    gap = KEEP_GAP if state is not None else REKEY_DAYS
    if base is not None and newest and newest < day and kept_from(book) < days_before(day, gap):
        whole = pack(base)
        battles = sum(row[0] for row in base.values())
        records.append(
            TankRecords.record(region, account_id, newest, battles, whole, True, kept=day, assist=book.get("assist"))
        )
        fields.update(keyframe_day=newest, keyframe_bytes=len(whole), chain_records=0, chain_bytes=0, kept_day=day)
    if state is not None:
        payload, keyframe, policy = next_record(state, base, {**book, **fields}, day, replace)
        if payload is not None:
            battles = sum(row[0] for row in state.values())
            records.append(TankRecords.record(region, account_id, day, battles, payload, keyframe, assist=assist))
            fields.update(policy, record_day=day, state=pack(state), assist=assist)  # state: stored as BSON binary
    return records, fields


def day_change(
    region: str,
    account_id: int,
    base: dict[int, list[int]] | None,
    state: dict[int, list[int]] | None,
    day: str,
    replace: bool = False,
    base_assist: Sequence[int] | None = None,
    assist: Sequence[int] | None = None,
) -> dict | None:
    """The account-day's per-tank differences (store.population.TankChanges) from the same base and
    state as the day's record (plan_visit): None before the first record (no base: what was played
    before is unknown) and when nothing changed, unless `replace` (a same-day rewrite replaces the
    day's earlier document, so the account-day counts once, with its whole day).

    A base written before a counter existed gives rows without it (zip stops at the shorter), and
    the account's assistance change is kept only when both `base_assist` and `assist` are known."""
    if state is None or base is None:
        return None
    zero = [0] * len(TANK_COUNTERS)
    rows = {
        tank_id: [after - before for after, before in zip(row, base.get(tank_id) or zero)]
        for tank_id, row in changed(state, base).items()
    }
    if not rows and not replace:
        return None
    change = None
    if base_assist is not None and assist is not None and len(base_assist) == len(assist):
        change = [after - before for after, before in zip(assist, base_assist)]
    return TankChanges.change(region, account_id, day, rows, assist=change)


async def same_day_base(tanks: TankRecords, region: str, account_id: int, day: str) -> tuple[TankState | None, dict]:
    """The base state and bookkeeping of a same-day rewrite on `day`: as of the newest record before
    `day` (TankRecords.prior), or (None, {}) without one (the rewrite is then a keyframe). The
    returned book holds every bookkeeping field: the caller sets them all, since the tracked ones
    are the replaced write's."""
    found = await tanks.prior(region, account_id, day)
    if found is None:
        return None, {}
    return found


def full_batches(accounts: list[dict], batch: int, last: bool) -> dict[str, list[dict]]:
    """Due accounts (of mixed regions) by region, cut to whole batches of `batch`: a region's
    remainder stays unvisited (and unmarked) for the next due() read, where it fills a batch with
    the accounts read then, so account/info costs 1/batch of a request per account but for one
    partial batch per region at the end (`last`: these are all the due accounts, every one is
    visited). With at least one region holding a whole batch (by pigeonhole, when there are at most
    DUE_BATCHES regions), every read makes progress; otherwise the largest region goes whole."""
    by_region: dict[str, list[dict]] = {}
    for account in accounts:
        by_region.setdefault(account["region"], []).append(account)
    if last:
        return by_region
    whole = {region: group[: len(group) - len(group) % batch] for region, group in by_region.items()}
    whole = {region: group for region, group in whole.items() if group}
    if not whole:
        largest = max(by_region, key=lambda region: len(by_region[region]))
        whole = {largest: by_region[largest]}
    return whole


REALM_SPEND_KEYS = ("visited", "info_requests", "tanks_requests", "wtr_requests")


def realm_spend(region: str, counts: dict[str, int]) -> dict[str, int]:
    """A batch's figures under the slice document's per-realm keys (`regions.<realm>.<key>`)."""
    return {f"regions.{region}.{key}": counts.get(key, 0) for key in REALM_SPEND_KEYS}


def realm_progress(slices: list[dict], remaining: int, worked: float, done: bool) -> dict[str, dict]:
    """Today's pass per realm: visits and requests, and an estimate of what is left and when it
    ends. Accounts fall into slices by a stable hash, so each realm's share of today's visits
    stands for its share of what remains; the ETA divides that by the realm's own visit rate."""
    visited: dict[str, dict[str, int]] = {}
    for doc in slices:
        for realm, figures in (doc.get("regions") or {}).items():
            mine = visited.setdefault(realm, dict.fromkeys(REALM_SPEND_KEYS, 0))
            for key in REALM_SPEND_KEYS:
                mine[key] += int((figures or {}).get(key) or 0)
    total = sum(figures["visited"] for figures in visited.values())
    out = {}
    for realm in sorted(visited):
        figures = visited[realm]
        left = round(remaining * figures["visited"] / total) if total else 0
        eta: float | None = 0.0 if done or not left else None
        if eta is None and worked > 0 and figures["visited"]:
            eta = left / (figures["visited"] / worked)
        out[realm] = {
            "visited": figures["visited"],
            "requests": figures["info_requests"] + figures["tanks_requests"] + figures.get("wtr_requests", 0),
            "remaining_estimate": left,
            "eta_seconds": None if eta is None else round(eta),
        }
    return out


class CannotWrite(Exception):
    """The database cannot write now (store/writes.py): the pass stops before a batch's requests."""


class Tracker:
    def __init__(
        self,
        store: Store,
        upstream: Upstream,
        ratings_source: Ratings,
        *,
        clock: Callable[[], float] = time.time,
        owner: str | None = None,
        track_days: int = TRACK_DAYS,
        claim_ttl: float = CLAIM_TTL,
        batch: int = BATCH,
        tanks_in_flight: int = TANKS_IN_FLIGHT,
        group: int = GROUP,
        on_write: Callable[[Tag], None] | None = None,
    ) -> None:
        self.store = store
        self.on_write = on_write or no_answer_cache  # told of every account whose records it wrote (answer cache)
        self.upstream = upstream
        self.ratings_source = ratings_source
        self.clock = clock
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.track_days = track_days
        self.claim_ttl = claim_ttl
        self.batch = batch
        self.tanks_in_flight = tanks_in_flight
        self.group = group
        self.claimed: set[tuple[str, int]] = set()  # (day, slice) this process works on now
        self.spent: dict[str, dict[str, int]] = {}  # this process's figures by day (SPEND_KEYS)
        self._status: dict[str, Any] = {"enabled": True, "track_days": track_days, "slices": SLICES}
        self._status_at = -1e18
        self._tracked_count: tuple[float, int] = (-1e18, 0)
        self._last_cleanup = ""
        self.failed_ticks = 0  # consecutive ticks that failed (the back-off)
        # {(day, region): accounts that played, whose WTR of the day is not asked yet}, asked 100 at a
        # time across batches and ticks (flush_wtr), and when the first of them was queued.
        self.wtr_due: dict[tuple[str, str], list[int]] = {}
        self.wtr_since: dict[tuple[str, str], float] = {}
        self.waiting: str | None = None  # why the pass waits (the database cannot write), or None

    # --- who is tracked -------------------------------------------------------------------
    def lookup_until(self, now: float) -> float:
        return now + self.track_days * DAY_SECONDS

    async def looked_up(self, region: str, account_id: int, now: float) -> None:
        """A cached profile was read: keep tracking it `track_days` from now (no insert)."""
        await self.store.tracked.extend(region, account_id, self.lookup_until(now))

    async def adopt(self, region: str, account_id: int, info: dict, raw_tanks: list | None, now: float) -> None:
        """A live lookup fetched the account: track it, and let that fetch be today's visit
        (its per-tank record is written here, so the pass spends nothing more on it today)."""
        day = utc_day(now)
        existing = await self.store.tracked.get(region, account_id)
        book = existing or {}
        fields: dict[str, Any] = {"last_visit_day": day, "last_battle_time": info.get("last_battle_time")}
        state = tank_state(raw_tanks)
        base = None
        same_day = book.get("record_day") == day  # a second write today (see the module docstring)
        if same_day:
            base, book = await same_day_base(self.store.tanks, region, account_id, day)
            fields.update(book)
        elif existing and existing.get("record_day"):
            base = unpack(
                (await self.store.tracked.states([tracked_id(region, account_id)])).get(tracked_id(region, account_id))
            )
        assist = account_assist(info)
        records, planned = plan_visit(region, account_id, book, base, state, day, replace=same_day, assist=assist)
        if records:
            await self.store.tanks.save(records)
        change = day_change(
            region, account_id, base, state, day, replace=same_day, base_assist=book.get("assist"), assist=assist
        )
        if change is not None:
            await self.store.population.changes.save([change])
        fields.update(planned, mastery=mastery_of(raw_tanks), clan_id=info.get("clan_id"))
        await self.store.tracked.track(
            region, account_id, info.get("nickname"), self.lookup_until(now), now, extra=fields
        )

    async def track_members(self, region: str, members: list[tuple[int, str | None]], now: float) -> None:
        """Members of a cached clan the clan refresh just fetched: tracked while the clan stays cached.

        A step of its own per MEMBERS_PER_STEP accounts: a batch of 100 clans holds ~5,000 members,
        whose nickname-prefix upkeep alone took 65 s on the embedded database (bench_throttle),
        twice one job step's deadline."""
        failure: Exception | None = None
        for start in range(0, len(members), MEMBERS_PER_STEP):
            try:
                with job_deadline():
                    await self.store.tracked.track_many(
                        region, members[start : start + MEMBERS_PER_STEP], now + CLAN_TRACK_SECONDS, now
                    )
            except Exception as exc:
                if not is_database_error(exc):
                    raise
                # A step that ran out of its deadline on a loaded database: the later steps are
                # still tried (each is a replacement: the next refresh repeats the failed one).
                failure = exc
        if failure is not None:
            raise failure

    # --- the pass ---------------------------------------------------------------------------
    def cannot_write(self) -> str | None:
        """Why the database cannot write now (store/writes.py), or None; logged once per spell."""
        error = write_health(getattr(self.store, "client", None)).error()
        reason = None if error is None else str(error["reason"])
        if (reason is None) != (self.waiting is None):
            if reason is not None:
                log.warning("tracker waits: the database cannot write (%s)", reason)
            else:
                log.warning("tracker resumes: the database writes again")
        self.waiting = reason
        return reason

    async def run(self, stop: asyncio.Event) -> None:
        """Every process runs this: claim due slices and work them until `stop`.

        While the database cannot write, no slice is claimed or worked (each batch would fetch
        from the upstream and then fail to store); a failed tick (the database or the upstream
        away) waits 5, 10, 20, 40, then 60 s before the next, logged once per streak. A batch
        cut off by a failed write is not marked visited, so it is visited again."""
        while not stop.is_set():
            delay = TICK
            try:
                if self.cannot_write() is not None:  # wait, looking again every TICK (no back-off)
                    self.failed_ticks = 0
                    await write_health(getattr(self.store, "client", None)).probe(self.store.db)
                else:
                    await self.tick()
                    await self.refresh_status()
                    self.failed_ticks = 0
            except Exception as exc:  # the database or the upstream is away: try again later
                if self.failed_ticks == 0 or not is_database_error(exc):
                    reason = storage_failure_reason(exc)
                    log.warning("tracker tick failed: %s%s", type(exc).__name__, f" ({reason})" if reason else "")
                delay = min(BACKOFF_MAX, TICK * 2**self.failed_ticks)
                self.failed_ticks += 1
            try:
                await asyncio.wait_for(stop.wait(), delay)
            except TimeoutError:
                pass

    async def tick(self) -> int:
        """Work every due, unfinished, unclaimed slice of today; returns how many were finished here."""
        now = self.clock()
        day = utc_day(now)
        if self._last_cleanup != day:
            await self.store.tracked.forget_slices_before(days_before(day, 7))
            self._last_cleanup = day
        finished = await self.store.tracked.finished_slices(day)
        due = [s for s in range(SLICES) if s not in finished and due_at(day, s) <= self.clock()]
        done = 0
        for start in range(0, len(due), self.group):
            done += await self.work_slices(day, due[start : start + self.group])
        # The WTR of accounts still waiting for a full request: asked once they waited WTR_WAIT, the
        # day's pass is done here, or the day is over.
        day_done = len(finished) + done >= SLICES
        for queued_day, region in list(self.wtr_due):
            waited = self.clock() - self.wtr_since.get((queued_day, region), self.clock())
            whole = queued_day != day or day_done or waited >= WTR_WAIT
            await self.flush_wtr(queued_day, region, whole=whole)
        return done

    async def work_slice(self, day: str, slice_no: int) -> bool:
        """Claim (day, slice) and visit its remaining accounts; True when this process finished it."""
        return await self.work_slices(day, [slice_no]) == 1

    async def work_slices(self, day: str, wanted: list[int]) -> int:
        """Claim what it can of `wanted` slices of `day` and visit their remaining accounts together;
        returns how many of them this process finished."""
        tracked = self.store.tracked
        mine = []
        for slice_no in wanted:
            if await tracked.claim(day, slice_no, self.owner, self.clock(), self.claim_ttl, due_at(day, slice_no)):
                mine.append(slice_no)
                self.claimed.add((day, slice_no))
        if not mine:
            return 0
        renewed = self.clock()
        try:
            while True:
                if self.cannot_write() is not None:
                    raise CannotWrite(self.waiting)
                if utc_day(self.clock()) != day:
                    for slice_no in mine:  # the rest waits for the new day's pass
                        await tracked.release(day, slice_no, self.owner)
                    return 0
                accounts = await tracked.due(mine, day, self.batch * DUE_BATCHES)
                if not accounts:
                    finished = 0
                    for slice_no in mine:
                        finished += await tracked.finish(day, slice_no, self.owner, self.clock())
                    return finished
                by_region = full_batches(accounts, self.batch, last=len(accounts) < self.batch * DUE_BATCHES)
                for region, group in by_region.items():
                    for start in range(0, len(group), self.batch):
                        if self.cannot_write() is not None:  # before the batch's upstream requests
                            raise CannotWrite(self.waiting)
                        counts = await self.visit(day, region, group[start : start + self.batch])
                        await self.flush_wtr(day, region, whole=False)
                        # A group's figures on its first slice, and per realm (its progress in /status).
                        await tracked.add_spend(day, mine[0], {**counts, **realm_spend(region, counts)})
                        self._add_spent(day, counts)
                        await self.refresh_status()  # at most every STATUS_EVERY s, also during long work
                        # Renew a third of the ttl after the last renewal (checked after every batch);
                        # a claim lost meanwhile (taken over after a stall) stops the work here.
                        if self.clock() - renewed >= self.claim_ttl / 3:
                            renewed = self.clock()
                            for slice_no in mine:
                                if not await tracked.claim(
                                    day, slice_no, self.owner, renewed, self.claim_ttl, due_at(day, slice_no)
                                ):
                                    return 0
        except UpstreamError as exc:
            log.info("tracker slices %s/%s paused: %s", day, mine, exc)
            for slice_no in mine:
                await tracked.release(day, slice_no, self.owner)
            return 0
        except CannotWrite:
            # Released if the database still takes that write; else the claim expires (claim_ttl).
            with contextlib.suppress(Exception):
                for slice_no in mine:
                    await tracked.release(day, slice_no, self.owner)
            return 0
        finally:
            for slice_no in mine:
                self.claimed.discard((day, slice_no))

    async def visit(self, day: str, region: str, accounts: list[dict]) -> dict[str, int]:
        """Visit up to 100 tracked accounts of one region; returns the batch's figures (SPEND_KEYS)."""
        now = self.clock()
        counts = dict.fromkeys(SPEND_KEYS, 0)
        ended = [tracked_id(region, a["account_id"]) for a in accounts if float(a.get("until") or 0) < now]
        current = [a for a in accounts if float(a.get("until") or 0) >= now]
        if ended:
            await self.store.tracked.park(ended, now)
        if not current:
            return counts
        infos = await self.upstream.account_info(
            region, [a["account_id"] for a in current], fields=ACCOUNT_FIELDS, caller="tracker"
        )
        counts["info_requests"] += 1
        gone, idle, played, rekey = [], [], [], []
        for account in current:
            info = infos.get(account["account_id"])
            if not info:
                gone.append(tracked_id(region, account["account_id"]))
            elif not account.get("record_day") or info.get("last_battle_time") != account.get("last_battle_time"):
                played.append((account, info))
            elif rekey_due(account, day):
                rekey.append(account)
            else:
                idle.append(tracked_id(region, account["account_id"]))
        if gone:
            await self.store.tracked.park(gone, now)
        # The tracked documents as they are now (one read, with the stored states): a live lookup
        # may have written an account since `due` read it. A same-day rewrite (record_day is today:
        # see the module docstring) reads its base from the records; every other account that
        # played, or is rekeyed, diffs against its stored state and bookkeeping.
        keys = [tracked_id(region, a["account_id"]) for a, _ in played] + [
            tracked_id(region, a["account_id"]) for a in rekey
        ]
        books = await self.store.tracked.books(keys) if keys else {}
        states = {key: doc["state"] for key, doc in books.items() if "state" in doc}
        rewrites = [
            a["account_id"]
            for a, _ in played
            if books.get(tracked_id(region, a["account_id"]), a).get("record_day") == day
        ]
        bases = dict(
            zip(rewrites, await asyncio.gather(*(same_day_base(self.store.tanks, region, a, day) for a in rewrites)))
        )
        gate = asyncio.Semaphore(self.tanks_in_flight)

        async def tanks_of(account_id: int) -> list | None:
            async with gate:
                return await self.upstream.tanks_stats(region, account_id, fields=TANKS_FIELDS, caller="tracker")

        # An account a session watches and the watcher measured since its last battle: its newest
        # capture is what tanks/stats would answer now (one request instead of two).
        captured = await self.store.watched.latest_of(region, [a["account_id"] for a, _ in played]) if played else {}
        reused = {
            a["account_id"]: raw_tanks_of(captured[a["account_id"]])
            for a, info in played
            if a["account_id"] in captured
            and captured[a["account_id"]].get("lbt") == info.get("last_battle_time")
            and "m" in captured[a["account_id"]]
        }

        async def answer_of(account_id: int) -> list | None:
            return reused[account_id] if account_id in reused else await tanks_of(account_id)

        raw = await asyncio.gather(*(answer_of(a["account_id"]) for a, _ in played))
        counts["tanks_requests"] += len(played) - len(reused)

        expected = await self.ratings_source.expected_values(region) if played else None
        tiers = await self.ratings_source.tiers(region) if expected is not None else {}
        records, snapshots, profiles, marks = [], [], {}, {}
        changes: list[dict] = []
        for (account, info), raw_tanks in zip(played, raw):
            key = tracked_id(region, account["account_id"])
            if raw_tanks is None:
                gone.append(key)
                continue
            state = tank_state(raw_tanks)
            fields: dict[str, Any] = {"last_visit_day": day, "last_battle_time": info.get("last_battle_time")}
            if account["account_id"] in bases:
                base, book = bases[account["account_id"]]
                fields.update(book)
            else:
                book = {k: v for k, v in books.get(key, account).items() if k != "state"}
                base = unpack(states.get(key)) if book.get("record_day") and key in states else None
            assist = account_assist(info)
            rewrite = account["account_id"] in bases
            planned, set_fields = plan_visit(
                region, account["account_id"], book, base, state, day, replace=rewrite, assist=assist
            )
            self._count_records(counts, planned)
            records += planned
            change = day_change(
                region,
                account["account_id"],
                base,
                state,
                day,
                replace=rewrite,
                base_assist=book.get("assist"),
                assist=assist,
            )
            if change is not None:
                changes.append(change)
            fields.update(set_fields, mastery=mastery_of(raw_tanks), clan_id=info.get("clan_id"))
            nickname = info.get("nickname")
            if nickname:
                fields.update(nickname=nickname, nickname_lower=nickname.lower())
            marks[key] = fields
            # Its WTR of the day comes with flush_wtr: the profile keeps the one it has until then.
            doc = build_profile(region, account["account_id"], info, raw_tanks, now)
            del doc["wtr"], doc["wtr_reason"]
            if expected is not None:
                doc["ratings"] = rating_maths.compute_ratings(doc["totals"], doc["tanks"], expected, tiers)
                doc["ratings"]["calculated_at"] = int(now)
            snapshots.append(snapshot_of(doc))
            profiles[account["account_id"]] = doc
            self.wtr_due.setdefault((day, region), []).append(account["account_id"])
            self.wtr_since.setdefault((day, region), now)
        for account in rekey:  # idle for long: the newest record is kept (rewritten in place)
            key = tracked_id(region, account["account_id"])
            if key not in states:
                idle.append(key)
                continue
            book = {k: v for k, v in books.get(key, account).items() if k != "state"}
            planned, set_fields = plan_visit(region, account["account_id"], book, unpack(states[key]), None, day)
            self._count_records(counts, planned)
            records += planned
            marks[key] = {"last_visit_day": day, **set_fields}
        with job_deadline():  # the batch's writes: one job step
            if records:
                counts["records"] += await self.store.tanks.save(records)
            if changes:
                await self.store.population.changes.save(changes)
            if snapshots:
                await self.store.players.save_snapshots(snapshots)
            if profiles:
                await self._refresh_cached_profiles(region, profiles)
            if gone:
                await self.store.tracked.park(gone, now)
            # Visit marks last: an interrupted batch is visited again by whoever takes the slice over
            # (its record and snapshot writes are replacements, so nothing is stored twice).
            await self.store.tracked.mark_visited(marks)
            for key in marks:
                self.on_write(player_tag(region, int(key.rsplit(":", 1)[1])))
            if idle:
                await self.store.tracked.mark_days(idle, day)
        counts["visited"] += len(current)
        return counts

    async def flush_wtr(self, day: str, region: str, whole: bool) -> int:
        """Ask account/wtr for the accounts of `region` that played on `day` and have no WTR of the day
        yet, WTR_BATCH at a time (all of them when `whole`, else only full requests), and store it:
        the day's snapshot, the tracked account (the leaderboards' WTR) and a cached profile. A failed
        request leaves the day's WTR null (a profile without one says upstream_failed), never the pass.
        Each request counts in the figures of its first account's slice. Returns the requests sent."""
        due = self.wtr_due.get((day, region), [])
        sent = 0
        while len(due) >= WTR_BATCH or (whole and due):
            ids = list(dict.fromkeys(due[:WTR_BATCH]))
            try:
                found: dict[int, int | None] | None = await self.upstream.account_wtr(region, ids, caller="tracker")
            except UpstreamError as exc:
                log.warning("tracker: account/wtr of %s accounts in %s failed: %s", len(ids), region, exc)
                found = None
            sent += 1
            asked = {"wtr_requests": 1}
            with job_deadline():
                await self.store.tracked.add_spend(
                    day, slice_of(region, ids[0]), {**asked, **realm_spend(region, asked)}
                )
                self._add_spent(day, asked)
                await self.store.players.set_wtr(region, day, {a: wtr_of(found, a) for a in ids}, found)
                if found is not None:
                    await self.store.tracked.mark_visited({tracked_id(region, a): {"wtr": found.get(a)} for a in ids})
            del due[:WTR_BATCH]
        if not due:
            self.wtr_due.pop((day, region), None)
            self.wtr_since.pop((day, region), None)
        return sent

    @staticmethod
    def _count_records(counts: dict[str, int], records: list[dict]) -> None:
        for doc in records:
            counts["record_bytes"] += len(doc["t"])
            counts["keyframes"] += int(bool(doc.get("k")))

    async def _refresh_cached_profiles(self, region: str, profiles: dict[int, dict]) -> None:
        """Profiles someone has cached get the fresh data and ratings (no profile is created here)."""
        cached = await self.store.players.get_many(region, list(profiles), {"account_id": 1})
        for doc in cached:
            await self.store.players.save(profiles[doc["account_id"]])

    # --- figures ------------------------------------------------------------------------------
    def _add_spent(self, day: str, counts: dict[str, int]) -> None:
        mine = self.spent.setdefault(day, dict.fromkeys(SPEND_KEYS, 0))
        for key, value in counts.items():
            mine[key] = mine.get(key, 0) + value
        for old in [d for d in self.spent if d < days_before(day, 2)]:
            del self.spent[old]

    async def refresh_status(self, force: bool = False) -> dict[str, Any]:
        """Today's figures of the whole pass (every process), read at most every STATUS_EVERY s."""
        if not force and time.monotonic() - self._status_at < STATUS_EVERY:
            return self._status
        self._status_at = time.monotonic()
        now = self.clock()
        day = utc_day(now)
        slices = await self.store.tracked.day_slices(day)
        if time.monotonic() - self._tracked_count[0] >= COUNT_EVERY:
            self._tracked_count = (time.monotonic(), await self.store.tracked.count_active(now))
        tracked = self._tracked_count[1]
        totals = dict.fromkeys(SPEND_KEYS, 0)
        worked = 0.0
        for doc in slices:
            for key in SPEND_KEYS:
                totals[key] += int(doc.get(key) or 0)
            if doc.get("finished"):
                worked += max(0.0, float(doc["finished"]) - float(doc.get("started") or doc["finished"]))
        finished = [doc["slice"] for doc in slices if doc.get("finished")]
        remaining = max(0, tracked - totals["visited"])
        unfinished_due = [due_at(day, s) for s in range(SLICES) if s not in finished]
        eta = None
        if not unfinished_due:
            eta = 0.0
        elif worked > 0 and totals["visited"]:
            eta = max(max(unfinished_due) - now, remaining / (totals["visited"] / worked))
        by_realm = realm_progress(slices, remaining, worked, done=not unfinished_due)
        self._status = {
            "enabled": True,
            "track_days": self.track_days,
            "slices": SLICES,
            "tracked": tracked,
            "today": {
                "day": day,
                "visited": totals["visited"],
                "total": max(tracked, totals["visited"]),
                "slices_finished": len(finished),
                "eta_seconds": None if eta is None else round(max(0.0, eta)),
                "requests": {
                    "account_info": totals["info_requests"],
                    "tanks_stats": totals["tanks_requests"],
                    "account_wtr": totals["wtr_requests"],
                },
                "records": totals["records"],
                "record_bytes": totals["record_bytes"],
                "by_realm": by_realm,
            },
            "this_process": {
                "slices_claimed": sorted(s for d, s in self.claimed if d == day),
                "spent_today": self.spent.get(day, dict.fromkeys(SPEND_KEYS, 0)),
            },
        }
        return self._status

    def status(self) -> dict[str, Any]:
        status = dict(self._status)
        status["this_process"] = {
            "slices_claimed": sorted(s for _, s in self.claimed),
            "spent_today": self.spent.get(utc_day(self.clock()), dict.fromkeys(SPEND_KEYS, 0)),
        }
        return status
