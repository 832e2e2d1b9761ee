"""Quepid's built-in scorers as gainscope's metrics, and what every scorer gives the case view.

A built-in scorer is a name in gainscope's metric grammar (:mod:`gainscope.metrics.names`), resolved by the one
name lookup (:func:`~gainscope.metrics.resolve.resolve_metrics`) under the ``quepid`` profile and computed by the
one pipeline (:mod:`gainscope.cases.evaluation`): no formula lives in this package. Names are spelled as in
``gainscope evaluate -m`` (case matters, ``@k`` is required: ``nDCG@10``, ``default(distance=levenshtein)@10``),
and a mistake gives the error ``evaluate`` gives. Any metric gainscope knows may score a case; these twelve are
Quepid's, with Quepid's default scale and what Quepid's script gives where the metric has no value:

==========================  =====  ===============================================  ============================
Quepid's scorer             scale  gainscope's metric under the quepid profile      where it has no value,
                                                                                    Quepid's script gives
==========================  =====  ===============================================  ============================
``CG@k``                    0-3    ``CG@k``
``DCG@k``                   0-3    ``DCG(gain=exponential)@k``
``nDCG@k``                  0-3    ``nDCG(gain=exponential, ideal_depth=all)@k``    0 (ideal DCG 0)
``NDCG_CUT@k``              0-3    ``nDCG(gain=exponential)@k``                     0 (ideal DCG 0)
``P@k``                     0-1    ``P(denominator=retrieved)@k``                   0 (nothing returned)
``AP@k``                    0-1    ``AP@k``                                         NaN (nothing relevant)
``RR@k``                    0-1    ``RR@k``
``ERR@k``                   0-3    ``ERR@k``
``avgRating100@k``          1-10   ``avgRating100@k``                               null
``editDistanceFromBest@k``  1-10   ``editDistanceFromBest@k``
``default@k`` (``v1@k``)    1-10   ``QuepidV1@k``                                   null
``blogNDCG@k``              1-10   ``blogNDCG@k``                                   NaN (ideal DCG 0)
==========================  =====  ===============================================  ============================

The profile's policies carry Quepid's conventions: results in the order returned, relevant = rating > 0 on any
scale, the judged pool (ideal lists, AP's R, the best ratings) truncated to integers as Quepid stores it, a
query without results scored as an empty list; ``max_grade`` is the top of the rating scale (ERR's and
avgRating100's ``max``). An unrated returned document is not judged: gain 0, not relevant, left out of
avgRating100 (Quepid's "pessimistic" missing rating). ``editDistanceFromBest`` and ``default`` take the metric
parameter ``distance``: ``quepid`` (Quepid's shipped distance, the default, so ``default@10`` gives Quepid's
numbers) or ``levenshtein`` (the true one); ``edit_distance=`` / ``--edit-distance`` sets it too.

Where the metric is undefined, the scorer gives Quepid's value: ``null`` for the metrics that declare
``undefined_is_null`` (Quepid labels a query ``zsr`` or ``--`` only then), the table's 0 where Quepid's script
divides only when it can (``den ? num / den : 0``), else no number (Quepid's NaN, which its ``score || 0``
counts as 0): see :mod:`gainscope.cases.scoring`.

References: Quepid's ``db/scorers/*.js`` and ``ScorerFactory.js``; B. Rigaldies, "How to Implement a Normalized
Discounted Cumulative Gain (NDCG) Ranking Quality Scorer in Quepid", OpenSource Connections blog, 2018
(``blogNDCG``, ``default``); the formulas and their references are the metrics' (``gainscope metrics NAME``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import InitVar, dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

from gainscope.cases.evaluation import DEFAULT_EDIT_DISTANCE, PROFILE, distance_of, evaluate_views, runtime_distance
from gainscope.cases.scale import RatingScale
from gainscope.cases.view import QueryView
from gainscope.errors import InputError, InvalidParameterError, MetricError, option
from gainscope.metrics.base import Metric, format_value
from gainscope.metrics.names import metric_parts
from gainscope.metrics.profiles import get_profile
from gainscope.metrics.resolve import resolve_metrics, resolve_metrics_noting
from gainscope.metrics.trec_eval import is_trec_name

if TYPE_CHECKING:
    from gainscope.results import Results

__all__ = [
    "BUILTINS",
    "BuiltinDefinition",
    "BuiltinScorer",
    "Scorer",
    "ScorerResult",
    "builtin_scorer",
    "default_score",
]


# ------------------------------------------------------------------------------------------------ results
@dataclass(frozen=True)
class ScorerResult:
    """What a scorer produced for one query.

    ``value`` is the number given to ``setScore`` (None when the scorer gave none, ``null``, NaN or an
    infinity: see ``reason``); ``null`` is True when that was ``null`` (JavaScript ``null``, a Python
    scorer's None, or a built-in whose metric is undefined where Quepid's script sets ``null``): only then does
    Quepid label a query without results ``zsr`` and one without ratings ``--``; ``failed`` is True after
    ``fail()`` (or a false ``assert``); ``depth`` is the ``k`` the scorer declared; ``logs`` what it printed
    with ``console.log``.
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
        """The scorer's display name (a built-in's name, a file name, ``module:function``)."""
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


