"""compare(): means, intervals, paired tests, corrections over the whole report, pairing, output formats.

The runs are built so that RR of each query is ``1 / rank`` of its one relevant document: the per-query values
are known exactly, and every statistic is checked against :mod:`gainscope.stats` and scipy on those vectors.
"""

from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pytest
from scipy import stats as sps

import gainscope
from gainscope.compare import CompareSettings, compare, compare_results
from gainscope.errors import InputError, PolicyError
from gainscope.render.compare import render_comparison
from gainscope.stats import bootstrap_ci, correct, paired_t, randomization, wilcoxon


def ranked_at(ranks: dict[str, int], name: str) -> gainscope.Run:
    """A run where query q's relevant document 'rel' is at rank ranks[q] (non-relevant 'n*' above it)."""
    data = {}
    for q, r in ranks.items():
        docs = {f"n{i}": float(100 - i) for i in range(r - 1)}
        docs["rel"] = float(100 - r + 1)
        data[q] = docs
    return gainscope.Run.from_dict(data, name=name)


QUERIES = [f"q{i}" for i in range(8)]
QRELS = gainscope.Judgments.from_dict({q: {"rel": 1, "n0": 0} for q in QUERIES})
BASE = dict(zip(QUERIES, [1, 2, 4, 1, 3, 2, 5, 1], strict=True))
BETTER = dict(zip(QUERIES, [1, 1, 2, 1, 1, 1, 2, 1], strict=True))
WORSE = dict(zip(QUERIES, [2, 2, 5, 3, 3, 4, 5, 2], strict=True))


def rr(ranks: dict[str, int]) -> np.ndarray:
    return np.array([1 / ranks[q] for q in QUERIES])


@pytest.fixture(scope="module")
def three() -> gainscope.compare.Comparison:
    runs = [ranked_at(BASE, "base"), ranked_at(BETTER, "better"), ranked_at(WORSE, "worse")]
    return compare(QRELS, runs, ["RR", "P@1"], settings=CompareSettings(resamples=2000, seed=7))


def test_means_deltas_and_counts_by_hand(three) -> None:
    # RR of base: 1 + 1/2 + 1/4 + 1 + 1/3 + 1/2 + 1/5 + 1 = 4.78333.. over 8 = 0.597916..
    assert three.row("RR", "base").mean == pytest.approx(4.783333333333333 / 8)
    better = three.row("RR", "better")
    # better - base: 0, 1/2, 1/4, 0, 2/3, 1/2, 3/10, 0 -> sum 2.216666.. / 8
    assert better.delta == pytest.approx(2.2166666666666667 / 8)
    assert better.wins_ties_losses == (5, 3, 0)
    assert better.paired == 8 and better.baseline_mean == pytest.approx(three.row("RR", "base").mean)
    assert better.relative_delta == pytest.approx(2.2166666666666667 / 4.783333333333333)
    worse = three.row("RR", "worse")
    # P@1 of worse is 0 everywhere; base has rank 1 on q0, q3, q7
    assert three.row("P@1", "worse").mean == 0.0
    assert three.row("P@1", "base").mean == pytest.approx(3 / 8)
    assert worse.wins_ties_losses == (0, 3, 5)  # q1, q4 and q6 keep their rank


def test_tests_match_stats_and_scipy(three) -> None:
    a, b = rr(BETTER), rr(BASE)
    row = three.row("RR", "better")
    assert row.p_value["t"] == pytest.approx(sps.ttest_rel(a, b).pvalue, rel=1e-12)
    assert row.statistic["t"] == pytest.approx(sps.ttest_rel(a, b).statistic, rel=1e-12)
    assert row.p_value["wilcoxon"] == wilcoxon(a, b).p_value
    assert row.p_value["randomization"] == randomization(a, b, resamples=2000, seed=7).p_value
    assert row.effect_size == pytest.approx((a - b).mean() / (a - b).std(ddof=1))
    assert (row.delta_ci_low, row.delta_ci_high) == bootstrap_ci(a - b, resamples=2000, seed=7)
    assert (row.ci_low, row.ci_high) == bootstrap_ci(a, resamples=2000, seed=7)


