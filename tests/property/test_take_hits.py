"""The C module's take_hits (how a sparse judged run gathers the scanned hits, part by part, into bytewise query
order) is numpy's gather of ``ranges(starts, lengths)`` from each per-hit array with its parts joined, rank widened
to int64."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gainscope.core.judged_run import ranges

_scan = pytest.importorskip("gainscope._scan")

HIT = st.tuples(st.integers(-2**31, 2**31 - 1), st.integers(0, 2**31 - 1), st.floats(allow_nan=False))


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(parts=st.lists(st.lists(HIT, max_size=30), min_size=1, max_size=5),
       picks=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 30), st.integers(0, 30)), max_size=12))
def test_take_hits_is_the_gather_of_ranges(parts: list[list[tuple[int, int, float]]],
                                           picks: list[tuple[int, int, int]]) -> None:
    arrays = [(np.array([h[0] for h in p], dtype=np.int32), np.array([h[1] for h in p], dtype=np.int32),
               np.array([h[2] for h in p], dtype=np.float64)) for p in parts]
    first = np.cumsum([0] + [len(p) for p in parts])
    starts, lengths = [], []
    for k, a, m in picks:  # a range within one part (as a query's hits are)
        k %= len(parts)
        a = min(a, len(parts[k]))
        starts.append(int(first[k]) + a)
        lengths.append(min(m, len(parts[k]) - a))
    s, n = np.array(starts, dtype=np.int64), np.array(lengths, dtype=np.int64)
    take = ranges(s, n)
    got = tuple(np.full(len(take), -1, dtype=t) for t in (np.int64, np.int32, np.float64))
    assert _scan.take_hits(*zip(*arrays, strict=True), s, n, *got) is None
    rank, row, score = (np.concatenate([a[i] for a in arrays]) for i in range(3))
    assert got[0].tolist() == rank[take].astype(np.int64).tolist()
    assert got[1].tolist() == row[take].tolist()
    assert got[2].tobytes() == score[take].tobytes()  # bit for bit


def test_take_hits_refuses_ranges_outside_the_hits_or_across_parts_and_mismatched_arrays() -> None:
    part = (np.zeros(3, dtype=np.int32), np.zeros(3, dtype=np.int32), np.zeros(3))
    two = tuple([a, a] for a in part)
    one = np.ones(1, dtype=np.int64)
    out = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int32), np.zeros(1)
    with pytest.raises(ValueError, match="a range outside the hits, or across two parts"):
        _scan.take_hits(*two, one * 6, one, *out)
    with pytest.raises(ValueError, match="a range outside the hits, or across two parts"):
        _scan.take_hits(*two, -one, one, *out)
    out2 = np.zeros(2, dtype=np.int64), np.zeros(2, dtype=np.int32), np.zeros(2)
    with pytest.raises(ValueError, match="across two parts"):
        _scan.take_hits(*two, one * 2, one * 2, *out2)
    with pytest.raises(ValueError, match="of one length"):
        _scan.take_hits([part[0]], [part[1]], [part[2][:2]], one, one, *out)
    with pytest.raises(ValueError, match="as many parts"):
        _scan.take_hits([part[0]], [part[1]], [], one, one, *out)
    with pytest.raises(ValueError, match="of one length"):
        _scan.take_hits(*two, one, np.ones(2, dtype=np.int64), *out)
    with pytest.raises(ValueError, match="of the hits taken"):
        _scan.take_hits(*two, one, one * 2, *out)
    with pytest.raises(TypeError):  # read-only output
        _scan.take_hits(*two, one, one, bytes(8), out[1], out[2])
