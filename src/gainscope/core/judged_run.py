"""JudgedRun: a run joined with judgments and put in order once, as flat arrays for the metric kernels.

Building a :class:`JudgedRun` is where every ordering policy is applied, exactly once:

1. the query universe is chosen (``missing_queries``): every judged query (``"zero"``, trec_eval ``-c``, and
   ``"empty"``) or only judged queries that also have a ranking (``"skip"``); ranked queries without any
   judgment are ignored and reported;
2. each run row gets the grade of its (query, doc) judgment, or NaN when the document is not judged;
   negative grades stay negative ("pooled but unjudged") unless ``negative_grades="nonrelevant"`` makes them 0;
3. rows are ordered within each query (``ties``): trec_eval sorts by score descending and breaks ties by doc
   id descending, comparing bytes (``strcmp``); ``"rank"`` keeps the order given; ``"average"`` sorts by
   score and records tie groups so that kernels can average gains inside them;
4. rankings are cut at ``depth`` (trec_eval ``-M``), then unjudged documents are dropped if ``judged_only``
   (trec_eval ``-J``; note trec_eval applies ``-M`` before ``-J`` too).

The result holds, for ``nq`` queries in bytewise id order, the ranked positions that matter: every position
holding a judged document, and any others the builder chose to keep (the polars builder keeps them all; a
sparse builder keeps only judged ones, since an unjudged document adds nothing to any metric). Kernels only
ever read the arrays below, so both forms give the same numbers.

==================  ===========  ====================================================================
array               shape        content
==================  ===========  ====================================================================
``num_ret``         ``nq``       documents ranked per query, after depth and judged-only
``offsets``         ``nq + 1``   start of each query's kept positions in the flat arrays
``rank``            ``h``        1-based rank of each kept position (ascending within a query)
``grades``          ``h``        its grade; NaN = not judged (only in dense form)
``doc_ids``         ``h``        its doc id when known (a polars string Series, made when first read), else None
``scores``          ``h``        its score (NaN when the run has no scores)
``group_start``     ``h``        ``ties="average"``: first rank of its group of tied scores (else its rank)
``group_kept``      ``h``        positions of that group within the ranking (1 unless ties are averaged)
``group_size``      ``h``        documents of that group, including those a depth cut off
``tail_*``          ``t``        judged documents cut off by a depth whose tie group is partly kept:
                                 ``tail_grades``, their query ``tail_query``, group ``tail_start``,
                                 ``tail_kept``, ``tail_size``
``judged_offsets``  ``nq + 1``   start of each query's judged grades
``judged_grades``   ``m``        every non-negative judged grade of the query, sorted descending (truncated
                                 to integers under ``judged_grades="truncated"``)
``judged_doc_ids``  ``m``        the doc ids of those grades (for explanations)
``missing``         ``nq``       True for judged queries that have no ranking at all
``session``         (optional)   a :class:`SessionLayout` for sessions of several searches (agents)
==================  ===========  ====================================================================

A ranked list is a *session* of one document per iteration: every rank is its own iteration and its own
search, every position is a first occurrence, no gain is unknown, and a judged document counts as retrieved at
its rank. ``session`` is None then (the builders above never set it; nothing is copied). A session of an
agent's searches, built by :func:`gainscope.core.sessions.build_session_run`, carries a
:class:`SessionLayout` instead: the iteration and search of every position, which positions are first
occurrences after de-duplication, which gains are unknown, and when each judged document was retrieved.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from gainscope.core.judgments import JudgmentArrays, Judgments
from gainscope.core.policies import Policies, policy_option
from gainscope.core.run import Run
from gainscope.deferred import DeferredSeries, deferred_module
from gainscope.errors import InconsistentInputError, InputWarning, QueryCoverageWarning, format_ids, loose_match, option

if TYPE_CHECKING:
    import polars as pl
else:
    pl = deferred_module("polars")

__all__ = ["Coverage", "JudgedRun", "PreparedJudgments", "RankedPositions", "SessionLayout", "build_judged_run",
           "judged_run_from_positions", "no_overlap_message", "query_index"]


@dataclass(frozen=True)
class Coverage:
    """How the run's queries met the judged queries; reported with every result."""

    judged_queries: int
    ranked_queries: int
    evaluated_queries: int
    missing: tuple[str, ...] = ()   # judged, not ranked (scored 0 or skipped, by policy)
    ignored: tuple[str, ...] = ()   # ranked, not judged (always ignored)
    tied_groups: int = 0            # groups of equal scores within a query, broken by the ties policy
    # steps down the score order between neighbours of a query, and those that go to a better (smaller) rank:
    # the material of the "are the scores distances?" warning (not in as_dict; a distributed engine adds them up)
    rank_steps: int = 0
    rank_down: int = 0

    def as_dict(self) -> dict[str, object]:
        """Counts and the ids involved, for JSON output."""
        return {
            "judged_queries": self.judged_queries,
            "ranked_queries": self.ranked_queries,
            "evaluated_queries": self.evaluated_queries,
            "missing_queries": list(self.missing),
            "ignored_queries": list(self.ignored),
            "tied_groups": self.tied_groups,
        }


