"""Clan maths: ratings blocks, member averages and changes, member snapshots, the weekly digest.

Pure: the clan service (server/services/clans.py) fetches and stores; everything here is a function
of the upstream answers and stored documents it is given.
"""

from __future__ import annotations

import datetime as dt
import re

from server.contract.catalogue import DIGEST_MIN_BATTLES, DIGEST_TOP, WEEK_DAYS
from server.domain.days import utc_day
from store.constants import TANK_COUNTERS

RATING_MAX_AGE = 20 * 3600  # a member's rating is recomputed about daily
RATING_REUSE_MAX = 2 * 86400  # a rating older than this is not copied into a new snapshot
CHANGES_KEEP = 35 * 86400  # observed joins and leaves are kept this long (digest needs 7 days)
DIGEST_DAYS = WEEK_DAYS
TOP_N = DIGEST_TOP
TOP_MIN_BATTLES = DIGEST_MIN_BATTLES

_SKIRMISH_TOTAL = re.compile(r"^total_(\d+)$")


def _rating_value(ratings: dict | None, key: str) -> int | None:
    entry = (ratings or {}).get(key)
    value = entry.get("value") if isinstance(entry, dict) else entry
    return int(round(value)) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def skirmish_totals(stronghold: dict | None) -> tuple[int, int]:
    """(battles, wins) of skirmishes summed over tiers (total_N / win_N, not the 28-day keys)."""
    stats = (stronghold or {}).get("skirmish_statistics") or {}
    battles = wins = 0
    for key, value in stats.items():
        match = _SKIRMISH_TOTAL.match(key)
        if match and value:
            battles += int(value)
            wins += int(stats.get(f"win_{match.group(1)}") or 0)
    return battles, wins


ELO_FIELDS = ("elo_10", "elo_8")  # from clanratings/clans; their age: ratings_updated_at
SKIRMISH_FIELDS = ("skirmish_battles", "skirmish_win_rate")  # from stronghold/claninfo: stronghold_updated_at


def clan_ratings(ratings: dict | None, stronghold: dict | None) -> dict:
    battles, wins = skirmish_totals(stronghold)
    return {
        "elo_10": _rating_value(ratings, "fb_elo_rating_10"),
        "elo_8": _rating_value(ratings, "fb_elo_rating_8"),
        "skirmish_battles": battles,
        "skirmish_win_rate": round(100.0 * wins / battles, 2) if battles else None,
    }


def stored_ratings(doc: dict | None) -> dict:
    """The ratings block of a stored clan with each part's fetch time (unix seconds).

    Documents written before the parts had their own times were fetched whole at cached_at;
    no document: the figures of a clan never fetched (elo null, no skirmishes, times null).
    """
    if doc is None:
        return {**clan_ratings(None, None), "ratings_updated_at": None, "stronghold_updated_at": None}
    block = doc.get("ratings") or {}
    cached_at = int(doc["cached_at"])
    return {
        "elo_10": block.get("elo_10"),
        "elo_8": block.get("elo_8"),
        "skirmish_battles": int(block.get("skirmish_battles") or 0),
        "skirmish_win_rate": block.get("skirmish_win_rate"),
        "ratings_updated_at": block.get("ratings_updated_at", cached_at),
        "stronghold_updated_at": block.get("stronghold_updated_at", cached_at),
    }


def refreshed_ratings(
    ratings: dict | None,
    stronghold: dict | None,
    old_doc: dict | None,
    now: float,
    *,
    ratings_fetched: bool = True,
    stronghold_fetched: bool = True,
) -> dict:
    """The ratings block of a clan refreshed at `now`: each part from its upstream answer when
    that call succeeded (fetched at `now`), else as stored before with its older time (null
    when never fetched). A pure function of its inputs: the same refresh writes the same block."""
    fresh = clan_ratings(ratings, stronghold)
    block = stored_ratings(old_doc)
    if ratings_fetched:
        block.update({k: fresh[k] for k in ELO_FIELDS}, ratings_updated_at=int(now))
    if stronghold_fetched:
        block.update({k: fresh[k] for k in SKIRMISH_FIELDS}, stronghold_updated_at=int(now))
    return block


