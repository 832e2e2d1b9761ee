"""A Quepid case's scores (:class:`~gainscope.cases.scoring.CaseScore`), the comparison of two cases and of
snapshots as text tables or JSON (the command line prints these; the library never prints)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from gainscope.render.text import fmt_number, text_table

if TYPE_CHECKING:  # the adapter's types only: renderers import no adapter
    from gainscope.cases.compare import CaseComparison
    from gainscope.cases.scoring import CaseScore

__all__ = ["render_case_score", "render_comparison", "render_snapshots"]


def _value(x: float | None, status: str) -> str:
    if x is None:
        return {"zsr": "zsr", "unrated": "--"}.get(status, "-")
    return fmt_number(x)


def _short(items: tuple[str, ...], limit: int = 4) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" +{len(items) - limit}" if len(items) > limit else "")


def render_case_score(result: CaseScore, fmt: str = "table", *, logs: bool = False) -> str:
    """``table``: per-query scores, the case score and the conventions; ``json``: the same as data (console
    output of JavaScript scorers only with ``logs``)."""
    if fmt == "json":
        data = result.to_dict()
        if not logs:
            for q in data["queries"]:
                q.pop("logs", None)
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    rows = [[q.query, _value(q.value, q.status), q.status, q.reason or ""] for q in result.queries]
    lines = []
    if result.case_name:
        lines.append(f"case: {result.case_name}")
    lines.append(text_table(["query", "score", "status", "note"], rows, align=["l", "r", "l", "l"]))
    lines.append(f"case score: {fmt_number(result.score)}")
    lines.append("conventions:")
    lines.extend(f"  {c}" for c in result.conventions)
    if logs:
        for q in result.queries:
            if q.logs:
                lines.append(f"console output of {q.query!r}:")
                lines.extend(f"  {line}" for line in q.logs)
    return "\n".join(lines) + "\n"


def render_comparison(cmp: CaseComparison, fmt: str = "table") -> str:
    """Per-query scores of both cases, the change, and the documents that entered or left the top k."""
    if fmt == "json":
        return json.dumps(cmp.to_dict(), indent=2, ensure_ascii=False) + "\n"
    rows = []
    for c in cmp.changes:
        delta = "" if c.delta is None else f"{c.delta:+.4f}"
        rows.append([c.query, _value(c.a.value, c.a.status), _value(c.b.value, c.b.status), delta, str(c.k),
                     _short(c.entered), _short(c.left)])
    lines = [text_table(["query", "A", "B", "change", "k", "entered top k", "left top k"], rows,
                        align=["l", "r", "r", "r", "r", "l", "l"])]
    delta = "" if cmp.delta is None else f" (change {cmp.delta:+.4f})"
    lines.append(f"case score: A {fmt_number(cmp.a.score)}, B {fmt_number(cmp.b.score)}{delta}")
    if cmp.only_a:
        lines.append(f"only in A: {', '.join(cmp.only_a)}")
    if cmp.only_b:
        lines.append(f"only in B: {', '.join(cmp.only_b)}")
    lines.append("conventions (A):")
    lines.extend(f"  {c}" for c in cmp.a.conventions)
    if cmp.b.conventions != cmp.a.conventions:
        lines.append("conventions (B):")
        lines.extend(f"  {c}" for c in cmp.b.conventions)
    return "\n".join(lines) + "\n"


def render_snapshots(cmp: Any, fmt: str = "table") -> str:
    """Any number of snapshots (:class:`~gainscope.cases.snapshots.SnapshotComparison`): per query each snapshot's
    score and its change from the baseline, the documents that entered (+) or left (-) the baseline's top k, the
    case scores, the paired tests against the baseline and the conventions."""
    from gainscope.render.compare import render_comparison as render_tests

    if fmt == "json":
        return json.dumps(cmp.to_dict(), indent=2, ensure_ascii=False, default=str) + "\n"
    names = cmp.names
    header = ["query", names[0]]
    for name in names[1:]:
        header += [name, f"{name}-{names[0]}"]
    header += ["k", f"top k against {names[0]}"]
    rows = []
    for r in cmp.rows:
        cells = [r.query, "" if r.scores[0] is None else _value(r.scores[0].value, r.scores[0].status)]
        moved = []
        for i, name in enumerate(names[1:], start=1):
            score = r.scores[i]
            cells += ["" if score is None else _value(score.value, score.status),
                      "" if r.deltas[i] is None else f"{r.deltas[i]:+.4f}"]
            changes = [f"+{d}" for d in r.entered[i]] + [f"-{d}" for d in r.left[i]]
            if changes:
                moved.append(f"{name}: {_short(tuple(changes))}")
        rows.append([*cells, str(r.k), "; ".join(moved)])
    align = ["l", "r"] + ["r"] * (2 * (len(names) - 1)) + ["r", "l"]
    lines = ["snapshots: " + ", ".join(f"{n} = {s}" + (" (baseline)" if i == 0 else "")
                                       for i, (n, s) in enumerate(zip(names, cmp.sources, strict=True)))]
    lines.append(text_table(header, rows, align=align))
    lines.append("case score: " + ", ".join(f"{n} {fmt_number(c.score)}" for n, c in zip(names, cmp.scores,
                                                                                          strict=True)))
    lines.append("")
    lines.append(f"significance of the per-query differences with {names[0]}:")
    lines.append(render_tests(cmp.comparison, "table").rstrip("\n"))
    lines.append("conventions (case scores):")
    lines.extend(f"  {c}" for c in cmp.scores[0].conventions)
    return "\n".join(lines) + "\n"
