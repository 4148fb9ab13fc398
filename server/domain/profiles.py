"""Profiles, their views and daily snapshots, built from upstream answers (pure: no I/O)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from server.contract.catalogue import DELTA_PERIODS, RECENT_WINDOWS
from server.contract.catalogue.figures import WTR_NO_RATING, WTR_NOT_FETCHED, WTR_UPSTREAM_FAILED
from server.contract.catalogue.history import SNAPSHOT_FIELDS
from server.domain import ratings as rating_maths
from server.domain.days import utc_day
from store.constants import TANK_COUNTERS

HISTORY_FIELDS = ("date", *TANK_COUNTERS, "wn8", "wn7", "efficiency", "wtr", "global_rating")


def wtr_of(found: Mapping[int, int | None] | None, account_id: int) -> dict[str, Any]:
    """A profile's {wtr, wtr_reason} from an account/wtr answer ({account_id: rating | None}; None
    when the request failed)."""
    if found is None:
        return {"wtr": None, "wtr_reason": WTR_UPSTREAM_FAILED}
    rating = found.get(account_id)
    return {"wtr": rating, "wtr_reason": None if rating is not None else WTR_NO_RATING}


def recent_key(battles: int) -> str:
    """The history deltas' key of the figures over about the last `battles` battles."""
    return f"recent_{battles}"


def is_recent_key(key: str) -> bool:
    return key.startswith("recent_")


def flatten_tanks(raw_tanks: list[dict] | None) -> list[dict]:
    """Wargaming's tanks/stats entries ({tank_id, mark_of_mastery, all: {...}}) as flat per-tank totals
    with the mastery badge (a roster row shows it)."""
    tanks = []
    for entry in raw_tanks or []:
        stats = entry.get("all") or {}
        if stats.get("battles"):
            tanks.append(
                {
                    "tank_id": int(entry["tank_id"]),
                    **{f: int(stats.get(f) or 0) for f in TANK_COUNTERS},
                    "mark_of_mastery": int(entry.get("mark_of_mastery") or 0),
                }
            )
    return tanks


def _per_battle(value: float, battles: int, digits: int = 2) -> float | None:
    return round(value / battles, digits) if battles else None


def statistics_view(totals: dict, average_tier: float | None) -> dict:
    """Totals plus the per-battle averages users ask for (percentages with two decimals)."""
    battles = int(totals.get("battles") or 0)
    shots = int(totals.get("shots") or 0)
    return {
        "battles": battles,
        "wins": int(totals.get("wins") or 0),
        "losses": int(totals.get("losses") or 0),
        "draws": int(totals.get("draws") or 0),
        "win_rate": _per_battle(100.0 * (totals.get("wins") or 0), battles),
        "avg_damage": _per_battle(totals.get("damage_dealt") or 0, battles),
        "avg_frags": _per_battle(totals.get("frags") or 0, battles),
        "avg_spotted": _per_battle(totals.get("spotted") or 0, battles),
        "avg_defence": _per_battle(totals.get("dropped_capture_points") or 0, battles),
        "avg_capture": _per_battle(totals.get("capture_points") or 0, battles),
        "avg_xp": _per_battle(totals.get("xp") or 0, battles),
        "survival_rate": _per_battle(100.0 * (totals.get("survived_battles") or 0), battles),
        "hit_rate": round(100.0 * (totals.get("hits") or 0) / shots, 2) if shots else None,
        "average_tier": round(average_tier, 2) if average_tier is not None else None,
    }