@dataclass(frozen=True, eq=False)
class SessionLayout:
    """How the positions of a :class:`JudgedRun` form sessions of iterations and searches (seed 003).

    ==================  ======  ==============================================================================
    array               shape   content
    ==================  ======  ==============================================================================
    ``iteration``       ``h``   1-based iteration of each position (non-decreasing within a query; an
                                iteration whose searches returned nothing has no position)
    ``search``          ``h``   1-based number of the search that returned it, counted over the session
                                (a search that returned nothing has no position but keeps its number)
    ``first``           ``h``   True at the first occurrence of a document in the session (de-duplicated),
                                False at its repetitions
    ``unknown``         ``h``   True where the document's gain is unknown (a failed judge, a trace without a
                                gain): its grade is NaN, as an unjudged one's, but session metrics make the
                                values it enters undefined instead of counting it 0
    ``num_iterations``  ``nq``  N: the iterations of each session (trailing iterations without results count)
    ``judged_iteration`` ``m``  per judged grade (``judged_grades`` order): the first iteration at which the
                                session retrieved that judged document, 0 when it never did
    ==================  ======  ==============================================================================

    Metrics other than the session family read grades only, so to them a document with an unknown gain is an
    unjudged one.
    """

    iteration: np.ndarray
    search: np.ndarray
    first: np.ndarray
    unknown: np.ndarray
    num_iterations: np.ndarray
    judged_iteration: np.ndarray


@dataclass(frozen=True, eq=False)
class JudgedRun:
    """Rankings in final order with their grades, and each query's judged grades; see the module docstring."""

    query_ids: tuple[str, ...]
    num_ret: np.ndarray
    offsets: np.ndarray
    rank: np.ndarray
    grades: np.ndarray
    doc_ids: pl.Series | DeferredSeries | None
    scores: np.ndarray
    group_start: np.ndarray
    group_kept: np.ndarray
    group_size: np.ndarray
    tail_grades: np.ndarray
    tail_query: np.ndarray
    tail_start: np.ndarray
    tail_kept: np.ndarray
    tail_size: np.ndarray
    judged_offsets: np.ndarray
    judged_grades: np.ndarray
    judged_doc_ids: pl.Series | DeferredSeries
    missing: np.ndarray
    policies: Policies
    run_name: str = "run"
    coverage: Coverage = field(default_factory=lambda: Coverage(0, 0, 0))
    #: None for a ranked list (one document per iteration); see :class:`SessionLayout`
    session: SessionLayout | None = None

    # ------------------------------------------------------------------ shape helpers
    @property
    def num_queries(self) -> int:
        """Number of evaluated queries."""
        return len(self.query_ids)

    @cached_property
    def lengths(self) -> np.ndarray:
        """Number of kept positions per query (``num_ret`` in dense form, fewer in sparse form)."""
        return np.diff(self.offsets)

    @cached_property
    def segment(self) -> np.ndarray:
        """Query index of every ranked document."""
        return np.repeat(np.arange(self.num_queries, dtype=np.int64), self.lengths)

    @property
    def position(self) -> np.ndarray:
        """1-based rank of every kept position within its query (the ``rank`` array)."""
        return self.rank

    @cached_property
    def top_grade(self) -> float:
        """The largest grade of the evaluated queries, judged or ranked (0 when none is positive): the default top
        of a grading scale (ERR, avgRating100). Ranked grades count too: ``judged_grades="truncated"`` truncates
        the judged pool only, and a scale below a ranked grade would make ERR's stopping probability exceed 1."""
        judged = float(self.judged_grades.max()) if len(self.judged_grades) else 0.0
        ranked = self.grades[~np.isnan(self.grades)]
        return max(judged, float(ranked.max()) if len(ranked) else 0.0, 0.0)

    @cached_property
    def judged_lengths(self) -> np.ndarray:
        """Number of (non-negative) judged documents per query."""
        return np.diff(self.judged_offsets)

    @cached_property
    def judged_segment(self) -> np.ndarray:
        """Query index of every judged grade."""
        return np.repeat(np.arange(self.num_queries, dtype=np.int64), self.judged_lengths)

    def query_slice(self, index: int) -> slice:
        """The slice of the flat arrays holding query ``index``'s kept positions."""
        return slice(int(self.offsets[index]), int(self.offsets[index + 1]))

    def judged_slice(self, index: int) -> slice:
        """The slice of ``judged_grades`` holding query ``index``."""
        return slice(int(self.judged_offsets[index]), int(self.judged_offsets[index + 1]))

    def index_of(self, query_id: str) -> int:
        """Position of a query id in ``query_ids``; KeyError-free: raises InconsistentInputError."""
        try:
            return self._index[query_id]
        except KeyError:
            raise InconsistentInputError(
                f"query {query_id!r} is not evaluated; evaluated queries: {format_ids(list(self.query_ids))}"
            ) from None

    @cached_property
    def _index(self) -> dict[str, int]:
        return {q: i for i, q in enumerate(self.query_ids)}


