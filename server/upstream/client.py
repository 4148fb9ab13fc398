"""Async client for the Wargaming public API (or the simulator in scripts/upstream_sim/)."""

# One ``tornado.httpclient.AsyncHTTPClient`` instance per client; every request (retries too) first
# takes a slot of its realm's cap (``server/upstream/realms.py``: the CDN's per-address throttle,
# with congestion control and back-off) and then of the process's ``UpstreamBudget`` (the
# requests-per-second quota of the application_id, by caller priority); per-method id limits; an id
# list one bad id sinks is split until the bad ids stand alone; timeouts and retries (live: quick
# and few; background: a growing back-off); and a mapping of the upstream's error envelope
# (``{"status": "error", "error": {"code", "message", "field", "value"}}``, sent with HTTP 200)
# to three exception types:
#
# * ``UpstreamUnavailable(message, retry_after)`` -- the upstream could not answer (timeouts,
#   connection errors, HTTP 5xx, SOURCE_NOT_AVAILABLE, REQUEST_LIMIT_EXCEEDED after the retries,
#   a live call to a realm that is backing off, or a configuration problem such as
#   DEMO_APPLICATION_IS_BLOCKED, which holds back every request of its scope for minutes and
#   shows in /status);
# * ``UpstreamBadRequest`` -- the upstream rejected the request itself (*_LIST_LIMIT_EXCEEDED,
#   INVALID_SEARCH, ...); not retried;
# * both subclass ``UpstreamError``.
#
# The ``application_id`` is a secret: it never appears in exception messages, ``last_error`` or
# logs (URLs in messages are rebuilt without it). This module imports nothing from ``store/``.

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, TypeAlias, TypeVar

import ujson
from tornado.httpclient import (
    AsyncHTTPClient,
    HTTPClientError,
    HTTPRequest,
    HTTPResponse,
)

from server.contract.config import VERSION
from server.upstream.budget import Caller, UpstreamBudget
from server.upstream.realms import RealmCongested, RealmGate, RealmGates
from store.constants import GAMES, REGIONS, TANK_COUNTERS

T = TypeVar("T")  # what one attempt of a retried request returns
# The public methods' parameter and answer types (the Upstream Protocol, interface.py, names them too).
Ids: TypeAlias = Iterable[int]  # account or clan ids, any number: batched by the method's id limit
Fields: TypeAlias = str | None  # the upstream's `fields` filter; None: every field
Params: TypeAlias = Mapping[str, Any] | None  # extra query parameters (the simulator's _sim_* ones)
ById: TypeAlias = dict[int, dict | None]  # each id's answer; None for an unknown (or invalid) id
Mastery: TypeAlias = tuple[dict[int, dict[int, float]], int | None]  # ({tank_id: {percentile: value}}, updated_at)

log = logging.getLogger("statsapi.upstream")

HOSTS = {
    ("wot", "eu"): "https://api.worldoftanks.eu",
    ("wot", "na"): "https://api.worldoftanks.com",
    ("wot", "asia"): "https://api.worldoftanks.asia",
    ("wotb", "eu"): "https://api.wotblitz.eu",
    ("wotb", "na"): "https://api.wotblitz.com",
    ("wotb", "asia"): "https://api.wotblitz.asia",
    ("wows", "eu"): "https://api.worldofwarships.eu",
    ("wows", "na"): "https://api.worldofwarships.com",
    ("wows", "asia"): "https://api.worldofwarships.asia",
}
MAX_IDS_PER_REQUEST = 100  # the upstream's usual limit for account_id / clan_id lists
# Per-method limits of the id lists (the real API answers 407 *_LIST_LIMIT_EXCEEDED above them).
ID_LIMITS = {
    "wot/account/info": 100,
    "wot/account/tanks": 100,
    "wot/account/wtr": 100,
    "wot/clans/accountinfo": 100,
    "wot/clans/info": 100,
    "wot/clanratings/clans": 100,
    "wot/stronghold/claninfo": 10,
}
# `fields` for what the service reads; without them tanks/stats is several KB per tank.
# The account's spotting and tracking assistance exist only here, and only as per-battle averages
# (store/constants.py ACCOUNT_ASSIST); tanks/stats has the stun assistance per tank, not these.
ASSIST_AVERAGES = ("avg_damage_assisted_radio", "avg_damage_assisted_track")
ACCOUNT_FIELDS = "account_id,nickname,clan_id,created_at,last_battle_time,updated_at,global_rating," + ",".join(
    f"statistics.all.{name}" for name in (*TANK_COUNTERS, *ASSIST_AVERAGES)
)
TANKS_FIELDS = "tank_id,mark_of_mastery,max_xp," + ",".join(f"all.{name}" for name in TANK_COUNTERS)
VEHICLE_FIELDS = "tank_id,tier,name,type,nation"
ACCOUNT_TANKS_FIELDS = "tank_id,mark_of_mastery,statistics.battles,statistics.wins"
CLAN_MEMBER_FIELDS = "role,clan.clan_id,clan.tag,clan.name"
VEHICLES_PER_PAGE = 100  # encyclopedia/vehicles pages at 100, the most the upstream allows
MASTERY_PERCENTILES = 10  # wot/tanks/mastery takes at most this many percentile values

