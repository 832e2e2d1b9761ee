"""What the unjudged documents could change: each metric's value with the unjudged retrieved documents taken as
not relevant (today's value) and as relevant at the top grade, with the judged share beside it.

For a run and a metric that reads the first ``k`` documents (``nDCG@10``: ``k = 10``; a metric without a cutoff
reads the whole ranking), the *completion* adds to the judgments every document the run retrieved within ``k``
that has no judgment (or a negative grade, "pooled but unjudged") at the top grade of the judgments (the
largest judged grade, at least the relevance level and 1), and evaluates the run again through the same
pipeline -- no second implementation of any metric. One extra evaluation per run and per distinct ``k`` among the
metrics. Queries nobody judged stay out, as today.

The two values are two completions of the unjudged labels. They *bound* every other labelling of the unjudged
documents the run retrieved (any grade from 0 to the top for each, deeper ones included) only for a metric that
cannot go down when a retrieved document becomes more relevant: then no such labelling gives a value outside
``[today, completed]``. That holds for

* P@k, Success@k, RR(@k), CG@k, DCG@k, ERR(@k), RBP with binary gains (``rel`` set), when their gains rise
  with the grade: only the first k count, and more relevance there only adds;
* SetR (recall over the whole ranking: a relevant retrieved document adds 1 to both ``a`` and ``R`` in ``a / R``,
  with ``a <= R``), SetP, SetRelP, SetAP, SetF, and the counts NumRel, NumRelRet, NumRet, NumQ,
  NumNonrelJudgedRet;
* the session family on a ranked list (one document per iteration): iterCG, iterDCG, iterGR, RG, DRG, AvgGain,
  RAG, DRAG, SRE and sDCG add up gains that rise with the grade over a fixed number of iterations or results;
  iterR, iterUR, iterDupR and SRR do not change;

and it does *not* hold for

* nDCG and its variants (ndcg_rel, Rndcg), AP, GMAP, Rprec, IPrec, 11pt_avg: a relevant document also raises
  the normaliser (the ideal DCG, R), so the value can fall. With one relevant document judged at rank 1
  (nDCG@10 = AP = 1), the document at rank 10 turning relevant gives nDCG@10 = 0.79 and AP = 0.6, while every
  unjudged document relevant gives 1 again: the true value can lie outside both completions;
* R@k and RelP@k: a relevant document retrieved below k raises R but not the count above k;
* RBP with graded gains: they are divided by the query's largest judged grade, which a completed document can
  raise;
* Bpref, GMBpref, infAP, binG: today's value skips unjudged documents rather than counting them not relevant,
  and R grows;
* RBPResid, G, utility, Quepid's scorers (avgRating, avgRating100, editDistanceFromBest, QuepidV1, blogNDCG) and
  IterationsForAllGoodResults: not analysed, so not claimed;
* Judged and Unj measure coverage itself; the completion judges everything, so they are reported as they are.

Documents no run retrieved are outside every bound: if relevant ones exist unjudged, recall-like values (R, SetR,
NumRel) are lower than any completion of the ranking shows.

``Bounds.claims`` says, per metric, which case applies and why; a metric whose gain map does not rise with the
grade loses its claim. The interval ``[low, high]`` is the minimum and maximum of the two completions in every
case, and is called a bound only where the claim holds.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from gainscope.core.judged_run import PreparedJudgments, build_judged_run
from gainscope.core.judgments import Judgments
from gainscope.core.policies import Policies
from gainscope.core.run import Run, run_list
from gainscope.errors import PolicyError, option
from gainscope.metrics.base import GainMap, Metric
from gainscope.results import Results, aggregate_values

__all__ = ["COVERAGE", "Bounds", "Claim", "DifferenceBound", "bounds_runs", "claim", "difference_bounds",
           "metric_depth", "top_grade"]

#: metrics that are bounded by their two completions (see the module docstring), with the reason
_BOUNDED = {
    "P": "only the relevant documents in the first k count, over a fixed k",
    "Success": "a relevant document can only make it 1",
    "RR": "a relevant document can only move the first relevant one up",
    "CG": "a sum of gains of the first k",
    "DCG": "a sum of discounted gains of the first k",
    "ERR": "a more relevant document raises its own stopping chance by more than it lowers the later ones' share",
    "RBP": "with binary gains, a sum of discounted gains and no normaliser",
    "SetP": "relevant retrieved over a fixed number retrieved",
    "SetR": "a relevant retrieved document adds 1 to both parts of relevant retrieved / R",
    "SetRelP": "relevant retrieved over min(retrieved, R): the count rises at least as fast as the divisor",
    "SetAP": "a product of SetP and SetR, both rising",
    "SetF": "a harmonic mean of SetP and SetR, both rising",
    "NumRel": "a count that grows", "NumRelRet": "a count that grows", "NumRet": "does not change",
    "NumQ": "does not change", "NumNonrelJudgedRet": "does not change: a completed document is relevant",
    # the session family on a ranked list (one document per iteration): sums of gains that rise with the grade
    # over a fixed number of iterations, and counts of results that do not change
    "iterCG": "a sum of good gains of the first i", "iterDCG": "a sum of discounted good gains of the first i",
    "iterGR": "a count of good documents in the first i", "RG": "a sum of good gains over a fixed i",
    "DRG": "a sum of discounted good gains over a fixed i", "AvgGain": "a good gain over a fixed number of results",
    "RAG": "a sum of good gains over fixed numbers of results", "DRAG": "a sum of good gains over fixed numbers "
    "of results", "SRE": "good documents over a fixed number of results", "sDCG": "a sum of discounted gains",
    "iterR": "does not change", "iterUR": "does not change", "iterDupR": "does not change", "SRR": "does not change",
}
_NOT_BOUNDED = {
    "nDCG": "the ideal DCG grows with every relevant document, so the value can fall",
    "RelP": "a relevant document retrieved below k raises min(k, R) but not the count above k",
    "R": "a relevant document retrieved below k raises R but not the count above k",
    "ndcg_rel": "an nDCG: the ideal grows with every relevant document",
    "Rndcg": "an nDCG: the ideal grows with every relevant document",
    "AP": "R grows with every relevant document, so the value can fall",
    "GMAP": "AP, whose R grows with every relevant document",
    "Rprec": "R and the first-R window change with every relevant document",
    "IPrec": "recall levels move with R",
    "11pt_avg": "recall levels move with R",
    "Bpref": "today's value skips unjudged documents rather than counting them not relevant, and R grows",
    "GMBpref": "bpref: unjudged documents are skipped today, and R grows",
    "infAP": "an estimate from a sampled pool: unjudged documents are not 'not relevant' to it",
    "binG": "not analysed: no claim",
    "RBPResid": "the residual is what unjudged documents could add: judging them all changes its meaning",
    "G": "not analysed: no claim",
    "utility": "depends on the signs of its weights: no claim",
    "avgRating": "a Quepid scorer over rated documents only: no claim",
    "avgRating100": "a Quepid scorer over rated documents only: no claim",
    "editDistanceFromBest": "a Quepid scorer: no claim",
    "QuepidV1": "a Quepid scorer: no claim",
    "blogNDCG": "an nDCG: the ideal grows with every relevant document",
    "IterationsForAllGoodResults": "a cap and censored values: not analysed, no claim",
}
#: coverage metrics, reported as they are
COVERAGE = ("Judged", "Unj")


@dataclass(frozen=True)
class Claim:
    """Whether a metric's two completions bound every labelling of the unjudged documents, and why."""

    metric: str
    bounded: bool
    why: str


