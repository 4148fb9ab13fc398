"""The only module that creates a MongoDB client (a driver swap stays a one-module change)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pymongo
from motor.motor_asyncio import AsyncIOMotorClient
from pymongo import errors, monitoring

from store.writes import WriteHealth

# Every operation has a client-side deadline (pymongo's client-side operation timeout, CSOT):
# a request never waits on the database longer than this, whether the database is down,
# hung (SIGSTOP) or busy. Under CSOT the driver also sends maxTimeMS (the remaining time
# minus the round trip) with every command, so a query that timed out for us stops on the
# server too instead of running on after the 503.
OPERATION_TIMEOUT_S = 1.8
# Multi-step builds on the request path (a history, a digest) share one deadline: a request's
# reads, however many, end within REQUEST_DEADLINE_S + REQUEST_GUARD_S (1.95 s; under 2 s).
REQUEST_DEADLINE_S = 1.8
# A background job's step (a tracker batch's writes, a clan batch's writes, a retention batch)
# shares this deadline instead: nobody waits on it, and on a busy embedded database (one query
# at a time) a 100-member write can wait behind request reads for longer than a request may.
JOB_DEADLINE_S = 30.0


# Short timeouts so a request answers 503 in about 2 s when the database is down or hung,
# instead of pymongo's 30 s default; the driver's monitor reconnects by itself.
CLIENT_OPTIONS = dict(
    timeoutMS=int(OPERATION_TIMEOUT_S * 1000),
    serverSelectionTimeoutMS=1200,
    # Also the driver's heartbeat timeout, and a heartbeat that times out makes the driver cancel
    # every operation in flight (pymongo 4.x, `interrupt_connections`): on a loaded machine or a
    # one-query-at-a-time database a hello may wait behind a long query, so it gets 5 s. A down
    # database refuses at once; a hung one still answers 503 within each request's deadline.
    connectTimeoutMS=5000,
    # A read that timed out is not run a second time by the driver (it would run twice on
    # the server and hold the caller past its deadline).
    retryReads=False,
    heartbeatFrequencyMS=1000,
    maxPoolSize=50,
    tz_aware=True,
)


def deadline(seconds: float | None) -> contextlib.AbstractContextManager[None]:
    """A context manager giving every database operation inside it one shared deadline.

    `with deadline(2): ...` bounds a multi-step request build as a whole; background jobs use
    a longer one (`deadline(30)`) for their own bounded batches. Nested deadlines only shorten.
    Works across motor's executor threads (motor copies the context into them).
    """
    return pymongo.timeout(seconds)


def job_deadline() -> contextlib.AbstractContextManager[None]:
    """`deadline(JOB_DEADLINE_S)`: one step of a background job."""
    return pymongo.timeout(JOB_DEADLINE_S)


# Past the driver's own deadline, this much more before the request gives up waiting: the
# driver normally answers first; the guard is for when it cannot even start (every executor
# thread of motor blocked on a hung server), where CSOT's clock has not begun yet.
REQUEST_GUARD_S = 0.15


@contextlib.asynccontextmanager
async def request_deadline(seconds: float = REQUEST_DEADLINE_S) -> AsyncIterator[None]:
    """`deadline(seconds)` for the request path, also enforced on the event loop.

    With the database hung (SIGSTOP), operations queue for motor's executor threads before
    the driver's clock starts, so a request could wait several deadlines in a row. This
    stops waiting at `seconds` + a small guard and raises ExecutionTimeout (a database error:
    503), whatever the threads are doing; the abandoned operation ends on its own deadline.
    """
    try:
        async with asyncio.timeout(seconds + REQUEST_GUARD_S):
            with pymongo.timeout(seconds):
                yield
    except TimeoutError:
        raise errors.ExecutionTimeout(f"request deadline of {seconds:.1f} s passed") from None


class DatabaseHealth(monitoring.ServerHeartbeatListener):
    """The driver's heartbeats (every second, per server) say whether the database answers.

    Requests check it to answer 503 at once instead of each queueing on motor's thread
    pool for a full server-selection timeout while the database is down. With a replica
    set or several mongos, it is up while any server's last heartbeat succeeded, so one
    lost member does not turn every request into a 503.
    """

    def __init__(self) -> None:
        self.servers: dict = {}  # address -> last heartbeat succeeded

    @property
    def up(self) -> bool:
        return not self.servers or any(self.servers.values())

    def started(self, event: monitoring.ServerHeartbeatStartedEvent) -> None:
        """Required by the listener interface; only the outcome matters here."""

    def succeeded(self, event: monitoring.ServerHeartbeatSucceededEvent) -> None:
        self.servers[event.connection_id] = True

    def failed(self, event: monitoring.ServerHeartbeatFailedEvent) -> None:
        # A failed *awaited* (streaming) hello is retried at once on a fresh connection, and
        # the driver cancels one shortly after every reconnect: only that retry's verdict counts.
        if not event.awaited:
            self.servers[event.connection_id] = False


def create_client(uri: str, listeners: tuple = (), **options: Any) -> AsyncIOMotorClient[Any]:
    """Create the process's one client; call it inside the running loop. `listeners`: more
    pymongo event listeners (e.g. the command timer of /metrics)."""
    health = DatabaseHealth()
    writes = WriteHealth()  # whether the database can store now (store/writes.py)
    client = AsyncIOMotorClient(uri, event_listeners=[health, writes, *listeners], **{**CLIENT_OPTIONS, **options})
    client.statsapi_health = health  # type: ignore[attr-defined]  # read by database_up()
    client.statsapi_writes = writes  # type: ignore[attr-defined]  # read by store.writes.write_health()
    return client


def database_up(client: AsyncIOMotorClient[Any]) -> bool:
    health = getattr(client, "statsapi_health", None)
    return health.up if health is not None else True
