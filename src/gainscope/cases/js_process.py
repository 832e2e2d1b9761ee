"""Worker processes for JavaScript scorers: started, watched, stopped and reused from the parent's side.

A :class:`WorkerProcess` is one ``python -P js_worker.py`` (see :mod:`gainscope.cases.js_worker`). Every
request has a wall-clock deadline and the worker's resident memory is watched while the parent waits; past
either, the worker is killed (SIGKILL) and the request gets a :class:`Reply` that says why. A worker that dies
on its own (V8 aborts the whole process when an allocation cannot be satisfied) gives a reply that quotes the
end of what it wrote to standard error. Nothing of that reaches the parent's process: the caller turns a
reply into an error for that scorer and that query, and later requests start a new worker.

Limits of one query (``run``): the time limit counts from the moment the worker reports that the script
started (setting up the query's isolate does not count); V8 itself stops the script at the limit, and the
parent kills the worker :data:`KILL_SLACK` seconds later if it has not answered (one built-in call, such as
splitting or filling a huge array, does not check V8's limit). The memory cap on the worker's resident memory
is its size when it started plus twice the memory limit (the V8 heap and, as much again, typed arrays and
ArrayBuffers) plus :data:`RSS_SLACK`; it is checked every :data:`POLL` seconds on Linux (elsewhere only V8's
own limits apply).

Idle workers are pooled (at most :data:`MAX_IDLE`; one is reused for the same memory limit): starting Python
and V8 takes a few hundred milliseconds, and each query gets an isolate of its own anyway, so a worker keeps
nothing of one scorer for the next. They end with the parent (their standard input closes; a watchdog catches a parent
killed outright).
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import importlib.util
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from gainscope.errors import MissingDependencyError

__all__ = ["KILL_SLACK", "MAX_IDLE", "POLL", "RSS_SLACK", "Reply", "WorkerProcess", "acquire", "release"]

KILL_SLACK = 0.5
"""Seconds past a request's time limit after which the worker is killed."""
POLL = 0.05
"""Seconds between two looks at the worker's memory while waiting."""
RSS_SLACK = 256 * 1024 * 1024
"""Bytes of resident memory a worker may use beyond its size at start plus twice the memory limit."""
MAX_IDLE = 2
START_TIMEOUT = 60.0
"""Seconds a worker may take to start (Python, mini-racer and V8 under load)."""
SETUP_TIMEOUT = 10.0
"""Seconds a worker may take to set up one query's isolate."""

_WORKER = Path(__file__).with_name("js_worker.py")
_EOF = object()


@dataclass(frozen=True)
class Reply:
    """What came of a request. ``kind``:

    * ``ok``: ``value`` is the result;
    * ``js``: V8 reported an exception or a syntax error (``message``);
    * ``timeout`` / ``memory``: V8 stopped the script at the time limit / the heap limit (``last``: the query's
      state when stopped, JSON, when it could be read; ``phase``: ``script`` or ``promises``, what was
      running); the worker has exited;
    * ``killed-time``: no answer by the deadline, the worker was killed (``seconds``: how long it ran);
    * ``killed-memory``: the worker's resident memory passed the cap, it was killed (``rss``: bytes seen);
    * ``died``: the worker ended on its own (``message``: its exit status and what it last wrote);
    * ``protocol``: the worker answered something unreadable (it was killed).
    """

    kind: str
    value: Any = None
    message: str = ""
    last: str | None = None
    seconds: float = 0.0
    rss: int = 0
    phase: str = "script"

    @property
    def ok(self) -> bool:
        return self.kind == "ok"


def _rss(pid: int) -> int | None:
    """Resident memory of a process in bytes (Linux's /proc), else None."""
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def _mini_racer_path() -> str:
    """The folder that holds mini-racer, for the worker's ``PYTHONPATH`` (the worker runs with ``-P``)."""
    spec = importlib.util.find_spec("py_mini_racer")
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError(
            "JavaScript scorers need the V8 engine from mini-racer; install it with "
            "pip install 'gainscope[quepid]' (or pip install mini-racer)")
    return str(Path(next(iter(spec.submodule_search_locations))).parent)


def _pump(stream: IO[bytes], sink: queue.Queue[Any]) -> None:
    for line in stream:
        sink.put(line)
    sink.put(_EOF)


