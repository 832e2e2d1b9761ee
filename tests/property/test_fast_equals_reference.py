"""Every metric's vectorised kernel equals its plain per-query reference, on random data, for random valid
parameters, under every evaluation policy the metric supports.

The data (``gainscope.testing.strategies``) has ties, negative and float grades, unjudged retrieved and
unretrieved judged documents, queries without relevant documents, judged queries missing from the run and
run-only queries. NaN (undefined) must be NaN on both sides; other values agree to 1e-12.

The graded metrics are also compared on grades up to 2000 (integers and floats), where 2^grade overflows
float64 and ERR's stopping probability rounds to 1, and ERR against exact rational arithmetic.
"""

from __future__ import annotations

import itertools
import re
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from gainscope.core.judged_run import build_judged_run
from gainscope.core.judgments import Judgments
from gainscope.core.policies import Policies
from gainscope.core.run import Run
from gainscope.errors import GainscopeWarning, InputWarning, MetricError, PolicyError
from gainscope.evaluation import compute, evaluate, ranked_query
from gainscope.metrics import all_metric_classes, parse_metric
from gainscope.metrics.context import Context
from gainscope.testing import strategies as gst

CLASSES = all_metric_classes()
SETTINGS = settings(max_examples=30, derandomize=True, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _judged_run(judgments, run, policies):
    with warnings.catch_warnings():  # coverage and tie warnings are expected on this data
        warnings.simplefilter("ignore", GainscopeWarning)
        return build_judged_run(judgments, run, policies)


def _fast(metric, jr):
    return np.asarray(metric.compute(Context(jr)), dtype=np.float64)


def _reference(metric, jr):
    return np.array([metric.reference(ranked_query(jr, i), jr.policies) for i in range(jr.num_queries)],
                    dtype=np.float64)


def _assert_same(metric, jr):
    """compute == reference, or both raise the same MetricError: ERR with a grade above max_grade (the kernel
    names the top grade of all queries, the reference that of the first query above it), or DCG or G with
    exponential gains beyond float64 (the same message up to the query)."""
    try:
        fast = _fast(metric, jr)
    except MetricError as exc:
        same = re.escape(str(exc).split(" of query ")[0]) if " of query " in str(exc) else None
        with pytest.raises(type(exc), match=same):
            _reference(metric, jr)
        return
    ref = []
    for i in range(jr.num_queries):
        try:
            ref.append(metric.reference(ranked_query(jr, i), jr.policies))
        except MetricError as exc:  # only for a query whose own grades exceed max_grade or float64
            raise AssertionError(
                f"{metric}: reference raised for query {jr.query_ids[i]!r} but compute did not") from exc
    ref = np.array(ref, dtype=np.float64)
    assert fast.shape == (jr.num_queries,)
    np.testing.assert_array_equal(np.isnan(fast), np.isnan(ref),
                                  err_msg=f"{metric} under {jr.policies}: NaN pattern differs")
    ok = ~np.isnan(ref)
    np.testing.assert_allclose(fast[ok], ref[ok], rtol=1e-12, atol=1e-12,
                               err_msg=f"{metric} under {jr.policies}, queries {jr.query_ids}")


def _supports(metric, policies):
    return policies.ties != "average" or type(metric).linear_in_gains


def _checkable(metric, policies):
    """Policies under which compute and reference can be compared for this metric (ties="average" only for
    metrics linear in gains; the others reject it, see test_average_ties_rejected_for_nonlinear_metrics)."""
    if not _supports(metric, policies):
        return Policies(**{**policies.as_dict(), "ties": "rank"})
    return policies


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.name)
@SETTINGS
@given(data=st.data())
def test_fast_equals_reference(cls, data):
    metric = data.draw(gst.metrics_of(cls), label="metric")
    judgments, run = data.draw(gst.judgments_and_runs(), label="data")
    policies = _checkable(metric, data.draw(gst.policies(), label="policies"))
    _assert_same(metric, _judged_run(judgments, run, policies))


