"""The CI gate: rule grammar, per-query assertions, checks against hand-computed values, exit codes, JUnit."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import gainscope
from gainscope.compare import CompareSettings
from gainscope.errors import FormatError, MetricError, PolicyError
from gainscope.gate import gate, parse_assertion, parse_rule, read_assertions
from gainscope.render.gate import render_gate, render_junit

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_rule_grammar() -> None:
    r = parse_rule("ndcg_cut_10 < 0.35".replace("ndcg_cut_10", "nDCG@10"))
    assert (r.kind, r.metric, r.op, r.threshold, r.needs_baseline) == ("value", "nDCG@10", "<", 0.35, False)
    r = parse_rule(" delta( ndcg@10 ) <= -0.01 ")
    assert (r.kind, r.metric, r.op, r.threshold) == ("delta", "nDCG@10", "<=", -0.01)
    r = parse_rule("reldelta(AP) < -2%")
    assert (r.kind, r.threshold) == ("reldelta", -0.02)
    assert parse_rule("reldelta(AP) < -0.02").threshold == -0.02
    assert parse_rule("reldelta(AP) <= -1").threshold == -1.0  # a run whose mean falls to 0 fires it
    r = parse_rule("significant_loss(P(rel=2)@5)")
    assert (r.kind, r.metric, r.op) == ("significant_loss", "P(rel=2)@5", None)
    assert parse_rule("nDCG(gain=exponential)@10 != 1e-3").threshold == 0.001


@pytest.mark.parametrize(("text", "message"), [
    ("nDCG@10 < -0.01", "can never fire, so it would always pass: nDCG@10 lies in \\[0, 1\\]. To fail on a "
                        "change against the baseline, "
                        "write 'delta\\(nDCG@10\\) < -0.01'"),
    ("P@5 > 1", "can never fire"),
    ("RR < 0", "can never fire"),
    ("delta(nDCG@10) < -1.5", "a change of nDCG@10 lies in \\[-1, 1\\]"),
    # a relative change of a mean >= 0 is >= -100%: "-2" (a fraction, -200%) never fires; "-2%" was meant
    ("reldelta(AP) < -2", "can never fire, so it would always pass: a relative change of AP \\(a fraction: -1 is "
                          "-100%\\) lies in \\[-1, inf\\]. A threshold without '%' is a fraction "
                          "\\(-0.02 is -2%\\): to mean -2 percent, write 'reldelta\\(AP\\) < -2%'"),
    ("reldelta(nDCG@10) <= -150%", "a relative change of nDCG@10 .* lies in \\[-1, inf\\]\\.$"),
    ("delta(AP) < -2%", "a percentage only applies to reldelta"),
    ("AP < 10%", "a percentage only applies to reldelta"),
    ("significant_loss(AP) < 0.1", "significant_loss\\(...\\) takes no comparison"),
    ("nDCG@10 lower than 0.3", "cannot read the rule"),
    # 1e400 reads as inf, which every value is below: a gate that always failed (or never fired)
    ("P@1 < 1e400", "cannot read the rule 'P@1 < 1e400': 1e400 is beyond the range of a number; give a finite "
                    "threshold"),
    ("reldelta(AP) < -1e400%", "-1e400 is beyond the range of a number"),
])
def test_bad_rules_are_refused(text: str, message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        parse_rule(text)


def test_unknown_metric_in_a_rule() -> None:
    with pytest.raises(MetricError):
        parse_rule("nDGC@10 < 0.3")


def test_assertions_file(tmp_path: Path) -> None:
    f = tmp_path / "checks.txt"
    f.write_text("# per-query floors\n\nq12  nDCG@10 >= 0.8   # the head query\nq7 RR == 1\n", encoding="utf-8")
    got = read_assertions(f)
    assert [(a.query_id, a.metric, a.op, a.threshold) for a in got] == [("q12", "nDCG@10", ">=", 0.8),
                                                                       ("q7", "RR", "==", 1.0)]
    assert got[0].where == f"{f}:3"
    # a '#' inside a query id is the id's (a comment starts a line or follows a space)
    f.write_text("q#1 RR == 1\t# exact\n  # indented comment\n", encoding="utf-8")
    assert [(a.query_id, a.metric) for a in read_assertions(f)] == [("q#1", "RR")]
    f.write_text("q1 nDCG@10 >= 0.5\nq2 nDCG@10 at least 0.5\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"checks.txt:2: cannot read the assertion"):
        read_assertions(f)
    with pytest.raises(PolicyError, match="expected 'QUERY_ID METRIC OP NUMBER'"):
        parse_assertion("q1")


def ranked(ranks: dict[str, int], name: str) -> gainscope.Run:
    """Query q's relevant document 'rel' at rank ranks[q]: RR = 1 / rank, nDCG@10 = 1 / log2(rank + 1)."""
    return gainscope.Run.from_dict({q: {**{f"n{i}": 100.0 - i for i in range(r - 1)}, "rel": 100.0 - r + 1}
                                    for q, r in ranks.items()}, name=name)


