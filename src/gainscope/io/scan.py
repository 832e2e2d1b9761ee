"""TREC run files straight to judged runs: the C scanner (``gainscope._scan``) and its fallback.

:func:`judged_run_of` is how the evaluators turn a run (a path, a DataFrame, a dict or a :class:`Run`) into
a sparse :class:`~gainscope.core.judged_run.JudgedRun`. For a plain TREC run file it uses the scanner, which
reads the file once and keeps only what metrics need: for every query its number of ranked documents and
the (rank, judgment, score) of its judged documents, in final order. Everything else goes through
:func:`gainscope.io.read_run` and :func:`~gainscope.core.judged_run.build_judged_run`, which are also the
reference the scanner is tested against (``tests/property/test_scan_equals_readers.py``).

The scanner is used when all of these hold, and the result is the same either way:

* the C extension is built (it is optional; ``GAINSCOPE_NATIVE=0`` turns it off: TREC run files are then scanned
  by its vectorised twin, :mod:`gainscope.io.scan_polars`, with the same outputs and the same hand-over to the
  readers; DataFrames, Parquet and in-memory runs go to the readers);
* the source is a file in TREC run format (given or detected), plain, gzip- or zstd-compressed, or standard input
  (``"-"``: a redirected file is read as the file itself; a pipe's plain content is scanned as it arrives, like a
  compressed file's, and copied to a temporary file in case the readers must read it), read as UTF-8, with the
  default reading options (``on_duplicate="error"``, ``nan_score="error"``; ``normalize_ids`` none or ``"NFC"``;
  ``extra_columns`` either way);
* ``ties`` is ``"trec_eval"`` or ``"rank"`` (``"average"`` needs every position).

DataFrames (polars, pandas), pyarrow Tables and Parquet files with the same options are scanned through the Arrow C
stream interface, without copying their columns and before the readers' checks (:func:`scan_table` for polars
frames; :func:`scan_arrow_run` for the others, in pieces of whole queries from :mod:`gainscope.io.arrow_tables`,
so that pandas' object strings are converted and a Parquet file is read a piece at a time): the scanner does
those checks itself (empty ids, control characters, ids not in NFC, duplicates, NaN and infinite scores), and a
table that fails one, or whose columns are not plain (ids not strings, scores not numbers, ranks not integers,
missing values), goes to the readers, which say what is wrong.

Ids may hold any UTF-8 text: the scanner checks the bytes as Python's decoder does, and lists the ids holding a
code point outside the ranges every string of which is in NFC; only those are checked in Python
(:func:`~gainscope.io.text.id_form_warnings`), which gives the readers' warning about ids not in NFC. Whenever the
file holds anything unusual (a line it cannot take as is, a duplicate, bytes that are not UTF-8, a control
character, run tags that differ, a query whose lines are not together, an id ``normalize_ids="NFC"`` would
change, damaged compressed data), the scanner stops and the Python readers read the file: they give the exact
error with file and line, or the warning, or the result. A file that changes size while it is scanned is a
:class:`~gainscope.errors.FileAccessError`.

Large plain files are cut at query boundaries into one part per core, scanned in parallel threads (the scanner
releases the GIL), and joined. Compressed files are decompressed into reusable buffers (ISA-L or zlib,
zstandard: they release the GIL too; the frames of a zstd file written in several, in parallel) and their content
is cut at query boundaries into pieces, which threads scan while the next content is decompressed
(:mod:`gainscope.io.scan_stream`): decompression and scanning share the cores, and memory holds a few pieces,
never the whole content.
"""

from __future__ import annotations

import itertools
import os
import warnings
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import numpy as np

from gainscope.core.judged_run import (
    JudgedRun,
    PreparedJudgments,
    RankedPositions,
    build_judged_run,
    judged_run_from_positions,
)
from gainscope.core.judgments import JudgmentArrays, Judgments, split_ids
from gainscope.core.policies import Policies
from gainscope.core.run import Run
from gainscope.deferred import deferred_module
from gainscope.errors import FileAccessError, InputWarning
from gainscope.io.arrow_tables import ArrowRun, arrow_run, parquet_run, pieces
from gainscope.io.compressed import MAGIC_BYTES, compression_of
from gainscope.io.detect import check_format, detect_text_format
from gainscope.io.frames import RunOptions, TokenTable, frame_table, is_dataframe
from gainscope.io.text import BOM, TextFile, canonical_encoding, id_form_warnings, is_stream

if TYPE_CHECKING:
    import logging
    from concurrent.futures import Future

    import polars as pl
else:  # the fallback's note and the threads of large files: modules a small TREC file never needs
    logging = deferred_module("logging")
    pl = deferred_module("polars")

