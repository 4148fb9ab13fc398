"""A session: the battles between the account's state at a moment and its newest state.

Pure: which stored state a session starts from and ends on, and what `since` means. The states are
the tracker's daily records (one per measured day; the exact time of the measurement is not kept,
so a record counts as taken at the end of its day, the latest it can be) and the captures of the
watcher (each with its exact time and the account's last_battle_time then). docs/data.md,
"Sessions", states the rules.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence

from server.contract.catalogue.figures import NOT_AS_OLD, NOT_MEASURED, PLAYED_BEFORE_MEASURED
from server.contract.catalogue.figures import SESSION_FIGURES as SESSION_FIGURES  # the contract's, re-exported
from server.domain.days import DAY_SECONDS, day_start


@dataclasses.dataclass(frozen=True)
class Stored:
    """A stored state of an account: when it was taken, where it is kept, and the state itself."""

    at: float  # unix time of the measurement (a daily record: the end of its day)
    source: str  # "daily" or "watch"
    day: str | None  # the daily record's day
    state: dict[int, list[int]]
    assist: Sequence[int] | None = None
    lbt: float | None = None  # the account's last_battle_time when measured (unknown for a daily record)
    checked: float | None = None  # the latest time the account was seen not to have played since (a capture)
    slot: str | None = None  # a capture: which of the watched document's ("first", "latest", "pin")

    @property
    def seen(self) -> float:
        """The latest moment this state is known to have been the account's state."""
        return max(self.at, self.checked or self.at)


# Why a session's start is not the account's state at `since` (`from_reason`; None when it is):
# NOT_AS_OLD, PLAYED_BEFORE_MEASURED, NOT_MEASURED, the contract's (server/contract/catalogue/figures.py).


@dataclasses.dataclass(frozen=True)
class Span:
    """A session's two ends and whether its start is the account's state at `since`."""

    start: Stored
    end: Stored
    reason: str | None  # None: `start` is the state at since; else why it is an older (or later) one
    # Not the state at since, but a measurement now may still find it: no state shows a battle after
    # since (a measurement whose last battle is at or before since is the state at since).
    measurable: bool = False

    @property
    def exact(self) -> bool:
        return self.reason is None


def daily(day: str, state: dict[int, list[int]], assist: Sequence[int] | None) -> Stored:
    """A daily record as a stored state: taken at the latest at the end of its day."""
    return Stored(day_start(day) + DAY_SECONDS, "daily", day, state, assist)


def since_moment(text: str, now: float, oldest: float) -> float | str:
    """`since` as a unix time, or why it is refused: `today` is the start of the current UTC day."""
    if text == "today":
        return float(int(now // DAY_SECONDS) * DAY_SECONDS)
    moment = float(int(text))
    if moment > now:
        return "since is in the future"
    if moment < oldest:
        return "since is older than the records kept"
    return moment


def battles(state: dict[int, list[int]]) -> int:
    return sum(row[0] for row in state.values())


def at_since(state: Stored, since: float) -> bool:
    """Whether `state` is the account's state at `since`: the account had last played at or before
    `since`, and the state was still the account's at or after it (measured or seen unchanged then)."""
    return state.lbt is not None and state.lbt <= since and state.seen >= since


def session_span(states: Iterable[Stored], since: float) -> Span | None:
    """The session since `since` (docs/data.md, "Sessions"). Its start is the account's state at
    `since`: the newest state taken at or before it when the account has not played between them
    (a state at since has as many battles), else the first state taken after it whose last battle is
    still before it. Without such a state, the newest state at or before `since` (else the oldest:
    none is that old), with the reason. The end is the newest state, the one with the most battles
    (a career only grows; a daily record's time is a bound, not the measurement's); of two alike, a
    capture (its time is exact). None without a state."""
    ordered = sorted(states, key=lambda s: (s.at, s.source == "watch"))
    if not ordered:
        return None
    before = [s for s in ordered if s.at <= since]
    older = before[-1] if before else None
    # Of states alike, one kept for the sessions starting from it first (it outlives `latest`).
    exact = sorted((s for s in ordered if at_since(s, since)), key=lambda s: (s.at, s.slot != "pin"))
    reason: str | None = None
    played = any(s.lbt is not None and s.lbt > since for s in ordered)
    if exact:
        start = exact[0]
        if older is not None and battles(older.state) == battles(start.state):
            start = older  # not played between it and since: the older measurement is that state
    elif older is not None:
        start = older
        reason = PLAYED_BEFORE_MEASURED if played else NOT_MEASURED
    else:
        start, reason = ordered[0], NOT_AS_OLD
    end = max(ordered, key=lambda s: (battles(s.state), s.source == "watch", s.at))
    if battles(end.state) <= battles(start.state):
        end = start if start.at >= end.at else end  # nothing played: the session ends where it starts
    return Span(start, end, reason, measurable=reason is not None and not played)


def next_round(refreshed_at: float, every: float, tick: float) -> float:
    """When a watched account refreshed at `refreshed_at` is due again: the first round (a multiple
    of `every` on the clock) at least `every - tick` later. Accounts watched at any moment fall
    into the same rounds, so each round asks account/info once per batch of them, not once per
    tick that found a few due; a round's tick runs within `tick` of its start, so an account is
    measured once a round, its refreshes `every` apart give or take a tick."""
    earliest = refreshed_at + every - tick
    return math.ceil(earliest / every) * every
