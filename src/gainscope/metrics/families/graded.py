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
from gainscope.metrics.gains import gain_array, gain_value
from gainscope.metrics.registry import register

__all__ = ["CG", "DCG", "ERR", "NDCG", "RBP", "G", "NDCGRel", "RBPResidual", "Rndcg"]

_GAIN_DOC = ("'linear' (gain = grade), 'exponential' (2^grade - 1), or a {grade: gain} map (other grades "
             "keep gain = grade, as trec_eval's ndcg.GRADE=GAIN)")
_GRADED_REL = "grades below this threshold get gain 0 (ranx -l); None = every positive grade counts"


def _discounted(gains: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """``gain / log2(rank + 1)``, divided (not multiplied by a reciprocal) so that values are bit-identical
    to trec_eval's."""
    return gains / np.log2(pos + 1.0)


def _gain_key(gain: Any, rel: Level | None) -> tuple[Any, Level | None]:
    return (gain, rel)


def _ranked_gains(ctx: Context, gain: Any, rel: Level | None) -> np.ndarray:
    return ctx.cached(("gains", gain, rel), lambda: gain_array(ctx.jr.grades, gain, rel))


def _dcg_to(ctx: Context, gain: Any, rel: Level | None, cutoff: int | None) -> np.ndarray:
    return ctx.linear_sum(("gain", gain, rel), lambda g, q: gain_array(g, gain, rel), "log2", cutoff)


Depth = int | np.ndarray | None  # one cutoff for every query, one per query, or none


def _within(pos: np.ndarray, seg: np.ndarray, depth: Depth) -> np.ndarray:
    """Ideal positions kept by ``depth`` (a cutoff, one cutoff per query, or None for all)."""
    if depth is None:
        return np.ones(len(pos), dtype=bool)
    if isinstance(depth, np.ndarray):
        return pos <= depth[seg]
    return pos <= depth


def _ideal_dcg_judged(ctx: Context, gain: Any, rel: Level | None, depth: Depth) -> np.ndarray:
    ideal, offsets = ctx.ideal_gains(_gain_key(gain, rel), lambda g: gain_array(g, gain, rel))
    lengths = np.diff(offsets)
    seg = np.repeat(np.arange(ctx.nq), lengths)
    pos = np.arange(1, len(ideal) + 1) - np.repeat(offsets[:-1], lengths)
    keep = _within(pos, seg, depth)
    return np.bincount(seg[keep], weights=_discounted(ideal, pos)[keep], minlength=ctx.nq)


def _ideal_dcg_retrieved(ctx: Context, gain: Any, rel: Level | None, depth: Depth) -> np.ndarray:
    g = _ranked_gains(ctx, gain, rel)
    keep = g > 0  # the retrieved documents' positive gains, sorted descending: positions 1, 2, ...
    seg = ctx.segment[keep]
    order = np.lexsort((-g[keep], seg))
    sorted_gains, seg = g[keep][order], seg[order]
    counts = np.bincount(seg, minlength=ctx.nq)
    pos = np.arange(1, len(seg) + 1) - np.repeat(np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
    mask = _within(pos, seg, depth)
    return np.bincount(seg[mask], weights=_discounted(sorted_gains, pos)[mask], minlength=ctx.nq)


def _ref_gains(q: RankedQuery, gain: Any, rel: Level | None) -> list[float]:
    return tie_averaged([gain_value(g, gain, rel) for g in q.grades], q.tie_start,
                        [gain_value(g, gain, rel) for g in q.tail])


def _ref_dcg(gains: list[float], cutoff: int | None) -> float:
    return float(sum(g / math.log2(i + 1) for i, g in enumerate(gains[:cutoff], start=1) if g != 0))


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
        return ctx.linear_sum(("gain", self.gain, self.rel), lambda g, q: gain_array(g, self.gain, self.rel),
                              self.weight, self.cutoff)

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        gains = _ref_gains(q, self.gain, self.rel)
        return _ref_dcg(gains, self.cutoff) if self.weight == "log2" else float(sum(gains[: self.cutoff]))

    def explain(self, q: RankedQuery, policies: Policies) -> Explanation:
        steps = _gain_steps(q, _ref_gains(q, self.gain, self.rel), self.cutoff, discounted=self.weight == "log2")
        total = steps[-1].total if steps else 0.0
        return Explanation(str(self), q.query_id, tuple(steps), (), total, 1.0, total,
                           "sum of gain / log2(rank + 1)" if self.weight == "log2" else "sum of gains")


@register
@dataclass(frozen=True, repr=False)
class CG(_GainSum):
    """Cumulative gain: the gains of the first k documents added up, without discount.

    Formula: ``CG@k = sum_{i<=k} gain(grade_i)``. Not normalised (no upper bound); a document that is not
    judged adds 0.

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

    Formula: ``DCG@k = sum_{i<=k} gain(grade_i) / log2(i + 1)``. Not normalised (no upper bound).
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
        dcg = _dcg_to(ctx, self.gain, self.rel, self.cutoff)
        if self.ideal == "judged":
            idcg = _ideal_dcg_judged(ctx, self.gain, self.rel, self._depth(ctx))
        else:
            idcg = _ideal_dcg_retrieved(ctx, self.gain, self.rel, self._depth(ctx))
        return ratio(dcg, idcg)

    def _ideal_gains(self, q: RankedQuery) -> list[float]:
        source = q.judged if self.ideal == "judged" else [g for g in q.grades]
        gains = sorted((gain_value(g, self.gain, self.rel) for g in source), reverse=True)
        return [g for g in gains if g > 0]

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        idcg = _ref_dcg(self._ideal_gains(q), self._ref_depth(q))
        if idcg <= 0:
            return math.nan
        return _ref_dcg(_ref_gains(q, self.gain, self.rel), self.cutoff) / idcg

    def explain(self, q: RankedQuery, policies: Policies) -> Explanation:
        run = _gain_steps(q, _ref_gains(q, self.gain, self.rel), self.cutoff)
        docs: tuple[str, ...]
        grades: tuple[float | None, ...]
        if self.ideal == "judged":
            docs, grades = q.judged_doc_ids or tuple("?" for _ in q.judged), q.judged
        else:
            docs, grades = q.doc_ids, q.grades
        ranked = sorted(((gain_value(g, self.gain, self.rel), d, g) for d, g in zip(docs, grades, strict=True)),
                        key=lambda t: -t[0])
        ranked = [t for t in ranked if t[0] > 0]
        depth = self._ref_depth(q)
        ideal = _gain_steps(q, [t[0] for t in ranked], depth, doc_ids=tuple(t[1] for t in ranked),
                            grades=tuple(t[2] for t in ranked))
        dcg = run[-1].total if run else 0.0
        idcg = ideal[-1].total if ideal else 0.0
        cut = {"k": "" if self.cutoff is None else f", cut at k = {self.cutoff}",
               "all": ", not cut", "retrieved": f", cut at min(k, retrieved) = {depth}"}[self.ideal_depth]
        notes = (f"gain={self.gain if isinstance(self.gain, str) else 'map'}; ideal from "
                 + ("all judged documents" if self.ideal == "judged" else "the retrieved documents") + cut,)
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
        p = (np.exp2(positive) - 1.0) / (2.0 ** scale)
        if self.cutoff is not None:
            p = np.where(ctx.position <= self.cutoff, p, 0.0)
        # exclusive running product of (1 - p) within each query, via logs (p < 1 always)
        log_stay = np.log1p(-p)
        running = ctx.within_segment_cumsum(log_stay) - log_stay
        terms = p * np.exp(running) / ctx.position
        return ctx.per_query_sum(terms)

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        scale = grade_scale(self, self.max_grade, policies, q.max_grade, q.top_ranked_grade)
        if scale <= 0:
            return 0.0
        stay = 1.0
        total = 0.0
        for i, g in enumerate(q.grades[: self.cutoff], start=1):
            p = (2.0 ** g - 1.0) / 2.0 ** scale if g is not None and not math.isnan(g) and g > 0 else 0.0
            total += stay * p / i
            stay *= 1.0 - p
        return total

    def explain(self, q: RankedQuery, policies: Policies) -> Explanation:
        scale = grade_scale(self, self.max_grade, policies, q.max_grade, q.top_ranked_grade)
        steps = []
        stay = 1.0
        total = 0.0
        for i, (doc, g) in enumerate(zip(q.doc_ids, q.grades, strict=True), start=1):
            if self.cutoff is not None and i > self.cutoff:
                break
            p = (2.0 ** g - 1.0) / 2.0 ** scale if scale > 0 and g is not None and not math.isnan(g) and g > 0 else 0.0
            contrib = stay * p / i
            total += contrib
            steps.append(Step(i, doc, g, p, stay / i, contrib, total))
            stay *= 1.0 - p
        return Explanation(str(self), q.query_id, tuple(steps), (), total, 1.0, total,
                           f"sum of p_i * prod(1 - p_j, j < i) / i, p = (2^g - 1) / 2^{format(scale, 'g')}",
                           ("p(stop)", "reach/rank", "contribution"))


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
        # unjudged positions = all n positions minus the judged ones (a sparse run only holds those)
        judged = ctx.judged
        weights = self.p ** (ctx.position - 1).astype(np.float64)
        judged_weight = ctx.per_query_sum(np.where(judged, weights, 0.0))
        n = ctx.lengths.astype(np.float64)
        unjudged = n - ctx.per_query_sum(judged.astype(np.float64))
        tail = self.p ** n
        all_weight = (1.0 - tail) / (1.0 - self.p)
        return np.where(unjudged > 0, tail + (1.0 - self.p) * (all_weight - judged_weight), 0.0)

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        unj = [i for i, g in enumerate(q.grades) if g is None or math.isnan(g) or g < 0]
        if not unj:
            return 0.0
        return self.p ** len(q.grades) + (1.0 - self.p) * sum(self.p ** i for i in unj)


# ---------------------------------------------------------------------------------------------------------
# trec_eval's experimental gain measures (Buckley): G, ndcg_rel, Rndcg. They use the per-level gains of
# trec_eval's ``setup_gains``: every grade from 0 to the query's largest judged grade has gain = grade unless
# the map says otherwise; the ideal walks levels from the highest gain down while the gain is positive.


def _levels(judged: list[float], gain: Any) -> list[tuple[float, int]]:
    """(gain, count) of each judged grade level with positive gain, highest gain first."""
    counts: dict[float, int] = {}
    for g in judged:
        counts[g] = counts.get(g, 0) + 1
    if isinstance(gain, GainMap):
        for grade in gain.as_dict():
            counts.setdefault(grade, 0)
    out = [(gain_value(level, gain), n) for level, n in counts.items()]
    return sorted((x for x in out if x[0] > 0 and x[1] > 0), key=lambda t: -t[0])


def _ideal_sequence(judged: list[float], gain: Any) -> list[float]:
    return [gv for gv, n in _levels(judged, gain) for _ in range(n)]


@register
@dataclass(frozen=True, repr=False)
class G(Metric):
    """G: trec_eval's experimental cumulative-gain measure with a cost-based discount (Buckley).

    For rank i (1-based) let ``S_i`` be the sum of the run's gains up to i and ``C_i`` the sum over
    positions j <= i of max(ideal gain at j, 1). Then ``G = (sum_{i: gain_i != 0} gain_i / log2(2 + C_i -
    S_i)) / (sum of all ideal gains)``. Undefined when there is no positive gain.
    Reference: trec_eval ``m_G.c``. trec_eval name: ``G``.
    """

    name: ClassVar[str] = "G"
    summary: ClassVar[str] = "trec_eval's gain measure with a cost-based discount"

    gain: Any = param("linear", kind="gain", choices=("linear", "exponential"), doc=_GAIN_DOC)

    def compute(self, ctx: Context) -> np.ndarray:
        gains = _ranked_gains(ctx, self.gain, None)
        ideal, offsets = ctx.ideal_gains(_gain_key(self.gain, None), lambda g: gain_array(g, self.gain))
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
        ideal_total = np.bincount(np.repeat(np.arange(ctx.nq), np.diff(offsets)), weights=ideal, minlength=ctx.nq)
        return ratio(ctx.per_query_sum(terms), ideal_total)

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        ideal = _ideal_sequence(list(q.judged), self.gain)
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


@register
@dataclass(frozen=True, repr=False)
class NDCGRel(Metric):
    """ndcg_rel: trec_eval's nDCG averaged over the ranks of the relevant retrieved documents (Buckley).

    At each retrieved document with positive gain, take ``DCG@i / IDCG@i`` (the ideal stops growing after
    its last positive gain); add ``(P - P_ret) * DCG / IDCG`` over the whole ranking for the P - P_ret
    documents with positive gain that were not retrieved; divide by P, the number of documents with
    positive gain. Undefined without positive gains.
    Reference: trec_eval ``m_ndcg_rel.c``. trec_eval name: ``ndcg_rel``.
    """

    name: ClassVar[str] = "ndcg_rel"
    summary: ClassVar[str] = "nDCG averaged over the relevant documents' ranks"

    gain: Any = param("linear", kind="gain", choices=("linear", "exponential"), doc=_GAIN_DOC)

    def compute(self, ctx: Context) -> np.ndarray:
        gains = _ranked_gains(ctx, self.gain, None)
        ideal, offsets = ctx.ideal_gains(_gain_key(self.gain, None), lambda g: gain_array(g, self.gain))
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
        ideal = _ideal_sequence(list(q.judged), self.gain)
        if not ideal:
            return math.nan
        dcg = total = 0.0
        found = 0
        for i, g in enumerate(q.grades, start=1):
            gv = gain_value(g, self.gain)
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
    Undefined when the query has no relevant document.
    Reference: trec_eval ``m_Rndcg.c``. trec_eval name: ``Rndcg``.
    """

    name: ClassVar[str] = "Rndcg"
    summary: ClassVar[str] = "nDCG averaged at the ideal ranking's level boundaries"
    uses_relevance_level: ClassVar[bool] = True

    gain: Any = param("linear", kind="gain", choices=("linear", "exponential"), doc=_GAIN_DOC)

    def compute(self, ctx: Context) -> np.ndarray:
        # a loop per query (not per document): boundaries are few, sums are read off cumulative arrays
        out = np.full(ctx.nq, np.nan)
        gains = _ranked_gains(ctx, self.gain, None)
        dcg_cum = ctx.within_segment_cumsum(_discounted(gains, ctx.position))
        r = ctx.num_rel(self.level(ctx.policies))
        jr = ctx.jr
        for qi in np.flatnonzero(r > 0).tolist():
            judged = jr.judged_grades[jr.judged_slice(qi)].tolist()
            sl = jr.query_slice(qi)
            ranks, cum = jr.rank[sl], dcg_cum[sl]

            def dcg_at(k: int, ranks: np.ndarray = ranks, cum: np.ndarray = cum) -> float:
                i = int(np.searchsorted(ranks, k, side="right"))
                return float(cum[i - 1]) if i > 0 else 0.0
            out[qi] = _rndcg(judged, self.gain, dcg_at, int(jr.num_ret[qi]))
        return out

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        level = self.level(policies)
        if not any(g >= level for g in q.judged):
            return math.nan
        gains = [gain_value(g, self.gain) for g in q.grades]
        return _rndcg(list(q.judged), self.gain, lambda k: _ref_dcg(gains, k), len(gains))


def _rndcg(judged: list[float], gain: Any, dcg_at: Any, n: int) -> float:
    levels = _levels(judged, gain)
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
