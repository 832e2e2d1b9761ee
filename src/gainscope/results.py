"""Results: per-query values, aggregates, and the conventions that produced them.

A :class:`Results` holds one run's values as a dense ``queries x metrics`` matrix (NaN where a value is
undefined and the ``undefined`` policy is ``"skip"``), the aggregate of each metric (mean, sum or geometric
mean, as the metric declares), the policies, the query coverage and the notes of the readers. It converts
to polars, pandas, plain dicts and JSON; rendering lives in :mod:`gainscope.render`.

Values made outside gainscope's metrics -- a case's custom scorer (JavaScript, a Python function) -- go into the
same type (:meth:`Results.of_values`): their column's metric is a :class:`GivenValues` descriptor, which names and
describes the values and is never computed (it is not a registered metric: ``parse_metric`` does not know it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from gainscope.core.judged_run import Coverage
from gainscope.core.policies import Policies
from gainscope.errors import MetricError, spell
from gainscope.metrics.base import Metric
from gainscope.metrics.profiles import ProfileUse

__all__ = ["GivenValues", "Results", "aggregate_values"]

GEO_FLOOR = 1e-5


def aggregate_values(values: np.ndarray, how: str, censored: np.ndarray | None = None) -> float:
    """Aggregate one metric's per-query values (NaN values, and ``censored`` ones, are left out)."""
    keep = ~np.isnan(values)
    if censored is not None:
        keep &= ~censored
    v = values[keep]
    if len(v) == 0:
        return math.nan
    if how == "sum":
        return float(v.sum())
    if how == "gmean":
        return float(np.exp(np.mean(np.log(np.maximum(v, GEO_FLOOR)))))
    return float(v.mean())


@dataclass(frozen=True)
class GivenValues(Metric):
    """The metric of a column whose values were given, not computed by gainscope: a case's custom scorer.

    ``label`` is the column's name (``str()`` of the descriptor, e.g. ``my_scorer.js`` or ``module:function``),
    ``description`` says where the values come from. It declares no bounds (a scorer's values are its own) and
    is aggregated by the mean; :meth:`compute` and :meth:`reference` refuse, since no formula made the values.
    """

    name: ClassVar[str] = "given"
    summary: ClassVar[str] = "values given by a function outside gainscope's metrics"
    bounds: ClassVar[tuple[float | None, float | None]] = (None, None)
    missing_scores_zero: ClassVar[bool] = False
    label: str = "given"
    description: str = ""

    def compute(self, ctx: Any) -> np.ndarray:
        raise MetricError(f"{self.label}: {self.description or 'given values'}; gainscope's kernels do not compute "
                          "them")

    def reference(self, q: Any, policies: Policies) -> float:
        raise MetricError(f"{self.label}: {self.description or 'given values'}; gainscope has no reference for them")

    def __str__(self) -> str:
        return self.label


