"""The es_rank_eval profile against Elasticsearch's ``_rank_eval`` on the worked examples of Elasticsearch's own
unit tests (elastic/elasticsearch, ``modules/rank-eval/src/test/java/org/elasticsearch/index/rankeval/``).
Elasticsearch cannot be installed here, so the expected numbers are the ones those tests assert, cited per test;
documented formulas: ``shared/reference/quepid-rre-rank-eval.md`` section 3.2.

Mapping: ``precision`` = ``P@k`` (over the hits retrieved, unrated hits irrelevant: ``ignore_unlabeled=false``),
``recall`` = ``R@k``, ``mean_reciprocal_rank`` = ``RR@k``, ``dcg`` = ``DCG@k`` and with ``normalize: true``
``nDCG@k`` (the ideal cut at the hits returned), ``expected_reciprocal_rank`` = ``ERR@k`` with ``max_grade`` =
``maximum_relevance``; ``relevant_rating_threshold`` = the relevance level (``-l``); ``k`` defaults to 10.
Not reproduced: ``unknown_doc_rating`` (an unrated hit always has gain 0 here) and ``ignore_unlabeled=true``.
A query without hits is a judged query without a ranking (0, as Elasticsearch reports); a query without
ratings is not evaluated here (Elasticsearch reports 0).
"""

from __future__ import annotations

import warnings

import pytest

from gainscope import Judgments, Run, evaluate
from gainscope.errors import GainscopeWarning

pytestmark = pytest.mark.parity

DELTA = 1e-13  # Elasticsearch's tests use 10E-14 for DCG and ERR


def es(ratings: dict[str, int], hits: list[str], metric: str, **policies) -> float:
    """The value of ``metric`` for one request: ``ratings`` ``{doc: rating}``, ``hits`` in the order returned
    (another request is evaluated beside it, so that a request without hits can be given)."""
    run = {"other": ["x"], **({"q": hits} if hits else {})}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GainscopeWarning)  # no hits: judged without a ranking
        res = evaluate(Judgments.from_dict({"q": ratings, "other": {"x": 1}}), Run.from_dict(run), [metric],
                       profile="es_rank_eval", **policies)
    return res.per_query(metric)["q"]


def test_profile_reads_the_es_metric_names():
    res = evaluate(Judgments.from_dict({"q": {"a": 1}}), Run.from_dict({"q": ["a"]}),
                   ["P@10", "R@10", "RR@10", "DCG@10", "nDCG@10", "ERR(max_grade=3)@10"], profile="es_rank_eval")
    assert res.metric_names == ["P(denominator=retrieved)@10", "R@10", "RR@10", "DCG(gain=exponential)@10",
                                "nDCG(gain=exponential, ideal_depth=retrieved)@10", "ERR(max_grade=3)@10"]


# ---------------------------------------------------------------------------------------------- dcg
SIX = {str(i): r for i, r in enumerate([3, 2, 3, 0, 1, 2])}
HITS6 = [str(i) for i in range(6)]
MISSING = {"0": 3, "1": 2, "2": 3, "4": 1}  # hits 3 and 5 unrated


def test_dcg_at():
    # DiscountedCumulativeGainTests.testDCGAt: gains 7, 3, 7, 0, 1, 3 over log2(rank + 1): 13.84826362927298;
    # normalised by the ideal [3, 3, 2, 2, 1, 0]: 14.595390756454922
    assert es(SIX, HITS6, "DCG@10") == pytest.approx(13.84826362927298, abs=DELTA)
    assert es(SIX, HITS6, "nDCG@10") == pytest.approx(13.84826362927298 / 14.595390756454922, abs=DELTA)


def test_dcg_at_six_missing_ratings():
    # testDCGAtSixMissingRatings: unrated hits count nothing but keep their rank: 12.779642067948913; the ideal
    # of the four ratings [3, 3, 2, 1] (min(6 hits, 4 ratings) positions): 13.347184833073591
    assert es(MISSING, HITS6, "DCG@10") == pytest.approx(12.779642067948913, abs=DELTA)
    assert es(MISSING, HITS6, "nDCG@10") == pytest.approx(12.779642067948913 / 13.347184833073591, abs=DELTA)


def test_dcg_at_four_more_ratings():
    # testDCGAtFourMoreRatings: four hits (one unrated), a rated document beyond them: the ideal of the four
    # ratings cut at min(4 hits, 4 ratings) = 4
    assert es(MISSING, HITS6[:4], "DCG@10") == pytest.approx(12.392789260714371, abs=DELTA)
    assert es(MISSING, HITS6[:4], "nDCG@10") == pytest.approx(12.392789260714371 / 13.347184833073591, abs=DELTA)


def test_dcg_no_results():
    # testNoResults: 0.0, normalised or not
    assert es(MISSING, [], "DCG@10") == 0.0
    assert es(MISSING, [], "nDCG@10") == 0.0


def test_normalised_dcg_cuts_the_ideal_at_the_hits_returned():
    # the reference notes' scenario A: one hit rated 3, five documents rated 3: Elasticsearch gives 1.0
    ratings = {f"d{i}": 3 for i in range(5)}
    assert es(ratings, ["d0"], "nDCG@10") == 1.0
    assert es(ratings, ["d0"], "nDCG(ideal_depth=k)@10") == pytest.approx(0.339, abs=5e-4)  # given over it


# ---------------------------------------------------------------------------------------------- err
ERR4 = {"0": 3, "1": 2, "2": 0, "3": 1}


def test_err_at():
    # ExpectedReciprocalRankTests.testERRAt (maximum_relevance 3): 0.875 + 0.0234375 + 0 at k = 3;
    # the fourth rank adds 0.00244140625
    assert es(ERR4, ["0", "1", "2", "3"], "ERR(max_grade=3)@3") == pytest.approx(0.8984375, abs=DELTA)
    assert es(ERR4, ["0", "1", "2", "3"], "ERR@4", max_grade=3) == pytest.approx(0.8984375 + 0.00244140625,
                                                                                 abs=DELTA)


def test_err_missing_ratings():
    # testERRMissingRatings: hit 1 unrated (skipped, rank kept): 0.875 + 0.00390625
    assert es({"0": 3, "2": 0, "3": 1}, ["0", "1", "2", "3"], "ERR(max_grade=3)@4") == \
        pytest.approx(0.875 + 0.00390625, abs=DELTA)


@pytest.mark.parametrize("rating", range(6))
def test_err_probability_of_relevance(rating):
    # testProbabilityOfRelevance (maximum_relevance 5): (2^r - 1) / 32, read at rank 1
    assert es({"a": rating, "b": 0}, ["a"], "ERR(max_grade=5)@1") == (2 ** rating - 1) / 32


def test_err_no_results():
    # testNoResults: 0.0
    assert es({"a": 1}, [], "ERR(max_grade=5)@10") == 0.0


# ---------------------------------------------------------------------------------------------- precision
@pytest.mark.parametrize(("ratings", "hits", "level", "expected"), [
    ({"0": 1}, ["0"], 1, 1.0),                                                    # testCalculation
    ({"0": 1, "1": 1, "2": 1, "3": 1, "4": 0}, ["0", "1", "2", "3", "4"], 1, 4 / 5),  # testIgnoreOneResult
    ({str(i): i for i in range(5)}, [str(i) for i in range(5)], 2, 3 / 5),        # testRelevanceThreshold
    # testPrecisionAtFiveCorrectIndex: the other index's documents are other documents, not retrieved
    ({"o0": 1, "o1": 1, "0": 1, "1": 1, "2": 0}, ["0", "1", "2"], 1, 2 / 3),
    ({"0": 1, "1": 1}, ["0", "1", "2"], 1, 2 / 3),                                 # testIgnoreUnlabeled
    ({"0": 1}, [], 1, 0.0),                                                        # testNoResults
])
def test_precision(ratings, hits, level, expected):
    assert es(ratings, hits, "P@10", relevance_level=level) == pytest.approx(expected, abs=1e-12)


# ---------------------------------------------------------------------------------------------- recall
@pytest.mark.parametrize(("ratings", "hits", "level", "expected"), [
    ({"0": 1}, ["0"], 1, 1.0),                                                    # testCalculation
    ({"0": 1, "1": 1, "2": 1, "3": 1, "4": 0}, ["0", "1", "2", "3", "4"], 1, 1.0),  # testIgnoreOneResult
    ({str(i): i for i in range(5)}, ["0", "1", "2"], 2, 1 / 3),                   # testRelevanceThreshold
    ({"o0": 1, "o1": 1, "0": 1, "1": 1, "2": 0}, ["0", "1", "2"], 1, 2 / 4),      # testCorrectIndex
    ({"0": 1}, [], 1, 0.0),                                                        # testNoResultsWithRatedDocs
])
def test_recall(ratings, hits, level, expected):
    assert es(ratings, hits, "R@10", relevance_level=level) == pytest.approx(expected, abs=1e-12)


# ---------------------------------------------------------------------------------------------- reciprocal rank
@pytest.mark.parametrize("relevant_at", [0, 4, 9])
def test_reciprocal_rank_one_relevant_in_results(relevant_at):
    # MeanReciprocalRankTests.testEvaluationOneRelevantInResults: 10 hits, 21 rated, one relevant
    ratings = {str(i): 1 if i == relevant_at else 0 for i in range(21)}
    assert es(ratings, [str(i) for i in range(10)], "RR@10") == 1 / (relevant_at + 1)
    # testMaxAcceptableRank: fewer hits than the relevant position gives 0
    assert es(ratings, [str(i) for i in range(relevant_at)] or ["x"], "RR@10") == 0.0


def test_reciprocal_rank_relevance_threshold():
    # testPrecisionAtFiveRelevanceThreshold: threshold 2, ratings 0..4 in order: the first relevant is third
    assert es({str(i): i for i in range(5)}, [str(i) for i in range(5)], "RR@10", relevance_level=2) == 1 / 3
