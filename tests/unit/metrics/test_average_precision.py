"""Hand arithmetic for AP (and AP@k, GMAP), RR (and RR@k), bpref (and GMBpref), infAP and binG.

Running example as in test_precision: judged {d1: 1, d2: 0, d3: 2, d4: 1, d5: 0, d9: 1}, run
[d1, d2, d3, u1, d4]; relevant (grade >= 1) at ranks 1, 3, 5; R = 4 (d9 is never retrieved); N = 2 (d2, d5).
"""

from __future__ import annotations

import math

import pytest

from gainscope import Judgments, Run, evaluate
from gainscope.errors import UndefinedMetricWarning

QRELS = {"q": {"d1": 1, "d2": 0, "d3": 2, "d4": 1, "d5": 0, "d9": 1}}
RUN = {"q": ["d1", "d2", "d3", "u1", "d4"]}
EPS = 1e-5  # trec_eval's INFAP_EPSILON


def value(metric: str, qrels=QRELS, run=RUN, query: str = "q", **policies) -> float:
    res = evaluate(Judgments.from_dict(qrels), Run.from_dict(run), [metric], **policies)
    return res.per_query(metric)[query]


# ---------------------------------------------------------------------------------------------- AP
@pytest.mark.parametrize(("metric", "expected"), [
    # precision at the relevant ranks: 1/1, 2/3, 3/5; divided by R = 4 (the unretrieved d9 counts):
    # (1 + 0.6667 + 0.6) / 4 = 2.2667 / 4 = 0.5667
    ("AP", (1 + 2 / 3 + 3 / 5) / 4),
    ("MAP", (1 + 2 / 3 + 3 / 5) / 4),   # alias
    # AP@3: only ranks 1..3 count, still divided by R = 4: (1 + 2/3) / 4 = 0.4167 (trec_eval map_cut)
    ("AP@3", (1 + 2 / 3) / 4),
    ("AP@1", 1 / 4),
    # rel=2: R = 1 (d3), at rank 3 -> precision 1/3
    ("AP(rel=2)", 1 / 3),
])
def test_ap(metric, expected):
    assert value(metric) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(("metric", "expected"), [
    # denominator = relevant found in the first k (TempoEval's focus-time MAP): 3 found, (1 + 2/3 + 3/5) / 3
    ("AP(denominator=retrieved)", (1 + 2 / 3 + 3 / 5) / 3),
    ("AP(denominator=retrieved)@3", (1 + 2 / 3) / 2),   # 2 found in the first 3
    ("AP(denominator=retrieved)@1", 1.0),               # 1 found at rank 1: 1/1
    ("AP(denominator=retrieved)@2", 1.0),               # d1 at 1, d2 not relevant: 1/1
])
def test_ap_denominator_retrieved(metric, expected):
    assert value(metric) == pytest.approx(expected, abs=1e-12)


def test_ap_denominator_retrieved_is_undefined_when_nothing_relevant_is_found():
    # run [d2, u1]: no relevant document in the ranking -> 0/0 (AP divides by R = 4 and gives 0)
    with pytest.warns(UndefinedMetricWarning, match=r"AP\(denominator=retrieved\) is undefined for 1 query"):
        assert value("AP(denominator=retrieved)", run={"q": ["d2", "u1"]}) == 0.0
    assert math.isnan(value("AP(denominator=retrieved)", run={"q": ["d2", "u1"]}, undefined="skip"))
    assert value("AP", run={"q": ["d2", "u1"]}) == 0.0


def test_ap_denominator_is_r_not_min_r_k():
    # R = 3 relevant, all retrieved first, AP@2 = (1/1 + 2/2) / R=3 = 0.6667 (not / min(R, k) = 1.0)
    qrels = {"q": {"a": 1, "b": 1, "c": 1}}
    assert value("AP@2", qrels, {"q": ["a", "b", "c"]}) == pytest.approx(2 / 3)


def test_ap_undefined_without_relevant():
    with pytest.warns(UndefinedMetricWarning, match="AP is undefined for 1 query"):
        assert value("AP", {"q": {"a": 0}}, {"q": ["a"]}) == 0.0
    assert math.isnan(value("AP", {"q": {"a": 0}}, {"q": ["a"]}, undefined="skip"))


