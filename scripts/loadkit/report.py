"""The bench's goals (PASS/MISS) and its text report."""

from __future__ import annotations

GOALS = {
    "cached_ratio": 0.85,  # cached player, clan, /online, /status >= 85 % of the ceiling's req/s
    "cached_p99_factor": 1.5,  # ... with p99 <= 1.5x the ceiling's p99
    "error_ratio": 0.85,  # 404 and 400 >= 85 % of the ceiling's req/s
    "tracked_ratio": 0.70,  # /history?days=30 and /tanks?days=30 of a tracked player >= 70 %
    "cached_db_cpu_percent": 5.0,  # the database's CPU while the cached scenarios run
    "rate_limited_ratio": 0.80,  # the 429 path >= 80 % of the ceiling's req/s
    "gzip_ratio": 1.0,  # the cached player to a gzip client >= the bare handler sending the same gzip bytes
    "memory_growth_mb": 50.0,  # RSS growth over 100k requests from 10k clients
    "roster_rps": 1000.0,  # a cached roster of 30 (issue 51): answers a second on one core, absolute
}
CACHED = ("player", "clan", "online", "status")
ERRORS = ("not_found", "bad_request")
TRACKED = ("history", "tanks")
ROSTERS = ("roster",)


def _goal(goal: str, target: float, value: float | None, passed: bool) -> dict:
    return {"goal": goal, "target": target, "value": value, "pass": passed}


def evaluate_goals(results: dict) -> list[dict]:
    scenarios = results["scenarios"]
    ceiling = scenarios["ceiling"]
    goals = []
    groups = (
        (CACHED, GOALS["cached_ratio"], "cached"),
        (ERRORS, GOALS["error_ratio"], "error"),
        (TRACKED, GOALS["tracked_ratio"], "tracked"),
        (("rate_limited",), GOALS["rate_limited_ratio"], "429"),
    )
    for names, target, kind in groups:
        for name in names:
            result = scenarios.get(name)
            if not result or "rps" not in result:
                continue
            ratio = result.get("ratio_to_ceiling")
            goals.append(_goal(f"{name} req/s >= {target:.0%} of ceiling", target, ratio, (ratio or 0) >= target))
            if kind == "cached":
                bound = round(GOALS["cached_p99_factor"] * ceiling["p99_ms"], 3)
                factor = GOALS["cached_p99_factor"]
                goals.append(
                    _goal(f"{name} p99 <= {factor}x ceiling p99", bound, result["p99_ms"], result["p99_ms"] <= bound)
                )
                db = result.get("cpu_percent", {}).get("db")
                limit = GOALS["cached_db_cpu_percent"]
                goals.append(_goal(f"{name}: database CPU <= {limit:.0f} %", limit, db, db is not None and db <= limit))
    gzipped = scenarios.get("player_gzip")
    if gzipped and gzipped.get("ratio_to_ceiling") is not None:
        target, ratio = GOALS["gzip_ratio"], gzipped["ratio_to_ceiling"]
        goals.append(_goal(f"player_gzip req/s >= {target:.0%} of ceiling_gzip", target, ratio, ratio >= target))
    roster = scenarios.get("roster")
    if roster and "rps" in roster:
        target = GOALS["roster_rps"]
        goals.append(
            _goal(f"roster of 30 cached req/s >= {target:,.0f}", target, roster["rps"], roster["rps"] >= target)
        )
    memory = results.get("memory")
    if memory:
        goals.append(
            _goal(
                f"RSS growth over {memory['requests']:,} requests / {memory['clients']:,} clients <= 50 MB",
                GOALS["memory_growth_mb"],
                memory["growth_mb"],
                memory["growth_mb"] <= GOALS["memory_growth_mb"],
            )
        )
    return goals


ORDER = ["ceiling", *CACHED, "ceiling_gzip", "player_gzip", *ERRORS, *TRACKED, *ROSTERS, "rate_limited"]