def metric_depth(metric: Metric) -> int | None:
    """The deepest rank ``metric`` reads: its cutoff, or None for the whole ranking."""
    if type(metric).at_param() != "cutoff":
        return None
    depth = getattr(metric, "cutoff", None)
    return None if depth is None else int(depth)


def top_grade(judgments: Judgments | None, policies: Policies) -> float | int:
    """The grade a completed document gets: the largest judged grade, at least the relevance level and 1
    (an integer unless the judgments have float grades)."""
    top = judgments.frame["grade"].max() if judgments is not None and len(judgments) else None
    best = max(float(top) if top is not None else 1.0, float(policies.relevance_level), 1.0)  # type: ignore[arg-type]
    if judgments is not None and judgments.float_grades:
        return best
    return math.ceil(best)


def _gain_rises(metric: Metric, grades: Iterable[float], top: float) -> bool:
    """The metric's gain (if it has one) never falls as the grade rises up to ``top``."""
    from gainscope.metrics.gains import gain_value

    gain = getattr(metric, "gain", None)
    if not isinstance(gain, GainMap):
        return True
    points = sorted({0.0, float(top), *(float(g) for g in grades if 0 <= g <= top), *(k for k, _ in gain.items),
                     *(float(i) for i in range(int(top) + 1))})
    values = [gain_value(g, gain) for g in points if g <= top]
    return all(b >= a for a, b in itertools.pairwise(values))


