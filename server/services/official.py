"""Wargaming's own per-tank thresholds (wot/tanks/mastery): fetched once a day per realm, each day's
version kept, the newest served; docs/data.md, "Official thresholds", says what they are."""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from server.contract.catalogue import HOT_COPY_SECONDS, OFFICIAL_METHOD
from server.domain.days import days_before, utc_day
from server.serving.answers import POPULATION_TAG, Tag, no_answer_cache
from server.upstream.client import UpstreamError
from store.client import job_deadline, request_deadline
from store.constants import REGIONS

if TYPE_CHECKING:
    from server.upstream.interface import Upstream
    from store.store import Store

log = logging.getLogger("statsapi.official")

FETCH_EVERY = 3600  # seconds between looks for the day's version (fetched at the first look of a day)
# The damage distribution's percentiles the marks of excellence are read at: 1st, 2nd, 3rd mark, top.
DAMAGE_PERCENTILES = (65, 85, 95, 100)
# The XP distribution's percentiles of the mastery badges: 3rd class, 2nd class, 1st class, Ace Tanker.
XP_PERCENTILES = (50, 80, 95, 99)
MARK_KEYS = ("first", "second", "third", "top")
MASTERY_KEYS = ("third_class", "second_class", "first_class", "ace")
SOURCE = "wot/tanks/mastery"
# A kept version is served this many days after its day at most (the fetches failing that long:
# none is shown rather than a month-old one).
KEPT_SERVED_DAYS = 30


@dataclasses.dataclass(frozen=True)
class Official:
    """A region's newest kept version: the day it was fetched, the upstream's own date, and per
    tank the damage (marks) and XP (mastery badges) thresholds."""

    day: str
    updated_at: int | None
    damage: Mapping[int, list[float]]
    xp: Mapping[int, list[float]]

    def thresholds(self, tank_id: int) -> dict[str, Any] | None:
        """The tank's official figures as answered (None when the distribution does not cover it)."""
        damage, xp = self.damage.get(tank_id), self.xp.get(tank_id)
        if damage is None and xp is None:
            return None
        return {
            "marks": dict(zip(MARK_KEYS, damage, strict=True)) if damage is not None else None,
            "mastery_xp": dict(zip(MASTERY_KEYS, xp, strict=True)) if xp is not None else None,
            "date": self.day,
            "updated_at": self.updated_at,
            "source": SOURCE,
            "method": OFFICIAL_METHOD,
        }


def _rows(doc: Mapping[str, Any], name: str, percentiles: tuple[int, ...]) -> dict[int, list[float]]:
    """A kept distribution's rows at `percentiles` (a version fetched at others gives none)."""
    if tuple(doc.get(f"{name}_percentiles") or ()) != percentiles:
        return {}
    return {int(t): [float(v) for v in row] for t, row in (doc.get(name) or {}).items()}


class OfficialFigures:
    """The daily fetch of both distributions per realm (2 requests a realm a day) and the newest
    version per region, decoded once and reused HOT_COPY_SECONDS."""

    def __init__(
        self,
        store: Store,
        upstream: Upstream,
        clock: Callable[[], float] = time.time,
        on_write: Callable[[Tag], None] = no_answer_cache,
    ) -> None:
        self.store = store
        self.upstream = upstream
        self.clock = clock
        self.on_write = on_write  # told POPULATION_TAG: the marks answers show these figures
        self._kept: dict[str, tuple[float, Official | None]] = {}

    async def fetch(self, slot: int | None = None) -> str:
        """The job: each region without today's version asks for both distributions; a failed
        region keeps serving its newest version and is asked again at the next look."""
        day = utc_day(self.clock())
        done, failed = [], []
        for region in REGIONS:
            with job_deadline():
                if await self.store.official_marks.get(region, day) is not None:
                    continue
            try:
                damage, updated = await self.upstream.tanks_mastery(
                    region, "damage", DAMAGE_PERCENTILES, caller="reference"
                )
                xp, _ = await self.upstream.tanks_mastery(region, "xp", XP_PERCENTILES, caller="reference")
            except UpstreamError as exc:
                log.warning("official thresholds of %s for %s: %s", region, day, exc)
                failed.append(region)
                continue
            distributions = {
                "damage": (DAMAGE_PERCENTILES, _at(damage, DAMAGE_PERCENTILES)),
                "xp": (XP_PERCENTILES, _at(xp, XP_PERCENTILES)),
            }
            with job_deadline():
                await self.store.official_marks.save(region, day, distributions, updated, self.clock())
            self._kept.pop(region, None)
            self.on_write(POPULATION_TAG)
            done.append(f"{region} {len(distributions['damage'][1])} tanks")
        if not done and not failed:
            return f"up to date for {day}"
        return f"{day}: " + "; ".join(done + [f"{region} failed (the newest version kept)" for region in failed])

    async def current(self, region: str) -> Official | None:
        """The region's newest version (today's, or the last good one within KEPT_SERVED_DAYS), None
        without one."""
        kept = self._kept.get(region)
        now = time.monotonic()
        if kept is not None and now - kept[0] < HOT_COPY_SECONDS:
            return kept[1]
        async with request_deadline():
            today = utc_day(self.clock())
            doc = await self.store.official_marks.newest(region, days_before(today, KEPT_SERVED_DAYS), today)
        official = (
            Official(
                doc["d"],
                doc.get("updated_at"),
                _rows(doc, "damage", DAMAGE_PERCENTILES),
                _rows(doc, "xp", XP_PERCENTILES),
            )
            if doc is not None
            else None
        )
        if kept is not None and kept[1] is not None and (official is None or official.day != kept[1].day):
            self.on_write(POPULATION_TAG)  # another process kept a newer day: answers from the older go
        self._kept[region] = (now, official)
        return official


def _at(values: Mapping[int, Mapping[int, float]], percentiles: tuple[int, ...]) -> dict[int, list[float]]:
    """The rows that carry every percentile asked."""
    return {t: [row[p] for p in percentiles] for t, row in values.items() if all(p in row for p in percentiles)}
