"""Decision-aware judging order: which unjudged pairs could most change what a comparison of runs concludes.

A comparison of run ``s`` with the baseline ``b`` under a metric concludes two things over the ``n`` queries:
the sign of the mean difference ``D = mean_q (s_q - b_q)`` and whether it is significant (Student's paired t,
two-sided at ``alpha``, as ``gainscope compare`` decides by default). Both follow the per-query differences.

An unjudged pair counts as not relevant today. If it turned out relevant (at the top grade of the judgments), it
would change the values of the runs on its query by ``delta_s`` and ``delta_b``, hence ``D`` by
``e = (delta_s - delta_b) / n``. For each pair, :func:`decision_priorities` gives

* ``change``: the largest ``|e|`` over every comparison (each run against the baseline, under each metric);
* ``share``: the largest share of the distance from ``D`` to the nearest conclusion boundary in the direction of
  ``e`` that this one label would cover. Holding the spread ``sd`` of the differences fixed, the boundaries are
  ``-c, 0, +c`` with ``c = t_{1 - alpha/2, n - 1} * sd / sqrt(n)``; a share of 1 or more means the label alone
  could change a conclusion.

The order of ``gainscope pool --strategy decision`` is by expected change, ``P(relevant) * change``
(:func:`gainscope.judges.adjudication.relevance_estimates` gives the probability), as minimal test collections
judge first the documents with the largest possible effect on a difference (Carterette, Allan & Sitaraman,
SIGIR 2006); ``share`` only counts the pairs that could be decisive. Ordering by ``share`` was tried first and,
in bench/pooling.py, needed several times the judgments of depth pooling: being near a boundary says nothing
about the side of it the complete judgments fall on, while the pairs that move the differences most are the ones
whose labels bring them to their complete values.

The ``delta`` values come from gainscope's own evaluation, not a formula per metric: every candidate pair becomes
its own query, with the judgments of its query plus the pair at the top grade, and each run's ranking of that
query (cut at the metrics' depth when every metric has a cutoff); the metrics are then evaluated as usual and
compared with today's values. Queries that nobody judged yet count with value 0 for every run.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from gainscope.bounds import metric_depth, top_grade
from gainscope.core.judgments import Judgments
from gainscope.core.policies import Policies
from gainscope.core.run import Run
from gainscope.errors import InputError, option
from gainscope.metrics.base import Metric

__all__ = ["CHUNK", "Priorities", "decision_priorities", "metrics_depth"]

#: candidate pairs evaluated together (bounds the memory of the per-pair queries)
CHUNK = 2000


@dataclass(frozen=True)
class Priorities:
    """Per candidate pair: ``change``, the largest change of a mean difference its label could cause, and
    ``share``, the largest share of a distance to a conclusion boundary it could cover (see the module
    docstring)."""

    change: np.ndarray
    share: np.ndarray

    @property
    def decisive(self) -> int:
        """Pairs whose label alone could change a conclusion (share >= 1)."""
        return int(np.count_nonzero(self.share >= 1))


def metrics_depth(metrics: Sequence[Metric]) -> int | None:
    """The deepest rank any of ``metrics`` reads (:func:`gainscope.bounds.metric_depth`); None when one reads the
    whole ranking."""
    depths = [metric_depth(m) for m in metrics]
    if any(d is None for d in depths):
        return None
    return max(d for d in depths if d is not None)


def _values(judgments: Judgments | None, runs: Sequence[Run], metrics: Sequence[Metric], policies: Policies,
            queries: Sequence[str]) -> np.ndarray:
    """``runs x queries x metrics``: each run's value on each of ``queries`` (0 where the query is not judged)."""
    from gainscope.evaluation import evaluate_runs

    out = np.zeros((len(runs), len(queries), len(metrics)))
    if judgments is None or not len(judgments):
        return out
    where = {q: i for i, q in enumerate(queries)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # coverage, ties and undefined values: the evaluation's usual notes
        results = evaluate_runs(judgments, runs, list(metrics), policies=policies)
    for r, res in enumerate(results):
        rows = [where.get(q, -1) for q in res.query_ids]
        for i, row in enumerate(rows):
            if row >= 0:
                out[r, row] = res.values[i]
    return out


def _per_pair(judgments: Judgments | None, runs: Sequence[Run], metrics: Sequence[Metric], policies: Policies,
              pairs: pl.DataFrame, top: float | int, depth: int | None) -> np.ndarray:
    """``runs x pairs x metrics``: each run's value on the query of each pair once the pair is relevant at ``top``."""
    from gainscope.evaluation import evaluate_runs
    from gainscope.io.writers import trec_order

    key = pairs.select(pl.col("pair").cast(pl.String).alias("pq"), "query_id", "doc_id")
    grade_type = judgments.frame.schema["grade"] if judgments is not None else pl.Int64
    added = key.select(pl.col("pq").alias("query_id"), "doc_id", pl.lit(top).cast(grade_type).alias("grade"))
    frames = [added]
    if judgments is not None and len(judgments):
        others = (key.join(judgments.frame.select("query_id", "doc_id", "grade"), on="query_id", suffix="_j")
                  .filter(pl.col("doc_id_j") != pl.col("doc_id"))
                  .select(pl.col("pq").alias("query_id"), pl.col("doc_id_j").alias("doc_id"), "grade"))
        frames.insert(0, others)
    per_pair_judgments = Judgments(pl.concat(frames))
    per_pair_runs = []
    for run in runs:
        ordered = trec_order(run)
        if depth is not None:
            ordered = ordered.filter(pl.col("rank") <= depth)
        frame = (key.select("pq", "query_id").join(ordered.select("query_id", "doc_id", "score", "rank"),
                                                     on="query_id")
                 .select(pl.col("pq").alias("query_id"), "doc_id", "score", "rank"))
        per_pair_runs.append(Run(frame, name=run.name))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = evaluate_runs(per_pair_judgments, per_pair_runs, list(metrics), policies=policies)
    out = np.zeros((len(runs), pairs.height, len(metrics)))
    for r, res in enumerate(results):
        out[r, np.array([int(q) for q in res.query_ids], dtype=np.int64)] = res.values
    return out


def _boundary_distance(mean: float, crit: float, step: np.ndarray) -> np.ndarray:
    """Distance from ``mean`` to the nearest of ``-crit, 0, crit`` in the direction of each ``step`` (inf when
    none lies that way, or the step is 0)."""
    bounds = np.array(sorted({-crit, 0.0, crit}))
    up = bounds[bounds >= mean]
    down = bounds[bounds <= mean]
    dist_up = (up.min() - mean) if len(up) else math.inf
    dist_down = (mean - down.max()) if len(down) else math.inf
    return np.where(step > 0, dist_up, np.where(step < 0, dist_down, math.inf))


def decision_priorities(judgments: Judgments | None, runs: Sequence[Run], pairs: Sequence[tuple[str, str]],
                        metrics: Sequence[Metric], *, baseline: str | None = None, alpha: float = 0.05,
                        policies: Policies | None = None) -> Priorities:
    """The ``change`` and ``share`` of every pair in ``pairs`` (unjudged (query, doc) pairs) for the comparisons
    of ``runs`` against ``baseline`` (a run name; default the first run) under ``metrics`` (see the module
    docstring)."""
    from scipy import stats  # type: ignore[import-untyped]

    if len(runs) < 2:
        raise InputError(f"a decision-aware order compares runs: give at least two; got {len(runs)}")
    names = [r.name for r in runs]
    base = 0 if baseline is None else (names.index(baseline) if baseline in names else -1)
    if base < 0:
        raise InputError(f"{option('baseline', baseline)} is not among the runs: {', '.join(names)}")
    pol = policies or Policies()
    judged = judgments.query_ids() if judgments is not None and len(judgments) else []
    queries = sorted(set(judged) | {q for q, _ in pairs}, key=lambda s: s.encode("utf-8", "surrogatepass"))
    n = len(queries)
    now = _values(judgments, runs, metrics, pol, queries)
    top = top_grade(judgments, pol)
    depth = metrics_depth(metrics)
    frame = pl.DataFrame({"query_id": [q for q, _ in pairs], "doc_id": [d for _, d in pairs]},
                         schema={"query_id": pl.String, "doc_id": pl.String})
    where = {q: i for i, q in enumerate(queries)}
    row = np.array([where[q] for q, _ in pairs], dtype=np.int64)
    delta = np.zeros((len(runs), len(pairs), len(metrics)))
    for start in range(0, len(pairs), CHUNK):
        chunk = frame.slice(start, CHUNK).with_row_index("pair")
        after = _per_pair(judgments, runs, metrics, pol, chunk, top, depth)
        delta[:, start:start + chunk.height] = after - now[:, row[start:start + chunk.height]]
    most = np.zeros(len(pairs))
    change = np.zeros(len(pairs))
    crit_t = float(stats.t.ppf(1 - alpha / 2, n - 1)) if n > 1 else math.inf
    for j in range(len(metrics)):
        for s in range(len(runs)):
            if s == base:
                continue
            d = now[s, :, j] - now[base, :, j]
            mean = float(d.mean()) if n else 0.0
            crit = crit_t * float(d.std(ddof=1)) / math.sqrt(n) if n > 1 else 0.0
            step = (delta[s, :, j] - delta[base, :, j]) / max(n, 1)
            dist = _boundary_distance(mean, crit if math.isfinite(crit) else 0.0, step)
            with np.errstate(divide="ignore", invalid="ignore"):
                share = np.where(step == 0, 0.0, np.abs(step) / np.maximum(dist, 1e-15))
            most = np.maximum(most, share)
            change = np.maximum(change, np.abs(step))
    return Priorities(change=change, share=most)
