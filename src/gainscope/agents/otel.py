"""Read OpenTelemetry GenAI spans exported as JSON as agent traces.

Attribute names follow the OpenTelemetry GenAI semantic conventions (Development status): ``chat`` /
``invoke_agent`` / ``execute_tool`` spans as in semantic-conventions v1.37-v1.41, and the ``retrieval``
operation with ``gen_ai.retrieval.query.text`` and ``gen_ai.retrieval.documents`` (``[{"id", "score", ...}]``,
structured or a JSON string) as defined since in the GenAI conventions' ``gen-ai-spans.md``. The attributes
used are

==================================  ==============================================================
``gen_ai.operation.name``           ``retrieval``, ``execute_tool``, ``invoke_agent``, ``chat``,
                                    ``text_completion``, ``generate_content``
``gen_ai.conversation.id``          groups spans into conversations (else the trace id does)
``gen_ai.retrieval.query.text``     the query of a retrieval span (opt-in)
``gen_ai.retrieval.documents``      its results (opt-in), mapped with the :class:`ResultMapping` fields
``gen_ai.data_source.id``           kept as the search's tool name
``gen_ai.tool.name``                an ``execute_tool`` span is a search when it names a search tool
``gen_ai.tool.call.arguments``      its query (opt-in)
``gen_ai.tool.call.result``         its results (opt-in), mapped as for chat logs
``gen_ai.input.messages``           the user's request: the last ``user`` message's text parts
==================================  ==============================================================

Accepted files: OTLP JSON (``{"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}``, typed attribute values,
as the Collector's file exporter writes it, one request per line or one per file), and flat span objects
(``{"name", "context": {"trace_id", "span_id"}, "parent_id", "start_time", "attributes": {...}}`` as the Python
SDK's console exporter prints them, or with ``trace_id`` / ``span_id`` / ``parent_span_id`` at the top), one
per line, concatenated, or in an array.

How the reader decides the structure:

* a **conversation** is the set of spans sharing ``gen_ai.conversation.id`` (taken from the span or its nearest
  ancestor that has it, else from any span of the same trace); spans without one are grouped by trace id;
* a **turn** is an outermost ``invoke_agent`` span with its descendants (nested agents belong to their
  caller's turn); search spans outside any ``invoke_agent`` form one turn per trace. Turns are ordered by
  start time; a turn's query is the last user message of the first span in it that records
  ``gen_ai.input.messages``;
* an **iteration** is one model call of the agent: within a turn, spans are taken in start-time order, each
  inference span (``chat``, ``text_completion``, ``generate_content``) that is *not* a descendant of an
  ``execute_tool`` or ``retrieval`` span opens a new step, and every search span belongs to the step opened
  last before it started (a search before any inference span opens a step of its own). A model call inside a
  tool or a retrieval (a tool that rewrites its query with an LLM, a reranker, an agent called as a tool) is
  part of that tool's work, not an assistant step, so parallel search tools stay one iteration. Steps
  without a search are not iterations;
* a **search** is a ``retrieval`` span, or an ``execute_tool`` span of a search tool that has no ``retrieval``
  span below it (so one retrieval is never counted twice).

Retrieval documents and tool results are opt-in and often left out by instrumentations; a search without them
is read as returning nothing, with an :class:`~gainscope.errors.InputWarning`. A file with ``execute_tool`` spans,
none of them a search, and no ``retrieval`` span is refused (:func:`~gainscope.agents.mapping.check_matched`).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from gainscope.agents.mapping import ResultMapping, check_matched, parse_payload
from gainscope.agents.trace import Conversation, Iteration, Search, Turn, read_utf8, returned_nothing
from gainscope.errors import FormatError, InputError
from gainscope.errors import SpanError as _SpanError

__all__ = ["Span", "conversations_from_spans", "read_otel_spans", "spans_from_json"]

INFERENCE = ("chat", "text_completion", "generate_content")
#: spans whose descendants are part of a tool's work, never a step of the agent
TOOL_OPERATIONS = ("execute_tool", "retrieval")


@dataclass(frozen=True)
class Span:
    """The parts of a span the reader uses; ``start`` in nanoseconds since the epoch, ``line`` where it was read."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: int
    attributes: dict[str, Any]
    line: int = 0

    @property
    def operation(self) -> str | None:
        """``gen_ai.operation.name``."""
        op = self.attributes.get("gen_ai.operation.name")
        return op if isinstance(op, str) else None


