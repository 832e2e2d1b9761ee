"""trec_eval's text output: ``measure<TAB>query<TAB>value``, the name left-justified to 22 characters,
values with 4 decimals (counts as integers), per-query blocks first (``-q``), then the summary under
``all``. Byte-for-byte what trec_eval 10 prints for the same measures and options.
"""

from __future__ import annotations

import math

from gainscope.metrics.trec_eval import TrecItem
from gainscope.results import Results, aggregate_values

__all__ = ["render_trec_eval"]


def _value(item: TrecItem, v: float) -> str:
    if item.kind == "long":
        return str(round(v))
    return f"{v:6.4f}"


def render_trec_eval(items: list[TrecItem], results: Results, *, per_query: bool = False,
                     summary: bool = True, relstrings: dict[str, str] | None = None) -> str:
    """Render results computed for ``items`` (metrics in the same order as the numeric items)."""
    columns: dict[int, int] = {}
    names = results.metric_names
    for idx, item in enumerate(items):
        if item.metric is not None:
            columns[idx] = names.index(str(item.metric))
    lines: list[str] = []
    if per_query:
        for qi, qid in enumerate(results.query_ids):
            for idx, item in enumerate(items):
                if not item.per_query:
                    continue
                if item.metric is None:
                    if item.family == "relstring":
                        text = (relstrings or {}).get(qid, "")
                        lines.append(f"{item.out_name:<22}\t{qid}\t'{text}'")
                    continue
                v = results.values[qi, columns[idx]]
                if math.isnan(v):
                    continue
                lines.append(f"{item.out_name:<22}\t{qid}\t{_value(item, v)}")
    if summary:
        for idx, item in enumerate(items):
            if not item.summary:
                continue
            if item.metric is None:
                if item.family == "runid":
                    lines.append(f"{item.out_name:<22}\tall\t{results.run_name}")
                continue
            j = columns[idx]
            v = aggregate_values(results.values[:, j], item.metric.aggregate)
            lines.append(f"{item.out_name:<22}\tall\t{_value(item, 0.0 if math.isnan(v) else v)}")
    return "\n".join(lines) + ("\n" if lines else "")
