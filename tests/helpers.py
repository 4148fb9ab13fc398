"""What tests share besides fixtures: paths, ports, app builders, child-process helpers, simulator control."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import ujson
from tornado.httpclient import AsyncHTTPClient, HTTPRequest

from server.compose.embedded_db import free_port
from server.domain.days import DAY_SECONDS, ManualClock, day_start
from server.services.tracker import Tracker, due_at
from store.tracker import SLICES

CLIENT_TIMEOUT = 60.0  # "generous": anything slower counts as a hang

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
EXPECTED_VALUES_FILE = SHARED_DATA / "wn8exp-2024-09-12.json"
# The fast simulator (weeks of tracker passes in seconds) throttles each realm at 150 requests/s
# per address, and the clients that seed through it are capped there too.
FAST_REALMS = {"eu": 150.0, "na": 150.0, "asia": 150.0}
VEHICLES_FILE = SHARED_DATA / "vehicles-2018-06.json"


@contextlib.contextmanager
def scratch_database(prefix: str = "statsapi-test-db-"):
    """A SecantusDB child on disk in a temporary directory, without fsync on commit; yields its URI.

    On disk, not ":memory:": an in-memory WiredTiger must hold every byte the server ever wrote in
    its cache (dropped databases and the oplog included) and cannot evict any of it, so late in a
    full run it stalled for tens of seconds (CI: a 100-update write past its 30 s job deadline,
    with a 1 GB and with a 4 GB cache). On disk it evicts to its files like any deployment."""
    from server.compose.embedded_db import EmbeddedDatabase

    directory = tempfile.mkdtemp(prefix=prefix)
    database = EmbeddedDatabase(directory, durable=False).start()
    try:
        yield database.uri
    finally:
        database.stop()
        shutil.rmtree(directory, ignore_errors=True)


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


@contextlib.contextmanager
def simulator(rps: float, throttle: str | None = None):
    """The upstream simulator as a child process with quota `rps`, talked to over real HTTP, in
    strict mode (the CDN's per-address throttle, `demo` blocked, out-of-range ids rejected);
    `throttle` overrides the realms' rates (default EU 6, NA 8, ASIA 8). Yields its base URL."""
    port = free_port()
    cmd = [sys.executable, "-m", "scripts.upstream_sim", "--port", str(port), "--rps", str(rps), "--strict"]
    # The published distributions over 500 players, not 5,000: a test asks them of a cold simulator.
    cmd += ["--published-players", "500"]
    if throttle:
        cmd += ["--throttle", throttle]
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
    from server.contract.config import Config

    # A data directory of its own: the kept expected-values table of one test is not another's.
    # No random panel unless a test asks for one: probing would share the simulator's quota.
    fields = {
        "jobs": False,
        "application_id": "test-app-id-secret",
        "data_dir": tempfile.mkdtemp(prefix="statsapi-"),
        "panel_size": 0,
    }
    fields.update(overrides)
    return dataclasses.replace(Config(), **fields)


def seed_tracking(io_loop, app, sim_url: str, accounts: dict[str, list[int]], days: int) -> float:
    """`days` days of the tracker's pass over `accounts`, ending now, into the app's database
    (the demo's seeding code: the service's own tracker on a clock travelling through the days,
    against the simulator at `sim_url`). Returns the `now` it ended at."""
    from server.compose.demo import seed_player_history
    from server.upstream.budget import UpstreamBudget
    from server.upstream.client import UpstreamClient
    from server.upstream.realms import RealmGates

    services, store = app.settings["services"], app.settings["store"]
    upstream = UpstreamClient(
        "seed-test",
        base_url=sim_url,
        budget=UpstreamBudget(200, hold_first_window=False),
        realms=RealmGates(FAST_REALMS, hold_first_window=False),  # the fast simulator's throttle
    )
    now = time.time()
    try:
        io_loop.run_sync(
            lambda: seed_player_history(store, upstream, services.ratings_source, accounts, days, now), timeout=240
        )
    finally:
        upstream.close()
    return now


def build_app(io_loop, uri: str, db_name: str, **config_overrides):
    """The real application over a real database, built inside the test's loop."""
    from server.compose.bootstrap import get_application

    config = make_config(mongodb_uri=uri, db_name=db_name, **config_overrides)
    app, store, limiter, services = io_loop.run_sync(lambda: get_application(config, uri))
    return app


class Answer:
    def __init__(self, path, status=None, headers=None, body=b"", elapsed=0.0, error=None, started=0.0):
        self.path, self.status, self.headers, self.body = path, status, headers or {}, body
        self.elapsed, self.error, self.started = elapsed, error, started

    @property
    def json(self):
        return ujson.loads(self.body) if self.body else None

    @property
    def code(self):
        body = self.json
        return body["error"]["code"] if body and not body.get("success") else None

    def __repr__(self):
        return f"<{self.path} {self.status} {self.code} {self.elapsed:.2f}s {self.error or ''}>"


def request(port, path, *, timeout=CLIENT_TIMEOUT, method="GET", headers=None) -> Answer:
    """One request on a fresh connection; transport errors are returned, not raised."""
    started = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, headers={"Connection": "close", **(headers or {})})
        response = conn.getresponse()
        body = response.read()
        headers = {k.lower(): v for k, v in response.getheaders()}
        return Answer(path, response.status, headers, body, time.monotonic() - started, started=started)
    except Exception as exc:  # timeout, reset, refused, incomplete read ...
        return Answer(path, error=f"{type(exc).__name__}: {exc}", elapsed=time.monotonic() - started, started=started)
    finally:
        conn.close()


