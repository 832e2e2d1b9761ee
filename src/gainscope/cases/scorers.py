"""Quepid's scorers as Python functions of a :class:`~gainscope.cases.view.QueryView`, every one with ``k``
as a parameter.

Conventions shared by every built-in (they are Quepid's, and are echoed with results):

* positions are 0-based in code, ranks 1-based in formulas: ``r_i`` is the rating at rank ``i``;
* **an unrated returned document has rating 0** ("pessimistic", ``missing_rating = 0`` in Quepid's scorers);
* "relevant" for the binary scorers (P, AP, RR) means **rating > 0**, on any scale;
* only documents that were returned count in the numerator; the ideal lists of nDCG, NDCG_CUT and the
  blog's NDCG come from **all rated documents** of the query (``bestDocs``), returned or not;
* the ``max`` of ERR and ``avgRating100`` is the last value of the rating scale.

========================  =========  =======  ===============================================================
scorer                    scale      range    formula (``n`` = number returned, ``k`` the depth)
========================  =========  =======  ===============================================================
``CG@k``                  0-3        >= 0     ``sum_{i<=min(k,n)} r_i``
``DCG@k``                 0-3        >= 0     ``sum_{i<=min(k,n)} (2^r_i - 1) / log2(i + 1)``
``nDCG@k``                0-3        0-1      ``DCG@k / DCG(ideal)``, ideal = all ratings descending, uncut
``NDCG_CUT@k``            0-3        0-1      ``DCG@k / DCG@k(ideal)``, ideal = top k ratings (0-padded)
``P@k``                   0-1        0-1      ``#{i <= min(k,n): r_i > 0} / min(k, n)``
``AP@k``                  0-1        0-1      ``sum_{i <= min(k,n), r_i > 0} P@i / #{rated docs with r > 0}``
``RR@k``                  0-1        0-1      ``1 / rank of the first r_i > 0 within k``, else 0
``ERR@k``                 0-3        0-1      ``sum_i (prod_{j<i} (1 - R_j)) R_i / i``, ``R = (2^r - 1)/2^max``
``avgRating100@k``        1-10       0-100    ``floor(mean rated r_i * (100/max))``
``editDistanceFromBest@k``1-10       >= 0     edit distance of returned vs best ratings
``default@k``             1-10       0-100    ``avgRating100@k - editDistanceFromBest@k`` (Quepid v1)
``blogNDCG@k``            1-10       0-100    ``100 * DCG_lin@k / DCG_lin@k(ideal)``, linear gain
========================  =========  =======  ===============================================================

References: Järvelin & Kekäläinen, "Cumulated gain-based evaluation of IR techniques", ACM TOIS 20(4), 2002
(CG, DCG, nDCG); Burges et al., ICML 2005 (the ``2^r - 1`` gain); Chapelle, Metzler, Zhang & Grinspan,
"Expected reciprocal rank for graded relevance", CIKM 2009 (ERR); Quepid's ``db/scorers/*.js`` and
``ScorerFactory.js`` (the conventions); B. Rigaldies, "How to Implement a Normalized Discounted Cumulative Gain
(NDCG) Ranking Quality Scorer in Quepid", OpenSource Connections blog, 2018 (``blogNDCG``, ``default``).
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from gainscope.cases.edit_distance import EDIT_DISTANCES
from gainscope.cases.scale import RatingScale
from gainscope.cases.view import QueryView
from gainscope.errors import InvalidParameterError, UnknownMetricError

__all__ = [
    "BUILTINS",
    "BuiltinScorer",
    "Scorer",
    "ScorerResult",
    "ap",
    "avg_rating100",
    "blog_ndcg",
    "builtin_scorer",
    "cg",
    "dcg",
    "default_score",
    "edit_distance_from_best",
    "err",
    "ndcg",
    "ndcg_cut",
    "precision",
    "reciprocal_rank",
]


# ------------------------------------------------------------------------------------------------ results
@dataclass(frozen=True)
class ScorerResult:
    """What a scorer produced for one query.

    ``value`` is the number given to ``setScore`` (None when the scorer gave none, ``null``, NaN or an
    infinity: see ``reason``); ``null`` is True when that was ``null`` (JavaScript ``null``, a Python
    scorer's None, or a built-in whose Quepid script sets ``null``): only then does Quepid label a query
    without results ``zsr`` and one without ratings ``--``; ``failed`` is True after ``fail()`` (or a false
    ``assert``); ``depth`` is the ``k`` the scorer declared; ``logs`` what it printed with ``console.log``.
    """

    value: float | None
    failed: bool = False
    reason: str | None = None
    depth: int | None = None
    logs: tuple[str, ...] = ()
    null: bool = False


class Scorer(Protocol):
    """Anything that scores queries: a built-in, a Python callable, a JavaScript scorer."""

    @property
    def name(self) -> str:
        """The scorer's display name (a built-in's canonical spelling, a file name, ``module:function``)."""
        ...

    @property
    def default_scale(self) -> RatingScale | None:
        """The scale to use when the case names none."""
        ...

    @property
    def depth(self) -> int | None:
        """The ``k`` the scorer looks at, when known before scoring (used for 'moved in/out of the top k')."""
        ...

    @property
    def conventions(self) -> tuple[str, ...]:
        """The conventions that change this scorer's numbers, one sentence each."""
        ...

    def score_all(self, views: Sequence[QueryView]) -> list[ScorerResult]:
        """One result per view, in order."""
        ...


