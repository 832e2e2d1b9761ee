"""The dashboard's small charts, drawn on the server as SVG markup (no script, no library): a sparkline of a case's
score history for the cases page, and the history chart of one scorer with its annotations.

Every text in the markup (scorer names, notes, dates) is escaped; the SVG uses presentation attributes only (no
``style``), so the pages' Content-Security-Policy needs no exception for it.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

from markupsafe import Markup

__all__ = ["history_chart", "sparkline"]


def _finite(values: Sequence[float | None]) -> list[tuple[int, float]]:
    return [(i, float(v)) for i, v in enumerate(values) if v is not None and math.isfinite(v)]


def _scale(points: list[tuple[int, float]], count: int, width: float, height: float, pad: float) -> \
        tuple[list[tuple[float, float]], float, float]:
    lo = min(v for _, v in points)
    hi = max(v for _, v in points)
    if lo >= 0 and hi <= 1:  # scores on 0-1 keep their scale, so two cases' lines compare
        lo, hi = 0.0, 1.0
    span = hi - lo or 1.0
    step = (width - 2 * pad) / max(count - 1, 1)
    xy = [(pad + i * step, height - pad - (v - lo) / span * (height - 2 * pad)) for i, v in points]
    return xy, lo, hi


def sparkline(values: Sequence[float | None], label: str = "", width: int = 120, height: int = 28) -> Markup:
    """A line of ``values`` (oldest first) with the last point marked; an empty string when there is none."""
    points = _finite(values)
    if not points:
        return Markup("")
    xy, _, _ = _scale(points, len(values), width, height, 3)
    if len(xy) == 1:  # one point: a level line across, so it reads as a line
        xy = [(3.0, xy[0][1]), (width - 3.0, xy[0][1])]
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
    last_x, last_y = xy[-1]
    title = html.escape(f"{label}: " if label else "") + html.escape(
        ", ".join(f"{v:.3f}" for _, v in points[-8:]))
    return Markup(f'<svg class="spark" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">'
                  f"<title>{title}</title>"
                  f'<polyline points="{line}" fill="none" stroke="#0969da" stroke-width="1.5"/>'
                  f'<circle cx="{last_x:.1f}" cy="{last_y:.1f}" r="2.5" fill="#0969da"/></svg>')


def history_chart(scorer: str, points: Sequence[Any], width: int = 900, height: int = 260) -> Markup:
    """The case score by ``scorer`` over time (each recorded point in order), annotated points marked and titled
    with their note; the axis shows the range of the scores."""
    values = [p.score for p in points]
    finite = _finite(values)
    if not finite:
        return Markup(f'<p class="muted">No score by {html.escape(scorer)} yet.</p>')
    pad = 32
    xy, lo, hi = _scale(finite, len(values), width, height, pad)
    parts = [f'<svg class="chart" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
             f'aria-label="{html.escape(scorer)} over time">',
             f"<title>{html.escape(scorer)} over time</title>"]
    for frac in (0.0, 0.5, 1.0):
        y = height - pad - frac * (height - 2 * pad)
        value = lo + frac * (hi - lo)
        parts.append(f'<line x1="{pad}" y1="{y:.1f}" x2="{width - 8}" y2="{y:.1f}" stroke="#d0d7de" '
                     f'stroke-width="1"/>')
        parts.append(f'<text x="4" y="{y + 4:.1f}" font-size="11" fill="#57606a">{value:.2f}</text>')
    parts.append('<polyline points="' + " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
                 + '" fill="none" stroke="#0969da" stroke-width="2"/>')
    for (i, value), (x, y) in zip(finite, xy, strict=True):
        p = points[i]
        noted = bool(p.note) or p.event in ("rerun", "snapshot")
        tip = f"{p.at[:19].replace('T', ' ')} {p.event}: {value:.4f}" + (f" - {p.note}" if p.note else "") + (
            f" ({p.snapshot})" if p.snapshot else "")
        colour = "#bf8700" if p.note else "#0969da"
        parts.append(f'<circle class="point{" noted" if p.note else ""}" cx="{x:.1f}" cy="{y:.1f}" '
                     f'r="{5 if noted else 3}" fill="{colour}" data-value="{value!r}"><title>{html.escape(tip)}'
                     f"</title></circle>")
        if p.note:
            parts.append(f'<line x1="{x:.1f}" y1="{pad - 6}" x2="{x:.1f}" y2="{height - pad}" stroke="#bf8700" '
                         f'stroke-dasharray="3 3" stroke-width="1"/>')
            label = p.note if len(p.note) <= 28 else p.note[:27] + "\u2026"
            anchor = "end" if x > width * 0.75 else "start"
            parts.append(f'<text class="note" x="{x + (-4 if anchor == "end" else 4):.1f}" y="{pad - 10}" '
                         f'text-anchor="{anchor}">{html.escape(label)}</text>')
    ends = [(points[finite[0][0]], xy[0][0], "start")]
    if len(finite) > 1:
        ends.append((points[finite[-1][0]], xy[-1][0], "end"))
    for point, x, anchor in ends:  # the dates of the first and the last point under the axis
        when = point.at[:16].replace("T", " ")
        parts.append(f'<text x="{x:.1f}" y="{height - 10}" font-size="11" fill="#57606a" '
                     f'text-anchor="{anchor}">{html.escape(when)}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))
