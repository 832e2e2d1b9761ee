"""Where a search tool's results are and which of their fields are the id, URL, title, snippet and content.

Agent logs carry a search tool's output as whatever JSON the tool returned. A :class:`ResultMapping` says

* which tool names are searches (``search_tools``). A trace file that calls tools, none of them a search,
  is refused (:func:`check_matched`): every conversation would have no iteration, a table of zeros;
* where the list of results is in the tool's output: a JSON path (``results_path``) in the subset
  ``$``, ``.key``, ``['key']``, ``[n]`` and ``[*]`` (e.g. ``$.data.web.results``, ``$.hits[*]._source``).
  Without one, the output itself when it is a list, else the first list under ``results``, ``documents``,
  ``items``, ``hits``, ``data`` or ``organic_results``;
* which keys of a result give each field (``fields``): a dotted path or several candidates tried in order.
  The defaults cover the usual spellings (``link``/``href`` for the URL, ``page_content``/``text`` for the
  content, ``metadata.url`` ...); a field given in ``fields`` replaces its defaults, and a key given for one
  field is no longer a default of another;
* which argument of the tool call is the query (``query_arguments``);
* which key of a result holds its gain (``gain``, a dotted path such as ``gain`` or ``meta.label``): an
  integer 0-4 (``3``, ``3.0`` or ``"3"``; null is no gain). Without it gains in tool outputs are not read --
  search tools return results, not relevance labels -- so gains for chat, Responses and OTel traces come from
  judgments (``--judgments``) or a judge (``--model``) unless the gain key is given (``--field gain=KEY``). A
  gain key that no result of a file has is refused (:func:`check_matched`).

A result given as a plain string is a URL when it starts with ``http://`` or ``https://``, else content.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gainscope.agents.trace import MAX_GAIN, RESULT_FIELDS, Conversation, Result
from gainscope.errors import InputError, PolicyError, format_ids

__all__ = ["DEFAULT_FIELDS", "DEFAULT_SEARCH_TOOLS", "ResultMapping", "check_matched", "json_path", "parse_json_path",
           "parse_payload"]

DEFAULT_SEARCH_TOOLS = ("search", "web_search", "search_web", "retrieve", "retrieval", "file_search",
                        "search_documents", "vector_search")
DEFAULT_FIELDS: dict[str, tuple[str, ...]] = {
    "id": ("id", "doc_id", "document_id", "docid", "_id", "source_id", "metadata.id", "metadata.doc_id"),
    "domain_id": (),
    "url": ("url", "link", "href", "uri", "source_url", "metadata.url", "metadata.source_url", "metadata.source"),
    "title": ("title", "name", "metadata.title"),
    "snippet": ("snippet", "description", "summary", "excerpt", "highlight"),
    "content": ("content", "text", "page_content", "body", "chunk", "passage"),
}
_AUTO_LISTS = ("results", "documents", "items", "hits", "data", "organic_results")
_TOKEN = re.compile(r"\.([A-Za-z_][\w\-]*)|\[(\d+)\]|\[\*\]|\['((?:[^'\\]|\\.)*)'\]|\[\"((?:[^\"\\]|\\.)*)\"\]")


def parse_json_path(path: str) -> tuple[str | int | None, ...]:
    """``"$.a[0].b[*]"`` -> ``("a", 0, "b", None)`` (None is ``[*]``); PolicyError for anything else."""
    text = path.strip()
    if not text.startswith("$"):
        text = "$." + text
    steps: list[str | int | None] = []
    pos = 1
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise PolicyError(f"cannot read the JSON path {path!r} at position {pos}; use $, .key, ['key'], [n] "
                              "and [*], e.g. $.data.results or $.hits[*]._source")
        if m.group(1) is not None:
            steps.append(m.group(1))
        elif m.group(2) is not None:
            steps.append(int(m.group(2)))
        elif m.group(3) is not None or m.group(4) is not None:
            steps.append(m.group(3) if m.group(3) is not None else m.group(4))
        else:
            steps.append(None)
        pos = m.end()
    return tuple(steps)


def json_path(value: Any, steps: tuple[str | int | None, ...]) -> list[Any]:
    """Every value the path reaches (``[*]`` fans out); an empty list when it reaches nothing."""
    current = [value]
    for step in steps:
        nxt: list[Any] = []
        for v in current:
            if step is None:
                if isinstance(v, list):
                    nxt.extend(v)
                elif isinstance(v, dict):
                    nxt.extend(v.values())
            elif isinstance(step, int):
                if isinstance(v, list) and step < len(v):
                    nxt.append(v[step])
            elif isinstance(v, dict) and step in v:
                nxt.append(v[step])
        current = nxt
    return current


def _dotted(obj: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(obj, dict) and part in obj:
            obj = obj[part]
        else:
            return None
    return obj


def _as_text(value: Any) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        return value if value.strip() else None  # blank is absent
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):  # highlights given as a list
        return " ".join(value) if "".join(value).strip() else None
    return None


@dataclass(frozen=True)
class ResultMapping:
    """How to find results in a search tool's output (see the module docstring)."""

    search_tools: tuple[str, ...] = DEFAULT_SEARCH_TOOLS
    results_path: str | None = None
    fields: Mapping[str, str | tuple[str, ...]] = field(default_factory=dict)
    query_arguments: tuple[str, ...] = ("query", "q", "search_query", "queries", "question")
    gain: str | None = None

    def __post_init__(self) -> None:
        if self.gain is not None and not self.gain.strip():
            raise PolicyError("the gain key must not be blank")
        unknown = [f for f in self.fields if f not in RESULT_FIELDS]
        if unknown:
            raise PolicyError(f"unknown result field {unknown[0]!r} in the mapping; fields: {', '.join(RESULT_FIELDS)}")
        if self.results_path is not None:
            parse_json_path(self.results_path)

    def is_search(self, tool_name: str | None) -> bool:
        """Whether a tool of this name is a search."""
        return tool_name is not None and tool_name in self.search_tools

    def candidates(self, name: str) -> tuple[str, ...]:
        """The keys tried, in order, for one result field: the ones given, else the defaults less any key given
        for another field (``fields={"domain_id": "docid"}`` keeps ``docid`` out of the generic id)."""
        given = self.fields.get(name)
        if given is None:
            claimed = {k for v in self.fields.values() for k in ((v,) if isinstance(v, str) else v)}
            return tuple(k for k in DEFAULT_FIELDS[name] if k not in claimed)
        return (given,) if isinstance(given, str) else tuple(given)

    def result_list(self, output: Any) -> list[Any]:
        """The results in a tool's parsed output (InputError when there is no list where expected)."""
        if self.results_path is not None:
            found = json_path(output, parse_json_path(self.results_path))
            if len(found) == 1 and isinstance(found[0], list):
                return list(found[0])
            if "[*]" in self.results_path:
                return found
            if not found:
                raise InputError(f"the results path {self.results_path} reaches nothing in the tool output")
            raise InputError(f"the results path {self.results_path} reaches {_describe(found[0])}, not a list")
        if isinstance(output, list):
            return output
        if isinstance(output, dict):
            for key in _AUTO_LISTS:
                if isinstance(output.get(key), list):
                    return list(output[key])
            if any(_dotted(output, k) is not None for f in RESULT_FIELDS for k in self.candidates(f)):
                return [output]  # a single result
            raise InputError(f"no list of results in the tool output (keys: {', '.join(output) or 'none'}); "
                             "give the JSON path of the results (results_path / --results-path)")
        raise InputError(f"the tool output is {_describe(output)}, not results; give the JSON path of the results")

    def result(self, item: Any) -> Result:
        """One result from one item of the list (InputError when nothing identifies it)."""
        if isinstance(item, str):
            text = item.strip()
            if not text:
                raise InputError("an empty string where a result was expected")
            return Result(url=text) if text.startswith(("http://", "https://")) else Result(content=text)
        if not isinstance(item, dict):
            raise InputError(f"a result is {_describe(item)}; expected an object or a string")
        values: dict[str, str | None] = {}
        for name in RESULT_FIELDS:
            values[name] = None
            for key in self.candidates(name):
                found = _as_text(_dotted(item, key))
                if found is not None:
                    values[name] = found
                    break
        if all(v is None for v in values.values()):
            keys = ", ".join(item) or "none"
            raise InputError(f"a result without id, url, title, snippet or content (keys: {keys}); map its fields "
                             "with fields= / --field FIELD=KEY")
        return Result(id=values["id"], domain_id=values["domain_id"], url=values["url"], title=values["title"],
                      snippet=values["snippet"], content=values["content"], gain=self._gain(item))

    def _gain(self, item: dict[str, Any]) -> int | None:
        if self.gain is None:
            return None
        value = _dotted(item, self.gain.strip())
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_GAIN:
            raise InputError(f"the gain (key {self.gain}) must be an integer 0-{MAX_GAIN}; got {value!r}")
        return value

    def results(self, output: Any) -> tuple[Result, ...]:
        """Every result of a tool's parsed output, in order."""
        out = []
        for k, item in enumerate(self.result_list(output)):
            try:
                out.append(self.result(item))
            except InputError as exc:
                raise InputError(f"result {k}: {exc}") from None
        return tuple(out)

    def query(self, arguments: Any) -> str | None:
        """The query of a tool call from its (parsed) arguments; several queries are joined with `` | ``."""
        if isinstance(arguments, str):
            return arguments or None
        if not isinstance(arguments, dict):
            return None
        for key in self.query_arguments:
            v = arguments.get(key)
            if isinstance(v, str) and v:
                return v
            if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
                return " | ".join(v)
        return None


