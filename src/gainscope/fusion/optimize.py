"""Tune the weights of a weighted fusion (``wsum``, ``rrf``) for a metric on training queries, and report the
value on held-out queries.

The search evaluates each candidate weighting with gainscope's own pipeline (the judged run of the fused run,
then the metric's kernel): there is no second implementation of any metric here. The candidates are

* ``grid``: every weighting whose weights are multiples of ``step`` summing to 1 (``step=0.1`` and three runs:
  66 weightings), as ranx's ``optimize_fusion``;
* ``random``: equal weights, then ``trials - 1`` weightings drawn uniformly from the simplex (a flat Dirichlet)
  with ``seed``, rounded to 4 decimals so that the printed weights give back the same run.

Scaling every weight by the same factor changes no ranking, so weights summing to 1 lose nothing. The winner
has the best mean on the training queries; among equal means, the weighting closest to equal weights (L1
distance), then the first in search order, so that a tie never favours a run by accident.

Held-out queries are the judged queries that are not training queries. A value tuned on the training queries
is optimistic there; the held-out value, beside the equal-weight fusion and each input run on the same
queries, is the number to quote.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import polars as pl

from gainscope.core.judged_run import PreparedJudgments
from gainscope.core.judgments import Judgments
from gainscope.core.policies import Policies
from gainscope.core.run import Run, run_list
from gainscope.errors import (
    InconsistentInputError,
    InputError,
    MetricError,
    PolicyError,
    QueryCoverageWarning,
    format_ids,
    option,
)
from gainscope.fusion.fuse import Fusion, candidates, fused_run, fusion
from gainscope.fusion.methods import METHODS, Candidates
from gainscope.metrics.base import Metric

__all__ = ["MAX_GRID", "SEARCHES", "Trial", "WeightSearch", "optimize_weights", "weight_grid"]

#: the search strategies
SEARCHES = ("grid", "random")
#: the largest grid searched; beyond it, a coarser step or a random search
MAX_GRID = 20000


@dataclass(frozen=True)
class Trial:
    """One weighting tried and its mean on the training queries."""

    weights: tuple[float, ...]
    value: float


@dataclass(frozen=True, eq=False)
class WeightSearch:
    """The outcome of :func:`optimize_weights`.

    ``weights`` are the chosen weights (``fusion`` holds them too); ``run`` is the fused run of every query with
    them. ``train`` and ``heldout`` give the metric's mean on the training and held-out queries for ``"fused"``
    (the chosen weights), ``"equal weights"`` and each input run by name (``heldout`` is empty when every judged
    query is a training query). ``trials`` lists every weighting tried, in search order.
    """

    metric: str
    weights: tuple[float, ...]
    fusion: Fusion
    search: str
    runs: tuple[str, ...]
    train_queries: tuple[str, ...]
    heldout_queries: tuple[str, ...]
    trials: tuple[Trial, ...]
    train: dict[str, float]
    heldout: dict[str, float]
    run: Run

    def to_dict(self) -> dict[str, Any]:
        """Plain data (NaN as None)."""
        def clean(d: dict[str, float]) -> dict[str, float | None]:
            return {k: (None if math.isnan(v) else v) for k, v in d.items()}

        return {"metric": self.metric, "method": self.fusion.method.name, "norm": self.fusion.norm.name,
                "search": self.search, "runs": list(self.runs), "weights": list(self.weights),
                "train_queries": len(self.train_queries), "heldout_queries": len(self.heldout_queries),
                "train": clean(self.train), "heldout": clean(self.heldout),
                "trials": [{"weights": list(t.weights), "value": t.value} for t in self.trials]}


def weight_grid(runs: int, step: float) -> Iterator[tuple[float, ...]]:
    """Every weighting of ``runs`` runs whose weights are multiples of ``step`` summing to 1, in lexicographic
    order of the multiples (``weight_grid(2, 0.5)``: (0, 1), (0.5, 0.5), (1, 0))."""
    if isinstance(step, bool) or not isinstance(step, int | float) or not 0 < step <= 1:
        raise PolicyError(f"{option('step', ..., cli='--step')} must be a number in (0, 1]; got {step!r}")
    parts = round(1 / step)
    if abs(parts * step - 1) > 1e-9:
        raise PolicyError(f"{option('step', ..., cli='--step')} must divide 1 (0.5, 0.25, 0.1, 0.05, ...); got "
                          f"{step!r}")
    size = math.comb(parts + runs - 1, runs - 1)
    if size > MAX_GRID:
        raise PolicyError(f"a grid of {option('step', step)} over {runs} runs has {size} weightings (more than "
                          f"{MAX_GRID}); use a larger step or {option('search', 'random')}")
    for cut in itertools.combinations(range(parts + runs - 1), runs - 1):  # stars and bars
        bounds = (-1, *cut, parts + runs - 1)
        yield tuple((bounds[i + 1] - bounds[i] - 1) / parts for i in range(runs))


def _random_weights(runs: int, trials: int, seed: int) -> list[tuple[float, ...]]:
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise PolicyError(f"{option('trials', ..., cli='--trials')} must be an integer >= 1; got {trials!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise PolicyError(f"{option('seed', ..., cli='--seed')} must be an integer >= 0; got {seed!r}")
    rng = np.random.default_rng(seed)
    out = [tuple(round(1 / runs, 4) for _ in range(runs))]
    for w in rng.dirichlet(np.ones(runs), size=trials - 1):
        out.append(tuple(round(float(x), 4) for x in w))
    return out


class _Scorer:
    """The metric's mean over a subset of queries, for fused scores or for a run, through the pipeline."""

    def __init__(self, judgments: Judgments, queries: Sequence[str], metric: Metric, policies: Policies,
                 c: Candidates) -> None:
        keep = pl.col("query_id").is_in(list(queries))
        self.judgments = Judgments(judgments.frame.filter(keep), source=judgments.source)
        self.prepared = PreparedJudgments.of(self.judgments, policies.negative_grades)
        self.metric = metric
        self.policies = policies
        self.queries = set(queries)
        chosen = np.array([q in self.queries for q in c.query_ids], dtype=bool)
        self.rows = chosen[c.query]
        self.query_ids = pl.Series(c.query_ids, dtype=pl.String).gather(c.query[self.rows])
        self.doc_ids = c.doc_ids.filter(pl.Series(self.rows))

    def fused(self, scores: np.ndarray) -> float:
        frame = pl.DataFrame({"query_id": self.query_ids, "doc_id": self.doc_ids,
                              "score": pl.Series("score", scores[self.rows], dtype=pl.Float64),
                              "rank": pl.Series("rank", [None] * int(self.rows.sum()), dtype=pl.Int64)})
        return self.run(Run._from_validated(frame, name="fused", source=None, notes=()))

    def run(self, run: Run) -> float:
        from gainscope.evaluation import compute
        from gainscope.io.scan import judged_run_of_run

        frame = run.frame.filter(pl.col("query_id").is_in(list(self.queries)))
        subset = Run._from_validated(frame, name=run.name, source=run.source, notes=run.raw_notes)
        jr = judged_run_of_run(self.prepared, subset, self.policies)
        return compute(jr, [self.metric], warn=False)[str(self.metric)]


