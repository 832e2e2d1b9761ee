"""The process that runs Quepid JavaScript scorers: V8 (mini-racer) outside gainscope's own process.

:mod:`gainscope.cases.js_process` starts it as ``python -P js_worker.py HEAP_MIB`` (the file, not the module:
it needs nothing but the standard library and mini-racer, and does not import gainscope) and talks to it over
its standard input and output, one JSON object per line each way. Whatever V8 or Python print goes to
standard error, which the parent keeps the end of to explain a death.

A V8 fatal error (an allocation that cannot be satisfied aborts the whole process), a built-in call that
ignores V8's time limit, or memory past the cap end this process only; the parent sees that, names the
scorer and the query, and starts another worker when it needs one.

Requests (``op``) and replies::

    {"op": "start", "harness": JS}               -> {"ok": {"pid", "rss", "v8"}}   (the first request)
    {"op": "reset", "limit": S}                  -> {"ok": null}   a new scratch context (harness loaded)
    {"op": "eval", "code": JS, "limit": S}       -> {"ok": VALUE}  evaluated in the scratch context
    {"op": "call", "function": NAME, "args": [...], "limit": S}  -> {"ok": VALUE}   likewise
    {"op": "run", "payload": JSON, "code": JS, "limit": S, "memory": BYTES}
         -> {"started": true}, then {"ok": STATE_JSON}   one query, in a V8 isolate of its own

A failure replies ``{"fail": KIND, "message": TEXT, "last": STATE_JSON | null, "phase": PHASE}`` with ``KIND``
one of ``js`` (an exception or a syntax error: V8's message), ``timeout`` (V8 stopped the script at the limit;
``last`` is what the query had logged and set) and ``memory`` (V8's heap limit); ``PHASE`` says whether the
script itself (``script``) or the promise jobs it left (``promises``) were running. After ``timeout`` or ``memory`` the
worker exits: a stopped isolate may still be busy, so the parent starts a fresh worker.

One query, one isolate: ``run`` takes a fresh V8 isolate with the harness loaded (made ahead, while the query
before ran), calls ``__gs_run`` (which runs the script), then ``__gs_finish`` (V8 runs the promise jobs the
script queued between the two calls, so a score set in a ``then`` counts, and a promise chain that never ends
uses up this query's time limit), and hands the isolate over to be disposed of. Nothing of a query (globals,
changed built-ins such as ``Array.prototype`` or ``Math``, pending promises) can reach the next one. The
scratch context only ever runs the harness's own functions (the syntax check, which compiles without running)
and what ``eval`` is given.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import signal
import sys
import threading
import time
from typing import Any, TextIO

# V8's own heap ceiling sits this far above the scorer's memory limit, so that the limit (a clean error, the
# worker lives on) comes first and V8's fatal out-of-memory (the worker dies) only for a single huge allocation
_HEAP_SLACK_MIB = 64


def _rss() -> int | None:
    """This process's resident memory in bytes (Linux), else None."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _watch_parent() -> None:
    """End this process when the parent is gone (a parent killed while V8 is busy cannot close the pipe)."""
    parent = os.getppid()
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(0)


class Isolates:
    """Fresh V8 isolates with the harness loaded, made one ahead on a thread of their own (making one is most of
    a query's cost, and it overlaps with the query before), and disposed of there once used."""

    def __init__(self, make: Any) -> None:
        self._make = make
        self._ready: queue.Queue[Any] = queue.Queue(maxsize=1)
        self._used: queue.Queue[Any] = queue.Queue()
        threading.Thread(target=self._work, daemon=True).start()

    def _work(self) -> None:
        while True:
            try:
                while True:
                    self._used.get_nowait().__exit__(None, None, None)
            except queue.Empty:
                pass
            try:
                made = self._make()
            except Exception as exc:  # handed to the query that needs the isolate
                made = exc
            self._ready.put(made)  # waits while one is ready and unused
            if isinstance(made, Exception):
                return

    def take(self) -> tuple[Any, Any]:
        """``(context manager, MiniRacer)`` of a fresh isolate."""
        made = self._ready.get()
        if isinstance(made, Exception):
            raise made
        return made

    def dispose(self, manager: Any) -> None:
        self._used.put(manager)


