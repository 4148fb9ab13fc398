"""Reads the API's CSV files with a real spreadsheet program (Gnumeric's ssconvert) and compares its cells with the CSV.

    apt-get install --no-install-recommends gnumeric     # once: ssconvert
    .venv/bin/python -m pytest -p no:cacheprovider tests/test_marks.py -k demo   # writes tests/artifacts/csv/
    .venv/bin/python -m scripts.check_csv_spreadsheet [DIR]

Each file in DIR (default tests/artifacts/csv, one per CSV endpoint, as the demo answered it) is
opened by the spreadsheet as a CSV and saved as an .xlsx workbook, and that workbook is opened
again and written back out as CSV. A cell passes when the spreadsheet read the same thing the
file says: the same text, the same number (to 1e-9, relative), the same day or truth value (typed
by the spreadsheet), and a file of formula-like texts as the API writes them (an apostrophe before
`= + - @`) read as those texts, never computed. Prints a line per file and exits 1
on any difference. Not part of the test command: the spreadsheet is not installed there.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import io
import math
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from server.contract.catalogue import CsvTable  # noqa: E402
from server.contract.csv_answers import render  # noqa: E402


def rows_of(path: pathlib.Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))


def number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def same(original: str, read: str) -> bool:
    """Whether the spreadsheet read the cell as the file says: the text itself (a formula-like text
    without the apostrophe the API puts before it, which marks it a text), the same number,
    the same day (it types an ISO date as a date and writes it back in its own format), the same
    truth value (`true` read as the boolean TRUE)."""
    if original == read:
        return True
    if original[:1] == "'" and original[1:2] in ("=", "+", "-", "@"):
        return read == original[1:]  # the apostrophe read as the spreadsheet's mark of a text: not computed
    a, b = number(original), number(read)
    if a is not None and b is not None:
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if original in ("true", "false"):
        return read == original.upper()
    day = day_of(original)
    return day is not None and day == day_of(read)


def day_of(text: str) -> dt.date | None:
    for form in ("%Y-%m-%d", "%Y/%m/%d"):
        try:
            return dt.datetime.strptime(text, form).date()
        except ValueError:
            continue
    return None


# Texts a spreadsheet would take for a formula, as the API writes them (an apostrophe first, OWASP's
# CSV injection advice): each must be read as the text itself, never computed.
FORMULA_LIKE = ["=1+2", "+3", "-4+1", "@SUM(1,2)", '=HYPERLINK("http://x")']


def formula_file(work: pathlib.Path) -> pathlib.Path:
    table = CsvTable(rows="clans", file="formulas", columns=("tag", "name"))
    rows = [{"tag": text, "name": f"clan {text}"} for text in FORMULA_LIKE]
    path = work / "formula_like.csv"
    path.write_text(render(table, {"clans": rows}), encoding="utf-8")
    return path


def through_spreadsheet(path: pathlib.Path, work: pathlib.Path) -> list[list[str]]:
    """The file as the spreadsheet read it: CSV -> .xlsx -> CSV, each step by ssconvert."""
    workbook = work / f"{path.stem}.xlsx"
    back = work / f"{path.stem}.back.csv"
    for source, target in ((path, workbook), (workbook, back)):
        subprocess.run(
            ["ssconvert", "--import-encoding=UTF-8", str(source), str(target)],
            check=True,
            capture_output=True,
            timeout=120,
        )
    return rows_of(back)


def check(path: pathlib.Path, work: pathlib.Path) -> list[str]:
    original = rows_of(path)
    read = through_spreadsheet(path, work)
    problems = []
    if len(read) != len(original):
        problems.append(f"{len(original)} rows in the file, {len(read)} read")
    for r, (want, got) in enumerate(zip(original, read, strict=False)):
        got = got + [""] * (len(want) - len(got))
        for c, (cell, cell_read) in enumerate(zip(want, got, strict=False)):
            if not same(cell, cell_read):
                problems.append(f"row {r + 1} column {original[0][c]!r}: file {cell!r}, spreadsheet {cell_read!r}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("directory", nargs="?", default=str(ROOT / "tests" / "artifacts" / "csv"))
    args = parser.parse_args()
    if shutil.which("ssconvert") is None:
        print("ssconvert not found: apt-get install --no-install-recommends gnumeric", file=sys.stderr)
        return 2
    files = sorted(pathlib.Path(args.directory).glob("*.csv"))
    if not files:
        print(f"no CSV files in {args.directory}: run the marks demo test first", file=sys.stderr)
        return 2
    failed = 0
    with tempfile.TemporaryDirectory(prefix="csv-spreadsheet-") as work:
        files.append(formula_file(pathlib.Path(work)))
        for path in files:
            problems = check(path, pathlib.Path(work))
            cells = sum(len(row) for row in rows_of(path))
            print(f"{path.name}: {cells:,} cells, {'same' if not problems else f'{len(problems)} differ'}")
            for problem in problems[:10]:
                print(f"  {problem}")
            failed += bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
