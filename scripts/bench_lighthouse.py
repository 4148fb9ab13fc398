#!/usr/bin/env python3
"""Lighthouse's four scores (performance included: it measures time) on the site's main views.

    .venv/bin/python scripts/bench_lighthouse.py              # 3 runs per view, median; writes bench-lighthouse.json
    .venv/bin/python scripts/bench_lighthouse.py --runs 1
    .venv/bin/python scripts/bench_lighthouse.py --serve      # seed, then serve the demo until Ctrl-C

A scratch SecantusDB, the upstream simulator and the service in this process, seeded with the small
demo of tests/test_lighthouse.py (scripts/loadkit/lighthouse.py seed_small_demo); then, one after the
other, one Lighthouse process per view and run (mobile defaults: an emulated phone on a simulated
slow 4G link, Debian's Chromium). Run it on a quiet machine: performance is a measure of time.
The figures go in docs/benchmarks.md, "Lighthouse".
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from scripts.loadkit import lighthouse  # noqa: E402
from tests.helpers import FAST_REALMS, free_port, make_config, scratch_database, simulator  # noqa: E402

CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
DEFAULT_JSON = os.path.join(ROOT, "bench-lighthouse.json")


async def serve_and_measure(args, uri: str, sim_url: str) -> dict:
    import tornado.httpclient
    import ujson

    from server.compose import demo
    from server.compose.bootstrap import get_application

    demo._progress = lambda total, desc: None
    config = make_config(
        mongodb_uri=uri,
        db_name="lighthouse",
        upstream_base_url=sim_url,
        rate_limit_scale=100.0,
        upstream_rps=100.0,
        upstream_realm_rps=tuple((realm, rate * 0.8) for realm, rate in FAST_REALMS.items()),
    )
    app, store, _, services = await get_application(config, uri)
    port = args.port or free_port()
    server = app.listen(port, address="127.0.0.1")
    print(f"seeding the small demo ... (http://127.0.0.1:{port}/)", file=sys.stderr)
    seeded = await lighthouse.seed_small_demo(store, services, sim_url)
    body = (
        await tornado.httpclient.AsyncHTTPClient().fetch(
            f"http://127.0.0.1:{port}/api/v1/tanks/stats?region=eu&days=30"
        )
    ).body
    tank_id = max(ujson.loads(body)["data"]["tanks"], key=lambda row: row["players"])["tank_id"]
    views = lighthouse.views(tank_id)
    if args.serve:
        print(f"seeded in {seeded['seconds']} s; serving http://127.0.0.1:{port}/ ; views: {views}", file=sys.stderr)
        await asyncio.Event().wait()
    results: dict = {}
    with tempfile.TemporaryDirectory() as scratch:
        reports = args.reports or scratch
        os.makedirs(reports, exist_ok=True)
        for view in views:
            if args.views and lighthouse.view_name(view) not in args.views.split(","):
                continue
            runs = []
            for i in range(args.runs):
                output = os.path.join(reports, f"{lighthouse.view_name(view)}-{i}.json")
                runs.append(await lighthouse.run(f"http://127.0.0.1:{port}/{view}", CATEGORIES, output))
            results[view or "/"] = {
                **{c: statistics.median(r.scores[c] for r in runs) for c in CATEGORIES},
                "cls": statistics.median(r.cls for r in runs),
                **{m: statistics.median(r.metrics[m] for r in runs) for m in runs[0].metrics},
                "dom_size": runs[0].dom_size,
                "seconds": round(statistics.median(r.seconds for r in runs), 1),
                "runs": args.runs,
            }
            print(view or "/", results[view or "/"], file=sys.stderr)
    server.stop()
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="Lighthouse runs per view (the median is kept)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--serve", action="store_true", help="seed, then serve the demo without measuring")
    parser.add_argument("--json", default=DEFAULT_JSON)
    parser.add_argument("--reports", help="keep Lighthouse's JSON reports in this folder (its long tasks, say)")
    parser.add_argument("--views", help="only these views, by name: home,player,tank,marks,rankings,vehicles")
    args = parser.parse_args(argv)
    # A SIGTERM (ending --serve) unwinds like Ctrl-C: the simulator and the database stop with us.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    lighthouse.ensure_installed()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    with scratch_database() as uri, simulator(200, ",".join(f"{r}={v:g}" for r, v in FAST_REALMS.items())) as sim:
        views = asyncio.run(serve_and_measure(args, uri, sim))
    report = {
        "command": "scripts/bench_lighthouse.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "date": dt.date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}",
        "commit": commit.strip(),  # the code this run served (read before it starts)
        "lighthouse": "12.2.3 (mobile defaults), Debian's Chromium",
        "views": views,
    }
    with open(args.json, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2)
    print("| view | performance | accessibility | best practices | SEO | CLS | FCP ms | LCP ms | TBT ms | DOM |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for view, r in views.items():
        print(
            f"| `{view}` | {r['performance']:g} | {r['accessibility']:g} | {r['best-practices']:g} | {r['seo']:g} "
            f"| {r['cls']:.3f} | {r.get('first-contentful-paint', '')} | {r.get('largest-contentful-paint', '')} "
            f"| {r.get('total-blocking-time', '')} | {r['dom_size']} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
