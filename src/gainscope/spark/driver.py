"""The driver's part of an evaluation, whatever runs the partitions: plan, run, check ERR's scale, assemble.

The only number a query's value shares with other queries is the largest judged grade of all evaluated
queries (ERR's default scale, :attr:`gainscope.metrics.context.Context.max_grade`). With
``missing_queries="zero"`` the evaluated queries are the judged ones and the driver knows it before any
partition runs. With ``"skip"`` they are the judged queries the run ranks, known only once the run is read:
the partitions then use the judged queries' value and report their own; in the rare case that the queries
holding the top grade are all missing from the run, the driver runs the partitions again with the right value
(:func:`evaluate_with`). Either way the numbers are the local engine's.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Sequence

import polars as pl
import pyarrow as pa

from gainscope.core.judged_run import PreparedJudgments
from gainscope.core.judgments import Judgments
from gainscope.core.policies import Policies
from gainscope.core.run import Run
from gainscope.io.scan import judged_run_of_run
from gainscope.metrics.base import Metric
from gainscope.metrics.context import Context
from gainscope.metrics.profiles import ProfileUse
from gainscope.metrics.trec_eval import TrecOverrides
from gainscope.results import Results
from gainscope.spark.assemble import RunInfo, assemble, merged_facts, trec_overrides
from gainscope.spark.partition import PartPlan

__all__ = ["evaluate_with", "judged_max_grade", "uses_max_grade"]


def uses_max_grade(metric: Metric) -> bool:
    """True when ``metric``'s values depend on the largest judged grade of every evaluated query."""
    declared = getattr(type(metric), "uses_max_grade", type(metric).name == "ERR")
    return bool(declared) and getattr(metric, "max_grade", None) is None


def judged_max_grade(prepared: PreparedJudgments, policies: Policies) -> float:
    """``Context.max_grade`` of a judged run holding every judged query (as ``missing_queries="zero"``
    evaluates), computed by the local builder so every policy on judged grades applies."""
    empty = Run._from_validated(pl.DataFrame(schema={"query_id": pl.String, "doc_id": pl.String,
                                                     "score": pl.Float64, "rank": pl.Int64}),
                                name="run", source=None, notes=())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        jr = judged_run_of_run(prepared, empty, dataclasses.replace(policies, missing_queries="zero"))
    return Context(jr).max_grade


def evaluate_with(run_partitions: Callable[[PartPlan], pa.Table], plan: PartPlan, *, judgments: Judgments,
                  metrics: Sequence[Metric], policies: Policies, run: RunInfo,
                  profile: ProfileUse | None = None) -> tuple[Results, TrecOverrides | None]:
    """Run the partitions (``run_partitions``: a plan to every partition's output), run them again if the
    evaluated queries' largest judged grade is not the one planned and a metric uses it, and assemble: the
    Results, and what trec_eval prints instead of some values when the plan asks (``plan.trec_eval``)."""
    table = run_partitions(plan)
    facts = merged_facts(table)
    if (facts.first_problem() is None and facts.max_grade is not None and facts.max_grade != plan.max_grade
            and any(uses_max_grade(m) for m in metrics)):
        plan = dataclasses.replace(plan, max_grade=facts.max_grade)
        table = run_partitions(plan)
        facts = merged_facts(table)
    results = assemble(table, facts, judgments=judgments, metrics=metrics, policies=policies, run=run,
                       profile=profile)
    return results, trec_overrides(table, facts, results.query_ids) if plan.trec_eval is not None else None
