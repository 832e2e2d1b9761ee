"""Read OpenAI Chat Completions message logs (with ``tool_calls`` and ``tool`` results) as agent traces.

A file holds one conversation per line (JSONL): ``{"conversation_id": ..., "query_id"?: ..., "messages": [...]}``
(``id`` is accepted for the conversation id; without one it is ``<file stem>:<line>``), or a bare array of
messages. Messages are Chat Completions messages::

    {"role": "user", "content": "..."}
    {"role": "assistant", "content": null,
     "tool_calls": [{"id": "call_1", "type": "function",
                     "function": {"name": "search", "arguments": "{\\"query\\": ...}"}}]}
    {"role": "tool", "tool_call_id": "call_1", "content": "<the tool's output, JSON text>"}

How the reader decides the structure:

* a **turn** starts at each ``user`` message (its text is the turn's query); messages before the first user
  message (system, developer) belong to no turn, except that an assistant message before any user message opens
  a turn without query;
* an **iteration** is one assistant message with at least one tool call to a search tool
  (:attr:`ResultMapping.search_tools`); its searches are those tool calls, in the order listed (parallel tool
  calls are one iteration). Assistant messages without a search call (answers, other tools) are not iterations;
* a search's results come from the ``tool`` message whose ``tool_call_id`` is the call's id, parsed as JSON
  (a content-part list is joined first) and mapped by the :class:`ResultMapping`; its query is the argument
  named in ``query_arguments``.

A search call without a tool message, a tool output that is not JSON, or results that cannot be mapped are
errors naming the file, the line and the message (``messages[4]``); so is a file that calls tools, none of them a
search (:func:`~gainscope.agents.mapping.check_matched`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gainscope.agents.mapping import ResultMapping, check_matched, parse_payload
from gainscope.agents.trace import Conversation, Iteration, Search, Turn, json_lines
from gainscope.errors import FormatError, InputError

__all__ = ["conversation_from_chat", "read_openai_chat"]


def _content_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") in ("text", "input_text")]
        return "\n".join(t for t in texts if isinstance(t, str)) or None
    return None


def conversation_from_chat(messages: list[Any], conversation_id: str, *, query_id: str | None = None,
                           mapping: ResultMapping | None = None, called: set[str] | None = None) -> Conversation:
    """One conversation from Chat Completions messages (see the module docstring); InputError on a problem.
    ``called`` collects the name of every tool called."""
    mapping = mapping or ResultMapping()
    outputs: dict[str, tuple[int, Any]] = {}
    for k, msg in enumerate(messages):
        if not isinstance(msg, dict):
            raise InputError(f"messages[{k}]: expected a message object")
        if msg.get("role") == "tool" and isinstance(msg.get("tool_call_id"), str):
            outputs[msg["tool_call_id"]] = (k, msg.get("content"))
    turns: list[Turn] = []
    query: str | None = None
    iterations: list[Iteration] = []
    started = False
    for k, msg in enumerate(messages):
        role = msg.get("role")
        if role == "user":
            if started:
                turns.append(Turn(tuple(iterations), query))
            started, query, iterations = True, _content_text(msg.get("content")), []
        elif role == "assistant":
            started = True
            calls = msg.get("tool_calls") or []
            if called is not None:
                called.update(str(c["function"].get("name")) for c in calls
                              if isinstance(c, dict) and isinstance(c.get("function"), dict))
            searches = [_search(call, k, j, outputs, mapping) for j, call in enumerate(calls)
                        if _is_search(call, mapping)]
            if searches:
                iterations.append(Iteration(tuple(searches)))
    if started:
        turns.append(Turn(tuple(iterations), query))
    return Conversation(conversation_id, tuple(turns), query_id)


def _is_search(call: Any, mapping: ResultMapping) -> bool:
    return isinstance(call, dict) and isinstance(call.get("function"), dict) and \
        mapping.is_search(call["function"].get("name"))


def _search(call: dict[str, Any], k: int, j: int, outputs: dict[str, tuple[int, Any]],
            mapping: ResultMapping) -> Search:
    where = f"messages[{k}].tool_calls[{j}]"
    function = call["function"]
    call_id = call.get("id")
    if call_id not in outputs:
        raise InputError(f"{where}: the search call {call_id!r} has no tool message with this tool_call_id")
    at, content = outputs[call_id]
    try:
        arguments = parse_payload(function.get("arguments") or "{}", "the call's arguments")
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None
    try:
        results = mapping.results(parse_payload(content, "the tool output"))
    except InputError as exc:
        raise InputError(f"messages[{at}] (result of {call_id}): {exc}") from None
    return Search(results, mapping.query(arguments), function.get("name"), {"call_id": call_id})


def read_openai_chat(path: str | Path, *, mapping: ResultMapping | None = None) -> list[Conversation]:
    """Read a JSONL file of Chat Completions conversations (see the module docstring)."""
    p = Path(path)
    mapping = mapping or ResultMapping()
    out = []
    called: set[str] = set()
    for number, obj in json_lines(p):
        if isinstance(obj, list):
            messages, cid, qid = obj, f"{p.stem}:{number}", None
        elif isinstance(obj, dict) and isinstance(obj.get("messages"), list):
            messages = obj["messages"]
            cid = str(obj.get("conversation_id", obj.get("id", f"{p.stem}:{number}")))
            qid = None if obj.get("query_id") is None else str(obj["query_id"])
        else:
            raise FormatError("expected {\"messages\": [...]} or an array of chat messages", path=str(p), line=number)
        try:
            out.append(conversation_from_chat(messages, cid, query_id=qid, mapping=mapping, called=called))
        except InputError as exc:
            raise FormatError(str(exc), path=str(p), line=number) from None
    check_matched(out, called, mapping, p)
    return out
