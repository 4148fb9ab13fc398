"""statsapi-mcp through the MCP SDK's own client, over stdio and over Streamable HTTP.

The tools are the catalogue's read operations with its parameters (generated from the OpenAPI
document the target serves); a call answers the API's `data`, an API error is a tool error with its
code, a 429 says when to retry. On the demo (check_mcp_on_demo, run by tests/test_marks.py on the
demo it seeds) every tool answers its catalogue example without error.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import urllib.parse

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from handlers.openapi import openapi_document
from server.compose.embedded_db import free_port
from server.contract.catalogue import CATALOGUE, PLAYER, PREFIX, STATUS, Endpoint, Param
from server.mcp.tools import FORMAT_PARAM, read_operations
from tests.helpers import ROOT, make_config, wait_for_port

COMMAND = os.path.join(os.path.dirname(sys.executable), "statsapi-mcp")
CALL_TIMEOUT = 60.0


def read_endpoints() -> list[Endpoint]:
    """The catalogue's read operations: every endpoint answering the JSON envelope."""
    return [e for e in CATALOGUE if e.schema is not None and e.media_type == "application/json"]


def tool_params(endpoint: Endpoint) -> list[Param]:
    """An endpoint's parameters as tool arguments: the representation is not one (a tool asks JSON)."""
    return [p for p in endpoint.params if p.name != FORMAT_PARAM]


def example_arguments(endpoint: Endpoint) -> dict:
    """The catalogue's example request of an endpoint as tool arguments."""
    path, _, query = endpoint.example.partition("?")
    pattern = re.sub(r"\\\{([a-z_]+)\\\}", r"(?P<\1>[^/]+)", re.escape(endpoint.path)) + "/?"
    match = re.fullmatch(pattern, path)
    assert match, (endpoint.name, endpoint.example)
    given = {**match.groupdict(), **dict(urllib.parse.parse_qsl(query))}
    types = {p.name: p.type for p in endpoint.params}
    return {
        name: int(value) if types[name] == "integer" else value for name, value in given.items() if name != FORMAT_PARAM
    }


def check_tools(tools) -> None:
    """One tool per read operation, named from its operation id, its arguments the catalogue's
    parameters with their types, bounds, allowed values, defaults and whether required."""
    by_name = {tool.name: tool for tool in tools}
    assert list(by_name) == ["get" + e.operation_id for e in read_endpoints()]
    for endpoint in read_endpoints():
        tool = by_name["get" + endpoint.operation_id]
        schema = tool.input_schema
        assert tool.description.startswith(endpoint.summary), (tool.name, tool.description[:100])
        assert endpoint.description in tool.description
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        params = tool_params(endpoint)
        assert list(schema["properties"]) == [p.name for p in params], tool.name
        assert schema["required"] == [p.name for p in params if p.required], tool.name
        for param in params:
            argument = schema["properties"][param.name]
            for key, value in {"type": param.type, **param.constraints()}.items():
                assert argument[key] == value, (tool.name, param.name, key)
            assert argument["description"].startswith(param.description)
        assert tool.annotations.read_only_hint is True


def test_the_tools_are_the_catalogues_read_operations_with_its_parameters():
    """Generated from the OpenAPI document: not the document itself, the event stream or the bulk files."""
    operations = read_operations(openapi_document(make_config()))
    from server.mcp.calls import tool_of

    check_tools([tool_of(op) for op in operations])
    left_out = {e.name for e in CATALOGUE} - {e.name for e in read_endpoints()}
    assert left_out == {"openapi", "session_stream", "dump_file"}
    # A call always asks the JSON representation where an endpoint has others.
    tanks = next(op for op in operations if op.name == "getPlayerTanks")
    assert tanks.request_path({"account_id": 7, "region": "eu", "days": 30}) == "/player/7/eu/tanks?days=30&format=json"
    # Values go as given, quoted: the API judges them (and answers the parameter's code).
    player = next(op for op in operations if op.name == "getPlayer")
    assert player.request_path({"account_id": "12/3", "region": "eu"}) == "/player/12%2F3/eu?format=json"


