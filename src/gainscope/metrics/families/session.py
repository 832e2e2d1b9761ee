r"""Session metrics: seed 003's Retrieved Good Gain over the iterations of a session, and session DCG.

A session (an agent's last turn) is a list of results in order, each returned by a search (several searches
may run in one iteration) in an iteration ``i = 1..N``; the same document may come back. The
:class:`~gainscope.core.judged_run.SessionLayout` of a judged run says, per position, its iteration and
search, whether it is the document's first occurrence, and whether its gain is unknown. A ranked list is a
session of one document per iteration (and per search): then ``iterDCG(good_gain=t)@k`` is ``DCG(rel=t)@k``.

Per iteration i (seed 003's notation; a first occurrence is *good* when its grade >= ``good_gain``, 2):

* ``|R^i|`` every result at i, duplicates included; ``|UR^i|`` first occurrences at i; ``|Dup^i|`` the others;
  ``|GR^i|`` good first occurrences at i; ``G_i`` the sum of their grades;
* ``AvgGain_i = G_i / |R^i|`` (0 when ``|R^i| = 0``).

Through i: ``R@i``, ``UR@i``, ``DupR@i``, ``GR@i`` and ``CG@i`` add the above over iterations 1..i; with
``w(k) = 1 / log2(k + 1)``: ``DCG@i = sum_k w(k) G_k``, ``RG@i = CG@i / i``, ``DRG@i = DCG@i / i``,
``RAG@i = (1/i) sum_k AvgGain_k``, ``DRAG@i = (1/i) sum_k w(k) AvgGain_k``, ``SRE@i = GR@i / R@i`` and
``SRR@i = DupR@i / R@i`` (0 when ``R@i = 0``).

**Names.** The seed's names where they are free: ``RG``, ``DRG``, ``AvgGain``, ``RAG``, ``DRAG``, ``SRE``,
``SRR``, ``IterationsForAllGoodResults``, ``sDCG``. Where the seed's name is already a core metric (``CG``
and ``DCG`` over ranks, ``R`` recall) the session metric is prefixed ``iter``: ``iterCG``, ``iterDCG``,
``iterR``, and so are the other counts, ``iterUR``, ``iterGR``, ``iterDupR``. ``@i`` is the iteration (None:
N, the session's last); ``scope="at"`` gives the value at iteration i alone (``iterR(scope=at)@i`` is
``|R^i|``, ``iterCG(scope=at)@i`` is ``G_i``). Past N a session adds empty iterations: sums stay, rates keep
dividing by i (as P@k divides by k past the end of a short ranking).

**Unknown gains.** A document whose gain is unknown (a failed judge, a trace without a gain) is not an
unjudged one (gain 0): from the iteration of its first occurrence on, every gain-based value (``|GR^i|``,
``G_i``, ``AvgGain_i`` at that iteration; ``GR``, ``CG``, ``DCG``, ``RG``, ``DRG``, ``RAG``, ``DRAG``, ``SRE``
through it and later) is undefined (NaN); counts of results and duplicates (R, UR, DupR, SRR) stay defined.

With N = 0 the values at N are those at i = 0: sums and counts 0, SRE and SRR 0 (``R@0 = 0``), RG, DRG, RAG
and DRAG undefined (a division by i = 0).

Sums run iteration by iteration in order and ``w(i)`` is computed with the C library's ``log2`` (as the plain
reference implementations compute it), so that the kernels' values equal the references' to the last bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from gainscope.core.policies import Policies
from gainscope.deferred import DeferredSeries, deferred_module
from gainscope.errors import InvalidParameterError
from gainscope.metrics.base import Explanation, GainMap, Metric, RankedQuery, Step, format_value, param
from gainscope.metrics.context import Context, ratio, segmented_cumsum
from gainscope.metrics.families.graded import _require_finite
from gainscope.metrics.gains import gain_array, gain_value
from gainscope.metrics.registry import register

if TYPE_CHECKING:
    import polars as pl
else:
    pl = deferred_module("polars")

__all__ = ["DRAG", "DRG", "RAG", "RG", "SRE", "SRR", "AvgGain", "IterCG", "IterDCG", "IterDupR", "IterGR", "IterR",
           "IterUR", "IterationsForAllGoodResults", "SessionDCG", "iteration_discount"]

_CUTOFF_DOC = "iteration i: the value through iteration i (at i with scope='at'); None = N, the last iteration"
_GOOD_DOC = "a first occurrence is good when its grade is at least this (seed 003: 2)"
_SCOPE_DOC = ("'through': iterations 1..i added up (R@i, CG@i); 'at': iteration i alone (|R^i|, G_i)")
_SCOPES = ("through", "at")


def iteration_discount(i: int) -> float:
    """Seed 003's iteration discount ``w(i) = 1 / log2(i + 1)``: 1, 0.631, 0.5, ..."""
    return 1.0 / math.log2(i + 1)


# ---------------------------------------------------------------------------------------------------------
# the layout of a judged run as a session (defaults for a ranked list), and per-iteration cells


@dataclass(frozen=True)
class _Layout:
    iteration: np.ndarray  # h
    search: np.ndarray     # h
    first: np.ndarray      # h, bool
    unknown: np.ndarray    # h, bool
    n: np.ndarray          # nq: N


def _layout(ctx: Context) -> _Layout:
    def make() -> _Layout:
        jr = ctx.jr
        s = jr.session
        if s is None:  # a ranked list: one document per iteration and per search
            h = len(jr.rank)
            return _Layout(jr.rank, jr.rank, np.ones(h, dtype=bool), np.zeros(h, dtype=bool),
                           jr.num_ret.astype(np.int64, copy=False))
        return _Layout(s.iteration, s.search, s.first, s.unknown, s.num_iterations)
    return ctx.cached("session_layout", make)


