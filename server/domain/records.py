"""The per-tank record codec: a state's packed payload (keyframe or change), its decoding, and the
rebuilding of states from an account's stored records (store/tanks.py keeps them as bytes).

Pure: the store writes the payloads this packs and returns the raw records this decodes.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping, Sequence

from store.constants import TANK_COUNTERS

WIDTH = len(TANK_COUNTERS)

TankState = dict[int, list[int]]  # tank_id -> counters in TANK_COUNTERS order
# A stored record as TankRecords.timeline_records returns it: (day, account total battles,
# keyframe, payload, the account-level assistance kept with it or None).
RawRecord = tuple[str, int, bool, bytes, Sequence[int] | None]


# --- packing --------------------------------------------------------------------------
# A payload is one byte (the number of counters per tank) and then, per tank in ascending tank_id
# order, zigzag varints of: the tank_id minus the previous tank's, then each counter minus its value
# in the base state (a keyframe's base is empty; a change record's base is the previous state).
# A typical tank row costs 15-25 bytes where a BSON array of the same ints costs ~150.


def _put(out: bytearray, value: int) -> None:
    z = value << 1 if value >= 0 else ((-value) << 1) - 1
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)


def _values(payload: bytes) -> list[int]:
    values: list[int] = []
    acc = shift = 0
    append = values.append
    for byte in payload:
        if byte & 0x80:
            acc |= (byte & 0x7F) << shift
            shift += 7
        else:
            acc |= byte << shift
            append(-((acc + 1) >> 1) if acc & 1 else acc >> 1)
            acc = shift = 0
    return values


def pack(rows: Mapping[int, Sequence[int]], base: Mapping[int, Sequence[int]] | None = None) -> bytes:
    """The payload of `rows` ({tank_id: counters}) as differences from `base` (None: a keyframe).

    Its width is its shortest row's (WIDTH when empty): a state rebuilt from records written before
    a counter existed has shorter rows (see apply_parsed), and its payload stays that short rather
    than claim zeros for what was not measured."""
    width = min((len(row) for row in rows.values()), default=WIDTH)
    out = bytearray((width,))
    previous = 0
    zero = (0,) * width
    for tank_id in sorted(rows):
        row = rows[tank_id]
        _put(out, tank_id - previous)
        previous = tank_id
        before = (base.get(tank_id) if base is not None else None) or zero
        for i in range(width):
            _put(out, row[i] - (before[i] if i < len(before) else 0))
    return bytes(out)


def parse(payload: bytes) -> tuple[int, list[int]]:
    """A payload as (counters per tank, its decoded values): decoded once, applied many times."""
    return (payload[0], _values(payload[1:])) if payload else (WIDTH, [])


def apply(state: TankState, payload: bytes) -> TankState:
    """Add a payload's rows to `state` (in place; a keyframe applies to an empty state)."""
    if not payload:
        return state
    return apply_parsed(state, parse(payload))


def apply_parsed(state: TankState, parsed: tuple[int, list[int]]) -> TankState:
    """`apply` for a payload already parsed (Timeline keeps each record's parsed payload).

    A changed tank gets a new row; rows are never changed in place, so a shallow copy of a state
    (dict(state)) keeps that state while the original goes on being applied to.

    A row is as wide as what measured it: a payload written before a counter existed (width below
    WIDTH) gives rows without it, and applied to a wider row cuts it to its own width, since the
    change of the missing counters is unknown; a wider row needs a wider keyframe (the tracker
    writes one on an account's first record with the new counters: server/services/tracker.py)."""
    width, values = parsed
    tank_id = 0
    step = width + 1
    for start in range(0, len(values), step):
        tank_id += values[start]
        diff = values[start + 1 : start + step]
        if width > WIDTH:  # a payload of a later version: the counters this one knows
            diff = diff[:WIDTH]
        row = state.get(tank_id)
        # map stops at the shorter: a row never gains counters from a change record
        state[tank_id] = diff if row is None else list(map(operator.add, row, diff))
    return state


def unpack(payload: bytes | None) -> TankState:
    return apply({}, payload or b"")


def changed(state: Mapping[int, Sequence[int]], base: Mapping[int, Sequence[int]]) -> dict[int, Sequence[int]]:
    """The rows of `state` that differ from `base` (tanks new in `state` included)."""
    return {tank_id: row for tank_id, row in state.items() if list(row) != list(base.get(tank_id) or ())}


def as_counters(state: Mapping[int, Sequence[int]]) -> dict[int, dict[str, int]]:
    """Rows as {name: value}: a counter a row does not carry (written before it existed) is absent."""
    return {tank_id: dict(zip(TANK_COUNTERS, row)) for tank_id, row in state.items()}


def complete(state: Mapping[int, Sequence[int]]) -> bool:
    """Every row of `state` carries every counter of TANK_COUNTERS."""
    return all(len(row) >= WIDTH for row in state.values())


