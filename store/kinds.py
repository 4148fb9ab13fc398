"""What each collection is worth: irreplaceable, a cache, or transient — declared once, next to it.

Each collection family declares `COLLECTIONS = {name: Declared(...)}` for the collections it
holds; Store.declarations() gathers them. Backups copy the irreplaceable ones (store/backup.py),
restore writes them back, docs/deploy.md section 8 lists them, and a test fails when a
collection has no declaration (docs/architecture.md, "Adding a collection").
"""

from __future__ import annotations

import dataclasses
import enum


class Kind(enum.Enum):
    IRREPLACEABLE = "irreplaceable"  # exists only in this database: backed up and restored
    CACHE = "cache"  # fetched again from the upstream or rebuilt from irreplaceable data
    TRANSIENT = "transient"  # coordination and counters of the last minutes; never backed up


@dataclasses.dataclass(frozen=True)
class Declared:
    kind: Kind
    what: str  # one line for operators: what is in it and, for a cache, how it comes back
    # How a backup reads it without holding the database (store/backup.py):
    #   "day:<field>"   one UTC day of a BSON-date field at a time (an indexed range per day)
    #   "each:<field>=<n>"  one equality on an indexed integer field 0..n-1 at a time
    #   "whole"         one cursor over a small collection (a few thousand documents at most)
    walk: str = "whole"


def irreplaceable(what: str, walk: str = "whole") -> Declared:
    return Declared(Kind.IRREPLACEABLE, what, walk)


def cache(what: str) -> Declared:
    return Declared(Kind.CACHE, what)


def transient(what: str) -> Declared:
    return Declared(Kind.TRANSIENT, what)
