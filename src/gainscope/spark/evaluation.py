"""Evaluate runs on Apache Spark: the same kernels per partition of whole queries, the local engine's numbers.

The plan of one evaluation:

1. the judgments are read on the driver by gainscope's own readers (a path, a polars or pandas DataFrame, a
   dict, or a Spark DataFrame collected through Arrow), so their errors and warnings are the local engine's;
   they are checked, prepared and shipped to the executors once (a broadcast), whatever the number of runs;
2. each run is read by Spark (:mod:`gainscope.spark.sources`), joined by one marker row per judged query,
   repartitioned by query id (a query never spans two partitions) and sorted within each partition by query,
   then input position;
3. each partition runs the local engine's pipeline through Arrow (``mapInArrow``,
   :mod:`gainscope.spark.partition`) and returns per-query values and the facts behind warnings;
4. the driver assembles one :class:`~gainscope.results.Results` per run (:mod:`gainscope.spark.assemble`).

Judgments are shipped rather than co-partitioned with the run because they pass through the driver anyway
(to be read by the same readers, with the same messages); they must fit in the driver's memory and, decoded,
in each Python worker's (tens of millions of judgments do; runs of any size do not need to).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from typing import Any

import polars as pl

from gainscope.core.judged_run import PreparedJudgments
from gainscope.core.judgments import Judgments
from gainscope.core.policies import Policies
from gainscope.errors import PolicyError, about, option
from gainscope.evaluation import MetricsArg, _setup, run_label
from gainscope.io.frames import RunOptions
from gainscope.metrics.base import Metric
from gainscope.metrics.profiles import Profile, ProfileUse
from gainscope.metrics.trec_eval import TrecItem, TrecOverrides
from gainscope.results import Results
from gainscope.spark.driver import evaluate_with, judged_max_grade
from gainscope.spark.partition import OUTPUT_DDL, JudgmentShard, PartPlan, evaluate_partition, marker_batches
from gainscope.spark.session import quiet, session, spark_failure, to_arrow
from gainscope.spark.sources import RunSource, is_spark_frame, run_source

__all__ = ["SparkEvaluation", "compare", "evaluate", "evaluate_runs", "read_judgments"]


class SparkEvaluation:
    """One run evaluated on Spark: :attr:`results` (per-query values and aggregates, as
    :func:`gainscope.evaluate` returns them) and :meth:`per_query`, the per-query values as a Spark
    DataFrame; :attr:`trec_overrides`, what trec_eval prints instead of some values, when asked
    (``trec_eval=``)."""

    def __init__(self, results: Results, spark: Any, trec_overrides: TrecOverrides | None = None) -> None:
        self.results = results
        self.trec_overrides = trec_overrides
        self._spark = spark

    @property
    def run_name(self) -> str:
        """The run's name (``name=``, else its TREC tag, else its file name)."""
        return self.results.run_name

    @property
    def aggregates(self) -> dict[str, float]:
        """``{metric name: aggregate}``, as :attr:`Results.aggregates`."""
        return self.results.aggregates

    def __getitem__(self, metric: str) -> float:
        return self.results[metric]

    def per_query(self, *, wide: bool = False) -> Any:
        """The per-query values as a Spark DataFrame: long (``run, query_id, metric, value``; null where a value
        is undefined and skipped) or wide (``query_id`` and one column per metric)."""
        frame = self.results.to_polars(wide=wide)
        with quiet():
            if hasattr(self._spark, "createDataFrame"):
                try:
                    return self._spark.createDataFrame(frame.to_arrow())
                except (TypeError, ValueError):  # pyspark 3.5 takes pandas or rows, not Arrow
                    pass
            return self._spark.createDataFrame(frame.rows(), schema=_ddl(frame))

    def __repr__(self) -> str:
        return f"SparkEvaluation({self.results!r})"


def _ddl(frame: pl.DataFrame) -> str:
    kinds = {pl.String: "string", pl.Float64: "double"}
    return ", ".join(f"`{name}` {kinds[dtype]}" for name, dtype in frame.schema.items())  # type: ignore[index]


def read_judgments(judgments: Any, *, format: str | None = None, on_conflict: str = "error",
                   float_grades: bool = False, encoding: str = "utf-8", allow_empty: bool = False) -> Judgments:
    """Judgments for a Spark evaluation: a Spark DataFrame (collected through Arrow), or anything
    :func:`gainscope.io.read_judgments` reads, read by it."""
    from gainscope.io import read_judgments as read

    if is_spark_frame(judgments):
        try:
            table = to_arrow(judgments)
        except Exception as exc:
            raise spark_failure(exc) from None
        judgments = pl.DataFrame(pl.from_arrow(table))
    return read(judgments, format=format, on_conflict=on_conflict, float_grades=float_grades, encoding=encoding,
                allow_empty=allow_empty)