def claim(metric: Metric, grades: Iterable[float] = (), top: float = 1.0) -> Claim:
    """Whether ``metric``'s two completions are bounds (see the module docstring)."""
    name = type(metric).name
    if name in COVERAGE:
        return Claim(str(metric), False, "measures coverage itself; the completion judges every document")
    if name == "RBP" and getattr(metric, "rel", None) is None:
        return Claim(str(metric), False, "graded gains are divided by the query's largest judged grade, which a "
                                         "completed document can raise")
    if name in _BOUNDED:
        if not _gain_rises(metric, grades, top):
            return Claim(str(metric), False, "its gain map does not rise with the grade, so a higher grade can "
                                             "lower it")
        return Claim(str(metric), True, _BOUNDED[name])
    return Claim(str(metric), False, _NOT_BOUNDED.get(name, "not analysed: no claim"))


@dataclass(frozen=True, eq=False)
class Bounds:
    """One run's values under the two completions (see the module docstring).

    ``today`` and ``completed`` are ``queries x metrics`` (NaN where a value is left out by the ``undefined``
    policy), ``judged`` the judged share of the first ``k`` documents of each metric (``Judged@k``; the whole
    ranking for a metric without a cutoff; NaN for a query with nothing retrieved); ``claims`` say where
    ``[low, high]`` is a bound.
    """

    run_name: str
    metrics: tuple[Metric, ...]
    query_ids: tuple[str, ...]
    today: np.ndarray
    completed: np.ndarray
    judged: np.ndarray
    claims: tuple[Claim, ...]
    top_grade: float
    results: Results

    @property
    def metric_names(self) -> list[str]:
        """Canonical names of the metrics."""
        return [str(m) for m in self.metrics]

    @property
    def low(self) -> np.ndarray:
        """The smaller of the two completions, per query and metric."""
        return np.fmin(self.today, self.completed)

    @property
    def high(self) -> np.ndarray:
        """The larger of the two completions, per query and metric."""
        return np.fmax(self.today, self.completed)

    def aggregate(self, j: int) -> dict[str, float]:
        """Metric ``j``'s aggregate under each completion, their minimum and maximum, and the mean judged share."""
        how = self.metrics[j].aggregate
        today = aggregate_values(self.today[:, j], how)
        completed = aggregate_values(self.completed[:, j], how)
        return {"today": today, "completed": completed, "low": min(today, completed),
                "high": max(today, completed), "judged": aggregate_values(self.judged[:, j], "mean")}

    def to_dict(self) -> dict[str, Any]:
        """Plain data: per metric the claim and the aggregates, per query the values (NaN as None)."""
        def clean(x: float) -> float | None:
            return None if math.isnan(x) else x

        out: dict[str, Any] = {"run": self.run_name, "top_grade": self.top_grade, "metrics": {}}
        for j, name in enumerate(self.metric_names):
            out["metrics"][name] = {
                "bounded": self.claims[j].bounded, "why": self.claims[j].why,
                **{k: clean(v) for k, v in self.aggregate(j).items()},
                "per_query": {q: {"today": clean(float(self.today[i, j])),
                                  "completed": clean(float(self.completed[i, j])),
                                  "judged": clean(float(self.judged[i, j]))}
                              for i, q in enumerate(self.query_ids)}}
        return out


