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


# Tests whose assertions need a machine that is not busy with another test: a ratio of timings, an
# elapsed-time bound within a few seconds, a rate window, a fixed time budget of the service. Marked
# `timing` here; scripts/test.sh runs every other test first in three pytest-xdist workers, then these
# in one process with nothing else running (on 2 cores a neighbouring worker's CPU-heavy test made
# one of them fail now and then). Keep the list short: this phase runs on one core. A module's name
# marks each of its tests; a set names some of them (a parametrized test by its function's name).
TIMING: dict[str, set[str] | None] = {
    "test_index_plans.py": None,  # the median time at 10x the documents against 1x
    "test_bounded_reads.py": {  # 503 within ONE_DEADLINE_BOUND; a gate's concurrent builds
        "test_a_slow_history_is_503_with_retry_after_at_one_deadline_not_two",
        "test_a_slow_tanks_is_503_with_retry_after_at_one_deadline",
        "test_the_gate_bounds_concurrent_history_and_tanks_builds",
        "test_a_slow_search_is_503_with_retry_after_within_the_deadline_and_not_cached",
    },
    "test_bounded_work.py": {
        "test_cold_400_days_single_flight_bounded_then_materialised",  # 4 aggregations in the 0.5 s inline budget
        "test_a_full_gate_is_a_fast_503_never_a_queue",
        "test_a_hung_database_gives_503_within_the_deadline",
        "test_inline_aggregation_stops_at_its_time_budget",
        "test_a_read_that_never_returns_is_a_503_not_a_hang",
        "test_concurrent_distinct_long_histories_share_one_series_read",  # 64 builds joining one in-flight read
    },
    "test_connections.py": {"test_full_server_sheds_only_connections_that_waited"},  # SHED_MIN_WAIT 0.25 s
    "test_floods.py": {"test_a_hundred_simultaneous_lookups_from_a_hundred_addresses_admit_exactly_thirty"},
    "test_players.py": {"test_global_live_budget"},  # 31 lookups inside one rate window
    "test_scaleout.py": {"test_rate_limit_holds_across_two_processes"},  # rounds against 0.5 s flushes
    "test_tracker.py": {"test_live_lookups_are_not_queued_behind_the_pass_and_are_tracked"},  # waits <= window + 0.1 s
    "test_upstream_budget.py": None,  # the rate in any real second
    "test_upstream_realms.py": {"test_background_work_at_the_realm_caps_is_never_stalled"},
    "test_upstream_service.py": {"test_a_live_lookup_does_not_wait_behind_a_realm_that_backs_off"},
    "test_upstream_sim.py": {"test_requests_per_second_per_application_id"},
    # Every request of a fuzzing run answers within the service's 1.8 s deadline: beside three
    # workers on 2 cores a slow database read answered 503 database_unavailable.
    "test_schemathesis.py": None,
    "test_bench_scale.py": {"test_loader_writes_what_the_pass_writes"},  # the pass's job-step deadlines
    "test_upstream_sim_strict.py": {  # the throttle's 1 s window, stall and block
        "test_throttle_stalls_the_request_over_the_rate_per_address_and_realm",
        "test_a_stalled_request_is_closed_without_an_answer_after_stall_seconds",
        "test_a_burst_blocks_the_address_and_realm_for_block_seconds",
    },
}


# Phase 1's files longest first (its wall time is the busiest worker's): pytest-xdist hands out
# whole files in collection order (scripts/test.sh turns off its own order, by number of tests, which
# left a file holding one two-minute test for the end). The other files follow in their usual order.
# Refresh from a run's `--durations=0`, summed per file, when a file's time changes much.
LONGEST_FIRST = (
    "test_lighthouse.py",  # seeds a small demo, then six Lighthouse runs one after the other
    "test_backup.py",
    "test_marks.py",
    "test_site_browser.py",
    "test_tracker.py",
    "test_bench_throttle.py",
    "test_scheduled_backups.py",
    "test_tracker_drift.py",
    "test_official.py",
    "test_upstream_contract.py",
    "test_bench_backup.py",
    "test_faults.py",
    "test_recents_api.py",
    "test_site_vehicles_browser.py",
    "test_panel_figures.py",
    "test_population.py",
    "test_tracker_store.py",
    "test_site_tanks_browser.py",
    "test_sessions.py",
    "test_scaleout.py",
    "test_strength.py",
    "test_retention.py",
    "test_expected_method.py",
    "test_upstream.py",
    "test_bench.py",
    "test_nickname_prefixes.py",
    "test_site_marks_browser.py",
    "test_site_rankings.py",
    "test_panel.py",
    "test_full_disk.py",
    "test_openapi.py",
    "test_docs.py",
    "test_floods.py",
)


@pytest.hookimpl(tryfirst=True)  # before -m deselects by mark
def pytest_collection_modifyitems(items):
    gone = [name for name in LONGEST_FIRST if not (ROOT / "tests" / name).exists()]
    if gone:
        raise pytest.UsageError(f"tests/conftest.py LONGEST_FIRST names no test file: {gone}")
    files = {item.path.name for item in items}
    if files >= set(LONGEST_FIRST):  # a whole run (a file named alone keeps its order)
        rank = {name: position for position, name in enumerate(LONGEST_FIRST)}
        items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: files stay whole
    for item in items:
        if item.path.name not in TIMING:
            continue
        names = TIMING[item.path.name]
        missing = sorted(name for name in names or () if not hasattr(item.module, name))
        if missing:
            raise pytest.UsageError(f"tests/conftest.py TIMING names no test of {item.path.name}: {missing}")
        if names is None or getattr(item, "originalname", item.name) in names:
            item.add_marker(pytest.mark.timing)


os.environ.setdefault("STATSAPI_LOG_LEVEL", "WARNING")
