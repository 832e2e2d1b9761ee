"""``gainscope evaluate`` end to end on the points issue 13 raised: metric lists and names as other tools
spell them, grading scales beyond float64, trec_eval's text for several runs and where trec_eval divides
0 by 0, a query named ``all``, and CSV cells that a spreadsheet would run as formulas."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from tests.helpers import write

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"
QRELS, BM25, HYBRID = str(EX / "qrels.txt"), str(EX / "bm25.run"), str(EX / "hybrid.run")


def csv_rows(out: str) -> list[tuple[str, ...]]:
    """The data rows of evaluate's CSV: (run, query_id, metric, value, aggregate)."""
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
    qrels = write(tmp_path, "qrels", "q 0 a 100\nq 0 b 100\nq 0 c 50\n")
    run = write(tmp_path, "run", "q Q0 c 1 3 r\nq Q0 a 2 2 r\nq Q0 b 3 1 r\n")
    code, out, err = cli_runner("evaluate", qrels, run, "-m", "ERR,nDCG(gain=exponential)", "-f", "csv")
    assert code == 0
    assert "warning" not in err
    # ERR = p_c + (1 - p_c) p_a / 2 with p_c = 2^-50 - 2^-100, p_a = 1 - 2^-100 (was 0, "undefined");
    # nDCG = (2^50 + 2^100 / log2(3) + 2^100 / 2) / (2^100 + 2^100 / log2(3) + 2^50 / 2) = 0.6934 to 2^-50
    assert csv_rows(out) == [("r", "all", "ERR", "0.5000000000000004", "mean"),
                             ("r", "all", "nDCG(gain=exponential)", "0.6934264036172711", "mean")]


def test_dcg_beyond_float64_is_a_usage_error(cli_runner, tmp_path: Path) -> None:
    qrels = write(tmp_path, "qrels", "q 0 a 1024\n")
    run = write(tmp_path, "run", "q Q0 a 1 3 r\n")
    code, out, err = cli_runner("evaluate", qrels, run, "-m", "DCG(gain=exponential)")
    assert code == 2 and out == ""
    assert err.splitlines()[-1].startswith("error: DCG(gain=exponential) of query 'q' exceeds the largest float64")
    code, out, _ = cli_runner("evaluate", qrels, run, "-m", "nDCG(gain=exponential)", "-f", "csv")
    assert code == 0 and csv_rows(out) == [("r", "all", "nDCG(gain=exponential)", "1.0", "mean")]


# ------------------------------------------------------------------ trec_eval's text where it divides 0 by 0
# q1 retrieves d1 (2), dx (unjudged), d2 (1); q2 retrieves only unjudged documents; q3 is judged but not
# ranked; q4 has one judgment, grade 0, and retrieves it.
TE_QRELS = "q1 0 d1 2\nq1 0 d2 1\nq1 0 d3 0\nq1 0 d4 3\nq2 0 e1 1\nq2 0 e2 0\nq3 0 f1 2\nq3 0 f2 1\nq4 0 g1 0\n"
TE_RUN = ("q1 Q0 d1 1 3.0 r1\nq1 Q0 dx 2 2.0 r1\nq1 Q0 d2 3 1.0 r1\nq2 Q0 zz 1 5.0 r1\nq2 Q0 zy 2 4.0 r1\n"
          "q4 Q0 g1 1 1.0 r1\n")


@pytest.fixture
def te_files(tmp_path: Path) -> tuple[str, str]:
    return write(tmp_path, "qrels", TE_QRELS), write(tmp_path, "run", TE_RUN)


def _lines(*rows: tuple[str, str, str]) -> str:
    return "".join(f"{m:<22}\t{q}\t{v}\n" for m, q, v in rows)


