"""Scoring a case: one score per query, and the case score as Quepid computes it in the browser.

This module is a view. A built-in scorer's numbers are made by the one pipeline: each query's results in order
with its ratings as the judged pool, its metric evaluated under the quepid profile by the core's kernels
(:mod:`gainscope.cases.evaluation`), and the
:class:`~gainscope.results.Results` are kept in :attr:`CaseScore.results`; a custom scorer (JavaScript, a
Python callable) gives one value per query instead. Either is read by the same rules, Quepid's:

with ``unscored="quepid"`` (the default) every query is scored as Quepid's browser scores it
(``ScorerFactory.score`` and ``queriesSvc.scoreOthers``/``scoreAll``, o19s/quepid):

1. the scorer runs on **every** query, including those with zero results or no ratings (so
   ``if (numReturned() === 0) setScore(0)`` runs, and nDCG, AP, P, ... give their numbers there);
2. only a **null** score (JavaScript ``null``; a Python scorer's None; the built-ins avgRating100 and
   default, whose Quepid scripts set ``null``) is labelled: ``zsr`` when nothing was returned, else ``--``
   (status ``unrated``) when no document of the query is rated; these are **left out** of the case mean;
3. any other score is post-processed as Quepid does: **a negative score becomes 0**; there is no upper clamp
   (Quepid intends one, but its ``maxScore()`` reads ``scale[-1]``, which is ``undefined`` in JavaScript, so
   it never fires); a query without a number (NaN, ``undefined``, a null on a query that has results and
   ratings, an infinity) is **undefined**; ``fail()`` makes it **failed** (score 0).

The **case score** is the arithmetic mean of the values that count. Quepid maps every non-label score to a
number with ``score || 0.0``, so undefined and failed queries count as 0 (``undefined="skip"`` leaves
undefined ones out instead).

The other conventions (``--unscored``) do not run the scorer on zero-result and unrated queries at all:

* ``unscored="skip"``: they are labelled zsr / unrated and left out (gainscope's earlier rule; it differs
  from Quepid for every scorer that gives a number there, CG, DCG, nDCG, NDCG_CUT, P, AP, RR, ERR);
* ``unscored="zero"``: they are labelled likewise and count as 0 (the branch Quepid keeps commented out).

Known difference: an infinite score is *undefined* here (Quepid would average ``Infinity``). When no query
counts, the case score is None (Quepid's ``--``). Every rule applied, and the queries it applied to, is
listed in :attr:`CaseScore.conventions`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from gainscope.cases.model import Case
from gainscope.cases.overlap import check_rated_results
from gainscope.cases.scale import RatingScale
from gainscope.cases.scorers import BuiltinScorer, Scorer, ScorerResult
from gainscope.cases.view import QueryView
from gainscope.errors import PolicyError, format_ids

if TYPE_CHECKING:
    from gainscope.results import Results

__all__ = ["STATUSES", "UNSCORED", "CaseScore", "QueryScore", "case_scale", "score_case"]

STATUSES = ("scored", "zsr", "unrated", "undefined", "failed")
UNSCORED = ("quepid", "skip", "zero")
"""How zero-result and unrated queries are handled (see the module docstring)."""


@dataclass(frozen=True)
class QueryScore:
    """The score of one query.

    ``status`` is one of ``scored``, ``zsr`` (zero results), ``unrated`` (no ratings: Quepid's ``--``),
    ``undefined`` (the scorer gave no number) and ``failed`` (``fail()``); with ``unscored="quepid"`` a query
    is zsr or unrated only when its scorer gave null. ``value`` is the query score after clamping (None
    unless scored or failed), ``raw`` what the scorer gave, ``counted`` the value that went into the case mean
    (None when the query was left out).
    """

    query: str
    status: str
    value: float | None
    raw: float | None = None
    counted: float | None = None
    reason: str | None = None
    depth: int | None = None
    logs: tuple[str, ...] = ()


@dataclass(frozen=True)
class CaseScore:
    """Per-query scores, the case score and the conventions that produced them."""

    scorer: str
    scale: RatingScale
    queries: tuple[QueryScore, ...]
    score: float | None
    conventions: tuple[str, ...]
    case_name: str | None = None
    unscored: str = "quepid"
    undefined: str = "zero"
    #: a built-in scorer's evaluation: the metric's Results over the scored queries (ids = query texts,
    #: undefined values NaN) that the query scores above are read from; None for a custom scorer
    results: Results | None = field(default=None, compare=False, repr=False)

    def query(self, text: str) -> QueryScore:
        """The score of the query with this text (KeyError when absent)."""
        for q in self.queries:
            if q.query == text:
                return q
        raise KeyError(text)

    def per_query(self) -> dict[str, float | None]:
        """``{query: value}``."""
        return {q.query: q.value for q in self.queries}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary."""
        return {
            "case": self.case_name,
            "scorer": self.scorer,
            "scale": self.scale.to_json(),
            "score": self.score,
            "unscored": self.unscored,
            "undefined": self.undefined,
            "queries": [{"query": q.query, "status": q.status, "score": q.value, "raw": q.raw,
                         "counted": q.counted, "reason": q.reason, "depth": q.depth,
                         **({"logs": list(q.logs)} if q.logs else {})} for q in self.queries],
            "conventions": list(self.conventions),
        }


def _choice(name: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise PolicyError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
    return value


def score_case(case: Case, scorer: Scorer, *, scale: RatingScale | Any = None, unscored: str = "quepid",
               undefined: str = "zero", allow_unrated: bool = False) -> CaseScore:
    """Score every query of ``case`` with ``scorer`` and average them (see the module docstring).

    The rating scale is ``scale`` when given, else the case's, else the scorer's default (0-3 for graded
    built-ins, 0-1 for binary ones, 1-10 for the legacy ones; the binary ones take graded ratings on a scale
    widened to them, relevant = rating > 0, as Quepid's P, AP and RR do).

    A case none of whose returned documents is rated (nothing returned, nothing rated, or ratings and results
    that name different documents) is an :class:`~gainscope.errors.InconsistentInputError`, not a table of zeros,
    unless ``allow_unrated`` (for a scorer that reads no ratings); queries whose results are all unrated while
    they have ratings are warned about (see :mod:`gainscope.cases.overlap`).
    """
    _choice("unscored", unscored, UNSCORED)
    _choice("undefined", undefined, ("zero", "skip"))
    check_rated_results(case, allow_unrated=allow_unrated)
    used_scale, scale_origin = case_scale(case, scorer, scale)
    case = case.with_scale(used_scale)
    quepid = unscored == "quepid"
    to_score = [q for q in case.queries if quepid or (q.results and q.ratings)]
    views = [QueryView.of(q, used_scale) for q in to_score]
    evaluated: Results | None = None
    if isinstance(scorer, BuiltinScorer) and views:  # the one pipeline; the view below reads its Results
        evaluated = scorer.evaluate(views, case.source)
        scored = scorer.results_of(evaluated, views)
    else:  # a custom scorer: one value per query, read the same way
        scored = scorer.score_all(views)
    results = dict(zip((q.query for q in to_score), scored, strict=True))

    scores: list[QueryScore] = []
    labelled: dict[str, list[str]] = {"zsr": [], "unrated": []}
    numbered: dict[str, list[str]] = {"zsr": [], "unrated": []}
    clamped: list[str] = []
    undefined_queries: list[str] = []
    failed: list[str] = []
    for q in case.queries:
        empty = "zsr" if not q.results else "unrated" if not q.ratings else None
        result = results.get(q.query)
        if result is None or (empty is not None and result.null and result.value is None and not result.failed):
            assert empty is not None
            labelled[empty].append(q.query)
            reason = "zero results" if empty == "zsr" else "no rated documents"
            if result is not None:
                reason += "; the scorer gave null"
            scores.append(QueryScore(q.query, empty, None, counted=0.0 if unscored == "zero" else None,
                                     reason=reason, depth=result.depth if result else None,
                                     logs=result.logs if result else ()))
            continue
        qs = _query_score(q.query, result, undefined)
        if empty is not None:
            numbered[empty].append(q.query)
            what = "zero results" if empty == "zsr" else "no rated documents"
            qs = replace(qs, reason=f"{what}; scored as Quepid does" + (f" ({qs.reason})" if qs.reason else ""))
        if qs.raw is not None and qs.raw < 0:
            clamped.append(q.query)
        if qs.status == "undefined":
            undefined_queries.append(q.query)
        if qs.status == "failed":
            failed.append(q.query)
        scores.append(qs)
    counted = [qs.counted for qs in scores if qs.counted is not None]
    mean = math.fsum(counted) / len(counted) if counted else None

    conventions = [f"scorer: {scorer.name}",
                   f"scale: {used_scale.describe()}, max {_num(used_scale.max)} ({scale_origin})",
                   *scorer.conventions]
    conventions.append(f"case score: mean of {len(counted)} of {len(scores)} query scores"
                       + ("" if counted else " (no query counts: no case score)"))
    conventions.append(_UNSCORED_RULES[unscored])
    names = {"zsr": "zero-result", "unrated": "unrated"}
    for kind in ("zsr", "unrated"):
        if labelled[kind]:
            how = ("left out" if unscored != "zero" else "counted as 0") + (
                " (the scorer gave null)" if quepid else "")
            conventions.append(f"{names[kind]} queries {how}: {format_ids(labelled[kind])}")
        if numbered[kind]:
            conventions.append(f"{names[kind]} queries scored (the scorer gave no null; counted, as in Quepid): "
                               f"{format_ids(numbered[kind])}")
    if undefined_queries:
        how = "counted as 0 (Quepid's score || 0.0)" if undefined == "zero" else "left out"
        conventions.append(f"undefined scores {how}: {format_ids(undefined_queries)}")
    if failed:
        conventions.append(f"failed (fail() or a false assert) scored 0: {format_ids(failed)}")
    decimal = [q.query for q in case.queries if any(not float(r).is_integer() for r in q.ratings.values())]
    if decimal:
        conventions.append("decimal ratings: bestDocs hold parseInt(rating) as in Quepid's ratings store (the "
                           "ideal of nDCG/NDCG_CUT/blogNDCG, AP's relevant count, topRatings, eachDocWithRating, "
                           f"the edit distance); docRating keeps the decimals: {format_ids(decimal)}")
    conventions.append("negative scores become 0, as Quepid"
                       + (f": {format_ids(clamped)}" if clamped else " (none here)") + "; no upper clamp")
    return CaseScore(scorer.name, used_scale, tuple(scores), mean, tuple(conventions), case.name, unscored,
                     undefined, evaluated)


def case_scale(case: Case, scorer: Scorer, scale: RatingScale | Any = None) -> tuple[RatingScale, str]:
    """The rating scale ``case`` is scored on by ``scorer``, and where it comes from: ``scale`` when given, else
    the case's, else the scorer's (see :func:`score_case`). The case's ratings are checked against it when the
    case is put on it (:meth:`Case.with_scale`)."""
    if scale is not None:
        return RatingScale.parse(scale), "given"
    if case.scale is not None:
        return case.scale, "from the case"
    fit = getattr(scorer, "scale_for_ratings", None)
    if callable(fit):  # built-ins: see BuiltinScorer.scale_for_ratings
        used: tuple[RatingScale, str] = fit(r for q in case.queries for r in q.ratings.values())
        return used
    if scorer.default_scale is not None:
        return scorer.default_scale, "the scorer's default"
    raise PolicyError(f"no rating scale: the case names none and scorer {scorer.name} has no default; "
                      f"add \"scale\": [0, 1, 2, 3] (or similar) to the case")


_UNSCORED_RULES = {
    "quepid": "zero-result and unrated queries: --unscored quepid (Quepid's browser): the scorer runs on every "
              "query; only a null score makes a query zsr (no results) or -- (no ratings), left out of the mean",
    "skip": "zero-result and unrated queries: --unscored skip: not scored, left out of the mean (not Quepid's "
            "rule: Quepid runs the scorer on them and counts any number it gives)",
    "zero": "zero-result and unrated queries: --unscored zero: not scored, counted as 0 (the branch Quepid keeps "
            "commented out)",
}


def _query_score(query: str, result: ScorerResult, undefined: str) -> QueryScore:
    if result.failed:
        return QueryScore(query, "failed", 0.0, None, 0.0, result.reason or "fail()", result.depth, result.logs)
    raw = result.value
    if raw is None or not math.isfinite(raw):
        reason = result.reason or ("no score" if raw is None else f"the scorer gave {raw}")
        return QueryScore(query, "undefined", None, None, 0.0 if undefined == "zero" else None, reason,
                          result.depth, result.logs)
    value = max(raw, 0.0)
    return QueryScore(query, "scored", value, raw, value, result.reason, result.depth, result.logs)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)

