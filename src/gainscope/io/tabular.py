"""Tables with a header row: CSV, TSV, BEIR qrels and Parquet.

* ``format="csv"`` (comma) and ``format="tsv"`` (tab): the first line is a header naming the columns;
  fields may be quoted with ``"``. Every cell is read as text, so ids keep their leading zeros; numbers
  are checked by :mod:`gainscope.io.frames` (surrounding spaces in numeric cells are ignored).
* ``format="beir"``: BEIR qrels, a TSV file whose header is ``query-id corpus-id score``.
* ``format="parquet"``: columns keep their types; integer id columns are converted to text.

Columns are found by name, case-insensitively (see :data:`gainscope.io.frames.ALIASES`): query id
``query_id/qid/query-id/q_id/query/topic``; doc id ``doc_id/docno/docid/corpus-id/pid/_id/doc``; judgment
grade ``relevance/rel/grade/label/rating/gain/score``; run score ``score/sim/similarity``; ``rank``. A
missing or ambiguous column is an :class:`~gainscope.errors.UnknownFormatError` listing the columns found
and the accepted names. Other judgment columns (a judge, a model...) are kept as provenance.

Rows are located as ``file: row N`` (data rows counted from 1, the header excluded). In judgments, a
row with neither a doc id nor a grade (Quepid exports a query without ratings as ``query,,``) is
skipped, and the number skipped goes into the notes.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from gainscope.deferred import deferred_module
from gainscope.errors import FormatError, UnknownFormatError
from gainscope.io.detect import format_option
from gainscope.io.frames import ALIASES, ROLES, Origin, TokenTable, table_from_columns
from gainscope.io.text import BOM, TextFile, decode_utf8

if TYPE_CHECKING:
    import polars as pl
else:
    pl = deferred_module("polars")

__all__ = ["SEPARATORS", "load_tabular_table"]

SEPARATORS = {"csv": ",", "tsv": "\t", "beir": "\t"}
_KNOWN_NAMES = {alias for names in ALIASES.values() for alias in names}


def _read_parquet(src: TextFile) -> pl.DataFrame:
    if src.compression:
        raise FormatError(f"{src.compression}-compressed Parquet is not supported (Parquet compresses itself): "
                          f"decompress the file first", path=src.name)
    try:
        return pl.read_parquet(src.binary_source())
    except (pl.exceptions.PolarsError, OSError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise FormatError(f"cannot read as Parquet: {first}", path=src.name) from None


def _read_delimited(src: TextFile, fmt: str, kind: str) -> pl.DataFrame | None:
    """The table as text columns, or None for a file with no header (empty)."""
    data = src.read_bytes()
    if data.startswith(BOM):
        data = data[3:]
    decode_utf8(data, src.name)
    if not data.strip():
        return None
    separator = SEPARATORS[fmt]
    try:
        return pl.read_csv(io.BytesIO(data), separator=separator, has_header=True, infer_schema=False,
                           quote_char='"', raise_if_empty=False, encoding="utf8")
    except pl.exceptions.PolarsError as exc:
        first = str(exc).strip().splitlines()[0]
        other = "tsv" if fmt == "csv" else "csv"
        raise FormatError(f"cannot read as {fmt.upper()}: {first}; check the separator (or read with "
                          f"{format_option(other, kind)})", path=src.name) from None


def _check_header(frame: pl.DataFrame, src: TextFile, fmt: str, kind: str) -> None:
    columns = frame.columns
    if any(c.strip().lower() in _KNOWN_NAMES for c in columns):
        return
    sep = "\t" if SEPARATORS.get(fmt) == "\t" else ","
    names = ["query-id", "corpus-id", "score"] if fmt == "beir" else ["query_id", "doc_id", "relevance"]
    example = sep.join(names)
    raise UnknownFormatError(
        f"{src.name}: the first line must be a header naming the columns (for example {example!r}); got "
        f"{columns} (for whitespace-separated TREC files use {format_option('trec', kind)})")


def _empty(kind: str, src: TextFile) -> TokenTable:
    frame = pl.DataFrame(schema={role: pl.String for role in ROLES[kind][:3]})
    return TokenTable(frame, Origin(src.name, "row"), default_name=src.stem)


def load_tabular_table(src: TextFile, kind: str, fmt: str, *, located: bool = True) -> TokenTable:
    """Read a CSV, TSV, BEIR or Parquet file into a token table for :mod:`gainscope.io.frames` (rows located
    unless ``located=False``)."""
    frame = _read_parquet(src) if fmt == "parquet" else _read_delimited(src, fmt, kind)
    if frame is None:
        return _empty(kind, src)
    _check_header(frame, src, fmt, kind)
    table = table_from_columns(frame, kind, Origin(src.name, "row"), where=f"{src.name}: ",
                               default_name=src.stem, located=located)
    if kind == "judgments":
        _skip_unrated_rows(table)
    return table


def _skip_unrated_rows(table: TokenTable) -> None:
    """Drop rows with neither doc id nor grade (a query listed without ratings); note how many."""
    frame = table.frame
    doc = pl.col("doc_id")
    empty_doc = doc.is_null() | (doc.cast(pl.String) == "")
    unrated = empty_doc & pl.col("grade").is_null()
    count = frame.select(unrated.sum()).item()
    if count:
        table.frame = frame.filter(~unrated)
        table.notes.append(f"{count} row(s) with neither doc id nor relevance skipped "
                           f"(queries without ratings)")
