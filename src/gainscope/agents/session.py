r"""Session DCG (Järvelin, Price, Delcambre and Nielsen, ECIR 2008) over an agent's searches, each unique
result counted once.

The searches of the evaluated turn, in order (iteration, then search), are the session's queries
``q = 1, 2, ...``. Each query's ranked list is scored with the DCG of Järvelin and Kekäläinen (2002), with rank
discount base ``b``, and discounted by the query's position with base ``bq``:

    DCG_q = sum_{j=1..n_q} gain_q(j) / max(1, log_b j)          (rank discount, Järvelin and Kekäläinen)
    sDCG  = sum_q DCG_q / (1 + log_bq q)                        (query discount, Järvelin et al.)

(``b = 2``, ``bq = 4`` as in the paper: query discounts 1, 0.667, 0.558, 0.5 for q = 1..4; ranks 1 and 2
are not discounted with ``b = 2``.) ``gain_q(j)`` is the gain of the result at rank ``j`` of query ``q`` at its
*first* occurrence in the session and 0 at every later one (the paper counts a document again each time; an
agent that re-finds a result has not found anything new). Only the first ``depth`` ranks of each list count
when a depth is given, and a result first met beyond the depth can still count where it is met later within
the depth. Gains are the graded labels as they are (0-4), not thresholded, unless a gain mapping
``gain_map`` is given: then ``gain_q(j) = gain_map[grade]``, as the paper's experiments weight relevance
levels (e.g. ``{0: 0, 1: 1, 2: 10, 3: 100, 4: 1000}`` for a steep preference for highly relevant results); a
grade the mapping does not give is an error. A counted result with an undefined gain makes sDCG undefined
(NaN).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from gainscope.errors import PolicyError

__all__ = ["session_dcg"]


def session_dcg(searches: Sequence[Sequence[int]], gains: Mapping[int, float | None], *, b: float = 2.0,
                bq: float = 4.0, depth: int | None = None, gain_map: Mapping[float, float] | None = None) -> float:
    """sDCG of the searches (each a list of unique-result numbers in rank order); see the module docstring."""
    if not b > 1 or not bq > 1:
        raise PolicyError(f"the log bases b and bq must be > 1; got b={b!r}, bq={bq!r}")
    if depth is not None and depth < 1:
        raise PolicyError(f"depth must be >= 1; got {depth!r}")
    seen: set[int] = set()
    total = 0.0
    for q, ranking in enumerate(searches, start=1):
        dcg = 0.0
        for j, c in enumerate(ranking[:depth] if depth else ranking, start=1):
            if c in seen:
                continue
            seen.add(c)
            gain = gains[c]
            if gain is None:
                return float("nan")
            if gain_map is not None:
                if gain not in gain_map:
                    raise PolicyError(f"the sDCG gain mapping has no gain for grade {gain:g} (it maps "
                                      f"{', '.join(f'{k:g}' for k in sorted(gain_map))})")
                gain = gain_map[gain]
            dcg += gain / max(1.0, math.log(j, b))
        total += dcg / (1.0 + math.log(q, bq))
    return total
