"""A tracker in a process of its own, for tests that kill it mid-pass (tests/test_tracker.py)."""

from __future__ import annotations

import argparse
import asyncio
import sys

from scripts.upstream_sim.world import World
from server.compose.demo import TimeTravelUpstream
from server.domain import ratings as rating_maths
from server.domain.days import ManualClock
from server.services.tracker import Tracker
from server.upstream.budget import UpstreamBudget
from server.upstream.client import UpstreamClient
from store import Store, create_client
from tests.helpers import EXPECTED_VALUES_FILE


class Ratings:
    def __init__(self):
        self.expected = rating_maths.parse_expected_values(EXPECTED_VALUES_FILE.read_bytes())
        self.tier_map = {t: v["tier"] for t, v in World(expected_values=EXPECTED_VALUES_FILE).vehicles.items()}

    async def expected_values(self, region=None):
        return self.expected

    async def tiers(self, region):
        return self.tier_map


class Stalling:
    """The upstream, noting each account/info batch it answered on stdout; from the
    `block_after`+1-th call on it never answers (the test kills the process there)."""

    def __init__(self, upstream, block_after: int):
        self.upstream, self.block_after, self.calls = upstream, block_after, 0

    async def account_info(self, region, ids, **kwargs):
        self.calls += 1
        if self.calls > self.block_after:
            print("blocked", flush=True)
            await asyncio.Event().wait()
        result = await self.upstream.account_info(region, ids, **kwargs)
        print("answered", region, *ids, flush=True)
        return result

    async def tanks_stats(self, region, account_id, **kwargs):
        return await self.upstream.tanks_stats(region, account_id, **kwargs)

    async def account_wtr(self, region, ids, **kwargs):
        return await self.upstream.account_wtr(region, ids, **kwargs)


async def main(args) -> None:
    client = create_client(args.mongodb_uri)
    store = Store(client, args.db_name, rate_collection_bytes=1 << 20, ttl_indexes=False)
    clock = ManualClock(args.at)
    upstream = UpstreamClient("tracker-child", base_url=args.sim, budget=UpstreamBudget(50, hold_first_window=False))
    stalling = Stalling(TimeTravelUpstream(upstream, clock), args.block_after)
    tracker = Tracker(store, stalling, Ratings(), clock=clock, owner="child", claim_ttl=60)
    await tracker.tick()
    print("finished", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--mongodb-uri", required=True)
    parser.add_argument("--db-name", required=True)
    parser.add_argument("--sim", required=True)
    parser.add_argument("--at", type=float, required=True)
    parser.add_argument("--block-after", type=int, required=True)
    asyncio.run(main(parser.parse_args()))
    sys.exit(0)
