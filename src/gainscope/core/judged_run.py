"""JudgedRun: a run joined with judgments and put in order once, as flat arrays for the metric kernels.

Building a :class:`JudgedRun` is where every ordering policy is applied, exactly once:

1. the query universe is chosen (``missing_queries``): every judged query (``"zero"``, trec_eval ``-c``) or
   only judged queries that also have a ranking (``"skip"``); ranked queries without any judgment are ignored
   and reported;
2. each run row gets the grade of its (query, doc) judgment, or NaN when the document is not judged;
   negative grades stay negative ("pooled but unjudged") unless ``negative_grades="nonrelevant"`` makes them 0;
3. rows are ordered within each query (``ties``): trec_eval sorts by score descending and breaks ties by doc
   id descending, comparing bytes (``strcmp``); ``"rank"`` keeps the order given; ``"average"`` sorts by
   score and records tie groups so that kernels can average gains inside them;
4. rankings are cut at ``depth`` (trec_eval ``-M``), then unjudged documents are dropped if ``judged_only``
   (trec_eval ``-J``; note trec_eval applies ``-M`` before ``-J`` too).

The result holds, for ``nq`` queries in bytewise id order and ``n`` ranked documents:

==================  ===========  ====================================================================
array               shape        content
==================  ===========  ====================================================================
``offsets``         ``nq + 1``   start of each query's ranking in the flat arrays
``grades``          ``n``        grade of each ranked document in rank order; NaN = not judged
``scores``          ``n``        its score (NaN when the run has no scores)
``doc_ids``         ``n``        its doc id (a polars string Series, for explanations only)
``tie_start``       ``n``        True where a new group of equal scores starts (all True unless ties)
``tail_grades``     ``t``        under ``ties="average"`` with a depth: grades of the tied documents cut
                                 off by the depth, whose group still has kept documents
``tail_group``      ``t``        the tie group (counted over kept documents) each of them belongs to
``judged_offsets``  ``nq + 1``   start of each query's judged grades
``judged_grades``   ``m``        every non-negative judged grade of the query, sorted descending
``judged_doc_ids``  ``m``        the doc ids of those grades (for explanations)
``missing``         ``nq``       True for judged queries that have no ranking at all
==================  ===========  ====================================================================
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import polars as pl

from gainscope.core.judgments import Judgments
from gainscope.core.policies import Policies
from gainscope.core.run import Run
from gainscope.errors import InconsistentInputError, InputWarning, QueryCoverageWarning, format_ids

__all__ = ["Coverage", "JudgedRun", "build_judged_run"]


@dataclass(frozen=True)
class Coverage:
    """How the run's queries met the judged queries; reported with every result."""

    judged_queries: int
    ranked_queries: int
    evaluated_queries: int
    missing: tuple[str, ...] = ()   # judged, not ranked (scored 0 or skipped, by policy)
    ignored: tuple[str, ...] = ()   # ranked, not judged (always ignored)
    tied_groups: int = 0            # groups of equal scores within a query, broken by the ties policy

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
class JudgedRun:
    """Rankings in final order with their grades, and each query's judged grades; see the module docstring."""

    query_ids: tuple[str, ...]
    offsets: np.ndarray
    grades: np.ndarray
    scores: np.ndarray
    doc_ids: pl.Series
    tie_start: np.ndarray
    tail_grades: np.ndarray
    tail_group: np.ndarray
    judged_offsets: np.ndarray
    judged_grades: np.ndarray
    judged_doc_ids: pl.Series
    missing: np.ndarray
    policies: Policies
    run_name: str = "run"
    coverage: Coverage = field(default_factory=lambda: Coverage(0, 0, 0))

    # ------------------------------------------------------------------ shape helpers
    @property
    def num_queries(self) -> int:
        """Number of evaluated queries."""
        return len(self.query_ids)

    @cached_property
    def lengths(self) -> np.ndarray:
        """Number of ranked documents per query (after depth and judged-only)."""
        return np.diff(self.offsets)

    @cached_property
    def segment(self) -> np.ndarray:
        """Query index of every ranked document."""
        return np.repeat(np.arange(self.num_queries, dtype=np.int64), self.lengths)

    @cached_property
    def position(self) -> np.ndarray:
        """1-based rank of every ranked document within its query."""
        n = len(self.grades)
        return np.arange(1, n + 1, dtype=np.int64) - np.repeat(self.offsets[:-1], self.lengths)

    @cached_property
    def judged_lengths(self) -> np.ndarray:
        """Number of (non-negative) judged documents per query."""
        return np.diff(self.judged_offsets)

    @cached_property
    def judged_segment(self) -> np.ndarray:
        """Query index of every judged grade."""
        return np.repeat(np.arange(self.num_queries, dtype=np.int64), self.judged_lengths)

    @cached_property
    def judged_position(self) -> np.ndarray:
        """1-based position of every judged grade in its query's descending order (the ideal ranking)."""
        m = len(self.judged_grades)
        return np.arange(1, m + 1, dtype=np.int64) - np.repeat(self.judged_offsets[:-1], self.judged_lengths)

    def query_slice(self, index: int) -> slice:
        """The slice of the flat ranked arrays holding query ``index``."""
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
    return sorted(ids, key=lambda s: s.encode("utf-8", "surrogatepass"))


