"""What every command shares: error handling with exit codes, warnings on stderr, the policy and reader
options.

Exit codes (the rule of :mod:`gainscope.errors`): 0 ok, 1 a gate failed, 2 usage (a bad option, an unknown
metric or policy), 3 invalid input data (a file read whose content cannot be used), 4 I/O or external failure
(a file that cannot be opened, read or written -- a missing input file included --, a judge or a judge store
that failed, a missing optional dependency). Messages name options as flags (``--on-duplicate first``), see
:func:`gainscope.errors.option`.
"""

from __future__ import annotations

import contextlib
import functools
import math
import re
import sys
import warnings
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import click

from gainscope.errors import (
    EngineError,
    FileAccessError,
    GainscopeError,
    InputError,
    JudgeError,
    MetricError,
    MissingDependencyError,
    PolicyError,
    SparkError,
    StoreError,
    about,
    spell,
)

__all__ = ["EXIT_INPUT", "EXIT_IO", "EXIT_USAGE", "Conventions", "Number", "backend_options", "bounds_of_files",
           "conventions_from", "database_option", "emit", "guarded", "number_list", "policy_options",
           "profile_option", "rating_scale", "reader_options", "run_options_from", "spark_evaluations",
           "split_metrics", "with_options"]

EXIT_USAGE = 2
EXIT_INPUT = 3
EXIT_IO = 4

F = TypeVar("F", bound=Callable[..., Any])


def _exit_code(exc: BaseException) -> int:
    if isinstance(exc, (MetricError, PolicyError)):
        return EXIT_USAGE
    if isinstance(exc, (MissingDependencyError, JudgeError, EngineError, StoreError, FileAccessError, OSError,
                        SparkError)):
        return EXIT_IO
    if isinstance(exc, InputError):
        return EXIT_INPUT
    return EXIT_INPUT


def _os_message(exc: OSError) -> str:
    """An operating-system error as one line naming the file when it is known."""
    what = exc.strerror or str(exc) or type(exc).__name__
    return f"{exc.filename}: {what}" if exc.filename else what


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
                message = spell(exc, "cli") if isinstance(exc, GainscopeError) else _os_message(exc)
                click.echo(f"error: {message}", err=True)
                sys.exit(_exit_code(exc))
        _flush(caught)
        return result

    return wrapper  # type: ignore[return-value]


def _flush(caught: list[warnings.WarningMessage]) -> None:
    seen: set[str] = set()
    for w in caught:
        text = spell(w.message, "cli")
        if text not in seen:
            seen.add(text)
            click.echo(f"warning: {text}", err=True)


#: the sentence a command's help ends with when it takes the shared reading or convention options
SEE_INPUTS = "Reading options and conventions, explained once for every command: gainscope help inputs."


def see_inputs(fn: F) -> F:
    """``fn``, whose docstring (the command's help) ends with :data:`SEE_INPUTS` (once)."""
    import inspect

    doc = inspect.cleandoc(fn.__doc__ or "")
    if SEE_INPUTS not in doc:
        fn.__doc__ = f"{doc}\n\n{SEE_INPUTS}"
    return fn


def with_options(fn: F, options: Sequence[Callable[[Any], Any]]) -> F:
    """``fn`` decorated with click ``options``, which ``--help`` then lists in the order given."""
    for opt in reversed(options):
        fn = opt(fn)
    return fn


def emit(text: str, output: Path | None) -> None:
    """The rendered result to the file ``output``, or to standard output, with the options it names spelled as
    flags (:func:`gainscope.errors.spell`)."""
    text = spell(text, "cli")
    if output is not None:
        from gainscope.io.writers import write_file

        write_file(output, text)
    else:
        click.echo(text, nl=False)


def number_list(text: str | None, flag: str, example: str) -> list[float] | None:
    """Finite numbers separated by commas (or spaces) given to ``flag`` (None when the flag is not given); an empty
    item (``,1`` or ``1,,2``) is refused rather than dropped, since the position of each number counts."""
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",")] if "," in text else text.split()
    try:
        numbers = [float(part) for part in parts]
    except ValueError:
        numbers = []
    if not numbers or not all(math.isfinite(n) for n in numbers):
        raise click.BadParameter(f"expected finite numbers separated by commas, such as {example}; got {text!r}",
                                 param_hint=flag)
    return numbers


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


class Number(click.FloatRange):
    """A float option that is a finite number, within the range given (as :class:`click.FloatRange`): ``nan``
    and ``inf``, which Python's ``float`` reads and every range check lets through (NaN compares false), are
    refused in the option's own name."""

    name = "number"

    def _describe_range(self) -> str:
        return "" if self.min is None and self.max is None else super()._describe_range()

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


