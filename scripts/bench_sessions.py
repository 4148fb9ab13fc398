"""Sessions' cost: upstream requests and database writes of watching, and cached reads with streams open.

    .venv/bin/python -m scripts.bench_sessions                 # 300 watched accounts, 1,000 streams
    .venv/bin/python -m scripts.bench_sessions --accounts 50 --streams 100 --play-hours 2   # a smoke run

1. Watching (in this process, on simulated time): the simulator plays each day's battles one every
   6 minutes (`--battle-seconds 360`); N eu accounts are watched, each watch beginning at a random
   moment of the first `--arrivals` minutes (a session request renews each watch every 10 minutes),
   and the real Watcher ticks every 5 simulated seconds as in the service, through the real
   upstream client asking the simulator "as of" the simulated clock. Measured: upstream requests
   per watched account-hour in an idle window (02:00-04:00 UTC: nobody of eu plays then), and
   upstream requests and database write commands per battle the watched accounts played in the
   evening (13:00-22:00 UTC: every eu session), the battles counted from the simulator's own totals;
   each in all and `steady` (from two rounds after the last watch began), the watches' first
   measurements apart (`first_measurement`, per watch).
2. Streams (the service as a process, real time): p99 of cached `/player` reads at one client,
   then again while `--streams` session streams are open (3 per client address, as the limits
   allow) over 10 accounts, one of which gets a new state every 5 s (a capture written into the
   service's database as the watcher writes one after a battle: its streams are sent the new
   session), then after they are closed.
3. Real time (`--realtime MINUTES`, alone; counts only): the service with its jobs (the watcher,
   the tracker, the sampler) against the strict simulator, each of N accounts watched by a session
   request from its own client address (a live lookup under the limits for an account it holds
   nothing of), renewed every 10 minutes: the upstream requests it made, and how many the
   simulator's throttle stalled or its quota refused (the goal: none).

Goals: at most 1.2 requests per watched account-hour idle (steady), at most 2 per battle played
beyond that (`per_battle`: the evening's steady requests less the same account-hours at the idle
rate, per battle; every request per battle is reported beside it), and the cached-read p99 with the
streams open within 1.2 x of the p99 without them in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import http.client
import json
import multiprocessing
import os
import random
import shutil
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from pymongo import monitoring  # noqa: E402

from scripts.bench_scale import (  # noqa: E402
    DB_NAME,
    PREFIX,
    Clients,
    percentile,
    say,
    start_service,
    start_simulator,
)
from scripts.bench_throttle import sim_reading  # noqa: E402
from scripts.loadkit.processes import stop_group  # noqa: E402
from scripts.upstream_sim.ids import account_created_at, existing_accounts  # noqa: E402
from server.compose.demo import TimeTravelUpstream  # noqa: E402
from server.compose.embedded_db import EmbeddedDatabase, running_uri  # noqa: E402
from server.contract.catalogue import (  # noqa: E402
    STREAM_POLL_SECONDS,
    STREAMS_PER_CLIENT,
    WATCH_REFRESH_SECONDS,
    WATCH_SECONDS,
    WATCH_TICK_SECONDS,
)
from server.contract.config import Config  # noqa: E402
from server.domain.days import DAY_SECONDS, ManualClock  # noqa: E402
from server.domain.records import Timeline, pack  # noqa: E402
from server.services.sessions import Watcher  # noqa: E402
from server.upstream.client import ACCOUNT_FIELDS, UpstreamClient  # noqa: E402
from store import Store, create_client  # noqa: E402
from store.constants import TANK_COUNTERS  # noqa: E402
from store.sessions import watched_id  # noqa: E402

REGION = "eu"
BATTLE_SECONDS = 360
IDLE = (2, 4)  # UTC hours: no eu session is under way
PLAY = (13, 22)  # UTC hours: every eu session (the simulator's evening window, its battles before it)
RENEW_SECONDS = 600  # a session request renews its account's watch this often
PLAY_EVERY = 5.0  # seconds between the streams' accounts' new states while the reads run
STREAMED = {"events": 0, "bytes": 0}  # session events and bytes the open streams received
WRITES = frozenset({"insert", "update", "delete", "findAndModify"})


class WriteCounter(monitoring.CommandListener):
    """Write commands and the documents they name (update statements, inserted documents)."""

    def __init__(self) -> None:
        self.commands = 0
        self.statements = 0

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        if event.command_name in WRITES:
            self.commands += 1
            body = event.command
            self.statements += len(body.get("updates") or body.get("documents") or body.get("deletes") or [None])

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        return None

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        return None


class Counted:
    """An upstream that counts the requests made through it, by method."""

    def __init__(self, upstream) -> None:
        self._upstream = upstream
        self.calls: dict[str, int] = {}

    def __getattr__(self, name: str):
        method = getattr(self._upstream, name)

        async def call(*args, **kwargs):
            self.calls[name] = self.calls.get(name, 0) + 1
            return await method(*args, **kwargs)

        return call


def pick_accounts(n: int, before: float) -> list[int]:
    """eu accounts that existed a month before `before` (so every day of the run is theirs)."""
    return [a for a in existing_accounts(REGION, n * 3) if account_created_at(REGION, a) < before - 30 * DAY_SECONDS][
        :n
    ]


async def total_battles(upstream, clock: ManualClock, accounts: list[int]) -> int:
    """The simulator's own career battles of `accounts` as of the clock (not counted as watching)."""
    total = 0
    for start in range(0, len(accounts), 100):
        infos = await TimeTravelUpstream(upstream, clock).account_info(
            REGION, accounts[start : start + 100], fields=ACCOUNT_FIELDS, caller="other"
        )
        total += sum(
            int(((info or {}).get("statistics") or {}).get("all", {}).get("battles") or 0) for info in infos.values()
        )
    return total


