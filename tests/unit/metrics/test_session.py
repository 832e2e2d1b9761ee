"""Hand arithmetic for the session family (seed 003's Retrieved Good Gain, IterationsForAllGoodResults, sDCG),
the session judged run, censored values in Results, and a ranked list read as a session.

Running example (good gain 2; grades a 3, b 1, c 4, d 2):

    iteration 1: search 1 [a, b], search 2 [a, c]   |R^1| 4, UR {a, b, c} 3, Dup 1, GR {a, c} 2, G_1 = 7
    iteration 2: search 3 [c, d, b]                 |R^2| 3, UR {d} 1, Dup 2, GR {d} 1, G_2 = 2
    iteration 3: search 4 []                        |R^3| 0: AvgGain_3 = 0 (seed 003's convention)

w(1) = 1, w(2) = 1/log2(3) = 0.63093, w(3) = 0.5.
"""

from __future__ import annotations

import math
import re
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gainscope import Judgments, Run, evaluate
from gainscope.core.judged_run import build_judged_run
from gainscope.core.policies import Policies
from gainscope.core.sessions import Session, build_session_run
from gainscope.errors import (
    GainscopeWarning,
    InconsistentInputError,
    InputError,
    InvalidParameterError,
    MetricError,
    PolicyError,
    UndefinedMetricWarning,
)
from gainscope.evaluation import compute, ranked_query
from gainscope.metrics import parse_metric
from gainscope.metrics.registry import lookup
from gainscope.testing import strategies as gst

W2 = 1 / math.log2(3)
GRADES = {"a": 3.0, "b": 1.0, "c": 4.0, "d": 2.0}
S = Session("s", documents=("a", "b", "a", "c", "c", "d", "b"), iterations=(1, 1, 1, 1, 2, 2, 2),
            searches=(1, 1, 2, 2, 3, 3, 3), num_iterations=3, grades=GRADES)


def values(metrics: list[str], *sessions: Session, policies: Policies | None = None) -> dict[str, list[float]]:
    res = compute(build_session_run(list(sessions) or [S], policies or Policies(ties="rank", undefined="skip")),
                  [parse_metric(m) for m in metrics], warn=False)
    return {m: res.values[:, j].tolist() for j, m in enumerate(res.metric_names)}


def value(metric: str, *sessions: Session) -> float:
    return next(iter(values([metric], *sessions).values()))[0]


# ---------------------------------------------------------------------------------------------- seed 003
@pytest.mark.parametrize(("metric", "expected"), [
    ("iterR(scope=at)@1", 4), ("iterUR(scope=at)@1", 3), ("iterDupR(scope=at)@1", 1), ("iterGR(scope=at)@1", 2),
    ("iterCG(scope=at)@1", 7), ("AvgGain@1", 7 / 4),
    ("iterR(scope=at)@2", 3), ("iterUR(scope=at)@2", 1), ("iterDupR(scope=at)@2", 2), ("iterGR(scope=at)@2", 1),
    ("iterCG(scope=at)@2", 2), ("AvgGain@2", 2 / 3),
    ("iterR(scope=at)@3", 0), ("AvgGain@3", 0.0),        # an iteration whose search returned nothing
    ("iterR", 7), ("iterUR", 4), ("iterDupR", 3), ("iterGR", 3),          # through N = 3: R = UR + DupR
    ("iterCG", 9),                                         # 7 + 2 + 0
    ("iterDCG", 7 + 2 * W2),                               # 7 * 1 + 2 * w(2) + 0 * w(3) = 8.2619
    ("RG", 9 / 3), ("DRG", (7 + 2 * W2) / 3),
    ("RAG", (7 / 4 + 2 / 3 + 0) / 3),                      # mean of AvgGain_1..3 = 0.8056
    ("DRAG", (7 / 4 + 2 / 3 * W2 + 0 * 0.5) / 3),
    ("SRE", 3 / 7), ("SRR", 3 / 7),                        # GR@3 / R@3 and DupR@3 / R@3
    ("iterCG@1", 7), ("RG@2", 9 / 2), ("SRE@1", 2 / 4), ("SRR@1", 1 / 4),
    ("iterCG(good_gain=1)@1", 8),                          # b (grade 1) is good too: 3 + 1 + 4
    ("iterCG(good_gain=4)", 4),                            # only c
    # past N a session adds empty iterations: sums stay, rates divide by i
    ("iterCG@5", 9), ("RG@5", 9 / 5), ("iterR@5", 7), ("iterR(scope=at)@5", 0), ("AvgGain@5", 0),
])
def test_seed_003_by_hand(metric, expected):
    assert value(metric) == pytest.approx(expected, abs=1e-12)


