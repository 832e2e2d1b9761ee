"""Quepid's built-in scorers, gainscope's metrics under the quepid profile, on hand-computed cases (the
arithmetic is in the comments): the blog's examples, the edit distances, the names, the rating scales and the
case score's rules."""

from __future__ import annotations

import math

import pytest

from gainscope.cases import (
    Case,
    CaseQuery,
    RatingScale,
    builtin_scorer,
    levenshtein,
    python_scorer,
    quepid_legacy_distance,
    score_case,
)
from gainscope.cases.scorers import BUILTINS, BuiltinScorer, default_score
from gainscope.cases.view import QueryView
from gainscope.errors import InputError, InvalidParameterError, MetricError, UnknownMetricError
from gainscope.metrics.resolve import resolve_metrics
from gainscope.results import Results

GRADED = RatingScale.parse("graded")
ONE_TO_TEN = RatingScale.parse("1-10")


def view(ratings: list[float | None], extra: dict[str, float] | None = None,
         scale: RatingScale = GRADED, **kw: object) -> QueryView:
    """A query whose i-th result is 'd{i}' rated ratings[i] (None = unrated), plus rated documents that were
    not returned."""
    results = tuple(f"d{i}" for i in range(len(ratings)))
    rated = {f"d{i}": r for i, r in enumerate(ratings) if r is not None}
    rated.update(extra or {})
    return QueryView.of(CaseQuery("q", rated, results, **kw), scale)  # type: ignore[arg-type]


def score(name: str, q: QueryView) -> float | None:
    """The built-in scorer ``name``'s value on one query (None: no number)."""
    return builtin_scorer(name).score(q).value


# ------------------------------------------------------------------------------------ the blog's examples
# 1-10 scale; 0 in the blog's list means "position not rated"
BLOG = view([10, 8, 9, None, 5, 1, 4, None, None, None], scale=ONE_TO_TEN)


def test_blog_avg_rating100_edit_distance_and_default() -> None:
    # sum of ratings 10 + 8 + 9 + 5 + 1 + 4 = 37 over 6 rated; 37 / 6 * 100 / 10 = 61.67 -> 61 (rounded down)
    assert BLOG.avg_rating(10) == pytest.approx(37 / 6)
    assert BLOG.avg_rating100(10) == 61 and score("avgRating100@10", BLOG) == 61
    # best = [10, 9, 8, 5, 4, 1] padded with 4 'no rating' to 10; distance from
    # [10, 8, 9, -, 5, 1, 4, -, -, -]: 2 substitutions (8, 9) + delete '-' + swap (1, 4 vs 4, 1: 2) ... = 4
    assert score("editDistanceFromBest(distance=levenshtein)@10", BLOG) == 4
    assert score("editDistanceFromBest@10", BLOG) == 4 and BLOG.edit_distance_from_best(10) == 4
    assert score("default(distance=levenshtein)@10", BLOG) == 57  # 61 - 4
    assert score("default@10", BLOG) == 57 and default_score(BLOG, 10, "quepid-legacy") == 57


# Wikipedia's DCG example: returned ratings [3, 2, 3, 0, 1, 2] (the 0 is unrated), and two more documents rated
# 3 and 2 that were not returned, so the best ratings are [3, 3, 3, 2, 2, 2, 1]
WIKI = view([3, 2, 3, None, 1, 2], {"x1": 3, "x2": 2}, scale=ONE_TO_TEN)


def test_wikipedia_example_with_the_blogs_ndcg() -> None:
    assert WIKI.top_ratings(10) == [3, 3, 3, 2, 2, 2, 1]
    # DCG = 3/1 + 2/log2(3) + 3/log2(4) + 0 + 1/log2(6) + 2/log2(7) = 3 + 1.26186 + 1.5 + 0.38685 + 0.71241 = 6.86113
    # IDCG = 3 + 3/log2(3) + 3/2 + 2/log2(5) + 2/log2(6) + 2/log2(7) + 1/log2(8) = 9.07360 (padded with 0 to 10)
    actual = 3 + 2 / math.log2(3) + 3 / 2 + 1 / math.log2(6) + 2 / math.log2(7)
    ideal = 3 + 3 / math.log2(3) + 3 / 2 + 2 / math.log2(5) + 2 / math.log2(6) + 2 / math.log2(7) + 1 / 3
    assert actual == pytest.approx(6.861127, abs=1e-6) and ideal == pytest.approx(9.073596, abs=1e-6)
    assert score("blogNDCG@10", WIKI) == pytest.approx(100 * actual / ideal)  # 75.6164
    assert score("blogNDCG@10", WIKI) == pytest.approx(75.6164, abs=1e-4)
    # with k = 6 both lists are cut at 6: ideal [3, 3, 3, 2, 2, 2] = 8.74026 -> 78.5 (Wikipedia's nDCG6 0.785)
    assert score("blogNDCG@6", WIKI) == pytest.approx(100 * actual / (ideal - 1 / 3))
    assert score("blogNDCG@6", WIKI) == pytest.approx(78.50, abs=0.01)


