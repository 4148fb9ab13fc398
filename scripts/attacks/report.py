"""The attacks' text report: one line per attack with its key figures."""

from __future__ import annotations

from .common import ALL_ATTACKS


def key_figure(name: str, r: dict) -> str:
    if "error" in r and "prober" not in r:
        return "ERROR: " + r["error"]
    try:
        if name == "small":
            return ", ".join(f"{k}: {v['status']} {v['code'] or ''}".rstrip() for k, v in r["checks"].items())
        if name == "flood":
            after = r.get("status_after", {})
            return (
                f"{r['requests']:,} req / {r['fresh_addresses']:,} addrs at {r['flood_rps']:.0f}/s "
                f"{r['statuses']}; degraded polls {r['status_during']['degraded_polls']}, max pending "
                f"{r['status_during']['max_pending_keys']}, caught up +{after.get('pending_keys_caught_up_after_s')} s"
            )
        if name == "simultaneous":
            return (
                f"admitted {r['admitted']}/100, 200 x {r['ok_200']}, 429 x {r['rejected_429']}, "
                f"Retry-After {r['retry_after_s'][:1] + r['retry_after_s'][-1:] if r['retry_after_s'] else []}"
            )
        if name == "heavy_reads":
            return "; ".join(
                f"{b['concurrent']}: {b['ok_200']}x200 {b['503']}x503 p50 {b['p50_ms']:.0f} max {b['max_ms']:.0f} ms"
                for b in r["bursts"]
            )
        if name == "connections":
            return (
                f"fd {r['service_fd_limit']}, svc cpu {r['service_cpu_during_cores']}, log +{r['log_growth_bytes']} B, "
                f"idle re-opened {r['idle_reopened']}, slowloris closed {r['slowloris_closed_by_server']}"
            )
        if name == "bodies":
            return f"{r['answers']}, RSS {r['rss_before_mb']} -> peak {r['rss_peak_mb']} -> {r['rss_after_mb']} MB"
        if name == "kill_db":
            return (
                f"non-200 for {r['non_200_seconds']} s, 200 again +{r['back_to_200_after_s']} s, restarts "
                f"{(r['embedded_database_at_end'] or {}).get('restarts')}, data same {all(r['player_data_unchanged'].values())}"
            )
        if name == "sigstop_db":
            return (
                f"slowest answer {r['max_seconds_to_answer_while_stopped']} s while stopped "
                f"{r['stopped_seconds']} s; 200 +{r['first_200_after_sigcont_s']} s after SIGCONT"
            )
        if name == "retention":
            return "; ".join(
                f"{x['snapshots']:,}: {x['expired_inserted']:,} expired, all gone {x['deleted_after_s']} s after insertion, p99 "
                f"{x['prober_during_deletion']['p99_ms']} ms"
                for x in r["rounds"]
            )
    except (KeyError, TypeError, ValueError) as exc:
        return f"(figure unavailable: {type(exc).__name__})"
    return ""


def format_report(results: dict) -> str:
    head = (
        f"{'attack':<13} {'probes':>6} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'non200':>6} {'svc cpu':>7} "
        f"{'db cpu':>7} {'db after':>8} {'svc after':>9} {'live adm/200':>12}  figures"
    )
    lines = ["", head, "-" * (len(head) + 40)]
    for name in ALL_ATTACKS:
        r = results["attacks"].get(name)
        if r is None:
            continue
        if "prober" not in r:
            lines.append(f"{name:<13} {r.get('skipped') or r.get('error')}")
            continue
        p = r["prober"]
        during, after = r["cpu_during_cores"], r["cpu_after_cores"]
        live = r.get("live") or {}
        live_text = (
            f"{live.get('admitted')}/{live.get('attempted')}:{live.get('ok_200')}" if "admitted" in live else "-"
        )

        def fmt(value, width, digits=1):
            return f"{value:>{width}.{digits}f}" if isinstance(value, (int, float)) else f"{'-':>{width}}"

        lines.append(
            f"{name:<13} {p['requests']:>6} {fmt(p['p50_ms'], 8)} {fmt(p['p99_ms'], 8)} {fmt(p['max_ms'], 8)} "
            f"{p['non_200']:>6} {fmt(during.get('service'), 7, 2)} {fmt(during.get('db'), 7, 2)} "
            f"{fmt(after.get('db'), 8, 2)} {fmt(after.get('service'), 9, 2)} {live_text:>12}  "
            f"{key_figure(name, r)}"
        )
    lines.append(
        "(probes: the cached player, 20/s, during the attack; cpu in cores; 'after': the "
        f"{results['attacks'] and next(iter(results['attacks'].values())).get('cpu_after_window_s', '')} s "
        "after the attack; live adm/200: live lookups of uncached accounts admitted / attempted : answered 200)"
    )
    whole = results.get("prober_whole_run")
    if whole:
        lines.append(
            f"prober over the whole run: {whole['requests']} requests, p99 {whole['p99_ms']} ms, "
            f"non-200 {whole['non_200']} {whole['non_200_kinds']}"
        )
    if results.get("problems"):
        lines += ["", "problems:"] + [f"  - {p}" for p in results["problems"]]
    else:
        lines += ["", "problems: none"]
    return "\n".join(lines)
