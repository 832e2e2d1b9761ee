"""Runs: for each query, the documents a system returned, scored or simply in order.

A :class:`Run` is one polars frame with Arrow string columns ``query_id`` and ``doc_id``, a ``score``
column (float, null when the run has no scores) and a ``rank`` column (integer, null when the input has no
ranks). Rows keep the order of the input, which is the order used when a run has no scores, or when the
``ties="rank"`` policy asks for the order given.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from gainscope.core.checks import has_duplicate_pairs
from gainscope.deferred import deferred_module
from gainscope.errors import InconsistentInputError, InputError, option, spell

if TYPE_CHECKING:
    import polars as pl
else:
    pl = deferred_module("polars")

__all__ = ["Run", "run_list"]


class Run:
    """A ranked retrieval run: query id -> ranking.

    Parameters
    ----------
    frame:
        A polars frame with ``query_id`` and ``doc_id`` (strings) and at least one of ``score`` (float) and
        ``rank`` (integer). Row order is the order given.
    name:
        The run's name (the TREC run tag, or the file name), shown in results.
    source, notes:
        Where it came from, and the conventions applied while reading; echoed with results.

    A run with scores is ordered by the ``ties`` policy of an evaluation; a run with only ranks or only an
    order (a list of ids per query) is ordered as given. A doc id may appear once per query.
    """

    __slots__ = ("_frame", "_notes", "name", "source")

    def __init__(self, frame: pl.DataFrame, *, name: str | None = None, source: str | None = None,
                 notes: Iterable[str] = ()) -> None:
        for col in ("query_id", "doc_id"):
            if col not in frame.columns:
                raise InputError(f"a run needs columns 'query_id' and 'doc_id'; missing {col!r} "
                                 f"(found {frame.columns})")
        if "score" not in frame.columns and "rank" not in frame.columns:
            raise InputError(f"a run needs a 'score' or a 'rank' column (found {frame.columns})")
        cols = [pl.col("query_id").cast(pl.String), pl.col("doc_id").cast(pl.String)]
        if "score" in frame.columns:
            if not (frame.schema["score"].is_numeric() or frame.schema["score"] == pl.Null):
                raise InputError(f"run scores must be numbers; got column type {frame.schema['score']}")
            cols.append(pl.col("score").cast(pl.Float64))
        else:
            cols.append(pl.lit(None, dtype=pl.Float64).alias("score"))
        if "rank" in frame.columns:
            if not (frame.schema["rank"].is_integer() or frame.schema["rank"] == pl.Null):
                raise InputError(f"run ranks must be integers; got column type {frame.schema['rank']}")
            cols.append(pl.col("rank").cast(pl.Int64))
        else:
            cols.append(pl.lit(None, dtype=pl.Int64).alias("rank"))
        frame = frame.select(cols)
        n_null = frame.select(pl.col("query_id").null_count() + pl.col("doc_id").null_count()).item()
        if n_null:
            raise InputError(f"run has {n_null} missing query or doc id(s)" + (f" ({source})" if source else ""))
        nan_scores = frame.select(pl.col("score").is_nan().sum()).item()
        if nan_scores:
            bad = frame.filter(pl.col("score").is_nan()).row(0, named=True)
            raise InputError(f"run has {nan_scores} NaN score(s), first for query {bad['query_id']!r}, doc "
                             f"{bad['doc_id']!r}; give a number (or read with {option('nan_score', '-inf')})")
        dups = frame.filter(pl.struct("query_id", "doc_id").is_duplicated()) if has_duplicate_pairs(frame) \
            else frame.clear()
        if dups.height:
            first = dups.row(0, named=True)
            raise InconsistentInputError(
                f"doc {first['doc_id']!r} appears more than once for query {first['query_id']!r} "
                f"({dups.height} rows involved)" + (f" in {source}" if source else "")
                + f"; keep one line per document (or read with {option('on_duplicate', ('first', 'max'))})")
        self._frame = frame
        self.name = name if name is not None else "run"
        self.source = source
        self.notes = tuple(notes)

    @property
    def notes(self) -> tuple[str, ...]:
        """What the reader did to the input (NaN scores replaced, duplicates resolved), with the options it names
        spelled as in Python (``on_duplicate='first'``)."""
        return tuple(spell(n) for n in self._notes)

    @notes.setter
    def notes(self, value: Iterable[str]) -> None:
        self._notes = tuple(value)

    @property
    def raw_notes(self) -> tuple[str, ...]:
        """The notes with the options they name left for the renderer to spell (:func:`gainscope.errors.option`):
        the command line shows them as flags."""
        return self._notes

    # ------------------------------------------------------------------ constructors
    @classmethod
    def _from_validated(cls, frame: pl.DataFrame, *, name: str, source: str | None,
                        notes: Iterable[str]) -> Run:
        """For readers that have already checked everything ``__init__`` checks (ids, NaN, duplicates) on a
        frame with exactly the columns ``query_id, doc_id, score, rank`` in their final types."""
        run = cls.__new__(cls)
        run._frame = frame
        run.name = name
        run.source = source
        run.notes = tuple(notes)
        return run

    @classmethod
    def from_columns(cls, query_ids: Iterable[Any], doc_ids: Iterable[Any], scores: Iterable[Any] | None = None,
                     ranks: Iterable[Any] | None = None, *, name: str | None = None,
                     source: str | None = None, notes: Iterable[str] = ()) -> Run:
        """Build from parallel sequences (ids are converted to strings)."""
        data: dict[str, Any] = {
            "query_id": pl.Series("query_id", list(query_ids), dtype=pl.String, strict=False),
            "doc_id": pl.Series("doc_id", list(doc_ids), dtype=pl.String, strict=False),
        }
        if scores is not None:
            data["score"] = pl.Series("score", list(scores), dtype=pl.Float64, strict=False)
        if ranks is not None:
            data["rank"] = pl.Series("rank", list(ranks), dtype=pl.Int64, strict=False)
        return cls(pl.DataFrame(data), name=name, source=source, notes=notes)

    @classmethod
    def from_dict(cls, run: Mapping[Any, Mapping[Any, Any] | Sequence[Any]], *, name: str | None = None,
                  source: str | None = None) -> Run:
        """Build from ``{query_id: {doc_id: score}}`` or ``{query_id: [doc ids in rank order]}``."""
        qids: list[str] = []
        dids: list[str] = []
        scores: list[float] = []
        ranks: list[int] = []
        scored = ordered = False
        for qid, docs in run.items():
            if isinstance(docs, Mapping):
                scored = True
                for did, score in docs.items():
                    if isinstance(score, bool) or not isinstance(score, (int, float)):
                        raise InputError(f"score for query {qid!r}, doc {did!r} must be a number; got {score!r}")
                    qids.append(str(qid))
                    dids.append(str(did))
                    scores.append(float(score))
            elif isinstance(docs, (str, bytes)):
                raise InputError(f"the ranking of query {qid!r} must be a mapping doc -> score or a list of "
                                 f"doc ids; got a string {docs!r}")
            else:
                ordered = True
                for rank, did in enumerate(docs, start=1):
                    qids.append(str(qid))
                    dids.append(str(did))
                    ranks.append(rank)
        if scored and ordered:
            raise InputError("a run must give either scores for every query ({doc: score}) or an ordered list "
                             "for every query, not a mix")
        if scored:
            return cls.from_columns(qids, dids, scores=scores, name=name, source=source)
        return cls.from_columns(qids, dids, ranks=ranks, name=name, source=source)

    # ------------------------------------------------------------------ accessors
    @property
    def frame(self) -> pl.DataFrame:
        """The run as a polars frame (``query_id``, ``doc_id``, ``score``, ``rank``) in input order."""
        return self._frame

    @property
    def has_scores(self) -> bool:
        """True when the run carries scores (otherwise it is ordered by rank or input order)."""
        return self._frame["score"].null_count() < self._frame.height

    @property
    def has_ranks(self) -> bool:
        """True when the run carries a rank column."""
        return self._frame["rank"].null_count() < self._frame.height

    def query_ids(self) -> list[str]:
        """The run's query ids, sorted bytewise."""
        return sorted(self._frame["query_id"].unique().to_list(), key=lambda s: s.encode("utf-8", "surrogatepass"))

    def __len__(self) -> int:
        return self._frame.height

    def __repr__(self) -> str:
        nq = self._frame["query_id"].n_unique()
        return f"Run({self.name!r}, {self._frame.height} rows, {nq} queries)"

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{query_id: {doc_id: score}}`` (scores are the negated rank when the run has no scores)."""
        out: dict[str, dict[str, float]] = {}
        use_scores = self.has_scores
        for i, (q, d, s, r) in enumerate(self._frame.iter_rows()):
            value = s if use_scores else -(r if r is not None else i)
            out.setdefault(q, {})[d] = float(value)
        return out


def run_list(runs: Iterable[Any], keyword: str = "runs") -> list[Any]:
    """``runs`` as a list, refusing one run given where several are expected: a path (whose characters would
    otherwise be read as file names), a :class:`Run`, a mapping ``{query_id: {doc_id: score}}`` or a table."""
    one = (isinstance(runs, (str, bytes, os.PathLike, Run, Mapping)) or hasattr(runs, "columns")
           or hasattr(runs, "column_names") or not isinstance(runs, Iterable))
    if one:
        shown = f" {runs!r}" if isinstance(runs, (str, bytes, os.PathLike)) else ""
        raise InputError(f"{keyword} takes a list of runs, e.g. {keyword}=['bm25.run', 'dense.run']; got one "
                         f"{type(runs).__name__}{shown}")
    return list(runs)