@dataclass(frozen=True)
class _Cells:
    """One cell per iteration 1..N of each query, in order: ``offsets`` (nq + 1), the cell of each position,
    the iteration weights w(i), the counts |R^i| and |UR^i|."""

    offsets: np.ndarray
    of_position: np.ndarray
    weight: np.ndarray
    r: np.ndarray
    ur: np.ndarray


def _weights(ctx: Context, top: int) -> np.ndarray:
    """``w(1..top)``, each from :func:`iteration_discount` (the C library's log2, as the references)."""
    return ctx.cached(("session_weights", top),
                      lambda: np.array([iteration_discount(i) for i in range(1, top + 1)], dtype=np.float64))


def _cells(ctx: Context) -> _Cells:
    def make() -> _Cells:
        lay = _layout(ctx)
        offsets = np.zeros(ctx.nq + 1, dtype=np.int64)
        np.cumsum(lay.n, out=offsets[1:])
        total = int(offsets[-1])
        of_position = offsets[:-1][ctx.segment] + lay.iteration - 1
        index = np.arange(total, dtype=np.int64) - np.repeat(offsets[:-1], lay.n)
        weight = _weights(ctx, int(lay.n.max(initial=0)))[index]
        if ctx.jr.session is None:  # a ranked list (dense or sparse): one result per iteration
            r = ur = np.ones(total, dtype=np.float64)
        else:
            r = np.bincount(of_position, minlength=total).astype(np.float64)
            ur = np.bincount(of_position[lay.first], minlength=total).astype(np.float64)
        return _Cells(offsets, of_position, weight, r, ur)
    return ctx.cached("session_cells", make)


def _good(ctx: Context, good_gain: float) -> tuple[np.ndarray, np.ndarray]:
    """Per cell: |GR^i| and G_i, NaN at the iteration where a document with an unknown gain first occurs."""
    def make() -> tuple[np.ndarray, np.ndarray]:
        lay, cells = _layout(ctx), _cells(ctx)
        total = len(cells.r)
        grades = ctx.jr.grades
        good = lay.first & (grades >= good_gain)
        at = cells.of_position[good]
        gr = np.bincount(at, minlength=total).astype(np.float64)
        g = np.bincount(at, weights=grades[good], minlength=total).astype(np.float64, copy=False)
        unknown = np.bincount(cells.of_position[lay.first & lay.unknown], minlength=total) > 0
        gr[unknown] = np.nan
        g[unknown] = np.nan
        return gr, g
    return ctx.cached(("session_good", good_gain), make)


def _cumulative(ctx: Context, key: Any, make: Any) -> np.ndarray:
    """Running sums of per-cell values within each query, in iteration order (cached under ``key``)."""
    return ctx.cached(("session_cum", key), lambda: segmented_cumsum(make(), _cells(ctx).offsets))


def _value(ctx: Context, key: Any, make: Any, cutoff: int | None, scope: str = "through") -> np.ndarray:
    """A per-cell series (``make()``, cached under ``key``) added up through iteration i, or at i alone."""
    if scope == "at":
        return _at(ctx, make(), cutoff)
    return _through(ctx, _cumulative(ctx, key, make), cutoff)


def _through(ctx: Context, cum: np.ndarray, cutoff: int | None) -> np.ndarray:
    """The running sum at iteration min(i, N) of each query (0 at i = 0)."""
    cells, n = _cells(ctx), _layout(ctx).n
    m = n if cutoff is None else np.minimum(n, cutoff)
    out = np.zeros(ctx.nq)
    ok = m > 0
    out[ok] = cum[cells.offsets[:-1][ok] + m[ok] - 1]
    return out


def _at(ctx: Context, values: np.ndarray, cutoff: int | None) -> np.ndarray:
    """The per-cell value at iteration i of each query (0 where the session has no iteration i)."""
    cells, n = _cells(ctx), _layout(ctx).n
    i = n if cutoff is None else np.full(ctx.nq, cutoff, dtype=np.int64)
    out = np.zeros(ctx.nq)
    ok = (i >= 1) & (i <= n)
    out[ok] = values[cells.offsets[:-1][ok] + i[ok] - 1]
    return out


def _divisor(ctx: Context, cutoff: int | None) -> np.ndarray:
    """i per query: the cutoff, or N."""
    return _layout(ctx).n.astype(np.float64) if cutoff is None else np.full(ctx.nq, float(cutoff))


# ---------------------------------------------------------------------------------------------------------
# the plain twins, for the reference implementations and explanations


@dataclass(frozen=True)
class _RefSession:
    iterations: list[int]
    searches: list[int]
    first: list[bool]
    unknown: list[bool]
    n: int


def _ref_session(q: RankedQuery) -> _RefSession:
    size = len(q.grades)
    ranks = list(range(1, size + 1))
    return _RefSession(list(q.iterations) or ranks, list(q.searches) or list(q.iterations) or ranks,
                       list(q.first) or [True] * size, list(q.unknown) or [False] * size,
                       q.num_iterations if q.num_iterations is not None else size)


