"""``fuse``: several runs become one, by a declared method over declared normalisations.

The steps, all vectorised over every (query, document) pair:

1. each run is put in gainscope's order (:func:`gainscope.io.writers.trec_order`: score descending, equal scores
   by doc id descending, bytewise, as trec_eval; a run without scores in its rank order) and its ranks numbered
   1..n per query, so rank-based methods have a rank for every document even among tied scores;
2. the candidates of a query are the documents at least one run retrieved for it; a query that only some runs
   rank is fused from those runs (with a warning);
3. each run's scores are normalised per query (:mod:`~gainscope.fusion.normalization`), then the method
   (:mod:`~gainscope.fusion.methods`) gives every candidate its fused score;
4. the fused run holds every candidate with its fused score and its rank in gainscope's order: equal fused
   scores are ordered by doc id descending, the tie rule of every gainscope evaluation and of the TREC file it
   writes.
"""

from __future__ import annotations

import difflib
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from gainscope.core.run import Run, run_list
from gainscope.errors import InputError, InputWarning, PolicyError, QueryCoverageWarning, format_ids, option
from gainscope.fusion.methods import METHODS, Candidates, FusionMethod
from gainscope.fusion.normalization import NORMALIZATIONS, Normalization

__all__ = ["DEFAULT_RRF_K", "Fusion", "candidates", "fuse", "fused_run", "fusion"]

#: RRF's constant, as Cormack et al. (2009) and ranx
DEFAULT_RRF_K = 60.0

_METHOD_ALIASES = {"sum": "combsum", "mnz": "combmnz", "max": "combmax", "min": "combmin", "med": "combmed",
                   "anz": "combanz"}  # ranx's names
_NORM_ALIASES = {"min-max": "minmax", "min_max": "minmax"}


@dataclass(frozen=True)
class Fusion:
    """A checked fusion request: the method, the normalisation, the weights (None: 1 each) and RRF's ``k``."""

    method: FusionMethod
    norm: Normalization
    weights: tuple[float, ...] | None
    k: float

    def weight_vector(self, runs: int) -> np.ndarray:
        """The weights as an array (1 for every run when none were given)."""
        return np.ones(runs) if self.weights is None else np.array(self.weights, dtype=np.float64)

    def describe(self) -> str:
        """``rrf (k=60)``, ``wsum (norm minmax, weights 0.3, 0.7)``: what was fused how, for notes."""
        parts = []
        if self.method.uses == "scores":
            parts.append(f"norm {self.norm.name}")
        if self.method.name == "rrf":
            parts.append(f"k={self.k:g}")
        if self.weights is not None:
            parts.append("weights " + ", ".join(f"{w:g}" for w in self.weights))
        return self.method.name + (f" ({', '.join(parts)})" if parts else "")


def _named(kind: str, value: str, known: dict[str, Any], aliases: dict[str, str]) -> str:
    key = aliases.get(value, value)
    if key in known:
        return key
    close = difflib.get_close_matches(value, list(known) + list(aliases), n=2, cutoff=0.6)
    hint = f" Did you mean {' or '.join(repr(aliases.get(c, c)) for c in close)}?" if close else ""
    raise PolicyError(f"unknown fusion {kind} {value!r}.{hint} The {kind}s are: {', '.join(known)}")


def fusion(method: str, *, runs: int, norm: str | None = None, weights: Sequence[float] | None = None,
           rrf_k: float | None = None) -> Fusion:
    """Check a fusion request for ``runs`` runs (see :func:`fuse` for the arguments)."""
    m = METHODS[_named("method", method, METHODS, _METHOD_ALIASES)]
    if norm is None:
        n = NORMALIZATIONS["minmax" if m.uses == "scores" else "none"]
    else:
        n = NORMALIZATIONS[_named("normalisation", norm, NORMALIZATIONS, _NORM_ALIASES)]
        if m.uses == "ranks" and n.name != "none":
            raise PolicyError(f"{m.name} reads only ranks, which {option('norm', n.name)} does not change; leave the "
                              f"normalisation out, or use a score-based method ({option('method', ('combsum', 'wsum'))}"
                              ", ...)")
    if weights is not None:
        if not m.weighted:
            weighted = ", ".join(x.name for x in METHODS.values() if x.weighted)
            raise PolicyError(f"{m.name} takes no {option('weights', ..., cli='--weights')}; the weighted methods are "
                              f"{weighted}")
        ws = tuple(weights)
        if len(ws) != runs:
            raise PolicyError(f"{len(ws)} weight(s) for {runs} runs in {option('weights', ..., cli='--weights')}; give "
                              "one weight per run, in the order of the runs")
        for w in ws:
            if isinstance(w, bool) or not isinstance(w, int | float) or not math.isfinite(w) or w < 0:
                raise PolicyError(f"a weight must be a finite number >= 0; got {w!r}")
        if not any(ws):
            raise PolicyError("every weight is 0; give at least one run a positive weight")
        weights = tuple(float(w) for w in ws)
    k = DEFAULT_RRF_K
    if rrf_k is not None:
        if m.name != "rrf":
            raise PolicyError(f"{option('rrf_k', ..., cli='--rrf-k')} is RRF's constant; {m.name} does not use it")
        if isinstance(rrf_k, bool) or not isinstance(rrf_k, int | float) or not math.isfinite(rrf_k) or rrf_k < 0:
            raise PolicyError(f"{option('rrf_k', ..., cli='--rrf-k')} must be a finite number >= 0; got {rrf_k!r}")
        k = float(rrf_k)
    return Fusion(m, n, weights, k)