def test_trec_eval_nan_for_interpolated_precision_of_an_empty_ranking(cli_runner, te_files) -> None:
    # Under -J q2 keeps no document and q3's placeholder (-c) is dropped too: num_ret = 0, and trec_eval
    # starts interpolating from num_rel_ret / num_ret = 0/0. The NaN stays where c = round(r * R) = 0:
    # q2 (R = 1): r = 0, 0.2 (c = 0), not 0.5 (c = lround(0.5) = 1); q3 (R = 2): r = 0, 0.2 (0.4 -> 0).
    # 11pt_avg averages levels 0 and 0.1 among them: NaN. One NaN query makes the summary NaN.
    # (This text is what trec_eval 10 printed for these files, built on x86-64 Linux.)
    code, out, _ = cli_runner("evaluate", *te_files, "-f", "trec_eval", "-q", "-J", "-c",
                              "-m", "iprec_at_recall.0,.2,.5", "-m", "11pt_avg", "-m", "num_ret")
    assert code == 0
    assert out == _lines(
        ("num_ret", "q1", "2"), ("iprec_at_recall_0.00", "q1", "1.0000"), ("iprec_at_recall_0.20", "q1", "1.0000"),
        ("iprec_at_recall_0.50", "q1", "1.0000"), ("11pt_avg", "q1", "0.8182"),
        ("num_ret", "q2", "0"), ("iprec_at_recall_0.00", "q2", "  -nan"), ("iprec_at_recall_0.20", "q2", "  -nan"),
        ("iprec_at_recall_0.50", "q2", "0.0000"), ("11pt_avg", "q2", "  -nan"),
        ("num_ret", "q3", "0"), ("iprec_at_recall_0.00", "q3", "  -nan"), ("iprec_at_recall_0.20", "q3", "  -nan"),
        ("iprec_at_recall_0.50", "q3", "0.0000"), ("11pt_avg", "q3", "  -nan"),
        ("num_ret", "q4", "1"), ("iprec_at_recall_0.00", "q4", "0.0000"), ("iprec_at_recall_0.20", "q4", "0.0000"),
        ("iprec_at_recall_0.50", "q4", "0.0000"), ("11pt_avg", "q4", "0.0000"),
        ("num_ret", "all", "3"), ("iprec_at_recall_0.00", "all", "  -nan"), ("iprec_at_recall_0.20", "all", "  -nan"),
        ("iprec_at_recall_0.50", "all", "0.2500"), ("11pt_avg", "all", "  -nan"))
    # every other format keeps gainscope's value: nothing retrieved, interpolated precision 0
    code, out, _ = cli_runner("evaluate", *te_files, "-f", "csv", "-q", "-J", "-c", "-m", "IPrec@0,11pt_avg")
    assert code == 0
    rows = {(r[1], r[2]): r[3] for r in csv_rows(out)}
    assert rows[("q2", "IPrec@0")] == rows[("q3", "IPrec@0")] == rows[("q2", "11pt_avg")] == "0.0"
    assert rows[("all", "IPrec@0")] == "0.25"  # q1's 1 over four queries


def test_trec_eval_nan_for_rndcg_without_positive_gain(cli_runner, tmp_path: Path) -> None:
    # -l 0: q4's only judgment (grade 0) is relevant, but no document has a positive gain: trec_eval's
    # Rndcg is sum / num_changed_ideal_gain = 0/0. q2 has a positive gain (e1) but retrieves nothing judged: 0.
    qrels = write(tmp_path, "qrels", TE_QRELS.replace("q3 0 f1 2\nq3 0 f2 1\n", ""))
    run = write(tmp_path, "run", TE_RUN)
    code, out, _ = cli_runner("evaluate", qrels, run, "-f", "trec_eval", "-q", "-l", "0", "-m", "Rndcg")
    assert code == 0
    assert out == _lines(("Rndcg", "q1", "0.5537"), ("Rndcg", "q2", "0.0000"), ("Rndcg", "q4", "  -nan"),
                         ("Rndcg", "all", "  -nan"))
    # a gain map that gives every level 0: q1 and q2 have relevant documents and no gain (q4 none at -l 1)
    code, out, _ = cli_runner("evaluate", qrels, run, "-f", "trec_eval", "-q", "-m", "Rndcg.1=0,2=0,3=0")
    assert out == _lines(("Rndcg_1=0,2=0,3=0", "q1", "  -nan"), ("Rndcg_1=0,2=0,3=0", "q2", "  -nan"),
                         ("Rndcg_1=0,2=0,3=0", "q4", "0.0000"), ("Rndcg_1=0,2=0,3=0", "all", "  -nan"))


