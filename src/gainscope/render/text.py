"""Plain-text building blocks: fixed-width tables (deterministic, no terminal detection, so output can be
compared with golden text) and number formatting."""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["fmt_number", "text_table"]


def fmt_number(x: float | None, digits: int = 4) -> str:
    """A value for display: 4 decimals, integers for whole counts, ``-`` for undefined."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if isinstance(x, float) and math.isinf(x):
        return "inf" if x > 0 else "-inf"
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
