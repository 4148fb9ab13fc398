"""The MCP tools of a statsapi, read from the OpenAPI document it serves: one tool per operation that
answers the JSON envelope, and the request path a tool call asks for. Pure: no I/O."""

from __future__ import annotations

import dataclasses
import urllib.parse
from collections.abc import Mapping
from typing import Any

# The query parameter choosing an answer's representation (json, csv, ...): a tool always asks the
# JSON one, so the parameter is not among the tool's arguments.
FORMAT_PARAM = "format"
JSON_FORMAT = "json"
JSON_MEDIA_TYPE = "application/json"


@dataclasses.dataclass(frozen=True)
class Operation:
    """One read operation as a tool: its name (the operation id), what it says, its arguments'
    JSON Schema, and how a call becomes a request."""

    name: str
    title: str
    description: str
    path: str  # the OpenAPI path template, relative to the API's base URL ("/player/{account_id}/{region}")
    path_params: tuple[str, ...]
    query_params: tuple[str, ...]
    input_schema: Mapping[str, Any]
    fixed_query: tuple[tuple[str, str], ...]  # asked on every call: format=json where the operation has formats

    def request_path(self, arguments: Mapping[str, Any]) -> str:
        """The path and query (relative to the base URL) that a call with these arguments asks for.

        Values go to the API as given (integers as digits, text as text; URL-quoted): the API judges
        them, so a bad value answers the parameter's own error code. A missing path argument is an
        empty segment, which the API answers with that parameter's code too."""
        path = self.path
        for name in self.path_params:
            path = path.replace("{" + name + "}", urllib.parse.quote(as_text(arguments.get(name, "")), safe=""))
        query = [(name, as_text(arguments[name])) for name in self.query_params if arguments.get(name) is not None]
        query += list(self.fixed_query)
        return path + ("?" + urllib.parse.urlencode(query) if query else "")


def as_text(value: Any) -> str:
    """An argument as the API reads it in a URL: booleans as true/false, integral numbers as digits."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def resolve(document: Mapping[str, Any], node: Any) -> Any:
    """A local `$ref` of the document followed (once per level, until none is left)."""
    while isinstance(node, Mapping) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/"):
        target: Any = document
        for part in node["$ref"][2:].split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node = target
    return node


def answers_envelope(document: Mapping[str, Any], operation: Mapping[str, Any]) -> bool:
    """Whether a success answers the JSON envelope (`success` and `data`): not a file, a stream, or
    a document served as is."""
    ok = resolve(document, (operation.get("responses") or {}).get("200")) or {}
    media = (ok.get("content") or {}).get(JSON_MEDIA_TYPE)
    if media is None:
        return False
    schema = resolve(document, media.get("schema")) or {}
    return {"success", "data"} <= set(schema.get("properties") or {})


def argument_schema(parameter: Mapping[str, Any]) -> dict[str, Any]:
    """A parameter's JSON Schema as a tool argument: its type, bounds, allowed values and default,
    with its description (and example, where it has one)."""
    schema = dict(parameter.get("schema") or {})
    if parameter.get("description"):
        schema["description"] = parameter["description"]
    if parameter.get("example") is not None:
        schema["examples"] = [parameter["example"]]
    return schema


def read_operations(document: Mapping[str, Any]) -> list[Operation]:
    """Every GET operation of the document that answers the JSON envelope, in the document's order."""
    operations = []
    for path, item in (document.get("paths") or {}).items():
        operation = item.get("get")
        if operation is None or not answers_envelope(document, operation):
            continue
        properties: dict[str, Any] = {}
        required: list[str] = []
        path_params: list[str] = []
        query_params: list[str] = []
        fixed: list[tuple[str, str]] = []
        for parameter in (resolve(document, p) for p in operation.get("parameters") or ()):
            name, location = parameter["name"], parameter["in"]
            if location not in ("path", "query"):
                continue  # headers (If-None-Match): the tool asks afresh every time
            if location == "query" and name == FORMAT_PARAM:
                if JSON_FORMAT in ((parameter.get("schema") or {}).get("enum") or ()):
                    fixed.append((FORMAT_PARAM, JSON_FORMAT))
                continue
            properties[name] = argument_schema(parameter)
            if parameter.get("required"):
                required.append(name)
            (path_params if location == "path" else query_params).append(name)
        summary = operation.get("summary") or operation["operationId"]
        description = operation.get("description") or ""
        operations.append(
            Operation(
                name=operation["operationId"],
                title=summary,
                description=description if description.startswith(summary) else f"{summary}. {description}".strip(),
                path=path,
                path_params=tuple(path_params),
                query_params=tuple(query_params),
                input_schema={
                    "type": "object",
                    "properties": properties,
                    "required": required,
                    "additionalProperties": False,
                },
                fixed_query=tuple(fixed),
            )
        )
    return operations
