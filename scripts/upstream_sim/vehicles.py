"""Vehicle catalogue, full encyclopedia records and the generated expected-values table."""

from __future__ import annotations

import json
import random
from pathlib import Path

from . import icons
from .ids import _unit

VEHICLE_TYPES = ("lightTank", "mediumTank", "heavyTank", "AT-SPG", "SPG")
NATIONS = ("ussr", "germany", "usa", "uk", "france", "china", "japan", "czech", "sweden", "poland", "italy")
_TIER_DAMAGE = [0, 110, 170, 250, 350, 480, 680, 950, 1350, 1800, 2350]
_TYPE_DAMAGE = {"lightTank": 0.75, "mediumTank": 1.0, "heavyTank": 1.12, "AT-SPG": 1.1, "SPG": 0.9}
_TYPE_SPOT = {"lightTank": 2.1, "mediumTank": 1.35, "heavyTank": 1.0, "AT-SPG": 0.85, "SPG": 0.3}
_TYPE_WORDS = {
    "lightTank": "light tank",
    "mediumTank": "medium tank",
    "heavyTank": "heavy tank",
    "AT-SPG": "tank destroyer",
    "SPG": "self-propelled gun",
}


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
    """A stand-in catalogue as big as the real one: 11 nations x 5 types x 10 tiers x 2 lines (~1,000)."""
    out = {}
    for n_idx, nation in enumerate(NATIONS):
        for line in range(2):
            for t_idx, vtype in enumerate(VEHICLE_TYPES):
                for tier in range(1, 11):
                    if vtype == "SPG" and tier < 2:
                        continue
                    number = line * 50 + t_idx * 10 + tier
                    tank_id = (number << 8) | (n_idx << 4) | 1
                    name = f"{nation[:2].upper()}-{vtype[:2].upper()}{tier}" + ("" if not line else "B")
                    out[tank_id] = _normalise_vehicle(
                        {
                            "tank_id": tank_id,
                            "name": name,
                            "short_name": name,
                            "tier": tier,
                            "type": vtype,
                            "nation": nation,
                            "tag": f"SIM_{nation}_{vtype}_{tier}_{line}",
                        }
                    )
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


def _module_ids(rng: random.Random, tank_id: int, kind: int, n: int) -> list[int]:
    return sorted({(tank_id & 0xFF) * 10_000 + kind * 1000 + rng.randint(1, 999) for _ in range(n)})


