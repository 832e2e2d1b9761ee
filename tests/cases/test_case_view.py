"""CaseScore is a view over one Results: every query's number is the Results' value (or, where the Results hold
none, the scorer's own word), for built-in and custom scorers alike (issue 14 item 4)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gainscope.cases import Case, CaseQuery, RatingScale, builtin_scorer, python_scorer, score_case

DOCS = ("a", "b", "c", "d")


@st.composite
def cases(draw: st.DrawFn) -> Case:
    queries = []
    for i in range(draw(st.integers(1, 4))):
        results = tuple(draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=4)))
        ratings = draw(st.dictionaries(st.sampled_from(DOCS), st.integers(0, 3), max_size=4))
        queries.append(CaseQuery(f"q{i}", ratings, results))
    return Case(tuple(queries), RatingScale.parse("graded"))


SCORES = st.one_of(st.none(), st.just(math.nan), st.just(math.inf), st.floats(-2, 5, allow_nan=False))


@pytest.mark.filterwarnings("ignore::gainscope.errors.QueryCoverageWarning")  # drawn cases rate other documents
@settings(max_examples=60, deadline=None)
@given(case=cases(), scores=st.lists(SCORES, min_size=4, max_size=4), builtin=st.sampled_from(
    ["", "nDCG@3", "AP@3", "P@2", "ERR@3", "avgRating100@3"]), unscored=st.sampled_from(["quepid", "skip", "zero"]))
def test_every_query_score_is_read_from_the_results(case: Case, scores: list[float | None], builtin: str,
                                                    unscored: str) -> None:
    scorer = builtin_scorer(builtin) if builtin else python_scorer(lambda q: scores[int(q.query[1:])], name="x")
    result = score_case(case, scorer, unscored=unscored, allow_unrated=True)
    res = result.results
    values = dict(zip(res.query_ids, res.values[:, 0].tolist(), strict=True))
    for q in result.queries:
        if q.query not in values:  # not scored: labelled by the view, counted by --unscored
            assert unscored != "quepid" and q.status in ("zsr", "unrated") and q.raw is None
            continue
        value = values[q.query]
        if math.isfinite(value):
            assert q.status == "scored" and q.raw == value and q.value == max(value, 0.0)
        else:  # no number in the Results: null, undefined, or (built-ins) Quepid's stand-in
            assert q.status != "scored" or (builtin in ("nDCG@3", "P@2") and q.raw == 0.0)
    counted = [q.counted for q in result.queries if q.counted is not None]
    assert result.score == (math.fsum(counted) / len(counted) if counted else None)
