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
`claim_ttl` s), and visits the slice's accounts not yet visited today, 100 at a time (each
realm's batches in turn, the realms at once: each has its own throttle upstream): one
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
import dataclasses
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from server.contract.config import TRACK_DAYS
from server.domain.days import DAY_SECONDS, day_start, days_before, utc_day
from server.domain.profiles import snapshot_of, wtr_of
from server.domain.records import TankState, unpack
from server.domain.visits import (
    day_progress,
    full_batches,
    measured_profile,
    nickname_fields,
    raw_tanks_of,
    realm_spend,
)
from server.domain.visits import mastery_of as mastery_of  # re-exported (scripts/scale_loader.py, tests)
from server.domain.visits import tank_state as tank_state  # re-exported (scripts/scale_loader.py, tests)
from server.services.visit_plan import account_assist as account_assist
from server.services.visit_plan import day_change as day_change
from server.services.visit_plan import plan_account, plan_visit, rekey_due, same_day_base
from server.serving.answers import Tag, no_answer_cache, player_tag
from server.upstream.client import ACCOUNT_FIELDS, TANKS_FIELDS, UpstreamError
from store.client import REQUEST_DEADLINE_S, job_deadline
from store.constants import SPEND_KEYS
from store.errors import is_database_error, storage_failure_reason
from store.tracker import SLICES, slice_of, tracked_id
from store.writes import write_health

if TYPE_CHECKING:  # types only
    from server.domain.ratings import ExpectedValues
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


def due_at(day: str, slice_no: int) -> float:
    """When slice `slice_no` of `day` becomes due (spread evenly over the UTC day)."""
    return day_start(day) + slice_no * DAY_SECONDS / SLICES


