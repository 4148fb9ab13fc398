"""A ratio estimator's error over a simple random sample of players (battles of one player counted
together): its standard error from per-player sums, and the 95 % interval stated beside a figure."""

from __future__ import annotations

import math

__all__ = ["Z95", "interval", "ratio_se"]

Z95 = 1.959964  # the normal quantile of a two-sided 95 % interval


def ratio_se(n: int, x: float, y: float, xx: float, xy: float, yy: float) -> float:
    """The standard error of r = sum(y) / sum(x) with one (x, y) per player, players independent:
    sqrt(n / (n - 1) * sum((y - r x)^2)) / sum(x), from n, sum(x), sum(y), sum(x^2), sum(x y) and
    sum(y^2) (the residual's square expanded, so the sums can be stored and combined); -1 when it
    cannot be told (fewer than two players, or no x)."""
    if n < 2 or x <= 0:
        return -1.0
    r = y / x
    residual = max(0.0, yy - 2 * r * xy + r * r * xx)
    return math.sqrt(n / (n - 1) * residual) / x


def interval(value: float, se: float, scale: float = 1.0, digits: int = 2) -> dict[str, float] | None:
    """{low, high}: value -/+ Z95 x se x scale (scale: the figure's unit per unit of the ratio, e.g.
    100 for a rate in percent), rounded as the figure; None when the error is unknown (se < 0)."""
    if se < 0:
        return None
    half = Z95 * se * scale
    return {"low": round(value - half, digits), "high": round(value + half, digits)}
