"""``gainscope report JUDGMENTS RUN... -o report.html``: one self-contained HTML file with the comparison, the
figures, sortable per-query tables and the conventions (see :mod:`gainscope.render.report`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from gainscope.cli.common import (
    conventions_from,
    evaluate_files,
    guarded,
    policy_options,
    profile_option,
    reader_options,
    split_metrics,
)
from gainscope.cli.compare import DEFAULT_METRICS, naming_options, settings_from, statistics_options
from gainscope.cli.spelling import Respelled


def _cutoffs(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise click.BadParameter(f"expected cutoffs separated by commas, e.g. 1,3,5,10; got {text!r}",
                                 param_hint="--cutoffs") from None
    if len(values) < 2 or min(values) < 1:
        raise click.BadParameter(f"give at least two cutoffs >= 1; got {text!r}", param_hint="--cutoffs")
    return values


@click.command("report")
@click.argument("judgments")
@click.argument("runs", nargs=-1, required=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The HTML file to write.")
@click.option("-m", "--metric", "metrics", multiple=True,
              help="Metric(s) to compare, as for evaluate. Default: nDCG@10 AP RR P@10.")
@click.option("--title", default=None, help="Title of the report (default: the run names).")
@click.option("--no-plots", is_flag=True, help="Tables only (no matplotlib needed).")
@click.option("--family", default="nDCG", show_default=True, help="Metric drawn against the cutoff k.")
@click.option("--cutoffs", default="1,3,5,10,20,100", show_default=True, help="Cutoffs of the metric-versus-k curve.")
@click.option("--image-format", "figure_format", cls=Respelled, old=("--figure-format",),
              type=click.Choice(["svg", "png"]), default="svg", show_default=True,
              help="Figures inlined as SVG markup or as PNG images.")
@naming_options
@statistics_options
@profile_option
@policy_options
@reader_options
@guarded
def report_cmd(judgments: str, runs: tuple[str, ...], output: Path, metrics: tuple[str, ...], title: str | None,
               no_plots: bool, family: str, cutoffs: str, figure_format: str, **kwargs: Any) -> None:
    """Write a self-contained HTML report comparing RUNs (two or more) against JUDGMENTS: the comparison
    table, figures, sortable per-query tables and the conventions. It loads nothing from the network."""
    from gainscope.compare import compare_results
    from gainscope.evaluation import resolve_metrics
    from gainscope.render.report import ReportFigures, render_report, report_metrics

    if len(runs) < 2:
        raise click.UsageError("a report compares at least two runs (the first is the baseline unless --baseline)")
    settings = settings_from(kwargs)
    conventions = conventions_from(kwargs)
    figures = ReportFigures(enabled=not no_plots, family=conventions.family(family), cutoffs=_cutoffs(cutoffs),
                            format=figure_format)
    baseline, names = kwargs.pop("baseline"), kwargs.pop("names")
    compared = [str(m) for m in conventions.resolve(split_metrics(metrics) or list(DEFAULT_METRICS))]
    # canonical names: resolved without the profile they are the very metrics the profile gave
    everything = resolve_metrics(report_metrics(compared, figures))
    results = evaluate_files(judgments, runs, everything, kwargs, names=names, conventions=conventions)
    comparison = compare_results([r.select(compared) for r in results], baseline=baseline, settings=settings)
    html = render_report(comparison, curves=results if figures.enabled else (), figures=figures, title=title,
                         sources=[judgments, *runs])
    from gainscope.io.writers import write_file

    write_file(output, html)
    click.echo(str(output))