# Retry-After (seconds) suggested to our own callers once the upstream gave up on us.
RETRY_AFTER_LIMIT = 5  # REQUEST_LIMIT_EXCEEDED: per-second quota, recovers quickly
RETRY_AFTER_TRANSIENT = 30  # timeouts, connection errors, 5xx, SOURCE_NOT_AVAILABLE
RETRY_AFTER_CONFIG = 300  # INVALID_APPLICATION_ID and friends: needs an operator

_TRANSIENT_MESSAGES = {"SOURCE_NOT_AVAILABLE"}
_LIMIT_MESSAGES = {"REQUEST_LIMIT_EXCEEDED"}
# Answers that say the deployment is misconfigured, with what the operator should do. None is
# retried per request: the client sends nothing more in its scope (the whole application, or one
# method) for CONFIG_RETRY_SECONDS, /status says degraded, the log says so once per CONFIG_LOG_EVERY.
_SET_ID = (
    "set STATSAPI_APPLICATION_ID to an application_id of your own from https://developers.wargaming.net/applications/"
)
_CONFIG_ADVICE = {
    "APPLICATION_ID_NOT_SPECIFIED": _SET_ID,
    "INVALID_APPLICATION_ID": _SET_ID,
    "DEMO_APPLICATION_IS_BLOCKED": "the 'demo' application_id is blocked on the real API: " + _SET_ID,
    "APPLICATION_IS_BLOCKED": "Wargaming blocked this application_id: check it at "
    "https://developers.wargaming.net/applications/ or " + _SET_ID.replace("set", "set a new", 1),
    "INVALID_IP_ADDRESS": "this application_id is a server type and this server's address is not on its list: "
    "add the address at https://developers.wargaming.net/applications/",
    "METHOD_NOT_FOUND": "the upstream no longer has this method: upgrade statsapi",
    "METHOD_DISABLED": "the upstream disabled this method: upgrade statsapi",
}
_CONFIG_MESSAGES = set(_CONFIG_ADVICE)
_METHOD_SCOPED = {"METHOD_NOT_FOUND", "METHOD_DISABLED"}  # the rest stop the whole application
CONFIG_RETRY_SECONDS = 180.0
CONFIG_LOG_EVERY = 300.0
BACKGROUND_RETRIES = 4  # attempts after the first for background callers (live: max_retries)
BACKGROUND_RETRY_BASE = 2.0  # background retries wait 2, 8, 18, 32 s (x jitter), at most a minute
BACKGROUND_RETRY_MAX = 60.0
BACKGROUND_TIMEOUT = 15.0  # a background request may wait longer for its answer than a live one