def _bytewise_sorted(ids: list[str]) -> list[str]:
    """``ids`` in the order of their UTF-8 bytes (``surrogatepass``), trec_eval's ``strcmp``: the order of their
    code points, as Python compares strings (UTF-8 keeps the order of code points, surrogates included), so no
    string is encoded."""
    return sorted(ids)


def _bytewise_order(ids: list[str]) -> list[int]:
    """The positions of ``ids`` in :func:`_bytewise_sorted` order."""
    return sorted(range(len(ids)), key=ids.__getitem__)


def query_index(ids: pl.Series) -> tuple[list[str], np.ndarray]:
    """The distinct ``ids`` in bytewise order and each row's index among them (int64). Judgments nearly always hold
    each query's rows together: then the runs of equal ids are numbered, with one comparison per row and a sort of
    the distinct ids only; otherwise each row is looked up (a hash join, a second per 10 million rows)."""
    n = len(ids)
    change = np.ones(n, dtype=bool)
    if n > 1:
        change[1:] = (ids.slice(1) != ids.slice(0, n - 1)).to_numpy()
    starts = np.flatnonzero(change)
    run_ids: list[str] = ids.gather(starts).to_list()
    if len(set(run_ids)) == len(run_ids):  # one run per id
        order = _bytewise_order(run_ids)
        rank = np.empty(len(order), dtype=np.int64)
        rank[np.array(order, dtype=np.int64)] = np.arange(len(order), dtype=np.int64)
        return [run_ids[i] for i in order], np.repeat(rank, np.diff(np.append(starts, n)))
    query_ids = _bytewise_sorted(list(set(run_ids)))
    index = {q: i for i, q in enumerate(query_ids)}
    return query_ids, ids.replace_strict(index, return_dtype=pl.Int64).to_numpy()