def _ordered(runs: Sequence[Run], needs_scores: bool) -> pl.DataFrame:
    """Every run's rows in gainscope's order, with ``run`` (its index) and ``rank`` (1..n per query)."""
    from gainscope.io.writers import trec_order

    frames = []
    for i, run in enumerate(runs):
        if needs_scores:
            _check_scores(run)
        frames.append(trec_order(run).select(
            pl.lit(i, dtype=pl.Int64).alias("run"), "query_id", "doc_id", "score",
            pl.col("rank").cast(pl.Float64)))
    return pl.concat(frames)


def _check_scores(run: Run) -> None:
    scores = run.frame["score"]
    named = f"{run.name!r}" + (f" ({run.source})" if run.source and run.source != run.name else "")
    hint = ("score-based fusion needs a finite score for every document; use a rank-based method (rrf, isr, "
            "log_isr, bordafuse, condorcet) or the rank or borda normalisation")
    if scores.null_count():
        what = "no scores" if scores.null_count() == len(scores) else "documents without a score"
        raise InputError(f"run {named} has {what}; {hint}")
    bad = run.frame.filter(~pl.col("score").is_finite())
    if bad.height:
        row = bad.row(0, named=True)
        raise InputError(f"run {named} scores query {row['query_id']!r}, doc {row['doc_id']!r} "
                         f"{row['score']}; {hint}")


def candidates(runs: Sequence[Run], norm: Normalization, *, needs_scores: bool = True) -> Candidates:
    """The candidates of every query with each run's normalised scores and ranks (see :class:`Candidates`).
    ``needs_scores=False`` skips the score checks (a rank-based method never reads them)."""
    rows = _ordered(runs, needs_scores and norm.uses_scores)
    pairs = (rows.select("query_id", "doc_id").unique()
             .sort(["query_id", "doc_id"], descending=[False, True])
             .with_columns(pl.col("query_id").rle_id().cast(pl.Int64).alias("q"),
                           pl.len().over("query_id").cast(pl.Float64).alias("c"))
             .with_row_index("pair"))
    _warn_partial(rows, len(runs))
    rows = (rows.with_columns(pl.len().over("run", "query_id").cast(pl.Float64).alias("n"))
            .join(pairs.select("query_id", "doc_id", "pair", "q", "c"), on=["query_id", "doc_id"]))
    if norm.name == "max":
        _warn_max_norm(rows, runs)
    rows = rows.with_columns(norm.value().alias("value"))
    npairs, nruns = pairs.height, len(runs)
    query_ids = tuple(pairs["query_id"].unique(maintain_order=True).to_list())
    nq = len(query_ids)
    pair = rows["pair"].to_numpy().astype(np.int64)
    run = rows["run"].to_numpy()
    values = np.full((npairs, nruns), np.nan)
    ranks = np.full((npairs, nruns), np.nan)
    values[pair, run] = rows["value"].to_numpy()
    ranks[pair, run] = rows["rank"].to_numpy()
    per_query = np.zeros((nq, nruns))
    per_query[rows["q"].to_numpy(), run] = rows["n"].to_numpy()
    query = pairs["q"].to_numpy()
    retrieved = per_query[query]
    size = pairs["c"].to_numpy()
    if norm.unretrieved is not None:
        fill = norm.unretrieved(retrieved, np.broadcast_to(size[:, None], retrieved.shape))
        values = np.where(np.isnan(values), fill, values)
    return Candidates(query_ids=query_ids, query=query,
                      doc_ids=pairs["doc_id"], values=values, ranks=ranks, retrieved=retrieved, candidates=size)


def _warn_partial(rows: pl.DataFrame, runs: int) -> None:
    partial = (rows.group_by("query_id").agg(pl.col("run").n_unique().alias("k"))
               .filter(pl.col("k") < runs).sort("query_id")["query_id"].to_list())
    if partial:
        warnings.warn(QueryCoverageWarning(
            f"{len(partial)} quer{'y is' if len(partial) == 1 else 'ies are'} ranked by only some of the {runs} "
            f"runs and fused from those: {format_ids(partial)}"), stacklevel=4)


