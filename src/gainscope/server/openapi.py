"""The OpenAPI 3.1 document of the dashboard's JSON API, answered at ``GET /api``.

It is written here as a table of the routes of :mod:`gainscope.server.api` (a test checks that the two name the
same routes): for each, what it does, its parameters, its JSON body and what it answers. Writes need the workspace
token in the ``X-Gainscope-Token`` header (the ``token`` security scheme).
"""

from __future__ import annotations

from typing import Any

from gainscope._version import __version__

__all__ = ["ROUTES", "document"]

_NUMBER_OR_NULL = {"type": ["number", "null"]}
_SCORE = {"type": "object", "properties": {
    "value": _NUMBER_OR_NULL, "status": {"enum": ["scored", "zsr", "unrated", "undefined", "failed", "error",
                                                   "missing"]},
    "reason": {"type": ["string", "null"]}, "counted": _NUMBER_OR_NULL}}
_ERROR = {"type": "object", "properties": {"error": {"type": "string"}}, "required": ["error"]}

#: (method, path, summary, request body schema or None, query parameters, response schema)
ROUTES: list[tuple[str, str, str, dict[str, Any] | None, list[str], dict[str, Any]]] = [
    ("get", "/api", "This document.", None, [], {"type": "object"}),
    ("get", "/api/cases", "Every case: id, name, engine, scores (scorer -> case score), history, last run.", None, [],
     {"type": "array", "items": {"type": "object", "properties": {
         "id": {"type": "string"}, "name": {"type": "string"},
         "scores": {"type": "object", "additionalProperties": _NUMBER_OR_NULL}}}}),
    ("post", "/api/cases", "Import a case from a file's text: a case (JSON/YAML), Quepid ratings CSV, RRE JSON, a "
     "_rank_eval request or TREC qrels; results from a run, a Quepid snapshot CSV or a _rank_eval response.",
     {"type": "object", "required": ["content"], "properties": {
         "filename": {"type": "string"}, "content": {"type": "string"},
         "format": {"enum": ["auto", "case", "quepid", "rre", "rank-eval", "trec"]},
         "name": {"type": "string"}, "scale": {}, "author": {"type": "string"},
         "results": {"type": "object", "properties": {"kind": {"enum": ["run", "snapshot", "response"]},
                                                      "filename": {"type": "string"},
                                                      "content": {"type": "string"}}}}}, [], {"type": "object"}),
    ("get", "/api/cases/{case_id}", "A case with its queries and their scores per selected scorer (and their change "
     "since a snapshot with baseline=NAME), sorted by sort=position|score|change|text (scorer=, order=desc).", None,
     ["baseline", "sort", "scorer", "order"],
     {"type": "object", "properties": {"queries": {"type": "array", "items": {"type": "object", "properties": {
         "id": {"type": "string"}, "text": {"type": "string"},
         "scores": {"type": "object", "additionalProperties": _SCORE}}}}}}),
    ("patch", "/api/cases/{case_id}", "Change a case: name, scorers (several at once), depth (results shown), "
     "unscored, undefined, title_field, fields, baseline, engine, try.",
     {"type": "object", "properties": {
         "name": {"type": "string"}, "scorers": {"type": "array", "items": {"type": "string"}},
         "depth": {"type": "integer"}, "unscored": {"enum": ["quepid", "skip", "zero"]},
         "undefined": {"enum": ["zero", "skip"]}, "title_field": {"type": "string"},
         "fields": {"type": "array", "items": {"type": "string"}}, "baseline": {"type": ["string", "null"]},
         "engine": {"type": ["string", "null"]}, "try": {"type": "object"}}}, [], {"type": "object"}),
    ("delete", "/api/cases/{case_id}", "Remove a case (its snapshots stay).", None, [], {"type": "object"}),
    ("get", "/api/cases/{case_id}/queries/{query_id}", "One query: its results with title, display fields and "
     "ratings (with provenance), documents rated but not returned, and its score per scorer; with snapshot=NAME "
     "the results that snapshot recorded and the snapshot's scores with today's ratings.", None, ["snapshot"],
     {"type": "object"}),
    ("get", "/api/cases/{case_id}/queries/{query_id}/explain", "A query's score position by position: each prefix "
     "of the results (of snapshot=NAME when given) scored by the scorer itself.", None, ["scorer", "snapshot"],
     {"type": "object"}),
    ("put", "/api/cases/{case_id}/ratings", "Rate a document of a query (rating null removes it); answers the query "
     "and case scores by every selected scorer. The change is kept with who, when and the previous value.",
     {"type": "object", "required": ["doc", "rating"], "properties": {
         "query": {"type": "string"}, "query_id": {"type": "string"}, "doc": {"type": "string"},
         "rating": _NUMBER_OR_NULL, "author": {"type": "string"}}},
     [], {"type": "object", "properties": {"previous": _NUMBER_OR_NULL, "changed": {"type": "boolean"},
                                           "scores": {"type": "object"}}}),
    ("get", "/api/cases/{case_id}/ratings/events", "Every rating change of the case, newest first (query_id=, doc=).",
     None, ["query_id", "doc"], {"type": "array"}),
    ("post", "/api/cases/{case_id}/search", "Search the case's engine with any text, to find and rate documents that "
     "did not come back.", {"type": "object", "required": ["q"], "properties": {
         "q": {"type": "string"}, "top": {"type": "integer"}, "query_id": {"type": "string"}}}, [],
     {"type": "object"}),
    ("get", "/api/cases/{case_id}/engine", "The case's engine: kind, knobs and their defaults, the try, the "
     "configuration (templates) with the try applied.", None, [], {"type": "object"}),
    ("post", "/api/cases/{case_id}/rerun", "Rerun every query against the engine (a job; throttled with qps and "
     "concurrency), after setting the try's knobs and template; every rerun is a snapshot with the note.",
     {"type": "object", "properties": {"knobs": {"type": "object"}, "template": {"type": "object"},
                                       "note": {"type": "string"}, "qps": {"type": "number"},
                                       "concurrency": {"type": "integer"}}}, [], {"type": "object"}),
    ("get", "/api/jobs/{job_id}", "A job's progress: state (running, done, failed), done of total, its result.",
     None, [], {"type": "object"}),
    ("get", "/api/cases/{case_id}/snapshots", "The case's snapshots, oldest first.", None, [], {"type": "array"}),
    ("post", "/api/cases/{case_id}/snapshots", "Snapshot the case's results in force (with a note).",
     {"type": "object", "properties": {"note": {"type": "string"}}}, [], {"type": "object"}),
    ("get", "/api/cases/{case_id}/compare", "Any number of snapshots side by side (snapshot= repeated, the first the "
     "baseline; current=1 adds the results in force last), scored with today's ratings: per query scores and "
     "deltas, documents that entered or left the top k (k=), paired significance tests against the first, per scorer "
     "(scorer=).", None,
     ["snapshot", "current", "k", "scorer"], {"type": "object"}),
    ("get", "/api/cases/{case_id}/history", "The case score over time per scorer, with annotations (notes).", None,
     ["scorer"], {"type": "object"}),
    ("post", "/api/cases/{case_id}/annotations", "Annotate the history: the current scores with a note.",
     {"type": "object", "required": ["note"], "properties": {"note": {"type": "string"}}}, [], {"type": "object"}),
    ("get", "/api/cases/{case_id}/export", "The case as format=case (JSON), quepid (ratings CSV), qrels or run "
     "(TREC).", None, ["format"], {"type": "string"}),
    ("post", "/api/cases/{case_id}/judge", "Label the shown results with an LLM judge (a job): scope unrated or "
     "shown; apply rates the unrated ones with the labels (a human rating is never overwritten). The API key comes "
     "from the server's environment (OPENAI_API_KEY).",
     {"type": "object", "required": ["model"], "properties": {
         "base_url": {"type": "string"}, "model": {"type": "string"},
         "prompt": {"enum": ["graded", "umbrela", "binary", "temporal"]}, "scope": {"enum": ["unrated", "shown"]},
         "apply": {"type": "boolean"}, "max_requests": {"type": "integer"}}}, [], {"type": "object"}),
    ("get", "/api/cases/{case_id}/agreement", "Agreement of the people's ratings with a judge's labels (judge=): "
     "kappas, Krippendorff's alpha, the confusion matrix, the disagreements.", None, ["judge"], {"type": "object"}),
    ("get", "/api/cases/{case_id}/queues", "The case's rating queues: name, source file, header note, total, rated, "
     "skipped (and not rated), remaining, position (where the person stopped).", None, [], {"type": "array"}),
    ("post", "/api/cases/{case_id}/queues", "A new rating queue from a pairs file's text: what gainscope pool -o "
     "writes ('query_id doc_id' lines), or qrels or run lines, in the file's order; query ids are the case's TREC ids "
     "(as its qrels and run exports write them). A bad line or a query the case does not have is a 400 naming the "
     "file and line. The same pairs under the same name again answer the existing queue (200, not 201).",
     {"type": "object", "required": ["content"], "properties": {
         "filename": {"type": "string"}, "content": {"type": "string"}, "name": {"type": "string"}}}, [],
     {"type": "object"}),
    ("get", "/api/cases/{case_id}/queues/{queue_id}", "The queue (its counts), the case's scale and one item: the one "
     "at position=, else where the person stopped (null when every item is rated): query, document (title, fields, "
     "rank in the results in force), rating and provenance.", None, ["position"], {"type": "object"}),
    ("delete", "/api/cases/{case_id}/queues/{queue_id}", "Remove a queue (the ratings given through it stay the "
     "case's).", None, [], {"type": "object"}),
    ("post", "/api/cases/{case_id}/queues/{queue_id}/rate", "Rate the item at position (a number on the case's scale; "
     "a human rating of the case, with the author), then move to the next unrated item; answers the queue's state, "
     "the rating and the scores it moved.", {"type": "object", "required": ["position", "rating"], "properties": {
         "position": {"type": "integer"}, "rating": {"type": "number"}, "author": {"type": "string"}}}, [],
     {"type": "object"}),
    ("post", "/api/cases/{case_id}/queues/{queue_id}/skip", "Skip the item at position (it comes back when the other "
     "items are rated), then move on.", {"type": "object", "required": ["position"], "properties": {
         "position": {"type": "integer"}}}, [], {"type": "object"}),
    ("post", "/api/cases/{case_id}/queues/{queue_id}/undo", "Take back the newest rating or skip of the queue (the "
     "rating in force before comes back) and go back to its item.",
     {"type": "object", "properties": {"author": {"type": "string"}}}, [], {"type": "object"}),
    ("put", "/api/cases/{case_id}/queues/{queue_id}/position", "Show the item at position and remember it as where "
     "the person is.", {"type": "object", "required": ["position"], "properties": {"position": {"type": "integer"}}},
     [], {"type": "object"}),
    ("get", "/api/cases/{case_id}/queues/{queue_id}/export", "The queue's ratings as TREC qrels (format=qrels): the "
     "rated pairs with the case's TREC query ids, a query's lines together, in the queue's order.", None, ["format"],
     {"type": "string"}),
    ("get", "/api/scorers", "The built-in scorers and the scorers saved in the workspace.", None, [],
     {"type": "object"}),
    ("post", "/api/scorers/test", "Run a scorer ad hoc on one query: its code (language, code, scale) or a saved or "
     "built-in name; answers the score, status, reason and console.log output.",
     {"type": "object", "required": ["case"], "properties": {
         "case": {"type": "string"}, "query_id": {"type": "string"}, "query": {"type": "string"},
         "name": {"type": "string"}, "language": {"enum": ["javascript", "python"]}, "code": {"type": "string"},
         "scale": {}}}, [], {"type": "object"}),
    ("put", "/api/scorers/{name}", "Save a scorer: JavaScript (Quepid's scorer API) or Python (def score(q)).",
     {"type": "object", "required": ["language", "code"], "properties": {
         "language": {"enum": ["javascript", "python"]}, "code": {"type": "string"}, "scale": {}}}, [],
     {"type": "object"}),
    ("delete", "/api/scorers/{name}", "Remove a saved scorer.", None, [], {"type": "object"}),
]


