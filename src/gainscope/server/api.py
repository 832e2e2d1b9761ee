"""The JSON API under ``/api``: the single way the pages change state, so scripts and CI drive exactly what a person
clicks. ``GET /api`` answers the OpenAPI document that describes every route (:mod:`gainscope.server.openapi`).

Every handler runs in a worker thread (the workspace's database and the scorers are synchronous), answers JSON,
and turns gainscope's errors into ``{"error": message}`` with a status: 404 for a case, query, scorer, snapshot or
job that does not exist, 400 for a request that cannot be honoured (bad input, an unknown scorer or format, a
rating outside the case's scale), 502 when an engine or an LLM judge failed, 503 when the database did.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import tempfile
import time
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from gainscope.errors import (
    EngineError,
    GainscopeError,
    InputError,
    JudgeError,
    MissingDependencyError,
    NotFoundError,
    StoreError,
)
from gainscope.server import cases as bridge
from gainscope.server import jobs as work
from gainscope.server import views
from gainscope.server.workspace import Workspace

__all__ = ["json_response", "routes", "timed"]

#: the most a request body may hold (an imported case file is the largest thing sent)
MAX_BODY = 64 * 1024 * 1024
logger = logging.getLogger("gainscope.server")
UNSCORED = ("quepid", "skip", "zero")
UNDEFINED = ("zero", "skip")


def _clean(value: Any) -> Any:
    """``value`` with NaN and infinities as None (JSON has neither)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def json_response(data: Any, status: int = 200) -> Response:
    """A JSON response (NaN as null, UTF-8 kept as is)."""
    body = json.dumps(_clean(data), ensure_ascii=False, separators=(",", ":"), default=str)
    return Response(body, status, media_type="application/json")


def _status(exc: BaseException) -> int:
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, (EngineError, JudgeError)):
        return 502
    if isinstance(exc, StoreError):
        return 503
    if isinstance(exc, MissingDependencyError):
        return 501
    return 400


Handler = Callable[[Request, Any], Any]


def unknown_fields(payload: dict[str, Any], fields: Collection[str]) -> str | None:
    """Why a request body with a field its route does not take is refused (a misspelt optional field would
    otherwise be ignored without a word), or None."""
    import difflib

    unknown = [key for key in payload if key not in fields]
    if not unknown:
        return None
    close = difflib.get_close_matches(unknown[0], list(fields), n=1)
    return (f"the request body has a field this route does not take: {unknown[0]!r}"
            + (f" (did you mean {close[0]!r}?)" if close else "")
            + f"; it takes {', '.join(repr(f) for f in fields) or 'none'}")


def endpoint(handler: Handler, *, body: bool = False, status: int = 200,
             fields: Collection[str] | None = None) -> Callable[[Request], Any]:
    """An async endpoint that reads the JSON body (when ``body``), runs ``handler(request, body)`` in a worker
    thread and answers its result as JSON (see the module docstring for errors)."""

    async def run(request: Request) -> Response:
        payload: Any = None
        if body:
            raw = await request.body()
            if len(raw) > MAX_BODY:
                return json_response({"error": f"the request body is larger than {MAX_BODY // 2**20} MiB"}, 413)
            try:
                payload = json.loads(raw or b"{}")
            except ValueError as exc:
                return json_response({"error": f"the request body is not JSON: {exc}"}, 400)
            if not isinstance(payload, dict):
                return json_response({"error": f"the request body must be a JSON object; got {_json_kind(payload)}"},
                                     400)
            problem = unknown_fields(payload, fields) if fields is not None else None
            if problem is not None:
                return json_response({"error": problem}, 400)
        started = time.perf_counter()
        try:
            result = await run_in_threadpool(handler, request, payload)
        except GainscopeError as exc:
            response = json_response({"error": str(exc)}, _status(exc))
        except Exception as exc:  # a bug, or an error of a library: said as JSON, the server goes on
            logger.exception("%s %s failed", request.method, request.url.path)
            response = json_response({"error": f"the server failed: {type(exc).__name__}: {exc}"}, 500)
        else:
            response = result if isinstance(result, Response) else json_response(result, status)
        return timed(response, started)

    return run


