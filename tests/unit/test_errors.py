"""The one exception tree (gainscope.errors) and the one mechanism that spells an option for the interface a
message is shown in (issue 13, review)."""

from __future__ import annotations

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


def test_one_translation_of_sqlite_failures_for_every_store(tmp_path: Path) -> None:
    """The judgment store and the snapshot store say an SQLite failure the same way, by SQLite's result code
    (gainscope.io.sqlite.store_failure; issue 13 review: one helper, not two)."""
    import sqlite3

    import pytest

    from gainscope.errors import StoreError
    from gainscope.judges.store import JudgmentStore
    from gainscope.search.store import SnapshotStore

    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"\x00\x01 not a database at all " * 100)
    said = ("not a {}: the file is not an SQLite database (file is not a database [SQLITE_NOTADB]). Give the path of "
            "a store gainscope wrote, or a new file name to start an empty store")
    with pytest.raises(StoreError) as judged:
        JudgmentStore(junk, readonly=True)
    with pytest.raises(StoreError) as snapped:
        SnapshotStore.open(junk, readonly=True)
    assert str(judged.value) == f"{junk}: " + said.format("judgment store")
    assert str(snapped.value) == f"{junk}: " + said.format("snapshot store")
    assert judged.value.path == snapped.value.path == str(junk)
    full = sqlite3.OperationalError("database or disk is full")
    full.sqlite_errorcode, full.sqlite_errorname = sqlite3.SQLITE_FULL, "SQLITE_FULL"  # type: ignore[attr-defined]
    from gainscope.io.sqlite import store_failure

    assert str(store_failure(full, junk, kind="snapshot store", items="results")) == (
        f"{junk}: no space left to write the snapshot store (database or disk is full [SQLITE_FULL]). Free disk "
        "space or move the store to another disk, then run again: the results recorded so far are kept and are not "
        "asked for again")