# ---------------------------------------------------------------------------------------- the formulas
def _dcg_exp(ratings: Sequence[float]) -> float:
    """``sum_i (2^r_i - 1) / log2(i + 1)`` over ranks ``i = 1..len``."""
    return sum((2.0 ** r - 1.0) / math.log2(i + 1) for i, r in enumerate(ratings, start=1))


def _dcg_linear(ratings: Sequence[float]) -> float:
    """``sum_i r_i / log2(i + 1)`` over ranks ``i = 1..len``."""
    return sum(r / math.log2(i + 1) for i, r in enumerate(ratings, start=1))


def _top(q: QueryView, k: int) -> list[float]:
    """Ratings of the returned documents within ``k``, unrated = 0 (at most ``min(k, n)`` values)."""
    return [q.rating_or_zero(i) for i in range(min(k, q.num_returned))]


def cg(q: QueryView, k: int) -> float:
    """Cumulative gain: ``CG@k = sum_{i <= min(k, n)} r_i`` (unrated = 0). Quepid's ``cg@10.js``."""
    return float(sum(_top(q, k)))


def dcg(q: QueryView, k: int) -> float:
    """Discounted cumulative gain with exponential gain:
    ``DCG@k = sum_{i <= min(k, n)} (2^r_i - 1) / log2(i + 1)`` (unrated = 0). Quepid's ``dcg@10.js``."""
    return _dcg_exp(_top(q, k))


def ndcg(q: QueryView, k: int) -> float:
    """Quepid's nDCG@k (``ndcg@10.js`` since PR #1242, 2025): ``DCG@k / IDCG`` where the ideal is **every
    rated document** of the query sorted by rating descending and is **not cut at k**:
    ``IDCG = sum_{i=1..|rated|} (2^best_i - 1) / log2(i + 1)``. 0 when IDCG is 0.

    So nDCG@10 cannot reach 1 when more than 10 documents are rated above the 10th best: with 20 documents
    rated 3 and a perfect top 10 it is 0.645 (use NDCG_CUT for the classic nDCG@k).
    """
    ideal_dcg = _dcg_exp(q.top_ratings(len(q.best)))
    return dcg(q, k) / ideal_dcg if ideal_dcg else 0.0


