"""Database stopped: fast 503 database_unavailable, status degraded; restarted: 200 again."""

from __future__ import annotations

import asyncio
import time

import pytest
import ujson
from tornado.httpclient import HTTPRequest

from server.compose.embedded_db import EmbeddedDatabase
from tests.helpers import build_app, free_port

ACCOUNT = 500000001
DATA_PATHS = [
    f"/api/v1/player/{ACCOUNT}/eu/history",
    "/api/v1/clan/500000/eu",
    "/api/v1/clan/500000/eu/weekly",
    "/api/v1/online",
    "/api/v1/online/history",
]


@pytest.fixture
def own_database(tmp_path):
    database = EmbeddedDatabase(str(tmp_path / "db"), port=free_port()).start()
    yield database
    database.stop()


@pytest.fixture
def app(io_loop, own_database, upstream_sim):
    app = build_app(io_loop, own_database.uri, "lossdb", upstream_base_url=upstream_sim)
    snapshot = {
        "region": "eu",
        "account_id": ACCOUNT,
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "taken_at": int(time.time()),
        "battles": 10,
        "wins": 6,
        "damage_dealt": 9000,
        "frags": 8,
        "spotted": 5,
        "xp": 4000,
        "wn8": 1500.0,
    }
    io_loop.run_sync(lambda: app.settings["store"].players.save_snapshots([snapshot]))
    return app


async def get(http_client, base_url, path):
    request = HTTPRequest(base_url + path, request_timeout=10)  # a hang would fail here
    return await http_client.fetch(request, raise_error=False)


@pytest.mark.gen_test(timeout=120)
async def test_database_stopped_then_restarted(http_client, base_url, own_database):
    assert (await get(http_client, base_url, DATA_PATHS[0])).code == 200

    own_database.stop()
    for path in DATA_PATHS:
        started = time.monotonic()
        response = await get(http_client, base_url, path)
        elapsed = time.monotonic() - started
        body = ujson.loads(response.body)
        assert response.code == 503, (path, body)
        assert body["error"]["code"] == "database_unavailable"
        assert "no-store" in response.headers["Cache-Control"]
        assert int(response.headers["Retry-After"]) >= 1  # a client knows when to come back
        print(f"{path}: 503 in {elapsed:.2f}s")
    status = await get(http_client, base_url, "/api/v1/status")
    assert status.code == 200
    data = ujson.loads(status.body)["data"]
    assert data["health"] == "degraded" and data["database"]["reachable"] is False
    # The index needs no database at all.
    assert (await get(http_client, base_url, "/api/v1")).code == 200

    own_database.start()
    deadline = time.monotonic() + 30
    while True:
        response = await get(http_client, base_url, DATA_PATHS[0])
        if response.code == 200 or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.5)  # poll like a client would, within the endpoint's limit
    assert response.code == 200  # recovered without restarting the service
    assert ujson.loads(response.body)["data"]["snapshots"][0]["battles"] == 10
