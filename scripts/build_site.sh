#!/usr/bin/env bash
# Bundles the site's modules (static/js/main.js and what it imports) into one minified file with
# esbuild (the npm package, pinned, under var/esbuild/): var/site/app.js and its source map. The
# page names the bundle while it was built from the modules as they are (handlers/site.py
# site_bundle); without it, or with modules changed since, the page loads the modules themselves.
# docs/architecture.md, "The site's files". Idempotent: rebuilds only when a module changed.
# Sourced steps never fail the caller: no npm here only means the unbundled site.
set -euo pipefail

VERSION=0.24.2
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PREFIX="$ROOT/var/esbuild"
ESBUILD="$PREFIX/node_modules/.bin/esbuild"
OUT="$ROOT/var/site"
# The sources' hash, as handlers/site.py computes it (the modules' names and bytes).
SOURCES="$(cd "$ROOT" && "$ROOT/.venv/bin/python" -c 'from handlers.site import modules_hash; print(modules_hash())')"

if [ -f "$OUT/app.js" ] && head -c 200 "$OUT/app.js" | grep -q "statsapi-bundle $SOURCES "; then
  exit 0
fi

if ! { [ -x "$ESBUILD" ] && "$ESBUILD" --version 2>/dev/null | grep -qx "$VERSION"; }; then
  if ! bash "$ROOT/scripts/ensure_npm.sh"; then
    echo "build_site.sh: npm is missing: the site serves its modules unbundled" >&2
    exit 0
  fi
  mkdir -p "$PREFIX"
  echo "build_site.sh: installing esbuild@$VERSION into $PREFIX" >&2
  npm install --prefix "$PREFIX" --no-audit --no-fund --omit=dev "esbuild@$VERSION" >&2
fi

mkdir -p "$OUT"
# The banner names the sources it was built from (site_bundle compares it with the modules').
"$ESBUILD" "$ROOT/static/js/main.js" --bundle --format=esm --minify --target=es2020 \
  --sourcemap=linked --legal-comments=none --log-level=warning \
  "--banner:js=/* statsapi-bundle $SOURCES (esbuild $VERSION) */" \
  --outfile="$OUT/app.js.tmp" >&2
sed -i 's#sourceMappingURL=app.js.tmp.map#sourceMappingURL=app.js.map#' "$OUT/app.js.tmp"
mv "$OUT/app.js.tmp.map" "$OUT/app.js.map"
mv "$OUT/app.js.tmp" "$OUT/app.js"
