"""Results holding values made outside the core's kernels (a case's custom scorer): the column's metric is a
GivenValues descriptor that names and describes them and is never computed."""

from __future__ import annotations

import math

import pytest

from gainscope.core.policies import Policies
from gainscope.errors import MetricError
from gainscope.results import GivenValues, Results


def test_given_values_go_into_one_column_unchanged() -> None:
    given = GivenValues("top5.js", "values given by the JavaScript scorer top5.js")
    r = Results.of_values("case", given, ["q1", "q2", "q3"], [-2.0, 4.0, math.nan], [False, False, True],
                          Policies(undefined="skip"), notes=("a note",))
    assert r.metric_names == ["top5.js"] and r.metrics == (given,)
    # the mean leaves NaN out: (-2 + 4) / 2 = 1; a negative value is kept as given (no clamping here)
    assert r["top5.js"] == 1.0
    assert r.per_query("top5.js")["q1"] == -2.0 and math.isnan(r.per_query("top5.js")["q3"])
    assert r.undefined[:, 0].tolist() == [False, False, True]
    assert r.coverage.evaluated_queries == 3 and r.notes == ("a note",)
    assert r.to_dict()["per_query"]["q3"] == {"top5.js": None}


def test_given_values_are_never_computed() -> None:
    given = GivenValues("mod:fn", "values given by the Python scorer mod:fn")
    assert str(given) == "mod:fn" and given.bounds == (None, None)
    with pytest.raises(MetricError, match="mod:fn: values given by the Python scorer mod:fn; gainscope's kernels"):
        given.compute(None)
    with pytest.raises(MetricError, match="gainscope has no reference for them"):
        given.reference(None, Policies())


def test_an_empty_column() -> None:
    r = Results.of_values("case", GivenValues("x"), [], [], [], Policies())
    assert r.values.shape == (0, 1) and math.isnan(r["x"])
