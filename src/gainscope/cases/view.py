"""What a scorer sees of one query: Quepid's scorer API in Python.

A :class:`QueryView` is built for each query of a case and handed to every scorer, built-in or custom. It
mirrors the functions Quepid gives JavaScript scorers (the JavaScript runtime implements the very same
definitions; a parity test keeps them equal):

==========================  ==================================================================================
Quepid (JavaScript)         :class:`QueryView`
==========================  ==================================================================================
``docs``                    ``doc_ids`` and ``ratings``: returned documents in rank order, None = unrated
``bestDocs``                ``best``: every rated document, returned or not, as ``(doc_id, trunc(rating))``,
                            rating descending, ties in the order of Quepid's ratings object (JavaScript's
                            key order: integer-like ids such as ``"42"`` first, ascending, then the others
                            in the case's order). Quepid's ratings store builds bestDocs with
                            ``parseInt(rating)``, so a rating of 2.5 is 2 there (in nDCG's ideal, AP's
                            relevant count, ``topRatings``, ``eachDocWithRating``, the edit distance) while
                            ``docRating`` keeps 2.5; gainscope does the same. ``rated`` keeps every rating
                            as the case holds it
``hasDocRating(i)``         ``has_doc_rating(i)``: a document at 0-based position ``i`` that is rated
``docRating(i)``            ``doc_rating(i)``: its rating, None when unrated or absent
``numFound()``              ``num_found``: the engine's total hits (``num_found`` of the case, else the number
                            of results)
``numReturned()``           ``num_returned``: the number of returned documents
``topRatings(n)``           ``top_ratings(n)``: the first ``n`` ratings of ``best``
``avgRating(n=10)``         ``avg_rating(n)``: the metric ``avgRating@n``
``avgRating100(n=10)``      ``avg_rating100(n)``: the metric ``avgRating100@n``
``editDistanceFromBest``    ``edit_distance_from_best(n, variant)``: ``editDistanceFromBest(distance=variant)@n``
``qOption(key)``            ``q_option(key)``: the query's option, None when absent
``max``                     ``scale_max``: the last value of the rating scale
==========================  ==================================================================================

The numbers (``avg_rating``, ``avg_rating100``, ``edit_distance_from_best``, and every built-in scorer through
:meth:`QueryView.evaluate`) are gainscope's metrics on this query, computed by the one pipeline under Quepid's
conventions (:mod:`gainscope.cases.evaluation`); the view builds the query's judged run once.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from gainscope.cases.model import CaseQuery
from gainscope.cases.scale import RatingScale
from gainscope.metrics.base import Metric
from gainscope.metrics.families.ratings import AvgRating, AvgRating100, EditDistanceFromBest

if TYPE_CHECKING:
    from gainscope.core.judged_run import JudgedRun
    from gainscope.metrics.profiles import ProfileUse
    from gainscope.results import Results

__all__ = ["DEFAULT_COUNT", "QueryView"]

DEFAULT_COUNT = 10
"""Quepid's ``DEFAULT_NUM_DOCS``: the depth of ``eachDoc``, ``avgRating`` and friends when no count is given."""

_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]*")
_MAX_INDEX = 2**32 - 2


def _js_key_order(keys: Iterable[str]) -> list[str]:
    """The order in which JavaScript lists an object's keys (ECMAScript OrdinaryOwnPropertyKeys): array
    indices (canonical integers 0 to 2^32 - 2) ascending, then the other keys in insertion order."""
    indices, others = [], []
    for key in keys:
        if _ARRAY_INDEX.fullmatch(key) and int(key) <= _MAX_INDEX:
            indices.append(key)
        else:
            others.append(key)
    return sorted(indices, key=int) + others