def _ref_table(q: RankedQuery, good_gain: float) -> list[dict[str, float]]:
    """Seed 003's values at every iteration 1..N of one query, computed in the plain way (one loop)."""
    s = _ref_session(q)
    by_iteration: dict[int, list[int]] = {}
    for k, it in enumerate(s.iterations):
        by_iteration.setdefault(it, []).append(k)
    out = []
    r_at = ur_at = dup_at = 0
    gr_at = cg = dcg = avg_sum = davg_sum = 0.0
    for i in range(1, s.n + 1):
        members = by_iteration.get(i, [])
        new = [k for k in members if s.first[k]]
        if any(s.unknown[k] for k in new):
            gr_i = g_i = math.nan
        else:
            good = [g for k in new if (g := q.grades[k]) is not None and not math.isnan(g) and g >= good_gain]
            gr_i, g_i = float(len(good)), float(sum(good))
        r_i, ur_i = len(members), len(new)
        avg_i = g_i / r_i if r_i > 0 else 0.0
        w = iteration_discount(i)
        r_at += r_i
        ur_at += ur_i
        dup_at += r_i - ur_i
        gr_at += gr_i
        cg += g_i
        dcg += w * g_i
        avg_sum += avg_i
        davg_sum += w * avg_i
        out.append({"r_at": float(r_i), "ur_at": float(ur_i), "dup_at": float(r_i - ur_i), "gr_at": gr_i,
                    "g_at": g_i, "avg_at": avg_i, "r": float(r_at), "ur": float(ur_at), "dup": float(dup_at),
                    "gr": gr_at, "g": cg, "dcg": dcg, "avg": avg_sum, "davg": davg_sum})
    return out


def _ref_value(q: RankedQuery, good_gain: float, cutoff: int | None, key: str, *, at: bool = False) -> float:
    """The value ``key`` of :func:`_ref_table` through iteration min(i, N), or at iteration i with ``at``."""
    table = _ref_table(q, good_gain)
    i = len(table) if cutoff is None else cutoff
    if at:
        return table[i - 1][key] if 1 <= i <= len(table) else 0.0
    m = min(i, len(table))
    return table[m - 1][key] if m > 0 else 0.0


def _ref_scoped(q: RankedQuery, good_gain: float, cutoff: int | None, key: str, scope: str) -> float:
    """The reference of a series ``key`` through iteration i, or at i alone (``scope="at"``: ``key_at``)."""
    return _ref_value(q, good_gain, cutoff, key + "_at", at=True) if scope == "at" \
        else _ref_value(q, good_gain, cutoff, key)


def _ref_divisor(q: RankedQuery, cutoff: int | None) -> float:
    return float(_ref_session(q).n if cutoff is None else cutoff)


def _ref_ratio(num: float, den: float) -> float:
    return num / den if den > 0 else math.nan


# ---------------------------------------------------------------------------------------------------------
# counts


@dataclass(frozen=True, repr=False)
class _Session(Metric):
    """A session metric with an iteration cutoff ``@i`` (None: N)."""

    bounds: ClassVar[tuple[float | None, float | None]] = (0.0, None)
    reads_sessions: ClassVar[bool] = True

    cutoff: int | None = param(None, kind="int", ge=1, at=True, doc=_CUTOFF_DOC)


@dataclass(frozen=True, repr=False)
class _Count(_Session):
    """Results, first occurrences or duplicates, through iteration i or at i."""

    #: the per-cell count: ``"r"`` every result, ``"ur"`` first occurrences, ``"dup"`` repetitions
    count: ClassVar[str] = "r"
    order_independent: ClassVar[bool] = True

    scope: str = param("through", kind="choice", choices=_SCOPES, doc=_SCOPE_DOC)

    def _cell_values(self, ctx: Context) -> np.ndarray:
        cells = _cells(ctx)
        return {"r": cells.r, "ur": cells.ur, "dup": cells.r - cells.ur}[self.count]

    def compute(self, ctx: Context) -> np.ndarray:
        return _value(ctx, self.count, lambda: self._cell_values(ctx), self.cutoff, self.scope)

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        return _ref_scoped(q, 0.0, self.cutoff, self.count, self.scope)


@register
@dataclass(frozen=True, repr=False)
class IterR(_Count):
    """Results retrieved through iteration i, duplicates included (seed 003's R@i; ``scope=at``: |R^i|).

    Formula: ``R@i = sum_{k<=i} |R^k|`` with ``|R^k|`` every result of iteration k. For a ranked list,
    ``min(i, n)``.
    Reference: seed 003, "Retrieved Good Gain Metrics" (cumulative counts).
    """

    name: ClassVar[str] = "iterR"
    summary: ClassVar[str] = "results through iteration i, duplicates included (seed 003's R@i)"
    count: ClassVar[str] = "r"


@register
@dataclass(frozen=True, repr=False)
class IterUR(_Count):
    """Unique results through iteration i: first occurrences only (seed 003's UR@i; ``scope=at``: |UR^i|).

    Formula: ``UR@i = sum_{k<=i} |UR^k|`` with ``|UR^k|`` the results of iteration k not seen earlier in k nor
    in 1..k-1.
    Reference: seed 003, "Retrieved Good Gain Metrics" (cumulative counts).
    """

    name: ClassVar[str] = "iterUR"
    summary: ClassVar[str] = "unique results (first occurrences) through iteration i (seed 003's UR@i)"
    count: ClassVar[str] = "ur"


@register
@dataclass(frozen=True, repr=False)
class IterDupR(_Count):
    """Duplicate results through iteration i (seed 003's DupR@i; ``scope=at``: |Dup^i|).

    Formula: ``DupR@i = sum_{k<=i} |Dup^k| = R@i - UR@i``, ``|Dup^k|`` the results of iteration k already
    seen earlier in k or in 1..k-1.
    Reference: seed 003, "Retrieved Good Gain Metrics" (cumulative counts).
    """

    name: ClassVar[str] = "iterDupR"
    summary: ClassVar[str] = "duplicate results through iteration i (seed 003's DupR@i)"
    count: ClassVar[str] = "dup"


