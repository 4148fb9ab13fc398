"""A battle roster's live cost: rosters of unknown accounts against the strict simulator with the CDN's throttle.

    .venv/bin/python -m scripts.bench_roster                  # 20 rosters of 30 unknown accounts, then a burst
    .venv/bin/python -m scripts.bench_roster --rosters 5      # a smoke run

1. Sequential: `--rosters` rosters of `--size` accounts nobody looked up (each roster a fresh set,
   from a client address of its own), one after the other, against the service as a process (its
   embedded database, no jobs) and the simulator in strict mode (EU's throttle 6 requests/s, the
   application's 10/s). Measured: upstream requests per unknown account (the simulator's own count;
   goal <= 0.15), the answer time's p50 and p95 (goal p95 <= 1.5 s), and what the throttle stalled.
   The simulator builds an account's whole generated career the first time it is asked about it
   (0.5-0.8 s of its one worker thread for 30 accounts' account/info), which the real API does not:
   the accounts are generated beforehand from an address of their own, and the run is repeated on
   accounts it generates on the way (`sequential_cold_simulator`, reported beside).
   The first roster also fetches the ratings' vehicle tiers once (wot/encyclopedia/vehicles, a
   daily fetch any first rating makes): it is counted apart, not per account.
2. A burst: `--burst` clients each ask a roster of `--size` other unknown accounts at once. Measured:
   every answer's status (200, or 503 with Retry-After), and the share of upstream requests the
   throttle stalled (goal <= 1 %).

The service runs with `--rate-limit-scale 20` so that the shared live budget (30 units a minute,
a unit per upstream request) admits a run of rosters in a minute; the burst's share of rosters
served live is what that budget admits. A cached roster's throughput is scripts/bench.py's
`roster` scenario (one core, against the bare-Tornado ceiling).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import http.client
import json
import os
import shutil
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from scripts.bench_scale import PREFIX, percentile, say, service_command, start_simulator  # noqa: E402
from scripts.bench_throttle import sim_reading  # noqa: E402
from scripts.loadkit.processes import free_port, stop_group, wait_http  # noqa: E402
from scripts.upstream_sim.ids import existing_accounts  # noqa: E402

GOAL_PER_ACCOUNT = 0.15
GOAL_P95_SECONDS = 1.5
GOAL_STALLED_SHARE = 0.01
RATE_LIMIT_SCALE = 20  # see the docstring
ONE_TIME = ("wot/encyclopedia/vehicles",)
WARM_ADDRESS = "127.0.0.3"  # the simulator's warm-up comes from here: never the service's throttle window  # the ratings' tiers, fetched once a day by the first rating


def sim_json(base: str, path: str, body: dict | None = None) -> dict:
    host, port = base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        if body is None:
            conn.request("GET", path)
        else:
            conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
        return json.loads(conn.getresponse().read())
    finally:
        conn.close()


def warm_simulator(sim_base: str, accounts: list[int]) -> float:
    """Have the simulator generate these accounts' careers before the service asks for them (from an
    address and application of its own, outside the service's throttle and quota): the first answer
    about an account builds its whole generated career, which the real API never does. Seconds taken."""
    host, port = sim_base.removeprefix("http://").split(":")
    started = time.perf_counter()
    for start in range(0, len(accounts), 100):
        ids = ",".join(map(str, accounts[start : start + 100]))
        for method in ("wot/account/info", "wot/account/tanks"):
            conn = http.client.HTTPConnection(host, int(port), timeout=120, source_address=(WARM_ADDRESS, 0))
            try:
                conn.request("GET", f"/wot/eu/{method}/?application_id=bench-roster-warm&account_id={ids}")
                conn.getresponse().read()
            finally:
                conn.close()
    return time.perf_counter() - started


def roster(port: int, accounts: list[int], client: str) -> tuple[int, float, dict, dict]:
    """(status, seconds, headers, body) of one roster from `client`."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    started = time.perf_counter()
    try:
        path = f"{PREFIX}/roster?region=eu&accounts=" + ",".join(map(str, accounts))
        conn.request("GET", path, headers={"X-Forwarded-For": client})
        response = conn.getresponse()
        body = json.loads(response.read() or b"{}")
        return response.status, time.perf_counter() - started, dict(response.getheaders()), body
    finally:
        conn.close()


def start_service(workdir: str, sim_base: str) -> tuple:
    import subprocess

    port = free_port()
    cmd = [*service_command(os.path.join(workdir, "data"), port, sim_base), "--rate-limit-scale", str(RATE_LIMIT_SCALE)]
    env = dict(os.environ, STATSAPI_APPLICATION_ID="bench-roster")  # the strict simulator blocks "demo"
    env.pop("STATSAPI_PROCESSES", None)
    log = open(os.path.join(workdir, "service.log"), "ab")
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    log.close()
    wait_http(port, f"{PREFIX}/status", proc, timeout=300)
    return proc, port


