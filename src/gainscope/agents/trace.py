"""Agent traces: conversations of turns of iterations of searches of results, and their native JSONL format.

One conversation per line::

    {"conversation_id": "c1", "query_id": "q7",
     "turns": [{"query": "who wrote ...?",
                "iterations": [{"searches": [{"query": "...", "tool": "web_search",
                                              "results": [{"id": "...", "domain_id": "...", "url": "...",
                                                           "title": "...", "snippet": "...", "content": "...",
                                                           "gain": 3}]}]}]}]}

The JSON Schema is ``trace.schema.json`` beside this module (:func:`schema`); the reader accepts exactly what
it accepts (a test checks both on a table of cases). Every result field is optional, but a result needs at
least one of ``id``, ``domain_id``, ``url``, ``title``, ``snippet`` or ``content`` that is not blank (else
nothing could ever identify it). An optional field given as ``null``, or as an empty or whitespace-only
string, is absent (``"url": null`` and ``"url": " "`` are no URL; a result whose fields are all blank is an
error). Ids are strings or integers (``3`` and ``3.0`` are the id ``"3"``); ``conversation_id`` must not be
blank. ``gain`` is an integer 0-4 (the labeller's scale of seed 003). ``query_id`` (default: the conversation
id) is the query the judgments are keyed by; a turn's ``query`` is the user's request, which an LLM judge
grades results against. ``metadata`` objects are allowed on conversations, turns, searches and results and
are kept as given; any other unknown key is an error (it is usually a typo: ``snipet``).

An *iteration* is one assistant step, and it may hold several searches (parallel tool calls). Iterations
without any search may appear in a file but are not iterations of the metrics: seed 003 numbers only the
iterations where search was invoked (``i = 1..N``), see :meth:`Turn.search_iterations`.

:func:`read_traces` validates every line and reports the first problem as ``file:line: <where>: <what>``
(:class:`~gainscope.errors.FormatError`), e.g. ``traces.jsonl:3: turns[0].iterations[1].searches[0].results[2]:
a result needs at least one of id, domain_id, url, title, snippet, content``.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from gainscope.errors import FileAccessError, FormatError, InputError, InputWarning

__all__ = [
    "RESULT_FIELDS",
    "Conversation",
    "Iteration",
    "Result",
    "Search",
    "Turn",
    "conversation_from_dict",
    "json_lines",
    "read_traces",
    "schema",
    "write_traces",
]

#: the result fields that identify a result (one at least must be present)
RESULT_FIELDS = ("id", "domain_id", "url", "title", "snippet", "content")
MAX_GAIN = 4
_BLANK = "(blank strings count as absent)"


@dataclass(frozen=True)
class Result:
    """One result returned by a search. ``gain`` is the labeller's grade 0-4 when the trace carries one."""

    id: str | None = None
    domain_id: str | None = None
    url: str | None = None
    title: str | None = None
    snippet: str | None = None
    content: str | None = None
    gain: int | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for f in RESULT_FIELDS:  # a blank string is an absent field
            v = getattr(self, f)
            if isinstance(v, str) and not v.strip():
                object.__setattr__(self, f, None)
        if all(getattr(self, f) is None for f in RESULT_FIELDS):
            raise InputError(f"a result needs at least one of {', '.join(RESULT_FIELDS)} {_BLANK}")
        if self.gain is not None and (isinstance(self.gain, bool) or not isinstance(self.gain, int)
                                      or not 0 <= self.gain <= MAX_GAIN):
            raise InputError(f"gain must be an integer 0-{MAX_GAIN}; got {self.gain!r}")

    def to_dict(self) -> dict[str, Any]:
        """The native JSON object (absent fields left out)."""
        out: dict[str, Any] = {f: getattr(self, f) for f in (*RESULT_FIELDS, "gain") if getattr(self, f) is not None}
        if self.metadata:
            out["metadata"] = dict(self.metadata)
        return out

    def describe(self, width: int = 60) -> str:
        """A short one-line description for explanations: the identifying fields present."""
        parts = []
        for f in ("domain_id", "id", "url"):
            v = getattr(self, f)
            if v:
                parts.append(f"{f}={v}")
        for f in ("title", "snippet", "content"):
            v = getattr(self, f)
            if v:
                text = " ".join(v.split())
                parts.append(f"{f}={_clip(text, 40)!r}")
                break
        return _clip(" ".join(parts), width)


@dataclass(frozen=True)
class Search:
    """One search invocation (a tool call) and the results it returned, in rank order."""

    results: tuple[Result, ...] = ()
    query: str | None = None
    tool: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The native JSON object."""
        out: dict[str, Any] = {}
        if self.query is not None:
            out["query"] = self.query
        if self.tool is not None:
            out["tool"] = self.tool
        out["results"] = [r.to_dict() for r in self.results]
        if self.metadata:
            out["metadata"] = dict(self.metadata)
        return out


@dataclass(frozen=True)
class Iteration:
    """One assistant step: the searches it issued (several when tool calls run in parallel)."""

    searches: tuple[Search, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The native JSON object."""
        return {"searches": [s.to_dict() for s in self.searches]}


