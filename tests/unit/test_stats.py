"""gainscope.stats against scipy (the reference), hand-computed corrections, and simulations under the null.

The fixed vectors use multiples of 1/16 where ties and zeros are wanted, so that ``a - b`` is exact in floating
point and the tie structure scipy sees is the one intended; continuous vectors come from seeded generators.
"""

from __future__ import annotations

import inspect
import itertools
import math
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from scipy import stats as sps

from gainscope import stats
from gainscope.errors import InputError, PolicyError


def _continuous(n: int, seed: int, shift: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    base = rng.beta(2, 3, n)  # query difficulty, shared by both systems
    return np.clip(base + shift + rng.normal(0, 0.08, n), 0, 1), np.clip(base + rng.normal(0, 0.08, n), 0, 1)


def _sixteenths(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 17, n) / 16, rng.integers(0, 17, n) / 16


VECTORS: dict[str, tuple[np.ndarray, np.ndarray]] = {
    # d = 0.07, -0.13, 0.21, 0.05, 0.34 (up to rounding): no ties, no zeros
    "n5": (np.array([0.52, 0.27, 0.81, 0.45, 0.90]), np.array([0.45, 0.40, 0.60, 0.40, 0.56])),
    "n30": _continuous(30, 1, shift=0.03),
    "n80": _continuous(80, 2, shift=0.02),
    # d = 3/16, -1/8, 0, 1/4, 1/8, 0, -3/16, 1/2, 1/16, -1/4, 1/16, 5/16: ties in |d| and two zeros
    "ties_zeros_n12": (np.array([8, 4, 9, 12, 10, 5, 2, 16, 7, 1, 6, 11]) / 16,
                       np.array([5, 6, 9, 8, 8, 5, 5, 8, 6, 5, 5, 6]) / 16),
    "ties_zeros_n30": _sixteenths(30, 3),
    "ties_zeros_n80": _sixteenths(80, 4),
}
NO_TIES = ["n5", "n30"]  # the exact Wilcoxon test applies (n80 is above scipy's exact default, tested separately)
SMALL = ["n5", "ties_zeros_n12"]  # small enough for scipy's exact permutation test


def _scipy_wilcoxon(d: np.ndarray, exact: bool) -> Any:
    if exact:
        return sps.wilcoxon(d, zero_method="wilcox", correction=False, method="exact")
    try:  # "asymptotic" since scipy 1.13, "approx" before
        return sps.wilcoxon(d, zero_method="wilcox", correction=False, method="asymptotic")
    except ValueError:
        return sps.wilcoxon(d, zero_method="wilcox", correction=False, method="approx")


def _scipy_bootstrap_ci(x: np.ndarray, method: str, level: float, resamples: int, seed: int) -> tuple[float, float]:
    # `rng` replaced `random_state` in scipy 1.15
    key = "rng" if "rng" in inspect.signature(sps.bootstrap).parameters else "random_state"
    res = sps.bootstrap((x,), np.mean, confidence_level=level, n_resamples=resamples, method=method,
                        **{key: np.random.default_rng(seed)})
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


# ---------------------------------------------------------------------------------------------- paired t
@pytest.mark.parametrize("name", list(VECTORS))
def test_paired_t_matches_scipy(name):
    a, b = VECTORS[name]
    ours, ref = stats.paired_t(a, b), sps.ttest_rel(a, b)
    assert ours.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-10, abs=1e-15)
    assert ours.name == "paired t" and ours.detail == f"Student t, {len(a) - 1} degrees of freedom"


def test_paired_t_without_spread():
    a = np.array([0.5, 0.25, 0.75])
    zero = stats.paired_t(a, a)  # scipy: NaN
    assert (zero.statistic, zero.p_value) == (0.0, 1.0)
    up = stats.paired_t(a + 0.125, a)  # every d = 1/8 exactly
    assert (up.statistic, up.p_value) == (math.inf, 0.0)
    down = stats.paired_t(a, a + 0.125)
    assert (down.statistic, down.p_value) == (-math.inf, 0.0)


