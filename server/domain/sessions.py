"""A session: the battles between the newest state at or before a moment and the newest state.

Pure: which stored state a session starts from and ends on, and what `since` means. The states are
the tracker's daily records (one per measured day; the exact time of the measurement is not kept,
so a record counts as taken at the end of its day, the latest it can be) and the captures of the
watcher (each with its exact time). docs/data.md, "Sessions", states the rules.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence

from server.domain.days import DAY_SECONDS, day_start
from server.domain.recents import SUMMARY_FIGURES

# The session's figures: the period figures of /tanks, and the per-battle frags, spotting, XP and
# survival of /history's periods.
SESSION_FIGURES = (*SUMMARY_FIGURES, "avg_frags", "avg_spotted", "avg_xp", "survival_rate")


@dataclasses.dataclass(frozen=True)
class Stored:
    """A stored state of an account: when it was taken, where it is kept, and the state itself."""

    at: float  # unix time of the measurement (a daily record: the end of its day)
    source: str  # "daily" or "watch"
    day: str | None  # the daily record's day
    state: dict[int, list[int]]
    assist: Sequence[int] | None = None


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


def session_ends(states: Iterable[Stored], since: float) -> tuple[Stored, Stored] | None:
    """(start, end) of a session since `since`: the newest state taken at or before it (else the
    oldest after it: no older state exists), and the newest state, the one with the most battles
    (a career only grows; a daily record's time is a bound, not the measurement's). Of two states
    alike, a capture is preferred (its time is exact). None without a state."""
    ordered = sorted(states, key=lambda s: (s.at, s.source == "watch"))
    if not ordered:
        return None
    before = [s for s in ordered if s.at <= since]
    start = before[-1] if before else ordered[0]
    end = max(ordered, key=lambda s: (battles(s.state), s.source == "watch", s.at))
    if battles(end.state) <= battles(start.state):
        end = start if start.at >= end.at else end  # nothing played: the session ends where it starts
    return start, end


def next_round(refreshed_at: float, every: float, tick: float) -> float:
    """When a watched account refreshed at `refreshed_at` is due again: the first round (a multiple
    of `every` on the clock) at least `every - tick` later. Accounts watched at any moment fall
    into the same rounds, so each round asks account/info once per batch of them, not once per
    tick that found a few due; a round's tick runs within `tick` of its start, so an account is
    measured once a round, its refreshes `every` apart give or take a tick."""
    earliest = refreshed_at + every - tick
    return math.ceil(earliest / every) * every
