"""Agreement between two sets of relevance labels (say human and LLM): per (query, doc) pair, and between the
system rankings the two sets induce.

Label agreement
---------------

Only the N pairs judged in *both* sets are compared; pairs judged in one set only are counted and named
(:class:`LabelAgreement`), never treated as grade 0. With ``a`` and ``b`` the two grade vectors over those pairs,
categories ``c_0 < ... < c_{k-1}`` (default: the sorted union of the grades seen in either vector), the
confusion counts ``C_ij = #{a = c_i, b = c_j}``, proportions ``O = C / N``, marginals ``r = O 1``, ``s = 1 O`` and
the agreement expected by chance ``E_ij = r_i s_j``:

* :func:`cohen_kappa` -- Cohen's kappa (Cohen 1960), weighted kappa (Cohen 1968)::

      kappa = 1 - sum_ij w_ij O_ij / sum_ij w_ij E_ij

  with disagreement weights over the category *indices* ``i, j`` (not the grade values): unweighted
  ``w_ij = [i != j]`` (then ``kappa = (p_o - p_e) / (1 - p_e)``), linear ``|i - j| / (k - 1)``, quadratic
  ``((i - j) / (k - 1))^2``. This is scikit-learn's ``cohen_kappa_score``. Because the weights follow the
  indices, a grade nobody used shifts them: pass ``categories`` (the whole scale) to keep ``1`` and ``3`` two
  steps apart when nobody gave ``2``. The numerator and denominator are reported as the observed and expected
  disagreement ``D_o`` and ``D_e``.
* :func:`binary_kappa` -- unweighted kappa of ``[a >= t]`` against ``[b >= t]``; ``t = 2`` by default, as UMBRELA
  reports on the 0-3 TREC scale.
* :func:`krippendorff_alpha` -- Krippendorff's alpha (Krippendorff 2011, "Computing Krippendorff's
  Alpha-Reliability"), from the coincidence matrix of pairable values: every unit ``u`` with ``m_u >= 2`` values
  adds ``1 / (m_u - 1)`` to ``o_ck`` for each ordered pair ``(c, k)`` of values given by different coders;
  ``n_c = sum_k o_ck``, ``n = sum_c n_c``::

      alpha = 1 - D_o / D_e,   D_o = sum_ck o_ck d2_ck / n,   D_e = sum_ck n_c n_k d2_ck / (n (n - 1))

  with ``d2`` nominal ``[c != k]``, interval ``(c - k)^2``, or ordinal
  ``(sum_{g=c..k} n_g - (n_c + n_k) / 2)^2`` over the values in order (it uses the frequencies of the pairable
  values, not the numbers). For two coders without missing values ``o = C + C^T`` and ``n = 2N``.
  :func:`krippendorff_alpha_data` takes general reliability data: a units x coders matrix with NaN where a coder
  gave no value.

A statistic whose expected disagreement is 0 (every compared grade is the same value: chance would agree as
well) is 0/0. It is returned as NaN with the reason in :attr:`Coefficient.reason`, never as 1 or 0.

System-ranking agreement
------------------------

Systems ``s`` are ranked by their means ``x_s`` under labels ``a`` and ``y_s`` under labels ``b`` (higher is
better). Means within ``1e-12`` (relative, once above 1) of each other are ties.

* :func:`kendall_tau` -- Kendall's tau-b, the tie-corrected variant (scipy's and pandas' default):
  ``(C - D) / sqrt((n0 - n1)(n0 - n2))`` with ``C``/``D`` the concordant/discordant pairs, ``n0 = N(N-1)/2``,
  ``n1``/``n2`` the pairs tied in ``x``/in ``y``. Needs at least 2 systems.
* :func:`tau_ap` -- the AP rank correlation (Yilmaz, Aslam & Robertson 2008), top-weighted: walking down one
  ranking, ``tau_AP = 2/(N-1) sum_{i=2..N} C(i)/(i-1) - 1`` where ``C(i)`` counts the systems above the i-th that
  the other ranking also puts above it. It is asymmetric; :func:`tau_ap` returns by default the symmetric
  version, the mean of the two directions. Ties follow tau_AP-b (Urbano & Marrero 2017, "The Treatment of Ties
  in AP Correlation", ICTIR; ircor's ``tauAP_b``, which TREC AutoJudge uses): a system is compared only with
  the ``p(i)`` systems strictly above it in the walked ranking (``p(i)`` replaces ``i - 1``), the first tie group
  is not walked (the sum is averaged over the other systems instead of dividing by ``N - 1``), and a pair that
  the other ranking ties counts as not concordant. Without ties this is exactly the symmetric tau_AP. Needs at
  least 3 systems.
* :func:`spearman_rho` -- Spearman's rho: the Pearson correlation of the average ranks.

>>> a = [0, 0, 0, 1, 1, 2, 2, 2, 2, 2]
>>> b = [0, 0, 1, 1, 2, 1, 2, 2, 2, 0]
>>> round(cohen_kappa(a, b).value, 4), round(cohen_kappa(a, b, weights="quadratic").value, 4)
(0.3846, 0.5205)
>>> cohen_kappa([2, 2, 2], [2, 2, 2]).reason
'every compared grade is 2 in both label sets: chance agreement is complete and kappa is 0/0'
>>> round(tau_ap([4, 3, 2, 1], [3, 4, 2, 1]).value, 4), round(tau_ap([4, 3, 2, 1], [4, 3, 1, 2]).value, 4)
(0.3333, 0.7778)
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from gainscope.core.judgments import Judgments
from gainscope.core.policies import Policies
from gainscope.deferred import deferred_module
from gainscope.errors import InconsistentInputError, InputError, PolicyError, format_ids
from gainscope.evaluation import MetricsArg, evaluate_runs, resolve_metrics
from gainscope.results import Results
from gainscope.stats import TOL, finite_vector

if TYPE_CHECKING:
    import polars as pl
else:
    pl = deferred_module("polars")

__all__ = [
    "LEVELS",
    "WEIGHTS",
    "Agreement",
    "Coefficient",
    "Correlation",
    "LabelAgreement",
    "PairCounts",
    "RankingAgreement",
    "agreement",
    "binary_kappa",
    "cohen_kappa",
    "concordance",
    "confusion_matrix",
    "kendall_tau",
    "krippendorff_alpha",
    "krippendorff_alpha_data",
    "label_agreement",
    "observed_agreement",
    "ranking_agreement",
    "spearman_rho",
    "tau_ap",
]

Weights = Literal["linear", "quadratic"] | None
Level = Literal["nominal", "ordinal", "interval"]
#: kappa weightings (None = unweighted)
WEIGHTS: tuple[str | None, ...] = (None, "linear", "quadratic")
#: levels of measurement of Krippendorff's alpha
LEVELS = ("nominal", "ordinal", "interval")
#: how many pair or query ids a report names
EXAMPLES = 5


# ---------------------------------------------------------------------------------------------- result types
@dataclass(frozen=True)
class Coefficient:
    """A chance-corrected agreement coefficient ``1 - observed / expected`` (kappa or alpha).

    ``observed`` and ``expected`` are the disagreements ``D_o`` and ``D_e`` of the module docstring; ``n`` is the
    number of pairs (kappa) or of pairable values (alpha). ``value`` is NaN when ``expected`` is 0, and
    ``reason`` then says why.
    """

    name: str
    value: float
    observed: float
    expected: float
    n: int
    reason: str = ""

    @property
    def defined(self) -> bool:
        """False when the coefficient is 0/0 (see ``reason``)."""
        return not math.isnan(self.value)

    def __float__(self) -> float:
        return self.value

    def to_dict(self) -> dict[str, Any]:
        """Plain data; NaN as None."""
        return {"name": self.name, "value": _finite(self.value), "observed_disagreement": self.observed,
                "expected_disagreement": self.expected, "n": self.n, "reason": self.reason or None}


@dataclass(frozen=True)
class Correlation:
    """A rank correlation between two score vectors over ``n`` systems; NaN with a ``reason`` when undefined.
    ``detail`` says which variant was computed (and, for Kendall, the pair counts)."""

    name: str
    value: float
    n: int
    detail: str = ""
    reason: str = ""

    @property
    def defined(self) -> bool:
        """False when the correlation is undefined (see ``reason``)."""
        return not math.isnan(self.value)

    def __float__(self) -> float:
        return self.value

    def to_dict(self) -> dict[str, Any]:
        """Plain data; NaN as None."""
        return {"name": self.name, "value": _finite(self.value), "n": self.n, "detail": self.detail,
                "reason": self.reason or None}


@dataclass(frozen=True)
class PairCounts:
    """The ``N(N-1)/2`` pairs of two score vectors: concordant, discordant, tied in ``x`` (whatever ``y``), tied in
    ``y`` (whatever ``x``), and tied in both."""

    concordant: int
    discordant: int
    ties_x: int
    ties_y: int
    ties_both: int

    @property
    def pairs(self) -> int:
        """All pairs: ``concordant + discordant + ties_x + ties_y - ties_both``."""
        return self.concordant + self.discordant + self.ties_x + self.ties_y - self.ties_both


# ---------------------------------------------------------------------------------------------- validation
def _finite(x: float) -> float | None:
    return None if math.isnan(x) or math.isinf(x) else x


def _number(x: float) -> float:
    """A grade for display and JSON: ``2`` rather than ``2.0`` when it is whole."""
    return int(x) if float(x).is_integer() else float(x)


def _vector(values: ArrayLike, name: str, what: str) -> np.ndarray:
    return finite_vector(values, name, what, f"every {what} needs a finite value")


def _pair(a: ArrayLike, b: ArrayLike, what: str = "pair", min_n: int = 1) -> tuple[np.ndarray, np.ndarray]:
    x, y = _vector(a, "a", what), _vector(b, "b", what)
    if len(x) != len(y):
        raise InputError(f"a and b must have one value per {what}, in the same order; got {len(x)} and {len(y)} "
                         "values")
    if len(x) < min_n:
        plural = what if min_n == 1 else what + "s"
        raise InputError(f"need at least {min_n} {plural} to compare; got {len(x)}")
    return x, y


def _categories(x: np.ndarray, y: np.ndarray, categories: ArrayLike | None) -> np.ndarray:
    """The categories in scale order: the given ones (unique, finite) or the sorted union of ``x`` and ``y``."""
    if categories is None:
        return np.union1d(x, y)
    cats = _vector(categories, "categories", "category")
    if len(cats) == 0:
        raise InputError("categories must name at least one grade")
    if len(np.unique(cats)) != len(cats):
        raise InputError(f"categories must be distinct; got {[_number(c) for c in cats]}")
    return cats


def _indices(x: np.ndarray, cats: np.ndarray, name: str) -> np.ndarray:
    """The index in ``cats`` of every value of ``x``; a value outside ``cats`` is an error."""
    order = np.argsort(cats, kind="stable")
    ordered = cats[order]
    pos = np.minimum(np.searchsorted(ordered, x), len(ordered) - 1)
    bad = ordered[pos] != x
    if np.any(bad):
        unknown = sorted({_number(v) for v in x[bad]})
        raise InputError(f"{name} has grade(s) {unknown} outside the categories {[_number(c) for c in cats]}; "
                         "list every grade of the scale")
    return order[pos]


def _choice(value: Any, name: str, allowed: Sequence[Any]) -> None:
    if value not in allowed:
        raise PolicyError(f"unknown {name} {value!r}; use one of: {', '.join(map(repr, allowed))}")


def _threshold(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise PolicyError(f"threshold must be a finite number (grade >= threshold is relevant); got {value!r}")
    return float(value)


# ---------------------------------------------------------------------------------------------- label agreement
def confusion_matrix(a: ArrayLike, b: ArrayLike, categories: ArrayLike | None = None
                     ) -> tuple[tuple[float, ...], np.ndarray]:
    """``(categories, C)`` with ``C[i, j]`` the number of pairs where ``a`` is ``categories[i]`` and ``b`` is
    ``categories[j]`` (rows ``a``, columns ``b``). Categories default to the sorted union of the grades."""
    x, y = _pair(a, b)
    cats = _categories(x, y, categories)
    k = len(cats)
    i, j = _indices(x, cats, "a"), _indices(y, cats, "b")
    counts = np.bincount(i * k + j, minlength=k * k).reshape(k, k)
    return tuple(_number(c) for c in cats), counts


def observed_agreement(a: ArrayLike, b: ArrayLike) -> float:
    """The share of pairs with the same grade in ``a`` and ``b``."""
    x, y = _pair(a, b)
    return float(np.mean(x == y))


def _weights(k: int, weights: Weights) -> np.ndarray:
    """Disagreement weights over category indices (0 on the diagonal)."""
    i = np.arange(k)
    d = np.abs(i[:, None] - i[None, :]) / max(k - 1, 1)
    if weights is None:
        return (d > 0).astype(np.float64)
    return d if weights == "linear" else d**2


def _single_value_reason(x: np.ndarray, y: np.ndarray, what: str) -> str:
    values = sorted({_number(v) for v in np.concatenate((x, y))})
    if len(values) == 1:
        return (f"every compared grade is {values[0]} in both label sets: chance agreement is complete and "
                f"{what} is 0/0")
    return f"chance agreement is complete (expected disagreement 0) and {what} is 0/0"


def cohen_kappa(a: ArrayLike, b: ArrayLike, *, weights: Weights = None,
                categories: ArrayLike | None = None) -> Coefficient:
    """Cohen's kappa of two raters over the same items: ``1 - sum(w O) / sum(w E)``.

    ``weights``: None (unweighted, ``w = [i != j]``), ``"linear"`` (``|i - j| / (k - 1)``) or ``"quadratic"``
    (``((i - j) / (k - 1))^2``), over the *indices* of ``categories`` (default: the sorted union of the grades).
    NaN with a reason when the expected disagreement is 0 (both raters use one and the same category only).
    """
    _choice(weights, "kappa weighting", WEIGHTS)
    x, y = _pair(a, b)
    cats, counts = confusion_matrix(x, y, categories)
    n = len(x)
    observed = counts / n
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    w = _weights(len(cats), weights)
    d_o, d_e = float(np.sum(w * observed)), float(np.sum(w * expected))
    name = "Cohen's kappa" if weights is None else f"Cohen's kappa, {weights} weights"
    if d_e <= 0:
        return Coefficient(name, math.nan, d_o, d_e, n, _single_value_reason(x, y, "kappa"))
    return Coefficient(name, 1.0 - d_o / d_e, d_o, d_e, n)


def binary_kappa(a: ArrayLike, b: ArrayLike, *, threshold: float = 2) -> Coefficient:
    """Unweighted Cohen's kappa of ``a >= threshold`` against ``b >= threshold`` (relevant / not relevant)."""
    t = _threshold(threshold)
    x, y = _pair(a, b)
    result = cohen_kappa(x >= t, y >= t, categories=[0, 1])
    name = f"Cohen's kappa, binarised at grade >= {_number(t)}"
    reason = ""
    if not result.defined:
        side = "relevant" if bool(x[0] >= t) else "not relevant"
        reason = f"every compared pair is {side} at grade >= {_number(t)} in both label sets: kappa is 0/0"
    return replace(result, name=name, reason=reason)


