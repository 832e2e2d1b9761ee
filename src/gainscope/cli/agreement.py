"""``gainscope agreement HUMAN_QRELS LLM_QRELS [--run RUN ...]``: how far two label sets agree, per (query, doc)
pair (kappas, alphas, confusion matrix) and, with runs, between the system rankings they induce (Kendall's tau-b,
tau_AP, Spearman's rho). See :mod:`gainscope.agreement` for the definitions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from gainscope.agreement import Agreement, LabelAgreement, RankingAgreement
from gainscope.cli.common import (
    guarded,
    policies_from,
    policy_options,
    read_judgments_and_run_options,
    reader_options,
    split_metrics,
)
from gainscope.render.text import fmt_number, text_table

__all__ = ["AGREEMENT_FORMATS", "agreement_cmd", "render_agreement"]

AGREEMENT_FORMATS = ("table", "markdown", "json")
DEFAULT_METRICS = ("nDCG@10",)

DEFINITIONS = (
    "kappa = 1 - sum(w O) / sum(w E) over category indices i, j of k: unweighted w = [i != j], "
    "linear |i - j| / (k - 1), quadratic ((i - j) / (k - 1))^2",
    "alpha: Krippendorff (2011) from the coincidence matrix; ordinal distances from the pairable-value frequencies",
    "tau-b: Kendall's tau with the tie correction; tau_AP: Yilmaz et al. (2008), symmetric (mean of both "
    "directions), ties as tau_AP-b (Urbano & Marrero 2017); rho: Pearson correlation of average ranks",
)


# ---------------------------------------------------------------------------------------------- rendering
def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _grade(c: float) -> str:
    return f"{c:g}"


def coverage_lines(labels: LabelAgreement, names: tuple[str, str]) -> list[str]:
    """How many pairs were compared and which were judged by one set only."""
    lab = labels
    lines = [f"pairs judged in both: {lab.n} ({_share(lab.n, lab.judged_a)} of {names[0]}'s {lab.judged_a}, "
             f"{_share(lab.n, lab.judged_b)} of {names[1]}'s {lab.judged_b})"]
    for name, count, examples in ((names[0], lab.only_in_a, lab.only_in_a_examples),
                                  (names[1], lab.only_in_b, lab.only_in_b_examples)):
        shown = f": {', '.join(examples)}{', ...' if count > len(examples) else ''}" if count else ""
        lines.append(f"only in {name}: {_plural(count, 'pair')}{shown} (not compared)")
    return lines


def _statistic_rows(labels: LabelAgreement) -> list[list[str]]:
    rows = [["observed agreement", fmt_number(labels.observed_agreement)]]
    rows += [[c.name, fmt_number(c.value)] for c in labels.coefficients]
    return rows


def _undefined_lines(labels: LabelAgreement, rankings: tuple[RankingAgreement, ...]) -> list[str]:
    lines = [f"{c.name}: undefined: {c.reason}" for c in labels.coefficients if not c.defined]
    for r in rankings:
        lines += [f"{r.metric}: {c.name}: undefined: {c.reason}" for c in (r.kendall, r.tau_ap, r.spearman)
                  if not c.defined]
    return lines


def _confusion_rows(labels: LabelAgreement, names: tuple[str, str]) -> tuple[list[str], list[list[str]]]:
    header = [f"{names[0]} \\ {names[1]}", *[_grade(c) for c in labels.categories], "total"]
    rows = [[_grade(c), *[str(v) for v in labels.confusion[i].tolist()], str(int(labels.confusion[i].sum()))]
            for i, c in enumerate(labels.categories)]
    rows.append(["total", *[str(v) for v in labels.confusion.sum(axis=0).tolist()], str(labels.n)])
    return header, rows


def _leaderboard_rows(r: RankingAgreement, names: tuple[str, str]) -> tuple[list[str], list[list[str]]]:
    header = ["#", names[0], r.metric, "#", names[1], r.metric]
    rows = [[str(ra), sa, fmt_number(ma), str(rb), sb, fmt_number(mb)]
            for (ra, sa, ma), (rb, sb, mb) in zip(r.leaderboard("a"), r.leaderboard("b"), strict=True)]
    return header, rows


def correlation_line(r: RankingAgreement, names: tuple[str, str]) -> str:
    """``Kendall tau-b 0.6667 · tau_AP 0.5556 · Spearman rho 0.8000 (4 systems; tau-b: 5 concordant, ...)``."""
    parts = [f"{c.name} {fmt_number(c.value)}" for c in (r.kendall, r.tau_ap, r.spearman)]
    pairs = r.kendall.detail.replace("tied in x", f"tied under {names[0]}").replace("tied in y",
                                                                                   f"tied under {names[1]}")
    return " · ".join(parts) + f" ({_plural(len(r.systems), 'system')}; {pairs})"


def _settings_lines(a: Agreement) -> list[str]:
    pairs: list[tuple[str, str]] = [("threshold", f"binarised kappa counts grade >= "
                                                  f"{_grade(a.labels.threshold)} as relevant")]
    pairs += [("definition", d) for d in DEFINITIONS]
    if a.policies is not None:
        pairs += a.policies.describe()
    pairs += [("note", n) for n in a.notes]
    width = max(len(k) for k, _ in pairs)
    return ["conventions:"] + [f"  {k.ljust(width)}  {v}" for k, v in pairs]


def _table(a: Agreement) -> str:
    blocks = ["\n".join(coverage_lines(a.labels, a.names)),
              text_table(["label agreement", "value"], _statistic_rows(a.labels))]
    undefined = _undefined_lines(a.labels, a.rankings)
    if undefined:
        blocks.append("\n".join(undefined))
    header, rows = _confusion_rows(a.labels, a.names)
    blocks.append(f"confusion matrix (rows {a.names[0]}, columns {a.names[1]}):\n" + text_table(header, rows))
    for r in a.rankings:
        header, rows = _leaderboard_rows(r, a.names)
        table = text_table(header, rows, align=["r", "l", "r", "r", "l", "r"])
        blocks.append(f"systems by {r.metric}:\n{table}\n{correlation_line(r, a.names)}")
    blocks.append("\n".join(_settings_lines(a)))
    return "\n\n".join(blocks) + "\n"


def _markdown(a: Agreement) -> str:
    from gainscope.render.results import _markdown as md_table

    blocks = ["**coverage**\n\n" + "\n".join(f"- {line}" for line in coverage_lines(a.labels, a.names)),
              md_table(["label agreement", "value"], _statistic_rows(a.labels))]
    undefined = _undefined_lines(a.labels, a.rankings)
    if undefined:
        blocks.append("\n".join(f"- {line}" for line in undefined))
    header, rows = _confusion_rows(a.labels, a.names)
    blocks.append(f"**confusion matrix** (rows {a.names[0]}, columns {a.names[1]})\n\n" + md_table(header, rows))
    for r in a.rankings:
        header, rows = _leaderboard_rows(r, a.names)
        blocks.append(f"**systems by {r.metric}**\n\n{md_table(header, rows)}\n\n{correlation_line(r, a.names)}")
    conv = _settings_lines(a)
    blocks.append("**conventions**\n\n" + "\n".join(f"- {line.strip()}" for line in conv[1:]))
    return "\n\n".join(blocks) + "\n"


def render_agreement(a: Agreement, fmt: str) -> str:
    """Render ``a`` as ``table``, ``markdown`` or ``json``."""
    if fmt == "table":
        return _table(a)
    if fmt == "markdown":
        return _markdown(a)
    if fmt == "json":
        return a.to_json(indent=2) + "\n"
    raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(AGREEMENT_FORMATS)}")


# ---------------------------------------------------------------------------------------------- command
def _parse_categories(text: str | None) -> list[float] | None:
    if text is None:
        return None
    try:
        return [float(part) for part in text.replace(",", " ").split()]
    except ValueError:
        raise click.BadParameter(f"expected grades separated by commas, e.g. 0,1,2,3; got {text!r}",
                                 param_hint="--categories") from None


@click.command("agreement")
@click.argument("human")
@click.argument("llm")
@click.option("--run", "runs", multiple=True,
              help="A run to rank under both label sets; repeat (at least 2 runs, 3 for tau_AP).")
@click.option("--name", "names", multiple=True, help="Name the runs, one --name per --run in order.")
@click.option("-m", "--metric", "metrics", multiple=True,
              help="Metric(s) to rank the runs by, as for evaluate. Default: nDCG@10.")
@click.option("--threshold", type=float, default=2, show_default=True,
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
    from gainscope.core.policies import Policies
    from gainscope.io import read_run

    metric_names = split_metrics(metrics)
    if metric_names and not runs:
        raise click.UsageError("-m/--metric ranks runs under both label sets; give the runs with --run RUN")
    if len(runs) == 1:
        raise click.UsageError("ranking systems needs at least 2 runs (3 for tau_AP); give another --run")
    if names and len(names) != len(runs):
        raise click.UsageError(f"{len(names)} --name value(s) for {len(runs)} runs; give one name per run, in order")
    policies = Policies.from_kwargs(**policies_from(kwargs))
    human_j, run_options = read_judgments_and_run_options(human, dict(kwargs))
    llm_j, _ = read_judgments_and_run_options(llm, kwargs)
    run_objects = [read_run(r, **run_options) for r in runs]
    result = agreement(human_j, llm_j, runs=run_objects, metrics=metric_names or list(DEFAULT_METRICS),
                       threshold=threshold, categories=_parse_categories(categories), names=names or None,
                       policies=policies)
    text = render_agreement(result, fmt)
    if output is not None:
        output.write_text(text, encoding="utf-8")
    else:
        click.echo(text, nl=False)