def timed(response: Response, started: float) -> Response:
    """``response`` with a ``Server-Timing`` header: the milliseconds the server spent on it (``app;dur=...``),
    which the benchmark reads (bench/dashboard.py)."""
    response.headers["Server-Timing"] = f"app;dur={(time.perf_counter() - started) * 1000:.3f}"
    return response


def _ws(request: Request) -> Workspace:
    workspace: Workspace = request.app.state.workspace
    return workspace


def _field(body: Mapping[str, Any], name: str, kind: type | tuple[type, ...], *, required: bool = False,
           default: Any = None) -> Any:
    value = body.get(name, default)
    if value is None:
        if required:
            raise InputError(f"the request needs {name!r}")
        return default
    if isinstance(value, bool) and kind is not bool and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise InputError(f"{name!r} must be {_kind(kind)}; got {value!r}")
    if not isinstance(value, kind):
        raise InputError(f"{name!r} must be {_kind(kind)}; got {value!r}")
    return value


def _kind(kind: type | tuple[type, ...]) -> str:
    names = {str: "a string", int: "an integer", float: "a number", bool: "true or false", dict: "an object",
             list: "a list"}
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(names.get(k, k.__name__) for k in kinds)


@contextlib.contextmanager
def _uploaded(filename: str, content: str) -> Iterator[Path]:
    """The text of an uploaded file as a file named ``filename`` in a temporary folder (removed after), for the
    readers of files; gainscope's errors raised meanwhile name the uploaded file, not the temporary copy."""
    with tempfile.TemporaryDirectory(prefix="gainscope-import-") as folder:
        path = Path(folder) / filename
        path.write_text(content, encoding="utf-8")
        try:
            yield path
        except GainscopeError as exc:
            exc.args = tuple(str(a).replace(folder + os.sep, "") for a in exc.args)
            raise


# ---------------------------------------------------------------------------------------------- cases
def list_cases(request: Request, _: Any) -> Any:
    ws = _ws(request)
    return [views.case_summary(ws, c) for c in ws.store.cases()]


def import_case(request: Request, body: dict[str, Any]) -> Any:
    """A new case from a file's text (see the OpenAPI document for the fields)."""
    ws = _ws(request)
    filename = Path(_field(body, "filename", str, default="case.json")).name or "case.json"
    content = _field(body, "content", str, required=True)
    fmt = _field(body, "format", str, default="auto")
    if fmt not in bridge.FORMATS:
        raise InputError(f"'format' is one of {', '.join(bridge.FORMATS)}; got {fmt!r}")
    extra = _field(body, "results", dict)
    with _uploaded(filename, content) as path:
        companion: dict[str, Any] = {}
        if extra is not None:
            kind = _field(extra, "kind", str, required=True)
            if kind not in ("run", "snapshot", "response"):
                raise InputError(f"results.kind is 'run', 'snapshot' (a Quepid snapshot CSV) or 'response' (a "
                                 f"_rank_eval response); got {kind!r}")
            other = path.parent / ("results-" + (Path(_field(extra, "filename", str, default="results")).name or
                                                  "results"))
            other.write_text(_field(extra, "content", str, required=True), encoding="utf-8")
            companion[kind] = other
        case = bridge.read_any(path, fmt, scale=body.get("scale"), name=_field(body, "name", str), **companion)
        record = ws.import_case(replace(case, source=filename), author=_field(body, "author", str),
                                source=filename)
    return json_response(views.case_summary(ws, record), 201)


def get_case(request: Request, _: Any) -> Any:
    params = request.query_params
    return views.case_detail(_ws(request), request.path_params["case_id"], baseline=params.get("baseline"),
                             sort=params.get("sort", "position"), scorer=params.get("scorer"),
                             descending=params.get("order") == "desc")


