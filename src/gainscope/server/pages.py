"""The dashboard's pages, rendered on the server with Jinja2 (autoescape on) from the same views the JSON API answers
(:mod:`gainscope.server.views`); the pages' scripts (``static/*.js``, ES modules of our own) change state only
through the API.

Pages: the cases (``/``), one case (``/cases/ID``), one query (``/cases/ID/queries/Q``), tune (engine, knobs,
rerun), snapshots (compare any number), history (a chart per scorer, with annotations), judges (an LLM judge and
its agreement with people), import and export, rating queues (``/cases/ID/queues``: pairs from ``gainscope pool``
rated one at a time, :mod:`gainscope.server.queues`), and the scorers (``/scorers``: write, test on one query, save).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from gainscope._version import __version__
from gainscope.errors import GainscopeError, NotFoundError
from gainscope.server import charts, views
from gainscope.server.workspace import HEADER, Workspace

__all__ = ["environment", "routes"]

TEMPLATES = Path(__file__).parent / "templates"


def _number(value: Any, digits: int = 3) -> str:
    """A score for display: 3 decimals (no trailing dot), an en dash for none."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "\u2013"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    text = f"{float(value):.{digits}f}"
    return text


def _signed(value: Any) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "\u2013"
    return f"{float(value):+.3f}"


def _raw(value: Any) -> str:
    """A number as the ``data-value`` attribute holds it (full precision; empty for none)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return repr(float(value)) if isinstance(value, float) else str(value)


def _band(value: Any) -> str:
    """A colour band for a score in [0, 1] (``s0`` red .. ``s4`` green); none outside that range."""
    if value is None or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        return ""
    return f"s{min(4, int(value * 5))}"


def environment() -> Environment:
    """The Jinja2 environment of the pages (autoescape on, undefined names are errors)."""
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(default=True),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(num=_number, signed=_signed, raw=_raw, band=_band)
    env.globals.update(version=__version__, sparkline=charts.sparkline)
    return env


_ENV = environment()


def compile_templates() -> None:
    """Compile every page's template now (the app does at start), so that no first visit pays for it."""
    for name in _ENV.list_templates(extensions=["html"]):
        _ENV.get_template(name)


def render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    """A page: ``template`` with the context, the nonce of this response and the token when the request holds it."""
    authorized = bool(getattr(request.state, "authorized", False))
    html = _ENV.get_template(template).render(
        nonce=request.state.nonce, token=request.app.state.workspace.token if authorized else "",
        writable=authorized, header=HEADER, path=request.url.path, **context)
    return HTMLResponse(html, status)


def page(build: Callable[[Request, Workspace], tuple[str, dict[str, Any]]]) -> Callable[[Request], Any]:
    """An endpoint that builds a page's context in a worker thread; gainscope's errors become an error page."""

    async def run(request: Request) -> Response:
        from gainscope.server.api import timed

        ws: Workspace = request.app.state.workspace
        started = time.perf_counter()

        def build_and_render() -> HTMLResponse:
            try:
                template, context = build(request, ws)
            except GainscopeError as exc:
                status = 404 if isinstance(exc, NotFoundError) else 400
                return render(request, "error.html", status, title="Not found" if status == 404 else "Error",
                              message=str(exc), case=None)
            return render(request, template, **context)

        return timed(await run_in_threadpool(build_and_render), started)

    return run


def _case_nav(ws: Workspace, case_id: str) -> dict[str, Any]:
    record = ws.store.case(case_id)
    return {"id": record.id, "name": record.name, "engine": record.engine}


# ---------------------------------------------------------------------------------------------- the pages
def cases_page(request: Request, ws: Workspace) -> tuple[str, dict[str, Any]]:
    return "cases.html", {"title": "Cases", "case": None, "cases": [views.case_summary(ws, c) for c in
                                                                     ws.store.cases()]}


