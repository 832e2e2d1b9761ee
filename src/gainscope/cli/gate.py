"""``gainscope gate JUDGMENTS RUN --baseline-run BASELINE_RUN --fail-if RULE ...``: exit 1 with a report of what
failed when a rule fires or a per-query assertion does not hold, 0 when all holds (see :mod:`gainscope.gate`)."""

from __future__ import annotations

import sys
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
from gainscope.cli.compare import settings_from, statistics_options
from gainscope.cli.spelling import Respelled
from gainscope.errors import spell

EXIT_GATE_FAILED = 1


def _baseline_file(value: str) -> str | None:
    """The old ``gate --baseline FILE``: still taken when FILE is a file; otherwise it reads as a run's name,
    which ``--baseline`` means in every other command, and gate has none to choose from."""
    if value == "-" or Path(value).is_file():
        return None
    return (f"--baseline names a run in gainscope commands; gate compares with a baseline run FILE: give "
            f"--baseline-run FILE (no file {value!r})")


@click.command("gate")
@click.argument("judgments")
@click.argument("run")
@click.option("--baseline-run", "baseline_run", cls=Respelled, old=("--baseline",), accept_old=_baseline_file,
              default=None, metavar="FILE",
              help="The baseline run file that delta and significance rules compare with.")
@click.option("--fail-if", "rules", multiple=True,
              help="Fail when this holds: 'nDCG@10 < 0.35', 'delta(nDCG@10) < -0.01', 'reldelta(AP) < -2%', "
                   "'significant_loss(nDCG@10)'. Repeat for several.")
@click.option("--assertions", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="File of per-query assertions that must hold, one per line: 'q12 nDCG@10 >= 0.8'.")
@click.option("--fail-on-significant-loss", is_flag=True,
              help="Add significant_loss(M) for every metric the gate evaluates (needs --baseline).")
@click.option("-m", "--metric", "metrics", multiple=True,
              help="More metrics to evaluate (and compare, with --fail-on-significant-loss).")
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text",
              show_default=True, help="Report format (standard output).")
@click.option("--junit", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the checks as JUnit XML to this file.")
@statistics_options
@profile_option
@policy_options
@reader_options
@guarded
def gate_cmd(judgments: str, run: str, baseline_run: str | None, rules: tuple[str, ...], assertions: Path | None,
             fail_on_significant_loss: bool, metrics: tuple[str, ...], fmt: str, junit: Path | None,
             **kwargs: Any) -> None:
    """Gate RUN for CI: exit 1 and print what failed when any --fail-if rule holds or any per-query assertion
    does not; exit 0 when all holds.

    Delta rules pair queries with the baseline by id; significance uses the comparison's test and correction
    (paired t, Holm, alpha 0.05 unless set), corrected over every metric the gate evaluates.
    """
    from gainscope.evaluation import resolve_metrics
    from gainscope.gate import gate, metrics_of, parse_rule, read_assertions
    from gainscope.render.gate import render_gate, render_junit

    settings = settings_from(kwargs)
    conventions = conventions_from(kwargs)
    parsed = [parse_rule(r, resolve=conventions.resolve) for r in rules]
    checks = read_assertions(assertions, resolve=conventions.resolve) if assertions is not None else []
    extra = [str(m) for m in conventions.resolve(split_metrics(metrics))] if metrics else []
    names = list(dict.fromkeys([*metrics_of(parsed, checks), *extra]))
    if fail_on_significant_loss:
        if baseline_run is None:
            raise click.UsageError("--fail-on-significant-loss compares with a baseline; add --baseline-run FILE")
        if not names:
            raise click.UsageError("--fail-on-significant-loss checks the metrics the gate evaluates, and it evaluates "
                                   "none: name them with -m (e.g. -m nDCG@10) or in --fail-if rules")
        known = {r.text for r in parsed}
        parsed += [parse_rule(f"significant_loss({m})", resolve=resolve_metrics) for m in names
                   if f"significant_loss({m})" not in known]  # canonical names: they need no profile
    if not parsed and not checks:
        raise click.UsageError("nothing to check: give --fail-if rules, --assertions or --fail-on-significant-loss")
    files = (run,) if baseline_run is None else (run, baseline_run)
    # the names are canonical: resolved without the profile they are the very metrics the profile gave
    results = evaluate_files(judgments, files, resolve_metrics(names), kwargs, conventions=conventions)
    report = gate(results[0], parsed, checks, baseline=results[1] if baseline_run else None, settings=settings)
    click.echo(spell(render_gate(report, fmt), "cli"), nl=False)
    if junit is not None:
        from gainscope.io.writers import write_file

        write_file(junit, render_junit(report))
    if not report.passed:
        sys.exit(EXIT_GATE_FAILED)
