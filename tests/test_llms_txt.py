"""/llms.txt and /llms-full.txt (llmstxt.org): generated from the catalogue, every endpoint in both.

The format: an H1, a blockquote summary, prose, then H2 sections of link lists (llms.txt); the full
file inlines each endpoint's path, parameters, limits and errors. A catalogue entry missing from
either fails here; on the demo (check_llms_on_demo, run by tests/test_marks.py) both answer.
"""

from __future__ import annotations

import json
import re

import pytest
from tornado.httpclient import AsyncHTTPClient, HTTPRequest

from handlers.llms import LLMS_FULL_PATH, LLMS_PATH, MEDIA_TYPE, render_full, render_short
from server.contract.catalogue import CATALOGUE, PREFIX, Endpoint
from server.contract.errors import ERROR_CODES
from server.serving.ratelimit import scaled_limit
from store.constants import REGIONS

LINK_ITEM = re.compile(r"^- \[[^\]]+\]\((/[^)\s]*)\)(: .+)?$")


def sections(text: str) -> dict[str, list[str]]:
    """The lines under each H2 heading ("" for those before the first)."""
    out: dict[str, list[str]] = {"": []}
    current = ""
    for line in text.splitlines():
        if line.startswith("## "):
            current = line[3:]
            out[current] = []
        else:
            out[current].append(line)
    return out


def missing_from_short(text: str, catalogue: tuple[Endpoint, ...] = CATALOGUE) -> list[str]:
    """The endpoints llms.txt does not list: each is a link to its example with its path and guide."""
    endpoints = "\n".join(sections(text).get("Endpoints", []))
    return [e.name for e in catalogue if f"[{e.summary}]({PREFIX + e.example}): `GET {e.full_path}`." not in endpoints]


def missing_from_full(
    text: str, catalogue: tuple[Endpoint, ...] = CATALOGUE, scale: float = 1.0, limits: dict[str, int] | None = None
) -> list[str]:
    """What llms-full.txt leaves out of an endpoint's section: its path, a parameter, its limit, an error."""
    parts = re.split(r"^### ", text, flags=re.MULTILINE)
    by_summary = {part.split("\n", 1)[0]: part for part in parts[1:]}
    problems = []
    for endpoint in catalogue:
        section = by_summary.get(endpoint.summary)
        if section is None:
            problems.append(f"{endpoint.name}: no section")
            continue
        limit = (limits or {}).get(endpoint.name, scaled_limit(endpoint.limit_per_minute, scale))
        expected = [f"`GET {endpoint.full_path}`", f"{limit} requests per minute"]
        expected += [f"- `{p.name}` ({p.location}, {p.type}," for p in endpoint.params]
        expected += [f"A bad value answers `{p.error}`." for p in endpoint.params]
        expected += [f"- `{c}` ({ERROR_CODES[c][0]}): " for c in endpoint.error_codes]
        problems += [f"{endpoint.name}: {want}" for want in expected if want not in section]
    return problems


def test_llms_txt_is_in_the_llmstxt_format_and_lists_every_endpoint():
    text = render_short()
    lines = text.splitlines()
    assert lines[0] == "# statsapi" and lines[1] == "" and lines[2].startswith("> ")
    assert sum(line.startswith("# ") for line in lines) == 1
    assert not any(line.startswith("### ") for line in lines)  # H2 sections of links only
    parts = sections(text)
    assert list(parts) == ["", "Endpoints", "Optional"]
    for name in ("Endpoints", "Optional"):
        items = [line for line in parts[name] if line]
        assert items and all(LINK_ITEM.match(line) for line in items), name
    intro = "\n".join(parts[""])
    assert all(f"`{region}`" in intro for region in REGIONS)
    assert "statsapi-mcp --base-url" in intro and "`/mcp`" in intro
    assert missing_from_short(text) == []
    assert len([line for line in parts["Endpoints"] if line]) == len(CATALOGUE)


def test_llms_full_txt_inlines_every_endpoints_path_parameters_limits_and_errors():
    text = render_full(1.0)
    assert text.startswith("# statsapi\n\n> ")
    assert missing_from_full(text) == []
    assert '"command": "statsapi-mcp"' in text
    # Limits as this deployment scales them.
    assert missing_from_full(render_full(0.5), scale=0.5) == []


def test_a_catalogue_entry_left_out_fails_the_checks():
    """The checks above would catch an endpoint the files forget (or one the catalogue gains)."""
    endpoint = CATALOGUE[1]
    short = "\n".join(line for line in render_short().splitlines() if f"`GET {endpoint.full_path}`." not in line)
    assert missing_from_short(short) == [endpoint.name]
    full = render_full(1.0).replace(f"### {endpoint.summary}\n", "### (left out)\n")
    assert missing_from_full(full) == [f"{endpoint.name}: no section"]
    param = endpoint.params[0]
    full = render_full(1.0).replace(f"A bad value answers `{param.error}`.", "", 1)
    assert missing_from_full(full) == [f"{endpoint.name}: A bad value answers `{param.error}`."]


async def check_llms_on_demo(base_url: str) -> None:
    """Both files answer, as text, naming every endpoint with the limits the index states."""
    client = AsyncHTTPClient()
    index = json.loads((await client.fetch(base_url + PREFIX)).body)["data"]
    limits = {entry["name"]: entry["rate_limit_per_minute"] for entry in index["endpoints"]}
    for path in (LLMS_PATH, LLMS_FULL_PATH):
        response = await client.fetch(HTTPRequest(base_url + path, request_timeout=60), raise_error=False)
        assert response.code == 200, (path, response.code, response.body[:300])
        assert response.headers["Content-Type"] == MEDIA_TYPE
        text = response.body.decode()
        missing = missing_from_short(text) if path == LLMS_PATH else missing_from_full(text, limits=limits)
        assert missing == [], (path, missing[:10])


@pytest.mark.gen_test(timeout=60)
async def test_both_files_are_served_with_an_etag_and_head_and_no_other_method(http_client, base_url):
    await check_llms_on_demo(base_url)
    for path in (LLMS_PATH, LLMS_FULL_PATH):
        first = await http_client.fetch(base_url + path)
        assert first.headers["Cache-Control"] == "public, max-age=300"
        assert first.headers["Access-Control-Allow-Origin"] == "*"
        assert "RateLimit" not in first.headers  # served like the site's files
        again = await http_client.fetch(
            HTTPRequest(base_url + path, headers={"If-None-Match": first.headers["ETag"]}), raise_error=False
        )
        assert again.code == 304 and not again.body
        head = await http_client.fetch(HTTPRequest(base_url + path, method="HEAD"))
        assert head.code == 200 and not head.body and head.headers["ETag"] == first.headers["ETag"]
        post = await http_client.fetch(HTTPRequest(base_url + path, method="POST", body=b""), raise_error=False)
        assert post.code == 405 and b"method_not_allowed" in post.body
