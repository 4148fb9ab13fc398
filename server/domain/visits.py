"""The tracker's daily pass, the parts that are pure: per-tank states read from upstream answers, the
profile a visit measures, the batches of due accounts, and the pass's figures for /status.

The tracker (server/services/tracker.py) fetches, plans the per-tank records (server/services/
visit_plan.py: their keyframe policy's limits belong to store/tanks.py, which this layer may not
import; their packing is server/domain/records.py's) and stores.
"""

from __future__ import annotations

from collections.abc import Mapping

from server.domain import ratings as rating_maths
from server.domain.profiles import build_profile
from server.domain.ratings import ExpectedValues
from server.domain.records import pack, unpack
from store.constants import SPEND_KEYS, TANK_COUNTERS

REALM_SPEND_KEYS = ("visited", "info_requests", "tanks_requests", "wtr_requests")


def tank_state(raw_tanks: list[dict] | None) -> dict[int, list[int]]:
    """tanks/stats entries as {tank_id: counters in store.constants.TANK_COUNTERS order} (tanks with battles)."""
    state: dict[int, list[int]] = {}
    for entry in raw_tanks or []:
        stats = entry.get("all") or {}
        if stats.get("battles"):
            state[int(entry["tank_id"])] = [int(stats.get(name) or 0) for name in TANK_COUNTERS]
    return state


def raw_tanks_of(capture: dict) -> list[dict]:
    """A watcher's capture (store/sessions.py) as the tanks/stats entries it was taken from: the
    played tanks with their counters, mastery badges and best battles' XP, all the tracker reads of
    an answer."""
    badges = unpack(bytes(capture["m"])) if capture.get("m") else {}
    out = []
    for tank_id, row in sorted(unpack(bytes(capture["s"])).items()):
        badge = badges.get(tank_id) or [0]
        entry = {"tank_id": tank_id, "mark_of_mastery": badge[0], "all": dict(zip(TANK_COUNTERS, row))}
        if len(badge) > 1:
            entry["max_xp"] = badge[1]
        out.append(entry)
    return out


def mastery_of(raw_tanks: list[dict] | None) -> bytes:
    """Each played tank's mastery badge (tanks/stats mark_of_mastery, 1..4; 0 none) and its best
    battle's XP (max_xp), packed as rows of two counters (server/domain/records.py pack: a few bytes a tank;
    unpack gives {tank_id: [level, max_xp]}; a payload written before max_xp was kept has rows of
    the level alone). A tank with neither is left out."""
    out: dict[int, list[int]] = {}
    for entry in raw_tanks or []:
        level, best = entry.get("mark_of_mastery"), entry.get("max_xp")
        level = level if isinstance(level, int) and level > 0 else 0
        best = best if isinstance(best, int) and best > 0 else 0
        if (level or best) and (entry.get("all") or {}).get("battles"):
            out[int(entry["tank_id"])] = [level, best]
    return pack(out) if out else b""


def kept_from(book: dict) -> str:
    """The day the newest record's chain is kept from (its earliest expiry base)."""
    return str(book.get("kept_day") or book.get("keyframe_day") or book.get("record_day") or "")


def measured_profile(
    region: str,
    account_id: int,
    info: dict,
    raw_tanks: list | None,
    now: float,
    expected: ExpectedValues | None,
    tiers: Mapping[int, int],
) -> dict:
    """The profile a visit measured, with its ratings when the expected values are loaded, and
    without a WTR: the day's comes with the tracker's flush_wtr (the profile keeps its own until then)."""
    doc = build_profile(region, account_id, info, raw_tanks, now)
    del doc["wtr"], doc["wtr_reason"]
    if expected is not None:
        doc["ratings"] = rating_maths.compute_ratings(doc["totals"], doc["tanks"], expected, tiers)
        doc["ratings"]["calculated_at"] = int(now)
    return doc


def nickname_fields(info: dict) -> dict:
    """The tracked account's nickname as account/info answered it (none when missing: the stored one stays)."""
    nickname = info.get("nickname")
    return {"nickname": nickname, "nickname_lower": nickname.lower()} if nickname else {}