def sequential(port: int, sim_base: str, pools: list[list[int]], warm_account: int, warm: bool) -> dict:
    generation = warm_simulator(sim_base, [a for p in pools for a in p]) if warm else None
    sim_json(sim_base, "/_sim/stats", {"reset": True})
    # The first rating of a region fetches its vehicle tiers once a day (eight requests): a warm-up
    # roster of one account pays for it before the measured ones, and is reported apart.
    status, warm_up, _, _ = roster(port, [warm_account], "10.60.0.1")
    assert status == 200, status
    warm_requests = sim_reading(sim_json(sim_base, "/_sim/stats"))["answered"]
    sim_json(sim_base, "/_sim/stats", {"reset": True})
    times, statuses, one_time = [], {}, 0
    requests = 0
    for i, accounts in enumerate(pools):
        before = sim_reading(sim_json(sim_base, "/_sim/stats"))
        status, seconds, _, body = roster(port, accounts, f"10.61.{i // 250}.{1 + i % 250}")
        after = sim_reading(sim_json(sim_base, "/_sim/stats"))
        statuses[str(status)] = statuses.get(str(status), 0) + 1
        made = {
            path: n - before["answered_by_path"].get(path, 0)
            for path, n in after["answered_by_path"].items()
            if n != before["answered_by_path"].get(path, 0)
        }
        one_time += sum(made.pop(path, 0) for path in ONE_TIME)
        requests += sum(made.values())
        if status == 200:
            times.append(seconds)
            live = body["data"]["counts"]["live"]
            if live != len(accounts):
                say(f"  roster {i}: {live} of {len(accounts)} rows live ({body['data']['counts']})")
    reading = sim_reading(sim_json(sim_base, "/_sim/stats"))
    accounts = sum(len(p) for p in pools)
    return {
        "simulator_warmed": warm,
        "simulator_generation_seconds": None if generation is None else round(generation, 2),
        "warm_up": {"seconds": round(warm_up, 3), "upstream_requests": warm_requests},
        "rosters": len(pools),
        "accounts_per_roster": len(pools[0]),
        "statuses": statuses,
        "upstream_requests": requests,
        "one_time_requests": one_time,
        "requests_per_account": round(requests / accounts, 4),
        "p50_seconds": round(percentile(times, 0.5), 3) if times else None,
        "p95_seconds": round(percentile(times, 0.95), 3) if times else None,
        "max_seconds": round(max(times), 3) if times else None,
        "stalled": reading["stalled"],
        "refused": reading["refused"],
    }


def burst(port: int, sim_base: str, pools: list[list[int]]) -> dict:
    sim_json(sim_base, "/_sim/stats", {"reset": True})
    with concurrent.futures.ThreadPoolExecutor(len(pools)) as pool:
        answers = list(pool.map(lambda i: roster(port, pools[i], f"10.62.0.{1 + i}"), range(len(pools))))
    statuses: dict[str, int] = {}
    unanswered = 0
    for status, _, headers, _ in answers:
        statuses[str(status)] = statuses.get(str(status), 0) + 1
        retry = headers.get("Retry-After")
        if status != 200 and not (status == 503 and retry and 1 <= int(retry) <= 60):
            unanswered += 1
    time.sleep(2)  # a stalled request is counted once the simulator drops it
    reading = sim_reading(sim_json(sim_base, "/_sim/stats"))
    return {
        "clients": len(pools),
        "statuses": statuses,
        "neither_200_nor_503_with_retry_after": unanswered,
        "served_live_rosters": statuses.get("200", 0),
        "upstream_sent": reading["sent"],
        "stalled": reading["stalled"],
        "stalled_share": round(reading["stalled"] / reading["sent"], 4) if reading["sent"] else 0.0,
        "p95_seconds": round(percentile([a[1] for a in answers], 0.95), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rosters", type=int, default=20)
    parser.add_argument("--size", type=int, default=30)
    parser.add_argument("--burst", type=int, default=12)
    parser.add_argument("--json", default=os.path.join(ROOT, "bench-roster.json"))
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="statsapi-bench-roster-")
    sim_proc = service = None
    try:
        sim_proc, sim_base = start_simulator(workdir, 10, 20_000, ("--strict",))
        service, port = start_service(workdir, sim_base)
        need = 1 + (2 * args.rosters + args.burst) * args.size
        warm_account, *accounts = existing_accounts("eu", 1_000 + need)[1_000:]
        pools = [accounts[i * args.size : (i + 1) * args.size] for i in range(2 * args.rosters + args.burst)]
        say(f"{args.rosters} rosters of {args.size} unknown accounts, one after the other ...")
        first = sequential(port, sim_base, pools[: args.rosters], warm_account, warm=True)
        say(f"again, {args.rosters} rosters of other accounts the simulator generates on the way ...")
        cold = sequential(port, sim_base, pools[args.rosters + args.burst :], warm_account, warm=False)
        say(f"a burst of {args.burst} rosters at once ...")
        second = burst(port, sim_base, pools[args.rosters : args.rosters + args.burst])
        goals = {
            f"requests per unknown account <= {GOAL_PER_ACCOUNT}": first["requests_per_account"] <= GOAL_PER_ACCOUNT,
            f"p95 <= {GOAL_P95_SECONDS} s": (first["p95_seconds"] or 99) <= GOAL_P95_SECONDS,
            "burst: every roster 200, or 503 with Retry-After": second["neither_200_nor_503_with_retry_after"] == 0,
            f"burst: stalled <= {GOAL_STALLED_SHARE:.0%} of upstream requests": second["stalled_share"]
            <= GOAL_STALLED_SHARE,
        }
        results = {
            "sequential": first,
            "sequential_cold_simulator": cold,
            "burst": second,
            "goals": goals,
            "rate_limit_scale": RATE_LIMIT_SCALE,
        }
        with open(args.json, "w") as out:
            json.dump(results, out, indent=2)
        print(json.dumps(results, indent=2))
        say("goals:", ", ".join(f"{goal}: {'PASS' if ok else 'MISS'}" for goal, ok in goals.items()))
    finally:
        for proc in (service, sim_proc):
            if proc is not None:
                stop_group(proc, 30.0)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