# ---------------------------------------------------------------------------------------------- Wilcoxon
@pytest.mark.parametrize("name", list(VECTORS))
def test_wilcoxon_approx_matches_scipy(name):
    a, b = VECTORS[name]
    ours, ref = stats.wilcoxon(a, b, method="approx"), _scipy_wilcoxon(a - b, exact=False)
    assert ours.statistic == ref.statistic
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-10, abs=1e-10)
    assert ours.detail.startswith("normal approximation")


@pytest.mark.parametrize("name", [*NO_TIES, "n80"])
def test_wilcoxon_exact_matches_scipy(name):
    a, b = VECTORS[name]
    ours, ref = stats.wilcoxon(a, b, method="exact"), _scipy_wilcoxon(a - b, exact=True)
    assert ours.statistic == ref.statistic
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-10, abs=1e-10)
    assert ours.detail == "exact"


def test_wilcoxon_exact_drops_zeros():
    # |d| = 1/4, 1/2, 0, 3/4, 1/8, 0, 3/8, 1: no ties among the six non-zero values
    d = np.array([0.25, -0.5, 0.0, 0.75, 0.125, 0.0, -0.375, 1.0])
    ours = stats.wilcoxon(d, np.zeros(8))
    ref = _scipy_wilcoxon(d[d != 0], exact=True)  # scipy < 1.13 would switch to the approximation with zeros
    assert ours.detail == "exact; 2 zero differences dropped"
    # ranks of |d|: 1/8 -> 1, 1/4 -> 2, 3/8 -> 3, 1/2 -> 4, 3/4 -> 5, 1 -> 6; W- = 3 + 4 = 7, W+ = 14
    assert ours.statistic == ref.statistic == 7.0
    assert ours.p_value == pytest.approx(ref.pvalue, abs=1e-12)


def test_wilcoxon_exact_distribution_by_enumeration():
    # P(W+ <= w) over all 2^8 sign patterns of ranks 1..8, counted directly
    n = 8
    sums = [sum(r for r, s in zip(range(1, n + 1), signs, strict=True) if s) for signs in
            itertools.product((0, 1), repeat=n)]
    a = np.array([0.9, 0.2, 0.8, 0.7, 0.1, 0.6, 0.5, 0.3])
    b = a - np.array([1, -2, 3, -4, 5, 6, -7, 8]) / 16  # W- = 2 + 4 + 7 = 13
    result = stats.wilcoxon(a, b)
    assert result.statistic == 13.0
    assert result.p_value == pytest.approx(2 * sum(s <= 13 for s in sums) / 2**n, abs=1e-15)


def test_wilcoxon_auto():
    assert stats.wilcoxon(*VECTORS["n30"]).detail == "exact"
    assert stats.wilcoxon(*VECTORS["n80"]).detail == "normal approximation"  # n > 50
    tied = stats.wilcoxon(*VECTORS["ties_zeros_n12"])
    assert tied.detail == "exact, average ranks for ties; 2 zero differences dropped"
    assert tied.p_value == stats.wilcoxon(*VECTORS["ties_zeros_n12"], method="exact").p_value


def test_wilcoxon_exact_with_ties_by_enumeration():
    # every sign pattern of the average ranks, counted directly; scipy >= 1.13 does the same for small n
    a, b = VECTORS["ties_zeros_n12"]
    d, ranks, _ = stats._signed_ranks(np.asarray(a) - np.asarray(b))
    w = min(float(ranks[d > 0].sum()), float(ranks[d < 0].sum()))
    sums = [sum(r for r, s in zip(ranks.tolist(), signs, strict=True) if s)
            for signs in itertools.product((0, 1), repeat=len(ranks))]
    by_hand = min(1.0, 2 * sum(s <= w + 1e-9 for s in sums) / 2 ** len(ranks))
    assert stats.wilcoxon(a, b).p_value == pytest.approx(by_hand, abs=1e-12)
    ref = sps.wilcoxon(np.asarray(a) - np.asarray(b), zero_method="wilcox", correction=False,
                       method=sps.PermutationMethod(n_resamples=np.inf))
    assert stats.wilcoxon(a, b).p_value == pytest.approx(ref.pvalue, abs=1e-12)


