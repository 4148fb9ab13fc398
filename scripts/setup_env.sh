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
