"""UTC days as the service counts them, and a clock that stands still for time travel."""

from __future__ import annotations

import datetime as dt

DAY_SECONDS = 86400


def utc_day(ts: float) -> str:
    """The UTC day of a unix time, as YYYY-MM-DD."""
    return dt.datetime.fromtimestamp(ts, dt.UTC).date().isoformat()


def day_start(day: str) -> float:
    """The unix time at which UTC day `day` begins."""
    return dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC).timestamp()


def days_before(day: str, days: int) -> str:
    """The day `days` days before `day`."""
    return (dt.date.fromisoformat(day) - dt.timedelta(days=days)).isoformat()


class ManualClock:
    """A clock that stands still until set: time travel for tests, the demo seeder and the benchmark."""

    def __init__(self, now: float):
        self.now = float(now)

    def __call__(self) -> float:
        return self.now

    def set(self, now: float) -> None:
        self.now = float(now)
