"""Quepid JavaScript scorers, run unchanged in an embedded V8 engine (mini-racer), sandboxed.

Why V8 through mini-racer (``pip install 'gainscope[quepid]'``) rather than QuickJS: it is the engine Quepid
itself runs scorers in (Chrome in the browser, the MiniRacer gem on the server), so number formatting,
``Math`` functions and language features match what users see in Quepid; mini-racer ships binary wheels,
has a per-call time limit and a heap limit built in, and a bare V8 context has no file, network, timer or
process API at all. It is imported only when a JavaScript scorer runs.

The sandbox:

* **no host access**: nothing is exposed to the script but Quepid's scorer API (see
  :mod:`gainscope.cases.quepid_api_js`); ``require``, ``fetch``, ``XMLHttpRequest``, ``process``,
  ``setTimeout`` do not exist;
* **time limit** per query (``time_limit`` seconds, default 1): an endless loop stops with a
  :class:`~gainscope.cases.errors.ScorerError` naming the query and the limit;
* **memory limit** (``memory_limit`` bytes, default 128 MiB): the V8 heap is limited to it (an allocation loop
  stops likewise), and so, separately, are the typed arrays and ArrayBuffers a query allocates, whose memory
  lies outside the heap: a running total per query (never refunded within the query; slice, map and filter
  may be counted twice, a conservative bound) that refuses an allocation with a RangeError naming the line;
  ``WebAssembly`` and ``SharedArrayBuffer`` are removed. So a query uses at most about twice the limit;
* **errors quote the script**: syntax errors (found before any query runs) and exceptions name the script,
  the line and the column, and quote the line.

What a script gives: ``setScore(x)`` (the first of ``setScore``/``pass``/``fail`` wins, as in Quepid);
``null``, ``undefined``, NaN or an infinity give no number (only ``null`` lets a query without results or
ratings be labelled ``zsr`` or ``--``, as in Quepid; see :mod:`gainscope.cases.scoring`); a string or object
is an error; finishing without
any of them is an error ("did not call setScore()"). An exception *after* the score was set keeps the score
(Quepid shows it too) and is reported in the query's reason.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gainscope.cases.edit_distance import EDIT_DISTANCES
from gainscope.cases.errors import ScorerError
from gainscope.cases.quepid_api_js import (
    CHECK_FUNCTION,
    CHECKED_MARKER,
    HARNESS,
    LAST_FUNCTION,
    RUN_FUNCTION,
    STRICT_FUNCTION,
)
from gainscope.cases.scale import RatingScale
from gainscope.cases.scorers import ScorerResult
from gainscope.cases.view import QueryView
from gainscope.errors import InputError, InvalidParameterError, MissingDependencyError

__all__ = ["DEFAULT_MEMORY_LIMIT", "DEFAULT_TIME_LIMIT", "JavaScriptRuntime", "JavaScriptScorer"]

DEFAULT_TIME_LIMIT = 1.0
DEFAULT_MEMORY_LIMIT = 128 * 1024 * 1024
_MESSAGE = re.compile(r"^(undefined|<anonymous>):(\d+): (.*)$")


def _mini_racer() -> Any:
    try:
        import py_mini_racer
    except ImportError:
        raise MissingDependencyError(
            "JavaScript scorers need the V8 engine from mini-racer; install it with "
            "pip install 'gainscope[quepid]' (or pip install mini-racer)") from None
    return py_mini_racer


def view_payload(view: QueryView, edit_distance: str, buffer_budget: int = DEFAULT_MEMORY_LIMIT) -> str:
    """The JSON the harness reads for one query (``buffer_budget``: bytes of typed arrays and ArrayBuffers the
    query may allocate)."""
    return json.dumps({
        "docs": [{"id": d, "rating": r} for d, r in zip(view.doc_ids, view.ratings, strict=True)],
        "best": [{"id": d, "rating": r} for d, r in view.best],
        "numFound": view.num_found,
        "options": dict(view.options),
        "max": view.scale_max,
        "editDistance": edit_distance,
        "bufferBudget": buffer_budget,
    })


class JavaScriptRuntime:
    """One sandboxed V8 context with Quepid's scorer API loaded; use as a context manager (the context must
    be closed, which :meth:`close` does)."""

    def __init__(self, *, time_limit: float = DEFAULT_TIME_LIMIT, memory_limit: int = DEFAULT_MEMORY_LIMIT) -> None:
        self._mr = _mini_racer()
        self.time_limit = time_limit
        self.memory_limit = memory_limit
        self._ctx: Any = None
        self._open()

    def _open(self) -> None:
        self._ctx = self._mr.MiniRacer()
        self._ctx.eval(HARNESS)

    def close(self) -> None:
        """Release the V8 context."""
        if self._ctx is not None:
            self._ctx.close()
            self._ctx = None

    def __enter__(self) -> JavaScriptRuntime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def eval(self, expression: str) -> Any:
        """Evaluate an expression in the sandbox (used by tests to inspect the environment)."""
        return self._ctx.eval(expression, timeout_sec=self.time_limit, max_memory=self.memory_limit)

    def check_syntax(self, code: str, name: str) -> None:
        """Compile ``code`` without running it, as Quepid runs it (a script evaluated with ``eval``: a top-level
        ``return`` is an error); a syntax error becomes a ScorerError quoting the line.

        Nothing of the script runs: it is compiled as the body of a function that is never called (which also
        tells whether it opens with ``"use strict"``), then parsed as a script behind a first statement that
        throws before the script's first statement (see ``__gs_check`` in :mod:`~gainscope.cases.quepid_api_js`).
        """
        try:
            strict = bool(self._call(STRICT_FUNCTION, code, name=name))
        except self._mr.JSEvalException as exc:
            # not a function body: the script check says where (sloppy, then strict: a strict-only error in a
            # script that opens with "use strict"); else V8's word for the body, two lines below the script's
            # (new Function puts "(function anonymous(" and ") {" before it)
            for mode in (False, True):
                self._check_script(code, name, mode)
            raise _syntax_error(str(exc), code, name, offset=2) from None
        self._check_script(code, name, strict)

    def _call(self, function: str, *args: Any, name: str) -> Any:
        """Call a harness function for the syntax check; the sandbox's limits become a ScorerError."""
        try:
            return self._ctx.call(function, *args, timeout_sec=self.time_limit, max_memory=self.memory_limit)
        except (self._mr.JSTimeoutException, self._mr.JSOOMException) as exc:
            self._restart()
            raise ScorerError(f"compiling the script hit the sandbox's limits ({exc})", scorer=name) from None

    def _check_script(self, code: str, name: str, strict: bool) -> None:
        """Parse ``code`` as a script (``__gs_check``); a syntax error becomes a ScorerError."""
        try:
            self._call(CHECK_FUNCTION, code, strict, name=name)
        except self._mr.JSEvalException as exc:
            first = str(exc).splitlines()[0] if str(exc) else ""
            if first.endswith(f": {CHECKED_MARKER}"):
                return  # parsed: the marker was thrown before the script's first statement
            raise _syntax_error(str(exc), code, name, offset=1) from None
        raise ScorerError("the syntax check ran to its end, which it never should; the scorer runtime is broken",
                          scorer=name)

    def _restart(self) -> None:
        """A fresh context after a time or memory limit. The stopped call's completion is drained first (a
        trivial evaluation queues behind it), so that it never reaches a closed context."""
        try:
            self._ctx.eval("0", timeout_sec=5)
        except self._mr.JSEvalException:
            pass
        self.close()
        self._open()

    def run(self, code: str, view: QueryView, *, name: str, edit_distance: str = "levenshtein") -> ScorerResult:
        """Run the script for one query."""
        payload = view_payload(view, edit_distance, self.memory_limit)
        try:
            text = self._ctx.call(RUN_FUNCTION, payload, code, timeout_sec=self.time_limit,
                                  max_memory=self.memory_limit)
        except self._mr.JSTimeoutException:
            last = self._last_state()
            self._restart()
            raise ScorerError(f"the script did not finish within the time limit of {self.time_limit:g} s "
                              f"(an endless loop?); {_where_it_stopped(last)}; raise the limit with time_limit= / "
                              f"--js-time-limit", scorer=name, query=view.query) from None
        except self._mr.JSOOMException:
            self._restart()
            raise ScorerError(f"the script went over the memory limit of {self.memory_limit // (1024 * 1024)} MiB;"
                              f" raise it with memory_limit= / --js-memory-limit", scorer=name,
                              query=view.query) from None
        except self._mr.JSEvalException as exc:
            raise ScorerError(f"the script broke the scorer runtime: {str(exc).splitlines()[0]}", scorer=name,
                              query=view.query) from None
        try:
            state = json.loads(text)
        except (TypeError, ValueError):
            raise ScorerError("the script broke the scorer runtime (did it replace JSON or a built-in?)",
                              scorer=name, query=view.query) from None
        error = state.get("error") or {}
        if not state.get("done") and error.get("thrown"):
            error.update(self._locate_throw(code, payload))
        return _result(state, code, name, view.query)

    def _last_state(self) -> dict[str, Any]:
        """What the query stopped by a time limit had logged and set (empty when it cannot be read)."""
        try:
            self._ctx.eval("0", timeout_sec=5)  # the stopped call's completion first
            state = json.loads(self._ctx.call(LAST_FUNCTION, timeout_sec=1))
        except (self._mr.JSEvalException, TypeError, ValueError):
            return {}
        return state if isinstance(state, dict) else {}

    def _locate_throw(self, code: str, payload: str) -> dict[str, Any]:
        """The line and column of a thrown value that is not an Error (it has no stack): the query is run again
        with the value left uncaught, and V8's message names the line of the throw."""
        rerun = json.dumps({**json.loads(payload), "uncaught": True})
        try:
            self._ctx.call(RUN_FUNCTION, rerun, code, timeout_sec=self.time_limit, max_memory=self.memory_limit)
        except (self._mr.JSTimeoutException, self._mr.JSOOMException):
            self._restart()
        except self._mr.JSEvalException as exc:
            where = _message_location(str(exc))
            if where is not None and where[0] == "undefined":  # the script's eval, not the harness
                return {"line": where[1], "column": where[2]}
        return {}


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
    reason = None
    if error:
        what = f"{error['thrown']} {error['message']}" if error.get("thrown") else \
            f"{error['name']}: {error['message']}"
        reason = (f"the script went on after setting its score and then threw {what}"
                  + (f" at line {error['line']}" if error.get("line") else ""))
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