def patch_case(request: Request, body: dict[str, Any]) -> Any:
    """Change a case's name, settings, engine or try."""
    ws = _ws(request)
    case_id = request.path_params["case_id"]
    record = ws.store.case(case_id)
    settings = record.settings
    changes: dict[str, Any] = {}
    if "scorers" in body:
        names = _field(body, "scorers", list, required=True)
        if not all(isinstance(n, str) for n in names):
            raise InputError("'scorers' is a list of scorer names")
        record = ws.set_scorers(case_id, names)
        settings = record.settings
    if "depth" in body:
        depth = _field(body, "depth", int, required=True)
        if not 1 <= depth <= 1000:
            raise InputError(f"'depth' (the number of results shown) is between 1 and 1000; got {depth}")
        changes["depth"] = depth
    for key, allowed in (("unscored", UNSCORED), ("undefined", UNDEFINED)):
        if key in body:
            value = _field(body, key, str, required=True)
            if value not in allowed:
                raise InputError(f"{key!r} is one of {', '.join(allowed)}; got {value!r}")
            changes[key] = value
    if "title_field" in body:
        changes["title_field"] = _field(body, "title_field", str, required=True)
    if "fields" in body:
        fields = _field(body, "fields", list, required=True)
        if not all(isinstance(f, str) for f in fields):
            raise InputError("'fields' is a list of field names")
        changes["fields"] = tuple(fields)
    if "baseline" in body:
        baseline = _field(body, "baseline", str)
        if baseline:
            ws.snapshot_results(case_id, baseline)
        changes["baseline"] = baseline or None
    new_settings = replace(settings, **changes) if changes else None
    engine_given = "engine" in body
    engine = (_field(body, "engine", str) or None) if engine_given else record.engine
    try_ = _field(body, "try", dict) if "try" in body else None
    candidate = replace(record, engine=engine, try_=try_ if try_ is not None else record.try_)
    if engine_given or try_ is not None:
        _check_engine(ws, candidate)
    ws.store.update_case(case_id, name=_field(body, "name", str), settings=new_settings, engine=engine,
                         remove_engine=engine is None, try_=try_)
    ws.scoreboard.forget(case_id)
    return views.case_detail(ws, case_id)


def _check_engine(ws: Workspace, record: Any) -> None:
    """An engine and a try that work together: the engine loads, the try's keys and knobs exist."""
    if not record.engine:
        return
    keys = set(record.try_) - {"knobs", "url", "method", "params", "body", "headers"}
    if keys:
        raise InputError(f"'try' may set knobs, url, method, params, body and headers; got {', '.join(sorted(keys))}")
    engine, knobs = ws.engine(record)
    engine.resolve(knobs)


def delete_case(request: Request, _: Any) -> Any:
    ws = _ws(request)
    case_id = request.path_params["case_id"]
    ws.store.delete_case(case_id)
    ws.scoreboard.forget(case_id)
    return {"deleted": case_id}


def get_query(request: Request, _: Any) -> Any:
    p = request.path_params
    return views.query_detail(_ws(request), p["case_id"], p["query_id"],
                              snapshot=request.query_params.get("snapshot") or None)


def explain(request: Request, _: Any) -> Any:
    """A query's score position by position, by one scorer."""
    ws = _ws(request)
    p = request.path_params
    record = ws.store.case(p["case_id"])
    q = ws.store.query(p["case_id"], p["query_id"])
    name = request.query_params.get("scorer") or (record.settings.scorers[0] if record.settings.scorers else "")
    snapshot = request.query_params.get("snapshot") or None
    if snapshot is not None:  # the results that snapshot recorded for the query
        q = ws.snapshot_query(p["case_id"], snapshot, q, [])[0]
    case = ws.as_case(record, [q])
    result = bridge.explain_query(case, q.text, ws.scorer(name), record.settings.depth,
                                  unscored=record.settings.unscored, undefined=record.settings.undefined)
    return {"scorer": name, "query": q.text, "score": result.score, "positions": list(result.rows)}


def _query_of(ws: Workspace, case_id: str, body: Mapping[str, Any]) -> Any:
    if body.get("query_id") is not None:
        return ws.store.query(case_id, str(body["query_id"]))
    return ws.store.query_by_text(case_id, _field(body, "query", str, required=True))


