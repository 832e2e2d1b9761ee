"""The comparison report: one self-contained HTML file with the comparison table, the figures, sortable per-query
tables and the conventions (see :mod:`gainscope.render.html` for the page itself).

Sections, in order: a summary line; the comparison (means, intervals, deltas, corrected p-values, effect sizes,
wins/ties/losses; significant gains and losses marked); the figures (per-query differences and score
distributions of each compared metric, the metric-versus-cutoff curve, interpolated precision-recall curves,
a radar chart of the compared metrics, and the position sensitivity of the compared metrics); one collapsible
per-query table per metric, with each system's value and its difference with the baseline; and the settings
and evaluation conventions that produced every number.

The page's size is bounded whatever the number of queries: up to :data:`PER_QUERY_MAX` queries a per-query table
has a row per query; beyond, it summarises them (each system's quantiles, and those of its differences with the
baseline) and lists the :data:`EXTREMES` largest gains and largest losses of each system, every query's values
being a command away (``gainscope evaluate -q --format csv``); the figures do not grow with the number of
queries either (see :mod:`gainscope.render.plots`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from gainscope.compare import Comparison, ComparisonRow
from gainscope.errors import GainscopeError
from gainscope.render.compare import SHORT_TEST_NAMES as _SHORT
from gainscope.render.compare import comparison_lines, mark
from gainscope.render.html import Cell, HtmlPage
from gainscope.results import Results

__all__ = ["EXTREMES", "PER_QUERY_MAX", "ReportFigures", "render_report", "report_metrics"]

DEFAULT_CUTOFFS = (1, 3, 5, 10, 20, 100)
#: per-query tables list every query up to this many queries; beyond, a summary and the largest differences
PER_QUERY_MAX = 2000
#: beyond PER_QUERY_MAX: the largest gains and the largest losses listed, per system against the baseline
EXTREMES = 100
QUANTILES = (0.0, 0.05, 0.25, 0.5, 0.75, 0.95, 1.0)


@dataclass(frozen=True)
class ReportFigures:
    """Which figures to draw and from what: ``family`` at ``cutoffs`` for the cutoff curve, interpolated
    precision at 11 recall levels for the precision-recall curves, ``format`` "svg" (inline, crisp) or "png"."""

    enabled: bool = True
    family: str = "nDCG"
    cutoffs: tuple[int, ...] = DEFAULT_CUTOFFS
    format: str = "svg"
    sensitivity_depth: int = 10


def report_metrics(metrics: Sequence[str], figures: ReportFigures) -> list[str]:
    """Every metric the report evaluates: the compared ones, then those the curves need."""
    names = list(metrics)
    if figures.enabled:
        from gainscope.render.plots import cutoff_metrics, pr_metrics

        names += cutoff_metrics(figures.family, figures.cutoffs) + pr_metrics()
    return list(dict.fromkeys(names))


def render_report(comparison: Comparison, *, curves: Sequence[Results] = (), figures: ReportFigures | None = None,
                  title: str | None = None, sources: Sequence[str] = (),
                  sections: Sequence[Callable[[HtmlPage], None]] = ()) -> str:
    """The HTML report of ``comparison``. ``curves`` are the same runs' results with the metrics of
    :func:`report_metrics` (for the cutoff and precision-recall curves); ``sources`` name the input files;
    ``sections`` add to the page after the comparison table (an experiment's latency and overlap)."""
    figures = figures or ReportFigures()
    c = comparison
    page = HtmlPage(title or f"gainscope report: {', '.join(c.runs)}")
    page.paragraph(_summary(c, sources))
    page.heading("Comparison")
    _comparison_table(page, c)
    for section in sections:
        section(page)
    if figures.enabled:
        page.heading("Figures")
        _figures(page, c, curves, figures)
    page.heading("Per query")
    page.paragraph("Each system's value per query and its difference with the baseline; click a column to sort.")
    for metric in c.metrics:
        _per_query(page, c, metric)
    page.heading("Settings and conventions")
    page.preformatted("\n".join(comparison_lines(c)))
    return page.render()


def _summary(c: Comparison, sources: Sequence[str]) -> str:
    counts = {r.run_name: len(r.query_ids) for r in c.results}
    on = (f"{next(iter(counts.values()))} queries" if len(set(counts.values())) <= 1 else
          "queries (" + ", ".join(f"{name}: {n}" for name, n in counts.items()) + ")")
    text = (f"{len(c.runs)} systems compared with the baseline {c.baseline} on {on}, "
            f"{len(c.metrics)} metric{'s' if len(c.metrics) != 1 else ''}. ")
    significant = [r for r in c.comparisons if r.significant]
    if significant:
        text += "Significant differences: " + "; ".join(
            f"{r.run} {'better' if (r.delta or 0) > 0 else 'worse'} on {r.metric} ({r.delta:+.4f})"
            for r in significant) + ". "
    else:
        text += "No difference with the baseline is significant. "
    if sources:
        text += "Inputs: " + ", ".join(sources) + "."
    return text


def _comparison_table(page: HtmlPage, c: Comparison) -> None:
    pct = f"{c.settings.level * 100:g}%"
    tests = c.settings.tests
    header = ["metric", "run", "mean", f"{pct} CI", "delta", f"delta {pct} CI", *[_SHORT[t] for t in tests], "d_z",
              "W/T/L", "significant"]
    rows: list[list[Cell]] = []
    classes: list[str | None] = []
    for r in c.rows:
        wtl = r.wins_ties_losses
        rows.append([r.metric, r.run + (" (baseline)" if r.is_baseline else ""), r.mean, _span(r.ci_low, r.ci_high),
                     r.delta, _span(r.delta_ci_low, r.delta_ci_high), *[r.p_corrected.get(t) for t in tests],
                     _finite(r.effect_size), None if wtl is None else "/".join(map(str, wtl)), _verdict(r)])
        classes.append(_row_class(r))
    numeric = [False, False, True, False, True, False, *[True] * len(tests), True, False, False]
    page.table(header, rows, caption=f"Means with {pct} bootstrap intervals; differences with {c.baseline}; "
               "p-values corrected over every comparison of the report.", table_id="comparison",
               row_classes=classes, numeric=numeric)


def _span(low: float | None, high: float | None) -> str | None:
    if low is None or high is None or math.isnan(low) or math.isnan(high):
        return None
    return f"[{low:.4f}, {high:.4f}]"


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else x


def _verdict(r: ComparisonRow) -> str:
    if r.is_baseline:
        return "baseline"
    if r.significant is None:
        return "not tested"
    return f"{mark(r)} yes" if r.significant else "no"


def _row_class(r: ComparisonRow) -> str | None:
    if not r.significant or r.delta is None:
        return None
    return "significant better" if r.delta > 0 else "significant worse"


def _figures(page: HtmlPage, c: Comparison, curves: Sequence[Results], figures: ReportFigures) -> None:
    from gainscope.render import plots

    results = list(c.results)
    drawn: list[tuple[str, Callable[[], Any]]] = []
    for metric in c.metrics:
        drawn.append((f"{metric}: per-query difference with {c.baseline}",
                      partial(plots.delta_bars, results, c.baseline, metric)))
        drawn.append((f"{metric}: per-query values", partial(plots.distributions, results, metric)))
    if curves:
        drawn.append((f"{figures.family}@k for k in {', '.join(map(str, figures.cutoffs))}",
                      partial(plots.cutoff_curve, curves, figures.family)))
        drawn.append(("Interpolated precision-recall curves", partial(plots.pr_curves, curves)))
    if len(c.metrics) >= 3:
        drawn.append(("Compared metrics", partial(plots.radar, results, list(c.metrics))))
    drawn.append((f"Position sensitivity of the compared metrics (depth {figures.sensitivity_depth})",
                  partial(plots.position_sensitivity, list(c.metrics), figures.sensitivity_depth,
                          policies=c.policies)))
    for caption, draw in drawn:
        try:
            fig = draw()
        except GainscopeError as exc:  # a figure that does not apply (e.g. no defined value): say so, go on
            page.paragraph(f"{caption}: not drawn ({exc})")
            continue
        if figures.format == "png":
            page.figure(png=plots.png_bytes(fig), caption=caption, alt=caption)
        else:
            page.figure(svg=plots.svg_text(fig), caption=caption, alt=caption)


def _per_query(page: HtmlPage, c: Comparison, metric: str) -> None:
    base = next(r for r in c.results if r.run_name == c.baseline)
    others = [r for r in c.results if r is not base]
    values = {r.run_name: r.per_query(metric) for r in c.results}
    queries = list(dict.fromkeys([q for r in c.results for q in r.query_ids]))
    header = ["query", *[r.run_name for r in c.results], *[f"{r.run_name} - {c.baseline}" for r in others]]
    shown = queries if len(queries) <= PER_QUERY_MAX else _extremes(queries, values, c.baseline, others)
    rows: list[list[Cell]] = []
    cells: list[list[str | None]] = []
    for q in shown:
        b = _value(values[c.baseline].get(q))
        deltas = [_delta(_value(values[r.run_name].get(q)), b) for r in others]
        rows.append([q, *[_value(values[r.run_name].get(q)) for r in c.results], *deltas])
        plain: list[str | None] = [None] * (1 + len(c.results))
        cells.append(plain + [_delta_class(d) for d in deltas])
    if len(shown) == len(queries):
        with page.details(f"{metric}: {len(queries)} queries"):
            page.table(header, rows, caption=f"{metric} per query", table_id=f"per-query-{metric}",
                       cell_classes=cells)
        return
    with page.details(f"{metric}: {len(queries)} queries, summarised; the {len(shown)} largest differences listed"):
        _summary_table(page, c, metric, values, queries, others)
        page.table(header, rows, caption=f"{metric}: the {EXTREMES} largest gains and the {EXTREMES} largest losses "
                   f"of each system against {c.baseline} ({len(shown)} of {len(queries)} queries; every query's "
                   "values: gainscope evaluate -q --format csv)", table_id=f"per-query-{metric}", cell_classes=cells)


def _extremes(queries: list[str], values: dict[str, dict[str, float]], baseline: str,
              others: Sequence[Results]) -> list[str]:
    """The queries among the :data:`EXTREMES` largest gains or the :data:`EXTREMES` largest losses of any system
    against the baseline, ordered by the first system's difference (descending; undefined last), then as given."""
    def differences(r: Results) -> dict[str, float]:
        out = {}
        for q in queries:
            d = _delta(_value(values[r.run_name].get(q)), _value(values[baseline].get(q)))
            if d is not None:
                out[q] = d
        return out

    picked: set[str] = set()
    first: dict[str, float] = {}
    for k, r in enumerate(others):
        d = differences(r)
        if k == 0:
            first = d
        by_size = sorted(d, key=lambda q: d[q])  # stable: ties keep the query order
        picked.update(q for q in by_size[:EXTREMES] if d[q] < -1e-12)
        picked.update(q for q in reversed(by_size[-EXTREMES:]) if d[q] > 1e-12)
    position = {q: i for i, q in enumerate(queries)}
    return sorted(picked, key=lambda q: (q not in first, -first.get(q, 0.0), position[q]))


def _summary_table(page: HtmlPage, c: Comparison, metric: str, values: dict[str, dict[str, float]],
                   queries: list[str], others: Sequence[Results]) -> None:
    """Each system's values, and each system's differences with the baseline, summarised by quantiles."""
    header = ["of", "queries", "mean", *[_quantile_name(p) for p in QUANTILES]]
    rows: list[list[Cell]] = []
    for r in c.results:
        v = np.array([x for x in values[r.run_name].values() if not math.isnan(x)])
        rows.append([r.run_name, len(v), *_quantile_cells(v)])
    for r in others:
        d = [_delta(_value(values[r.run_name].get(q)), _value(values[c.baseline].get(q))) for q in queries]
        v = np.array([x for x in d if x is not None])
        rows.append([f"{r.run_name} - {c.baseline}", len(v), *_quantile_cells(v)])
    page.table(header, rows, caption=f"{metric}: quantiles over the queries", table_id=f"summary-{metric}")


def _quantile_cells(v: np.ndarray) -> list[Cell]:
    if not len(v):
        return [None] * (1 + len(QUANTILES))
    return [float(v.mean()), *[float(x) for x in np.quantile(v, QUANTILES)]]


def _quantile_name(p: float) -> str:
    return {0.0: "min", 0.5: "median", 1.0: "max"}.get(p, f"{p * 100:g}%")


def _value(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else x


def _delta(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def _delta_class(d: float | None) -> str | None:
    if d is None or abs(d) <= 1e-12:
        return None
    return "better" if d > 0 else "worse"
