"""Hand arithmetic for the graded metrics: DCG, nDCG (each convention parameter), ERR, RBP, RBPResid and
trec_eval's G, ndcg_rel and Rndcg.

Running example: judged {a: 2, b: 0, c: 1, d: 1}, run [a, b, c] (d is relevant but never retrieved).
Ranked grades [2, 0, 1]; judged positive grades {2, 1, 1}. 1/log2(3) = 0.63093, 1/log2(4) = 0.5.
"""

from __future__ import annotations

import math

import pytest

from gainscope import Judgments, Run, evaluate, explain
from gainscope.errors import InvalidParameterError, MetricError, UndefinedMetricWarning

QRELS = {"q": {"a": 2, "b": 0, "c": 1, "d": 1}}
RUN = {"q": ["a", "b", "c"]}
L3 = 1 / math.log2(3)  # discount of rank 2


def value(metric: str, qrels=QRELS, run=RUN, query: str = "q", **policies) -> float:
    res = evaluate(Judgments.from_dict(qrels), Run.from_dict(run), [metric], **policies)
    return res.per_query(metric)[query]


# ---------------------------------------------------------------------------------------------- DCG
@pytest.mark.parametrize(("metric", "expected"), [
    ("DCG", 2 + 0 + 0.5),               # 2/log2(2) + 0/log2(3) + 1/log2(4) = 2.5
    ("DCG@1", 2.0),
    ("DCG@2", 2.0),
    ("DCG(gain=exponential)", 3.5),     # (2^2-1)/1 + 0 + (2^1-1)/2 = 3 + 0.5
    ("DCG(rel=2)", 2.0),                # grade 1 below rel=2 -> gain 0
])
def test_dcg(metric, expected):
    assert value(metric) == pytest.approx(expected, abs=1e-12)


# ---------------------------------------------------------------------------------------------- CG
@pytest.mark.parametrize(("metric", "expected"), [
    ("CG", 2 + 0 + 1),                  # gains 2, 0, 1 added up, no discount
    ("CG@2", 2.0),                      # 2 + 0
    ("CG@10", 3.0),                     # a cutoff beyond the ranking: the whole ranking
    ("CG(gain=exponential)", 3 + 0 + 1),  # (2^2 - 1) + 0 + (2^1 - 1)
    ("CG(rel=2)", 2.0),                 # grade 1 below rel=2 adds nothing
])
def test_cg(metric, expected):
    assert value(metric) == pytest.approx(expected, abs=1e-12)


def test_cg_counts_unjudged_and_negative_grades_as_zero():
    # run [u, a, n]: u is not judged, n has grade -1 (pooled, unjudged): CG = 0 + 2 + 0
    assert value("CG", qrels={"q": {"a": 2, "n": -1}}, run={"q": ["u", "a", "n"]}) == 2.0