# ----------------------------------------------------------------------------------------- the built-ins
# G on 0-3: returned [3, -, 2, 0, 1] (d1 unrated) and two rated documents not returned, 3 and 2.
# best = [3, 3, 2, 2, 1, 0]
G = view([3, None, 2, 0, 1], {"x": 3, "y": 2})


def test_cg_and_dcg() -> None:
    assert score("CG@10", G) == 6  # 3 + 0 + 2 + 0 + 1
    assert score("CG@2", G) == 3  # 3 + 0
    # (2^3 - 1)/log2(2) + 0 + (2^2 - 1)/log2(4) + 0 + (2^1 - 1)/log2(6) = 7 + 1.5 + 0.386853
    assert score("DCG@10", G) == pytest.approx(7 + 1.5 + 1 / math.log2(6))
    assert score("DCG@1", G) == 7


def test_ndcg_ideal_from_every_rated_document_uncut() -> None:
    # IDCG over [3, 3, 2, 2, 1, 0]: 7 + 7/log2(3) + 3/2 + 3/log2(5) + 1/log2(6) = 14.595391
    idcg = 7 + 7 / math.log2(3) + 1.5 + 3 / math.log2(5) + 1 / math.log2(6)
    assert score("nDCG@10", G) == pytest.approx((7 + 1.5 + 1 / math.log2(6)) / idcg)  # 0.608883
    assert score("nDCG@2", G) == pytest.approx(7 / idcg)  # ideal not cut at 2: 0.479603
    assert score("NDCG_CUT@2", G) == pytest.approx(7 / (7 + 7 / math.log2(3)))  # ideal cut at 2: 0.613149


def test_ndcg_scenarios_of_the_reference_notes() -> None:
    # A: one hit rated 3; five documents rated 3 exist: 7 / (7 sum over 5 ranks) = 0.339
    a = view([3], {f"r{i}": 3 for i in range(4)})
    assert score("nDCG@10", a) == pytest.approx(0.339, abs=5e-4)
    assert score("NDCG_CUT@10", a) == pytest.approx(0.339, abs=5e-4)
    # B: the five rated-3 documents at ranks 6-10
    b = view([0, 0, 0, 0, 0, 3, 3, 3, 3, 3])
    assert score("nDCG@10", b) == pytest.approx(0.541, abs=5e-4)
    assert score("NDCG_CUT@10", b) == pytest.approx(0.541, abs=5e-4)
    # C: a perfect top 10, but 20 documents rated 3: nDCG@10 cannot reach 1, NDCG_CUT@10 does
    c = view([3] * 10, {f"r{i}": 3 for i in range(10)})
    assert score("nDCG@10", c) == pytest.approx(0.645, abs=5e-4)
    assert score("NDCG_CUT@10", c) == 1.0


def test_ndcg_zero_ideal_is_zero() -> None:
    assert score("nDCG@10", view([0, None])) == 0.0 and score("NDCG_CUT@10", view([0, None])) == 0.0


def test_precision_denominator_is_documents_returned_within_k() -> None:
    assert score("P@10", G) == 0.6  # relevant (> 0): d0, d2, d4 = 3, over 5 returned (not 10)
    assert score("P@2", G) == 0.5  # d0 relevant, d1 unrated = 0: 1 / 2
    assert score("P@10", view([2, 0, 1, None], scale=GRADED)) == 0.5  # any grade > 0 is relevant: 2 / 4
    assert score("P@10", view([])) == 0.0


def test_average_precision_denominator_is_every_relevant_rated_document() -> None:
    # relevant at ranks 1, 3, 5: P@1 + P@3 + P@5 = 1 + 2/3 + 3/5 = 2.266667; 5 rated > 0 (d0, x, d2, y, d4)
    assert score("AP@10", G) == pytest.approx((1 + 2 / 3 + 3 / 5) / 5)  # 0.453333
    assert score("AP@2", G) == pytest.approx(1 / 5)  # only rank 1 within k; the denominator stays 5
    # 12 relevant documents, all in the top 10: AP@10 = 10 / 12 < 1
    assert score("AP@10", view([1] * 10, {"a": 1, "b": 1})) == pytest.approx(10 / 12)
    assert score("AP@10", view([0, None])) is None  # nothing rated > 0: Quepid divides 0 by 0


