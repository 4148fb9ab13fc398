"""A card as PNG, drawn by Pillow from the Drawing (pictures left out: a PNG does without Wargaming's icons)."""

from __future__ import annotations

import io

from PIL import Image, ImageDraw

from server.serving.cards.fonts import font
from server.serving.cards.layout import Box, Drawing, Picture, Text

PNG_MEDIA_TYPE = "image/png"
# zlib's level: 1 draws a card in about 85 % of level 6's time, a fifth larger (docs/benchmarks.md, "Cards").
COMPRESS_LEVEL = 1
_ANCHORS = {"start": "ls", "middle": "ms", "end": "rs"}  # Pillow's: left/middle/right, on the baseline


def _ink(colour: str, opacity: float, alpha: bool) -> tuple[int, ...]:
    rgb = (int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16))
    return (*rgb, round(255 * opacity)) if alpha else rgb


def render_png(drawing: Drawing) -> bytes:
    # An opaque card is drawn in RGB from the start (no conversion, a third less to compress).
    alpha = drawing.transparent
    image = Image.new("RGBA" if alpha else "RGB", (drawing.width, drawing.height), (0, 0, 0, 0) if alpha else 0)
    draw = ImageDraw.Draw(image)
    for item in drawing.items:
        if isinstance(item, Box):
            box = (item.x, item.y, item.x + item.w - 1, item.y + item.h - 1)
            draw.rounded_rectangle(box, radius=item.radius, fill=_ink(item.fill, item.opacity, alpha))
        elif isinstance(item, Text):
            face = font(int(item.size), item.bold)
            draw.text(
                (item.x, item.y),
                item.text + item.unit,
                font=face,
                fill=_ink(item.fill, 1.0, alpha),
                anchor=_ANCHORS[item.anchor],
            )
        elif isinstance(item, Picture):
            continue
    out = io.BytesIO()
    image.save(out, "PNG", compress_level=COMPRESS_LEVEL)
    return out.getvalue()