async def watch_window(
    uri: str, sim_base: str, accounts: list[int], first: float, hours: float, arrivals_minutes: float
) -> dict:
    """Watch `accounts` from `first` for `hours` simulated hours, each watch beginning at a random
    moment of the first `arrivals_minutes` (as session requests come), the Watcher ticking every
    WATCH_TICK_SECONDS as in the service. The steady figures count from two rounds after the last
    watch began; `first_measurement` is what the watches' beginnings cost before that."""
    counter = WriteCounter()
    client = create_client(uri, listeners=(counter,))
    other = create_client(uri)  # the session requests' renewals: not the watcher's writes
    raw = UpstreamClient("bench-sessions", base_url=sim_base)
    try:
        store = Store(client, DB_NAME, capped=False, ttl_indexes=False)
        renewals = Store(other, DB_NAME, capped=False, ttl_indexes=False)
        await store.ensure_schema()
        clock = ManualClock(first)
        upstream = Counted(TimeTravelUpstream(raw, clock))
        watcher = Watcher(store, upstream, clock=clock, monotonic=clock)  # its share per simulated minute
        battles0 = await total_battles(raw, clock, accounts)
        randomness = random.Random(35)
        begins = sorted((first + randomness.uniform(0, arrivals_minutes * 60), a) for a in accounts)
        steady_from = first + arrivals_minutes * 60 + 2 * WATCH_REFRESH_SECONDS
        commands0, statements0 = counter.commands, counter.statements
        captures, arrived, at_steady = 0, 0, None
        started = time.monotonic()
        for step in range(int(hours * 3600 / WATCH_TICK_SECONDS)):
            now = first + WATCH_TICK_SECONDS * step
            clock.set(now)
            while arrived < len(begins) and begins[arrived][0] <= now:
                await renewals.watched.watch(REGION, begins[arrived][1], begins[arrived][0] + WATCH_SECONDS, now)
                arrived += 1
            if step and (now - first) % RENEW_SECONDS == 0:
                keys = [watched_id(REGION, a) for _, a in begins[:arrived]]
                await renewals.watched.extend(keys, now + WATCH_SECONDS, now)
            if at_steady is None and now >= steady_from:
                at_steady = (dict(upstream.calls), await total_battles(raw, clock, accounts))
            captures += await watcher.tick(REGION)
        end = first + hours * 3600
        clock.set(end)
        battles = await total_battles(raw, clock, accounts) - battles0
        requests = sum(upstream.calls.values())
        assert at_steady is not None, "the window ends before the watches settle"
        early_calls, battles_at_steady = at_steady
        early = sum(early_calls.values())
        steady_hours = (end - steady_from) / 3600
        steady_battles = battles0 + battles - battles_at_steady
        return {
            "accounts": len(accounts),
            "hours": hours,
            "arrivals_minutes": arrivals_minutes,
            "battles": battles,
            "captures": captures,
            "requests": dict(upstream.calls),
            "requests_per_account_hour": round(requests / (len(accounts) * hours), 3),
            "requests_per_battle": round(requests / battles, 3) if battles else None,
            "first_measurement": {
                "requests": early_calls,
                "requests_per_watch": round(early / len(accounts), 3),
                "battles": battles_at_steady - battles0,
            },
            "steady": {
                "hours": round(steady_hours, 3),
                "battles": steady_battles,
                "requests": {name: n - early_calls.get(name, 0) for name, n in upstream.calls.items()},
                "requests_per_account_hour": round((requests - early) / (len(accounts) * steady_hours), 3),
                "requests_per_battle": round((requests - early) / steady_battles, 3) if steady_battles else None,
            },
            "write_commands": counter.commands - commands0,
            "documents_written": counter.statements - statements0,
            "write_commands_per_battle": round((counter.commands - commands0) / battles, 3) if battles else None,
            "seconds": round(time.monotonic() - started, 1),
        }
    finally:
        raw.close()
        client.close()
        other.close()


