r"""Retrieved Good Gain metrics of seed 003, at every search iteration ``i = 1..N``.

Input: for each iteration the unique results (numbers from de-duplication) of its occurrences, in trace order,
and a gain per unique result (``None`` when undefined). A result is *good* when ``gain(c) >= t`` (``t = 2``).

Per iteration:

* ``|R^i|``  -- every occurrence at iteration i, duplicates included;
* ``|UR^i|`` -- first occurrences at iteration i (not seen earlier in i nor in 1..i-1);
* ``|GR^i|`` -- first occurrences at i that are good;
* ``|Dup^i|`` -- occurrences at i already seen earlier in i or in 1..i-1; so ``|R^i| = |UR^i| + |Dup^i|``;
* ``G_i = sum_{c in GR^i} gain(c)``;
* ``AvgGain_i = G_i / |R^i|`` when ``|R^i| > 0``, else 0.

Cumulative through i: ``R@i``, ``UR@i``, ``GR@i``, ``DupR@i`` (sums of the above over k = 1..i, so
``R@i = UR@i + DupR@i``), and with ``w(k) = 1 / log2(k + 1)``:

* ``CG@i = sum_k G_k``;  ``RG@i = CG@i / i``;
* ``DCG@i = sum_k w(k) G_k``;  ``DRG@i = DCG@i / i``;
* ``RAG@i = (1/i) sum_k AvgGain_k``;  ``DRAG@i = (1/i) sum_k w(k) AvgGain_k``;
* ``SRE@i = GR@i / R@i`` and ``SRR@i = DupR@i / R@i`` when ``R@i > 0``, else 0.

Undefined gains: when a unique result without a gain first appears at iteration j, ``|GR^j|``, ``G_j`` and
``AvgGain_j`` are NaN, and so is every cumulative gain-based value (``GR@i``, ``CG``, ``RG``, ``DCG``, ``DRG``,
``RAG``, ``DRAG``, ``SRE``) for ``i >= j``; counts of results and duplicates (``R``, ``UR``, ``Dup``,
``SRR``) stay defined. Nothing undefined is ever counted as 0.

With ``N = 0`` (no search in the turn) the values "at N" are those at ``i = 0``: empty sums are 0, SRE and
SRR are 0 by the seed's ``R@i = 0`` case, and RG, DRG, RAG, DRAG (divided by ``i = 0``) are undefined (NaN).

``IterationsForAllGoodResults = min(k, 100)`` with ``k`` the smallest iteration by which every good result
has been retrieved. "Every good result" is every result judged good for the query when judgments are given
(when they are never all retrieved the value is the cap, 100, and the flag ``all_good_found`` is false), else
every good result found in the trace; undefined when there is no good result to find (and, without
judgments, when some gain is undefined). See :func:`iterations_for_all_good`.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "CAP",
    "ITERATION_COLUMNS",
    "IterationValues",
    "good_gain_curve",
    "iterations_for_all_good",
    "values_at_n",
    "w",
]

NAN = float("nan")
CAP = 100
ITERATION_COLUMNS = ("|R^i|", "|UR^i|", "|GR^i|", "|Dup^i|", "G_i", "R@i", "UR@i", "GR@i", "DupR@i", "CG@i",
                     "RG@i", "DCG@i", "DRG@i", "AvgGain_i", "RAG@i", "DRAG@i", "SRE@i", "SRR@i")


def w(i: int) -> float:
    """The iteration discount ``w(i) = 1 / log2(i + 1)``: 1, 0.631, 0.5, ..."""
    return 1.0 / math.log2(i + 1)


@dataclass(frozen=True)
class IterationValues:
    """Every value of seed 003 at iteration ``i`` (keys: :data:`ITERATION_COLUMNS`)."""

    i: int
    values: Mapping[str, float]

    def __getitem__(self, name: str) -> float:
        return self.values[name]


def good_gain_curve(iterations: Sequence[Sequence[int]], gains: Mapping[int, float | None],
                    threshold: float = 2.0) -> list[IterationValues]:
    """The values at every iteration (see the module docstring). ``iterations[k]`` lists the unique-result
    numbers of iteration ``k + 1``'s occurrences in order; ``gains`` maps each number to its gain."""
    seen: set[int] = set()
    out = []
    r_at = ur_at = dup_at = 0
    gr_at = cg = dcg = avg_sum = davg_sum = 0.0
    for i, members in enumerate(iterations, start=1):
        r_i = len(members)
        new: list[int] = []
        for c in members:
            if c not in seen:
                seen.add(c)
                new.append(c)
        ur_i = len(new)
        dup_i = r_i - ur_i
        new_gains = [gains[c] for c in new]
        if any(g is None for g in new_gains):
            gr_i = g_i = NAN
        else:
            good = [g for g in new_gains if g is not None and g >= threshold]
            gr_i, g_i = float(len(good)), float(sum(good))
        avg_i = (g_i / r_i) if r_i > 0 else 0.0  # a NaN G_i has r_i > 0: it comes from a new result
        r_at += r_i
        ur_at += ur_i
        dup_at += dup_i
        gr_at += gr_i
        cg += g_i
        dcg += w(i) * g_i
        avg_sum += avg_i
        davg_sum += w(i) * avg_i
        out.append(IterationValues(i, {
            "|R^i|": float(r_i), "|UR^i|": float(ur_i), "|GR^i|": gr_i, "|Dup^i|": float(dup_i), "G_i": g_i,
            "R@i": float(r_at), "UR@i": float(ur_at), "GR@i": gr_at, "DupR@i": float(dup_at),
            "CG@i": cg, "RG@i": cg / i, "DCG@i": dcg, "DRG@i": dcg / i,
            "AvgGain_i": avg_i, "RAG@i": avg_sum / i, "DRAG@i": davg_sum / i,
            "SRE@i": gr_at / r_at if r_at > 0 else 0.0,
            "SRR@i": dup_at / r_at if r_at > 0 else 0.0,
        }))
    return out


