"""Edit distances between rating lists, for Quepid's ``editDistanceFromBest`` (the metric
:class:`~gainscope.metrics.families.ratings.EditDistanceFromBest`, and the case scorers).

Two variants (``distance=quepid|levenshtein`` on the metric, ``quepid`` by default; ``edit_distance=`` and
``--edit-distance`` in the case scorers, where the JavaScript runtime spells ``quepid`` ``quepid-legacy``):

``levenshtein``
    The Levenshtein distance: the fewest insertions, deletions and substitutions that turn one list into the
    other, with ``D(i, 0) = i`` and ``D(0, j) = j``. This is what Quepid's documentation and the 2018 blog post
    describe ("the minimum number of edit operations").

``quepid`` (``quepid-legacy``)
    Quepid's shipped implementation (``ScorerFactory.editDistance`` in the browser), reproduced exactly. Its
    table has the base case ``D(-1, j) = D(i, -1) = 0`` instead of ``i`` and ``j``, so a prefix can be
    dropped for free: the result is never more than the Levenshtein distance and often less:
    ``[3, 2, 1, 0]`` vs ``[0, 1, 2, 3]`` gives 3 (Levenshtein 4), ``[1, 2, 3, 4, 5]`` vs ``[5, 1, 2, 3, 4]``
    gives 1 (Levenshtein 2). An empty first list gives 0. Elements are compared with
    JavaScript's ``===`` (``None`` equals ``None``; numbers by value).

Both take sequences of ratings where ``None`` is "no rating" (an unrated returned document, or padding).
:func:`edit_distances` computes either for many pairs of lists at once (one per query), the metric's kernel;
the plain functions are its reference.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gainscope.errors import PolicyError

__all__ = ["EDIT_DISTANCES", "NO_RATING", "edit_distance", "edit_distances", "levenshtein",
           "quepid_legacy_distance"]

#: "no rating" in the arrays :func:`edit_distances` takes: equal to itself, unequal to every rating >= 0
NO_RATING = -1.0

EDIT_DISTANCES = ("levenshtein", "quepid-legacy")


def levenshtein(a: Sequence[float | None], b: Sequence[float | None]) -> int:
    """Levenshtein distance (unit costs): ``D(i, j) = min(D(i-1, j) + 1, D(i, j-1) + 1,
    D(i-1, j-1) + [a_i != b_j])`` with ``D(i, 0) = i``, ``D(0, j) = j``; the result is ``D(len a, len b)``.

    Reference: V. I. Levenshtein, "Binary codes capable of correcting deletions, insertions, and reversals",
    Soviet Physics Doklady 10(8), 1966.
    """
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        cur = [i]
        for j, y in enumerate(b, start=1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (0 if x == y else 1)))
        prev = cur
    return prev[-1]


def quepid_legacy_distance(a: Sequence[float | None], b: Sequence[float | None]) -> int:
    """Quepid's shipped ``editDistance``: the same recurrence as :func:`levenshtein` but with every cell
    outside the table (``i < 0`` or ``j < 0``) read as 0, 0-based, returning ``D(len a - 1, len b - 1)``
    (0 when either list is empty)."""
    if not a or not b:
        return 0
    d = [[0] * len(b) for _ in a]

    def get(i: int, j: int) -> int:
        return 0 if i < 0 or j < 0 else d[i][j]

    for i, x in enumerate(a):
        for j, y in enumerate(b):
            d[i][j] = min(get(i - 1, j) + 1, get(i, j - 1) + 1, get(i - 1, j - 1) + (0 if x == y else 1))
    return d[-1][-1]


def edit_distance(a: Sequence[float | None], b: Sequence[float | None], variant: str = "levenshtein") -> int:
    """The distance named by ``variant`` (see the module docstring)."""
    if variant == "levenshtein":
        return levenshtein(a, b)
    if variant == "quepid-legacy":
        return quepid_legacy_distance(a, b)
    raise PolicyError(f"unknown edit distance {variant!r}; use one of {', '.join(EDIT_DISTANCES)}")


def edit_distances(a: np.ndarray, a_len: np.ndarray, b: np.ndarray, b_len: np.ndarray, *,
                   legacy: bool) -> np.ndarray:
    """The distance of every pair of lists at once: row ``q`` of ``a`` holds a list of length ``a_len[q]``
    (ratings >= 0, :data:`NO_RATING` for "no rating"; cells past the length are ignored), likewise ``b``.
    ``legacy=False`` is :func:`levenshtein`, ``legacy=True`` :func:`quepid_legacy_distance` (the same table
    with a border of zeros instead of ``D(i, 0) = i``, ``D(0, j) = j``).

    The table is filled row by row for all pairs together (one vectorised step per cell), so the cost is
    ``max(a_len) * max(b_len)`` array operations over the pairs, not a Python loop per pair.
    """
    n = len(a_len)
    width_a = int(a_len.max(initial=0))
    width_b = int(b_len.max(initial=0))
    rows = np.arange(n)
    border = np.zeros(width_b + 1) if legacy else np.arange(width_b + 1, dtype=np.float64)
    prev = np.tile(border, (n, 1))
    out = prev[rows, b_len].copy()  # pairs whose first list is empty
    for i in range(1, width_a + 1):
        cur = np.empty_like(prev)
        cur[:, 0] = 0.0 if legacy else float(i)
        x = a[:, i - 1]
        for j in range(1, width_b + 1):
            cost = (x != b[:, j - 1]).astype(np.float64)
            cur[:, j] = np.minimum(np.minimum(prev[:, j] + 1.0, cur[:, j - 1] + 1.0), prev[:, j - 1] + cost)
        done = a_len == i
        out[done] = cur[rows[done], b_len[done]]
        prev = cur
    return out