def ndcg_cut(q: QueryView, k: int) -> float:
    """Quepid's NDCG_CUT@k (``ndcg_cut@10.js``): ``DCG@k / IDCG@k`` where the ideal is the top ``k`` ratings
    of every rated document, padded with 0 to ``k``: the classic nDCG@k with the ideal from the judged pool.
    0 when IDCG is 0."""
    ideal_dcg = _dcg_exp(q.top_ratings(k))
    return dcg(q, k) / ideal_dcg if ideal_dcg else 0.0


def precision(q: QueryView, k: int) -> float:
    """Quepid's P@k (``p@10.js``): ``#{i <= min(k, n): r_i > 0} / min(k, n)``.

    The denominator is the number of documents returned within ``k``, **not k**: 2 relevant out of 4 returned
    is 0.5 at P@10. Any rating > 0 is relevant. 0 when nothing is returned.
    """
    top = _top(q, k)
    return sum(1 for r in top if r > 0) / len(top) if top else 0.0


def ap(q: QueryView, k: int) -> float | None:
    """Quepid's AP@k (``ap@10.js``): ``sum_{i <= min(k, n), r_i > 0} P@i / R`` where ``P@i`` is the
    precision at rank ``i`` and ``R = #{rated documents with rating > 0}`` over **all** rated documents of
    the query, returned or not, **not capped at k** (so AP@10 < 1 whenever more than 10 are relevant).

    Undefined (None) when no document of ``bestDocs`` is rated > 0: Quepid divides by 0 there, 0 / 0 = NaN,
    or Infinity when a returned document rated between 0 and 1 is a hit (``docRating`` 0.5 > 0) while
    ``bestDocs`` holds ``parseInt(0.5) = 0``; Quepid's case mean would then be Infinity (see
    :mod:`~gainscope.cases.scoring`: counted as 0 here).
    """
    total_rel = sum(1 for _, r in q.best if r > 0)
    hits = 0
    total = 0.0
    for i, r in enumerate(_top(q, k), start=1):
        if r > 0:
            hits += 1
            total += hits / i
    return total / total_rel if total_rel else None


def reciprocal_rank(q: QueryView, k: int) -> float:
    """Quepid's RR@k (``rr@10.js``): ``1 / i`` for the first rank ``i <= k`` with rating > 0, else 0."""
    for i, r in enumerate(_top(q, k), start=1):
        if r > 0:
            return 1.0 / i
    return 0.0


def err(q: QueryView, k: int) -> float:
    """Quepid's ERR@k (``err@10.js``), Chapelle et al. 2009:
    ``ERR = sum_{i <= min(k, n)} trust_i * R_i / i`` with ``R_i = (2^r_i - 1) / 2^max``, ``trust_1 = 1`` and
    ``trust_{i+1} = trust_i * (1 - R_i)``. ``max`` is the top of the scorer's scale (3 on 0-3); unrated = 0.
    """
    top = 2.0 ** q.scale_max
    trust = 1.0
    total = 0.0
    for i, r in enumerate(_top(q, k), start=1):
        p_useful = (2.0 ** r - 1.0) / top
        total += trust * p_useful / i
        trust *= 1.0 - p_useful
    return total


def avg_rating100(q: QueryView, k: int) -> float | None:
    """Quepid's ``avgRating100(k)``: ``floor((sum of rated r_i / #rated) * (100 / max))`` over the rated
    documents among the first ``k`` returned; unrated documents are left out (not counted as 0). None when
    none is rated or the mean is 0 (see :meth:`QueryView.avg_rating100`).

    The blog's example on 1-10: ratings ``[10, 8, 9, -, 5, 1, 4, -, -, -]`` give ``floor(37 / 6 * 10) = 61``.
    """
    return q.avg_rating100(k)


def edit_distance_from_best(q: QueryView, k: int, variant: str = "levenshtein") -> float:
    """Quepid's ``editDistanceFromBest(k)``: the edit distance between the ratings of the first ``k``
    returned documents (None for unrated) and the first ``k`` best ratings padded with None (see
    :meth:`QueryView.distance_lists`); ``variant`` is ``levenshtein`` or ``quepid-legacy``."""
    return float(q.edit_distance_from_best(k, variant))


