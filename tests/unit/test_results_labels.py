"""Results whose columns an adapter names (labels): the labels are the names, the core metric behind a label is
still found by its canonical name when one column has it, and the labels name each column once."""

from __future__ import annotations

import numpy as np
import pytest

from gainscope.core.judged_run import Coverage
from gainscope.core.policies import Policies
from gainscope.errors import MetricError
from gainscope.metrics.names import parse_metric
from gainscope.results import Results


def _results(labels: tuple[str, ...] = ("years@5", "anchors@5", "ndcg@5")) -> Results:
    metrics = tuple(parse_metric(m) for m in ("SetR", "SetR", "nDCG@5"))
    values = np.array([[0.5, 1.0, 0.25], [1.0, 0.0, 0.75]])
    return Results("run", metrics, ("q1", "q2"), values, np.zeros(values.shape, dtype=bool), Policies(),
                   Coverage(2, 2, 2), labels=labels)


def test_labels_name_the_columns() -> None:
    r = _results()
    assert r.metric_names == ["years@5", "anchors@5", "ndcg@5"]
    assert r.aggregates == {"years@5": 0.75, "anchors@5": 0.5, "ndcg@5": 0.5}
    assert r["anchors@5"] == 0.5 and r["nDCG@5"] == 0.5 and r["ndcg_cut.5"] == 0.5  # the core's names too
    assert r.per_query("years@5") == {"q1": 0.5, "q2": 1.0}
    with pytest.raises(MetricError, match=r"'SetR' is the metric of 2 columns \(years@5, anchors@5\)"):
        r["SetR"]
    assert r.select(["ndcg@5", "years@5"]).metric_names == ["ndcg@5", "years@5"]
    assert r.to_dict()["core_metrics"] == {"years@5": "SetR", "anchors@5": "SetR", "ndcg@5": "nDCG@5"}
    assert "core_metrics" not in _results(()).to_dict()


@pytest.mark.parametrize("labels", [("a", "b"), ("a", "a", "b")])
def test_labels_name_each_column_once(labels: tuple[str, ...]) -> None:
    with pytest.raises(MetricError, match="labels name each of the 3 metrics once"):
        _results(labels)
