"""Runs held as Arrow columns -- pyarrow tables, pandas DataFrames, Parquet files -- in pieces for the C scanner.

The scanner (``gainscope._scan.scan_arrow``) reads Arrow string and number columns in place. This module hands it a
run's columns without first copying the whole table into a polars frame (which rewrites every Arrow string column
as string views: 16 bytes a row and id column, hundreds of MB for ten million rows):

* a pyarrow ``Table`` or ``RecordBatch``: its columns as they are (zero-copy slices);
* a pandas DataFrame: Arrow-backed columns (pandas' ``str`` dtype, ``dtype_backend="pyarrow"``) as they are,
  numpy numbers as they are, object columns of strings converted to Arrow one slice of :data:`PIECE_ROWS` rows
  at a time (so at most a few slices' worth of Arrow strings exist beside the user's frame);
* a Parquet file: only the run's columns, read batch by batch.

The rows come as :func:`pieces` -- tables of ``query_id``, ``doc_id`` (strings), ``score`` (float64) and ``rank``
(int64), each made of whole queries (a query is never cut between two pieces) -- which the scanner takes one by one
and forgets. Whatever the scanner would not take as is -- ids that are not strings, scores or ranks of another
type, a missing value -- is a reason (a string) instead of a piece, and the readers then read the source and say
what is wrong; the readers are the reference (``tests/property/test_scan_equals_readers.py``).

pyarrow is optional: without it, :func:`arrow_run` returns None and the caller takes the polars route.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from gainscope.errors import UnknownFormatError
from gainscope.io.frames import Origin, resolve_columns

__all__ = ["PIECE_ROWS", "ArrowRun", "arrow_run", "parquet_run", "pieces"]

PIECE_ROWS = 1 << 16  # rows per piece (before it is cut at a query boundary)


@dataclass
class ArrowRun:
    """A run's columns as Arrow tables in row order: ``chunks()`` yields tables of the columns named by ``roles``
    (``query_id``, ``doc_id``, then ``score`` and/or ``rank``) as the source holds them, or a reason (a string) the
    scanner cannot take the source. ``origin``, ``default_name`` and ``notes`` are those of the readers' table."""

    chunks: Callable[[], Iterator[Any]]
    roles: tuple[str, ...]
    origin: Origin
    default_name: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def has_scores(self) -> bool:
        return "score" in self.roles

    @property
    def has_ranks(self) -> bool:
        return "rank" in self.roles


def _pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError:
        return None
    return pyarrow


def _roles(names: list[str], where: str = "") -> dict[str, str] | None:
    """The run's columns by role, or None when they cannot be matched (the readers then say why)."""
    try:
        return resolve_columns(names, "run", where)
    except UnknownFormatError:
        return None


def arrow_run(source: Any) -> ArrowRun | None:
    """``source`` (a pyarrow Table or RecordBatch, or a pandas DataFrame) as an :class:`ArrowRun`, or None when it
    is neither, pyarrow is missing, or its columns need the readers' handling (a named index, repeated or unmatched
    column names): the caller then converts it as the readers do."""
    module = (type(source).__module__ or "").split(".")[0]
    pa = _pyarrow() if module in ("pyarrow", "pandas") else None
    if pa is None:
        return None
    if isinstance(source, pa.RecordBatch):
        source = pa.Table.from_batches([source])
    if isinstance(source, pa.Table):
        return _table_run(pa, source)
    if module == "pandas" and type(source).__name__ == "DataFrame":
        return _pandas_run(pa, source)
    return None


def _table_run(pa: Any, table: Any) -> ArrowRun | None:
    names = table.column_names
    found = _roles(names)
    if found is None or len(set(names)) != len(names):
        return None
    roles = tuple(r for r in ("query_id", "doc_id", "score", "rank") if r in found)
    table = pa.table([table.column(found[r]) for r in roles], names=list(roles))

    def chunks() -> Iterator[Any]:
        for start in range(0, table.num_rows, PIECE_ROWS):
            yield table.slice(start, PIECE_ROWS)

    return ArrowRun(chunks, roles, Origin(None, "row"))