@dataclass(frozen=True)
class QueryView:
    """One query as a scorer sees it (see the module docstring for the Quepid equivalents)."""

    query: str
    doc_ids: tuple[str, ...]
    ratings: tuple[float | None, ...]
    best: tuple[tuple[str, int], ...]
    scale: RatingScale
    num_found: int
    options: Mapping[str, Any] = field(default_factory=dict)
    rated: tuple[tuple[str, float], ...] = ()

    @classmethod
    def of(cls, q: CaseQuery, scale: RatingScale) -> QueryView:
        """The view of a case query on a scale."""
        # Quepid's bestDocs: {id, rating: parseInt(rating)} for the keys of its ratings object, in JavaScript's
        # key order, sorted by that rating, descending (a stable sort)
        truncated = [(doc, math.trunc(q.ratings[doc])) for doc in _js_key_order(q.ratings)]
        best = tuple(sorted(truncated, key=lambda item: -item[1]))
        return cls(q.query, q.results, tuple(q.rating_list()), best, scale,
                   q.num_found if q.num_found is not None else len(q.results), dict(q.options),
                   tuple(q.ratings.items()))

    def all_ratings(self) -> dict[str, float]:
        """Every rating of the query as the case holds it, in the case's order (``rated``; for a view built
        without it, the best ratings overlaid with the returned documents' own)."""
        if self.rated:
            return dict(self.rated)
        out: dict[str, float] = dict(self.best)
        out.update((d, r) for d, r in zip(self.doc_ids, self.ratings, strict=True) if r is not None)
        return out

    # -------------------------------------------------------------------------------------- Quepid's API
    @property
    def num_returned(self) -> int:
        """The number of returned documents (``numReturned()``)."""
        return len(self.doc_ids)

    @property
    def scale_max(self) -> float:
        """The top of the rating scale (Quepid's ``max``)."""
        return self.scale.max

    def has_doc_rating(self, i: int) -> bool:
        """True when a document exists at 0-based position ``i`` and is rated (``hasDocRating(i)``)."""
        return 0 <= i < len(self.ratings) and self.ratings[i] is not None

    def doc_rating(self, i: int) -> float | None:
        """The rating at 0-based position ``i``; None when unrated or when there is no document there."""
        return self.ratings[i] if 0 <= i < len(self.ratings) else None

    def rating_or_zero(self, i: int) -> float:
        """The rating at position ``i``, 0 when unrated or absent: Quepid's "pessimistic" missing rating."""
        r = self.doc_rating(i)
        return 0.0 if r is None else r

    def top_ratings(self, count: int) -> list[float]:
        """The first ``count`` ratings of ``best`` (fewer when fewer documents are rated; not padded)."""
        return [r for _, r in self.best[:count]]

    def q_option(self, key: str) -> Any:
        """The query option ``key``, None when absent (``qOption``)."""
        return self.options.get(key)

    def avg_rating(self, count: int = DEFAULT_COUNT) -> float | None:
        """Mean rating of the *rated* documents among the first ``count`` returned, None when none is rated:
        the metric ``avgRating@count`` (ratings truncated to integers first, as Quepid's ``parseInt``)."""
        return self._value(AvgRating(cutoff=count))

    def avg_rating100(self, count: int = DEFAULT_COUNT) -> float | None:
        """``floor(avgRating * (100 / max))``, the mean rating on a 0-100 scale rounded down: the metric
        ``avgRating100@count`` with ``max`` the top of the scale. None when no document is rated, and also when
        the mean is 0: Quepid tests ``!avg``, so an average of exactly 0 counts as "no average"."""
        return self._value(AvgRating100(cutoff=count))

    def edit_distance_from_best(self, count: int = DEFAULT_COUNT, variant: str = "quepid") -> int:
        """The edit distance between the returned ratings and the best ratings: the metric
        ``editDistanceFromBest(distance=variant)@count`` (``variant``: ``quepid``, Quepid's shipped distance,
        also spelled ``quepid-legacy``; or ``levenshtein``)."""
        from gainscope.cases.evaluation import distance_of

        value = self._value(EditDistanceFromBest(cutoff=count, distance=distance_of(variant)))
        assert value is not None  # a distance is always defined
        return int(value)

    # ------------------------------------------------------------------------------------ the pipeline
    @cached_property
    def _judged(self) -> tuple[JudgedRun, ProfileUse]:
        from gainscope.cases.evaluation import judged_views

        return judged_views([self], self.scale)

    def evaluate(self, metrics: Sequence[Metric]) -> Results:
        """``metrics`` on this query through the one pipeline, under Quepid's conventions (see
        :mod:`gainscope.cases.evaluation`); the judged run is built once per view. Undefined values are NaN."""
        from gainscope.cases.evaluation import evaluate_judged

        jr, use = self._judged
        return evaluate_judged(jr, metrics, use)

    def _value(self, metric: Metric) -> float | None:
        value = float(self.evaluate([metric]).values[0, 0])
        return None if math.isnan(value) else value
