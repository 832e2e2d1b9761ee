"""``gainscope fuse``: the fused run file, the --optimize report, and bad flag combinations (exit 2, said with
the flags' names)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    a = tmp_path / "a.run"
    a.write_text("".join(f"{q} Q0 {d} {i + 1} {s} a\n" for q in ("q1", "q2", "q3")
                         for i, (d, s) in enumerate([("d1", 3), ("d2", 2), ("d3", 1)])), encoding="utf-8")
    b = tmp_path / "b.run"
    b.write_text("".join(f"{q} Q0 {d} {i + 1} {s} b\n" for q in ("q1", "q2", "q3")
                         for i, (d, s) in enumerate([("d2", 3), ("d3", 2), ("d1", 1)])), encoding="utf-8")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 d1 1\n{q} 0 d2 0\n" for q in ("q1", "q2", "q3")), encoding="utf-8")
    train = tmp_path / "train.txt"
    train.write_text("# training split\nq1\nq2\n", encoding="utf-8")
    return {"a": str(a), "b": str(b), "qrels": str(qrels), "train": str(train), "dir": str(tmp_path)}


def test_fuse_writes_a_trec_run(cli_runner, files) -> None:
    out = Path(files["dir"]) / "fused.run"
    code, stdout, stderr = cli_runner("fuse", files["a"], files["b"], "--method", "rrf", "-o", str(out))
    assert (code, stdout, stderr) == (0, "", "")
    # q1: d1 1/61 + 1/63, d2 1/62 + 1/61, d3 1/63 + 1/62: d2, d1, d3
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[:3] == [f"q1 Q0 d2 1 {1 / 62 + 1 / 61!r} rrf", f"q1 Q0 d1 2 {1 / 61 + 1 / 63!r} rrf",
                         f"q1 Q0 d3 3 {1 / 63 + 1 / 62!r} rrf"]
    assert len(lines) == 9


def test_fuse_with_weights_and_a_name(cli_runner, files) -> None:
    out = Path(files["dir"]) / "fused.run"
    code, _, _ = cli_runner("fuse", files["a"], files["b"], "--method", "wsum", "--norm", "none", "--weights",
                            "0.25,0.75", "--name", "mix", "-o", str(out))
    assert code == 0
    # q1: d1 0.75 + 0.75, d2 0.5 + 2.25, d3 0.25 + 1.5
    assert out.read_text(encoding="utf-8").splitlines()[:3] == ["q1 Q0 d2 1 2.75 mix", "q1 Q0 d3 2 1.75 mix",
                                                                "q1 Q0 d1 3 1.5 mix"]


def test_optimize_reports_train_and_held_out(cli_runner, files) -> None:
    out = Path(files["dir"]) / "tuned.run"
    code, stdout, stderr = cli_runner("fuse", files["a"], files["b"], "--method", "wsum", "--optimize", "RR",
                                      "--train-queries", files["train"], "--judgments", files["qrels"], "-o", str(out))
    assert code == 0, stderr
    assert stdout == """\
