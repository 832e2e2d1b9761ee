"""The metric catalogue for ``gainscope metrics`` (a list) and ``gainscope metrics NAME`` (a description
with parameters, defaults, constraints, aggregation, trec_eval name and the docstring's formula and
reference)."""

from __future__ import annotations

import inspect
from dataclasses import fields

from gainscope.metrics.base import Metric, format_value
from gainscope.metrics.registry import all_metric_classes
from gainscope.render.text import text_table

__all__ = ["describe_metric", "list_metrics"]


def list_metrics() -> str:
    """One row per registered metric: name, parameters, what it measures."""
    rows = []
    for cls in all_metric_classes():
        params = ", ".join(("@" if f.metadata.get("at") else "") + f.name for f in fields(cls))
        rows.append([cls.name, params, cls.summary])
    return (text_table(["metric", "parameters", "what it measures"], rows, align=["l", "l", "l"])
            + "\n\nRun `gainscope metrics NAME` for the formula, conventions and reference of one metric.\n"
            "Names are written like nDCG@10, P(rel=2)@5, nDCG(gain=exponential)@10; trec_eval names "
            "(ndcg_cut.10, P.5, map, official, all_trec) are accepted too.\n")


def describe_metric(metric: Metric) -> str:
    """Full description of one metric (with the parameters as given)."""
    from gainscope.metrics.trec_eval import trec_name_of

    cls = type(metric)
    lines = [f"{metric}  —  {cls.summary}", ""]
    lines.append(inspect.cleandoc(cls.__doc__ or ""))
    lines.append("")
    rows = []
    for f in fields(cls):
        default = f.default
        current = getattr(metric, f.name)
        rows.append([("@" if f.metadata.get("at") else "") + f.name, format_value(current),
                     "-" if default is None else format_value(default), f.metadata.get("doc", "")])
    if rows:
        lines.append(text_table(["parameter", "value", "default", "meaning"], rows, align=["l", "l", "l", "l"]))
        lines.append("")
    lo, hi = cls.bounds
    lines.append(f"range: [{'-inf' if lo is None else format_value(lo)}, {'inf' if hi is None else format_value(hi)}]"
                 f"   aggregate over queries: {cls.aggregate}")
    if cls.aliases:
        lines.append("aliases: " + ", ".join(cls.aliases))
    trec = trec_name_of(metric)
    if trec:
        lines.append(f"trec_eval name: {trec}")
    if cls.uses_relevance_level:
        lines.append("relevance: grade >= rel (default: the evaluation's relevance level, -l)")
    return "\n".join(lines) + "\n"
