"""Quepid's legacy rating scorers as declared metrics: avgRating@k (the mean under avgRating100), avgRating100@k,
editDistanceFromBest@k, QuepidV1@k (the "default" v1 scorer) and the 2018 blog's NDCG (blogNDCG@k).

Quepid calls a document's grade its *rating*; the notation here: ``r_i`` the rating at rank i (None when the
document is not rated: absent from the judgments, or a negative grade under ``negative_grades="unjudged"``),
``n`` the number of documents retrieved, ``best`` the judged pool's ratings sorted descending (Quepid's
``bestDocs``). Quepid truncates ratings with ``parseInt`` in ``avgRating`` and in both lists of
``editDistanceFromBest``, whatever the ``judged_grades`` policy: these two compare whole numbers by
definition. The ``judged_grades="truncated"`` policy (the quepid profile) truncates the judged pool for every
metric, as Quepid's ``bestDocs`` hold ``parseInt(rating)``.

Undefined values: avgRating, avgRating100 and QuepidV1 are undefined where Quepid's script sets ``null``
(nothing rated within k; for the last two also a mean rating of 0): ``undefined_is_null``, which the case view
reads to label such queries ``zsr``/``--``. A judged query without a ranking keeps its own value here (no
results: null for those, the distance of an empty list for editDistanceFromBest), not the 0 of
``missing_queries="zero"``.

References: Quepid's ``ScorerFactory.js`` (``avgRating100``, ``editDistanceFromBest``) and its default scorer
(v1); B. Rigaldies, "How to Implement a Normalized Discounted Cumulative Gain (NDCG) Ranking Quality Scorer in
Quepid", OpenSource Connections blog, 2018.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from gainscope.core.policies import Policies
from gainscope.metrics.base import (
    Explanation,
    Metric,
    RankedQuery,
    Step,
    format_value,
    generic_explanation,
    grade_scale,
    is_judged,
    param,
)
from gainscope.metrics.context import Context, ratio
from gainscope.metrics.edit_distance import NO_RATING, edit_distances, levenshtein, quepid_legacy_distance
from gainscope.metrics.families.graded import NDCG
from gainscope.metrics.registry import register

__all__ = ["AvgRating", "AvgRating100", "BlogNDCG", "EditDistanceFromBest", "QuepidV1"]

_K = "rank depth k (Quepid's count)"
_MAX = ("top of the rating scale; None = the evaluation's max_grade, else the largest judged grade (Quepid: the "
        "last value of the scorer's scale)")
_DISTANCE = ("'quepid': Quepid's shipped editDistance (a border of zeros: never more than Levenshtein); "
             "'levenshtein': the true Levenshtein distance Quepid's documentation describes")


# ---------------------------------------------------------------------------------------------- avgRating100
def _rated_sums(ctx: Context, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per query: the sum of the truncated ratings of the rated documents among the first k, and their count."""
    g = ctx.jr.grades
    rated = (g >= 0) & (ctx.position <= k)  # NaN (not judged) and negative (pooled, unjudged) are unrated
    total = ctx.per_query_sum(np.where(rated, np.trunc(np.where(rated, g, 0.0)), 0.0))
    return total, ctx.per_query_sum(rated.astype(np.float64))


def _avg100(mean: np.ndarray, scale: float) -> np.ndarray:
    """``floor(mean * (100 / scale))`` in Quepid's order of operations (``4.6 * (100 / 10)`` is 46, where
    ``4.6 * 100 / 10`` would be 45.99999999999999); NaN where the mean is 0 or undefined (Quepid's ``!avg``)."""
    out = np.full(len(mean), np.nan)
    if scale > 0:
        ok = ~np.isnan(mean) & (mean != 0)
        out[ok] = np.floor(mean[ok] * (100 / scale))
    return out


def _ref_avg(q: RankedQuery, k: int) -> float:
    rated = [math.trunc(g) for g in q.grades[:k] if g is not None and is_judged(g)]
    return sum(rated) / len(rated) if rated else math.nan


def _ref_avg100(q: RankedQuery, k: int, scale: float) -> float:
    avg = _ref_avg(q, k)
    if math.isnan(avg) or not avg or scale <= 0:
        return math.nan
    return float(math.floor(avg * (100 / scale)))


def _explain_avg(metric: Metric, q: RankedQuery, k: int, value: float, formula: str,
                 note: str) -> Explanation:
    """Position by position: each of the first k documents' truncated rating and whether it is rated."""
    steps = []
    total = 0.0
    count = 0
    for i, (doc, g) in enumerate(zip(q.doc_ids, q.grades, strict=True), start=1):
        if i > k:
            break
        rated = g is not None and is_judged(g)
        rating = float(math.trunc(g)) if rated and g is not None else 0.0
        total += rating
        count += rated
        steps.append(Step(i, doc, g, rating, 1.0 if rated else 0.0, rating, total))
    return Explanation(str(metric), q.query_id, tuple(steps), (), total, float(count), value, formula,
                       ("rating", "rated", "counted"), (note,))