def test_wilcoxon_rounding_ties():
    # P@10 of two systems: 0.5 - 0.3 and 0.3 - 0.1 are both a gain of 0.2, but differ in floating point;
    # gainscope ties them (scipy would not), so the result equals scipy on the rounded differences
    a = np.array([0.5, 0.3, 0.4, 0.7, 0.6, 0.2, 0.9, 0.8])
    b = np.array([0.3, 0.1, 0.1, 0.2, 0.4, 0.3, 0.3, 0.4])
    assert (a - b)[0] != (a - b)[1]
    ours = stats.wilcoxon(a, b, method="approx")
    assert ours.detail == "normal approximation with tie correction"
    ref = _scipy_wilcoxon(np.round(a - b, 12), exact=False)
    assert ours.statistic == ref.statistic
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-10)


def test_wilcoxon_all_zero():
    a = np.array([0.1, 0.2, 0.3])
    result = stats.wilcoxon(a, a)
    assert (result.statistic, result.p_value) == (0.0, 1.0)


def test_wilcoxon_exact_limit():
    a = np.arange(1100) / 1100
    with pytest.raises(PolicyError, match=r"at most 1000 non-zero differences; got 1100"):
        stats.wilcoxon(a + np.sin(np.arange(1, 1101)), a, method="exact")


# ---------------------------------------------------------------------------------------------- randomisation
def _mean(x: np.ndarray, axis: int) -> np.ndarray:
    return np.mean(x, axis=axis)


@pytest.mark.parametrize("name", SMALL)
def test_randomization_exact_matches_scipy_permutation_test(name):
    a, b = VECTORS[name]
    d = a - b
    ref = sps.permutation_test((d,), _mean, permutation_type="samples", n_resamples=np.inf, vectorized=True,
                               alternative="two-sided")
    ours = stats.randomization(a, b)
    assert ours.detail == f"exact, all 2^{len(d)} sign vectors"
    assert ours.statistic == pytest.approx(d.mean(), abs=1e-15)
    assert ours.p_value == pytest.approx(ref.pvalue, abs=1e-12)


@pytest.mark.parametrize("n", [2, 7, 10])
def test_randomization_exact_by_enumeration(n):
    # the definition, sign vector by sign vector (the implementation meets in the middle)
    a, b = _sixteenths(n, 10 + n)
    d = a - b
    target = abs(d.mean()) - 1e-12
    count = sum(abs(np.mean(d * np.array(s))) >= target for s in itertools.product((1, -1), repeat=n))
    assert stats.randomization(a, b).p_value == count / 2**n


def test_randomization_monte_carlo():
    a, b = _continuous(22, 5, shift=0.03)
    exact = stats.randomization(a, b, exact_up_to=22)
    sampled = stats.randomization(a, b, resamples=20000, seed=3)
    assert sampled.detail == "20000 random sign flips, seed 3"
    assert sampled == stats.randomization(a, b, resamples=20000, seed=3)  # reproducible
    assert sampled.p_value != stats.randomization(a, b, resamples=20000, seed=4).p_value
    assert abs(sampled.p_value - exact.p_value) < 0.01  # binomial sd at p ~ 0.1: 0.002
    ones = np.ones(30)
    assert stats.randomization(ones, ones, resamples=99).p_value == 1.0  # every sign vector is as extreme


# ---------------------------------------------------------------------------------------------- bootstrap
def test_bootstrap_test():
    a, b = VECTORS["n30"]
    result = stats.bootstrap_test(a, b, resamples=2000, seed=1)
    assert result == stats.bootstrap_test(a, b, resamples=2000, seed=1)
    assert result.statistic == pytest.approx(np.mean(a - b), abs=1e-15)
    assert result.detail == "2000 studentized bootstrap resamples of the differences, seed 1"
    # the bootstrap-t and t tests estimate the same tail: close for n = 30
    assert result.p_value == pytest.approx(stats.paired_t(a, b).p_value, abs=0.03)
    assert stats.bootstrap_test(a, a, resamples=99).p_value == 1.0
    assert stats.bootstrap_test(np.ones(5), np.zeros(5), resamples=99).p_value == 0.01  # constant shift


