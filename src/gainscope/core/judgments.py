"""Judgments: for each query, the documents someone judged and the grade they gave.

Grades are integers by default (TREC qrels); float grades (averaged human labels, temporal overlap scores)
are allowed when they are asked for explicitly. Negative grades are kept as given: what they mean is the
``negative_grades`` policy of an evaluation (trec_eval: "in the pool but not judged").

Inside, a :class:`Judgments` is one polars frame with Arrow string columns ``query_id`` and ``doc_id``, a
numeric ``grade`` column, and optional provenance columns (``judge``, ``model``, ...). No Python object is
held per judgment. Judgments the C scanner read from a TREC qrels file hold :class:`JudgmentArrays` instead,
and make that frame only when it is first asked for: evaluating them needs neither polars nor the frame.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from gainscope.core.checks import has_duplicate_pairs
from gainscope.deferred import deferred_module
from gainscope.errors import InconsistentInputError, InputError

if TYPE_CHECKING:
    import polars as pl
else:
    pl = deferred_module("polars")

__all__ = ["JudgmentArrays", "Judgments", "split_ids"]

_REQUIRED = ("query_id", "doc_id", "grade")


def split_ids(blob: bytes | memoryview, offsets: np.ndarray) -> list[str]:
    """The UTF-8 ids of ``blob`` cut at ``offsets`` (one more than ids): how the C scanner returns ids."""
    if isinstance(blob, memoryview):
        blob = blob.tobytes()
    if blob.isascii():  # one decode, then slices of the text
        text = blob.decode("ascii")
        return [text[a:b] for a, b in itertools.pairwise(offsets.tolist())]
    return [blob[a:b].decode("utf-8") for a, b in itertools.pairwise(offsets.tolist())]


@dataclass(frozen=True, eq=False)
class JudgmentArrays:
    """Judgments as flat arrays, the form the C scanner reads plain TREC qrels into (see
    :mod:`gainscope.io.scan_qrels`): ``query_ids`` are the distinct query ids in order of first appearance,
    ``query_blob``/``query_offsets`` the same ids as one UTF-8 blob and int64 offsets; per judgment, in file
    order, ``row_query`` is its query's index in ``query_ids`` (int32), ``grades`` its grade (int8 when every grade
    fits, as qrels' do: W200k's 7.9 million judgments hold 8 MB of grades, not 63 MB; else int64), and its doc
    id is ``doc_blob[doc_offsets[i]:doc_offsets[i + 1]]`` (UTF-8, checked by the scanner). The reader has checked
    that no document is judged twice for a query."""

    query_ids: list[str]
    query_blob: bytes
    query_offsets: np.ndarray
    row_query: np.ndarray
    doc_blob: bytes | memoryview
    doc_offsets: np.ndarray
    grades: np.ndarray

    def doc_ids(self) -> list[str]:
        """The doc id of every judgment, in file order."""
        return split_ids(self.doc_blob, self.doc_offsets)

    def frame(self) -> pl.DataFrame:
        """The frame the readers would have made: ``query_id``, ``doc_id`` (strings), ``grade`` (Int64)."""
        queries = pl.Series("query_id", self.query_ids, dtype=pl.String).gather(self.row_query)
        return pl.DataFrame([queries, pl.Series("doc_id", self.doc_ids(), dtype=pl.String),
                             pl.Series("grade", self.grades, dtype=pl.Int64)])


class Judgments:
    """Graded relevance judgments: query id -> doc id -> grade.

    Parameters
    ----------
    frame:
        A polars frame with columns ``query_id`` and ``doc_id`` (strings) and ``grade`` (integer or float);
        any other columns are kept as provenance.
    source:
        Where the judgments came from (a path), used in messages.
    notes:
        Conventions applied while reading (for example how duplicates were resolved); echoed with results.
    query_texts:
        Optional ``{query_id: text}`` (the seed dataset's ``query_text``), kept for judges and reports.

    Duplicate ``(query_id, doc_id)`` pairs are an error: give each document one grade per query.
    """

    __slots__ = ("_arrays", "_made", "notes", "query_texts", "source")

    def __init__(self, frame: pl.DataFrame, *, source: str | None = None,
                 notes: Iterable[str] = (), query_texts: Mapping[str, str] | None = None) -> None:
        missing = [c for c in _REQUIRED if c not in frame.columns]
        if missing:
            raise InputError(f"judgments need columns {list(_REQUIRED)}; missing {missing} "
                             f"(found {frame.columns})")
        frame = frame.with_columns(pl.col("query_id").cast(pl.String), pl.col("doc_id").cast(pl.String))
        if frame.schema["grade"] not in (pl.Int64, pl.Float64):
            if frame.schema["grade"].is_integer() or frame.schema["grade"] == pl.Boolean:
                frame = frame.with_columns(pl.col("grade").cast(pl.Int64))
            elif frame.schema["grade"].is_float():
                frame = frame.with_columns(pl.col("grade").cast(pl.Float64))
            else:
                raise InputError(f"judgment grades must be numbers; got column type {frame.schema['grade']}")
        nulls = frame.select(pl.col(c).null_count() for c in _REQUIRED).row(0)
        if any(nulls):
            col = _REQUIRED[[bool(n) for n in nulls].index(True)]
            raise InputError(f"judgments have {max(nulls)} missing value(s) in column {col!r}"
                             + (f" ({source})" if source else ""))
        if frame.schema["grade"] == pl.Float64:
            bad = frame.filter(~pl.col("grade").is_finite())
            if bad.height:
                row = bad.row(0, named=True)
                raise InputError(f"judgment grade must be a finite number; got {row['grade']} for query "
                                 f"{row['query_id']!r}, doc {row['doc_id']!r}" + (f" ({source})" if source else ""))
        dups = frame.filter(pl.struct("query_id", "doc_id").is_duplicated()) if has_duplicate_pairs(frame) \
            else frame.clear()
        if dups.height:
            first = dups.row(0, named=True)
            raise InconsistentInputError(
                f"duplicate judgment for query {first['query_id']!r}, doc {first['doc_id']!r} "
                f"({dups.height} rows involved)" + (f" in {source}" if source else "")
                + "; give each document one grade per query")
        self._made: pl.DataFrame | None = frame
        self._arrays: JudgmentArrays | None = None
        self.source = source
        self.notes = tuple(notes)
        self.query_texts: dict[str, str] = dict(query_texts or {})

    # ------------------------------------------------------------------ constructors
    @classmethod
    def _from_arrays(cls, arrays: JudgmentArrays, *, source: str | None, notes: Iterable[str]) -> Judgments:
        """For the C scanner, which has checked everything ``__init__`` checks (ids, integer grades, one
        judgment per document and query); the frame is made from ``arrays`` when first asked for."""
        judgments = cls.__new__(cls)
        judgments._made = None
        judgments._arrays = arrays
        judgments.source = source
        judgments.notes = tuple(notes)
        judgments.query_texts = {}
        return judgments

    @classmethod
    def from_columns(cls, query_ids: Iterable[Any], doc_ids: Iterable[Any], grades: Iterable[Any], *,
                     source: str | None = None, notes: Iterable[str] = (),
                     query_texts: Mapping[str, str] | None = None,
                     **provenance: Iterable[Any]) -> Judgments:
        """Build from parallel sequences (ids are converted to strings)."""
        data: dict[str, Any] = {
            "query_id": pl.Series("query_id", list(query_ids), dtype=pl.String, strict=False),
            "doc_id": pl.Series("doc_id", list(doc_ids), dtype=pl.String, strict=False),
            "grade": _grade_series(list(grades)),
        }
        for name, values in provenance.items():
            data[name] = pl.Series(name, list(values))
        return cls(pl.DataFrame(data), source=source, notes=notes, query_texts=query_texts)

    @classmethod
    def from_dict(cls, judgments: Mapping[Any, Mapping[Any, Any] | Iterable[Any]], *,
                  source: str | None = None) -> Judgments:
        """Build from ``{query_id: {doc_id: grade}}``; a list of doc ids means grade 1 for each."""
        qids: list[str] = []
        dids: list[str] = []
        grades: list[Any] = []
        for qid, docs in judgments.items():
            if isinstance(docs, Mapping):
                for did, grade in docs.items():
                    qids.append(str(qid))
                    dids.append(str(did))
                    grades.append(_check_grade(grade, qid, did))
            elif isinstance(docs, (str, bytes)):
                raise InputError(f"judgments for query {qid!r} must be a mapping doc -> grade or a list of "
                                 f"doc ids; got a string {docs!r}")
            else:
                for did in docs:
                    qids.append(str(qid))
                    dids.append(str(did))
                    grades.append(1)
        return cls.from_columns(qids, dids, grades, source=source)

    # ------------------------------------------------------------------ accessors
    @property
    def _frame(self) -> pl.DataFrame:
        if self._made is None:
            assert self._arrays is not None
            self._made = self._arrays.frame()
        return self._made

    @property
    def frame(self) -> pl.DataFrame:
        """The judgments as a polars frame (``query_id``, ``doc_id``, ``grade``, provenance...)."""
        return self._frame

    @property
    def arrays(self) -> JudgmentArrays | None:
        """The flat arrays of judgments the C scanner read (None for any other source)."""
        return self._arrays

    @property
    def float_grades(self) -> bool:
        """True when grades are floats rather than integers."""
        return self._frame.schema["grade"] == pl.Float64

    @property
    def provenance_columns(self) -> list[str]:
        """Columns beyond the required three (who judged, which model, ...)."""
        return [c for c in self._frame.columns if c not in _REQUIRED]

    def query_ids(self) -> list[str]:
        """The judged query ids, sorted bytewise (trec_eval order)."""
        return sorted(self._frame["query_id"].unique().to_list(), key=_bytewise)

    def __len__(self) -> int:
        return self._frame.height

    def __repr__(self) -> str:
        nq = self._frame["query_id"].n_unique()
        src = f", source={self.source!r}" if self.source else ""
        return f"Judgments({self._frame.height} judgments, {nq} queries{src})"

    def for_query(self, query_id: str) -> dict[str, int | float]:
        """``{doc_id: grade}`` for one query (empty when the query is not judged)."""
        sub = self._frame.filter(pl.col("query_id") == query_id)
        return dict(zip(sub["doc_id"].to_list(), sub["grade"].to_list(), strict=True))

    def to_dict(self) -> dict[str, dict[str, int | float]]:
        """``{query_id: {doc_id: grade}}``."""
        out: dict[str, dict[str, int | float]] = {}
        for q, d, g in self._frame.select(_REQUIRED).iter_rows():
            out.setdefault(q, {})[d] = g
        return out


def _bytewise(s: str) -> bytes:
    return s.encode("utf-8", "surrogatepass")


def _check_grade(grade: Any, qid: Any, did: Any) -> int | float:
    if isinstance(grade, bool) or not isinstance(grade, (int, float)):
        raise InputError(f"grade for query {qid!r}, doc {did!r} must be a number; got {grade!r}")
    return grade



def _grade_series(grades: list[Any]) -> pl.Series:
    """The grade column; ints and floats mixed (``{"a": 2, "b": 1.5}``) make a float column (polars infers
    the type from the first values and would refuse the others)."""
    try:
        return pl.Series("grade", grades)
    except TypeError:
        if all(isinstance(g, (int, float)) and not isinstance(g, bool) for g in grades):
            return pl.Series("grade", grades, dtype=pl.Float64)
        raise