def evaluate(judgments: Any, run: Any, metrics: MetricsArg, *, spark: Any = None, policies: Policies | None = None,
             profile: str | Profile | None = None, name: str | None = None, format: str | None = None,
             judgments_format: str | None = None, on_conflict: str = "error", float_grades: bool = False,
             on_duplicate: str = "error", nan_score: str | float = "error", normalize_ids: str | None = None,
             allow_empty: bool = False, encoding: str = "utf-8", extra_columns: str = "error",
             partitions: int | None = None, **policy_kwargs: Any) -> SparkEvaluation:
    """Evaluate one run on Spark; the numbers are :func:`gainscope.evaluate`'s, bit for bit.

    Parameters
    ----------
    judgments:
        A Spark DataFrame, or anything :func:`gainscope.io.read_judgments` reads (read on the driver).
    run:
        A Spark DataFrame (columns matched by the readers' aliases), or the path(s) of Parquet, TREC, MS MARCO
        or JSON Lines files that Spark reads (a file, a directory, a glob, a list; ``s3a://``, ``hdfs://``...).
    metrics, policies, profile, **policy_kwargs:
        As for :func:`gainscope.evaluate` (``ties``, ``missing_queries``, ``depth``, ``judged_only``,
        ``relevance_level``, ``negative_grades``, ``undefined``, ``judged_grades``, ``max_grade``,
        ``score_precision``; a profile's conventions with the given policies over them).
    spark:
        The SparkSession; default the active one, else a local one (:func:`gainscope.spark.session`).
    name, format, on_duplicate, nan_score, allow_empty, extra_columns:
        How the run is read, as for :func:`gainscope.io.read_run`; ``judgments_format``, ``on_conflict``,
        ``float_grades`` as for :func:`gainscope.io.read_judgments`. ``encoding`` is the judgments' (read on the
        driver); text runs are read as UTF-8 (another encoding is refused for them). ``normalize_ids`` is not
        supported (ids are partitioned as written): normalise them where the data is written.
    partitions:
        How many partitions to cut the run into (default: Spark's ``spark.sql.shuffle.partitions``, then
        coalesced by adaptive execution).

    Returns
    -------
    SparkEvaluation
        ``.results`` (a :class:`~gainscope.results.Results`) and ``.per_query()`` (a Spark DataFrame).
    """
    return evaluate_runs(judgments, [run], metrics, spark=spark, policies=policies, profile=profile, names=[name],
                         format=format, judgments_format=judgments_format, on_conflict=on_conflict,
                         float_grades=float_grades, on_duplicate=on_duplicate, nan_score=nan_score,
                         normalize_ids=normalize_ids, allow_empty=allow_empty, encoding=encoding,
                         extra_columns=extra_columns, partitions=partitions, **policy_kwargs)[0]