# ---------------------------------------------------------------------------------------------- nDCG
@pytest.mark.parametrize(("metric", "expected"), [
    # DCG = 2.5; IDCG over all judged {2, 1, 1} = 2 + 1/log2(3) + 1/log2(4) = 3.1309; nDCG = 0.7985
    ("nDCG", 2.5 / (2 + L3 + 0.5)),
    ("nDCG@10", 2.5 / (2 + L3 + 0.5)),   # the cutoff beyond both lists changes nothing
    ("ndcg", 2.5 / (2 + L3 + 0.5)),      # alias
    # @2: DCG@2 = 2; IDCG@2 = 2 + 1/log2(3) = 2.6309; 0.7602
    ("nDCG@2", 2 / (2 + L3)),
    # exponential gains 3, 0, 1: DCG = 3 + 0.5 = 3.5; IDCG = 3 + 1/log2(3) + 0.5 = 4.1309; 0.8473
    ("nDCG(gain=exponential)", 3.5 / (3 + L3 + 0.5)),
    # map {1: 1, 2: 5}: gains 5, 0, 1: DCG = 5.5; IDCG = 5 + 0.6309 + 0.5 = 6.1309; 0.8971
    ("nDCG(gain={1: 1, 2: 5})", 5.5 / (5 + L3 + 0.5)),
    # a map that does not list grade 1 keeps gain = grade for it (as trec_eval ndcg.2=5)
    ("nDCG(gain={2: 5})", 5.5 / (5 + L3 + 0.5)),
    # ideal from the retrieved grades only [2, 1, 0] (d is ignored): IDCG = 2 + 0.6309 = 2.6309; 0.9502
    ("nDCG(ideal=retrieved)", 2.5 / (2 + L3)),
    ("nDCG(ideal=retrieved)@2", 2 / (2 + L3)),
    # rel=2: grades below 2 get no gain, in the run and in the ideal: DCG = 2, IDCG = 2 -> 1
    ("nDCG(rel=2)", 1.0),
])
def test_ndcg(metric, expected):
    assert value(metric) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(("metric", "expected"), [
    # ideal_depth: how deep the ideal goes. Judged positive gains {2, 1, 1}; run [a, b, c] (3 retrieved).
    # "k" (default) at k = 2: DCG@2 = 2; IDCG@2 = 2 + 1/log2(3) = 2.6309 -> 0.7602 (= nDCG@2)
    ("nDCG(ideal_depth=k)@2", 2 / (2 + L3)),
    # "all" (Quepid's nDCG): IDCG over all three = 2 + 0.6309 + 0.5 = 3.1309 -> 2 / 3.1309 = 0.6388
    ("nDCG(ideal_depth=all)@2", 2 / (2 + L3 + 0.5)),
    # "retrieved" (Elasticsearch): cut at min(k, n) = min(2, 3) = 2 -> as "k" here
    ("nDCG(ideal_depth=retrieved)@2", 2 / (2 + L3)),
    # at k = 10: "k" and "all" both take the whole ideal (3 gains) -> 2.5 / 3.1309
    ("nDCG(ideal_depth=all)@10", 2.5 / (2 + L3 + 0.5)),
    # "retrieved" at k = 10: min(10, 3) = 3 positions -> all three gains here too
    ("nDCG(ideal_depth=retrieved)@10", 2.5 / (2 + L3 + 0.5)),
    # without a cutoff: "all" and "k" are trec_eval's ndcg
    ("nDCG(ideal_depth=all)", 2.5 / (2 + L3 + 0.5)),
])
def test_ndcg_ideal_depth(metric, expected):
    assert value(metric) == pytest.approx(expected, abs=1e-12)


def test_ndcg_ideal_depth_retrieved_cuts_at_the_number_retrieved():
    # the quepid-rre-rank-eval notes' scenario A: one hit, rated 3, returned; five documents rated 3 exist.
    # Exponential gain 7. "retrieved" (Elasticsearch normalize=true): IDCG cut at min(10, 1) = 1 -> 7/7 = 1.0;
    # "k" (trec_eval ndcg_cut, Quepid NDCG_CUT): IDCG@10 over five 7s = 7 * (1 + 0.6309 + 0.5 + 0.4307 + 0.3869)
    # = 20.6396 -> 0.3392; "all" (Quepid nDCG): the same five -> 0.3392
    qrels = {"q": {f"d{i}": 3 for i in range(5)}}
    run = {"q": ["d0"]}
    ideal5 = sum(1 / math.log2(i + 2) for i in range(5))
    assert value("nDCG(gain=exponential, ideal_depth=retrieved)@10", qrels, run) == 1.0
    assert value("nDCG(gain=exponential)@10", qrels, run) == pytest.approx(1 / ideal5)
    assert value("nDCG(gain=exponential, ideal_depth=all)@10", qrels, run) == pytest.approx(1 / ideal5)
    assert round(1 / ideal5, 3) == 0.339  # the notes' table: 0.339 (Quepid) vs 1.000 (Elasticsearch)


