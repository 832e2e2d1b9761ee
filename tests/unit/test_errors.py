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


def test_options_in_messages_are_spelled_for_the_interface(tmp_path: Path) -> None:
    """Messages that named both spellings at once ("names=[...] in Python, --name on the command line") name the
    one of the interface they are shown in (issue 13, item 20 and review)."""
    from click.testing import CliRunner

    from gainscope.cli import cli
    from gainscope.errors import spell

    run = tmp_path / "a.run"
    run.write_text("q1 Q0 d1 1 2 r\n", encoding="utf-8")
    other = tmp_path / "b.run"
    other.write_text("q1 Q0 d2 1 2 r\n", encoding="utf-8")
    qrels = tmp_path / "q.qrels"
    qrels.write_text("q1 0 d1 1\n", encoding="utf-8")
    for command in (["compare", str(qrels), str(run), str(other), "-m", "P@1"],
                    ["agreement", str(qrels), str(qrels), "--run", str(run), "--run", str(other)]):
        result = CliRunner().invoke(cli, command)
        assert result.exit_code == 3, result.output
        assert result.stderr.splitlines()[-1].endswith("Give each a unique name (--name)"), result.stderr
    import gainscope

    try:
        gainscope.compare(str(qrels), [str(run), str(other)], ["P@1"])
    except gainscope.errors.InputError as exc:
        assert str(exc).endswith("Give each a unique name (names=...)")
        assert spell(exc, "cli").endswith("Give each a unique name (--name)")
    else:
        raise AssertionError("two runs named 'r' were accepted")
