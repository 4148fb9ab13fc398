"""Nickname search: tracked accounts first, else the upstream's account/list under the live-lookup limits."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Protocol

from server.contract.catalogue import SEARCH, SEARCH_RESULTS, TRACKED_SEARCH_CACHE_SECONDS, parse_value
from server.contract.errors import APIError
from server.services.concurrency import bounded_read, single_flight
from server.services.players import LIVE_DEADLINE as PLAYER_LIVE_DEADLINE
from server.serving.ratelimit import RateLimiter
from server.upstream.client import UpstreamUnavailable
from server.upstream.interface import Upstream
from store.constants import REGIONS
from store.store import Gate

MAX_RESULTS = SEARCH_RESULTS
# An upstream answer is reused this long (nicknames change rarely; a reused answer costs no live
# lookup), at most CACHE_MAX answers per process.
CACHE_SECONDS = 300.0
CACHE_MAX = 10_000
# A search that needs the upstream answers within this, like a live profile lookup.
LIVE_DEADLINE = PLAYER_LIVE_DEADLINE
# The tracked accounts' answer to a (region, prefix) is reused this long (a newly tracked account
# shows up in searches within a minute), at most TRACKED_CACHE_MAX answers per process.
TRACKED_CACHE_SECONDS = float(TRACKED_SEARCH_CACHE_SECONDS)
TRACKED_CACHE_MAX = 10_000
# Tracked-account prefix queries at once per process (one per region searched: a search of every
# region takes three); one more is answered 503 database_unavailable with Retry-After at once.
SEARCH_LIMIT = 12


class TrackedIndex(Protocol):
    """What the search needs of the tracked accounts (store/tracker.py)."""

    async def search_prefix(self, region: str, prefix: str, limit: int = 10) -> list[dict]: ...


def check_search(text: Any) -> str:
    """The search text as the catalogue's `search` parameter accepts it, or 400 invalid_search."""
    if not isinstance(text, str):
        raise APIError(SEARCH.error)
    return parse_value(SEARCH, text)


def _sort_key(row: dict) -> tuple:
    return (row["nickname"].lower(), REGIONS.index(row["region"]), row["account_id"])


def _cached(
    cache: dict[tuple[str, str], tuple[float, list[dict]]], regions: list[str], key: str, now: float
) -> tuple[dict[str, list[dict]], list[str]]:
    """The regions' unexpired answers for `key` in `cache`, and the regions without one."""
    found: dict[str, list[dict]] = {}
    missing = []
    for region in regions:
        cached = cache.get((region, key))
        if cached is not None and cached[0] > now:
            found[region] = cached[1]
        else:
            missing.append(region)
    return found, missing


