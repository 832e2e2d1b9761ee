"""The next pairs to judge under a budget: depth pooling, adaptive pooling (move-to-front, MaxMean) and a
decision-aware order (:mod:`gainscope.judges.decision`).

Every strategy works on the pool of :func:`~gainscope.judges.pool.rankings` (each run's ranking cut at a depth)
and on the labels known so far: a judged pair is relevant when its grade reaches the relevance level; a pair
with a negative grade is "pooled but unjudged" (trec_eval's meaning) and may be chosen again.

* ``depth``: the pool in depth order, rank 1 of every run (in run order), then rank 2, ... -- a depth-k pool
  grown one rank at a time.
* ``mtf``: move-to-front (Cormack, Palmer & Clarke, SIGIR 1998). The runs of a query wait in a queue; the run in
  front gives its best unjudged document; while its documents are relevant it stays in front, a non-relevant
  one sends it to the back.
* ``maxmean``: MaxMean (Losada, Parapar & Barreiro, SAC 2016; IP&M 53(5), 2017). Each run is an arm whose reward
  is the relevance of its next document; the run with the largest posterior mean ``(rel + 1) / (judged + 2)``
  (a uniform Beta prior over the documents of its ranking passed so far) gives its best unjudged document;
  equal means go to the first run.
* ``decision``: the pairs whose label can most change the differences between the runs compared, on which the
  sign and significance of each comparison rest: the probability that the pair is relevant
  (:func:`relevance_estimates`) times the largest change of a mean difference its relevance would cause
  (:func:`gainscope.judges.decision.decision_priorities`); pairs that can change no difference come last, in
  depth order.

What they share, so that one call or many give the same pairs:

* Labels that are known cost nothing: a strategy that meets a judged document reads its label as if it had just
  been judged. A strategy's state is therefore a replay over the known labels, and asking twice with the same
  judgments gives the same pairs.
* A pair chosen in this call has no label yet; until it is judged it counts as not relevant (the strategy
  learns nothing good from a label it has not seen, so a batch spreads over runs rather than betting on one).
  Adaptive strategies learn between calls: judge a batch, add it to the judgments, ask again.
* Budget across queries: the next pair goes to the query with the fewest judged (or chosen) pairs among its
  pool, ties to the first query (bytewise); a query whose pool is judged drops out.
"""

from __future__ import annotations

import heapq
import sys
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gainscope.core.judged_run import no_overlap_message
from gainscope.core.judgments import Judgments
from gainscope.core.run import Run
from gainscope.errors import InconsistentInputError, InputError, PolicyError, option
from gainscope.judges.pool import Rankings, rankings
from gainscope.stats import check_fraction

__all__ = ["STRATEGIES", "Selection", "adaptive_order", "check_budget", "known_labels", "next_pairs",
           "relevance_estimates"]

#: the strategies, in the order ``gainscope pool --strategy`` lists them
STRATEGIES = ("depth", "mtf", "maxmean", "decision")

Known = list[dict[str, bool]]  # per query: doc id -> relevant (False also for a pair chosen, not yet judged)


def known_labels(pool: Rankings, grades: Mapping[tuple[str, str], float], level: float) -> Known:
    """Per query of ``pool``: the judged documents (grade >= 0) and whether they are relevant (grade >= level)."""
    out: Known = [{} for _ in pool.query_ids]
    index = {q: i for i, q in enumerate(pool.query_ids)}
    for (q, d), g in grades.items():
        i = index.get(q)
        if i is not None and g >= 0:
            out[i][d] = g >= level
    return out


class _Depth:
    def __init__(self, pool: Rankings, known: Known) -> None:
        self.order = [iter(pool.candidates(q)) for q in range(len(pool.query_ids))]
        self.known = known

    def pick(self, q: int) -> str | None:
        for d in self.order[q]:
            if d not in self.known[q]:
                self.known[q][d] = False
                return d
        return None