@dataclass(frozen=True)
class Turn:
    """One user request and the agent's iterations answering it; ``query`` is the user's request text."""

    iterations: tuple[Iteration, ...] = ()
    query: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def search_iterations(self) -> tuple[Iteration, ...]:
        """The iterations where search was invoked (seed 003's ``i = 1..N``): iterations without a search are
        left out of the numbering. An iteration whose searches all returned nothing *is* one (``|R^i| = 0``)."""
        return tuple(it for it in self.iterations if it.searches)

    def to_dict(self) -> dict[str, Any]:
        """The native JSON object."""
        out: dict[str, Any] = {}
        if self.query is not None:
            out["query"] = self.query
        out["iterations"] = [it.to_dict() for it in self.iterations]
        if self.metadata:
            out["metadata"] = dict(self.metadata)
        return out


@dataclass(frozen=True)
class Conversation:
    """A conversation of one or more turns. Metrics use only the last turn (seed 003, multi-turn scope)."""

    conversation_id: str
    turns: tuple[Turn, ...] = ()
    query_id: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def qid(self) -> str:
        """The query id judgments are keyed by: ``query_id``, else the conversation id."""
        return self.query_id if self.query_id is not None else self.conversation_id

    @property
    def last_turn(self) -> Turn:
        """The turn the metrics evaluate (an empty turn when the conversation has none)."""
        return self.turns[-1] if self.turns else Turn()

    def to_dict(self) -> dict[str, Any]:
        """The native JSON object (one line of a trace file)."""
        out: dict[str, Any] = {"conversation_id": self.conversation_id}
        if self.query_id is not None:
            out["query_id"] = self.query_id
        out["turns"] = [t.to_dict() for t in self.turns]
        if self.metadata:
            out["metadata"] = dict(self.metadata)
        return out


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


# ------------------------------------------------------------------------------------------------ validation
class _Invalid(Exception):
    """A problem at a place inside one JSON object (``where`` like ``turns[0].iterations[1]``)."""

    def __init__(self, where: str, message: str) -> None:
        self.where = where
        super().__init__(message)


def _keys(obj: Any, where: str, allowed: tuple[str, ...], required: tuple[str, ...] = ()) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise _Invalid(where, f"expected a JSON object; got {_kind(obj)}")
    unknown = [k for k in obj if k not in allowed]
    if unknown:
        raise _Invalid(where, f"unknown key {unknown[0]!r}; allowed: {', '.join(allowed)}")
    for k in required:
        if k not in obj:
            raise _Invalid(where, f"missing {k!r}")
    return obj


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def _text(obj: Mapping[str, Any], key: str, where: str, *, ident: bool = False) -> str | None:
    """An optional string (an id: or an integer); absent, null and blank strings are None."""
    value = obj.get(key)
    if value is None:
        return None
    if ident and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if ident and isinstance(value, float) and value.is_integer():  # JSON Schema's integer: 3.0 is 3
        return str(int(value))
    if not isinstance(value, str):
        raise _Invalid(where, f"{key!r} must be a string{' or an integer' if ident else ''} (or null); got "
                              f"{_kind(value)}")
    return value if value.strip() else None


def _list(obj: Mapping[str, Any], key: str, where: str, *, optional: bool = False) -> list[Any]:
    value = obj.get(key)
    if value is None and (optional or key not in obj):  # a required key that is missing is reported before
        return []
    if not isinstance(value, list):
        raise _Invalid(where, f"{key!r} must be an array; got {_kind(value)}")
    return value


def _metadata(obj: Mapping[str, Any], where: str) -> dict[str, Any]:
    value = obj.get("metadata")
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _Invalid(where, f"'metadata' must be an object (or null); got {_kind(value)}")
    return value


def _result(obj: Any, where: str) -> Result:
    obj = _keys(obj, where, (*RESULT_FIELDS, "gain", "metadata"))
    values = {f: _text(obj, f, where, ident=f in ("id", "domain_id")) for f in RESULT_FIELDS}
    if all(v is None for v in values.values()):
        raise _Invalid(where, f"a result needs at least one of {', '.join(RESULT_FIELDS)} {_BLANK}")
    gain = obj.get("gain")
    if gain is not None:
        if isinstance(gain, float) and gain.is_integer():
            gain = int(gain)
        if isinstance(gain, bool) or not isinstance(gain, int) or not 0 <= gain <= MAX_GAIN:
            raise _Invalid(where, f"'gain' must be an integer 0-{MAX_GAIN}; got {gain!r}")
    return Result(**values, gain=gain, metadata=_metadata(obj, where))


