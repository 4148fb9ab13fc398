"""Request-path concurrency helpers: a fast 503 instead of a queue, and single-flight computations."""

from __future__ import annotations

import asyncio
import contextlib

from server.errors import APIError
from store.store import DatabaseBusy


@contextlib.asynccontextmanager
async def heavy_slot(gate):
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


async def single_flight(flights: dict, key, make):
    """Concurrent callers with one key share one computation (a task; one caller leaving does not
    cancel it for the others)."""
    task = flights.get(key)
    if task is None:
        task = flights[key] = asyncio.ensure_future(make())

        def done(finished, key=key):
            if flights.get(key) is finished:
                del flights[key]
            if not finished.cancelled():
                finished.exception()  # retrieved: every waiter re-raises it itself

        task.add_done_callback(done)
    return await asyncio.shield(task)