# A test's own reads of the simulator (its truth, its controls) come from another loopback
# address than the service under test: the simulator throttles per client address and realm as
# the real CDN does, and the test's reads must not eat the service's allowance.
TEST_READER_ADDRESS = "127.0.0.2"


def sim(upstream_sim, path, body=None):
    url = upstream_sim.removeprefix("http://")
    host, port = url.split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10, source_address=(TEST_READER_ADDRESS, 0))
    try:
        if body is None:
            conn.request("GET", path)
        else:
            conn.request("POST", path, body=ujson.dumps(body), headers={"Content-Type": "application/json"})
        return ujson.loads(conn.getresponse().read())
    finally:
        conn.close()


async def sim_async(base: str, path: str, body: dict | None = None) -> dict:
    """`sim` from a test's event loop: GET `path` of the simulator at `base` (POST `body` as JSON
    when given) and return its JSON; any status but 200 fails the test."""
    request = HTTPRequest(
        base + path,
        method="GET" if body is None else "POST",
        body=None if body is None else ujson.dumps(body),
        request_timeout=30,
        network_interface=TEST_READER_ADDRESS,
    )
    response = await AsyncHTTPClient().fetch(request, raise_error=False)
    assert response.code == 200, (path, response.code, response.body)
    return ujson.loads(response.body)


def listens_in(pid: int, port: int) -> bool:
    """Whether process `pid` holds the socket listening on `port` (Linux: /proc/net/tcp's inode among
    the process's descriptors)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as lines:
            for line in list(lines)[1:]:
                fields = line.split()
                if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":  # 0A: LISTEN
                    inodes.add(f"socket:[{fields[9]}]")
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{pid}/fd/{fd}") in inodes:
                    return True
    return False


READY_PROBE = "/ready-probe"  # ServerProcess's first request (a 404): its access log line is the probe's


def answers_http(port: int) -> bool:
    """Whether something answers an HTTP request on `port` (any status)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("GET", READY_PROBE)
        connection.getresponse().read()
        return True
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()


