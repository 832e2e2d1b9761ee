"""An experiment (:class:`~gainscope.search.experiment.ExperimentReport`) as a text table, markdown, JSON or the
self-contained HTML report.

Text and markdown: a summary line; the comparison table of ``gainscope compare`` (means, intervals, deltas with
the baseline, corrected p-values, effect sizes, wins/ties/losses; ▲/▼ where significant); a table of the
configurations (their knobs, queries, latency p50/p95/p99 in ms, mean Jaccard@k and RBO with the baseline, the
snapshot); the best configuration; the settings and conventions. HTML: the report of ``gainscope report`` with
the configurations table after the comparison.
"""

from __future__ import annotations

import json
import math
from typing import Any

from gainscope.errors import UnknownFormatError
from gainscope.render.compare import render_comparison
from gainscope.render.text import fmt_number, markdown_table, text_table

__all__ = ["EXPERIMENT_FORMATS", "render_experiment", "render_experiment_html"]

EXPERIMENT_FORMATS = ("table", "markdown", "json")


def _ms(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:.1f}"


def _knobs(knobs: dict[str, Any]) -> str:
    from gainscope.search.templates import as_text

    return ",".join(f"{k}={as_text(v)}" for k, v in knobs.items())


def _configuration_rows(report: Any) -> tuple[list[str], list[list[str]]]:
    header = ["configuration", "knobs", "queries", "p50 ms", "p95 ms", "p99 ms", f"Jaccard@{report.overlap_depth}",
              f"RBO(p={report.rbo_p:g})", "snapshot"]
    rows = []
    for c in report.configurations:
        p50, p95, p99 = c.latency_ms
        rows.append([c.name + (" (baseline)" if c.name == report.baseline else ""), _knobs(c.knobs), str(c.queries),
                     _ms(p50), _ms(p95), _ms(p99), fmt_number(c.jaccard), fmt_number(c.rbo), c.outcome.snapshot.name])
    return header, rows


def _summary(report: Any) -> str:
    c = report.comparison
    return (f"experiment {report.name}: {len(report.configurations)} configurations over "
            f"{report.configurations[0].queries} queries, compared with the baseline {report.baseline} on "
            f"{', '.join(c.metrics)}")


def _best(report: Any) -> str:
    c = report.comparison
    metric = c.metrics[0]
    row = c.row(metric, report.best)
    if report.best == report.baseline:
        return f"best: {report.best}, the baseline (no configuration has a higher mean {metric}: {row.mean:.4f})"
    verdict = "significant after correction" if report.best_significant else "not significant after correction"
    return (f"best: {report.best} ({metric} {row.mean:.4f}, {row.delta:+.4f} over {report.baseline}, {verdict}; "
            f"knobs {_knobs(report.result(report.best).knobs)})")


def render_experiment(report: Any, fmt: str) -> str:
    """``report`` as ``table``, ``markdown`` or ``json``."""
    if fmt == "json":
        return json.dumps(report.to_dict(), indent=2, ensure_ascii=False, default=str) + "\n"
    if fmt not in EXPERIMENT_FORMATS:
        raise UnknownFormatError(f"unknown format {fmt!r}; use one of {', '.join(EXPERIMENT_FORMATS)}")
    comparison = render_comparison(report.comparison, fmt)
    header, rows = _configuration_rows(report)
    notes = [f"note: {n}" for n in report.notes]
    if fmt == "markdown":
        table = markdown_table(header, rows)
        return "\n\n".join([f"**{_summary(report)}**", comparison.rstrip("\n"), table, f"**{_best(report)}**",
                            *notes]) + "\n"
    table = text_table(header, rows, align=["l", "l", "r", "r", "r", "r", "r", "r", "l"])
    return "\n\n".join([_summary(report), comparison.rstrip("\n"), table, _best(report), *notes]) + "\n"


def render_experiment_html(report: Any, *, figures: Any = None) -> str:
    """The self-contained HTML report of the experiment (see :func:`gainscope.render.report.render_report`)."""
    from gainscope.render.html import HtmlPage
    from gainscope.render.report import render_report

    def configurations(page: HtmlPage) -> None:
        header, rows = _configuration_rows(report)
        page.heading("Configurations")
        page.paragraph(f"{_best(report)}. Latency of the answered queries; overlap of each configuration's top "
                       f"{report.overlap_depth} with the baseline's, averaged over queries.")
        page.table(header, [list(r) for r in rows], caption="Knobs, latency and overlap with the baseline",
                   table_id="configurations")

    return render_report(report.comparison, figures=figures, title=f"gainscope experiment: {report.name}",
                         sources=[c.outcome.snapshot.name for c in report.configurations], sections=[configurations])
