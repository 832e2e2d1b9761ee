"""gainscope.bounds: today's value and the completion with every unjudged retrieved document relevant, the judged
share, the per-metric claims (checked against random labellings through gainscope.evaluate), and the differences
of a comparison."""

from __future__ import annotations

import math
import random
import warnings

import numpy as np
import pytest

import gainscope
from gainscope.bounds import _BOUNDED, _NOT_BOUNDED, COVERAGE, bounds_runs, claim, difference_bounds
from gainscope.core.judgments import Judgments
from gainscope.core.run import Run
from gainscope.errors import PolicyError
from gainscope.evaluation import resolve_metrics
from gainscope.metrics import all_metric_classes


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ties and undefined values: the same in every evaluation compared
        return fn(*args, **kwargs)


def test_the_docstring_example_the_completions_are_not_bounds_for_ndcg_and_ap() -> None:
    # one relevant document judged, at rank 1; ranks 2..10 unjudged
    qrels = Judgments.from_dict({"q": {"d1": 1}})
    run = Run.from_dict({"q": [f"d{i}" for i in range(1, 11)]}, name="r")
    (b,) = bounds_runs(qrels, [run], ["nDCG@10", "AP", "P@10"])
    # today: nDCG@10 = AP = 1, P@10 = 1/10; completed (all ten relevant): nDCG@10 = AP = 1, P@10 = 1
    assert b.today[0].tolist() == [1.0, 1.0, 0.1]
    assert b.completed[0].tolist() == pytest.approx([1.0, 1.0, 1.0])
    assert [c.bounded for c in b.claims] == [False, False, True]
    # d10 alone relevant: DCG = 1 + 1/log2(11) = 1.2891, ideal 1 + 1/log2(3) = 1.6309 -> 0.7904; AP = (1 + 2/10) / 2
    only_d10 = Judgments.from_dict({"q": {"d1": 1, "d10": 1}})
    values = gainscope.evaluate(only_d10, run, ["nDCG@10", "AP"])
    assert values["nDCG@10"] == pytest.approx((1 + 1 / math.log2(11)) / (1 + 1 / math.log2(3)))
    assert values["AP"] == pytest.approx(0.6)
    assert values["nDCG@10"] < b.low[0, 0] and values["AP"] < b.low[0, 1]  # outside both completions


def test_completion_stays_within_each_metrics_depth_and_takes_the_top_grade() -> None:
    qrels = Judgments.from_dict({"q": {"a": 3, "c": 0}})
    run = Run.from_dict({"q": ["a", "b", "c", "d"]}, name="r")
    (b,) = bounds_runs(qrels, [run], ["DCG@2", "DCG@4", "Judged@4"])
    # DCG@2: a (3) + b completed at grade 3: 3 + 3 / log2(3); DCG@4: + d at rank 4: 3 / log2(5) (c is judged 0)
    assert b.top_grade == 3
    assert b.completed[0, 0] == pytest.approx(3 + 3 / math.log2(3))
    assert b.completed[0, 1] == pytest.approx(3 + 3 / math.log2(3) + 3 / math.log2(5))
    # judged shares: first 2: a only -> 1/2; first 4: a, c -> 2/4; Judged itself is coverage and not completed
    assert b.judged[0].tolist() == [0.5, 0.5, 0.5]
    assert b.completed[0, 2] == b.today[0, 2] == 0.5
    assert b.claims[2].why.startswith("measures coverage itself")


def test_negative_grades_are_completed_and_queries_nobody_judged_stay_out() -> None:
    qrels = Judgments.from_dict({"q1": {"a": -1, "b": 1}})
    run = Run.from_dict({"q1": ["a", "b"], "q2": ["x"]}, name="r")
    with pytest.warns(gainscope.errors.QueryCoverageWarning, match="no judgments"):
        (b,) = bounds_runs(qrels, [run], ["P@2"])
    assert b.query_ids == ("q1",)
    assert b.today[0, 0] == 0.5 and b.completed[0, 0] == 1.0  # a, pooled but unjudged, completed


