"""Results: per-query values, aggregates, and the conventions that produced them.

A :class:`Results` holds one run's values as a dense ``queries x metrics`` matrix (NaN where a value is
undefined and the ``undefined`` policy is ``"skip"``), the aggregate of each metric (mean, sum or geometric
mean, as the metric declares), the policies, the query coverage and the notes of the readers. It converts
to polars, pandas, plain dicts and JSON; rendering lives in :mod:`gainscope.render`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gainscope.core.judged_run import Coverage
from gainscope.core.policies import Policies
from gainscope.errors import MetricError
from gainscope.metrics.base import Metric
from gainscope.metrics.profiles import ProfileUse

__all__ = ["Results", "aggregate_values"]

GEO_FLOOR = 1e-5


def aggregate_values(values: np.ndarray, how: str) -> float:
    """Aggregate one metric's per-query values (NaN values are left out)."""
    v = values[~np.isnan(values)]
    if len(v) == 0:
        return math.nan
    if how == "sum":
        return float(v.sum())
    if how == "gmean":
        return float(np.exp(np.mean(np.log(np.maximum(v, GEO_FLOOR)))))
    return float(v.mean())


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
    #: the convention profile the metrics and policies came from, and what was given over it
    profile: ProfileUse | None = None
    #: the names the columns are shown under when an adapter names them (one per metric, unique): the temporal
    #: batch's ``TemporalNDCG@10`` for the core's ``nDCG@10``, its ``TemporalCoverage@3`` for ``SetR`` over the
    #: anchors covered; empty: the metrics' canonical names
    labels: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.labels and (len(self.labels) != len(self.metrics) or len(set(self.labels)) != len(self.labels)):
            raise MetricError(f"labels name each of the {len(self.metrics)} metrics once; got {list(self.labels)}")

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

    @property
    def aggregates(self) -> dict[str, float]:
        """``{metric name: aggregate value}`` in request order."""
        return {name: aggregate_values(self.values[:, j], m.aggregate)
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
        return aggregate_values(self.values[:, j], self.metrics[j].aggregate)

    def per_query(self, metric: str | Metric) -> dict[str, float]:
        """``{query id: value}`` for one metric (NaN = undefined and skipped)."""
        j = self._column(metric)
        return dict(zip(self.query_ids, self.values[:, j].tolist(), strict=True))

    def conventions(self) -> dict[str, Any]:
        """Everything that shaped the numbers: the profile (None without one), policies, coverage, notes."""
        return {"profile": self.profile.as_dict() if self.profile else None, "policies": self.policies.as_dict(),
                "coverage": self.coverage.as_dict(), "notes": list(self.notes)}

    def select(self, metrics: Sequence[str | Metric]) -> Results:
        """The same results restricted to ``metrics`` (any accepted spelling), in that order.

        >>> import gainscope
        >>> qrels = gainscope.Judgments.from_dict({"q1": {"d1": 1}})
        >>> results = gainscope.evaluate(qrels, gainscope.Run.from_dict({"q1": {"d1": 1.0}}), ["nDCG@10", "AP", "RR"])
        >>> results.select(["recip_rank", "map"]).metric_names
        ['RR', 'AP']
        """
        from dataclasses import replace

        cols = [self._column(m) for m in metrics]
        return replace(self, metrics=tuple(self.metrics[j] for j in cols), values=self.values[:, cols],
                       undefined=self.undefined[:, cols], labels=tuple(self.labels[j] for j in cols) if self.labels
                       else ())

    # ------------------------------------------------------------------ conversion
    def to_dict(self) -> dict[str, Any]:
        """Plain data: run, metrics, aggregates, per-query values (None = undefined) and conventions."""
        per_query = {
            q: {name: (None if math.isnan(v) else v) for name, v in zip(self.metric_names, row, strict=True)}
            for q, row in zip(self.query_ids, self.values.tolist(), strict=True)
        }
        aggregates = {k: (None if math.isnan(v) else v) for k, v in self.aggregates.items()}
        core = {"core_metrics": dict(zip(self.labels, map(str, self.metrics), strict=True))} if self.labels else {}
        return {"run": self.run_name, "metrics": self.metric_names, "aggregates": aggregates,
                "per_query": per_query, **core, **self.conventions()}

    def to_json(self, **kwargs: Any) -> str:
        """JSON text of :meth:`to_dict`."""
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

