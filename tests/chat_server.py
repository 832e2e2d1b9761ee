"""A fake OpenAI-compatible chat-completions server on 127.0.0.1 for the judge tests; standard library only.

It speaks enough of the protocol for any OpenAI-compatible client: ``POST /v1/chat/completions`` (also
``/chat/completions`` and Azure's ``/openai/deployments/<name>/chat/completions?api-version=...``) and
``GET /v1/models``. What each request gets back is decided by a *behaviour*: a callable
``(body, attempt) -> Reply`` where ``attempt`` counts the requests with the same messages seen so far (1 for the
first). The default behaviour answers ``{"grade": g, "reasoning": "..."}`` with ``g`` taken from a ``grade=N``
marker in the last user message, else ``len(user message) % 5``.

::

    with FakeChatServer() as server:                      # started on a free port, stopped on exit
        server.behaviour = lambda body, attempt: Reply("429", retry_after=0.3) if attempt == 1 else Reply("ok")
        ...  # point a client at server.url (".../v1")
        server.count(lambda r: r.kind == "429"), server.max_concurrency(), server.request_times()

Reply kinds (``Reply.kind``)::

    ok             200, content {"grade": g, "reasoning": ...}; g = Reply.grade or the default behaviour's grade
    fenced         the same JSON inside a ```json fence
    malformed      prose that is not JSON (and holds no digit)
    out_of_range   {"grade": 7, ...}
    missing_grade  {"reasoning": ...}
    text           Reply.text as the content, verbatim
    no_usage       ok, but the body has no "usage" field
    slow           ok after Reply.delay seconds (0.5 when not given)
    timeout        holds the request Reply.delay seconds (30 when not given; released when the server stops), then ok
    drop           closes the connection without sending any response
    empty_choices  200 with "choices": [] (a broken proxy)
    bad_body       200 with an HTML body that is not JSON (a broken proxy)
    "<status>"     that HTTP status with an OpenAI-style error body (or Reply.text verbatim, when given), e.g.
                   "429", "500", "503", "408", "400"; Reply.retry_after adds a Retry-After header (seconds),
                   Reply.headers adds any other header

``Reply.delay`` delays any kind; ``Reply.usage`` sets (prompt_tokens, completion_tokens), else they are estimated as
characters / 4. With ``json_mode_supported=False`` a request carrying ``response_format`` is refused with a 400
naming the parameter, as vLLM and llama.cpp servers without JSON mode do; that refusal is recorded (kind
``"400_response_format"``) but neither calls the behaviour nor counts as an attempt.

Every request is recorded (``RecordedRequest``: arrival time on ``time.monotonic``, path, query, headers, parsed
body, reply kind, attempt). ``GET /_requests`` returns the records as JSON, for tests whose server runs in another
process::

    python tests/chat_server.py --port 0 --grade-from-marker [--faults 429=0.05,500=0.05,drop=0.05 --seed 1]

prints the base URL on its first stdout line and serves until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import signal
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "KINDS",
    "Behaviour",
    "FakeChatServer",
    "RecordedRequest",
    "Reply",
    "default_behaviour",
    "default_grade",
    "fault_behaviour",
    "user_text",
]

CONTENT_KINDS = frozenset(
    {"ok", "fenced", "malformed", "out_of_range", "missing_grade", "text", "no_usage", "slow", "timeout"}
)
KINDS = CONTENT_KINDS | {"drop", "empty_choices", "bad_body"}
STATUS_PHRASES = {400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 408: "Request Timeout",
                  409: "Conflict", 429: "Too Many Requests", 500: "Internal Server Error", 502: "Bad Gateway",
                  503: "Service Unavailable", 504: "Gateway Timeout"}
MARKER = re.compile(r"grade=(-?\d+)")
DEFAULT_SLOW = 0.5
DEFAULT_HOLD = 30.0


@dataclass(frozen=True)
class Reply:
    """What the server answers to one request; ``kind`` is one of ``KINDS`` or an HTTP status such as ``"429"``."""

    kind: str
    grade: int | None = None
    delay: float = 0.0
    retry_after: float | None = None
    text: str | None = None
    usage: tuple[int, int] | None = None
    headers: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS and not (self.kind.isdigit() and 400 <= int(self.kind) <= 599):
            raise ValueError(f"unknown reply kind {self.kind!r}; use one of {sorted(KINDS)} or an HTTP status "
                             "between 400 and 599 such as '429'")
        if self.kind == "text" and self.text is None:
            raise ValueError("Reply('text') needs text=")


Behaviour = Callable[[dict[str, Any], int], Reply]


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server saw it; ``time`` is ``time.monotonic()`` when its body had been read."""

    time: float
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    kind: str
    attempt: int

    @property
    def user_text(self) -> str:
        """The last user message of the body ("" when there is none)."""
        return user_text(self.body or {})


