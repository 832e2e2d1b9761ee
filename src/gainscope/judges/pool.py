"""Which (query, document) pairs to judge: the top ``depth`` documents of each run (a depth-k pool, as TREC
builds its pools), or an explicit list of pairs.

Each run is ordered as gainscope evaluates it by default: by score descending with ties broken by doc id
descending (bytewise, as trec_eval); a run without scores in its rank order, else in the order given. Pairs come
out in query order (as first seen), then in rank order of the first run that retrieved them; each pair once.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gainscope.core.run import Run
from gainscope.deferred import deferred_module
from gainscope.errors import FormatError, PolicyError

if TYPE_CHECKING:
    import polars as pl
else:
    pl = deferred_module("polars")

__all__ = ["pool_runs", "read_pairs"]


def _ordered(run: Run) -> pl.DataFrame:
    frame = run.frame.with_row_index("_order")
    if run.has_scores:
        frame = frame.with_columns(pl.col("doc_id").cast(pl.Binary).alias("_bytes"))
        return frame.sort(["query_id", "score", "_bytes"], descending=[False, True, True], maintain_order=True)
    if run.has_ranks:
        return frame.sort(["query_id", "rank", "_order"], maintain_order=True)
    return frame.sort(["query_id", "_order"], maintain_order=True)


def pool_runs(runs: Sequence[Run], depth: int) -> list[tuple[str, str]]:
    """The union of the top ``depth`` documents of every run, per query."""
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise PolicyError(f"the pool depth must be an integer >= 1; got {depth!r}")
    seen: dict[tuple[str, str], None] = {}
    first_query: dict[str, int] = {}
    for run in runs:
        top = _ordered(run).group_by("query_id", maintain_order=True).head(depth)
        for q, d in zip(top["query_id"].to_list(), top["doc_id"].to_list(), strict=True):
            first_query.setdefault(q, len(first_query))
            seen.setdefault((q, d), None)
    return sorted(seen, key=lambda pair: first_query[pair[0]])  # stable: rank order kept within a query


def read_pairs(path: str | Path) -> list[tuple[str, str]]:
    """Explicit pairs: ``query_id doc_id`` per line (whitespace- or tab-separated; more columns are ignored,
    so a qrels or run file works too when its first two useful columns are the ids); ``#`` comments."""
    p = Path(path)
    out: dict[tuple[str, str], None] = {}
    with p.open(encoding="utf-8-sig") as f:
        for number, line in enumerate(f, start=1):
            body = line.split("#", 1)[0].split()
            if not body:
                continue
            if len(body) < 2:
                raise FormatError("expected 'query_id doc_id'", path=str(p), line=number, text=line.rstrip())
            if len(body) >= 4:  # qrels (q 0 d g) or run (q Q0 d rank score tag): the doc id is the third column
                out.setdefault((body[0], body[2]), None)
            else:
                out.setdefault((body[0], body[1]), None)
    return list(out)
