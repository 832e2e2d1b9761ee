"""What the pages show and the JSON API answers: one plain-data view of each thing, used by both (a page renders
the very dictionary that ``GET /api/...`` returns for it, so scripts see exactly what a person sees).

Scores come from the workspace's :class:`~gainscope.server.workspace.Scoreboard` (computed through
:mod:`gainscope.server.cases`); nothing here computes a metric. A query's score per scorer is
``{"value", "status", "reason", "counted"}`` as :func:`gainscope.cases.score_case` gave it; ``status`` is
``scored``, ``zsr`` (zero results), ``unrated`` (no rating: Quepid's ``--``), ``undefined`` or ``failed``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from gainscope.server import cases as bridge
from gainscope.server.store import CaseRecord, QueryRecord
from gainscope.server.workspace import CaseScores, Workspace

__all__ = ["case_detail", "case_summary", "query_detail", "query_scores", "sort_queries"]

#: how the case page sorts its queries
SORTS = ("position", "score", "change", "text")


def _score_of(scored: bridge.Scored, text: str) -> dict[str, Any]:
    q = scored.queries.get(text)
    if q is None:
        return {"value": None, "status": "error" if scored.error else "missing", "reason": scored.error,
                "counted": None}
    return {"value": q.value, "status": q.status, "reason": q.reason, "counted": q.counted}


def _case_scores(by_scorer: Mapping[str, bridge.Scored]) -> dict[str, dict[str, Any]]:
    return {name: {"score": s.score, "error": s.error, "notes": list(s.notes)} for name, s in by_scorer.items()}


def _coverage(q: QueryRecord, depth: int) -> dict[str, int]:
    shown = q.results[:depth]
    return {"result_count": len(q.results), "shown": len(shown), "rated": len(q.ratings),
            "unrated_shown": sum(1 for d in shown if d not in q.ratings)}


def case_summary(ws: Workspace, record: CaseRecord) -> dict[str, Any]:
    """A case in the list: name, engine, case score per scorer, the history of each (for sparklines), last run."""
    scores = ws.scoreboard.scores(record.id)
    history: dict[str, list[float | None]] = {}
    last_run = None
    for point in ws.store.history(record.id):
        history.setdefault(point.scorer, []).append(point.score)
        if point.event in ("rerun", "snapshot"):
            last_run = point.at
    rated = sum(1 for q in scores.queries if q.ratings)
    answered = sum(1 for q in scores.queries if q.results)
    return {"id": record.id, "name": record.name, "engine": record.engine,
            "scores": {name: s.score for name, s in scores.by_scorer.items()},
            "errors": {name: s.error for name, s in scores.by_scorer.items() if s.error},
            "history": {name: history.get(name, []) for name in scores.by_scorer},
            "queries": len(scores.queries), "rated_queries": rated, "queries_with_results": answered,
            "last_run": last_run, "created": record.created, "updated": record.updated}


def query_scores(scores: CaseScores, text: str) -> dict[str, dict[str, Any]]:
    """``{scorer: score of the query}``."""
    return {name: _score_of(s, text) for name, s in scores.by_scorer.items()}


def case_detail(ws: Workspace, case_id: str, *, baseline: str | None = None, sort: str = "position",
                scorer: str | None = None, descending: bool = False) -> dict[str, Any]:
    """A case with its queries and their scores per selected scorer; with ``baseline`` (a snapshot of the case)
    each query's change since then (the snapshot's results scored with today's ratings); sorted by ``sort``."""
    scores = ws.scoreboard.scores(case_id)
    record = scores.case
    depth = record.settings.depth
    baseline = baseline if baseline is not None else record.settings.baseline
    before = _baseline_scores(ws, scores, baseline) if baseline else {}
    queries = []
    for q in scores.queries:
        per = query_scores(scores, q.text)
        change = {}
        for name, value in per.items():
            old = before.get(name, {}).get(q.text)
            change[name] = None if old is None or value["value"] is None else value["value"] - old
        queries.append({"id": q.id, "text": q.text, "qid": q.qid, "scores": per, "change": change,
                        **_coverage(q, depth)})
    order = sort_queries(queries, sort, scorer or (record.settings.scorers[0] if record.settings.scorers else None),
                         descending)
    return {"id": record.id, "name": record.name, "engine": record.engine, "try": record.try_,
            "queries_with_results": sum(1 for q in scores.queries if q.results),
            "scale": record.scale, "settings": record.settings.to_json(), "source": record.source,
            "notes": list(record.notes), "scores": _case_scores(scores.by_scorer),
            "conventions": {name: list(s.conventions) for name, s in scores.by_scorer.items()},
            "baseline": baseline, "sort": sort, "queries": order,
            "snapshots": [s.name for s in ws.case_snapshots(case_id)]}