def put_rating(request: Request, body: dict[str, Any]) -> Any:
    """Rate a document (``rating: null`` removes the rating); answers the new scores."""
    ws = _ws(request)
    case_id = request.path_params["case_id"]
    record = ws.store.case(case_id)
    q = _query_of(ws, case_id, body)
    doc = _field(body, "doc", str, required=True)
    if not doc:
        raise InputError("'doc' is a document id (not empty)")
    if "rating" not in body:
        raise InputError("the request needs 'rating' (a number on the case's scale, or null to remove it)")
    rating = body["rating"]
    if rating is not None:
        rating = bridge.check_rating(record.scale, rating, f"query {q.text!r}, document {doc!r}")
    author = _field(body, "author", str) or request.headers.get("x-gainscope-user") or None
    changed, previous = ws.store.set_rating(case_id, q.id, doc, rating, source="human", author=author)
    scores = ws.scoreboard.rating_changed(case_id, q.id) if changed else ws.scoreboard.scores(case_id)
    if changed:
        ws.scoreboard.record(case_id, "rating")
    per_query = views.query_scores(scores, q.text)
    return {"query": q.text, "query_id": q.id, "doc": doc, "rating": rating, "previous": previous, "changed": changed,
            "scores": {name: {"query": per_query[name], "case": s.score, "error": s.error}
                       for name, s in scores.by_scorer.items()}}


def rating_events(request: Request, _: Any) -> Any:
    ws = _ws(request)
    case_id = request.path_params["case_id"]
    ws.store.case(case_id)
    params = request.query_params
    return [e.to_json() for e in ws.store.rating_events(case_id, params.get("query_id"), params.get("doc"))]


def search(request: Request, body: dict[str, Any]) -> Any:
    """Search the case's engine with any text: find documents that did not come back, to rate them."""
    ws = _ws(request)
    case_id = request.path_params["case_id"]
    record = ws.store.case(case_id)
    text = _field(body, "q", str, required=True)
    top = _field(body, "top", int, default=20)
    if not 1 <= top <= 200:
        raise InputError(f"'top' is between 1 and 200; got {top}")
    q = ws.store.query(case_id, str(body["query_id"])) if body.get("query_id") is not None else None
    response = ws.search(record, text, q.options if q else {}, top)
    ws.store.remember_fields(case_id, {h.id: h.fields for h in response.hits})
    title = record.settings.title_field
    return {"q": text, "total": response.total,
            "hits": [{"rank": i, "doc": h.id, "title": views._text(h.fields.get(title)),
                      "rating": None if q is None or h.id not in q.ratings else q.ratings[h.id].value,
                      "returned": q is not None and h.id in q.results}
                     for i, h in enumerate(response.hits, start=1)]}


def engine_info(request: Request, _: Any) -> Any:
    ws = _ws(request)
    record = ws.store.case(request.path_params["case_id"])
    if not record.engine:
        return {"engine": None, "try": record.try_}
    engine, knobs = ws.engine(record)
    resolved = engine.resolve(knobs)
    return {"engine": record.engine, "name": engine.name, "kind": engine.kind, "knobs": dict(engine.knobs),
            "try": record.try_, "configuration": engine.configuration(resolved)}


def rerun(request: Request, body: dict[str, Any]) -> Any:
    """Rerun every query of the case against its engine (a job), after setting the try's knobs and template."""
    ws = _ws(request)
    case_id = request.path_params["case_id"]
    record = ws.store.case(case_id)
    jobs: work.Jobs = request.app.state.jobs
    if jobs.running(case_id, "rerun") is not None:
        raise InputError(f"case {case_id!r} is being rerun already; wait for that run to end")
    knobs = _field(body, "knobs", dict)
    template = _field(body, "template", dict)
    if knobs is not None or template is not None:
        try_ = {**({k: v for k, v in record.try_.items() if k == "knobs"} if template is not None else record.try_)}
        if template is not None:
            try_.update(template)
        if knobs is not None:
            try_["knobs"] = knobs
        _check_engine(ws, replace(record, try_=try_))
        record = ws.store.update_case(case_id, try_=try_)
    qps = _field(body, "qps", (int, float))
    if qps is not None and not qps > 0:
        raise InputError(f"'qps' is a number of queries per second > 0; got {qps}")
    concurrency = _field(body, "concurrency", int, default=4)
    if not 1 <= concurrency <= 64:
        raise InputError(f"'concurrency' is between 1 and 64; got {concurrency}")
    note = _field(body, "note", str)
    ws.engine(record)
    job = jobs.start("rerun", case_id, lambda j: work.rerun(ws, case_id, j, note=note, qps=qps,
                                                           concurrency=concurrency))
    return json_response({"job": job.to_json()}, 202)