@contextlib.contextmanager
def http_mcp(base_url: str):
    """`statsapi-mcp --http` as a child process; yields its /mcp URL."""
    port = free_port()
    proc = subprocess.Popen(
        [COMMAND, "--http", f"127.0.0.1:{port}", "--base-url", base_url],
        cwd=str(ROOT),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(port, proc=proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
        assert b"Traceback" not in err, err.decode()[-3000:]


def stdio_mcp(base_url: str) -> Client:
    return Client(
        StdioServerParameters(command=COMMAND, args=["--base-url", base_url], cwd=str(ROOT)),
        read_timeout_seconds=CALL_TIMEOUT,
    )


def answer_of(result) -> dict:
    assert not result.is_error, result.content[0].text[:2000]
    data = json.loads(result.content[0].text)
    assert result.structured_content == data
    return data


async def check_client(client: Client, api_base: str) -> None:
    """What an assistant relies on, through one connected client."""
    check_tools((await client.list_tools()).tools)
    profile = answer_of(await client.call_tool("getPlayer", {"account_id": 500000001, "region": "eu"}))
    assert profile["account_id"] == 500000001 and profile["region"] == "eu" and profile["nickname"], profile
    assert "ratings" in profile and "career" in profile or "statistics" in profile, sorted(profile)
    bad = await client.call_tool("getPlayer", {"account_id": 500000001, "region": "xx"})
    assert bad.is_error and bad.content[0].text.startswith("invalid_region: "), bad.content
    assert bad.structured_content["error"]["code"] == "invalid_region"
    assert bad.structured_content["error"]["status"] == 400


async def check_mcp_on_demo(base_url: str) -> None:
    """Over stdio and over Streamable HTTP: the tools, the profile, a bad region, and every tool
    called once with its catalogue example answering without error."""
    api = base_url + PREFIX
    async with stdio_mcp(api) as client:
        await check_client(client, api)
        for endpoint in read_endpoints():
            result = await client.call_tool("get" + endpoint.operation_id, example_arguments(endpoint))
            assert not result.is_error, (endpoint.name, example_arguments(endpoint), result.content[0].text[:500])
            json.loads(result.content[0].text)
    with http_mcp(api) as url:
        async with Client(url, read_timeout_seconds=CALL_TIMEOUT) as client:
            await check_client(client, api)
            for endpoint in read_endpoints():
                result = await client.call_tool("get" + endpoint.operation_id, example_arguments(endpoint))
                assert not result.is_error, (endpoint.name, result.content[0].text[:500])


@pytest.fixture
def app_overrides():
    # Every endpoint's limit scaled down to 1 a minute: the second call of a tool is over it.
    return {"rate_limit_scale": 0.0001}


@pytest.mark.gen_test(timeout=120)
async def test_an_api_error_is_a_tool_error_with_its_code_and_a_429_says_when_to_retry(http_server, base_url):
    async with stdio_mcp(base_url + PREFIX) as client:
        bad = await client.call_tool("getPlayer", {"account_id": 0, "region": "eu"})
        assert bad.is_error and bad.structured_content["error"]["code"] == "invalid_account_id", bad.content
        first = await client.call_tool("getStatus", {})
        assert not first.is_error, first.content
        assert STATUS.limit_per_minute > 1 and PLAYER.limit_per_minute > 1  # scaled to 1 here, not by nature
        limited = await client.call_tool("getStatus", {})
        assert limited.is_error, limited.content
        error = limited.structured_content["error"]
        assert error["code"] == "rate_limited" and error["status"] == 429
        assert 1 <= error["retry_after"] <= 60
        assert limited.content[0].text.startswith("rate_limited: ")
        assert f"Retry after {error['retry_after']} s" in limited.content[0].text