def _tail(stream: IO[bytes], lines: collections.deque[str], fatal: list[str]) -> None:
    """Keep the last lines the worker wrote, and its first few lines about a fatal error (a C stack trace can
    push them out of the last lines)."""
    for raw in stream:
        line = raw.decode("utf-8", "replace").rstrip()[:300]
        lines.append(line)
        if len(fatal) < 5 and ("fatal" in line.lower() or "out of memory" in line.lower()):
            fatal.append(line)


def _status(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by {name}" + (" (V8 aborts that way)" if name == "SIGTRAP" else "")
    return f"exit status {code}"


def _what_it_said(lines: collections.deque[str], fatal: list[str]) -> str:
    """The most telling line of the worker's last words: V8's fatal error (its most specific line: not a
    heading that ends with ':'), else the last line."""
    clean = [t for t in (line.strip("# ").strip() for line in fatal) if t]
    specific = [t for t in clean if not t.endswith(":")]
    if specific or clean:
        return (specific or clean)[0][:200]
    text = [t for t in (line.strip("# ").strip() for line in lines) if t]
    return text[-1][:200] if text else ""


class WorkerProcess:
    """One worker process (see the module docstring) for scripts limited to ``memory_limit`` bytes of V8 heap
    (and as much again of typed arrays); ``harness`` is the JavaScript it loads into every context."""

    def __init__(self, memory_limit: int, harness: str) -> None:
        self.memory_limit = memory_limit
        self.harness = harness
        self.owner = os.getpid()
        self.broken = False
        self.rss_cap: int | None = None
        heap_mib = max(1, memory_limit // (1024 * 1024))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_mini_racer_path(), env.get("PYTHONPATH")) if p)
        if not sys.executable:
            raise MissingDependencyError("cannot start the JavaScript scorer worker: sys.executable is empty (an "
                                         "embedded Python?); run gainscope with a regular Python")
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-P", str(_WORKER), str(heap_mib)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, env=env)
        except OSError as exc:
            raise MissingDependencyError(f"cannot start the JavaScript scorer worker ({exc})") from None
        self._replies: queue.Queue[Any] = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=60)
        self._fatal: list[str] = []
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._threads = [threading.Thread(target=_pump, args=(self.proc.stdout, self._replies), daemon=True),
                         threading.Thread(target=_tail, args=(self.proc.stderr, self._stderr, self._fatal),
                                          daemon=True)]
        for t in self._threads:
            t.start()
        self._end = weakref.finalize(self, _end_process, self.proc)
        reply = self.request({"op": "start", "harness": harness}, timeout=START_TIMEOUT)
        if not reply.ok:
            self.close()
            detail = (f"no answer within {START_TIMEOUT:g} s" if reply.kind == "killed-time" else
                      reply.message or reply.kind)
            raise MissingDependencyError(f"the JavaScript scorer worker did not start: {detail}")
        started_rss = reply.value.get("rss") if isinstance(reply.value, dict) else None
        if isinstance(started_rss, int):
            self.rss_cap = started_rss + 2 * memory_limit + RSS_SLACK

    # ------------------------------------------------------------------------------------------ requests

    def request(self, message: dict[str, Any], *, timeout: float) -> Reply:
        """Send ``message`` and wait at most ``timeout`` seconds for the answer."""
        with self._exchange():
            if not self._send(message):
                return self._died()
            return self._wait(time.monotonic() + timeout)

    def run(self, payload: str, code: str, *, limit: float, memory: int) -> Reply:
        """Score one query: ``limit`` seconds from the script's start (see the module docstring)."""
        with self._exchange():
            if not self._send({"op": "run", "payload": payload, "code": code, "limit": limit, "memory": memory}):
                return self._died()
            started = self._wait(time.monotonic() + SETUP_TIMEOUT)
            if started.kind != "started":
                return started
            return self._wait(time.monotonic() + limit + KILL_SLACK, began=time.monotonic())

    @contextlib.contextmanager
    def _exchange(self) -> Iterator[None]:
        """One request and its answer: interrupted half way (Ctrl-C), the worker is killed, since its answer
        would otherwise be read as the next request's."""
        try:
            yield
        except BaseException:
            self.kill()
            raise

    def _send(self, message: dict[str, Any]) -> bool:
        if self.broken or self.proc.stdin is None:
            return False
        try:
            self.proc.stdin.write((json.dumps(message) + "\n").encode("utf-8"))
            self.proc.stdin.flush()
        except OSError:
            return False
        return True

    def _wait(self, deadline: float, began: float | None = None) -> Reply:
        began = time.monotonic() if began is None else began
        while True:
            now = time.monotonic()
            if now >= deadline:
                self.kill()
                return Reply("killed-time", seconds=now - began)
            try:
                item = self._replies.get(timeout=min(POLL, deadline - now))
            except queue.Empty:
                rss = _rss(self.proc.pid) if self.rss_cap is not None else None
                if rss is not None and self.rss_cap is not None and rss > self.rss_cap:
                    self.kill()
                    return Reply("killed-memory", rss=rss, seconds=time.monotonic() - began)
                continue
            if item is _EOF:
                return self._died()
            try:
                answer = json.loads(item)
            except ValueError:
                self.kill()
                return Reply("protocol", message=f"unreadable answer {item[:200]!r}")
            if answer.get("started"):
                return Reply("started")
            if "ok" in answer:
                return Reply("ok", value=answer["ok"])
            kind = str(answer.get("fail"))
            if kind in ("timeout", "memory"):
                self.broken = True  # the worker exits after these
            return Reply(kind, message=str(answer.get("message") or ""), last=answer.get("last"),
                         seconds=time.monotonic() - began, phase=str(answer.get("phase") or "script"))

    def _died(self) -> Reply:
        self.broken = True
        try:
            code = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.returncode
        for t in self._threads:
            t.join(timeout=1)
        said = _what_it_said(self._stderr, self._fatal)
        return Reply("died", message=_status(code) + (f"; it said: {said}" if said else ""))

    # -------------------------------------------------------------------------------------- life cycle
    @property
    def usable(self) -> bool:
        """Alive, not broken, and owned by this process (not inherited through a fork)."""
        return not self.broken and self.owner == os.getpid() and self.proc.poll() is None

    def kill(self) -> None:
        """Stop the worker now."""
        self.broken = True
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - a SIGKILLed process that does not end
            pass

    def close(self) -> None:
        """End the worker (its standard input closes; killed if it does not end) and release the pipes."""
        self.broken = True
        self._end()
        for t in self._threads:
            t.join(timeout=1)


def _end_process(proc: subprocess.Popen[bytes]) -> None:
    """End a worker process and close its pipes: at :meth:`WorkerProcess.close`, or when a worker that was never
    closed is garbage-collected or the interpreter exits."""
    if proc.stdin is not None and not proc.stdin.closed:
        try:
            proc.stdin.close()
        except OSError:
            pass
    try:
        proc.wait(timeout=2)
    except subprocess.TimeoutExpired:
        proc.kill()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - a SIGKILLed process that does not end
            pass
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


# ------------------------------------------------------------------------------------------------- pool
_IDLE: list[WorkerProcess] = []
_LOCK = threading.Lock()


def acquire(memory_limit: int, harness: str) -> tuple[WorkerProcess, bool]:
    """An idle worker for this memory limit and harness, else a new one; the flag tells whether it was reused."""
    _mini_racer_path()  # mini-racer still there (a MissingDependencyError otherwise), as for a new worker
    with _LOCK:
        for i, worker in enumerate(_IDLE):
            if worker.memory_limit == memory_limit and worker.harness == harness and worker.owner == os.getpid():
                del _IDLE[i]
                if worker.usable:
                    return worker, True
                worker.close()
                break
    return WorkerProcess(memory_limit, harness), False


def release(worker: WorkerProcess) -> None:
    """Keep a usable worker for later (at most :data:`MAX_IDLE`), else end it."""
    if worker.usable:
        with _LOCK:
            if len(_IDLE) < MAX_IDLE:
                _IDLE.append(worker)
                return
    worker.close()


def close_idle() -> None:
    """End every idle worker (at exit)."""
    with _LOCK:
        idle = list(_IDLE)
        _IDLE.clear()
    for worker in idle:
        if worker.owner == os.getpid():
            worker.close()


atexit.register(close_idle)
