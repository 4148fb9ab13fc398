"""The simulated world: vehicle catalogue, expected values, account profiles and clan data."""

from __future__ import annotations

import math
import os
import random
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path
from statistics import NormalDist

import ujson

from .ids import (
    CLAN_CREATED_MAX,
    CLAN_CREATED_MIN,
    DAY,
    DEFAULT_VEHICLES,
    JOIN_MAX,
    LOCAL_UTC_OFFSET,
    PEAK_ONLINE,
    ROLE_I18N,
    SERVERS,
    _clamp,
    _unit,
    account_created_at,
    account_exists,
    clan_members,
    clan_state,
    nickname,
)
from .profile import Profile
from .vehicles import (
    encyclopedia_record,
    generated_expectation,
    generated_vehicles,
    load_vehicles,
)

# Spread of tank popularity (log-normal): at 1.5 the most owned tank of a tier is owned by several
# times as many players as the median one, so the demo's few hundred tracked accounts per region
# give the popular tanks the minimum sample of the tank statistics (20 players).
POPULARITY_SIGMA = 1.5

CLAN_KEYS = (
    "clan_id",
    "tag",
    "name",
    "color",
    "motto",
    "description",
    "description_html",
    "created_at",
    "updated_at",
    "members_count",
    "leader_id",
    "leader_name",
    "creator_id",
    "creator_name",
    "accepts_join_requests",
    "is_clan_disbanded",
    "old_name",
    "old_tag",
    "renamed_at",
    "game",
    "emblems",
    "private",
    "members",
)


