"""The temporal adapter's way into the one metric engine.

A temporal metric does no arithmetic of its own. For each query it *prepares* what the core metric behind it
reads -- a :class:`~gainscope.core.rankings.Ranking`: the documents of the ranking and the judged pool with the
adapter's grades (:mod:`gainscope.temporal.grades`), or for the year measures a ranking of years, buckets or
anchors judged by what the query asks for -- and the core computes the value: the rankings become a judged run
(:func:`~gainscope.core.rankings.judged_run_of_rankings`, in the order given) and the core metric's kernel runs
on it through :func:`gainscope.evaluation.compute`, as for every other metric.

A query the adapter cannot grade (no focus time, a failed LLM grade) has no ranking: its value is NaN with the
reason, decided by the adapter; a NaN from the core (IDCG = 0, R = 0, nothing retrieved) gets the reason the
metric gives for it. The batch applies the ``undefined`` policy to both alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from gainscope.core.policies import Level, Policies
from gainscope.core.rankings import Ranking, judged_run_of_rankings
from gainscope.evaluation import compute
from gainscope.metrics.base import Metric

__all__ = ["Prepared", "evaluate_prepared"]


@dataclass(frozen=True)
class Prepared:
    """One query as one temporal metric at cutoff ``k`` reads it: the ``ranking`` the core metric evaluates
    (None when there is no value: ``reason`` says why, or ``failures`` list the failed LLM grades), and the
    ``grades`` shown with the value (the top ``k`` documents' grades in rank order; NaN = failed)."""

    ranking: Ranking | None
    grades: tuple[float, ...] = ()
    reason: str = ""
    failures: tuple[tuple[str, str], ...] = ()


def evaluate_prepared(prepared: Sequence[Prepared], metric: Metric, level: Level) -> np.ndarray:
    """``metric``'s value per prepared query, NaN where it is undefined or has no ranking.
    ``level`` is the evaluation's relevance level (the mode's: ``rel``, or ``min_jaccard``'s threshold); the
    ranking is the order given."""
    out = np.full(len(prepared), np.nan)
    # one query per prepared ranking, named by position (a batch's query ids are its own business)
    rankings = [replace(p.ranking, query_id=str(i)) for i, p in enumerate(prepared) if p.ranking is not None]
    if rankings:
        jr = judged_run_of_rankings(rankings, Policies(ties="rank", relevance_level=level, undefined="skip"))
        ranked = [i for i, p in enumerate(prepared) if p.ranking is not None]
        out[ranked] = compute(jr, [metric], warn=False).values[:, 0]
    return out
