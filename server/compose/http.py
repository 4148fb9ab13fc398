"""The HTTP server: every protocol-level rejection answers enveloped JSON, and connections are bounded."""

# What a connection may cost (figures in docs/deploy.md, "Connections, request heads and bodies"):
#
# * at most `max_connections` open connections per process (by default the file-descriptor soft
#   limit minus FD_RESERVE, at most MAX_CONNECTIONS) and MAX_CONNECTIONS_PER_CLIENT per peer
#   address (trusted proxies are not capped: every client behind them shares their address).
#   When the server is full, the oldest connection that has waited at least SHED_MIN_WAIT
#   seconds for a request head (idle keep-alive, slowloris, never-sent) is closed to make room;
#   a client that has just connected and is sending its head is never shed by someone else's
#   churn. If none qualifies, the new connection gets a short JSON 503 and is closed (after a
#   lingering close, at most MAX_LINGERING_REFUSALS at a time, so the client reads the 503
#   instead of a connection reset);
# * HEAD_TIMEOUT seconds to send a complete request head, counted from the accept (first
#   request) or from the first byte of the head (later requests on a keep-alive connection);
# * a request head over `max_header_size` bytes or MAX_HEADER_LINES lines: JSON 431
#   `request_too_large`, whatever its size (the head is never buffered beyond the limit);
# * a declared body over `max_body_size` (MAX_BODY_SIZE: the API is read-only): JSON 413
#   `payload_too_large` before any of the body is read;
# * `accept()` failing for want of descriptors (EMFILE/ENFILE): accepting pauses for
#   ACCEPT_PAUSE seconds (the oldest idle connections are shed) instead of spinning, and the
#   condition is logged at most once per LOG_INTERVAL.
#
# After a rejection the answer is written, the sending side shut down, and what the client
# still sends is read and discarded for up to LINGER_SECONDS / LINGER_BYTES ("lingering close"),
# so the client reads the answer instead of a connection reset.
#
# Tornado internals used here (checked against Tornado 6.6.1; the project pins tornado < 6.7):
#
# * `HTTP1Connection` reads a request head with `stream.read_until_regex(regex, max_bytes)` and,
#   on a malformed message, writes exactly `_TORNADO_BAD_REQUEST`, awaits that write, then closes;
# * `TCPServer.add_sockets` fills `self._sockets` / `self._handlers` (fd -> remover callable, used
#   by `stop()`), and `TCPServer._handle_connection(connection, address)` wraps an accepted
#   socket in an IOStream and calls `handle_stream`. `netutil.add_accept_handler` loops on
#   `accept()` and lets EMFILE propagate (a traceback per readiness event, 100 % CPU), so
#   `add_sockets` installs its own accept handler;
# * `IOStream._read_buffer` / `_read_buffer_size`: bytes read past a request head (a body, a
#   pipelined request) are put back there for Tornado's next read.

from __future__ import annotations

import asyncio
import errno
import http.client
import ipaddress
import logging
import re
import resource
import socket
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, NoReturn

import tornado.httpserver
import tornado.httputil
import tornado.iostream
from tornado.http1connection import HTTP1ServerConnection
from tornado.httpserver import _HTTPRequestContext
from tornado.ioloop import IOLoop

from server.contract.errors import APIError, render_error

log = logging.getLogger("statsapi.http")

MAX_HEADER_SIZE = 16 * 1024  # request line + headers, bytes
MAX_HEADER_LINES = 100  # request line + header lines
MAX_BODY_SIZE = 64 * 1024  # a read-only API needs none; small enough never to matter
HEAD_TIMEOUT = 10.0  # seconds to send a complete request head
IDLE_CONNECTION_TIMEOUT = 60.0  # seconds a keep-alive connection may wait for its next request
BODY_TIMEOUT = 10.0  # seconds to receive a (small) request body
MAX_CONNECTIONS = 10_000  # per process, whatever the descriptor limit allows
MAX_CONNECTIONS_PER_CLIENT = 64  # per peer address (browsers open 6 per host)
FD_RESERVE = 256  # descriptors kept for the database pool, upstream client, logs, the listener
ACCEPT_PAUSE = 0.5  # seconds without accepting after EMFILE/ENFILE
LOG_INTERVAL = 10.0  # at most one log line per kind of connection trouble per interval
LINGER_SECONDS = 2.0
LINGER_BYTES = 1 << 20
SHED_MIN_WAIT = 0.25  # seconds a connection must have waited for its head before it can be shed (a
# client sends its head within a round trip of connecting; an attacker's idle connection waits on)
MAX_LINGERING_REFUSALS = 64  # refused connections draining at once; beyond, closed at once
_ACCEPTS_PER_EVENT = 128  # as Tornado's netutil: bounded work per readiness event
_OUT_OF_DESCRIPTORS = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}