def _split(judgments: Judgments, train_queries: Collection[str]) -> tuple[list[str], list[str]]:
    judged = judgments.query_ids()
    wanted = {str(q) for q in train_queries}
    train = [q for q in judged if q in wanted]
    if not train:
        source = f" ({judgments.source})" if judgments.source else ""
        raise InconsistentInputError(
            f"no training query is judged: the judgments{source} have {format_ids(judged, 3)}; the training "
            f"queries are {format_ids(sorted(wanted), 3)}")
    unknown = sorted(wanted - set(judged))
    if unknown:
        warnings.warn(QueryCoverageWarning(
            f"{len(unknown)} training quer{'y is' if len(unknown) == 1 else 'ies are'} not judged and "
            f"{'is' if len(unknown) == 1 else 'are'} left out: {format_ids(unknown)}"), stacklevel=3)
    heldout = [q for q in judged if q not in wanted]
    if not heldout:
        warnings.warn(QueryCoverageWarning(
            "every judged query is a training query: there is no held-out query, so the tuned value is not checked "
            "on unseen queries"), stacklevel=3)
    return train, heldout


def _labels(runs: Sequence[Run]) -> list[str]:
    """The runs' names as labels beside "fused" and "equal weights"; a name used twice gets its position."""
    names = [r.name for r in runs]
    taken = {"fused", "equal weights"}
    return [n if names.count(n) == 1 and n not in taken else f"{n} (run {i + 1})" for i, n in enumerate(names)]


def _best(trials: Sequence[Trial]) -> Trial:
    """The best mean; among equal means the weighting closest to equal weights, then the first."""
    top = max(t.value for t in trials)

    def spread(t: Trial) -> float:
        total = sum(t.weights)
        return sum(abs(w / total - 1 / len(t.weights)) for w in t.weights)

    tied = [t for t in trials if t.value >= top - 1e-12]
    return min(tied, key=spread)  # min keeps the first of equal spreads


