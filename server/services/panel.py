"""Each realm's random panel: a uniform draw of account ids, the server-wide figures' population.

The frame: account ids drawn uniformly at random from the realm's id range (PANEL_RANGES), probed
with account/info PROBE_BATCH at a time; every id that is an account joins it, active or not. The
panel on a day is the frame's accounts that played in the ACTIVE_DAYS before: since the frame is a
uniform draw of ids, made without looking at who plays, that is a simple random sample of the
realm's active accounts, whatever the day. The tracker measures every frame account daily (an
account that did not play costs 1/100 of a request), so a player who quits leaves the panel when
their last battle is ACTIVE_DAYS old and one who returns is in it on the day they play again, with
no redraw. The refresh (daily) counts the members; below the target it probes more ids (the frame
stays a uniform draw: new ids are drawn the same way), above TRIM_ABOVE x target it drops frame
ids chosen uniformly at random. A frame account's figures count from its second visit on: the
first measures its state, the battles after it are its changes (docs/data.md, "The random panel").
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pymongo.errors import PyMongoError

from server.contract.config import PANEL_SIZE
from server.domain.days import DAY_SECONDS, days_before, utc_day
from server.upstream.client import UpstreamError
from store.client import job_deadline
from store.constants import REGIONS
from store.errors import is_database_error
from store.tracker import tracked_id

if TYPE_CHECKING:
    from server.upstream.interface import Upstream
    from store.store import Store

log = logging.getLogger("statsapi.panel")

REFRESH_EVERY = 3600  # seconds between looks; the work is done once per UTC day and region
ACTIVE_DAYS = 30  # a member played within this many days
PROBE_BATCH = 100  # account/info takes 100 ids per request
PROBE_FIELDS = "account_id,last_battle_time"
PROBES_PER_RUN = 2000  # account/info requests of one region's refresh at most (the rest the next hour)
TRIM_ABOVE = 1.1  # members above this share of the target (and a batch): frame ids are dropped at random
TRACK_SECONDS = 3 * DAY_SECONDS  # the frame is tracked this long after each refresh (renewed daily)
STATUS_EVERY = 30.0  # seconds between /status figures read from the database
PROBE_LOG_DAYS = 30  # days of probing requests kept (the daily cost's average)
# Each realm's account ids: Wargaming's documented ranges (an id outside its realm's is refused).
PANEL_RANGES = {
    "eu": (500_000_000, 999_999_999),
    "na": (1_000_000_000, 1_999_999_999),
    "asia": (2_000_000_000, 2_999_999_999),
}


def members_of(books: dict[str, dict], now: float, days: float = ACTIVE_DAYS) -> int:
    """Frame accounts whose last battle is at most `days` old."""
    since = now - days * DAY_SECONDS
    return sum(1 for doc in books.values() if float(doc.get("last_battle_time") or 0) >= since)


def daily_requests(frame: int, played_day: int, probe_log: dict[str, int]) -> dict[str, int]:
    """The panel's upstream requests a day: tracking (account/info for every frame account, 100 a
    request; tanks/stats for each that played; no account/wtr: the tracker asks none for an account
    tracked for the panel only) and probing (the average over the days logged)."""
    tracking = math.ceil(frame / PROBE_BATCH) + played_day
    probing = math.ceil(sum(probe_log.values()) / PROBE_LOG_DAYS) if probe_log else 0
    return {"tracking": tracking, "probing": probing, "total": tracking + probing}


class PanelService:
    """Draws and refreshes each realm's panel (the job `panel`), and says what it is (/status)."""

    def __init__(
        self,
        store: Store,
        upstream: Upstream,
        *,
        size: int = PANEL_SIZE,
        clock: Callable[[], float] = time.time,
        rng: random.Random | None = None,
        ranges: dict[str, tuple[int, int]] | None = None,
        probes_per_run: int = PROBES_PER_RUN,
        regions: tuple[str, ...] = REGIONS,
        track_seconds: float = TRACK_SECONDS,
    ) -> None:
        self.store = store
        self.track_seconds = track_seconds  # how long each refresh renews the frame's tracking
        # Set while the demo seeds (server/compose/entry.py): the seeding draws the panel days back on
        # its travelling clock; a draw now would be visited by every one of its passes.
        self.paused = False
        self.upstream = upstream
        self.size = size
        self.clock = clock
        self.rng = rng or random.SystemRandom()
        self.ranges = ranges or PANEL_RANGES
        self.probes_per_run = probes_per_run
        self.regions = regions
        self._status: dict[str, Any] = {}
        self._status_at = -1e18

    async def run(self, slot: int | None = None, force: bool = False) -> str:
        """The job: each region's panel refreshed once per UTC day (probing until it holds the target)."""
        if self.size <= 0:
            return "no panel (--panel-size 0)"
        if self.paused:
            return "paused while the demo is seeded"
        done = []
        for region in self.regions:
            doc = await self.store.panels.get(region)
            if (
                not force
                and doc is not None
                and doc.get("refreshed_day") == utc_day(self.clock())
                and not doc.get("short")
            ):
                continue
            doc = await self.refresh(region, doc)
            done.append(f"{region} {doc['members']}/{doc['target']} (frame {len(doc['frame'])})")
        return "; ".join(done) if done else "up to date"

    async def refresh(self, region: str, doc: dict | None = None) -> dict:
        """Count the members, probe or trim towards the target, renew the frame's tracking."""
        now = self.clock()
        day = utc_day(now)
        doc = doc or {
            "_id": region,
            "frame": [],
            "target": self.size,
            "drawn_at": None,
            "ids_probed": 0,
            "probe_requests": {},
        }
        doc["target"] = self.size
        frame: list[int] = list(doc["frame"])
        with job_deadline():
            books = await self.store.tracked.panel_books([tracked_id(region, a) for a in frame])
        active = members_of(books, now)
        # Accounts drawn but not measured yet: their probe's last battle time stands for it.
        probed: dict[int, float] = {}
        requests = 0
        short = False
        if active < self.size:
            try:
                active, requests = await self._probe(region, frame, probed, active, now)
            except UpstreamError as exc:  # probing goes on at the next run
                log.info("panel %s: probing paused: %s", region, exc)
            short = active < self.size
        elif active > TRIM_ABOVE * self.size + PROBE_BATCH:  # beyond what the last probe batch overshoots
            keep = max(1, round(len(frame) * self.size / active))
            frame = self.rng.sample(frame, keep)
            kept = {tracked_id(region, a) for a in frame}
            books = {key: doc for key, doc in books.items() if key in kept}
            active = members_of(books, now)
        if requests:
            log_days = {d: n for d, n in doc["probe_requests"].items() if d > days_before(day, PROBE_LOG_DAYS)}
            log_days[day] = log_days.get(day, 0) + requests
            doc["probe_requests"] = log_days
        for start in range(0, len(frame), 1000):
            with job_deadline():
                await self.store.tracked.track_panel(
                    region, frame[start : start + 1000], now + self.track_seconds, now, probed
                )
        played_day = members_of(books, now, 1) + sum(1 for t in probed.values() if t >= now - DAY_SECONDS)
        doc.update(
            frame=frame,
            members=active,
            played_day=played_day,
            drawn_at=doc.get("drawn_at") or now,
            refreshed_at=now,
            refreshed_day=day,
            short=short,
        )
        with job_deadline():
            await self.store.panels.save(doc)
        self._status[region] = self.describe(doc)
        return doc

    async def _probe(
        self, region: str, frame: list[int], probed: dict[int, float], active: int, now: float
    ) -> tuple[int, int]:
        """Probe random ids of the realm's range, PROBE_BATCH a request, until `active` reaches the
        target or probes_per_run requests were sent; every account found joins `frame`."""
        low, high = self.ranges[region]
        known = set(frame)
        since = now - ACTIVE_DAYS * DAY_SECONDS
        requests = 0
        while active < self.size and requests < self.probes_per_run:
            ids: list[int] = []
            while len(ids) < PROBE_BATCH:
                account_id = self.rng.randint(low, high)
                if account_id not in known and account_id not in ids:
                    ids.append(account_id)
            infos = await self.upstream.account_info(region, ids, fields=PROBE_FIELDS, caller="panel")
            requests += 1
            for account_id in ids:
                info = infos.get(account_id)
                known.add(account_id)
                if not info:
                    continue
                frame.append(account_id)
                last = float(info.get("last_battle_time") or 0)
                probed[account_id] = last
                if last >= since:
                    active += 1
        return active, requests

    def describe(self, doc: dict) -> dict[str, Any]:
        """A region's panel as /status shows it."""
        return {
            "size": int(doc.get("members") or 0),
            "target": int(doc.get("target") or 0),
            "frame": len(doc.get("frame") or []),
            "drawn_at": int(doc["drawn_at"]) if doc.get("drawn_at") else None,
            "refreshed_at": int(doc["refreshed_at"]) if doc.get("refreshed_at") else None,
            "requests_a_day": daily_requests(
                len(doc.get("frame") or []), int(doc.get("played_day") or 0), doc.get("probe_requests") or {}
            ),
        }

    async def status(self, database_up: bool = True) -> dict[str, Any]:
        """Each region's panel as the last refresh left it: read from the database at most every
        STATUS_EVERY s (the job runs on one process; /status is answered by any). While the database
        is down (`database_up` false, or a read fails) the last figures read are shown: /status
        answers then too."""
        if database_up and time.monotonic() - self._status_at >= STATUS_EVERY:
            self._status_at = time.monotonic()
            try:
                for region in self.regions:
                    doc = await self.store.panels.get(region)
                    if doc is not None:
                        self._status[region] = self.describe(doc)
            except PyMongoError as exc:
                if not is_database_error(exc):
                    raise
                self._status_at = 0.0  # read again once the database answers
        return {"target": self.size, "active_days": ACTIVE_DAYS, "by_realm": dict(self._status)}
