"""How a case's ratings meet its results, and how two inputs meet by query: input that matches nothing never becomes
a table of zeros.

Scoring a case (:func:`check_rated_results`, called by :func:`~gainscope.cases.scoring.score_case`):

* **a case without queries**, or **no returned document of any query rated** (nothing returned at all, nothing
  rated at all, or ratings and results that name different documents) -- an
  :class:`~gainscope.errors.InconsistentInputError` naming the case, example ids of both sides and the likely
  cause (ids that match once whitespace and leading zeros are removed). ``allow_unrated=True``
  (``--allow-unrated``) scores such a case anyway, for a scorer that reads no ratings (a zero-results check);
* **partly**: queries that have results and ratings but none of whose results is rated -- one
  :class:`~gainscope.errors.QueryCoverageWarning` naming them (Quepid scores them as it scores unrated
  results: 0 for the built-ins). Queries without results (Quepid's ``zsr``) or without ratings (``--``) are
  labelled in the scores themselves and need no warning.

Joining two inputs by query (:func:`check_query_join`: a Quepid snapshot with a ratings CSV, a ``_rank_eval``
request with its response, RRE ratings with results, a case with a run, two cases compared): **no query in
common** is an :class:`~gainscope.errors.InconsistentInputError` naming both sides; **partly** is a
:class:`~gainscope.errors.QueryCoverageWarning` for each side naming its queries the other does not have.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from gainscope.cases.model import Case
from gainscope.errors import InconsistentInputError, QueryCoverageWarning, format_ids, loose_match

__all__ = ["ALLOW_UNRATED", "check_query_join", "check_rated_results", "no_query_in_common"]

ALLOW_UNRATED = "--allow-unrated (allow_unrated=True in Python)"
"""How to score a case whose returned documents are all unrated, as the command line and Python spell it."""


def _quoted(ids: Sequence[str], limit: int = 3) -> str:
    return format_ids([repr(i) for i in ids], limit)


def _queries(n: int) -> str:
    return f"{n} quer{'y' if n == 1 else 'ies'}"


def check_rated_results(case: Case, *, allow_unrated: bool = False) -> None:
    """Refuse a case whose returned documents are none of them rated; warn about the queries whose are not (see
    the module docstring)."""
    where = f"{case.source}: " if case.source else ""
    if not case.queries:
        raise InconsistentInputError(f"{where}the case has no queries: there is nothing to score")
    returned = [q for q in case.queries if q.results]
    matched = {q.query for q in returned if any(d in q.ratings for d in q.results)}
    if not matched and not allow_unrated:
        rated = [q for q in case.queries if q.ratings]
        if not returned:
            text = (f"no query of the case has results (all {_queries(len(case.queries))} returned nothing): there "
                    f"is nothing to score; add each query's results, the engine's answer in rank order (for example "
                    f"gainscope case import ... --run RUN)")
        elif not rated:
            text = ("no query of the case has a rated document: there is nothing to score the results against; add "
                    "the ratings (for example gainscope case import --quepid-ratings RATINGS.csv ...)")
        else:
            result_ids = [d for q in returned for d in q.results]
            rated_ids = [d for q in rated for d in q.ratings]
            near = loose_match(result_ids, rated_ids)
            hint = (f"; {near[0]!r} and {near[1]!r} match once whitespace and leading zeros are removed: fix the ids "
                    f"so that both spell them the same" if near else
                    "; check that the ratings and the results use the same document ids (the same id field)")
            text = (f"no returned document of any query is rated: the results name {_quoted(result_ids)}; the "
                    f"ratings name {_quoted(rated_ids)}{hint}")
        raise InconsistentInputError(f"{where}{text}; to score anyway with a scorer that reads no ratings, give "
                                     f"{ALLOW_UNRATED}")
    unmatched = [q.query for q in returned if q.ratings and q.query not in matched]
    if matched and unmatched:
        warnings.warn(QueryCoverageWarning(
            f"{where}{_queries(len(unmatched))} of {len(returned)} with results "
            f"{'has' if len(unmatched) == 1 else 'have'} ratings, but none of the documents returned is rated (they "
            f"score as Quepid scores unrated results, 0 for the built-in scorers; different document ids?): "
            f"{format_ids(unmatched)}"), stacklevel=3)


def no_query_in_common(left: Sequence[str], right: Sequence[str], *, left_name: str, right_name: str,
                       hint: str = "") -> InconsistentInputError:
    """The error for two inputs that share no query: both sides named, with example ids and the likely cause."""
    near = loose_match(left, right)
    cause = (f"; {near[0]!r} and {near[1]!r} match once whitespace and leading zeros are removed: fix the ids so "
             f"that both spell them the same" if near else "")
    return InconsistentInputError(f"no query of {left_name} is in {right_name}: {left_name} has "
                                  f"{_quoted(list(left))}; {right_name} has {_quoted(list(right))}{cause}"
                                  + (f" ({hint})" if hint else ""))


def check_query_join(left: Sequence[str], right: Sequence[str], *, left_name: str, right_name: str,
                     hint: str = "", warn: bool = True) -> None:
    """Refuse two lists of query ids that share none; with ``warn``, warn for each side about the ids the other
    lacks. ``left_name`` and ``right_name`` say what each side is (and where it comes from); ``hint`` how they
    are matched."""
    if not left or not right:
        return
    right_set, left_set = set(right), set(left)
    if not left_set & right_set:
        raise no_query_in_common(left, right, left_name=left_name, right_name=right_name, hint=hint)
    if not warn:
        return
    for name, ids, other, other_name in ((left_name, left, right_set, right_name),
                                         (right_name, right, left_set, left_name)):
        only = [q for q in ids if q not in other]
        if only:
            warnings.warn(QueryCoverageWarning(
                f"{_queries(len(only))} of {name} {'is' if len(only) == 1 else 'are'} not in {other_name}: "
                f"{format_ids(only)}"), stacklevel=3)
