"""One simulated account: battles per day, garage, per-tank statistics blocks and account totals.

Generation is lazy and cheap for a never-seen account: a tank's rates are drawn on its first battle
count (each tank has its own seeded generator, so the numbers do not depend on which tanks were asked
for first), battle weeks are summed with 64-bit lanes packed into one big integer, blocks of battles
are drawn in runs, and account/info totals come from the per-tank "all" counters only (the per-tank
block records of tanks/stats are built when tanks/stats is asked for).
"""

from __future__ import annotations

import math
import random
import threading
from _random import Random as _CoreRandom
from array import array
from hashlib import blake2b, sha512
from itertools import accumulate, islice
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import ujson

from .ids import (
    _M64,
    BLOCK,
    BREAK_CHANCE,
    BREAK_SEASON,
    BREAK_WEEKS,
    DAY,
    EVENING_UTC_HOUR,
    GRINDER_SHARE,
    JOIN_MAX,
    SUM_FIELDS,
    _clamp,
    _mix,
    _seed,
    _unit,
    account_created_at,
    clan_of_account,
    is_veteran,
    nickname,
)

if TYPE_CHECKING:
    from .world import World

# Counters of one statistics block, in the real API's order (tanks/stats and account/info).
BLOCK_FIELDS = (
    "battles",
    "wins",
    "losses",
    "draws",
    "xp",
    "battle_avg_xp",
    "damage_dealt",
    "damage_received",
    "frags",
    "spotted",
    "shots",
    "hits",
    "hits_percents",
    "capture_points",
    "dropped_capture_points",
    "survived_battles",
    "tanking_factor",
    "avg_damage_blocked",
    "avg_damage_assisted",
    "avg_damage_assisted_track",
    "avg_damage_assisted_radio",
    "direct_hits_received",
    "explosion_hits",
    "explosion_hits_received",
    "no_damage_direct_hits_received",
    "piercings",
    "piercings_received",
    "stun_assisted_damage",
    "stun_number",
    "battles_on_stunning_vehicles",
)
EXTRA_COUNTS = (
    "direct_hits_received",
    "explosion_hits",
    "explosion_hits_received",
    "no_damage_direct_hits_received",
    "piercings",
    "piercings_received",
    "stun_assisted_damage",
    "stun_number",
    "battles_on_stunning_vehicles",
)
AVERAGES = (
    "tanking_factor",
    "avg_damage_blocked",
    "avg_damage_assisted",
    "avg_damage_assisted_track",
    "avg_damage_assisted_radio",
)
# Counts scaled when a block is a share of "all" (the averages and ratios are copied or recomputed).
_SCALED = tuple(
    k
    for k in BLOCK_FIELDS
    if k not in AVERAGES and k not in ("battles", "wins", "losses", "draws", "battle_avg_xp", "hits_percents")
)
TANK_BLOCKS = ("clan", "company", "globalmap", "regular_team", "stronghold_defense", "stronghold_skirmish", "team")
# What tanks/stats leaves out of a tank's blocks, as the real API does (its method reference:
# IceflowRE/go-wargaming wot/tanks_stats.go): the spotting and tracking assistance exist per
# account only (account/info statistics.all) — and, per tank, only in the global map block.
NOT_PER_TANK = ("avg_damage_assisted", "avg_damage_assisted_track", "avg_damage_assisted_radio")
PER_TANK_ASSISTED = ("globalmap",)
ACCOUNT_BLOCKS = ("clan", "company", "historical", "regular_team", "stronghold_defense", "stronghold_skirmish", "team")
ZERO_BLOCK = {k: 0 for k in BLOCK_FIELDS}  # shared, never mutated (apply_fields copies)


def scaled_block(base: dict, battles: int) -> dict:
    """A block with ``battles`` of the battles in ``base`` (same averages, counts in proportion)."""
    b = base["battles"]
    if battles <= 0 or not b:
        return ZERO_BLOCK
    f = battles / b
    wins, draws, xp = int(base["wins"] * f), int(base["draws"] * f), int(base["xp"] * f)
    shots, hits = int(base["shots"] * f), int(base["hits"] * f)
    if hits > shots:
        hits = shots
    survived = int(base["survived_battles"] * f)
    if survived > battles:
        survived = battles
    return {  # BLOCK_FIELDS order
        "battles": battles,
        "wins": wins,
        "losses": battles - wins - draws,
        "draws": draws,
        "xp": xp,
        "battle_avg_xp": xp // battles,
        "damage_dealt": int(base["damage_dealt"] * f),
        "damage_received": int(base["damage_received"] * f),
        "frags": int(base["frags"] * f),
        "spotted": int(base["spotted"] * f),
        "shots": shots,
        "hits": hits,
        "hits_percents": round(100 * hits / shots) if shots else 0,
        "capture_points": int(base["capture_points"] * f),
        "dropped_capture_points": int(base["dropped_capture_points"] * f),
        "survived_battles": survived,
        "tanking_factor": base["tanking_factor"],
        "avg_damage_blocked": base["avg_damage_blocked"],
        "avg_damage_assisted": base["avg_damage_assisted"],
        "avg_damage_assisted_track": base["avg_damage_assisted_track"],
        "avg_damage_assisted_radio": base["avg_damage_assisted_radio"],
        "direct_hits_received": int(base["direct_hits_received"] * f),
        "explosion_hits": int(base["explosion_hits"] * f),
        "explosion_hits_received": int(base["explosion_hits_received"] * f),
        "no_damage_direct_hits_received": int(base["no_damage_direct_hits_received"] * f),
        "piercings": int(base["piercings"] * f),
        "piercings_received": int(base["piercings_received"] * f),
        "stun_assisted_damage": int(base["stun_assisted_damage"] * f),
        "stun_number": int(base["stun_number"] * f),
        "battles_on_stunning_vehicles": int(base["battles_on_stunning_vehicles"] * f),
    }


