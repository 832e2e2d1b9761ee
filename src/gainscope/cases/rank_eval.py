"""Elasticsearch / OpenSearch ``_rank_eval`` JSON as a case.

The **request** (what you POST to ``/<index>/_rank_eval``) gives the ratings::

    {"requests": [{"id": "amsterdam_query",
                   "request": {"query": {"match": {"text": "amsterdam"}}},     # or "template_id" + "params"
                   "ratings": [{"_index": "my_index", "_id": "doc1", "rating": 0},
                               {"_index": "my_index", "_id": "doc2", "rating": 3}]}],
     "metric": {"dcg": {"k": 10, "normalize": true}}}

Each request becomes a query whose text is the request ``id``; its template ``params`` become the query's
options (``qOption``). Documents are keyed by ``_id`` (the ``_index`` is not part of the id; the same ``_id``
rated twice differently is an error). The request's ``metric`` is recorded in the case notes: ES's own
conventions differ from Quepid's (unrated documents skipped, the nDCG ideal cut at the number of hits).

The **response** (``{"metric_score", "details": {id: {"hits": [{"hit": {"_id"}, "rating"}], ...}}}``) gives
the results in rank order, and the ratings ES reported for them; pass it as ``response=`` together with the
request, or alone. A request and a response that share no request id are an error; the ids of only one are
warned about.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gainscope.cases.located import line_of, load_json
from gainscope.cases.model import Case, CaseQuery
from gainscope.cases.overlap import check_query_join
from gainscope.cases.scale import RatingScale
from gainscope.errors import FormatError

__all__ = ["read_rank_eval"]


def _load(path: str | Path) -> Any:
    return load_json(Path(path).read_text(encoding="utf-8-sig"), str(path))


def _rating(value: Any, where: str, path: str, obj: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FormatError(f"{where}: 'rating' must be a number; got {value!r}", path=path, line=line_of(obj))
    return value


def _request_ratings(data: Any, path: str) -> tuple[list[str], dict[str, dict[str, float]], dict[str, Any], str]:
    if not isinstance(data, Mapping) or not isinstance(data.get("requests"), list):
        raise FormatError("a _rank_eval request needs 'requests' (a list)", path=path, line=line_of(data) or 1)
    order: list[str] = []
    ratings: dict[str, dict[str, float]] = {}
    options: dict[str, Any] = {}
    for req in data["requests"]:
        if not isinstance(req, Mapping):
            raise FormatError(f"a request must be an object; got {req!r}", path=path, line=line_of(data))
        rid = req.get("id")
        if not isinstance(rid, str) or not rid:
            raise FormatError("a request needs an 'id'", path=path, line=line_of(req))
        if rid in ratings:
            raise FormatError(f"request id {rid!r} appears twice", path=path, line=line_of(req))
        if not isinstance(req.get("ratings"), list):
            raise FormatError(f"request {rid!r} needs 'ratings' (a list)", path=path, line=line_of(req))
        docs: dict[str, float] = {}
        for item in req["ratings"]:
            if not isinstance(item, Mapping) or not isinstance(item.get("_id"), (str, int)):
                raise FormatError(f"request {rid!r}: a rating is {{\"_index\", \"_id\", \"rating\"}}; got {item!r}",
                                  path=path, line=line_of(item) or line_of(req))
            doc = str(item["_id"])
            value = _rating(item.get("rating"), f"request {rid!r}, document {doc!r}", path, item)
            if doc in docs and docs[doc] != value:
                raise FormatError(f"request {rid!r}: document {doc!r} is rated {docs[doc]} and {value}", path=path,
                                  line=line_of(item))
            docs[doc] = value
        order.append(rid)
        ratings[rid] = docs
        params = req.get("params")
        options[rid] = dict(params) if isinstance(params, Mapping) else {}
    metric = data.get("metric")
    metric_note = ""
    if isinstance(metric, Mapping) and metric:
        name = next(iter(metric))
        metric_note = (f"the request asks Elasticsearch for {name} {dict(metric[name] or {})}; its conventions "
                       f"differ from the scorer's")
    return order, ratings, options, metric_note


def _response_hits(data: Any, path: str) -> tuple[list[str], dict[str, list[str]], dict[str, dict[str, float]]]:
    details = data.get("details") if isinstance(data, Mapping) else None
    if not isinstance(details, Mapping):
        raise FormatError("a _rank_eval response needs 'details'", path=path, line=line_of(data) or 1)
    results: dict[str, list[str]] = {}
    ratings: dict[str, dict[str, float]] = {}
    for rid, detail in details.items():
        if not isinstance(detail, Mapping) or not isinstance(detail.get("hits"), list):
            raise FormatError(f"details of {rid!r} need 'hits' (a list)", path=path, line=line_of(detail))
        docs: list[str] = []
        rated: dict[str, float] = {}
        for hit in detail["hits"]:
            inner = hit.get("hit") if isinstance(hit, Mapping) else None
            if not isinstance(inner, Mapping) or not isinstance(inner.get("_id"), (str, int)):
                raise FormatError(f"a hit of {rid!r} needs hit._id", path=path, line=line_of(hit) or line_of(detail))
            doc = str(inner["_id"])
            docs.append(doc)
            if hit.get("rating") is not None:
                rated[doc] = _rating(hit["rating"], f"{rid!r}, hit {doc!r}", path, hit)
        results[str(rid)] = docs
        ratings[str(rid)] = rated
    return list(results), results, ratings


def read_rank_eval(request: str | Path | None = None, *, response: str | Path | None = None, scale: Any = None,
                   scorer: Any = None) -> Case:
    """A case from a ``_rank_eval`` request (ratings) and/or response (results); see the module docstring."""
    if request is None and response is None:
        raise FormatError("give a _rank_eval request, a response, or both")
    order: list[str] = []
    ratings: dict[str, dict[str, float]] = {}
    options: dict[str, Any] = {}
    results: dict[str, list[str]] = {}
    notes: list[str] = []
    if request is not None:
        order, ratings, options, metric_note = _request_ratings(_load(request), str(request))
        notes.append(f"ratings from the _rank_eval request {request}")
        if metric_note:
            notes.append(metric_note)
    if response is not None:
        hit_order, results, hit_ratings = _response_hits(_load(response), str(response))
        if request is not None:
            check_query_join(order, hit_order, left_name=f"the request {request}",
                             right_name=f"the response {response}", hint="requests are matched by their id")
        for rid in hit_order:
            if rid not in ratings:
                order.append(rid)
                ratings[rid] = {}
            for doc, value in hit_ratings[rid].items():
                ratings[rid].setdefault(doc, value)
        notes.append(f"results from the _rank_eval response {response}")
    queries = tuple(CaseQuery(rid, ratings[rid], tuple(results.get(rid, ())), options.get(rid, {})) for rid in order)
    return Case(queries, RatingScale.parse(scale) if scale is not None else None, scorer, None,
                str(request or response), tuple(notes))
