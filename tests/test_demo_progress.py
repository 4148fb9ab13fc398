"""The demo seeding's progress: what the seeder's bars tell the recorder, the one document it
keeps in job_runs (at most a write a second), and /status's `demo` field (null, seeding, ready,
failed), valid against the catalogue's schema. No seeding run: the seeder's bars are driven by hand."""

from __future__ import annotations

import asyncio

import pytest
import ujson
from mongomock_motor import AsyncMongoMockClient

from server.compose import demo
from server.compose.demo_progress import SEED_PHASES, SeedProgress, close_interrupted, recorded
from store.status import JobRuns
from tests.test_openapi import Contract


class Clock:
    def __init__(self, now: float):
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_the_progress_names_its_phase_steps_and_share_of_the_whole():
    progress = SeedProgress(lambda doc: asyncio.sleep(0), clock=Clock(1_700_000_000.0))
    assert progress.snapshot() == {
        "state": "seeding",
        "phase": "starting",
        "done": 0,
        "total": 0,
        "percent": 0.0,
        "started_at": "2023-11-14T22:13:20Z",
        "finished_at": None,
    }
    progress.step("tracker passes (days)", 30, 120)
    assert progress.snapshot()["percent"] == pytest.approx(100 * 0.25 / SEED_PHASES, abs=0.05)
    progress.step("current profiles", 10, 40)  # a new phase: the first counts whole
    snap = progress.snapshot()
    assert (snap["phase"], snap["done"], snap["total"]) == ("current profiles", 10, 40)
    assert snap["percent"] == pytest.approx(100 * 1.25 / SEED_PHASES, abs=0.05)
    progress.step("player counts (30 days)", 500, 500)
    progress.step("a bar the seeder added later", 5, 5)  # more phases than counted: never past 99.9 seeding
    assert progress.snapshot()["percent"] == 99.9


@pytest.mark.gen_test(timeout=10)
async def test_the_record_is_written_at_most_once_a_second_and_ends_ready_or_failed():
    writes: list[dict] = []

    async def write(doc):
        writes.append(doc)

    async def seeding(progress):
        for day in range(1, 41):  # 40 steps in 0.4 s: one write for them, not 40
            progress.step("tracker passes (days)", day, 40)
            await asyncio.sleep(0.01)
        return "summary"

    progress = SeedProgress(write)
    assert await recorded(progress, seeding(progress)) == "summary"
    assert writes[0]["state"] == "seeding" and writes[0]["phase"] == "starting"  # before any bar
    assert 2 <= len(writes) <= 4, writes
    assert all(w["state"] == "seeding" for w in writes[:-1])
    last = writes[-1]
    assert last["state"] == "ready" and last["percent"] == 100.0 and last["finished_at"] is not None
    assert last["phase"] == "done" and (last["done"], last["total"]) == (40, 40)

    async def broken(progress):
        progress.step("current profiles", 3, 10)
        raise RuntimeError("the simulator went away")

    writes.clear()
    progress = SeedProgress(write)
    with pytest.raises(RuntimeError):
        await recorded(progress, broken(progress))
    assert writes[-1]["state"] == "failed" and writes[-1]["phase"] == "failed during current profiles"
    assert 0 < writes[-1]["percent"] < 100 and writes[-1]["finished_at"] is not None


@pytest.mark.gen_test(timeout=10)
async def test_the_seeders_bars_tell_the_listener_of_their_own_task_only():
    heard: list[tuple] = []
    token = demo.progress_listener.set(lambda *step: heard.append(step))
    try:
        bar = demo._progress(3, "current profiles")
        bar.update(1)
        bar.update(2)
        bar.close()

        async def elsewhere():  # a task started before the listener was set would not hear it
            demo.progress_listener.set(None)
            demo._progress(5, "another task's bar").update(1)

        await asyncio.create_task(elsewhere())
    finally:
        demo.progress_listener.reset(token)
    assert heard == [("current profiles", 0, 3), ("current profiles", 1, 3), ("current profiles", 3, 3)]


@pytest.mark.gen_test(timeout=10)
async def test_job_runs_keep_the_demo_record_apart_from_the_jobs():
    runs = JobRuns(AsyncMongoMockClient()["statsapi"])
    assert await runs.demo() is None  # no seeding ever ran
    await runs.record("tank_statistics", True, "built")
    progress = SeedProgress(runs.record_demo, clock=Clock(1_700_000_000.0))
    progress.step("current profiles", 4, 8)
    await progress.save()
    progress.step("current profiles", 8, 8)
    await progress.save()  # replaced, not added
    assert await runs.demo() == progress.snapshot()
    assert (await runs.demo())["done"] == 8
    assert set(await runs.all()) == {"tank_statistics"}  # /status's jobs hold no "demo_seed" job
    # Its process stopped mid-way: the next start (data there, so no seeding) says it failed.
    await close_interrupted(runs, clock=Clock(1_700_000_600.0))
    interrupted = await runs.demo()
    assert interrupted["state"] == "failed" and interrupted["phase"] == "interrupted during current profiles"
    assert interrupted["finished_at"] == "2023-11-14T22:23:20Z" and interrupted["done"] == 8
    await close_interrupted(runs)  # a finished record stays as it is
    assert await runs.demo() == interrupted


@pytest.mark.gen_test(timeout=30)
async def test_status_says_null_then_the_seeding_then_ready(app, http_client, base_url):
    from handlers.openapi import openapi_document

    contract = Contract(openapi_document(app.settings["config"]))
    store, services = app.settings["store"], app.settings["services"]

    async def status():
        services.status._value = None  # past the status's 2 s reuse of its database read
        services.answers.clear()  # and its 1 s replayed answer
        response = await http_client.fetch(base_url + "/api/v1/status", headers={"Cache-Control": "no-cache"})
        contract.check("GET", "/api/v1/status", 200, response.headers, response.body)
        return ujson.loads(response.body)["data"]["demo"]

    assert await status() is None
    progress = SeedProgress(store.job_runs.record_demo)
    progress.step("tracker passes (days)", 12, 120)
    await progress.save()
    seeding = await status()
    assert seeding["state"] == "seeding" and seeding["phase"] == "tracker passes (days)"
    assert (seeding["done"], seeding["total"]) == (12, 120) and 0 < seeding["percent"] < 100
    assert seeding["finished_at"] is None and seeding["started_at"].endswith("Z")
    await progress.finish(True)
    ready = await status()
    assert ready["state"] == "ready" and ready["percent"] == 100 and ready["finished_at"] >= ready["started_at"]
