"""``gainscope evaluate`` end to end on the points issue 13 raised: metric lists and names as other tools
spell them, grading scales beyond float64, trec_eval's text for several runs and where trec_eval divides
0 by 0, a query named ``all``, and CSV cells that a spreadsheet would run as formulas."""

from __future__ import annotations

import csv
import io
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"
QRELS, BM25, HYBRID = str(EX / "qrels.txt"), str(EX / "bm25.run"), str(EX / "hybrid.run")


def write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


def csv_rows(out: str) -> list[tuple[str, ...]]:
    """The data rows of evaluate's CSV: (run, query_id, metric, value)."""
    return [tuple(r) for r in csv.reader(io.StringIO(out))][1:]


# ---------------------------------------------------------------------------------------- metric lists, names
def test_comma_separated_metrics_as_ir_measures_users_write_them(cli_runner) -> None:
    code, out, _ = cli_runner("evaluate", QRELS, BM25, "-m", "nDCG@10,AP", "-f", "csv")
    assert code == 0
    assert [r[2] for r in csv_rows(out)] == ["nDCG@10", "AP"]
    # a comma inside brackets, and trec_eval's own comma lists, stay where they are
    code, out, _ = cli_runner("evaluate", QRELS, BM25, "-m", "nDCG(gain=exponential, ideal=retrieved)@3,AP",
                              "-f", "csv")
    assert code == 0
    assert [r[2] for r in csv_rows(out)] == ["nDCG(gain=exponential, ideal=retrieved)@3", "AP"]
    code, out, _ = cli_runner("evaluate", QRELS, BM25, "-m", "P.5,10,ndcg.1=3,2=9", "-f", "trec_eval")
    assert code == 0
    assert [line.split("\t")[0].strip() for line in out.splitlines()] == ["P_5", "P_10", "ndcg_1=3,2=9"]


def test_pytrec_eval_keys_on_the_command_line(cli_runner) -> None:
    code, out, _ = cli_runner("evaluate", QRELS, BM25, "-m", "ndcg_cut_10,P_5", "-m", "iprec_at_recall_0.10",
                              "-f", "trec_eval")
    assert code == 0
    assert [line.split("\t")[0].strip() for line in out.splitlines()] == [
        "iprec_at_recall_0.10", "P_5", "ndcg_cut_10"]


def test_a_number_glued_to_a_name_is_a_usage_error_suggesting_the_at_form(cli_runner) -> None:
    code, out, err = cli_runner("evaluate", QRELS, BM25, "-m", "NDCG10")
    assert code == 2 and out == ""
    assert err.splitlines()[-1] == ("error: unknown metric 'NDCG10'. Did you mean 'nDCG@10'? Run `gainscope "
                                    "metrics` to list every metric.")


# -------------------------------------------------------------------------------------------- grading scales
def test_err_on_a_0_to_100_scale_without_a_warning(cli_runner, tmp_path: Path) -> None:
    qrels = write(tmp_path / "qrels", "q 0 a 100\nq 0 b 100\nq 0 c 50\n")
    run = write(tmp_path / "run", "q Q0 c 1 3 r\nq Q0 a 2 2 r\nq Q0 b 3 1 r\n")
    code, out, err = cli_runner("evaluate", qrels, run, "-m", "ERR,nDCG(gain=exponential)", "-f", "csv")
    assert code == 0
    assert "warning" not in err
    # ERR = p_c + (1 - p_c) p_a / 2 with p_c = 2^-50 - 2^-100, p_a = 1 - 2^-100 (was 0, "undefined");
    # nDCG = (2^50 + 2^100 / log2(3) + 2^100 / 2) / (2^100 + 2^100 / log2(3) + 2^50 / 2) = 0.6934 to 2^-50
    assert csv_rows(out) == [("r", "all", "ERR", "0.5000000000000004"),
                             ("r", "all", "nDCG(gain=exponential)", "0.6934264036172711")]


def test_dcg_beyond_float64_is_a_usage_error(cli_runner, tmp_path: Path) -> None:
    qrels = write(tmp_path / "qrels", "q 0 a 1024\n")
    run = write(tmp_path / "run", "q Q0 a 1 3 r\n")
    code, out, err = cli_runner("evaluate", qrels, run, "-m", "DCG(gain=exponential)")
    assert code == 2 and out == ""
    assert err.splitlines()[-1].startswith("error: DCG(gain=exponential) of query 'q' exceeds the largest float64")
    code, out, _ = cli_runner("evaluate", qrels, run, "-m", "nDCG(gain=exponential)", "-f", "csv")
    assert code == 0 and csv_rows(out) == [("r", "all", "nDCG(gain=exponential)", "1.0")]
