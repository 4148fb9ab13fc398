#!/usr/bin/env python3
"""Offline stand-in for the Wargaming public API (the subset statsapi uses).

One process serves every real host: the first two path segments name the host's game and
region, the rest is the real API path::

    /{game}/{region}/{api_path}/?application_id=...&...
    /wot/eu/wot/account/info/?application_id=x&account_id=500000000,500000001
    /wotb/na/wgn/servers/info/?application_id=x&game=wotb

API methods (answers use the real envelope: ``{"status": "ok", "meta": {"count": N},
"data": {...}}``; errors arrive with HTTP 200 and ``{"status": "error", "error": {"code",
"message", "field", "value"}}``)::

    wot/account/info          account_id (<= 100, comma separated), fields
    wot/tanks/stats           account_id (one), tank_id (<= 100), fields
    wot/encyclopedia/vehicles tank_id, tier, type, nation, fields, limit, page_no
    wot/clans/info            clan_id (<= 100), fields, members_key=id
    wot/clanratings/clans     clan_id (<= 100), fields
    wot/stronghold/claninfo   clan_id (<= 100), fields
    wgn/servers/info          game (wot, wotb, wows; comma separated; default: all)

Other endpoints::

    GET  /wn8exp.json         XVM expected-values table (--expected-values FILE, else generated)
    GET  /_sim/clock          {"now", "offset", "frozen", "real_time"}
    POST /_sim/clock          {"now": ts} (frozen at ts; add "freeze": false to keep it running),
                              {"offset": s}, {"advance": s}, {"reset": true}
    GET  /_sim/faults         current fault settings
    POST /_sim/faults         {"latency_ms", "error_rate", "http_5xx_rate", "timeout_rate",
                               "limit_rate", "fail_next", "fail_mode", "hang_seconds", "seed",
                               "reset"}
    GET  /_sim/stats          request counters per api path (DELETE or POST {"reset": true} clears)
    GET  /_sim/accounts?region=eu&n=10   existing account ids (same as existing_accounts())
    GET  /_sim/clans?region=eu&n=10      existing clan ids (same as existing_clans())

Every API request also accepts ``_sim_now=<unix ts>``: answer "as of" that instant.
Faults apply to the API paths only (not to /wn8exp.json or /_sim/*). The "timeout" fault holds
the request until the client disconnects, ``hang_seconds`` pass, or the faults are cleared.

Seeding helpers (pure functions of the ids, no server needed): ``existing_accounts(region, n)``,
``missing_accounts(region, n)``, ``existing_clans(region, n)``, ``clan_members(region, clan_id)``,
``clan_of_account(region, account_id)``, ``account_exists(region, account_id)``.
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

import argparse
import asyncio
import bisect
import hashlib
import json
import logging
import math
import random
import signal
import time
from array import array
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import tornado.web
import ujson

log = logging.getLogger("upstream_sim")

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_VEHICLES = REPO_ROOT.parent / "shared" / "data" / "vehicles-2018-06.json"

# --------------------------------------------------------------------------------------
# Constants
# --------------------------------------------------------------------------------------

GAMES = ("wot", "wotb", "wows")
REGION_RANGES = {
    "eu": (500_000_000, 999_999_999),
    "na": (1_000_000_000, 1_999_999_999),
    "asia": (2_000_000_000, 2_999_999_999),
}
REGIONS = tuple(REGION_RANGES)
MAX_IDS = 100

DAY = 86400
CREATED_MIN = 1338508800  # 2012-06-01
CREATED_MAX = 1717200000  # 2024-06-01
CLAN_CREATED_MIN = 1356998400  # 2013-01-01
CLAN_CREATED_MAX = 1640995200  # 2022-01-01
JOIN_MAX = 1717200000  # 2024-06-01

ACCOUNT_MISSING_SHARE = 0.10  # ids in range that "do not exist"
CLAN_SLICE = 100  # accounts per clan slot
CLAN_EXISTS_SHARE = 0.70  # clan slots that hold a clan
BLOCK = 20  # battles are played in blocks of this size on one tank
EVENING_UTC_HOUR = {"eu": 16, "na": 0, "asia": 10}  # start of the 6 h daily play window
LOCAL_UTC_OFFSET = {"eu": 1, "na": -6, "asia": 8}  # for the players-online daily cycle

SUM_FIELDS = (
    "battles", "wins", "losses", "draws", "damage_dealt", "damage_received", "frags", "spotted",
    "dropped_capture_points", "capture_points", "xp", "survived_battles", "shots", "hits",
)

SERVERS = {
    "wot": {"eu": ["EU1", "EU2", "EU3", "EU4"], "na": ["NA East", "NA Central"], "asia": ["ASIA1", "ASIA2", "ASIA3"]},
    "wotb": {"eu": ["EU1", "EU2"], "na": ["NA1", "NA2"], "asia": ["ASIA1", "ASIA2"]},
    "wows": {"eu": ["EU1", "EU2"], "na": ["NA1", "NA2"], "asia": ["ASIA1", "ASIA2"]},
}
PEAK_ONLINE = {  # players online at the evening peak, whole region
    "wot": {"eu": 95_000, "na": 14_000, "asia": 22_000},
    "wotb": {"eu": 32_000, "na": 11_000, "asia": 16_000},
    "wows": {"eu": 26_000, "na": 13_000, "asia": 9_000},
}

ROLES = [
    ("commander", "Commander"), ("executive_officer", "Executive Officer"),
    ("personnel_officer", "Personnel Officer"), ("combat_officer", "Combat Officer"),
    ("recruitment_officer", "Recruitment Officer"), ("intelligence_officer", "Intelligence Officer"),
    ("quartermaster", "Quartermaster"), ("junior_officer", "Junior Officer"),
    ("private", "Private"), ("recruit", "Recruit"), ("reservist", "Reservist"),
]
ROLE_I18N = dict(ROLES)

# --------------------------------------------------------------------------------------
# Stable hashing
# --------------------------------------------------------------------------------------

_M64 = (1 << 64) - 1


def _mix(x: int) -> int:
    """splitmix64 finaliser: a fast, stable 64-bit hash of an integer."""
    x = (x + 0x9E3779B97F4A7C15) & _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


def _seed(*parts: Any) -> int:
    text = "\x1f".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big")


def _unit(*parts: Any) -> float:
    """A stable uniform number in [0, 1) for the given parts."""
    return (_seed(*parts) >> 11) / float(1 << 53)


def _clamp(x: float, lo: float, hi: float) -> float:
    return lo if x < lo else hi if x > hi else x


# --------------------------------------------------------------------------------------
# Accounts and clans: pure functions of the ids (no catalogue needed)
# --------------------------------------------------------------------------------------


def account_exists(region: str, account_id: int) -> bool:
    """True when the simulated upstream knows this account (about 90 % of in-range ids)."""
    rng = REGION_RANGES.get(region)
    if rng is None or not (rng[0] <= account_id <= rng[1]):
        return False
    return _unit("exists", region, account_id) >= ACCOUNT_MISSING_SHARE


def existing_accounts(region: str, n: int, start: int | None = None) -> list[int]:
    """The first ``n`` existing account ids of ``region`` from ``start`` (default: the region base)."""
    lo, hi = REGION_RANGES[region]
    out: list[int] = []
    account_id = lo if start is None else max(lo, int(start))
    while len(out) < n and account_id <= hi:
        if account_exists(region, account_id):
            out.append(account_id)
        account_id += 1
    return out


def missing_accounts(region: str, n: int) -> list[int]:
    """The first ``n`` in-range ids of ``region`` that the upstream answers with null."""
    lo, _ = REGION_RANGES[region]
    out, account_id = [], lo
    while len(out) < n:
        if not account_exists(region, account_id):
            out.append(account_id)
        account_id += 1
    return out


def account_created_at(region: str, account_id: int) -> int:
    return int(CREATED_MIN + _unit("created", region, account_id) * (CREATED_MAX - CREATED_MIN))


_SYLLABLES = ["ka", "ro", "mi", "tan", "ker", "vo", "lek", "dra", "zu", "sha", "ni", "bor", "gra",
              "fel", "tor", "pan", "zer", "kil", "mo", "rex", "vi", "sta", "lo", "nik", "dar"]
_WORDS = ["Tiger", "Panzer", "Storm", "Wolf", "Iron", "Steel", "Shadow", "Hunter", "Viking", "Ghost",
          "Rhino", "Falcon", "Cobra", "Titan", "Sniper", "Tanker", "Blitz", "Raven", "Bear", "Knight"]


def nickname(region: str, account_id: int) -> str:
    rng = random.Random(f"nick:{region}:{account_id}")
    style = rng.random()
    if style < 0.45:
        name = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))).capitalize()
    elif style < 0.8:
        name = rng.choice(_WORDS) + rng.choice(["_", "", "-"]) + rng.choice(_SYLLABLES).capitalize()
    else:
        name = rng.choice(_WORDS).lower() + rng.choice(_SYLLABLES)
    if rng.random() < 0.6:
        name += str(rng.randint(1, 9999))
    return name[:24]


def _clan_layout(region: str) -> tuple[int, int]:
    lo, hi = REGION_RANGES[region]
    return lo // 1000, (hi - lo + 1) // 1000  # (clan id base, number of clan slots)


def _clan_slot_used(region: str, slot: int) -> bool:
    return _unit("clan", region, slot) < CLAN_EXISTS_SHARE


def _clan_fill(region: str, slot: int) -> float:
    return 0.15 + 0.8 * _unit("clanfill", region, slot)


def _is_member(region: str, slot: int, account_id: int) -> bool:
    return _unit("member", region, account_id) < _clan_fill(region, slot)


@lru_cache(maxsize=16384)
def clan_members(region: str, clan_id: int) -> tuple[int, ...]:
    """Account ids of the clan's members (empty when the clan does not exist)."""
    if region not in REGION_RANGES:
        return ()
    base, slots = _clan_layout(region)
    slot = clan_id - base
    if not (0 <= slot < slots) or not _clan_slot_used(region, slot):
        return ()
    lo, _ = REGION_RANGES[region]
    first = lo + slot * CLAN_SLICE
    return tuple(a for a in range(first, first + CLAN_SLICE)
                 if account_exists(region, a) and _is_member(region, slot, a))