def test_a_tie_group_across_the_depth_is_completed_whole_under_averaged_ties() -> None:
    qrels = Judgments.from_dict({"q": {"a": 1}})
    run = Run.from_dict({"q": {"a": 1.0, "b": 1.0, "c": 0.5}}, name="r")
    (b,) = bounds_runs(qrels, [run], ["P@1"], ties="average")
    # a and b tie for rank 1: P@1 averages their gains, (1 + 0) / 2; b completed: (1 + 1) / 2; c is not in the first
    # group, so it stays out
    assert (b.today[0, 0], b.completed[0, 0]) == (0.5, 1.0)


def test_today_is_what_evaluate_gives() -> None:
    qrels, runs = _random_case(11)
    mets = ["nDCG@5", "AP", "P@3", "RR", "ERR@5", "Bpref"]
    found = _quiet(bounds_runs, qrels, runs, mets)
    for b, run in zip(found, runs, strict=True):
        res = _quiet(gainscope.evaluate, qrels, run, mets)
        assert np.array_equal(b.today, res.values) and b.results.query_ids == res.query_ids


def test_every_metric_is_classified() -> None:
    names = {cls.name for cls in all_metric_classes()}
    classified = set(_BOUNDED) | set(_NOT_BOUNDED) | set(COVERAGE)
    assert names <= classified, sorted(names - classified)
    assert not set(_BOUNDED) & set(_NOT_BOUNDED)


def test_a_gain_map_that_does_not_rise_loses_the_claim() -> None:
    (rising,) = resolve_metrics("DCG(gain={1: 1, 2: 5})@5")
    (falling,) = resolve_metrics("DCG(gain={1: 5, 2: 1})@5")
    assert claim(rising, [0, 1, 2], 2).bounded
    c = claim(falling, [0, 1, 2], 2)
    assert not c.bounded and c.why == "its gain map does not rise with the grade, so a higher grade can lower it"


def test_judged_only_is_refused() -> None:
    qrels, runs = _random_case(1)
    with pytest.raises(PolicyError, match=r"^bounds ask what the unjudged documents could change, and "
                                          r"judged_only=True drops them before scoring; use one or the other$"):
        bounds_runs(qrels, runs, ["P@5"], judged_only=True)


# ---------------------------------------------------------------------------------------------- claims checked
BOUNDED = ["P@3", "Success@2", "RR", "RR@3", "CG@4", "DCG@4", "DCG(gain=exponential)@4", "ERR@4", "RBP(rel=1)",
           "RBP(p=0.5, rel=2)", "SetP", "SetR", "SetRelP", "SetAP", "SetF", "NumRel", "NumRelRet", "NumRet"]


def _random_case(seed: int) -> tuple[Judgments, list[Run]]:
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    runs: list[dict[str, dict[str, float]]] = [{}, {}]
    for q in range(5):
        docs = [f"d{i}" for i in range(10)]
        qrels[f"q{q}"] = {d: rng.choice([0, 0, 1, 2, 3]) for d in rng.sample(docs, rng.randint(1, 5))}
        for run in runs:
            run[f"q{q}"] = {d: float(rng.randint(0, 6)) for d in rng.sample(docs, rng.randint(1, 8))}
    return Judgments.from_dict(qrels), [Run.from_dict(r, name=f"r{i}") for i, r in enumerate(runs)]