@dataclass(frozen=True, eq=False)
class Results:
    """The evaluation of one run. Index it by metric name for the aggregate: ``results["nDCG@10"]``."""

    run_name: str
    metrics: tuple[Metric, ...]
    query_ids: tuple[str, ...]
    values: np.ndarray
    undefined: np.ndarray
    policies: Policies
    coverage: Coverage
    notes: tuple[str, ...] = ()
    #: string-valued per-query extras by name, then query id: trec_eval's relstring from the Spark backend
    extras: dict[str, dict[str, str]] = field(default_factory=dict)
    #: the convention profile the metrics and policies came from, and what was given over it
    profile: ProfileUse | None = None
    #: ``queries x metrics``, True where a value is censored (a stand-in at a cap, see
    #: :meth:`Metric.censored <gainscope.metrics.base.Metric.censored>`): left out of the aggregate; None when
    #: no metric censors
    censored: np.ndarray | None = None
    #: the names the columns are shown under when an adapter names them (one per metric, unique): the temporal
    #: batch's ``TemporalNDCG@10`` for the core's ``nDCG@10``, its ``TemporalCoverage@3`` for ``SetR`` over the
    #: anchors covered; empty: the metrics' canonical names
    labels: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.labels and (len(self.labels) != len(self.metrics) or len(set(self.labels)) != len(self.labels)):
            raise MetricError(f"labels name each of the {len(self.metrics)} metrics once; got {list(self.labels)}")

    @classmethod
    def of_values(cls, run_name: str, metric: Metric, query_ids: Sequence[str], values: Sequence[float],
                  undefined: Sequence[bool], policies: Policies, notes: Sequence[str] = ()) -> Results:
        """One column of values made outside the core's kernels (``metric`` is usually a :class:`GivenValues`):
        ``values[i]`` for ``query_ids[i]`` (NaN: no value), ``undefined[i]`` True where the value is undefined
        rather than missing. Every query is evaluated (coverage n of n); nothing is recomputed or changed.

        >>> from gainscope.core.policies import Policies
        >>> given = GivenValues("top5.js", "a JavaScript scorer's values")
        >>> r = Results.of_values("case", given, ["q1", "q2"], [0.5, float("nan")], [False, True], Policies())
        >>> r.metric_names, r["top5.js"]
        (['top5.js'], 0.5)
        """
        ids = tuple(query_ids)
        column = np.asarray(values, dtype=float).reshape(len(ids), 1)
        mask = np.asarray(undefined, dtype=bool).reshape(len(ids), 1)
        n = len(ids)
        return cls(run_name=run_name, metrics=(metric,), query_ids=ids, values=column, undefined=mask,
                   policies=policies, coverage=Coverage(n, n, n), notes=tuple(notes))

    # ------------------------------------------------------------------ access
    @property
    def metric_names(self) -> list[str]:
        """Names of the metrics, in request order: the canonical names, or the adapter's ``labels``."""
        return list(self.labels) if self.labels else [str(m) for m in self.metrics]

    def _column(self, metric: str | Metric) -> int:
        """The column of ``metric``: its name (or label), its canonical name when one column has it, or any name
        that resolves to one metric the way the evaluation resolved names (the same profile and policies):
        ``"map"`` finds ``AP``."""
        key = str(metric)
        names = self.metric_names
        if key in names:
            return names.index(key)
        canonical = [str(m) for m in self.metrics]
        if self.labels and canonical.count(key) > 1:
            raise MetricError(f"{key!r} is the metric of {canonical.count(key)} columns "
                              f"({', '.join(n for n, c in zip(names, canonical, strict=True) if c == key)}); "
                              "name the column")
        if key in canonical:
            return canonical.index(key)
        if isinstance(metric, str):
            from gainscope.metrics.resolve import resolve_metrics

            found = resolve_metrics(metric, profile=self.profile.profile if self.profile else None,
                                    policies=self.policies)
            if len(found) > 1:
                raise MetricError(f"{key!r} names {len(found)} metrics ({', '.join(map(str, found))}); look one "
                                  "up at a time")
            if str(found[0]) in canonical:
                return self._column(found[0])
        raise MetricError(f"{key!r} is not among the evaluated metrics: {', '.join(names)}")

    def _censored(self, j: int) -> np.ndarray | None:
        return None if self.censored is None else self.censored[:, j]

    @property
    def aggregates(self) -> dict[str, float]:
        """``{metric name: aggregate value}`` in request order (censored values left out)."""
        return {name: aggregate_values(self.values[:, j], m.aggregate, self._censored(j))
                for j, (name, m) in enumerate(zip(self.metric_names, self.metrics, strict=True))}

    def __getitem__(self, metric: str | Metric) -> float:
        """The aggregate of ``metric``: its name as shown, or any spelling that names one evaluated metric.

        >>> import gainscope
        >>> qrels = gainscope.Judgments.from_dict({"q1": {"d1": 1}, "q2": {"d2": 1}})
        >>> run = gainscope.Run.from_dict({"q1": {"d1": 2.0}, "q2": {"d3": 2.0, "d2": 1.0}})
        >>> results = gainscope.evaluate(qrels, run, ["nDCG@10", "RR"])
        >>> results["RR"], results["recip_rank"]  # RR: (1 + 1/2) / 2
        (0.75, 0.75)
        >>> results["AP"]
        Traceback (most recent call last):
        ...
        gainscope.errors.MetricError: 'AP' is not among the evaluated metrics: nDCG@10, RR
        """
        j = self._column(metric)
        return aggregate_values(self.values[:, j], self.metrics[j].aggregate, self._censored(j))

    def __contains__(self, metric: object) -> bool:
        """Whether ``metric`` (any spelling, or a Metric object) was evaluated: ``"map" in results``."""
        if not isinstance(metric, (str, Metric)):
            return False
        try:
            self._column(metric)
        except MetricError:
            return False
        return True

    #: not iterable (``__getitem__`` takes metric names, not positions): ``iter(results)`` is a TypeError
    __iter__ = None

    def censored_queries(self, metric: str | Metric) -> list[str]:
        """The queries whose value of ``metric`` is censored (left out of its aggregate)."""
        c = self._censored(self._column(metric))
        return [] if c is None else [q for q, x in zip(self.query_ids, c.tolist(), strict=True) if x]

    def per_query(self, metric: str | Metric) -> dict[str, float]:
        """``{query id: value}`` for one metric (NaN = undefined and skipped)."""
        j = self._column(metric)
        return dict(zip(self.query_ids, self.values[:, j].tolist(), strict=True))

    def conventions(self) -> dict[str, Any]:
        """Everything that shaped the numbers: the profile (None without one), policies, coverage, notes."""
        return {"profile": self.profile.as_dict() if self.profile else None, "policies": self.policies.as_dict(),
                "coverage": self.coverage.as_dict(), "notes": [spell(n) for n in self.notes]}

    def select(self, metrics: str | Metric | Iterable[str | Metric]) -> Results:
        """The same results restricted to ``metrics`` (any accepted spelling, one name or several), in that order;
        a metric named twice is kept once.

        >>> import gainscope
        >>> qrels = gainscope.Judgments.from_dict({"q1": {"d1": 1}})
        >>> results = gainscope.evaluate(qrels, gainscope.Run.from_dict({"q1": {"d1": 1.0}}), ["nDCG@10", "AP", "RR"])
        >>> results.select(["recip_rank", "map"]).metric_names
        ['RR', 'AP']
        """
        from dataclasses import replace

        if isinstance(metrics, (str, Metric)):
            metrics = [metrics]
        elif not isinstance(metrics, Iterable):
            raise MetricError(f"select takes metric names or Metric objects (select(['nDCG@10', 'AP'])); got "
                              f"{metrics!r}")
        cols = list(dict.fromkeys(self._column(m) for m in metrics))  # a metric named twice is one column
        if not cols:
            raise MetricError("select needs at least one metric, for example select(['nDCG@10'])")
        return replace(self, metrics=tuple(self.metrics[j] for j in cols), values=self.values[:, cols],
                       undefined=self.undefined[:, cols], labels=tuple(self.labels[j] for j in cols) if self.labels
                       else (), censored=None if self.censored is None else self.censored[:, cols])

    # ------------------------------------------------------------------ conversion
    def to_dict(self, *, per_query: bool = True) -> dict[str, Any]:
        """Plain data: run, metrics, aggregates, per-query values (None = undefined; left out with
        ``per_query=False``), the censored queries of each metric that has some, and conventions."""
        per_query_values = {"per_query": {
            q: {name: (None if math.isnan(v) else v) for name, v in zip(self.metric_names, row, strict=True)}
            for q, row in zip(self.query_ids, self.values.tolist(), strict=True)
        }} if per_query else {}
        aggregates = {k: (None if math.isnan(v) else v) for k, v in self.aggregates.items()}
        core = {"core_metrics": dict(zip(self.labels, map(str, self.metrics), strict=True))} if self.labels else {}
        censored = {} if self.censored is None or not self.censored.any() else {"censored": {
            name: self.censored_queries(name) for j, name in enumerate(self.metric_names) if self.censored[:, j].any()}}
        return {"run": self.run_name, "metrics": self.metric_names, "aggregates": aggregates,
                **per_query_values, **core, **censored, **self.conventions()}

    def to_json(self, **kwargs: Any) -> str:
        """JSON text of :meth:`to_dict`."""
        import json

        return json.dumps(self.to_dict(), **kwargs)

    def to_polars(self, *, wide: bool = False) -> Any:
        """Per-query values as a polars frame: long (``run, query_id, metric, value``) or wide."""
        import polars as pl

        if wide:
            data: dict[str, Any] = {"query_id": list(self.query_ids)}
            for j, name in enumerate(self.metric_names):
                data[name] = self.values[:, j]
            return pl.DataFrame(data).with_columns(pl.selectors.float().fill_nan(None))
        nq, nm = self.values.shape
        return pl.DataFrame({
            "run": [self.run_name] * (nq * nm),
            "query_id": np.repeat(np.array(self.query_ids, dtype=object), nm).tolist() if nq else [],
            "metric": self.metric_names * nq,
            "value": self.values.reshape(-1),
        }, schema={"run": pl.String, "query_id": pl.String, "metric": pl.String,
                   "value": pl.Float64}).with_columns(pl.col("value").fill_nan(None))

    def to_pandas(self, *, wide: bool = False) -> Any:
        """Per-query values as a pandas frame (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:
            from gainscope.errors import MissingDependencyError

            raise MissingDependencyError("to_pandas needs pandas; install it with: pip install pandas") from None
        frame = self.to_polars(wide=wide)
        return pd.DataFrame({c: frame[c].to_list() for c in frame.columns})

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v:.4f}" for k, v in list(self.aggregates.items())[:4])
        more = "" if len(self.metrics) <= 4 else f", ... ({len(self.metrics)} metrics)"
        return f"Results({self.run_name!r}, {len(self.query_ids)} queries: {shown}{more})"

