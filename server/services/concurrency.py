"""Request-path concurrency helpers: a fast 503 instead of a queue, one deadline per request's
reads, and single-flight computations."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from typing import TypeVar

from server.contract.errors import APIError
from store.client import REQUEST_DEADLINE_S, request_deadline
from store.errors import is_timeout
from store.store import BUSY_RETRY_AFTER, DatabaseBusy, Gate

T = TypeVar("T")  # what a single-flight computation returns


@contextlib.asynccontextmanager
async def heavy_slot(gate: Gate) -> AsyncIterator[None]:
    """A slot of a Store gate, or a fast 503 with Retry-After when it is full (never a queue)."""
    try:
        async with gate.slot():
            yield
    except DatabaseBusy as exc:
        raise APIError(
            "database_unavailable",
            "the service is busy with other heavy requests; retry shortly",
            headers={"Retry-After": str(exc.retry_after)},
        ) from None


@contextlib.asynccontextmanager
async def bounded_read(gate: Gate, seconds: float = REQUEST_DEADLINE_S) -> AsyncIterator[None]:
    """Every read of one request's build: one slot of `gate` (else 503 at once, never a queue) and
    one deadline for all of them (store.client.request_deadline: the driver's clock and the event
    loop's, `seconds` + 0.15 s in all); past it, 503 database_unavailable with Retry-After, as a
    full gate answers. Other database errors (the database is down) pass through unchanged.

    Opened once per build, around its reads only (the ratings inputs and the arithmetic come after);
    in a single-flight build, callers who join it share its slot and its deadline."""
    async with heavy_slot(gate):
        try:
            async with request_deadline(seconds):
                yield
        except Exception as exc:
            if not is_timeout(exc):
                raise
            raise APIError(
                "database_unavailable",
                f"the database did not answer within the request's {seconds:.1f} s deadline; retry shortly",
                headers={"Retry-After": str(BUSY_RETRY_AFTER)},
            ) from None


async def single_flight(flights: dict, key: Hashable, make: Callable[..., Awaitable[T]]) -> T:
    """Concurrent callers with one key share one computation (a task; one caller leaving does not
    cancel it for the others)."""
    task = flights.get(key)
    if task is None:
        task = flights[key] = asyncio.ensure_future(make())

        def done(finished: asyncio.Future, key: Hashable = key) -> None:
            if flights.get(key) is finished:
                del flights[key]
            if not finished.cancelled():
                finished.exception()  # retrieved: every waiter re-raises it itself

        task.add_done_callback(done)
    return await asyncio.shield(task)


def _take_apart(containers: tuple[object, ...]) -> None:
    # One item at a time, so the interpreter may switch threads between two items (a container
    # freed whole is one uninterruptible C call over everything it holds).
    for container in containers:
        if isinstance(container, dict):
            while container:
                container.popitem()
        elif isinstance(container, list):
            while container:
                container.pop()
        elif isinstance(container, set):
            while container:
                container.pop()


async def dismantle(*containers: object) -> None:
    """Empty big dicts, lists and sets item by item in a worker thread. A job's bulk data (millions
    of small lists) freed when its last reference goes is one deallocation that holds the
    interpreter, and so the event loop, throughout (docs/benchmarks.md, "The figures behind the code's choices"). The caller drops its references
    after."""
    await asyncio.to_thread(_take_apart, containers)
