"""The API index at /api/v1: every endpoint, its parameters, limits and every error code."""

from __future__ import annotations

from typing import Any

from handlers.base import BaseHandler, api_routes
from server.contract.catalogue import (
    API_DESCRIPTION,
    CATALOGUE,
    INDEX,
    LIVE_GLOBAL,
    LIVE_PER_CLIENT,
    OPENAPI,
    PREFIX,
    Endpoint,
)
from server.contract.catalogue.bands import scale_table
from server.contract.catalogue.model import CARD_SIZES, CARD_THEMES
from server.contract.config import API_VERSION, VERSION, Config
from server.contract.csv_answers import CSV_MEDIA_TYPE
from server.contract.errors import ALLOWED_METHODS, ERROR_CODES, RATE_HEADERS, RETRY_AFTER_SENT
from server.serving import cards
from server.serving.answers import INDEX_TAG
from server.serving.cards.layout import CARD_FIGURES
from server.serving.ratelimit import WINDOW_SECONDS, scaled_limit
from store.constants import GAMES, REGIONS


def index_entry(endpoint: Endpoint, scale: float) -> dict:
    """One endpoint as the index lists it (its limit scaled as the rate limiter scales it)."""
    entry = {
        "method": "GET",
        "name": endpoint.name,
        "path": endpoint.full_path,
        "cache_max_age": endpoint.cache_max_age,
        "answer_seconds": endpoint.answer_seconds,
        "parameters": [param.index_entry() for param in endpoint.params],
        "description": endpoint.description,
        "example": PREFIX + endpoint.example,
    }
    if endpoint.fields:
        entry["fields"] = dict(endpoint.fields)
    if endpoint.live_lookups:
        entry["live_lookup_limits"] = {"per_client_per_minute": LIVE_PER_CLIENT, "global_per_minute": LIVE_GLOBAL}
    if endpoint.batch is not None:
        entry["batch"] = {
            "param": endpoint.batch.param,
            "most": endpoint.batch.most,
            "ids_per_minute": scaled_limit(endpoint.batch.per_minute, scale),
            "bucket": endpoint.batch.bucket,
        }
    if endpoint.csv is not None:
        entry["csv"] = {
            "rows": endpoint.csv.rows,
            "columns": list(endpoint.csv.columns),
            "media_type": CSV_MEDIA_TYPE,
        }
    if endpoint.card is not None:
        entry["card"] = {
            "formats": {fmt: media_type for fmt, media_type in cards.MEDIA_TYPES.items()},
            "sizes": {name: {"width": w, "height": h} for name, (w, h) in CARD_SIZES.items()},
            "themes": list(CARD_THEMES),
            "figures": CARD_FIGURES[endpoint.card],
        }
    entry["rate_limit_per_minute"] = scaled_limit(endpoint.limit_per_minute, scale)
    return entry


def index_document(config: Config) -> dict[str, Any]:
    return {
        "name": "statsapi",
        "version": API_VERSION,
        "description": API_DESCRIPTION,
        "site": config.site_url,
        "attribution": config.attribution,
        "openapi": OPENAPI.full_path,
        # Each release's changes, what a caller must change marked: CHANGELOG.md of the source.
        "changelog": {"release": VERSION, "document": "CHANGELOG.md"},
        "methods": ALLOWED_METHODS.split(", "),
        "rate_limits": {
            "identified_by": "client IP address; IPv6 clients by their /64 network "
            "(X-Forwarded-For only from trusted proxies)",
            "window": f"sliding estimate over {WINDOW_SECONDS} s windows; the previous window counts at "
            "most limit - 1, so Retry-After is at most 60 s and a request sent then is admitted",
            "headers": [
                *RATE_HEADERS[:-1],
                f"{RATE_HEADERS[-1]} (seconds)",
                f"Retry-After ({RETRY_AFTER_SENT})",
            ],
            "live_lookups": {"per_client_per_minute": LIVE_PER_CLIENT, "global_per_minute": LIVE_GLOBAL},
        },
        "regions": list(REGIONS),
        "games": list(GAMES),
        # One colour scale per rating, the bands every answer's `bands` name (/roster).
        "rating_bands": scale_table(),
        "endpoints": [index_entry(endpoint, config.rate_limit_scale) for endpoint in CATALOGUE],
        "errors": [
            {"code": code, "status": status, "meaning": meaning} for code, (status, meaning) in ERROR_CODES.items()
        ],
    }


class IndexHandler(BaseHandler):
    endpoint = INDEX

    async def get(self) -> None:
        self.respond(index_document(self.config), tag=INDEX_TAG)


routes = api_routes(IndexHandler)