class ServerProcess:
    """`python -m server` on a free port; its log goes to a file shown when a test fails."""

    def __init__(self, tmp_path, *args, name="server", wait=True):
        self.port = free_port()
        self.log_path = tmp_path / f"{name}-{self.port}.log"
        self._log = open(self.log_path, "wb")
        env = dict(os.environ, STATSAPI_LOG_LEVEL="INFO", PYTHONUNBUFFERED="1")
        env.setdefault("STATSAPI_PANEL_SIZE", "0")  # no probing of the test simulator unless asked
        # An application_id of its own (the strict simulator blocks `demo`, as the real API does)
        # and a data directory of its own (the kept expected-values table); flags still win.
        env.setdefault("STATSAPI_APPLICATION_ID", "test-app-id-secret")
        env.setdefault("STATSAPI_DATA_DIR", str(tmp_path / f"{name}-{self.port}-data"))
        cmd = [sys.executable, "-m", "server", "--port", str(self.port), *map(str, args)]
        self.proc = subprocess.Popen(
            cmd, cwd=str(ROOT), stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env
        )
        if wait:
            self.wait_ready()

    def wait_ready(self) -> ServerProcess:
        """Wait until it serves (start several first with wait=False to start them in parallel): the
        listening socket is this process's (a port that accepts may be another process's that was
        handed the same free port) and it answers HTTP (it listens before its start-up ends)."""
        try:
            wait_for_port(self.port, timeout=60, proc=self.proc)
            if not listens_in(self.proc.pid, self.port):
                raise RuntimeError(f"port {self.port} is another process's")
            if not wait_until(lambda: answers_http(self.port) or self.proc.poll() is not None, 60):
                raise RuntimeError("no HTTP answer")
            if self.proc.poll() is not None:
                raise RuntimeError(f"exited with {self.proc.returncode}")
        except Exception as exc:
            self.stop()
            raise RuntimeError(f"server did not start ({exc}):\n" + self.log()) from None
        return self

    @property
    def pid(self):
        return self.proc.pid

    def log(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(errors="replace")[-6000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if not self._log.closed:
            self._log.close()


def wait_until(predicate, timeout, step=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


# --- the published WN8 formula, written out independently of server/domain/ratings.py ---------------
def xvm_wn8(start: dict, end: dict, raw_table: dict) -> float:
    """XVM's account WN8 over the per-tank differences: sums of actual and expected values over the
    tanks present in the table (others left out of both sums), then the normalised ratios."""
    act = {"dmg": 0.0, "spot": 0.0, "frag": 0.0, "def": 0.0, "win": 0.0}
    exp = {"dmg": 0.0, "spot": 0.0, "frag": 0.0, "def": 0.0, "win": 0.0}
    for tank_id, after in end.items():
        before = start.get(tank_id, {})
        battles = after["battles"] - before.get("battles", 0)
        row = raw_table.get(tank_id)
        if battles <= 0 or row is None:
            continue
        act["dmg"] += after["damage_dealt"] - before.get("damage_dealt", 0)
        act["spot"] += after["spotted"] - before.get("spotted", 0)
        act["frag"] += after["frags"] - before.get("frags", 0)
        act["def"] += after["dropped_capture_points"] - before.get("dropped_capture_points", 0)
        act["win"] += after["wins"] - before.get("wins", 0)
        exp["dmg"] += battles * float(row["expDamage"])
        exp["spot"] += battles * float(row["expSpot"])
        exp["frag"] += battles * float(row["expFrag"])
        exp["def"] += battles * float(row["expDef"])
        exp["win"] += battles * float(row["expWinRate"]) / 100.0
    r_damage = act["dmg"] / exp["dmg"]
    r_spot = act["spot"] / exp["spot"]
    r_frag = act["frag"] / exp["frag"]
    r_def = act["def"] / exp["def"]
    r_win = act["win"] / exp["win"]
    r_win_c = max(0.0, (r_win - 0.71) / (1 - 0.71))
    r_damage_c = max(0.0, (r_damage - 0.22) / (1 - 0.22))
    r_frag_c = max(0.0, min(r_damage_c + 0.2, (r_frag - 0.12) / (1 - 0.12)))
    r_spot_c = max(0.0, min(r_damage_c + 0.1, (r_spot - 0.38) / (1 - 0.38)))
    r_def_c = max(0.0, min(r_damage_c + 0.1, (r_def - 0.10) / (1 - 0.10)))
    return (
        980 * r_damage_c
        + 210 * r_damage_c * r_frag_c
        + 155 * r_frag_c * r_spot_c
        + 75 * r_def_c * r_frag_c
        + 145 * min(1.8, r_win_c)
    )


async def run_days(tracker: Tracker, clock: ManualClock, first_day: str, days: int, *, at_end: bool = False) -> None:
    """Time travel: run the pass of `days` UTC days from `first_day`, each slice at its due instant
    (or every slice at the day's end with at_end), through the same code as the real pass."""
    day = first_day
    for _ in range(days):
        if at_end:
            clock.set(day_start(day) + DAY_SECONDS - 1)
            await tracker.tick()
        else:
            for slice_no in range(SLICES):
                clock.set(due_at(day, slice_no))
                await tracker.work_slice(day, slice_no)
        day = (dt.date.fromisoformat(day) + dt.timedelta(days=1)).isoformat()


def computed_table(region: str, through: str, base: str, gaps: dict[str, list], computed: dict[str, list]) -> dict:
    """A computed expected-values table as the tank statistics job stores it (store/expected.py):
    `gaps` and `computed` rows {"tank_id": [damage, spot, frag, defence, win_rate, players, battles]}."""
    from server.domain.days import days_before
    from store.expected import ExpectedTables

    version = f"{through}+ev1"
    return {
        "_id": f"{region}:{version}",
        "r": region,
        "version": version,
        "through": through,
        "window": {"from": days_before(through, 59), "through": through, "days": 60},
        "method": "ev1",
        "base": base,
        "minimums": {"tank_battles": 10, "account_battles": 100, "players": 20, "row_battles": 1000},
        "built_at": time.time(),
        "x": ExpectedTables.expiry(through),
        "gaps": {"passes": 2, "converged": True, "rows": gaps},
        "computed": {"passes": 3, "converged": True, "rows": computed},
    }