def case_page(request: Request, ws: Workspace) -> tuple[str, dict[str, Any]]:
    p = request.query_params
    case_id = request.path_params["case_id"]
    detail = views.case_detail(ws, case_id, baseline=p.get("baseline"), sort=p.get("sort", "position"),
                               scorer=p.get("scorer"), descending=p.get("order") == "desc")
    return "case.html", {"title": detail["name"], "case": _case_nav(ws, case_id), "detail": detail,
                         "saved_scorers": ws.scorer_names(), "builtins": _builtin_names(),
                         "sort_scorer": p.get("scorer") or (detail["settings"]["scorers"] or [""])[0],
                         "order": p.get("order", "asc")}


def _builtin_names() -> list[str]:
    from gainscope.server.cases import builtin_scorers

    return [b["name"] for b in builtin_scorers()]


def query_page(request: Request, ws: Workspace) -> tuple[str, dict[str, Any]]:
    case_id, query_id = request.path_params["case_id"], request.path_params["query_id"]
    detail = views.query_detail(ws, case_id, query_id, snapshot=request.query_params.get("snapshot") or None)
    return "query.html", {"title": detail["text"], "case": _case_nav(ws, case_id), "q": detail,
                          "keys": _keys(detail["case"]["scale"]["values"])}


def _keys(values: Sequence[float]) -> list[tuple[str, Any]]:
    """The key that gives each grade: its digit when every grade is a digit 0-9, else 1, 2, ... 9, 0 in order."""
    if all(float(v).is_integer() and 0 <= v <= 9 for v in values):
        return [(str(int(v)), v) for v in values]
    return [(str((i + 1) % 10) if i < 10 else "", v) for i, v in enumerate(values)]


def tune_page(request: Request, ws: Workspace) -> tuple[str, dict[str, Any]]:
    case_id = request.path_params["case_id"]
    record = ws.store.case(case_id)
    engine: dict[str, Any] = {"error": None, "knobs": {}, "configuration": None, "name": None, "kind": None}
    if record.engine:
        try:
            found, knobs = ws.engine(record)
            engine.update(knobs=dict(found.knobs), configuration=found.configuration(found.resolve(knobs)),
                          name=found.name, kind=found.kind)
        except GainscopeError as exc:
            engine["error"] = str(exc)
    reruns: dict[tuple[str, str | None], dict[str, Any]] = {}
    for point in ws.store.history(case_id):
        if point.event == "rerun":
            row = reruns.setdefault((point.at, point.snapshot), {"at": point.at, "snapshot": point.snapshot,
                                                                 "note": point.note, "scores": {}})
            row["scores"][point.scorer] = point.score
    rows = list(reruns.values())[-30:][::-1]
    scorers = list(dict.fromkeys(name for row in rows for name in row["scores"]))
    return "tune.html", {"title": f"Tune {record.name}", "case": _case_nav(ws, case_id), "record": record,
                         "engine": engine, "reruns": rows, "rerun_scorers": scorers,
                         "overrides": {k: v for k, v in record.try_.items() if k != "knobs"}}


def snapshots_page(request: Request, ws: Workspace) -> tuple[str, dict[str, Any]]:
    case_id = request.path_params["case_id"]
    record = ws.store.case(case_id)
    p = request.query_params
    created = {sn.name: sn.created for sn in ws.case_snapshots(case_id)}
    chosen = sorted(p.getlist("snapshot"), key=lambda name: created.get(name, ""))  # the oldest is the baseline
    current = p.get("current") in ("1", "on", "true")  # the results in force come last: they are the newest
    scorers = p.getlist("scorer") or list(record.settings.scorers)
    comparison = None
    if len(chosen) + int(current) >= 2:
        k = p.get("k")
        result = ws.compare(case_id, chosen, current=current, scorers=scorers, k=int(k) if k and k.isdigit() else None)
        comparison = {name: (c if isinstance(c, str) else c.to_dict()) for name, c in result.items()}
    snapshots = ws.case_snapshots(case_id)
    return "snapshots.html", {"title": f"Snapshots of {record.name}", "case": _case_nav(ws, case_id),
                              "snapshots": snapshots[::-1], "chosen": chosen, "current": current,
                              "comparison": comparison, "scorers": record.settings.scorers}