def get_job(request: Request, _: Any) -> Any:
    jobs: work.Jobs = request.app.state.jobs
    return jobs.get(request.path_params["job_id"]).to_json()


# ---------------------------------------------------------------------------------------------- snapshots
def list_snapshots(request: Request, _: Any) -> Any:
    ws = _ws(request)
    case_id = request.path_params["case_id"]
    ws.store.case(case_id)
    return [{"name": s.name, "engine": s.engine, "kind": s.kind, "knobs": s.knobs, "top": s.top,
             "created": s.created, "note": s.note, "hash": s.short_hash} for s in ws.case_snapshots(case_id)]


def take_snapshot(request: Request, body: dict[str, Any]) -> Any:
    ws = _ws(request)
    snapshot = ws.snapshot_current(request.path_params["case_id"], _field(body, "note", str))
    return json_response({"name": snapshot.name, "created": snapshot.created, "note": snapshot.note}, 201)


def compare(request: Request, _: Any) -> Any:
    """Snapshots side by side, per scorer."""
    ws = _ws(request)
    case_id = request.path_params["case_id"]
    params = request.query_params
    names = params.getlist("snapshot")
    current = params.get("current") in ("1", "true", "yes")
    k = params.get("k")
    depth = None
    if k:
        try:
            depth = int(k)
        except ValueError:
            raise InputError(f"'k' is an integer; got {k!r}") from None
    scorers = params.getlist("scorer") or None
    result = ws.compare(case_id, names, current=current, scorers=scorers, k=depth)
    return {"snapshots": names + (["current"] if current else []),
            "by_scorer": {name: ({"error": c} if isinstance(c, str) else c.to_dict()) for name, c in result.items()}}


def history(request: Request, _: Any) -> Any:
    ws = _ws(request)
    case_id = request.path_params["case_id"]
    ws.store.case(case_id)
    out: dict[str, list[dict[str, Any]]] = {}
    for p in ws.store.history(case_id, request.query_params.get("scorer")):
        out.setdefault(p.scorer, []).append({"score": p.score, "at": p.at, "event": p.event, "snapshot": p.snapshot,
                                             "note": p.note})
    return {"case": case_id, "scorers": out}


def annotate(request: Request, body: dict[str, Any]) -> Any:
    ws = _ws(request)
    case_id = request.path_params["case_id"]
    note = _field(body, "note", str, required=True).strip()
    if not note:
        raise InputError("an annotation needs a note")
    points = ws.scoreboard.record(case_id, "annotation", note=note, always=True)
    return json_response({"note": note, "scores": {p.scorer: p.score for p in points}}, 201)


def export(request: Request, _: Any) -> Any:
    ws = _ws(request)
    case_id = request.path_params["case_id"]
    fmt = request.query_params.get("format", "case")
    text = ws.export_case(case_id, fmt)
    suffix, media = {"case": (".json", "application/json"), "quepid": (".csv", "text/csv"),
                     "qrels": (".qrels", "text/plain"), "run": (".run", "text/plain")}[fmt]
    return Response(text, media_type=media, headers={
        "Content-Disposition": f'attachment; filename="{case_id}{suffix}"'})


# ---------------------------------------------------------------------------------------------- scorers
def list_scorers(request: Request, _: Any) -> Any:
    ws = _ws(request)
    return {"builtin": bridge.builtin_scorers(),
            "saved": [{"name": s.name, "language": s.language, "code": s.code, "scale": s.scale, "created": s.created,
                       "updated": s.updated} for s in ws.store.scorers()],
            "python": ws.allow_code}


def _scorer_body(ws: Workspace, body: Mapping[str, Any], name: str) -> Any:
    language = _field(body, "language", str, required=True)
    code = _field(body, "code", str, required=True)
    scale = body.get("scale")
    scorer = bridge.scorer_from_code(name, language, code, scale, allow_python=ws.allow_code,
                                     time_limit=ws.time_limit)
    bridge.check_scorer(scorer)
    return language, code, scale, scorer


def put_scorer(request: Request, body: dict[str, Any]) -> Any:
    ws = _ws(request)
    name = request.path_params["name"].strip()
    if not name or len(name) > 100 or "/" in name or "\\" in name:
        raise InputError("a scorer's name has 1 to 100 characters, and no / or \\")
    if bridge.is_builtin(name):
        raise InputError(f"{name!r} is a built-in scorer's name; give yours another")
    language, code, scale, _ = _scorer_body(ws, body, name)
    record = ws.store.save_scorer(name, language, code, scale)
    for case in ws.store.cases():
        if name in case.settings.scorers:
            ws.scoreboard.forget(case.id)
    return json_response({"name": record.name, "language": record.language, "updated": record.updated}, 201)


def delete_scorer(request: Request, _: Any) -> Any:
    ws = _ws(request)
    name = request.path_params["name"]
    ws.store.delete_scorer(name)
    for case in ws.store.cases():
        if name in case.settings.scorers:
            ws.scoreboard.forget(case.id)
    return {"deleted": name}


def test_scorer(request: Request, body: dict[str, Any]) -> Any:
    """Run a scorer (saved or not) on one query of a case, ad hoc: its score, status, reason and console output."""
    ws = _ws(request)
    case_id = _field(body, "case", str, required=True)
    record = ws.store.case(case_id)
    q = _query_of(ws, case_id, {"query_id": body.get("query_id"), "query": body.get("query")})
    name = _field(body, "name", str, default="ad hoc scorer") or "ad hoc scorer"
    if body.get("code") is not None:
        scorer = _scorer_body(ws, body, name)[3]
    else:
        scorer = ws.scorer(name)
    score = bridge.rescore_query(ws.as_case(record, [q]), q.text, scorer, unscored=record.settings.unscored,
                                 undefined=record.settings.undefined)
    return {"scorer": name, "query": q.text, "query_id": q.id, "value": score.value, "raw": score.raw,
            "status": score.status, "reason": score.reason, "logs": list(score.logs), "depth": score.depth}


# ---------------------------------------------------------------------------------------------- judges
def judge(request: Request, body: dict[str, Any]) -> Any:
    """Label the case's shown results with an LLM judge (a job)."""
    ws = _ws(request)
    case_id = request.path_params["case_id"]
    ws.store.case(case_id)
    jobs: work.Jobs = request.app.state.jobs
    if jobs.running(case_id, "judge") is not None:
        raise InputError(f"a judge is labelling case {case_id!r} already; wait for it to end")
    base_url = _field(body, "base_url", str, default=os.environ.get("OPENAI_BASE_URL") or "")
    if not base_url:
        raise InputError("'base_url' is the OpenAI-compatible server (for example http://127.0.0.1:8000/v1)")
    model = _field(body, "model", str, required=True)
    prompt = _field(body, "prompt", str, default="umbrela")
    from gainscope.judges.prompts import BUILTIN

    if prompt not in BUILTIN:
        raise InputError(f"'prompt' is one of {', '.join(BUILTIN)}; got {prompt!r}")
    scope = _field(body, "scope", str, default="unrated")
    apply = _field(body, "apply", bool, default=False)
    max_requests = _field(body, "max_requests", int)
    from gainscope.judges.client import ClientSettings

    ClientSettings(base_url=base_url)  # a URL that cannot be used is refused now, not in the job
    job = jobs.start("judge", case_id, lambda j: work.judge(
        ws, case_id, j, base_url=base_url, model=model, prompt=prompt, scope=scope, apply=apply,
        max_requests=max_requests, api_key=None))
    return json_response({"job": job.to_json()}, 202)


