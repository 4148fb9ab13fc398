#!/usr/bin/env bash
# Installs Lighthouse (the npm package, pinned) under var/lighthouse/ (git-ignored) for the site's
# Lighthouse test (scripts/install_browser.sh runs this; tests/test_lighthouse.py) and benchmark (scripts/bench_lighthouse.py); it
# drives Debian's Chromium (scripts/install_browser.sh), never a downloaded one. Idempotent: does
# nothing when the pinned version is there. Needs node and npm (Debian's nodejs and npm packages).
set -euo pipefail

VERSION=12.2.3
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PREFIX="$ROOT/var/lighthouse"
CLI="$PREFIX/node_modules/lighthouse/cli/index.js"

if [ -f "$CLI" ] && grep -q "\"version\": \"$VERSION\"" "$PREFIX/node_modules/lighthouse/package.json"; then
  exit 0
fi

if ! bash "$ROOT/scripts/ensure_npm.sh"; then
  echo "install_lighthouse.sh: npm is missing and cannot be installed here" >&2
  exit 1
fi

mkdir -p "$PREFIX"
echo "install_lighthouse.sh: installing lighthouse@$VERSION into $PREFIX" >&2
# PUPPETEER_SKIP_DOWNLOAD: Lighthouse's dev tooling must not fetch a browser of its own.
PUPPETEER_SKIP_DOWNLOAD=1 npm install --prefix "$PREFIX" --no-audit --no-fund --omit=dev "lighthouse@$VERSION" >&2
test -f "$CLI"
