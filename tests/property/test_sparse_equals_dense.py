"""The sparse judged run (judged positions only) gives every metric exactly the dense run's value, under every
policy: the kernels never depend on unjudged positions being present."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gainscope.core.judged_run import build_judged_run
from gainscope.errors import GainscopeWarning, InvalidParameterError, PolicyError
from gainscope.evaluation import compute
from gainscope.metrics.registry import all_metric_classes
from gainscope.testing import strategies as gst


@pytest.mark.slow
@settings(max_examples=100, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=gst.judgments_and_runs(), policies=gst.policies(), draw=st.data())
def test_sparse_equals_dense(data, policies, draw) -> None:
    judgments, run = data
    metrics = []
    for cls in all_metric_classes():
        metric = draw.draw(gst.metrics_of(cls), label=cls.name)
        if cls.uses_max_grade and (getattr(metric, "max_grade", None) is not None or policies.max_grade is not None):
            continue  # raises on grades above its scale, in both forms alike
        try:
            metric.check_policies(policies)
        except PolicyError:
            continue
        metrics.append(metric)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GainscopeWarning)
        dense = build_judged_run(judgments, run, policies)
        sparse = build_judged_run(judgments, run, policies, sparse=True)
        try:
            a = compute(dense, metrics, warn=False).values
        except InvalidParameterError:  # sDCG with a gain map that lacks a grade: refused in both forms alike
            kept = []
            for m in metrics:
                try:
                    compute(dense, [m], warn=False)
                    kept.append(m)
                except InvalidParameterError:
                    with pytest.raises(InvalidParameterError):
                        compute(sparse, [m], warn=False)
            metrics = kept
            a = compute(dense, metrics, warn=False).values
        b = compute(sparse, metrics, warn=False).values
    assert len(sparse.grades) <= len(dense.grades)
    np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12, equal_nan=True,
                               err_msg=f"sparse != dense under {policies}: {[str(m) for m in metrics]}")
