"""A case: queries, each with the ratings given to documents and the documents the engine returned.

This is Quepid's case reduced to what scoring needs. A :class:`CaseQuery` holds

* ``query``: the query text (Quepid identifies queries by their text; so does :func:`compare_cases`);
* ``ratings``: ``{doc_id: rating}`` for every rated document, returned or not (Quepid's "best docs" come
  from all of them, including documents rated through "Find and Rate Missing Documents");
* ``results``: the returned doc ids in rank order (a snapshot of the engine's answer);
* ``options``: the per-query JSON options a scorer reads with ``qOption(key)``;
* ``num_found``: the engine's total hit count (``numFound()``; the number of results when not given);
* ``id``: an optional short id used in exports (TREC files need ids without spaces); the query text otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gainscope.cases.scale import RatingScale
from gainscope.errors import InconsistentInputError, InputError

__all__ = ["Case", "CaseQuery"]


@dataclass(frozen=True)
class CaseQuery:
    """One query of a case (see the module docstring)."""

    query: str
    ratings: Mapping[str, float] = field(default_factory=dict)
    results: tuple[str, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)
    num_found: int | None = None
    id: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.query, str) or not self.query:
            raise InputError(f"a query needs a non-empty text; got {self.query!r}")
        object.__setattr__(self, "results", tuple(self.results))
        seen: set[str] = set()
        for i, doc in enumerate(self.results, start=1):
            if doc in seen:
                raise InconsistentInputError(f"query {self.query!r}: document {doc!r} is returned twice "
                                             f"(again at rank {i}); a result list names each document once")
            seen.add(doc)
        for doc, rating in self.ratings.items():
            if isinstance(rating, bool) or not isinstance(rating, (int, float)) or rating != rating:
                raise InputError(f"query {self.query!r}: the rating of {doc!r} must be a number; got {rating!r}")
        if self.num_found is not None and self.num_found < len(self.results):
            raise InconsistentInputError(f"query {self.query!r}: num_found {self.num_found} is smaller than the "
                                         f"{len(self.results)} results returned")

    @property
    def qid(self) -> str:
        """The explicit id, else the query text."""
        return self.id if self.id is not None else self.query

    def rating_list(self) -> list[float | None]:
        """The rating of each returned document in rank order, None for unrated ones."""
        return [self.ratings.get(d) for d in self.results]


@dataclass(frozen=True)
class Case:
    """Queries with ratings and results, the scorer to use and the rating scale."""

    queries: tuple[CaseQuery, ...]
    scale: RatingScale | None = None
    scorer: Any = None
    name: str | None = None
    source: str | None = None
    notes: tuple[str, ...] = ()
    #: the engine the queries run against (Quepid's search endpoint): ``FILE.toml:NAME``, an index folder or
    #: ``module:function``, relative to the case file (see :mod:`gainscope.cases.live`)
    engine: str | None = None
    #: Quepid's "try": knob values and template overrides for the engine, ``{"knobs": {...}, "params": {...}}``
    try_: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "queries", tuple(self.queries))
        texts: dict[str, int] = {}
        ids: dict[str, int] = {}
        for i, q in enumerate(self.queries, start=1):
            if q.query in texts:
                raise InconsistentInputError(f"query {q.query!r} appears twice (queries {texts[q.query]} and {i})"
                                             + (f" in {self.source}" if self.source else "")
                                             + "; a case holds each query text once")
            texts[q.query] = i
            if q.id is not None:
                if q.id in ids:
                    raise InconsistentInputError(f"query id {q.id!r} is used twice (queries {ids[q.id]} and {i})")
                ids[q.id] = i
        if self.scale is not None:
            for q in self.queries:
                for doc, rating in q.ratings.items():
                    self.scale.check(rating, f"query {q.query!r}, document {doc!r}")

    def query(self, text: str) -> CaseQuery:
        """The query with this text (KeyError when absent)."""
        for q in self.queries:
            if q.query == text:
                return q
        raise KeyError(text)

    def with_scale(self, scale: RatingScale | None) -> Case:
        """The same case on another scale (checked)."""
        return replace(self, scale=scale)

    @classmethod
    def from_parts(cls, ratings: Mapping[str, Mapping[str, float]],
                   results: Mapping[str, Sequence[str]] | None = None, *, scale: Any = None, scorer: Any = None,
                   name: str | None = None, source: str | None = None, notes: Sequence[str] = ()) -> Case:
        """A case from ``{query: {doc: rating}}`` and ``{query: [doc ids in rank order]}``: queries in the
        order they first appear in ``ratings``, then those only in ``results`` (the dashboard imports TREC qrels
        this way)."""
        results = results or {}
        order = list(ratings) + [q for q in results if q not in ratings]
        queries = tuple(CaseQuery(q, dict(ratings.get(q, {})), tuple(results.get(q, ()))) for q in order)
        return cls(queries, RatingScale.parse(scale) if scale is not None else None, scorer, name, source,
                   tuple(notes))
