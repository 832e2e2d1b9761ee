"""Comparing systems: paired significance tests, bootstrap intervals and multiple-comparison corrections.

Every function takes per-query values of a system ``a`` and a baseline ``b`` over the same queries, in the same
order (or, for :func:`bootstrap_ci`, one vector of values) and works on the differences ``d = a - b``. The
statistics are computed here, in numpy; scipy supplies only distribution functions (Student t, normal), and is
imported inside the functions that need it so that ``import gainscope`` stays fast.

Tests (all two-sided; ``n`` = number of queries, ``mean`` and ``sd`` (``ddof=1``) of ``d``):

* :func:`paired_t` -- Student's paired t: ``t = mean / (sd / sqrt(n))``, p from t with ``n - 1`` degrees of
  freedom. ``d`` all zero gives ``t = 0, p = 1`` (scipy returns NaN); constant non-zero ``d`` gives
  ``t = +-inf, p = 0``.
* :func:`wilcoxon` -- Wilcoxon signed-rank (Wilcoxon 1945). Zero differences are dropped ("wilcox" zero
  method), tied ``|d|`` get average ranks; ``W+`` is the sum of the ranks of positive differences over the
  ``n'`` remaining. Exact p from the distribution of ``W+`` under random signs (dynamic programming over the
  doubled ranks, so average ranks of ties are exact too; as scipy's permutation distribution), or the normal
  approximation ``z = (W+ - n'(n'+1)/4) / sigma`` with
  ``sigma^2 = (n'(n'+1)(2n'+1) - sum(t^3 - t) / 2) / 24`` over tie groups of size ``t``, no continuity
  correction. The statistic reported is ``min(W+, W-)``, as scipy does. Unlike scipy, differences within
  ``1e-12`` (times the largest ``|d|`` when it exceeds 1) are treated as equal: ``0.5 - 0.3`` and
  ``0.3 - 0.1`` are the same change in P@10, and should share a rank.
* :func:`randomization` -- Fisher's paired randomisation (sign-flip) test on the mean difference
  (Fisher 1935; Smucker, Allan & Carterette 2007): under the null each ``d_i`` is as likely to be ``-d_i``, and
  ``p = #{s : |mean(s * d)| >= |mean(d)| - 1e-12} / #s``, over all ``2^n`` sign vectors ``s`` when
  ``n <= exact_up_to`` (exact), otherwise over ``resamples`` random sign vectors plus the identity:
  ``p = (count + 1) / (resamples + 1)``.
* :func:`bootstrap_test` -- studentized paired bootstrap test (bootstrap-t; Efron & Tibshirani 1993, §16.4;
  Sakai 2006): resample ``d`` with replacement, ``t* = (mean(d*) - mean(d)) / (sd(d*) / sqrt(n))``,
  ``p = (#{|t*| >= |t| - 1e-12} + 1) / (resamples + 1)`` with ``t = mean(d) / (sd(d) / sqrt(n))``.

Intervals and corrections:

* :func:`bootstrap_ci` -- bootstrap interval of the mean: "percentile" (the ``(1 +- level) / 2`` quantiles of
  the resampled means) or "bca" (bias-corrected and accelerated, Efron & Tibshirani 1993 §14.3, eq. 14.10:
  ``z0 = Phi^-1(share of resampled means below the mean, ties counted half)``, a resampled mean within 1e-12 of
  the mean counting as a tie (sums in another order must not turn a tie into a difference), jackknife acceleration
  ``a = sum(U^3) / (6 sum(U^2)^1.5)`` with ``U_i = (n - 1)(mean of jackknife means - i-th jackknife mean)``,
  quantiles ``Phi(z0 + (z0 + z) / (1 - a (z0 + z)))`` for ``z = Phi^-1((1 -+ level) / 2)``), as
  ``scipy.stats.bootstrap`` computes them.
* :func:`correct` -- adjusted p-values, as statsmodels' ``multipletests``: Holm's step-down
  ``max_{j<=i} min(1, (m - j + 1) p_(j))``, Bonferroni ``min(1, m p)``, Benjamini-Hochberg step-up
  ``min_{j>=i} min(1, m p_(j) / j)`` (``p_(i)`` the i-th smallest of ``m`` p-values).
* :func:`effect_size` -- Cohen's ``d_z = mean / sd`` of the paired differences.
* :func:`wins_ties_losses` -- queries where ``a`` beats, ties or loses to ``b``.

Randomness comes only from ``numpy.random.default_rng(seed)``: the same inputs and seed give the same p-value.
Resamples are drawn in chunks of about a million numbers (the chunk size depends only on ``n``), so every
statistic over ``n`` values sees the same resamples: the bootstrap draws (``integers(0, n)``, shared by the
intervals and the bootstrap test) and the sign flips (``integers(0, 2)``, the randomisation test). Many vectors
are resampled in one pass (:func:`resample_sums`, :func:`sign_flip_sums`): a chunk of draws becomes a matrix of
weights (how often each value is drawn, or its sign) and one matrix product gives the sums of every vector, so
that comparing systems on many metrics costs little more than one vector. :func:`bootstrap_cis`,
:func:`bootstrap_tests`, :func:`bootstrap` (intervals and tests together) and :func:`randomizations` are the
batched forms that :mod:`gainscope.compare` uses; the single-vector functions are these with one vector, so each
vector gets the same numbers alone or in a batch (up to the rounding of a matrix product's sums, far below the
1e-12 tolerances).

>>> a = [0.52, 0.61, 0.40, 0.75, 0.33, 0.58, 0.47, 0.69]
>>> b = [0.45, 0.60, 0.31, 0.70, 0.35, 0.49, 0.41, 0.60]
>>> round(paired_t(a, b).p_value, 4)
0.0065
>>> wilcoxon(a, b).detail  # 0.40 - 0.31, 0.58 - 0.49 and 0.69 - 0.60 share a rank
'exact, average ranks for ties'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from gainscope.errors import InputError, PolicyError, option

__all__ = [
    "TestResult",
    "bootstrap",
    "bootstrap_ci",
    "bootstrap_cis",
    "bootstrap_test",
    "bootstrap_tests",
    "correct",
    "effect_size",
    "paired_t",
    "randomization",
    "randomizations",
    "resample_sums",
    "sign_flip_sums",
    "wilcoxon",
    "wins_ties_losses",
]

#: absolute tolerance (on means, and on |d| for zeros and ties in the Wilcoxon test) below which values are equal
TOL = 1e-12
#: Wilcoxon "auto": exact distribution up to this many non-zero differences (as scipy)
EXACT_WILCOXON_MAX = 50
#: largest n for which the exact Wilcoxon distribution is built (O(n^3) operations); beyond, use "approx"
EXACT_WILCOXON_LIMIT = 1000
#: largest ``exact_up_to`` of the randomisation test (2^(n/2) sums per half are held in memory)
EXACT_RANDOMIZATION_LIMIT = 40
#: random numbers drawn per chunk of resamples
CHUNK = 1 << 20
#: multiply-adds per matrix product of weights and values: OpenBLAS (numpy's wheels) runs products up to this size
#: on one thread; its threads waiting for each other cost more than they save on products this small, and many
#: times more on a busy machine (measured: 3.5 s against 1.1 s for the intervals of a comparison at M)
PRODUCT = 1 << 18

WILCOXON_METHODS = ("auto", "exact", "approx")
CI_METHODS = ("percentile", "bca")
CORRECTIONS = ("holm", "bonferroni", "bh", "none")


@dataclass(frozen=True)
class TestResult:
    """The outcome of a significance test: its name, statistic, two-sided p-value and how p was computed."""

    __test__ = False  # not a pytest test class, despite the name

    name: str
    statistic: float
    p_value: float
    detail: str


# ---------------------------------------------------------------------------------------------- validation
def finite_vector(values: ArrayLike, name: str, what: str, fix: str) -> np.ndarray:
    """``values`` as a 1-D float array of finite numbers, one per ``what``; InputError otherwise, ending with ``fix``
    when a value is NaN or infinite. Shared with :mod:`gainscope.agreement`."""
    try:
        x = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be numbers, one per {what}: {exc}") from None
    if x.ndim != 1:
        raise InputError(f"{name} must be 1-D (one value per {what}); got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        bad = int(np.count_nonzero(~np.isfinite(x)))
        raise InputError(f"{name} has {bad} NaN or infinite value(s); {fix}")
    return x


def _vector(values: ArrayLike, name: str) -> np.ndarray:
    return finite_vector(values, name, "query", "drop or fill undefined queries first (e.g. evaluate with an "
                         "'undefined' policy that gives 0)")


def _given_differences(d: ArrayLike) -> np.ndarray:
    """Paired differences given as one vector (the batched tests), checked as :func:`_differences` checks."""
    x = _vector(d, "d")
    if len(x) < 2:
        raise InputError(f"a paired comparison needs at least 2 queries; got {len(x)}")
    return x


def _differences(a: ArrayLike, b: ArrayLike, min_n: int = 2) -> np.ndarray:
    x, y = _vector(a, "a"), _vector(b, "b")
    if len(x) != len(y):
        raise InputError(f"a and b must have one value per query for the same queries in the same order; got "
                         f"{len(x)} and {len(y)} values. Align them on query ids first (Results.per_query)")
    if len(x) < min_n:
        raise InputError(f"a paired comparison needs at least {min_n} queries; got {len(x)}")
    return x - y


def _count(value: object, name: str, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low \
            or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"between {low} and {high}"
        raise PolicyError(f"{name} must be an integer {bound}; got {value!r}")
    return int(value)


def check_fraction(value: object, name: str, example: str = "") -> float:
    """``value`` as a float strictly between 0 and 1 (a significance or confidence level), else a
    :class:`~gainscope.errors.PolicyError` naming the option ``name`` (``alpha=...``, ``--alpha``)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating) or not 0 < value < 1:
        raise PolicyError(f"{option(name, ..., cli='--' + name.replace('_', '-'))} must be a number between 0 and 1 "
                          f"(exclusive){', e.g. ' + example if example else ''}; got {value!r}")
    return float(value)