class _MoveToFront:
    def __init__(self, pool: Rankings, known: Known) -> None:
        self.docs = pool.docs
        self.known = known
        self.queue = [deque(range(len(pool.runs))) for _ in pool.query_ids]
        self.at = [[0] * len(pool.runs) for _ in pool.query_ids]

    def pick(self, q: int) -> str | None:
        queue, at, labels = self.queue[q], self.at[q], self.known[q]
        while queue:
            r = queue[0]
            docs = self.docs[q][r]
            if at[r] >= len(docs):
                queue.popleft()
                continue
            d = docs[at[r]]
            at[r] += 1
            chosen = d not in labels
            if chosen:
                labels[d] = False
            if not labels[d]:
                queue.rotate(-1)  # not relevant (or not judged yet): to the back
            if chosen:
                return d
        return None


class _MaxMean:
    def __init__(self, pool: Rankings, known: Known) -> None:
        self.docs = pool.docs
        self.known = known
        runs = len(pool.runs)
        self.at = [[0] * runs for _ in pool.query_ids]
        self.relevant = [[0] * runs for _ in pool.query_ids]
        self.judged = [[0] * runs for _ in pool.query_ids]

    def _advance(self, q: int, r: int) -> None:
        """Pass the documents of run ``r`` whose labels are known, counting them as evidence."""
        docs, labels = self.docs[q][r], self.known[q]
        while self.at[q][r] < len(docs) and docs[self.at[q][r]] in labels:
            self.judged[q][r] += 1
            self.relevant[q][r] += labels[docs[self.at[q][r]]]
            self.at[q][r] += 1

    def pick(self, q: int) -> str | None:
        best, best_mean = -1, -1.0
        for r in range(len(self.at[q])):
            self._advance(q, r)
            if self.at[q][r] < len(self.docs[q][r]):
                mean = (self.relevant[q][r] + 1) / (self.judged[q][r] + 2)
                if mean > best_mean:
                    best, best_mean = r, mean
        if best < 0:
            return None
        d = self.docs[q][best][self.at[q][best]]
        self.known[q][d] = False
        self._advance(q, best)
        return d


_ADAPTIVE: dict[str, Any] = {"depth": _Depth, "mtf": _MoveToFront, "maxmean": _MaxMean}


def adaptive_order(strategy: str, pool: Rankings, known: Known, budget: int) -> list[tuple[str, str]]:
    """Up to ``budget`` unjudged pairs of ``pool`` chosen by ``strategy`` (``depth``, ``mtf`` or ``maxmean``)
    from the ``known`` labels (see the module docstring; ``known`` is not changed)."""
    if strategy not in _ADAPTIVE:
        raise PolicyError(f"unknown {option('strategy', strategy)}; the strategies are: {', '.join(STRATEGIES)}")
    labels: Known = [dict(k) for k in known]
    chooser = _ADAPTIVE[strategy](pool, labels)
    heap = []
    for q in range(len(pool.query_ids)):
        pool_q = pool.candidates(q)
        heap.append((sum(d in labels[q] for d in pool_q), q))
    heapq.heapify(heap)
    out: list[tuple[str, str]] = []
    while heap and len(out) < budget:
        count, q = heapq.heappop(heap)
        d = chooser.pick(q)
        if d is None:
            continue
        out.append((pool.query_ids[q], d))
        heapq.heappush(heap, (count + 1, q))
    return out


def check_budget(budget: int) -> None:
    """A budget is a whole number of pairs >= 1."""
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise PolicyError(f"{option('budget', ..., cli='--budget')} must be an integer >= 1 (pairs to judge); got "
                          f"{budget!r}")



def relevance_estimates(pool: Rankings, known: Known, pairs: list[tuple[str, str]]) -> np.ndarray:
    """The probability that each of ``pairs`` is relevant, from the judged documents the runs ranked at the same
    positions: per run and rank, relevant / judged over all queries, smoothed towards the run's judged precision
    (weight 2) and made non-increasing down the ranking; a document several runs rank takes the largest."""
    runs = len(pool.runs)
    depth = max((len(d) for lists in pool.docs for d in lists), default=0)
    rel = np.zeros((runs, depth))
    judged = np.zeros((runs, depth))
    for q, lists in enumerate(pool.docs):
        labels = known[q]
        for r, docs in enumerate(lists):
            for i, d in enumerate(docs):
                if d in labels:
                    judged[r, i] += 1
                    rel[r, i] += labels[d]
    overall = (rel.sum(axis=1) + 1) / (judged.sum(axis=1) + 2)
    rate = (rel + 2 * overall[:, None]) / (judged + 2)
    rate = np.minimum.accumulate(rate, axis=1)
    best: dict[tuple[str, str], float] = {}
    for q, lists in enumerate(pool.docs):
        for r, docs in enumerate(lists):
            for i, d in enumerate(docs):
                key = (pool.query_ids[q], d)
                best[key] = max(best.get(key, 0.0), float(rate[r, i]))
    return np.array([best.get(pair, 0.0) for pair in pairs])