QUERIES = [f"q{i}" for i in range(30)]
QRELS = gainscope.Judgments.from_dict({q: {"rel": 1} for q in QUERIES})
BASE = {q: 1 + (i % 3) for i, q in enumerate(QUERIES)}          # ranks 1, 2, 3, 1, 2, 3, ...
NEW = {q: r + (1 if i % 2 else 0) for i, (q, r) in enumerate(BASE.items())}  # every other query one lower


@pytest.fixture(scope="module")
def results() -> list[gainscope.Results]:
    return gainscope.evaluate_runs(QRELS, [ranked(NEW, "new"), ranked(BASE, "base")], ["RR", "nDCG@10"])


def test_checks_against_hand_values(results) -> None:
    new, base = results
    # RR of base: (1 + 1/2 + 1/3) / 3 = 0.61111; of new, per block of six queries (ranks 1,3,3,2,2,4):
    # (1 + 1/3 + 1/3 + 1/2 + 1/2 + 1/4) / 6 = 0.48611; delta = -0.125
    rules = [parse_rule("RR < 0.5"), parse_rule("RR < 0.45"), parse_rule("delta(RR) < -0.1"),
             parse_rule("delta(RR) < -0.2"), parse_rule("reldelta(RR) < -20%"), parse_rule("reldelta(RR) < -25%"),
             parse_rule("significant_loss(RR)")]
    asserts = [parse_assertion("q0 RR == 1"), parse_assertion("q1 RR >= 0.5"), parse_assertion("q99 RR > 0")]
    report = gate(new, rules, asserts, baseline=base, settings=CompareSettings(resamples=500))
    verdicts = {c.text: c.passed for c in report.checks}
    assert verdicts == {"RR < 0.5": False, "RR < 0.45": True, "delta(RR) < -0.1": False, "delta(RR) < -0.2": True,
                        # -0.125 / 0.61111 = -20.45 %
                        "reldelta(RR) < -20%": False, "reldelta(RR) < -25%": True,
                        "significant_loss(RR)": False,  # 15 of 30 queries lose: clearly significant
                        "q0 RR == 1": True, "q1 RR >= 0.5": False, "q99 RR > 0": False}
    check = {c.text: c for c in report.checks}
    assert check["RR < 0.5"].value == pytest.approx(0.486111111111)
    assert check["delta(RR) < -0.1"].value == pytest.approx(-0.125)
    assert check["reldelta(RR) < -20%"].value == pytest.approx(-0.125 / 0.611111111111)
    assert "q1: RR = 0.3333" in check["q1 RR >= 0.5"].detail
    assert "not evaluated" in check["q99 RR > 0"].detail
    assert not report.passed and len(report.failures) == 6


def test_gate_needs_a_baseline_for_deltas_and_evaluated_metrics(results) -> None:
    new, _ = results
    with pytest.raises(PolicyError, match="compares with a baseline; give one"):
        gate(new, [parse_rule("delta(RR) < 0")])
    with pytest.raises(PolicyError, match="AP not evaluated"):
        gate(new, [parse_rule("AP < 0.5")])
    assert gate(new, [parse_rule("RR < 0.1")]).passed