# ---------------------------------------------------------------------------------------------------------
# good gain


@dataclass(frozen=True, repr=False)
class _Good(_Session):
    """A session metric over good first occurrences (grade >= ``good_gain``)."""

    good_gain: float = param(2.0, kind="float", ge=0, doc=_GOOD_DOC)


@register
@dataclass(frozen=True, repr=False)
class IterGR(_Good):
    """Good unique results through iteration i (seed 003's GR@i; ``scope=at``: |GR^i|).

    Formula: ``GR@i = sum_{k<=i} |GR^k|``, ``|GR^k|`` the first occurrences at k with grade >= good_gain.
    Undefined from the iteration where a document with an unknown gain first occurs.
    Reference: seed 003, "Retrieved Good Gain Metrics" (cumulative counts).
    """

    name: ClassVar[str] = "iterGR"
    summary: ClassVar[str] = "good unique results through iteration i (seed 003's GR@i)"

    scope: str = param("through", kind="choice", choices=_SCOPES, doc=_SCOPE_DOC)

    def compute(self, ctx: Context) -> np.ndarray:
        return _value(ctx, ("gr", self.good_gain), lambda: _good(ctx, self.good_gain)[0], self.cutoff, self.scope)

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        return _ref_scoped(q, self.good_gain, self.cutoff, "gr", self.scope)


def _gain_steps(metric: IterCG | IterDCG, q: RankedQuery, discounted: bool) -> Explanation:
    """Position by position: the grade of each good first occurrence of the iterations counted (through i, or
    at i alone), times w(iteration) for iterDCG."""
    s = _ref_session(q)
    at = getattr(metric, "scope", "through") == "at"
    i = s.n if metric.cutoff is None else metric.cutoff
    steps = []
    total = 0.0
    unknown = False
    for k, (doc, g) in enumerate(zip(q.doc_ids or ("",) * len(q.grades), q.grades, strict=True)):
        it = s.iterations[k]
        if (it != i) if at else (it > i):
            continue
        unknown |= s.first[k] and s.unknown[k]
        gain = float(g) if s.first[k] and g is not None and not math.isnan(g) and g >= metric.good_gain else 0.0
        w = iteration_discount(it) if discounted else 1.0
        total += gain * w
        steps.append(Step(k + 1, doc, g, gain, w, gain * w, total))
    value = metric.reference(q, Policies())
    notes = (f"a document counts once, at its first occurrence, when its grade is >= {format_value(metric.good_gain)}"
             + ("; a document whose gain is unknown makes the value undefined" if unknown else ""),)
    formula = "sum of G_k * w(k), w(k) = 1/log2(k + 1), k = iteration" if discounted else "sum of good gains"
    return Explanation(str(metric), q.query_id, tuple(steps), (), value, 1.0, value, formula,
                       ("gain", "w(iteration)" if discounted else "weight", "contribution"), notes)


@register
@dataclass(frozen=True, repr=False)
class IterCG(_Good):
    """Cumulative good gain through iteration i (seed 003's CG@i; ``scope=at``: G_i, the gain of iteration i).

    Formula: ``CG@i = sum_{k<=i} G_k``, ``G_k = sum of the grades of the good first occurrences at k`` (grade
    >= good_gain; a duplicate adds nothing). Undefined from the iteration where a document with an unknown gain
    first occurs. For a ranked list, ``CG(rel=good_gain)@i``.
    Reference: seed 003, "Retrieved Good Gain Metrics", section 1; Järvelin & Kekäläinen, ACM TOIS 20(4), 2002.
    """

    name: ClassVar[str] = "iterCG"
    summary: ClassVar[str] = "cumulative good gain through iteration i (seed 003's CG@i)"

    scope: str = param("through", kind="choice", choices=_SCOPES, doc=_SCOPE_DOC)

    def compute(self, ctx: Context) -> np.ndarray:
        return _value(ctx, ("g", self.good_gain), lambda: _good(ctx, self.good_gain)[1], self.cutoff, self.scope)

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        return _ref_scoped(q, self.good_gain, self.cutoff, "g", self.scope)

    def explain(self, q: RankedQuery, policies: Policies) -> Explanation:
        return _gain_steps(self, q, discounted=False)


def _dcg_cum(ctx: Context, good_gain: float) -> np.ndarray:
    return _cumulative(ctx, ("dcg", good_gain), lambda: _cells(ctx).weight * _good(ctx, good_gain)[1])


@register
@dataclass(frozen=True, repr=False)
class IterDCG(_Good):
    """Discounted cumulative good gain through iteration i (seed 003's DCG@i): earlier iterations count more.

    Formula: ``DCG@i = sum_{k<=i} w(k) * G_k`` with ``w(k) = 1 / log2(k + 1)`` and G_k as for iterCG. Undefined
    from the iteration where a document with an unknown gain first occurs. For a ranked list,
    ``DCG(rel=good_gain)@i``.
    Reference: seed 003, "Retrieved Good Gain Metrics", section 3; Järvelin & Kekäläinen, ACM TOIS 20(4), 2002.
    """

    name: ClassVar[str] = "iterDCG"
    summary: ClassVar[str] = "discounted cumulative good gain through iteration i (seed 003's DCG@i)"

    def compute(self, ctx: Context) -> np.ndarray:
        return _through(ctx, _dcg_cum(ctx, self.good_gain), self.cutoff)

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        return _ref_value(q, self.good_gain, self.cutoff, "dcg")

    def explain(self, q: RankedQuery, policies: Policies) -> Explanation:
        return _gain_steps(self, q, discounted=True)