def test_bootstrap_t_by_hand():
    # the count of |t*| >= |t| recomputed with the same generator and a plain loop
    a, b = VECTORS["n30"]
    d = np.asarray(a) - np.asarray(b)
    n, resamples = len(d), 500
    t = d.mean() / (d.std(ddof=1) / np.sqrt(n))
    rng = np.random.default_rng(3)
    idx = rng.integers(0, n, size=(resamples, n))
    count = 0
    for row in idx:
        x = d[row]
        count += abs((x.mean() - d.mean()) / (x.std(ddof=1) / np.sqrt(n))) >= abs(t) - 1e-12
    assert stats.bootstrap_test(a, b, resamples=resamples, seed=3).p_value == (count + 1) / (resamples + 1)


@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize("name", ["n30", "ties_zeros_n80"])
def test_bootstrap_ci_matches_scipy(method, name):
    values = VECTORS[name][0]
    ours = stats.bootstrap_ci(values, method=method, resamples=20000, seed=0)
    ref = _scipy_bootstrap_ci(values, "BCa" if method == "bca" else method, 0.95, 20000, 0)
    assert ours == pytest.approx(ref, abs=0.01)
    assert ours[0] < values.mean() < ours[1]


def test_bootstrap_ci_properties():
    assert stats.bootstrap_ci(np.full(10, 0.25)) == (0.25, 0.25)
    assert stats.bootstrap_ci(np.full(10, 0.25), method="bca") == (0.25, 0.25)
    values = VECTORS["n30"][0]
    for method in ("percentile", "bca"):
        wide = stats.bootstrap_ci(values, level=0.95, method=method, resamples=4000)
        narrow = stats.bootstrap_ci(values, level=0.5, method=method, resamples=4000)
        assert wide[0] < narrow[0] < narrow[1] < wide[1]
        assert stats.bootstrap_ci(values, method=method, resamples=500, seed=7) == \
            stats.bootstrap_ci(values, method=method, resamples=500, seed=7)


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_ci_coverage(method):
    # the bootstrap interval is a little narrow for small n (about 92.5% coverage at n = 25, 94% at n = 50)
    rng = np.random.default_rng(11)
    covered = 0
    for seed in range(300):
        values = rng.normal(0.4, 0.1, 50)
        low, high = stats.bootstrap_ci(values, resamples=1000, seed=seed, method=method)
        covered += low <= 0.4 <= high
    assert 0.90 <= covered / 300 <= 0.99


# ---------------------------------------------------------------------------------------------- corrections
def test_correct_by_hand():
    p = [0.01, 0.04, 0.03, 0.20]
    # sorted: 0.01 (1st), 0.03 (2nd), 0.04 (3rd), 0.20 (4th); m = 4
    # holm: 4 * 0.01 = 0.04; 3 * 0.03 = 0.09; 2 * 0.04 = 0.08 -> max(0.09, 0.08) = 0.09; 1 * 0.20 = 0.20
    assert stats.correct(p, "holm") == pytest.approx([0.04, 0.09, 0.09, 0.20], abs=1e-15)
    # bonferroni: 4p, capped at 1
    assert stats.correct(p, "bonferroni") == pytest.approx([0.04, 0.16, 0.12, 0.80], abs=1e-15)
    # bh: 0.01 * 4/1 = 0.04; 0.03 * 4/2 = 0.06; 0.04 * 4/3 = 0.0533; 0.20 * 4/4 = 0.20
    #     running minimum from the largest: 0.20, 0.0533, min(0.06, 0.0533) = 0.0533, 0.04
    assert stats.correct(p, "bh") == pytest.approx([0.04, 0.16 / 3, 0.16 / 3, 0.20], abs=1e-15)
    assert stats.correct(p, "none") == pytest.approx(p, abs=0)
    assert stats.correct(p) == pytest.approx(stats.correct(p, "holm"), abs=0)  # holm is the default