try:
    from gainscope import _scan  # type: ignore[attr-defined]
except ImportError:  # built without a C compiler: the Python readers do all the work
    _scan = None

__all__ = ["Scanned", "checked_ids", "judged_run_of", "judged_run_of_run", "native_available", "prepared_for_scan",
           "scan_arrow_run", "scan_run", "scan_trec_run"]

PART_MIN_BYTES = 16 << 20  # files are cut into parts of at least this size, one per core
_ORDER = {"trec_eval": 0, "rank": 1}
_indexes: weakref.WeakKeyDictionary[PreparedJudgments, Any] = weakref.WeakKeyDictionary()


def native_available() -> bool:
    """True when the C scanner is built and not turned off with ``GAINSCOPE_NATIVE=0``."""
    return _scan is not None and os.environ.get("GAINSCOPE_NATIVE", "1") != "0"


def _index(prepared: PreparedJudgments) -> Any:
    """The scanner's hash index of ``prepared`` (built once per prepared judgments)."""
    index = _indexes.get(prepared)
    arrays = prepared.judgments.arrays
    if index is None and arrays is not None:
        index = _indexes[prepared] = _arrays_index(arrays, prepared.negative_grades)
    if index is None:
        frame = prepared.frame
        qids = [q.encode("utf-8") for q in prepared.query_ids]
        qoff = np.zeros(len(qids) + 1, dtype=np.int64)
        np.cumsum([len(q) for q in qids], out=qoff[1:])
        position = {q: i for i, q in enumerate(prepared.query_ids)}
        doc_query = frame["query_id"].replace_strict(position, return_dtype=pl.Int32).to_numpy()
        docs = frame["doc_id"]
        doff = np.zeros(len(docs) + 1, dtype=np.int64)
        np.cumsum(docs.str.len_bytes().to_numpy(), out=doff[1:])
        blob = (docs.str.join("").item() or "").encode("utf-8") if len(docs) else b""
        grades = frame["grade"].to_numpy().astype(np.float64)
        index = _scan.JudgmentIndex(b"".join(qids), qoff.tobytes(), blob, doff.tobytes(),
                                    np.ascontiguousarray(doc_query, dtype=np.int32).tobytes(), grades.tobytes())
        _indexes[prepared] = index
    return index


def _arrays_index(arrays: JudgmentArrays, negative_grades: str) -> Any:
    """The index of judgments the C reader read: its arrays as they are (no polars, no copy), with its check that
    no document is judged twice for a query (the index then hashes the doc ids of the ranked queries only, as the
    scan reads them) and its integer grades (only their signs matter; none under "nonrelevant", where every grade
    is >= 0)."""
    grades = None if negative_grades == "nonrelevant" else arrays.grades
    return _scan.JudgmentIndex(arrays.query_blob, arrays.query_offsets, arrays.doc_blob, arrays.doc_offsets,
                               arrays.row_query, grades, unique=True, int_grades=True)


INDEX_ALONGSIDE = 1 << 20  # judgments the C reader read, of at least this many rows, are indexed while prepared


def prepared_for_scan(judgments: Judgments, policies: Policies) -> PreparedJudgments:
    """``PreparedJudgments.of(judgments, policies.negative_grades)`` for runs the scanner will read: judgments the C
    reader read, of at least ``INDEX_ALONGSIDE`` rows, are indexed for the scanner on another thread meanwhile
    (the index's loops and the preparation's gathering of judged grades release the GIL: W200k's 7.9 million
    judgments, 0.07 s of index beside 0.1 s of preparation)."""
    arrays = judgments.arrays
    if arrays is None or len(arrays.row_query) < INDEX_ALONGSIDE or _unsupported(policies) is not None:
        return PreparedJudgments.of(judgments, policies.negative_grades)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        index = pool.submit(_arrays_index, arrays, policies.negative_grades)
        prepared = PreparedJudgments.of(judgments, policies.negative_grades)
        _indexes[prepared] = index.result()
    return prepared


def _query_boundary(path: str, offset: int) -> int | None:
    """The start of the first line after ``offset`` whose query id differs from the data line before it;
    None if none is found within 64 MB. Lines are parsed once each, as the reads complete them (64 KB first: a
    query's lines usually end within it)."""
    with open(path, "rb") as f:
        f.seek(offset)
        pending = f.read(1 << 16)
        first = pending.find(b"\n")
        if first < 0:
            return None
        base = offset + first + 1  # file offset of pending[0] after dropping the partial first line
        pending = pending[first + 1:]
        previous: bytes | None = None
        for _ in range(64):
            pos = 0
            while (end := pending.find(b"\n", pos)) >= 0:
                line = pending[pos:end]
                fields = line.split(None, 1)
                if fields and not line.startswith(b"#"):
                    if previous is not None and fields[0] != previous:
                        return base + pos
                    previous = fields[0]
                pos = end + 1
            more = f.read(1 << 20)
            if not more:
                return None
            base += pos
            pending = pending[pos:] + more
    return None


