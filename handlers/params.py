"""Query-parameter parsing shared by handlers: strict, and every failure is a coded 400."""

from __future__ import annotations

from server.errors import APIError

MAX_DAYS = 400


def single_query_value(handler, name: str, code: str) -> str | None:
    """The one value of `name`, None when absent; a repeated parameter is ambiguous: 400."""
    values = handler.get_query_arguments(name, strip=False)
    if not values:
        return None
    if len(values) > 1:
        raise APIError(code, f"{name} must be given at most once")
    return values[0]


def days_argument(handler, default: int) -> int:
    text = single_query_value(handler, "days", "invalid_days")
    if text is None:
        return default
    if not text or len(text) > 3 or not text.isascii() or not text.isdigit() or not 1 <= int(text) <= MAX_DAYS:
        raise APIError("invalid_days", f"days must be an integer from 1 to {MAX_DAYS}")
    return int(text)