def test_gmap_is_a_geometric_mean_with_floor():
    # q1: a, b relevant at ranks 1, 2 -> AP = (1/1 + 2/2) / 2 = 1; q2: x relevant, not retrieved -> AP = 0
    # per query GMAP = AP; aggregate = exp(mean(log(max(AP, 1e-5)))) = sqrt(1 * 1e-5) = 0.0031623
    qrels = {"q1": {"a": 1, "b": 1}, "q2": {"x": 1}}
    run = {"q1": ["a", "b"], "q2": ["y"]}
    res = evaluate(Judgments.from_dict(qrels), Run.from_dict(run), ["GMAP", "AP"])
    assert res.per_query("GMAP") == {"q1": 1.0, "q2": 0.0}
    assert res["GMAP"] == pytest.approx(math.sqrt(1e-5))
    assert res["AP"] == pytest.approx(0.5)


# ---------------------------------------------------------------------------------------------- RR
@pytest.mark.parametrize(("metric", "expected"), [
    ("RR", 1.0),            # d1 at rank 1
    ("MRR", 1.0),           # alias
    ("RR(rel=2)", 1 / 3),   # first grade >= 2: d3 at rank 3
    ("RR(rel=2)@2", 0.0),   # not within the first 2
    ("RR(rel=2)@3", 1 / 3),
])
def test_rr(metric, expected):
    assert value(metric) == pytest.approx(expected, abs=1e-12)


def test_rr_has_no_cutoff_but_rr_at_k_has():
    # the relevant document at rank 11: RR = 1/11 = 0.0909 (trec_eval recip_rank), RR@10 = 0 (MS MARCO MRR@10)
    run = {"q": [f"n{i}" for i in range(10)] + ["d1"]}
    assert value("RR", run=run) == pytest.approx(1 / 11)
    assert value("RR@10", run=run) == 0.0
    assert value("RR@11", run=run) == pytest.approx(1 / 11)


def test_rr_is_zero_not_undefined_without_relevant():
    # always defined: no warning even though nothing relevant exists
    assert value("RR", {"q": {"a": 0}}, {"q": ["a"]}) == 0.0


# ---------------------------------------------------------------------------------------------- bpref
def test_bpref_running_example():
    # R = 4, N = 2 (d2, d5), min(N, R) = 2. Walk the ranking, unjudged u1 skipped:
    #   d1 relevant, no judged non-relevant above -> 1
    #   d2 judged non-relevant (1 above from now on)
    #   d3 relevant -> 1 - min(1, 4)/2 = 0.5
    #   d4 relevant -> 1 - min(1, 4)/2 = 0.5   (u1 is skipped, not counted as non-relevant)
    # bpref = (1 + 0.5 + 0.5) / 4 = 0.5
    assert value("Bpref") == pytest.approx(0.5)
    assert value("bpref") == pytest.approx(0.5)  # alias


def test_bpref_unjudged_documents_are_skipped():
    # placing unjudged documents anywhere changes nothing: [u1, d1, u2, d2, u3, d3, d4] -> 0.5 as above
    assert value("Bpref", run={"q": ["u1", "d1", "u2", "d2", "u3", "d3", "d4"]}) == pytest.approx(0.5)


def test_bpref_without_judged_nonrelevant():
    # N = 0: every retrieved relevant document adds 1 (trec_eval); a, b retrieved, c not: (1 + 1) / 3 = 0.6667
    qrels = {"q": {"a": 1, "b": 1, "c": 1}}
    assert value("Bpref", qrels, {"q": ["u", "a", "v", "b"]}) == pytest.approx(2 / 3)


def test_bpref_min_n_r_in_the_denominator():
    # R = 1 (a), N = 3 (x, y, z): min(N, R) = 1. Run [x, y, a]: nonrel above a = 2 -> 1 - min(2, 1)/1 = 0
    qrels = {"q": {"a": 1, "x": 0, "y": 0, "z": 0}}
    assert value("Bpref", qrels, {"q": ["x", "y", "a"]}) == 0.0
    # Run [x, a]: 1 above -> 1 - min(1, 1)/1 = 0 as well; run [a, x]: nothing above -> 1
    assert value("Bpref", qrels, {"q": ["x", "a"]}) == 0.0
    assert value("Bpref", qrels, {"q": ["a", "x"]}) == 1.0


def test_bpref_negative_grades():
    # n has grade -1. Run [n, a, b]; judged a: 1, b: 0.
    qrels = {"q": {"a": 1, "n": -1, "b": 0}}
    run = {"q": ["n", "a", "b"]}
    # negative = pooled but unjudged (trec_eval): skipped; R = 1, N = 1; a has nothing above -> 1
    assert value("Bpref", qrels, run) == 1.0
    # negative = judged non-relevant (ranx): N = 2; a has n above -> 1 - min(1, 1)/min(2, 1) = 0
    assert value("Bpref", qrels, run, negative_grades="nonrelevant") == 0.0