@pytest.mark.parametrize("seed", range(6))
def test_bounded_metrics_hold_every_random_labelling_of_the_unjudged_retrieved_documents(seed: int) -> None:
    qrels, runs = _random_case(seed)
    found = _quiet(bounds_runs, qrels, runs, BOUNDED)
    assert all(c.bounded for c in found[0].claims)
    rng = random.Random(100 + seed)
    grades = qrels.to_dict()
    for b, run in zip(found, runs, strict=True):
        retrieved = run.to_dict()
        for _ in range(8):
            labelled = {q: dict(g) for q, g in grades.items()}
            for q, docs in retrieved.items():
                if q in labelled:
                    for d in docs:
                        if d not in labelled[q]:
                            labelled[q][d] = rng.choice([0, 1, 2, 3])  # any grade up to the top, 3
            values = _quiet(gainscope.evaluate, Judgments.from_dict(labelled), run, BOUNDED).values
            assert np.all(values >= b.low - 1e-12) and np.all(values <= b.high + 1e-12), (seed, run.name)


def test_graded_rbp_is_not_bounded_its_gains_are_scaled_by_the_querys_largest_grade() -> None:
    qrels = Judgments.from_dict({"q": {"a": 1}, "p": {"z": 3}})  # top grade 3; q's largest is 1
    run = Run.from_dict({"q": ["a", "b"], "p": ["z"]}, name="r")
    (b,) = bounds_runs(qrels, [run], ["RBP(p=0.5)", "RBP(p=0.5, rel=1)"])
    assert [c.bounded for c in b.claims] == [False, True]
    q = b.query_ids.index("q")
    # today: 0.5 * 1 = 0.5. Completed, b at 3: q's gains are divided by 3: 0.5 * (1/3 + 0.5 * 1) = 0.4167.
    # b at grade 1 instead: 0.5 * (1 + 0.5 * 1) = 0.75, above both
    assert b.today[q].tolist() == [0.5, 0.5]
    assert b.completed[q].tolist() == pytest.approx([0.5 * (1 / 3 + 0.5), 0.75])
    b_one = Judgments.from_dict({"q": {"a": 1, "b": 1}, "p": {"z": 3}})
    assert gainscope.evaluate(b_one, run, "RBP(p=0.5)").per_query("RBP(p=0.5)")["q"] == 0.75


def test_not_bounded_metrics_can_leave_the_completions() -> None:
    # the claim is honest the other way too: for nDCG, AP, R@k and RelP@k a random labelling falls outside
    qrels = Judgments.from_dict({"q": {"d1": 1}})
    run = Run.from_dict({"q": [f"d{i}" for i in range(1, 11)]}, name="r")
    mets = ["nDCG@10", "AP", "R@2", "RelP@2"]
    (b,) = bounds_runs(qrels, [run], mets)
    assert not any(c.bounded for c in b.claims)
    # d10 relevant (retrieved, below k = 2): R@2 = 1/2 and RelP@2 = 1/2 < today's 1 = both completions
    values = gainscope.evaluate(Judgments.from_dict({"q": {"d1": 1, "d10": 1}}), run, mets).values[0]
    assert np.all(values < b.low[0] - 1e-9)


# ---------------------------------------------------------------------------------------------- comparisons
def test_difference_bounds_and_the_sign() -> None:
    qrels = Judgments.from_dict({"q1": {"a": 1, "x": 0}, "q2": {"b": 1}})
    base = Run.from_dict({"q1": ["x", "a"], "q2": ["b"]}, name="base")
    new = Run.from_dict({"q1": ["a", "u"], "q2": ["v", "b"]}, name="new")
    found = bounds_runs(qrels, [base, new], ["P@1"])
    (row,) = difference_bounds(found)
    # P@1 today: base 0, 1; new 1, 0 -> delta 0. Completed: base unchanged (nothing unjudged in its first 1);
    # new q2: v relevant -> 1. low = mean(new low - base high) = ((1 - 0) + (0 - 1)) / 2 = 0;
    # high = ((1 - 0) + (1 - 1)) / 2 = 1/2
    assert (row.delta, row.low, row.high) == (0.0, 0.0, 0.5)
    assert row.could_change_sign and row.bounded and row.queries == 2
    assert (row.judged_run, row.judged_baseline) == (0.5, 1.0)
    with pytest.raises(PolicyError, match=r"^baseline='other' is not among the runs: base, new$"):
        difference_bounds(found, baseline="other")