# Tornado answers malformed messages with exactly these bytes before closing.
_TORNADO_BAD_REQUEST = b"HTTP/1.1 400 Bad Request\r\n\r\n"


def json_error_response(code: str, message: str | None = None) -> bytes:
    """A whole prebuilt answer (written before any handler exists), with the same envelope,
    status, headers and caching policy as every other error (server.contract.errors.render_error)."""
    status, headers, text = render_error(APIError(code, message))
    body = text.encode()
    headers.update({"Content-Length": str(len(body)), "Connection": "close"})
    reason = http.client.responses[status]
    head = f"HTTP/1.1 {status} {reason}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    return head.encode("ascii") + body


BAD_REQUEST = json_error_response("bad_request")
TOO_LARGE = json_error_response("request_too_large")
TOO_MANY_LINES = json_error_response("request_too_large", f"too many header lines (at most {MAX_HEADER_LINES})")
PAYLOAD_TOO_LARGE = json_error_response(
    "payload_too_large", f"request body too large: this read-only API accepts at most {MAX_BODY_SIZE} bytes"
)
BUSY = json_error_response("too_many_connections")


def raise_fd_limit() -> int:
    """Raise the soft RLIMIT_NOFILE to the hard limit; returns the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else 1 << 20
    if soft == resource.RLIM_INFINITY or soft >= target:
        return soft
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (ValueError, OSError) as exc:  # e.g. above the kernel's nr_open
        log.warning("cannot raise the file-descriptor limit from %s to %s: %s", soft, target, exc)
        return soft
    return target


def _errno_name(code: int | None) -> str | int | None:
    """errno's symbolic name for `code` (EMFILE), else `code` as it came (None included)."""
    return errno.errorcode.get(code, code) if code is not None else None


def default_max_connections() -> int:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(16, min(MAX_CONNECTIONS, soft - FD_RESERVE))


class _OncePerInterval:
    """Counts events of one kind; logs the first and then at most one summary per interval."""

    def __init__(self, message: str, level: int = logging.WARNING):
        self.message, self.level = message, level
        self.total = 0
        self._pending = 0
        self._last = float("-inf")

    def __call__(self, detail: str = "") -> None:
        self.total += 1
        self._pending += 1
        now = time.monotonic()
        if now - self._last >= LOG_INTERVAL:
            log.log(
                self.level,
                "%s (%s in the last %.0f s, %s in all)%s",
                self.message,
                self._pending,
                LOG_INTERVAL,
                self.total,
                f": {detail}" if detail else "",
            )
            self._last, self._pending = now, 0