def member_averages(members: list[dict]) -> dict:
    """Mean of per-member career win rate, damage per battle and battles.

    Only members whose profile we hold and who played at least one battle count
    (`profiles_measured`); a win rate of a member without battles does not exist.
    """
    measured = [m for m in members if m.get("measured") and m.get("battles")]
    count = len(measured)
    if not count:
        return {"profiles_measured": 0, "avg_win_rate": None, "avg_damage": None, "avg_battles": None}
    return {
        "profiles_measured": count,
        "avg_win_rate": round(sum(100.0 * m["wins"] / m["battles"] for m in measured) / count, 2),
        "avg_damage": round(sum(m["damage_dealt"] / m["battles"] for m in measured) / count, 2),
        "avg_battles": round(sum(m["battles"] for m in measured) / count, 2),
    }


def details_view(doc: dict) -> dict:
    return {
        "clan_id": doc["clan_id"],
        "region": doc["region"],
        "tag": doc.get("tag"),
        "name": doc.get("name"),
        "members_count": doc.get("members_count"),
        "ratings": stored_ratings(doc),
        "members": doc["members_avg"],
        "member_list": [
            {k: m.get(k) for k in ("account_id", "name", "role", "joined_at")} for m in doc.get("members") or []
        ],
        "cached_at": int(doc["cached_at"]),
    }


def members_of(info: dict) -> list[dict]:
    members = info.get("members") or []
    if isinstance(members, dict):  # members_key=id answers a mapping
        members = list(members.values())
    return [m for m in members if m and m.get("account_id")]


def account_totals(info: dict) -> dict:
    stats = (info.get("statistics") or {}).get("all") or {}
    return {f: int(stats.get(f) or 0) for f in TANK_COUNTERS}


def rating_fields(ratings: dict | None) -> dict | None:
    if not ratings or ratings.get("calculated_at") is None:
        return None
    return {k: ratings.get(k) for k in ("wn8", "wn7", "efficiency", "calculated_at")}


def newest_rating(*candidates: dict | None) -> dict | None:
    rated = [r for r in candidates if r and r.get("calculated_at") is not None]
    return max(rated, key=lambda r: r["calculated_at"]) if rated else None


def known_ratings(members: list[dict], profiles: dict, old_doc: dict | None) -> dict[int, dict | None]:
    """Each member's newest rating held before this refresh: their cached profile's or the clan's."""
    old_members = {m["account_id"]: m for m in (old_doc or {}).get("members") or []}
    return {
        int(m["account_id"]): newest_rating(
            rating_fields((profiles.get(int(m["account_id"])) or {}).get("ratings")),
            (old_members.get(int(m["account_id"])) or {}).get("rating"),
        )
        for m in members
    }


def member_snapshot(
    region: str, account_id: int, info: dict, now: float, rating: dict | None, wtr: int | None = None
) -> dict:
    """A daily snapshot of the same shape as server.domain.profiles.snapshot_of (`wtr`: the member's
    WTR when this refresh measured it)."""
    usable = rating if rating and rating["calculated_at"] >= now - RATING_REUSE_MAX else {}
    return {
        "region": region,
        "account_id": account_id,
        "date": utc_day(now),
        "taken_at": int(now),
        "clan_id": info.get("clan_id"),
        **account_totals(info),
        "wn8": usable.get("wn8"),
        "wn7": usable.get("wn7"),
        "efficiency": usable.get("efficiency"),
        # Wargaming's rating, when account/info gave it (a missing one leaves the day's as it was).
        **({"global_rating": info["global_rating"]} if isinstance(info.get("global_rating"), int) else {}),
        **({"wtr": wtr} if wtr is not None else {}),
    }


def member_changes(old_doc: dict | None, members: list[dict], now: float) -> list[dict]:
    """Earlier observed joins/leaves (within CHANGES_KEEP) plus those since the last refresh."""
    if old_doc is None:
        return []  # first sight of the clan: joined_at tells who is new
    changes = [c for c in old_doc.get("member_changes") or [] if c["at"] >= now - CHANGES_KEEP]
    before = {m["account_id"]: m.get("name") for m in old_doc.get("members") or []}
    after = {m["account_id"]: m.get("name") for m in members}
    for account_id in sorted(after.keys() - before.keys()):
        changes.append(
            {
                "account_id": account_id,
                "name": after[account_id],
                "change": "joined",
                "at": int(now),
                "date": utc_day(now),
            }
        )
    for account_id in sorted(before.keys() - after.keys()):
        changes.append(
            {
                "account_id": account_id,
                "name": before[account_id],
                "change": "left",
                "at": int(now),
                "date": utc_day(now),
            }
        )
    return changes


