"""``gainscope pool RUN... [--judgments QRELS] --budget N [-o pairs.txt]``: the next pairs to judge, by depth
pooling, move-to-front or MaxMean adaptive pooling, or a decision-aware order (see
:mod:`gainscope.judges.adjudication`). The pairs file feeds ``gainscope judge --pairs``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from gainscope.cli.common import (
    Number,
    check_names,
    emit,
    guarded,
    read_judgments_and_run_options,
    reader_options,
    run_options_from,
    split_metrics,
)
from gainscope.cli.compare import naming_options
from gainscope.cli.spelling import Respelled
from gainscope.judges.adjudication import STRATEGIES

__all__ = ["pool_cmd"]


@click.command("pool")
@click.argument("runs", nargs=-1, required=True)
@click.option("--judgments", default=None, help="What is judged already (qrels); those pairs are not chosen again.")
@click.option("--budget", type=click.IntRange(min=1), required=True, help="How many pairs to choose.")
@click.option("--strategy", type=click.Choice(list(STRATEGIES)), default="depth", show_default=True,
              help="depth: rank by rank over the runs; mtf: move-to-front; maxmean: MaxMean bandit; decision: first "
                   "the pairs most likely to change the differences with the baseline that the sign and "
                   "significance of the comparison rest on.")
@click.option("--pool-depth", "depth", cls=Respelled, old=("--depth",), type=click.IntRange(min=1), default=100,
              show_default=True, help="Pool the first N documents of each run.")
@click.option("-m", "--metric", "metrics", multiple=True,
              help="--strategy decision: the metric(s) of the comparison. Default: nDCG@10.")
@naming_options
@click.option("--alpha", type=Number(), default=0.05, show_default=True,
              help="--strategy decision: significance level of the comparison.")
@click.option("-l", "--relevance-level", type=Number(), default=1.0, show_default=True,
              help="Minimum grade counted as relevant (trec_eval -l).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the pairs here ('query_id doc_id' per line) instead of standard output.")
@reader_options
@guarded
def pool_cmd(runs: tuple[str, ...], judgments: str | None, budget: int, strategy: str, depth: int,
             metrics: tuple[str, ...], alpha: float, relevance_level: float, output: Path | None,
             **kwargs: Any) -> None:
    """Choose the next BUDGET (query, document) pairs to judge among the first --pool-depth documents of RUN(s).

    Pairs already in --judgments are not chosen (a negative grade means pooled but not judged: it may be). The
    adaptive strategies read the labels they meet in --judgments for free: judge a batch, add it to the
    judgments and ask again. The first line of the pairs is a comment saying what was chosen from what.
    """
    from gainscope.io import read_run
    from gainscope.judges.adjudication import next_pairs
    from gainscope.judges.pool import pairs_text

    baseline, names = kwargs.pop("baseline"), kwargs.pop("names")
    check_names(names, runs)
    if strategy == "decision" and len(runs) < 2:
        raise click.UsageError("--strategy decision compares runs: give at least two")
    if strategy != "decision" and (metrics or baseline is not None):
        raise click.UsageError("-m and --baseline say what --strategy decision protects; they do nothing for "
                               f"--strategy {strategy}")
    if judgments is not None:
        judg, run_options = read_judgments_and_run_options(judgments, kwargs)
    else:
        judg, run_options = None, run_options_from(kwargs)
    loaded = [read_run(r, **run_options) for r in runs]
    for run, name in zip(loaded, names, strict=False):
        run.name = name
    if baseline is not None and baseline not in [r.name for r in loaded]:
        raise click.UsageError(f"--baseline {baseline} is not among the runs: {', '.join(r.name for r in loaded)}")
    sel = next_pairs(loaded, judg, budget=budget, strategy=strategy, depth=depth,
                     metrics=split_metrics(metrics) or ["nDCG@10"], baseline=baseline, alpha=alpha,
                     relevance_level=relevance_level)
    summary = (f"{len(sel.pairs)} of {sel.unjudged} unjudged pairs in the depth-{depth} pool of {len(loaded)} "
               f"run{'s' if len(loaded) != 1 else ''} over {sel.queries} quer{'y' if sel.queries == 1 else 'ies'} "
               f"(strategy {strategy})")
    if sel.decisive is not None:
        summary += f"; {sel.decisive} could alone change a conclusion"
    emit(pairs_text(sel.pairs, header=[f"gainscope pool: {summary}"]), output)
    if output is not None:  # on standard output the first line says it
        click.echo(summary, err=True)
