"""PreparedJudgments of a judgments frame: each judged query's grades sorted descending with numbers (no string
sort), the doc ids made when first read; the same offsets, grades, doc ids and row grades as the rows that
``_judged_rows`` orders by query, grade descending, then doc id."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from gainscope.core.judged_run import PreparedJudgments, _float_grades, _judged_rows, query_index
from gainscope.core.judgments import Judgments
from gainscope.deferred import DeferredSeries
from gainscope.testing import strategies as gst


def _reference(judgments: Judgments, negative_grades: str) -> tuple[list[str], np.ndarray, np.ndarray, list[str]]:
    """Query ids, offsets, grades and doc ids as the polars rows give them (the reference)."""
    frame = _float_grades(judgments.frame, negative_grades)
    query_ids = sorted(frame["query_id"].unique().to_list(), key=lambda q: q.encode("utf-8"))
    rows = _judged_rows(frame, query_ids)
    offsets = np.zeros(len(query_ids) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(np.bincount(rows["_q"].to_numpy(), minlength=len(query_ids)))
    return query_ids, offsets, rows["grade"].to_numpy(), rows["doc_id"].to_list()


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(data=gst.judgments_and_runs(max_queries=6, max_docs=12, large_grades=True),
       negative_grades=st.sampled_from(("unjudged", "nonrelevant")))
def test_prepared_from_a_frame_equals_its_sorted_rows(data,  # type: ignore[no-untyped-def]
                                                      negative_grades: str) -> None:
    judgments, _ = data
    prepared = PreparedJudgments.of(judgments, negative_grades)
    query_ids, offsets, grades, doc_ids = _reference(judgments, negative_grades)
    assert prepared.query_ids == query_ids
    assert np.array_equal(prepared.offsets, offsets)
    assert np.array_equal(prepared.grades, grades)
    assert isinstance(prepared.doc_ids, DeferredSeries)  # not made until read
    assert prepared.doc_ids.to_list() == doc_ids
    frame = _float_grades(judgments.frame, negative_grades)
    assert np.array_equal(prepared.row_grades, frame["grade"].to_numpy())


def test_grades_of_a_query_descending_and_negative_ones_left_out() -> None:
    # q1: grades 0, 2, -1, 1 -> judged (>= 0) sorted descending: 2, 1, 0; q2: 3 -> 3; offsets 0, 3, 4
    judgments = Judgments.from_dict({"q2": {"a": 3}, "q1": {"d": 0, "b": 2, "c": -1, "a": 1}})
    prepared = PreparedJudgments.of(judgments)
    assert prepared.query_ids == ["q1", "q2"]
    assert prepared.offsets.tolist() == [0, 3, 4]
    assert prepared.grades.tolist() == [2.0, 1.0, 0.0, 3.0]
    assert prepared.doc_ids.to_list() == ["b", "a", "d", "a"]
    # under "nonrelevant" the -1 is a 0: q1's judged grades 2, 1, 0, 0 (equal grades by doc id: c before d)
    nonrelevant = PreparedJudgments.of(judgments, "nonrelevant")
    assert nonrelevant.grades.tolist() == [2.0, 1.0, 0.0, 0.0, 3.0]
    assert nonrelevant.doc_ids.to_list() == ["b", "a", "c", "d", "a"]


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(ids=st.lists(st.sampled_from(["q1", "q10", "q2", "Q", "301", "q\u00e9", "q\U0001f600", "\uff21", ""]),
                    max_size=30), grouped=st.booleans())
def test_query_index_equals_a_lookup_of_the_sorted_ids(ids: list[str], grouped: bool) -> None:
    """Rows grouped by id (runs numbered) or not (looked up): the same ids, in bytewise order, and row indexes."""
    if grouped:
        ids = sorted(ids, key=ids.index)  # each id's rows together, in order of first appearance
    query_ids, rows = query_index(pl.Series(ids, dtype=pl.String))
    expected = sorted(set(ids), key=lambda q: q.encode("utf-8"))
    assert query_ids == expected
    assert rows.dtype == np.int64 and rows.tolist() == [expected.index(q) for q in ids]


def test_query_index_of_runs_and_of_rows_apart() -> None:
    # runs b, a, c -> bytewise a=0, b=1, c=2; rows b b a c -> 1 1 0 2
    assert query_index(pl.Series(["b", "b", "a", "c"]))[1].tolist() == [1, 1, 0, 2]
    # b's rows apart: looked up, same numbering
    ids, rows = query_index(pl.Series(["b", "a", "b", "c"]))
    assert ids == ["a", "b", "c"] and rows.tolist() == [1, 0, 1, 2]
