"""Shared fixtures: a SecantusDB child process, the upstream simulator, the app (helpers live in tests/helpers.py)."""

from __future__ import annotations

import json
import os
import uuid

import pytest

from tests.helpers import EXPECTED_VALUES_FILE, FAST_REALMS, ROOT, build_app, scratch_database, simulator


@pytest.fixture(scope="session")
def mongo_uri():
    """One SecantusDB server for the session; each test uses its own database name. A module whose
    tests write much (or must not wait behind what every earlier test left on the shared server)
    overrides this fixture with a server of its own (tests/helpers.py scratch_database)."""
    with scratch_database() as uri:
        yield uri


@pytest.fixture
def db_name(mongo_uri):
    """A fresh database name, left in place when the test ends: the session's database directory
    goes as a whole at the end. SecantusDB drops a database row by row under its one store lock
    (py-spy: Storage.drop_database -> _delete_keys), minutes for a large one, and every other
    test's command waits behind it (a full run stalled that way, in memory and on disk)."""
    return "t_" + uuid.uuid4().hex[:12]


@pytest.fixture
def store(io_loop, mongo_uri, db_name):
    """A Store over the session's SecantusDB as the service runs it there (no TTL indexes)."""
    from store import Store, create_client

    client = create_client(mongo_uri)
    store = Store(client, db_name, rate_collection_bytes=1 << 20, ttl_indexes=False)
    io_loop.run_sync(store.ensure_schema)
    yield store
    client.close()  # the db_name fixture drops the database (without the 1.8 s request deadline)


@pytest.fixture(scope="module")
def raw_table() -> dict[int, dict]:
    """The real XVM table read straight from ../shared/data (the independent side of WN8 checks)."""
    if not EXPECTED_VALUES_FILE.exists():
        pytest.skip(f"real XVM table not available at {EXPECTED_VALUES_FILE}")
    doc = json.loads(EXPECTED_VALUES_FILE.read_text())
    return {int(row["IDNum"]): row for row in doc["data"]}


@pytest.fixture(scope="session")
def upstream_sim():
    """The upstream simulator as a child process at a real application_id's 10 requests/s."""
    with simulator(10) as url:
        yield url


@pytest.fixture(scope="session")
def fast_upstream_sim():
    """A second simulator with a quota high enough for weeks of tracker passes in seconds
    (tests/helpers.py seed_tracking); the service under test keeps `upstream_sim`."""
    with simulator(200, throttle=",".join(f"{realm}={rate:g}" for realm, rate in FAST_REALMS.items())) as url:
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