def evaluate_runs(judgments: Any, runs: Iterable[Any], metrics: MetricsArg, *, spark: Any = None,
                  policies: Policies | None = None, profile: str | Profile | None = None,
                  names: Sequence[str | None] | None = None, format: str | None = None,
                  judgments_format: str | None = None, on_conflict: str = "error", float_grades: bool = False,
                  on_duplicate: str = "error", nan_score: str | float = "error", normalize_ids: str | None = None,
                  allow_empty: bool = False, encoding: str = "utf-8", extra_columns: str = "error",
                  partitions: int | None = None, relstring: int | None = None,
                  trec_eval: tuple[Sequence[TrecItem], bool] | None = None, profile_use: ProfileUse | None = None,
                  **policy_kwargs: Any) -> list[SparkEvaluation]:
    """Evaluate several runs on Spark against the same judgments, read, checked, prepared and shipped to the
    executors once. Options as for :func:`evaluate`; ``names`` gives one name per run (None: the run's own).

    For trec_eval's text (the command line's ``--format trec_eval``): ``relstring`` computes trec_eval's
    relstring of that length for each query (``Results.extras``); ``trec_eval`` (its items and ``-c`` as
    given) computes what it prints instead of some values (:attr:`SparkEvaluation.trec_overrides`).
    ``profile_use``: with metric objects and policies already resolved under a profile (the command line),
    the record of it to echo with the results."""
    pol, mets, use = _setup(metrics, policies, profile, policy_kwargs)
    use = profile_use if profile_use is not None else use
    local_only = [str(m) for m in mets if not m.undefined_scores_zero or type(m).censored is not Metric.censored]
    if local_only:
        raise PolicyError(f"{', '.join(local_only)}: not supported by the Spark backend (a value left undefined "
                          "or censored per query is noted with the query ids of the whole run, which the partitions "
                          "do not have); evaluate it with the local backend")
    if normalize_ids is not None:
        raise PolicyError(f"{option('normalize_ids', normalize_ids)} is not supported by the Spark backend: queries "
                          "are partitioned by their ids as written; normalise the ids where the data is written, or "
                          "use the local backend")
    options = RunOptions(on_duplicate=on_duplicate, nan_score=RunOptions.parse_nan_score(nan_score),
                         allow_empty=True, extra_columns=extra_columns)  # checks them as read_run does; emptiness
    run_list = list(runs)                                                # is the driver's to judge
    name_list = list(names) if names is not None else [None] * len(run_list)
    if len(name_list) != len(run_list):
        raise PolicyError(f"{len(name_list)} name(s) for {len(run_list)} run(s): give one name per run, in order")
    spark = spark if spark is not None else session()
    judged = read_judgments(judgments, format=judgments_format, on_conflict=on_conflict, float_grades=float_grades,
                            encoding=encoding, allow_empty=allow_empty)
    prepared = PreparedJudgments.of(judged, pol.negative_grades)
    with quiet():
        shard = spark.sparkContext.broadcast(JudgmentShard(judged))
    out = []
    try:
        for index, (run, run_name) in enumerate(zip(run_list, name_list, strict=True)):
            with about(run_label(run, index)) if len(run_list) > 1 else contextlib.nullcontext():
                source = run_source(spark, run, format=format, name=run_name, nan_score=options.nan_score,
                                    on_duplicate=on_duplicate, allow_empty=allow_empty, extra_columns=extra_columns,
                                    encoding=encoding)
                plan = PartPlan(tuple(mets), pol, options, shard, judged_max_grade(prepared, pol),
                                tokens_clean=source.tokens_clean, optional_values=source.optional_values,
                                relstring=relstring,
                                trec_eval=(tuple(trec_eval[0]), trec_eval[1]) if trec_eval is not None else None)

                def partitions_of(p: PartPlan, source: RunSource = source) -> Any:
                    return _partition_outputs(spark, source, p, len(prepared.query_ids), partitions)

                results, overrides = evaluate_with(partitions_of, plan, judgments=judged, metrics=mets, policies=pol,
                                                   run=source.info, profile=use)
            out.append(SparkEvaluation(results, spark, overrides))
    finally:
        with quiet():
            shard.unpersist()
    return out


def _partition_outputs(spark: Any, source: RunSource, plan: PartPlan, judged_queries: int,
                       partitions: int | None) -> Any:
    """Run the partitions of one run (see the module docstring); their outputs as an Arrow table."""
    from pyspark.sql import functions as F

    shard = plan.judgments
    with quiet():
        slices = max(1, min(spark.sparkContext.defaultParallelism, judged_queries // 50_000 + 1))
        markers = spark.range(judged_queries, numPartitions=slices).mapInArrow(
            lambda batches: marker_batches(batches, shard.value), "query_id string, _kind tinyint")
        stream = source.frame.unionByName(markers, allowMissingColumns=True)
        stream = stream.repartition(partitions, "query_id") if partitions else stream.repartition("query_id")
        keys = [F.col("query_id").asc_nulls_first(), F.col("_kind").desc(), F.col("_ord").asc()]
        if "_sub" in source.frame.columns:  # JSON Lines: documents of one line, in their order
            keys.append(F.col("_sub").asc())
        stream = stream.sortWithinPartitions(*keys)
        out = stream.mapInArrow(lambda batches: evaluate_partition(batches, plan), OUTPUT_DDL)
        try:
            return to_arrow(out)
        except Exception as exc:
            raise spark_failure(exc) from None


def compare(judgments: Any, runs: Sequence[Any], metrics: MetricsArg = ("nDCG@10", "AP", "RR", "P@10"), *,
            baseline: str | None = None, settings: Any = None, **options: Any) -> Any:
    """Compare runs evaluated on Spark: per-query values computed by the partitions, the statistics on the
    driver (:func:`gainscope.compare.compare_results`). ``options`` as for :func:`evaluate_runs`."""
    from gainscope.compare import compare_results

    evaluations = evaluate_runs(judgments, runs, metrics, **options)
    return compare_results([e.results for e in evaluations], baseline=baseline, settings=settings)
