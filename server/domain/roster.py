"""A battle roster's rows (pure: no I/O): a glance built from the batched upstream answers, WN8 from
career totals and battles per tank, and one row shape for cached profiles and glances alike.

The method and what WN8 from totals can and cannot tell: docs/data.md, "Battle rosters"."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from server.contract.catalogue.bands import BANDED_RATINGS, band_of
from server.domain import ratings as rating_maths
from server.domain.ratings import ExpectedValues

# The career counters a glance keeps of account/info (what WN8, WN7 and efficiency need).
GLANCE_TOTALS = ("battles", "wins", "damage_dealt", "frags", "spotted", "dropped_capture_points", "capture_points")


def glance_of(
    account_id: int,
    info: Mapping[str, Any] | None,
    tanks: Sequence[Mapping[str, Any]] | None,
    clan: Mapping[str, Any] | None,
    wtr: int | None,
    now: float,
) -> dict[str, Any]:
    """What a roster keeps of an account from account/info (`info`), account/tanks (`tanks`: {tank_id,
    battles, wins, mark_of_mastery}), clans/accountinfo (`clan`: {clan_id, tag, role} or None) and
    account/wtr: the figures of its row, and its battles, wins and badge per tank."""
    if not info:
        return {"account_id": account_id, "fetched_at": now, "reason": "no_account"}
    stats = (info.get("statistics") or {}).get("all") or {}
    totals = {name: int(stats.get(name) or 0) for name in GLANCE_TOTALS}
    clan_id = info.get("clan_id")
    if clan is not None:
        clan_view: dict[str, Any] | None = {
            "clan_id": int(clan["clan_id"]),
            "tag": clan.get("tag"),
            "role": clan.get("role"),
        }
    else:
        clan_view = {"clan_id": int(clan_id), "tag": None, "role": None} if clan_id else None
    rating = info.get("global_rating")
    return {
        "account_id": account_id,
        "fetched_at": now,
        "reason": None if totals["battles"] > 0 else "no_battles",
        "nickname": info.get("nickname"),
        "clan": clan_view,
        "totals": totals,
        "last_battle_time": info.get("last_battle_time"),
        "global_rating": rating if isinstance(rating, int) else None,
        "wtr": wtr,
        "tanks": [
            [int(t["tank_id"]), int(t["battles"]), int(t["wins"]), int(t.get("mark_of_mastery") or 0)]
            for t in tanks or ()
            if int(t["battles"]) > 0
        ],
    }


def wn8_from_totals(
    totals: Mapping[str, int], tanks: Sequence[Sequence[int]], expected: ExpectedValues
) -> tuple[float | None, float | None]:
    """(WN8, coverage) of an account from its career `totals` and its [tank_id, battles, wins, ...]
    per tank: the expected totals are the tanks' expected values weighted by their battles.

    Coverage is the share of the battles on tanks with expected values. At 1 the result is the
    per-tank WN8 (the sums are the same). Below 1 the tanks without expected values are left out of
    both sides as the per-tank WN8 does: their wins exactly (account/tanks gives wins per tank), and
    their damage, spotting, frags and defence in proportion to their battles (the API gives those
    only as career totals), which assumes the player does as well in them as elsewhere."""
    all_battles = covered_battles = covered_wins = 0
    exp_damage = exp_spot = exp_frag = exp_def = exp_wins = 0.0
    for tank_id, battles, wins, *_ in tanks:
        if battles <= 0:
            continue
        all_battles += battles
        expectation = expected.get(tank_id)
        if expectation is None:
            continue
        covered_battles += battles
        covered_wins += wins
        exp_damage += battles * expectation.damage
        exp_spot += battles * expectation.spot
        exp_frag += battles * expectation.frag
        exp_def += battles * expectation.defence
        exp_wins += battles * expectation.win_rate / 100
    if all_battles == 0 or exp_damage == 0:
        return None, (0.0 if all_battles else None)
    share = covered_battles / all_battles
    wn8 = rating_maths.wn8_from_ratios(
        totals["damage_dealt"] * share / exp_damage,
        totals["spotted"] * share / exp_spot,
        totals["frags"] * share / exp_frag,
        totals["dropped_capture_points"] * share / exp_def,
        (totals["wins"] if share == 1 else covered_wins) / exp_wins,
    )
    return wn8, share


def _rate(part: int | None, whole: int | None) -> float | None:
    return round(100.0 * (part or 0) / whole, 2) if whole else None


def _row(
    account_id: int | None,
    tank_id: int | None,
    asked_name: str | None,
    reason: str | None,
    source: str | None = None,
    fetched_at: float | None = None,
) -> dict[str, Any]:
    return {
        "account_id": account_id,
        "asked_name": asked_name,
        "tank_id": tank_id,
        "reason": reason,
        "source": source,
        "fetched_at": None if fetched_at is None else int(fetched_at),
        "nickname": None,
        "clan": None,
        "battles": None,
        "wins": None,
        "win_rate": None,
        "avg_damage": None,
        "wn8": None,
        "wn8_coverage": None,
        "wn7": None,
        "efficiency": None,
        "wtr": None,
        "global_rating": None,
        "last_battle_time": None,
        "bands": dict.fromkeys(BANDED_RATINGS),
        "tank": None,
    }


def failed_row(account_id: int | None, tank_id: int | None, asked_name: str | None, reason: str) -> dict[str, Any]:
    """A row without figures, saying why."""
    return _row(account_id, tank_id, asked_name, reason)


def _fill(
    row: dict[str, Any],
    totals: Mapping[str, int],
    figures: Mapping[str, Any],
    tank: Sequence[int] | None,
) -> dict[str, Any]:
    battles = int(totals.get("battles") or 0)
    row.update(
        {
            "battles": battles,
            "wins": int(totals.get("wins") or 0),
            "win_rate": _rate(totals.get("wins"), battles),
            "avg_damage": round(totals.get("damage_dealt", 0) / battles, 2) if battles else None,
            **figures,
        }
    )
    row["bands"] = {rating: band_of(rating, row[rating]) for rating in BANDED_RATINGS}
    if row["tank_id"] is not None:
        tank_battles, tank_wins, mastery = (tank[1], tank[2], tank[3]) if tank else (0, 0, None)
        row["tank"] = {
            "tank_id": row["tank_id"],
            "battles": tank_battles,
            "wins": tank_wins,
            "win_rate": _rate(tank_wins, tank_battles),
            "mark_of_mastery": mastery,
        }
    return row


def glance_row(
    glance: Mapping[str, Any],
    tank_id: int | None,
    asked_name: str | None,
    expected: ExpectedValues | None,
    tiers: Mapping[int, int],
    source: str,
) -> dict[str, Any]:
    """The row of a roster's own fetch (`source` live when fetched for this request, else cached)."""
    account_id = int(glance["account_id"])
    row = _row(account_id, tank_id, asked_name, glance.get("reason"), source, glance["fetched_at"])
    if glance.get("reason") == "no_account":
        return row
    row.update({k: glance.get(k) for k in ("nickname", "clan", "last_battle_time", "global_rating", "wtr")})
    totals = glance.get("totals") or {}
    tanks = glance.get("tanks") or []
    figures: dict[str, Any] = {}
    if totals.get("battles"):
        per_tank: list[Mapping[str, Any]] = [{"tank_id": t[0], "battles": t[1]} for t in tanks]
        tier = rating_maths.average_tier(per_tank, tiers)
        wn8, share = wn8_from_totals(totals, tanks, expected) if expected is not None else (None, None)
        figures = {
            "wn8": None if wn8 is None else round(wn8, 2),
            "wn8_coverage": None if share is None else round(share, 4),
            **rating_maths.wn7_and_efficiency(totals, tier),
        }
    tank = next((t for t in tanks if t[0] == tank_id), None) if tank_id is not None else None
    return _fill(row, totals, figures, tank)