@register
@dataclass(frozen=True, repr=False)
class AvgRating(Metric):
    """Quepid's avgRating: the mean rating of the rated documents among the first k.

    Formula: ``avgRating@k = mean_{i <= min(k, n), r_i rated} trunc(r_i)``. Unrated documents are left out of
    the mean (not counted as 0). Undefined (Quepid's ``null``) when no document within k is rated.

    Conventions: ratings truncated to integers first (Quepid's ``parseInt``). Example (the 2018 blog): ratings
    ``[10, 8, 9, -, 5, 1, 4, -, -, -]`` give ``37 / 6 = 6.1667``.
    Reference: Quepid's ``ScorerFactory.js`` (``avgRating``, ``baseAvg``).
    """

    name: ClassVar[str] = "avgRating"
    summary: ClassVar[str] = "mean rating of the rated first k (Quepid)"
    bounds: ClassVar[tuple[float | None, float | None]] = (0.0, None)
    missing_scores_zero: ClassVar[bool] = False
    undefined_is_null: ClassVar[bool] = True

    cutoff: int | None = param(None, kind="int", ge=1, at=True, required=True, doc=_K)

    def compute(self, ctx: Context) -> np.ndarray:
        assert self.cutoff is not None
        return ratio(*_rated_sums(ctx, self.cutoff))

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        assert self.cutoff is not None
        return _ref_avg(q, self.cutoff)

    def explain(self, q: RankedQuery, policies: Policies) -> Explanation:
        assert self.cutoff is not None
        return _explain_avg(self, q, self.cutoff, _ref_avg(q, self.cutoff), "sum of rated / rated",
                            "unrated documents are left out; null (undefined) when none is rated")


@register
@dataclass(frozen=True, repr=False)
class AvgRating100(Metric):
    """Quepid's avgRating100: the mean rating of the rated documents among the first k, on a 0-100 scale,
    rounded down.

    Formula: ``avgRating100@k = floor(mean_{i <= min(k, n), r_i rated} trunc(r_i) * (100 / max))`` with ``max``
    the top of the rating scale. Unrated documents are left out of the mean (not counted as 0). Undefined
    (Quepid's ``null``) when no document within k is rated, and when the mean is 0 (Quepid tests ``!avg``).

    Conventions: ratings truncated to integers first (Quepid's ``avgRating`` uses ``parseInt``); ``max_grade``
    is the top of the scale (1-10 for Quepid's legacy scorers: pass ``max_grade=10`` or the evaluation's
    ``max_grade``; None uses the largest judged grade, noted with the results). The multiplication follows
    Quepid's order, ``mean * (100 / max)``. Example (the 2018 blog, scale 1-10): ratings
    ``[10, 8, 9, -, 5, 1, 4, -, -, -]`` give ``floor(37 / 6 * 10) = 61``.
    Reference: Quepid's ``ScorerFactory.js`` (``avgRating``, ``avgRating100``); Rigaldies, OpenSource
    Connections blog, 2018.
    """

    name: ClassVar[str] = "avgRating100"
    summary: ClassVar[str] = "mean rating of the rated first k on 0-100, rounded down (Quepid)"
    bounds: ClassVar[tuple[float | None, float | None]] = (0.0, 100.0)
    missing_scores_zero: ClassVar[bool] = False
    undefined_is_null: ClassVar[bool] = True
    uses_max_grade: ClassVar[bool] = True

    cutoff: int | None = param(None, kind="int", ge=1, at=True, required=True, doc=_K)
    max_grade: float | None = param(None, kind="float", gt=0, doc=_MAX)

    def scale(self, ctx: Context) -> float:
        """The top of the rating scale in force for this evaluation."""
        return grade_scale(self, self.max_grade, ctx.policies, ctx.max_grade, ctx.top_ranked_grade)

    def compute(self, ctx: Context) -> np.ndarray:
        return _avg100(AvgRating(cutoff=self.cutoff).compute(ctx), self.scale(ctx))

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        assert self.cutoff is not None
        return _ref_avg100(q, self.cutoff, grade_scale(self, self.max_grade, policies, q.max_grade,
                                                          q.top_ranked_grade))

    def explain(self, q: RankedQuery, policies: Policies) -> Explanation:
        assert self.cutoff is not None
        scale = grade_scale(self, self.max_grade, policies, q.max_grade, q.top_ranked_grade)
        return _explain_avg(self, q, self.cutoff, _ref_avg100(q, self.cutoff, scale),
                            f"floor(sum of rated / rated * (100 / {format_value(scale)}))",
                            "unrated documents are left out; null (undefined) when none is rated or the mean is 0")


