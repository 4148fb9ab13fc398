"""Parameter parsing from the endpoint catalogue: strict, and every failure is the parameter's coded 400."""

from __future__ import annotations

import re

from server.catalogue import Param
from server.errors import APIError


def single_query_value(handler, name: str, code: str) -> str | None:
    """The one value of `name`, None when absent; a repeated parameter is ambiguous: 400."""
    values = handler.get_query_arguments(name, strip=False)
    if not values:
        return None
    if len(values) > 1:
        raise APIError(code, f"{name} must be given at most once")
    return values[0]


def parse_value(param: Param, text: str):
    """`text` as `param` accepts it, or APIError(param.error).

    Integers the strict way: ASCII digits only (no sign, no spaces), within the bounds. A bad path
    value answers the code's standard message; a query value says what it accepts.
    """
    if param.type == "integer":
        assert param.minimum is not None and param.maximum is not None  # every integer parameter is bounded
        if (
            text
            and text.isascii()
            and text.isdigit()
            and len(text) <= len(str(param.maximum))
            and param.minimum <= int(text) <= param.maximum
        ):
            return int(text)
        hint = f"{param.name} must be an integer from {param.minimum} to {param.maximum}"
    elif param.enum is not None:
        if text in param.enum:
            return text
        hint = f"{param.name} must be one of " + ", ".join(param.enum)
    else:
        # Free text: within its length bounds and matching its pattern (anchored, so the
        # document's unanchored JSON Schema pattern means the same).
        shortest = param.min_length or 0
        longest = param.max_length
        if (
            shortest <= len(text)
            and (longest is None or len(text) <= longest)
            and (param.pattern is None or re.fullmatch(param.pattern, text))
        ):
            return text
        hint = (
            f"{param.name} must be at least {shortest} characters"
            if longest is None
            else (f"{param.name} must be {shortest} to {longest} characters")
        )
        if param.pattern is not None:
            hint += f" matching {param.pattern}"
    raise APIError(param.error, hint if param.location == "query" else None)


def arguments(handler, params: tuple[Param, ...], path_args: tuple[str, ...]) -> dict:
    """Every parameter of an endpoint, parsed in catalogue order (so the first bad one answers);
    an absent query parameter takes its default (None without one), or answers 400 when required."""
    values = {}
    path = iter(path_args)
    for param in params:
        if param.location == "path":
            values[param.name] = parse_value(param, next(path))
            continue
        text = single_query_value(handler, param.name, param.error)
        if text is None and param.required:
            raise APIError(param.error, f"{param.name} is required")
        values[param.name] = param.default if text is None else parse_value(param, text)
    return values