def test_undefined_values_fail_assertions() -> None:
    qrels = gainscope.Judgments.from_dict({"q1": {"a": 1}, "q2": {"b": 0}})
    run = gainscope.Run.from_dict({"q1": {"a": 1.0}, "q2": {"b": 1.0}})
    res = gainscope.evaluate(qrels, run, "AP", undefined="skip")
    report = gate(res, [], [parse_assertion("q2 AP >= 0"), parse_assertion("q1 AP >= 1")])
    assert [c.passed for c in report.checks] == [False, True]
    assert "undefined" in report.checks[0].detail


def test_renderings(results) -> None:
    new, base = results
    report = gate(new, [parse_rule("delta(RR) < -0.1"), parse_rule("RR < 0.1")], baseline=base,
                  settings=CompareSettings(resamples=200))
    text = render_gate(report)
    assert text.splitlines()[0] == "gate FAILED: 1 of 2 checks failed for new against base"
    assert text.splitlines()[1].startswith("  FAIL  delta(RR) < -0.1")
    data = json.loads(render_gate(report, "json"))
    assert data["passed"] is False and data["checks"][0]["value"] == pytest.approx(-0.125)
    assert "| ❌ | rule | `delta(RR) < -0.1` |" in render_gate(report, "markdown")
    suite = ET.fromstring(render_junit(report))
    assert suite.get("tests") == "2" and suite.get("failures") == "1"
    failed = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == ["delta(RR) < -0.1"]


# ---------------------------------------------------------------------------------------------- command line
def write_run(path: Path, ranks: dict[str, int], tag: str) -> Path:
    lines = []
    for q, r in ranks.items():
        docs = [f"n{i}" for i in range(r - 1)] + ["rel"]
        lines += [f"{q} Q0 {d} {k} {100 - k} {tag}" for k, d in enumerate(docs, start=1)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 rel 1\n" for q in QUERIES), encoding="utf-8")
    return {"qrels": str(qrels), "new": str(write_run(tmp_path / "new.run", NEW, "new")),
            "base": str(write_run(tmp_path / "base.run", BASE, "base")), "dir": str(tmp_path)}


def test_cli_exit_codes(cli_runner, files) -> None:
    code, out, _ = cli_runner("gate", files["qrels"], files["new"], "--baseline-run", files["base"],
                              "--fail-if", "delta(RR) < -0.2", "--resamples", "200")
    assert code == 0 and out.startswith("gate passed: the 1 check holds for new against base")
    code, out, _ = cli_runner("gate", files["qrels"], files["new"], "--baseline-run", files["base"],
                              "--fail-if", "delta(RR) < -0.1", "--fail-on-significant-loss", "-m", "nDCG@10",
                              "--resamples", "200")
    assert code == 1
    assert "FAIL  delta(RR) < -0.1" in out and "FAIL  significant_loss(RR)" in out
    assert "significant_loss(nDCG@10)" in out
    code, _, err = cli_runner("gate", files["qrels"], files["new"], "--baseline-run", files["base"],
                              "--fail-if", "nDCG@10 < -0.01")
    assert code == 2 and "write 'delta(nDCG@10) < -0.01'" in err
    code, _, err = cli_runner("gate", files["qrels"], files["new"], "--fail-if", "delta(RR) < 0")
    assert code == 2 and "give one (--baseline-run FILE)" in err
    code, _, err = cli_runner("gate", files["qrels"], files["new"])
    assert code == 2 and "nothing to check" in err
    # --fail-on-significant-loss without any metric said "nothing to check: give ... --fail-on-significant-loss"
    code, _, err = cli_runner("gate", files["qrels"], files["new"], "--baseline-run", files["base"],
                              "--fail-on-significant-loss")
    assert code == 2 and ("--fail-on-significant-loss checks the metrics the gate evaluates, and it evaluates none: "
                          "name them with -m (e.g. -m nDCG@10) or in --fail-if rules") in err


def test_cli_assertions_and_junit(cli_runner, files) -> None:
    checks = Path(files["dir"]) / "checks.txt"
    checks.write_text("q0 RR == 1\nq1 RR >= 0.5\n", encoding="utf-8")
    junit = Path(files["dir"]) / "gate.xml"
    code, out, _ = cli_runner("gate", files["qrels"], files["new"], "--assertions", str(checks), "--junit",
                              str(junit), "-f", "json")
    assert code == 1
    data = json.loads(out)
    assert [c["passed"] for c in data["checks"]] == [True, False]  # in the order given (text puts failures first)
    assert data["checks"][1]["where"] == f"{checks}:2"
    assert ET.parse(junit).getroot().get("failures") == "1"
    checks.write_text("q0 RR is 1\n", encoding="utf-8")
    code, _, err = cli_runner("gate", files["qrels"], files["new"], "--assertions", str(checks))
    assert code == 3 and "checks.txt:1" in err


def test_cli_gate_on_the_bundled_examples(cli_runner) -> None:
    code, out, _ = cli_runner("gate", str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "hybrid.run"), "--baseline-run",
                              str(EXAMPLES / "bm25.run"), "--fail-if", "delta(nDCG@10) < -0.01", "--fail-if",
                              "nDCG@10 < 0.5", "--resamples", "200")
    assert code == 0, out
    assert np.isclose(float(out.split("delta = ")[1].split()[0]), 0.3063, atol=1e-4)