def agreement(request: Request, _: Any) -> Any:
    """Agreement between the people's ratings and an LLM judge's labels of the same pairs."""
    ws = _ws(request)
    case_id = request.path_params["case_id"]
    record = ws.store.case(case_id)
    judges = ws.store.judges(case_id)
    if not judges:
        return {"judges": [], "agreement": None}
    chosen = request.query_params.get("judge") or judges[-1][0]
    labels = {(lb.query_id, lb.doc_id): lb for lb in ws.store.labels(case_id, chosen)}
    if not labels:
        raise NotFoundError(f"no label of judge {chosen!r} in case {case_id!r}")
    queries = ws.store.queries(case_id)
    human = {q.id: {d: r.value for d, r in q.ratings.items() if not r.source.startswith("llm:")} for q in queries}
    llm: dict[str, dict[str, float]] = {}
    for (qid, doc), lb in labels.items():
        llm.setdefault(qid, {})[doc] = lb.grade
    from gainscope.agreement import label_agreement
    from gainscope.io import read_judgments

    a = read_judgments({q: d for q, d in human.items() if d}, float_grades=True, allow_empty=True)
    b = read_judgments(llm, float_grades=True)
    result = label_agreement(a, b, categories=record.scale["values"], names=("people", "the judge"))
    texts = {q.id: q.text for q in queries}
    disagreements = [{"query_id": qid, "query": texts.get(qid), "doc": doc, "human": human[qid][doc],
                      "llm": lb.grade, "reasoning": lb.reasoning}
                     for (qid, doc), lb in sorted(labels.items()) if doc in human.get(qid, {}) and
                     human[qid][doc] != lb.grade]
    return {"judges": [{"judge": j, "model": m, "labels": n} for j, m, n in judges], "judge": chosen,
            "agreement": result.to_dict(), "disagreements": disagreements[:200]}


# ---------------------------------------------------------------------------------------------- rating queues
def list_queues(request: Request, _: Any) -> Any:
    from gainscope.server import queues

    ws = _ws(request)
    case_id = request.path_params["case_id"]
    ws.store.case(case_id)
    return [queues.queue_summary(ws, q) for q in ws.store.queues.queues(case_id)]


def add_queue(request: Request, body: dict[str, Any]) -> Any:
    """A new rating queue of the case from a pairs file's text (gainscope pool -o, or qrels or run lines)."""
    from gainscope.server import queues

    ws = _ws(request)
    case_id = request.path_params["case_id"]
    ws.store.case(case_id)
    filename = Path(_field(body, "filename", str, default="pairs.txt")).name or "pairs.txt"
    content = _field(body, "content", str, required=True)
    with _uploaded(filename, content) as path:
        record, created = queues.add_queue(ws, case_id, path, name=_field(body, "name", str), shown_as=filename)
    return json_response(queues.queue_summary(ws, record), 201 if created else 200)


def _position(body: Mapping[str, Any]) -> int:
    position: int = _field(body, "position", int, required=True)
    return position


def get_queue(request: Request, _: Any) -> Any:
    from gainscope.server import queues

    p = request.path_params
    raw = request.query_params.get("position")
    try:
        position = None if raw in (None, "") else int(raw)
    except ValueError:
        raise InputError(f"'position' is an integer; got {raw!r}") from None
    return queues.queue_state(_ws(request), p["case_id"], p["queue_id"], position)


def delete_queue(request: Request, _: Any) -> Any:
    ws = _ws(request)
    p = request.path_params
    ws.store.queues.queue(p["queue_id"], p["case_id"])
    ws.store.queues.delete(p["queue_id"])
    return {"deleted": p["queue_id"]}


def rate_in_queue(request: Request, body: dict[str, Any]) -> Any:
    from gainscope.server import queues

    p = request.path_params
    if "rating" not in body:
        raise InputError("the request needs 'rating' (a number on the case's scale)")
    author = _field(body, "author", str) or request.headers.get("x-gainscope-user") or None
    return queues.rate(_ws(request), p["case_id"], p["queue_id"], _position(body), body["rating"], author=author)


def skip_in_queue(request: Request, body: dict[str, Any]) -> Any:
    from gainscope.server import queues

    p = request.path_params
    return queues.skip(_ws(request), p["case_id"], p["queue_id"], _position(body))


def undo_in_queue(request: Request, body: dict[str, Any]) -> Any:
    from gainscope.server import queues

    p = request.path_params
    author = _field(body, "author", str) or request.headers.get("x-gainscope-user") or None
    return queues.undo(_ws(request), p["case_id"], p["queue_id"], author=author)


def move_in_queue(request: Request, body: dict[str, Any]) -> Any:
    from gainscope.server import queues

    p = request.path_params
    return queues.goto(_ws(request), p["case_id"], p["queue_id"], _position(body))


