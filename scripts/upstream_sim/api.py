"""Offline stand-in for the Wargaming public API: API methods, Tornado handlers and make_app.

One process serves every real host: the first two path segments name the host's game and
region, the rest is the real API path::

    /{game}/{region}/{api_path}/?application_id=...&...
    /wot/eu/wot/account/info/?application_id=x&account_id=500000000,500000001
    /wotb/na/wgn/servers/info/?application_id=x&game=wotb

API methods (answers use the real envelope: ``{"status": "ok", "meta": {"count": N},
"data": {...}}``; errors arrive with HTTP 200 and ``{"status": "error", "error": {"code",
"message", "field", "value"}}``)::

    wot/account/info          account_id (<= 100, comma separated), fields
    wot/account/list          search, type (startswith | exact), limit (default and max 100), fields, language
    wot/tanks/stats           account_id (exactly one), tank_id (<= 100), fields
    wot/encyclopedia/vehicles tank_id, tier, type, nation, fields, limit (default and max 100), page_no
    wot/tanks/mastery         distribution (damage | xp), percentile (1-100, <= 10, comma separated),
                              tank_id (<= 100; none: every tank the distribution covers), fields:
                              {"distribution": {"<tank_id>": {"<percentile>": value} | null},
                               "updated_at"} (official.py: the world's players, once a simulated day;
                              SOURCE_NOT_AVAILABLE while a day's are computed past PUBLISHED_WAIT)
    wot/account/wtr           account_id (<= 100), fields: {"<account_id>": {"account_id", "rating"} | null}
                              (null below 50 battles)
    wot/account/tanks         account_id (<= 100), tank_id (<= 100), fields: {"<account_id>":
                              [{"statistics": {"wins", "battles"}, "mark_of_mastery", "tank_id"}] |
                              null} (the same figures as tanks/stats' "all" blocks)
    wot/clans/accountinfo     account_id (<= 100), fields: {"<account_id>": {"account_id",
                              "account_name", "joined_at", "role", "role_i18n", "clan": {"clan_id",
                              "tag", "name", "color", "created_at", "members_count", "emblems"}} |
                              null} (null: no clan; the same clan and role as clans/info)
    wot/clans/info            clan_id (<= 100), fields, members_key=id
    wot/clanratings/clans     clan_id (<= 100), fields
    wot/stronghold/claninfo   clan_id (<= 10), fields
    wgn/servers/info          game (wot, wotb, wows; comma separated; default: all); on every host

Limits, as strict as the real API:

- More ids than allowed: ``407 <FIELD>_LIST_LIMIT_EXCEEDED`` (a violation of kind ``ids_limit``).
- Requests per second per application_id (``--rps``, default 10 on the command line, 0 = off;
  ``make_app(rps=0)`` by default): a request arriving when ``rps`` or more requests of the same
  application_id arrived in the preceding 1.0 s (real time, never the simulated clock) is answered
  ``407 REQUEST_LIMIT_EXCEEDED`` (kind ``request_limit``). Refused requests count toward the window.
- Full-size answers: tanks/stats carries per tank the blocks all, clan, company, globalmap,
  regular_team, stronghold_defense, stronghold_skirmish and team (30 counters each) plus frags,
  in_garage, mark_of_mastery, max_frags, max_xp (several KB per tank); account/info statistics
  carries all, clan, company, historical, regular_team, stronghold_defense, stronghold_skirmish,
  team, frags and trees_cut; vehicles carry the encyclopedia record (default_profile,
  modules_tree, images, ...). ``fields`` (dotted, comma separated, ``-`` excludes) trims them.
- account/list: ``search`` missing: ``402 SEARCH_NOT_SPECIFIED``; type=startswith (the default)
  takes 3-24 characters (fewer: ``407 NOT_ENOUGH_SEARCH_LENGTH``; more, or anything but ASCII
  letters, digits and ``_``: ``407 INVALID_SEARCH``); type=exact takes up to 100 comma-separated
  names of 1-24 such characters (more names: ``407 SEARCH_LIST_LIMIT_EXCEEDED``); another type:
  ``407 INVALID_TYPE``; a limit that is not a positive integer: ``407 INVALID_LIMIT`` (above 100:
  100, as the real API); a language outside the real list: ``407 INVALID_LANGUAGE``. Matching is
  case-insensitive; answers are a list of {account_id, nickname} sorted by nickname
  (case-insensitively, then account_id). Searchable are the existing accounts among the first
  ``SEARCHABLE_IDS`` (20,000) ids of each region, created by the answer's instant: their
  nicknames (deterministic, ``ids.nickname``) are indexed on the first search in a region
  (about 0.2 s on the worker thread), so start-up stays instant. Simulated nicknames are not
  unique (the real ones are) and some hold a ``-`` (the real game allows none), so such a
  nickname is found only by a prefix before its ``-``.
- Strict mode (``--strict``, ``make_app(strict=True)``; off by default, and then none of this
  applies), as the real API behind its CDN:

  - The CDN's throttle per client address and realm (``throttle.py``; default rates eu 6, na 8,
    asia 8 requests/s; ``--throttle eu=6,na=8,asia=8`` or ``--throttle off`` sets them, also
    without ``--strict``; ``make_app(throttle={"eu": 6, ...} | "eu=6" | None)``). The realm is the
    region segment of the path (every game of a region shares it). A request arriving when
    ``rate`` or more requests of that address and realm arrived in the preceding 1.0 s (real time,
    never the simulated clock; stalled ones count too) *stalls*: it is never answered, held until
    the client disconnects or ``stall_seconds`` (default 60) pass, then its connection is closed
    without an answer. ``burst_factor`` x ``rate`` (default 2 x) arrivals within one second block
    that address and realm for ``block_seconds`` (default 20): every request then stalls, and a
    new burst during the block starts it over. A stalled request never reaches the API: it counts
    only in the stats' ``throttle`` block, not in ``total``, ``by_path``, the rps window or faults.
  - ``application_id=demo``: ``407 DEMO_APPLICATION_IS_BLOCKED``.
  - account/info, account/tanks, account/wtr, clans/accountinfo and tanks/stats holding any
    account id outside the region's range
    (``REGION_RANGES``: an NA id asked on EU, or 0): the whole call is ``407 INVALID_ACCOUNT_ID``,
    field ``account_id``, value the offending ids (comma separated); clans/info,
    clanratings/clans and stronghold/claninfo the same with ``INVALID_CLAN_ID`` / ``clan_id`` for
    clan ids outside the region's clan range (``clan_range()``). A list over the ids limit is still
    ``*_LIST_LIMIT_EXCEEDED``; ``invalid_account_id(region)`` / ``invalid_clan_id(region)`` name
    such ids (existing ones of the next region).
- About 10 % of accounts are veterans with 150-400 played tanks (``veteran_accounts()``).
- About 5 % of clan slots hold a disbanded clan: clans/info answers ``{"clan_id",
  "is_clan_disbanded": true, "updated_at"}`` with every other key null; clanratings/clans and
  stronghold/claninfo answer null; its former members have ``clan_id`` null.

Other endpoints::

    GET  /json/wn8exp.json    the frozen XVM expected-values table (--expected-values FILE as is,
                              else generated for the catalogue); /wn8exp.json is an alias
    GET  /json/wg/wn8exp.json the maintained table: every frozen row unchanged plus a generated row
                              (the values the world plays the tank with) for each catalogue vehicle
                              the frozen table lacks, header version a date after the frozen one's
                              (expected.py). Both tables, in XVM's {"header", "data"} layout:
                              ?strings=1 (or --expected-values-strings): every number as a string;
                              ?bad_rows=N: N malformed rows appended (no IDNum, non-numeric values);
                              ETag and Last-Modified, 304 with no body to a matching If-None-Match
                              or an If-Modified-Since not older than Last-Modified
    GET  /_sim/expected       {"wg": mode, "fail", "bumps", "versions", "rows", "last_modified",
                               "etags", "served": {"frozen"|"wg": {"200", "304", "503"}}}
    POST /_sim/expected       {"wg": "ok" | "garbage" (an HTML page, not JSON) | "truncated" (every
                               10th row dropped) | "format" (the rows under {"version", "tanks"}),
                               "bump": true | N (N new versions: the added rows' values move by up
                               to 2 %, new ETag and Last-Modified), "fail": N (the next N requests
                               of the wg table answer HTTP 503), "reset": true (all of it undone,
                               counts cleared)}
    GET  /_sim/clock          {"now", "offset", "frozen", "real_time"}
    POST /_sim/clock          {"now": ts} (frozen at ts; add "freeze": false to keep it running),
                              {"offset": s}, {"advance": s}, {"reset": true}
    GET  /_sim/faults         current fault settings
    POST /_sim/faults         {"latency_ms", "error_rate", "http_5xx_rate", "timeout_rate",
                               "limit_rate", "fail_next", "fail_mode", "hang_seconds", "seed",
                               "reset", and errors on demand (counted in the stats' faults):
                               "config_error": "INVALID_IP_ADDRESS" | "APPLICATION_IS_BLOCKED" |
                                 "INVALID_APPLICATION_ID" | "DEMO_APPLICATION_IS_BLOCKED" | null
                                 (every API request answered 407 with it; field application_id for
                                 INVALID_APPLICATION_ID, else null),
                               "disabled_methods": ["wot/stronghold/claninfo", ...] (405
                                 METHOD_DISABLED),
                               "method_errors": {"wot/clans/info": "SOURCE_NOT_AVAILABLE", ...}
                                 (that error; code 504 for SOURCE_NOT_AVAILABLE, 405
                                 METHOD_DISABLED, 404 METHOD_NOT_FOUND, 402 *_NOT_SPECIFIED, else
                                 407: faults.ERROR_CODES),
                               "failing_games": ["wows"] (a wgn/servers/info call whose game list,
                                 default all, holds one answers 504 SOURCE_NOT_AVAILABLE)}
                              Precedence: config_error, disabled_methods, method_errors,
                              failing_games, then the random faults.
    GET  /_sim/limits         {"rps": N, "window_seconds": 1.0}
    POST /_sim/limits         {"rps": N} (0 disables); {"reset": true} also forgets the windows
    GET  /_sim/throttle       {"rates": {"eu": 6, "na": 8, "asia": 8} | null (off), "block_seconds",
                               "burst_factor", "stall_seconds", "window_seconds": 1.0, "blocked":
                               [{"address", "region", "seconds_left"}]}
    POST /_sim/throttle       any of {"rates": {...} | null, "block_seconds", "burst_factor",
                               "stall_seconds"}; {"reset": true} forgets every window and block
                               (and drops the stalled requests); unknown keys or bad values: 400
    GET  /_sim/stats          {"total", "by_path", "by_endpoint", "faults", "since",
                               "max_per_second", "max_per_second_by_app", "violations":
                               {"ids_limit", "request_limit", "total"}, "violations_by_path",
                               "bytes", "bytes_by_path", "throttle": {"stalled",
                               "stalled_by_region", "blocks", "max_per_second_by_region" (the
                               busiest second of any one address in the realm, counted with the
                               throttle off too)}} (DELETE or POST {"reset": true} clears; the
                               throttle's windows and blocks stay: /_sim/throttle resets those)
    GET  /_sim/accounts?region=eu&n=10&start=ID   existing account ids (existing_accounts())
    GET  /_sim/population?region=eu&days=30&through=YYYY-MM-DD
                              the world's own per-tank sums over the `days` days ending at the end
                              of `through` (default: ending now), over a simple random sample of
                              the region's accounts that played in them (truth.py: a uniform draw
                              of ids over the whole range, until 5,000 played): {"region", "days",
                              "from", "to", "ids_drawn", "players", "tanks": {"<tank_id>":
                              {"players", "battles", "wins", "damage_dealt"}}}; computed on a
                              thread and a world of its own (a few seconds the first time), then kept
    GET  /_sim/veterans?region=eu&n=10            veteran account ids (veteran_accounts())
    GET  /_sim/clans?region=eu&n=10               active clan ids (existing_clans())
    GET  /_sim/clans/disbanded?region=eu&n=10     disbanded clan ids (disbanded_clans())
    GET  /_sim/clans/disband  clans disbanded at run time {"disbanded": {"eu": {"<id>": ts}}}
    POST /_sim/clans/disband  {"region": "eu", "clan_id": N} disbands an active clan now
                              (404 when there is no such active clan); {"reset": true} undoes all
    GET  /_sim/icons/vehicle/{small|contour|big}/{tank_id}.png   a vehicle's icon (icons.py: a
                              PNG of the real icon's size drawn from its type, nation and tier;
                              404 for an unknown tank): wot/encyclopedia/vehicles names these
                              as its records' ``images``, at the origin the request reached

Every API request also accepts ``_sim_now=<unix ts>``: answer "as of" that instant.
The throttle, faults, limits and counters apply to the API paths only (never to the
expected-values tables or /_sim/*). The "timeout" fault holds the request until the client
disconnects, ``hang_seconds`` pass, or the faults are cleared, then answers 504.
An API request meets, in order: the throttle (stall), the rps limit (REQUEST_LIMIT_EXCEEDED),
the errors on demand, the random faults, then the method (application_id checks, strict id
ranges, parameters).

Account ids follow the real ranges (eu 500,000,000+, na 1,000,000,000+, asia 2,000,000,000+);
clan ids are the account range divided by 1000 (eu 500,000+, na 1,000,000+, asia 2,000,000+),
each clan drawing its members from a slice of 100 consecutive account ids.
The 2018 vehicle list has no premium flag; ``is_premium`` is then a stable stand-in (~12 % of
tiers 2-8), not the real value.

All data is generated deterministically from the ids (stable hashes, never Python's salted
``hash()``), and player statistics grow over simulated time: every account plays a
deterministic number of battles per day from its creation date on.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import multiprocessing
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import tornado.web
import ujson

from . import icons, official, truth
from .clock import SimClock
from .expected import ExpectedTables, http_date, not_modified
from .faults import Faults, config_error_field, error_code
from .ids import (
    DAY,
    GAMES,
    REGION_RANGES,
    REGIONS,
    disbanded_clans,
    existing_accounts,
    existing_clans,
    veteran_accounts,
)
from .limits import Counters, RateLimiter
from .methods import (
    METHODS,
    REGION_IDS,
    ApiError,
    RawJson,
    check_region_ids,
    error_body,
)
from .throttle import (
    DEFAULT_BLOCK_SECONDS,
    DEFAULT_BURST_FACTOR,
    DEFAULT_RATES,
    DEFAULT_STALL_SECONDS,
    Throttle,
    parse_throttle,
)
from .world import World

log = logging.getLogger("upstream_sim")

# --------------------------------------------------------------------------------------
# State
# --------------------------------------------------------------------------------------


class SimState:
    def __init__(
        self,
        world: World,
        clock: SimClock,
        faults: Faults,
        application_id: str | None = None,
        rps: int = 0,
        expected_values_strings: bool = False,
        strict: bool = False,
        throttle: Throttle | None = None,
    ):
        self.world = world
        self.clock = clock
        self.faults = faults
        self.application_id = application_id
        self.strict = strict
        self.limiter = RateLimiter(rps)
        self.throttle = throttle if throttle is not None else Throttle(None)
        self.counters = Counters()
        self.expected_values_strings = expected_values_strings
        self.expected = ExpectedTables(world, clock.now())
        # World access (generation, caches) happens on this one thread only.
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="upstream-sim")
        self._release: asyncio.Event | None = None
        self._stall_release: asyncio.Event | None = None
        self._truth: ProcessPoolExecutor | None = None
        self._published: dict[tuple[str, int], Future] = {}

    def truth(self) -> ProcessPoolExecutor:
        """A process of its own, with a world of the same data, for /_sim/population and the
        published distributions (truth.py): summing thousands of accounts never holds the API's
        worker nor its interpreter lock, and both figures share the sample's profiles there."""
        if self._truth is None:
            world = self.world
            self._truth = ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=truth.start_process,
                initargs=(
                    world.vehicles_source if world.vehicles_source != "generated" else "",
                    world.expected_source if world.expected_source != "generated" else None,
                    world.battle_seconds,
                    world.published_players,
                ),
            )
        return self._truth

    def published(self, region: str, now: float) -> Future:
        """The published distributions of the simulated day of `now` (official.py), computed once in
        the truth's process and kept where the API's worker reads them (official.distributions):
        the same future for every request until it is done."""
        key = (region, int(now // DAY))
        job = self._published.get(key)
        if job is None:
            job = self._published[key] = self.truth().submit(truth.distributions_job, region, now)
            data_key = self.world.data_key
            job.add_done_callback(
                lambda done: done.exception() or official.remember(data_key, region, now, done.result())
            )
            for old in [k for k in self._published if k[1] < key[1] - 1]:
                del self._published[old]
        return job

    def close(self) -> None:
        """Stop the truth's process, killed: what it is computing is dropped (shutdown alone waits
        for it, and a cold day's figures take a while)."""
        if self._truth is not None:
            for process in list(getattr(self._truth, "_processes", {}).values()):
                process.kill()
            self._truth.shutdown(wait=False, cancel_futures=True)
            self._truth = None

    def reset_stats(self) -> None:
        self.counters.reset()
        self.throttle.reset_stats()

    def describe_stats(self) -> dict:
        return {**self.counters.describe(), "throttle": self.throttle.stats()}

    @property
    def faults_served(self) -> dict[str, int]:
        return self.counters.faults

    def expected_values(self, strings: bool, bad_rows: int) -> bytes:
        """The frozen expected-values table (``/json/wn8exp.json``) as served."""
        return self.expected.body("frozen", strings, bad_rows)[0]

    @property
    def release_event(self) -> asyncio.Event:
        if self._release is None:
            self._release = asyncio.Event()
        return self._release

    @property
    def stall_release_event(self) -> asyncio.Event:
        if self._stall_release is None:
            self._stall_release = asyncio.Event()
        return self._stall_release

    def release_fault_hangs(self) -> None:
        """Let every request held by the timeout fault finish now."""
        if self._release is not None:
            self._release.set()
            self._release = None

    def release_stalls(self) -> None:
        """Drop every request the throttle stalls now (closed without an answer)."""
        if self._stall_release is not None:
            self._stall_release.set()
            self._stall_release = None

    def release_hangs(self) -> None:
        """Let every held request go now: the timeout fault's and the throttle's (used on shutdown)."""
        self.release_fault_hangs()
        self.release_stalls()


# --------------------------------------------------------------------------------------
# HTTP layer
# --------------------------------------------------------------------------------------


class _Base(tornado.web.RequestHandler):
    def initialize(self, sim: SimState) -> None:
        self.sim = sim

    def set_default_headers(self) -> None:
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.set_header("Server", "upstream-sim")

    def send(self, obj: Any, status: int = 200) -> None:
        self.set_status(status)
        self.finish(ujson.dumps(obj, ensure_ascii=False))

    def json_body(self) -> dict:
        if not self.request.body:
            return {}
        try:
            body = ujson.loads(self.request.body)
        except ValueError:
            raise tornado.web.HTTPError(400, "body must be JSON") from None
        if not isinstance(body, dict):
            raise tornado.web.HTTPError(400, "body must be a JSON object")
        return body

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        reason = self._reason
        exc = kwargs.get("exc_info", (None, None))[1]
        if isinstance(exc, tornado.web.HTTPError) and exc.log_message:
            reason = exc.log_message
        self.finish(ujson.dumps({"status": "error", "error": {"code": status_code, "message": reason}}))

    def check_xsrf_cookie(self) -> None:  # a test tool: plain JSON posts
        return None


class ApiHandler(_Base):
    client_gone = False
    _gone: asyncio.Event | None = None
    api_path = ""

    def on_connection_close(self) -> None:
        self.client_gone = True
        if self._gone is not None:
            self._gone.set()

    def send(self, obj: Any, status: int = 200) -> None:
        self.send_bytes(ujson.dumps(obj, ensure_ascii=False).encode(), status)

    def send_bytes(self, body: bytes, status: int = 200) -> None:
        self.sim.counters.sent(self.api_path, len(body))
        self.set_status(status)
        self.finish(body)

    async def get(self, game: str, region: str, path: str) -> None:
        self.api_path = api_path = path.strip("/")
        sim = self.sim
        # The CDN in front of the API: over the rate, the request is never answered.
        if not sim.throttle.arrive(self.request.remote_ip or "", region):
            await self._stall()
            return
        self._args = {name: self.get_argument(name) for name in self.request.arguments}
        app_id = self._args.get("application_id")
        sim.counters.request(game, region, api_path, app_id)
        allowed = True
        if app_id:
            allowed = sim.limiter.arrive(app_id)
        faults = sim.faults
        if faults.latency_ms > 0:
            await asyncio.sleep(faults.latency_ms / 1000.0)
        if not allowed:
            sim.counters.violation("request_limit", api_path)
            self.send(error_body(407, "REQUEST_LIMIT_EXCEEDED", None, None))
            return
        demanded = faults.on_demand_error(api_path, self._servers_games() if api_path == "wgn/servers/info" else None)
        if demanded:
            kind, message = demanded
            sim.counters.fault(kind)
            field = config_error_field(message) if kind == "config_error" else None
            value = app_id if field == "application_id" else None
            self.send(error_body(error_code(message), message, field, value))
            return
        fault = faults.pick()
        if fault:
            sim.counters.fault(fault)
            await self._serve_fault(fault)
            return
        if (
            api_path == "wot/tanks/mastery"
            and self._args.get("distribution") in official.DISTRIBUTIONS
            and not await self._published(region)
        ):
            # Still being computed (the first request of a simulated day on a cold world): the
            # real API's transient error, before the client's timeout; a retry finds it ready.
            self.send(error_body(504, "SOURCE_NOT_AVAILABLE"))
            return
        try:
            # Answers are built on the simulator's one worker thread, so the event loop keeps
            # accepting (and time-stamping) requests while a veteran's megabyte is generated.
            body = await asyncio.get_running_loop().run_in_executor(sim.worker, self._build, game, region, api_path)
            if not self.client_gone:
                self.send_bytes(body)
        except ApiError as exc:
            if exc.message.endswith("_LIST_LIMIT_EXCEEDED"):
                sim.counters.violation("ids_limit", api_path)
            self.send(exc.body(), exc.http_status)

    post = get

    async def _published(self, region: str) -> bool:
        """The day's published distributions, computed on the truth's thread and world (thousands of
        accounts) so that the answer built on the API's worker reads them from the cache; False
        when they are not ready within PUBLISHED_WAIT seconds (they go on being computed)."""
        if region not in REGION_RANGES:
            return True  # the answer says what is wrong
        try:
            now = float(self._args.get("_sim_now") or self.sim.clock.now())
        except ValueError:
            return True
        job = self.sim.published(region, now)
        try:
            await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(job)), PUBLISHED_WAIT)
        except TimeoutError:
            return False
        return True

    def _servers_games(self) -> list[str] | None:
        """The games a wgn/servers/info call asks for (default: all); None when one is invalid."""
        raw = self._args.get("game")
        games = [g.strip() for g in raw.split(",") if g.strip()] if raw else list(GAMES)
        return games if all(g in GAMES for g in games) else None

    def _build(self, game: str, region: str, api_path: str) -> bytes:
        answer = self._answer(game, region, api_path, self._args)
        data = answer["data"]
        if isinstance(data, dict) and any(isinstance(v, RawJson) for v in data.values()):
            parts = [
                ujson.dumps(k).encode() + b":" + (v.body if isinstance(v, RawJson) else ujson.dumps(v).encode())
                for k, v in data.items()
            ]
            return (
                b'{"status":"ok","meta":'
                + ujson.dumps(answer["meta"]).encode()
                + b',"data":{'
                + b",".join(parts)
                + b"}}"
            )
        body = ujson.dumps(answer, ensure_ascii=False).encode()
        if api_path == "wot/encyclopedia/vehicles":  # the icons' URLs at the origin this request reached
            body = body.replace(_json_text(icons.ORIGIN), _json_text(self._origin()))
        return body

    def _origin(self) -> str:
        return f"{self.request.protocol}://{self.request.host}"

    def _answer(self, game: str, region: str, api_path: str, args: dict[str, str]) -> dict:
        arg = args.get
        app_id = arg("application_id")
        if not app_id:
            raise ApiError(402, "APPLICATION_ID_NOT_SPECIFIED", "application_id")
        strict = self.sim.strict
        if strict and app_id == "demo":
            raise ApiError(407, "DEMO_APPLICATION_IS_BLOCKED")
        expected = self.sim.application_id
        if app_id == "invalid" or (expected and app_id != expected):
            raise ApiError(407, "INVALID_APPLICATION_ID", "application_id", app_id)
        entry = METHODS.get(api_path)
        if entry is None or game not in entry[0]:
            raise ApiError(404, "METHOD_NOT_FOUND", "method")
        if strict and api_path in REGION_IDS:
            check_region_ids(region, arg, *REGION_IDS[api_path])
        now = self.sim.clock.now()
        override = arg("_sim_now")
        if override:
            try:
                now = float(override)
            except ValueError:
                raise ApiError(407, "INVALID_SIM_NOW", "_sim_now", override) from None
        data, meta = entry[1](self.sim.world, game, region, arg, now)
        return {"status": "ok", "meta": meta, "data": data}

    async def _hold(self, seconds: float, release: asyncio.Event) -> None:
        """Wait until the client disconnects, ``release`` is set, or ``seconds`` pass."""
        if self.client_gone:
            return
        self._gone = asyncio.Event()
        waits = [asyncio.ensure_future(release.wait()), asyncio.ensure_future(self._gone.wait())]
        try:
            await asyncio.wait(waits, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()

    async def _stall(self) -> None:
        """The CDN's throttle: hold the request unanswered, then drop the connection without an answer."""
        sim = self.sim
        await self._hold(sim.throttle.stall_seconds, sim.stall_release_event)
        request = self.request
        logging.getLogger("tornado.access").warning(
            "--- %s %s (%s) stalled %.2fs by the throttle, %s",
            request.method,
            _redact(request.uri or ""),
            request.remote_ip,
            request.request_time(),
            "client gone" if self.client_gone else "connection closed unanswered",
        )
        self.detach().close()  # marks the handler finished: nothing is ever written

    async def _serve_fault(self, fault: str) -> None:
        if fault == "timeout":
            # Hang until the client gives up, the simulator is released, or hang_seconds pass.
            await self._hold(self.sim.faults.hang_seconds, self.sim.release_event)
            if self.client_gone:
                return
            self.send(error_body(504, "SOURCE_NOT_AVAILABLE"), 504)
        elif fault == "5xx":
            status = self.sim.faults.rng.choice([500, 502, 503, 504])
            self.set_header("Content-Type", "text/html")
            self.set_status(status)  # sets self._reason
            self.send_bytes(f"<html><body><h1>{status} {self._reason}</h1></body></html>".encode(), status)
        elif fault == "limit":
            self.send(error_body(407, "REQUEST_LIMIT_EXCEEDED"))
        else:
            self.send(error_body(504, "SOURCE_NOT_AVAILABLE"))


def _json_text(text: str) -> bytes:
    """`text` as it stands inside a JSON string of ujson's (which writes / as \\/)."""
    return ujson.dumps(text).encode()[1:-1]


class IconHandler(_Base):
    """A vehicle's icon (icons.py): a PNG cached a day, as a static file; 404 for an unknown tank."""

    def get(self, size: str, tank_id: str) -> None:
        vehicle = self.sim.world.vehicles.get(int(tank_id))
        if vehicle is None:
            raise tornado.web.HTTPError(404, "no such vehicle")
        self.set_header("Content-Type", "image/png")
        self.set_header("Cache-Control", "public, max-age=86400")
        self.finish(icons.vehicle_png(size, vehicle))


class NotFoundHandler(_Base):
    def get(self, *args: Any) -> None:
        self.send(error_body(404, "METHOD_NOT_FOUND", "method"), 404)

    post = get


class ExpectedValuesHandler(_Base):
    """An XVM expected-values table (``table``: "frozen" or "wg"), with ETag / Last-Modified / 304."""

    def initialize(self, sim: SimState, table: str = "frozen") -> None:
        self.sim, self.table = sim, table

    def get(self) -> None:
        strings = self.get_argument("strings", None)
        as_strings = self.sim.expected_values_strings if strings is None else strings not in ("0", "false", "")
        try:
            bad_rows = max(0, min(10_000, int(self.get_argument("bad_rows", "0") or 0)))
        except ValueError:
            raise tornado.web.HTTPError(400, "bad_rows must be an integer") from None
        tables = self.sim.expected
        if tables.take_failure(self.table):
            tables.count(self.table, 503)
            self.set_header("Content-Type", "text/html")
            self.set_status(503)
            self.finish(b"<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>")
            return
        body, etag = tables.body(self.table, as_strings, bad_rows)
        last_modified = tables.last_modified(self.table)
        self.set_header("ETag", etag)
        self.set_header("Last-Modified", http_date(last_modified))
        self.set_header("Cache-Control", "public, max-age=3600")
        if not_modified(self.request.headers, etag, last_modified):
            tables.count(self.table, 304)
            self.set_status(304)
            self.finish()
            return
        tables.count(self.table, 200)
        self.finish(body)


class ExpectedControlHandler(_Base):
    def get(self) -> None:
        self.send(self.sim.expected.describe())

    def post(self) -> None:
        try:
            self.sim.expected.update(self.json_body())
        except (TypeError, ValueError) as exc:
            raise tornado.web.HTTPError(400, str(exc)) from None
        self.send(self.sim.expected.describe())


class ThrottleHandler(_Base):
    def get(self) -> None:
        self.send(self.sim.throttle.describe())

    def post(self) -> None:
        body = self.json_body()
        try:
            self.sim.throttle.update(body)
        except (TypeError, ValueError) as exc:
            raise tornado.web.HTTPError(400, str(exc)) from None
        if body.get("reset"):
            self.sim.release_stalls()
        self.send(self.sim.throttle.describe())


class ClockHandler(_Base):
    def get(self) -> None:
        self.send(self.sim.clock.describe())

    def post(self) -> None:
        try:
            self.sim.clock.set(self.json_body())
        except (TypeError, ValueError) as exc:
            raise tornado.web.HTTPError(400, str(exc)) from None
        self.send(self.sim.clock.describe())


class FaultsHandler(_Base):
    def get(self) -> None:
        self.send(self.sim.faults.describe())

    def post(self) -> None:
        try:
            self.sim.faults.update(self.json_body())
        except (TypeError, ValueError) as exc:
            raise tornado.web.HTTPError(400, str(exc)) from None
        if not (self.sim.faults.timeout_rate or (self.sim.faults.fail_next and self.sim.faults.fail_mode == "timeout")):
            self.sim.release_fault_hangs()
        self.send(self.sim.faults.describe())


class LimitsHandler(_Base):
    def get(self) -> None:
        self.send(self.sim.limiter.describe())

    def post(self) -> None:
        body = self.json_body()
        unknown = set(body) - {"rps", "reset"}
        if unknown:
            raise tornado.web.HTTPError(400, f"unknown keys: {', '.join(sorted(unknown))}")
        try:
            if "rps" in body:
                if isinstance(body["rps"], bool) or not isinstance(body["rps"], (int, float)):
                    raise ValueError("rps must be a number")
                self.sim.limiter.set_rps(int(body["rps"]))
        except (TypeError, ValueError) as exc:
            raise tornado.web.HTTPError(400, str(exc)) from None
        if body.get("reset"):
            self.sim.limiter.windows.clear()
        self.send(self.sim.limiter.describe())


class StatsHandler(_Base):
    def get(self) -> None:
        self.send(self.sim.describe_stats())

    def post(self) -> None:
        if self.json_body().get("reset"):
            self.sim.reset_stats()
        self.send(self.sim.describe_stats())

    def delete(self) -> None:
        self.sim.reset_stats()
        self.send(self.sim.describe_stats())


class DisbandHandler(_Base):
    def describe(self) -> dict:
        return {
            "disbanded": {
                region: {str(c): ts for c, ts in clans.items()}
                for region, clans in self.sim.world.disbanded.items()
                if clans
            }
        }

    def get(self) -> None:
        self.send(self.describe())

    def post(self) -> None:
        body = self.json_body()
        world = self.sim.world
        if body.get("reset"):
            world.disbanded.clear()
        if "clan_id" in body:
            region = body.get("region", "eu")
            if region not in REGION_RANGES:
                raise tornado.web.HTTPError(400, "region must be eu, na or asia")
            try:
                clan_id = int(body["clan_id"])
            except (TypeError, ValueError):
                raise tornado.web.HTTPError(400, "clan_id must be an integer") from None
            if not world.disband(region, clan_id, self.sim.clock.now()):
                raise tornado.web.HTTPError(404, "no such active clan")
        elif not body.get("reset"):
            raise tornado.web.HTTPError(400, 'send {"region", "clan_id"} or {"reset": true}')
        self.send(self.describe())


# Seconds a wot/tanks/mastery request waits for its day's distributions (below the service's
# background timeout, 15 s) before it answers SOURCE_NOT_AVAILABLE.
PUBLISHED_WAIT = 8.0

LISTS = {
    "accounts": existing_accounts,
    "veterans": veteran_accounts,
    "clans": existing_clans,
    "disbanded": disbanded_clans,
}


class ListHandler(_Base):
    def initialize(self, sim: SimState, kind: str) -> None:
        self.sim, self.kind = sim, kind

    def get(self) -> None:
        region = self.get_argument("region", "eu")
        if region not in REGION_RANGES:
            raise tornado.web.HTTPError(400, "region must be eu, na or asia")
        try:
            n = min(10_000, max(1, int(self.get_argument("n", "10"))))
            start = self.get_argument("start", None)
            start = int(start) if start else None
        except ValueError:
            raise tornado.web.HTTPError(400, "n and start must be integers") from None
        self.send({"region": region, "ids": LISTS[self.kind](region, n, start)})


class PopulationHandler(_Base):
    async def get(self) -> None:
        region = self.get_argument("region", "eu")
        if region not in REGION_RANGES:
            raise tornado.web.HTTPError(400, "region must be eu, na or asia")
        try:
            days = int(self.get_argument("days", "30"))
            through = self.get_argument("through", None)
            end = (
                datetime.datetime.fromisoformat(through).replace(tzinfo=datetime.UTC).timestamp() + DAY
                if through
                else self.sim.clock.now()
            )
        except ValueError:
            raise tornado.web.HTTPError(400, "days must be an integer and through a date (YYYY-MM-DD)") from None
        if not 1 <= days <= 90:
            raise tornado.web.HTTPError(400, "days must be 1-90")
        loop = asyncio.get_running_loop()
        self.send(await loop.run_in_executor(self.sim.truth(), truth.population_job, region, days, end))


class IndexHandler(_Base):
    def get(self) -> None:
        self.send(
            {
                "simulator": "upstream_sim",
                "url_scheme": "/{game}/{region}/{api_path}/?application_id=...",
                "games": list(GAMES),
                "regions": list(REGIONS),
                "methods": sorted(METHODS),
                "vehicles": self.sim.world.vehicles_source,
                "expected_values": self.sim.world.expected_source,
                "rps": self.sim.limiter.rps,
                "strict": self.sim.strict,
                "throttle": self.sim.throttle.rates,
                "control": [
                    "/_sim/clock",
                    "/_sim/faults",
                    "/_sim/limits",
                    "/_sim/throttle",
                    "/_sim/expected",
                    "/_sim/stats",
                    "/_sim/accounts",
                    "/_sim/population",
                    "/_sim/veterans",
                    "/_sim/clans",
                    "/_sim/clans/disbanded",
                    "/_sim/clans/disband",
                    icons.PATH,
                    "/json/wn8exp.json",
                    "/json/wg/wn8exp.json",
                    "/wn8exp.json",
                ],
            }
        )


def _redact(uri: str) -> str:
    """The simulator's access log never shows an application_id either."""
    if "application_id=" not in uri:
        return uri
    path, _, query = uri.partition("?")
    parts = ["application_id=***" if p.startswith("application_id=") else p for p in query.split("&")]
    return f"{path}?{'&'.join(parts)}"


def _log_request(handler: tornado.web.RequestHandler) -> None:
    status = handler.get_status()
    level = logging.INFO if status < 400 else logging.WARNING if status < 500 else logging.ERROR
    request = handler.request
    logging.getLogger("tornado.access").log(
        level,
        "%d %s %s (%s) %.2fms",
        status,
        request.method,
        _redact(request.uri or ""),
        request.remote_ip,
        1000.0 * request.request_time(),
    )


_STRICT_DEFAULT: Any = object()  # make_app(throttle=...) not given


def make_app(
    vehicles: str | Path | None = None,
    expected_values: str | Path | None = None,
    clock_offset: float = 0.0,
    now: float | None = None,
    latency_ms: float = 0.0,
    error_rate: float = 0.0,
    http_5xx_rate: float = 0.0,
    timeout_rate: float = 0.0,
    limit_rate: float = 0.0,
    hang_seconds: float = 30.0,
    fault_seed: int | None = None,
    application_id: str | None = None,
    rps: int = 0,
    expected_values_strings: bool = False,
    strict: bool = False,
    throttle: Any = _STRICT_DEFAULT,
    throttle_block_seconds: float = DEFAULT_BLOCK_SECONDS,
    throttle_burst_factor: float = DEFAULT_BURST_FACTOR,
    throttle_stall_seconds: float = DEFAULT_STALL_SECONDS,
    battle_seconds: float | None = None,
    published_players: int | None = None,
    **settings: Any,
) -> tornado.web.Application:
    """Build the simulator application; ``app.sim`` is its state (world, clock, faults, limiter, counters).

    ``vehicles``: catalogue file (default: ../shared/data/vehicles-2018-06.json when present,
    else a generated catalogue; pass ``"generated"`` to force the generated one).
    ``application_id``: when set, any other value answers INVALID_APPLICATION_ID.
    ``rps``: requests per second per application_id (0, the default here, disables the limit;
    the command line's default is 10, like the real API).
    ``strict``: the real API's refusals (DEMO_APPLICATION_IS_BLOCKED, INVALID_ACCOUNT_ID /
    INVALID_CLAN_ID for ids outside the region's range) and, unless ``throttle`` says otherwise,
    the CDN's throttle at ``DEFAULT_RATES`` (eu 6, na 8, asia 8 requests/s per address).
    ``throttle``: per-region rates ({"eu": 6, ...}), a ``--throttle`` spec string ("eu=6,na=8",
    "off"), or None (off); a dict holding "rates" may also set "block_seconds", "burst_factor"
    and "stall_seconds". Default: ``DEFAULT_RATES`` when strict, else off.
    ``battle_seconds``: a playing day's battles one every that many seconds before its session's end
    (a session seen battle by battle), instead of all at its end (None, the default).
    """
    throttle_settings = {
        "block_seconds": throttle_block_seconds,
        "burst_factor": throttle_burst_factor,
        "stall_seconds": throttle_stall_seconds,
    }
    if throttle is _STRICT_DEFAULT:
        rates = dict(DEFAULT_RATES) if strict else None
    elif isinstance(throttle, str):
        rates = parse_throttle(throttle)
    elif isinstance(throttle, dict) and "rates" in throttle:
        rates = throttle["rates"]
        throttle_settings.update({k: v for k, v in throttle.items() if k != "rates"})
    else:
        rates = throttle
    world = World(
        vehicles=None if vehicles is None else ("" if vehicles == "generated" else vehicles),
        expected_values=expected_values,
        battle_seconds=battle_seconds,
    )
    if published_players:
        world.published_players = published_players
    sim = SimState(
        world,
        SimClock(clock_offset, now),
        Faults(latency_ms, error_rate, http_5xx_rate, timeout_rate, limit_rate, hang_seconds, fault_seed),
        application_id,
        rps=rps,
        expected_values_strings=expected_values_strings,
        strict=strict,
        throttle=Throttle(rates, **throttle_settings),
    )
    kw = {"sim": sim}
    settings.setdefault("log_function", _log_request)
    app = tornado.web.Application(
        [
            (r"/", IndexHandler, kw),
            (r"/wn8exp\.json", ExpectedValuesHandler, kw),
            (r"/json/wn8exp\.json", ExpectedValuesHandler, kw),
            (r"/json/wg/wn8exp\.json", ExpectedValuesHandler, {"sim": sim, "table": "wg"}),
            (r"/_sim/expected/?", ExpectedControlHandler, kw),
            (r"/_sim/throttle/?", ThrottleHandler, kw),
            (r"/_sim/clock/?", ClockHandler, kw),
            (r"/_sim/faults/?", FaultsHandler, kw),
            (r"/_sim/limits/?", LimitsHandler, kw),
            (r"/_sim/stats/?", StatsHandler, kw),
            (r"/_sim/accounts/?", ListHandler, {"sim": sim, "kind": "accounts"}),
            (r"/_sim/population/?", PopulationHandler, kw),
            (r"/_sim/veterans/?", ListHandler, {"sim": sim, "kind": "veterans"}),
            (r"/_sim/clans/disband/?", DisbandHandler, kw),
            (r"/_sim/clans/disbanded/?", ListHandler, {"sim": sim, "kind": "disbanded"}),
            (r"/_sim/clans/?", ListHandler, {"sim": sim, "kind": "clans"}),
            (icons.PATH + r"/(small|contour|big)/([0-9]{1,9})\.png", IconHandler, kw),
            (r"/(wot|wotb|wows)/(eu|na|asia)/([a-z0-9_]+(?:/[a-z0-9_]+)*)/?", ApiHandler, kw),
            (r"/(.*)", NotFoundHandler, kw),
        ],
        **settings,
    )
    app.sim = sim
    return app
