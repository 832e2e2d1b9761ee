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
The query text is the ``query_placeholder`` (default ``$query``) placeholder, or the only placeholder; the
other placeholders become the query's options under their own names (``{"$strings": 4}``:
``qOption("$strings")``), as a ``_rank_eval`` request's ``params`` do.

RRE sends every query through its template (the query's, else its group's, else the file's ``template``), so
the same text may appear more than once, through different templates or with different placeholders: each is
its own query (its own request, its own results). A text used once keeps its name; a text used several times
names each of its queries ``TEXT [TEMPLATE; $placeholder=value, ...]``, for example
``fender [filter_by_number_of_strings.json; $strings=4]``, and the case notes list them. Pass results under
those names. The same text with the same template and placeholders twice is an error.

RRE runs the searches itself, so the file has no results: pass ``results=`` (``{query: [doc ids]}``, for
example from a Quepid snapshot or a TREC run read with :func:`gainscope.io.read_run`), or score the case after
adding them. Results none of whose query names matches are an error; the names of only one side are warned
about. Note that RRE counts every *listed* document as relevant for P/R/AP even at gain 0; gainscope's
scorers use the gains (relevant = gain > 0).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gainscope.cases.located import line_of, load_json
from gainscope.cases.model import Case, CaseQuery
from gainscope.cases.overlap import check_query_join
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


def _query_text(query: Any, placeholder: str, path: str) -> tuple[str, dict[str, Any]]:
    """The query text and the other placeholders (the query's options)."""
    if not isinstance(query, Mapping):
        raise FormatError(f"a query must be an object with 'placeholders'; got {query!r}", path=path)
    holders = query.get("placeholders")
    if not isinstance(holders, Mapping) or not holders:
        raise FormatError("a query needs 'placeholders' such as {\"$query\": \"fender\"}", path=path,
                          line=line_of(query))
    if placeholder in holders:
        key = placeholder
    elif len(holders) == 1:
        key = next(iter(holders))
    else:
        raise FormatError(f"no {placeholder!r} among the placeholders {sorted(holders)}; set query_placeholder",
                          path=path, line=line_of(query))
    return str(holders[key]), {k: v for k, v in holders.items() if k != key}


@dataclass
class _Entry:
    text: str
    template: str | None
    options: dict[str, Any]
    ratings: dict[str, float]
    line: int | None

    def variant(self) -> str:
        """What tells this query from another with the same text: its template and other placeholders."""
        parts = [self.template or "no template"]
        parts += [f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in self.options.items()]
        return "; ".join(parts)


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
    entries: list[_Entry] = []
    top_template = data.get("template")
    for group in groups:
        if not isinstance(group, Mapping) or not isinstance(group.get("queries"), list):
            raise FormatError("a query group needs 'queries' (a list)", path=p, line=line_of(group))
        shared = group.get("relevant_documents") if group is not data else None
        group_ratings = _relevant(shared, p, missing_grade, used_missing) if shared is not None else None
        for query in group["queries"]:
            text, options = _query_text(query, placeholder, p)
            own = query.get("relevant_documents")
            ratings = _relevant(own, p, missing_grade, used_missing) if own is not None else group_ratings
            if ratings is None:
                raise FormatError(f"query {text!r} has no relevant_documents (neither its own nor its group's)",
                                  path=p, line=line_of(query))
            template = query.get("template") or group.get("template") or top_template
            entries.append(_Entry(text, None if template is None else str(template), options, dict(ratings),
                                  line_of(query)))
    uses = Counter(e.text for e in entries)
    seen: dict[tuple[str, str], int | None] = {}
    queries = []
    for e in entries:
        key = (e.text, e.variant())
        if key in seen:
            raise FormatError(f"query {e.text!r} appears twice with the same template {e.template!r} and "
                              f"placeholders (first on line {seen[key]}); a case holds each query once", path=p,
                              line=e.line)
        seen[key] = e.line
        name = e.text if uses[e.text] == 1 else f"{e.text} [{e.variant()}]"
        queries.append(CaseQuery(name, e.ratings, tuple((results or {}).get(name, ())), e.options))
    if results:
        check_query_join([q.query for q in queries], list(results), left_name=f"the RRE file {p}",
                         right_name="the results", hint="results are matched by query name")
    notes = [f"ratings from the RRE file {p}"]
    for text, n in uses.items():
        if n > 1:
            notes.append(f"query {text!r} is used by {n} queries (templates or placeholders differ): each is its own "
                         f"query, named '{text} [template; placeholders]'")
    if used_missing:
        notes.append(f"{len(used_missing)} listed document(s) without a gain got RRE's missing grade "
                     f"{missing_grade}")
    return Case(tuple(queries), RatingScale.parse(scale) if scale is not None else None, scorer,
                str(data.get("index")) if data.get("index") is not None else None, p, tuple(notes))
