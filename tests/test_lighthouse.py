"""Lighthouse (the npm package pinned by scripts/install_lighthouse.sh, driving Debian's Chromium;
mobile defaults) on a small seeded demo's main views: the home page, a player, a tank, the marks,
the rankings and the vehicle list each score at least 95 in accessibility, best practices and SEO,
with a cumulative layout shift of at most 0.1. Best practices include "no console error" and every
request answered (the vehicle list's icons come from the simulator itself: offline, as online).

The performance score measures time, so it lives in scripts/bench_lighthouse.py, not here. One
Lighthouse process per view, one after the other; the JSON reports go to tests/artifacts/lighthouse/.
"""

from __future__ import annotations

import time

import pytest
import ujson
from tornado.httpclient import AsyncHTTPClient, HTTPRequest

from scripts.loadkit import lighthouse
from store.client import deadline
from tests import test_site_browser as site
from tests.helpers import FAST_REALMS

chromium_path = site.chromium_path  # the session fixture of the site's browser tests
MIN_SCORE = 95
MAX_CLS = 0.1


@pytest.fixture
def app_overrides(fast_upstream_sim):
    return {
        "upstream_base_url": fast_upstream_sim,
        "rate_limit_scale": 100.0,
        "upstream_rps": 100.0,
        "upstream_realm_rps": tuple((realm, rate * 0.8) for realm, rate in FAST_REALMS.items()),
    }


async def data(base_url: str, path: str) -> dict:
    response = await AsyncHTTPClient().fetch(HTTPRequest(base_url + path, request_timeout=60), raise_error=False)
    assert response.code == 200, (path, response.code, response.body[:300])
    return ujson.loads(response.body)["data"]


@pytest.mark.gen_test(timeout=1200)
async def test_main_views_score_95_in_accessibility_best_practices_and_seo_without_layout_shift(
    app, http_server, base_url, http_port, fast_upstream_sim, chromium_path, artifacts_dir
):
    lighthouse.ensure_installed()
    started = time.monotonic()
    with deadline(600):
        await lighthouse.seed_small_demo(app.settings["store"], app.settings["services"], fast_upstream_sim)
    print(f"seeded in {time.monotonic() - started:.1f} s")
    tanks = await data(base_url, "/api/v1/tanks/stats?region=eu&days=30")
    tank_id = max(tanks["tanks"], key=lambda row: row["players"])["tank_id"]
    views = lighthouse.views(tank_id, site.DEMO_PLAYER)
    reports = artifacts_dir / "lighthouse"
    reports.mkdir(parents=True, exist_ok=True)
    problems, lines = [], []
    for view in views:
        name = lighthouse.view_name(view)
        result = await lighthouse.run(
            site.site_url(http_port, view), lighthouse.GATED, str(reports / f"{name}.report.json")
        )
        lines.append(f"{view or '/'}: {result.scores} CLS {result.cls} DOM {result.dom_size} in {result.seconds:.1f} s")
        for category in lighthouse.GATED:
            score = result.scores.get(category)
            if score is None or score < MIN_SCORE:
                problems.append(f"{view or '/'} {category} {score}: {result.failing.get(category)}")
        if result.cls is None or result.cls > MAX_CLS:
            problems.append(f"{view or '/'} CLS {result.cls} > {MAX_CLS} (see {reports / name}.report.json)")
    print("\n".join(lines))
    assert not problems, "\n".join(problems + lines)
