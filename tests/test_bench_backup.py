"""scripts/bench_backup.py runs end to end at two tiny sizes (30 accounts x 10 and x 20 days, ~2 min) and reports every figure.

No timing asserts (machines are noisy): only that the figures are there and agree with each other,
the backup held the loaded documents of every family and the restore wrote them all.
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
        "--sizes",
        "30x10,30x20",
        "--online-days",
        "0.05",
        "--clans",
        "2",
        "--requests",
        "20",
        "--json",
        str(out),
    ]
    # The backups without rests (duty 1): the figures are the same kind, in half the time.
    env = dict(os.environ, STATSAPI_BACKUP_DUTY="1")
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    result = json.loads(out.read_text())
    assert "p99 ratio" in run.stdout and "per 1,000 account-years" in run.stdout  # the printed table
    assert result["commit"] and result["command"]
    assert [(s["accounts"], s["days"], s["account_days"]) for s in result["sizes"]] == [(30, 10, 300), (30, 20, 600)]

    for size in result["sizes"]:
        loaded = size["load"]["documents"]
        assert loaded["tank_records"] > 0 and loaded["snapshots"] > 0 and loaded["tracked"] == 30
        backup = size["backup"]
        for key in ("seconds", "busy_seconds", "command_wall_seconds", "documents", "bson_bytes", "bytes"):
            assert backup[key] > 0, key
        assert backup["busy_seconds"] <= backup["seconds"]
        collections = backup["collections"]
        assert collections["tracked"]["documents"] == loaded["tracked"]
        # The cached /player's first live fetches of its (up to 10) tracked accounts write today's
        # snapshot and per-tank record (and change) of each.
        for name in ("tank_records", "snapshots", "tank_changes"):
            assert loaded[name] <= collections[name]["documents"] <= loaded[name] + 10, name
        # Every other family as loaded: the online sampler's documents, the population job's
        # tables, the clan seeds (the job computes no expected values from 30 accounts).
        for name in ("online_samples", "online_peaks", "tank_days", "tank_periods", "tank_series", "clan_seeds"):
            assert collections[name]["documents"] == loaded[name] > 0, name
        assert collections["online_samples"]["documents"] == int(0.05 * 1440) * 21
        # (the bench runs without a random panel: panels stays empty)
        assert set(size["empty_collections"]) <= {"expected_tables", "tank_marks", "official_marks", "panels"}
        assert backup["documents"] == sum(c["documents"] for c in collections.values())
        assert backup["bytes"] == sum(c["bytes"] for c in collections.values())
        assert backup["backups_run_during_reads"] >= 1

        restore = size["restore"]
        assert restore["seconds"] > 0 and restore["documents_per_s"] > 0 and restore["bson_mb_per_s"] > 0
        assert restore["database"] != "statsapi"
        # Every backed-up document but the migration markers the restore leaves to the start-up migrations.
        assert (
            backup["documents"] - collections["migrations"]["documents"] <= restore["documents"] <= backup["documents"]
        )

        for phase in ("baseline", "during_backup"):
            for read in ("cached", "built"):
                figures = size["reads"][phase][read]
                assert figures["n"] >= 20 and figures["non_200"] == {}, (phase, read, figures)
                assert 0 < figures["p50_ms"] <= figures["p99_ms"] <= figures["max_ms"], (phase, read)
        assert set(size["p99_ratio"]) == {"cached", "built"} and size["p99_ratio"]["cached"] > 0

    units = result["per_unit"]
    tracked = units["tracked_accounts"]
    assert tracked["unit"] == "account_day" and [row["units"] for row in tracked["sizes"]] == [300, 600]
    first, second = tracked["sizes"]
    assert first["bytes_per_unit"] == round(first["bytes"] / 300, 1) and second["bytes"] > first["bytes"]
    assert tracked["growth"]["units"] == 2.0 and tracked["growth"]["bytes"] == round(
        second["bytes"] / first["bytes"], 2
    )
    assert units["per_1000_account_years"]["bytes"] == round(second["bytes_per_unit"] * 365_000)
    assert units["online"]["sizes"][0]["units"] == 0.05 and units["online_year"]["samples"] == 21 * 1440 * 365
    tables = units["population_tables"]["collections"]
    assert tables["tank_days"]["documents"] > 0 and tables["tank_days"]["year_documents"] == 3 * 365
    assert units["population_tables"]["year_bytes"] == sum(t["year_bytes"] for t in tables.values()) > 0
    assert result["goal"]["cached_p99_ratio_max"] == 1.2
    assert result["goal"]["met"] == all(s["p99_ratio"]["cached"] <= 1.2 for s in result["sizes"])
