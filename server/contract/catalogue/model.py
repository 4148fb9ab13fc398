"""The catalogue's records: Param and Endpoint, strict value parsing, the prose helpers, the API prefix."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

from server.contract.config import API_VERSION
from server.contract.errors import APIError

PREFIX = f"/api/{API_VERSION}"


def one_of(values: tuple[str, ...]) -> str:
    """'a, b or c'."""
    return ", ".join(values[:-1]) + " or " + values[-1] if len(values) > 1 else values[0]


def and_list(values: tuple) -> str:
    """'7, 30 and 90'."""
    words = [str(v) for v in values]
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else words[0]


def hours(seconds: float) -> str:
    return f"{seconds / 3600:g} h"


def duration(seconds: float) -> str:
    """'a minute', '5 minutes', '1 h', '90 s'."""
    if seconds == 60:
        return "a minute"
    if seconds % 3600 == 0:
        return hours(seconds)
    return f"{seconds / 60:g} minutes" if seconds % 60 == 0 else f"{seconds:g} s"


# Codes every rate-limited GET can answer, whatever the endpoint.
COMMON_ERRORS = ("bad_request", "payload_too_large", "request_too_large", "rate_limited", "internal_error")


@dataclasses.dataclass(frozen=True)
class Param:
    """One path or query parameter: its type and bounds are what the handlers accept."""

    name: str
    location: str  # "path" or "query"
    type: str  # "integer" or "string"
    error: str  # the error code a bad value (or a missing required one) answers
    description: str
    minimum: int | None = None
    maximum: int | None = None
    enum: tuple[str, ...] | tuple[int, ...] | None = None
    min_length: int | None = None  # free text: length bounds and an anchored pattern
    max_length: int | None = None
    pattern: str | None = None
    default: int | str | None = None
    required: bool = False  # a query parameter that must be given (path parameters always must)
    format: str | None = None  # OpenAPI format ("int64")
    example: int | str | None = None  # OpenAPI example (path parameters)

    def __post_init__(self) -> None:
        # JSON Schema patterns are unanchored searches; anchoring makes the document and
        # handlers/params.py (which matches the whole value) mean the same.
        assert self.pattern is None or (self.pattern.startswith("^") and self.pattern.endswith("$")), self.pattern
        if self.location == "path":
            object.__setattr__(self, "required", True)  # OpenAPI: a path parameter is required

    def constraints(self) -> dict:
        """Its bounds, allowed values and default, under their JSON Schema names."""
        out: dict = {}
        for key, value in (
            ("minimum", self.minimum),
            ("maximum", self.maximum),
            ("enum", list(self.enum) if self.enum is not None else None),
            ("minLength", self.min_length),
            ("maxLength", self.max_length),
            ("pattern", self.pattern),
            ("default", self.default),
        ):
            if value is not None:
                out[key] = value
        return out

    def index_entry(self) -> dict:
        """The parameter as the index lists it."""
        entry: dict = {"name": self.name, "in": self.location, "type": self.type, **self.constraints()}
        if self.required:
            entry["required"] = True
        return entry


FORMATS = ("json", "csv", "svg", "png")
# What each representation of an answer is, for the `format` parameter's description.
FORMAT_MEANINGS = {
    "json": "json (default): the envelope",
    "csv": "csv: the answer's table as RFC 4180 CSV (UTF-8, a header row, the same filters, sort and "
    "paging), served as a download",
    "svg": "svg: the answer's card, an SVG image of its figures (`size`, `theme`)",
    "png": "png: the same card as a PNG image",
}


def format_param(formats: tuple[str, ...]) -> Param:
    """The `format` parameter of an endpoint answering in these representations."""
    return Param(
        "format",
        "query",
        "string",
        "invalid_format",
        "; ".join(FORMAT_MEANINGS[f] for f in formats) + ". Errors stay the JSON envelope.",
        enum=formats,
        default="json",
    )


FORMAT = format_param(("json", "csv"))
CARD_FORMATS = ("svg", "png")
# A card's sizes (width, height in pixels): a link preview's (Open Graph's 1.91:1) and a banner for
# forum signatures and stream corners.
CARD_SIZES = {"large": (1200, 630), "banner": (600, 160)}
CARD_THEMES = ("dark", "light")
SIZE = Param(
    "size",
    "query",
    "string",
    "invalid_size",
    "With format=svg or png: large (default, 1200×630, a link preview's) or banner (600×160, on a "
    "transparent background: forum signatures, stream corners). Ignored by the other formats.",
    enum=tuple(CARD_SIZES),
    default="large",
)
THEME = Param(
    "theme",
    "query",
    "string",
    "invalid_theme",
    "With format=svg or png: dark (default) or light colours. Ignored by the other formats.",
    enum=CARD_THEMES,
    default="dark",
)
# The parameters BaseHandler.respond reads (the representation), never a handler's view.
REPRESENTATION_PARAMS = ("format", "size", "theme")


@dataclasses.dataclass(frozen=True)
class CsvTable:
    """What `?format=csv` serves of an endpoint's answer: the list under `rows` of `data`, one CSV
    row per item, these `columns` (dotted paths into an item: `career.wn8`), as a download named
    `file` (formatted with the answer's top-level fields) + ".csv"."""

    rows: str
    file: str
    columns: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Batch:
    """A request naming many ids at once (`param`: comma-separated): it is counted in its own
    rate-limit `bucket`, one per id asked for (so `per_minute` ids a minute per client), and names at
    most `most` ids."""

    param: str
    bucket: str
    most: int
    per_minute: int

    def cost(self, text: str) -> int:
        """What a request's value costs: the ids it names (at least 1, at most `most`: more is a
        400 that still counts as a full batch)."""
        return max(1, min(self.most, text.count(",") + 1))


@dataclasses.dataclass(frozen=True, eq=False)  # compared by identity: each record is one endpoint
class Endpoint:
    """One GET endpoint. `name` is also its rate-limit bucket and the metrics label."""

    name: str
    path: str  # template relative to PREFIX ("" for the index itself)
    summary: str
    description: str
    tag: str  # OpenAPI tag: players, clans, online or meta
    operation_id: str  # OpenAPI operationId stem (getX, headX, optionsX)
    limit_per_minute: int  # per client (SPEC 8.1)
    cache_max_age: int  # Cache-Control max-age of a successful answer, seconds
    example: str  # a request path relative to PREFIX
    params: tuple[Param, ...] = ()
    # Codes this endpoint answers beyond its parameters' codes and COMMON_ERRORS.
    errors: tuple[str, ...] = ()
    schema: str | None = None  # the `data` schema in handlers/schemas.py; None: served raw, not enveloped
    fields: Mapping[str, str] = dataclasses.field(default_factory=dict)  # short guide to the answer's fields
    live_lookups: bool = False  # may fetch from the upstream for the request (the live-lookup limits apply)
    # Cache-Control max-age of an answer fetched live for the request, when shorter than cache_max_age.
    live_fetched_max_age: int | None = None
    needs_database: bool = True  # answers 503 at once while the database is down
    # What a success answers: the JSON envelope, or (text/event-stream) a stream of Server-Sent Events.
    media_type: str = "application/json"
    # How long a process replays this endpoint's rendered answer to a request with the same path and
    # query (server/serving/answers.py); 0: built for every request. Never longer than the data's own
    # freshness (HOT_COPY_SECONDS for the services' hot copies).
    answer_seconds: float = 0.0
    csv: CsvTable | None = None  # the table `?format=csv` serves (`format` is then one of its parameters)
    # The card `?format=svg|png` draws of the answer (server/serving/cards: "player", "session",
    # "clan", "tank"); `format`, `size` and `theme` are then among its parameters.
    card: str | None = None
    batch: Batch | None = None  # a request with batch.param is counted per id in batch.bucket

    def __post_init__(self) -> None:
        if self.formats == ("json",) or any(param.name == "format" for param in self.params):
            return
        extra = (format_param(self.formats),) + ((SIZE, THEME) if self.card is not None else ())
        object.__setattr__(self, "params", (*self.params, *extra))

    @property
    def formats(self) -> tuple[str, ...]:
        """The representations it answers in (`?format=`): json, then csv and the card's where it has them."""
        return ("json", *(("csv",) if self.csv is not None else ()), *(CARD_FORMATS if self.card is not None else ()))

    @property
    def bucket(self) -> str:
        return self.name

    @property
    def full_path(self) -> str:
        return PREFIX + self.path

    @property
    def param_errors(self) -> frozenset[str]:
        """The codes of a bad parameter: answers decided by the request alone."""
        return frozenset(param.error for param in self.params)

    @property
    def error_codes(self) -> tuple[str, ...]:
        """Every code it can answer: its parameters', its own, then the common ones."""
        codes = dict.fromkeys(param.error for param in self.params)
        codes.update(dict.fromkeys(self.errors))
        codes.update(dict.fromkeys(COMMON_ERRORS))
        return tuple(codes)

    def route_pattern(self) -> str:
        """The Tornado route: each {param} one path segment; a trailing slash is allowed except
        after a file name (a literal one, or a name parameter)."""
        pattern = ""
        nonempty = {param.name for param in self.params if param.location == "path" and (param.min_length or 0) > 0}
        for part in self.full_path.split("/")[1:]:
            if part.startswith("{") and part.endswith("}"):
                # An empty segment reaches the handler (a 400 naming the parameter), except where the
                # segment is a name that cannot be empty: there the path is another endpoint's with a
                # trailing slash (/dumps/ is the listing, not a file).
                pattern += "/([^/]+)" if part[1:-1] in nonempty else "/([^/]*)"
            else:
                pattern += "/" + part.replace(".", r"\.")
        last = self.full_path.rsplit("/", 1)[1]
        return pattern if "." in last or last[1:-1] in nonempty else pattern + "/?"


def _is_date(text: str) -> bool:
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def parse_value(param: Param, text: str) -> Any:
    """`text` as `param` accepts it, or APIError(param.error).

    Integers the strict way: ASCII digits only (no sign, no spaces), within the bounds. A bad path
    value answers the code's standard message; a query value says what it accepts.
    """
    if param.type == "integer":
        assert param.minimum is not None and param.maximum is not None  # every integer parameter is bounded
        if (
            text
            and text.isascii()
            and text.isdigit()
            and len(text) <= len(str(param.maximum))
            and param.minimum <= int(text) <= param.maximum
            and (param.enum is None or int(text) in param.enum)
        ):
            return int(text)
        hint = (
            f"{param.name} must be {one_of(tuple(map(str, param.enum)))}"
            if param.enum is not None
            else f"{param.name} must be an integer from {param.minimum} to {param.maximum}"
        )
    elif param.enum is not None:
        if text in param.enum:
            return text
        hint = f"{param.name} must be one of " + ", ".join(map(str, param.enum))
    else:
        # Free text: within its length bounds and matching its pattern (anchored, so the
        # document's unanchored JSON Schema pattern means the same).
        shortest = param.min_length or 0
        longest = param.max_length
        if (
            shortest <= len(text)
            and (longest is None or len(text) <= longest)
            and (param.pattern is None or re.fullmatch(param.pattern, text))
            and (param.format != "date" or _is_date(text))
        ):
            return text
        hint = (
            f"{param.name} must be at least {shortest} characters"
            if longest is None
            else (f"{param.name} must be {shortest} to {longest} characters")
        )
        if param.pattern is not None:
            hint += f" matching {param.pattern}"
    raise APIError(param.error, hint if param.location == "query" else None)


def parse_ids(param: Param, text: str, most: int) -> list[int]:
    """A comma-separated list of ids (`param` validates each as an integer), in the order given: at
    most `most` of them and none twice, or APIError(param.error) saying which rule was broken."""
    parts = text.split(",")
    if len(parts) > most:
        raise APIError(param.error, f"{param.name} names at most {most} ids ({len(parts)} given)")
    seen: set[int] = set()
    out = []
    for part in parts:
        value = parse_value(dataclasses.replace(param, location="query"), part)
        if value in seen:
            raise APIError(param.error, f"{param.name} names {value} twice")
        seen.add(value)
        out.append(value)
    return out
