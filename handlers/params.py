"""Parameter parsing from the endpoint catalogue: strict, and every failure is the parameter's coded 400."""

from __future__ import annotations

from server.api.catalogue import Param, parse_value
from server.api.errors import APIError


def single_query_value(handler, name: str, code: str) -> str | None:
    """The one value of `name`, None when absent; a repeated parameter is ambiguous: 400."""
    values = handler.get_query_arguments(name, strip=False)
    if not values:
        return None
    if len(values) > 1:
        raise APIError(code, f"{name} must be given at most once")
    return values[0]


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
