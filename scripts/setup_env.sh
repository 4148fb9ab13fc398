#!/usr/bin/env bash
# Creates .venv and installs statsapi with its test extras (idempotent); sourced by run.sh and test.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
if [ ! -x "$ROOT/.venv/bin/python" ]; then
  "$PYTHON" -m venv "$ROOT/.venv"
fi
stamp="$ROOT/.venv/.installed-$(sha1sum "$ROOT/setup.py" | cut -c1-12)"
if [ ! -f "$stamp" ]; then
  "$ROOT/.venv/bin/pip" install -q --upgrade pip >/dev/null
  "$ROOT/.venv/bin/pip" install -q -e "$ROOT[test]"
  touch "$stamp"
fi
# The cards' font (server/serving/cards/fonts.py): Debian's fonts-dejavu-core, installed when missing.
bash "$ROOT/scripts/install_fonts.sh"
# The site's modules bundled into one file (scripts/build_site.sh: esbuild, pinned, under var/):
# rebuilt when a module changed. Without it the site loads its modules one by one, which works but
# arrives later on a slow link; tests/test_compression.py fails on a missing or stale bundle.
bash "$ROOT/scripts/build_site.sh" || echo "setup_env.sh: the site's bundle was not built" >&2
