"""Hand arithmetic for the counting metrics: P@k, R@k, Success@k, RelP@k, Rprec (and Rprec(mult)), Judged@k,
Unj@k.

The running example: one query "q" judged {d1: 1, d2: 0, d3: 2, d4: 1, d5: 0, d9: 1} (d9 is never retrieved),
run [d1, d2, d3, u1, d4] (u1 is not judged). At relevance level 1: relevant ranks 1, 3, 5; R = 4 (d1, d3,
d4, d9); n = 5 retrieved.
"""

from __future__ import annotations

import math

import pytest

from gainscope import Judgments, Run, evaluate
from gainscope.errors import UndefinedMetricWarning

QRELS = {"q": {"d1": 1, "d2": 0, "d3": 2, "d4": 1, "d5": 0, "d9": 1}}
RUN = {"q": ["d1", "d2", "d3", "u1", "d4"]}


def value(metric: str, qrels=QRELS, run=RUN, query: str = "q", **policies) -> float:
    res = evaluate(Judgments.from_dict(qrels), Run.from_dict(run), [metric], **policies)
    return res.per_query(metric)[query]


# ---------------------------------------------------------------------------------------------- P@k
@pytest.mark.parametrize(("metric", "expected"), [
    ("P@1", 1.0),          # d1 relevant: 1/1
    ("P@2", 0.5),          # d1 yes, d2 no: 1/2
    ("P@3", 2 / 3),        # d1, d3: 2/3
    ("P@5", 0.6),          # d1, d3, d4: 3/5
    ("P@10", 0.3),         # short run: 3 relevant / k = 10 (not / 5 retrieved), as trec_eval P.10
    ("P(rel=2)@3", 1 / 3),  # only d3 has grade >= 2: 1/3
    ("P(rel=2)@1", 0.0),
])
def test_precision(metric, expected):
    assert value(metric) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(("metric", "expected"), [
    # denominator = min(k, n) with n = 5 retrieved (Quepid, Elasticsearch _rank_eval, TempoEval)
    ("P(denominator=retrieved)@3", 2 / 3),    # min(3, 5) = 3: as P@3
    ("P(denominator=retrieved)@10", 3 / 5),   # min(10, 5) = 5: 3 relevant / 5 retrieved (P@10 gives 0.3)
    ("P(denominator=retrieved, rel=2)@10", 1 / 5),
    ("P(denominator=k)@10", 0.3),             # the default, spelled out: prints as P@10
])
def test_precision_denominator(metric, expected):
    assert value(metric) == pytest.approx(expected, abs=1e-12)


def test_precision_denominator_retrieved_is_undefined_without_results():
    # run [u1] with judged_only: nothing is left, min(10, 0) = 0 -> 0/0, undefined (Quepid and Elasticsearch
    # report 0, as the undefined="zero" policy does); P@10 divides by 10 and gives 0
    metrics = ["P(denominator=retrieved)@10", "P@10"]
    res = evaluate(Judgments.from_dict(QRELS), Run.from_dict({"q": ["u1"]}), metrics, judged_only=True,
                   undefined="skip")
    assert math.isnan(res.per_query(metrics[0])["q"]) and res.per_query("P@10")["q"] == 0.0
    with pytest.warns(UndefinedMetricWarning, match=r"P\(denominator=retrieved\)@10 is undefined for 1 query"):
        res = evaluate(Judgments.from_dict(QRELS), Run.from_dict({"q": ["u1"]}), metrics, judged_only=True)
    assert res.per_query(metrics[0])["q"] == 0.0


def test_precision_unjudged_documents_are_not_relevant():
    # run [u1, u2, d1]: two unjudged documents then a relevant one; P@3 = 1/3
    assert value("P@3", run={"q": ["u1", "u2", "d1"]}) == pytest.approx(1 / 3)


# ---------------------------------------------------------------------------------------------- R@k
@pytest.mark.parametrize(("metric", "expected"), [
    ("R@1", 0.25),          # 1 of R = 4
    ("R@3", 0.5),           # d1, d3: 2/4
    ("R@5", 0.75),          # d1, d3, d4: 3/4 (d9 is never retrieved, still counted in R)
    ("R@100", 0.75),
    ("R(rel=2)@3", 1.0),    # R = 1 (d3), found at rank 3
])
def test_recall(metric, expected):
    assert value(metric) == pytest.approx(expected, abs=1e-12)


# ---------------------------------------------------------------------------------------------- Success@k
@pytest.mark.parametrize(("metric", "expected"), [
    ("Success@1", 1.0),
    ("Success(rel=2)@2", 0.0),   # d3 (grade 2) is at rank 3
    ("Success(rel=2)@3", 1.0),
    ("Hit@1", 1.0),              # alias
])
def test_success(metric, expected):
    assert value(metric) == expected


def test_success_nothing_relevant_retrieved():
    assert value("Success@5", run={"q": ["d2", "u1", "d5"]}) == 0.0