def test_reciprocal_rank() -> None:
    assert score("RR@10", G) == 1.0
    assert score("RR@10", view([0, None, 2])) == pytest.approx(1 / 3)
    assert score("RR@2", view([0, None, 2])) == 0.0


def test_err_max_grade_is_the_top_of_the_scale() -> None:
    # R = (2^r - 1) / 2^3: 7/8, 0, 3/8, 0, 1/8
    # ERR = 1 * 0.875/1 + 0.125 * 0/2 + 0.125 * 0.375/3 + 0.078125 * 0/4 + 0.078125 * 0.125/5
    #     = 0.875 + 0.015625 + 0.001953125 = 0.892578125
    assert score("ERR@10", G) == pytest.approx(0.892578125)
    assert score("ERR@1", G) == 0.875
    # on a 0-4 scale the same ratings give R = 7/16, ...: 7/16 + (9/16)(3/16)/3 + (9/16)(13/16)(1/16)/5
    g4 = view([3, None, 2, 0, 1], scale=RatingScale.parse("0-4"))
    assert score("ERR@10", g4) == pytest.approx(7 / 16 + (9 / 16) * (3 / 16) / 3 + (9 / 16) * (13 / 16) * (1 / 16) / 5)


def test_avg_rating100_quirks() -> None:
    assert score("avgRating100@10", view([None, None])) is None  # nothing rated
    assert score("avgRating100@10", view([0, 0])) is None  # Quepid's !avg: a mean of 0 is no mean
    assert score("avgRating100@10", view([2, 1])) == 50  # 1.5 * 100 / 3 = 50
    assert score("avgRating100@10", view([2, 2, 1])) == 55  # 5/3 * 100 / 3 = 55.56 -> 55
    assert score("avgRating100@10", view([2.7, 1.2])) == 50  # parseInt: (2 + 1) / 2 * 100 / 3 = 50


def test_edit_distance_variants_differ_on_a_swap() -> None:
    # returned [2, 3, 1], best [3, 2, 1]: Levenshtein 2 (two substitutions); Quepid's table (base case 0) 1
    v = view([2, 3, 1], scale=ONE_TO_TEN)
    assert score("editDistanceFromBest(distance=levenshtein)@10", v) == 2
    assert score("editDistanceFromBest@10", v) == 1  # Quepid's distance: the metric's default
    assert v.edit_distance_from_best(10) == 1 and v.edit_distance_from_best(10, "levenshtein") == 2
    # avg (2 + 3 + 1) / 3 = 2 -> 20; default = 20 - 1 = 19 (Quepid's number), or 20 - 2 = 18 with Levenshtein
    assert score("default@10", v) == 19 and score("default(distance=levenshtein)@10", v) == 18
    assert default_score(v, 10) == 19 and default_score(v, 10, "levenshtein") == 18
    assert default_score(v, 10, "quepid") == default_score(v, 10, "quepid-legacy") == 19


def test_edit_distance_when_fewer_results_than_rated() -> None:
    # 2 returned, 4 rated: the best list keeps min(k, 4) = 4 entries (Quepid pads, never cuts): [1, 2] against
    # [3, 3, 2, 1]; Levenshtein: substitute 1->3, 2->3, insert 2, 1 = 4? no: keep 1 and 2 aligned late -> 3
    v = view([1, 2], {"a": 3, "b": 3}, scale=ONE_TO_TEN)
    assert score("editDistanceFromBest(distance=levenshtein)@10", v) == 3
    assert levenshtein([1, 2], [3, 3, 2, 1]) == 3
    assert score("editDistanceFromBest@10", v) == quepid_legacy_distance([1, 2], [3, 3, 2, 1])


def test_legacy_edit_distance_cases_of_the_reference_notes() -> None:
    assert quepid_legacy_distance([3, 2, 1, 0], [0, 1, 2, 3]) == 3
    assert levenshtein([3, 2, 1, 0], [0, 1, 2, 3]) == 4
    assert quepid_legacy_distance([1, 2, 3, 4, 5], [5, 1, 2, 3, 4]) == 1
    assert levenshtein([1, 2, 3, 4, 5], [5, 1, 2, 3, 4]) == 2
    assert quepid_legacy_distance([], [1, 2]) == 0 and levenshtein([], [1, 2]) == 2
    assert quepid_legacy_distance([1, 2], []) == 0 and levenshtein([1, 2], []) == 2
    assert quepid_legacy_distance([None, 1], [None, 1]) == 0  # null === null