def _judged_metric(depth: int | None, longest: int) -> Metric:
    from gainscope.metrics.names import parse_metric

    return parse_metric(f"Judged@{depth if depth is not None else max(longest, 1)}")


def _completion(judgments: Judgments, jr_dense: Any, depth: int | None, top: float | int) -> Judgments:
    """The judgments plus every unjudged document of the dense judged run within ``depth`` at ``top``."""
    grades = jr_dense.grades
    unjudged = np.isnan(grades) | (grades < 0)
    within = np.ones(len(grades), dtype=bool) if depth is None else jr_dense.group_start <= depth
    picked = unjudged & within
    query = np.repeat(np.arange(jr_dense.num_queries), np.diff(jr_dense.offsets))[picked]
    if jr_dense.doc_ids is None or not picked.any():
        return judgments
    ids = pl.Series(jr_dense.query_ids, dtype=pl.String).gather(query)
    added = pl.DataFrame({"query_id": ids, "doc_id": jr_dense.doc_ids.filter(pl.Series(picked))})
    frame = judgments.frame.select("query_id", "doc_id", "grade")
    added = added.with_columns(pl.lit(top).cast(frame.schema["grade"]).alias("grade"))
    kept = frame.join(added.select("query_id", "doc_id"), on=["query_id", "doc_id"], how="anti")
    return Judgments(pl.concat([kept, added]), source=judgments.source)


def bounds_runs(judgments: Judgments | Any, runs: Sequence[Run | Any], metrics: Any, *,
                policies: Policies | None = None, profile: str | None = None, profile_use: Any = None,
                **policy_kwargs: Any) -> list[Bounds]:
    """The :class:`Bounds` of each run; arguments as :func:`gainscope.evaluate_runs` (``profile_use``: the record
    of a profile the caller already applied, echoed with the results). ``Bounds.results`` is what
    ``evaluate_runs`` gives."""
    from gainscope.evaluation import _as_judgments, _judged, _setup, compute
    from gainscope.io import read_run

    pol, mets, use = _setup(metrics, policies, profile, policy_kwargs)
    use = use if use is not None else profile_use
    if pol.judged_only:
        raise PolicyError(f"bounds ask what the unjudged documents could change, and {option('judged_only')} drops "
                          "them before scoring; use one or the other")
    j = _as_judgments(judgments)
    prepared = PreparedJudgments.of(j, pol.negative_grades)
    top = top_grade(j, pol)
    judged_grades = j.frame["grade"].unique().to_list()
    claims = tuple(claim(m, judged_grades, float(top)) for m in mets)
    groups: dict[int | None, list[int]] = {}
    for i, m in enumerate(mets):
        groups.setdefault(metric_depth(m), []).append(i)
    out = []
    for run in run_list(runs):
        r = run if isinstance(run, Run) else read_run(run)
        jr, run_notes = _judged(prepared, r, pol)
        today = compute(jr, mets, notes=tuple(j.notes) + run_notes, profile=use)
        completed = np.full(today.values.shape, np.nan)
        judged = np.full(today.values.shape, np.nan)
        longest = int(jr.num_ret.max()) if len(jr.num_ret) else 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ties, coverage and undefined values were said by today's evaluation
            dense = build_judged_run(prepared, r, pol, sparse=False)
            for depth, cols in groups.items():
                full = _completion(j, dense, depth, top)
                jr_full, _ = _judged(PreparedJudgments.of(full, pol.negative_grades), r, pol)
                values = compute(jr_full, [mets[c] for c in cols], warn=False).values
                share = compute(jr, [_judged_metric(depth, longest)], warn=False).values[:, 0]
                share[jr.missing | (jr.num_ret == 0)] = np.nan  # nothing retrieved: no share to speak of
                for k, c in enumerate(cols):
                    completed[:, c] = values[:, k]
                    judged[:, c] = share
        cov = [i for i, m in enumerate(mets) if type(m).name in COVERAGE]
        completed[:, cov] = today.values[:, cov]
        out.append(Bounds(run_name=today.run_name, metrics=tuple(mets), query_ids=today.query_ids,
                          today=today.values, completed=completed, judged=judged, claims=claims,
                          top_grade=float(top), results=today))
    return out


