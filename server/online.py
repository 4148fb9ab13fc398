"""Player counts: the minute sampler, current counts with peaks, daily history."""
from __future__ import annotations

import asyncio
import datetime as dt
import logging
import time

from server.upstream import UpstreamError

log = logging.getLogger("statsapi.online")

GAMES = ("wot", "wotb", "wows")
REGIONS = ("eu", "na", "asia")
# The sampler for 23:59 may finish just after midnight: a day counts as final an hour later.
DAY_FINAL_AFTER_SECONDS = 3600
# /online is cached by clients for 60 s anyway; a few seconds in-process spares the database.
CURRENT_CACHE_SECONDS = 5.0
# Today's aggregate scans today's samples; new ones arrive once a minute.
HISTORY_CACHE_SECONDS = 60.0


class SamplingFailed(Exception):
    """No game/region could be sampled for a minute (the job is recorded as failed)."""


def _utc(ts: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc)


def _unix(value: dt.datetime) -> int:
    if value.tzinfo is None:  # drivers without tz_aware hand back naive UTC
        value = value.replace(tzinfo=dt.timezone.utc)
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


def _server_rows(rows) -> list[dict]:
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
    def __init__(self, store, upstream, clock=time.time, cache_seconds: float = CURRENT_CACHE_SECONDS,
                 history_cache_seconds: float = HISTORY_CACHE_SECONDS):
        self.store = store
        self.upstream = upstream
        self.clock = clock
        self.cache_seconds = cache_seconds
        self.history_cache_seconds = history_cache_seconds
        # In-process answers, aged by the monotonic clock (a process-local TTL, not data time).
        self._current: tuple[float, dict] | None = None
        self._history: dict[tuple[str, str, int], tuple[float, dict]] = {}

    # --- the sampler (a job: one call per minute slot, on the leader) -----------------
    async def sample(self, slot: int) -> str:
        """Sample every game × region for minute `slot`; returns the outcome, raises if all failed."""
        minute_ts = slot * 60
        pairs = [(game, region) for game in GAMES for region in REGIONS]
        # One upstream request per region answers every game.
        by_region = await asyncio.gather(*(self._fetch(region) for region in REGIONS))
        fetched = [dict(zip(REGIONS, by_region))[region][game] for game, region in pairs]
        sampled_at = self.clock()
        failed = [(pair, error) for pair, (_, error) in zip(pairs, fetched) if error is not None]
        good = [(pair, rows) for pair, (rows, error) in zip(pairs, fetched) if error is None]
        await asyncio.gather(*(self.store.online.record_failure(g, r, sampled_at, error)
                                for (g, r), error in failed))
        stored_flags = await asyncio.gather(*(self.store.online.record_minute(g, r, minute_ts, rows, sampled_at)
                                              for (g, r), rows in good))
        stored = {pair: rows for (pair, rows), is_new in zip(good, stored_flags) if is_new}
        await asyncio.gather(*(self.store.online.raise_peaks(game, minute_ts, counts)
                               for game, counts in self._peak_counts(stored).items() if counts))
        self._current = None
        self._history.clear()

        servers = sum(len(rows) for rows in stored.values())
        outcome = f"{servers} servers sampled in {len(stored)} game/regions"
        if len(good) > len(stored):
            outcome += f", {len(good) - len(stored)} already stored for this minute"
        if failed:
            names = ", ".join(f"{g}/{r}" for (g, r), _ in failed)
            outcome += f", {len(failed)} failed: {names}"
            log.warning("online sampler, minute %s: %s", minute_ts, "; ".join(
                f"{g}/{r}: {error}" for (g, r), error in failed))
        if len(failed) == len(pairs):
            raise SamplingFailed(f"all {len(pairs)} game/regions failed: " + failed[0][1])
        return outcome

    async def _fetch(self, region: str) -> dict[str, tuple[list[dict] | None, str | None]]:
        """{game: (rows, None) or (None, error)} for one region."""
        try:
            answer = await self.upstream.servers_info(region, GAMES, caller="online")
        except Exception as exc:  # one region failing must not stop the others
            return {game: (None, _describe(exc)) for game in GAMES}
        out = {}
        for game in GAMES:
            try:
                out[game] = (_server_rows(answer.get(game)), None)
            except ValueError as exc:  # one game's rows unusable: the other games still count
                out[game] = (None, _describe(exc))
        return out

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
                regions[region] = self._region_now(doc, now, today.isoformat(), today_doc.get(region),
                                                   all_time_doc.get(region))
                if doc.get("minute") is not None and (newest is None or _unix(doc["minute"]) > _unix(newest)):
                    newest = doc["minute"]
            games[game] = self._game_now(regions, today.isoformat(), today_doc.get("total"),
                                         all_time_doc.get("total"))
        answer = {
            "games": games,
            "newest_sample": None if newest is None else {
                "minute": _iso(newest), "minute_unix": _unix(newest), "age_seconds": max(0, int(now - _unix(newest)))},
            "today": today.isoformat(),
            "sample_interval_seconds": 60,
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
        """Daily series for the last `days` UTC days ending today; days without samples are gaps (null)."""
        now = self.clock()
        today = _utc(now).date()
        key = (game, region, days)
        cached = self._history.get(key)
        if (cached is not None and 0 <= time.monotonic() - cached[0] < self.history_cache_seconds
                and cached[1]["to"] == today.isoformat()):
            return cached[1]
        first = today - dt.timedelta(days=days - 1)
        rows = await self.store.online.daily(game, region, first, today,
                                             final_before=_utc(now - DAY_FINAL_AFTER_SECONDS))
        series = []
        for i in range(days):
            date = (first + dt.timedelta(days=i)).isoformat()
            row = rows.get(date)
            if row is None or not row.get("samples"):
                series.append({"date": date, "samples": 0, "peak": None, "peak_minute": None,
                               "min": None, "avg": None})
                continue
            series.append({
                "date": date,
                "samples": row["samples"],
                "peak": row["peak"],
                "peak_minute": _iso(row["peak_minute"]),
                "min": row["min"],
                "avg": round(row["avg"], 1),
            })
        answer = {"game": game, "region": region, "days": days, "from": first.isoformat(),
                  "to": today.isoformat(), "series": series}
        self._history[key] = (time.monotonic(), answer)  # at most 3 games × 4 regions × 400 days keys
        return answer
