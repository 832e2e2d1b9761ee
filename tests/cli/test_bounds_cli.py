"""``evaluate --bounds`` and ``compare --bounds``: the sections they add, in each format, and the formats refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq1 0 x 0\nq2 0 b 1\n", encoding="utf-8")
    base = tmp_path / "base.run"
    base.write_text("q1 Q0 x 1 2 base\nq1 Q0 a 2 1 base\nq2 Q0 b 1 1 base\n", encoding="utf-8")
    new = tmp_path / "new.run"
    new.write_text("q1 Q0 a 1 2 new\nq1 Q0 u 2 1 new\nq2 Q0 v 1 2 new\nq2 Q0 b 2 1 new\n", encoding="utf-8")
    return {"qrels": str(qrels), "base": str(base), "new": str(new)}


def test_evaluate_bounds_table(cli_runner, files) -> None:
    code, out, err = cli_runner("evaluate", files["qrels"], files["new"], "-m", "P@1 nDCG@2", "--bounds")
    assert code == 0, err
    # new: q1 a (relevant) then u (unjudged); q2 v (unjudged) then b. P@1 today (1 + 0) / 2, completed (1 + 1) / 2;
    # judged share of the first 1: q1 1, q2 0. nDCG@2: q1 1 -> 1 (u completed at grade 1: ideal 2 docs too);
    # q2 0.6309 (b at rank 2) -> 1; judged share of the first 2: 1/2 in both
    assert "│ P@1    │ new │ 0.5000 │    1.0000 │   0.5000 │ yes    │" in out
    assert "│ nDCG@2 │ new │ 0.8155 │    1.0000 │   0.5000 │ no (1) │" in out
    assert "(1) the ideal DCG grows with every relevant document, so the value can fall" in out
    assert out.index("conventions:") < out.index("unjudged documents within each metric's depth k")


def test_evaluate_bounds_json_and_csv(cli_runner, files) -> None:
    code, out, _ = cli_runner("evaluate", files["qrels"], files["new"], "-m", "P@1", "--bounds", "-f", "json")
    assert code == 0
    data = json.loads(out)
    assert data["aggregates"]["P@1"] == 0.5
    assert data["bounds"]["P@1"] == {"bounded": True, "why": "only the relevant documents in the first k count, "
                                     "over a fixed k", "today": 0.5, "completed": 1.0, "low": 0.5, "high": 1.0,
                                     "judged": 0.5}
    code, out, err = cli_runner("evaluate", files["qrels"], files["new"], "-m", "P@1", "--bounds", "-f", "csv", "-q")
    assert code == 0 and err.startswith("# conventions:")
    assert out.splitlines() == ["run,query_id,metric,today,completed,low,high,judged,bounded",
                                "new,all,P@1,0.5,1.0,0.5,1.0,0.5,True", "new,q1,P@1,1.0,1.0,1.0,1.0,1.0,True",
                                "new,q2,P@1,0.0,1.0,0.0,1.0,0.0,True"]


def test_compare_bounds_says_when_a_sign_could_change(cli_runner, files) -> None:
    code, out, err = cli_runner("compare", files["qrels"], files["base"], files["new"], "-m", "P@1", "--bounds",
                                "--test", "t")
    assert code == 0, err
    # P@1: base 0, 1; new 1, 0: delta 0; new's v completed: range [0, +0.5]
    assert "│ P@1    │ new vs base │ +0.0000 │ [+0.0000, +0.5000] │ could change │" in out
    code, out, _ = cli_runner("compare", files["qrels"], files["base"], files["new"], "-m", "P@1", "--bounds",
                              "--test", "t", "-f", "json")
    bounds = json.loads(out)["bounds"]
    assert bounds[0]["could_change_sign"] is True and bounds[0]["high"] == 0.5


@pytest.mark.parametrize(("command", "fmt", "message"), [
    ("evaluate", "trec_eval", "--bounds adds to the table, markdown, csv, json formats; not --format trec_eval"),
    ("compare", "latex", "--bounds adds to the table, markdown, json formats; not --format latex"),
])
def test_formats_without_a_bounds_section_are_refused(cli_runner, files, command, fmt, message) -> None:
    runs = [files["base"], files["new"]]
    code, _, err = cli_runner(command, files["qrels"], *runs, "-m", "P@1", "--bounds", "-f", fmt)
    assert code == 2 and message in err


def test_bounds_with_judged_only_is_a_usage_error(cli_runner, files) -> None:
    code, _, err = cli_runner("evaluate", files["qrels"], files["new"], "-m", "P@1", "--bounds", "-J")
    assert code == 2
    assert "and --judged-only drops them before scoring; use one or the other" in err
