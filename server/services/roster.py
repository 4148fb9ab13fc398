"""/roster: many accounts' figures at once; cached profiles and earlier rosters' fetches first, the
rest asked of the upstream in batches of 100 per method, once per roster (docs/data.md, "Battle rosters")."""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from server.contract.catalogue.roster import ROSTER_FRESH_SECONDS, ROSTER_METHODS, ROSTER_MOST
from server.domain.roster import GLANCE_TOTALS, failed_row, glance_of, glance_row, profile_row
from server.upstream.client import UpstreamError, UpstreamUnavailable
from store.client import request_deadline

if TYPE_CHECKING:  # types only
    from server.services.expected import Ratings
    from server.serving.ratelimit import RateLimiter
    from server.upstream.interface import Upstream
    from store.store import Store

log = logging.getLogger("statsapi.roster")

# account/info's fields a roster reads: identity, clan, dates and the career counters of its ratings.
ACCOUNT_FIELDS = "account_id,nickname,clan_id,last_battle_time,global_rating," + ",".join(
    f"statistics.all.{name}" for name in GLANCE_TOTALS
)
# A roster's live work answers within this (as a live lookup does), whatever the client's retries allow.
LIVE_DEADLINE = 8.0
RETRY_AFTER_BUSY = 30  # what a failed row's retry_after says when the upstream gave no figure

# One asked row: (account id, or None for a name not resolved; the tank asked; the name asked).
Asked = tuple[int | None, int | None, str | None]


