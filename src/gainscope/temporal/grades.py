"""The adapter's grading: one query's retrieved documents and its judged pool, graded in each of the three modes,
before any metric (the metrics are the core's, :mod:`gainscope.temporal.engine`).

A :class:`Graded` query holds the retrieved documents in rank order, their grades (shown with a value) and the
*judged pool*: every document whose grade is known for the query, retrieved or not -- the ideal ranking of nDCG
and the ``R`` of recall and AP come from it.

* **gold** (``retrieved_ids``, ``gold_ids``): ``gold_ids`` is a list (every listed id has grade 1) or
  ``{id: grade}`` (grades >= 0). The pool is the gold; a retrieved id not in it is not judged (grade 0 shown),
  so it is never relevant and adds no gain.
* **focus time** (``qft``, ``dfts``, optional ``other_dfts``): grade ``4 * |QFT ∩ DFT| / |union(QFT, DFT)|``
  (Jaccard scaled to [0, 4], seed 001). The pool is every ``dfts`` entry (the whole list given, not only the top
  k) and ``other_dfts`` (judged documents the system did not retrieve). An empty QFT grades nothing: every value
  is undefined, with that reason.
* **llm** (``query``, ``retrieved_docs``, optional ``other_docs``): the grade a judge gives (any object with
  the :class:`~gainscope.judges.labeling.Judge` protocol; this module never imports the HTTP client). The
  built-in ``temporal`` prompt is seed 001's 0-4 rubric. Only the top k are graded unless the metric needs the
  pool; then every document given is. A failed grade is NaN with its reason in ``failures`` -- never 0 -- and
  the document is left out of the pool.

Which grades count as relevant (``rel``, ``min_jaccard``) is the metric's relevance level, applied by the core.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gainscope.errors import InputError, JudgeError
from gainscope.io.texts import Document, Query
from gainscope.temporal.focus_time import FocusTime, as_focus_time, jaccard

if TYPE_CHECKING:
    from gainscope.judges.labeling import Judge

__all__ = ["FOCUS_TIME_SCALE", "Graded", "as_documents", "as_query", "focus_time_grades", "fresh_ids", "gold_grades",
           "grade_all", "judge_grades"]

#: the largest grade of the focus-time mode (Jaccard scaled to [0, 4]) and of the temporal rubric of LLM mode
FOCUS_TIME_SCALE = 4.0


@dataclass(frozen=True)
class Graded:
    """One query's grades. ``doc_ids``: the retrieved documents in rank order; ``ranked``: their grades (NaN =
    failed LLM grade; 0 for a document not in the gold); ``pool``: ``{doc id: grade}`` of every judged document
    (the ranked ones included, failed ones left out); ``failures``: ``(doc id, reason)`` of failed grades;
    ``undefined``: why no value can be computed (e.g. a query without focus time), else empty."""

    doc_ids: tuple[str, ...]
    ranked: tuple[float, ...]
    pool: Mapping[str, float] = field(default_factory=dict)
    failures: tuple[tuple[str, str], ...] = ()
    undefined: str = ""


def _unique(ids: Sequence[str], what: str) -> None:
    seen: set[str] = set()
    for i in ids:
        if i in seen:
            raise InputError(f"{what}: document {i!r} is retrieved twice; a ranking lists each document once")
        seen.add(i)


def gold_grades(retrieved_ids: Sequence[object],
                gold_ids: Sequence[object] | Set[object] | Mapping[object, object]) -> Graded:
    """Gold mode (see the module docstring)."""
    if isinstance(gold_ids, str) or isinstance(retrieved_ids, str):
        raise InputError("retrieved_ids and gold_ids are lists of ids (or gold_ids a {id: grade} dict), not a string")
    if not isinstance(gold_ids, Mapping | Sequence | Set):
        raise InputError("gold_ids is a list of document ids or a {id: grade} dict; got "
                         f"{type(gold_ids).__name__} {gold_ids!r}")
    if not isinstance(retrieved_ids, Sequence):
        raise InputError(f"retrieved_ids is a list of document ids; got {type(retrieved_ids).__name__}")
    if isinstance(gold_ids, Mapping):
        gold: dict[str, float] = {}
        for key, value in gold_ids.items():
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
                raise InputError(f"gold_ids[{key!r}]: a grade is a finite number >= 0; got {value!r}")
            gold[str(key)] = float(value)
    else:
        gold = {str(g): 1.0 for g in gold_ids}
    ids = tuple(str(i) for i in retrieved_ids)
    _unique(ids, "retrieved_ids")
    return Graded(ids, tuple(gold.get(i, 0.0) for i in ids), gold)


def fresh_ids(prefix: str, n: int, taken: Set[str]) -> list[str]:
    """``n`` document ids ``prefix1``, ``prefix2``, ... none of which is in ``taken``."""
    out: list[str] = []
    i = 0
    while len(out) < n:
        i += 1
        if f"{prefix}{i}" not in taken:
            out.append(f"{prefix}{i}")
    return out


def focus_time_grades(qft: object, dfts: Sequence[object], other_dfts: Sequence[object],
                      doc_ids: Sequence[str] | None = None) -> Graded:
    """Focus-time mode (see the module docstring); ``doc_ids`` name the retrieved documents (default ``1``,
    ``2``, ... by rank)."""
    if isinstance(dfts, str | FocusTime):
        raise InputError("dfts is a list with one focus time per retrieved document; got a single focus time")
    q = as_focus_time(qft, "qft")
    ranked_ft = [as_focus_time(d, f"dfts[{i}]") for i, d in enumerate(dfts)]
    other_ft = [as_focus_time(d, f"other_dfts[{i}]") for i, d in enumerate(other_dfts)]
    ids = tuple(doc_ids) if doc_ids is not None else tuple(str(i + 1) for i in range(len(ranked_ft)))
    grades = [FOCUS_TIME_SCALE * jaccard(q, d) for d in ranked_ft]
    others = fresh_ids("", len(other_ft), set(ids))  # judged, not retrieved: any id the ranking does not use
    pool = dict(zip(ids, grades, strict=True))
    pool.update(zip(others, (FOCUS_TIME_SCALE * jaccard(q, d) for d in other_ft), strict=True))
    return Graded(ids, tuple(grades), pool, undefined="" if q else "the query has no focus time (an empty QFT)")


def as_query(query: object) -> Query:
    """A :class:`~gainscope.io.texts.Query` from a Query or a string (id ``q``)."""
    if isinstance(query, Query):
        return query
    if isinstance(query, str) and query.strip():
        return Query("q", query)
    raise InputError(f"query: expected the query text or a Query; got {query!r}")


def as_documents(docs: Sequence[object], what: str, start: int = 1) -> list[Document]:
    """Documents from Documents or strings (ids ``d1``, ``d2``, ... by position, from ``start``)."""
    if isinstance(docs, str):
        raise InputError(f"{what} is a list of document texts; got a single string")
    out: list[Document] = []
    for i, d in enumerate(docs):
        if isinstance(d, Document):
            out.append(d)
        elif isinstance(d, str):
            out.append(Document(f"d{start + i}", d))
        else:
            raise InputError(f"{what}[{i}]: expected a document text or a Document; got {type(d).__name__}")
    _unique([d.doc_id for d in out], what)
    return out


async def grade_all(judge: Judge, pairs: Sequence[tuple[Query, Document]]) -> list[tuple[float, str]]:
    """``(grade, "")`` or ``(nan, reason)`` per pair, graded concurrently (the judge limits its own rate)."""

    async def one(q: Query, d: Document) -> tuple[float, str]:
        try:
            label = await judge.grade(q, d)
        except JudgeError as exc:  # the budget, or a judge that raises instead of returning a failed label
            return math.nan, f"{type(exc).__name__}: {exc}"
        if label.status != "ok" or label.grade is None:
            return math.nan, label.error or "the judge returned no grade"
        if not 0 <= label.grade <= FOCUS_TIME_SCALE:
            return math.nan, f"grade {label.grade} is outside the 0-4 temporal scale"
        return float(label.grade), ""

    return list(await asyncio.gather(*(one(q, d) for q, d in pairs)))


async def judge_grades(judge: Judge, query: object, retrieved_docs: Sequence[object], other_docs: Sequence[object],
                       k: int, whole_pool: bool) -> Graded:
    """LLM mode (see the module docstring): the top ``k`` graded, or every document when ``whole_pool``."""
    q = as_query(query)
    ranked_docs = as_documents(retrieved_docs, "retrieved_docs")
    others = as_documents(other_docs, "other_docs", start=len(ranked_docs) + 1)
    todo = ranked_docs + others if whole_pool else ranked_docs[:k]
    _unique([d.doc_id for d in todo], "retrieved_docs + other_docs")
    results = await grade_all(judge, [(q, d) for d in todo])
    failures = tuple((d.doc_id, why) for d, (_, why) in zip(todo, results, strict=True) if why)
    n_ranked = len(ranked_docs) if whole_pool else min(k, len(ranked_docs))
    pool = {d.doc_id: g for d, (g, why) in zip(todo, results, strict=True) if not why}
    return Graded(tuple(d.doc_id for d in ranked_docs), tuple(g for g, _ in results[:n_ranked]), pool, failures)