wsum (norm minmax, weights 0.7, 0.3): weights tuned for RR on the training queries (grid, step 0.1, 11 weightings)
┌─────┬────────┐
│ run │ weight │
├─────┼────────┤
│ a   │    0.7 │
│ b   │    0.3 │
└─────┴────────┘
RR:
┌───────────────┬───────────────────┬────────────────────┐
│               │ train (2 queries) │ held-out (1 query) │
├───────────────┼───────────────────┼────────────────────┤
│ fused         │            1.0000 │             1.0000 │
│ equal weights │            0.5000 │             0.5000 │
│ a             │            1.0000 │             1.0000 │
│ b             │            0.3333 │             0.3333 │
└───────────────┴───────────────────┴────────────────────┘
"""
    assert out.read_text(encoding="utf-8").splitlines()[0] == "q1 Q0 d1 1 0.7 wsum"


def test_optimize_json_report(cli_runner, files) -> None:
    out = Path(files["dir"]) / "tuned.run"
    code, stdout, _ = cli_runner("fuse", files["a"], files["b"], "--method", "rrf", "--optimize", "RR",
                                 "--train-queries", files["train"], "--judgments", files["qrels"], "--search", "random",
                                 "--trials", "5", "-o", str(out), "--format", "json")
    assert code == 0
    report = json.loads(stdout)
    assert report["method"] == "rrf" and report["train_queries"] == 2 and len(report["trials"]) == 5


@pytest.mark.parametrize(("args", "message"), [
    (["--method", "combsum", "--weights", "1,2"], "error: combsum takes no --weights; the weighted methods are rrf, "
                                                  "wsum\n"),
    (["--method", "wsum", "--weights", "1"], "error: 1 weight(s) for 2 runs in --weights; give one weight per run, in "
                                             "the order of the runs\n"),
    (["--method", "wsum", "--weights", "1,x"], "expected finite numbers separated by commas, such as 0.3,0.7; got "
                                               "'1,x'"),
    # an empty item is not dropped: ',1' read as one weight would weigh the wrong run
    (["--method", "wsum", "--weights", ",1"], "expected finite numbers separated by commas, such as 0.3,0.7; got "
                                              "',1'"),
    (["--method", "wsum", "--weights", "1,nan"], "expected finite numbers separated by commas"),
    (["--method", "rrf", "--norm", "minmax"], "error: rrf reads only ranks, which --norm minmax does not change; leave "
                                              "the normalisation out, or use a score-based method (--method combsum "
                                              "or wsum, ...)\n"),
    (["--method", "combsum", "--rrf-k", "10"], "error: --rrf-k is RRF's constant; combsum does not use it\n"),
    (["--method", "wsum", "--optimize", "RR"], "--optimize needs --train-queries FILE and --judgments QRELS"),
    (["--method", "combmnz", "--optimize", "RR"], "--optimize tunes --weights, which --method combmnz does not take"),
    (["--method", "wsum", "--optimize", "RR", "--weights", "1,1"], "--optimize chooses the weights; leave --weights "
                                                                   "out"),
    (["--method", "bogus"], "'bogus' is not one of 'rrf', 'combsum'"),
])
def test_bad_flags_exit_2_naming_them(cli_runner, files, args, message) -> None:
    out = str(Path(files["dir"]) / "x.run")
    code, _, stderr = cli_runner("fuse", files["a"], files["b"], *args, "-o", out)
    assert code == 2
    assert message in stderr


def test_one_run_is_a_usage_error(cli_runner, files) -> None:
    code, _, stderr = cli_runner("fuse", files["a"], "-o", str(Path(files["dir"]) / "x.run"))
    assert code == 2 and "fuse needs at least two runs" in stderr


def test_a_run_without_scores_for_a_score_method_is_invalid_input(cli_runner, files) -> None:
    ranked = Path(files["dir"]) / "ranked.jsonl"
    ranked.write_text('{"query_id": "q1", "doc_id": "d9", "rank": 1}\n', encoding="utf-8")
    code, _, stderr = cli_runner("fuse", files["a"], str(ranked), "--method", "combsum",
                                 "-o", str(Path(files["dir"]) / "x.run"))
    assert code == 3
    assert "has no scores; score-based fusion needs a finite score for every document" in stderr


def test_a_run_with_an_infinite_score_is_named_by_its_file(cli_runner, files) -> None:
    """Two files with the same run tag: the error said only "run 'a'", not which of them."""
    folder = Path(files["dir"])
    (folder / "one.run").write_text("q1 Q0 d1 1 2.0 a\n", encoding="utf-8")
    (folder / "two.run").write_text("q1 Q0 d1 1 inf a\nq1 Q0 d2 2 1.0 a\n", encoding="utf-8")
    code, _, stderr = cli_runner("fuse", str(folder / "one.run"), str(folder / "two.run"), "--method", "combsum",
                                 "-o", str(folder / "x.run"))
    assert code == 3
    assert f"error: run 'a' ({folder / 'two.run'}) scores query 'q1', doc 'd1' inf; score-based fusion" in stderr
