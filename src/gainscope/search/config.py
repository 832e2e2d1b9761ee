"""Engines by name: declared in TOML (one table per engine), an index folder, a Python function or an object.

::

    [engines.shop]
    kind = "http"                  # embedded | elasticsearch | opensearch | solr | http | python
    url = "http://127.0.0.1:9200/products/_search"
    method = "GET"                 # or POST with body = '''{"query": ... "{{query}}" ...}'''
    params = { q = "{{query}}", boost = "{{title_boost}}" }
    headers = { Authorization = "ApiKey {{env.SHOP_API_KEY}}" }   # credentials: environment variables only
    docs = "hits.items"            # JMESPath to the list of hits
    id = "pid"                     # JMESPath inside one hit
    score = "score"                # optional
    total = "hits.total"           # optional
    fields = { title = "name" }    # optional display fields: name = JMESPath inside one hit
    timeout = 30                   # seconds per attempt (optional)
    [engines.shop.knobs]
    title_boost = 2

Keys by kind (every kind takes ``knobs`` and ``description``):

* ``embedded``: ``index`` (the folder ``gainscope index`` built, relative to the TOML file), ``display`` (stored
  fields to return with hits). Knobs ``k1``, ``b`` and ``<field>_boost`` exist already; ``knobs`` sets their
  defaults.
* ``http``, ``elasticsearch``, ``opensearch``, ``solr``: ``url``, ``method``, ``params``, ``body``, ``headers``,
  ``basic_auth`` (two environment variable names), ``docs``, ``id``, ``score``, ``total``, ``fields``,
  ``display`` (Elasticsearch/OpenSearch: ``_source`` fields; Solr: document fields), ``timeout``,
  ``max_response_mb``, ``verify`` (false, or a CA bundle path). See :mod:`gainscope.search.http` for the defaults
  of each kind.
* ``python``: ``function = "module:function"``.

:func:`load_engine` takes what the command line's ``--engine`` takes: ``FILE.toml:NAME`` (``FILE.toml`` alone
when it declares one engine), an index folder, or ``module:function``.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gainscope.errors import EngineConfigError, FormatError, InputError
from gainscope.search.engine import Engine
from gainscope.search.http import DEFAULT_MAX_RESPONSE_MB, DEFAULT_TIMEOUT, HTTP_KINDS, PRESETS, close_match

__all__ = ["KINDS", "as_engine", "engine_from_table", "load_engine", "read_engines"]

KINDS = ("embedded", *HTTP_KINDS, "python")
_COMMON = ("kind", "knobs", "description")
_KEYS = {
    "embedded": (*_COMMON, "index", "display"),
    "python": (*_COMMON, "function"),
    **{kind: (*_COMMON, "url", "method", "params", "body", "headers", "basic_auth", "docs", "id", "score", "total",
              "fields", "display", "timeout", "max_response_mb", "verify") for kind in HTTP_KINDS},
}


def read_engines(path: str | Path) -> dict[str, dict[str, Any]]:
    """The ``[engines.NAME]`` tables of a TOML file, by name."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FormatError(f"not UTF-8 ({exc.reason} at byte {exc.start})", path=str(p)) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise FormatError(f"not valid TOML: {exc}", path=str(p)) from None
    engines = data.get("engines")
    if not isinstance(engines, dict) or not engines:
        raise EngineConfigError(f"{p}: no engine declared; declare one as a table [engines.NAME] with kind = ...")
    for name, table in engines.items():
        if not isinstance(table, dict):
            raise EngineConfigError(f"{p}: engines.{name} must be a table ([engines.{name}])")
    return engines


