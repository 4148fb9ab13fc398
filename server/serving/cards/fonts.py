"""The cards' font: DejaVu Sans (Bitstream Vera licence, free to embed and redistribute), as Debian's
fonts-dejavu-core installs it (scripts/install_fonts.sh), measured for the layout and loaded for the PNG."""

from __future__ import annotations

import functools
import os

from PIL import ImageFont

FONT_DIRS = ("/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/dejavu", "/usr/local/share/fonts")
FONT_FILES = {False: "DejaVuSans.ttf", True: "DejaVuSans-Bold.ttf"}
# What the SVG asks a viewer for: the same font where it is installed, else the nearest of its family.
SVG_FONT_FAMILY = "'DejaVu Sans', 'Bitstream Vera Sans', Verdana, Geneva, sans-serif"
# Widths are measured at this size and scaled (a text's width is linear in its size). A FreeType face
# is not to be shared between threads: the layout measures on the loop at this size, the PNG worker
# draws at the cards' sizes, all below it, so no face object is used by both.
MEASURE_SIZE = 100

FontType = ImageFont.FreeTypeFont | ImageFont.ImageFont


@functools.cache
def font_path(bold: bool) -> str | None:
    """The font file, or None when none of FONT_DIRS holds it."""
    for folder in FONT_DIRS:
        path = os.path.join(folder, FONT_FILES[bold])
        if os.path.isfile(path):
            return path
    return None


@functools.lru_cache(maxsize=256)
def font(size: int, bold: bool) -> FontType:
    """The font at a size (in pixels); Pillow's own scalable font when DejaVu is missing."""
    path = font_path(bold)
    if path is None:
        return ImageFont.load_default(size)
    return ImageFont.truetype(path, size)


@functools.lru_cache(maxsize=4096)
def _width_at_measure_size(text: str, bold: bool) -> float:
    return float(font(MEASURE_SIZE, bold).getlength(text))


def text_width(text: str, size: float, bold: bool) -> float:
    """The width in pixels of `text` at `size`."""
    return _width_at_measure_size(text, bold) * size / MEASURE_SIZE
