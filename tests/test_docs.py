"""The documents are tested like code.

- docs/api.md is what scripts/api_docs.py generates from the catalogue, the schemas and the error
  codes; every endpoint, parameter and error code is in it;
- every module docs/architecture.md names exists, and every package of server/ is described;
- every option is in docs/deploy.md's configuration reference;
- every link in README.md, CHANGELOG.md and docs/ resolves (files and anchors);
- every table of docs/benchmarks.md names its command, machine, date and commit;
- README.md stays short and says what an operator must know about the real API;
- README.md and every document under docs/ state the current truth, never the history of the work;
- CHANGELOG.md's newest release is the server's version, and the index links the changelog;
- the README's example calls answer, against the service and its simulator, what the README shows.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import random
import re
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import ujson
from tornado.httpclient import HTTPRequest

from scripts import api_docs
from server.contract import config as config_module
from server.contract.catalogue import CATALOGUE
from server.contract.errors import ERROR_CODES

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def read(relative: str) -> str:
    return (ROOT / relative).read_text(encoding="utf-8")


ARCHITECTURE = read("docs/architecture.md")
DEPLOY = read("docs/deploy.md")
README = read("README.md")
API = read("docs/api.md")
BENCHMARKS = read("docs/benchmarks.md")
CHANGELOG = read("CHANGELOG.md")
# The documents this test holds to the rule "the current truth, never the history of the work":
# the README and every document under docs/ (CHANGELOG.md is the history, by design).
CURRENT_TRUTH_DOCUMENTS = ("README.md", *sorted(f"docs/{path.name}" for path in DOCS.glob("*.md")))

FILE_NAMES = re.compile(r"\b((?:server|handlers|store|scripts|tests|static)/[\w/.-]*\w)")
DOTTED_NAMES = re.compile(r"`((?:server|handlers|store)(?:\.\w+)+)")


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    following = re.search(r"^## ", text[start + len(heading) :], re.M)
    return text[start : start + len(heading) + following.start()] if following else text[start:]


def _resolves(dotted: str) -> bool:
    """A module, or an attribute reached from the longest importable module prefix."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            if importlib.util.find_spec(module_name) is None:
                continue
        except ModuleNotFoundError:  # a prefix is a module, not a package: try a shorter one
            continue
        obj = importlib.import_module(module_name)
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


# --- docs/api.md ----------------------------------------------------------------------------------
def test_the_api_reference_is_what_the_generator_writes():
    assert API == api_docs.render(), (
        "docs/api.md differs from what scripts/api_docs.py generates from server/contract/catalogue.py, "
        f"handlers/schemas.py and server/contract/errors.py: run `{api_docs.COMMAND}` and commit docs/api.md"
    )


@pytest.mark.parametrize("endpoint", CATALOGUE, ids=lambda e: e.name)
def test_every_endpoint_and_its_parameters_are_in_the_api_reference(endpoint):
    assert f"`GET {endpoint.full_path}`" in API, f"docs/api.md does not document {endpoint.full_path}"
    section = _section(API, f"### {endpoint.summary}\n")
    for param in endpoint.params:
        assert f"| `{param.name}` | {param.location} |" in section, (
            f"docs/api.md does not list the parameter {param.name} of {endpoint.full_path}"
        )
    assert f"{endpoint.limit_per_minute} requests per minute" in section
    assert f"max-age={endpoint.cache_max_age}" in section


@pytest.mark.parametrize("code", sorted(ERROR_CODES))
def test_every_error_code_is_in_the_api_reference(code):
    status, _ = ERROR_CODES[code]
    errors = _section(API, "## Error codes")
    assert f"| {status} | `{code}` |" in errors, f"docs/api.md's error codes do not list {code} ({status})"


# --- docs/architecture.md and docs/deploy.md ---------------------------------------------------------
def test_every_file_and_module_the_architecture_names_exists():
    paths = sorted(set(FILE_NAMES.findall(ARCHITECTURE)))
    assert len(paths) > 20, "the pattern must find the document's paths"
    missing = [p for p in paths if not (ROOT / p.rstrip("/")).exists()]
    assert not missing, f"docs/architecture.md names files that do not exist: {missing}"
    dotted = sorted(set(DOTTED_NAMES.findall(ARCHITECTURE)))
    assert dotted, "the pattern must find the document's module names"
    unresolved = [d for d in dotted if not _resolves(d)]
    assert not unresolved, f"docs/architecture.md names modules or attributes that do not exist: {unresolved}"