def encyclopedia_record(v: dict) -> dict:
    """The full wot/encyclopedia/vehicles record of a vehicle (the normalised keys unchanged)."""
    tank_id, tier, vtype, nation = v["tank_id"], v["tier"], v["type"], v["nation"]
    rng = random.Random(f"encyclopedia:{tank_id}")
    tag = v["tag"]
    guns, turrets = _module_ids(rng, tank_id, 1, rng.randint(1, 4)), _module_ids(rng, tank_id, 2, rng.randint(1, 2))
    engines, radios = _module_ids(rng, tank_id, 3, rng.randint(1, 3)), _module_ids(rng, tank_id, 4, rng.randint(1, 3))
    suspensions = _module_ids(rng, tank_id, 5, rng.randint(1, 2))
    hp = int((100 + 190 * tier**1.05) * rng.uniform(0.8, 1.3))
    weight = round((5 + 6.5 * tier) * rng.uniform(0.7, 1.4), 2)
    dmg = int(_TIER_DAMAGE[tier] * _TYPE_DAMAGE.get(vtype, 1.0) * 0.5)
    penetration = int(40 + 24 * tier * rng.uniform(0.8, 1.2))
    caliber = int(20 + 12 * tier * rng.uniform(0.8, 1.2))
    is_premium = v["is_premium"]
    profile = {
        "hp": hp,
        "hull_hp": int(hp * 0.9),
        "hull_weight": int(weight * 600),
        "max_weight": int(weight * 1000),
        "weight": int(weight * 1000),
        "max_ammo": rng.randint(20, 120),
        "speed_forward": rng.randint(30, 70),
        "speed_backward": rng.randint(8, 25),
        "hp_engine": int(200 + 90 * tier * rng.uniform(0.8, 1.3)),
        "is_default": True,
        "profile_id": f"{guns[0]}-{turrets[0]}-{engines[0]}",
        "armor": {
            "hull": {"front": rng.randint(15, 200), "sides": rng.randint(15, 120), "rear": rng.randint(10, 80)},
            "turret": {"front": rng.randint(15, 250), "sides": rng.randint(15, 150), "rear": rng.randint(10, 100)},
        },
        "engine": {
            "name": f"{tag} engine",
            "power": int(150 + 90 * tier),
            "fire_chance": round(rng.uniform(0.1, 0.2), 2),
            "tier": tier,
            "tag": f"{tag}_E",
            "weight": rng.randint(400, 1600),
        },
        "gun": {
            "name": f"{caliber} mm gun",
            "caliber": caliber,
            "tier": tier,
            "tag": f"{tag}_G",
            "weight": rng.randint(300, 6000),
            "fire_rate": round(rng.uniform(2.5, 20.0), 2),
            "aim_time": round(rng.uniform(1.5, 3.5), 2),
            "dispersion": round(rng.uniform(0.28, 0.5), 2),
            "reload_time": round(rng.uniform(3.0, 25.0), 2),
            "move_down_arc": rng.randint(4, 10),
            "move_up_arc": rng.randint(10, 25),
            "traverse_speed": round(rng.uniform(10, 50), 1),
        },
        "turret": {
            "name": f"{tag} turret",
            "hp": int(hp * 0.1),
            "tier": tier,
            "tag": f"{tag}_T",
            "traverse_speed": rng.randint(15, 60),
            "view_range": rng.randint(300, 420),
            "traverse_left_arc": 180,
            "traverse_right_arc": 180,
            "weight": rng.randint(500, 9000),
        },
        "radio": {
            "name": f"{tag} radio",
            "signal_range": rng.randint(300, 850),
            "tier": tier,
            "tag": f"{tag}_R",
            "weight": rng.randint(40, 200),
        },
        "suspension": {
            "name": f"{tag} suspension",
            "load_limit": int(weight * 1100),
            "tier": tier,
            "tag": f"{tag}_S",
            "traverse_speed": rng.randint(15, 60),
            "steering_lock_angle": 0,
            "weight": rng.randint(2000, 20000),
        },
        "ammo": [
            {
                "type": kind,
                "damage": [int(dmg * f * 0.75), int(dmg * f), int(dmg * f * 1.25)],
                "penetration": [int(penetration * p * 0.75), int(penetration * p), int(penetration * p * 1.25)],
                "stun": None,
            }
            for kind, f, p in (
                ("ARMOR_PIERCING", 1.0, 1.0),
                ("ARMOR_PIERCING_CR", 1.0, 1.35),
                ("HIGH_EXPLOSIVE", 1.35, 0.25),
            )
        ],
        "modules": {
            "gun_id": guns[0],
            "turret_id": turrets[0],
            "engine_id": engines[0],
            "radio_id": radios[0],
            "suspension_id": suspensions[0],
        },
        "rapid": None,
        "siege": None,
        "signal_range": rng.randint(300, 850),
    }
    modules_tree = {
        str(m): {
            "module_id": m,
            "name": f"{tag} module {m}",
            "type": kind,
            "price_credit": rng.randint(0, 200_000),
            "price_xp": rng.randint(0, 80_000),
            "is_default": m == ids[0],
            "next_modules": None,
            "next_tanks": None,
        }
        for kind, ids in (
            ("vehicleGun", guns),
            ("vehicleTurret", turrets),
            ("vehicleEngine", engines),
            ("vehicleRadio", radios),
            ("vehicleChassis", suspensions),
        )
        for m in ids
    }
    record = dict(v)
    record.update(
        {
            "is_gift": is_premium and _unit("gift", tank_id) < 0.2,
            # The game's wheeled vehicles are French light tanks of tier VI and up: a stable stand-in.
            "is_wheeled": vtype == "lightTank" and nation == "france" and tier >= 6 and _unit("wheeled", tank_id) < 0.5,
            "is_premium_igr": False,
            "description": (
                f"A {nation} tier {tier} {_TYPE_WORDS.get(vtype, 'vehicle')}. "
                f"{'Premium vehicle: earns more credits in battle.' if is_premium else 'Researchable in the tech tree.'}"
            ),
            # Drawn by the simulator itself (icons.py), at the origin the request reached (api.py).
            "images": {f"{size}_icon": icons.url(size, tank_id) for size in ("big", "contour", "small")},
            "price_credit": 0 if is_premium else int(1_500 * tier**3.4),
            "price_gold": int(400 * tier**1.8) if is_premium else 0,
            "prices_xp": None if is_premium else {str(tank_id - 16): int(300 * tier**2.8)},
            "next_tanks": None,
            "default_profile": profile,
            "modules_tree": modules_tree,
            "crew": [
                {"member_id": role, "roles": {role: role.title()}}
                for role in ("commander", "gunner", "driver", "radioman", "loader")[: 3 + tier % 3]
            ],
            "guns": guns,
            "turrets": turrets,
            "engines": engines,
            "radios": radios,
            "suspensions": suspensions,
            "provisions": [rng.randint(1000, 9999) for _ in range(3)],
            "multination": None,
        }
    )
    return record
