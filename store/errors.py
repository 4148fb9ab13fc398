"""Which driver errors mean the database is unreachable or too slow: answered 503, never 500."""

from __future__ import annotations

from pymongo import errors


class _TimedOutMeta(type):
    def __instancecheck__(cls, obj: object) -> bool:
        # pymongo marks every CSOT expiry with `timeout` (a BulkWriteError or an
        # OperationFailure can be one without being a ConnectionFailure subclass).
        return isinstance(obj, errors.PyMongoError) and bool(getattr(obj, "timeout", False))

    def __subclasscheck__(cls, sub: type) -> bool:
        return False


class DatabaseTimeout(Exception, metaclass=_TimedOutMeta):
    """Matches (isinstance) any pymongo error whose `timeout` is True; never raised itself."""


# Errors that mean "the database is unreachable or too slow right now": answered 503, never 500.
# Use isinstance()/is_database_error(): an `except DATABASE_ERRORS` clause matches by class only,
# so it misses the rare timed-out error that is not a ConnectionFailure/ExecutionTimeout subclass.
DATABASE_ERRORS = (
    errors.ConnectionFailure,  # includes AutoReconnect, NetworkTimeout, ServerSelectionTimeoutError
    errors.ExecutionTimeout,  # maxTimeMS expired on the server, or CSOT refused to start a command
    errors.WTimeoutError,
    DatabaseTimeout,  # any other error pymongo flags as a timeout
)


def is_database_error(exc: BaseException) -> bool:
    return isinstance(exc, DATABASE_ERRORS)


def is_timeout(exc: BaseException) -> bool:
    """A deadline passed: the driver's (CSOT, maxTimeMS) or request_deadline's guard on the loop."""
    return isinstance(exc, (errors.ExecutionTimeout, DatabaseTimeout))