class _JSONRejectingStream:
    """Delegates to the real stream; reads request heads within limits and a deadline, and
    rewrites Tornado's bare rejections as enveloped JSON."""

    def __init__(self, stream: tornado.iostream.IOStream, server: JSONErrorHTTPServer, client: str | None) -> None:
        self._stream = stream
        self._server = server
        self.client = client  # the peer address counted against the per-client cap (None: uncapped)
        self.rejection: bytes | None = None  # what Tornado's next bare 400 means (set per request by _BodyGuard)
        # Called for every request: bound once here instead of looked up through __getattr__.
        self.set_close_callback = stream.set_close_callback
        self.closed = stream.closed
        self.read_bytes = stream.read_bytes
        self.set_nodelay = stream.set_nodelay
        self.close = stream.close
        # The first head is due HEAD_TIMEOUT after the accept.
        self._deadline = stream.io_loop.call_later(server.head_timeout, self._head_timed_out)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    def write(self, data: bytes | memoryview, *args: Any, **kwargs: Any) -> asyncio.Future[None]:
        if data == _TORNADO_BAD_REQUEST:  # Tornado awaits this write, then closes the connection
            return asyncio.ensure_future(self.answer_and_close(self.rejection or BAD_REQUEST))
        return self._stream.write(data, *args, **kwargs)

    def read_until_regex(self, regex: bytes, max_bytes: int | None = None) -> asyncio.Future[bytes]:
        """The request head, at most `max_bytes` long, within the head deadline.

        Tornado's own bounded read closes the socket before anything can be answered, so the
        head is read here in chunks; bytes past its end are given back to the stream. The usual
        head comes whole in the first chunk and is answered from that read's callback; only a
        head in several chunks (or one to refuse) goes on in a task (a task per request was
        ~5 % of a replayed answer's cost).
        """
        server = self._server
        self.rejection = None
        server._waiting[self] = time.monotonic()  # waiting for a head: may be shed when the server is full
        limit = max_bytes or server.max_header_size
        pattern = _compiled(regex)
        head: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        # Tornado may stop waiting (its idle timeout, shutdown): the stream's closing must not
        # then be logged as "Future exception was never retrieved".
        head.add_done_callback(_retrieve)

        def first_chunk(read: asyncio.Future[bytes]) -> None:
            if read.cancelled():
                self._done_waiting()
                head.cancel()
                return
            error = read.exception()
            if error is not None:  # the stream closed: Tornado's own read would raise the same
                self._done_waiting()
                if not head.done():
                    head.set_exception(error)
                return
            data = read.result()
            match = pattern.search(data)
            if match is not None and match.end() <= limit and data.count(b"\n", 0, match.end()) <= MAX_HEADER_LINES + 1:
                self._done_waiting()
                end = match.end()
                if end < len(data):
                    self._unread(data[end:])
                    data = data[:end]
                if not head.done():
                    head.set_result(data)
                return
            rest = asyncio.ensure_future(self._read_rest(pattern, limit, data))
            rest.add_done_callback(lambda task: _chain(task, head))

        try:
            read = self._stream.read_bytes(65536, partial=True)
        except BaseException:  # a closed stream raises at once, as Tornado's own read would
            self._done_waiting()
            head.cancel()
            raise
        read.add_done_callback(first_chunk)  # type: ignore[attr-defined]
        return head

    def _done_waiting(self) -> None:
        self._server._waiting.pop(self, None)
        self.cancel_deadline()

    async def _read_rest(self, pattern: re.Pattern[bytes], limit: int, data: bytes) -> bytes:
        try:
            return await self._read_head(pattern, limit, data)
        finally:
            self._done_waiting()

    async def _read_head(self, pattern: re.Pattern[bytes], limit: int, data: bytes) -> bytes:
        """The head from its first chunk `data` on (read by read_until_regex)."""
        stream = self._stream
        buffer = None
        while True:
            match = pattern.search(
                data if buffer is None else buffer, 0 if buffer is None else max(0, len(buffer) - len(data) - 3)
            )
            if match is not None:
                break
            if buffer is None:
                buffer = bytearray(data)
                if self._deadline is None:  # a later request on this connection: due from its first byte
                    self._deadline = stream.io_loop.call_later(self._server.head_timeout, self._head_timed_out)
            if len(buffer) > limit:
                await self._reject(TOO_LARGE, f"request head over {limit} bytes")
            data = await stream.read_bytes(65536, partial=True)
            buffer += data
        whole = data if buffer is None else buffer
        end = match.end()
        if end > limit:
            await self._reject(TOO_LARGE, f"request head over {limit} bytes")
        if end < len(whole):
            self._unread(whole[end:])
            head = bytes(whole[:end])
        else:
            head = bytes(whole)
        if head.count(b"\n") > MAX_HEADER_LINES + 1:
            await self._reject(TOO_MANY_LINES, f"request head over {MAX_HEADER_LINES} lines")
        return head

    def _unread(self, extra: bytes | bytearray) -> None:
        # Tornado internals (see the comment at the top of this module): no read is pending here, so the
        # stream's buffer holds only what follows `extra`.
        stream = self._stream
        stream._read_buffer[:0] = extra
        stream._read_buffer_size += len(extra)

    async def _reject(self, answer: bytes, reason: str) -> NoReturn:
        self._server._rejected_heads(reason)
        await self.answer_and_close(answer)
        raise tornado.iostream.UnsatisfiableReadError(reason)  # Tornado ends the connection quietly

    async def answer_and_close(self, answer: bytes) -> None:
        await answer_and_close(self._stream, answer)

    def cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._stream.io_loop.remove_timeout(self._deadline)
            self._deadline = None

    def _head_timed_out(self) -> None:
        self._deadline = None
        self._server._head_timeouts()
        self._stream.close()  # the pending read raises StreamClosedError: Tornado ends quietly


