"""The colour bands of the ratings (WN8, WTR, win rate, efficiency): one scale table, served in the
index, so a mod, a bot and the site paint the same colours (docs/data.md, "Colour bands")."""

from __future__ import annotations

from server.contract.catalogue.figures import WN8_COLOURS, WN8_TOP_COLOUR

# The band labels from worst to best, each with its colour (the palette of the WN8 scale the stats
# sites share; a scale with fewer bands uses some of the labels).
BAND_COLOURS: dict[str, str] = {
    "very_bad": "#930D0D",
    "bad": "#CD3333",
    "below_average": "#CC7A00",
    "average": "#CCB800",
    "above_average": "#849B24",
    "good": "#4D7326",
    "very_good": "#4099BF",
    "great": "#3972C6",
    "unicum": "#793DB6",
    "super_unicum": "#401070",
}

# Each rating's scale: (upper bound, exclusive, label) from the lowest band up, then the label of
# everything at or above the last bound. WN8: the scale of the stats sites (profile.wn8_color);
# win rate (percent): the same ten bands at the win rates those sites use; efficiency: XVM's
# default scale; WTR: XVM's default scale for Wargaming's own rating.
RATING_SCALES: dict[str, tuple[tuple[tuple[float, str], ...], str]] = {
    "wn8": (WN8_COLOURS, WN8_TOP_COLOUR),
    "win_rate": (
        (
            (46, "very_bad"),
            (47, "bad"),
            (48, "below_average"),
            (50, "average"),
            (52, "above_average"),
            (54, "good"),
            (56, "very_good"),
            (60, "great"),
            (65, "unicum"),
        ),
        "super_unicum",
    ),
    "efficiency": (
        ((615, "very_bad"), (870, "bad"), (1175, "average"), (1525, "good"), (1850, "very_good")),
        "unicum",
    ),
    "wtr": (
        ((2020, "very_bad"), (4185, "bad"), (6340, "average"), (8525, "good"), (9930, "very_good")),
        "unicum",
    ),
}
BANDED_RATINGS = tuple(RATING_SCALES)
BAND_SOURCES = {
    "wn8": "the WN8 scale of the stats sites (wotlabs, XVM's WN8 colours)",
    "win_rate": "the stats sites' win-rate bands, in percent",
    "efficiency": "XVM's default efficiency scale",
    "wtr": "XVM's default scale for Wargaming's rating",
}


def band_of(rating: str, value: float | None) -> dict[str, str] | None:
    """{band, color} of `value` on `rating`'s scale; None for None."""
    if value is None:
        return None
    bounds, top = RATING_SCALES[rating]
    label = next((name for upper, name in bounds if value < upper), top)
    return {"band": label, "color": BAND_COLOURS[label]}


def scale_table() -> dict[str, dict]:
    """The table the index serves: per rating its bands from the lowest up, each {band, color, from,
    below} (from: inclusive lower bound, null for the lowest; below: exclusive upper, null for the top)."""
    out: dict[str, dict] = {}
    for rating, (bounds, top) in RATING_SCALES.items():
        bands, lower = [], None
        for upper, label in (*bounds, (None, top)):
            bands.append({"band": label, "color": BAND_COLOURS[label], "from": lower, "below": upper})
            lower = upper
        out[rating] = {"source": BAND_SOURCES[rating], "bands": bands}
    return out
