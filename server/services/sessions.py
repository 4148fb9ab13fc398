"""Sessions: a player's battles since a moment, and the watcher that measures watched accounts every minute.

docs/data.md, "Sessions", states what a session counts; server/domain/sessions.py chooses its states.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import random
import time
from collections.abc import AsyncGenerator, Callable, Iterator
from typing import TYPE_CHECKING, Any

import ujson

from server.contract.catalogue import (
    MAX_DAYS,
    STREAM_HEARTBEAT_SECONDS,
    STREAM_POLL_SECONDS,
    STREAMS_PER_CLIENT,
    STREAMS_PER_PROCESS,
    WATCH_BATCH,
    WATCH_REFRESH_SECONDS,
    WATCH_REQUESTS_PER_MINUTE,
    WATCH_SECONDS,
    WATCH_TICK_SECONDS,
    WATCHED_PER_CLIENT,
    WATCHED_PER_REGION,
)
from server.contract.errors import APIError
from server.domain import recents
from server.domain.days import DAY_SECONDS, days_before, utc_day
from server.domain.records import Timeline, as_counters, complete, pack, unpack
from server.domain.sessions import SESSION_FIGURES, Stored, daily, next_round, session_span, since_moment
from server.domain.visits import mastery_of, tank_state
from server.services.concurrency import single_flight
from server.services.visit_plan import account_assist
from server.upstream.budget import Caller
from server.upstream.client import ACCOUNT_FIELDS, TANKS_FIELDS, UpstreamError
from store.client import job_deadline, request_deadline
from store.constants import REGIONS
from store.sessions import watched_id
from store.tracker import tracked_id

if TYPE_CHECKING:
    from server.services.expected import ExpectedValuesService
    from server.services.players import PlayerService
    from server.services.tracking import Tracking
    from server.upstream.client import UpstreamClient
    from store.store import Store

log = logging.getLogger("statsapi.sessions")

COUNT_SECONDS = 5.0  # a region's count of watched accounts is read again after this long
MEASURE_SECONDS = 5.0  # the longest a session request waits for its measurement of the account


class SessionService:
    """/player/{account_id}/{region}/session: watches the account and answers its session."""

    def __init__(
        self,
        store: Store,
        ratings_source: ExpectedValuesService,
        players: PlayerService,
        clock: Callable[[], float] = time.time,
        watcher: Watcher | None = None,
        tracker: Tracking | None = None,
    ) -> None:
        self.store = store
        self.ratings_source = ratings_source
        self.players = players
        self.tracker = tracker  # a live lookup's adoption writes the session's first state
        self.clock = clock
        self.watcher = watcher  # measures an account at the request when no stored state is its state at since
        self._by_client: dict[str, dict[tuple[str, int], float]] = {}  # this process's watches per client
        self._counts: dict[str, tuple[float, int]] = {}  # region -> (read at, accounts watched)
        # Streams: how many each client has open, the accounts they follow (how many streams
        # each), and one poller that reads the followed accounts' versions for all of them.
        self._streams: collections.Counter[str] = collections.Counter()
        self._followed: collections.Counter[str] = collections.Counter()
        self._versions: dict[str, int] = {}
        # One event per followed account, set (and replaced) when its version moves: a change
        # wakes only the streams of that account, not every stream of the process.
        self._changes: dict[str, asyncio.Event] = {}
        # A new state's session is built once for all the streams of its account and moment.
        self._rebuilds: dict[tuple[str, float, int], asyncio.Future[dict[str, Any]]] = {}
        self._rewatched_until = 0.0  # the poller keeps the followed accounts watched until then
        self._poller: asyncio.Task | None = None
        self.closing = asyncio.Event()  # set at shutdown: every stream ends

    async def session(self, region: str, account_id: int, since: str, client: str) -> dict[str, Any]:
        now = self.clock()
        moment = since_moment(since, now, now - MAX_DAYS * DAY_SECONDS)
        if isinstance(moment, str):
            raise APIError("invalid_since", moment)
        states = await self._states(region, account_id, moment, now)
        looked_up = live = not states
        if looked_up:
            # Nothing stored: a live lookup (under its limits) tracks the account and writes
            # today's record, the session's first state.
            live = bool((await self.players.profile(region, account_id, client)).get("live_fetched"))
            if self.tracker is not None:
                await self.tracker.adopted(region, account_id)
        watching, until = await self._watch(region, account_id, client, now, moment)
        if live and watching:
            # The lookup measured the account just now: its state (and last battle) is the watch's
            # first capture, so a last battle before since makes it the state at since.
            await self._capture_lookup(region, account_id, now)
        states = await self._states(region, account_id, moment, now)
        if not states:
            raise APIError("no_history", "no per-tank records for this account yet")
        span = session_span(states, moment)
        if span is not None and span.measurable and watching and not live and self.watcher is not None:
            # No stored state is the account's state at since: a measurement now is, if the account
            # has not played since (the watcher's own steps, within its share of the minute).
            if await self._measure_now(region, account_id):
                states = await self._states(region, account_id, moment, now)
        return await self._built(region, account_id, moment, now, states, watching, until)

    async def _capture_lookup(self, region: str, account_id: int, now: float) -> None:
        """The tracker's measurement a live lookup of this request wrote, as the watch's capture."""
        async with request_deadline():
            book = (await self.store.tracked.measured([tracked_id(region, account_id)])).get(
                tracked_id(region, account_id)
            )
            if book is None or not complete(unpack(book["state"])):
                return
            await self.store.watched.capture(
                region,
                account_id,
                now,
                book["last_battle_time"],
                book["state"],
                book.get("assist"),
                Watcher.next_round(now),
                mastery=book["mastery"],
                first_only=True,
            )

    async def _measure_now(self, region: str, account_id: int) -> bool:
        """The watcher's measurement of one account at this request, at most MEASURE_SECONDS;
        False when it could not be taken (the share spent, the upstream failing)."""
        assert self.watcher is not None
        try:
            async with asyncio.timeout(MEASURE_SECONDS):
                return await self.watcher.measure(region, account_id)
        except (TimeoutError, UpstreamError):
            log.info("session: measuring %s:%s at the request failed", region, account_id, exc_info=True)
            return False

    async def _built(
        self,
        region: str,
        account_id: int,
        moment: float,
        now: float,
        states: list[Stored],
        watching: bool,
        until: float | None,
    ) -> dict[str, Any]:
        """The session from `states` (the newest stored at or before `moment`, to the newest)."""
        span = session_span(states, moment)
        assert span is not None
        start, end = span.start, span.end
        if span.exact and start.slot == "latest" and start.lbt is not None:
            # The state at since is the newest capture: kept apart, as the next capture replaces it.
            async with request_deadline():
                await self.store.watched.pin(
                    region,
                    account_id,
                    {
                        "at": start.at,
                        "lbt": start.lbt,
                        "s": pack(start.state),
                        "assist": start.assist,
                        "checked": start.seen,
                    },
                )
        expected = await self.ratings_source.expected_values(region)
        tiers = await self.ratings_source.tiers(region) if expected is not None else {}
        vehicles = await self.ratings_source.vehicles(region)
        assist = recents.assist_change(start.assist, end.assist)
        figures = recents.state_figures(start.state, end.state, expected, tiers, assist)
        rows = recents.tank_rows(
            as_counters(start.state),
            as_counters(end.state),
            expected,
            vehicles,
            assist=assist,
            career_assist=end.assist,
        )
        return {
            "account_id": account_id,
            "region": region,
            "since": int(moment),
            "from": int(start.at),
            "from_source": start.source,
            "from_day": start.day,
            "from_exact": span.exact,
            "from_reason": span.reason,
            "as_of": int(min(end.at, now)),
            "as_of_source": end.source,
            "watching": watching,
            "watching_until": int(until) if until is not None else None,
            **{key: figures[key] for key in SESSION_FIGURES},
            "tanks": [row for row in rows if row["period"]["battles"] > 0],
        }

    async def _states(self, region: str, account_id: int, since: float, now: float) -> list[Stored]:
        """The daily record at or before the end of the day before `since`'s, the newest daily record,
        and the watcher's first and newest captures."""
        since_day = utc_day(since)
        today = utc_day(now)
        async with request_deadline():
            timeline = Timeline.of(
                await self.store.tanks.timeline_records(region, account_id, days_before(since_day, 1), today)
            )
            watched = await self.store.watched.get(region, account_id)
        states: list[Stored] = []
        for day in (days_before(since_day, 1), today):
            found = timeline.raw_state_on(day)
            if found is not None:
                record_day, state = found
                states.append(daily(record_day, state, timeline.assist_on(record_day)))
        latest = (watched or {}).get("latest") or {}
        captures = [("first", (watched or {}).get("first")), ("latest", latest)]
        captures += [("pin", pin) for pin in ((watched or {}).get("pins") or {}).values()]
        for slot, capture in captures:
            if capture and capture.get("s"):
                lbt = capture.get("lbt")
                # Seen unchanged until the newest check of the newest capture, if it is the same state.
                checked = capture.get("checked") or (latest.get("checked") if latest.get("lbt") == lbt else None)
                states.append(
                    Stored(
                        float(capture["at"]),
                        "watch",
                        None,
                        unpack(capture["s"]),
                        capture.get("assist"),
                        lbt=float(lbt) if lbt is not None else None,
                        checked=float(checked) if checked is not None else None,
                        slot=slot,
                    )
                )
        return states

    async def _watch(
        self, region: str, account_id: int, client: str, now: float, since: float
    ) -> tuple[bool, float | None]:
        """Watch the account for WATCH_SECONDS more, unless the client or the region has reached
        its cap (an account already watched is always watched on)."""
        key = (region, account_id)
        mine = {k: until for k, until in self._by_client.get(client, {}).items() if until > now}
        if key not in mine and len(mine) >= WATCHED_PER_CLIENT:
            return False, None
        async with request_deadline():
            known = await self.store.watched.get(region, account_id)
            watched_now = known is not None and known.get("next") != float("inf") and known.get("until", 0) >= now
            if not watched_now and await self._watching(region, now) >= WATCHED_PER_REGION:
                return False, None
            doc = await self.store.watched.watch(region, account_id, now + WATCH_SECONDS, now, since)
        mine[key] = float(doc["until"])
        self._by_client[client] = mine
        if len(self._by_client) > 100_000:
            self._by_client.clear()
        if not watched_now:
            self._counts.pop(region, None)
        return True, float(doc["until"])

    async def _watching(self, region: str, now: float) -> int:
        cached = self._counts.get(region)
        if cached is None or now - cached[0] > COUNT_SECONDS:
            cached = (now, await self.store.watched.count_watching(region, now))
            self._counts[region] = cached
        return cached[1]

    # --- streams ---------------------------------------------------------------------
    @contextlib.contextmanager
    def stream_slot(self, client: str) -> Iterator[None]:
        """Hold one of the client's and the process's stream slots (429 / 503 past the caps)."""
        if self.closing.is_set() or sum(self._streams.values()) >= STREAMS_PER_PROCESS:
            raise APIError("streams_full", headers={"Retry-After": "30"})
        if self._streams[client] >= STREAMS_PER_CLIENT:
            raise APIError("too_many_streams", headers={"Retry-After": "30"})
        self._streams[client] += 1
        try:
            yield
        finally:
            self._streams[client] -= 1
            if self._streams[client] <= 0:
                del self._streams[client]

    async def follow(
        self, region: str, account_id: int, since: str, client: str, last_event_id: str | None
    ) -> AsyncGenerator[str, None]:
        """The stream's text: "" once the first session is built (so a bad request is still a JSON
        error, and the headers go before any event), the session (unless `last_event_id` is its
        id), then the session after each new state, comment lines between, and `end` at shutdown."""
        session = await self.session(region, account_id, since, client)
        yield ""  # built: the stream's headers may go
        key = watched_id(region, account_id)
        self._followed[key] += 1
        self._ensure_poller()
        watching, until = session["watching"], session["watching_until"]
        try:
            sent = last_event_id
            version = self._versions.get(key)
            while True:
                event_id = f"{session['as_of']}-{session['battles']}"
                if event_id != sent:
                    yield f"id: {event_id}\nevent: session\ndata: {ujson.dumps(session)}\n\n"
                    sent = event_id
                waited = await self._next_change(key, version)
                if self.closing.is_set():
                    yield "event: end\ndata: {}\n\n"
                    return
                if waited is None:
                    yield ": still here\n\n"
                    continue
                version = waited
                session = await self._rebuilt(region, account_id, session["since"], version)
                if watching:  # the poller keeps it watched while the stream is open
                    session = {**session, "watching": True, "watching_until": int(max(until, self._rewatched_until))}
        finally:
            self._followed[key] -= 1
            if self._followed[key] <= 0:
                del self._followed[key]
                self._versions.pop(key, None)
                self._changes.pop(key, None)

    async def _rebuilt(self, region: str, account_id: int, moment: float, version: int) -> dict[str, Any]:
        """The session at a new `version`, built once however many streams follow the account (a
        stream that goes away meanwhile does not cancel the others' build)."""
        key = (watched_id(region, account_id), float(moment), version)
        build = self._rebuilds.get(key)
        if build is None:

            async def rebuild() -> dict[str, Any]:
                try:
                    now = self.clock()
                    states = await self._states(region, account_id, moment, now)
                    if not states:
                        raise APIError("no_history", "no per-tank records for this account yet")
                    return await self._built(region, account_id, moment, now, states, False, None)
                finally:
                    self._rebuilds.pop(key, None)

            build = self._rebuilds[key] = asyncio.ensure_future(rebuild())
        return dict(await asyncio.shield(build))

    async def _next_change(self, key: str, version: int | None) -> int | None:
        """The key's new version once it differs from `version`, or None after a heartbeat's wait.
        The wait is 3/4 to all of STREAM_HEARTBEAT_SECONDS, at random: streams opened together
        spread their comment lines instead of all writing at one moment."""
        deadline = time.monotonic() + STREAM_HEARTBEAT_SECONDS * random.uniform(0.75, 1.0)
        while not self.closing.is_set():
            current = self._versions.get(key)
            if current is not None and current != version:
                return current
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            changed = self._changes.setdefault(key, asyncio.Event())
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(left):
                    await changed.wait()
        return None

    def _ensure_poller(self) -> None:
        if self._poller is None or self._poller.done():
            self._poller = asyncio.ensure_future(self._poll())

    async def _poll(self) -> None:
        """While streams follow accounts: read their versions every STREAM_POLL_SECONDS (one query
        for all), wake the streams of each account that changed, and keep the accounts watched."""
        rewatched = 0.0
        while self._followed and not self.closing.is_set():
            keys = list(self._followed)
            try:
                async with request_deadline():
                    versions = await self.store.watched.versions(keys)
                now = self.clock()
                if now - rewatched >= WATCH_SECONDS / 3:
                    async with request_deadline():
                        await self.store.watched.extend(keys, now + WATCH_SECONDS, now)
                    rewatched, self._rewatched_until = now, now + WATCH_SECONDS
            except Exception:
                log.warning("session streams: reading the followed accounts failed", exc_info=True)
                versions = {}
            for key, moved in versions.items():
                if self._versions.get(key) != moved:
                    self._versions[key] = moved
                    changed = self._changes.pop(key, None)
                    if changed is not None:
                        changed.set()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.closing.wait(), STREAM_POLL_SECONDS)
        self._wake_all()

    def _wake_all(self) -> None:
        for changed in self._changes.values():
            changed.set()
        self._changes.clear()

    def close_streams(self) -> None:
        """Shutdown: every open stream sends `end` and finishes."""
        self.closing.set()
        self._wake_all()

    def stream_status(self) -> dict[str, int]:
        return {"open": sum(self._streams.values()), "accounts": len(self._followed)}