def timed_gets(port: int, paths: list[str], clients: Clients, window: float = 0.0) -> dict:
    """The paths' latencies, one request after another, spread evenly over `window` seconds (a
    measure that spans the streams' polls and comment lines, not a fraction of a second)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    latencies, statuses = [], {}
    begun = time.perf_counter()
    for k, path in enumerate(paths):
        time.sleep(max(0.0, begun + k * window / len(paths) - time.perf_counter()))
        started = time.perf_counter()
        conn.request("GET", path, headers={"X-Forwarded-For": clients.next()})
        response = conn.getresponse()
        response.read()
        latencies.append(1000 * (time.perf_counter() - started))
        statuses[response.status] = statuses.get(response.status, 0) + 1
    conn.close()
    return {
        "n": len(latencies),
        "p50_ms": round(percentile(latencies, 0.5), 2),
        "p99_ms": round(percentile(latencies, 0.99), 2),
        "statuses": statuses,
    }


async def open_streams(port: int, accounts: list[int], n: int) -> tuple[list, dict]:
    """`n` session streams (STREAMS_PER_CLIENT per client address) over `accounts`; each is read
    in the background so the server never waits on a full socket. Returns them and their statuses."""
    streams, statuses = [], {}
    for i in range(n):
        client = f"10.88.{(i // STREAMS_PER_CLIENT) // 250}.{1 + (i // STREAMS_PER_CLIENT) % 250}"
        account = accounts[i % len(accounts)]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            f"GET {PREFIX}/player/{account}/{REGION}/session/stream?since=today HTTP/1.1\r\n"
            f"Host: 127.0.0.1\r\nX-Forwarded-For: {client}\r\nAccept: text/event-stream\r\n\r\n".encode()
        )
        await writer.drain()
        status_line = await reader.readline()
        status = int(status_line.split()[1]) if status_line else 0
        statuses[status] = statuses.get(status, 0) + 1

        async def drain(reader: asyncio.StreamReader = reader) -> int:
            """Read the stream until the server closes it (so it never waits on a full socket),
            counting its session events in STREAMED."""
            received = 0
            while chunk := await reader.read(65536):
                received += len(chunk)
                STREAMED["events"] += chunk.count(b"event: session")
                STREAMED["bytes"] += len(chunk)
            return received

        streams.append((writer, asyncio.get_running_loop().create_task(drain())))
    return streams, statuses


async def close_streams(streams: list) -> None:
    for writer, task in streams:
        writer.close()
        task.cancel()
    await asyncio.gather(*(task for _, task in streams), return_exceptions=True)


def hold_streams(port: int, accounts: list[int], n: int, conn) -> None:
    """The child process that opens the streams and reads them: sends their statuses once open,
    then the counts of what they received at each "count", and closes them at "close"."""

    async def main() -> None:
        opened, statuses = await open_streams(port, accounts, n)
        conn.send(statuses)
        while await asyncio.to_thread(conn.recv) == "count":
            conn.send(dict(STREAMED))
        await close_streams(opened)
        conn.send(dict(STREAMED))

    asyncio.run(main())


async def play(data_dir: str, accounts: list[int], stop: threading.Event) -> int:
    """While the streams are open: every PLAY_EVERY seconds one of `accounts` (in turn) "plays a
    battle" — a new watcher capture in the service's database (its newest state with one more
    battle on its most played tank), as the watcher writes after a battle — so each of its streams
    is sent the new session. Returns the states written."""
    uri = running_uri(os.path.join(data_dir, "db"))
    assert uri is not None, "the service's database is not running"
    client = create_client(uri)
    store = Store(client, Config().db_name, capped=False, ttl_indexes=False)
    written = 0
    try:
        states = {}
        for account in accounts:
            today = dt.datetime.now(dt.UTC).date()
            timeline = Timeline.of(
                await store.tanks.timeline_records(
                    REGION, account, (today - dt.timedelta(days=2)).isoformat(), today.isoformat()
                )
            )
            found = timeline.raw_state_on(today.isoformat())
            if found is not None:
                states[account] = found[1]
        turn = 0
        while not stop.is_set() and states:
            account = list(states)[turn % len(states)]
            state = states[account]
            tank = max(state, key=lambda t: state[t][0])
            for counter, more in (("battles", 1), ("wins", 1), ("damage_dealt", 1500)):
                state[tank][TANK_COUNTERS.index(counter)] += more
            now = time.time()
            await store.watched.capture(REGION, account, now, int(now), pack(state), None, now + 60)
            written += 1
            turn += 1
            await asyncio.sleep(PLAY_EVERY)
    finally:
        client.close()
    return written


def streams_part(workdir: str, sim_base: str, accounts: list[int], streams: int, requests: int, window: float) -> dict:
    """The service on its own data: cached /player p99 without streams, with `streams` open, after."""
    proc, port = start_service(os.path.join(workdir, "service"), sim_base, os.path.join(workdir, "service.log"))
    try:
        clients = Clients()
        cached = accounts[:10]
        for k, account in enumerate(cached):  # cached by a live lookup each (its own client address)
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            conn.request("GET", f"{PREFIX}/player/{account}/{REGION}", headers={"X-Forwarded-For": f"10.99.0.{k + 1}"})
            conn.getresponse().read()
            conn.close()
        time.sleep(2)  # the ratings that follow a live lookup
        paths = [f"{PREFIX}/player/{cached[i % len(cached)]}/{REGION}" for i in range(requests)]
        timed_gets(port, paths[:50], clients)  # warm
        without = timed_gets(port, paths, clients, window)

        def with_streams() -> tuple[dict, dict, int]:
            # The streams are held and read by a child process, so their reading never competes
            # with the timed reads for this process's interpreter.
            mine, theirs = multiprocessing.get_context("fork").Pipe()
            holder = multiprocessing.get_context("fork").Process(
                target=hold_streams, args=(port, cached, streams, theirs), daemon=True
            )
            holder.start()
            statuses = mine.recv()
            time.sleep(10)  # two polls of the streams' accounts
            mine.send("count")
            before = mine.recv()
            stop = threading.Event()
            pushed: dict[str, int] = {}
            player = threading.Thread(
                target=lambda: pushed.update(states=asyncio.run(play(os.path.join(workdir, "service"), cached, stop)))
            )
            player.start()
            measured = timed_gets(port, paths, clients, window)
            stop.set()
            player.join()
            time.sleep(STREAM_POLL_SECONDS + 1)  # the last state's events
            mine.send("close")
            counted = mine.recv()
            holder.join(30)
            measured["streamed"] = {key: counted[key] - before[key] for key in counted}
            return measured, statuses, pushed.get("states", 0)

        during, statuses, pushed = with_streams()
        time.sleep(2)
        after = timed_gets(port, paths, clients, window)
        with urllib.request.urlopen(f"{sim_base}/_sim/stats", timeout=30) as answer:
            upstream = sim_reading(json.loads(answer.read()))
        return {
            "streams_asked": streams,
            "stream_statuses": statuses,
            "without": without,
            "with_streams": during,
            "after": after,
            "window_seconds": window,
            "states_pushed": pushed,  # new states of the followed accounts while the reads ran
            # The service's upstream requests over the whole part (live lookups, the watcher): what
            # the simulator answered, stalled (its throttle) and refused (its quota).
            "upstream": {key: upstream[key] for key in ("sent", "answered", "stalled", "refused", "answered_by_path")},
            "p99_ratio": round(during["p99_ms"] / max(without["p99_ms"], 1e-9), 2),
        }
    finally:
        stop_group(proc, 30.0)


def session_request(port: int, account: int, client: str) -> tuple[int, float]:
    """One session request (it watches the account): (status, Retry-After seconds or 0)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request(
            "GET", f"{PREFIX}/player/{account}/{REGION}/session?since=today", headers={"X-Forwarded-For": client}
        )
        response = conn.getresponse()
        response.read()
        return response.status, float(response.getheader("Retry-After") or 0)
    finally:
        conn.close()