def build_judged_run(judgments: Judgments, run: Run, policies: Policies | None = None) -> JudgedRun:
    """Join ``run`` with ``judgments`` and order it under ``policies`` (see the module docstring).

    Warns (:class:`~gainscope.errors.QueryCoverageWarning`) about ranked queries without judgments and judged
    queries without a ranking; raises :class:`~gainscope.errors.InconsistentInputError` when no query is both
    judged and ranked.
    """
    policies = policies or Policies()
    jframe = judgments.frame.select("query_id", "doc_id", pl.col("grade").cast(pl.Float64))
    if policies.negative_grades == "nonrelevant":
        jframe = jframe.with_columns(pl.col("grade").clip(lower_bound=0.0))
    rframe = run.frame.with_row_index("_row")

    judged_q = _bytewise_sorted(jframe["query_id"].unique().to_list())
    ranked_q = _bytewise_sorted(rframe["query_id"].unique().to_list())
    judged_set, ranked_set = set(judged_q), set(ranked_q)
    both = judged_set & ranked_set
    if not both and judged_q and ranked_q:
        raise InconsistentInputError(_no_overlap_message(judged_q, ranked_q, judgments, run))
    ignored = tuple(q for q in ranked_q if q not in judged_set)
    missing = tuple(q for q in judged_q if q not in ranked_set)
    if ignored:
        warnings.warn(QueryCoverageWarning(
            f"{len(ignored)} ranked quer{'y has' if len(ignored) == 1 else 'ies have'} no judgments and "
            f"{'is' if len(ignored) == 1 else 'are'} ignored: {format_ids(list(ignored))}"), stacklevel=2)
    if missing:
        what = ("scored 0 (missing_queries='zero', as trec_eval -c)" if policies.missing_queries == "zero"
                else "left out (missing_queries='skip')")
        warnings.warn(QueryCoverageWarning(
            f"{len(missing)} judged quer{'y has' if len(missing) == 1 else 'ies have'} no ranking and "
            f"{'is' if len(missing) == 1 else 'are'} {what}: {format_ids(list(missing))}"), stacklevel=2)
    universe = judged_q if policies.missing_queries == "zero" else [q for q in judged_q if q in ranked_set]
    index = {q: i for i, q in enumerate(universe)}

    # ---- ranked rows with grades, in final order
    rows = (rframe.filter(pl.col("query_id").is_in(universe))
            .join(jframe, on=["query_id", "doc_id"], how="left"))
    rows = rows.with_columns(
        pl.col("query_id").replace_strict(index, return_dtype=pl.Int64).alias("_q"))
    order_by_scores = run.has_scores and policies.ties != "rank"
    if order_by_scores:
        if policies.ties == "trec_eval":
            rows = rows.sort(["_q", "score", "doc_id"], descending=[False, True, True])
        else:  # average: order among equals does not matter; keep it reproducible
            rows = rows.sort(["_q", "score", "_row"], descending=[False, True, False])
    else:
        rows = rows.sort(["_q", "rank", "_row"], nulls_last=True)
    q = rows["_q"].to_numpy()
    scores = rows["score"].to_numpy().astype(np.float64, copy=False)
    tie_start, tied_groups = _tie_groups(q, scores, order_by_scores)
    if tied_groups and policies.ties == "trec_eval":
        warnings.warn(InputWarning(
            f"{tied_groups} group(s) of equal scores within a query; ordered by doc id descending as trec_eval "
            "does (ties='trec_eval'); use ties='rank' for the order given or ties='average' to average them"),
            stacklevel=2)
    _warn_rank_contradicts_scores(rows, q, scores, policies)

    grades = rows["grade"].to_numpy().astype(np.float64, copy=False)
    candidate = np.ones(len(q), dtype=bool)
    if policies.judged_only:
        candidate &= grades >= 0  # NaN (not judged) and negative (pooled, unjudged) are dropped
    within_depth = np.ones(len(q), dtype=bool)
    if policies.depth is not None:
        start = np.searchsorted(q, q, side="left")
        within_depth = (np.arange(len(q)) - start) < policies.depth  # -M counts before -J, as trec_eval
    keep = candidate & within_depth
    tail_grades = np.zeros(0)
    tail_group = np.zeros(0, dtype=np.int64)
    if policies.ties == "average" and order_by_scores and not candidate.all():
        tie_start = _tie_groups(q[candidate], scores[candidate], True)[0]
        full = np.ones(len(q), dtype=bool)
        full[candidate] = tie_start
        tie_start = full
    if policies.ties == "average" and order_by_scores and not within_depth.all():
        # a depth cut through a group of tied documents: the kept positions still carry the mean over the
        # whole group (the expected gain over orders of the tied documents), so keep the cut members' grades
        cand = np.flatnonzero(candidate)
        group = np.cumsum(tie_start[cand]) - 1
        kept_group = np.zeros(int(group[-1]) + 1 if len(group) else 0, dtype=bool)
        kept_group[group[within_depth[cand]]] = True
        tail = (~within_depth[cand]) & kept_group[group]
        renumber = np.cumsum(kept_group) - 1
        tail_grades = grades[cand[tail]]
        tail_group = renumber[group[tail]]
    if not keep.all():
        q, scores, grades, tie_start = q[keep], scores[keep], grades[keep], tie_start[keep]
        doc_ids = rows["doc_id"].filter(pl.Series(keep))
        if policies.ties == "average":
            tie_start = _restart_ties(q, tie_start)
    else:
        doc_ids = rows["doc_id"]
    nq = len(universe)
    offsets = np.zeros(nq + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(np.bincount(q, minlength=nq))

    # ---- judged grades per query, descending (the material of ideal rankings and totals)
    jrows = (jframe.filter(pl.col("query_id").is_in(universe) & (pl.col("grade") >= 0))
             .with_columns(pl.col("query_id").replace_strict(index, return_dtype=pl.Int64).alias("_q"))
             .sort(["_q", "grade", "doc_id"], descending=[False, True, False]))
    jq = jrows["_q"].to_numpy()
    judged_offsets = np.zeros(nq + 1, dtype=np.int64)
    judged_offsets[1:] = np.cumsum(np.bincount(jq, minlength=nq))
    missing_mask = np.array([u not in ranked_set for u in universe], dtype=bool)

    coverage = Coverage(len(judged_q), len(ranked_q), nq, missing, ignored, tied_groups)
    return JudgedRun(
        query_ids=tuple(universe), offsets=offsets, grades=np.ascontiguousarray(grades),
        scores=np.ascontiguousarray(scores), doc_ids=doc_ids, tie_start=tie_start,
        tail_grades=tail_grades, tail_group=tail_group,
        judged_offsets=judged_offsets,
        judged_grades=jrows["grade"].to_numpy().astype(np.float64, copy=False),
        judged_doc_ids=jrows["doc_id"],
        missing=missing_mask, policies=policies, run_name=run.name, coverage=coverage)


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


def _restart_ties(q: np.ndarray, tie_start: np.ndarray) -> np.ndarray:
    """After rows were dropped, a new query always starts a new tie group."""
    out = tie_start.copy()
    if len(q):
        out[0] = True
        out[1:] |= q[1:] != q[:-1]
    return out


def _warn_rank_contradicts_scores(rows: pl.DataFrame, q: np.ndarray, scores: np.ndarray,
                                  policies: Policies) -> None:
    """Scores that grow with the rank column usually are distances: ordering by score reverses the run."""
    if policies.ties == "rank" or rows["rank"].null_count() == rows.height or np.isnan(scores).all():
        return
    ranks = rows["rank"].to_numpy()
    # rows are sorted by score descending within each query: the rank column should then ascend
    same_q = q[1:] == q[:-1]
    if not same_q.any():
        return
    step = np.diff(ranks.astype(np.float64))[same_q]
    descending = np.count_nonzero(step < 0)
    if descending > 0.5 * len(step):
        warnings.warn(InputWarning(
            "the rank column mostly contradicts the scores (higher scores have worse ranks): are the scores "
            "distances? Ordering follows scores (descending) as trec_eval does; use ties='rank' to follow the "
            "rank column, or negate the scores"), stacklevel=3)


def _no_overlap_message(judged_q: list[str], ranked_q: list[str], judgments: Judgments, run: Run) -> str:
    def norm(s: str) -> str:
        s = s.strip()
        return s.lstrip("0") or "0"

    hint = ""
    if {norm(x) for x in judged_q} & {norm(x) for x in ranked_q}:
        hint = (" Some ids match after removing whitespace and leading zeros (for example "
                f"{next(x for x in ranked_q if norm(x) in {norm(y) for y in judged_q})!r}); fix the ids so that "
                "both files spell them the same.")
    src_j = f" ({judgments.source})" if judgments.source else ""
    src_r = f" ({run.source})" if run.source else ""
    return (f"no query is both judged and ranked: judgments{src_j} have {format_ids(judged_q, 3)}; "
            f"the run{src_r} has {format_ids(ranked_q, 3)}.{hint}")
