"""Command line: ``python -m scripts.upstream_sim --port N [--rps N] ...``."""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import signal

from .api import log, make_app
from .ids import (
    DEFAULT_VEHICLES,
    REGIONS,
    disbanded_clans,
    existing_accounts,
    existing_clans,
    veteran_accounts,
)
from .throttle import (
    DEFAULT_BLOCK_SECONDS,
    DEFAULT_BURST_FACTOR,
    DEFAULT_RATES,
    DEFAULT_STALL_SECONDS,
    parse_throttle,
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m scripts.upstream_sim", description="Offline Wargaming public API simulator."
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9100)
    parser.add_argument(
        "--vehicles",
        help=f"vehicle list JSON (default: {DEFAULT_VEHICLES} when present; 'generated' for a generated catalogue)",
    )
    parser.add_argument(
        "--expected-values",
        help="XVM expected-values JSON to serve at /wn8exp.json (default: generated for the catalogue)",
    )
    parser.add_argument(
        "--expected-values-strings",
        action="store_true",
        help="serve /wn8exp.json with every number as a string (as older XVM copies do)",
    )
    parser.add_argument(
        "--rps",
        type=int,
        default=10,
        help="requests per second per application_id, sliding 1 s window (0 disables; default 10)",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="as strict as the real API behind its CDN: the throttle per client address and realm "
        "(default rates " + ",".join(f"{r}={v:g}" for r, v in DEFAULT_RATES.items()) + "), "
        "DEMO_APPLICATION_IS_BLOCKED for application_id 'demo', INVALID_ACCOUNT_ID / INVALID_CLAN_ID "
        "for a call holding an id outside the region's range",
    )
    parser.add_argument(
        "--throttle",
        metavar="SPEC",
        help="the CDN's throttle per client address and realm, requests/s: 'eu=6,na=8,asia=8' or 'off' "
        "(default: those rates with --strict, else off); over the rate a request stalls unanswered",
    )
    parser.add_argument(
        "--throttle-block-seconds",
        type=float,
        default=DEFAULT_BLOCK_SECONDS,
        help=f"how long a burst blocks an address and realm (default {DEFAULT_BLOCK_SECONDS:g})",
    )
    parser.add_argument(
        "--throttle-burst-factor",
        type=float,
        default=DEFAULT_BURST_FACTOR,
        help=f"a burst: this many times the rate within one second (default {DEFAULT_BURST_FACTOR:g})",
    )
    parser.add_argument(
        "--throttle-stall-seconds",
        type=float,
        default=DEFAULT_STALL_SECONDS,
        help=f"how long a stalled request is held before its connection is closed (default {DEFAULT_STALL_SECONDS:g})",
    )
    parser.add_argument(
        "--battle-seconds",
        type=float,
        help="play a day's battles one every N seconds before its session's end (default: all at its end)",
    )
    parser.add_argument("--clock-offset", type=float, default=0.0, help="seconds added to the real clock")
    parser.add_argument("--now", type=float, help="freeze the simulated clock at this unix time")
    parser.add_argument("--latency", type=float, default=0.0, help="added latency per API request, ms")
    parser.add_argument("--error-rate", type=float, default=0.0, help="share answered SOURCE_NOT_AVAILABLE")
    parser.add_argument("--http-5xx-rate", type=float, default=0.0, help="share answered with HTTP 5xx")
    parser.add_argument("--timeout-rate", type=float, default=0.0, help="share that hang (see --hang-seconds)")
    parser.add_argument("--limit-rate", type=float, default=0.0, help="share answered REQUEST_LIMIT_EXCEEDED")
    parser.add_argument("--hang-seconds", type=float, default=30.0, help="how long a 'timeout' request hangs")
    parser.add_argument("--seed", type=int, help="seed for the fault dice")
    parser.add_argument("--application-id", help="accept only this application_id (default: any non-empty)")
    parser.add_argument(
        "--list", type=int, metavar="N", help="print N existing, veteran and disbanded ids per region, exit"
    )
    parser.add_argument(
        "--bench-generation",
        type=int,
        nargs="?",
        const=200,
        metavar="N",
        help="print the CPU ms per never-seen account (account/info of N non-veterans and N/4 "
        "veterans, veterans' full tanks/stats), exit",
    )
    parser.add_argument(
        "--bench-truth",
        action="store_true",
        help="print the CPU seconds of one realm-day's published distributions and /_sim/population, exit",
    )
    parser.add_argument(
        "--published-players",
        type=int,
        default=5000,
        metavar="N",
        help="players of the 14 days behind the published distributions, wot/tanks/mastery (default 5000)",
    )
    parser.add_argument(
        "--warm-published",
        action="store_true",
        help="compute today's published distributions (wot/tanks/mastery) of every realm at start, on "
        "the truth's thread (the demo asks for them at the end of its seeding)",
    )
    args = parser.parse_args(argv)
    if args.rps < 0:
        parser.error("--rps must be >= 0")
    throttle = None
    if args.throttle is not None:
        try:
            throttle = parse_throttle(args.throttle)
        except ValueError as exc:
            parser.error(f"--throttle: {exc}")
    elif args.strict:
        throttle = dict(DEFAULT_RATES)
    if args.throttle_block_seconds < 0 or args.throttle_burst_factor <= 0 or args.throttle_stall_seconds <= 0:
        parser.error("--throttle-block-seconds must be >= 0, --throttle-burst-factor and --throttle-stall-seconds > 0")

    if args.bench_generation is not None:
        from .bench import main as bench_main

        bench_main(max(4, args.bench_generation), vehicles=args.vehicles)
        return

    if args.bench_truth:
        from .bench import main_truth

        main_truth(vehicles=args.vehicles)
        return

    if args.list:
        for region in REGIONS:
            print(f"{region} accounts:  {' '.join(map(str, existing_accounts(region, args.list)))}")
            print(f"{region} veterans:  {' '.join(map(str, veteran_accounts(region, args.list)))}")
            print(f"{region} clans:     {' '.join(map(str, existing_clans(region, args.list)))}")
            print(f"{region} disbanded: {' '.join(map(str, disbanded_clans(region, args.list)))}")
        return

    # Veterans' answers are large trees of small dicts: fewer, cheaper collections keep latency flat.
    gc.set_threshold(100_000, 50, 1000)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")

    async def serve() -> None:
        app = make_app(
            vehicles=args.vehicles,
            expected_values=args.expected_values,
            clock_offset=args.clock_offset,
            now=args.now,
            latency_ms=args.latency,
            error_rate=args.error_rate,
            http_5xx_rate=args.http_5xx_rate,
            timeout_rate=args.timeout_rate,
            limit_rate=args.limit_rate,
            hang_seconds=args.hang_seconds,
            fault_seed=args.seed,
            application_id=args.application_id,
            rps=args.rps,
            expected_values_strings=args.expected_values_strings,
            strict=args.strict,
            throttle=throttle,
            throttle_block_seconds=args.throttle_block_seconds,
            throttle_burst_factor=args.throttle_burst_factor,
            throttle_stall_seconds=args.throttle_stall_seconds,
            battle_seconds=args.battle_seconds,
            published_players=args.published_players,
        )
        server = app.listen(args.port, address=args.host)
        world = app.sim.world
        log.info(
            "upstream simulator on http://%s:%d (vehicles: %s, %d tanks; expected values: %s; rps %s; "
            "strict %s; throttle %s)",
            args.host,
            args.port,
            world.vehicles_source,
            len(world.vehicles),
            world.expected_source,
            args.rps or "unlimited",
            "on" if args.strict else "off",
            ",".join(f"{r}={v:g}" for r, v in throttle.items()) if throttle else "off",
        )
        for region in REGIONS:
            log.info(
                "%s: accounts %s ... veterans %s ... clans %s ...",
                region,
                existing_accounts(region, 3),
                veteran_accounts(region, 2),
                existing_clans(region, 2),
            )
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        if args.warm_published:
            for region in REGIONS:
                app.sim.published(region, app.sim.clock.now())
        for signame in ("SIGINT", "SIGTERM"):
            try:
                loop.add_signal_handler(getattr(signal, signame), stop.set)
            except (NotImplementedError, AttributeError, RuntimeError):
                pass
        await stop.wait()
        app.sim.close()
        app.sim.release_hangs()
        server.stop()
        await server.close_all_connections()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass
