"""Custom scorers: Python callables, resolving names / .js files / module:function, and the missing engine."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from gainscope.cases import Case, CaseQuery, PythonScorer, QueryView, ScorerError, python_scorer, resolve_scorer
from gainscope.cases.scorers import BuiltinScorer
from gainscope.cases.scoring import score_case
from gainscope.errors import InputError, MissingDependencyError

CASE = Case((CaseQuery("q1", {"a": 3, "b": 1}, ("a", "b", "c")),
             CaseQuery("q2", {"b": 2}, ("c", "b"))), None)


@python_scorer(scale="graded", depth=5, name="top-perfect")
def top_perfect(q: QueryView) -> float:
    """Share of the top 5 rated Perfect."""
    return sum(1 for i in range(5) if q.doc_rating(i) == 3) / 5


def test_python_scorer_decorator() -> None:
    assert isinstance(top_perfect, PythonScorer) and top_perfect.name == "top-perfect"
    result = score_case(CASE, top_perfect)
    assert result.per_query() == {"q1": 0.2, "q2": 0.0}  # q1: 'a' is rated 3 -> 1/5
    assert result.score == pytest.approx(0.1)
    assert result.scale.max == 3 and "custom Python scorer: its own conventions" in result.conventions


def test_negative_scores_are_clamped_and_reported() -> None:
    result = score_case(CASE, python_scorer(lambda q: -5.0 if q.query == "q1" else 2.0, scale="graded"))
    q1 = result.query("q1")
    assert q1.raw == -5.0 and q1.value == 0.0 and result.score == 1.0  # (0 + 2) / 2
    assert "negative scores become 0, as Quepid: q1; no upper clamp" in result.conventions


def test_python_scorer_errors_name_the_query() -> None:
    def broken(q: QueryView) -> float:
        return 1 / 0

    with pytest.raises(ScorerError, match=r"ZeroDivisionError: division by zero \(query 'q1'\)") as exc:
        score_case(CASE, python_scorer(broken, scale="graded"))
    assert isinstance(exc.value.__cause__, ZeroDivisionError)
    with pytest.raises(ScorerError, match="a scorer returns a number or None; got '1'"):
        score_case(CASE, python_scorer(lambda q: "1", scale="graded"))  # type: ignore[arg-type,return-value]


def test_resolve_builtin_js_file_and_inline(tmp_path: Path) -> None:
    assert isinstance(resolve_scorer("P@5"), BuiltinScorer)
    pytest.importorskip("py_mini_racer")
    (tmp_path / "rr.js").write_text("var k = 3;\neachDoc(function (d, i) { }, k);\nsetScore(numReturned());\n")
    scorer = resolve_scorer("rr.js", base=tmp_path / "case.json", time_limit=2)
    assert scorer.name == str(tmp_path / "rr.js")
    assert [r.value for r in score_case(CASE, scorer, scale="graded").queries] == [3.0, 2.0]
    inline = resolve_scorer({"name": "count", "code": "setScore(bestDocs.length)", "scale": [0, 1, 2, 3]})
    assert score_case(CASE, inline).per_query() == {"q1": 2.0, "q2": 1.0}


def test_resolve_module_function(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("my_scorers")
    module.first_rating = lambda q: q.doc_rating(0) or 0.0  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "my_scorers", module)
    scorer = resolve_scorer("my_scorers:first_rating")
    assert scorer.name == "my_scorers:first_rating"
    assert score_case(CASE, scorer, scale="graded").per_query() == {"q1": 3.0, "q2": 0.0}
    with pytest.raises(InputError, match="a case file may name built-in or JavaScript scorers only"):
        resolve_scorer("my_scorers:first_rating", allow_python=False)
    with pytest.raises(InputError, match="module 'my_scorers' has no attribute 'nope'"):
        resolve_scorer("my_scorers:nope")
    with pytest.raises(InputError, match="cannot import module 'no_such_module_xyz'"):
        resolve_scorer("no_such_module_xyz:f")


def test_missing_engine_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from gainscope.cases.javascript import JavaScriptScorer

    monkeypatch.setitem(sys.modules, "py_mini_racer", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'gainscope\[quepid\]'"):
        score_case(CASE, JavaScriptScorer("setScore(1)"), scale="graded")
