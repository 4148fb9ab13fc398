"""`python -m server` / `statsapi serve`: start the database if needed, serve, shut down cleanly."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import logging.handlers
import os
import signal
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import tornado.netutil

from server.compose import access_log as access_lines
from server.compose.access_log import LOG_FORMAT, AccessLog
from server.compose.bootstrap import get_application, make_http_server
from server.compose.embedded_db import EmbeddedDatabase
from server.compose.http import MAX_CONNECTIONS_PER_CLIENT, default_max_connections, raise_fd_limit
from server.contract.catalogue import PREFIX
from server.contract.config import Config, build_parser, get_config, refuse_real_upstream_without_id
from server.services.registry import Services
from store import Store

if TYPE_CHECKING:  # types only
    import socket
    from types import FrameType

log = logging.getLogger("statsapi")


def configure_logging(level: str) -> None:
    logging.basicConfig(level=getattr(logging, level.upper(), logging.INFO), format=LOG_FORMAT)
    logging.getLogger("tornado.access").setLevel(logging.WARNING)


def buffer_access_log() -> AccessLog:
    """The access log leaves the event loop at once: its lines are queued as tuples, and a thread
    writes them through the root logger's handlers (a slow stderr never holds a request; see
    server/compose/access_log.py). Per process: started in run_server, after any fork; stopped
    (what is queued written) when it returns."""
    lines = AccessLog().start()
    access_lines.sink = lines.add
    return lines


async def seed_if_empty(config: Config, store: Store, services: Services) -> None:
    from server.compose.demo import SimulatorLists, progress_listener, seed_demo
    from server.compose.demo_progress import SeedProgress, close_interrupted, recorded

    if not config.upstream_base_url:
        log.warning("--seed-demo needs the simulator (--upstream-base-url); not seeding")
        return
    # Before the first await, so before the jobs' first run: the seeding draws the panel itself.
    if services.panel is not None:
        services.panel.paused = True
    try:
        if not await store.leases.acquire("demo_seed", services.jobs.owner, 900):
            return  # another process is seeding
        if await store.players.snapshots.find_one({}, {"_id": 1}) is not None:
            log.info("database already holds data; not seeding")
            await close_interrupted(store.job_runs)
            return
        log.info("empty database: seeding demo data (a few minutes)")
        # Its progress for /status (`demo`) and the site's banner, through the seeder's progress bars.
        progress = SeedProgress(store.job_runs.record_demo)
        progress_listener.set(progress.step)  # this task's context: the seeding's own steps only
        summary = await recorded(
            progress,
            seed_demo(store, services, SimulatorLists(config.upstream_base_url), panel_size=config.panel_size),
        )
        log.info("demo data seeded in %ss: %s", summary["seconds"], summary)
    except Exception:
        log.exception("seeding failed")
    finally:
        if services.panel is not None:
            services.panel.paused = False


def tune_garbage_collector() -> None:
    """Fewer, cheaper cyclic collections: each request leaves a few cycles behind (handler <->
    request), and the default thresholds made full collections over every long-lived object
    (expected values, caches, the driver) show up as stalls in p99 (docs/benchmarks.md, "The figures behind the code's choices")."""
    gc.collect()
    gc.freeze()  # what exists at start-up lives for the whole process: never scan it again
    gc.set_threshold(20_000, 20, 20)


async def run_server(
    config: Config, uri: str, sockets: list[socket.socket] | None = None, database: EmbeddedDatabase | None = None
) -> None:
    access_log = buffer_access_log()
    try:
        await serve(config, uri, sockets, database)
    finally:
        access_lines.sink = None
        access_log.stop()


async def serve(
    config: Config, uri: str, sockets: list[socket.socket] | None = None, database: EmbeddedDatabase | None = None
) -> None:
    app, store, limiter, services = await get_application(config, uri)
    # Connection caps, head deadline, body and head limits: server/compose/http.py (docs/deploy.md).
    server = make_http_server(app, config)
    # For /status and /metrics: the embedded database's supervisor figures (None with an
    # external MongoDB) and this process's connection figures.
    services.embedded_database = database
    services.connection_stats = server.connection_stats
    if sockets is None:
        sockets = tornado.netutil.bind_sockets(config.port, config.host)
    server.add_sockets(sockets)
    tune_garbage_collector()
    log.info("statsapi serving on http://%s:%s%s", config.host, config.port, PREFIX)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)

    def processes_counted(count: int) -> None:
        limiter.set_processes(count)
        services.upstream.realms.set_processes(count)  # the realms' caps are per address, like the quota

    background = [
        asyncio.create_task(limiter.run_flusher(stop)),
        # Processes sharing the application_id split its rate (and each realm's cap) between them;
        # the rate limiter writes a client's count once it could matter across that many processes.
        asyncio.create_task(
            services.upstream.budget.run_membership(
                store.upstream_members, services.jobs.owner, stop, on_count=processes_counted
            )
        ),
    ]
    if config.seed_demo:
        # Serve at once; the demo data arrives in the background on the first start.
        background.append(asyncio.create_task(seed_if_empty(config, store, services)))
    if config.jobs:
        background.append(asyncio.create_task(services.jobs.run(stop)))
    await stop.wait()

    log.info("shutting down: no new connections; letting in-flight requests finish")
    server.stop()
    services.close_streams()
    deadline = loop.time() + config.shutdown_grace
    while services.inflight > 0 and loop.time() < deadline:
        await asyncio.sleep(0.05)
    await asyncio.wait(background, timeout=config.shutdown_grace)
    try:
        await asyncio.wait_for(limiter.flush(), 3)
    except Exception as exc:  # the database may be gone too; the counts only matter for a minute
        log.warning("last rate-counter flush failed: %s", type(exc).__name__)
    await services.close()
    services.upstream.close()
    await asyncio.wait_for(server.close_all_connections(), 5)
    store.client.close()


def run_processes(
    config: Config, uri: str, sockets: list[socket.socket], database: EmbeddedDatabase | None = None
) -> None:
    """N server processes sharing the listening sockets; the parent forwards SIGTERM and waits.

    A child that dies is replaced (its jobs lease expires and another process takes over).
    """
    children: dict[int, int] = {}
    stopping = False

    def spawn(index: int) -> None:
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            try:
                asyncio.run(run_server(config, uri, sockets, database))
            finally:
                os._exit(0)
        children[pid] = index

    def forward(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True
        for pid in list(children):
            with contextlib.suppress(ProcessLookupError):  # it exited already: nothing to stop
                os.kill(pid, signal.SIGTERM)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    for index in range(config.processes):
        spawn(index)
    while children:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            break
        exited = children.pop(pid, None)  # None: the embedded database (its supervisor restarts it)
        if exited is not None and not stopping:
            log.warning("server process %s exited (%s); starting a new one", pid, status)
            spawn(exited)


def main(argv: Sequence[str] | None = None) -> int:
    config = get_config(argv)
    args = build_parser().parse_args(argv)
    if args.command in ("backup", "restore"):
        from server.compose.backup_cli import backup_main, restore_main

        configure_logging("WARNING")
        if args.command == "backup":
            return backup_main(config, args.backup_to)
        return restore_main(config, args.restore_from, args.force)
    refusal = refuse_real_upstream_without_id(config)
    if refusal is not None:
        print(refusal, file=sys.stderr)
        return 2
    configure_logging(config.log_level)
    fd_limit = raise_fd_limit()  # inherited by server processes and the embedded database
    log.info(
        "file descriptors: %s per process; at most %s connections per process, %s per client",
        fd_limit,
        default_max_connections(),
        MAX_CONNECTIONS_PER_CLIENT,
    )
    # Bound before the embedded database picks a free port: it can then never be handed ours (the
    # kernel may give a port just freed by whoever chose --port to its next bind to port 0).
    sockets = tornado.netutil.bind_sockets(config.port, config.host)
    database = None
    uri = config.mongodb_uri
    if not uri:  # Config.embedded_database: no external MongoDB
        # Supervised by a thread of this process (the parent with --processes N): restarted
        # on the same port and data directory when it exits unexpectedly.
        database = EmbeddedDatabase(os.path.join(config.data_dir, "db")).start().supervise()
        uri = database.uri
    try:
        if config.processes > 1:
            run_processes(config, uri, sockets, database)
        else:
            asyncio.run(run_server(config, uri, sockets, database))
    finally:
        if database is not None:
            database.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