def values_at_n(curve: Sequence[IterationValues]) -> dict[str, float]:
    """The values at ``N`` named ``R@N``, ``CG@N``, ``AvgGain_N`` ...; at ``N = 0`` the ``i = 0`` values."""
    if curve:
        last = curve[-1]
        return {name.replace("@i", "@N").replace("_i", "_N").replace("^i", "^N"): v for name, v in last.values.items()}
    zero = dict.fromkeys(ITERATION_COLUMNS, 0.0)
    for name in ("RG@i", "DRG@i", "RAG@i", "DRAG@i"):
        zero[name] = NAN
    return {name.replace("@i", "@N").replace("_i", "_N").replace("^i", "^N"): v for name, v in zero.items()}


def iterations_for_all_good(first_iteration: Mapping[int, int], gains: Mapping[int, float | None],
                            threshold: float = 2.0, *, known_good: Collection[str] | None = None,
                            matched: Mapping[int, Collection[str]] | None = None,
                            cap: int = CAP) -> tuple[float, bool | None]:
    """``IterationsForAllGoodResults = min(k, cap)`` and whether all good results were found.

    "All good results" are, when judgments are given (``known_good``: the judged doc ids with grade >= t for
    the query, with ``matched``: the judged doc ids each unique result is), every good result known for the
    query: ``k`` is the first iteration by which each of them was matched by a retrieved result; when they
    are never all found the value is the cap (100) and the flag False. Without judgments they are the good
    results found in the trace: ``k`` is the iteration of the last first occurrence of a good result.

    Undefined (NaN, flag None) when there is no good result to find, or (without judgments) when some unique
    result has no gain, so that whether it is good is unknown.
    """
    if known_good is not None:
        target = set(known_good)
        if not target:
            return NAN, None
        found: set[str] = set()
        for c, k in sorted(first_iteration.items(), key=lambda x: (x[1], x[0])):
            found.update(target.intersection((matched or {}).get(c, ())))
            if found == target:
                return float(min(k, cap)), True
        return float(cap), False
    if any(g is None for g in gains.values()):
        return NAN, None
    good = [first_iteration[c] for c, g in gains.items() if g is not None and g >= threshold]
    if not good:
        return NAN, None
    return float(min(max(good), cap)), True