def engine_from_table(name: str, table: Mapping[str, Any], *, base: str | Path | None = None) -> Engine:
    """An engine from its declaration (see the module docstring); ``base`` is the TOML file, which relative
    paths are resolved against."""
    kind = table.get("kind")
    if kind not in KINDS:
        hint = close_match(str(kind), list(KINDS)) if isinstance(kind, str) else f" (one of {', '.join(KINDS)})"
        raise EngineConfigError(f"engine {name!r}: kind = {kind!r} is not a kind of engine{hint}")
    for key in table:
        if key not in _KEYS[kind]:
            hint = close_match(key, list(_KEYS[kind]))
            raise EngineConfigError(f"engine {name!r} ({kind}): unknown key {key!r}{hint}")
    knobs = table.get("knobs") or {}
    if not isinstance(knobs, Mapping):
        raise EngineConfigError(f"engine {name!r}: knobs must be a table ([engines.{name}.knobs])")
    folder = Path(base).parent if base is not None else Path.cwd()
    if kind == "embedded":
        from gainscope.search.embedded import EmbeddedEngine

        index = table.get("index")
        if not isinstance(index, str):
            raise EngineConfigError(f"engine {name!r}: an embedded engine needs index = \"FOLDER\" (built by "
                                    "gainscope index)")
        display = table.get("display")
        return EmbeddedEngine(folder / index, name=name, knobs=knobs, display=_strings(name, "display", display))
    if kind == "python":
        from gainscope.plugins import load_object
        from gainscope.search.python import PythonEngine

        function = table.get("function")
        if not isinstance(function, str) or ":" not in function:
            raise EngineConfigError(f"engine {name!r}: a python engine needs function = \"module:function\"")
        return PythonEngine(load_object(function, "engine"), name=name, knobs=knobs, target=function)
    return _http_engine(name, kind, table, knobs)


def _strings(name: str, key: str, value: Any) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise EngineConfigError(f"engine {name!r}: {key} must be a list of field names; got {value!r}")
    return list(value)


def _http_engine(name: str, kind: str, table: Mapping[str, Any], knobs: Mapping[str, Any]) -> Engine:
    from gainscope.search.http import HttpEngine, ResponseMapping

    preset = PRESETS[kind]
    if "url" not in table or not isinstance(table["url"], str):
        example = {"elasticsearch": "http://127.0.0.1:9200/INDEX/_search", "opensearch":
                   "http://127.0.0.1:9200/INDEX/_search", "solr": "http://127.0.0.1:8983/solr/COLLECTION/select"}
        raise EngineConfigError(f"engine {name!r}: url = \"...\" is required (for example "
                                f"{example.get(kind, 'http://127.0.0.1:8080/search')})")
    url = table["url"]
    if kind in ("elasticsearch", "opensearch") and "_search" not in url:
        raise EngineConfigError(f"engine {name!r}: an {kind} url ends in /_search (for example "
                                f"http://127.0.0.1:9200/INDEX/_search); got {url!r}")
    params = table.get("params", preset.get("params"))
    if kind == "solr" and "params" in table:  # the user's parameters over Solr's defaults
        params = {**preset["params"], **table["params"]}
    if params is not None and not isinstance(params, Mapping):
        raise EngineConfigError(f"engine {name!r}: params must be a table (params = {{ q = \"{{{{query}}}}\" }})")
    body = table.get("body", preset.get("body") if "params" not in table or kind != "http" else None)
    if body is not None and not isinstance(body, str):
        raise EngineConfigError(f"engine {name!r}: body must be a JSON template in a string (body = '''{{...}}''')")
    method = table.get("method", "POST" if kind == "http" and body is not None else preset["method"])
    if not isinstance(method, str):
        raise EngineConfigError(f"engine {name!r}: method must be \"GET\" or \"POST\"; got {method!r}")
    headers = table.get("headers") or {}
    if not isinstance(headers, Mapping) or not all(isinstance(v, str) for v in headers.values()):
        raise EngineConfigError(f"engine {name!r}: headers must be a table of texts")
    auth = table.get("basic_auth")
    if auth is not None and (not isinstance(auth, list) or len(auth) != 2 or not all(isinstance(a, str) for a in auth)):
        raise EngineConfigError(f"engine {name!r}: basic_auth names two environment variables, the user's and the "
                                "password's: basic_auth = [\"ES_USER\", \"ES_PASSWORD\"]")
    fields = dict(table.get("fields") or {})
    source = preset.get("source")
    for shown in _strings(name, "display", table.get("display")) or []:
        if source is None:
            raise EngineConfigError(f"engine {name!r}: display is for elasticsearch, opensearch and solr; give a "
                                    "generic http engine fields = { NAME = \"JMESPath\" }")
        fields.setdefault(shown, f"{source}.\"{shown}\"" if source else f"\"{shown}\"")
    for key in ("docs", "id"):
        if key not in table and key not in preset:
            raise EngineConfigError(f"engine {name!r}: {key} = \"JMESPath\" is required for an http engine ("
                                    + ("the path of the list of hits in the response, e.g. \"hits.items\")"
                                       if key == "docs" else "the path of the document id in one hit, e.g. \"id\")"))
    mapping = ResponseMapping(docs=table.get("docs", preset.get("docs")), id=table.get("id", preset.get("id")),
                       score=table.get("score", preset.get("score")), total=table.get("total", preset.get("total")),
                       fields=fields)
    verify = table.get("verify", True)
    if not isinstance(verify, bool | str):
        raise EngineConfigError(f"engine {name!r}: verify is true, false or the path of a CA bundle")
    return HttpEngine(name, kind, url=url, method=method, params=params, body=body, headers=headers,
                      basic_auth=tuple(auth) if auth else None, mapping=mapping, knobs=knobs,
                      timeout=table.get("timeout", DEFAULT_TIMEOUT),
                      max_response_mb=table.get("max_response_mb", DEFAULT_MAX_RESPONSE_MB), verify=verify)