def user_text(body: Mapping[str, Any]) -> str:
    """The text of the last ``role == "user"`` message of a chat-completions body ("" when there is none)."""
    for message in reversed(body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
                return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
            return str(content or "")
    return ""


def default_grade(body: Mapping[str, Any]) -> int:
    """``N`` from a ``grade=N`` marker in the last user message, else its length modulo 5."""
    text = user_text(body)
    match = MARKER.search(text)
    return int(match.group(1)) if match else len(text) % 5


def default_behaviour(body: dict[str, Any], attempt: int) -> Reply:
    """Answer well: ``ok`` with ``default_grade(body)``."""
    return Reply("ok", grade=default_grade(body))


def _messages_key(body: Mapping[str, Any]) -> str:
    return json.dumps(body.get("messages"), sort_keys=True, ensure_ascii=False)


def fault_behaviour(rates: Mapping[str, float], *, seed: int = 0, retry_after: float = 0.05,
                    slow_delay: float = 0.2, hold: float = DEFAULT_HOLD,
                    base: Behaviour = default_behaviour) -> Behaviour:
    """A behaviour that injects faults at the given rates (kind -> probability, summing to at most 1).

    The draw is a hash of (seed, messages, attempt), so a rerun against a fresh server sees the same faults and a
    retry of a request draws anew. Kinds are those of ``Reply``; ``"429"`` carries ``Retry-After: retry_after``,
    ``slow`` waits ``slow_delay`` and ``timeout`` holds ``hold`` seconds. Otherwise ``base`` answers.
    """
    total = sum(rates.values())
    if total > 1 or any(rate < 0 for rate in rates.values()):
        raise ValueError(f"fault rates must be >= 0 and sum to at most 1, got {dict(rates)}")
    for kind in rates:
        Reply(kind, text="")  # validates the kind

    def behaviour(body: dict[str, Any], attempt: int) -> Reply:
        digest = hashlib.sha256(f"{seed}\x00{_messages_key(body)}\x00{attempt}".encode()).digest()
        draw = int.from_bytes(digest[:8], "big") / 2**64
        for kind, rate in rates.items():
            if draw < rate:
                return _fault(kind, body, retry_after=retry_after, slow_delay=slow_delay, hold=hold)
            draw -= rate
        return base(body, attempt)

    return behaviour


def _fault(kind: str, body: dict[str, Any], *, retry_after: float, slow_delay: float, hold: float) -> Reply:
    if kind == "429":
        return Reply(kind, retry_after=retry_after)
    if kind == "slow":
        return Reply(kind, grade=default_grade(body), delay=slow_delay)
    if kind == "timeout":
        return Reply(kind, grade=default_grade(body), delay=hold)
    if kind == "text":
        return Reply(kind, text="not a grade")
    return Reply(kind, grade=default_grade(body))


def parse_faults(text: str) -> dict[str, float]:
    """``"429=0.05,500=0.05,drop=0.02"`` -> ``{"429": 0.05, "500": 0.05, "drop": 0.02}``."""
    rates: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        kind, _, rate = item.partition("=")
        rates[kind.strip()] = float(rate)
    return rates


# ---------------------------------------------------------------------------------------------------- bodies


def _content(reply: Reply, grade: int) -> str:
    reasoning = f"The passage matches the query at level {grade}."
    if reply.kind == "fenced":
        return "```json\n" + json.dumps({"grade": grade, "reasoning": reasoning}) + "\n```"
    if reply.kind == "malformed":
        return "Relevance: high. The passage answers the question directly."
    if reply.kind == "out_of_range":
        return json.dumps({"grade": 7, "reasoning": reasoning})
    if reply.kind == "missing_grade":
        return json.dumps({"reasoning": reasoning})
    if reply.kind == "text":
        return reply.text or ""
    return json.dumps({"grade": grade, "reasoning": reasoning})


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _completion_body(body: Mapping[str, Any], reply: Reply, content: str, model: str) -> dict[str, Any]:
    result: dict[str, Any] = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "fp_fake",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "logprobs": None, "finish_reason": "stop"}],
    }
    if reply.kind == "empty_choices":
        result["choices"] = []
    if reply.kind != "no_usage":
        if reply.usage is not None:
            prompt, completion = reply.usage
        else:
            prompt = _estimate_tokens(json.dumps(body.get("messages"), ensure_ascii=False))
            completion = _estimate_tokens(content)
        result["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion,
                           "total_tokens": prompt + completion}
    return result


