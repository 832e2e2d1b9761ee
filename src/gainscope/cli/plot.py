"""``gainscope plot JUDGMENTS RUN... --output-dir DIR``: draw the evaluation of runs as PNG and SVG files.

Kinds (``--kind``, repeatable, default ``all``): ``cutoff`` (the ``--family`` at every ``--cutoffs`` value),
``delta`` (per-query differences against ``--baseline``, one file per metric), ``distribution`` (per-query
values, one file per metric), ``pr`` (interpolated precision-recall), ``radar`` (the metrics' means) and
``sensitivity`` (each metric as the only relevant document moves down a ranking). With ``all``, kinds that
cannot be drawn (a delta with one run, a radar with fewer than 3 metrics) are skipped with a note on stderr;
asked for by name, they are a usage error. The paths written are printed on stdout, one per line.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
from gainscope.cli.compare import naming_options
from gainscope.cli.evaluate import DEFAULT_METRICS
from gainscope.cli.spelling import Respelled

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from gainscope.core.policies import Policies
    from gainscope.results import Results

__all__ = ["KINDS", "plot_cmd"]

KINDS = ("cutoff", "delta", "distribution", "pr", "radar", "sensitivity")

Plan = list[tuple[str, Callable[[], "Figure"]]]


def _cutoffs(ctx: click.Context, param: click.Parameter, value: str) -> list[int]:
    """``"1,3,5,10,20"`` -> ``[1, 3, 5, 10, 20]``: distinct whole numbers >= 1, sorted."""
    try:
        ks = sorted({int(k) for k in value.split(",") if k.strip()})
    except ValueError:
        raise click.BadParameter(f"expected whole numbers separated by commas, e.g. 1,3,5,10; got {value!r}") \
            from None
    if not ks or ks[0] < 1:
        raise click.BadParameter(f"cutoffs must be whole numbers >= 1; got {value!r}")
    return ks


def _slug(name: str) -> str:
    """A file-name-safe form of a metric name: ``nDCG@10`` stays, ``P(rel=2)@5`` becomes ``P_rel_2_@5``."""
    return re.sub(r"[^A-Za-z0-9@.-]+", "_", name).strip("_")


def _plan(kinds: list[str], results: list[Results], metrics: list[str], *, baseline: str, family: str,
          cutoffs: list[int], policies: Policies) -> tuple[Plan, list[str]]:
    """The figures to draw, as (file stem, builder), and why any asked-for kind cannot be drawn."""
    from gainscope.render import plots

    plan: Plan = []
    skipped: list[str] = []
    if "cutoff" in kinds:
        if len(cutoffs) < 2:
            skipped.append(f"cutoff: needs at least 2 --cutoffs; got {len(cutoffs)}")
        else:
            plan.append((f"cutoff-{_slug(family)}", functools.partial(plots.cutoff_curve, results, family)))
    if "delta" in kinds:
        if len(results) < 2:
            skipped.append("delta: needs at least 2 runs (the baseline and another)")
        else:
            plan += [(f"delta-{_slug(m)}", functools.partial(plots.delta_bars, results, baseline, m)) for m in metrics]
    if "distribution" in kinds:
        plan += [(f"distribution-{_slug(m)}", functools.partial(plots.distributions, results, m)) for m in metrics]
    if "pr" in kinds:
        plan.append(("pr", functools.partial(plots.pr_curves, results)))
    if "radar" in kinds:
        if len(metrics) < 3:
            skipped.append(f"radar: needs at least 3 metrics (-m); got {len(metrics)}")
        else:
            plan.append(("radar", functools.partial(plots.radar, results, metrics)))
    if "sensitivity" in kinds:
        plan.append(("sensitivity", functools.partial(plots.position_sensitivity, metrics, policies=policies)))
    return plan, skipped


@click.command("plot")
@click.argument("judgments")
@click.argument("runs", nargs=-1, required=True)
@click.option("-m", "--metric", "metrics", multiple=True,
              help="Metric(s) for the delta, distribution, radar and sensitivity plots: nDCG@10, AP, RR ... or "
                   "trec_eval names. Repeat -m or separate with spaces or commas. Default: nDCG@10 AP RR P@10 R@100.")
@click.option("--kind", "kinds", type=click.Choice([*KINDS, "all"]), multiple=True, default=("all",),
              show_default=True, help="Which plots to draw (repeatable).")
@click.option("--cutoffs", default="1,3,5,10,20", show_default=True, callback=_cutoffs,
              help="Cutoffs k of the cutoff curve, separated by commas.")
@click.option("--family", default="nDCG", show_default=True,
              help="Metric family of the cutoff curve, without its cutoff: nDCG, P, R, RR, 'nDCG(gain=exponential)'.")
@click.option("--image-format", "formats", cls=Respelled, old=("--format",), type=click.Choice(["png", "svg"]),
              multiple=True, default=("png", "svg"), show_default=True, help="Image file format(s) (repeatable).")
@click.option("--output-dir", cls=Respelled, old=("-o",), required=True,
              type=click.Path(file_okay=False, path_type=Path), help="Directory for the files (created if missing).")
@naming_options
@profile_option
@policy_options
@reader_options
@guarded
def plot_cmd(judgments: str, runs: tuple[str, ...], metrics: tuple[str, ...], baseline: str | None,
             names: tuple[str, ...], kinds: tuple[str, ...], cutoffs: list[int], family: str,
             formats: tuple[str, ...], output_dir: Path, **kwargs: Any) -> None:
    """Plot the evaluation of RUN(s) against JUDGMENTS into files in the output directory.

    Needs matplotlib (pip install 'gainscope[plots]'). Conventions default to trec_eval's, as in evaluate.
    """
    from gainscope.evaluation import resolve_metrics
    from gainscope.render import plots

    chosen = list(KINDS) if "all" in kinds else list(dict.fromkeys(kinds))
    conventions = conventions_from(kwargs)
    family = conventions.family(family)
    shown = [str(m) for m in conventions.resolve(split_metrics(metrics) or list(DEFAULT_METRICS))]
    extra = (plots.cutoff_metrics(family, cutoffs) if "cutoff" in chosen else []) \
        + (plots.pr_metrics() if "pr" in chosen else [])
    # canonical names: resolved without the profile they are the very metrics the profile gave
    results = evaluate_files(judgments, runs, resolve_metrics(list(dict.fromkeys(shown + extra))), kwargs,
                             names=names, conventions=conventions)
    policies = results[0].policies
    run_names = [r.run_name for r in results]
    if baseline is not None and baseline not in run_names:
        raise click.BadParameter(f"no run is named {baseline!r}; the runs are {', '.join(run_names)}",
                                 param_hint="--baseline")
    plan, skipped = _plan(chosen, results, shown, baseline=baseline or run_names[0], family=family, cutoffs=cutoffs,
                           policies=policies)
    if skipped and "all" not in kinds:
        raise click.UsageError("; ".join(skipped))
    for reason in skipped:
        click.echo(f"note: skipped {reason}", err=True)
    from gainscope.render.results import profile_pairs

    for key, text in profile_pairs(conventions.use):  # the figures' names carry the parameters it set
        click.echo(f"note: {key}: {text}", err=True)
    output_dir.mkdir(parents=True, exist_ok=True)
    for stem, build in plan:
        for path in plots.save(build(), output_dir / stem, formats):
            click.echo(str(path))