class PlayerSearch:
    """``search(region, text, client)`` for GET /players?search=&region=.

    Tracked accounts answer when any matches (no live-lookup cost). Otherwise each region
    searched upstream (one, or all three when ``region`` is None) is one live lookup: it takes
    one unit of the client's live limit and one of the shared live budget, all or none (a
    refused search consumes nothing). Upstream answers are reused for CACHE_SECONDS, and
    identical concurrent searches share one upstream call; both cost no live lookup.
    ``limiter`` None (scripts, tests) applies no live limits.

    The tracked accounts are read per (region, lowercase prefix): answers are reused for
    TRACKED_CACHE_SECONDS, identical concurrent reads share one query (single-flight), each query
    holds a slot of ``gate`` (at most SEARCH_LIMIT at once, else 503 at once) under one deadline
    (503 database_unavailable with Retry-After past it); a request's regions are read at once, so
    it waits at most one deadline.
    """

    def __init__(
        self,
        tracked: TrackedIndex,
        upstream: Upstream,
        limiter: RateLimiter | None = None,
        clock: Callable[[], float] = time.time,
        gate: Gate | None = None,
    ) -> None:
        self.tracked = tracked
        self.upstream = upstream
        self.limiter = limiter
        self.clock = clock
        self.gate = gate if gate is not None else Gate("search", SEARCH_LIMIT)
        self._cache: dict[tuple[str, str], tuple[float, list[dict]]] = {}
        self._flights: dict[tuple, asyncio.Future] = {}
        self._tracked_cache: dict[tuple[str, str], tuple[float, list[dict]]] = {}
        self._tracked_flights: dict[tuple[str, str], asyncio.Future] = {}

    async def search(self, region: str | None, text: str, client: str) -> dict:
        """{search, region, source, results: [{account_id, nickname, region, tracked}]} (at most 10).

        ``source`` says where the results came from: "tracked" or "upstream". Raises APIError
        invalid_search / invalid_region, rate_limited / rate_limited_global (with Retry-After),
        or UpstreamUnavailable when the game API does not answer in time.
        """
        text = check_search(text)
        if region is not None and region not in REGIONS:
            raise APIError("invalid_region")
        regions = [region] if region is not None else list(REGIONS)
        results = await self._tracked(regions, text)
        source = "tracked"
        if not results:
            results = await self._upstream(regions, text, client)
            source = "upstream"
        return {"search": text, "region": region, "source": source, "results": results}

    async def _tracked(self, regions: list[str], text: str) -> list[dict]:
        key = text.lower()
        found, missing = _cached(self._tracked_cache, regions, key, self.clock())
        if missing:
            reads = await asyncio.gather(
                *(
                    single_flight(self._tracked_flights, (region, key), lambda r=region: self._read_tracked(r, key))
                    for region in missing
                )
            )
            found.update(zip(missing, reads, strict=True))
        rows = [
            {
                "account_id": int(row["account_id"]),
                "nickname": row["nickname"],
                "region": row["region"],
                "tracked": True,
            }
            for region in regions
            for row in found[region]
        ]
        return sorted(rows, key=_sort_key)[:MAX_RESULTS]

    async def _read_tracked(self, region: str, key: str) -> list[dict]:
        """One region's tracked matches of the lowercase prefix `key`, read in a slot of the gate
        and cached (a failure is not)."""
        async with bounded_read(self.gate):
            rows = await self.tracked.search_prefix(region, key, limit=MAX_RESULTS)
        # Insertion order is expiry order (one lifetime for all; a re-read moves to the end): the
        # oldest answers go first, the expired ones and, when full, the oldest live one.
        cache, now = self._tracked_cache, self.clock()
        cache.pop((region, key), None)
        while cache and (len(cache) >= TRACKED_CACHE_MAX or next(iter(cache.values()))[0] <= now):
            del cache[next(iter(cache))]
        cache[(region, key)] = (now + TRACKED_CACHE_SECONDS, rows)
        return rows

    async def _upstream(self, regions: list[str], text: str, client: str) -> list[dict]:
        key = text.lower()
        answers, missing = _cached(self._cache, regions, key, self.clock())
        if missing:
            flight_key = (tuple(missing), key)
            pending = self._flights.get(flight_key)
            if pending is None:
                # The client's limit is decided here, synchronously (its 429 is its own); the shared
                # budget inside the flight, which callers joining it share (its 429 is everyone's).
                self._hit_client(client, len(missing))
                pending = asyncio.ensure_future(self._admit_and_fetch(client, missing, text))
                self._flights[flight_key] = pending
                pending.add_done_callback(lambda done: self._flight_done(flight_key, done))
            answers.update(await asyncio.shield(pending))
        rows = [{**row, "region": region, "tracked": False} for region in regions for row in answers[region]]
        return sorted(rows, key=_sort_key)[:MAX_RESULTS]

    def _flight_done(self, key: tuple, done: asyncio.Future) -> None:
        if self._flights.get(key) is done:
            del self._flights[key]
        if not done.cancelled():
            done.exception()  # retrieved: every waiter re-raises it itself

    def _hit_client(self, client: str, lookups: int) -> None:
        """Take `lookups` of the client's live lookups, or none (APIError rate_limited)."""
        if self.limiter is None:
            return
        for taken in range(lookups):
            decision = self.limiter.hit(client, "live")
            if not decision.allowed:
                for _ in range(taken):
                    self.limiter.refund(client, "live")
                raise APIError(
                    "rate_limited",
                    "live lookups are limited to %d per minute per client" % decision.limit,
                    headers={"Retry-After": str(decision.retry_after)},
                )

    async def _admit_and_fetch(self, client: str, regions: list[str], text: str) -> dict[str, list[dict]]:
        """Reserve one unit of the shared live budget per region, or none (the client's lookups
        are then refunded: APIError rate_limited_global), and search."""
        limiter = self.limiter
        if limiter is not None:
            reserved = 0
            try:
                for _ in regions:
                    budget = await limiter.reserve_global_live()
                    if not budget.allowed:
                        raise APIError("rate_limited_global", headers={"Retry-After": str(budget.retry_after)})
                    reserved += 1
            except BaseException:
                for _ in regions:
                    limiter.refund(client, "live")
                for _ in range(reserved):
                    await limiter.release_global_live()
                raise
        return await self._fetch(regions, text)

    async def _fetch(self, regions: list[str], text: str) -> dict[str, list[dict]]:
        searches = (self.upstream.account_list(r, text, limit=MAX_RESULTS, caller="live") for r in regions)
        try:
            found = await asyncio.wait_for(asyncio.gather(*searches), LIVE_DEADLINE)
        except TimeoutError:
            raise UpstreamUnavailable("live search deadline passed", retry_after=30) from None
        expires = self.clock() + CACHE_SECONDS
        if len(self._cache) + len(regions) > CACHE_MAX:
            self._cache.clear()  # worst case: some searches ask the upstream again
        answers = {}
        for region, rows in zip(regions, found, strict=True):
            self._cache[(region, text.lower())] = (expires, rows)
            answers[region] = rows
        return answers
