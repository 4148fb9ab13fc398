"""The only module that creates a MongoDB client (a driver swap stays a one-module change)."""
from __future__ import annotations

from motor.motor_asyncio import AsyncIOMotorClient
from pymongo import errors

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


def create_client(uri: str) -> AsyncIOMotorClient:
    """Create the process's one client; call it inside the running loop."""
    return AsyncIOMotorClient(uri, **CLIENT_OPTIONS)
