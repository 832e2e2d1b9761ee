"""Plain-text building blocks: fixed-width tables (deterministic, no terminal detection, so output can be
compared with golden text), number formatting, and CSV text guarded against formula injection."""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterable, Sequence
from typing import TextIO

__all__ = ["CsvWriter", "csv_cell", "csv_text", "fmt_number", "markdown_table", "text_table"]


def fmt_number(x: float | None, digits: int = 4) -> str:
    """A value for display: 4 decimals, integers for whole counts, ``-`` for undefined; from 1e15 on (where
    the decimals are below float64's precision) in exponent form, ``1.2346e+301``."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if isinstance(x, float) and math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if abs(x) >= 1e15:
        return f"{x:.{digits}e}"
    return f"{x:.{digits}f}"


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]], *, align: Sequence[str] | None = None) -> str:
    """A boxed table with a header rule; ``align`` is ``"l"`` or ``"r"`` per column (text left, numbers
    right by default)."""
    cols = len(header)
    if align is None:
        align = ["l"] + ["r"] * (cols - 1)
    widths = [len(h) for h in header]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def line(cells: Sequence[str]) -> str:
        parts = [c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(cells, widths, align, strict=True)]
        return "│ " + " │ ".join(parts) + " │"

    top = "┌─" + "─┬─".join("─" * w for w in widths) + "─┐"
    mid = "├─" + "─┼─".join("─" * w for w in widths) + "─┤"
    bottom = "└─" + "─┴─".join("─" * w for w in widths) + "─┘"
    out = [top, line(header), mid, *(line(r) for r in rows), bottom]
    return "\n".join(out)


def _is_number(cell: str) -> bool:
    try:
        float(cell.strip().lstrip("<").replace("%", ""))
    except ValueError:
        return cell.strip() in ("", "-", "inf", "-inf")
    return True


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A pipe table (every markdown table gainscope prints): columns of numbers right-aligned, text left-aligned
    (the first column always left); ``|`` in a cell is escaped."""
    def esc(s: str) -> str:
        return s.replace("|", "\\|")

    numeric = [i > 0 and all(_is_number(r[i]) for r in rows) for i in range(len(header))]
    out = ["| " + " | ".join(esc(h) for h in header) + " |",
           "|" + "|".join("---:" if n else ":---" for n in numeric) + "|"]
    out += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


#: first characters that make a spreadsheet read a cell as a formula (OWASP, "CSV Injection")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf|nan")


def csv_cell(cell: object) -> object:
    """A cell as gainscope's CSV output writes it. Text starting with ``=``, ``+``, ``-``, ``@``, a tab or a
    carriage return, which a spreadsheet would run as a formula (``=HYPERLINK(...)`` in a query id), gets a
    leading single quote, as OWASP's CSV-injection rule says; a number such as ``-0.5`` stays a number,
    and cells that are not text (ints, floats) are left as they are. Strip the quote to get the id back."""
    if isinstance(cell, str) and cell[:1] in _FORMULA_START and not _NUMBER.fullmatch(cell):
        return "'" + cell
    return cell


class CsvWriter:
    """A ``csv.writer`` (lines ending in ``\n``) whose every cell goes through :func:`csv_cell`."""

    def __init__(self, out: TextIO) -> None:
        import csv  # here: the table and trec_eval formats, the usual ones, do without it

        self._writer = csv.writer(out, lineterminator="\n")

    def writerow(self, row: Iterable[object]) -> None:
        self._writer.writerow([csv_cell(c) for c in row])

    def writerows(self, rows: Iterable[Iterable[object]]) -> None:
        for row in rows:
            self.writerow(row)


def csv_text(rows: Iterable[Iterable[object]]) -> str:
    """CSV text of ``rows`` (the header first), written by a :class:`CsvWriter`."""
    buf = io.StringIO()
    CsvWriter(buf).writerows(rows)
    return buf.getvalue()
