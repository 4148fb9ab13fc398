"""What a list of tanks asks for: the tier, type and nation filters and the page (/tanks/stats,
/tanks/marks, /tanks/strength, /vehicles)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

Row = TypeVar("Row", bound=Mapping[str, Any])


@dataclass(frozen=True, slots=True)
class TankQuery:
    tier: int | None
    vehicle_type: str | None
    nation: str | None
    limit: int
    offset: int

    def matches(self, row: Mapping[str, Any]) -> bool:
        """Whether a row (with `tier`, `type` and `nation`) passes the filters."""
        return (
            (self.tier is None or row["tier"] == self.tier)
            and (self.vehicle_type is None or row["type"] == self.vehicle_type)
            and (self.nation is None or row["nation"] == self.nation)
        )

    def page(self, rows: Sequence[Row]) -> list[Row]:
        return list(rows[self.offset : self.offset + self.limit])

    def paging(self, total: int) -> dict[str, int]:
        """The page as an answer states it."""
        return {"total": total, "offset": self.offset, "limit": self.limit}