def _search(obj: Any, where: str) -> Search:
    obj = _keys(obj, where, ("query", "tool", "results", "metadata"))
    results = tuple(_result(r, f"{where}.results[{k}]")
                    for k, r in enumerate(_list(obj, "results", where, optional=True)))
    return Search(results, _text(obj, "query", where), _text(obj, "tool", where), _metadata(obj, where))


def _iteration(obj: Any, where: str) -> Iteration:
    obj = _keys(obj, where, ("searches",), ("searches",))
    return Iteration(tuple(_search(s, f"{where}.searches[{k}]") for k, s in enumerate(_list(obj, "searches", where))))


def _turn(obj: Any, where: str) -> Turn:
    obj = _keys(obj, where, ("query", "iterations", "metadata"), ("iterations",))
    its = tuple(_iteration(it, f"{where}.iterations[{k}]") for k, it in enumerate(_list(obj, "iterations", where)))
    return Turn(its, _text(obj, "query", where), _metadata(obj, where))


def conversation_from_dict(obj: Any) -> Conversation:
    """A :class:`Conversation` from its native JSON object; raises InputError naming the place of a problem."""
    try:
        return _conversation(obj)
    except _Invalid as exc:
        raise InputError(f"{exc.where}: {exc}" if exc.where else str(exc)) from None


def _conversation(obj: Any) -> Conversation:
    obj = _keys(obj, "", ("conversation_id", "query_id", "turns", "metadata"), ("conversation_id", "turns"))
    if obj["conversation_id"] is None:
        raise _Invalid("", "'conversation_id' must be a string or an integer; got null")
    cid = _text(obj, "conversation_id", "", ident=True)
    if cid is None:
        raise _Invalid("", "'conversation_id' must not be empty or blank")
    turns = tuple(_turn(t, f"turns[{k}]") for k, t in enumerate(_list(obj, "turns", "")))
    return Conversation(cid, turns, _text(obj, "query_id", "", ident=True), _metadata(obj, ""))


def returned_nothing(where: str, missing: str) -> list[Any]:
    """An empty result list for a search logged without its results, with an InputWarning ``where: missing; read
    as a search that returned nothing`` pointing at the reader's caller (as the reader's own warn would)."""
    warnings.warn(f"{where}: {missing}; read as a search that returned nothing", InputWarning, stacklevel=3)
    return []


def read_utf8(path: Path) -> str:
    """The text of a UTF-8 trace file (a BOM is dropped); FileAccessError for a missing file, FormatError naming
    the byte for one that is not UTF-8. Other OS errors (a folder, no permission) are left to the caller."""
    try:
        return path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise FileAccessError(f"{path}: no such file", path=str(path)) from None
    except UnicodeDecodeError as exc:
        raise FormatError(f"not UTF-8 (byte {exc.start})", path=str(path)) from None


def json_lines(path: str | Path, what: str = "conversation") -> list[tuple[int, Any]]:
    """``(line number, parsed JSON)`` for every non-blank line of a UTF-8 JSONL file (a BOM is dropped);
    FormatError naming the line for one that is not JSON, InputError for a missing or empty file."""
    p = Path(path)
    text = read_utf8(p)
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise FormatError(f"not JSON ({exc.msg} at column {exc.colno}); each line holds one {what}",
                              path=str(p), line=number, text=line[:200]) from None
    if not out:
        raise InputError(f"{p}: no {what} in the file")
    return out


def read_traces(path: str | Path) -> list[Conversation]:
    """Read a native trace file (JSONL, one conversation per line; see the module docstring).

    Errors are :class:`~gainscope.errors.FormatError` with the file and line: a line that is not JSON, a
    problem inside the object (named by its place), a conversation id given twice."""
    p = Path(path)
    out: list[Conversation] = []
    seen: dict[str, int] = {}
    for number, obj in json_lines(p):
        try:
            conv = _conversation(obj)
        except _Invalid as exc:
            where = f"{exc.where}: " if exc.where else ""
            raise FormatError(f"{where}{exc}", path=str(p), line=number) from None
        if conv.conversation_id in seen:
            raise FormatError(f"conversation {conv.conversation_id!r} was already given on line "
                              f"{seen[conv.conversation_id]}; conversation ids must be unique", path=str(p),
                              line=number)
        seen[conv.conversation_id] = number
        out.append(conv)
    return out


def write_traces(conversations: Iterable[Conversation], path: str | Path) -> int:
    """Write conversations as native JSONL; returns how many were written."""
    n = 0
    with Path(path).open("w", encoding="utf-8") as f:
        for conv in conversations:
            f.write(json.dumps(conv.to_dict(), ensure_ascii=False) + "\n")
            n += 1
    return n


@cache
def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one line of a native trace file."""
    text = resources.files("gainscope.agents").joinpath("trace.schema.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded
