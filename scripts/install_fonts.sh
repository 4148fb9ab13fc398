#!/usr/bin/env bash
# Installs the cards' font, DejaVu Sans (Debian's fonts-dejavu-core; Bitstream Vera licence, free to
# use, embed and redistribute), if it is missing. Idempotent: does nothing when the font is there.
# Without root or apt-get it warns and goes on: the PNG cards then use Pillow's own font.
set -euo pipefail

FONT=/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf

if [ -f "$FONT" ]; then
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  SUDO="sudo -n"
else
  echo "install_fonts.sh: $FONT is missing and we are not root; PNG cards fall back to Pillow's font" >&2
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install_fonts.sh: no apt-get on this machine; install DejaVu Sans at $FONT by hand" >&2
  exit 0
fi

echo "install_fonts.sh: installing Debian's fonts-dejavu-core package" >&2
if ! { $SUDO apt-get update && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends fonts-dejavu-core; }; then
  echo "install_fonts.sh: installing fonts-dejavu-core failed; PNG cards fall back to Pillow's font" >&2
fi
