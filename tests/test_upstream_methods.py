"""Each upstream method is written three times (the client, the `Upstream` Protocol services see,
the simulator's method table) and the callers are a closed set: these checks fail when they disagree."""

from __future__ import annotations

import inspect
import re

import pytest

from scripts.upstream_sim.methods import METHODS, REGION_IDS
from server.upstream.budget import CALLERS, PRIORITIES, UpstreamBudget
from server.upstream.client import ID_LIMITS, MAX_IDS_PER_REQUEST, UpstreamClient
from server.upstream.interface import Upstream

# The client's public methods that are not one upstream API method each.
NOT_API_METHODS = {"close", "fetch_json_url", "fetch_url", "status"}


def api_methods() -> dict[str, str]:
    """{client method name: the upstream API path its source asks}."""
    out = {}
    for name, method in inspect.getmembers(UpstreamClient, inspect.iscoroutinefunction):
        if name.startswith("_") or name in NOT_API_METHODS:
            continue
        paths = set(re.findall(r'"((?:wot|wgn)/[a-z_]+/[a-z_]+)"', inspect.getsource(method)))
        assert len(paths) == 1, (name, paths)
        out[name] = paths.pop()
    return out


def test_the_protocol_declares_every_upstream_method_of_the_client_with_its_signature():
    declared = {
        name for name, member in vars(Upstream).items() if not name.startswith("_") and inspect.isfunction(member)
    }
    assert declared - NOT_API_METHODS == set(api_methods()), declared ^ set(api_methods())
    for name in declared:
        client, protocol = inspect.signature(getattr(UpstreamClient, name)), inspect.signature(getattr(Upstream, name))
        assert list(client.parameters) == list(protocol.parameters), name
        for parameter in client.parameters.values():
            assert str(parameter.annotation) == str(protocol.parameters[parameter.name].annotation), (name, parameter)
            assert parameter.default == protocol.parameters[parameter.name].default, (name, parameter)


def test_the_simulator_answers_every_method_the_client_asks_with_the_same_id_limits():
    paths = api_methods()
    assert set(paths.values()) <= set(METHODS), set(paths.values()) - set(METHODS)
    for path, (_, most, _) in REGION_IDS.items():
        if path in paths.values():
            # The client never sends more ids than the simulator (as strict as the real API) takes.
            assert ID_LIMITS.get(path, MAX_IDS_PER_REQUEST) <= most or most == 1, path


def test_every_caller_has_a_priority_and_an_unknown_one_is_refused():
    assert set(PRIORITIES) == set(CALLERS)
    for name, method in inspect.getmembers(UpstreamClient, inspect.iscoroutinefunction):
        caller = inspect.signature(method).parameters.get("caller")
        if caller is not None and not name.startswith("_"):
            assert caller.default in CALLERS, name


@pytest.mark.gen_test(timeout=10)
async def test_an_unknown_caller_is_refused_at_once():
    budget = UpstreamBudget(10, hold_first_window=False)
    with pytest.raises(ValueError, match="unknown upstream caller"):
        await budget.acquire("nobody")  # type: ignore[arg-type]
    await budget.acquire("live")
