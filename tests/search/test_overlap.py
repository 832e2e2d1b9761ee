"""Jaccard@k and rank-biased overlap by hand, and RBO_ext equal to a direct transcription of Webber et al.'s
equation 32 on random rankings."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gainscope.overlap import jaccard_at_k, rbo


def test_jaccard_at_k() -> None:
    assert jaccard_at_k(["a", "b", "c"], ["b", "c", "d"], 3) == 2 / 4  # {b, c} of {a, b, c, d}
    assert jaccard_at_k(["a", "b", "c"], ["b", "x", "y"], 1) == 0.0    # {a} vs {b}
    assert jaccard_at_k([], [], 10) == 1.0 and jaccard_at_k(["a"], [], 10) == 0.0
    with pytest.raises(ValueError, match="k must be >= 1; got 0"):
        jaccard_at_k(["a"], ["a"], 0)


def test_rbo_by_hand() -> None:
    # [x, y] vs [y, x], p = 0.5: X_1 = 0, X_2 = 2; (1 - p)/p * (0/1 * 0.5 + 2/2 * 0.25) + (0/2 + 2/2) * 0.25 = 0.5
    assert rbo(["x", "y"], ["y", "x"], 0.5) == pytest.approx(0.5)
    assert rbo(list("abcde"), list("abcde"), 0.9) == pytest.approx(1.0)
    assert rbo(list("abc"), list("xyz"), 0.9) == 0.0
    # uneven: S = [a], L = [a, b], p = 0.5: X_1 = 1, X_2 = |S & L_2| = 1
    # (1 - p)/p * (1/1 * 0.5 + 1/2 * 0.25 + 1 * (2 - 1)/(1 * 2) * 0.25) + ((1 - 1)/2 + 1/1) * 0.25
    # = 1 * (0.5 + 0.125 + 0.125) + 0.25 = 1.0: S agrees with all of L it covers
    assert rbo(["a"], ["a", "b"], 0.5) == pytest.approx(1.0)
    assert rbo([], [], 0.9) == 1.0 and rbo(["a"], [], 0.9) == 0.0
    with pytest.raises(ValueError, match="p must be between 0 and 1"):
        rbo(["a"], ["a"], 1.0)


def reference(a: list[str], b: list[str], p: float) -> float:
    """Equation 32 of Webber, Moffat & Zobel (2010), written out term by term."""
    s_list, l_list = (a, b) if len(a) <= len(b) else (b, a)
    s, length = len(s_list), len(l_list)

    def x(d: int) -> int:
        return len(set(s_list[:min(d, s)]) & set(l_list[:d]))

    first = sum(x(d) / d * p ** d for d in range(1, length + 1))
    second = sum(x(s) * (d - s) / (s * d) * p ** d for d in range(s + 1, length + 1))
    return (1 - p) / p * (first + second) + ((x(length) - x(s)) / length + x(s) / s) * p ** length


@given(st.lists(st.sampled_from("abcdefghij"), min_size=1, max_size=10, unique=True),
       st.lists(st.sampled_from("abcdefghij"), min_size=1, max_size=10, unique=True),
       st.sampled_from([0.5, 0.8, 0.9, 0.98]))
def test_rbo_equals_the_equation(a: list[str], b: list[str], p: float) -> None:
    value = rbo(a, b, p)
    assert value == pytest.approx(reference(a, b, p), abs=1e-12)
    assert -1e-12 <= value <= 1 + 1e-12 and value == pytest.approx(rbo(b, a, p), abs=1e-12)