@dataclass(frozen=True)
class DifferenceBound:
    """What the unjudged documents could do to one comparison: run ``run`` against ``baseline`` under ``metric``.

    ``delta`` is today's mean difference over the queries both runs have a value for; ``low`` and ``high`` are
    the means of ``run_low - baseline_high`` and ``run_high - baseline_low`` per query, each run's unjudged
    documents completed on their own (a document both runs retrieved may count relevant for one and not for the
    other, which only widens the range). ``bounded`` is the metric's claim: where it holds, no labelling of the
    unjudged documents moves the difference outside ``[low, high]``. ``judged_run`` and ``judged_baseline`` are
    their mean judged shares within the metric's depth (over the paired queries that retrieved something).
    """

    metric: str
    run: str
    baseline: str
    queries: int
    delta: float
    low: float
    high: float
    bounded: bool
    why: str
    judged_run: float
    judged_baseline: float

    @property
    def could_change_sign(self) -> bool:
        """True when some completion gives the difference another sign than today (or makes it zero)."""
        if self.delta > 0:
            return self.low <= 0
        if self.delta < 0:
            return self.high >= 0
        return self.low < 0 or self.high > 0


def difference_bounds(bounds: Sequence[Bounds], baseline: str | None = None) -> list[DifferenceBound]:
    """Every run's :class:`DifferenceBound` against ``baseline`` (a run name; default the first), per metric,
    with queries paired by id as :func:`gainscope.compare.compare_results` pairs them."""
    if not bounds:
        return []
    names = [b.run_name for b in bounds]
    base = bounds[0] if baseline is None else next((b for b in bounds if b.run_name == baseline), None)
    if base is None:
        raise PolicyError(f"{option('baseline', baseline)} is not among the runs: {', '.join(names)}")
    out = []
    for j, metric in enumerate(base.metric_names):
        for b in bounds:
            if b is base:
                continue
            where = {q: i for i, q in enumerate(b.query_ids)}
            rows = [(where[q], i) for i, q in enumerate(base.query_ids) if q in where]
            mine = np.array([r for r, _ in rows], dtype=np.int64)
            theirs = np.array([i for _, i in rows], dtype=np.int64)
            keep = ~np.isnan(b.today[mine, j]) & ~np.isnan(base.today[theirs, j])
            mine, theirs = mine[keep], theirs[keep]
            n = len(mine)

            def mean(x: np.ndarray) -> float:
                return float(x.mean()) if len(x) else math.nan

            out.append(DifferenceBound(
                metric=metric, run=b.run_name, baseline=base.run_name, queries=n,
                delta=mean(b.today[mine, j] - base.today[theirs, j]),
                low=mean(b.low[mine, j] - base.high[theirs, j]), high=mean(b.high[mine, j] - base.low[theirs, j]),
                bounded=b.claims[j].bounded, why=b.claims[j].why,
                judged_run=aggregate_values(b.judged[mine, j], "mean"),
                judged_baseline=aggregate_values(base.judged[theirs, j], "mean")))
    return out
