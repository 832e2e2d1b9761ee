"""The engine protocol: what a search engine adapter is, what it is asked and what it answers.

Every adapter (:mod:`~gainscope.search.embedded`, :mod:`~gainscope.search.http` for Elasticsearch, OpenSearch,
Solr and any HTTP JSON API, :mod:`~gainscope.search.python` for a Python callable) is an :class:`Engine`:

* ``prepare(query, knobs, top)`` renders the request for one query (templates, knobs, per-query options) without
  sending anything, so that a template that does not render fails before the first request;
* ``attempt(prepared)`` sends it once and returns a :class:`SearchResponse` -- the hits in rank order (id, score,
  display fields), the engine's total hit count, the raw response, the latency -- or raises
  :class:`~gainscope.errors.EngineRequestError` (which says whether a retry could help) or
  :class:`~gainscope.errors.EngineResponseError`;
* ``configuration(knobs)`` describes the engine (kind, address, templates, mapping, knob values; never a secret)
  for snapshots; its hash (:func:`configuration_hash`) tells two configurations apart.

Retries, throttling and recording are the caller's (:mod:`~gainscope.search.runner`), the same for every engine.
:meth:`Engine.search` is the one-query convenience: ``engine.search("star wars", {"title_boost": 3}, top=10)``.

A response with no hits is the engine saying "zero hits"; a query that could not be answered raises instead.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from gainscope.errors import EngineConfigError, EngineRequestError
from gainscope.net.retry import backoff_delay

__all__ = ["Engine", "Hit", "Prepared", "RetryPolicy", "SearchQuery", "SearchResponse", "check_hits",
           "configuration_hash", "search_once"]

RESERVED_KNOBS = ("query", "top", "opt", "env")


@dataclass(frozen=True)
class SearchQuery:
    """A query to send: its id (for runs and judgments), its text, and per-query options (``{{opt.x}}``)."""

    id: str
    text: str
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Hit:
    """One result: the document id, the engine's score (None when it gives none) and display fields."""

    id: str
    score: float | None = None
    fields: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """``{"id", "score", "fields"}`` (score and fields left out when absent)."""
        out: dict[str, Any] = {"id": self.id}
        if self.score is not None:
            out["score"] = self.score
        if self.fields:
            out["fields"] = dict(self.fields)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Hit:
        """The inverse of :meth:`to_json`."""
        score = data.get("score")
        return cls(str(data["id"]), None if score is None else float(score), dict(data.get("fields") or {}))


@dataclass(frozen=True)
class SearchResponse:
    """What an engine answered for one query.

    ``hits``: in the engine's rank order, each id once. ``total``: the engine's count of matching documents (None
    when it gives none). ``latency``: seconds from sending to the whole answer (the last attempt). ``raw``: the
    response as received (text), None for engines without one. ``request``: what was sent (method, URL, parameters,
    body; credentials replaced by ``***``). ``attempts``: requests sent for this answer, retries included.
    """

    hits: tuple[Hit, ...]
    total: int | None = None
    latency: float = 0.0
    raw: str | None = None
    request: Mapping[str, Any] | None = None
    attempts: int = 1

    @property
    def ids(self) -> list[str]:
        """The hit ids in rank order."""
        return [h.id for h in self.hits]


@dataclass(frozen=True)
class Prepared:
    """One query's request, rendered: ``request`` is its JSON-ready record (credentials as ``***``), ``payload``
    what the engine needs to send it (not recorded)."""

    query: SearchQuery
    top: int
    knobs: Mapping[str, Any]
    request: Mapping[str, Any]
    payload: Any = None


@dataclass(frozen=True)
class RetryPolicy:
    """How a query is retried: ``max_attempts`` attempts in all; exponential backoff with full jitter between
    ``backoff_base`` and ``backoff_max`` seconds, never less than a server's ``Retry-After``; a ``Retry-After``
    above ``max_retry_after`` ends the query instead."""

    max_attempts: int = 5
    backoff_base: float = 0.25
    backoff_max: float = 10.0
    max_retry_after: float = 120.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise EngineConfigError(f"max_attempts must be >= 1; got {self.max_attempts}")
        for name in ("backoff_base", "backoff_max", "max_retry_after"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and value >= 0 and math.isfinite(value)):
                raise EngineConfigError(f"{name} must be a number of seconds >= 0; got {value!r}")


@runtime_checkable
class Engine(Protocol):
    """A search engine adapter (see the module docstring)."""

    name: str
    kind: str

    @property
    def knobs(self) -> Mapping[str, Any]:
        """The knobs and their default values."""
        ...

    def prepare(self, query: SearchQuery, knobs: Mapping[str, Any], top: int) -> Prepared:
        """The request for ``query`` with ``knobs`` (every knob resolved), nothing sent."""
        ...

    async def attempt(self, prepared: Prepared) -> SearchResponse:
        """Send ``prepared`` once."""
        ...

    def configuration(self, knobs: Mapping[str, Any]) -> dict[str, Any]:
        """A JSON-ready description of the engine with these knob values (no secret)."""
        ...

    async def aclose(self) -> None:
        """Release connections and files."""
        ...

    def search(self, query: str | SearchQuery, params: Mapping[str, Any] | None = None, top: int = 10) -> \
            SearchResponse:
        """One query, retried by the default :class:`RetryPolicy`."""
        ...


