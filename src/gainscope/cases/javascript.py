"""Quepid JavaScript scorers, run unchanged in V8 (mini-racer), each in a worker process of its own.

Why V8 through mini-racer (``pip install 'gainscope[quepid]'``) rather than QuickJS: it is the engine Quepid
itself runs scorers in (Chrome in the browser, the MiniRacer gem on the server), so number formatting,
``Math`` functions and language features match what users see in Quepid; mini-racer ships binary wheels, has
a per-call time limit and a heap limit built in, and a bare V8 context has no file, network, timer or process
API at all. Only the worker processes import it.

The sandbox:

* **a process per scorer** (:mod:`gainscope.cases.js_process`, :mod:`gainscope.cases.js_worker`): V8 aborts
  the whole process when an allocation cannot be satisfied (``'ab'.repeat(2**27).split('')``,
  ``new Array(1e9).fill(0)``), and some built-in calls do not check its time limit; in a worker that ends the
  worker, and the scorer gets a :class:`~gainscope.cases.errors.ScorerError` naming the query, while gainscope
  and every other scorer go on. A worker is reused for the queries of a scorer (and, idle, by later scorers);
* **an isolate per query**: every query runs in a V8 isolate of its own, so nothing a script does to one query
  (globals, ``Array.prototype`` or ``Math`` changed, promises left pending) reaches the next or the harness;
  the promise jobs a script queues run within its query (a promise chain that never ends is that query's
  time limit);
* **no host access**: nothing is exposed to the script but Quepid's scorer API (see
  :mod:`gainscope.cases.quepid_api_js`); ``require``, ``fetch``, ``XMLHttpRequest``, ``process``,
  ``setTimeout`` do not exist and ``WebAssembly`` is removed;
* **time limit** per query (``time_limit`` seconds, default 1): V8 stops the script at the limit with a
  ScorerError naming the query and the limit; when it does not stop (one long built-in call), its process is
  killed half a second later, with the same error;
* **memory limit** (``memory_limit`` bytes, default 128 MiB): the V8 heap is limited to it (an allocation loop
  stops with an error), and so, separately, are the typed arrays and ArrayBuffers a query allocates, whose
  memory lies outside the heap (a running total per query that refuses an allocation with a RangeError naming
  the line). Behind both, the worker's resident memory is capped at its starting size plus twice the limit plus
  256 MiB (the worker is killed past it), and V8's own heap ceiling ends the worker on a single allocation too
  large to check. The typed-array budget stays, although the cap would stop such a script too: it names the
  line where the cap can only kill the process;
* **errors quote the script**: syntax errors (found before any query runs, by compiling the script without
  running it) and exceptions name the script, the line and the column, and quote the line.

What a script gives: ``setScore(x)`` (the first of ``setScore``/``pass``/``fail`` wins, as in Quepid);
``null``, ``undefined``, NaN or an infinity give no number (only ``null`` lets a query without results or
ratings be labelled ``zsr`` or ``--``, as in Quepid; see :mod:`gainscope.cases.scoring`); a string or object
is an error; finishing without any of them is an error ("did not call setScore()"). An exception *after* the
score was set keeps the score (Quepid shows it too) and is reported in the query's reason.

``editDistanceFromBest`` is Quepid's shipped distance (``edit_distance="quepid-legacy"``, the default: a
scorer run here gives Quepid's number); ``edit_distance="levenshtein"`` (``--edit-distance levenshtein``)
makes it the true Levenshtein distance. See :mod:`gainscope.metrics.edit_distance`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gainscope.cases.errors import ScorerError
from gainscope.cases.js_process import KILL_SLACK, SETUP_TIMEOUT, Reply, WorkerProcess, acquire, release
from gainscope.cases.quepid_api_js import CHECK_FUNCTION, CHECKED_MARKER, HARNESS
from gainscope.cases.scale import RatingScale
from gainscope.cases.scorers import ScorerResult
from gainscope.cases.view import QueryView
from gainscope.errors import InputError, InvalidParameterError
from gainscope.metrics.edit_distance import EDIT_DISTANCES

__all__ = ["DEFAULT_EDIT_DISTANCE", "DEFAULT_MEMORY_LIMIT", "DEFAULT_TIME_LIMIT", "JavaScriptRuntime",
           "JavaScriptScorer"]

DEFAULT_TIME_LIMIT = 1.0
DEFAULT_MEMORY_LIMIT = 128 * 1024 * 1024
DEFAULT_EDIT_DISTANCE = "quepid-legacy"
"""What ``editDistanceFromBest`` computes in a JavaScript scorer unless told otherwise: Quepid's own."""
_MESSAGE = re.compile(r"^(undefined|<anonymous>):(\d+): (.*)$")
_MiB = 1024 * 1024


