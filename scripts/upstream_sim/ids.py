"""Constants, stable hashing and the pure id helpers (accounts, clans, veterans, nicknames)."""

from __future__ import annotations

import hashlib
import random
from functools import lru_cache
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_VEHICLES = REPO_ROOT.parent / "shared" / "data" / "vehicles-2018-06.json"

GAMES = ("wot", "wotb", "wows")
REGION_RANGES = {
    "eu": (500_000_000, 999_999_999),
    "na": (1_000_000_000, 1_999_999_999),
    "asia": (2_000_000_000, 2_999_999_999),
}
REGIONS = tuple(REGION_RANGES)
MAX_IDS = 100  # account_id / clan_id per call (wot/account/info, wot/clans/info, wot/clanratings/clans)
MAX_STRONGHOLD_IDS = 10  # clan_id per call of wot/stronghold/claninfo
MAX_VEHICLE_PAGE = 100  # default and maximum "limit" of wot/encyclopedia/vehicles

DAY = 86400
CREATED_MIN = 1338508800  # 2012-06-01
CREATED_MAX = 1717200000  # 2024-06-01
VETERAN_CREATED_MAX = 1401580800  # 2014-06-01
CLAN_CREATED_MIN = 1356998400  # 2013-01-01
CLAN_CREATED_MAX = 1640995200  # 2022-01-01
JOIN_MAX = 1717200000  # 2024-06-01

ACCOUNT_MISSING_SHARE = 0.10  # ids in range that "do not exist"
VETERAN_SHARE = 0.10  # existing accounts with 150-400 played tanks
CLAN_SLICE = 100  # accounts per clan slot
CLAN_EXISTS_SHARE = 0.70  # clan slots that hold a clan
CLAN_DISBANDED_SHARE = 0.05  # clan slots whose clan is disbanded
BLOCK = 5  # battles are played in blocks of this size on one tank (a 5-30 battle day spans 1-6 blocks)
GRINDER_SHARE = 0.03  # accounts that play most days and hundreds of battles a week
BREAK_SEASON = 26  # weeks; in each season an account may take one break of BREAK_WEEKS weeks
BREAK_CHANCE = 0.15
BREAK_WEEKS = (4, 17)  # one to four months without a battle
EVENING_UTC_HOUR = {"eu": 16, "na": 0, "asia": 10}  # start of the 6 h daily play window
LOCAL_UTC_OFFSET = {"eu": 1, "na": -6, "asia": 8}  # for the players-online daily cycle

