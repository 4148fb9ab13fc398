#!/usr/bin/env python3
"""Cards: the cost of drawing one (SVG, PNG), what a drawing holds the event loop, and a cached card's rate.

    .venv/bin/python scripts/bench_cards.py                  # writes bench-cards.json
    .venv/bin/python scripts/bench_cards.py --quick          # a smoke run (tests/test_bench_cards.py)

1. Drawing: each card (player, session, clan, tank; large and banner) drawn `--renders` times from
   the layout to the bytes, in this process pinned to one CPU, each time for another answer (another
   nickname, so no measured text is cached): the median and p90 per format. Goals: PNG ≤ 30 ms, SVG ≤ 3 ms.
2. The loop: a 1 ms ticker's longest delay while 20 PNGs are drawn inline on the loop, and while
   the same 20 are drawn as the service draws them (server.serving.cards.CardMemo: a worker thread).
3. Serving: SecantusDB, the upstream simulator and ONE service process (pinned to one CPU when there
   are two), a few players seeded through the real ingest code; the same load generator as
   scripts/bench.py (wrk, else its asyncio client) at 32 keep-alive connections with rotating
   X-Forwarded-For addresses asks for one player's JSON, its PNG card and its SVG card: requests/s
   and p99 of each. Goal: a cached card ≥ 1,000 answers a second.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from scripts.loadkit.generators import Load, PythonGenerator, WrkGenerator, install_wrk  # noqa: E402
from scripts.loadkit.processes import Children, free_port, loadgen_priority, wait_for_port, wait_http  # noqa: E402
from scripts.loadkit.seeding import seed_small, wait_for_database  # noqa: E402
from server.contract.catalogue import PREFIX  # noqa: E402
from server.serving.cards import CardMemo, card_etag, drawing, render_bytes  # noqa: E402

DEFAULT_JSON = os.path.join(ROOT, "bench-cards.json")  # the figures of docs/benchmarks.md, "Cards"
GOALS = {"png_median_ms": 30.0, "svg_median_ms": 3.0, "cached_card_per_second": 1000.0}
SAMPLES = {
    "player": {
        "account_id": 500000001,
        "region": "eu",
        "nickname": "TitanGra6848",
        "statistics": {"battles": 6236, "win_rate": 50.02, "avg_damage": 665.82},
        "ratings": {"wn8": 842.86, "wn8_color": "average", "wtr": 3179},
        "cached_at": 1796060000,
    },
    "session": {
        "account_id": 500000001,
        "region": "eu",
        "since": 1796000000,
        "as_of": 1796060000,
        "battles": 12,
        "win_rate": 58.33,
        "avg_damage": 1804.5,
        "avg_frags": 1.25,
        "wn8": 2012.4,
    },
    "clan": {
        "clan_id": 500000,
        "region": "eu",
        "tag": "YY",
        "name": "Northern Panthers",
        "members_count": 76,
        "ratings": {"elo_10": 1921},
        "members": {"avg_win_rate": 51.9, "avg_damage": 870.68, "avg_battles": 15871.5},
        "cached_at": 1796060000,
    },
    "tank": {
        "tank_id": 7249,
        "region": "eu",
        "days": 30,
        "name": "Centurion Action X",
        "tier": 10,
        "type": "mediumTank",
        "nation": "uk",
        "win_rate": 49.26,
        "avg_damage": 1557.1,
        "players": 80,
        "battles": 1900,
        "marks": {"marks": {"first": 2330.85, "second": 2591.64, "third": 2991.62}},
        "built_at": 1796060000,
    },
}
NAME_FIELD = {"player": "nickname", "session": "account_id", "clan": "name", "tank": "name"}


def say(text: str) -> None:
    print(text, flush=True)


def variant(kind: str, i: int) -> dict:
    """The sample answer with another name (or id), so each drawing measures its texts anew."""
    data = dict(SAMPLES[kind])
    field = NAME_FIELD[kind]
    data[field] = 500000001 + i if field == "account_id" else f"{data[field][:12]}{i}"
    return data


def measure_drawing(renders: int) -> dict:
    out: dict = {}
    for fmt in ("svg", "png"):
        times = []
        for kind in SAMPLES:
            for size in ("large", "banner"):
                for i in range(renders):
                    data = variant(kind, i)
                    started = time.perf_counter()
                    render_bytes(drawing(kind, data, size, "dark"), fmt)
                    times.append(time.perf_counter() - started)
        times.sort()
        out[fmt] = {
            "renders": len(times),
            "median_ms": round(1000 * statistics.median(times), 3),
            "p90_ms": round(1000 * times[int(0.9 * (len(times) - 1))], 3),
            "max_ms": round(1000 * times[-1], 3),
        }
    sizes = {
        f"{kind}_{size}_png_bytes": len(render_bytes(drawing(kind, SAMPLES[kind], size, "dark"), "png"))
        for kind in SAMPLES
        for size in ("large", "banner")
    }
    out["png_bytes"] = sizes
    return out


async def loop_delays(count: int) -> dict:
    """The longest delay of a 1 ms ticker while `count` PNGs are drawn inline, then through CardMemo."""

    async def ticking(work) -> float:
        worst = 0.0
        done = False

        async def ticker() -> None:
            nonlocal worst
            while not done:
                before = time.perf_counter()
                await asyncio.sleep(0.001)
                worst = max(worst, time.perf_counter() - before - 0.001)

        task = asyncio.create_task(ticker())
        await asyncio.sleep(0.01)
        await work()
        done = True
        await task
        return round(1000 * worst, 2)

    async def inline() -> None:
        for i in range(count):
            render_bytes(drawing("player", variant("player", 10_000 + i), "large", "dark"), "png")
            await asyncio.sleep(0)

    memo = CardMemo()

    async def threaded() -> None:
        for i in range(count):
            etag = card_etag(f'"{i}"', "player", "png", "large", "dark")
            await memo.card(etag, "player", variant("player", 20_000 + i), "png", "large", "dark")

    return {"pngs": count, "inline_worst_ms": await ticking(inline), "worker_thread_worst_ms": await ticking(threaded)}


def serve_and_load(args, server_cpus, other_cpus, workdir: str) -> dict:
    children = Children(workdir)
    try:
        db_port = free_port()
        db = children.spawn(
            "secantus",
            [sys.executable, "-m", "secantus", "--host", "127.0.0.1", "--port", str(db_port)]
            + ["--storage-path", ":memory:", "--log-level", "WARNING"],
        )
        uri = f"mongodb://127.0.0.1:{db_port}/?directConnection=true&retryWrites=false"
        db_name = "bench_cards_" + str(int(time.time()))
        sim_port = free_port()
        sim = children.spawn(
            "upstream_sim", [sys.executable, "-m", "scripts.upstream_sim", "--port", str(sim_port), "--rps", "0"]
        )
        sim_url = f"http://127.0.0.1:{sim_port}"
        wait_for_database(uri, db)
        wait_for_port(sim_port, sim)
        say("seeding 3 players and a clan ...")
        seed = asyncio.run(seed_small(uri, db_name, sim_url, 3, 1, 1, False, 0))
        if not seed["players"]:
            raise RuntimeError("seeding produced no cached player with ratings: " + "; ".join(seed["notes"]))
        region, account = "eu", seed["players"][0]
        port = free_port()
        cmd = [sys.executable, "-m", "server", "--port", str(port), "--mongodb-uri", uri, "--db-name", db_name]
        cmd += [
            "--upstream-base-url",
            sim_url,
            "--no-jobs",
            "--trusted-proxies",
            "127.0.0.1/32",
            "--log-level",
            "WARNING",
        ]
        env = {k: v for k, v in os.environ.items() if k != "STATSAPI_PROCESSES"}
        service = children.spawn("service", cmd, cpus=server_cpus, env=env)
        wait_http(port, PREFIX, service)
        wrk = None if args.generator == "python" else (install_wrk() if not args.quick else None)
        if wrk:
            generator = WrkGenerator(wrk, 32, 1, workdir, other_cpus, loadgen_priority("rt"))
        else:
            generator = PythonGenerator(32)
        path = f"{PREFIX}/player/{account}/{region}"
        out: dict = {"generator": generator.describe(), "path": path, "scenarios": {}}
        base = 0
        for name, query in (
            ("player JSON", ""),
            ("player PNG card", "?format=png"),
            ("player SVG card", "?format=svg"),
        ):
            load = Load(port, [path + query], pool=20000, base=base)
            base += 20000
            generator.run(load, 1)  # warm-up: the first answer is built (and the card drawn), then replayed
            result = generator.run(Load(port, [path + query], pool=20000, base=base), args.duration)
            base += 20000
            out["scenarios"][name] = {
                "requests_per_second": round(result["requests"] / result["seconds"]),
                "p99_ms": round(result["p99_ms"], 2),
                "statuses": result["statuses"],
                "mb_per_second": round(result["bytes"] / result["seconds"] / 1e6, 1),
            }
            say(f"  {name}: {out['scenarios'][name]}")
        return out
    finally:
        children.stop_all()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: few drawings, 2 s of load")
    parser.add_argument("--renders", type=int, default=25, help="drawings per card, size and format")
    parser.add_argument("--duration", type=int, default=10, help="seconds of load per scenario")
    parser.add_argument("--generator", choices=["auto", "python"], default="auto")
    parser.add_argument("--json", default=DEFAULT_JSON)
    args = parser.parse_args(argv)
    if args.quick:
        args.renders, args.duration = 3, 2
    cpus = sorted(os.sched_getaffinity(0))
    server_cpus = {cpus[0]} if len(cpus) >= 2 else None
    other_cpus = set(cpus[1:]) if len(cpus) >= 2 else None
    os.sched_setaffinity(0, {cpus[0]})  # the drawing on one core
    results: dict = {
        "date": dt.date.today().isoformat(),
        "commit": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip(),
        "machine": f"{platform.machine()}, {len(cpus)} CPUs, Python {platform.python_version()}",
    }
    say(f"drawing each card {args.renders} times per size and format, on CPU {cpus[0]} ...")
    results["drawing"] = measure_drawing(args.renders)
    say(f"  {results['drawing']}")
    results["loop"] = asyncio.run(loop_delays(5 if args.quick else 20))
    say(f"  loop: {results['loop']}")
    if other_cpus:
        os.sched_setaffinity(0, other_cpus)  # the rest beside the service's core
    with tempfile.TemporaryDirectory(prefix="statsapi-bench-cards-") as workdir:
        results["serving"] = serve_and_load(args, server_cpus, other_cpus, workdir)
    card_rates = [s["requests_per_second"] for n, s in results["serving"]["scenarios"].items() if "card" in n]
    results["goals"] = {
        "png_median_ms": [results["drawing"]["png"]["median_ms"], GOALS["png_median_ms"]],
        "svg_median_ms": [results["drawing"]["svg"]["median_ms"], GOALS["svg_median_ms"]],
        "cached_card_per_second": [min(card_rates), GOALS["cached_card_per_second"]],
    }
    met = (
        results["drawing"]["png"]["median_ms"] <= GOALS["png_median_ms"]
        and results["drawing"]["svg"]["median_ms"] <= GOALS["svg_median_ms"]
        and min(card_rates) >= GOALS["cached_card_per_second"]
    )
    results["all_goals_met"] = met
    with open(args.json, "w") as handle:
        json.dump(results, handle, indent=2)
    say(f"goals {'met' if met else 'MISSED'}: {results['goals']} (written to {args.json})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