def test_correct_caps_at_one():
    p = [0.3, 0.6, 0.5]
    # holm: 3 * 0.3 = 0.9; 2 * 0.5 = 1.0; 1 * 0.6 = 0.6 -> running max 1.0
    assert stats.correct(p, "holm") == pytest.approx([0.9, 1.0, 1.0], abs=1e-15)
    # bonferroni: 0.9, 1.8 -> 1, 1.5 -> 1
    assert stats.correct(p, "bonferroni") == pytest.approx([0.9, 1.0, 1.0], abs=1e-15)
    # bh: 0.3 * 3/1 = 0.9; 0.5 * 3/2 = 0.75; 0.6 * 3/3 = 0.6 -> running min from the largest: 0.6, 0.6, 0.6
    assert stats.correct(p, "bh") == pytest.approx([0.6, 0.6, 0.6], abs=1e-15)
    assert stats.correct([], "holm").shape == (0,)


def test_correct_refuses_a_missing_p_value_in_its_own_words():
    # the per-query vectors' advice ("fill undefined queries") does not fit a list of p-values
    with pytest.raises(InputError, match=r"^p_values has 1 NaN or infinite value\(s\); a comparison that could not be "
                                         r"tested has no p-value: leave it out of the correction \(as compare does\) "
                                         r"rather than giving NaN$"):
        stats.correct([0.01, float("nan")])


@pytest.mark.parametrize("method", ["holm", "bonferroni", "bh"])
def test_correct_properties(method):
    rng = np.random.default_rng(8)
    for m in (1, 2, 5, 40):
        p = rng.random(m) ** 3
        adjusted = stats.correct(p, method)
        assert np.all(adjusted >= p) and np.all(adjusted <= 1)
        order = np.argsort(p)
        assert np.all(np.diff(adjusted[order]) >= 0)  # the order of the raw p-values is kept
    assert np.all(stats.correct(p, "bh") <= stats.correct(p, "holm") + 1e-15)
    assert np.all(stats.correct(p, "holm") <= stats.correct(p, "bonferroni") + 1e-15)


# ---------------------------------------------------------------------------------------------- descriptive
def test_effect_size():
    a, b = VECTORS["n30"]
    d = a - b
    assert stats.effect_size(a, b) == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)
    x = np.array([0.5, 0.25, 0.75])
    assert stats.effect_size(x, x) == 0.0
    assert stats.effect_size(x + 0.125, x) == math.inf
    assert stats.effect_size(x, x + 0.125) == -math.inf


def test_wins_ties_losses():
    a = [0.5, 0.4, 0.3, 0.30, 0.1]
    b = [0.4, 0.4, 0.5, 0.29, 0.2]
    assert stats.wins_ties_losses(a, b) == (2, 1, 2)
    assert stats.wins_ties_losses(a, b, tol=0.05) == (1, 2, 2)  # d = 0.1, 0, -0.2, 0.01, -0.1
    with pytest.raises(PolicyError, match="tol"):
        stats.wins_ties_losses(a, b, tol=-1)


# ---------------------------------------------------------------------------------------------- simulations
TESTS = {
    "t": lambda a, b, seed: stats.paired_t(a, b),
    "wilcoxon": lambda a, b, seed: stats.wilcoxon(a, b),
    "randomization": lambda a, b, seed: stats.randomization(a, b, resamples=999, seed=seed),
    "bootstrap": lambda a, b, seed: stats.bootstrap_test(a, b, resamples=999, seed=seed),
}


@pytest.mark.parametrize("test", list(TESTS))
def test_type_one_error(test):
    # 1000 pairs of systems whose per-query values come from the same distribution (n = 25 queries): every test
    # rejects about 5% of them (the studentized bootstrap too; the unstudentized one rejected about 7%)
    rejected = sum(TESTS[test](*_continuous(25, 1000 + i), i).p_value < 0.05 for i in range(1000))
    assert 0.02 <= rejected / 1000 <= 0.08


@pytest.mark.parametrize("test", list(TESTS))
def test_type_one_error_with_few_queries(test):
    # n = 8: the size stays near alpha (the unstudentized bootstrap rejected 10-13% here)
    rejected = sum(TESTS[test](*_continuous(8, 5000 + i), i).p_value < 0.05 for i in range(600))
    assert rejected / 600 <= 0.08


