"""What the unjudged documents could change (:mod:`gainscope.bounds`), as a table, markdown, CSV or JSON: per
metric and run today's value, the value with the unjudged documents relevant, the judged share and whether the
two are bounds; for a comparison, the range of each difference and whether its sign could change."""

from __future__ import annotations

import io
import json
import math
from collections.abc import Sequence
from typing import Any

from gainscope.bounds import Bounds, DifferenceBound
from gainscope.render.text import CsvWriter, fmt_number, markdown_table, text_table

__all__ = ["BOUNDS_FORMATS", "COMPARE_BOUNDS_FORMATS", "render_bounds", "render_comparison_with_bounds",
           "render_difference_bounds", "render_results_with_bounds"]

#: the formats that have a bounds rendering
BOUNDS_FORMATS = ("table", "markdown", "csv", "json")
#: the comparison formats a bounds section can be added to
COMPARE_BOUNDS_FORMATS = ("table", "markdown", "json")


def _title(top: float) -> str:
    return (f"unjudged documents within each metric's depth k: not relevant (today) or relevant at grade {top:g} "
            "(completed); judged@k: the judged share of the first k (of the whole ranking without a cutoff)")


def _claims_legend(claims: dict[str, tuple[bool, str]]) -> tuple[dict[str, str], list[str]]:
    """A mark per metric ('yes', or 'no (n)') and the numbered reasons of the metrics that are not bounded."""
    marks: dict[str, str] = {}
    notes: list[str] = []
    reasons: dict[str, int] = {}
    for metric, (bounded, why) in claims.items():
        if bounded:
            marks[metric] = "yes"
            continue
        if why not in reasons:
            reasons[why] = len(reasons) + 1
            notes.append(f"({reasons[why]}) {why}")
        marks[metric] = f"no ({reasons[why]})"
    yes = "bound yes: no labelling of the unjudged retrieved documents gives a value outside the two"
    legend = [yes + "; bound no: the two are two completions, and the value can lie outside them:"] if notes else [yes]
    return marks, legend + [f"  {n}" for n in notes]


def _rows(bounds: Sequence[Bounds], per_query: bool, marks: dict[str, str]) -> tuple[list[str], list[list[str]]]:
    if per_query:
        header = ["run", "query", "metric", "today", "completed", "judged@k"]
        rows = [[b.run_name, q, name, fmt_number(float(b.today[i, j])), fmt_number(float(b.completed[i, j])),
                 fmt_number(float(b.judged[i, j]))]
                for b in bounds for i, q in enumerate(b.query_ids) for j, name in enumerate(b.metric_names)]
        return header, rows
    header = ["metric", "run", "today", "completed", "judged@k", "bound"]
    rows = []
    for j, name in enumerate(bounds[0].metric_names):
        for b in bounds:
            agg = b.aggregate(j)
            rows.append([name, b.run_name, fmt_number(agg["today"]), fmt_number(agg["completed"]),
                         fmt_number(agg["judged"]), marks[name]])
    return header, rows


def _clean(x: float) -> float | None:
    return None if isinstance(x, float) and math.isnan(x) else x


def _payload(b: Bounds, per_query: bool) -> dict[str, Any]:
    data = b.to_dict()
    if not per_query:
        for entry in data["metrics"].values():
            entry.pop("per_query")
    return data


def render_bounds(bounds: Sequence[Bounds], fmt: str, *, per_query: bool = False) -> str:
    """The bounds of one or more runs in ``fmt`` (one of :data:`BOUNDS_FORMATS`); aggregates, or with
    ``per_query`` every query's values too."""
    if not bounds:
        return ""
    if fmt == "json":
        payload = [_payload(b, per_query) for b in bounds]
        return json.dumps(payload[0] if len(payload) == 1 else payload, indent=2) + "\n"
    claims = {str(m): (c.bounded, c.why) for m, c in zip(bounds[0].metrics, bounds[0].claims, strict=True)}
    marks, legend = _claims_legend(claims)
    if fmt == "csv":
        buffer = io.StringIO()
        writer = CsvWriter(buffer)
        writer.writerow(["run", "query_id", "metric", "today", "completed", "low", "high", "judged", "bounded"])
        for b in bounds:
            for j, name in enumerate(b.metric_names):
                agg = b.aggregate(j)
                writer.writerow([b.run_name, "all", name, agg["today"], agg["completed"], agg["low"], agg["high"],
                                 agg["judged"], b.claims[j].bounded])
                if per_query:
                    for i, q in enumerate(b.query_ids):
                        writer.writerow([b.run_name, q, name, b.today[i, j], b.completed[i, j], b.low[i, j],
                                         b.high[i, j], b.judged[i, j], b.claims[j].bounded])
        return buffer.getvalue()
    header, rows = _rows(bounds, False, marks)
    blocks = [_title(bounds[0].top_grade), markdown_table(header, rows) if fmt == "markdown" else text_table(
        header, rows, align=["l", "l", "r", "r", "r", "l"])]
    if per_query:
        header, rows = _rows(bounds, True, marks)
        blocks.append(markdown_table(header, rows) if fmt == "markdown" else text_table(header, rows))
    blocks.append("\n".join(legend))
    return "\n\n".join(blocks) + "\n"


