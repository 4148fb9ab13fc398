"""Schemathesis against the live service: the OpenAPI document and the server agree.

The service runs as a real subprocess (`python -m server`, tests.helpers.ServerProcess; its own database name,
the upstream simulator, no background jobs, limits x1000 so the fuzzer is not throttled), and
`st run` (Schemathesis CLI) fuzzes every operation of /api/v1/openapi.json with every check:
no 5xx, documented status codes, content types, headers and response schemas, 405 + Allow for
methods the document does not list, negative (invalid) data rejected with 4xx, valid data
accepted. Bounded: 30 examples per operation, a fixed seed, a few seconds in practice.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import uuid

import pytest

from server.contract.catalogue import PREFIX
from tests.helpers import ServerProcess

SEED = 20261122
MAX_EXAMPLES = 15  # per operation: 65 operations (the CSV and bulk-file ones too) in about a minute
RUN_TIMEOUT = 170  # seconds; the run itself takes well under a minute
# A session's `since` is refused (400 invalid_since) in the future or before the records kept:
# bounds that move with the clock, which no schema can state, so a schema-valid `since` may be
# refused there (only there). A stream is read for one event, then closed. Each session of an
# account not stored yet is a live lookup: fewer examples keep the simulator's 10 requests a
# second for the other operations' (a starved live search answered 503 once). /players takes
# search or ids (exactly one; ids with region): a rule between parameters that the document states
# in words, so a schema-valid request may be refused there with 400 (only there); a search not
# matching a tracked nickname is a live lookup, so fewer examples (as for the sessions). /roster the
# same: accounts or names (exactly one), none twice, a rule the document states in words; its unknown
# accounts are asked live (four requests a roster), so fewer examples still.
SESSION_CONFIG = """
[[operations]]
include-operation-id = ["getRoster", "headRoster"]
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "400", "401", "403", "404", "409", "429", "5xx"]
generation.max-examples = 5

[[operations]]
include-operation-id = ["getPlayerSearch", "headPlayerSearch"]
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "400", "401", "403", "404", "409", "429", "5xx"]
generation.max-examples = 10

[[operations]]
include-operation-id = ["getPlayerSession", "headPlayerSession", "headPlayerSessionStream"]
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "400", "401", "403", "404", "409", "429", "5xx"]
generation.max-examples = 10

[[operations]]
include-operation-id = "getPlayerSessionStream"
max-stream-events = 1
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "400", "401", "403", "404", "409", "429", "5xx"]
generation.max-examples = 10
"""


def st_executable() -> list[str]:
    local = os.path.join(os.path.dirname(sys.executable), "st")
    if os.path.exists(local):
        return [local]
    found = shutil.which("st")
    if found:
        return [found]
    return [sys.executable, "-m", "schemathesis.cli"]


@pytest.fixture
def live_service(mongo_uri, upstream_sim, tmp_path):
    server = ServerProcess(
        tmp_path,
        "--mongodb-uri",
        mongo_uri,
        "--db-name",
        "st_" + uuid.uuid4().hex[:12],
        "--upstream-base-url",
        upstream_sim,
        "--no-jobs",
        "--rate-limit-scale",
        "1000",
        "--log-level",
        "WARNING",
    )
    try:
        yield server
    finally:
        server.stop()


def test_schemathesis_finds_no_mismatch(live_service, tmp_path):
    server = live_service
    cmd = st_executable() + [
        "run",
        f"http://127.0.0.1:{server.port}{PREFIX}/openapi.json",
        "--checks",
        "all",
        "--max-examples",
        str(MAX_EXAMPLES),
        "--seed",
        str(SEED),
        "--workers",
        "2",
        "--generation-database",
        "none",
        "--request-timeout",
        "30",
        "--wait-for-schema",
        "15",
        "--no-color",
    ]
    (tmp_path / "schemathesis.toml").write_text(SESSION_CONFIG)
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}
    result = subprocess.run(cmd, cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    output = result.stdout + result.stderr
    assert server.proc.poll() is None, "the service died during the run:\n" + server.log()
    assert result.returncode == 0, output[-20000:]
    # Every operation of the document was tested (Schemathesis leaves out GET of the schema itself).
    selected = re.search(r"Operations:\s+(\d+) selected / (\d+) total", output)
    assert selected and selected.group(1) == selected.group(2) and int(selected.group(2)) >= 26, output[-5000:]
    assert re.search(r"Tested:\s+%s\b" % selected.group(1), output), output[-5000:]
    server_log = server.log_path.read_text()
    assert "Traceback" not in server_log, server_log[-5000:]
