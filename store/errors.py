"""Which driver errors mean the database is unreachable, too slow, or cannot store: answered 503, never 500."""

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


# --- the database cannot write: its disk is full, over quota or read-only ---------------------
OUT_OF_DISK_SPACE = 14031  # mongod's OutOfDiskSpace (its disk-space monitor, file allocation)
# What a server says when its storage refuses a write, by what the message contains (mongod puts
# the operating system's strerror in errmsg: "... No space left on device"), and the one phrase
# /status shows for it.
_STORAGE_MESSAGES = (
    ("no space left on device", "no space left on device"),
    ("enospc", "no space left on device"),
    ("out of disk space", "no space left on device"),
    ("outofdiskspace", "no space left on device"),
    ("disk quota exceeded", "disk quota exceeded"),
    ("edquot", "disk quota exceeded"),
    ("read-only file system", "read-only file system"),
    ("erofs", "read-only file system"),
)
# SecantusDB on a full disk: WiredTiger's log write fails with ENOSPC, the engine panics
# (WT_PANIC), and from then on the server answers ping but every command that touches storage,
# reads included, with {ok: 0, code: 1, codeName: InternalError, errmsg: "internal server error"}
# until its process is restarted (measured, secantusdb 0.7.0b3). Nothing in the answer names the
# disk, so it is told apart by its code and message only.
ENGINE_FAILED = "storage engine failed"
_ENGINE_FAILURE = (1, "internal server error")


def storage_failure_reason(failure: object) -> str | None:
    """What stops the database from storing anything, if `failure` says so: "no space left on
    device", "disk quota exceeded", "read-only file system" or "storage engine failed" (the
    embedded database's panic); None for any other error (a duplicate key, a timeout, a bad query).

    `failure` is a driver exception, a server reply ({code, errmsg, writeErrors, ...}) or one write
    error of a bulk write's answer."""
    if isinstance(failure, errors.BulkWriteError):
        failure = failure.details
    elif isinstance(failure, errors.OperationFailure):
        failure = {**(failure.details or {}), "code": failure.code, "errmsg": str(failure)}
    elif isinstance(failure, BaseException):
        failure = {"errmsg": str(failure)}
    if not isinstance(failure, dict):
        return None
    nested = [*(failure.get("writeErrors") or []), failure.get("writeConcernError") or {}]
    for inner in nested:
        reason = storage_failure_reason(inner) if isinstance(inner, dict) and inner else None
        if reason:
            return reason
    code = failure.get("code")
    message = f"{failure.get('errmsg') or ''} {failure.get('codeName') or ''}".lower()
    if code == OUT_OF_DISK_SPACE:
        return "no space left on device"
    for phrase, reason in _STORAGE_MESSAGES:
        if phrase in message:
            return reason
    if code == _ENGINE_FAILURE[0] and _ENGINE_FAILURE[1] in message:
        return ENGINE_FAILED
    return None


class _StorageMeta(type):
    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, errors.PyMongoError) and storage_failure_reason(obj) is not None

    def __subclasscheck__(cls, sub: type) -> bool:
        return False


class StorageFailure(Exception, metaclass=_StorageMeta):
    """Matches (isinstance) any pymongo error saying the database cannot store: its disk is full,
    over quota or read-only, or its engine failed; never raised itself. A request meeting one
    answers 503 (it is in DATABASE_ERRORS), a background job backs off."""


# Errors that mean "the database is unreachable or too slow right now": answered 503, never 500.
# Use isinstance()/is_database_error(): an `except DATABASE_ERRORS` clause matches by class only,
# so it misses the rare timed-out error that is not a ConnectionFailure/ExecutionTimeout subclass.
DATABASE_ERRORS = (
    errors.ConnectionFailure,  # includes AutoReconnect, NetworkTimeout, ServerSelectionTimeoutError
    errors.ExecutionTimeout,  # maxTimeMS expired on the server, or CSOT refused to start a command
    errors.WTimeoutError,
    DatabaseTimeout,  # any other error pymongo flags as a timeout
    StorageFailure,  # the database cannot store: disk full, quota, read-only, engine failed
)


def is_database_error(exc: BaseException) -> bool:
    return isinstance(exc, DATABASE_ERRORS)


def is_timeout(exc: BaseException) -> bool:
    """A deadline passed: the driver's (CSOT, maxTimeMS) or request_deadline's guard on the loop."""
    return isinstance(exc, (errors.ExecutionTimeout, DatabaseTimeout))


def is_storage_failure(exc: BaseException) -> bool:
    """The database cannot store (storage_failure_reason says why)."""
    return isinstance(exc, StorageFailure)
