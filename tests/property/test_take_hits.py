"""The C module's take_hits (how a sparse judged run gathers the scanned hits into bytewise query order) is numpy's
gather of ``ranges(starts, lengths)`` from each per-hit array, rank widened to int64."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gainscope.core.judged_run import ranges

_scan = pytest.importorskip("gainscope._scan")


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(hits=st.lists(st.tuples(st.integers(-2**31, 2**31 - 1), st.integers(0, 2**31 - 1),
                               st.floats(allow_nan=False)), max_size=60),
       cuts=st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60)), max_size=12))
def test_take_hits_is_the_gather_of_ranges(hits: list[tuple[int, int, float]], cuts: list[tuple[int, int]]) -> None:
    n = len(hits)
    rank = np.array([h[0] for h in hits], dtype=np.int32)
    row = np.array([h[1] for h in hits], dtype=np.int32)
    score = np.array([h[2] for h in hits], dtype=np.float64)
    starts = np.array([min(a, n) for a, _ in cuts], dtype=np.int64)
    lengths = np.array([min(m, n - s) for (_, m), s in zip(cuts, starts.tolist(), strict=True)], dtype=np.int64)
    take = ranges(starts, lengths)
    got_rank, got_row, got_score = (np.full(len(take), -1, dtype=t) for t in (np.int64, np.int32, np.float64))
    assert _scan.take_hits(rank, row, score, starts, lengths, got_rank, got_row, got_score) is None
    assert got_rank.tolist() == rank[take].astype(np.int64).tolist()
    assert got_row.tolist() == row[take].tolist()
    assert got_score.tobytes() == score[take].tobytes()  # bit for bit


def test_take_hits_refuses_ranges_outside_the_hits_and_mismatched_arrays() -> None:
    rank = row = np.zeros(3, dtype=np.int32)
    score = np.zeros(3)
    one = np.ones(1, dtype=np.int64)
    out = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int32), np.zeros(1)
    with pytest.raises(ValueError, match="a range outside the hits"):
        _scan.take_hits(rank, row, score, one * 2, one * 2, *out)
    with pytest.raises(ValueError, match="a range outside the hits"):
        _scan.take_hits(rank, row, score, -one, one, *out)
    with pytest.raises(ValueError, match="of one length"):
        _scan.take_hits(rank, row, score[:2], one, one, *out)
    with pytest.raises(ValueError, match="of one length"):
        _scan.take_hits(rank, row, score, one, np.ones(2, dtype=np.int64), *out)
    with pytest.raises(ValueError, match="of the hits taken"):
        _scan.take_hits(rank, row, score, one, one * 2, *out)
    with pytest.raises(TypeError):  # read-only output
        _scan.take_hits(rank, row, score, one, one, bytes(8), out[1], out[2])
