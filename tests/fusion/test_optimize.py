"""Weight optimisation: the grid, the choice among equal means, the held-out report, and that every value comes
from gainscope's own evaluation.

The running example: in every query d1 is the one relevant document; run a ranks d1 (3), d2 (2), d3 (1); run b
ranks d2 (3), d3 (2), d1 (1). Min-max normalised, a gives d1 1, d2 0.5, d3 0 and b gives d2 1, d3 0.5, d1 0, so
wsum gives d1 w_a, d2 0.5 w_a + w_b, d3 0.5 w_b. For weights summing to 1: d1 comes first (RR = 1) exactly
when w_a > 2 w_b, i.e. w_a > 2/3; second (RR = 1/2) when it beats only d3, w_a > 0.5 w_b, i.e. w_a > 1/3;
third (RR = 1/3) otherwise.
"""

from __future__ import annotations

import math

import pytest

import gainscope
from gainscope.core.judgments import Judgments
from gainscope.core.run import Run
from gainscope.errors import InconsistentInputError, MetricError, PolicyError, QueryCoverageWarning
from gainscope.fusion import fuse, optimize_weights
from gainscope.fusion.optimize import weight_grid

QUERIES = ("q1", "q2", "q3", "q4")


def _data() -> tuple[Judgments, list[Run]]:
    qrels = Judgments.from_dict({q: {"d1": 1, "d2": 0, "d3": 0} for q in QUERIES})
    a = Run.from_dict({q: {"d1": 3.0, "d2": 2.0, "d3": 1.0} for q in QUERIES}, name="a")
    b = Run.from_dict({q: {"d2": 3.0, "d3": 2.0, "d1": 1.0} for q in QUERIES}, name="b")
    return qrels, [a, b]


def test_the_grid_is_every_multiple_of_the_step_summing_to_one() -> None:
    assert list(weight_grid(2, 0.5)) == [(0.0, 1.0), (0.5, 0.5), (1.0, 0.0)]
    three = list(weight_grid(3, 0.1))
    assert len(three) == 66  # C(10 + 2, 2)
    assert all(math.isclose(sum(w), 1.0) for w in three)
    assert (0.3, 0.3, 0.4) in three  # 3/10 is the float 0.3: printed weights read back exactly


@pytest.mark.parametrize(("step", "message"), [
    (0.3, "step=... must divide 1 (0.5, 0.25, 0.1, 0.05, ...); got 0.3"),
    (0, "step=... must be a number in (0, 1]; got 0"),
    (0.001, "a grid of step=0.001 over 3 runs has 501501 weightings (more than 20000); use a larger step or "
            "search='random'"),
])
def test_bad_grids_are_refused(step: float, message: str) -> None:
    with pytest.raises(PolicyError) as info:
        list(weight_grid(3, step))
    assert str(info.value) == message


def test_the_closest_weights_to_equal_among_the_best_win_and_the_held_out_value_is_reported() -> None:
    qrels, runs = _data()
    ws = optimize_weights(qrels, runs, "RR", ["q1", "q2", "q3"], method="wsum")
    # RR = 1 for w_a in {0.7, 0.8, 0.9, 1.0}; the closest to (0.5, 0.5) is (0.7, 0.3)
    assert ws.weights == (0.7, 0.3)
    assert [t.value for t in ws.trials] == [1 / 3] * 4 + [0.5] * 3 + [1.0] * 4  # w_a = 0, 0.1, ..., 1 (grid order)
    assert ws.train_queries == ("q1", "q2", "q3") and ws.heldout_queries == ("q4",)
    # equal weights: d2 first (RR 1/2); a alone RR 1; b alone: d1 third (RR 1/3)
    assert ws.train == {"fused": 1.0, "equal weights": 0.5, "a": 1.0, "b": pytest.approx(1 / 3)}
    assert ws.heldout == {"fused": 1.0, "equal weights": 0.5, "a": 1.0, "b": pytest.approx(1 / 3)}
    assert ws.run.notes[0].endswith("weights tuned for RR on 3 training queries (grid, step 0.1, 11 weightings)")


def test_the_reported_values_are_gainscope_evaluate_of_the_fused_run() -> None:
    qrels, runs = _data()
    ws = optimize_weights(qrels, runs, "nDCG@2", ["q1", "q2"], method="rrf", step=0.25)
    again = fuse(runs, "rrf", weights=ws.weights)
    assert again.frame.equals(ws.run.frame)  # the printed weights give back the same run
    held = Judgments(qrels.frame.filter(qrels.frame["query_id"].is_in(["q3", "q4"])))
    only = Run(again.frame.filter(again.frame["query_id"].is_in(["q3", "q4"])), name="rrf")
    assert ws.heldout["fused"] == gainscope.evaluate(held, only, "nDCG@2")["nDCG@2"]


def test_random_search_starts_with_equal_weights_and_is_reproducible() -> None:
    qrels, runs = _data()
    first = optimize_weights(qrels, runs, "RR", ["q1", "q2"], search="random", trials=20, seed=3)
    second = optimize_weights(qrels, runs, "RR", ["q1", "q2"], search="random", trials=20, seed=3)
    assert first.trials == second.trials and len(first.trials) == 20
    assert first.trials[0].weights == (0.5, 0.5)
    assert all(w == round(w, 4) for t in first.trials for w in t.weights)
    assert first.weights[0] > 2 * first.weights[1]  # the winner puts d1 first
    assert first.search == "random, 20 weightings, seed 3"


def test_no_held_out_query_is_said() -> None:
    qrels, runs = _data()
    with pytest.warns(QueryCoverageWarning, match="every judged query is a training query: there is no held-out"):
        ws = optimize_weights(qrels, runs, "RR", list(QUERIES), step=0.5)
    assert ws.heldout == {}


def test_training_queries_that_are_not_judged() -> None:
    qrels, runs = _data()
    with pytest.warns(QueryCoverageWarning, match=r"^1 training query is not judged and is left out: q9$"):
        ws = optimize_weights(qrels, runs, "RR", ["q1", "q9"], step=0.5)
    assert ws.train_queries == ("q1",)
    with pytest.raises(InconsistentInputError, match=r"^no training query is judged: the judgments have q1, q2, "
                                                     r"q3, \.\.\. \(1 more\); the training queries are Q1$"):
        optimize_weights(qrels, runs, "RR", ["Q1"])


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"method": "combsum"}, PolicyError, "combsum takes no weights=... to tune; the weighted methods are rrf, wsum"),
    ({"metric": ["RR", "AP"]}, MetricError, "the weights are tuned for one metric; got 2: RR, AP"),
    ({"search": "bayes"}, PolicyError, "unknown search='bayes'; the searches are: grid, random"),
    ({"search": "random", "trials": 0}, PolicyError, "trials=... must be an integer >= 1; got 0"),
])
def test_bad_searches_are_refused(kwargs, error, message) -> None:
    qrels, runs = _data()
    args = {"metric": "RR", **kwargs}
    with pytest.raises(error) as info:
        optimize_weights(qrels, runs, args.pop("metric"), ["q1"], **args)
    assert str(info.value) == message


def test_runs_with_the_same_name_are_told_apart() -> None:
    qrels, (a, b) = _data()
    b.name = "a"
    ws = optimize_weights(qrels, [a, b], "RR", ["q1", "q2"])
    assert list(ws.train) == ["fused", "equal weights", "a (run 1)", "a (run 2)"]