def rebuild(payloads: Iterable[bytes]) -> TankState:
    """The state a chain of payloads (a keyframe, then its change records, oldest first) rebuilds."""
    state: TankState = {}
    for payload in payloads:
        apply(state, payload)
    return state


def state_of(chain: Sequence[tuple[str, bytes]]) -> tuple[str, dict[int, dict[str, int]]] | None:
    """The per-tank counters a chain (TankRecords.chain_on: (day, payload), oldest first) rebuilds,
    with its newest record's day; None for an empty chain."""
    if not chain:
        return None
    return chain[-1][0], as_counters(rebuild(payload for _, payload in chain))


def unpack_changes(
    changes: Iterable[tuple[int, bytes, Sequence[int] | None]],
) -> list[tuple[int, TankState, Sequence[int] | None]]:
    """A day's stored changes (TankChanges.of_day: account_id, payload, assistance change) with
    each payload unpacked as {tank_id: counter differences}."""
    return [(account_id, unpack(payload), assist) for account_id, payload, assist in changes]


def mastery_rows(payload: bytes | None) -> dict[int, tuple[int, int | None]]:
    """A tracked account's packed mastery (Tracked.mastery_payload) as each tank's badge (0..4) and
    its best battle's XP (None when kept before the service read it)."""
    return {tank_id: (row[0], row[1] if len(row) > 1 else None) for tank_id, row in unpack(payload).items() if row}


class Timeline:
    """An account's records over a range of days (TankRecords.timeline_records), oldest first."""

    @classmethod
    def of(cls, records: Iterable[RawRecord]) -> Timeline:
        """The timeline of raw stored records (TankRecords.timeline_records)."""
        rows = list(records)
        return cls(
            [(day, battles, keyframe, payload) for day, battles, keyframe, payload, _ in rows],
            {day: assist for day, _, _, _, assist in rows if assist},
        )

    def __init__(self, records: list[tuple[str, int, bool, bytes]], assists: Mapping[str, Sequence[int]] | None = None):
        self.records = records  # (day, account total battles, keyframe, payload)
        # The account-level assistance of each record day that has it (TankRecords.record `assist`).
        self.assists: Mapping[str, Sequence[int]] = assists or {}
        # Each payload decoded at most once: one answer rebuilds states of many days from the same
        # records (its periods, weeks and recent battles), and varint decoding was most of its CPU.
        self._parsed: list[tuple[int, list[int]] | None] = [None] * len(records)
        # The states built so far, by record index: a later day's state is built on from the
        # nearest one of its chain (one answer asks for ~30 days' states of the same records).
        self._states: dict[int, TankState] = {}

    def parsed(self, index: int) -> tuple[int, list[int]]:
        """The parsed payload of record `index` (see parse)."""
        found = self._parsed[index]
        if found is None:
            found = self._parsed[index] = parse(self.records[index][3])
        return found

    def battles_by_day(self, since: str, until: str) -> list[tuple[str, int]]:
        """(record day, account total battles) for every record day in [since, until], oldest first."""
        return [(day, battles) for day, battles, _, _ in self.records if since <= day <= until]

    def assist_on(self, record_day: str) -> Sequence[int] | None:
        """The account-level assistance (store.constants.ACCOUNT_ASSIST) kept with the record of
        `record_day`, None when that record has none (written before release 1.3.0)."""
        return self.assists.get(record_day)

    def complete_from(self) -> str | None:
        """The first record day from which every state of this timeline carries every counter and
        the account-level assistance (a keyframe of the full width with it), None when none does."""
        for day, _, keyframe, payload in self.records:
            if keyframe and payload and payload[0] >= WIDTH and day in self.assists:
                return day
        return None

    def state_on(self, day: str) -> tuple[str, dict[int, dict[str, int]]] | None:
        """As state_of(TankRecords.chain_on) for a day on or after the timeline's `since`: the state as of
        the newest record on or before `day`, with that record's day; None without one."""
        found = self.raw_state_on(day)
        return (found[0], as_counters(found[1])) if found is not None else None

    def raw_state_on(self, day: str) -> tuple[str, TankState] | None:
        """state_on with the state as rows in TANK_COUNTERS order (a new state, the caller's to keep)."""
        last = None
        start = None
        for index, (record_day, _, keyframe, _) in enumerate(self.records):
            if record_day > day:
                break
            last = index
            if keyframe:
                start = index
        if last is None or start is None:
            return None
        # From the nearest state already built in this chain (at or after its keyframe); a shallow
        # copy keeps it, since apply_parsed never changes a row in place.
        first, state = start, {}
        for index in range(last, start - 1, -1):
            built = self._states.get(index)
            if built is not None:
                first, state = index + 1, dict(built)
                break
        for index in range(first, last + 1):
            apply_parsed(state, self.parsed(index))
        self._states[last] = dict(state)
        return self.records[last][0], state
