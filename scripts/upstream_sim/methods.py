"""The simulator's API methods: each answers one Wargaming API path from the world, as strictly as
the real API (id limits, parameter errors, the `fields` filter); api.py's docstring lists them and
its handlers serve them."""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from . import official
from .ids import (
    GAMES,
    MAX_IDS,
    MAX_STRONGHOLD_IDS,
    MAX_VEHICLE_PAGE,
    REGION_RANGES,
    account_created_at,
    account_exists,
    account_in_region,
    clan_in_region,
    nickname,
)
from .world import World

# --------------------------------------------------------------------------------------
# "fields" parameter (include paths, "-path" excludes), applied per data value; never mutates
# --------------------------------------------------------------------------------------


def _include(obj: Any, paths: list[list[str]]) -> Any:
    if isinstance(obj, list):
        return [_include(x, paths) for x in obj]
    if not isinstance(obj, dict):
        return obj
    out: dict = {}
    grouped: dict[str, list[list[str]]] = {}
    for path in paths:
        grouped.setdefault(path[0], []).append(path[1:])
    for key, rests in grouped.items():
        if key not in obj:
            continue
        if any(not r for r in rests):
            out[key] = obj[key]
        else:
            out[key] = _include(obj[key], rests)
    return out


def _exclude(obj: Any, path: list[str]) -> Any:
    """A copy of ``obj`` without ``path`` (only the containers on the path are copied)."""
    if isinstance(obj, list):
        return [_exclude(x, path) for x in obj]
    if isinstance(obj, dict) and path[0] in obj:
        out = dict(obj)
        if len(path) == 1:
            del out[path[0]]
        else:
            out[path[0]] = _exclude(obj[path[0]], path[1:])
        return out
    return obj


def apply_fields(value: Any, fields: str | None) -> Any:
    """The real API's ``fields``: dotted include paths and ``-path`` excludes; ``value`` is left as is."""
    if value is None or not fields:
        return value
    parts = [p.strip() for p in fields.split(",") if p.strip()]
    includes = [p.split(".") for p in parts if not p.startswith("-")]
    excludes = [p[1:].split(".") for p in parts if p.startswith("-") and len(p) > 1]
    if includes:
        value = _include(value, includes)
    for path in excludes:
        value = _exclude(value, path)
    return value


# --------------------------------------------------------------------------------------
# API methods
# --------------------------------------------------------------------------------------


class ApiError(Exception):
    def __init__(self, code: int, message: str, field: str | None = None, value: Any = None, http_status: int = 200):
        super().__init__(message)
        self.code, self.message, self.field, self.value, self.http_status = code, message, field, value, http_status

    def body(self) -> dict:
        return error_body(self.code, self.message, self.field, self.value)


def error_body(code: int, message: str, field: str | None = None, value: Any = None) -> dict:
    return {"status": "error", "error": {"field": field, "message": message, "code": code, "value": value}}


def parse_ids(raw: str | None, field: str, limit: int = MAX_IDS, required: bool = True) -> list[int]:
    name = field.upper()
    if raw is None or not raw.strip():
        if required:
            raise ApiError(402, f"{name}_NOT_SPECIFIED", field)
        return []
    ids: list[int] = []
    for part in raw.split(","):
        part = part.strip()
        if not part:
            continue
        if not part.isdigit() or not (0 < int(part) < 2**63):
            raise ApiError(407, f"INVALID_{name}", field, raw)
        if int(part) not in ids:
            ids.append(int(part))
    if not ids and required:
        raise ApiError(402, f"{name}_NOT_SPECIFIED", field)
    if len(ids) > limit:
        raise ApiError(407, f"{name}_LIST_LIMIT_EXCEEDED", field, raw)
    return ids


Params = Callable[[str], "str | None"]


def m_account_info(world: World, game: str, region: str, arg: Params, now: float):
    ids = parse_ids(arg("account_id"), "account_id")
    data = {str(i): apply_fields(world.account_info(region, i, now), arg("fields")) for i in ids}
    return data, {"count": len(data)}


SEARCHABLE_IDS = 20_000  # account/list searches the first this many ids of each region
SEARCH_MIN, SEARCH_MAX = 3, 24  # type=startswith
MAX_EXACT_NAMES = 100  # type=exact
MAX_LIST_LIMIT = 100
_NICKNAME_TEXT = re.compile(r"[A-Za-z0-9_]+")
LANGUAGES = frozenset({"en", "ru", "pl", "de", "fr", "es", "zh-cn", "zh-tw", "tr", "cs", "th", "vi", "ko"})


