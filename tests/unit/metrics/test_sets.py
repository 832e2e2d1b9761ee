"""Hand arithmetic for the set metrics (the ranking as an unordered set), utility and the counts.

Running example: judged {d1: 1, d2: 0, d3: 2, d4: 1, d5: 0, d9: 1}, run [d1, d2, d3, u1, d4]:
n = 5 retrieved, rr = 3 relevant retrieved (d1, d3, d4), R = 4 relevant (d9 not retrieved).
"""

from __future__ import annotations

import math

import pytest

from gainscope import Judgments, Run, evaluate
from gainscope.errors import QueryCoverageWarning, UndefinedMetricWarning

QRELS = {"q": {"d1": 1, "d2": 0, "d3": 2, "d4": 1, "d5": 0, "d9": 1}}
RUN = {"q": ["d1", "d2", "d3", "u1", "d4"]}


def value(metric: str, qrels=QRELS, run=RUN, query: str = "q", **policies) -> float:
    res = evaluate(Judgments.from_dict(qrels), Run.from_dict(run), [metric], **policies)
    return res.per_query(metric)[query]


@pytest.mark.parametrize(("metric", "expected"), [
    ("SetP", 0.6),                  # rr / n = 3/5
    ("SetR", 0.75),                 # rr / R = 3/4
    ("SetRelP", 0.75),              # rr / min(n, R) = 3/4
    ("SetAP", 0.45),                # rr^2 / (n R) = 9/20
    ("SetF", 2 / 3),                # (1+1) * 0.6 * 0.75 / (0.6 + 0.75) = 0.9 / 1.35
    # trec_eval's beta (not squared): 1.5*0.6*0.75 / (0.5*0.6 + 0.75) = 0.675 / 1.05 = 0.6429
    ("SetF(beta=0.5)", 0.675 / 1.05),
    ("SetF(beta=0)", 0.6),          # beta = 0 is set precision: 1 * P * R / R
    ("SetP(rel=2)", 0.2),           # only d3: 1/5
    ("SetR(rel=2)", 1.0),           # R = 1 (d3), retrieved
])
def test_set_metrics(metric, expected):
    assert value(metric) == pytest.approx(expected, abs=1e-12)


def test_set_p_with_depth_is_precision_without_padding():
    # -M 3: [d1, d2, d3] -> SetP = 2/3; P@10 would still divide by 10
    assert value("SetP", depth=3) == pytest.approx(2 / 3)
    assert value("P@10", depth=3) == pytest.approx(0.2)


def test_set_f_is_zero_when_nothing_relevant_is_retrieved():
    assert value("SetF", run={"q": ["d2", "u1"]}) == 0.0


def test_set_metrics_undefined_cases():
    # R = 0: SetR, SetRelP, SetAP, SetF undefined; SetP = 0/1 defined
    qrels = {"q": {"a": 0}}
    res = evaluate(Judgments.from_dict(qrels), Run.from_dict({"q": ["a"]}),
                   ["SetP", "SetR", "SetRelP", "SetAP", "SetF"], undefined="skip")
    values = res.per_query
    assert values("SetP")["q"] == 0.0
    assert all(math.isnan(values(m)["q"]) for m in ("SetR", "SetRelP", "SetAP", "SetF"))
    with pytest.warns(UndefinedMetricWarning, match="SetR, SetRelP, SetAP, SetF are undefined"):
        evaluate(Judgments.from_dict(qrels), Run.from_dict({"q": ["a"]}),
                 ["SetP", "SetR", "SetRelP", "SetAP", "SetF"])


def test_utility():
    # default a=1, b=-1, c=0, d=0: 1*rr - 1*(n - rr) = 3 - 2 = 1
    assert value("utility") == 1.0
    assert value("Utility") == 1.0  # alias
    # a=2, b=-1, c=-0.5, d=0.1, D=100: 2*3 - 1*2 - 0.5*(4 - 3) + 0.1*(100 + 3 - 5 - 4) = 3.5 + 9.4 = 12.9
    metric = "utility(rel_ret=2, rel_nonret=-0.5, nonrel_nonret=0.1, num_docs=100)"
    assert value(metric) == pytest.approx(12.9, abs=1e-12)


def test_counts_per_query_and_summed():
    # q: n = 5, R = 4, rr = 3, judged non-relevant retrieved = 1 (d2); q2: [x] with x: 1 -> 1, 1, 1, 0
    qrels = {**QRELS, "q2": {"x": 1}}
    run = {**RUN, "q2": ["x"]}
    metrics = ["NumQ", "NumRet", "NumRel", "NumRelRet", "NumNonrelJudgedRet"]
    res = evaluate(Judgments.from_dict(qrels), Run.from_dict(run), metrics)
    assert [res.per_query(m)["q"] for m in metrics] == [1, 5, 4, 3, 1]
    assert [res.per_query(m)["q2"] for m in metrics] == [1, 1, 1, 1, 0]
    assert [res[m] for m in metrics] == [2, 6, 5, 4, 1]  # counts aggregate by summing


def test_counts_with_relevance_threshold_and_negative_grades():
    # rel=2: R = 1 (d3), rr = 1; judged non-relevant retrieved below 2: d1, d2, d4 = 3
    assert value("NumRel(rel=2)") == 1
    assert value("NumRelRet(rel=2)") == 1
    assert value("NumNonrelJudgedRet(rel=2)") == 3
    # a negative grade is not a judged non-relevant document unless negative_grades="nonrelevant"
    qrels, run = {"q": {"a": 1, "n": -1}}, {"q": ["n", "a"]}
    assert value("NumNonrelJudgedRet", qrels, run) == 0
    assert value("NumNonrelJudgedRet", qrels, run, negative_grades="nonrelevant") == 1


def test_counts_of_a_judged_query_without_ranking():
    # q2 judged (x: 1) but not ranked: under missing_queries="zero" it counts as a query with R = 1 and
    # nothing retrieved (NumQ and NumRel depend on the judgments only); under "skip" it is left out
    qrels = {**QRELS, "q2": {"x": 1}}
    metrics = ["NumQ", "NumRel", "NumRet", "NumRelRet"]
    with pytest.warns(QueryCoverageWarning):
        res = evaluate(Judgments.from_dict(qrels), Run.from_dict(RUN), metrics)
    assert [res.per_query(m)["q2"] for m in metrics] == [1, 1, 0, 0]
    assert [res[m] for m in metrics] == [2, 5, 5, 3]
    with pytest.warns(QueryCoverageWarning):
        res = evaluate(Judgments.from_dict(qrels), Run.from_dict(RUN), metrics, missing_queries="skip")
    assert [res[m] for m in metrics] == [1, 4, 5, 3]
