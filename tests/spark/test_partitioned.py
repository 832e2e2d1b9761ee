"""Cut into partitions of whole queries, evaluated part by part and assembled, an evaluation gives the local
engine's Results bit for bit, with the same warnings: the property Spark relies on, checked without Spark.

The partitions here are what Spark hands ``mapInArrow`` after ``repartition(query_id)`` and
``sortWithinPartitions``: queries spread over partitions at random, rows in arbitrary Arrow batches, blocks of
whole queries cut small.
"""

from __future__ import annotations

import random
import warnings
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st
from tests.helpers import outcome

import gainscope
import gainscope.io.scan
from gainscope.core.judged_run import PreparedJudgments
from gainscope.core.judgments import Judgments
from gainscope.core.policies import Policies
from gainscope.core.run import Run
from gainscope.errors import GainscopeError, PolicyError, spell
from gainscope.evaluation import resolve_metrics
from gainscope.io.frames import RunOptions
from gainscope.metrics.base import Metric
from gainscope.metrics.trec_eval import TrecItem, TrecOverrides, trec_eval_overrides, trec_items, trec_metrics
from gainscope.results import Results
from gainscope.spark.assemble import RunInfo
from gainscope.spark.driver import evaluate_with, judged_max_grade
from gainscope.spark.partition import OUTPUT_SCHEMA, JudgmentShard, PartPlan, evaluate_partition
from gainscope.testing import strategies as gst

