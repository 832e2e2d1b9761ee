r"""Seed 003's values by their seed names, each one a core metric of the session family
(:mod:`gainscope.metrics.families.session`, where the formulas are): this module only names them.

=============  ==============================  =============  ==============================
seed name      core metric at iteration i      seed name      core metric at iteration i
=============  ==============================  =============  ==============================
``|R^i|``      ``iterR(scope=at)@i``           ``CG@i``       ``iterCG@i``
``|UR^i|``     ``iterUR(scope=at)@i``          ``RG@i``       ``RG@i``
``|GR^i|``     ``iterGR(scope=at)@i``          ``DCG@i``      ``iterDCG@i``
``|Dup^i|``    ``iterDupR(scope=at)@i``        ``DRG@i``      ``DRG@i``
``G_i``        ``iterCG(scope=at)@i``          ``AvgGain_i``  ``AvgGain@i``
``R@i``        ``iterR@i``                     ``RAG@i``      ``RAG@i``
``UR@i``       ``iterUR@i``                    ``DRAG@i``     ``DRAG@i``
``GR@i``       ``iterGR@i``                    ``SRE@i``      ``SRE@i``
``DupR@i``     ``iterDupR@i``                  ``SRR@i``      ``SRR@i``
=============  ==============================  =============  ==============================

(with ``good_gain`` set where the metric has one). The values at N are the same metrics without ``@i``, named
``|R^N|``, ``CG@N``, ``AvgGain_N`` ...; at N = 0 they are the values at i = 0 (sums and counts 0, SRE and SRR 0,
RG, DRG, RAG and DRAG undefined). ``IterationsForAllGoodResults`` is the core metric of that name.

The functions below keep the earlier calling style over plain numbers (unique-result numbers and their gains):
each builds a session (:func:`gainscope.core.sessions.build_session_run`) and evaluates the core metrics on it.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from gainscope.core.policies import Policies
from gainscope.core.sessions import Session, build_session_run
from gainscope.evaluation import compute
from gainscope.metrics.base import Metric
from gainscope.metrics.families.session import (
    DRAG,
    DRG,
    RAG,
    RG,
    SRE,
    SRR,
    AvgGain,
    IterationsForAllGoodResults,
    IterCG,
    IterDCG,
    IterDupR,
    IterGR,
    IterR,
    IterUR,
)
from gainscope.metrics.families.session import iteration_discount as w
from gainscope.results import Results

__all__ = [
    "CAP",
    "ITERATION_COLUMNS",
    "POLICIES",
    "IterationValues",
    "at_n",
    "column_metrics",
    "good_gain_curve",
    "iterations_for_all_good",
    "values_at_n",
    "w",
]

#: the cap of IterationsForAllGoodResults (seed 003: 100)
CAP = 100
ITERATION_COLUMNS = ("|R^i|", "|UR^i|", "|GR^i|", "|Dup^i|", "G_i", "R@i", "UR@i", "GR@i", "DupR@i", "CG@i",
                     "RG@i", "DCG@i", "DRG@i", "AvgGain_i", "RAG@i", "DRAG@i", "SRE@i", "SRR@i")
#: the policies sessions are evaluated under: the order is the trace's, undefined values stay undefined
POLICIES = Policies(ties="rank", undefined="skip")


def at_n(name: str) -> str:
    """The name of a value at N: ``CG@i`` -> ``CG@N``, ``AvgGain_i`` -> ``AvgGain_N``, ``|R^i|`` -> ``|R^N|``."""
    return name.replace("@i", "@N").replace("_i", "_N").replace("^i", "^N")


def column_metrics(good_gain: float, cutoff: int | None) -> dict[str, Metric]:
    """The core metric of every column of :data:`ITERATION_COLUMNS` at iteration ``cutoff`` (None: N)."""
    t, i = good_gain, cutoff
    return {
        "|R^i|": IterR(i, scope="at"), "|UR^i|": IterUR(i, scope="at"), "|GR^i|": IterGR(i, t, scope="at"),
        "|Dup^i|": IterDupR(i, scope="at"), "G_i": IterCG(i, t, scope="at"), "R@i": IterR(i), "UR@i": IterUR(i),
        "GR@i": IterGR(i, t), "DupR@i": IterDupR(i), "CG@i": IterCG(i, t), "RG@i": RG(i, t),
        "DCG@i": IterDCG(i, t), "DRG@i": DRG(i, t), "AvgGain_i": AvgGain(i, t), "RAG@i": RAG(i, t),
        "DRAG@i": DRAG(i, t), "SRE@i": SRE(i, t), "SRR@i": SRR(i),
    }


@dataclass(frozen=True)
class IterationValues:
    """Every value of seed 003 at iteration ``i`` (keys: :data:`ITERATION_COLUMNS`)."""

    i: int
    values: Mapping[str, float]

    def __getitem__(self, name: str) -> float:
        return self.values[name]


def _values(results: Results, metrics: Mapping[str, Metric], row: int = 0) -> dict[str, float]:
    columns = {name: j for j, name in enumerate(results.metric_names)}
    return {name: results.values[row, columns[str(m)]].item() for name, m in metrics.items()}


def _session(iterations: Sequence[Sequence[int]], gains: Mapping[int, float | None]) -> Session:
    """Unique-result numbers by iteration (one search per iteration) as a session."""
    docs = [(str(c), i) for i, members in enumerate(iterations, start=1) for c in members]
    return Session("session", tuple(d for d, _ in docs), tuple(i for _, i in docs), tuple(i for _, i in docs),
                   len(iterations), {str(c): g for c, g in gains.items()})


def good_gain_curve(iterations: Sequence[Sequence[int]], gains: Mapping[int, float | None],
                    threshold: float = 2.0) -> list[IterationValues]:
    """The values at every iteration. ``iterations[k]`` lists the unique-result numbers of iteration ``k + 1``'s
    occurrences in order; ``gains`` maps each number to its gain (None: unknown)."""
    per_i = [column_metrics(threshold, i) for i in range(1, len(iterations) + 1)]
    if not per_i:
        return []
    results = compute(build_session_run([_session(iterations, gains)], POLICIES),
                      [m for cols in per_i for m in cols.values()], warn=False)
    return [IterationValues(i, _values(results, cols)) for i, cols in enumerate(per_i, start=1)]


def values_at_n(curve: Sequence[IterationValues]) -> dict[str, float]:
    """The values at ``N`` named ``R@N``, ``CG@N``, ``AvgGain_N`` ...; at ``N = 0`` the ``i = 0`` values."""
    if curve:
        return {at_n(name): v for name, v in curve[-1].values.items()}
    cols = column_metrics(2.0, None)
    results = compute(build_session_run([_session([], {})], POLICIES), list(cols.values()), warn=False)
    return {at_n(name): v for name, v in _values(results, cols).items()}


def iterations_for_all_good(first_iteration: Mapping[int, int], gains: Mapping[int, float | None],
                            threshold: float = 2.0, *, known_good: Collection[str] | None = None,
                            matched: Mapping[int, Collection[str]] | None = None,
                            cap: int = CAP) -> tuple[float, bool | None]:
    """``IterationsForAllGoodResults = min(k, cap)`` and whether all good results were found (None: undefined).

    With ``known_good`` (the judged doc ids with grade >= threshold, and ``matched``: the judged doc ids each
    unique result is) every one of them must be retrieved (``target="judged"``); without, every good result of
    ``gains`` (``target="retrieved"``, undefined when some gain is unknown). ``first_iteration`` gives each unique
    result's first iteration.
    """
    order = sorted(first_iteration.items(), key=lambda x: (x[1], x[0]))
    docs = tuple(str(c) for c, _ in order)
    its = tuple(i for _, i in order)
    n = max(its, default=0)
    grades = {str(c): gains.get(c) for c in first_iteration}
    if known_good is None:
        session = Session("session", docs, its, its, n, grades)
        target = "retrieved"
    else:
        session = Session("session", docs, its, its, n, grades, judged=dict.fromkeys(known_good, threshold),
                          matches={str(c): tuple((matched or {}).get(c, ())) for c in first_iteration})
        target = "judged"
    capped = IterationsForAllGoodResults(threshold, cap, target)
    whole = IterationsForAllGoodResults(threshold, max(cap, n, 1), target)  # a cap that never binds
    results = compute(build_session_run([session], POLICIES), [capped, whole], warn=False)
    value = results.values[0, 0].item()
    if math.isnan(value):
        return value, None
    return value, not results.censored_queries(whole)