def clan_exists(region: str, clan_id: int) -> bool:
    return bool(clan_members(region, clan_id))


def clan_of_account(region: str, account_id: int) -> int | None:
    """The clan the account belongs to (the clan's member list names it back), or None."""
    if not account_exists(region, account_id):
        return None
    lo, _ = REGION_RANGES[region]
    base, slots = _clan_layout(region)
    slot = (account_id - lo) // CLAN_SLICE
    if slot >= slots or not _clan_slot_used(region, slot) or not _is_member(region, slot, account_id):
        return None
    return base + slot


def existing_clans(region: str, n: int, start: int | None = None) -> list[int]:
    """The first ``n`` existing clan ids of ``region`` from ``start`` (default: the clan id base)."""
    base, slots = _clan_layout(region)
    out: list[int] = []
    clan_id = base if start is None else max(base, int(start))
    while len(out) < n and clan_id < base + slots:
        if clan_exists(region, clan_id):
            out.append(clan_id)
        clan_id += 1
    return out


# --------------------------------------------------------------------------------------
# Vehicle catalogue and expected values
# --------------------------------------------------------------------------------------

VEHICLE_TYPES = ("lightTank", "mediumTank", "heavyTank", "AT-SPG", "SPG")
_TIER_DAMAGE = [0, 110, 170, 250, 350, 480, 680, 950, 1350, 1800, 2350]
_TYPE_DAMAGE = {"lightTank": 0.75, "mediumTank": 1.0, "heavyTank": 1.12, "AT-SPG": 1.1, "SPG": 0.9}
_TYPE_SPOT = {"lightTank": 2.1, "mediumTank": 1.35, "heavyTank": 1.0, "AT-SPG": 0.85, "SPG": 0.3}


def _normalise_vehicle(raw: dict) -> dict:
    tank_id = int(raw["tank_id"])
    name = str(raw.get("name") or f"Vehicle {tank_id}")
    is_premium = raw.get("is_premium")
    if is_premium is None:  # the 2018 list has no premium flag: a stable stand-in
        is_premium = 2 <= int(raw.get("tier", 0)) <= 8 and _unit("premium", tank_id) < 0.12
    return {
        "tank_id": tank_id,
        "name": name,
        "short_name": str(raw.get("short_name") or name),
        "tier": int(raw["tier"]),
        "type": str(raw.get("type") or "mediumTank"),
        "nation": str(raw.get("nation") or "ussr"),
        "is_premium": bool(is_premium),
        "tag": str(raw.get("tag") or f"SIM_{tank_id}"),
    }


def load_vehicles(path: str | Path) -> dict[int, dict]:
    """Read a vehicle list: WG-API style ``{"data": {id: {...}}}``, a list, or a dict by id."""
    with open(path, "rb") as handle:
        doc = json.load(handle)
    items = doc.get("data", doc) if isinstance(doc, dict) else doc
    if isinstance(items, dict):
        items = [v for v in items.values() if v]
    out = {}
    for raw in items:
        if isinstance(raw, dict) and raw.get("tank_id") is not None and raw.get("tier"):
            vehicle = _normalise_vehicle(raw)
            out[vehicle["tank_id"]] = vehicle
    if not out:
        raise ValueError(f"no vehicles in {path}")
    return out


def generated_vehicles() -> dict[int, dict]:
    """A small stand-in catalogue: 5 types x 10 tiers x 4 nations."""
    nations = ["ussr", "germany", "usa", "uk"]
    out = {}
    for n_idx, nation in enumerate(nations):
        for t_idx, vtype in enumerate(VEHICLE_TYPES):
            for tier in range(1, 11):
                if vtype == "SPG" and tier < 2:
                    continue
                number = t_idx * 10 + tier
                tank_id = (number << 8) | (n_idx << 4) | 1
                name = f"{nation[:2].upper()}-{vtype[:2].upper()}{tier}"
                out[tank_id] = _normalise_vehicle({
                    "tank_id": tank_id, "name": name, "short_name": name, "tier": tier,
                    "type": vtype, "nation": nation, "tag": f"SIM_{nation}_{vtype}_{tier}",
                })
    return out


def generated_expectation(vehicle: dict) -> dict:
    rng = random.Random(f"exp:{vehicle['tank_id']}")
    tier, vtype = vehicle["tier"], vehicle["type"]
    return {
        "IDNum": vehicle["tank_id"],
        "expDef": round((1.6 - 0.09 * tier) * rng.uniform(0.8, 1.2), 3),
        "expFrag": round((1.35 - 0.045 * tier) * rng.uniform(0.85, 1.15), 3),
        "expSpot": round(_TYPE_SPOT.get(vtype, 1.2) * (1.1 - 0.02 * tier) * rng.uniform(0.85, 1.15), 3),
        "expDamage": round(_TIER_DAMAGE[tier] * _TYPE_DAMAGE.get(vtype, 1.0) * rng.uniform(0.88, 1.12), 3),
        "expWinRate": round(rng.uniform(50.5, 56.0), 3),
    }