def test_every_package_of_server_is_described_in_the_architecture():
    packages = sorted(p.parent.name for p in (ROOT / "server").glob("*/__init__.py"))
    assert len(packages) >= 5
    undescribed = [p for p in packages if f"server/{p}/" not in ARCHITECTURE]
    assert not undescribed, f"packages of server/ that docs/architecture.md does not describe: {undescribed}"


def _declared_options() -> tuple[set[str], set[str]]:
    """The command-line flags and STATSAPI_* variables server/contract/config.py reads."""
    parser = config_module.build_parser()
    flags = {
        option
        for action in parser._actions  # argparse has no public list of its options
        for option in action.option_strings
        if option.startswith("--") and option != "--help"
    }
    source = Path(config_module.__file__).read_text(encoding="utf-8")
    variables = set(re.findall(r"\bSTATSAPI_[A-Z_]+\b", source))
    return flags, variables


def test_every_option_is_in_the_configuration_reference():
    reference = _section(DEPLOY, "## 1. Configuration reference")
    flags, variables = _declared_options()
    assert len(flags) > 10 and len(variables) > 10
    undocumented = sorted(f for f in flags if f"`{f}" not in reference) + sorted(
        v for v in variables if f"`{v}" not in reference
    )
    assert not undocumented, f"options missing from docs/deploy.md section 1: {undocumented}"


def test_the_backup_section_states_what_the_backup_code_does():
    """docs/deploy.md section 8 names store/backup.py's batch, window, duty, account walks and its
    consistency statement (the manifest's `consistency`), as the code has them."""
    from store import backup
    from store.constants import BACKUP_DUTY

    section = " ".join(_section(DEPLOY, "## 8. Backups").replace("**", "").split())
    for said in (
        f"{backup.BATCH} documents a batch",
        f"about {backup.WINDOW_DOCS} documents",
        f"default {BACKUP_DUTY}",
        f"at least {backup.PAUSE_SECONDS * 1000:g} ms",
        "by ranges of accounts",
        *(f"`{name}`" for name in backup.ACCOUNT_WALKS),
    ):
        assert said in section, f"docs/deploy.md section 8 must say {said!r} (store/backup.py)"
    consistency = " ".join(backup.CONSISTENCY.split())
    for clause in (
        "Every UTC day that had ended when the backup started is copied whole",
        "a per-tank record kept by a rewrite stays with its account (a new expiry day, the same document)",
        "copied as it was when its window was read",
    ):
        assert clause in consistency, f"store/backup.py CONSISTENCY no longer says {clause!r}: update this test and §8"
        assert clause in section, f"docs/deploy.md section 8 must state the code's consistency: {clause!r}"


# --- links ---------------------------------------------------------------------------------------------
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)
CODE_SPAN = re.compile(r"`[^`\n]+`")


def linked_documents() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted(DOCS.glob("*.md"))]


def anchors(path: Path) -> set[str]:
    """The anchors GitHub gives the headings of a Markdown file (a repeated heading gets -1, -2, ...)."""
    seen: dict[str, int] = {}
    out = set()
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", text, re.M):
        slug = api_docs.github_slug(heading)
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        out.add(slug if count == 0 else f"{slug}-{count}")
    return out


def test_the_slug_is_githubs():
    assert (
        api_docs.github_slug("3a. The upstream: three limits, and the mistakes that look healthy")
        == "3a-the-upstream-three-limits-and-the-mistakes-that-look-healthy"
    )
    assert api_docs.github_slug("Conventions — `GET` only") == "conventions--get-only"


@pytest.mark.parametrize("path", linked_documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_resolves(path):
    text = CODE_SPAN.sub("", FENCE.sub("", path.read_text(encoding="utf-8")))
    broken = []
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target} (no such heading)")
    assert not broken, f"{path.relative_to(ROOT)} has broken links: {broken}"