class World:
    """All generated data. Account profiles are cached (LRU); everything else is cheap.

    ``disbanded`` holds the clans disbanded at run time ({region: {clan_id: unix ts}}).
    ``profile_cache`` None: UPSTREAM_SIM_PROFILE_CACHE from the environment, else 4096 (a benchmark
    that visits more accounts a day than the cache holds regenerates every profile every day).
    """

    def __init__(
        self,
        vehicles: str | Path | None = None,
        expected_values: str | Path | None = None,
        profile_cache: int | None = None,
        battle_seconds: float | None = None,
    ):
        # None: a playing day's battles all count at its session's end; N: they are played one every
        # N seconds before it (at most from the day's start), so a session is seen battle by battle.
        self.battle_seconds = battle_seconds
        if profile_cache is None:
            profile_cache = int(os.environ.get("UPSTREAM_SIM_PROFILE_CACHE") or 4096)
        if vehicles is None and DEFAULT_VEHICLES.is_file():
            vehicles = DEFAULT_VEHICLES
        if vehicles:
            self.vehicles = load_vehicles(vehicles)
            self.vehicles_source = str(vehicles)
        else:
            self.vehicles = generated_vehicles()
            self.vehicles_source = "generated"
        self.tank_ids = sorted(self.vehicles)
        self.by_tier: dict[int, list[int]] = {}
        for tank_id in self.tank_ids:
            self.by_tier.setdefault(self.vehicles[tank_id]["tier"], []).append(tank_id)
        self._encyclopedia: dict[int, dict] = {}
        self._expectation_rates: dict[int, tuple[float, float, float, float, float]] = {}
        self._popularity: dict[int, float] = {}
        self._popularity_exponents: dict[int, list[float]] = {}

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
            rows = [generated_expectation(self.vehicles[t]) for t in self.tank_ids]
            self.expected = {row["IDNum"]: row for row in rows}
            header = {"version": f"sim-{len(rows)}", "source": "upstream_sim", "url": "/wn8exp.json"}
            self.expected_bytes = ujson.dumps({"header": header, "data": rows}).encode()
            self.expected_source = "generated"
        self._profiles: OrderedDict[tuple[str, int], Profile] = OrderedDict()
        self._profile_cache = profile_cache
        self.disbanded: dict[str, dict[int, int]] = {}
        # Players of the 14 days behind the published distributions (official.py; tests ask fewer).
        self.published_players = 5_000

    @property
    def data_key(self) -> tuple:
        """What the accounts' data follows from: two worlds with the same key generate the same
        accounts (a figure computed on one is the other's)."""
        return (self.vehicles_source, self.expected_source, self.battle_seconds, self.published_players)

    def popularity(self, tank_id: int) -> float:
        """How often a tank is chosen for a garage against others of its tier: log-normal across
        tanks (sigma POPULARITY_SIGMA, stable per tank id), so that as on the real servers a few
        tanks of each tier are owned by many players and most by few."""
        weight = self._popularity.get(tank_id)
        if weight is None:
            z = NormalDist().inv_cdf(min(max(_unit("popularity", tank_id), 1e-9), 1 - 1e-9))
            weight = self._popularity[tank_id] = math.exp(POPULARITY_SIGMA * z)
        return weight

    def popularity_exponents(self, tier: int) -> list[float]:
        """1 / popularity of each tank of the tier, in by_tier's order (a garage draw's keys)."""
        exponents = self._popularity_exponents.get(tier)
        if exponents is None:
            exponents = self._popularity_exponents[tier] = [
                1.0 / self.popularity(t) for t in self.by_tier.get(tier, [])
            ]
        return exponents

    def expectation(self, tank_id: int) -> dict:
        row = self.expected.get(tank_id)
        if row is None:
            row = generated_expectation(self.vehicles[tank_id])
            self.expected[tank_id] = row  # not served, only used for generation
        return row

    def expectation_rates(self, tank_id: int) -> tuple[float, float, float, float, float]:
        """(expWinRate, expDamage, expFrag, expSpot, expDef) of a tank as floats (cached)."""
        rates = self._expectation_rates.get(tank_id)
        if rates is None:
            exp = self.expectation(tank_id)
            rates = self._expectation_rates[tank_id] = (
                float(exp["expWinRate"]),
                float(exp["expDamage"]),
                float(exp["expFrag"]),
                float(exp["expSpot"]),
                float(exp["expDef"]),
            )
        return rates

    def encyclopedia(self, tank_id: int) -> dict:
        record = self._encyclopedia.get(tank_id)
        if record is None:
            record = self._encyclopedia[tank_id] = encyclopedia_record(self.vehicles[tank_id])
        return record

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

    # --- clans: deterministic state plus run-time disbands ---------------------------
    def clan_state(self, region: str, clan_id: int) -> str | None:
        state = clan_state(region, clan_id)
        if state == "active" and clan_id in self.disbanded.get(region, ()):
            return "disbanded"
        if state == "active" and not clan_members(region, clan_id):
            return None
        return state

    def disband(self, region: str, clan_id: int, now: float) -> bool:
        """Disband an active clan at run time; False when there is no such active clan."""
        if self.clan_state(region, clan_id) != "active":
            return False
        self.disbanded.setdefault(region, {})[clan_id] = int(now)
        return True

    # --- API data --------------------------------------------------------------------
    def account_info(self, region: str, account_id: int, now: float) -> dict | None:
        if not account_exists(region, account_id):
            return None
        prof = self.profile(region, account_id)
        if now < prof.created_at:
            return None
        info = prof.account_info(now)
        if info["clan_id"] is not None and info["clan_id"] in self.disbanded.get(region, ()):
            info["clan_id"] = None
        return info

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

    def account_tanks(self, region: str, account_id: int, now: float) -> list | None:
        """account/tanks of one account: per played tank its battles, wins and mastery badge, the
        same figures as its tanks/stats records (None: the account is unknown)."""
        tanks = self.tanks_stats(region, account_id, now, None)
        if tanks is None:
            return None
        return [
            {
                "statistics": {"wins": t["all"]["wins"], "battles": t["all"]["battles"]},
                "mark_of_mastery": t["mark_of_mastery"],
                "tank_id": t["tank_id"],
            }
            for t in tanks
        ]

    def clan_member(self, region: str, account_id: int, now: float) -> dict | None:
        """clans/accountinfo of one account: its clan and role, as clans/info lists it (None: no
        clan, or no such account)."""
        info = self.account_info(region, account_id, now)
        clan_id = info and info["clan_id"]
        clan = self.clan_info(region, clan_id, now) if clan_id else None
        if not clan or clan.get("is_clan_disbanded"):
            return None
        member = next((m for m in clan["members"] if m["account_id"] == account_id), None)
        if member is None:
            return None
        return {
            "account_id": account_id,
            "account_name": member["account_name"],
            "joined_at": member["joined_at"],
            "role": member["role"],
            "role_i18n": member["role_i18n"],
            "clan": {
                "clan_id": clan_id,
                "tag": clan["tag"],
                "name": clan["name"],
                "color": clan["color"],
                "created_at": clan["created_at"],
                "members_count": clan["members_count"],
                "emblems": clan["emblems"],
            },
        }

    def tanks_stats_json(self, region: str, account_id: int, now: float) -> bytes | None:
        """The full tanks/stats value of one account, serialised (None: the account is unknown)."""
        if not account_exists(region, account_id):
            return None
        prof = self.profile(region, account_id)
        if now < prof.created_at:
            return None
        return prof.tanks_json(now)

    def clan_info(self, region: str, clan_id: int, now: float) -> dict | None:
        state = self.clan_state(region, clan_id)
        if state is None:
            return None
        if state == "disbanded":
            record = dict.fromkeys(CLAN_KEYS)
            when = self.disbanded.get(region, {}).get(clan_id)
            if when is None:  # disbanded long ago: a stable instant after the clan's creation
                created = _clan_basics(region, clan_id)["created_at"]
                when = int(
                    created + 30 * DAY + _unit("disbanded_at", region, clan_id) * (JOIN_MAX - created - 30 * DAY)
                )
            record.update({"clan_id": clan_id, "is_clan_disbanded": True, "updated_at": when})
            return record
        members = clan_members(region, clan_id)
        c = _clan_basics(region, clan_id)
        member_rows = []
        for account_id, (role, joined_at) in zip(members, _member_roles(region, clan_id, members)):
            member_rows.append(
                {
                    "account_id": account_id,
                    "account_name": nickname(region, account_id),
                    "joined_at": joined_at,
                    "role": role,
                    "role_i18n": ROLE_I18N[role],
                }
            )
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
                "x32": {
                    "portal": f"https://eu.wargaming.net/clans/media/clans/emblems/cl_{clan_id % 1000:03d}/{clan_id}/emblem_32x32.png"
                },
                "x64": {
                    "portal": f"https://eu.wargaming.net/clans/media/clans/emblems/cl_{clan_id % 1000:03d}/{clan_id}/emblem_64x64_portal.png"
                },
            },
            "private": None,
            "members": member_rows,
        }

    def clan_rating(self, region: str, clan_id: int, now: float) -> dict | None:
        if self.clan_state(region, clan_id) != "active":
            return None
        members = clan_members(region, clan_id)
        c = _clan_basics(region, clan_id)
        rng = random.Random(f"clanrating:{region}:{clan_id}")
        strength = c["strength"]  # 0..1
        day = int(now // DAY)
        drift = random.Random(f"clanrating:{region}:{clan_id}:{day}")

        def rated(value: float, top: float, spread: float, integer: bool = True) -> dict:
            v = int(round(value)) if integer else round(value, 2)
            rank = max(1, int((top - value) * spread)) if value < top else 1
            return {"value": v, "rank": rank, "rank_delta": drift.randint(-25, 25)}

        elo10 = 800 + 1500 * strength**1.3 + rng.uniform(-60, 60)
        elo8 = 850 + 1300 * strength**1.2 + rng.uniform(-60, 60)
        elo6 = 900 + 1000 * strength + rng.uniform(-60, 60)
        gm10 = 900 + 1300 * strength**1.5 + rng.uniform(-80, 80)
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
        if self.clan_state(region, clan_id) != "active":
            return None
        members = clan_members(region, clan_id)
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
                out[f"last_time_{tier}"] = (
                    (today * DAY + 19 * 3600) if total28 else ((start_day * DAY + 19 * 3600) if total else None)
                )
            return out

        activity = (0.3 + size / 100) * (0.5 + strength)
        skirmish = per_tier(
            {
                10: (6.0 * activity * strength, _clamp(0.40 + 0.28 * strength, 0.3, 0.75), rng.random()),
                8: (4.0 * activity, _clamp(0.42 + 0.25 * strength, 0.3, 0.75), rng.random()),
                6: (2.0 * activity * (1.2 - strength), _clamp(0.45 + 0.2 * strength, 0.3, 0.75), rng.random()),
            }
        )
        advances = per_tier({10: (0.8 * activity * strength, _clamp(0.35 + 0.3 * strength, 0.2, 0.8), rng.random())})
        series = per_tier({10: (0.5 * activity, _clamp(0.5 + 0.2 * strength, 0.2, 0.8), rng.random())})
        level = 1 + int(9 * strength)
        buildings = [
            {
                "position": i,
                "direction": d,
                "arena_id": f"{70 + i}_stronghold_map",
                "building_title": t,
                "building_level": min(10, max(1, level - rng.randint(0, 3))),
                "reserve_title": r,
            }
            for i, (d, t, r) in enumerate(
                [
                    ("A", "Training Ground", "Tactical Training"),
                    ("B", "Artillery Division", "Artillery Strike"),
                    ("C", "Engineering Battalion", "Battle Payments"),
                    ("D", "Transportation Corps", "Additional Briefing"),
                ][: 1 + level // 3],
                start=1,
            )
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
        "name": f"{rng.choice(adjectives)} {rng.choice(nouns)}"
        + (f" {rng.randint(2, 99)}" if rng.random() < 0.3 else ""),
        "color": "#%06X" % rng.randrange(1 << 24),
        "motto": rng.choice(["Together we roll", "No retreat", "Fun first", "Win or learn", "Steel and honour"]),
        "description": rng.choice(
            [
                "Friendly clan, all welcome.",
                "Competitive clan for CW and skirmishes.",
                "Casual players, evenings only.",
                "Training clan for new players.",
            ]
        ),
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
            role = (
                "personnel_officer"
                if r < 0.05
                else "combat_officer"
                if r < 0.1
                else "recruitment_officer"
                if r < 0.13
                else "junior_officer"
                if r < 0.25
                else "recruit"
                if r < 0.35
                else "reservist"
                if r < 0.42
                else "private"
            )
        earliest = max(created, account_created_at(region, account_id))
        joined = earliest if i == 0 else earliest + int(rng.random() * max(0, JOIN_MAX - earliest))
        out.append((role, joined))
    return out
