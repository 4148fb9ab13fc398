"""The base handler: GET/HEAD/OPTIONS only, CORS, Cache-Control, ETag, envelope, errors, limits."""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import http.client
import ipaddress
import logging
import time
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, NoReturn, TypeAlias, TypeVar, cast

import tornado.httputil
import tornado.web
import ujson

from handlers.params import parse_view
from server.contract import csv_answers
from server.contract.catalogue import CsvTable, Endpoint
from server.contract.config import API_VERSION, Config
from server.contract.errors import (
    ALLOWED_METHODS,
    COMMON_HEADERS,
    DATABASE_RETRY_AFTER,
    ERROR_MAX_AGE,
    APIError,
    render_error,
)
from server.services.registry import Services
from server.serving import cards
from server.serving.answers import Answer, Tag, answer_key, etag_matches
from server.serving.encoding import prebuilt_gzip
from server.serving.ratelimit import Decision, RateLimiter
from server.upstream.client import UpstreamError
from store.errors import DATABASE_ERRORS

log = logging.getLogger("statsapi.handlers")

# A route as tornado.web.Application takes it: (pattern, handler) or (pattern, handler, initialize() arguments).
Route: TypeAlias = (
    tuple[str, type[tornado.web.RequestHandler]] | tuple[str, type[tornado.web.RequestHandler], dict[str, Any]]
)
# What Tornado passes write_error as exc_info (sys.exc_info() of the error being answered).
ExcInfo: TypeAlias = tuple[type[BaseException] | None, BaseException | None, TracebackType | None]
# Networks an address is looked up in (Config.trusted_proxies, Config.metrics_allow).
Networks: TypeAlias = tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]
View = TypeVar("View")


def method_not_allowed(handler: tornado.web.RequestHandler, *args: str, **kwargs: str) -> NoReturn:
    """A handler's post, put, patch and delete: 405, the API's error (only GET, HEAD and OPTIONS are served)."""
    raise APIError("method_not_allowed")


def utc_now_iso() -> str:
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()


def to_api_error(exc: BaseException | None, status_code: int) -> APIError:
    """Map any exception (or a bare status) to one APIError; never expose internals."""
    if isinstance(exc, APIError):
        return exc
    if isinstance(exc, DATABASE_ERRORS):
        # SPEC 8.1 sends Retry-After with 429; every 503 carries one too, so a client (and a live
        # lookup during a database stall) knows when to come back (docs/api.md, "Headers").
        return APIError("database_unavailable", headers={"Retry-After": str(DATABASE_RETRY_AFTER)})
    if isinstance(exc, UpstreamError):
        # Any upstream failure (including a request it refused) is its unavailability to us.
        retry = int(getattr(exc, "retry_after", 30) or 30)
        return APIError("upstream_unavailable", headers={"Retry-After": str(max(1, retry))})
    if status_code == 405:
        return APIError("method_not_allowed")
    if status_code in (403, 404):  # 403: a static path outside the site's folder
        return APIError("unknown_endpoint")
    if status_code == 431:
        return APIError("request_too_large")
    if 400 <= status_code < 500:
        return APIError("bad_request")
    return APIError("internal_error")


class _MetaCache:
    """The envelope's meta JSON changes once a second (meta.generated): render it once a second."""

    second = -1
    text = ""

    @classmethod
    def get(cls, config: Config) -> str:
        second = int(time.time())
        if second != cls.second:
            cls.text = ujson.dumps(
                {
                    "source": config.source_name,
                    "version": API_VERSION,
                    "generated": utc_now_iso(),
                    "attribution": config.attribution,
                },
                ensure_ascii=False,
                escape_forward_slashes=False,
            )
            cls.second = second
        return cls.text