SUM_FIELDS = (
    "battles",
    "wins",
    "losses",
    "draws",
    "damage_dealt",
    "damage_received",
    "frags",
    "spotted",
    "dropped_capture_points",
    "capture_points",
    "xp",
    "survived_battles",
    "shots",
    "hits",
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
    ("commander", "Commander"),
    ("executive_officer", "Executive Officer"),
    ("personnel_officer", "Personnel Officer"),
    ("combat_officer", "Combat Officer"),
    ("recruitment_officer", "Recruitment Officer"),
    ("intelligence_officer", "Intelligence Officer"),
    ("quartermaster", "Quartermaster"),
    ("junior_officer", "Junior Officer"),
    ("private", "Private"),
    ("recruit", "Recruit"),
    ("reservist", "Reservist"),
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
# Accounts
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


def is_veteran(region: str, account_id: int) -> bool:
    """About 10 % of existing accounts: old, very active, 150-400 tanks played."""
    return account_exists(region, account_id) and _unit("veteran", region, account_id) < VETERAN_SHARE


def veteran_accounts(region: str, n: int, start: int | None = None) -> list[int]:
    """The first ``n`` veteran account ids of ``region`` from ``start`` (default: the region base)."""
    lo, hi = REGION_RANGES[region]
    out: list[int] = []
    account_id = lo if start is None else max(lo, int(start))
    while len(out) < n and account_id <= hi:
        if is_veteran(region, account_id):
            out.append(account_id)
        account_id += 1
    return out


def account_created_at(region: str, account_id: int) -> int:
    u = _unit("created", region, account_id)
    if is_veteran(region, account_id):
        return int(CREATED_MIN + u * (VETERAN_CREATED_MAX - CREATED_MIN))
    return int(CREATED_MIN + u * (CREATED_MAX - CREATED_MIN))


_SYLLABLES = [
    "ka",
    "ro",
    "mi",
    "tan",
    "ker",
    "vo",
    "lek",
    "dra",
    "zu",
    "sha",
    "ni",
    "bor",
    "gra",
    "fel",
    "tor",
    "pan",
    "zer",
    "kil",
    "mo",
    "rex",
    "vi",
    "sta",
    "lo",
    "nik",
    "dar",
]
_WORDS = [
    "Tiger",
    "Panzer",
    "Storm",
    "Wolf",
    "Iron",
    "Steel",
    "Shadow",
    "Hunter",
    "Viking",
    "Ghost",
    "Rhino",
    "Falcon",
    "Cobra",
    "Titan",
    "Sniper",
    "Tanker",
    "Blitz",
    "Raven",
    "Bear",
    "Knight",
]


def nickname(region: str, account_id: int) -> str:
    rng = random.Random(f"nick:{region}:{account_id}")
    style = rng.random()
    if style < 0.45:
        name = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))).capitalize()
    elif style < 0.8:
        # One of three separators drawn as before ("-" was the third): nicknames allow only
        # [A-Za-z0-9_], and the same draw keeps every other part of every nickname unchanged.
        name = rng.choice(_WORDS) + rng.choice(["_", "", "_"]) + rng.choice(_SYLLABLES).capitalize()
    else:
        name = rng.choice(_WORDS).lower() + rng.choice(_SYLLABLES)
    if rng.random() < 0.6:
        name += str(rng.randint(1, 9999))
    return name[:24]


# --------------------------------------------------------------------------------------
# Clans
# --------------------------------------------------------------------------------------


def _clan_layout(region: str) -> tuple[int, int]:
    lo, hi = REGION_RANGES[region]
    return lo // 1000, (hi - lo + 1) // 1000  # (clan id base, number of clan slots)


def _clan_slot_used(region: str, slot: int) -> bool:
    return _unit("clan", region, slot) < CLAN_EXISTS_SHARE


def _clan_slot_disbanded(region: str, slot: int) -> bool:
    """About 5 % of clan slots hold a disbanded clan (never the first slot: the demo clan)."""
    return slot > 0 and _unit("disbanded", region, slot) < CLAN_DISBANDED_SHARE / CLAN_EXISTS_SHARE


def _clan_fill(region: str, slot: int) -> float:
    return 0.15 + 0.8 * _unit("clanfill", region, slot)


def _is_member(region: str, slot: int, account_id: int) -> bool:
    return _unit("member", region, account_id) < _clan_fill(region, slot)


def _slot(region: str, clan_id: int) -> int | None:
    if region not in REGION_RANGES:
        return None
    base, slots = _clan_layout(region)
    slot = clan_id - base
    return slot if 0 <= slot < slots else None


def clan_state(region: str, clan_id: int) -> str | None:
    """ "active", "disbanded", or None (no such clan: the API answers null)."""
    slot = _slot(region, clan_id)
    if slot is None or not _clan_slot_used(region, slot):
        return None
    return "disbanded" if _clan_slot_disbanded(region, slot) else "active"


@lru_cache(maxsize=16384)
def clan_members(region: str, clan_id: int) -> tuple[int, ...]:
    """Account ids of the clan's members (empty when the clan does not exist or is disbanded)."""
    if clan_state(region, clan_id) != "active":
        return ()
    lo, _ = REGION_RANGES[region]
    slot = clan_id - _clan_layout(region)[0]
    first = lo + slot * CLAN_SLICE
    return tuple(
        a for a in range(first, first + CLAN_SLICE) if account_exists(region, a) and _is_member(region, slot, a)
    )