# --------------------------------------------------------------------------------------
# The simulated world
# --------------------------------------------------------------------------------------


class World:
    """All generated data. Account profiles are cached (LRU); everything else is cheap."""

    def __init__(self, vehicles: str | Path | None = None, expected_values: str | Path | None = None,
                 profile_cache: int = 4096):
        if vehicles is None and DEFAULT_VEHICLES.is_file():
            vehicles = DEFAULT_VEHICLES
        if vehicles:
            self.vehicles = load_vehicles(vehicles)
            self.vehicles_source = str(vehicles)
        else:
            self.vehicles = generated_vehicles()
            self.vehicles_source = "generated"
        self.by_tier: dict[int, list[int]] = {}
        for tank_id in sorted(self.vehicles):
            self.by_tier.setdefault(self.vehicles[tank_id]["tier"], []).append(tank_id)

        self.expected: dict[int, dict] = {}
        if expected_values:
            raw = Path(expected_values).read_bytes()
            table = ujson.loads(raw)
            for row in table.get("data", []):
                try:
                    self.expected[int(row["IDNum"])] = row
                except (KeyError, TypeError, ValueError):
                    continue
            self.expected_bytes = raw
            self.expected_source = str(expected_values)
        else:
            rows = [generated_expectation(self.vehicles[t]) for t in sorted(self.vehicles)]
            self.expected = {row["IDNum"]: row for row in rows}
            header = {"version": f"sim-{len(rows)}", "source": "upstream_sim", "url": "/wn8exp.json"}
            self.expected_bytes = ujson.dumps({"header": header, "data": rows}).encode()
            self.expected_source = "generated"
        self._profiles: OrderedDict[tuple[str, int], Profile] = OrderedDict()
        self._profile_cache = profile_cache

    def expectation(self, tank_id: int) -> dict:
        row = self.expected.get(tank_id)
        if row is None:
            row = generated_expectation(self.vehicles[tank_id])
            self.expected[tank_id] = row  # not served, only used for generation
        return row

    def profile(self, region: str, account_id: int) -> Profile:
        key = (region, account_id)
        prof = self._profiles.get(key)
        if prof is None:
            prof = Profile(self, region, account_id)
            self._profiles[key] = prof
            if len(self._profiles) > self._profile_cache:
                self._profiles.popitem(last=False)
        else:
            self._profiles.move_to_end(key)
        return prof

    # --- API data --------------------------------------------------------------------
    def account_info(self, region: str, account_id: int, now: float) -> dict | None:
        if not account_exists(region, account_id):
            return None
        prof = self.profile(region, account_id)
        if now < prof.created_at:
            return None
        return prof.account_info(now)

    def tanks_stats(self, region: str, account_id: int, now: float, tank_ids: set[int] | None) -> list | None:
        if not account_exists(region, account_id):
            return None
        prof = self.profile(region, account_id)
        if now < prof.created_at:
            return None
        tanks = prof.tanks(now)
        if tank_ids:
            tanks = [t for t in tanks if t["tank_id"] in tank_ids]
        return tanks

    def clan_info(self, region: str, clan_id: int, now: float) -> dict | None:
        members = clan_members(region, clan_id)
        if not members:
            return None
        c = _clan_basics(region, clan_id)
        member_rows = []
        for account_id, (role, joined_at) in zip(members, _member_roles(region, clan_id, members)):
            member_rows.append({
                "account_id": account_id,
                "account_name": nickname(region, account_id),
                "joined_at": joined_at,
                "role": role,
                "role_i18n": ROLE_I18N[role],
            })
        leader = member_rows[0]
        return {
            "clan_id": clan_id,
            "tag": c["tag"],
            "name": c["name"],
            "color": c["color"],
            "motto": c["motto"],
            "description": c["description"],
            "description_html": f"<p>{c['description']}</p>",
            "created_at": c["created_at"],
            "updated_at": max(int(now) - int(now) % DAY, c["created_at"]),
            "members_count": len(member_rows),
            "leader_id": leader["account_id"],
            "leader_name": leader["account_name"],
            "creator_id": leader["account_id"],
            "creator_name": leader["account_name"],
            "accepts_join_requests": c["accepts_join_requests"],
            "is_clan_disbanded": False,
            "old_name": None,
            "old_tag": None,
            "renamed_at": None,
            "game": "wot",
            "emblems": {
                "x32": {"portal": f"https://eu.wargaming.net/clans/media/clans/emblems/cl_{clan_id % 1000:03d}/{clan_id}/emblem_32x32.png"},
                "x64": {"portal": f"https://eu.wargaming.net/clans/media/clans/emblems/cl_{clan_id % 1000:03d}/{clan_id}/emblem_64x64_portal.png"},
            },
            "private": None,
            "members": member_rows,
        }

    def clan_rating(self, region: str, clan_id: int, now: float) -> dict | None:
        members = clan_members(region, clan_id)
        if not members:
            return None
        c = _clan_basics(region, clan_id)
        rng = random.Random(f"clanrating:{region}:{clan_id}")
        strength = c["strength"]  # 0..1
        day = int(now // DAY)
        drift = random.Random(f"clanrating:{region}:{clan_id}:{day}")

        def rated(value: float, top: float, spread: float, integer: bool = True) -> dict:
            v = int(round(value)) if integer else round(value, 2)
            rank = max(1, int((top - value) * spread)) if value < top else 1
            return {"value": v, "rank": rank, "rank_delta": drift.randint(-25, 25)}

        elo10 = 800 + 1500 * strength ** 1.3 + rng.uniform(-60, 60)
        elo8 = 850 + 1300 * strength ** 1.2 + rng.uniform(-60, 60)
        elo6 = 900 + 1000 * strength + rng.uniform(-60, 60)
        gm10 = 900 + 1300 * strength ** 1.5 + rng.uniform(-80, 80)
        small = len(members) < 10
        excluded = {"efficiency": "newbies_measure", "fb_elo_rating": "newbies_measure"} if small else {}
        return {
            "clan_id": clan_id,
            "clan_name": c["name"],
            "clan_tag": c["tag"],
            "efficiency": rated(600 + 1500 * strength + rng.uniform(-50, 50), 2300, 40),
            "fb_elo_rating": rated(max(elo10, elo8, elo6), 2400, 30),
            "fb_elo_rating_10": rated(elo10, 2400, 30),
            "fb_elo_rating_8": rated(elo8, 2300, 35),
            "fb_elo_rating_6": rated(elo6, 2000, 40),
            "gm_elo_rating": rated(gm10, 2300, 25),
            "gm_elo_rating_10": rated(gm10, 2300, 25),
            "gm_elo_rating_8": rated(gm10 * 0.95, 2200, 25),
            "gm_elo_rating_6": rated(gm10 * 0.9, 2100, 25),
            "wins_ratio_avg": rated(46 + 16 * strength + rng.uniform(-1, 1), 70, 800, integer=False),
            "battles_count_avg": rated(4000 + 30000 * rng.random() * (0.5 + strength), 60000, 5),
            "battles_count_avg_daily": rated(3 + 20 * strength * rng.random(), 40, 900, integer=False),
            "global_rating_avg": rated(3000 + 4500 * strength + rng.uniform(-150, 150), 9000, 12),
            "global_rating_weighted_avg": rated(3200 + 4600 * strength + rng.uniform(-150, 150), 9000, 12),
            "v10l_avg": rated(1 + 25 * strength * rng.random(), 60, 600, integer=False),
            "rating_fort": rated(500 + 2500 * strength, 3500, 20),
            "exclude_reasons": excluded,
        }

    def stronghold(self, region: str, clan_id: int, now: float) -> dict | None:
        members = clan_members(region, clan_id)
        if not members:
            return None
        c = _clan_basics(region, clan_id)
        rng = random.Random(f"stronghold:{region}:{clan_id}")
        strength = c["strength"]
        start_day = c["created_at"] // DAY + rng.randint(10, 400)
        today = int(now // DAY)
        size = len(members)

        def per_tier(prefix_rates: dict[int, tuple[float, float, float]]) -> dict:
            out: dict[str, int | None] = {}
            for tier, (rate, win, phase) in prefix_rates.items():
                def total_at(day: int) -> int:
                    return max(0, int((day - start_day) * rate + phase)) if day >= start_day else 0

                def wins_at(day: int) -> int:
                    return int(total_at(day) * win + phase)

                total, wins = total_at(today), min(total_at(today), wins_at(today))
                total28 = total - total_at(today - 28)
                wins28 = max(0, min(total28, wins - min(total_at(today - 28), wins_at(today - 28))))
                out[f"total_{tier}"] = total
                out[f"win_{tier}"] = wins
                out[f"lose_{tier}"] = total - wins
                out[f"total_{tier}_in_28d"] = total28
                out[f"win_{tier}_in_28d"] = wins28
                out[f"last_time_{tier}"] = (today * DAY + 19 * 3600) if total28 else (
                    (start_day * DAY + 19 * 3600) if total else None)
            return out

        activity = (0.3 + size / 100) * (0.5 + strength)
        skirmish = per_tier({
            10: (6.0 * activity * strength, _clamp(0.40 + 0.28 * strength, 0.3, 0.75), rng.random()),
            8: (4.0 * activity, _clamp(0.42 + 0.25 * strength, 0.3, 0.75), rng.random()),
            6: (2.0 * activity * (1.2 - strength), _clamp(0.45 + 0.2 * strength, 0.3, 0.75), rng.random()),
        })
        advances = per_tier({10: (0.8 * activity * strength, _clamp(0.35 + 0.3 * strength, 0.2, 0.8), rng.random())})
        series = per_tier({10: (0.5 * activity, _clamp(0.5 + 0.2 * strength, 0.2, 0.8), rng.random())})
        level = 1 + int(9 * strength)
        buildings = [
            {"position": i, "direction": d, "arena_id": f"{70 + i}_stronghold_map",
             "building_title": t, "building_level": min(10, max(1, level - rng.randint(0, 3))),
             "reserve_title": r}
            for i, (d, t, r) in enumerate([
                ("A", "Training Ground", "Tactical Training"), ("B", "Artillery Division", "Artillery Strike"),
                ("C", "Engineering Battalion", "Battle Payments"), ("D", "Transportation Corps", "Additional Briefing"),
            ][: 1 + level // 3], start=1)
        ]
        return {
            "clan_id": clan_id,
            "clan_name": c["name"],
            "clan_tag": c["tag"],
            "stronghold_level": level,
            "stronghold_buildings_level": level + sum(b["building_level"] for b in buildings),
            "command_center_arena_id": "69_stronghold_map",
            "building_slots": buildings,
            "skirmish_statistics": skirmish,
            "battles_for_strongholds_statistics": advances,
            "battles_series_for_strongholds_statistics": series,
        }

    def servers(self, game: str, region: str, now: float) -> list[dict]:
        names = SERVERS[game][region]
        minute = int(now // 60)
        local_hour = ((now / 3600.0) + LOCAL_UTC_OFFSET[region]) % 24
        cycle = 0.18 + 0.82 * ((1 + math.cos(2 * math.pi * (local_hour - 20.0) / 24.0)) / 2) ** 1.6
        weekday = int((now // DAY + 3) % 7)  # 0 = Monday
        week = 1.12 if weekday >= 5 else 1.0
        rows = []
        shares = [1.0 / (1 + 0.35 * i) for i in range(len(names))]
        total_share = sum(shares)
        for name, share in zip(names, shares):
            noise = 1 + 0.06 * (_unit("online", game, region, name, minute) - 0.5)
            count = PEAK_ONLINE[game][region] * share / total_share * cycle * week * noise
            rows.append({"players_online": int(count), "server": name})
        return rows


@lru_cache(maxsize=16384)
def _clan_basics(region: str, clan_id: int) -> dict:
    rng = random.Random(f"clan:{region}:{clan_id}")
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    tag = "".join(rng.choice(alphabet + "0123456789" * (i > 0)) for i in range(rng.randint(2, 5)))
    if rng.random() < 0.15:
        tag = rng.choice(["_", "-"]) + tag[:4]
    adjectives = ["Iron", "Red", "Black", "Silent", "Royal", "Wild", "Northern", "Golden", "Steel", "Lucky"]
    nouns = ["Wolves", "Legion", "Guard", "Brigade", "Hussars", "Rangers", "Panthers", "Vikings", "Order", "Battalion"]
    return {
        "tag": tag,
        "name": f"{rng.choice(adjectives)} {rng.choice(nouns)}" + (f" {rng.randint(2, 99)}" if rng.random() < 0.3 else ""),
        "color": "#%06X" % rng.randrange(1 << 24),
        "motto": rng.choice(["Together we roll", "No retreat", "Fun first", "Win or learn", "Steel and honour"]),
        "description": rng.choice(["Friendly clan, all welcome.", "Competitive clan for CW and skirmishes.",
                                   "Casual players, evenings only.", "Training clan for new players."]),
        "created_at": int(CLAN_CREATED_MIN + rng.random() * (CLAN_CREATED_MAX - CLAN_CREATED_MIN)),
        "accepts_join_requests": rng.random() < 0.6,
        "strength": rng.random() ** 1.4,
    }


def _member_roles(region: str, clan_id: int, members: tuple[int, ...]) -> list[tuple[str, int]]:
    created = _clan_basics(region, clan_id)["created_at"]
    out = []
    for i, account_id in enumerate(members):
        rng = random.Random(f"role:{region}:{clan_id}:{account_id}")
        if i == 0:
            role = "commander"
        elif i <= 2:
            role = "executive_officer"
        else:
            r = rng.random()
            role = ("personnel_officer" if r < 0.05 else "combat_officer" if r < 0.1 else
                    "recruitment_officer" if r < 0.13 else "junior_officer" if r < 0.25 else
                    "recruit" if r < 0.35 else "reservist" if r < 0.42 else "private")
        earliest = max(created, account_created_at(region, account_id))
        joined = earliest if i == 0 else earliest + int(rng.random() * max(0, JOIN_MAX - earliest))
        out.append((role, joined))
    return out


class Profile:
    """One account: skill, activity, garage, and closed-form-ish totals at any instant."""

    def __init__(self, world: World, region: str, account_id: int):
        self.world = world
        self.region = region
        self.account_id = account_id
        rng = random.Random(f"{region}:{account_id}")
        self.created_at = account_created_at(region, account_id)
        self.day0 = self.created_at // DAY
        # Skill: ~log-normal around an average player, bounded (WN8 roughly 300..3500).
        self.skill = _clamp(math.exp(rng.gauss(math.log(0.8), 0.3)), 0.38, 1.6)
        p = rng.uniform(0.2, 0.85)  # chance to play on a normal day
        lam = rng.uniform(2.0, 12.0)  # mean battles on a playing day
        low = rng.uniform(0.05, 0.45)  # play chance factor in a "quiet" week
        self.quit_week = rng.randint(30, 500) if rng.random() < 0.12 else None
        self.tables = (self._day_table(p, lam), self._day_table(p * low, lam * 0.7))
        self.seed_days = _seed("days", region, account_id)
        self.seed_offsets = _seed("offsets", region, account_id)
        self.speed = rng.uniform(0.6, 1.6)
        self.language = rng.choice({"eu": ["en", "de", "pl", "fr", "cs", "es"], "na": ["en", "en", "es", "pt-br"],
                                     "asia": ["en", "th", "ja", "ko", "zh-tw", "vi"]}[region])
        self.trees_rate = rng.uniform(0.2, 2.5)

        # Garage: a few tanks per tier, each with a preference weight.
        garage: list[int] = []
        prefs: list[float] = []
        for tier in range(1, 11):
            pool = world.by_tier.get(tier, [])
            if not pool:
                continue
            k = min(len(pool), rng.randint(2, 5) if tier < 8 else rng.randint(2, 7))
            for tank_id in rng.sample(pool, k):
                garage.append(tank_id)
                prefs.append(rng.uniform(0.25, 1.0) ** 2)
        self.garage = garage[:255]
        self.prefs = prefs[:255]
        self.tiers = [world.vehicles[t]["tier"] for t in self.garage]
        self._candidates: dict[int, tuple[list[int], list[float]]] = {}
        self.blocks = bytearray()
        self.block_rng = random.Random(f"blocks:{region}:{account_id}")
        self.rates = [self._tank_rates(t) for t in self.garage]
        self.wcum = array("q", [0])  # wcum[w] = battles in weeks before week w
        self._last: tuple[int, list[dict]] | None = None

    # --- battles per day -------------------------------------------------------------
    @staticmethod
    def _day_table(p: float, lam: float) -> list[int]:
        """Battles on a day from 9 random bits: 4 decide whether, 5 how many."""
        table = []
        for chunk in range(512):
            play = ((chunk & 15) + 0.5) / 16.0 < p
            u = ((chunk >> 4) + 0.5) / 32.0
            table.append(min(60, 1 + int(-lam * math.log(1 - u))) if play else 0)
        return table

    def _week(self, w: int) -> list[int]:
        if w < 0 or (self.quit_week is not None and w >= self.quit_week):
            return [0] * 7
        h = _mix((self.seed_days + w * 0xD1B54A32D192ED03) & _M64)
        table = self.tables[h >> 63]
        days = [table[(h >> (9 * k)) & 511] for k in range(7)]
        if w == 0:
            days[0] = 0  # nothing on the creation day
        return days

    def _ensure_weeks(self, w: int) -> None:
        wcum = self.wcum
        while len(wcum) <= w:
            wcum.append(wcum[-1] + sum(self._week(len(wcum) - 1)))

    def _battles_through(self, j: int) -> int:
        """Battles on days 0..j (day index relative to the creation day)."""
        if j < 0:
            return 0
        w, k = divmod(j, 7)
        self._ensure_weeks(w)
        return self.wcum[w] + sum(self._week(w)[: k + 1])

    def _play_offset(self, j: int) -> int:
        """Seconds after UTC midnight when day j's battles are over."""
        return EVENING_UTC_HOUR[self.region] * 3600 + _mix((self.seed_offsets + j) & _M64) % (6 * 3600)

    def _last_day_index(self, now: float) -> int:
        j = int(now // DAY) - self.day0
        if j >= 0 and now < (self.day0 + j) * DAY + self._play_offset(j):
            j -= 1
        return j

    def _last_active(self, j: int) -> int | None:
        if j < 0:
            return None
        w, k = divmod(j, 7)
        self._ensure_weeks(w)
        days = self._week(w)
        for kk in range(k, -1, -1):
            if days[kk]:
                return 7 * w + kk
        w -= 1
        while w >= 0 and self.wcum[w + 1] == self.wcum[w]:
            w -= 1
        if w < 0:
            return None
        days = self._week(w)
        for kk in range(6, -1, -1):
            if days[kk]:
                return 7 * w + kk
        return None

    # --- which tank ------------------------------------------------------------------
    def _cap_tier(self, battles: int) -> int:
        cap = 1
        for tier in range(2, 11):
            if battles >= self.speed * 120 * (tier - 1) ** 1.7:
                cap = tier
        return cap

    def _ensure_blocks(self, n: int) -> None:
        blocks, rng = self.blocks, self.block_rng
        while len(blocks) < n:
            cap = self._cap_tier(len(blocks) * BLOCK)
            cand = self._candidates.get(cap)
            if cand is None:
                idx, cum, total = [], [], 0.0
                for i, tier in enumerate(self.tiers):
                    if tier <= cap:
                        total += self.prefs[i] * 0.45 ** (cap - tier)
                        idx.append(i)
                        cum.append(total)
                if not idx:  # catalogue without low tiers: take the lowest tanks
                    low = min(self.tiers)
                    for i, tier in enumerate(self.tiers):
                        if tier == low:
                            total += 1.0
                            idx.append(i)
                            cum.append(total)
                cand = self._candidates[cap] = (idx, cum)
            idx, cum = cand
            pick = bisect.bisect_right(cum, rng.random() * cum[-1])
            blocks.append(idx[min(pick, len(idx) - 1)])

    def _battles_per_tank(self, battles: int) -> list[int]:
        full, rem = divmod(battles, BLOCK)
        self._ensure_blocks(full + 1)
        done = bytes(self.blocks[:full])
        counts = [done.count(i) * BLOCK for i in range(len(self.garage))]
        if rem:
            counts[self.blocks[full]] += rem
        return counts

    # --- per-tank numbers ------------------------------------------------------------
    def _tank_rates(self, tank_id: int) -> dict:
        exp = self.world.expectation(tank_id)
        tier = self.world.vehicles[tank_id]["tier"]
        rng = random.Random(f"{self.region}:{self.account_id}:{tank_id}")
        st = self.skill * _clamp(rng.gauss(1.0, 0.08), 0.8, 1.2)  # skill in this tank
        wr = _clamp(float(exp["expWinRate"]) / 100.0 * (0.78 + 0.25 * self.skill) * rng.uniform(0.97, 1.03), 0.30, 0.80)
        dr = rng.uniform(0.006, 0.015)
        shots = (6.0 + 0.4 * tier) * rng.uniform(0.8, 1.2)
        xp = (140 + 75 * tier) * (0.7 + 0.35 * st)
        return {
            "damage_dealt": float(exp["expDamage"]) * st * rng.uniform(0.96, 1.04),
            "frags": float(exp["expFrag"]) * st * rng.uniform(0.94, 1.06),
            "spotted": float(exp["expSpot"]) * st * rng.uniform(0.92, 1.08),
            "dropped_capture_points": float(exp["expDef"]) * st * rng.uniform(0.9, 1.1),
            "capture_points": rng.uniform(0.5, 2.5),
            "xp": xp,
            "survived_battles": _clamp(0.12 + 0.2 * st, 0.05, 0.75),
            "damage_received": float(exp["expDamage"]) * _clamp(1.25 - 0.35 * st, 0.5, 1.4),
            "shots": shots,
            "hit_ratio": _clamp(0.55 + 0.12 * st, 0.4, 0.95),
            "win": wr,
            "draw_of_rest": dr / (1.0 - wr),
            "phase": [rng.random() for _ in range(12)],
        }

    @staticmethod
    def _tank_all(r: dict, b: int) -> dict:
        """Totals after b battles: floor(b * rate + phase) is monotone in b, so stats only grow."""
        ph = r["phase"]
        wins = int(b * r["win"] + ph[0]) if b else 0
        wins = min(wins, b)
        rest = b - wins
        draws = min(rest, int(rest * r["draw_of_rest"] + ph[1])) if rest else 0
        shots = int(b * r["shots"] + ph[2]) if b else 0
        hits = int(shots * r["hit_ratio"] + ph[3]) if shots else 0
        hits = min(hits, shots)
        out = {
            "battles": b,
            "wins": wins,
            "losses": rest - draws,
            "draws": draws,
            "shots": shots,
            "hits": hits,
        }
        for i, key in enumerate(("damage_dealt", "frags", "spotted", "dropped_capture_points",
                                 "capture_points", "xp", "damage_received"), start=4):
            out[key] = int(b * r[key] + ph[i]) if b else 0
        out["survived_battles"] = min(b, int(b * r["survived_battles"] + ph[11])) if b else 0
        out["battle_avg_xp"] = out["xp"] // b if b else 0
        out["hits_percents"] = round(100 * hits / shots) if shots else 0
        return out

    def tanks(self, now: float) -> list[dict]:
        battles = self._battles_through(self._last_day_index(now))
        if self._last is not None and self._last[0] == battles:
            return [dict(t, all=dict(t["all"])) for t in self._last[1]]
        counts = self._battles_per_tank(battles)
        out = []
        for i, b in enumerate(counts):
            if not b:
                continue
            r = self.rates[i]
            growth = math.log1p(b)
            all_ = self._tank_all(r, b)
            out.append({
                "account_id": self.account_id,
                "tank_id": self.garage[i],
                "all": all_,
                "max_xp": int(r["xp"] * (1.4 + 0.35 * growth)),
                "max_frags": min(15, max(1 if all_["frags"] else 0, int(r["frags"] * (1.4 + 0.55 * growth)))),
                "mark_of_mastery": min(4, int(self.skill * 1.6 + 0.5 * math.log10(1 + b))),
                "in_garage": None,
                "_max_damage": int(r["damage_dealt"] * (1.5 + 0.3 * growth)),
            })
        out.sort(key=lambda t: t["tank_id"])
        self._last = (battles, out)
        return [dict(t, all=dict(t["all"])) for t in out]

    def account_info(self, now: float) -> dict:
        tanks = self.tanks(now)
        totals = {k: 0 for k in SUM_FIELDS}
        for t in tanks:
            for k in SUM_FIELDS:
                totals[k] += t["all"][k]
        battles = totals["battles"]
        best_dmg = max(tanks, key=lambda t: t["_max_damage"], default=None)
        best_frags = max(tanks, key=lambda t: t["max_frags"], default=None)
        best_xp = max(tanks, key=lambda t: t["max_xp"], default=None)
        totals.update({
            "battle_avg_xp": totals["xp"] // battles if battles else 0,
            "hits_percents": round(100 * totals["hits"] / totals["shots"]) if totals["shots"] else 0,
            "max_damage": best_dmg["_max_damage"] if best_dmg else 0,
            "max_damage_tank_id": best_dmg["tank_id"] if best_dmg else None,
            "max_frags": best_frags["max_frags"] if best_frags else 0,
            "max_frags_tank_id": best_frags["tank_id"] if best_frags else None,
            "max_xp": best_xp["max_xp"] if best_xp else 0,
            "max_xp_tank_id": best_xp["tank_id"] if best_xp else None,
        })
        last_day = self._last_active(self._last_day_index(now))
        last_battle = (self.day0 + last_day) * DAY + self._play_offset(last_day) if last_day is not None else 0
        seen = max(last_battle, self.created_at)
        rating = 0
        if battles:
            rating = int(1200 + 4200 * (self.skill - 0.4) / 1.35 * min(1.0, battles / 3000)
                         + 600 * min(1.0, battles / 20000) + 300 * min(1.0, battles / 500))
        return {
            "account_id": self.account_id,
            "nickname": nickname(self.region, self.account_id),
            "created_at": self.created_at,
            "last_battle_time": last_battle,
            "logout_at": seen + 1800 if seen + 1800 <= now else seen,
            "updated_at": seen + 1800 if seen + 1800 <= now else seen,
            "global_rating": rating,
            "clan_id": clan_of_account(self.region, self.account_id),
            "client_language": self.language,
            "private": None,
            "statistics": {
                "all": totals,
                "trees_cut": int(battles * self.trees_rate),
                "frags": None,
            },
        }


# --------------------------------------------------------------------------------------
# "fields" parameter (include paths, "-path" excludes), applied per data value
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


def _exclude(obj: Any, path: list[str]) -> None:
    if isinstance(obj, list):
        for x in obj:
            _exclude(x, path)
    elif isinstance(obj, dict) and path[0] in obj:
        if len(path) == 1:
            del obj[path[0]]
        else:
            _exclude(obj[path[0]], path[1:])


def apply_fields(value: Any, fields: str | None) -> Any:
    if value is None or not fields:
        return value
    parts = [p.strip() for p in fields.split(",") if p.strip()]
    includes = [p.split(".") for p in parts if not p.startswith("-")]
    excludes = [p[1:].split(".") for p in parts if p.startswith("-") and len(p) > 1]
    if includes:
        value = _include(value, includes)
    for path in excludes:
        _exclude(value, path)
    return value


def _strip_private(value: Any) -> Any:
    """Drop internal keys (leading underscore) before answering."""
    if isinstance(value, list):
        return [_strip_private(v) for v in value]
    if isinstance(value, dict):
        return {k: _strip_private(v) for k, v in value.items() if not k.startswith("_")}
    return value


# --------------------------------------------------------------------------------------
# Clock, faults, counters
# --------------------------------------------------------------------------------------


class SimClock:
    def __init__(self, offset: float = 0.0, now: float | None = None):
        self.offset = float(offset)
        self.frozen_at: float | None = float(now) if now is not None else None

    def now(self) -> float:
        return self.frozen_at if self.frozen_at is not None else time.time() + self.offset

    def set(self, body: dict) -> None:
        if body.get("reset"):
            self.offset, self.frozen_at = 0.0, None
        if "now" in body and body["now"] is not None:
            now = float(body["now"])
            if body.get("freeze", True):
                self.frozen_at = now
            else:
                self.frozen_at, self.offset = None, now - time.time()
        if "offset" in body and body["offset"] is not None:
            self.frozen_at, self.offset = None, float(body["offset"])
        if "advance" in body and body["advance"] is not None:
            if self.frozen_at is not None:
                self.frozen_at += float(body["advance"])
            else:
                self.offset += float(body["advance"])

    def describe(self) -> dict:
        real = time.time()
        now = self.now()
        return {"now": now, "offset": now - real, "frozen": self.frozen_at is not None, "real_time": real}


FAULT_MODES = ("error", "5xx", "timeout", "limit")


class Faults:
    RATE_KEYS = ("error_rate", "http_5xx_rate", "timeout_rate", "limit_rate")

    def __init__(self, latency_ms: float = 0.0, error_rate: float = 0.0, http_5xx_rate: float = 0.0,
                 timeout_rate: float = 0.0, limit_rate: float = 0.0, hang_seconds: float = 30.0,
                 seed: int | None = None):
        self.latency_ms = float(latency_ms)
        self.error_rate = float(error_rate)
        self.http_5xx_rate = float(http_5xx_rate)
        self.timeout_rate = float(timeout_rate)
        self.limit_rate = float(limit_rate)
        self.hang_seconds = float(hang_seconds)
        self.fail_next = 0
        self.fail_mode = "error"
        self.seed = seed
        self.rng = random.Random(seed)

    def update(self, body: dict) -> None:
        unknown = set(body) - {"latency_ms", "hang_seconds", "fail_mode", "fail_next", "seed", "reset",
                               *self.RATE_KEYS}
        if unknown:
            raise ValueError(f"unknown keys: {', '.join(sorted(unknown))}")
        if body.get("reset"):
            self.__init__(hang_seconds=self.hang_seconds, seed=self.seed)
        for key in ("latency_ms", "hang_seconds", *self.RATE_KEYS):
            if key in body:
                value = float(body[key])
                if value < 0 or (key in self.RATE_KEYS and value > 1):
                    raise ValueError(f"{key} out of range")
                setattr(self, key, value)
        if "fail_mode" in body:
            if body["fail_mode"] not in FAULT_MODES:
                raise ValueError(f"fail_mode must be one of {', '.join(FAULT_MODES)}")
            self.fail_mode = body["fail_mode"]
        if "fail_next" in body:
            if int(body["fail_next"]) < 0:
                raise ValueError("fail_next must be >= 0")
            self.fail_next = int(body["fail_next"])
        if "seed" in body:
            self.seed = body["seed"]
            self.rng = random.Random(self.seed)

    def pick(self) -> str | None:
        if self.fail_next > 0:
            self.fail_next -= 1
            return self.fail_mode
        r = self.rng.random()
        for mode, rate in (("timeout", self.timeout_rate), ("5xx", self.http_5xx_rate),
                           ("limit", self.limit_rate), ("error", self.error_rate)):
            if r < rate:
                return mode
            r -= rate
        return None

    def describe(self) -> dict:
        return {"latency_ms": self.latency_ms, "error_rate": self.error_rate, "http_5xx_rate": self.http_5xx_rate,
                "timeout_rate": self.timeout_rate, "limit_rate": self.limit_rate, "hang_seconds": self.hang_seconds,
                "fail_next": self.fail_next, "fail_mode": self.fail_mode, "seed": self.seed}


class SimState:
    def __init__(self, world: World, clock: SimClock, faults: Faults, application_id: str | None = None):
        self.world = world
        self.clock = clock
        self.faults = faults
        self.application_id = application_id
        self._release: asyncio.Event | None = None
        self.reset_stats()

    def reset_stats(self) -> None:
        self.total = 0
        self.by_path: dict[str, int] = {}
        self.by_endpoint: dict[str, int] = {}
        self.faults_served: dict[str, int] = {}
        self.ids_requested: dict[str, int] = {}
        self.stats_since = time.time()

    def count(self, game: str, region: str, api_path: str) -> None:
        self.total += 1
        self.by_path[api_path] = self.by_path.get(api_path, 0) + 1
        key = f"{game}/{region}/{api_path}"
        self.by_endpoint[key] = self.by_endpoint.get(key, 0) + 1

    def describe_stats(self) -> dict:
        return {"total": self.total, "by_path": dict(self.by_path), "by_endpoint": dict(self.by_endpoint),
                "faults": dict(self.faults_served), "since": self.stats_since}

    @property
    def release_event(self) -> asyncio.Event:
        if self._release is None:
            self._release = asyncio.Event()
        return self._release

    def release_hangs(self) -> None:
        """Let every request held by the timeout fault finish now (used on shutdown)."""
        if self._release is not None:
            self._release.set()
            self._release = None


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
        if not part.isdigit() or not (0 < int(part) < 2 ** 63):
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


def m_tanks_stats(world: World, game: str, region: str, arg: Params, now: float):
    ids = parse_ids(arg("account_id"), "account_id", limit=1)
    tank_ids = set(parse_ids(arg("tank_id"), "tank_id", required=False))
    data = {str(i): apply_fields(world.tanks_stats(region, i, now, tank_ids), arg("fields")) for i in ids}
    return data, {"count": len(data)}


def m_vehicles(world: World, game: str, region: str, arg: Params, now: float):
    tank_ids = parse_ids(arg("tank_id"), "tank_id", required=False)
    rows = [world.vehicles[t] for t in (tank_ids or sorted(world.vehicles)) if t in world.vehicles]
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
        limit = int(limit_raw) if limit_raw else None
        page = int(page_raw) if page_raw else 1
    except ValueError:
        raise ApiError(407, "INVALID_LIMIT" if limit_raw and not limit_raw.isdigit() else "INVALID_PAGE_NO") from None
    if limit is not None and limit <= 0:
        raise ApiError(407, "INVALID_LIMIT", "limit", limit_raw)
    if page < 1:
        raise ApiError(407, "INVALID_PAGE_NO", "page_no", page_raw)
    page_total = max(1, math.ceil(total / limit)) if limit else 1
    if page > page_total:
        raise ApiError(407, "INVALID_PAGE_NO", "page_no", page_raw)
    if limit:
        rows = rows[(page - 1) * limit: page * limit]
    data = {str(r["tank_id"]): apply_fields(dict(r), arg("fields")) for r in rows}
    meta = {"count": len(data), "page_total": page_total, "total": total, "limit": limit or total, "page": page}
    return data, meta


def _per_clan(fn: Callable[[str, int, float], dict | None]):
    def method(world: World, game: str, region: str, arg: Params, now: float):
        ids = parse_ids(arg("clan_id"), "clan_id")
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
    data = {g: world.servers(g, region, now) for g in games}
    return data, {"count": len(data)}


METHODS: dict[str, tuple[tuple[str, ...], Callable]] = {
    "wot/account/info": (("wot",), m_account_info),
    "wot/tanks/stats": (("wot",), m_tanks_stats),
    "wot/encyclopedia/vehicles": (("wot",), m_vehicles),
    "wot/clans/info": (("wot",), _per_clan(World.clan_info)),
    "wot/clanratings/clans": (("wot",), _per_clan(World.clan_rating)),
    "wot/stronghold/claninfo": (("wot",), _per_clan(World.stronghold)),
    "wgn/servers/info": (GAMES, m_servers),
}


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

    def on_connection_close(self) -> None:
        self.client_gone = True
        if self._gone is not None:
            self._gone.set()

    async def get(self, game: str, region: str, path: str) -> None:
        api_path = path.strip("/")
        sim = self.sim
        sim.count(game, region, api_path)
        faults = sim.faults
        if faults.latency_ms > 0:
            await asyncio.sleep(faults.latency_ms / 1000.0)
        fault = faults.pick()
        if fault:
            sim.faults_served[fault] = sim.faults_served.get(fault, 0) + 1
            await self._serve_fault(fault)
            return
        try:
            self.send(self._answer(game, region, api_path))
        except ApiError as exc:
            self.send(exc.body(), exc.http_status)

    post = get

    def _answer(self, game: str, region: str, api_path: str) -> dict:
        arg = lambda name: self.get_argument(name, None)  # noqa: E731
        app_id = arg("application_id")
        if not app_id:
            raise ApiError(402, "APPLICATION_ID_NOT_SPECIFIED", "application_id")
        expected = self.sim.application_id
        if app_id == "invalid" or (expected and app_id != expected):
            raise ApiError(407, "INVALID_APPLICATION_ID", "application_id", app_id)
        entry = METHODS.get(api_path)
        if entry is None or game not in entry[0]:
            raise ApiError(404, "METHOD_NOT_FOUND", "method")
        now = self.sim.clock.now()
        override = arg("_sim_now")
        if override:
            try:
                now = float(override)
            except ValueError:
                raise ApiError(407, "INVALID_SIM_NOW", "_sim_now", override) from None
        data, meta = entry[1](self.sim.world, game, region, arg, now)
        return {"status": "ok", "meta": meta, "data": _strip_private(data)}

    async def _serve_fault(self, fault: str) -> None:
        if fault == "timeout":
            # Hang until the client gives up, the simulator is released, or hang_seconds pass.
            self._gone = asyncio.Event()
            waits = [asyncio.ensure_future(self.sim.release_event.wait()), asyncio.ensure_future(self._gone.wait())]
            try:
                await asyncio.wait(waits, timeout=self.sim.faults.hang_seconds, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for w in waits:
                    w.cancel()
            if self.client_gone:
                return
            self.send(error_body(504, "SOURCE_NOT_AVAILABLE"), 504)
        elif fault == "5xx":
            status = self.sim.faults.rng.choice([500, 502, 503, 504])
            self.set_header("Content-Type", "text/html")
            self.set_status(status)
            self.finish(f"<html><body><h1>{status} {self._reason}</h1></body></html>")
        elif fault == "limit":
            self.send(error_body(407, "REQUEST_LIMIT_EXCEEDED"))
        else:
            self.send(error_body(504, "SOURCE_NOT_AVAILABLE"))


class NotFoundHandler(_Base):
    def get(self, *args: Any) -> None:
        self.send(error_body(404, "METHOD_NOT_FOUND", "method"), 404)

    post = get


class ExpectedValuesHandler(_Base):
    def get(self) -> None:
        self.finish(self.sim.world.expected_bytes)


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
            self.sim.release_hangs()
        self.send(self.sim.faults.describe())


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
        fn = existing_accounts if self.kind == "accounts" else existing_clans
        self.send({"region": region, "ids": fn(region, n, start)})


class IndexHandler(_Base):
    def get(self) -> None:
        self.send({
            "simulator": "upstream_sim",
            "url_scheme": "/{game}/{region}/{api_path}/?application_id=...",
            "games": list(GAMES),
            "regions": list(REGIONS),
            "methods": sorted(METHODS),
            "vehicles": self.sim.world.vehicles_source,
            "expected_values": self.sim.world.expected_source,
            "control": ["/_sim/clock", "/_sim/faults", "/_sim/stats", "/_sim/accounts", "/_sim/clans", "/wn8exp.json"],
        })


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
    logging.getLogger("tornado.access").log(level, "%d %s %s (%s) %.2fms", status, request.method,
                                            _redact(request.uri or ""), request.remote_ip,
                                            1000.0 * request.request_time())


def make_app(vehicles: str | Path | None = None, expected_values: str | Path | None = None,
             clock_offset: float = 0.0, now: float | None = None, latency_ms: float = 0.0,
             error_rate: float = 0.0, http_5xx_rate: float = 0.0, timeout_rate: float = 0.0,
             limit_rate: float = 0.0, hang_seconds: float = 30.0, fault_seed: int | None = None,
             application_id: str | None = None, **settings: Any) -> tornado.web.Application:
    """Build the simulator application; ``app.sim`` is its state (world, clock, faults, counters).

    ``vehicles``: catalogue file (default: ../shared/data/vehicles-2018-06.json when present,
    else a generated catalogue; pass ``"generated"`` to force the generated one).
    ``application_id``: when set, any other value answers INVALID_APPLICATION_ID.
    """
    world = World(vehicles=None if vehicles is None else ("" if vehicles == "generated" else vehicles),
                  expected_values=expected_values)
    sim = SimState(world, SimClock(clock_offset, now),
                   Faults(latency_ms, error_rate, http_5xx_rate, timeout_rate, limit_rate, hang_seconds, fault_seed),
                   application_id)
    kw = {"sim": sim}
    settings.setdefault("log_function", _log_request)
    app = tornado.web.Application([
        (r"/", IndexHandler, kw),
        (r"/wn8exp\.json", ExpectedValuesHandler, kw),
        (r"/_sim/clock/?", ClockHandler, kw),
        (r"/_sim/faults/?", FaultsHandler, kw),
        (r"/_sim/stats/?", StatsHandler, kw),
        (r"/_sim/accounts/?", ListHandler, {"sim": sim, "kind": "accounts"}),
        (r"/_sim/clans/?", ListHandler, {"sim": sim, "kind": "clans"}),
        (r"/(wot|wotb|wows)/(eu|na|asia)/([a-z0-9_]+(?:/[a-z0-9_]+)*)/?", ApiHandler, kw),
        (r"/(.*)", NotFoundHandler, kw),
    ], **settings)
    app.sim = sim
    return app


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Offline Wargaming public API simulator.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9100)
    parser.add_argument("--vehicles", help=f"vehicle list JSON (default: {DEFAULT_VEHICLES} when present; "
                                            "'generated' for a generated catalogue)")
    parser.add_argument("--expected-values", help="XVM expected-values JSON to serve at /wn8exp.json "
                                                  "(default: generated for the catalogue)")
    parser.add_argument("--clock-offset", type=float, default=0.0, help="seconds added to the real clock")
    parser.add_argument("--now", type=float, help="freeze the simulated clock at this unix time")
    parser.add_argument("--latency", type=float, default=0.0, help="added latency per API request, ms")
    parser.add_argument("--error-rate", type=float, default=0.0, help="share answered SOURCE_NOT_AVAILABLE")
    parser.add_argument("--http-5xx-rate", type=float, default=0.0, help="share answered with HTTP 5xx")
    parser.add_argument("--timeout-rate", type=float, default=0.0, help="share that hang (see --hang-seconds)")
    parser.add_argument("--limit-rate", type=float, default=0.0, help="share answered REQUEST_LIMIT_EXCEEDED")
    parser.add_argument("--hang-seconds", type=float, default=30.0, help="how long a 'timeout' request hangs")
    parser.add_argument("--seed", type=int, help="seed for the fault dice")
    parser.add_argument("--application-id", help="accept only this application_id (default: any non-empty)")
    parser.add_argument("--list", type=int, metavar="N", help="print N existing account and clan ids per region, exit")
    args = parser.parse_args(argv)

    if args.list:
        for region in REGIONS:
            print(f"{region} accounts: {' '.join(map(str, existing_accounts(region, args.list)))}")
            print(f"{region} clans:    {' '.join(map(str, existing_clans(region, args.list)))}")
        return

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")

    async def serve() -> None:
        app = make_app(vehicles=args.vehicles, expected_values=args.expected_values,
                       clock_offset=args.clock_offset, now=args.now, latency_ms=args.latency,
                       error_rate=args.error_rate, http_5xx_rate=args.http_5xx_rate,
                       timeout_rate=args.timeout_rate, limit_rate=args.limit_rate,
                       hang_seconds=args.hang_seconds, fault_seed=args.seed,
                       application_id=args.application_id)
        server = app.listen(args.port, address=args.host)
        world = app.sim.world
        log.info("upstream simulator on http://%s:%d (vehicles: %s, %d tanks; expected values: %s)",
                 args.host, args.port, world.vehicles_source, len(world.vehicles), world.expected_source)
        for region in REGIONS:
            log.info("%s: accounts %s ... clans %s ...", region, existing_accounts(region, 3),
                     existing_clans(region, 2))
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signame in ("SIGINT", "SIGTERM"):
            try:
                loop.add_signal_handler(getattr(signal, signame), stop.set)
            except (NotImplementedError, AttributeError, RuntimeError):
                pass
        await stop.wait()
        app.sim.release_hangs()
        server.stop()
        await server.close_all_connections()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
