"""Handlers read their arguments through typed views that agree with the catalogue (handlers/params.py)."""

from __future__ import annotations

import dataclasses

import pytest

import handlers
from handlers.params import VIEWS, arguments_of, parse_view, view_params
from server.contract.catalogue import CATALOGUE, ONLINE_HISTORY, Endpoint, Param
from server.contract.errors import APIError

ACCOUNT = Param("account_id", "path", "integer", "invalid_account_id", "Account.", minimum=1, maximum=10**9)
DAYS = Param("days", "query", "integer", "invalid_days", "Days.", minimum=1, maximum=90, default=30)
GROUP = Param("group_by", "query", "string", "invalid_group_by", "Group.", enum=("tier", "type"))
SEARCH = Param("search", "query", "string", "invalid_search", "Text.", min_length=3, required=True)
ENDPOINT = Endpoint(
    "sample",
    "/sample/{account_id}",
    "Sample.",
    "Sample.",
    "meta",
    "getSample",
    10,
    60,
    "/sample/1",
    params=(ACCOUNT, DAYS, GROUP, SEARCH),
)


class QueryOnly:
    def __init__(self, **query: list[str]):
        self.query = query

    def get_query_arguments(self, name: str, strip: bool = False) -> list[str]:
        return self.query.get(name, [])


def served_endpoints() -> list[Endpoint]:
    served = (getattr(route[1], "endpoint", None) for route in handlers.routes)
    return [endpoint for endpoint in served if endpoint is not None]


def test_every_served_endpoint_with_parameters_has_a_typed_view():
    bound = {id(endpoint) for endpoints in VIEWS.values() for endpoint in endpoints}
    missing = [e.name for e in served_endpoints() if view_params(e) and id(e) not in bound]
    assert not missing, f"declare their views with @arguments_of next to the handlers: {missing}"
    assert {id(e) for e in served_endpoints()} >= bound  # no view of an endpoint nobody serves
    assert {e.name for e in served_endpoints()} <= {e.name for e in CATALOGUE}


def test_a_view_reads_the_parameters_as_parsed():
    @arguments_of(ENDPOINT)
    @dataclasses.dataclass(frozen=True)
    class Sample:
        account_id: int
        days: int
        group_by: str | None
        search: str

    args = parse_view(QueryOnly(search=["abcd"]), ENDPOINT, ("7",), Sample)
    assert args == Sample(account_id=7, days=30, group_by=None, search="abcd")
    with pytest.raises(APIError) as refused:
        parse_view(QueryOnly(search=["abcd"], days=["91"]), ENDPOINT, ("7",), Sample)
    assert refused.value.code == "invalid_days"


@pytest.mark.parametrize(
    "fields, says",
    [
        ({"account_id": int, "days": int, "group_by": str | None}, r"missing \['search'\], extra \[\]"),
        ({"account_id": int, "days": int, "group_by": str | None, "search": str, "more": int}, r"extra \['more'\]"),
        ({"account_id": str, "days": int, "group_by": str | None, "search": str}, "account_id is"),
        ({"account_id": int, "days": int | None, "group_by": str | None, "search": str}, "days is"),
        ({"account_id": int, "days": int, "group_by": str, "search": str}, "group_by is"),
        ({"account_id": int, "days": int, "group_by": str | None, "search": str | None}, "search is"),
    ],
)
def test_a_view_that_disagrees_with_its_endpoint_is_refused_at_import(fields, says):
    view = dataclasses.make_dataclass("Wrong", list(fields.items()), frozen=True)
    with pytest.raises(TypeError, match=says):
        arguments_of(ENDPOINT)(view)
    assert view not in VIEWS


def test_the_csv_format_is_left_to_the_base_handler():
    # ONLINE_HISTORY answers CSV: its view has no `format`, and a request naming one still parses.
    assert "format" in [param.name for param in ONLINE_HISTORY.params]
    assert "format" not in [param.name for param in view_params(ONLINE_HISTORY)]
    (view,) = [view for view, endpoints in VIEWS.items() if ONLINE_HISTORY in endpoints]
    args = parse_view(QueryOnly(format=["csv"], days=["3"]), ONLINE_HISTORY, (), view)
    assert (args.game, args.region, args.days) == ("wot", "all", 3)


def test_a_view_not_bound_to_the_endpoint_is_a_programming_error():
    (view,) = [view for view, endpoints in VIEWS.items() if ONLINE_HISTORY in endpoints]
    with pytest.raises(AssertionError):
        parse_view(QueryOnly(search=["abcd"]), ENDPOINT, ("7",), view)