def default_score(q: QueryView, k: int, variant: str = "levenshtein") -> float | None:
    """Quepid's default scorer (v1): ``avgRating100(k) - editDistanceFromBest(k)``; no score when
    ``avgRating100`` is None. Negative results become 0 when the case is scored (Quepid clamps).

    The blog's example: ``61 - 4 = 57``.
    """
    score = q.avg_rating100(k)
    if score is None:
        return None
    return score - q.edit_distance_from_best(k, variant)


def blog_ndcg(q: QueryView, k: int) -> float | None:
    """The blog's NDCG@k scorer (Script 7 with Script 4), on a 0-100 scale:
    ``100 * DCG(actual) / DCG(ideal)`` with **linear** gain ``r_i / log2(i + 1)``, ``actual`` = the first
    ``k`` ratings of the returned documents (unrated or absent = 0) and ``ideal`` = the first ``k`` best
    ratings padded with 0 to ``k`` (Wikipedia's definition with the ideal from the rated documents).

    Undefined (None) when the ideal DCG is 0: the script divides 0 by 0 (NaN).
    """
    actual = [q.rating_or_zero(i) for i in range(k)]
    ideal = q.top_ratings(k)
    ideal += [0.0] * (k - len(ideal))
    ideal_dcg = _dcg_linear(ideal)
    if not ideal_dcg:
        return None
    return _dcg_linear(actual) / ideal_dcg * 100.0  # the script's order: ndcg = dcg / idcg, then * 100


# ---------------------------------------------------------------------------------------------- registry
ScoreFunction = Callable[[QueryView, int, str], "float | None"]

_UNRATED = "unrated returned documents count as rating 0 (Quepid's pessimistic missing_rating)"
_RELEVANT = "relevant = rating > 0, on any scale"


@dataclass(frozen=True)
class BuiltinDefinition:
    """A built-in scorer: its formula, default scale, range of values and the conventions to report."""

    name: str
    function: ScoreFunction
    scale: str
    value_range: str
    summary: str
    conventions: tuple[str, ...]
    aliases: tuple[str, ...] = ()
    takes_edit_distance: bool = False
    none_is_null: bool = False
    """What None from :attr:`function` stands for in Quepid's script: ``null`` (True: avgRating100, default)
    or NaN, a division 0 / 0 (False: AP, blogNDCG). Quepid labels only null scores zsr or --."""


def _plain(fn: Callable[[QueryView, int], float | None]) -> ScoreFunction:
    return lambda q, k, variant: fn(q, k)


