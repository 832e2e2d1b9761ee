"""The judged run (join, ordering, policies, coverage), Policies validation and Results conversions."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

import gainscope
from gainscope.core.judged_run import build_judged_run
from gainscope.core.judgments import Judgments
from gainscope.core.policies import Policies
from gainscope.core.run import Run
from gainscope.errors import (
    InconsistentInputError,
    InputError,
    InputWarning,
    PolicyError,
    QueryCoverageWarning,
    UndefinedMetricWarning,
)


def _jr(qrels, run, **pol):
    return build_judged_run(Judgments.from_dict(qrels), Run.from_dict(run), Policies(**pol))


def test_trec_eval_ties_order_doc_ids_descending_bytewise() -> None:
    # equal scores: trec_eval orders by strcmp descending, so "9" > "10" > "1"
    with pytest.warns(InputWarning, match="1 group"):
        jr = _jr({"q": {"1": 1}}, {"q": {"1": 0.5, "10": 0.5, "9": 0.5}})
    assert jr.doc_ids.to_list() == ["9", "10", "1"]
    assert jr.coverage.tied_groups == 1


def test_rank_policy_keeps_the_given_order() -> None:
    jr = _jr({"q": {"a": 1}}, {"q": ["c", "a", "b"]}, ties="rank")
    assert jr.doc_ids.to_list() == ["c", "a", "b"]
    # an unscored run is ordered as given whatever the ties policy
    jr = _jr({"q": {"a": 1}}, {"q": ["c", "a", "b"]})
    assert jr.doc_ids.to_list() == ["c", "a", "b"]


def test_grades_nan_for_unjudged_and_negative_kept() -> None:
    jr = _jr({"q": {"a": 2, "b": -1}}, {"q": {"a": 3.0, "b": 2.0, "c": 1.0}})
    assert jr.grades[:2].tolist() == [2.0, -1.0] and math.isnan(jr.grades[2])
    assert jr.judged_grades.tolist() == [2.0]  # negative grades are not part of the ideal/totals
    jr = _jr({"q": {"a": 2, "b": -1}}, {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}, negative_grades="nonrelevant")
    assert jr.grades[1] == 0.0 and jr.judged_grades.tolist() == [2.0, 0.0]


def test_depth_then_judged_only() -> None:
    run = {"q": {"a": 5.0, "x": 4.0, "b": 3.0, "c": 2.0}}
    jr = _jr({"q": {"a": 1, "b": 0, "c": 1}}, run, depth=3)
    assert jr.doc_ids.to_list() == ["a", "x", "b"]
    jr = _jr({"q": {"a": 1, "b": 0, "c": 1}}, run, depth=3, judged_only=True)
    assert jr.doc_ids.to_list() == ["a", "b"]  # -M applies before -J, as trec_eval


def test_missing_and_ignored_queries_are_reported() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}, "q3": {"c": 1.0}}
    with pytest.warns(QueryCoverageWarning) as record:
        jr = _jr(qrels, run)
    messages = " ".join(str(w.message) for w in record)
    assert "q3" in messages and "ignored" in messages
    assert "q2" in messages and "scored 0" in messages
    assert jr.query_ids == ("q1", "q2") and jr.missing.tolist() == [False, True]
    with pytest.warns(QueryCoverageWarning):
        jr = _jr(qrels, run, missing_queries="skip")
    assert jr.query_ids == ("q1",)


def test_no_overlap_error_hints_at_leading_zeros() -> None:
    with pytest.raises(InconsistentInputError, match=re.escape("after removing whitespace and leading zeros")):
        _jr({"01": {"a": 1}}, {"1": {"a": 1.0}})


def test_rank_column_contradicting_scores_warns() -> None:
    run = Run.from_columns(["q"] * 3, ["a", "b", "c"], scores=[0.1, 0.2, 0.3], ranks=[1, 2, 3])
    with pytest.warns(InputWarning, match="distances"):
        build_judged_run(Judgments.from_dict({"q": {"a": 1}}), run, Policies())


def test_policies_are_validated_with_the_allowed_values() -> None:
    with pytest.raises(PolicyError, match=re.escape("the 'ties' policy must be one of 'trec_eval', 'rank', "
                                                    "'average'; got 'random'.")):
        Policies(ties="random")  # type: ignore[arg-type]
    with pytest.raises(PolicyError, match="depth"):
        Policies(depth=0)
    with pytest.raises(PolicyError, match="unknown policy 'tie'"):
        Policies.from_kwargs(tie="rank")


def test_run_and_judgments_reject_duplicates_and_nan() -> None:
    with pytest.raises(InconsistentInputError, match="appears more than once"):
        Run.from_columns(["q", "q"], ["a", "a"], scores=[1.0, 2.0])
    with pytest.raises(InputError, match="NaN"):
        Run.from_columns(["q"], ["a"], scores=[float("nan")])
    with pytest.raises(InconsistentInputError, match="duplicate judgment"):
        Judgments.from_columns(["q", "q"], ["a", "a"], [1, 2])


def test_missing_query_scores_zero_but_keeps_num_rel() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1, "c": 2}}
    with pytest.warns(QueryCoverageWarning):
        res = gainscope.evaluate(Judgments.from_dict(qrels), Run.from_dict({"q1": {"a": 1.0}}),
                                 ["AP", "NumRel", "NumRet", "RBPResid"])
    assert res.per_query("AP") == {"q1": 1.0, "q2": 0.0}
    assert res.per_query("NumRel") == {"q1": 1.0, "q2": 2.0}
    assert res["NumRel"] == 3.0 and res["NumRet"] == 1.0 and res["AP"] == 0.5
    assert res.per_query("RBPResid")["q2"] == 0.0


def test_undefined_zero_warns_and_skip_leaves_out() -> None:
    qrels = Judgments.from_dict({"q1": {"a": 1}, "q2": {"b": 0}})
    run = Run.from_dict({"q1": {"a": 1.0}, "q2": {"b": 1.0}})
    with pytest.warns(UndefinedMetricWarning, match=re.escape("AP is undefined for 1 query")):
        res = gainscope.evaluate(qrels, run, "AP")
    assert res["AP"] == 0.5 and res.undefined[:, 0].tolist() == [False, True]
    res = gainscope.evaluate(qrels, run, "AP", undefined="skip")
    assert res["AP"] == 1.0 and math.isnan(res.per_query("AP")["q2"])
    assert res.to_dict()["per_query"]["q2"]["AP"] is None


def test_results_conversions_round_trip() -> None:
    qrels = Judgments.from_dict({"q1": {"a": 2, "b": 1}, "q2": {"c": 1}})
    run = Run.from_dict({"q1": {"a": 1.0, "b": 0.5}, "q2": {"c": 1.0, "d": 2.0}})
    res = gainscope.evaluate(qrels, run, ["nDCG@10", "P@1"])
    long = res.to_polars()
    assert long.columns == ["run", "query_id", "metric", "value"] and long.height == 4
    wide = res.to_polars(wide=True)
    assert wide.columns == ["query_id", "nDCG@10", "P@1"]
    assert wide["P@1"].to_list() == [1.0, 0.0]
    pd = pytest.importorskip("pandas")
    frame = res.to_pandas(wide=True)
    assert isinstance(frame, pd.DataFrame) and list(frame["query_id"]) == ["q1", "q2"]
    data = json.loads(res.to_json())
    assert data["aggregates"]["P@1"] == 0.5 and data["policies"]["ties"] == "trec_eval"
    assert res["P@1"] == res["P@1.0".replace(".0", "")]
    np.testing.assert_allclose(res.values[:, 1], [1.0, 0.0])


def test_evaluate_runs_shares_judgments() -> None:
    qrels = Judgments.from_dict({"q1": {"a": 1}})
    runs = [Run.from_dict({"q1": {"a": 1.0}}, name="good"), Run.from_dict({"q1": {"b": 1.0, "a": 0.5}}, name="bad")]
    out = gainscope.evaluate_runs(qrels, runs, "RR")
    assert [r.run_name for r in out] == ["good", "bad"]
    assert [r["RR"] for r in out] == [1.0, 0.5]


def test_prepared_judgments_serve_many_runs_and_subsets() -> None:
    """Judgments prepared once give the same judged run as preparing them for each run, including the
    subset of queries used when missing queries are skipped and a change of negative_grades policy."""
    from gainscope.core.judged_run import PreparedJudgments

    qrels = Judgments.from_dict({"q1": {"a": 2, "b": -1}, "q2": {"c": 1, "d": 3}, "q3": {"e": 1}})
    prepared = PreparedJudgments.of(qrels)
    run = Run.from_dict({"q3": {"e": 1.0, "x": 0.5}, "q1": {"b": 2.0, "a": 1.0}})
    for pol in (Policies(missing_queries="skip"), Policies(), Policies(negative_grades="nonrelevant")):
        with pytest.warns(QueryCoverageWarning):
            a = build_judged_run(qrels, run, pol, sparse=True)
        with pytest.warns(QueryCoverageWarning):
            b = build_judged_run(prepared, run, pol, sparse=True)
        assert a.query_ids == b.query_ids
        np.testing.assert_array_equal(a.judged_offsets, b.judged_offsets)
        np.testing.assert_array_equal(a.judged_grades, b.judged_grades)
        assert a.judged_doc_ids.to_list() == b.judged_doc_ids.to_list()
        np.testing.assert_array_equal(a.grades, b.grades)
    with pytest.warns(QueryCoverageWarning):
        skip = build_judged_run(prepared, run, Policies(missing_queries="skip"), sparse=True)
    assert skip.query_ids == ("q1", "q3") and skip.judged_grades.tolist() == [2.0, 1.0]


def test_an_empty_run_accepted_with_allow_empty_evaluates_under_both_missing_policies(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # with missing_queries='skip' no query is evaluated: the builder used to crash (TypeError from numpy)
    # on the empty query index polars leaves typed as text
    import warnings

    from gainscope.io import read_run

    (tmp_path / "q.txt").write_text("q1 0 d1 1\n", encoding="utf-8")
    (tmp_path / "empty.run").write_text("", encoding="utf-8")
    run = read_run(tmp_path / "empty.run", format="trec", allow_empty=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zero = gainscope.evaluate(str(tmp_path / "q.txt"), run, ["AP"], depth=8)
        skip = gainscope.evaluate(str(tmp_path / "q.txt"), run, ["AP"], depth=8, missing_queries="skip")
    assert zero.per_query("AP") == {"q1": 0.0}
    assert skip.query_ids == () and skip.values.shape == (0, 1)


def test_judgments_from_dict_mixing_int_and_float_grades() -> None:
    # {"a": 2, "c": 1.5}: the first grade is an int, a later one a float. (Regression: polars inferred an
    # integer column from the first grade and raised a TypeError traceback on 1.5.)
    j = Judgments.from_dict({"q": {"a": 2, "c": 1.5}, "r": {"x": 1}})
    assert j.frame["grade"].to_list() == [2.0, 1.5, 1.0]


def test_ranges_gathers_each_slice_in_turn():
    from gainscope.core.judged_run import ranges

    # slices 5..6, (none), 0..2, 9: jumps 5, then 0 - 6 = -6, then 9 - 2 = 7, summed with steps of 1
    got = ranges(np.array([5, 3, 0, 9]), np.array([2, 0, 3, 1]))
    assert got.dtype == np.int64
    assert got.tolist() == [5, 6, 0, 1, 2, 9]
    assert ranges(np.array([4]), np.array([0])).tolist() == []
    assert ranges(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)).tolist() == []


def test_ap_sums_over_the_relevant_positions():
    """AP visits only the relevant positions (the others' terms are 0): the per-query sums in rank order."""
    qrels = gainscope.Judgments.from_dict({"a": {"d1": 1, "d3": 2, "d7": 1, "d9": 0}, "b": {"e2": 1}, "c": {"f1": 1}})
    run = gainscope.Run.from_dict({"a": {f"d{i}": 10.0 - i for i in range(1, 10)}, "b": {"e1": 2.0, "e2": 1.0},
                                   "c": {"f9": 1.0, "f1": 0.5}})
    r = gainscope.evaluate(qrels, run, ["AP", "AP@2", "AP(denominator=retrieved)@3"])
    # a: relevant at ranks 1, 3, 7 of 9 (R = 3); b: at rank 2 (R = 1); c: at rank 2 (R = 1)
    assert r["AP"] == pytest.approx(((1 / 1 + 2 / 3 + 3 / 7) / 3 + (1 / 2) + (1 / 2)) / 3, rel=1e-15)
    # AP@2: a: (1/1) / 3; b: (1/2) / 1; c: (1/2) / 1
    assert r["AP@2"] == pytest.approx((1 / 3 + 1 / 2 + 1 / 2) / 3, rel=1e-15)
    # found in the first 3: a: ranks 1, 3 -> (1/1 + 2/3) / 2; b: (1/2) / 1; c: (1/2) / 1
    assert r["AP(denominator=retrieved)@3"] == pytest.approx(((1 + 2 / 3) / 2 + 1 / 2 + 1 / 2) / 3, rel=1e-15)