def test_ndcg_ideal_depth_all_keeps_a_perfect_top_k_below_one():
    # scenario C of the notes: a perfect top 10 but 20 documents rated 3 (gain 7 each):
    # DCG@10 = 7 * sum_{i=1..10} 1/log2(i+1); IDCG uncut = 7 * sum_{i=1..20} 1/log2(i+1) -> 0.645
    qrels = {"q": {f"d{i:02d}": 3 for i in range(20)}}
    run = {"q": [f"d{i:02d}" for i in range(10)]}
    got = value("nDCG(gain=exponential, ideal_depth=all)@10", qrels, run)
    assert got == pytest.approx(sum(1 / math.log2(i + 2) for i in range(10))
                                / sum(1 / math.log2(i + 2) for i in range(20)))
    assert round(got, 3) == 0.645
    assert value("nDCG(gain=exponential)@10", qrels, run) == 1.0


def test_ndcg_rounded_values_from_the_brief():
    assert value("nDCG") == pytest.approx(0.7985, abs=5e-5)
    assert value("nDCG(gain=exponential)") == pytest.approx(0.8473, abs=5e-5)
    assert value("nDCG(ideal=retrieved)") == pytest.approx(0.9502, abs=5e-5)


def test_ndcg_without_cutoff_is_not_ndcg_cut_at_run_length():
    # run [b, a] (2 documents) against judged {a: 2, b: 0, c: 1, d: 1}:
    # nDCG (no cutoff): DCG = 0 + 2/log2(3) = 1.2619; IDCG over all judged = 3.1309 -> 0.4030
    # nDCG@2: IDCG@2 = 2 + 1/log2(3) = 2.6309 -> 0.4796
    run = {"q": ["b", "a"]}
    assert value("nDCG", run=run) == pytest.approx(2 * L3 / (2 + L3 + 0.5), abs=1e-12)
    assert value("nDCG@2", run=run) == pytest.approx(2 * L3 / (2 + L3), abs=1e-12)


def test_ndcg_unjudged_documents_have_no_gain():
    # [u, a, c]: DCG = 0 + 2/log2(3) + 1/log2(4) = 1.7619; IDCG = 3.1309 -> 0.5627
    assert value("nDCG", run={"q": ["u", "a", "c"]}) == pytest.approx((2 * L3 + 0.5) / (2 + L3 + 0.5))


def test_ndcg_undefined_without_positive_gain():
    with pytest.warns(UndefinedMetricWarning, match="nDCG@5 is undefined"):
        assert value("nDCG@5", {"q": {"a": 0}}, {"q": ["a"]}) == 0.0
    assert math.isnan(value("nDCG@5", {"q": {"a": 0}}, {"q": ["a"]}, undefined="skip"))


def test_ndcg_ignores_the_relevance_level_policy():
    # trec_eval ignores -l for nDCG: the same value at relevance_level 1 and 2
    assert value("nDCG", relevance_level=2) == value("nDCG") == pytest.approx(2.5 / (2 + L3 + 0.5))


# ---------------------------------------------------------------------------------------------- ERR
def test_err_scale_is_the_largest_judged_grade():
    # max_grade None: scale = 2 (largest judged grade); p = (2^g - 1) / 2^2: a 3/4, b 0, c 1/4
    # ERR = 1/1 * 3/4 + 1/2 * 0 * (1 - 3/4) + 1/3 * 1/4 * (1 - 3/4)(1 - 0) = 0.75 + 0.0208 = 0.7708
    assert value("ERR") == pytest.approx(0.75 + (1 / 3) * 0.25 * 0.25, abs=1e-12)
    assert value("ERR@1") == pytest.approx(0.75, abs=1e-12)


def test_err_with_max_grade():
    # max_grade=4: p = (2^g - 1) / 16: a 3/16 = 0.1875, c 1/16 = 0.0625
    # ERR = 0.1875 + 1/3 * 0.0625 * (1 - 0.1875) = 0.1875 + 0.016927 = 0.2044
    assert value("ERR(max_grade=4)") == pytest.approx(0.1875 + (1 / 3) * 0.0625 * 0.8125, abs=1e-12)