# ---------------------------------------------------------------------------------------------- built-ins
@dataclass(frozen=True)
class BuiltinDefinition:
    """One of Quepid's built-in scorers: its name under the quepid profile, Quepid's default scale for it, what
    it is, and what Quepid's script gives where the metric is undefined (``undefined_score``; None: no number,
    or ``null`` for a metric that declares ``undefined_is_null``), said in ``undefined_note``. The range of its
    values is the metric's ``bounds``."""

    name: str
    scale: str
    summary: str
    undefined_score: float | None = None
    undefined_note: str | None = None
    takes_edit_distance: bool = False


BUILTINS: dict[str, BuiltinDefinition] = {d.name: d for d in (
    BuiltinDefinition("CG", "graded", "cumulative gain"),
    BuiltinDefinition("DCG", "graded", "discounted cumulative gain, gain 2^r - 1"),
    BuiltinDefinition("nDCG", "graded", "nDCG, ideal from every rated document, uncut", 0.0,
                      "where nDCG is undefined (ideal DCG 0), Quepid's script gives 0: scored 0"),
    BuiltinDefinition("NDCG_CUT", "graded", "nDCG, ideal from the top k rated", 0.0,
                      "where NDCG_CUT is undefined (ideal DCG 0), Quepid's script gives 0: scored 0"),
    BuiltinDefinition("P", "binary", "precision over the documents returned within k", 0.0,
                      "where P is undefined (nothing returned), Quepid's script gives 0: scored 0"),
    BuiltinDefinition("AP", "binary", "average precision",
                      undefined_note="AP is undefined when no rated document is relevant (Quepid's NaN)"),
    BuiltinDefinition("RR", "binary", "reciprocal rank of the first relevant"),
    BuiltinDefinition("ERR", "graded", "expected reciprocal rank"),
    BuiltinDefinition("avgRating100", "1-10", "mean rating of the rated top k on 0-100, rounded down",
                      undefined_note="no score (null) when no document within k is rated or the mean is 0"),
    BuiltinDefinition("editDistanceFromBest", "1-10", "edit distance of the returned ratings from the best",
                      takes_edit_distance=True),
    BuiltinDefinition("default", "1-10", "Quepid's default scorer, v1: avgRating100 - editDistanceFromBest",
                      undefined_note="no score (null) when avgRating100 is null", takes_edit_distance=True),
    BuiltinDefinition("blogNDCG", "1-10", "the 2018 blog's NDCG: linear gain, ideal from the best k, x 100",
                      undefined_note="blogNDCG is undefined when the ideal DCG is 0 (the script's 0 / 0: NaN)"),
)}


def _distance(metric: Metric) -> str | None:
    """The metric's ``distance`` parameter (editDistanceFromBest, QuepidV1), None when it has none."""
    value = getattr(metric, "distance", None)
    return value if isinstance(value, str) else None


def _with_distance(metric: Metric, distance: str) -> Metric:
    changes: dict[str, str] = {"distance": distance}
    return dataclasses.replace(metric, **changes)


@lru_cache(maxsize=512)
def _definition_metric(name: str, k: int) -> Metric:
    return resolve_metrics(f"{name}@{k}", profile=PROFILE)[0]


def _definition_of(metric: Metric) -> BuiltinDefinition | None:
    """The Quepid built-in that ``metric`` is, when it is one (its distance aside)."""
    k = getattr(metric, "cutoff", None)
    if not isinstance(k, int) or isinstance(k, bool):
        return None
    for definition in BUILTINS.values():
        candidate = _definition_metric(definition.name, k)
        if type(candidate) is not type(metric):
            continue
        distance = _distance(metric)
        if definition.takes_edit_distance and distance is not None:
            candidate = _with_distance(candidate, distance)
        if str(candidate) == str(metric):
            return definition
    return None