def _ordinal_d2(n_c: np.ndarray) -> np.ndarray:
    """Krippendorff's ordinal metric ``(sum_{g=c..k} n_g - (n_c + n_k) / 2)^2`` for values in order."""
    cum = np.cumsum(n_c)
    # for c <= k: sum_{g=c..k} n_g = cum[k] - cum[c] + n_c, minus (n_c + n_k) / 2; the square is symmetric
    d = cum[None, :] - cum[:, None] + (n_c[:, None] - n_c[None, :]) / 2
    return d**2


def _alpha(o: np.ndarray, values: np.ndarray, level: str) -> Coefficient:
    """Krippendorff's alpha from a coincidence matrix ``o`` over ``values`` (sorted)."""
    n_c = o.sum(axis=1)
    n = float(n_c.sum())
    if level == "nominal":
        d2 = 1.0 - np.eye(len(values))
    elif level == "interval":
        d2 = (values[:, None] - values[None, :]) ** 2
    else:
        d2 = _ordinal_d2(n_c)
    d_o = float(np.sum(o * d2)) / n
    d_e = float(np.sum(np.outer(n_c, n_c) * d2)) / (n * (n - 1))
    name = f"Krippendorff's alpha, {level}"
    count = round(n)
    if d_e <= 0:
        value = _number(values[n_c > 0][0])
        reason = f"every pairable value is {value}: the expected disagreement is 0 and alpha is 0/0"
        return Coefficient(name, math.nan, d_o, d_e, count, reason)
    return Coefficient(name, 1.0 - d_o / d_e, d_o, d_e, count)