#: graded metrics whose gains grow as 2^grade, and linear ones for contrast, on grades up to 2000
_LARGE_GRADE_METRICS = [parse_metric(x) for x in (
    "ERR", "ERR@1", "ERR@3", "ERR(max_grade=2000)", "ERR(max_grade=2500)@5", "nDCG(gain=exponential)",
    "nDCG(gain=exponential)@3", "nDCG(gain=exponential, ideal=retrieved)",
    "nDCG(gain=exponential, ideal=retrieved)@2", "nDCG(gain=exponential, rel=1000)@5",
    "nDCG(gain=exponential, ideal_depth=all)@2", "nDCG(gain=exponential, ideal_depth=retrieved)@3",
    "DCG(gain=exponential)",
    "DCG(gain=exponential)@3", "CG(gain=exponential)@2", "ndcg_rel(gain=exponential)", "Rndcg(gain=exponential)",
    "G(gain=exponential)",
    "nDCG@5", "DCG", "RBP", "ndcg_rel", "Rndcg", "G")]


@pytest.mark.parametrize("metric", _LARGE_GRADE_METRICS, ids=str)
@settings(max_examples=25, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_fast_equals_reference_on_large_grades(metric, data):
    judgments, run = data.draw(gst.judgments_and_runs(large_grades=True), label="data")
    policies = _checkable(metric, data.draw(gst.policies(), label="policies"))
    _assert_same(metric, _judged_run(judgments, run, policies))


def _exact_err(grades, top):
    """ERR in rational arithmetic: p = (2^g - 1) / 2^top, no rounding anywhere."""
    total, stay = Fraction(0), Fraction(1)
    for i, g in enumerate(grades, start=1):
        p = Fraction(2 ** g - 1, 2 ** top) if g > 0 else Fraction(0)
        total += stay * p / i
        stay *= 1 - p
    return total


@SETTINGS
@given(grades=st.lists(st.one_of(st.integers(0, 2000), st.sampled_from((0, 53, 54, 100, 1023, 1024, 2000))),
                       min_size=1, max_size=8))
def test_err_equals_exact_arithmetic_on_large_grades(grades):
    judgments = Judgments.from_dict({"q": {f"d{i}": g for i, g in enumerate(grades)}})
    run = Run.from_dict({"q": [f"d{i}" for i in range(len(grades))]})
    got = evaluate(judgments, run, ["ERR"], ties="rank", undefined="skip")["ERR"]
    expected = float(_exact_err(grades, max(grades))) if max(grades) > 0 else 0.0
    assert got == pytest.approx(expected, rel=1e-13, abs=1e-300)


# every policy combination (undefined= does not reach the kernels: see tests/unit/metrics/test_policy_effects.py)
# relevance levels 2 and "positive" (1, the default, is everywhere else); judged_grades is "truncated" where
# exactly one of (level "positive", negatives "nonrelevant") holds, so each of its values meets each value of
# every other policy (a full product would triple the run time)
_COMBOS = [(*combo, ("as_is", "truncated")[(i & 1) ^ ((i >> 1) & 1)]) for i, combo in enumerate(itertools.product(
    ("trec_eval", "rank", "average"), ("zero", "skip"), (None, 3), (False, True), (2, "positive"),
    ("unjudged", "nonrelevant")))]


@pytest.mark.slow
@settings(max_examples=6, derandomize=True, deadline=None, database=None,
          phases=[Phase.explicit, Phase.reuse, Phase.generate],  # no shrinking: ~100 evaluations per example
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=gst.judgments_and_runs(max_queries=4, max_docs=8))
def test_every_policy_combination_default_metrics(data):
    judgments, run = data
    metrics = [cls() for cls in CLASSES if not any(f.metadata.get("required") for f in cls.params())]
    metrics += [parse_metric(x) for x in (
        "P@3", "R@3", "Success@2", "RelP@3", "Judged@3", "Unj@3", "IPrec@0.5", "nDCG@3",
        "nDCG(gain=exponential, ideal=retrieved)@4", "AP@4", "RR@2", "ERR@3", "DCG@2", "Rprec(mult=2)",
        "CG@2", "P(denominator=retrieved)@3", "AP(denominator=retrieved)@3", "nDCG(ideal_depth=all)@2",
        "nDCG(ideal_depth=retrieved)@3", "avgRating@3", "avgRating100@3", "editDistanceFromBest@3",
        "editDistanceFromBest(distance=levenshtein)@4", "QuepidV1@3", "blogNDCG@3", "P(rel=positive)@2")]
    for ties, missing, depth, judged_only, level, negatives, judged_grades in _COMBOS:
        try:
            policies = Policies(ties=ties, missing_queries=missing, depth=depth, judged_only=judged_only,
                                relevance_level=level, negative_grades=negatives, judged_grades=judged_grades)
        except PolicyError:
            # the one combination without a defined expected value over tie orders
            assert ties == "average" and depth is not None and judged_only
            continue
        jr = _judged_run(judgments, run, policies)
        for m in metrics:
            if _checkable(m, policies) is policies:
                _assert_same(m, jr)


@pytest.mark.parametrize("cls", [c for c in CLASSES if not c.linear_in_gains and not c.order_independent],
                         ids=lambda c: c.name)
def test_average_ties_rejected_for_nonlinear_metrics(cls):
    metric = _default_instance(cls)
    policies = Policies(ties="average")
    with pytest.raises(PolicyError, match="does not support ties='average'"):
        metric.check_policies(policies)
    j = Judgments.from_dict({"q": {"a": 1, "b": 0}})
    r = Run.from_dict({"q": {"a": 1.0, "b": 0.5}})
    with pytest.raises(PolicyError, match=re.escape(f"{metric} does not support ties='average'")):
        evaluate(j, r, [metric], ties="average")
    with pytest.raises(PolicyError):
        compute(build_judged_run(j, r, policies), [metric])


@pytest.mark.parametrize("cls", [c for c in CLASSES if c.linear_in_gains], ids=lambda c: c.name)
def test_average_ties_accepted_for_linear_metrics(cls):
    metric = _default_instance(cls)
    metric.check_policies(Policies(ties="average"))  # does not raise
    j = Judgments.from_dict({"q": {"a": 1, "b": 0}})
    res = evaluate(j, Run.from_dict({"q": {"a": 1.0, "b": 0.5}}), [metric], ties="average")
    assert res.policies.ties == "average"


def _default_instance(cls):
    """The class with its defaults, and a small value for parameters that have none (cutoff, recall)."""
    kwargs = {}
    for f in cls.params():
        if f.metadata.get("required"):
            kwargs[f.name] = 0.5 if f.metadata.get("kind") == "float" else 3
    return cls(**kwargs)


@pytest.mark.parametrize(("metric", "expected"), [
    # a (grade 1) and u (unjudged) tie at the top, b (grade 0) follows; R = 1. With ties="average" the
    # relevant count at rank 1 is its expectation over the two orders of the tie: 1/2.
    ("P@1", 0.5),       # 0.5 / 1
    ("R@1", 0.5),       # 0.5 / R=1
    ("RelP@1", 0.5),    # 0.5 / min(1, 1)
    ("Rprec", 0.5),     # c = R = 1: 0.5 / 1
    ("Judged@1", 0.5),  # judged-ness of rank 1 is a (yes) or u (no) with equal chance
    ("Unj@1", 0.5),
    ("P@2", 0.5),       # the whole tie is inside the cutoff: 1/2 whatever the order
    ("Judged@3", 2 / 3),
])
def test_reference_and_compute_average_ties(metric, expected):
    m = parse_metric(metric)
    j = Judgments.from_dict({"q": {"a": 1, "b": 0}})
    for order in (["a", "u", "b"], ["u", "a", "b"]):
        jr = build_judged_run(j, Run.from_dict({"q": dict(zip(order, [1.0, 1.0, 0.5], strict=True))}),
                              Policies(ties="average"))
        assert _fast(m, jr).tolist() == [pytest.approx(expected)]
        assert _reference(m, jr).tolist() == [pytest.approx(expected)]


@pytest.mark.parametrize("cls", [c for c in CLASSES if not c.linear_in_gains and c.order_independent],
                         ids=lambda c: c.name)
def test_order_independent_nonlinear_metrics_accept_average_ties_without_depth(cls):
    """SetAP and SetF ignore the order of the ranking: averaging ties changes nothing unless a depth cuts a
    group of tied documents, where their non-linear value has no exact expected value."""
    metric = _default_instance(cls)
    metric.check_policies(Policies(ties="average"))
    with pytest.raises(PolicyError, match="does not support ties='average'"):
        metric.check_policies(Policies(ties="average", depth=5))
    j = Judgments.from_dict({"q": {"a": 1, "b": 0}})
    r = Run.from_dict({"q": {"a": 1.0, "b": 1.0, "c": 0.5}})
    averaged = evaluate(j, r, [metric], ties="average")[str(metric)]
    with pytest.warns(InputWarning):
        plain = evaluate(j, r, [metric])[str(metric)]
    assert averaged == plain
