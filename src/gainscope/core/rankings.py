"""Rankings already in their final order, each with the grades of its judged pool, as a :class:`JudgedRun`.

:func:`~gainscope.core.judged_run.build_judged_run` joins a :class:`~gainscope.core.run.Run` with
:class:`~gainscope.core.judgments.Judgments` and puts each ranking in order under the ``ties`` policy. An adapter
that grades documents itself -- the temporal package (gold ids, 4 x the focus-time Jaccard, an LLM judge) --
already holds, for each query, the documents in the order the system returned them and the grade of every
document it judged; :func:`judged_run_of_rankings` builds the dense :class:`JudgedRun` of that directly, without
a join or a sort, so that the adapter reaches the metric kernels for a single query in a fraction of a
millisecond. Two things differ from a join of a Run with Judgments, on purpose:

* **every query given is evaluated, in the order given.** A query whose ranking is empty (the system returned
  nothing) is evaluated with an empty ranking -- P(denominator=retrieved) is then undefined, R@k 0 -- where a
  Run cannot hold a query without documents and ``build_judged_run`` would call it missing
  (``missing_queries``). A query whose judged pool is empty is evaluated with R = 0.
* **the order is the one given**: there are no scores, so the ``ties`` policy has nothing to break (as for a
  Run given as ordered lists).

The other policies apply as in ``build_judged_run``: ``depth`` keeps the first documents, ``judged_only`` then
drops the unjudged ones (renumbering the ranks, as trec_eval ``-J``), ``negative_grades="nonrelevant"`` makes
negative grades 0, ``judged_grades="truncated"`` truncates the judged pool's grades. On queries that are judged
and ranked, the result equals ``build_judged_run(judgments, run, policies)`` of the same data
(``tests/property/test_rankings_equal_join.py``).

>>> from gainscope.core.rankings import Ranking, judged_run_of_rankings
>>> jr = judged_run_of_rankings([Ranking("q1", ("b", "x", "a"), {"a": 2, "b": 0, "c": 1}), Ranking("q2", (), {})])
>>> jr.grades.tolist(), jr.num_ret.tolist(), jr.judged_grades.tolist()
([0.0, nan, 2.0], [3, 0], [2.0, 1.0, 0.0])
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from gainscope.core.judged_run import Coverage, JudgedRun
from gainscope.core.policies import Policies
from gainscope.errors import InconsistentInputError, InputError

__all__ = ["Ranking", "judged_run_of_rankings"]


@dataclass(frozen=True)
class Ranking:
    """One query: ``doc_ids`` in rank order (each once; empty when nothing was retrieved) and ``judged``, the
    grade of every document judged for the query, retrieved or not (a finite number; negative grades follow the
    ``negative_grades`` policy)."""

    query_id: str
    doc_ids: Sequence[str]
    judged: Mapping[str, float]


def judged_run_of_rankings(rankings: Sequence[Ranking], policies: Policies | None = None, *,
                           run_name: str = "run") -> JudgedRun:
    """The dense :class:`JudgedRun` of ``rankings`` under ``policies`` (default: ``ties="rank"``); see the module
    docstring."""
    policies = policies or Policies(ties="rank")
    seen: set[str] = set()
    ranked_docs: list[str] = []
    ranked_grades: list[float] = []
    lengths: list[int] = []
    pool_docs: list[str] = []
    pool_grades: list[float] = []
    pool_lengths: list[int] = []
    for r in rankings:
        if r.query_id in seen:
            raise InconsistentInputError(f"query {r.query_id!r} is given twice; give each query one ranking")
        seen.add(r.query_id)
        pool = _pool(r, policies)
        docs = list(r.doc_ids)
        if len(set(docs)) != len(docs):
            twice = next(d for i, d in enumerate(docs) if d in docs[:i])
            raise InconsistentInputError(f"doc {twice!r} appears more than once in the ranking of query "
                                         f"{r.query_id!r}; a ranking lists each document once")
        if policies.depth is not None:
            docs = docs[:policies.depth]
        grades = [pool.get(d, math.nan) for d in docs]
        if policies.judged_only:  # NaN (not judged) and negative (pooled, unjudged) grades are dropped
            kept = [(d, g) for d, g in zip(docs, grades, strict=True) if g >= 0]
            docs, grades = [d for d, _ in kept], [g for _, g in kept]
        ranked_docs += docs
        ranked_grades += grades
        lengths.append(len(docs))
        # the judged pool: non-negative grades, descending, ties by doc id (as PreparedJudgments sorts them)
        judged = sorted(((g, d) for d, g in pool.items() if g >= 0), key=lambda t: (-t[0], t[1]))
        pool_docs += [d for _, d in judged]
        pool_grades += [g for g, _ in judged]
        pool_lengths.append(len(judged))
    nq = len(lengths)
    num_ret = np.array(lengths, dtype=np.int64)
    offsets = np.zeros(nq + 1, dtype=np.int64)
    np.cumsum(num_ret, out=offsets[1:])
    rank = np.arange(1, len(ranked_docs) + 1, dtype=np.int64) - np.repeat(offsets[:-1], num_ret)
    judged_offsets = np.zeros(nq + 1, dtype=np.int64)
    np.cumsum(np.array(pool_lengths, dtype=np.int64), out=judged_offsets[1:])
    judged_grades = np.array(pool_grades, dtype=np.float64)
    if policies.judged_grades == "truncated":
        judged_grades = np.trunc(judged_grades)
    one = np.ones(len(rank), dtype=np.int64)
    empty_f, empty_i = np.zeros(0, dtype=np.float64), np.zeros(0, dtype=np.int64)
    return JudgedRun(
        query_ids=tuple(r.query_id for r in rankings), num_ret=num_ret, offsets=offsets, rank=rank,
        grades=np.array(ranked_grades, dtype=np.float64), doc_ids=pl.Series("doc_id", ranked_docs, dtype=pl.String),
        scores=np.full(len(rank), np.nan), group_start=rank.copy(), group_kept=one, group_size=one.copy(),
        tail_grades=empty_f, tail_query=empty_i, tail_start=empty_i, tail_kept=empty_i, tail_size=empty_i,
        judged_offsets=judged_offsets, judged_grades=judged_grades,
        judged_doc_ids=pl.Series("doc_id", pool_docs, dtype=pl.String), missing=np.zeros(nq, dtype=bool),
        policies=policies, run_name=run_name, coverage=Coverage(nq, nq, nq))


def _pool(r: Ranking, policies: Policies) -> dict[str, float]:
    """The query's judged grades as floats, checked, under the ``negative_grades`` policy."""
    pool: dict[str, float] = {}
    for doc, grade in r.judged.items():
        if isinstance(grade, bool) or not isinstance(grade, (int, float)) or not math.isfinite(grade):
            raise InputError(f"judgment grade must be a finite number; got {grade!r} for query {r.query_id!r}, "
                             f"doc {doc!r}")
        g = float(grade)
        pool[doc] = max(g, 0.0) if policies.negative_grades == "nonrelevant" else g
    return pool