def resolve_knobs(engine: str, defaults: Mapping[str, Any], overrides: Mapping[str, Any] | None) -> dict[str, Any]:
    """``defaults`` updated with ``overrides``; an override that names no knob is an error with close matches."""
    import difflib

    out = dict(defaults)
    for name, value in (overrides or {}).items():
        if name not in defaults:
            close = difflib.get_close_matches(name, list(defaults), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            listed = ", ".join(defaults) if defaults else "none"
            raise EngineConfigError(f"engine {engine!r} has no knob {name!r}{hint}; its knobs: {listed}")
        out[name] = value
    return out


def check_knob_names(engine: str, names: Mapping[str, Any]) -> None:
    """Knob names must be identifiers and not one of the built-in placeholder names."""
    import re

    for name in names:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(name)) or name in RESERVED_KNOBS:
            raise EngineConfigError(f"engine {engine!r}: {name!r} cannot be a knob name; use letters, digits and _ "
                                    f"(not starting with a digit), and none of {', '.join(RESERVED_KNOBS)}")


def configuration_hash(configuration: Mapping[str, Any]) -> str:
    """The SHA-256 (hex) of the configuration as canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(configuration, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_hits(engine: str, query: SearchQuery, hits: list[Hit], raw: str = "") -> tuple[Hit, ...]:
    """``hits`` as a tuple, refusing a response that names a document twice (a ranking names each once)."""
    from gainscope.errors import EngineResponseError

    seen: dict[str, int] = {}
    for rank, hit in enumerate(hits, start=1):
        if hit.id in seen:
            raise EngineResponseError(
                f"engine {engine!r}, query {query.id!r} ({query.text!r}): document {hit.id!r} is returned twice "
                f"(ranks {seen[hit.id]} and {rank}); a ranking names each document once. Check that the id mapping "
                "picks the document's unique id (not a field shared by several documents) and that the engine "
                "does not return several parts of one document", raw=raw[:500])
        seen[hit.id] = rank
    return tuple(hits)


async def search_once(engine: Engine, prepared: Prepared, policy: RetryPolicy, *,
                      rng: random.Random | None = None,
                      send: Callable[[Prepared], Awaitable[SearchResponse]] | None = None,
                      on_retry: Callable[[EngineRequestError, float], None] | None = None) -> SearchResponse:
    """Send ``prepared`` with retries: retryable failures (429, 5xx, timeouts, dropped connections) are tried again
    after a backoff (:func:`gainscope.net.retry.backoff_delay`), up to ``policy.max_attempts``; the last failure is
    raised with its ``attempts``. ``send`` sends one attempt (default: ``engine.attempt``; the runner wraps it in
    its concurrency slots and rate gate); ``on_retry(error, delay)`` is told before each backoff."""
    rng = rng or random.Random()
    send = send or engine.attempt
    attempt = 0
    while True:
        attempt += 1
        try:
            response = await send(prepared)
        except EngineRequestError as exc:
            exc.attempts = attempt
            too_long = exc.retry_after is not None and exc.retry_after > policy.max_retry_after
            if not exc.retryable or attempt >= policy.max_attempts or too_long:
                if too_long:
                    exc.args = (f"{exc.args[0]}; the server asks to wait {exc.retry_after:g} s, more than "
                                f"max_retry_after={policy.max_retry_after:g}",)
                elif exc.retryable:
                    exc.args = (f"{exc.args[0]} (after {attempt} attempt{'s' if attempt != 1 else ''})",)
                raise
            delay = backoff_delay(attempt, base=policy.backoff_base, ceiling=policy.backoff_max, rng=rng,
                                  retry_after=exc.retry_after)
            if on_retry is not None:
                on_retry(exc, delay)
            await asyncio.sleep(delay)
            continue
        if attempt > 1:
            response = SearchResponse(response.hits, response.total, response.latency, response.raw,
                                      response.request, attempt)
        return response


class EngineBase:
    """What every adapter shares: knob resolution, the one-query :meth:`search`, a no-op :meth:`aclose`."""

    name: str
    kind: str
    _knobs: dict[str, Any]

    @property
    def knobs(self) -> Mapping[str, Any]:
        """The knobs and their default values."""
        return dict(self._knobs)

    def resolve(self, overrides: Mapping[str, Any] | None) -> dict[str, Any]:
        """The default knobs updated with ``overrides`` (unknown names are an error)."""
        return resolve_knobs(self.name, self._knobs, overrides)

    async def aclose(self) -> None:
        """Nothing to release by default."""

    def search(self, query: str | SearchQuery, params: Mapping[str, Any] | None = None, top: int = 10) -> \
            SearchResponse:
        """One query (a text, or a :class:`SearchQuery` with options) with knob overrides ``params``, retried by the
        default :class:`RetryPolicy`."""
        q = query if isinstance(query, SearchQuery) else SearchQuery("q", query)
        prepared = self.prepare(q, self.resolve(params), top)  # type: ignore[attr-defined]

        async def one() -> SearchResponse:
            try:
                return await search_once(self, prepared, RetryPolicy())  # type: ignore[arg-type]
            finally:
                await self.aclose()

        return asyncio.run(one())


def elapsed(started: float) -> float:
    """Seconds since ``started`` (a ``time.perf_counter()`` value)."""
    return time.perf_counter() - started
