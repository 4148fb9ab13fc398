"""Shared fixtures: a SecantusDB child process, the upstream simulator, the app (helpers live in tests/helpers.py)."""

from __future__ import annotations

import os
import uuid

import pytest

from tests.helpers import ROOT, build_app, simulator


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
    """The upstream simulator as a child process at a real application_id's 10 requests/s."""
    with simulator(10) as url:
        yield url


@pytest.fixture(scope="session")
def fast_upstream_sim():
    """A second simulator with a quota high enough for weeks of tracker passes in seconds
    (tests/helpers.py seed_tracking); the service under test keeps `upstream_sim`."""
    with simulator(200) as url:
        yield url


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