class Worker:
    """The V8 side: a scratch context for checks, a fresh isolate per query."""

    def __init__(self, out: TextIO, heap_mib: int) -> None:
        self.out = out
        self.heap_mib = heap_mib
        self.harness = ""
        self.mr: Any = None
        self.loop: Any = None
        self.scratch: Any = None
        self.isolates: Isolates | None = None

    def reply(self, message: dict[str, Any]) -> None:
        self.out.write(json.dumps(message) + "\n")
        self.out.flush()

    def start(self, harness: str) -> dict[str, Any]:
        import py_mini_racer

        self.mr = py_mini_racer
        flags = ("--single-threaded", f"--max-old-space-size={self.heap_mib + _HEAP_SLACK_MIB}")
        py_mini_racer.init_mini_racer(flags=flags)
        self.loop = asyncio.new_event_loop()  # one event loop for every isolate's calls
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        self.harness = harness
        self.scratch = self.context()
        self.isolates = Isolates(self.context)
        return {"pid": os.getpid(), "rss": _rss(), "v8": self.scratch[1].v8_version}

    def context(self) -> tuple[Any, Any]:
        """``(context manager, MiniRacer)``: a new isolate with the harness loaded."""
        manager = self.mr.mini_racer(self.loop)
        ctx = manager.__enter__()
        ctx.eval(self.harness)
        return manager, ctx

    def failure(self, exc: BaseException, ctx: Any, phase: str = "script", state: Any = None) -> dict[str, Any]:
        """The reply for an exception of V8; after a time limit, ``last`` is the query's state when it stopped
        (read from the isolate, else ``state``: the state when the script's synchronous part ended)."""
        if isinstance(exc, self.mr.JSTimeoutException):
            if phase == "script":
                try:
                    state = ctx.eval("__gs_last()", timeout_sec=0.2)
                except Exception:  # the isolate may be wedged; the state is a courtesy
                    state = None
            return {"fail": "timeout", "message": str(exc), "last": state, "phase": phase}
        if isinstance(exc, self.mr.JSOOMException):
            return {"fail": "memory", "message": str(exc), "last": None, "phase": phase}
        return {"fail": "js", "message": str(exc), "last": None, "phase": phase}

    def scratch_op(self, request: dict[str, Any]) -> dict[str, Any]:
        limit = float(request["limit"])
        ctx = self.scratch[1]
        try:
            if request["op"] == "eval":
                return {"ok": ctx.eval(request["code"], timeout_sec=limit)}
            return {"ok": ctx.call(request["function"], *request["args"], timeout_sec=limit)}
        except self.mr.JSEvalException as exc:
            return self.failure(exc, ctx)

    def run(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.isolates is not None
        limit = float(request["limit"])
        try:
            manager, ctx = self.isolates.take()
        except Exception as exc:  # the harness did not load: the parent reports it
            return {"fail": "setup", "message": f"{type(exc).__name__}: {exc}", "last": None}
        phase, state = "script", None
        try:
            ctx.set_hard_memory_limit(int(request["memory"]))
            self.reply({"started": True})
            began = time.monotonic()
            state = ctx.call("__gs_run", request["payload"], request["code"], timeout_sec=limit)
            phase, left = "promises", max(limit - (time.monotonic() - began), 0.05)
            state = ctx.eval("__gs_finish()", timeout_sec=left)  # promise jobs run before this call starts
        except self.mr.JSEvalException as exc:
            message = self.failure(exc, ctx, phase, state)
            if message["fail"] == "js":
                self.isolates.dispose(manager)
            return message
        self.isolates.dispose(manager)
        return {"ok": state}

    def serve(self, lines: TextIO) -> None:
        for line in lines:
            request = json.loads(line)
            op = request.get("op")
            if op == "start":
                try:
                    self.reply({"ok": self.start(request["harness"])})
                except Exception as exc:  # reported to the parent, which names the fix
                    self.reply({"fail": "start", "message": f"{type(exc).__name__}: {exc}", "last": None})
                    return
                continue
            if op == "reset":
                self.scratch[0].__exit__(None, None, None)
                self.scratch = self.context()
                message: dict[str, Any] = {"ok": None}
            elif op in ("eval", "call"):
                message = self.scratch_op(request)
            elif op == "run":
                message = self.run(request)
            else:
                message = {"fail": "protocol", "message": f"unknown request {op!r}", "last": None}
            self.reply(message)
            if message.get("fail") in ("timeout", "memory"):
                return  # a stopped isolate may still be busy: the parent starts another worker


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")  # replies only
    os.dup2(2, 1)  # what V8 or anything else prints goes to standard error
    threading.Thread(target=_watch_parent, daemon=True).start()
    heap_mib = int(sys.argv[1]) if len(sys.argv) > 1 else 128
    try:
        Worker(out, heap_mib).serve(sys.stdin)
    finally:
        out.flush()
        os._exit(0)  # never run V8's teardown at interpreter exit: it can hang there


if __name__ == "__main__":
    main()
