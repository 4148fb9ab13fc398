"""What a card shows and where: an answer's figures laid out as boxes, texts and pictures (no I/O).

The SVG and the PNG are drawn from the same Drawing (server/serving/cards/svg.py, png.py), so the two
formats of a card carry the same texts at the same places. Every figure is printed as the JSON answer
writes it (`figure_text`), a null as an em dash: a card shows nothing the JSON lacks.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

import ujson

from server.contract.catalogue.figures import WN8_COLOURS, WN8_TOP_COLOUR
from server.contract.catalogue.model import CARD_SIZES
from server.serving.cards.fonts import text_width

NULL_TEXT = "—"
# Control characters and lone surrogates (a name from the upstream may hold any): neither format can
# print them, and XML 1.0 forbids them.
UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff\ud800-\udfff]")


@dataclasses.dataclass(frozen=True, slots=True)
class Box:
    x: float
    y: float
    w: float
    h: float
    radius: float
    fill: str  # "#rrggbb"
    opacity: float = 1.0


@dataclasses.dataclass(frozen=True, slots=True)
class Text:
    x: float
    y: float  # the baseline
    text: str
    size: float
    bold: bool
    fill: str
    anchor: str = "start"  # start, middle or end (SVG's text-anchor)
    field: str | None = None  # the JSON field it prints (dotted), for the reader and the tests
    unit: str = ""  # printed after the text (" %")


@dataclasses.dataclass(frozen=True, slots=True)
class Picture:
    """An image by its URL (Wargaming's): the SVG references it, the PNG does without."""

    x: float
    y: float
    w: float
    h: float
    href: str


@dataclasses.dataclass(frozen=True, slots=True)
class Drawing:
    width: int
    height: int
    transparent: bool  # the canvas outside the boxes is transparent (a banner over a stream or a page)
    label: str  # what the image is, in words (the SVG's title)
    items: tuple[Box | Text | Picture, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class Theme:
    background: str
    panel: str
    text: str
    muted: str
    accent: str
    on_accent: str


THEMES = {
    "dark": Theme("#111820", "#1b2430", "#eef2f7", "#9aa8b8", "#2f6fb0", "#ffffff"),
    "light": Theme("#f3f5f8", "#ffffff", "#1c2430", "#566273", "#245f9e", "#ffffff"),
}
# The site's WN8 scale (static/style.css .wn8-<label>), by the API's wn8_color labels; the text on it.
WN8_FILLS = {
    "very_bad": "#930d0d",
    "bad": "#cd3333",
    "below_average": "#cc7a00",
    "average": "#ccb800",
    "above_average": "#849b24",
    "good": "#4d7326",
    "very_good": "#4099bf",
    "great": "#3972c6",
    "unicum": "#793db6",
    "super_unicum": "#401070",
}
DARK_ON = {"average"}  # labels whose fill needs dark text


def wn8_label(value: float | None) -> str | None:
    """The WN8 scale's label of a value (as ratings.wn8_color gives it for a profile)."""
    if value is None:
        return None
    for bound, label in WN8_COLOURS:
        if value < bound:
            return label
    return WN8_TOP_COLOUR


def figure_text(value: Any) -> str:
    """A figure as the JSON answer writes it; null as an em dash."""
    if value is None or isinstance(value, bool):
        return NULL_TEXT
    if isinstance(value, (int, float)):
        return ujson.dumps(value)
    return str(value)


def utc_text(unix: Any) -> str:
    """A unix time of the answer as the card prints it: 2026-12-02 07:40 UTC."""
    if not isinstance(unix, (int, float)) or isinstance(unix, bool):
        return NULL_TEXT
    return dt.datetime.fromtimestamp(unix, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def pick(data: Mapping[str, Any], path: str) -> Any:
    """data's value at a dotted path, None where any step is missing or null."""
    value: Any = data
    for key in path.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


@dataclasses.dataclass(frozen=True, slots=True)
class Figure:
    label: str
    field: str
    unit: str = ""
    banner: bool = True  # also on the banner (which has room for four)


@dataclasses.dataclass(frozen=True, slots=True)
class Content:
    """A card's content, every text taken from the answer."""

    kicker: str  # what and where: "PLAYER · EU"
    title: str
    title_field: str | None
    subtitle: str
    subtitle_field: str | None
    headline: Figure
    headline_fill: str | None  # None: the theme's accent
    headline_dark_text: bool
    figures: tuple[Figure, ...]
    time_field: str  # the answer's time, printed in the footer
    time_label: str
    picture: str | None = None  # an icon's URL (SVG only)


def _wn8_headline(value: Any, label: Any) -> tuple[str | None, bool]:
    name = label if isinstance(label, str) and label in WN8_FILLS else wn8_label(value)
    return (WN8_FILLS[name], name in DARK_ON) if name is not None else (None, False)


def _region(data: Mapping[str, Any]) -> str:
    return str(data.get("region") or "").upper()


def player_content(data: Mapping[str, Any]) -> Content:
    nickname = data.get("nickname")
    fill, dark = _wn8_headline(pick(data, "ratings.wn8"), pick(data, "ratings.wn8_color"))
    return Content(
        kicker=f"PLAYER · {_region(data)}",
        title=nickname if isinstance(nickname, str) and nickname else f"Account {data.get('account_id')}",
        title_field="nickname" if nickname else "account_id",
        subtitle=f"Account {data.get('account_id')}",
        subtitle_field="account_id",
        headline=Figure("WN8", "ratings.wn8"),
        headline_fill=fill,
        headline_dark_text=dark,
        figures=(
            Figure("Win rate", "statistics.win_rate", " %"),
            Figure("Battles", "statistics.battles"),
            Figure("WTR", "ratings.wtr"),
            Figure("Avg damage", "statistics.avg_damage"),
        ),
        time_field="cached_at",
        time_label="as of",
    )


def session_content(data: Mapping[str, Any]) -> Content:
    fill, dark = _wn8_headline(data.get("wn8"), None)
    return Content(
        kicker=f"SESSION · {_region(data)}",
        title=f"Account {data.get('account_id')}",
        title_field="account_id",
        subtitle=f"Since {utc_text(data.get('since'))}",
        subtitle_field="since",
        headline=Figure("WN8", "wn8"),
        headline_fill=fill,
        headline_dark_text=dark,
        figures=(
            Figure("Battles", "battles"),
            Figure("Win rate", "win_rate", " %"),
            Figure("Avg damage", "avg_damage"),
            Figure("Avg frags", "avg_frags"),
        ),
        time_field="as_of",
        time_label="as of",
    )


def clan_content(data: Mapping[str, Any]) -> Content:
    tag, name = data.get("tag"), data.get("name")
    return Content(
        kicker=f"CLAN · {_region(data)}",
        title=f"[{tag}]" if tag else f"Clan {data.get('clan_id')}",
        title_field="tag" if tag else "clan_id",
        subtitle=name if isinstance(name, str) and name else f"Clan {data.get('clan_id')}",
        subtitle_field="name" if name else "clan_id",
        headline=Figure("Members' win rate", "members.avg_win_rate", " %"),
        headline_fill=None,
        headline_dark_text=False,
        figures=(
            Figure("Members", "members_count"),
            Figure("Avg damage", "members.avg_damage"),
            Figure("Avg battles", "members.avg_battles"),
            Figure("Elo X", "ratings.elo_10"),
        ),
        time_field="cached_at",
        time_label="as of",
    )


def tank_content(data: Mapping[str, Any]) -> Content:
    name = data.get("name")
    kinds = [f"Tier {data['tier']}" if data.get("tier") else None, data.get("type"), data.get("nation")]
    icon = pick(data, "images.big_icon")
    return Content(
        kicker=f"TANK · {_region(data)} · {data.get('days')} DAYS",
        title=name if isinstance(name, str) and name else f"Tank {data.get('tank_id')}",
        title_field="name" if name else "tank_id",
        subtitle=" · ".join(str(k) for k in kinds if k) or NULL_TEXT,
        subtitle_field=None,
        headline=Figure("Win rate", "win_rate", " %"),
        headline_fill=None,
        headline_dark_text=False,
        figures=(
            Figure("Avg damage", "avg_damage"),
            Figure("Players", "players", banner=False),
            Figure("Battles", "battles", banner=False),
            Figure("1 mark", "marks.marks.first"),
            Figure("2 marks", "marks.marks.second"),
            Figure("3 marks", "marks.marks.third"),
        ),
        time_field="built_at",
        time_label="built",
        picture=icon if isinstance(icon, str) and icon.startswith(("https://", "http://")) else None,
    )


# The card of each kind an endpoint names (Endpoint.card).
CONTENTS: dict[str, Callable[[Mapping[str, Any]], Content]] = {
    "player": player_content,
    "session": session_content,
    "clan": clan_content,
    "tank": tank_content,
}


def fit(text: str, size: float, bold: bool, width: float, smallest: float) -> tuple[str, int]:
    """`text` at the largest size from `size` down to `smallest` that fits `width`, shortened with an
    ellipsis when even `smallest` does not. Sizes are whole pixels (the PNG's fonts are loaded per size)."""
    size, smallest = math.floor(size), math.floor(smallest)
    text = UNPRINTABLE.sub("", text)
    if text_width(text, size, bold) <= width:
        return text, size
    size = max(smallest, math.floor(size * width / text_width(text, size, bold)))
    while size > smallest and text_width(text, size, bold) > width:
        size -= 1
    if text_width(text, size, bold) <= width:
        return text, size
    while len(text) > 1 and text_width(text + "…", size, bold) > width:
        text = text[:-1]
    return text + "…", size


def value_text(
    figure: Figure, data: Mapping[str, Any], size: float, width: float, smallest: float
) -> tuple[str, int, str]:
    """A figure's value and unit at the largest size from `size` that fits `width`: (text, size, unit).
    A value too long for `width` at `smallest` loses its unit, then shrinks further; a number is never cut."""
    value = figure_text(pick(data, figure.field))
    unit = figure.unit if value != NULL_TEXT else ""
    shown, fitted = fit(value + unit, size, True, width, smallest)
    if shown == value + unit:
        return value, fitted, unit
    return value, fit(value, size, True, width, 1)[1], ""


def _figure_items(
    figure: Figure, data: Mapping[str, Any], x: float, y: float, w: float, scale: float, theme: Theme
) -> list[Box | Text | Picture]:
    """A figure's label above its value, left-aligned at x; y is the label's baseline."""
    shown, size, unit = value_text(figure, data, 56 * scale, w, 24 * scale)
    label, label_size = fit(figure.label, 24 * scale, False, w, 14 * scale)
    return [
        Text(x, y, label, label_size, False, theme.muted),
        Text(x, y + 64 * scale, shown, size, True, theme.text, field=figure.field, unit=unit),
    ]


def large(content: Content, data: Mapping[str, Any], theme: Theme) -> Drawing:
    """1200×630, opaque: a link preview's."""
    width, height = CARD_SIZES["large"]
    pad = 56
    items: list[Box | Text | Picture] = [Box(0, 0, width, height, 0, theme.background)]
    items.append(Text(pad, 96, content.kicker, 26, True, theme.muted))
    title_width = 700 - (240 if content.picture else 0)
    title, size = fit(content.title, 64, True, title_width, 36)
    items.append(Text(pad, 172, title, size, True, theme.text, field=content.title_field))
    subtitle, size = fit(content.subtitle, 30, False, 700, 20)
    items.append(Text(pad, 222, subtitle, size, False, theme.muted, field=content.subtitle_field))
    if content.picture:
        items.append(Picture(540, 70, 224, 140, content.picture))
    # The headline figure, in its colour (WN8's scale, or the accent).
    hx, hy, hw, hh = 800, 56, 344, 200
    fill = content.headline_fill or theme.accent
    on = "#1c2430" if content.headline_dark_text else theme.on_accent
    items.append(Box(hx, hy, hw, hh, 24, fill))
    label, size = fit(content.headline.label, 28, False, hw - 40, 18)
    items.append(Text(hx + hw / 2, hy + 58, label, size, False, on, "middle"))
    shown, size, unit = value_text(content.headline, data, 84, hw - 40, 40)
    items.append(Text(hx + hw / 2, hy + 160, shown, size, True, on, "middle", content.headline.field, unit))
    # The figures in tiles: one row of up to four, else rows of three.
    figures = content.figures
    per_row = len(figures) if len(figures) <= 4 else 3
    rows = [figures[i : i + per_row] for i in range(0, len(figures), per_row)]
    gap = 24
    top, bottom = 290, 556
    tile_h = (bottom - top - gap * (len(rows) - 1)) / len(rows)
    scale = 1.0 if len(rows) == 1 else 0.82
    tile_w = (width - 2 * pad - gap * (per_row - 1)) / per_row
    for r, row in enumerate(rows):
        y = top + r * (tile_h + gap)
        for c, figure in enumerate(row):
            x = pad + c * (tile_w + gap)
            items.append(Box(x, y, tile_w, tile_h, 18, theme.panel))
            label_y = y + tile_h / 2 - 16 * scale
            items += _figure_items(figure, data, x + 28, label_y, tile_w - 56, scale, theme)
    items.append(Text(pad, 604, "statsapi", 22, True, theme.muted))
    when = f"{content.time_label} {utc_text(pick(data, content.time_field))}"
    items.append(Text(width - pad, 604, when, 22, False, theme.muted, "end", content.time_field))
    return Drawing(width, height, False, _label(content, data), tuple(items))


def banner(content: Content, data: Mapping[str, Any], theme: Theme) -> Drawing:
    """600×160 on a transparent canvas: a panel for forum signatures and stream corners."""
    width, height = CARD_SIZES["banner"]
    items: list[Box | Text | Picture] = [Box(2, 2, width - 4, height - 4, 16, theme.background, 0.92)]
    items.append(Text(22, 30, content.kicker, 13, True, theme.muted))
    title, size = fit(content.title, 26, True, 380, 16)
    items.append(Text(22, 62, title, size, True, theme.text, field=content.title_field))
    hx, hy, hw, hh = 436, 14, 146, 64
    fill = content.headline_fill or theme.accent
    on = "#1c2430" if content.headline_dark_text else theme.on_accent
    items.append(Box(hx, hy, hw, hh, 10, fill))
    label, size = fit(content.headline.label, 13, False, hw - 16, 10)
    items.append(Text(hx + hw / 2, hy + 21, label, size, False, on, "middle"))
    shown, size, unit = value_text(content.headline, data, 28, hw - 16, 14)
    items.append(Text(hx + hw / 2, hy + 53, shown, size, True, on, "middle", content.headline.field, unit))
    figures = [figure for figure in content.figures if figure.banner][:4]
    column = (width - 44) / max(1, len(figures))
    for i, figure in enumerate(figures):
        x = 22 + i * column
        shown, size, unit = value_text(figure, data, 22, column - 12, 12)
        items.append(Text(x, 110, figure.label, 13, False, theme.muted))
        items.append(Text(x, 138, shown, size, True, theme.text, field=figure.field, unit=unit))
    return Drawing(width, height, True, _label(content, data), tuple(items))


def _label(content: Content, data: Mapping[str, Any]) -> str:
    value = figure_text(pick(data, content.headline.field))
    return f"{content.kicker}: {content.title}, {content.headline.label} {value}"


SIZES: dict[str, Callable[[Content, Mapping[str, Any], Theme], Drawing]] = {"large": large, "banner": banner}


def drawing(kind: str, data: Mapping[str, Any], size: str, theme: str) -> Drawing:
    """The card of `kind` for an answer's `data`, at a size of CARD_SIZES in a theme of THEMES."""
    return SIZES[size](CONTENTS[kind](data), data, THEMES[theme])


def summary(kind: str, data: Mapping[str, Any]) -> tuple[str, str]:
    """The card in words, for a page's head: its title ("Tanker · PLAYER · EU") and its figures
    ("WN8 1876.54 · Win rate 52.31 % · Battles 12345 · ...")."""
    content = CONTENTS[kind](data)
    words = []
    for figure in (content.headline, *content.figures):
        value = figure_text(pick(data, figure.field))
        words.append(f"{figure.label} {value}{figure.unit if value != NULL_TEXT else ''}")
    what, *where = content.kicker.split(" · ")  # "TANK", "EU", "30 DAYS"
    kicker = " · ".join([what.capitalize(), *(part.replace("DAYS", "days") for part in where)])
    return f"{content.title} · {kicker}", " · ".join(words)


# The names a card prints above its figures.
NAME_FIELDS = {
    "player": ("nickname", "account_id", "region"),
    "session": ("account_id", "region", "since"),
    "clan": ("tag", "name", "region"),
    "tank": ("name", "tier", "type", "nation", "region", "days"),
}


def _figures_in_words(kind: str) -> str:
    content = CONTENTS[kind]({})
    names = [*NAME_FIELDS[kind], content.headline.field, *(figure.field for figure in content.figures)]
    on_banner = [content.headline.field, *(figure.field for figure in content.figures if figure.banner)][:5]
    return (
        "It prints "
        + ", ".join(f"`{name}`" for name in names)
        + f" and `{content.time_field}` (a null as —); the banner the name and "
        + ", ".join(f"`{name}`" for name in on_banner)
        + "."
    )


# What each kind of card prints, for the index, the OpenAPI document and docs/api.md.
CARD_FIGURES = {kind: _figures_in_words(kind) for kind in CONTENTS}