def _pandas_run(pa: Any, df: Any) -> ArrowRun | None:
    """A pandas DataFrame: Arrow-backed and numeric columns without a copy, object columns slice by slice."""
    if any(n is not None for n in getattr(df.index, "names", [])) or not df.columns.is_unique:
        return None  # the readers turn a named index into columns; repeated names are theirs to refuse
    names = [str(n) for n in df.columns]
    found = _roles(names)
    if found is None or len(set(names)) != len(names):
        return None
    roles = tuple(r for r in ("query_id", "doc_id", "score", "rank") if r in found)
    columns: dict[str, Any] = {}
    for role in roles:
        series = df.iloc[:, names.index(found[role])]
        if series.dtype == object:
            columns[role] = series.to_numpy()  # converted slice by slice
            continue
        try:  # Arrow-backed: its own arrays; category: its codes and categories (a dictionary array, decoded a
            # piece at a time); numpy: its buffer (NaN stays NaN)
            array = series.array
            if hasattr(array, "__arrow_array__"):
                converted = pa.array(array)
            elif str(series.dtype) == "category":
                converted = pa.array(series)  # pyarrow reads the codes and categories, no Python string per row
            else:
                converted = pa.array(series.to_numpy())
        except (pa.ArrowException, TypeError, ValueError):
            return None  # the readers' conversion says what the column holds
        columns[role] = converted if isinstance(converted, pa.ChunkedArray) else pa.chunked_array([converted])
    rows = len(df)

    def chunks() -> Iterator[Any]:
        import pandas as pd

        for start in range(0, rows, PIECE_ROWS):
            arrays = []
            for role in roles:
                column = columns[role]
                if isinstance(column, pa.ChunkedArray):
                    arrays.append(column.slice(start, PIECE_ROWS))
                    continue
                values = column[start:start + PIECE_ROWS]
                try:
                    if pd.api.types.infer_dtype(values, skipna=False) != "string":
                        raise TypeError("not only strings")
                    arrays.append(pa.array(values, type=pa.string()))  # chunked by pyarrow beyond 2 GB of text
                except (pa.ArrowException, UnicodeError, TypeError, ValueError):  # a lone surrogate...
                    yield f"an object column {found[role]!r} that does not hold only strings Arrow takes"
                    return
            yield pa.table(arrays, names=list(roles))

    return ArrowRun(chunks, roles, Origin(None, "row"))


def parquet_run(path: str | os.PathLike[str], name: str, default_name: str | None) -> ArrowRun | None:
    """A Parquet file's run columns, read batch by batch (only those columns), or None when pyarrow is missing or
    the file's schema cannot be read or matched (the readers then read it and say what is wrong)."""
    pa = _pyarrow()
    if pa is None:
        return None
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(path)
    except (pa.ArrowException, OSError):
        return None
    names = schema.names
    found = _roles(names, f"{name}: ")
    if found is None or len(set(names)) != len(names):
        return None
    roles = tuple(r for r in ("query_id", "doc_id", "score", "rank") if r in found)

    def chunks() -> Iterator[Any]:
        try:
            with pq.ParquetFile(path, pre_buffer=False) as file:  # not the whole file in memory first
                for batch in file.iter_batches(batch_size=PIECE_ROWS, columns=[found[r] for r in roles]):
                    yield pa.Table.from_batches([batch]).rename_columns(list(roles))
        except (pa.ArrowException, OSError) as exc:
            yield f"a Parquet file pyarrow cannot read ({exc})"

    return ArrowRun(chunks, roles, Origin(name, "row"), default_name=default_name)


