"""Grades of one query's documents in each of the three modes, before any metric formula.

Every ranking metric of :mod:`gainscope.temporal.metrics` reads a :class:`Graded`: the grade of each retrieved
document in rank order, whether it counts as relevant, and the grades of the *judged pool* (every document whose
grade is known for the query: the ideal ranking of nDCG and the ``R`` of recall and AP come from it).

* **gold** (``retrieved_ids``, ``gold_ids``): ``gold_ids`` is a list (every listed id has grade 1) or
  ``{id: grade}`` (grades >= 0); a retrieved id not in it has grade 0. Relevant: grade >= ``rel`` (default 1).
  Pool: the gold grades.
* **focus time** (``qft``, ``dfts``, optional ``other_dfts``): grade ``4 * |QFT ∩ DFT| / |union(QFT, DFT)|``
  (Jaccard scaled to [0, 4], seed 001). Relevant: Jaccard > ``min_jaccard`` (default 0: any shared year).
  Pool: every ``dfts`` entry (the whole list given, not only the top k) and ``other_dfts`` (judged documents the
  system did not retrieve).
* **llm** (``query``, ``retrieved_docs``, optional ``other_docs``): the grade a judge gives (any object with
  the :class:`~gainscope.judges.labeling.Judge` protocol; this module never imports the HTTP client). The
  built-in ``temporal`` prompt is seed 001's 0-4 rubric. Relevant: grade >= ``rel``
  (default 2, "partially relevant: contains some temporal context"). Only the top k are graded unless the metric
  needs the pool; then every document given is. A failed grade is NaN with its reason in ``failures`` -- never 0.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gainscope.errors import InputError, JudgeError
from gainscope.io.texts import Document, Query
from gainscope.temporal.focus_time import FocusTime, as_focus_time, jaccard

if TYPE_CHECKING:
    from gainscope.judges.labeling import Judge

__all__ = ["Graded", "as_documents", "as_query", "focus_time_grades", "gold_grades", "judge_grades"]

#: the largest grade of the focus-time mode (Jaccard scaled to [0, 4]) and of the temporal rubric of LLM mode
FOCUS_TIME_SCALE = 4.0


@dataclass(frozen=True)
class Graded:
    """One query's grades. ``ranked``: grade per retrieved document, in rank order (NaN = failed LLM grade);
    ``relevant``: binary relevance per retrieved document; ``pool``: grades of every judged document (the ranked
    ones included); ``pool_relevant``: how many of them are relevant; ``failures``: ``(doc id, reason)`` of failed
    grades; ``undefined``: why no metric can be computed (e.g. a query without focus time), else empty."""

    ranked: tuple[float, ...]
    relevant: tuple[bool, ...]
    pool: tuple[float, ...]
    pool_relevant: int
    doc_ids: tuple[str, ...] = ()
    failures: tuple[tuple[str, str], ...] = ()
    undefined: str = ""


def _unique(ids: Sequence[str], what: str) -> None:
    seen: set[str] = set()
    for i in ids:
        if i in seen:
            raise InputError(f"{what}: document {i!r} is retrieved twice; a ranking lists each document once")
        seen.add(i)


def gold_grades(retrieved_ids: Sequence[object], gold_ids: Sequence[object] | Set[object] | Mapping[object, object],
                rel: float) -> Graded:
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
    ranked = tuple(gold.get(i, 0.0) for i in ids)
    return Graded(ranked, tuple(g >= rel for g in ranked), tuple(gold.values()),
                  sum(g >= rel for g in gold.values()), ids)


def focus_time_grades(qft: object, dfts: Sequence[object], other_dfts: Sequence[object], min_jaccard: float) -> Graded:
    """Focus-time mode (see the module docstring)."""
    if isinstance(dfts, str | FocusTime):
        raise InputError("dfts is a list with one focus time per retrieved document; got a single focus time")
    q = as_focus_time(qft, "qft")
    ranked_ft = [as_focus_time(d, f"dfts[{i}]") for i, d in enumerate(dfts)]
    other_ft = [as_focus_time(d, f"other_dfts[{i}]") for i, d in enumerate(other_dfts)]
    js = [jaccard(q, d) for d in ranked_ft]
    pool_js = js + [jaccard(q, d) for d in other_ft]
    ranked = tuple(FOCUS_TIME_SCALE * j for j in js)
    return Graded(ranked, tuple(j > min_jaccard for j in js), tuple(FOCUS_TIME_SCALE * j for j in pool_js),
                  sum(j > min_jaccard for j in pool_js), tuple(str(i + 1) for i in range(len(dfts))),
                  undefined="" if q else "the query has no focus time (an empty QFT)")


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


async def _grade_all(judge: Judge, pairs: Sequence[tuple[Query, Document]]) -> list[tuple[float, str]]:
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
                       k: int, rel: float, whole_pool: bool) -> Graded:
    """LLM mode (see the module docstring): the top ``k`` graded, or every document when ``whole_pool``."""
    q = as_query(query)
    ranked_docs = as_documents(retrieved_docs, "retrieved_docs")
    others = as_documents(other_docs, "other_docs", start=len(ranked_docs) + 1)
    todo = ranked_docs + others if whole_pool else ranked_docs[:k]
    _unique([d.doc_id for d in todo], "retrieved_docs + other_docs")
    results = await _grade_all(judge, [(q, d) for d in todo])
    grades = [g for g, _ in results]
    failures = tuple((d.doc_id, why) for d, (_, why) in zip(todo, results, strict=True) if why)
    n_ranked = len(ranked_docs) if whole_pool else min(k, len(ranked_docs))
    ranked = tuple(grades[:n_ranked])
    pool = tuple(grades)
    return Graded(ranked, tuple(g >= rel for g in ranked), pool, sum(g >= rel for g in pool),
                  tuple(d.doc_id for d in ranked_docs[:n_ranked]), failures)
