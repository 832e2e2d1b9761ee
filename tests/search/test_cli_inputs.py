"""Command-line inputs of the live-search commands: a Python engine named module:function from the current folder,
a case file as queries and as judgments, the snapshot store's errors, and bad queries files."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from tests.helpers import write_jsonl

from .conftest import invoke


def test_a_python_engine_from_the_current_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_retriever_gs.py").write_text(
        "def search(query, params, top):\n"
        "    return [(f'{query.split()[0]}-{i}', 10 - i) for i in range(min(top, params.get('n', 3)))]\n")
    write_jsonl(tmp_path, "q.jsonl", [{"id": "a", "text": "red shoe"}, {"id": "b", "text": "blue hat"}])
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # undone after the test, like the folder the command adds
    code, out, err = invoke("search", "--engine", "my_retriever_gs:search", "--queries", "q.jsonl", "--top", "2")
    assert code == 0, err
    assert out.splitlines() == ["a Q0 red-0 1 10.0 search", "a Q0 red-1 2 9.0 search",
                                "b Q0 blue-0 1 10.0 search", "b Q0 blue-1 2 9.0 search"]
    code, _, err = invoke("search", "--engine", "my_retriever_gs:nothing", "--queries", "q.jsonl")
    assert code == 3 and "engine 'my_retriever_gs:nothing': module 'my_retriever_gs' has no attribute 'nothing'" in err


def test_a_case_file_as_queries_and_as_judgments(films_index: Path, tmp_path: Path) -> None:
    case = {"scorer": "nDCG@10", "queries": [
        {"query": "star wars", "ratings": {"d1": 3, "d4": 1}, "options": {"lang": "en"}},
        {"query": "crime saga", "id": "cs", "ratings": {"d3": 2}}]}
    (tmp_path / "case.json").write_text(json.dumps(case))
    code, out, err = invoke("search", "--engine", films_index, "--queries", tmp_path / "case.json", "--top", "2")
    assert code == 0, err
    assert [line.split()[:3] for line in out.splitlines()] == [["star_wars", "Q0", "d1"], ["star_wars", "Q0", "d4"],
                                                               ["cs", "Q0", "d3"]]
    code, out, err = invoke("experiment", "--engine", films_index, "--queries", tmp_path / "case.json",
                            "--judgments", tmp_path / "case.json", "--grid", "title_boost=0", "-m", "nDCG@10",
                            "--resamples", "50", "-f", "json")
    assert code == 0, err
    rows = {r["run"]: r for r in json.loads(out)["comparison"]["rows"]}
    # default (title boost 2): star wars [d1, d4] ideal -> 1; crime saga [d3] -> 1
    assert rows["default"]["mean"] == pytest.approx(1.0)


def test_snapshot_store_errors_are_io_errors(films_index: Path, tmp_path: Path) -> None:
    write_jsonl(tmp_path, "q.jsonl", [{"id": "a", "text": "star"}])
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"\x00\x01 not a database at all " * 100)
    code, _, err = invoke("search", "--engine", films_index, "--queries", tmp_path / "q.jsonl", "--snapshot", junk)
    assert code == 4
    # the one translation of SQLite failures (gainscope.io.sqlite), as the judgment store says it
    assert err == (f"error: {junk}: not a snapshot store: the file is not an SQLite database (file is not a database "
                   "[SQLITE_NOTADB]). Give the path of a store gainscope wrote, or a new file name to start an empty "
                   "store\n")
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE invoices (n INTEGER)")
    code, _, err = invoke("search", "--engine", films_index, "--queries", tmp_path / "q.jsonl", "--snapshot", other)
    assert code == 4
    assert err == (f"error: {other} is an SQLite database of another program (tables: invoices); it is left "
                   "untouched: choose another --snapshot file\n")
    code, _, err = invoke("search", "--replay", tmp_path / "none.sqlite")
    assert code == 4 and "no such snapshot store; take a snapshot first" in err
    code, _, err = invoke("search", "--engine", films_index, "--queries", tmp_path / "q.jsonl", "--snapshot",
                          tmp_path / "missing" / "s.sqlite")
    assert code == 4 and "the folder" in err and "does not exist" in err


def test_bad_queries_files(films_index: Path, tmp_path: Path) -> None:
    (tmp_path / "spaces.tsv").write_text("q 1\tstar wars\n")
    code, _, err = invoke("search", "--engine", films_index, "--queries", tmp_path / "spaces.tsv")
    assert code == 3
    assert err == (f"error: {tmp_path / 'spaces.tsv'}: query id 'q 1' is empty or holds whitespace, which a TREC run "
                   "cannot hold; give ids without spaces\n")
    # a no-break space is not where a TREC line is split: such an id is written and read back as it is
    (tmp_path / "nbsp.tsv").write_text("q\u00a01\tstar wars\n", encoding="utf-8")
    code, _, err = invoke("search", "--engine", films_index, "--queries", tmp_path / "nbsp.tsv", "-o",
                          tmp_path / "nbsp.run")
    assert code == 0, err
    from gainscope.io import read_run

    assert set(read_run(tmp_path / "nbsp.run").frame["query_id"]) == {"q\u00a01"}
    (tmp_path / "opts.jsonl").write_text('{"id": "a", "text": "x", "options": [1]}\n')
    code, _, err = invoke("search", "--engine", films_index, "--queries", tmp_path / "opts.jsonl")
    assert code == 3 and err == f"error: {tmp_path / 'opts.jsonl'}:1: 'options' must be a JSON object; got [1]\n"


def test_the_progress_bar_shows_rate_and_failures_on_a_terminal(monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    from gainscope.cli.search import progress_printer
    from gainscope.search.runner import Progress

    monkeypatch.setattr("sys.stderr.isatty", lambda: False)
    assert progress_printer("shop") is None  # not a terminal: no bar
    monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    show = progress_printer("shop")
    state = Progress(total=10, reused=0, done=5, failed=1, started=0.0)
    monkeypatch.setattr("gainscope.search.runner.time.perf_counter", lambda: 2.0)  # 5 queries in 2 s
    show(state)
    err = capsys.readouterr().err
    assert err == "\rshop [############            ] 5/10 · 2.5 q/s · failed 1 · 0m02s left "