def krippendorff_alpha(a: ArrayLike, b: ArrayLike, *, level: Level = "nominal") -> Coefficient:
    """Krippendorff's alpha of two coders who both coded every unit: ``o = C + C^T`` from the confusion counts.

    ``level``: ``"nominal"``, ``"ordinal"`` or ``"interval"`` (see the module docstring for the metrics).
    NaN with a reason when every value is the same.
    """
    _choice(level, "level of measurement", LEVELS)
    x, y = _pair(a, b)
    cats, counts = confusion_matrix(x, y)
    o = (counts + counts.T).astype(np.float64)  # each unit: (a, b) and (b, a), weight 1 / (2 - 1)
    return _alpha(o, np.asarray(cats, dtype=np.float64), level)


def krippendorff_alpha_data(data: ArrayLike, *, level: Level = "nominal") -> Coefficient:
    """Krippendorff's alpha of general reliability data: a ``units x coders`` matrix, NaN where a coder gave no
    value. Units with fewer than two values are not pairable and are left out."""
    _choice(level, "level of measurement", LEVELS)
    try:
        m = np.asarray(data, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"reliability data must be numbers (NaN for missing values): {exc}") from None
    if m.ndim != 2:
        raise InputError(f"reliability data must be a units x coders matrix; got shape {m.shape}")
    if np.any(np.isinf(m)):
        raise InputError("reliability data has infinite values; use NaN for a missing value")
    present = ~np.isnan(m)
    m_u = present.sum(axis=1)
    keep = m_u >= 2
    if not np.any(keep):
        raise InputError("no unit has values from two coders or more: nothing is pairable")
    m, present, m_u = m[keep], present[keep], m_u[keep]
    values = np.unique(m[present])
    rows = np.nonzero(present)[0]
    counts = np.zeros((len(m), len(values)))
    np.add.at(counts, (rows, np.searchsorted(values, m[present])), 1.0)  # n_uc: coders giving c in unit u
    weighted = counts / (m_u - 1)[:, None]
    o = weighted.T @ counts - np.diag(weighted.sum(axis=0))  # sum_u (n_uc n_uk - [c = k] n_uc) / (m_u - 1)
    return _alpha(o, values, level)