def test_values_at_n_are_the_last_iteration_and_match_at_n():
    at = values(["iterCG", "iterCG@3", "AvgGain", "AvgGain@3", "iterR(scope=at)", "iterR(scope=at)@3"])
    assert at["iterCG"] == at["iterCG@3"] and at["AvgGain"] == at["AvgGain@3"] == [0.0]
    assert at["iterR(scope=at)"] == at["iterR(scope=at)@3"] == [0.0]


def test_unknown_gain_makes_gain_values_undefined_from_its_iteration_on():
    # d's gain is unknown (a failed judge): iteration 2, where d first occurs, and everything through it and later
    # are undefined; iteration 1 stays; counts and SRR stay; iteration 3 alone has no unknown gain
    s = Session("s", S.documents, S.iterations, S.searches, 3, {**GRADES, "d": None})
    got = values(["iterCG@1", "iterCG@2", "iterCG", "iterCG(scope=at)@2", "iterCG(scope=at)@3", "iterGR@2", "RAG",
                  "DRAG", "SRE@2", "SRE@1", "iterR@2", "SRR@2", "AvgGain@2", "AvgGain@1", "iterDCG@3"], s)
    assert got["iterCG@1"] == [7.0] and got["SRE@1"] == [0.5] and got["AvgGain@1"] == [1.75]
    assert got["iterCG(scope=at)@3"] == [0.0]
    assert got["iterR@2"] == [7.0] and got["SRR@2"] == [3 / 7]
    for name in ("iterCG@2", "iterCG", "iterCG(scope=at)@2", "iterGR@2", "RAG", "DRAG", "SRE@2", "AvgGain@2",
                 "iterDCG@3"):
        assert math.isnan(got[name][0]), name


def test_an_unjudged_document_is_gain_zero_not_unknown():
    # the same as above with d's grade 0 (unjudged counted 0, as trec_eval): nothing is undefined
    s = Session("s", S.documents, S.iterations, S.searches, 3, {**GRADES, "d": 0.0})
    assert value("iterCG", s) == 7.0 and value("SRE", s) == pytest.approx(2 / 7)


def test_no_iteration_at_all():
    # N = 0: the values at i = 0; rates divide by i = 0, undefined
    empty = Session("e", (), (), (), 0, {})
    got = values(["iterCG", "iterDCG", "iterR", "SRE", "SRR", "AvgGain", "RG", "DRG", "RAG", "DRAG", "sDCG",
                  "IterationsForAllGoodResults(target=retrieved)"], empty)
    assert [got[m][0] for m in ("iterCG", "iterDCG", "iterR", "SRE", "SRR", "AvgGain", "sDCG")] == [0.0] * 7
    assert all(math.isnan(got[m][0]) for m in ("RG", "DRG", "RAG", "DRAG",
                                                "IterationsForAllGoodResults(target=retrieved)"))


# ---------------------------------------------------------------------------------------------- all good
def test_iterations_for_all_good_retrieved_target():
    # good first occurrences: a and c at i1, d at i2 -> 2; with cap 1: 1, censored (the true value is 2)
    metric = "IterationsForAllGoodResults(target=retrieved)"
    assert value(metric) == 2
    res = compute(build_session_run([S]), [lookup("IterationsForAllGoodResults")(cap=1, target="retrieved")])
    assert res.values[0, 0] == 1 and res.censored_queries(res.metrics[0]) == ["s"]
    # an unknown gain anywhere: it might be good, so undefined
    assert math.isnan(value(metric, Session("s", ("a", "x"), (1, 1), (1, 1), 1, {"a": 3.0, "x": None})))
    # no good result to find: undefined
    assert math.isnan(value(metric, Session("s", ("b",), (1,), (1,), 1, {"b": 1.0})))