def _depth(policies: Policies) -> int:
    """The depth for the scanner: -1 for none; any depth beyond int64 is as good as none."""
    return -1 if policies.depth is None else min(policies.depth, 2**62)


def _parts(path: str, size: int, count: int | None = None, start: int = 0) -> list[tuple[int, int]]:
    """Byte ranges of the file from ``start`` cut at query boundaries: ``count`` of them, or one per core for
    large files."""
    if count is None:
        count = min(os.cpu_count() or 1, max(1, size // PART_MIN_BYTES), 8)
    cuts = [start]
    for k in range(1, count):
        cut = _query_boundary(path, size * k // count)
        if cut is not None and cut > cuts[-1]:
            cuts.append(cut)
    cuts.append(size)
    return list(itertools.pairwise(cuts))


def _unsupported(policies: Policies) -> str | None:
    """Why the scanner cannot serve these policies, or None."""
    if not native_available():
        return "the C scanner is not built, or is turned off (GAINSCOPE_NATIVE=0)"
    if policies.ties not in _ORDER:
        return f"ties={policies.ties!r}"
    return None


_T = TypeVar("_T")


def _each(scan: Callable[[_T], dict[str, Any]], parts: Sequence[_T]) -> list[dict[str, Any]]:
    """``scan`` over the parts, in parallel threads when there are several (the scanner releases the GIL)."""
    if len(parts) == 1:
        return [scan(parts[0])]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(len(parts)) as pool:
        return list(pool.map(scan, parts))


# The per-hit arrays of a scanned part (the large ones): the C scanner's rank and judgment row are int32 (at W200k,
# 3.9 million judged positions: 16 MB less each than int64, and so in every gather of them), its scores float64. A
# part made in Python (:mod:`gainscope.io.scan_polars`) holds numpy arrays, of whatever type they have.
_HITS = (("hit_rank", np.int32), ("hit_judgment", np.int32), ("hit_score", np.float64))


def _hit_array(part: dict[str, Any], key: str, dtype: Any) -> np.ndarray:
    value = part[key]
    return value if isinstance(value, np.ndarray) else np.frombuffer(value, dtype=dtype)


def _positions(part: dict[str, Any]) -> RankedPositions:
    def arr(key: str, dtype: Any) -> np.ndarray:
        return np.frombuffer(part[key], dtype=dtype)

    return RankedPositions(split_ids(part["query_blob"], arr("query_offsets", np.int64)), arr("num_ret", np.int64),
                           arr("hit_offsets", np.int64), (_hits(part),), arr("ties", np.int64),
                           arr("rank_down", np.int64), arr("rank_steps", np.int64))


def _hits(part: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A scanned part's rank, judgment row and score arrays."""
    rank, row, score = (_hit_array(part, key, dtype) for key, dtype in _HITS)
    return rank, row, score


def checked_ids(results: Iterable[dict[str, Any]]) -> dict[str, list[str]]:
    """The ids the C scanner (or qrels reader) listed for Python's check of their Unicode form, by column, in the
    input's order (see :func:`~gainscope.io.text.id_form_warnings`)."""
    out: dict[str, list[str]] = {"query_id": [], "doc_id": []}
    for r in results:
        ids = split_ids(r["check_blob"], np.frombuffer(r["check_offsets"], dtype=np.int64))
        for kind, id_ in zip(r["check_kind"], ids, strict=True):
            out["query_id" if kind == 0 else "doc_id"].append(id_)
    return out


class Scanned(NamedTuple):
    """What the scanner made of a run: its ranked positions, its run tag, and the readers' warnings about its ids
    (ids not in NFC)."""

    positions: RankedPositions
    tag: str
    warnings: tuple[str, ...]


def _gathered(results: Sequence[dict[str, Any]], where: str, normalize_ids: str | None, tag: str | None = None
              ) -> Scanned | str:
    """The scanned parts (or pieces) joined in order with the ids' warnings, or why the Python path must take over:
    a part's reason, run tags that differ, a query found in two parts (its lines are not together), or an id
    ``normalize_ids`` would change."""
    if len({r.get("tag") for r in results if "fallback" not in r}) > 1:
        return "run tags that differ"
    joined = _joined(results)
    if isinstance(joined, str):
        return joined
    warns = id_form_warnings(checked_ids(results), normalize_ids, where)
    if warns is None:
        return f"ids that normalize_ids={normalize_ids!r} changes"
    return Scanned(joined, results[0]["tag"] if tag is None else tag, tuple(warns))


def _joined(results: Sequence[dict[str, Any]]) -> RankedPositions | str:
    """The scanned parts joined in order, or why the Python path must take over (a part's reason, or a query
    found in two parts: its lines are not together). The parts' per-hit arrays are kept as they are, part by
    part."""
    for r in results:
        if "fallback" in r:
            return f"{r['fallback']} (line {r['line']} of its part)" if r.get("line") else str(r["fallback"])
    if len(results) == 1:
        return _positions(results[0])
    ids = [split_ids(r["query_blob"], np.frombuffer(r["query_offsets"], dtype=np.int64)) for r in results]
    if len({q for part in ids for q in part}) != sum(len(part) for part in ids):
        return "a query whose lines are not all together"
    return _join(results, ids)


def _join(results: Sequence[dict[str, Any]], ids: Sequence[list[str]]) -> RankedPositions:
    """The parts' arrays one after another; the per-hit ones (the large ones) kept as parts, which the judged run
    takes its positions from (``_scan.take_hits``) without joining them."""
    def cat(key: str, dtype: Any = np.int64) -> np.ndarray:
        return np.concatenate([np.frombuffer(r[key], dtype=dtype) for r in results])

    offsets = [np.frombuffer(r["hit_offsets"], dtype=np.int64) for r in results]
    shift = np.cumsum([0] + [int(o[-1]) for o in offsets[:-1]], dtype=np.int64)
    hit_offsets = np.concatenate([np.zeros(1, np.int64)] + [o[1:] + s for o, s in zip(offsets, shift, strict=True)])
    return RankedPositions([q for part in ids for q in part], cat("num_ret"), hit_offsets,
                           tuple(_hits(r) for r in results), cat("ties"), cat("rank_down"), cat("rank_steps"))


def scan_trec_run(prepared: PreparedJudgments, source: str | os.PathLike[str] | bytes | TextFile, policies: Policies, *,
                  parts: int | None = None, extra_columns: str = "error", normalize_ids: str | None = None,
                  name: str | None = None) -> Scanned | str:
    """Scan a TREC run: a file (its path; a compressed file as a :class:`~gainscope.io.text.TextFile`), or its
    content as bytes. Returns what it made of the run, or the reason it needs the Python readers. ``parts``: how
    many pieces to cut a plain file into (default: one per core for files of 16 MB or more);
    ``extra_columns="ignore"`` ignores columns after the run tag; ``normalize_ids``: None or ``"NFC"`` (a run
    with an id NFC changes goes to the readers); ``name`` names the source in errors and warnings (default: the
    path).

    Raises :class:`~gainscope.errors.FileAccessError` when the file changes size while it is read, or cannot be
    read."""
    flags = {"extra_ok": extra_columns == "ignore", "f32": policies.score_precision == "float32"}
    if policies.ties in _ORDER and not native_available():
        return _scan_vectorised(prepared, source, policies, flags, normalize_ids, name)
    if (why := _unsupported(policies)) is not None:
        return why
    index = _index(prepared)
    options = (index, _ORDER[policies.ties], _depth(policies), policies.judged_only)
    if isinstance(source, TextFile):
        label = name or source.name
        from gainscope.io.scan_stream import scan_pieces  # the threads' modules, which a plain file never needs

        results = scan_pieces(source, lambda data, start, end: _scan.scan_trec_run(data, *options, start, end,
                                                                                   **flags))
        return results if isinstance(results, str) else _gathered(results, f"{label}: ", normalize_ids)
    data: str | bytes
    if isinstance(source, bytes):
        data, label = source, name or "<stdin>"
        ranges = [(len(BOM) if source.startswith(BOM) else 0, len(source))]
    else:
        data = os.fspath(source)
        label = name or data
        with open(data, "rb") as f:
            start = len(BOM) if f.read(len(BOM)) == BOM else 0
        ranges = _parts(data, os.path.getsize(data), parts, start)

    def scan(r: tuple[int, int]) -> dict[str, Any]:
        return _scan.scan_trec_run(data, *options, r[0], r[1], **flags)

    try:
        results = _each(scan, ranges)
    except OSError as exc:
        raise FileAccessError(f"cannot read {label}: {exc.strerror or exc}", path=label) from None
    changed = [r["changed"] for r in results if "changed" in r]
    if changed:
        raise _changed_error(label, ranges[-1][1], changed[0])
    return _gathered(results, f"{label}: ", normalize_ids)


def _changed_error(label: str, size: int, now: int) -> FileAccessError:
    """The error for a file of ``size`` bytes when reading began, ``now`` bytes (-1: gone) once read."""
    state = "gone" if now < 0 else f"{now} now"
    return FileAccessError(f"{label} changed while it was read ({size} bytes when reading began, {state}); read it "
                           f"again once nothing writes to it", path=label)


PIECE_BYTES = 4 << 20  # without the C scanner, plain files are read in ranges of about this size, in threads


def _scan_vectorised(prepared: PreparedJudgments, source: str | os.PathLike[str] | bytes | TextFile,
                     policies: Policies, flags: dict[str, bool], normalize_ids: str | None, name: str | None
                     ) -> Scanned | str:
    """:func:`scan_trec_run` without the C scanner: the content cut into pieces of whole queries, each scanned by
    :func:`gainscope.io.scan_polars.scan_piece` (polars and numpy; the same outputs)."""
    from gainscope.io.scan_polars import judgment_keys, scan_piece

    order, depth = _ORDER[policies.ties], _depth(policies)
    judgment_keys(prepared)  # made once, before the threads ask for them

    def scan(piece: bytes | memoryview) -> dict[str, Any]:
        return scan_piece(piece, prepared, order, depth, policies.judged_only, **flags)

    results: list[dict[str, Any]] | str
    if isinstance(source, TextFile):  # compressed: pieces of whole queries, decompressed in place
        from gainscope.io.scan_stream import scan_pieces

        label = name or source.name
        results = scan_pieces(source, lambda data, start, end: scan(memoryview(data)[start:end]))
    elif isinstance(source, bytes):  # standard input, read whole: one piece
        label = name or "<stdin>"
        results = [scan(memoryview(source)[len(BOM) if source.startswith(BOM) else 0:])]
    else:
        label = name or os.fspath(source)
        results = _scan_ranges(os.fspath(source), label, scan)
    return results if isinstance(results, str) else _gathered(results, f"{label}: ", normalize_ids)


def _scan_ranges(path: str, label: str, scan: Callable[[bytes], dict[str, Any]]) -> list[dict[str, Any]] | str:
    """``scan`` over a plain file cut at query boundaries into ranges of about :data:`PIECE_BYTES`, each read and
    scanned in a thread (a few at a time); the results in order, or the first range's reason to refuse the file (a
    file that cannot be opened: the readers say why). Raises FileAccessError when the file cannot be read or
    changes size while it is read."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            start = len(BOM) if f.read(len(BOM)) == BOM else 0
    except OSError:
        return "the file cannot be opened"
    ranges = _parts(path, size, max(1, size // PIECE_BYTES), start)

    def read_and_scan(r: tuple[int, int]) -> dict[str, Any]:
        with open(path, "rb") as f:
            f.seek(r[0])
            data = f.read(r[1] - r[0])
        return scan(data) if len(data) == r[1] - r[0] else {"changed": len(data)}

    from concurrent.futures import ThreadPoolExecutor

    results: list[dict[str, Any]] = []
    try:
        with ThreadPoolExecutor(max(1, min(os.cpu_count() or 1, 8))) as pool:
            futures = [pool.submit(read_and_scan, r) for r in ranges]
            for future in futures:
                result = future.result()
                if "fallback" in result:
                    return _cancelled(futures, _joined([result]))
                results.append(result)
        now = os.path.getsize(path)
    except FileNotFoundError:
        now = -1
    except OSError as exc:
        raise FileAccessError(f"cannot read {label}: {exc.strerror or exc}", path=label) from None
    if now != size or any("changed" in r for r in results):
        raise _changed_error(label, size, now)
    return results


def _scan_in_threads(pieces: Iterable[_T | str], scan: Callable[[_T], dict[str, Any]]) -> list[dict[str, Any]] | str:
    """``scan`` over ``pieces`` (made while earlier ones are scanned, in threads); the results in order, or why the
    readers must take over: a reason yielded instead of a piece, or a piece the scanner refused (the rest is not
    made). A few pieces are held at a time, never all."""
    from concurrent.futures import ThreadPoolExecutor

    workers = max(1, min(os.cpu_count() or 1, 8))
    results: list[Future[dict[str, Any]]] = []
    with ThreadPoolExecutor(workers) as pool:
        try:
            for piece in pieces:
                if isinstance(piece, str):
                    return _cancelled(results, piece)
                done = len(results) - workers - 1
                if done >= 0 and "fallback" in results[done].result():  # a few pieces held, never the whole
                    return _cancelled(results, _joined([results[done].result()]))  # the piece's reason
                results.append(pool.submit(scan, piece))
        except BaseException:
            _cancelled(results, "")
            raise
        return [f.result() for f in results]


def _cancelled(futures: Sequence[Future[dict[str, Any]]], why: Any) -> str:
    """``why`` (a reason), once the futures that have not started are cancelled."""
    for future in futures:
        future.cancel()
    return str(why)


def scan_run(prepared: PreparedJudgments, run: Run, policies: Policies) -> RankedPositions | str:
    """Scan an in-memory run (its polars frame, exported zero-copy through the Arrow C stream interface):
    its ranked positions, or the reason it needs ``build_judged_run`` (for example a run whose queries'
    rows are not together)."""
    scanned = _scan_columns(prepared, run.frame, run.has_scores, policies, checks=0)
    return scanned if isinstance(scanned, str) else _joined(scanned)


def _scan_columns(prepared: PreparedJudgments, frame: pl.DataFrame, has_scores: bool, policies: Policies, *,
                  checks: int) -> list[dict[str, Any]] | str:
    """The scanner's results over ``frame`` (``query_id``, ``doc_id`` strings, ``score`` and ``rank`` numbers,
    missing ones null), cut into one part per core; ``checks``: 0 for a Run's frame (checked when it was made),
    1 to check ids as the readers do, 2 scores being finite too (see ``scan_arrow``)."""
    if (why := _unsupported(policies)) is not None:
        return why
    by_scores = has_scores and policies.ties != "rank"
    score, rank = pl.col("score").cast(pl.Float64), pl.col("rank").cast(pl.Int64)
    rank_nulls = frame["rank"].null_count()
    if by_scores:
        if frame["score"].null_count():
            return "missing scores"
        if 0 < rank_nulls < frame.height:
            return "missing ranks"
        rank = rank.fill_null(0)
    else:
        if 0 < rank_nulls < frame.height:
            return "missing ranks"
        rank, score = rank.fill_null(0), score.fill_null(float("nan"))
    columns = frame.select(pl.col("query_id"), pl.col("doc_id"), score, rank)
    index, order, depth = _index(prepared), 0 if by_scores else 1, _depth(policies)
    f32 = policies.score_precision == "float32"

    def scan(piece: pl.DataFrame) -> dict[str, Any]:
        streams = [s.__arrow_c_stream__() for s in _chunks(piece)]
        return _scan.scan_arrow(streams, index, order, depth, policies.judged_only, f32, checks)

    results = _each(scan, _row_parts(columns))
    if rank_nulls or not by_scores:  # no rank column, or no score order: nothing to compare
        for r in results:
            for key in ("rank_down", "rank_steps"):
                if key in r:
                    r[key] = bytes(len(r[key]))
    return results


def scan_table(prepared: PreparedJudgments, table: TokenTable, policies: Policies, *,
               normalize_ids: str | None = None) -> Scanned | str:
    """Scan a table a reader made of a DataFrame or a Parquet file, before the readers' checks (``finish_run``):
    the scanner checks the ids as they do (no empty id, no control character; ``normalize_ids`` None or ``"NFC"``)
    and refuses a duplicate, a NaN or infinite score, or rows of a query apart, so that what it takes is what
    ``finish_run`` would have passed unchanged. Only plain columns are taken (string ids, numeric scores, integer
    ranks, nothing missing); anything else is the reason the readers must read the table."""
    frame = table.frame
    if frame.height == 0 or "query_id" not in frame.columns or "doc_id" not in frame.columns:
        return "an empty table"
    codes = [c for c in ("query_id", "doc_id") if isinstance(frame.schema[c], (pl.Categorical, pl.Enum))]
    if codes:  # categorical ids are strings held as codes: their strings (one cast, vectorised) take the fast path
        frame = frame.with_columns(pl.col(c).cast(pl.String) for c in codes)
    schema = frame.schema
    if schema["query_id"] != pl.String or schema["doc_id"] != pl.String:
        return "ids that are not strings"
    has_scores = "score" in frame.columns
    if has_scores and (not schema["score"].is_numeric() or frame["score"].null_count()):
        return "scores that are not numbers, or missing"
    if "rank" in frame.columns and (not schema["rank"].is_integer() or frame["rank"].null_count()):
        return "ranks that are not integers, or missing"
    frame = frame.select(pl.col("query_id"), pl.col("doc_id"),
                         pl.col("score") if has_scores else pl.lit(None, pl.Float64).alias("score"),
                         pl.col("rank") if "rank" in frame.columns else pl.lit(None, pl.Int64).alias("rank"))
    results = _scan_columns(prepared, frame, has_scores, policies, checks=2 if has_scores else 1)
    if isinstance(results, str):
        return results
    where = f"{table.origin.path}: " if table.origin.path else ""
    return _gathered(results, where, normalize_ids, tag="")


def scan_arrow_run(prepared: PreparedJudgments, run: ArrowRun, policies: Policies, *,
                   normalize_ids: str | None = None) -> Scanned | str:
    """Scan a run held as Arrow columns (a pyarrow table, a pandas DataFrame, a Parquet file: see
    :mod:`gainscope.io.arrow_tables`) piece by piece, with the same checks as :func:`scan_table`; what it makes of
    the run, or the reason the readers must read it."""
    if (why := _unsupported(policies)) is not None:
        return why
    by_scores = run.has_scores and policies.ties != "rank"
    index, order, depth = _index(prepared), 0 if by_scores else 1, _depth(policies)
    f32, checks = policies.score_precision == "float32", 2 if run.has_scores else 1

    def scan(piece: Any) -> dict[str, Any]:
        return _scan.scan_arrow(piece.__arrow_c_stream__(), index, order, depth, policies.judged_only, f32, checks)

    results = _scan_in_threads(pieces(run), scan)
    if isinstance(results, str):
        return results
    if not run.has_ranks or not by_scores:  # no rank column, or no score order: nothing to compare
        for r in results:
            for key in ("rank_down", "rank_steps"):
                if key in r:
                    r[key] = bytes(len(r[key]))
    where = f"{run.origin.path}: " if run.origin.path else ""
    return _gathered(results, where, normalize_ids, tag="")


PART_MIN_ROWS = 500_000  # in-memory runs are cut into parts of at least this many rows, one per core


def _row_parts(frame: pl.DataFrame) -> list[pl.DataFrame]:
    """Zero-copy slices of ``frame`` cut where the query id changes, one per core for large frames."""
    count = min(os.cpu_count() or 1, max(1, frame.height // PART_MIN_ROWS), 8)
    if count == 1:
        return [frame]
    ids = frame["query_id"]
    cuts = [0]
    for k in range(1, count):
        at = frame.height * k // count
        window = ids.slice(at - 1, 1_000_000)
        changes = (window != window.shift(1)).fill_null(False).arg_true()
        if len(changes) and at - 1 + int(changes[0]) > cuts[-1]:
            cuts.append(at - 1 + int(changes[0]))
    cuts.append(frame.height)
    return [frame.slice(a, b - a) for a, b in itertools.pairwise(cuts)]


def _chunks(frame: pl.DataFrame) -> list[pl.DataFrame]:
    """``frame`` sliced where its first column's chunks end: each slice is exported without a copy (polars copies a
    frame of several chunks into one batch when it exports it whole: hundreds of MB for a large frame)."""
    lengths = frame.get_column(frame.columns[0]).chunk_lengths() if frame.width else []
    if len(lengths) <= 1:
        return [frame]
    starts = itertools.accumulate(lengths, initial=0)
    return [frame.slice(a, n) for a, n in zip(starts, lengths, strict=False) if n]


def judged_run_of_run(prepared: PreparedJudgments, run: Run, policies: Policies) -> JudgedRun:
    """The sparse judged run of an in-memory run: :func:`scan_run` when it applies, else
    ``build_judged_run`` (the same result)."""
    prepared = prepared.under(policies.negative_grades)
    if native_available():
        positions = scan_run(prepared, run, policies)
        if not isinstance(positions, str):
            return judged_run_from_positions(prepared, positions, policies, run_name=run.name, run_source=run.source)
        logging.getLogger("gainscope").info("run %r: ordered by polars (%s)", run.name, positions)
    return build_judged_run(prepared, run, policies, sparse=True)


def _plain(options: RunOptions, encoding: str) -> bool:
    """True for the reading options the scanners implement (the C one and its twin in polars): the defaults, any
    name, allow_empty and extra_columns, normalize_ids none or NFC, UTF-8."""
    plain = RunOptions(name=options.name, allow_empty=options.allow_empty, extra_columns=options.extra_columns,
                       normalize_ids=options.normalize_ids if options.normalize_ids == "NFC" else None)
    return options == plain and canonical_encoding(encoding) == "utf-8"


def _scan_target(source: str | os.PathLike[str], fmt: str | None, encoding: str
                 ) -> str | TextFile | TokenTable | ArrowRun | None:
    """What the scanner reads of the file ``source``: its path (a plain TREC file), its TextFile (a compressed
    one), its columns (Parquet: read batch by batch with pyarrow, else whole by polars), or None when the readers
    must read it (missing, not a regular file, unreadable: they say so; another format)."""
    try:
        if not os.path.isfile(source):
            return None
        with open(source, "rb") as f:
            compressed = compression_of(f.read(MAGIC_BYTES))
    except OSError:
        return None
    src = TextFile(source, encoding)
    fmt = fmt or detect_text_format(src, "run")
    if fmt == "parquet" and not compressed and native_available():  # tables: the C scanner only
        from gainscope.io.tabular import load_tabular_table

        columns = parquet_run(source, src.name, src.stem)
        if columns is not None:
            return columns
        # its errors are the readers' (the same function reads it)
        return load_tabular_table(src, "run", fmt, located=False)
    if fmt != "trec":
        return None
    return src if compressed else os.fspath(source)


def _stream_target(src: TextFile) -> str | bytes | TextFile:
    """What the scanner reads of standard input or a file object: a pipe's plain content as it arrives (the
    TextFile, which copies it to a temporary file for the readers), the file standard input is redirected from or
    was copied to (its path; a compressed one's TextFile), or the content held in memory (a small input, a file
    object, an encoding other than UTF-8)."""
    if src.piped:
        return src
    if src.encoding == "utf-8" and (stored := src.stored) is not None:
        return src if src.compression else stored
    return src.read_bytes()


def judged_run_of(prepared: PreparedJudgments, source: Any, policies: Policies, *, format: str | None = None,
                  name: str | None = None, encoding: str = "utf-8", **read_options: Any
                  ) -> tuple[JudgedRun, tuple[str, ...]]:
    """The sparse judged run of ``source`` and the run's notes: with the C scanner when it applies (see the
    module docstring), else with :func:`~gainscope.io.read_run` and ``build_judged_run``. ``read_options``
    are those of ``read_run`` (``on_duplicate``, ``nan_score``, ``normalize_ids``...)."""
    from gainscope.io import read_run

    fmt = check_format(format, "run")
    unknown = set(read_options) - {"on_duplicate", "nan_score", "normalize_ids", "allow_empty", "extra_columns"}
    if unknown:
        raise TypeError(f"unknown reading option(s) {', '.join(sorted(unknown))}; see gainscope.io.read_run")
    options = RunOptions(name=name, on_duplicate=read_options.get("on_duplicate", "error"),
                         nan_score=RunOptions.parse_nan_score(read_options.get("nan_score", "error")),
                         normalize_ids=read_options.get("normalize_ids"),
                         allow_empty=read_options.get("allow_empty", False),
                         extra_columns=read_options.get("extra_columns", "error"))  # checks them as read_run does
    prepared = prepared.under(policies.negative_grades)
    scanned: Scanned | str | None = None
    label = ""
    read: dict[str, Any] = {"extra_columns": options.extra_columns, "normalize_ids": options.normalize_ids}
    table: TokenTable | ArrowRun | None = None  # a DataFrame's or a Parquet file's, scanned before the readers' checks
    if is_stream(source):  # standard input or a file object: read once (see _stream_target)
        src = TextFile(source, encoding)
        source, encoding, label = src, "utf-8", src.name
        if _plain(options, encoding) and (fmt or detect_text_format(src, "run")) == "trec":
            scanned = scan_trec_run(prepared, _stream_target(src), policies, name=src.name, **read)
    elif isinstance(source, (str, os.PathLike)) and _plain(options, encoding) \
            and (target := _scan_target(source, fmt, encoding)) is not None:
        label = os.fspath(source)
        if isinstance(target, (TokenTable, ArrowRun)):  # a Parquet file
            table = target
        else:
            scanned = scan_trec_run(prepared, target, policies, name=label, **read)
    elif is_dataframe(source) and _plain(options, "utf-8") and native_available():  # a polars or pandas DataFrame,
        # a pyarrow Table: the C scanner only
        table, label = arrow_run(source) or frame_table(source, "run", located=False), "the DataFrame"
    if isinstance(table, ArrowRun):
        scanned = scan_arrow_run(prepared, table, policies, normalize_ids=options.normalize_ids)
    elif table is not None:
        scanned = scan_table(prepared, table, policies, normalize_ids=options.normalize_ids)
    if isinstance(scanned, str):
        logging.getLogger("gainscope").info("%s: read by the Python readers (%s)", label, scanned)
    elif scanned is not None:
        for message in scanned.warnings:
            warnings.warn(message, InputWarning, stacklevel=3)
        # as the readers name it: name=, else the first line's tag, else the table's default name
        default_name = table.default_name if table is not None else None
        run_name = (name if name is not None else scanned.tag or default_name) or "run"
        run_source = table.origin.path if table is not None else label
        jr = judged_run_from_positions(prepared, scanned.positions, policies, run_name=run_name, run_source=run_source)
        return jr, tuple(table.notes) if table is not None else ()
    run = read_run(source, format=format, name=name, encoding=encoding, **read_options)
    return judged_run_of_run(prepared, run, policies), tuple(run.raw_notes)