@dataclass(frozen=True, eq=False)
class PreparedJudgments:
    """Judgments made ready once, for any number of runs evaluated under the same ``negative_grades``
    policy: float grades, the judged query ids in bytewise order, and every judged query's non-negative grades
    sorted descending (the material of ideal rankings and totals), with their doc ids.

    The judgments' rows, in their own order, are the rows of :attr:`frame` (the scanner's ``hit_row`` refers to
    them); :meth:`grades_at` gives the float grades of some of them, :attr:`row_grades` of all. Judgments the C
    scanner read (:attr:`Judgments.arrays`) are prepared with numpy alone; their :attr:`frame`, ``doc_ids`` and
    :attr:`row_grades` are made when first read (evaluating them needs none: W200k's 7.9 million judgments would
    hold 63 MB of float grades beside the reader's integer ones)."""

    judgments: Judgments
    negative_grades: str
    query_ids: list[str]
    offsets: np.ndarray
    grades: np.ndarray
    doc_ids: pl.Series | DeferredSeries

    @cached_property
    def frame(self) -> pl.DataFrame:
        """``query_id``, ``doc_id`` and the float ``grade`` under ``negative_grades``, in the judgments' order."""
        return _float_grades(self.judgments.frame, self.negative_grades)

    @cached_property
    def row_grades(self) -> np.ndarray:
        """The float grade of every judgment under ``negative_grades``, in the judgments' order (the rows of
        :attr:`frame`)."""
        arrays = self.judgments.arrays
        if arrays is None:
            return self.frame["grade"].to_numpy().astype(np.float64, copy=False)
        return self.grades_at(slice(None))

    def grades_at(self, rows: np.ndarray | slice) -> np.ndarray:
        """The float grades (under ``negative_grades``) of the judgments' ``rows``: for judgments the C scanner
        read, from its integer grades, without a float grade for every judgment."""
        arrays = self.judgments.arrays
        if arrays is None or "row_grades" in self.__dict__:
            return np.asarray(self.row_grades[rows])
        out = arrays.grades[rows].astype(np.float64)
        if self.negative_grades == "nonrelevant":
            np.maximum(out, 0.0, out=out)
        return out

    @classmethod
    def of(cls, judgments: Judgments, negative_grades: str = "unjudged") -> PreparedJudgments:
        """Prepare ``judgments`` for the given ``negative_grades`` policy."""
        if judgments.arrays is not None:
            return cls._of_arrays(judgments, judgments.arrays, negative_grades)
        frame = _float_grades(judgments.frame, negative_grades)
        query_ids, row_query = query_index(frame["query_id"])
        row_grades = frame["grade"].to_numpy().astype(np.float64, copy=False)
        # each query's judged grades, descending: numbers sorted, not strings (the doc ids, in _judged_rows'
        # order, are made when first read, as for the C reader's arrays)
        judged = row_grades >= 0
        row_query = row_query[judged]
        kept = row_grades[judged]
        offsets = np.zeros(len(query_ids) + 1, dtype=np.int64)
        np.cumsum(np.bincount(row_query, minlength=len(query_ids)), out=offsets[1:])
        prepared = cls(judgments, negative_grades, query_ids, offsets, kept[np.lexsort((-kept, row_query))],
                       DeferredSeries(lambda: _judged_rows(frame, query_ids)["doc_id"]))
        prepared.__dict__["row_grades"] = row_grades  # made already (the cached property's slot)
        prepared.__dict__["frame"] = frame  # made already (the cached property's slot)
        return prepared

    @classmethod
    def _of_arrays(cls, judgments: Judgments, arrays: JudgmentArrays, negative_grades: str) -> PreparedJudgments:
        """:meth:`of` for judgments the scanner read: the same query ids, offsets and grades, made by the C module
        from its arrays (each query's judged grades gathered and sorted descending: ``judged_grades``), with no
        per-judgment array."""
        from gainscope import _scan  # type: ignore[attr-defined]  # the arrays come from it

        nonrelevant = negative_grades == "nonrelevant"
        by_id = _bytewise_order(arrays.query_ids)
        query_ids = list(map(arrays.query_ids.__getitem__, by_id))
        rank = np.empty(len(by_id), dtype=np.int64)
        rank[np.array(by_id, dtype=np.int64)] = np.arange(len(by_id), dtype=np.int64)
        offsets, grades = _scan.judged_grades(arrays.row_query, arrays.grades, rank, nonrelevant)
        prepared: PreparedJudgments

        def doc_ids() -> pl.Series:  # in the order of the polars path: equal grades by doc id
            return _judged_rows(prepared.frame, query_ids)["doc_id"]

        prepared = cls(judgments, negative_grades, query_ids, np.frombuffer(offsets, dtype=np.int64),
                       np.frombuffer(grades, dtype=np.float64), DeferredSeries(doc_ids))
        return prepared

    def under(self, negative_grades: str) -> PreparedJudgments:
        """These judgments prepared for ``negative_grades``: ``self`` when they already are."""
        return self if negative_grades == self.negative_grades else PreparedJudgments.of(self.judgments,
                                                                                          negative_grades)

    def subset(self, universe: list[str]) -> tuple[np.ndarray, np.ndarray, pl.Series | DeferredSeries]:
        """Offsets, grades and doc ids of the judged grades of ``universe`` (a bytewise-ordered subset)."""
        if len(universe) == len(self.query_ids):
            return self.offsets, self.grades, self.doc_ids
        position = {q: i for i, q in enumerate(self.query_ids)}
        picked = np.array([position[q] for q in universe], dtype=np.int64)
        lengths = np.diff(self.offsets)[picked]
        offsets = np.zeros(len(universe) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        take = ranges(self.offsets[picked], lengths)
        return offsets, self.grades[take], DeferredSeries(lambda: self.doc_ids.gather(take))


def ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indexes ``starts[i], starts[i] + 1, ..., starts[i] + lengths[i] - 1`` of every ``i`` in turn, as one int64
    array (the gather of those slices): steps of 1 summed in place, each range's first step the jump from the
    previous range's last index, so that no other array as long as the result is made."""
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    out = np.ones(int(lengths.sum()), dtype=np.int64)
    if len(out) == 0:
        return out
    filled = lengths > 0
    first, size = starts[filled], lengths[filled]
    at = np.zeros(len(size), dtype=np.int64)
    np.cumsum(size[:-1], out=at[1:])
    jump = first.copy()
    jump[1:] -= first[:-1] + size[:-1] - 1
    out[at] = jump
    return np.cumsum(out, out=out)


def _float_grades(frame: pl.DataFrame, negative_grades: str) -> pl.DataFrame:
    """``query_id``, ``doc_id`` and the grade as a float, negative grades made 0 under ``"nonrelevant"``."""
    frame = frame.select("query_id", "doc_id", pl.col("grade").cast(pl.Float64))
    if negative_grades == "nonrelevant":
        frame = frame.with_columns(pl.col("grade").clip(lower_bound=0.0))
    return frame


def _judged_rows(frame: pl.DataFrame, query_ids: list[str]) -> pl.DataFrame:
    """The judgments with a non-negative grade, by query (``_q``: index in ``query_ids``), grade descending,
    then doc id."""
    index = {q: i for i, q in enumerate(query_ids)}
    return (frame.filter(pl.col("grade") >= 0)
            .with_columns(pl.col("query_id").replace_strict(index, return_dtype=pl.Int64).alias("_q"))
            .sort(["_q", "grade", "doc_id"], descending=[False, True, False]))


def build_judged_run(judgments: Judgments | PreparedJudgments, run: Run, policies: Policies | None = None, *,
                     sparse: bool = False) -> JudgedRun:
    """Join ``run`` with ``judgments`` and order it under ``policies`` (see the module docstring).

    With ``sparse=True`` only the positions of judged documents are kept (the dense form keeps every
    ranked document, with its doc id, for explanations); every metric gives the same value on both.

    Warns (:class:`~gainscope.errors.QueryCoverageWarning`) about ranked queries without judgments and judged
    queries without a ranking; raises :class:`~gainscope.errors.InconsistentInputError` when no query is both
    judged and ranked.
    """
    policies = policies or Policies()
    prepared = judgments if isinstance(judgments, PreparedJudgments) else PreparedJudgments.of(judgments)
    prepared = prepared.under(policies.negative_grades)
    judgments = prepared.judgments
    jframe = prepared.frame
    rframe = run.frame.with_row_index("_row")

    judged_q = prepared.query_ids
    ranked_q = _bytewise_sorted(rframe["query_id"].unique().to_list())
    universe, missing, ignored = _query_universe(judged_q, ranked_q, policies, judgments.source, run.source)
    ranked_set = set(ranked_q)
    rows, order_by_scores = _ordered_rows(rframe, jframe, universe, run, policies)
    # astype: with no evaluated query polars types the empty query index as text, whatever return_dtype says
    q = rows["_q"].to_numpy().astype(np.int64, copy=False)
    scores = rows["score"].to_numpy().astype(np.float64, copy=False)
    tie_start, tied_groups = _tie_groups(q, scores, order_by_scores)
    _warn_ties(tied_groups, policies)
    rank_down, rank_steps = _rank_contradictions(rows, q, scores, policies)
    _warn_if_distances(rank_down, rank_steps)

    grades = rows["grade"].to_numpy().astype(np.float64, copy=False)
    candidate = np.ones(len(q), dtype=bool)
    if policies.judged_only:
        candidate &= grades >= 0  # NaN (not judged) and negative (pooled, unjudged) are dropped
    within_depth = np.ones(len(q), dtype=bool)
    if policies.depth is not None:
        start = np.searchsorted(q, q, side="left")
        within_depth = (np.arange(len(q)) - start) < policies.depth  # -M counts before -J, as trec_eval
    keep = candidate & within_depth
    if policies.ties == "average" and order_by_scores and not candidate.all():
        # groups of tied documents are formed among the documents that stay (judged-only drops the others)
        tie_start = _tie_groups(q[candidate], scores[candidate], True)[0]
        full = np.ones(len(q), dtype=bool)
        full[candidate] = tie_start
        tie_start = full
    groups = _TieGroups.of(q, tie_start, candidate, within_depth) if policies.ties == "average" \
        else _TieGroups.singletons(int(np.count_nonzero(keep)))
    tail_rows, tail_group = groups.tail(grades)
    q_all, grades_all = q, grades
    if not keep.all():
        q, scores, grades = q[keep], scores[keep], grades[keep]
        doc_ids = rows["doc_id"].filter(pl.Series(keep))
    else:
        doc_ids = rows["doc_id"]
    nq = len(universe)
    offsets = np.zeros(nq + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(np.bincount(q, minlength=nq))

    # ---- judged grades per query, descending (the material of ideal rankings and totals)
    judged_offsets, judged_grades, judged_doc_ids = _judged_grades(prepared, universe, policies)
    missing_mask = np.array([u not in ranked_set for u in universe], dtype=bool)

    coverage = Coverage(len(judged_q), len(ranked_q), nq, missing, ignored, tied_groups, rank_steps, rank_down)
    rank = np.arange(1, len(q) + 1, dtype=np.int64) - np.repeat(offsets[:-1], np.diff(offsets))
    rank_of_row = np.zeros(len(q_all), dtype=np.int64)
    rank_of_row[keep] = rank
    tail_start = rank_of_row[groups.group_first_row[tail_group]]
    num_ret = np.diff(offsets)
    group_start, group_kept, group_size = rank - groups.offset_in_group, groups.kept, groups.size
    if sparse:
        judged = ~np.isnan(grades)
        q, rank, grades, scores = q[judged], rank[judged], grades[judged], scores[judged]
        group_start, group_kept, group_size = group_start[judged], group_kept[judged], group_size[judged]
        doc_ids = doc_ids.filter(pl.Series(judged))
        offsets = np.zeros(nq + 1, dtype=np.int64)
        offsets[1:] = np.cumsum(np.bincount(q, minlength=nq))
    return JudgedRun(
        query_ids=tuple(universe), num_ret=num_ret, offsets=offsets, rank=rank,
        grades=np.ascontiguousarray(grades), scores=np.ascontiguousarray(scores), doc_ids=doc_ids,
        group_start=group_start, group_kept=group_kept, group_size=group_size,
        tail_grades=grades_all[tail_rows], tail_query=q_all[tail_rows], tail_start=tail_start,
        tail_kept=groups.group_kept[tail_group], tail_size=groups.group_size[tail_group],
        judged_offsets=judged_offsets,
        judged_grades=judged_grades, judged_doc_ids=judged_doc_ids,
        missing=missing_mask, policies=policies, run_name=run.name, coverage=coverage)


@dataclass(frozen=True, eq=False)
class RankedPositions:
    """The judged positions of every ranked query, already ordered, cut and filtered under the policies
    by a scanner (see :mod:`gainscope.io.scan`): the material of a sparse :class:`JudgedRun`.

    Per ranked query, in the order the run lists them: ``query_ids``, ``num_ret``, ``hit_offsets``
    (``n + 1``), ``tied_groups`` and the rank column's steps down the score order (``rank_down`` of
    ``rank_steps``). Per judged position: ``hit_rank`` (1-based, among kept positions), ``hit_row`` (its
    row in :attr:`PreparedJudgments.frame`) and ``hit_score``, held as ``hit_parts``: the ``(rank, row, score)``
    arrays of each part the scanner read, one after another (a query's positions all in one part), joined only
    when asked for (the judged run takes its positions from the parts).
    """

    query_ids: list[str]
    num_ret: np.ndarray
    hit_offsets: np.ndarray
    hit_parts: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]
    tied_groups: np.ndarray
    rank_down: np.ndarray
    rank_steps: np.ndarray

    def _joined(self, k: int) -> np.ndarray:
        parts = [part[k] for part in self.hit_parts]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    @cached_property
    def hit_rank(self) -> np.ndarray:
        """The rank of every judged position, the parts joined."""
        return self._joined(0)

    @cached_property
    def hit_row(self) -> np.ndarray:
        """The judgment row of every judged position, the parts joined."""
        return self._joined(1)

    @cached_property
    def hit_score(self) -> np.ndarray:
        """The score of every judged position, the parts joined."""
        return self._joined(2)


def judged_run_from_positions(prepared: PreparedJudgments, positions: RankedPositions, policies: Policies, *,
                              run_name: str, run_source: str | None) -> JudgedRun:
    """The sparse :class:`JudgedRun` of already-ordered judged positions; the same as
    ``build_judged_run(prepared, run, policies, sparse=True)`` on the run they were scanned from, with the
    same warnings. ``ties="average"`` is not supported here (its tie groups need every position)."""
    if policies.ties == "average":
        raise ValueError("ties='average' needs build_judged_run")
    if prepared.negative_grades != policies.negative_grades:
        raise ValueError("prepared judgments were made for another negative_grades policy")
    judged_q = prepared.query_ids
    scanned = positions.query_ids
    by_id = _bytewise_order(scanned)
    ranked_q = list(map(scanned.__getitem__, by_id))
    universe, missing, ignored = _query_universe(judged_q, ranked_q, policies, prepared.judgments.source,
                                                 run_source)
    if universe == ranked_q:  # every evaluated query ranked (the usual case): no lookup by id
        ranked = np.array(by_id, dtype=np.int64)
    else:
        where = dict(zip(scanned, range(len(scanned)), strict=True))
        ranked = np.fromiter((where.get(u, -1) for u in universe), dtype=np.int64, count=len(universe))
    has = ranked >= 0
    src = np.where(has, ranked, 0)
    starts = positions.hit_offsets[src]
    lengths = np.where(has, positions.hit_offsets[src + 1] - starts, 0)
    nq = len(universe)
    offsets = np.zeros(nq + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    rank, rows, scores = _take_hits(positions, starts, lengths)
    grades = prepared.grades_at(rows)
    rank_down = rank_steps = 0
    if policies.ties == "trec_eval":
        _warn_ties(int(positions.tied_groups[ranked[has]].sum()), policies)
        rank_down = int(positions.rank_down[ranked[has]].sum())
        rank_steps = int(positions.rank_steps[ranked[has]].sum())
        _warn_if_distances(rank_down, rank_steps)
    judged_offsets, judged_grades, judged_doc_ids = _judged_grades(prepared, universe, policies)
    coverage = Coverage(len(judged_q), len(ranked_q), nq, missing, ignored,
                        int(positions.tied_groups[ranked[has]].sum()) if policies.ties != "rank" else 0,
                        rank_steps, rank_down)
    one = np.broadcast_to(np.int64(1), rank.shape)  # every group a single document: one read-only value, no array
    group_start = rank.view()
    group_start.flags.writeable = False
    empty_f, empty_i = np.zeros(0, dtype=np.float64), np.zeros(0, dtype=np.int64)
    return JudgedRun(
        query_ids=tuple(universe), num_ret=np.where(has, positions.num_ret[src], 0).astype(np.int64),
        offsets=offsets, rank=rank, grades=np.ascontiguousarray(grades),
        scores=scores,
        doc_ids=DeferredSeries(lambda: prepared.frame["doc_id"].gather(rows)),
        group_start=group_start, group_kept=one, group_size=one,
        tail_grades=empty_f, tail_query=empty_i, tail_start=empty_i, tail_kept=empty_i, tail_size=empty_i,
        judged_offsets=judged_offsets, judged_grades=judged_grades, judged_doc_ids=judged_doc_ids,
        missing=~has, policies=policies, run_name=run_name, coverage=coverage)


def _take_hits(positions: RankedPositions, starts: np.ndarray, lengths: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rank (int64), judgment row and score (float64) of the hits ``starts[i] .. starts[i] + lengths[i] - 1``
    of every query ``i`` in turn: by the C module's ``take_hits`` from the scanned parts into numpy's arrays (range
    by range: no join of the parts, no int64 index of every hit) for the C scanner's arrays (int32 rank and row,
    float64 score), else by gathering ``ranges(starts, lengths)`` from the joined arrays."""
    parts = positions.hit_parts
    if parts and all(rank.dtype == np.int32 and row.dtype == np.int32 and score.dtype == np.float64
                                    for rank, row, score in parts):
        try:
            from gainscope import _scan  # type: ignore[attr-defined]
        except ImportError:  # not built: numpy's gather below
            pass
        else:
            lengths = np.ascontiguousarray(lengths, dtype=np.int64)
            total = int(lengths.sum())
            out = np.empty(total, dtype=np.int64), np.empty(total, dtype=np.int32), np.empty(total, dtype=np.float64)
            _scan.take_hits(*zip(*parts, strict=True), np.ascontiguousarray(starts, dtype=np.int64), lengths, *out)
            return out
    take = ranges(starts, lengths)
    return (positions.hit_rank[take].astype(np.int64, copy=False), positions.hit_row[take],
            np.ascontiguousarray(positions.hit_score[take], dtype=np.float64))


def _judged_grades(prepared: PreparedJudgments, universe: list[str],
                   policies: Policies) -> tuple[np.ndarray, np.ndarray, pl.Series | DeferredSeries]:
    """Offsets, grades (descending within each query) and doc ids of the judged pool of ``universe``, under
    the ``judged_grades`` policy: ``"truncated"`` truncates each grade toward 0, as Quepid's ratings store
    keeps ``parseInt(rating)`` (truncation keeps the descending order)."""
    offsets, grades, doc_ids = prepared.subset(universe)
    if policies.judged_grades == "truncated":
        grades = np.trunc(grades)
    return offsets, grades, doc_ids


def _query_universe(judged_q: list[str], ranked_q: list[str], policies: Policies, judgments_source: str | None,
                    run_source: str | None) -> tuple[list[str], tuple[str, ...], tuple[str, ...]]:
    """The evaluated queries (bytewise order), the judged ones without a ranking and the ranked ones without
    judgments; warns about both and refuses inputs that share no query."""
    if judged_q == ranked_q:  # the same queries on both sides (the usual case)
        return judged_q, (), ()
    judged_set, ranked_set = set(judged_q), set(ranked_q)
    if not (judged_set & ranked_set) and judged_q and ranked_q:
        raise InconsistentInputError(no_overlap_message(judged_q, ranked_q, judgments_source, run_source))
    ignored = tuple(q for q in ranked_q if q not in judged_set)
    missing = tuple(q for q in judged_q if q not in ranked_set)
    if ignored:
        warnings.warn(QueryCoverageWarning(
            f"{len(ignored)} ranked quer{'y has' if len(ignored) == 1 else 'ies have'} no judgments and "
            f"{'is' if len(ignored) == 1 else 'are'} ignored: {format_ids(list(ignored))}"), stacklevel=3)
    if missing:
        what = {"zero": f"scored 0 ({policy_option('missing_queries', 'zero')}, as trec_eval -c)",
                "skip": f"left out ({policy_option('missing_queries', 'skip')})",
                "empty": f"scored as {'an empty ranking' if len(missing) == 1 else 'empty rankings'} "
                         f"({option('missing_queries', 'empty', cli='--profile quepid')})"}[policies.missing_queries]
        warnings.warn(QueryCoverageWarning(
            f"{len(missing)} judged quer{'y has' if len(missing) == 1 else 'ies have'} no ranking and "
            f"{'is' if len(missing) == 1 else 'are'} {what}: {format_ids(list(missing))}"), stacklevel=3)
    universe = judged_q if policies.missing_queries != "skip" else [q for q in judged_q if q in ranked_set]
    return universe, missing, ignored


def _ordered_rows(rframe: pl.DataFrame, jframe: pl.DataFrame, universe: list[str], run: Run,
                  policies: Policies) -> tuple[pl.DataFrame, bool]:
    """The run's rows of evaluated queries with their grades (null = not judged), in final order, and
    whether that order came from the scores."""
    index = {q: i for i, q in enumerate(universe)}
    rows = (rframe.filter(pl.col("query_id").is_in(universe))
            .join(jframe, on=["query_id", "doc_id"], how="left")
            .with_columns(pl.col("query_id").replace_strict(index, return_dtype=pl.Int64).alias("_q")))
    order_by_scores = run.has_scores and policies.ties != "rank"
    if policies.score_precision == "float32":  # as trec_eval 9 and pytrec_eval store them (C float)
        rows = rows.with_columns(pl.col("score").cast(pl.Float32).cast(pl.Float64))
    if order_by_scores and policies.ties == "trec_eval":
        rows = rows.sort(["_q", "score", "doc_id"], descending=[False, True, True])
    elif order_by_scores:  # average: order among equals does not matter; keep it reproducible
        rows = rows.sort(["_q", "score", "_row"], descending=[False, True, False])
    else:
        rows = rows.sort(["_q", "rank", "_row"], nulls_last=True)
    return rows, order_by_scores


def _tie_groups(q: np.ndarray, scores: np.ndarray, by_scores: bool) -> tuple[np.ndarray, int]:
    """Mark where each group of equal scores starts within a query; count groups of two or more."""
    n = len(q)
    start = np.ones(n, dtype=bool)
    if n and by_scores:
        same = (q[1:] == q[:-1]) & (scores[1:] == scores[:-1])
        start[1:] = ~same
        groups = int(np.count_nonzero(same[1:] & ~same[:-1])) + int(bool(len(same)) and bool(same[0]))
        return start, groups
    return start, 0


@dataclass(frozen=True)
class _TieGroups:
    """Tie groups (``ties="average"``) of the kept documents, counted before a depth cut."""

    offset_in_group: np.ndarray  # per kept document: its distance from its group's first kept position
    kept: np.ndarray             # per kept document: kept members of its group
    size: np.ndarray             # per kept document: all members of its group, including those cut off
    cut_group: np.ndarray        # per candidate cut off by depth whose group is partly kept: group index
    cut_rows: np.ndarray         # ... and its row in the sorted rows
    group_first_row: np.ndarray  # per group: row of its first member
    group_kept: np.ndarray       # per group: kept members
    group_size: np.ndarray       # per group: all members

    @classmethod
    def singletons(cls, n: int) -> _TieGroups:
        one = np.ones(n, dtype=np.int64)
        empty = np.zeros(0, dtype=np.int64)
        return cls(np.zeros(n, dtype=np.int64), one, one, empty, empty, empty, empty, empty)

    @classmethod
    def of(cls, q: np.ndarray, tie_start: np.ndarray, candidate: np.ndarray, within_depth: np.ndarray) -> _TieGroups:
        cand = np.flatnonzero(candidate)
        start = tie_start[cand].copy()
        if len(cand):
            start[0] = True
            start[1:] |= q[cand][1:] != q[cand][:-1]
        group = np.cumsum(start) - 1
        ngroups = int(group[-1]) + 1 if len(group) else 0
        kept_mask = within_depth[cand]
        size = np.bincount(group, minlength=ngroups)
        kept = np.bincount(group[kept_mask], minlength=ngroups)
        first_row = cand[np.flatnonzero(start)]
        kept_group = group[kept_mask]
        order_in_group = np.arange(len(cand)) - np.flatnonzero(start)[group]
        cut = (~kept_mask) & (kept[group] > 0)
        return cls(order_in_group[kept_mask], kept[kept_group], size[kept_group], group[cut], cand[cut],
                   first_row, kept, size)

    def tail(self, grades: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rows and group indices of the judged documents cut off by the depth whose group is partly kept
        (cut unjudged documents only count in their group's size)."""
        judged = grades[self.cut_rows] >= 0
        return self.cut_rows[judged], self.cut_group[judged]


def _rank_contradictions(rows: pl.DataFrame, q: np.ndarray, scores: np.ndarray,
                         policies: Policies) -> tuple[int, int]:
    """Scores that grow with the rank column usually are distances: ordering by score reverses the run.
    Returns the steps down the score order that go to a better rank, and the steps (0, 0 when the run has
    no ranks or no scores, or is ordered by rank)."""
    if policies.ties == "rank" or rows["rank"].null_count() == rows.height or np.isnan(scores).all():
        return 0, 0
    ranks = rows["rank"].to_numpy()  # integers, or floats with NaN where ranks are missing
    # rows are sorted by score descending within each query: the rank column should then ascend
    same_q = q[1:] == q[:-1]
    down = (ranks[1:] < ranks[:-1])[same_q]  # compared as integers: exact for any int64 rank
    return int(np.count_nonzero(down)), len(down)


def _warn_if_distances(descending: int, steps: int) -> None:
    """Warn when most steps down the score order go to a better (smaller) rank."""
    if steps and descending > 0.5 * steps:
        warnings.warn(InputWarning(
            "the rank column mostly contradicts the scores (higher scores have worse ranks): are the scores "
            f"distances? Ordering follows scores (descending) as trec_eval does; use {option('ties', 'rank')} to "
            "follow the rank column, or negate the scores"), stacklevel=4)


def _warn_ties(tied_groups: int, policies: Policies) -> None:
    if tied_groups and policies.ties == "trec_eval":
        warnings.warn(InputWarning(
            f"{tied_groups} group(s) of equal scores within a query; ordered by doc id descending as trec_eval "
            f"does ({option('ties', 'trec_eval')}); use {option('ties', 'rank')} for the order given or "
            f"{option('ties', 'average')} to average them"),
            stacklevel=4)


def no_overlap_message(judged_q: list[str], ranked_q: list[str], judgments_source: str | None,
                       run_source: str | None) -> str:
    """Why judgments and a run share no query: the ids of each, and a hint when they differ only in spelling."""
    hint = ""
    near = loose_match(ranked_q, judged_q)
    if near is not None:
        hint = (f" Some ids match after removing whitespace and leading zeros (for example {near[0]!r}); fix the "
                "ids so that both files spell them the same.")
    src_j = f" ({judgments_source})" if judgments_source else ""
    src_r = f" ({run_source})" if run_source else ""
    return (f"no query is both judged and ranked: judgments{src_j} have {format_ids(judged_q, 3)}; "
            f"the run{src_r} has {format_ids(ranked_q, 3)}.{hint}")