def test_trec_eval_names_in_rules_and_assertions() -> None:
    assert parse_rule("map < 0.3").metric == "AP"
    assert parse_rule("delta(ndcg_cut.10) < -0.01").metric == "nDCG@10"
    assert parse_assertion("q1 P.10 >= 0.5").metric == "P@10"
    with pytest.raises(PolicyError, match="names 2 metrics"):
        parse_rule("P.5,10 < 0.3")


def test_a_value_rule_on_an_undefined_mean_fails() -> None:
    qrels = gainscope.Judgments.from_dict({"q1": {"a": 0}})
    run = gainscope.Run.from_dict({"q1": {"a": 1.0}})
    res = gainscope.evaluate(qrels, run, "AP", undefined="skip")
    report = gate(res, [parse_rule("AP < 0.3")])
    assert not report.passed and "undefined" in report.checks[0].detail


def test_the_explanation_uses_the_means_over_the_paired_queries() -> None:
    with pytest.warns(gainscope.errors.QueryCoverageWarning):
        partial = gainscope.evaluate(QRELS, ranked({q: r for q, r in NEW.items() if q != "q1"}, "new"), "RR",
                                     missing_queries="skip")
    base_skip = gainscope.evaluate(QRELS, ranked(BASE, "base"), "RR", missing_queries="skip")
    report = gate(partial, [parse_rule("delta(RR) < -0.5")], baseline=base_skip,
                  settings=CompareSettings(resamples=100))
    row = report.comparison.row("RR", "new")
    assert row.paired == 29 and row.paired_mean - row.baseline_mean == pytest.approx(row.delta)
    assert f"run {row.paired_mean:.4f}, baseline {row.baseline_mean:.4f} over them" in report.checks[0].detail


def test_assertion_file_errors_name_the_place_once(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("q1 AP >> 1\n", encoding="utf-8")
    with pytest.raises(FormatError) as info:
        read_assertions(f)
    assert str(info.value).count(f"{f}:1") == 1


def test_equality_allows_floating_point_noise() -> None:
    from gainscope.gate import OPS

    assert OPS["=="](0.1 + 0.2, 0.3) and not OPS["!="](0.1 + 0.2, 0.3)
    assert not OPS["=="](0.3001, 0.3)


def test_cli_settings_out_of_range_are_named_as_options(cli_runner, files) -> None:
    """``--alpha 0`` said "alpha must be ..." and ``--test t --test t`` "a test is named twice in ['t', 't']"."""
    code, _, err = cli_runner("gate", files["qrels"], files["new"], "--baseline-run", files["base"],
                              "--fail-on-significant-loss", "-m", "RR", "--alpha", "0")
    assert code == 2 and "error: --alpha must be a number between 0 and 1 (exclusive); got 0.0" in err
    code, _, err = cli_runner("gate", files["qrels"], files["new"], "--baseline-run", files["base"],
                              "--fail-on-significant-loss", "-m", "RR", "--test", "t", "--test", "t")
    assert code == 2 and "error: --test names a test twice: t, t" in err
