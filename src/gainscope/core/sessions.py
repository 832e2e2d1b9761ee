"""Sessions: what an agent retrieved over several iterations and searches, as a :class:`JudgedRun` with a
:class:`~gainscope.core.judged_run.SessionLayout`, for the session metrics (seed 003) and every other metric.

A :class:`Session` lists the documents retrieved, in order (iteration, then search, then rank), each with the
iteration and the search that returned it; the same document may come back (a duplicate, already resolved by
whoever built the session: equal keys are one document). Each document has a grade, or None when its gain is
unknown; a judged pool (by default the known grades) says which documents exist to be found, and ``matches``
which judged documents a retrieved one is.

>>> from gainscope.core.sessions import Session, build_session_run
>>> s = Session("c1", documents=("a", "b", "a"), iterations=(1, 1, 2), searches=(1, 2, 3), num_iterations=2,
...             grades={"a": 3.0, "b": None})
>>> jr = build_session_run([s])
>>> jr.session.first.tolist(), jr.session.unknown.tolist()
([True, True, False], [False, True, False])
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from gainscope.core.judged_run import Coverage, JudgedRun, SessionLayout
from gainscope.core.policies import Policies
from gainscope.deferred import deferred_module
from gainscope.errors import InconsistentInputError, InputError, PolicyError

if TYPE_CHECKING:
    import polars as pl
else:
    pl = deferred_module("polars")

__all__ = ["Session", "build_session_run"]


@dataclass(frozen=True)
class Session:
    """One session: the documents retrieved in order and what is known about them.

    ``documents``, ``iterations``, ``searches``: one entry per retrieved result, duplicates included; the
    iteration (1..``num_iterations``) and the search (numbered over the session from 1; a search that
    returned nothing keeps its number) are non-decreasing. ``num_iterations`` is N, iterations without results
    included. ``grades``: every retrieved document's grade, None when its gain is unknown. ``judged``: the
    judged pool, doc id -> grade (None: the known ``grades``). ``matches``: the judged doc ids each retrieved
    document is (None: itself).
    """

    session_id: str
    documents: tuple[str, ...]
    iterations: tuple[int, ...]
    searches: tuple[int, ...]
    num_iterations: int
    grades: Mapping[str, float | None]
    judged: Mapping[str, float] | None = None
    matches: Mapping[str, Sequence[str]] | None = field(default=None)


def build_session_run(sessions: Sequence[Session], policies: Policies | None = None, *,
                      run_name: str = "sessions") -> JudgedRun:
    """The dense :class:`JudgedRun` of ``sessions``, in the order given (session ids must be unique).

    The positions are every retrieved result in order (``rank`` 1, 2, ... over the session); grades follow the
    ``negative_grades`` and ``judged_grades`` policies as in :func:`~gainscope.core.judged_run.build_judged_run`.
    The order is the session's own, so the ``ties`` policy has nothing to break; ``depth`` and ``judged_only``
    do not apply to a session (a PolicyError).
    """
    policies = policies or Policies(ties="rank")
    if policies.depth is not None or policies.judged_only:
        raise PolicyError("depth and judged_only do not apply to sessions: a session is evaluated whole")
    if not sessions:
        raise InputError("no session to evaluate")
    ids = [s.session_id for s in sessions]
    seen: set[str] = set()
    for sid in ids:
        if sid in seen:
            raise InconsistentInputError(f"session {sid!r} is given twice; session ids must be unique")
        seen.add(sid)
    parts = [_positions(s, policies) for s in sessions]
    pools = [_pool(s, policies, first_iterations) for s, (_, _, _, _, _, first_iterations) in zip(sessions, parts,
                                                                                                  strict=True)]
    lengths = np.array([len(s.documents) for s in sessions], dtype=np.int64)
    offsets = np.zeros(len(sessions) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    rank = np.arange(1, int(offsets[-1]) + 1, dtype=np.int64) - np.repeat(offsets[:-1], lengths)
    judged_lengths = np.array([len(p[0]) for p in pools], dtype=np.int64)
    judged_offsets = np.zeros(len(sessions) + 1, dtype=np.int64)
    np.cumsum(judged_lengths, out=judged_offsets[1:])
    judged_grades = _concat([p[1] for p in pools], np.float64)
    if policies.judged_grades == "truncated":
        judged_grades = np.trunc(judged_grades)
    one = np.ones(len(rank), dtype=np.int64)
    empty_f, empty_i = np.zeros(0, dtype=np.float64), np.zeros(0, dtype=np.int64)
    layout = SessionLayout(
        iteration=_concat([p[1] for p in parts], np.int64), search=_concat([p[2] for p in parts], np.int64),
        first=_concat([p[3] for p in parts], np.bool_), unknown=_concat([p[4] for p in parts], np.bool_),
        num_iterations=np.array([s.num_iterations for s in sessions], dtype=np.int64),
        judged_iteration=_concat([p[2] for p in pools], np.int64))
    n = len(sessions)
    return JudgedRun(
        query_ids=tuple(ids), num_ret=lengths, offsets=offsets, rank=rank,
        grades=_concat([p[0] for p in parts], np.float64), doc_ids=pl.Series(
            "doc_id", [d for s in sessions for d in s.documents], dtype=pl.String),
        scores=np.full(len(rank), np.nan), group_start=rank.copy(), group_kept=one, group_size=one.copy(),
        tail_grades=empty_f, tail_query=empty_i, tail_start=empty_i, tail_kept=empty_i, tail_size=empty_i,
        judged_offsets=judged_offsets, judged_grades=judged_grades,
        judged_doc_ids=pl.Series("doc_id", [d for p in pools for d in p[0]], dtype=pl.String),
        missing=np.zeros(n, dtype=bool), policies=policies, run_name=run_name, coverage=Coverage(n, n, n),
        session=layout)


def _concat(arrays: list[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(arrays).astype(dtype, copy=False) if arrays else np.zeros(0, dtype=dtype)


def _grade(value: float | None, policies: Policies, where: str) -> float:
    """A grade as a float (NaN = unknown), negative ones made 0 under ``negative_grades="nonrelevant"``."""
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"{where}: a grade must be a finite number or None (unknown); got {value!r}")
    return max(float(value), 0.0) if policies.negative_grades == "nonrelevant" else float(value)


def _positions(s: Session, policies: Policies) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                        dict[str, int]]:
    """Grades, iterations, searches, first-occurrence and unknown masks of a session's positions, and the
    iteration of each document's first occurrence."""
    where = f"session {s.session_id!r}"
    n = len(s.documents)
    if len(s.iterations) != n or len(s.searches) != n:
        raise InputError(f"{where}: {n} documents but {len(s.iterations)} iterations and {len(s.searches)} searches; "
                         "give one of each per retrieved document")
    if s.num_iterations < 0:
        raise InputError(f"{where}: num_iterations must be >= 0; got {s.num_iterations}")
    its = np.array(s.iterations, dtype=np.int64)
    searches = np.array(s.searches, dtype=np.int64)
    if n and (its.min() < 1 or its.max() > s.num_iterations or (np.diff(its) < 0).any()):
        raise InputError(f"{where}: iterations must be non-decreasing within 1..{s.num_iterations} (num_iterations)")
    if n and (searches.min() < 1 or (np.diff(searches) < 0).any()):
        raise InputError(f"{where}: searches must be numbered from 1, non-decreasing")
    first_iteration: dict[str, int] = {}
    first = np.zeros(n, dtype=bool)
    grades = np.empty(n, dtype=np.float64)
    unknown = np.zeros(n, dtype=bool)
    for k, (doc, it) in enumerate(zip(s.documents, s.iterations, strict=True)):
        if doc not in s.grades:
            raise InconsistentInputError(f"{where}: document {doc!r} has no entry in grades (None for an unknown "
                                         "gain)")
        if doc not in first_iteration:
            first_iteration[doc] = int(it)
            first[k] = True
        grades[k] = _grade(s.grades[doc], policies, f"{where}, document {doc!r}")
        unknown[k] = s.grades[doc] is None
    return grades, its, searches, first, unknown, first_iteration


