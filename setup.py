"""Packaging for statsapi."""

import pathlib
import re

from setuptools import find_packages, setup

# The version is stated once, in server/contract/config.py; read as text so packaging imports nothing.
CONFIG = (pathlib.Path(__file__).resolve().parent / "server" / "contract" / "config.py").read_text(encoding="utf-8")
VERSION = re.search(r'^VERSION = "([^"]+)"$', CONFIG, re.MULTILINE).group(1)

setup(
    name="statsapi",
    version=VERSION,
    description="Public read-only JSON API for World of Tanks-style statistics",
    python_requires=">=3.11",
    packages=find_packages(include=["server", "server.*", "handlers", "store"]),
    install_requires=[
        "tornado>=6.5.5,<6.7",  # server/compose/http.py relies on private Tornado code (checked on 6.6.1)
        "motor>=3.7,<4",
        "pymongo>=4.15.1",
        "ujson>=5.10",
        # The embedded database runs as a child process (GPL-2.0; never imported).
        "secantusdb>=0.7.0b3",
        # Progress bars for the demo seeder's long steps.
        "tqdm>=4.66",
        # /metrics in the Prometheus text format (the reference client, not hand-written output).
        "prometheus_client>=0.20",
        # statsapi-mcp (server/mcp/): the official MCP SDK, its current stable line (v2: the low-level
        # Server takes its handlers in the constructor; mcp_types; httpx2, its HTTP client, is ours too).
        "mcp>=2.3,<3",
        # The cards' PNGs (server/serving/cards/png.py): text with FreeType, zlib-compressed, no browser.
        "pillow>=10.1",
        # The upstream simulator's account generation, vectorised (scripts/upstream_sim/profile.py);
        # already installed with SecantusDB (through shapely), declared since we import it.
        "numpy>=1.24",
    ],
    extras_require={
        "test": [
            "pytest>=8",
            "pytest-tornado>=0.8.1",
            "mongomock-motor>=0.0.36",
            "typing_extensions",  # mongomock imports it without declaring it
            # The OpenAPI document is validated and every live response checked against it.
            "jsonschema>=4.18",
            "openapi-spec-validator>=0.7",
            "schemathesis>=4.32,<5",
            "hypothesis>=6.100",  # fuzzing every path parameter and query
            # Two workers, a test file each at a time: most tests wait on the simulator's rates,
            # timeouts or child processes, so two run in about 16 min what one ran in 29.
            "pytest-xdist>=3.6",
            # Browser tests drive Debian's /usr/bin/chromium (never `playwright install`).
            "playwright>=1.45",
            # The checks scripts/test.sh runs before the tests (settings in pyproject.toml).
            "ruff>=0.6",
            "import-linter>=2.0",
            "mypy>=1.10",
        ],
    },
    entry_points={
        "console_scripts": ["statsapi=server.compose.entry:main", "statsapi-mcp=server.mcp.main:main"],
    },
)