def profile_view(doc: dict, live_fetched: bool) -> dict:
    """The public profile: identity, clan, dates, statistics, ratings, cache facts."""
    ratings = doc.get("ratings")
    if ratings and not live_fetched:
        ratings_view = {
            "available": True,
            "wn8": ratings.get("wn8"),
            "wn8_color": rating_maths.wn8_color(ratings.get("wn8")),
            "wn7": ratings.get("wn7"),
            "efficiency": ratings.get("efficiency"),
            "calculated_at": ratings.get("calculated_at"),
            "expected_values_version": ratings.get("expected_values_version"),
            "expected_values": ratings.get("expected_values"),  # null in ratings stored before it
            "wn8_percentile": None,  # the population's standing, filled in by the service
            "wn8_percentile_population": None,  # ... and whom it is among
            "place": None,  # the career WN8 leaderboard's rank, filled in by the service
        }
    else:
        ratings_view = {
            "available": False,
            "wn8": None,
            "wn8_color": None,
            "wn7": None,
            "efficiency": None,
            "calculated_at": None,
            "expected_values_version": None,
            "expected_values": None,
            "wn8_percentile": None,
            "wn8_percentile_population": None,
            "place": None,
        }
    # Wargaming's own ratings, as the upstream answered them (not computed here: no expected values needed).
    ratings_view["wtr"] = doc.get("wtr")
    ratings_view["wtr_reason"] = doc.get("wtr_reason", WTR_NOT_FETCHED) if doc.get("wtr") is None else None
    ratings_view["global_rating"] = doc.get("global_rating")
    return {
        "account_id": doc["account_id"],
        "region": doc["region"],
        "nickname": doc.get("nickname"),
        "clan_id": doc.get("clan_id"),
        "created_at": doc.get("created_at"),
        "last_battle_time": doc.get("last_battle_time"),
        "updated_at": doc.get("updated_at"),
        "statistics": statistics_view(doc.get("totals") or {}, (ratings or {}).get("average_tier")),
        "ratings": ratings_view,
        "cached_at": int(doc["cached_at"]),
        "live_fetched": live_fetched,
    }


def build_profile(
    region: str,
    account_id: int,
    info: dict,
    raw_tanks: list[dict] | None,
    now: float,
    wtr: Mapping[str, Any] | None = None,
) -> dict:
    """The stored profile of an account/info answer, its tanks/stats answer and its WTR (wtr_of;
    None: not asked)."""
    stats = (info.get("statistics") or {}).get("all") or {}
    rating = info.get("global_rating")
    return {
        "region": region,
        "account_id": account_id,
        "nickname": info.get("nickname"),
        "clan_id": info.get("clan_id"),
        "created_at": info.get("created_at"),
        "last_battle_time": info.get("last_battle_time"),
        "updated_at": info.get("updated_at"),
        "totals": {f: int(stats.get(f) or 0) for f in TANK_COUNTERS},
        "tanks": flatten_tanks(raw_tanks),
        "cached_at": now,
        "ratings": None,
        "global_rating": rating if isinstance(rating, int) else None,
        **(wtr or {"wtr": None, "wtr_reason": WTR_NOT_FETCHED}),
    }


def snapshot_of(doc: dict) -> dict:
    ratings = doc.get("ratings") or {}
    return {
        "region": doc["region"],
        "account_id": doc["account_id"],
        "date": utc_day(doc["cached_at"]),
        "taken_at": int(doc["cached_at"]),
        "clan_id": doc.get("clan_id"),
        **{f: doc["totals"].get(f, 0) for f in TANK_COUNTERS},
        "wn8": ratings.get("wn8"),
        "wn7": ratings.get("wn7"),
        "efficiency": ratings.get("efficiency"),
        # Wargaming's ratings only when known: a later measurement of the day that lacks one (a
        # failed account/wtr) leaves the day's as it was (snapshots are upserted with $set).
        **{name: doc[name] for name in ("wtr", "global_rating") if doc.get(name) is not None},
    }


def _change(first: dict, last: dict, name: str, digits: int = 2) -> float | None:
    """`last[name] - first[name]`; None when either is unknown."""
    if last.get(name) is None or first.get(name) is None:
        return None
    return round(last[name] - first[name], digits)


