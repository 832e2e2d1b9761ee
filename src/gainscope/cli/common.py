"""What every command shares: error handling with exit codes, warnings on stderr, the policy and reader
options.

Exit codes: 0 ok, 1 a gate failed, 2 usage (unknown metric, bad option or policy), 3 invalid input data,
4 an external or I/O failure (a missing optional dependency, an unreadable file).
"""

from __future__ import annotations

import functools
import re
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from gainscope.errors import GainscopeError, InputError, JudgeError, MetricError, MissingDependencyError, PolicyError

__all__ = ["EXIT_INPUT", "EXIT_IO", "EXIT_USAGE", "emit", "guarded", "policy_options", "reader_options",
           "split_metrics", "with_options"]

EXIT_USAGE = 2
EXIT_INPUT = 3
EXIT_IO = 4

F = TypeVar("F", bound=Callable[..., Any])


def _exit_code(exc: BaseException) -> int:
    if isinstance(exc, (MetricError, PolicyError)):
        return EXIT_USAGE
    if isinstance(exc, (MissingDependencyError, JudgeError)):
        return EXIT_IO
    if isinstance(exc, InputError):
        return EXIT_INPUT
    if isinstance(exc, (FileNotFoundError, IsADirectoryError, PermissionError)):
        return EXIT_IO
    return EXIT_INPUT


def guarded(fn: F) -> F:
    """Run a command: warnings go to stderr as ``warning: ...``, our errors become one line and an exit
    code, never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = fn(*args, **kwargs)
            except (GainscopeError, OSError) as exc:
                _flush(caught)
                message = str(exc) if isinstance(exc, GainscopeError) else f"{exc.strerror}: {exc.filename}"
                click.echo(f"error: {message}", err=True)
                sys.exit(_exit_code(exc))
        _flush(caught)
        return result

    return wrapper  # type: ignore[return-value]


def _flush(caught: list[warnings.WarningMessage]) -> None:
    seen: set[str] = set()
    for w in caught:
        text = str(w.message)
        if text not in seen:
            seen.add(text)
            click.echo(f"warning: {text}", err=True)


def with_options(fn: F, options: Sequence[Callable[[Any], Any]]) -> F:
    """``fn`` decorated with click ``options``, which ``--help`` then lists in the order given."""
    for opt in reversed(options):
        fn = opt(fn)
    return fn


def emit(text: str, output: Path | None) -> None:
    """The rendered result to the file ``output``, or to standard output."""
    if output is not None:
        output.write_text(text, encoding="utf-8")
    else:
        click.echo(text, nl=False)


def split_metrics(values: tuple[str, ...]) -> list[str]:
    """Metric arguments: one or several per ``-m``, separated by spaces or by commas (ir_measures users write
    ``"nDCG@10,AP"``), outside brackets. A comma stays inside a metric when what follows it is not a metric
    name: trec_eval's parameter lists (``P.5,10``, ``ndcg.1=3,2=9``, ``rbp.p=0.8``, ``utility.2,-1,0,0``)."""
    out: list[str] = []
    for value in values:
        depth = 0
        current = ""
        for i, ch in enumerate(value):
            if ch in "({":
                depth += 1
            elif ch in ")}":
                depth -= 1
            if depth == 0 and (ch.isspace() or (ch == "," and _starts_metric(value[i + 1:]))):
                if current:
                    out.append(current)
                current = ""
            else:
                current += ch
        if current:
            out.append(current)
    return out


def _starts_metric(text: str) -> bool:
    """``text`` (after a comma) begins a metric name (``AP``, ``11pt_avg``) or nothing (a trailing comma), not
    a trec_eval parameter (``10``, ``2=9``, ``.5``, ``p=0.8``, ``-1``, ``1e3``)."""
    text = text.lstrip()
    if not text or text[0] == ",":
        return True
    if re.match(r"[A-Za-z_]", text):
        return not re.match(r"[A-Za-z_]\w*\s*=", text)
    return bool(re.match(r"\d+[A-DF-Za-df-z_]", text))


def policy_options(fn: F) -> F:
    """The evaluation policies as options (trec_eval's short flags where it has them)."""
    options = [
        click.option("-c", "--complete", is_flag=True,
                     help="Average over every judged query, scoring missing ones 0 (trec_eval -c). The default."),
        click.option("--skip-missing", is_flag=True,
                     help="Leave judged queries without a ranking out instead of scoring them 0."),
        click.option("-l", "--relevance-level", type=float, default=1.0, show_default=True,
                     help="Minimum grade counted as relevant by binary metrics (trec_eval -l)."),
        click.option("-M", "--depth", type=click.IntRange(min=1), default=None,
                     help="Keep only the first N documents of each ranking (trec_eval -M)."),
        click.option("-J", "--judged-only", is_flag=True,
                     help="Drop unjudged documents before scoring (trec_eval -J)."),
        click.option("--ties", type=click.Choice(["trec_eval", "rank", "average"]), default="trec_eval",
                     show_default=True, help="Order of tied scores: doc id descending as trec_eval, the order "
                     "given (rank column), or averaged gains."),
        click.option("--negative-grades", type=click.Choice(["unjudged", "nonrelevant"]), default="unjudged",
                     show_default=True, help="What a negative grade means."),
        click.option("--undefined", type=click.Choice(["zero", "skip"]), default="zero", show_default=True,
                     help="Undefined values (no relevant document): 0 in the mean, or left out."),
    ]
    return with_options(fn, options)


