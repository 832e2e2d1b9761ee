"""Label and system-ranking agreement: every statistic against hand arithmetic on small vectors, Krippendorff's
published examples, scipy as a cross-check for Kendall and Spearman, and the ``agreement`` command on files."""

from __future__ import annotations

import json
import math
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps
from tests.helpers import invoke as invoke_command

import gainscope
from gainscope.agreement import (
    agreement,
    binary_kappa,
    cohen_kappa,
    concordance,
    confusion_matrix,
    kendall_tau,
    krippendorff_alpha,
    krippendorff_alpha_data,
    label_agreement,
    observed_agreement,
    ranking_agreement,
    spearman_rho,
    tau_ap,
)
from gainscope.cli.agreement import agreement_cmd
from gainscope.errors import InconsistentInputError, InputError, PolicyError

# Ten pairs on a 0-2 scale. Confusion (rows a, columns b):  a=0: [2, 1, 0]   a=1: [0, 1, 1]   a=2: [1, 1, 3]
# row sums r = (3, 2, 5), column sums c = (3, 3, 4), n = 10
A = [0, 0, 0, 1, 1, 2, 2, 2, 2, 2]
B = [0, 0, 1, 1, 2, 1, 2, 2, 2, 0]


# ---------------------------------------------------------------------------------------------- kappa
def test_confusion_matrix_and_observed_agreement() -> None:
    cats, m = confusion_matrix(A, B)
    assert cats == (0, 1, 2)
    assert m.tolist() == [[2, 1, 0], [0, 1, 1], [1, 1, 3]]
    assert observed_agreement(A, B) == pytest.approx(0.6)  # (2 + 1 + 3) / 10
    cats, m = confusion_matrix(A, B, [0, 1, 2, 3])  # an unused grade gets an empty row and column
    assert cats == (0, 1, 2, 3) and m[3].sum() == 0 and m[:, 3].sum() == 0
    with pytest.raises(InputError, match=r"a has grade\(s\) \[2\] outside the categories \[0, 1\]"):
        confusion_matrix(A, B, [0, 1])
    with pytest.raises(InputError, match="one value per pair"):
        confusion_matrix([0, 1], [0])


def test_unweighted_kappa_by_hand() -> None:
    k = cohen_kappa(A, B)
    # p_o = 6/10; p_e = (3*3 + 2*3 + 5*4) / 100 = 0.35; kappa = (0.6 - 0.35) / (1 - 0.35) = 0.25 / 0.65 = 5/13
    assert k.value == pytest.approx(5 / 13)
    assert k.observed == pytest.approx(0.4) and k.expected == pytest.approx(0.65) and k.n == 10
    assert k.defined and k.reason == "" and float(k) == k.value


def test_weighted_kappa_worked_example() -> None:
    # linear w = |i - j| / 2: w01 = w12 = 1/2, w02 = 1
    # observed: cells (0,1), (1,2), (2,1) at 1/2 and (2,0) at 1 -> 2.5 / 10 = 0.25
    # expected: sum w r_i c_j / 100 = (9/2 + 12 + 6/2 + 8/2 + 15 + 15/2) / 100 = 46 / 100
    # kappa = 1 - 0.25 / 0.46 = 21/46
    lin = cohen_kappa(A, B, weights="linear")
    assert lin.value == pytest.approx(21 / 46)
    assert (lin.observed, lin.expected) == (pytest.approx(0.25), pytest.approx(0.46))
    # quadratic w = ((i - j) / 2)^2: w01 = w12 = 1/4, w02 = 1
    # observed: (1/4 + 1/4 + 1 + 1/4) / 10 = 0.175; expected: (9/4 + 12 + 6/4 + 8/4 + 15 + 15/4) / 100 = 0.365
    # kappa = 1 - 0.175 / 0.365 = 38/73
    assert cohen_kappa(A, B, weights="quadratic").value == pytest.approx(38 / 73)
    with pytest.raises(PolicyError, match="unknown kappa weighting 'cubic'"):
        cohen_kappa(A, B, weights="cubic")  # type: ignore[arg-type]


def test_weights_follow_category_indices() -> None:
    a, b = [0, 1, 3, 3], [0, 3, 3, 1]
    # categories seen: (0, 1, 3) -> indices 0, 1, 2, k = 3; margins r = c = (1, 1, 2), n = 4
    # observed: (1,2) and (2,1) at 1/2 -> 1 / 4; expected: (1/2 + 2 + 1/2 + 1 + 2 + 1) / 16 = 7/16
    # kappa = 1 - (1/4) / (7/16) = 3/7
    assert cohen_kappa(a, b, weights="linear").value == pytest.approx(3 / 7)
    # the whole scale (0, 1, 2, 3): 1 and 3 are two steps apart, w = |i - j| / 3
    # observed: (1,3) and (3,1) at 2/3 -> (4/3) / 4 = 1/3
    # expected: (1/3 + 2 + 1/3 + 4/3 + 2 + 4/3) / 16 = (22/3) / 16 = 11/24; kappa = 1 - (1/3) / (11/24) = 3/11
    assert cohen_kappa(a, b, weights="linear", categories=[0, 1, 2, 3]).value == pytest.approx(3 / 11)
    # unweighted kappa does not depend on unused categories
    assert cohen_kappa(a, b, categories=[0, 1, 2, 3]).value == pytest.approx(cohen_kappa(a, b).value)


def test_binarised_kappa() -> None:
    # at >= 2: a -> 0 0 0 0 0 1 1 1 1 1, b -> 0 0 0 0 1 0 1 1 1 0; confusion [[4, 1], [2, 3]]
    # p_o = 7/10; r = (5, 5), c = (6, 4): p_e = (30 + 20) / 100 = 0.5; kappa = (0.7 - 0.5) / 0.5 = 0.4
    k = binary_kappa(A, B)
    assert k.value == pytest.approx(0.4)
    assert k.name == "Cohen's kappa, binarised at grade >= 2"
    # at >= 1: a -> 0 0 0 1 1 1 1 1 1 1, b -> 0 0 1 1 1 1 1 1 1 0; confusion [[2, 1], [1, 6]]
    # p_o = 0.8; r = (3, 7), c = (3, 7): p_e = (9 + 49) / 100 = 0.58; kappa = 0.22 / 0.42 = 11/21
    assert binary_kappa(A, B, threshold=1).value == pytest.approx(11 / 21)
    with pytest.raises(PolicyError, match="threshold must be a finite number"):
        binary_kappa(A, B, threshold=math.nan)


def test_perfect_agreement_and_systematic_disagreement() -> None:
    for weights in (None, "linear", "quadratic"):
        assert cohen_kappa(A, A, weights=weights).value == 1.0  # type: ignore[arg-type]
    for level in ("nominal", "ordinal", "interval"):
        assert krippendorff_alpha(A, A, level=level).value == 1.0  # type: ignore[arg-type]
    a, b = [0, 1, 0, 1], [1, 0, 1, 0]
    # p_o = 0, p_e = (2*2 + 2*2) / 16 = 0.5: kappa = (0 - 0.5) / 0.5 = -1
    assert cohen_kappa(a, b).value == pytest.approx(-1.0)
    # o = C + C^T = [[0, 4], [4, 0]], n_0 = n_1 = 4, n = 8: alpha = 1 - (n - 1) 2 o_01 / (2 n_0 n_1) = 1 - 7 * 8 / 32
    assert krippendorff_alpha(a, b).value == pytest.approx(-0.75)


def test_one_category_is_nan_with_a_reason() -> None:
    k = cohen_kappa([2, 2, 2], [2, 2, 2])
    assert math.isnan(k.value) and not k.defined
    assert k.reason == "every compared grade is 2 in both label sets: chance agreement is complete and kappa is 0/0"
    assert k.observed == 0 and k.expected == 0
    assert math.isnan(cohen_kappa([2, 2], [2, 2], weights="quadratic", categories=[0, 1, 2, 3]).value)
    b = binary_kappa([2, 3, 3], [3, 2, 2])  # all relevant at >= 2, though the grades differ
    assert math.isnan(b.value) and "every compared pair is relevant at grade >= 2" in b.reason
    alpha = krippendorff_alpha([1, 1], [1, 1], level="ordinal")
    assert math.isnan(alpha.value) and alpha.reason.startswith("every pairable value is 1")
    # one rater constant, the other not: defined. r = (0, 4), c = (1, 3): p_o = 3/4 = p_e -> kappa 0
    assert cohen_kappa([1, 1, 1, 1], [0, 1, 1, 1]).value == pytest.approx(0.0)


# ---------------------------------------------------------------------------------------------- alpha
def test_krippendorff_alpha_by_hand() -> None:
    # o = C + C^T = [[4, 1, 1], [1, 2, 2], [1, 2, 6]]; n_c = (6, 5, 9), n = 20
    # nominal: alpha = 1 - (n - 1) sum_{c != k} o_ck / sum_{c != k} n_c n_k = 1 - 19 * 8 / (400 - 142) = 53/129
    assert krippendorff_alpha(A, B, level="nominal").value == pytest.approx(53 / 129)
    # ordinal: d(0,1) = 6/2 + 5/2 = 5.5, d(1,2) = 5/2 + 9/2 = 7, d(0,2) = 6/2 + 5 + 9/2 = 12.5
    # observed: 2 (1 * 30.25 + 1 * 156.25 + 2 * 49) = 569
    # expected: 2 (30 * 30.25 + 54 * 156.25 + 45 * 49) = 23100; alpha = 1 - 19 * 569 / 23100 = 12289/23100
    ordinal = krippendorff_alpha(A, B, level="ordinal")
    assert ordinal.value == pytest.approx(12289 / 23100)
    assert ordinal.n == 20
    assert ordinal.observed == pytest.approx(569 / 20) and ordinal.expected == pytest.approx(23100 / (20 * 19))
    # interval: d2 = 1, 1, 4; observed 2 (1 + 4 + 2) = 14, expected 2 (30 + 216 + 45) = 582; 1 - 19 * 14 / 582
    assert krippendorff_alpha(A, B, level="interval").value == pytest.approx(158 / 291)
    with pytest.raises(PolicyError, match="unknown level of measurement 'ratio'"):
        krippendorff_alpha(A, B, level="ratio")  # type: ignore[arg-type]


def test_krippendorff_2011_worked_examples() -> None:
    """Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", sections A, B and C-E."""
    # A: binary, two observers: o_01 = 4, n_0 = 14, n_1 = 6: alpha = 1 - 19 * 4 / 84 = 0.095
    a = [0, 1, 0, 0, 0, 0, 0, 0, 1, 0]
    b = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]
    assert krippendorff_alpha(a, b).value == pytest.approx(1 - 19 * 4 / 84)
    assert round(krippendorff_alpha(a, b).value, 3) == 0.095
    # B: nominal, two observers, values a..e coded 1..5: alpha = 0.692
    code = {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}
    a = [code[v] for v in "aabbdcccedda"]
    b = [code[v] for v in "babbbccceddd"]
    assert round(krippendorff_alpha(a, b).value, 3) == 0.692
    # C-E: four observers, twelve units, missing values (units x coders here; the paper prints coders x units)
    nan = math.nan
    data = np.array([[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
                     [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
                     [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
                     [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]).T
    assert round(krippendorff_alpha_data(data, level="nominal").value, 3) == 0.743
    assert round(krippendorff_alpha_data(data, level="ordinal").value, 3) == 0.815
    assert round(krippendorff_alpha_data(data, level="interval").value, 3) == 0.849
    # two coders: the matrix form and the vector form agree
    pairs = np.column_stack([A, B]).astype(float)
    for level in ("nominal", "ordinal", "interval"):
        assert krippendorff_alpha_data(pairs, level=level).value == pytest.approx(  # type: ignore[arg-type]
            krippendorff_alpha(A, B, level=level).value)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="no unit has values from two coders"):
        krippendorff_alpha_data([[1, nan], [nan, 2]])


# ---------------------------------------------------------------------------------------------- rank correlations
X = [0.5, 0.4, 0.4, 0.2, 0.1]  # systems s0..s4; s1 and s2 tie under x
Y = [0.45, 0.5, 0.3, 0.3, 0.1]  # s2 and s3 tie under y


def test_kendall_tau_b_hand_count() -> None:
    # pairs: (0,1) D; (0,2) (0,3) (0,4) C; (1,2) tied in x; (1,3) (1,4) C; (2,3) tied in y; (2,4) (3,4) C
    c = concordance(X, Y)
    assert (c.concordant, c.discordant, c.ties_x, c.ties_y, c.ties_both, c.pairs) == (7, 1, 1, 1, 0, 10)
    # tau-b = (7 - 1) / sqrt((10 - 1)(10 - 1)) = 6/9
    tau = kendall_tau(X, Y)
    assert tau.value == pytest.approx(2 / 3)
    assert tau.detail == "tau-b: 7 concordant, 1 discordant of 10 pairs; 1 tied in x, 1 tied in y"
    # cross-check only: scipy's default is tau-b too
    assert tau.value == pytest.approx(sps.kendalltau(X, Y).statistic)
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=12), rng.integers(0, 4, size=12).astype(float)
    assert kendall_tau(x, y).value == pytest.approx(sps.kendalltau(x, y).statistic)


def test_spearman_rho_with_ties() -> None:
    # average ranks x: (5, 3.5, 3.5, 2, 1), y: (4, 5, 2.5, 2.5, 1); centred: (2, .5, .5, -1, -2), (1, 2, -.5, -.5, -2)
    # sum of products 7.25, sums of squares 9.5 and 9.5: rho = 7.25 / 9.5 = 29/38
    assert spearman_rho(X, Y).value == pytest.approx(29 / 38)
    assert spearman_rho(X, Y).value == pytest.approx(sps.spearmanr(X, Y).statistic)


def test_tau_ap_top_swap_costs_more_than_bottom_swap() -> None:
    truth = [4, 3, 2, 1]  # A > B > C > D
    top = [3, 4, 2, 1]  # B > A > C > D
    bottom = [4, 3, 1, 2]  # A > B > D > C
    # top swap, walking B A C D against the truth: A: 0/1, C: 2/2, D: 3/3 -> 2/3 * 2 - 1 = 1/3 (same the other way)
    # bottom swap, walking A B D C: B: 1/1, D: 2/2, C: 2/3 -> 2/3 * 8/3 - 1 = 7/9 (same the other way)
    assert tau_ap(truth, top).value == pytest.approx(1 / 3)
    assert tau_ap(truth, bottom).value == pytest.approx(7 / 9)
    # Kendall's tau sees one discordant pair of 6 in both: (5 - 1) / 6
    assert kendall_tau(truth, top).value == pytest.approx(2 / 3) == kendall_tau(truth, bottom).value
    assert tau_ap(truth, truth).value == 1.0 and tau_ap(truth, truth[::-1]).value == -1.0


def test_tau_ap_directions_and_ties() -> None:
    x, y = [4, 3, 2, 1], [2, 4, 3, 1]  # x: A B C D, y: B C A D
    # walking y with x as reference: C: {B} above in x -> 1/1; A: {B, C}, neither above A in x -> 0/2; D: 3/3
    # -> 2/3 (1 + 0 + 1) - 1 = 1/3. Walking x with y as reference: B: {A} -> 0; C: {A, B}, B above -> 1/2; D: 1
    # -> 2/3 (0 + 1/2 + 1) - 1 = 0. Symmetric: 1/6
    assert tau_ap(x, y, symmetric=False).value == pytest.approx(1 / 3)
    assert tau_ap(y, x, symmetric=False).value == pytest.approx(0.0)
    assert tau_ap(x, y).value == pytest.approx(1 / 6)
    # ties (tau_AP-b): x: s0 > {s1, s2} > s3 > s4; y: s1 > s0 > {s2, s3} > s4
    # walking y (its first group {s1} is not walked), x as reference, only systems strictly above in y count:
    #   s0: {s1} -> 0/1; s2: {s1, s0}, s1 ties s2 in x -> 1/2; s3: {s1, s0} -> 2/2; s4: 4/4 -> mean 5/8 -> 1/4
    # walking x (first group {s0}), y as reference:
    #   s1: {s0} -> 0/1; s2: {s0} -> 1/1; s3: {s0, s1, s2}, s2 ties s3 in y -> 2/3; s4: 4/4 -> mean 2/3 -> 1/3
    # symmetric: (1/4 + 1/3) / 2 = 7/24
    assert tau_ap(X, Y, symmetric=False).value == pytest.approx(1 / 4)
    assert tau_ap(Y, X, symmetric=False).value == pytest.approx(1 / 3)
    assert tau_ap(X, Y).value == pytest.approx(7 / 24)
    # means equal up to rounding noise are ties
    assert kendall_tau([0.1 + 0.2, 0.3, 0.1], [1, 2, 0]).detail.endswith("1 tied in x, 0 tied in y")


def test_rank_correlation_sizes_and_undefined_cases() -> None:
    with pytest.raises(InputError, match="tau_AP needs at least 3 systems; got 2"):
        tau_ap([1, 2], [1, 2])
    with pytest.raises(InputError, match="needs at least 2 systems; got 1"):
        kendall_tau([1], [1])
    with pytest.raises(InputError, match="needs at least 2 systems; got 1"):
        spearman_rho([1], [1])
    flat = kendall_tau([0.5, 0.5, 0.5], [1, 2, 3])
    assert math.isnan(flat.value) and flat.reason == "all 3 systems tie in x: tau-b is 0/0"
    assert tau_ap([1, 2, 3], [7, 7, 7]).reason == "all 3 systems tie in y: tau_AP is undefined"
    assert math.isnan(spearman_rho([1, 2, 3], [7, 7, 7]).value)
    two = ranking_agreement("RR", ["s1", "s2"], [0.5, 0.2], [0.4, 0.1])
    assert two.kendall.value == 1.0 and math.isnan(two.tau_ap.value)
    assert two.tau_ap.reason == "tau_AP needs at least 3 systems; got 2"


def test_leaderboards_share_ranks_on_ties() -> None:
    r = ranking_agreement("AP", ["a", "b", "c", "d"], [0.3, 0.5, 0.3, 0.1], [0.1, 0.2, 0.3, 0.4])
    assert r.leaderboard("a") == [(1, "b", 0.5), (2, "a", 0.3), (2, "c", 0.3), (4, "d", 0.1)]
    assert [s for _, s, _ in r.leaderboard("b")] == ["d", "c", "b", "a"]


# ---------------------------------------------------------------------------------------------- judgments
HUMAN = {"q1": {"d1": 0, "d2": 1, "d3": 2, "d4": 3}, "q2": {"d1": 2, "d5": 0}}
LLM = {"q1": {"d1": 0, "d2": 2, "d3": 2, "d9": 1}, "q3": {"d1": 1}}


def test_pairs_only_in_one_set_are_reported_not_compared() -> None:
    lab = label_agreement(gainscope.Judgments.from_dict(HUMAN), gainscope.Judgments.from_dict(LLM))
    # compared: q1/d1 (0, 0), q1/d2 (1, 2), q1/d3 (2, 2)
    assert lab.n == 3 and lab.judged_a == 6 and lab.judged_b == 5
    assert (lab.only_in_a, lab.only_in_b) == (3, 2)
    assert lab.only_in_a_examples == ("q1/d4", "q2/d1", "q2/d5")
    assert lab.only_in_b_examples == ("q1/d9", "q3/d1")
    assert (lab.queries_only_in_a, lab.queries_only_in_b) == (("q2",), ("q3",))
    assert lab.categories == (0, 1, 2) and lab.confusion.tolist() == [[1, 0, 0], [0, 0, 1], [0, 0, 1]]
    assert lab.kappa.value == pytest.approx(cohen_kappa([0, 1, 2], [0, 2, 2]).value)
    assert lab.counts_a == {0: 1, 1: 1, 2: 1} and lab.counts_b == {0: 1, 1: 0, 2: 2}
    data = lab.to_dict()
    assert data["only_in_a"] == 3 and data["per_grade"][1] == {"grade": 1, "a": 1, "b": 0, "both": 0,
                                                               "share_of_a_matched": 0.0}
    json.dumps(data)
    assert agreement(HUMAN, LLM).notes == ("queries judged by one label set only: 1 only by human (q2), 1 only by "
                                           "LLM (q3)",)


def test_no_common_pairs_is_an_input_error_naming_why() -> None:
    with pytest.raises(InconsistentInputError) as no_query:
        agreement(HUMAN, {"q9": {"x": 1}})
    assert str(no_query.value) == ("no (query, doc) pair is judged in both label sets, because no query is (6 human "
                                   "and 1 LLM judgments; human queries q1, q2, LLM queries q9); check that both "
                                   "label the same queries, with the same ids")
    # the same queries, other documents: what `judge --human` writes (issue 13, item 17); not an id problem
    with pytest.raises(InconsistentInputError) as other_docs:
        agreement(HUMAN, {"q1": {"d7": 1, "d8": 0}, "q2": {"d9": 2}}, label_names=("NIST", "GPT"))
    assert str(other_docs.value).startswith(
        "no (query, doc) pair is judged in both label sets: they share 2 queries, but within them not one document "
        "(6 NIST and 3 GPT judgments; query q1: NIST judged d1, d2, d3, d4, GPT judged d7, d8). Agreement compares "
        "labels of the same pairs. `gainscope judge` skips the pairs humans judged")


# ---------------------------------------------------------------------------------------------- system rankings
# One query; the human labels find 'h' relevant, the LLM labels find 'l' relevant. Each run puts h and l at the
# ranks below (the other ranks hold n1..n3), so RR is 1 / rank(h) under human labels and 1 / rank(l) under LLM.
RANKS = {"s1": (1, 4), "s2": (2, 3), "s3": (3, 2), "s4": (4, 5)}
HUMAN_QRELS = "q1 0 h 1\nq1 0 l 0\nq1 0 n1 0\nq1 0 n2 0\n"
LLM_QRELS = "q1 0 h 0\nq1 0 l 1\nq1 0 n1 0\nq1 0 n3 0\n"


def run_text(name: str) -> str:
    h, low = RANKS[name]
    fillers = iter(["n1", "n2", "n3"])
    docs = ["h" if r == h else "l" if r == low else next(fillers) for r in range(1, 6)]
    return "".join(f"q1 Q0 {d} {r} {10 - r} {name}\n" for r, d in enumerate(docs, start=1))


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    out = {"human": tmp_path / "human.qrels", "llm": tmp_path / "llm.qrels"}
    out["human"].write_text(HUMAN_QRELS, encoding="utf-8")
    out["llm"].write_text(LLM_QRELS, encoding="utf-8")
    for name in RANKS:
        out[name] = tmp_path / f"{name}.run"
        out[name].write_text(run_text(name), encoding="utf-8")
    return {k: str(v) for k, v in out.items()}


def test_agreement_ranks_systems_under_both_label_sets(files: dict[str, str]) -> None:
    runs = [files[s] for s in RANKS]
    result = agreement(files["human"], files["llm"], runs=runs, metrics=["RR", "P@1"])
    r = result.ranking("RR")
    assert r.systems == ("s1", "s2", "s3", "s4")
    assert r.a == pytest.approx((1, 1 / 2, 1 / 3, 1 / 4)) and r.b == pytest.approx((1 / 4, 1 / 3, 1 / 2, 1 / 5))
    # human s1 > s2 > s3 > s4; LLM s3 > s2 > s1 > s4: s4 pairs concordant (3), the others discordant (3) -> tau 0
    assert r.kendall.value == pytest.approx(0.0)
    # walking LLM: s2 0/1, s1 0/2, s4 3/3 -> -1/3; walking human: s2 0/1, s3 0/2, s4 3/3 -> -1/3
    assert r.tau_ap.value == pytest.approx(-1 / 3)
    # ranks (4, 3, 2, 1) and (2, 3, 4, 1): centred products -0.75 + 0.25 - 0.75 + 2.25 = 1, over 5 -> 0.2
    assert r.spearman.value == pytest.approx(0.2)
    # labels: h (1, 0), l (0, 1), n1 (0, 0) compared; n2 only human, n3 only LLM
    assert result.labels.n == 3 and result.labels.only_in_a_examples == ("q1/n2",)
    assert result.ranking("P@1").leaderboard("a")[0] == (1, "s1", 1.0)
    assert result.policies == gainscope.Policies()
    data = json.loads(result.to_json())
    assert [row["system"] for row in data["rankings"][0]["leaderboard_b"]] == ["s3", "s2", "s1", "s4"]
    with pytest.raises(InputError, match="at least 2 runs"):
        agreement(files["human"], files["llm"], runs=runs[:1])
    with pytest.raises(InputError, match="two runs are named 's1'"):
        agreement(files["human"], files["llm"], runs=runs[:2], names=["s1", "s1"])


# ---------------------------------------------------------------------------------------------- command line
invoke = partial(invoke_command, agreement_cmd)


def test_cli_table_json_and_markdown(files: dict[str, str]) -> None:
    runs = [arg for s in RANKS for arg in ("--run", files[s])]
    code, out, _ = invoke(files["human"], files["llm"], *runs, "-m", "RR")
    assert code == 0
    for text in ("pairs judged in both: 3", "only in human: 1 pair: q1/n2", "Cohen's kappa, quadratic weights",
                 "Cohen's kappa, binarised at grade >= 2", "Krippendorff's alpha, ordinal",
                 "confusion matrix (rows human, columns LLM)", "systems by RR:", "tau_AP -0.3333",
                 "│ human \\ LLM │"):
        assert text in out
    code, out, _ = invoke(files["human"], files["llm"], *runs, "-m", "RR P@1", "-f", "json", "--threshold", "1")
    assert code == 0
    data = json.loads(out)
    assert [r["metric"] for r in data["rankings"]] == ["RR", "P@1"]
    assert data["labels"]["threshold"] == 1 and data["labels"]["only_in_b_examples"] == ["q1/n3"]
    assert data["rankings"][0]["tau_ap"]["value"] == pytest.approx(-1 / 3)
    code, out, _ = invoke(files["human"], files["llm"], "-f", "markdown")
    assert code == 0 and "| human \\ LLM |" in out and "**confusion matrix**" in out


def test_cli_errors(files: dict[str, str], tmp_path: Path) -> None:
    other = tmp_path / "other.qrels"
    other.write_text("q9 0 x 1\n", encoding="utf-8")
    code, _, err = invoke(files["human"], str(other))
    assert code == 3 and "no (query, doc) pair is judged in both label sets" in err
    code, _, err = invoke(files["human"], files["llm"], "--run", files["s1"])
    assert code == 2 and "at least 2 runs" in err
    code, _, err = invoke(files["human"], files["llm"], "-m", "RR")
    assert code == 2 and "--run" in err
    code, _, err = invoke(files["human"], files["llm"], "--categories", "0,1")
    assert code == 0
    code, _, err = invoke(files["human"], files["llm"], "--categories", "1,2")
    assert code == 3 and "outside the categories [1, 2]" in err
