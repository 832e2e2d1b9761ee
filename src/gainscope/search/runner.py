"""Run queries against an engine into a snapshot: throttled, retried, resumable; and turn snapshots into runs.

:func:`run_queries` (async) and :func:`search_queries` (its synchronous wrapper):

1. every query's request is rendered first (:meth:`Engine.prepare`), so a template that does not render, a missing
   option or a missing credential stops the run before anything is sent;
2. the snapshot is found by name in the store (created when new; default name ``ENGINE@HASH8``, the first 8 hex
   digits of the configuration hash) -- a snapshot of that name taken with another configuration is an error;
   a snapshot holds every query sent with its configuration, so two query files sent with one configuration into
   one store share it (give them names to keep them apart) --
   and the queries already recorded in it are not sent again (``rerun_failed`` sends those recorded as failed
   again). So a run killed at any moment resumes where it stopped;
3. the other queries are sent with at most ``concurrency`` requests in flight and, with ``qps``, at most ``qps``
   requests in any second (retries included: they are requests too); each query is retried as
   :class:`~gainscope.search.engine.RetryPolicy` says (429, 5xx, timeouts and dropped connections, with backoff and
   jitter, never sooner than ``Retry-After``). A ``Retry-After`` also holds every other request for that long (the
   server asked); a 429 without one holds them for the query's backoff only when there is no ``qps`` cap (with a
   cap the load is bounded already, and the rejected query alone waits, its backoff capped by
   :func:`capped_backoff`). A slot is held only while a request is
   in flight, never during a backoff, so other queries use it meanwhile;
4. each query is recorded when it ends: ``ok`` with its hits (zero hits included), or ``failed`` with its error --
   never as an empty list;
5. the run stops early, leaving the remaining queries unsent and unrecorded, when the engine refuses in a way
   that would repeat for every query (401, 403, 404, ...) or when ``max_consecutive_failures`` queries in a row
   have failed (an engine that is down, a mapping that never matches): :class:`RunOutcome.stopped` says why.

:func:`replay` reads a snapshot back, sending nothing. :func:`results_to_run` turns results into a
:class:`~gainscope.Run`: a query's scores are the engine's when they strictly decrease down its list; when any
query's scores tie, are missing or are out of order, every query gets ``n - rank + 1`` instead (``scores="auto"``),
so that trec_eval's ordering (score descending, ties by doc id) is exactly the engine's order; the engine's scores
stay in the snapshot. ``scores="engine"`` keeps them regardless.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gainscope.errors import (
    EngineConfigError,
    EngineRequestError,
    EngineResponseError,
    EngineStoppedError,
    InconsistentInputError,
    InputError,
    format_ids,
)
from gainscope.net.limits import Gate
from gainscope.search.engine import (
    Engine,
    Prepared,
    RetryPolicy,
    SearchQuery,
    SearchResponse,
    configuration_hash,
    resolve_knobs,
    search_once,
)
from gainscope.search.store import QueryResult, Snapshot, SnapshotStore, utc_now

__all__ = ["Progress", "RunOutcome", "RunSettings", "cooldown", "default_snapshot_name", "empty_queries", "replay",
           "results_to_run", "run_queries", "run_tag", "search_queries", "unordered_queries"]


@dataclass(frozen=True)
class RunSettings:
    """How queries are sent (see the module docstring). ``top``: results asked for per query."""

    top: int = 100
    concurrency: int = 4
    qps: float | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    max_consecutive_failures: int = 10
    rerun_failed: bool = False
    seed: int | None = None

    def __post_init__(self) -> None:
        for name in ("top", "concurrency", "max_consecutive_failures"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise EngineConfigError(f"{name} must be an integer >= 1; got {value!r}")
        if self.qps is not None and (not isinstance(self.qps, int | float) or not math.isfinite(self.qps)
                                     or self.qps <= 0):
            raise EngineConfigError(f"qps must be a number > 0; got {self.qps!r}")


@dataclass
class Progress:
    """Where a run is: queries to send this time, ended (ok + failed), failed, recorded before, requests sent, and
    the seconds since it started."""

    total: int
    reused: int
    done: int = 0
    failed: int = 0
    requests: int = 0
    started: float = field(default_factory=time.perf_counter)

    @property
    def elapsed(self) -> float:
        """Seconds since the start."""
        return time.perf_counter() - self.started

    @property
    def rate(self) -> float:
        """Queries ended per second so far."""
        seconds = self.elapsed
        return self.done / seconds if seconds > 0 else 0.0


@dataclass(frozen=True)
class RunOutcome:
    """What a run left in its snapshot: every recorded result of these queries (in query order), what was sent this
    time and what was reused, the failures, and why the run stopped early (None when it did not)."""

    snapshot: Snapshot
    results: tuple[QueryResult, ...]
    sent: int
    reused: int
    requests: int
    stopped: EngineStoppedError | None = None
    unsent: tuple[str, ...] = ()

    @property
    def failed(self) -> list[QueryResult]:
        """The queries recorded as failed."""
        return [r for r in self.results if not r.ok]

    @property
    def complete(self) -> bool:
        """Every query was answered by the engine."""
        return not self.unsent and not self.failed


def run_tag(engine: str, knobs: Mapping[str, Any]) -> str:
    """The TREC run tag of a configuration: ``engine:knob=value,...`` (knobs sorted), whitespace as ``_``."""
    from gainscope.search.templates import as_text

    text = engine + (":" + ",".join(f"{k}={as_text(v)}" for k, v in sorted(knobs.items())) if knobs else "")
    return "".join("_" if c.isspace() else c for c in text) or "search"


def default_snapshot_name(engine: str, digest: str) -> str:
    """``ENGINE@HASH8``."""
    return f"{engine}@{digest[:8]}"


def _check_queries(queries: Sequence[SearchQuery]) -> None:
    if not queries:
        raise InputError("no query to send")
    seen: dict[str, int] = {}
    for i, q in enumerate(queries, start=1):
        if q.id in seen:
            raise InconsistentInputError(f"query id {q.id!r} is used twice (queries {seen[q.id]} and {i}); ids "
                                         "key the run and the judgments, so each query needs its own")
        seen[q.id] = i


def _snapshot(store: SnapshotStore, engine: Engine, knobs: Mapping[str, Any], top: int, name: str | None,
              note: str | None, source: str | None, label: str | None) -> Snapshot:
    configuration = {**engine.configuration(knobs), "top": top}
    digest = configuration_hash(configuration)
    name = name or default_snapshot_name(label or engine.name, digest)
    found = store.find(name)
    if found is None:
        return store.create(name=name, engine=engine.name, kind=engine.kind, configuration=configuration,
                            configuration_hash=digest, knobs=knobs, top=top, note=note, source=source)
    if found.configuration_hash != digest:
        changed = _differences(found.configuration, configuration)
        raise InputError(f"{store.path}: snapshot {name!r} was taken with another configuration ({changed}); give "
                         "this one another name (--name), or use the snapshot's own configuration to resume it")
    return found


def _differences(old: Mapping[str, Any], new: Mapping[str, Any], prefix: str = "") -> str:
    changes = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            changes.append(_differences(a, b, f"{prefix}{key}."))
        else:
            changes.append(f"{prefix}{key}: {a!r} then, {b!r} now")
    return "; ".join(c for c in changes if c) or "its hash differs"


async def run_queries(engine: Engine, queries: Sequence[SearchQuery], store: SnapshotStore, *,
                      knobs: Mapping[str, Any] | None = None, name: str | None = None, note: str | None = None,
                      source: str | None = None, settings: RunSettings | None = None,
                      progress: Callable[[Progress], None] | None = None, label: str | None = None) -> RunOutcome:
    """Send ``queries`` to ``engine`` with ``knobs`` (overriding its defaults) into the snapshot ``name`` of
    ``store`` (see the module docstring; the default name is ``LABEL@HASH8``, ``label`` defaulting to the
    engine's name)."""
    settings = settings or RunSettings()
    _check_queries(queries)
    values = resolve_knobs(engine.name, engine.knobs, knobs)
    prepared = [engine.prepare(q, values, settings.top) for q in queries]  # every template renders, or nothing is sent
    snapshot = _snapshot(store, engine, values, settings.top, name, note, source, label)
    recorded = store.statuses(snapshot)
    todo = [(i, p) for i, p in enumerate(prepared) if recorded.get(p.query.id) != "ok"
            and (recorded.get(p.query.id) != "failed" or settings.rerun_failed)]
    state = Progress(total=len(todo), reused=len(prepared) - len(todo))
    if progress is not None:
        progress(state)
    stopped: list[EngineStoppedError] = []
    if todo:
        try:
            await _send_all(engine, snapshot, store, todo, settings, state, stopped, progress)
        finally:
            await engine.aclose()
    statuses = store.statuses(snapshot)
    wanted = {q.id for q in queries}
    results = tuple(r for r in store.results(snapshot) if r.query_id in wanted)
    unsent = tuple(q.id for q in queries if q.id not in statuses)
    return RunOutcome(snapshot, results, state.done, state.reused, state.requests, stopped[0] if stopped else None,
                      unsent)


def cooldown(error: EngineRequestError, delay: float, qps: float | None) -> float | None:
    """How long every other request waits after ``error``, which its query retries after ``delay``: the server's
    ``Retry-After`` when it gave one (it asked everybody); for a 429 without one, ``delay`` when no ``qps`` cap
    bounds the load; otherwise None (the rejected query alone waits)."""
    if error.retry_after is not None:
        return error.retry_after
    if error.status == 429 and qps is None:
        return delay
    return None


def capped_backoff(policy: RetryPolicy, qps: float | None, concurrency: int) -> RetryPolicy:
    """The retry policy of a run: with a ``qps`` cap the load on the engine is bounded by the gate whatever is
    retried, so a failed query waits at most the time its ``concurrency`` slots take to pass the gate once
    (``concurrency / qps`` seconds, never less than ``backoff_base``) instead of a growing backoff that leaves the
    engine idle at the end of a run; a ``Retry-After`` is still honoured in full. Without a cap, ``policy``."""
    if qps is None:
        return policy
    ceiling = min(policy.backoff_max, max(policy.backoff_base, concurrency / qps))
    return dataclasses.replace(policy, backoff_max=ceiling)


class _Stop(Exception):
    """The run stopped before this attempt was sent."""


async def _send_all(engine: Engine, snapshot: Snapshot, store: SnapshotStore, todo: list[tuple[int, Prepared]],
                    settings: RunSettings, state: Progress, stopped: list[EngineStoppedError],
                    progress: Callable[[Progress], None] | None) -> None:
    slots = asyncio.Semaphore(settings.concurrency)
    gate = Gate(requests=settings.qps, length=1.0, sleep=asyncio.sleep, clock=time.monotonic)
    retry = capped_backoff(settings.retry, settings.qps, settings.concurrency)
    rng = random.Random(settings.seed)
    pending = iter(todo)
    in_a_row = [0]

    async def send(p: Prepared) -> SearchResponse:
        async with slots:
            await gate.enter()
            if stopped:
                raise _Stop
            state.requests += 1
            return await engine.attempt(p)

    def on_retry(error: EngineRequestError, delay: float) -> None:
        pause = cooldown(error, delay, settings.qps)
        if pause is not None:
            gate.cool_down(pause)

    def stop(reason: str) -> None:
        if not stopped:
            stopped.append(EngineStoppedError(reason))

    async def worker() -> None:
        for position, p in pending:
            if stopped:
                return
            sent = utc_now()
            try:
                response = await search_once(engine, p, retry, rng=rng, send=send, on_retry=on_retry)
            except _Stop:
                return
            except EngineRequestError as exc:
                result = _failed(p, position, sent, exc.attempts, str(exc), exc.status)
                if exc.fatal:
                    stop(f"engine {engine.name!r} refused a request in a way that would repeat for every query: "
                         f"{exc}")
            except EngineResponseError as exc:
                result = _failed(p, position, sent, 1, str(exc), None, exc.raw)
            else:
                in_a_row[0] = 0
                result = QueryResult(p.query.id, position, p.query.text, "ok", sent, response.attempts,
                                     dict(p.query.options), response.request or p.request, response.raw,
                                     response.hits, response.total, response.latency)
            if not result.ok:
                state.failed += 1
                in_a_row[0] += 1
                if in_a_row[0] >= settings.max_consecutive_failures:
                    stop(f"engine {engine.name!r}: {in_a_row[0]} queries in a row failed (the last, "
                         f"{p.query.id!r}: {result.error}); the engine may be down or the mapping wrong")
            store.record(snapshot, result)
            state.done += 1
            if progress is not None:
                progress(state)

    workers = max(1, min(len(todo), settings.concurrency * 4))
    await asyncio.gather(*(worker() for _ in range(workers)))


def _failed(p: Prepared, position: int, sent: str, attempts: int, error: str, status: int | None,
            raw: str | None = None) -> QueryResult:
    return QueryResult(p.query.id, position, p.query.text, "failed", sent, attempts, dict(p.query.options),
                       p.request, raw, (), None, None, status, error)


def search_queries(engine: Any, queries: Sequence[SearchQuery], store: SnapshotStore, **kwargs: Any) -> RunOutcome:
    """:func:`run_queries` from synchronous code; ``engine`` is anything :func:`~gainscope.search.as_engine`
    takes."""
    from gainscope.search.config import as_engine

    return asyncio.run(run_queries(as_engine(engine), queries, store, **kwargs))


def replay(store: SnapshotStore, name: str) -> tuple[Snapshot, list[QueryResult]]:
    """A snapshot and its results, read back; nothing is sent."""
    snapshot = store.get(name)
    return snapshot, store.results(snapshot, responses=False)


def results_to_run(results: Sequence[QueryResult], *, name: str, scores: str = "auto") -> tuple[Any, list[str]]:
    """The answered queries of ``results`` as a :class:`~gainscope.Run` named ``name``, and notes on what was
    done (see the module docstring for ``scores``) and on the queries answered with no document (a TREC run
    cannot hold them). Failed queries are left out (the caller reports them)."""
    import polars as pl

    from gainscope.core.run import Run

    if scores not in ("auto", "engine"):
        raise EngineConfigError(f"scores must be 'auto' or 'engine'; got {scores!r}")
    answered = [r for r in results if r.ok]
    unordered = unordered_queries(results)
    rank_scores = scores == "auto" and bool(unordered)
    rows: dict[str, list[Any]] = {"query_id": [], "doc_id": [], "score": [], "rank": []}
    for r in answered:
        n = len(r.hits)
        for rank, hit in enumerate(r.hits, start=1):
            rows["query_id"].append(r.query_id)
            rows["doc_id"].append(hit.id)
            rows["rank"].append(rank)
            rows["score"].append(float(n - rank + 1) if rank_scores or hit.score is None else hit.score)
    frame = pl.DataFrame(rows, schema={"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64,
                                       "rank": pl.Int64})
    notes = []
    empty = empty_queries(results)
    if empty:
        notes.append(f"{len(empty)} quer{'y' if len(empty) == 1 else 'ies'} ({format_ids(empty)}) came back with no "
                     "document, so the run has no line for "
                     f"{'it' if len(empty) == 1 else 'them'}: evaluated, a judged query without a ranking scores 0 "
                     "(trec_eval -c)")
    if unordered:
        what = (f"{len(unordered)} quer{'y' if len(unordered) == 1 else 'ies'} ({format_ids(unordered)}) came back "
                "with scores that tie, are missing or do not decrease")
        if rank_scores:
            notes.append(f"{what}; trec_eval would order ties by doc id, which is not the engine's order, so the run's "
                         "scores are n - rank + 1 (the engine's order) for every query; the engine's scores are in the "
                         "snapshot")
        else:
            notes.append(f"{what}; the run keeps the engine's scores (scores='engine'), so trec_eval orders their ties "
                         "by doc id, not as the engine did")
    return Run(frame, name=name), notes


def unordered_queries(results: Sequence[QueryResult]) -> list[str]:
    """The answered queries whose scores tie, are missing or do not strictly decrease down the list: their engine
    order is not what trec_eval's ordering (score descending, ties by doc id) would give."""
    return [r.query_id for r in results if r.ok and not _strictly_decreasing([h.score for h in r.hits])]


def empty_queries(results: Sequence[QueryResult]) -> list[str]:
    """The answered queries that came back with no document."""
    return [r.query_id for r in results if r.ok and not r.hits]


def _strictly_decreasing(values: list[float | None]) -> bool:
    previous = math.inf
    for value in values:
        if value is None or not value < previous:
            return False
        previous = value
    return True