@lru_cache(maxsize=len(REGION_RANGES))
def nickname_index(region: str) -> tuple[list[str], list[tuple[str, int, int]]]:
    """The searchable accounts of a region sorted by (lower-case nickname, account_id): the sort
    keys (for bisect) and (nickname, account_id, created_at) rows. Built once per region."""
    lo, _ = REGION_RANGES[region]
    rows = sorted(
        (nickname(region, a).lower(), a, nickname(region, a), account_created_at(region, a))
        for a in range(lo, lo + SEARCHABLE_IDS)
        if account_exists(region, a)
    )
    return [r[0] for r in rows], [(r[2], r[1], r[3]) for r in rows]


def _search_names(raw: str | None, kind: str) -> list[str]:
    if raw is None or not raw.strip():
        raise ApiError(402, "SEARCH_NOT_SPECIFIED", "search")
    if kind == "startswith":
        if len(raw) < SEARCH_MIN:
            raise ApiError(407, "NOT_ENOUGH_SEARCH_LENGTH", "search", raw)
        names = [raw]
    else:
        names = [n for n in raw.split(",")]
        if len(names) > MAX_EXACT_NAMES:
            raise ApiError(407, "SEARCH_LIST_LIMIT_EXCEEDED", "search", raw)
    for name in names:
        if len(name) > SEARCH_MAX or not _NICKNAME_TEXT.fullmatch(name):
            raise ApiError(407, "INVALID_SEARCH", "search", raw)
    return names


def m_account_list(world: World, game: str, region: str, arg: Params, now: float):
    kind = arg("type") or "startswith"
    if kind not in ("startswith", "exact"):
        raise ApiError(407, "INVALID_TYPE", "type", kind)
    language = arg("language")
    if language is not None and language not in LANGUAGES:
        raise ApiError(407, "INVALID_LANGUAGE", "language", language)
    names = _search_names(arg("search"), kind)
    limit_raw = arg("limit")
    if limit_raw is None or limit_raw == "":
        limit = MAX_LIST_LIMIT
    else:
        if not limit_raw.isdigit() or int(limit_raw) < 1:
            raise ApiError(407, "INVALID_LIMIT", "limit", limit_raw)
        limit = min(int(limit_raw), MAX_LIST_LIMIT)
    keys, rows = nickname_index(region)
    found: list[tuple[str, int, int]] = []
    if kind == "startswith":
        prefix = names[0].lower()
        at = bisect.bisect_left(keys, prefix)
        while at < len(keys) and keys[at].startswith(prefix) and len(found) < limit:
            if rows[at][2] <= now:
                found.append(rows[at])
            at += 1
    else:
        for name in dict.fromkeys(n.lower() for n in names):
            at = bisect.bisect_left(keys, name)
            while at < len(keys) and keys[at] == name:
                if rows[at][2] <= now:
                    found.append(rows[at])
                at += 1
        found = sorted(found, key=lambda row: (row[0].lower(), row[1]))[:limit]
    fields = arg("fields")
    data = [apply_fields({"nickname": nick, "account_id": account_id}, fields) for nick, account_id, _ in found]
    return data, {"count": len(data)}


class RawJson:
    """A value already serialised (spliced into the answer as is)."""

    __slots__ = ("body",)

    def __init__(self, body: bytes):
        self.body = body


def m_tanks_stats(world: World, game: str, region: str, arg: Params, now: float):
    ids = parse_ids(arg("account_id"), "account_id", limit=1)
    tank_ids = set(parse_ids(arg("tank_id"), "tank_id", required=False))
    if not tank_ids and not arg("fields"):  # the full answer: served from the serialised cache
        raw = {str(i): world.tanks_stats_json(region, i, now) for i in ids}
        return {k: None if v is None else RawJson(v) for k, v in raw.items()}, {"count": len(raw)}
    data = {str(i): apply_fields(world.tanks_stats(region, i, now, tank_ids), arg("fields")) for i in ids}
    return data, {"count": len(data)}