# ---------------------------------------------------------------------------------------------- RelP@k
@pytest.mark.parametrize(("metric", "expected"), [
    ("RelP@3", 2 / 3),    # 2 relevant / min(3, R=4) = 2/3
    ("RelP@5", 0.75),     # 3 / min(5, 4) = 3/4
    ("RelP@10", 0.75),    # 3 / min(10, 4) = 3/4: a perfect run could reach 1 even though R < k
    ("RelP(rel=2)@3", 1.0),  # 1 / min(3, 1)
])
def test_relative_precision(metric, expected):
    assert value(metric) == pytest.approx(expected, abs=1e-12)


# ---------------------------------------------------------------------------------------------- Rprec
@pytest.mark.parametrize(("metric", "expected"), [
    ("Rprec", 0.5),                # R = 4: top 4 = d1, d2, d3, u1 -> 2 relevant / 4
    ("Rprec(rel=2)", 0.0),         # R = 1: top 1 = d1 (grade 1 < 2) -> 0/1
    ("Rprec(mult=0.5)", 0.5),      # c = floor(0.5*4 + 0.9) = floor(2.9) = 2: d1, d2 -> 1/2
    ("Rprec(mult=1.2)", 0.6),      # c = floor(1.2*4 + 0.9) = floor(5.7) = 5: d1, d3, d4 -> 3/5
    ("Rprec(mult=2)", 0.375),      # c = floor(2*4 + 0.9) = 8: 3 relevant, ranks 6-8 empty -> 3/8
    ("Rprec(mult=0.2)", 1.0),      # c = floor(0.2*4 + 0.9) = floor(1.7) = 1: d1 -> 1/1
])
def test_rprec(metric, expected):
    assert value(metric) == pytest.approx(expected, abs=1e-12)


def test_rprec_mult_rounding_to_zero_gives_zero():
    # R = 1, mult = 0.05: c = floor(0.05 + 0.9) = 0 -> 0 (a cutoff of 0 cannot hold anything)
    assert value("Rprec(mult=0.05)", qrels={"q": {"d1": 1}}, run={"q": ["d1"]}) == 0.0


def test_rprec_aliases():
    assert value("RPrec") == value("Rprec") == 0.5


# ---------------------------------------------------------------------------------------------- Judged / Unj
@pytest.mark.parametrize(("metric", "expected"), [
    ("Judged@3", 1.0),     # d1, d2, d3 judged: 3/3
    ("Judged@4", 0.75),    # u1 is not: 3/4
    ("Judged@10", 0.8),    # 4 judged of min(10, n = 5) = 5 retrieved: 4/5 (ir_measures denominator)
    ("Unj@4", 0.25),       # 1 unjudged in the top 4: 1/4
    ("Unj@10", 0.1),       # 1 unjudged / k = 10 (trec_eval unj.10 divides by k)
])
def test_judged_and_unjudged_denominators(metric, expected):
    assert value(metric) == pytest.approx(expected, abs=1e-12)


def test_negative_grade_is_unjudged_for_judged_and_unj():
    # d6 has grade -1 ("pooled, unjudged"): run [d6, d1] -> Judged@2 = 1/2, Unj@2 = 1/2
    qrels = {"q": {"d1": 1, "d6": -1}}
    run = {"q": ["d6", "d1"]}
    assert value("Judged@2", qrels, run) == 0.5
    assert value("Unj@2", qrels, run) == 0.5
    # with negative_grades="nonrelevant" d6 is judged (grade 0): Judged@2 = 2/2, Unj@2 = 0
    assert value("Judged@2", qrels, run, negative_grades="nonrelevant") == 1.0
    assert value("Unj@2", qrels, run, negative_grades="nonrelevant") == 0.0


def test_judged_is_undefined_without_retrieved_documents():
    from gainscope.errors import UndefinedMetricWarning

    # judged_only drops the only (unjudged) document: nothing retrieved, Judged@5 = 0/0 -> undefined;
    # scored 0 with a warning under undefined="zero", left out under "skip". Unj@5 stays defined: 0/5.
    qrels, run = {"q": {"d1": 1}}, {"q": ["u1"]}
    with pytest.warns(UndefinedMetricWarning, match="Judged@5"):
        assert value("Judged@5", qrels, run, judged_only=True) == 0.0
    res = evaluate(Judgments.from_dict(qrels), Run.from_dict(run), ["Judged@5", "Unj@5"], judged_only=True,
                   undefined="skip")
    assert res.undefined[:, 0].tolist() == [True]
    assert res["Unj@5"] == 0.0


def test_recall_is_undefined_without_relevant_documents():
    from gainscope.errors import UndefinedMetricWarning

    # R = 0: R@5 = 0/0; scored 0 with a warning naming the query (undefined="zero", trec_eval) ...
    with pytest.warns(UndefinedMetricWarning, match="R@5 is undefined for 1 query .*: q"):
        assert value("R@5", qrels={"q": {"d1": 0}}, run={"q": ["d1"]}) == 0.0
    # ... or left out (NaN) with undefined="skip"; P@5 stays defined: 0/5
    res = evaluate(Judgments.from_dict({"q": {"d1": 0}}), Run.from_dict({"q": ["d1"]}), ["R@5", "P@5"],
                   undefined="skip")
    assert res.per_query("P@5")["q"] == 0.0
    assert res.per_query("R@5")["q"] != res.per_query("R@5")["q"]  # NaN