# -------------------------------------------------------------------------------------------- names
def test_builtin_names_follow_the_metric_grammar_under_the_quepid_profile() -> None:
    assert builtin_scorer("nDCG@5").name == "nDCG@5"
    assert str(builtin_scorer("nDCG@5").metric) == "nDCG(gain=exponential, ideal_depth=all)@5"
    assert builtin_scorer("v1@10").name == "default@10" and str(builtin_scorer("v1@10").metric) == "QuepidV1@10"
    assert str(builtin_scorer("NDCG_CUT@3").metric) == "nDCG(gain=exponential)@3"
    levenshtein7 = builtin_scorer("default(distance=levenshtein)@7")
    assert levenshtein7.name == "default(distance=levenshtein)@7" and levenshtein7.k == 7
    assert levenshtein7.edit_distance == "levenshtein"  # the JavaScript runtime's name of it
    assert builtin_scorer(levenshtein7.name) == levenshtein7
    assert builtin_scorer("default@10").edit_distance == "quepid-legacy"  # Quepid's distance by default
    assert builtin_scorer("default@10", edit_distance="levenshtein").name == "default(distance=levenshtein)@10"
    assert builtin_scorer("default@10", edit_distance="quepid-legacy").name == "default@10"
    # every definition is found back from its metric
    for definition in BUILTINS.values():
        assert builtin_scorer(f"{definition.name}@4").definition == definition
        assert BuiltinScorer(definition, 4).name == f"{definition.name}@4"
    # any metric gainscope knows scores too; it is not one of Quepid's (no default scale, no script)
    other = builtin_scorer("R@10")
    assert other.definition is None and other.name == "R@10" and other.default_scale is None
    ap = builtin_scorer("AP")  # AP over the whole ranking: not Quepid's AP@k
    assert ap.definition is None and ap.k is None


@pytest.mark.parametrize("name", ["nDGC@10", "ap@10", "ndcg_cut@10", "Default@10", "avgrating@10", "P@0",
                                  "nDCG@-1", "P(gain=2)@3", "v1", "AP@", "nDCG@10)"])
def test_a_mistake_in_a_name_gives_the_error_evaluate_gives(name: str) -> None:
    # one grammar: the scorer name is resolved by the one lookup, so the error is evaluate's -m error
    with pytest.raises(MetricError) as expected:
        resolve_metrics(name, profile="quepid")
    with pytest.raises(type(expected.value)) as got:
        builtin_scorer(name)
    assert str(got.value) == str(expected.value)


def test_scorer_names_are_case_sensitive_with_a_suggestion() -> None:
    with pytest.raises(UnknownMetricError, match=r"unknown metric 'ndcg_cut'. Did you mean 'NDCG_CUT'\?"):
        builtin_scorer("ndcg_cut@10")
    with pytest.raises(UnknownMetricError, match=r"unknown metric 'nDGC'. Did you mean 'nDCG'\?"):
        builtin_scorer("nDGC@10")
    with pytest.raises(InvalidParameterError, match=r"QuepidV1 needs a 'cutoff': write for example QuepidV1@10"):
        builtin_scorer("default")  # k no longer defaults to 10


def test_scorer_name_errors() -> None:
    with pytest.raises(MetricError, match=r"'official' names 29 metrics \(NumQ, NumRet, NumRel, NumRelRet, AP, "
                                          r"\.\.\.\); a scorer is one metric, for example nDCG@10"):
        builtin_scorer("official")
    with pytest.raises(InvalidParameterError, match=r"'default\(distance=levenshtein\)@10' names distance="
                                                     r"levenshtein but edit_distance='quepid' was given"):
        builtin_scorer("default(distance=levenshtein)@10", edit_distance="quepid")
    with pytest.raises(InvalidParameterError, match="edit_distance must be one of quepid, levenshtein"):
        builtin_scorer("default@10", edit_distance="hamming")
    with pytest.raises(InvalidParameterError, match="k must be an integer >= 1; got 0"):
        BuiltinScorer(BUILTINS["P"], 0)


