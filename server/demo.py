"""Demo data through the real ingest path: the upstream client against the simulator, store code, jobs."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import time

from server import ratings as rating_maths
from server.players import build_profile, snapshot_of
from server.upstream import ACCOUNT_FIELDS, TANKS_FIELDS
from store.constants import REGIONS

log = logging.getLogger("statsapi.demo")


class TimeTravelUpstream:
    """The real upstream client, asking the simulator for its data "as of" `now()` (`_sim_now`)."""

    def __init__(self, upstream, now):
        self._upstream = upstream
        self._now = now

    def __getattr__(self, name):
        method = getattr(self._upstream, name)
        if not callable(method) or name.startswith("_") or name == "fetch_json_url":
            return method

        async def call(*args, **kwargs):
            params = dict(kwargs.pop("params", None) or {})
            params["_sim_now"] = int(self._now())
            return await method(*args, params=params, **kwargs)

        return call


def _progress(total: int, desc: str):
    try:
        from tqdm import tqdm
    except ImportError:  # progress bars are a nicety, not a requirement
        return None
    return tqdm(total=total, desc=desc, unit="step", leave=True)


async def seed_player_history(
    store, upstream, ratings_source, accounts: dict[str, list[int]], days: int, now: float, rating_every: int = 7
) -> int:
    """Daily snapshots for `days` days (ratings on every `rating_every`-th day and the last)."""
    expected = await ratings_source.expected_values()
    today = dt.datetime.fromtimestamp(now, dt.UTC).date()
    bar = _progress(days * len(REGIONS), "player history (days x regions)")
    written = 0
    tank_calls = asyncio.Semaphore(16)
    units = asyncio.Semaphore(6)  # (day, region) units in flight

    async def unit(back: int, region: str) -> None:
        nonlocal written
        day = today - dt.timedelta(days=back)
        # Each day as the upstream answered it at 23:00 UTC (today: now).
        as_of = now if back == 0 else dt.datetime.combine(day, dt.time(23), dt.UTC).timestamp()
        traveller = TimeTravelUpstream(upstream, lambda: as_of)
        with_ratings = expected is not None and (back % rating_every == 0)
        async with units:
            infos = await traveller.account_info(
                region, accounts.get(region) or [], fields=ACCOUNT_FIELDS, caller="seed"
            )
            tiers = await ratings_source.tiers(region) if with_ratings else {}

            async def one(account_id: int, info: dict) -> dict:
                tanks = []
                if with_ratings:
                    async with tank_calls:
                        tanks = await traveller.tanks_stats(region, account_id, fields=TANKS_FIELDS, caller="seed")
                doc = build_profile(region, account_id, info, tanks, as_of)
                if with_ratings:
                    doc["ratings"] = rating_maths.compute_ratings(doc["totals"], doc["tanks"], expected, tiers)
                return snapshot_of(doc)

            snaps = await asyncio.gather(*[one(a, info) for a, info in infos.items() if info])
            await store.players.save_snapshots(list(snaps))
        written += len(snaps)
        if bar:
            bar.update(1)

    await asyncio.gather(*[unit(back, region) for back in range(days - 1, -1, -1) for region in REGIONS])
    if bar:
        bar.close()
    return written


async def seed_current_profiles(players, accounts: dict[str, list[int]]) -> int:
    """Fresh cached profiles with ratings, as if each had been opened on the site."""
    bar = _progress(sum(len(v) for v in accounts.values()), "current profiles")
    semaphore = asyncio.Semaphore(8)
    done = 0

    async def one(region, account_id):
        nonlocal done
        async with semaphore:
            try:
                await players.fetch_and_store(region, account_id, with_ratings=True, caller="seed")
                done += 1
            except Exception as exc:
                log.warning("profile %s/%s not seeded: %s", region, account_id, exc)
        if bar:
            bar.update(1)

    await asyncio.gather(*[one(r, a) for r, ids in accounts.items() for a in ids])
    if bar:
        bar.close()
    return done


async def seed_online(store, upstream, days: int, now: float, recent_hours: int = 48) -> int:
    """Past player counts through the real sampler: hourly, then every 10 minutes for the
    last `recent_hours` (minute-by-minute sampling of 30 days would take the seeder ~15 min;
    the live sampler adds a sample every minute from then on)."""
    from server.online import OnlineService

    last_minute = int(now // 60)
    recent_start = last_minute - recent_hours * 60
    minutes = list(range(last_minute - days * 1440, recent_start, 60))
    minutes += list(range(recent_start, last_minute + 1, 10))
    bar = _progress(len(minutes), f"player counts ({days} days)")
    samples = 0
    batch = 32
    for start in range(0, len(minutes), batch):

        async def one(minute):
            clock = lambda minute=minute: minute * 60.0  # noqa: E731 - the sampler's "now"
            sampler = OnlineService(store, TimeTravelUpstream(upstream, clock), clock=clock)
            await sampler.sample(minute)

        chunk = minutes[start : start + batch]
        await asyncio.gather(*[one(m) for m in chunk])
        samples += len(chunk)
        if bar:
            bar.update(len(chunk))
    if bar:
        bar.close()
    return samples


class SimulatorLists:
    """Existing account and clan ids, asked of the simulator's control endpoints."""

    def __init__(self, base_url: str, demo_account: int = 500000001):
        self.base_url = base_url.rstrip("/")
        self.demo_account = demo_account

    async def _ids(self, kind: str, region: str, n: int) -> list[int]:
        import ujson
        from tornado.httpclient import AsyncHTTPClient

        response = await AsyncHTTPClient().fetch(f"{self.base_url}/_sim/{kind}?region={region}&n={n}")
        body = ujson.loads(response.body)
        ids = body.get("ids", body) if isinstance(body, dict) else body
        return [int(i) for i in ids]

    async def accounts(self, region: str, n: int) -> list[int]:
        return await self._ids("accounts", region, n)

    async def clans(self, region: str, n: int) -> list[int]:
        return await self._ids("clans", region, n)


