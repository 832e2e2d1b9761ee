"""How much two rankings of the same query agree, whatever the judgments: Jaccard at k and rank-biased overlap.

* ``jaccard_at_k(a, b, k) = |A_k & B_k| / |A_k | B_k|`` (intersection over union) over the top ``k`` ids of
  each list; 1 when both lists are empty (they agree).
* ``rbo(a, b, p)``: rank-biased overlap, the extrapolated form RBO_ext of Webber, Moffat & Zobel, "A similarity
  measure for indefinite rankings", ACM TOIS 28(4), 2010, equation 32. With ``S`` the shorter list (length ``s``),
  ``L`` the longer (length ``l``), ``X_d`` the size of the overlap of their prefixes of length ``d`` (for ``d > s``,
  of all of ``S`` with ``L``'s prefix) and ``A_d = X_d / d``::

      RBO_ext = (1 - p) / p * ( sum_{d=1..l} X_d / d * p^d  +  sum_{d=s+1..l} X_s * (d - s) / (s * d) * p^d )
                + ( (X_l - X_s) / l + X_s / s ) * p^l

  Identical lists give 1, disjoint lists 0; ``p`` (0 < p < 1) is the persistence: the weight of the top ``d``
  ranks is ``1 - p^d``, so ``p = 0.9`` puts 86% of the weight on the top 10 (OpenSearch's Search Relevance
  Workbench reports ``rbo50`` and ``rbo90``, p = 0.5 and 0.9). Two empty lists give 1; one empty list 0.

Ids are compared as given; a list names each id once (rankings do).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["jaccard_at_k", "rbo"]


def jaccard_at_k(a: Sequence[str], b: Sequence[str], k: int) -> float:
    """Jaccard similarity of the top ``k`` of ``a`` and of ``b`` (see the module docstring)."""
    if k < 1:
        raise ValueError(f"k must be >= 1; got {k}")
    top_a, top_b = set(a[:k]), set(b[:k])
    union = top_a | top_b
    return 1.0 if not union else len(top_a & top_b) / len(union)


def rbo(a: Sequence[str], b: Sequence[str], p: float = 0.9) -> float:
    """Extrapolated rank-biased overlap of ``a`` and ``b`` (see the module docstring)."""
    if not 0 < p < 1:
        raise ValueError(f"p must be between 0 and 1 (exclusive); got {p}")
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    s, length = len(short), len(long_)
    if length == 0:
        return 1.0
    if s == 0:
        return 0.0
    seen_short: set[str] = set()
    seen_long: set[str] = set()
    overlap = 0
    total = 0.0
    x_s = 0
    for d in range(1, length + 1):
        item = long_[d - 1]
        if d <= s:
            other = short[d - 1]
            if item == other:
                overlap += 1
            else:
                overlap += (item in seen_short) + (other in seen_long)
            seen_short.add(other)
            seen_long.add(item)
            if d == s:
                x_s = overlap
        else:
            overlap += item in seen_short
            total += x_s * (d - s) / (s * d) * p ** d
        total += overlap / d * p ** d
    x_l = overlap
    return (1 - p) / p * total + ((x_l - x_s) / length + x_s / s) * p ** length