def _warn_max_norm(rows: pl.DataFrame, runs: Sequence[Run]) -> None:
    """``s / max s`` is no normalisation where the best score is 0 or negative (divided by 1e-9, as ranx)."""
    bad = (rows.group_by("run", "query_id").agg(pl.col("score").max().alias("top"))
           .filter(pl.col("top") <= 0).sort("run", "query_id"))
    if bad.height:
        first = bad.row(0, named=True)
        warnings.warn(InputWarning(
            f"run {runs[first['run']].name!r}: the best score of {bad.height} (run, query) pair(s) is 0 or negative "
            f"(query {first['query_id']!r}: {first['top']}), so {option('norm', 'max')} divides by 1e-9 there, as "
            f"ranx does; use {option('norm', 'minmax')} for such scores"), stacklevel=4)


def fused_run(c: Candidates, scores: np.ndarray, *, name: str, notes: Sequence[str] = ()) -> Run:
    """The run of fused ``scores`` (one per candidate), ranked in gainscope's order (equal scores by doc id
    descending) with ranks 1..n per query."""
    query_ids = pl.Series("query_id", c.query_ids, dtype=pl.String)
    frame = (pl.DataFrame({"query_id": query_ids.gather(c.query), "doc_id": c.doc_ids,
                           "score": pl.Series("score", scores, dtype=pl.Float64)})
             .sort(["query_id", "score", "doc_id"], descending=[False, True, True])
             .with_columns((pl.int_range(pl.len()).over("query_id") + 1).cast(pl.Int64).alias("rank")))
    return Run(frame, name=name, notes=notes)


def fuse(runs: Sequence[Run | Any], method: str = "rrf", *, norm: str | None = None,
         weights: Sequence[float] | None = None, rrf_k: float | None = None, name: str | None = None) -> Run:
    """Fuse ``runs`` (two or more) into one run.

    Parameters
    ----------
    runs:
        :class:`~gainscope.Run` objects, or anything :func:`~gainscope.io.read_run` reads (paths, frames, dicts).
    method:
        ``rrf`` (default), ``combsum``, ``combmnz``, ``combmax``, ``combmin``, ``combmed``, ``combanz``,
        ``wsum``, ``isr``, ``log_isr``, ``bordafuse`` or ``condorcet`` (formulas in
        :mod:`gainscope.fusion.methods`; ranx's names ``sum``, ``mnz``, ... are accepted).
    norm:
        For the score-based methods: ``none``, ``minmax`` (the default, as ranx), ``max``, ``sum``, ``zmuv``,
        ``rank`` or ``borda`` (:mod:`gainscope.fusion.normalization`). Rank-based methods take none.
    weights:
        One weight >= 0 per run, for ``wsum`` and ``rrf`` (default 1 each).
    rrf_k:
        RRF's constant ``k`` (default 60).
    name:
        The fused run's name (default: the method's name).

    Returns
    -------
    Run
        Every document any run retrieved for a query, with its fused score, ranked by fused score with equal
        scores in doc id descending order (gainscope's and trec_eval's tie rule); ``notes`` say how it was made.

    Examples
    --------
    >>> import gainscope
    >>> a = gainscope.Run.from_dict({"q1": {"d1": 3.0, "d2": 2.0}}, name="a")
    >>> b = gainscope.Run.from_dict({"q1": {"d3": 5.0, "d2": 1.0}}, name="b")
    >>> fused = gainscope.fuse([a, b], "rrf")    # d2: 1/62 + 1/62; d1 and d3: 1/61 each
    >>> fused.frame["doc_id"].to_list()          # the tie of d1 and d3 goes to the larger doc id
    ['d2', 'd3', 'd1']
    """
    from gainscope.io import read_run

    loaded = [r if isinstance(r, Run) else read_run(r) for r in run_list(runs)]
    if len(loaded) < 2:
        raise InputError(f"fusion needs at least two runs; got {len(loaded)}")
    spec = fusion(method, runs=len(loaded), norm=norm, weights=weights, rrf_k=rrf_k)
    c = candidates(loaded, spec.norm, needs_scores=spec.method.uses == "scores")
    if not len(c.query):
        raise InputError("the runs retrieve no document; there is nothing to fuse")
    scores = spec.method.combine(c, spec.weight_vector(len(loaded)), spec.k)
    note = f"fused by {spec.describe()} from runs {', '.join(repr(r.name) for r in loaded)}"
    return fused_run(c, scores, name=name if name is not None else spec.method.name, notes=(note,))
