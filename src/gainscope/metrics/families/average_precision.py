"""Metrics that look at where each relevant document sits: AP (and its geometric mean), RR, bpref,
infAP and binG.

Notation: ``rel_i`` is 1 when the document at rank i reaches the relevance threshold, ``R`` the number of
judged relevant documents of the query, ``N`` the number of judged non-relevant ones (grade >= 0 and below
the threshold). Unjudged documents (absent from the judgments, or with a negative grade) are non-relevant
for AP and RR and are skipped by bpref and infAP, as in trec_eval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from gainscope.core.policies import Policies
from gainscope.metrics.base import Explanation, Metric, RankedQuery, Step, param, rel_param
from gainscope.metrics.base import is_relevant as _rel
from gainscope.metrics.context import Context, ratio
from gainscope.metrics.registry import register

__all__ = ["AP", "GMAP", "RR", "BinG", "Bpref", "GMBpref", "InfAP"]

#: trec_eval's INFAP_EPSILON
INFAP_EPSILON = 1e-5


def _nonrel_judged(g: float | None, level: float) -> bool:
    return g is not None and not math.isnan(g) and 0 <= g < level


def _ap_terms(ctx: Context, level: float, cutoff: int | None) -> tuple[np.ndarray, np.ndarray]:
    """The precision term ``(sum_{j<=i} rel_j) / i`` of each relevant document within the cutoff, and its query.

    Only the relevant positions are visited: a position's running count of relevant documents is its number among
    all relevant positions less those of the queries before its own (ranks ascend within a query, so the cutoff
    drops no position before a kept one). The other positions' terms are 0 and add nothing to a query's sum, so
    the sums equal those over every position to the last bit."""
    rel = ctx.relevant(level)
    if cutoff is not None and cutoff < ctx.top_rank:
        rel = rel & (ctx.position <= cutoff)
    segment, rank = ctx.segment[rel], ctx.position[rel]  # a mask, not an array of their indexes
    before = np.zeros(ctx.nq, dtype=np.int64)
    np.cumsum(np.bincount(segment, minlength=ctx.nq)[:-1], out=before[1:])
    # the counts as floats, made in place (W200k: 2 million relevant positions, three arrays fewer at once); exact
    # integers below 2**53, so the terms are those of the int64 counts divided by the ranks
    terms = np.arange(1, len(segment) + 1, dtype=np.float64)
    terms -= before[segment]
    terms /= rank
    return terms, segment


@register
@dataclass(frozen=True, repr=False)
class AP(Metric):
    """Average precision: the mean, over the relevant documents, of the precision at their rank.

    Formula: ``AP@k = (1/R) * sum_{i<=k, rel_i} (sum_{j<=i} rel_j) / i``; relevant documents that are not
    retrieved in the first k contribute 0. Undefined when R = 0 (trec_eval reports 0).

    Conventions: ``denominator="judged"`` (the default) divides by R, every judged relevant document
    (trec_eval ``map`` and ``map_cut.k``, ranx, Quepid's ``AP@10`` whose R counts every rated document above
    0), not min(R, k) (Spark); ``denominator="retrieved"`` divides by the relevant documents found in the
    first k (torchmetrics, TempoEval's focus-time MAP), so one relevant document at rank 1 scores 1 however
    many were missed. Undefined when the denominator is 0.
    Reference: Buckley & Voorhees 2005 (see Rprec); trec_eval ``m_map.c``, ``m_map_cut.c``; Quepid's
    ``ap@10.js``. trec_eval names: ``map``, ``map_cut.k``.
    """

    name: ClassVar[str] = "AP"
    aliases: ClassVar[tuple[str, ...]] = ("MAP",)
    summary: ClassVar[str] = "mean precision at the ranks of the relevant documents"
    normalized: ClassVar[bool] = True
    uses_relevance_level: ClassVar[bool] = True

    cutoff: int | None = param(None, kind="int", ge=1, at=True, doc="rank depth k; None = whole ranking")
    rel: float | str | None = rel_param()
    denominator: str = param("judged", kind="choice", choices=("judged", "retrieved"),
                             doc="'judged': R, every judged relevant document (trec_eval, ranx, Quepid); "
                                 "'retrieved': the relevant documents in the first k (TempoEval, torchmetrics)")

    def compute(self, ctx: Context) -> np.ndarray:
        level = self.level(ctx.policies)
        terms, segment = _ap_terms(ctx, level, self.cutoff)
        total = np.bincount(segment, weights=terms, minlength=ctx.nq)
        if self.denominator == "retrieved":
            return ratio(total, np.bincount(segment, minlength=ctx.nq).astype(np.float64))
        return ratio(total, ctx.num_rel(level))

    def _denominator(self, q: RankedQuery, level: float) -> int:
        if self.denominator == "retrieved":
            return sum(1 for g in q.grades[: self.cutoff] if _rel(g, level))
        return sum(g >= level for g in q.judged)

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        level = self.level(policies)
        r = self._denominator(q, level)
        if r == 0:
            return math.nan
        found = 0
        total = 0.0
        for i, g in enumerate(q.grades[: self.cutoff], start=1):
            if _rel(g, level):
                found += 1
                total += found / i
        return total / r

    def explain(self, q: RankedQuery, policies: Policies) -> Explanation:
        level = self.level(policies)
        r = self._denominator(q, level)
        steps = []
        found = 0
        total = 0.0
        for i, (doc, g) in enumerate(zip(q.doc_ids, q.grades, strict=True), start=1):
            if self.cutoff is not None and i > self.cutoff:
                break
            hit = _rel(g, level)
            found += hit
            prec = found / i
            contrib = prec if hit else 0.0
            total += contrib
            steps.append(Step(i, doc, g, 1.0 if hit else 0.0, prec, contrib, total))
        return Explanation(str(self), q.query_id, tuple(steps), (), total, float(r),
                           total / r if r else math.nan, "sum of precision at relevant ranks / " + (
                               "R" if self.denominator == "judged" else "relevant found in the first k"),
                           ("relevant", "precision@i", "contribution"))


@register
@dataclass(frozen=True, repr=False)
class GMAP(AP):
    """Geometric mean average precision: AP per query, averaged over queries with a geometric mean.

    Formula: ``GMAP = exp(mean_q log(max(AP_q, 1e-5)))``; the floor keeps a zero from zeroing the mean
    (trec_eval's MIN_GEO_MEAN). Per-query values are plain AP. Rewards consistency across queries.
    Reference: Robertson, "On GMAP", CIKM 2006; trec_eval ``m_gm_map.c``. trec_eval name: ``gm_map``.
    """

    name: ClassVar[str] = "GMAP"
    aliases: ClassVar[tuple[str, ...]] = ()
    summary: ClassVar[str] = "AP averaged with a geometric mean (floor 1e-5)"
    aggregate: ClassVar[str] = "gmean"  # type: ignore[assignment]


@register
@dataclass(frozen=True, repr=False)
class RR(Metric):
    """Reciprocal rank of the first relevant document (0 when none is retrieved in the first k).

    Formula: ``RR@k = 1 / min{i <= k : rel_i}``; averaged over queries this is MRR. Always defined.

    Conventions: trec_eval's ``recip_rank`` has no cutoff (use ``RR`` here); ``RR@k`` is the MS MARCO
    style MRR@k. Ties follow the evaluation's ``ties`` policy for both (ir_measures uses a different tie
    order for RR@k than for RR; gainscope does not).
    Reference: Voorhees, "The TREC-8 Question Answering Track Report", 1999; trec_eval ``m_recip_rank.c``.
    trec_eval name: ``recip_rank``.
    """

    name: ClassVar[str] = "RR"
    aliases: ClassVar[tuple[str, ...]] = ("MRR",)
    summary: ClassVar[str] = "1 / rank of the first relevant document"
    uses_relevance_level: ClassVar[bool] = True

    cutoff: int | None = param(None, kind="int", ge=1, at=True, doc="rank depth k; None = whole ranking")
    rel: float | str | None = rel_param()

    def compute(self, ctx: Context) -> np.ndarray:
        rel = ctx.relevant(self.level(ctx.policies))
        pos = ctx.position
        if self.cutoff is not None:
            rel = rel & (pos <= self.cutoff)
        first = np.full(ctx.nq, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(first, ctx.segment[rel], pos[rel])
        out = np.zeros(ctx.nq)
        hit = first < np.iinfo(np.int64).max
        out[hit] = 1.0 / first[hit]
        return out

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        level = self.level(policies)
        for i, g in enumerate(q.grades[: self.cutoff], start=1):
            if _rel(g, level):
                return 1.0 / i
        return 0.0

    def explain(self, q: RankedQuery, policies: Policies) -> Explanation:
        level = self.level(policies)
        steps = []
        first = 0
        for i, (doc, g) in enumerate(zip(q.doc_ids, q.grades, strict=True), start=1):
            if self.cutoff is not None and i > self.cutoff:
                break
            hit = _rel(g, level)
            steps.append(Step(i, doc, g, 1.0 if hit else 0.0, 1.0 / i, 1.0 / i if hit else 0.0,
                              1.0 / i if hit else 0.0))
            if hit:
                first = i
                break
        return Explanation(str(self), q.query_id, tuple(steps), (), 1.0 if first else 0.0,
                           float(first) if first else 1.0, 1.0 / first if first else 0.0,
                           "1 / rank of the first relevant document (0 when none)",
                           ("relevant", "1/rank", "contribution"))


def _bpref_terms(ctx: Context, level: float) -> np.ndarray:
    rel = ctx.relevant(level)
    nonrel_before = ctx.within_segment_count(ctx.nonrelevant_judged(level))
    r = ctx.num_rel(level)[ctx.segment]
    n = ctx.num_nonrel(level)[ctx.segment]
    denom = np.minimum(n, r)
    with np.errstate(divide="ignore", invalid="ignore"):
        penalty = np.where(nonrel_before > 0, np.minimum(nonrel_before, r) / np.where(denom > 0, denom, 1), 0.0)
    return np.where(rel, 1.0 - penalty, 0.0)


def _bpref_reference(q: RankedQuery, level: float) -> float:
    r = sum(g >= level for g in q.judged)
    n = sum(g < level for g in q.judged)
    if r == 0:
        return math.nan
    nonrel = 0
    total = 0.0
    for g in q.grades:
        if _nonrel_judged(g, level):
            nonrel += 1
        elif _rel(g, level):
            total += 1.0 - min(nonrel, r) / min(n, r) if nonrel > 0 else 1.0
    return total / r


@register
@dataclass(frozen=True, repr=False)
class Bpref(Metric):
    """Binary preference: how often relevant documents are ranked above judged non-relevant ones.

    Formula: ``bpref = (1/R) * sum_{retrieved relevant d} (1 - min(|n ranked above d|, R) / min(N, R))``,
    where n ranges over judged non-relevant documents; a relevant document with none above it adds 1.
    Unjudged documents are skipped, so bpref is robust to incomplete judgments. Undefined when R = 0.
    Reference: Buckley & Voorhees, "Retrieval Evaluation with Incomplete Information", SIGIR 2004;
    trec_eval ``m_bpref.c``. trec_eval name: ``bpref``.
    """

    name: ClassVar[str] = "Bpref"
    aliases: ClassVar[tuple[str, ...]] = ("bpref",)
    summary: ClassVar[str] = "fraction of preferences relevant > judged non-relevant preserved"
    normalized: ClassVar[bool] = True
    uses_relevance_level: ClassVar[bool] = True

    rel: float | str | None = rel_param()

    def compute(self, ctx: Context) -> np.ndarray:
        level = self.level(ctx.policies)
        r = ctx.num_rel(level)
        return ratio(ctx.per_query_sum(_bpref_terms(ctx, level)), r)

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        return _bpref_reference(q, self.level(policies))

    def explain(self, q: RankedQuery, policies: Policies) -> Explanation:
        level = self.level(policies)
        r = sum(g >= level for g in q.judged)
        n = sum(g < level for g in q.judged)
        steps = []
        nonrel = 0
        total = 0.0
        for i, (doc, g) in enumerate(zip(q.doc_ids, q.grades, strict=True), start=1):
            if _nonrel_judged(g, level):
                nonrel += 1
                steps.append(Step(i, doc, g, 0.0, float(nonrel), 0.0, total))
            elif _rel(g, level):
                contrib = 1.0 - min(nonrel, r) / min(n, r) if nonrel > 0 else 1.0
                total += contrib
                steps.append(Step(i, doc, g, 1.0, float(nonrel), contrib, total))
        return Explanation(str(self), q.query_id, tuple(steps), (), total, float(r),
                           total / r if r else math.nan,
                           f"sum of (1 - min(nonrel above, R) / min(N, R)) / R, N = {n}",
                           ("relevant", "nonrel above", "contribution"),
                           ("unjudged documents are skipped",))


@register
@dataclass(frozen=True, repr=False)
class GMBpref(Bpref):
    """Bpref averaged over queries with a geometric mean (floor 1e-5), as trec_eval's ``gm_bpref``.

    Formula: ``GMBpref = exp(mean_q log(max(bpref_q, 1e-5)))``; per-query values are plain bpref.
    Reference: trec_eval ``m_gm_bpref.c``. trec_eval name: ``gm_bpref``.
    """

    name: ClassVar[str] = "GMBpref"
    aliases: ClassVar[tuple[str, ...]] = ()
    summary: ClassVar[str] = "bpref averaged with a geometric mean (floor 1e-5)"
    aggregate: ClassVar[str] = "gmean"  # type: ignore[assignment]


@register
@dataclass(frozen=True, repr=False)
class InfAP(Metric):
    """Inferred average precision, for judgments made on a random sample of the pool.

    For a relevant document at 0-based position j > 0 with ``r`` relevant, ``n`` judged non-relevant and
    ``u`` pooled-but-unjudged (negative grade) documents above it, the expected precision is
    ``1/(j+1) + (j/(j+1)) * ((r + n + u)/j) * ((r + eps)/(r + n + 2 eps))`` (1 at j = 0), with eps = 1e-5;
    infAP is their sum divided by R. Documents absent from the judgments (outside the pool) are skipped.
    With complete judgments it equals AP. Undefined when R = 0.
    Reference: Yilmaz & Aslam, "Estimating Average Precision with Incomplete and Imperfect Judgments",
    CIKM 2006; trec_eval ``m_infap.c``. trec_eval name: ``infAP``.
    """

    name: ClassVar[str] = "infAP"
    aliases: ClassVar[tuple[str, ...]] = ("InfAP",)
    summary: ClassVar[str] = "AP estimated from a sampled pool"
    normalized: ClassVar[bool] = True
    uses_relevance_level: ClassVar[bool] = True

    rel: float | str | None = rel_param()

    def compute(self, ctx: Context) -> np.ndarray:
        level = self.level(ctx.policies)
        grades = ctx.jr.grades
        rel = ctx.relevant(level)
        nonrel = ctx.nonrelevant_judged(level)
        pooled = grades < 0  # negative grade: in the pool, not judged (NaN compares False)
        r_before = ctx.within_segment_count(rel) - rel
        n_before = ctx.within_segment_count(nonrel)
        u_before = ctx.within_segment_count(pooled)
        j = (ctx.position - 1).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            term = (1.0 / (j + 1.0) + (j / (j + 1.0)) * ((r_before + n_before + u_before) / j)
                    * ((r_before + INFAP_EPSILON) / (r_before + n_before + 2 * INFAP_EPSILON)))
        term = np.where(j == 0, 1.0, term)
        return ratio(ctx.per_query_sum(np.where(rel, term, 0.0)), ctx.num_rel(level))

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        level = self.level(policies)
        r_total = sum(g >= level for g in q.judged)
        if r_total == 0:
            return math.nan
        r = n = u = 0
        total = 0.0
        for j, g in enumerate(q.grades):
            if g is None or math.isnan(g):
                continue
            if g < 0:
                u += 1
            elif g < level:
                n += 1
            else:
                if j == 0:
                    total += 1.0
                else:
                    total += (1 / (j + 1) + (j / (j + 1)) * ((r + n + u) / j)
                              * ((r + INFAP_EPSILON) / (r + n + 2 * INFAP_EPSILON)))
                r += 1
        return total / r_total


@register
@dataclass(frozen=True, repr=False)
class BinG(Metric):
    """binG: a binary gain measure from trec_eval, each relevant document discounted by the number of
    non-relevant documents ranked above it.

    Formula: ``binG = (1/R) * sum_{retrieved relevant d} 1 / log2(2 + |non-relevant above d|)`` (documents
    without a relevant grade count as non-relevant here). Undefined when R = 0.
    Reference: trec_eval ``m_binG.c`` (Buckley). trec_eval name: ``binG``.
    """

    name: ClassVar[str] = "binG"
    summary: ClassVar[str] = "relevant documents discounted by non-relevant above them"
    normalized: ClassVar[bool] = True
    uses_relevance_level: ClassVar[bool] = True

    rel: float | str | None = rel_param()

    def compute(self, ctx: Context) -> np.ndarray:
        level = self.level(ctx.policies)
        rel = ctx.relevant(level)
        found = ctx.within_segment_count(rel)
        above_nonrel = ctx.position - found
        term = np.where(rel, 1.0 / np.log2(2.0 + above_nonrel), 0.0)
        return ratio(ctx.per_query_sum(term), ctx.num_rel(level))

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        level = self.level(policies)
        r = sum(g >= level for g in q.judged)
        if r == 0:
            return math.nan
        found = 0
        total = 0.0
        for i, g in enumerate(q.grades):
            if _rel(g, level):
                found += 1
                total += 1.0 / math.log2(3 + i - found)
        return total / r