@register
@dataclass(frozen=True, repr=False)
class RG(_Good):
    """Rate of good gain: cumulative good gain per iteration (seed 003's RG@i).

    Formula: ``RG@i = CG@i / i``. Undefined at N = 0 and where CG@i is.
    Reference: seed 003, "Retrieved Good Gain Metrics", section 2.
    """

    name: ClassVar[str] = "RG"
    summary: ClassVar[str] = "rate of good gain: CG@i / i"

    def compute(self, ctx: Context) -> np.ndarray:
        cg = _value(ctx, ("g", self.good_gain), lambda: _good(ctx, self.good_gain)[1], self.cutoff)
        return ratio(cg, _divisor(ctx, self.cutoff))

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        return _ref_ratio(_ref_value(q, self.good_gain, self.cutoff, "g"), _ref_divisor(q, self.cutoff))


@register
@dataclass(frozen=True, repr=False)
class DRG(_Good):
    """Discounted rate of good gain (seed 003's DRG@i).

    Formula: ``DRG@i = DCG@i / i`` with DCG@i as for iterDCG. Undefined at N = 0 and where DCG@i is.
    Reference: seed 003, "Retrieved Good Gain Metrics", section 4.
    """

    name: ClassVar[str] = "DRG"
    summary: ClassVar[str] = "discounted rate of good gain: DCG@i / i"

    def compute(self, ctx: Context) -> np.ndarray:
        return ratio(_through(ctx, _dcg_cum(ctx, self.good_gain), self.cutoff), _divisor(ctx, self.cutoff))

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        return _ref_ratio(_ref_value(q, self.good_gain, self.cutoff, "dcg"), _ref_divisor(q, self.cutoff))


def _average_gain(ctx: Context, good_gain: float) -> np.ndarray:
    """AvgGain_i per cell: G_i / |R^i|, 0 for an iteration without results."""
    def make() -> np.ndarray:
        r = _cells(ctx).r
        g = _good(ctx, good_gain)[1]
        out = np.zeros(len(r))
        ok = r > 0
        out[ok] = g[ok] / r[ok]
        return out
    return ctx.cached(("session_avg", good_gain), make)


@register
@dataclass(frozen=True, repr=False)
class AvgGain(_Good):
    """Average good gain per result at iteration i (seed 003's AvgGain_i): duplicates dilute it.

    Formula: ``AvgGain_i = G_i / |R^i|`` (0 when ``|R^i| = 0``), G_i as for iterCG, ``|R^i|`` every result of
    iteration i, duplicates included. The value *at* iteration i (not through it); ``@None`` is AvgGain_N.
    Reference: seed 003, "Retrieved Good Gain Metrics", section 5.
    """

    name: ClassVar[str] = "AvgGain"
    summary: ClassVar[str] = "good gain per result at iteration i: G_i / |R^i|"

    def compute(self, ctx: Context) -> np.ndarray:
        return _at(ctx, _average_gain(ctx, self.good_gain), self.cutoff)

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        return _ref_value(q, self.good_gain, self.cutoff, "avg_at", at=True)


@register
@dataclass(frozen=True, repr=False)
class RAG(_Good):
    """Rate of average gain: the mean of AvgGain_k over iterations 1..i (seed 003's RAG@i).

    Formula: ``RAG@i = (1/i) * sum_{k<=i} AvgGain_k``. Undefined at N = 0 and from an unknown gain on.
    Reference: seed 003, "Retrieved Good Gain Metrics", section 6.
    """

    name: ClassVar[str] = "RAG"
    summary: ClassVar[str] = "rate of average gain: mean of AvgGain_k, k <= i"

    def compute(self, ctx: Context) -> np.ndarray:
        total = _value(ctx, ("avg", self.good_gain), lambda: _average_gain(ctx, self.good_gain), self.cutoff)
        return ratio(total, _divisor(ctx, self.cutoff))

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        return _ref_ratio(_ref_value(q, self.good_gain, self.cutoff, "avg"), _ref_divisor(q, self.cutoff))


@register
@dataclass(frozen=True, repr=False)
class DRAG(_Good):
    """Discounted rate of average gain (seed 003's DRAG@i): early efficiency counts more.

    Formula: ``DRAG@i = (1/i) * sum_{k<=i} w(k) * AvgGain_k`` with ``w(k) = 1 / log2(k + 1)``. Undefined at
    N = 0 and from an unknown gain on.
    Reference: seed 003, "Retrieved Good Gain Metrics", section 7.
    """

    name: ClassVar[str] = "DRAG"
    summary: ClassVar[str] = "discounted rate of average gain: mean of w(k) AvgGain_k, k <= i"

    def compute(self, ctx: Context) -> np.ndarray:
        total = _value(ctx, ("davg", self.good_gain), lambda: _cells(ctx).weight * _average_gain(ctx, self.good_gain),
                       self.cutoff)
        return ratio(total, _divisor(ctx, self.cutoff))

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        return _ref_ratio(_ref_value(q, self.good_gain, self.cutoff, "davg"), _ref_divisor(q, self.cutoff))


