"""Shared fixtures: a SecantusDB child process, the upstream simulator, the app (helpers live in tests/helpers.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pytest

from tests.helpers import EXPECTED_VALUES_FILE, ROOT, build_app, free_port, wait_for_port


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


@pytest.fixture(scope="session")
def fast_upstream_sim():
    """A second simulator with a quota high enough for weeks of tracker passes in seconds
    (tests/helpers.py seed_tracking); the service under test keeps `upstream_sim`."""
    port = free_port()
    cmd = [sys.executable, "-m", "scripts.upstream_sim", "--port", str(port), "--rps", "200"]
    cmd += ["--expected-values", str(EXPECTED_VALUES_FILE)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=str(ROOT))
    try:
        wait_for_port(port, proc=proc)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture
def app_overrides():
    """Config overrides for `app`; a test module redefines this fixture to change them."""
    return {}


@pytest.fixture
def app(io_loop, mongo_uri, db_name, upstream_sim, app_overrides):
    """The real application over a real database and the simulator (pytest-tornado serves it)."""
    return build_app(io_loop, mongo_uri, db_name, **{"upstream_base_url": upstream_sim, **app_overrides})


@pytest.fixture
def artifacts_dir():
    path = ROOT / "tests" / "artifacts"
    path.mkdir(exist_ok=True)
    return path


os.environ.setdefault("STATSAPI_LOG_LEVEL", "WARNING")
