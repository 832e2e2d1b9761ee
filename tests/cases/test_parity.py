"""The built-in scorers written in JavaScript (run in the V8 sandbox with gainscope's Quepid API) and their
Python twins agree on random rating lists (zero results and no ratings included), for every scorer, several k
and both edit distances, down to null (which Quepid labels zsr / --) versus NaN; and Quepid's v1 default scorer,
run as a JavaScript scorer with nothing asked for, gives the numbers of Quepid's shipped edit distance."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gainscope.cases import BUILTINS, CaseQuery, RatingScale
from gainscope.cases.builtin_js import builtin_source
from gainscope.cases.scorers import BuiltinScorer, default_score
from gainscope.cases.view import QueryView

pytest.importorskip("py_mini_racer")

from gainscope.cases.javascript import JavaScriptRuntime, JavaScriptScorer

# Quepid's v1 scorer as its scorer list shows it (db/scorers/v1.js), retyped: avgRating100 minus the penalty
V1 = """// Gets the average score over a scale of 100
// (assumes query rating on a scale of 1-10)
var score = avgRating100(10);
if (score !== null) {
  // Adds a distance penalty to the score
  score -= editDistanceFromBest(10);
}
setScore(score);
"""


@pytest.fixture(scope="module")
def runtime() -> Iterator[JavaScriptRuntime]:
    with JavaScriptRuntime() as rt:
        yield rt


def scorers(variant: str) -> list[BuiltinScorer]:
    out = []
    for definition in BUILTINS.values():
        if definition.takes_edit_distance or variant == "levenshtein":
            out.extend(BuiltinScorer(definition, k, variant) for k in (1, 3, 10))
    return out


def all_in_one(sources: list[str]) -> str:
    """One script that runs every source in a function of its own, each with a setScore that records what it
    gives (null, NaN, infinities and numbers kept apart), and logs the list: one query, one isolate, many
    scorers."""
    parts = ["var __got = [];",
             "function __keep(x) { __got.push(x === null ? 'null' : isFinite(x) ? x : String(x)); }"]
    parts += [f"(function () {{ var setScore = __keep;\n{source}\n}})();" for source in sources]
    parts.append("console.log(JSON.stringify(__got)); setScore(0);")
    return "\n".join(parts)


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
    for variant in ("levenshtein", "quepid-legacy"):
        chosen = scorers(variant)
        result = runtime.run(all_in_one([builtin_source(s) for s in chosen]), view, name="all.js",
                             edit_distance=variant)
        got = json.loads(result.logs[0])
        assert len(got) == len(chosen)
        for scorer, value in zip(chosen, got, strict=True):
            want = scorer.score(view)
            assert (value == "null") == want.null, (scorer.name, view.ratings, view.best)  # zsr / -- vs NaN
            if want.value is None:
                assert value in ("null", "NaN", "Infinity", "-Infinity"), (scorer.name, view.ratings, view.best, value)
            else:
                assert isinstance(value, (int, float)) and math.isclose(value, want.value, rel_tol=1e-12,
                                                                        abs_tol=1e-12), \
                    (scorer.name, view.ratings, view.best, value, want.value)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_v1_run_unchanged_gives_quepids_numbers(data: st.DataObject) -> None:
    # issue 13, item 32: editDistanceFromBest in a JavaScript scorer is Quepid's own distance unless the
    # true Levenshtein distance is asked for
    scale = RatingScale.parse("1-10")
    views = [QueryView.of(data.draw(queries(scale)), scale) for _ in range(3)]
    got = [r.value for r in JavaScriptScorer(V1, name="v1.js").score_all(views)]
    assert got == [default_score(v, 10, "quepid-legacy") for v in views]
    asked = [r.value for r in JavaScriptScorer(V1, name="v1.js", edit_distance="levenshtein").score_all(views)]
    assert asked == [default_score(v, 10, "levenshtein") for v in views]


def test_builtin_source_fills_in_k() -> None:
    assert builtin_source("AP@5").startswith("var k = 5; // @Rank\n")
    assert "{k}" not in builtin_source("blogNDCG@3")