def read_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=30) as answer:
        return json.loads(answer.read())


def realtime_part(workdir: str, sim_base: str, accounts: list[int], minutes: float) -> dict:
    """The whole service, its jobs on (the watcher, the tracker, the sampler), in real time against
    the strict simulator: each account watched by a session request from its own client address
    (a live lookup under the limits for an account it holds nothing of), renewed every
    RENEW_SECONDS, for `minutes`. Counts what the simulator answered, stalled and refused."""
    before = sim_reading(read_json(f"{sim_base}/_sim/stats"))
    proc, port = start_service(
        os.path.join(workdir, "realtime"), sim_base, os.path.join(workdir, "realtime.log"), jobs=True
    )
    statuses: dict[int, int] = {}
    begun = time.monotonic()
    due = {account: begun for account in accounts}  # when each account's next session request is
    try:
        while (now := time.monotonic()) < begun + minutes * 60:
            ready = [account for account, at in due.items() if at <= now]
            for account in ready:
                n = accounts.index(account)  # each account asked from its own client address
                status, retry_after = session_request(port, account, f"10.66.{n // 250}.{1 + n % 250}")
                statuses[status] = statuses.get(status, 0) + 1
                due[account] = time.monotonic() + (RENEW_SECONDS if status == 200 else max(retry_after, 5.0))
                if status != 200:
                    break  # over a limit: the rest wait their turn
            time.sleep(1.0)
        service = read_json(f"http://127.0.0.1:{port}{PREFIX}/status")["data"]
    finally:
        stop_group(proc, 30.0)
    after = sim_reading(read_json(f"{sim_base}/_sim/stats"))
    by_path = {
        path: n - before["answered_by_path"].get(path, 0)
        for path, n in after["answered_by_path"].items()
        if n != before["answered_by_path"].get(path, 0)
    }
    hours = minutes / 60
    return {
        "accounts": len(accounts),
        "minutes": minutes,
        "session_statuses": statuses,
        "upstream": {
            "answered": after["answered"] - before["answered"],
            "stalled": after["stalled"] - before["stalled"],
            "refused": after["refused"] - before["refused"],
            "blocks": after["blocks"] - before["blocks"],
            "answered_by_path": by_path,
        },
        "watcher": service.get("watcher"),
        "watcher_requests_per_account_hour": round(
            (service.get("watcher") or {}).get("upstream_requests", 0) / (len(accounts) * hours), 2
        ),
    }


