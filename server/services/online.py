"""Player counts: the minute sampler, current counts with peaks, daily history."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from server.contract.catalogue import HOT_COPY_SECONDS, MAX_DAYS
from server.services.concurrency import heavy_slot, single_flight
from server.serving.answers import ONLINE_TAG, Tag, no_answer_cache
from server.upstream.client import UpstreamError
from server.upstream.interface import Upstream
from store.client import job_deadline, request_deadline
from store.constants import GAMES, REGIONS
from store.store import Store

log = logging.getLogger("statsapi.online")

# The sampler for 23:59 may finish just after midnight: a day counts as final an hour later.
DAY_FINAL_AFTER_SECONDS = 3600
# /online is cached by clients for 60 s anyway; a few seconds in-process spares the database.
CURRENT_CACHE_SECONDS = HOT_COPY_SECONDS
# Today's aggregate scans today's samples; new ones arrive once a minute.
HISTORY_CACHE_SECONDS = 60.0
HISTORY_MAX_DAYS = MAX_DAYS  # what the online history endpoint can be asked for
# A request aggregates at most this many missing finished days itself (newest first); older
# missing days are answered as gaps until the online_daily job has materialised them.
INLINE_DAYS = 3
# A request starts another inline aggregation only while this much time has passed since its
# first: over a year of minute samples one day costs ~0.8 s on the embedded database, and three
# in a row missed the request deadline (every cold long request answered 503). Days left over
# stay gaps in this answer until the online_daily job materialises them.
INLINE_BUDGET_SECONDS = 0.5
# The online_daily job: day aggregations per run (newest missing first) and a pause between them.
BACKFILL_DAYS_PER_RUN = 120
BACKFILL_PAUSE_SECONDS = 0.05
# Materialised finished days never change: each process keeps a series' days in memory and
# re-reads them (one O(HISTORY_MAX_DAYS) range, shared by concurrent requests) at most this often,
# so the job's new days show within it. On the embedded database one such read costs ~0.1 s and
# queries run one at a time there: 32 concurrent long histories reading it each queued past the
# request deadline (every one answered 503) and held up every other client's reads meanwhile.
DAILY_REFRESH_SECONDS = 60.0
SAMPLE_EVERY = 60  # seconds between samples of the servers' player counts (one per game and region)
MATERIALISE_EVERY = 600  # seconds between runs of the online_daily materialiser


@dataclass(frozen=True)
class SlotSample:
    """One minute's fetched counts: {(game, region): (rows, None) or (None, error)}, and when."""

    slot: int
    fetched: dict[tuple[str, str], tuple[list[dict] | None, str | None]]
    sampled_at: float


class SamplingFailed(Exception):
    """No game/region could be sampled for a minute (the job is recorded as failed)."""