def test_iterations_for_all_good_judged_target():
    # judged good: a (3), c (4), d (2), e (3); e is never retrieved: the cap, 100, censored
    judged = {"a": 3.0, "c": 4.0, "d": 2.0, "e": 3.0, "z": 1.0}
    s = Session("s", S.documents, S.iterations, S.searches, 3, GRADES, judged=judged)
    res = compute(build_session_run([s]), [parse_metric("IterationsForAllGoodResults")])
    assert res.values[0, 0] == 100 and res.censored_queries("IterationsForAllGoodResults") == ["s"]
    # without e: d, the last, is retrieved at i2
    s = Session("s", S.documents, S.iterations, S.searches, 3, GRADES, judged={"a": 3.0, "c": 4.0, "d": 2.0})
    assert value("IterationsForAllGoodResults", s) == 2
    # matches: document x is the judged e and a (a de-duplicated result known under two ids): both found at i1
    s = Session("s", ("x", "y"), (1, 3), (1, 2), 3, {"x": 3.0, "y": 2.0}, judged={"a": 3.0, "e": 3.0, "f": 2.0},
                matches={"x": ("e", "a"), "y": ("f",)})
    assert value("IterationsForAllGoodResults", s) == 3
    # an unknown gain does not matter: the judgments say which results are good
    s = Session("s", ("x", "u"), (1, 1), (1, 1), 1, {"x": 3.0, "u": None}, judged={"x": 3.0})
    assert value("IterationsForAllGoodResults", s) == 1