@pytest.mark.parametrize(("flags", "trec_eval_prints", "sum_of_r"), [
    # grades > 0: q1 3 (2, 1, 3), q2 1, q3 2, q4 0 = 6, whatever -l. Per query R at -l 2: 2, 0, 1, 0 = 3;
    # at -l 0 (every grade >= 0): 4, 2, 2, 1 = 9
    (["-c", "-l", "2"], "6", "3.0"),
    (["-c", "-l", "0"], "6", "9.0"),
    (["-c"], "6", "6.0"),
    (["-l", "2"], "3", "3.0"),  # without -c, trec_eval's summary is the sum
])
def test_trec_eval_num_rel_summary_under_c(cli_runner, te_files, flags, trec_eval_prints, sum_of_r) -> None:
    code, out, _ = cli_runner("evaluate", *te_files, "-f", "trec_eval", "-m", "num_rel", *flags)
    assert code == 0
    assert out == _lines(("num_rel", "all", trec_eval_prints))
    code, out, _ = cli_runner("evaluate", *te_files, "-f", "csv", "-m", "num_rel", *flags)
    assert csv_rows(out) == [("r1", "all", "NumRel", sum_of_r, "sum")]


# ------------------------------------------------------------------------------- trec_eval text, several runs
def test_trec_eval_format_with_several_runs_names_the_run_on_every_line(cli_runner) -> None:
    code, one, _ = cli_runner("evaluate", QRELS, BM25, "-f", "trec_eval", "-q", "-m", "map,runid")
    assert code == 0 and all(len(line.split("\t")) == 3 for line in one.splitlines())  # one run: trec_eval's
    code, out, _ = cli_runner("evaluate", QRELS, BM25, HYBRID, "-f", "trec_eval", "-q", "-m", "map,runid")
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 2 * len(one.splitlines())
    assert all(len(line.split("\t")) == 4 for line in lines)
    # the first three columns are trec_eval's, the fourth the run's name
    assert [line.rsplit("\t", 1)[0] for line in lines if line.endswith("\tbm25")] == one.splitlines()
    assert lines[-2:] == ["runid                 \tall\thybrid\thybrid", "map                   \tall\t0.7451\thybrid"]


def test_trec_eval_format_names_runs_by_path_when_names_repeat(cli_runner) -> None:
    code, out, _ = cli_runner("evaluate", QRELS, BM25, BM25, "-f", "trec_eval", "-m", "map")
    assert code == 0
    assert out.splitlines() == [f"map                   \tall\t0.4666\t{BM25}"] * 2


# -------------------------------------------------------------------------------------- a query named 'all'
def test_a_query_named_all_is_warned_about_and_aggregates_stay_distinguishable(cli_runner, tmp_path) -> None:
    qrels = write(tmp_path, "qrels", "all 0 d1 1\nq 0 d1 1\nq 0 d2 1\n")
    run = write(tmp_path, "run", "all Q0 d1 1 1 r\nq Q0 d1 1 1 r\n")
    code, out, err = cli_runner("evaluate", qrels, run, "-f", "csv", "-q", "-m", "R@1")
    assert code == 0
    # query 'all' has R = 1, query q R = 1/2: the mean 0.75 is the row marked as an aggregate
    assert csv_rows(out) == [("r", "all", "R@1", "1.0", ""), ("r", "q", "R@1", "0.5", ""),
                             ("r", "all", "R@1", "0.75", "mean")]
    assert ("warning: run r: a query is named 'all', as the aggregate rows are; the aggregates are the ones "
            "with the 'aggregate' column set") in err
    code, out, err = cli_runner("evaluate", qrels, run, "-f", "trec_eval", "-q", "-m", "recall.1")
    assert out.splitlines()[0] == "recall_1              \tall\t1.0000"
    assert "warning: run r: a query is named 'all', as trec_eval's summary lines are" in err
    code, _, err = cli_runner("evaluate", qrels, run, "-f", "table", "-q", "-m", "R@1")
    assert "the aggregates are the last row of the run's table" in err
    code, _, err = cli_runner("evaluate", qrels, run, "-f", "csv", "-m", "R@1")  # no per-query rows: no clash
    assert "warning" not in err


