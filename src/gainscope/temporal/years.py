"""Temporal metrics over the years the top ``k`` documents cover: year precision and recall, diversity, and
coverage of anchor periods. ``U = union(DFT_1, ..., DFT_k)`` is the union of the focus times of the top ``k``
documents and ``QFT`` the query's focus time.

Each is a core set measure over a ranking the adapter derives from the top ``k`` (:mod:`gainscope.temporal.engine`):
the "retrieved" items are what the top ``k`` cover -- the years of ``U``, their buckets, the anchors covered -- and
the judged relevant items what the query asks for -- the years of ``QFT``, the buckets of the scope, the anchors.
Then ``SetP = |retrieved ∩ relevant| / |retrieved|`` and ``SetR = |retrieved ∩ relevant| / |relevant|``
(trec_eval's ``set_P`` and ``set_recall``) give the four metrics.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from gainscope.core.policies import Level
from gainscope.core.rankings import Ranking
from gainscope.errors import InputError
from gainscope.io.texts import Query
from gainscope.metrics.base import Metric
from gainscope.metrics.families.sets import SetP, SetR
from gainscope.temporal.base import Mode, TemporalMetric, invalid
from gainscope.temporal.engine import Prepared
from gainscope.temporal.focus_time import FocusTime, as_focus_time
from gainscope.temporal.grades import as_documents, as_query, fresh_ids, grade_all

__all__ = ["TemporalCoverage", "TemporalDiversity", "TemporalYearPrecision", "TemporalYearRecall"]

#: the grade of an item the query asks for, in the derived rankings
_ASKED = 1.0


def _union(dfts: object, k: int) -> FocusTime:
    if isinstance(dfts, str | FocusTime) or not isinstance(dfts, Sequence):
        raise InputError("dfts is a list with one focus time per retrieved document")
    years: set[int] = set()
    for i, d in enumerate(dfts[:k]):
        years |= as_focus_time(d, f"dfts[{i}]").years
    return FocusTime(frozenset(years))


def _derived(covered: Iterable[object], asked: Iterable[object]) -> Ranking:
    """The derived ranking: the items covered, judged by the items asked for (the order does not matter to a set
    measure)."""
    return Ranking("q", tuple(str(c) for c in covered), dict.fromkeys((str(a) for a in asked), _ASKED))


async def _periods_covered(metric: TemporalMetric, inputs: Mapping[str, Any], k: int, periods: list[str],
                           what: str) -> Prepared:
    """LLM mode of coverage and diversity: for each period the judge grades every top-k document against
    ``"<query>\\nTime period: <period>"``; a grade >= ``rel`` covers it. The derived ranking of the periods covered,
    judged by every period."""
    judge = metric.judge()
    q = as_query(inputs["query"])
    docs = as_documents(inputs["retrieved_docs"], "retrieved_docs")[:k]
    pairs = [(Query(f"{q.query_id}@{p}", f"{q.text}\nTime period: {p}", q.title, q.narrative), d)
             for p in periods for d in docs]
    results = await grade_all(judge, pairs)
    grades = tuple(g for g, _ in results)
    failures = tuple((f"{d.doc_id} ({qq.text.rsplit(': ', 1)[-1]})", why)
                     for (qq, d), (_, why) in zip(pairs, results, strict=True) if why)
    if failures:
        return Prepared(None, (), f"the judge could not grade {len(failures)} (document, {what}) pair(s)", failures)
    rel = metric.relevance_grade
    ids = [f"{what}{i + 1}" for i in range(len(periods))]
    covered = [ids[i] for i in range(len(periods)) if any(g >= rel for g in grades[i * len(docs):(i + 1) * len(docs)])]
    return Prepared(_derived(covered, ids), grades)


@dataclass(frozen=True)
class _YearsMetric(TemporalMetric):
    """Focus-time metrics: the mode is focus time unless ``use_llm=True`` (where offered)."""

    modes: ClassVar[tuple[Mode, ...]] = ("focus_time",)
    #: the core set measure over the derived ranking
    measure: ClassVar[type[SetP | SetR]] = SetR

    @property
    def mode(self) -> Mode:
        return "llm" if self.use_llm else "focus_time"

    def parameters(self) -> dict[str, Any]:
        return {k: v for k, v in super().parameters().items() if k not in ("rel", "min_jaccard")}

    def own_rel(self) -> Level | None:
        # the derived items asked for are graded 1: relevant at the focus-time level (grade > 0), not at LLM mode's
        return None if self.mode == "focus_time" else _ASKED

    def core(self, k: int) -> Metric:
        return self.measure(rel=self.own_rel())

    def derive(self, inputs: Mapping[str, Any], k: int) -> Prepared:
        """The derived ranking of the top ``k`` for this metric (focus-time mode)."""
        raise NotImplementedError

    def prepare(self, inputs: Mapping[str, Any]) -> Prepared:
        return self.derive(inputs, self.check_inputs(inputs))


_NO_QFT = "the query has no focus time (an empty QFT)"


@dataclass(frozen=True)
class _QueryYears(_YearsMetric):
    """Year precision and recall: the years of ``U`` judged by the years of ``QFT`` (undefined without QFT)."""

    INPUTS: ClassVar[Mapping[Mode, tuple[frozenset[str], frozenset[str]]]] = {
        "focus_time": (frozenset({"qft", "dfts"}), frozenset())}

    def describe_core(self, k: int) -> str:
        return f"{self.core(k)} of the years of the top {k} documents, judged by the query's years"

    def derive(self, inputs: Mapping[str, Any], k: int) -> Prepared:
        q, u = as_focus_time(inputs["qft"], "qft"), _union(inputs["dfts"], k)
        return Prepared(_derived(sorted(u.years), q.years)) if q else Prepared(None, (), _NO_QFT)


@dataclass(frozen=True)
class TemporalYearPrecision(_QueryYears):
    """``|U ∩ QFT| / |U|``: the share of the years the top k cover that the query asks about; the core's
    ``SetP`` over the years of ``U`` judged by the years of ``QFT``. Undefined when ``U`` or ``QFT`` is empty
    (TempoEval: 0.0)."""

    measure: ClassVar[type[SetP | SetR]] = SetP

    def convention(self, k: int) -> str:
        return f"U = the years of the top {k} documents' focus times; |U ∩ QFT| / |U|"

    def reason(self, k: int) -> str:
        return f"the top {k} documents have no focus time"


@dataclass(frozen=True)
class TemporalYearRecall(_QueryYears):
    """``|U ∩ QFT| / |QFT|``: the share of the query's years the top k cover; the core's ``SetR`` over the years
    of ``U`` judged by the years of ``QFT``. Undefined when ``QFT`` is empty (TempoEval: 0.0)."""

    def convention(self, k: int) -> str:
        return f"U = the years of the top {k} documents' focus times; |U ∩ QFT| / |QFT|"


@dataclass(frozen=True)
class TemporalDiversity(_YearsMetric):
    """How much of a temporal scope the top k cover, in buckets of ``granularity`` years (1: years, 10: decades;
    a year ``y`` falls in bucket ``floor(y / granularity)``); the core's ``SetR`` over the buckets of ``U``.

    * ``scope=`` a focus time ``S``: ``|B(U) ∩ B(S)| / |B(S)|`` -- judged by the buckets of ``S``;
    * ``total_scope=`` a number ``N`` of buckets (TempoEval's input): ``min(1, |B(U)| / N)`` -- judged by the
      buckets of ``U`` and placeholders for the ``N - |B(U)|`` buckets (if any) that the scope has and the top k
      do not cover, so that ``R = max(N, |B(U)|)``.

    One of the two is required: TempoEval returns 1.0 without a scope ("perfect coverage of what's available"),
    which says nothing. ``granularity=10, total_scope=10`` is TempoEval's regex mode (distinct decades over 10
    expected periods) once the focus times are extracted.

    LLM mode (``use_llm=True, llm=judge``, with ``query``, ``retrieved_docs`` and ``scope=``): each bucket of the
    scope is a period ("1990-1994" for ``granularity=5``) that the judge is asked about as
    :class:`TemporalCoverage` asks about an anchor -- every top-k document graded against
    ``"<query>\\nTime period: <bucket>"``, a grade >= ``rel`` (default 2) covers the bucket -- and the value is the
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
            raise invalid(type(self).__name__, "granularity", "an int >= 1 (years per bucket)", self.granularity)

    def convention(self, k: int) -> str:
        size = f"buckets of {self.granularity} year{'s' if self.granularity > 1 else ''} (granularity)"
        if self.use_llm:
            return (f"{size} of scope=; a bucket is covered when the judge grades a top-{k} document "
                    f"{self.rel_text()} (rel) against it")
        return f"{size}; scope= gives the buckets to cover, total_scope= N gives min(1, buckets covered / N)"

    def describe_core(self, k: int) -> str:
        return (f"{self.core(k)} of the buckets the top {k} documents cover, judged by the scope's buckets "
                "(total_scope: by placeholders up to N)")

    def reason(self, k: int) -> str:
        return "the scope is empty"

    def _buckets(self, scope: object) -> list[int]:
        return sorted({y // self.granularity for y in as_focus_time(scope, "scope").years})

    def derive(self, inputs: Mapping[str, Any], k: int) -> Prepared:
        scope, total = inputs.get("scope"), inputs.get("total_scope")
        if (scope is None) == (total is None):
            raise InputError("TemporalDiversity needs a temporal scope: scope=<the years to cover> or "
                             "total_scope=<number of years or buckets> (not both)")
        covered = sorted({y // self.granularity for y in _union(inputs["dfts"], k).years})
        if total is None:
            return Prepared(_derived(covered, self._buckets(scope)))
        if isinstance(total, bool) or not isinstance(total, int) or total < 1:
            raise InputError(f"total_scope must be an integer >= 1; got {total!r}")
        unnamed = fresh_ids("bucket:", total - len(covered), set())
        return Prepared(_derived(covered, [*covered, *unnamed]))

    async def aprepare(self, inputs: Mapping[str, Any]) -> Prepared:
        k = self.check_inputs(inputs)
        if inputs.get("total_scope") is not None or inputs.get("scope") is None:
            raise InputError("TemporalDiversity(use_llm=True) needs scope=<the years to cover>: the judge is asked "
                             "about each of its periods (total_scope, a number of buckets, names none)")
        buckets = self._buckets(inputs["scope"])
        if not buckets:
            return Prepared(None, (), "the scope is empty")
        g = self.granularity
        periods = [str(b * g) if g == 1 else f"{b * g}-{b * g + g - 1}" for b in buckets]
        return await _periods_covered(self, inputs, k, periods, "period")


@dataclass(frozen=True)
class TemporalCoverage(_YearsMetric):
    """The share of anchor periods the top k cover: ``#{a in A : some top-k document covers a} / |A|``; the core's
    ``SetR`` over the anchors covered, judged by every anchor.

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
            return f"an anchor is covered when the judge grades a top-{k} document {self.rel_text()} (rel) against it"
        return f"an anchor is covered when a top-{k} document's focus time shares a year with it"

    def describe_core(self, k: int) -> str:
        return f"{self.core(k)} of the anchors the top {k} documents cover, judged by every anchor"

    @staticmethod
    def _anchors(inputs: Mapping[str, Any]) -> list[object]:
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

    def derive(self, inputs: Mapping[str, Any], k: int) -> Prepared:
        anchors = [as_focus_time(a, f"anchors[{i}]") for i, a in enumerate(self._anchors(inputs))]
        dfts = inputs["dfts"]
        if isinstance(dfts, str | FocusTime) or not isinstance(dfts, Sequence):
            raise InputError("dfts is a list with one focus time per retrieved document")
        top = [as_focus_time(d, f"dfts[{i}]") for i, d in enumerate(dfts[:k])]
        ids = [f"anchor{i + 1}" for i in range(len(anchors))]
        return Prepared(_derived([i for i, a in zip(ids, anchors, strict=True) if any(a & d for d in top)], ids))

    async def aprepare(self, inputs: Mapping[str, Any]) -> Prepared:
        k = self.check_inputs(inputs)
        return await _periods_covered(self, inputs, k, [str(a) for a in self._anchors(inputs)], "anchor")
