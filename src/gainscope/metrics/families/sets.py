"""Set-based metrics (the ranking as an unordered set) and counts.

Notation: ``n`` documents retrieved, ``rr`` of them relevant, ``R`` judged relevant documents in total.
Counts aggregate by summing over queries (``NumRel`` of the whole evaluation is the total number of relevant
documents), except ``NumQ`` which counts queries.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from gainscope.core.policies import Policies
from gainscope.metrics.base import Metric, RankedQuery, is_relevant, param, rel_param, tie_averaged
from gainscope.metrics.context import Context, ratio
from gainscope.metrics.registry import register

__all__ = ["NumNonrelJudgedRet", "NumQ", "NumRel", "NumRelRet", "NumRet", "SetAP", "SetF", "SetP",
           "SetR", "SetRelP", "Utility"]



def _counts(ctx: Context, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n, rr and R per query; rr is the expected count over orders of tied documents under
    ties="average" (it only differs when a depth cuts a group of tied documents)."""
    n = ctx.lengths.astype(np.float64)

    rr = ctx.linear_sum(("rel", level), lambda g, q: (g >= level).astype(np.float64), "one")
    return n, rr, ctx.num_rel(level)


def _is_rel(g: float | None, level: float) -> float:
    return 1.0 if is_relevant(g, level) else 0.0


def _ref_counts(q: RankedQuery, level: float) -> tuple[int, float, int]:
    rr = sum(tie_averaged([_is_rel(g, level) for g in q.grades], q.tie_start, [_is_rel(g, level) for g in q.tail]))
    return len(q.grades), rr, sum(g >= level for g in q.judged)


