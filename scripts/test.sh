#!/usr/bin/env bash
# Runs every test on a fresh machine: sets up .venv (and Chromium for browser tests), then pytest.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/setup_env.sh"
if [ -f "$ROOT/scripts/install_browser.sh" ]; then
  bash "$ROOT/scripts/install_browser.sh"
fi
cd "$ROOT"
# The habits that keep the codebase easy to change (pyproject.toml): lint, format, layers, types.
"$ROOT/.venv/bin/ruff" check .
"$ROOT/.venv/bin/ruff" format --check .
"$ROOT/.venv/bin/lint-imports"
"$ROOT/.venv/bin/mypy"
# --durations: the slowest tests are named in every run (the whole command must stay under 20 minutes).
# Two phases (docs/architecture.md, "Running the tests"): 1. every test but those marked `timing`
# (tests/conftest.py TIMING: elapsed bounds, timing ratios, rate windows, deadlines) in
# STATSAPI_TEST_WORKERS pytest-xdist workers (default 3: many tests wait), whole files to each, each with its own
# database and simulators; 2. the `timing` tests in this one process, with nothing else running.
# STATSAPI_TEST_WORKERS=0 runs everything in this one process (about 29 minutes), as does a run
# given its own -m. Arguments go to both phases: a file named runs whatever its tests' mark.
WORKERS="${STATSAPI_TEST_WORKERS:-3}"
PYTEST=("$ROOT/.venv/bin/python" -m pytest -q -p no:cacheprovider --durations=30)
own_mark=0
for arg in "$@"; do
  case "$arg" in -m | -m?*) own_mark=1 ;; esac
done

# pytest exits 5 when no test was collected (a filter matched nothing, or none of a phase's): not a failure.
phase() {
  local name="$1" started=$SECONDS status
  shift
  echo "== $name"
  "${PYTEST[@]}" "$@"
  status=$?
  if [ "$status" -eq 5 ]; then status=0; fi
  echo "== $name: exit $status in $((SECONDS - started)) s"
  return "$status"
}

set +e
if [ "$WORKERS" = 0 ] || [ "$own_mark" = 1 ]; then
  phase "tests (STATSAPI_TEST_WORKERS=$WORKERS)" -n "$WORKERS" --dist loadfile "$@"
  exit $?
fi
phase "phase 1: all but the timing tests, $WORKERS workers" -n "$WORKERS" --dist loadfile --no-loadscope-reorder \
  -m "not timing" "$@"
first=$?
phase "phase 2: the timing tests, one process" -m timing "$@"
second=$?
set -e
if [ "$first" -ne 0 ]; then exit "$first"; fi
exit "$second"