def full_batches(accounts: list[dict], batch: int, last: bool) -> dict[str, list[dict]]:
    """Due accounts (of mixed regions) by region, cut to whole batches of `batch`: a region's
    remainder stays unvisited (and unmarked) for the next due() read, where it fills a batch with
    the accounts read then, so account/info costs 1/batch of a request per account but for one
    partial batch per region at the end (`last`: these are all the due accounts, every one is
    visited). With at least one region holding a whole batch (by pigeonhole, when there are at most
    DUE_BATCHES regions), every read makes progress; otherwise the largest region goes whole."""
    by_region: dict[str, list[dict]] = {}
    for account in accounts:
        by_region.setdefault(account["region"], []).append(account)
    if last:
        return by_region
    whole = {region: group[: len(group) - len(group) % batch] for region, group in by_region.items()}
    whole = {region: group for region, group in whole.items() if group}
    if not whole:
        largest = max(by_region, key=lambda region: len(by_region[region]))
        whole = {largest: by_region[largest]}
    return whole


def realm_spend(region: str, counts: dict[str, int]) -> dict[str, int]:
    """A batch's figures under the slice document's per-realm keys (`regions.<realm>.<key>`)."""
    return {f"regions.{region}.{key}": counts.get(key, 0) for key in REALM_SPEND_KEYS}


def realm_progress(slices: list[dict], remaining: int, worked: float, done: bool) -> dict[str, dict]:
    """Today's pass per realm: visits and requests, and an estimate of what is left and when it
    ends. Accounts fall into slices by a stable hash, so each realm's share of today's visits
    stands for its share of what remains; the ETA divides that by the realm's own visit rate."""
    visited: dict[str, dict[str, int]] = {}
    for doc in slices:
        for realm, figures in (doc.get("regions") or {}).items():
            mine = visited.setdefault(realm, dict.fromkeys(REALM_SPEND_KEYS, 0))
            for key in REALM_SPEND_KEYS:
                mine[key] += int((figures or {}).get(key) or 0)
    total = sum(figures["visited"] for figures in visited.values())
    out = {}
    for realm in sorted(visited):
        figures = visited[realm]
        left = round(remaining * figures["visited"] / total) if total else 0
        eta: float | None = 0.0 if done or not left else None
        if eta is None and worked > 0 and figures["visited"]:
            eta = left / (figures["visited"] / worked)
        out[realm] = {
            "visited": figures["visited"],
            "requests": figures["info_requests"] + figures["tanks_requests"] + figures.get("wtr_requests", 0),
            "remaining_estimate": left,
            "eta_seconds": None if eta is None else round(eta),
        }
    return out


def day_progress(day: str, slices: list[dict], tracked: int, due: Mapping[int, float], now: float) -> dict:
    """/status's `today` of the tracker: the day's figures summed over its slice documents (every
    process's), and when the pass should end; `due`: when each slice of the day is due."""
    totals = dict.fromkeys(SPEND_KEYS, 0)
    worked = 0.0
    for doc in slices:
        for key in SPEND_KEYS:
            totals[key] += int(doc.get(key) or 0)
        if doc.get("finished"):
            worked += max(0.0, float(doc["finished"]) - float(doc.get("started") or doc["finished"]))
    finished = [doc["slice"] for doc in slices if doc.get("finished")]
    remaining = max(0, tracked - totals["visited"])
    unfinished_due = [at for slice_no, at in due.items() if slice_no not in finished]
    eta = None
    if not unfinished_due:
        eta = 0.0
    elif worked > 0 and totals["visited"]:
        eta = max(max(unfinished_due) - now, remaining / (totals["visited"] / worked))
    return {
        "day": day,
        "visited": totals["visited"],
        "total": max(tracked, totals["visited"]),
        "slices_finished": len(finished),
        "eta_seconds": None if eta is None else round(max(0.0, eta)),
        "requests": {
            "account_info": totals["info_requests"],
            "tanks_stats": totals["tanks_requests"],
            "account_wtr": totals["wtr_requests"],
        },
        "records": totals["records"],
        "record_bytes": totals["record_bytes"],
        "by_realm": realm_progress(slices, remaining, worked, done=not unfinished_due),
    }
