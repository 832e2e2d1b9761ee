"""How many judgments a strategy needs to reach the conclusions complete judgments give: a simulation.

Start from judgments where part of a complete set is hidden. Each strategy of
:mod:`gainscope.judges.adjudication` asks for ``batch`` pairs at a time; their labels are revealed from the
complete judgments (a pair the complete judgments do not hold is not relevant, grade 0) and added; after each
batch the runs are compared with the judgments known so far. A conclusion is, for each run against the
baseline under each metric, the sign of the mean difference and whether it is significant, as
:func:`gainscope.compare.compare_results` decides (paired t, Holm over every comparison, ``alpha``).

A strategy has *reached* the complete judgments' conclusions after ``k`` judgments when every conclusion equals
the complete judgments' at that checkpoint and at every later one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from gainscope.core.judgments import Judgments
from gainscope.core.run import Run

__all__ = ["Checkpoint", "Conclusion", "Simulation", "conclusions", "simulate"]

Conclusion = tuple[int, bool]  # sign of the mean difference (-1, 0, 1), significant


@dataclass(frozen=True)
class Checkpoint:
    """After ``judged`` judgments of the strategy: the share of conclusions equal to the complete judgments'."""

    judged: int
    agreement: float


@dataclass(frozen=True)
class Simulation:
    """One strategy's curve, and the judgments after which it holds every conclusion of the complete judgments
    (None: not within the budget)."""

    strategy: str
    checkpoints: tuple[Checkpoint, ...]
    reached: int | None


def conclusions(judgments: Judgments, runs: Sequence[Run], metrics: Any, *, baseline: str | None = None,
                alpha: float = 0.05, relevance_level: float = 1) -> dict[tuple[str, str], Conclusion]:
    """``{(metric, run): (sign, significant)}`` for every run but the baseline."""
    import warnings

    from gainscope.compare import CompareSettings, compare_results
    from gainscope.evaluation import evaluate_runs
    from gainscope.stats import TOL

    settings = CompareSettings(tests=("t",), alpha=alpha, resamples=1)  # only the t test decides; no intervals used
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # undefined values and ties, the same at every checkpoint
        results = evaluate_runs(judgments, runs, metrics, relevance_level=relevance_level)
        table = compare_results(results, baseline=baseline, settings=settings)
    out: dict[tuple[str, str], Conclusion] = {}
    for row in table.comparisons:
        delta = row.delta if row.delta is not None else 0.0
        sign = 0 if abs(delta) <= TOL else (1 if delta > 0 else -1)
        out[(row.metric, row.run)] = (sign, bool(row.significant))
    return out


def simulate(complete: Judgments, start: Judgments, runs: Sequence[Run], strategies: Sequence[str], *,
             metrics: Any = ("nDCG@10",), baseline: str | None = None, budget: int, batch: int = 10,
             depth: int | None = 100, alpha: float = 0.05, relevance_level: float = 1) -> list[Simulation]:
    """Run each strategy from ``start`` for up to ``budget`` judgments in batches of ``batch`` (see the module
    docstring); the target is the conclusions of ``complete``."""
    from gainscope.judges.adjudication import next_pairs

    target = conclusions(complete, runs, metrics, baseline=baseline, alpha=alpha, relevance_level=relevance_level)
    grades = complete.frame.select("query_id", "doc_id", "grade")
    out = []
    for strategy in strategies:
        known = start
        judged = 0
        points = [Checkpoint(0, _agreement(known, runs, metrics, baseline, alpha, relevance_level, target))]
        while judged < budget:
            sel = next_pairs(runs, known, budget=min(batch, budget - judged), strategy=strategy, depth=depth,
                             metrics=metrics, baseline=baseline, alpha=alpha, relevance_level=relevance_level)
            if not sel.pairs:
                break
            asked = pl.DataFrame({"query_id": [q for q, _ in sel.pairs], "doc_id": [d for _, d in sel.pairs]},
                                 schema={"query_id": pl.String, "doc_id": pl.String})
            labels = (asked.join(grades, on=["query_id", "doc_id"], how="left")
                      .with_columns(pl.col("grade").fill_null(0)))
            merged = pl.concat([known.frame.select("query_id", "doc_id", "grade")
                                .join(asked, on=["query_id", "doc_id"], how="anti"), labels],
                               how="vertical_relaxed")
            known = Judgments(merged)
            judged += len(sel.pairs)
            points.append(Checkpoint(judged, _agreement(known, runs, metrics, baseline, alpha, relevance_level,
                                                        target)))
        out.append(Simulation(strategy, tuple(points), _reached(points)))
    return out


def _agreement(judgments: Judgments, runs: Sequence[Run], metrics: Any, baseline: str | None, alpha: float,
               level: float, target: dict[tuple[str, str], Conclusion]) -> float:
    now = conclusions(judgments, runs, metrics, baseline=baseline, alpha=alpha, relevance_level=level)
    return sum(now.get(k) == v for k, v in target.items()) / len(target) if target else 1.0


def _reached(points: Sequence[Checkpoint]) -> int | None:
    reached = None
    for p in reversed(points):
        if p.agreement < 1.0:
            break
        reached = p.judged
    return reached