BUILTINS: dict[str, BuiltinDefinition] = {d.name.lower(): d for d in (
    BuiltinDefinition("CG", _plain(cg), "graded", ">= 0", "cumulative gain", (_UNRATED,)),
    BuiltinDefinition("DCG", _plain(dcg), "graded", ">= 0", "discounted cumulative gain, gain 2^r - 1",
                      (_UNRATED, "gain 2^r - 1, discount log2(rank + 1)")),
    BuiltinDefinition("nDCG", _plain(ndcg), "graded", "0-1", "nDCG, ideal from all rated documents (uncut)",
                      (_UNRATED, "gain 2^r - 1, discount log2(rank + 1)",
                       "ideal: every rated document of the query, rating descending, not cut at k (Quepid's "
                       "nDCG since 2025); 0 when the ideal DCG is 0")),
    BuiltinDefinition("NDCG_CUT", _plain(ndcg_cut), "graded", "0-1", "nDCG, ideal from the top k rated",
                      (_UNRATED, "gain 2^r - 1, discount log2(rank + 1)",
                       "ideal: the top k ratings of every rated document, padded with 0; 0 when the ideal DCG "
                       "is 0")),
    BuiltinDefinition("P", _plain(precision), "binary", "0-1", "precision", (
        _UNRATED, _RELEVANT, "P@k denominator: documents returned within k (at most k), not k; 0 with no "
        "results")),
    BuiltinDefinition("AP", _plain(ap), "binary", "0-1", "average precision", (
        _UNRATED, _RELEVANT, "AP denominator: every rated document with rating > 0, returned or not, not "
        "capped at k; undefined when there is none")),
    BuiltinDefinition("RR", _plain(reciprocal_rank), "binary", "0-1", "reciprocal rank of the first relevant",
                      (_UNRATED, _RELEVANT)),
    BuiltinDefinition("ERR", _plain(err), "graded", "0-1", "expected reciprocal rank", (
        _UNRATED, "ERR: R = (2^r - 1) / 2^max with max = the top of the rating scale")),
    BuiltinDefinition("avgRating100", _plain(avg_rating100), "1-10", "0-100",
                      "mean rating of the rated top k on 0-100, rounded down",
                      ("unrated documents are left out of the mean; no score (null) when none is rated or "
                       "the mean is 0 (Quepid's !avg)", "ratings truncated to integers first (Quepid's parseInt)"),
                      none_is_null=True),
    BuiltinDefinition("editDistanceFromBest", edit_distance_from_best, "1-10", ">= 0",
                      "edit distance of the returned ratings from the best ratings",
                      ("unrated returned documents and padding are 'no rating' (null), equal to each other",),
                      takes_edit_distance=True),
    BuiltinDefinition("default", default_score, "1-10", "0-100",
                      "Quepid's default scorer: avgRating100 - editDistanceFromBest",
                      ("unrated documents are left out of avgRating100 and are 'no rating' in the edit "
                       "distance", "no score (null) when avgRating100 is null", "negative scores become 0"),
                      aliases=("v1", "quepid-default"), takes_edit_distance=True, none_is_null=True),
    BuiltinDefinition("blogNDCG", _plain(blog_ndcg), "1-10", "0-100",
                      "the 2018 blog's NDCG: linear gain, ideal from the best ratings padded with 0, x 100",
                      (_UNRATED, "gain r (linear), discount log2(rank + 1)",
                       "ideal: the top k ratings of every rated document, padded with 0 to k; undefined when "
                       "the ideal DCG is 0"), aliases=("blog-ndcg", "ndcg_blog")),
)}
_ALIASES = {alias.lower(): d.name.lower() for d in BUILTINS.values() for alias in d.aliases}
_NAME = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_-]*)\s*(?:\(\s*([^)]*)\))?\s*(?:@\s*(\S+))?\s*$")
DEFAULT_K = 10


