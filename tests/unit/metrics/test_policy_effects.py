"""Each evaluation policy, shown on the smallest input where it changes a number, with the arithmetic.

ties (trec_eval bytewise doc id order, rank, average), missing_queries, depth, judged_only,
relevance_level (a number or "positive"), negative_grades, undefined, judged_grades, max_grade.
"""

from __future__ import annotations

import math

import pytest

from gainscope import Judgments, Run, evaluate
from gainscope.core.policies import Policies
from gainscope.errors import InputWarning, PolicyError, QueryCoverageWarning, UndefinedMetricWarning

L3 = 1 / math.log2(3)


def evaluate_dicts(qrels, run, metrics, **policies):
    return evaluate(Judgments.from_dict(qrels), Run.from_dict(run), metrics, **policies)


# ---------------------------------------------------------------------------------------------- ties
def test_trec_eval_ties_break_by_doc_id_descending_bytewise():
    # "10" and "9" tie. Numerically 10 > 9, but bytewise "9" (0x39) > "10" (0x31 ...): "9" comes first.
    run = {"q": {"10": 1.0, "9": 1.0}}
    with pytest.warns(InputWarning, match="1 group"):
        res = evaluate_dicts({"q": {"9": 1, "10": 0}}, run, ["P@1", "RR"])
    assert res["P@1"] == 1.0 and res["RR"] == 1.0
    with pytest.warns(InputWarning):
        res = evaluate_dicts({"q": {"9": 0, "10": 1}}, run, ["P@1", "RR"])
    assert res["P@1"] == 0.0 and res["RR"] == 0.5


@pytest.mark.parametrize(("first", "second"),
                         [("9", "10"), ("99", "100"), ("a", "Z"), ("é", "z"), ("b", "a")])
def test_trec_eval_tie_order_examples(first, second):
    # the relevant document is `first` when it sorts first (bytewise descending), whatever the input order
    for order in ((first, second), (second, first)):
        with pytest.warns(InputWarning):
            res = evaluate_dicts({"q": {first: 1, second: 0}}, {"q": {d: 0.5 for d in order}}, ["RR"])
        assert res["RR"] == 1.0


def test_trec_eval_tie_order_can_decide_ndcg():
    # trec_eval issue #22: the only relevant document ties with another one.
    # relevant "b" (bytewise > "a") goes first: nDCG = 1; relevant "a" goes second: nDCG = 1/log2(3) = 0.6309
    run = {"q": {"a": 1.0, "b": 1.0}}
    with pytest.warns(InputWarning):
        assert evaluate_dicts({"q": {"b": 1}}, run, ["nDCG"])["nDCG"] == 1.0
    with pytest.warns(InputWarning):
        assert evaluate_dicts({"q": {"a": 1}}, run, ["nDCG"])["nDCG"] == pytest.approx(L3)


def test_rank_ties_keep_the_order_given():
    # ties="rank": input order, no tie warning: "10" first -> P@1 = 0 when "9" is the relevant one
    res = evaluate_dicts({"q": {"9": 1, "10": 0}}, {"q": {"10": 1.0, "9": 1.0}}, ["P@1"], ties="rank")
    assert res["P@1"] == 0.0
    # even against the scores: [a (score 1), b (score 2)] stays in that order
    res = evaluate_dicts({"q": {"a": 0, "b": 1}}, {"q": {"a": 1.0, "b": 2.0}}, ["RR"], ties="rank")
    assert res["RR"] == 0.5
    res = evaluate_dicts({"q": {"a": 0, "b": 1}}, {"q": {"a": 1.0, "b": 2.0}}, ["RR"])
    assert res["RR"] == 1.0  # trec_eval orders by score: b first


