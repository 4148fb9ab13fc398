"""Parameter parsing from the endpoint catalogue: strict, and every failure is the parameter's coded 400.

A handler reads its endpoint's arguments through a typed view: a frozen dataclass declared next to
the handler and bound to the catalogue entry with @arguments_of, which checks at import that its
fields are the entry's parameters (their names and the types they parse to), so the catalogue stays
where each parameter is declared and mypy follows every read.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from server.contract.catalogue import Endpoint, Param, parse_value
from server.contract.catalogue.model import REPRESENTATION_PARAMS
from server.contract.errors import APIError

View = TypeVar("View")

# Each typed view and the endpoints whose arguments it reads (filled by @arguments_of at import).
VIEWS: dict[type, tuple[Endpoint, ...]] = {}


class QueryArguments(Protocol):
    """What parsing reads of a request handler."""

    def get_query_arguments(self, name: str, strip: bool = ...) -> list[str]: ...


def single_query_value(handler: QueryArguments, name: str, code: str) -> str | None:
    """The one value of `name`, None when absent; a repeated parameter is ambiguous: 400."""
    values = handler.get_query_arguments(name, strip=False)
    if not values:
        return None
    if len(values) > 1:
        raise APIError(code, f"{name} must be given at most once")
    return values[0]


def arguments(handler: QueryArguments, params: tuple[Param, ...], path_args: tuple[str, ...]) -> dict[str, Any]:
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


def view_params(endpoint: Endpoint) -> tuple[Param, ...]:
    """The parameters a handler's view reads: all but the representation (?format=, and a card's
    ?size= and ?theme=), which BaseHandler.respond reads."""
    return tuple(param for param in endpoint.params if param.name not in REPRESENTATION_PARAMS)


def field_type(param: Param) -> object:
    """The type a parsed value has: int or str, or None too where an absent query parameter has no default."""
    kind: type = int if param.type == "integer" else str
    absent_is_none = param.location == "query" and not param.required and param.default is None
    return kind | None if absent_is_none else kind


def view_mismatches(view: type, endpoint: Endpoint) -> list[str]:
    """How `view`'s fields differ from `endpoint`'s parameters (none when it reads them as parsed)."""
    if not dataclasses.is_dataclass(view):
        return [f"{view.__name__} is not a dataclass"]
    hints = typing.get_type_hints(view)
    fields = {field.name for field in dataclasses.fields(view)}
    params = view_params(endpoint)
    names = {param.name for param in params}
    if fields != names:
        missing, extra = sorted(names - fields), sorted(fields - names)
        return [f"{view.__name__} is not a view of {endpoint.name}: fields missing {missing}, extra {extra}"]
    return [
        f"{view.__name__}.{param.name} is {hints[param.name]}; the parameter is {field_type(param)}"
        for param in params
        if hints[param.name] != field_type(param)
    ]


def arguments_of(*endpoints: Endpoint) -> Callable[[type[View]], type[View]]:
    """Bind a frozen dataclass as the typed view of each endpoint's arguments; TypeError at import
    when its fields are not an endpoint's parameters, with the types they parse to."""

    def bind(view: type[View]) -> type[View]:
        mismatches = [mismatch for endpoint in endpoints for mismatch in view_mismatches(view, endpoint)]
        if mismatches:
            raise TypeError("; ".join(mismatches))
        VIEWS[view] = VIEWS.get(view, ()) + endpoints
        return view

    return bind


def parse_view(handler: QueryArguments, endpoint: Endpoint, path_args: tuple[str, ...], view: type[View]) -> View:
    """`endpoint`'s arguments parsed (APIError on a bad one) and read through `view`, its typed view."""
    assert endpoint in VIEWS.get(view, ()), f"{view.__name__} is not bound to {endpoint.name} by @arguments_of"
    values = arguments(handler, endpoint.params, path_args)
    for name in REPRESENTATION_PARAMS:
        values.pop(name, None)  # not in the view (see view_params)
    return view(**values)