def _level(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """A relevance level: a finite number, or ``positive`` (any grade > 0)."""
    if value is None or value == "positive":
        return value
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise click.BadParameter(f"expected a number or 'positive' (any grade > 0); got {value!r}")
    return number


def profile_option(fn: F) -> F:
    """``--profile``, for the commands that evaluate runs and echo the profile (read with
    :func:`conventions_from`)."""
    from gainscope.metrics.profiles import PROFILES

    return click.option("--profile", type=click.Choice(list(PROFILES)), default=None,
                        help="Another tool's conventions in one word (policies and metric parameters); options "
                             "given explicitly override it, and the output says what it set and what was "
                             "overridden.")(fn)


def policy_options(fn: F) -> F:
    """The evaluation policies as options (trec_eval's short flags where it has them)."""
    options = [
        click.option("-c", "--complete", is_flag=True,
                     help="Average over every judged query, scoring missing ones 0 (trec_eval -c). The default."),
        click.option("--skip-missing", is_flag=True,
                     help="Leave judged queries without a ranking out instead of scoring them 0."),
        click.option("-l", "--relevance-level", default="1", show_default=True, callback=_level,
                     help="Minimum grade counted as relevant by binary metrics (trec_eval -l); 'positive': any "
                          "grade > 0 (Quepid)."),
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
        click.option("--judged-grades", type=click.Choice(["as_is", "truncated"]), default="as_is",
                     show_default=True, help="The judged pool's grades (ideal rankings, R, best lists) as given, "
                     "or truncated to integers as Quepid stores them."),
        click.option("--max-grade", type=Number(min=0, min_open=True), default=None,
                     help="The top of the grading scale for ERR and avgRating100 (default: the largest judged "
                          "grade)."),
        click.option("--trec-eval-version", type=click.Choice(["10", "9"]), default="10", show_default=True,
                     help="The trec_eval whose numbers to give: 10, or 9 and pytrec_eval (scores rounded to "
                          "float32 before ordering, legacy recall-level rounding of iprec_at_recall and "
                          "11pt_avg)."),
    ]
    return with_options(see_inputs(fn), options)


_POLICY_OPTIONS = ("relevance_level", "depth", "judged_only", "ties", "negative_grades", "undefined",
                   "judged_grades", "max_grade")


def policies_from(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Pop the policy options from a command's kwargs into Policies keyword arguments: the options given on
    the command line (a profile's values stand for the others; without one, Policies' defaults, which are
    the options' defaults). ``--trec-eval-version 9`` is ``score_precision="float32"``; the recall-level
    rounding it also implies is a parameter of the trec_eval names (:func:`conventions_from`)."""
    complete = kwargs.pop("complete")
    skip = kwargs.pop("skip_missing")
    if complete and skip:
        raise click.UsageError("-c/--complete and --skip-missing contradict each other")
    ctx = click.get_current_context(silent=True)

    def given(name: str) -> bool:
        return ctx is None or ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT)

    out = {name: kwargs.pop(name) for name in _POLICY_OPTIONS}
    out = {name: value for name, value in out.items() if given(name)}
    if complete or skip:
        out["missing_queries"] = "skip" if skip else "zero"
    if kwargs.pop("trec_eval_version") == "9":
        out["score_precision"] = "float32"
    return out


@dataclass
class Conventions:
    """The policies and the profile of one command, and the metric names resolved under them."""

    policies: Any
    profile: Any = None
    use: Any = None
    #: the policy options given on the command line
    given: dict[str, Any] = field(default_factory=dict)
    #: the recall-level rounding of the trec_eval names ``iprec_at_recall`` and ``11pt_avg``: ``"legacy"`` under
    #: ``--trec-eval-version 9``, else ``"nearest"``
    trec_rounding: str = "nearest"

    def resolve(self, metrics: Any) -> list[Any]:
        """Metric names (or objects) resolved under the profile; a parameter written in a name that overrides
        the profile is noted with the results."""
        from gainscope.metrics.resolve import resolve_metrics_noting

        found, overridden = resolve_metrics_noting(metrics, profile=self.profile, policies=self.policies,
                                                   trec_rounding=self.trec_rounding)
        if self.use is not None:
            self.use = self.use.plus(overridden)
        return found

    def family(self, family: str) -> str:
        """A metric family (a name without its ``@`` value) with the profile's parameters written out, so that
        it names the same metrics where no profile applies (plots, reports)."""
        if self.profile is None or "@" in family:
            return family
        return str(self.resolve(f"{family.strip()}@1")[0]).rsplit("@", 1)[0]


def conventions_from(kwargs: dict[str, Any]) -> Conventions:
    """Pop ``--profile`` and the policy options from a command's kwargs: the policies (the profile's, with
    the options given over them), the profile, and the trec_eval names' recall-level rounding
    (``--trec-eval-version``)."""
    from gainscope.metrics.profiles import get_profile, profiled_policies

    rounding = "legacy" if kwargs.get("trec_eval_version") == "9" else "nearest"
    given = policies_from(kwargs)
    name = kwargs.pop("profile", None)
    profile = get_profile(name) if name is not None else None
    policies, use = profiled_policies(profile, given)
    return Conventions(policies, profile, use, given, rounding)


def _checked_database(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """--database as the workspace takes it (a usage error otherwise, before anything is created)."""
    from gainscope.server.workspace import database_problem

    problem = database_problem(value)
    if problem is not None:
        raise click.BadParameter(problem)
    return value


def database_option(help: str = "The workspace's PostgreSQL database (as serve).") -> Callable[[F], F]:
    """``--database URL``: the dashboard workspace kept in PostgreSQL, checked before anything is created; one
    meaning in serve, case add and queue."""
    return click.option("--database", default=None, metavar="URL", callback=_checked_database, help=help)


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
        click.option("--encoding", default="utf-8", show_default=True,
                     help="Text encoding of the input files (a Python codec name: latin-1, cp1252, utf-16 ...)."),
        click.option("--allow-empty", is_flag=True,
                     help="Accept judgments or runs with no entry (a run that retrieved nothing scores 0)."),
        click.option("--extra-columns", type=click.Choice(["error", "ignore"]), default="error", show_default=True,
                     help="Columns after the run tag of a TREC run: an error, or ignored as trec_eval does."),
    ]
    return with_options(see_inputs(fn), options)


def nan_score_of(value: str) -> str | float:
    """The ``--nan-score`` value as the readers take it: ``"error"`` or a number."""
    if value == "error":
        return value
    try:
        return float(value)
    except ValueError:
        raise click.BadParameter(f"expected 'error' or a number; got {value!r}", param_hint="--nan-score") from None


def read_inputs(judgments: str, runs: tuple[str, ...], kwargs: dict[str, Any]) -> tuple[Any, list[Any]]:
    """Read judgments and runs with the reader options popped from ``kwargs``."""
    one_stdin(judgments, *runs)
    j, options = read_judgments_and_run_options(judgments, kwargs)
    from gainscope.io import read_run

    return j, [read_run(r, **options) for r in runs]


def run_options_from(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Pop the run reading options from ``kwargs`` (``--run-format``, ``--on-duplicate``, ``--nan-score``,
    ``--normalize-ids``, ``--encoding``, ``--allow-empty``, ``--extra-columns``) into
    :func:`~gainscope.io.read_run` keyword arguments."""
    return {"format": kwargs.pop("run_format"), "on_duplicate": kwargs.pop("on_duplicate"),
            "nan_score": nan_score_of(kwargs.pop("nan_score")), "normalize_ids": kwargs.pop("normalize_ids"),
            "encoding": kwargs.pop("encoding"), "allow_empty": kwargs.pop("allow_empty"),
            "extra_columns": kwargs.pop("extra_columns")}


def read_judgments_and_run_options(judgments: str, kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """Read the judgments with the reader options popped from ``kwargs``; return the run reading options."""
    from gainscope.io import read_judgments

    options = run_options_from(kwargs)
    j = read_judgments(judgments, format=kwargs.pop("judgments_format"), on_conflict=kwargs.pop("on_conflict"),
                       float_grades=kwargs.pop("float_grades"), normalize_ids=options["normalize_ids"],
                       encoding=options["encoding"], allow_empty=options["allow_empty"])
    return j, options


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


def _backend(kwargs: dict[str, Any]) -> tuple[str, str | None, tuple[str, ...], int | None]:
    """Pop the backend options: ``--backend``, ``--master``, ``--spark-conf``, ``--partitions`` (the last three
    refused without ``--backend spark``)."""
    backend, master = kwargs.pop("backend", "local"), kwargs.pop("master", None)
    conf_items, partitions = kwargs.pop("spark_conf", ()), kwargs.pop("partitions", None)
    if backend != "spark":
        given = [flag for flag, value in (("--master", master), ("--spark-conf", conf_items),
                                          ("--partitions", partitions)) if value]
        if given:
            raise click.UsageError(f"{', '.join(given)} only apply with --backend spark")
    return backend, master, conf_items, partitions


def local_backend(kwargs: dict[str, Any], what: str) -> None:
    """Pop the backend options, refusing ``--backend spark`` for ``what`` (a flag computed here only)."""
    if _backend(kwargs)[0] == "spark":
        raise click.UsageError(f"{what} is computed by the local backend only; drop --backend spark or {what}")


def spark_evaluations(judgments: str, runs: tuple[str, ...], metrics: list[Any], conventions: Conventions,
                      kwargs: dict[str, Any], *, names: tuple[str, ...] = (), relstring: int | None = None,
                      trec_eval: tuple[Any, bool] | None = None) -> Any:
    """Evaluate on Spark with the reader and backend options popped from ``kwargs`` (one SparkEvaluation per
    run), when ``--backend spark``; None (nothing popped but the backend options) otherwise. ``metrics`` are
    metric objects already resolved under ``conventions``."""
    backend, master, conf_items, partitions = _backend(kwargs)
    if backend != "spark":
        return None
    conf: dict[str, str] = {}
    for item in conf_items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected KEY=VALUE; got {item!r}", param_hint="--spark-conf")
        conf[key.strip()] = value
    if "-" in (judgments, *runs):
        raise click.UsageError("--backend spark reads files Spark can reach, not standard input (-)")
    check_names(names, runs)
    run_options = run_options_from(kwargs)
    from gainscope.spark import evaluate_runs, session

    return evaluate_runs(judgments, runs, metrics, spark=session(master, conf), policies=conventions.policies,
                         profile_use=conventions.use, names=list(names) if names else None,
                         judgments_format=kwargs.pop("judgments_format"), on_conflict=kwargs.pop("on_conflict"),
                         float_grades=kwargs.pop("float_grades"), partitions=partitions, relstring=relstring,
                         trec_eval=trec_eval, **run_options)


def evaluate_files(judgments: str, runs: tuple[str, ...], metrics: list[Any], kwargs: dict[str, Any], *,
                   names: tuple[str, ...] = (), conventions: Conventions | None = None) -> list[Any]:
    """Evaluate run files against a judgments file with the policy and reader options popped from ``kwargs``
    (or the ``conventions`` already popped): judgments read and prepared once, each run through the C scanner
    when it applies. ``metrics`` are names or metric objects (names are resolved under the profile). ``names``
    (one per run, or none) override the runs' names. Returns one :class:`~gainscope.results.Results` per run."""
    from gainscope.evaluation import evaluate_prepared

    check_names(names, runs)
    conventions = conventions if conventions is not None else conventions_from(kwargs)
    policies = conventions.policies
    metrics = conventions.resolve(metrics)
    for m in metrics:
        m.check_policies(policies)
    on_spark = spark_evaluations(judgments, runs, metrics, conventions, kwargs, names=names)
    if on_spark is not None:
        return [e.results for e in on_spark]
    one_stdin(judgments, *runs)
    judg, run_options = read_judgments_and_run_options(judgments, kwargs)
    return evaluate_prepared(judg, runs, metrics, policies, profile=conventions.use, names=names, **run_options)


def about_run(runs: Sequence[str], index: int) -> AbstractContextManager[None]:
    """The warning context of the ``index``-th of ``runs``: with several, each warning names its run."""
    from gainscope.evaluation import run_label

    return about(run_label(runs[index], index)) if len(runs) > 1 else contextlib.nullcontext()


def check_names(names: Sequence[str], runs: Sequence[str]) -> None:
    """``--name`` values: none, or one per run."""
    if names and len(names) != len(runs):
        raise click.UsageError(f"{len(names)} --name value(s) for {len(runs)} runs; give one name per run, in order")


def one_stdin(*inputs: str) -> None:
    """Refuse more than one input given as ``-`` (standard input can be read once)."""
    if sum(i == "-" for i in inputs) > 1:
        raise click.UsageError("only one input can be read from standard input (-); give the others as files")


def bounds_of_files(judgments: str, runs: tuple[str, ...], metrics: list[Any], kwargs: dict[str, Any], *,
                    names: tuple[str, ...] = (), conventions: Conventions | None = None) -> list[Any]:
    """As :func:`evaluate_files`, with what the unjudged documents could change: one
    :class:`~gainscope.bounds.Bounds` per run, whose ``results`` are what :func:`evaluate_files` gives."""
    from gainscope.bounds import bounds_runs
    from gainscope.io import read_run

    local_backend(kwargs, "--bounds")
    one_stdin(judgments, *runs)
    check_names(names, runs)
    conventions = conventions if conventions is not None else conventions_from(kwargs)
    metrics = conventions.resolve(metrics)
    judg, run_options = read_judgments_and_run_options(judgments, kwargs)
    out = []
    for i, run in enumerate(runs):
        with about_run(runs, i):
            loaded = read_run(run, name=names[i] if names else None, **run_options)
            out.extend(bounds_runs(judg, [loaded], metrics, policies=conventions.policies,
                                   profile_use=conventions.use))
    return out


def rating_scale(text: str | None) -> Any:
    """A case's ``--scale``: a scale name (``graded``, ``1-10``) as given, or comma-separated grades as numbers."""
    if text is None:
        return None
    if "," in text:
        try:
            return [float(v) if "." in v else int(v) for v in (p.strip() for p in text.split(",")) if v]
        except ValueError:
            raise click.BadParameter(f"expected numbers separated by commas; got {text!r}",
                                     param_hint="--scale") from None
    return text
