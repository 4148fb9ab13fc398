"""The access log: a line per request, queued as a tuple on the loop, formatted and written by a thread."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"  # the root handlers' (configure_logging)
FLUSH_SECONDS = 0.05  # how long a line may wait in memory before the thread writes it (small batches:
# formatting ~2,000 lines at once held the GIL for milliseconds, which showed in the p99)
NAME = "statsapi.access"

Line = tuple[float, str, str, str, int, float]  # time, client, method, path, status, duration ms


def message(client: str, method: str, path: str, status: int, duration_ms: float) -> str:
    """The line's text: client, method, path (escaped, at most 200 characters), status, duration."""
    path = path[:200].encode("unicode_escape").decode("ascii")
    return f"{client} {method[:16]} {path} {status} {duration_ms:.1f}ms"


class AccessLog:
    """Where log_access (server/compose/app.py) puts its lines while serving. Queuing a tuple costs the
    loop ~0.1 us, where logging.Logger.info through a QueueHandler cost ~9 us (a LogRecord, its copy
    and the message formatted on the loop) and the writing thread as much again on the same CPU:
    measured, about a tenth of a replayed answer's cost. The thread writes every FLUSH_SECONDS
    (and at stop) to the root logger's handlers, the lines formatted as LOG_FORMAT formats a
    record; a handler with another formatter gets real LogRecords, one per line."""

    def __init__(self, flush_seconds: float = FLUSH_SECONDS) -> None:
        self.lines: list[Line] = []
        self.flush_seconds = flush_seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="access-log", daemon=True)
        self._second = -1
        self._stamp = ""

    def add(self, line: Line) -> None:
        self.lines.append(line)  # list.append is atomic under the GIL: no lock on the loop

    def start(self) -> AccessLog:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Write what is queued and end the thread."""
        self._stop.set()
        self._thread.join(timeout=10)
        self.flush()

    def _run(self) -> None:
        while not self._stop.wait(self.flush_seconds):
            self.flush()

    def flush(self) -> None:
        lines, self.lines = self.lines, []  # a swap: lines added meanwhile go to the new list
        if not lines:
            return
        for handler in logging.getLogger().handlers:
            if handler.level > logging.INFO:
                continue
            formatter = handler.formatter
            if isinstance(handler, logging.StreamHandler) and formatter is not None and formatter._fmt == LOG_FORMAT:
                text = "".join(self._formatted(line) for line in lines)
                handler.acquire()
                try:
                    handler.stream.write(text)
                    handler.flush()
                finally:
                    handler.release()
            else:
                for line in lines:
                    handler.handle(self._record(line))

    def _asctime(self, at: float) -> str:
        second = int(at)
        if second != self._second:  # logging.Formatter.formatTime's default: local time, then ,msecs
            self._second, self._stamp = second, time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at))
        return f"{self._stamp},{int((at - second) * 1000):03d}"

    def _formatted(self, line: Line) -> str:
        at, client, method, path, status, duration_ms = line
        return f"{self._asctime(at)} INFO {NAME}: {message(client, method, path, status, duration_ms)}\n"

    @staticmethod
    def _record(line: Line) -> logging.LogRecord:
        at, client, method, path, status, duration_ms = line
        record = logging.makeLogRecord(
            {
                "name": NAME,
                "levelno": logging.INFO,
                "levelname": "INFO",
                "msg": message(client, method, path, status, duration_ms),
            }
        )
        record.created, record.msecs = at, (at - int(at)) * 1000
        return record


# Set while serving (server/compose/entry.py); None: log_access writes through logging as usual.
sink: Callable[[Line], None] | None = None
