"""The benchmark command runs end to end and measures the responses it claims to (no speed asserts)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIOS = {
    "ceiling": "2xx",
    "player": "2xx",
    "ceiling_gzip": "2xx",
    "player_gzip": "2xx",
    "clan": "2xx",
    "online": "2xx",
    "status": "2xx",
    "not_found": "404",
    "bad_request": "400",
    "history": "2xx",
    "tanks": "2xx",
    "roster": "2xx",
    "rate_limited": "429",
}


def test_bench_quick_run_reports_every_scenario_with_its_status(tmp_path):
    out = tmp_path / "bench.json"
    command = [
        sys.executable,
        os.path.join(ROOT, "scripts", "bench.py"),
        "--quick",
        "--duration",
        "1",
        "--settle-timeout",
        "5",
        "--players",
        "3",
        "--memory-requests",
        "2000",
        # Enough clients that none reaches the player limit (30 a minute): the memory phase runs
        # wrk for at least a second, ~8,000 requests at the service's rate.
        "--memory-clients",
        "1000",
        "--connections",
        "8",
        "--profile",
        "",
        "--json",
        str(out),
    ]
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "goals (one service process)" in run.stdout
    results = json.loads(out.read_text())

    for name, expected in SCENARIOS.items():
        scenario = results["scenarios"][name]
        assert scenario["expected_status"] == expected
        assert scenario["requests"] > 0 and scenario["rps"] > 0, (name, scenario)
        # Every response of a scenario is the kind it is named after, so its figures mean what they say.
        assert scenario["statuses"].get(expected, 0) >= 0.99 * scenario["requests"], (name, scenario["statuses"])
        assert name == "ceiling_gzip" or scenario["ratio_to_ceiling"] > 0
    assert results["scenarios"]["ceiling"]["ratio_to_ceiling"] == 1.0

    memory = results["memory"]
    assert memory["requests"] >= 2000 and memory["clients"] == 1000
    assert memory["rss_after_mb"] > 0 and memory["non_2xx"] == 0
    # Repeated requests for one path are answered from the answer cache (the first one builds it).
    assert results["scenarios"]["player"]["answer_cache_hit_rate"] > 0.5
    # The gzip scenario is served the prebuilt gzip answer: replayed, and smaller on the wire.
    gzipped, plain = results["scenarios"]["player_gzip"], results["scenarios"]["player"]
    assert gzipped["answer_cache_hit_rate"] > 0.5
    assert gzipped["bytes_per_response"] < plain["bytes_per_response"]
    assert {goal["goal"].split(" ")[0] for goal in results["goals"]} >= {"player", "history", "rate_limited", "RSS"}
    assert all(isinstance(goal["pass"], bool) for goal in results["goals"])
