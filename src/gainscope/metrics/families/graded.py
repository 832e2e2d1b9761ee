"""Graded-gain metrics: CG, DCG, nDCG, ERR, RBP and its residual, and trec_eval's G, ndcg_rel and Rndcg.

Gains come from :mod:`gainscope.metrics.gains` (linear by default, as trec_eval). The discount of rank i
is ``1 / log2(i + 1)`` (Järvelin & Kekäläinen). The ideal ranking sorts a query's gains descending, taken
from all its judged documents (``ideal="judged"``, trec_eval, ranx) or only from the documents the run
retrieved (``ideal="retrieved"``, scikit-learn, torchmetrics, the seed notebook).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from gainscope.core.policies import Level, Policies, level_value
from gainscope.errors import MetricError
from gainscope.metrics.base import (
    Explanation,
    GainMap,
    Metric,
    RankedQuery,
    Step,
    grade_scale,
    is_relevant,
    param,
    rel_param,
    tie_averaged,
)
from gainscope.metrics.context import Context, ratio, segmented_cumsum
from gainscope.metrics.gains import (
    EXP_ROOM,
    exp_shift,
    exponential_gain,
    exponential_gain_value,
    gain_array,
    gain_value,
)
from gainscope.metrics.registry import register

__all__ = ["CG", "DCG", "ERR", "NDCG", "RBP", "G", "NDCGRel", "RBPResidual", "Rndcg"]

_GAIN_DOC = ("'linear' (gain = grade), 'exponential' (2^grade - 1), or a {grade: gain} map (other grades "
             "keep gain = grade, as trec_eval's ndcg.GRADE=GAIN)")
_GRADED_REL = "grades below this threshold get gain 0 (ranx -l); None = every positive grade counts"
_LN2 = math.log(2.0)


def _discounted(gains: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """``gain / log2(rank + 1)``, divided (not multiplied by a reciprocal) so that values are bit-identical
    to trec_eval's."""
    divisor = pos + 1.0  # made in place, the quotient written over it: one array as long as the gains
    np.log2(divisor, out=divisor)
    return np.divide(gains, divisor, out=divisor)


# ---------------------------------------------------------------------------------------------------------
# Shifted exponential gains (see gainscope.metrics.gains): a metric that is a ratio of gain sums takes each
# query's exponential gains divided by 2^shift, the shift set by the largest grade that enters the ratio
# (every judged grade for an ideal from the judgments, the ranked ones for an ideal from the ranking).
# ``ideal=None`` asks for unshifted gains (DCG, G: not ratios). Shifts are 0 unless a grade passes EXP_ROOM.


def _query_top(grades: np.ndarray, segment: np.ndarray, nq: int) -> np.ndarray:
    """The largest grade per query (0 for none; NaN grades are unjudged)."""
    top = np.zeros(nq)
    if len(grades):
        np.maximum.at(top, segment, np.nan_to_num(grades, nan=0.0))
    return top


def _shifts(ctx: Context, gain: Any, ideal: str | None) -> np.ndarray | None:
    """Per query, the shift of exponential gains for a ratio against an ideal from ``ideal`` ("judged" or
    "retrieved"); None when no query needs one (always, unless a grade exceeds EXP_ROOM)."""
    if ideal is None or not (isinstance(gain, str) and gain == "exponential"):
        return None

    def make() -> np.ndarray | None:
        jr = ctx.jr
        if ideal == "judged":
            top = _query_top(jr.judged_grades, jr.judged_segment, ctx.nq)
        else:
            top = np.maximum(_query_top(jr.grades, ctx.segment, ctx.nq),
                             _query_top(jr.tail_grades, jr.tail_query, ctx.nq))
        shift = np.asarray(exp_shift(top))
        return shift if shift.any() else None
    return ctx.cached(("exp_shift", ideal), make)


def _gain_fn(ctx: Context, gain: Any, rel: Level | None, ideal: str | None) -> tuple[Any, Any]:
    """``(cache tag, f(grades, query_index) -> gains)`` with the shifts of :func:`_shifts` applied."""
    shift = _shifts(ctx, gain, ideal)
    if shift is None:
        return None, lambda g, q: gain_array(g, gain, rel)
    return ideal, lambda g, q: gain_array(g, gain, rel, shift[q])


def _ranked_gains(ctx: Context, gain: Any, rel: Level | None, ideal: str | None = None) -> np.ndarray:
    tag, fn = _gain_fn(ctx, gain, rel, ideal)
    return ctx.cached(("gains", gain, rel, tag), lambda: fn(ctx.jr.grades, ctx.segment))


