"""Live search: send queries to an engine, record what comes back, and measure configurations against each other.

* :mod:`~gainscope.search.engine`: the :class:`Engine` protocol (``search(query, params, top) -> hits``), hits and
  responses, retries;
* adapters: :mod:`~gainscope.search.embedded` (BM25 over a folder built by ``gainscope index``, no server),
  :mod:`~gainscope.search.http` (Elasticsearch, OpenSearch, Solr and any HTTP JSON API mapped with JMESPath),
  :mod:`~gainscope.search.python` (a Python function: dense, hybrid, RAG retrievers);
* :mod:`~gainscope.search.config`: engines declared in TOML, one table per engine; :mod:`~gainscope.search.templates`:
  ``{{query}}``, ``{{knob}}``, ``{{opt.x}}`` placeholders escaped for where they land;
* :mod:`~gainscope.search.store` and :mod:`~gainscope.search.runner`: throttled, retried, resumable runs into a
  snapshot store, replay without requests, snapshots as runs;
* :mod:`~gainscope.search.experiment`: every configuration of a parameter grid, evaluated and compared;
* :mod:`~gainscope.search.server`: an embedded index behind a small HTTP JSON API (``gainscope serve-engine``).

::

    from gainscope.search import SnapshotStore, load_engine, read_search_queries, search_queries

    engine = load_engine("engines.toml:shop")                    # or an index folder, or a function
    engine.search("star wars", {"title_boost": 3}, top=10).ids   # one query
    with SnapshotStore.open("snapshots.sqlite") as store:
        outcome = search_queries(engine, read_search_queries("queries.jsonl"), store, knobs={"title_boost": 3})
        run, notes = results_to_run(outcome.results, name="shop")
"""

from __future__ import annotations

from gainscope.search.config import as_engine, load_engine, read_engines
from gainscope.search.engine import Engine, Hit, RetryPolicy, SearchQuery, SearchResponse
from gainscope.search.queries import read_search_queries
from gainscope.search.runner import (
    Progress,
    RunOutcome,
    RunSettings,
    replay,
    results_to_run,
    run_queries,
    run_tag,
    search_queries,
)
from gainscope.search.store import QueryResult, Snapshot, SnapshotStore

__all__ = [
    "Engine",
    "Hit",
    "Progress",
    "QueryResult",
    "RetryPolicy",
    "RunOutcome",
    "RunSettings",
    "SearchQuery",
    "SearchResponse",
    "Snapshot",
    "SnapshotStore",
    "as_engine",
    "load_engine",
    "read_engines",
    "read_search_queries",
    "replay",
    "results_to_run",
    "run_queries",
    "run_tag",
    "search_queries",
]
