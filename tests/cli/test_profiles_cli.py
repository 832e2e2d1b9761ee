"""--profile and the new policy options on every command that evaluates runs, the metric catalogue and explain
for every metric, end to end through click's runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"
QRELS, BM25, HYBRID = str(EX / "qrels.txt"), str(EX / "bm25.run"), str(EX / "hybrid.run")


def _json(out: str) -> dict:
    return json.loads(out)


# ---------------------------------------------------------------------------------------------- evaluate
def test_evaluate_with_a_profile_prints_it_and_what_it_set(cli_runner) -> None:
    code, out, _ = cli_runner("evaluate", QRELS, BM25, "-m", "nDCG@10 NDCG_CUT@10 P@5", "--profile", "quepid")
    assert code == 0
    for name in ("nDCG(gain=exponential, ideal_depth=all)@10", "nDCG(gain=exponential)@10",
                 "P(denominator=retrieved)@5"):
        assert f"│ {name}" in out
    assert "profile           quepid: Quepid's built-in scorers" in out
    # the policies it sets as the flags that set them (issue 13 review: the CLI user needs the flag)
    assert ("profile sets      --ties rank; -l positive; --judged-grades truncated; missing queries scored as "
            "empty rankings; nDCG: gain=") in out
    assert "give it (--max-grade ...): 3 on Quepid's 0-3 graded scale" in out
    assert "relevance level   grade > 0 is relevant for binary metrics (-l positive)" in out
    assert "given over it" not in out


def test_explicit_options_and_parameters_override_the_profile_and_say_so(cli_runner) -> None:
    code, out, _ = cli_runner("evaluate", QRELS, BM25, "-m", "nDCG(gain=linear)@10", "--profile", "quepid",
                              "--ties", "trec_eval", "--format", "json")
    assert code == 0
    data = _json(out)
    assert data["metrics"] == ["nDCG(ideal_depth=all)@10"]
    assert data["policies"]["ties"] == "trec_eval" and data["policies"]["judged_grades"] == "truncated"
    assert data["profile"]["name"] == "quepid"
    assert data["profile"]["overridden"] == [
        "ties='trec_eval' (the quepid profile: rank)",
        "nDCG(ideal_depth=all)@10: gain=linear (the quepid profile: exponential)"]


def test_an_option_at_its_default_value_given_explicitly_still_overrides(cli_runner) -> None:
    # -l 1 is the option's default, but given on the command line it overrides the quepid profile's positive
    code, out, _ = cli_runner("evaluate", QRELS, BM25, "-m", "P@5", "--profile", "quepid", "-l", "1",
                              "--format", "json")
    assert code == 0 and _json(out)["policies"]["relevance_level"] == 1.0
    assert _json(out)["profile"]["overridden"] == ["relevance_level=1.0 (the quepid profile: positive)"]


def test_without_a_profile_the_json_says_none_and_nothing_changes(cli_runner) -> None:
    code, out, _ = cli_runner("evaluate", QRELS, BM25, "-m", "nDCG@10", "--format", "json")
    assert code == 0 and _json(out)["profile"] is None and _json(out)["policies"]["ties"] == "trec_eval"
    _, plain, _ = cli_runner("evaluate", QRELS, BM25, "-m", "nDCG@10 P@5", "--format", "json")
    _, trec, _ = cli_runner("evaluate", QRELS, BM25, "-m", "nDCG@10 P@5", "--format", "json", "--profile",
                            "trec_eval")
    assert _json(plain)["aggregates"] == _json(trec)["aggregates"]


def test_unknown_profile_is_a_usage_error(cli_runner) -> None:
    code, _, err = cli_runner("evaluate", QRELS, BM25, "--profile", "quepd")
    assert code == 2
    assert "Invalid value for '--profile': 'quepd' is not one of" in err


def test_relevance_level_positive_max_grade_and_judged_grades_options(cli_runner) -> None:
    code, out, _ = cli_runner("evaluate", QRELS, BM25, "-m", "P@5 ERR@10", "-l", "positive", "--max-grade", "4",
                              "--judged-grades", "truncated", "--format", "json")
    assert code == 0
    policies = _json(out)["policies"]
    assert policies["relevance_level"] == "positive" and policies["max_grade"] == 4.0
    assert policies["judged_grades"] == "truncated"
    code, _, err = cli_runner("evaluate", QRELS, BM25, "-m", "P@5", "-l", "some")
    assert code == 2 and "expected a number or 'positive' (any grade > 0); got 'some'" in err
    code, _, err = cli_runner("evaluate", QRELS, BM25, "-m", "ERR@10", "--max-grade", "2")
    assert code == 2
    assert ("ERR@10 has the evaluation's max_grade=2 but a document has grade 3; raise the max_grade policy "
            "(--max-grade ...)") in err


# ---------------------------------------------------------------------------------------------- other commands
def test_compare_with_a_profile(cli_runner) -> None:
    code, out, _ = cli_runner("compare", QRELS, BM25, HYBRID, "-m", "nDCG@10 P@5", "--profile", "es_rank_eval",
                              "--test", "t", "--resamples", "200", "--format", "json")
    assert code == 0
    data = _json(out)
    assert data["metrics"] == ["nDCG(gain=exponential, ideal_depth=retrieved)@10", "P(denominator=retrieved)@5"]
    assert data["policies"]["ties"] == "rank"


def test_gate_rules_and_assertions_resolve_under_the_profile(cli_runner, tmp_path: Path) -> None:
    checks = tmp_path / "checks.txt"
    checks.write_text("MQ001 NDCG_CUT@10 >= 0\n", encoding="utf-8")
    code, out, _ = cli_runner("gate", QRELS, BM25, "--profile", "quepid", "--fail-if", "nDCG@10 < 0.01",
                              "--assertions", str(checks), "--format", "json")
    assert code == 0
    data = _json(out)
    assert [c["check"] for c in data["checks"]] == ["nDCG@10 < 0.01", "MQ001 nDCG(gain=exponential)@10 >= 0"]
    assert data["checks"][0]["detail"].startswith("nDCG(gain=exponential, ideal_depth=all)@10 = ")
    assert data["conventions"]["profile"]["name"] == "quepid"
    code, out, _ = cli_runner("gate", QRELS, BM25, "--profile", "quepid", "--fail-if", "nDCG@10 < 0.01")
    assert code == 0 and "profile: quepid: Quepid's built-in scorers" in out


def test_explain_with_a_profile_and_for_a_metric_without_positions(cli_runner) -> None:
    code, out, _ = cli_runner("explain", QRELS, BM25, "--query", "MQ003", "-m", "nDCG@5", "--profile", "quepid")
    assert code == 0
    assert "nDCG(gain=exponential, ideal_depth=all)@5 for query MQ003" in out
    # the policies as the flags that set them, as evaluate prints them (in Python: keywords, below)
    assert "note: profile quepid: --ties rank; -l positive; --judged-grades truncated" in out
    assert "ties='rank'" not in out
    code, out, _ = cli_runner("explain", QRELS, BM25, "--query", "MQ003", "-m", "nDCG@5", "--profile", "ranx",
                              "--format", "json")
    assert code == 0 and "profile ranx: --negative-grades nonrelevant" in _json(out)["notes"][-1]
    code, out, _ = cli_runner("explain", QRELS, BM25, "--query", "MQ003", "-m", "SetP", "--format", "json")
    assert code == 0
    data = _json(out)
    assert data["metric"] == "SetP" and data["steps"]
    assert data["notes"][0].startswith("SetP has no position-by-position form: the value is computed from the "
                                       "inputs shown, all ")
    assert data["notes"][0].endswith(" ranked documents and the totals below")


def test_profile_notes_name_options_as_flags_on_the_command_line_and_keywords_in_python(cli_runner) -> None:
    import gainscope

    code, out, _ = cli_runner("evaluate", QRELS, BM25, "-m", "nDCG@5", "--profile", "ranx")
    assert code == 0 and "its make_comparable scores missing ones 0, as -c does" in out
    code, out, _ = cli_runner("evaluate", QRELS, BM25, "-m", "nDCG@5", "--profile", "sklearn")
    assert code == 0 and "as --undefined zero does" in out
    e = gainscope.explain(QRELS, BM25, "MQ003", "nDCG@5", profile="quepid")
    assert "profile quepid: ties='rank'; relevance_level='positive'" in e.spelled_notes()[-1]
    assert "--ties rank" in e.spelled_notes("cli")[-1]
    from gainscope.metrics.profiles import PROFILES

    assert PROFILES["ranx"].as_dict()["notes"][1].endswith("as missing_queries='zero' does")


def test_report_and_plot_accept_a_profile(cli_runner, tmp_path: Path) -> None:
    report = tmp_path / "r.html"
    code, _, _ = cli_runner("report", QRELS, BM25, HYBRID, "-o", str(report), "--no-plots", "-m", "nDCG@10",
                            "--profile", "quepid", "--test", "t", "--resamples", "100")
    assert code == 0
    html = report.read_text(encoding="utf-8")
    assert "nDCG(gain=exponential, ideal_depth=all)@10" in html and "quepid: Quepid&#x27;s built-in" in html
    pytest.importorskip("matplotlib")
    code, out, err = cli_runner("plot", QRELS, BM25, HYBRID, "--kind", "cutoff", "--family", "nDCG", "--cutoffs",
                                "1,5", "--image-format", "svg", "--output-dir", str(tmp_path / "figs"),
                                "--profile", "quepid")
    assert code == 0 and out.strip().endswith(".svg")
    assert "note: profile: quepid: Quepid's built-in scorers" in err
    svg = Path(out.strip()).read_text(encoding="utf-8")
    assert "nDCG(gain=exponential, ideal_depth=all)" in svg


# ---------------------------------------------------------------------------------------------- the catalogue
def test_metrics_lists_every_metric_with_formula_reference_profiles_and_explain(cli_runner) -> None:
    from gainscope.metrics import all_metric_classes

    code, out, _ = cli_runner("metrics")
    assert code == 0
    blocks = out.split("\n\n")
    for cls in all_metric_classes():
        block = next(b for b in blocks if b.startswith(f"{cls.name}  —  "))
        for label in ("parameters", "formula", "reference", "explain"):
            assert f"\n  {label}" in block, (cls.name, label)
    ndcg = next(b for b in blocks if b.startswith("nDCG  —  "))
    assert "profile     quepid: gain=exponential, ideal_depth=all; names NDCG_CUT (ideal_depth=k)" in ndcg
    assert "parameters  @cutoff=none, gain=linear, ideal=judged, ideal_depth=k, rel=none" in ndcg
    setp = next(b for b in blocks if b.startswith("SetP  —  "))
    assert "explain     the value and the inputs it used" in setp
    code, out, _ = cli_runner("metrics", "--profiles")
    assert code == 0
    for name in ("trec_eval", "quepid", "tempoeval", "sklearn", "ranx", "es_rank_eval"):
        assert f"\n{name}  —  " in "\n" + out
    code, out, _ = cli_runner("metrics", "avgRating100@10")
    assert code == 0 and "Quepid's avgRating100" in out and "explain: position by position" in out


def test_metrics_describes_a_name_as_a_profile_reads_it(cli_runner) -> None:
    code, out, _ = cli_runner("metrics", "NDCG_CUT@10", "--profile", "quepid")
    assert code == 0 and out.startswith("nDCG(gain=exponential)@10  —  ")
    code, _, err = cli_runner("metrics", "NDCG_CUT@10")
    assert code == 2 and "unknown metric 'NDCG_CUT'. Did you mean 'NDCG'?" in err


def test_reader_notes_in_the_conventions_name_the_flags_on_the_command_line(cli_runner, tmp_path) -> None:
    """The notes printed with CLI results name --nan-score and --on-duplicate, and the profile's overrides the
    flags given; Python's conventions() keeps the keywords (issue 13 review)."""
    import warnings

    import gainscope
    from gainscope.io import read_run

    run = tmp_path / "r.run"
    run.write_text("MQ001 Q0 d1 1 2 r\nMQ001 Q0 d1 2 1 r\nMQ001 Q0 d2 3 nan r\n", encoding="utf-8")
    args = ("evaluate", QRELS, str(run), "-m", "P@5", "--on-duplicate", "first", "--nan-score", "-inf",
            "--profile", "quepid", "--ties", "trec_eval")
    code, out, _ = cli_runner(*args)
    assert code == 0
    assert "note              1 NaN score(s) replaced with -inf (--nan-score -inf)" in out
    assert "note              duplicate docs resolved with --on-duplicate first (1 row(s) dropped)" in out
    assert "given over it     --ties trec_eval (the quepid profile: rank)" in out
    _, _, err = cli_runner(*args, "--format", "csv")
    assert "#   note              1 NaN score(s) replaced with -inf (--nan-score -inf)" in err
    assert "\ue000" not in out + err
    with warnings.catch_warnings():  # the judged queries without a ranking: warned, not what this is about
        warnings.simplefilter("ignore", gainscope.errors.QueryCoverageWarning)
        warnings.simplefilter("ignore", gainscope.errors.UndefinedMetricWarning)  # quepid: missing queries = empty
        res = gainscope.evaluate(QRELS, read_run(run, on_duplicate="first", nan_score="-inf"), ["P@5"],
                                 profile="quepid", ties="trec_eval")
    conv = res.conventions()
    assert conv["notes"][:2] == ["1 NaN score(s) replaced with -inf (nan_score='-inf')",
                                 "duplicate docs resolved with on_duplicate='first' (1 row(s) dropped)"]
    assert conv["profile"]["overridden"] == ["ties='trec_eval' (the quepid profile: rank)"]
    assert "give it (max_grade=...): 3 on" in conv["profile"]["notes"][0]