def history_page(request: Request, ws: Workspace) -> tuple[str, dict[str, Any]]:
    case_id = request.path_params["case_id"]
    record = ws.store.case(case_id)
    points = ws.store.history(case_id)
    by_scorer: dict[str, list[Any]] = {}
    for point in points:
        by_scorer.setdefault(point.scorer, []).append(point)
    charts_ = {name: charts.history_chart(name, series) for name, series in by_scorer.items()}
    notes = [p for p in points if p.note]
    seen: set[tuple[str, str]] = set()
    annotations = []
    for p in notes:
        if (p.at, p.note or "") not in seen:
            seen.add((p.at, p.note or ""))
            annotations.append(p)
    return "history.html", {"title": f"History of {record.name}", "case": _case_nav(ws, case_id),
                            "charts": charts_, "annotations": annotations[::-1], "points": len(points)}


def judges_page(request: Request, ws: Workspace) -> tuple[str, dict[str, Any]]:
    case_id = request.path_params["case_id"]
    record = ws.store.case(case_id)
    from gainscope.judges.prompts import BUILTIN
    from gainscope.server.api import agreement

    data = agreement(request, None) if ws.store.judges(case_id) else {"judges": [], "agreement": None}
    import os

    return "judges.html", {"title": f"Judges of {record.name}", "case": _case_nav(ws, case_id), "record": record,
                           "prompts": list(BUILTIN), "agreement": data,
                           "base_url": os.environ.get("OPENAI_BASE_URL", "")}


def io_page(request: Request, ws: Workspace) -> tuple[str, dict[str, Any]]:
    case_id = request.path_params["case_id"]
    record = ws.store.case(case_id)
    events = ws.store.rating_events(case_id, limit=50)
    texts = {q.id: q.text for q in ws.store.queries(case_id)}
    return "io.html", {"title": f"Import and export {record.name}", "case": _case_nav(ws, case_id),
                       "events": events, "texts": texts}


def queues_page(request: Request, ws: Workspace) -> tuple[str, dict[str, Any]]:
    from gainscope.server.queues import queue_summary

    case_id = request.path_params["case_id"]
    record = ws.store.case(case_id)
    return "queues.html", {"title": f"Rating queues of {record.name}", "case": _case_nav(ws, case_id),
                           "queues": [queue_summary(ws, q) for q in ws.store.queues.queues(case_id)]}


def queue_page(request: Request, ws: Workspace) -> tuple[str, dict[str, Any]]:
    from gainscope.server.queues import queue_state

    case_id, queue_id = request.path_params["case_id"], request.path_params["queue_id"]
    state = queue_state(ws, case_id, queue_id)
    scores = ws.scoreboard.scores(case_id)
    return "queue.html", {"title": f"Queue {state['queue']['name']}", "case": _case_nav(ws, case_id),
                          "state": state, "keys": _keys(state["scale"]["values"]),
                          "case_scores": {name: sc.score for name, sc in scores.by_scorer.items()},
                          "answered": any(q.results for q in scores.queries)}


def scorers_page(request: Request, ws: Workspace) -> tuple[str, dict[str, Any]]:
    from gainscope.server.cases import builtin_scorers

    chosen = request.query_params.get("name")
    saved = ws.store.scorers()
    editing = next((s for s in saved if s.name == chosen), None)
    return "scorers.html", {"title": "Scorers", "case": None, "builtins": builtin_scorers(), "saved": saved,
                            "editing": editing, "cases": [(c.id, c.name) for c in ws.store.cases()],
                            "python": ws.allow_code}


def routes() -> list[Route]:
    """Every page route."""
    c = "/cases/{case_id}"
    return [
        Route("/", page(cases_page), methods=["GET"]),
        Route("/scorers", page(scorers_page), methods=["GET"]),
        Route(c, page(case_page), methods=["GET"]),
        Route(c + "/queries/{query_id}", page(query_page), methods=["GET"]),
        Route(c + "/tune", page(tune_page), methods=["GET"]),
        Route(c + "/snapshots", page(snapshots_page), methods=["GET"]),
        Route(c + "/history", page(history_page), methods=["GET"]),
        Route(c + "/judges", page(judges_page), methods=["GET"]),
        Route(c + "/io", page(io_page), methods=["GET"]),
        Route(c + "/queues", page(queues_page), methods=["GET"]),
        Route(c + "/queues/{queue_id}", page(queue_page), methods=["GET"]),
    ]
