#!/usr/bin/env bash
# Makes sure npm (and Node.js) are here for the pinned npm tools (install_lighthouse.sh,
# build_site.sh): Debian's nodejs and npm, installed when missing and run as root. Exits 1 when
# npm is missing and cannot be installed; the caller says what that costs.
set -euo pipefail
if command -v npm >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nodejs npm
  exit 0
fi
exit 1
