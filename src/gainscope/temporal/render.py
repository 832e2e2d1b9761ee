"""A temporal :class:`~gainscope.temporal.batch.Evaluation` as a text table, markdown, JSON or CSV.

The summary is :mod:`gainscope.render.compare`'s table (each system's mean and bootstrap interval; with several
systems, the paired comparison with the baseline), followed by the temporal conventions (mode, undefined values,
extraction and failure notes). ``per_query`` adds one table per system (query x metric, ``-`` = no value) and, in
JSON and CSV, the per-query values.
"""

from __future__ import annotations

import csv
import io
import json
import math

from gainscope.render.compare import render_comparison
from gainscope.render.results import _markdown
from gainscope.render.text import fmt_number, text_table
from gainscope.temporal.batch import Evaluation

__all__ = ["TEMPORAL_FORMATS", "render_evaluation"]

TEMPORAL_FORMATS = ("table", "markdown", "json", "csv")


def _per_query_rows(ev: Evaluation, system: str) -> list[list[str]]:
    rows = [[q, *[fmt_number(v) for v in ev.values[system][i]]] for i, q in enumerate(ev.query_ids[system])]
    means = [r.mean for m in ev.metrics for r in ev.comparison.rows if r.metric == m and r.run == system]
    return [*rows, ["mean", *[fmt_number(v) for v in means]]]


def _conventions(ev: Evaluation) -> list[str]:
    pairs = ev.conventions()
    width = max(len(k) for k, _ in pairs)
    return ["temporal:"] + [f"  {k.ljust(width)}  {v}" for k, v in pairs]


def _none(x: float) -> float | None:
    return None if math.isnan(x) else x


def render_evaluation(ev: Evaluation, fmt: str, *, per_query: bool = False) -> str:
    """Render ``ev`` in ``fmt``, one of :data:`TEMPORAL_FORMATS`."""
    if fmt in ("table", "markdown"):
        md = fmt == "markdown"
        blocks = [render_comparison(ev.comparison, fmt).rstrip("\n")]
        if per_query:
            for system in ev.systems:
                header = ["query", *ev.metrics]
                table = _markdown(header, _per_query_rows(ev, system)) if md else \
                    text_table(header, _per_query_rows(ev, system))
                blocks.append((f"### {system}" if md else f"system {system}") + "\n" + table)
        conv = _conventions(ev)
        blocks.append("**temporal**\n\n" + "\n".join(f"- {c.strip()}" for c in conv[1:]) if md else "\n".join(conv))
        return "\n\n".join(blocks) + "\n"
    if fmt == "json":
        payload = {"mode": ev.mode, "comparison": ev.comparison.to_dict(),
                   "undefined": {s: [{"query_id": q, "metric": m, "reason": why} for (q, m), why in r.items()]
                                 for s, r in ev.reasons.items()},
                   "failures": {s: [{"query_id": q, "metric": m, "documents": [{"doc_id": d, "reason": why}
                                                                               for d, why in fs]}
                                    for (q, m), fs in f.items()] for s, f in ev.failures.items()},
                   "conventions": dict((k, v) for k, v in ev.conventions() if k != "note"),
                   "notes": [v for k, v in ev.conventions() if k == "note"]}
        if per_query:
            payload["per_query"] = {s: {q: {m: _none(float(ev.values[s][i, j])) for j, m in enumerate(ev.metrics)}
                                        for i, q in enumerate(ev.query_ids[s])} for s in ev.systems}
        return json.dumps(payload, indent=2) + "\n"
    if fmt == "csv":
        if not per_query:
            return render_comparison(ev.comparison, "csv")
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["run", "query_id", "metric", "value"])
        for s in ev.systems:
            for i, q in enumerate(ev.query_ids[s]):
                for j, m in enumerate(ev.metrics):
                    v = float(ev.values[s][i, j])
                    w.writerow([s, q, m, "" if math.isnan(v) else repr(v)])
            for m in ev.metrics:
                mean = ev.comparison.row(m, s).mean
                w.writerow([s, "all", m, "" if math.isnan(mean) else repr(mean)])
        return buf.getvalue()
    raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(TEMPORAL_FORMATS)}")