class _SetMetric(Metric):
    uses_relevance_level: ClassVar[bool] = True
    order_independent: ClassVar[bool] = True
    #: linear in the relevance indicators (so exact under ties="average" even with a depth)
    linear_in_gains: ClassVar[bool] = True

    def value(self, n: np.ndarray, rr: np.ndarray, r: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def compute(self, ctx: Context) -> np.ndarray:
        return self.value(*_counts(ctx, self.level(ctx.policies)))

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        n, rr, r = _ref_counts(q, self.level(policies))
        return float(self.value(np.array([n], float), np.array([rr], float), np.array([r], float))[0])


@register
@dataclass(frozen=True, repr=False)
class SetP(_SetMetric):
    """Set precision: relevant retrieved / retrieved, ``rr / n``. Undefined when nothing is retrieved.

    With a depth limit this is precision at that depth without padding (trec_eval ``-M k -m set_P``).
    Reference: trec_eval ``m_set_P.c``. trec_eval name: ``set_P``.
    """

    name: ClassVar[str] = "SetP"
    summary: ClassVar[str] = "relevant retrieved / retrieved"

    rel: float | str | None = rel_param()

    def value(self, n: np.ndarray, rr: np.ndarray, r: np.ndarray) -> np.ndarray:
        return ratio(rr, n)


@register
@dataclass(frozen=True, repr=False)
class SetR(_SetMetric):
    """Set recall: relevant retrieved / relevant, ``rr / R``. Undefined when R = 0.

    Reference: trec_eval ``m_set_recall.c``. trec_eval name: ``set_recall``.
    """

    name: ClassVar[str] = "SetR"
    summary: ClassVar[str] = "relevant retrieved / relevant"

    rel: float | str | None = rel_param()

    def value(self, n: np.ndarray, rr: np.ndarray, r: np.ndarray) -> np.ndarray:
        return ratio(rr, r)


@register
@dataclass(frozen=True, repr=False)
class SetRelP(_SetMetric):
    """Set relative precision: ``rr / min(n, R)``. Undefined when n = 0 or R = 0.

    Reference: trec_eval ``m_set_rel_P.c``. trec_eval name: ``set_relative_P``.
    """

    name: ClassVar[str] = "SetRelP"
    summary: ClassVar[str] = "relevant retrieved / min(retrieved, relevant)"

    rel: float | str | None = rel_param()

    def value(self, n: np.ndarray, rr: np.ndarray, r: np.ndarray) -> np.ndarray:
        return ratio(rr, np.minimum(n, r))


@register
@dataclass(frozen=True, repr=False)
class SetAP(_SetMetric):
    """Set average precision (set precision times set recall): ``rr^2 / (n * R)``. Undefined when n or R
    is 0.

    Reference: trec_eval ``m_set_map.c``. trec_eval name: ``set_map``.
    """

    linear_in_gains: ClassVar[bool] = False
    name: ClassVar[str] = "SetAP"
    summary: ClassVar[str] = "set precision x set recall"

    rel: float | str | None = rel_param()

    def value(self, n: np.ndarray, rr: np.ndarray, r: np.ndarray) -> np.ndarray:
        return ratio(rr * rr, n * r)


@register
@dataclass(frozen=True, repr=False)
class SetF(_SetMetric):
    """Set F-measure: ``(beta + 1) * P * R / (beta * P + R)`` with set precision P and set recall R;
    0 when nothing relevant is retrieved, undefined when n = 0 or R = 0.

    Note the weight is ``beta`` as trec_eval's ``set_F`` writes it, not the usual beta squared: ``beta=1``
    is the harmonic mean either way.
    Reference: van Rijsbergen, *Information Retrieval*, 1979; trec_eval ``m_set_F.c``. trec_eval name:
    ``set_F``.
    """

    linear_in_gains: ClassVar[bool] = False
    name: ClassVar[str] = "SetF"
    summary: ClassVar[str] = "weighted harmonic mean of set precision and recall"

    beta: float = param(1.0, kind="float", ge=0, doc="relative weight of recall")
    rel: float | str | None = rel_param()

    def value(self, n: np.ndarray, rr: np.ndarray, r: np.ndarray) -> np.ndarray:
        out = np.full(len(n), np.nan)
        ok = (n > 0) & (r > 0)
        out[ok] = 0.0
        hit = ok & (rr > 0)
        p = rr[hit] / n[hit]
        rec = rr[hit] / r[hit]
        out[hit] = (self.beta + 1.0) * p * rec / (self.beta * p + rec)
        return out


@register
@dataclass(frozen=True, repr=False)
class Utility(_SetMetric):
    """Linear set utility: ``a * rr + b * (n - rr) + c * (R - rr) + d * (D + rr - n - R)``, where D is
    the number of documents in the collection. Defaults a=1, b=-1, c=0, d=0 (trec_eval's). Not bounded.

    Reference: trec_eval ``m_utility.c`` (TREC filtering track). trec_eval name: ``utility.a,b,c,d``.
    """

    name: ClassVar[str] = "utility"
    aliases: ClassVar[tuple[str, ...]] = ("Utility",)
    summary: ClassVar[str] = "weighted count of the retrieval contingency table"
    bounds: ClassVar[tuple[float | None, float | None]] = (None, None)

    rel_ret: float = param(1.0, kind="float", doc="worth of a retrieved relevant document (a)")
    nonrel_ret: float = param(-1.0, kind="float", doc="worth of a retrieved non-relevant document (b)")
    rel_nonret: float = param(0.0, kind="float", doc="worth of a missed relevant document (c)")
    nonrel_nonret: float = param(0.0, kind="float", doc="worth of a non-retrieved non-relevant document (d)")
    num_docs: int = param(0, kind="int", ge=0, doc="documents in the collection (trec_eval -N)")
    rel: float | str | None = rel_param()

    def value(self, n: np.ndarray, rr: np.ndarray, r: np.ndarray) -> np.ndarray:
        return (self.rel_ret * rr + self.nonrel_ret * (n - rr) + self.rel_nonret * (r - rr)
                + self.nonrel_nonret * (self.num_docs + rr - n - r))


class _Count(_SetMetric):
    bounds: ClassVar[tuple[float | None, float | None]] = (0.0, None)
    aggregate: ClassVar[str] = "sum"  # type: ignore[assignment]


@register
@dataclass(frozen=True, repr=False)
class NumQ(_Count):
    """Number of queries evaluated: 1 per query, summed over queries.

    Formula: ``NumQ = |{evaluated queries}|`` (with ``missing_queries="zero"`` every judged query counts,
    as trec_eval ``-c``). Reference: trec_eval ``m_num_q.c``. trec_eval name: ``num_q``.
    """

    name: ClassVar[str] = "NumQ"
    summary: ClassVar[str] = "number of queries"
    uses_relevance_level: ClassVar[bool] = False
    judgment_property: ClassVar[bool] = True

    def value(self, n: np.ndarray, rr: np.ndarray, r: np.ndarray) -> np.ndarray:
        return np.ones(len(n))


@register
@dataclass(frozen=True, repr=False)
class NumRet(_Count):
    """Number of documents retrieved, after the depth limit and judged-only filtering.

    Formula: ``NumRet = n``; summed over queries. Reference: trec_eval ``m_num_ret.c``. trec_eval name:
    ``num_ret``.
    """

    name: ClassVar[str] = "NumRet"
    summary: ClassVar[str] = "documents retrieved"
    uses_relevance_level: ClassVar[bool] = False

    def value(self, n: np.ndarray, rr: np.ndarray, r: np.ndarray) -> np.ndarray:
        return n


@register
@dataclass(frozen=True, repr=False)
class NumRel(_Count):
    """Number of judged relevant documents, retrieved or not.

    Formula: ``NumRel = R = |{judged d : grade_d >= rel}|``; summed over queries. A judged query without a
    ranking keeps its R. Under ``-c`` trec_eval's summary line is not that sum but the number of positive
    grades in the whole judgments, whatever ``-l``; ``--format trec_eval`` prints trec_eval's figure
    (:func:`gainscope.metrics.trec_eval.trec_eval_overrides`), every other output the sum of R.
    Reference: trec_eval ``m_num_rel.c``. trec_eval name: ``num_rel``.
    """

    name: ClassVar[str] = "NumRel"
    summary: ClassVar[str] = "relevant documents in the judgments"
    judgment_property: ClassVar[bool] = True

    rel: float | str | None = rel_param()

    def value(self, n: np.ndarray, rr: np.ndarray, r: np.ndarray) -> np.ndarray:
        return r


@register
@dataclass(frozen=True, repr=False)
class NumRelRet(_Count):
    """Number of relevant documents retrieved.

    Formula: ``NumRelRet = rr = sum_i rel_i``; summed over queries. Reference: trec_eval ``m_num_rel_ret.c``.
    trec_eval name: ``num_rel_ret``.
    """

    name: ClassVar[str] = "NumRelRet"
    summary: ClassVar[str] = "relevant documents retrieved"

    rel: float | str | None = rel_param()

    def value(self, n: np.ndarray, rr: np.ndarray, r: np.ndarray) -> np.ndarray:
        return rr


@register
@dataclass(frozen=True, repr=False)
class NumNonrelJudgedRet(_Count):
    """Number of retrieved documents judged non-relevant (judged, below the relevance threshold).

    Formula: ``|{i : 0 <= grade_i < rel}|``; unjudged documents are not counted. Summed over queries.
    Reference: trec_eval ``m_num_nonrel_judged_ret.c``. trec_eval name: ``num_nonrel_judged_ret``.
    """

    name: ClassVar[str] = "NumNonrelJudgedRet"
    summary: ClassVar[str] = "retrieved documents judged non-relevant"

    rel: float | str | None = rel_param()

    def compute(self, ctx: Context) -> np.ndarray:
        level = self.level(ctx.policies)
        return ctx.linear_sum(("nonrel", level), lambda g, q: ((g >= 0) & (g < level)).astype(np.float64), "one")

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        level = self.level(policies)

        def nonrel(g: float | None) -> float:
            return 1.0 if g is not None and not math.isnan(g) and 0 <= g < level else 0.0
        return float(sum(tie_averaged([nonrel(g) for g in q.grades], q.tie_start, [nonrel(g) for g in q.tail])))