def _baseline_scores(ws: Workspace, scores: CaseScores, baseline: str) -> dict[str, dict[str, float | None]]:
    """Per scorer, each query's score in the snapshot ``baseline`` with today's ratings."""
    out: dict[str, dict[str, float | None]] = {}
    for name, scored in ws.snapshot_scores(scores.case.id, baseline, list(scores.by_scorer)).items():
        out[name] = {text: q.value for text, q in scored.queries.items()}
    return out


def _sort_key(value: float | None, descending: bool) -> tuple[int, float]:
    """Missing values last in either direction."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return (1, 0.0)
    return (0, -value if descending else value)


def sort_queries(queries: Sequence[Mapping[str, Any]], sort: str, scorer: str | None,
                 descending: bool = False) -> list[Mapping[str, Any]]:
    """The case page's queries in the order asked for (``position``, ``text``, ``score`` or ``change`` of
    ``scorer``)."""
    if sort not in SORTS:
        from gainscope.errors import InputError

        raise InputError(f"sort is one of {', '.join(SORTS)}; got {sort!r}")
    if sort == "position":
        return list(queries)
    if sort == "text":
        return sorted(queries, key=lambda q: str(q["text"]).lower(), reverse=descending)
    field = "scores" if sort == "score" else "change"

    def value(q: Mapping[str, Any]) -> float | None:
        entry = q[field].get(scorer) if scorer else None
        return entry["value"] if isinstance(entry, Mapping) else entry

    return sorted(queries, key=lambda q: _sort_key(value(q), descending))


def query_detail(ws: Workspace, case_id: str, query_id: str, *, snapshot: str | None = None) -> dict[str, Any]:
    """One query: its results (title and display fields) with their ratings and provenance, the documents rated
    but not returned, and its score per scorer. With ``snapshot`` (a snapshot of the case), the results that
    snapshot recorded for the query and their display fields, and the snapshot's scores with today's ratings."""
    scores = ws.scoreboard.scores(case_id)
    record = scores.case
    q = ws.store.query(case_id, query_id)
    settings = record.settings
    recorded: dict[str, dict[str, Any]] = {}
    by_scorer: Mapping[str, bridge.Scored] = scores.by_scorer
    if snapshot is not None:
        q, recorded, by_scorer = ws.snapshot_query(case_id, snapshot, q, list(scores.by_scorer))
    shown = list(q.results[:settings.depth])
    missing = [d for d in q.ratings if d not in q.results]
    fields = ws.store.fields(case_id, shown + missing)

    def doc(d: str, rank: int | None) -> dict[str, Any]:
        f = recorded.get(d) or fields.get(d, {})
        r = q.ratings.get(d)
        return {"rank": rank, "doc": d, "title": _text(f.get(settings.title_field)),
                "fields": {name: _text(f.get(name)) for name in settings.fields if name in f},
                "rating": None if r is None else r.value, "source": None if r is None else r.source,
                "author": None if r is None else r.author, "rated_at": None if r is None else r.updated}

    position = [i for i, x in enumerate(scores.queries) if x.id == query_id]
    neighbours = {}
    if position:
        i = position[0]
        neighbours = {"previous": scores.queries[i - 1].id if i > 0 else None,
                      "next": scores.queries[i + 1].id if i + 1 < len(scores.queries) else None}
    return {"case": {"id": record.id, "name": record.name, "scale": record.scale, "settings": settings.to_json(),
                     "engine": record.engine},
            "id": q.id, "text": q.text, "qid": q.qid, "options": q.options, "num_found": q.num_found,
            "snapshot": snapshot, "snapshots": [s.name for s in ws.case_snapshots(case_id)],
            "results": [doc(d, i) for i, d in enumerate(shown, start=1)],
            "rated_not_returned": [doc(d, None) for d in missing],
            "scores": {name: _score_of(s, q.text) for name, s in by_scorer.items()},
            "case_scores": _case_scores(by_scorer), **neighbours, **_coverage(q, settings.depth)}


def _text(value: Any) -> str | None:
    """A display field as text (lists joined), None when absent."""
    if value is None:
        return None
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)
