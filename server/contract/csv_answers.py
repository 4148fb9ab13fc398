"""An answer's table as RFC 4180 CSV (`?format=csv`): the rows and columns its catalogue entry declares."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping
from typing import Any

from server.contract.catalogue.model import CsvTable

CSV_MEDIA_TYPE = "text/csv; charset=utf-8"
_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")


# A spreadsheet reads a cell starting with one of these as a formula: text from players (a clan's
# name or tag) starting so is written after an apostrophe, which spreadsheets show as text (OWASP,
# "CSV Injection"). Numbers are never text, so a negative number is written as it is.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def cell(value: Any) -> str:
    """A value as a CSV cell: null is empty, booleans are true/false (as in the JSON), numbers as
    JSON writes them, text as it is except after an apostrophe where it would start a formula."""
    if value is None:
        return ""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return str(value)


def pick(item: Mapping[str, Any], column: str) -> Any:
    """The value at a dotted path of an item (`career.wn8`); None where a step is null or absent."""
    value: Any = item
    for key in column.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def render(table: CsvTable, data: Mapping[str, Any]) -> str:
    """The header row and one row per item of data[table.rows], CRLF line ends (RFC 4180), quoted
    where a cell holds a comma, a quote or a line break."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(table.columns)
    for item in data.get(table.rows) or ():
        writer.writerow([cell(pick(item, column)) for column in table.columns])
    return out.getvalue()


def file_name(table: CsvTable, data: Mapping[str, Any]) -> str:
    """The download's name: the table's template filled from the answer's top-level fields, reduced
    to letters, digits and . _ + - (a field the answer lacks reads "all")."""

    class Fields(dict):
        def __missing__(self, key: str) -> str:
            return "all"

    name = table.file.format_map(Fields({k: "all" if v is None else v for k, v in data.items()}))
    return _UNSAFE.sub("_", name) + ".csv"