# -------------------------------------------------------------------------------------------- scales
def test_rating_scales() -> None:
    assert RatingScale.parse("binary").describe() == "0-1 (0=Irrelevant, 1=Relevant)"
    assert RatingScale.parse("graded").max == 3
    assert RatingScale.parse("1-10").values == tuple(range(1, 11))
    custom = RatingScale.parse({"0": "Bad", "5": "Okay", "10": "Great"})
    assert custom.values == (0, 5, 10) and custom.labels[5] == "Okay" and custom.max == 10
    assert custom.describe() == "[0, 5, 10] (0=Bad, 5=Okay, 10=Great)"
    assert RatingScale.parse(custom.to_json()) == custom
    assert RatingScale.parse([0, 1, 2]).to_json() == [0, 1, 2]
    with pytest.raises(InputError, match="strictly ascending"):
        RatingScale.parse([3, 2, 1])
    with pytest.raises(InputError, match="unknown rating scale 'stars'"):
        RatingScale.parse("stars")
    with pytest.raises(InputError, match=r"query 'q', document 'd1': rating 4 is outside the scale 0-3"):
        Case((CaseQuery("q", {"d1": 4}, ("d1",)),), GRADED)


# --------------------------------------------------------------------------------------- case scoring
def test_case_score_can_exclude_zero_result_and_unrated_queries() -> None:
    case = Case((
        CaseQuery("star wars", {"a": 1, "b": 0}, ("a", "b")),      # P@10 = 1/2
        CaseQuery("star trek", {"c": 1}, ("x", "c", "y", "z")),    # P@10 = 1/4
        CaseQuery("empty", {"c": 1}, ()),                          # zero results
        CaseQuery("nobody rated", {}, ("a",)),                     # no ratings
    ), RatingScale.parse("binary"))
    result = score_case(case, builtin_scorer("P@10"), unscored="skip")
    assert [q.status for q in result.queries] == ["scored", "scored", "zsr", "unrated"]
    assert result.score == pytest.approx((0.5 + 0.25) / 2)
    assert "case score: mean of 2 of 4 query scores" in result.conventions
    assert "zero-result queries left out: empty" in result.conventions
    assert "unrated queries left out: nobody rated" in result.conventions
    zero = score_case(case, builtin_scorer("P@10"), unscored="zero")
    assert zero.score == pytest.approx((0.5 + 0.25 + 0 + 0) / 4)
    assert zero.query("empty").counted == 0.0 and zero.query("empty").value is None
    # Quepid's rule (the default): P@10 gives 0 on both (no results: total 0 -> 0; 'a' unrated -> 0 / 1)
    quepid = score_case(case, builtin_scorer("P@10"))
    assert [q.status for q in quepid.queries] == ["scored"] * 4 and quepid.score == pytest.approx(0.75 / 4)
    assert "zero-result queries scored (the scorer gave no null; counted, as in Quepid): empty" in quepid.conventions


def test_case_score_undefined_queries_count_as_zero_unless_skipped() -> None:
    case = Case((CaseQuery("q1", {"a": 1}, ("a",)),            # AP = 1
                 CaseQuery("q2", {"a": 0}, ("a", "b"))),       # nothing relevant: AP undefined
                RatingScale.parse("binary"))
    result = score_case(case, builtin_scorer("AP@10"))
    assert result.query("q2").status == "undefined" and result.score == 0.5
    assert any(c.startswith("undefined scores counted as 0") for c in result.conventions)
    assert score_case(case, builtin_scorer("AP@10"), undefined="skip").score == 1.0


def test_case_scale_defaults_to_the_scorers_and_conventions_name_it() -> None:
    case = Case((CaseQuery("q", {"a": 3, "b": 1}, ("b", "a")),))
    result = score_case(case, builtin_scorer("ERR@10"))
    assert result.scale == GRADED
    assert result.conventions[1] == "scale: 0-3 (0=Poor, 1=Fair, 2=Good, 3=Perfect), max 3 (the scorer's default)"
    assert "ERR@10 is gainscope's ERR@10 under the quepid profile (expected reciprocal rank)" in result.conventions
    assert "max_grade: the top of the rating scale (Quepid's max, which ERR@10 divides by)" in result.conventions
    assert isinstance(result.results, Results) and result.results.policies.max_grade == 3
    # R = 1/8, then 7/8: 1/8 + (7/8)(7/8)/2
    assert result.score == pytest.approx(1 / 8 + (7 / 8) * (7 / 8) / 2)
    with pytest.raises(InputError, match="rating 3 is outside the scale 0-1"):
        score_case(case, builtin_scorer("ERR@10"), scale="binary")


