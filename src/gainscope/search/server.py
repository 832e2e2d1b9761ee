"""An embedded index behind a small HTTP JSON API (``gainscope serve-engine DIR``): a real search server for the
generic HTTP adapter, for tests and demos. Standard library only; binds 127.0.0.1 unless told otherwise.

Endpoints:

* ``GET /search?q=TEXT&top=N&KNOB=VALUE...`` or ``POST /search`` with ``{"query": TEXT, "top": N, "knobs":
  {...}}``: ``{"query", "top", "knobs", "total", "took_ms", "hits": [{"id", "score", "fields"}]}``, hits in rank
  order; knob values in a query string are read as numbers when they are numbers. ``top`` defaults to 10;
* ``GET /documents/ID``: ``{"id", "fields"}``, the stored fields of one document (404 when there is none);
* ``GET /``: ``{"engine", "documents", "fields", "knobs"}`` (the knobs' defaults); ``GET /health``: ``{"status":
  "ok"}``.

A request that cannot be answered (no ``q``, an unknown knob, a knob value out of range, ``top`` not a positive
integer, a body that is not JSON) is ``400`` with ``{"error": message}``; an unknown path ``404``.

An engine declaration for it::

    [engines.local]
    kind = "http"
    url = "http://127.0.0.1:8765/search"
    params = { q = "{{query}}", top = "{{top}}", title_boost = "{{title_boost}}" }
    docs = "hits"
    id = "id"
    score = "score"
    total = "total"
    fields = { title = "fields.title" }
    [engines.local.knobs]
    title_boost = 2
"""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from gainscope.errors import EngineConfigError
from gainscope.search.embedded import EmbeddedEngine
from gainscope.search.engine import SearchQuery
from gainscope.search.templates import parse_value

__all__ = ["MAX_BODY", "engine_server"]

MAX_BODY = 1024 * 1024


class _BadRequest(Exception):
    pass


def _answer(engine: EmbeddedEngine, text: Any, top: Any, knobs: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(text, str) or not text.strip():
        raise _BadRequest("give the query text: q=TEXT (GET) or {\"query\": TEXT} (POST)")
    if isinstance(top, str):
        try:
            top = int(top)
        except ValueError:
            raise _BadRequest(f"top must be a positive integer; got {top!r}") from None
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise _BadRequest(f"top must be a positive integer; got {top!r}")
    try:
        values = engine.resolve(knobs)
        prepared = engine.prepare(SearchQuery("q", text), values, top)
    except EngineConfigError as exc:
        raise _BadRequest(str(exc)) from None
    started = time.perf_counter()
    response = engine.run(prepared)
    return {"query": text, "top": top, "knobs": values, "total": response.total,
            "took_ms": round((time.perf_counter() - started) * 1000, 3),
            "hits": [{"id": h.id, "score": h.score, "fields": dict(h.fields)} for h in response.hits]}


def engine_server(engine: EmbeddedEngine, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """A server (not yet serving: call ``serve_forever``) answering the endpoints of the module docstring."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "gainscope-serve-engine"

        def log_message(self, *args: Any) -> None:  # quiet: the command line says where it serves
            pass

        def _json(self, status: int, payload: Any) -> None:
            data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            try:
                if parts.path == "/search":
                    params = dict(parse_qsl(parts.query, keep_blank_values=True))
                    text, top = params.pop("q", None), params.pop("top", "10")
                    self._json(200, _answer(engine, text, top, {k: parse_value(v) for k, v in params.items()}))
                elif parts.path.startswith("/documents/"):
                    doc_id = unquote(parts.path[len("/documents/"):])
                    fields = engine.document(doc_id)
                    if fields is None:
                        self._json(404, {"error": f"no document {doc_id!r} in the index"})
                    else:
                        self._json(200, {"id": doc_id, "fields": fields})
                elif parts.path == "/":
                    self._json(200, {"engine": "gainscope embedded (bm25s)", "documents": engine.info.documents,
                                     "fields": engine.info.fields, "knobs": dict(engine.knobs)})
                elif parts.path == "/health":
                    self._json(200, {"status": "ok"})
                else:
                    self._json(404, {"error": f"no endpoint {parts.path}; use /search, /documents/ID, / or /health"})
            except _BadRequest as exc:
                self._json(400, {"error": str(exc)})

        def do_POST(self) -> None:
            if urlsplit(self.path).path != "/search":
                self._json(404, {"error": "POST goes to /search"})
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                self._json(413, {"error": f"a request body is at most {MAX_BODY} bytes"})
                self.close_connection = True
                return
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
                if not isinstance(body, dict):
                    raise _BadRequest("the body is a JSON object {\"query\": TEXT, \"top\": N, \"knobs\": {...}}")
                knobs = body.get("knobs") or {}
                if not isinstance(knobs, dict):
                    raise _BadRequest("knobs must be a JSON object")
                self._json(200, _answer(engine, body.get("query"), body.get("top", 10), knobs))
            except json.JSONDecodeError as exc:
                self._json(400, {"error": f"the body is not JSON ({exc.msg})"})
            except _BadRequest as exc:
                self._json(400, {"error": str(exc)})

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server