@pytest.mark.parametrize("test", list(TESTS))
def test_power(test):
    a, b = _continuous(25, 7, shift=0.1)
    assert TESTS[test](a, b, 0).p_value < 0.01


# ---------------------------------------------------------------------------------------------- errors
PAIRED = [stats.paired_t, stats.wilcoxon, stats.randomization, stats.bootstrap_test, stats.effect_size]


@pytest.mark.parametrize("function", PAIRED)
def test_paired_input_errors(function):
    with pytest.raises(InputError, match=r"same queries in the same order; got 3 and 2 values"):
        function([0.1, 0.2, 0.3], [0.1, 0.2])
    with pytest.raises(InputError, match="at least 2 queries; got 1"):
        function([0.1], [0.2])
    with pytest.raises(InputError, match="NaN or infinite"):
        function([0.1, math.nan, 0.3], [0.1, 0.2, 0.3])
    with pytest.raises(InputError, match="1-D"):
        function([[0.1, 0.2]], [[0.1, 0.2]])


def test_option_errors():
    a, b = VECTORS["n5"]
    with pytest.raises(PolicyError, match=r"unknown Wilcoxon method 'asymptotic'; use one of: 'auto', 'exact'"):
        stats.wilcoxon(a, b, method="asymptotic")
    with pytest.raises(PolicyError, match=r"unknown bootstrap interval method 'BCa'; use one of: 'percentile', 'bca'"):
        stats.bootstrap_ci(a, method="BCa")
    with pytest.raises(PolicyError, match=r"unknown correction 'fdr_bh'; use one of: 'holm', 'bonferroni', 'bh'"):
        stats.correct([0.1], "fdr_bh")
    with pytest.raises(PolicyError, match=r"^level=\.\.\. must be a number between 0 and 1 \(exclusive\), e\.g\. "
                                          r"0\.95; got 95$"):
        stats.bootstrap_ci(a, level=95)
    with pytest.raises(PolicyError, match="resamples must be an integer >= 1; got 0"):
        stats.bootstrap_test(a, b, resamples=0)
    with pytest.raises(PolicyError, match="seed must be an integer >= 0"):
        stats.randomization(a, b, seed=-1)
    with pytest.raises(PolicyError, match="exact_up_to must be an integer between 0 and 40; got 41"):
        stats.randomization(a, b, exact_up_to=41)
    with pytest.raises(InputError, match=r"p-values must lie in \[0, 1\]"):
        stats.correct([0.5, 1.5])
    with pytest.raises(InputError, match="at least 2 values; got 1"):
        stats.bootstrap_ci([0.5])


# ---------------------------------------------------------------------------------------------- packaging
def test_result_is_frozen():
    result = stats.paired_t(*VECTORS["n5"])
    with pytest.raises(AttributeError):
        result.p_value = 0.5  # type: ignore[misc]


def test_import_does_not_load_scipy():
    code = "import sys, gainscope, gainscope.stats; print('scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# ---------------------------------------------------------------------------------------------- batched resampling
def test_resample_sums_are_the_sums_over_the_drawn_values() -> None:
    # the draws are those of default_rng(seed).integers(0, n, size=(rows, n)), chunk by chunk
    x = np.array([[0.5, 1.0], [0.25, -1.0], [0.125, 2.0], [1.0, 0.0]])
    drawn = np.random.default_rng(3).integers(0, 4, size=(7, 4))
    expected = np.array([[x[row, 0].sum(), x[row, 1].sum()] for row in drawn])  # dyadic values: exact sums
    assert np.array_equal(stats.resample_sums(x, 7, 3), expected)
    flipped = np.random.default_rng(3).integers(0, 2, size=(7, 4), dtype=np.int8)
    signs = 1 - 2 * flipped.astype(np.float64)
    assert np.array_equal(stats.sign_flip_sums(x, 7, 3), signs @ x)
    with pytest.raises(InputError, match="columns must be 2-D"):
        stats.resample_sums(x[:, 0], 7, 3)


