#!/usr/bin/env python3
"""Seed (or unseed) clans for the hourly clan refresh job: add_clans.py --region eu 500000101 ..."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time

from server.contract.catalogue import INT64_MAX
from store.constants import REGIONS

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def clan_id(text: str) -> int:
    if not text.isascii() or not text.isdigit() or not 0 < int(text) <= INT64_MAX:
        raise argparse.ArgumentTypeError(f"not a positive integer clan id: {text!r}")
    return int(text)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Seed clans so the clan refresh job caches them (next hourly run); "
        "clans named by cached players are refreshed without a seed."
    )
    parser.add_argument("--region", required=True, choices=REGIONS)
    parser.add_argument("clan_ids", nargs="+", type=clan_id, metavar="CLAN_ID")
    parser.add_argument("--remove", action="store_true", help="remove the seeds instead of adding them")
    parser.add_argument(
        "--mongodb-uri",
        default=os.environ.get("STATSAPI_MONGODB_URI") or None,
        help="MongoDB URI (default: $STATSAPI_MONGODB_URI)",
    )
    parser.add_argument("--db-name", default=os.environ.get("STATSAPI_DB_NAME") or "statsapi")
    args = parser.parse_args(argv)
    if not args.mongodb_uri:
        parser.error("--mongodb-uri or STATSAPI_MONGODB_URI is required")
    return args


async def run(args: argparse.Namespace) -> str:
    from store import create_client
    from store.clans import Clans

    client = create_client(args.mongodb_uri)
    try:
        clans = Clans(client[args.db_name])
        ids = list(dict.fromkeys(args.clan_ids))
        if args.remove:
            removed = await clans.remove_seeds(args.region, ids)
            return f"removed {removed} of {len(ids)} clan seeds ({args.region})"
        await clans.ensure_schema()
        added = await clans.add_seeds(args.region, ids, time.time())
        return f"seeded {len(ids)} clans ({args.region}), {added} new; the clan refresh job caches them hourly"
    finally:
        client.close()


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        print(asyncio.run(run(args)))
    except Exception as exc:  # database unreachable and friends: one line, no traceback
        print(f"add_clans: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