class _RenderCache:
    """Rendered JSON and ETag of shared, never-mutated data objects (the services' hot caches)."""

    MAX_ENTRIES = 1024
    entries: dict[int, tuple[object, str, str]] = {}

    @classmethod
    def render(cls, data: object, shared: bool) -> tuple[str, str]:
        entry = cls.entries.get(id(data)) if shared else None
        if entry is not None and entry[0] is data:  # the entry holds `data`, so its id is not reused
            return entry[1], entry[2]
        text = ujson.dumps(data, ensure_ascii=False, escape_forward_slashes=False)
        etag = '"' + hashlib.blake2b(text.encode(), digest_size=12).hexdigest() + '"'
        if shared:
            if len(cls.entries) >= cls.MAX_ENTRIES:
                cls.entries.clear()
            cls.entries[id(data)] = (data, text, etag)
        return text, etag


class BaseHandler(tornado.web.RequestHandler):
    """An API handler sets `endpoint` (its catalogue entry) and implements `get`.

    `bucket`, `cache_max_age` and `needs_database` are copied from the entry; only handlers outside
    the catalogue (/metrics, the 404s) set them themselves.
    """

    SUPPORTED_METHODS = ("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE")
    endpoint: Endpoint | None = None
    bucket: str | None = None  # rate-limit bucket; None: not limited
    cache_max_age = 0  # not cached unless the entry (or a handler outside the catalogue) says so
    needs_database = True  # answer 503 at once while the driver's heartbeat says the database is down
    rate_headers: dict[str, str] = {}
    # Every API handler's `get` is a coroutine function (`head` awaits it); an annotation only, so a
    # handler without one still gets Tornado's 405.
    get: Callable[..., Awaitable[None]]
    _client_ip: str | None  # client_ip's cache (unset until first read, or copied from admit())

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        endpoint = cls.__dict__.get("endpoint")
        if endpoint is not None:
            # Class attributes, not properties: admit() runs on the class before a handler exists.
            cls.bucket = endpoint.bucket
            cls.cache_max_age = endpoint.cache_max_age
            cls.needs_database = endpoint.needs_database

    def arguments(self, path_args: tuple[str, ...], view: type[View]) -> View:
        """The endpoint's parameters, parsed and validated (APIError on a bad one), read through
        `view`: the handler's typed view of them, bound to its endpoint by handlers.params.arguments_of."""
        assert self.endpoint is not None
        return parse_view(self, self.endpoint, path_args, view)

    # One-line dependencies over the Application settings (server.compose.app.make_app puts them there).
    @property
    def config(self) -> Config:
        return self.settings["config"]

    @property
    def limiter(self) -> RateLimiter:
        return self.settings["limiter"]

    @property
    def services(self) -> Services:
        return self.settings["services"]

    def initialize(self) -> None:
        self.services.inflight += 1

    def on_finish(self) -> None:
        self.services.inflight -= 1

    def set_default_headers(self) -> None:
        # Re-run by send_error after clear(): everything errors must keep is set here
        # (write_error_answer then sets server.contract.errors.error_headers on top).
        for name, value in COMMON_HEADERS.items():
            self.set_header(name, value)
        self.set_header("Cache-Control", f"public, max-age={self.cache_max_age}")
        for name, value in self.rate_headers.items():
            if name != "Retry-After":
                self.set_header(name, value)

    @property
    def peer_ip(self) -> str:
        """The TCP peer's address (never X-Forwarded-For)."""
        # Typed Optional by Tornado for requests built by hand; its HTTPServer always sets it
        # ("0.0.0.0" on a Unix socket).
        return cast(str, self.request.remote_ip)

    @property
    def client_ip(self) -> str:
        cached = getattr(self, "_client_ip", None)
        if cached is None:
            cached = self._client_ip = resolve_client_ip(
                self.peer_ip, self.request.headers, self.config.trusted_proxies
            )
        return cached

    @classmethod
    def admit(cls, settings: dict[str, Any], request: tornado.httputil.HTTPServerRequest) -> Decision | None:
        """The rate-limit decision for a request to this handler, or None when it is not limited.

        Called by the Application as soon as the headers are in, so an over-limit request is
        answered without ever building a handler (see server.compose.app.OneShotDelegate).
        """
        if cls.bucket is None or request.method not in ("GET", "HEAD"):
            return None  # OPTIONS is free; other methods get 405 without spending quota
        # Two fields Tornado's request has not: the client and the decision, read by prepare() and the log.
        request.statsapi_client = client = resolve_client_ip(  # type: ignore[attr-defined]
            cast(str, request.remote_ip), request.headers, settings["config"].trusted_proxies
        )
        bucket, cost = cls.bucket, 1
        batch = cls.endpoint.batch if cls.endpoint is not None else None
        if batch is not None:
            named = request.query_arguments.get(batch.param)
            if named:  # many ids at once: counted per id in the batch's own bucket
                bucket, cost = batch.bucket, sum(batch.cost(v.decode("latin-1")) for v in named)
        request.statsapi_decision = decision = settings["limiter"].hit(client, bucket, cost)  # type: ignore[attr-defined]
        return decision

    def prepare(self) -> None:
        decision = getattr(self.request, "statsapi_decision", None)
        if decision is None:
            return
        # admit() sets statsapi_client together with statsapi_decision (Tornado's request has no such field).
        self._client_ip = getattr(self.request, "statsapi_client", None)
        self._answer_started = self.services.answers.clock()  # see AnswerCache.put
        self.rate_headers = headers = decision.headers()
        for name, value in headers.items():
            self.set_header(name, value)
        # An over-limit request never gets here: server.compose.app.OneShotDelegate answered it.
        if self.needs_database and not self.services.database_up():
            raise APIError("database_unavailable", headers={"Retry-After": str(DATABASE_RETRY_AFTER)})

    # --- methods -------------------------------------------------------------------
    async def head(self, *args: str, **kwargs: str) -> None:
        await self.get(*args, **kwargs)

    def options(self, *args: str, **kwargs: str) -> None:
        self.set_status(204)
        self.set_header("Allow", ALLOWED_METHODS)
        self.set_header("Access-Control-Allow-Methods", ALLOWED_METHODS)
        self.set_header("Access-Control-Allow-Headers", "If-None-Match, Accept, Content-Type, Cache-Control")
        self.set_header("Access-Control-Max-Age", "86400")
        self.clear_header("Content-Type")
        self.finish()

    post = put = patch = delete = method_not_allowed

    # --- responses -----------------------------------------------------------------
    def respond(self, data: Any, max_age: int | None = None, shared: bool = False, tag: Tag | None = None) -> None:
        """Write the success envelope; the ETag covers `data` only, not meta.generated.

        `shared`: `data` is a cached object nobody mutates, so its rendering is reused.
        `tag`: what the answer is built from; when given, the rendered answer is replayed for
        the endpoint's answer_seconds (server/serving/answers.py), or until this process writes it.
        """
        cache_control = f"public, max-age={self.cache_max_age if max_age is None else max_age}"
        if max_age is not None:
            self.set_header("Cache-Control", cache_control)
        table = self.csv_table
        if table is not None:
            body = csv_answers.render(table, data)
            self._data_etag = '"' + hashlib.blake2b(body.encode(), digest_size=12).hexdigest() + '"'
            extra = {
                "Content-Type": csv_answers.CSV_MEDIA_TYPE,
                "Content-Disposition": f'attachment; filename="{csv_answers.file_name(table, data)}"',
                # The attribution a CSV cannot carry inside without breaking its parsers.
                "Link": f'<{self.config.site_url}>; rel="cite-as"',
            }
            for name, value in extra.items():
                self.set_header(name, value)
        else:
            data_json, self._data_etag = _RenderCache.render(data, shared)
            body = '{"success":true,"meta":' + _MetaCache.get(self.config) + ',"data":' + data_json + "}"
            extra = {}
        if tag is not None and max_age is None:
            headers = {**COMMON_HEADERS, "Cache-Control": cache_control, **extra}
            self.keep_answer(200, headers, body, self._data_etag, tag)
        self.finish(body)

    async def reply(self, data: Any, max_age: int | None = None, shared: bool = False, tag: Tag | None = None) -> None:
        """`respond`, or the answer's card when the request asked `?format=svg|png` (the endpoint's
        `card`): the same answer in another representation, cached and revalidated with it."""
        endpoint = self.endpoint
        fmt = self.get_query_argument("format", "json")  # validated by arguments() by now
        if endpoint is None or endpoint.card is None or fmt not in cards.MEDIA_TYPES:
            self.respond(data, max_age, shared, tag)
            return
        size, theme = self.get_query_argument("size", "large"), self.get_query_argument("theme", "dark")
        cache_control = f"public, max-age={self.cache_max_age if max_age is None else max_age}"
        _, data_etag = _RenderCache.render(data, shared)
        self._data_etag = etag = cards.card_etag(data_etag, endpoint.card, fmt, size, theme)
        headers = {
            "Cache-Control": cache_control,
            "Content-Type": cards.MEDIA_TYPES[fmt],
            "Content-Disposition": f'inline; filename="{cards.file_name(endpoint.card, data, fmt)}"',
        }
        if fmt == "svg":
            headers["Content-Security-Policy"] = cards.SVG_SECURITY_POLICY
        for name, value in headers.items():
            self.set_header(name, value)
        if self.check_etag_header():
            self.finish()  # 304 (RequestHandler.finish): the card is not drawn
            return
        body = await self.services.cards.card(etag, endpoint.card, data, fmt, size, theme)
        if tag is not None and max_age is None:
            self.keep_answer(200, {**COMMON_HEADERS, **headers}, body, etag, tag)
        self.finish(body)

    @property
    def csv_table(self) -> CsvTable | None:
        """The table to answer as CSV: the endpoint's, when the request asked ?format=csv (the
        handler's arguments() has validated the parameter by now)."""
        endpoint = self.endpoint
        if endpoint is None or endpoint.csv is None:
            return None
        return endpoint.csv if self.get_query_argument("format", "json") == "csv" else None

    def keep_answer(
        self, status: int, headers: dict[str, str], body: str | bytes, etag: str | None, tag: Tag | None
    ) -> None:
        """Keep this answer for the next requests with the same path and query (the headers are
        those the answer carries but Server, Date, Content-Length, Etag and the rate-limit headers)."""
        endpoint = self.endpoint
        if endpoint is None or not endpoint.answer_seconds or self.request.method not in ("GET", "HEAD"):
            return
        seconds = endpoint.answer_seconds if status == 200 else ERROR_MAX_AGE
        data = body.encode() if isinstance(body, str) else body
        gzip_body = prebuilt_gzip(headers.get("Content-Type", ""), data) if status == 200 else None
        if gzip_body is not None:  # this response sends the same bytes (ContentEncoding reads them)
            self.request.statsapi_gzip = (data, gzip_body)  # type: ignore[attr-defined]
        answer = Answer(
            status,
            http.client.responses.get(status, "Unknown"),
            tuple(headers.items()),
            data,
            etag,
            time.time(),
            self.services.answers.clock() + seconds,
            tag,
            endpoint.bucket,
            gzip_body,
        )
        started = getattr(self, "_answer_started", None)
        self.services.answers.put(answer_key(self.request.path, self.request.query), answer, started)

    def compute_etag(self) -> str | None:
        return getattr(self, "_data_etag", None)

    def check_etag_header(self) -> bool:
        return check_etag(self)

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc_info: ExcInfo | None = kwargs.get("exc_info")
        status, headers, body = write_error_answer(self, status_code, exc_info)
        error = exc_info[1] if exc_info else None
        if isinstance(error, APIError) and self.endpoint is not None and error.code in self.endpoint.param_errors:
            # A bad parameter is the request's own: the same path and query get the same answer.
            self.keep_answer(status, headers, body, None, None)

    def log_exception(
        self, typ: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        if isinstance(value, APIError):
            return  # an expected answer, not a server fault
        if isinstance(value, DATABASE_ERRORS):
            log.warning("database unavailable: %s %s: %s", self.request.method, self.request.path, type(value).__name__)
            return
        if isinstance(value, (tornado.web.HTTPError, UpstreamError)):
            return
        super().log_exception(typ, value, tb)


def write_error_answer(
    handler: tornado.web.RequestHandler, status_code: int, exc_info: ExcInfo | None
) -> tuple[int, dict[str, str], str]:
    """Any handler's error answer (the API's and the site's `write_error`), rendered by
    server.contract.errors.render_error, and returned. An unexpected error keeps the 5xx status Tornado chose."""
    error = to_api_error(exc_info[1] if exc_info else None, status_code)
    status, headers, body = render_error(error)
    if error.code != "internal_error" and handler.get_status() != status:
        handler.set_status(status)
    for name, value in headers.items():
        handler.set_header(name, value)
    handler.finish(body)
    return status, headers, body


def check_etag(handler: tornado.web.RequestHandler) -> bool:
    """RequestHandler.check_etag_header, also matching the ETag of the answer's gzip
    representation (server.serving.encoding.gzip_etag): the client holds the same answer."""
    etag = handler._headers.get("Etag")
    return etag is not None and etag_matches(handler.request.headers.get("If-None-Match", ""), etag)


def resolve_client_ip(peer: str, headers: tornado.httputil.HTTPHeaders, trusted_proxies: Networks) -> str:
    """The peer address, unless the peer is a trusted proxy: then the forwarded client.

    X-Forwarded-For is read right to left, skipping trusted proxies, so a client cannot
    spoof an address by sending its own header through the proxy chain.
    """
    if not trusted_proxies or not _in_networks(peer, trusted_proxies):
        return peer
    forwarded = headers.get_list("X-Forwarded-For")
    hops = [hop.strip() for value in forwarded for hop in value.split(",") if hop.strip()]
    for hop in reversed(hops):
        if not _valid_ip(hop):
            break
        if not _in_networks(hop, trusted_proxies):
            return hop
    real_ip = (headers.get("X-Real-Ip") or "").strip()
    if real_ip and _valid_ip(real_ip):
        return real_ip
    return peer


@functools.lru_cache(maxsize=65536)
def _valid_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        return False


@functools.lru_cache(maxsize=65536)
def _in_networks(address: str, networks: Networks) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in networks)


class NotFoundHandler(BaseHandler):
    """Every unmatched path: 404 unknown_endpoint (the Application's default handler; a GET or HEAD
    is answered by server.compose.app.OneShotDelegate, with the same bytes, and never gets here)."""

    cache_max_age = ERROR_MAX_AGE
    prebuilt_error = "unknown_endpoint"

    def prepare(self) -> None:
        if self.request.method == "OPTIONS":
            return
        raise APIError(self.prebuilt_error)

    async def get(self, *args: str, **kwargs: str) -> None:
        raise APIError(self.prebuilt_error)


class UnknownVersionHandler(NotFoundHandler):
    """A path under /api/ with another version: 404 unknown_version, answered as NotFoundHandler's."""

    prebuilt_error = "unknown_version"


def api_routes(*handler_classes: type[BaseHandler]) -> list[tuple[str, type[BaseHandler]]]:
    """Routes of catalogue handlers, each at its entry's path."""
    routes = []
    for handler_class in handler_classes:
        assert handler_class.endpoint is not None, handler_class
        routes.append((handler_class.endpoint.route_pattern(), handler_class))
    return routes


routes = [
    (rf"/api/(?!{API_VERSION}(?:/|$))[^/]*(?:/.*)?", UnknownVersionHandler),
]
