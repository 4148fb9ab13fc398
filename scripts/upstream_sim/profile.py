"""One simulated account: battles per day, garage, per-tank statistics blocks and account totals."""
from __future__ import annotations

import bisect
import math
import random
from array import array
from typing import TYPE_CHECKING

import ujson

from .ids import (
    _M64, BLOCK, DAY, EVENING_UTC_HOUR, JOIN_MAX, SUM_FIELDS, _clamp, _mix, _seed, _unit, account_created_at,
    clan_of_account, is_veteran, nickname,
)

if TYPE_CHECKING:
    from .world import World

# Counters of one statistics block, in the real API's order (tanks/stats and account/info).
BLOCK_FIELDS = (
    "battles", "wins", "losses", "draws", "xp", "battle_avg_xp", "damage_dealt", "damage_received", "frags",
    "spotted", "shots", "hits", "hits_percents", "capture_points", "dropped_capture_points", "survived_battles",
    "tanking_factor", "avg_damage_blocked", "avg_damage_assisted", "avg_damage_assisted_track",
    "avg_damage_assisted_radio", "direct_hits_received", "explosion_hits", "explosion_hits_received",
    "no_damage_direct_hits_received", "piercings", "piercings_received", "stun_assisted_damage", "stun_number",
    "battles_on_stunning_vehicles",
)
EXTRA_COUNTS = ("direct_hits_received", "explosion_hits", "explosion_hits_received", "no_damage_direct_hits_received",
                "piercings", "piercings_received", "stun_assisted_damage", "stun_number",
                "battles_on_stunning_vehicles")
AVERAGES = ("tanking_factor", "avg_damage_blocked", "avg_damage_assisted", "avg_damage_assisted_track",
            "avg_damage_assisted_radio")
# Counts scaled when a block is a share of "all" (the averages and ratios are copied or recomputed).
_SCALED = tuple(k for k in BLOCK_FIELDS if k not in AVERAGES and k not in ("battles", "wins", "losses", "draws",
                                                                           "battle_avg_xp", "hits_percents"))
TANK_BLOCKS = ("clan", "company", "globalmap", "regular_team", "stronghold_defense", "stronghold_skirmish", "team")
ACCOUNT_BLOCKS = ("clan", "company", "historical", "regular_team", "stronghold_defense", "stronghold_skirmish", "team")
ZERO_BLOCK = {k: 0 for k in BLOCK_FIELDS}  # shared, never mutated (apply_fields copies)