async def answer_and_close(stream: tornado.iostream.IOStream, answer: bytes) -> None:
    """Write `answer`, stop sending, discard what the client still sends (bounded), close."""
    loop = stream.io_loop
    try:
        await stream.write(answer)
        stream.socket.shutdown(socket.SHUT_WR)
        deadline, drained = loop.time() + LINGER_SECONDS, 0
        while drained < LINGER_BYTES and loop.time() < deadline:
            chunk = await asyncio.wait_for(stream.read_bytes(65536, partial=True), deadline - loop.time())
            drained += len(chunk)
    except (TimeoutError, tornado.iostream.StreamClosedError, OSError, AttributeError):
        pass  # draining is best effort: the answer is written, the socket closes below
    finally:
        stream.close()


_PATTERNS: dict = {}


def _chain(source: asyncio.Future[Any], target: asyncio.Future[Any]) -> None:
    """`source`'s outcome onto `target` (unless `target` is already done)."""
    if target.done():
        if not source.cancelled():
            source.exception()  # retrieved: the head's reader gave up waiting
        return
    if source.cancelled():
        target.cancel()
    elif source.exception() is not None:
        target.set_exception(source.exception())  # type: ignore[arg-type]
    else:
        target.set_result(source.result())


def _retrieve(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


def _compiled(regex: bytes) -> re.Pattern[bytes]:
    pattern = _PATTERNS.get(regex)
    if pattern is None:
        pattern = _PATTERNS[regex] = re.compile(regex)
    return pattern


class _BodyGuard(tornado.httputil.HTTPMessageDelegate):
    """Marks a request whose declared body is over the limit, so Tornado's rejection (raised
    before any of the body is read) is answered 413 instead of 400."""

    __slots__ = ("_delegate", "_stream", "_limit")

    def __init__(
        self,
        delegate: tornado.httputil.HTTPMessageDelegate,
        stream: tornado.iostream.IOStream | _JSONRejectingStream,
        limit: int,
    ) -> None:
        self._delegate, self._stream, self._limit = delegate, stream, limit

    def headers_received(
        self,
        start_line: tornado.httputil.RequestStartLine | tornado.httputil.ResponseStartLine,
        headers: tornado.httputil.HTTPHeaders,
    ) -> Awaitable[None] | None:
        length = headers.get("Content-Length")
        if length is not None or "Transfer-Encoding" in headers:
            too_large = "chunked" in headers.get("Transfer-Encoding", "").lower()
            if length is not None:
                try:
                    too_large = too_large or int(length.split(",")[0].strip()) > self._limit
                except ValueError:
                    pass
            if too_large and isinstance(self._stream, _JSONRejectingStream):
                # A chunked body is checked chunk by chunk; a rejection while reading one
                # (size or framing) is answered 413.
                self._stream.rejection = PAYLOAD_TOO_LARGE
                headers.pop("Expect", None)  # no "100 Continue" for a body we will not read
        return self._delegate.headers_received(start_line, headers)

    def data_received(self, chunk: bytes) -> Awaitable[None] | None:
        return self._delegate.data_received(chunk)

    def finish(self) -> None:
        return self._delegate.finish()

    def on_connection_close(self) -> None:
        return self._delegate.on_connection_close()


class JSONErrorHTTPServer(tornado.httpserver.HTTPServer):
    # Narrower than HTTPServer.initialize on purpose: its own options are keyword-only and
    # Tornado's pass through **kwargs (every caller gives keywords after the application).
    def initialize(  # type: ignore[override]
        self,
        request_callback: tornado.httputil.HTTPServerConnectionDelegate
        | Callable[[tornado.httputil.HTTPServerRequest], None],
        *,
        max_header_size: int | None = MAX_HEADER_SIZE,
        max_body_size: int | None = MAX_BODY_SIZE,
        head_timeout: float = HEAD_TIMEOUT,
        max_connections: int | None = None,
        max_connections_per_client: int = MAX_CONNECTIONS_PER_CLIENT,
        uncapped_networks: Iterable[str | ipaddress.IPv4Network | ipaddress.IPv6Network] = (),
        **kwargs: Any,
    ) -> None:
        super().initialize(
            request_callback,
            max_header_size=max_header_size or MAX_HEADER_SIZE,
            max_body_size=max_body_size if max_body_size is not None else MAX_BODY_SIZE,
            **kwargs,
        )
        self.max_header_size = max_header_size or MAX_HEADER_SIZE
        self.max_body_size = max_body_size if max_body_size is not None else MAX_BODY_SIZE
        self.head_timeout = head_timeout
        self.max_connections = max_connections or default_max_connections()
        self.max_connections_per_client = max_connections_per_client
        self.uncapped_networks = tuple(ipaddress.ip_network(n) if isinstance(n, str) else n for n in uncapped_networks)
        self._streams: dict = {}  # HTTP1ServerConnection -> its _JSONRejectingStream
        self._per_client: dict = {}  # peer address -> open connections
        self._waiting: dict = {}  # streams waiting for a request head -> since when, oldest first
        self._lingering = 0  # refused connections being drained
        self._shed = _OncePerInterval(
            "idle connections closed to make room (server full or out of descriptors)", logging.INFO
        )
        self._rejected = _OncePerInterval("new connections refused: the server or the client is at its connection cap")
        self._rejected_heads = _OncePerInterval("request heads refused (too large)", logging.INFO)
        self._head_timeouts = _OncePerInterval("connections closed: no complete request head in time", logging.INFO)
        self._accept_failed = _OncePerInterval(f"accept() failing: pausing accepts for {ACCEPT_PAUSE} s")

    def connection_stats(self) -> dict:
        """Figures for /status or /metrics."""
        return {
            "open": len(self._streams),
            "max": self.max_connections,
            "max_per_client": self.max_connections_per_client,
            "waiting_for_head": len(self._waiting),
            "refused": self._rejected.total,
            "shed_idle": self._shed.total,
            "head_timeouts": self._head_timeouts.total,
            "heads_too_large": self._rejected_heads.total,
            "accept_pauses": self._accept_failed.total,
        }

    # --- accepting ----------------------------------------------------------------------
    def add_sockets(self, sockets: Iterable[socket.socket]) -> None:
        for sock in sockets:
            self._sockets[sock.fileno()] = sock
            self._handlers[sock.fileno()] = self._add_accept_handler(sock)

    def _add_accept_handler(self, sock: socket.socket) -> Callable[[], None]:
        """Tornado's netutil.add_accept_handler, plus: connection caps, and a pause instead
        of a busy loop when accept() fails (EMFILE: the socket stays readable)."""
        io_loop = IOLoop.current()
        state: dict[str, object] = {"removed": False, "resume": None}  # "resume": the paused accept's timeout

        def accept_handler(fd: socket.socket, events: int) -> None:
            for _ in range(_ACCEPTS_PER_EVENT):
                if state["removed"]:
                    return
                try:
                    connection, address = sock.accept()
                except (BlockingIOError, InterruptedError):
                    return
                except ConnectionAbortedError:
                    continue
                except OSError as exc:
                    self._accept_failed(f"{_errno_name(exc.errno)}; {len(self._streams)} connections open")
                    if exc.errno in _OUT_OF_DESCRIPTORS:
                        self._shed_waiting(16)
                    io_loop.remove_handler(sock)
                    state["resume"] = io_loop.call_later(ACCEPT_PAUSE, resume)
                    return
                self._admit(connection, address)

        def resume() -> None:
            state["resume"] = None
            if not state["removed"]:
                io_loop.add_handler(sock, accept_handler, IOLoop.READ)

        def remove() -> None:
            state["removed"] = True
            if state["resume"] is not None:
                io_loop.remove_timeout(state["resume"])
                state["resume"] = None
            else:
                io_loop.remove_handler(sock)

        io_loop.add_handler(sock, accept_handler, IOLoop.READ)
        return remove

    def _client_key(self, address: Any) -> str | None:
        if not isinstance(address, tuple):
            return None  # a Unix socket: no peer address to cap
        peer = address[0]
        if self.uncapped_networks:
            try:
                ip = ipaddress.ip_address(peer)
            except ValueError:
                return peer
            if any(ip in network for network in self.uncapped_networks):
                return None
        return peer

    def _admit(self, connection: socket.socket, address: Any) -> None:
        client = self._client_key(address)
        if client is not None and self._per_client.get(client, 0) >= self.max_connections_per_client:
            return self._refuse(connection, f"client {client} has {self.max_connections_per_client} open")
        if len(self._streams) >= self.max_connections and not self._shed_waiting(1):
            return self._refuse(connection, f"{len(self._streams)} connections open, none idle")
        self._handle_connection(connection, address)  # Tornado: IOStream, then handle_stream

    def _refuse(self, connection: socket.socket, reason: str) -> None:
        self._rejected(reason)
        if self._lingering < MAX_LINGERING_REFUSALS:
            # Closing a socket with unread request bytes makes the kernel send a reset, which
            # can destroy the 503 before the client reads it: drain briefly instead.
            stream = tornado.iostream.IOStream(connection)
            self._lingering += 1
            task = asyncio.ensure_future(self._linger(stream))
            task.add_done_callback(_retrieve)
            return
        try:
            connection.setblocking(False)
            try:
                connection.recv(65536)  # what already arrived: fewer resets
            except OSError:
                pass
            connection.send(BUSY)
        except OSError:
            pass
        connection.close()

    async def _linger(self, stream: tornado.iostream.IOStream) -> None:
        try:
            await answer_and_close(stream, BUSY)
        finally:
            self._lingering -= 1

    def _shed_waiting(self, count: int) -> int:
        """Close up to `count` of the connections that have waited longest (and at least
        SHED_MIN_WAIT seconds) for a request head."""
        shed = 0
        too_recent = time.monotonic() - SHED_MIN_WAIT
        while shed < count and self._waiting:
            stream, since = next(iter(self._waiting.items()))
            if since > too_recent:  # the rest are younger still
                break
            self._waiting.pop(stream, None)
            stream.close()
            shed += 1
            self._shed()
        return shed

    # --- serving ------------------------------------------------------------------------
    def handle_stream(self, stream: tornado.iostream.IOStream, address: tuple) -> None:
        client = self._client_key(address)
        wrapped = _JSONRejectingStream(stream, self, client)
        context = _HTTPRequestContext(stream, address, self.protocol, self.trusted_downstream)
        # The wrapper stands in for the IOStream (it delegates what it does not override).
        conn = HTTP1ServerConnection(wrapped, self.conn_params, context)  # type: ignore[arg-type]
        self._connections.add(conn)
        self._streams[conn] = wrapped
        if client is not None:
            self._per_client[client] = self._per_client.get(client, 0) + 1
        conn.start_serving(self)

    def start_request(
        self, server_conn: object, request_conn: tornado.httputil.HTTPConnection
    ) -> tornado.httputil.HTTPMessageDelegate:
        delegate = super().start_request(server_conn, request_conn)
        # An HTTP1Connection (over the wrapper of handle_stream); the base class's type has no stream.
        return _BodyGuard(delegate, request_conn.stream, self.max_body_size)  # type: ignore[attr-defined]

    def on_close(self, server_conn: object) -> None:
        super().on_close(server_conn)
        wrapped = self._streams.pop(server_conn, None)
        if wrapped is None:
            return
        self._waiting.pop(wrapped, None)
        wrapped.cancel_deadline()
        client = wrapped.client
        if client is not None:
            left = self._per_client.get(client, 1) - 1
            if left > 0:
                self._per_client[client] = left
            else:
                self._per_client.pop(client, None)
