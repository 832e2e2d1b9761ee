"""The renderers' one-pass layouts (a table of 200,000 queries is a million numbers) give exactly the text of the
plain per-row code they replace: fmt_numbers is fmt_number value by value, text_table the row-by-row table, the
per-query CSV rows the loop over queries and metrics."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gainscope.core.judged_run import Coverage
from gainscope.core.policies import Policies
from gainscope.metrics.resolve import resolve_metrics
from gainscope.render.results import render_results
from gainscope.render.text import csv_cell, fmt_number, fmt_numbers, text_table
from gainscope.results import Results

SETTINGS = settings(max_examples=200, derandomize=True, database=None, deadline=None)

VALUES = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, -0.0, 1.0, 0.5, 1e15,
                                                                                    -1e15, 999999999999999.9]))
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)


def reference_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """text_table as it was written row by row."""
    align = ["l"] + ["r"] * (len(header) - 1)
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
    return "\n".join([top, line(header), mid, *(line(r) for r in rows), bottom])


@SETTINGS
@given(values=st.lists(VALUES, max_size=30), digits=st.integers(0, 6))
def test_fmt_numbers_is_fmt_number_of_each(values: list[float], digits: int) -> None:
    assert fmt_numbers(np.array(values, dtype=np.float64), digits) == [fmt_number(v, digits) for v in values]


@SETTINGS
@given(header=st.lists(TEXT, min_size=1, max_size=4), data=st.data())
def test_text_table_is_the_row_by_row_table(header: list[str], data: st.DataObject) -> None:
    rows = data.draw(st.lists(st.lists(TEXT, min_size=len(header), max_size=len(header)), max_size=8))
    assert text_table(header, rows) == reference_table(header, rows)


def test_text_table_refuses_rows_of_another_width() -> None:
    with pytest.raises(ValueError, match="2 cells"):
        text_table(["a", "b"], [["1", "2"], ["3"]])


def _results(values: list[list[float]], ids: list[str]) -> Results:
    metrics = resolve_metrics(["nDCG@10", "AP"])
    arr = np.array(values, dtype=np.float64).reshape(len(ids), 2)
    return Results(run_name="=run", metrics=tuple(metrics), query_ids=tuple(ids), values=arr,
                   undefined=np.isnan(arr), policies=Policies(), coverage=Coverage(len(ids), len(ids), len(ids)))


@SETTINGS
@given(ids=st.lists(st.one_of(TEXT.filter(bool), st.sampled_from(["=1+1", "-x", "+3", "@a", "-0.5", "all"])),
                    min_size=1, max_size=6, unique=True), data=st.data())
def test_per_query_csv_and_table_are_the_loops_they_replace(ids: list[str], data: st.DataObject) -> None:
    values = data.draw(st.lists(st.lists(VALUES, min_size=2, max_size=2), min_size=len(ids), max_size=len(ids)))
    r = _results(values, ids)
    # the CSV of the loop over queries and metrics
    rows: list[list[object]] = [["run", "query_id", "metric", "value", "aggregate"]]
    for i, q in enumerate(r.query_ids):
        for j, name in enumerate(r.metric_names):
            v = r.values[i, j]
            rows.append([r.run_name, q, name, "" if math.isnan(v) else repr(float(v)), ""])
    for m, v in zip(r.metrics, r.aggregates.values(), strict=True):
        rows.append([r.run_name, "all", str(m), "" if math.isnan(v) else repr(float(v)), m.aggregate])
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([[csv_cell(c) for c in row] for row in rows])
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a query named "all"
        assert render_results([r], "csv", per_query=True) == buf.getvalue()
        table = render_results([r], "table", per_query=True)
    want = reference_table(["query", *r.metric_names],
                           [[q, *[fmt_number(v) for v in r.values[i]]] for i, q in enumerate(r.query_ids)]
                           + [["all", *[fmt_number(r.aggregates[n]) for n in r.metric_names]]])
    assert table.startswith(f"run {r.run_name}\n{want}\n\n")
