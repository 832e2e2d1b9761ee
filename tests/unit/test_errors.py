"""The one exception tree (gainscope.errors) and the one mechanism that spells an option for the interface a
message is shown in (issue 13, review)."""

from __future__ import annotations

import ast
from pathlib import Path

import gainscope.cases
import gainscope.errors

SRC = Path(gainscope.errors.__file__).resolve().parent


def test_the_scorer_error_lives_in_the_one_tree_and_keeps_its_public_path() -> None:
    assert gainscope.errors.ScorerError.__module__ == "gainscope.errors"
    assert gainscope.cases.ScorerError is gainscope.errors.ScorerError
    assert issubclass(gainscope.errors.ScorerError, gainscope.errors.InputError)  # exit code 3
    assert not (SRC / "cases" / "errors.py").exists()
    err = gainscope.errors.ScorerError("TypeError: x is undefined", scorer="s.js", query="star wars", line=2,
                                       column=3, source_line="var y = x.z;")
    assert str(err) == "s.js:2: TypeError: x is undefined (query 'star wars')\n    var y = x.z;\n      ^"


def test_no_module_but_errors_is_an_errors_module() -> None:
    assert [p.relative_to(SRC).as_posix() for p in SRC.rglob("errors.py")] == ["errors.py"]