def per_battle(idle: dict, play: dict) -> dict:
    """What the battles cost beyond watching itself: the evening's steady requests less what the
    same watched account-hours cost idle (the idle goal's part), per battle; and every request of
    the evening per battle, as measured."""
    steady = play["steady"]
    account_hours = play["accounts"] * steady["hours"]
    watching = idle["steady"]["requests_per_account_hour"] * account_hours
    requests = sum(steady["requests"].values())
    battles = steady["battles"]
    return {
        "battles": battles,
        "requests": requests,
        "of_them_watching_at_the_idle_rate": round(watching, 1),
        "requests_per_battle_beyond_watching": round((requests - watching) / battles, 3) if battles else None,
        "requests_per_battle_all": round(requests / battles, 3) if battles else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--accounts", type=int, default=300, help="eu accounts watched")
    parser.add_argument("--idle-hours", type=float, default=IDLE[1] - IDLE[0])
    parser.add_argument("--play-hours", type=float, default=PLAY[1] - PLAY[0])
    parser.add_argument(
        "--arrivals", type=float, default=10.0, help="minutes over which the watches begin, at random moments"
    )
    parser.add_argument("--streams", type=int, default=1000, help="session streams open in part 2")
    parser.add_argument("--requests", type=int, default=300, help="cached /player reads per measure")
    parser.add_argument(
        "--window", type=float, default=40.0, help="seconds each cached-read measure spans (a comment line's 30 s)"
    )
    parser.add_argument("--json", default="bench-sessions.json")
    parser.add_argument("--streams-only", action="store_true", help="part 2 alone (the streams)")
    parser.add_argument(
        "--watch-only", action="store_true", help="part 1 alone (counts only: no timing, any machine load)"
    )
    parser.add_argument(
        "--realtime",
        type=float,
        metavar="MINUTES",
        help="part 3 alone: the service with its jobs watching --accounts in real time against the strict "
        "simulator for MINUTES (counts only: no timing, any machine load)",
    )
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="bench-sessions-")
    day = dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)
    midnight = dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC).timestamp()
    # Strict (the real API's throttle per address and realm) when only the streams run: the
    # watching part runs on simulated time, as fast as it can, which no real-time throttle admits.
    strict = ("--strict",) if args.streams_only or args.realtime else ()
    if strict:  # the strict simulator blocks the 'demo' application_id, as the real API does
        os.environ.setdefault("STATSAPI_APPLICATION_ID", "bench-sessions")
    sim, sim_base = start_simulator(workdir, 2000, 4096, ("--battle-seconds", str(BATTLE_SECONDS), *strict))
    database = EmbeddedDatabase(os.path.join(workdir, "db")).start()
    result: dict = {"day": day.isoformat(), "battle_seconds": BATTLE_SECONDS}
    try:
        accounts = pick_accounts(args.accounts, midnight)
        if args.realtime:
            database.stop()
            database = None
            say(f"watching {len(accounts)} {REGION} accounts in real time for {args.realtime} minutes")
            result["realtime"] = realtime_part(workdir, sim_base, accounts, args.realtime)
            say(f"  realtime: {result['realtime']}")
        elif not args.streams_only:
            say(f"watching {len(accounts)} {REGION} accounts of {day}")
            result["idle"] = asyncio.run(
                watch_window(
                    database.uri, sim_base, accounts, midnight + IDLE[0] * 3600, args.idle_hours, args.arrivals
                )
            )
            say(f"  idle: {result['idle']}")
            result["play"] = asyncio.run(
                watch_window(
                    database.uri, sim_base, accounts, midnight + PLAY[0] * 3600, args.play_hours, args.arrivals
                )
            )
            say(f"  play: {result['play']}")
            result["per_battle"] = per_battle(result["idle"], result["play"])
            say(f"  per battle: {result['per_battle']}")
        if database is not None:
            database.stop()
            database = None
        if not args.watch_only and not args.realtime:
            result["streams"] = streams_part(workdir, sim_base, accounts, args.streams, args.requests, args.window)
            say(f"  streams: {result['streams']}")
    finally:
        if database is not None:
            database.stop()
        stop_group(sim, 30.0)
        shutil.rmtree(workdir, ignore_errors=True)
    with open(args.json, "w") as handle:
        json.dump(result, handle, indent=2)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