async def seed_demo(
    store,
    services,
    simulator_lists,
    players_per_region: int = 100,
    clans_per_region: int = 4,
    history_days: int = 120,
    online_days: int = 30,
    now: float | None = None,
) -> dict:
    """Seed everything; idempotent (snapshots, samples and profiles are upserts keyed by day/minute/id)."""
    now = now or time.time()
    started = time.monotonic()
    accounts: dict[str, list[int]] = {}
    clans: dict[str, list[int]] = {}
    for region in REGIONS:
        clans[region] = await simulator_lists.clans(region, clans_per_region)
        members: list[int] = []
        for clan_id in clans[region]:
            info = (
                await services.upstream.clans_info(
                    region, [clan_id], fields="clan_id,members.account_id", caller="seed"
                )
            ).get(clan_id) or {}
            members += [m["account_id"] for m in info.get("members") or []]
        extra = await simulator_lists.accounts(region, players_per_region)
        accounts[region] = sorted(set(members[: players_per_region // 2]) | set(extra))[:players_per_region]
        if simulator_lists.demo_account not in accounts[region] and region == "eu":
            accounts[region][0] = simulator_lists.demo_account
    summary = {"accounts": {r: len(v) for r, v in accounts.items()}, "clans": clans}
    summary["snapshots"] = await seed_player_history(
        store, services.upstream, services.ratings_source, accounts, history_days, now
    )
    summary["profiles"] = await seed_current_profiles(services.players, accounts)
    for region, ids in clans.items():
        await store.clans.add_seeds(region, ids)
    await services.clans.refresh(int(now // 3600))
    await services.clans.build_digests(int(now // 3600))
    summary["online_slots"] = await seed_online(store, services.upstream, online_days, now)
    summary["seconds"] = round(time.monotonic() - started, 1)
    return summary
