"""Scoring a case: one score per query, and the case score as Quepid computes it in the browser.

Per query (in this order):

1. **zero results** (``zsr``): nothing was returned. Not scored.
2. **unrated** (Quepid's ``--``): no document of the query is rated. Not scored (Quepid does not run the
   scorer either).
3. otherwise the scorer runs. Its number is the query score, with Quepid's post-processing: **a negative
   score becomes 0**; there is no upper clamp (Quepid intends one, but its ``maxScore()`` reads
   ``scale[-1]``, which is ``undefined`` in JavaScript, so it never fires). A scorer that gives no number
   (``null``, NaN, an infinity) makes the query **undefined**; ``fail()`` makes it **failed** (score 0).

The **case score** is the arithmetic mean of the query scores over the queries that count:

* ``unscored="skip"`` (default, Quepid's browser): zero-result and unrated queries are left out;
  ``unscored="zero"`` counts them as 0 (the option Quepid's code keeps commented out; Quepid's server, which
  nightly runs use, does something close: it averages every query with NaN as 0);
* ``undefined="zero"`` (default, as Quepid's server maps NaN to 0) counts undefined queries as 0;
  ``undefined="skip"`` leaves them out;
* failed queries count as 0.

When no query counts, the case score is None (Quepid's ``--``). Every rule applied, and the queries it applied
to, is listed in :attr:`CaseScore.conventions`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from gainscope.cases.model import Case
from gainscope.cases.scale import RatingScale
from gainscope.cases.scorers import Scorer, ScorerResult
from gainscope.cases.view import QueryView
from gainscope.errors import PolicyError, format_ids

__all__ = ["STATUSES", "CaseScore", "QueryScore", "score_case"]

STATUSES = ("scored", "zsr", "unrated", "undefined", "failed")


@dataclass(frozen=True)
class QueryScore:
    """The score of one query.

    ``status`` is one of ``scored``, ``zsr`` (zero results), ``unrated`` (no ratings), ``undefined`` (the
    scorer gave no number) and ``failed`` (``fail()``). ``value`` is the query score after clamping (None
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
            "queries": [{"query": q.query, "status": q.status, "score": q.value, "raw": q.raw,
                         "counted": q.counted, "reason": q.reason, "depth": q.depth,
                         **({"logs": list(q.logs)} if q.logs else {})} for q in self.queries],
            "conventions": list(self.conventions),
        }


def _choice(name: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise PolicyError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
    return value


def score_case(case: Case, scorer: Scorer, *, scale: RatingScale | Any = None, unscored: str = "skip",
               undefined: str = "zero") -> CaseScore:
    """Score every query of ``case`` with ``scorer`` and average them (see the module docstring).

    The rating scale is ``scale`` when given, else the case's, else the scorer's default (0-3 for graded
    built-ins, 0-1 for binary ones, 1-10 for the legacy ones).
    """
    _choice("unscored", unscored, ("skip", "zero"))
    _choice("undefined", undefined, ("zero", "skip"))
    if scale is not None:
        used_scale, scale_origin = RatingScale.parse(scale), "given"
        case = case.with_scale(used_scale)
    elif case.scale is not None:
        used_scale, scale_origin = case.scale, "from the case"
    elif scorer.default_scale is not None:
        used_scale, scale_origin = scorer.default_scale, "the scorer's default"
        case = case.with_scale(used_scale)
    else:
        raise PolicyError(f"no rating scale: the case names none and scorer {scorer.name} has no default; "
                          f"add \"scale\": [0, 1, 2, 3] (or similar) to the case")
    zsr = [q.query for q in case.queries if not q.results]
    unrated = [q.query for q in case.queries if q.results and not q.ratings]
    to_score = [q for q in case.queries if q.results and q.ratings]
    results = dict(zip((q.query for q in to_score),
                       scorer.score_all([QueryView.of(q, used_scale) for q in to_score]), strict=True))

    scores: list[QueryScore] = []
    clamped: list[str] = []
    undefined_queries: list[str] = []
    failed: list[str] = []
    for q in case.queries:
        if q.query in results:
            qs = _query_score(q.query, results[q.query], undefined)
            if qs.raw is not None and qs.raw < 0:
                clamped.append(q.query)
            if qs.status == "undefined":
                undefined_queries.append(q.query)
            if qs.status == "failed":
                failed.append(q.query)
        else:
            status = "zsr" if not q.results else "unrated"
            reason = "zero results" if status == "zsr" else "no rated documents"
            qs = QueryScore(q.query, status, None, counted=0.0 if unscored == "zero" else None, reason=reason)
        scores.append(qs)
    counted = [qs.counted for qs in scores if qs.counted is not None]
    mean = math.fsum(counted) / len(counted) if counted else None

    conventions = [f"scorer: {scorer.name}",
                   f"scale: {used_scale.describe()}, max {_num(used_scale.max)} ({scale_origin})",
                   *scorer.conventions]
    conventions.append(f"case score: mean of {len(counted)} of {len(scores)} query scores"
                       + ("" if counted else " (no query counts: no case score)"))
    if zsr or unrated:
        how = "counted as 0" if unscored == "zero" else "left out (Quepid's browser)"
        if zsr:
            conventions.append(f"zero-result queries {how}: {format_ids(zsr)}")
        if unrated:
            conventions.append(f"unrated queries {how}: {format_ids(unrated)}")
    if undefined_queries:
        how = "counted as 0 (as Quepid's server maps NaN to 0)" if undefined == "zero" else "left out"
        conventions.append(f"undefined scores {how}: {format_ids(undefined_queries)}")
    if failed:
        conventions.append(f"failed (fail() or a false assert) scored 0: {format_ids(failed)}")
    conventions.append("negative scores become 0, as Quepid"
                       + (f": {format_ids(clamped)}" if clamped else " (none here)") + "; no upper clamp")
    return CaseScore(scorer.name, used_scale, tuple(scores), mean, tuple(conventions), case.name)


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

