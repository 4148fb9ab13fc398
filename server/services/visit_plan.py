"""What a tracker's visit writes: the per-tank records (keyframes and change records, kept in place
for the last HISTORY_DAYS), the account-day's per-tank change and the tracked bookkeeping.

Pure but for the records' storage: the keyframe limits and the documents are store/tanks.py's and
store/population.py's, which server/domain may not import (its contract allows store.constants
alone), and the account's assistance is read by the upstream client's names. The packing is
server/domain/records.py's; the rest of the pass's pure parts (raw_tanks_of, mastery_of among them)
are in server/domain/visits.py; the tracker (server/services/tracker.py) fetches and stores.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from server.domain.days import days_before
from server.domain.records import TankState, changed, complete, pack, rebuild
from server.domain.visits import kept_from, mastery_of, tank_state
from server.upstream.client import ASSIST_AVERAGES
from store.constants import HISTORY_DAYS, TANK_COUNTERS
from store.population import TankChanges
from store.tanks import KEYFRAME_MAX_DAYS, KEYFRAME_MAX_RECORDS, RETENTION_DAYS, TankRecords

# Keeping what the last HISTORY_DAYS need (see plan_visit). A record expires RETENTION_DAYS after
# its expiry base and must rebuild every day it serves (up to the next record's day) for HISTORY_DAYS
# after that day. The newest record's chain (its keyframe and the change records up to it) is kept
# from `kept_day` (the tracked account's field; the chain keyframe's day when absent):
# - an account that plays on day D while its newest record's chain is kept from before
#   D - KEEP_GAP days: that record is rewritten in place (same _id) as a keyframe of its unchanged
#   state with expiry base D, so the days it served up to D - 1 outlive D - 1 + HISTORY_DAYS;
# - an idle account whose newest chain is kept from before REKEY_DAYS ago: the same rewrite with
#   expiry base today (no request), so the pass has RETENTION_DAYS - REKEY_DAYS days to do it
#   before anything the newest record serves expires.
KEEP_GAP = RETENTION_DAYS - HISTORY_DAYS
REKEY_DAYS = RETENTION_DAYS - 2 * KEYFRAME_MAX_DAYS - 20


def account_assist(info: dict | None) -> list[int] | None:
    """The account's assistance as store.constants.ACCOUNT_ASSIST ([battles, radio total, track
    total]) from account/info's statistics.all: the upstream gives spotting and tracking assistance
    only as per-battle averages rounded to 0.01, so each total is round(average x battles), within
    battles / 200 of the true total. None when the answer lacks them."""
    stats = ((info or {}).get("statistics") or {}).get("all") or {}
    battles, radio, track = (stats.get(name) for name in ("battles", *ASSIST_AVERAGES))
    if not isinstance(battles, int) or not isinstance(radio, (int, float)) or not isinstance(track, (int, float)):
        return None
    return [battles, round(radio * battles), round(track * battles)]


def next_record(
    state: dict[int, list[int]], base: dict[int, list[int]] | None, book: dict, day: str, replace: bool = False
) -> tuple[bytes | None, bool, dict]:
    """(payload or None when nothing changed, keyframe?, the tracked fields of the keyframe policy).

    `replace`: a record of `day` exists and is replaced (a same-day rewrite: `base` and `book` are
    as of the day before), so a record is written even when nothing changed against `base`.

    A keyframe on the first record and when the changes since the last keyframe would outweigh a
    new one, or KEYFRAME_MAX_RECORDS records / KEYFRAME_MAX_DAYS days after it: a rebuild then
    reads at most KEYFRAME_MAX_RECORDS + 1 documents, and keyframes cost at most as much again as
    the changes they save.
    """
    change = None
    if base:
        rows = changed(state, base)
        if not rows and not replace:
            return None, False, {}
        change = pack(rows, base)
    keyframe_day = book.get("keyframe_day") or ""
    if (
        change is None
        # A base written before a counter existed: only a keyframe gives the unchanged tanks theirs.
        or not complete(base or {})
        or int(book.get("chain_records") or 0) + 1 >= KEYFRAME_MAX_RECORDS
        or keyframe_day < days_before(day, KEYFRAME_MAX_DAYS)
        or int(book.get("chain_bytes") or 0) + len(change) > int(book.get("keyframe_bytes") or 0)
    ):
        payload = pack(state)
        return (
            payload,
            True,
            {
                "keyframe_day": day,
                "keyframe_bytes": len(payload),
                "chain_records": 0,
                "chain_bytes": 0,
                "kept_day": day,
            },
        )
    return (
        change,
        False,
        {
            "chain_records": int(book.get("chain_records") or 0) + 1,
            "chain_bytes": int(book.get("chain_bytes") or 0) + len(change),
        },
    )


def rekey_due(book: dict, day: str) -> bool:
    """An idle account whose newest record must be kept again on `day` (its state is then needed)."""
    return bool(book.get("record_day")) and kept_from(book) < days_before(day, REKEY_DAYS)


def plan_visit(
    region: str,
    account_id: int,
    book: dict,
    base: dict[int, list[int]] | None,
    state: dict[int, list[int]] | None,
    day: str,
    replace: bool = False,
    assist: list[int] | None = None,
) -> tuple[list[dict], dict[str, Any]]:
    """The records a visit on `day` writes and the tracked fields it sets (the bookkeeping).

    `assist`: the account's assistance as measured with `state` (account_assist), kept with the
    new record and as the tracked `assist`; an in-place keep of the newest record keeps its own
    (book's `assist`).

    `book`: the tracked account; `base`: its stored state (as of its newest record, book's
    record_day; None before the first); `state`: the fresh per-tank state when the account played
    (last_battle_time moved), None when it did not. Besides the new record (next_record), the
    newest record is rewritten in place as a keyframe of `base` with expiry base `day` when its
    chain is kept from before KEEP_GAP days ago (the account played after a gap) or, for an idle
    account, REKEY_DAYS ago: what any of the last HISTORY_DAYS days needs is never expired.

    A same-day rewrite passes `book` and `base` from same_day_base (as of the day before) and
    `replace`; its fields then start from that book (see same_day_base).
    """
    records: list[dict] = []
    fields: dict[str, Any] = {}
    newest = book.get("record_day")
    gap = KEEP_GAP if state is not None else REKEY_DAYS
    if base is not None and newest and newest < day and kept_from(book) < days_before(day, gap):
        whole = pack(base)
        battles = sum(row[0] for row in base.values())
        records.append(
            TankRecords.record(region, account_id, newest, battles, whole, True, kept=day, assist=book.get("assist"))
        )
        fields.update(keyframe_day=newest, keyframe_bytes=len(whole), chain_records=0, chain_bytes=0, kept_day=day)
    if state is not None:
        payload, keyframe, policy = next_record(state, base, {**book, **fields}, day, replace)
        if payload is not None:
            battles = sum(row[0] for row in state.values())
            records.append(TankRecords.record(region, account_id, day, battles, payload, keyframe, assist=assist))
            fields.update(policy, record_day=day, state=pack(state), assist=assist)  # state: stored as BSON binary
    return records, fields


def day_change(
    region: str,
    account_id: int,
    base: dict[int, list[int]] | None,
    state: dict[int, list[int]] | None,
    day: str,
    replace: bool = False,
    base_assist: Sequence[int] | None = None,
    assist: Sequence[int] | None = None,
    panel_only: bool = False,
) -> dict | None:
    """The account-day's per-tank differences (store.population.TankChanges) from the same base and
    state as the day's record (plan_visit): None before the first record (no base: what was played
    before is unknown) and when nothing changed, unless `replace` (a same-day rewrite replaces the
    day's earlier document, so the account-day counts once, with its whole day).

    A base written before a counter existed gives rows without it (zip stops at the shorter), and
    the account's assistance change is kept only when both `base_assist` and `assist` are known;
    `panel_only` marks the change of an account tracked for the random panel only."""
    if state is None or base is None:
        return None
    zero = [0] * len(TANK_COUNTERS)
    rows = {
        tank_id: [after - before for after, before in zip(row, base.get(tank_id) or zero)]
        for tank_id, row in changed(state, base).items()
    }
    if not rows and not replace:
        return None
    change = None
    if base_assist is not None and assist is not None and len(base_assist) == len(assist):
        change = [after - before for after, before in zip(assist, base_assist)]
    return TankChanges.change(region, account_id, day, pack(rows), assist=change, panel_only=panel_only)


async def same_day_base(tanks: TankRecords, region: str, account_id: int, day: str) -> tuple[TankState | None, dict]:
    """The base state and bookkeeping of a same-day rewrite on `day`: as of the newest record before
    `day` (TankRecords.prior), or (None, {}) without one (the rewrite is then a keyframe). The
    returned book holds every bookkeeping field: the caller sets them all, since the tracked ones
    are the replaced write's."""
    found = await tanks.prior(region, account_id, day)
    if found is None:
        return None, {}
    payloads, book = found
    return rebuild(payloads), book


def plan_account(
    region: str,
    account_id: int,
    info: dict,
    raw_tanks: list | None,
    book: dict,
    base: TankState | None,
    day: str,
    rewrite: bool = False,
    panel_only: bool = False,
) -> tuple[list[dict], dict | None, dict[str, Any]]:
    """A visit on `day` of an account that played (the pass's or a live lookup's): the records it
    writes (plan_visit), the account-day's change (day_change) and the tracked fields it sets
    besides its visit marks. `book` and `base` as plan_visit takes them; `rewrite`: a same-day rewrite; `panel_only`: the account is tracked for the random panel only."""
    state = tank_state(raw_tanks)
    assist = account_assist(info)
    records, fields = plan_visit(region, account_id, book, base, state, day, replace=rewrite, assist=assist)
    change = day_change(
        region,
        account_id,
        base,
        state,
        day,
        replace=rewrite,
        base_assist=book.get("assist"),
        assist=assist,
        panel_only=panel_only,
    )
    fields.update(mastery=mastery_of(raw_tanks), clan_id=info.get("clan_id"))
    return records, change, fields
