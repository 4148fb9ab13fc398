"""Clan details, the hourly clan refresh job and the weekly clan digest."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from server.contract.catalogue import CLAN_MAX_AGE, HOT_COPY_SECONDS
from server.contract.errors import APIError
from server.domain.clans import (
    DIGEST_DAYS,
    clan_document,
    details_view,
    known_ratings,
    member_row,
    member_snapshot,
    members_of,
    rating_fields,
    refreshed_ratings,
    stale_members,
    weekly_digest,
)
from server.domain.days import utc_day
from server.domain.profiles import build_profile, wtr_of
from server.services.concurrency import heavy_slot, single_flight
from server.services.players import PlayerService
from server.services.profile_ratings import ProfileRatings
from server.serving.answers import Tag, clan_tag, no_answer_cache
from server.upstream.client import (
    ACCOUNT_FIELDS,
    ID_LIMITS,
    TANKS_FIELDS,
    UpstreamError,
    UpstreamUnavailable,
)
from server.upstream.interface import Upstream
from store.client import job_deadline, request_deadline
from store.constants import REGIONS
from store.errors import is_database_error
from store.players import PROFILE_TTL_SECONDS
from store.store import Store

if TYPE_CHECKING:  # types only
    from server.services.tracking import Tracking

log = logging.getLogger("statsapi.clans")

BATCH = 100  # clans per refresh batch: clans/info and clanratings take 100 ids per request
REFRESH_EVERY = CLAN_MAX_AGE  # refreshed hourly, so cached clan data is at most about one hour old
# The job runs once per hour slot, at a slightly different second each time: a clan refreshed
# 58 minutes ago is due, or it would only be refreshed every second hour.
REFRESH_SLACK = 600
REFERENCE_KEEP = 7 * 86400  # keep refreshing a clan this long after a player or seed named it
REQUEST_BUDGET = 1000  # upstream requests per refresh run (clans, members, member ratings)
RATING_BUDGET = 200  # of which at most this many tanks/stats calls for member ratings
HOT_SECONDS = HOT_COPY_SECONDS  # clan views are held in-process this long (server.contract.catalogue)
DIGEST_MAX_AGE = 3600
DIGEST_EVERY = 3600  # seconds between digest runs (each builds the digests that are due)
DIGEST_CLANS_PER_RUN = 5000

CLAN_FIELDS = "clan_id,is_clan_disbanded,tag,name,members_count,members"
RATING_FIELDS = "clan_id,fb_elo_rating_10,fb_elo_rating_8"
STRONGHOLD_FIELDS = "clan_id,skirmish_statistics"


def clan_requests(clans: int) -> int:
    """Upstream requests for one batch of clans: clans/info, clanratings, stronghold by 10s."""
    per_call = ID_LIMITS["wot/stronghold/claninfo"]
    return 2 + -(-clans // per_call)


# --- the service ----------------------------------------------------------------------
class _NotFetched:
    """Stands for an upstream answer whose call failed (None means: fetched, nothing there)."""


_NOT_FETCHED = _NotFetched()


@dataclasses.dataclass
class _Run:
    """Bookkeeping of one refresh run: the upstream request budget and the outcome counters."""

    requests_left: int
    ratings_left: int
    requests: int = 0
    refreshed: int = 0
    failed: int = 0
    not_found: int = 0
    disbanded: int = 0
    rated: int = 0
    partial: int = 0  # refreshed from clans/info with older elo and/or skirmish figures kept
    ratings_kept: int = 0  # of which clanratings/clans failed (older elo figures)
    stronghold_kept: int = 0  # of which stronghold/claninfo failed (older skirmish figures)
    stopped: bool = False

    def spend(self, n: int = 1) -> None:
        self.requests += n
        self.requests_left -= n


class ClanService:
    def __init__(
        self,
        store: Store,
        upstream: Upstream,
        players: PlayerService,
        clock: Callable[[], float] = time.time,
        request_budget: int = REQUEST_BUDGET,
        rating_budget: int = RATING_BUDGET,
        tracker: Tracking | None = None,
        on_write: Callable[[Tag], None] | None = None,
        ratings: ProfileRatings | None = None,
    ) -> None:
        self.store = store
        # Members' ratings, composed as a player's are (server/services/profile_ratings.py; wired
        # into both); a partial build without one (scripts) shares the player service's.
        self.ratings = ratings or players.ratings
        self.on_write = on_write or no_answer_cache  # told of every clan it wrote (the answer cache)
        self.tracker = tracker  # members of cached clans are measured daily (server/services/tracker.py)
        self.upstream = upstream
        self.players = players
        self.clock = clock
        self.request_budget = request_budget
        self.rating_budget = rating_budget
        self._hot: dict[tuple, tuple[float, dict]] = {}
        self._digests_building: dict[tuple, asyncio.Future] = {}

    # --- reads ---------------------------------------------------------------------
    async def details(self, region: str, clan_id: int) -> dict:
        """The cached clan, whatever its age (cached_at tells); never fetched live."""
        key = (region, clan_id)
        hot = self._hot.get(key)
        if hot and hot[0] > time.monotonic():
            return hot[1]
        async with request_deadline():
            doc = await self.store.clans.get(region, clan_id)
        if doc is None:
            raise APIError("clan_not_cached")
        view = details_view(doc)
        if len(self._hot) > 20_000:
            self._hot.clear()
        self._hot[key] = (time.monotonic() + HOT_SECONDS, view)
        return view

    def forget_hot(self) -> None:
        """Drop in-process views (other processes' views expire within HOT_SECONDS)."""
        self._hot.clear()

    async def weekly(self, region: str, clan_id: int) -> dict:
        async with request_deadline():
            doc = await self.store.clans.get(region, clan_id)
            if doc is None:
                raise APIError("clan_not_cached")
            now = self.clock()
            stored = await self.store.clans.get_digest(region, clan_id)
        if (
            stored
            and now - DIGEST_MAX_AGE <= stored["computed_at"] <= now
            and stored["period_end"] == utc_day(now)
            and stored["clan_cached_at"] == doc["cached_at"]
        ):
            return stored["data"]
        # Concurrent first requests for one clan share a single build.
        key = (region, clan_id, doc["cached_at"])
        return await single_flight(self._digests_building, key, lambda: self._build_digest_now(doc, now))

    async def _build_digest_now(self, doc: dict, now: float) -> dict:
        """A build for a request: one of the process's heavy slots (else 503 at once), one deadline."""
        async with heavy_slot(self.store.heavy):
            async with request_deadline():
                return await self._build_digest(doc, now)

    async def _build_digest(self, doc: dict, now: float) -> dict:
        end = utc_day(now)
        start = (dt.date.fromisoformat(end) - dt.timedelta(days=DIGEST_DAYS)).isoformat()
        ids = [m["account_id"] for m in doc.get("members") or []]
        snapshots = await self.store.players.snapshots_for_accounts(doc["region"], ids, start, end) if ids else []
        data = weekly_digest(doc, snapshots, start, end, now)
        await self.store.clans.save_digest(doc["region"], doc["clan_id"], data, now, doc["cached_at"])
        self.written(doc["region"], doc["clan_id"])
        return data

    def written(self, region: str, clan_id: int) -> None:
        """This process changed the clan's stored data: its next read shows it."""
        self._hot.pop((region, clan_id), None)
        self.on_write(clan_tag(region, clan_id))

    # --- jobs ----------------------------------------------------------------------
    async def build_digests(self, slot: int | None = None) -> str:
        """Recompute the digests of recently refreshed clans (hourly job)."""
        now = self.clock()
        keys = await self.store.clans.cached_since(now - REFERENCE_KEEP, DIGEST_CLANS_PER_RUN)
        built = 0
        for region, clan_id in keys:
            doc = await self.store.clans.get(region, clan_id)
            if doc is not None:
                await self._build_digest(doc, now)
                built += 1
        return f"digests {built}"

    async def refresh(self, slot: int | None = None) -> str:
        """Refresh due clans (seeded or named by cached players) within the request budget.

        A clan is written in one update only when its info and member data arrived; on a
        failure of those its old document stays as it was. When only clanratings/clans or
        stronghold/claninfo failed, the clan is still refreshed (a partial refresh): the missing
        figures keep their stored values and their own older time (ratings_updated_at,
        stronghold_updated_at), and the run goes on.
        """
        now = self.clock()
        due, referenced = await self._due(now)
        if not due:
            return "no clans due"
        run = _Run(requests_left=self.request_budget, ratings_left=self.rating_budget)
        batches: list[tuple[str, list[int]]] = []
        for region in REGIONS:
            ids = [c for r, c in due if r == region]
            batches.extend((region, ids[i : i + BATCH]) for i in range(0, len(ids), BATCH))
        # Oldest data first across regions (`due` is ordered by cached_at).
        order = {key: i for i, key in enumerate(due)}
        batches.sort(key=lambda b: order[(b[0], b[1][0])])
        attempted = 0
        for region, ids in batches:
            # The clan requests, then about one account/info request per clan (<= 100 members).
            while ids and clan_requests(len(ids)) + len(ids) > run.requests_left:
                ids = ids[:-1]
            if run.stopped or not ids:
                break
            attempted += len(ids)
            await self._refresh_batch(region, ids, run, referenced)
        partial = f"partial {run.partial}"
        if run.partial:
            partial += f" (older elo kept {run.ratings_kept}, older skirmishes kept {run.stronghold_kept})"
        outcome = (
            f"refreshed {run.refreshed} clans, failed {run.failed}, {partial}, not found {run.not_found}, "
            f"disbanded {run.disbanded}, "
            f"members rated {run.rated}, upstream requests {run.requests}, "
            f"left for later {len(due) - attempted}"
        )
        if run.refreshed == 0 and run.failed > 0:
            raise RuntimeError(outcome)
        return outcome

    async def _due(self, now: float) -> tuple[list[tuple[str, int]], set[tuple[str, int]]]:
        gone = await self.store.clans.disbanded()
        referenced = set(await self.store.clans.seeded())
        referenced |= set(await self.store.clans.referenced_by_players(REGIONS, now - PROFILE_TTL_SECONDS))
        referenced = {(r, c) for r, c in referenced if r in REGIONS and c > 0}
        candidates = referenced | set(await self.store.clans.referenced_since(now - REFERENCE_KEEP))
        candidates -= gone  # a disbanded clan stays dropped even while stale profiles still name it
        cached = await self.store.clans.cached_at_of(sorted(candidates))
        threshold = now - (REFRESH_EVERY - REFRESH_SLACK)
        due = [key for key in candidates if cached.get(key, 0) <= threshold]
        due.sort(key=lambda key: (cached.get(key, 0), key))
        return due, referenced

    async def _refresh_batch(self, region: str, ids: list[int], run: _Run, referenced: set) -> None:
        results = await asyncio.gather(
            self.upstream.clans_info(region, ids, fields=CLAN_FIELDS, caller="clans"),
            self.upstream.clan_ratings(region, ids, fields=RATING_FIELDS, caller="clans"),
            self.upstream.stronghold_claninfo(region, ids, fields=STRONGHOLD_FIELDS, caller="clans"),
            return_exceptions=True,
        )
        run.spend(clan_requests(len(ids)))
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, UpstreamError):
                raise result
        info_result, ratings_result, stronghold_result = results
        if isinstance(info_result, BaseException):
            log.warning("clan batch %s (%d clans) skipped: %s", region, len(ids), info_result)
            run.failed += len(ids)
            if isinstance(info_result, UpstreamUnavailable):
                run.stopped = True  # the upstream is down: leave the rest for the next run
            return
        infos = cast(dict, info_result)
        # A failed ratings or stronghold call loses only its own figures: the clans are still
        # refreshed from clans/info and keep those figures as stored (with their older time).
        ratings_fetched = not isinstance(ratings_result, BaseException)
        stronghold_fetched = not isinstance(stronghold_result, BaseException)
        for name, result in (("clanratings/clans", ratings_result), ("stronghold/claninfo", stronghold_result)):
            if isinstance(result, BaseException):
                log.warning(
                    "clan batch %s (%d clans): %s failed, older figures kept: %s", region, len(ids), name, result
                )
        ratings = cast(dict, ratings_result) if ratings_fetched else {}
        strongholds = cast(dict, stronghold_result) if stronghold_fetched else {}
        disbanded = [c for c in ids if (infos.get(c) or {}).get("is_clan_disbanded")]
        if disbanded:
            # Gone for good: its data is dropped (404 clan_not_cached) and it leaves the refresh.
            await self.store.clans.forget_disbanded(region, disbanded, self.clock())
            for clan_id in disbanded:
                self.written(region, clan_id)
            run.disbanded += len(disbanded)
        found = [c for c in ids if infos.get(c) and c not in disbanded]
        run.not_found += len(ids) - len(found) - len(disbanded)

        member_ids = list(dict.fromkeys(int(m["account_id"]) for c in found for m in members_of(infos[c])))
        accounts, failed_ids = await self._member_accounts(region, member_ids, run)
        if self.tracker is not None:
            fetched = [(a, (accounts.get(a) or {}).get("nickname")) for a in member_ids if accounts.get(a)]
            if fetched:
                try:
                    await self.tracker.track_members(region, fetched, self.clock())
                except Exception as exc:  # tracking is repeated every refresh: the clans still refresh
                    if not is_database_error(exc):
                        raise
                    log.warning("clan batch %s: members not all tracked this time: %s", region, type(exc).__name__)
        with job_deadline():
            old_docs = await self.store.clans.get_many(region, found)
            profiles = (
                {
                    p["account_id"]: p
                    for p in await self.store.players.get_many(region, member_ids, {"account_id": 1, "ratings": 1})
                }
                if member_ids
                else {}
            )

        for clan_id in found:
            members = members_of(infos[clan_id])
            if any(int(m["account_id"]) in failed_ids for m in members):
                run.failed += 1  # member data missing: keep the old document whole
                continue
            await self._write_clan(
                region,
                clan_id,
                infos[clan_id],
                ratings.get(clan_id) if ratings_fetched else _NOT_FETCHED,
                strongholds.get(clan_id) if stronghold_fetched else _NOT_FETCHED,
                members,
                accounts,
                old_docs.get(clan_id),
                profiles,
                run,
                referenced,
            )

    async def _member_accounts(self, region: str, member_ids: list[int], run: _Run) -> tuple[dict, set]:
        """account/info for the members, 100 per request; ids of failed requests come back apart."""
        chunks = [member_ids[i : i + BATCH] for i in range(0, len(member_ids), BATCH)]
        affordable, skipped = chunks[: max(0, run.requests_left)], chunks[max(0, run.requests_left) :]
        results = await asyncio.gather(
            *(self.upstream.account_info(region, chunk, fields=ACCOUNT_FIELDS, caller="clans") for chunk in affordable),
            return_exceptions=True,
        )
        run.spend(len(affordable))
        accounts: dict[int, dict | None] = {}
        failed_ids: set[int] = {a for chunk in skipped for a in chunk}
        for chunk, result in zip(affordable, results):
            if isinstance(result, BaseException):
                if not isinstance(result, UpstreamError):
                    raise result
                log.warning("member accounts %s (%d) failed: %s", region, len(chunk), result)
                failed_ids.update(chunk)
                if isinstance(result, UpstreamUnavailable):
                    run.stopped = True
            else:
                accounts.update(result)
        return accounts, failed_ids

    async def _write_clan(
        self,
        region: str,
        clan_id: int,
        info: dict,
        ratings: dict | None | _NotFetched,
        stronghold: dict | None | _NotFetched,
        members: list[dict],
        accounts: dict,
        old_doc: dict | None,
        profiles: dict,
        run: _Run,
        referenced: set,
    ) -> None:
        now = self.clock()
        known = known_ratings(members, profiles, old_doc)
        fresh, wtr = await self._rate_members(region, members, accounts, known, now, run)

        rows, snapshots = [], []
        for m in members:
            account_id = int(m["account_id"])
            account = accounts.get(account_id)
            rating = fresh.get(account_id) or known[account_id]
            rows.append(member_row(m, account, rating))
            if account is not None:
                snapshots.append(member_snapshot(region, account_id, account, now, rating, wtr.get(account_id)))
        ratings_block = refreshed_ratings(
            None if isinstance(ratings, _NotFetched) else ratings,
            None if isinstance(stronghold, _NotFetched) else stronghold,
            old_doc,
            now,
            ratings_fetched=not isinstance(ratings, _NotFetched),
            stronghold_fetched=not isinstance(stronghold, _NotFetched),
        )
        doc = clan_document(region, clan_id, info, rows, ratings_block, old_doc, now, (region, clan_id) in referenced)
        with job_deadline():  # a job's writes, not a request's: they may wait behind request reads
            await self.store.players.save_snapshots(snapshots)
            await self.store.clans.save(doc)
        self.written(region, clan_id)
        for snapshot in snapshots:  # the members' histories changed too
            self.players.written(region, snapshot["account_id"])
        run.refreshed += 1
        if isinstance(ratings, _NotFetched) or isinstance(stronghold, _NotFetched):
            run.partial += 1
            run.ratings_kept += isinstance(ratings, _NotFetched)
            run.stronghold_kept += isinstance(stronghold, _NotFetched)

    async def _wtr(self, region: str, account_ids: list[int]) -> dict[int, int | None] | None:
        """account/wtr of the members being rated (batched by 100); None when it failed."""
        try:
            return await self.upstream.account_wtr(region, account_ids, caller="clans")
        except UpstreamError as exc:
            log.warning("clans: account/wtr of %s members in %s failed: %s", len(account_ids), region, exc)
            return None

    async def _rate_members(
        self, region: str, members: list[dict], accounts: dict, known: dict, now: float, run: _Run
    ) -> tuple[dict[int, dict | None], dict[int, int]]:
        """WN8/WN7/EFF for members whose rating is missing or a day old, within the budgets, and
        the WTR of those it rated (those Wargaming rates).

        Uses the account/info answer already fetched plus one tanks/stats call per member and
        one account/wtr for them all, and stores the complete profile like a player fetch with
        ratings would.
        """
        stale = stale_members(members, accounts, known, now)
        chosen = stale[: max(0, min(run.ratings_left, run.requests_left - 1))]  # and one account/wtr
        if not chosen:
            return {}, {}
        # Their WTR in one request beside (at most 100 members a clan); a failure leaves it null.
        wtr_asked = asyncio.ensure_future(self._wtr(region, chosen))
        results = await asyncio.gather(
            *(self.upstream.tanks_stats(region, a, fields=TANKS_FIELDS, caller="clans") for a in chosen),
            return_exceptions=True,
        )
        found_wtr = await wtr_asked
        run.spend(len(chosen) + 1)
        run.ratings_left -= len(chosen)
        fresh: dict[int, dict | None] = {}
        for account_id, raw_tanks in zip(chosen, results):
            if isinstance(raw_tanks, BaseException):
                if not isinstance(raw_tanks, UpstreamError):
                    raise raw_tanks
                if isinstance(raw_tanks, UpstreamUnavailable):
                    run.ratings_left = 0  # keep the remaining budget for clan data
                continue  # this member keeps the rating they had
            if raw_tanks is None:
                continue
            profile = build_profile(
                region, account_id, accounts[account_id], raw_tanks, now, wtr_of(found_wtr, account_id)
            )
            ratings = await self.ratings.of(profile, now)  # on this job's clock, like the snapshot it feeds
            if not ratings:
                continue
            profile["ratings"] = ratings
            with job_deadline():
                await self.store.players.save(profile)
            self.players.written(region, account_id)
            fresh[account_id] = rating_fields(ratings)
            run.rated += 1
        return fresh, {a: w for a, w in (found_wtr or {}).items() if w is not None and a in fresh}
