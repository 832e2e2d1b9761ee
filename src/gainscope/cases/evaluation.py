"""A case through the one evaluation pipeline: its queries become rankings with their judged pools, evaluated
under the ``quepid`` profile (:mod:`gainscope.metrics.profiles`) by the core's kernels, so that Quepid's built-in
scorers are gainscope's own declared metrics and every number is made in :mod:`gainscope.metrics`.

* **rankings**: each query's results in the order returned, with its judged pool: every rating of the query,
  returned or not (Quepid's ``bestDocs`` come from all of them; the profile's ``judged_grades="truncated"``
  makes the pool ``parseInt(rating)`` as Quepid stores it, while ranked documents keep their decimals). The
  core builds the judged run of them (:func:`~gainscope.core.rankings.judged_run_of_rankings`, the path of every
  adapter that holds its rankings in order): every query is evaluated, as Quepid runs its scorer on every query
  -- a query without results with an empty ranking, a query without ratings with an empty judged pool;
* **policies**: the quepid profile's, with ``max_grade`` the top of the rating scale (Quepid's ``max``, which
  ERR and avgRating100 divide by) and ``undefined="skip"``: an undefined value stays NaN in the Results, and
  the case view (:mod:`gainscope.cases.scoring`) decides what it counts for;
* **edit distance**: ``edit_distance=`` (``--edit-distance``) is ``quepid`` (Quepid's shipped distance, also
  spelled ``quepid-legacy`` as the JavaScript runtime names it) or ``levenshtein``: :func:`distance_of` gives
  the metrics' ``distance`` parameter, :func:`runtime_distance` the runtime's name.

Query ids are the query texts, in the case's order. A rating must be >= 0: gainscope's metrics read a negative
grade as "pooled but unjudged", never as a rating, so a negative rating is an error here (a JavaScript scorer
reads it as Quepid does). ``gainscope evaluate --profile quepid`` on the case's TREC export gives the same numbers
(a query without results is missing from a run file: the profile's ``missing_queries="empty"`` scores it as an
empty ranking; a query without ratings is not in the qrels, so evaluate leaves it out).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from gainscope.cases.scale import RatingScale
from gainscope.core.judged_run import JudgedRun
from gainscope.core.policies import Policies
from gainscope.core.rankings import Ranking, judged_run_of_rankings
from gainscope.errors import InputError, InvalidParameterError
from gainscope.metrics.base import Metric
from gainscope.metrics.edit_distance import EDIT_DISTANCES
from gainscope.metrics.profiles import ProfileUse, get_profile, profiled_policies

if TYPE_CHECKING:
    from gainscope.results import Results

__all__ = ["DEFAULT_EDIT_DISTANCE", "PROFILE", "RatedQuery", "distance_of", "evaluate_judged", "evaluate_views",
           "judged_views", "quepid_policies", "rankings", "runtime_distance"]

PROFILE = "quepid"

#: ``editDistanceFromBest``'s distance: the metrics' ``distance`` for each spelling of ``edit_distance=`` (the
#: JavaScript runtime names Quepid's ``quepid-legacy``), and the runtime's default
_DISTANCES = {"quepid-legacy": "quepid", "quepid": "quepid", "levenshtein": "levenshtein"}
DEFAULT_EDIT_DISTANCE = "quepid-legacy"


def distance_of(edit_distance: str) -> str:
    """The ``distance`` parameter of the metrics for an ``edit_distance`` (``quepid``, its older spelling
    ``quepid-legacy``, or ``levenshtein``); InvalidParameterError otherwise."""
    if edit_distance not in _DISTANCES:
        raise InvalidParameterError(f"edit_distance must be one of quepid, levenshtein (quepid-legacy is the older "
                                    f"spelling of quepid); got {edit_distance!r}")
    return _DISTANCES[edit_distance]


def runtime_distance(edit_distance: str) -> str:
    """The JavaScript runtime's name (``quepid-legacy``, ``levenshtein``) of an ``edit_distance`` or a metric's
    ``distance``."""
    distance = distance_of(edit_distance)
    return next(name for name in EDIT_DISTANCES if _DISTANCES[name] == distance)


class RatedQuery(Protocol):
    """What the pipeline reads of a query's view (:class:`~gainscope.cases.view.QueryView`): its text, the
    returned documents in rank order and every rating."""

    @property
    def query(self) -> str: ...

    @property
    def doc_ids(self) -> Sequence[str]: ...

    def all_ratings(self) -> Mapping[str, float]: ...


def rankings(views: Sequence[RatedQuery], source: str | None = None) -> list[Ranking]:
    """Each view's results in order with its ratings (see the module docstring); InputError for a negative
    rating (naming ``source``, the case file, when given)."""
    out = []
    for v in views:
        rated = v.all_ratings()
        for doc, rating in rated.items():
            if rating < 0:
                raise InputError(f"{source + ': ' if source else ''}query {v.query!r}, document {doc!r}: rating "
                                 f"{rating:g} is negative; the built-in scorers are gainscope's metrics, which read a "
                                 "negative grade as pooled but unjudged, never as a rating: give ratings >= 0 (shift "
                                 "the scale), or score with a JavaScript scorer")
        out.append(Ranking(v.query, v.doc_ids, rated))
    return out


def quepid_policies(scale: RatingScale) -> tuple[Policies, ProfileUse]:
    """The quepid profile's policies with ``max_grade`` = the top of ``scale`` (when > 0) and
    ``undefined="skip"``, and the record of the profile's use."""
    top = scale.max if scale.max > 0 else None
    policies, use = profiled_policies(get_profile(PROFILE), {"max_grade": top, "undefined": "skip"})
    assert use is not None
    return policies, use


def judged_views(views: Sequence[RatedQuery], scale: RatingScale,
                 source: str | None = None) -> tuple[JudgedRun, ProfileUse]:
    """The judged run of ``views`` under Quepid's conventions, and the record of the profile's use."""
    policies, use = quepid_policies(scale)
    return judged_run_of_rankings(rankings(views, source), policies, run_name="case"), use


def evaluate_judged(jr: JudgedRun, metrics: Sequence[Metric], use: ProfileUse) -> Results:
    """Every metric's kernel on ``jr`` (:func:`gainscope.evaluation.compute`), undefined values kept as NaN."""
    from gainscope.evaluation import compute

    return compute(jr, metrics, warn=False, profile=use)


def evaluate_views(views: Sequence[RatedQuery], metrics: Sequence[Metric], scale: RatingScale,
                   source: str | None = None) -> Results:
    """The Results of ``metrics`` on ``views`` (one row per query, ids = query texts; ``source``: the case file,
    for messages)."""
    jr, use = judged_views(views, scale, source)
    return evaluate_judged(jr, metrics, use)

