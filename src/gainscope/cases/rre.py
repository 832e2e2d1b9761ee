"""Rated Ranking Evaluator (RRE) ratings JSON, and Quepid's RRE export, as a case.

Shapes read (``relevant_documents`` at the query or at the query group level; a query's own list wins)::

    {"index": "core1", "id_field": "id", "query_placeholder": "$query",
     "topics": [{"description": "Fender basses",
                 "query_groups": [{"name": "Brand search",
                                   "queries": [{"template": "only_q.json", "placeholders": {"$query": "fender"}}],
                                   "relevant_documents": {"1": {"gain": 3}, "2": {"rating": 2}, "3": {}}}]}]}
    {"query_groups": [...]}                  # RRE-Enterprise: groups at the top
    {"queries": [{"placeholders": {"$query": "star wars"}, "relevant_documents": {...}}]}   # Quepid's export

``relevant_documents`` is ``{doc: {"gain": n}}`` (``rating`` is a synonym) or ``{"n": [doc, ...]}``. A listed
document without a gain gets RRE's ``missingGrade`` (``missing_grade``, default 2) and the case notes say so.
The query text is the ``query_placeholder`` (default ``$query``) placeholder, or the only placeholder.

RRE runs the searches itself, so the file has no results: pass ``results=`` (``{query: [doc ids]}``, for
example from a Quepid snapshot or a TREC run read with :func:`gainscope.io.read_run`), or score the case after
adding them. Note that RRE counts every *listed* document as relevant for P/R/AP even at gain 0; gainscope's
scorers use the gains (relevant = gain > 0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gainscope.cases.located import line_of, load_json
from gainscope.cases.model import Case, CaseQuery
from gainscope.cases.scale import RatingScale
from gainscope.errors import FormatError

__all__ = ["read_rre"]


def _gain(value: Any, doc: str, path: str, obj: Any, missing: float, used_missing: list[str]) -> float:
    if isinstance(value, Mapping):
        raw = value.get("gain", value.get("rating"))
        if raw is None:
            used_missing.append(doc)
            return missing
    else:
        raw = value
    if isinstance(raw, str):
        try:
            raw = float(raw)
        except ValueError:
            raise FormatError(f"the gain of document {doc!r} must be a number; got {raw!r}", path=path,
                              line=line_of(obj)) from None
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        raise FormatError(f"the gain of document {doc!r} must be a number; got {raw!r}", path=path, line=line_of(obj))
    return int(raw) if float(raw).is_integer() else raw


def _relevant(obj: Any, path: str, missing: float, used_missing: list[str]) -> dict[str, float]:
    if not isinstance(obj, Mapping):
        raise FormatError(f"'relevant_documents' must be an object; got {obj!r}", path=path, line=line_of(obj))
    out: dict[str, float] = {}
    for key, value in obj.items():
        if isinstance(value, list):  # {"3": ["doc1", "doc2"]}: gain -> ids
            gain = _gain(key, f"(gain {key!r})", path, obj, missing, used_missing)
            for doc in value:
                if str(doc) in out and out[str(doc)] != gain:
                    raise FormatError(f"document {doc!r} is listed with gains {out[str(doc)]} and {gain}", path=path,
                                      line=line_of(obj))
                out[str(doc)] = gain
        else:
            out[str(key)] = _gain(value, str(key), path, obj, missing, used_missing)
    return out


def _query_text(query: Any, placeholder: str, path: str) -> str:
    if not isinstance(query, Mapping):
        raise FormatError(f"a query must be an object with 'placeholders'; got {query!r}", path=path)
    holders = query.get("placeholders")
    if not isinstance(holders, Mapping) or not holders:
        raise FormatError("a query needs 'placeholders' such as {\"$query\": \"fender\"}", path=path,
                          line=line_of(query))
    if placeholder in holders:
        return str(holders[placeholder])
    if len(holders) == 1:
        return str(next(iter(holders.values())))
    raise FormatError(f"no {placeholder!r} among the placeholders {sorted(holders)}; set query_placeholder",
                      path=path, line=line_of(query))


def read_rre(path: str | Path, *, results: Mapping[str, Sequence[str]] | None = None, missing_grade: float = 2,
             scale: Any = None, scorer: Any = None) -> Case:
    """Read RRE ratings JSON (or Quepid's RRE export) into a case; see the module docstring."""
    p = str(path)
    data = load_json(Path(path).read_text(encoding="utf-8-sig"), p)
    if not isinstance(data, Mapping):
        raise FormatError("RRE ratings are an object with 'topics', 'query_groups' or 'queries'", path=p, line=1)
    placeholder = str(data.get("query_placeholder") or "$query")
    groups: list[Any] = []
    if "topics" in data:
        for topic in data["topics"] or []:
            if not isinstance(topic, Mapping) or not isinstance(topic.get("query_groups"), list):
                raise FormatError("a topic needs 'query_groups' (a list)", path=p, line=line_of(topic) or line_of(data))
            groups.extend(topic["query_groups"])
    groups.extend(data.get("query_groups") or [])
    if "queries" in data:
        groups.append(data)  # Quepid's export: queries with their own relevant_documents at the top
    if not groups:
        raise FormatError("no 'topics', 'query_groups' or 'queries' in the file", path=p, line=line_of(data))
    used_missing: list[str] = []
    seen: dict[str, int | None] = {}
    queries = []
    for group in groups:
        if not isinstance(group, Mapping) or not isinstance(group.get("queries"), list):
            raise FormatError("a query group needs 'queries' (a list)", path=p, line=line_of(group))
        shared = group.get("relevant_documents") if group is not data else None
        group_ratings = _relevant(shared, p, missing_grade, used_missing) if shared is not None else None
        for query in group["queries"]:
            text = _query_text(query, placeholder, p)
            own = query.get("relevant_documents")
            ratings = _relevant(own, p, missing_grade, used_missing) if own is not None else group_ratings
            if ratings is None:
                raise FormatError(f"query {text!r} has no relevant_documents (neither its own nor its group's)",
                                  path=p, line=line_of(query))
            if text in seen:
                raise FormatError(f"query {text!r} appears again (first on line {seen[text]}); a case holds each "
                                  f"query text once", path=p, line=line_of(query))
            seen[text] = line_of(query)
            queries.append(CaseQuery(text, dict(ratings), tuple((results or {}).get(text, ()))))
    notes = [f"ratings from the RRE file {p}"]
    if used_missing:
        notes.append(f"{len(used_missing)} listed document(s) without a gain got RRE's missing grade "
                     f"{missing_grade}")
    return Case(tuple(queries), RatingScale.parse(scale) if scale is not None else None, scorer,
                str(data.get("index")) if data.get("index") is not None else None, p, tuple(notes))
