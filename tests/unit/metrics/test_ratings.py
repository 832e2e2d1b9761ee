"""Hand arithmetic for Quepid's legacy rating metrics: avgRating100@k, editDistanceFromBest@k, QuepidV1@k and
blogNDCG@k.

Running example (the 2018 blog, scale 1-10): the first ten results rated [10, 8, 9, -, 5, 1, 4, -, -, -]
(u1..u4 unrated), no other rated document, so best = [10, 9, 8, 5, 4, 1].
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from gainscope import Judgments, Run, evaluate
from gainscope.errors import InvalidParameterError, UndefinedMetricWarning
from gainscope.metrics import parse_metric
from gainscope.metrics.edit_distance import NO_RATING, edit_distances, levenshtein, quepid_legacy_distance

BLOG_QRELS = {"q": {"d1": 10, "d2": 8, "d3": 9, "d5": 5, "d6": 1, "d7": 4}}
BLOG_RUN = {"q": ["d1", "d2", "d3", "u4", "d5", "d6", "d7", "u8", "u9", "u10"]}


def value(metric: str, qrels=BLOG_QRELS, run=BLOG_RUN, query: str = "q", **policies) -> float:
    res = evaluate(Judgments.from_dict(qrels), Run.from_dict(run), [metric], ties="rank", **policies)
    return res.per_query(metric)[query]


# ---------------------------------------------------------------------------------------------- avgRating
def test_avg_rating_is_the_mean_of_the_rated_and_null_without_one():
    # (10 + 8 + 9 + 5 + 1 + 4) / 6 rated = 37 / 6 = 6.1667 (the four unrated are left out, not 0)
    assert value("avgRating@10") == pytest.approx(37 / 6)
    assert value("avgRating@3") == 9.0  # (10 + 8 + 9) / 3
    # truncated first: 2.7 and 1.2 -> 2 and 1; a mean of 0 is a number here (avgRating100 makes it null)
    res = evaluate(Judgments.from_dict({"q": {"a": 2.7, "b": 1.2}, "z": {"c": 0}, "n": {"d": 1}}),
                   Run.from_dict({"q": ["a", "b"], "z": ["c"], "n": ["u"]}), ["avgRating@5", "avgRating100@5"],
                   undefined="skip", max_grade=3)
    assert res.per_query("avgRating@5")["q"] == 1.5 and res.per_query("avgRating@5")["z"] == 0.0
    assert math.isnan(res.per_query("avgRating@5")["n"])  # nothing rated within k: null
    assert math.isnan(res.per_query("avgRating100@5")["z"])  # 0 -> Quepid's !avg -> null
    assert type(res.metrics[0]).undefined_is_null


# ---------------------------------------------------------------------------------------------- avgRating100
def test_avg_rating100_on_the_blogs_example():
    # 10 + 8 + 9 + 5 + 1 + 4 = 37 over 6 rated (the unrated are left out, not 0): 37/6 = 6.1667;
    # * (100 / 10) = 61.67 -> 61
    assert value("avgRating100(max_grade=10)@10") == 61.0
    # the evaluation's max_grade does the same; without either, the largest judged grade (10) is the scale
    assert value("avgRating100@10", max_grade=10) == 61.0
    assert value("avgRating100@10") == 61.0
    # @3: (10 + 8 + 9) / 3 = 9 -> 90
    assert value("avgRating100(max_grade=10)@3") == 90.0


def test_avg_rating100_follows_quepids_order_of_operations():
    # mean 4.6 (ratings 5, 5, 5, 5, 3): 4.6 * (100 / 10) = 46.0 in floating point, but 4.6 * 100 / 10 is
    # 45.99999999999999 and would round down to 45
    qrels = {"q": {"a": 5, "b": 5, "c": 5, "d": 5, "e": 3}}
    assert value("avgRating100(max_grade=10)@5", qrels, {"q": list("abcde")}) == 46.0
    assert math.floor(4.6 * 100 / 10) == 45 and math.floor(4.6 * (100 / 10)) == 46


def test_avg_rating100_truncates_ratings_and_is_null_without_a_rated_document_or_with_mean_zero():
    # ratings 2.7 and 1.2 -> parseInt: 2 and 1, mean 1.5 -> 1.5 * (100 / 3) = 50
    assert value("avgRating100(max_grade=3)@2", {"q": {"a": 2.7, "b": 1.2}}, {"q": ["a", "b"]}) == 50.0
    res = evaluate(Judgments.from_dict({"q": {"a": 0, "x": 3}, "q2": {"b": 2}}),
                   Run.from_dict({"q": ["u", "a"], "q2": ["v"]}), ["avgRating100(max_grade=3)@10"],
                   undefined="skip")
    values = res.per_query("avgRating100(max_grade=3)@10")
    assert math.isnan(values["q"])    # a mean of 0 (only 'a', rated 0): Quepid's !avg -> null
    assert math.isnan(values["q2"])   # nothing rated within k -> null
    assert type(res.metrics[0]).undefined_is_null


def test_avg_rating100_without_a_ranking_is_null_not_zero():
    # q2 is judged but has no ranking: missing_queries="zero" would give 0, but avgRating100's value without
    # results is null (Quepid's zsr); under undefined="zero" it then counts 0 with the warning
    qrels = {**BLOG_QRELS, "q2": {"x": 7}}
    with pytest.warns(Warning):
        res = evaluate(Judgments.from_dict(qrels), Run.from_dict(BLOG_RUN), ["avgRating100@10"], undefined="skip")
    assert math.isnan(res.per_query("avgRating100@10")["q2"]) and res.undefined[1, 0]


def test_avg_rating100_grade_above_the_scale_is_an_error():
    with pytest.raises(InvalidParameterError, match=r"^avgRating100\(max_grade=3\)@10 has max_grade=3 but a "
                                                    r"document has grade 10; raise max_grade"):
        value("avgRating100(max_grade=3)@10")


# ---------------------------------------------------------------------------------------------- edit distance
def test_edit_distance_from_best_on_the_blogs_example():
    # results [10, 8, 9, -, 5, 1, 4, -, -, -]; best [10, 9, 8, 5, 4, 1] padded with '-' to 10:
    # [10, 9, 8, 5, 4, 1, -, -, -, -]. Levenshtein: 8/9 and 9/8 substituted (2), the '-' at 4 deleted and one
    # inserted after 1 ... 4 in all; Quepid's distance is 4 as well here
    assert value("editDistanceFromBest@10") == 4.0
    assert value("editDistanceFromBest(distance=levenshtein)@10") == 4.0


@pytest.mark.parametrize(("results", "best", "quepid", "lev"), [
    # the reference notes' examples: Quepid's border of zeros lets a prefix go for free
    ([3, 2, 1, 0], [3, 2, 1, 0], 0, 0),
    ([0, 1, 2, 3], [3, 2, 1, 0], 3, 4),   # reversed: Levenshtein 4, Quepid 3
    ([4, 3, 2, 1, 5], [5, 4, 3, 2, 1], 1, 2),   # the best moved last: Levenshtein 2 (delete, insert), Quepid 1
])
def test_edit_distance_variants(results, best, quepid, lev):
    qrels = {"q": {f"d{i}": r for i, r in enumerate(results)}}
    run = {"q": [f"d{i}" for i in range(len(results))]}
    assert sorted(best, reverse=True) == best  # the judged pool sorted descending is the best list
    assert value("editDistanceFromBest@10", qrels, run) == quepid
    assert value("editDistanceFromBest(distance=levenshtein)@10", qrels, run) == lev


def test_edit_distance_best_list_is_padded_but_never_cut():
    # 2 results rated [1, -]; 4 rated documents {a: 1, x: 3, y: 2, z: 2}: best@10 = [3, 2, 2, 1], kept whole
    # (longer than the results). Levenshtein: [1, -] -> [3, 2, 2, 1] takes 4 edits (insert 3, 2, 2 before the
    # 1 and delete the '-'). Quepid's border of zeros drops the prefix 3, 2, 2 for free: 1 matches 1, and the
    # trailing '-' costs one: 1
    qrels = {"q": {"a": 1, "x": 3, "y": 2, "z": 2}}
    run = {"q": ["a", "u"]}
    assert value("editDistanceFromBest(distance=levenshtein)@10", qrels, run) == \
        levenshtein([1, None], [3, 2, 2, 1]) == 4
    assert value("editDistanceFromBest@10", qrels, run) == quepid_legacy_distance([1, None], [3, 2, 2, 1]) == 1
    # @1: results [1], best [3]: one substitution either way
    assert value("editDistanceFromBest@1", qrels, run) == 1.0


def test_edit_distance_without_a_ranking_is_the_distance_of_an_empty_list():
    # q2 (judged {x: 2, y: 1}) has no ranking: Quepid's distance of [] is 0; Levenshtein is 2 (insert both);
    # the 0 of missing_queries="zero" would call it perfect
    qrels = {**BLOG_QRELS, "q2": {"x": 2, "y": 1}}
    with pytest.warns(Warning):
        res = evaluate(Judgments.from_dict(qrels), Run.from_dict(BLOG_RUN),
                       ["editDistanceFromBest@10", "editDistanceFromBest(distance=levenshtein)@10"])
    assert res.per_query("editDistanceFromBest@10")["q2"] == 0.0
    assert res.per_query("editDistanceFromBest(distance=levenshtein)@10")["q2"] == 2.0


def test_edit_distance_kernel_equals_the_plain_functions():
    rng = np.random.default_rng(7)
    lists_a = [[None if x < 0 else int(x) for x in rng.integers(-1, 4, rng.integers(0, 7))] for _ in range(300)]
    lists_b = [[None if x < 0 else int(x) for x in rng.integers(-1, 4, rng.integers(0, 7))] for _ in range(300)]

    def arrays(lists):
        out = np.full((len(lists), 7), NO_RATING)
        for i, xs in enumerate(lists):
            out[i, :len(xs)] = [NO_RATING if x is None else x for x in xs]
        return out, np.array([len(xs) for xs in lists])

    a, la = arrays(lists_a)
    b, lb = arrays(lists_b)
    assert edit_distances(a, la, b, lb, legacy=False).tolist() == [levenshtein(x, y) for x, y in
                                                                    zip(lists_a, lists_b, strict=True)]
    assert edit_distances(a, la, b, lb, legacy=True).tolist() == [quepid_legacy_distance(x, y) for x, y in
                                                                   zip(lists_a, lists_b, strict=True)]


# ---------------------------------------------------------------------------------------------- QuepidV1
def test_quepid_v1_on_the_blogs_example():
    # avgRating100 61 minus editDistanceFromBest 4 = 57
    assert value("QuepidV1(max_grade=10)@10") == 57.0
    assert value("QuepidV1(max_grade=10, distance=levenshtein)@10") == 57.0


def test_quepid_v1_can_be_negative_and_is_null_with_avg_rating100():
    # results [1, 1, 1] on 1-10 with best [10, 10, 10, 1, 1, 1]: avgRating100 = floor(1 * 10) = 10;
    # Quepid's distance of [1, 1, 1] from [10, 10, 10] = 3 -> 7. Levenshtein: 3 as well.
    qrels = {"q": {"a": 1, "b": 1, "c": 1, "x": 10, "y": 10, "z": 10}}
    assert value("QuepidV1(max_grade=10)@3", qrels, {"q": ["a", "b", "c"]}) == 7.0
    # on a 0-100 scale with ratings 1: floor(1 * (100 / 100)) = 1, minus 3 = -2 (Quepid clamps the query
    # score to 0 in the case score; the metric keeps -2)
    assert value("QuepidV1(max_grade=100)@3", qrels, {"q": ["a", "b", "c"]}) == -2.0
    with pytest.warns(UndefinedMetricWarning, match=r"QuepidV1@3 is undefined"):
        assert value("QuepidV1@3", qrels, {"q": ["u", "v"]}) == 0.0   # nothing rated: null -> 0 here


# ---------------------------------------------------------------------------------------------- blogNDCG
WIKI_QRELS = {"q": {"d0": 3, "d1": 2, "d2": 3, "d4": 1, "d5": 2, "x1": 3, "x2": 2}}
WIKI_RUN = {"q": ["d0", "d1", "d2", "d3", "d4", "d5"]}


def test_blog_ndcg_on_wikipedias_example():
    # returned [3, 2, 3, -, 1, 2]; best [3, 3, 3, 2, 2, 2, 1]
    # DCG = 3 + 2/log2(3) + 3/2 + 0 + 1/log2(6) + 2/log2(7) = 6.86113
    # IDCG@10 = 3 + 3/log2(3) + 3/2 + 2/log2(5) + 2/log2(6) + 2/log2(7) + 1/log2(8) = 9.07360 -> 75.6164
    actual = 3 + 2 / math.log2(3) + 3 / 2 + 1 / math.log2(6) + 2 / math.log2(7)
    ideal = 3 + 3 / math.log2(3) + 3 / 2 + 2 / math.log2(5) + 2 / math.log2(6) + 2 / math.log2(7) + 1 / 3
    assert value("blogNDCG@10", WIKI_QRELS, WIKI_RUN) == pytest.approx(100 * actual / ideal)
    assert value("blogNDCG@10", WIKI_QRELS, WIKI_RUN) == pytest.approx(75.6164, abs=1e-4)
    # k = 6: the ideal is cut at 6 ([3, 3, 3, 2, 2, 2]: 8.74026) -> 78.50 (Wikipedia's nDCG6 0.785)
    assert value("blogNDCG@6", WIKI_QRELS, WIKI_RUN) == pytest.approx(100 * actual / (ideal - 1 / 3))
    assert value("blogNDCG@6", WIKI_QRELS, WIKI_RUN) == pytest.approx(100 * value("nDCG@6", WIKI_QRELS, WIKI_RUN))


def test_blog_ndcg_is_undefined_without_a_positive_rating():
    with pytest.warns(UndefinedMetricWarning, match=r"blogNDCG@10 is undefined"):
        assert value("blogNDCG@10", {"q": {"a": 0}}, {"q": ["a"]}) == 0.0


def test_names_print_and_parse_back():
    for text in ("avgRating100@10", "avgRating100(max_grade=10)@5", "editDistanceFromBest@10",
                 "editDistanceFromBest(distance=levenshtein)@3", "QuepidV1(max_grade=10)@10", "blogNDCG@10"):
        assert str(parse_metric(text)) == text
    with pytest.raises(InvalidParameterError, match=r"^avgRating100 needs a 'cutoff': write for example "
                                                    r"avgRating100@10\.$"):
        parse_metric("avgRating100")