def _choice(value: str, name: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise PolicyError(f"unknown {name} {value!r}; use one of: {', '.join(map(repr, allowed))}")
    return value


def _chunks(total: int, n: int) -> Iterator[int]:
    """Sizes of the batches of ``total`` resamples of ``n`` values each."""
    rows = max(1, CHUNK // max(n, 1))
    for start in range(0, total, rows):
        yield min(rows, total - start)


def _columns(columns: ArrayLike) -> np.ndarray:
    x = np.asarray(columns, dtype=np.float64)
    if x.ndim != 2:
        raise InputError(f"columns must be 2-D (one column per vector, one row per value); got shape {x.shape}")
    return x


def _weighted_sums(weights: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """``out = weights @ x``, as products of at most :data:`PRODUCT` multiply-adds."""
    rows, n = weights.shape
    width = max(1, PRODUCT // n)
    step = max(1, PRODUCT // (n * min(width, x.shape[1])))
    for c in range(0, x.shape[1], width):
        for r in range(0, rows, step):
            np.matmul(weights[r:r + step], x[:, c:c + width], out=out[r:r + step, c:c + width])


def _chunked_sums(x: np.ndarray, resamples: int, seed: int,
                  draw: Callable[[np.random.Generator, int, int], np.ndarray]) -> np.ndarray:
    """``weights @ x`` for ``resamples`` rows of weights, ``draw(rng, rows, n)`` giving each chunk's."""
    n = x.shape[0]
    rng = np.random.default_rng(seed)
    out = np.empty((resamples, x.shape[1]))
    done = 0
    for rows in _chunks(resamples, n):
        _weighted_sums(draw(rng, rows, n), x, out[done:done + rows])
        done += rows
    return out


def _draw_counts(rng: np.random.Generator, rows: int, n: int) -> np.ndarray:
    """How often each of n values is drawn in each of ``rows`` resamples of n draws with replacement."""
    # int32 draws are the int64 ones (numpy draws both as 32-bit words when n < 2^32), in half the memory
    drawn = rng.integers(0, n, size=(rows, n), dtype=np.int32 if n < 2**31 else np.int64)
    weights = np.empty((rows, n))
    for r in range(rows):
        weights[r] = np.bincount(drawn[r], minlength=n)
    return weights


def _draw_flips(rng: np.random.Generator, rows: int, n: int) -> np.ndarray:
    """1 where a sign is flipped (-1), 0 where it is kept, for ``rows`` sign vectors of n signs."""
    return rng.integers(0, 2, size=(rows, n), dtype=np.int8).astype(np.float64)


def resample_sums(columns: ArrayLike, resamples: int, seed: int) -> np.ndarray:
    """Bootstrap sums of every column at once: ``sums[r, j] = sum_i w[r, i] * columns[i, j]``, where ``w[r, i]`` is
    how often value ``i`` is drawn in resample ``r`` (``n`` draws with replacement, ``n`` the number of rows). The
    draws are ``default_rng(seed).integers(0, n, size=(rows, n))`` chunk by chunk, the resamples of
    :func:`bootstrap_ci` and :func:`bootstrap_test`; shape ``(resamples, columns)``."""
    return _chunked_sums(_columns(columns), resamples, seed, _draw_counts)


def sign_flip_sums(columns: ArrayLike, resamples: int, seed: int) -> np.ndarray:
    """Randomisation sums of every column at once: ``sums[r, j] = sum_i s[r, i] * columns[i, j]`` for random signs
    ``s = 1 - 2 * default_rng(seed).integers(0, 2, size=(rows, n), dtype=int8)``, chunk by chunk (those of
    :func:`randomization`); shape ``(resamples, columns)``."""
    x = _columns(columns)
    out = _chunked_sums(x, resamples, seed, _draw_flips)
    out *= -2.0
    out += x.sum(axis=0)  # sum(s * x) = sum(x) - 2 sum(x over the flipped signs)
    return out


def _by_length(vectors: Sequence[np.ndarray]) -> dict[int, list[int]]:
    """The positions of the vectors, grouped by length (vectors of one length share their resamples)."""
    groups: dict[int, list[int]] = {}
    for i, v in enumerate(vectors):
        groups.setdefault(len(v), []).append(i)
    return groups


# ---------------------------------------------------------------------------------------------- t test
def paired_t(a: ArrayLike, b: ArrayLike) -> TestResult:
    """Student's paired t test, two-sided: ``t = mean(d) / (sd(d) / sqrt(n))`` with ``n - 1`` degrees of freedom."""
    d = _differences(a, b)
    n = len(d)
    detail = f"Student t, {n - 1} degrees of freedom"
    if np.all(d == d[0]):  # no spread: scipy divides by zero (NaN or inf with a warning); we decide
        if d[0] == 0:
            return TestResult("paired t", 0.0, 1.0, detail + "; all differences are zero")
        return TestResult("paired t", math.copysign(math.inf, d[0]), 0.0, detail + "; all differences are equal")
    from scipy.special import stdtr  # type: ignore[import-untyped]  # (scipy.stats takes 4x longer to import)

    t = float(d.mean() / np.sqrt(d.var(ddof=1) / n))
    return TestResult("paired t", t, float(2 * stdtr(n - 1, -abs(t))), detail)  # = scipy.stats.t.sf(|t|) twice


# ---------------------------------------------------------------------------------------------- Wilcoxon
def _signed_ranks(d: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Non-zero differences, the average ranks of their absolute values, and the tie-group sizes."""
    magnitude = np.abs(d)
    atol = TOL * max(1.0, float(magnitude.max(initial=0.0)))
    d = d[magnitude > atol]
    if len(d) == 0:
        return d, d, np.zeros(0, dtype=np.int64)
    order = np.argsort(np.abs(d), kind="stable")
    ordered = np.abs(d)[order]
    starts = np.concatenate(([True], np.diff(ordered) > atol))  # a new tie group starts here
    group = np.cumsum(starts) - 1
    sizes = np.bincount(group)
    first = np.flatnonzero(starts)  # 0-based position where each group starts
    ranks = np.empty(len(d))
    ranks[order] = (first + (sizes + 1) / 2)[group]  # mean of the 1-based positions first+1 .. first+size
    return d, ranks, sizes


def _signed_rank_pmf(doubled: np.ndarray) -> np.ndarray:
    """``P(S = s)`` for ``S`` the sum of the *doubled* ranks that get a positive sign, each sign +- with probability
    1/2: the exact null distribution of ``2 W+``. Doubling makes average ranks of ties (multiples of 1/2) integers,
    so the same dynamic programme is exact with and without ties."""
    pmf = np.ones(1)
    for r in doubled.tolist():  # rank r is positive (shift by r) or negative, with probability 1/2 each
        nxt = np.zeros(len(pmf) + r)
        nxt[: len(pmf)] = pmf
        nxt[r:] += pmf
        pmf = nxt * 0.5
    return pmf


def wilcoxon(a: ArrayLike, b: ArrayLike, *, method: str = "auto") -> TestResult:
    """Wilcoxon signed-rank test, two-sided; zero differences dropped, tied ``|d|`` given average ranks.

    ``method``: "exact" (the distribution of ``W+`` over all sign patterns of the ranks, average ranks of ties
    included), "approx" (normal approximation with the tie correction of the variance, no continuity
    correction), or "auto": exact up to 50 non-zero differences, else approx. The statistic is ``min(W+, W-)``.
    """
    _choice(method, "Wilcoxon method", WILCOXON_METHODS)
    all_d = _differences(a, b)
    d, ranks, sizes = _signed_ranks(all_d)
    n = len(d)
    dropped = len(all_d) - n
    note = f"; {dropped} zero difference{'s' if dropped != 1 else ''} dropped" if dropped else ""
    if n == 0:
        return TestResult("Wilcoxon signed-rank", 0.0, 1.0, "all differences are zero")
    w_plus = float(ranks[d > 0].sum())
    w_minus = n * (n + 1) / 2 - w_plus
    statistic = min(w_plus, w_minus)
    ties = bool(np.any(sizes > 1))
    if method == "exact" and n > EXACT_WILCOXON_LIMIT:
        raise PolicyError(f"the exact Wilcoxon distribution is built for at most {EXACT_WILCOXON_LIMIT} non-zero "
                          f"differences; got {n}. Use method='approx' (accurate at this size) or 'auto'")
    if method == "exact" or (method == "auto" and n <= EXACT_WILCOXON_MAX):
        pmf = _signed_rank_pmf(np.rint(2 * ranks).astype(np.int64))
        # symmetric about n(n+1)/2 (in doubled units n(n+1)): p = 2 P(2 W+ <= 2 min(W+, W-))
        p = min(1.0, 2 * float(pmf[: round(2 * statistic) + 1].sum()))
        return TestResult("Wilcoxon signed-rank", statistic, p, ("exact, average ranks for ties" if ties
                                                                 else "exact") + note)
    from scipy.special import ndtr

    mean = n * (n + 1) / 4
    var = (n * (n + 1) * (2 * n + 1) - float(np.sum(sizes**3 - sizes)) / 2) / 24
    z = (w_plus - mean) / math.sqrt(var)
    detail = "normal approximation with tie correction" if ties else "normal approximation"
    return TestResult("Wilcoxon signed-rank", statistic, float(2 * ndtr(-abs(z))), detail + note)


# ---------------------------------------------------------------------------------------------- resampling tests
def _signed_sums(x: np.ndarray) -> np.ndarray:
    """``sum(s * x)`` for all ``2^len(x)`` sign vectors ``s``."""
    sums = np.zeros(1)
    for value in x:
        sums = np.concatenate((sums + value, sums - value))
    return sums


def randomization(a: ArrayLike, b: ArrayLike, *, resamples: int = 10000, seed: int = 0,
                  exact_up_to: int = 20) -> TestResult:
    """Fisher's paired randomisation (sign-flip) test on the mean difference, two-sided.

    Exact over all ``2^n`` sign vectors when ``n <= exact_up_to`` (at most 40), otherwise ``resamples`` random
    sign vectors from ``numpy.random.default_rng(seed)`` with ``p = (count + 1) / (resamples + 1)``.
    """
    d = _differences(a, b)
    return randomizations([d], resamples=resamples, seed=seed, exact_up_to=exact_up_to)[0]


def randomizations(differences: Sequence[ArrayLike], *, resamples: int = 10000, seed: int = 0,
                   exact_up_to: int = 20) -> list[TestResult]:
    """:func:`randomization` of each vector of paired differences ``d = a - b``; the random sign vectors are drawn
    once for all the vectors of one length (:func:`sign_flip_sums`)."""
    resamples = _count(resamples, "resamples", 1)
    seed = _count(seed, "seed", 0)
    exact_up_to = _count(exact_up_to, "exact_up_to", 0, EXACT_RANDOMIZATION_LIMIT)
    ds = [_given_differences(d) for d in differences]
    out: list[TestResult | None] = [None] * len(ds)
    sampled: list[int] = []
    for i, d in enumerate(ds):
        n = len(d)
        if n <= exact_up_to:
            out[i] = _exact_randomization(d)
        else:
            sampled.append(i)
    for n, group in _by_length([ds[i] for i in sampled]).items():
        members = [sampled[g] for g in group]
        sums = sign_flip_sums(np.column_stack([ds[i] for i in members]), resamples, seed)
        for col, i in enumerate(members):
            observed = float(ds[i].mean())
            threshold = abs(observed) - TOL  # on the mean; a sign vector counts if |mean(s * d)| >= threshold
            count = int(np.count_nonzero(np.abs(sums[:, col]) / n >= threshold))
            out[i] = TestResult("randomization", observed, (count + 1) / (resamples + 1),
                                f"{resamples} random sign flips, seed {seed}")
    return [r for r in out if r is not None]


def _exact_randomization(d: np.ndarray) -> TestResult:
    n = len(d)
    observed = float(d.mean())
    threshold = abs(observed) - TOL
    # meet in the middle: every s is a pair (s1, s2) over the two halves, sum(s * d) = u + v
    u = _signed_sums(d[: n // 2])
    v = np.sort(_signed_sums(d[n // 2:]))
    if threshold <= 0:
        count = len(u) * len(v)
    else:
        high = len(v) - np.searchsorted(v, n * threshold - u, side="left")  # u + v >= n * threshold
        low = np.searchsorted(v, -n * threshold - u, side="right")  # u + v <= -n * threshold
        count = int(high.sum() + low.sum())
    return TestResult("randomization", observed, count / 2.0**n, f"exact, all 2^{n} sign vectors")


def bootstrap_test(a: ArrayLike, b: ArrayLike, *, resamples: int = 10000, seed: int = 0) -> TestResult:
    """Paired bootstrap test of the mean difference, studentized (the bootstrap-t of Efron & Tibshirani 1993
    §16.4 and §12.5, as Sakai 2006 uses it for IR), two-sided.

    ``t = mean(d) / (sd(d) / sqrt(n))``; resample ``d`` with replacement and compare ``|t*|`` with ``|t|``,
    ``t* = (mean(d*) - mean(d)) / (sd(d*) / sqrt(n))``; ``p = (#{|t*| >= |t|} + 1) / (resamples + 1)``. Centring
    each resample on the observed mean imposes the null; dividing by each resample's own spread keeps the
    test's size near alpha with few queries (the unstudentized shift test rejects about 13% of true nulls at
    n = 6 and 7% at n = 25). Differences all zero give ``p = 1``; all equal and non-zero, the smallest p.
    """
    return bootstrap_tests([_differences(a, b)], resamples=resamples, seed=seed)[0]


def bootstrap_tests(differences: Sequence[ArrayLike], *, resamples: int = 10000, seed: int = 0) -> list[TestResult]:
    """:func:`bootstrap_test` of each vector of paired differences ``d = a - b``, the resamples drawn once for all
    the vectors of one length. With ``c = d - mean(d)`` and ``w`` the draw counts of a resample, ``mean(d*) -
    mean(d) = w.c / n`` and ``(n - 1) var(d*) = w.c^2 - (w.c)^2 / n`` (two columns of :func:`resample_sums`); a
    resample whose values all agree (``var(d*)`` below ``(1e-12 max|d|)^2``) has no spread: ``t* = 0`` when its mean
    is ``mean(d)`` (within 1e-12), +-inf otherwise."""
    return bootstrap([], differences, resamples=resamples, seed=seed)[1]


def bootstrap(vectors: Sequence[ArrayLike], differences: Sequence[ArrayLike], *, level: float = 0.95,
              resamples: int = 10000, seed: int = 0,
              method: str = "percentile") -> tuple[list[tuple[float, float]], list[TestResult]]:
    """:func:`bootstrap_ci` of each of ``vectors`` and :func:`bootstrap_test` of each of ``differences`` (paired
    differences ``a - b``), from one pass over the draws for all the vectors of one length: the intervals and
    tests of every metric and system of a comparison share their resamples, as they do one by one."""
    xs, level, resamples, seed = _interval_inputs(vectors, level, resamples, seed, method)
    ds = [_given_differences(d) for d in differences]
    test_sums, interval_sums = _bootstrap_sums(ds, xs, resamples, seed)
    return ([_interval(x, s, level, resamples, method) for x, s in zip(xs, interval_sums, strict=True)],
            [_bootstrap_result(d, s, resamples, seed) for d, s in zip(ds, test_sums, strict=True)])


def _bootstrap_sums(differences: Sequence[np.ndarray], vectors: Sequence[np.ndarray], resamples: int,
                    seed: int) -> tuple[list[np.ndarray | None], list[np.ndarray | None]]:
    """Bootstrap sums for the tests of ``differences`` (columns ``c`` and ``c^2``, ``c = d - mean(d)``; None for
    differences that do not vary: their test needs none) and for the intervals of ``vectors`` (the column
    itself; None for constant vectors); one pass over the draws per length."""
    columns: list[np.ndarray] = []
    slots: list[tuple[int, int]] = []  # (kind 0 test / 1 interval, index)
    for i, d in enumerate(differences):
        if not _constant_differences(d):
            c = d - d.mean()
            columns += [c, c * c]
            slots.append((0, i))
    for i, x in enumerate(vectors):
        if not np.all(x == x[0]):
            columns.append(x)
            slots.append((1, i))
    tests: list[np.ndarray | None] = [None] * len(differences)
    intervals: list[np.ndarray | None] = [None] * len(vectors)
    widths = [2 if kind == 0 else 1 for kind, _ in slots]
    starts = np.concatenate(([0], np.cumsum(widths)))
    by_length: dict[int, list[int]] = {}
    for k, (kind, i) in enumerate(slots):
        by_length.setdefault(len(differences[i] if kind == 0 else vectors[i]), []).append(k)
    for _, members in by_length.items():
        picked = [j for k in members for j in range(starts[k], starts[k + 1])]
        sums = resample_sums(np.column_stack([columns[j] for j in picked]), resamples, seed)
        at = 0
        for k in members:
            kind, i = slots[k]
            block = sums[:, at:at + widths[k]]
            at += widths[k]
            if kind == 0:
                tests[i] = block
            else:
                intervals[i] = block[:, 0]
    return tests, intervals


def _constant_differences(d: np.ndarray) -> bool:
    """True when the differences do not vary: the bootstrap test needs no resampling then."""
    return float(d.std(ddof=1)) <= TOL * max(1.0, abs(float(d.mean())))


def _bootstrap_result(d: np.ndarray, sums: np.ndarray | None, resamples: int, seed: int) -> TestResult:
    """The bootstrap test of ``d`` from its resample sums of ``c`` and ``c^2`` (see :func:`bootstrap_tests`)."""
    observed = float(d.mean())
    detail = f"{resamples} studentized bootstrap resamples of the differences, seed {seed}"
    if sums is None:
        p = 1.0 if abs(observed) <= TOL else 1 / (resamples + 1)
        return TestResult("bootstrap", observed, p, detail + "; the differences do not vary")
    n = len(d)
    t = observed / (float(d.std(ddof=1)) / math.sqrt(n))
    s1, s2 = sums[:, 0], sums[:, 1]
    shift = s1 / n  # mean(d*) - mean(d)
    variance = np.maximum(s2 - s1 * s1 / n, 0.0) / (n - 1)
    spread = np.sqrt(variance / n)
    flat = variance <= (TOL * max(1.0, float(np.abs(d).max()))) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        t_star = np.where(~flat, shift / np.where(flat, 1.0, spread),
                          np.where(np.abs(shift) <= TOL, 0.0, np.sign(shift) * np.inf))
    count = int(np.count_nonzero(np.abs(t_star) >= abs(t) - TOL))
    return TestResult("bootstrap", observed, (count + 1) / (resamples + 1), detail)


def bootstrap_ci(values: ArrayLike, *, level: float = 0.95, resamples: int = 10000, seed: int = 0,
                 method: str = "percentile") -> tuple[float, float]:
    """Bootstrap confidence interval of the mean of ``values``: "percentile" or "bca" (as scipy's "BCa").

    A constant vector gives ``(c, c)``. For "bca", the share of resampled means below the mean is kept within
    ``[1 / (2 resamples), 1 - 1 / (2 resamples)]`` so that the bias correction stays finite (scipy gives NaN).
    """
    return bootstrap_cis([values], level=level, resamples=resamples, seed=seed, method=method)[0]


def bootstrap_cis(vectors: Sequence[ArrayLike], *, level: float = 0.95, resamples: int = 10000, seed: int = 0,
                  method: str = "percentile") -> list[tuple[float, float]]:
    """:func:`bootstrap_ci` of each vector, the resamples drawn once for all the vectors of one length."""
    return bootstrap(vectors, [], level=level, resamples=resamples, seed=seed, method=method)[0]


def _interval_inputs(vectors: Sequence[ArrayLike], level: float, resamples: int, seed: int,
                     method: str) -> tuple[list[np.ndarray], float, int, int]:
    xs = [_vector(v, "values") for v in vectors]
    for x in xs:
        if len(x) < 2:
            raise InputError(f"a bootstrap interval needs at least 2 values; got {len(x)}")
    level = check_fraction(level, "level", "0.95")
    resamples = _count(resamples, "resamples", 1)
    seed = _count(seed, "seed", 0)
    _choice(method, "bootstrap interval method", CI_METHODS)
    return xs, float(level), resamples, seed


def _interval(x: np.ndarray, sums: np.ndarray | None, level: float, resamples: int,
              method: str) -> tuple[float, float]:
    """The interval of the mean of ``x`` from its resample sums (None: ``x`` is constant)."""
    if sums is None:
        return float(x[0]), float(x[0])
    means = sums / len(x)
    alpha = (1 - level) / 2
    if method == "percentile":
        low, high = np.quantile(means, [alpha, 1 - alpha])
        return float(low), float(high)
    from scipy.special import ndtr, ndtri

    theta = x.mean()
    below = (np.count_nonzero(means < theta - TOL) + np.count_nonzero(means <= theta + TOL)) / (2 * resamples)
    z0 = float(ndtri(min(max(below, 0.5 / resamples), 1 - 0.5 / resamples)))
    n = len(x)
    jackknife = (x.sum() - x) / (n - 1)
    u = (n - 1) * (jackknife.mean() - jackknife)
    accel = float(np.sum(u**3) / (6 * np.sum(u**2) ** 1.5))
    levels = []
    for z in (float(ndtri(alpha)), -float(ndtri(alpha))):
        levels.append(float(ndtr(z0 + (z0 + z) / (1 - accel * (z0 + z)))))
    low, high = np.quantile(means, levels)
    return float(low), float(high)


# ---------------------------------------------------------------------------------------------- corrections
def correct(p_values: ArrayLike, method: str = "holm") -> np.ndarray:
    """Adjusted p-values, in the input order: "holm", "bonferroni", "bh" (Benjamini-Hochberg) or "none"."""
    _choice(method, "correction", CORRECTIONS)
    p = finite_vector(p_values, "p_values", "test", "a comparison that could not be tested has no p-value: leave it "
                      "out of the correction (as compare does) rather than giving NaN")
    if np.any((p < 0) | (p > 1)):
        raise InputError(f"p-values must lie in [0, 1]; got {p[(p < 0) | (p > 1)][:5].tolist()}")
    m = len(p)
    if method == "none" or m == 0:
        return p.copy()
    if method == "bonferroni":
        return np.minimum(1.0, p * m)
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if method == "holm":  # step-down: (m - i + 1) p_(i), running maximum from the smallest
        adjusted = np.maximum.accumulate(ranked * np.arange(m, 0, -1))
    else:  # "bh", step-up: m p_(i) / i, running minimum from the largest
        adjusted = np.minimum.accumulate((ranked * m / np.arange(1, m + 1))[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(1.0, adjusted)
    return out


# ---------------------------------------------------------------------------------------------- descriptive
def effect_size(a: ArrayLike, b: ArrayLike) -> float:
    """Cohen's ``d_z = mean(d) / sd(d)`` (``ddof=1``) of the paired differences; 0 if all are 0, +-inf if all equal."""
    d = _differences(a, b)
    if np.all(d == d[0]):
        return 0.0 if d[0] == 0 else math.copysign(math.inf, d[0])
    return float(d.mean() / d.std(ddof=1))


def wins_ties_losses(a: ArrayLike, b: ArrayLike, *, tol: float = 0.0) -> tuple[int, int, int]:
    """Number of queries where ``a - b > tol``, ``|a - b| <= tol`` and ``a - b < -tol``."""
    if isinstance(tol, bool) or not isinstance(tol, int | float) or not tol >= 0 or not math.isfinite(tol):
        raise PolicyError(f"tol must be a finite number >= 0; got {tol!r}")
    d = _differences(a, b, min_n=1)
    wins, losses = int(np.count_nonzero(d > tol)), int(np.count_nonzero(d < -tol))
    return wins, len(d) - wins - losses, losses