def stale_members(members: list[dict], accounts: dict, known: dict, now: float) -> list[int]:
    """Members to rate: with a profile and battles, and no rating or one RATING_MAX_AGE old;
    never-rated members first, then the oldest ratings."""
    stale = []
    for m in members:
        account_id = int(m["account_id"])
        account, rating = accounts.get(account_id), known[account_id]
        if account is None or not account_totals(account)["battles"]:
            continue  # no profile or no battles: nothing to rate
        if rating is None or rating["calculated_at"] < now - RATING_MAX_AGE:
            stale.append(account_id)
    stale.sort(key=lambda a: ((known[a] or {}).get("calculated_at") or 0, a))
    return stale


def member_row(member: dict, account: dict | None, rating: dict | None) -> dict:
    """A member as the clan document keeps them: career totals when account/info answered (`measured`)."""
    row = {
        "account_id": int(member["account_id"]),
        "name": member.get("account_name") or (account or {}).get("nickname"),
        "role": member.get("role"),
        "joined_at": member.get("joined_at"),
        "measured": account is not None,
        "battles": 0,
        "wins": 0,
        "damage_dealt": 0,
        "rating": rating,
    }
    if account is not None:
        totals = account_totals(account)
        row.update(battles=totals["battles"], wins=totals["wins"], damage_dealt=totals["damage_dealt"])
    return row


def clan_document(
    region: str,
    clan_id: int,
    info: dict,
    rows: list[dict],
    ratings: dict,
    old_doc: dict | None,
    now: float,
    referenced: bool,
) -> dict:
    """The clan as refreshed at `now` from its clans/info answer, member rows and ratings block
    (`referenced`: a player or seed named it in this run, which keeps it refreshed)."""
    return {
        "region": region,
        "clan_id": clan_id,
        "tag": info.get("tag"),
        "name": info.get("name"),
        "members_count": int(info.get("members_count") or len(rows)),
        "ratings": ratings,
        "members_avg": member_averages(rows),
        "members": rows,
        "member_changes": member_changes(old_doc, rows, now),
        "cached_at": now,
        "referenced_at": now if referenced else (old_doc or {}).get("referenced_at", now),
    }


def _career(snap: dict) -> dict | None:
    battles = snap.get("battles") or 0
    if not battles:
        return None
    return {
        "win_rate": 100.0 * snap["wins"] / battles,
        "avg_damage": snap["damage_dealt"] / battles,
        "avg_battles": float(battles),
    }


def _averages_change(rows: list[dict]) -> dict:
    pairs: list[tuple[dict, dict]] = []
    for row in rows:
        first, last = _career(row["first"]), _career(row["last"])
        if first and last:
            pairs.append((first, last))
    out: dict = {"profiles_compared": len(pairs)}
    for key in ("win_rate", "avg_damage", "avg_battles"):
        if pairs:
            start = sum(a[key] for a, _ in pairs) / len(pairs)
            end = sum(b[key] for _, b in pairs) / len(pairs)
            out[key] = {"start": round(start, 2), "end": round(end, 2), "change": round(end - start, 2)}
        else:
            out[key] = {"start": None, "end": None, "change": None}
    return out


def member_weeks(members: list[dict], snapshots: list[dict]) -> tuple[list[dict], list[dict]]:
    """(a row per measured member: their week's battles, wins and damage with their first and last
    snapshot, the members with fewer than two snapshots in the period: `not_measured`)."""
    by_member: dict[int, list[dict]] = {}
    for snap in sorted(snapshots, key=lambda s: s["date"]):
        by_member.setdefault(snap["account_id"], []).append(snap)
    rows, not_measured = [], []
    for member in members:
        ref = {"account_id": member["account_id"], "name": member.get("name")}
        snaps = by_member.get(member["account_id"]) or []
        if len(snaps) < 2:
            not_measured.append(ref)
            continue
        first, last = snaps[0], snaps[-1]
        week = {f: max(0, (last.get(f) or 0) - (first.get(f) or 0)) for f in ("battles", "wins", "damage_dealt")}
        rows.append({**ref, **week, "first": first, "last": last})
    return rows, not_measured


