"""Helpers for testing metrics, shipped so that authors of metric plugins can reuse them.

* :mod:`gainscope.testing.strategies`: hypothesis strategies for judgments and runs with every awkward case
  (ties, negative grades, unjudged documents, queries without relevant documents, missing and run-only
  queries), for evaluation policies and for metrics with random valid parameters. Needs ``hypothesis``
  (the ``test`` extra); it is imported only when that module is.
* :func:`reference_values` and :func:`assert_matches_reference`: the conformance check every metric must
  pass, its vectorised ``compute`` against its plain per-query ``reference``.

Nothing else in gainscope imports this package.

>>> from gainscope import Judgments, Run
>>> from gainscope.core.judged_run import build_judged_run
>>> from gainscope.metrics import parse_metric
>>> jr = build_judged_run(Judgments.from_dict({"q": {"a": 1, "b": 0}}), Run.from_dict({"q": ["b", "a"]}))
>>> assert_matches_reference(parse_metric("nDCG@10"), jr)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from gainscope.core.judged_run import JudgedRun
    from gainscope.metrics.base import Metric

__all__ = ["assert_matches_reference", "fast_values", "reference_values"]


def fast_values(metric: Metric, jr: JudgedRun) -> np.ndarray:
    """The metric's vectorised values for every query of ``jr`` (NaN = undefined), before any policy fills
    undefined values or zeroes missing queries."""
    from gainscope.metrics.context import Context

    return np.asarray(metric.compute(Context(jr)), dtype=np.float64)


def reference_values(metric: Metric, jr: JudgedRun) -> np.ndarray:
    """The metric's plain per-query reference values for every query of ``jr``, in the same order."""
    from gainscope.evaluation import ranked_query

    return np.array([metric.reference(ranked_query(jr, i), jr.policies) for i in range(jr.num_queries)],
                    dtype=np.float64)


def assert_matches_reference(metric: Metric, jr: JudgedRun, *, rtol: float = 1e-12,
                             atol: float = 1e-12) -> None:
    """Assert that ``compute`` and ``reference`` agree on every query: NaN exactly where the other is NaN,
    and numerically close elsewhere. Raises AssertionError naming the metric and the queries that differ."""
    fast = fast_values(metric, jr)
    ref = reference_values(metric, jr)
    if fast.shape != ref.shape:
        raise AssertionError(f"{metric}: compute returned {fast.shape[0]} values for {ref.shape[0]} queries")
    nan_f, nan_r = np.isnan(fast), np.isnan(ref)
    bad = nan_f != nan_r
    both = ~nan_f & ~nan_r
    bad[both] = ~np.isclose(fast[both], ref[both], rtol=rtol, atol=atol)
    if bad.any():
        rows = [f"  {jr.query_ids[i]!r}: compute={fast[i]!r} reference={ref[i]!r}"
                for i in np.flatnonzero(bad)]
        raise AssertionError(f"{metric}: compute and reference differ under {jr.policies}:\n"
                             + "\n".join(rows))