def view_payload(view: QueryView, edit_distance: str, buffer_budget: int = DEFAULT_MEMORY_LIMIT, *,
                 scorer: str = "scorer.js", uncaught: bool = False) -> str:
    """The JSON the harness reads for one query (``buffer_budget``: bytes of typed arrays and ArrayBuffers the
    query may allocate). ``ratings`` is every rating as the case holds it, in the case's order: the harness
    builds Quepid's ratings store (``bestDocs``, ``hasRating``, ``getRating``) from it."""
    return json.dumps({
        "query": view.query,
        "results": list(view.doc_ids),
        "ratings": view.all_ratings(),
        "numFound": view.num_found,
        "options": dict(view.options),
        "scale": list(view.scale.values),
        "name": scorer,
        "editDistance": edit_distance,
        "bufferBudget": buffer_budget,
        **({"uncaught": True} if uncaught else {}),
    })


class JavaScriptRuntime:
    """A worker process with Quepid's scorer API, for one scorer at a time; use as a context manager (the worker
    goes back to the pool, or ends, on :meth:`close`). A worker that a limit stopped is replaced at the next
    call."""

    def __init__(self, *, time_limit: float = DEFAULT_TIME_LIMIT, memory_limit: int = DEFAULT_MEMORY_LIMIT) -> None:
        self.time_limit = time_limit
        self.memory_limit = memory_limit
        self._worker: WorkerProcess | None = None
        self._ready()  # now: a missing mini-racer is reported before anything else happens

    def _ready(self) -> WorkerProcess:
        """The worker, started (or taken from the pool, with a fresh scratch context) when there is none."""
        if self._worker is not None and self._worker.usable:
            return self._worker
        if self._worker is not None:
            self._worker.close()
        worker, reused = acquire(self.memory_limit, HARNESS)
        if reused and not worker.request({"op": "reset", "limit": SETUP_TIMEOUT}, timeout=SETUP_TIMEOUT).ok:
            worker.close()
            worker = WorkerProcess(self.memory_limit, HARNESS)
        self._worker = worker
        return worker

    def close(self) -> None:
        """Hand the worker back (kept idle for a later scorer when it is healthy)."""
        if self._worker is not None:
            release(self._worker)
            self._worker = None

    def __enter__(self) -> JavaScriptRuntime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _request(self, message: dict[str, Any]) -> Reply:
        """A request to the scratch context, within the time limit."""
        worker = self._ready()
        return worker.request({**message, "limit": self.time_limit}, timeout=self.time_limit + KILL_SLACK)

    def eval(self, expression: str) -> Any:
        """Evaluate an expression in the worker's scratch context (used by tests to inspect the environment)."""
        reply = self._request({"op": "eval", "code": expression})
        if not reply.ok:
            raise ScorerError(f"evaluating {expression[:80]!r} failed: {_reply_text(reply)}")
        return reply.value

    def check_syntax(self, code: str, name: str) -> None:
        """Compile ``code`` without running it, as Quepid runs it (strict code evaluated with ``eval``: a
        top-level ``return`` is an error); a syntax error becomes a ScorerError quoting the line.

        Nothing of the script runs: it is parsed behind a first statement that throws before the script's
        first statement (see ``__gs_check`` in :mod:`~gainscope.cases.quepid_api_js`).
        """
        reply = self._request({"op": "call", "function": CHECK_FUNCTION, "args": [code]})
        if reply.kind == "js":
            first = reply.message.splitlines()[0] if reply.message else ""
            if first.endswith(f": {CHECKED_MARKER}"):
                return  # parsed: the marker was thrown before the script's first statement
            raise _syntax_error(reply.message, code, name, offset=1)
        if reply.ok:
            raise ScorerError("the syntax check ran to its end, which it never should; the scorer runtime is "
                              "broken", scorer=name)
        raise ScorerError(f"compiling the script hit the sandbox's limits ({_reply_text(reply)})", scorer=name)

    def run(self, code: str, view: QueryView, *, name: str,
            edit_distance: str = DEFAULT_EDIT_DISTANCE) -> ScorerResult:
        """Run the script for one query."""
        payload = view_payload(view, edit_distance, self.memory_limit, scorer=name)
        reply = self._ready().run(payload, code, limit=self.time_limit, memory=self.memory_limit)
        if reply.kind == "js":
            raise ScorerError(f"the script broke the scorer runtime: {reply.message.splitlines()[0]}", scorer=name,
                              query=view.query)
        if not reply.ok:
            raise self._limit_error(reply, name, view.query)
        state = _parse_state(reply.value)
        if not state:
            raise ScorerError("the script broke the scorer runtime (did it replace a built-in?)", scorer=name,
                              query=view.query)
        error = state.get("error") or {}
        if not state.get("done") and error.get("thrown"):
            error.update(self._locate_throw(code, view, edit_distance, name))
        return _result(state, code, name, view.query)

    def _limit_error(self, reply: Reply, name: str, query: str) -> ScorerError:
        """The error for a query that a limit stopped or whose worker died; the worker is replaced later."""
        mib = self.memory_limit // _MiB
        limit = f"{self.time_limit:g} s"
        if reply.kind == "timeout" and reply.phase == "promises":
            last = _parse_state(reply.last)
            text = (f"the promise jobs the script left (then callbacks, async functions) did not finish within "
                    f"the time limit of {limit} (a promise chain that never ends?)"
                    + (" (it had set its score already)" if last.get("done") else ""))
        elif reply.kind == "timeout":
            last = _parse_state(reply.last)
            text = f"the script did not finish within the time limit of {limit} (an endless loop?); " \
                   f"{_where_it_stopped(last)}"
        elif reply.kind == "killed-time":
            text = (f"the script did not finish within the time limit of {limit}, and did not stop when V8 was "
                    f"told to (some work does not check the limit: one long built-in call, such as splitting or "
                    f"filling a huge array, or garbage collection near the memory limit): its worker process was "
                    f"killed after {reply.seconds:.1f} s")
        elif reply.kind == "memory":
            return ScorerError(f"the script went over the memory limit of {mib} MiB; raise it with memory_limit= "
                               f"/ --js-memory-limit", scorer=name, query=query)
        elif reply.kind == "killed-memory":
            return ScorerError(f"the script's worker process grew to {reply.rss // _MiB} MiB, past its cap (the "
                               f"memory limit of {mib} MiB for the heap and as much for typed arrays, plus the "
                               f"worker's own), and was killed; raise the limit with memory_limit= / "
                               f"--js-memory-limit", scorer=name, query=query)
        elif reply.kind == "died":
            return ScorerError(f"the script's worker process died ({reply.message}): V8 ends the process when an "
                               f"allocation cannot be satisfied, so the script most likely asked for more than "
                               f"the memory limit of {mib} MiB at once (a huge array or string); raise it with "
                               f"memory_limit= / --js-memory-limit if the script needs it", scorer=name,
                               query=query)
        else:
            return ScorerError(f"the scorer runtime failed: {_reply_text(reply)}", scorer=name, query=query)
        return ScorerError(f"{text}; raise the limit with time_limit= / --js-time-limit", scorer=name, query=query)

    def _locate_throw(self, code: str, view: QueryView, edit_distance: str, name: str) -> dict[str, Any]:
        """The line and column of a thrown value that is not an Error (it has no stack): the query is run again
        with the value left uncaught, and V8's message names the line of the throw."""
        payload = view_payload(view, edit_distance, self.memory_limit, scorer=name, uncaught=True)
        reply = self._ready().run(payload, code, limit=self.time_limit, memory=self.memory_limit)
        if reply.kind == "js":
            where = _message_location(reply.message)
            if where is not None and where[0] == "undefined":  # the script's eval, not the harness
                return {"line": where[1], "column": where[2]}
        return {}