# ---------------------------------------------------------------------------------------------- edit distance
def _distance_lists(ctx: Context, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per query, Quepid's two lists as arrays (see :class:`EditDistanceFromBest`) and their lengths."""
    jr = ctx.jr
    nq = ctx.nq
    a_len = np.minimum(jr.num_ret, k).astype(np.int64)
    a = np.full((nq, max(int(a_len.max(initial=0)), 1)), NO_RATING)
    within = ctx.position <= k
    g = jr.grades[within]
    a[ctx.segment[within], ctx.position[within] - 1] = np.where(g >= 0, np.trunc(np.where(g >= 0, g, 0.0)),
                                                                NO_RATING)
    best_len = np.minimum(jr.judged_lengths, k).astype(np.int64)
    b_len = np.maximum(best_len, a_len)  # the best list is padded with "no rating" to the results' length
    b = np.full((nq, max(int(b_len.max(initial=0)), 1)), NO_RATING)
    seg = jr.judged_segment
    pos = np.arange(len(seg)) - jr.judged_offsets[seg]
    keep = pos < best_len[seg]
    b[seg[keep], pos[keep]] = np.trunc(jr.judged_grades[keep])
    return a, a_len, b, b_len


def _ref_lists(q: RankedQuery, k: int) -> tuple[list[float | None], list[float | None]]:
    results: list[float | None] = [float(math.trunc(g)) if g is not None and is_judged(g) else None
                                   for g in q.grades[:k]]
    best: list[float | None] = [float(math.trunc(g)) for g in q.judged[:k]]
    best += [None] * (len(results) - len(best))
    return results, best


def _show(ratings: list[float | None]) -> str:
    return "[" + ", ".join("-" if r is None else format_value(r) for r in ratings) + "]"


@register
@dataclass(frozen=True, repr=False)
class EditDistanceFromBest(Metric):
    """Quepid's editDistanceFromBest: how many edits turn the ratings of the first k documents into the best
    ratings of the judged pool.

    Formula: ``editDistanceFromBest@k = D(results, best)`` with ``results = [trunc(r_i) or None for i <=
    min(k, n)]`` (None for unrated documents) and ``best`` the first ``min(k, |judged|)`` judged ratings,
    descending, truncated, padded with None up to ``len(results)`` (never cut to it); None equals None.
    ``D`` is ``distance="quepid"`` (the default): Quepid's shipped ``editDistance``, whose table has a border
    of zeros (``D(-1, j) = D(i, -1) = 0``), so a prefix can be dropped for free (``[3, 2, 1, 0]`` vs ``[0, 1,
    2, 3]`` gives 3) and an empty list gives 0; or ``distance="levenshtein"``, the true Levenshtein distance
    (4 there) that Quepid's documentation and the 2018 blog describe. Lower is better; 0 is a ranking in
    the best order.

    Conventions: ratings compared as whole numbers (Quepid's ``parseInt``). A judged query without a ranking
    gets the distance of an empty results list (0 with ``quepid``, ``min(k, |judged|)`` with ``levenshtein``)
    rather than the 0 of ``missing_queries="zero"``, which would be the best value.
    Reference: Quepid's ``ScorerFactory.js`` (``editDistance``, ``editDistanceFromBest``); V. I. Levenshtein,
    Soviet Physics Doklady 10(8), 1966.
    """

    name: ClassVar[str] = "editDistanceFromBest"
    summary: ClassVar[str] = "edit distance of the first k ratings from the best ratings (Quepid)"
    bounds: ClassVar[tuple[float | None, float | None]] = (0.0, None)
    missing_scores_zero: ClassVar[bool] = False

    cutoff: int | None = param(None, kind="int", ge=1, at=True, required=True, doc=_K)
    distance: str = param("quepid", kind="choice", choices=("quepid", "levenshtein"), doc=_DISTANCE)

    def compute(self, ctx: Context) -> np.ndarray:
        assert self.cutoff is not None
        a, a_len, b, b_len = _distance_lists(ctx, self.cutoff)
        return edit_distances(a, a_len, b, b_len, legacy=self.distance == "quepid")

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        assert self.cutoff is not None
        results, best = _ref_lists(q, self.cutoff)
        return float((quepid_legacy_distance if self.distance == "quepid" else levenshtein)(results, best))

    def explain(self, q: RankedQuery, policies: Policies) -> Explanation:
        assert self.cutoff is not None
        results, best = _ref_lists(q, self.cutoff)
        value = self.reference(q, policies)
        return generic_explanation(self, q, policies, value, (
            f"returned ratings (truncated, - = unrated): {_show(results)}",
            f"best ratings (truncated, padded): {_show(best)}",
            f"{self.distance} distance: {format_value(value)}"))


# ---------------------------------------------------------------------------------------------- v1
@register
@dataclass(frozen=True, repr=False)
class QuepidV1(Metric):
    """Quepid's default scorer (v1): avgRating100 minus editDistanceFromBest.

    Formula: ``QuepidV1@k = avgRating100@k - editDistanceFromBest@k`` (both as defined here, with this metric's
    ``max_grade`` and ``distance``). Undefined (Quepid's ``null``) when avgRating100 is. It can be negative:
    Quepid's case score clamps negative query scores to 0 (the case view does; the metric does not).
    Example (the 2018 blog, scale 1-10): ``61 - 4 = 57``.

    Conventions: Quepid's own code computes the ``quepid`` distance; the quepid profile names this metric
    ``default`` and ``v1``.
    Reference: Quepid's default scorer (``ScorerFactory.js``); Rigaldies, OpenSource Connections blog, 2018.
    """

    name: ClassVar[str] = "QuepidV1"
    summary: ClassVar[str] = "Quepid's default scorer: avgRating100 - editDistanceFromBest"
    bounds: ClassVar[tuple[float | None, float | None]] = (None, 100.0)
    missing_scores_zero: ClassVar[bool] = False
    undefined_is_null: ClassVar[bool] = True
    uses_max_grade: ClassVar[bool] = True

    cutoff: int | None = param(None, kind="int", ge=1, at=True, required=True, doc=_K)
    max_grade: float | None = param(None, kind="float", gt=0, doc=_MAX)
    distance: str = param("quepid", kind="choice", choices=("quepid", "levenshtein"), doc=_DISTANCE)

    def _parts(self) -> tuple[AvgRating100, EditDistanceFromBest]:
        return (AvgRating100(cutoff=self.cutoff, max_grade=self.max_grade),
                EditDistanceFromBest(cutoff=self.cutoff, distance=self.distance))

    def compute(self, ctx: Context) -> np.ndarray:
        avg, dist = self._parts()
        return avg.compute(ctx) - dist.compute(ctx)

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        avg, dist = self._parts()
        return avg.reference(q, policies) - dist.reference(q, policies)

    def explain(self, q: RankedQuery, policies: Policies) -> Explanation:
        avg, dist = self._parts()
        a, d = avg.reference(q, policies), dist.reference(q, policies)
        assert self.cutoff is not None
        results, best = _ref_lists(q, self.cutoff)
        return generic_explanation(self, q, policies, a - d, (
            f"{avg}: {'null (nothing rated, or a mean of 0)' if math.isnan(a) else format_value(a)}",
            f"{dist}: {format_value(d)} (returned {_show(results)}, best {_show(best)})"))


# ---------------------------------------------------------------------------------------------- blog NDCG
@register
@dataclass(frozen=True, repr=False)
class BlogNDCG(Metric):
    """The 2018 OpenSource Connections blog's NDCG scorer for Quepid: nDCG@k with linear gain, on 0-100.

    Formula: ``blogNDCG@k = 100 * DCG@k / IDCG@k`` with ``DCG@k = sum_{i<=k} r_i / log2(i + 1)`` (linear gain;
    unrated or absent = 0) and ``IDCG@k`` the same sum over the first k judged ratings, descending (padded
    with 0): 100 times ``nDCG@k``. Undefined when IDCG = 0 (the script divides 0 by 0; Quepid's ``score || 0``
    counts it as 0, as the ``undefined="zero"`` policy does).

    Conventions: the ideal comes from the judged pool (under the quepid profile truncated to integers, as
    Quepid's ``bestDocs``); the division comes before the multiplication, as in the script.
    Reference: B. Rigaldies, "How to Implement a Normalized Discounted Cumulative Gain (NDCG) Ranking Quality
    Scorer in Quepid", OpenSource Connections blog, 2018 (scripts 4 and 7); Järvelin & Kekäläinen 2002.
    """

    name: ClassVar[str] = "blogNDCG"
    summary: ClassVar[str] = "100 x nDCG@k, linear gain (the 2018 Quepid blog)"
    bounds: ClassVar[tuple[float | None, float | None]] = (0.0, 100.0)
    linear_in_gains: ClassVar[bool] = True

    cutoff: int | None = param(None, kind="int", ge=1, at=True, required=True, doc=_K)

    def _ndcg(self) -> NDCG:
        return NDCG(cutoff=self.cutoff)

    def compute(self, ctx: Context) -> np.ndarray:
        return self._ndcg().compute(ctx) * 100.0

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        return self._ndcg().reference(q, policies) * 100.0

    def explain(self, q: RankedQuery, policies: Policies) -> Explanation:
        e = self._ndcg().explain(q, policies)
        return Explanation(str(self), e.query_id, e.run, e.ideal, 100.0 * e.numerator, e.denominator,
                           e.value * 100.0, "100 x DCG / IDCG", e.columns, e.notes)