def test_correction_spans_every_comparison_of_the_report(three) -> None:
    rows = three.comparisons
    assert len(rows) == 4  # 2 metrics x 2 systems
    for test in ("t", "wilcoxon", "randomization", "bootstrap"):
        raw = [r.p_value[test] for r in rows]
        assert [r.p_corrected[test] for r in rows] == pytest.approx(correct(raw, "holm").tolist())
    # Holm by hand on the t-test: sorted p's times 4, 3, 2, 1, running maximum, capped at 1
    raw = sorted(r.p_value["t"] for r in rows)
    by_hand = np.minimum(1, np.maximum.accumulate(np.array(raw) * [4, 3, 2, 1]))
    assert sorted(r.p_corrected["t"] for r in rows) == pytest.approx(by_hand.tolist())
    for r in rows:
        assert r.significant == (r.p_corrected["t"] < 0.05)


def test_other_corrections_and_significance_test() -> None:
    runs = [ranked_at(BASE, "base"), ranked_at(BETTER, "better"), ranked_at(WORSE, "worse")]
    for method in ("bonferroni", "bh", "none"):
        c = compare(QRELS, runs, ["RR", "P@1"], settings=CompareSettings(correction=method, resamples=500))
        raw = [r.p_value["wilcoxon"] for r in c.comparisons]
        assert [r.p_corrected["wilcoxon"] for r in c.comparisons] == pytest.approx(correct(raw, method).tolist())
    c = compare(QRELS, runs, "RR", settings=CompareSettings(tests=("randomization",), significance="randomization",
                                                              resamples=500))
    assert set(c.row("RR", "worse").p_value) == {"randomization"}
    assert c.row("RR", "worse").significant == (c.row("RR", "worse").p_corrected["randomization"] < 0.05)


@pytest.fixture(scope="module")
def forty() -> gainscope.compare.Comparison:
    """40 queries: 'worse' pushes every relevant document down by 2-5 ranks, 'same' moves a few by one."""
    rng = np.random.default_rng(3)
    queries = [f"q{i}" for i in range(40)]
    qrels = gainscope.Judgments.from_dict({q: {"rel": 1} for q in queries})
    base = {q: int(r) for q, r in zip(queries, rng.integers(1, 3, 40), strict=True)}
    worse = {q: r + int(rng.integers(2, 6)) for q, r in base.items()}
    same = {q: r + (1 if i % 10 == 0 else 0) for i, (q, r) in enumerate(base.items())}
    return compare(qrels, [ranked_at(base, "base"), ranked_at(worse, "worse"), ranked_at(same, "same")],
                   ["RR", "P@1"], settings=CompareSettings(resamples=1000))


def test_a_significant_loss_is_found(forty) -> None:
    row = forty.row("RR", "worse")
    assert row.significant and row.delta < 0 and row.wins == 0
    assert not forty.row("RR", "same").significant


def test_seeded_intervals_are_reproducible() -> None:
    runs = [ranked_at(BASE, "base"), ranked_at(BETTER, "better")]
    one = compare(QRELS, runs, "RR", settings=CompareSettings(resamples=500, seed=1))
    two = compare(QRELS, runs, "RR", settings=CompareSettings(resamples=500, seed=1))
    other = compare(QRELS, runs, "RR", settings=CompareSettings(resamples=500, seed=2))
    assert one.to_records() == two.to_records()
    assert one.row("RR", "better").delta_ci_low != other.row("RR", "better").delta_ci_low
    bca = compare(QRELS, runs, "RR", settings=CompareSettings(resamples=500, ci_method="bca"))
    a = rr(BETTER)
    assert (bca.row("RR", "better").ci_low, bca.row("RR", "better").ci_high) == \
        bootstrap_ci(a, resamples=500, method="bca")


def test_pairing_leaves_out_queries_without_a_value_in_both_runs() -> None:
    partial = {q: r for q, r in BETTER.items() if q not in ("q2", "q5")}
    with pytest.warns(gainscope.errors.QueryCoverageWarning):
        c = compare(QRELS, [ranked_at(BASE, "base"), ranked_at(partial, "partial")], "RR",
                    missing_queries="skip", settings=CompareSettings(resamples=200))
    row = c.row("RR", "partial")
    assert row.queries == 6 and row.paired == 6
    keep = [i for i, q in enumerate(QUERIES) if q not in ("q2", "q5")]
    a, b = rr(BETTER)[keep], rr(BASE)[keep]
    assert row.delta == pytest.approx((a - b).mean())
    assert row.baseline_mean == pytest.approx(b.mean())
    assert row.p_value["t"] == pytest.approx(paired_t(a, b).p_value)
    assert len(c.notes) == 1 and "2 queries" in c.notes[0] and "q2" in c.notes[0] and "q5" in c.notes[0]
    # with the default policy the missing queries score 0 and pair
    with pytest.warns(gainscope.errors.QueryCoverageWarning):
        full = compare(QRELS, [ranked_at(BASE, "base"), ranked_at(partial, "partial")], "RR",
                       settings=CompareSettings(resamples=200))
    assert full.row("RR", "partial").paired == 8 and not full.notes


def test_undefined_values_are_not_paired() -> None:
    qrels = gainscope.Judgments.from_dict({"q0": {"rel": 1}, "q1": {"rel": 1}, "q2": {"x": 0}, "q3": {"rel": 1}})
    runs = [ranked_at({"q0": 1, "q1": 2, "q2": 1, "q3": 3}, "a"), ranked_at({"q0": 2, "q1": 2, "q2": 1, "q3": 1}, "b")]
    c = compare(qrels, runs, "AP", undefined="skip", settings=CompareSettings(resamples=200))
    row = c.row("AP", "b")  # AP is undefined for q2 (nothing relevant); with one relevant document AP = RR
    assert row.paired == 3 and "q2" in c.notes[0]
    # b - a over q0, q1, q3: -1/2, 0, +2/3
    assert row.delta == pytest.approx((-0.5 + 2 / 3) / 3)


def test_bad_requests_are_refused() -> None:
    runs = [ranked_at(BASE, "base"), ranked_at(BETTER, "better")]
    with pytest.raises(InputError, match="at least two runs"):
        compare(QRELS, runs[:1], "RR")
    with pytest.raises(InputError, match="baseline 'nope' is not among the runs: base, better"):
        compare(QRELS, runs, "RR", baseline="nope")
    with pytest.raises(InputError, match="two runs are named 'base'"):
        compare(QRELS, [runs[0], runs[0]], "RR")
    with pytest.raises(PolicyError, match="unknown test 'sign'"):
        CompareSettings(tests=("sign",))
    with pytest.raises(PolicyError, match="significance test 'wilcoxon' must be one of the tests run: t"):
        CompareSettings(tests=("t",), significance="wilcoxon")
    with pytest.raises(PolicyError, match=r"^alpha=\.\.\. must be a number between 0 and 1 \(exclusive\); got 1\.5$"):
        CompareSettings(alpha=1.5)
    with pytest.raises(PolicyError, match=r"^tests=\.\.\. names a test twice: t, t$"):
        CompareSettings(tests=("t", "t"))
    with pytest.raises(PolicyError, match="unknown correction 'sidak'"):
        CompareSettings(correction="sidak")
    one = gainscope.evaluate(QRELS, runs[0], "RR")
    other = gainscope.evaluate(QRELS, runs[1], "AP")
    with pytest.raises(InputError, match="other metrics or policies"):
        compare_results([one, other])


def test_baseline_choice_and_names() -> None:
    runs = [ranked_at(BASE, "base"), ranked_at(BETTER, "better")]
    c = compare(QRELS, runs, "RR", baseline="better", names=None, settings=CompareSettings(resamples=200))
    assert c.runs == ("better", "base") and c.row("RR", "base").delta < 0
    named = compare(QRELS, runs, "RR", names=["A", "B"], settings=CompareSettings(resamples=200))
    assert named.runs == ("A", "B")


def test_frames_json_and_csv_carry_the_same_rows(three) -> None:
    frame = three.to_polars()
    assert frame.shape[0] == 6 and {"metric", "run", "delta", "p_t_corrected", "significant"} <= set(frame.columns)
    assert frame.filter(frame["run"] == "base")["delta"].null_count() == 2
    pdf = three.to_pandas()
    assert list(pdf.columns) == frame.columns and len(pdf) == 6
    data = json.loads(render_comparison(three, "json"))
    assert data["settings"]["correction"] == "holm" and len(data["rows"]) == 6
    assert data["rows"][1]["p_t"] == three.rows[1].p_value["t"]
    rows = list(csv.DictReader(io.StringIO(render_comparison(three, "csv"))))
    assert [r["run"] for r in rows] == ["base", "better", "worse"] * 2
    assert float(rows[1]["delta"]) == three.rows[1].delta and rows[0]["delta"] == ""


def test_text_markdown_and_latex(three, forty) -> None:
    text = render_comparison(three, "table")
    assert "base (baseline)" in text and "Holm over all comparisons" in text
    line = next(li for li in render_comparison(forty, "table").splitlines() if li.startswith("│ RR") and "worse" in li)
    assert line.rstrip(" │").endswith("▼")
    md = render_comparison(three, "markdown")
    assert md.startswith("| metric | run | mean | 95% CI | delta |")
    latex = render_comparison(three, "latex")
    assert r"\begin{tabular}{lrr}" in latex and "System & RR & P@1" in latex
    assert latex.count(r"\textbf{") == 2  # the best mean of each metric
    assert r"$^{\dagger}$" not in latex.split(r"\midrule")[1].split(r"\bottomrule")[0]  # nothing significant
    body = render_comparison(forty, "latex").split(r"\midrule")[1].split(r"\bottomrule")[0]
    worse_line = next(li for li in body.splitlines() if li.startswith("worse"))
    assert worse_line.count(r"$^{\ddagger}$") == sum(1 for m in ("RR", "P@1") if forty.row(m, "worse").significant) >= 1
    assert r"$^{\dagger}$" not in body


def test_latex_escapes_names() -> None:
    runs = [ranked_at(BASE, "bm25_v1 & co"), ranked_at(BETTER, "new%")]
    latex = render_comparison(compare(QRELS, runs, "RR", settings=CompareSettings(resamples=100)), "latex")
    assert r"bm25\_v1 \& co (baseline)" in latex and r"new\%" in latex


def test_type_one_error_of_the_report_is_controlled() -> None:
    # 200 comparisons of two systems drawn from the same distribution, 30 queries each: the raw t-test rejects
    # about 5% of them; Holm over each report of 4 comparisons keeps the family-wise rate at or below 5%.
    rng = np.random.default_rng(11)
    rejected_raw = rejected_family = 0
    trials = 200
    for _ in range(trials):
        a, b = rng.random((4, 30)), rng.random((4, 30))
        p = np.array([sps.ttest_rel(a[i], b[i]).pvalue for i in range(4)])
        rejected_raw += int(np.count_nonzero(p < 0.05))
        rejected_family += int(np.any(correct(p, "holm") < 0.05))
    assert 0.02 < rejected_raw / (4 * trials) < 0.09
    assert rejected_family / trials <= 0.08
    assert not math.isnan(rejected_raw)


def test_geometric_mean_metrics_are_refused() -> None:
    with pytest.raises(PolicyError, match="GMAP is aggregated by a geometric mean"):
        compare(QRELS, [ranked_at(BASE, "base"), ranked_at(BETTER, "better")], ["GMAP", "AP"])


def test_markdown_aligns_text_left_and_numbers_right(three) -> None:
    rule = render_comparison(three, "markdown").splitlines()[1]
    # metric, run (text) | mean, CI (text), delta, delta CI (text), four p-values, d_z, W/T/L (text), sig (text)
    assert rule.split("|")[1:4] == [":---", ":---", "---:"]


@pytest.mark.parametrize("call", ["compare", "evaluate_runs", "fuse", "bounds_runs", "optimize_weights"])
@pytest.mark.parametrize("one", ["path", "run", "dict"])
def test_one_run_where_a_list_is_expected_is_refused(tmp_path, call: str, one: str) -> None:
    """A path given as ``runs`` was iterated character by character ("no such file: 'b'"); a Run or a dict
    ``{query_id: {doc_id: score}}`` likewise. Each is refused by name before anything is read."""
    from gainscope.bounds import bounds_runs

    path = tmp_path / "base.run"
    path.write_text("q1 Q0 d1 1 1.0 base\n", encoding="utf-8")
    given = {"path": str(path), "run": ranked_at(BASE, "base"), "dict": {"q1": {"d1": 1.0}}}[one]
    functions = {"compare": lambda: compare(QRELS, given, "RR"),
                 "evaluate_runs": lambda: gainscope.evaluate_runs(QRELS, given, "RR"),
                 "fuse": lambda: gainscope.fuse(given),
                 "bounds_runs": lambda: bounds_runs(QRELS, given, "RR"),
                 "optimize_weights": lambda: gainscope.optimize_weights(QRELS, given, "RR", ["q1"])}
    shown = {"path": f"str {str(path)!r}", "run": "Run", "dict": "dict"}[one]
    with pytest.raises(InputError) as err:
        functions[call]()
    assert str(err.value) == f"runs takes a list of runs, e.g. runs=['bm25.run', 'dense.run']; got one {shown}"


@pytest.mark.parametrize("names", ["ab", [1, 2], ["base", ""]])
def test_names_that_are_not_a_list_of_names_are_refused(names: object) -> None:
    """``names="ab"`` named the two runs 'a' and 'b'; ``names=[1, 2]`` gave runs named by integers."""
    runs = [ranked_at(BASE, "base"), ranked_at(BETTER, "better")]
    with pytest.raises(InputError) as err:
        compare(QRELS, runs, "RR", names=names)  # type: ignore[arg-type]
    assert str(err.value) == f"names takes one non-empty name per run, e.g. names=['bm25', 'dense']; got {names!r}"
