"""scripts/bench_backup.py runs end to end at a tiny size (30 accounts x 10 days, ~20 s) and reports every figure.

No timing asserts (machines are noisy): only that the figures are there and agree with each other,
the backup held the loaded documents and the restore wrote them all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_bench_backup_smoke_run_writes_every_figure(tmp_path):
    out = tmp_path / "bench-backup.json"
    command = [
        sys.executable,
        "-m",
        "scripts.bench_backup",
        "--accounts",
        "30",
        "--days",
        "10",
        "--requests",
        "20",
        "--json",
        str(out),
    ]
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    result = json.loads(out.read_text())
    assert "p99 ratio" in run.stdout  # the printed table

    assert (result["accounts"], result["days"], result["account_days"]) == (30, 10, 300)
    assert result["commit"] and result["command"]
    loaded = result["load"]["documents"]
    assert loaded["tank_records"] > 0 and loaded["snapshots"] > 0 and loaded["tracked"] == 30

    backup = result["backup"]
    for key in (
        "seconds",
        "command_wall_seconds",
        "documents",
        "bson_bytes",
        "bytes",
        "bson_mb_per_s",
        "file_mb_per_s",
    ):
        assert backup[key] > 0, key
    collections = backup["collections"]
    assert collections["tracked"]["documents"] == loaded["tracked"]
    # The cached /player's first live fetches of its (up to 10) tracked accounts write today's
    # snapshot and per-tank record (and change) of each.
    for name in ("tank_records", "snapshots", "tank_changes"):
        assert loaded[name] <= collections[name]["documents"] <= loaded[name] + 10, name
    assert backup["documents"] == sum(c["documents"] for c in collections.values())
    assert backup["bytes"] == sum(c["bytes"] for c in collections.values())
    assert backup["backups_run_during_reads"] >= 1

    per_day, per_years = result["per_account_day"], result["per_1000_account_years"]
    assert per_day["bytes"] == round(backup["bytes"] / 300, 1) and per_day["bson_bytes"] > 0
    assert per_years["bytes"] == round(backup["bytes"] / 300 * 1000 * 365)
    assert per_years["bson_bytes"] > 0 and "linear" in per_years["extrapolation"]

    restore = result["restore"]
    assert restore["seconds"] > 0 and restore["documents_per_s"] > 0 and restore["bson_mb_per_s"] > 0
    assert restore["database"] != "statsapi"
    # Every backed-up document but the migration markers the restore leaves to the start-up migrations.
    assert backup["documents"] - collections["migrations"]["documents"] <= restore["documents"] <= backup["documents"]

    for phase in ("baseline", "during_backup"):
        for read in ("cached", "built"):
            figures = result["reads"][phase][read]
            assert figures["n"] >= 20 and figures["non_200"] == {}, (phase, read, figures)
            assert 0 < figures["p50_ms"] <= figures["p99_ms"] <= figures["max_ms"], (phase, read)
    assert set(result["p99_ratio"]) == {"cached", "built"}
    assert result["p99_ratio"]["cached"] > 0
    assert result["goal"]["cached_p99_ratio_max"] == 2.0
    assert result["goal"]["met"] == (result["p99_ratio"]["cached"] <= 2.0)