def period_delta(first: dict, last: dict) -> dict:
    """What changed between two snapshots: battles played and the rates over those battles."""
    battles = last["battles"] - first["battles"]
    diff = {f: last.get(f, 0) - first.get(f, 0) for f in TANK_COUNTERS}
    return {
        "from": first["date"],
        "to": last["date"],
        "battles": battles,
        "wins": diff["wins"],
        "win_rate": _per_battle(100.0 * diff["wins"], battles),
        "avg_damage": _per_battle(diff["damage_dealt"], battles),
        "avg_frags": _per_battle(diff["frags"], battles),
        "avg_xp": _per_battle(diff["xp"], battles),
        "wn8_change": _change(first, last, "wn8"),
        "win_rate_change": _rate_change(first, last),
        "wtr_change": _change(first, last, "wtr", 0),
        "global_rating_change": _change(first, last, "global_rating", 0),
    }


def _rate_change(first: dict, last: dict) -> float | None:
    if not first["battles"] or not last["battles"]:
        return None
    return round(100.0 * last["wins"] / last["battles"] - 100.0 * first["wins"] / first["battles"], 4)


def fill_days(snapshots: list[dict], through: str) -> list[dict]:
    """Snapshots with every missing day up to `through` filled by carrying the previous snapshot
    forward (the tracker visited the account and found no battle, so its figures stood still),
    marked `measured: False`; own snapshots `measured: True`."""
    out: list[dict] = []
    for snap, following in zip(snapshots, [*snapshots[1:], None]):
        out.append({**snap, "measured": True})
        day = dt.date.fromisoformat(snap["date"])
        end = (
            dt.date.fromisoformat(following["date"]) if following else dt.date.fromisoformat(through) + dt.timedelta(1)
        )
        day += dt.timedelta(days=1)
        while day < end:
            out.append({**snap, "date": day.isoformat(), "measured": False})
            day += dt.timedelta(days=1)
    return out


def history_view(
    region: str, account_id: int, snapshots: list[dict], days: int, today: str, through: str | None = None
) -> dict:
    """Daily entries of the last `days` days and deltas over each of DELTA_PERIODS days (null
    without data).

    `through`: the last day the account was measured (the tracker's last visit); days without a
    snapshot up to it carry the previous snapshot forward (see fill_days), so a tracked account has
    an entry for every day and a delta starts on its period's first day.
    """
    if through is not None and through > snapshots[-1]["date"]:
        snapshots = fill_days(snapshots, min(through, today))
    elif through is not None:
        snapshots = fill_days(snapshots, snapshots[-1]["date"])
    latest = snapshots[-1]
    first_day = (dt.date.fromisoformat(today) - dt.timedelta(days=days - 1)).isoformat()
    entries = []
    for snap in snapshots:
        if snap["date"] >= first_day:
            entry = {k: snap.get(k) for k in SNAPSHOT_FIELDS}
            entry["win_rate"] = _per_battle(100.0 * snap["wins"], snap["battles"])
            entry["avg_damage"] = _per_battle(snap["damage_dealt"], snap["battles"])
            entry["measured"] = snap.get("measured", True)
            entries.append(entry)
    deltas = {}
    for period in DELTA_PERIODS:
        start = (dt.date.fromisoformat(latest["date"]) - dt.timedelta(days=period)).isoformat()
        # The baseline is the earliest snapshot inside the period, so a delta never spans
        # more than its period; `from`/`to` say exactly which days it covers.
        baseline = next((snap for snap in snapshots if start <= snap["date"] < latest["date"]), None)
        deltas[f"{period}d"] = period_delta(baseline, latest) if baseline else None
    # The ratings of the battles played in each period need per-tank records: HistoryService
    # fills these from the tracker's; null without them.
    for delta in deltas.values():
        if delta is not None:
            delta["period"] = None
    for battles in RECENT_WINDOWS:
        deltas[recent_key(battles)] = None
    return {
        "account_id": account_id,
        "region": region,
        "days": days,
        "first_date": first_day,
        "last_date": today,
        "snapshots": entries,
        "snapshot_count": len(entries),
        "deltas": deltas,
        # Per-week figures of the battles played (PlayerService fills them from the per-tank
        # records, as the deltas' period); null without them.
        "weekly": None,
        "latest": {k: latest.get(k) for k in ("date", "battles", "wins", "wn8", "wtr")},
    }