ALL_TREC = [m for _, m in trec_metrics(["all_trec"])]
SETTINGS = settings(max_examples=60, derandomize=True, database=None, deadline=None,
                    phases=(Phase.explicit, Phase.generate),
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def partitioned(plan: PartPlan, judged: list[str], rows: pl.DataFrame, *, parts: int, seed: int) -> pa.Table:
    """Every partition's output, as Spark would produce it for ``rows`` (``query_id, doc_id, score, rank,
    _ord``) and one marker per judged query."""
    rnd = random.Random(seed)
    markers = pl.DataFrame({"query_id": judged, "_kind": [1] * len(judged)},
                           schema={"query_id": pl.String, "_kind": pl.Int8})
    stream = pl.concat([rows.with_columns(pl.lit(0, pl.Int8).alias("_kind"), pl.lit(0, pl.Int32).alias("_sub")),
                        markers], how="diagonal")
    queries = sorted(set(stream["query_id"].to_list()))
    home = {q: rnd.randrange(parts) for q in queries}
    outputs: list[pa.RecordBatch] = []
    for p in range(parts):
        mine = stream.filter(pl.col("query_id").is_in([q for q in queries if home[q] == p]))
        mine = mine.sample(fraction=1.0, shuffle=True, seed=rnd.randrange(2**31))
        mine = mine.sort(["query_id", "_kind", "_ord", "_sub"], descending=[False, True, False, False],
                         nulls_last=False)
        table = mine.to_arrow()
        batches: list[pa.RecordBatch] = []
        start = 0
        while start < table.num_rows:
            size = rnd.randint(1, 7)
            batches.extend(table.slice(start, size).to_batches())
            start += size
        outputs.extend(evaluate_partition(iter(batches), plan))
    return pa.Table.from_batches(outputs, schema=OUTPUT_SCHEMA)


def spark_like(judgments: Judgments, run: Run, metrics: list[Any], policies: Policies, *, parts: int, seed: int,
               block_rows: int = 3, options: RunOptions | None = None) -> Results:
    """Evaluate as gainscope.spark does, with partitions run in this process."""
    return spark_like_trec(judgments, run, metrics, policies, parts=parts, seed=seed, block_rows=block_rows,
                           options=options)[0]


def spark_like_trec(judgments: Judgments, run: Run, metrics: list[Any], policies: Policies, *, parts: int,
                    seed: int, block_rows: int = 3, options: RunOptions | None = None,
                    trec_eval: tuple[tuple[TrecItem, ...], bool] | None = None
                    ) -> tuple[Results, TrecOverrides | None]:
    """:func:`spark_like`, with what trec_eval prints instead of some values when ``trec_eval`` is given."""
    mets = resolve_metrics(metrics)
    prepared = PreparedJudgments.of(judgments, policies.negative_grades)
    options = options or RunOptions()
    plan = PartPlan(tuple(mets), policies, RunOptions(on_duplicate=options.on_duplicate,
                                                      nan_score=options.nan_score, allow_empty=True),
                    JudgmentShard(judgments), judged_max_grade(prepared, policies), block_rows=block_rows,
                    trec_eval=trec_eval)
    # the columns a run input has: a Run without scores (or ranks) has them as nulls
    given = [c for c in ("score", "rank") if run.frame[c].null_count() < run.frame.height]
    rows = (run.frame.select("query_id", "doc_id", *given).with_row_index("_ord")
            .with_columns(pl.col("_ord").cast(pl.Int64)))
    judged = prepared.query_ids
    info = RunInfo(label=run.source, name=run.name, default_name=None, unit=None,
                   nan_score=options.nan_score, on_duplicate=options.on_duplicate)
    return evaluate_with(lambda p: partitioned(p, judged, rows, parts=parts, seed=seed), plan, judgments=judgments,
                         metrics=mets, policies=policies, run=info)


def assert_identical(a: Results, b: Results) -> None:
    assert a.query_ids == b.query_ids
    assert a.metric_names == b.metric_names
    assert a.values.shape == b.values.shape
    assert np.array_equal(a.values, b.values, equal_nan=True)  # bit for bit: no tolerance
    assert a.values.tobytes() == b.values.tobytes()
    assert np.array_equal(a.undefined, b.undefined)
    assert a.aggregates == b.aggregates or all(
        x == y or (np.isnan(x) and np.isnan(y)) for x, y in zip(a.aggregates.values(), b.aggregates.values(),
                                                              strict=True))
    assert a.coverage == b.coverage
    assert a.notes == b.notes
    assert a.run_name == b.run_name
    assert a.policies == b.policies


@SETTINGS
@given(data=gst.judgments_and_runs(max_docs=12), policies=gst.policies(), parts=st.integers(1, 4),
       seed=st.integers(0, 2**16), block_rows=st.sampled_from((1, 3, 10**6)))
def test_partitioned_all_trec_equals_local(data: tuple[Judgments, Run], policies: Policies, parts: int, seed: int,
                                           block_rows: int) -> None:
    judgments, run = data
    mets = [m for m in ALL_TREC if not _average_refused(m, policies)]
    local, local_warnings = outcome(lambda: gainscope.evaluate(judgments, run, mets, policies=policies))
    spread, spread_warnings = outcome(lambda: spark_like(judgments, run, mets, policies, parts=parts, seed=seed,
                                                         block_rows=block_rows))
    if isinstance(local, Results):
        assert isinstance(spread, Results), spread
        assert_identical(spread, local)
    else:
        assert spread == local
    assert spread_warnings == local_warnings


@SETTINGS
@given(data=gst.judgments_and_runs(max_docs=12), policies=gst.policies(), complete=st.booleans(),
       parts=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_partitioned_trec_eval_overrides_equal_local(data: tuple[Judgments, Run], policies: Policies,
                                                     complete: bool, parts: int, seed: int) -> None:
    # what trec_eval prints instead of some values (-nan lines, num_rel's summary under -c), computed per
    # partition and assembled, is what the local command line computes on the whole judged run
    judgments, run = data
    items = trec_items(["all_trec"])
    items = [it for it in items if it.metric is None or not _average_refused(it.metric, policies)]
    mets = list(dict.fromkeys(it.metric for it in items if it.metric is not None))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            jr = gainscope.io.scan.judged_run_of_run(PreparedJudgments.of(judgments, policies.negative_grades), run,
                                                     policies)
            gainscope.evaluate(judgments, run, mets, policies=policies)
        except GainscopeError:
            return  # refused inputs: test_partitioned_all_trec_equals_local checks the errors
        local = trec_eval_overrides(items, jr, complete=complete)
        _, spread = spark_like_trec(judgments, run, mets, policies, parts=parts, seed=seed,
                                    trec_eval=(tuple(items), complete))
    assert spread is not None
    assert sorted(spread.nan) == sorted(local.nan)
    for index, mask in local.nan.items():
        assert spread.nan[index].tolist() == mask.tolist()
    assert spread.summary == local.summary


def _average_refused(metric: Any, policies: Policies) -> bool:
    try:
        metric.check_policies(policies)
    except GainscopeError:
        return True
    return False


@SETTINGS
@given(data=gst.judgments_and_runs(max_docs=12), metric=gst.metrics(), policies=gst.policies(),
       parts=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_partitioned_any_metric_equals_local(data: tuple[Judgments, Run], metric: Any, policies: Policies,
                                             parts: int, seed: int) -> None:
    judgments, run = data
    assume(metric.undefined_scores_zero and type(metric).censored is Metric.censored)  # local only: refused below
    local, local_warnings = outcome(lambda: gainscope.evaluate(judgments, run, [metric], policies=policies))
    spread, spread_warnings = outcome(lambda: spark_like(judgments, run, [metric], policies, parts=parts, seed=seed))
    if isinstance(local, Results):
        assert isinstance(spread, Results), spread
        assert_identical(spread, local)
        assert spread_warnings == local_warnings
    else:
        assert spread == local
        # a metric's refusal found inside a partition stops the driver before it has the query universe, so the
        # coverage warnings the local engine gives before the same error are not repeated (a known difference)
        if not any(w.startswith("QueryCoverageWarning") for w in local_warnings):
            assert spread_warnings == local_warnings


def test_metrics_with_whole_run_notes_are_refused_before_spark_starts(trec_fixtures) -> None:
    # IterationsForAllGoodResults keeps undefined values and censors capped ones, noting the query ids of the
    # whole run: the partitions hold some of them, so the backend refuses it (before a session is started)
    import gainscope.spark

    with pytest.raises(PolicyError, match=r"^IterationsForAllGoodResults: not supported by the Spark backend .* "
                                          r"evaluate it with the local backend$"):
        gainscope.spark.evaluate(str(trec_fixtures / "qrels.test"), str(trec_fixtures / "results.test"),
                                 ["IterationsForAllGoodResults", "AP"])


def test_err_scale_is_the_whole_evaluations_even_when_the_top_grade_is_missing() -> None:
    # q1 holds the only grade 4 and is not ranked: with missing_queries='skip' the evaluated queries' top
    # grade is 2, which every partition must use (the driver runs them again with it)
    judgments = Judgments.from_dict({"q1": {"a": 4}, "q2": {"b": 2, "c": 1}, "q3": {"d": 1}})
    run = Run.from_dict({"q2": {"b": 2.0, "c": 1.0}, "q3": {"d": 1.0, "e": 0.5}})
    policies = Policies(missing_queries="skip")
    local, local_warnings = outcome(lambda: gainscope.evaluate(judgments, run, ["ERR", "ERR@1"], policies=policies))
    for parts in (1, 2, 3):
        spread, spread_warnings = outcome(lambda: spark_like(judgments, run, ["ERR", "ERR@1"], policies,
                                                             parts=parts, seed=parts))  # noqa: B023
        assert_identical(spread, local)
        assert spread_warnings == local_warnings
    # q2: p = (2^2 - 1) / 2^2 = 0.75 at rank 1 -> 0.75 (the scale 2, not 4)
    assert local.per_query("ERR@1")["q2"] == 0.75


@pytest.mark.parametrize("on_duplicate", ["first", "max"])
def test_duplicates_resolved_as_the_readers_do(on_duplicate: str) -> None:
    judgments = Judgments.from_dict({"q1": {"a": 1, "b": 2}, "q2": {"c": 1}})
    frame = pl.DataFrame({"query_id": ["q1", "q1", "q1", "q2", "q2"], "doc_id": ["a", "b", "a", "c", "c"],
                          "score": [1.0, 2.0, 3.0, 1.0, 1.0]})
    options = RunOptions(on_duplicate=on_duplicate)
    local, local_warnings = outcome(lambda: gainscope.evaluate(
        judgments, gainscope.io.read_run(frame, on_duplicate=on_duplicate), ["AP", "RR"]))
    run = Run._from_validated(frame.with_columns(pl.lit(None, pl.Int64).alias("rank")), name="run", source=None,
                              notes=())
    spread, spread_warnings = outcome(lambda: spark_like(judgments, run, ["AP", "RR"], Policies(), parts=2, seed=1,
                                                         options=options))
    assert isinstance(spread, Results)
    assert np.array_equal(spread.values, local.values)
    assert spread.notes == local.notes  # the options named are spelled when shown: Python's keyword here
    assert tuple(spell(n) for n in local.notes) == (f"duplicate docs resolved with on_duplicate={on_duplicate!r} "
                                                    "(2 row(s) dropped)",)
    assert spread_warnings == local_warnings


def test_a_block_that_runs_out_of_memory_is_an_error_naming_its_queries(monkeypatch: pytest.MonkeyPatch) -> None:
    # a worker with spark.executor.pyspark.memory set gets MemoryError instead of being killed: the partition
    # reports it, the driver raises a SparkError that says which queries and what to change
    import gainscope.spark.partition as partition

    def exhausted(*args: Any, **kwargs: Any) -> Any:
        raise MemoryError

    monkeypatch.setattr(partition, "evaluate_block", exhausted)
    judgments = Judgments.from_dict({"big": {"a": 1}})
    run = Run.from_dict({"big": {"a": 1.0, "b": 0.5}})
    with pytest.raises(gainscope.errors.SparkError, match=r"^query 'big' \(2 ranked documents in all\) do not fit in "
                       r"the memory of a Spark Python worker .*spark\.executor\.pyspark\.memory"):
        spark_like(judgments, run, ["AP"], Policies(), parts=1, seed=0)