def m_vehicles(world: World, game: str, region: str, arg: Params, now: float):
    tank_ids = parse_ids(arg("tank_id"), "tank_id", required=False)
    rows = [world.encyclopedia(t) for t in (tank_ids or world.tank_ids) if t in world.vehicles]
    for key, conv in (("tier", int), ("type", str), ("nation", str)):
        raw = arg(key)
        if raw:
            try:
                wanted = {conv(x.strip()) for x in raw.split(",") if x.strip()}
            except ValueError:
                raise ApiError(407, f"INVALID_{key.upper()}", key, raw) from None
            rows = [r for r in rows if r[key] in wanted]
    total = len(rows)
    limit_raw, page_raw = arg("limit"), arg("page_no")
    try:
        limit = int(limit_raw) if limit_raw else MAX_VEHICLE_PAGE
    except ValueError:
        raise ApiError(407, "INVALID_LIMIT", "limit", limit_raw) from None
    try:
        page = int(page_raw) if page_raw else 1
    except ValueError:
        raise ApiError(407, "INVALID_PAGE_NO", "page_no", page_raw) from None
    if limit <= 0:
        limit = MAX_VEHICLE_PAGE
    limit = min(limit, MAX_VEHICLE_PAGE)  # the real API clamps a larger limit
    if page < 1:
        raise ApiError(407, "INVALID_PAGE_NO", "page_no", page_raw)
    page_total = max(1, math.ceil(total / limit))
    if page > page_total:
        raise ApiError(407, "INVALID_PAGE_NO", "page_no", page_raw)
    rows = rows[(page - 1) * limit : page * limit]
    fields = arg("fields")
    data = {str(r["tank_id"]): apply_fields(r, fields) for r in rows}
    meta = {"count": len(data), "page_total": page_total, "total": total, "limit": limit, "page": page}
    return data, meta


def _per_clan(fn: Callable[[World, str, int, float], dict | None], limit: int = MAX_IDS):
    def method(world: World, game: str, region: str, arg: Params, now: float):
        ids = parse_ids(arg("clan_id"), "clan_id", limit=limit)
        data = {}
        for i in ids:
            value = apply_fields(fn(world, region, i, now), arg("fields"))
            if isinstance(value, dict) and isinstance(value.get("members"), list) and arg("members_key") == "id":
                value["members"] = {str(m.get("account_id", n)): m for n, m in enumerate(value["members"])}
            data[str(i)] = value
        return data, {"count": len(data)}

    return method


def m_servers(world: World, game: str, region: str, arg: Params, now: float):
    raw = arg("game")
    games = [g.strip() for g in raw.split(",") if g.strip()] if raw else list(GAMES)
    for g in games:
        if g not in GAMES:
            raise ApiError(407, "INVALID_GAME", "game", raw)
    data = {g: world.servers(g, region, now) for g in dict.fromkeys(games)}
    return data, {"count": len(data)}


def m_tanks_mastery(world: World, game: str, region: str, arg: Params, now: float):
    """wot/tanks/mastery: the distribution's values at the percentiles asked, per tank (every tank
    it covers without tank_id)."""
    kind = arg("distribution")
    if not kind:
        raise ApiError(402, "DISTRIBUTION_NOT_SPECIFIED", "distribution")
    if kind not in official.DISTRIBUTIONS:
        raise ApiError(407, "INVALID_DISTRIBUTION", "distribution", kind)
    raw = arg("percentile")
    if raw is None or not raw.strip():
        raise ApiError(402, "PERCENTILE_NOT_SPECIFIED", "percentile")
    percentiles: list[int] = []
    for part in (p.strip() for p in raw.split(",")):
        if not part:
            continue
        if not part.isdigit() or not 1 <= int(part) <= 100:
            raise ApiError(407, "INVALID_PERCENTILE", "percentile", raw)
        if int(part) not in percentiles:
            percentiles.append(int(part))
    if not percentiles:
        raise ApiError(402, "PERCENTILE_NOT_SPECIFIED", "percentile")
    if len(percentiles) > official.MAX_PERCENTILES:
        raise ApiError(407, "PERCENTILE_LIST_LIMIT_EXCEEDED", "percentile", raw)
    tank_ids = parse_ids(arg("tank_id"), "tank_id", required=False)
    found, updated_at = official.distributions(world, region, now)
    by_tank = found[kind]
    wanted = tank_ids or sorted(by_tank)
    distribution = {
        str(t): {str(p): official.percentile_value(by_tank[t], p) for p in percentiles} if t in by_tank else None
        for t in wanted
    }
    return {"distribution": distribution, "updated_at": updated_at}, {"count": len(distribution)}


