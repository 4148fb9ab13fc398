"""Command line of `python -m scripts.attacks` (and of its --prober child process)."""

# Rerun the attacks of issue 12 against the real service and measure what other clients see.
#
#     .venv/bin/python -m scripts.attacks                      # everything (10-20 minutes)
#     .venv/bin/python -m scripts.attacks --quick              # a reduced version of everything (~3 minutes)
#     .venv/bin/python -m scripts.attacks --only flood kill_db --json /tmp/a.json
#
# It starts, each as its own child process (stopped on exit, also on Ctrl-C / SIGTERM):
#
# - the upstream simulator (`python -m scripts.upstream_sim --rps 50`);
# - the service, `python -m server --data-dir <tmp> --upstream-rps 50 --trusted-proxies 127.0.0.1/32`
#   with its jobs and its *embedded* database (SecantusDB, started and supervised by the service;
#   its pid is found in /proc as the server's child whose command line names secantus);
# - for the attacks that need a service of their own: a second instance (fresh rate-limit and live
#   budget windows: the "simultaneous lookups" attack) and a third one started under
#   RLIMIT_NOFILE 1024/1024 (the "connections" attack). Their cached player is copied from the
#   main service's database (the live budget of the second one must be untouched);
# - a *prober* per service (`-m scripts.attacks --prober ...`, a separate process so the attack traffic of
#   this script cannot delay it): 20 requests a second of one cached player
#   (`player/<id>/eu` under the API prefix), each on a new connection, rotating 512 X-Forwarded-For
#   addresses of 198.18.0.0/15 so the player endpoint's per-client limit (server.contract.catalogue PLAYER)
#   never applies; every status and latency is recorded with its start time.
#
# The service runs with its real rate limits (no --rate-limit-scale): the prober rotates addresses
# instead, so "live lookups admitted" tests the real global live budget (server.contract.catalogue LIVE_GLOBAL
# a minute).
#
# For each attack: the prober's p50/p99/max and non-200 answers during the attack; service and
# database CPU (cores) during the attack and in the N seconds after it (10 s; quick 2 s); then live
# lookups of uncached accounts from fresh addresses (5; quick 3): how many were admitted (not 429)
# and answered 200; plus figures of the attack itself. Attacks:
#
#   small         headers over 64 KB, 10,000 headers, 10,000 query params (JSON 4xx each), a static
#                 Range past the end (JSON 416, not cacheable), OPTIONS on a site route (Cache-Control)
#   flood         >= 40,000 requests to /online, each from a fresh address (wrk + Lua when installed,
#                 else the bundled asyncio generator, 32 connections); /status rate_limiter meanwhile
#   simultaneous  100 distinct uncached accounts from 100 addresses at once (second instance)
#   heavy_reads   a compact year of online samples inserted directly, then 8 / 32 / 64 concurrent cold
#                 /online/history?region=eu&days=N (distinct N defeat the caches)
#   connections   2,000 idle connections (re-opened as the server closes them) + 50 slowloris, against
#                 the third instance at RLIMIT_NOFILE 1024/1024
#   bodies        8 concurrent 100 MB bodies to an unknown path
#   kill_db       kill -9 of the embedded database: how long data endpoints answer 503, when 200 returns
#   sigstop_db    SIGSTOP of the database for 10 s (quick 5 s): how fast requests answer, recovery
#   retention     200,000 then 1,000,000 snapshots (quick 20,000), 1 % older than 410 days, inserted
#                 directly; time until the retention job has deleted the expired ones
#
# The report is a table plus JSON (default bench-results-attacks.json, git-ignored).

from __future__ import annotations

import argparse
import json
import signal
import sys

from scripts.loadkit.processes import terminate

from .common import ALL_ATTACKS, DEFAULT_JSON
from .harness import Attacks
from .prober import prober_main
from .report import format_report


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m scripts.attacks",
        description="Rerun the attacks of issue 12 and measure what other clients see.",
    )
    parser.add_argument("--quick", action="store_true", help="a reduced version of everything (about 3 minutes)")
    parser.add_argument(
        "--only",
        nargs="+",
        choices=ALL_ATTACKS,
        metavar="NAME",
        help="run only these attacks: " + ", ".join(ALL_ATTACKS),
    )
    parser.add_argument("--json", default=DEFAULT_JSON, help="where to write the results")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs, prober records)")
    parser.add_argument("--prober", nargs=4, metavar=("PORT", "PATH", "RATE", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not args.only:
        args.only = list(ALL_ATTACKS)
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.prober:
        port, path, rate, out = args.prober
        prober_main(int(port), path, float(rate), out)
        return 0
    signal.signal(signal.SIGTERM, terminate)
    signal.signal(signal.SIGHUP, terminate)
    run = Attacks(args)
    try:
        results = run.run()
    except KeyboardInterrupt:
        print("\ninterrupted: stopping child processes", file=sys.stderr)
        return 130
    except Exception:
        for name in ("service", "upstream_sim"):
            tail = run.children.tail(name, 20)
            if tail:
                print(f"--- last lines of {name}.log ---\n{tail}", file=sys.stderr)
        raise
    finally:
        run.close()
    print(format_report(results))
    with open(args.json, "w") as handle:
        json.dump(results, handle, indent=2, default=str)
        handle.write("\n")
    print(f"\nresults written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
