"""Temporal ranking metrics: nDCG, precision, recall, reciprocal rank and average precision at a cutoff ``k``, in
gold, focus-time and LLM modes (grades per mode: :mod:`gainscope.temporal.grades`). Each is the core metric named
in its docstring, computed by the core over the first ``k`` documents retrieved and the judged pool
(:mod:`gainscope.temporal.engine`); the formulas below are the core's, repeated for the reader.

Notation: ``g_i`` the grade of the document at rank ``i``, ``rel_i`` its binary relevance, ``n`` the number of
documents retrieved, ``R`` the number of relevant documents in the judged pool.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from gainscope.core.policies import level_value
from gainscope.core.rankings import Ranking
from gainscope.errors import InputError
from gainscope.metrics.base import Metric, format_value
from gainscope.metrics.families.average_precision import AP, RR
from gainscope.metrics.families.graded import NDCG
from gainscope.metrics.families.precision import Precision, Recall
from gainscope.metrics.families.sets import NumRelRet
from gainscope.temporal.base import TemporalMetric
from gainscope.temporal.engine import Prepared, evaluate_prepared
from gainscope.temporal.grades import Graded, fresh_ids

__all__ = ["TemporalMAP", "TemporalMRR", "TemporalNDCG", "TemporalPrecision", "TemporalRecall"]


@dataclass(frozen=True)
class TemporalNDCG(TemporalMetric):
    """Temporal nDCG@k (seed 001): ``DCG@k / IDCG@k``, the discounted gains of the top k over those of the ideal
    ranking; the core's ``nDCG(gain, ideal)@k`` (its formula and discount:
    :class:`~gainscope.metrics.families.graded.NDCG`).

    ``gain``: ``"linear"`` -- ``gain(g) = g``, the seed's formula (default) -- or ``"exponential"`` --
    ``gain(g) = 2^g - 1``, what TempoEval's code computes (its docs show the linear form); or a ``{grade: gain}``
    map, as for the core's nDCG.

    ``ideal``: the ranking IDCG is computed from. ``"judged"`` (default; the seed says only "documents sorted by
    relevance score"): the ``k`` best grades of the judged pool -- every gold grade, every focus time given
    (``dfts`` beyond ``k`` and ``other_dfts``), every document given to the judge (``retrieved_docs`` beyond ``k``
    and ``other_docs`` are then graded too) -- as trec_eval does, so missing a relevant document costs; this is
    also what TempoEval's gold mode computes. ``"retrieved"``: the top ``k`` retrieved grades re-sorted (the core's
    ``ideal=retrieved`` over the first ``k`` documents), as TempoEval does in focus-time and LLM modes (a list
    whose one relevant document is at rank 1 scores 1.0 however many it missed).

    Undefined (NaN) when IDCG is 0: no positive grade to normalise by. Range [0, 1].
    """

    CORE_PARAMETERS: ClassVar[tuple[str, ...]] = ("gain", "ideal")

    gain: Any = "linear"
    ideal: Literal["judged", "retrieved"] = "judged"

    @property
    def needs_pool(self) -> bool:  # type: ignore[override]
        return self.ideal == "judged"

    def core(self, k: int) -> Metric:
        return NDCG(cutoff=k, gain=self.gain, ideal=self.ideal)

    def reason(self, k: int) -> str:
        where = "judged documents" if self.ideal == "judged" else f"top {k} documents"
        return f"IDCG is 0: no positive grade among the {where}"

    def convention(self, k: int) -> str:
        gain = "linear (g)" if self.gain == "linear" else "exponential (2^g - 1)" if self.gain == "exponential" \
            else f"the map {format_value(self.gain)}"
        ideal = (f"judged (the {k} best grades of every judged document)" if self.ideal == "judged"
                 else f"retrieved (the top {k} retrieved, re-sorted)")
        return f"{self._grades_text()}; gain {gain}; ideal {ideal}"


@dataclass(frozen=True)
class TemporalPrecision(TemporalMetric):
    """Temporal precision@k: ``#{i <= k : rel_i} / D``; the core's ``P(denominator)@k``.

    ``denominator``: ``"retrieved"`` (default, TempoEval): ``D = min(k, n)``; ``"k"``: ``D = k`` (trec_eval's
    P@k, a short list is penalised). Undefined when ``D`` is 0 (nothing retrieved, ``denominator="retrieved"``).
    In LLM mode this is the same precision over the judge's grades (``rel``, default 2); TempoEval's LLM mode
    computes an average-precision-like "position-weighted precision" under this name instead.
    """

    CORE_PARAMETERS: ClassVar[tuple[str, ...]] = ("denominator",)

    denominator: Literal["retrieved", "k"] = "retrieved"

    def core(self, k: int) -> Metric:
        return Precision(cutoff=k, rel=self.own_rel(), denominator=self.denominator)

    def reason(self, k: int) -> str:
        return "nothing retrieved"

    def convention(self, k: int) -> str:
        d = f"k ({k})" if self.denominator == "k" else f"retrieved (min({k}, documents retrieved))"
        return f"{self._relevance_text()}; denominator {d}"


@dataclass(frozen=True)
class TemporalRecall(TemporalMetric):
    """Temporal recall@k: ``#{i <= k : rel_i} / R``; the core's ``R@k``.

    ``R`` is the number of relevant documents in the judged pool (gold ids; every ``dfts``/``other_dfts`` entry;
    in LLM mode every document given, all graded), or ``total_relevant`` when given (TempoEval's input: relevant
    documents in the collection). With ``total_relevant`` the adapter judges the top ``k`` as graded and stands for
    the relevant documents they miss -- ``total_relevant`` minus those found, counted by the core's ``NumRelRet``
    -- with placeholder judgments that no ranking retrieves, so the core's R is ``total_relevant``; fewer than
    found is an error. Undefined when ``R`` is 0. Relevance in focus-time mode is Jaccard > ``min_jaccard`` as in
    every metric (TempoEval compares the overlap *count* with its threshold here). In LLM mode TempoEval sums
    graded scores over the top k and divides by k -- a graded precision, not recall.
    """

    needs_pool = True
    EXTRA_INPUTS: ClassVar[frozenset[str]] = frozenset({"total_relevant"})

    def core(self, k: int) -> Metric:
        return Recall(cutoff=k, rel=self.own_rel())

    def reason(self, k: int) -> str:
        return "no relevant document (R = 0)"

    def convention(self, k: int) -> str:
        return f"{self._relevance_text()}; R: total_relevant when given, else the relevant judged documents"

    def ranking(self, graded: Graded, inputs: Mapping[str, Any], k: int) -> Ranking:
        total = inputs.get("total_relevant")
        if total is None:
            return super().ranking(graded, inputs, k)
        if isinstance(total, bool) or not isinstance(total, int) or total < 0:
            raise InputError(f"total_relevant must be an integer >= 0; got {total!r}")
        top = graded.doc_ids[:k]
        seen = {d: graded.pool[d] for d in top if d in graded.pool}
        found = int(evaluate_prepared([Prepared(Ranking("q", top, seen))], NumRelRet(rel=self.own_rel()),
                                      self.level())[0])
        if found > total:
            raise InputError(f"total_relevant={total} but {found} relevant documents are in the top {k}")
        # a grade every relevance threshold of this metric counts
        own = self.own_rel()
        relevant = max(1.0, level_value(own if own is not None else self.level()))
        missed = fresh_ids("missed:", total - found, set(top))
        return Ranking("q", top, {**seen, **dict.fromkeys(missed, relevant)})

    def describe_core(self, k: int) -> str:
        return (f"{self.core(k)} of the first {k} documents and the judged pool (with total_relevant: the top {k} "
                "and placeholders for the relevant documents they miss)")


@dataclass(frozen=True)
class TemporalMRR(TemporalMetric):
    """Temporal reciprocal rank@k: ``1 / min{i <= k : rel_i}``, 0 when no relevant document is in the top k
    (a real 0, as trec_eval's RR); the core's ``RR@k``. Its mean over queries is the MRR."""

    def core(self, k: int) -> Metric:
        return RR(cutoff=k, rel=self.own_rel())

    def convention(self, k: int) -> str:
        return f"{self._relevance_text()}; 0 when none is in the top {k}"


@dataclass(frozen=True)
class TemporalMAP(TemporalMetric):
    """Temporal average precision@k: ``sum_{i <= k, rel_i} P@i / D`` with ``P@i = #{j <= i : rel_j} / i``; the
    core's ``AP(denominator)@k``.

    ``denominator``: ``"judged"`` (default, trec_eval's AP): ``D = R``, the relevant documents of the judged pool,
    so relevant documents not retrieved count as misses; ``"retrieved"`` (TempoEval): ``D`` = relevant documents in
    the top k (a list with one relevant document at rank 1 scores 1.0). Undefined when ``D`` is 0. TempoEval has
    focus-time mode only; gold and LLM modes use the same formula.
    """

    CORE_PARAMETERS: ClassVar[tuple[str, ...]] = ("denominator",)

    denominator: Literal["judged", "retrieved"] = "judged"

    @property
    def needs_pool(self) -> bool:  # type: ignore[override]
        return self.denominator == "judged"

    def core(self, k: int) -> Metric:
        return AP(cutoff=k, rel=self.own_rel(), denominator=self.denominator)

    def reason(self, k: int) -> str:
        return "no relevant document " + ("judged (R = 0)" if self.denominator == "judged" else f"in the top {k}")

    def convention(self, k: int) -> str:
        d = ("judged (R, the relevant judged documents)" if self.denominator == "judged"
             else f"retrieved (the relevant documents in the top {k})")
        return f"{self._relevance_text()}; denominator {d}"
