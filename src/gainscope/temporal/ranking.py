"""Temporal ranking metrics: nDCG, precision, recall, reciprocal rank and average precision at a cutoff ``k``, in
gold, focus-time and LLM modes (grades and relevance per mode: :mod:`gainscope.temporal.grades`).

Notation: ``g_i`` the grade of the document at rank ``i``, ``rel_i`` its binary relevance, ``n`` the number of
documents retrieved, ``R`` the number of relevant documents in the judged pool.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from gainscope.errors import InputError, PolicyError
from gainscope.temporal.base import TemporalMetric, _undefined
from gainscope.temporal.grades import Graded

__all__ = ["TemporalMAP", "TemporalMRR", "TemporalNDCG", "TemporalPrecision", "TemporalRecall"]


def _gain(grade: float, form: str) -> float:
    return grade if form == "linear" else 2.0 ** grade - 1.0


def _dcg(grades: tuple[float, ...] | list[float], form: str) -> float:
    return sum(_gain(g, form) / math.log2(i + 1) for i, g in enumerate(grades, start=1))


@dataclass(frozen=True)
class TemporalNDCG(TemporalMetric):
    """Temporal nDCG@k (seed 001): ``DCG@k / IDCG@k`` with ``DCG@k = sum_{i<=k} gain(g_i) / log2(i + 1)``.

    ``gain``: ``"linear"`` -- ``gain(g) = g``, the seed's formula (default) -- or ``"exponential"`` --
    ``gain(g) = 2^g - 1``, what TempoEval's code computes (its docs show the linear form).

    ``ideal``: the ranking IDCG is computed from. ``"judged"`` (default; the seed says only "documents sorted by
    relevance score"): the ``k`` best grades of the judged pool -- every gold grade, every focus time given
    (``dfts`` beyond ``k`` and ``other_dfts``), every document given to the judge (``retrieved_docs`` beyond ``k``
    and ``other_docs`` are then graded too) -- as trec_eval does, so missing a relevant document costs.
    ``"retrieved"``: the top ``k`` retrieved grades re-sorted, as TempoEval does in focus-time and LLM modes (a
    list whose one relevant document is at rank 1 scores 1.0 however many it missed).

    Undefined (NaN) when IDCG is 0: no positive grade to normalise by. Range [0, 1].
    """

    gain: Literal["linear", "exponential"] = "linear"
    ideal: Literal["judged", "retrieved"] = "judged"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.gain not in ("linear", "exponential"):
            raise PolicyError(f"gain must be 'linear' or 'exponential'; got {self.gain!r}")
        if self.ideal not in ("judged", "retrieved"):
            raise PolicyError(f"ideal must be 'judged' or 'retrieved'; got {self.ideal!r}")

    @property
    def needs_pool(self) -> bool:  # type: ignore[override]
        return self.ideal == "judged"

    def convention(self, k: int) -> str:
        gain = "linear (g)" if self.gain == "linear" else "exponential (2^g - 1)"
        ideal = (f"judged (the {k} best grades of every judged document)" if self.ideal == "judged"
                 else f"retrieved (the top {k} retrieved, re-sorted)")
        return f"{self._grades_text()}; gain {gain}; ideal {ideal}"

    def _value(self, graded: Graded | None, k: int, inputs: dict[str, Any]) -> tuple[float, str]:
        assert graded is not None
        top = graded.ranked[:k]
        ideal_from = graded.pool if self.ideal == "judged" else top
        idcg = _dcg(sorted(ideal_from, reverse=True)[:k], self.gain)
        if idcg == 0:
            where = "judged documents" if self.ideal == "judged" else f"top {k} documents"
            return _undefined(f"IDCG is 0: no positive grade among the {where}")
        return _dcg(top, self.gain) / idcg, ""


@dataclass(frozen=True)
class TemporalPrecision(TemporalMetric):
    """Temporal precision@k: ``#{i <= k : rel_i} / D``.

    ``denominator``: ``"retrieved"`` (default, TempoEval): ``D = min(k, n)``; ``"k"``: ``D = k`` (trec_eval's
    P@k, a short list is penalised). Undefined when ``D`` is 0 (nothing retrieved, ``denominator="retrieved"``).
    In LLM mode this is the same precision over the judge's grades (``rel``, default 2); TempoEval's LLM mode
    computes an average-precision-like "position-weighted precision" under this name instead.
    """

    denominator: Literal["retrieved", "k"] = "retrieved"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.denominator not in ("retrieved", "k"):
            raise PolicyError(f"denominator must be 'retrieved' or 'k'; got {self.denominator!r}")

    def convention(self, k: int) -> str:
        d = f"k ({k})" if self.denominator == "k" else f"retrieved (min({k}, documents retrieved))"
        return f"{self._relevance_text()}; denominator {d}"

    def _value(self, graded: Graded | None, k: int, inputs: dict[str, Any]) -> tuple[float, str]:
        assert graded is not None
        d = k if self.denominator == "k" else min(k, len(graded.ranked))
        if d == 0:
            return _undefined("nothing retrieved")
        return sum(graded.relevant[:k]) / d, ""


@dataclass(frozen=True)
class TemporalRecall(TemporalMetric):
    """Temporal recall@k: ``#{i <= k : rel_i} / R``.

    ``R`` is ``total_relevant`` when given (TempoEval's input: relevant documents in the collection), else the
    number of relevant documents in the judged pool (gold ids; every ``dfts``/``other_dfts`` entry; in LLM mode
    every document given, all graded). Undefined when ``R`` is 0. Relevance in focus-time mode is Jaccard >
    ``min_jaccard`` as in every metric (TempoEval compares the overlap *count* with its threshold here). In LLM mode
    TempoEval sums graded scores over the top k and divides by k -- a graded precision, not recall.
    """

    needs_pool = True
    EXTRA_INPUTS: ClassVar[frozenset[str]] = frozenset({"total_relevant"})

    def convention(self, k: int) -> str:
        return f"{self._relevance_text()}; R: total_relevant when given, else the relevant judged documents"

    def _value(self, graded: Graded | None, k: int, inputs: dict[str, Any]) -> tuple[float, str]:
        assert graded is not None
        total = inputs.get("total_relevant")
        if total is not None and (isinstance(total, bool) or not isinstance(total, int) or total < 0):
            raise InputError(f"total_relevant must be an integer >= 0; got {total!r}")
        found = sum(graded.relevant[:k])
        r = graded.pool_relevant if total is None else total
        if total is not None and found > total:
            raise InputError(f"total_relevant={total} but {found} relevant documents are in the top {k}")
        if r == 0:
            return _undefined("no relevant document (R = 0)")
        return found / r, ""


@dataclass(frozen=True)
class TemporalMRR(TemporalMetric):
    """Temporal reciprocal rank@k: ``1 / min{i <= k : rel_i}``, 0 when no relevant document is in the top k
    (a real 0, as trec_eval's RR). Its mean over queries is the MRR."""

    def convention(self, k: int) -> str:
        return f"{self._relevance_text()}; 0 when none is in the top {k}"

    def _value(self, graded: Graded | None, k: int, inputs: dict[str, Any]) -> tuple[float, str]:
        assert graded is not None
        for i, r in enumerate(graded.relevant[:k], start=1):
            if r:
                return 1.0 / i, ""
        return 0.0, ""


@dataclass(frozen=True)
class TemporalMAP(TemporalMetric):
    """Temporal average precision@k: ``sum_{i <= k, rel_i} P@i / D`` with ``P@i = #{j <= i : rel_j} / i``.

    ``denominator``: ``"judged"`` (default, trec_eval's AP): ``D = R``, the relevant documents of the judged pool,
    so relevant documents not retrieved count as misses; ``"retrieved"`` (TempoEval): ``D`` = relevant documents in
    the top k (a list with one relevant document at rank 1 scores 1.0). Undefined when ``D`` is 0. TempoEval has
    focus-time mode only; gold and LLM modes use the same formula.
    """

    denominator: Literal["judged", "retrieved"] = "judged"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.denominator not in ("judged", "retrieved"):
            raise PolicyError(f"denominator must be 'judged' or 'retrieved'; got {self.denominator!r}")

    @property
    def needs_pool(self) -> bool:  # type: ignore[override]
        return self.denominator == "judged"

    def convention(self, k: int) -> str:
        d = ("judged (R, the relevant judged documents)" if self.denominator == "judged"
             else f"retrieved (the relevant documents in the top {k})")
        return f"{self._relevance_text()}; denominator {d}"

    def _value(self, graded: Graded | None, k: int, inputs: dict[str, Any]) -> tuple[float, str]:
        assert graded is not None
        hits, total = 0, 0.0
        for i, r in enumerate(graded.relevant[:k], start=1):
            if r:
                hits += 1
                total += hits / i
        d = graded.pool_relevant if self.denominator == "judged" else hits
        if d == 0:
            return _undefined("no relevant document " + ("judged (R = 0)" if self.denominator == "judged"
                                                          else f"in the top {k}"))
        return total / d, ""