# --- fast paths that draw exactly what random.Random would --------------------------------
_TWOPI = random.TWOPI
_WEEK_STEP = np.uint64(0xD1B54A32D192ED03)
_PACKED_MIN = 16  # weeks from which the vectorised (all weeks at once) week sums pay off
_local = threading.local()
_tuple_new = tuple.__new__
_SHIFTS = np.arange(0, 63, 9, dtype=np.uint64)  # the 7 days' 9-bit fields of a week's hash
_RES53 = 1.0 / 9007199254740992.0


def _generators() -> tuple[_CoreRandom, _CoreRandom]:
    """Two bare Mersenne Twisters of this thread, re-seeded per tank (seeding is what costs)."""
    g = getattr(_local, "generators", None)
    if g is None:
        g = _local.generators = (_CoreRandom(0), _CoreRandom(0))
    return g


def _seed_like_random_str(gen: _CoreRandom, text: bytes) -> None:
    """``random.Random(text)`` (version 2 string seed) without building a Random object."""
    _CoreRandom.seed(gen, int.from_bytes(text + sha512(text).digest(), "big"))


def _randoms(gen: random.Random, n: int) -> np.ndarray:
    """The next n ``gen.random()`` values at once, leaving ``gen`` where n calls would: random() is
    two 32-bit outputs (53 bits: the first's top 27, the second's top 26) and getrandbits(64 n)
    takes exactly those 2 n outputs, least significant word first."""
    if n <= 0:
        return np.zeros(0)
    words = np.frombuffer(gen.getrandbits(64 * n).to_bytes(8 * n, "little"), dtype="<u4")
    return ((words[0::2] >> 5).astype(np.float64) * 67108864.0 + (words[1::2] >> 6)) * _RES53


def _week_sums(seed: int, table: np.ndarray, start: int, n: int) -> list[int]:
    """Battles in each of the weeks start..start+n-1, exactly as ``sum(Profile._week(w))`` without the
    week-0, quit and break rules: splitmix64 of every week at once on uint64 arrays (numpy's
    products wrap modulo 2**64 as the masked integers do)."""
    x = np.arange(start, start + n, dtype=np.uint64) * _WEEK_STEP + np.uint64(seed)
    x += np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    h = x ^ (x >> np.uint64(31))
    which = (h >> np.uint64(63)) << np.uint64(9)  # table[0] or table[1] of the two day tables, concatenated
    days = ((h[:, None] >> _SHIFTS) & np.uint64(511)) | which[:, None]
    return table[days.astype(np.intp)].sum(axis=1).tolist()


class TankRates(NamedTuple):
    """One tank's per-battle rates in one account (drawn once; see Profile._tank_rates)."""

    win: float
    draw_of_rest: float
    shots: float
    hit_ratio: float
    damage_dealt: float
    frags: float
    spotted: float
    dropped_capture_points: float
    capture_points: float
    xp: float
    damage_received: float
    survived_battles: float
    phase: list[float]  # 12 offsets in [0, 1): floor(b * rate + phase)
    tanking_factor: float  # the extra counters (their own generator) ...
    avg_damage_blocked: float
    avg_damage_assisted: float
    avg_damage_assisted_track: float
    avg_damage_assisted_radio: float
    direct_hits_received: float
    explosion_hits: float
    explosion_hits_received: float
    no_damage_direct_hits_received: float
    piercings: float
    piercings_received: float
    stun_assisted_damage: float
    stun_number: float
    battles_on_stunning_vehicles: float
    victims: list[str]  # tank ids (as the frags keys) that the tank's frags go to
    variation: list[float]  # per TANK_BLOCKS: the block's share of battles times this