def _error_body(status: int, message: str, *, kind: str | None = None, param: str | None = None) -> dict[str, Any]:
    kinds = {400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error",
             429: "rate_limit_exceeded"}
    error_type = kind or kinds.get(status, "server_error")
    code = "rate_limit_exceeded" if status == 429 else None
    return {"error": {"message": message, "type": error_type, "param": param, "code": code}}


# ---------------------------------------------------------------------------------------------------- server


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers do; every reply carries Content-Length
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: tests read the records instead."""

    def do_GET(self) -> None:
        fake = self.server.fake
        path = urlsplit(self.path).path
        if path.rstrip("/") == "/_requests":
            self._send_json(200, [asdict(record) for record in fake.requests])
        elif path.rstrip("/").endswith("/models"):
            self._send_json(200, {"object": "list", "data": [{"id": "fake-judge", "object": "model"}]})
        else:
            self._send_json(404, _error_body(404, f"no route for GET {path}"))

    def do_POST(self) -> None:
        fake = self.server.fake
        parts = urlsplit(self.path)
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("not an object")
        except ValueError:
            fake._record(self, parts, None, "400_bad_json", 0)
            self._send_json(400, _error_body(400, "We could not parse the JSON body of your request."))
            return
        if not parts.path.rstrip("/").endswith("/chat/completions"):
            fake._record(self, parts, body, "404", 0)
            self._send_json(404, _error_body(404, f"Invalid URL (POST {parts.path})"))
            return
        if "response_format" in body and not fake.json_mode_supported:
            fake._record(self, parts, body, "400_response_format", 0)
            self._send_json(400, _error_body(
                400, "Unsupported parameter: 'response_format' is not supported by this server.",
                param="response_format"))
            return
        attempt = fake._next_attempt(body)
        reply = fake.behaviour(body, attempt)
        fake._record(self, parts, body, reply.kind, attempt)
        with fake._in_flight():
            self._answer(body, reply, parts.path)

    def _answer(self, body: dict[str, Any], reply: Reply, path: str) -> None:
        fake = self.server.fake
        delay = reply.delay
        if reply.kind == "slow" and delay <= 0:
            delay = DEFAULT_SLOW
        if reply.kind == "timeout" and delay <= 0:
            delay = DEFAULT_HOLD
        if delay > 0 and fake._stopping.wait(delay):
            self.close_connection = True
            return
        if reply.kind == "drop":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if reply.kind.isdigit():
            self._send_status(int(reply.kind), reply)
            return
        if reply.kind == "bad_body":
            self._send(200, b"<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html")
            return
        grade = reply.grade if reply.grade is not None else default_grade(body)
        model = str(body.get("model") or _deployment(path) or "fake-judge")
        self._send_json(200, _completion_body(body, reply, _content(reply, grade), model))

    def _send_status(self, status: int, reply: Reply) -> None:
        headers = dict(reply.headers)
        if reply.retry_after is not None:
            headers["Retry-After"] = f"{reply.retry_after:g}"
        message = {429: "Rate limit reached for requests. Please try again later.",
                   408: "Request timed out.", 400: "Invalid request."}.get(
            status, "The server had an error while processing your request. Sorry about that!")
        if reply.text is not None:
            self._send(status, reply.text.encode(), "application/json", headers)
        else:
            self._send_json(status, _error_body(status, message), headers)

    def _send_json(self, status: int, payload: object, headers: Mapping[str, str] | None = None) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json", headers)

    def _send(self, status: int, data: bytes, content_type: str, headers: Mapping[str, str] | None = None) -> None:
        self.send_response(status, STATUS_PHRASES.get(status))
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()


def _deployment(path: str) -> str | None:
    match = re.search(r"/deployments/([^/]+)/", path)
    return match.group(1) if match else None


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 512  # many clients connect at once; the default backlog of 5 refuses some

    def __init__(self, address: tuple[str, int], fake: FakeChatServer) -> None:
        self.fake = fake
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        self.fake._track(request, True)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        self.fake._track(request, False)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet about clients that went away (a client timeout, then our late reply); loud about the rest."""
        error = sys.exc_info()[1]
        if not isinstance(error, OSError):
            super().handle_error(request, client_address)


