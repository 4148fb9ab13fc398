"""Shared fixtures: a SecantusDB child process, the upstream simulator, app builders."""

from __future__ import annotations

import dataclasses
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
EXPECTED_VALUES_FILE = SHARED_DATA / "wn8exp-2024-09-12.json"
VEHICLES_FILE = SHARED_DATA / "vehicles-2018-06.json"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, timeout: float = 30.0, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"port {port} did not open")


@pytest.fixture(scope="session")
def mongo_uri():
    """One SecantusDB server for the session; each test uses its own database name."""
    from server.embedded_db import EmbeddedDatabase

    database = EmbeddedDatabase(":memory:").start()
    yield database.uri
    database.stop()


@pytest.fixture
def db_name():
    return "t_" + uuid.uuid4().hex[:12]


@pytest.fixture(scope="session")
def upstream_sim():
    """The upstream simulator as a child process, talked to over real HTTP."""
    port = free_port()
    cmd = [sys.executable, "-m", "scripts.upstream_sim", "--port", str(port), "--rps", "10"]
    if EXPECTED_VALUES_FILE.exists():
        cmd += ["--expected-values", str(EXPECTED_VALUES_FILE)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=str(ROOT))
    try:
        wait_for_port(port, proc=proc)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


def make_config(**overrides):
    from server.config import Config

    fields = {"jobs": False, "application_id": "test-app-id-secret"}
    fields.update(overrides)
    return dataclasses.replace(Config(), **fields)


def build_app(io_loop, uri: str, db_name: str, **config_overrides):
    """The real application over a real database, built inside the test's loop."""
    from server.bootstrap import get_application

    config = make_config(mongodb_uri=uri, db_name=db_name, **config_overrides)
    app, store, limiter, services = io_loop.run_sync(lambda: get_application(config, uri))
    return app


@pytest.fixture
def artifacts_dir():
    path = ROOT / "tests" / "artifacts"
    path.mkdir(exist_ok=True)
    return path


os.environ.setdefault("STATSAPI_LOG_LEVEL", "WARNING")
