"""The documents are tested like code: every module they name exists, every option and error code is documented."""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

from server.api import config as config_module
from server.api.errors import ERROR_CODES

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
DEPLOY = (ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")

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
    """The command-line flags and STATSAPI_* variables server/api/config.py reads."""
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


@pytest.mark.parametrize("code", sorted(ERROR_CODES))
def test_every_error_code_is_in_the_readme(code):
    errors = _section(README, "## Contract details decided here")
    assert f"`{code}`" in errors, f"README's contract details do not list the error code {code}"
