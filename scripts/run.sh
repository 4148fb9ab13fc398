#!/usr/bin/env bash
# Runs statsapi on a fresh machine: .venv, the offline upstream simulator, the embedded
# database (SecantusDB child process, data in ./var), demo data on first start, then serves.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/setup_env.sh"
cd "$ROOT"
PORT="${STATSAPI_PORT:-8888}"
SIM_PORT="${STATSAPI_SIM_PORT:-9100}"
DATA_DIR="${STATSAPI_DATA_DIR:-$ROOT/var}"
mkdir -p "$DATA_DIR"
if [ -z "${STATSAPI_UPSTREAM_BASE_URL:-}" ]; then
  # No real upstream configured: serve the Wargaming API subset from the simulator. It enforces
  # a per-second quota like the real API; the demo's is 150/s (a real application_id has 10 or
  # 20) so that seeding ~15,000 upstream requests of 91 simulated days takes minutes, not an
  # hour: the service holds each request's slot until a second after its answer, and keeps a
  # fifth of the quota for live lookups, so the seeding's passes get about 100/s of it. The
  # service is told the same figure. STATSAPI_SIM_RPS=10 shows the service at a real standalone quota.
  # The demo's simulator has no per-address throttle (the real CDN's: EU 6, NA 8, ASIA 8 per
  # second; scripts/upstream_sim --strict), so each realm may use the whole demo quota.
  SIM_RPS="${STATSAPI_SIM_RPS:-150}"
  export STATSAPI_UPSTREAM_RPS="${STATSAPI_UPSTREAM_RPS:-$SIM_RPS}"
  export STATSAPI_UPSTREAM_REALM_RPS="${STATSAPI_UPSTREAM_REALM_RPS:-eu=$SIM_RPS,na=$SIM_RPS,asia=$SIM_RPS}"
  # --warm-published: today's wot/tanks/mastery distributions (5,000 players a realm) are computed
  # while the demo seeds, ready when its last step fetches them.
  "$ROOT/.venv/bin/python" -m scripts.upstream_sim --port "$SIM_PORT" --rps "$SIM_RPS" --warm-published \
      $( [ -f ../shared/data/wn8exp-2024-09-12.json ] && echo --expected-values ../shared/data/wn8exp-2024-09-12.json ) \
      > "$DATA_DIR/upstream_sim.log" 2>&1 &
  SIM_PID=$!
  trap 'kill $SIM_PID 2>/dev/null || true' EXIT
  export STATSAPI_UPSTREAM_BASE_URL="http://127.0.0.1:$SIM_PORT"
  # The demo's random panel: 600 active players a realm (production: 20,000), visited weekly over
  # the 15 days before today (about 3 requests a member): enough for tier X and the most played
  # tanks of tiers VI-IX to pass the 20-player minimum sample over 30 days; each member's first
  # visit writes its garage, the larger part of the seeding's database work (docs/data.md, "The
  # demo's data"). STATSAPI_PANEL_SIZE=0 seeds none.
  export STATSAPI_PANEL_SIZE="${STATSAPI_PANEL_SIZE:-600}"
fi
"$ROOT/.venv/bin/python" -m server --port "$PORT" --seed-demo "$@"