def optimize_weights(judgments: Judgments | Any, runs: Sequence[Run | Any], metric: str | Metric,
                     train_queries: Collection[str], *, method: str = "wsum", norm: str | None = None,
                     rrf_k: float | None = None, search: str = "grid", step: float = 0.1, trials: int = 200,
                     seed: int = 0, name: str | None = None, policies: Policies | None = None,
                     profile: str | None = None, **policy_kwargs: Any) -> WeightSearch:
    """Choose the weights of ``method`` (``wsum`` or ``rrf``) that maximise the mean of ``metric`` on
    ``train_queries``; evaluate the choice on the other judged queries (see the module docstring).

    ``judgments`` and ``runs`` are objects or anything the readers accept; ``norm`` and ``rrf_k`` are as for
    :func:`~gainscope.fusion.fuse`; ``search`` is ``"grid"`` (``step``) or ``"random"`` (``trials``, ``seed``);
    ``policies`` / ``profile`` / ``**policy_kwargs`` are the evaluation conventions, as for
    :func:`~gainscope.evaluate`.
    """
    from gainscope.evaluation import _setup
    from gainscope.io import read_judgments, read_run

    pol, mets, _ = _setup(metric, policies, profile, policy_kwargs)
    if len(mets) != 1:
        raise MetricError(f"the weights are tuned for one metric; got {len(mets)}: {', '.join(map(str, mets))}")
    met = mets[0]
    if search not in SEARCHES:
        raise PolicyError(f"unknown {option('search', search)}; the searches are: {', '.join(SEARCHES)}")
    j = read_judgments(judgments)
    loaded = [r if isinstance(r, Run) else read_run(r) for r in run_list(runs)]
    if len(loaded) < 2:
        raise InputError(f"fusion needs at least two runs; got {len(loaded)}")
    spec = fusion(method, runs=len(loaded), norm=norm, rrf_k=rrf_k)
    if not spec.method.weighted:
        weighted = ", ".join(m.name for m in METHODS.values() if m.weighted)
        raise PolicyError(f"{spec.method.name} takes no {option('weights', ..., cli='--weights')} to tune; the "
                          f"weighted methods are {weighted}")
    grid = list(weight_grid(len(loaded), step)) if search == "grid" else _random_weights(len(loaded), trials, seed)
    train, heldout = _split(j, train_queries)
    c = candidates(loaded, spec.norm, needs_scores=spec.method.uses == "scores")
    on_train = _Scorer(j, train, met, pol, c)

    def scores(weights: Sequence[float]) -> np.ndarray:
        return spec.method.combine(c, np.array(weights, dtype=np.float64), spec.k)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ties and coverage repeat in every trial; the final evaluations say them
        tried = tuple(Trial(tuple(w), on_train.fused(scores(w))) for w in grid)
    best = _best(tried)
    chosen = replace(spec, weights=best.weights)
    described = (f"grid, step {step:g}, {len(tried)} weightings" if search == "grid"
                 else f"random, {len(tried)} weightings, seed {seed}")
    train_values = {"fused": on_train.fused(scores(best.weights))}
    heldout_values: dict[str, float] = {}
    on_heldout = _Scorer(j, heldout, met, pol, c) if heldout else None
    if on_heldout is not None:
        heldout_values["fused"] = on_heldout.fused(scores(best.weights))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the baselines are context; their ties are not the fused run's
        equal = scores([1.0] * len(loaded))
        train_values["equal weights"] = on_train.fused(equal)
        if on_heldout is not None:
            heldout_values["equal weights"] = on_heldout.fused(equal)
        for label, r in zip(_labels(loaded), loaded, strict=True):
            train_values[label] = on_train.run(r)
            if on_heldout is not None:
                heldout_values[label] = on_heldout.run(r)
    note = (f"fused by {chosen.describe()} from runs {', '.join(repr(r.name) for r in loaded)}; weights tuned for "
            f"{met} on {len(train)} training queries ({described})")
    fused = fused_run(c, scores(best.weights), name=name if name is not None else spec.method.name, notes=(note,))
    return WeightSearch(metric=str(met), weights=best.weights, fusion=chosen, search=described,
                        runs=tuple(r.name for r in loaded), train_queries=tuple(train),
                        heldout_queries=tuple(heldout), trials=tried, train=train_values, heldout=heldout_values,
                        run=fused)