def _pool(s: Session, policies: Policies, first_iteration: Mapping[str, int]) -> tuple[list[str], np.ndarray,
                                                                                       np.ndarray]:
    """The judged pool of a session (doc ids, non-negative grades sorted descending then by doc id, as
    :class:`~gainscope.core.judged_run.PreparedJudgments` sorts them) and the first iteration at which each was
    retrieved (0 = never)."""
    where = f"session {s.session_id!r}"
    judged = s.judged if s.judged is not None else {d: g for d, g in s.grades.items() if g is not None}
    entries = []
    for doc, g in judged.items():
        value = _grade(g, policies, f"{where}, judged document {doc!r}")
        if math.isnan(value):
            raise InputError(f"{where}: judged document {doc!r} has no grade")
        if value >= 0:
            entries.append((doc, value))
    entries.sort(key=lambda e: (-e[1], e[0]))
    found: dict[str, int] = {}
    for doc, it in first_iteration.items():
        for judged_id in (s.matches.get(doc, ()) if s.matches is not None else (doc,)):
            if judged_id not in found or it < found[judged_id]:
                found[judged_id] = it
    return ([d for d, _ in entries], np.array([g for _, g in entries], dtype=np.float64),
            np.array([found.get(d, 0) for d, _ in entries], dtype=np.int64))