# ------------------------------------------------------------------------------------------- CSV injection
def test_csv_text_cells_that_would_run_as_formulas_are_quoted(cli_runner, tmp_path: Path) -> None:
    qrels = write(tmp_path, "qrels", "=1+1 0 d 1\n@SUM(A1) 0 d 1\n-2+3 0 d 1\n-5 0 d 1\n+cmd 0 d 1\nq 0 d 1\n")
    run = write(tmp_path, "run", "".join(f"{q} Q0 d 1 1 -tag\n" for q in ("=1+1", "@SUM(A1)", "-2+3", "-5",
                                                                          "+cmd", "q")))
    code, out, _ = cli_runner("evaluate", qrels, run, "-f", "csv", "-q", "-m", "P@1")
    assert code == 0
    assert [r[:2] for r in csv_rows(out)] == [  # queries in trec_eval's (bytewise) order
        ("'-tag", "'+cmd"), ("'-tag", "'-2+3"), ("'-tag", "-5"),  # -5 is a number: left as it is
        ("'-tag", "'=1+1"), ("'-tag", "'@SUM(A1)"), ("'-tag", "q"), ("'-tag", "all")]
    assert [r[3] for r in csv_rows(out)] == ["1.0"] * 7


def test_every_csv_output_guards_text_cells(cli_runner, tmp_path: Path) -> None:
    qrels = write(tmp_path, "qrels", "q 0 =d 1\nq 0 e 0\n")
    run = write(tmp_path, "run", "q Q0 =d 1 2 r\nq Q0 e 2 1 r\n")
    code, out, _ = cli_runner("explain", qrels, run, "--query", "q", "-m", "nDCG@2", "-f", "csv")
    assert code == 0
    assert out.splitlines()[1] == "run,1,'=d,1.0,1.0,1.0,1.0,1.0"
    code, out, _ = cli_runner("compare", qrels, run, run, "--name", "=base", "--name", "@other", "-m", "P@1",
                              "-f", "csv")
    assert code == 0
    assert "'=base" in out and "'@other" in out and ",=base" not in out and ",@other" not in out


def test_trec_eval_rbp_resid_to_the_last_bit(cli_runner, tmp_path: Path) -> None:
    # q0 retrieves 7 unjudged documents: resid = 1; q1 retrieves 7, only rank 4 judged:
    # resid = p^7 + (1 - p)(1 + p + p^2 + p^4 + p^5 + p^6) = 0.9271 exactly in decimals, and the mean 0.96355
    # sits on a rounding boundary. trec_eval multiplies p out (cur_p = cur_p * p) and gets 0.9271, printing
    # 0.9636; p ** k and a complement sum gave 0.92709999999999990 and printed 0.9635.
    qrels = write(tmp_path, "qrels", "q0 0 a 1\nq1 0 d4 1\nq1 0 z 2\n")
    run = write(tmp_path, "run", "".join(f"{q} Q0 {d}{i} {i} {10 - i} r\n" for q, d in (("q0", "u"), ("q1", "d"))
                                          for i in range(1, 8)))
    code, out, _ = cli_runner("evaluate", qrels, run, "-f", "trec_eval", "-q", "-m", "rbp_resid")
    assert code == 0
    assert out == _lines(("rbp_resid", "q0", "1.0000"), ("rbp_resid", "q1", "0.9271"), ("rbp_resid", "all", "0.9636"))


def test_bounds_csv_guards_text_cells(cli_runner, tmp_path: Path) -> None:
    qrels = write(tmp_path, "qrels", "=q 0 d 1\n")
    run = write(tmp_path, "run", "=q Q0 d 1 1 r\n=q Q0 u 2 0 r\n")
    code, out, _ = cli_runner("evaluate", qrels, run, "-m", "P@2", "--bounds", "-f", "csv", "-q")
    assert code == 0
    assert [r[1] for r in csv_rows(out)] == ["all", "'=q"]
