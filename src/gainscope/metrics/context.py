"""Shared, cached building blocks for the kernels: masks, per-query totals and sums up to a cutoff.

Every helper works on all queries at once. A query's ranking is the slice ``offsets[q]:offsets[q+1]`` of
the flat arrays of a :class:`~gainscope.core.judged_run.JudgedRun`; sums "up to rank k" are read off one
global cumulative sum with a gather per query, so a cutoff costs O(number of queries), not O(documents).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from functools import cached_property
from typing import Any, TypeVar, cast

import numpy as np

from gainscope.core.judged_run import JudgedRun
from gainscope.core.policies import Policies

__all__ = ["Context", "ratio", "segmented_cumsum"]

T = TypeVar("T")
Weight = str | tuple[str, float]


def segmented_cumsum(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Running sums restarted at each segment ``offsets[i]:offsets[i+1]``, each accumulated in order."""
    n = len(values)
    out = np.empty(n, dtype=np.float64)
    if n == 0:
        return out
    lengths = np.diff(offsets)
    width = int(lengths.max())
    nseg = len(lengths)
    if nseg * width <= 4 * n + 1024:
        pos = np.arange(n) - np.repeat(offsets[:-1], lengths)
        seg = np.repeat(np.arange(nseg), lengths)
        dense = np.zeros((nseg, width))
        dense[seg, pos] = values
        np.cumsum(dense, axis=1, out=dense)
        out[:] = dense[seg, pos]
        return out
    for i in np.flatnonzero(lengths).tolist():
        a, b = int(offsets[i]), int(offsets[i + 1])
        np.cumsum(values[a:b], out=out[a:b])
    return out


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` per query, NaN (undefined) where ``den`` is 0."""
    out = np.full(len(num), np.nan)
    ok = den > 0
    out[ok] = num[ok] / den[ok]
    return out


class Context:
    """Cached arrays derived from one JudgedRun, shared by all metrics of one evaluation."""

    def __init__(self, jr: JudgedRun, *, max_grade: float | None = None) -> None:
        self.jr = jr
        self.policies: Policies = jr.policies
        self._cache: dict[Hashable, Any] = {}
        # the whole evaluation's, when jr holds only some of its queries (None: jr's own)
        self._max_grade = None if max_grade is None else float(max_grade)

    def cached(self, key: Hashable, make: Callable[[], T]) -> T:
        """Memoise ``make()`` under ``key`` for the life of this context."""
        if key not in self._cache:
            self._cache[key] = make()
        return cast(T, self._cache[key])

    # ------------------------------------------------------------------ shapes
    @property
    def nq(self) -> int:
        """Number of queries."""
        return self.jr.num_queries

    @property
    def lengths(self) -> np.ndarray:
        """Number of documents retrieved per query (after depth and judged-only)."""
        return self.jr.num_ret

    @property
    def position(self) -> np.ndarray:
        """1-based rank of each kept position."""
        return self.jr.rank

    @property
    def segment(self) -> np.ndarray:
        """Query index of each ranked document."""
        return self.jr.segment

    @property
    def max_grade(self) -> float:
        """Largest grade over all evaluated queries, judged or ranked (0 when none is positive):
        :attr:`JudgedRun.top_grade <gainscope.core.judged_run.JudgedRun.top_grade>`. A distributed engine that
        evaluates a part of the queries at a time passes the whole evaluation's value to the constructor."""
        return self.jr.top_grade if self._max_grade is None else self._max_grade

    @cached_property
    def top_ranked_grade(self) -> float:
        """Largest grade of any ranked document of any query (0 when none is judged): what a given top of the
        grading scale must not be below."""
        g = self.jr.grades
        return float(np.nanmax(g)) if len(g) and not np.isnan(g).all() else 0.0

    @cached_property
    def judged_descending(self) -> bool:
        """True when every query's judged grades are sorted descending (as the builders of judged runs make them):
        then a query's best judged grades are its first ones."""
        return _descending_within(self.jr.judged_grades, self.jr.judged_offsets)

    # ------------------------------------------------------------------ masks over ranked documents
    def relevant(self, level: float) -> np.ndarray:
        """Ranked documents with grade >= level (never the unjudged ones: NaN compares False)."""
        return self.cached(("relevant", level), lambda: self.jr.grades >= level)

    @cached_property
    def top_rank(self) -> int:
        """The deepest kept rank of any query (0 when none): a cutoff at or past it cuts nothing."""
        return int(self.jr.rank.max(initial=0))

    @cached_property
    def judged(self) -> np.ndarray:
        """Ranked documents that are judged (grade >= 0; NaN and negative grades are unjudged)."""
        return self.jr.grades >= 0

    def nonrelevant_judged(self, level: float) -> np.ndarray:
        """Judged ranked documents below the relevance level."""
        return self.cached(("nonrel", level), lambda: self.judged & ~self.relevant(level))

    # ------------------------------------------------------------------ per-query totals
    def num_rel(self, level: float) -> np.ndarray:
        """R: judged documents with grade >= level, per query (from the judgments, not the run)."""
        return self.cached(("num_rel", level), lambda: self.judged_count(self.jr.judged_grades >= level))

    def num_nonrel(self, level: float) -> np.ndarray:
        """N: judged documents with 0 <= grade < level, per query."""
        return self.cached(("num_nonrel", level), lambda: self.judged_count(self.jr.judged_grades < level))

    def judged_count(self, mask: np.ndarray) -> np.ndarray:
        """Per query, how many of its judged grades ``mask`` holds (as floats): differences of one running count
        at the query bounds, exact integers (no per-judgment query index is made)."""
        return segment_counts(mask, self.jr.judged_offsets).astype(np.float64)

    def per_query_sum(self, values: np.ndarray) -> np.ndarray:
        """Sum of per-document values within each query."""
        return np.bincount(self.segment, weights=values, minlength=self.nq)

    # ------------------------------------------------------------------ sums in rank order
    # Sums accumulate query by query in rank order (np.bincount and np.cumsum add sequentially), as
    # trec_eval does, so values agree with it to the last bits; differences of one global running sum
    # would lose precision as the run grows.
    def values(self, key: Hashable, make: Callable[[], np.ndarray]) -> np.ndarray:
        """Per-document values ``make()``, as float64, cached under ``key``."""
        return self.cached(("values", key), lambda: np.asarray(make(), dtype=np.float64))

    def within_segment_cumsum(self, values: np.ndarray, *, exclusive: bool = False) -> np.ndarray:
        """Running sum of ``values`` restarted at each query, in rank order: inclusive (up to and with each
        position), or ``exclusive`` (of the positions before it; 0 at a query's first position), which is
        read off the inclusive sum one position back rather than subtracted, so no precision is lost."""
        inclusive = segmented_cumsum(np.asarray(values, dtype=np.float64), self.jr.offsets)
        if not exclusive:
            return inclusive
        out = np.zeros_like(inclusive)
        out[1:] = inclusive[:-1]
        offsets = self.jr.offsets
        out[offsets[:-1][np.diff(offsets) > 0]] = 0.0
        return out

    def within_segment_count(self, mask: np.ndarray) -> np.ndarray:
        """Inclusive running count of ``mask`` restarted at each query (exact integers)."""
        c = np.cumsum(mask, dtype=np.int64)
        before = np.concatenate(([0], c))[self.jr.offsets[:-1]]
        return c - np.repeat(before, self.jr.lengths)

    # ------------------------------------------------------------------ sums linear in per-position values
    def linear_sum(self, key: Hashable, values: Callable[[np.ndarray, np.ndarray], np.ndarray], weight: Weight,
                   k: int | np.ndarray | None = None) -> np.ndarray:
        """Per query, ``sum_{rank i <= k} value_i * w(i)``.

        ``values(grades, query_index)`` maps grades to per-position values and must give 0 to unjudged
        documents (NaN grades), which is what lets a sparse judged run skip them. ``weight`` is ``"one"``,
        ``"log2"`` (``1 / log2(i + 1)``, applied as a division, as trec_eval does) or ``("geometric", p)``
        (``p^(i-1)``, from :meth:`powers`, as trec_eval multiplies them out). Under ``ties="average"`` each
        value is spread evenly over the positions of its group of tied documents, and cut-off members
        (``tail_*``) count in the group's mean: the expected value over orders of tied documents.
        """
        jr = self.jr
        if self.policies.ties != "average":
            if isinstance(k, (int, np.integer)) and k >= self.top_rank:
                k = None  # a cutoff at or past every query's last rank keeps every position
            rank, segment = jr.rank, self.segment
            if k is None:
                v = self.values(("linear", key), lambda: values(jr.grades, segment))
            else:  # the positions within the cutoff only, before any arithmetic (values are per position)
                limit = self._limit(k, segment)
                if isinstance(limit, (int, np.integer)):
                    at = self.cached(("within", int(limit)), lambda: np.flatnonzero(rank <= limit))
                else:
                    at = np.flatnonzero(rank <= limit)
                rank, segment = rank[at], segment[at]
                v = np.asarray(values(jr.grades[at], segment), dtype=np.float64)
            if weight == "one":
                terms = v
            elif weight == "log2":  # v / log2(rank + 1), the divisor made in place and the quotient written over it
                terms = rank + 1.0
                np.log2(terms, out=terms)
                np.divide(v, terms, out=terms)
            else:
                terms = v * self.powers(float(weight[1]), int(jr.rank.max(initial=0)))[rank - 1]
            return np.bincount(segment, weights=terms, minlength=self.nq)
        v = self.values(("linear", key), lambda: values(jr.grades, self.segment))
        limit = self._limit(k, self.segment)
        out = self._spread(v / jr.group_size, jr.group_start, jr.group_kept, self.segment, limit, weight)
        if len(jr.tail_grades):
            tv = values(jr.tail_grades, jr.tail_query)
            tlimit = self._limit(k, jr.tail_query)
            out += self._spread(tv / jr.tail_size, jr.tail_start, jr.tail_kept, jr.tail_query, tlimit, weight)
        return out

    def powers(self, p: float, n: int) -> np.ndarray:
        """``p^0 .. p^n`` as trec_eval computes them, each the previous times p (``cur_p = cur_p * p``), so that
        sums over them agree with trec_eval's to the last bit (``p ** k`` can differ in it)."""
        def make() -> np.ndarray:
            out = np.full(n + 1, p)
            out[0] = 1.0
            return np.cumprod(out)
        return self.cached(("powers", p, n), make)

    @staticmethod
    def _limit(k: int | np.ndarray | None, segment: np.ndarray) -> int | np.ndarray | None:
        """A cutoff as given (one for all queries), or one per query spread to each position."""
        if k is None or isinstance(k, (int, np.integer)):
            return k
        return np.asarray(k)[segment]

    def _spread(self, share: np.ndarray, start: np.ndarray, kept: np.ndarray, segment: np.ndarray,
                limit: int | np.ndarray | None, weight: Weight) -> np.ndarray:
        end = start + kept - 1
        if limit is not None:
            end = np.minimum(end, limit)
        span = np.where(end >= start, self._weight_range(start, end, weight), 0.0)
        # a group wholly past the cutoff adds nothing, even when its share is infinite (inf * 0 is NaN)
        with np.errstate(invalid="ignore"):
            added = np.where(span != 0, share * span, 0.0)
        return np.bincount(segment, weights=added, minlength=self.nq)

    def _weight_range(self, start: np.ndarray, end: np.ndarray, weight: Weight) -> np.ndarray:
        """``sum_{i=start}^{end} w(i)`` (0 where end < start)."""
        if weight == "one":
            return (end - start + 1).astype(np.float64)
        if weight == "log2":
            top = int(max(end.max(initial=0), start.max(initial=0))) + 1
            table = self.cached(("log2_table", top), lambda: np.concatenate(
                ([0.0], np.cumsum(1.0 / np.log2(np.arange(1, top + 1) + 1.0)))))
            return table[np.maximum(end, 0)] - table[np.maximum(start - 1, 0)]
        p = float(weight[1])
        return (p ** (start - 1).astype(np.float64) - p ** end.astype(np.float64)) / (1.0 - p)

    # ------------------------------------------------------------------ ideal rankings
    def ideal_gains(self, key: Hashable, gain: Callable[[np.ndarray], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Positive gains of each query's judged documents sorted descending, and their offsets."""
        def make() -> tuple[np.ndarray, np.ndarray]:
            jr = self.jr
            g = gain(jr.judged_grades)
            keep = g > 0
            seg = jr.judged_segment[keep]
            gk = g[keep]
            if not np.any((gk[1:] > gk[:-1]) & (seg[1:] == seg[:-1])):  # judged grades are sorted so, and
                # most gains keep their order: already what the sort below gives
                ideal = gk
            else:  # a gain map that reorders grades
                ideal = gk[np.lexsort((-gk, seg))]
            counts = np.bincount(seg, minlength=self.nq)
            offsets = np.zeros(self.nq + 1, dtype=np.int64)
            np.cumsum(counts, out=offsets[1:])
            return ideal, offsets
        return self.cached(("ideal", key), make)

    def segmented_suffix_max(self, values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """For each element, the maximum of the values from it to the end of its segment."""
        n = len(values)
        lengths = np.diff(offsets)
        out = np.empty(n, dtype=np.float64)
        if n == 0:
            return out
        width = int(lengths.max())
        nseg = len(lengths)
        if nseg * width <= 4 * n + 1024:
            dense = np.full((nseg, width), -np.inf)
            pos = np.arange(n) - np.repeat(offsets[:-1], lengths)
            seg = np.repeat(np.arange(nseg), lengths)
            dense[seg, width - 1 - pos] = values
            np.maximum.accumulate(dense, axis=1, out=dense)
            out[:] = dense[seg, width - 1 - pos]
            return out
        for s in np.flatnonzero(lengths):
            a, b = offsets[s], offsets[s + 1]
            out[a:b] = np.maximum.accumulate(values[a:b][::-1])[::-1]
        return out



def segment_counts(mask: np.ndarray, offsets: np.ndarray, *, chunk: int = 1 << 20) -> np.ndarray:
    """Per segment ``offsets[i]:offsets[i+1]`` (non-decreasing, ``offsets[-1] == len(mask)``), the number of True
    values of the boolean ``mask`` (int64): ``c[offsets[i+1]] - c[offsets[i]]``, ``c`` the running count of True
    values before each index, read off the running count of one ``chunk`` of the mask at a time, so that no int64
    array as long as ``mask`` is made (``np.add.reduceat(mask, ..., dtype=np.int64)`` casts the whole mask to int64
    first: 63 MB for W200k's 7.9 million judgments). Exact integers."""
    offsets = np.asarray(offsets, dtype=np.int64)
    before = np.zeros(len(offsets), dtype=np.int64)  # c at each offset (0 at offset 0)
    total = 0
    for lo in range(0, len(mask), chunk):
        run = np.cumsum(mask[lo:lo + chunk], dtype=np.int64)  # True values in mask[lo:lo + i + 1]
        first, last = np.searchsorted(offsets, (lo + 1, lo + len(run) + 1))  # the offsets in (lo, lo + len(run)]
        before[first:last] = total + run[offsets[first:last] - lo - 1]
        total += int(run[-1])
    return np.diff(before)


def _descending_within(values: np.ndarray, offsets: np.ndarray) -> bool:
    """True when ``values`` never increase within a segment ``offsets[i]:offsets[i+1]``: then they are what a
    stable sort by segment, then value descending, gives, and the first values of a segment are its largest."""
    if len(values) < 2:
        return True
    rises = values[1:] > values[:-1]
    bounds = offsets[1:-1]
    rises[bounds[(bounds > 0) & (bounds < len(values))] - 1] = False  # a step from one segment into the next
    return not bool(rises.any())
