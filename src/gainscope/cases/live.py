"""Cases go live: a case names an engine and a try (Quepid's search endpoint and try), its queries run against the
engine into a snapshot, and the answers refresh the case's results.

* The engine is the one given (``--engine``), else the case's ``engine`` (``FILE.toml:NAME``, an index folder or
  ``module:function``, relative to the case file).
* The try: ``knobs`` (knob values for this case) and, for an engine declared in TOML, template overrides --
  ``url``, ``method``, ``params``, ``body``, ``headers`` -- that replace those keys of the declaration, as a
  Quepid try replaces the query template of its endpoint. Nothing else of the declaration (the mapping, the
  credentials) can be changed by a case.
* Each query is sent with its text and its options (``{{opt.x}}``), under its TREC id (its ``id``, else its text
  with spaces as ``_``); the answers become the new case's ``results`` (ids in rank order) and ``num_found``
  (the engine's total), the ratings stay as they are. A case is refreshed only when every query was answered: a
  failed query never becomes an empty result list.

:func:`case_from_snapshot` goes the other way for comparisons: a recorded snapshot read as a case with a given
case's ratings (queries matched by TREC id).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from gainscope.cases.model import Case, CaseQuery
from gainscope.cases.overlap import check_query_join
from gainscope.cases.trec import trec_ids
from gainscope.errors import EngineConfigError, InputError, option

__all__ = ["TRY_KEYS", "case_engine", "case_from_snapshot", "refreshed_case", "with_ratings"]

#: what a case's try may set
TRY_KEYS = ("knobs", "url", "method", "params", "body", "headers")


def _try(case: Case) -> tuple[dict[str, Any], dict[str, Any]]:
    """The try's knobs and template overrides, checked."""
    tried = dict(case.try_ or {})
    for key in tried:
        if key not in TRY_KEYS:
            raise EngineConfigError(f"{case.source or 'the case'}: 'try' may set {', '.join(TRY_KEYS)}; got {key!r}")
    knobs = tried.pop("knobs", None) or {}
    if not isinstance(knobs, Mapping):
        raise EngineConfigError(f"{case.source or 'the case'}: try.knobs must be an object of knob values")
    return dict(knobs), tried


def case_engine(case: Case, spec: str | None = None) -> tuple[Any, dict[str, Any]]:
    """The engine for ``case`` (``spec``, else the case's own) with its try's template overrides applied, and the
    try's knob values."""
    from gainscope.search.config import load_engine

    knobs, overrides = _try(case)
    if spec is None:
        if case.engine is None:
            raise InputError(f"{case.source or 'the case'}: the case names no engine; give one with --engine (or add "
                             "\"engine\": \"engines.toml:NAME\" to the case)")
        spec = case.engine
        head, sep, tail = spec.rpartition(":")
        base = Path(case.source).parent if case.source else Path.cwd()
        if sep and head.lower().endswith(".toml") and not Path(head).is_absolute():
            spec = f"{base / head}:{tail}"
        elif (not sep or spec.lower().endswith(".toml")) and not Path(spec).is_absolute():
            spec = str(base / spec)
    return load_engine(spec, overrides=overrides or None), knobs


def refreshed_case(case: Case, results: Sequence[Any]) -> Case:
    """``case`` with each query's results and num_found taken from the snapshot ``results`` (query results keyed
    by the case's TREC ids); every query must have been answered."""
    ids = trec_ids(case)
    by_id = {r.query_id: r for r in results}
    missing = [q.query for q in case.queries if ids[q.query] not in by_id or not by_id[ids[q.query]].ok]
    if missing:
        raise InputError(f"{len(missing)} quer{'y' if len(missing) == 1 else 'ies'} of the case got no answer "
                         f"({', '.join(map(repr, missing[:5]))}); the case is not refreshed (a failed query is never "
                         "an empty result list)")
    queries = []
    for q in case.queries:
        answer = by_id[ids[q.query]]
        queries.append(replace(q, results=tuple(h.id for h in answer.hits),
                               num_found=max(answer.total, len(answer.hits)) if answer.total is not None else None))
    return replace(case, queries=tuple(queries))


def case_from_snapshot(ratings: Case, results: Sequence[Any], *, name: str) -> Case:
    """The snapshot ``results`` as a case scored with ``ratings``' ratings: the ratings case's queries that the
    snapshot answered (matched by TREC id, else by text), with the snapshot's results and totals."""
    ids = trec_ids(ratings)
    by_id = {r.query_id: r for r in results if r.ok}
    by_text = {r.query: r for r in results if r.ok}
    queries: list[CaseQuery] = []
    for q in ratings.queries:
        answer = by_id.get(ids[q.query]) or by_text.get(q.query)
        if answer is None:
            continue
        queries.append(CaseQuery(q.query, dict(q.ratings), tuple(h.id for h in answer.hits), dict(q.options),
                                 max(answer.total, len(answer.hits)) if answer.total is not None else None, q.id))
    if not queries:
        raise InputError(f"snapshot {name!r} answered none of the queries of {ratings.source or 'the ratings case'} "
                         f"(its query ids: {', '.join(r.query_id for r in list(results)[:5])}); compare snapshots of "
                         "the case's own queries")
    return Case(tuple(queries), ratings.scale, ratings.scorer, name, ratings.source, ratings.notes, ratings.engine,
                ratings.try_)


def with_ratings(case: Case, ratings: Case) -> Case:
    """``case``'s results scored with ``ratings``' ratings (queries matched by text; a query ``ratings`` lacks is
    unrated), as Quepid scores an old snapshot with today's ratings."""
    check_query_join([q.query for q in case.queries], [q.query for q in ratings.queries],
                     left_name=case.source or "the case",
                     right_name="the ratings case" + (f" {ratings.source}" if ratings.source else ""),
                     hint=f"queries are matched by their text; give {option('ratings', ..., cli='--ratings')} a case "
                          "of the same queries")
    by_text = {q.query: q.ratings for q in ratings.queries}
    queries = tuple(replace(q, ratings=dict(by_text.get(q.query, {}))) for q in case.queries)
    return replace(case, queries=queries, scale=ratings.scale if ratings.scale is not None else case.scale)