def document() -> dict[str, Any]:
    """The OpenAPI document."""
    paths: dict[str, dict[str, Any]] = {}
    for method, path, summary, body, params, response in ROUTES:
        operation: dict[str, Any] = {
            "summary": summary,
            "parameters": [{"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
                           for name in _path_names(path)]
                          + [{"name": name, "in": "query", "schema": {"type": "string"}} for name in params],
            "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": response}}},
                          "400": {"description": "a request that cannot be honoured",
                                  "content": {"application/json": {"schema": _ERROR}}},
                          "404": {"description": "no such case, query, scorer, snapshot or job",
                                  "content": {"application/json": {"schema": _ERROR}}}},
        }
        if body is not None:
            operation["requestBody"] = {"required": True, "content": {"application/json": {"schema": body}}}
        if method != "get":
            operation["security"] = [{"token": []}]
            operation["responses"]["403"] = {"description": "the workspace token is missing or wrong",
                                             "content": {"application/json": {"schema": _ERROR}}}
        paths.setdefault(path, {})[method] = operation
    return {
        "openapi": "3.1.0",
        "info": {"title": "gainscope dashboard", "version": __version__,
                 "description": "The JSON API of gainscope serve: the single way the dashboard's pages change state. "
                                "Writes need the workspace token in the X-Gainscope-Token header."},
        "paths": paths,
        "components": {"securitySchemes": {"token": {"type": "apiKey", "in": "header",
                                                     "name": "X-Gainscope-Token"}}},
    }


def _path_names(path: str) -> list[str]:
    return [part[1:-1] for part in path.split("/") if part.startswith("{")]
