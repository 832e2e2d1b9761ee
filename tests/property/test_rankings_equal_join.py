"""judged_run_of_rankings (rankings already in order, with their judged pools) builds the same judged run as
build_judged_run joining the same data as Judgments and an ordered Run, under every policy, and every metric gives
the same values on both; and what only the rankings builder can express (an empty ranking, an empty pool, the
query order given) is evaluated as documented."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gainscope.core.judged_run import build_judged_run
from gainscope.core.policies import Policies
from gainscope.core.rankings import Ranking, judged_run_of_rankings
from gainscope.errors import GainscopeWarning, InconsistentInputError, InputError, MetricError, PolicyError
from gainscope.evaluation import compute
from gainscope.metrics.names import parse_metric
from gainscope.metrics.registry import all_metric_classes
from gainscope.testing import strategies as gst


def _rankings(judgments, run, query_ids) -> list[Ranking]:
    pools = judgments.to_dict()
    ordered: dict[str, list[str]] = {}
    for q, d in run.frame.sort("rank", maintain_order=True).select("query_id", "doc_id").iter_rows():
        ordered.setdefault(q, []).append(d)
    return [Ranking(q, tuple(ordered[q]), pools[q]) for q in query_ids]


@pytest.mark.slow
@settings(max_examples=40, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=gst.judgments_and_runs(scored=False), policies=gst.policies(missing_queries="skip"), draw=st.data())
def test_rankings_equal_the_join(data, policies, draw) -> None:
    judgments, run = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GainscopeWarning)
        joined = build_judged_run(judgments, run, policies)
    ours = judged_run_of_rankings(_rankings(judgments, run, joined.query_ids), policies)
    assert ours.query_ids == joined.query_ids
    for name in ("num_ret", "offsets", "rank", "group_start", "group_kept", "group_size", "judged_offsets",
                 "judged_grades", "missing", "tail_grades"):
        assert np.array_equal(getattr(ours, name), getattr(joined, name)), name
    assert np.array_equal(ours.grades, joined.grades, equal_nan=True)
    assert ours.doc_ids is not None and joined.doc_ids is not None
    assert ours.doc_ids.to_list() == joined.doc_ids.to_list()
    assert ours.judged_doc_ids.to_list() == joined.judged_doc_ids.to_list()
    metrics = []
    for cls in all_metric_classes():
        metric = draw.draw(gst.metrics_of(cls), label=cls.name)
        if cls.uses_max_grade and (getattr(metric, "max_grade", None) is not None or policies.max_grade is not None
                                   or policies.judged_grades == "truncated"):
            continue  # a scale below a ranked grade: an error, or (truncated pool) a warning, in both forms alike
        try:
            metric.check_policies(policies)
        except PolicyError:
            continue
        metrics.append(metric)
    try:
        a = compute(joined, metrics, warn=False).values
    except MetricError:  # e.g. sDCG with a gain map that does not give some grade: the same refusal in both forms
        for metric in metrics:
            assert _outcome(joined, metric) == _outcome(ours, metric), str(metric)
        return
    assert np.array_equal(a, compute(ours, metrics, warn=False).values, equal_nan=True)


def _outcome(jr, metric) -> tuple[str, ...]:
    """One metric's values (as text, NaN included) on ``jr``, or the error it raises."""
    try:
        return tuple(map(repr, compute(jr, [metric], warn=False).values.ravel().tolist()))
    except MetricError as exc:
        return (type(exc).__name__, str(exc))


def test_empty_rankings_and_pools_are_evaluated_in_the_order_given() -> None:
    jr = judged_run_of_rankings([Ranking("z", (), {"a": 2}), Ranking("a", ("a", "b"), {}),
                                 Ranking("m", ("a",), {"a": 1, "b": -1})], Policies(ties="rank", undefined="skip"))
    assert jr.query_ids == ("z", "a", "m") and not jr.missing.any()
    metrics = [parse_metric(m) for m in ("P(denominator=retrieved)@5", "R@5", "RR@5", "nDCG@5", "SetP")]
    values = compute(jr, metrics, warn=False).values
    # z retrieved nothing: P over what was retrieved undefined, R = 0 of 1, RR 0, nDCG 0 / IDCG = 0, SetP undefined;
    # a has an empty pool: precision 0, recall and nDCG undefined (R = 0, IDCG = 0); m: one relevant at rank 1
    # (b's negative grade is pooled but unjudged)
    expected = [[math.nan, 0.0, 0.0, 0.0, math.nan], [0.0, math.nan, 0.0, math.nan, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0]]
    assert np.array_equal(values, np.array(expected), equal_nan=True)


def test_policies_and_bad_input() -> None:
    r = Ranking("q", ("u", "a", "n", "b"), {"a": 2.7, "b": 1, "n": -1})
    jr = judged_run_of_rankings([r], Policies(ties="rank", depth=3, judged_only=True))
    # depth 3 keeps u, a, n; judged only drops u (not judged) and n (negative: pooled, unjudged)
    assert jr.doc_ids is not None and jr.doc_ids.to_list() == ["a"] and jr.rank.tolist() == [1]
    jr = judged_run_of_rankings([r], Policies(negative_grades="nonrelevant", judged_grades="truncated"))
    assert jr.grades.tolist()[1:] == [2.7, 0.0, 1.0] and jr.judged_grades.tolist() == [2.0, 1.0, 0.0]
    with pytest.raises(InconsistentInputError, match="query 'q' is given twice"):
        judged_run_of_rankings([r, r])
    with pytest.raises(InconsistentInputError, match="doc 'a' appears more than once in the ranking of query 'q'"):
        judged_run_of_rankings([Ranking("q", ("a", "b", "a"), {})])
    with pytest.raises(InputError, match="finite number; got nan for query 'q', doc 'a'"):
        judged_run_of_rankings([Ranking("q", (), {"a": math.nan})])