class Watcher:
    """Measures the watched accounts of each region once a round (every WATCH_REFRESH_SECONDS on the
    clock, `next_round`), a new one at its first tick: account/info
    for up to WATCH_BATCH of them per request, tanks/stats only for those whose last battle moved,
    within WATCH_REQUESTS_PER_MINUTE upstream requests per realm."""

    def __init__(
        self,
        store: Store,
        upstream: UpstreamClient,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.upstream = upstream
        self.clock = clock
        # The clock of the watcher's share per minute (scripts/bench_sessions.py: its simulated one).
        self.monotonic = monotonic
        self._sent: dict[str, collections.deque[float]] = {region: collections.deque() for region in REGIONS}
        self.captures = 0  # states captured since start (/metrics)
        self.requests = 0  # upstream requests since start
        self.failed_ticks = 0
        self._measuring: dict[str, asyncio.Future[bool]] = {}  # measure(): one per account at a time

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                for region in REGIONS:
                    await self.tick(region)
                self.failed_ticks = 0
            except Exception:
                self.failed_ticks += 1
                log.exception("watcher tick failed")
            # The next tick on the clock's next multiple of WATCH_TICK_SECONDS (so a round's tick comes at
            # its start; later after failures), or at once when stopped.
            pause = WATCH_TICK_SECONDS * min(12, 1 + self.failed_ticks) - self.clock() % WATCH_TICK_SECONDS
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), pause)

    @staticmethod
    def next_round(now: float) -> float:
        return next_round(now, WATCH_REFRESH_SECONDS, WATCH_TICK_SECONDS)

    def _spend(self, region: str) -> bool:
        """One more upstream request for `region` within the watcher's share of the minute."""
        sent = self._sent[region]
        now = self.monotonic()
        while sent and sent[0] <= now - 60:
            sent.popleft()
        if len(sent) >= WATCH_REQUESTS_PER_MINUTE:
            return False
        sent.append(now)
        self.requests += 1
        return True

    async def tick(self, region: str) -> int:
        """Measure the due watched accounts of `region`, WATCH_BATCH at a time (one account/info
        request each) while a batch comes full and the share of the minute lasts; returns the
        states captured."""
        now = self.clock()
        captured = 0
        while True:
            got, claimed = await self._batch(region, now)
            captured += got
            if claimed < WATCH_BATCH or not self._left(region):
                return captured

    async def _measured(self, region: str, first: list[tuple[dict, dict]]) -> dict[int, dict]:
        """{account_id: the tracker's newest measurement} for watches not yet captured whose last
        battle has not moved since it (account/info just said so): their state now, without a
        tanks/stats request (a live lookup measured it seconds before its session began, or the
        daily pass earlier). Only complete states (every counter) are taken."""
        if not first:
            return {}
        with job_deadline():
            books = await self.store.tracked.measured([tracked_id(region, int(doc["a"])) for doc, _ in first])
        out = {}
        for doc, info in first:
            book = books.get(tracked_id(region, int(doc["a"])))
            lbt = info.get("last_battle_time")
            if (
                book is not None
                and lbt is not None
                and book["last_battle_time"] == lbt
                and complete(unpack(book["state"]))
            ):
                out[int(doc["a"])] = book
        return out

    @staticmethod
    def _a_start(doc: dict) -> bool:
        """Whether the newest capture is the state at the start of a session asked of the account
        (docs/data.md, "Sessions"), which the capture about to replace it must not take away."""
        latest = doc.get("latest") or {}
        lbt = latest.get("lbt")
        if not latest or lbt is None:
            return False
        seen = max(float(latest.get("at") or 0), float(latest.get("checked") or 0))
        return any(float(lbt) <= since <= seen for since in doc.get("sinces") or ())

    def _left(self, region: str) -> bool:
        """Whether the watcher's share of the minute in `region` has a request left."""
        sent = self._sent[region]
        now = self.monotonic()
        return sum(1 for at in sent if at > now - 60) < WATCH_REQUESTS_PER_MINUTE

    async def _batch(self, region: str, now: float) -> tuple[int, int]:
        """One batch of due accounts: (states captured, accounts claimed)."""
        with job_deadline():
            due = await self.store.watched.claim_due(region, now, WATCH_BATCH, self.next_round(now))
        if not due:
            return 0, 0
        ended = [doc["_id"] for doc in due if float(doc.get("until") or 0) < now]
        current = [doc for doc in due if float(doc.get("until") or 0) >= now]
        with job_deadline():
            await self.store.watched.ended(ended)
        if not current:
            return 0, len(due)
        if not self._spend(region):
            with job_deadline():
                await self.store.watched.due_again([doc["_id"] for doc in current], now)
            return 0, len(due)
        infos = await self.upstream.account_info(
            region, [int(doc["a"]) for doc in current], fields=ACCOUNT_FIELDS, caller="watch"
        )
        captured = await self._capture(region, current, infos, now, "watch")
        self.captures += captured
        return captured, len(due)

    async def measure(self, region: str, account_id: int) -> bool:
        """Measure one watched account now, as its next round would (a session request found no
        stored state that is the account's state at its `since`); one measurement at a time per
        account. False when the watcher's share of the minute is spent or the account is gone."""
        key = watched_id(region, account_id)
        return await single_flight(self._measuring, key, lambda: self._measure(region, account_id))

    async def _measure(self, region: str, account_id: int) -> bool:
        now = self.clock()
        with job_deadline():
            doc = await self.store.watched.get(region, account_id)
        if doc is None or not self._spend(region):
            return False
        # A caller waits for this answer: the live caller's short timeouts, not the background's retries.
        infos = await self.upstream.account_info(region, [account_id], fields=ACCOUNT_FIELDS, caller="live")
        if not infos.get(account_id):
            return False
        captured = await self._capture(region, [doc], infos, now, "live")
        self.captures += captured
        return captured > 0 or bool(doc.get("latest"))

    async def _capture(self, region: str, docs: list[dict], infos: dict[int, Any], now: float, caller: Caller) -> int:
        """Capture the state of each of `docs` whose last battle moved since its newest capture
        (tanks/stats, or the tracker's newest measurement when that is the state); the others are
        checked unchanged at `now`. Returns the states captured."""
        moved, unchanged = [], []
        for doc in docs:
            info = infos.get(int(doc["a"]))
            latest = doc.get("latest") or {}
            if info and (not latest or info.get("last_battle_time") != latest.get("lbt")):
                moved.append((doc, info))
            else:
                unchanged.append(doc["_id"])  # not played since (or gone upstream): measured again later
        captured = 0
        next_at = self.next_round(now)
        waiting: list[str] = []
        known = await self._measured(region, [(doc, info) for doc, info in moved if not doc.get("latest")])
        for doc, info in moved:
            stored = known.get(int(doc["a"]))
            if stored is not None:  # a first capture the tracker's newest measurement still is
                state, mastery = stored["state"], stored["mastery"]
            elif waiting or not self._spend(region):
                waiting.append(doc["_id"])  # due again at once: measured first at the next tick
                continue
            else:
                raw = await self.upstream.tanks_stats(region, int(doc["a"]), fields=TANKS_FIELDS, caller=caller)
                if raw is None:
                    unchanged.append(doc["_id"])
                    continue
                state, mastery = pack(tank_state(raw)), mastery_of(raw)
            with job_deadline():
                if self._a_start(doc):
                    await self.store.watched.pin_latest(region, int(doc["a"]))
                await self.store.watched.capture(
                    region,
                    int(doc["a"]),
                    now,
                    info.get("last_battle_time"),
                    state,
                    account_assist(info),
                    next_at,
                    mastery=mastery,
                )
            captured += 1
        with job_deadline():
            await self.store.watched.unchanged(unchanged, now, next_at)
            await self.store.watched.due_again(waiting, now)
        return captured

    def status(self) -> dict[str, Any]:
        return {
            "captures": self.captures,
            "upstream_requests": self.requests,
            "requests_last_minute": {region: len(sent) for region, sent in self._sent.items()},
            "share_per_minute": WATCH_REQUESTS_PER_MINUTE,
            "failed_ticks": self.failed_ticks,
        }