def m_account_wtr(world: World, game: str, region: str, arg: Params, now: float):
    ids = parse_ids(arg("account_id"), "account_id")
    data = {str(i): apply_fields(official.wtr(world, region, i, now), arg("fields")) for i in ids}
    return data, {"count": len(data)}


def _per_account(fn: Callable[[World, str, int, float], Any]):
    """A method answering each of up to 100 account ids (null for an unknown one)."""

    def method(world: World, game: str, region: str, arg: Params, now: float):
        ids = parse_ids(arg("account_id"), "account_id")
        data = {str(i): apply_fields(fn(world, region, i, now), arg("fields")) for i in ids}
        return data, {"count": len(data)}

    return method


def m_account_tanks(world: World, game: str, region: str, arg: Params, now: float):
    """account/tanks: up to 100 accounts, each its played tanks' battles, wins and mastery badge
    (tank_id, up to 100, keeps only those tanks)."""
    ids = parse_ids(arg("account_id"), "account_id")
    tank_ids = set(parse_ids(arg("tank_id"), "tank_id", required=False))
    data = {}
    for i in ids:
        tanks = world.account_tanks(region, i, now)
        if tanks is not None and tank_ids:
            tanks = [t for t in tanks if t["tank_id"] in tank_ids]
        data[str(i)] = apply_fields(tanks, arg("fields"))
    return data, {"count": len(data)}


METHODS: dict[str, tuple[tuple[str, ...], Callable]] = {
    "wot/account/info": (("wot",), m_account_info),
    "wot/account/list": (("wot",), m_account_list),
    "wot/tanks/stats": (("wot",), m_tanks_stats),
    "wot/encyclopedia/vehicles": (("wot",), m_vehicles),
    "wot/tanks/mastery": (("wot",), m_tanks_mastery),
    "wot/account/wtr": (("wot",), m_account_wtr),
    "wot/account/tanks": (("wot",), m_account_tanks),
    "wot/clans/accountinfo": (("wot",), _per_account(World.clan_member)),
    "wot/clans/info": (("wot",), _per_clan(World.clan_info)),
    "wot/clanratings/clans": (("wot",), _per_clan(World.clan_rating)),
    "wot/stronghold/claninfo": (("wot",), _per_clan(World.stronghold, MAX_STRONGHOLD_IDS)),
    "wgn/servers/info": (GAMES, m_servers),
}

# Strict mode: the id parameter of these methods must lie in the region's range
# (api path -> (field, ids per call, range test)).
REGION_IDS: dict[str, tuple[str, int, Callable[[str, int], bool]]] = {
    "wot/account/info": ("account_id", MAX_IDS, account_in_region),
    "wot/account/wtr": ("account_id", MAX_IDS, account_in_region),
    "wot/account/tanks": ("account_id", MAX_IDS, account_in_region),
    "wot/clans/accountinfo": ("account_id", MAX_IDS, account_in_region),
    "wot/tanks/stats": ("account_id", 1, account_in_region),
    "wot/clans/info": ("clan_id", MAX_IDS, clan_in_region),
    "wot/clanratings/clans": ("clan_id", MAX_IDS, clan_in_region),
    "wot/stronghold/claninfo": ("clan_id", MAX_STRONGHOLD_IDS, clan_in_region),
}


def check_region_ids(region: str, arg: Params, field: str, limit: int, in_region: Callable[[str, int], bool]) -> None:
    """The strict mode: one id outside the region's range (another region's id, or 0) makes the
    real API refuse the whole call: ``407 INVALID_<FIELD>``, value the offending ids (comma
    separated). Malformed lists and lists over ``limit`` are left to ``parse_ids``."""
    raw = arg(field)
    parts = [p.strip() for p in raw.split(",") if p.strip()] if raw else []
    if not parts or not all(p.isdigit() for p in parts):
        return
    ids = list(dict.fromkeys(int(p) for p in parts))
    if len(ids) > limit:
        return
    bad = [i for i in ids if not in_region(region, i)]
    if bad:
        raise ApiError(407, f"INVALID_{field.upper()}", field, ",".join(map(str, bad)))
