"""Looking up evaluated metrics in Results with unusual arguments: one name where a list is expected, a name
given twice, nothing, the wrong type, membership and iteration."""

from __future__ import annotations

import pytest

import gainscope
from gainscope.errors import MetricError


def _results() -> gainscope.Results:
    # q1 ranks its one relevant document at 2: AP = RR = 1/2; nDCG@10 = 1 / log2(3)
    qrels = gainscope.Judgments.from_dict({"q1": {"d1": 1}})
    return gainscope.evaluate(qrels, gainscope.Run.from_dict({"q1": {"d0": 2.0, "d1": 1.0}}), ["AP", "nDCG@10", "RR"])


def test_select_takes_one_name_as_one_metric() -> None:
    """``select("map")`` was read character by character: "unknown metric 'm'"."""
    r = _results().select("map")
    assert r.metric_names == ["AP"] and r["AP"] == 0.5


def test_select_keeps_a_metric_named_twice_once() -> None:
    """``select(["map", "AP"])`` gave two columns named AP."""
    r = _results().select(["map", "AP", "recip_rank"])
    assert r.metric_names == ["AP", "RR"] and r.values.shape == (1, 2)


@pytest.mark.parametrize(("given", "message"), [
    ([], "select needs at least one metric, for example select(['nDCG@10'])"),
    (None, "select takes metric names or Metric objects (select(['nDCG@10', 'AP'])); got None"),
])
def test_select_of_nothing_or_a_wrong_type_is_refused(given: object, message: str) -> None:
    """``select([])`` gave results without a column; ``select(None)`` Python's "'NoneType' object is not iterable"."""
    with pytest.raises(MetricError) as err:
        _results().select(given)  # type: ignore[arg-type]
    assert str(err.value) == message


def test_membership_reads_any_spelling() -> None:
    """``"AP" in results`` iterated with 0, 1, ... and raised "'0' is not among the evaluated metrics"."""
    r = _results()
    assert "AP" in r and "map" in r and "ndcg_cut.10" in r
    assert "P@5" not in r and "no such metric" not in r and 3 not in r


def test_results_are_not_iterable() -> None:
    with pytest.raises(TypeError, match="'Results' object is not iterable"):
        list(_results())
