"""The built-in scorers written in JavaScript (run in the V8 sandbox with gainscope's Quepid API) and their
Python twins agree on random rating lists (zero results and no ratings included), for every scorer, several k
and both edit distances, down to null (which Quepid labels zsr / --) versus NaN."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gainscope.cases import BUILTINS, CaseQuery, RatingScale
from gainscope.cases.builtin_js import builtin_source
from gainscope.cases.scorers import BuiltinScorer
from gainscope.cases.view import QueryView

pytest.importorskip("py_mini_racer")

from gainscope.cases.javascript import JavaScriptRuntime


@pytest.fixture(scope="module")
def runtime() -> Iterator[JavaScriptRuntime]:
    with JavaScriptRuntime() as rt:
        yield rt


def scorers() -> list[BuiltinScorer]:
    out = []
    for definition in BUILTINS.values():
        variants = ("levenshtein", "quepid-legacy") if definition.takes_edit_distance else ("levenshtein",)
        for k in (1, 3, 10):
            out.extend(BuiltinScorer(definition, k, v) for v in variants)
    return out


@st.composite
def queries(draw: st.DrawFn, scale: RatingScale) -> CaseQuery:
    halves = [v + 0.5 for v in scale.values[:-1]]  # decimal ratings: bestDocs hold parseInt(rating)
    grades = st.sampled_from(list(scale.values) + halves)
    returned = draw(st.lists(st.one_of(st.none(), grades), max_size=14))  # zero results too
    extra = draw(st.lists(grades, max_size=6))
    ratings = {f"d{i}": r for i, r in enumerate(returned) if r is not None}
    ratings.update({f"x{i}": r for i, r in enumerate(extra)})  # no ratings at all too
    return CaseQuery("q", ratings, tuple(f"d{i}" for i in range(len(returned))))


SCALES = [RatingScale.parse(s) for s in ("binary", "graded", "1-10")]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_javascript_builtins_match_python(runtime: JavaScriptRuntime, data: st.DataObject) -> None:
    scale = data.draw(st.sampled_from(SCALES))
    view = QueryView.of(data.draw(queries(scale)), scale)
    for scorer in scorers():
        want = scorer.score(view)
        result = runtime.run(builtin_source(scorer), view, name=scorer.name, edit_distance=scorer.edit_distance)
        expected, got = want.value, result.value
        assert result.null == want.null, (scorer.name, view.ratings, view.best)  # null (zsr / --) vs NaN
        if expected is None:
            assert got is None, (scorer.name, view.ratings, view.best)
        else:
            assert got is not None and math.isclose(got, expected, rel_tol=1e-12, abs_tol=1e-12), \
                (scorer.name, view.ratings, view.best, got, expected)


def test_builtin_source_fills_in_k() -> None:
    assert builtin_source("AP@5").startswith("var k = 5; // @Rank\n")
    assert "{k}" not in builtin_source("blogNDCG@3")