def _share(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den``, 0 where ``den`` is 0 (seed 003's convention for SRE and SRR); NaN stays NaN."""
    return np.where(den > 0, ratio(num, den), 0.0)


@register
@dataclass(frozen=True, repr=False)
class SRE(_Good):
    """Search result efficiency: the share of results through iteration i that are good and new (seed 003).

    Formula: ``SRE@i = GR@i / R@i``, 0 when ``R@i = 0``; duplicates count in the denominator only. Undefined
    from an unknown gain on.
    Reference: seed 003, "Retrieved Good Gain Metrics", section 8.
    """

    name: ClassVar[str] = "SRE"
    summary: ClassVar[str] = "search result efficiency: GR@i / R@i"
    bounds: ClassVar[tuple[float | None, float | None]] = (0.0, 1.0)

    def compute(self, ctx: Context) -> np.ndarray:
        gr = _value(ctx, ("gr", self.good_gain), lambda: _good(ctx, self.good_gain)[0], self.cutoff)
        return _share(gr, _value(ctx, "r", lambda: _cells(ctx).r, self.cutoff))

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        r = _ref_value(q, self.good_gain, self.cutoff, "r")
        return _ref_value(q, self.good_gain, self.cutoff, "gr") / r if r > 0 else 0.0


@register
@dataclass(frozen=True, repr=False)
class SRR(_Session):
    """Search result redundancy: the share of results through iteration i that are duplicates (seed 003).

    Formula: ``SRR@i = DupR@i / R@i``, 0 when ``R@i = 0``. Lower is better; always defined.
    Reference: seed 003, "Retrieved Good Gain Metrics", section 9.
    """

    name: ClassVar[str] = "SRR"
    summary: ClassVar[str] = "search result redundancy: DupR@i / R@i (lower is better)"
    bounds: ClassVar[tuple[float | None, float | None]] = (0.0, 1.0)
    order_independent: ClassVar[bool] = True

    def compute(self, ctx: Context) -> np.ndarray:
        cells = _cells(ctx)
        return _share(_value(ctx, "dup", lambda: cells.r - cells.ur, self.cutoff),
                      _value(ctx, "r", lambda: cells.r, self.cutoff))

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        r = _ref_value(q, 0.0, self.cutoff, "r")
        return _ref_value(q, 0.0, self.cutoff, "dup") / r if r > 0 else 0.0


# ---------------------------------------------------------------------------------------------------------
# IterationsForAllGoodResults


def _series(ids: pl.Series | DeferredSeries) -> pl.Series:
    """A judged run's doc ids as the polars Series (made now when deferred)."""
    return ids.series if isinstance(ids, DeferredSeries) else ids


def _retrieved_at(ctx: Context) -> np.ndarray:
    """Per judged grade, the first iteration at which the run retrieved that document (0 = never): the
    session's own record, or for a ranked list the rank of the judged document (found by doc id)."""
    def make() -> np.ndarray:
        jr = ctx.jr
        if jr.session is not None:
            return jr.session.judged_iteration
        if jr.doc_ids is None:  # pragma: no cover - every builder records the doc ids of judged positions
            raise ValueError("IterationsForAllGoodResults needs the doc ids of the ranked documents")
        ranked = (pl.DataFrame({"q": ctx.segment, "doc_id": _series(jr.doc_ids), "at": jr.rank})
                  .group_by("q", "doc_id").agg(pl.col("at").min()))
        judged = pl.DataFrame({"q": jr.judged_segment, "doc_id": _series(jr.judged_doc_ids),
                               "row": np.arange(len(jr.judged_grades))})
        found = judged.join(ranked, on=["q", "doc_id"], how="left").sort("row")
        return found["at"].fill_null(0).to_numpy().astype(np.int64, copy=False)
    return ctx.cached("session_retrieved_at", make)


@register
@dataclass(frozen=True, repr=False)
class IterationsForAllGoodResults(Metric):
    """The first iteration by which every good result had been retrieved, capped (seed 003, section 10).

    Formula: ``IterationsForAllGoodResults = min(k, cap)``, k the smallest iteration by which every good
    result was retrieved. ``target`` says which results must be found:

    * ``"judged"`` (default): every judged document with grade >= good_gain (the judgments know them all); k is
      the largest first-retrieval iteration among them. When some is never retrieved the value is the cap and
      *censored*. A document with an unknown gain is not a judged document and does not matter.
    * ``"retrieved"``: every good result the session retrieved (gains from the trace or a judge: no one knows
      the good results it missed); k is the iteration of the last good first occurrence. Undefined when some
      retrieved document's gain is unknown (it might be good).

    Undefined (NaN) when there is no good result to find, under every ``undefined`` policy (0 would read as the
    best value: lower is better). A value at the cap that is not an iteration count
    (never all retrieved, or only after the cap) is censored: Results leave it out of the mean and count it
    apart (:meth:`~gainscope.results.Results.censored_queries`). Lower is better, so a judged query without a
    ranking gets the value of an empty session (the cap, censored), not 0. For a ranked list the iterations are
    the ranks.
    Reference: seed 003, "Retrieved Good Gain Metrics", section 10; the censored aggregate: gainscope issue 13
    item 7.
    """

    name: ClassVar[str] = "IterationsForAllGoodResults"
    summary: ClassVar[str] = "first iteration by which every good result was retrieved, capped (lower is better)"
    bounds: ClassVar[tuple[float | None, float | None]] = (0.0, None)
    missing_scores_zero: ClassVar[bool] = False
    undefined_scores_zero: ClassVar[bool] = False
    reads_sessions: ClassVar[bool] = True

    good_gain: float = param(2.0, kind="float", ge=0, doc=_GOOD_DOC)
    cap: int = param(100, kind="int", ge=1, doc="the largest value; a session that needs more (or never "
                                                 "retrieves every good result) gets the cap, censored")
    target: str = param("judged", kind="choice", choices=("judged", "retrieved"),
                        doc="the good results to find: 'judged' every judged document with grade >= good_gain; "
                            "'retrieved' every good result the session retrieved (gains from a trace or a judge)")

    def _values(self, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
        def make() -> tuple[np.ndarray, np.ndarray]:
            nq = ctx.nq
            k = np.zeros(nq, dtype=np.int64)
            if self.target == "judged":
                jr = ctx.jr
                good = jr.judged_grades >= self.good_gain
                at = _retrieved_at(ctx)[good]
                seg = jr.judged_segment[good]
                wanted = np.bincount(seg, minlength=nq)
                missed = np.bincount(seg[at == 0], minlength=nq) > 0
                np.maximum.at(k, seg, at)
                undefined = wanted == 0
            else:
                lay = _layout(ctx)
                good = lay.first & (ctx.jr.grades >= self.good_gain)
                np.maximum.at(k, ctx.segment[good], lay.iteration[good])
                missed = np.zeros(nq, dtype=bool)
                undefined = (np.bincount(ctx.segment[good], minlength=nq) == 0) \
                    | (np.bincount(ctx.segment[lay.first & lay.unknown], minlength=nq) > 0)
            value = np.where(missed, float(self.cap), np.minimum(k, self.cap).astype(np.float64))
            censored = ~undefined & (missed | (k > self.cap))
            return np.where(undefined, np.nan, value), censored
        return ctx.cached(("all_good", self.good_gain, self.cap, self.target), make)

    def compute(self, ctx: Context) -> np.ndarray:
        return self._values(ctx)[0]

    def censored(self, ctx: Context) -> np.ndarray:
        return self._values(ctx)[1]

    def _reference(self, q: RankedQuery) -> tuple[float, bool]:
        s = _ref_session(q)
        if self.target == "judged":
            ids: list[str | None] = [*q.judged_doc_ids, *[None] * (len(q.judged) - len(q.judged_doc_ids))]
            found = list(q.judged_iterations) if q.judged_iterations else [
                next((r for r, d in enumerate(q.doc_ids, start=1) if doc is not None and d == doc), 0)
                for doc in ids]
            wanted = [at for g, at in zip(q.judged, found, strict=True) if g >= self.good_gain]
            if not wanted:
                return math.nan, False
            if 0 in wanted:
                return float(self.cap), True
            k = max(wanted)
        else:
            firsts = [k for k in range(len(q.grades)) if s.first[k]]
            if any(s.unknown[k] for k in firsts):
                return math.nan, False
            good = [s.iterations[k] for k in firsts
                    if (g := q.grades[k]) is not None and not math.isnan(g) and g >= self.good_gain]
            if not good:
                return math.nan, False
            k = max(good)
        return float(min(k, self.cap)), k > self.cap

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        return self._reference(q)[0]

    def reference_censored(self, q: RankedQuery, policies: Policies) -> bool:
        return self._reference(q)[1]


# ---------------------------------------------------------------------------------------------------------
# session DCG


#: what to report instead of an sDCG whose exponential gains exceed float64
_SMALLER_GAINS = "give sDCG linear gains or a map of smaller gains instead"


def _unmapped(metric: SessionDCG, grades: np.ndarray) -> None:
    """Refuse a judged grade (>= 0) that sDCG's gain map does not give (the first one, in order): the map
    weights every relevance level."""
    if not isinstance(metric.gain, GainMap):
        return
    mapped = np.array([g for g, _ in metric.gain.items], dtype=np.float64)
    missing = grades[(grades >= 0) & ~np.isin(grades, mapped)]
    if len(missing):
        raise InvalidParameterError(
            f"the sDCG gain mapping has no gain for grade {format(float(missing[0]), 'g')} (it maps "
            f"{', '.join(format(g, 'g') for g in mapped.tolist())}): {metric} must give every grade its gain")


@register
@dataclass(frozen=True, repr=False)
class SessionDCG(Metric):
    """Session DCG: the DCG of each search's list, discounted by the search's position in the session.

    Formula: ``sDCG = sum_q DCG_q / (1 + log_bq(q))`` with ``DCG_q = sum_j gain_q(j) / max(1, log_b(j))`` over
    the ranks j of search q (the session's searches numbered 1, 2, ..., empty ones included).

    ``gain_q(j)`` is the gain of the document at rank j of search q at its first occurrence in the session, 0 at
    every later one (an agent that re-finds a result has found nothing new; the paper counts it again). With a
    ``depth`` only ranks j <= depth count, and a document first met below the depth still counts where it is
    met later within it. Gains: ``linear`` the grade itself, ``exponential`` 2^grade - 1, or a map that must
    give every judged grade its gain (a grade it does not list is an error, not gain = grade: the paper weights
    each relevance level, e.g. ``{0: 0, 1: 1, 2: 10, 3: 100, 4: 1000}``). Unjudged and negative grades count
    0. Undefined when a counted document's gain is unknown. For a ranked list every rank is its own search. A
    value beyond float64 (exponential gain from grade 1024 on) is an error (MetricError), never ``inf``.
    Reference: Järvelin, Price, Delcambre & Nielsen, "Discounted Cumulated Gain based Evaluation of Multiple-Query
    IR Sessions", ECIR 2008 (b = 2, bq = 4).
    """

    name: ClassVar[str] = "sDCG"
    summary: ClassVar[str] = "session DCG: each search's DCG discounted by its position in the session"
    bounds: ClassVar[tuple[float | None, float | None]] = (0.0, None)
    reads_sessions: ClassVar[bool] = True

    b: float = param(2.0, kind="float", gt=1, doc="rank discount log base: rank j counts gain / max(1, log_b j)")
    bq: float = param(4.0, kind="float", gt=1, doc="search discount log base: search q counts DCG_q / (1 + log_bq q)")
    depth: int | None = param(None, kind="int", ge=1, doc="ranks counted per search; None = all")
    gain: Any = param("linear", kind="gain", choices=("linear", "exponential"),
                      doc="'linear' (gain = grade), 'exponential' (2^grade - 1) or a {grade: gain} map giving every "
                          "grade")

    def compute(self, ctx: Context) -> np.ndarray:
        jr, lay = ctx.jr, _layout(ctx)
        # the searches' cells: positions are in (query, search) order; rank j within its search
        h = len(jr.rank)
        starts = np.ones(h, dtype=bool)
        if h:
            starts[1:] = (ctx.segment[1:] != ctx.segment[:-1]) | (lay.search[1:] != lay.search[:-1])
        cell = np.cumsum(starts) - 1
        j = np.arange(h) - np.flatnonzero(starts)[cell] + 1
        kept = np.ones(h, dtype=bool) if self.depth is None else j <= self.depth
        if jr.session is None:
            counted = kept
        elif self.depth is None:
            counted = lay.first
        elif jr.doc_ids is None:  # pragma: no cover - build_session_run always records the documents
            raise ValueError("sDCG with a depth needs the doc ids of a session's documents")
        else:  # first occurrences among the ranks within the depth
            counted = kept.copy()
            where = np.flatnonzero(kept)
            counted[where] = pl.DataFrame({"q": ctx.segment[where], "d": _series(jr.doc_ids).gather(where)}) \
                .select(pl.struct("q", "d").is_first_distinct()).to_series().to_numpy()
        grades = jr.grades[counted]
        _unmapped(self, grades)
        gains = gain_array(grades, self.gain)
        gains[lay.unknown[counted]] = np.nan
        rank_discount = self._table(ctx, "b", int(j.max(initial=0)))[j[counted] - 1]
        ncells = int(cell[-1]) + 1 if h else 0
        per_search = np.bincount(cell[counted], weights=gains / rank_discount, minlength=ncells)
        cell_query = ctx.segment[starts]
        search_discount = self._table(ctx, "bq", int(lay.search.max(initial=0)))[lay.search[starts] - 1]
        out = np.bincount(cell_query, weights=per_search / search_discount, minlength=ctx.nq)
        _require_finite(self, jr.query_ids, out, instead=_SMALLER_GAINS)
        return out

    def _table(self, ctx: Context, which: str, top: int) -> np.ndarray:
        """``max(1, log_b j)`` (rank discounts) or ``1 + log_bq q`` (search discounts) for 1..top, with the C
        library's log, as the reference computes them."""
        def make() -> np.ndarray:
            if which == "b":
                return np.array([max(1.0, math.log(x, self.b)) for x in range(1, top + 1)], dtype=np.float64)
            return np.array([1.0 + math.log(x, self.bq) for x in range(1, top + 1)], dtype=np.float64)
        return ctx.cached(("sdcg_table", which, self.b if which == "b" else self.bq, top), make)

    def _terms(self, q: RankedQuery) -> list[tuple[int, int, int, float]]:
        """Per counted position, in order: (index, rank j in its search, search q, gain; NaN when unknown). A
        session's document counts at its first occurrence within the depth (by doc id); in a ranked list every
        rank is a document of its own."""
        s = _ref_session(q)
        session = bool(q.first)
        seen: set[str] = set()
        out = []
        start = 0
        for k, g in enumerate(q.grades):
            if k and s.searches[k] != s.searches[k - 1]:
                start = k
            j = k - start + 1
            if self.depth is not None and j > self.depth:
                continue
            if session:
                if q.doc_ids[k] in seen:
                    continue
                seen.add(q.doc_ids[k])
            if g is not None and not math.isnan(g):
                _unmapped(self, np.array([g]))
            out.append((k, j, s.searches[k], math.nan if s.unknown[k] else gain_value(g, self.gain)))
        return out

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        per_search: dict[int, float] = {}
        for _, j, search, gain in self._terms(q):
            per_search[search] = per_search.get(search, 0.0) + gain / max(1.0, math.log(j, self.b))
        total = 0.0
        for search in sorted(per_search):
            total += per_search[search] / (1.0 + math.log(search, self.bq))
        _require_finite(self, (q.query_id,), np.array([total]), instead=_SMALLER_GAINS)
        return total

    def explain(self, q: RankedQuery, policies: Policies) -> Explanation:
        steps = []
        total = 0.0
        for k, j, search, gain in self._terms(q):
            discount = max(1.0, math.log(j, self.b)) * (1.0 + math.log(search, self.bq))
            total += gain / discount
            steps.append(Step(k + 1, q.doc_ids[k] if q.doc_ids else "", q.grades[k], gain, 1.0 / discount,
                              gain / discount, total))
        value = self.reference(q, policies)
        return Explanation(str(self), q.query_id, tuple(steps), (), value, 1.0, value,
                           f"sum of gain / (max(1, log_{format_value(self.b)} j) * (1 + log_{format_value(self.bq)} q))"
                           ", j = rank in its search, q = search", ("gain", "discount", "contribution"),
                           ("each document counts once, at its first occurrence within the depth",))