# The reviewer's case3 (scale 0-3): one scored query, one zero-result query, one unrated query.
CASE3 = Case((
    CaseQuery("star wars", {"d1": 3, "d2": 0, "d4": 2, "x9": 3}, ("d1", "d2", "d3", "d4"), num_found=1234),
    CaseQuery("no hits", {"d1": 1}, ()),
    CaseQuery("unrated", {}, ("z1", "z2")),
), GRADED)


def test_case_score_runs_the_scorer_on_every_query_as_quepid() -> None:
    # Quepid's browser (ScorerFactory.score) runs the scorer on every query and shows zsr / -- only when the
    # score is null; the case mean (queriesSvc.scoreAll) counts every other query, NaN and null as 0.
    # AP@10, 'star wars': ratings by rank [3, 0, -, 2]; relevant at ranks 1 and 4: P@1 = 1, P@4 = 2/4;
    #   relevant rated documents d1, d4, x9 = 3 -> (1 + 0.5) / 3 = 0.5
    # 'no hits': nothing returned, d1 relevant -> 0 / 1 = 0 (a number: counted)
    # 'unrated': nothing rated -> 0 / 0 = NaN -> 0 (Quepid's `score || 0.0`; counted)
    # case = (0.5 + 0 + 0) / 3 = 0.1667
    ap10 = score_case(CASE3, builtin_scorer("AP@10"))
    assert [(q.status, q.value, q.counted) for q in ap10.queries] == [
        ("scored", 0.5, 0.5), ("scored", 0.0, 0.0), ("undefined", None, 0.0)]
    assert ap10.score == pytest.approx(0.5 / 3) and round(ap10.score, 4) == 0.1667
    # nDCG@10, 'star wars': DCG of [3, 0, 0, 2] = 7 + 0 + 0 + 3/log2(5) = 8.29203;
    #   ideal [3, 3, 2, 0] = 7 + 7/log2(3) + 3/2 = 12.91650 -> 0.64197
    # 'no hits': DCG 0 / ideal 1 = 0; 'unrated': ideal 0 -> 0 (the script's `den ? num / den : 0`)
    # case = 0.64197 / 3 = 0.2140
    ndcg10 = score_case(CASE3, builtin_scorer("nDCG@10"))
    sw = (7 + 3 / math.log2(5)) / (7 + 7 / math.log2(3) + 1.5)
    assert [q.value for q in ndcg10.queries] == pytest.approx([sw, 0.0, 0.0])
    assert ndcg10.score == pytest.approx(sw / 3) and round(ndcg10.score, 4) == 0.2140
    assert any(c.startswith("zero-result and unrated queries: --unscored quepid") for c in ndcg10.conventions)
    # default@10 (v1) gives null on both: zsr and -- (Quepid's labels), left out: the mean is 'star wars' alone
    v1 = score_case(CASE3, builtin_scorer("default@10"))
    assert [q.status for q in v1.queries] == ["scored", "zsr", "unrated"]
    assert v1.score == v1.queries[0].value
    # the other convention: zero-result and unrated queries are not scored and left out
    skip = score_case(CASE3, builtin_scorer("AP@10"), unscored="skip")
    assert [q.status for q in skip.queries] == ["scored", "zsr", "unrated"] and skip.score == 0.5
    assert any(c.startswith("zero-result and unrated queries: --unscored skip") for c in skip.conventions)


def test_javascript_scorers_run_on_zero_result_queries() -> None:
    pytest.importorskip("py_mini_racer")
    from gainscope.cases.javascript import JavaScriptScorer

    code = "if (numReturned() === 0) { setScore(0); } else { setScore(avgRating100(10)); }"
    result = score_case(CASE3, JavaScriptScorer(code), scale="0-10")
    # 'star wars' (on 0-10): rated 3, 0, 2 within 10 -> mean 5/3 -> floor(16.67) = 16; 'no hits' 0 (counted);
    # 'unrated': avgRating100 is null -> '--', left out
    assert [(q.status, q.value) for q in result.queries] == [("scored", 16), ("scored", 0), ("unrated", None)]
    assert result.score == 8
    # setScore(undefined) is not null: Quepid shows no zsr label and counts it as 0
    undef = score_case(CASE3, JavaScriptScorer("setScore(numReturned() ? 1 : undefined);"))
    assert [(q.status, q.counted) for q in undef.queries] == [("scored", 1), ("undefined", 0), ("scored", 1)]


