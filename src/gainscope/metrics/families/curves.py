"""Interpolated precision at recall levels, and its average over recall levels (11-point average).

Interpolated precision at recall r (trec_eval): let ``c = round(r * R)`` be the number of relevant
documents that recall r requires. If c = 0, the value is the best precision reached at any rank; if
1 <= c <= (relevant retrieved), it is the best precision at or after the rank of the c-th relevant document
(``Int_Prec(rank x) = max_{y >= x} Prec(rank y)``); otherwise 0.

Rounding of ``r * R``: trec_eval 10 rounds to nearest (``lround``); trec_eval 9 and pytrec_eval truncate
``r * R + 0.9``. The ``rounding`` parameter picks one (default ``"nearest"``, trec_eval 10).

A query with nothing retrieved (every retrieved document dropped by ``judged_only``, trec_eval ``-J``, or a
judged query without a ranking under ``-J -c``) scores 0 at every level. trec_eval starts its interpolation
from ``num_rel_ret / num_ret`` = 0/0 there and prints ``-nan`` at the levels that need no relevant
document (c = 0, at least recall 0) and for the 11-point average, and so does ``--format trec_eval``
(:func:`gainscope.metrics.trec_eval.trec_eval_overrides`); every other output keeps 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from gainscope.core.policies import Policies
from gainscope.metrics.base import Metric, RankedQuery, param, rel_param
from gainscope.metrics.context import Context
from gainscope.metrics.registry import register

__all__ = ["ElevenPointAverage", "IPrec", "relevant_needed"]

_ROUNDING = "how r * R becomes a count: 'nearest' (trec_eval 10) or 'legacy' (trec_eval 9: floor(r*R + 0.9))"


def relevant_needed(r_levels: np.ndarray | float, num_rel: np.ndarray | float, rounding: str) -> np.ndarray:
    """How many relevant documents recall ``r_levels`` asks for out of ``num_rel`` (see the module doc)."""
    x = np.asarray(r_levels, dtype=np.float64) * num_rel
    if rounding == "legacy":
        return np.floor(x + 0.9).astype(np.int64)
    # C lround: half away from zero (x >= 0 here)
    return np.floor(x + 0.5).astype(np.int64)


def _iprec_table(ctx: Context, level: float, levels: tuple[float, ...], rounding: str) -> np.ndarray:
    """Interpolated precision per query (rows) at each recall level (columns)."""
    def make() -> np.ndarray:
        rel = ctx.relevant(level)
        found = ctx.within_segment_count(rel)
        prec = found / ctx.position
        idx = np.flatnonzero(rel)  # positions of relevant documents, in query order
        seg = ctx.segment[idx]
        counts = np.bincount(seg, minlength=ctx.nq)
        offsets = np.zeros(ctx.nq + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        # best precision from each relevant document to the end of its query (precision only peaks there)
        best = ctx.segmented_suffix_max(prec[idx], offsets)
        num_rel = ctx.num_rel(level)
        out = np.zeros((ctx.nq, len(levels)))
        for col, r in enumerate(levels):
            need = relevant_needed(r, num_rel, rounding)
            zero = need == 0
            has = counts > 0
            out[zero & has, col] = best[offsets[:-1][zero & has]]
            ok = (need >= 1) & (need <= counts)
            out[ok, col] = best[offsets[:-1][ok] + need[ok] - 1]
        return out
    return ctx.cached(("iprec", level, levels, rounding), make)


def _iprec_ref(q: RankedQuery, level: float, r: float, rounding: str) -> float:
    num_rel = sum(g >= level for g in q.judged)
    need = int(relevant_needed(r, num_rel, rounding))
    ranks = [i for i, g in enumerate(q.grades, start=1) if g is not None and not math.isnan(g) and g >= level]
    precisions = [(k + 1) / i for k, i in enumerate(ranks)]
    if need == 0:
        return max(precisions, default=0.0)
    if need > len(ranks):
        return 0.0
    return max(precisions[need - 1:])


@register
@dataclass(frozen=True, repr=False)
class IPrec(Metric):
    """Interpolated precision at a recall level (the points of the standard recall-precision graph).

    Formula: with ``c = round(r * R)``, ``IPrec@r = max_{i >= rank of the c-th relevant} P@i`` (the best
    precision at any rank when c = 0; 0 when fewer than c relevant documents are retrieved). See the module
    docstring for the rounding conventions. Always defined.
    Reference: trec_eval ``m_iprec_at_recall.c``. trec_eval name: ``iprec_at_recall.r``.
    """

    name: ClassVar[str] = "IPrec"
    summary: ClassVar[str] = "interpolated precision at a recall level"
    uses_relevance_level: ClassVar[bool] = True

    recall: float | None = param(None, kind="float", ge=0, le=1, at=True, required=True,
                                 doc="recall level in [0, 1]")
    rel: float | str | None = rel_param()
    rounding: str = param("nearest", kind="choice", choices=("nearest", "legacy"), doc=_ROUNDING)

    def compute(self, ctx: Context) -> np.ndarray:
        assert self.recall is not None
        return _iprec_table(ctx, self.level(ctx.policies), (self.recall,), self.rounding)[:, 0]

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        assert self.recall is not None
        return _iprec_ref(q, self.level(policies), self.recall, self.rounding)


_ELEVEN = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


@register
@dataclass(frozen=True, repr=False)
class ElevenPointAverage(Metric):
    """Interpolated precision averaged over recall levels (by default the 11 levels 0, 0.1, ..., 1).

    Formula: ``mean_{r in levels} IPrec@r``. Obsolete as a headline number (use AP) but still reported.
    Reference: trec_eval ``m_11pt_avg.c``. trec_eval name: ``11pt_avg``.
    """

    name: ClassVar[str] = "11pt_avg"
    aliases: ClassVar[tuple[str, ...]] = ("IPrecAvg",)
    summary: ClassVar[str] = "interpolated precision averaged over recall levels"
    uses_relevance_level: ClassVar[bool] = True

    levels: tuple[float, ...] = param(_ELEVEN, kind="floats", ge=0, le=1, doc="recall levels to average")
    rel: float | str | None = rel_param()
    rounding: str = param("nearest", kind="choice", choices=("nearest", "legacy"), doc=_ROUNDING)

    def compute(self, ctx: Context) -> np.ndarray:
        table = _iprec_table(ctx, self.level(ctx.policies), tuple(self.levels), self.rounding)
        return table.mean(axis=1)

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        level = self.level(policies)
        return sum(_iprec_ref(q, level, r, self.rounding) for r in self.levels) / len(self.levels)