@dataclass(frozen=True, eq=False)
class LabelAgreement:
    """Agreement of two label sets ``a`` and ``b`` over the ``n`` (query, doc) pairs judged in both.

    ``only_in_a`` / ``only_in_b`` count the pairs judged in one set only (the first few are in ``*_examples`` as
    ``query/doc``); ``queries_only_in_a`` / ``queries_only_in_b`` name the queries with no judgment at all in the
    other set. ``confusion[i, j]`` counts the pairs graded ``categories[i]`` in ``a`` and ``categories[j]`` in
    ``b``.
    """

    n: int
    only_in_a: int
    only_in_b: int
    only_in_a_examples: tuple[str, ...]
    only_in_b_examples: tuple[str, ...]
    queries_only_in_a: tuple[str, ...]
    queries_only_in_b: tuple[str, ...]
    categories: tuple[float, ...]
    confusion: np.ndarray
    observed_agreement: float
    kappa: Coefficient
    kappa_linear: Coefficient
    kappa_quadratic: Coefficient
    kappa_binary: Coefficient
    threshold: float
    alpha_nominal: Coefficient
    alpha_ordinal: Coefficient
    alpha_interval: Coefficient

    @property
    def judged_a(self) -> int:
        """Pairs judged in ``a``."""
        return self.n + self.only_in_a

    @property
    def judged_b(self) -> int:
        """Pairs judged in ``b``."""
        return self.n + self.only_in_b

    @property
    def counts_a(self) -> dict[float, int]:
        """Pairs per grade of ``a`` (over the compared pairs)."""
        return dict(zip(self.categories, self.confusion.sum(axis=1).tolist(), strict=True))

    @property
    def counts_b(self) -> dict[float, int]:
        """Pairs per grade of ``b`` (over the compared pairs)."""
        return dict(zip(self.categories, self.confusion.sum(axis=0).tolist(), strict=True))

    @property
    def coefficients(self) -> tuple[Coefficient, ...]:
        """The kappas and alphas, in display order."""
        return (self.kappa, self.kappa_linear, self.kappa_quadratic, self.kappa_binary, self.alpha_ordinal,
                self.alpha_nominal, self.alpha_interval)

    def to_dict(self) -> dict[str, Any]:
        """Plain data (NaN as None)."""
        per_grade = []
        for i, c in enumerate(self.categories):
            row = int(self.confusion[i].sum())
            same = int(self.confusion[i, i])
            per_grade.append({"grade": c, "a": row, "b": int(self.confusion[:, i].sum()), "both": same,
                              "share_of_a_matched": same / row if row else None})
        return {
            "pairs": self.n, "judged_a": self.judged_a, "judged_b": self.judged_b,
            "only_in_a": self.only_in_a, "only_in_b": self.only_in_b,
            "only_in_a_examples": list(self.only_in_a_examples), "only_in_b_examples": list(self.only_in_b_examples),
            "queries_only_in_a": list(self.queries_only_in_a), "queries_only_in_b": list(self.queries_only_in_b),
            "categories": list(self.categories), "confusion": self.confusion.tolist(), "per_grade": per_grade,
            "observed_agreement": self.observed_agreement, "threshold": _number(self.threshold),
            "kappa": self.kappa.to_dict(), "kappa_linear": self.kappa_linear.to_dict(),
            "kappa_quadratic": self.kappa_quadratic.to_dict(), "kappa_binary": self.kappa_binary.to_dict(),
            "alpha_nominal": self.alpha_nominal.to_dict(), "alpha_ordinal": self.alpha_ordinal.to_dict(),
            "alpha_interval": self.alpha_interval.to_dict(),
        }


