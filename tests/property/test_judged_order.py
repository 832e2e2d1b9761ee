"""The C module's judged_order (PreparedJudgments of judgments the C reader read) is numpy.lexsort((-g, q))."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

_scan = pytest.importorskip("gainscope._scan")


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(nq=st.integers(1, 6),
       rows=st.lists(st.tuples(st.integers(0, 5), st.sampled_from((0.0, 1.0, 2.0, 3.0, 7.5, 1e9))), max_size=200))
def test_judged_order_is_lexsort(nq: int, rows: list[tuple[int, float]]) -> None:
    q = np.array([r[0] % nq for r in rows], dtype=np.int64)
    g = np.array([r[1] for r in rows], dtype=np.float64)
    order = np.frombuffer(_scan.judged_order(q.tobytes(), g.tobytes(), nq), dtype=np.int64)
    assert order.tolist() == np.lexsort((-g, q)).tolist()  # stable: equal grades in input order


def test_judged_order_refuses_indices_outside_the_queries() -> None:
    q = np.array([0, 3], dtype=np.int64)
    g = np.zeros(2)
    with pytest.raises(ValueError, match="outside"):
        _scan.judged_order(q.tobytes(), g.tobytes(), 3)