def _reply_text(reply: Reply) -> str:
    """A failed reply in words."""
    words = {"timeout": "the time limit", "memory": "the memory limit", "killed-time": "no answer in time",
             "killed-memory": "the memory cap", "died": "the worker died", "protocol": "an unreadable answer"}
    text = words.get(reply.kind, reply.kind)
    return f"{text}: {reply.message}" if reply.message else text


def _parse_state(text: str | None) -> dict[str, Any]:
    """A query's state as reported after a time limit (empty when unreadable)."""
    try:
        state = json.loads(text) if text else {}
    except (TypeError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def _quote(code: str, line: int | None) -> str | None:
    lines = code.splitlines()
    if line is None or not 1 <= line <= len(lines):
        return None
    return lines[line - 1]


def _message_location(message: str) -> tuple[str, int, int | None, str] | None:
    """``(script, line, column, text)`` from V8's message as mini-racer words it: ``SCRIPT:LINE: TEXT``, then
    the source line and a caret line (``^`` under the column). ``SCRIPT`` is ``undefined`` for code run with
    ``eval``, ``<anonymous>`` for the harness."""
    first, *rest = message.splitlines() or [""]
    m = _MESSAGE.match(first)
    if not m:
        return None
    column = None
    if len(rest) >= 2 and "^" in rest[1]:
        column = rest[1].index("^") + 1
    return m.group(1), int(m.group(2)), column, m.group(3)


def _syntax_error(message: str, code: str, name: str, *, offset: int) -> ScorerError:
    """A ScorerError for V8's message about a syntax error ``offset`` lines below the script's first line."""
    where = _message_location(message)
    if where is None:
        return ScorerError(f"cannot compile the script: {message.splitlines()[0] if message else message}",
                           scorer=name)
    _, line, column, text = where
    line -= offset
    source = _quote(code, line)
    if source is None:  # the error is at the end of the script (an unclosed brace or string)
        lines = code.splitlines()
        line, source, column = len(lines), (lines[-1] if lines else ""), None
        text += " (at the end of the script: is a bracket, brace or string left open?)"
    return ScorerError(text, scorer=name, line=line, column=column, source_line=source)


def _where_it_stopped(last: dict[str, Any]) -> str:
    """What is known of where a script stopped by the time limit was."""
    text = "V8 stops a script without saying where, so no line is known"
    logs = last.get("logs") or []
    if logs:
        text += f"; its last console output was {str(logs[-1])[:200]!r}"
    if last.get("done"):
        text += " (it had set its score already)"
    return text


RATED_DOCS_NOTE = ("the script read Quepid's 'show only rated' documents (eachRatedDoc, ratedDocAt, "
                   "ratedDocExistsAt, query.ratedDocs or refreshRatedDocs): they come from a second search, which a "
                   "stored case does not hold, so they held none, as in Quepid until 'show only rated' is used")


def _result(state: dict[str, Any], code: str, name: str, query: str) -> ScorerResult:
    logs = tuple(state.get("logs") or ())
    depth = state.get("depth")
    depth = int(depth) if isinstance(depth, (int, float)) and math.isfinite(depth) else None
    error = state.get("error")
    score: dict[str, Any] = state.get("score") or {}
    if not state.get("done"):
        if error:
            raise _runtime_error(error, code, name, query)
        raise ScorerError("the script finished without calling setScore(), pass() or fail()", scorer=name,
                          query=query)
    notes = []
    if error:
        what = f"{error['thrown']} {error['message']}" if error.get("thrown") else \
            f"{error['name']}: {error['message']}"
        notes.append(f"the script went on after setting its score and then threw {what}"
                     + (f" at line {error['line']}" if error.get("line") else ""))
    if state.get("ratedDocs"):
        notes.append(RATED_DOCS_NOTE)
    reason = "; ".join(notes) or None
    if state.get("failed"):
        return ScorerResult(None, failed=True, reason=reason or "fail()", depth=depth, logs=logs)
    kind = score["kind"]
    if kind == "number":
        return ScorerResult(float(score["value"]), reason=reason, depth=depth, logs=logs)
    if kind in ("null", "undefined", "nan", "infinite"):
        why = f"setScore({score['text']})"
        return ScorerResult(None, reason=why if reason is None else f"{why}; {reason}", depth=depth, logs=logs,
                            null=kind == "null")
    at = state.get("at") or {}
    raise ScorerError(f"setScore() needs a number; got {score['type']} {score['text']}", scorer=name, query=query,
                      line=at.get("line"), column=at.get("column"), source_line=_quote(code, at.get("line")))


_NOT_DEFINED = re.compile(r"^(\S+) is not defined$")
_PAGE = {"angular": "AngularJS", "$q": "AngularJS", "$timeout": "AngularJS", "window": "the browser",
         "document": "the browser", "$": "jQuery", "jQuery": "jQuery"}


def _runtime_error(error: dict[str, Any], code: str, name: str, query: str) -> ScorerError:
    line = error.get("line")
    source = _quote(code, line)
    if error.get("thrown"):
        text = (f"the script threw {error['thrown']}, not an Error: {error['message']} (throw new Error(...) "
                f"carries a message and a stack)")
    else:
        text = f"{error['name']}: {error['message']}"
        undefined = _NOT_DEFINED.match(str(error["message"])) if error["name"] == "ReferenceError" else None
        if undefined and undefined.group(1) in _PAGE:
            text += (f" ({undefined.group(1)} belongs to {_PAGE[undefined.group(1)]} on Quepid's page, not to "
                     f"Quepid's scorer API, which is all a scorer gets here)")
        elif undefined and source is not None and re.search(
                rf"(?<![\w$.]){re.escape(undefined.group(1))}\s*(?:[-+*/%&|^]|\*\*|<<|>>>?|&&|\|\||\?\?)?=(?!=)",
                source):
            text += (" (scorers run in strict mode, as in Quepid: declare a variable with var, let or const "
                     "before assigning it)")
    return ScorerError(text, scorer=name, query=query, line=line, column=error.get("column"), source_line=source)


class JavaScriptScorer:
    """A Quepid scorer script (see the module docstring).

    ``scale`` is the scorer's rating scale when the case names none; ``edit_distance`` the variant behind
    ``editDistanceFromBest`` (``quepid-legacy``, Quepid's own, unless ``levenshtein`` is asked for);
    ``time_limit`` (seconds per query) and ``memory_limit`` (bytes) bound the sandbox.
    """

    def __init__(self, code: str, *, name: str = "scorer.js", scale: RatingScale | None = None,
                 edit_distance: str = DEFAULT_EDIT_DISTANCE, time_limit: float = DEFAULT_TIME_LIMIT,
                 memory_limit: int = DEFAULT_MEMORY_LIMIT) -> None:
        if not isinstance(code, str):
            raise InputError(f"a JavaScript scorer is text; got {type(code).__name__}")
        if edit_distance not in EDIT_DISTANCES:
            raise InvalidParameterError(f"edit_distance must be one of {', '.join(EDIT_DISTANCES)}; "
                                        f"got {edit_distance!r}")
        if not time_limit > 0:
            raise InvalidParameterError(f"time_limit must be > 0 seconds; got {time_limit!r}")
        if memory_limit < 8 * 1024 * 1024:
            raise InvalidParameterError(f"memory_limit must be at least 8 MiB; got {memory_limit} bytes")
        self.code = code
        self._name = name
        self.scale = scale
        self.edit_distance = edit_distance
        self.time_limit = time_limit
        self.memory_limit = memory_limit

    @classmethod
    def from_file(cls, path: str | Path, **options: Any) -> JavaScriptScorer:
        """Read a scorer script (UTF-8)."""
        p = Path(path)
        try:
            code = p.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError(f"{p}: a scorer script must be UTF-8 ({exc.reason} at byte {exc.start})") from None
        return cls(code, name=str(p), **options)

    @property
    def name(self) -> str:
        return self._name

    @property
    def default_scale(self) -> RatingScale | None:
        return self.scale

    @property
    def depth(self) -> int | None:
        return None

    @property
    def conventions(self) -> tuple[str, ...]:
        distance = ("Quepid's shipped distance, as Quepid computes it (edit_distance='levenshtein' / "
                    "--edit-distance levenshtein for the true Levenshtein distance)"
                    if self.edit_distance == "quepid-legacy" else
                    "the true Levenshtein distance, asked for (Quepid computes its shipped distance)")
        return (
            "JavaScript scorer run unchanged in V8 (mini-racer) with gainscope's implementation of Quepid's "
            "scorer API, in strict mode as in Quepid; sandboxed: a worker process, a V8 isolate per query, no "
            "file, network or process access",
            f"limits: {self.time_limit:g} s per query, {self.memory_limit // _MiB} MiB of heap and as much for "
            f"typed arrays and ArrayBuffers",
            f"editDistanceFromBest: {self.edit_distance}: {distance}",
        )

    @contextmanager
    def runtime(self) -> Iterator[JavaScriptRuntime]:
        """A runtime with the script's syntax checked, closed on exit."""
        with JavaScriptRuntime(time_limit=self.time_limit, memory_limit=self.memory_limit) as rt:
            rt.check_syntax(self.code, self.name)
            yield rt

    def check(self) -> None:
        """Raise a ScorerError when the script does not compile."""
        with self.runtime():
            pass

    def score_all(self, views: Sequence[QueryView]) -> list[ScorerResult]:
        with self.runtime() as rt:
            return [rt.run(self.code, v, name=self.name, edit_distance=self.edit_distance) for v in views]