def clan_exists(region: str, clan_id: int) -> bool:
    """True when wot/clans/info answers a record (an active or a disbanded clan), not null."""
    return clan_state(region, clan_id) is not None and (
        clan_state(region, clan_id) == "disbanded" or bool(clan_members(region, clan_id))
    )


def clan_active(region: str, clan_id: int) -> bool:
    """True for a clan that exists and is not disbanded (it has members)."""
    return bool(clan_members(region, clan_id))


def clan_of_account(region: str, account_id: int) -> int | None:
    """The active clan the account belongs to (the clan's member list names it back), or None."""
    if not account_exists(region, account_id):
        return None
    lo, _ = REGION_RANGES[region]
    base, slots = _clan_layout(region)
    slot = (account_id - lo) // CLAN_SLICE
    if (
        slot >= slots
        or not _clan_slot_used(region, slot)
        or _clan_slot_disbanded(region, slot)
        or not _is_member(region, slot, account_id)
    ):
        return None
    return base + slot


def existing_clans(region: str, n: int, start: int | None = None) -> list[int]:
    """The first ``n`` active (not disbanded) clan ids of ``region`` from ``start`` (default: the base)."""
    base, slots = _clan_layout(region)
    out: list[int] = []
    clan_id = base if start is None else max(base, int(start))
    while len(out) < n and clan_id < base + slots:
        if clan_active(region, clan_id):
            out.append(clan_id)
        clan_id += 1
    return out


def disbanded_clans(region: str, n: int, start: int | None = None) -> list[int]:
    """The first ``n`` disbanded clan ids of ``region`` from ``start`` (default: the clan id base)."""
    base, slots = _clan_layout(region)
    out: list[int] = []
    clan_id = base if start is None else max(base, int(start))
    while len(out) < n and clan_id < base + slots:
        if clan_state(region, clan_id) == "disbanded":
            out.append(clan_id)
        clan_id += 1
    return out


def missing_clans(region: str, n: int) -> list[int]:
    """The first ``n`` clan ids of ``region`` that wot/clans/info answers with null."""
    base, slots = _clan_layout(region)
    out, clan_id = [], base
    while len(out) < n and clan_id < base + slots:
        if not clan_exists(region, clan_id):
            out.append(clan_id)
        clan_id += 1
    return out


# --------------------------------------------------------------------------------------
# Region ranges (the strict mode answers an id outside them INVALID_ACCOUNT_ID / INVALID_CLAN_ID)
# --------------------------------------------------------------------------------------


def clan_range(region: str) -> tuple[int, int]:
    """The clan ids of ``region``, inclusive: the account range divided by 1000."""
    base, slots = _clan_layout(region)
    return base, base + slots - 1


def account_in_region(region: str, account_id: int) -> bool:
    """True when ``account_id`` lies in the region's account range (``REGION_RANGES``)."""
    lo, hi = REGION_RANGES[region]
    return lo <= account_id <= hi


def clan_in_region(region: str, clan_id: int) -> bool:
    """True when ``clan_id`` lies in the region's clan range (``clan_range``)."""
    lo, hi = clan_range(region)
    return lo <= clan_id <= hi


def _next_region(region: str) -> str:
    regions = list(REGION_RANGES)
    return regions[(regions.index(region) + 1) % len(regions)]


def invalid_account_ids(region: str, n: int) -> list[int]:
    """``n`` account ids outside ``region``'s range: existing accounts of the next region (eu -> na
    -> asia -> eu), so the same ids are valid there; the strict mode answers them INVALID_ACCOUNT_ID."""
    return existing_accounts(_next_region(region), n)


def invalid_account_id(region: str) -> int:
    """One account id outside ``region``'s range (an existing account of another region)."""
    return invalid_account_ids(region, 1)[0]


def invalid_clan_ids(region: str, n: int) -> list[int]:
    """``n`` clan ids outside ``region``'s clan range (active clans of the next region)."""
    return existing_clans(_next_region(region), n)


def invalid_clan_id(region: str) -> int:
    """One clan id outside ``region``'s clan range (an active clan of another region)."""
    return invalid_clan_ids(region, 1)[0]
