"""Counting metrics over a prefix of the ranking: P@k, R@k, Success@k, relative P@k, R-precision,
Judged@k and Unj@k.

Notation used in the docstrings: for one query, ``rel_i`` is 1 when the document at rank ``i`` has grade
>= the relevance threshold (the metric's ``rel``, else the evaluation's relevance level), ``R`` is the number
of judged documents with such a grade (from the judgments, retrieved or not), ``n`` the number of documents
retrieved.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from gainscope.core.policies import Policies
from gainscope.metrics.base import Explanation, Metric, RankedQuery, Step, param, rel_param, tie_averaged
from gainscope.metrics.base import is_judged as _is_judged
from gainscope.metrics.base import is_relevant as _rel
from gainscope.metrics.context import Context, ratio
from gainscope.metrics.registry import register

__all__ = ["Judged", "Precision", "RPrecision", "Recall", "RelativePrecision", "Success", "Unjudged"]

def _rel_count_to(ctx: Context, level: float, k: int | np.ndarray | None) -> np.ndarray:
    """Relevant documents among the first k of each query (tie-averaged when ties='average')."""
    return ctx.linear_sum(("rel", level), lambda g, q: (g >= level).astype(np.float64), "one", k)


def _judged_to(ctx: Context, k: int | None) -> np.ndarray:
    """Judged documents among the first k of each query (expected count under averaged ties)."""
    return ctx.linear_sum("judged", lambda g, q: (g >= 0).astype(np.float64), "one", k)


def _hits(q: RankedQuery, level: float) -> list[float]:
    """Relevance indicator per rank (tie-averaged under ties='average')."""
    return tie_averaged([1.0 if _rel(g, level) else 0.0 for g in q.grades], q.tie_start,
                        [1.0 if _rel(g, level) else 0.0 for g in q.tail])


def _judged_flags(q: RankedQuery, judged: bool) -> list[float]:
    return tie_averaged([1.0 if _is_judged(g) == judged else 0.0 for g in q.grades], q.tie_start,
                        [1.0 if _is_judged(g) == judged else 0.0 for g in q.tail])


def _binary_steps(q: RankedQuery, level: float, k: int | None,
                  flags: list[float] | None = None) -> tuple[list[Step], float]:
    steps = []
    total = 0.0
    flags = _hits(q, level) if flags is None else flags
    for i, (doc, g, hit) in enumerate(zip(q.doc_ids, q.grades, flags, strict=True), start=1):
        if k is not None and i > k:
            break
        total += hit
        steps.append(Step(i, doc, g, hit, 1.0, hit, total))
    return steps, total


@register
@dataclass(frozen=True, repr=False)
class Precision(Metric):
    """Precision at k: the fraction of the first k documents that are relevant.

    Formula: ``P@k = (sum_{i<=k} rel_i) / D`` with ``D = k`` (``denominator="k"``, the default) or
    ``D = min(k, n)`` (``denominator="retrieved"``), n the number of documents retrieved.

    Conventions: ``denominator="k"`` divides by k even when fewer than k documents were retrieved (the missing
    positions count as non-relevant), as trec_eval ``P.k`` and ranx; always defined.
    ``denominator="retrieved"`` divides by the documents retrieved within k, so 2 relevant among 4 returned is
    0.5 at P@10 (Quepid's ``P@10``, Elasticsearch ``_rank_eval`` ``precision``, OpenSearch's Search Relevance
    Workbench, TempoEval); undefined when nothing is retrieved (Quepid and Elasticsearch report 0, as the
    ``undefined="zero"`` policy does). Unjudged documents are non-relevant either way. With
    ``ties="average"`` it is the expected precision over orders of tied documents.

    Reference: trec_eval ``m_P.c``; Manning, Raghavan & Schütze, *Introduction to IR*, 2008, ch. 8; Quepid's
    ``p@10.js``; Elasticsearch ``PrecisionAtK.java``. trec_eval name: ``P.k``.
    """

    name: ClassVar[str] = "P"
    aliases: ClassVar[tuple[str, ...]] = ("Precision",)
    summary: ClassVar[str] = "fraction of the first k documents that are relevant"
    linear_in_gains: ClassVar[bool] = True
    uses_relevance_level: ClassVar[bool] = True

    cutoff: int | None = param(None, kind="int", ge=1, at=True, required=True, doc="rank depth k")
    rel: float | str | None = rel_param()
    denominator: str = param("k", kind="choice", choices=("k", "retrieved"),
                             doc="'k': divide by k (trec_eval, ranx); 'retrieved': by min(k, documents retrieved) "
                                 "(Quepid, Elasticsearch _rank_eval, TempoEval)")

    def compute(self, ctx: Context) -> np.ndarray:
        assert self.cutoff is not None
        hits = _rel_count_to(ctx, self.level(ctx.policies), self.cutoff)
        if self.denominator == "retrieved":
            return ratio(hits, np.minimum(ctx.lengths, self.cutoff).astype(np.float64))
        return hits / self.cutoff

    def _denominator(self, q: RankedQuery) -> int:
        assert self.cutoff is not None
        return self.cutoff if self.denominator == "k" else min(self.cutoff, len(q.grades))

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        d = self._denominator(q)
        return sum(_hits(q, self.level(policies))[: self.cutoff]) / d if d else math.nan

    def explain(self, q: RankedQuery, policies: Policies) -> Explanation:
        d = self._denominator(q)
        steps, total = _binary_steps(q, self.level(policies), self.cutoff)
        return Explanation(str(self), q.query_id, tuple(steps), (), total, float(d),
                           total / d if d else math.nan,
                           "relevant in top k / " + ("k" if self.denominator == "k" else "min(k, retrieved)"),
                           ("relevant", "weight", "counted"))


@register
@dataclass(frozen=True, repr=False)
class Recall(Metric):
    """Recall at k: the fraction of the relevant documents found in the first k.

    Formula: ``R@k = (sum_{i<=k} rel_i) / R``; undefined when R = 0 (trec_eval reports 0).

    Conventions: R counts every judged relevant document, retrieved or not (trec_eval ``recall.k``, ranx).
    Reference: trec_eval ``m_recall.c``. trec_eval name: ``recall.k``.
    """

    name: ClassVar[str] = "R"
    aliases: ClassVar[tuple[str, ...]] = ("Recall",)
    summary: ClassVar[str] = "fraction of all relevant documents found in the first k"
    linear_in_gains: ClassVar[bool] = True
    uses_relevance_level: ClassVar[bool] = True

    cutoff: int | None = param(None, kind="int", ge=1, at=True, required=True, doc="rank depth k")
    rel: float | str | None = rel_param()

    def compute(self, ctx: Context) -> np.ndarray:
        level = self.level(ctx.policies)
        return ratio(_rel_count_to(ctx, level, self.cutoff), ctx.num_rel(level))

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        level = self.level(policies)
        r = sum(g >= level for g in q.judged)
        if r == 0:
            return math.nan
        return sum(_hits(q, level)[: self.cutoff]) / r

    def explain(self, q: RankedQuery, policies: Policies) -> Explanation:
        level = self.level(policies)
        steps, total = _binary_steps(q, level, self.cutoff)
        r = float(sum(g >= level for g in q.judged))
        return Explanation(str(self), q.query_id, tuple(steps), (), total, r,
                           total / r if r else math.nan, "relevant in top k / R (all relevant judged)",
                           ("relevant", "weight", "counted"))


@register
@dataclass(frozen=True, repr=False)
class Success(Metric):
    """Success at k: 1 when at least one relevant document is among the first k, else 0.

    Formula: ``Success@k = 1[sum_{i<=k} rel_i > 0]``. Always defined. Also called Hit@k / hit rate.
    Reference: trec_eval ``m_success.c``. trec_eval name: ``success.k``.
    """

    name: ClassVar[str] = "Success"
    aliases: ClassVar[tuple[str, ...]] = ("Hit", "HitRate")
    summary: ClassVar[str] = "1 if a relevant document is in the first k"
    uses_relevance_level: ClassVar[bool] = True

    cutoff: int | None = param(None, kind="int", ge=1, at=True, required=True, doc="rank depth k")
    rel: float | str | None = rel_param()

    def compute(self, ctx: Context) -> np.ndarray:
        return (_rel_count_to(ctx, self.level(ctx.policies), self.cutoff) > 0).astype(np.float64)

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        level = self.level(policies)
        return 1.0 if any(_rel(g, level) for g in q.grades[: self.cutoff]) else 0.0

    def explain(self, q: RankedQuery, policies: Policies) -> Explanation:
        steps, total = _binary_steps(q, self.level(policies), self.cutoff)
        found = 1.0 if total > 0 else 0.0
        return Explanation(str(self), q.query_id, tuple(steps), (), found, 1.0, found,
                           "1 if a relevant document is in the top k", ("relevant", "weight", "counted"))


@register
@dataclass(frozen=True, repr=False)
class RelativePrecision(Metric):
    """Relative precision at k: relevant documents in the first k divided by min(k, R).

    Formula: ``RelP@k = (sum_{i<=k} rel_i) / min(k, R)``: the precision a perfect ranking would reach is 1
    even when R < k. Undefined when R = 0 (trec_eval reports 0).
    Reference: trec_eval ``m_rel_P.c``. trec_eval name: ``relative_P.k``.
    """

    name: ClassVar[str] = "RelP"
    summary: ClassVar[str] = "relevant in the first k / min(k, R)"
    linear_in_gains: ClassVar[bool] = True
    normalized: ClassVar[bool] = True
    uses_relevance_level: ClassVar[bool] = True

    cutoff: int | None = param(None, kind="int", ge=1, at=True, required=True, doc="rank depth k")
    rel: float | str | None = rel_param()

    def compute(self, ctx: Context) -> np.ndarray:
        assert self.cutoff is not None
        level = self.level(ctx.policies)
        return ratio(_rel_count_to(ctx, level, self.cutoff),
                        np.minimum(ctx.num_rel(level), self.cutoff))

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        assert self.cutoff is not None
        level = self.level(policies)
        r = sum(g >= level for g in q.judged)
        if r == 0:
            return math.nan
        return sum(_hits(q, level)[: self.cutoff]) / min(self.cutoff, r)

    def explain(self, q: RankedQuery, policies: Policies) -> Explanation:
        assert self.cutoff is not None
        level = self.level(policies)
        r = sum(g >= level for g in q.judged)
        steps, total = _binary_steps(q, level, self.cutoff)
        den = float(min(self.cutoff, r))
        return Explanation(str(self), q.query_id, tuple(steps), (), total, den,
                           total / den if den else math.nan, f"relevant in top k / min(k, R), R = {r}",
                           ("relevant", "weight", "counted"))


@register
@dataclass(frozen=True, repr=False)
class RPrecision(Metric):
    """R-precision: precision after R documents, where R is the number of relevant documents.

    Formula: with ``c = floor(mult * R + 0.9)``, ``Rprec = (sum_{i<=c} rel_i) / c``; documents beyond the
    end of the ranking count as non-relevant. With ``mult = 1`` (the default) c = R and this is
    trec_eval's ``Rprec``: the point where precision equals recall. Other multiples give trec_eval's
    ``Rprec_mult.m`` (whose rounding adds 0.9 before truncating). Undefined when R = 0 (trec_eval: 0).
    Reference: Buckley & Voorhees, "Retrieval System Evaluation", in *TREC: Experiment and Evaluation in
    IR*, MIT Press 2005; trec_eval ``m_Rprec.c``, ``m_Rprec_mult.c``.
    """

    name: ClassVar[str] = "Rprec"
    aliases: ClassVar[tuple[str, ...]] = ("RPrec", "R_prec")
    summary: ClassVar[str] = "precision after R documents (R = number of relevant)"
    linear_in_gains: ClassVar[bool] = True
    normalized: ClassVar[bool] = True
    uses_relevance_level: ClassVar[bool] = True

    rel: float | str | None = rel_param()
    mult: float = param(1.0, kind="float", gt=0, doc="multiple of R at which precision is taken")

    def _depth(self, r: np.ndarray) -> np.ndarray:
        return np.floor(self.mult * r + 0.9) if self.mult != 1.0 else r

    def compute(self, ctx: Context) -> np.ndarray:
        level = self.level(ctx.policies)
        r = ctx.num_rel(level)
        depth = self._depth(r).astype(np.int64)
        hits = _rel_count_to(ctx, level, depth)
        out = ratio(hits, depth.astype(np.float64))
        out[(r > 0) & (depth == 0)] = 0.0
        out[r == 0] = np.nan
        return out

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        level = self.level(policies)
        r = sum(g >= level for g in q.judged)
        if r == 0:
            return math.nan
        c = math.floor(self.mult * r + 0.9) if self.mult != 1.0 else r
        if c == 0:
            return 0.0
        return sum(_hits(q, level)[:c]) / c

    def explain(self, q: RankedQuery, policies: Policies) -> Explanation:
        level = self.level(policies)
        r = sum(g >= level for g in q.judged)
        c = math.floor(self.mult * r + 0.9) if self.mult != 1.0 else r
        steps, total = _binary_steps(q, level, c)
        return Explanation(str(self), q.query_id, tuple(steps), (), total, float(c),
                           (total / c if c else 0.0) if r else math.nan,
                           f"relevant in top {c} / {c} (R = {r})", ("relevant", "weight", "counted"))


@register
@dataclass(frozen=True, repr=False)
class Judged(Metric):
    """Judged at k: the fraction of the first k retrieved documents that have a judgment.

    Formula: ``Judged@k = |{i <= min(k, n) : doc_i judged}| / min(k, n)``; undefined when nothing was
    retrieved. A document is judged when it has a grade >= 0 (negative grades mean "pooled but unjudged"
    under the default ``negative_grades`` policy). The denominator follows ir_measures ``Judged@k``; see
    ``Unj@k`` for trec_eval's ``unj.k``, which divides by k.
    Reference: Sakai, "Alternatives to Bpref", SIGIR 2007; ir_measures ``Judged``.
    """

    name: ClassVar[str] = "Judged"
    summary: ClassVar[str] = "fraction of the first k retrieved documents that are judged"
    linear_in_gains: ClassVar[bool] = True

    cutoff: int | None = param(None, kind="int", ge=1, at=True, required=True, doc="rank depth k")

    def compute(self, ctx: Context) -> np.ndarray:
        judged = _judged_to(ctx, self.cutoff)
        assert self.cutoff is not None  # required parameter, checked at construction
        return ratio(judged, np.minimum(ctx.lengths, self.cutoff).astype(np.float64))

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        top = _judged_flags(q, True)[: self.cutoff]
        if not top:
            return math.nan
        return sum(top) / len(top)

    def explain(self, q: RankedQuery, policies: Policies) -> Explanation:
        steps, total = _binary_steps(q, 0.0, self.cutoff, _judged_flags(q, True))
        den = float(len(steps))
        return Explanation(str(self), q.query_id, tuple(steps), (), total, den,
                           total / den if den else math.nan, "judged in top k / min(k, retrieved)",
                           ("judged", "weight", "counted"))


@register
@dataclass(frozen=True, repr=False)
class Unjudged(Metric):
    """Unjudged at k (trec_eval ``unj.k``): the number of unjudged documents in the first k, divided by k.

    Formula: ``Unj@k = |{i <= k : doc_i not judged}| / k``; a ranking shorter than k is padded with judged
    documents. Unjudged means absent from the judgments or given a negative grade (under the default
    ``negative_grades`` policy). A "red flag" measure: high values mean the judgments do not cover the run.
    Reference: trec_eval 10 ``m_unjudged.c``.
    """

    name: ClassVar[str] = "Unj"
    summary: ClassVar[str] = "unjudged documents in the first k / k"
    linear_in_gains: ClassVar[bool] = True

    cutoff: int | None = param(None, kind="int", ge=1, at=True, required=True, doc="rank depth k")

    def compute(self, ctx: Context) -> np.ndarray:
        assert self.cutoff is not None
        # documents absent from a sparse judged run are unjudged: count the judged ones and subtract
        shown = np.minimum(ctx.lengths, self.cutoff).astype(np.float64)
        return (shown - _judged_to(ctx, self.cutoff)) / self.cutoff

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        assert self.cutoff is not None
        return sum(_judged_flags(q, False)[: self.cutoff]) / self.cutoff

    def explain(self, q: RankedQuery, policies: Policies) -> Explanation:
        assert self.cutoff is not None
        steps, total = _binary_steps(q, 0.0, self.cutoff, _judged_flags(q, False))
        return Explanation(str(self), q.query_id, tuple(steps), (), total, float(self.cutoff),
                           total / self.cutoff, "unjudged in top k / k", ("unjudged", "weight", "counted"))
