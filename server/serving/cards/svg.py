"""A card as SVG: the Drawing written into a template, every text and attribute escaped."""

from __future__ import annotations

import re
import string

from server.serving.cards.fonts import SVG_FONT_FAMILY
from server.serving.cards.layout import Box, Drawing, Picture, Text

SVG_MEDIA_TYPE = "image/svg+xml"
# Characters XML 1.0 forbids (a name from the upstream may hold any): dropped before escaping.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"})

DOCUMENT = string.Template(
    '<svg xmlns="http://www.w3.org/2000/svg" width="$width" height="$height" viewBox="0 0 $width $height" '
    'role="img" aria-label="$label">'
    "<title>$label</title>"
    "<style>text{font-family:$family;white-space:pre}</style>"
    "$items</svg>"
)
BOX = string.Template('<rect x="$x" y="$y" width="$w" height="$h" rx="$r" fill="$fill"$opacity/>')
TEXT = string.Template('<text x="$x" y="$y" font-size="$size"$weight fill="$fill"$anchor$field>$text$unit</text>')
PICTURE = string.Template(
    '<image href="$href" x="$x" y="$y" width="$w" height="$h" preserveAspectRatio="xMidYMid meet"/>'
)


def escape(text: str) -> str:
    """Text safe as XML character data and inside a double-quoted attribute."""
    return _NOT_XML.sub("", text).translate(_ESCAPES)


def _n(value: float) -> str:
    return f"{value:g}"


def _item(item: Box | Text | Picture) -> str:
    if isinstance(item, Box):
        opacity = f' fill-opacity="{_n(item.opacity)}"' if item.opacity != 1 else ""
        return BOX.substitute(
            x=_n(item.x), y=_n(item.y), w=_n(item.w), h=_n(item.h), r=_n(item.radius), fill=item.fill, opacity=opacity
        )
    if isinstance(item, Text):
        return TEXT.substitute(
            x=_n(item.x),
            y=_n(item.y),
            size=_n(item.size),
            weight=' font-weight="bold"' if item.bold else "",
            fill=item.fill,
            anchor=f' text-anchor="{item.anchor}"' if item.anchor != "start" else "",
            field=f' data-field="{escape(item.field)}"' if item.field else "",
            text=escape(item.text),
            unit=f"<tspan>{escape(item.unit)}</tspan>" if item.unit else "",
        )
    return PICTURE.substitute(href=escape(item.href), x=_n(item.x), y=_n(item.y), w=_n(item.w), h=_n(item.h))


def render_svg(drawing: Drawing) -> bytes:
    return DOCUMENT.substitute(
        width=drawing.width,
        height=drawing.height,
        label=escape(drawing.label),
        family=SVG_FONT_FAMILY,
        items="".join(_item(item) for item in drawing.items),
    ).encode()