def _pairs_frame(j: Judgments) -> pl.DataFrame:
    return j.frame.select("query_id", "doc_id", pl.col("grade").cast(pl.Float64))


def _examples(frame: pl.DataFrame) -> tuple[str, ...]:
    head = frame.sort("query_id", "doc_id").head(EXAMPLES)
    return tuple(f"{q}/{d}" for q, d in head.select("query_id", "doc_id").iter_rows())


def _no_common_pair(fa: pl.DataFrame, fb: pl.DataFrame, names: tuple[str, str]) -> InconsistentInputError:
    """The error for label sets without a common pair, naming its cause: no common query, or common queries whose
    judged documents differ (as when the LLM labels were made skipping the pairs humans judged)."""
    na, nb = names
    qa, qb = set(fa["query_id"].to_list()), set(fb["query_id"].to_list())
    shared = sorted(qa & qb)
    counts = f"{fa.height} {na} and {fb.height} {nb} judgments"
    if not shared:
        return InconsistentInputError(
            f"no (query, doc) pair is judged in both label sets, because no query is ({counts}; {na} queries "
            f"{format_ids(sorted(qa))}, {nb} queries {format_ids(sorted(qb))}); check that both label the same "
            "queries, with the same ids")
    q = shared[0]
    docs_a, docs_b = (sorted(f.filter(pl.col("query_id") == q)["doc_id"].to_list()) for f in (fa, fb))
    return InconsistentInputError(
        f"no (query, doc) pair is judged in both label sets: they share {len(shared)} "
        f"{'query' if len(shared) == 1 else 'queries'}, but within them not one document ({counts}; query {q}: "
        f"{na} judged {format_ids(docs_a)}, {nb} judged {format_ids(docs_b)}). Agreement compares labels of the "
        "same pairs. `gainscope judge` skips the pairs humans judged (its --human labels and the human labels in "
        "its store) unless given --judge-human-pairs: to compare with the humans, judge their pairs, e.g. "
        "`gainscope judge --pairs HUMAN_QRELS --judge-human-pairs ...`. Else check that document ids are spelled "
        "the same in both")


def label_agreement(a: Judgments, b: Judgments, *, threshold: float = 2,
                    categories: ArrayLike | None = None, names: tuple[str, str] = ("a", "b")) -> LabelAgreement:
    """Every label statistic over the (query, doc) pairs judged in both ``a`` and ``b`` (``names`` name them in
    messages).

    An :class:`~gainscope.errors.InconsistentInputError` when no pair is judged in both, naming why: no query in
    common, or common queries whose judged documents differ.
    """
    t = _threshold(threshold)
    fa, fb = _pairs_frame(a), _pairs_frame(b)
    keys = ["query_id", "doc_id"]
    both = fa.join(fb, on=keys, how="inner", suffix="_b")
    only_a, only_b = fa.join(fb, on=keys, how="anti"), fb.join(fa, on=keys, how="anti")
    if both.height == 0:
        raise _no_common_pair(fa, fb, names)
    x, y = both["grade"].to_numpy(), both["grade_b"].to_numpy()
    cats, counts = confusion_matrix(x, y, categories)
    qa, qb = set(fa["query_id"].unique().to_list()), set(fb["query_id"].unique().to_list())
    return LabelAgreement(
        n=both.height, only_in_a=only_a.height, only_in_b=only_b.height, only_in_a_examples=_examples(only_a),
        only_in_b_examples=_examples(only_b), queries_only_in_a=tuple(sorted(qa - qb)),
        queries_only_in_b=tuple(sorted(qb - qa)), categories=cats, confusion=counts,
        observed_agreement=observed_agreement(x, y), kappa=cohen_kappa(x, y, categories=cats),
        kappa_linear=cohen_kappa(x, y, weights="linear", categories=cats),
        kappa_quadratic=cohen_kappa(x, y, weights="quadratic", categories=cats),
        kappa_binary=binary_kappa(x, y, threshold=t), threshold=t,
        alpha_nominal=krippendorff_alpha(x, y, level="nominal"),
        alpha_ordinal=krippendorff_alpha(x, y, level="ordinal"),
        alpha_interval=krippendorff_alpha(x, y, level="interval"))