def test_err_default_scale_spans_all_evaluated_queries():
    # another query judged a grade 4: the scale becomes 4 for q as well -> the max_grade=4 value above
    qrels = {**QRELS, "q2": {"z": 4}}
    run = {**RUN, "q2": ["z"]}
    res = evaluate(Judgments.from_dict(qrels), Run.from_dict(run), ["ERR"])
    assert res.per_query("ERR")["q"] == pytest.approx(0.1875 + (1 / 3) * 0.0625 * 0.8125, abs=1e-12)
    # q2: p = 15/16 at rank 1
    assert res.per_query("ERR")["q2"] == pytest.approx(15 / 16)
    assert any("largest judged grade, 4" in n for n in res.notes)


def test_err_grade_above_max_grade_is_an_error():
    with pytest.raises(InvalidParameterError) as err:
        value("ERR(max_grade=1)")
    assert str(err.value) == ("ERR(max_grade=1) has max_grade=1 but a document has grade 2; raise max_grade "
                              "to the top of your grading scale")


def test_err_without_relevant_is_zero():
    assert value("ERR", {"q": {"a": 0}}, {"q": ["a"]}) == 0.0


# ---------------------------------------------------------------------------------------------- RBP
def test_rbp_default_persistence_is_0_9():
    # binary grades (largest judged grade 1 -> gains = grades): [1, 0, 1]
    # RBP = (1 - 0.9) * (1 + 0 * 0.9 + 1 * 0.81) = 0.181
    qrels = {"q": {"a": 1, "b": 0, "c": 1}}
    assert value("RBP", qrels) == pytest.approx(0.181, abs=1e-12)
    # p = 0.5: 0.5 * (1 + 0.25) = 0.625
    assert value("RBP(p=0.5)", qrels) == pytest.approx(0.625, abs=1e-12)


def test_rbp_graded_gains_are_divided_by_the_largest_judged_grade():
    # judged {a: 2, b: 0, c: 1, d: 4}: the query's largest grade is 4 -> gains a 2/4, c 1/4
    # RBP = 0.1 * (0.5 + 0.81 * 0.25) = 0.07025
    qrels = {"q": {"a": 2, "b": 0, "c": 1, "d": 4}}
    assert value("RBP", qrels) == pytest.approx(0.07025, abs=1e-12)
    # rel=2: binary gains grade >= 2: a -> 1, c -> 0: RBP = 0.1 * 1 = 0.1
    assert value("RBP(rel=2)", qrels) == pytest.approx(0.1, abs=1e-12)


def test_rbp_residual():
    # run [a, u, c], u unjudged at rank 2: resid = p^n + (1 - p) * p^(2-1) = 0.9^3 + 0.1 * 0.9 = 0.819
    qrels = {"q": {"a": 1, "c": 1}}
    assert value("RBPResid", qrels, {"q": ["a", "u", "c"]}) == pytest.approx(0.819, abs=1e-12)
    # every ranked document judged: 0 (trec_eval leaves out the p^n tail then)
    assert value("RBPResid", qrels, {"q": ["a", "c"]}) == 0.0
    # p = 0.5: 0.5^3 + 0.5 * 0.5 = 0.375
    assert value("RBPResid(p=0.5)", qrels, {"q": ["a", "u", "c"]}) == pytest.approx(0.375, abs=1e-12)


