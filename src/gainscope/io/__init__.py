"""Reading and writing judgments and runs, and checking input files.

Every source becomes the same columnar objects, :class:`~gainscope.core.judgments.Judgments` and
:class:`~gainscope.core.run.Run`:

* files: TREC qrels and runs (also 3-column qrels and MS MARCO runs), the JSON / JSON Lines evaluation
  datasets of agent and RAG benchmarks, CSV/TSV with a header, BEIR qrels, Parquet; gzip transparently;
  the format is detected from the extension and the first lines, or given with ``format=``;
* polars or pandas DataFrames (columns matched by common aliases), plain dicts, and already-built
  Judgments/Run objects (returned unchanged).

Ids are always strings. Problems are reported with ``file:line``, what was read and how to fix it;
repairs that change data (duplicates resolved, NaN replaced, ids normalised) happen only when asked for,
and are recorded in the object's ``notes``. Module by module: :mod:`~gainscope.io.text` (files, encodings,
Unicode forms), :mod:`~gainscope.io.detect`, :mod:`~gainscope.io.trec`, :mod:`~gainscope.io.jsonl`,
:mod:`~gainscope.io.tabular`, :mod:`~gainscope.io.frames` (the rules shared by every source),
:mod:`~gainscope.io.writers`, :mod:`~gainscope.io.validate`.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from gainscope.core.judgments import Judgments
from gainscope.core.run import Run
from gainscope.errors import InputError, InputWarning
from gainscope.io.detect import check_format, detect_format, detect_text_format
from gainscope.io.frames import (
    JudgmentOptions,
    RunOptions,
    TokenTable,
    finish_judgments,
    finish_run,
    frame_table,
    is_dataframe,
    mapping_table,
)
from gainscope.io.scan_qrels import scan_trec_judgments
from gainscope.io.text import TextFile, is_stream

if TYPE_CHECKING:
    from gainscope.io.validate import Issue, validate_files
    from gainscope.io.writers import write_judgments, write_run

__all__ = [
    "Issue",
    "detect_format",
    "read_judgments",
    "read_run",
    "validate_files",
    "write_judgments",
    "write_run",
]



def __getattr__(name: str) -> Any:
    """``Issue`` and ``validate_files`` (:mod:`gainscope.io.validate`), ``write_judgments`` and ``write_run``
    (:mod:`gainscope.io.writers`), imported when first asked for: evaluating a run never needs them."""
    if name in ("Issue", "validate_files"):
        from gainscope.io import validate

        return getattr(validate, name)
    if name in ("write_judgments", "write_run"):
        from gainscope.io import writers

        return getattr(writers, name)
    raise AttributeError(f"module 'gainscope.io' has no attribute {name!r}")


_QRELS3_NOTE = "3-column qrels detected (query_id doc_id relevance, without the TREC iteration column)"


def _emit(messages: list[str]) -> None:
    for message in messages:
        warnings.warn(message, InputWarning, stacklevel=3)


def read_judgments(source: Any, *, format: str | None = None, on_conflict: str = "error",
                   float_grades: bool = False, scale: tuple[float, float] | None = None,
                   normalize_ids: str | None = None, allow_empty: bool = False,
                   encoding: str = "utf-8") -> Judgments:
    """Read relevance judgments from a file, a DataFrame, a dict, or return a Judgments as is.

    Parameters
    ----------
    source:
        A path (str or PathLike; ``"-"`` reads standard input), a binary file object (read whole), a polars
        or pandas DataFrame, ``{query_id: {doc_id: grade}}`` or
        ``{query_id: [doc ids]}`` (grade 1 each), or a :class:`Judgments` (returned unchanged).
    format:
        ``"trec"``, ``"qrels3"``, ``"jsonl"``, ``"json"``, ``"csv"``, ``"tsv"``, ``"beir"``, ``"parquet"``;
        None detects it from the extension and the first lines.
    on_conflict:
        What to do when a document gets different grades for the same query: ``"error"`` (default),
        ``"max"``, ``"min"``, ``"first"`` or ``"last"``. Repeats of the same grade are always collapsed,
        with a warning.
    float_grades:
        Accept fractional grades (the grade column is then Float64). Without it, ``0.9`` is an error,
        never truncated.
    scale:
        ``(lowest, highest)`` grade of the judging scale; grades outside it raise a warning.
    normalize_ids:
        ``"NFC"`` (or ``"NFKC"``, ``"NFD"``, ``"NFKD"``) normalises the Unicode form of every id; without
        it, ids that are not NFC raise a warning.
    allow_empty:
        Accept an input with no judgments (otherwise an error).
    encoding:
        The text encoding of the file (UTF-8 by default; a UTF-8 BOM is always dropped).

    Raises
    ------
    FormatError
        A line or record that cannot be read (with ``file:line``).
    InconsistentInputError
        Conflicting duplicate judgments, or an empty input.
    UnknownFormatError
        An unknown ``format=``, or a table whose columns cannot be matched.
    """
    opts = JudgmentOptions(on_conflict=on_conflict, float_grades=float_grades, scale=scale,
                           normalize_ids=normalize_ids, allow_empty=allow_empty)
    fmt = check_format(format, "judgments")
    if isinstance(source, Judgments):
        return source
    judgments, messages = _read_judgments(source, fmt, opts, encoding)
    _emit(messages)
    return judgments


def _read_judgments(source: Any, fmt: str | None, opts: JudgmentOptions, encoding: str
                    ) -> tuple[Judgments, list[str]]:
    if is_dataframe(source):
        return finish_judgments(frame_table(source, "judgments"), opts)
    if isinstance(source, Mapping):
        return finish_judgments(mapping_table(source, "judgments"), opts)
    if not isinstance(source, (str, os.PathLike, TextFile)) and not is_stream(source):
        raise InputError(f"cannot read judgments from a {type(source).__name__}; give a path, a binary file "
                         f"object, a polars or pandas DataFrame, a dict {{query_id: {{doc_id: grade}}}} or a "
                         f"Judgments")
    src = source if isinstance(source, TextFile) else TextFile(source, encoding)
    detected = fmt is None
    fmt = fmt or detect_text_format(src, "judgments")
    if fmt in ("trec", "qrels3"):
        notes = [_QRELS3_NOTE] if detected and fmt == "qrels3" else []
        scanned = scan_trec_judgments(src, fmt, opts, notes=notes)  # the C scanner, when the file is plain
        if scanned is not None:
            return scanned
        from gainscope.io.trec import read_trec_judgments  # here: the scanner reads plain files without it

        return read_trec_judgments(src, fmt, opts, notes=notes)
    return finish_judgments(_load_table(src, "judgments", fmt), opts)


def _load_table(src: TextFile, kind: str, fmt: str) -> TokenTable:
    """A JSON / JSON Lines or CSV / TSV / Parquet file's table (their readers are imported here: a TREC file,
    the usual input, needs neither)."""
    if fmt in ("json", "jsonl"):
        from gainscope.io.jsonl import load_json_table

        return load_json_table(src, kind, fmt)
    from gainscope.io.tabular import load_tabular_table

    return load_tabular_table(src, kind, fmt)


def read_run(source: Any, *, format: str | None = None, name: str | None = None, on_duplicate: str = "error",
             nan_score: str | float = "error", normalize_ids: str | None = None, allow_empty: bool = False,
             encoding: str = "utf-8", extra_columns: str = "error") -> Run:
    """Read a ranked run from a file, a DataFrame, a dict, or return a Run as is.

    Parameters
    ----------
    source:
        A path (str or PathLike; ``"-"`` reads standard input), a binary file object (read whole), a polars
        or pandas DataFrame, ``{query_id: {doc_id: score}}`` or
        ``{query_id: [doc ids in rank order]}``, or a :class:`Run` (returned unchanged).
    format:
        ``"trec"``, ``"msmarco"``, ``"jsonl"``, ``"json"``, ``"csv"``, ``"tsv"``, ``"parquet"``; None
        detects it.
    name:
        The run's name; default the TREC tag of the first line, else the file name.
    on_duplicate:
        A document listed twice for a query: ``"error"`` (default), ``"first"`` (keep the first line) or
        ``"max"`` (keep the highest score).
    nan_score:
        ``"error"`` (default) or the number to put in place of NaN scores (``"-inf"`` ranks them last).
    normalize_ids, allow_empty, encoding:
        As for :func:`read_judgments`.
    extra_columns:
        TREC runs have exactly 6 columns; a line with more is an error (``"error"``, the default), or, with
        ``"ignore"``, the columns after the run tag are ignored as trec_eval does.

    Raises
    ------
    FormatError
        A line or record that cannot be read (with ``file:line``): wrong column count, non-numeric
        score, NaN score...
    InconsistentInputError
        A duplicate document, or an empty input.
    UnknownFormatError
        An unknown ``format=``, or a table whose columns cannot be matched.
    """
    opts = RunOptions(name=name, on_duplicate=on_duplicate, nan_score=RunOptions.parse_nan_score(nan_score),
                      normalize_ids=normalize_ids, allow_empty=allow_empty, extra_columns=extra_columns)
    fmt = check_format(format, "run")
    if isinstance(source, Run):
        return source
    run, messages = _read_run(source, fmt, opts, encoding)
    _emit(messages)
    return run


def _read_run(source: Any, fmt: str | None, opts: RunOptions, encoding: str) -> tuple[Run, list[str]]:
    if is_dataframe(source):
        return finish_run(frame_table(source, "run"), opts)
    if isinstance(source, Mapping):
        return finish_run(mapping_table(source, "run"), opts)
    if not isinstance(source, (str, os.PathLike, TextFile)) and not is_stream(source):
        raise InputError(f"cannot read a run from a {type(source).__name__}; give a path, a binary file object, "
                         f"a polars or pandas DataFrame, a dict {{query_id: {{doc_id: score}}}} or a Run")
    src = source if isinstance(source, TextFile) else TextFile(source, encoding)
    detected = fmt is None
    fmt = fmt or detect_text_format(src, "run")
    if fmt in ("trec", "msmarco"):
        from gainscope.io.trec import read_trec_run  # here: evaluate scans plain files without it

        return read_trec_run(src, fmt, opts, check_ranks=detected and fmt == "msmarco")
    return finish_run(_load_table(src, "run", fmt), opts)