def render_difference_bounds(rows: Sequence[DifferenceBound], fmt: str) -> str:
    """Each comparison's difference today, its range over the completions and whether its sign could change, in
    ``fmt`` (one of :data:`BOUNDS_FORMATS`)."""
    if not rows:
        return ""
    if fmt == "json":
        return json.dumps([{**{k: _clean(v) for k, v in vars(r).items()}, "could_change_sign": r.could_change_sign}
                           for r in rows], indent=2) + "\n"
    if fmt == "csv":
        buffer = io.StringIO()
        writer = CsvWriter(buffer)
        writer.writerow(["metric", "run", "baseline", "queries", "delta", "low", "high", "could_change_sign",
                         "bounded", "judged_run", "judged_baseline"])
        for r in rows:
            writer.writerow([r.metric, r.run, r.baseline, r.queries, r.delta, r.low, r.high, r.could_change_sign,
                             r.bounded, r.judged_run, r.judged_baseline])
        return buffer.getvalue()
    marks, legend = _claims_legend({r.metric: (r.bounded, r.why) for r in rows})
    header = ["metric", "run", "delta", "range", "sign", "judged@k (run / baseline)", "bound"]
    table = [[r.metric, f"{r.run} vs {r.baseline}", _signed(r.delta), f"[{_signed(r.low)}, {_signed(r.high)}]",
              "could change" if r.could_change_sign else "holds", f"{fmt_number(r.judged_run)} / "
              f"{fmt_number(r.judged_baseline)}", marks[r.metric]] for r in rows]
    title = ("what the unjudged documents could change: each difference with every run's unjudged documents within "
             "the metric's depth as not relevant or as relevant at the top grade, each run on its own")
    body = markdown_table(header, table) if fmt == "markdown" else text_table(
        header, table, align=["l", "l", "r", "l", "l", "r", "l"])
    return "\n\n".join([title, body, "\n".join(legend)]) + "\n"


def _signed(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:+.4f}"


def render_results_with_bounds(bounds: Sequence[Bounds], fmt: str, *, per_query: bool = False) -> str:
    """``evaluate --bounds``: the results (today's values) then the bounds section; JSON gives each run's object a
    ``bounds`` key; CSV is the bounds table alone (its ``today`` column holds the results)."""
    from gainscope.render.results import render_results

    results = [b.results for b in bounds]
    if fmt == "csv":
        return render_bounds(bounds, fmt, per_query=per_query)
    if fmt == "json":
        payload = json.loads(render_results(results, "json", per_query=per_query))
        runs = payload if isinstance(payload, list) else [payload]
        for run, b in zip(runs, bounds, strict=True):
            run["bounds"] = _payload(b, per_query)["metrics"]
        return json.dumps(payload, indent=2) + "\n"
    return render_results(results, fmt, per_query=per_query) + "\n" + render_bounds(bounds, fmt, per_query=per_query)


def render_comparison_with_bounds(comparison: Any, rows: Sequence[DifferenceBound], fmt: str) -> str:
    """``compare --bounds``: the comparison then what the unjudged documents could change; JSON adds a ``bounds``
    list to the comparison's object."""
    from gainscope.render.compare import render_comparison

    if fmt == "json":
        payload = json.loads(render_comparison(comparison, "json"))
        payload["bounds"] = json.loads(render_difference_bounds(rows, "json") or "[]")
        return json.dumps(payload, indent=2) + "\n"
    return render_comparison(comparison, fmt) + "\n" + render_difference_bounds(rows, fmt)