def pieces(run: ArrowRun) -> Iterator[Any]:
    """The run's rows as tables of ``query_id``, ``doc_id`` (Arrow strings), ``score`` (float64; NaN without a score
    column) and ``rank`` (int64; 0 without a rank column), each of whole queries, in order; a reason (a string)
    instead, and nothing after it, when a column is not what the scanner takes (see the module docstring)."""
    import pyarrow.compute as pc

    pa = _pyarrow()
    carry = None  # the rows of the last query seen, which may go on in the next chunk
    rows = 0
    for chunk in run.chunks():
        try:
            table = chunk if isinstance(chunk, str) else _typed(pa, pc, chunk, run)
            if isinstance(table, str):
                yield table
                return
            if not table.num_rows:
                continue
            rows += table.num_rows
            start = 0
            if carry is not None:
                table = pa.concat_tables([carry, table])
                start = max(carry.num_rows - 1, 0)  # the carried rows are one query
            cut = _last_query_start(pc, table.column("query_id"), start)
        except pa.ArrowException as exc:  # a type pyarrow cannot cast or compare: the readers' turn
            yield f"columns pyarrow cannot take ({exc})"
            return
        if cut:
            yield table.slice(0, cut)
        carry = table.slice(cut)
    if not rows:
        yield "an empty table"
    elif carry is not None and carry.num_rows:
        yield carry


def _typed(pa: Any, pc: Any, chunk: Any, run: ArrowRun) -> Any:
    """``chunk`` as the scanner takes it (ids as they are, scores float64, ranks int64, missing ones filled), or why
    it cannot."""
    import numpy as np

    why = _unusual(pa, chunk, run.roles)
    if why is not None:
        return why
    n = chunk.num_rows
    score = pc.cast(chunk.column("score"), pa.float64()) if run.has_scores else _filled(pa, np.nan, n)
    rank = pc.cast(chunk.column("rank"), pa.int64()) if run.has_ranks else _filled(pa, 0, n)
    query_id, doc_id = (_plain_strings(pa, pc, chunk.column(role)) for role in ("query_id", "doc_id"))
    return pa.table([query_id, doc_id, score, rank], names=["query_id", "doc_id", "score", "rank"])


def _plain_strings(pa: Any, pc: Any, column: Any) -> Any:
    """An id column as strings: a dictionary-encoded one (a Parquet file's, a pandas ``category``, polars'
    ``Categorical``) decoded, a piece at a time; a string column as it is."""
    kind = column.type
    return pc.cast(column, kind.value_type) if pa.types.is_dictionary(kind) else column


def _is_string(pa: Any, kind: Any) -> bool:
    """A string type the scanner reads as it is (or, dictionary-encoded, once decoded)."""
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind))


def _filled(pa: Any, value: float, n: int) -> Any:
    """An Arrow array of ``n`` times ``value`` (float64 NaN, or int64 0), made from a numpy buffer: ``pa.array`` and
    ``pa.scalar`` of Python or numpy values import pandas (a third of a second), which the Parquet path does not
    otherwise need."""
    import numpy as np

    kind = (pa.float64(), np.float64) if isinstance(value, float) else (pa.int64(), np.int64)
    return pa.Array.from_buffers(kind[0], n, [None, pa.py_buffer(np.full(n, value, dtype=kind[1]))])


def _unusual(pa: Any, chunk: Any, roles: tuple[str, ...]) -> str | None:
    """Why the scanner cannot take ``chunk`` as is, or None."""
    types = pa.types
    for role in roles:
        column = chunk.column(role)
        kind = column.type
        if column.null_count:
            return f"missing values in the {role} column"
        if role in ("query_id", "doc_id") and not _is_string(pa, kind):
            return "ids that are not strings"
        if role == "score" and not (types.is_integer(kind) or types.is_floating(kind)):
            return "scores that are not numbers"
        if role == "rank" and not types.is_integer(kind):
            return "ranks that are not integers"
        if role == "rank" and types.is_uint64(kind):
            return "ranks that are unsigned 64-bit integers"
    return None


def _last_query_start(pc: Any, ids: Any, start: int = 0) -> int:
    """The first row of the last query of ``ids`` (0 when all rows are of one query), its rows before ``start``
    being known to be of one query. The rows are compared with the last one in windows growing back from the end,
    so the cost follows the last query's length, not the table's."""
    n = len(ids)
    if n - start < 2:
        return 0
    last = ids[n - 1]
    width = 4096
    while True:
        begin = max(start, n - width)
        other = pc.indices_nonzero(pc.not_equal(ids.slice(begin), last))  # (not to_numpy: it imports pandas)
        if len(other):
            return begin + other[-1].as_py() + 1
        if begin == start:
            return 0
        width *= 4