def parse_payload(text: Any, what: str) -> Any:
    """A tool's output or arguments: JSON text parsed, structured values as they are; content-part lists
    (``[{"type": "text", "text": ...}]``) joined first. InputError when text is not JSON."""
    if isinstance(text, list) and text and all(isinstance(p, dict) and "text" in p for p in text):
        text = "".join(str(p["text"]) for p in text)
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{what} is not JSON ({exc.msg}): {text[:80]!r}") from None


def _describe(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def check_matched(conversations: Sequence[Conversation], called: Collection[str], mapping: ResultMapping,
                  path: object) -> None:
    """Refuse a trace file that the mapping matches nothing in, which would be read as a table of zeros:

    * tool calls (``called``: the names of every tool called) none of which is a search -- every conversation
      would have ``N = 0``; a file that calls no tool at all is what the agent did, and is read as it is;
    * a gain key (``gain``) that no result of the file has -- every gain would be undefined."""
    searches = [s for c in conversations for t in c.turns for it in t.search_iterations() for s in it.searches]
    if called and not searches:
        tools = sorted(called)
        name = tools[0] if len(tools) == 1 else "NAME"
        raise InputError(f"{path}: no tool call is a search, so no conversation would have a search iteration: the "
                         f"tools called are {format_ids(tools)}, and the search tools are "
                         f"{', '.join(mapping.search_tools)}; name the search tool with --search-tool {name} "
                         f"(search_tools=({name!r},) of ResultMapping in Python)")
    results = [r for s in searches for r in s.results]
    if mapping.gain is not None and results and all(r.gain is None for r in results):
        raise InputError(f"{path}: none of the {len(results)} search results has a gain under the key "
                         f"{mapping.gain!r} (--field gain={mapping.gain}; gain={mapping.gain!r} of ResultMapping in "
                         "Python), so every gain would be undefined; give the key that holds the results' gains, or "
                         "take gains from --judgments or --model")
