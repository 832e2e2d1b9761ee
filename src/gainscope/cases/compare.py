"""Two cases query by query: how each query's score changed, and which documents entered or left the top k.

The typical use is two snapshots of the same queries (before and after a change to the search). Queries are
paired by text; two cases that share no query are an error (the queries of only one case are listed). Each case
is scored with its own ratings (pass the same ratings to both if the change was to the engine only: Quepid
rescores old snapshots with the current ratings, which is the same thing). ``k`` is the given one, else the
scorer's depth (``nDCG@10``: 10; a JavaScript scorer's ``k`` variable), else 10.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gainscope.cases.model import Case
from gainscope.cases.overlap import check_query_join
from gainscope.cases.scorers import Scorer
from gainscope.cases.scoring import CaseScore, QueryScore, score_case
from gainscope.errors import InvalidParameterError

__all__ = ["CaseComparison", "QueryChange", "compare_cases"]

DEFAULT_DEPTH = 10


@dataclass(frozen=True)
class QueryChange:
    """One query in both cases: scores, the change, and the documents that moved across the top ``k``."""

    query: str
    a: QueryScore
    b: QueryScore
    k: int
    entered: tuple[str, ...]
    left: tuple[str, ...]

    @property
    def delta(self) -> float | None:
        """``b - a`` when both queries have a score, else None."""
        if self.a.value is None or self.b.value is None:
            return None
        return self.b.value - self.a.value


@dataclass(frozen=True)
class CaseComparison:
    """Scores of both cases, per-query changes, and the queries found in one case only."""

    a: CaseScore
    b: CaseScore
    changes: tuple[QueryChange, ...]
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]

    @property
    def delta(self) -> float | None:
        """Change of the case score (None when either is undefined)."""
        if self.a.score is None or self.b.score is None:
            return None
        return self.b.score - self.a.score

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary."""
        return {
            "a": {"case": self.a.case_name, "scorer": self.a.scorer, "score": self.a.score},
            "b": {"case": self.b.case_name, "scorer": self.b.scorer, "score": self.b.score},
            "delta": self.delta,
            "queries": [{"query": c.query, "a": c.a.value, "a_status": c.a.status, "b": c.b.value,
                         "b_status": c.b.status, "delta": c.delta, "k": c.k, "entered": list(c.entered),
                         "left": list(c.left)} for c in self.changes],
            "only_in_a": list(self.only_a),
            "only_in_b": list(self.only_b),
            "conventions": {"a": list(self.a.conventions), "b": list(self.b.conventions)},
        }


def _named(what: str, case: Case) -> str:
    return f"{what} ({case.source})" if case.source else what


def _depth(k: int | None, scorer: Scorer, score: QueryScore) -> int:
    for value in (k, scorer.depth, score.depth):
        if value is not None:
            return value
    return DEFAULT_DEPTH


def compare_cases(a: Case, b: Case, scorer: Scorer, scorer_b: Scorer | None = None, *, k: int | None = None,
                  **options: Any) -> CaseComparison:
    """Score both cases (``scorer_b`` for ``b`` when given) and pair their queries; ``options`` go to
    :func:`~gainscope.cases.scoring.score_case`."""
    if k is not None and k < 1:
        raise InvalidParameterError(f"k must be >= 1; got {k}")
    check_query_join([q.query for q in a.queries], [q.query for q in b.queries], left_name=_named("case A", a),
                     right_name=_named("case B", b), hint="queries are paired by their text", warn=False)
    sb = scorer_b or scorer
    score_a, score_b = score_case(a, scorer, **options), score_case(b, sb, **options)
    b_queries = {q.query: q for q in b.queries}
    a_texts = {q.query for q in a.queries}
    changes = []
    for qa in a.queries:
        qb = b_queries.get(qa.query)
        if qb is None:
            continue
        sa, s2 = score_a.query(qa.query), score_b.query(qa.query)
        depth = max(_depth(k, scorer, sa), _depth(k, sb, s2)) if k is None else k
        top_a, top_b = qa.results[:depth], qb.results[:depth]
        changes.append(QueryChange(qa.query, sa, s2, depth, tuple(d for d in top_b if d not in top_a),
                                   tuple(d for d in top_a if d not in top_b)))
    return CaseComparison(score_a, score_b, tuple(changes),
                          tuple(q.query for q in a.queries if q.query not in b_queries),
                          tuple(q.query for q in b.queries if q.query not in a_texts))