@dataclass(frozen=True)
class BuiltinScorer:
    """A metric used as a case scorer: one of Quepid's built-ins (``definition``) at depth ``k``, or any metric
    gainscope knows (``given``, resolved under the quepid profile; ``definition`` is then found when it is one
    of Quepid's). ``edit_distance`` sets the ``distance`` of the scorers that take one (``quepid``, also
    spelled ``quepid-legacy``, or ``levenshtein``; None: the metric's own, ``quepid``); afterwards it holds the
    JavaScript runtime's name of the distance in force (for :func:`~gainscope.cases.builtin_js.builtin_javascript`).
    ``notes`` are the profile values the name overrode, ``label`` the name as written (the name of a metric
    that is not one of Quepid's: it resolves to the same metric under the quepid profile, where its canonical
    name, which leaves out parameters at their defaults, would take the profile's). :attr:`metric` is the
    metric that scores."""

    definition: BuiltinDefinition | None
    k: int | None = None
    edit_distance: str | None = None
    notes: tuple[str, ...] = ()
    label: str | None = None
    given: InitVar[Metric | None] = None
    _metric: Metric = field(init=False, repr=False, compare=False)

    def __post_init__(self, given: Metric | None) -> None:
        metric = given
        if metric is None:
            if self.definition is None:
                raise InvalidParameterError("a built-in scorer needs a definition (with k) or a metric")
            if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
                raise InvalidParameterError(f"{self.definition.name}: k must be an integer >= 1; got {self.k!r}")
            metric = _definition_metric(self.definition.name, self.k)
        distance = _distance(metric)
        if distance is not None:
            if self.edit_distance is not None:
                distance = distance_of(self.edit_distance)
                metric = _with_distance(metric, distance)
            runtime = runtime_distance(distance)
        else:
            runtime = DEFAULT_EDIT_DISTANCE if self.edit_distance is None else runtime_distance(self.edit_distance)
        cutoff = getattr(metric, "cutoff", None)
        object.__setattr__(self, "_metric", metric)
        object.__setattr__(self, "definition", self.definition if given is None else _definition_of(metric))
        object.__setattr__(self, "k", cutoff if isinstance(cutoff, int) and not isinstance(cutoff, bool) else None)
        object.__setattr__(self, "edit_distance", runtime)

    @property
    def metric(self) -> Metric:
        """The metric that scores (under the quepid profile)."""
        return self._metric

    @property
    def name(self) -> str:
        """Quepid's spelling of a built-in (``nDCG@10``, ``default(distance=levenshtein)@10``), else the name as
        written (else the metric's canonical name); either resolves to :attr:`metric` under the quepid profile."""
        if self.definition is None:
            return self.label or str(self.metric)
        distance = _distance(self.metric)
        params = f"(distance={distance})" if distance not in (None, "quepid") else ""
        return f"{self.definition.name}{params}@{self.k}"

    @property
    def default_scale(self) -> RatingScale | None:
        return RatingScale.parse(self.definition.scale) if self.definition is not None else None

    def scale_for_ratings(self, ratings: Iterable[float]) -> tuple[RatingScale, str]:
        """The scale to use when the case names none, and where it comes from: Quepid's default for its
        built-ins. The binary ones (P, AP, RR) read any rating > 0 as relevant and, like Quepid's, take graded
        ratings on their 0-1 scale: the scale is then widened to the ratings (0 to the highest, rounded up),
        which changes none of their numbers; so is it for a metric Quepid has no default for."""
        values = list(ratings)
        default = self.default_scale
        if default is not None and self.definition is not None and (
                self.definition.scale != "binary" or all(default.min <= r <= default.max for r in values)):
            return default, "the scorer's default"
        if not values:
            return RatingScale.parse("binary"), "no rating in the case, and no scale named"
        lo, hi = min(0, math.floor(min(values))), max(1, math.ceil(max(values)))
        scale = RatingScale(tuple(range(lo, hi + 1))) if hi - lo < 100 else RatingScale((lo, hi))
        why = (f"{self.definition.name} reads any rating > 0 as relevant" if self.definition is not None
               else f"{self.name} has no default scale")
        return scale, f"from the ratings: the case names no scale, and {why}"

    @property
    def depth(self) -> int | None:
        return self.k

    @property
    def conventions(self) -> tuple[str, ...]:
        metric = self.metric
        profile = get_profile(PROFILE)
        what = f" ({self.definition.summary})" if self.definition is not None else ""
        out = [f"{self.name} is gainscope's {metric} under the {PROFILE} profile{what}",
               f"the {PROFILE} profile's policies: "
               + ", ".join(f"{k}={format_value(v)}" for k, v in profile.policies.items())
               + " (results in the order returned, relevant = rating > 0, ideal lists, R and best ratings from "
                 "ratings truncated to integers as Quepid's bestDocs, a query without results scored as an "
                 "empty list)",
               "unrated returned documents are not judged: gain 0, not relevant (Quepid's pessimistic missing "
               "rating 0)"]
        if metric.uses_max_grade:
            out.append(f"max_grade: the top of the rating scale (Quepid's max, which {self.name} divides by)")
        if self.definition is not None and self.definition.undefined_note:
            out.append(self.definition.undefined_note)
        distance = _distance(metric)
        if distance is not None:
            out.append(f"edit distance: {distance}" + (" (true Levenshtein)" if distance == "levenshtein" else
                                                       " (Quepid's shipped implementation, base case D(-1, j) = 0)"))
        return (*out, *self.notes)

    # ------------------------------------------------------------------------------------------ scoring
    def evaluate(self, views: Sequence[QueryView], source: str | None = None) -> Results:
        """The metric on ``views`` through the one pipeline (:mod:`gainscope.cases.evaluation`): one row per
        query, ids = query texts, undefined values NaN. The views share one scale (the case's); ``source`` is
        the case file, for messages."""
        if not _one_scale(views):
            raise InvalidParameterError("the views of one evaluation share one rating scale; got "
                                        + ", ".join(sorted({v.scale.describe() for v in views})))
        scale = views[0].scale if views else RatingScale.parse("binary")
        return evaluate_views(views, [self.metric], scale, source)

    def result_of(self, value: float) -> ScorerResult:
        """A query's value as the case view reads it: Quepid's null, Quepid's number, or no number."""
        if not math.isnan(value):
            return ScorerResult(value, depth=self.k)
        if self.metric.undefined_is_null:
            return ScorerResult(None, reason="no score: null (nothing rated within k, or a mean of 0)", depth=self.k,
                                null=True)
        if self.definition is not None and self.definition.undefined_score is not None:
            return ScorerResult(self.definition.undefined_score, depth=self.k)
        return ScorerResult(None, reason="undefined: a division by 0 (NaN or Infinity in Quepid)", depth=self.k)

    def results_of(self, results: Results, views: Sequence[QueryView]) -> list[ScorerResult]:
        """One :class:`ScorerResult` per view, in order, from the ``results`` of :meth:`evaluate`."""
        row = {q: i for i, q in enumerate(results.query_ids)}
        return [self.result_of(float(results.values[row[v.query], 0])) for v in views]

    def score(self, q: QueryView) -> ScorerResult:
        """Score one query (its judged run is built once per view, see :meth:`QueryView.evaluate`)."""
        return self.result_of(float(q.evaluate([self.metric]).values[0, 0]))

    def score_all(self, views: Sequence[QueryView]) -> list[ScorerResult]:
        if not views:
            return []
        if len(views) == 1:
            return [self.score(views[0])]
        if len({v.query for v in views}) < len(views) or not _one_scale(views):
            return [self.score(v) for v in views]  # not one case: each view on its own
        return self.results_of(self.evaluate(views), views)