@dataclass(frozen=True)
class Selection:
    """The pairs chosen by :func:`next_pairs`, with what the choice was made from: the strategy, the unjudged
    pairs of the pool, and (``decision``) how many of the chosen pairs could alone change a conclusion."""

    pairs: tuple[tuple[str, str], ...]
    strategy: str
    unjudged: int
    queries: int
    decisive: int | None = None


def next_pairs(runs: Sequence[Run | Any], judgments: Judgments | Any | None = None, *, budget: int,
               strategy: str = "depth", depth: int | None = 100, metrics: Any = ("nDCG@10",),
               baseline: str | None = None, alpha: float = 0.05, relevance_level: float = 1) -> Selection:
    """The next ``budget`` (query, document) pairs to judge (see the module docstring).

    ``runs`` and ``judgments`` are objects or anything the readers accept (``judgments`` None: nothing judged
    yet). ``depth`` cuts every ranking (None: whole rankings). ``metrics``, ``baseline`` and ``alpha`` say what
    the ``decision`` strategy protects: the sign and significance of each run's difference with the baseline
    under each metric. ``relevance_level`` is the grade from which a document counts as relevant.
    """
    from gainscope.evaluation import resolve_metrics
    from gainscope.io import read_judgments, read_run

    check_budget(budget)
    check_fraction(alpha, "alpha")
    if strategy not in STRATEGIES:
        raise PolicyError(f"unknown {option('strategy', strategy)}; the strategies are: {', '.join(STRATEGIES)}")
    loaded = [r if isinstance(r, Run) else read_run(r) for r in runs]
    if not loaded:
        raise InputError("give at least one run to pool")
    j = None if judgments is None else read_judgments(judgments)
    pool = rankings(loaded, depth)
    grades = {} if j is None else dict(zip(zip(j.frame["query_id"].to_list(), j.frame["doc_id"].to_list(),
                                               strict=True), j.frame["grade"].to_list(), strict=True))
    if j is not None and j.frame.height and not set(pool.query_ids) & set(j.frame["query_id"].to_list()):
        judged = sorted(set(j.frame["query_id"].to_list()), key=lambda s: s.encode("utf-8", "surrogatepass"))
        sources = ", ".join(r.source or r.name for r in loaded)
        raise InconsistentInputError(no_overlap_message(judged, list(pool.query_ids), j.source, sources) + " Give "
                                     "the judgments of these queries, or leave "
                                     f"{option('judgments', ..., cli='--judgments')} out")
    known = known_labels(pool, grades, relevance_level)
    everything = adaptive_order("depth", pool, known, budget=sys.maxsize)
    if strategy != "decision":
        chosen = adaptive_order(strategy, pool, known, budget)
        return Selection(tuple(chosen), strategy, len(everything), len(pool.query_ids))
    from gainscope.core.policies import Policies
    from gainscope.judges.decision import decision_priorities

    mets = resolve_metrics(metrics)
    pri = decision_priorities(j, loaded, everything, mets, baseline=baseline, alpha=alpha,
                              policies=Policies(relevance_level=relevance_level))
    expected = relevance_estimates(pool, known, everything) * pri.change
    order = sorted(range(len(everything)), key=lambda i: (-expected[i], i))[:budget]  # then depth order
    return Selection(tuple(everything[i] for i in order), strategy, len(everything), len(pool.query_ids),
                     decisive=int(np.count_nonzero(pri.share[order] >= 1)) if order else 0)
