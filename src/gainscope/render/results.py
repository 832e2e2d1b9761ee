"""Results rendered as a text table, markdown, CSV, JSON or JSONL. Every human-readable format ends with
the conventions that produced the numbers; machine formats carry them as data (JSON) or leave them to
stderr (CSV, JSONL).

Layouts: the summary has a row per metric and a column per run (it stays readable for ``all_trec``); the
per-query view has a row per query and a column per metric, one block per run.

Aggregates are the rows (records) whose query is ``all``; in CSV and JSONL they also carry how they were
aggregated (``aggregate``: ``mean``, ``sum`` or ``gmean``; empty, or absent, on per-query rows), which tells
them apart from a query that is itself named ``all`` (warned about). CSV text cells that a spreadsheet
would run as formulas get a leading ``'`` (:func:`gainscope.render.text.csv_cell`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

from gainscope.errors import InputWarning, UnknownFormatError
from gainscope.metrics.profiles import ProfileUse
from gainscope.render.text import csv_text, fmt_number, markdown_table, text_table
from gainscope.results import Results

__all__ = ["FORMATS", "conventions_lines", "profile_pairs", "render_results"]

FORMATS = ("table", "markdown", "csv", "json", "jsonl", "trec_eval")


def _val(x: float) -> float | None:
    return None if math.isnan(x) else x


def profile_pairs(use: ProfileUse | None) -> list[tuple[str, str]]:
    """``(name, text)`` pairs for a profile in the conventions: its name and description, what it sets,
    what was given over it and its notes (nothing without a profile)."""
    if use is None:
        return []
    p = use.profile
    pairs = [("profile", f"{p.name}: {p.description}")]
    if p.settings():
        pairs.append(("profile sets", "; ".join(p.settings())))
    if use.overridden:
        pairs.append(("given over it", "; ".join(use.overridden)))
    pairs += [("profile note", n) for n in p.notes]
    return pairs


def conventions_lines(results: Sequence[Results]) -> list[str]:
    """Human-readable lines: the profile, policies, query coverage and reader notes, under a ``conventions``
    title."""
    first = results[0]
    pairs = profile_pairs(first.profile) + list(first.policies.describe())
    for r in results:
        cov = r.coverage
        prefix = f"{r.run_name}: " if len(results) > 1 else ""
        plural = "query" if cov.evaluated_queries == 1 else "queries"
        text = (f"{prefix}{cov.evaluated_queries} {plural} evaluated ({cov.judged_queries} judged, "
                f"{cov.ranked_queries} ranked")
        if cov.missing:
            text += f", {len(cov.missing)} judged without ranking"
        if cov.ignored:
            text += f", {len(cov.ignored)} ranked without judgments ignored"
        if cov.tied_groups:
            text += f", {cov.tied_groups} tied score groups"
        pairs.append(("queries", text + ")"))
        pairs.extend(("note", f"{prefix}{n}") for n in r.notes)
    width = max(len(k) for k, _ in pairs)
    return ["conventions:"] + [f"  {k.ljust(width)}  {v}" for k, v in pairs]


def _summary_table(results: Sequence[Results], markdown: bool) -> str:
    names = results[0].metric_names
    header = ["metric", *[r.run_name for r in results]]
    rows = [[name, *[fmt_number(r.aggregates[name]) for r in results]] for name in names]
    if markdown:
        return markdown_table(header, rows)
    return text_table(header, rows)


def _per_query_table(r: Results, markdown: bool) -> str:
    header = ["query", *r.metric_names]
    rows = [[q, *[fmt_number(v) for v in r.values[i]]] for i, q in enumerate(r.query_ids)]
    agg = r.aggregates
    rows.append(["all", *[fmt_number(agg[n]) for n in r.metric_names]])
    if markdown:
        return markdown_table(header, rows)
    return text_table(header, rows)


def _warn_query_named_all(results: Sequence[Results], fmt: str) -> None:
    for r in results:
        if "all" in r.query_ids:
            where = ("the ones with the 'aggregate' " + ("column" if fmt == "csv" else "field") + " set"
                     if fmt in ("csv", "jsonl") else "the last row of the run's table")
            warnings.warn(InputWarning(
                f"run {r.run_name}: a query is named 'all', as the aggregate rows are; the aggregates are "
                f"{where}"), stacklevel=3)


def render_results(results: Sequence[Results], fmt: str, *, per_query: bool = False) -> str:
    """Render one or more runs' results in ``fmt`` (one of FORMATS except ``trec_eval``)."""
    if per_query and fmt != "json":
        _warn_query_named_all(results, fmt)
    if fmt in ("table", "markdown"):
        md = fmt == "markdown"
        blocks = []
        if per_query:
            for r in results:
                title = f"run {r.run_name}" if not md else f"### {r.run_name}"
                blocks.append(title + "\n" + _per_query_table(r, md))
        else:
            blocks.append(_summary_table(results, md))
        conv = conventions_lines(results)
        if md:
            blocks.append("**conventions**\n\n" + "\n".join(f"- {c.strip()}" for c in conv[1:]))
        else:
            blocks.append("\n".join(conv))
        return "\n\n".join(blocks) + "\n"
    if fmt == "json":
        import json  # here and below: the table, the usual format, does without it

        payload = [r.to_dict() for r in results]
        if not per_query:
            for p in payload:
                p.pop("per_query")
        return json.dumps(payload[0] if len(payload) == 1 else payload, indent=2) + "\n"
    if fmt == "jsonl":
        import json

        lines = []
        for r in results:
            if per_query:
                for i, q in enumerate(r.query_ids):
                    for j, name in enumerate(r.metric_names):
                        lines.append(json.dumps({"run": r.run_name, "query_id": q, "metric": name,
                                                 "value": _val(float(r.values[i, j]))}))
            for m, v in zip(r.metrics, r.aggregates.values(), strict=True):
                lines.append(json.dumps({"run": r.run_name, "query_id": "all", "metric": str(m), "value": _val(v),
                                         "aggregate": m.aggregate}))
        return "\n".join(lines) + "\n"
    if fmt == "csv":
        rows: list[Sequence[object]] = [["run", "query_id", "metric", "value", "aggregate"]]
        for r in results:
            if per_query:
                for i, q in enumerate(r.query_ids):
                    for j, name in enumerate(r.metric_names):
                        v = r.values[i, j]
                        rows.append([r.run_name, q, name, "" if math.isnan(v) else repr(float(v)), ""])
            for m, v in zip(r.metrics, r.aggregates.values(), strict=True):
                rows.append([r.run_name, "all", str(m), "" if math.isnan(v) else repr(float(v)), m.aggregate])
        return csv_text(rows)
    raise UnknownFormatError(f"unknown format {fmt!r}")
