"""``gainscope agreement HUMAN_QRELS LLM_QRELS [--run RUN ...]``: how far two label sets agree, per (query, doc)
pair (kappas, alphas, confusion matrix) and, with runs, between the system rankings they induce (Kendall's tau-b,
tau_AP, Spearman's rho). See :mod:`gainscope.agreement` for the definitions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from gainscope.cli.common import (
    Number,
    check_names,
    conventions_from,
    emit,
    guarded,
    number_list,
    policy_options,
    read_judgments_and_run_options,
    reader_options,
    split_metrics,
)
from gainscope.render.agreement import AGREEMENT_FORMATS, render_agreement

__all__ = ["agreement_cmd"]

DEFAULT_METRICS = ("nDCG@10",)


# ---------------------------------------------------------------------------------------------- command
@click.command("agreement")
@click.argument("human")
@click.argument("llm")
@click.option("--run", "runs", multiple=True,
              help="A run to rank under both label sets; repeat (at least 2 runs, 3 for tau_AP).")
@click.option("--name", "names", multiple=True, help="Name the runs, one --name per --run in order.")
@click.option("-m", "--metric", "metrics", multiple=True,
              help="Metric(s) to rank the runs by, as for evaluate. Default: nDCG@10.")
@click.option("--threshold", type=Number(), default=2, show_default=True,
              help="Binarised kappa: grade >= threshold is relevant (2 as UMBRELA on the 0-3 scale).")
@click.option("--categories", default=None,
              help="The grading scale in order, e.g. 0,1,2,3; weighted kappas follow its indices. Default: the "
                   "grades seen in either set.")
@click.option("-f", "--format", "fmt", type=click.Choice(list(AGREEMENT_FORMATS)), default="table",
              show_default=True, help="Output format.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to this file instead of standard output.")
@policy_options
@reader_options
@guarded
def agreement_cmd(human: str, llm: str, runs: tuple[str, ...], names: tuple[str, ...], metrics: tuple[str, ...],
                  threshold: float, categories: str | None, fmt: str, output: Path | None, **kwargs: Any) -> None:
    """Agreement of LLM_QRELS with HUMAN_QRELS over the (query, doc) pairs judged in both: Cohen's kappa
    (unweighted, linear, quadratic, binarised at --threshold), Krippendorff's alpha (ordinal, nominal, interval)
    and the confusion matrix (rows human, columns LLM). Pairs judged in one set only are counted and named.

    With two or more --run, every run is evaluated under both label sets and the two leaderboards are compared
    per metric: Kendall's tau-b, tau_AP (symmetric, tau_AP-b ties) and Spearman's rho.
    """
    from gainscope.agreement import agreement
    from gainscope.io import read_run

    metric_names = split_metrics(metrics)
    if metric_names and not runs:
        raise click.UsageError("-m/--metric ranks runs under both label sets; give the runs with --run RUN")
    if len(runs) == 1:
        raise click.UsageError("ranking systems needs at least 2 runs (3 for tau_AP); give another --run")
    check_names(names, runs)
    conventions = conventions_from(kwargs)
    human_j, run_options = read_judgments_and_run_options(human, dict(kwargs))
    llm_j, _ = read_judgments_and_run_options(llm, kwargs)
    run_objects = [read_run(r, **run_options) for r in runs]
    result = agreement(human_j, llm_j, runs=run_objects,
                       metrics=conventions.resolve(metric_names or list(DEFAULT_METRICS)),
                       threshold=threshold, categories=number_list(categories, "--categories", "0,1,2,3"),
                       names=names or None, policies=conventions.policies)
    text = render_agreement(result, fmt)
    emit(text, output)
