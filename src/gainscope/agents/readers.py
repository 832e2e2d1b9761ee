"""One entry point for every trace format: native JSONL, OpenAI chat messages, OpenAI Responses items and
OpenTelemetry GenAI spans, chosen by name or detected from the first JSON value of the file (a file that does
not start with JSON is reported as the readers report it: ``file:line: not JSON (...)``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gainscope.agents.chat import read_openai_chat
from gainscope.agents.mapping import ResultMapping
from gainscope.agents.otel import read_otel_spans
from gainscope.agents.responses import read_openai_responses
from gainscope.agents.trace import Conversation, read_traces, read_utf8
from gainscope.errors import FormatError, InputError, UnknownFormatError

__all__ = ["TRACE_FORMATS", "detect_trace_format", "read_conversations"]

TRACE_FORMATS = ("native", "openai-chat", "openai-responses", "otel")


def _first_value(path: Path) -> Any:
    """The first JSON value of the file; errors as the readers give them (``file:line: not JSON (...)``)."""
    try:
        text = read_utf8(path)
    except IsADirectoryError:
        raise InputError(f"{path}: a folder, not a trace file") from None
    start = len(text) - len(text.lstrip())
    if start == len(text):
        raise InputError(f"{path}: no trace in file (it is empty or blank)")
    try:
        value, _ = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise FormatError(f"not JSON ({exc.msg} at column {exc.colno}); trace files are JSON or JSONL "
                          f"({', '.join(TRACE_FORMATS)})", path=str(path), line=exc.lineno,
                          text=text.split("\n")[exc.lineno - 1][:200]) from None
    return value


def detect_trace_format(path: str | Path) -> str:
    """The format of a trace file from its first JSON value. A file that does not start with JSON is a
    FormatError naming the line (``traces.jsonl:1: not JSON (...)``), as the readers report it; an empty or
    blank file an InputError (``no trace in file``)."""
    p = Path(path)
    v = _first_value(p)
    first = v[0] if isinstance(v, list) and v else v
    if isinstance(v, dict):
        if "turns" in v:
            return "native"
        if "messages" in v:
            return "openai-chat"
        if "resourceSpans" in v or "spans" in v or "context" in v or "traceId" in v or "span_id" in v:
            return "otel"
        if isinstance(v.get("output"), list) or isinstance(v.get("items"), list) or isinstance(v.get("data"), list):
            return "openai-responses"
    elif isinstance(first, dict):
        if "role" in first and "type" not in first:
            return "openai-chat"
        if "type" in first:
            return "openai-responses"
        if "context" in first or "traceId" in first or "span_id" in first:
            return "otel"
    raise UnknownFormatError(f"{p}: cannot tell the trace format from its first value; give it "
                             f"({', '.join(TRACE_FORMATS)})")


def read_conversations(path: str | Path, format: str | None = None, *,
                       mapping: ResultMapping | None = None) -> list[Conversation]:
    """Conversations from a trace file in ``format`` (None: detected; see :data:`TRACE_FORMATS`)."""
    fmt = format or detect_trace_format(path)
    if fmt == "native":
        return read_traces(path)
    if fmt == "openai-chat":
        return read_openai_chat(path, mapping=mapping)
    if fmt == "openai-responses":
        return read_openai_responses(path, mapping=mapping)
    if fmt == "otel":
        return read_otel_spans(path, mapping=mapping)
    raise UnknownFormatError(f"unknown trace format {fmt!r}; formats: {', '.join(TRACE_FORMATS)}")