def test_best_docs_hold_truncated_ratings_as_quepids_ratings_store() -> None:
    # Quepid's ratingsStoreSvc.bestDocs() keeps parseInt(rating); docRating(i) keeps the decimals.
    # Ratings by rank [2.5, 1.5, 3]; bestDocs [3, 2, 1] (2.5 -> 2, 1.5 -> 1).
    q = CaseQuery("q", {"a": 2.5, "b": 1.5, "c": 3}, ("a", "b", "c"))
    v = QueryView.of(q, GRADED)
    assert v.best == (("c", 3), ("a", 2), ("b", 1)) and v.ratings == (2.5, 1.5, 3)
    # nDCG@10: DCG [2.5, 1.5, 3] = (2^2.5 - 1) + (2^1.5 - 1)/log2(3) + 7/2 = 4.65685 + 1.15362 + 3.5 = 9.31047;
    # ideal [3, 2, 1] = 7 + 3/log2(3) + 1/2 = 9.39279 -> 0.99124 (with decimal ideals [3, 2.5, 1.5]: 0.858)
    dcg_actual = (2 ** 2.5 - 1) + (2 ** 1.5 - 1) / math.log2(3) + 7 / 2
    assert score("nDCG@10", v) == pytest.approx(dcg_actual / (7 + 3 / math.log2(3) + 0.5))
    assert round(score("nDCG@10", v), 3) == 0.991
    # v1 on 1-10: avgRating100 = floor(mean(parseInt) [2, 1, 3] = 2 -> 2 * 100 / 10) = 20; the edit distance
    # compares [2, 1, 3] with [3, 2, 1]: Quepid's shipped one gives 1 -> 19 (Levenshtein: 2 -> 18)
    one_to_ten = QueryView.of(q, ONE_TO_TEN)
    assert default_score(one_to_ten, 10, "quepid-legacy") == 19
    assert default_score(one_to_ten, 10, "levenshtein") == 18
    # AP: docRating 0.5 > 0 is a hit, but bestDocs holds parseInt(0.5) = 0, not relevant, so only b counts in
    # the denominator: (1/1 + 2/2) / 1 = 2, above 1, as Quepid's AP@10 gives on these ratings
    half = QueryView.of(CaseQuery("q", {"a": 0.5, "b": 1}, ("a", "b")), GRADED)
    assert score("AP@10", half) == pytest.approx((1 / 1 + 2 / 2) / 1)
    result = score_case(Case((q,), GRADED), builtin_scorer("nDCG@10"))
    assert any(c.startswith("decimal ratings: bestDocs hold parseInt(rating)") for c in result.conventions)


def test_binary_scorers_accept_graded_ratings_when_the_case_names_no_scale() -> None:
    # Quepid's P@10, AP@10 and RR@10 read any rating > 0 as relevant ("map 0 -> irrel, 1+ -> rel") and do not
    # check the ratings against their 0-1 scale; a case without a scale is read the same way
    case = Case((CaseQuery("q", {"a": 3, "b": 0, "c": 2}, ("a", "b", "c", "d")),))
    p = score_case(case, builtin_scorer("P@10"))
    assert p.score == pytest.approx(2 / 4)  # a (3) and c (2) relevant out of 4 returned
    assert p.scale == RatingScale.parse("0-3")
    assert ("scale: 0-3, max 3 (from the ratings: the case names no scale, and P reads any rating > 0 as "
            "relevant)") in p.conventions
    assert score_case(case, builtin_scorer("AP@10")).score == pytest.approx((1 / 1 + 2 / 3) / 2)
    assert score_case(case, builtin_scorer("RR@10")).score == 1.0
    binary = Case((CaseQuery("q", {"a": 1, "b": 0}, ("a", "b")),))
    assert score_case(binary, builtin_scorer("P@10")).scale == RatingScale.parse("binary")
    with pytest.raises(InputError, match="rating 3 is outside the scale 0-1"):  # a scale given is checked
        score_case(case, builtin_scorer("P@10"), scale="binary")


def test_avg_rating100_multiplies_by_100_over_max_in_quepids_order() -> None:
    # Quepid: multiplier = 100 / max; Math.floor(avg * multiplier). Ratings [1, 7, 1, 8, 6] on 1-10: avg = 4.6,
    # 4.6 * (100 / 10) = 46.0, while 4.6 * 100 / 10 = 45.99999999999999 would floor to 45
    v = view([1, 7, 1, 8, 6], scale=ONE_TO_TEN)
    assert 23 / 5 * 100 / 10 < 46 and 23 / 5 * (100 / 10) == 46
    assert score("avgRating100@10", v) == 46