def _runtime_error(error: dict[str, Any], code: str, name: str, query: str) -> ScorerError:
    line = error.get("line")
    if error.get("thrown"):
        text = (f"the script threw {error['thrown']}, not an Error: {error['message']} (throw new Error(...) "
                f"carries a message and a stack)")
    else:
        text = f"{error['name']}: {error['message']}"
    return ScorerError(text, scorer=name, query=query, line=line, column=error.get("column"),
                       source_line=_quote(code, line))


class JavaScriptScorer:
    """A Quepid scorer script (see the module docstring).

    ``scale`` is the scorer's rating scale when the case names none; ``edit_distance`` the variant behind
    ``editDistanceFromBest``; ``time_limit`` (seconds per query) and ``memory_limit`` (bytes) bound the sandbox.
    """

    def __init__(self, code: str, *, name: str = "scorer.js", scale: RatingScale | None = None,
                 edit_distance: str = "levenshtein", time_limit: float = DEFAULT_TIME_LIMIT,
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
        return (
            "JavaScript scorer run unchanged in V8 (mini-racer) with gainscope's implementation of Quepid's "
            "scorer API; sandboxed: no file, network or process access",
            f"limits: {self.time_limit:g} s per query, {self.memory_limit // (1024 * 1024)} MiB of heap and as "
            f"much for typed arrays and ArrayBuffers",
            f"editDistanceFromBest: {self.edit_distance}",
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