def test_average_ties_ndcg_is_the_tie_averaged_value():
    # judged {a: 2, b: 0, c: 1}; scores a = b = 1.0 (tied), c = 0.5. The tie shares its mean gain (2+0)/2 = 1
    # at ranks 1 and 2 (McSherry & Najork 2008; scikit-learn's ndcg_score([[2, 0, 1]], [[1, 1, .5]])):
    # DCG = 1/log2(2) + 1/log2(3) + 1/log2(4) = 2.1309; IDCG = 2 + 1/log2(3) = 2.6309; nDCG = 0.8100
    qrels = {"q": {"a": 2, "b": 0, "c": 1}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 0.5}}
    res = evaluate_dicts(qrels, run, ["nDCG", "DCG", "DCG@1", "P@1"], ties="average")
    assert res["DCG"] == pytest.approx(1 + L3 + 0.5, abs=1e-12)
    assert res["nDCG"] == pytest.approx((1 + L3 + 0.5) / (2 + L3), abs=1e-12)
    assert res["nDCG"] == pytest.approx(0.8100, abs=5e-5)
    assert res["DCG@1"] == pytest.approx(1.0)  # mean gain of the tie
    assert res["P@1"] == pytest.approx(0.5)    # expected precision: a or b first with equal chance
    # the value is the mean over both orders of the tie: (nDCG[a, b, c] + nDCG[b, a, c]) / 2
    a_first = (2 + 0.5) / (2 + L3)
    b_first = (2 * L3 + 0.5) / (2 + L3)
    assert res["nDCG"] == pytest.approx((a_first + b_first) / 2, abs=1e-12)


