"""``gainscope experiment``: run every configuration of a grid, evaluate and compare them (see
:mod:`gainscope.search.experiment`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from gainscope.cli.common import emit, guarded, split_metrics
from gainscope.cli.compare import settings_from, statistics_options
from gainscope.cli.search import engine_options, open_engine, progress_printer, sending_options

__all__ = ["experiment_cmd"]

_SEND = ("top", "concurrency", "qps", "max_attempts", "max_consecutive_failures")


def _grid(items: tuple[str, ...]) -> dict[str, list[Any]]:
    from gainscope.search.templates import parse_value

    axes: dict[str, list[Any]] = {}
    for item in items:
        key, sep, values = item.partition("=")
        if not sep or not key.strip() or not values.strip():
            raise click.BadParameter(f"expected KNOB=V1,V2,...; got {item!r}", param_hint="--grid")
        if key.strip() in axes:
            raise click.BadParameter(f"{key.strip()} is given twice; list every value in one --grid",
                                     param_hint="--grid")
        axes[key.strip()] = [parse_value(v) for v in values.split(",")]
    return axes


@click.command("experiment")
@click.argument("experiment_file", metavar="[EXP.toml]", required=False, type=click.Path(exists=True, dir_okay=False))
@engine_options
@click.option("--queries", "queries_file", type=click.Path(exists=True), default=None,
              help="Queries: JSONL, TSV or a case file (default: the experiment file's).")
@click.option("--judgments", "judgments_file", type=click.Path(exists=True), default=None,
              help="Judgments: a qrels file (any format gainscope reads) or a case file, whose ratings are used.")
@click.option("--grid", "grid_items", multiple=True, metavar="KNOB=V1,V2",
              help="Values of a knob to try (repeatable: every combination is a configuration).")
@click.option("--baseline", default=None,
              help="The baseline configuration's name (default: the engine's own knobs, named default).")
@click.option("-m", "--metric", "metrics", multiple=True,
              help="Metrics (default: the file's, else nDCG@10 AP RR P@10); the first one picks the best.")
@sending_options
@click.option("--snapshot", "store_path", type=click.Path(dir_okay=False), default=None,
              help="The snapshot store (default: the file's snapshots, else kept in memory only).")
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "markdown", "json"]), default="table",
              show_default=True, help="Output format.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the output here instead of standard output.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the self-contained HTML report here.")
@click.option("--no-plots", is_flag=True, help="No figures in the HTML report (they need matplotlib).")
@statistics_options
@guarded
def experiment_cmd(experiment_file: str | None, engine_spec: str | None, assignments: tuple[str, ...],
                   queries_file: str | None, judgments_file: str | None, grid_items: tuple[str, ...],
                   baseline: str | None, metrics: tuple[str, ...], store_path: str | None, fmt: str,
                   output: Path | None, html_path: Path | None, no_plots: bool, **kwargs: Any) -> None:
    """Run every configuration (a grid of knob values, or the configurations of EXP.toml) over the queries into
    one snapshot store, evaluate each against the judgments, and report the comparison with the baseline
    (p-values corrected over all comparisons), latency p50/p95/p99, overlap with the baseline (Jaccard@k, RBO) and
    the best configuration."""
    import asyncio

    from gainscope.render.experiment import render_experiment, render_experiment_html
    from gainscope.search.experiment import grid, judgments_from, plan_from, read_experiment, run_experiment
    from gainscope.search.queries import read_search_queries
    from gainscope.search.store import SnapshotStore

    ctx = click.get_current_context()
    data: dict[str, Any] = read_experiment(experiment_file) if experiment_file is not None else {}
    engine_spec = engine_spec or data.get("engine")
    queries_file = queries_file or data.get("queries")
    judgments_file = judgments_file or data.get("judgments")
    if queries_file is None or judgments_file is None:
        raise click.UsageError("give EXP.toml, or --engine, --queries and --judgments")
    engine, fixed = open_engine(engine_spec, assignments)
    axes = _grid(grid_items)
    both = sorted(set(fixed) & set(axes))
    if both:
        raise click.BadParameter(f"{both[0]} is both set (--set) and on the grid (--grid); give it once",
                                 param_hint="--set")
    overrides: dict[str, Any] = {"baseline": baseline, "metrics": split_metrics(metrics) or None,
                                 "rerun_failed": kwargs.pop("rerun_failed")}
    send = data.get("send") or {}
    for key in _SEND:
        value = kwargs.pop(key)
        explicit = ctx.get_parameter_source(key) is not click.core.ParameterSource.DEFAULT
        if explicit or (key not in send and not (key == "top" and "top" in data)):
            overrides[key] = value
    compare_settings = settings_from(kwargs)
    queries = read_search_queries(queries_file)
    judgments = judgments_from(judgments_file)
    plan = plan_from({**data, "queries": queries_file, "judgments": judgments_file,
                      "name": data.get("name") or "experiment"}, engine=engine, queries=queries, judgments=judgments,
                     extra=grid(axes) if axes else [], compare_settings=compare_settings, overrides=overrides,
                     base_knobs=fixed)
    store_path = store_path or data.get("snapshots")
    printer = progress_printer("")
    progress = (lambda name, state: printer(state)) if printer is not None else None
    with SnapshotStore.open(store_path or ":memory:") as store:
        report = asyncio.run(run_experiment(plan, store, progress=progress))
    emit(render_experiment(report, fmt), output)
    if html_path is not None:
        import importlib.util

        from gainscope.render.report import ReportFigures

        figures = ReportFigures(enabled=not no_plots and importlib.util.find_spec("matplotlib") is not None)
        html_path.write_text(render_experiment_html(report, figures=figures), encoding="utf-8")
    if store_path is None:
        click.echo("note: the snapshots were kept in memory only; give --snapshot FILE to keep them (and resume)",
                   err=True)
    sent = sum(c.outcome.sent for c in report.configurations)
    reused = sum(c.outcome.reused for c in report.configurations)
    click.echo(f"experiment {plan.name}: {len(report.configurations)} configurations, {sent} queries sent, "
               f"{reused} from snapshots" + (f" in {store_path}" if store_path else ""), err=True)
