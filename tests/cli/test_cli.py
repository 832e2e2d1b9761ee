"""The command line, end to end: outputs, formats, conventions echo, exit codes, error messages."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"
QRELS, BM25, HYBRID = str(EX / "qrels.txt"), str(EX / "bm25.run"), str(EX / "hybrid.run")


def test_evaluate_table_has_runs_metrics_and_conventions(cli_runner) -> None:
    code, out, err = cli_runner("evaluate", QRELS, BM25, HYBRID, "-m", "nDCG@10 AP", "-m", "P(rel=2)@5")
    assert code == 0
    assert "│ metric" in out and "bm25" in out and "hybrid" in out
    for name in ("nDCG@10", "AP", "P(rel=2)@5"):
        assert f"│ {name}" in out
    assert "conventions:" in out
    assert "ties" in out and "doc id desc" in out
    # hybrid has no ranking for MQ005: reported on stderr and in the conventions block
    assert "1 judged without ranking" in out
    assert "MQ005" in err


def test_evaluate_values_match_python_api(cli_runner) -> None:
    import gainscope

    code, out, _ = cli_runner("evaluate", QRELS, BM25, "-m", "nDCG@10 RR", "--format", "json")
    assert code == 0
    data = json.loads(out)
    with pytest.warns():
        res = gainscope.evaluate(QRELS, BM25, ["nDCG@10", "RR"])
    assert data["aggregates"]["nDCG@10"] == pytest.approx(res["nDCG@10"], abs=1e-15)
    assert data["policies"]["ties"] == "trec_eval"
    assert data["coverage"]["evaluated_queries"] == 6


def test_per_query_table_lists_every_query_and_all(cli_runner) -> None:
    code, out, _ = cli_runner("evaluate", QRELS, HYBRID, "-m", "nDCG@10", "-q")
    assert code == 0
    for q in ("MQ001", "MQ002", "MQ003", "MQ004", "MQ005", "MQ006", "all"):
        assert f"│ {q}" in out
    row = next(line for line in out.splitlines() if line.startswith("│ MQ005"))
    assert "0.0000" in row  # missing from the run: scored 0 (trec_eval -c)


def test_skip_missing_changes_the_mean(cli_runner) -> None:
    _, zero, _ = cli_runner("evaluate", QRELS, HYBRID, "-m", "AP", "--format", "json")
    _, skip, _ = cli_runner("evaluate", QRELS, HYBRID, "-m", "AP", "--format", "json", "--skip-missing")
    z, s = json.loads(zero), json.loads(skip)
    assert z["coverage"]["evaluated_queries"] == 6 and s["coverage"]["evaluated_queries"] == 5
    assert s["aggregates"]["AP"] == pytest.approx(z["aggregates"]["AP"] * 6 / 5)


def test_formats_csv_jsonl_markdown(cli_runner) -> None:
    code, out, err = cli_runner("evaluate", QRELS, BM25, "-m", "AP RR", "--format", "csv", "-q")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {r["metric"] for r in rows} == {"AP", "RR"}
    assert sum(r["query_id"] == "all" for r in rows) == 2
    assert "# conventions:" in err
    code, out, _ = cli_runner("evaluate", QRELS, BM25, "-m", "AP", "--format", "jsonl", "-q")
    records = [json.loads(line) for line in out.splitlines()]
    assert records[-1]["query_id"] == "all" and len(records) == 7
    code, out, _ = cli_runner("evaluate", QRELS, BM25, "-m", "AP", "--format", "markdown")
    assert out.startswith("| metric | bm25 |") and "**conventions**" in out


def test_output_file(cli_runner, tmp_path: Path) -> None:
    target = tmp_path / "res.json"
    code, out, _ = cli_runner("evaluate", QRELS, BM25, "-m", "AP", "--format", "json", "-o", str(target))
    assert code == 0 and out == ""
    assert json.loads(target.read_text())["metrics"] == ["AP"]


def test_trec_eval_format_defaults_to_official(cli_runner) -> None:
    code, out, _ = cli_runner("evaluate", QRELS, BM25, "--format", "trec_eval")
    assert code == 0
    names = [line.split("\t")[0].strip() for line in out.splitlines()]
    assert names[:6] == ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map"]
    assert out.splitlines()[0] == "runid                 \tall\tbm25"


def test_seed_dataset_json_and_ordered_run(cli_runner) -> None:
    code, out, _ = cli_runner("evaluate", str(EX / "dataset.json"), str(EX / "agent_run.jsonl"),
                              "-m", "nDCG@5", "-q", "--format", "json")
    assert code == 0
    data = json.loads(out)
    # MQ004 retrieves its three ground-truth documents first: a perfect ranking
    assert data["per_query"]["MQ004"]["nDCG@5"] == pytest.approx(1.0)
    # MQ001: hits at ranks 1, 3, 4 of 4 relevant: (1 + 1/2 + 1/log2(5)) / (1 + 1/log2 3 + 1/2 + 1/log2 5)
    assert data["per_query"]["MQ001"]["nDCG@5"] == pytest.approx(1.9307 / 2.5616, abs=1e-4)


def test_explain_prints_positions_and_division(cli_runner) -> None:
    code, out, _ = cli_runner("explain", QRELS, BM25, "--query", "MQ003", "-m", "nDCG@5")
    assert code == 0
    assert "run ranking:" in out and "ideal ranking:" in out
    assert "DCG / IDCG:" in out
    code, out, _ = cli_runner("explain", QRELS, BM25, "--query", "MQ003", "-m", "AP", "--format", "json")
    data = json.loads(out)
    assert data["metric"] == "AP" and data["steps"]


def test_explain_unknown_query_is_an_input_error(cli_runner) -> None:
    code, _, err = cli_runner("explain", QRELS, BM25, "--query", "nope", "-m", "AP")
    assert code == 3
    assert "query 'nope' is not evaluated" in err


def test_metrics_list_and_describe(cli_runner) -> None:
    code, out, _ = cli_runner("metrics")
    assert code == 0 and "nDCG" in out and "Bpref" in out and "RBP" in out
    code, out, _ = cli_runner("metrics", "nDCG@10")
    assert code == 0
    assert "Järvelin" in out and "trec_eval name: ndcg_cut_10" in out and "ideal" in out
    code, out, _ = cli_runner("metrics", "P")
    assert code == 0 and "Precision at k" in out


def test_unknown_metric_exits_2_with_suggestion(cli_runner) -> None:
    code, _, err = cli_runner("evaluate", QRELS, BM25, "-m", "nDGC@10")
    assert code == 2
    assert "Did you mean 'nDCG'?" in err


def test_policy_conflict_is_a_usage_error(cli_runner) -> None:
    code, _, err = cli_runner("evaluate", QRELS, BM25, "-m", "RR", "--ties", "average")
    assert code == 2
    assert "does not support --ties average" in err  # the flag on the command line (issue 13, item 20)
    assert err.rstrip().endswith("use --ties trec_eval or rank")


def test_bad_input_exits_3_naming_file_and_line(cli_runner, tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    run.write_text("MQ001 Q0 d1 1 0.5 x\nMQ001 Q0 d2 2 abc x\n")
    code, out, err = cli_runner("evaluate", QRELS, str(run), "-m", "AP")
    assert code == 3
    assert out == ""
    assert f"{run}:2" in err and "abc" in err


def test_no_overlap_exits_3(cli_runner, tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    run.write_text("zz Q0 d1 1 0.5 x\n")
    code, _, err = cli_runner("evaluate", QRELS, str(run), "-m", "AP")
    assert code == 3
    assert "no query is both judged and ranked" in err


def test_missing_file(cli_runner, tmp_path: Path) -> None:
    code, _, err = cli_runner("evaluate", QRELS, str(tmp_path / "absent.run"), "-m", "AP")
    assert code == 4  # I/O, as the README says
    assert "absent.run" in err


def test_validate_reports_and_sets_exit_code(cli_runner, tmp_path: Path) -> None:
    code, out, _ = cli_runner("validate", QRELS, BM25)
    assert code == 0
    assert "error(s)" in out
    bad = tmp_path / "dup.run"
    bad.write_text("q1 Q0 d1 1 0.5 x\nq1 Q0 d1 2 0.4 x\n")
    code, out, _ = cli_runner("validate", str(bad))
    assert code == 3
    assert "error" in out


def test_python_dash_m_and_console_script() -> None:
    done = subprocess.run([sys.executable, "-m", "gainscope", "evaluate", QRELS, BM25, "-m", "AP", "--format", "csv"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("run,query_id,metric,value")