class Profile:
    """One account: skill, activity, garage, and closed-form-ish totals at any instant."""

    def __init__(self, world: World, region: str, account_id: int):
        self.world = world
        self.region = region
        self.account_id = account_id
        self.veteran = is_veteran(region, account_id)
        rng = random.Random(f"{region}:{account_id}")
        self.created_at = account_created_at(region, account_id)
        self.day0 = self.created_at // DAY
        # Skill: ~log-normal around an average player, bounded (WN8 roughly 300..3500).
        self.skill = _clamp(math.exp(rng.gauss(math.log(0.8), 0.3)), 0.38, 1.6)
        # A playing day has 5-30 battles (5 + an exponential of mean `lam`, capped); about 30-50 % of
        # the accounts play on a given day (normal and "quiet" weeks), some take breaks of months
        # (see _in_break), some quit for good, a few grind hundreds of battles a week.
        p = 0.35 + 0.6 * (rng.uniform(0.2, 0.85) - 0.2) / 0.65  # chance to play on a normal day
        lam = rng.uniform(2.0, 12.0)  # mean battles over 5 on a playing day
        low = rng.uniform(0.05, 0.45)  # play chance factor in a "quiet" week
        self.quit_week = rng.randint(30, 500) if rng.random() < 0.12 else None
        first, cap = 5, 30
        self.grinder = _unit("grinder", region, account_id) < GRINDER_SHARE
        if self.veteran:  # old, busy accounts: tens of thousands of battles
            p, lam, low = 0.6 + 0.3 * (p - 0.35) / 0.6, 4.0 + 0.6 * lam, 0.5 + low
            self.quit_week = None
        if self.grinder:
            p, lam, low, first, cap = 0.9, 25.0 + 2 * lam, 0.9, 15, 120
            self.quit_week = None
        self.tables = (
            self._day_table(p, lam, first, cap),
            self._day_table(min(1.0, p * low), lam * 0.7, first, cap),
        )
        # Indexed by (h >> 63) << 9 | 9 bits (the vectorised week sums).
        self.week_table = np.array(self.tables[0] + self.tables[1], dtype=np.int16)
        self.seed_days = _seed("days", region, account_id)
        self.seed_breaks = None if self.grinder else _seed("breaks", region, account_id)
        self.seed_offsets = _seed("offsets", region, account_id)
        self.speed = rng.uniform(0.6, 1.6)
        self.tier_thresholds = [self.speed * 120 * (tier - 1) ** 1.7 for tier in range(2, 11)]
        self.language = rng.choice(
            {
                "eu": ["en", "de", "pl", "fr", "cs", "es"],
                "na": ["en", "en", "es", "pt-br"],
                "asia": ["en", "th", "ja", "ko", "zh-tw", "vi"],
            }[region]
        )
        self.trees_rate = rng.uniform(0.2, 2.5)

        # Garage: a few tanks per tier, each with a preference weight.
        garage: list[int] = []
        prefs: list[float] = []
        for tier in range(1, 11):
            pool = world.by_tier.get(tier, [])
            if not pool:
                continue
            k = min(len(pool), rng.randint(2, 5) if tier < 8 else rng.randint(2, 7))
            # k of the tier's tanks, weighted by popularity, without replacement (Efraimidis-Spirakis:
            # the k largest random() ** (1 / weight); a stable sort: ties keep the pool's order).
            keys = list(map(pow, _randoms(rng, len(pool)).tolist(), world.popularity_exponents(tier)))
            for n in sorted(range(len(pool)), key=keys.__getitem__, reverse=True)[:k]:
                garage.append(pool[n])
                prefs.append(rng.uniform(0.25, 1.0) ** 2)
        self.garage = garage[:255]
        self.prefs = prefs[:255]
        self.wcum = array("q", [0])  # wcum[w] = battles in weeks before week w
        if self.veteran:
            self._veteran_garage()
        self.tiers = [world.vehicles[t]["tier"] for t in self.garage]
        self._candidates: dict[int, tuple[np.ndarray, np.ndarray, float]] = {}
        self._thresholds = np.array(self.tier_thresholds)
        self.blocks = np.zeros(0, dtype=np.uint16)  # garage index of each block of BLOCK battles
        self.block_rng = random.Random(f"blocks:{region}:{account_id}")
        # A tank's rates are drawn on first use (own generator per tank: order does not matter).
        self.rates: list[TankRates | None] = [None] * len(self.garage)
        self._rate_key = f"{region}:{account_id}:"
        self._extra_key = f"extra\x1f{region}\x1f{account_id}\x1f".encode()
        self._block_factors: list[float] | None = None
        self.in_clan = clan_of_account(region, account_id) is not None
        srng = random.Random(f"shares:{region}:{account_id}")
        self.shares = {
            "clan": srng.uniform(0.02, 0.12) if self.in_clan else 0.0,
            "company": srng.uniform(0.0, 0.02) if srng.random() < 0.3 else 0.0,
            "globalmap": srng.uniform(0.01, 0.05) if self.in_clan and srng.random() < 0.5 else 0.0,
            "regular_team": srng.uniform(0.0, 0.01) if srng.random() < 0.1 else 0.0,
            "stronghold_defense": srng.uniform(0.0, 0.02) if self.in_clan else 0.0,
            "stronghold_skirmish": srng.uniform(0.02, 0.1) if self.in_clan else 0.0,
            "team": srng.uniform(0.0, 0.01) if srng.random() < 0.15 else 0.0,
            "historical": srng.uniform(0.0, 0.01) if srng.random() < 0.2 else 0.0,
        }
        self._base: tuple | None = None
        self._last: tuple[int, list[dict], list[int]] | None = None
        self._last_stats: tuple[int, dict] | None = None
        self._last_bytes: tuple[int, bytes] | None = None

    def _veteran_garage(self) -> None:
        """150-400 tanks from the whole catalogue, unlocked one after another (low tiers first)."""
        world = self.world
        vrng = random.Random(f"veteran:{self.region}:{self.account_id}")
        pool = world.tank_ids  # sorted(world.vehicles)
        size = min(len(pool), 150 + int(251 * _unit("vetsize", self.region, self.account_id)))
        chosen = vrng.sample(pool, size)
        vehicles, rnd = world.vehicles, vrng.random  # uniform(a, b) is a + (b - a) * random()
        keyed = sorted(chosen, key=lambda t: (vehicles[t]["tier"] + (-2.0 + (2.0 - -2.0) * rnd()), t))
        self.garage = keyed
        self.prefs = [(0.25 + (1.0 - 0.25) * rnd()) ** 2 * (1 + vehicles[t]["tier"]) for t in keyed]
        # Battles by mid-2024 decide the unlock spacing, so every tank is played by then.
        ref = self._battles_through(JOIN_MAX // DAY - self.day0)
        self.unlock_step = max(BLOCK, min(80, int(0.8 * ref / size))) if size else BLOCK
        self.vcum: np.ndarray | None = None  # cumulative preferences in unlock order

    # --- battles per day -------------------------------------------------------------
    @staticmethod
    def _day_table(p: float, lam: float, first: int = 5, cap: int = 30) -> list[int]:
        """Battles on a day from 9 random bits: 4 decide whether, 5 how many (first + an
        exponential of mean lam, at most cap)."""
        plays = [((low + 0.5) / 16.0 < p) for low in range(16)]
        log = math.log
        counts = [min(cap, first + int(-lam * log(1 - (high + 0.5) / 32.0))) for high in range(32)]
        return [n if play else 0 for n in counts for play in plays]

    def _season_break(self, s: int) -> tuple[int, int] | None:
        """The weeks [start, end) of the break season s starts, or None: in each BREAK_SEASON weeks an
        account starts one with BREAK_CHANCE, at a stable week of the season, lasting BREAK_WEEKS
        (it may run into the next)."""
        if self.seed_breaks is None or s < 0:
            return None
        h = _mix((self.seed_breaks + s * 0x9E3779B97F4A7C15) & _M64)
        if (h & 0xFFFF) >= BREAK_CHANCE * 0x10000:
            return None
        start = s * BREAK_SEASON + (h >> 16) % BREAK_SEASON
        return start, start + BREAK_WEEKS[0] + (h >> 32) % (BREAK_WEEKS[1] - BREAK_WEEKS[0])

    def _in_break(self, w: int) -> bool:
        """Week w falls in a break (of its season's or the season before's)."""
        season = w // BREAK_SEASON
        for s in (season, season - 1):
            found = self._season_break(s)
            if found is not None and found[0] <= w < found[1]:
                return True
        return False

    def _week(self, w: int) -> list[int]:
        if w < 0 or (self.quit_week is not None and w >= self.quit_week) or self._in_break(w):
            return [0] * 7
        h = _mix((self.seed_days + w * 0xD1B54A32D192ED03) & _M64)
        table = self.tables[h >> 63]
        days = [table[(h >> (9 * k)) & 511] for k in range(7)]
        if w == 0:
            days[0] = 0  # nothing on the creation day
        return days

    def _ensure_weeks(self, w: int) -> None:
        """wcum through week w (battles in weeks before w): many weeks at once, vectorised."""
        wcum = self.wcum
        start = len(wcum) - 1
        if start >= w:
            return
        stop = w if self.quit_week is None else max(start, min(w, self.quit_week))
        if stop - start >= _PACKED_MIN:
            sums = _week_sums(self.seed_days, self.week_table, start, stop - start)
            if start == 0:
                sums[0] = sum(self._week(0))  # nothing on the creation day
            if self.seed_breaks is not None:  # each season's break at once, not week by week
                for season in range(start // BREAK_SEASON - 1, (stop - 1) // BREAK_SEASON + 1):
                    found = self._season_break(season)
                    if found is not None:
                        lo, hi = max(found[0], start), min(found[1], stop)
                        if lo < hi:
                            sums[lo - start : hi - start] = [0] * (hi - lo)
        else:
            sums = [sum(self._week(v)) for v in range(start, stop)]
        sums.extend([0] * (w - stop))  # after quitting
        wcum.extend(islice(accumulate(sums, initial=wcum[-1]), 1, None))

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

    def _today(self, now: float) -> tuple[int, int, float, float] | None:
        """With the world's battle_seconds: today's session while it is under way, as (day index,
        battles that day, first battle's start, last battle's end); None otherwise (no spread, no
        battles today, or the session over: _last_day_index then counts the whole day)."""
        spread = self.world.battle_seconds
        k = int(now // DAY) - self.day0
        if not spread or k < 0 or self._last_day_index(now) >= k:
            return None
        n = self._battles_through(k) - self._battles_through(k - 1)
        if not n:
            return None
        day_start = (self.day0 + k) * DAY
        end = day_start + self._play_offset(k)
        return k, n, max(day_start, end - n * spread), end

    def _played_today(self, now: float) -> tuple[int, float | None]:
        """Battles of today's session over by `now` (one every (end - start) / n seconds) and when
        the last of them ended."""
        today = self._today(now)
        if today is None:
            return 0, None
        _, n, start, end = today
        if now <= start or end <= start:
            return 0, None
        done = min(n, int(n * (now - start) / (end - start)))
        return done, (start + done * (end - start) / n) if done else None

    def _battles_at(self, now: float) -> int:
        """Career battles at `now`: every complete day's, and today's so far when they are spread."""
        return self._battles_through(self._last_day_index(now)) + self._played_today(now)[0]

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
    def _candidates_of(self, cap: int) -> tuple[np.ndarray, np.ndarray, float]:
        """The garage indexes a block may go to below tier cap + 1, their cumulative preference
        weights (the weights of lower tiers shrink by 0.45 a tier) and their total."""
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
            cand = self._candidates[cap] = (np.array(idx, dtype=np.uint16), np.array(cum), total)
        return cand

    def _ensure_blocks(self, n: int) -> None:
        """The garage index of each block of battles through block n - 1: block m goes to a tank of at
        most the tier its m * BLOCK battles unlock, by preference (one random() of block_rng a block,
        in order; all of them drawn at once, each chosen as bisect_right over the cumulative weights)."""
        if self.veteran:
            self._ensure_veteran_blocks(n)
            return
        m = len(self.blocks)
        if m >= n:
            return
        battles = np.arange(m, n, dtype=np.int64) * BLOCK
        # The highest tier unlocked by each block's battles: 1 + the tier thresholds reached.
        caps = np.searchsorted(self._thresholds, battles, side="right") + 1
        scaled = _randoms(self.block_rng, n - m)
        new = np.empty(n - m, dtype=np.uint16)
        for cap in range(int(caps[0]), int(caps[-1]) + 1):  # caps only grow with m: runs of blocks
            a, b = np.searchsorted(caps, cap, side="left"), np.searchsorted(caps, cap, side="right")
            if a < b:
                idx, cum, total = self._candidates_of(cap)
                chosen = np.searchsorted(cum, scaled[a:b] * total, side="right")
                new[a:b] = idx[np.minimum(chosen, len(idx) - 1)]
        self.blocks = np.concatenate((self.blocks, new))

    def _ensure_veteran_blocks(self, n: int) -> None:
        """A newly unlocked tank gets the next block (tank k at block ceil(k * unlock_step / BLOCK));
        other blocks go to the unlocked tanks by preference, one random() each, in order."""
        m = len(self.blocks)
        if m >= n:
            return
        size, step = len(self.garage), self.unlock_step
        if self.vcum is None:
            self.vcum = np.array(list(accumulate(self.prefs)))
        blocks = np.arange(m, n, dtype=np.int64)
        unlocked = np.minimum(size, (blocks * BLOCK) // step + 1)  # tanks unlocked by each block
        k = unlocked - 1
        unlocking = (k < size) & (-(-(k * step) // BLOCK) == blocks)  # the block that unlocks tank k
        new = k.astype(np.uint16)
        drawn = ~unlocking
        totals = self.vcum[k[drawn]]
        chosen = np.searchsorted(self.vcum, _randoms(self.block_rng, int(drawn.sum())) * totals, side="right")
        new[drawn] = np.minimum(chosen, k[drawn])
        self.blocks = np.concatenate((self.blocks, new))

    def _battles_per_tank(self, battles: int) -> list[int]:
        full, rem = divmod(battles, BLOCK)
        self._ensure_blocks(full + 1)
        counts = np.bincount(self.blocks[:full], minlength=len(self.garage)) * BLOCK
        if rem:
            counts[self.blocks[full]] += rem
        return counts.tolist()

    # --- per-tank numbers ------------------------------------------------------------
    def _rate(self, i: int) -> TankRates:
        """The rates of garage tank i, drawn on first use."""
        r = self.rates[i]
        if r is None:
            r = self.rates[i] = self._tank_rates(self.garage[i])
        return r

    def _tank_rates(self, tank_id: int) -> TankRates:
        """The draws of ``random.Random(f"{region}:{account_id}:{tank_id}")`` and of
        ``random.Random(_seed("extra", region, account_id, tank_id))``, done inline on two bare
        generators: ``uniform(a, b)`` is ``a + (b - a) * random()``, the first ``gauss`` of a fresh
        generator is Box-Muller on two draws, ``randint``/``choice`` take getrandbits(n.bit_length())
        until below n. The numbers are the ones the Random methods give."""
        world = self.world
        exp_win, exp_damage, exp_frag, exp_spot, exp_def = world.expectation_rates(tank_id)
        vehicle = world.vehicles[tank_id]
        tier = vehicle["tier"]
        skill = self.skill
        rng, x = _generators()
        _seed_like_random_str(rng, (self._rate_key + str(tank_id)).encode())
        rnd = rng.random
        x2pi = rnd() * _TWOPI  # rng.gauss(1.0, 0.08)
        g2rad = math.sqrt(-2.0 * math.log(1.0 - rnd()))
        st = skill * _clamp(1.0 + math.cos(x2pi) * g2rad * 0.08, 0.8, 1.2)  # skill in this tank
        wr = _clamp(exp_win / 100.0 * (0.78 + 0.25 * skill) * (0.97 + (1.03 - 0.97) * rnd()), 0.30, 0.80)
        dr = 0.006 + (0.015 - 0.006) * rnd()
        shots = (6.0 + 0.4 * tier) * (0.8 + (1.2 - 0.8) * rnd())
        dmg = exp_damage * st * (0.96 + (1.04 - 0.96) * rnd())
        frags = exp_frag * st * (0.94 + (1.06 - 0.94) * rnd())
        spotted = exp_spot * st * (0.92 + (1.08 - 0.92) * rnd())
        dropped = exp_def * st * (0.9 + (1.1 - 0.9) * rnd())
        capture = 0.5 + (2.5 - 0.5) * rnd()
        phase = [rnd(), rnd(), rnd(), rnd(), rnd(), rnd(), rnd(), rnd(), rnd(), rnd(), rnd(), rnd()]
        hit_ratio = _clamp(0.55 + 0.12 * st, 0.4, 0.95)
        # The extra counters come from their own generator: the numbers above never change.
        _CoreRandom.seed(
            x, int.from_bytes(blake2b(self._extra_key + str(tank_id).encode(), digest_size=8).digest(), "big")
        )
        xr = x.random
        spg = vehicle["type"] == "SPG"
        tanking_factor = round(0.2 + (0.8 - 0.2) * xr(), 2)
        avg_blocked = round(dmg * (0.2 + (1.2 - 0.2) * xr()), 2)
        avg_assisted = round(dmg * (0.2 + (0.8 - 0.2) * xr()), 2)
        avg_track = round(dmg * (0.05 + (0.3 - 0.05) * xr()), 2)
        avg_radio = round(dmg * (0.1 + (0.5 - 0.1) * xr()), 2)
        direct_received = 3.0 + (9.0 - 3.0) * xr()
        explosion = (0.2 + (3.0 - 0.2) * xr()) if spg else (0.0 + (0.6 - 0.0) * xr())
        explosion_received = 0.1 + (1.2 - 0.1) * xr()
        no_damage_received = 0.3 + (2.5 - 0.3) * xr()
        piercings = shots * hit_ratio * (0.6 + (0.9 - 0.6) * xr())
        piercings_received = 2.0 + (6.0 - 2.0) * xr()
        stun_damage = dmg * (0.3 + (0.9 - 0.3) * xr()) if spg else 0.0
        stun_number = (1.0 + (4.0 - 1.0) * xr()) if spg else 0.0
        bits = x.getrandbits
        n_victims = bits(3)  # randint(2, 6)
        while n_victims >= 5:
            n_victims = bits(3)
        tank_ids = world.tank_ids
        size = len(tank_ids)
        k = size.bit_length()
        victims = []
        for _ in range(2 + n_victims):  # choice(tank_ids)
            v = bits(k)
            while v >= size:
                v = bits(k)
            victims.append(str(tank_ids[v]))
        variation = [
            0.5 + (1.5 - 0.5) * xr(),
            0.5 + (1.5 - 0.5) * xr(),
            0.5 + (1.5 - 0.5) * xr(),
            0.5 + (1.5 - 0.5) * xr(),
            0.5 + (1.5 - 0.5) * xr(),
            0.5 + (1.5 - 0.5) * xr(),
            0.5 + (1.5 - 0.5) * xr(),
        ]  # one per TANK_BLOCKS
        return _tuple_new(
            TankRates,
            (
                wr,
                dr / (1.0 - wr),
                shots,
                hit_ratio,
                dmg,
                frags,
                spotted,
                dropped,
                capture,
                (140 + 75 * tier) * (0.7 + 0.35 * st),
                exp_damage * _clamp(1.25 - 0.35 * st, 0.5, 1.4),
                _clamp(0.12 + 0.2 * st, 0.05, 0.75),
                phase,
                tanking_factor,
                avg_blocked,
                avg_assisted,
                avg_track,
                avg_radio,
                direct_received,
                explosion,
                explosion_received,
                no_damage_received,
                piercings,
                piercings_received,
                stun_damage,
                stun_number,
                1.0 if spg else 0.0,
                victims,
                variation,
            ),
        )

    @staticmethod
    def _tank_row(r: TankRates, b: int) -> tuple:
        """A tank's "all" counters after b battles, in BLOCK_FIELDS order. floor(b * rate + phase) is
        monotone in b, so stats only grow."""
        (
            win,
            draw_of_rest,
            shots_r,
            hit_ratio,
            dmg,
            frags,
            spotted,
            dropped,
            capture,
            xp_r,
            received,
            survived,
            phase,
            tf,
            blocked,
            assisted,
            track,
            radio,
            direct_r,
            explosion,
            explosion_received,
            no_damage,
            piercings,
            piercings_received,
            stun_damage,
            stun_number,
            stunning,
            _,
            _,
        ) = r
        if not b:
            return (0,) * 16 + (tf, blocked, assisted, track, radio) + (0,) * 9
        p0, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11 = phase
        wins = int(b * win + p0)
        if wins > b:
            wins = b
        rest = b - wins
        draws = min(rest, int(rest * draw_of_rest + p1)) if rest else 0
        shots = int(b * shots_r + p2)
        hits = min(int(shots * hit_ratio + p3), shots) if shots else 0
        xp = int(b * xp_r + p9)
        direct = int(b * direct_r)
        pierced = min(int(b * piercings_received), direct)
        return (
            b,
            wins,
            rest - draws,
            draws,
            xp,
            xp // b,
            int(b * dmg + p4),
            int(b * received + p10),
            int(b * frags + p5),
            int(b * spotted + p6),
            shots,
            hits,
            round(100 * hits / shots) if shots else 0,
            int(b * capture + p8),
            int(b * dropped + p7),
            min(b, int(b * survived + p11)),
            tf,
            blocked,
            assisted,
            track,
            radio,
            direct,
            int(b * explosion),
            int(b * explosion_received),
            min(int(b * no_damage), direct - pierced),
            min(int(b * piercings), hits),
            pierced,
            int(b * stun_damage),
            int(b * stun_number),
            int(b * stunning),
        )

    @staticmethod
    def _tank_all_full(r: TankRates, b: int) -> dict:
        """The real API's ~30 counters of a tank after b battles."""
        return dict(zip(BLOCK_FIELDS, Profile._tank_row(r, b)))

    @staticmethod
    def _frags_dict(r: TankRates, frags: int) -> dict:
        """Frags by victim: half of what is left to each victim, the rest to the last one."""
        out: dict[str, int] = {}
        victims = r.victims
        last = len(victims) - 1
        left = frags
        for n, v in enumerate(victims):
            if not left:
                break
            c = left if n == last else left // 2
            if c:
                out[v] = out.get(v, 0) + c
            left -= c
        return out

    def tanks(self, now: float) -> list[dict]:
        """The tanks/stats records (shared and cached per battle count: callers must not mutate)."""
        return self._tanks(now)[0]

    def tanks_json(self, now: float) -> bytes:
        """``tanks(now)`` serialised (cached per battle count: a veteran's answer is over 1 MB)."""
        tanks = self.tanks(now)
        battles = self._last[0] if self._last else 0
        if self._last_bytes is None or self._last_bytes[0] != battles:
            self._last_bytes = (battles, ujson.dumps(tanks, ensure_ascii=False).encode())
        return self._last_bytes[1]

    def _played(self, now: float) -> tuple:
        """Per played tank (by tank id) at ``now``: garage index, battles, "all" row, frags, max damage,
        max frags, max xp; what account/info needs, without the per-tank blocks (cached per battle count)."""
        battles = self._battles_at(now)
        base = self._base
        if base is not None and base[0] == battles:
            return base
        counts = self._battles_per_tank(battles)
        garage, rates = self.garage, self.rates
        order = sorted((i for i, b in enumerate(counts) if b), key=garage.__getitem__)
        played = [counts[i] for i in order]
        rows, frags, max_damage, max_frags, max_xp = [], [], [], [], []
        log1p, tank_row, frags_dict = math.log1p, self._tank_row, self._frags_dict
        for i, b in zip(order, played):
            r = rates[i] or self._rate(i)
            growth = log1p(b)
            row = tank_row(r, b)
            rows.append(row)
            fr = row[8]
            frags.append(frags_dict(r, fr))
            max_frags.append(min(15, max(1 if fr else 0, int(r.frags * (1.4 + 0.55 * growth)))))
            max_xp.append(int(r.xp * (1.4 + 0.35 * growth)))
            max_damage.append(int(r.damage_dealt * (1.5 + 0.3 * growth)))
        base = self._base = (battles, order, played, rows, frags, max_damage, max_frags, max_xp)
        return base

    def _tanks(self, now: float) -> tuple[list[dict], list[int]]:
        base = self._played(now)
        battles, order, played, rows, frags, max_damage, max_frags, max_xp = base
        if self._last is not None and self._last[0] == battles:
            return self._last[1], self._last[2]
        kinds = [(kind, self.shares[kind]) for kind in TANK_BLOCKS]
        skill16, log10 = self.skill * 1.6, math.log10
        account_id, garage, rates = self.account_id, self.garage, self.rates
        out = []
        for n, (i, b) in enumerate(zip(order, played)):
            all_ = dict(zip(BLOCK_FIELDS, rows[n]))
            record = {"account_id": account_id, "tank_id": garage[i], "all": all_}
            for (kind, share), var in zip(kinds, rates[i].variation):
                block = scaled_block(all_, int(b * share * var)) if share else ZERO_BLOCK
                if kind not in PER_TANK_ASSISTED:
                    block = {k: v for k, v in block.items() if k not in NOT_PER_TANK}
                record[kind] = block
            for key in NOT_PER_TANK:
                del all_[key]
            record["frags"] = frags[n]
            record["in_garage"] = None
            record["mark_of_mastery"] = min(4, int(skill16 + 0.5 * log10(1 + b)))
            record["max_frags"] = max_frags[n]
            record["max_xp"] = max_xp[n]
            out.append(record)
        self._last = (battles, out, max_damage)
        return out, max_damage

    def _account_block_factors(self) -> list[float]:
        if self._block_factors is None:
            srng = random.Random(f"account-blocks:{self.region}:{self.account_id}")
            self._block_factors = [srng.uniform(0.8, 1.2) for _ in ACCOUNT_BLOCKS]
        return self._block_factors

    def _statistics(self, base: tuple) -> dict:
        battles_key, order, _, rows, frags_list, max_damage, max_frags, max_xp = base
        if self._last_stats is not None and self._last_stats[0] == battles_key:
            return self._last_stats[1]
        columns = dict(zip(BLOCK_FIELDS, zip(*rows))) if rows else dict.fromkeys(BLOCK_FIELDS, ())
        totals = {k: sum(columns[k]) for k in SUM_FIELDS}
        extra = {k: sum(columns[k]) for k in EXTRA_COUNTS}
        averages = {}
        tank_battles = columns["battles"]
        for k in AVERAGES:
            acc = 0.0  # in tank order, one addition at a time (as floats add)
            for v, b in zip(columns[k], tank_battles):
                acc += v * b
            averages[k] = acc
        frags: dict[str, int] = {}
        for f in frags_list:
            for k, v in f.items():
                frags[k] = frags.get(k, 0) + v
        battles = totals["battles"]
        garage = self.garage
        if rows:  # the first tank with the highest value, in tank order
            best_dmg = max_damage.index(max(max_damage))
            best_frags = max_frags.index(max(max_frags))
            best_xp = max_xp.index(max(max_xp))
        totals.update(
            {
                "battle_avg_xp": totals["xp"] // battles if battles else 0,
                "hits_percents": round(100 * totals["hits"] / totals["shots"]) if totals["shots"] else 0,
                "max_damage": max_damage[best_dmg] if rows else 0,
                "max_damage_tank_id": garage[order[best_dmg]] if rows else None,
                "max_frags": max_frags[best_frags] if rows else 0,
                "max_frags_tank_id": garage[order[best_frags]] if rows else None,
                "max_xp": max_xp[best_xp] if rows else 0,
                "max_xp_tank_id": garage[order[best_xp]] if rows else None,
            }
        )
        totals.update(extra)
        for k in AVERAGES:
            totals[k] = round(averages[k] / battles, 2) if battles else 0
        statistics: dict = {"all": totals}
        for kind, factor in zip(ACCOUNT_BLOCKS, self._account_block_factors()):
            share = self.shares[kind] * factor
            statistics[kind] = scaled_block(totals, int(battles * share)) if share else ZERO_BLOCK
        statistics["frags"] = frags
        statistics["trees_cut"] = int(battles * self.trees_rate)
        self._last_stats = (battles_key, statistics)
        return statistics

    def account_info(self, now: float) -> dict:
        statistics = self._statistics(self._played(now))
        battles = statistics["all"]["battles"]
        last_day = self._last_active(self._last_day_index(now))
        last_battle = (self.day0 + last_day) * DAY + self._play_offset(last_day) if last_day is not None else 0
        ended = self._played_today(now)[1]  # a battle of today's session under way (battle_seconds)
        if ended is not None:
            last_battle = int(ended)
        seen = max(last_battle, self.created_at)
        rating = 0
        if battles:
            rating = int(
                1200
                + 4200 * (self.skill - 0.4) / 1.35 * min(1.0, battles / 3000)
                + 600 * min(1.0, battles / 20000)
                + 300 * min(1.0, battles / 500)
            )
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
            "statistics": statistics,
        }
