#!/usr/bin/env python3
"""Seed the demo dataset through the real ingest path (upstream client → simulator → store)."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from server.contract.config import Config  # noqa: E402


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--mongodb-uri",
        default=os.environ.get("STATSAPI_MONGODB_URI"),
        required=not os.environ.get("STATSAPI_MONGODB_URI"),
    )
    parser.add_argument("--db-name", default=os.environ.get("STATSAPI_DB_NAME", "statsapi"))
    parser.add_argument(
        "--upstream-base-url", default=os.environ.get("STATSAPI_UPSTREAM_BASE_URL", "http://127.0.0.1:9100")
    )
    parser.add_argument("--players-per-region", type=int, default=100)
    parser.add_argument("--clans-per-region", type=int, default=4)
    parser.add_argument("--history-days", type=int, default=91)
    parser.add_argument(
        "--population-per-region",
        type=int,
        default=None,
        help="accounts tracked for the tank statistics only (default: 200 without a panel, none with one)",
    )
    parser.add_argument("--population-days", type=int, default=21)
    parser.add_argument("--online-days", type=int, default=30)
    parser.add_argument(
        "--panel-size", type=int, default=0, help="active accounts of each realm's random panel to seed (0: none)"
    )
    return parser.parse_args(argv)


async def run(args) -> dict:
    from server.compose.bootstrap import connect_store
    from server.compose.demo import SimulatorLists, seed_demo
    from server.compose.wiring import build_services
    from server.serving.ratelimit import RateLimiter

    config = dataclasses.replace(
        Config(),
        mongodb_uri=args.mongodb_uri,
        db_name=args.db_name,
        upstream_base_url=args.upstream_base_url,
        jobs=False,
    )
    store = await connect_store(config, args.mongodb_uri)
    services = await build_services(config, store, RateLimiter(store.rate_counters))
    try:
        return await seed_demo(
            store,
            services,
            SimulatorLists(args.upstream_base_url),
            players_per_region=args.players_per_region,
            clans_per_region=args.clans_per_region,
            history_days=args.history_days,
            population_per_region=args.population_per_region,
            population_days=args.population_days,
            online_days=args.online_days,
            panel_size=args.panel_size,
        )
    finally:
        await services.close()
        store.client.close()


def main(argv=None) -> int:
    args = parse_args(argv)
    summary = asyncio.run(run(args))
    print("seeded:", summary)
    print_examples(summary)
    return 0


def print_examples(summary: dict, base: str = "http://127.0.0.1:8888/api/v1") -> None:
    clan = (summary.get("clans") or {}).get("eu", [500000])[0]
    for path in [
        "",
        "/player/500000001/eu",
        "/player/500000001/eu/history?days=30",
        f"/clan/{clan}/eu",
        f"/clan/{clan}/eu/weekly",
        "/online",
        "/online/history?game=wot&days=30",
        "/status",
    ]:
        print("  " + base + path)


if __name__ == "__main__":
    sys.exit(main())