def _utc(ts: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(ts, dt.UTC)


def _unix(value: dt.datetime) -> int:
    if value.tzinfo is None:  # drivers without tz_aware hand back naive UTC
        value = value.replace(tzinfo=dt.UTC)
    return int(value.timestamp())


def _iso(value: dt.datetime) -> str:
    return _utc(_unix(value)).isoformat()


def _peak(entry: dict | None, date: str | None = None) -> dict | None:
    if not entry:
        return None
    peak = {"players": entry["players"], "minute": _iso(entry["minute"]), "minute_unix": _unix(entry["minute"])}
    if date is not None:
        peak = {"date": date, **peak}
    return peak


def _describe(exc: Exception) -> str:
    # UpstreamError messages are scrubbed of the application_id by the client.
    text = exc.message if isinstance(exc, UpstreamError) else str(exc)
    return f"{type(exc).__name__}: {text}"[:200] if text else type(exc).__name__


def _server_rows(rows: object) -> list[dict]:
    """[{server, players}] from the upstream's [{server, players_online}]; ValueError when unusable."""
    if not isinstance(rows, list) or not rows:
        raise ValueError("no servers in the answer")
    out = []
    for row in rows:
        players = row.get("players_online") if isinstance(row, dict) else None
        if isinstance(players, bool) or not isinstance(players, int) or players < 0:
            raise ValueError("invalid players_online in the answer")
        out.append({"server": str(row.get("server")), "players": players})
    return out


class OnlineService:
    def __init__(
        self,
        store: Store,
        upstream: Upstream,
        clock: Callable[[], float] = time.time,
        cache_seconds: float = CURRENT_CACHE_SECONDS,
        history_cache_seconds: float = HISTORY_CACHE_SECONDS,
        on_write: Callable[[Tag], None] | None = None,
    ) -> None:
        self.store = store
        self.on_write = on_write or no_answer_cache  # told when it stored counts (the answer cache)
        self.upstream = upstream
        self.clock = clock
        self.cache_seconds = cache_seconds
        self.history_cache_seconds = history_cache_seconds
        # In-process answers, aged by the monotonic clock (a process-local TTL, not data time).
        self._current: tuple[float, dict] | None = None
        self._history: dict[tuple[str, str, int], tuple[float, dict]] = {}
        self._history_flights: dict[tuple, asyncio.Future] = {}
        self._day_flights: dict[tuple, asyncio.Future] = {}  # aggregations of one day, shared
        self._today: dict[tuple[str, str, str], tuple[float, dict]] = {}  # unfinished days' aggregates
        # (game, region) -> (read at, first day read, {date: materialised row}); see DAILY_REFRESH_SECONDS.
        self._daily: dict[tuple[str, str], tuple[float, str, dict[str, dict]]] = {}
        self._daily_flights: dict[tuple, asyncio.Future] = {}
        self.aggregations = 0  # day aggregations run by this process (requests and the job)

    # --- the sampler (a job: one call per minute slot, on the leader) -----------------
    async def sample(self, slot: int) -> str:
        """Sample every game × region for minute `slot`; returns the outcome, raises if all failed."""
        [outcome] = await self.store_samples([await self.fetch(slot)])
        return outcome

    async def fetch(self, slot: int) -> SlotSample:
        """The counts of every game × region for minute `slot`, as the upstream answers them now."""
        # One upstream request per region answers every game (per game only when it fails).
        by_region = dict(zip(REGIONS, await asyncio.gather(*(self._fetch(region) for region in REGIONS))))
        fetched = {(game, region): by_region[region][game] for game in GAMES for region in REGIONS}
        return SlotSample(slot, fetched, self.clock())

    async def store_samples(self, samples: list[SlotSample]) -> list[str]:
        """Write fetched minutes (one or many: the demo's seeding writes a month of past ones
        together, the same data in a few statements per game/region); an outcome per minute.
        Raises SamplingFailed when every game/region of a minute failed."""
        with job_deadline():  # a job's step (a month's chunk is one statement per game/region)
            return await self._store_samples(samples)

    async def _store_samples(self, samples: list[SlotSample]) -> list[str]:
        for sample in samples:
            for (game, region), (_, error) in sample.fetched.items():
                if error is not None:
                    await self.store.online.record_failure(game, region, sample.sampled_at, error)
        pairs = [(game, region) for game in GAMES for region in REGIONS]
        # Per game/region, the samples that have its rows (by index: a minute may come twice).
        having = {pair: [i for i, s in enumerate(samples) if s.fetched[pair][0] is not None] for pair in pairs}
        flags = await asyncio.gather(
            *(
                self.store.online.record_minutes(
                    game,
                    region,
                    [
                        (samples[i].slot * 60, samples[i].fetched[(game, region)][0] or [], samples[i].sampled_at)
                        for i in having[(game, region)]
                    ],
                )
                for game, region in pairs
            )
        )
        new_by_pair = {pair: dict(zip(having[pair], is_new)) for pair, is_new in zip(pairs, flags)}
        outcomes: list[str] = []
        all_failed: list[str] = []
        peaks: dict[str, list[tuple[int, dict[str, int]]]] = {game: [] for game in GAMES}
        for index, sample in enumerate(samples):
            minute_ts = sample.slot * 60
            stored = {
                pair: rows
                for pair, (rows, error) in sample.fetched.items()
                if rows is not None and new_by_pair[pair].get(index)
            }
            for game, counts in self._peak_counts(stored).items():
                if counts:
                    peaks[game].append((minute_ts, counts))
            outcome, failed_all = self._outcome(sample, stored)
            outcomes.append(outcome)
            if failed_all:
                all_failed.append(outcome)
        await asyncio.gather(*(self.store.online.raise_peaks_many(game, rows) for game, rows in peaks.items() if rows))
        self._current = None
        self._history.clear()
        self._today.clear()
        self.on_write(ONLINE_TAG)
        if all_failed:  # after the other minutes' writes: their counts stand
            raise SamplingFailed(all_failed[0])
        return outcomes

    @staticmethod
    def _outcome(sample: SlotSample, stored: dict) -> tuple[str, bool]:
        """What a minute's sampling did, and whether every game/region of it failed."""
        good = [pair for pair, (rows, error) in sample.fetched.items() if error is None and rows is not None]
        failed = [(pair, error) for pair, (_, error) in sample.fetched.items() if error is not None]
        servers = sum(len(rows) for rows in stored.values())
        outcome = f"{servers} servers sampled in {len(stored)} game/regions"
        if len(good) > len(stored):
            outcome += f", {len(good) - len(stored)} already stored for this minute"
        if failed:
            names = ", ".join(f"{g}/{r}" for (g, r), _ in failed)
            outcome += f", {len(failed)} failed: {names}"
            log.warning(
                "online sampler, minute %s: %s",
                sample.slot * 60,
                "; ".join(f"{g}/{r}: {error}" for (g, r), error in failed),
            )
        if len(failed) == len(sample.fetched):
            return f"all {len(sample.fetched)} game/regions failed: " + failed[0][1], True
        return outcome, False

    async def _fetch(self, region: str) -> dict[str, tuple[list[dict] | None, str | None]]:
        """{game: (rows, None) or (None, error)} for one region.

        One request asks for every game (as public clients do). When the upstream answers that
        request with an error (e.g. SOURCE_NOT_AVAILABLE because one game's source is down), each
        game is asked for on its own (one request each, at once), so only the game that fails
        loses its counts. A realm that did not answer at all (timeouts, connection errors, HTTP
        errors: no upstream error code) is not asked three times more: every game failed."""
        try:
            answer = await self.upstream.servers_info(region, GAMES, caller="online")
        except Exception as exc:  # one region failing must not stop the others
            if isinstance(exc, UpstreamError) and exc.upstream_code is None:
                return {game: (None, _describe(exc)) for game in GAMES}
            log.info(
                "online sampler %s: the request for all games failed (%s); asking per game", region, _describe(exc)
            )
            singles = await asyncio.gather(*(self._fetch_game(region, game) for game in GAMES))
            return dict(zip(GAMES, singles))
        out: dict[str, tuple[list[dict] | None, str | None]] = {}
        for game in GAMES:
            try:
                out[game] = (_server_rows(answer.get(game)), None)
            except ValueError as exc:  # one game's rows unusable: the other games still count
                out[game] = (None, _describe(exc))
        return out

    async def _fetch_game(self, region: str, game: str) -> tuple[list[dict] | None, str | None]:
        """(rows, None) or (None, error) of one game in one region, from a request of its own."""
        try:
            answer = await self.upstream.servers_info(region, (game,), caller="online")
            return _server_rows(answer.get(game)), None
        except Exception as exc:  # this game only
            return None, _describe(exc)

    @staticmethod
    def _peak_counts(stored: dict) -> dict[str, dict[str, int]]:
        """Per game: each stored region's count, and the total only when all regions were stored."""
        counts: dict[str, dict[str, int]] = {}
        for (game, region), rows in stored.items():
            counts.setdefault(game, {})[region] = sum(row["players"] for row in rows)
        for game, by_region in counts.items():
            if all(region in by_region for region in REGIONS):
                by_region["total"] = sum(by_region[region] for region in REGIONS)
        return counts

    # --- /online -----------------------------------------------------------------------
    async def current(self) -> dict:
        cached = self._current
        if cached is not None and 0 <= time.monotonic() - cached[0] < self.cache_seconds:
            return cached[1]
        now = self.clock()
        today = _utc(now).date()
        async with request_deadline():
            latest = {(doc.get("game"), doc.get("region")): doc for doc in await self.store.online.latest()}
            peaks = await self.store.online.peaks(GAMES, today)
        games = {}
        newest: dt.datetime | None = None
        for game in GAMES:
            today_doc = peaks[game]["today"] or {}
            all_time_doc = peaks[game]["all_time"] or {}
            regions = {}
            for region in REGIONS:
                doc = latest.get((game, region)) or {}
                regions[region] = self._region_now(
                    doc, now, today.isoformat(), today_doc.get(region), all_time_doc.get(region)
                )
                if doc.get("minute") is not None and (newest is None or _unix(doc["minute"]) > _unix(newest)):
                    newest = doc["minute"]
            games[game] = self._game_now(regions, today.isoformat(), today_doc.get("total"), all_time_doc.get("total"))
        answer = {
            "games": games,
            "newest_sample": None
            if newest is None
            else {
                "minute": _iso(newest),
                "minute_unix": _unix(newest),
                "age_seconds": max(0, int(now - _unix(newest))),
            },
            "today": today.isoformat(),
            "sample_interval_seconds": SAMPLE_EVERY,
        }
        self._current = (time.monotonic(), answer)
        return answer

    @staticmethod
    def _region_now(doc: dict, now: float, today: str, peak_today: dict | None, peak_all_time: dict | None) -> dict:
        minute = doc.get("minute")
        last_success, last_failure = doc.get("last_success"), doc.get("last_failure")
        return {
            "players": doc.get("players") if minute is not None else None,
            "minute": _iso(minute) if minute is not None else None,
            "minute_unix": _unix(minute) if minute is not None else None,
            "age_seconds": max(0, int(now - _unix(minute))) if minute is not None else None,
            "servers": [{"server": s["server"], "players": s["players"]} for s in doc.get("servers") or []],
            # Failing: the newest attempt failed; the counts above are then the last good ones.
            "failing": last_failure is not None and (last_success is None or last_failure > last_success),
            "last_failure": int(last_failure) if last_failure is not None else None,
            "peak": {"today": _peak(peak_today, today), "all_time": _peak(peak_all_time)},
        }

    @staticmethod
    def _game_now(regions: dict, today: str, peak_today: dict | None, peak_all_time: dict | None) -> dict:
        sampled = [r for r in regions.values() if r["minute_unix"] is not None]
        newest = max((r["minute_unix"] for r in sampled), default=None)
        return {
            # The sum of each region's newest count; complete when all were sampled at the same minute.
            "players": sum(r["players"] for r in sampled) if sampled else None,
            "minute": _utc(newest).isoformat() if newest is not None else None,
            "minute_unix": newest,
            "complete": len(sampled) == len(REGIONS) and all(r["minute_unix"] == newest for r in sampled),
            "peak": {"today": _peak(peak_today, today), "all_time": _peak(peak_all_time)},
            "regions": regions,
        }

    # --- /online/history -----------------------------------------------------------------
    async def history(self, game: str, region: str, days: int) -> dict:
        """Daily series for the last `days` UTC days ending today; days without samples are gaps (null).

        Finished days come from online_daily (one indexed range read); a request aggregates the
        unfinished days (today's cached for a minute), then at most INLINE_DAYS missing finished
        days while INLINE_BUDGET_SECONDS last, under the process's cap of heavy operations;
        concurrent identical requests share one computation.
        """
        now = self.clock()
        today = _utc(now).date()
        key = (game, region, days)
        cached = self._history.get(key)
        if (
            cached is not None
            and 0 <= time.monotonic() - cached[0] < self.history_cache_seconds
            and cached[1]["to"] == today.isoformat()
        ):
            return cached[1]
        return await single_flight(
            self._history_flights,
            (game, region, days, today.isoformat()),
            lambda: self._build_history(game, region, days, now),
        )

    async def _build_history(self, game: str, region: str, days: int, now: float) -> dict:
        today = _utc(now).date()
        first = today - dt.timedelta(days=days - 1)
        final_before = _utc(now - DAY_FINAL_AFTER_SECONDS)
        async with request_deadline():
            materialised = await self._materialised(game, region, today)
            rows = {date: row for date, row in materialised.items() if date >= first.isoformat()}
            dates = [first + dt.timedelta(days=i) for i in range(days)]
            unfinished = [d for d in dates if not self._final(d, final_before)]
            missing = [d for d in dates if d.isoformat() not in rows and self._final(d, final_before)]
            if missing:
                missing = await self._materialise_known_gaps(game, region, missing, rows)
            inline = missing[-INLINE_DAYS:]
            if len(missing) > len(inline):
                log.info(
                    "online history %s/%s: %d days not materialised yet (gaps until the online_daily job fills them)",
                    game,
                    region,
                    len(missing) - len(inline),
                )
            live = {d: self._today_cached(game, region, d) for d in unfinished}
            if inline or any(row is None for row in live.values()):
                started = time.monotonic()
                # Each day is looked up again before it is aggregated: a concurrent request whose
                # shared aggregation ended before this one asked has left it in memory.
                for date, row in live.items():  # the unfinished days first: they are never materialised
                    if row is None:
                        row = self._today_cached(game, region, date) or await self._aggregate_shared(game, region, date)
                        live[date] = row
                        self._today[(game, region, date.isoformat())] = (time.monotonic(), row)
                computed = []
                for date in reversed(inline):  # newest first, while the time budget lasts
                    if time.monotonic() - started >= INLINE_BUDGET_SECONDS:
                        break
                    known = materialised.get(date.isoformat())
                    if known is not None:
                        rows[date.isoformat()] = known
                        continue
                    computed.append(await self._aggregate_shared(game, region, date))
                    self._remember(game, region, computed[-1:])
                if computed:
                    await self.store.online.save_days(game, region, computed)
                rows.update({row["date"]: row for row in computed})
            rows.update({date.isoformat(): row for date, row in live.items() if row is not None})  # all are, by now
        answer = self._history_view(game, region, days, first, today, rows)
        self._history[(game, region, days)] = (time.monotonic(), answer)  # ≤ 3 games × 4 regions × 400 days keys
        if len(self._today) > 100:
            self._today.clear()
        return answer

    async def _materialised(self, game: str, region: str, today: dt.date) -> dict[str, dict]:
        """The series' materialised days of the last HISTORY_MAX_DAYS, from memory when read less
        than DAILY_REFRESH_SECONDS ago; concurrent callers share one read."""
        first = (today - dt.timedelta(days=HISTORY_MAX_DAYS - 1)).isoformat()
        cached = self._daily.get((game, region))
        if cached is not None and cached[1] == first and 0 <= time.monotonic() - cached[0] < DAILY_REFRESH_SECONDS:
            return cached[2]

        async def read() -> dict[str, dict]:
            rows = await self.store.online.daily_range(game, region, dt.date.fromisoformat(first), today)
            self._daily[(game, region)] = (time.monotonic(), first, rows)
            return rows

        return await single_flight(self._daily_flights, (game, region, first), read)

    def _remember(self, game: str, region: str, rows: list[dict]) -> None:
        """Days this process has just materialised join its in-memory copy of the series."""
        cached = self._daily.get((game, region))
        if cached is not None:
            cached[2].update({row["date"]: row for row in rows})

    @staticmethod
    def _final(date: dt.date, final_before: dt.datetime) -> bool:
        day_end = dt.datetime(date.year, date.month, date.day, tzinfo=dt.UTC) + dt.timedelta(days=1)
        return day_end <= final_before

    def _today_cached(self, game: str, region: str, date: dt.date) -> dict | None:
        cached = self._today.get((game, region, date.isoformat()))
        if cached is not None and 0 <= time.monotonic() - cached[0] < self.history_cache_seconds:
            return cached[1]
        return None

    async def _aggregate_shared(self, game: str, region: str, date: dt.date) -> dict:
        """One aggregation per (game, region, day) at a time, shared by every request that needs
        it (requests for different `days` all want today and the newest days), each holding
        one of the process's heavy slots (else a fast 503 with Retry-After)."""

        async def gated() -> dict:
            async with heavy_slot(self.store.heavy):
                row = await self._aggregate(game, region, date)
            # Kept before the flight ends: a request that looks for the day after the flight is gone
            # but before its waiters resume finds it here instead of aggregating it again.
            if self._final(date, _utc(self.clock() - DAY_FINAL_AFTER_SECONDS)):
                self._remember(game, region, [row])
            else:
                self._today[(game, region, date.isoformat())] = (time.monotonic(), row)
            return row

        return await single_flight(self._day_flights, (game, region, date), gated)

    async def _aggregate(self, game: str, region: str, date: dt.date) -> dict:
        self.aggregations += 1
        return await self.store.online.aggregate_day(game, region, date)

    async def _materialise_known_gaps(
        self, game: str, region: str, missing: list[dt.date], rows: dict, scan: bool = False
    ) -> list[dt.date]:
        """Days before the first stored sample are gaps for certain: stored as such without any
        aggregation (a read of at most three status documents). Returns the days still missing."""
        first_day = await self.store.online.first_sample_day(game, region, scan=scan)
        if first_day is None:  # unknown until the job has looked
            return missing
        known = [d for d in missing if d < first_day]
        if known:
            gaps = [self._gap(d) for d in known]
            await self.store.online.save_days(game, region, gaps)
            self._remember(game, region, gaps)
            rows.update({row["date"]: row for row in gaps})
        return [d for d in missing if d >= first_day]

    @staticmethod
    def _gap(date: dt.date) -> dict:
        return {"date": date.isoformat(), "samples": 0, "peak": None, "peak_minute": None, "min": None, "avg": None}

    @staticmethod
    def _history_view(game: str, region: str, days: int, first: dt.date, today: dt.date, rows: dict) -> dict:
        series = []
        for i in range(days):
            date = (first + dt.timedelta(days=i)).isoformat()
            row = rows.get(date)
            if row is None or not row.get("samples"):
                series.append({"date": date, "samples": 0, "peak": None, "peak_minute": None, "min": None, "avg": None})
                continue
            series.append(
                {
                    "date": date,
                    "samples": row["samples"],
                    "peak": row["peak"],
                    "peak_minute": _iso(row["peak_minute"]),
                    "min": row["min"],
                    "avg": round(row["avg"], 1),
                }
            )
        return {
            "game": game,
            "region": region,
            "days": days,
            "from": first.isoformat(),
            "to": today.isoformat(),
            "series": series,
        }

    # --- the online_daily job (leader) ------------------------------------------------
    async def materialise_days(
        self, slot: int | None = None, budget: int = BACKFILL_DAYS_PER_RUN, pause: float = BACKFILL_PAUSE_SECONDS
    ) -> str:
        """Materialise finished days of every game × region (and "all") in online_daily: yesterday
        once it is final, then missing days of the last HISTORY_MAX_DAYS, newest first, at most
        `budget` aggregations per run with a pause between them (requests run in between)."""
        now = self.clock()
        today = _utc(now).date()
        final_before = _utc(now - DAY_FINAL_AFTER_SECONDS)
        first = today - dt.timedelta(days=HISTORY_MAX_DAYS - 1)
        todo: list[tuple[str, str, dt.date]] = []
        gaps = 0
        for game in GAMES:
            for region in (*REGIONS, "all"):
                with job_deadline():
                    rows = await self.store.online.daily_range(game, region, first, today)
                    missing = [first + dt.timedelta(days=i) for i in range(HISTORY_MAX_DAYS)]
                    missing = [d for d in missing if d.isoformat() not in rows and self._final(d, final_before)]
                    before = len(missing)
                    if missing:
                        missing = await self._materialise_known_gaps(game, region, missing, rows, scan=True)
                    gaps += before - len(missing)
                todo.extend((game, region, d) for d in missing)
        todo.sort(key=lambda item: item[2], reverse=True)  # yesterday first, for every series
        done = 0
        for game, region, date in todo[:budget]:
            with job_deadline():
                row = await self._aggregate(game, region, date)
                await self.store.online.save_days(game, region, [row])
                self._remember(game, region, [row])
            done += 1
            await asyncio.sleep(pause)
        left = len(todo) - done
        return f"materialised {done} days and {gaps} known gaps" + (f", {left} left for later runs" if left else "")