class FakeChatServer:
    """A chat-completions server on 127.0.0.1 in a background thread; see the module docstring.

    ``url`` is the base URL (ending in ``/v1``); ``behaviour`` may be replaced at any time; ``requests`` is a
    snapshot of the records so far.
    """

    def __init__(self, behaviour: Behaviour = default_behaviour, *, json_mode_supported: bool = True,
                 host: str = "127.0.0.1", port: int = 0) -> None:
        self.behaviour = behaviour
        self.json_mode_supported = json_mode_supported
        self._address = (host, port)
        self._lock = threading.Lock()
        self._records: list[RecordedRequest] = []
        self._attempts: dict[str, int] = {}
        self._active = 0
        self._max_active = 0
        self._connections: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._server: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -------------------------------------------------------------------------------- life cycle

    def start(self) -> FakeChatServer:
        """Bind and serve in a daemon thread."""
        self._stopping.clear()
        self._server = _HTTPServer(self._address, self)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.01},
                                        name="fake-chat-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, release held requests and close every open connection."""
        if self._server is None:
            return
        self._stopping.set()
        self._server.shutdown()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> FakeChatServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port."""
        if self._server is None:
            raise RuntimeError("the server is not started")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The base URL for OpenAI clients, ``http://127.0.0.1:<port>/v1``."""
        return f"http://{self._address[0]}:{self.port}/v1"

    # -------------------------------------------------------------------------------- inspection

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request recorded so far, in arrival order."""
        with self._lock:
            return list(self._records)

    def count(self, predicate: Callable[[RecordedRequest], bool] | None = None) -> int:
        """How many recorded requests satisfy ``predicate`` (all when None)."""
        records = self.requests
        return len(records) if predicate is None else sum(1 for record in records if predicate(record))

    def request_times(self) -> list[float]:
        """Arrival times (``time.monotonic()``) of the chat-completions requests, in order."""
        return [record.time for record in self.requests if record.path.endswith("/chat/completions")]

    def max_concurrency(self) -> int:
        """The most requests in flight at once: from the arrival of a body to the end of its reply or drop."""
        with self._lock:
            return self._max_active

    def reset(self) -> None:
        """Forget records, attempt counts and the concurrency maximum (the behaviour stays)."""
        with self._lock:
            self._records.clear()
            self._attempts.clear()
            self._max_active = self._active

    # -------------------------------------------------------------------------------- for the handler

    def _next_attempt(self, body: Mapping[str, Any]) -> int:
        key = _messages_key(body)
        with self._lock:
            self._attempts[key] = self._attempts.get(key, 0) + 1
            return self._attempts[key]

    def _record(self, handler: _Handler, parts: Any, body: dict[str, Any] | None, kind: str, attempt: int) -> None:
        headers = {name.lower(): value for name, value in handler.headers.items()}
        record = RecordedRequest(time.monotonic(), handler.command, parts.path, parts.query, headers, body,
                                 kind, attempt)
        with self._lock:
            self._records.append(record)

    def _in_flight(self) -> _InFlight:
        return _InFlight(self)

    def _track(self, connection: socket.socket, is_open: bool) -> None:
        with self._lock:
            if is_open:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)


class _InFlight:
    """Counts a request as in flight for the duration of a ``with`` block."""

    def __init__(self, fake: FakeChatServer) -> None:
        self._fake = fake

    def __enter__(self) -> None:
        fake = self._fake
        with fake._lock:
            fake._active += 1
            fake._max_active = max(fake._max_active, fake._active)

    def __exit__(self, *exc: object) -> None:
        with self._fake._lock:
            self._fake._active -= 1


def _serve_until_signalled(server: FakeChatServer) -> None:
    done = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: done.set())
    with server:
        print(server.url, flush=True)
        while not done.wait(0.2):
            pass


def main(argv: list[str] | None = None) -> int:
    """Run the server in this process until SIGTERM or SIGINT; the base URL is printed on stdout."""
    parser = argparse.ArgumentParser(description="Fake OpenAI-compatible chat-completions server for tests.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--grade-from-marker", action="store_true",
                        help="grade from a grade=N marker in the user message, else its length %% 5 (the default)")
    parser.add_argument("--no-json-mode", action="store_true", help="refuse response_format with a 400")
    parser.add_argument("--faults", default="", help="injected faults, e.g. 429=0.05,500=0.05,drop=0.05,malformed=0.05")
    parser.add_argument("--seed", type=int, default=0, help="seed of the fault draws")
    parser.add_argument("--retry-after", type=float, default=0.05, help="Retry-After of injected 429s (seconds)")
    parser.add_argument("--slow-delay", type=float, default=0.2, help="delay of injected slow answers (seconds)")
    parser.add_argument("--hold", type=float, default=DEFAULT_HOLD, help="hold of injected timeouts (seconds)")
    args = parser.parse_args(argv)
    behaviour: Behaviour = default_behaviour
    if args.faults:
        behaviour = fault_behaviour(parse_faults(args.faults), seed=args.seed, retry_after=args.retry_after,
                                    slow_delay=args.slow_delay, hold=args.hold)
    _serve_until_signalled(FakeChatServer(behaviour, json_mode_supported=not args.no_json_mode,
                                          host=args.host, port=args.port))
    return 0


if __name__ == "__main__":
    sys.exit(main())