def test_iterations_for_all_good_of_a_ranked_list():
    # a ranked list: iterations are ranks. Judged good b (2) and c (3) are at ranks 2 and 4 -> 4
    j = Judgments.from_dict({"q": {"a": 1, "b": 2, "c": 3, "d": 0}, "r": {"x": 2}})
    r = Run.from_dict({"q": ["a", "b", "u", "c"], "r": ["y"]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GainscopeWarning)
        res = evaluate(j, r, ["IterationsForAllGoodResults", "IterationsForAllGoodResults(cap=3)"])
    # r never retrieves x: the cap, censored, left out of the mean (which is then q's alone)
    assert res.per_query("IterationsForAllGoodResults") == {"q": 4.0, "r": 100.0}
    assert res["IterationsForAllGoodResults"] == 4.0
    assert res.per_query("IterationsForAllGoodResults(cap=3)") == {"q": 3.0, "r": 3.0}
    assert math.isnan(res["IterationsForAllGoodResults(cap=3)"])  # both censored: no mean
    assert res.to_dict()["censored"] == {"IterationsForAllGoodResults": ["r"],
                                         "IterationsForAllGoodResults(cap=3)": ["q", "r"]}
    assert any("IterationsForAllGoodResults: 1 query censored" in n for n in res.notes)
    picked = res.select(["IterationsForAllGoodResults(cap=3)"])
    assert picked.censored_queries("IterationsForAllGoodResults(cap=3)") == ["q", "r"]


def test_a_missing_query_is_not_zero_iterations():
    # 0 would be the best value: a judged query without a ranking gets an empty session's value (the cap)
    j = Judgments.from_dict({"q": {"a": 2}, "m": {"b": 3}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GainscopeWarning)
        res = evaluate(j, Run.from_dict({"q": ["a"]}), ["IterationsForAllGoodResults", "iterCG"])
    assert res.per_query("IterationsForAllGoodResults") == {"m": 100.0, "q": 1.0}
    assert res.censored_queries("IterationsForAllGoodResults") == ["m"]
    assert res.per_query("iterCG") == {"m": 0.0, "q": 2.0}


def test_no_good_result_is_not_zero_iterations_under_undefined_zero():
    # q finds its good document a at rank 3 -> 3; n has no good result (grade 1 < 2): undefined, and under the
    # default undefined="zero" it stays undefined (0 iterations would be the best value) and out of the mean:
    # mean 3, not (3 + 0) / 2 = 1.5. AP(rel=2) (higher is better) is zeroed for n as trec_eval does, and warned.
    j = Judgments.from_dict({"q": {"a": 2}, "n": {"b": 1}})
    r = Run.from_dict({"q": ["x", "y", "a"], "n": ["b"]})
    with pytest.warns(UndefinedMetricWarning) as caught:
        res = evaluate(j, r, ["IterationsForAllGoodResults", "AP(rel=2)"], undefined="zero")
    per_query = res.per_query("IterationsForAllGoodResults")
    assert per_query["q"] == 3.0 and math.isnan(per_query["n"])
    assert res["IterationsForAllGoodResults"] == 3.0
    assert res.per_query("AP(rel=2)") == {"n": 0.0, "q": 1 / 3}
    assert "IterationsForAllGoodResults: undefined for 1 query, left out of the mean rather than scored 0 " \
           "(its best value): n" in res.notes
    assert [str(w.message).split(" is undefined")[0] for w in caught] == ["AP(rel=2)"]  # only what was zeroed
    # skip: the same value and no note
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        skipped = evaluate(j, r, ["IterationsForAllGoodResults"], undefined="skip")
    assert skipped["IterationsForAllGoodResults"] == 3.0 and not any("left out of the mean" in n for n in skipped.notes)


# ---------------------------------------------------------------------------------------------- sDCG
def test_session_dcg_by_hand():
    # search 1 [a 3, b 1]: 3/1 + 1/max(1, log2 2) = 4, discount 1
    # search 2 [a dup, c 4]: 4/max(1, log2 2) = 4, discount 1 + log4 2 = 1.5
    # search 3 [c dup, d 2, b dup]: 2/1 = 2, discount 1 + log4 3 = 1.79248; search 4 (empty) adds nothing
    expected = 4 + 4 / 1.5 + 2 / (1 + math.log(3, 4))
    assert value("sDCG") == pytest.approx(expected, abs=1e-12)
    # depth 1: search 1 a (3); search 2 a again (c is below the depth); search 3 c, first met within the depth
    assert value("sDCG(depth=1)") == pytest.approx(3 + 4 / (1 + math.log(3, 4)), abs=1e-12)
    # b = 3: rank 2 is not discounted either; bq = 2: search 2 by 1 + log2 2 = 2
    assert value("sDCG(bq=2)") == pytest.approx(4 + 4 / 2 + 2 / (1 + math.log2(3)), abs=1e-12)
    # the paper's steep gains
    steep = "sDCG(gain={0: 0, 1: 1, 2: 10, 3: 100, 4: 1000})"
    assert value(steep) == pytest.approx(101 + 1000 / 1.5 + 10 / (1 + math.log(3, 4)), abs=1e-9)


def test_session_dcg_gain_map_must_give_every_grade():
    with pytest.raises(InvalidParameterError, match=r"^the sDCG gain mapping has no gain for grade 3 \(it maps 0, 4\)"):
        value("sDCG(gain={0: 0, 4: 16})")
    with pytest.raises(InvalidParameterError, match=r"the 'b' parameter of sDCG must be a number > 1; got 1\."):
        parse_metric("sDCG(b=1)")


def test_session_dcg_refuses_exponential_gains_beyond_float64():
    # grade 1100: 2^1100 - 1 exceeds float64 (about 1.8e308): an error as DCG's, never inf; grade 1000 stays finite
    # (2^1000 - 1 = 1.07e301, at rank 1 of search 1: not discounted)
    huge = Session("s", ("a", "b"), (1, 1), (1, 1), 1, {"a": 1100.0, "b": 1.0})
    with pytest.raises(MetricError, match=re.escape(
            "sDCG(gain=exponential) of query 's' exceeds the largest float64 number (about 1.8e308): exponential "
            "gains 2^grade - 1 exceed it from grade 1024 on (and their sums earlier); give sDCG linear gains or a "
            "map of smaller gains instead.")):
        value("sDCG(gain=exponential)", huge)
    jr = build_session_run([huge])
    with pytest.raises(MetricError, match="exceeds the largest float64 number"):
        parse_metric("sDCG(gain=exponential)").reference(ranked_query(jr, 0), jr.policies)
    assert value("sDCG", huge) == 1100 + 1  # linear gains: b at rank 2, max(1, log2 2) = 1
    fine = Session("s", ("a",), (1,), (1,), 1, {"a": 1000.0})
    assert value("sDCG(gain=exponential)", fine) == 2.0 ** 1000 - 1


def test_session_dcg_explains_each_counted_document():
    jr = build_session_run([S])
    e = parse_metric("sDCG").explain(ranked_query(jr, 0), jr.policies)
    assert [(s.rank, s.doc_id) for s in e.run] == [(1, "a"), (2, "b"), (4, "c"), (6, "d")]  # first occurrences
    assert e.value == pytest.approx(value("sDCG"), abs=1e-12)


# ---------------------------------------------------------------------------------------------- a ranked list
@settings(max_examples=40, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=gst.judgments_and_runs(), policies=gst.policies(ties=st.sampled_from(("trec_eval", "rank"))),
       t=st.sampled_from((0.5, 1.0, 2.0, 3.0)), k=st.one_of(st.none(), st.integers(1, 12)))
def test_a_ranked_list_is_a_session_of_one_document_per_iteration(data, policies, t, k):
    # seed 003's DCG@i of a ranked list is DCG@k with grades below the good gain giving nothing; so for CG
    judgments, run = data
    at = "" if k is None else f"@{k}"
    names = [f"iterDCG(good_gain={t}){at}", f"DCG(rel={t}){at}", f"iterCG(good_gain={t}){at}", f"CG(rel={t}){at}"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GainscopeWarning)
        res = compute(build_judged_run(judgments, run, policies), [parse_metric(n) for n in names], warn=False)
    assert res.values[:, 0] == pytest.approx(res.values[:, 1], rel=1e-12, abs=1e-12)
    assert res.values[:, 2] == pytest.approx(res.values[:, 3], rel=1e-12, abs=1e-12)


def test_ranked_list_counts():
    # ranked [a, u, b]: every rank its own iteration: R@2 = 2, no duplicates, |R^i| = 1 up to n = 3
    got = values_of_list(["iterR@2", "iterDupR", "SRR", "iterR(scope=at)@3", "iterR(scope=at)@4", "iterR@10"])
    assert got == {"iterR@2": 2.0, "iterDupR": 0.0, "SRR": 0.0, "iterR(scope=at)@3": 1.0,
                   "iterR(scope=at)@4": 0.0, "iterR@10": 3.0}


def values_of_list(metrics: list[str]) -> dict[str, float]:
    res = evaluate(Judgments.from_dict({"q": {"a": 2, "b": 0}}), Run.from_dict({"q": ["a", "u", "b"]}), metrics)
    return {m: res.per_query(m)["q"] for m in metrics}


# ---------------------------------------------------------------------------------------------- names, refusals
def test_names_do_not_collide_with_the_core():
    # CG, DCG (over ranks) and R (recall) stay the core's; the session metrics carry the prefix iter
    assert lookup("CG").__module__.endswith("graded") and lookup("R").__module__.endswith("precision")
    assert lookup("iterCG").__module__.endswith("session") and lookup("iterR").__module__.endswith("session")
    assert str(parse_metric("iterCG(good_gain=3, scope=at)@2")) == "iterCG(good_gain=3, scope=at)@2"


def test_session_metrics_refuse_average_ties():
    with pytest.raises(PolicyError, match=r"^iterCG does not support ties='average'"):
        parse_metric("iterCG").check_policies(Policies(ties="average"))


def test_build_session_run_checks_its_input():
    with pytest.raises(InconsistentInputError, match="session 's' is given twice"):
        build_session_run([S, S])
    with pytest.raises(InconsistentInputError, match="document 'x' has no entry in grades"):
        build_session_run([Session("s", ("x",), (1,), (1,), 1, {})])
    with pytest.raises(InputError, match=r"iterations must be non-decreasing within 1..1 \(num_iterations\)"):
        build_session_run([Session("s", ("a", "a"), (1, 2), (1, 2), 1, {"a": 1.0})])
    with pytest.raises(InputError, match="1 documents but 0 iterations and 1 searches"):
        build_session_run([Session("s", ("a",), (), (1,), 1, {"a": 1.0})])
    with pytest.raises(PolicyError, match="depth and judged_only do not apply to sessions"):
        build_session_run([S], Policies(depth=3))
    with pytest.raises(InputError, match="a grade must be a finite number or None"):
        build_session_run([Session("s", ("a",), (1,), (1,), 1, {"a": math.inf})])


def test_session_grades_follow_the_grade_policies():
    # a negative grade is 'pooled, unjudged' (never good; out of the judged pool); 'nonrelevant' makes it 0.
    # judged_grades='truncated' truncates the pool (2.5 -> 2), not the ranked grade
    s = Session("s", ("a", "n"), (1, 1), (1, 1), 1, {"a": 2.5, "n": -1.0})
    jr = build_session_run([s], Policies(ties="rank", judged_grades="truncated"))
    assert jr.judged_grades.tolist() == [2.0] and jr.judged_doc_ids.to_list() == ["a"]
    assert jr.grades.tolist() == [2.5, -1.0]
    jr = build_session_run([s], Policies(ties="rank", negative_grades="nonrelevant"))
    assert jr.grades.tolist() == [2.5, 0.0] and jr.judged_grades.tolist() == [2.5, 0.0]