# ------------------------------------------------------------------------------------- the one pipeline
def test_a_query_without_results_is_scored_as_an_empty_list() -> None:
    # 'empty zero': nothing returned, its only rating 0. AP = 0 / R = 0 / 0 in Quepid's script (NaN, which its
    # score || 0 counts as 0): undefined, not the 0 trec_eval's -c gives a query missing from the run (the quepid
    # profile's missing_queries="empty"); nDCG's ideal DCG is 0: Quepid's script gives 0
    case = Case((CaseQuery("hit", {"a": 1}, ("a",)), CaseQuery("empty zero", {"y": 0}, ())), GRADED)
    ap = score_case(case, builtin_scorer("AP@10"))
    assert [(q.status, q.value, q.counted) for q in ap.queries] == [("scored", 1.0, 1.0), ("undefined", None, 0.0)]
    assert ap.score == 0.5 and score_case(case, builtin_scorer("AP@10"), undefined="skip").score == 1.0
    ndcg10 = score_case(case, builtin_scorer("nDCG@10"))
    assert [(q.status, q.value) for q in ndcg10.queries] == [("scored", 1.0), ("scored", 0.0)]


def test_case_score_keeps_the_metrics_results() -> None:
    # AP@10 on CASE3 (see above): 'star wars' 0.5, 'no hits' 0 / 1 = 0, 'unrated' 0 / 0 undefined (NaN)
    result = score_case(CASE3, builtin_scorer("AP@10"))
    res = result.results
    assert isinstance(res, Results) and res.metric_names == ["AP@10"]
    assert res.profile is not None and res.profile.name == "quepid" and res.policies.max_grade == 3
    assert res.query_ids == ("star wars", "no hits", "unrated")  # query texts, in the case's order
    values = res.per_query("AP@10")
    assert values["star wars"] == 0.5 and values["no hits"] == 0.0 and math.isnan(values["unrated"])
    assert res.undefined[:, 0].tolist() == [False, False, True]
    # every query evaluated: 'no hits' with an empty ranking, 'unrated' with an empty judged pool
    assert res.coverage.evaluated_queries == 3 and res.coverage.missing == ()
    assert score_case(CASE3, BuiltinScorer(BUILTINS["AP"], 10)).results is not None
    assert score_case(CASE3, python_scorer(lambda q: 1.0, scale="graded")).results is None  # a custom scorer


def test_negative_ratings_are_refused_by_the_builtins() -> None:
    # gainscope's metrics read a negative grade as pooled but unjudged, never as a rating
    case = Case((CaseQuery("q", {"a": -1, "b": 2}, ("a", "b")),), RatingScale.parse("-1-3"), source="c.json")
    with pytest.raises(InputError, match=r"^c\.json: query 'q', document 'a': rating -1 is negative; the built-in "
                                         r"scorers are gainscope's metrics"):
        score_case(case, builtin_scorer("nDCG@10"))


def test_any_metric_scores_a_case_on_a_scale_fitted_to_the_ratings() -> None:
    # R@2 under the quepid profile (relevant = rating > 0): 'q' returns a (3) and b (0) within 2; c (2) is
    # relevant and not returned: R = 1 / 2
    case = Case((CaseQuery("q", {"a": 3, "b": 0, "c": 2}, ("a", "b", "c")),))
    result = score_case(case, builtin_scorer("R@2"))
    assert result.score == 0.5 and result.scale == RatingScale.parse("0-3")
    assert ("scale: 0-3, max 3 (from the ratings: the case names no scale, and R@2 has no default scale)"
            in result.conventions)
    assert "R@2 is gainscope's R@2 under the quepid profile" in result.conventions


def test_a_case_where_nothing_was_returned_is_scored_with_allow_unrated() -> None:
    # no run at all: every query an empty list. AP: 'a' 0 / 1 = 0, 'b' (nothing rated) 0 / 0 undefined;
    # default: avgRating100 is null on both (zsr)
    case = Case((CaseQuery("a", {"d": 1}, ()), CaseQuery("b", {}, ())), GRADED)
    ap = score_case(case, builtin_scorer("AP@10"), allow_unrated=True)
    assert [(q.status, q.value) for q in ap.queries] == [("scored", 0.0), ("undefined", None)]
    v1 = score_case(case, builtin_scorer("default@10"), allow_unrated=True)
    assert [q.status for q in v1.queries] == ["zsr", "zsr"] and v1.score is None
    assert builtin_scorer("AP@10").score_all([]) == []
