"""Writing Judgments and Runs: TREC, MS MARCO, BEIR, JSONL, JSON, CSV, TSV and Parquet.

The format comes from ``format=`` or from the extension (``.gz`` looked through): ``.jsonl``/``.ndjson``
→ JSON Lines, ``.json`` → a JSON array, ``.csv``, ``.tsv``, ``.parquet``/``.pq``; anything else → TREC.
A ``.gz`` name compresses text formats with gzip. Everything written reads back to the same data.

* TREC qrels: ``query_id 0 doc_id grade``, single spaces, one line per judgment, trailing newline.
  ``qrels3``: ``query_id doc_id grade``. ``beir``: TSV with the header ``query-id corpus-id score``.
* TREC runs: ``query_id Q0 doc_id rank score tag``. Queries keep their first-appearance order; within a
  query, rows are written in trec_eval's order (score descending, then doc id descending, bytewise) and
  the rank column is renumbered 1, 2, ... to match. A run without scores is written in its rank order
  (input order for ties) with descending whole-number scores ``n, n-1, ..., 1``, so that trec_eval
  keeps that order. The tag is ``tag=``, else the run's name. ``msmarco``: ``query_id doc_id rank``.
* Ids that TREC cannot hold (empty, containing whitespace, or a query id starting with ``#``, which
  would read back as a comment) are refused with a message suggesting another format.
* JSONL/JSON: long records ``{"query_id", "doc_id", "relevance"}`` (plus provenance columns) and
  ``{"query_id", "doc_id", "score", "rank"}``; infinite scores are written as ``Infinity``.
* CSV/TSV/Parquet: the same columns with a header. A run's ``score`` or ``rank`` column is left out
  when it holds no values.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gainscope.core.judgments import Judgments
from gainscope.core.run import Run
from gainscope.deferred import deferred_module
from gainscope.errors import FileAccessError, InputError, UnknownFormatError, option

if TYPE_CHECKING:
    import polars as pl
else:
    pl = deferred_module("polars")

__all__ = ["TREC_WHITESPACE", "WRITE_FORMATS", "is_trec_word", "make_folder", "write_file", "write_judgments",
           "write_run"]

WRITE_FORMATS: dict[str, tuple[str, ...]] = {
    "judgments": ("trec", "qrels3", "beir", "jsonl", "json", "csv", "tsv", "parquet"),
    "run": ("trec", "msmarco", "jsonl", "json", "csv", "tsv", "parquet"),
}
_EXTENSIONS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".tsv": "tsv",
               ".parquet": "parquet", ".pq": "parquet"}
#: the whitespace TREC files (runs, qrels, pairs) are split at: ASCII's, as ``bytes.split()`` and the C scanner
#: split; a no-break space or an em space is part of an id
TREC_WHITESPACE = " \t\n\r\x0b\x0c"
_WS = "[" + "".join(f"\\x{ord(c):02x}" for c in TREC_WHITESPACE) + "]"


def is_trec_word(text: str) -> bool:
    """Whether ``text`` can stand as one field of a TREC line: not empty, no :data:`TREC_WHITESPACE`."""
    return bool(text) and not any(ch in TREC_WHITESPACE for ch in text)


def _format(path: str | os.PathLike[str], fmt: str | None, kind: str) -> str:
    valid = WRITE_FORMATS[kind]
    if fmt is not None and fmt != "auto":
        if fmt.lower() not in valid:
            raise UnknownFormatError(f"unknown format {fmt!r} for writing {kind}; valid formats: "
                                     f"{', '.join(valid)} (or None to use the file extension)")
        return fmt.lower()
    name = Path(os.fspath(path)).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return _EXTENSIONS.get(Path(name).suffix, "trec")


def _is_gzip(path: str | os.PathLike[str]) -> bool:
    return os.fspath(path).lower().endswith(".gz")


def _save(data: bytes, path: str | os.PathLike[str]) -> None:
    write_file(path, gzip.compress(data) if _is_gzip(path) else data)


def write_file(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) to ``path``. A failure (no such folder, no permission, a full disk) is a
    :class:`~gainscope.errors.FileAccessError` naming the path; a regular file left half-written is removed."""
    name = os.fspath(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        with open(name, "wb") as fh:
            fh.write(raw)
    except OSError as exc:
        removed = ""
        try:
            if stat.S_ISREG(os.stat(name).st_mode) and os.path.getsize(name) < len(raw):
                os.remove(name)
                removed = " (the incomplete file was removed)"
        except OSError:
            pass
        raise FileAccessError(f"cannot write {name}: {exc.strerror or exc}{removed}; {_advice(exc, name)}",
                              path=name) from None


def make_folder(path: str | os.PathLike[str]) -> Path:
    """The output folder ``path``, created with its parents when missing. A failure (a file in the way, no
    permission, a read-only file system) is a :class:`~gainscope.errors.FileAccessError` naming the folder."""
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        name = os.fspath(folder)
        if folder.exists() and not folder.is_dir():
            raise FileAccessError(f"cannot write into {name}: it is a file, not a folder; give the path of a folder "
                                  "(it is created when missing)", path=name) from None
        raise FileAccessError(f"cannot create the folder {name}: {exc.strerror or exc}; {_advice(exc, name)}",
                              path=name) from None
    return folder


def _advice(exc: OSError, name: str) -> str:
    """What to do about an ``OSError`` raised while writing ``name``."""
    import errno

    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return "free disk space (or raise the quota or file size limit), or write to another disk"
    if exc.errno == errno.ENOENT:
        return f"create the folder {os.path.dirname(os.path.abspath(name))} first, or give another path"
    if exc.errno == errno.EISDIR:
        return "it is a folder; give a file name"
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return "make the file and its folder writable, or give a path in a writable folder"
    return "check the path and the disk, or give another path"


# ---------------------------------------------------------------------- TREC-style lines
def _check_trec_ids(frame: pl.DataFrame, fmt: str) -> None:
    """Refuse ids that a whitespace-separated file cannot hold."""
    for col, label in (("query_id", "query id"), ("doc_id", "doc id")):
        bad = frame.filter(pl.col(col).str.contains(_WS) | (pl.col(col) == ""))
        if bad.height:
            raise InputError(f"cannot write {fmt} format: {label} {bad[col][0]!r} is empty or contains "
                             f"whitespace; write JSONL, CSV or Parquet instead ({option('format', 'jsonl')})")
    bad = frame.filter(pl.col("query_id").str.starts_with("#"))
    if bad.height:
        raise InputError(f"cannot write {fmt} format: query id {bad['query_id'][0]!r} starts with '#' and "
                         f"would read back as a comment line; write JSONL, CSV or Parquet instead "
                         f"({option('format', 'jsonl')})")


def _lines(frame: pl.DataFrame, columns: list[pl.Expr], separator: str = " ") -> bytes:
    text = frame.select(pl.concat_str(columns, separator=separator).alias("line"))["line"]
    if text.len() == 0:
        return b""
    return ("\n".join(text.to_list()) + "\n").encode("utf-8")


def _number_text(column: str) -> pl.Expr:
    """Numbers as text that reads back exactly (shortest round-trip form, ``inf``/``-inf``)."""
    return pl.col(column).cast(pl.String)


# ---------------------------------------------------------------------- judgments
def write_judgments(judgments: Judgments, path: str | os.PathLike[str], *, format: str | None = None) -> None:
    """Write ``judgments`` to ``path`` in ``format`` (default: from the extension, else TREC qrels)."""
    fmt = _format(path, format, "judgments")
    frame = judgments.frame
    if fmt in ("trec", "qrels3", "beir"):
        _check_trec_ids(frame, fmt)
    if fmt == "trec":
        _save(_lines(frame, [pl.col("query_id"), pl.lit("0"), pl.col("doc_id"), _number_text("grade")]), path)
    elif fmt == "qrels3":
        _save(_lines(frame, [pl.col("query_id"), pl.col("doc_id"), _number_text("grade")]), path)
    elif fmt == "beir":
        body = _lines(frame, [pl.col("query_id"), pl.col("doc_id"), _number_text("grade")], "\t")
        _save(b"query-id\tcorpus-id\tscore\n" + body, path)
    else:
        _write_table(frame.rename({"grade": "relevance"}), path, fmt)


# ---------------------------------------------------------------------- runs
def trec_order(run: Run) -> pl.DataFrame:
    """The run's rows in trec_eval order with ``rank`` renumbered 1..n per query (see module docs)."""
    frame = run.frame.with_row_index("_i").with_columns(pl.col("_i").min().over("query_id").alias("_q"))
    if run.has_scores:
        frame = frame.sort(["_q", "score", "doc_id"], descending=[False, True, True], nulls_last=True)
    else:
        frame = frame.sort(["_q", "rank", "_i"], nulls_last=True)
    frame = frame.with_columns((pl.int_range(pl.len()).over("query_id") + 1).alias("rank"))
    if not run.has_scores:
        size = pl.len().over("query_id")
        frame = frame.with_columns((size - pl.col("rank") + 1).cast(pl.Float64).alias("score"))
    return frame.drop("_i", "_q")


def write_run(run: Run, path: str | os.PathLike[str], *, format: str | None = None,
              tag: str | None = None) -> None:
    """Write ``run`` to ``path`` in ``format`` (default: from the extension, else a TREC run)."""
    fmt = _format(path, format, "run")
    if fmt in ("trec", "msmarco"):
        _check_trec_ids(run.frame, fmt)
        ordered = trec_order(run)
    if fmt == "trec":
        name = tag if tag is not None else run.name
        if not is_trec_word(name):
            raise InputError(f"the run tag must be a non-empty word without whitespace; got {name!r} "
                             f"(pass tag=)")
        score = _number_text("score") if run.has_scores else pl.col("score").cast(pl.Int64).cast(pl.String)
        columns = [pl.col("query_id"), pl.lit("Q0"), pl.col("doc_id"), pl.col("rank").cast(pl.String), score,
                   pl.lit(name)]
        _save(_lines(ordered, columns), path)
    elif fmt == "msmarco":
        columns = [pl.col("query_id"), pl.col("doc_id"), pl.col("rank").cast(pl.String)]
        _save(_lines(ordered, columns, "\t"), path)
    else:
        drop = [c for c, present in (("score", run.has_scores), ("rank", run.has_ranks)) if not present]
        _write_table(run.frame.drop(drop), path, fmt)


# ---------------------------------------------------------------------- tables and JSON
def _write_table(frame: pl.DataFrame, path: str | os.PathLike[str], fmt: str) -> None:
    if fmt == "parquet":
        frame.write_parquet(os.fspath(path))
    elif fmt in ("csv", "tsv"):
        buffer = io.BytesIO()
        frame.write_csv(buffer, separator="," if fmt == "csv" else "\t")
        _save(buffer.getvalue(), path)
    elif fmt == "jsonl":
        _save("".join(_json(row) + "\n" for row in frame.iter_rows(named=True)).encode("utf-8"), path)
    else:
        rows = ",\n".join(_json(row) for row in frame.iter_rows(named=True))
        _save(("[\n" + rows + "\n]\n" if rows else "[]\n").encode("utf-8"), path)


def _json(row: dict[str, Any]) -> str:
    clean = {k: v for k, v in row.items() if v is not None}
    for key, value in clean.items():
        if isinstance(value, float) and math.isnan(value):
            raise InputError(f"cannot write NaN in {key!r} as JSON")
    return json.dumps(clean, ensure_ascii=False)
