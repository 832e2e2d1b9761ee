"""Case files: JSON (always) or YAML (with PyYAML), read with every error located at ``file:line``.

::

    {
      "name": "Movies",                          // optional
      "scorer": "nDCG@10",                       // optional: a built-in name, "my_scorer.js" (relative to this
                                                 //   file) or {"name": ..., "code": "<JavaScript>"}
      "scale": [0, 1, 2, 3],                     // optional: a list, "0-3", "binary", "graded",
                                                 //   {"values": [...], "labels": {"0": "Poor", ...}}
      "engine": "engines.toml:shop",             // optional: the engine its queries run against (relative to this
                                                 //   file; gainscope case run), see gainscope.cases.live
      "try": {"knobs": {"title_boost": 3}},      // optional: Quepid's "try": knobs and template overrides
      "queries": [
        {"query": "star wars",                   // required, unique within the case
         "id": "q1",                             // optional, for exports (TREC ids)
         "ratings": {"doc1": 3, "doc7": 0},      // every rated document, returned or not
         "results": ["doc1", "doc7", "doc3"],    // the returned ids in rank order (a snapshot)
         "options": {"lang": "en"},              // what qOption(key) returns
         "num_found": 1234}                      // what numFound() returns (default: len(results))
      ]
    }

A case file never names a Python scorer (``module:function``): reading a case must not import code. Give Python
scorers on the command line or in Python.

In YAML, identifiers keep the text as written: the query text, its ``id``, the document ids that key
``ratings`` and the items of ``results`` are read as strings even unquoted, where YAML would turn ``007`` into
7, ``010`` into 8 (octal), ``0x1F`` into 31, ``12:30`` into 750 (base 60), ``1_000`` into 1000 and ``yes``
into True. Ratings, ``num_found``, ``scale`` and ``options`` are read with YAML's own types.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from gainscope.cases.located import line_of, load_json, load_yaml
from gainscope.cases.model import Case, CaseQuery
from gainscope.cases.scale import RatingScale
from gainscope.errors import FormatError, InputError, MissingDependencyError, option
from gainscope.io.writers import write_file

__all__ = ["case_from_dict", "case_to_dict", "read_case", "write_case"]

_CASE_KEYS = ("name", "scorer", "scale", "queries", "engine", "try")
_QUERY_KEYS = ("query", "id", "ratings", "results", "options", "num_found")


def _unknown_keys(obj: Mapping[str, Any], allowed: tuple[str, ...], what: str, path: str) -> None:
    for key in obj:
        if key not in allowed:
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f" (allowed: {', '.join(allowed)})"
            raise FormatError(f"unknown key {key!r} in {what}{hint}", path=path, line=line_of(obj))


def _fail(message: str, path: str, obj: Any, fallback: Any = None) -> FormatError:
    return FormatError(message, path=path, line=line_of(obj) or line_of(fallback))


def _query(obj: Any, index: int, path: str, parent: Any) -> CaseQuery:
    if not isinstance(obj, Mapping):
        raise _fail(f"query {index} must be an object with 'query', 'ratings' and 'results'; got {obj!r}", path,
                    obj, parent)
    _unknown_keys(obj, _QUERY_KEYS, f"query {index}", path)
    text = obj.get("query")
    if not isinstance(text, str) or not text:
        raise _fail(f"query {index} needs a non-empty 'query' text; got {text!r}", path, obj)
    where = f"query {text!r}"
    ratings = obj.get("ratings") or {}
    if not isinstance(ratings, Mapping):
        raise _fail(f"{where}: 'ratings' must map document ids to numbers; got {ratings!r}", path, obj)
    clean: dict[str, float] = {}
    for doc, rating in ratings.items():
        if isinstance(rating, bool) or not isinstance(rating, (int, float)):
            raise _fail(f"{where}: the rating of document {doc!r} must be a number; got {rating!r}", path,
                        ratings, obj)
        clean[str(doc)] = rating
    results = obj.get("results") or []
    if not isinstance(results, list) or not all(isinstance(d, (str, int)) and not isinstance(d, bool)
                                                for d in results):
        raise _fail(f"{where}: 'results' must be a list of document ids in rank order", path, obj)
    options = obj.get("options") or {}
    if not isinstance(options, Mapping):
        raise _fail(f"{where}: 'options' must be an object; got {options!r}", path, obj)
    num_found = obj.get("num_found")
    if num_found is not None and (isinstance(num_found, bool) or not isinstance(num_found, int) or num_found < 0):
        raise _fail(f"{where}: 'num_found' must be a count; got {num_found!r}", path, obj)
    qid = obj.get("id")
    if qid is not None and not isinstance(qid, (str, int)):
        raise _fail(f"{where}: 'id' must be a string; got {qid!r}", path, obj)
    try:
        return CaseQuery(text, clean, tuple(str(d) for d in results), dict(options), num_found,
                         None if qid is None else str(qid))
    except InputError as exc:
        raise _fail(str(exc), path, obj) from None


def case_from_dict(data: Any, *, source: str = "<case>") -> Case:
    """A case from the parsed document (see the module docstring)."""
    if not isinstance(data, Mapping):
        raise FormatError("a case is an object with 'queries' (and optionally 'scorer', 'scale', 'name')",
                          path=source, line=1)
    _unknown_keys(data, _CASE_KEYS, "the case", source)
    queries = data.get("queries")
    if not isinstance(queries, list):
        raise _fail("the case needs 'queries': a list of query objects", source, data)
    scale = None
    if data.get("scale") is not None:
        try:
            scale = RatingScale.parse(data["scale"])
        except InputError as exc:
            raise _fail(f"'scale': {exc}", source, data["scale"], data) from None
    scorer = data.get("scorer")
    if scorer is not None and not isinstance(scorer, (str, Mapping)):
        raise _fail(f"'scorer' is a name, a .js file or {{\"code\": ...}}; got {scorer!r}", source, data)
    parsed = [_query(q, i, source, data) for i, q in enumerate(queries, start=1)]
    seen: dict[str, int] = {}
    for i, (q, raw) in enumerate(zip(parsed, queries, strict=True), start=1):
        if q.query in seen:
            raise _fail(f"query {q.query!r} appears twice (queries {seen[q.query]} and {i}); a case holds each "
                        f"query text once", source, raw)
        seen[q.query] = i
        if scale is not None:
            for doc, rating in q.ratings.items():
                try:
                    scale.check(rating, f"query {q.query!r}, document {doc!r}")
                except InputError as exc:
                    raise _fail(str(exc), source, raw) from None
    name = data.get("name")
    engine, try_ = data.get("engine"), data.get("try")
    if engine is not None and not isinstance(engine, str):
        raise _fail(f"'engine' is FILE.toml:NAME, an index folder or module:function; got {engine!r}", source, data)
    if try_ is not None and not isinstance(try_, Mapping):
        raise _fail(f"'try' is an object such as {{\"knobs\": {{\"title_boost\": 3}}}}; got {try_!r}", source, data)
    return Case(tuple(parsed), scale, dict(scorer) if isinstance(scorer, Mapping) else scorer,
                None if name is None else str(name), source, engine=engine,
                try_=None if try_ is None else dict(try_))


def _id_nodes(root: Any) -> Iterator[Any]:
    """The YAML nodes of a case that hold identifiers: each query's ``query`` and ``id`` values, the keys of its
    ``ratings`` and the items of its ``results``."""
    import yaml  # type: ignore[import-untyped]

    def entries(node: Any) -> Iterator[tuple[Any, Any]]:
        if isinstance(node, yaml.MappingNode):
            yield from ((k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode))

    def get(node: Any, key: str) -> Any:
        return next((v for k, v in entries(node) if k.value == key), None)

    queries = get(root, "queries")
    for query in queries.value if isinstance(queries, yaml.SequenceNode) else ():
        yield from (node for node in (get(query, "query"), get(query, "id")) if node is not None)
        yield from (k for k, _ in entries(get(query, "ratings")))
        results = get(query, "results")
        if isinstance(results, yaml.SequenceNode):
            yield from results.value


def read_case(path: str | Path) -> Case:
    """Read a case file (``.yaml``/``.yml`` as YAML, anything else as JSON)."""
    p = Path(path)
    if p.suffix.lower() in (".js", ".mjs"):
        raise FormatError(f"a JavaScript file is a scorer, not a case: give a case file (JSON or YAML) and this file "
                          f"as the scorer ({option('scorer', str(p))})", path=str(p))
    try:
        text = p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FormatError(f"not UTF-8 ({exc.reason} at byte {exc.start})", path=str(p)) from None
    if p.suffix.lower() in (".yaml", ".yml"):
        data = load_yaml(text, str(p), text_nodes=_id_nodes)
    else:
        data = load_json(text, str(p))
    return case_from_dict(data, source=str(p))


def case_to_dict(case: Case) -> dict[str, Any]:
    """The case as a case file holds it."""
    out: dict[str, Any] = {}
    if case.name is not None:
        out["name"] = case.name
    if case.scorer is not None:
        out["scorer"] = case.scorer if isinstance(case.scorer, (str, dict)) else getattr(case.scorer, "name", None)
    if case.scale is not None:
        out["scale"] = case.scale.to_json()
    if case.engine is not None:
        out["engine"] = case.engine
    if case.try_ is not None:
        out["try"] = dict(case.try_)
    queries = []
    for q in case.queries:
        item: dict[str, Any] = {"query": q.query}
        if q.id is not None:
            item["id"] = q.id
        item["ratings"] = dict(q.ratings)
        item["results"] = list(q.results)
        if q.options:
            item["options"] = dict(q.options)
        if q.num_found is not None:
            item["num_found"] = q.num_found
        queries.append(item)
    out["queries"] = queries
    return out


def write_case(case: Case, path: str | Path | None = None) -> str:
    """The case file's text (JSON, or YAML for a ``.yaml``/``.yml`` path, which needs PyYAML); written to
    ``path`` when given."""
    data = case_to_dict(case)
    if path is not None and Path(path).suffix.lower() in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:
            raise MissingDependencyError(f"{path}: writing YAML needs PyYAML; pip install pyyaml, or write JSON") \
                from None
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    else:
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if path is not None:
        write_file(path, text)
    return str(text)

