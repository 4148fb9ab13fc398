"""Lighthouse (scripts/install_lighthouse.sh, pinned, under var/) driving Debian's Chromium: one
run per page, its category scores and the audits that lost points; for tests/test_lighthouse.py
and scripts/bench_lighthouse.py."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from dataclasses import dataclass, field

from . import ROOT

CLI = os.path.join(ROOT, "var", "lighthouse", "node_modules", "lighthouse", "cli", "index.js")
INSTALL = os.path.join(ROOT, "scripts", "install_lighthouse.sh")
CHROMIUM = "/usr/bin/chromium"
# No network beyond the page's own server: Chromium's background fetches (updates, sync, field
# trials) switched off; headless, as the tests' browser.
CHROME_FLAGS = (
    "--headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update "
    "--disable-sync --no-first-run"
)
GATED = ("accessibility", "best-practices", "seo")  # the categories the test command holds at >= 95
CLS = "cumulative-layout-shift"


@dataclass
class Result:
    url: str
    seconds: float
    scores: dict[str, float | None]  # category id: 0..100 (None when Lighthouse could not score it)
    cls: float | None
    failing: dict[str, list[str]] = field(default_factory=dict)  # category: its audits below a full score
    metrics: dict[str, float] = field(default_factory=dict)  # performance runs: FCP, LCP, TBT, SI in ms
    dom_size: int | None = None


def ensure_installed() -> str:
    """The CLI's path, installing the pinned Lighthouse first when it is missing (idempotent)."""
    if not os.path.isfile(CLI):
        subprocess.run(["bash", INSTALL], check=True, timeout=900)
    return CLI


def command(url: str, categories: tuple[str, ...], output: str) -> list[str]:
    """Mobile defaults (Lighthouse's emulated phone and simulated slow 4G): only the categories
    named, plus CLS from the performance audits when performance itself is not run."""
    args = [
        "node",
        CLI,
        url,
        "--quiet",
        "--output=json",
        f"--output-path={output}",
        f"--only-categories={','.join(categories)}",
        f"--chrome-flags={CHROME_FLAGS}",
        "--disable-full-page-screenshot",
        "--max-wait-for-load=30000",
    ]
    if "performance" not in categories:
        args.append(f"--only-audits={CLS},dom-size")
    return args


def parse(url: str, seconds: float, report: dict) -> Result:
    audits = report["audits"]
    scores: dict[str, float | None] = {}
    failing: dict[str, list[str]] = {}
    for cid, category in report["categories"].items():
        if cid == "performance" and not category["auditRefs"]:
            continue
        score = category["score"]
        scores[cid] = None if score is None else round(score * 100, 1)
        failing[cid] = [
            f"{ref['id']}: {audits[ref['id']].get('displayValue') or audits[ref['id']]['title']}"
            for ref in category["auditRefs"]
            if ref.get("weight", 0) > 0 and audits[ref["id"]].get("score") not in (None, 1)
        ]
    cls = audits.get(CLS, {}).get("numericValue")
    metrics = {
        key: round(audits[key]["numericValue"])
        for key in ("first-contentful-paint", "largest-contentful-paint", "total-blocking-time", "speed-index")
        if key in audits and audits[key].get("numericValue") is not None
    }
    dom = audits.get("dom-size", {}).get("numericValue")
    return Result(url, seconds, scores, cls, failing, metrics, None if dom is None else int(dom))


async def run(url: str, categories: tuple[str, ...], output: str, timeout: float = 180.0) -> Result:
    """One Lighthouse process for `url` (without blocking the caller's event loop, which may be
    the one serving the page); the JSON report stays at `output`."""
    ensure_installed()
    env = dict(os.environ, CHROME_PATH=CHROMIUM)
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        *command(url, categories, output),
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        _, stderr = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise RuntimeError(f"lighthouse did not finish {url} within {timeout:.0f} s") from None
    seconds = time.monotonic() - started
    if proc.returncode != 0 or not os.path.isfile(output):
        raise RuntimeError(f"lighthouse failed on {url} (exit {proc.returncode}): {stderr.decode()[-2000:]}")
    with open(output, encoding="utf-8") as f:
        report = json.load(f)
    if report.get("runtimeError"):
        raise RuntimeError(f"lighthouse on {url}: {report['runtimeError']}")
    return parse(url, seconds, report)


# --- the demo the views are measured on (the test and the benchmark seed the same) --------------
def views(tank_id: int, player_id: int = 500000001) -> tuple[str, ...]:
    """The site's main views (issue 54): home, a player, a tank, marks, rankings, vehicles."""
    return ("", f"#player/eu/{player_id}", f"#tank/eu/{tank_id}", "#marks", "#rankings", "#vehicles")


def view_name(view: str) -> str:
    return view.strip("#").split("/")[0] or "home"


async def seed_small_demo(store, services, sim_url: str) -> dict:
    """The demo's seeding (tracker passes, profiles, the population's daily build, player counts,
    bulk files) over eu alone, small: about a minute against a fast simulator."""
    from server.compose.demo import SimulatorLists, seed_demo

    class EuOnly(SimulatorLists):
        async def accounts(self, region: str, n: int) -> list[int]:
            return await super().accounts(region, n) if region == "eu" else []

        async def clans(self, region: str, n: int) -> list[int]:
            return await super().clans(region, n) if region == "eu" else []

    return await seed_demo(
        store,
        services,
        EuOnly(sim_url),
        players_per_region=12,
        clans_per_region=1,
        history_days=31,
        population_per_region=40,
        population_days=8,
        online_days=1,
        online_recent_hours=1,
        now=time.time(),
    )
