"""A Python callable as a search engine: dense, hybrid or RAG retrievers, anything Python can query.

The callable is called as ``fn(query, params, top)``: the query text, the knob values (a dict, a fresh copy per
call) and the number of results wanted; when it accepts a keyword ``options`` (or ``**kwargs``), the query's
options are passed too. It may be a coroutine function (awaited) or a plain function (run in a worker thread, so
that ``--concurrency`` queries run at once). It returns, in rank order, any of:

* a list of document ids (``["d3", "d1"]``), of ``(id, score)`` pairs, of :class:`~gainscope.search.engine.Hit`\\s,
  or of dicts ``{"id" (or "_id", "doc_id"), "score"?, "fields"?}``;
* a dict ``{"hits": [...], "total": n}`` (the list as above), or a
  :class:`~gainscope.search.engine.SearchResponse`.

An empty list is zero hits. An exception fails that query (not retried) unless it is an
:class:`~gainscope.errors.EngineRequestError` with ``retryable=True``; anything else returned is an
:class:`~gainscope.errors.EngineResponseError` naming the function, the query and what came back.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import time
from collections.abc import Callable, Mapping
from typing import Any

from gainscope.errors import EngineConfigError, EngineRequestError, EngineResponseError
from gainscope.search.engine import (
    EngineBase,
    Hit,
    Prepared,
    SearchQuery,
    SearchResponse,
    check_hits,
    check_knob_names,
)

__all__ = ["PythonEngine"]

_ID_KEYS = ("id", "_id", "doc_id", "docid")


class PythonEngine(EngineBase):
    """A search engine that is a Python function (see the module docstring); ``target`` is its ``module:name``
    (recorded with snapshots), ``knobs`` its tunable parameters with their defaults."""

    kind = "python"

    def __init__(self, function: Callable[..., Any], *, name: str | None = None,
                 knobs: Mapping[str, Any] | None = None, target: str | None = None) -> None:
        if not callable(function):
            raise EngineConfigError(f"a Python engine is a function (query, params, top) -> hits; got {function!r}")
        self.function = function
        qualified = f"{getattr(function, '__module__', '?')}:{getattr(function, '__qualname__', repr(function))}"
        self.target = target or qualified
        self.name = name or str(getattr(function, "__name__", "python"))
        self._knobs = dict(knobs or {})
        check_knob_names(self.name, self._knobs)
        self._async = inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(
            type(function).__call__)
        try:
            parameters = inspect.signature(function).parameters.values()
        except (TypeError, ValueError):
            parameters = ()  # type: ignore[assignment]
        self._options = any(p.name == "options" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)

    def configuration(self, knobs: Mapping[str, Any]) -> dict[str, Any]:
        """The function's ``module:name`` and the knob values."""
        return {"kind": self.kind, "function": self.target, "knobs": dict(knobs)}

    def prepare(self, query: SearchQuery, knobs: Mapping[str, Any], top: int) -> Prepared:
        """The call to make (nothing is called yet)."""
        request = {"function": self.target, "query": query.text, "top": top, "params": dict(knobs)}
        if self._options and query.options:
            request["options"] = dict(query.options)
        return Prepared(query, top, dict(knobs), request)

    async def attempt(self, prepared: Prepared) -> SearchResponse:
        """Call the function once and read what it returns."""
        query = prepared.query
        kwargs = {"options": dict(query.options)} if self._options else {}
        started = time.perf_counter()
        try:
            if self._async:
                result = await self.function(query.text, dict(prepared.knobs), prepared.top, **kwargs)
            else:
                result = await asyncio.to_thread(self.function, query.text, dict(prepared.knobs), prepared.top,
                                                 **kwargs)
        except EngineRequestError:
            raise
        except Exception as exc:
            raise EngineRequestError(f"engine {self.name!r}, query {query.id!r} ({query.text!r}): {self.target} "
                                     f"raised {type(exc).__name__}: {exc}") from exc
        latency = time.perf_counter() - started
        if isinstance(result, SearchResponse):
            return SearchResponse(check_hits(self.name, query, list(result.hits)), result.total,
                                  result.latency or latency, result.raw, prepared.request)
        where = f"engine {self.name!r}, query {query.id!r} ({query.text!r}): {self.target}"
        total = None
        items = result
        if isinstance(result, Mapping):
            if "hits" not in result:
                raise EngineResponseError(f"{where} returned a dict without 'hits' (keys: "
                                          f"{', '.join(map(str, result))}); return a list of hits or "
                                          "{'hits': [...], 'total': n}")
            items, total = result["hits"], result.get("total")
            if total is not None and (isinstance(total, bool) or not isinstance(total, int) or total < 0):
                raise EngineResponseError(f"{where} returned total {total!r}, not a count")
        if isinstance(items, str | bytes) or not hasattr(items, "__iter__"):
            raise EngineResponseError(f"{where} returned {type(items).__name__} {str(items)[:60]!r}; return a list "
                                      "of ids, of (id, score) pairs or of {'id': ..., 'score': ...} dicts")
        hits = [_hit(item, rank, where) for rank, item in enumerate(items, start=1)]
        return SearchResponse(check_hits(self.name, query, hits), total, latency, None, prepared.request)


def _hit(item: Any, rank: int, where: str) -> Hit:
    if isinstance(item, Hit):
        return item
    score: Any = None
    fields: Any = {}
    if isinstance(item, str | int) and not isinstance(item, bool):
        ident: Any = item
    elif isinstance(item, tuple | list) and len(item) == 2:
        ident, score = item
    elif isinstance(item, Mapping):
        key = next((k for k in _ID_KEYS if k in item), None)
        if key is None:
            raise EngineResponseError(f"{where}: hit {rank} has no id (a dict needs one of {', '.join(_ID_KEYS)}; "
                                      f"keys: {', '.join(map(str, item))})")
        ident, score = item[key], item.get("score")
        fields = item.get("fields") or {k: v for k, v in item.items() if k not in (key, "score")}
    else:
        raise EngineResponseError(f"{where}: hit {rank} is {type(item).__name__} {str(item)[:60]!r}; a hit is an id, "
                                  "an (id, score) pair or a dict with an id")
    if isinstance(ident, bool) or not isinstance(ident, str | int) or (isinstance(ident, str) and not ident.strip()):
        raise EngineResponseError(f"{where}: hit {rank} has the id {ident!r}; an id is a non-empty text or an integer")
    bad_score = isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score)
    if score is not None and bad_score:
        raise EngineResponseError(f"{where}: hit {rank} ({ident!r}) has the score {score!r}, not a finite number")
    if not isinstance(fields, Mapping):
        raise EngineResponseError(f"{where}: hit {rank} ({ident!r}): 'fields' must be a dict; got {fields!r}")
    return Hit(str(ident), None if score is None else float(score), dict(fields))