class RosterService:
    def __init__(
        self,
        store: Store,
        upstream: Upstream,
        ratings_source: Ratings,
        limiter: RateLimiter,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.upstream = upstream
        self.ratings_source = ratings_source
        self.limiter = limiter
        self.clock = clock

    async def by_accounts(self, region: str, accounts: Sequence[tuple[int, int | None]]) -> dict:
        """The rows of `accounts` ((account_id, tank_id or None) each), in order."""
        return await self._roster(region, "accounts", [(a, t, None) for a, t in accounts], 0)

    async def by_names(self, region: str, names: Sequence[tuple[str, int | None]]) -> dict:
        """The rows of `names` ((nickname, tank_id or None) each), resolved exactly in one request."""
        decision = await self.limiter.reserve_global_live(1)
        if not decision.allowed:
            raise UpstreamUnavailable(
                "the shared live budget is spent", retry_after=decision.retry_after or RETRY_AFTER_BUSY
            )
        try:
            found = await asyncio.wait_for(
                self.upstream.account_names(region, [n for n, _ in names], caller="live"), LIVE_DEADLINE
            )
        except TimeoutError:
            raise UpstreamUnavailable("name lookup deadline passed", retry_after=RETRY_AFTER_BUSY) from None
        # Real nicknames are unique (case-insensitively); where one is not (the simulator repeats some),
        # the account named exactly as asked wins, then the first by nickname and account id.
        exact = {entry["nickname"]: entry["account_id"] for entry in reversed(found)}
        by_name: dict[str, int] = {}
        for entry in found:
            by_name.setdefault(entry["nickname"].lower(), entry["account_id"])
        asked = [(exact.get(name, by_name.get(name.lower())), tank, name) for name, tank in names]
        return await self._roster(region, "names", asked, 1)

    async def _roster(self, region: str, by: str, asked: Sequence[Asked], requests: int) -> dict:
        now = self.clock()
        ids = [a for a, _, _ in asked if a is not None]
        expected = await self.ratings_source.expected_values(region)
        tiers = await self.ratings_source.tiers(region)
        async with request_deadline():
            profiles = {
                doc["account_id"]: doc
                for doc in await self.store.players.get_many(region, ids)
                if doc.get("cached_at", 0) > now - ROSTER_FRESH_SECONDS
            }
            rest = [a for a in ids if a not in profiles]
            glances = {
                int(doc["account_id"]): doc
                for doc in (await self.store.glances.get_many(region, rest) if rest else [])
                if doc.get("fetched_at", 0) > now - ROSTER_FRESH_SECONDS
            }
            clan_ids = sorted({int(d["clan_id"]) for d in profiles.values() if d.get("clan_id")})
            clans = await self.store.clans.get_many(region, clan_ids) if clan_ids else {}
        unknown = [a for a in rest if a not in glances]
        fetched: dict[int, dict] = {}
        retry_after = None
        if unknown:
            outcome = await self._fetch(region, unknown, now)
            requests += outcome.requests
            fetched, retry_after = outcome.glances, outcome.retry_after
        rows: list[dict[str, Any]] = []
        counts = {"cached": 0, "live": 0, "failed": 0}
        for account_id, tank_id, name in asked:
            if account_id is None:
                row = failed_row(None, tank_id, name, "not_found")
            elif account_id in profiles:
                doc = profiles[account_id]
                row = profile_row(doc, clans.get(int(doc.get("clan_id") or 0)), tank_id, name, expected)
            elif account_id in glances:
                row = glance_row(glances[account_id], tank_id, name, expected, tiers, "cached")
            elif account_id in fetched:
                row = glance_row(fetched[account_id], tank_id, name, expected, tiers, "live")
            else:
                row = failed_row(account_id, tank_id, name, "upstream_failed")
            if row["reason"] is None:
                counts[row["source"]] += 1
            else:
                counts["failed"] += 1
            rows.append(row)
        if retry_after is not None and not counts["cached"] + counts["live"]:
            # Nothing to show at all: say so as the API's 503, so a client retries when told.
            raise UpstreamUnavailable("no row of the roster could be fetched", retry_after=retry_after)
        return {
            "region": region,
            "asked": by,
            "rows": rows,
            "counts": counts,
            "upstream_requests": requests,
            "retry_after": retry_after,
        }

    async def _fetch(self, region: str, account_ids: list[int], now: float) -> _Fetched:
        """The glances of accounts no fresh data covers: each method once per 100 of them, under one
        reservation of the shared live budget (a unit per request)."""
        cost = len(ROSTER_METHODS) * math.ceil(len(account_ids) / ROSTER_MOST)
        decision = await self.limiter.reserve_global_live(cost)
        if not decision.allowed:
            return _Fetched({}, 0, max(1, decision.retry_after or RETRY_AFTER_BUSY))
        calls = (
            self.upstream.account_info(region, account_ids, fields=ACCOUNT_FIELDS, caller="live"),
            self.upstream.account_tanks(region, account_ids, caller="live"),
            self.upstream.clans_accountinfo(region, account_ids, caller="live"),
            self.upstream.account_wtr(region, account_ids, caller="live"),
        )
        try:
            answers = await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), LIVE_DEADLINE)
        except TimeoutError:
            answers = [UpstreamUnavailable("roster deadline passed", retry_after=RETRY_AFTER_BUSY)] * len(calls)
        info, tanks, clans, wtr = answers
        for method, answer in zip(ROSTER_METHODS, answers):
            if isinstance(answer, BaseException):
                if not isinstance(answer, (UpstreamError, asyncio.CancelledError)):
                    raise answer
                log.info("roster: %s of %d accounts in %s failed: %s", method, len(account_ids), region, answer)
        if isinstance(info, BaseException) or isinstance(tanks, BaseException):
            failure = info if isinstance(info, BaseException) else tanks
            return _Fetched({}, cost, max(1, int(getattr(failure, "retry_after", RETRY_AFTER_BUSY))))
        complete = not isinstance(clans, BaseException) and not isinstance(wtr, BaseException)
        clan_of = clans if isinstance(clans, dict) else {}
        wtr_of = wtr if isinstance(wtr, dict) else {}
        glances = {a: glance_of(a, info.get(a), tanks.get(a), clan_of.get(a), wtr_of.get(a), now) for a in account_ids}
        if complete:
            # Kept for the next roster; one missing its clan or WTR is asked again next time.
            await self.store.glances.save_many(region, list(glances.values()))
        return _Fetched(glances, cost, None)


class _Fetched:
    """What a roster's fetch brought: the glances, the requests it made, and when to retry the failed."""

    __slots__ = ("glances", "requests", "retry_after")

    def __init__(self, glances: dict[int, dict], requests: int, retry_after: int | None) -> None:
        self.glances = glances
        self.requests = requests
        self.retry_after = retry_after
