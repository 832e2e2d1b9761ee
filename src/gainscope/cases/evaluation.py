"""A case through the one evaluation pipeline: its queries become Judgments and a Run, evaluated under the
``quepid`` profile (:mod:`gainscope.metrics.profiles`), so that Quepid's built-in scorers are gainscope's own
declared metrics and every number is made in :mod:`gainscope.metrics`.

* **judgments**: every rating of a query, returned or not (Quepid's ``bestDocs`` come from all of them; the
  profile's ``judged_grades="truncated"`` makes the judged pool ``parseInt(rating)`` as Quepid stores it, while
  ranked documents keep their decimals). A query without any rating enters the judgments with one line
  ``(query, PLACEHOLDER, -1)``: a negative grade is "pooled but unjudged" (trec_eval's convention), so the query
  is evaluated -- Quepid runs its scorer on it -- with an empty judged pool and every returned document unrated;
* **run**: each query's results in the order returned (ranks 1 to n, kept by the profile's ``ties="rank"``);
  a query without results is absent from the run and scored as an empty ranking (the profile's
  ``missing_queries="empty"``: Quepid runs its scorer there too);
* **policies**: the quepid profile's, with ``max_grade`` the top of the rating scale (Quepid's ``max``, which
  ERR and avgRating100 divide by) and ``undefined="skip"``: an undefined value stays NaN in the Results, and
  the case view (:mod:`gainscope.cases.scoring`) decides what it counts for;
* **edit distance**: ``edit_distance=`` (``--edit-distance``) is ``quepid`` (Quepid's shipped distance, also
  spelled ``quepid-legacy`` as the JavaScript runtime names it) or ``levenshtein``: :func:`distance_of` gives
  the metrics' ``distance`` parameter, :func:`runtime_distance` the runtime's name.

Query ids are the query texts. A rating must be >= 0: gainscope's metrics read a negative grade as "pooled but
unjudged", never as a rating, so a negative rating is an error here (a JavaScript scorer reads it as Quepid does).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gainscope.cases.scale import RatingScale
from gainscope.core.judged_run import JudgedRun, build_judged_run
from gainscope.core.judgments import Judgments
from gainscope.core.policies import Policies
from gainscope.core.run import Run
from gainscope.errors import InputError, InvalidParameterError, QueryCoverageWarning
from gainscope.metrics.base import Metric
from gainscope.metrics.edit_distance import EDIT_DISTANCES
from gainscope.metrics.profiles import ProfileUse, get_profile, profiled_policies

if TYPE_CHECKING:
    from gainscope.cases.view import QueryView
    from gainscope.results import Results

__all__ = ["DEFAULT_EDIT_DISTANCE", "PLACEHOLDER", "PROFILE", "case_inputs", "distance_of", "evaluate_judged",
           "evaluate_views", "judged_views", "quepid_policies", "runtime_distance"]

PROFILE = "quepid"
#: the doc id of the pooled-but-unjudged line of a query without ratings (another id when a result has it)
PLACEHOLDER = "(no rating)"

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


def _placeholder(results: Sequence[str]) -> str:
    doc = PLACEHOLDER
    while doc in results:
        doc += "'"
    return doc


def case_inputs(views: Sequence[QueryView], source: str | None = None) -> tuple[Judgments, Run]:
    """The judgments and the run of ``views`` (see the module docstring); InputError for a negative rating
    (naming ``source``, the case file, when given)."""
    qids: list[str] = []
    docs: list[str] = []
    grades: list[float] = []
    run_q: list[str] = []
    run_d: list[str] = []
    ranks: list[int] = []
    for v in views:
        rated = v.all_ratings()
        for doc, rating in rated.items():
            if rating < 0:
                raise InputError(f"{source + ': ' if source else ''}query {v.query!r}, document {doc!r}: rating "
                                 f"{rating:g} is negative; the built-in "
                                 "scorers are gainscope's metrics, which read a negative grade as pooled but "
                                 "unjudged, never as a rating: give ratings >= 0 (shift the scale), or score with a "
                                 "JavaScript scorer")
            qids.append(v.query)
            docs.append(doc)
            grades.append(rating)
        if not rated:
            qids.append(v.query)
            docs.append(_placeholder(v.doc_ids))
            grades.append(-1)
        run_q += [v.query] * len(v.doc_ids)
        run_d += v.doc_ids
        ranks += range(1, len(v.doc_ids) + 1)
    floats = any(isinstance(g, float) and not g.is_integer() for g in grades)
    judgments = Judgments.from_columns(qids, docs, [float(g) for g in grades] if floats else [int(g) for g in grades])
    return judgments, Run.from_columns(run_q, run_d, ranks=ranks, name="case")


def quepid_policies(scale: RatingScale) -> tuple[Policies, ProfileUse]:
    """The quepid profile's policies with ``max_grade`` = the top of ``scale`` (when > 0) and
    ``undefined="skip"``, and the record of the profile's use."""
    top = scale.max if scale.max > 0 else None
    policies, use = profiled_policies(get_profile(PROFILE), {"max_grade": top, "undefined": "skip"})
    assert use is not None
    return policies, use


def judged_views(views: Sequence[QueryView], scale: RatingScale,
                 source: str | None = None) -> tuple[JudgedRun, ProfileUse]:
    """The judged run of ``views`` under Quepid's conventions (the core's builder; the case view reports
    zero-result queries itself, so the builder's warning about judged queries without a ranking is not
    repeated)."""
    judgments, run = case_inputs(views, source)
    policies, use = quepid_policies(scale)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", QueryCoverageWarning)
        jr = build_judged_run(judgments, run, policies, sparse=True)
    return jr, use


def evaluate_judged(jr: JudgedRun, metrics: Sequence[Metric], use: ProfileUse) -> Results:
    """Every metric's kernel on ``jr`` (:func:`gainscope.evaluation.compute`), undefined values kept as NaN."""
    from gainscope.evaluation import compute

    return compute(jr, metrics, warn=False, profile=use)


def evaluate_views(views: Sequence[QueryView], metrics: Sequence[Metric], scale: RatingScale,
                   source: str | None = None) -> Results:
    """The Results of ``metrics`` on ``views`` (one row per query, ids = query texts; ``source``: the case file,
    for messages)."""
    jr, use = judged_views(views, scale, source)
    return evaluate_judged(jr, metrics, use)

