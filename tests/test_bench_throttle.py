"""scripts/bench_throttle.py runs end to end (a smoke run: 2 clans, ~110 members) and reports its figures.

The service's tracker visits the members in the run (its clock jumps once the clan refresh ended,
so every slice of the day is due). No timing asserts: only that the figures are there, the live
lookups were made and answered, the strict simulator refused nothing (the service stays inside
the application quota), and the members were tracked and visited by the pass.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_bench_throttle_smoke_run_writes_the_figures(tmp_path):
    out = tmp_path / "bench-throttle.json"
    command = [
        sys.executable,
        "-m",
        "scripts.bench_throttle",
        "--minutes",
        "0.3",
        "--max-minutes",
        "4",
        "--clans",
        "2",
        "--json",
        str(out),
    ]
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=420)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    result = json.loads(out.read_text())

    assert result["scenario"]["clans"] == 2 and result["scenario"]["minutes_at_least"] == 0.3
    assert result["commit"] and result["command"]
    upstream = result["upstream"]
    for key in ("sent", "answered", "stalled", "refused", "sent_per_minute", "per_minute", "after_first_minute"):
        assert key in upstream, key
    assert upstream["sent"] > 0 and upstream["sent"] == upstream["answered"] + upstream["stalled"]
    assert upstream["refused"] == 0
    assert result["goals"]["none_refused"] is True

    live = result["live_lookups"]
    assert live["count"] >= 3  # 10 a minute for the whole run (at least 0.3 minutes)
    assert sum(live["statuses"].values()) == live["count"]
    assert live["p50_s"] is not None and live["p99_s"] is not None and live["max_s"] is not None
    assert sum(phase["count"] for phase in live["by_phase"].values()) == live["count"]
    assert set(result["goals"]) == {
        "stall_share_after_first_minute_le_1_percent",
        "none_refused",
        "every_live_lookup_within_10_s",
        "every_non_200_a_503_with_retry_after",
        "most_live_lookups_200",
        "clan_refresh_completed",
        "every_member_tracked",
        "pass_visited_every_member",
    }
    assert "seconds_from_service_start" in result["clan_refresh"]

    # The members were tracked and the service's own pass visited them (per-tank records written).
    members, tracker = result["members"], result["tracker_pass"]
    assert members["of_the_clans"] > 0
    assert members["tracked"] > 0
    assert tracker["day"] and tracker["started_s_from_service_start"] is not None
    assert members["visited_by_the_pass"] > 0
    assert tracker["visited"] >= members["visited_by_the_pass"]
    assert tracker["requests"]["account_info"] > 0 and tracker["requests"]["tanks_stats"] > 0
    assert tracker["records"] > 0 and tracker["tank_records_of_the_day"] > 0
    assert result["timeline"], "no readings"