def test_the_methods_the_answers_link_to_are_headings_of_the_docs():
    from server.contract.catalogue import MARKS_METHOD, OFFICIAL_METHOD

    for method in (MARKS_METHOD, OFFICIAL_METHOD):
        file_part, _, anchor = method.partition("#")
        assert anchor in anchors(ROOT / file_part), method


def test_the_architecture_map_names_every_module():
    """docs/architecture.md's map names each module of server/, handlers/ and store/ in the block of
    its folder (a module of a subfolder as `sub/name.py`), so a newcomer finds every one."""
    block = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").split("```\n", 2)[1]
    sections: dict[str, str] = {}
    current = None
    for line in block.splitlines():
        folder = re.match(r"^([a-z_]+/(?:[a-z_]+/)?)", line)
        if folder:
            current = folder.group(1)
            sections[current] = ""
        if current is not None:
            sections[current] += line + "\n"
    unmapped = []
    for top in ("server", "handlers", "store"):
        for path in sorted((ROOT / top).rglob("*.py")):
            name = str(path.relative_to(ROOT))
            if path.name == "__init__.py" or name == "server/__main__.py" and "server/__main__.py" in block:
                continue
            folder = max((f for f in sections if name.startswith(f)), key=len, default=None)
            text, rest = (sections[folder], name[len(folder) :]) if folder else ("", name)
            if "/" in rest:  # a subfolder's module: named after the subfolder's own mention
                sub, rest = rest.rsplit("/", 1)
                text = text[text.find(sub + "/") :] if sub + "/" in text else ""
            if not re.search(r"(?<![\w/.])" + re.escape(rest) + r"\b", text):
                unmapped.append(name)
    assert not unmapped, f"modules missing from docs/architecture.md's map: {unmapped}"


# --- docs/benchmarks.md -----------------------------------------------------------------------------
def benchmark_tables() -> list[tuple[str, str]]:
    """(the text from the table's heading to the table, the table's first line) for each table."""
    out = []
    lines = BENCHMARKS.splitlines()
    heading_at = 0
    for number, line in enumerate(lines):
        if line.startswith("#"):
            heading_at = number
        if line.startswith("|") and (number == 0 or not lines[number - 1].startswith("|")):
            out.append(("\n".join(lines[heading_at:number]), line))
    return out


def test_every_benchmark_table_names_its_command_machine_date_and_commit():
    tables = benchmark_tables()
    assert len(tables) >= 5, "docs/benchmarks.md must hold the benchmarks' tables"
    git = (ROOT / ".git").exists()
    for preamble, first_line in tables:
        where = f"docs/benchmarks.md, the table starting {first_line[:60]!r}"
        assert re.search(r"\*\*Command\*\*: `[^`]+`", preamble), f"{where} names no command"
        assert "**Machine**:" in preamble, f"{where} names no machine"
        assert re.search(r"\*\*Date\*\*: 20\d\d-\d\d-\d\d", preamble), f"{where} names no date"
        commits = re.findall(r"\*\*Commit\*\*: `?([0-9a-f]{7,40})", preamble)
        assert commits, f"{where} names no commit"
        if git:
            for commit in commits:
                found = subprocess.run(
                    ["git", "-C", str(ROOT), "cat-file", "-e", commit + "^{commit}"], capture_output=True
                )
                assert found.returncode == 0, f"{where}: commit {commit} is not in this repository"


# --- no history narration ---------------------------------------------------------------------------
HISTORY_PHRASES = (
    "last session",
    "this session",
    "previous session",
    "previous run",
    "the run before",
    "not re-measured",
    "re-measured after",
    "what changed since",
    "ratio before",
    "used to",
    "no longer",
    "anymore",
    "previously",
    "was changed",
    "not kept (its",
    "throwaway prototype",
)
# Narration that needs word boundaries: references to the issue tracker's work items, and a
# figure or behaviour set against the one "before this" change (state what is true, and why).
HISTORY_PATTERNS = (
    r"\bissues? #?\d+",
    r"\bbuild items? \d+",
    r"\bbefore this\b",
    r"\bafter this (?:change|guard|fix|commit)\b",
    r"\bbefore: ",
    r"\bthis change\b",
)


def test_the_current_truth_documents_include_every_document():
    assert {"README.md", "docs/deploy.md", "docs/expected-values.md", "docs/api.md"} <= set(CURRENT_TRUTH_DOCUMENTS)
    assert "CHANGELOG.md" not in CURRENT_TRUTH_DOCUMENTS


@pytest.mark.parametrize(
    "narration",
    [
        "before this 32 or 64 concurrent",
        "took 3.75 s before this guard (1.96 s after",
        "Before this, an attacker's churn",
        "each attack of issue 12 (flood",
        "(issue 24: rows for the tanks",
        "(issue 24, Build item 1)",
        "a throwaway prototype of the same method that was not kept",
        "Before: 100 % CPU",
        "it used to answer 500",
        "a process no longer counts",
    ],
)
def test_the_history_check_catches_narration(narration):
    assert _narration(narration), f"the history check misses {narration!r}"


def _narration(text: str) -> list[str]:
    text = text.lower()
    return [phrase for phrase in HISTORY_PHRASES if phrase in text] + [
        match.group(0) for pattern in HISTORY_PATTERNS for match in re.finditer(pattern, text)
    ]


@pytest.mark.parametrize("relative", CURRENT_TRUTH_DOCUMENTS)
def test_documents_state_the_current_truth_not_the_history_of_the_work(relative):
    found = _narration(read(relative))
    assert not found, f"{relative} narrates history ({found}); state what is true now, git keeps the history"


# --- README.md ---------------------------------------------------------------------------------------
def test_the_readme_is_short_and_tells_an_operator_about_the_real_api():
    assert len(README.splitlines()) <= 150, f"README.md has {len(README.splitlines())} lines; keep it to 150"
    for needed in (
        "scripts/run.sh",
        "scripts/test.sh",
        "`STATSAPI_APPLICATION_ID`",
        "`demo`",
        "`--upstream-rps`",
        "`--upstream-realm-rps`",
        "`eu=6,na=8,asia=8`",
        "`--upstream-contact`",
        "100",
        "docs/deploy.md#3a-the-upstream-three-limits-and-the-mistakes-that-look-healthy",
    ):
        assert needed in README, f"README.md must mention {needed}"
    from server.contract.catalogue import CLAN, HISTORY, LIVE_GLOBAL, LIVE_PER_CLIENT, PLAYER

    limits = [endpoint.limit_per_minute for endpoint in CATALOGUE]
    limits_said = " ".join(_section(README, "## Limits a caller meets").split())
    for said in (
        f"{min(limits)} to {max(limits)} requests per minute",
        f"{PLAYER.limit_per_minute} for a player or a clan"
        if PLAYER.limit_per_minute == CLAN.limit_per_minute
        else "-",
        f"{HISTORY.limit_per_minute} for a history",
        f"{LIVE_PER_CLIENT} per minute per client and {LIVE_GLOBAL} per minute across all clients",
    ):
        assert said in limits_said, f"README.md's limits must say {said!r} (server/contract/catalogue.py)"
    for document in ("docs/api.md", "docs/deploy.md", "docs/architecture.md", "docs/benchmarks.md", "docs/data.md"):
        assert f"]({document}" in README, f"README.md must link {document}"
    assert "](CHANGELOG.md)" in README


# --- CHANGELOG.md -------------------------------------------------------------------------------------
def test_the_changelog_is_keep_a_changelog_and_its_newest_release_is_the_servers_version():
    from handlers.index import index_document
    from tests.helpers import make_config

    assert CHANGELOG.startswith("# Changelog\n")
    assert "keepachangelog.com" in CHANGELOG and "semver.org" in CHANGELOG
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", CHANGELOG, re.M)
    assert releases, "CHANGELOG.md lists no release as '## [x.y.z] - YYYY-MM-DD'"
    assert releases[0][0] == config_module.VERSION, (
        f"the newest release in CHANGELOG.md is {releases[0][0]}, the server says {config_module.VERSION} "
        "(server/contract/config.py VERSION)"
    )
    assert [r[0] for r in releases] == sorted((r[0] for r in releases), key=lambda v: tuple(map(int, v.split("."))))[
        ::-1
    ], "releases newest first"
    assert releases[-1][0] == "1.0.0"
    for section in re.findall(r"^### (.+)$", CHANGELOG, re.M):
        assert section in ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"), section
    for version, _ in releases:  # each release says what a caller must change, if anything
        release = _section(CHANGELOG, f"## [{version}]")
        assert "**Callers:**" in release, f"release {version} does not say what a caller must change"
    index = index_document(make_config())
    assert index["changelog"]["release"] == config_module.VERSION
    assert (ROOT / index["changelog"]["document"]).exists()


# --- the README's example calls -------------------------------------------------------------------------
ELLIPSIS = "…"
ISO_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$")


def readme_examples() -> list[tuple[str, int, dict]]:
    """(path and query, status, the trimmed answer as JSON with `"…"` for what is left out) of each
    `$ curl` of the README's example block."""
    block = re.search(r"```console\n(.*?)```", _section(README, "## Example calls"), re.S)
    assert block, "the README's example calls are in a ```console block"
    examples = []
    for entry in re.split(r"^(?=\$ curl)", block.group(1), flags=re.M):
        if not entry.strip():
            continue
        command, _, answer = entry.partition("\n")
        url = re.search(r'"(http://[^"]+)"', command)
        assert url, f"an example call names its URL in quotes: {command}"
        parts = urlsplit(url.group(1))
        status, _, trimmed = " ".join(answer.split()).partition(" ")
        examples.append((parts.path + (f"?{parts.query}" if parts.query else ""), int(status), as_json(trimmed)))
    return examples


def as_json(trimmed: str) -> dict:
    """The README's trimmed answer as JSON: `…` for a value, `{…}`, `[…]`, and `, …` for fields left out."""
    text = re.sub(r",\s*" + ELLIPSIS + r"(?=\s*[}\]])", "", trimmed)
    text = text.replace("{" + ELLIPSIS + "}", f'"{ELLIPSIS}"').replace("[" + ELLIPSIS + "]", f'"{ELLIPSIS}"')
    text = re.sub(r'(?<!")' + ELLIPSIS + '(?!")', f'"{ELLIPSIS}"', text)
    try:
        return ujson.loads(text)
    except ValueError:
        raise AssertionError(
            f"the README's trimmed answer is not JSON with … for what is left out: {trimmed}"
        ) from None


def differences(shown, actual, where: str = "") -> list[str]:
    """What the README shows that the answer does not: a missing field, another value, another kind."""
    if shown == ELLIPSIS:
        return []
    if isinstance(shown, dict):
        if not isinstance(actual, dict):
            return [f"{where or 'the answer'} is not an object"]
        out = []
        for key, value in shown.items():
            if key not in actual:
                out.append(f"{where}{key} is missing")
            else:
                out += differences(value, actual[key], f"{where}{key}.")
        return out
    if isinstance(shown, list):
        if not isinstance(actual, list):
            return [f"{where.rstrip('.')} is not an array"]
        if shown and not actual:
            return [f"{where.rstrip('.')} is empty"]
        return differences(shown[0], actual[0], f"{where.rstrip('.')}[0].") if shown else []
    if isinstance(shown, str) and isinstance(actual, str):
        if shown.endswith(ELLIPSIS) and actual.lower().startswith(shown[:-1].lower()):
            return []  # "Titan…": a value starting so
        if ISO_UTC.match(shown) and ISO_UTC.match(actual):
            return []  # a time: its form, not its value
    return [] if shown == actual else [f"{where.rstrip('.')} is {actual!r}, the README shows {shown!r}"]


def test_the_readme_shows_a_dozen_example_calls_as_json():
    examples = readme_examples()
    assert len(examples) >= 12
    assert {path.split("?")[0] for path, _, _ in examples} >= {"/api/v1", "/api/v1/status", "/api/v1/online"}


async def seed_tank_population(app) -> None:
    """Three days of T-34 (tank 1) battles by 25 made-up eu accounts, written as the tracker writes
    them, and the daily job: /tanks/stats and /tank/1 answer as in the demo."""
    from server.domain.days import days_before
    from server.domain.records import pack
    from server.services.population import PopulationService, newest_complete_day
    from store.constants import TANK_COUNTERS
    from store.population import TankChanges
    from store.tracker import tracked_id

    store, services = app.settings["store"], app.settings["services"]
    through = newest_complete_day(time.time())
    rng = random.Random(31)
    accounts = range(500_200_000, 500_200_025)
    careers: dict[int, list[int]] = {a: [0] * len(TANK_COUNTERS) for a in accounts}
    for k in range(3):
        docs = []
        for account in accounts:
            battles = rng.randint(10, 20)
            wins = rng.randint(battles // 3, battles)
            shots = 8 * battles
            counters = {
                "battles": battles,
                "wins": wins,
                "losses": battles - wins,
                "draws": 0,
                "damage_dealt": battles * rng.randint(300, 900),
                "frags": rng.randint(0, battles),
                "spotted": rng.randint(0, battles),
                "dropped_capture_points": 0,
                "capture_points": 0,
                "xp": battles * rng.randint(300, 900),
                "survived_battles": rng.randint(0, battles),
                "shots": shots,
                "hits": rng.randint(shots // 2, shots),
                "damage_received": battles * 500,
                "stun_assisted_damage": 0,
            }
            row = [counters[name] for name in TANK_COUNTERS]
            # the account's spotting and tracking that day (kept per account): the marks count it
            assist = [battles, battles * (200 + account % 300), battles * (50 + account % 80)]
            docs.append(TankChanges.change("eu", account, days_before(through, k), pack({1: row}), assist=assist))
            careers[account] = [a + b for a, b in zip(careers[account], row)]
        await store.population.changes.save(docs)
    await store.tracked.collection.insert_many(
        [
            {"_id": tracked_id("eu", a), "region": "eu", "account_id": a, "state": pack({1: [3 * v for v in row]})}
            for a, row in careers.items()
        ]
    )
    job = PopulationService(store, services.ratings_source)
    job.pause = 0
    await job.build(force=True)


@pytest.mark.gen_test(timeout=120)
async def test_the_readme_example_calls_answer_what_the_readme_shows(app, http_client, base_url):
    """The demo's data in small (the README's player looked up live and rated, its clan refreshed with
    its digest, a sample of player counts, a tank population built), then every README call: its
    status and every field and value the README shows."""
    from tests.helpers import EXPECTED_VALUES_FILE

    if not EXPECTED_VALUES_FILE.exists():
        pytest.skip(f"the expected-values table the simulator serves is not at {EXPECTED_VALUES_FILE}")
    examples = readme_examples()
    store, services = app.settings["store"], app.settings["services"]

    async def get(path: str):
        response = await http_client.fetch(HTTPRequest(base_url + path, request_timeout=60), raise_error=False)
        return response.code, ujson.loads(response.body)

    account = int(re.search(r"/player/(\d+)/eu\b", "\n".join(p for p, _, _ in examples)).group(1))
    code, body = await get(f"/api/v1/player/{account}/eu")  # fetched live, then rated in the background
    assert code == 200, body
    for _ in range(300):
        if ((await store.players.get("eu", account)) or {}).get("ratings"):
            break
        await asyncio.sleep(0.05)
    clan = body["data"]["clan_id"]
    await store.clans.add_seeds("eu", [clan])
    await services.clans.refresh()
    await services.online.sample(int(time.time() // 60))
    await seed_tank_population(app)
    today = time.strftime("%Y-%m-%d", time.gmtime())
    for _ in range(100):  # the live lookup's per-tank record is written in the background
        if await store.tanks.chain_on("eu", account, today):
            break
        await asyncio.sleep(0.1)

    problems = []
    for path, status, shown in examples:
        code, body = await get(path)
        if code != status:
            problems.append(f"{path}: {code}, the README shows {status}: {body}")
            continue
        problems += [f"{path}: {d}" for d in differences(shown, body)]
    assert not problems, "README example calls that do not answer what the README shows:\n" + "\n".join(problems)