# ----------------------------------------------------------------------------------------- G, ndcg_rel, Rndcg
def test_g():
    # judged {a: 2, b: 0, c: 1}: ideal gains [2, 1]. Run [b, a, c]; S = run gain so far, C = sum of
    # max(ideal gain at j, 1) so far:
    #   b: gain 0, C = 2 (no term)
    #   a: gain 2, S = 2, C = 3 -> 2 / log2(2 + 3 - 2) = 2/log2(3) = 1.2619
    #   c: gain 1, S = 3, C = 4 -> 1 / log2(2 + 4 - 3) = 1/log2(3) = 0.6309
    # G = (1.2619 + 0.6309) / (2 + 1) = 0.6309
    qrels = {"q": {"a": 2, "b": 0, "c": 1}}
    assert value("G", qrels, {"q": ["b", "a", "c"]}) == pytest.approx(3 * L3 / 3, abs=1e-12)
    # the ideal run [a, c, b]: 2/log2(2) + 1/log2(2 + 3 - 3) = 3 -> 3/3 = 1
    assert value("G", qrels, {"q": ["a", "c", "b"]}) == pytest.approx(1.0, abs=1e-12)


def test_ndcg_rel():
    # ideal [2, 1, 1]: IDCG@1 = 2, IDCG@3 = 3.1309. Run [a, b, c]:
    #   a (gain 2): DCG@1 / IDCG@1 = 2/2 = 1
    #   c (gain 1): DCG@3 / IDCG@3 = 2.5 / 3.1309 = 0.7985
    #   d is relevant but not retrieved: adds (P - P_ret) * DCG / IDCG = 1 * 0.7985
    # ndcg_rel = (1 + 0.7985 + 0.7985) / P=3 = 0.8657
    expected = (1 + 2 * 2.5 / (2 + L3 + 0.5)) / 3
    assert value("ndcg_rel") == pytest.approx(expected, abs=1e-12)
    assert value("ndcg_rel") == pytest.approx(0.8657, abs=5e-5)


def test_rndcg():
    # ideal levels: gain 2 x1 then gain 1 x2 -> boundaries at ideal positions 1 and 3 (P = 3); n = 3
    #   b = 1: DCG@1 / IDCG@1 = 2/2 = 1;  b = 3: DCG@3 / IDCG@3 = 2.5/3.1309 = 0.7985
    # Rndcg = (1 + 0.7985) / 2 = 0.8992
    assert value("Rndcg") == pytest.approx((1 + 2.5 / (2 + L3 + 0.5)) / 2, abs=1e-12)
    # a ranking longer than P adds DCG@n / IDCG@P, but only from n = P + 2 on: trec_eval's loop has already
    # consumed position P + 1 when it gets there. n = 4 = P + 1: unchanged, 0.8992;
    # n = 5: (1 + 0.7985 + 2.5/3.1309) / 3 = 0.8657
    assert value("Rndcg", run={"q": ["a", "b", "c", "u"]}) == pytest.approx((1 + 2.5 / (2 + L3 + 0.5)) / 2,
                                                                             abs=1e-12)
    longer = value("Rndcg", run={"q": ["a", "b", "c", "u", "v"]})
    assert longer == pytest.approx((1 + 2 * 2.5 / (2 + L3 + 0.5)) / 3, abs=1e-12)


# ----------------------------------------------------------------------------------------- any grade scale
# 2^g - 1 is inexact from g = 54 on and overflows float64 from g = 1024 on. The values below are exact
# rational arithmetic rounded once; every one failed before (NaN "undefined" scored 0, OverflowError, inf).


def test_err_when_p_rounds_to_one():
    # scale 54: p_a = (2^53 - 1) / 2^54 = 1/2 - 2^-54, p_b = 1 - 2^-54 (rounds to 1 in float64)
    # ERR = p_a + (1 - p_a) * p_b / 2 = 1/2 - 2^-54 + (1/2 + 2^-54)(1 - 2^-54)/2 = 3/4 - 3 * 2^-56 -> 0.75
    assert value("ERR", {"q": {"a": 53, "b": 54}}, {"q": ["a", "b"]}) == 0.75
    # a 0..100 scale: p_c = 2^-50 - 2^-100 at rank 1, then p_a = 1 - 2^-100 at rank 2:
    # ERR = p_c + (1 - p_c) * p_a / 2 = 1/2 + 2^-51 - ... = 0.5000000000000004
    got = value("ERR", {"q": {"a": 100, "b": 100, "c": 50}}, {"q": ["c", "a", "b"]})
    assert got == pytest.approx(0.5 + 2.0 ** -51, rel=1e-15)


