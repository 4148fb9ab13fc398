"""/metrics: Prometheus text format, for configured networks only, not in the public index."""

from __future__ import annotations

import dataclasses

import pytest
import ujson
from prometheus_client.parser import text_string_to_metric_families
from tornado.httpclient import HTTPRequest

from server.contract.config import parse_networks


@pytest.fixture
def app_overrides():
    return {"trusted_proxies": parse_networks("127.0.0.1/32")}


def samples(text: str) -> dict:
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


@pytest.mark.gen_test(timeout=30)
async def test_metrics_parse_and_count_requests_rejections_and_upstream(app, http_client, base_url):
    for _ in range(3):
        assert (await http_client.fetch(f"{base_url}/api/v1/status")).code == 200
    weekly = [
        await http_client.fetch(
            f"{base_url}/api/v1/clan/500000/eu/weekly", raise_error=False, headers={"X-Forwarded-For": "192.0.2.1"}
        )
        for _ in range(12)
    ]
    assert [r.code for r in weekly].count(429) == 2
    response = await http_client.fetch(f"{base_url}/metrics")
    assert response.code == 200
    assert response.headers["Content-Type"].startswith("text/plain")
    assert response.headers["Cache-Control"] == "no-store"
    values = samples(response.body.decode())
    assert values[("statsapi_http_requests_total", (("endpoint", "status"), ("status", "200")))] == 3
    assert values[("statsapi_http_requests_total", (("endpoint", "weekly"), ("status", "429")))] == 2
    assert values[("statsapi_rate_limit_rejections_total", (("bucket", "weekly"),))] == 2
    assert values[("statsapi_http_request_duration_seconds_count", (("endpoint", "status"),))] == 3
    assert values[("statsapi_database_up", ())] == 1.0
    assert ("statsapi_upstream_effective_rate", ()) in values
    assert ("statsapi_rate_counter_flush_lag_seconds", ()) in values
    # The driver's commands are timed (the status page's reads at least).
    timed = {
        dict(labels)["command"] for name, labels in values if name == "statsapi_database_command_duration_seconds_count"
    }
    assert {"find", "ping"} <= timed


@pytest.mark.gen_test(timeout=30)
async def test_metrics_are_not_in_the_public_index(app, http_client, base_url):
    index = ujson.loads((await http_client.fetch(f"{base_url}/api/v1")).body)["data"]
    assert all("metrics" not in endpoint["path"] for endpoint in index["endpoints"])


@pytest.mark.gen_test(timeout=30)
async def test_metrics_are_refused_from_other_networks(app, http_client, base_url):
    config = app.settings["config"]
    app.settings["config"] = dataclasses.replace(config, metrics_allow=parse_networks("10.0.0.0/8"))
    # The peer is 127.0.0.1, outside 10.0.0.0/8; a forwarded address from inside does not help.
    for headers in ({}, {"X-Forwarded-For": "10.1.2.3"}):
        response = await http_client.fetch(HTTPRequest(f"{base_url}/metrics", headers=headers), raise_error=False)
        assert response.code == 404
        assert ujson.loads(response.body)["error"]["code"] == "unknown_endpoint"