def _ideal_gains(ctx: Context, gain: Any, rel: Level | None, ideal: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each query's positive judged gains sorted descending, and their offsets (Context.ideal_gains)."""
    tag, fn = _gain_fn(ctx, gain, rel, ideal)
    return ctx.ideal_gains((gain, rel, tag), lambda g: fn(g, ctx.jr.judged_segment))


def _dcg_to(ctx: Context, gain: Any, rel: Level | None, cutoff: int | None, ideal: str | None = None) -> np.ndarray:
    tag, fn = _gain_fn(ctx, gain, rel, ideal)
    return ctx.linear_sum(("gain", gain, rel, tag), fn, "log2", cutoff)



Depth = int | np.ndarray | None  # one cutoff for every query, one per query, or none


def _within(pos: np.ndarray, seg: np.ndarray, depth: Depth) -> np.ndarray:
    """Ideal positions kept by ``depth`` (a cutoff, one cutoff per query, or None for all)."""
    if depth is None:
        return np.ones(len(pos), dtype=bool)
    if isinstance(depth, np.ndarray):
        return pos <= depth[seg]
    return pos <= depth


def _ideal_dcg_judged(ctx: Context, gain: Any, rel: Level | None, depth: Depth) -> np.ndarray:
    if isinstance(depth, int) and isinstance(gain, str) and gain == "linear" and ctx.judged_descending:
        return _ideal_dcg_top(ctx, gain, rel, depth)
    ideal, offsets = _ideal_gains(ctx, gain, rel, "judged")
    lengths = np.diff(offsets)
    seg = np.repeat(np.arange(ctx.nq), lengths)
    pos = np.arange(1, len(ideal) + 1) - np.repeat(offsets[:-1], lengths)
    keep = _within(pos, seg, depth)
    return np.bincount(seg[keep], weights=_discounted(ideal, pos)[keep], minlength=ctx.nq)


def _ideal_dcg_top(ctx: Context, gain: Any, rel: Level | None, k: int) -> np.ndarray:
    """:func:`_ideal_dcg_judged` at a depth ``k`` when each query's judged grades are sorted descending and the gain
    is linear (``max(grade, 0)``, 0 below ``rel``: it keeps their order exactly, as floating-point exponential gains
    and maps need not): a query's first ``k`` grades then give its ``k`` best gains, in order, the positive ones
    first. Only those are read (``k`` per query, not every judgment); a gain of 0 adds 0.0 at its place, so the
    sums are the general path's to the last bit."""
    jr = ctx.jr
    offsets = jr.judged_offsets
    lengths = np.minimum(np.diff(offsets), k)
    seg = np.repeat(np.arange(ctx.nq), lengths)
    firsts = np.zeros(ctx.nq, dtype=np.int64)
    np.cumsum(lengths[:-1], out=firsts[1:])
    pos = np.arange(1, len(seg) + 1)
    pos -= np.repeat(firsts, lengths)  # 1..min(k, judged) within each query
    take = np.repeat(offsets[:-1] - 1, lengths)
    take += pos  # in place: W200k's nDCG@10 reads 2 million grades, and each array of them is 16 MB
    grades = jr.judged_grades[take]
    del take
    _, fn = _gain_fn(ctx, gain, rel, "judged")
    gains = fn(grades, seg)
    del grades
    return np.bincount(seg, weights=_discounted(gains, pos), minlength=ctx.nq)


def _ideal_dcg_retrieved(ctx: Context, gain: Any, rel: Level | None, depth: Depth) -> np.ndarray:
    g = _ranked_gains(ctx, gain, rel, "retrieved")
    keep = g > 0  # the retrieved documents' positive gains, sorted descending: positions 1, 2, ...
    seg = ctx.segment[keep]
    order = np.lexsort((-g[keep], seg))
    sorted_gains, seg = g[keep][order], seg[order]
    counts = np.bincount(seg, minlength=ctx.nq)
    pos = np.arange(1, len(seg) + 1) - np.repeat(np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
    mask = _within(pos, seg, depth)
    return np.bincount(seg[mask], weights=_discounted(sorted_gains, pos)[mask], minlength=ctx.nq)


def _ref_shift(gain: Any, grades: Any) -> float:
    """The reference twin of :func:`_shifts` for one query: from the grades that enter the ratio."""
    if not (isinstance(gain, str) and gain == "exponential"):
        return 0.0
    top = max((g for g in grades if g is not None and not math.isnan(g)), default=0.0)
    return float(exp_shift(top))


def _ref_gains(q: RankedQuery, gain: Any, rel: Level | None, shift: float = 0.0) -> list[float]:
    return tie_averaged([gain_value(g, gain, rel, shift) for g in q.grades], q.tie_start,
                        [gain_value(g, gain, rel, shift) for g in q.tail])


def _ref_dcg(gains: list[float], cutoff: int | None) -> float:
    return float(sum(g / math.log2(i + 1) for i, g in enumerate(gains[:cutoff], start=1) if g != 0))


def _require_finite(metric: Metric, query_ids: Any, *values: np.ndarray, instead: str | None = None) -> None:
    """Refuse per-query sums that exceeded float64 (inf) instead of reporting them: only unshifted
    exponential gains (DCG, G, sDCG) and huge mapped gains get there. NaN (undefined) passes. ``instead``: what
    to report instead of an exponential-gain sum (default: nDCG(gain=exponential))."""
    bad = np.flatnonzero(np.logical_or.reduce([np.isinf(v) for v in values]))
    if not len(bad):
        return
    gain = getattr(metric, "gain", None)
    if isinstance(gain, str) and gain == "exponential":
        why = "exponential gains 2^grade - 1 exceed it from grade 1024 on (and their sums earlier)"
        fix = instead or "report nDCG(gain=exponential) instead, a ratio gainscope computes without overflow"
    else:
        why, fix = "the gains of its map add up past it", "give the map smaller gains"
    raise MetricError(f"{metric} of query {query_ids[int(bad[0])]!r} exceeds the largest float64 number "
                      f"(about 1.8e308): {why}; {fix}.")


@dataclass(frozen=True, repr=False)
class _GainSum(Metric):
    """Gains of the first k documents added up with a weight per rank: the one kernel of CG and DCG."""

    #: the weight of rank i: ``"one"`` (CG) or ``"log2"``, 1 / log2(i + 1) (DCG)
    weight: ClassVar[str] = "log2"
    bounds: ClassVar[tuple[float | None, float | None]] = (0.0, None)
    linear_in_gains: ClassVar[bool] = True

    cutoff: int | None = param(None, kind="int", ge=1, at=True, doc="rank depth k; None = whole ranking")
    gain: Any = param("linear", kind="gain", choices=("linear", "exponential"), doc=_GAIN_DOC)
    rel: float | str | None = rel_param(_GRADED_REL)

    def compute(self, ctx: Context) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            out = ctx.linear_sum(("gain", self.gain, self.rel, None), lambda g, q: gain_array(g, self.gain, self.rel),
                                 self.weight, self.cutoff)
        _require_finite(self, ctx.jr.query_ids, out)
        return out

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        gains = _ref_gains(q, self.gain, self.rel)
        out = _ref_dcg(gains, self.cutoff) if self.weight == "log2" else float(sum(gains[: self.cutoff]))
        _require_finite(self, (q.query_id,), np.array([out]))
        return out

    def explain(self, q: RankedQuery, policies: Policies) -> Explanation:
        steps = _gain_steps(q, _ref_gains(q, self.gain, self.rel), self.cutoff, discounted=self.weight == "log2")
        total = steps[-1].total if steps else 0.0
        _require_finite(self, (q.query_id,), np.array([total]))
        return Explanation(str(self), q.query_id, tuple(steps), (), total, 1.0, total,
                           "sum of gain / log2(rank + 1)" if self.weight == "log2" else "sum of gains")


@register
@dataclass(frozen=True, repr=False)
class CG(_GainSum):
    """Cumulative gain: the gains of the first k documents added up, without discount.

    Formula: ``CG@k = sum_{i<=k} gain(grade_i)``. Not normalised (no upper bound); a document that is not
    judged adds 0. A value beyond float64 (exponential gain from grade 1024 on) is an error (MetricError),
    never ``inf``.

    Conventions: ``gain="linear"`` (gain = grade, the default) is Järvelin & Kekäläinen's CG and Quepid's
    ``CG@10`` scorer (ratings added up, unrated = 0); ``"exponential"`` or a map as for DCG. ``rel``: grades
    below it add nothing. Without a cutoff, the whole ranking.
    Reference: Järvelin & Kekäläinen, "Cumulated gain-based evaluation of IR techniques", ACM TOIS 20(4),
    2002; Quepid's ``cg@10.js``.
    """

    name: ClassVar[str] = "CG"
    summary: ClassVar[str] = "cumulative gain: the first k gains added up (no discount)"
    weight: ClassVar[str] = "one"


@register
@dataclass(frozen=True, repr=False)
class DCG(_GainSum):
    """Discounted cumulative gain: gains of the first k documents, each divided by log2(rank + 1).

    Formula: ``DCG@k = sum_{i<=k} gain(grade_i) / log2(i + 1)``. Not normalised (no upper bound). A value
    beyond float64 (exponential gain from grade 1024 on) is an error (MetricError), never ``inf``: nDCG,
    a ratio, is computed without overflow for any grade.
    Reference: Järvelin & Kekäläinen, "Cumulated gain-based evaluation of IR techniques", ACM TOIS 20(4),
    2002; Burges et al., "Learning to rank using gradient descent", ICML 2005 (exponential gain).
    """

    name: ClassVar[str] = "DCG"
    summary: ClassVar[str] = "discounted cumulative gain (not normalised)"


def _gain_steps(q: RankedQuery, gains: list[float], cutoff: int | None,
                doc_ids: tuple[str, ...] | None = None,
                grades: tuple[float | None, ...] | None = None, *, discounted: bool = True) -> list[Step]:
    steps = []
    total = 0.0
    docs = doc_ids if doc_ids is not None else q.doc_ids
    grs = grades if grades is not None else q.grades
    for i, (doc, g, gain) in enumerate(zip(docs, grs, gains, strict=True), start=1):
        if cutoff is not None and i > cutoff:
            break
        disc = 1.0 / math.log2(i + 1) if discounted else 1.0
        contrib = gain / math.log2(i + 1) if discounted else gain
        total += contrib
        steps.append(Step(i, doc, g, gain, disc, contrib, total))
    return steps


@register
@dataclass(frozen=True, repr=False)
class NDCG(Metric):
    """Normalised discounted cumulative gain: DCG@k divided by the DCG@k of the ideal ranking.

    Formula: ``nDCG@k = DCG@k / IDCG@k`` with ``DCG@k = sum_{i<=k} gain_i / log2(i + 1)`` and IDCG the same
    sum over the query's gains sorted descending. Undefined when IDCG = 0 (no positive gain).

    Conventions (each a parameter, defaults as trec_eval):

    * ``gain="linear"``: gain = grade (trec_eval ``ndcg``/``ndcg_cut``, pytrec_eval, ranx ``ndcg``);
      ``"exponential"``: 2^grade - 1 (ranx ``ndcg_burges``, Quepid, Elasticsearch); or a map.
    * ``ideal="judged"``: the ideal ranking uses every judged document of the query, retrieved or not
      (trec_eval); ``"retrieved"``: only the retrieved documents, re-sorted (scikit-learn, the seed
      notebook), which over-estimates a run that misses relevant documents.
    * ``ideal_depth``: how deep the ideal ranking goes. ``"k"`` (default): at most k ideal positions
      (trec_eval ``ndcg_cut``, ranx, scikit-learn, Quepid's ``NDCG_CUT``); ``"all"``: the ideal is not cut,
      ``DCG@k / IDCG`` over every positive gain, so a perfect top k scores below 1 when more than k documents
      carry gain (Quepid's ``nDCG@k`` since 2025); ``"retrieved"``: cut at min(k, n), n the number of
      documents retrieved (Elasticsearch/OpenSearch ``_rank_eval`` ``dcg`` with ``normalize``, which scores
      a single relevant hit 1.0 however many relevant documents it missed).
    * ``rel``: grades below it get no gain (ranx ``-l``). trec_eval ignores ``-l`` for nDCG, and so does
      the evaluation-wide relevance level here.
    * without a cutoff the run is not truncated and the ideal covers all judged documents (trec_eval
      ``ndcg``); ``nDCG@k`` truncates both (``ndcg_cut.k``).

    Any grade scale: exponential gains of a query whose grades exceed 959 are all divided by the same power
    of two (:func:`gainscope.metrics.gains.exp_shift`), which leaves the ratio unchanged and keeps every sum
    finite; smaller grades are computed exactly as written above.

    Reference: Järvelin & Kekäläinen, ACM TOIS 20(4), 2002; Quepid's ``ndcg@10.js`` (PR #1242, 2025) and
    ``ndcg_cut@10.js``; Elasticsearch ``DiscountedCumulativeGain.java``. trec_eval names: ``ndcg``,
    ``ndcg_cut.k``.
    """

    name: ClassVar[str] = "nDCG"
    aliases: ClassVar[tuple[str, ...]] = ("NDCG", "ndcg")
    summary: ClassVar[str] = "DCG divided by the DCG of the ideal ranking"
    linear_in_gains: ClassVar[bool] = True
    normalized: ClassVar[bool] = True

    cutoff: int | None = param(None, kind="int", ge=1, at=True, doc="rank depth k; None = whole ranking")
    gain: Any = param("linear", kind="gain", choices=("linear", "exponential"), doc=_GAIN_DOC)
    ideal: str = param("judged", kind="choice", choices=("judged", "retrieved"),
                       doc="'judged': ideal from all judged documents (trec_eval); 'retrieved': from the "
                           "retrieved documents only (scikit-learn, seed notebook)")
    ideal_depth: str = param("k", kind="choice", choices=("k", "all", "retrieved"),
                             doc="how deep the ideal goes: 'k' at most k positions (trec_eval, ranx, scikit-learn); "
                                 "'all' not cut (Quepid's nDCG); 'retrieved' min(k, documents retrieved) "
                                 "(Elasticsearch _rank_eval)")
    rel: float | str | None = rel_param(_GRADED_REL)

    def _depth(self, ctx: Context) -> Depth:
        """The ideal's depth for every query."""
        if self.ideal_depth == "all":
            return None
        if self.ideal_depth == "retrieved":
            n = ctx.lengths
            return n if self.cutoff is None else np.minimum(n, self.cutoff)
        return self.cutoff

    def _ref_depth(self, q: RankedQuery) -> int | None:
        if self.ideal_depth == "all":
            return None
        if self.ideal_depth == "retrieved":
            return len(q.grades) if self.cutoff is None else min(len(q.grades), self.cutoff)
        return self.cutoff

    def compute(self, ctx: Context) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):  # only huge mapped gains overflow: refused below
            dcg = _dcg_to(ctx, self.gain, self.rel, self.cutoff, self.ideal)
            if self.ideal == "judged":
                idcg = _ideal_dcg_judged(ctx, self.gain, self.rel, self._depth(ctx))
            else:
                idcg = _ideal_dcg_retrieved(ctx, self.gain, self.rel, self._depth(ctx))
        _require_finite(self, ctx.jr.query_ids, dcg + idcg)
        return ratio(dcg, idcg)

    def _shift(self, q: RankedQuery) -> float:
        return _ref_shift(self.gain, q.judged if self.ideal == "judged" else (*q.grades, *q.tail))

    def _ideal_gains(self, q: RankedQuery, shift: float) -> list[float]:
        source = q.judged if self.ideal == "judged" else [g for g in q.grades]
        gains = sorted((gain_value(g, self.gain, self.rel, shift) for g in source), reverse=True)
        return [g for g in gains if g > 0]

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        shift = self._shift(q)
        idcg = _ref_dcg(self._ideal_gains(q, shift), self._ref_depth(q))
        dcg = _ref_dcg(_ref_gains(q, self.gain, self.rel, shift), self.cutoff)
        _require_finite(self, (q.query_id,), np.array([dcg + idcg]))
        if idcg <= 0:
            return math.nan
        return dcg / idcg

    def explain(self, q: RankedQuery, policies: Policies) -> Explanation:
        shift = self._shift(q)
        if shift:  # shown divided by 2^(top grade), in [0, 1], rather than by the 2^(top - 959) of compute
            shift += EXP_ROOM
        run = _gain_steps(q, _ref_gains(q, self.gain, self.rel, shift), self.cutoff)
        docs: tuple[str, ...]
        grades: tuple[float | None, ...]
        if self.ideal == "judged":
            docs, grades = q.judged_doc_ids or tuple("?" for _ in q.judged), q.judged
        else:
            docs, grades = q.doc_ids, q.grades
        ranked = sorted(((gain_value(g, self.gain, self.rel, shift), d, g)
                         for d, g in zip(docs, grades, strict=True)), key=lambda t: -t[0])
        ranked = [t for t in ranked if t[0] > 0]
        depth = self._ref_depth(q)
        ideal = _gain_steps(q, [t[0] for t in ranked], depth, doc_ids=tuple(t[1] for t in ranked),
                            grades=tuple(t[2] for t in ranked))
        dcg = run[-1].total if run else 0.0
        idcg = ideal[-1].total if ideal else 0.0
        cut = {"k": "" if self.cutoff is None else f", cut at k = {self.cutoff}",
               "all": ", not cut", "retrieved": f", cut at min(k, retrieved) = {depth}"}[self.ideal_depth]
        notes: tuple[str, ...] = (f"gain={self.gain if isinstance(self.gain, str) else 'map'}; ideal from "
                                  + ("all judged documents" if self.ideal == "judged" else "the retrieved documents")
                                  + cut,)
        if shift:
            notes += (f"gains 2^grade - 1 shown divided by 2^{shift:g} (2 to the top grade) to keep them finite; "
                      "DCG / IDCG, a ratio, is unchanged",)
        return Explanation(str(self), q.query_id, tuple(run), tuple(ideal), dcg, idcg,
                           dcg / idcg if idcg > 0 else math.nan, "DCG / IDCG", notes=notes)


@register
@dataclass(frozen=True, repr=False)
class ERR(Metric):
    """Expected reciprocal rank: the expected 1/rank at which a cascading user stops, satisfied.

    Formula: with ``p_i = (2^grade_i - 1) / 2^max_grade``,
    ``ERR@k = sum_{i<=k} (1/i) * p_i * prod_{j<i} (1 - p_j)``. Always defined (0 without relevant).

    ``max_grade`` is the top of the grading scale; None uses the evaluation's ``max_grade`` policy, and
    when that is None too the largest grade judged for any evaluated query (echoed in the conventions).
    Quepid divides by the top of the scorer's scale, Elasticsearch by ``maximum_relevance`` (required there).
    A grade above a given ``max_grade`` is an error.

    Any grade scale: ``p`` is the shifted exponential gain of :mod:`gainscope.metrics.gains` (no overflow
    past grade 1024), and ``1 - p`` is never formed by subtraction once p > 1/2, where from max_grade = 54
    on p rounds to 1 and the product would lose the user who reaches the next rank: with ``d = max_grade -
    grade``, ``1 - p = (1 - 2^-d) + 2^-max_grade``, two positive terms, taken as
    ``log(1 - p) = logaddexp(log(-expm1(-d ln 2)), -max_grade ln 2)`` (``log1p(-p)`` while p <= 1/2).
    The kernel sums these logs (the product of ``1 - p_j``); the reference multiplies the same factors.
    Reference: Chapelle, Metzler, Zhang & Grinspan, "Expected Reciprocal Rank for Graded Relevance",
    CIKM 2009.
    """

    name: ClassVar[str] = "ERR"
    summary: ClassVar[str] = "expected reciprocal rank of a cascading user"
    uses_max_grade: ClassVar[bool] = True

    cutoff: int | None = param(None, kind="int", ge=1, at=True, doc="rank depth k; None = whole ranking")
    max_grade: float | None = param(None, kind="float", gt=0,
                                    doc="top of the grading scale; None = the evaluation's max_grade, else the "
                                        "largest judged grade")

    def compute(self, ctx: Context) -> np.ndarray:
        grades = ctx.jr.grades
        scale = grade_scale(self, self.max_grade, ctx.policies, ctx.max_grade, ctx.top_ranked_grade)
        if scale <= 0:
            return np.zeros(ctx.nq)
        positive = np.where(grades > 0, grades, 0.0)
        p = exponential_gain(positive, scale)
        if self.cutoff is not None:
            p = np.where(ctx.position <= self.cutoff, p, 0.0)
        with np.errstate(divide="ignore", under="ignore"):  # log(0) at grade = max_grade: logaddexp takes -inf
            near_one = np.logaddexp(np.log(-np.expm1(-(scale - positive) * _LN2)), -scale * _LN2)
            log_stay = np.where(p <= 0.5, np.log1p(-np.minimum(p, 0.5)), near_one)
            reach = np.exp(ctx.within_segment_cumsum(log_stay, exclusive=True))  # prod of (1 - p_j), j < i
            terms = p * reach / ctx.position
        return ctx.per_query_sum(terms)

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        scale = grade_scale(self, self.max_grade, policies, q.max_grade, q.top_ranked_grade)
        if scale <= 0:
            return 0.0
        stay = 1.0
        total = 0.0
        for i, g in enumerate(q.grades[: self.cutoff], start=1):
            p, rest = _err_stop(g, scale)
            total += stay * p / i
            stay *= rest
        return total

    def explain(self, q: RankedQuery, policies: Policies) -> Explanation:
        scale = grade_scale(self, self.max_grade, policies, q.max_grade, q.top_ranked_grade)
        steps = []
        stay = 1.0
        total = 0.0
        for i, (doc, g) in enumerate(zip(q.doc_ids, q.grades, strict=True), start=1):
            if self.cutoff is not None and i > self.cutoff:
                break
            p, rest = _err_stop(g, scale) if scale > 0 else (0.0, 1.0)
            contrib = stay * p / i
            total += contrib
            steps.append(Step(i, doc, g, p, stay / i, contrib, total))
            stay *= rest
        return Explanation(str(self), q.query_id, tuple(steps), (), total, 1.0, total,
                           f"sum of p_i * prod(1 - p_j, j < i) / i, p = (2^g - 1) / 2^{format(scale, 'g')}",
                           ("p(stop)", "reach/rank", "contribution"))


def _err_stop(grade: float | None, scale: float) -> tuple[float, float]:
    """ERR's ``(p, 1 - p)`` for one grade on a scale topped by ``scale`` (see ERR: 1 - p without cancellation)."""
    if grade is None or math.isnan(grade) or grade <= 0:
        return 0.0, 1.0
    p = exponential_gain_value(float(grade), scale)
    if p <= 0.5:
        return p, 1.0 - p
    return p, -math.expm1(-(scale - grade) * _LN2) + 2.0 ** -scale


def _rbp_gains_array(ctx: Context, rel: Level | None, grades: np.ndarray | None = None,
                     segment: np.ndarray | None = None) -> np.ndarray:
    """trec_eval's RBP gains: grade / (largest judged grade of the query) when that exceeds 1, else grade."""
    grades = ctx.jr.grades if grades is None else grades
    segment = ctx.segment if segment is None else segment
    if rel is not None:
        return (grades >= level_value(rel)).astype(np.float64)
    qmax = np.zeros(ctx.nq)
    jg = ctx.jr.judged_grades
    if len(jg):
        np.maximum.at(qmax, ctx.jr.judged_segment, jg)
    scale = np.where(qmax > 1.0, qmax, 1.0)[segment]
    return np.where(grades > 0, grades, 0.0) / scale


def _rbp_gains_ref(q: RankedQuery, rel: Level | None, grades: tuple[float | None, ...] | None = None) -> list[float]:
    grades = q.grades if grades is None else grades
    if rel is not None:
        return [1.0 if is_relevant(g, level_value(rel)) else 0.0 for g in grades]
    qmax = max(q.judged, default=0.0)
    scale = qmax if qmax > 1.0 else 1.0
    return [(g / scale) if g is not None and not math.isnan(g) and g > 0 else 0.0 for g in grades]


@register
@dataclass(frozen=True, repr=False)
class RBP(Metric):
    """Rank-biased precision: the expected rate of gain of a user who goes on to the next document with
    probability p.

    Formula: ``RBP = (1 - p) * sum_i gain_i * p^(i-1)``. Always defined.

    Conventions: ``p`` defaults to 0.9 (trec_eval; ir_measures and trectools use 0.8). With ``rel`` set,
    gains are binary (grade >= rel). Without it gains are graded, divided by the query's largest judged
    grade when that exceeds 1, so that they lie in [0, 1] (trec_eval 10; trec_eval reads uninitialised
    memory in that step, gainscope does not; ranx uses raw grades and can exceed 1).
    Reference: Moffat & Zobel, "Rank-Biased Precision for Measurement of Retrieval Effectiveness",
    ACM TOIS 27(1), 2008. trec_eval name: ``rbp``.
    """

    name: ClassVar[str] = "RBP"
    summary: ClassVar[str] = "rank-biased precision with persistence p"
    linear_in_gains: ClassVar[bool] = True

    p: float = param(0.9, kind="float", gt=0, le=1 - 1e-12, doc="persistence: probability of going on")
    rel: float | str | None = rel_param("binary gains (grade >= rel); None = graded")

    def compute(self, ctx: Context) -> np.ndarray:
        return (1.0 - self.p) * ctx.linear_sum(
            ("rbp", self.rel), lambda g, q: _rbp_gains_array(ctx, self.rel, g, q), ("geometric", self.p))

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        gains = tie_averaged(_rbp_gains_ref(q, self.rel), q.tie_start, _rbp_gains_ref(q, self.rel, q.tail))
        return (1.0 - self.p) * sum(g * self.p ** i for i, g in enumerate(gains))

    def explain(self, q: RankedQuery, policies: Policies) -> Explanation:
        steps = []
        total = 0.0
        gains = tie_averaged(_rbp_gains_ref(q, self.rel), q.tie_start, _rbp_gains_ref(q, self.rel, q.tail))
        for i, (doc, g, gain) in enumerate(zip(q.doc_ids, q.grades, gains, strict=True), start=1):
            w = (1.0 - self.p) * self.p ** (i - 1)
            total += gain * w
            steps.append(Step(i, doc, g, gain, w, gain * w, total))
        return Explanation(str(self), q.query_id, tuple(steps), (), total, 1.0, total,
                           f"sum of gain * (1 - p) * p^(rank - 1), p = {self.p}",
                           ("gain", "(1-p)p^(i-1)", "contribution"))


@register
@dataclass(frozen=True, repr=False)
class RBPResidual(Metric):
    """The residual of RBP: how much RBP could still rise if every unjudged document had full gain.

    Formula (trec_eval ``rbp_resid``): when the ranking holds unjudged documents (absent from the
    judgments, or negative grade), ``p^n + (1 - p) * sum_{unjudged i} p^(i-1)`` for a ranking of n
    documents; 0 when every ranked document is judged (trec_eval's convention, which leaves out the p^n
    tail in that case).
    Reference: Moffat & Zobel 2008; trec_eval 10 ``m_rbp_resid.c``. trec_eval name: ``rbp_resid``.
    """

    name: ClassVar[str] = "RBPResid"
    summary: ClassVar[str] = "upper bound on what unjudged documents could add to RBP"

    p: float = param(0.9, kind="float", gt=0, le=1 - 1e-12, doc="persistence: probability of going on")

    def compute(self, ctx: Context) -> np.ndarray:
        # trec_eval's arithmetic, to the last bit: p^(i-1) as running products, summed over the unjudged ranks
        # in rank order. A sparse run holds only judged positions, so the sum runs over every rank with the
        # judged ones set to 0.0 (adding 0.0 changes no bit), a chunk of queries at a time.
        jr = ctx.jr
        n = ctx.lengths
        judged = ctx.judged
        unjudged = n - ctx.per_query_sum(judged.astype(np.float64))
        powers = ctx.powers(self.p, int(n.max(initial=0)))
        total = np.zeros(ctx.nq)
        todo = np.flatnonzero(unjudged > 0)
        judged_at = jr.rank[judged] - 1          # 0-based ranks of the judged positions ...
        judged_query = ctx.segment[judged]       # ... and their queries
        for chunk in np.array_split(todo, max(1, int(n[todo].sum()) // (1 << 21) + 1)):
            if not len(chunk):
                continue
            lengths = n[chunk]
            starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
            rank0 = np.arange(int(lengths.sum())) - np.repeat(starts, lengths)
            weights = powers[rank0]
            where = np.full(ctx.nq, -1)
            where[chunk] = np.arange(len(chunk))
            mine = where[judged_query] >= 0
            weights[starts[where[judged_query[mine]]] + judged_at[mine]] = 0.0
            total[chunk] = np.bincount(np.repeat(np.arange(len(chunk)), lengths), weights=weights,
                                       minlength=len(chunk))
        return np.where(unjudged > 0, powers[n] + (1.0 - self.p) * total, 0.0)

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        unj = [i for i, g in enumerate(q.grades) if g is None or math.isnan(g) or g < 0]
        if not unj:
            return 0.0
        return self.p ** len(q.grades) + (1.0 - self.p) * sum(self.p ** i for i in unj)


# ---------------------------------------------------------------------------------------------------------
# trec_eval's experimental gain measures (Buckley): G, ndcg_rel, Rndcg. They use the per-level gains of
# trec_eval's ``setup_gains``: every grade from 0 to the query's largest judged grade has gain = grade unless
# the map says otherwise; the ideal walks levels from the highest gain down while the gain is positive.


def _levels(judged: list[float], gain: Any, shift: float = 0.0) -> list[tuple[float, int]]:
    """(gain, count) of each judged grade level with positive gain, highest gain first (exponential gains
    divided by 2^shift)."""
    counts: dict[float, int] = {}
    for g in judged:
        counts[g] = counts.get(g, 0) + 1
    if isinstance(gain, GainMap):
        for grade in gain.as_dict():
            counts.setdefault(grade, 0)
    out = [(gain_value(level, gain, shift=shift), n) for level, n in counts.items()]
    return sorted((x for x in out if x[0] > 0 and x[1] > 0), key=lambda t: -t[0])


def _ideal_sequence(judged: list[float], gain: Any, shift: float = 0.0) -> list[float]:
    return [gv for gv, n in _levels(judged, gain, shift) for _ in range(n)]


@register
@dataclass(frozen=True, repr=False)
class G(Metric):
    """G: trec_eval's experimental cumulative-gain measure with a cost-based discount (Buckley).

    For rank i (1-based) let ``S_i`` be the sum of the run's gains up to i and ``C_i`` the sum over
    positions j <= i of max(ideal gain at j, 1). Then ``G = (sum_{i: gain_i != 0} gain_i / log2(2 + C_i -
    S_i)) / (sum of all ideal gains)``. Undefined when there is no positive gain.

    ``C_i - S_i`` is a difference of two sums of gains, and the 2 added to it only counts when it is held to
    the unit: float64 holds every integer sum below 2^53, so a query whose ideal gains add up to 2^52 or more
    (exponential gain from grade 52 on) is an error (MetricError) rather than a value that rounding has
    decided (trec_eval computes the same doubles). G is not a ratio (the 2 and the 1 do not scale), so
    its gains are never shifted as nDCG's are.
    Reference: trec_eval ``m_G.c``. trec_eval name: ``G``.
    """

    name: ClassVar[str] = "G"
    summary: ClassVar[str] = "trec_eval's gain measure with a cost-based discount"

    gain: Any = param("linear", kind="gain", choices=("linear", "exponential"), doc=_GAIN_DOC)

    def compute(self, ctx: Context) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            gains = _ranked_gains(ctx, self.gain, None)
            ideal, offsets = _ideal_gains(ctx, self.gain, None)
            ideal_total = np.bincount(np.repeat(np.arange(ctx.nq), np.diff(offsets)), weights=ideal,
                                      minlength=ctx.nq)
        self._require_exact(ctx.jr.query_ids, ideal_total)
        ilen = np.diff(offsets)
        # cost up to rank i: sum over ideal positions j <= i of max(ideal_j, 1), plus 1 per position past it
        icost = segmented_cumsum(np.maximum(ideal, 1.0), offsets)
        rank = ctx.position
        within = np.minimum(rank, ilen[ctx.segment])
        first = offsets[:-1][ctx.segment]
        cost = np.where(within > 0, icost[np.maximum(first + within - 1, 0)] if len(icost) else 0.0, 0.0) \
            + np.maximum(rank - ilen[ctx.segment], 0)
        got = ctx.within_segment_cumsum(gains)
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(gains != 0, gains / np.log2(2.0 + cost - got), 0.0)
        return ratio(ctx.per_query_sum(terms), ideal_total)

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        ideal = _ideal_sequence(list(q.judged), self.gain)
        self._require_exact((q.query_id,), np.array([sum(ideal)]))
        if not ideal:
            return math.nan
        cost = got = total = 0.0
        for i, g in enumerate(q.grades):
            gv = gain_value(g, self.gain)
            got += gv
            cost += max(ideal[i] if i < len(ideal) else 0.0, 1.0)
            if gv != 0:
                total += gv / math.log2(2 + cost - got)
        return total / sum(ideal)

    def _require_exact(self, query_ids: Any, ideal_total: np.ndarray) -> None:
        bad = np.flatnonzero(~(ideal_total < 2.0 ** 52))
        if len(bad):
            raise MetricError(
                f"{self} of query {query_ids[int(bad[0])]!r} cannot be computed: its ideal gains add up to 2^52 or "
                "more, where float64 no longer holds the cost-minus-gain differences that G takes the log of "
                "to the unit; use gain=linear or a {grade: gain} map with smaller gains.")


@register
@dataclass(frozen=True, repr=False)
class NDCGRel(Metric):
    """ndcg_rel: trec_eval's nDCG averaged over the ranks of the relevant retrieved documents (Buckley).

    At each retrieved document with positive gain, take ``DCG@i / IDCG@i`` (the ideal stops growing after
    its last positive gain); add ``(P - P_ret) * DCG / IDCG`` over the whole ranking for the P - P_ret
    documents with positive gain that were not retrieved; divide by P, the number of documents with
    positive gain. Undefined without positive gains. A mean of ratios: exponential gains are shifted as
    nDCG's, so any grade scale gives its value.
    Reference: trec_eval ``m_ndcg_rel.c``. trec_eval name: ``ndcg_rel``.
    """

    name: ClassVar[str] = "ndcg_rel"
    summary: ClassVar[str] = "nDCG averaged over the relevant documents' ranks"

    gain: Any = param("linear", kind="gain", choices=("linear", "exponential"), doc=_GAIN_DOC)

    def compute(self, ctx: Context) -> np.ndarray:
        gains = _ranked_gains(ctx, self.gain, None, "judged")
        ideal, offsets = _ideal_gains(ctx, self.gain, None, "judged")
        ilen = np.diff(offsets)
        # ideal DCG up to each ranked position (constant after the ideal list ends)
        ipos = np.arange(1, len(ideal) + 1) - np.repeat(offsets[:-1], ilen)
        icum = segmented_cumsum(_discounted(ideal, ipos), offsets)
        upto = np.minimum(ctx.position, ilen[ctx.segment])
        ideal_at = np.where(upto > 0, icum[np.maximum(offsets[:-1][ctx.segment] + upto - 1, 0)], 0.0) \
            if len(icum) else np.zeros(len(upto))
        dcg_at = ctx.within_segment_cumsum(_discounted(gains, ctx.position))
        hit = gains > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(hit, dcg_at / ideal_at, 0.0)
        total = ctx.per_query_sum(terms)
        found = ctx.per_query_sum(hit.astype(np.float64))
        dcg = ctx.per_query_sum(_discounted(gains, ctx.position))
        idcg = np.bincount(np.repeat(np.arange(ctx.nq), ilen), weights=_discounted(ideal, ipos), minlength=ctx.nq)
        out = np.full(ctx.nq, np.nan)
        ok = (ilen > 0) & (idcg > 0)
        out[ok] = (total[ok] + (ilen[ok] - found[ok]) * dcg[ok] / idcg[ok]) / ilen[ok]
        return out

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        shift = _ref_shift(self.gain, q.judged)
        ideal = _ideal_sequence(list(q.judged), self.gain, shift)
        if not ideal:
            return math.nan
        dcg = total = 0.0
        found = 0
        for i, g in enumerate(q.grades, start=1):
            gv = gain_value(g, self.gain, shift=shift)
            dcg += gv / math.log2(i + 1)
            if gv > 0:
                total += dcg / _ref_dcg(ideal, i)
                found += 1
        total += (len(ideal) - found) * dcg / _ref_dcg(ideal, None)
        return total / len(ideal)


@register
@dataclass(frozen=True, repr=False)
class Rndcg(Metric):
    """Rndcg: trec_eval's nDCG averaged over the ranks where the ideal gain changes level (Buckley).

    With b_1 < b_2 < ... the ideal positions where one gain level ends (the last is the number P of
    documents with positive gain), the value is the mean of ``DCG@min(b, n) / IDCG@b`` over those
    boundaries, plus ``DCG@n / IDCG@P`` when the ranking holds more than P + 1 documents (n retrieved;
    trec_eval's loop consumes position P + 1 without counting it, and gainscope reproduces that).
    Undefined when the query has no relevant document; 0 when it has relevant documents but no positive
    gain (``-l 0`` with only grade-0 judgments, or a map giving no gain), where trec_eval divides 0 by 0 and
    prints ``-nan`` (as ``--format trec_eval`` does). A mean of ratios: exponential gains are shifted as
    nDCG's, so any grade scale gives its value.
    Reference: trec_eval ``m_Rndcg.c``. trec_eval name: ``Rndcg``.
    """

    name: ClassVar[str] = "Rndcg"
    summary: ClassVar[str] = "nDCG averaged at the ideal ranking's level boundaries"
    uses_relevance_level: ClassVar[bool] = True

    gain: Any = param("linear", kind="gain", choices=("linear", "exponential"), doc=_GAIN_DOC)

    def compute(self, ctx: Context) -> np.ndarray:
        # a loop per query (not per document): boundaries are few, sums are read off cumulative arrays
        out = np.full(ctx.nq, np.nan)
        gains = _ranked_gains(ctx, self.gain, None, "judged")
        dcg_cum = ctx.within_segment_cumsum(_discounted(gains, ctx.position))
        r = ctx.num_rel(self.level(ctx.policies))
        jr = ctx.jr
        shifts = _shifts(ctx, self.gain, "judged")
        for qi in np.flatnonzero(r > 0).tolist():
            judged = jr.judged_grades[jr.judged_slice(qi)].tolist()
            sl = jr.query_slice(qi)
            ranks, cum = jr.rank[sl], dcg_cum[sl]

            def dcg_at(k: int, ranks: np.ndarray = ranks, cum: np.ndarray = cum) -> float:
                i = int(np.searchsorted(ranks, k, side="right"))
                return float(cum[i - 1]) if i > 0 else 0.0
            out[qi] = _rndcg(judged, self.gain, dcg_at, int(jr.num_ret[qi]),
                             float(shifts[qi]) if shifts is not None else 0.0)
        return out

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        level = self.level(policies)
        if not any(g >= level for g in q.judged):
            return math.nan
        shift = _ref_shift(self.gain, q.judged)
        gains = [gain_value(g, self.gain, shift=shift) for g in q.grades]
        return _rndcg(list(q.judged), self.gain, lambda k: _ref_dcg(gains, k), len(gains), shift)


def _rndcg(judged: list[float], gain: Any, dcg_at: Any, n: int, shift: float = 0.0) -> float:
    levels = _levels(judged, gain, shift)
    ideal = [gv for gv, c in levels for _ in range(c)]
    if not ideal:
        return 0.0
    idcg_prefix = np.concatenate(([0.0], np.cumsum(np.array(ideal) / np.log2(np.arange(2, len(ideal) + 2)))))
    bounds: list[int] = []
    pos = 0
    for k, (gv, c) in enumerate(levels):
        pos += c
        nxt = levels[k + 1][0] if k + 1 < len(levels) else 0.0
        if nxt != gv:
            bounds.append(pos)
    total = 0.0
    count = 0
    for b in bounds:
        total += dcg_at(min(b, n)) / idcg_prefix[b]
        count += 1
    if n > len(ideal) + 1:  # trec_eval's loop has already consumed position P + 1 when it gets here
        total += dcg_at(n) / idcg_prefix[len(ideal)]
        count += 1
    return total / count