def load_engine(spec: str | Path, *, display: list[str] | None = None,
                overrides: Mapping[str, Any] | None = None) -> Engine:
    """The engine ``spec`` names: ``FILE.toml:NAME``, ``FILE.toml`` (one engine), an index folder, or
    ``module:function``. ``overrides`` replace keys of a TOML declaration (a case's try: ``url``, ``params``,
    ``body``, ...); other engines take none."""
    text = str(spec)
    path = Path(text)
    file, sep, name = text.rpartition(":")
    toml = None
    if sep and file.lower().endswith(".toml"):
        toml = file
    elif text.lower().endswith(".toml"):
        toml, name = text, ""
    if overrides and toml is None:
        raise EngineConfigError(f"engine {text!r} is not declared in TOML, so {', '.join(sorted(overrides))} cannot "
                                "be changed; a try sets knobs only for it")
    if path.is_dir():
        from gainscope.search.embedded import EmbeddedEngine

        return EmbeddedEngine(path, display=display)
    if toml is not None:
        if not Path(toml).exists():
            raise InputError(f"{toml}: no such file")
        engines = read_engines(toml)
        if not name:
            if len(engines) != 1:
                raise EngineConfigError(f"{toml} declares {len(engines)} engines ({', '.join(engines)}); pick one: "
                                        f"{toml}:NAME")
            name = next(iter(engines))
        if name not in engines:
            raise EngineConfigError(f"{toml} declares no engine {name!r}{close_match(name, list(engines))}")
        return engine_from_table(name, {**engines[name], **(overrides or {})}, base=toml)
    if sep and file and name and "/" not in file:
        from gainscope.plugins import load_object
        from gainscope.search.python import PythonEngine

        return PythonEngine(load_object(text, "engine"), target=text)
    raise EngineConfigError(f"cannot tell what engine {text!r} is: give FILE.toml:NAME (an engine declared in TOML), "
                            "an index folder built by gainscope index, or module:function (a Python engine)"
                            + ("; that folder does not exist" if not path.exists() and "/" in text else ""))


def as_engine(engine: Any) -> Engine:
    """An :class:`~gainscope.search.engine.Engine` from an engine object, a callable (a Python engine) or what
    :func:`load_engine` takes."""
    if isinstance(engine, Engine):
        return engine
    if isinstance(engine, str | Path):
        return load_engine(engine)
    if callable(engine):
        from gainscope.search.python import PythonEngine

        return PythonEngine(engine)
    raise EngineConfigError(f"an engine is an Engine, a function (query, params, top) -> hits, FILE.toml:NAME, an "
                            f"index folder or module:function; got {type(engine).__name__}")