# ---------------------------------------------------------------------------------------------- decoding
def _any_value(v: Any) -> Any:
    """An OTLP JSON ``AnyValue`` as plain data."""
    if not isinstance(v, dict):
        return v
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in v:
            return v[key]
    if "intValue" in v:
        return int(v["intValue"])
    if "arrayValue" in v:
        return [_any_value(x) for x in (v["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in v:
        return {kv["key"]: _any_value(kv.get("value")) for kv in (v["kvlistValue"] or {}).get("values", [])}
    if "bytesValue" in v:
        return v["bytesValue"]
    return None


def _time(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, str):
        if value.isdigit():
            return int(value)
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            raise InputError(f"cannot read the time {value!r}") from None
        return int(moment.timestamp() * 1e9)
    raise InputError(f"cannot read the time {value!r}")


def _span(obj: dict[str, Any], line: int) -> Span:
    if "traceId" in obj or "spanId" in obj:  # OTLP JSON
        attrs = {a["key"]: _any_value(a.get("value")) for a in obj.get("attributes") or [] if isinstance(a, dict)}
        return Span(str(obj.get("traceId", "")), str(obj.get("spanId", "")), obj.get("parentSpanId") or None,
                    str(obj.get("name", "")), _time(obj.get("startTimeUnixNano")), attrs, line)
    ctx: dict[str, Any] = obj["context"] if isinstance(obj.get("context"), dict) else obj
    trace_id, span_id = ctx.get("trace_id"), ctx.get("span_id")
    if trace_id is None or span_id is None:
        raise InputError("a span without trace_id and span_id")
    attrs = obj.get("attributes") or {}
    if not isinstance(attrs, dict):
        raise InputError("span attributes must be an object")
    parent = obj.get("parent_id", obj.get("parent_span_id"))
    start = obj.get("start_time", obj.get("start_time_unix_nano", obj.get("startTimeUnixNano")))
    return Span(str(trace_id), str(span_id), str(parent) if parent else None, str(obj.get("name", "")),
                _time(start), dict(attrs), line)


def spans_from_json(value: Any, line: int = 0) -> list[Span]:
    """Spans from one decoded JSON value: an OTLP export request, a span, or an array of either."""
    if isinstance(value, list):
        return [s for v in value for s in spans_from_json(v, line)]
    if not isinstance(value, dict):
        raise InputError(f"expected spans; got {type(value).__name__}")
    if "resourceSpans" in value:
        return [_span(s, line) for rs in value["resourceSpans"] or [] for ss in rs.get("scopeSpans") or []
                for s in ss.get("spans") or []]
    if "spans" in value and isinstance(value["spans"], list):
        return [_span(s, line) for s in value["spans"]]
    return [_span(value, line)]


def read_otel_spans(path: str | Path, *, mapping: ResultMapping | None = None) -> list[Conversation]:
    """Read exported spans (see the module docstring) and build the conversations."""
    p = Path(path)
    text = read_utf8(p)
    decoder = json.JSONDecoder()
    spans: list[Span] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        line = text.count("\n", 0, pos) + 1
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise FormatError(f"not JSON ({exc.msg})", path=str(p), line=exc.lineno) from None
        try:
            spans.extend(spans_from_json(value, line))
        except (InputError, KeyError, TypeError, AttributeError) as exc:
            raise FormatError(f"not an exported span: {exc}", path=str(p), line=line) from None
    if not spans:
        raise InputError(f"{p}: no span in the file")
    mapping = mapping or ResultMapping()
    try:
        out = conversations_from_spans(spans, mapping=mapping)
    except _SpanError as exc:
        raise FormatError(str(exc), path=str(p), line=exc.line) from None
    tools = {str(s.attributes.get("gen_ai.tool.name")) for s in spans if s.operation == "execute_tool"}
    check_matched(out, tools, mapping, p)
    return out


# ---------------------------------------------------------------------------------------------- structure
def conversations_from_spans(spans: list[Span], *, mapping: ResultMapping | None = None) -> list[Conversation]:
    """Conversations from spans (see the module docstring for how turns and iterations are decided)."""
    mapping = mapping or ResultMapping()
    by_id = {(s.trace_id, s.span_id): s for s in spans}
    children: dict[tuple[str, str], list[Span]] = defaultdict(list)
    for s in spans:
        if s.parent_id is not None:
            children[(s.trace_id, s.parent_id)].append(s)

    def ancestors(s: Span) -> list[Span]:
        out, seen = [], set()
        while s.parent_id is not None and (s.trace_id, s.parent_id) in by_id and s.span_id not in seen:
            seen.add(s.span_id)
            s = by_id[(s.trace_id, s.parent_id)]
            out.append(s)
        return out

    def inside_tool(s: Span) -> bool:
        return any(a.operation in TOOL_OPERATIONS for a in ancestors(s))

    def has_retrieval_below(s: Span) -> bool:
        stack = list(children[(s.trace_id, s.span_id)])
        while stack:
            c = stack.pop()
            if c.operation == "retrieval":
                return True
            stack.extend(children[(c.trace_id, c.span_id)])
        return False

    trace_conv: dict[str, str] = {}
    for s in spans:
        cid = s.attributes.get("gen_ai.conversation.id")
        if isinstance(cid, str) and cid:
            trace_conv.setdefault(s.trace_id, cid)

    def conversation_of(s: Span) -> str:
        for x in (s, *ancestors(s)):
            cid = x.attributes.get("gen_ai.conversation.id")
            if isinstance(cid, str) and cid:
                return cid
        return trace_conv.get(s.trace_id, s.trace_id)

    def turn_of(s: Span) -> tuple[str, str]:
        agents = [x for x in (s, *ancestors(s)) if x.operation == "invoke_agent"]
        return (s.trace_id, agents[-1].span_id) if agents else (s.trace_id, "")

    order = {id(s): k for k, s in enumerate(spans)}
    turns: dict[str, dict[tuple[str, str], list[Span]]] = defaultdict(lambda: defaultdict(list))
    conv_order: list[str] = []
    for s in sorted(spans, key=lambda x: (x.start, order[id(x)])):
        cid = conversation_of(s)
        if cid not in conv_order:
            conv_order.append(cid)
        turns[cid][turn_of(s)].append(s)
    out = []
    for cid in conv_order:
        built = []
        for members in turns[cid].values():  # insertion order = order of the turn's first span
            built.append(_turn(members, mapping, has_retrieval_below, inside_tool))
        out.append(Conversation(cid, tuple(built)))
    return out


def _turn(members: list[Span], mapping: ResultMapping, has_retrieval_below: Callable[[Span], bool],
          inside_tool: Callable[[Span], bool]) -> Turn:
    steps: list[list[Search]] = []
    open_step: list[Search] | None = None
    query: str | None = None
    for s in members:
        op = s.operation
        if query is None and "gen_ai.input.messages" in s.attributes:
            query = _user_text(s.attributes["gen_ai.input.messages"])
        if op in INFERENCE and not inside_tool(s):
            open_step = []
            steps.append(open_step)
            continue
        search = None
        if op == "retrieval":
            search = _retrieval(s, mapping)
        elif op == "execute_tool" and mapping.is_search(s.attributes.get("gen_ai.tool.name")) \
                and not has_retrieval_below(s):
            search = _tool_search(s, mapping)
        if search is not None:
            if open_step is None:
                open_step = []
                steps.append(open_step)
            open_step.append(search)
    return Turn(tuple(Iteration(tuple(step)) for step in steps if step), query)


def _user_text(messages: Any) -> str | None:
    if isinstance(messages, str):
        try:
            messages = json.loads(messages)
        except json.JSONDecodeError:
            return None
    if not isinstance(messages, list):
        return None
    for msg in reversed(messages):
        if isinstance(msg, dict) and msg.get("role") == "user":
            parts = msg.get("parts")
            if isinstance(parts, list):
                texts = [p.get("content") for p in parts if isinstance(p, dict) and p.get("type") == "text"]
                return "\n".join(t for t in texts if isinstance(t, str)) or None
            if isinstance(msg.get("content"), str):
                return str(msg["content"])
    return None


def _retrieval(s: Span, mapping: ResultMapping) -> Search:
    where = f"retrieval span {s.span_id} ({s.name})"
    docs = s.attributes.get("gen_ai.retrieval.documents")
    query = s.attributes.get("gen_ai.retrieval.query.text")
    source = s.attributes.get("gen_ai.data_source.id")
    if docs is None:
        docs = returned_nothing(where, "no gen_ai.retrieval.documents (an opt-in attribute)")
    try:
        results = mapping.results(parse_payload(docs, "gen_ai.retrieval.documents"))
    except InputError as exc:
        raise _SpanError(f"{where}: {exc}", s.line) from None
    return Search(results, query if isinstance(query, str) else None,
                  source if isinstance(source, str) else "retrieval", {"span_id": s.span_id})


def _tool_search(s: Span, mapping: ResultMapping) -> Search:
    where = f"execute_tool span {s.span_id} ({s.name})"
    result = s.attributes.get("gen_ai.tool.call.result")
    if result is None:
        result = returned_nothing(where, "no gen_ai.tool.call.result (an opt-in attribute)")
    try:
        args = parse_payload(s.attributes.get("gen_ai.tool.call.arguments") or "{}", "gen_ai.tool.call.arguments")
        results = mapping.results(parse_payload(result, "gen_ai.tool.call.result"))
    except InputError as exc:
        raise _SpanError(f"{where}: {exc}", s.line) from None
    return Search(results, mapping.query(args), str(s.attributes.get("gen_ai.tool.name")), {"span_id": s.span_id})