def test_batched_statistics_equal_the_single_vector_ones() -> None:
    vectors = [_continuous(40, 5)[0], _sixteenths(40, 6)[0], np.full(40, 0.25), _continuous(25, 7)[1],
               _sixteenths(25, 8)[1]]
    differences = [np.subtract(*_continuous(40, 9, 0.02)), np.subtract(*_sixteenths(40, 10)), np.zeros(40),
                   np.full(25, 0.125), np.subtract(*_sixteenths(25, 11))]
    for method in ("percentile", "bca"):
        cis, tests = stats.bootstrap(vectors, differences, resamples=700, seed=4, method=method)
        for x, ci in zip(vectors, cis, strict=True):
            assert ci == pytest.approx(stats.bootstrap_ci(x, resamples=700, seed=4, method=method), rel=1e-12)
        alone = stats.bootstrap_cis(vectors, resamples=700, seed=4, method=method)
        assert np.allclose(alone, cis, rtol=1e-12, atol=0)
    for d, test in zip(differences, tests, strict=True):
        assert test == stats.bootstrap_test(d, np.zeros(len(d)), resamples=700, seed=4)
    assert stats.bootstrap_tests(differences, resamples=700, seed=4) == tests
    randomized = stats.randomizations(differences, resamples=700, seed=4, exact_up_to=30)  # 25 exact, 40 sampled
    for d, test in zip(differences, randomized, strict=True):
        assert test == stats.randomization(d, np.zeros(len(d)), resamples=700, seed=4, exact_up_to=30)
    assert randomized[3].detail == "exact, all 2^25 sign vectors" and "random sign flips" in randomized[0].detail
    with pytest.raises(InputError, match="at least 2 queries"):
        stats.bootstrap_tests([np.zeros(1)])
    with pytest.raises(InputError, match="NaN or infinite"):
        stats.randomizations([np.array([0.1, math.nan, 0.2])])


def test_bca_counts_a_resampled_mean_equal_to_the_mean_as_a_tie_whatever_the_summing_order() -> None:
    # values k/10: a resample of 0.3 and 0.1 has the mean of one of 0.2 and 0.2, though binary sums in another
    # order may differ in the last bit. Reference: the share below the mean decided in exact decimal arithmetic.
    from fractions import Fraction

    x = np.random.default_rng(44).integers(0, 11, 30) / 10  # the upper bound was 0.0065 off before
    n, resamples, seed = len(x), 999, 0
    exact = [Fraction(repr(v)) for v in x.tolist()]
    theta = sum(exact) / n
    drawn = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    side = [(m > theta) - (m < theta) for m in (sum(exact[i] for i in row) / n for row in drawn)]
    below = (sum(s < 0 for s in side) + sum(s <= 0 for s in side)) / (2 * resamples)
    from scipy.special import ndtr, ndtri

    z0 = float(ndtri(below))
    jack = (x.sum() - x) / (n - 1)
    u = (n - 1) * (jack.mean() - jack)
    accel = float(np.sum(u**3) / (6 * np.sum(u**2) ** 1.5))
    levels = [float(ndtr(z0 + (z0 + z) / (1 - accel * (z0 + z)))) for z in (ndtri(0.025), -ndtri(0.025))]
    means = np.array([math.fsum(x[row].tolist()) / n for row in drawn])
    expected = np.quantile(means, levels)
    assert stats.bootstrap_ci(x, resamples=resamples, seed=seed, method="bca") == pytest.approx(expected, abs=1e-12)


def test_the_draws_are_numpys_int64_draws() -> None:
    # resample_sums draws int32 (half the memory); numpy draws int32 and int64 below 2^32 from the same 32-bit
    # words, so the resamples are those of rng.integers(0, n, size) documented in the module
    for n in (2, 3, 1000, 10_007, 2**31 - 1):
        a = np.random.default_rng(n).integers(0, n, size=(3, 500))
        b = np.random.default_rng(n).integers(0, n, size=(3, 500), dtype=np.int32)
        assert np.array_equal(a, b)