class UpstreamError(Exception):
    """Any failure talking to the upstream. Messages never contain the application_id."""

    def __init__(
        self,
        message: str,
        *,
        upstream_code: int | None = None,
        upstream_message: str | None = None,
        field: str | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.upstream_code = upstream_code
        self.upstream_message = upstream_message
        self.field = field


class UpstreamUnavailable(UpstreamError):
    """The upstream could not answer (after retries where retrying makes sense)."""

    def __init__(self, message: str, retry_after: int = RETRY_AFTER_TRANSIENT, **kwargs: Any):
        super().__init__(message, **kwargs)
        self.retry_after = max(1, int(retry_after))


class UpstreamBadRequest(UpstreamError):
    """The upstream rejected the request's parameters (e.g. INVALID_ACCOUNT_ID)."""


class _Retryable(Exception):
    """Internal: one attempt failed in a way worth retrying."""

    def __init__(
        self,
        description: str,
        limit: bool = False,
        upstream_code: int | None = None,
        upstream_message: str | None = None,
        congestion: bool = False,
    ):
        super().__init__(description)
        self.description = description
        self.limit = limit
        self.upstream_code = upstream_code
        self.upstream_message = upstream_message
        self.congestion = congestion  # the realm's gate already waits the back-off


def _chunks(ids: list[int], size: int) -> Iterable[list[int]]:
    for start in range(0, len(ids), size):
        yield ids[start : start + size]


def _with_names(query: dict[str, Any]) -> dict[str, Any]:
    """An account/list query asking only the ids and nicknames it reads."""
    return {**query, "fields": "account_id,nickname"}


def _accounts_found(answer: tuple[Any, dict]) -> list[dict]:
    """account/list's rows as {account_id, nickname} (rows lacking either are left out)."""
    data, _ = answer
    return [
        {"account_id": int(row["account_id"]), "nickname": str(row["nickname"])}
        for row in data or []
        if isinstance(row, dict) and row.get("account_id") is not None and row.get("nickname") is not None
    ]


def _unique_ints(ids: Iterable[int]) -> list[int]:
    out: list[int] = []
    seen: set[int] = set()
    for value in ids:
        number = int(value)
        if number not in seen:
            seen.add(number)
            out.append(number)
    return out


class UpstreamClient:
    """Async client; one per process. Methods return plain dicts keyed by int ids."""

    def __init__(
        self,
        application_id: str,
        base_url: str | None = None,
        connect_timeout: float = 2.0,
        request_timeout: float = 5.0,
        max_retries: int = 2,
        retry_base_delay: float = 0.2,
        *,
        max_concurrency: int = 64,
        max_retry_delay: float = 10.0,
        language: str | None = None,
        http_client: AsyncHTTPClient | None = None,
        rng: random.Random | None = None,
        budget: UpstreamBudget | None = None,
        realms: RealmGates | None = None,
        contact: str | None = None,
        background_timeout: float = BACKGROUND_TIMEOUT,
        background_retries: int = BACKGROUND_RETRIES,
        background_retry_base: float = BACKGROUND_RETRY_BASE,
    ):
        if not application_id:
            raise ValueError("application_id is required")
        self._application_id = str(application_id)
        self.base_url = base_url.rstrip("/") if base_url else None
        self.connect_timeout = float(connect_timeout)
        self.request_timeout = float(request_timeout)
        self.max_retries = max(0, int(max_retries))
        self.retry_base_delay = max(0.0, float(retry_base_delay))
        self.max_retry_delay = float(max_retry_delay)
        # The budget bounds the rate; this only bounds sockets (rate x timeout is far below it).
        self.max_concurrency = max(1, int(max_concurrency))
        self.budget = budget or UpstreamBudget()
        # Per-realm caps under the CDN's per-address throttle (server/upstream/realms.py).
        self.realms = realms if realms is not None else RealmGates()
        self.background_timeout = float(background_timeout)
        self.background_retries = max(0, int(background_retries))
        self.background_retry_base = max(0.0, float(background_retry_base))
        # Wargaming asks clients to say who they are; the contact lets them reach the operator.
        self.user_agent = f"statsapi/{VERSION} (+{contact})" if contact else f"statsapi/{VERSION}"
        # Configuration-class answers by scope ("*" or a method path): what, since when, until when
        # nothing is sent in that scope.
        self.config_problems: dict[str, dict] = {}
        self._config_logged: dict[str, float] = {}
        self.config_errors_by_code: dict[str, int] = {}  # since start (for /metrics)
        self.invalid_ids = 0  # ids the upstream called invalid, isolated by splitting their lists
        self.language = language
        self._http = http_client
        self._own_http = http_client is None
        self._semaphore: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._rng = rng or random.Random()
        # Read by /status (never contain the application_id).
        self.last_success: float | None = None
        self.last_failure: float | None = None
        self.last_error: str | None = None
        self.requests = 0  # HTTP attempts
        self.failures = 0  # failed attempts (each retry counts)

    def __repr__(self) -> str:  # never show the application_id
        return f"<UpstreamClient base_url={self.base_url or 'wargaming'!r} requests={self.requests}>"

    # --- public API ------------------------------------------------------------------
    async def account_info(
        self, region: str, account_ids: Ids, *, fields: Fields = None, params: Params = None, caller: Caller = "other"
    ) -> ById:
        """``wot/account/info`` for any number of ids (batched by 100); an unknown id maps to None, and
        so does one the upstream calls invalid (the others of its list are served)."""
        return await self._by_ids("wot", region, "wot/account/info", "account_id", account_ids, fields, params, caller)

    async def tanks_stats(
        self, region: str, account_id: int, *, fields: Fields = None, params: Params = None, caller: Caller = "other"
    ) -> list[dict] | None:
        """``wot/tanks/stats`` for one account: the per-tank list, or None for an unknown account."""
        query: dict[str, Any] = {"account_id": int(account_id)}
        if fields:
            query["fields"] = fields
        try:
            data, _ = await self._call("wot", region, "wot/tanks/stats", query, params, caller)
        except UpstreamBadRequest as exc:
            if _names_invalid_id(exc, "account_id"):
                self.invalid_ids += 1
                return None  # the upstream calls the id invalid: as good as unknown
            raise
        value = data.get(str(int(account_id))) if isinstance(data, dict) else None
        return list(value) if value is not None else None

    async def account_list(
        self, region: str, search: str, limit: int = 10, *, params: Params = None, caller: Caller = "live"
    ) -> list[dict]:
        """``wot/account/list`` type=startswith: up to ``limit`` (1-100) accounts whose nickname
        starts with ``search`` (3-24 characters; case-insensitive), sorted by nickname, each
        {account_id, nickname}. The upstream rejects a bad search (UpstreamBadRequest)."""
        query = {"search": search, "type": "startswith", "limit": max(1, min(MAX_IDS_PER_REQUEST, int(limit)))}
        return _accounts_found(await self._call("wot", region, "wot/account/list", _with_names(query), params, caller))

    async def account_names(
        self, region: str, nicknames: Sequence[str], *, params: Params = None, caller: Caller = "live"
    ) -> list[dict]:
        """``wot/account/list`` type=exact: the accounts named exactly (case-insensitively) by up to
        100 `nicknames` (each 1-24 ASCII letters, digits or _) in one request, each {account_id,
        nickname}. The upstream rejects a bad name (UpstreamBadRequest)."""
        wanted = list(dict.fromkeys(nicknames))
        if not wanted or len(wanted) > MAX_IDS_PER_REQUEST:
            raise ValueError(f"nicknames: 1 to {MAX_IDS_PER_REQUEST}, not {len(wanted)}")
        query = {"search": ",".join(wanted), "type": "exact", "limit": MAX_IDS_PER_REQUEST}
        return _accounts_found(await self._call("wot", region, "wot/account/list", _with_names(query), params, caller))

    async def vehicles(
        self, region: str, *, fields: Fields = None, params: Params = None, caller: Caller = "other"
    ) -> dict[int, dict]:
        """``wot/encyclopedia/vehicles``: every vehicle keyed by tank_id, page by page (100 each)."""
        out: dict[int, dict] = {}
        page = 1
        while True:
            query: dict[str, Any] = {"limit": VEHICLES_PER_PAGE}
            if fields:
                query["fields"] = fields
            if page > 1:
                query["page_no"] = page
            data, meta = await self._call("wot", region, "wot/encyclopedia/vehicles", query, params, caller)
            for key, value in (data or {}).items():
                if value is not None:
                    out[int(key)] = value
            page_total = (meta or {}).get("page_total") or 1
            if page >= int(page_total) or page >= 100:
                return out
            page += 1

    async def tanks_mastery(
        self,
        region: str,
        distribution: str,
        percentiles: Sequence[int],
        *,
        params: Params = None,
        caller: Caller = "other",
    ) -> Mastery:
        """``wot/tanks/mastery`` for every vehicle (no tank_id: one request): ({tank_id: {percentile:
        value}}, updated_at) of the server's `distribution` ("damage" or "xp") at `percentiles`
        (1-100, at most MASTERY_PERCENTILES); a vehicle the answer leaves null is left out."""
        wanted = sorted({int(p) for p in percentiles})
        if not wanted or len(wanted) > MASTERY_PERCENTILES or not all(1 <= p <= 100 for p in wanted):
            raise ValueError(f"percentiles: 1 to {MASTERY_PERCENTILES} values from 1 to 100, not {percentiles!r}")
        query = {"distribution": distribution, "percentile": ",".join(map(str, wanted))}
        data, _ = await self._call("wot", region, "wot/tanks/mastery", query, params, caller)
        data = data if isinstance(data, dict) else {}
        out: dict[int, dict[int, float]] = {}
        for tank_id, values in (data.get("distribution") or {}).items():
            if isinstance(values, dict) and values:
                out[int(tank_id)] = {int(p): float(v) for p, v in values.items() if v is not None}
        updated = data.get("updated_at")
        return out, int(updated) if isinstance(updated, (int, float)) else None

    async def account_wtr(
        self, region: str, account_ids: Ids, *, params: Params = None, caller: Caller = "other"
    ) -> dict[int, int | None]:
        """``wot/account/wtr`` for any number of ids (batched by 100): {account_id: rating}, None
        for an account without one (too few random battles) or unknown."""
        found = await self._by_ids(
            "wot", region, "wot/account/wtr", "account_id", account_ids, "rating", params, caller
        )
        return {
            account_id: int(value["rating"]) if isinstance(value, dict) and value.get("rating") is not None else None
            for account_id, value in found.items()
        }

    async def account_tanks(
        self, region: str, account_ids: Ids, *, params: Params = None, caller: Caller = "other"
    ) -> dict[int, list[dict] | None]:
        """``wot/account/tanks`` for any number of ids (batched by 100): {account_id: [{tank_id,
        battles, wins, mark_of_mastery}] of its played tanks, or None for an unknown account}."""
        found = await self._by_ids(
            "wot", region, "wot/account/tanks", "account_id", account_ids, ACCOUNT_TANKS_FIELDS, params, caller
        )
        out: dict[int, list[dict] | None] = {}
        for account_id, value in found.items():
            rows: Any = value
            out[account_id] = (
                None
                if not isinstance(rows, list)
                else [
                    {
                        "tank_id": int(row["tank_id"]),
                        "battles": int((row.get("statistics") or {}).get("battles") or 0),
                        "wins": int((row.get("statistics") or {}).get("wins") or 0),
                        "mark_of_mastery": int(row.get("mark_of_mastery") or 0),
                    }
                    for row in rows
                    if isinstance(row, dict) and row.get("tank_id") is not None
                ]
            )
        return out

    async def clans_accountinfo(
        self, region: str, account_ids: Ids, *, params: Params = None, caller: Caller = "other"
    ) -> dict[int, dict | None]:
        """``wot/clans/accountinfo`` for any number of ids (batched by 100): {account_id: {clan_id,
        tag, name, role}, or None for an account in no clan (or unknown)}."""
        found = await self._by_ids(
            "wot", region, "wot/clans/accountinfo", "account_id", account_ids, CLAN_MEMBER_FIELDS, params, caller
        )
        out: dict[int, dict | None] = {}
        for account_id, value in found.items():
            clan = (value or {}).get("clan") if isinstance(value, dict) else None
            out[account_id] = (
                {
                    "clan_id": int(clan["clan_id"]),
                    "tag": clan.get("tag"),
                    "name": clan.get("name"),
                    "role": (value or {}).get("role"),
                }
                if isinstance(clan, dict) and clan.get("clan_id") is not None
                else None
            )
        return out

    async def clans_info(
        self, region: str, clan_ids: Ids, *, fields: Fields = None, params: Params = None, caller: Caller = "other"
    ) -> ById:
        """``wot/clans/info`` (members as a list of {account_id, account_name, role, joined_at})."""
        return await self._by_ids("wot", region, "wot/clans/info", "clan_id", clan_ids, fields, params, caller)

    async def clan_ratings(
        self, region: str, clan_ids: Ids, *, fields: Fields = None, params: Params = None, caller: Caller = "other"
    ) -> ById:
        """``wot/clanratings/clans`` (fb_elo_rating_10 / _8 / ... are {value, rank, rank_delta})."""
        return await self._by_ids("wot", region, "wot/clanratings/clans", "clan_id", clan_ids, fields, params, caller)

    async def stronghold_claninfo(
        self, region: str, clan_ids: Ids, *, fields: Fields = None, params: Params = None, caller: Caller = "other"
    ) -> ById:
        """``wot/stronghold/claninfo`` (skirmish_statistics: total_10, win_10, ...), 10 clans per request."""
        return await self._by_ids("wot", region, "wot/stronghold/claninfo", "clan_id", clan_ids, fields, params, caller)

    async def servers_info(
        self, region: str, games: Iterable[str] = GAMES, *, params: Params = None, caller: Caller = "other"
    ) -> dict[str, list[dict]]:
        """``wgn/servers/info`` for several games in one request, on the wot host of the region
        (as every public client calls it): {game: [{"server", "players_online"}, ...]}."""
        wanted = [g for g in dict.fromkeys(games)]
        for game in wanted:
            if game not in GAMES:
                raise ValueError(f"unknown game {game!r}")
        data, _ = await self._call("wot", region, "wgn/servers/info", {"game": ",".join(wanted)}, params, caller)
        out = {}
        for game in wanted:
            rows = (data or {}).get(game) if isinstance(data, dict) else None
            # A server without a count is skipped, never reported as 0 players.
            out[game] = [
                {"server": str(row.get("server")), "players_online": row["players_online"]}
                for row in rows or []
                if isinstance(row, dict)
                and isinstance(row.get("players_online"), int)
                and not isinstance(row.get("players_online"), bool)
            ]
        return out

    async def fetch_json_url(self, url: str, *, caller: Caller = "reference") -> bytes:
        """GET any URL (the XVM expected-values file) with the same timeouts, retries and budget."""
        _, body, _ = await self.fetch_url(url, caller=caller)
        return body

    async def fetch_url(
        self, url: str, *, headers: Mapping[str, str] | None = None, caller: Caller = "reference"
    ) -> tuple[int, bytes, dict[str, str]]:
        """GET any URL with extra request headers (a conditional GET: If-None-Match,
        If-Modified-Since): (200 or 304, body, the answer's headers), with the same timeouts,
        retries and budget as the API; any other status raises UpstreamUnavailable."""
        safe = self._safe_url(url)

        async def attempt() -> tuple[int, bytes, dict[str, str]]:
            response = await self._fetch(url, safe, caller, headers=headers)
            if response.code >= 500 or response.code == 429:
                raise _Retryable(f"HTTP {response.code}", limit=response.code == 429)
            if response.code not in (200, 304):
                raise UpstreamUnavailable(f"GET {safe}: HTTP {response.code}", RETRY_AFTER_CONFIG)
            return response.code, response.body or b"", dict(response.headers.get_all())

        return await self._with_retries(attempt, safe, label="expected values", caller=caller)

    def status(self) -> dict:
        """A snapshot for /status (no secrets)."""
        return {
            "configured": True,
            "last_success": self.last_success,
            "last_failure": self.last_failure,
            "last_error": self.last_error,
            "requests": self.requests,
            "failures": self.failures,
            "budget": self.budget.status(),
            "realms": self.realms.status(),
            "configuration_errors": self.configuration_errors(),
            "invalid_ids": self.invalid_ids,
            "user_agent": self.user_agent,
        }

    def configuration_errors(self) -> list[dict]:
        """The configuration-class answers in force: code, method, what to do, since, next try."""
        now = time.time()
        return [
            {
                "code": problem["code"],
                "scope": scope if scope != "*" else "application",
                "method": problem["method"],
                "advice": _CONFIG_ADVICE.get(problem["code"], ""),
                "since": problem["since"],
                "last_seen": problem["last_seen"],
                "count": problem["count"],
                "next_try_in_seconds": max(0, round(problem["until"] - now)),
            }
            for scope, problem in sorted(self.config_problems.items())
        ]

    def health_reasons(self) -> list[str]:
        """Why the upstream side makes /status degraded (one sentence each; never the id)."""
        return [
            f"upstream configuration: {p['code']} on {p['method']}: {p['advice']}" for p in self.configuration_errors()
        ]

    def close(self) -> None:
        if self._http is not None and self._own_http:
            self._http.close()
        self._http = None
        self._loop = None

    # --- request machinery -----------------------------------------------------------
    def url_for(self, game: str, region: str, api_path: str) -> str:
        if game not in GAMES:
            raise ValueError(f"unknown game {game!r}")
        if region not in REGIONS:
            raise ValueError(f"unknown region {region!r}")
        api_path = api_path.strip("/")
        if self.base_url:
            return f"{self.base_url}/{game}/{region}/{api_path}/"
        return f"{HOSTS[(game, region)]}/{api_path}/"

    async def _by_ids(
        self,
        game: str,
        region: str,
        api_path: str,
        id_field: str,
        ids: Ids,
        fields: Fields,
        params: Params,
        caller: Caller,
    ) -> ById:
        wanted = _unique_ints(ids)
        if not wanted:
            return {}

        async def batch(chunk: list[int]) -> ById:
            query: dict[str, Any] = {id_field: ",".join(map(str, chunk))}
            if fields:
                query["fields"] = fields
            try:
                data, _ = await self._call(game, region, api_path, query, params, caller)
            except UpstreamBadRequest as exc:
                if not _names_invalid_id(exc, id_field):
                    raise
                # One invalid id sinks the whole list upstream: halve it until the bad ids stand
                # alone (about 2 log2(n) more requests per bad id); a bad id answers None, as an
                # unknown one does, and the others are served.
                if len(chunk) == 1:
                    self.invalid_ids += 1
                    return {chunk[0]: None}
                middle = len(chunk) // 2
                left, right = await asyncio.gather(batch(chunk[:middle]), batch(chunk[middle:]))
                return {**left, **right}
            data = data if isinstance(data, dict) else {}
            got = {int(k): v for k, v in data.items()}
            return {i: got.get(i) for i in chunk}

        size = ID_LIMITS.get(api_path, MAX_IDS_PER_REQUEST)
        parts = await asyncio.gather(*(batch(chunk) for chunk in _chunks(wanted, size)))
        merged: ById = {}
        for part in parts:
            merged.update(part)
        return merged

    async def _call(
        self,
        game: str,
        region: str,
        api_path: str,
        query: Mapping[str, Any],
        params: Params,
        caller: Caller = "other",
    ) -> tuple[Any, dict]:
        base = self.url_for(game, region, api_path)
        merged: dict[str, Any] = {}
        if self.language:
            merged["language"] = self.language
        merged.update(query)
        if params:
            merged.update({k: v for k, v in params.items() if k != "application_id" and v is not None})
        public_query = urllib.parse.urlencode(merged, safe=",")
        url = f"{base}?{urllib.parse.urlencode({'application_id': self._application_id})}"
        if public_query:
            url += "&" + public_query
        safe = f"{base}?{public_query}" if public_query else base
        label = f"{api_path} [{game}/{region}]"
        held = self._config_hold(api_path)
        if held is not None:
            code, seconds = held
            raise UpstreamUnavailable(
                f"{label}: not sent, the upstream answered {code} (a configuration problem; see /status)",
                int(seconds) + 1,
                upstream_message=code,
            )

        async def attempt() -> tuple[Any, dict]:
            response = await self._fetch(url, safe, caller, realm=region)
            if response.code >= 500:
                raise _Retryable(f"HTTP {response.code}")
            if response.code == 429:
                self.budget.note_refusal(caller)
                raise _Retryable("HTTP 429", limit=True)
            if response.code == 400:
                raise UpstreamBadRequest(f"GET {safe}: HTTP 400")
            if response.code != 200:
                raise UpstreamUnavailable(f"GET {safe}: HTTP {response.code}", RETRY_AFTER_CONFIG)
            try:
                body = ujson.loads(response.body or b"")
            except ValueError:
                raise _Retryable("invalid JSON in the answer") from None
            if not isinstance(body, dict):
                raise _Retryable("unexpected JSON in the answer")
            if body.get("status") == "ok":
                self._config_cleared(api_path)
                return body.get("data"), body.get("meta") or {}
            error: dict = body["error"] if isinstance(body.get("error"), dict) else {}
            message = str(error.get("message") or "UNKNOWN_ERROR")
            code = error.get("code")
            field = error.get("field")
            if message in _TRANSIENT_MESSAGES or code == 504:
                raise _Retryable(message, upstream_code=code, upstream_message=message)
            if message in _LIMIT_MESSAGES:
                self.budget.note_refusal(caller)  # slow down for everyone, not only this retry
                raise _Retryable(message, limit=True, upstream_code=code, upstream_message=message)
            text = self._scrub(f"GET {safe}: upstream error {code} {message}" + (f" (field {field})" if field else ""))
            if message in _CONFIG_MESSAGES:
                self._config_problem(message, api_path)
                raise UpstreamUnavailable(
                    text, RETRY_AFTER_CONFIG, upstream_code=code, upstream_message=message, field=field
                )
            raise UpstreamBadRequest(text, upstream_code=code, upstream_message=message, field=field)

        return await self._with_retries(attempt, safe, label, caller)

    async def _with_retries(
        self, attempt: Callable[[], Awaitable[T]], safe: str, label: str, caller: Caller = "live"
    ) -> T:
        live = caller == "live"
        retries = self.max_retries if live else self.background_retries
        last: _Retryable | None = None
        for number in range(retries + 1):
            if number and last is not None:
                if live:
                    await asyncio.sleep(self._delay(number - 1, last.limit))
                elif not last.congestion:  # after congestion the realm's gate waits the back-off
                    await asyncio.sleep(self._background_delay(number - 1))
            try:
                result = await attempt()
            except RealmCongested as exc:
                # A live call does not queue behind a congested realm: a fast 503 with Retry-After.
                raise UpstreamUnavailable(self._scrub(f"{label}: {exc}"), exc.retry_after) from None
            except _Retryable as exc:
                last = exc
                self._failed(f"{label}: {exc.description}")
                log.warning(
                    "upstream %s failed (attempt %d of %d): %s",
                    label,
                    number + 1,
                    retries + 1,
                    self._scrub(exc.description),
                )
                continue
            except UpstreamBadRequest as exc:
                # The upstream answered (it is healthy); our request was wrong. Not a failure.
                self.last_success = time.time()
                log.info("upstream %s rejected the request: %s", label, self._scrub(str(exc)))
                raise
            except UpstreamError as exc:
                self._failed(f"{label}: {exc.upstream_message or type(exc).__name__}")
                log.warning("upstream %s refused: %s", label, self._scrub(str(exc)))
                raise
            self.last_success = time.time()
            return result
        assert last is not None
        retry_after = RETRY_AFTER_LIMIT if last.limit else RETRY_AFTER_TRANSIENT
        attempts = retries + 1
        raise UpstreamUnavailable(
            self._scrub(f"GET {safe}: {last.description} ({attempts} attempt{'s' * (attempts > 1)})"),
            retry_after,
            upstream_code=last.upstream_code,
            upstream_message=last.upstream_message,
        )

    async def _fetch(
        self,
        url: str,
        safe: str,
        caller: Caller,
        *,
        headers: Mapping[str, str] | None = None,
        realm: str | None = None,
    ) -> HTTPResponse:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            # First use, or the client moved to another event loop (tests): the HTTP client and
            # the semaphore belong to one loop, so make fresh ones.
            if self._http is not None and self._own_http:
                self._http.close()
                self._http = None
            self._semaphore = asyncio.Semaphore(self.max_concurrency)
            self._loop = loop
        if self._http is None:
            self._http = AsyncHTTPClient(force_instance=True, max_clients=max(10, self.max_concurrency))
            self._own_http = True
        request = HTTPRequest(
            url,
            method="GET",
            connect_timeout=self.connect_timeout,
            request_timeout=self.request_timeout
            if caller == "live"
            else max(self.request_timeout, self.background_timeout),
            follow_redirects=True,
            headers={"Accept": "application/json", "Accept-Encoding": "gzip", **(headers or {})},
            user_agent=self.user_agent,
        )
        # The slots are held from just before the send until the answer (see UpstreamBudget): the
        # realm's first (a live call fails fast there while the realm backs off), then the
        # application's, then a socket, so a queued background call never blocks a live one.
        semaphore, http = self._semaphore, self._http
        assert semaphore is not None and http is not None  # made for this loop just above
        gate = self.realms.get(realm)
        async with contextlib.AsyncExitStack() as slots:
            if gate is not None:
                await slots.enter_async_context(gate.slot(caller))
            await slots.enter_async_context(self.budget.slot(caller))
            await slots.enter_async_context(semaphore)
            self.requests += 1
            try:
                response = await http.fetch(request, raise_error=False)
            except HTTPClientError as exc:
                if exc.code == 599:
                    raise self._congested(gate, self._describe_transport(exc)) from None
                if exc.response is None:  # pragma: no cover - raise_error=False returns these
                    raise self._congested(gate, f"HTTP {exc.code}") from None
                response = exc.response
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # connection refused, DNS, TLS, stream closed, ...
                raise self._congested(gate, self._describe_transport(exc)) from None
        if response.code == 599:
            raise self._congested(gate, self._describe_transport(response.error))
        if response.code >= 500:
            raise self._congested(gate, f"HTTP {response.code}")
        if gate is not None:
            gate.note_answer()
        return response

    def _congested(self, gate: RealmGate | None, description: str) -> _Retryable:
        """A timeout, reset or 5xx: the CDN's way of saying "slower" (server/upstream/realms.py)."""
        if gate is None:
            return _Retryable(description)
        gate.note_congestion(description.split(" (")[0])
        return _Retryable(description, congestion=True)

    # --- configuration problems --------------------------------------------------------
    def _config_hold(self, api_path: str) -> tuple[str, float] | None:
        """(code, seconds left) while a configuration answer holds this method's requests back."""
        now = time.time()
        for scope in ("*", api_path):
            problem = self.config_problems.get(scope)
            if problem is not None and problem["until"] > now:
                return problem["code"], problem["until"] - now
        return None

    def _config_problem(self, code: str, api_path: str) -> None:
        now = time.time()
        scope = api_path if code in _METHOD_SCOPED else "*"
        problem = self.config_problems.get(scope)
        if problem is None or problem["code"] != code:
            problem = self.config_problems[scope] = {"code": code, "method": api_path, "since": now, "count": 0}
        problem.update(last_seen=now, until=now + CONFIG_RETRY_SECONDS, method=api_path)
        problem["count"] += 1
        self.config_errors_by_code[code] = self.config_errors_by_code.get(code, 0) + 1
        if now - self._config_logged.get(code, -1e18) >= CONFIG_LOG_EVERY:
            self._config_logged[code] = now
            log.error(
                "upstream answered %s on %s: %s (nothing more is sent %s for %.0f s)",
                code,
                api_path,
                _CONFIG_ADVICE.get(code, ""),
                "to this method" if scope != "*" else "at all",
                CONFIG_RETRY_SECONDS,
            )

    def _config_cleared(self, api_path: str) -> None:
        if self.config_problems:
            for scope in ("*", api_path):
                if self.config_problems.pop(scope, None) is not None:
                    log.info("upstream configuration problem cleared (%s answered)", api_path)

    def _describe_transport(self, exc: BaseException | None) -> str:
        if exc is None:
            return "connection error"
        text = str(exc) or type(exc).__name__
        if "Timeout" in text or "timeout" in text.lower():
            return f"timeout ({text})"
        return f"connection error ({type(exc).__name__}: {text})"

    def _background_delay(self, retry_index: int) -> float:
        """2, 8, 18, 32 s ... (x 0.75-1.25), at most a minute: never a tight loop."""
        base = self.background_retry_base * (retry_index + 1) ** 2
        return min(BACKGROUND_RETRY_MAX, base * self._rng.uniform(0.75, 1.25))

    def _delay(self, retry_index: int, limit: bool) -> float:
        base = self.retry_base_delay * (5.0 if limit else 1.0) * (2**retry_index)
        return min(self.max_retry_delay, base * self._rng.uniform(0.5, 1.5))

    def _failed(self, text: str) -> None:
        self.failures += 1
        self.last_failure = time.time()
        self.last_error = self._scrub(text)[:200]

    def _safe_url(self, url: str) -> str:
        parts = urllib.parse.urlsplit(url)
        query = [
            (k, v)
            for k, v in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
            if k not in ("application_id", "access_token")
        ]
        return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query, safe=",")))

    def _scrub(self, text: str) -> str:
        """Belt and braces: no message may carry the application_id, whatever produced it."""
        secret = self._application_id
        if len(secret) >= 4 and secret in text:
            text = text.replace(secret, "***")
        return text


def _names_invalid_id(exc: UpstreamBadRequest, id_field: str) -> bool:
    """INVALID_ACCOUNT_ID (or any *_ID error naming the list's field): one id of the list is bad."""
    message = exc.upstream_message or ""
    return message == f"INVALID_{id_field.upper()}" or (
        message.startswith("INVALID_") and message.endswith("_ID") and exc.field == id_field
    )