def test_gmbpref_aggregates_geometrically():
    # q1 bpref 1 (a above x), q2 bpref 0 (x above a, min(N, R) = 1): gmean = sqrt(1 * 1e-5)
    qrels = {"q1": {"a": 1, "x": 0}, "q2": {"a": 1, "x": 0}}
    run = {"q1": ["a", "x"], "q2": ["x", "a"]}
    res = evaluate(Judgments.from_dict(qrels), Run.from_dict(run), ["GMBpref", "Bpref"])
    assert res.per_query("GMBpref") == {"q1": 1.0, "q2": 0.0}
    assert res["GMBpref"] == pytest.approx(math.sqrt(1e-5))
    assert res["Bpref"] == 0.5


# ---------------------------------------------------------------------------------------------- infAP
def test_infap_equals_ap_with_complete_judgments():
    # run [a, b, c] with a: 1, b: 0, c: 1 (all judged): AP = (1/1 + 2/3) / 2 = 0.8333
    # infAP: j=0 a -> 1; j=2 c: r=1, n=1, u=0:
    #   1/3 + (2/3) * ((1+1+0)/2) * ((1 + eps)/(1 + 1 + 2 eps)) = 1/3 + (2/3) * 1 * 0.5 = 2/3
    # infAP = (1 + 2/3) / 2 = 0.8333
    qrels = {"q": {"a": 1, "b": 0, "c": 1}}
    run = {"q": ["a", "b", "c"]}
    assert value("infAP", qrels, run) == pytest.approx(5 / 6, abs=1e-12)
    assert value("AP", qrels, run) == pytest.approx(5 / 6, abs=1e-12)


def test_infap_with_pooled_unjudged_and_unpooled_documents():
    # judged a: 1, b: 0, c: 1, p: -1 (in the pool, not judged); x is absent (outside the pool, skipped).
    # Run [p, a, x, b, c]; R = 2. With 0-based position j and r, n, u counted above:
    #   j=0 p: u = 1
    #   j=1 a: 1/2 + (1/2) * ((0+0+1)/1) * ((0 + eps)/(0 + 0 + 2 eps)) = 0.5 + 0.5 * 0.5 = 0.75; r = 1
    #   j=2 x: skipped
    #   j=3 b: n = 1
    #   j=4 c: 1/5 + (4/5) * ((1+1+1)/4) * ((1 + eps)/(1 + 1 + 2 eps)) = 0.2 + 0.6 * 0.5 = 0.5
    # infAP = (0.75 + 0.5) / 2 = 0.625
    qrels = {"q": {"a": 1, "b": 0, "c": 1, "p": -1}}
    run = {"q": ["p", "a", "x", "b", "c"]}
    assert value("infAP", qrels, run) == pytest.approx(0.625, abs=1e-12)
    # negative_grades="nonrelevant": p is judged non-relevant (n, not u):
    #   j=1 a: 1/2 + (1/2) * ((0+1+0)/1) * (eps / (0 + 1 + 2 eps)) = 0.5 + 0.5 * eps / (1 + 2 eps)
    #   j=4 c: r=1, n=2: 1/5 + (4/5) * (3/4) * ((1 + eps)/(1 + 2 + 2 eps)) = 0.2 + 0.6 * (1 + eps)/(3 + 2 eps)
    # infAP = (0.500005 + 0.4000007) / 2 = 0.4500028
    a_term = 0.5 + 0.5 * EPS / (1 + 2 * EPS)
    c_term = 0.2 + 0.6 * (1 + EPS) / (3 + 2 * EPS)
    assert value("infAP", qrels, run, negative_grades="nonrelevant") == pytest.approx((a_term + c_term) / 2,
                                                                                       abs=1e-12)
    assert (a_term + c_term) / 2 == pytest.approx(0.4500028, abs=1e-7)


# ---------------------------------------------------------------------------------------------- binG
def test_bing():
    # relevant documents discounted by the non-relevant (incl. unjudged) documents above them:
    #   d1: 0 above -> 1/log2(2) = 1; d3: 1 above (d2) -> 1/log2(3) = 0.6309;
    #   d4: 2 above (d2, u1) -> 1/log2(4) = 0.5
    # binG = (1 + 0.6309 + 0.5) / R=4 = 0.5327
    assert value("binG") == pytest.approx((1 + 1 / math.log2(3) + 0.5) / 4, abs=1e-12)
    assert value("binG") == pytest.approx(0.5327, abs=5e-5)