# ---------------------------------------------------------------------------------------------- rank correlations
def _dense_ranks(x: np.ndarray) -> np.ndarray:
    """0-based dense ranks, ascending; values within ``TOL`` (relative above 1) of their neighbour tie."""
    order = np.argsort(x, kind="stable")
    ordered = x[order]
    atol = TOL * max(1.0, float(np.abs(x).max(initial=0.0)))
    starts = np.concatenate(([True], np.diff(ordered) > atol))
    ranks = np.empty(len(x), dtype=np.int64)
    ranks[order] = np.cumsum(starts) - 1
    return ranks


def _scores(x: ArrayLike, y: ArrayLike, min_n: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    a, b = _pair(x, y, "system", min_n=1)
    if len(a) < min_n:
        raise InputError(f"{what} needs at least {min_n} systems; got {len(a)}")
    return _dense_ranks(a), _dense_ranks(b)


def _upper_signs(r: np.ndarray) -> np.ndarray:
    """``sign(r_j - r_i)`` for the pairs ``i < j``."""
    i, j = np.triu_indices(len(r), k=1)
    return np.sign(r[j] - r[i])


def concordance(x: ArrayLike, y: ArrayLike) -> PairCounts:
    """Concordant, discordant and tied pairs of two score vectors (ties within ``1e-12``, relative above 1)."""
    rx, ry = _scores(x, y, 2, "counting pairs")
    sx, sy = _upper_signs(rx), _upper_signs(ry)
    product = sx * sy
    return PairCounts(concordant=int(np.count_nonzero(product > 0)), discordant=int(np.count_nonzero(product < 0)),
                      ties_x=int(np.count_nonzero(sx == 0)), ties_y=int(np.count_nonzero(sy == 0)),
                      ties_both=int(np.count_nonzero((sx == 0) & (sy == 0))))


def kendall_tau(x: ArrayLike, y: ArrayLike) -> Correlation:
    """Kendall's tau-b: ``(C - D) / sqrt((n0 - n1)(n0 - n2))``; NaN with a reason when either vector is constant."""
    c = concordance(x, y)
    n = len(_vector(x, "x", "system"))
    n0 = c.pairs
    detail = (f"tau-b: {c.concordant} concordant, {c.discordant} discordant of {n0} pair{'s' if n0 != 1 else ''}; "
              f"{c.ties_x} tied in x, {c.ties_y} tied in y")
    if c.ties_x == n0 or c.ties_y == n0:
        side = "x" if c.ties_x == n0 else "y"
        return Correlation("Kendall tau-b", math.nan, n, detail, f"all {n} systems tie in {side}: tau-b is 0/0")
    value = (c.concordant - c.discordant) / math.sqrt((n0 - c.ties_x) * (n0 - c.ties_y))
    return Correlation("Kendall tau-b", value, n, detail)


def _tau_ap_walk(reference: np.ndarray, walked: np.ndarray) -> float:
    """tau_AP-b of the ranking ``walked`` against ``reference`` (dense ranks, higher = better); NaN when every
    system is in the first tie group of ``walked``."""
    above = walked[None, :] > walked[:, None]  # above[i, j]: j is strictly above i in the walked ranking
    agree = above & (reference[None, :] > reference[:, None])  # ... and strictly above i in the reference
    p = above.sum(axis=1)
    walk = p > 0  # the first tie group is not walked
    if not np.any(walk):
        return math.nan
    return float(2 * np.mean(agree.sum(axis=1)[walk] / p[walk]) - 1)


def tau_ap(x: ArrayLike, y: ArrayLike, *, symmetric: bool = True) -> Correlation:
    """AP rank correlation (Yilmaz, Aslam & Robertson 2008) with ties as tau_AP-b (Urbano & Marrero 2017).

    ``symmetric`` (default): the mean of both directions. Otherwise the ranking of ``y`` is walked with ``x`` as
    the reference (the tau_AP of an estimated ranking ``y`` against the true one ``x``). Higher scores rank
    higher. Needs at least 3 systems; NaN with a reason when every system ties in either vector.
    """
    rx, ry = _scores(x, y, 3, "tau_AP")
    n = len(rx)
    forward = _tau_ap_walk(rx, ry)
    value = (forward + _tau_ap_walk(ry, rx)) / 2 if symmetric else forward
    detail = ("symmetric: mean of both directions" if symmetric else "the ranking of y walked, x as reference") \
        + "; ties as tau_AP-b (Urbano & Marrero 2017)"
    if math.isnan(value):
        side = "x" if np.all(rx == rx[0]) else "y"
        return Correlation("tau_AP", math.nan, n, detail, f"all {n} systems tie in {side}: tau_AP is undefined")
    return Correlation("tau_AP", value, n, detail)


def _average_ranks(dense: np.ndarray) -> np.ndarray:
    sizes = np.bincount(dense)
    first = np.cumsum(sizes) - sizes  # 0-based position where each tie group starts
    return (first + (sizes + 1) / 2)[dense]


def spearman_rho(x: ArrayLike, y: ArrayLike) -> Correlation:
    """Spearman's rho: the Pearson correlation of the average ranks; NaN with a reason when either is constant."""
    rx, ry = _scores(x, y, 2, "Spearman's rho")
    n = len(rx)
    dx, dy = _average_ranks(rx), _average_ranks(ry)
    dx, dy = dx - dx.mean(), dy - dy.mean()
    sxx, syy = float(np.sum(dx * dx)), float(np.sum(dy * dy))
    detail = "Pearson correlation of average ranks"
    if sxx == 0 or syy == 0:
        side = "x" if sxx == 0 else "y"
        return Correlation("Spearman rho", math.nan, n, detail, f"all {n} systems tie in {side}: rho is 0/0")
    return Correlation("Spearman rho", float(np.sum(dx * dy)) / math.sqrt(sxx * syy), n, detail)


# ---------------------------------------------------------------------------------------------- system rankings
@dataclass(frozen=True)
class RankingAgreement:
    """The system rankings under one metric: the mean of every system under labels ``a`` and ``b`` (in the order
    the runs were given), and Kendall's tau-b, tau_AP and Spearman's rho between them."""

    metric: str
    systems: tuple[str, ...]
    a: tuple[float, ...]
    b: tuple[float, ...]
    kendall: Correlation
    tau_ap: Correlation
    spearman: Correlation

    def leaderboard(self, side: Literal["a", "b"]) -> list[tuple[int, str, float]]:
        """``(rank, system, mean)`` best first; tied means share the best rank of their group (1, 2, 2, 4)."""
        means = np.asarray(self.a if side == "a" else self.b, dtype=np.float64)
        dense = _dense_ranks(means)
        rank = 1 + np.array([np.count_nonzero(dense > d) for d in dense])
        order = np.argsort(-dense, kind="stable")
        return [(int(rank[i]), self.systems[i], float(means[i])) for i in order]

    def to_dict(self) -> dict[str, Any]:
        """Plain data (NaN as None)."""
        return {"metric": self.metric, "systems": list(self.systems),
                "a": [_finite(v) for v in self.a], "b": [_finite(v) for v in self.b],
                "leaderboard_a": [{"rank": r, "system": s, "mean": _finite(m)} for r, s, m in self.leaderboard("a")],
                "leaderboard_b": [{"rank": r, "system": s, "mean": _finite(m)} for r, s, m in self.leaderboard("b")],
                "kendall_tau_b": self.kendall.to_dict(), "tau_ap": self.tau_ap.to_dict(),
                "spearman_rho": self.spearman.to_dict()}


def ranking_agreement(metric: str, systems: Sequence[str], a: ArrayLike, b: ArrayLike) -> RankingAgreement:
    """Compare the rankings of ``systems`` by their scores ``a`` and ``b`` (at least 2 systems; tau_AP is NaN
    with a reason below 3)."""
    x, y = _pair(a, b, "system", min_n=2)
    if len(systems) != len(x):
        raise InputError(f"{len(systems)} system names for {len(x)} scores; give one name per system")
    if len(x) >= 3:
        tap = tau_ap(x, y)
    else:
        tap = Correlation("tau_AP", math.nan, len(x), "", f"tau_AP needs at least 3 systems; got {len(x)}")
    return RankingAgreement(metric=metric, systems=tuple(systems), a=tuple(x.tolist()), b=tuple(y.tolist()),
                            kendall=kendall_tau(x, y), tau_ap=tap, spearman=spearman_rho(x, y))


# ---------------------------------------------------------------------------------------------- all of it
@dataclass(frozen=True, eq=False)
class Agreement:
    """Label agreement and, when runs were given, one :class:`RankingAgreement` per metric. ``names`` are the
    display names of the label sets ``a`` and ``b``; ``results_a`` / ``results_b`` the evaluations behind the
    leaderboards."""

    labels: LabelAgreement
    rankings: tuple[RankingAgreement, ...] = ()
    names: tuple[str, str] = ("human", "LLM")
    policies: Policies | None = None
    notes: tuple[str, ...] = ()
    results_a: tuple[Results, ...] = field(default=(), repr=False)
    results_b: tuple[Results, ...] = field(default=(), repr=False)

    def ranking(self, metric: str) -> RankingAgreement:
        """The ranking agreement under ``metric`` (canonical name or any accepted spelling)."""
        known = [r.metric for r in self.rankings]
        key = metric if metric in known else str(resolve_metrics(metric)[0])
        for r in self.rankings:
            if r.metric == key:
                return r
        raise InputError(f"{metric!r} is not among the ranked metrics: {', '.join(known) or 'none (no runs)'}")

    def to_dict(self) -> dict[str, Any]:
        """Plain data (NaN as None)."""
        return {"names": {"a": self.names[0], "b": self.names[1]}, "labels": self.labels.to_dict(),
                "rankings": [r.to_dict() for r in self.rankings],
                "policies": self.policies.as_dict() if self.policies is not None else None,
                "notes": list(self.notes)}

    def to_json(self, **kwargs: Any) -> str:
        """JSON text of :meth:`to_dict`."""
        return json.dumps(self.to_dict(), **kwargs)


def _judgments(source: Any) -> Judgments:
    if isinstance(source, Judgments):
        return source
    from gainscope.io import read_judgments

    return read_judgments(source)


def _evaluated(human: Judgments, llm: Judgments, runs: Sequence[Any], metrics: MetricsArg,
               names: Sequence[str] | None, policies: Policies | None,
               policy_kwargs: dict[str, Any]) -> tuple[list[Results], list[Results]]:
    """Each run evaluated under both label sets (each run read once), renamed and checked for unique names."""
    from gainscope.core.run import Run
    from gainscope.io import read_run

    objects = [r if isinstance(r, Run) else read_run(r) for r in runs]
    res_a = evaluate_runs(human, objects, metrics, policies=policies, **policy_kwargs)
    res_b = evaluate_runs(llm, objects, metrics, policies=policies, **policy_kwargs)
    if names is not None:
        if len(names) != len(objects):
            raise InputError(f"{len(names)} names for {len(objects)} runs; give one name per run")
        res_a = [replace(r, run_name=n) for r, n in zip(res_a, names, strict=True)]
        res_b = [replace(r, run_name=n) for r, n in zip(res_b, names, strict=True)]
    seen = [r.run_name for r in res_a]
    dup = sorted({n for n in seen if seen.count(n) > 1})
    if dup:
        raise InputError(f"two runs are named {dup[0]!r}; systems are told apart by name. Give each a unique name "
                         "(names=[...] in Python, --name on the command line)")
    return res_a, res_b


def _means(results: Sequence[Results], metric: str, label: str) -> list[float]:
    out = []
    for r in results:
        value = r[metric]
        if math.isnan(value):
            raise InputError(f"{metric} of run {r.run_name!r} is undefined for every query under the {label} labels; "
                             "it cannot be ranked (evaluate with undefined='zero')")
        out.append(value)
    return out


def agreement(human: Judgments | Any, llm: Judgments | Any, *, runs: Sequence[Any] = (),
              metrics: MetricsArg = ("nDCG@10",), threshold: float = 2, categories: ArrayLike | None = None,
              names: Sequence[str] | None = None, label_names: tuple[str, str] = ("human", "LLM"),
              policies: Policies | None = None, **policy_kwargs: Any) -> Agreement:
    """How far ``llm`` labels agree with ``human`` labels, and the system rankings they induce.

    Parameters
    ----------
    human, llm:
        :class:`~gainscope.Judgments`, or anything :func:`~gainscope.io.read_judgments` reads (a path, a frame,
        a dict). Labels are compared over the pairs judged in both; the others are counted and named.
    runs:
        Runs (:class:`~gainscope.Run` objects or paths), none or at least 2. Each is evaluated under both label
        sets and the systems are ranked by their mean under every metric of ``metrics``; ``names`` renames them.
    threshold:
        Grade from which a label counts as relevant for the binarised kappa (2, as UMBRELA on the 0-3 scale).
    categories:
        The grading scale in order (the weights of the weighted kappas follow its indices); default: every grade
        seen in either set, sorted.
    policies, **policy_kwargs:
        The evaluation conventions of the leaderboards, as for :func:`~gainscope.evaluate`.

    Each leaderboard averages over the queries of its own label set (missing queries score 0 by default); a
    note says when the two sets judge different queries.
    """
    a, b = _judgments(human), _judgments(llm)
    mets = resolve_metrics(metrics)
    labels = label_agreement(a, b, threshold=threshold, categories=categories, names=label_names)
    notes: list[str] = []
    only = [f"{len(ids)} only by {name} ({format_ids(list(ids))})" for name, ids in
            zip(label_names, (labels.queries_only_in_a, labels.queries_only_in_b), strict=True) if ids]
    if only:
        notes.append("queries judged by one label set only: " + ", ".join(only)
                     + ("; each leaderboard averages over its own label set's queries" if runs else ""))
    if not runs:
        return Agreement(labels=labels, names=label_names, notes=tuple(notes))
    if len(runs) < 2:
        raise InputError(f"ranking systems needs at least 2 runs (3 for tau_AP); got {len(runs)}")
    res_a, res_b = _evaluated(a, b, runs, mets, names, policies, policy_kwargs)
    systems = [r.run_name for r in res_a]
    rankings = tuple(ranking_agreement(str(m), systems, _means(res_a, str(m), label_names[0]),
                                       _means(res_b, str(m), label_names[1])) for m in mets)
    return Agreement(labels=labels, rankings=rankings, names=label_names, policies=res_a[0].policies,
                     notes=tuple(notes), results_a=tuple(res_a), results_b=tuple(res_b))