def _one_scale(views: Sequence[QueryView]) -> bool:
    return all(v.scale == views[0].scale for v in views)


def builtin_scorer(spec: str, *, edit_distance: str | None = None) -> BuiltinScorer:
    """The scorer of a metric name under the quepid profile: ``nDCG@10``, ``AP@5``, ``P@3``, ``default@10``,
    ``v1@10``, ``default(distance=levenshtein)@10``, or any other metric gainscope knows (one metric: not
    ``official``). ``edit_distance`` (``quepid``, ``quepid-legacy``, ``levenshtein``) sets the distance of the
    scorers that take one; a name that sets another one is an error."""
    if not isinstance(spec, str) or not spec.strip():
        raise InputError(f"a scorer is a name, a .js file or module:function; got {spec!r}")
    text = spec.strip()
    found, notes = resolve_metrics_noting(text, profile=PROFILE)
    if len(found) != 1:
        raise MetricError(f"{text!r} names {len(found)} metrics ({', '.join(map(str, found[:5]))}"
                          f"{', ...' if len(found) > 5 else ''}); a scorer is one metric, for example nDCG@10")
    metric = found[0]
    if edit_distance is not None and _distance(metric) is not None and not is_trec_name(text):
        written = metric_parts(text)[1].get("distance")
        if written is not None and written != distance_of(edit_distance):
            raise InvalidParameterError(
                f"{text!r} names distance={written} but {option('edit_distance', edit_distance)} was given; give "
                "one of them")
    return BuiltinScorer(None, None, edit_distance, notes, text, metric)


def default_score(q: QueryView, k: int, variant: str | None = None) -> float | None:
    """Quepid's default scorer (v1) on one query: ``avgRating100(k) - editDistanceFromBest(k)`` (the metric
    ``QuepidV1@k``), None when avgRating100 is null; ``variant`` is the edit distance (``quepid``, also
    ``quepid-legacy``, or ``levenshtein``; None: ``quepid``). Negative results become 0 only when the case is
    scored (Quepid clamps). The blog's example: ``61 - 4 = 57``."""
    return BuiltinScorer(BUILTINS["default"], k, variant).score(q).value
