"""A weight search (``gainscope fuse --optimize``) as text: the chosen weights, then the metric on the training
and held-out queries for the tuned fusion, the equal-weight fusion and each input run."""

from __future__ import annotations

import json

from gainscope.fusion.optimize import WeightSearch
from gainscope.render.text import fmt_number, text_table

__all__ = ["render_weight_search"]


def _queries(n: int) -> str:
    return f"{n} {'query' if n == 1 else 'queries'}"


def render_weight_search(ws: WeightSearch, fmt: str = "text") -> str:
    """``text`` (two tables and a line saying how the weights were found) or ``json``."""
    if fmt == "json":
        return json.dumps(ws.to_dict(), indent=2) + "\n"
    weights = text_table(["run", "weight"], [[name, f"{w:g}"] for name, w in zip(ws.runs, ws.weights, strict=True)])
    header = ["", f"train ({_queries(len(ws.train_queries))})"]
    if ws.heldout:
        header.append(f"held-out ({_queries(len(ws.heldout_queries))})")
    rows = [[label, fmt_number(value)] + ([fmt_number(ws.heldout[label])] if ws.heldout else [])
            for label, value in ws.train.items()]
    lines = [f"{ws.fusion.describe()}: weights tuned for {ws.metric} on the training queries ({ws.search})",
             weights, f"{ws.metric}:", text_table(header, rows)]
    if not ws.heldout:
        lines.append("no held-out query: the training value is optimistic; keep some judged queries out of "
                     "--train-queries to check it")
    return "\n".join(lines) + "\n"
