"""The C module's judged_grades (how PreparedJudgments gathers and sorts the judged pool of judgments the C reader
read) is numpy's ``g[np.lexsort((-g, rank[q]))]`` over the judged grades, query by query; the kernels' per-query
counts of that pool (segment_counts) are counts of each query's slice."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

_scan = pytest.importorskip("gainscope._scan")

GRADES = st.sampled_from((0, 1, 2, 3, -1, -2, 7, 10**15, 2**53 + 1, -(10**18)))


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(nq=st.integers(1, 8), rows=st.lists(st.tuples(st.integers(0, 7), GRADES), max_size=120),
       perm=st.randoms(use_true_random=False), nonrelevant=st.booleans())
def test_judged_grades_is_lexsort(nq: int, rows: list[tuple[int, int]], perm: object, nonrelevant: bool) -> None:
    q = np.array([r[0] % nq for r in rows], dtype=np.int32)
    g = np.array([r[1] for r in rows], dtype=np.int64)
    rank = np.arange(nq, dtype=np.int64)
    perm.shuffle(rank)  # type: ignore[attr-defined]
    offsets, grades = _scan.judged_grades(q, g, rank, nonrelevant)
    # the reference: float grades (negative ones 0 under nonrelevant, else left out), by rank, then descending
    f = g.astype(np.float64)
    keep = np.ones(len(f), dtype=bool) if nonrelevant else f >= 0
    f = np.maximum(f, 0.0) if nonrelevant else f
    r, f = rank[q][keep], f[keep]
    want = f[np.lexsort((-f, r))]
    want_offsets = np.concatenate(([0], np.cumsum(np.bincount(r, minlength=nq))))
    assert np.frombuffer(offsets, dtype=np.int64).tolist() == want_offsets.tolist()
    assert np.frombuffer(grades, dtype=np.float64).tolist() == want.tolist()
    if len(g) == 0 or (g.min() >= -128 and g.max() <= 127):  # the same grades as int8 (as the C reader keeps them)
        offsets8, grades8 = _scan.judged_grades(q, g.astype(np.int8), rank, nonrelevant)
        assert offsets8 == offsets and grades8 == grades


@pytest.mark.parametrize("spread", [5, 1000])  # a few grades (counted), many (sorted)
def test_long_queries_are_sorted_too(spread: int) -> None:
    rng = np.random.default_rng(5)  # beyond the insertion sort's 32 grades
    q = np.repeat(np.arange(3, dtype=np.int32), [100, 33, 1])
    g = rng.integers(-3, spread, len(q)).astype(np.int64)
    offsets, grades = _scan.judged_grades(q, g, np.array([2, 0, 1], dtype=np.int64), False)
    got = np.frombuffer(grades, dtype=np.float64)
    f = g.astype(np.float64)
    keep = f >= 0
    r = np.array([2, 0, 1])[q][keep]
    assert got.tolist() == f[keep][np.lexsort((-f[keep], r))].tolist()
    assert np.frombuffer(offsets, dtype=np.int64)[-1] == keep.sum()


def test_judged_grades_refuses_indices_outside_the_queries() -> None:
    g = np.zeros(2, dtype=np.int64)
    with pytest.raises(ValueError, match="query index outside"):
        _scan.judged_grades(np.array([0, 3], dtype=np.int32), g, np.arange(3, dtype=np.int64), False)
    with pytest.raises(ValueError, match="query rank outside"):
        _scan.judged_grades(np.array([0, 1], dtype=np.int32), g, np.array([0, 5], dtype=np.int64), False)
    with pytest.raises(ValueError, match="one length"):
        _scan.judged_grades(np.array([0], dtype=np.int32), g, np.arange(3, dtype=np.int64), False)
    with pytest.raises(ValueError, match=r"grades \(int64 or int8\) of one length"):  # int32: neither
        _scan.judged_grades(np.array([0, 1], dtype=np.int32), g.astype(np.int32), np.arange(3, dtype=np.int64), False)


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(lengths=st.lists(st.integers(0, 5), min_size=1, max_size=12), data=st.data(), chunk=st.integers(1, 8))
def test_segment_counts_count_each_segment(lengths: list[int], data: st.DataObject, chunk: int) -> None:
    """Context.num_rel's per-query counts (empty queries anywhere, the first and last included), whatever the chunks
    the mask is counted in (segments across their bounds, bounds at a segment's start or end)."""
    from gainscope.metrics.context import segment_counts

    mask = np.array(data.draw(st.lists(st.booleans(), min_size=sum(lengths), max_size=sum(lengths))), dtype=bool)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    want = [int(mask[a:b].sum()) for a, b in itertools.pairwise(offsets)]
    assert segment_counts(mask, offsets).tolist() == want
    assert segment_counts(mask, offsets, chunk=chunk).tolist() == want