def test_average_ties_rejected_for_rr():
    with pytest.raises(PolicyError, match="RR does not support ties='average'"):
        evaluate_dicts({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["RR"], ties="average")


# -------------------------------------------------------------------------------------------- missing_queries
def test_missing_queries_zero_or_skip():
    # q2 is judged but the run has no ranking for it
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": ["a"]}
    with pytest.warns(QueryCoverageWarning, match="scored 0"):
        res = evaluate_dicts(qrels, run, ["P@1", "NumQ"])
    assert res.per_query("P@1") == {"q1": 1.0, "q2": 0.0}
    assert res["P@1"] == 0.5 and res["NumQ"] == 2  # (1 + 0) / 2, as trec_eval -c
    with pytest.warns(QueryCoverageWarning, match="left out"):
        res = evaluate_dicts(qrels, run, ["P@1", "NumQ"], missing_queries="skip")
    assert res.per_query("P@1") == {"q1": 1.0}
    assert res["P@1"] == 1.0 and res["NumQ"] == 1


def test_missing_queries_empty_scores_each_metric_on_an_empty_ranking():
    # q2 is judged (b rated 0: nothing relevant) but not ranked; q3 judged (c rated 2), not ranked.
    # "zero" gives 0 to every metric there; "empty" gives each metric's value for no document retrieved:
    # P@1 = 0 / 1 = 0; AP = 0 / R: q3 0 / 1 = 0, q2 0 / 0 undefined; RR 0; avgRating100 nothing rated: undefined
    qrels = {"q1": {"a": 1}, "q2": {"b": 0}, "q3": {"c": 2}}
    run = {"q1": ["a"]}
    with pytest.warns(QueryCoverageWarning, match=r"2 judged queries have no ranking and are scored as empty "
                                                  r"rankings \(missing_queries='empty'\): q2, q3"):
        res = evaluate_dicts(qrels, run, ["P@1", "AP", "RR", "avgRating100@5", "NumQ"], missing_queries="empty",
                             undefined="skip")
    assert res.per_query("P@1") == {"q1": 1.0, "q2": 0.0, "q3": 0.0}
    ap = res.per_query("AP")
    assert ap["q1"] == 1.0 and math.isnan(ap["q2"]) and ap["q3"] == 0.0
    assert res.per_query("RR") == {"q1": 1.0, "q2": 0.0, "q3": 0.0}
    assert [math.isnan(v) for v in res.per_query("avgRating100@5").values()] == [False, True, True]
    assert res["NumQ"] == 3
    # under "zero" (trec_eval -c) the same queries score 0, AP included: no undefined value
    with pytest.warns(QueryCoverageWarning, match="scored 0"):
        zero = evaluate_dicts(qrels, run, ["AP"], undefined="skip")
    assert zero.per_query("AP") == {"q1": 1.0, "q2": 0.0, "q3": 0.0}
    with pytest.warns(QueryCoverageWarning, match=r"1 judged query has no ranking and is scored as an empty "
                                                  r"ranking \(missing_queries='empty'\): q2$"):
        evaluate_dicts({"q1": {"a": 1}, "q2": {"b": 0}}, run, ["P@1"], missing_queries="empty")
    assert Policies(missing_queries="empty").describe()[1] == (
        "missing queries", "empty: judged queries without a ranking are empty rankings, scored by each metric "
        "(Quepid)")


def test_run_only_queries_are_ignored():
    with pytest.warns(QueryCoverageWarning, match="no judgments and is ignored: zz"):
        res = evaluate_dicts({"q1": {"a": 1}}, {"q1": ["a"], "zz": ["a"]}, ["P@1"])
    assert res.query_ids == ("q1",)


# ---------------------------------------------------------------------------------------------- depth
def test_depth_cuts_each_ranking_after_ordering():
    # scores b 3 > c 2 > a 1; depth=1 keeps b (the highest score), not a (the first given)
    qrels = {"q": {"a": 1, "b": 0, "c": 1}}
    run = {"q": {"a": 1.0, "b": 3.0, "c": 2.0}}
    assert evaluate_dicts(qrels, run, ["NumRet", "P@3"])["P@3"] == pytest.approx(2 / 3)  # [b, c, a]
    res = evaluate_dicts(qrels, run, ["NumRet", "P@3", "RR"], depth=1)
    assert res["NumRet"] == 1
    assert res["P@3"] == 0.0   # only b left: 0/3
    assert res["RR"] == 0.0
    res = evaluate_dicts(qrels, run, ["P@3", "AP"], depth=2)
    assert res["P@3"] == pytest.approx(1 / 3)  # [b, c]: 1/3
    assert res["AP"] == pytest.approx((1 / 2) / 2)  # c at rank 2 -> 1/2; R = 2


# ---------------------------------------------------------------------------------------------- judged_only
def test_judged_only_drops_unjudged_documents():
    # run [u, a, v, b] with a: 1, b: 0: as given, P@1 = 0, RR = 1/2; judged only: [a, b] -> P@1 = 1, RR = 1
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": ["u", "a", "v", "b"]}
    res = evaluate_dicts(qrels, run, ["P@1", "RR", "Judged@2", "NumRet"])
    assert (res["P@1"], res["RR"], res["Judged@2"], res["NumRet"]) == (0.0, 0.5, 0.5, 4)
    res = evaluate_dicts(qrels, run, ["P@1", "RR", "Judged@2", "NumRet"], judged_only=True)
    assert (res["P@1"], res["RR"], res["Judged@2"], res["NumRet"]) == (1.0, 1.0, 1.0, 2)


def test_depth_applies_before_judged_only():
    # trec_eval applies -M before -J: depth 2 keeps [u, a], judged_only then keeps [a]
    res = evaluate_dicts({"q": {"a": 1, "b": 0}}, {"q": ["u", "a", "v", "b"]}, ["NumRet"], depth=2,
                         judged_only=True)
    assert res["NumRet"] == 1


# -------------------------------------------------------------------------------------------- relevance_level
def test_relevance_level_for_binary_metrics():
    # a: 1, b: 2, run [a, b]
    qrels = {"q": {"a": 1, "b": 2}}
    run = {"q": ["a", "b"]}
    metrics = ["P@1", "RR", "AP", "NumRel", "nDCG", "P(rel=1)@1"]
    one = evaluate_dicts(qrels, run, metrics)
    two = evaluate_dicts(qrels, run, metrics, relevance_level=2)
    # level 1: both relevant. level 2: only b (rank 2): P@1 = 0, RR = 1/2, AP = (1/2)/1, NumRel = 1
    assert [one[m] for m in metrics[:4]] == [1.0, 1.0, 1.0, 2]
    assert [two[m] for m in metrics[:4]] == [0.0, 0.5, 0.5, 1]
    # nDCG ignores the level (trec_eval): DCG = 1 + 2/log2(3) = 2.2619, IDCG = 2 + 1/log2(3) = 2.6309
    # -> 0.8597
    assert one["nDCG"] == two["nDCG"] == pytest.approx((1 + 2 * L3) / (2 + L3), abs=1e-12)
    # a metric's own rel wins over the evaluation's level
    assert two["P(rel=1)@1"] == 1.0


def test_relevance_level_zero_makes_grade_zero_relevant():
    res = evaluate_dicts({"q": {"a": 0, "b": 1}}, {"q": ["a", "b"]}, ["P@1", "NumRel"], relevance_level=0)
    assert res["P@1"] == 1.0 and res["NumRel"] == 2


# -------------------------------------------------------------------------------------------- negative_grades
def test_negative_grades_unjudged_or_nonrelevant():
    # n: -1, a: 1, b: 0; run [n, a, b]
    qrels = {"q": {"a": 1, "n": -1, "b": 0}}
    run = {"q": ["n", "a", "b"]}
    metrics = ["Bpref", "Unj@3", "NumNonrelJudgedRet", "P@1", "nDCG"]
    unjudged = evaluate_dicts(qrels, run, metrics)
    nonrel = evaluate_dicts(qrels, run, metrics, negative_grades="nonrelevant")
    # "unjudged" (trec_eval): bpref skips n -> a has no judged non-relevant above: 1; Unj@3 = 1/3;
    # 1 judged non-relevant retrieved (b)
    assert [unjudged[m] for m in metrics[:3]] == [1.0, pytest.approx(1 / 3), 1]
    # "nonrelevant" (ranx): n is judged grade 0 -> N = 2, a has n above: 1 - min(1, 1)/min(2, 1) = 0;
    # Unj@3 = 0; 2 judged non-relevant retrieved (n, b)
    assert [nonrel[m] for m in metrics[:3]] == [0.0, 0.0, 2]
    # neither is relevant nor gains anything: P@1 = 0, nDCG = (1/log2(3)) / 1 either way
    assert unjudged["P@1"] == nonrel["P@1"] == 0.0
    assert unjudged["nDCG"] == nonrel["nDCG"] == pytest.approx(L3)


# ---------------------------------------------------------------------------------------------- undefined
def test_undefined_zero_warns_and_skip_leaves_out():
    # q2 has no relevant document: AP and nDCG are 0/0 there
    qrels = {"q1": {"a": 1}, "q2": {"b": 0}}
    run = {"q1": ["a"], "q2": ["b"]}
    with pytest.warns(UndefinedMetricWarning, match=r"AP, nDCG are undefined for 1 query .*: q2"):
        res = evaluate_dicts(qrels, run, ["AP", "nDCG", "P@1"])
    assert res.per_query("AP") == {"q1": 1.0, "q2": 0.0}
    assert res["AP"] == 0.5 and res["nDCG"] == 0.5 and res["P@1"] == 0.5
    assert res.undefined.tolist() == [[False, False, False], [True, True, False]]
    res = evaluate_dicts(qrels, run, ["AP", "nDCG", "P@1"], undefined="skip")  # no warning
    assert math.isnan(res.per_query("AP")["q2"])
    assert res["AP"] == 1.0 and res["nDCG"] == 1.0  # mean over q1 only
    assert res["P@1"] == 0.5                        # P@1 is defined for both


# ---------------------------------------------------------------------------------- relevance_level="positive"
def test_positive_relevance_level_is_grade_above_zero_on_any_scale():
    # grades 0.25 (a), 0 (b), 3 (c): "positive" makes a and c relevant, b not; no threshold to choose.
    # P@3 = 2/3; RR = 1 (a at rank 1); AP = (1/1 + 2/3) / 2 = 0.8333 (R = 2: a and c)
    qrels = {"q": {"a": 0.25, "b": 0, "c": 3}}
    run = {"q": ["a", "b", "c"]}
    res = evaluate_dicts(qrels, run, ["P@3", "RR", "AP"], relevance_level="positive")
    assert res["P@3"] == pytest.approx(2 / 3) and res["RR"] == 1.0
    assert res["AP"] == pytest.approx((1 + 2 / 3) / 2)
    # with the default level 1, a (0.25) is not relevant: P@3 = 1/3, RR = 1/3, AP = (1/3) / 1
    res = evaluate_dicts(qrels, run, ["P@3", "RR", "AP"])
    assert [res["P@3"], res["RR"], res["AP"]] == [pytest.approx(1 / 3)] * 3
    # the same through a metric's own rel, which prints and parses back
    res = evaluate_dicts(qrels, run, ["P(rel=positive)@3"])
    assert res.metric_names == ["P(rel=positive)@3"] and res["P(rel=positive)@3"] == pytest.approx(2 / 3)
    # the smallest positive double is relevant; 0, -0.0 and negative grades are not
    tiny = evaluate_dicts({"q": {"a": 5e-324, "b": -0.0, "c": -1}}, {"q": ["a", "b", "c"]}, ["P@3"],
                          relevance_level="positive")
    assert tiny["P@3"] == pytest.approx(1 / 3)


def test_positive_relevance_level_is_echoed_without_a_number():
    from gainscope.core.policies import Policies

    assert ("relevance level", "grade > 0 is relevant for binary metrics (-l positive)") \
        in Policies(relevance_level="positive").describe()
    assert ("relevance level", "grade >= 2 is relevant for binary metrics (-l)") \
        in Policies(relevance_level=2).describe()
    with pytest.raises(PolicyError) as err:
        Policies(relevance_level="Positive")
    assert str(err.value) == ("the 'relevance_level' policy must be a number >= 0 or 'positive' (grade > 0); "
                              "got 'Positive'.")


# ---------------------------------------------------------------------------------------------- judged_grades
def test_truncated_judged_grades_change_the_ideal_and_r_but_not_the_ranked_grades():
    # judged {a: 2.5, b: 0.5, c: 1}; run [b, a]. Ranked grades keep their decimals: 0.5, 2.5.
    # as_is: DCG = 0.5 + 2.5/log2(3) = 2.0773; IDCG over {2.5, 1, 0.5} = 2.5 + 1/log2(3) + 0.5/2 = 3.3809
    # truncated (Quepid's bestDocs, parseInt): ideal over {2, 1, 0} = 2 + 1/log2(3) = 2.6309
    qrels = {"q": {"a": 2.5, "b": 0.5, "c": 1}}
    run = {"q": ["b", "a"]}
    dcg = 0.5 + 2.5 * L3
    as_is = evaluate_dicts(qrels, run, ["nDCG", "AP(rel=positive)"])
    cut = evaluate_dicts(qrels, run, ["nDCG", "AP(rel=positive)"], judged_grades="truncated")
    assert as_is["nDCG"] == pytest.approx(dcg / (2.5 + L3 + 0.25))
    assert cut["nDCG"] == pytest.approx(dcg / (2 + L3))
    # AP with grade > 0 relevant: hits at ranks 1 and 2 (0.5 and 2.5 are both > 0): 1 + 1 = 2.
    # as_is R = 3 (2.5, 0.5, 1): 2/3; truncated R = 2 (2, 1; 0.5 became 0): 2/2 = 1
    assert as_is["AP(rel=positive)"] == pytest.approx(2 / 3)
    assert cut["AP(rel=positive)"] == pytest.approx(1.0)


def test_truncated_judged_grades_can_lift_a_normalised_value_above_one_as_in_quepid():
    # judged {a: 2.5}; run [a]: DCG = 2.5, truncated ideal = 2 -> nDCG = 1.25 (Quepid gives the same: its
    # docRating keeps 2.5 while bestDocs holds parseInt(2.5) = 2)
    res = evaluate_dicts({"q": {"a": 2.5}}, {"q": ["a"]}, ["nDCG"], judged_grades="truncated")
    assert res["nDCG"] == pytest.approx(1.25)


# ---------------------------------------------------------------------------------------------- max_grade
def test_max_grade_policy_sets_errs_scale_unless_the_metric_sets_its_own():
    # judged {a: 1}; run [a]. Scale 1 (largest judged): p = (2^1 - 1)/2^1 = 0.5. Scale 3: p = 1/8.
    qrels, run = {"q": {"a": 1}}, {"q": ["a"]}
    assert evaluate_dicts(qrels, run, ["ERR"])["ERR"] == 0.5
    res = evaluate_dicts(qrels, run, ["ERR", "ERR(max_grade=2)"], max_grade=3)
    assert res["ERR"] == 0.125 and res["ERR(max_grade=2)"] == 0.25   # its own scale wins: 1/4
    assert not any("largest judged grade" in n for n in res.notes)
    assert ("max grade", "3: the top of the grading scale (ERR, avgRating100)") in res.policies.describe()


def test_max_grade_policy_below_a_grade_is_an_error_naming_the_policy():
    from gainscope.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError) as err:
        evaluate_dicts({"q": {"a": 3}}, {"q": ["a"]}, ["ERR@10"], max_grade=2)
    assert str(err.value) == ("ERR@10 has the evaluation's max_grade=2 but a document has grade 3; raise the "
                              "max_grade policy (--max-grade on the command line) to the top of your grading scale")
    with pytest.raises(PolicyError, match=r"^the 'max_grade' policy must be a number > 0 or None; got 0\.$"):
        evaluate_dicts({"q": {"a": 3}}, {"q": ["a"]}, ["ERR@10"], max_grade=0)
