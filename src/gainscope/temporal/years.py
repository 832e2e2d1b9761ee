"""Temporal metrics over the years the top ``k`` documents cover: year precision and recall, diversity, and
coverage of anchor periods. ``U = union(DFT_1, ..., DFT_k)`` is the union of the focus times of the top ``k``
documents and ``QFT`` the query's focus time.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from gainscope.errors import InputError, PolicyError
from gainscope.io.texts import Query
from gainscope.temporal.base import Mode, TemporalGradeError, TemporalMetric, TemporalScore, _check_k, _undefined
from gainscope.temporal.focus_time import FocusTime, as_focus_time
from gainscope.temporal.grades import Graded, _grade_all, as_documents, as_query

__all__ = ["TemporalCoverage", "TemporalDiversity", "TemporalYearPrecision", "TemporalYearRecall"]


def _union(dfts: object, k: int) -> FocusTime:
    if isinstance(dfts, str | FocusTime) or not isinstance(dfts, Sequence):
        raise InputError("dfts is a list with one focus time per retrieved document")
    years: set[int] = set()
    for i, d in enumerate(dfts[:k]):
        years |= as_focus_time(d, f"dfts[{i}]").years
    return FocusTime(frozenset(years))


async def _periods_covered(metric: TemporalMetric, inputs: dict[str, Any], k: int, periods: list[str],
                           what: str) -> TemporalScore:
    """LLM mode of coverage and diversity: for each period the judge grades every top-k document against
    ``"<query>\nTime period: <period>"``; a grade >= ``rel`` covers it. The share of periods covered."""
    judge = metric.judge()
    q = as_query(inputs["query"])
    docs = as_documents(inputs["retrieved_docs"], "retrieved_docs")[:k]
    pairs = [(Query(f"{q.query_id}@{p}", f"{q.text}\nTime period: {p}", q.title, q.narrative), d)
             for p in periods for d in docs]
    results = await _grade_all(judge, pairs)
    name = f"{metric}@{k}"
    failures = tuple((f"{d.doc_id} ({qq.text.rsplit(': ', 1)[-1]})", why)
                     for (qq, d), (_, why) in zip(pairs, results, strict=True) if why)
    if failures:
        if metric.on_failure == "raise":
            raise TemporalGradeError(name, failures)
        return TemporalScore(name, k, "llm", math.nan, (), f"the judge could not grade {len(failures)} "
                             f"(document, {what}) pair(s)", failures)
    rel = metric.relevance_grade
    covered = sum(any(results[i * len(docs) + j][0] >= rel for j in range(len(docs))) for i in range(len(periods)))
    return TemporalScore(name, k, "llm", covered / len(periods), tuple(g for g, _ in results))


@dataclass(frozen=True)
class _YearsMetric(TemporalMetric):
    """Focus-time metrics: the mode is focus time unless ``use_llm=True`` (where offered)."""

    modes: ClassVar[tuple[Mode, ...]] = ("focus_time",)

    @property
    def mode(self) -> Mode:
        return "llm" if self.use_llm else "focus_time"

    def parameters(self) -> dict[str, Any]:
        return {k: v for k, v in super().parameters().items() if k not in ("rel", "min_jaccard")}

    def _graded_sync(self, inputs: dict[str, Any]) -> Graded | None:
        self._check_inputs(inputs)
        _check_k(inputs.get("k", 10), type(self).__name__)
        return None


@dataclass(frozen=True)
class TemporalYearPrecision(_YearsMetric):
    """``|U ∩ QFT| / |U|``: the share of the years the top k cover that the query asks about. Undefined when
    ``U`` or ``QFT`` is empty (TempoEval: 0.0)."""

    INPUTS: ClassVar[Mapping[Mode, tuple[frozenset[str], frozenset[str]]]] = {
        "focus_time": (frozenset({"qft", "dfts"}), frozenset())}

    def convention(self, k: int) -> str:
        return f"U = the years of the top {k} documents' focus times; |U ∩ QFT| / |U|"

    def _value(self, graded: Graded | None, k: int, inputs: dict[str, Any]) -> tuple[float, str]:
        q, u = as_focus_time(inputs["qft"], "qft"), _union(inputs["dfts"], k)
        if not q:
            return _undefined("the query has no focus time (an empty QFT)")
        if not u:
            return _undefined(f"the top {k} documents have no focus time")
        return len(u & q) / len(u), ""


@dataclass(frozen=True)
class TemporalYearRecall(_YearsMetric):
    """``|U ∩ QFT| / |QFT|``: the share of the query's years the top k cover. Undefined when ``QFT`` is empty
    (TempoEval: 0.0)."""

    INPUTS: ClassVar[Mapping[Mode, tuple[frozenset[str], frozenset[str]]]] = {
        "focus_time": (frozenset({"qft", "dfts"}), frozenset())}

    def convention(self, k: int) -> str:
        return f"U = the years of the top {k} documents' focus times; |U ∩ QFT| / |QFT|"

    def _value(self, graded: Graded | None, k: int, inputs: dict[str, Any]) -> tuple[float, str]:
        q, u = as_focus_time(inputs["qft"], "qft"), _union(inputs["dfts"], k)
        if not q:
            return _undefined("the query has no focus time (an empty QFT)")
        return len(u & q) / len(q), ""


@dataclass(frozen=True)
class TemporalDiversity(_YearsMetric):
    """How much of a temporal scope the top k cover, in buckets of ``granularity`` years (1: years, 10: decades;
    a year ``y`` falls in bucket ``floor(y / granularity)``).

    * ``scope=`` a focus time ``S``: ``|B(U) ∩ B(S)| / |B(S)|``;
    * ``total_scope=`` a number ``N`` of buckets (TempoEval's input): ``min(1, |B(U)| / N)``.

    One of the two is required: TempoEval returns 1.0 without a scope ("perfect coverage of what's available"),
    which says nothing. ``granularity=10, total_scope=10`` is TempoEval's regex mode (distinct decades over 10
    expected periods) once the focus times are extracted.

    LLM mode (``use_llm=True, llm=judge``, with ``query``, ``retrieved_docs`` and ``scope=``): each bucket of the
    scope is a period ("1990-1994" for ``granularity=5``) that the judge is asked about as
    :class:`TemporalCoverage` asks about an anchor -- every top-k document graded against
    ``"<query>\nTime period: <bucket>"``, a grade >= ``rel`` (default 2) covers the bucket -- and the value is the
    share of buckets covered: ``buckets x k`` requests (a coarser ``granularity`` costs less). ``total_scope`` has no
    LLM mode (the judge needs the periods). TempoEval's LLM diversity asks the judge to list the years of each
    document and counts 5-year buckets over a fixed number of expected periods; here the judge grades, the value is
    bounded by the scope, and a failed grade is reported, never "not covered".
    """

    modes: ClassVar[tuple[Mode, ...]] = ("focus_time", "llm")
    INPUTS: ClassVar[Mapping[Mode, tuple[frozenset[str], frozenset[str]]]] = {
        "focus_time": (frozenset({"dfts"}), frozenset()), "llm": (frozenset({"query", "retrieved_docs"}), frozenset())}
    EXTRA_INPUTS: ClassVar[frozenset[str]] = frozenset({"scope", "total_scope"})

    granularity: int = 1

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.granularity, bool) or not isinstance(self.granularity, int) or self.granularity < 1:
            raise PolicyError(f"granularity must be an integer >= 1 (years per bucket); got {self.granularity!r}")

    def convention(self, k: int) -> str:
        size = f"buckets of {self.granularity} year{'s' if self.granularity > 1 else ''} (granularity)"
        if self.use_llm:
            return (f"{size} of scope=; a bucket is covered when the judge grades a top-{k} document >= "
                    f"{self.relevance_grade:g} (rel) against it")
        return f"{size}; scope= gives the buckets to cover, total_scope= N gives min(1, buckets covered / N)"

    def _buckets(self, scope: object) -> list[int]:
        return sorted({y // self.granularity for y in as_focus_time(scope, "scope").years})

    def _value(self, graded: Graded | None, k: int, inputs: dict[str, Any]) -> tuple[float, str]:
        scope, total = inputs.get("scope"), inputs.get("total_scope")
        if (scope is None) == (total is None):
            raise InputError("TemporalDiversity needs a temporal scope: scope=<the years to cover> or "
                             "total_scope=<number of years or buckets> (not both)")
        g = self.granularity
        covered = {y // g for y in _union(inputs["dfts"], k).years}
        if total is not None:
            if isinstance(total, bool) or not isinstance(total, int) or total < 1:
                raise InputError(f"total_scope must be an integer >= 1; got {total!r}")
            return min(1.0, len(covered) / total), ""
        buckets = set(self._buckets(scope))
        if not buckets:
            return _undefined("the scope is empty")
        return len(covered & buckets) / len(buckets), ""

    async def ascore(self, **inputs: Any) -> TemporalScore:
        if not self.use_llm:
            return self.score(**inputs)
        self._check_inputs(inputs)
        k = _check_k(inputs.get("k", 10), type(self).__name__)
        if inputs.get("total_scope") is not None or inputs.get("scope") is None:
            raise InputError("TemporalDiversity(use_llm=True) needs scope=<the years to cover>: the judge is asked "
                             "about each of its periods (total_scope, a number of buckets, names none)")
        buckets = self._buckets(inputs["scope"])
        if not buckets:
            return TemporalScore(f"{self}@{k}", k, "llm", math.nan, (), "the scope is empty")
        g = self.granularity
        periods = [str(b * g) if g == 1 else f"{b * g}-{b * g + g - 1}" for b in buckets]
        return await _periods_covered(self, inputs, k, periods, "period")


@dataclass(frozen=True)
class TemporalCoverage(_YearsMetric):
    """The share of anchor periods the top k cover: ``#{a in A : some top-k document covers a} / |A|``.

    ``anchors=[...]``, or TempoEval's ``baseline_anchor=`` and ``comparison_anchor=`` (then ``A`` has two anchors
    and the value is TempoEval's ``(baseline_covered + comparison_covered) / 2``).

    * focus-time mode (default): anchors are focus times; a document covers an anchor when its focus time shares a
      year with it.
    * LLM mode (``use_llm=True, llm=judge``): anchors are labels ("2017", "the 1990s"); for each anchor the judge
      grades every top-k document against the query ``"<query>\\nTime period: <anchor>"``, and a grade >= ``rel``
      (default 2) covers it. Failed grades follow ``on_failure``.

    Every query can be scored (TempoEval returns 0.0 unless the query's ``temporal_focus`` is a change-over-time
    type, and reads a failed judgment as "not covered").
    """

    modes: ClassVar[tuple[Mode, ...]] = ("focus_time", "llm")
    INPUTS: ClassVar[Mapping[Mode, tuple[frozenset[str], frozenset[str]]]] = {
        "focus_time": (frozenset({"dfts"}), frozenset()), "llm": (frozenset({"query", "retrieved_docs"}), frozenset())}
    EXTRA_INPUTS: ClassVar[frozenset[str]] = frozenset({"anchors", "baseline_anchor", "comparison_anchor"})

    def convention(self, k: int) -> str:
        if self.use_llm:
            return (f"an anchor is covered when the judge grades a top-{k} document >= {self.relevance_grade:g} "
                    "(rel) against it")
        return f"an anchor is covered when a top-{k} document's focus time shares a year with it"

    @staticmethod
    def _anchors(inputs: dict[str, Any]) -> list[object]:
        anchors = inputs.get("anchors")
        pair = [inputs.get("baseline_anchor"), inputs.get("comparison_anchor")]
        if anchors is not None and any(a is not None for a in pair):
            raise InputError("give anchors=[...] or baseline_anchor= and comparison_anchor=, not both")
        if anchors is None:
            if any(a is None for a in pair):
                raise InputError("TemporalCoverage needs the periods to cover: anchors=[...] or baseline_anchor= "
                                 "and comparison_anchor=")
            return pair
        if isinstance(anchors, str) or not isinstance(anchors, Sequence) or not anchors:
            raise InputError(f"anchors is a non-empty list of periods; got {anchors!r}")
        return list(anchors)

    def _value(self, graded: Graded | None, k: int, inputs: dict[str, Any]) -> tuple[float, str]:
        anchors = [as_focus_time(a, f"anchors[{i}]") for i, a in enumerate(self._anchors(inputs))]
        dfts = inputs["dfts"]
        if isinstance(dfts, str | FocusTime) or not isinstance(dfts, Sequence):
            raise InputError("dfts is a list with one focus time per retrieved document")
        top = [as_focus_time(d, f"dfts[{i}]") for i, d in enumerate(dfts[:k])]
        return sum(any(a & d for d in top) for a in anchors) / len(anchors), ""

    async def ascore(self, **inputs: Any) -> TemporalScore:
        if not self.use_llm:
            return self.score(**inputs)
        self._check_inputs(inputs)
        k = _check_k(inputs.get("k", 10), type(self).__name__)
        return await _periods_covered(self, inputs, k, [str(a) for a in self._anchors(inputs)], "anchor")
