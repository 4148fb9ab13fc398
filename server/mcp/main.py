"""`statsapi-mcp`: the MCP server of a statsapi, over stdio (default) or Streamable HTTP at /mcp.

Its own process and a client of the public API: each tool is a read operation of the OpenAPI
document the target serves, and each call one GET to it."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
from collections.abc import Sequence
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings

from server.contract.config import API_VERSION, VERSION, Config
from server.mcp.calls import Statsapi

DEFAULT_BASE_URL = f"http://127.0.0.1:{Config().port}/api/{API_VERSION}"
MCP_PATH = "/mcp"
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
INSTRUCTIONS = (
    "World of Tanks statistics from statsapi: player profiles with WN8 and other ratings, their history, "
    "tanks and sessions, clans, tank statistics, marks of excellence, leaderboards and player counts, "
    "for the regions eu, na and asia. Find an account id by nickname with getPlayerSearch first. Every "
    "tool answers the API's `data` as JSON; an error says its code (invalid_region, player_not_found, "
    "rate_limited with when to retry, ...)."
)

log = logging.getLogger("statsapi.mcp")


def build_server(statsapi: Statsapi) -> Server[Any]:
    """The low-level server: its tool list is generated, so it is answered from the document."""

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=await statsapi.tools())

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await statsapi.call(params.name, params.arguments)

    def input_schema(name: str) -> dict[str, Any] | None:
        # Read by the 2026-07-28 Streamable HTTP transport to check Mcp-Param-* headers: the tools as last read.
        operation = statsapi.known_operations().get(name)
        return dict(operation.input_schema) if operation is not None else None

    return Server(
        "statsapi",
        version=VERSION,
        title="statsapi",
        description="World of Tanks statistics: players, clans, tanks, leaderboards, player counts.",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=input_schema,
    )


async def serve_stdio(statsapi: Statsapi) -> None:
    server = build_server(statsapi)
    try:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        await statsapi.close()


def transport_security(host: str, allowed_hosts: Sequence[str]) -> TransportSecuritySettings | None:
    """DNS-rebinding protection: on for a local address (the SDK's default) and for the public names
    a proxy forwards (`--allowed-host`); None (off) for any other listening address."""
    if not allowed_hosts and host not in LOCAL_HOSTS:
        return None
    hosts = [f"{name}:*" for name in ("127.0.0.1", "localhost", "[::1]")] + [
        pattern for name in allowed_hosts for pattern in (name, f"{name}:*")
    ]
    origins = [f"http://{name}:*" for name in ("127.0.0.1", "localhost", "[::1]")] + [
        f"{scheme}://{name}" for name in allowed_hosts for scheme in ("https", "http")
    ]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


async def serve_http(statsapi: Statsapi, host: str, port: int, allowed_hosts: Sequence[str]) -> None:
    """Streamable HTTP at /mcp, stateless (any process of several may answer any request) with JSON
    answers (no stream is held open between requests)."""
    import uvicorn

    server = build_server(statsapi)
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,
        json_response=True,
        host=host,
        transport_security=transport_security(host, allowed_hosts),
    )
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    try:
        await uvicorn.Server(config).serve()
    finally:
        await statsapi.close()


def host_port(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT")
    return host.strip("[]") or "127.0.0.1", int(port)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="statsapi-mcp", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--base-url",
        default=DEFAULT_BASE_URL,
        help=f"the statsapi API to call, up to its version (default {DEFAULT_BASE_URL})",
    )
    parser.add_argument(
        "--http",
        type=host_port,
        metavar="HOST:PORT",
        help=f"serve Streamable HTTP at {MCP_PATH} on HOST:PORT (stateless) instead of stdio",
    )
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="with --http: a public host name a proxy forwards (the Host and Origin headers accepted besides "
        "the local ones; repeatable)",
    )
    parser.add_argument("--log-level", default="WARNING", help="logged to stderr (default WARNING)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    # stdout is the stdio transport's: every log line goes to stderr.
    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper(), format="%(asctime)s %(name)s %(message)s")
    statsapi = Statsapi(args.base_url)
    with contextlib.suppress(KeyboardInterrupt):
        if args.http is None:
            asyncio.run(serve_stdio(statsapi))
        else:
            host, port = args.http
            asyncio.run(serve_http(statsapi, host, port, args.allowed_host))
    return 0


if __name__ == "__main__":
    sys.exit(main())
