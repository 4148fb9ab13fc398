"""The statsapi the MCP tools call: its OpenAPI document (the tools, kept fresh) and one GET per tool
call, answered as an MCP tool result."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from typing import Any

import httpx2
import mcp_types as types

from server.mcp.tools import JSON_MEDIA_TYPE, Operation, read_operations

log = logging.getLogger("statsapi.mcp")

# How long the tools read from the target's OpenAPI document stand before it is asked again (with its
# ETag: an unchanged document costs a 304). A target upgraded meanwhile shows its new tools after this.
DOCUMENT_SECONDS = 300.0
REQUEST_TIMEOUT = 60.0  # the API answers within its own deadlines (503 past 1.8 s of reads): this is a hang
USER_AGENT = "statsapi-mcp"


class Statsapi:
    """A statsapi at `base_url` (".../api/v1") as the MCP tools see it."""

    def __init__(self, base_url: str, http: httpx2.AsyncClient | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = http
        self._operations: dict[str, Operation] = {}
        self._etag: str | None = None
        self._fetched_at = float("-inf")

    @property
    def http(self) -> httpx2.AsyncClient:
        # Built on first use, inside the running event loop (never at import time).
        if self._http is None:
            self._http = httpx2.AsyncClient(
                timeout=REQUEST_TIMEOUT, headers={"Accept": JSON_MEDIA_TYPE, "User-Agent": USER_AGENT}
            )
        return self._http

    async def close(self) -> None:
        if self._http is not None:
            await self._http.aclose()

    async def operations(self) -> dict[str, Operation]:
        """The read operations by tool name, from the target's OpenAPI document (asked again once it
        is DOCUMENT_SECONDS old; while the target cannot answer, the last one read stands)."""
        if time.monotonic() - self._fetched_at < DOCUMENT_SECONDS:
            return self._operations
        headers = {"If-None-Match": self._etag} if self._etag and self._operations else {}
        try:
            response = await self.http.get(self.base_url + "/openapi.json", headers=headers)
            if response.status_code == 200:
                document = response.json()
                self._operations = {op.name: op for op in read_operations(document)}
                self._etag = response.headers.get("ETag")
            elif response.status_code != 304:
                raise RuntimeError(f"GET {self.base_url}/openapi.json answered {response.status_code}")
        except (httpx2.HTTPError, ValueError, RuntimeError) as exc:
            if not self._operations:
                raise RuntimeError(f"the statsapi at {self.base_url} did not give its OpenAPI document: {exc}") from exc
            log.warning("keeping the tools read before: %s", exc)
        self._fetched_at = time.monotonic()
        return self._operations

    def known_operations(self) -> dict[str, Operation]:
        """The operations as last read (none before the first tool list or call)."""
        return self._operations

    async def tools(self) -> list[types.Tool]:
        return [tool_of(op) for op in (await self.operations()).values()]

    async def call(self, name: str, arguments: Mapping[str, Any] | None) -> types.CallToolResult:
        """One GET: the envelope's `data` as JSON text (and structured content when it is an object),
        or a tool error with the API's error code and message (and when to retry, on a 429 or 503)."""
        operation = (await self.operations()).get(name)
        if operation is None:
            return failure(f"unknown tool {name!r}", {"code": "unknown_tool"})
        url = self.base_url + operation.request_path(arguments or {})
        try:
            response = await self.http.get(url)
        except httpx2.HTTPError as exc:
            return failure(f"the statsapi at {self.base_url} did not answer: {exc}", {"code": "unreachable"})
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict) or "success" not in body:
            return failure(f"GET {url} answered {response.status_code} without the JSON envelope", {"code": "not_json"})
        if body["success"]:
            data = body.get("data")
            return types.CallToolResult(
                content=[types.TextContent(text=json.dumps(data, ensure_ascii=False))],
                structured_content=data if isinstance(data, dict) else None,
            )
        error = dict(body.get("error") or {})
        text = f"{error.get('code')}: {error.get('message')}"
        retry_after = response.headers.get("Retry-After")
        if retry_after is not None and retry_after.isdigit():
            error["retry_after"] = int(retry_after)
            text += f" Retry after {int(retry_after)} s (Retry-After)."
        error["status"] = response.status_code
        return failure(text, error)


def failure(text: str, detail: dict[str, Any]) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=text)], structured_content={"error": detail}, is_error=True
    )


def tool_of(operation: Operation) -> types.Tool:
    return types.Tool(
        name=operation.name,
        title=operation.title,
        description=operation.description,
        input_schema=dict(operation.input_schema),
        annotations=types.ToolAnnotations(
            title=operation.title,
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=True,
            # Answers come from the game's servers as well as from what statsapi keeps.
            open_world_hint=True,
        ),
    )