def format_report(results: dict) -> str:
    lines = []
    scenarios = results["scenarios"]
    head = (
        f"{'scenario':<13} {'path':<32} {'status':>6} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} "
        f"{'ratio':>6} {'cpu µs/req':>10} {'proc cpu':>8} {'db cpu':>7} {'gen cpu':>7} {'drain s':>7} {'hits':>5}"
    )
    lines += [
        "",
        f"generator: {results['generator']}; {results['connections']} connections; "
        f"{results['duration_seconds']} s per scenario",
        head,
        "-" * len(head),
    ]
    for name in ORDER:
        r = scenarios.get(name)
        if r is None:
            continue
        if "skipped" in r:
            lines.append(f"{name:<13} skipped: {r['skipped']}")
            continue
        path = (r["path"] or "")[:32]
        ratio = f"{100 * r['ratio_to_ceiling']:.0f}%" if r.get("ratio_to_ceiling") is not None else "-"
        cpu = r.get("cpu_percent", {})
        lines.append(
            f"{name:<13} {path:<32} {r['expected_status']:>6} {r['rps']:>9.1f} {r['p50_ms']:>8.2f} "
            f"{r['p99_ms']:>8.2f} {ratio:>6} {r.get('cpu_us_per_request', 0):>10.1f} "
            f"{cpu.get('target', 0):>7.0f}% {cpu.get('db', 0):>6.0f}% {cpu.get('loadgen', 0):>6.0f}% "
            f"{r.get('drain_seconds', 0):>7.1f} "
            + (
                f"{100 * r['answer_cache_hit_rate']:>4.0f}%"
                if r.get("answer_cache_hit_rate") is not None
                else f"{'-':>5}"
            )
        )
    if results.get("ceiling_recheck"):
        c = results["ceiling_recheck"]
        lines.append(
            f"(ceiling re-measured at the end: {c['rps']:.1f} req/s, p99 {c['p99_ms']:.2f} ms, "
            f"drift {c['drift_percent']:+.1f} %)"
        )
    lines.append(
        "(ratio: req/s / ceiling req/s; cpu µs/req and proc cpu: the process under test; db/gen cpu: "
        "SecantusDB and the load generator; drain s: until service and database were idle again; hits: "
        "requests answered from the answer cache)"
    )
    probe_db = results.get("database_probe")
    if probe_db:
        lines.append(
            f"database: SecantusDB, rate_counters {results.get('rate_counters_collection')}; per-op cost at "
            f"{probe_db['documents']} docs: $inc capped {probe_db['capped_inc_ms']} ms vs plain "
            f"{probe_db['plain_inc_ms']} ms; find $in {probe_db['plain_find_in_ms_per_key']} ms per key"
        )
    memory = results.get("memory")
    if memory:
        lines += [
            "",
            f"memory: RSS {memory['rss_before_mb']} MB -> {memory['rss_after_mb']} MB over "
            f"{memory['requests']:,} requests from {memory['clients']:,} clients = "
            f"{memory['growth_mb']:+.1f} MB (at service start {memory['rss_start_mb']} MB, "
            f"peak {memory['peak_rss_mb']} MB; curve "
            + ", ".join(f"{p['requests']:,}:{p['rss_mb']}" for p in memory["curve"])
            + ")",
        ]
    lines += ["", "goals (one service process):"]
    for goal in results.get("goals", []):
        value = goal["value"]
        shown = f"{value:.3f}" if isinstance(value, float) else str(value)
        lines.append(f"  [{'PASS' if goal['pass'] else 'MISS'}] {goal['goal']}: {shown} (target {goal['target']})")
    profile = results.get("profile") or {}
    if "skipped" in profile:
        lines += ["", f"profile: skipped ({profile['skipped']})"]
    for name, summary in profile.items() if "skipped" not in profile else []:
        if not isinstance(summary, dict) or not summary.get("samples"):
            lines += [
                "",
                f"profile {name}: {summary.get('skipped', 'no samples') if isinstance(summary, dict) else ''}",
            ]
            continue
        lines += [
            "",
            f"profile of the service during '{name}' ({summary['rps_while_profiled']:.0f} req/s while "
            f"profiled): event loop busy {summary['loop_busy_percent']}% of the time, "
            f"{summary['samples']} loop samples (+{summary['other_thread_samples']} in driver threads); "
            "shares of the loop's busy samples:",
            "  top self frames:",
        ]
        lines += [f"    {f['percent']:5.1f}%  {f['frame']}" for f in summary["top_self"][:12]]
        lines.append("  project code, inclusive:")
        lines += [f"    {f['percent']:5.1f}%  {f['frame']}" for f in summary["project_inclusive"][:12]]
        lines.append("  named costs, inclusive:")
        lines += [f"    {f['percent']:5.1f}%  {f['cost']}" for f in summary["named_costs"]]
    if results.get("notes"):
        lines += ["", "notes:"] + [f"  - {n}" for n in results["notes"]]
    return "\n".join(lines)
