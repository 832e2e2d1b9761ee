"""TREC qrels through the C scanner (``gainscope._scan.read_qrels``): flat arrays, no polars.

:func:`scan_trec_judgments` is how :func:`gainscope.io.read_judgments` reads a plain TREC (or 3-column) qrels file:
one pass in C over blocks of the file that tokenizes each line, numbers the queries and refuses a document judged
twice, into :class:`~gainscope.core.judgments.JudgmentArrays` that hold the reader's memory as it is (no copy). The
:class:`~gainscope.core.judgments.Judgments` it returns hold those arrays and make their polars frame only when
asked for it, so that evaluating two small files (``gainscope evaluate`` on 1,000 queries) neither imports polars
nor builds a frame. Without the C module (or with ``GAINSCOPE_NATIVE=0``) its vectorised twin,
:func:`gainscope.io.scan_polars.read_qrels`, reads the same plain files into the judgments' polars frame, with the
same hand-over to the readers (``tests/property/test_scan_polars_qrels.py``).

It is an accelerator, never a second set of rules: it serves only uncompressed UTF-8 regular files read with
the default options (``normalize_ids`` none or ``"NFC"``). Ids may hold any UTF-8 text: the C reader checks the
bytes as Python's decoder does, and lists the ids holding a code point outside the ranges every string of which is
in NFC, which Python then checks (:func:`~gainscope.io.text.id_form_warnings`: the readers' warning about ids not
in NFC). Whenever a file holds anything but the plain case (a control character, bytes that are not UTF-8, a line
with another number of columns or beyond the limit of a line, a grade that is not a plain integer of at most 18
digits, a document judged twice for a query, a lone carriage return, no data line, an id NFC changes under
``normalize_ids="NFC"``) it returns None and the Python readers read the file: they give the exact error with
file and line, the warning, or the result. ``tests/property/test_scan_qrels_equals_readers.py`` holds both to the
same judgments.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from gainscope.core.judgments import JudgmentArrays, Judgments, split_ids
from gainscope.deferred import deferred_module
from gainscope.errors import InconsistentInputError
from gainscope.io.frames import JudgmentOptions
from gainscope.io.scan import checked_ids, native_available
from gainscope.io.text import TextFile, id_form_warnings

if TYPE_CHECKING:
    import logging
else:
    logging = deferred_module("logging")  # for the fallback's note only

__all__ = ["scan_trec_judgments"]

_COLUMNS = {"trec": 4, "qrels3": 3}
SPLIT_BYTES = 16 << 20  # files of at least this size are read in two parts, on two threads (tests lower it)


def _plain_options(opts: JudgmentOptions) -> bool:
    """True for the default options (``on_conflict`` and ``allow_empty`` do not matter: the scanner takes no
    duplicate and no empty file; ``normalize_ids`` may be NFC)."""
    nfc = opts.normalize_ids if opts.normalize_ids == "NFC" else None
    return opts == JudgmentOptions(on_conflict=opts.on_conflict, allow_empty=opts.allow_empty, normalize_ids=nfc)


def _regular_file(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def scan_trec_judgments(src: TextFile, fmt: str, opts: JudgmentOptions, *,
                        notes: Sequence[str] = ()) -> tuple[Judgments, list[str]] | None:
    """The judgments of the qrels file ``src`` (``fmt`` ``"trec"`` or ``"qrels3"``) read by the C scanner, with
    the warnings to emit (ids not in NFC), or None when it does not apply or the file needs the Python readers
    (see the module docstring)."""
    if (fmt not in _COLUMNS or not _plain_options(opts) or src.compression or src.encoding != "utf-8"
            or (path := src.stored) is None or not _regular_file(path)):
        return None
    if native_available():
        from gainscope import _scan  # type: ignore[attr-defined]  # built: native_available() says so

        out = _scan.read_qrels(path, _COLUMNS[fmt], SPLIT_BYTES)
    else:  # its vectorised twin: a polars frame
        from gainscope.io.scan_polars import read_qrels

        out = read_qrels(path, _COLUMNS[fmt])
    if "fallback" in out:
        where = f" (line {out['line']})" if out.get("line") else ""
        logging.getLogger("gainscope").info("%s: read by the Python readers (%s%s)", src.name, out["fallback"], where)
        return None
    warnings = id_form_warnings(checked_ids([out]), opts.normalize_ids, f"{src.name}: ")
    if warnings is None:
        logging.getLogger("gainscope").info("%s: read by the Python readers (ids that NFC changes)", src.name)
        return None
    if "frame" in out:
        try:
            return Judgments(out["frame"], source=src.name, notes=notes), warnings
        except InconsistentInputError:  # a document judged twice: the readers say where, or collapse repeats
            logging.getLogger("gainscope").info("%s: read by the Python readers (a document judged twice)", src.name)
            return None
    query_offsets = np.frombuffer(out["query_offsets"], dtype=np.int64)
    arrays = JudgmentArrays(  # the large arrays are the reader's own memory (no copy)
        query_ids=split_ids(out["query_blob"], query_offsets), query_blob=out["query_blob"],
        query_offsets=query_offsets, row_query=np.frombuffer(out["row_query"], dtype=np.int32),
        doc_blob=memoryview(out["doc_blob"]), doc_offsets=np.frombuffer(out["doc_offsets"], dtype=np.int64),
        grades=np.frombuffer(out["grades"], dtype=np.int8 if out["grade_bytes"] == 1 else np.int64))
    return Judgments._from_arrays(arrays, source=src.name, notes=notes), warnings
