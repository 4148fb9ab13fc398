"""Scheduled backups (--backup-dir, --backup-keep): once a day at the quiet hour, rotated, shown in
/status, which turns degraded when no backup succeeded in two days (counted from the newest backup
in the directory, so a restart does not reset it), and counted in /metrics."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import tempfile
import time

import pytest
import ujson
from prometheus_client.parser import text_string_to_metric_families

from server.contract.catalogue import STATUS
from server.jobs.backups import NAME_PREFIX, QUIET_HOUR_UTC, STALE_AFTER, ScheduledBackups
from store.backup import list_backups, read_manifest, write_backup

BACKUP_DIR = tempfile.mkdtemp(prefix="statsapi-backups-")


@pytest.fixture
def app_overrides():
    return {"backup_dir": BACKUP_DIR, "backup_keep": 2}


def at(day: int, hour: int) -> float:
    return dt.datetime(2026, 3, day, hour, 5, tzinfo=dt.UTC).timestamp()


@pytest.mark.gen_test(timeout=120)
async def test_daily_at_the_quiet_hour_rotated_and_stale_after_two_days(app, tmp_path):
    store = app.settings["store"]
    await store.clans.seeds.insert_one({"_id": "eu:1", "region": "eu", "clan_id": 1})
    now = [at(1, 15)]
    backups = ScheduledBackups(store, str(tmp_path), keep=2, writer="test", clock=lambda: now[0], started_at=now[0])
    assert backups.status()["last_success"] is None
    assert backups.health_reasons() == []

    # None yet: the first is written at once, whatever the hour.
    assert "backed up" in await backups.run(0)
    assert backups.status()["count"] == 1
    assert "not due" == await backups.run(1)
    # The next day: not before the quiet hour, then at it.
    now[0] = at(2, QUIET_HOUR_UTC - 1)
    assert "not due" == await backups.run(2)
    now[0] = at(2, QUIET_HOUR_UTC)
    assert "backed up" in await backups.run(3)
    # A partial backup left by a killed writer is removed with the rotation; the newest 2 are kept.
    stale = tmp_path / ".statsapi-20260101T000000Z.partial-999999"
    stale.mkdir()
    now[0] = at(3, QUIET_HOUR_UTC)
    outcome = await backups.run(4)
    assert "removed 2 old" in outcome, outcome
    kept = list_backups(str(tmp_path))
    assert [b["name"] for b in kept] == ["statsapi-20260303T030500Z", "statsapi-20260302T030500Z"]
    assert not stale.exists()
    for backup in kept:
        assert read_manifest(backup["path"])["collections"]["clan_seeds"]["documents"] == 1
    status = backups.status()
    assert status["count"] == 2 and status["last_success"]["name"] == "statsapi-20260303T030500Z"

    # Missed a day (down at the quiet hour): any hour once 30 h have passed.
    now[0] = at(4, 14)
    assert "backed up" in await backups.run(5)
    # Two days without a success: degraded, with the reason.
    now[0] = at(6, 16)
    assert backups.health_reasons() == [f"no backup succeeded in {tmp_path} in the last two days"]


@pytest.mark.gen_test(timeout=60)
async def test_a_failed_run_is_shown_with_its_reason_also_after_a_restart(app, tmp_path, monkeypatch):
    import server.jobs.backups as backups_module

    store = app.settings["store"]
    now = [at(1, QUIET_HOUR_UTC)]
    backups = ScheduledBackups(store, str(tmp_path), keep=2, writer="test", clock=lambda: now[0], started_at=now[0])
    assert backups.status()["last_failure"] is None

    async def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(backups_module, "write_backup", disk_full)
    with pytest.raises(OSError):
        await backups.run(0)  # the job runner records the run as failed
    failure = backups.status()["last_failure"]
    assert failure["at"] == int(now[0]) and failure["name"] == "statsapi-20260301T030500Z"
    assert failure["reason"] == "OSError: [Errno 28] No space left on device" and failure["seconds"] >= 0
    assert backups.status()["last_success"] is None and backups.status()["running"] is None
    # A process started later (the service restarted) shows it too; a success later keeps it.
    monkeypatch.undo()
    again = ScheduledBackups(store, str(tmp_path), keep=2, writer="test", clock=lambda: now[0], started_at=now[0])
    assert again.status()["last_failure"] == failure
    now[0] += 600
    assert "backed up" in await again.run(1)
    status = again.status()
    assert status["last_success"]["at"] > failure["at"] and status["last_failure"] == failure
    assert [b["name"] for b in list_backups(str(tmp_path))] == ["statsapi-20260301T031500Z"]


@pytest.mark.gen_test(timeout=60)
async def test_off_without_a_directory(app):
    backups = ScheduledBackups(app.settings["store"], None, keep=7, writer="test")
    assert await backups.run(0) == "off: no --backup-dir"
    assert backups.status() is None and backups.health_reasons() == []


@pytest.mark.gen_test(timeout=60)
async def test_status_shows_the_backups_of_its_directory(app, http_client, base_url):
    services = app.settings["services"]
    assert "backed up" in await services.backups.run(0)
    response = await http_client.fetch(base_url + "/api/v1/status", raise_error=False)
    assert response.code == 200
    backups = ujson.loads(response.body)["data"]["backups"]
    assert backups["directory"] == os.path.abspath(BACKUP_DIR) and backups["keep"] == 2
    assert backups["count"] >= 1 and backups["last_success"]["bytes"] > 0 and backups["running"] is None
    assert backups["last_failure"] is None


def stale(directory) -> str:
    return f"no backup succeeded in {directory} in the last two days"


@pytest.mark.gen_test(timeout=60)
async def test_the_two_day_clock_is_read_from_the_directory_so_a_restart_does_not_reset_it(app, tmp_path):
    store = app.settings["store"]
    kept, empty = tmp_path / "kept", tmp_path / "empty"
    now = [at(1, QUIET_HOUR_UTC)]
    first = ScheduledBackups(store, str(kept), keep=2, writer="test", clock=lambda: now[0], started_at=now[0])
    assert "backed up" in await first.run(0)
    assert first.status()["last_success"]["at"] == int(at(1, QUIET_HOUR_UTC))
    # The service restarts two days and an hour later (no backup succeeded meanwhile): degraded at
    # once, the clock read from the newest backup in the directory, not from the new start.
    now[0] = at(3, QUIET_HOUR_UTC + 1)
    restarted = ScheduledBackups(store, str(kept), keep=2, writer="test", clock=lambda: now[0], started_at=now[0])
    assert restarted.health_reasons() == [stale(kept)]
    # A directory that holds no backup: two days from the process's start.
    fresh = ScheduledBackups(store, str(empty), keep=2, writer="test", clock=lambda: now[0], started_at=now[0])
    assert fresh.health_reasons() == []
    now[0] += STALE_AFTER - 60
    assert fresh.health_reasons() == []
    now[0] += 120
    assert fresh.health_reasons() == [stale(empty)]


async def status(http_client, base_url) -> dict:
    response = await http_client.fetch(base_url + "/api/v1/status", raise_error=False)
    assert response.code == 200, response.body
    return ujson.loads(response.body)["data"]


@pytest.mark.gen_test(timeout=120)
async def test_status_says_degraded_when_the_newest_backup_is_older_than_two_days(
    app, http_client, base_url, tmp_path, monkeypatch
):
    store, services = app.settings["store"], app.settings["services"]
    # Its own directory (the module's is shared with the other tests), holding one backup that
    # finished three days ago; the process started just now.
    backups = ScheduledBackups(store, str(tmp_path), keep=2, writer="test")
    monkeypatch.setattr(services, "backups", backups)
    three_days_ago = time.time() - 3 * 86400
    await write_backup(store, str(tmp_path / f"{NAME_PREFIX}old"), clock=lambda: three_days_ago, pause=0)
    data = await status(http_client, base_url)
    assert data["health"] == "degraded"
    assert stale(tmp_path) in data["health_reasons"]
    assert data["backups"]["last_success"]["at"] == int(three_days_ago)
    # A backup now (due: the newest is older than 30 h) and the reason is gone.
    assert "backed up" in await backups.run(0)
    await asyncio.sleep(STATUS.answer_seconds)  # the degraded answer above is replayed that long
    data = await status(http_client, base_url)
    assert stale(tmp_path) not in data["health_reasons"]
    assert data["health"] == ("degraded" if data["health_reasons"] else "ok")


def backup_samples(text: str) -> dict:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name.startswith("statsapi_backup")
    }


@pytest.mark.gen_test(timeout=120)
async def test_metrics_count_the_backups_written_and_failed_and_show_the_last_success(
    app, http_client, base_url, tmp_path, monkeypatch
):
    import server.jobs.backups as backups_module

    store, services = app.settings["store"], app.settings["services"]
    backups = ScheduledBackups(store, str(tmp_path), keep=2, writer="test")
    monkeypatch.setattr(services, "backups", backups)

    async def scrape() -> dict:
        response = await http_client.fetch(base_url + "/metrics")
        assert response.code == 200
        return backup_samples(response.body.decode())

    ok, failed = ("statsapi_backups_total", (("outcome", "ok"),)), ("statsapi_backups_total", (("outcome", "failed"),))
    # None yet: both counts at 0, no last success.
    assert await scrape() == {ok: 0, failed: 0}

    async def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(backups_module, "write_backup", disk_full)
        with pytest.raises(OSError):
            await backups.run(0)
    assert await scrape() == {ok: 0, failed: 1}
    assert "backed up" in await backups.run(1)
    assert "not due" == await backups.run(2)  # a look whether one is due is no backup
    values = await scrape()
    last = backups.status()["last_success"]
    assert last["bytes"] > 0
    assert values == {
        ok: 1,
        failed: 1,
        ("statsapi_backup_last_success_timestamp_seconds", ()): last["at"],
        ("statsapi_backup_last_success_bytes", ()): last["bytes"],
    }
    assert abs(last["at"] - time.time()) < 120


def test_a_directory_that_holds_broken_or_unreadable_entries_lists_only_its_backups(tmp_path):
    (tmp_path / "no-figures").mkdir()
    (tmp_path / "no-figures" / "manifest.json").write_text(json.dumps({"format": 1}))
    (tmp_path / "not-json").mkdir()
    (tmp_path / "not-json" / "manifest.json").write_text("{")
    (tmp_path / "a-file").write_text("")
    assert list_backups(str(tmp_path)) == []
    assert list_backups(str(tmp_path / "a-file")) == []  # not a directory: none, no exception
    backups = ScheduledBackups(None, str(tmp_path), keep=2, writer="test")  # type: ignore[arg-type]
    assert backups.status()["last_success"] is None and backups.health_reasons() == []