def joins_and_leaves(clan: dict, start: str, end: str, now: float) -> tuple[list[dict], list[dict]]:
    """Who joined (current members, by joined_at or an observed join) and who left within [start, end]."""
    members = clan.get("members") or []
    period_start = dt.datetime.fromisoformat(start).replace(tzinfo=dt.UTC).timestamp()
    names = {m["account_id"]: m.get("name") for m in members}
    joined: dict[int, dict] = {}
    for member in members:
        joined_at = member.get("joined_at")
        if joined_at and period_start <= joined_at <= now:
            joined[member["account_id"]] = {
                "account_id": member["account_id"],
                "name": member.get("name"),
                "date": utc_day(joined_at),
            }
    left = []
    for change in clan.get("member_changes") or []:
        if not start <= change["date"] <= end:
            continue
        if change["change"] == "joined" and change["account_id"] in names:
            joined.setdefault(
                change["account_id"],
                {"account_id": change["account_id"], "name": names[change["account_id"]], "date": change["date"]},
            )
        elif change["change"] == "left":
            left.append({"account_id": change["account_id"], "name": change.get("name"), "date": change["date"]})
    return sorted(joined.values(), key=_by_date), sorted(left, key=_by_date)


def _by_date(entry: dict) -> tuple[str, int]:
    return entry["date"], entry["account_id"]


def top_members(rows: list[dict]) -> dict:
    """The week's top TOP_N members by battles, and among those with TOP_MIN_BATTLES by WN8 and win rate."""
    active = [r for r in rows if r["battles"] >= 1]
    by_battles = sorted(active, key=lambda r: (-r["battles"], r["account_id"]))[:TOP_N]
    eligible = [r for r in rows if r["battles"] >= TOP_MIN_BATTLES]
    with_wn8 = [r for r in eligible if r["last"].get("wn8") is not None]
    by_wn8 = sorted(with_wn8, key=lambda r: (-r["last"]["wn8"], -r["battles"], r["account_id"]))[:TOP_N]
    win_rates = {r["account_id"]: round(100.0 * r["wins"] / r["battles"], 2) for r in eligible}
    by_win_rate = sorted(eligible, key=lambda r: (-win_rates[r["account_id"]], -r["battles"], r["account_id"]))[:TOP_N]
    return {
        "min_battles": TOP_MIN_BATTLES,
        "by_battles": [{"account_id": r["account_id"], "name": r["name"], "battles": r["battles"]} for r in by_battles],
        "by_wn8": [
            {
                "account_id": r["account_id"],
                "name": r["name"],
                "wn8": round(r["last"]["wn8"], 2),
                "wn8_change": round(r["last"]["wn8"] - r["first"]["wn8"], 2)
                if r["first"].get("wn8") is not None
                else None,
                "battles": r["battles"],
            }
            for r in by_wn8
        ],
        "by_win_rate": [
            {
                "account_id": r["account_id"],
                "name": r["name"],
                "win_rate": win_rates[r["account_id"]],
                "battles": r["battles"],
            }
            for r in by_win_rate
        ],
    }


def weekly_digest(clan: dict, snapshots: list[dict], start: str, end: str, now: float) -> dict:
    """The weekly digest of a clan from its current members' daily snapshots.

    A member's week is the difference between their first and last snapshot dated within
    [start, end] (normally the snapshots of `start` and of `end`); members with fewer than
    two such snapshots are `not_measured`, not inactive.
    """
    members = clan.get("members") or []
    rows, not_measured = member_weeks(members, snapshots)
    joined, left = joins_and_leaves(clan, start, end, now)
    battles = sum(r["battles"] for r in rows)
    wins = sum(r["wins"] for r in rows)
    damage = sum(r["damage_dealt"] for r in rows)
    return {
        "clan_id": clan["clan_id"],
        "region": clan["region"],
        "tag": clan.get("tag"),
        "name": clan.get("name"),
        "period": {"start": start, "end": end, "days": DIGEST_DAYS},
        "activity": {
            "members": len(members),
            "measured_members": len(rows),
            "active_members": sum(1 for r in rows if r["battles"] >= 1),
            "inactive": [{"account_id": r["account_id"], "name": r["name"]} for r in rows if r["battles"] == 0],
            "not_measured": not_measured,
            "battles_per_member": round(battles / len(rows), 2) if rows else None,
            "joined": joined,
            "left": left,
        },
        "top": top_members(rows),
        "aggregates": {
            "battles": battles,
            "wins": wins,
            "win_rate": round(100.0 * wins / battles, 2) if battles else None,
            "avg_damage": round(damage / battles, 2) if battles else None,
            "members_avg_change": _averages_change(rows),
        },
        "clan_cached_at": int(clan["cached_at"]),
        "computed_at": int(now),
    }