def scaled_block(base: dict, battles: int) -> dict:
    """A block with ``battles`` of the battles in ``base`` (same averages, counts in proportion)."""
    b = base["battles"]
    if battles <= 0 or not b:
        return ZERO_BLOCK
    f = battles / b
    out = {k: int(base[k] * f) for k in _SCALED}
    wins, draws = int(base["wins"] * f), int(base["draws"] * f)
    out["battles"], out["wins"], out["draws"], out["losses"] = battles, wins, draws, battles - wins - draws
    out["hits"] = min(out["hits"], out["shots"])
    out["survived_battles"] = min(out["survived_battles"], battles)
    out["battle_avg_xp"] = out["xp"] // battles
    out["hits_percents"] = round(100 * out["hits"] / out["shots"]) if out["shots"] else 0
    for k in AVERAGES:
        out[k] = base[k]
    return {k: out[k] for k in BLOCK_FIELDS}


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
        p = rng.uniform(0.2, 0.85)  # chance to play on a normal day
        lam = rng.uniform(2.0, 12.0)  # mean battles on a playing day
        low = rng.uniform(0.05, 0.45)  # play chance factor in a "quiet" week
        self.quit_week = rng.randint(30, 500) if rng.random() < 0.12 else None
        if self.veteran:  # old, busy accounts: tens of thousands of battles
            p, lam, low = 0.6 + 0.3 * (p - 0.2) / 0.65, 8.0 + 0.6 * lam, 0.5 + low
            self.quit_week = None
        self.tables = (self._day_table(p, lam), self._day_table(min(1.0, p * low), lam * 0.7))
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
        self.wcum = array("q", [0])  # wcum[w] = battles in weeks before week w
        if self.veteran:
            self._veteran_garage()
        self.tiers = [world.vehicles[t]["tier"] for t in self.garage]
        self._candidates: dict[int, tuple[list[int], list[float]]] = {}
        self.blocks = array("H")
        self.block_rng = random.Random(f"blocks:{region}:{account_id}")
        self.rates = [self._tank_rates(t) for t in self.garage]
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
        self._last: tuple[int, list[dict], list[int]] | None = None
        self._last_stats: tuple[int, dict] | None = None
        self._last_bytes: tuple[int, bytes] | None = None

    def _veteran_garage(self) -> None:
        """150-400 tanks from the whole catalogue, unlocked one after another (low tiers first)."""
        world = self.world
        vrng = random.Random(f"veteran:{self.region}:{self.account_id}")
        pool = sorted(world.vehicles)
        size = min(len(pool), 150 + int(251 * _unit("vetsize", self.region, self.account_id)))
        chosen = vrng.sample(pool, size)
        keyed = sorted(chosen, key=lambda t: (world.vehicles[t]["tier"] + vrng.uniform(-2.0, 2.0), t))
        self.garage = keyed
        self.prefs = [vrng.uniform(0.25, 1.0) ** 2 * (1 + world.vehicles[t]["tier"]) for t in keyed]
        # Battles by mid-2024 decide the unlock spacing, so every tank is played by then.
        ref = self._battles_through(JOIN_MAX // DAY - self.day0)
        self.unlock_step = max(BLOCK, min(80, int(0.8 * ref / size))) if size else BLOCK
        self.unlocked = 0
        self.vcum: list[float] = []

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
        if self.veteran:
            self._ensure_veteran_blocks(n)
            return
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

    def _ensure_veteran_blocks(self, n: int) -> None:
        """A newly unlocked tank gets the next block; other blocks go to unlocked tanks by preference."""
        blocks, rng, cum = self.blocks, self.block_rng, self.vcum
        size = len(self.garage)
        while len(blocks) < n:
            if self.unlocked < size and len(blocks) * BLOCK >= self.unlocked * self.unlock_step:
                cum.append((cum[-1] if cum else 0.0) + self.prefs[self.unlocked])
                blocks.append(self.unlocked)
                self.unlocked += 1
                continue
            pick = bisect.bisect_right(cum, rng.random() * cum[-1])
            blocks.append(min(pick, len(cum) - 1))

    def _battles_per_tank(self, battles: int) -> list[int]:
        full, rem = divmod(battles, BLOCK)
        self._ensure_blocks(full + 1)
        counts = [0] * len(self.garage)
        if self.veteran:
            for i in self.blocks[:full]:
                counts[i] += BLOCK
        else:
            done = self.blocks[:full]
            counts = [done.count(i) * BLOCK for i in range(len(self.garage))]
        if rem:
            counts[self.blocks[full]] += rem
        return counts

    # --- per-tank numbers ------------------------------------------------------------
    def _tank_rates(self, tank_id: int) -> dict:
        exp = self.world.expectation(tank_id)
        vehicle = self.world.vehicles[tank_id]
        tier = vehicle["tier"]
        rng = random.Random(f"{self.region}:{self.account_id}:{tank_id}")
        st = self.skill * _clamp(rng.gauss(1.0, 0.08), 0.8, 1.2)  # skill in this tank
        wr = _clamp(float(exp["expWinRate"]) / 100.0 * (0.78 + 0.25 * self.skill) * rng.uniform(0.97, 1.03), 0.30, 0.80)
        dr = rng.uniform(0.006, 0.015)
        shots = (6.0 + 0.4 * tier) * rng.uniform(0.8, 1.2)
        xp = (140 + 75 * tier) * (0.7 + 0.35 * st)
        rates = {
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
        # The extra counters come from their own generator: the numbers above never change.
        x = random.Random(_seed("extra", self.region, self.account_id, tank_id))
        spg = vehicle["type"] == "SPG"
        dmg = rates["damage_dealt"]
        rates["extra"] = {
            "tanking_factor": round(x.uniform(0.2, 0.8), 2),
            "avg_damage_blocked": round(dmg * x.uniform(0.2, 1.2), 2),
            "avg_damage_assisted": round(dmg * x.uniform(0.2, 0.8), 2),
            "avg_damage_assisted_track": round(dmg * x.uniform(0.05, 0.3), 2),
            "avg_damage_assisted_radio": round(dmg * x.uniform(0.1, 0.5), 2),
            "direct_hits_received": x.uniform(3.0, 9.0),
            "explosion_hits": x.uniform(0.2, 3.0) if spg else x.uniform(0.0, 0.6),
            "explosion_hits_received": x.uniform(0.1, 1.2),
            "no_damage_direct_hits_received": x.uniform(0.3, 2.5),
            "piercings": shots * rates["hit_ratio"] * x.uniform(0.6, 0.9),
            "piercings_received": x.uniform(2.0, 6.0),
            "stun_assisted_damage": dmg * x.uniform(0.3, 0.9) if spg else 0.0,
            "stun_number": x.uniform(1.0, 4.0) if spg else 0.0,
            "battles_on_stunning_vehicles": 1.0 if spg else 0.0,
            "victims": [x.choice(self.world.tank_ids) for _ in range(x.randint(2, 6))],
            "variation": [x.uniform(0.5, 1.5) for _ in TANK_BLOCKS],
        }
        return rates

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

    @staticmethod
    def _tank_all_full(r: dict, b: int) -> dict:
        """The real API's ~30 counters: the original numbers unchanged, plus the extra ones."""
        out = Profile._tank_all(r, b)
        x = r["extra"]
        for k in EXTRA_COUNTS:
            out[k] = int(b * x[k])
        out["piercings"] = min(out["piercings"], out["hits"])
        out["piercings_received"] = min(out["piercings_received"], out["direct_hits_received"])
        out["no_damage_direct_hits_received"] = min(out["no_damage_direct_hits_received"],
                                                    out["direct_hits_received"] - out["piercings_received"])
        for k in AVERAGES:
            out[k] = x[k]
        return {k: out[k] for k in BLOCK_FIELDS}

    def _frags_dict(self, r: dict, frags: int) -> dict:
        victims = r["extra"]["victims"]
        out: dict[str, int] = {}
        left = frags
        for n, v in enumerate(victims):
            c = left if n == len(victims) - 1 else left // 2
            if c:
                out[str(v)] = out.get(str(v), 0) + c
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

    def _tanks(self, now: float) -> tuple[list[dict], list[int]]:
        battles = self._battles_through(self._last_day_index(now))
        if self._last is not None and self._last[0] == battles:
            return self._last[1], self._last[2]
        counts = self._battles_per_tank(battles)
        rows = []
        shares = [self.shares[k] for k in TANK_BLOCKS]
        for i, b in enumerate(counts):
            if not b:
                continue
            r = self.rates[i]
            growth = math.log1p(b)
            all_ = self._tank_all_full(r, b)
            variation = r["extra"]["variation"]
            record = {"account_id": self.account_id, "tank_id": self.garage[i], "all": all_}
            for kind, share, var in zip(TANK_BLOCKS, shares, variation):
                record[kind] = scaled_block(all_, int(b * share * var)) if share else ZERO_BLOCK
            record.update({
                "frags": self._frags_dict(r, all_["frags"]),
                "in_garage": None,
                "mark_of_mastery": min(4, int(self.skill * 1.6 + 0.5 * math.log10(1 + b))),
                "max_frags": min(15, max(1 if all_["frags"] else 0, int(r["frags"] * (1.4 + 0.55 * growth)))),
                "max_xp": int(r["xp"] * (1.4 + 0.35 * growth)),
            })
            rows.append((self.garage[i], record, int(r["damage_dealt"] * (1.5 + 0.3 * growth))))
        rows.sort(key=lambda row: row[0])
        out, max_damage = [row[1] for row in rows], [row[2] for row in rows]
        self._last = (battles, out, max_damage)
        return out, max_damage

    def _statistics(self, tanks: list[dict], max_damage: list[int], battles_key: int) -> dict:
        if self._last_stats is not None and self._last_stats[0] == battles_key:
            return self._last_stats[1]
        totals = {k: 0 for k in SUM_FIELDS}
        extra = {k: 0 for k in EXTRA_COUNTS}
        averages = {k: 0.0 for k in AVERAGES}
        frags: dict[str, int] = {}
        for t in tanks:
            a = t["all"]
            for k in SUM_FIELDS:
                totals[k] += a[k]
            for k in EXTRA_COUNTS:
                extra[k] += a[k]
            for k in AVERAGES:
                averages[k] += a[k] * a["battles"]
            for k, v in t["frags"].items():
                frags[k] = frags.get(k, 0) + v
        battles = totals["battles"]
        best_dmg = max(range(len(tanks)), key=lambda n: max_damage[n], default=None)
        best_frags = max(tanks, key=lambda t: t["max_frags"], default=None)
        best_xp = max(tanks, key=lambda t: t["max_xp"], default=None)
        totals.update({
            "battle_avg_xp": totals["xp"] // battles if battles else 0,
            "hits_percents": round(100 * totals["hits"] / totals["shots"]) if totals["shots"] else 0,
            "max_damage": max_damage[best_dmg] if best_dmg is not None else 0,
            "max_damage_tank_id": tanks[best_dmg]["tank_id"] if best_dmg is not None else None,
            "max_frags": best_frags["max_frags"] if best_frags else 0,
            "max_frags_tank_id": best_frags["tank_id"] if best_frags else None,
            "max_xp": best_xp["max_xp"] if best_xp else 0,
            "max_xp_tank_id": best_xp["tank_id"] if best_xp else None,
        })
        totals.update(extra)
        for k in AVERAGES:
            totals[k] = round(averages[k] / battles, 2) if battles else 0
        statistics: dict = {"all": totals}
        srng = random.Random(f"account-blocks:{self.region}:{self.account_id}")
        for kind in ACCOUNT_BLOCKS:
            share = self.shares[kind] * srng.uniform(0.8, 1.2)
            statistics[kind] = scaled_block(totals, int(battles * share)) if share else ZERO_BLOCK
        statistics["frags"] = frags
        statistics["trees_cut"] = int(battles * self.trees_rate)
        self._last_stats = (battles_key, statistics)
        return statistics

    def account_info(self, now: float) -> dict:
        tanks, max_damage = self._tanks(now)
        statistics = self._statistics(tanks, max_damage, self._last[0] if self._last else 0)
        battles = statistics["all"]["battles"]
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
            "statistics": statistics,
        }