@dataclass(frozen=True)
class BuiltinScorer:
    """A built-in scorer at depth ``k`` (and, for the edit-distance scorers, with a distance variant)."""

    definition: BuiltinDefinition
    k: int = DEFAULT_K
    edit_distance: str = "levenshtein"
    extra_conventions: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise InvalidParameterError(f"{self.definition.name}: k must be an integer >= 1; got {self.k!r}")
        if self.edit_distance not in EDIT_DISTANCES:
            raise InvalidParameterError(f"{self.definition.name}: edit_distance must be one of "
                                        f"{', '.join(EDIT_DISTANCES)}; got {self.edit_distance!r}")

    @property
    def name(self) -> str:
        """Canonical spelling: ``nDCG@10``, ``default(edit_distance=quepid-legacy)@10``."""
        params = ""
        if self.definition.takes_edit_distance and self.edit_distance != "levenshtein":
            params = f"(edit_distance={self.edit_distance})"
        return f"{self.definition.name}{params}@{self.k}"

    @property
    def default_scale(self) -> RatingScale:
        return RatingScale.parse(self.definition.scale)

    def scale_for_ratings(self, ratings: Iterable[float]) -> tuple[RatingScale, str]:
        """The scale to use when the case names none, and where it comes from. The binary scorers (P, AP, RR)
        read any rating > 0 as relevant and, like Quepid's, take graded ratings on their 0-1 scale: the scale
        is then widened to the ratings (0 to the highest, rounded up), which changes none of their numbers."""
        values = list(ratings)
        default = self.default_scale
        if self.definition.scale != "binary" or all(default.min <= r <= default.max for r in values):
            return default, "the scorer's default"
        lo, hi = min(0, math.floor(min(values))), max(1, math.ceil(max(values)))
        scale = RatingScale(tuple(range(lo, hi + 1))) if hi - lo < 100 else RatingScale((lo, hi))
        return scale, (f"from the ratings: the case names no scale, and {self.definition.name} reads any rating "
                       f"> 0 as relevant")

    @property
    def depth(self) -> int:
        return self.k

    @property
    def conventions(self) -> tuple[str, ...]:
        out = list(self.definition.conventions)
        if self.definition.takes_edit_distance:
            out.append(f"edit distance: {self.edit_distance}" + (
                " (true Levenshtein)" if self.edit_distance == "levenshtein"
                else " (Quepid's shipped implementation, base case D(-1, j) = 0)"))
        return tuple(out) + self.extra_conventions

    def score(self, q: QueryView) -> ScorerResult:
        """Score one query."""
        value = self.definition.function(q, self.k, self.edit_distance)
        if value is None:
            if self.definition.none_is_null:
                return ScorerResult(None, reason="no score: null (nothing rated within k, or a mean of 0)",
                                    depth=self.k, null=True)
            return ScorerResult(None, reason="undefined: a division by 0 (NaN or Infinity in Quepid)", depth=self.k)
        return ScorerResult(float(value), depth=self.k)

    def score_all(self, views: Sequence[QueryView]) -> list[ScorerResult]:
        return [self.score(v) for v in views]


def builtin_scorer(spec: str, *, edit_distance: str | None = None) -> BuiltinScorer:
    """Parse a built-in scorer name: ``NAME[(edit_distance=VARIANT)][@K]``, names case-insensitive
    (``nDCG@10``, ``ap@5``, ``P@3``, ``default(edit_distance=quepid-legacy)@10``, ``v1``). ``k`` defaults
    to 10; ``edit_distance`` (when given) overrides the variant for scorers that use one."""
    m = _NAME.match(spec)
    if not m:
        raise UnknownMetricError(f"cannot read scorer {spec!r}; write NAME@K such as 'nDCG@10' or 'AP@5'")
    raw, params, k_text = m.group(1), m.group(2), m.group(3)
    key = _ALIASES.get(raw.lower(), raw.lower())
    if key not in BUILTINS:
        names = [d.name for d in BUILTINS.values()]
        spellings = {n.lower(): n for n in names + [a for d in BUILTINS.values() for a in d.aliases]}
        close = difflib.get_close_matches(raw.lower(), list(spellings), n=3, cutoff=0.5)  # any case: ndgc, NDGC
        hint = f"; did you mean {', '.join(spellings[c] for c in close)}?" if close else ""
        raise UnknownMetricError(f"unknown scorer {raw!r}{hint} (built-in scorers: {', '.join(names)}; or give "
                                 f"a .js file or module:function)")
    definition = BUILTINS[key]
    k = DEFAULT_K
    if k_text is not None:
        try:
            k = int(k_text)
        except ValueError:
            raise InvalidParameterError(f"{spec!r}: k after '@' must be an integer; got {k_text!r}") from None
    variant = "levenshtein"
    for item in filter(None, (p.strip() for p in (params or "").split(","))):
        name, _, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if name != "edit_distance" or not definition.takes_edit_distance:
            allowed = "edit_distance" if definition.takes_edit_distance else "none"
            raise InvalidParameterError(f"{spec!r}: unknown parameter {name!r} (parameters of "
                                        f"{definition.name}: {allowed})")
        variant = value
    if edit_distance is not None:
        variant = edit_distance
    return BuiltinScorer(definition, k, variant)