def test_err_keeps_the_tiny_chance_of_going_on():
    # scale 60, grade 60 at rank 1: p = 1 - 2^-60, so the user reaches rank 2 with probability exactly 2^-60
    # (1 - p by subtraction would be 0): the reach/rank column of rank 2 is 2^-60 / 2
    e = explain(Judgments.from_dict({"q": {"a": 60, "b": 60}}), Run.from_dict({"q": ["a", "b"]}), "q", "ERR")
    assert [s.gain for s in e.run] == [1.0, 1.0]  # p rounds to 1 ...
    assert e.run[1].discount == 2.0 ** -61          # ... but 1 - p does not
    assert e.run[1].contribution == 2.0 ** -61


def test_err_beyond_float64_grades():
    # scale 2000: p_b = (2^1999 - 1) / 2^2000 = 1/2 - 2^-2000 at rank 1, p_a = 1 - 2^-2000 at rank 2:
    # ERR = 1/2 + 1/2 * 1/2 = 0.75 (to 2^-2000)
    assert value("ERR", {"q": {"a": 2000, "b": 1999}}, {"q": ["b", "a"]}) == 0.75
    # the scale may also be given: max_grade=3000 makes both p tiny: p_b = 2^-1001, p_a = 2^-1000
    # ERR = 2^-1001 + (1 - 2^-1001) * 2^-1000 / 2 = 2^-1000
    got = value("ERR(max_grade=3000)", {"q": {"a": 2000, "b": 1999}}, {"q": ["b", "a"]})
    assert got == pytest.approx(2.0 ** -1000, rel=1e-15)


def test_ndcg_exponential_beyond_float64_grades():
    # gains 2^1024 - 1 and 2^1100 - 1 (both beyond float64); run [a, b], ideal [b, a]:
    # nDCG = (2^1024 + 2^1100 / log2(3)) / (2^1100 + 2^1024 / log2(3)) = (2^-76 + L3) / (1 + 2^-76 L3) = L3
    qrels = {"q": {"a": 1024, "b": 1100}}
    assert value("nDCG(gain=exponential)", qrels, {"q": ["a", "b"]}) == pytest.approx(L3, rel=1e-15)
    # ideal from the retrieved documents, at 2: run [a, c, b] (c: grade 5, negligible beside 2^1024):
    # DCG@2 = 2^1024; IDCG@2 = 2^1100 + 2^1024 / log2(3) -> 2^-76 / (1 + ...) = 2^-76
    qrels = {"q": {"a": 1024, "b": 1100, "c": 5}}
    got = value("nDCG(gain=exponential, ideal=retrieved)@2", qrels, {"q": ["a", "c", "b"]})
    assert got == pytest.approx(2.0 ** -76, rel=1e-12)
    # grades 1999 and 2000 ranked worst first: (2^1999 + 2^2000 L3) / (2^2000 + 2^1999 L3) = (0.5 + L3) / (1 + L3/2)
    qrels = {"q": {"a": 2000, "b": 1999}}
    expected = (0.5 + L3) / (1 + L3 / 2)
    assert value("nDCG(gain=exponential)", qrels, {"q": ["b", "a"]}) == pytest.approx(expected, rel=1e-15)
    # ndcg_rel: at b DCG@1 / IDCG@1 = 0.5; at a (0.5 + L3) / (1 + L3/2); mean over P = 2
    assert value("ndcg_rel(gain=exponential)", qrels, {"q": ["b", "a"]}) == pytest.approx(
        (0.5 + expected) / 2, rel=1e-15)
    # Rndcg: levels 2000 and 1999 end at ideal positions 1 and 2: the same two ratios
    assert value("Rndcg(gain=exponential)", qrels, {"q": ["b", "a"]}) == pytest.approx(
        (0.5 + expected) / 2, rel=1e-15)


