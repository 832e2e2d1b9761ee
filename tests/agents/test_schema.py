"""The JSON Schema of the native trace format and the reader agree: on the example traces and on a table of
edge cases (blank strings count as absent, null for an optional field is absent, integral numbers as ids).

jsonschema is not a dependency: :func:`validate` is a small checker of the keywords the schema uses, and it
refuses any keyword it does not know, so the schema cannot silently rely on one it skips."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from gainscope.agents.trace import conversation_from_dict, read_traces, schema
from gainscope.errors import InputError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "agents" / "traces.jsonl"
_ANNOTATIONS = {"$schema", "$id", "title", "description", "$defs"}
_TYPES: dict[str, Any] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "null": lambda v: v is None,
    "boolean": lambda v: isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    # JSON Schema: an integer is any number with a zero fractional part (3.0 is one)
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer()),
}


def errors(value: Any, node: dict[str, Any], root: dict[str, Any], where: str = "$") -> list[str]:
    """Every place where ``value`` breaks ``node`` (draft 2020-12, the keywords the trace schema uses)."""
    out: list[str] = []
    for key, arg in node.items():
        if key in _ANNOTATIONS:
            continue
        if key == "$ref":
            assert arg.startswith("#/$defs/"), arg
            out += errors(value, root["$defs"][arg.removeprefix("#/$defs/")], root, where)
        elif key == "type":
            types = [arg] if isinstance(arg, str) else arg
            if not any(_TYPES[t](value) for t in types):
                out.append(f"{where}: not {'/'.join(types)}")
        elif key == "required":
            if isinstance(value, dict):
                out += [f"{where}: missing {k}" for k in arg if k not in value]
        elif key == "properties":
            if isinstance(value, dict):
                for k, sub in arg.items():
                    if k in value:
                        out += errors(value[k], sub, root, f"{where}.{k}")
        elif key == "additionalProperties":
            assert arg is False
            if isinstance(value, dict):
                out += [f"{where}: unknown {k}" for k in value if k not in node.get("properties", {})]
        elif key == "items":
            if isinstance(value, list):
                for k, item in enumerate(value):
                    out += errors(item, arg, root, f"{where}[{k}]")
        elif key == "anyOf":
            if all(errors(value, sub, root, where) for sub in arg):
                out.append(f"{where}: none of anyOf")
        elif key == "minimum":
            if _TYPES["number"](value) and value < arg:
                out.append(f"{where}: < {arg}")
        elif key == "maximum":
            if _TYPES["number"](value) and value > arg:
                out.append(f"{where}: > {arg}")
        elif key == "pattern":
            if isinstance(value, str) and re.search(arg, value) is None:
                out.append(f"{where}: does not match {arg}")
        elif key == "minLength":
            if isinstance(value, str) and len(value) < arg:
                out.append(f"{where}: shorter than {arg}")
        else:
            raise AssertionError(f"the schema uses {key!r}, which this checker does not know")
    return out


def schema_valid(obj: Any) -> bool:
    return not errors(obj, schema(), schema())


def reader_valid(obj: Any) -> bool:
    try:
        conversation_from_dict(obj)
    except InputError:
        return False
    return True


def test_checker_knows_the_schema() -> None:
    # a few sanity checks of the checker itself
    assert schema_valid({"conversation_id": "c", "turns": []})
    assert errors({"turns": []}, schema(), schema()) == ["$: missing conversation_id"]
    assert not schema_valid({"conversation_id": "c", "turns": [], "x": 1})


def test_example_traces_are_valid() -> None:
    lines = [json.loads(line) for line in EXAMPLES.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert lines
    for obj in lines:
        assert errors(obj, schema(), schema()) == []
    assert len(read_traces(EXAMPLES)) == len(lines)


def with_result(**result: Any) -> dict[str, Any]:
    return {"conversation_id": "c", "turns": [{"iterations": [{"searches": [{"results": [result]}]}]}]}


BASE: dict[str, Any] = {"conversation_id": "c", "query_id": "q", "metadata": {"a": 1}, "turns": [
    {"query": "q?", "metadata": {}, "iterations": [{"searches": [
        {"query": "s", "tool": "web", "metadata": {}, "results": [{"id": "r", "gain": 2}]}]}]}]}


def edit(path: str, value: Any) -> dict[str, Any]:
    """BASE with the key at ``path`` (dotted, numbers index lists) set to ``value``, or deleted for ...."""
    obj = copy.deepcopy(BASE)
    *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
    node: Any = obj
    for p in parents:
        node = node[p]
    if value is ...:
        del node[last]
    else:
        node[last] = value
    return obj


SEARCH = "turns.0.iterations.0.searches.0"
CASES: list[tuple[str, Any, bool]] = [
    ("base", BASE, True),
    # results: at least one identifying field that is not blank
    ("url only", with_result(url="https://a.org"), True),
    ("null url beside a title", with_result(url=None, title="x", gain=2), True),
    ("every field null", with_result(id=None, url=None, title=None), False),
    ("empty title only", with_result(title=""), False),
    ("whitespace title only", with_result(title="   ", gain=2), False),
    ("whitespace fields only", with_result(title=" ", snippet="\t", content="\n", url=" "), False),
    ("blank url beside an id", with_result(url="", id="x"), True),
    ("integer id", with_result(id=0), True),
    ("integral float id", with_result(domain_id=3.0), True),
    ("boolean id", with_result(id=True), False),
    ("number url", with_result(url=5), False),
    ("object title", with_result(title={"a": 1}), False),
    ("null gain", with_result(id="x", gain=None), True),
    ("integral float gain", with_result(id="x", gain=2.0), True),
    ("fractional gain", with_result(id="x", gain=2.5), False),
    ("gain 5", with_result(id="x", gain=5), False),
    ("negative gain", with_result(id="x", gain=-1), False),
    ("string gain", with_result(id="x", gain="3"), False),
    ("boolean gain", with_result(id="x", gain=True), False),
    ("unknown result key", with_result(id="x", snipet="s"), False),
    ("null result metadata", with_result(id="x", metadata=None), True),
    ("array result metadata", with_result(id="x", metadata=[]), False),
    ("result not an object", edit(f"{SEARCH}.results.0", "https://a.org"), False),
    # searches, iterations, turns
    ("null results", edit(f"{SEARCH}.results", None), True),
    ("no results", edit(f"{SEARCH}.results", ...), True),
    ("results an object", edit(f"{SEARCH}.results", {}), False),
    ("null search query and tool", edit(SEARCH, {"query": None, "tool": None, "results": []}), True),
    ("number tool", edit(f"{SEARCH}.tool", 3), False),
    ("blank search query", edit(f"{SEARCH}.query", " "), True),
    ("iteration without searches", edit("turns.0.iterations.0", {}), False),
    ("null searches", edit("turns.0.iterations.0.searches", None), False),
    ("iteration metadata", edit("turns.0.iterations.0.metadata", {}), False),
    ("turn without iterations", edit("turns.0.iterations", ...), False),
    ("null turn query", edit("turns.0.query", None), True),
    ("null turn metadata", edit("turns.0.metadata", None), True),
    # the conversation
    ("integer conversation id", edit("conversation_id", 7), True),
    ("empty conversation id", edit("conversation_id", ""), False),
    ("blank conversation id", edit("conversation_id", "  "), False),
    ("null conversation id", edit("conversation_id", None), False),
    ("no conversation id", edit("conversation_id", ...), False),
    ("null query id", edit("query_id", None), True),
    ("blank query id", edit("query_id", " "), True),
    ("boolean query id", edit("query_id", False), False),
    ("null turns", edit("turns", None), False),
    ("null metadata", edit("metadata", None), True),
    ("unknown key", edit("conversation", "c"), False),
    ("not an object", [BASE], False),
]


@pytest.mark.parametrize(("name", "obj", "valid"), CASES, ids=[c[0] for c in CASES])
def test_schema_and_reader_agree(name: str, obj: Any, valid: bool) -> None:
    assert (schema_valid(obj), reader_valid(obj)) == (valid, valid), errors(obj, schema(), schema())


def test_blank_strings_and_nulls_are_absent() -> None:
    conv = conversation_from_dict(edit("query_id", " "))
    assert conv.qid == "c"  # a blank query id is no query id
    conv = conversation_from_dict(with_result(url="", title="  ", id=3.0, snippet="s", gain=None))
    r = conv.last_turn.iterations[0].searches[0].results[0]
    assert (r.url, r.title, r.id, r.snippet, r.gain) == (None, None, "3", "s", None)


def test_a_blank_result_names_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "ws.jsonl"
    p.write_text(json.dumps(BASE) + "\n" + json.dumps(with_result(title="   ", gain=2)) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(f"{p}:2: turns[0].iterations[0].searches[0].results[0]: a "
                                                   "result needs at least one of id, domain_id, url, title, "
                                                   "snippet, content (blank strings count as absent)")):
        read_traces(p)