def profile_row(
    doc: Mapping[str, Any],
    clan: Mapping[str, Any] | None,
    tank_id: int | None,
    asked_name: str | None,
    expected: ExpectedValues | None,
) -> dict[str, Any]:
    """The row of a cached profile (its stored ratings: the same WN8 /player shows); `clan` is the
    cached clan document naming its tag and the members' roles, when there is one."""
    account_id = int(doc["account_id"])
    row = _row(account_id, tank_id, asked_name, None, "cached", doc["cached_at"])
    totals = doc.get("totals") or {}
    ratings = doc.get("ratings") or {}
    clan_id = doc.get("clan_id")
    clan_view = None
    if clan_id:
        member = next((m for m in (clan or {}).get("members") or [] if m.get("account_id") == account_id), None)
        clan_view = {"clan_id": int(clan_id), "tag": (clan or {}).get("tag"), "role": (member or {}).get("role")}
    row.update(
        {
            "nickname": doc.get("nickname"),
            "clan": clan_view,
            "last_battle_time": doc.get("last_battle_time"),
            "global_rating": doc.get("global_rating"),
            "wtr": doc.get("wtr"),
        }
    )
    if not totals.get("battles"):
        row["reason"] = "no_battles"
        return row
    # A profile stored before badges were kept has none: the tank's badge is then null.
    tanks = [
        [int(t["tank_id"]), int(t["battles"]), int(t["wins"]), t.get("mark_of_mastery")] for t in doc.get("tanks") or []
    ]
    figures = {
        "wn8": ratings.get("wn8"),
        "wn8_coverage": coverage(tanks, expected) if ratings.get("wn8") is not None else None,
        "wn7": ratings.get("wn7"),
        "efficiency": ratings.get("efficiency"),
    }
    tank = next((t for t in tanks if t[0] == tank_id), None) if tank_id is not None else None
    return _fill(row, totals, figures, tank)


def coverage(tanks: Sequence[Sequence[int]], expected: ExpectedValues | None) -> float | None:
    """The share of the battles of [tank_id, battles, ...] rows on tanks with expected values."""
    battles = sum(t[1] for t in tanks)
    if not battles or expected is None:
        return None
    return round(sum(t[1] for t in tanks if expected.get(t[0]) is not None) / battles, 4)
