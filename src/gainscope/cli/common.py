"""What every command shares: error handling with exit codes, warnings on stderr, the policy and reader
options.

Exit codes: 0 ok, 1 a gate failed, 2 usage (unknown metric, bad option or policy), 3 invalid input data,
4 an external or I/O failure (a missing optional dependency, an unreadable file).
"""

from __future__ import annotations

import functools
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from gainscope.errors import (
    GainscopeError,
    InputError,
    JudgeError,
    MetricError,
    MissingDependencyError,
    PolicyError,
    SparkError,
    StoreError,
)

__all__ = ["EXIT_INPUT", "EXIT_IO", "EXIT_USAGE", "backend_options", "emit", "guarded", "policy_options",
           "reader_options", "spark_evaluations", "split_metrics", "with_options"]

EXIT_USAGE = 2
EXIT_INPUT = 3
EXIT_IO = 4

F = TypeVar("F", bound=Callable[..., Any])


def _exit_code(exc: BaseException) -> int:
    if isinstance(exc, (MetricError, PolicyError)):
        return EXIT_USAGE
    if isinstance(exc, (MissingDependencyError, JudgeError, StoreError, SparkError)):
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
    """Metric arguments: several per ``-m`` separated by spaces (outside brackets), or one per ``-m``."""
    out: list[str] = []
    for value in values:
        depth = 0
        current = ""
        for ch in value:
            if ch in "({":
                depth += 1
            elif ch in ")}":
                depth -= 1
            if ch.isspace() and depth == 0:
                if current:
                    out.append(current)
                current = ""
            else:
                current += ch
        if current:
            out.append(current)
    return out


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

    judgment_options, options = reading_options(kwargs)
    j = read_judgments(judgments, **judgment_options)
    return j, options


def reading_options(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Pop the reader options from ``kwargs``: the keyword arguments of read_judgments and of read_run."""
    nan = kwargs.pop("nan_score")
    nan_score: str | float = nan
    if nan != "error":
        try:
            nan_score = float(nan)
        except ValueError:
            raise click.BadParameter(f"expected 'error' or a number; got {nan!r}", param_hint="--nan-score") from None
    norm = kwargs.pop("normalize_ids")
    judgment_options = {"format": kwargs.pop("judgments_format"), "on_conflict": kwargs.pop("on_conflict"),
                        "float_grades": kwargs.pop("float_grades"), "normalize_ids": norm}
    options = {"format": kwargs.pop("run_format"), "on_duplicate": kwargs.pop("on_duplicate"),
               "nan_score": nan_score, "normalize_ids": norm}
    return judgment_options, options


def backend_options(fn: F) -> F:
    """Where runs are evaluated: here, or on Apache Spark (``--backend spark``). Named --backend, not
    --engine: in gainscope an engine is a search engine (``gainscope search --engine``)."""
    options = [
        click.option("--backend", type=click.Choice(["local", "spark"]), default="local", show_default=True,
                     help="Evaluate here, or on Apache Spark (runs too large for one machine; same numbers; needs "
                          "pip install 'gainscope[spark]' and Java 17)."),
        click.option("--master", default=None,
                     help="With --backend spark: the Spark master (local[2], spark://host:7077, yarn...). "
                          "Default: local[*]."),
        click.option("--spark-conf", "spark_conf", multiple=True, metavar="KEY=VALUE",
                     help="With --backend spark: a Spark setting (repeat for several), e.g. "
                          "--spark-conf spark.executor.memory=8g."),
        click.option("--partitions", type=click.IntRange(min=1), default=None,
                     help="With --backend spark: partitions of the run (default: spark.sql.shuffle.partitions)."),
    ]
    return with_options(fn, options)


def spark_evaluations(judgments: str, runs: tuple[str, ...], metrics: list[Any], policies: Any,
                      kwargs: dict[str, Any], *, names: tuple[str, ...] = (), relstring: int | None = None) -> Any:
    """Evaluate on Spark with the reader and backend options popped from ``kwargs`` (one SparkEvaluation per
    run), when ``--backend spark``; None (nothing popped but the backend options) otherwise."""
    backend, master = kwargs.pop("backend", "local"), kwargs.pop("master", None)
    conf_items, partitions = kwargs.pop("spark_conf", ()), kwargs.pop("partitions", None)
    if backend != "spark":
        given = [flag for flag, value in (("--master", master), ("--spark-conf", conf_items),
                                          ("--partitions", partitions)) if value]
        if given:
            raise click.UsageError(f"{', '.join(given)} only apply with --backend spark")
        return None
    conf: dict[str, str] = {}
    for item in conf_items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected KEY=VALUE; got {item!r}", param_hint="--spark-conf")
        conf[key.strip()] = value
    judgment_options, run_options = reading_options(kwargs)
    from gainscope.spark import evaluate_runs, session

    return evaluate_runs(judgments, runs, metrics, spark=session(master, conf), policies=policies,
                         names=list(names) if names else None, judgments_format=judgment_options["format"],
                         on_conflict=judgment_options["on_conflict"], float_grades=judgment_options["float_grades"],
                         partitions=partitions, relstring=relstring, **run_options)


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
    on_spark = spark_evaluations(judgments, runs, metrics, policies, kwargs, names=names)
    if on_spark is not None:
        return [e.results for e in on_spark]
    judg, run_options = read_judgments_and_run_options(judgments, kwargs)
    prepared = PreparedJudgments.of(judg, policies.negative_grades)
    out = []
    for i, run in enumerate(runs):
        jr, run_notes = judged_run_of(prepared, run, policies, name=names[i] if names else None, **run_options)
        out.append(compute(jr, metrics, notes=tuple(judg.notes) + run_notes))
    return out
