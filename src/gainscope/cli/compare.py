"""``gainscope compare JUDGMENTS RUN_A RUN_B ... -m METRIC``: means with bootstrap intervals, deltas to a
baseline, paired tests with corrected p-values, effect sizes and wins/ties/losses (see :mod:`gainscope.compare`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from gainscope.cli.common import (
    Number,
    backend_options,
    bounds_of_files,
    emit,
    evaluate_files,
    guarded,
    policy_options,
    profile_option,
    reader_options,
    split_metrics,
    with_options,
)
from gainscope.compare import TESTS
from gainscope.stats import CI_METHODS, CORRECTIONS

DEFAULT_METRICS = ("nDCG@10", "AP", "RR", "P@10")


def naming_options(fn: Any) -> Any:
    """``--baseline NAME`` and ``--name``, for commands that take several runs."""
    options = [
        click.option("--baseline", default=None, help="Name of the baseline run (default: the first run)."),
        click.option("--name", "names", multiple=True,
                     help="Name the runs, one --name per run in order (default: each run's tag)."),
    ]
    return with_options(fn, options)


def statistics_options(fn: Any) -> Any:
    """The statistics options that ``compare``, ``gate`` and ``report`` share."""
    options = [
        click.option("--test", "tests", multiple=True, type=click.Choice(list(TESTS)),
                     help="Paired test(s) to run; repeat for several. Default: all of t, wilcoxon, randomization, "
                          "bootstrap."),
        click.option("--significance", type=click.Choice(list(TESTS)), default=None,
                     help="The test whose corrected p-value decides significance (default: t, or the first --test)."),
        click.option("--correction", type=click.Choice(list(CORRECTIONS)), default="holm", show_default=True,
                     help="Multiple-comparison correction over every comparison of the report (bh = "
                          "Benjamini-Hochberg)."),
        click.option("--alpha", type=Number(), default=0.05, show_default=True, help="Significance level."),
        click.option("--ci-method", type=click.Choice(list(CI_METHODS)), default="percentile", show_default=True,
                     help="Bootstrap interval: percentile, or bias-corrected and accelerated (bca)."),
        click.option("--level", type=Number(), default=0.95, show_default=True, help="Confidence level of intervals."),
        click.option("--resamples", type=click.IntRange(min=1), default=10000, show_default=True,
                     help="Resamples of the bootstrap intervals, the randomisation and the bootstrap tests."),
        click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
                     help="Seed of every resampling (same seed, same numbers)."),
    ]
    return with_options(fn, options)


def settings_from(kwargs: dict[str, Any]) -> Any:
    """Pop the statistics options from ``kwargs`` into :class:`~gainscope.compare.CompareSettings`."""
    from gainscope.compare import CompareSettings

    tests = kwargs.pop("tests") or tuple(TESTS)
    significance = kwargs.pop("significance") or ("t" if "t" in tests else tests[0])
    if significance not in tests:
        raise click.UsageError(f"--significance {significance} is not among the tests run ({', '.join(tests)}); "
                               f"add --test {significance}")
    return CompareSettings(tests=tuple(tests), significance=significance, correction=kwargs.pop("correction"),
                           alpha=kwargs.pop("alpha"), level=kwargs.pop("level"), ci_method=kwargs.pop("ci_method"),
                           resamples=kwargs.pop("resamples"), seed=kwargs.pop("seed"))


def comparison_of(judgments: str, runs: tuple[str, ...], metrics: tuple[str, ...], kwargs: dict[str, Any],
                  default_metrics: tuple[str, ...] = DEFAULT_METRICS) -> Any:
    """Evaluate the runs and compare them, with every option popped from ``kwargs``."""
    from gainscope.compare import compare_results

    settings, baseline, names = _comparison_options(runs, kwargs)
    results = evaluate_files(judgments, runs, split_metrics(metrics) or list(default_metrics), kwargs, names=names)
    return compare_results(results, baseline=baseline, settings=settings)


def _comparison_options(runs: tuple[str, ...], kwargs: dict[str, Any]) -> tuple[Any, str | None, tuple[str, ...]]:
    """The statistics settings, the baseline and the run names, popped from ``kwargs``."""
    if len(runs) < 2:
        raise click.UsageError("compare needs at least two runs (the first is the baseline unless --baseline)")
    return settings_from(kwargs), kwargs.pop("baseline"), kwargs.pop("names")


def comparison_and_bounds(judgments: str, runs: tuple[str, ...], metrics: tuple[str, ...],
                          kwargs: dict[str, Any]) -> tuple[Any, list[Any]]:
    """As :func:`comparison_of`, with what the unjudged documents could do to each difference
    (:func:`gainscope.bounds.difference_bounds`)."""
    from gainscope.bounds import difference_bounds
    from gainscope.compare import compare_results

    settings, baseline, names = _comparison_options(runs, kwargs)
    found = bounds_of_files(judgments, runs, split_metrics(metrics) or list(DEFAULT_METRICS), kwargs, names=names)
    comparison = compare_results([b.results for b in found], baseline=baseline, settings=settings)
    return comparison, difference_bounds(found, baseline=comparison.baseline)


@click.command("compare")
@click.argument("judgments")
@click.argument("runs", nargs=-1, required=True)
@click.option("-m", "--metric", "metrics", multiple=True,
              help="Metric(s), as for evaluate. Default: nDCG@10 AP RR P@10.")
@naming_options
@statistics_options
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "markdown", "latex", "json", "csv"]),
              default="table", show_default=True, help="Output format.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to this file instead of standard output.")
@click.option("--bounds", is_flag=True,
              help="Also each difference with the runs' unjudged documents within the metric's depth taken as "
                   "relevant, whether its sign could change, and the judged shares (gainscope.bounds). Formats: "
                   "table, markdown, json.")
@profile_option
@policy_options
@reader_options
@backend_options
@guarded
def compare_cmd(judgments: str, runs: tuple[str, ...], metrics: tuple[str, ...], fmt: str, output: Path | None,
                bounds: bool, **kwargs: Any) -> None:
    """Compare RUNs (two or more) against JUDGMENTS: each system's mean and bootstrap interval, and for every
    system but the baseline the paired delta, p-values of paired tests corrected over all comparisons, the
    effect size d_z and wins/ties/losses over queries.

    Queries are paired by id. With the default policies (judged queries without a ranking score 0) every
    query pairs; with --skip-missing or --undefined skip, queries without a value in both runs are left out of
    that comparison, and the output says which.
    """
    from gainscope.render.bounds import COMPARE_BOUNDS_FORMATS, render_comparison_with_bounds
    from gainscope.render.compare import comparison_lines, render_comparison

    if bounds:
        if fmt not in COMPARE_BOUNDS_FORMATS:
            raise click.UsageError(f"--bounds adds to the {', '.join(COMPARE_BOUNDS_FORMATS)} formats; not --format "
                                   f"{fmt}")
        comparison, rows = comparison_and_bounds(judgments, runs, metrics, kwargs)
        emit(render_comparison_with_bounds(comparison, rows, fmt), output)
        return
    comparison = comparison_of(judgments, runs, metrics, kwargs)
    text = render_comparison(comparison, fmt)
    if fmt in ("csv", "latex"):
        for line in comparison_lines(comparison):
            click.echo(f"# {line}", err=True)
    emit(text, output)
