"""The only module that creates a MongoDB client (a driver swap stays a one-module change)."""
from __future__ import annotations

from motor.motor_asyncio import AsyncIOMotorClient
from pymongo import errors, monitoring

# Errors that mean "the database is unreachable right now": answered 503, never 500.
DATABASE_ERRORS = (
    errors.ConnectionFailure,  # includes AutoReconnect, NetworkTimeout, ServerSelectionTimeoutError
    errors.ExecutionTimeout,
    errors.WTimeoutError,
)

# Short timeouts so a request answers 503 in about 2 s when the database is down,
# instead of pymongo's 30 s default; the driver's monitor reconnects by itself.
CLIENT_OPTIONS = dict(
    serverSelectionTimeoutMS=1200,
    connectTimeoutMS=1000,
    socketTimeoutMS=2000,
    heartbeatFrequencyMS=1000,
    maxPoolSize=50,
    tz_aware=True,
)


class DatabaseHealth(monitoring.ServerHeartbeatListener):
    """The driver's heartbeats (every second, per server) say whether the database answers.

    Requests check it to answer 503 at once instead of each queueing on motor's thread
    pool for a full server-selection timeout while the database is down. With a replica
    set or several mongos, it is up while any server's last heartbeat succeeded, so one
    lost member does not turn every request into a 503.
    """

    def __init__(self):
        self.servers: dict = {}  # address -> last heartbeat succeeded

    @property
    def up(self) -> bool:
        return not self.servers or any(self.servers.values())

    def started(self, event) -> None:
        """Required by the listener interface; only the outcome matters here."""

    def succeeded(self, event) -> None:
        self.servers[event.connection_id] = True

    def failed(self, event) -> None:
        # A failed *awaited* (streaming) hello is retried at once on a fresh connection, and
        # the driver cancels one shortly after every reconnect: only that retry's verdict counts.
        if not event.awaited:
            self.servers[event.connection_id] = False


def create_client(uri: str) -> AsyncIOMotorClient:
    """Create the process's one client; call it inside the running loop."""
    health = DatabaseHealth()
    client = AsyncIOMotorClient(uri, event_listeners=[health], **CLIENT_OPTIONS)
    client.statsapi_health = health
    return client


def database_up(client) -> bool:
    health = getattr(client, "statsapi_health", None)
    return health.up if health is not None else True