def policies_from(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Pop the policy options from a command's kwargs into Policies keyword arguments."""
    complete = kwargs.pop("complete")
    skip = kwargs.pop("skip_missing")
    if complete and skip:
        raise click.UsageError("-c/--complete and --skip-missing contradict each other")
    return {
        "missing_queries": "skip" if skip else "zero",
        "relevance_level": kwargs.pop("relevance_level"),
        "depth": kwargs.pop("depth"),
        "judged_only": kwargs.pop("judged_only"),
        "ties": kwargs.pop("ties"),
        "negative_grades": kwargs.pop("negative_grades"),
        "undefined": kwargs.pop("undefined"),
    }


def reader_options(fn: F) -> F:
    """How judgments and runs are read."""
    options = [
        click.option("--judgments-format", default=None,
                     help="Force the judgments format (trec, qrels3, jsonl, json, csv, tsv, beir, parquet)."),
        click.option("--run-format", default=None,
                     help="Force the run format (trec, msmarco, jsonl, json, csv, tsv, parquet)."),
        click.option("--on-duplicate", type=click.Choice(["error", "first", "max"]), default="error",
                     show_default=True, help="A doc repeated within a query of a run."),
        click.option("--on-conflict", type=click.Choice(["error", "max", "min", "first", "last"]), default="error",
                     show_default=True, help="A doc judged twice with different grades."),
        click.option("--float-grades", is_flag=True, help="Accept fractional grades (never truncated)."),
        click.option("--nan-score", default="error", show_default=True,
                     help="What a NaN score becomes: 'error', or a number such as -inf."),
        click.option("--normalize-ids", type=click.Choice(["NFC"]), default=None,
                     help="Normalise ids to Unicode NFC before matching."),
    ]
    return with_options(fn, options)


def read_inputs(judgments: str, runs: tuple[str, ...], kwargs: dict[str, Any]) -> tuple[Any, list[Any]]:
    """Read judgments and runs with the reader options popped from ``kwargs``."""
    j, options = read_judgments_and_run_options(judgments, kwargs)
    from gainscope.io import read_run

    return j, [read_run(r, **options) for r in runs]


def read_judgments_and_run_options(judgments: str, kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """Read the judgments with the reader options popped from ``kwargs``; return the run reading options."""
    from gainscope.io import read_judgments

    nan = kwargs.pop("nan_score")
    nan_score: str | float = nan
    if nan != "error":
        try:
            nan_score = float(nan)
        except ValueError:
            raise click.BadParameter(f"expected 'error' or a number; got {nan!r}", param_hint="--nan-score") from None
    norm = kwargs.pop("normalize_ids")
    j = read_judgments(judgments, format=kwargs.pop("judgments_format"), on_conflict=kwargs.pop("on_conflict"),
                       float_grades=kwargs.pop("float_grades"), normalize_ids=norm)
    options = {"format": kwargs.pop("run_format"), "on_duplicate": kwargs.pop("on_duplicate"),
               "nan_score": nan_score, "normalize_ids": norm}
    return j, options


def evaluate_files(judgments: str, runs: tuple[str, ...], metrics: list[Any], kwargs: dict[str, Any], *,
                   names: tuple[str, ...] = ()) -> list[Any]:
    """Evaluate run files against a judgments file with the policy and reader options popped from ``kwargs``:
    judgments read and prepared once, each run through the C scanner when it applies. ``names`` (one per run,
    or none) override the runs' names. Returns one :class:`~gainscope.results.Results` per run."""
    from gainscope.core.judged_run import PreparedJudgments
    from gainscope.core.policies import Policies
    from gainscope.evaluation import compute
    from gainscope.io.scan import judged_run_of

    if names and len(names) != len(runs):
        raise click.UsageError(f"{len(names)} --name value(s) for {len(runs)} runs; give one name per run, in order")
    policies = Policies.from_kwargs(**policies_from(kwargs))
    for m in metrics:
        m.check_policies(policies)
    judg, run_options = read_judgments_and_run_options(judgments, kwargs)
    prepared = PreparedJudgments.of(judg, policies.negative_grades)
    out = []
    for i, run in enumerate(runs):
        jr, run_notes = judged_run_of(prepared, run, policies, name=names[i] if names else None, **run_options)
        out.append(compute(jr, metrics, notes=tuple(judg.notes) + run_notes))
    return out
