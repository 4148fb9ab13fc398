#!/usr/bin/env bash
# Installs Debian's Chromium for the browser tests (tests/test_site_browser.py) if it is missing,
# then the pinned Lighthouse that drives it (scripts/install_lighthouse.sh, tests/test_lighthouse.py).
# Idempotent: installs nothing that is there. Needs root (or passwordless sudo)
# and apt-get; when it cannot install it fails, so the test command never passes without the browser tests.
set -euo pipefail

CHROMIUM=/usr/bin/chromium

LIGHTHOUSE="$(dirname "$0")/install_lighthouse.sh"

if [ -x "$CHROMIUM" ]; then
  exec bash "$LIGHTHOUSE"
fi

if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  SUDO="sudo -n"
else
  echo "install_browser.sh: $CHROMIUM is missing and we are not root; browser tests cannot run" >&2
  exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install_browser.sh: no apt-get on this machine; install Chromium at $CHROMIUM by hand" >&2
  exit 1
fi

echo "install_browser.sh: installing Debian's chromium package" >&2
if ! { $SUDO apt-get update && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium; }; then
  echo "install_browser.sh: installing chromium failed; browser tests cannot run" >&2
  exit 1
fi

if [ ! -x "$CHROMIUM" ]; then
  echo "install_browser.sh: the chromium package is installed but $CHROMIUM is absent" >&2
  exit 1
fi
"$CHROMIUM" --version >&2 2>/dev/null || true
bash "$LIGHTHOUSE"
