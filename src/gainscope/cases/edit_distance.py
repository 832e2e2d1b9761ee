"""Edit distances between rating lists, for Quepid's ``editDistanceFromBest``.

Two variants, selected by name everywhere (``edit_distance=`` in Python, ``(edit_distance=...)`` in scorer
names, ``--edit-distance`` on the command line):

``levenshtein`` (default)
    The Levenshtein distance: the fewest insertions, deletions and substitutions that turn one list into the
    other, with ``D(i, 0) = i`` and ``D(0, j) = j``. This is what Quepid's documentation and the 2018 blog post
    describe ("the minimum number of edit operations").

``quepid-legacy``
    Quepid's shipped implementation (``ScorerFactory.editDistance`` in the browser), reproduced exactly. Its
    table has the base case ``D(-1, j) = D(i, -1) = 0`` instead of ``i`` and ``j``, so a prefix can be
    dropped for free: the result is never more than the Levenshtein distance and often less:
    ``[3, 2, 1, 0]`` vs ``[0, 1, 2, 3]`` gives 3 (Levenshtein 4), ``[1, 2, 3, 4, 5]`` vs ``[5, 1, 2, 3, 4]``
    gives 1 (Levenshtein 2). An empty first list gives 0. Elements are compared with
    JavaScript's ``===`` (``None`` equals ``None``; numbers by value).

Both take sequences of ratings where ``None`` is "no rating" (an unrated returned document, or padding).
"""

from __future__ import annotations

from collections.abc import Sequence

from gainscope.errors import PolicyError

__all__ = ["EDIT_DISTANCES", "edit_distance", "levenshtein", "quepid_legacy_distance"]

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