def test_ndcg_exponential_below_the_shift_is_unchanged():
    # grade 959 is the last one computed without a shift: gains 2^959 - 1 and 2^958 - 1, exactly as written
    qrels = {"q": {"a": 959, "b": 958}}
    dcg = (2.0 ** 958 - 1) + (2.0 ** 959 - 1) * L3
    idcg = (2.0 ** 959 - 1) + (2.0 ** 958 - 1) * L3
    assert value("nDCG(gain=exponential)", qrels, {"q": ["b", "a"]}) == dcg / idcg


def test_dcg_exponential_beyond_float64_is_an_error():
    assert value("DCG(gain=exponential)", {"q": {"a": 1023}}, {"q": ["a"]}) == 2.0 ** 1023  # - 1 is lost
    with pytest.raises(MetricError) as err:
        value("DCG(gain=exponential)", {"q": {"a": 1024}}, {"q": ["a"]})
    assert str(err.value) == (
        "DCG(gain=exponential) of query 'q' exceeds the largest float64 number (about 1.8e308): exponential "
        "gains 2^grade - 1 exceed it from grade 1024 on (and their sums earlier); report nDCG(gain=exponential) "
        "instead, a ratio gainscope computes without overflow.")
    # mapped gains can get there too: 1.5e308 + 1.5e308 / log2(3) = 2.4e308
    with pytest.raises(MetricError, match=r"of query 'q' exceeds the largest float64 .* give the map smaller gains"):
        value("DCG(gain={1: 1.5e308})", {"q": {"a": 1, "b": 1}}, {"q": ["a", "b"]})


def test_g_refuses_gains_it_cannot_difference_to_the_unit():
    # ideal gains adding up to less than 2^52 are computed: 2^51 - 1 at rank 1 is the ideal run -> 1
    assert value("G(gain=exponential)", {"q": {"a": 51}}, {"q": ["a"]}) == 1.0
    with pytest.raises(MetricError) as err:
        value("G(gain=exponential)", {"q": {"a": 60, "b": 59}}, {"q": ["b", "a"]})
    assert str(err.value) == (
        "G(gain=exponential) of query 'q' cannot be computed: its ideal gains add up to 2^52 or more, where "
        "float64 no longer holds the cost-minus-gain differences that G takes the log of to the unit; use "
        "gain=linear or a {grade: gain} map with smaller gains.")


def test_explain_shows_huge_exponential_gains_divided_by_the_top():
    # grades 1999 and 2000: gains shown as (2^g - 1) / 2^2000 = 0.5 and 1 (to 2^-2000), the ratio unchanged
    e = explain(Judgments.from_dict({"q": {"a": 2000, "b": 1999}}), Run.from_dict({"q": ["b", "a"]}), "q",
                "nDCG(gain=exponential)")
    assert [s.gain for s in e.run] == [0.5, 1.0]
    assert e.value == pytest.approx((0.5 + L3) / (1 + L3 / 2), rel=1e-15)
    assert e.notes[-1] == ("gains 2^grade - 1 shown divided by 2^2000 (2 to the top grade) to keep them finite; "
                           "DCG / IDCG, a ratio, is unchanged")


def test_dcg_ignores_an_overflowing_tie_group_past_the_cutoff():
    # ties="average": b (grade 2000, gain beyond float64) and c tie at ranks 2-3, wholly past @1:
    # DCG@1 = gain(a) = 2^1 - 1 = 1 (inf * a span of 0 used to make it NaN, scored 0 as "undefined")
    qrels = {"q": {"a": 1, "b": 2000, "c": 0}}
    run = {"q": {"a": 3.0, "b": 1.0, "c": 1.0}}
    assert value("DCG(gain=exponential)@1", qrels, run, ties="average") == 1.0
    with pytest.raises(MetricError, match="of query 'q' exceeds the largest float64"):  # @2 reaches into it
        value("DCG(gain=exponential)@2", qrels, run, ties="average")
