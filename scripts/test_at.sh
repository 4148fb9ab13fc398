#!/usr/bin/env bash
# Runs pytest as if it were the next HH:MM UTC: every Python process's clock moved forward
# (scripts/clock_shift), so a test that depends on the time of day fails on demand, not only when
# CI happens to run at that hour. Usage: scripts/test_at.sh HH:MM [pytest arguments]
#   scripts/test_at.sh 16:24 tests/test_marks.py -k demo
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ $# -lt 1 || ! "$1" =~ ^([01][0-9]|2[0-3]):[0-5][0-9]$ ]]; then
  echo "usage: scripts/test_at.sh HH:MM [pytest arguments]" >&2
  exit 2
fi
at="$1"
shift
shift_seconds=$("$ROOT/.venv/bin/python" - "$at" <<'PY'
import sys, time
hours, minutes = map(int, sys.argv[1].split(":"))
now = time.time()
target = now - now % 86400 + hours * 3600 + minutes * 60
print(round(target + 86400 - now if target <= now else target - now, 3))  # forward only
PY
)
echo "test_at: clocks moved forward ${shift_seconds} s, to $(date -u -d "@$(( $(date +%s) + ${shift_seconds%.*} ))" '+%Y-%m-%d %H:%M:%S') UTC"
cd "$ROOT"
STATSAPI_CLOCK_SHIFT="$shift_seconds" PYTHONPATH="$ROOT/scripts/clock_shift${PYTHONPATH:+:$PYTHONPATH}" \
  exec "$ROOT/.venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
