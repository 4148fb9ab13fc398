"""scripts/bench_throttle.py runs end to end (an 18-second smoke run: 5 clans) and reports its figures.

No timing asserts: only that the figures are there, the live lookups were made and answered, and the
strict simulator refused nothing (the service stays inside the application quota).
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
        "--clans",
        "5",
        "--json",
        str(out),
    ]
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    result = json.loads(out.read_text())

    assert result["scenario"]["clans"] == 5 and result["scenario"]["minutes"] == 0.3
    assert result["commit"] and result["command"]
    upstream = result["upstream"]
    for key in ("sent", "answered", "stalled", "refused", "sent_per_minute", "per_minute", "after_first_minute"):
        assert key in upstream, key
    assert upstream["sent"] > 0 and upstream["sent"] == upstream["answered"] + upstream["stalled"]
    assert upstream["refused"] == 0
    assert result["goals"]["none_refused"] is True

    live = result["live_lookups"]
    assert live["count"] == 3
    assert sum(live["statuses"].values()) == 3
    assert live["p50_s"] is not None and live["p99_s"] is not None and live["max_s"] is not None
    assert set(result["goals"]) == {
        "stall_share_after_first_minute_le_1_percent",
        "none_refused",
        "every_live_lookup_within_10_s",
        "every_non_200_a_503_with_retry_after",
        "most_live_lookups_200",
        "clan_refresh_completed",
    }
    assert "seconds_from_service_start" in result["clan_refresh"]
    assert result["tracker"]["members_tracked"] >= 0
    assert result["timeline"], "no readings"