def export_queue(request: Request, _: Any) -> Any:
    from gainscope.server import queues

    p = request.path_params
    fmt = request.query_params.get("format", "qrels")
    if fmt != "qrels":
        raise InputError(f"a queue exports format=qrels; got {fmt!r}")
    text = queues.export_qrels(_ws(request), p["queue_id"], p["case_id"])
    return Response(text, media_type="text/plain", headers={
        "Content-Disposition": f'attachment; filename="{p["queue_id"]}.qrels"'})


# ---------------------------------------------------------------------------------------------- the table
def openapi(request: Request, _: Any) -> Any:
    from gainscope.server.openapi import document

    return document()


def _with_body(path: str, method: str, handler: Handler) -> Route:
    """The route of a request with a JSON body: the fields it takes are those the OpenAPI document lists."""
    from gainscope.server.openapi import ROUTES

    (schema,) = [b for m, p, _, b, _, _ in ROUTES if (m, p) == (method.lower(), path)]
    return Route(path, endpoint(handler, body=True, fields=tuple((schema or {}).get("properties", {}))),
                 methods=[method])


def _json_kind(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number",
            type(None): "null"}.get(type(value), type(value).__name__)


def routes() -> list[Route]:
    """Every API route. A route with a JSON body refuses the fields its OpenAPI entry
    (:data:`gainscope.server.openapi.ROUTES`) does not list."""
    c = "/api/cases/{case_id}"
    return [
        Route("/api", endpoint(openapi), methods=["GET"]),
        Route("/api/cases", endpoint(list_cases), methods=["GET"]),
        _with_body("/api/cases", "POST", import_case),
        Route(c, endpoint(get_case), methods=["GET"]),
        _with_body(c, "PATCH", patch_case),
        Route(c, endpoint(delete_case), methods=["DELETE"]),
        Route(c + "/queries/{query_id}", endpoint(get_query), methods=["GET"]),
        Route(c + "/queries/{query_id}/explain", endpoint(explain), methods=["GET"]),
        _with_body(c + "/ratings", "PUT", put_rating),
        Route(c + "/ratings/events", endpoint(rating_events), methods=["GET"]),
        _with_body(c + "/search", "POST", search),
        Route(c + "/engine", endpoint(engine_info), methods=["GET"]),
        _with_body(c + "/rerun", "POST", rerun),
        Route("/api/jobs/{job_id}", endpoint(get_job), methods=["GET"]),
        Route(c + "/snapshots", endpoint(list_snapshots), methods=["GET"]),
        _with_body(c + "/snapshots", "POST", take_snapshot),
        Route(c + "/compare", endpoint(compare), methods=["GET"]),
        Route(c + "/history", endpoint(history), methods=["GET"]),
        _with_body(c + "/annotations", "POST", annotate),
        Route(c + "/export", endpoint(export), methods=["GET"]),
        _with_body(c + "/judge", "POST", judge),
        Route(c + "/agreement", endpoint(agreement), methods=["GET"]),
        Route(c + "/queues", endpoint(list_queues), methods=["GET"]),
        _with_body(c + "/queues", "POST", add_queue),
        Route(c + "/queues/{queue_id}", endpoint(get_queue), methods=["GET"]),
        Route(c + "/queues/{queue_id}", endpoint(delete_queue), methods=["DELETE"]),
        _with_body(c + "/queues/{queue_id}/rate", "POST", rate_in_queue),
        _with_body(c + "/queues/{queue_id}/skip", "POST", skip_in_queue),
        _with_body(c + "/queues/{queue_id}/undo", "POST", undo_in_queue),
        _with_body(c + "/queues/{queue_id}/position", "PUT", move_in_queue),
        Route(c + "/queues/{queue_id}/export", endpoint(export_queue), methods=["GET"]),
        Route("/api/scorers", endpoint(list_scorers), methods=["GET"]),
        _with_body("/api/scorers/test", "POST", test_scorer),
        _with_body("/api/scorers/{name}", "PUT", put_scorer),
        Route("/api/scorers/{name}", endpoint(delete_scorer), methods=["DELETE"]),
    ]
