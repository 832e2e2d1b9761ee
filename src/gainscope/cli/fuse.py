"""``gainscope fuse RUN RUN... --method M [--norm N] [--weights ...] -o FUSED``: rank fusion (see
:mod:`gainscope.fusion`), and with ``--optimize METRIC --train-queries FILE --judgments QRELS`` the weights tuned
on training queries and reported with the held-out value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from gainscope.cli.common import (
    Number,
    guarded,
    number_list,
    read_judgments_and_run_options,
    reader_options,
    run_options_from,
)
from gainscope.fusion import METHODS, NORMALIZATIONS
from gainscope.fusion.optimize import SEARCHES

__all__ = ["fuse_cmd"]


def _check(method: str, weights: list[float] | None, optimize: str | None, train: str | None,
           judgments: str | None) -> None:
    """The --optimize combinations that cannot work (the fusion itself checks --norm, --weights and --rrf-k)."""
    m = METHODS[method]
    if optimize is not None:
        if not m.weighted:
            raise click.UsageError(f"--optimize tunes --weights, which --method {method} does not take; use "
                                   "--method wsum or rrf")
        if weights is not None:
            raise click.UsageError("--optimize chooses the weights; leave --weights out")
        if train is None or judgments is None:
            raise click.UsageError("--optimize needs --train-queries FILE and --judgments QRELS")
    elif train is not None or judgments is not None:
        raise click.UsageError("--train-queries and --judgments are for --optimize METRIC")


@click.command("fuse")
@click.argument("runs", nargs=-1, required=True)
@click.option("--method", type=click.Choice(list(METHODS)), default="rrf", show_default=True,
              help="Fusion method (formulas: gainscope.fusion.methods).")
@click.option("--norm", type=click.Choice(list(NORMALIZATIONS)), default=None,
              help="Score normalisation for the score-based methods (default minmax); rank-based methods take none.")
@click.option("--weights", "weights_text", default=None, help="One weight per run for wsum and rrf, e.g. 0.3,0.7.")
@click.option("--rrf-k", type=Number(min=0), default=None, help="RRF's constant k (default 60).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Write the fused run here (TREC unless the extension says .jsonl, .csv, .parquet ...).")
@click.option("--name", default=None, help="The fused run's name (its TREC tag); default the method.")
@click.option("--optimize", "optimize", default=None, metavar="METRIC",
              help="Tune --weights for this metric (e.g. nDCG@10) on --train-queries; report the held-out value.")
@click.option("--train-queries", type=click.Path(exists=True, dir_okay=False), default=None,
              help="The training queries: one query id per line (first column; a queries JSONL works too).")
@click.option("--judgments", default=None, help="Judgments (qrels) to evaluate the weightings with.")
@click.option("--search", type=click.Choice(list(SEARCHES)), default="grid", show_default=True,
              help="Weightings tried: a grid of --step on the simplex, or --trials random ones.")
@click.option("--step", type=Number(min=0, max=1, min_open=True), default=0.1, show_default=True,
              help="Grid step of the weights (must divide 1).")
@click.option("--trials", type=click.IntRange(min=1), default=200, show_default=True,
              help="Random weightings tried (the first is equal weights).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of the random search.")
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Format of the --optimize report (standard output).")
@reader_options
@guarded
def fuse_cmd(runs: tuple[str, ...], method: str, norm: str | None, weights_text: str | None, rrf_k: float | None,
             output: Path, name: str | None, optimize: str | None, train_queries: str | None,
             judgments: str | None, search: str, step: float, trials: int, seed: int, fmt: str,
             **kwargs: Any) -> None:
    """Fuse RUNs (two or more) into one run, written to --output.

    Each run is ordered as gainscope evaluates it (score descending, equal scores by doc id descending);
    equal fused scores are ranked by doc id descending. The numbers reproduce ranx's fusion on inputs without
    ties. With --optimize, the weights of wsum or rrf are chosen on --train-queries and the report on standard
    output gives the metric on the training and the held-out queries.
    """
    from gainscope.fusion import fuse
    from gainscope.fusion.optimize import optimize_weights
    from gainscope.io import read_run, write_run
    from gainscope.io.texts import read_query_ids
    from gainscope.render.fusion import render_weight_search

    if len(runs) < 2:
        raise click.UsageError("fuse needs at least two runs")
    weights = number_list(weights_text, "--weights", "0.3,0.7")
    _check(method, weights, optimize, train_queries, judgments)
    if optimize is not None and train_queries is not None and judgments is not None:  # all three, by _check
        judg, run_options = read_judgments_and_run_options(judgments, kwargs)
        loaded = [read_run(r, **run_options) for r in runs]
        result = optimize_weights(judg, loaded, optimize, read_query_ids(train_queries), method=method, norm=norm,
                                  rrf_k=rrf_k, search=search, step=step, trials=trials, seed=seed, name=name)
        write_run(result.run, output)
        click.echo(render_weight_search(result, fmt), nl=False)
        return
    run_options = run_options_from(kwargs)
    loaded = [read_run(r, **run_options) for r in runs]
    fused = fuse(loaded, method, norm=norm, weights=weights, rrf_k=rrf_k, name=name)
    write_run(fused, output)