@dataclasses.dataclass
class _Batch:
    """One batch's visit (Tracker.visit): the accounts by what they need, the tracked documents
    re-read, and what its steps plan to write."""

    day: str
    region: str
    now: float
    counts: dict[str, int]
    played: list[tuple[dict, dict]] = dataclasses.field(default_factory=list)  # (tracked, account/info)
    rekey: list[dict] = dataclasses.field(default_factory=list)  # idle, the newest record to keep
    gone: list[str] = dataclasses.field(default_factory=list)  # unknown upstream: parked
    idle: list[str] = dataclasses.field(default_factory=list)  # marked visited, nothing written
    books: dict[str, dict] = dataclasses.field(default_factory=dict)  # Tracked.books, stored states
    states: dict[str, bytes] = dataclasses.field(default_factory=dict)
    bases: dict[int, tuple[TankState | None, dict]] = dataclasses.field(default_factory=dict)  # same_day_base
    records: list[dict] = dataclasses.field(default_factory=list)
    changes: list[dict] = dataclasses.field(default_factory=list)
    snapshots: list[dict] = dataclasses.field(default_factory=list)
    profiles: dict[int, dict] = dataclasses.field(default_factory=dict)
    marks: dict[str, dict] = dataclasses.field(default_factory=dict)

    def key(self, account: dict) -> str:
        return tracked_id(self.region, account["account_id"])

    def book(self, account: dict) -> dict:
        """The account's bookkeeping as re-read (the due() read's when not), without its state."""
        return {k: v for k, v in self.books.get(self.key(account), account).items() if k != "state"}

    def sort(self, current: list[dict], infos: dict) -> None:
        """The accounts by account/info's answer: gone, played (new last_battle_time, or no record
        yet), idle with their newest record to keep (rekey_due), or idle."""
        for account in current:
            info = infos.get(account["account_id"])
            if not info:
                self.gone.append(self.key(account))
            elif not account.get("record_day") or info.get("last_battle_time") != account.get("last_battle_time"):
                self.played.append((account, info))
            elif rekey_due(account, self.day):
                self.rekey.append(account)
            else:
                self.idle.append(self.key(account))


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
        # The adoptions live lookups began (adopt_later, beside their answer), by account, until written.
        self._adoptions: dict[tuple[str, int], asyncio.Task] = {}

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
        base = None
        same_day = book.get("record_day") == day  # a second write today (see the module docstring)
        if same_day:
            base, book = await same_day_base(self.store.tanks, region, account_id, day)
            fields.update(book)
        elif existing and existing.get("record_day"):
            key = tracked_id(region, account_id)
            base = unpack((await self.store.tracked.states([key])).get(key))
        records, change, planned = plan_account(region, account_id, info, raw_tanks, book, base, day, same_day)
        if records:
            await self.store.tanks.save(records)
        if change is not None:
            await self.store.population.changes.save([change])
        fields.update(planned)
        await self.store.tracked.track(
            region, account_id, info.get("nickname"), self.lookup_until(now), now, extra=fields
        )

    def adopt_later(self, region: str, account_id: int, info: dict, raw_tanks: list | None, now: float) -> None:
        """adopt in the background: a live lookup's answer never waits for it (adopted does)."""
        key = (region, account_id)
        self._adoptions[key] = adoption = asyncio.create_task(self.adopt(region, account_id, info, raw_tanks, now))
        adoption.add_done_callback(lambda task: self._adoption_done(key, task))

    def _adoption_done(self, key: tuple[str, int], task: asyncio.Task) -> None:
        if self._adoptions.get(key) is task:
            del self._adoptions[key]
        if not task.cancelled() and task.exception() is not None:
            log.warning("background write failed: %s", type(task.exception()).__name__)

    async def adopted(self, region: str, account_id: int) -> None:
        """Returns once the adoption a live lookup of the account began has written its first per-tank
        record (at once when none is being written), waiting at most REQUEST_DEADLINE_S: a session
        asked of an account the service held nothing of starts from that record."""
        adoption = self._adoptions.get((region, account_id))
        if adoption is not None:
            await asyncio.wait({adoption}, timeout=REQUEST_DEADLINE_S)  # never cancels the write

    async def close(self) -> None:
        """Shutdown: the adoptions under way finish (within 5 s)."""
        if self._adoptions:
            await asyncio.wait(list(self._adoptions.values()), timeout=5)

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
        mine = await tracked.claim_many(
            day, {s: due_at(day, s) for s in wanted}, self.owner, self.clock(), self.claim_ttl
        )
        self.claimed.update((day, slice_no) for slice_no in mine)
        if not mine:
            return 0
        renewal = {"at": self.clock()}  # the claims' last renewal (shared by the realms' work)
        try:
            while True:
                if self.cannot_write() is not None:
                    raise CannotWrite(self.waiting)
                if utc_day(self.clock()) != day:  # the rest waits for the new day's pass
                    await tracked.release_many(day, mine, self.owner)
                    return 0
                accounts = await tracked.due(mine, day, self.batch * DUE_BATCHES)
                if not accounts:
                    return await tracked.finish_many(day, mine, self.owner, self.clock())
                last = len(accounts) < self.batch * DUE_BATCHES  # every due account, so each batch is visited
                by_region = full_batches(accounts, self.batch, last=last)

                async def work_realm(region: str, group: list[dict]) -> bool:
                    """The realm's batches in turn; False once a claim is lost."""
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
                        if self.clock() - renewal["at"] >= self.claim_ttl / 3:
                            renewal["at"] = self.clock()
                            renewed = await tracked.claim_many(
                                day, {s: due_at(day, s) for s in mine}, self.owner, renewal["at"], self.claim_ttl
                            )
                            if len(renewed) < len(mine):
                                return False
                    return True

                # The realms at once: each has its own upstream throttle (the CDN's, per address and
                # realm), so one realm's requests wait on its own limit, not behind another realm's
                # batch. A realm's error is raised once the other realms are through their batches
                # (none is cut off by it; a batch not marked visited is visited again).
                outcomes = await asyncio.gather(
                    *(work_realm(region, group) for region, group in by_region.items()), return_exceptions=True
                )
                for outcome in outcomes:
                    if isinstance(outcome, BaseException):
                        raise outcome
                if not all(outcomes):
                    return 0
                if last:
                    # Each due account was visited and marked: no read to find none left (64 reads
                    # of ~5 ms on the embedded database). One tracked meanwhile into a slice of
                    # these is first visited by the next day's pass, as one tracked after any read.
                    return await tracked.finish_many(day, mine, self.owner, self.clock())
        except UpstreamError as exc:
            log.info("tracker slices %s/%s paused: %s", day, mine, exc)
            await tracked.release_many(day, mine, self.owner)
            return 0
        except CannotWrite:
            # Released if the database still takes that write; else the claim expires (claim_ttl).
            with contextlib.suppress(Exception):
                await tracked.release_many(day, mine, self.owner)
            return 0
        finally:
            for slice_no in mine:
                self.claimed.discard((day, slice_no))

    async def visit(self, day: str, region: str, accounts: list[dict]) -> dict[str, int]:
        """Visit up to 100 tracked accounts of one region; returns the batch's figures (SPEND_KEYS)."""
        now = self.clock()
        batch = _Batch(day, region, now, dict.fromkeys(SPEND_KEYS, 0))
        ended = [tracked_id(region, a["account_id"]) for a in accounts if float(a.get("until") or 0) < now]
        current = [a for a in accounts if float(a.get("until") or 0) >= now]
        if ended:
            await self.store.tracked.park(ended, now)
        if not current:
            return batch.counts
        infos = await self.upstream.account_info(
            region, [a["account_id"] for a in current], fields=ACCOUNT_FIELDS, caller="tracker"
        )
        batch.counts["info_requests"] += 1
        batch.sort(current, infos)
        if batch.gone:
            await self.store.tracked.park(batch.gone, now)
        await self._reread(batch)
        raw = await self._tank_answers(batch)
        expected = await self.ratings_source.expected_values(region) if batch.played else None
        tiers = await self.ratings_source.tiers(region) if expected is not None else {}
        for (account, info), raw_tanks in zip(batch.played, raw):
            self._plan_played(batch, account, info, raw_tanks, expected, tiers)
        for account in batch.rekey:
            self._plan_rekey(batch, account)
        await self._write_batch(batch)
        batch.counts["visited"] += len(current)
        return batch.counts

    async def _reread(self, batch: _Batch) -> None:
        """The tracked documents as they are now (one read, with the stored states): a live lookup
        may have written an account since `due` read it. A same-day rewrite (record_day is today:
        see the module docstring) reads its base from the records; every other account that played,
        or is rekeyed, diffs against its stored state and bookkeeping."""
        keys = [batch.key(a) for a, _ in batch.played] + [batch.key(a) for a in batch.rekey]
        batch.books = await self.store.tracked.books(keys) if keys else {}
        batch.states = {key: doc["state"] for key, doc in batch.books.items() if "state" in doc}
        rewrites = [a["account_id"] for a, _ in batch.played if batch.book(a).get("record_day") == batch.day]
        found = await asyncio.gather(*(same_day_base(self.store.tanks, batch.region, a, batch.day) for a in rewrites))
        batch.bases = dict(zip(rewrites, found))

    async def _tank_answers(self, batch: _Batch) -> list[list | None]:
        """tanks/stats of each account that played, TANKS_IN_FLIGHT at once. An account a session
        watches and the watcher measured since its last battle: its newest capture is what
        tanks/stats would answer now (one request instead of two)."""
        region, played = batch.region, batch.played
        captured = await self.store.watched.latest_of(region, [a["account_id"] for a, _ in played]) if played else {}
        reused = {
            a["account_id"]: raw_tanks_of(captured[a["account_id"]])
            for a, info in played
            if a["account_id"] in captured
            and captured[a["account_id"]].get("lbt") == info.get("last_battle_time")
            and "m" in captured[a["account_id"]]
        }
        gate = asyncio.Semaphore(self.tanks_in_flight)

        async def answer_of(account_id: int) -> list | None:
            if account_id in reused:
                return reused[account_id]
            async with gate:
                return await self.upstream.tanks_stats(region, account_id, fields=TANKS_FIELDS, caller="tracker")

        raw = await asyncio.gather(*(answer_of(a["account_id"]) for a, _ in played))
        batch.counts["tanks_requests"] += len(played) - len(reused)
        return list(raw)

    def _plan_played(
        self,
        batch: _Batch,
        account: dict,
        info: dict,
        raw_tanks: list | None,
        expected: ExpectedValues | None,
        tiers: Mapping[int, int],
    ) -> None:
        """An account that played: its records, change, visit marks, snapshot and measured profile;
        its WTR of the day is queued (flush_wtr). Parked when tanks/stats knows it no more."""
        account_id, key = account["account_id"], batch.key(account)
        if raw_tanks is None:
            batch.gone.append(key)
            return
        fields: dict[str, Any] = {"last_visit_day": batch.day, "last_battle_time": info.get("last_battle_time")}
        rewrite = account_id in batch.bases
        if rewrite:
            base, book = batch.bases[account_id]
            fields.update(book)
        else:
            book = batch.book(account)
            base = unpack(batch.states.get(key)) if book.get("record_day") and key in batch.states else None
        records, change, planned = plan_account(
            batch.region, account_id, info, raw_tanks, book, base, batch.day, rewrite, bool(account.get("panel_only"))
        )
        self._count_records(batch.counts, records)
        batch.records += records
        if change is not None:
            batch.changes.append(change)
        fields.update(planned)
        if not account.get("panel_only"):  # nobody looked a panel-only member up: not searchable here
            fields.update(nickname_fields(info))
        batch.marks[key] = fields
        doc = measured_profile(batch.region, account_id, info, raw_tanks, batch.now, expected, tiers)
        batch.snapshots.append(snapshot_of(doc))
        batch.profiles[account_id] = doc
        if account.get("panel_only"):
            return  # its WTR would serve no figure (no profile, no leaderboard): not asked
        self.wtr_due.setdefault((batch.day, batch.region), []).append(account_id)
        self.wtr_since.setdefault((batch.day, batch.region), batch.now)

    def _plan_rekey(self, batch: _Batch, account: dict) -> None:
        """Idle for long: the newest record is kept (rewritten in place); without a stored state, idle."""
        key = batch.key(account)
        if key not in batch.states:
            batch.idle.append(key)
            return
        records, fields = plan_visit(
            batch.region, account["account_id"], batch.book(account), unpack(batch.states[key]), None, batch.day
        )
        self._count_records(batch.counts, records)
        batch.records += records
        batch.marks[key] = {"last_visit_day": batch.day, **fields}

    async def _write_batch(self, batch: _Batch) -> None:
        """The batch's writes, one job step; visit marks last: an interrupted batch is visited again
        by whoever takes the slice over (its record and snapshot writes are replacements, so
        nothing is stored twice)."""
        with job_deadline():
            if batch.records:
                batch.counts["records"] += await self.store.tanks.save(batch.records)
            if batch.changes:
                await self.store.population.changes.save(batch.changes)
            if batch.snapshots:
                await self.store.players.save_snapshots(batch.snapshots)
            if batch.profiles:
                await self._refresh_cached_profiles(batch.region, batch.profiles)
            if batch.gone:
                await self.store.tracked.park(batch.gone, batch.now)
            await self.store.tracked.mark_visited(batch.marks, sync_nicknames=False)
            for key in batch.marks:
                self.on_write(player_tag(batch.region, int(key.rsplit(":", 1)[1])))
            if batch.idle:
                await self.store.tracked.mark_days(batch.idle, batch.day)
        # The search's nicknames (a cache) after the batch's step, each command a step of its own:
        # 100 accounts' first visit tell it ~1,400 prefixes, too many for one shared deadline on a
        # loaded machine. An interruption leaves them to the next visit (nick_indexed is set last).
        await self.store.tracked.sync_nicknames([key for key, fields in batch.marks.items() if "nickname" in fields])

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
        today = day_progress(day, slices, tracked, {s: due_at(day, s) for s in range(SLICES)}, now)
        self._status = {
            "enabled": True,
            "track_days": self.track_days,
            "slices": SLICES,
            "tracked": tracked,
            "today": today,
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
