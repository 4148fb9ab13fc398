"""Player profiles: cache first, live lookups within budgets, ratings, snapshots."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from server.contract.catalogue import HOT_COPY_SECONDS, PROFILE_MAX_AGE
from server.contract.errors import APIError
from server.domain.profiles import build_profile, profile_view, snapshot_of, wtr_of
from server.services.profile_ratings import ProfileRatings
from server.services.profile_views import ProfileViews
from server.serving.answers import Tag, no_answer_cache, player_tag
from server.upstream.budget import Caller
from server.upstream.client import (
    ACCOUNT_FIELDS,
    TANKS_FIELDS,
    UpstreamError,
    UpstreamUnavailable,
)
from store.client import request_deadline

if TYPE_CHECKING:  # types only
    from server.services.expected import Ratings
    from server.services.tracking import Tracking
    from server.serving.ratelimit import RateLimiter
    from server.upstream.interface import Upstream
    from store.store import Store

log = logging.getLogger("statsapi.players")

HOT_SECONDS = HOT_COPY_SECONDS  # hot profiles are held in-process this long (server.contract.catalogue)
TOUCH_EVERY = 300.0  # how often a request refreshes last_requested in the database
TOUCHED_MAX = 100_000  # profiles whose last touch is remembered in-process
# A live lookup answers within this, whatever the upstream client's retries would allow:
# a public API should say 503 quickly rather than hold the caller for half a minute.
LIVE_DEADLINE = 8.0
REFRESH_AHEAD_EVERY = 60  # seconds between refresh-ahead runs (each refetches what expires soonest)
# A refresh's account/wtr runs beside its tanks/stats (the client paces a realm's requests, so it may
# wait its turn behind them); once tanks/stats answered, the refresh waits at most this much longer
# for it, then stores the WTR null with its reason (a slow or failing WTR never fails it).
WTR_GRACE = 3.0


class PlayerService:
    def __init__(
        self,
        store: Store,
        upstream: Upstream,
        ratings_source: Ratings,
        limiter: RateLimiter,  # tests that never look up live may pass None
        clock: Callable[[], float] = time.time,
        tracker: Tracking | None = None,
        on_write: Callable[[Tag], None] | None = None,
        views: ProfileViews | None = None,
        ratings: ProfileRatings | None = None,
    ) -> None:
        self.store = store
        # A profile's ratings (shared with the clan refresh: server/services/profile_ratings.py).
        self.ratings = ratings or ProfileRatings(ratings_source, clock)
        # A cached profile's view with its standing and place (server/services/profile_views.py).
        self.views = views or ProfileViews()
        self.tracker = tracker  # looked-up accounts are measured daily (server/services/tracker.py)
        self.upstream = upstream
        self.ratings_source = ratings_source
        self.limiter = limiter
        self.clock = clock
        self._hot: dict[tuple, tuple[float, dict]] = {}
        self._touched: dict[tuple, float] = {}
        self._fetching: dict[tuple, asyncio.Future] = {}
        self._background: set[asyncio.Task] = set()
        self.on_write = on_write or no_answer_cache  # told of every profile it wrote (the answer cache)

    # --- reads ---------------------------------------------------------------------
    async def profile(self, region: str, account_id: int, client: str) -> dict:
        key = (region, account_id)
        now = self.clock()
        hot = self._hot.get(key)
        if hot and hot[0] > now:
            return hot[1]
        async with request_deadline():
            doc = await self.store.players.get(region, account_id)
        if doc and doc["cached_at"] > now - PROFILE_MAX_AGE:
            self._touch(key, now)
            view = await self.views.of(doc)
            if view["ratings"]["available"]:
                self._hot[key] = (now + HOT_SECONDS, view)
                if len(self._hot) > 50_000:
                    self._hot.clear()
            return view
        return await self._live(region, account_id, client)

    async def cached_profiles(self, region: str, account_ids: list[int]) -> dict:
        """/players?ids=: the stored profiles of `account_ids` (one read), whatever their age (each
        says its cached_at), in the order asked; the others listed as missing, never fetched live
        and never touched (a roster polled by a bot does not make its members "popular")."""
        async with request_deadline():
            docs = {doc["account_id"]: doc for doc in await self.store.players.get_many(region, account_ids)}
            profiles = [await self.views.of(docs[a]) for a in account_ids if a in docs]
        return {
            "region": region,
            "ids": account_ids,
            "profiles": profiles,
            "missing": [a for a in account_ids if a not in docs],
        }

    def _touch(self, key: tuple, now: float) -> None:
        # Refresh-ahead needs to know which profiles are popular; once per 5 min is enough.
        # The write runs in the background: the answer never waits on it (a hung database
        # would otherwise hold a cached read for a second deadline).
        if now - self._touched.get(key, 0) > TOUCH_EVERY:
            if len(self._touched) > TOUCHED_MAX:
                self._touched.clear()  # worst case: one extra touch write per profile
            self._touched[key] = now
            self._spawn(self.store.players.touch(key[0], key[1], now))
            if self.tracker is not None:
                self._spawn(self.tracker.looked_up(key[0], key[1], now))

    async def _live(self, region: str, account_id: int, client: str) -> dict:
        key = (region, account_id)
        pending = self._fetching.get(key)
        if pending is not None:
            # Concurrent misses for one account share one upstream call.
            return profile_view(await asyncio.shield(pending), live_fetched=True)
        decision = self.limiter.hit(client, "live")
        if not decision.allowed:
            raise APIError(
                "rate_limited",
                "live lookups are limited to %d per minute per client" % decision.limit,
                headers={"Retry-After": str(decision.retry_after)},
            )
        future = asyncio.get_running_loop().create_future()
        self._fetching[key] = future
        try:
            try:
                budget = await self.limiter.reserve_global_live()
            except Exception:
                self.limiter.refund(client, "live")
                raise
            if not budget.allowed:
                self.limiter.refund(client, "live")
                raise APIError("rate_limited_global", headers={"Retry-After": str(budget.retry_after)})
            try:
                doc = await asyncio.wait_for(self.fetch_and_store(region, account_id, caller="live"), LIVE_DEADLINE)
            except TimeoutError:
                raise UpstreamUnavailable("live lookup deadline passed", retry_after=30) from None
            future.set_result(doc)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters re-raise it themselves
            raise
        finally:
            self._fetching.pop(key, None)
        self._spawn(self.rate_profile(region, account_id))
        self._touched[key] = 0
        return profile_view(doc, live_fetched=True)

    async def fetch_and_store(
        self, region: str, account_id: int, with_ratings: bool = False, caller: Caller = "refresh"
    ) -> dict:
        """Fetch one account from the upstream and store it; a failure is never stored."""
        info = (await self.upstream.account_info(region, [account_id], fields=ACCOUNT_FIELDS, caller=caller)).get(
            account_id
        )
        if not info:
            raise APIError("player_not_found", region=region)
        if caller == "live":
            # A live lookup spends its upstream share on what it must answer: its WTR is asked by the
            # next refresh or the tracker's daily batch (wtr_reason not_fetched until then). A third
            # request per lookup halved the lookups a flood admits within their deadline.
            raw_tanks = await self.upstream.tanks_stats(region, account_id, fields=TANKS_FIELDS, caller=caller)
            wtr = None
        else:
            wtr_asked = asyncio.ensure_future(self._wtr(region, account_id, caller))
            try:
                raw_tanks = await self.upstream.tanks_stats(region, account_id, fields=TANKS_FIELDS, caller=caller)
            except BaseException:
                wtr_asked.cancel()
                raise
            try:
                found_wtr = await asyncio.wait_for(wtr_asked, WTR_GRACE)
            except TimeoutError:
                log.warning("account/wtr of %s in %s: no answer within %.1f s", account_id, region, WTR_GRACE)
                found_wtr = None
            wtr = wtr_of(found_wtr, account_id)
        doc = build_profile(region, account_id, info, raw_tanks, self.clock(), wtr)
        if with_ratings:
            doc["ratings"] = await self.ratings.of(doc)
        doc["last_requested"] = self.clock()
        await self.store.players.save(doc)
        await self.store.players.save_snapshots([snapshot_of(doc)])
        self.written(region, account_id)
        if caller == "live" and self.tracker is not None:
            # Tracked from its first successful lookup; this fetch is today's visit (in the background).
            self.tracker.adopt_later(region, account_id, info, raw_tanks, doc["cached_at"])
        return doc

    async def _wtr(self, region: str, account_id: int, caller: Caller) -> dict[int, int | None] | None:
        """account/wtr of one looked-up account; None when the request failed (logged)."""
        try:
            return await self.upstream.account_wtr(region, [account_id], caller=caller)
        except UpstreamError as exc:
            log.warning("account/wtr of %s in %s failed: %s", account_id, region, exc)
            return None

    async def rate_profile(self, region: str, account_id: int) -> None:
        """The rating calculator that follows a live fetch (runs in the background)."""
        doc = await self.store.players.get(region, account_id)
        if not doc:
            return
        ratings = await self.ratings.of(doc)
        if ratings is None:
            return
        if await self.store.players.set_ratings(region, account_id, doc["cached_at"], ratings):
            doc["ratings"] = ratings
            await self.store.players.save_snapshots([snapshot_of(doc)])
            self.written(region, account_id)

    def written(self, region: str, account_id: int) -> None:
        """This process changed the account's stored data: its next read shows it."""
        self._hot.pop((region, account_id), None)
        self.on_write(player_tag(region, account_id))

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task:
        task = asyncio.create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("background write failed: %s", type(task.exception()).__name__)

    # --- jobs ----------------------------------------------------------------------
    async def refresh_ahead(self, slot: int, budget: int = 50) -> str:
        """Refetch recently requested profiles before they expire, ratings included."""
        now = self.clock()
        due = await self.store.players.due_for_refresh(now - PROFILE_MAX_AGE, now - 0.75 * PROFILE_MAX_AGE, budget)
        refreshed = failed = 0
        for item in due:
            try:
                await self.fetch_and_store(item["region"], item["account_id"], with_ratings=True, caller="refresh")
                refreshed += 1
            except Exception as exc:
                failed += 1
                log.info("refresh of %s:%s failed: %s", item["region"], item["account_id"], type(exc).__name__)
        return f"refreshed {refreshed}, failed {failed}"

    async def close(self) -> None:
        if self._background:
            await asyncio.wait(list(self._background), timeout=5)
