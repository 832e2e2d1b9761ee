"""Read OpenAI Responses API items (hosted ``web_search_call`` / ``file_search_call`` and function calls) as
agent traces.

A file holds one conversation per line (JSONL), in one of these shapes:

* a Response object ``{"id": "resp_...", "object": "response", "input": ..., "output": [...]}``: its ``input``
  (a string, or input items) followed by its ``output`` items;
* ``{"conversation_id"?: ..., "query_id"?: ..., "items": [...]}``, or ``{"object": "list", "data": [...]}``
  (a Conversations API item list), or a bare array of items: the whole item sequence of a conversation, as an
  agent loop accumulates it (user messages, reasoning, calls, call outputs, assistant messages). An agent that
  calls the API several times per turn is logged this way.

How the reader decides the structure:

* a **turn** starts at each user ``message`` item (an ``input`` string is one); its text is the turn's query;
* an **iteration** is a maximal run of consecutive *call* items (``function_call``, ``web_search_call``,
  ``file_search_call``, and the other ``*_call`` items) holding at least one search: the calls one model step
  emits come out together, and anything else (a ``reasoning`` item, a ``message``, a ``*_output`` item) ends
  the step. So parallel function calls are one iteration, and two hosted searches with reasoning between them
  are two;
* searches: a ``web_search_call`` whose ``action.type`` is ``search`` (its results are ``action.sources`` --
  the API returns them when asked with ``include=["web_search_call.action.sources"]``; ``open_page`` and
  ``find_in_page`` actions are not searches). A source with a ``url`` is a page (its URL, and its title when
  given); a source without one, such as ``{"type": "api", "name": "oai-weather"}`` (data the search took from
  an API, not a page), is kept as a result whose generic ``id`` is ``<type>:<name>`` (``api:oai-weather``), so
  it counts in ``|R^i|``, de-duplicates with itself and can be judged by that id; a source with neither url
  nor name is skipped with an :class:`~gainscope.errors.InputWarning` naming the file, line and place;
  a ``file_search_call`` (results: ``results[]`` with ``file_id``, ``filename``, ``text``; returned with
  ``include=["file_search_call.results"]``); a ``function_call`` whose ``name`` is a search tool of the
  :class:`ResultMapping`, with its results in the ``function_call_output`` item of the same ``call_id``
  (mapped as for chat logs).

A hosted search without its sources or results is read as a search that returned nothing, with an
:class:`~gainscope.errors.InputWarning` (the counts would otherwise be silently wrong). Warnings of
:func:`read_openai_responses` start with ``file:line:``. A file whose function calls include no search (and that
has no hosted search) is refused (:func:`~gainscope.agents.mapping.check_matched`).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from gainscope.agents.mapping import ResultMapping, check_matched, parse_payload
from gainscope.agents.trace import Conversation, Iteration, Result, Search, Turn, json_lines, returned_nothing
from gainscope.errors import FormatError, InputError, InputWarning

__all__ = ["conversation_from_items", "read_openai_responses"]

_CALLS = ("function_call", "web_search_call", "file_search_call", "computer_call", "code_interpreter_call",
          "mcp_call", "custom_tool_call", "image_generation_call", "local_shell_call")


def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") in ("input_text", "text",
                                                                                              "output_text")]
        return "\n".join(t for t in parts if isinstance(t, str)) or None
    return None


def items_of(obj: Any) -> list[Any] | None:
    """The item sequence of one line, or None when the line has none of the accepted shapes."""
    if isinstance(obj, list):
        return obj
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("items"), list):
        return list(obj["items"])
    if isinstance(obj.get("data"), list):
        return list(obj["data"])
    if isinstance(obj.get("output"), list):
        start = obj.get("input")
        head: list[Any] = [{"type": "message", "role": "user", "content": start}] if isinstance(start, str) else \
            list(start) if isinstance(start, list) else []
        return head + list(obj["output"])
    return None


def conversation_from_items(items: list[Any], conversation_id: str, *, query_id: str | None = None,
                            mapping: ResultMapping | None = None, called: set[str] | None = None) -> Conversation:
    """One conversation from a Responses item sequence (see the module docstring); InputError on a problem.
    ``called`` collects the name of every function called."""
    mapping = mapping or ResultMapping()
    outputs: dict[str, tuple[int, Any]] = {}
    for k, item in enumerate(items):
        if not isinstance(item, dict):
            raise InputError(f"items[{k}]: expected an item object")
        if item.get("type") == "function_call_output" and isinstance(item.get("call_id"), str):
            outputs[item["call_id"]] = (k, item.get("output"))
    turns: list[Turn] = []
    query: str | None = None
    iterations: list[Iteration] = []
    run: list[Search] = []
    started = False

    def close() -> None:
        if run:
            iterations.append(Iteration(tuple(run)))
            run.clear()

    for k, item in enumerate(items):
        kind = item.get("type", "message" if "role" in item else None)
        if kind in _CALLS:
            started = True
            if kind == "function_call" and called is not None:
                called.add(str(item.get("name")))
            search = _search(item, kind, k, outputs, mapping)
            if search is not None:
                run.append(search)
            continue
        close()
        if kind == "message" and item.get("role") == "user":
            if started:
                turns.append(Turn(tuple(iterations), query))
            started, query, iterations = True, _text(item.get("content")), []
        elif kind == "message" and item.get("role") == "assistant":
            started = True
    close()
    if started:
        turns.append(Turn(tuple(iterations), query))
    return Conversation(conversation_id, tuple(turns), query_id)


def _source(s: Any) -> Result | None:
    """One entry of a web search's ``action.sources``: a page by its URL (and title), else a non-web source
    (``{"type": "api", "name": "oai-weather"}``) by the generic id ``<type>:<name>``; None when neither."""
    if not isinstance(s, dict):
        return None
    url, title, name = s.get("url"), s.get("title"), s.get("name")
    title = title if isinstance(title, str) and title.strip() else None
    if isinstance(url, str) and url.strip():
        return Result(url=url, title=title)
    if isinstance(name, str) and name.strip():
        kind = s.get("type")
        return Result(id=f"{kind.strip() if isinstance(kind, str) and kind.strip() else 'source'}:{name.strip()}",
                      title=title)
    return None


def _search(item: dict[str, Any], kind: str, k: int, outputs: dict[str, tuple[int, Any]],
            mapping: ResultMapping) -> Search | None:
    where = f"items[{k}] ({kind} {item.get('id') or item.get('call_id') or ''})".replace(" )", ")")
    if kind == "web_search_call":
        action = item.get("action") or {}
        if action.get("type", "search") != "search":
            return None
        queries = action.get("queries") or ([action["query"]] if isinstance(action.get("query"), str) else [])
        sources = action.get("sources")
        if sources is None:
            sources = returned_nothing(where, "no action.sources (ask for include=['web_search_call.action.sources'])")
        pages: list[Result] = []
        for j, s in enumerate(sources):
            source = _source(s)
            if source is None:
                warnings.warn(f"{where}: action.sources[{j}] has neither url nor name; skipped (nothing "
                              "identifies it)", InputWarning, stacklevel=2)
            else:
                pages.append(source)
        return Search(tuple(pages), " | ".join(q for q in queries if isinstance(q, str)) or None, "web_search",
                      {"call_id": item.get("id")})
    if kind == "file_search_call":
        found = item.get("results")
        if found is None:
            found = returned_nothing(where, "no results (ask for include=['file_search_call.results'])")
        files: list[Result] = []
        for j, r in enumerate(found):
            if not isinstance(r, dict) or not (r.get("file_id") or r.get("text")):
                raise InputError(f"{where}: results[{j}] has neither file_id nor text")
            files.append(Result(id=r.get("file_id"), title=r.get("filename"), content=r.get("text")))
        queries = [q for q in item.get("queries") or [] if isinstance(q, str)]
        return Search(tuple(files), " | ".join(queries) or None, "file_search", {"call_id": item.get("id")})
    if kind == "function_call" and mapping.is_search(item.get("name")):
        call_id = item.get("call_id")
        if call_id not in outputs:
            raise InputError(f"{where}: the search call has no function_call_output with this call_id")
        at, output = outputs[call_id]
        try:
            arguments = parse_payload(item.get("arguments") or "{}", "the call's arguments")
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
        try:
            results = mapping.results(parse_payload(output, "the function output"))
        except InputError as exc:
            raise InputError(f"items[{at}] (output of {call_id}): {exc}") from None
        return Search(results, mapping.query(arguments), item.get("name"), {"call_id": call_id})
    return None


def read_openai_responses(path: str | Path, *, mapping: ResultMapping | None = None) -> list[Conversation]:
    """Read a JSONL file of Responses items, one conversation per line (see the module docstring)."""
    p = Path(path)
    mapping = mapping or ResultMapping()
    out = []
    called: set[str] = set()
    for number, obj in json_lines(p):
        items = items_of(obj)
        if items is None:
            raise FormatError("expected a Response object (with output), {\"items\": [...]}, {\"data\": [...]} or an "
                              "array of Responses items", path=str(p), line=number)
        meta = obj if isinstance(obj, dict) else {}
        cid = str(meta.get("conversation_id") or meta.get("id") or f"{p.stem}:{number}")
        qid = None if meta.get("query_id") is None else str(meta["query_id"])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out.append(conversation_from_items(items, cid, query_id=qid, mapping=mapping, called=called))
            except InputError as exc:
                raise FormatError(str(exc), path=str(p), line=number) from None
        for w in caught:  # again, now naming the file and the line
            warnings.warn(f"{p}:{number}: {w.message}" if issubclass(w.category, InputWarning) else w.message,
                          w.category, stacklevel=2)
    check_matched(out, called, mapping, p)
    return out
