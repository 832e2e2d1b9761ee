"""A fake search server on 127.0.0.1 for the engine tests; standard library only.

Every request is recorded (:class:`Recorded`: method, path, query parameters, headers, body) and answered by a
*behaviour*, ``(request, number) -> Reply`` where ``number`` counts requests from 1. A :class:`Reply` is a status,
a body (text, bytes, or anything JSON-serialisable) and headers; ``drop=True`` closes the connection without an
answer, ``hold`` (a ``threading.Event``) holds the request until it is set (or the server stops)::

    with FakeSearchServer(lambda request, n: Reply(200, es_response(["d1", "d2"]))) as server:
        ...  # point an engine at server.url + "/products/_search"
        server.requests[0].json()

    python tests/search/server.py --port 0 [--faults 500=0.1,drop=0.05,429=0.05 --seed 1] [--hits 10]

serves, from the command line, an answer with ``--hits`` hits for every query (ids derived from the query text)
with the faults injected at random, printing its URL on the first line of standard output; ``GET /_stats`` returns
the counts of requests and of replies by kind, and the arrival times of the requests (``time.monotonic``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit


@dataclass
class Recorded:
    """One request as the server received it."""

    method: str
    path: str
    params: list[tuple[str, str]]
    headers: dict[str, str]
    body: bytes
    arrived: float = field(default_factory=time.monotonic)

    def json(self) -> Any:
        return json.loads(self.body)

    def param(self, name: str) -> str | None:
        return next((v for k, v in self.params if k == name), None)


@dataclass
class Reply:
    """What the server answers (see the module docstring)."""

    status: int = 200
    body: Any = ""
    headers: dict[str, str] = field(default_factory=dict)
    drop: bool = False
    hold: threading.Event | None = None
    kind: str = ""


Behaviour = Callable[[Recorded, int], Reply]


def es_response(ids: list[str], *, total: int | None = None, relation: str = "eq", fields: dict | None = None) -> dict:
    """A response in the shape Elasticsearch 7.x/8.x and OpenSearch 1.x/2.x document for ``POST /<index>/_search``
    (took, timed_out, _shards, hits.total {value, relation}, hits.max_score, hits.hits [_index, _id, _score,
    _source]); scores decrease from 10."""
    hits = [{"_index": "products", "_id": d, "_score": 10.0 - i, "_source": (fields or {}).get(d, {"title": d})}
            for i, d in enumerate(ids)]
    return {"took": 3, "timed_out": False, "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
            "hits": {"total": {"value": len(ids) if total is None else total, "relation": relation},
                     "max_score": hits[0]["_score"] if hits else None, "hits": hits}}


def solr_response(ids: list[str], *, num_found: int | None = None, q: str = "") -> dict:
    """A response in the shape of Solr's JSON response writer (responseHeader {status, QTime, params}, response
    {numFound, start, numFoundExact, maxScore, docs}) as Solr 8.x/9.x documents it for ``/select`` with
    ``fl=id,score``; scores decrease from 5."""
    docs = [{"id": d, "score": 5.0 - i / 10} for i, d in enumerate(ids)]
    return {"responseHeader": {"zkConnected": True, "status": 0, "QTime": 2, "params": {"q": q, "wt": "json"}},
            "response": {"numFound": len(ids) if num_found is None else num_found, "start": 0,
                         "numFoundExact": True, "maxScore": docs[0]["score"] if docs else None, "docs": docs}}


class FakeSearchServer:
    """A threading HTTP server on 127.0.0.1 that records requests and answers with a behaviour."""

    def __init__(self, behaviour: Behaviour | None = None, port: int = 0) -> None:
        self.behaviour: Behaviour = behaviour or (lambda request, n: Reply(200, es_response(["d1"])))
        self.requests: list[Recorded] = []
        self.replies: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _handle(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                if parts.path == "/_stats":
                    self._send(Reply(200, {"requests": len(server.requests), "replies": dict(server.replies),
                                           "arrivals": [r.arrived for r in server.requests]}))
                    return
                request = Recorded(self.command, parts.path, parse_qsl(parts.query, keep_blank_values=True),
                                   {k: v for k, v in self.headers.items()}, body)
                with server._lock:
                    server.requests.append(request)
                    number = len(server.requests)
                reply = server.behaviour(request, number)
                with server._lock:
                    server.replies[reply.kind or ("drop" if reply.drop else str(reply.status))] += 1
                if reply.hold is not None:
                    while not reply.hold.wait(0.05) and not server._stopping.is_set():
                        pass
                if reply.drop:
                    self.close_connection = True
                    return
                self._send(reply)

            def _send(self, reply: Reply) -> None:
                body = reply.body
                if not isinstance(body, str | bytes):
                    body = json.dumps(body)
                data = body.encode("utf-8") if isinstance(body, str) else body
                self.send_response(reply.status)
                headers = {"Content-Type": "application/json", **reply.headers}
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = _handle
            do_POST = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)

    def __enter__(self) -> FakeSearchServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def parse_faults(text: str) -> dict[str, float]:
    """``"500=0.1,drop=0.05"`` as ``{"500": 0.1, "drop": 0.05}``."""
    out = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        kind, _, share = part.partition("=")
        out[kind] = float(share)
    return out


def hits_for(text: str, count: int) -> list[str]:
    """``count`` document ids that depend only on the query text."""
    seed = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)
    return [f"d{(seed + 7919 * i) % 100000}" for i in range(count)]


def faulty(faults: dict[str, float], *, hits: int = 10, seed: int = 1, retry_after: float = 0.0) -> Behaviour:
    """A behaviour answering ES-shaped hits for the query (``q`` parameter or body ``query``), with each fault
    kind (an HTTP status such as ``500``/``503``/``429``, or ``drop``) injected with its probability."""
    rng = random.Random(seed)
    lock = threading.Lock()

    def behaviour(request: Recorded, number: int) -> Reply:
        with lock:
            draw = rng.random()
        for kind, share in faults.items():
            if draw < share:
                if kind == "drop":
                    return Reply(drop=True)
                headers = {"Retry-After": f"{retry_after:g}"} if kind == "429" else {}
                return Reply(int(kind), {"error": {"type": "injected", "reason": kind}}, headers)
            draw -= share
        text = request.param("q") or (request.json().get("query", "") if request.body else "")
        return Reply(200, es_response(hits_for(str(text), hits)), kind="ok")

    return behaviour


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--faults", default="")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--hits", type=int, default=10)
    parser.add_argument("--retry-after", type=float, default=0.0)
    args = parser.parse_args()
    with FakeSearchServer(faulty(parse_faults(args.faults), hits=args.hits, seed=args.seed,
                                 retry_after=args.retry_after), args.port) as fake:
        print(fake.url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
