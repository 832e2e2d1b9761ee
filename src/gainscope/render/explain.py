"""Explanations rendered as text: the run's positions, the ideal ranking's, and the final division
(seed 002's step-by-step view)."""

from __future__ import annotations

import math

from gainscope.metrics.base import GENERIC_COLUMNS, Explanation, Step
from gainscope.render.text import fmt_number, text_table

__all__ = ["render_explanation"]


def _grade(g: float | None) -> str:
    if g is None:
        return "-"
    return str(int(g)) if float(g).is_integer() else f"{g:g}"


def _rows(steps: tuple[Step, ...]) -> list[list[str]]:
    return [[str(s.rank), s.doc_id, _grade(s.grade), fmt_number(s.gain), fmt_number(s.discount),
             fmt_number(s.contribution), fmt_number(s.total)] for s in steps]


def render_explanation(e: Explanation, interface: str = "python") -> str:
    """Text for one explanation, the options its notes name spelled for ``interface`` (``"python"`` or
    ``"cli"``)."""
    header = ["rank", "doc_id", "grade", *e.columns, "total"]
    align = ["r", "l", "r", "r", "r", "r", "r"]
    out = [f"{e.metric} for query {e.query_id}", "", "run ranking:"]
    out.append(text_table(header, _rows(e.run), align=align) if e.run else "  (no documents)")
    if e.ideal:
        out += ["", "ideal ranking:", text_table(header, _rows(e.ideal), align=align)]
    value = "undefined" if math.isnan(e.value) else f"{e.value:.4f}"
    if e.columns == GENERIC_COLUMNS:  # no division to show: the definition, then the value the kernel computed
        out += ["", e.formula, f"value = {value}"]
    else:
        out += ["", f"{e.formula}: {fmt_number(e.numerator)} / {fmt_number(e.denominator)} = {value}"]
    out += [f"note: {n}" for n in e.spelled_notes(interface)]
    return "\n".join(out) + "\n"
